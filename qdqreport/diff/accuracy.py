"""Accuracy before and after: per stage pair and output, the headline metrics of both bundles and their
difference, and which samples improved or got worse. Reads Context tables only (no rules, no rendering).

Both bundles are summarised over the same samples when they were evaluated on the same data (same
evaluation file hash): with `collect --max-samples` one bundle may hold only the first N samples, and
comparing a median over 16 samples with one over 50 would credit the fix with a change of data.
"""

from __future__ import annotations

import dataclasses

import math
import statistics
from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.context import ComparisonInfo, Context
from qdqreport.analysis.fp16 import control_purpose, is_control

# A sample's cosine must move by more than this to count as improved or worse (float noise is ~1e-7).
SAMPLE_EPS = 1e-4
SAMPLE_LIST_LIMIT = 10


@dataclass(frozen=True)
class MetricPair:
    """One metric in both bundles and AFTER minus BEFORE; higher is better for every metric the diff shows."""

    before: float | None
    after: float | None
    delta: float | None

    @classmethod
    def of(cls, before: float | None, after: float | None) -> "MetricPair":
        finite = before is not None and after is not None and math.isfinite(before) and math.isfinite(after)
        return cls(before, after, after - before if finite else None)


@dataclass(frozen=True)
class SampleChange:
    sample: int
    cosine: MetricPair
    top1: MetricPair


@dataclass(frozen=True)
class OutputDiff:
    output: str
    samples: int  # samples summarised on each side (the shared ones when the evaluation data is the same)
    cosine: MetricPair  # median cosine
    cosine_min: MetricPair
    sqnr: MetricPair  # median SQNR, dB
    top1: MetricPair | None  # top-1 agreement, when the output is class scores in both bundles
    improved: int | None  # None when samples cannot be paired (different evaluation data)
    worse: int | None
    worst: tuple[SampleChange, ...]  # the samples that got worse most, then those that improved most (_most_changed)
    series: tuple[tuple[float | None, float | None], ...]  # (before, after) cosine per paired sample, for the plot
    levels: tuple[str | None, str | None] = (None, None)  # each side's judgement (analysis/agreement.py), "internal"
    # for recurrent state (never decisive); None when not judged
    judged: tuple[tuple[str, float] | None, tuple[str, float] | None] = (None, None)  # each side's deciding (measure,
    # value): "threshold decisions" 0.96; None when not judged or judged without a value


@dataclass(frozen=True)
class ComparisonDiff:
    id: str
    purpose: str
    reference: str
    candidate: str
    control: bool  # the FP16 check's control, not a pipeline stage pair
    outputs: tuple[OutputDiff, ...]
    decision: MetricPair | None  # decoded task-result agreement (collect --postprocess), when both have it


@dataclass(frozen=True)
class AccuracyDiff:
    comparisons: tuple[ComparisonDiff, ...]
    only_before: tuple[str, ...]  # comparison ids the AFTER bundle lacks (a stage failed or was skipped)
    only_after: tuple[str, ...]
    paired: bool  # samples paired by index (same evaluation data)
    samples_before: int
    samples_after: int
    note: str


def accuracy_diff(before: Context, after: Context) -> AccuracyDiff:
    """Every comparison both bundles made, metric by metric."""
    paired = _same_eval_data(before, after)
    ids_before = {c.id: c for c in before.comparisons}
    ids_after = {c.id: c for c in after.comparisons}
    shared = [c for c in before.comparisons if c.id in ids_after]
    n_before, n_after = _sample_count(before), _sample_count(after)
    limit = min(n_before, n_after) if paired else None
    # Each side's judgement covers its own samples: compared only where both hold as many.
    comparisons = tuple(_comparison(before, after, info, limit, n_before == n_after) for info in shared)
    return AccuracyDiff(comparisons, tuple(i for i in ids_before if i not in ids_after),
                        tuple(i for i in ids_after if i not in ids_before), paired, n_before, n_after,
                        _sample_note(paired, n_before, n_after))


def _same_eval_data(before: Context, after: Context) -> bool:
    """The same evaluation file (its sha256), or the same samples whatever held them (eval_stats' content_sha256:
    confirm replays a bundle's saved inputs through its own loader script)."""
    hashes = [(ctx.manifest.get("inputs") or {}).get("eval", {}) for ctx in (before, after)]
    digests = [h.get("sha256") if isinstance(h, dict) else None for h in hashes]
    contents = [(ctx.eval_stats or {}).get("content_sha256") for ctx in (before, after)]
    return ((digests[0] is not None and digests[0] == digests[1])
            or (isinstance(contents[0], str) and contents[0] == contents[1]))


def _sample_count(ctx: Context) -> int:
    first = next(iter(ctx.comparisons), None)
    return len({row["sample"] for row in ctx.sample_rows(first.id)}) if first else 0


def _sample_note(paired: bool, n_before: int, n_after: int) -> str:
    if not n_before or not n_after:
        sides = [name for name, n in (("BEFORE", n_before), ("AFTER", n_after)) if not n]
        return f"{' and '.join(sides)} compared no stage outputs"
    if not paired:
        return (f"the bundles were evaluated on different data ({n_before} and {n_after} samples): each side is "
                "summarised over its own samples and samples are not paired")
    if n_before != n_after:
        return (f"same evaluation data; BEFORE holds {n_before} samples, AFTER {n_after}: both are summarised over "
                f"the first {min(n_before, n_after)}, the samples both bundles hold")
    return f"same evaluation data, {n_before} samples paired by index"


