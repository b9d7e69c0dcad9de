"""Helpers shared by several rules: the order comparisons are read in, stage labels, table cells.

Not a rule module (the leading underscore keeps discover() from treating it as one). Agreement
thresholds and judgements (diverges, collapses) live in analysis/agreement.py, fix command lines
in qdqreport/fixes.py, the data recipes of the rules' Fires/Quiet examples in qdqreport/testing/recipes.py.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from qdqreport.analysis.agreement import AGREE, COLLAPSE, collapses, diverges
from qdqreport.analysis.context import ComparisonInfo, Context, OutputSummary
from qdqreport.analysis.fp16 import is_control
from qdqreport.analysis.layers import error_births, layer_tables
from qdqreport.analysis.quantizer import CrushedWeight

# Order in which comparisons are read: a divergence earlier in the pipeline is fixed first,
# because every later stage inherits it (reference doc 000, section 8).
PURPOSE_ORDER = ("export", "quantization", "fp16", "deployment")

STAGE_LABELS = {"reference": "framework", "ort_fp32": "ORT FP32", "ort_qdq": "ORT QDQ",
                "trt_fp16": "TRT FP16", "trt_int8": "TRT INT8", "ort_qdq_fp32": "ORT QDQ (float part FP32)",
                "ort_qdq_unfused": "ORT QDQ (unfused)", "ort_qdq_eval_ranges": "ORT QDQ (evaluation ranges)"}


def stage_label(stage_id: str) -> str:
    return STAGE_LABELS.get(stage_id, stage_id)


def comparison_label(comparison: ComparisonInfo) -> str:
    """"ORT FP32 → ORT QDQ" for the quantization comparison."""
    return f"{stage_label(comparison.reference)} → {stage_label(comparison.candidate)}"


def ordered_comparisons(ctx: Context) -> list[ComparisonInfo]:
    """The pipeline comparisons in PURPOSE_ORDER (unknown purposes last, by id); the FP16 check's control is no stage."""
    rank = {purpose: i for i, purpose in enumerate(PURPOSE_ORDER)}
    return sorted((c for c in ctx.comparisons if not is_control(c)), key=lambda c: (rank.get(c.purpose, len(rank)), c.id))


def diverging_outputs(ctx: Context, purpose: str) -> list[OutputSummary]:
    comparison = ctx.comparison(purpose)
    return [s for s in judged_summaries(ctx, comparison.id) if diverges(s)] if comparison else []


def outputs_diverge(ctx: Context, purpose: str = "quantization") -> bool:
    """Whether an output of the comparison diverges (degrades or collapses: analysis/agreement.py), or the user's own
    decode of it does not agree (collect --postprocess: Context.task_level)."""
    return bool(diverging_outputs(ctx, purpose)) or task_judgement(ctx, purpose) != AGREE


def outputs_collapse(ctx: Context, purpose: str = "quantization") -> bool:
    """Whether an output of the comparison collapses (analysis/agreement.py), or the user's own decode of it does
    (collect --postprocess: Context.task_level): what makes a root cause an error."""
    return any(collapses(s) for s in diverging_outputs(ctx, purpose)) or task_judgement(ctx, purpose) == COLLAPSE


def task_agreement(ctx: Context, comparison: ComparisonInfo) -> float:
    """The --postprocess decode's agreement (or mean compare() score) on *comparison*'s stage pair; 1.0 unmeasured."""
    task = ctx.task_of_pair(comparison.reference, comparison.candidate)
    return 1.0 if task is None else float(task["agreement"])


def task_judgement(ctx: Context, purpose: str) -> str:
    """agree | degrade | collapse of the user's decode on the comparison of *purpose* (agree when unmeasured)."""
    comparison = ctx.comparison(purpose)
    return AGREE if comparison is None else ctx.task_level(comparison)


def judged_summaries(ctx: Context, comparison_id: str) -> list[OutputSummary]:
    """Context's output summaries: judged once, by analysis/agreement.py (kept for the rules that call it)."""
    return ctx.output_summaries(comparison_id)


def clamp01(value: float) -> float:
    return 0.0 if math.isnan(value) else max(0.0, min(1.0, value))


def rounded(value: Any, digits: int = 4) -> Any:
    """A table cell: floats rounded for reading, non-finite floats kept as text, None as-is."""
    if isinstance(value, float):
        return value if not math.isfinite(value) else round(value, digits)
    return value


def weights_severity(ctx: Context, crushed: Sequence[CrushedWeight]) -> str:
    """Severity from impact: an error when the outputs collapse and Conv/Gemm/MatMul weights are crushed with
    elementwise constants too, or with the per-layer pass measuring a crushed weight's node adding the most error; a
    warning when they collapse otherwise (matrix weights alone, elementwise constants alone, or beside NaN/Inf the QDQ
    model writes); info when they do not. Degraded outputs alone tie nothing to
    the crushed channels: on real models quantized both ways (a text recognizer, the age predictor with every op
    in INT8), per-tensor weights degraded the outputs as much as per-channel ones, and a warning there ranked first
    as a false alarm."""
    if not crushed or not outputs_collapse(ctx):
        return "info"
    # NaN or Inf born in the QDQ model explain a collapse that rounding small weights to a few levels cannot: a new
    # user's DBNet (1 + exp(...) in INT8, +Inf on 99.5% of its map) collapsed alike with per-channel weights, and the
    # per-channel fix printed as this error's lowered its map IoU (0.789 -> 0.693) once the head was kept float.
    if quantization_nonfinite(ctx):
        return "warning"
    matrix = [w for w in crushed if w.matrix]
    if not matrix:
        return "warning"
    # Crushed Conv/Gemm/MatMul channels alone, measured against per-channel weights by new users: U2-Net-p's IoU
    # 0.003 -> 0.655; PP-OCRv4's DBNet under ModelOpt box recall 0.755 -> 0.787 with its map IoU lower; PP-OCRv5's CER
    # 99.7% -> 88.5%, where its crushed elementwise constants (an Add's bias, a BatchNorm written as a Mul) kept float
    # as well gave 10.6%. An error takes both kinds crushed, or the per-layer pass measuring a crushed weight's node
    # adding error itself most; else a warning, one hypothesis beside the collapse.
    if len(matrix) < len(crushed) or _adds_error(ctx, matrix):
        return "error"
    return "warning"


def _adds_error(ctx: Context, matrix: Sequence[CrushedWeight]) -> bool:
    """Whether the per-layer pass measured the node that adds the most error itself (the first of layers.error_births:
    local cosine below LOCAL_BAD_COSINE, fed FP32 inputs) reading one of *matrix*. Some node reading one among
    several that add error is no evidence: a new user's PP-OCRv4 DBNet had 9 of 64 Convs below 0.99 locally, 3 of
    them crushed-weight readers (0.97 at worst, the worst 0.93 elsewhere), and per-channel weights did not help."""
    tables = layer_tables(ctx)
    births = error_births(tables, 1) if tables is not None else []
    return bool(births) and births[0].get("node") in {w.consumer for w in matrix if w.consumer}


def quantization_nonfinite(ctx: Context) -> bool:
    """Whether some output of the QDQ model holds more NaN or Inf values than the FP32 model's in some sample (QR005's
    QDQ case)."""
    comparison = ctx.comparison("quantization")
    return comparison is not None and any(r.cand_nan > r.ref_nan or r.cand_inf > r.ref_inf
                                          for r in ctx.sample_rows(comparison.id))
