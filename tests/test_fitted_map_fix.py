"""QR003's fitted map is printed as a fix only where it carries the calibration's range onto the evaluation's
(analysis/preprocessing.FITTED_FIX_MISS); elsewhere the finding names the step in words, with the range the map
would have given."""

from __future__ import annotations

import json
from pathlib import Path

from qdqreport.analysis.preprocessing import FITTED_FIX_MISS, fitted_miss, preprocessing_difference

ROOT = Path(__file__).resolve().parents[1]
WHISPER = ROOT / "tests" / "data" / "modelopt" / "smart_turn_rawlog_input_stats.json"


def _stats(bundle: Path, name: str) -> tuple[dict, dict]:
    read = [json.loads((bundle / "inputs" / f"{kind}_stats.json").read_text())["inputs"][name]
            for kind in ("calib", "eval")]
    return read[0], read[1]


def test_a_step_no_affine_map_undoes_is_named_in_words_with_the_range_the_map_would_give():
    # A new user's Whisper features calibrated without the clamp and rescale: the printed map, run, made it worse.
    stats = json.loads(WHISPER.read_text())
    found = preprocessing_difference(stats["calibration"], stats["evaluation"], "input_features")
    assert found is not None and found.kind == "spread" and "spread 12.1" in found.label
    assert found.expr == "x"  # no command rewrites the calibration file with the fitted map
    assert "evaluation pipeline's own preprocessing" in found.advice
    assert "[-0.0303, 1.2] against the evaluation's [-0.221, 2.19]" in found.advice


def test_a_mix_up_the_map_carries_keeps_its_printed_map():
    # The corpus's age classifier calibrated on raw pixels where the pipeline normalises: the map lands within 0.16.
    calib, evaluation = _stats(ROOT / "corpus" / "age_calib_raw", "images")
    found = preprocessing_difference(calib, evaluation, "images")
    assert found is not None and found.kind == "spread" and found.expr != "x" and not found.advice
    c, e = calib["overall"], evaluation["overall"]
    ratio = found.factor
    assert fitted_miss(c, e, ratio, c["mean"] - e["mean"] * ratio) <= FITTED_FIX_MISS
