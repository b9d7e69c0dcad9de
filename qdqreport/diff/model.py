"""DiffModel: everything `qdqreport diff` shows, as frozen data built from two bundles.

diff.html, diff.md and diff.json are views of this one object (render.py); its verdict, and whether
AFTER regressed (--fail-on-regression) with the user's tolerance, come from verdict.py.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import is_control
from qdqreport.bundle.reader import Bundle
from qdqreport.diff.accuracy import AccuracyDiff, MetricPair, accuracy_diff
from qdqreport.diff.inputs import InputChange, input_changes, models_differ, refuse_different_models
from qdqreport.diff.precision import PrecisionDiff, precision_diff
from qdqreport.diff.verdict import DiffVerdict, Tolerance, build_verdict
from qdqreport.engine import EngineResult, run_rules
from qdqreport.findings import Finding
# The report's own alignment of two engines, reused so a diff and a report list the same layer pairs.
from qdqreport.report.engine import EngineDiffView, EngineView, _diff as engine_layer_diff, build_engine
from qdqreport.report.layers import build_layers
from qdqreport.report.model import jsonable


@dataclass(frozen=True)
class BundleRef:
    location: str
    created_at: str
    schema_version: str
    qdq_model: str


@dataclass(frozen=True)
class FindingRef:
    rule_id: str
    fingerprint: str
    severity: str  # in AFTER for new and persisting findings, in BEFORE for resolved ones
    title: str
    subject: str
    before: tuple[str, str] | None = None  # a persisting finding's (severity, title) in BEFORE: "16 layers" may now say "1"


@dataclass(frozen=True)
class FindingsDiff:
    resolved: tuple[FindingRef, ...]
    new: tuple[FindingRef, ...]
    persisting: tuple[FindingRef, ...]
    # BEFORE's findings absent from AFTER where only BEFORE decoded its outputs (collect --postprocess): AFTER could not
    # raise them, which is not the same as resolving them (confirm without --postprocess read "3 resolved" for a
    # model whose decisions had not changed). The reason is given whenever the decode is lost: a persisting finding's
    # severity may move for that alone.
    unjudged: tuple[FindingRef, ...] = ()
    unjudged_reason: str = ""


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
               tolerance: Tolerance = Tolerance(), target: str | None = None) -> DiffModel:
    """Read both bundles (folders or zips), refuse different models unless *force*, and compare everything.

    *target* (--target) judges both bundles' findings for one deployment runtime; None: each bundle's own."""
    before, after = Context(Bundle(before_path), target), Context(Bundle(after_path), target)
    refuse_different_models(before, after, force)
    views = (build_engine(before), build_engine(after))
    settings = tuple({s.stage_id: s.settings for s in view.stages} if view else {} for view in views)
    accuracy = accuracy_diff(before, after)
    precision = precision_diff(before.precision, after.precision)
    findings = _findings(run_rules(before), run_rules(after), _decode_lost(before, after))
    engines = _engines(before, after, views)
    return DiffModel(
        before=_ref(before), after=_ref(after),
        verdict=build_verdict(accuracy, precision, findings, tolerance, _missing(before, accuracy), engines),
        tolerance=tolerance, forced=models_differ(before, after),
        inputs=input_changes(before, after, settings), precision=precision, accuracy=accuracy, findings=findings,
        engines=engines, curves=_curves(before, after),
    )


def _missing(before: Context, accuracy: AccuracyDiff) -> tuple[str, ...]:
    controls = {c.id for c in before.comparisons if is_control(c)}
    infos = {c.id: c for c in before.comparisons}
    return tuple(f"{infos[i].candidate} vs {infos[i].reference}" for i in accuracy.only_before if i not in controls)


# --- findings, engines, curves ---------------------------------------------------------------
def _decode_lost(before: Context, after: Context) -> str:
    """Why AFTER cannot judge what BEFORE's decode judged, or ""."""
    if before.task is not None and after.task is None:
        return ("AFTER was collected without the --postprocess decode BEFORE has, so findings on decoded results "
                "could not be raised there: collect AFTER with the same --postprocess to compare them")
    return ""


def _findings(before: EngineResult, after: EngineResult, decode_lost: str = "") -> FindingsDiff:
    """Findings matched by rule id and fingerprint (the rule and its subject, stable across runs). *decode_lost*: why
    BEFORE's findings absent from AFTER are not judged resolved (_decode_lost)."""
    by_key = {(f.rule_id, f.fingerprint): f for f in before.findings}
    keys_after = {(f.rule_id, f.fingerprint) for f in after.findings}
    gone = tuple(_finding_ref(f) for f in before.findings if (f.rule_id, f.fingerprint) not in keys_after)
    return FindingsDiff(
        resolved=() if decode_lost else gone,
        new=tuple(_finding_ref(f) for f in after.findings if (f.rule_id, f.fingerprint) not in by_key),
        persisting=tuple(_finding_ref(f, by_key[(f.rule_id, f.fingerprint)]) for f in after.findings
                         if (f.rule_id, f.fingerprint) in by_key),
        unjudged=gone if decode_lost else (), unjudged_reason=decode_lost,
    )


def _finding_ref(finding: Finding, earlier: Finding | None = None) -> FindingRef:
    changed = earlier is not None and (earlier.severity, earlier.title) != (finding.severity, finding.title)
    return FindingRef(finding.rule_id, finding.fingerprint, finding.severity, finding.title, finding.subject,
                      (earlier.severity, earlier.title) if changed else None)


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
