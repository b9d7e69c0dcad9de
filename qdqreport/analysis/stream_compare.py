"""Stage comparison one sample at a time, with the slices of an output compared all at once.

Gives what analysis.compare.compare_stages gives (same rows, same formulas: each slice's sums
end in an Accumulator) without holding every sample: per output it keeps the per-sample rows and,
for every axis that could be a channel/field axis, per-slice running sums (a few vectors). The
mixed-scale axis is chosen at the end from those sums, as compare_stages chooses it from all
samples. compare_stages called Accumulator.add once per slice per sample (11,136 calls for a
detector head at N = 128, issue 12); here a sample's slices are reduced by NumPy in one go.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from qdqreport.analysis.compare import SLICE_SPREAD, ComparisonResult, slice_axes
from qdqreport.analysis.metrics import (ROWS_MAX_VALUES, Accumulator, ErrorStats, error_stats, error_stats_rows,
                                        topk_agreement)

Sample = Mapping[str, np.ndarray]
_RUN_SAMPLES = 256  # samples held back at most (StageComparer.add), and values of all their outputs
_RUN_VALUES = 1 << 16


@dataclass
class _SliceSums:
    """Running per-slice sums along one axis: finite positions (metrics) and all positions (RMS)."""
    size: int
    rms_sq: np.ndarray = None  # Σ nan_to_num(ref)² over every position, to choose the axis
    rms_count: int = 0
    count: np.ndarray = None
    ref_sq: np.ndarray = None
    cand_sq: np.ndarray = None
    dot: np.ndarray = None
    diff_sq: np.ndarray = None
    max_abs: np.ndarray = None

    def __post_init__(self) -> None:
        for name in ("rms_sq", "count", "ref_sq", "cand_sq", "dot", "diff_sq", "max_abs"):
            setattr(self, name, np.zeros(self.size))

    def add(self, ref: np.ndarray, cand: np.ndarray, all_finite: bool = False) -> None:
        """*ref*, *cand*: float64 [slices, values] of one sample; *all_finite*: both hold finite values only
        (then nothing is zeroed, and the sums are those of the same values in the same layout)."""
        if all_finite:
            self.rms_sq += (ref ** 2).sum(axis=1)
            self.rms_count += ref.shape[1]
            diff = cand - ref
            self.count += ref.shape[1]
        else:
            self.rms_sq += (np.nan_to_num(ref, posinf=0, neginf=0) ** 2).sum(axis=1)
            self.rms_count += ref.shape[1]
            finite = np.isfinite(ref) & np.isfinite(cand)
            ref, cand = np.where(finite, ref, 0.0), np.where(finite, cand, 0.0)
            diff = cand - ref
            self.count += finite.sum(axis=1)
        self.ref_sq += np.einsum("ij,ij->i", ref, ref)
        self.cand_sq += np.einsum("ij,ij->i", cand, cand)
        self.dot += np.einsum("ij,ij->i", ref, cand)
        self.diff_sq += np.einsum("ij,ij->i", diff, diff)
        if diff.shape[1]:
            self.max_abs = np.maximum(self.max_abs, np.abs(diff).max(axis=1))

    def add_samples(self, ref: np.ndarray, cand: np.ndarray, all_finite: list[bool]) -> None:
        """add() of each sample of float64 [samples, slices, values] arrays in turn (each sample's block laid out as
        add() gets it: np.moveaxis and reshape of the stacked samples), the same sums bit for bit: each sample's
        reduced over its own block, folded into the running sums one sample after another (add.accumulate)."""
        if not all(all_finite):
            for r, c, finite in zip(ref, cand, all_finite):
                self.add(r, c, finite)
            return
        values = ref.shape[2]
        diff = cand - ref
        for name, part in (("rms_sq", (ref ** 2).sum(axis=2)), ("ref_sq", np.einsum("kij,kij->ki", ref, ref)),
                           ("cand_sq", np.einsum("kij,kij->ki", cand, cand)), ("dot", np.einsum("kij,kij->ki", ref, cand)),
                           ("diff_sq", np.einsum("kij,kij->ki", diff, diff))):
            setattr(self, name, np.add.accumulate(np.concatenate([getattr(self, name)[None], part]), axis=0)[-1])
        self.rms_count += values * len(ref)
        self.count = np.add.accumulate(np.concatenate([self.count[None], np.full((len(ref), self.size), values)]),
                                       axis=0)[-1]
        if values:
            self.max_abs = np.maximum.accumulate(np.concatenate([self.max_abs[None], np.abs(diff).max(axis=2)]),
                                                 axis=0)[-1]

    def spread(self) -> float:
        rms = np.sqrt(self.rms_sq / max(self.rms_count, 1))
        positive = rms[rms > 0]
        return float(positive.max() / positive.min()) if positive.size >= 2 else 0.0

    def accumulators(self) -> list[Accumulator]:
        accs = []
        for i in range(self.size):
            acc = Accumulator()
            acc.count, acc.ref_sq, acc.cand_sq = int(self.count[i]), float(self.ref_sq[i]), float(self.cand_sq[i])
            acc.dot, acc.diff_sq, acc.max_abs = float(self.dot[i]), float(self.diff_sq[i]), float(self.max_abs[i])
            accs.append(acc)
        return accs


@dataclass
class _Output:
    shape: tuple[int, ...]
    is_class: bool
    rows: list[dict] = field(default_factory=list)
    axes: dict[int, _SliceSums] = field(default_factory=dict)
    mismatch: str | None = None
    probabilities: bool = True  # every reference sample so far is a probability vector per row


class StageComparer:
    """`add(reference_sample, candidate_sample)` per sample, `result()` at the end.

    *class_outputs*: outputs known to hold class scores. With *detect_probabilities*, an output
    whose every reference sample is a probability vector per row (looks_like_probabilities) is a
    class output too: the top-k columns of the other outputs are dropped at the end."""

    def __init__(self, class_outputs: frozenset[str] = frozenset(), detect_probabilities: bool = False) -> None:
        self.class_outputs = frozenset(class_outputs)
        self.detect = detect_probabilities
        self.outputs: dict[str, _Output] = {}
        self.skipped: dict[str, str] = {}
        self.reference_names: set[str] = set()
        self.samples = 0
        self._pending: list[tuple[int, Sample, Sample]] = []  # samples held back (add), compared at _flush()
        self._pending_values = 0

    def add(self, reference: Sample, candidate: Sample) -> None:
        if self.samples == 0:
            self._start(reference, candidate)
        self._pending.append((self.samples, reference, candidate))
        self._pending_values += sum(np.size(reference[name]) for name in self.outputs)
        self.samples += 1
        if len(self._pending) >= _RUN_SAMPLES or self._pending_values >= _RUN_VALUES:
            self._flush()

    def _flush(self) -> None:
        """Compare the held-back samples, output by output (each output's state is its own): each run of samples
        whose output has the first sample's shape, and at most ROWS_MAX_VALUES values, at once (_add_run), any other
        alone (_add_output), in sample order."""
        pending, self._pending, self._pending_values = self._pending, [], 0
        for name, state in self.outputs.items():
            run: list[tuple[int, np.ndarray, np.ndarray]] = []
            for index, reference, candidate in pending:
                if state.mismatch is not None:
                    break
                ref, cand = np.asarray(reference[name]), np.asarray(candidate[name])
                if (ref.shape == cand.shape == state.shape and 0 < ref.size <= ROWS_MAX_VALUES
                        and (not run or (ref.dtype, cand.dtype) == (run[0][1].dtype, run[0][2].dtype))):
                    run.append((index, ref, cand))
                    continue
                self._add_run(name, state, run)
                run = []
                if state.mismatch is None:
                    if ref.shape == cand.shape == state.shape and 0 < ref.size <= ROWS_MAX_VALUES:
                        run.append((index, ref, cand))  # another dtype: the next run's first
                    else:
                        self._add_output(name, state, ref, cand, index)
            self._add_run(name, state, run)

    def _add_run(self, name: str, state: _Output, run: list[tuple[int, np.ndarray, np.ndarray]]) -> None:
        """_add_output of each sample of *run* (one shape, the output's first; one dtype each side), the same rows and
        sums: the sums by error_stats_rows and _SliceSums.add_samples, the probability check and top-k per sample."""
        if len(run) < 2:
            for index, ref, cand in run:
                self._add_output(name, state, ref, cand, index)
            return
        refs, cands = np.stack([r for _, r, _ in run]), np.stack([c for _, _, c in run])
        ref64, cand64 = refs.astype(np.float64), cands.astype(np.float64)
        stats = error_stats_rows(ref64.reshape(len(run), -1), cand64.reshape(len(run), -1))
        all_finite = [self._sample_row(name, state, ref, cand, index, sample_stats)
                      for (index, ref, cand), sample_stats in zip(run, stats)]
        for axis, sums in state.axes.items():
            size = state.shape[axis]
            sums.add_samples(np.moveaxis(ref64, axis + 1, 1).reshape(len(run), size, -1),
                             np.moveaxis(cand64, axis + 1, 1).reshape(len(run), size, -1), all_finite)

    def _start(self, reference: Sample, candidate: Sample) -> None:
        self.reference_names = set(reference)
        for name in sorted(set(reference) ^ set(candidate)):
            self.skipped[name] = "present in only one stage"
        for name in (n for n in reference if n in candidate):
            shape = np.shape(reference[name])
            state = _Output(shape, name in self.class_outputs or self.detect)
            state.axes = {axis: _SliceSums(shape[axis]) for axis in slice_axes(shape)}
            self.outputs[name] = state

    def _add_output(self, name: str, state: _Output, ref: np.ndarray, cand: np.ndarray, index: int) -> None:
        if ref.shape != cand.shape:
            state.mismatch = f"shapes differ ({state.shape} vs {cand.shape})"
            return
        ref64, cand64 = ref.astype(np.float64), cand.astype(np.float64)
        stats = error_stats(ref64, cand64)  # converts nothing more: float64 already
        all_finite = self._sample_row(name, state, ref, cand, index, stats)
        for axis in list(state.axes):
            if ref.ndim != len(state.shape) or ref.shape[axis] != state.shape[axis]:
                del state.axes[axis]  # a varying axis length has no fixed slices to compare
                continue
            size = state.shape[axis]
            state.axes[axis].add(np.moveaxis(ref64, axis, 0).reshape(size, -1),
                                 np.moveaxis(cand64, axis, 0).reshape(size, -1), all_finite)

    def _sample_row(self, name: str, state: _Output, ref: np.ndarray, cand: np.ndarray, index: int,
                    stats: ErrorStats) -> bool:
        """One sample's row of *name* (its error stats, top-1/top-5 where it holds class scores), appended in sample
        order by both the one-sample and the run path; whether every value of both sides was finite."""
        if self.detect and state.probabilities:
            state.probabilities = _is_probability(ref)
            state.is_class = state.probabilities or name in self.class_outputs  # no top-k for a non-class map
        row = {"output": name, "sample": index, **stats.as_row()}
        if state.is_class and ref.ndim >= 1 and ref.shape[-1] >= 2:
            row["top1_agree"] = topk_agreement(ref, cand, 1)
            if ref.shape[-1] > 5:
                row["top5_agree"] = topk_agreement(ref, cand, 5)
        state.rows.append(row)
        return not (stats.ref_nan or stats.ref_inf or stats.cand_nan or stats.cand_inf)

    def changed_samples(self) -> list[int]:
        """The compared samples where a class output's top-1 changes (any of its rows), ascending: where the checks'
        controls have to show what they win back (collect/control_stage.choose_samples). Ties are not set apart: a
        near tie that flips is a changed decision there too."""
        self._flush()
        return sorted({row["sample"] for state in self.outputs.values() for row in state.rows
                       if isinstance(row.get("top1_agree"), float) and row["top1_agree"] < 1.0})

    def worst_samples(self) -> list[int]:
        """Every compared sample's index, the lowest cosine of any of its outputs first (NaN lowest), ties by index:
        where a what-if trial on a subset has to show its fix (collect/whatif_samples.py). An ordering, not a
        judgement: analysis/agreement.py judges."""
        self._flush()
        lowest: dict[int, float] = {}
        for state in self.outputs.values():
            for row in state.rows:
                cosine = row.get("cosine")
                value = float(cosine) if isinstance(cosine, (int, float)) and math.isfinite(cosine) else -math.inf
                lowest[row["sample"]] = min(lowest.get(row["sample"], math.inf), value)
        return sorted(lowest, key=lambda index: (lowest[index], index))

    def classes(self) -> frozenset[str]:
        """The class outputs: given, or (detect_probabilities) probability vectors in every sample."""
        self._flush()
        found = {n for n, s in self.outputs.items() if self.detect and s.probabilities and s.mismatch is None}
        return self.class_outputs | (found if self.samples else set())

    def result(self) -> ComparisonResult:
        self._flush()
        result = ComparisonResult(skipped=dict(self.skipped))
        classes = self.classes()
        for name, state in self.outputs.items():
            if state.mismatch is not None:
                result.skipped[name] = state.mismatch
                continue
            result.sample_rows.extend(state.rows if name in classes else [_without_topk(r) for r in state.rows])
            axis, spread = _mixed_scale_axis(state.axes)
            if axis is not None:
                result.sliced[name] = {"axis": axis, "spread": spread}
                result.slice_rows.extend(_slice_rows(name, axis, state.axes[axis]))
        return result


def _mixed_scale_axis(axes: dict[int, _SliceSums]) -> tuple[int | None, float]:
    best_axis, best_spread = None, 0.0
    for axis in sorted(axes):
        spread = axes[axis].spread()
        if spread > best_spread:
            best_axis, best_spread = axis, spread
    return (best_axis, best_spread) if best_spread >= SLICE_SPREAD else (None, best_spread)


def _slice_rows(name: str, axis: int, sums: _SliceSums) -> list[dict]:
    return [{"output": name, "axis": axis, "index": index,
             "ref_rms": (acc.ref_sq / acc.count) ** 0.5 if acc.count else None,
             "cosine": acc.cosine(), "sqnr_db": acc.sqnr_db(), "max_abs": acc.max_abs, "rel_l2": acc.rel_l2()}
            for index, acc in enumerate(sums.accumulators())]


def _without_topk(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("top1_agree", "top5_agree")}


def _is_probability(values: np.ndarray) -> bool:
    """One sample of analysis.compare.looks_like_probabilities."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 0 or values.shape[-1] < 2 or not np.isfinite(values).all():
        return False
    if values.min() < -1e-6 or values.max() > 1 + 1e-6:
        return False
    return bool(np.allclose(values.sum(axis=-1), 1.0, atol=1e-3))
