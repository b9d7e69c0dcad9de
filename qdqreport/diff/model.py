"""DiffModel: everything `qdqreport diff` shows, as frozen data built from two bundles, and its verdict.

diff.html, diff.md and diff.json are views of this one object (render.py); whether AFTER regressed
(--fail-on-regression) is decided here, with the user's tolerance.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import is_control
from qdqreport.bundle.reader import Bundle
from qdqreport.diff.accuracy import AccuracyDiff, ComparisonDiff, MetricPair, OutputDiff, accuracy_diff
from qdqreport.diff.inputs import InputChange, input_changes, models_differ, refuse_different_models
from qdqreport.diff.precision import PrecisionDiff, precision_diff
from qdqreport.engine import EngineResult, run_rules
from qdqreport.findings import Finding
# The report's own alignment of two engines, reused so a diff and a report list the same layer pairs.
from qdqreport.report_engine import EngineDiffView, EngineView, _diff as engine_layer_diff, build_engine
from qdqreport.report_layers import build_layers
from qdqreport.report_model import jsonable
from qdqreport.rules._common import COLLAPSED, COSINE_OK, TOP1_OK


@dataclass(frozen=True)
class Tolerance:
    """How much worse AFTER may be before it counts as a regression (absolute differences)."""

    top1: float = 0.01  # top-1 agreement and decoded-decision agreement: one percentage point
    cosine: float = 0.001  # median cosine


@dataclass(frozen=True)
class BundleRef:
    location: str
    created_at: str
    schema_version: str
    qdq_model: str


@dataclass(frozen=True)
class MetricChange:
    """One judged metric of one stage pair and output, when it moved beyond the tolerance."""

    comparison: str  # "ort_qdq vs ort_fp32"
    output: str
    metric: str  # "top-1", "cosine", "decision agreement"
    before: float
    after: float
    delta: float


@dataclass(frozen=True)
class FindingRef:
    rule_id: str
    fingerprint: str
    severity: str  # in AFTER for new and persisting findings, in BEFORE for resolved ones
    title: str
    subject: str


@dataclass(frozen=True)
class FindingsDiff:
    resolved: tuple[FindingRef, ...]
    new: tuple[FindingRef, ...]
    persisting: tuple[FindingRef, ...]


@dataclass(frozen=True)
class EngineDiff:
    stage: str
    precision_counts: tuple[dict[str, int], dict[str, int]]
    layers: EngineDiffView  # BEFORE's engine aligned with AFTER's, as the report aligns two engines


@dataclass(frozen=True)
class LayerCurves:
    """Accumulated SQNR along the QDQ graph in each bundle (collect --per-layer), empty on a side without it."""

    before_tensors: tuple[str, ...]
    before_sqnr: tuple[float | None, ...]
    after_tensors: tuple[str, ...]
    after_sqnr: tuple[float | None, ...]
    median_sqnr: MetricPair  # median accumulated SQNR over the measured activations, dB


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


@dataclass(frozen=True)
class DiffModel:
    before: BundleRef
    after: BundleRef
    verdict: DiffVerdict
    tolerance: Tolerance
    forced: bool  # --force: the FP32 models differ
    inputs: tuple[InputChange, ...]
    precision: PrecisionDiff | None
    accuracy: AccuracyDiff
    findings: FindingsDiff
    engines: tuple[EngineDiff, ...]
    curves: LayerCurves | None

    def to_dict(self) -> dict[str, Any]:
        return jsonable(asdict(self))


def build_diff(before_path: Path | str, after_path: Path | str, force: bool = False,
               tolerance: Tolerance = Tolerance()) -> DiffModel:
    """Read both bundles (folders or zips), refuse different models unless *force*, and compare everything."""
    before, after = Context(Bundle(before_path)), Context(Bundle(after_path))
    refuse_different_models(before, after, force)
    views = (build_engine(before), build_engine(after))
    settings = tuple({s.stage_id: s.settings for s in view.stages} if view else {} for view in views)
    accuracy = accuracy_diff(before, after)
    precision = precision_diff(before.precision, after.precision)
    findings = _findings(run_rules(before), run_rules(after))
    engines = _engines(before, after, views)
    return DiffModel(
        before=_ref(before), after=_ref(after),
        verdict=build_verdict(accuracy, precision, findings, tolerance, _missing(before, accuracy), engines),
        tolerance=tolerance, forced=models_differ(before, after),
        inputs=input_changes(before, after, settings), precision=precision, accuracy=accuracy, findings=findings,
        engines=engines, curves=_curves(before, after),
    )


# --- verdict ----------------------------------------------------------------------------------
def build_verdict(accuracy: AccuracyDiff, precision: PrecisionDiff | None, findings: FindingsDiff,
                  tolerance: Tolerance, missing: tuple[str, ...] = (), engines: tuple["EngineDiff", ...] = ()) -> DiffVerdict:
    """One sentence: restored / improved / unchanged / regression, the headline numbers, and the cost."""
    judged = [c for c in accuracy.comparisons if not c.control]
    moves = [m for c in judged for m in _moves(c, tolerance)]
    worse = tuple(sorted((m for m in moves if m.delta < 0), key=_size, reverse=True))
    better = tuple(sorted((m for m in moves if m.delta > 0), key=_size, reverse=True))
    outputs = [o for c in judged for o in c.outputs]
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
        candidates += [(output.output, "top-1", output.top1, tolerance.top1),
                       (output.output, "cosine", output.cosine, tolerance.cosine)]
    candidates.append(("", "decision agreement", comparison.decision, tolerance.top1))
    return [MetricChange(pair, name, metric, values.before, values.after, values.delta)
            for name, metric, values, limit in candidates
            if values is not None and values.delta is not None and abs(values.delta) > limit]


def _one_per_output(moves: tuple[MetricChange, ...]) -> list[MetricChange]:
    """The biggest move of each stage pair and output (top-1 and cosine of one output tell one story)."""
    seen: set[tuple[str, str]] = set()
    return [m for m in moves if (m.comparison, m.output) not in seen and not seen.add((m.comparison, m.output))]


def _size(move: MetricChange) -> tuple:
    # Decisions first (top-1, decoded agreement), then cosine; within a kind, the biggest move.
    return (move.metric != "cosine", abs(move.delta))


def _move_text(move: MetricChange, with_pair: bool = False) -> str:
    values = (f"{move.metric} {_cos(move.before)} → {_cos(move.after)}" if move.metric == "cosine"
              else f"{move.metric} {move.before:.0%} → {move.after:.0%}")
    return values + (f" ({move.comparison})" if with_pair else "")


def _cos(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if value < 0.99 else f"{value:.4f}"  # as the report writes cosines


def _collapsed(output: OutputDiff, side: str) -> bool:
    cosine, top1 = getattr(output.cosine, side), getattr(output.top1, side) if output.top1 else None
    return (cosine is not None and cosine < COLLAPSED) or (top1 is not None and top1 < COLLAPSED)


def _diverges(output: OutputDiff, side: str) -> bool:
    cosine, top1 = getattr(output.cosine, side), getattr(output.top1, side) if output.top1 else None
    return (cosine is not None and cosine < COSINE_OK) or (top1 is not None and top1 < TOP1_OK)


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
    if precision.changes_total:
        return f", {_nodes(precision.changes_total)} changing float precision"
    return ", with the same precision for every node"


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _engine_tail(engine: "EngineDiff") -> str:
    before, after = engine.precision_counts
    moved = [f"{p} {before.get(p, 0)} → {after.get(p, 0)}" for p in (*before, *(k for k in after if k not in before))
             if before.get(p, 0) != after.get(p, 0)]
    return f"; {engine.stage} engine layers: {', '.join(moved)}" if moved else ""


def _findings_tail(findings: FindingsDiff) -> str:
    if not findings.resolved and not findings.new:
        return ""
    return f"; findings: {len(findings.resolved)} resolved, {len(findings.new)} new, {len(findings.persisting)} persisting"


def _missing(before: Context, accuracy: AccuracyDiff) -> tuple[str, ...]:
    controls = {c.id for c in before.comparisons if is_control(c)}
    infos = {c.id: c for c in before.comparisons}
    return tuple(f"{infos[i].candidate} vs {infos[i].reference}" for i in accuracy.only_before if i not in controls)


# --- findings, engines, curves ---------------------------------------------------------------
def _findings(before: EngineResult, after: EngineResult) -> FindingsDiff:
    keys_before = {(f.rule_id, f.fingerprint) for f in before.findings}
    keys_after = {(f.rule_id, f.fingerprint) for f in after.findings}
    return FindingsDiff(
        resolved=tuple(_finding_ref(f) for f in before.findings if (f.rule_id, f.fingerprint) not in keys_after),
        new=tuple(_finding_ref(f) for f in after.findings if (f.rule_id, f.fingerprint) not in keys_before),
        persisting=tuple(_finding_ref(f) for f in after.findings if (f.rule_id, f.fingerprint) in keys_before),
    )


def _finding_ref(finding: Finding) -> FindingRef:
    return FindingRef(finding.rule_id, finding.fingerprint, finding.severity, finding.title, finding.subject)


def _engines(before: Context, after: Context, views: tuple[EngineView | None, EngineView | None]) -> tuple[EngineDiff, ...]:
    counts = [{s.stage_id: s.precision_counts for s in view.stages} if view else {} for view in views]
    out = []
    for stage in sorted(set(before.engines) & set(after.engines)):
        first, second = before.engines[stage].engine, after.engines[stage].engine
        if first is None or second is None or not (first.detailed and second.detailed):
            continue
        layers = engine_layer_diff((f"{stage} (before)", first), (f"{stage} (after)", second))
        out.append(EngineDiff(stage, (counts[0].get(stage, {}), counts[1].get(stage, {})), layers))
    return tuple(out)


def _curves(before: Context, after: Context) -> LayerCurves | None:
    views = build_layers(before), build_layers(after)
    if views[0] is None and views[1] is None:
        return None
    sides = [(v.tensors, v.accumulated_sqnr) if v else ((), ()) for v in views]
    medians = [statistics.median(finite) if finite else None
               for finite in ([x for x in sqnr if x is not None] for _, sqnr in sides)]
    return LayerCurves(sides[0][0], sides[0][1], sides[1][0], sides[1][1], MetricPair.of(*medians))


def _ref(ctx: Context) -> BundleRef:
    qdq = (ctx.manifest.get("models") or {}).get("qdq")
    return BundleRef(str(ctx.bundle.location), str(ctx.manifest.get("created_at", "")),
                     str(ctx.manifest.get("schema_version", "")), str(qdq.get("path")) if isinstance(qdq, dict) else "")
