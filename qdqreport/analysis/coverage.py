"""Does the calibration set cover the evaluation inputs' value range? The judgement behind QR006's coverage finding,
from the per-input statistics collect writes (inputs/calib_stats.json, inputs/eval_stats.json).

QR006 (rules/unrepresentative_calibration.py) names the gap and its fix; QR002 (rules/sensitive_op_quantized.py)
reads the same judgement: when the calibration misses a quarter of the evaluation span on a quarter of the samples,
every range downstream is set on the wrong data and a sensitive node's error is what that predicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.preprocessing import (calibration_samples, categorical, preprocessing_mismatch, same_centre,
                                             shares_level, state_name)

# A coverage gap: a quarter or more of the evaluation samples reach beyond the calibration's
# value range (by more than 1% of its span) while both sets keep the same black or white level.
OUT_OF_RANGE_SHARE = 0.25
UNCOVERED_SPAN = 0.25  # ... and the calibration misses a quarter of the evaluation span (not a few bright pixels)
MARGIN_OF_SPAN = 0.01  # a sample beyond the calibration range by less than 1% of its span is inside it
# ... and two samples at least: one sample's extreme is an anecdote (the thirty-fourth part's microscopy tiles: one of 3
# evaluation tiles holds a few zero pixels at the image's edge, its mean and spread inside the calibration's, and the
# gap was named the error of every healthy control), as one changed decision is (analysis/saturation.MIN_LOST_SAMPLES).
MIN_BEYOND = 2
# ... and the calibration range is part of the evaluation's: the same black/white level (or centre), or three quarters
# of the calibration range inside the evaluation range (silence: the noise floor of speech and a little below it).
# A normalisation step moves the range out of the evaluation's instead; that is QR003's when it names the step.
INSIDE_SHARE = 0.75


@dataclass(frozen=True)
class Gap:
    """One input whose calibration range misses part of the evaluation's: content, not a preprocessing step."""

    name: str
    beyond: tuple[int, ...]  # evaluation samples with values outside the calibration range
    samples: int
    uncovered: float  # the share of the evaluation span the calibration range misses


def uncovered(c: dict[str, float], e: dict[str, float]) -> float:
    """The share of the evaluation span [e.min, e.max] that the calibration range [c.min, c.max] misses."""
    return (max(0.0, c["min"] - e["min"]) + max(0.0, e["max"] - c["max"])) / max(e["max"] - e["min"], 1e-12)


def inside_share(c: dict[str, float], e: dict[str, float]) -> float:
    """The share of the calibration range [c.min, c.max] that lies inside the evaluation range [e.min, e.max]; a
    calibration held at one value is a point, wholly inside or wholly outside (the thirty-seventh part's terrain
    generator calibrated on one difficulty, 0.49, of the 0..1 it serves: read as outside, no gap was named)."""
    span = c["max"] - c["min"]
    if span <= 0:
        return 1.0 if e["min"] <= c["min"] <= e["max"] else 0.0
    return max(0.0, min(c["max"], e["max"]) - max(c["min"], e["min"])) / span


def coverage_gaps(calib_stats: dict[str, Any] | None, eval_stats: dict[str, Any] | None) -> list[Gap]:
    """The inputs, by name, whose calibration range a quarter of the evaluation samples (two at least) go beyond,
    missing a quarter of the evaluation span, with the same black/white level (or centre): darker, quieter, narrower
    content. Integer
    inputs (token ids, masks) are categories and never have a gap; a named preprocessing step is QR003's instead."""
    calib, evaluation = (calib_stats or {}).get("inputs", {}), (eval_stats or {}).get("inputs", {})
    gaps = []
    for name in sorted(n for n in set(calib) & set(evaluation) if not categorical(evaluation[n])):
        c, e = calib[name]["overall"], evaluation[name]["overall"]
        per_sample = evaluation[name].get("per_sample") or []
        margin = MARGIN_OF_SPAN * (c["max"] - c["min"])
        beyond = tuple(i for i, s in enumerate(per_sample) if s["min"] < c["min"] - margin or s["max"] > c["max"] + margin)
        if (per_sample and len(beyond) >= MIN_BEYOND and len(beyond) / len(per_sample) >= OUT_OF_RANGE_SHARE
                and uncovered(c, e) >= UNCOVERED_SPAN
                and (shares_level(c, e) or same_centre(c, e) or inside_share(c, e) >= INSIDE_SHARE)
                and not preprocessing_mismatch(calib[name], evaluation[name], name,
                                               calibration_samples(calib_stats))):
            gaps.append(Gap(name, beyond, len(per_sample), uncovered(c, e)))
    return gaps


