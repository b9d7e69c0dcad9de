"""precision_summary on real QDQ models (tests/data/models, made by scripts/make_test_models.py)
and on small synthetic graphs for the cases real models here do not show."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from qdqreport.collect.precision import precision_summary, sensitive_nodes
from qdqreport.collect.qdq_graph import GraphIndex

MODELS = Path(__file__).resolve().parent / "data" / "models"


def summary_of(model: onnx.ModelProto) -> dict:
    """The summary, checked to be strict JSON (no NaN/inf, no numpy types) on the way."""
    result = precision_summary(model)
    return json.loads(json.dumps(result, allow_nan=False))


@pytest.fixture(scope="module")
def modelopt() -> dict:
    return summary_of(onnx.load(MODELS / "cls_modelopt_int8.onnx"))


@pytest.fixture(scope="module")
def ort() -> dict:
    return summary_of(onnx.load(MODELS / "cls_ort_int8.onnx"))


@pytest.fixture(scope="module")
def fp32() -> dict:
    return summary_of(onnx.load(MODELS / "cls_fp32.onnx"))


def node(summary: dict, name: str) -> dict:
    return next(n for n in summary["nodes"] if n["name"] == name)


def entry(summary: dict, tensor: str) -> dict:
    return next(q for q in summary["qdq"] if q["tensor"] == tensor)


# --- real models ------------------------------------------------------------------------------
def test_fp32_model_has_no_quantization(fp32: dict) -> None:
    assert fp32["float_dtype"] == "fp32"
    assert fp32["counts"] == {"nodes": 566, "compute_nodes": 232, "quantized_nodes": 0, "q_nodes": 0, "dq_nodes": 0}
    assert fp32["qdq"] == []
    assert [(s["node"], s["pattern"], s["quantized"]) for s in fp32["sensitive"]] == [
        ("MatMul@0", "final_matmul", False), ("Softmax@0", "softmax", False)]


def test_modelopt_counts_agree_with_modelopts_own_log(modelopt: dict) -> None:
    # ModelOpt printed "Total number of nodes: 912", "Total number of quantized nodes: 129" and
    # "Quantized type counts: {'Conv': 49, 'Add': 41, 'Mul': 27, 'BatchNormalization': 2, 'GlobalAveragePool': 10}".
    assert modelopt["counts"] == {"nodes": 912, "compute_nodes": 232, "quantized_nodes": 129,
                                  "q_nodes": 171, "dq_nodes": 171}
    int8 = {op: row["int8"] for op, row in modelopt["by_op_type"].items() if "int8" in row}
    assert int8 == {"Conv": 49, "Add": 41, "Mul": 27, "BatchNormalization": 2, "GlobalAveragePool": 10}


def test_modelopt_keeps_the_rest_in_fp16(modelopt: dict) -> None:
    assert modelopt["float_dtype"] == "fp16"
    assert modelopt["by_op_type"]["Conv"] == {"fp16": 4, "int8": 49}
    # the four Convs ModelOpt logged as "I/O channel size less than 16"
    assert [n["name"] for n in modelopt["nodes"] if n["op_type"] == "Conv" and n["precision"] == "fp16"] == [
        "Conv@1", "Conv@3", "Conv@4", "Conv@5"]
    conv = node(modelopt, "Conv@0")
    assert (conv["precision"], conv["activation_dtype"], conv["weight_dtype"]) == ("int8", "int8", "int8")


def test_modelopt_leaves_final_matmul_and_softmax_unquantized(modelopt: dict) -> None:
    assert [(s["node"], s["pattern"], s["quantized"], s["tensor"]) for s in modelopt["sensitive"]] == [
        ("MatMul@0", "final_matmul", False, "linear_1.tmp_0"), ("Softmax@0", "softmax", False, "softmax_0.tmp_0")]
    assert node(modelopt, "MatMul@0")["precision"] == "fp16"  # "Excluding small-dim MatMul ... MatMul@0 (N=2"
    assert node(modelopt, "Softmax@0")["feeds_graph_output"] is True


def test_modelopt_input_quantizer_is_found_through_the_fp16_cast(modelopt: dict) -> None:
    x = entry(modelopt, "x")  # x -> Cast(fp16) -> Q -> DQ -> Conv@0
    assert (x["q_node"], x["kind"], x["dtype"], x["axis"]) == ("x_QuantizeLinear", "activation", "int8", None)
    assert x["consumers"] == ["Conv@0"]
    assert x["scale_constant"] and x["scale_finite_positive"] and not x["zero_point_nonzero"]


def test_modelopt_constant_node_weights_are_quantized_per_tensor(modelopt: dict) -> None:
    # The Paddle export keeps weights in Constant nodes; ModelOpt adds Q->DQ to them with one scale each.
    weights = [q for q in modelopt["qdq"] if q["kind"] == "weight"]
    assert len(weights) == 49
    assert all(q["q_node"] and q["axis"] is None and q["scale_count"] == 1 for q in weights)
    assert entry(modelopt, "conv1_weights")["consumers"] == ["Conv@0"]


def test_real_q_dq_pairs_match_although_modelopt_names_scales_apart(modelopt: dict, ort: dict) -> None:
    # ModelOpt gives Q and DQ separate initializers (<t>_scale_1, <t>_scale_2) with equal values.
    assert all(q["pair_scales_match"] for q in modelopt["qdq"])
    assert all(q["pair_scales_match"] for q in ort["qdq"])


def test_ort_uses_uint8_activations_with_nonzero_zero_points(ort: dict) -> None:
    activations = [q for q in ort["qdq"] if q["kind"] == "activation"]
    assert {q["dtype"] for q in activations} == {"uint8"}
    assert sum(q["zero_point_nonzero"] for q in activations) == 174
    x = entry(ort, "x")
    assert (x["dtype"], x["zero_point_nonzero"], x["zero_point_max_abs"]) == ("uint8", True, 128)


def test_ort_weights_are_per_channel_int8_initializers(ort: dict) -> None:
    conv1 = entry(ort, "conv1_weights")  # stored as conv1_weights_quantized -> DequantizeLinear
    assert (conv1["q_node"], conv1["dq_nodes"], conv1["kind"]) == (None, ["conv1_weights_DequantizeLinear"], "weight")
    assert (conv1["dtype"], conv1["axis"], conv1["scale_count"]) == ("int8", 0, 8)
    assert entry(ort, "fc_0.w_0")["axis"] == 1
    assert sum(1 for q in ort["qdq"] if q["dtype"] == "int32") == 35  # quantized BN/Conv biases


def test_ort_quantizes_everything_but_maxpool_in_fp32(ort: dict) -> None:
    assert ort["float_dtype"] == "fp32"
    assert ort["counts"]["compute_nodes"] - ort["counts"]["quantized_nodes"] == 1
    assert node(ort, "MaxPool@0")["precision"] == "fp32"
    assert ort["by_op_type"]["Conv"] == {"uint8": 53}
    matmul = node(ort, "MatMul@0")
    assert (matmul["activation_dtype"], matmul["weight_dtype"], matmul["output_quantized"]) == ("uint8", "int8", True)
    assert [(s["node"], s["pattern"], s["quantized"], s["tensor"]) for s in ort["sensitive"]] == [
        ("MatMul@0", "final_matmul", True, "linear_1.tmp_0"), ("Softmax@0", "softmax", True, "softmax_0.tmp_0")]


def test_node_index_is_the_topological_position(ort: dict) -> None:
    model = onnx.load(MODELS / "cls_ort_int8.onnx")
    names = [n.name for n in model.graph.node]
    assert all(names[n["index"]] == n["name"] for n in ort["nodes"] if n["name"] in names)


# --- synthetic graphs (TensorRT-semantics cases) ------------------------------------------------
def synthetic_model(act_scale=0.05, act_zero=0, zero_type=TensorProto.INT8, dq_scale=None, scale_input=False,
                    extra_nodes=(), extra_inits=()) -> onnx.ModelProto:
    """Synthetic: X -> Q -> DQ -> Conv(DQ(int8 W)) -> Y, with the activation quantizer configurable."""
    zero = np.array(act_zero, dtype=helper.tensor_dtype_to_np_dtype(zero_type))
    inits = [numpy_helper.from_array(zero, "x_zero"),
             numpy_helper.from_array(np.full((2, 1, 1, 1), 3, np.int8), "w"),
             numpy_helper.from_array(np.array([0.1, 0.2], np.float32), "w_scale"),
             numpy_helper.from_array(np.zeros(2, np.int8), "w_zero"), *extra_inits]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 4, 4])]
    if scale_input:
        inputs.append(helper.make_tensor_value_info("x_scale", TensorProto.FLOAT, []))
    else:
        inits.append(numpy_helper.from_array(np.array(act_scale, np.float32), "x_scale"))
    dq_scale_name = "x_scale"
    if dq_scale is not None:
        inits.append(numpy_helper.from_array(np.array(dq_scale, np.float32), "x_scale_dq"))
        dq_scale_name = "x_scale_dq"
    nodes = [helper.make_node("QuantizeLinear", ["X", "x_scale", "x_zero"], ["xq"], name="x_Q"),
             helper.make_node("DequantizeLinear", ["xq", dq_scale_name, "x_zero"], ["xd"], name="x_DQ"),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wd"], name="w_DQ", axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["Y"], name="conv"), *extra_nodes]
    graph = helper.make_graph(nodes, "synthetic", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def test_synthetic_symmetric_int8_is_clean() -> None:
    result = summary_of(synthetic_model())
    x = entry(result, "X")
    assert (x["dtype"], x["zero_point_nonzero"]) == ("int8", False)
    assert x["pair_scales_match"] is True and x["scale_constant"] is True
    w = entry(result, "w")  # dq_only layout: int8 initializer -> DQ under the original name
    assert (w["q_node"], w["kind"], w["axis"]) == (None, "weight", 0)
    assert (w["scale_min"], w["scale_max"]) == (pytest.approx(0.1), pytest.approx(0.2))
    conv = node(result, "conv")
    assert (conv["precision"], conv["activation_quantized"], conv["weight_quantized"]) == ("int8", True, True)
    assert conv["feeds_graph_output"] is True
    assert [(s["node"], s["pattern"], s["quantized"]) for s in result["sensitive"]] == [("conv", "head", True)]


def test_synthetic_nonzero_int8_zero_point() -> None:
    x = entry(summary_of(synthetic_model(act_zero=-7)), "X")
    assert (x["dtype"], x["zero_point_nonzero"], x["zero_point_max_abs"]) == ("int8", True, 7)


def test_synthetic_uint8_activation() -> None:
    result = summary_of(synthetic_model(act_zero=128, zero_type=TensorProto.UINT8))
    assert entry(result, "X")["dtype"] == "uint8" and entry(result, "X")["zero_point_max_abs"] == 128
    assert node(result, "conv")["precision"] == "uint8"
    assert node(result, "conv")["weight_dtype"] == "int8"


def test_synthetic_scale_from_a_non_constant_tensor() -> None:
    x = entry(summary_of(synthetic_model(scale_input=True)), "X")
    assert x["scale_constant"] is False
    assert x["scale_finite_positive"] is False  # cannot be verified
    assert (x["scale_count"], x["scale_min"], x["scale_max"]) == (0, None, None)
    assert x["pair_scales_match"] is True  # the Q and the DQ read the very same tensor


def test_synthetic_infinite_scale_is_reported_and_stays_valid_json() -> None:
    x = entry(summary_of(synthetic_model(act_scale=np.inf)), "X")
    assert x["scale_finite_positive"] is False
    assert (x["scale_min"], x["scale_max"]) == (None, None)
    zero = entry(summary_of(synthetic_model(act_scale=0.0)), "X")
    assert zero["scale_finite_positive"] is False and zero["scale_min"] == 0.0


def test_synthetic_dq_with_a_different_scale_breaks_the_pair() -> None:
    assert entry(summary_of(synthetic_model(dq_scale=0.07)), "X")["pair_scales_match"] is False
    # same value under another name (ModelOpt's layout) still matches
    assert entry(summary_of(synthetic_model(dq_scale=0.05)), "X")["pair_scales_match"] is True


def test_synthetic_qat_scales_in_constant_nodes() -> None:
    # QAT exports carry scales and zero-points in Constant nodes, not initializers.
    model = synthetic_model()
    graph = model.graph
    moved = {i.name: i for i in graph.initializer if i.name in ("x_scale", "x_zero")}
    kept = [i for i in graph.initializer if i.name not in moved]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    for name, tensor in moved.items():
        graph.node.insert(0, helper.make_node("Constant", [], [name], value=tensor))
    x = entry(summary_of(model), "X")
    assert x["scale_constant"] is True and x["scale_min"] == pytest.approx(0.05)
    assert (x["dtype"], x["kind"], x["pair_scales_match"]) == ("int8", "activation", True)


def test_synthetic_q_without_zero_point_is_uint8() -> None:
    model = synthetic_model()
    for n in model.graph.node:
        if n.name in ("x_Q", "x_DQ"):
            del n.input[2]
    assert entry(summary_of(model), "X")["dtype"] == "uint8"


def layernorm_sigmoid_model(quantize_sub: bool = False) -> onnx.ModelProto:
    """Synthetic: decomposed LayerNorm -> MatMul -> Sigmoid -> Y, plus Softmax on a side output.

    quantize_sub puts a Q/DQ pair between the Sub and the Div of the LayerNorm (as ORT does)."""
    n = helper.make_node
    d_for_div = "dd" if quantize_sub else "d"
    nodes = [n("ReduceMean", ["X"], ["mean"], name="mean", axes=[-1]), n("Sub", ["X", "mean"], ["d"], name="sub"),
             n("Pow", ["d", "two"], ["d2"], name="pow"), n("ReduceMean", ["d2"], ["var"], name="var", axes=[-1]),
             n("Add", ["var", "eps"], ["ve"], name="add"), n("Sqrt", ["ve"], ["std"], name="sqrt"),
             n("Div", [d_for_div, "std"], ["norm"], name="ln_div"), n("MatMul", ["norm", "W"], ["h"], name="fc"),
             n("Sigmoid", ["h"], ["Y"], name="gate"), n("Softmax", ["h"], ["P"], name="probs")]
    if quantize_sub:
        nodes[2:2] = [n("QuantizeLinear", ["d", "s", "z"], ["dq"], name="d_Q"),
                      n("DequantizeLinear", ["dq", "s", "z"], ["dd"], name="d_DQ")]
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int8), "z"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             numpy_helper.from_array(np.ones((8, 3), np.float32), "W")]
    graph = helper.make_graph(nodes, "synthetic_ln", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("P", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_synthetic_sensitive_patterns() -> None:
    result = summary_of(layernorm_sigmoid_model())
    assert [(s["node"], s["pattern"], s["tensor"]) for s in result["sensitive"]] == [
        ("ln_div", "layernorm", "norm"), ("fc", "final_matmul", "h"), ("gate", "sigmoid", "Y"),
        ("probs", "softmax", "P")]
    assert not any(s["quantized"] for s in result["sensitive"])
    assert result["float_dtype"] == "fp32"


def test_synthetic_layernorm_is_found_through_a_qdq_pair() -> None:
    result = summary_of(layernorm_sigmoid_model(quantize_sub=True))
    layernorm = [s for s in result["sensitive"] if s["pattern"] == "layernorm"]
    assert [(s["node"], s["quantized"]) for s in layernorm] == [("ln_div", True)]
    assert node(result, "ln_div")["precision"] == "int8"


def test_synthetic_nodes_out_of_order_get_topological_indices() -> None:
    model = layernorm_sigmoid_model()
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(reversed(nodes))
    result = summary_of(model)
    assert [n["name"] for n in sorted(result["nodes"], key=lambda n: n["index"])][:3] == ["mean", "sub", "pow"]


def residual_blocks_model(blocks: int = 3) -> onnx.ModelProto:
    """Synthetic transformer-like stack: h = LayerNorm(h + MatMul(h, W_i)) per block, then the output."""
    n = helper.make_node
    nodes, inits, h = [], [numpy_helper.from_array(np.ones(8, np.float32), "g"),
                           numpy_helper.from_array(np.zeros(8, np.float32), "b")], "X"
    for i in range(blocks):
        inits.append(numpy_helper.from_array(np.eye(8, dtype=np.float32), f"W{i}"))
        nodes += [n("MatMul", [h, f"W{i}"], [f"p{i}"], name=f"proj{i}"), n("Add", [h, f"p{i}"], [f"r{i}"], name=f"res{i}"),
                  n("LayerNormalization", [f"r{i}", "g", "b"], [f"h{i}"], name=f"ln{i}")]
        h = f"h{i}"
    nodes.append(n("ReduceMean", [h], ["Y"], name="pool", axes=[1]))
    graph = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_synthetic_residual_stream_has_one_final_matmul() -> None:
    """Every block's projection reaches the output along the skip connections without another MatMul in
    between; only the last block's, nearest to the output, is the final MatMul."""
    result = summary_of(residual_blocks_model())
    assert [s["node"] for s in result["sensitive"] if s["pattern"] == "final_matmul"] == ["proj2"]
    assert [s["node"] for s in result["sensitive"] if s["pattern"] == "layernorm"] == ["ln0", "ln1", "ln2"]


