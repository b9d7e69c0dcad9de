"""QR200 (layer first divergence) from the per-layer tables: the first tensor along the graph where QDQ diverges from FP32."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import DIVERGED_COSINE, LOST_SQNR_DB, collapsed_tensor, first_divergence, layer_tables
from qdqreport.findings import Finding, Fix, Metric, Series, Table
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import rounded
from qdqreport.rules._measured import layer_severity, reranked
from qdqreport.testing.layer_examples import accumulated_only, born_at_bn, healthy_chain

TABLE_ROWS = 12


@rule(id="QR200", slug="layer-first-divergence", title="The first tensor along the graph where QDQ diverges from FP32",
      examples=[Fires("a node in the middle of the chain collapses", born_at_bn),
                Fires("accumulated error only", accumulated_only),
                Quiet("every tensor within INT8 noise", healthy_chain)])
def layer_first_divergence(ctx: Context) -> Iterator[Finding]:
    """The first tensor, in topological order of the QDQ graph, whose accumulated cosine (QDQ model
    vs FP32 model, over all samples) falls below 0.99, or its SQNR below 3 dB (a tensor rescaled or pushed
    to a range's end keeps its cosine).

    Why it matters: the output only says that quantization hurts. Errors accumulate along the
    graph, so Polygraphy's mark-all comparison shows every tensor after the first bad one failing;
    the first divergence is where to look, and everything after it inherits the damage.

    Severity from impact: an error only when the tensor collapses (cosine under 0.9) and an output of
    the quantization comparison collapses too; a warning when the outputs only degrade; info when every
    output agrees (a healthy model's first divergence is where to look if asked, not a fault).

    Measured evidence outranks this heuristic (analysis/evidence.py): when the what-if refutes the
    exclusions (excluding every suspect wins back less than half the loss, or the unmodified QDQ
    model already meets the target: its outputs agree as the report judges them), the finding drops
    to a warning scored under the calibration findings and quotes the measurement; when it confirms
    them, it keeps its rank.

    Fix: read QR201 (the node that adds the error when fed FP32 inputs) and QR203 (the measured
    exclusions); exclude or re-calibrate the node at or just before this tensor.
    """
    tables = layer_tables(ctx)
    first = first_divergence(tables) if tables else None
    if first is None:
        return
    position = tables.activations.index(first)
    severity, score, measured = reranked(ctx, layer_severity(ctx, collapsed_tensor(first.cosine, first.sqnr_db)), 0.4,
                                         (first.node,))
    yield layer_first_divergence.finding(
        title=f"QDQ first diverges from FP32 at {first.node} ({first.op_type})",
        severity=severity, confidence=0.9, score=score, subject=first.tensor,
        stage=tables.comparison_id, tags=("localisation",),
        summary=(f"Tensor {first.tensor} (node {first.node}, {position + 1} of {len(tables.activations)} along "
                 f"the graph) is the first with accumulated cosine below {DIVERGED_COSINE} or SQNR below "
                 f"{LOST_SQNR_DB:g} dB: cosine {first.cosine:.4f}, SQNR {first.sqnr_db:.1f} dB."),
        evidence=(Metric("accumulated cosine", rounded(first.cosine), threshold=f"< {DIVERGED_COSINE}"),
                  Metric("accumulated SQNR", rounded(first.sqnr_db, 1), "dB", threshold=f"< {LOST_SQNR_DB:g}"),
                  Metric("position along the graph", position + 1, f"of {len(tables.activations)}"),
                  _sqnr_series(tables), _around(tables, position), *measured),
        fixes=(Fix("Find the node that adds the error (QR201) and confirm its exclusion by measurement (QR203)"),))


def _sqnr_series(tables) -> Series:
    values = tuple(float(r.sqnr_db) if r.sqnr_db is not None else 0.0 for r in tables.activations)
    return Series("Accumulated SQNR along the graph (QDQ vs FP32)", "points",
                  tuple(r.tensor for r in tables.activations), values, "SQNR (dB)")


def _around(tables, position: int) -> Table:
    start = max(0, position - 3)
    rows = tables.activations[start:start + TABLE_ROWS]
    return Table("Tensors around the first divergence",
                 ("#", "tensor", "node", "op type", "cosine", "SQNR dB", "local SQNR dB"),
                 tuple((start + i + 1, r.tensor, r.node, r.op_type, rounded(r.cosine),
                        rounded(r.sqnr_db, 1), rounded(r.local_sqnr_db, 1)) for i, r in enumerate(rows)))
