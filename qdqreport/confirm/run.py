"""confirm: re-quantize the bundle's FP32 model with a fix, collect the new QDQ model on the bundle's
own inputs, and diff it against the bundle. Everything lands in one OUT folder:

  OUT/<fp32 stem>.confirm.onnx   the re-quantized model
  OUT/bundle/                    its bundle (manifest `quantization`: quantizer, version, options, fix)
  OUT/diff/                      diff.html, diff.md, diff.json: BUNDLE before, OUT/bundle after
  OUT/confirm.json               the record: fix, quantizer call, verdict
  OUT/eval_inputs.npz, OUT/qdqreport_inputs.py   the inputs replayed from the bundle (collect --save-inputs)

OUT is built in place and removed again when any step fails (an existing confirm folder given with
--force is set aside first and restored on failure), so a failed confirm leaves nothing behind.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.writer import sha256_file
from qdqreport.confirm import fix as fixes
from qdqreport.confirm import quantizers as q
from qdqreport.errors import InputError
from qdqreport.fixes import exclusion, input_layout, resolve_for
from qdqreport.progress import Progress

RECORD = "confirm.json"


@dataclass
class ConfirmOptions:
    bundle: str
    output: str
    fix: str | None = None  # a finding's rule id or fingerprint
    calib: str | None = None  # the corrected calibration file
    exclude: list[str] = field(default_factory=list)
    exclude_op_types: list[str] = field(default_factory=list)
    calib_method: str | None = None
    high_precision_dtype: str | None = None  # ModelOpt's float part (fp32 keeps it out of FP16): the QR011 fix
    fp32: str | None = None  # default: the bundle's models.fp32.path
    inputs: str | None = None  # default: the bundle's saved inputs
    quantizer: str | None = None  # default: detected
    force: bool = False
    argv: list[str] = field(default_factory=list)
    postprocess: str | None = None  # FILE.py[:func]: the decode to run on the re-quantized model's outputs too


@dataclass(frozen=True)
class ConfirmResult:
    output: Path
    bundle: Path
    diff_paths: tuple[Path, ...]
    verdict: str
    regressed: bool
    record: dict[str, Any]


@dataclass(frozen=True)
class _Plan:
    fix: fixes.FixSpec
    fp32: Path
    calib: str | None
    detected: q.Detected
    nodes: list[str]  # the nodes the fix names (its patterns resolved to names)
    excluded: list[str]  # what the quantizer call excludes: *nodes* and the op types as the printed fix resolves them
    op_types: tuple[str, ...]


def confirm(options: ConfirmOptions, progress: Progress | None = None) -> ConfirmResult:
    progress = progress or Progress(quiet=True)
    bundle = Bundle(options.bundle)
    ctx = Context(bundle)
    options = _with_recorded_inputs(options, ctx)
    plan = _plan(options, ctx)
    out = Path(options.output)
    model_path = out / f"{plan.fp32.stem}.confirm.onnx"
    if plan.detected.quantizer == "modelopt" and q.modelopt_version() is None:
        raise _modelopt_missing(options, ctx, plan, model_path)
    _check_renderer()
    old = _prepare(out, options.force, options.bundle)
    try:
        result = _run(options, ctx, plan, out, model_path, progress)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        if old is not None:
            os.replace(old, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return result


def _check_renderer() -> None:
    """The last step renders the diff (jinja2, matplotlib): a Python without them (a ModelOpt venv qdqreport was
    installed into without its dependencies) must fail now, not after minutes of quantization and collection whose
    results the all-or-nothing OUT folder then removes (a new user lost a 3-minute confirm so)."""
    try:
        import qdqreport.diff.render  # noqa: F401  (imports jinja2's and matplotlib's modules the diff needs)
    except ImportError as error:
        raise InputError(f"qdqreport confirm: cannot render its diff in this Python ({error}); install qdqreport with "
                         f"its dependencies here (pip install 'qdqreport[collect]') or run confirm from the "
                         "environment qdqreport was installed into") from None


# --- planning: everything is checked before anything is written -------------------------------
def _plan(options: ConfirmOptions, ctx: Context) -> _Plan:
    detected = q.detect(ctx.precision, ctx.modelopt_log, options.quantizer)
    fix = _fix(options, ctx, detected.quantizer)
    fp32 = _fp32(options, ctx)
    original = _original_calibration(ctx)
    fixes.check_calibration(fix, original)
    calib = fix.calibration or original
    if calib and not Path(calib).is_file():
        raise InputError(f"{calib}: no such calibration file; pass the calibration data with --calib FILE")
    if detected.quantizer == "onnxruntime" and not calib:
        raise InputError(f"{options.bundle}: records no calibration file that exists here; pass the data the model "
                         "was (or should be) calibrated on with --calib FILE")
    _inputs_source(options, ctx)  # refuse early: no inputs, no collect
    import onnx

    names = [n.name for n in onnx.load(str(fp32), load_external_data=False).graph.node if n.name]
    nodes = fixes.resolve_nodes(fix.node_patterns, names, str(fp32))
    # One owner for what an exclusion means (qdqreport/fixes.resolve_for): a node the quantizer cannot free by its name
    # (a Softmax reading another node's INT8 output) is freed as the report's printed command frees it, so the confirm
    # measures what that command would build, whether the nodes came from a finding, --exclude or --exclude-op-type.
    resolved = resolve_for(ctx.precision or {}, detected.quantizer, exclusion(nodes, fix.op_types)).change
    return _Plan(fix, fp32, calib, detected, nodes, list(resolved.exclude_nodes), tuple(resolved.exclude_op_types))


def _fix(options: ConfirmOptions, ctx: Context, quantizer: str) -> fixes.FixSpec:
    if options.calib_method and options.calib_method not in fixes.CALIB_METHODS:
        raise InputError(f"--calib-method {options.calib_method}: use one of {', '.join(fixes.CALIB_METHODS)}")
    if options.high_precision_dtype and quantizer != "modelopt":
        raise InputError(f"{options.bundle}: --high-precision-dtype is a ModelOpt option; quantize_static keeps the "
                         "float part in FP32 already (drop it, or pass --quantizer modelopt)")
    if options.fix:
        from qdqreport.engine import run_rules

        finding = fixes.find_finding(run_rules(ctx).findings, options.fix, options.bundle)
        recorded = q.ort_options(ctx.precision or {}) if quantizer == "onnxruntime" else None
        spec = fixes.fix_from_finding(finding, options.calib, quantizer, recorded)
        return fixes.merge(spec, options.exclude, options.exclude_op_types, options.calib_method)
    if not (options.exclude or options.exclude_op_types or options.calib or options.calib_method
            or options.high_precision_dtype):
        raise InputError(f"{options.bundle}: nothing to confirm; pass --fix FINDING (a rule id or fingerprint of "
                         "its report), --exclude NODE, --exclude-op-type OP, --calib FILE or --calib-method")
    return fixes.fix_from_flags(options.exclude, options.exclude_op_types, options.calib, options.calib_method)


def _fp32(options: ConfirmOptions, ctx: Context) -> Path:
    entry = (ctx.manifest.get("models") or {}).get("fp32") or {}
    path = Path(options.fp32 or entry.get("path") or "")
    if not options.fp32 and not entry.get("path"):
        raise InputError(f"{options.bundle}: names no FP32 model; pass it with --fp32 FILE")
    if not path.is_file():
        raise InputError(f"{path}: no such FP32 model (named by {options.bundle}); pass it with --fp32 FILE")
    if entry.get("sha256") and sha256_file(path) != entry["sha256"]:
        raise InputError(f"{path}: is not the FP32 model {options.bundle} was collected from (sha256 differs); "
                         "pass that model with --fp32 FILE")
    return path


def _with_recorded_inputs(options: ConfirmOptions, ctx: Context) -> ConfirmOptions:
    """*options* with --inputs set to the evaluation file the bundle records, where none was given, the bundle saved no
    inputs, and that file still exists here with the recorded content (a new user's face mesh bundle named eval.npz and
    its sha256, and confirm refused: "holds no evaluation inputs")."""
    from qdqreport.collect.save_inputs import INPUTS_ARTIFACT

    if options.inputs or ctx.bundle.has((ctx.manifest.get("artifacts") or {}).get(INPUTS_ARTIFACT)):
        return options
    recorded = _original_file(ctx, "eval")
    return options if recorded is None else dataclasses.replace(options, inputs=recorded)


def _original_calibration(ctx: Context) -> str | None:
    """The bundle's calibration file when it still exists here with the recorded content."""
    return _original_file(ctx, "calib")


