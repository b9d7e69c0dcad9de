"""QR004: Q/DQ semantics that TensorRT does not honour (zero-points, UINT8, int32 bias, odd scales)."""

from __future__ import annotations

from typing import Any, Iterator

from qdqreport.analysis.saturation import lacks_vnni
from qdqreport.analysis.broken_scales import destroys_tensor, nonfinite_scale
from qdqreport.analysis.context import Context
from qdqreport.analysis.quantizer import node_op_types, sensitive_in_int8
from qdqreport.analysis.target import ONNXRUNTIME, TARGET_NAMES, TENSORRT
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import (exclusion, exclusion_fix, excluded_precision, modelopt_command, quantize_static_command,
                             quantizer_name, recorded_ort_options)
from qdqreport.rules._trt import DEFECTS
from qdqreport.rules._common import comparison_label, diverging_outputs
from qdqreport.testing.recipes import (CLS_OUTPUT, class_logits, classifier_graph, classifier_run, precision_summary,
                                       qdq_entry)

# A broken-scale finding whose pairs a sensitive-node finding (QR002) already names with the fix: ranked under it.
DEFERRED_SCORE = 0.5
EXAMPLES_SHOWN = 5  # example tensors per defect; the count says how many there are

# "graph": ONNX Runtime computes the defect too, so the ORT QDQ model is already wrong;
# "engine": ONNX Runtime executes it faithfully and only TensorRT refuses or changes it.
BROKEN_SCALE = "non-finite or non-positive scale"
DAMAGE_SHOWS_IN = {BROKEN_SCALE: "graph", "non-zero zero-point": "engine",
                   "type TensorRT lacks": "engine", "non-constant scale": "engine", "Q/DQ pair scales differ": "graph"}


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


def _edited_pair_scales(b):
    # Three DQ nodes given 4x their Q's scale by hand: ONNX Runtime rescales those activations, the class flips.
    graph = classifier_graph()
    for entry in graph["qdq"][1:4]:
        entry["pair_scales_match"] = False
    b.artifact("precision_summary", precision_summary(graph["nodes"], graph["qdq"], graph["sensitive"]))
    logits = class_logits(24, seed=51)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=2.0, shrink=0.2, seed=52))


def _for_onnxruntime(b):
    # What `collect --target onnxruntime` records: the model is deployed with ONNX Runtime.
    b.manifest.setdefault("settings", {})["target"] = ONNXRUNTIME


def _ort_int32_bias_for_ort(b):
    # onnxruntime quantize_static, symmetric INT8, QuantizeBias left on: int32 bias DQ nodes; deployed with ORT.
    graph = classifier_graph()
    graph["qdq"] += [qdq_entry(f"conv{i}.b_0", [f"Conv@{i + 1}"], kind="weight", dtype="int32") for i in range(4)]
    b.artifact("precision_summary", precision_summary(graph["nodes"], graph["qdq"], graph["sensitive"]))
    _for_onnxruntime(b)


def _zero_scale_for_ort(b):
    _zero_scale(b)
    _for_onnxruntime(b)


def _ort_float_bias_for_ort(b):
    _modelopt_int8_with_int4_weights(b)
    _for_onnxruntime(b)


@rule(id="QR004", slug="trt-unsupported-qdq", title="Q/DQ nodes TensorRT does not honour",
      examples=[Fires("onnxruntime default UINT8 with zero-points", _ort_uint8_graph),
                Fires("a zero activation scale", _zero_scale),
                Fires("DQ scales edited away from their Q's, ORT QDQ outputs diverge", _edited_pair_scales),
                Fires("int32 bias DQ under target onnxruntime: an info deployment note", _ort_int32_bias_for_ort),
                Fires("a zero activation scale under target onnxruntime: still a root cause", _zero_scale_for_ort),
                Quiet("symmetric INT8 with INT4 weights", _modelopt_int8_with_int4_weights),
                Quiet("symmetric INT8 with float biases under target onnxruntime", _ort_float_bias_for_ort)])
