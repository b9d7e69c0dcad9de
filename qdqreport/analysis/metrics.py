"""Error metrics between a reference tensor and a candidate tensor (pure NumPy).

All metrics are computed in float64 over the positions where both tensors are finite; the
NaN/Inf counts are reported separately so a few bad values neither hide nor poison the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class ErrorStats:
    cosine: float
    mse: float
    max_abs: float
    mean_abs: float
    sqnr_db: float
    rel_l2: float
    ref_nan: int
    ref_inf: int
    cand_nan: int
    cand_inf: int

    def as_row(self) -> dict[str, float | int]:
        return dict(self.__dict__)


def error_stats(reference: np.ndarray, candidate: np.ndarray) -> ErrorStats:
    ref = np.asarray(reference, dtype=np.float64).ravel()
    cand = np.asarray(candidate, dtype=np.float64).ravel()
    if ref.shape != cand.shape:
        raise ValueError(f"shapes differ: {np.shape(reference)} vs {np.shape(candidate)}")
    finite = np.isfinite(ref) & np.isfinite(cand)
    acc = Accumulator()
    if finite.all():  # the usual case: the same values, without copying them out or counting what is not there
        acc.add(ref, cand)
        counts = (0, 0, 0, 0)
    else:
        acc.add(ref[finite], cand[finite])
        counts = (int(np.isnan(ref).sum()), int(np.isinf(ref).sum()), int(np.isnan(cand).sum()), int(np.isinf(cand).sum()))
    return _stats(acc, counts)


# Values per row up to which error_stats_rows reduces rows together: einsum sums a row of up to its 8,192-value buffer
# in one inner loop, as it sums one 1-D row; longer rows are split where a 1-D row is not (measured on NumPy 2.4).
ROWS_MAX_VALUES = 4096


def error_stats_rows(reference: np.ndarray, candidate: np.ndarray) -> list[ErrorStats]:
    """error_stats of each row of two float64 [rows, values] arrays, bit for bit (issue 12: one call per sample cost
    more than a small output's data). Rows holding a non-finite value, and rows longer than ROWS_MAX_VALUES, are
    measured alone by error_stats."""
    if reference.shape != candidate.shape or reference.ndim != 2:
        raise ValueError(f"shapes differ or not [rows, values]: {reference.shape} vs {candidate.shape}")
    rows, values = reference.shape
    if not values or values > ROWS_MAX_VALUES:
        return [error_stats(r, c) for r, c in zip(reference, candidate)]
    finite = (np.isfinite(reference) & np.isfinite(candidate)).all(axis=1).tolist()
    diff = candidate - reference
    sums = [np.einsum("ij,ij->i", a, b).tolist() for a, b in ((reference, reference), (candidate, candidate),
                                                                (reference, candidate), (diff, diff))]
    magnitude = np.abs(diff)
    abs_sums, max_abs = magnitude.sum(axis=1).tolist(), magnitude.max(axis=1).tolist()
    found = []
    for row in range(rows):
        if not finite[row]:
            found.append(error_stats(reference[row], candidate[row]))
            continue
        acc = Accumulator()  # as Accumulator.add leaves it after one add of the row
        acc.count = values
        acc.ref_sq += sums[0][row]
        acc.cand_sq += sums[1][row]
        acc.dot += sums[2][row]
        acc.diff_sq += sums[3][row]
        acc.abs_sum += abs_sums[row]
        acc.max_abs = max(acc.max_abs, max_abs[row])
        found.append(_stats(acc, (0, 0, 0, 0)))
    return found


def _stats(acc: "Accumulator", counts: tuple[int, int, int, int]) -> ErrorStats:
    return ErrorStats(
        cosine=acc.cosine(), mse=acc.mse(), max_abs=acc.max_abs, mean_abs=acc.mean_abs(),
        sqnr_db=acc.sqnr_db(), rel_l2=acc.rel_l2(),
        ref_nan=counts[0], ref_inf=counts[1], cand_nan=counts[2], cand_inf=counts[3],
    )


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a·b of two 1-D arrays with NumPy's own SIMD loop (no BLAS threads)."""
    return float(np.einsum("i,i->", a, b))


class Accumulator:
    """Running sums from which cosine, MSE, SQNR and relative L2 follow; memory does not grow."""

    def __init__(self) -> None:
        self.count = 0
        self.ref_sq = 0.0
        self.cand_sq = 0.0
        self.dot = 0.0
        self.diff_sq = 0.0
        self.abs_sum = 0.0
        self.max_abs = 0.0
        # NaN/Inf values seen, left out of the sums (streaming.accumulate's finite path counts them): an Inf the
        # QDQ model computes where FP32 has none is a defect the error metrics alone would hide.
        self.ref_nonfinite = 0
        self.cand_nonfinite = 0
        self.nonfinite_pairs = 0  # positions left out because either side is NaN/Inf: count + this = values seen

    def add(self, ref: np.ndarray, cand: np.ndarray) -> None:
        ref = np.asarray(ref, dtype=np.float64).ravel()
        cand = np.asarray(cand, dtype=np.float64).ravel()
        diff = cand - ref
        self.count += ref.size
        # einsum, not np.dot or `@`: both go through BLAS, whose threads wait on a loaded machine or beside
        # ONNX Runtime's own (np.dot 0.9 ms vs einsum 0.02 ms on 25,600 values here; issue 12).
        self.ref_sq += _dot(ref, ref)
        self.cand_sq += _dot(cand, cand)
        self.dot += _dot(ref, cand)
        self.diff_sq += _dot(diff, diff)
        if diff.size:
            magnitude = np.abs(diff)
            self.abs_sum += float(magnitude.sum())
            self.max_abs = max(self.max_abs, float(magnitude.max()))

    def cosine(self) -> float:
        if self.count == 0:
            return math.nan
        if self.ref_sq == 0.0 and self.cand_sq == 0.0:
            return 1.0
        if self.ref_sq == 0.0 or self.cand_sq == 0.0:
            return 0.0
        return max(-1.0, min(1.0, self.dot / math.sqrt(self.ref_sq * self.cand_sq)))

    def mse(self) -> float:
        return self.diff_sq / self.count if self.count else math.nan

    def mean_abs(self) -> float:
        return self.abs_sum / self.count if self.count else math.nan

    def sqnr_db(self) -> float:
        """Signal-to-quantization-noise ratio: 10·log10(Σref² / Σ(cand−ref)²); inf when identical."""
        if self.count == 0:
            return math.nan
        if self.diff_sq == 0.0:
            return math.inf
        if self.ref_sq == 0.0:
            return -math.inf
        return 10.0 * math.log10(self.ref_sq / self.diff_sq)

    def rel_l2(self) -> float:
        if self.count == 0:
            return math.nan
        if self.ref_sq == 0.0:
            return 0.0 if self.diff_sq == 0.0 else math.inf
        return math.sqrt(self.diff_sq / self.ref_sq)


def centred_error(reference: Sequence[np.ndarray], candidate: Sequence[np.ndarray]) -> tuple[float, int] | None:
    """(‖candidate − reference‖ / ‖reference − its mean over the samples‖, samples) over the sample pairs of one shape
    whose values are all finite: the error against the spread the outputs use to tell inputs apart, which a common
    offset does not hide (a page grid, chemical shifts far from zero: cosine 0.97 while the grid moved 39 px). None
    with fewer than two such pairs or a reference that does not vary."""
    pairs = [(np.asarray(r, np.float64), np.asarray(c, np.float64)) for r, c in zip(reference, candidate)
             if r is not None and c is not None and np.shape(r) == np.shape(c)]
    shape = pairs[0][0].shape if pairs else None
    pairs = [(r, c) for r, c in pairs if r.shape == shape and np.isfinite(r).all() and np.isfinite(c).all()]
    if len(pairs) < 2:
        return None
    ref, cand = np.stack([r for r, _ in pairs]), np.stack([c for _, c in pairs])
    spread = float(np.linalg.norm(ref - ref.mean(axis=0, keepdims=True)))
    return (float(np.linalg.norm(cand - ref)) / spread, len(pairs)) if spread > 0 else None


def topk_agreement(reference: np.ndarray, candidate: np.ndarray, k: int) -> float:
    """Share of rows (last axis = classes) whose reference top-1 class is in the candidate's top-k."""
    ref = np.asarray(reference, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    classes = ref.shape[-1]
    ref_rows = ref.reshape(-1, classes)
    cand_rows = np.nan_to_num(cand.reshape(-1, classes), nan=-np.inf)
    top1 = ref_rows.argmax(axis=1)
    if k == 1:
        return float(np.mean(cand_rows.argmax(axis=1) == top1))
    topk = np.argsort(-cand_rows, axis=1, kind="stable")[:, :k]
    return float(np.mean((topk == top1[:, None]).any(axis=1)))