def _original_file(ctx: Context, role: str) -> str | None:
    """The bundle's *role* ("eval", "calib") input file when it still exists here with the recorded content."""
    entry = (ctx.manifest.get("inputs") or {}).get(role) or {}
    source = entry.get("source")
    if not isinstance(source, str) or not source or entry.get("kind") == "script" or not Path(source).is_file():
        return None
    if entry.get("sha256") and sha256_file(Path(source)) != entry["sha256"]:
        return None
    return str(source)


def _inputs_source(options: ConfirmOptions, ctx: Context) -> str:
    if options.inputs:
        if not Path(options.inputs.rsplit(":", 1)[0] if not os.path.exists(options.inputs) else options.inputs).exists():
            raise InputError(f"{options.inputs}: no such file (--inputs)")
        return options.inputs
    from qdqreport.collect.save_inputs import INPUTS_ARTIFACT

    saved = (ctx.manifest.get("artifacts") or {}).get(INPUTS_ARTIFACT)
    if not ctx.bundle.has(saved):
        raise InputError(f"{options.bundle}: holds no evaluation inputs; pass the ones it was collected on with "
                         "--inputs FILE (or collect it again with --save-inputs)")
    return saved


# --- the output folder ---------------------------------------------------------------------
def _prepare(out: Path, force: bool, bundle: str) -> Path | None:
    """Create OUT; an existing confirm folder is set aside with --force and returned (restored on failure)."""
    source, target = Path(bundle).resolve(), out.resolve()
    if target == source or target in source.parents or source in target.parents:
        raise InputError(f"{out}: is the bundle, holds it or lies inside it; pass another -o folder")
    old = None
    if out.exists() and not (out.is_dir() and not any(out.iterdir())):
        if not (force and (out / RECORD).is_file()):
            why = "replace it with --force" if (out / RECORD).is_file() else "it is not a confirm folder; pick another -o"
            raise InputError(f"{out}: exists; {why}")
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.replace(out, old)
    out.mkdir(parents=True, exist_ok=True)  # an empty folder given as -o is used (and removed on failure)
    return old


