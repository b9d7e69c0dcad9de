"""QR004: Q/DQ semantics that TensorRT does not honour (zero-points, UINT8, odd scales)."""

from __future__ import annotations

from typing import Any, Callable, Iterator

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Table
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import classifier_graph, diverging_outputs, modelopt_command, precision_summary, qdq_entry

# Quantized types TensorRT 10 executes: INT8 and FP8 everywhere, INT4/FP4 for (block) weights.
TRT_DTYPES = {"int8", "float8e4m3fn"}
TRT_WEIGHT_ONLY_DTYPES = {"int4", "float4e2m1"}
EXAMPLES_SHOWN = 5  # example tensors per defect; the count says how many there are

# defect -> (test on a qdq entry, severity, why TensorRT cannot honour it)
DEFECTS: dict[str, tuple[Callable[[dict[str, Any]], bool], str, str]] = {
    "non-finite or non-positive scale": (lambda e: not e["scale_finite_positive"], "error",
                                         "a zero, negative, NaN or Inf scale yields NaN/Inf or zeros in every runtime"),
    "non-zero zero-point": (lambda e: e["zero_point_nonzero"], "warning",
                            "TensorRT supports symmetric quantization only (zero-point 0)"),
    "type TensorRT lacks": (lambda e: e["dtype"] not in TRT_DTYPES and not (
        e["kind"] == "weight" and e["dtype"] in TRT_WEIGHT_ONLY_DTYPES), "warning",
        "TensorRT has no UINT8/INT16 quantized compute; such Q/DQ pairs are rejected or run as something else"),
    "non-constant scale": (lambda e: not e["scale_constant"], "warning",
                           "TensorRT needs build-time constant scales to fuse Q/DQ into INT8 kernels"),
    "Q/DQ pair scales differ": (lambda e: not e["pair_scales_match"], "warning",
                                "TensorRT fuses a Q/DQ pair assuming one scale; ORT applies each DQ's own scale"),
}


def _ort_uint8_graph(b):
    # onnxruntime quantize_static defaults: QUInt8 activations with a zero-point, QInt8 weights.
    graph = classifier_graph()
    graph["qdq"] = [qdq_entry(f"conv{i}.tmp_0", [f"Conv@{i + 1}"], dtype="uint8", zero_point_nonzero=True,
                              zero_point_max_abs=128 + i) for i in range(5)]
    b.artifact("precision_summary", precision_summary(graph["nodes"], graph["qdq"], graph["sensitive"]))


def _zero_scale(b):
    graph = classifier_graph()
    graph["qdq"].append(qdq_entry("conv5.tmp_0", ["MatMul@0"], scale_min=0.0, scale_finite_positive=False))
    b.artifact("precision_summary", precision_summary(graph["nodes"], graph["qdq"], graph["sensitive"]))


def _modelopt_int8_with_int4_weights(b):
    # Symmetric INT8 activations plus block-quantized INT4 weights: everything TensorRT accepts.
    graph = classifier_graph()
    graph["qdq"].append(qdq_entry("fc_0.w_0", ["MatMul@0"], kind="weight", dtype="int4", scale_count=64))
    b.artifact("precision_summary", precision_summary(graph["nodes"], graph["qdq"], graph["sensitive"]))


@rule(id="QR004", slug="trt-unsupported-qdq", title="Q/DQ nodes TensorRT does not honour",
      examples=[Fires("onnxruntime default UINT8 with zero-points", _ort_uint8_graph),
                Fires("a zero activation scale", _zero_scale),
                Quiet("symmetric INT8 with INT4 weights", _modelopt_int8_with_int4_weights)])
def trt_unsupported_qdq(ctx: Context) -> Iterator[Finding]:
    """Q/DQ pairs with non-zero zero-points, UINT8/INT16 types, non-constant, unequal or non-positive scales.

    One finding per defect, with the number of Q/DQ pairs affected and example tensors. A
    non-finite or non-positive scale is an error; the others are warnings.

    Why it matters: ONNX Runtime executes these Q/DQ pairs faithfully, so the QDQ model can
    look fine there, but TensorRT supports only symmetric INT8/FP8 with constant scales. It
    rejects such graphs, or fuses the pairs with different arithmetic, and the engine drifts.

    Fix: re-quantize symmetric INT8 (the ModelOpt default; with onnxruntime quantize_static:
    ActivationSymmetric=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8).
    """
    entries = (ctx.precision or {}).get("qdq", [])
    deployed_badly = bool(diverging_outputs(ctx, "deployment") or diverging_outputs(ctx, "quantization"))
    for defect, (test, severity, why) in DEFECTS.items():
        hits = [e for e in entries if test(e)]
        if not hits:
            continue
        rows = tuple((e["tensor"], e["kind"], e["dtype"], e["zero_point_max_abs"], e["scale_min"], e["scale_max"],
                      e["scale_constant"], e["pair_scales_match"]) for e in hits[:EXAMPLES_SHOWN])
        yield Finding(
            rule_id="QR004", title=f"{len(hits)} Q/DQ pair(s): {defect}", severity=severity,
            # The defect itself is read from the graph; that it explains the loss is likelier once outputs diverge.
            confidence=0.9 if deployed_badly else 0.7, score=(0.8 if deployed_badly else 0.4) if severity == "error"
            else (0.5 if deployed_badly else 0.2), subject=defect, stage="precision",
            summary=f"{len(hits)} of {len(entries)} Q/DQ pairs have a {defect}: {why}",
            evidence=(Metric("Q/DQ pairs affected", len(hits), threshold="> 0"),
                      Table(f"Q/DQ pairs with a {defect}", ("tensor", "kind", "dtype", "max |zero-point|", "scale min",
                                                           "scale max", "constant scale", "pair scales match"), rows,
                            note=f"{len(hits) - EXAMPLES_SHOWN} more not shown" if len(hits) > EXAMPLES_SHOWN else "")),
            fixes=_fixes(ctx, defect), tags=("root_cause",))


def _fixes(ctx: Context, defect: str) -> tuple[Fix, ...]:
    requantize = Fix("Re-quantize symmetric INT8 with ModelOpt (zero-points 0, constant per-tensor/per-channel scales)",
                     modelopt_command(ctx))
    ort = Fix("Or, with onnxruntime.quantization.quantize_static, ask for symmetric signed INT8",
              "quantize_static(..., activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, "
              "extra_options={'ActivationSymmetric': True, 'WeightSymmetric': True})")
    if defect.startswith("non-finite"):
        return (Fix("Check the calibration data: a tensor that is constant or all-zero in every calibration sample "
                    "calibrates to a zero scale; add varied samples"), requantize)
    return requantize, ort
