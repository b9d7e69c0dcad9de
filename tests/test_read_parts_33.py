"""Misses of the sealed parts already read, fixed in session 33 on their real bundles (issue 10).

- The twenty-seventh part's morpheme segmenter calibrated on whole texts, one row a text, where the package feeds one
  word a row: the calibration holds the space (id 47, 10.9% of its values) and the UNK of punctuation (id 1, 5.6%),
  which the evaluation never holds; 34 of 629 words segmented otherwise (the healthy controls 17-22). The ids test
  saw it and then refused it, because the padding's share differed too (11% against 54%): how much of a row is
  padding follows the rows' length, not what the ids say.
- The twenty-eighth part's table-structure model calibrated on photographs was told "calibration inverted (light and
  dark swapped)": a harmless fault, but a wrong step named.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.preprocessing import preprocessing_difference
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import rank_findings

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _context(case: str) -> Context:
    if not (CORPUS / case).is_dir():
        pytest.skip(f"corpus case {case} not present")
    return Context(Bundle(CORPUS / case))


def test_ids_kept_that_the_evaluation_removes_are_named_whatever_the_padding_share():
    ctx = _context("slz_calib_text")
    found = preprocessing_difference(ctx.calib_stats["inputs"]["input_layer"],
                                     ctx.eval_stats["inputs"]["input_layer"], "input_layer")
    assert found is not None and found.kind == "ids"
    assert found.label.startswith("id 47: 10.9% of the calibration values, none of the evaluation's")
    first = rank_findings(run_rules(ctx).findings)[0]
    assert (first.rule_id, first.severity) == ("QR003", "warning")


@pytest.mark.parametrize("case", ["slz_healthy_ort_sym", "slz_healthy_ort_percentile", "slz_calib_english",
                                  "nkd_healthy_ort_sym"])
def test_setting_the_padding_aside_names_no_step_where_the_sets_are_alike_or_another_language(case):
    # Healthy controls hold the evaluation's ids; English texts for a Russian model differ in every letter (QR006's).
    ctx = _context(case)
    name = next(iter(ctx.eval_stats["inputs"]))
    found = preprocessing_difference(ctx.calib_stats["inputs"][name], ctx.eval_stats["inputs"][name], name)
    assert found is None or found.kind != "ids"


def test_photos_for_tables_are_no_inversion_and_inverted_sets_still_are():
    # The twenty-eighth part's SLANet calibrated on photographs: both sets reach the normalised format's black and
    # white, so their extremes mirror whatever they hold, and the mean alone read "calibration inverted". A mirror
    # keeps the spread; the photographs' std is 1.16x the tables'.
    ctx = _context("tsr_calib_photos")
    found = preprocessing_difference(ctx.calib_stats["inputs"]["x"], ctx.eval_stats["inputs"]["x"], "x")
    assert found is None or found.kind != "inverted"
    for case, name in (("cap_calib_inverted", "input1"), ("lea_calib_inverted", "input")):
        ctx = _context(case)
        found = preprocessing_difference(ctx.calib_stats["inputs"][name], ctx.eval_stats["inputs"][name], name)
        assert found is not None and found.kind == "inverted"
