"""The report's task-level section (collect --postprocess): plain frozen data for the templates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.analysis.saturation import control_samples, first_samples

ROWS_LIMIT = 20  # disagreeing samples listed per pair; the bundle's task table has them all


@dataclass(frozen=True)
class TaskPairView:
    id: str
    purpose: str
    reference: str
    candidate: str
    samples: int
    agreement: float
    disagreeing: int
    rows: tuple[dict[str, Any], ...]  # disagreeing samples: sample, differing, reference, candidate, raw/flip rel L2
    rows_total: int


@dataclass(frozen=True)
class TaskView:
    decode: str  # "decode_cls.py:decode"
    compare: str  # "compare() from the script" or the generic rule
    scored: bool  # the script's compare() gave each sample's score (any value in [0, 1]), not the generic field rule
    stages: tuple[dict[str, Any], ...]  # stage, status, samples, fields, error
    app: dict[str, Any] | None  # source, kind, stage, samples, fields of --task-results; error: why not compared
    pairs: tuple[TaskPairView, ...]
    # The quantized stage on the first samples only, where control stages ran on those (the saturation and calibration
    # checks: 32 of 60): samples, candidate, agreement, disagreeing. A face detector's table read QDQ 0.619 on 60 beside
    # its unfused control's 0.469 on 32, as if the control did worse; on the same 32 both changed 19 images.
    same_samples: tuple[dict[str, Any], ...] = ()


GENERIC = "generic: exact for str/int/bool fields, within 1% for floats, length ratio for arrays of different length"


def build_task(ctx: Context) -> TaskView | None:
    """The task section, or None when the bundle was collected without --postprocess."""
    task = ctx.task
    if task is None:
        return None
    post = task.get("postprocess", {})
    source = str(post.get("source", "")).replace("\\", "/").rsplit("/", 1)[-1]
    stages = tuple({"stage": s["stage"], "status": s["status"], "samples": s.get("samples"),
                    "fields": ", ".join(s.get("fields", [])), "error": s.get("error") or ""}
                   for s in task.get("stages", []))
    app = task.get("task_results")
    app_view = None if not isinstance(app, dict) else {
        "source": app.get("source"), "kind": app.get("kind"), "stage": app.get("stage"),
        "samples": app.get("samples"), "fields": ", ".join(app.get("fields", [])), "error": app.get("error") or ""}
    comparisons = task.get("comparisons", [])
    return TaskView(decode=f"{source}:{post.get('function', 'decode')}",
                    compare="compare() from the script" if post.get("compare") else GENERIC,
                    scored=bool(post.get("compare")),
                    stages=stages, app=app_view, pairs=tuple(_pair(ctx, c) for c in comparisons),
                    same_samples=_same_samples(ctx, comparisons))


def _same_samples(ctx: Context, comparisons: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The quantization pair scored again on each smaller sample count a pair of the same reference ran on (its
    first samples: the checks' controls run on those)."""
    main = next((c for c in comparisons if c.get("purpose") == "quantization"), None)
    if main is None:
        return ()
    chosen = {control_samples(ctx, c["candidate"], int(c["samples"])): None for c in comparisons
              if c is not main and c.get("reference") == main["reference"]
              and 0 < int(c["samples"]) < int(main["samples"])}
    by_sample = {int(r["sample"]): float(r["agreement"]) for r in ctx.task_rows(main["id"])}
    found = []
    for indices in sorted(chosen, key=lambda i: (len(i), i)):
        scores = [by_sample[i] for i in indices if i in by_sample]
        if len(scores) == len(indices):
            found.append({"samples": len(indices), "of": int(main["samples"]), "candidate": main["candidate"],
                          "where": _where(indices), "agreement": sum(scores) / len(scores),
                          "disagreeing": sum(a < 1.0 for a in scores)})
    return tuple(found)


def _where(indices: tuple[int, ...]) -> str:
    """The controls' samples in words: "the first 32", or "32 chosen (those the QDQ model decides otherwise first)"."""
    if first_samples(indices):
        return f"the first {len(indices):,}"
    return f"{len(indices):,} chosen (the samples whose decisions the QDQ model changes first, then a spread)"


def _pair(ctx: Context, comparison: dict[str, Any]) -> TaskPairView:
    rows = [r for r in ctx.task_rows(comparison["id"]) if r["agreement"] < 1.0]
    shown = tuple({"sample": r["sample"], "agreement": r["agreement"], "differing": r["differing"].replace(";", ", "),
                   "reference": r["reference"], "candidate": r["candidate"], "raw_rel_l2": r["raw_rel_l2"],
                   "flip_rel_l2": r["flip_rel_l2"]} for r in rows[:ROWS_LIMIT])
    return TaskPairView(comparison["id"], comparison["purpose"], comparison["reference"], comparison["candidate"],
                        comparison["samples"], float(comparison["agreement"]), comparison["disagreeing"], shown, len(rows))


def task_agreement_of(ctx: Context, reference: str, candidate: str) -> tuple[float, int, int] | None:
    """(agreement, disagreeing, samples) of the task comparison of a stage pair, for the stage matrix."""
    c = ctx.task_of_pair(reference, candidate)
    return None if c is None else (float(c["agreement"]), int(c["disagreeing"]), int(c["samples"]))
