"""A new user's EEG independent-component classifier (mne-icalabel 0.10.0's ICLabelNet.onnx: three small CNN branches
over a component's scalp map, power spectrum and autocorrelation, 7 classes), samples of 4 rows (the graph averages
them), quantized with quantize_static in a TensorRT style (symmetric INT8, per-channel) on 154 components of EEGLAB's
sample recordings; evaluated on 185 others. tests/data/bundles/iclabel_trt_style is its bundle, stored outputs left
out. Measured by the user on an AVX2 CPU without VNNI: 14 of 185 labels changed fused, 7 unfused."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules import discover

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "iclabel_trt_style"


def test_a_first_step_that_would_rebuild_the_same_model_prints_no_command() -> None:
    """QR001's first step named /ReduceMean, whose INT8 input no node quantize_static can exclude by name frees: the
    printed command was the recipe unchanged, and run as printed it re-made the same model (14 -> 14 labels). Now it
    says so and prints none."""
    findings = run_rules(Context(Bundle(BUNDLE)), discover()).findings
    divergence = next(f for f in findings if f.rule_id == "QR001")
    (fix,) = divergence.fixes
    assert fix.command == ""
    assert "no command, for none would differ from the recipe that made the model" in fix.action
    assert "/ReduceMean (ReduceMean)" in fix.action and "keeps them float" not in fix.action


def test_an_exclusion_measured_on_saturating_kernels_ranks_under_them_for_tensorrt() -> None:
    """With --per-layer the what-if found that excluding one LeakyRelu restores the labels, and QR203 led the report
    ("measured: excluding 1 node restores the outputs"), with QR002's guess second: its trials ran on ONNX Runtime's
    S8S8 kernels, which saturate on this CPU, and the unfused model already agrees. For TensorRT both rank under
    QR012, which leads as this runtime's loss; for ONNX Runtime QR012 leads and the exclusion stays a measured fix."""
    from qdqreport.report.model import build_report

    for target, first, headline in (("tensorrt", "QR012", "measured cause, on this runtime only: ONNX Runtime's S8S8"),
                                    ("onnxruntime", "QR012", "most likely cause: ONNX Runtime's S8S8")):
        ctx = Context(Bundle(BUNDLE.with_name("iclabel_trt_style_per_layer")), target=target)
        result = run_rules(ctx, discover())
        causes = [f for f in result.findings if "deployment" not in f.tags and f.rule_id != "QR001"]
        assert causes[0].rule_id == first, target
        exclusion = next(f for f in causes if f.rule_id == "QR203")
        on_kernels = any(getattr(e, "text", "").startswith("Measured on ONNX Runtime's integer kernels")
                         for e in exclusion.evidence)
        assert on_kernels == (target == "tensorrt")
        assert headline in build_report(ctx.bundle, result, ctx).verdict.text


def test_a_coverage_gap_the_input_quantizer_covers_does_not_claim_the_input_clips() -> None:
    """Calibrated on uniform noise in [0, 1], the autocorrelation input reaches [-0.52, 1.02] in evaluation: a coverage
    gap (QR006). The model's symmetric input quantizer spans [-1.01, 1.00] and clips 0.16% of those values; the finding
    said "the ranges of the missing part clip" as if the input did. It now says what the input quantizer measured."""
    findings = run_rules(Context(Bundle(BUNDLE.with_name("iclabel_random_calib"))), discover()).findings
    gap = next(f for f in findings if f.rule_id == "QR006" and f.subject == "coverage autocorr")
    assert "the model's own input quantizer covers the evaluation values (its range [-1.01, 1] clips 0.16% of them)" \
        in gap.summary
    assert "so the ranges of the missing part clip" not in gap.summary


def test_the_reduce_range_fix_keeps_the_recipes_activation_scheme() -> None:
    """quantize_static's defaults with per-channel weights: asymmetric INT8 activations, 19 of 185 labels changed fused
    on this CPU, 9 unfused. QR012's 7-bit-weight fix also switched the activations to symmetric without a word (the
    user measured 7 with it, but could not tell which change did it); it now changes the weights' range alone."""
    findings = run_rules(Context(Bundle(BUNDLE.with_name("iclabel_ort_perchannel"))), discover()).findings
    saturation = next(f for f in findings if f.rule_id == "QR012")
    command = saturation.fixes[0].command
    assert "reduce_range=True" in command and "'ActivationSymmetric': False" in command