# --- SiLU gates are activations, not sensitive sigmoids (real YOLOX from the ddddocr wheel) --------------------
def _ddddocr_detector() -> Path:
    spec = importlib.util.find_spec("ddddocr")  # find only: importing it loads its models
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("ddddocr is not installed (pip install --no-deps ddddocr==1.6.1; .ci/run does it)")
    return Path(spec.submodule_search_locations[0]) / "common_det.onnx"


def _sigmoid_patterns(model: onnx.ModelProto) -> tuple[int, list[str]]:
    sensitive = sensitive_nodes(GraphIndex(model))
    return sum(n.op_type == "Sigmoid" for n in model.graph.node), [s["node"] for s in sensitive if s["pattern"] == "sigmoid"]


def test_yolox_silu_sigmoids_are_not_sensitive_but_its_score_sigmoids_are():
    model = onnx.load(_ddddocr_detector())
    total, sensitive = _sigmoid_patterns(model)
    # 74 SiLU activations (x * sigmoid(x)) in the backbone and neck, 6 score sigmoids (objectness and class, 3 scales).
    assert total == 80 and len(sensitive) == 6
    index = GraphIndex(model)
    for name in sensitive:
        node = next(n for n in model.graph.node if index.name_of(n) == name)
        assert not any(r.op_type == "Mul" and node.input[0] in r.input for r in index.consumers.get(node.output[0], ()))