# --- running -------------------------------------------------------------------------------
def _run(options: ConfirmOptions, ctx: Context, plan: _Plan, out: Path, model: Path, progress: Progress) -> ConfirmResult:
    record = _quantize(options, ctx, plan, model, progress)
    inputs = _replay_inputs(options, ctx, out)
    progress.say("collecting the re-quantized model on the bundle's inputs")
    bundle = _collect(options, ctx, plan, model, inputs, out, record, progress)
    progress.say("diffing the bundle against the re-quantized one")
    from qdqreport.diff import build_diff
    from qdqreport.diff.render import write_diff

    diff = build_diff(options.bundle, bundle)
    written = write_diff(diff, out / "diff")
    record = {"format": 1, "before": options.bundle, "after": str(bundle), "quantization": record,
              "estimate": record.get("estimate"), "confirmed": _measured(Context(Bundle(bundle))),
              "verdict": diff.verdict.text, "verdict_kind": diff.verdict.kind,
              "caveats": [*_caveats(diff.inputs), *postprocess_caveat(ctx, options.postprocess)]}
    (out / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return ConfirmResult(out, bundle, tuple(written.paths), diff.verdict.text, written.regressed, record)


# Besides the fix, these change the numbers (measured: onnxruntime-gpu 1.24.4 on CPU runs ModelOpt's FP16
# float part at 50% top-1 where 1.32.0 gives 98%, on the very same file; docs/confirm.md). Evaluation
# inputs are compared by their sample count and statistics: replayed inputs are another file, same samples.
def _caveats(changes: Any) -> list[str]:
    """What else differs between the bundle and the re-quantized one's collection, as the diff's inputs table shows."""
    caveats = [f"another onnxruntime version ({c.before} → {c.after})" for c in changes
               if c.changed and (c.group, c.item) == ("tools", "onnxruntime")]
    evaluation = [f"{c.item} {c.before} → {c.after}" for c in changes
                  if c.changed and c.group == "evaluation" and c.item not in ("file", "sha256")]
    if evaluation:
        caveats.append(f"other evaluation inputs than the bundle's ({'; '.join(evaluation)})")
    return [f"{text}: the verdict measures this too, not only the fix" for text in caveats]


def _quantize(options: ConfirmOptions, ctx: Context, plan: _Plan, model: Path, progress: Progress) -> dict[str, Any]:
    """Run the quantizer; return the manifest's `quantization` record."""
    base = {"quantizer": plan.detected.quantizer, "detected_by": plan.detected.reason, "fix": plan.fix.describe(),
            "excluded_nodes": plan.excluded, "calibration": plan.calib, "by": "qdqreport confirm",
            "estimate": _estimate(ctx, plan), "high_precision_dtype": _high_precision(options, plan)}
    if plan.detected.quantizer == "modelopt":
        recovered = q.modelopt_options(ctx.modelopt_log, ctx.precision, ctx.manifest, ctx.modelopt_log_text)
        args = q.modelopt_args(str(plan.fp32), str(model), plan.calib, str(model.parent / "modelopt.log"), recovered,
                               plan.excluded, plan.op_types, plan.fix.calibration_method,
                               _high_precision(options, plan), plan.fix.fp32_op_types)
        progress.say(f"re-quantizing with ModelOpt {q.modelopt_version()}")
        q.run_modelopt(args, model.parent / "modelopt.log")
        return {**base, "version": q.modelopt_version(), "recovered": recovered, "command": q.shell(args)}
    from qdqreport.collect.inputs import load_inputs
    from qdqreport.collect.models import load_model

    recovered = q.ort_options(ctx.precision or {})
    used = q.apply_fix_ort(recovered, plan.excluded, plan.op_types, plan.fix.calibration_method,
                           dict(plan.fix.ort_options))
    specs = load_model(plan.fp32, "--fp32").inputs
    calib = load_inputs(plan.calib, specs, "--calib", axes=_batch_axes(ctx))
    progress.say(f"re-quantizing with onnxruntime {q.onnxruntime_version()} quantize_static "
                 f"({len(calib.samples)} calibration samples)")
    q.run_ort(plan.fp32, model, calib.samples, used)
    return {**base, "version": q.onnxruntime_version(), "recovered": recovered, "options": used,
            "command": q.ort_call(str(plan.fp32), str(model), plan.calib, used)}


def _high_precision(options: ConfirmOptions, plan: _Plan) -> str | None:
    """ModelOpt's float part: --high-precision-dtype, else the one the finding's fix names (QR011's fp32)."""
    return options.high_precision_dtype or plan.fix.high_precision_dtype


def _estimate(ctx: Context, plan: _Plan) -> dict[str, Any] | None:
    """The what-if's bypass measurement of this very exclusion set, when the bundle's search tried it."""
    summary = ctx.whatif_summary if isinstance(ctx.whatif_summary, dict) else {}
    trials = [summary.get("chosen") or {}, summary.get("op_type") or {}]
    for trial in trials:
        same_nodes = trial.get("nodes") and isinstance(trial.get("nodes"), list) and (
            set(trial["nodes"]) == set(plan.nodes) or set(_excluded(ctx, plan, trial["nodes"])) == set(plan.excluded))
        same_type = trial.get("op_type") and list(plan.fix.op_types) == [trial["op_type"]] and not plan.nodes
        if (same_nodes or same_type) and not plan.fix.calibration and not plan.fix.ort_options:
            return {"by": "what-if bypass (collect --per-layer)", "cosine": trial.get("cosine"), "top1": trial.get("top1")}
    return None


def _excluded(ctx: Context, plan: _Plan, nodes: list[str]) -> tuple[str, ...]:
    """*nodes* as the quantizer call would exclude them (fixes.resolve_for), to compare with the plan's own call."""
    return resolve_for(ctx.precision or {}, plan.detected.quantizer, exclusion(nodes)).change.exclude_nodes


def _measured(after: Context) -> dict[str, Any] | None:
    """The re-quantized model's numbers as the what-if states them: worst output's median cosine, mean top-1."""
    comparison = after.comparison("quantization")
    if comparison is None:
        return None
    summaries = after.output_summaries(comparison.id)
    top1 = [s.top1 for s in summaries if s.top1 is not None]
    return {"by": "re-quantized and collected", "cosine": min((s.cosine_median for s in summaries), default=None),
            "top1": sum(top1) / len(top1) if top1 else None}


def _replay_inputs(options: ConfirmOptions, ctx: Context, out: Path) -> str:
    """The evaluation inputs for collect: --inputs, or the bundle's saved ones replayed by their loader script."""
    if options.inputs:
        return options.inputs
    from qdqreport.collect.save_inputs import LOADER_SCRIPT

    ctx.bundle.copy_to(_inputs_source(options, ctx), out / "eval_inputs.npz")
    script = out / "qdqreport_inputs.py"  # qdqreport's own loader text, never the bundle's copy
    script.write_text(LOADER_SCRIPT, encoding="utf-8")
    return str(script)


def _batch_axes(ctx: Context) -> dict[str, int | None]:
    """Each model input's batch axis as collect recorded it: the one reading the printed commands use (input_layout)."""
    return {name: axis for name, (axis, _) in input_layout(ctx).items()}


def _collect(options: ConfirmOptions, ctx: Context, plan: _Plan, model: Path, inputs: str, out: Path,
             record: dict[str, Any], progress: Progress) -> Path:
    from qdqreport.collect.output_store import DEFAULT_STORE_BYTES
    from qdqreport.collect.pipeline import CollectOptions, collect

    settings = ctx.manifest.get("settings") or {}
    log = out / "modelopt.log"
    # Saved inputs are already the samples the bundle used; a given --inputs file is cut like the bundle's. The
    # calibration file is read as the bundle read it either way: a new user's graph inputs (--batch-axis NAME=none,
    # variable sizes) stopped the after-collect with "inputs hold different sample counts" once the axes were dropped.
    limit = settings.get("max_samples") if options.inputs else None
    axes = {k: v for k, v in _batch_axes(ctx).items() if v != 0}
    # The bundle's judgement travels with it: without the recorded --output-kind, --decision-threshold and --target
    # the after-bundle judged a key CNN's logits by cosine ("Outputs agree", the diff "resolved") while 9 of 160 keys
    # still changed (a new user's confirm). Its decode is the user's to pass again (--postprocess): never run from the
    # bundle's record.
    collect_options = CollectOptions(fp32=str(plan.fp32), qdq=str(model), inputs=inputs, output=str(out / "bundle"),
                                     calib=plan.calib, modelopt_log=str(log) if log.is_file() else None,
                                     ort_provider=settings.get("ort_provider") or "cpu", max_samples=limit,
                                     argv=["qdqreport", *options.argv], batch_axes=axes, target=ctx.target,
                                     judging=ctx.judging if _judged(settings) else None,
                                     postprocess=options.postprocess,
                                     # As many stored samples as the bundle kept, under the CLI's byte cap: both sides
                                     # judge the same samples' decisions, and a 40 x 18,385-class recognizer's after-bundle
                                     # was 735 MB with collect's API default (128 samples, no cap) against 30 MB before.
                                     store_outputs=len(ctx.stored_outputs("ort_fp32")), store_cap_bytes=DEFAULT_STORE_BYTES)
    collect_options.quantization = record
    return collect(collect_options, progress)


def _judged(settings: dict[str, Any]) -> bool:
    """Whether collect recorded what the user declared about the outputs (kinds, a decision threshold)."""
    return bool(settings.get("output_kinds") or settings.get("decision_threshold"))


def recorded_postprocess(ctx: Context) -> str | None:
    """The --postprocess decode the bundle records (FILE.py:function, as collect was given it), None when none.
    Only named, never run: confirm runs the decode the user passes it (ConfirmOptions.postprocess), for a bundle is a
    stranger's and the file it names could be one the bundle brought (SECURITY.md)."""
    recorded = (ctx.manifest.get("task") or {}).get("postprocess")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("source"), str):
        return None
    function = recorded.get("function")
    return f"{recorded['source']}:{function}" if isinstance(function, str) and function else recorded["source"]


