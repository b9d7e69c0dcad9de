"""What changed in the inputs to a result: models, quantization options, calibration and evaluation data,
tool versions and TensorRT build settings. Each fact is one row with its value in both bundles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from qdqreport.analysis.context import Context
from qdqreport.errors import QdqReportError

MODELOPT_KEYS = ("calibration_method", "random_calibration", "already_quantized", "quantizable_nodes",
                 "nodes_to_quantize", "quantized_nodes", "non_quantizable_partitions")
STAT_KEYS = ("min", "max", "mean", "std")


@dataclass(frozen=True)
class InputChange:
    group: str  # "models", "quantization", "calibration", "evaluation", "tools", "TensorRT <stage>"
    item: str
    before: Any
    after: Any
    changed: bool


def models_differ(before: Context, after: Context) -> bool:
    """Both bundles record an FP32 model hash, and the hashes differ (a bundle of TensorRT artefacts only has none)."""
    hashes = [_model(ctx, "fp32").get("sha256") for ctx in (before, after)]
    return None not in hashes and hashes[0] != hashes[1]


def refuse_different_models(before: Context, after: Context, force: bool) -> None:
    """Two bundles of different FP32 models cannot be diffed meaningfully; --force says the user knows."""
    if force or not models_differ(before, after):
        return
    hashes = [str(_model(ctx, "fp32")["sha256"]) for ctx in (before, after)]
    raise QdqReportError(f"{after.bundle.location}: its FP32 model (sha256 {hashes[1][:12]}) is not the one of "
                         f"{before.bundle.location} (sha256 {hashes[0][:12]}); diff bundles of the same model, "
                         "or pass --force to compare them anyway")


def input_changes(before: Context, after: Context, engine_settings: tuple[Mapping[str, Mapping[str, Any]], ...]) -> tuple[InputChange, ...]:
    """Every input fact of both bundles (changed or not); *engine_settings* is (before, after) stage -> settings."""
    rows: list[InputChange] = []
    for role in ("fp32", "qdq"):
        rows += _pair("models", f"{role} model", _model_text(before, role), _model_text(after, role))
    rows += _quantization(before, after)
    for role, artifact in (("calibration", "calib"), ("evaluation", "eval")):
        rows += _data(role, artifact, before, after)
    rows += _pair("tools", "schema version", before.manifest.get("schema_version"), after.manifest.get("schema_version"))
    rows += _pair("tools", "qdqreport (collector)", _collector(before), _collector(after))
    tools_b, tools_a = before.manifest.get("tools") or {}, after.manifest.get("tools") or {}
    for name in sorted(set(tools_b) | set(tools_a)):
        rows += _pair("tools", name, _plain(tools_b.get(name)), _plain(tools_a.get(name)))
    settings_b, settings_a = engine_settings
    for stage in sorted(set(settings_b) | set(settings_a)):
        b, a = settings_b.get(stage) or {}, settings_a.get(stage) or {}
        for key in sorted(set(b) | set(a)):
            rows += _pair(f"TensorRT {stage}", key, b.get(key), a.get(key))
    return tuple(rows)


def _model(ctx: Context, role: str) -> dict[str, Any]:
    ref = (ctx.manifest.get("models") or {}).get(role)
    return ref if isinstance(ref, dict) else {}


def _model_text(ctx: Context, role: str) -> str | None:
    ref = _model(ctx, role)
    return f"{ref.get('path')} (sha256 {str(ref.get('sha256'))[:12]})" if ref else None


def _quantization(before: Context, after: Context) -> list[InputChange]:
    rows: list[InputChange] = []
    logs = [ctx.modelopt_log if isinstance(ctx.modelopt_log, dict) else {} for ctx in (before, after)]
    if any(logs):
        for key in MODELOPT_KEYS:
            rows += _pair("quantization", f"ModelOpt {key.replace('_', ' ')}", logs[0].get(key), logs[1].get(key))
    runs = [_quantizer_run(ctx) for ctx in (before, after)]
    for label, value in (("quantizer", _quantizer), ("quantizer call", lambda r: r.get("command")),
                         ("nodes excluded by the quantizer call", lambda r: _plain(r.get("excluded_nodes"))),
                         ("fix applied", lambda r: r.get("fix"))):
        rows += _pair("quantization", label, value(runs[0]), value(runs[1]))
    graphs = [ctx.precision if isinstance(ctx.precision, dict) else {} for ctx in (before, after)]
    rows += _pair("quantization", "QDQ graph float type", graphs[0].get("float_dtype"), graphs[1].get("float_dtype"))
    rows += _pair("quantization", "QDQ graph producer", _producer(graphs[0]), _producer(graphs[1]))
    return rows


def _data(role: str, artifact: str, before: Context, after: Context) -> list[InputChange]:
    refs = [(ctx.manifest.get("inputs") or {}).get(artifact) or {} for ctx in (before, after)]
    rows = _pair(role, "file", refs[0].get("source"), refs[1].get("source"))
    rows += _pair(role, "samples", refs[0].get("samples"), refs[1].get("samples"))
    rows += _pair(role, "sha256", refs[0].get("sha256"), refs[1].get("sha256"))
    stats = [_overall(ctx.calib_stats if artifact == "calib" else ctx.eval_stats) for ctx in (before, after)]
    for name in list(stats[0]) + [n for n in stats[1] if n not in stats[0]]:
        for key in STAT_KEYS:
            rows += _pair(role, f"{name} {key}", stats[0].get(name, {}).get(key), stats[1].get(name, {}).get(key))
    return rows


def _overall(stats: Any) -> dict[str, dict[str, Any]]:
    inputs = stats.get("inputs") if isinstance(stats, dict) else None
    return {str(name): dict(entry.get("overall") or {}) for name, entry in (inputs or {}).items() if isinstance(entry, dict)}


def _quantizer_run(ctx: Context) -> dict[str, Any]:
    """manifest["quantization"]: the quantizer `qdqreport confirm` ran to make the QDQ model; {} otherwise."""
    run = ctx.manifest.get("quantization")
    return run if isinstance(run, dict) else {}


def _quantizer(run: dict[str, Any]) -> str | None:
    return f"{run.get('quantizer')} {run.get('version')}" if run.get("quantizer") else None


def _producer(graph: dict[str, Any]) -> str | None:
    producer = graph.get("producer")
    return f"{producer.get('name')} {producer.get('version')}" if isinstance(producer, dict) else None


def _collector(ctx: Context) -> str | None:
    return (ctx.manifest.get("collector") or {}).get("version")


def _plain(value: Any) -> Any:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else value


def _pair(group: str, item: str, before: Any, after: Any) -> list[InputChange]:
    """One row, or none when neither bundle records the fact."""
    return [] if before is None and after is None else [InputChange(group, item, before, after, before != after)]
