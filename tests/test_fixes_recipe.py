"""ModelOpt fix commands repeat the recipe the bundle shows (fixes.modelopt_command on analysis/quantizer.modelopt_recipe),
confirm builds what a finding's printed fix says, and QR009's quantize_static alternative is one TensorRT accepts.

Real corpus bundles: det_fp16_default (ModelOpt's default FP16 float part, no log; QR011), yolo_random_calib_modelopt
(ModelOpt with --high_precision_dtype fp32 on random data, its console log showing the CPU provider alone; QR009),
cls_calib_x255 (the demo's ModelOpt run, its log in the bundle; QR003, QR001) and yolo_random_calib (quantize_static's
symmetric INT8 on random data; QR009)."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path


from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.confirm import quantizers as q
from qdqreport.confirm.fix import fix_from_finding
from qdqreport.engine import run_rules

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _findings(case: str, target: str | None = None) -> dict:
    ctx = Context(Bundle(str(CORPUS / case)), target=target)
    return {f.rule_id: f for f in run_rules(ctx).findings}


def _options(command: str) -> dict[str, list[str]]:
    """A ModelOpt command line's options (--flag=value and --flag v1 v2 alike), the console tail left out."""
    args = shlex.split(command.split("&&")[-1])
    args = args[:args.index("|")] if "|" in args else args
    options: dict[str, list[str]] = {}
    current = None
    for arg in args[args.index("modelopt.onnx.quantization") + 1:]:
        if arg.startswith("--"):
            flag, eq, value = arg.partition("=")
            options[flag] = [value] if eq else []
            current = None if eq else flag
        elif current:
            options[current].append(arg)
    return options


def test_confirm_of_qr011_builds_its_printed_fp32_float_part() -> None:
    """QR011's fix is --high_precision_dtype fp32 (and, second, --op_types_to_exclude_fp16): confirm's ModelOpt call
    carries what the printed command says, not the recovered FP16 default again."""
    finding = _findings("det_fp16_default")["QR011"]
    ctx = Context(Bundle(str(CORPUS / "det_fp16_default")))
    recovered = q.modelopt_options(ctx.modelopt_log, ctx.precision)
    assert recovered["high_precision_dtype"] is None  # the model's float part is FP16: nothing to repeat
    spec = fix_from_finding(finding, None, "modelopt")
    args = q.modelopt_args("det_fp32.onnx", "out.onnx", "calib.npy", "out.log", recovered, [], spec.op_types,
                           spec.calibration_method, spec.high_precision_dtype, spec.fp32_op_types)
    printed = _options(finding.fixes[0].command)
    built = _options(shlex.join(args))
    assert printed["--high_precision_dtype"] == built["--high_precision_dtype"] == ["fp32"]
    # Every option the printed fix sets is in the call (paths and where it writes aside).
    for flag, values in printed.items():
        if flag not in ("--onnx_path", "--calibration_data_path", "--output_path"):
            assert built.get(flag) == values, flag
    second = fix_from_finding(dataclasses.replace(finding, fixes=finding.fixes[1:]), None, "modelopt")
    assert second.fp32_op_types and second.high_precision_dtype is None
    args = q.modelopt_args("m.onnx", "o.onnx", None, "o.log", recovered, [], (), None, None, second.fp32_op_types)
    assert _options(shlex.join(args))["--op_types_to_exclude_fp16"] == list(second.fp32_op_types)
