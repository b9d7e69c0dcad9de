"""A new user's pitch estimator (pesto-pitch 2.0.1's network exported to ONNX with the package's own export code: a CQT
frame in, a softmax over 384 pitch bins of 20 cents out), quantized with quantize_static's defaults on 512 real
frames; evaluated on 1,701 frames of real recordings. tests/data/bundles/pesto_ort_default keeps the first 300
samples' outputs. Measured by the user with the package's decode: 45 of 1,701 frames' pitch moved over 50 cents (the
best recipe tried; 12 of 1,148 voiced frames), 196 of the 244 top-1 flips to the next bin."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.analysis.decisions import ordered_bins
from qdqreport.bundle.reader import Bundle

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "pesto_ort_default"


def test_a_flip_to_the_next_bin_of_an_ordered_output_is_not_a_changed_decision() -> None:
    """Judged as 384 unordered classes, the healthy recipe read "35 of 300 top-1 decisions change: collapses". Its
    FP32 top two bins are neighbours in over 90% of frames: bins of one pitch. A flip to the next bin is now shown,
    not counted: 3 of 300 change, the outputs agree."""
    ctx = Context(Bundle(BUNDLE))
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.judgement.level == "agree"
    assert summary.judgement.headline.startswith("3 of 300 top-1 decisions change")
    assert "32 to the next bin" in summary.judgement.headline


def test_a_classifier_or_an_attention_over_atoms_is_not_ordered() -> None:
    """Unordered scores keep every flip: random logits over 1,000 classes (top two neighbours about 0.2% of the
    time), and scores whose count differs between samples (an attention over each sample's atoms)."""
    rng = np.random.default_rng(0)
    assert not ordered_bins([rng.normal(size=(1, 1000)) for _ in range(50)])
    bump = np.exp(-0.5 * ((np.arange(64) - 30) / 2.0) ** 2)
    assert ordered_bins([bump[None, :]] * 10)
    assert not ordered_bins([bump[None, :], np.exp(-0.5 * ((np.arange(40) - 20) / 2.0) ** 2)[None, :]])


def test_class_scores_carry_no_slice_note() -> None:
    """Every comparison of the softmax said "compared per slice along axis 1: scales differ 4.06×10³⁸×": bins far
    from the pitch hold ~0. Class scores are judged by their decision, never by slices, so no note is shown."""
    from qdqreport.engine import run_rules
    from qdqreport.report.model import build_report

    ctx = Context(Bundle(BUNDLE))
    model = build_report(ctx.bundle, run_rules(ctx), ctx)
    rows = [row for comparison in model.comparisons for row in comparison.outputs]
    assert rows and all(row.slice_note == "" for row in rows)


FEW = Path(__file__).resolve().parent / "data" / "bundles" / "pesto_calib_few"


def test_a_few_frames_of_one_clip_are_not_called_a_normalisation_step() -> None:
    """Calibrated on 16 frames from the start of one clip (the user measured 88 of 1,148 voiced frames' pitch moved
    over 50 cents; 512 real frames: 12). Their spread is 0.616x the evaluation's, so QR003 ranked first with "a
    normalisation step differs" and printed a rescale that, run, changed nothing (91 of 1,148). The evaluation frames
    at the calibration's mean spread as the 16 do: a slice of the same data. QR006 now ranks first and says why."""
    from qdqreport.engine import run_rules

    findings = run_rules(Context(Bundle(FEW))).findings
    causes = [f for f in findings if "deployment" not in f.tags and f.rule_id != "QR001"]
    assert "QR003" not in {f.rule_id for f in findings}
    assert causes[0].rule_id == "QR006"
    coverage = next(f for f in findings if f.subject == "coverage cqt")
    assert "spreads 0.94× as much as the evaluation samples at its level" in " ".join(
        getattr(e, "text", "") for e in coverage.evidence)


def test_a_step_rescales_the_samples_at_the_calibrations_level_too() -> None:
    """The same network calibrated on frames left without the package's rescaling (a step: 4.15x the evaluation's
    spread) stays 2.8x apart from the evaluation frames at its level, and QR003 keeps naming it."""
    from qdqreport.analysis.preprocessing import preprocessing_difference, spread_at_level

    bundle = Bundle(BUNDLE.parent / "pesto_calib_unscaled")
    calib, evaluation = (bundle.json(f"inputs/{kind}_stats.json")["inputs"]["cqt"] for kind in ("calib", "eval"))
    assert spread_at_level(calib["overall"], evaluation) is None
    assert preprocessing_difference(calib, evaluation, "cqt").kind == "spread"
    few = Bundle(FEW)
    calib, evaluation = (few.json(f"inputs/{kind}_stats.json")["inputs"]["cqt"] for kind in ("calib", "eval"))
    assert round(spread_at_level(calib["overall"], evaluation), 2) == 0.94
    assert preprocessing_difference(calib, evaluation, "cqt") is None
