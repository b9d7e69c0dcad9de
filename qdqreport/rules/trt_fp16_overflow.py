"""QR106: the TensorRT FP16 engine diverges from ONNX Runtime FP32: FP16 range or precision loss."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import FP16_MAX
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.agreement import collapses
from qdqreport.fixes import Change, model_file, requantize_command
from qdqreport.rules._common import diverging_outputs, rounded
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_graph, classifier_run
from qdqreport.rules._trt import headline
from qdqreport.testing.trt_dumps import RESNET_FP16, real_dump

ROWS_SHOWN = 10


def _fp16_overflows(b):
    # The final MatMul's FP32 activations reach 1.3e5: beyond FP16, so the engine saturates to Inf/NaN.
    logits = class_logits(24, seed=21)
    b.artifact("precision_summary", classifier_graph())
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=22))
    broken = classifier_run(logits, noise=2.0, seed=23)
    broken[3][CLS_OUTPUT][0, 0] = np.nan
    b.stage("trt_fp16", broken)
    b.tensors("quantization", [
        {"tensor": "linear_1.tmp_0", "node": "MatMul@0", "op_type": "MatMul", "samples": 24, "cosine": 0.999,
         "sqnr_db": 31.0, "max_abs": 1.2, "rel_l2": 0.03, "ref_absmax": 131072.0},
        {"tensor": "softmax_0.tmp_0", "node": "Softmax@0", "op_type": "Softmax", "samples": 24, "cosine": 0.9999,
         "sqnr_db": 40.0, "max_abs": 0.01, "rel_l2": 0.01, "ref_absmax": 1.0}])
    b.stage_file("trt_fp16", "layer_info", "layer_info.json", real_dump(RESNET_FP16))


def _fp16_agrees(b):
    logits = class_logits(24, seed=24)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("trt_fp16", classifier_run(logits, noise=0.003, seed=25))


@rule(id="QR106", slug="trt-fp16-overflow", title="The TensorRT FP16 engine diverges from FP32",
      examples=[Fires("activations beyond the FP16 range, NaN in the engine output", _fp16_overflows),
                Quiet("FP16 engine within FP16 rounding", _fp16_agrees)])
def trt_fp16_overflow(ctx: Context) -> Iterator[Finding]:
    """The fp16 comparison (ORT FP32 → TRT FP16) diverges; tied to FP32 activation ranges beyond 65504.

    Ranges come from the bundle's `tensors` tables: `ref_absmax` is the largest |x| ONNX Runtime
    FP32 produced for each marked tensor (sensitive nodes; every layer with --trt-mark-all). A
    tensor above 65504, the largest finite FP16 value, overflows to Inf in FP16; NaN/Inf in the
    engine outputs point the same way. Without either, the divergence is FP16 rounding
    accumulated through the network (lower confidence). An error when outputs collapse.

    Why it matters: a QDQ model deployed with FP16 enabled runs every non-quantized layer in FP16;
    if the FP16 engine of the FP32 model already diverges, INT8 is not the problem there.

    Fix: keep the overflowing layers in FP32 (TensorRT 10: --layerPrecisions with precision
    constraints; TensorRT 11: FP32 in the ONNX graph), scale the offending activations down in the
    model, or quantize with ModelOpt keeping the float part in FP32.
    """
    outputs = diverging_outputs(ctx, "fp16")
    if not outputs:
        return
    rows = {r.tensor: r for c in ctx.comparisons for r in ctx.tensor_rows(c.id) if r.ref_absmax is not None}
    beyond = sorted((r for r in rows.values() if r.ref_absmax > FP16_MAX), key=lambda r: -r.ref_absmax)
    nonfinite = sum(s.nonfinite_cand for s in outputs) - sum(s.nonfinite_ref for s in outputs)
    overflow = bool(beyond) or nonfinite > 0
    worst = min(outputs, key=lambda s: s.cosine_median)
    evidence = [Metric("median cosine TRT FP16 vs ORT FP32", rounded(worst.cosine_median), threshold="< 0.99"),
                Metric("NaN/Inf in the FP16 engine outputs", max(nonfinite, 0), threshold="> 0"),
                Metric("tensors beyond the FP16 range", len(beyond), threshold=f"|x| > {FP16_MAX:g}")]
    if beyond:
        evidence.append(Table("FP32 activation ranges beyond FP16", ("tensor", "node", "op type", "FP32 max |x|"),
                              tuple((r.tensor, r.node, r.op_type, rounded(r.ref_absmax, 1))
                                    for r in beyond[:ROWS_SHOWN])))
    elif not rows:
        evidence.append(Text("The bundle has no FP32 activation ranges (tensors table); collect with --trt-mark-all "
                             "or --per-layer to see which tensors leave the FP16 range."))
    fp16_engine = ctx.engines.get("trt_fp16")
    if fp16_engine is not None and fp16_engine.engine is not None and fp16_engine.engine.detailed:
        counts = fp16_engine.engine.precision_counts()
        evidence.append(Text("Engine layers by precision: " + ", ".join(f"{k} {v}" for k, v in counts.items())))
    yield trt_fp16_overflow.finding(
        title="FP16 overflows in the TensorRT FP16 engine" if overflow else
        "The TensorRT FP16 engine loses precision", severity="error" if collapses(worst) or nonfinite > 0 else "warning",
        confidence=0.85 if overflow else 0.55, score=0.8 if overflow else 0.5, subject="fp16", stage="fp16",
        summary=(f"TRT FP16 diverges from ORT FP32 ({headline(worst)})"
                 + (f"; {len(beyond)} FP32 activations exceed {FP16_MAX:g}, e.g. {beyond[0].tensor} "
                    f"({beyond[0].ref_absmax:.3g})" if beyond else "")
                 + (f"; {nonfinite} NaN/Inf values in the engine outputs" if nonfinite > 0 else "")),
        evidence=tuple(evidence), fixes=_fixes(ctx, [r.node for r in beyond]), tags=("root_cause", "engine"))


def _fixes(ctx: Context, nodes: list[str]) -> tuple[Fix, ...]:
    model = model_file(ctx, "fp32")
    layers = ",".join(f"{n}:fp32" for n in nodes[:ROWS_SHOWN]) or "<layer>:fp32"
    return (Fix("Keep the overflowing layers in FP32 (TensorRT 10, weakly typed)",
                f"trtexec --onnx={model} --fp16 --precisionConstraints=obey --layerPrecisions={layers} "
                f"--layerOutputTypes={layers}"),
            Fix("Quantize with the non-quantized part kept in FP32 instead of FP16",
                requantize_command(ctx, Change(float_part_fp32=True))))
