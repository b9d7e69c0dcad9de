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

from qdqreport.analysis.calibration_check import calibration_check
from qdqreport.analysis.calibration_data import log_says_random, noise_inputs
from qdqreport.analysis.coverage import coverage_gaps
from qdqreport.analysis.input_range import describe, gross_range_misses
from qdqreport.analysis.preprocessing import calibration_samples, content_differs, mismatched_inputs

if TYPE_CHECKING:
    from qdqreport.analysis.context import Context


def calibrated_on_noise(ctx: "Context") -> bool:
    """The calibration inputs are random noise (their statistics, analysis/calibration_data.py), or the quantizer's
    log says it calibrated on random data."""
    return bool(noise_inputs(ctx.calib_stats, ctx.eval_stats) or log_says_random(ctx.modelopt_log))


def calibration_upstream(ctx: "Context") -> str:
    """What makes the calibration inputs unlike the evaluation inputs, in a few words ("" when nothing does, or when
    the calibration check measured that even the evaluation's own ranges leave the outputs as damaged,
    analysis/calibration_check.py: the calibration, however unlike the evaluation data, is then upstream of nothing
    the findings explain): read once a bundle (Context.calibration_upstream_words) by every rule that asks (QR002,
    QR006, QR012, the layer findings' re-ranking). The task level reads the data's words alone (Context._task_level:
    the check itself reads the judged outputs)."""
    words = ctx.calibration_upstream_words
    if words:
        verdict = calibration_check(ctx)
        if verdict is not None and not verdict.restores:
            return ""
    return words


def describe_calibration_upstream(ctx: "Context") -> str:
    """calibration_upstream's reading of the calibration and evaluation data, uncached."""
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
        shift = content_differs(calib[name], evaluation[name], name, calibration_samples(ctx.calib_stats))
        if shift is not None:
            return f"input {name}'s calibration mean lies {shift:.2g} evaluation stds from the evaluation mean"
    wide = far_too_wide(ctx.activation_ranges)
    if len(wide) >= FAR_TOO_WIDE_NODES:
        return (f"{len(wide)} activations use under {FAR_TOO_WIDE:.1%} of the ranges calibration gave them (the "
                f"least, {wide[0]['tensor']}, {wide[0]['range_used']:.2g}): the calibration data drove them a "
                "thousand times past the evaluation's values")
    return ""


# Activation ranges a thousand times wider than the evaluation values in them (range used under 0.1%, not 0: a tensor
# the evaluation leaves at 0 uses none of any range) on three Q nodes or more: no read healthy control has one (their
# least used range: 0.12, or exactly 0), and the calibration faults that show it are the data's (a new user's MiniMol
# calibrated on molecules with one outlier, Laplacian eigenvector entries to 5716: 10 of 161 activations under 0.1%,
# "54 sensitive nodes quantized" ranked first, their exclusion measured still broken). Two such nodes is an
# over-quantized network's own (a Basic Pitch with every op in INT8).
FAR_TOO_WIDE = 0.001
FAR_TOO_WIDE_NODES = 3


def far_too_wide_use(used: float) -> bool:
    """Whether a quantizer's range use (the share its evaluation values span) is FAR_TOO_WIDE's: under it, not 0."""
    return 0 < used < FAR_TOO_WIDE


def far_too_wide(ranges: dict | None) -> list[dict]:
    """The activation quantizers (quant/activation_ranges.json) whose range use is far_too_wide_use's, least used
    first."""
    rows = [q for q in (ranges or {}).get("quantizers") or [] if isinstance(q, dict) and q.get("kind") == "activation"
            and isinstance(q.get("range_used"), (int, float)) and far_too_wide_use(q["range_used"])]
    return sorted(rows, key=lambda q: q["range_used"])
