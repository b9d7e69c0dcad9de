"""Integer outputs (tag ids, CTC indices) are labels: judged by exact matches, never shown with cosine, SQNR or a
slice's cosine (a new user's character tagger: "cosine 0.85", "SQNR 4.8 dB" and "worst slice 88: cosine 0.45" of POS
ids beside "1,289 of 16,384 values differ")."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.pipeline import render_report
from qdqreport.report.model import build_report
from qdqreport.rules import discover

CASE = Path(__file__).resolve().parents[1] / "corpus" / "rec_calib_rotated"  # PP-OCRv4's CTC recogniser


def test_index_outputs_show_exact_matches_and_no_float_metrics(tmp_path):
    ctx = Context(Bundle(CASE))
    comparison = ctx.comparison("quantization")
    (index,) = [s for s in ctx.output_summaries(comparison.id) if s.kind.kind == "index"]
    assert index.judgement.measure == "exact matches" and not index.judgement.cosine_meaningful
    assert index.worst_slice is None
    model = build_report(ctx.bundle, run_rules(ctx, discover()), ctx)
    (row,) = [r for v in model.comparisons if v.id == comparison.id for r in v.outputs if r.output == index.output]
    assert not row.errors_meaningful and not row.sample_cosines and not row.slice_note
    render_report(CASE, tmp_path)
    lines = [l for l in (tmp_path / "report.md").read_text().splitlines() if l.startswith("| ctc\\_index | index")]
    assert lines and all(l.count("| — ") >= 4 for l in lines)  # cosine min, SQNR, max |Δ|, relative L2


TAGGER = Path(__file__).resolve().parent / "data" / "bundles" / "sudachi_tagger_allops"


def test_padding_both_stages_leave_at_zero_is_not_compared():
    # Every op of an ALBERT tagger in INT8: 0 of 64 sentences tagged as FP32 tags them. Over all 16,384 positions,
    # padding included, "1,289 of 16,384 values differ" read as 92% exact matches, a mere degradation, while the
    # verdict (from the decode) said collapses. Over the 3,555 positions either stage fills: 64% kept, a collapse.
    ctx = Context(Bundle(TAGGER), target="onnxruntime")
    comparison = ctx.comparison("quantization")
    (tags,) = [s for s in ctx.output_summaries(comparison.id) if s.output == "403"]
    assert tags.judgement.headline == "1,289 of 3,555 values differ" and tags.judgement.level == "collapse"
    assert "12,829 trailing padding position(s), 0 in both stages, not compared" in tags.judgement.detail
    symptom = next(f for f in run_rules(ctx, discover()).findings if f.rule_id == "QR001")
    assert symptom.title == "Quantization collapses the outputs" and "1,289 of 3,555" in symptom.summary
