"""The verdict of a diff: one sentence (restored, improved, unchanged or regression) with the headline
numbers and the precision cost, and whether AFTER regressed beyond the user's tolerance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from qdqreport.diff.accuracy import AccuracyDiff, ComparisonDiff, MetricPair, OutputDiff
from qdqreport.diff.precision import PrecisionDiff
from qdqreport.analysis.agreement import AGREE, COLLAPSE, COLLAPSED, COSINE_OK, DEGRADE, LEVEL_RANK, TOP1_OK, is_share

if TYPE_CHECKING:  # model.py imports this module
    from qdqreport.diff.model import EngineDiff, FindingsDiff


@dataclass(frozen=True)
class Tolerance:
    """How much worse AFTER may be before it counts as a regression (absolute differences)."""

    top1: float = 0.01  # top-1 agreement and decoded-decision agreement: one percentage point
    cosine: float = 0.001  # median cosine


@dataclass(frozen=True)
class MetricChange:
    """One judged metric of one stage pair and output, when it moved beyond the tolerance."""

    comparison: str  # "ort_qdq vs ort_fp32"
    output: str
    metric: str  # "top-1", "cosine", "decision agreement", or the measure that judged the output ("map IoU", ...)
    before: float
    after: float
    delta: float  # > 0 better
    levels: tuple[str, str] | None = None  # the judged levels before and after, where they differ


@dataclass(frozen=True)
class DiffVerdict:
    text: str
    kind: str  # "restored", "improved", "unchanged", "regression"
    regressions: tuple[MetricChange, ...]
    improvements: tuple[MetricChange, ...]
    missing: tuple[str, ...]  # comparisons BEFORE made that AFTER could not (a stage failed or was skipped)

    @property
    def regressed(self) -> bool:
        return self.kind == "regression"


def build_verdict(accuracy: AccuracyDiff, precision: PrecisionDiff | None, findings: FindingsDiff,
                  tolerance: Tolerance, missing: tuple[str, ...] = (), engines: tuple[EngineDiff, ...] = ()) -> DiffVerdict:
    """One sentence: restored / improved / unchanged / regression, the headline numbers, and the cost."""
    judged = [c for c in accuracy.comparisons if not c.control]
    moves = [m for c in judged for m in _moves(c, tolerance)]
    outputs = [o for c in judged for o in c.outputs]
    worse = tuple(sorted((m for m in moves if m.delta < 0), key=_size, reverse=True))
    better = tuple(sorted((m for m in moves if m.delta > 0 and not _cosine_only(m, outputs)), key=_size, reverse=True))
    numbers_only = [m for m in moves if m.delta > 0 and _cosine_only(m, outputs)]
    if worse or missing:
        kind = "regression"
        text = "regression: " + "; ".join([_move_text(m, with_pair=True) for m in _one_per_output(worse)[:2]]
                                          + [f"{pair} not compared in AFTER" for pair in missing[:2]])
        if better:
            text += f" (although {_move_text(better[0], with_pair=True)})"
    elif better:
        restored = any(_collapsed(o, "before") for o in outputs) and not any(_collapsed(o, "after") for o in outputs)
        kind = "restored" if restored else "improved"
        text = f"the fix {'restores' if restored else 'improves'} the outputs ({_move_text(better[0])})"
        still = next((o for o in outputs if _diverges(o, "after")), None)
        if not restored and still is not None:
            text += f" but they still diverge (cosine {_cos(still.cosine.after)})"
    elif not outputs:
        kind = "unchanged"
        text = "no stage outputs were compared in both bundles"
    elif numbers_only:
        kind = "unchanged"
        level = _level(next(o for o in outputs if o.output == numbers_only[0].output), "after")
        text = (f"no change in the decisions: the outputs are judged {_LEVEL_WORDS.get(level, level)} before and "
                f"after; only their cosine moved ({_move_text(numbers_only[0])})")
    else:
        kind = "unchanged"
        text = (f"no accuracy change beyond the tolerance (top-1 ±{tolerance.top1:.0%}, "
                f"cosine ±{tolerance.cosine:g})")
    text += _cost(precision) + "".join(_engine_tail(e) for e in engines) + _findings_tail(findings)
    return DiffVerdict(text, kind, worse, better, missing)


def _moves(comparison: ComparisonDiff, tolerance: Tolerance) -> list[MetricChange]:
    pair = f"{comparison.candidate} vs {comparison.reference}"
    candidates: list[tuple[str, str, MetricPair | None, float]] = []
    for output in comparison.outputs:
        if "internal" in output.levels:
            # Recurrent state is never decisive: its cosine moving is no headline (a new user's GTCRN diff read "the
            # fix improves the outputs (cosine 0.96 → 0.9952)", its tra_cache_out, unnamed, the enhanced frame unmoved).
            continue
        candidates += [(output.output, "top-1", output.top1, tolerance.top1),
                       (output.output, "cosine", output.cosine, tolerance.cosine)]
    candidates.append(("", "decision agreement", comparison.decision, tolerance.top1))
    judged = [m for m in (_judged_move(pair, o, tolerance) for o in comparison.outputs) if m is not None]
    return judged + [MetricChange(pair, name, metric, values.before, values.after, values.delta)
                     for name, metric, values, limit in candidates
                     if values is not None and values.delta is not None and abs(values.delta) > limit]


def _judged_move(pair: str, output: OutputDiff, tolerance: Tolerance) -> MetricChange | None:
    """The move of the measure that judged *output* (analysis/agreement.py): any change of its judged level, or a share
    of decisions (threshold decisions, map IoU, detections, exact matches) moving beyond the top-1 tolerance at the same
    level. A single-value probability has cosine 1 on both sides: a new user's VAD whose threshold decisions went from
    96.0% (degrades) to 97.3% (agrees) read "no accuracy change beyond the tolerance"."""
    before, after = output.judged
    levels = output.levels
    if before is None or after is None or any(level not in LEVEL_RANK for level in levels):
        return None
    (measure_b, value_b), (measure_a, value_a) = before, after
    if measure_b == measure_a == "top-1 agreement":
        return None  # top-1 is diffed on its own, on the paired samples
    metric = measure_b if measure_b == measure_a else f"{measure_b} / {measure_a}"
    if levels[0] != levels[1]:
        return MetricChange(pair, output.output, metric, value_b, value_a,
                            float(LEVEL_RANK[levels[0]] - LEVEL_RANK[levels[1]]), (levels[0], levels[1]))
    if measure_b != measure_a or not is_share(measure_b):
        return None  # other numbers move within their level; the top-1 tolerance is for shares of decisions
    delta = value_a - value_b  # a share agrees more the higher it is
    return MetricChange(pair, output.output, metric, value_b, value_a, delta) if abs(delta) > tolerance.top1 else None


_LEVEL_WORDS = {COLLAPSE: "collapsed", DEGRADE: "degraded", AGREE: "agreeing"}


def _cosine_only(move: MetricChange, outputs: list[OutputDiff]) -> bool:
    """A better cosine of an output judged by its decisions (it has top-1) that stays at the same judged level: no
    improvement a user can read (a new user's recognizer, collapsed before and after: "✅ the fix improves the outputs
    (cosine 0.57 → 0.57)" while its decoded agreement fell from 0.217% to 0.201%)."""
    if move.metric != "cosine":
        return False
    output = next((o for o in outputs if o.output == move.output), None)
    return (output is not None and output.top1 is not None
            and _level(output, "before") == _level(output, "after"))


def _one_per_output(moves: tuple[MetricChange, ...]) -> list[MetricChange]:
    """The biggest move of each stage pair and output (top-1 and cosine of one output tell one story)."""
    seen: set[tuple[str, str]] = set()
    return [m for m in moves if (m.comparison, m.output) not in seen and not seen.add((m.comparison, m.output))]


def _size(move: MetricChange) -> tuple:
    # A changed judged level first, then decisions (top-1, decoded agreement), then cosine; within a kind, the biggest.
    return (move.levels is not None, move.metric != "cosine", abs(move.delta))


def _move_text(move: MetricChange, with_pair: bool = False) -> str:
    values = f"{move.metric} {_value(move.metric, move.before)} → {_value(move.metric, move.after)}"
    if move.levels is not None:
        values += f", {_LEVEL_WORDS[move.levels[0]]} → {_LEVEL_WORDS[move.levels[1]]}"
    return values + (f" ({move.comparison})" if with_pair else "")


def _value(metric: str, value: float) -> str:
    """A metric's value as the report writes it: cosines to 2 or 4 places, shares as percentages, the rest (PSNR,
    relative error) to 3 significant digits."""
    if metric == "cosine":
        return _cos(value)
    if metric in ("top-1", "decision agreement"):
        return f"{value:.0%}"
    return f"{value:.1%}" if is_share(metric) else f"{value:.3g}"


def _cos(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if value < 0.99 else f"{value:.4f}"  # as the report writes cosines


def _collapsed(output: OutputDiff, side: str) -> bool:
    return _level(output, side) == COLLAPSE


def _diverges(output: OutputDiff, side: str) -> bool:
    return _level(output, side) not in (AGREE, "internal")


def _level(output: OutputDiff, side: str) -> str:
    """The side's judgement (analysis/agreement.py, the same one its report shows; "internal" for state).
    An OutputDiff built without one is judged by its cosine and top-1 with the same thresholds."""
    judged = output.levels[0 if side == "before" else 1]
    if judged is not None:
        return judged
    cosine, top1 = getattr(output.cosine, side), getattr(output.top1, side) if output.top1 else None
    if (cosine is not None and cosine < COLLAPSED) or (top1 is not None and top1 < COLLAPSED):
        return COLLAPSE
    return DEGRADE if (cosine is not None and cosine < COSINE_OK) or (top1 is not None and top1 < TOP1_OK) else AGREE


def _cost(precision: PrecisionDiff | None) -> str:
    if precision is None:
        return ""
    left, entered = precision.left_int8, precision.entered_int8
    if left and entered:
        return f", with {_nodes(entered)} entering INT8 and {left} leaving it"
    if left:
        return f", at the cost of {_nodes(left)} leaving INT8"
    if entered:
        return f", with {_nodes(entered)} entering INT8"
    weights_left, weights_entered = precision.weights_left_int8, precision.weights_entered_int8
    if weights_left or weights_entered:
        moved = " and ".join(part for part in (f"{_nodes(weights_left)} leaving INT8" if weights_left else "",
                                               f"{_nodes(weights_entered)} entering it" if weights_entered
                                               else "") if part)
        return f", with the weights of {moved} (their inputs still quantized)"
    if precision.changes_total:
        return f", {_nodes(precision.changes_total)} changing float precision"
    return ", with the same precision for every node"


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _engine_tail(engine: EngineDiff) -> str:
    before, after = engine.precision_counts
    moved = [f"{p} {before.get(p, 0)} → {after.get(p, 0)}" for p in (*before, *(k for k in after if k not in before))
             if before.get(p, 0) != after.get(p, 0)]
    return f"; {engine.stage} engine layers: {', '.join(moved)}" if moved else ""


def _findings_tail(findings: FindingsDiff) -> str:
    if not findings.resolved and not findings.new and not findings.unjudged:
        return ""
    unjudged = f", {len(findings.unjudged)} not judged in AFTER" if findings.unjudged else ""
    return (f"; findings: {len(findings.resolved)} resolved, {len(findings.new)} new, {len(findings.persisting)} "
            f"persisting{unjudged}")