@pytest.mark.slow
def test_silu_is_recognised_through_the_q_dq_pairs_of_a_fully_quantized_yolox(tmp_path: Path):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class TwoPictures(CalibrationDataReader):  # the graph's structure is under test, not its accuracy
        def __init__(self):
            rng = np.random.default_rng(0)
            self.feeds = iter([{"images": rng.uniform(0, 255, (1, 3, 416, 416)).astype(np.float32)} for _ in range(2)])

        def get_next(self):
            return next(self.feeds, None)

    out = tmp_path / "yolox_all_ops.onnx"
    quantize_static(str(_ddddocr_detector()), str(out), TwoPictures(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": True})
    model = onnx.load(out)
    assert sum(n.op_type == "QuantizeLinear" for n in model.graph.node) > 200  # Sigmoid and Mul outputs quantized too
    assert len(_sigmoid_patterns(model)[1]) == 6


def stft_log_model(quantize_stft: bool) -> onnx.ModelProto:
    """Synthetic (no ONNX model in a package here has an STFT written as Convs and small enough for a unit test;
    the real one, DNSMOS, is tested through its corpus bundles): raw audio -> real and imaginary Convs -> square,
    add, sqrt -> Log -> a Conv head. quantize_stft puts the Convs' input and output through Q/DQ pairs."""
    n = helper.make_node
    audio = "Xq" if quantize_stft else "X"
    nodes = [n("Conv", [audio, "Wr"], ["re"], name="stft-real"), n("Conv", [audio, "Wi"], ["im"], name="stft-imag"),
             n("Mul", ["re_", "re_"], ["re2"], name="square_re"), n("Mul", ["im_", "im_"], ["im2"], name="square_im"),
             n("Add", ["re2", "im2"], ["power"], name="add"), n("Sqrt", ["power"], ["mag"], name="sqrt"),
             n("Log", ["mag"], ["logmag"], name="log"), n("Conv", ["logmag", "Wh"], ["Y"], name="head")]
    if quantize_stft:
        nodes[:0] = [n("QuantizeLinear", ["X", "s", "z"], ["xq8"], name="x_Q"),
                     n("DequantizeLinear", ["xq8", "s", "z"], ["Xq"], name="x_DQ")]
        nodes += [n(op, [src, "s", "z"], [dst], name=f"{dst}_{op[0]}") for op, src, dst in
                  (("QuantizeLinear", "re", "re8"), ("DequantizeLinear", "re8", "re_"),
                   ("QuantizeLinear", "im", "im8"), ("DequantizeLinear", "im8", "im_"))]
    else:
        nodes += [n("Identity", ["re"], ["re_"], name="re_id"), n("Identity", ["im"], ["im_"], name="im_id")]
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int8), "z"),
             numpy_helper.from_array(np.ones((4, 1, 8), np.float32), "Wr"),
             numpy_helper.from_array(np.ones((4, 1, 8), np.float32), "Wi"),
             numpy_helper.from_array(np.ones((2, 4, 1), np.float32), "Wh")]
    graph = helper.make_graph(nodes, "synthetic_stft", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                                       [1, 1, 64])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("quantized", [False, True])
def test_convs_computing_a_logs_input_are_its_front_end_measured_on_the_logs_output(quantized: bool) -> None:
    result = summary_of(stft_log_model(quantize_stft=quantized))
    front = [(s["node"], s["tensor"], s["quantized"]) for s in result["sensitive"] if s["pattern"] == "log_front_end"]
    assert front == [("stft-real", "logmag", quantized), ("stft-imag", "logmag", quantized)]
    assert [(s["node"], s["pattern"]) for s in result["sensitive"] if s["node"] in ("log", "head")] == [
        ("log", "log"), ("head", "head")]  # the head after the Log is no front end
