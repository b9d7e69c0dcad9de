"""An excluded node reads float inputs with the activation the FP32 model applies there (collect/exclusion.py).

quantize_static folds a Relu (or Clip) after a node into the Q node's range, so the tensor before the Q is the raw
output under the activation's name; an excluded node that read it float took negative values the model never has. A new
user's CenterNet: excluding the reg head's Conv took that output from cosine 0.991 to 0.967, and the what-if's 12
suspects scored cosine -0.017 where a real re-quantization without them measured F1 0.909 (0.879 before). Here: the
demo's PaddleOCR direction classifier quantized by quantize_static (tests/data/models/cls_ort_int8.onnx, 33 such folded
activations) on the demo's real text-line images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from qdqreport.collect.exclusion import exclusion_variant
from qdqreport.collect.models import with_extra_outputs
from qdqreport.collect.qdq_graph import GraphIndex

MODELS = Path(__file__).resolve().parent / "data" / "models"


def _run(model: onnx.ModelProto, names: list[str], feed: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(with_extra_outputs(model, names), providers=["CPUExecutionProvider"])
    return session.run(names, feed)


def test_an_excluded_node_reads_the_relu_the_qdq_graph_folded(eval_x):
    fp32, qdq = onnx.load(str(MODELS / "cls_fp32.onnx")), onnx.load(str(MODELS / "cls_ort_int8.onnx"))
    q_index, f_index = GraphIndex(qdq), GraphIndex(fp32)
    assert f_index.producer["relu_0.tmp_0"].op_type == "Relu" and q_index.producer["relu_0.tmp_0"].op_type != "Relu"
    variant = exclusion_variant(q_index, ["Conv@2"], f_index)
    conv = next(n for n in variant.graph.node if n.name == "Conv@2")
    feed = {"x": eval_x[:4]}
    (read,) = _run(variant, [conv.input[0]], feed)
    (raw,) = _run(qdq, ["relu_0.tmp_0"], feed)
    assert raw.min() < 0  # the folded tensor: the BatchNormalization's output, negative values and all
    assert read.min() >= 0 and np.array_equal(read, np.maximum(raw, 0))


def test_an_excluded_node_that_writes_a_graph_output_hands_it_over_in_float(eval_x):
    """quantize_static quantized the classifier's output Softmax: its probabilities reach the graph output through a
    Q/DQ pair, on a grid of at most 256 values. Re-quantized with the Softmax excluded, the output has no pair; the
    what-if's variant used to keep it (its exclusion fed float inputs only), so it could not measure that fix (a new
    user's YOLO11-seg: its output Concat's pair rounded every score to 0). The variant now hands the output over in
    float: the Softmax's own result, off the pair's grid (steps of 1/255 here)."""
    model = onnx.load(str(MODELS / "cls_ort_int8.onnx"))
    index = GraphIndex(model)
    output = model.graph.output[0].name
    softmax = next(index.name_of(n) for n in index.nodes if n.op_type == "Softmax")
    feed = {model.graph.input[0].name: eval_x[:8]}
    (quantized,) = _run(model, [output], feed)
    variant = exclusion_variant(index, [softmax])
    softmax_out = next(n.output[0] for n in variant.graph.node if n.op_type == "Softmax")
    float_output, own = _run(variant, [output, softmax_out], feed)
    step = 1 / 255
    assert np.allclose(quantized / step, np.round(quantized / step), atol=1e-3)
    assert not np.allclose(float_output / step, np.round(float_output / step), atol=1e-3)
    assert np.array_equal(float_output, own)
