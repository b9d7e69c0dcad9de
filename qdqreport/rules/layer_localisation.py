"""QR200 and QR201: where along the graph the quantized model first diverges, and which node adds the error."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import DIVERGED_COSINE, LOCAL_BAD_COSINE, error_births, first_divergence, layer_tables
from qdqreport.findings import Finding, Fix, Metric, Series, Table
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.agreement import COLLAPSED
from qdqreport.fixes import exclusion_args, modelopt_command
from qdqreport.rules._common import rounded
from qdqreport.testing.layer_examples import chain_precision, layer_chain, quantization_run, whatif_trials
from qdqreport.rules._measured import reranked

from qdqreport.wording import plural, verb
TABLE_ROWS = 12


def _born_at_bn(b):
    quantization_run(b, broken=True)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5))


def _healthy(b):
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain())


def _no_local(b):
    # Accumulated error only (local graph failed): QR201 cannot say where the error is born.
    rows = [{k: v for k, v in r.items() if not k.startswith("local_")} for r in layer_chain(born_at=5)]
    quantization_run(b, broken=True)
    b.layers(rows)


def _born_at_bn_refuted(b):
    # The what-if excluded the 12 suspects and stayed far from the target: QR201 stays, as a warning.
    rows, summary = whatif_trials(reached=False)
    summary = {**summary, "chosen": {**summary["chosen"], "cosine": 0.73, "top1": 0.53}}
    quantization_run(b, broken=True)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5), whatif=rows,
                                                               whatif_summary=summary)


@rule(id="QR200", slug="layer-first-divergence", title="The first tensor along the graph where QDQ diverges from FP32",
      examples=[Fires("a node in the middle of the chain collapses", _born_at_bn),
                Fires("accumulated error only", _no_local),
                Quiet("every tensor within INT8 noise", _healthy)])
def layer_first_divergence(ctx: Context) -> Iterator[Finding]:
    """The first tensor, in topological order of the QDQ graph, whose accumulated cosine (QDQ model
    vs FP32 model, over all samples) falls below 0.99.

    Why it matters: the output only says that quantization hurts. Errors accumulate along the
    graph, so Polygraphy's mark-all comparison shows every tensor after the first bad one failing;
    the first divergence is where to look, and everything after it inherits the damage.

    Measured evidence outranks this heuristic (analysis/evidence.py): when the what-if refutes the
    exclusions (excluding every suspect wins back less than half the loss, or the unmodified QDQ
    model already meets the target on the median sample), the finding drops to a warning scored
    under the calibration findings and quotes the measurement; when it confirms them, it keeps its rank.

    Fix: read QR201 (the node that adds the error when fed FP32 inputs) and QR203 (the measured
    exclusions); exclude or re-calibrate the node at or just before this tensor.
    """
    tables = layer_tables(ctx)
    first = first_divergence(tables) if tables else None
    if first is None:
        return
    position = tables.activations.index(first)
    severe = (first.cosine or 0.0) < COLLAPSED
    severity, score, measured = reranked(ctx, "error" if severe else "warning", 0.4)
    yield layer_first_divergence.finding(
        title=f"QDQ first diverges from FP32 at {first.node} ({first.op_type})",
        severity=severity, confidence=0.9, score=score, subject=first.tensor,
        stage=tables.comparison_id, tags=("localisation",),
        summary=(f"Tensor {first.tensor} (node {first.node}, {position + 1} of {len(tables.activations)} along "
                 f"the graph) is the first with accumulated cosine below {DIVERGED_COSINE}: cosine "
                 f"{first.cosine:.4f}, SQNR {first.sqnr_db:.1f} dB."),
        evidence=(Metric("accumulated cosine", rounded(first.cosine), threshold=f"< {DIVERGED_COSINE}"),
                  Metric("accumulated SQNR", rounded(first.sqnr_db, 1), "dB"),
                  Metric("position along the graph", position + 1, f"of {len(tables.activations)}"),
                  _sqnr_series(tables), _around(tables, position), *measured),
        fixes=(Fix("Find the node that adds the error (QR201) and confirm its exclusion by measurement (QR203)"),))


@rule(id="QR201", slug="layer-error-born", title="A node adds large error even when fed FP32 inputs",
      examples=[Fires("a BatchNormalization adds -1 dB on FP32 inputs", _born_at_bn),
                Fires("the same, refuted by the what-if: a warning that quotes it", _born_at_bn_refuted),
                Quiet("every node adds INT8-level noise", _healthy),
                Quiet("local error not measured", _no_local)])
def layer_error_born(ctx: Context) -> Iterator[Finding]:
    """Nodes whose LOCAL error is high: run as quantized in the QDQ graph (input Q/DQ, weight Q/DQ,
    FP16 precision) on the FP32 model's own input values, their output still has cosine below 0.99.

    Why it matters: accumulated error mixes what a node inherits with what it adds. A node with
    high local error is where the error is born: its input scale, weight quantization or precision
    cannot represent what it computes. Nodes after it only inherit the damage.

    Measured evidence outranks this heuristic (analysis/evidence.py): when the what-if refutes the
    exclusions, the finding drops to a warning scored under the calibration findings, with a line
    saying which measurement refuted it ("excluding the 12 suspects from INT8 changed the output
    cosine from X to Y"); when the what-if confirms them, it keeps its severity and score.

    Fix: exclude the node from quantization (ModelOpt --nodes_to_exclude, command below; QR203
    says whether the exclusion was measured to restore the outputs), or fix its calibration range.
    """
    tables = layer_tables(ctx)
    if tables is None or not tables.has_local:
        return
    births = error_births(tables)
    if not births:
        return
    worst = births[0]
    nodes = list(dict.fromkeys(r.node for r in births))
    severe = (worst.local_cosine or 0.0) < COLLAPSED
    rows = tuple((r.node, r.op_type, r.tensor, rounded(r.local_cosine), rounded(r.local_sqnr_db, 1),
                  rounded(r.cosine), rounded(r.sqnr_db, 1)) for r in births)
    severity, score, measured = reranked(ctx, "error" if severe else "warning", 0.6 if severe else 0.4)
    yield layer_error_born.finding(
        title=f"Error is born at {worst.node} ({worst.op_type})",
        severity=severity, confidence=0.85, score=score,
        subject=";".join(nodes[:5]), stage=tables.comparison_id, tags=("root_cause",),
        summary=(f"Fed the FP32 model's inputs, {worst.node} still produces cosine {worst.local_cosine:.4f} "
                 f"(local SQNR {worst.local_sqnr_db:.1f} dB); {plural(len(births), 'node')} {verb(len(births), 'adds')} error below cosine "
                 f"{LOCAL_BAD_COSINE} on their own."),
        evidence=(Metric("local cosine", rounded(worst.local_cosine), threshold=f"< {LOCAL_BAD_COSINE}"),
                  Metric("local SQNR", rounded(worst.local_sqnr_db, 1), "dB"),
                  Table("Nodes that add error (local = fed FP32 inputs; accumulated = inside the QDQ model)",
                        ("node", "op type", "tensor", "local cosine", "local SQNR dB", "accumulated cosine",
                         "accumulated SQNR dB"), rows), *measured),
        fixes=(Fix(f"Keep {'this node' if len(nodes) == 1 else 'these nodes'} out of INT8 (unmeasured until QR203 "
                   "confirms it)", modelopt_command(ctx, exclusion_args(nodes[:5]))),))


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
