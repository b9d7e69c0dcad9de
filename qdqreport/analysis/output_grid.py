"""Is a graph output itself quantized, and what does its 8-bit grid round to zero? One answer for QR002 (the
sensitive node whose Q/DQ pair sits on the output) and QR012 (whose unfused control keeps the same grid).

A QDQ model whose last Q/DQ pair sits on a graph output hands the application at most 256 values: a Softmax's
probabilities on a grid of step = the pair's scale, every probability under half a step exactly 0. Top-1 and
thresholds near the middle barely move, but a decode that takes a probability's log, divides by it or thresholds it
low breaks: the thirty-first part's FSMN VAD with its output Softmax in INT8 (scale 1/127) read 91% of its 248 state
probabilities as exactly 0 where FP32 gives 4e-10 to 0.004, 13 of 768 top-1 decisions changed, and funasr's
E2EVadModel, which takes the log of the silence probability, raised on 71 of 96 clips (79 clips cut otherwise against
the healthy recipe's 2). The unfused control (Q/DQ fusion disabled) keeps the same Q/DQ values, hence the same grid:
it cannot win this back, whatever it wins back in top-1.

The grid is read from the stored values, not guessed from names: the QDQ model's output takes at most
GRID_LEVELS distinct values on the stored samples while FP32's takes several times more (an output that is discrete
in FP32 too, token ids or a class index, is not a quantized grid).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from qdqreport.analysis.context import Context

GRID_LEVELS = 256  # the values an 8-bit Q/DQ pair can give
# Fewer levels than this is a constant or a two-valued output: a collapse other findings explain (an FP16 overflow, a
# calibration range 4x too wide), not a grid that only rounds the small values away.
GRID_MIN_LEVELS = 3
# FP32 must spread over this many times the QDQ output's levels for the levels to be the pair's grid, not the task's.
FINER_IN_FP32 = 4
# At or above this share of FP32's non-zero values read as exactly 0, the grid erases what a decode may read (a log,
# a ratio, a low threshold): the VAD above 0.91; healthy controls with float outputs 0 (their outputs are not gridded).
ZEROED_SHARE = 0.1
# A dense map or image is read by thresholds (its judged decisions: map IoU at the decision threshold) far above half
# a grid step: the values the grid rounds to 0 cannot cross one. A new user's text detector read "83% of the values
# FP32 gives as non-zero read exactly 0" (background at 1e-5, the threshold 0.2) ranked first; keeping its output
# Sigmoid float changed 33 of 200 samples' boxes against 32.
THRESHOLDED_PICTURES = ("map", "image")


@dataclass(frozen=True)
class GriddedOutput:
    output: str
    levels: int  # distinct values of the QDQ output on the stored samples
    reference_levels: int  # distinct values of FP32's
    step: float  # the smallest positive QDQ value: the grid's step when zero is on it
    zeroed: float  # share of FP32's non-zero values that are exactly 0 in the QDQ output
    samples: int

    @property
    def erases(self) -> bool:
        return self.zeroed >= ZEROED_SHARE


def gridded(name: str, reference: Sequence[np.ndarray], candidate: Sequence[np.ndarray]) -> GriddedOutput | None:
    """The grid of one output from its stored samples (FP32's and the QDQ model's), None when it is not on one."""
    pairs = [(np.asarray(r), np.asarray(c)) for r, c in zip(reference, candidate)
             if np.shape(r) == np.shape(c) and np.size(r) and np.issubdtype(np.asarray(c).dtype, np.floating)]
    if not pairs:
        return None
    ref = np.concatenate([r.ravel() for r, _ in pairs]).astype(np.float64)
    cand = np.concatenate([c.ravel() for _, c in pairs]).astype(np.float64)
    levels = np.unique(cand[np.isfinite(cand)])
    if not GRID_MIN_LEVELS <= levels.size <= GRID_LEVELS:
        return None
    reference_levels = int(np.unique(ref[np.isfinite(ref)]).size)
    if reference_levels < FINER_IN_FP32 * levels.size:
        return None
    nonzero = ref != 0
    positive = levels[levels > 0]
    return GriddedOutput(output=name, levels=int(levels.size), reference_levels=reference_levels,
                         step=float(positive.min()) if positive.size else float("nan"),
                         zeroed=float((nonzero & (cand == 0)).sum() / max(int(nonzero.sum()), 1)), samples=len(pairs))


def erasing_outputs(ctx: "Context", purpose: str = "quantization") -> list[GriddedOutput]:
    """The task outputs (not recurrent state) of *purpose*'s comparison that the QDQ model hands over on an 8-bit grid
    erasing at least ZEROED_SHARE of FP32's non-zero values, from the stored samples (none stored: none found)."""
    comparison = ctx.comparison(purpose)
    if comparison is None:
        return []
    reference, candidate = ctx.compared_outputs(comparison)
    found = []
    for summary in ctx.output_summaries(comparison.id):
        if summary.internal or (summary.kind is not None and summary.kind.kind in THRESHOLDED_PICTURES):
            continue
        grid = gridded(summary.output, _values(reference, summary.output), _values(candidate, summary.output))
        if grid is not None and grid.erases:
            found.append(grid)
    return found


def output_pair_writers(precision: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The nodes (precision-summary rows) that write a graph output through a Q/DQ pair: they feed a graph output
    through an activation pair no node reads."""
    precision = precision or {}
    ends = {g.get("tensor") for g in precision.get("qdq") or []
            if isinstance(g, dict) and g.get("kind") == "activation" and not g.get("consumers")}
    return [n for n in precision.get("nodes") or [] if isinstance(n, dict) and n.get("feeds_graph_output")
            and n.get("output_quantized") and set(n.get("outputs") or ()) & ends]


def grid_writer(precision: dict[str, Any] | None, output: str) -> dict[str, Any] | None:
    """The node (a precision-summary row) whose output the Q/DQ pair on graph output *output* quantizes: a node that
    feeds a graph output through an activation pair no node reads. Several such nodes (one per gridded output) are
    told apart by the pair's tensor: the output's own name, or quantize_static's "<output>_QuantizeLinear_Input"; a
    lone one is the writer whatever its tensor's name. None when none is found."""
    writers = output_pair_writers(precision)
    named = [n for n in writers if any(t == output or str(t).startswith(f"{output}_QuantizeLinear")
                                       for t in n.get("outputs") or ())]
    chosen = named or (writers if len(writers) == 1 else [])
    return chosen[0] if chosen else None


def _values(samples: list[dict[str, Any]], output: str) -> list[np.ndarray]:
    return [s[output] for s in samples if output in s]


def words(grid: GriddedOutput) -> str:
    """What the grid does to the output, in a sentence's middle."""
    return (f"output {grid.output} is itself quantized: the QDQ model gives it {grid.levels} distinct values (FP32 "
            f"{grid.reference_levels}) on the {grid.samples} stored samples, on a step of {grid.step:.3g}, and "
            f"{grid.zeroed:.0%} of the values FP32 gives as non-zero read exactly 0")
