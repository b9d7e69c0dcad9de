"""The report's precision-summary and input-statistics sections, built from a Context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.context import Context

NODE_LIST_LIMIT = 50  # non-INT8 nodes listed in the report; findings carry the full lists they need
INT8_PRECISIONS = ("int8", "uint8")
PRECISION_ORDER = ("int8", "uint8", "int4", "fp8", "fp16", "bf16", "fp32")
BASE_PRECISIONS = ("int8", "uint8", "fp16", "fp32")  # always shown, so an all-INT8 table still says so
COUNT_KEYS = ("nodes", "compute_nodes", "quantized_nodes", "q_nodes", "dq_nodes")
STAT_KEYS = ("min", "max", "mean", "std")
MODELOPT_KEYS = ("total_nodes", "quantizable_nodes", "nodes_to_quantize", "quantized_nodes",
                 "non_quantizable_partitions", "calibration_method", "random_calibration", "already_quantized")


@dataclass(frozen=True)
class PrecisionView:
    """How the QDQ graph is quantized (precision_summary.json) and what ModelOpt logged."""

    float_dtype: str
    counts: dict[str, Any]  # nodes, compute_nodes, quantized_nodes, q_nodes, dq_nodes
    columns: tuple[str, ...]  # the precisions of the by-op-type table, in a fixed order
    by_op_type: tuple[dict[str, Any], ...]  # {"op_type", "counts": [one per column], "total"}
    non_int8: tuple[dict[str, Any], ...]  # compute nodes not in INT8/UINT8, graph order, cut to NODE_LIST_LIMIT
    non_int8_total: int
    sensitive: tuple[dict[str, Any], ...]
    modelopt: dict[str, Any] | None


@dataclass(frozen=True)
class InputsView:
    """Evaluation vs calibration statistics per model input, and how inputs use the INT8 range."""

    eval_source: str
    eval_samples: int | None
    calib_source: str
    calib_samples: int | None
    rows: tuple[dict[str, Any], ...]  # {"input", "eval": {min,max,mean,std} | None, "calib": ... | None}
    range_use: tuple[dict[str, Any], ...]



# --- precision summary ----------------------------------------------------------------------
def build_precision(ctx: Context) -> PrecisionView | None:
    """The precision section, or None when the bundle has neither a precision summary nor a ModelOpt log."""
    summary, log = ctx.precision, ctx.modelopt_log
    if not isinstance(summary, dict) and not isinstance(log, dict):
        return None
    summary = summary if isinstance(summary, dict) else {}
    by_op = summary.get("by_op_type") or {}
    present = {p for counts in by_op.values() for p in counts}
    columns = tuple(p for p in PRECISION_ORDER if p in present or p in BASE_PRECISIONS) \
        + tuple(sorted(present - set(PRECISION_ORDER)))
    rows = sorted(({"op_type": op, "counts": [int(counts.get(p, 0)) for p in columns],
                    "total": int(sum(counts.values()))} for op, counts in by_op.items()),
                  key=lambda row: (-row["total"], row["op_type"]))
    nodes = sorted((n for n in summary.get("nodes") or [] if n.get("precision") not in INT8_PRECISIONS),
                   key=lambda n: (n.get("index", 0), str(n.get("name"))))
    return PrecisionView(
        float_dtype=str(summary.get("float_dtype") or ""), counts={k: (summary.get("counts") or {}).get(k) for k in COUNT_KEYS},
        columns=columns, by_op_type=tuple(rows),
        non_int8=tuple(_node_row(n) for n in nodes[:NODE_LIST_LIMIT]), non_int8_total=len(nodes),
        sensitive=_sensitive_rows(ctx, summary.get("sensitive") or []),
        modelopt=_modelopt(log) if isinstance(log, dict) else None,
    )


def _node_row(node: dict[str, Any]) -> dict[str, Any]:
    return {"name": str(node.get("name")), "op_type": str(node.get("op_type")), "index": node.get("index"),
            "precision": str(node.get("precision")), "feeds_graph_output": bool(node.get("feeds_graph_output"))}


def _sensitive_rows(ctx: Context, sensitive: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """Sensitive nodes, joined with their output tensor's QDQ-vs-FP32 error where it was collected."""
    comparison = ctx.comparison("quantization")
    errors = {row["tensor"]: row for row in ctx.tensor_rows(comparison.id)} if comparison else {}
    rows = []
    for item in sensitive:
        error = errors.get(item.get("tensor"), {})
        rows.append({"node": str(item.get("node")), "op_type": str(item.get("op_type")),
                     "pattern": str(item.get("pattern")), "quantized": bool(item.get("quantized")),
                     "tensor": str(item.get("tensor")), "cosine": error.get("cosine"), "sqnr_db": error.get("sqnr_db")})
    return tuple(rows)


def _modelopt(log: dict[str, Any]) -> dict[str, Any]:
    warnings = [str(w) for w in log.get("warnings") or []]
    return {**{key: log.get(key) for key in MODELOPT_KEYS},
            "quantized_type_counts": dict(sorted((log.get("quantized_type_counts") or {}).items())),
            "warnings": warnings[:10], "warnings_total": len(warnings), "partial": _partial(log)}


def _partial(log: dict[str, Any]) -> bool:
    """The log lacks the end of a finished run (modelopt_log `complete` false: ModelOpt 0.47's --log_file, a failed
    run); a bundle written before `complete` was recorded: no quantized-node summary, which every finished run logs."""
    return log.get("complete") is False or ("complete" not in log and log.get("quantized_nodes") is None)


# --- input statistics -----------------------------------------------------------------------
def build_inputs(ctx: Context) -> InputsView | None:
    """Evaluation vs calibration statistics, or None when the bundle has none."""
    eval_stats, calib_stats, range_use = ctx.eval_stats, ctx.calib_stats, ctx.range_use
    if not any(isinstance(x, (dict, list)) for x in (eval_stats, calib_stats, range_use)):
        return None
    eval_inputs = _overall_stats(eval_stats)
    calib_inputs = _overall_stats(calib_stats)
    names = list(eval_inputs) + [n for n in calib_inputs if n not in eval_inputs]
    return InputsView(
        eval_source=_field(eval_stats, "source"), eval_samples=_field(eval_stats, "samples", None),
        calib_source=_field(calib_stats, "source"), calib_samples=_field(calib_stats, "samples", None),
        rows=tuple({"input": n, "eval": eval_inputs.get(n), "calib": calib_inputs.get(n)} for n in names),
        range_use=tuple(dict(r) for r in range_use or [] if isinstance(r, dict)),
    )


def _overall_stats(stats: Any) -> dict[str, dict[str, Any]]:
    inputs = stats.get("inputs") if isinstance(stats, dict) else None
    return {str(name): {k: (entry.get("overall") or {}).get(k) for k in STAT_KEYS}
            for name, entry in (inputs or {}).items()}


def _field(stats: Any, key: str, default: Any = "") -> Any:
    return stats.get(key, default) if isinstance(stats, dict) else default
