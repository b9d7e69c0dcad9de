"""The `qdqreport confirm` subcommand (kept out of cli.py, which only registers it)."""

from __future__ import annotations

import argparse
import sys

DESCRIPTION = ("Prove a fix for real: re-quantize the bundle's FP32 model with a finding's fix (exclusions, op "
               "types, a corrected calibration file, a calibration method) using the quantizer that made the "
               "bundle (ONNX Runtime's quantize_static; ModelOpt's ONNX PTQ when it is installed), collect the new "
               "QDQ model on the bundle's own inputs, and diff it against the bundle. Writes OUT/<model>.confirm.onnx, "
               "OUT/bundle, OUT/diff (diff.html, diff.md, diff.json) and OUT/confirm.json. Exit codes: 0 written, "
               "1 the fix made things worse and --fail-on-regression was given, 2 bad input or the quantizer cannot "
               "run here (the commands to run elsewhere are printed).")


def add_confirm(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("confirm", help="re-quantize with a finding's fix and diff before/after",
                                 description=DESCRIPTION)
    parser.add_argument("bundle", help="the bundle whose fix to confirm (folder or .zip)")
    parser.add_argument("--fix", metavar="FINDING", help="the finding whose fix to apply: its rule id (QR203) or "
                                                         "fingerprint (as in report.md / findings.json)")
    parser.add_argument("--calib", metavar="FILE", help="calibration data to quantize with (.npy/.npz): the "
                                                        "corrected file a calibration fix asks for")
    parser.add_argument("--calib-method", choices=("minmax", "max", "entropy", "percentile", "distribution"),
                        help="calibration method (default: the fix's, else the one ModelOpt's log names, else "
                             "quantize_static's minmax; max and minmax are the same method under either name)")
    parser.add_argument("--exclude", action="append", default=[], metavar="NODE",
                        help="also keep this node out of INT8 (a node name, or a ModelOpt-style pattern); repeatable")
    parser.add_argument("--exclude-op-type", action="append", default=[], metavar="OP",
                        help="keep every node of this op type out of INT8; repeatable")
    parser.add_argument("--high-precision-dtype", choices=("fp32", "fp16", "bf16"),
                        help="ModelOpt only: the float part's precision (ModelOpt's default fp16; fp32 is the fix "
                             "when the FP16 float part damages the outputs, QR011)")
    parser.add_argument("--fp32", help="the FP32 model (default: the path the bundle records; its sha256 must match)")
    parser.add_argument("--inputs", help="evaluation inputs (default: those the bundle saved with collect --save-inputs, else the "
                             "evaluation file it records, while that file's sha256 is unchanged)")
    parser.add_argument("--postprocess", metavar="FILE.py[:FUNC]",
                        help="the decode step to run on the re-quantized model's outputs, as collect --postprocess "
                             "(imported and run as code: pass only a script you would run; confirm never runs the one "
                             "a bundle names)")
    parser.add_argument("--quantizer", choices=("onnxruntime", "modelopt"),
                        help="the quantizer to rerun (default: detected from the bundle)")
    parser.add_argument("-o", "--output", required=True, help="folder to write (must not exist, or --force)")
    parser.add_argument("--force", action="store_true", help="replace an existing confirm folder at -o")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when the re-quantized model is worse than the bundle's")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=_confirm)


def _confirm(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.confirm import ConfirmOptions, confirm
    from qdqreport.confirm.quantizers import QuantizerUnavailable
    from qdqreport.progress import Progress

    options = ConfirmOptions(bundle=args.bundle, output=args.output, fix=args.fix, calib=args.calib,
                             exclude=args.exclude, exclude_op_types=args.exclude_op_type,
                             calib_method=args.calib_method, high_precision_dtype=args.high_precision_dtype, fp32=args.fp32, inputs=args.inputs,
                             quantizer=args.quantizer, force=args.force, argv=list(argv), postprocess=args.postprocess)
    try:
        result = confirm(options, Progress(quiet=args.quiet))
    except QuantizerUnavailable as exc:
        print(f"qdqreport: error: {exc}", file=sys.stderr)
        for command in exc.commands:
            print(f"  {command}", file=sys.stderr)
        return 2
    quantization = result.record["quantization"]
    print(f"re-quantized with {quantization['quantizer']} {quantization['version']}: {quantization['command']}")
    print(result.bundle)
    for path in result.diff_paths:
        print(path)
    estimate, confirmed = result.record.get("estimate"), result.record.get("confirmed")
    if estimate and confirmed:  # the what-if measured this exclusion by bypassing Q/DQ: show both numbers
        print(f"what-if bypass estimate {_numbers(estimate)}; re-quantized {_numbers(confirmed)}")
    for caveat in result.record.get("caveats") or ():
        print(f"caveat: {caveat}")
    print(result.verdict)
    return 1 if args.fail_on_regression and result.regressed else 0


def _numbers(measured: dict) -> str:
    parts = [f"cosine {measured['cosine']:.4f}"] if measured.get("cosine") is not None else []
    parts += [f"top-1 {measured['top1']:.0%}"] if measured.get("top1") is not None else []
    return ", ".join(parts) or "no numbers"
