"""Where a 1-D signal input (audio) keeps its energy, and what calibration audio read at the wrong sample rate does.

A calibration recorded at 48 kHz and fed to a 16 kHz model without resampling has the amplitude, mean and spread of
the evaluation audio (the statistics QR003 otherwise compares), but every frequency lands at a third of its place:
measured in cycles per sample, its spectral centroid is a third of the evaluation's (the corpus VAD's 0.073 against
0.247). Other content moves the centroid too, often less (calibration sets of other speech stay within 1.25x, or
overlap the evaluation's), sometimes more than any two common rates are apart (music for speech: 0.021, a twelfth).
That a shift lies between those bounds with the two sets apart, the spectrum's shape kept, is suggestive, not proof:
the finding says "as audio recorded at 48000 Hz read as 16000 Hz would", and the fix checks the rate. The collector
(collect/stats.py) measures each sample; this module summarises them and names a rate mismatch. Needs numpy only.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

MIN_SIGNAL = 256  # values along the one long axis: shorter inputs are feature vectors, not signals
SAMPLE_RATES = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000)  # Hz: recordings and models alike
# The ratio of the two sets' median centroids must be within this of a ratio of two common rates (48 kHz read as
# 16 kHz: 1/3). Not exact: a recording's noise floor and band limit move the centroid too (the corpus VAD's 48 kHz
# calibration: 0.297, 11% from 1/3). The rates are dense enough between 1/6 and 6 that this mostly bounds the shift.
RATE_TOLERANCE = 0.12
# Healthy calibration sets keep their median centroid within this factor of the evaluation's (corpus: VAD 0.99,
# basic-pitch 1.14, DNSMOS 0.90): a smaller shift is content, not a rate.
SHIFT_BAND = 1.25
# A rate scales every frequency alike, so a spectrum's spread over its centroid (its shape) stays roughly put; other
# content changes it. Measured: the corpus VAD's 48 kHz speech read as 16 kHz 1.45x the evaluation's (its noise floor
# moves it); pure tones for tones in broadband noise 2.7x (rules/unrepresentative_calibration.py's example).
SHAPE_BAND = 1.6
PERCENTILES = (10, 50, 90)


def signal_axis(shape: Sequence[int]) -> int | None:
    """The axis of a sample (batch axis removed) holding a 1-D signal: the only axis longer than 1, at least
    MIN_SIGNAL long ([1, 576] audio, [43844, 1]); None for images, spectrograms, feature vectors, scalars."""
    long = [i for i, n in enumerate(shape) if n > 1]
    return long[0] if len(long) == 1 and shape[long[0]] >= MIN_SIGNAL else None


def spectral_centroid(signal: np.ndarray) -> tuple[float, float] | None:
    """(centroid, relative spread) of one signal: the power-weighted mean frequency in cycles per sample (0 to 0.5),
    its mean removed and a Hann window applied, and the power-weighted spread of frequency around it over the
    centroid; None for a constant or non-finite signal."""
    return spectral_centroids(np.asarray(signal, dtype=np.float64).reshape(1, -1))[0]


def spectral_centroids(signals: np.ndarray) -> list[tuple[float, float] | None]:
    """spectral_centroid of each row of *signals* [rows, values], the rows transformed together: the same numbers,
    bit for bit (each row's mean, FFT and power sums are its own, reduced along it; the two weighted sums stay one
    dot product per row), without NumPy's per-call cost per row (issue 12: one call per vad sample)."""
    values = np.asarray(signals, dtype=np.float64)
    found: list[tuple[float, float] | None] = [None] * len(values)
    finite = np.flatnonzero(np.isfinite(values).all(axis=1))
    if not finite.size:
        return found
    rows = values[finite] if finite.size < len(values) else values
    power = np.abs(np.fft.rfft((rows - rows.mean(axis=1)[:, None]) * _hann(rows.shape[1]), axis=1)) ** 2
    totals = power.sum(axis=1).tolist()
    frequencies = np.arange(power.shape[1]) / (2.0 * (power.shape[1] - 1))
    for index, spectrum, total in zip(finite.tolist(), power, totals):
        if not total > 0:
            continue
        centroid = float(spectrum @ frequencies / total)
        spread = float(np.sqrt(spectrum @ (frequencies - centroid) ** 2 / total))
        found[index] = (centroid, spread / centroid) if centroid > 0 else None
    return found