def trt_unsupported_qdq(ctx: Context) -> Iterator[Finding]:
    """Q/DQ pairs with non-zero zero-points, UINT8/INT16/INT32 types, non-constant, unequal or non-positive scales.

    One finding per defect, with the number of Q/DQ pairs affected and example tensors. What a
    finding is depends on who computes the defect and on the deployment target (`--target`,
    else the bundle's recorded target, else tensorrt):

    - Defects ONNX Runtime computes itself are root causes: a non-finite or non-positive scale
      (always an error), and pair scales that differ when the ORT QDQ outputs diverge (ONNX
      Runtime applies each DQ's own scale, so the QDQ model itself is wrong). A scale that is
      only NaN or Inf makes its DequantizeLinear write NaN over the whole tensor
      (analysis/broken_scales.py). When the ORT QDQ outputs are all finite and every such pair is
      read only by ops that may pass their other operand (a Max with a constant, a Where), the
      NaN may be masked, so it is not credited with their divergence (scored below the findings
      that measure it); read by a Softmax or a MatMul, the tensor carries nothing even when a
      later QuantizeLinear makes the outputs finite again. Its fix keeps the readers float (no
      calibration data gives -inf a scale); a zero scale's fix is varied calibration data. When
      every NaN/Inf pair is the input of a sensitive node on INT8 inputs, QR002 names the same
      nodes with the same fix and this finding is scored under it.
    - Defects only TensorRT rejects or changes are deployment findings, never the root cause of
      an ORT FP32 → ORT QDQ divergence, and are shown in the report's deployment section:
      non-zero zero-points, UINT8/INT16 types and int32 bias DequantizeLinear nodes, non-constant
      scales, and pair scales that differ while ONNX Runtime agrees. Under target tensorrt the
      ones TensorRT's ONNX parser rejects (zero-points, types) are errors: the engine does not
      build. The others are warnings. Under target onnxruntime they are `info`: ONNX
      Runtime runs them faithfully, so they only matter if the model is later deployed with
      TensorRT (or ONNX Runtime's TensorRT execution provider). They are kept rather than
      left out because that is a real portability limit a user would want to know before
      switching runtimes, and `info` neither fails `--fail-on error|warning` nor competes with
      the root causes.

    Each finding says which comparison separates it from other causes: ORT FP32 → ORT QDQ for
    defects ONNX Runtime computes too, ORT QDQ → TRT INT8 for those only TensorRT refuses.

    Why it matters: ONNX Runtime executes these Q/DQ pairs faithfully, so the QDQ model can
    look fine there, but TensorRT supports only symmetric INT8/FP8 with constant scales. Its
    ONNX parser rejects non-zero zero-points and UINT8, and stops on an int32 bias
    DequantizeLinear with "only activation types allowed as input to this layer"
    (onnx/onnx-tensorrt#850, NVIDIA/TensorRT#3360); pairs it does fuse use one scale per pair.

    Fix: re-quantize symmetric INT8 (the ModelOpt default; with onnxruntime quantize_static:
    ActivationSymmetric=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, and
    extra_options QuantizeBias=False to keep biases float for TensorRT).
    """
    entries = (ctx.precision or {}).get("qdq", [])
    for defect, (test, severity, why) in DEFECTS.items():
        hits = [e for e in entries if test(e)]
        if hits:
            yield _finding(ctx, defect, severity, _why(defect, why, hits), hits, len(entries))


def _scale_cell(entry: dict[str, Any], key: str) -> Any:
    """A scale's min or max for the table: the precision summary keeps those of the finite scales only, so a pair whose
    constant scales are all inf or NaN reads "not finite" (a new user's causal mask, its Where output quantized: the
    table about broken scales showed "—" where the broken value was)."""
    value = entry.get(key)
    if value is None and entry.get("scale_count") and not entry.get("scale_finite_positive"):
        return "not finite"
    return value


def _finding(ctx: Context, defect: str, severity: str, why: str, hits: list[dict[str, Any]], total: int) -> Finding:
    where = DAMAGE_SHOWS_IN[defect]
    damage = _damage(ctx, where, defect, hits)
    explains = damage is not None and damage[0]
    rows = tuple((e["tensor"], e["kind"], e["dtype"], e["zero_point_max_abs"], _scale_cell(e, "scale_min"),
                  _scale_cell(e, "scale_max"), e["scale_constant"], e["pair_scales_match"]) for e in hits[:EXAMPLES_SHOWN])
    evidence = (Metric("Q/DQ pairs affected", len(hits), threshold="> 0"),
                Table(f"Q/DQ pairs with a {defect}", ("tensor", "kind", "dtype", "max |zero-point|", "scale min",
                                                     "scale max", "constant scale", "pair scales match"), rows,
                      note=f"{len(hits) - EXAMPLES_SHOWN} more not shown" if len(hits) > EXAMPLES_SHOWN else ""),
                Text(_separation(where, damage)))
    common = dict(title=f"{_counted(hits)}: {defect}", subject=defect, stage="precision",
                  evidence=evidence)
    summary = f"{len(hits)} of {total} Q/DQ pairs have a {defect}: {why}"
    # A defect the QDQ graph itself computes is a root cause: always for a broken scale, for
    # unequal pair scales when the ORT QDQ outputs diverge (then it is the error to fix first).
    if where == "graph" and (explains or severity == "error"):
        deferred = defect == BROKEN_SCALE and _read_by_sensitive(ctx, hits)
        if deferred:
            common["evidence"] += (Text("These pairs are the inputs of sensitive nodes in INT8, which QR002 names with "
                                        "the same fix: keeping those nodes float removes the pairs."),)
        return trt_unsupported_qdq.finding(
            severity="error", confidence=0.9, score=DEFERRED_SCORE if deferred else 0.85 if explains else 0.7,
            summary=summary, fixes=_fixes(ctx, defect, hits), tags=("root_cause",), **common)
    if ctx.target != TENSORRT:
        return trt_unsupported_qdq.finding(
            severity="info", confidence=0.9, score=0.1, summary=f"{summary}. {_not_your_target(ctx)}",
            fixes=(Fix(f"Nothing to change for {TARGET_NAMES[ctx.target]}; before deploying with "
                       "TensorRT, re-quantize as below"),) + _fixes(ctx, defect, hits),
            tags=("deployment",), **common)
    # Target TensorRT: what its parser rejects stays an error (no engine is built), the rest a warning,
    # an error too once a measured TRT INT8 stage diverges. The certainty is in the graph, read directly.
    return trt_unsupported_qdq.finding(
        severity="error" if severity == "error" or explains else "warning",
        confidence=0.9 if explains or severity == "error" else 0.7,
        score=0.85 if explains else 0.7 if severity == "error" else 0.3, summary=summary,
        fixes=_fixes(ctx, defect, hits), tags=("deployment",), **common)


