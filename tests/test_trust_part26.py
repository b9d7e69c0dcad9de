"""What the twenty-sixth sealed corpus part taught (issue 10), tested on its real bundles.

The part (nakdimon 0.2.1's Hebrew diacritizer, texts from Faker's he_IL providers, the package's own dotted text as the
decision) was scored while sealed before and after session 31's first round of rule changes (docs/CORPUS.md keeps both:
6/7, healthy controls with an error 0/3, each with a warning) and then read: these cases are tuning data now.
"""

from __future__ import annotations

import pytest

from corpus_cases import ranked

from qdqreport.analysis.layers import inner_measured


@pytest.mark.parametrize("case", ["nkd_healthy_ort_sym", "nkd_healthy_ort_percentile", "nkd_healthy_trt_nobias"])
def test_constant_tensors_use_no_range_and_call_nothing_over_wide(case):
    # Each healthy control (8-9 words of 391 dotted otherwise, as FP32 with itself at thin margins) got QR006's "6 of
    # 18 activations use less than 10% of the ranges calibration gave them": the six were the LSTMs' zero initial
    # states and the MatMuls of them, 0 in evaluation and calibration alike (ORT gives a zero range [-128, 127]).
    ctx, findings = ranked(case)
    assert not [f for f in findings if f.severity in ("error", "warning")], [(f.rule_id, f.title) for f in findings]
    from qdqreport.analysis.layers import quantizer_ranges

    ranges = quantizer_ranges(ctx)
    constants = [q for q in ranges.rows if q.get("observed_min") == q.get("observed_max") == 0.0]
    assert len(constants) == 6
    assert not set(id(q) for q in constants) & set(id(q) for q in inner_measured(ranges, frozenset(ctx.input_names)))


def test_calibration_on_another_language_is_still_named():
    # English texts (11 words changed, the healthy 8-9): activations the Hebrew evaluation drives past their ranges.
    _, findings = ranked("nkd_calib_english")
    # Session 32: the ids it never holds (71% of the evaluation's) name it first, the clipping beside.
    assert findings[0].rule_id == "QR006" and "never occur in calibration" in findings[0].title
    assert any(f.rule_id == "QR006" and "clip far more of the evaluation data" in f.title for f in findings)