@functools.lru_cache(maxsize=8)
def _hann(size: int) -> np.ndarray:
    """np.hanning(size), made once per length (a signal's length rarely changes) and kept read-only."""
    window = np.hanning(size)
    window.flags.writeable = False
    return window


def spectrum_summary(measured: Sequence[tuple[float, float] | None], axis: int) -> dict[str, Any] | None:
    """Each sample's spectral centroid summarised, and the median relative spread (the bundle's input-statistics
    `spectrum`); None when no sample had one."""
    pairs = [m for m in measured if m is not None]
    if not pairs:
        return None
    centroids = [c for c, _ in pairs]
    p10, median, p90 = percentiles(centroids, PERCENTILES)
    return {"measure": "spectral_centroid", "unit": "cycles per sample", "axis": axis, "samples": len(pairs),
            "min": float(min(centroids)), "p10": p10, "median": median, "p90": p90, "max": float(max(centroids)),
            "relative_spread": median_of([r for _, r in pairs])}


def percentiles(values: Sequence[float], points: Sequence[float]) -> list[float]:
    """np.percentile(values, points) of finite floats, the same doubles (its default linear method, computed as NumPy
    computes it: the virtual index (n - 1) * p / 100, the neighbours' lerp from the nearer side). NumPy's own call
    imports numpy.ma (np.unique asks np.ma.is_masked): 12-17 ms of a collect's start-up on 1-D signals (issue 12)."""
    ordered = sorted(float(v) for v in values)
    last = len(ordered) - 1
    found = []
    for point in points:
        virtual = last * (point / 100)
        if virtual >= last:  # NumPy takes the last value (and lerps it with itself)
            found.append(ordered[-1])
            continue
        below = math.floor(virtual)
        gamma, low, high = virtual - below, ordered[below], ordered[below + 1]
        step = high - low
        found.append(high - step * (1 - gamma) if gamma >= 0.5 else low + step * gamma)
    return found


def median_of(values: Sequence[float]) -> float:
    """np.median(values) of finite floats, the same double (the middle value, or the mean of the middle two as NumPy
    sums and divides them), without np.median's numpy.ma import (percentiles)."""
    ordered = sorted(float(v) for v in values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


@dataclass(frozen=True)
class RateMismatch:
    ratio: float  # calibration median centroid / evaluation median centroid
    recorded: int  # Hz: the rate the calibration audio was likely recorded at ...
    read_as: int  # ... and the rate the model reads


def rate_mismatch(calib: dict[str, Any], evaluation: dict[str, Any]) -> RateMismatch | None:
    """A calibration signal read at another sample rate than the evaluation's: the median centroids differ by more
    than SHIFT_BAND, by a ratio of two common sample rates (within RATE_TOLERANCE), and the two sets lie apart (the
    calibration's 10th-90th percentile band clear of the evaluation's). None otherwise, or without the statistic."""
    c, e = calib.get("spectrum"), evaluation.get("spectrum")
    if not c or not e or not c.get("median") or not e.get("median"):
        return None
    ratio = c["median"] / e["median"]
    apart = c["p90"] < e["p10"] or c["p10"] > e["p90"]
    if 1 / SHIFT_BAND <= ratio <= SHIFT_BAND or not apart or not _same_shape(c, e):
        return None
    # Read at rate M, audio recorded at R puts frequency f at f / R cycles per sample instead of f / M: ratio M / R.
    pairs = [(recorded, read_as) for read_as in SAMPLE_RATES for recorded in SAMPLE_RATES
             if recorded != read_as and abs(ratio * recorded / read_as - 1) <= RATE_TOLERANCE]
    if not pairs:
        return None
    recorded, read_as = min(pairs, key=lambda p: (abs(ratio * p[0] / p[1] - 1), p[1] != 16000))
    return RateMismatch(ratio, recorded, read_as)


def _same_shape(calib: dict[str, Any], evaluation: dict[str, Any]) -> bool:
    """The two spectra keep their shape (relative spread within SHAPE_BAND): moved, not replaced."""
    c, e = calib.get("relative_spread"), evaluation.get("relative_spread")
    return bool(c and e and 1 / SHAPE_BAND <= c / e <= SHAPE_BAND)
