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