def _read_by_sensitive(ctx: Context, hits: list[dict[str, Any]]) -> bool:
    """Whether every broken scale is a NaN/Inf-scale input of a sensitive node on INT8 inputs: QR002's finding then
    says the same with the node to keep float, and this one is its detail (scored under it)."""
    sensitive = {s["node"] for s in sensitive_in_int8(ctx.precision)}
    return all(nonfinite_scale(e) and sensitive & set(e.get("consumers") or []) for e in hits)


def _counted(hits: list[dict[str, Any]]) -> str:
    """How many Q/DQ pairs and lone DequantizeLinear nodes *hits* hold: a weight or an int32 bias stored quantized
    has a DequantizeLinear and no QuantizeLinear, and a new user read '5 Q/DQ pair(s)' of five biases as a miscount."""
    pairs = sum(1 for e in hits if e.get("q_node"))
    biases = sum(1 for e in hits if not e.get("q_node") and e.get("dtype") == "int32")
    weights = len(hits) - pairs - biases
    parts = ([f"{pairs} Q/DQ pair(s)"] if pairs else []) + ([f"{weights} weight DequantizeLinear node(s)"] if weights
                                                             else [])
    # An int32 DequantizeLinear without a Q is a quantized bias, not a weight (a new user read "47 weight
    # DequantizeLinear node(s)" of 47 Conv biases).
    return " and ".join(parts + ([f"{biases} bias DequantizeLinear node(s)"] if biases else []))


def _not_your_target(ctx: Context) -> str:
    return (f"The deployment target is {TARGET_NAMES[ctx.target]}, which runs these Q/DQ pairs faithfully: this only "
            "matters if you deploy with TensorRT (or ONNX Runtime's TensorRT execution provider)")


def _why(defect: str, why: str, hits: list[dict[str, Any]]) -> str:
    """The reason, made specific when the type TensorRT lacks is an int32 bias (ONNX Runtime quantizes biases)."""
    if defect == "type TensorRT lacks" and any(e["dtype"] == "int32" for e in hits):
        return ("TensorRT has no UINT8/INT16/INT32 quantized compute, and an int32 bias DequantizeLinear (onnxruntime "
                "quantize_static quantizes biases by default) stops its ONNX parser with \"only activation types "
                "allowed as input to this layer\"")
    return why


def _damage(ctx: Context, where: str, defect: str, hits: list[dict[str, Any]]) -> tuple[bool, str, bool] | None:
    """(explains the divergence?, comparison label, masked?) of the comparison that shows this defect's damage, None
    when not measured. A scale that is only NaN or Inf makes its DequantizeLinear write NaN/Inf (0 x Inf): when the QDQ
    outputs are all finite, a later op masked it (a Max, a Where) and the divergence has another cause."""
    purpose = "quantization" if where == "graph" else "deployment"
    comparison = ctx.comparison(purpose)
    if comparison is None:
        return None
    diverges = bool(diverging_outputs(ctx, purpose))
    # Masked only where a consumer may pass its other operand (a Max with a constant): a NaN tensor that a Softmax or
    # a MatMul computes on carries nothing even when a later QuantizeLinear makes the outputs finite again.
    op_types = node_op_types(ctx.precision)
    masked = (diverges and defect == BROKEN_SCALE and all(nonfinite_scale(e) for e in hits)
              and not any(destroys_tensor(e, op_types) for e in hits)
              and not any(s.nonfinite_cand > s.nonfinite_ref for s in ctx.output_summaries(comparison.id)))
    return diverges and not masked, comparison_label(comparison), masked


