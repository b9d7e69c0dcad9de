"""The calibration check: would ranges taken from the evaluation inputs themselves restore the outputs?

A calibration finding (QR003, QR006, QR009) reads the calibration data or the calibrated ranges and says they are
unlike the evaluation's; what it cannot say by itself is whether better ranges would restore the outputs. A new
user's copy-detection model calibrated on noise was told "most likely cause: the calibration data is random noise";
re-calibrated on 56 real photos it lost as much as before (embedding cosine 0.79 -> 0.69): INT8 activations were what
lost it, and only 16-bit activations restored it. Calibrating on the evaluation data itself is how engineers test it
by hand (an upper bound: no calibration set can match the evaluation data better); this check is that test, bounded.

Control: the same QDQ model, with each per-tensor activation QuantizeLinear (and the DequantizeLinear nodes reading
it) given the scale and zero point of MinMax calibration on the evaluation's own observed range (the activation range
pass's rows, collect/activation_ranges.py: the FP32 model's values over up to --range-samples samples spread over the
set), in the model's own scheme: symmetric stays symmetric (zero point at the middle of the type), asymmetric stays
asymmetric (the range widened to hold zero, as calibrators do), the integer type unchanged. Weights, per-channel
activation scales and quantizers the pass did not measure keep their values. It runs in a session like the QDQ
stage's (fused kernels: only the ranges differ) on MAX_SAMPLES chosen samples (control_stage.choose_samples), as
stage `ort_qdq_eval_ranges`, compared with `ort_fp32` (purpose `other`, `control: eval_ranges`).
analysis/calibration_check.py reads it.

When it runs: where the saturation check would (an output diverges, or the user's decode differs) and the range
pass ran (--range-samples above 0) and measured a quantizer it can set; otherwise it is recorded as skipped with the
reason. Cost: one more session of the QDQ model and MAX_SAMPLES runs of it, only where the outputs diverge.
`collect --no-calibration-check` skips it.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from qdqreport.analysis.calibration_check import CONTROL_KIND, EVAL_RANGES_STAGE, MAX_SAMPLES
from qdqreport.analysis.quantizer import ORT_TYPES
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.align import QRANGE
from qdqreport.collect.control_stage import run_chosen, write_control
from qdqreport.collect.ort_stage import OrtStage, open_stage
from qdqreport.collect.qdq_graph import GraphIndex, dtype_name, scale_and_zero
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]
NODES_LISTED = 8  # quantizers the control could not set, named in its details
SKIPPED_AGREE = ("skipped: every output of the QDQ model agrees with FP32 as the report judges it (recurrent state "
                 "aside), so no calibration could win anything back; it runs only where an output does not agree")
SKIPPED_FP32 = "skipped: the FP32 stage failed, so there is nothing to compare the control with"
SKIPPED_UNSET = ("skipped: the activation range pass measured no per-tensor activation quantizer whose scale and "
                 "zero point are initializers of an 8- or 16-bit integer type, so no range could be set")


def activation_quantizers(q_index: GraphIndex) -> list[str]:
    """The QuantizeLinear nodes of the QDQ model that quantize a computed tensor (not a constant weight), named as the
    range pass names them (GraphIndex.name_of)."""
    return [q_index.name_of(n) for n in q_index.nodes if n.op_type == "QuantizeLinear" and n.input
            and not q_index.is_constant(n.input[0])]


def eval_ranges_model(q_index: GraphIndex, rows: Sequence[dict[str, Any]],
                      fp32_index: GraphIndex | None = None) -> tuple[onnx.ModelProto, list[str]]:
    """(a copy of the QDQ model *q_index* indexes whose measured per-tensor activation quantizers take their scale and
    zero point from the evaluation's observed range, the quantizers set). *rows*: activation_ranges' quantizer rows,
    whose q_node is GraphIndex.name_of (unnamed nodes included). The int32 biases of the nodes those quantizers feed
    are quantized again on the new scales (_requantize_biases), from the FP32 model's (*fp32_index*) where it has them."""
    model = onnx.ModelProto()
    model.CopyFrom(q_index.model)
    graph = model.graph
    names = [q_index.name_of(node) for node in q_index.model.graph.node]  # the copy keeps the nodes' order
    constants = {t.name: t for t in graph.initializer}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.input:
            readers.setdefault(node.input[0], []).append(node)
    observed = {r["q_node"]: r for r in rows if not r.get("per_channel")
                and r.get("observed_min") is not None and r.get("observed_max") is not None}
    changed, replaced = [], set()
    rescaled: dict[str, tuple[float, float]] = {}  # a DequantizeLinear output -> (old scale, new scale)
    for name, node in zip(names, graph.node):
        row = observed.get(name) if node.op_type == "QuantizeLinear" else None
        params = _eval_params(node, row, constants) if row is not None else None
        if params is None:
            continue
        scale, zero = params
        old = float(numpy_helper.to_array(constants[node.input[1]]).ravel()[0])
        graph.initializer.extend([scale, zero])
        for user in [node, *readers.get(node.output[0], [])]:
            replaced.update(user.input[1:3])
            _set_params(user, scale.name, zero.name)
            if user is not node:
                rescaled[user.output[0]] = (old, float(numpy_helper.to_array(scale).ravel()[0]))
        changed.append(name)
    replaced.update(_requantize_biases(graph, constants, rescaled, fp32_index))
    _drop_unused(graph, replaced)
    return model, changed


def _requantize_biases(graph: onnx.GraphProto, constants: dict[str, onnx.TensorProto],
                       rescaled: dict[str, tuple[float, float]], fp32_index: GraphIndex | None) -> set[str]:
    """Quantize again each int32 bias (a DequantizeLinear of an int32 constant, input 2 of a Conv, Gemm or the like)
    whose node reads a rescaled activation: scale = activation scale x weight scale, as quantize_static makes it.
    Left as calibrated, a bias rounded on the old scale stays wrong under ranges that are right: a new user's face
    detector calibrated on raw 0-255 pixels had a head bias scale of 124 where its values are about 1 (all of it
    rounded to 0), and the control with only the activations reset stayed at 49 of 60 images changed where the
    re-calibrated model changes 26. The values come from the FP32 model's node of the same name where it has one of
    the same shape (a bias rounded to 0 keeps nothing to rescale), else from the bias as quantized. The names replaced."""
    producer = {out: node for node in graph.node for out in node.output}
    fp32_nodes = {n.name: n for n in fp32_index.nodes if n.name} if fp32_index is not None else {}
    replaced: set[str] = set()
    for node in graph.node:
        if len(node.input) < 3 or node.input[0] not in rescaled:
            continue
        bias_dq, weight_dq = producer.get(node.input[2]), producer.get(node.input[1])
        if not (_int32_constant_dq(bias_dq, constants) and weight_dq is not None
                and weight_dq.op_type == "DequantizeLinear"):
            continue
        old_act, new_act = rescaled[node.input[0]]
        if not old_act > 0:  # no scale to rescale from (a zero or NaN scale is the model's own defect)
            continue
        old_q = numpy_helper.to_array(constants[bias_dq.input[0]]).astype(np.float64)
        old_scale = numpy_helper.to_array(constants[bias_dq.input[1]]).astype(np.float64)
        values = _fp32_bias(fp32_nodes.get(node.name) if node.name else None, node, fp32_index, old_q.shape)
        values = old_q * old_scale if values is None else values
        # The bias scale quantize_static wrote is the activation's times the weight's: rescale it as the activation.
        scale = old_scale * (new_act / old_act)
        if not np.all(np.isfinite(scale)) or np.any(scale <= 0) or values.ndim > 1:
            continue
        info = np.iinfo(np.int32)
        quantized = np.clip(np.round(values / scale), info.min, info.max).astype(np.int32)
        base = bias_dq.input[0]
        new_q = numpy_helper.from_array(quantized, f"{base}_eval_ranges")
        new_scale = numpy_helper.from_array(
            scale.astype(numpy_helper.to_array(constants[bias_dq.input[1]]).dtype), f"{base}_eval_ranges_scale")
        graph.initializer.extend([new_q, new_scale])
        replaced.update(bias_dq.input[0:2])
        bias_dq.input[0], bias_dq.input[1] = new_q.name, new_scale.name
    return replaced


def _int32_constant_dq(node: onnx.NodeProto | None, constants: dict[str, onnx.TensorProto]) -> bool:
    return (node is not None and node.op_type == "DequantizeLinear" and len(node.input) >= 2
            and node.input[0] in constants and node.input[1] in constants
            and constants[node.input[0]].data_type == onnx.TensorProto.INT32)


def _fp32_bias(fp32_node: onnx.NodeProto | None, node: onnx.NodeProto, fp32_index: GraphIndex | None,
               shape: tuple[int, ...]) -> np.ndarray | None:
    """The float bias of *node*'s counterpart in the FP32 model (same name and op type), where it is a constant of
    *shape*."""
    if fp32_node is None or fp32_index is None or fp32_node.op_type != node.op_type or len(fp32_node.input) < 3:
        return None
    value = fp32_index.constant_value(fp32_node.input[2])
    return None if value is None or value.shape != shape else value.astype(np.float64)


def _drop_unused(graph: onnx.GraphProto, names: set[str]) -> None:
    """Remove the initializers among *names* no node reads any more (ONNX Runtime warns of each one it finds)."""
    read = {name for node in graph.node for name in node.input}
    kept = [t for t in graph.initializer if t.name not in names or t.name in read]
    if len(kept) < len(graph.initializer):
        del graph.initializer[:]
        graph.initializer.extend(kept)


def _eval_params(node: onnx.NodeProto, row: dict[str, Any],
                 constants: dict[str, onnx.TensorProto]) -> tuple[onnx.TensorProto, onnx.TensorProto] | None:
    """The scale and zero point initializers MinMax calibration on the observed range gives, in the node's own type
    and scheme; None where the node's scale or zero point is not a per-tensor initializer of a known integer type."""
    scale_name, zero_name = scale_and_zero(node)
    scale_tensor = constants.get(scale_name or "")
    zero_tensor = constants.get(zero_name or "")
    dtype = dtype_name(zero_tensor.data_type) if zero_tensor is not None else None
    if scale_tensor is None or dtype not in ORT_TYPES:  # the 8- and 16-bit integer types
        return None
    old_scale, old_zero = numpy_helper.to_array(scale_tensor), numpy_helper.to_array(zero_tensor)
    if old_scale.size != 1 or old_zero.size != 1:
        return None
    qmin, qmax = QRANGE[dtype]
    middle = (qmin + qmax + 1) // 2  # 0 for the signed types, 128 / 32768 for the unsigned ones
    low, high = min(float(row["observed_min"]), 0.0), max(float(row["observed_max"]), 0.0)
    if int(old_zero.ravel()[0]) == middle:  # symmetric: the larger magnitude on the positive half
        scale = max(-low, high) / (qmax - middle)
        zero = middle
    else:
        scale = (high - low) / (qmax - qmin)
        zero = int(np.clip(round(qmin - low / scale), qmin, qmax)) if scale > 0 else middle
    if not np.isfinite(scale) or scale <= 0:
        return None
    new_scale = numpy_helper.from_array(np.full(old_scale.shape, scale, dtype=old_scale.dtype),
                                        f"{node.name}_eval_ranges_scale")
    new_zero = numpy_helper.from_array(np.full(old_zero.shape, zero, dtype=old_zero.dtype),
                                       f"{node.name}_eval_ranges_zero_point")
    return new_scale, new_zero


def _set_params(node: onnx.NodeProto, scale: str, zero: str) -> None:
    node.input[1] = scale
    node.input[2] = zero


def run_calibration_check(q_index: GraphIndex, graph_outputs: Sequence[str], samples: Sequence[Feed],
                          rows: Sequence[dict[str, Any]], provider: str, progress: Progress,
                          why: str, fp32_index: GraphIndex | None = None,
                          indices: Sequence[int] | None = None) -> OrtStage | None:
    """The control stage run on *samples* at *indices* (control_stage.choose_samples; default the first
    MAX_SAMPLES); None when no quantizer could be set. *q_index*, *fp32_index*: the QDQ and FP32 models' indices
    (collect/align.GraphPair)."""
    from qdqreport.collect.models import session_source

    model, changed = eval_ranges_model(q_index, rows, fp32_index)
    if not changed:
        return None
    done = set(changed)
    left = [name for name in activation_quantizers(q_index) if name not in done]
    indices = tuple(range(min(len(samples), MAX_SAMPLES))) if indices is None else tuple(indices)
    count = len(indices)
    progress.say(f"calibration check: {len(changed)} activation quantizers set to the evaluation inputs' own ranges; "
                 f"running that model on {count} of {len(samples)} samples")
    control = open_stage(EVAL_RANGES_STAGE, session_source(model, owned=True), tuple(graph_outputs), provider)
    control.details.update({"control_of": "ort_qdq", "quantizers_set": len(changed), "quantizers": len(rows),
                            "activation_quantizers": len(changed) + len(left), "quantizers_left": left[:NODES_LISTED],
                            "samples": count, "of_samples": len(samples), "decision": why,
                            "ranges": "MinMax of the FP32 model's values on the range pass's evaluation samples, in "
                                      "each quantizer's own type and scheme"})
    run_chosen(control, samples, indices, progress, "calibration check")
    return control


def skipped_entry(reason: str, of: int) -> dict[str, Any]:
    """The manifest entry of a check not run: status skipped, the reason as its error and details.decision."""
    return {"id": EVAL_RANGES_STAGE, "runtime": "onnxruntime", "precision": "qdq-eval-ranges", "status": "skipped",
            "error": reason, "seconds": None, "artifacts": {},
            "details": {"control_of": "ort_qdq", "samples": 0, "of_samples": of, "decision": reason}}


def write_calibration_check(writer: BundleWriter, manifest: dict[str, Any], control: OrtStage,
                            fp32_outputs: Sequence[Feed], class_outputs: set[str], compare: Any) -> None:
    """The control stage and its comparison with ort_fp32 on the same samples (*compare*: write_comparison)."""
    write_control(writer, manifest, control, "qdq-eval-ranges", CONTROL_KIND, int(control.details.get("samples", 0)),
                  fp32_outputs, class_outputs, compare)
