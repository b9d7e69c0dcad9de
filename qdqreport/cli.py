"""The qdqreport command line.

Exit codes (EXIT_CODES below, shown by --help and in README.md):
  0  success
  1  findings at or above --fail-on (report, demo); AFTER worse than BEFORE with --fail-on-regression
     (diff, confirm)
  2  bad input or an output that cannot be written: one line on stderr naming the file and the fix;
     nothing is written (includes a read-only folder or a full disk while writing)
  3  internal error, a bug: one line; the traceback only with --debug
  130 interrupted (Ctrl-C); nothing is written
  141 stdout closed early (`| head`), as a program killed by SIGPIPE
"""

from __future__ import annotations

import argparse
import atexit
import inspect
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Sequence

from qdqreport import __version__
from qdqreport.cli_confirm import add_confirm
from qdqreport.cli_diff import add_config_card, add_diff
from qdqreport.cli_export import add_export
from qdqreport.cli_import import add_import_trt
from qdqreport.cli_judging import add_judging, judging_from
from qdqreport.cli_target import add_target
from qdqreport.errors import InputError, QdqReportError

DEMO_DIR = Path(__file__).parent / "demo"
EXIT_CODES = """exit codes:
  0  success
  1  findings at or above --fail-on; a regression with --fail-on-regression (diff, confirm)
  2  bad input, or an output that cannot or must not be written (one line on stderr; nothing is written)
  3  internal error: a bug; rerun with --debug for the traceback and report it
"""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    try:
        return args.handler(args, argv)
    except QdqReportError as exc:
        print(f"qdqreport: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("qdqreport: interrupted; nothing was written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # stdout closed early (`qdqreport rules | head`): not a bug; stop like `cat` would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit flush must not fail again
        return 141
    except OSError as exc:
        if exc.filename is None:  # no file to blame: treat as the bug it probably is
            return _internal_error(exc, args.debug)
        # The file system said no (permissions, disk full, a folder where a file belongs): not a bug.
        print(f"qdqreport: error: {exc.filename}: {exc.strerror or exc}; check that this path exists and that "
              "you may read or write it", file=sys.stderr)
        return 2
    except Exception as exc:
        return _internal_error(exc, args.debug)


def run(argv: Sequence[str] | None = None) -> int:
    """The command as a process runs it (`python -m qdqreport`, the `qdqreport` script): main, then the exit without
    the interpreter's teardown (exit_now). API callers and tests call main."""
    return exit_now(main(argv))


def exit_now(code: int) -> int:
    """End the process with *code* once the command is done, skipping the interpreter's teardown: freeing every
    module, model and array one by one cost 0.06-0.08 s of CPU after a collect (9% of vad's default collect at
    N = 128; issue 12, docs/BENCHMARKS.md), and the process ends anyway. What an exit must still do is done: the
    atexit functions run (scratch folders removed, logging flushed), then stdout and stderr are flushed. Only when no
    other thread is alive and the flush succeeds; otherwise *code* is returned for the usual exit (a closed pipe then
    behaves as it did). Nor after a user's script ran (--postprocess, a data-loader script): a file it left open is
    closed and flushed by the usual exit."""
    script = sys.modules.get("qdqreport.collect.script")
    if (threading.active_count() != 1 or not (code is None or isinstance(code, int))
            or getattr(script, "USER_CODE_RAN", False)):
        return code
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - e.g. stdout closed early: the usual exit reports it as before
        return code
    os._exit(code or 0)


def _internal_error(exc: BaseException, debug: bool) -> int:
    if debug:
        traceback.print_exception(exc)
    message = " ".join(str(exc).split())[:500]
    print(f"qdqreport: internal error: {type(exc).__name__}: {message}; this is a bug, please report it with "
          "--debug output", file=sys.stderr)
    return 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="qdqreport", description="Find where an INT8 Q/DQ ONNX model loses accuracy.",
                                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"qdqreport {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error (exit 3)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_collect(commands)
    _add_report(commands)
    _add_demo(commands)
    add_import_trt(commands)
    add_export(commands)
    add_confirm(commands)
    add_diff(commands)
    add_config_card(commands)  # `report --config-card`: extends the report subcommand
    validate = commands.add_parser("validate", help="check a bundle against its schema and file hashes, and that "
                                                 "report can render it (rules and report built in memory)")
    validate.add_argument("bundle", help="bundle folder or .zip")
    add_target(validate)
    add_judging(validate)
    validate.set_defaults(handler=_validate)
    rules = commands.add_parser("rules", help="list the root-cause rules, or explain one")
    rules.add_argument("rule_id", nargs="?", help="a rule id (QR001) or slug to print its documentation")
    rules.add_argument("--markdown", action="store_true", help="print every rule's documentation as Markdown (docs/rules.md)")
    rules.set_defaults(handler=_rules)
    for command in commands.choices.values():  # --debug also after the command; SUPPRESS keeps a global one
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def _add_collect(commands: argparse._SubParsersAction) -> None:
    collect = commands.add_parser("collect", help="run every stage on the same inputs and write a bundle",
                                  description="Run FP32 and QDQ ONNX in ONNX Runtime (TensorRT stages are recorded as "
                                              "skipped when tensorrt is absent), compare them, and write a bundle. "
                                              "--data-loader-script and --postprocess execute arbitrary Python code: "
                                              "run only scripts you trust. Bundles are untrusted input to whoever "
                                              "reads them (see SECURITY.md).")
    collect.add_argument("--fp32", required=True, help="the FP32 ONNX model")
    collect.add_argument("--qdq", required=True, help="the Q/DQ (INT8) ONNX model quantized from it")
    source = collect.add_mutually_exclusive_group(required=True)
    source.add_argument("--inputs", help=".npy (single-input models) or .npz keyed by input name; samples along axis 0")
    source.add_argument("--data-loader-script", metavar="FILE.py[:FUNC]",
                        help="Polygraphy data-loader script; FUNC (default load_data) returns feed dicts. "
                             "It runs as Python code: pass only scripts you trust")
    collect.add_argument("--calib", help="the calibration data used for quantization (.npy/.npz), to compare with --inputs")
    collect.add_argument("--reference", help="framework outputs (.npz keyed by output name), one row per input row")
    collect.add_argument("--modelopt-log", help="ModelOpt's console output while quantizing "
                         "(`python -m modelopt.onnx.quantization ... 2>&1 | tee quant.log`; its --log_file stops "
                         "before the summary counts)")
    collect.add_argument("--postprocess", metavar="FILE.py[:FUNC]",
                         help="your decode step: FUNC (default decode) gets one sample's outputs {name: array} "
                              "(and, when it takes a second parameter, the sample's inputs {name: array}) and "
                              "returns the task result {field: value} (labels, scores, boxes; at most 10,000 values "
                              "per field: downsample a mask or return a summary); an optional "
                              "compare(a, b) -> agreement in [0, 1] in the same file replaces the generic comparison "
                              "(compare(a, b) gets arrays as NumPy arrays, single values as Python values). Both are "
                              "checked on the first FP32 sample before the other samples run. "
                              "It runs as Python code: pass only scripts you trust")
    collect.add_argument("--task-results", metavar="FILE.json|FILE.npz",
                         help="the task results your application decoded, one per input sample (JSON list of "
                              "objects, or .npz keyed <sample:06d>/<field>), compared with --postprocess's decode")
    collect.add_argument("--task-results-stage", default="ort_qdq", metavar="STAGE",
                         help="the stage whose outputs your application decoded (default ort_qdq)")
    collect.add_argument("--batch-axis", action="append", default=[], metavar="NAME=AXIS",
                         help="the axis of input (or output) NAME that holds the samples, when the model does not "
                              "say (default: a dimension named *batch*, else the only dynamic one, else 0); 'none' "
                              "for an input with no batch axis, given once for all samples or once per sample on a "
                              "new axis 0 (scalars need none: they have no axis). Repeatable: --batch-axis state=1")
    collect.add_argument("--allow-unquantized", action="store_true",
                         help="accept a --qdq with no QuantizeLinear/DequantizeLinear node, the same model twice, or "
                              "--fp32 and --qdq that look swapped (refused by default: the report would be wrong)")
    collect.add_argument("--ort-provider", default="cpu", help="ONNX Runtime execution provider (default: cpu)")
    collect.add_argument("--max-samples", type=int, help="use only the first N samples")
    collect.add_argument("--no-fp16-check", action="store_true",
                         help="skip the FP16 check that runs when the QDQ model's float part is FP16 (ModelOpt's "
                              "default): FP32 ranges of its FP16 tensors on 16 samples spread over the set and a control "
                              "run with that part in FP32 (about one more inference pass of the QDQ model)")
    collect.add_argument("--no-saturation-check", action="store_true",
                         help="skip the saturation check that runs when Conv/MatMul/Gemm read UINT8 activations and "
                              "INT8 weights (U8S8), or INT8 activations and INT8 weights (S8S8) on a CPU without VNNI, "
                              "and an output of the QDQ model does not agree with FP32: the QDQ model run again with "
                              "ONNX Runtime's Q/DQ fusion disabled, on 32 samples, those it decides otherwise first "
                              "(where every output agrees "
                              "the bundle records it as skipped, with the reason)")
    collect.add_argument("--no-calibration-check", action="store_true",
                         help="skip the calibration check that runs when an output of the QDQ model does not agree "
                              "with FP32: the QDQ model run again on 32 samples, those it decides otherwise first, "
                              "with every activation range "
                              "taken from the evaluation inputs themselves (MinMax over the --range-samples samples), "
                              "which tells whether any calibration set could restore the outputs")
    collect.add_argument("--range-samples", type=int, metavar="K",
                         help="measure how the evaluation data (and the --calib data) fills every activation Q node's "
                              "calibrated range (clipping, range used) on K samples spread over each set (default 8; "
                              "0 skips it): one more FP32 inference per sample measured")
    collect.add_argument("--per-layer", action="store_true",
                         help="per-layer error (local and accumulated), Q-node range use and a measured what-if search")
    collect.add_argument("--per-layer-samples", metavar="K|all",
                         help="with --per-layer: the per-layer statistics read K samples spread evenly over the "
                              "evaluation set, first and last included (default 32), or every sample with 'all'; "
                              "the what-if search runs on every sample")
    collect.add_argument("--whatif-budget", type=float, default=120.0, metavar="SECONDS",
                         help="time for the what-if search with --per-layer (default 120; 0 disables it); when one "
                              "trial on every sample would take over a tenth of it, the trials run on a subset "
                              "(the worst samples and a spread; the report says which)")
    collect.add_argument("--confirm", action="store_true",
                         help="with --per-layer: re-quantize the FP32 model with the what-if's best set excluded "
                              "(the quantizer that made --qdq, options read from its graph, --calib data) and record "
                              "the real number beside the bypass estimate (docs/confirm.md)")
    collect.add_argument("--target-cosine", type=float,
                         help="what-if: also require every output's median cosine to reach this (default: none; the "
                              "target is the report's own judgement of every output: decisions where they decide, "
                              "cosine 0.99 elsewhere)")
    collect.add_argument("--target-top1", type=float,
                         help="what-if: also require the mean top-1 agreement of class outputs to reach this "
                              "(default: none; the report's judgement)")
    collect.add_argument("--trt-mark-all", action="store_true",
                         help="with TensorRT: mark every layer output and compare it with ONNX Runtime "
                              "(breaks fusions: the engines are not the ones you deploy)")
    collect.add_argument("-o", "--output", required=True, help="bundle folder to write, or a path ending in .zip")
    collect.add_argument("--force", action="store_true",
                         help="replace an existing qdqreport bundle at -o (anything else is refused, never deleted)")
    collect.add_argument("--save-inputs", action="store_true",
                         help="store the evaluation inputs in the bundle (inputs/eval_inputs.npz) with a Polygraphy "
                              "data-loader script, so `qdqreport export --polygraphy` can replay them")
    collect.add_argument("--store-outputs", default=None, metavar="all|first:N|none",
                         help="ONNX Runtime outputs kept in the bundle per stage (default: first:4096, at most 16 MB "
                              "of outputs a stage, so bundles stay shareable; every sample is still compared; the "
                              "report's decisions read the stored ones). `all` "
                              "for import-trt --outputs and export --polygraphy on every sample")
    collect.add_argument("--redact", action="store_true",
                         help="reduce paths to file names and drop host details (platform, CPU, host name) in the "
                              "bundle; the manifest lists what was removed")
    collect.add_argument("--quiet", action="store_true",
                         help="no progress, notes or ONNX Runtime session warnings on stderr (errors still print)")
    add_target(collect, collect=True)
    add_judging(collect)
    collect.set_defaults(handler=_collect)


def _add_report(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser("report", help="render a bundle as report.html, report.md and findings.json",
                                 description="Render a bundle offline (no GPU, no ONNX Runtime needed). "
                                             "When GITHUB_STEP_SUMMARY is set, the report's head (verdict, "
                                             "stages, top findings) is appended to that file.")
    report.add_argument("bundle", help="bundle folder or .zip")
    report.add_argument("-o", "--output", required=True, help="folder for report.html, report.md, findings.json")
    report.add_argument("--fail-on", choices=("error", "warning", "info"),
                        help="exit 1 when a finding of this severity or worse exists, naming those findings in one "
                             "line on stderr (info: any finding)")
    report.add_argument("--sarif", metavar="FILE", help="also write the findings as SARIF 2.1.0 (GitHub code scanning: "
                                                        "github/codeql-action/upload-sarif)")
    report.add_argument("--junit", metavar="FILE", help="also write JUnit XML: one test case per rule, failed when its "
                                                        "findings reach --fail-on")
    report.add_argument("--redact", action="store_true",
                        help="reduce paths to file names and drop host details in the report (the bundle is not "
                             "changed); the provenance lists what was removed")
    add_target(report)
    add_judging(report)
    report.set_defaults(handler=_report)


def _add_demo(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser("demo", help="collect and report on the bundled real example (a broken INT8 classifier)")
    demo.add_argument("-o", "--output", default="qdqreport-demo", help="output folder (default: qdqreport-demo)")
    demo.add_argument("--healthy", action="store_true", help="use the correctly calibrated QDQ model instead of the broken one")
    demo.add_argument("--quiet", action="store_true", help="no progress on stderr")
    demo.set_defaults(handler=_demo)


def _collect(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.collect.batch_axis import parse_batch_axes
    from qdqreport.collect import output_store
    from qdqreport.collect.output_store import parse_store_outputs
    from qdqreport.collect.pipeline import CollectOptions, collect
    from qdqreport.progress import Progress

    options = CollectOptions(fp32=args.fp32, qdq=args.qdq, inputs=args.inputs or args.data_loader_script,
                             output=args.output, calib=args.calib, reference=args.reference,
                             modelopt_log=args.modelopt_log, ort_provider=args.ort_provider,
                             max_samples=args.max_samples, force=args.force, trt_mark_all=args.trt_mark_all,
                             per_layer=args.per_layer, whatif_budget=args.whatif_budget,
                             target_cosine=args.target_cosine, target_top1=args.target_top1,
                             fp16_check=not args.no_fp16_check,
                             saturation_check=not args.no_saturation_check,
                             calibration_check=not args.no_calibration_check,
                             postprocess=args.postprocess, task_results=args.task_results,
                             task_results_stage=args.task_results_stage, argv=["qdqreport", *argv],
                             batch_axes=parse_batch_axes(args.batch_axis), allow_unquantized=args.allow_unquantized)
    options.save_inputs, options.redact = args.save_inputs, args.redact
    if args.range_samples is not None:  # the default lives in collect/pipeline.RANGE_SAMPLES
        if args.range_samples < 0:
            raise InputError(f"--range-samples {args.range_samples}: give a number of samples, or 0 to skip the "
                             "activation-range pass")
        options.range_samples = args.range_samples
    if args.per_layer_samples is not None:  # the default lives in collect/pipeline.PER_LAYER_SAMPLES
        from qdqreport.collect.layers_stage import parse_per_layer_samples
        options.per_layer_samples = parse_per_layer_samples(args.per_layer_samples)
    if args.store_outputs is not None:  # given: kept as given
        options.store_outputs = parse_store_outputs(args.store_outputs)
    else:  # the default, first:DEFAULT_STORED, at most DEFAULT_STORE_BYTES of outputs a stage
        options.store_cap_bytes = output_store.DEFAULT_STORE_BYTES
    if args.confirm:  # the collector calls it back; it never imports confirm/ (docs/ARCHITECTURE.md)
        from qdqreport.confirm.whatif_confirm import confirm_chosen
        options.confirm = confirm_chosen
    options.target = args.target
    options.judging = judging_from(args)
    path = collect(options, Progress(quiet=args.quiet))
    print(path)
    return 0


def _report(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.render.plot_worker import start_plot_worker

    # Forked before the imports below: the worker imports matplotlib while this process reads the bundle (issue 12).
    worker = start_plot_worker()
    try:
        from qdqreport.pipeline import render_report
        from qdqreport.render.ci import CiOutputs, fail_on_line

        summary = os.environ.get("GITHUB_STEP_SUMMARY") or None
        outputs = CiOutputs(sarif=_path(args.sarif), junit=_path(args.junit), step_summary=_path(summary))
        outcome = render_report(args.bundle, args.output, fail_on=args.fail_on, redact=args.redact, ci_outputs=outputs,
                                target=args.target, judging=judging_from(args), plot_worker=worker)
    finally:
        if worker is not None:
            worker.close()
    for path in outcome.paths:
        print(path)
    if outcome.tripped:
        print(fail_on_line(args.fail_on, outcome.tripped), file=sys.stderr)
    return outcome.exit_code


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _demo(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.collect.pipeline import CollectOptions, collect
    from qdqreport.pipeline import render_report
    from qdqreport.progress import Progress

    out = Path(args.output)
    qdq, calib = ("cls_int8.onnx", "calib.npz") if args.healthy else ("cls_int8_x255.onnx", "calib_x255.npz")
    options = CollectOptions(fp32=str(DEMO_DIR / "cls_fp32.onnx"), qdq=str(DEMO_DIR / qdq), inputs=str(DEMO_DIR / "eval.npz"),
                             calib=str(DEMO_DIR / calib), output=str(out / "bundle"), force=True,
                             modelopt_log=None if args.healthy else str(DEMO_DIR / "modelopt_x255.log"),
                             argv=["qdqreport", *argv])
    progress = Progress(quiet=args.quiet)
    bundle = collect(options, progress)
    outcome = render_report(bundle, out)
    progress.say("report written")
    print(f"report: {out / 'report.html'}\nmarkdown: {out / 'report.md'}\nbundle: {bundle}")
    return outcome.exit_code


def _validate(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.analysis.context import Context
    from qdqreport.bundle.reader import Bundle
    from qdqreport.engine import run_rules
    from qdqreport.render import jsonout, markdown
    from qdqreport.report.model import build_report

    bundle = Bundle(args.bundle)
    # Valid means `report` can render it: every artifact is read through its schema (bundle/artifacts.py),
    # the rules run and the report is built in memory; nothing is written.
    ctx = Context(bundle, target=args.target, judging=judging_from(args))
    model = build_report(bundle, run_rules(ctx), ctx)
    markdown.render_markdown(model), jsonout.render_json(model)
    major, minor = bundle.version
    print(f"{args.bundle}: valid qdqreport bundle, schema {major}.{minor}, {len(bundle.manifest['files'])} files verified")
    for failure in model.failures:
        print(f"qdqreport: warning: rule {failure.rule_id} failed on this bundle (an internal problem the report "
              f"lists): {failure.message}", file=sys.stderr)
    return 0


def _rules(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.rules import discover

    registry = discover()
    if args.markdown:
        print(rules_markdown(registry), end="")
        return 0
    if args.rule_id is None:
        for spec in registry.values():
            print(f"{spec.id}  {spec.slug:32s} {spec.summary}")
        return 0
    spec = next((s for s in registry.values() if args.rule_id in (s.id, s.slug)), None)
    if spec is None:
        raise QdqReportError(f"no rule {args.rule_id!r}; `qdqreport rules` lists them")
    print(f"{spec.id} {spec.slug}: {spec.title}\n\n{spec.doc}")
    return 0


def _levels_markdown() -> str:
    from qdqreport.analysis.agreement import levels_table

    rows = levels_table()
    table = ["| measure | agree | collapse |", "|---|---|---|"]
    table += [f"| {m} | {a} | {c} |" for m, a, c in rows if a]
    notes = [m for m, a, _ in rows if not a]
    return ("Between the two levels an output *degrades*.\n\n" + "\n".join(table) + "\n\n"
            + "".join(f"{note[0].upper()}{note[1:]}.\n" for note in notes))


def rules_markdown(registry: dict) -> str:
    """docs/rules.md: each rule's documentation, straight from its docstring."""
    from qdqreport.analysis import agreement, evidence
    from qdqreport.findings import SEVERITY_AND_RANKING

    parts = ["# Root-cause rules\n\nGenerated by `qdqreport rules --markdown` from each rule's docstring; "
             "`qdqreport rules ID` prints one. First, how a report decides, so a report can be checked "
             "against this page.\n",
             "\n## How a report decides\n\n### Agreement: does a stage pair agree? (`qdqreport/analysis/agreement.py`)\n\n"
             + inspect.cleandoc(agreement.__doc__ or "").split("\n", 2)[2] + "\n\n" + _levels_markdown()
             + "\n" + SEVERITY_AND_RANKING
             + "\n### Measured evidence re-ranks guesses (`qdqreport/analysis/evidence.py`)\n\n"
             + inspect.cleandoc(evidence.__doc__ or "").split("\n", 2)[2] + "\n",
             "\n## The rules\n"]
    parts += [f"\n### {spec.id} `{spec.slug}`: {spec.title}\n\n{spec.doc}\n" for spec in registry.values()]
    parts.append(WRITING_A_RULE)
    return "".join(parts)


WRITING_A_RULE = """
## Writing a rule

A rule is one module of `qdqreport/rules/` (or of a plug-in distribution, named in the `qdqreport.rules`
entry-point group: docs/ARCHITECTURE.md, "Plug-in rules"). `@rule` registers the function and binds to it
the factory of its findings, `function.finding(...)`: every field of a finding but the rule id, which is
always the rule's own. A finding that carries another id makes the rule fail (the report lists it under
"Internal problems"), so no rule can report under another rule's id.

```python
from qdqreport.findings import Fix, Metric
from qdqreport.rules import Fires, Quiet, rule


@rule("QR900", "my-check", "What the rule detects", examples=[Fires("a bundle it fires on", build_bad),
                                                             Quiet("a bundle it stays quiet on", build_good)])
def my_check(ctx):
    \"\"\"What it detects, in one line.

    Why it matters: ...

    Fix: ...
    \"\"\"
    if ...:  # read the bundle through ctx (analysis/context.py)
        yield my_check.finding(title="...", severity="warning", confidence=0.8, score=0.5, subject="...",
                               summary="...", evidence=(Metric("...", 0.5),), fixes=(Fix("...", "command"),))
```

The examples build small bundles with `qdqreport.testing.BundleBuilder`; `python -c "from
qdqreport.testing.examples import main; main()"` runs every registered rule's examples.
"""