def _separation(where: str, damage: tuple[bool, str, bool] | None) -> str:
    """Which comparison separates this defect from other causes of the same divergence."""
    if where == "graph":
        if damage is None:
            return "Not measured: no ORT FP32 → ORT QDQ comparison in the bundle."
        if damage[2]:
            return (f"ONNX Runtime computes this defect too; its NaN/Inf never reaches the outputs of {damage[1]} (all "
                    "finite), so that comparison's divergence has another cause (see the other findings).")
        return (f"ONNX Runtime computes this defect too, so it shows in {damage[1]}, which "
                + ("diverges: this defect explains it." if damage[0] else
                   "agrees: ONNX Runtime runs it without harm; only TensorRT's single-scale fusion changes it."))
    if damage is None:
        return ("ONNX Runtime executes these Q/DQ pairs faithfully, so any ORT FP32 → ORT QDQ divergence has another "
                "cause; only a TensorRT INT8 stage (absent here) shows this defect's effect.")
    return f"TensorRT's effect is measured by {damage[1]}, which " + ("diverges." if damage[0] else "agrees.")


# A model made TensorRT-compatible runs its signed INT8 activations in ONNX Runtime's S8S8 kernels, which saturate on an
# x86 CPU without VNNI as U8S8 ones do (tests/data/bundles/orinet_s8s8_saturates: 52 of 60 pages fused, 60 unfused): a
# user who measures the fix on such a CPU can read a loss that TensorRT will not have (a new user's key CNN did).
# Symmetric activations centre the range on 0: a tensor that is never negative (a ReLU's output) keeps half the levels
# an asymmetric range gave it. TensorRT requires it; the fix's own cost is the user's to expect, not a new fault.
HALF_LEVELS = ("; symmetric activations leave a never-negative tensor (a ReLU's output) half the levels it has now, so "
               "some loss against today's model on ONNX Runtime is expected: it is what TensorRT requires")
S8S8_HERE = ("; on the collecting CPU (x86, no VNNI) ONNX Runtime runs signed INT8 activations in S8S8 kernels "
             "that can saturate and read worse than the UINT8 model: judge the result on TensorRT, or here with the "
             "session option session.disable_quant_qdq=1, which keeps the Q/DQ values and computes the layers in float")


def _fixes(ctx: Context, defect: str, hits: list[dict[str, Any]]) -> tuple[Fix, ...]:
    modelopt = ("Re-quantize symmetric INT8 with ModelOpt (zero-points 0, constant per-tensor/per-channel scales)",
                modelopt_command(ctx))
    bias = any(e["dtype"] == "int32" for e in hits)
    options = recorded_ort_options(ctx)  # the user's own quantize_static options, made TensorRT-compatible
    asymmetric, unsigned = not options["extra_options"].get("ActivationSymmetric"), options["activation_type"] == "uint8"
    options.update(activation_type="int8", weight_type="int8",
                   extra_options={**options["extra_options"], "ActivationSymmetric": True, "WeightSymmetric": True,
                                  **({"QuantizeBias": False} if bias else {})})
    ort = ("Re-quantize with onnxruntime.quantization.quantize_static as symmetric signed INT8"
           + (" with float biases" if bias else "") + (HALF_LEVELS if asymmetric else "")
           + (S8S8_HERE if unsigned and lacks_vnni(ctx) else ""),
           quantize_static_command(ctx, options))
    # The tool that made the model first; the other as the alternative.
    first, other = (ort, modelopt) if quantizer_name(ctx) == "quantize_static" else (modelopt, ort)
    requantize = Fix(*first)
    alternative = Fix("Or: " + other[0][0].lower() + other[0][1:], other[1])
    if defect == BROKEN_SCALE:
        return _broken_scale_fixes(ctx, hits, requantize)
    return requantize, alternative


def _broken_scale_fixes(ctx: Context, hits: list[dict[str, Any]], requantize: Fix) -> tuple[Fix, ...]:
    """A NaN/Inf scale comes from a calibrated range that held -inf or NaN: no calibration data fixes it, keeping its
    readers float does. A zero scale comes from a tensor constant in calibration: varied samples fix it."""
    readers = [c for e in hits if nonfinite_scale(e) for c in e.get("consumers") or []]
    fixes = ((exclusion_fix(ctx, "Re-quantize keeping the nodes that read the NaN/Inf-scale pairs in "
                            f"{excluded_precision(ctx)}: their calibrated range held -inf or NaN (an attention mask's "
                            "-inf added before a Softmax is the usual source), which no INT8 scale represents",
                            exclusion(readers)),) if readers else ())
    if any(not nonfinite_scale(e) for e in hits):
        fixes += (Fix("Check the calibration data: a tensor that is constant or all-zero in every calibration sample "
                      "calibrates to a zero scale; add varied samples"), requantize)
    return fixes
