"""What the thirty-seventh sealed corpus part taught (issue 10), tested on its real bundles.

The part (adaptive-terrain-diffusion's terrain generator: noise, a noise level and a difficulty label in, a 128 x 128
heightfield out) was scored while sealed before and after session 40's rule changes (docs/CORPUS.md keeps the totals)
and read on 2026-11-28 (session 41): these cases are tuning data now. Real bundles; nothing synthetic.
"""

from __future__ import annotations

from qdqreport.analysis.coverage import coverage_gaps, inside_share
from qdqreport.analysis.preprocessing import preprocessing_difference

from corpus_cases import ranked


def _texts(finding) -> str:
    return " ".join([finding.summary, *(str(getattr(item, "text", "")) for item in finding.evidence)])


def test_a_label_held_at_one_value_in_calibration_is_a_coverage_gap():
    # Calibrated on 16 terrains of difficulty 50 alone (label 0.495) where the package serves 1..100 (0..1): a point
    # inside the evaluation range. Read as lying outside it (a zero-width range has no share inside), no gap was named
    # and a sensitive-node suspect ranked first.
    ctx, findings = ranked("ter_calib_one")
    c = ctx.calib_stats["inputs"]["difficulty"]["overall"]
    e = ctx.eval_stats["inputs"]["difficulty"]["overall"]
    assert c["min"] == c["max"] and inside_share(c, e) == 1.0
    assert [g.name for g in coverage_gaps(ctx.calib_stats, ctx.eval_stats)] == ["difficulty"]
    first = findings[0]
    assert (first.rule_id, first.subject, first.severity) == ("QR006", "coverage difficulty", "error")
    assert "at one value (0.495)" in first.title and "differ from it" in first.title
    # One value in the middle of the range is one setting of the input, not a blank set (np.zeros, silence).
    assert "one setting of this input" in _texts(first) and "blank" not in _texts(first)
    assert "end," not in _texts(first)  # no "at its low end" for a point in the middle
    # The noise level, 80 in every calibration and every evaluation sample, is no gap.
    assert "sigma" not in [g.name for g in coverage_gaps(ctx.calib_stats, ctx.eval_stats)]


def test_two_values_of_a_scalar_are_not_a_binarised_calibration():
    # Calibrated on 2 terrains: two difficulty labels are always at their minimum or maximum, and the short
    # calibration was named "binarised" (QR003, first) above the coverage gap it left.
    ctx, findings = ranked("ter_calib_few")
    calib, evaluation = ctx.calib_stats["inputs"]["difficulty"], ctx.eval_stats["inputs"]["difficulty"]
    assert ctx.calib_stats["samples"] == 2 and calib["shape"] == [1]
    assert preprocessing_difference(calib, evaluation, "difficulty") is None
    assert not [f for f in findings if f.rule_id == "QR003"]
    assert (findings[0].rule_id, findings[0].subject) == ("QR006", "coverage difficulty")
    assert any(f.rule_id == "QR006" and f.subject == "calibration size" for f in findings[:3])


def test_a_healthy_recipe_that_collapses_is_told_where_to_look_next():
    # The healthy recipe itself collapses this generator (PSNR 11 dB, 172,222 of 196,608 height samples changed;
    # every INT8 recipe of the screening did): the QR001 error is the truth, and the part's healthy controls keep it.
    # What was wrong: its only fix said to fix "the root causes ranked in this report" where none was established,
    # and QR002's only fix excluded an output Conv the default collect measured adding little itself (local cosine
    # 0.995). Both now lead to the per-layer collect.
    _, findings = ranked("ter_healthy_ort_sym")
    first = findings[0]
    assert (first.rule_id, first.severity) == ("QR001", "error")
    assert any("--per-layer" in (fix.command or "") and "no cause" in fix.action for fix in first.fixes)
    (node,) = [f for f in findings if f.rule_id == "QR002"]
    assert node.severity != "error" and "--per-layer" in node.fixes[0].command
    assert "Or re-quantize" in node.fixes[1].action and "node_conv2d_195" in node.fixes[1].command
