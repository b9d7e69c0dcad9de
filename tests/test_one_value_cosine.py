"""The cosine of an output of fewer than 8 values a sample is never evidence (agreement.Judgement.cosine_meaningful):
a new user's ModelOpt turn detector (one logit a clip; tests/data/bundles/smart_turn_modelopt_per_layer) read
"cosine 1.0000 -> 1.0000" beside 7 of 19 decisions flipping in the what-if, "1" in every trial's cosine cell, and
"cosine 1.0000" in the FP16 check's table, where 30 of 128 decisions flip."""

from __future__ import annotations

from pathlib import Path

from qdqreport.pipeline import render_report

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "smart_turn_modelopt_per_layer"


def test_what_if_and_fp16_check_quote_decisions_not_the_cosine_of_one_logit(tmp_path):
    render_report(BUNDLE, tmp_path)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "1.0000" not in md.replace("int8 | 1.0000", "")  # weight cosines (thousands of values) stay
    assert "decisions flip at 0.5" in md and "0 of 19 decisions flip" in md
    trials = md[md.index("| # | kind | excluded | cosine |"):]
    assert "| 0 | baseline | 0 node(s) | — |" in trials
    fp16 = md[md.index("### FP16 check"):md.index("### Precision")]
    assert "cosine" not in fp16.split("|---|")[-1]