def postprocess_caveat(ctx: Context, given: str | None) -> list[str]:
    """A caveat when the bundle was decoded and the re-quantized model will not be (no --postprocess given)."""
    recorded = recorded_postprocess(ctx)
    if recorded is None or given:
        return []
    return [f"the bundle's outputs were decoded by --postprocess {recorded}, the re-quantized model's are not: pass "
            "--postprocess to confirm (it runs no code a bundle names) so that the diff compares decoded results"]


def _modelopt_missing(options: ConfirmOptions, ctx: Context, plan: _Plan, model: Path) -> q.QuantizerUnavailable:
    out = Path(options.output)
    recovered = q.modelopt_options(ctx.modelopt_log, ctx.precision, ctx.manifest, ctx.modelopt_log_text)
    args = q.modelopt_args(str(plan.fp32), str(model), plan.calib, str(out / "modelopt.log"), recovered,
                           plan.excluded, plan.op_types, plan.fix.calibration_method,
                           _high_precision(options, plan), plan.fix.fp32_op_types)
    saved = Path(options.bundle) / "inputs" / "qdqreport_inputs.py"  # collect --save-inputs' loader (zips: unzip first)
    source = ["--inputs", options.inputs] if options.inputs else [
        "--data-loader-script", str(saved) if Path(options.bundle).is_dir() else f"<unzipped {options.bundle}>/{saved.relative_to(options.bundle)}"]
    collect = ["qdqreport", "collect", "--fp32", str(plan.fp32), "--qdq", str(model), *source,
               "--modelopt-log", str(out / "modelopt.log"), "-o", str(out / "bundle")]
    if plan.calib:
        collect += ["--calib", plan.calib]
    limit = (ctx.manifest.get("settings") or {}).get("max_samples")
    if options.inputs and limit:  # cut like the bundle's
        collect += ["--max-samples", str(limit)]
    import shlex

    return q.QuantizerUnavailable(
        f"{options.bundle}: made by ModelOpt, which is not installed here (pip install 'qdqreport[modelopt]'; "
        f"recognised because {plan.detected.reason}); run these where it is:",
        [q.shell(args), shlex.join(collect), shlex.join(["qdqreport", "diff", options.bundle, str(out / "bundle"),
                                                          "-o", str(out / "diff")])])
