"""The report's engine section: per-layer precision of each TensorRT engine, roll-ups, timing, and the
aligned difference of two engines. Built from Context.engines (analysis/trt_evidence.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.analysis.trt_align import align, diff_summary
from qdqreport.analysis.trt_evidence import EngineEvidence
from qdqreport.analysis.trt_layers import (Engine, Layer, LayerTime, dtype_reformats, int8_float_outputs,
                                           time_by_precision)

LAYER_LIMIT = 400  # layers listed per engine in HTML (Markdown cuts further); a bigger engine says how many more
DIFF_LIMIT = 200
SLOWEST_LIMIT = 20  # layers in the per-layer latency table (slowest first)
PRECISION_ORDER = ("int8", "uint8", "fp8", "int4", "fp4", "fp16", "bf16", "fp32", "fp64", "int32", "int64", "bool",
                   "unknown", "none")


@dataclass(frozen=True)
class EngineStageView:
    stage_id: str
    detailed: bool
    layers_total: int  # all layers, NoOp included
    counted: int  # layers in the roll-ups (NoOp excluded)
    precision_counts: dict[str, int]
    columns: tuple[str, ...]
    by_type: tuple[dict[str, Any], ...]  # {"kind", "counts": [one per column], "total"}
    layers: tuple[dict[str, Any], ...]  # cut to LAYER_LIMIT
    names: tuple[str, ...]  # layer names of a names-only layer info (cut to LAYER_LIMIT)
    has_onnx_names: bool
    flags: dict[str, int]  # "int8 layers with float output", "unfused Q/DQ reformats"
    time_by_precision: dict[str, float]  # average ms per precision, when a profile was imported
    profile_runs: int | None
    settings: dict[str, Any]
    problems: tuple[str, ...]
    sequence: tuple[tuple[str, str], ...]  # (precision, flag) per counted layer in execution order, for the plot
    slowest: tuple[dict[str, Any], ...] = ()  # profiled layers, slowest first (cut to SLOWEST_LIMIT)
    profiled_layers: int = 0  # layers with a time in the imported profile
    profile_ms: float | None = None  # sum of the average layer times: one inference, as profiled


@dataclass(frozen=True)
class EngineDiffView:
    first: str
    second: str
    summary: dict[str, int]
    rows: tuple[dict[str, Any], ...]  # aligned pairs that differ, and layers on one side only; cut to DIFF_LIMIT
    rows_total: int


@dataclass(frozen=True)
class EngineView:
    stages: tuple[EngineStageView, ...]
    diff: EngineDiffView | None


def build_engine(ctx: Context) -> EngineView | None:
    """The engine section, or None when no stage carries TensorRT artefacts."""
    engines = ctx.engines
    if not engines:
        return None
    views = tuple(_stage_view(stage_id, evidence) for stage_id, evidence in sorted(engines.items()))
    detailed = [(s, e.engine) for s, e in sorted(engines.items()) if e.engine is not None and e.engine.detailed]
    diff = _diff(detailed[0], detailed[1]) if len(detailed) >= 2 else None
    return EngineView(views, diff)


def _stage_view(stage_id: str, evidence: EngineEvidence) -> EngineStageView:
    engine = evidence.engine or Engine((), (), False, ())
    flagged = _flags(engine)
    counts = engine.precision_counts()
    columns = tuple(p for p in PRECISION_ORDER if p in counts) + tuple(sorted(set(counts) - set(PRECISION_ORDER)))
    times = {r.name: r.average_ms for r in evidence.profile}
    return EngineStageView(
        stage_id=stage_id, detailed=engine.detailed, layers_total=len(engine.layers) or len(engine.names),
        counted=len(engine.counted), precision_counts={c: counts[c] for c in columns}, columns=columns,
        by_type=tuple({"kind": kind, "counts": [row.get(c, 0) for c in columns], "total": sum(row.values())}
                      for kind, row in engine.type_precision_counts().items()),
        layers=tuple(_layer_row(layer, flagged.get(layer.index, ""), times.get(layer.name))
                     for layer in engine.layers[:LAYER_LIMIT]),
        names=() if engine.detailed else engine.names[:LAYER_LIMIT], has_onnx_names=engine.has_onnx_names,
        flags={"INT8 layers with float output": sum(f == "INT8 → float output" for f in flagged.values()),
               "unfused Q/DQ reformats": sum(f == "unfused Q/DQ" for f in flagged.values())},
        time_by_precision={k: round(v, 6) for k, v in time_by_precision(engine, evidence.profile).items()}
        if evidence.profile and engine.detailed else {},
        profile_runs=evidence.profile_runs, settings=_settings(evidence), problems=evidence.problems,
        sequence=tuple((layer.precision, flagged.get(layer.index, "")) for layer in engine.counted),
        slowest=_slowest(engine, evidence.profile, flagged), profiled_layers=len(evidence.profile),
        profile_ms=round(sum(r.average_ms for r in evidence.profile), 6) if evidence.profile else None)


def _slowest(engine: Engine, profile: tuple[LayerTime, ...], flagged: dict[int, str]) -> tuple[dict[str, Any], ...]:
    """The slowest profiled layers with their kind and precision (joined by layer name, as TREx does)."""
    total = sum(r.average_ms for r in profile) or None
    by_name = {layer.name: layer for layer in engine.layers}
    rows = []
    for record in sorted(profile, key=lambda r: (-r.average_ms, r.name))[:SLOWEST_LIMIT]:
        layer = by_name.get(record.name)
        rows.append({"name": record.name, "average_ms": record.average_ms, "median_ms": record.median_ms,
                     "share": record.average_ms / total if total else None,
                     "index": layer.index if layer else None, "kind": layer.kind if layer else "",
                     "precision": layer.precision if layer else "unmatched",
                     "output_precision": layer.output_precision if layer else "",
                     "flag": flagged.get(layer.index, "") if layer else ""})
    return tuple(rows)


def _flags(engine: Engine) -> dict[int, str]:
    flags = {layer.index: "INT8 → float output" for layer in int8_float_outputs(engine)}
    for layer in dtype_reformats(engine):
        flags[layer.index] = "unfused Q/DQ" if layer.origin == "QDQ" else "type conversion"
    return flags


def _layer_row(layer: Layer, flag: str, time_ms: float | None) -> dict[str, Any]:
    return {"index": layer.index, "name": layer.name, "kind": layer.kind, "layer_type": layer.layer_type,
            "origin": layer.origin, "precision": layer.precision, "output_precision": layer.output_precision,
            "onnx": ", ".join(layer.onnx_names), "tactic": layer.tactic, "time_ms": time_ms, "flag": flag}


def _settings(evidence: EngineEvidence) -> dict[str, Any]:
    """What is known about the build, one line each (empty when nothing was imported or recorded)."""
    out: dict[str, Any] = {}
    settings, log = evidence.settings, evidence.build_log
    version = evidence.details.get("tensorrt") or (log.tensorrt_version if log else None)
    if version:
        out["TensorRT"] = version
    if settings is not None:
        out.update({"precision": settings.precision, "obey precision constraints": settings.obey_precision_constraints,
                    "strongly typed": settings.strongly_typed, "calibrator": settings.calibrator})
    if log is not None:
        out.update({"build command": log.command, "layers with ignored precision": len(log.precision_ignored),
                    "calibrator ignored": bool(log.calibrator_ignored), "unsupported operators": ", ".join(log.unsupported_ops)})
    if evidence.details.get("source") == "imported":
        out["source"] = "imported (qdqreport import-trt)"
    return {k: v for k, v in out.items() if v not in (None, "")}


def _diff(first: tuple[str, Engine], second: tuple[str, Engine]) -> EngineDiffView:
    pairs = align(first[1], second[1])
    changed = [p for p in pairs if p.a is None or p.b is None or p.precision_changed or p.output_changed]
    rows = tuple({"how": p.how, "first": p.a.name if p.a else "", "first_precision": _io(p.a),
                  "second": p.b.name if p.b else "", "second_precision": _io(p.b),
                  "kind": (p.a or p.b).kind} for p in changed[:DIFF_LIMIT])
    return EngineDiffView(first[0], second[0], diff_summary(pairs), rows, len(changed))


def _io(layer: Layer | None) -> str:
    return "" if layer is None else f"{layer.precision} → {layer.output_precision}"
