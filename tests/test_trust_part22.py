"""What the twenty-second sealed corpus part taught (issue 10), tested on its real bundles.

The part (brainmaze-eeg-models 0.1.0's OpenSpindleNet scalp-EEG sleep-spindle detector, synthetic sleep EEG, the
package's own decode) was scored while sealed before and after session 30's first round of rule changes (docs/CORPUS.md
keeps both: 7/8 both times) and then read: these cases are tuning data now.
"""

from __future__ import annotations

import pytest

from corpus_cases import ranked
from qdqreport.analysis.layers import far_uncovered_quantizers, quantizer_ranges


def test_rare_content_the_calibration_lacked_is_named_by_how_far_it_clips():
    # Calibrated on windows without spindles: 43 of 52 inner Q nodes got evaluation values 0.7-1.5 spans past their
    # ranges, each on under 1% of its values (a spindle fills ~1% of a window); no finding but QR004's info before.
    ctx, findings = ranked("osn_calib_no_spindles")
    assert findings[0].rule_id == "QR006" and "far past the ranges" in findings[0].title
    assert len(far_uncovered_quantizers(quantizer_ranges(ctx), frozenset(ctx.input_names))) >= 40


@pytest.mark.parametrize("case", ["osn_healthy_ort_sym", "osn_healthy_ort_percentile", "osn_healthy_trt_nobias",
                                  "osn_detection_head_int8"])
def test_the_healthy_recipe_has_no_far_clipping(case):
    ctx, findings = ranked(case)
    assert not far_uncovered_quantizers(quantizer_ranges(ctx), frozenset(ctx.input_names))
    assert not [f for f in findings if f.rule_id == "QR006"]


def test_pure_tones_calibrating_a_key_cnn_are_named_too():
    # madmom's key CNN calibrated on pure tones (the eighteenth part): no finding before, QR006 first now.
    _, findings = ranked("mkey_calib_tones")
    assert findings[0].rule_id == "QR006"
