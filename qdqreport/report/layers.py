"""The report's per-layer section (collect --per-layer), built from a Context: plain frozen data for the templates."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.analysis.evidence import judged, judged_words, target_words, whatif_cosines_shown
from qdqreport.analysis.layers import (clipping_quantizers, first_divergence, fp16_overflows, layer_tables,
                                       skipped_words, underused_quantizers, worst_local)
from qdqreport.fixes import exclusion, exclusion_note, requantize_command, trials_note

TOP_N = 15
LIST_LIMIT = 20


@dataclass(frozen=True)
class LayersView:
    """Per-layer error along the graph, the first divergence, Q-node range use, what-if trials, FP16 overflows."""

    samples: int | None
    of_samples: int | None  # the evaluation samples there were, when the statistics read fewer (a spread subset)
    aligned_tensors: int
    aligned_weights: int
    local: bool
    local_error: str | None
    tensors: tuple[str, ...]  # activations in QDQ topological order (plot x axis)
    accumulated_sqnr: tuple[float | None, ...]
    local_sqnr: tuple[float | None, ...]
    first_divergence: dict[str, Any] | None
    first_position: int | None
    top: tuple[dict[str, Any], ...]  # worst local error first
    weights: tuple[dict[str, Any], ...]  # worst weight SQNR first
    clipping: tuple[dict[str, Any], ...]
    underused: tuple[dict[str, Any], ...]
    qnodes_total: int
    overflows: tuple[dict[str, Any], ...]
    whatif: tuple[dict[str, Any], ...]
    whatif_summary: dict[str, Any] | None
    whatif_command: str
    whatif_op_type_command: str
    skipped_tensors: int = 0  # pairs the names gave whose two sides are not the same quantity, not compared
    skipped_reasons: str = ""  # "2 of another shape, 3 fused with the next node"
    skipped_hint: bool = False  # some differ in shape or type: the FP32 model is not the one the QDQ model came from
    skipped_reason: str | None = None  # the whole pass was skipped, and why (no tables then)
    whatif_note: str = ""  # what the command excludes instead of nodes the quantizer cannot exclude
    whatif_trials_note: str = ""
    whatif_target: str = ""  # what "target met" means in that search (analysis/evidence.target_words)
    whatif_before: str = ""  # the baseline and the chosen set as the report judges the outputs; "" before 2026-11-27
    whatif_after: str = ""
    whatif_op_type_judged: str = ""  # the whole op type excluded, as the report judges the outputs


def build_layers(ctx: Context) -> LayersView | None:
    """The per-layer section, or None when the bundle has no per-layer tables."""
    tables = layer_tables(ctx)
    if tables is None:
        return _skipped(ctx.layers_summary or {})
    first = first_divergence(tables)
    summary = tables.whatif_summary or None
    trials = tuple(tables.whatif)
    if summary and not whatif_cosines_shown(ctx, summary):
        summary, trials = _without_cosines(summary), tuple(dataclasses.replace(t, cosine=None) for t in trials)
    chosen = (summary or {}).get("chosen") or {}
    proven = exclusion(chosen["nodes"]) if chosen.get("reached") and chosen.get("nodes") else None
    op_type = (summary or {}).get("op_type") or {}
    return LayersView(
        samples=tables.summary.get("samples"), of_samples=_subset_of(tables.summary), aligned_tensors=len(tables.activations),
        aligned_weights=len(tables.weights), local=tables.has_local, local_error=tables.summary.get("local_error"),
        tensors=tuple(r["tensor"] for r in tables.activations),
        accumulated_sqnr=tuple(_finite(r.get("sqnr_db")) for r in tables.activations),
        local_sqnr=tuple(_finite(r.get("local_sqnr_db")) for r in tables.activations),
        first_divergence=first, first_position=tables.activations.index(first) + 1 if first else None,
        top=tuple(worst_local(tables, TOP_N)),
        weights=tuple(sorted(tables.weights, key=lambda r: _sort(r.get("sqnr_db")))[:TOP_N // 3]),
        clipping=tuple(clipping_quantizers(tables, ctx.precision)[:LIST_LIMIT]), underused=tuple(underused_quantizers(tables)[:LIST_LIMIT]),
        qnodes_total=len(tables.qnodes),
        overflows=tuple(fp16_overflows(tables, (ctx.precision or {}).get("float_dtype"))[:LIST_LIMIT]),
        whatif=trials, whatif_summary=summary,
        whatif_command=requantize_command(ctx, proven) if proven else "",
        whatif_note=exclusion_note(ctx, proven) if proven else "",
        whatif_trials_note=trials_note(ctx, [n for t in tables.whatif for n in str(t.get("excluded") or "").split(";") if n]),
        whatif_op_type_command=requantize_command(ctx, exclusion(op_types=[op_type["op_type"]])) if op_type.get("reached") else "",
        **_judged_words(summary),
        **_skipped_tensors(tables.summary),
    )


def _without_cosines(summary: dict[str, Any]) -> dict[str, Any]:
    """The what-if summary with its results' cosines removed (analysis/evidence.whatif_cosines_shown: outputs of
    fewer than 8 values a sample, where every trial reads 1.0000); the templates then quote the judgements alone."""
    return {**summary, **{key: {**summary[key], "cosine": None} for key in ("baseline", "chosen", "op_type")
                          if isinstance(summary.get(key), dict)}}


def _judged_words(summary: dict[str, Any] | None) -> dict[str, str]:
    """What the what-if judged and its judgements in words, for the templates (collect/whatif.py)."""
    if not summary:
        return {}
    base, chosen, op_type = summary.get("baseline") or {}, summary.get("chosen") or {}, summary.get("op_type") or {}
    words = {"whatif_target": target_words(summary)}
    if judged(base) and judged(chosen):
        words.update(whatif_before=judged_words(base), whatif_after=judged_words(chosen))
    if judged(op_type):
        words["whatif_op_type_judged"] = judged_words(op_type)
    return words


def _skipped_tensors(summary: dict[str, Any]) -> dict[str, Any]:
    count = summary.get("skipped_tensors")
    if not isinstance(count, int) or count <= 0:
        return {}
    reasons = summary.get("skipped_reasons") or {}
    return {"skipped_tensors": count, "skipped_reasons": skipped_words(reasons),
            "skipped_hint": any(reasons.get(k) for k in ("shape", "dtype") if isinstance(reasons.get(k), int))}


def _skipped(summary: dict[str, Any]) -> LayersView | None:
    """The section of a pass recorded as skipped (layers/summary.json `status` "skipped"): its reason, nothing else."""
    if summary.get("status") != "skipped":
        return None
    return LayersView(
        samples=0, of_samples=None, aligned_tensors=0, aligned_weights=0, local=False, local_error=None, tensors=(),
        accumulated_sqnr=(), local_sqnr=(), first_divergence=None, first_position=None, top=(), weights=(), clipping=(),
        underused=(), qnodes_total=0, overflows=(), whatif=(), whatif_summary=None, whatif_command="",
        whatif_op_type_command="", skipped_reason=str(summary.get("reason") or "no reason recorded"),
        **_skipped_tensors(summary))


def _subset_of(summary: dict[str, Any]) -> int | None:
    """How many evaluation samples there were when the per-layer statistics read fewer (--per-layer-samples)."""
    count, total = summary.get("samples"), summary.get("of_samples")
    return total if isinstance(total, int) and isinstance(count, int) and total > count else None


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _sort(value: Any) -> float:
    number = _finite(value)
    return math.inf if number is None else number
