"""Misses of the thirty-fifth sealed part (chython-rxnmap's atom mapper), read in session 39 (issue 10).

- The over-quantized mapper (every op in INT8, the attention mask's -inf inside a Q/DQ pair) kept every row argmax of
  its head-averaged attention while the values went: cosine -0.56, relative error 11.4, and the package's own mapping,
  which reads the values, mapped none of 293 product atoms. The report said "Outputs agree" because top-1 decisions
  judged the output alone.
"""

from __future__ import annotations

from qdqreport.analysis import agreement
from tests.corpus_cases import ranked


def _attention(case: str):
    ctx, findings = ranked(case)
    comparison = next(c for c in ctx.comparisons if c.purpose == "quantization")
    summary = next(s for s in ctx.output_summaries(comparison.id) if s.output == "rxm_attention")
    return summary, findings


def test_decisions_kept_with_the_values_lost_collapse_and_the_over_quantization_ranks_first():
    summary, findings = _attention("rxm_overquant")
    assert summary.kind.kind == "class_scores"  # judged by row argmaxes, which all hold
    assert summary.judgement.level == agreement.COLLAPSE
    assert summary.judgement.measure == "relative error" and summary.judgement.value > 10
    root = [f for f in findings if "deployment" not in f.tags]
    assert root[0].rule_id == "QR002" and root[0].severity == "error"


def test_healthy_mapper_still_judged_by_its_decisions():
    for case in ("rxm_healthy_ort_sym", "rxm_healthy_ort_percentile", "rxm_healthy_trt_nobias"):
        summary, findings = _attention(case)
        assert summary.judgement.measure == "top-1 agreement" and summary.judgement.level == agreement.AGREE
        assert summary.rel_l2_median < 0.2
        assert not [f for f in findings if f.severity == "error"]
