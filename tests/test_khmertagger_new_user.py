"""A new user's Khmer word segmenter and part-of-speech tagger (khmertagger 0.1.1, MIT: an embedding, a decomposed
LayerNorm, BiLSTMs kept float, a per-character tag head), quantized with quantize_static's defaults on dummy all-padding
input (np.zeros of token ids), collected without --calib on 250 sentences of the package's validation split with the
package's own decode. Measured by the user: 130 of 250 sentences' words or tags change (word+tag F1 0.8955 -> 0.7366);
re-calibrated on real text, 11. tests/data/bundles/khmertagger_zeros_calib keeps the first 32 samples' outputs."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import underused
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.fixes import calibration_extend
from qdqreport.rules import discover

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "khmertagger_zeros_calib"


def test_ranges_every_value_passes_are_named_too_narrow_and_first() -> None:
    """The LayerNorm variances' ranges, [0, 6.5e-5] for values in [0.77, 1.15], clip every value. The report named them
    "4 of 14 activations use less than 10% of the ranges calibration gave them: the calibration data drove them far
    beyond the evaluation's values", the opposite fault. Now: most values pass them, confirmed by the calibration
    check (cosine 0.915 -> 1 with the evaluation's own ranges), an error for decisions that collapse."""
    ctx = Context(Bundle(BUNDLE))
    findings = run_rules(ctx, discover()).findings
    causes = [f for f in findings if "deployment" not in f.tags and f.rule_id != "QR001"]
    first = causes[0]
    assert first.rule_id == "QR006" and first.severity == "error"
    assert first.title == ("4 of 14 activations clip most of their evaluation values: the calibration data never "
                           "reached values like these")
    assert not any("use less than" in f.title for f in findings)
    texts = " ".join(getattr(e, "text", "") for e in first.evidence)
    assert "Confirmed by measurement" in texts
    rows = ctx.bundle.json("quant/activation_ranges.json")["quantizers"]
    missed = [r for r in rows if r.get("clipped_share") == 1.0]
    assert len(missed) == 4 and not any(underused(r) for r in missed)


def test_a_calibration_fix_keeps_the_token_ids_integers() -> None:
    """The printed extension of the calibration file cast it to float32; quantize_static then refused the file
    ("Actual: (tensor(float)), expected: (tensor(int64))"). The cast now follows the input's recorded type."""
    command, written = calibration_extend(Context(Bundle(BUNDLE)))
    assert written == "calib_fixed.npy"
    assert command.endswith(".astype(np.int64))\"") and "float32" not in command


def test_a_tensor_pushed_to_its_ranges_end_is_where_the_error_is_born() -> None:
    """With --calib and --per-layer (tests/data/bundles/khmertagger_zeros_calib_per_layer, the first 8 samples'
    outputs kept): the LayerNorm's variance plus epsilon, every value clipped to the range, reads cosine 0.997 at SQNR
    0.0 dB, fed FP32 inputs. Judged by cosine alone, QR201 named /lstm_norm/Add (4.7 dB) and QR200 /embed_norm/Mul;
    excluding /lstm_norm/Add changed nothing (127 of 250 sentences against 130)."""
    findings = run_rules(Context(Bundle(BUNDLE.with_name("khmertagger_zeros_calib_per_layer"))), discover()).findings
    by_rule = {f.rule_id: f for f in findings}
    assert by_rule["QR201"].title == "Error is born at /embed_norm/Add (Add)"
    assert "which cosine does not see" in by_rule["QR201"].summary
    assert by_rule["QR200"].title == "QDQ first diverges from FP32 at /embed_norm/Add (Add)"


def test_a_model_without_convolutions_is_not_told_to_fold_a_batchnorm() -> None:
    """QR013's fix for the tagger's crushed LayerNorm and embedding constants said "or fold the BatchNorm into the
    convolution before quantizing (..., as a new user's text detector needed)": no BatchNorm, no convolution here."""
    findings = run_rules(Context(Bundle(BUNDLE)), discover()).findings
    (crushed,) = [f for f in findings if f.rule_id == "QR013"]
    actions = " ".join(fix.action for fix in crushed.fixes)
    assert "float (elementwise constants have no per-channel form here)" in actions
    assert "BatchNorm" not in actions and "new user" not in actions


def test_the_task_table_scores_the_quantized_model_on_the_controls_samples_too() -> None:
    """The checks' controls run on the first 32 of 250 sentences: beside the quantized model's 250-sample row their
    rows read as better or worse than it by sample choice alone (a face detector's unfused control looked worse than
    the fused model; on the same 32 both changed 19 images). The table now says what the quantized model scores on
    those 32, from its own per-sample rows."""
    from qdqreport.report.task import build_task

    ctx = Context(Bundle(BUNDLE))
    view = build_task(ctx)
    (same,) = view.same_samples
    rows = [r for r in ctx.task_rows("ort_qdq__vs__ort_fp32") if r.sample < 32]
    assert same["samples"] == 32 and same["of"] == 250 and same["candidate"] == "ort_qdq"
    assert same["disagreeing"] == sum(r.agreement < 1 for r in rows)
    assert abs(same["agreement"] - sum(r.agreement for r in rows) / 32) < 1e-9
