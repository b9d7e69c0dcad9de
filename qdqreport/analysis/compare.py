"""Compare two stages' outputs per output tensor, per sample, and per slice where scales mix.

A detector head that concatenates box coordinates (hundreds) with class scores (0..1) can
keep a whole-tensor cosine of 0.999 while every score is wrong. So for each output we look
for the axis along which the reference's RMS changes most; if the largest slice is at least
SLICE_SPREAD times the smallest, we also compare slice by slice along that axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from qdqreport.analysis.metrics import Accumulator, error_stats, topk_agreement
from qdqreport.analysis.output_kinds import grid_axes

SLICE_SPREAD = 10.0  # max/min slice RMS above which an output "mixes scales"
MAX_SLICES = 4096  # an axis longer than this is spatial, not a channel/field axis

Samples = Sequence[Mapping[str, np.ndarray]]


@dataclass
class ComparisonResult:
    sample_rows: list[dict] = field(default_factory=list)
    slice_rows: list[dict] = field(default_factory=list)
    sliced: dict[str, dict] = field(default_factory=dict)  # output -> {"axis", "spread"}
    skipped: dict[str, str] = field(default_factory=dict)  # output -> why it was not compared


def compare_stages(reference: Samples, candidate: Samples, class_outputs: frozenset[str] = frozenset()) -> ComparisonResult:
    """Compare two stages run on the same samples; outputs are matched by name."""
    result = ComparisonResult()
    names = [n for n in reference[0] if n in candidate[0]] if reference and candidate else []
    for name in sorted(set(reference[0]) ^ set(candidate[0]) if reference and candidate else ()):
        result.skipped[name] = "present in only one stage"
    for name in names:
        refs = [np.asarray(s[name]) for s in reference]
        cands = [np.asarray(s[name]) for s in candidate]
        if any(r.shape != c.shape for r, c in zip(refs, cands)):
            result.skipped[name] = f"shapes differ ({refs[0].shape} vs {cands[0].shape})"
            continue
        is_class = name in class_outputs
        result.sample_rows.extend(_sample_rows(name, refs, cands, is_class))
        axis, spread = mixed_scale_axis(refs)
        if axis is not None:
            result.sliced[name] = {"axis": axis, "spread": spread}
            result.slice_rows.extend(_slice_rows(name, refs, cands, axis))
    return result


def _sample_rows(name: str, refs: list[np.ndarray], cands: list[np.ndarray], is_class: bool) -> list[dict]:
    rows = []
    for index, (ref, cand) in enumerate(zip(refs, cands)):
        row = {"output": name, "sample": index, **error_stats(ref, cand).as_row()}
        if is_class and ref.ndim >= 1 and ref.shape[-1] >= 2:
            row["top1_agree"] = topk_agreement(ref, cand, 1)
            if ref.shape[-1] > 5:
                row["top5_agree"] = topk_agreement(ref, cand, 5)
        rows.append(row)
    return rows


def mixed_scale_axis(refs: list[np.ndarray]) -> tuple[int | None, float]:
    """The non-batch axis whose slices' RMS differ most, if they differ by SLICE_SPREAD or more; only an axis of the
    same length in every sample (a sentence's tokens in variable-length samples are not slices, its classes are)."""
    shape = refs[0].shape
    best_axis, best_spread = None, 0.0
    for axis in slice_axes(shape):
        if any(ref.ndim != len(shape) or ref.shape[axis] != shape[axis] for ref in refs):
            continue  # its length varies from sample to sample: no fixed slices to compare (as stream_compare)
        rms = _slice_rms(refs, axis)
        positive = rms[rms > 0]
        if positive.size < 2:
            continue
        spread = float(positive.max() / positive.min())
        if spread > best_spread:
            best_axis, best_spread = axis, spread
    if best_spread < SLICE_SPREAD:
        return None, best_spread
    return best_axis, best_spread


def slice_axes(shape: tuple[int, ...]) -> list[int]:
    """The axes of a per-sample output shape that may hold fields of different scales: not the batch axis, none
    longer than MAX_SLICES, and not the spatial grid of a [C, H, W] or [H, W, C] map (output_kinds.grid_axes)."""
    grid = grid_axes(shape)
    return [axis for axis in range(1 if len(shape) > 1 else 0, len(shape))
            if 2 <= shape[axis] <= MAX_SLICES and axis not in grid]


def _slice_rms(refs: list[np.ndarray], axis: int) -> np.ndarray:
    total = np.zeros(refs[0].shape[axis])
    count = 0
    for ref in refs:
        values = np.moveaxis(np.nan_to_num(ref.astype(np.float64), posinf=0, neginf=0), axis, 0)
        flat = values.reshape(values.shape[0], -1)
        total += (flat ** 2).sum(axis=1)
        count += flat.shape[1]
    return np.sqrt(total / max(count, 1))


def _slice_rows(name: str, refs: list[np.ndarray], cands: list[np.ndarray], axis: int) -> list[dict]:
    size = refs[0].shape[axis]
    accumulators = [Accumulator() for _ in range(size)]
    for ref, cand in zip(refs, cands):
        ref_slices = np.moveaxis(ref.astype(np.float64), axis, 0).reshape(size, -1)
        cand_slices = np.moveaxis(cand.astype(np.float64), axis, 0).reshape(size, -1)
        for index in range(size):
            finite = np.isfinite(ref_slices[index]) & np.isfinite(cand_slices[index])
            accumulators[index].add(ref_slices[index][finite], cand_slices[index][finite])
    return [
        {"output": name, "axis": axis, "index": index,
         "ref_rms": (acc.ref_sq / acc.count) ** 0.5 if acc.count else None,
         "cosine": acc.cosine(), "sqnr_db": acc.sqnr_db(), "max_abs": acc.max_abs, "rel_l2": acc.rel_l2()}
        for index, acc in enumerate(accumulators)
    ]


def looks_like_probabilities(samples: Samples, name: str) -> bool:
    """True when every row along the last axis is a probability vector (a softmax output)."""
    for sample in samples:
        values = np.asarray(sample[name], dtype=np.float64)
        if values.ndim == 0 or values.shape[-1] < 2 or not np.isfinite(values).all():
            return False
        if values.min() < -1e-6 or values.max() > 1 + 1e-6:
            return False
        if not np.allclose(values.sum(axis=-1), 1.0, atol=1e-3):
            return False
    return bool(samples)
