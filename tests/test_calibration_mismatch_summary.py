"""QR003's summary says every calibrated range inherits the mismatch only where the outputs were measured to diverge;
where they agree it claims neither harm nor that the model absorbed it (a new user's wake-word embedder calibrated on
int16 PCM changed 0 of 56 decisions; the corpus's malware classifier calibrated on 0-255 bytes agreed by its outputs
while every verdict moved)."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.rules.calibration_input_mismatch import calibration_input_mismatch

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _summary(case: str) -> str:
    return next(iter(calibration_input_mismatch(Context(Bundle(CORPUS / case))))).summary


def test_outputs_that_agree_get_no_claim_that_every_range_inherits_the_mismatch():
    summary = _summary("ori_calib_unit")  # orientation classifier, [0, 1] calibration: 24 of 24 as FP32
    assert "inherits" not in summary and "the outputs compared here agree" in summary and "--postprocess" in summary


def test_outputs_that_diverge_keep_it():
    assert _summary("cls_calib_x255").endswith("every calibrated range inherits the mismatch")
