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

import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.confirm import quantizers as q
from qdqreport.confirm.fix import fix_from_finding
from qdqreport.engine import run_rules
from qdqreport.fixes import Change, modelopt_command

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


def test_modelopt_commands_carry_the_bundles_recipe() -> None:
    """An FP32 float part and a calibration on the CPU provider alone are repeated by every ModelOpt command of the
    report (QR009's and QR002's here); nodes kept out of INT8 then stay in FP32, as the action says."""
    findings = _findings("yolo_random_calib_modelopt")
    commands = [fix.command for f in findings.values() for fix in f.fixes
                if fix.command and "modelopt.onnx.quantization" in fix.command]
    assert len(commands) >= 2
    for command in commands:
        options = _options(command)
        assert options["--high_precision_dtype"] == ["fp32"] and options["--calibration_eps"] == ["cpu"], command
    assert "in FP32" in findings["QR002"].fixes[0].action
    # ModelOpt's default FP16 float part and no log: nothing added.
    for f in _findings("det_fp16_default").values():
        for fix in f.fixes:
            if fix.command and "modelopt.onnx.quantization" in fix.command and "fp32" not in fix.action.lower():
                assert "--high_precision_dtype" not in _options(fix.command), fix.command
                assert "--calibration_eps" not in _options(fix.command)


def test_the_logged_calibration_method_and_a_confirms_exclusions_are_repeated() -> None:
    from qdqreport.analysis.quantizer import modelopt_recipe

    ctx = Context(Bundle(str(CORPUS / "cls_calib_x255")))
    ctx.__dict__["modelopt_log"] = {**ctx.modelopt_log, "calibration_method": "max"}  # as ModelOpt logs --calibration_method=max
    assert _options(modelopt_command(ctx))["--calibration_method"] == ["max"]
    assert _options(modelopt_command(ctx, Change(calibration_method="entropy")))["--calibration_method"] == ["entropy"]
    # A model `qdqreport confirm` made: its manifest's record holds the exclusions and --calibration_eps it ran with.
    record = {"quantizer": "modelopt", "command": "python -m modelopt.onnx.quantization --onnx_path=m.onnx "
              "--calibration_eps=cpu --nodes_to_exclude 'Conv@1$' --output_path=o.onnx", "excluded_nodes": ["Conv@1"],
              "fix": {"op_types_to_exclude": ["MatMul"], "calibration_method": "max"}}
    recipe = modelopt_recipe({"float_dtype": "fp32"}, None, {"quantization": record})
    assert (recipe.exclude_nodes, recipe.exclude_op_types, recipe.calibration_eps) == (("Conv@1",), ("MatMul",), ("cpu",))
    assert (recipe.high_precision_dtype, recipe.calibration_method) == ("fp32", "max")


def test_recollect_reads_the_new_quantizations_log() -> None:
    """QR001's collect command names the log the report's ModelOpt commands write, not the old model's."""
    findings = _findings("cls_calib_x255")
    requantize = next(fix.command for fix in findings["QR003"].fixes if "modelopt.onnx.quantization" in fix.command)
    assert requantize.endswith("2>&1 | tee cls_fp32.quant.log")
    argv = shlex.split(findings["QR001"].fixes[0].command)
    assert argv[argv.index("--modelopt-log") + 1] == "cls_fp32.quant.log"
    assert argv[argv.index("--qdq") + 1] == "cls_fp32.quant.onnx"


def _quantize_static_kwargs(command: str) -> str:
    return shlex.split(command)[2].split("quantize_static(", 2)[-1]


@pytest.mark.parametrize("case", ["yolo_random_calib", "yolo_random_calib_modelopt"])
def test_random_calibration_alternative_for_tensorrt(case: str) -> None:
    """Target TensorRT: quantize_static's defaults (UINT8, non-zero zero points, INT32 biases) are what TensorRT rejects;
    the alternative is symmetric signed INT8 with float biases, or left out when ModelOpt made the model."""
    fixes = _findings(case)["QR009"].fixes
    alternatives = [fix.command for fix in fixes if "quantize_static(" in (fix.command or "")]
    if case.endswith("modelopt"):
        assert len(fixes) == 1 and not alternatives
        onnxruntime = _findings(case, target="onnxruntime")["QR009"].fixes
        assert len(onnxruntime) == 2 and "quantize_static(" in onnxruntime[1].command  # ORT's own recipe is fine there
        return
    kwargs = _quantize_static_kwargs(fixes[-1].command)
    assert "activation_type=QuantType.QInt8" in kwargs and "weight_type=QuantType.QInt8" in kwargs
    assert "'ActivationSymmetric': True" in kwargs and "'WeightSymmetric': True" in kwargs
    assert "'QuantizeBias': False" in kwargs and "real_calib.npz" in fixes[-1].command


@pytest.mark.parametrize("case, calib, fixed", [
    ("cls_calib_x255", "build/corpus-work/cls_calib_x255.npy", "calib_fixed.npy"),  # QR003's rescaled file
    ("yolo_random_calib", "build/corpus-work/yolo_calib_random.npz", "real_calib.npz"),  # QR009's real samples
])
def test_the_recollect_reads_the_corrected_calibration(case, calib, fixed):
    """QR001's collect-again command after the ranked fixes: the re-quantization read the corrected calibration, so
    the new bundle is collected with it (a new user's re-collect with the old file named the old fault again)."""
    from qdqreport.fixes import recollect_command

    words = shlex.split(recollect_command(Context(Bundle(CORPUS / case))))
    assert words[words.index("--calib") + 1] == fixed and calib not in words


def test_a_healthy_bundle_is_collected_again_with_its_own_calibration():
    from qdqreport.fixes import recollect_command

    words = shlex.split(recollect_command(Context(Bundle(CORPUS / "cls_healthy_entropy"))))
    assert words[words.index("--calib") + 1] == "build/corpus-work/cls_calib.npy"
