"""Streaming accumulation of error statistics: one sample's tensors folded into running sums.

Speed matters (hundreds of tensors per sample, every sample), so tensors are folded with float32
dots in NumPy's einsum loop (see `accumulate`). The sums are those of qdqreport.analysis.metrics.Accumulator;
`abs_sum` (mean |Δ|) is not tracked.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from qdqreport.analysis.metrics import Accumulator

try:  # what np.einsum calls without `optimize` (the same loop, the same sums), minus its Python wrapper
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # NumPy < 2
    _einsum = np.einsum


# _same_bits compares this many values first (a differing pair usually differs there), then blocks of _BLOCK values
# (two 256 KiB slices and their comparison stay in the CPU's caches).
_PROBE = 1024
_BLOCK = 1 << 16


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a·b with NumPy's own SIMD loop: BLAS dots wait on their threads beside ONNX Runtime's (issue 12)."""
    return float(_einsum("i,i->", a, b))


def fold_pair(acc: Accumulator, ref: np.ndarray, candidate: np.ndarray, ref_sq: float | None = None) -> float:
    """Fold one (ref, candidate) pair into *acc* inside the caller's np.errstate(invalid="ignore", over="ignore");
    returns Σref² (computed unless given), to reuse for another candidate of the same reference.

    *ref* is a flat float32 array. (Concatenating the small tensors and folding them with float64
    segment reductions was tried: 2x slower than these float32 dots, which are memory-bound.)"""
    if ref_sq is None:
        ref_sq = _dot(ref, ref)
    _fold(acc, ref, candidate, ref_sq)
    return ref_sq


def accumulate(acc: Accumulator, reference: np.ndarray, candidate: np.ndarray, ref_sq: float | None = None) -> None:
    """Add one pair of tensors to *acc* (the sums cosine, MSE, SQNR and max |Δ| need).

    Speed matters here (hundreds of tensors per sample), so the sums are float32 BLAS dots and
    the cross term is derived from them: ref·cand = (Σref² + Σcand² − Σ(cand−ref)²) / 2, which
    keeps the cosine accurate near 1 because Σ(cand−ref)² is summed from exact differences.
    `abs_sum` (mean |Δ|) is not tracked. Tensors with NaN/Inf, or so large that a float32 sum
    overflows, go through the float64 path of Accumulator.add on their finite positions.
    """
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: handled by the finite path below
        _fold(acc, reference, candidate, ref_sq)


def _fold(acc: Accumulator, reference: np.ndarray, candidate: np.ndarray, ref_sq: float | None) -> None:
    """accumulate() inside the caller's np.errstate (set once per sample by the per-layer pass's fold)."""
    ref = np.asarray(reference, dtype=np.float32).ravel()
    cand = np.asarray(candidate, dtype=np.float32).ravel()
    if ref.shape != cand.shape:
        return  # a reshaped counterpart (e.g. a renamed Softmax output) cannot be compared element-wise
    if not ref.size:
        return
    if _same_bits(ref, cand):
        ref_sq = _dot(ref, ref) if ref_sq is None else ref_sq
        if math.isfinite(ref_sq):
            _fold_identical(acc, ref.size, ref_sq)
            return
    diff = cand - ref
    sums = (_dot(ref, ref) if ref_sq is None else ref_sq, _dot(cand, cand), _dot(diff, diff))
    if not (math.isfinite(sums[0]) and math.isfinite(sums[1]) and math.isfinite(sums[2])):
        _accumulate_finite(acc, ref, cand)
        return
    acc.count += ref.size
    acc.ref_sq += sums[0]
    acc.cand_sq += sums[1]
    acc.diff_sq += sums[2]
    acc.dot += (sums[0] + sums[1] - sums[2]) / 2.0
    acc.abs_sum = math.nan
    acc.max_abs = max(acc.max_abs, float(diff.max()), -float(diff.min()))


def _same_bits(ref: np.ndarray, cand: np.ndarray) -> bool:
    """Whether two flat float32 arrays of one size hold the same bits, three values first, then a block at a time: a pair
    that differs (a quantized tensor) usually costs three values, a pair that does not (a tensor upstream of every quantized node, or a
    float node recomputed from the same FP32 values) one read of both instead of the five passes of the fold."""
    last = ref.size - 1
    if ref[0] != cand[0] or ref[last] != cand[last] or ref[last // 2] != cand[last // 2]:
        return False  # most quantized pairs: three values, no array made (NaN != NaN: the fold's own path)
    a, b = ref.view(np.uint32), cand.view(np.uint32)
    start, step = 0, _PROBE
    while start < a.size:
        stop = start + step
        if not np.equal(a[start:stop], b[start:stop]).all():
            return False
        start, step = stop, _BLOCK
    return True


def _fold_identical(acc: Accumulator, count: int, ref_sq: float) -> None:
    """What _fold adds for a candidate with the bits of its finite reference, without the passes: Σcand² is Σref²
    (the same einsum over the same bits), cand − ref is +0.0 everywhere, so Σ(cand−ref)² is 0.0 and max |Δ| is 0.0."""
    sums = (ref_sq, ref_sq, 0.0)
    acc.count += count
    acc.ref_sq += sums[0]
    acc.cand_sq += sums[1]
    acc.diff_sq += sums[2]
    acc.dot += (sums[0] + sums[1] - sums[2]) / 2.0
    acc.abs_sum = math.nan
    acc.max_abs = max(acc.max_abs, 0.0, -0.0)  # diff.max(), -diff.min() of +0.0s, as _fold takes them


def _accumulate_finite(acc: Accumulator, ref: np.ndarray, cand: np.ndarray) -> None:
    """The finite positions only (attention masks hold -inf); float64 when float32 sums would overflow."""
    ref_finite, cand_finite = np.isfinite(ref), np.isfinite(cand)
    acc.ref_nonfinite += ref.size - int(np.count_nonzero(ref_finite))
    acc.cand_nonfinite += cand.size - int(np.count_nonzero(cand_finite))
    finite = ref_finite & cand_finite
    ref, cand = ref[finite], cand[finite]
    acc.nonfinite_pairs += finite.size - ref.size
    diff = cand - ref
    sums = (_dot(ref, ref), _dot(cand, cand), _dot(diff, diff))
    if not all(math.isfinite(v) for v in sums):
        ref, cand = ref.astype(np.float64), cand.astype(np.float64)
        diff = cand - ref
        sums = (_dot(ref, ref), _dot(cand, cand), _dot(diff, diff))
    acc.count += ref.size
    acc.ref_sq += sums[0]
    acc.cand_sq += sums[1]
    acc.diff_sq += sums[2]
    acc.dot += (sums[0] + sums[1] - sums[2]) / 2.0
    acc.abs_sum = math.nan
    if diff.size:
        acc.max_abs = max(acc.max_abs, float(diff.max()), -float(diff.min()))