# A calibration input whose extremes lie a hundred evaluation spans beyond the evaluation's own: a few outlier values
# in calibration (a new user's MiniMol: one molecule's Laplacian eigenvector entries to -5716 against the
# evaluation's -0.87..1), which MinMax takes for every range downstream.
FAR_BEYOND_SPANS = 100.0


@dataclass(frozen=True)
class Extreme:
    name: str
    calib: tuple[float, float]  # the calibration's min, max
    evaluation: tuple[float, float]  # the evaluation's min, max
    spans: float  # how far the calibration reaches past the evaluation range, in evaluation spans


def extreme_inputs(calib_stats: dict[str, Any] | None, eval_stats: dict[str, Any] | None) -> list[Extreme]:
    """The float inputs whose calibration values reach FAR_BEYOND_SPANS evaluation spans or more past the evaluation
    range (either side), farthest first."""
    calib, evaluation = (calib_stats or {}).get("inputs", {}), (eval_stats or {}).get("inputs", {})
    found = []
    for name in sorted(set(calib) & set(evaluation)):
        if not isinstance(calib[name], dict) or not isinstance(evaluation[name], dict) \
                or str(calib[name].get("dtype", "float")).startswith(("int", "uint", "bool")):
            continue
        c, e = calib[name].get("overall"), evaluation[name].get("overall")
        if not isinstance(c, dict) or not isinstance(e, dict) \
                or not all(isinstance(s.get(k), (int, float)) for s in (c, e) for k in ("min", "max")):
            continue
        span = e["max"] - e["min"]
        if span <= 0:
            continue
        spans = max(e["min"] - c["min"], c["max"] - e["max"]) / span
        if spans >= FAR_BEYOND_SPANS:
            found.append(Extreme(name, (c["min"], c["max"]), (e["min"], e["max"]), spans))
    return sorted(found, key=lambda x: -x.spans)


@dataclass(frozen=True)
class FrozenChannels:
    """One input whose calibration held some channels (a table's columns) at one value each while the evaluation
    varies them, the input's other channels varying in both: calibrated on one slice of the data."""

    name: str
    channels: tuple[int, ...]  # the frozen channels' indices along the channel axis
    values: tuple[float, ...]  # the one value each held in calibration
    of: int  # the input's channels
    axis: int | None


def frozen_channels(calib_stats: dict[str, Any] | None, eval_stats: dict[str, Any] | None) -> list[FrozenChannels]:
    """Inputs with channels constant in calibration (spread 0) that vary in evaluation, while some other channel
    varies in calibration (a wholly constant input is coverage_gaps' blank set). The thirty-sixth part's surrogate,
    calibrated on one problem of the twelve it serves, held its dataset and cv columns at one value each, and the
    whole input's range (set by the other columns) hid it. Integer inputs (ids, masks: padding is constant by design)
    and recurrent state are left out."""
    calib, evaluation = (calib_stats or {}).get("inputs", {}), (eval_stats or {}).get("inputs", {})
    found = []
    for name in sorted(set(calib) & set(evaluation)):
        c, e = calib[name], evaluation[name]
        if categorical(e) or categorical(c) or state_name(name):
            continue
        pairs = list(zip(c.get("channels") or [], e.get("channels") or []))
        if len(pairs) < 2 or len(pairs) != len(e.get("channels") or []):
            continue
        frozen = [i for i, (a, b) in enumerate(pairs) if a["std"] <= 0 and b["std"] > 0]
        if frozen and any(a["std"] > 0 for a, _ in pairs):
            found.append(FrozenChannels(name, tuple(frozen), tuple(float(pairs[i][0]["mean"]) for i in frozen),
                                        len(pairs), e.get("channel_axis")))
    return found
