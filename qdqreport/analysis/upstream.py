"""Is the calibration data itself unlike the evaluation data? One answer for every finding that sits downstream of
the calibrated ranges (issue 10, item 4: measured evidence outranks heuristics).

The bundle proves it five ways: the calibration inputs are random noise (analysis/calibration_data.py, QR009, or the
quantizer's log says so), a preprocessing step tells them apart (analysis/preprocessing.py, QR003), their value
range misses a quarter of the evaluation span on a quarter of the samples (analysis/coverage.py, QR006), with or
without the calibration file the model's own input quantizer clips a tenth of the evaluation values or is barely
used by them (analysis/input_range.py, QR003), or they hold other content: a mean more than one evaluation std from
the evaluation mean with the same spread and levels (analysis/preprocessing.content_differs, QR006; the thirty-first
part's VAD calibrated on clean speech, its silences at the log-mel floor, evaluated on noisy clips: 1.4 stds apart,
5 of 96 clips cut otherwise against the healthy recipe's 2, and QR002 ranked first on tensor cosines every range
inherited; no read corpus case ranks otherwise with it). Every range
is then set on the wrong data: a sensitive node's error (QR002) and the integer kernels' saturation (QR012, whose
magnitudes the ranges decide) are what that predicts, and rank under the calibration finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdqreport.analysis.calibration_data import log_says_random, noise_inputs
from qdqreport.analysis.coverage import coverage_gaps
from qdqreport.analysis.input_range import describe, gross_range_misses
from qdqreport.analysis.preprocessing import content_differs, mismatched_inputs

if TYPE_CHECKING:
    from qdqreport.analysis.context import Context


def calibrated_on_noise(ctx: "Context") -> bool:
    """The calibration inputs are random noise (their statistics, analysis/calibration_data.py), or the quantizer's
    log says it calibrated on random data."""
    return bool(noise_inputs(ctx.calib_stats, ctx.eval_stats) or log_says_random(ctx.modelopt_log))


def calibration_upstream(ctx: "Context") -> str:
    """What makes the calibration inputs unlike the evaluation inputs, in a few words ("" when nothing does)."""
    if calibrated_on_noise(ctx):
        return "calibrated on random noise"
    named = mismatched_inputs(ctx.calib_stats, ctx.eval_stats)
    if named:
        return f"input {named[0]} is preprocessed differently"
    gaps = coverage_gaps(ctx.calib_stats, ctx.eval_stats)
    if gaps:
        return (f"the calibration misses {gaps[0].uncovered:.0%} of the evaluation range of input {gaps[0].name} "
                f"({len(gaps[0].beyond)} of {gaps[0].samples} samples go beyond it)")
    misses = gross_range_misses(ctx.range_use)
    if misses:
        return describe(misses[0])
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    for name in sorted(set(calib) & set(evaluation)):
        shift = content_differs(calib[name], evaluation[name], name)
        if shift is not None:
            return f"input {name}'s calibration mean lies {shift:.2g} evaluation stds from the evaluation mean"
    return ""
