"""QR202 (FP16 overflow risk) from the per-layer tables: FP32 values beyond the FP16 range on a path that runs in FP16."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import FP16_MAX, fp16_overflows, layer_tables
from qdqreport.findings import Finding, Fix, Metric, Table
from qdqreport.fixes import Change, requantize_command
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import rounded
from qdqreport.testing.layer_examples import chain_precision, layer_chain, quantization_run
from qdqreport.wording import plural, verb

LIST_LIMIT = 15


def _overflow(b):
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(overflow_at=9))


def _overflow_in_fp32(b):
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(overflow_at=9, dtype="fp32"))


def _healthy(b):
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain())


@rule(id="QR202", slug="fp16-overflow-risk", title="FP32 values beyond the FP16 range on a path that runs in FP16",
      examples=[Fires("an activation reaches 1.3e5 in an FP16 graph", _overflow),
                Quiet("the same activation where the QDQ graph keeps FP32", _overflow_in_fp32),
                Quiet("every activation within FP16 range", _healthy)])
def fp16_overflow_risk(ctx: Context) -> Iterator[Finding]:
    """Activations whose FP32 values exceed 65504 (the largest FP16 number) while the QDQ graph
    computes them in FP16 (ModelOpt converts the non-quantized part to FP16 by default).

    Why it matters: in FP16 such a value becomes infinity, and infinity minus infinity or zero
    times infinity becomes NaN, which spreads to the outputs. It also happens only for some inputs,
    so a small evaluation set may not show it.

    Fix: re-quantize with the non-quantized part kept in FP32 (ModelOpt --high_precision_dtype fp32),
    or rescale the model so intermediate values stay small.
    """
    tables = layer_tables(ctx)
    if tables is None:
        return
    found = fp16_overflows(tables, (ctx.precision or {}).get("float_dtype"))
    if not found:
        return
    worst = found[0]
    rows = tuple((r.tensor, r.node, r.op_type, rounded(r.ref_absmax, 1), r.qdq_dtype or "")
                 for r in found[:LIST_LIMIT])
    yield fp16_overflow_risk.finding(
        title=f"{plural(len(found), 'FP16 activation')} {verb(len(found), 'exceeds')} the FP16 range in FP32",
        severity="error", confidence=0.9, score=0.7, subject=";".join(r.tensor for r in found[:5]),
        stage=tables.comparison_id, tags=("root_cause",),
        summary=(f"{worst.tensor} (node {worst.node}) reaches |x| = {worst.ref_absmax:.4g} in the FP32 model, "
                 f"beyond FP16's {FP16_MAX:.0f}, and the QDQ graph computes it in FP16."),
        evidence=(Metric("largest |x| in FP32", rounded(worst.ref_absmax, 1), threshold=f"> {FP16_MAX:.0f}"),
                  Table("FP16 tensors whose FP32 values overflow FP16", ("tensor", "node", "op type", "FP32 |x| max",
                                                                          "dtype in QDQ"), rows,
                        note=f"{len(found) - LIST_LIMIT} more" if len(found) > LIST_LIMIT else "")),
        fixes=(Fix("Re-quantize keeping the non-quantized part in FP32",
                   requantize_command(ctx, Change(float_part_fp32=True))),))
