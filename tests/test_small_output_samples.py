"""A sample of an output with fewer than 8 values is judged by its decisions, never by its numbers (issue 10: no
false alarms). Real bundle (tests/data/bundles/README.md, `anime_or_not_random_calib`): a ResNet18 anime / not-anime
classifier's 2 logits, calibrated on random noise. No decision of the package's own decode changed, yet QR006's
"1 of 48 samples collapse under quantization" was ranked first: one near tie's logits (-0.095, -0.063) ->
(-0.28, 0.12) read "cosine 0.54". The random calibration (QR009) is the finding to lead with."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).parent / "data" / "bundles" / "anime_or_not_random_calib"


def test_two_logits_near_a_tie_are_no_collapsed_sample():
    ctx = Context(Bundle(BUNDLE), target="onnxruntime")
    comparison = ctx.comparison("quantization")
    (logits,) = ctx.output_summaries(comparison.id)
    assert not logits.judgement.cosine_meaningful  # 2 values a sample: no cosine means anything
    findings = run_rules(ctx).findings
    assert not [f for f in findings if f.rule_id == "QR006" and "samples collapse" in f.title]
    assert findings[0].rule_id == "QR009"