def _comparison(before: Context, after: Context, info: ComparisonInfo, limit: int | None,
                judged: bool = True) -> ComparisonDiff:
    rows_b = _rows_by_output(before.sample_rows(info.id), limit)
    rows_a = _rows_by_output(after.sample_rows(info.id), limit)
    levels_b, levels_a = _levels(before, info.id), _levels(after, info.id)
    judged_b, judged_a = (_judged(before, info.id), _judged(after, info.id)) if judged else ({}, {})
    outputs = tuple(dataclasses.replace(_output(name, rows_b[name], rows_a[name], limit is not None),
                                        levels=(levels_b.get(name), levels_a.get(name)),
                                        judged=(judged_b.get(name), judged_a.get(name)))
                    for name in rows_b if name in rows_a)
    purpose = control_purpose(info) if is_control(info) else info.purpose
    decision = _decision(before, after, info)
    return ComparisonDiff(info.id, purpose, info.reference, info.candidate, is_control(info), outputs, decision)


def _levels(ctx: Context, comparison_id: str) -> dict[str, str | None]:
    """Output -> the level analysis/agreement.py judged on this side; "internal" for recurrent state (never decisive)."""
    return {s.output: "internal" if s.internal else s.level for s in ctx.output_summaries(comparison_id)}


def _judged(ctx: Context, comparison_id: str) -> dict[str, tuple[str, float]]:
    """Output -> (measure, value) that decided its level on this side (threshold decisions, map IoU, PSNR, ...)."""
    return {s.output: (s.judgement.measure, float(s.judgement.value)) for s in ctx.output_summaries(comparison_id)
            if s.judgement is not None and s.judgement.value is not None}


def _rows_by_output(rows: list[dict[str, Any]], limit: int | None) -> dict[str, dict[int, dict[str, Any]]]:
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for row in rows:
        if limit is None or row["sample"] < limit:
            out.setdefault(row["output"], {})[row["sample"]] = row
    return out


def _output(name: str, before: dict[int, dict[str, Any]], after: dict[int, dict[str, Any]], paired: bool) -> OutputDiff:
    top1_b, top1_a = _mean(before, "top1_agree"), _mean(after, "top1_agree")
    changes = _sample_changes(before, after) if paired else []
    worse = sorted((c for c in changes if _direction(c) < 0), key=lambda c: (c.cosine.delta or 0.0, c.sample))
    better = sorted((c for c in changes if _direction(c) > 0), key=lambda c: (-(c.cosine.delta or 0.0), c.sample))
    return OutputDiff(
        output=name, samples=min(len(before), len(after)) if paired else max(len(before), len(after)),
        cosine=MetricPair.of(_median(before, "cosine"), _median(after, "cosine")),
        cosine_min=MetricPair.of(_min(before, "cosine"), _min(after, "cosine")),
        sqnr=MetricPair.of(_median(before, "sqnr_db"), _median(after, "sqnr_db")),
        top1=MetricPair.of(top1_b, top1_a) if top1_b is not None and top1_a is not None else None,
        improved=len(better) if paired else None, worse=len(worse) if paired else None,
        worst=_most_changed(worse, better),
        series=tuple((c.cosine.before, c.cosine.after) for c in changes),
    )


def _most_changed(worse: list[SampleChange], better: list[SampleChange]) -> tuple[SampleChange, ...]:
    """The samples that got worse most, then those that improved most: half the list each where both have as many (a
    fix that restores 182 samples and costs 18 listed only the 18 worse ones: a new user's detector's diff read as a
    regression under its "restores" verdict)."""
    shown_worse = min(len(worse), max(SAMPLE_LIST_LIMIT // 2, SAMPLE_LIST_LIMIT - len(better)))
    return tuple(worse[:shown_worse] + better[:SAMPLE_LIST_LIMIT - shown_worse])


def _sample_changes(before: dict[int, dict[str, Any]], after: dict[int, dict[str, Any]]) -> list[SampleChange]:
    return [SampleChange(i, MetricPair.of(_num(before[i]["cosine"]), _num(after[i]["cosine"])),
                         MetricPair.of(before[i]["top1_agree"], after[i]["top1_agree"]))
            for i in sorted(before) if i in after]


def _direction(change: SampleChange) -> int:
    """+1 improved, -1 worse, 0 unchanged: a top-1 flip decides; otherwise the cosine, beyond float noise."""
    if change.top1.delta:
        return 1 if change.top1.delta > 0 else -1
    before, after = change.cosine.before, change.cosine.after
    if before is None or after is None:  # a NaN cosine (non-finite output) is worse than any number
        return (before is None) - (after is None)
    delta = after - before
    return 0 if abs(delta) <= SAMPLE_EPS else (1 if delta > 0 else -1)


def _decision(before: Context, after: Context, info: ComparisonInfo) -> MetricPair | None:
    values = []
    for ctx in (before, after):
        entry = next((c for c in (ctx.task or {}).get("comparisons", [])
                      if c["reference"] == info.reference and c["candidate"] == info.candidate), None)
        values.append(float(entry["agreement"]) if entry else None)
    return MetricPair.of(*values) if None not in values else None


def _values(rows: dict[int, dict[str, Any]], column: str) -> list[float]:
    # A missing or NaN metric counts as the worst value (-1), as in Context's summaries.
    values = (_num(row[column]) for row in rows.values())
    return [-1.0 if value is None else value for value in values]


def _median(rows: dict[int, dict[str, Any]], column: str) -> float | None:
    values = _values(rows, column)
    return statistics.median(values) if values else None


def _min(rows: dict[int, dict[str, Any]], column: str) -> float | None:
    values = _values(rows, column)
    return min(values) if values else None


def _mean(rows: dict[int, dict[str, Any]], column: str) -> float | None:
    present = [row[column] for row in rows.values() if row[column] is not None]
    return sum(present) / len(present) if present else None


def _num(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)
