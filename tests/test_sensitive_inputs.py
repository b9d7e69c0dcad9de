"""QR002 in a default collect, told apart from an error that only passes through the flagged nodes: the sensitive-node
pass names each flagged node's input and recomputes the node from FP32 inputs (its local error:
collect/tensor_pass.py, collect/sensitive_local.py, rules/sensitive_op_quantized.py). On the demo's real ModelOpt
classifier calibrated on x255 data (every range off), and the same model with one activation's scale made 50x too
small just before the head (the head then adds the error itself); the rule's own example checks the cap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from qdqreport.collect.precision import precision_summary
from qdqreport.collect.tensor_pass import run_tensor_pass
from qdqreport.progress import Progress
from qdqreport.rules import discover
from qdqreport.collect.align import GraphPair
from qdqreport.rules.sensitive_op_quantized import _error_arrives_at_their_inputs, _head_and_softmax_int8
from qdqreport.testing.builder import BundleBuilder

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "qdqreport" / "demo"
MODELS = ROOT / "tests" / "data" / "models"


def _pass(qdq: onnx.ModelProto, eval_x) -> list[dict]:
    fp32 = onnx.load(str(DEMO / "cls_fp32.onnx"))
    sensitive = precision_summary(qdq)["sensitive"]
    names = {n for node in fp32.graph.node for n in node.output}
    marked = [{**s, "input": s["input"] if s.get("input") in names else None} for s in sensitive if s["tensor"] in names]
    samples = [{"x": eval_x[i:i + 1]} for i in range(4)]
    return run_tensor_pass(fp32, qdq, marked, samples, "cpu", Progress(quiet=True), graphs=GraphPair(fp32, qdq)).rows


def test_the_pass_measures_each_sensitive_nodes_input_and_own_error(eval_x):
    rows = _pass(onnx.load(str(DEMO / "cls_int8_x255.onnx")), eval_x)
    head = rows[-1]
    assert head["input_tensor"] == "linear_1.tmp_1"  # the Softmax reads the head MatMul's biased logits
    # x255 calibration puts every range off: the error arrives at the head, which, fed FP32 values, is fine.
    assert head["cosine"] < 0.98 and head["local_cosine"] >= 0.99


def test_a_head_that_adds_the_error_itself_is_measured_so(eval_x):
    """quantize_static's model of the same classifier (its head MatMul in INT8), and the same with the scale of the
    head's input Q/DQ made 50x too small: the head then clips its own input, and its local error says so."""
    healthy = onnx.load(str(MODELS / "cls_ort_int8.onnx"))
    head = next(r for r in _pass(healthy, eval_x) if r["node"] == "MatMul@0")
    clipped = onnx.load(str(MODELS / "cls_ort_int8.onnx"))
    chain = _head_input_qdq(clipped, "MatMul@0")
    scales = {n.input[1] for n in clipped.graph.node if n.output[0] in chain}
    assert scales, "the head reads its input through a Q/DQ pair"
    for init in clipped.graph.initializer:
        if init.name in scales:
            value = numpy_helper.to_array(init)
            init.CopyFrom(numpy_helper.from_array(value * np.asarray(0.02, value.dtype), init.name))
    broken = next(r for r in _pass(clipped, eval_x) if r["node"] == "MatMul@0")
    # Measured: 0.985 (the INT8 head's own rounding) against 0.49 with its input clipped.
    assert head["local_cosine"] > 0.95 and broken["local_cosine"] < 0.8


def _head_input_qdq(model: onnx.ModelProto, node_name: str) -> set[str]:
    """The Q and DQ outputs on the head's first input."""
    producers = {o: n for n in model.graph.node for o in n.output}
    node = next(n for n in model.graph.node if n.name == node_name)
    found, name = set(), node.input[0]
    while name in producers and producers[name].op_type in ("QuantizeLinear", "DequantizeLinear", "Cast"):
        found.add(name)
        name = producers[name].input[0]
    return found


@pytest.mark.parametrize(("build", "capped"), [(_head_and_softmax_int8, False), (_error_arrives_at_their_inputs, True)])
def test_an_error_that_arrives_at_the_inputs_caps_the_finding(tmp_path, build, capped):
    builder = BundleBuilder(tmp_path / "b")
    build(builder)
    finding, = discover()["QR002"].run(builder.context())
    assert (finding.score <= 0.2 and finding.severity != "error") is capped
    assert ("the error reaches these nodes from before them" in " ".join(str(e) for e in finding.evidence)) is capped


@pytest.mark.parametrize(("build", "measured"), [(_head_and_softmax_int8, False), (_error_arrives_at_their_inputs, True)])
def test_the_symptoms_first_step_localises_when_the_nodes_before_the_outputs_only_pass_the_error_on(
        tmp_path, build, measured):
    """QR001's first step excluded the nodes producing the outputs; where the sensitive-node pass measured them adding
    nothing, it asks for --per-layer instead (the recorded collect command, into a new folder)."""
    builder = BundleBuilder(tmp_path / "b")
    build(builder)
    finding, = [f for f in discover()["QR001"].run(builder.context()) if f.stage.startswith("ort_qdq")]
    first = finding.fixes[0]
    assert ("--per-layer" in first.command and "Find where the error is born first" in first.action) is measured
