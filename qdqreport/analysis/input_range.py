"""How the evaluation inputs fill a model input's first QuantizeLinear range (the bundle's inputs/range_use.json): the
one judgement QR003 reads when no calibration statistics were collected, and analysis/upstream.py reads as proof that
the calibration data was unlike the evaluation data.

The input quantizer's range is what calibration saw at the input, so it is calibration evidence even without the
calibration file: evaluation inputs that fill under 5% of it were calibrated on something far wider (raw 0-255
pixels for a [0, 1] model); inputs of which more than 1% clip were calibrated on something narrower. A tenth of the
evaluation values clipped at the very input is no calibration method's tail trimming (percentile and entropy clip
hundredths there; the read corpus's healthy controls clip none at their input quantizer): every range downstream was
calibrated on other data. Needs nothing but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

# Without calibration statistics: evaluation inputs using under 5% of the first Q range waste ~5 of 8 bits;
# more than 1% of values clipped saturates bright or dark regions.
RANGE_USED_MIN = 0.05
CLIPPED_MAX = 0.01
# Upstream of every calibrated range (analysis/upstream.py): a tenth of the evaluation values clipped at the input.
# Measured on the read corpus: faults clip 10-66% there (cls_calib_unit 10%, cls_random_calib 24%,
# cap_calib_inverted 66%), content calibrated on other text 8% (QR006's), healthy controls 0%.
UPSTREAM_CLIPPED = 0.10
# The ImageNet mean and std (RGB), the normalisation most image models are trained with (analysis/preprocessing.py
# snaps a per-channel fit to it).
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
# ImageNet's mean/std normalisation of [0, 1] pixels spans [-0.485/0.229, (1-0.406)/0.225] = [-2.118, 2.640] over its
# three channels: evaluation inputs with exactly these extremes carry it (within 2%).
IMAGENET_SPAN = (-IMAGENET_MEAN[0] / IMAGENET_STD[0], (1 - IMAGENET_MEAN[2]) / IMAGENET_STD[2])
SPAN_TOLERANCE = 0.02


@dataclass(frozen=True)
class RangeMiss:
    """A model input whose evaluation values miss its first QuantizeLinear's calibrated range."""

    input: str
    q_node: str
    wide: bool  # True: the range is far wider than the inputs use; False: the inputs clip
    used: float  # share of the representable range the evaluation inputs use
    clipped: float  # share of the evaluation values outside the representable range


def input_entry(range_use: Iterable[dict[str, Any]] | None, name: str) -> dict[str, Any] | None:
    """The range_use entry of model input *name* (the quantizer reading it), or None where none reads it."""
    return next((e for e in range_use or [] if isinstance(e, dict) and e.get("input") == name), None)


def range_miss(entry: dict[str, Any]) -> RangeMiss | None:
    """The miss of one range_use entry, or None when the evaluation inputs fill the range."""
    used, clipped = entry["range_used"], entry["clipped_share"]
    if 0 < used < RANGE_USED_MIN:
        return RangeMiss(entry["input"], entry.get("q_node", ""), True, used, clipped)
    if clipped > CLIPPED_MAX:
        return RangeMiss(entry["input"], entry.get("q_node", ""), False, used, clipped)
    return None


def without_rounding_clips(range_use: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with no clipping where every evaluation value lies within half a step of the representable limits:
    QuantizeLinear rounds to the nearest step, so such a value lands on qmin or qmax exactly. Collectors before
    2026-11-27 counted values beyond the limits themselves: a 0..255 input calibrated on 0..255 has its limit at
    127 x (255 / 127) = 254.9999995 in float32, and every white pixel (255) "clipped" (22% of a fingerprint crop's)."""
    return [_rounding_only(e) for e in range_use]


def _rounding_only(entry: dict[str, Any]) -> dict[str, Any]:
    half = 0.5 * float(entry.get("scale") or 0.0)
    low, high = entry.get("representable_min"), entry.get("representable_max")
    smallest, largest = entry.get("eval_min"), entry.get("eval_max")
    if not entry.get("clipped_share") or None in (low, high, smallest, largest) or not half:
        return entry
    within = low - half <= smallest and largest <= high + half
    return {**entry, "clipped_share": 0.0} if within else entry


def range_misses(range_use: Iterable[dict[str, Any]] | None) -> list[RangeMiss]:
    """Every range_use entry's miss (range_miss), in the bundle's order."""
    return [m for m in (range_miss(e) for e in range_use or []) if m is not None]


def gross_range_misses(range_use: Iterable[dict[str, Any]] | None) -> list[RangeMiss]:
    """The misses that prove the calibration data unlike the evaluation data: a range the inputs barely use, or a
    tenth of their values clipped."""
    return [m for m in range_misses(range_use) if m.wide or m.clipped >= UPSTREAM_CLIPPED]


def imagenet_normalised(entry: dict[str, Any]) -> bool:
    """Whether the evaluation inputs' extremes are those of ImageNet mean/std-normalised [0, 1] pixels."""
    low, high = entry.get("eval_min"), entry.get("eval_max")
    if low is None or high is None:
        return False
    return all(abs(value - expected) <= SPAN_TOLERANCE * abs(expected)
               for value, expected in zip((low, high), IMAGENET_SPAN))


def range_use_samples(manifest: dict[str, Any] | None) -> int | None:
    """How many evaluation samples the range_use shares are over: collect measures the input quantizers on every
    evaluation sample it ran (collect/stats.range_use), so the bundle's evaluation count (None when unrecorded)."""
    samples = (((manifest or {}).get("inputs") or {}).get("eval") or {}).get("samples")
    return samples if isinstance(samples, int) and not isinstance(samples, bool) and samples > 0 else None


def over_samples(count: int | None, of: int | None) -> str:
    """The samples a clipped share or range use is over, in words ("" when unknown): QR003 quotes the input quantizer
    over every evaluation sample, QR204 over the per-layer pass's spread subset, and the two numbers differ by that."""
    if not count:
        return ""
    if of is None:
        return f"over {count:,} evaluation sample{'s' if count != 1 else ''}"
    return f"over all {of:,} evaluation samples" if count >= of else f"over {count:,} of the {of:,} evaluation samples"


def over_every_sample(manifest: dict[str, Any] | None) -> str:
    """The words for what the range_use shares are over ("over all N evaluation samples"; "" when unrecorded)."""
    samples = range_use_samples(manifest)
    return over_samples(samples, samples)


def input_clipping(range_use: Iterable[dict[str, Any]] | None, q_node: str) -> float | None:
    """The clipped share range_use measured at *q_node* (an input quantizer), or None when it is not one."""
    return next((e["clipped_share"] for e in range_use or [] if e.get("q_node") == q_node), None)


def describe(miss: RangeMiss) -> str:
    """The miss in a few words, for a finding that cites it as upstream evidence."""
    if miss.wide:
        return (f"input {miss.input}'s first quantizer range is calibrated far wider than the evaluation inputs "
                f"(they use {miss.used:.1%} of it)")
    return f"input {miss.input}'s first quantizer clips {miss.clipped:.0%} of the evaluation values"
