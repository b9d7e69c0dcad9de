"""Engine layer info, profile, build settings and build logs, parsed from the real TREx dumps in qdqreport/testing/data/trt.

Expectations were taken from the files themselves: each layer's precision is the data type
named in its first input's "Format/Datatype" (e.g. "Thirty-two wide channel vectorized row major
Int8 format" is INT8), NoOp layers are not counted; they agree with the counts TREx printed for
the same files (MobileNetV2 QAT: INT8 53, FP16 15, FP32 4; with residual Q/DQ: 53, 3, 1).
"""

from __future__ import annotations

import json

import pytest

from qdqreport.analysis.trt_align import align, diff_summary
from qdqreport.analysis.trt_build_info import parse_build_log, parse_build_settings, trtexec_version
from qdqreport.analysis.trt_layers import (dtype_of, dtype_reformats, int8_float_outputs, onnx_names, parse_layer_info,
                                           parse_profile, time_by_precision)
from qdqreport.rules.trt_parser_errors import PARSER_FAILURE_LOG
from qdqreport.testing.trt_dumps import CALIBRATOR_LOG, DUMPS, names_only, with_trt10_metadata

DATA = DUMPS
MOBILENET = "tests_inputs_mobilenet.qat.onnx.engine.graph.json"
RESIDUALS = "tests_inputs_mobilenet_v2_residuals.qat.onnx.engine.graph.json"
RESNET16 = "examples_pytorch_resnet_A100_fp16_resnet.onnx.engine.graph.json"
RESNET32 = "examples_pytorch_resnet_A100_fp32_resnet.onnx.engine.graph.json"


def load(name: str):
    return json.loads((DATA / name).read_text())


def engine(name: str):
    return parse_layer_info(load(name))


@pytest.mark.parametrize(("name", "layers", "noop", "precisions"), [
    (MOBILENET, 73, 1, {"int8": 53, "fp16": 15, "fp32": 4}),
    (RESIDUALS, 58, 1, {"int8": 53, "fp16": 3, "fp32": 1}),
    (RESNET16, 36, 11, {"fp16": 24, "fp32": 1}),
    (RESNET32, 32, 8, {"fp32": 24}),
])
def test_layer_counts_by_precision(name, layers, noop, precisions):
    parsed = engine(name)
    assert parsed.detailed and len(parsed.layers) == layers
    assert sum(layer.role == "noop" for layer in parsed.layers) == noop
    assert parsed.precision_counts() == precisions
    assert not parsed.has_onnx_names  # pre-TensorRT-10 dumps


def test_roll_up_by_type_and_precision():
    rollup = engine(MOBILENET).type_precision_counts()
    assert rollup["Convolution"] == {"int8": 53}
    assert rollup["Reformat"] == {"fp16": 14, "fp32": 4}  # 17 Q layers + one layout-only reformat
    assert rollup["Pooling"] == {"fp16": 1}
    assert list(rollup)[0] == "Convolution"  # most layers first


def test_int8_layers_with_float_outputs_fewer_with_residual_qdq():
    # Residual-path convolutions feed a float Add in the plain QAT engine; with Q/DQ on the residuals only the
    # conv before the FP16 global pooling keeps a float output. The classifier Gemm writes the engine output (exempt).
    plain = [layer.name for layer in int8_float_outputs(engine(MOBILENET))]
    residual = [layer.name for layer in int8_float_outputs(engine(RESIDUALS))]
    assert len(plain) == 16 and len(residual) == 1
    assert "features.3.conv.2.weight + QuantizeLinear_138 + Conv_142 + Add_144" in plain
    assert residual == ["features.18.0.weight + QuantizeLinear_740 + Conv_742 + PWN(Clip_746)"]
    assert not any("Gemm" in name for name in plain + residual)
    assert int8_float_outputs(engine(RESNET16)) == []


def test_unfused_qdq_reformats_exclude_the_input_quantizer():
    plain, residual = dtype_reformats(engine(MOBILENET)), dtype_reformats(engine(RESIDUALS))
    assert len(plain) == 16 and all(layer.origin == "QDQ" for layer in plain)
    assert "QuantizeLinear_2" not in {layer.name for layer in plain}  # quantizes the network input: expected
    assert [layer.name for layer in residual] == ["QuantizeLinear_757"]
    assert dtype_reformats(engine(RESNET16)) == []  # FP32<->FP16 only at the input and output bindings


def test_names_only_verbosity_is_detected():
    parsed = parse_layer_info(json.loads(names_only((DATA / MOBILENET).read_text())))
    assert not parsed.detailed and len(parsed.names) == 73 and parsed.layers == ()
    # the shape trtexec prints at the default verbosity (NVIDIA/TensorRT issue 4020)
    assert not parse_layer_info({"Layers": ["Conv__25 + Relu", "MaxPool2d"], "Bindings": ["x:0", "z:0"]}).detailed


def test_trt10_metadata_gives_onnx_names():
    assert onnx_names("[ONNX Layer: /m/Conv]\x1f[ONNX Layer: /m/Relu]") == ("/m/Conv", "/m/Relu")
    assert onnx_names("[ONNX Layer: a\x1fb]") == ("a", "b")
    assert onnx_names("[ONNX Layer: a]\x1e[ONNX Layer: b]\x1e[ONNX Layer: a]") == ("a", "b")
    parsed = parse_layer_info(json.loads(with_trt10_metadata((DATA / MOBILENET).read_text())))
    assert parsed.has_onnx_names
    assert parsed.layers[1].onnx_names == ("QuantizeLinear_8", "Conv_12", "Clip_16")


@pytest.mark.parametrize(("text", "dtype"), [
    ("Thirty-two wide channel vectorized row major Int8 format", "int8"), ("Row major linear FP32", "fp32"),
    ("Channel major FP16 format where channel % 8 == 0", "fp16"), ("Half", "fp16"), ("Float", "fp32"),
    ("Row major linear BFloat16 format", "bf16"), ("Row major linear UInt8 format", "uint8"), ("Row major linear FP8 format", "fp8"),
])
def test_format_strings_to_dtype(text, dtype):
    assert dtype_of(text) == dtype


@pytest.mark.parametrize(("data", "message"), [
    ([{"count": 3}, {"name": "a", "averageMs": 1.0}], "--exportProfile timing file"),
    ({"layers": []}, "no \"Layers\" list"),
    ({"Layers": []}, "empty"),
    ({"Layers": ["a", {"Name": "b"}]}, "mixes layer names"),
    ({"Layers": [{"Name": "a", "Inputs": [{"Name": "x"}], "Outputs": []}]}, "Format/Datatype"),
])
def test_bad_layer_info_says_what_is_wrong(data, message):
    with pytest.raises(ValueError, match=message):
        parse_layer_info(data)


def test_profile_parses_and_times_by_precision():
    runs, times = parse_profile(load("tests_inputs_mobilenet.qat.onnx.engine.profile.json"))
    assert runs == 6610 and len(times) == 73
    assert times[0].name == "QuantizeLinear_2" and times[0].median_ms == pytest.approx(0.004544)
    assert sum(t.percentage for t in times) == pytest.approx(100.0, abs=0.01)
    by_precision = time_by_precision(engine(MOBILENET), times)
    assert set(by_precision) == {"int8", "fp16", "fp32"}  # every timed layer is in the layer info
    assert by_precision["int8"] > by_precision["fp16"] > by_precision["fp32"]
    with pytest.raises(ValueError, match="layer-info file"):
        parse_profile(load(MOBILENET))


def test_trex_build_metadata():
    settings = parse_build_settings(load("tests_inputs_mobilenet.qat.onnx.engine.build.metadata.json"))
    assert settings.source == "trex-metadata" and settings.precision == "FP32+FP16+INT8"
    assert settings.int8 and settings.fp16 and settings.obey_precision_constraints is None
    with pytest.raises(ValueError, match="neither"):
        parse_build_settings({"foo": 1})


def test_build_log_lines():
    log = parse_build_log(CALIBRATOR_LOG)
    assert log.tensorrt_version == "8.6.1" and log.outcome == "PASSED"
    assert log.calibrator_ignored and log.precision_ignored == ("Reshape_118", "PWN(Sigmoid_122)")
    assert log.obey_requested is False and log.precision_line == "FP32+FP16+INT8"
    failed = parse_build_log(PARSER_FAILURE_LOG)
    assert failed.parse_failed and failed.unsupported_ops == ("GridSample3D",)
    assert failed.tensorrt_version == "10.3.0" and failed.strongly_typed
    assert trtexec_version("8003") == "8.0.3" and trtexec_version("100100") == "10.1.0"


def test_alignment_of_fp32_and_fp16_resnet_engines():
    pairs = align(engine(RESNET32), engine(RESNET16))
    summary = diff_summary(pairs)
    assert summary["aligned"] == 23  # 21 convolutions + 2 poolings, matched by kind and output dims
    assert summary["precision_changed"] == 23  # every one runs FP32 in one engine and FP16 in the other
    assert all(p.a.kind == p.b.kind for p in pairs if p.a and p.b)


def test_alignment_of_the_two_qat_placements():
    pairs = align(engine(MOBILENET), engine(RESIDUALS))
    summary = diff_summary(pairs)
    assert summary["aligned"] == 54 and summary["precision_changed"] == 0  # 53 convs + pooling, INT8 in both
    assert summary["output_changed"] == 15  # residual convs: float output before, Int8 with residual Q/DQ
    # Reformat layers are never aligned (they exist because of the precisions): each side lists its own Q layers
    only_plain, only_residual = [p.a for p in pairs if p.b is None], [p.b for p in pairs if p.a is None]
    assert sum(layer.origin == "QDQ" for layer in only_plain) == 17
    assert sum(layer.origin == "QDQ" for layer in only_residual) == 2


# TensorRT 11 renamed and split fields of the inspector JSON ("Migrating IEngineInspector Usage from
# TensorRT 10.x to 11.x" in NVIDIA's docs): "Bindings" -> "I/O Tensors" objects, "Format/Datatype" ->
# "Format" + "DataType". No TensorRT 11 dump is available here, so the real dumps are rewritten into
# that schema: the data-type word moves out of the format text into DataType, as TensorRT 11 writes it.
TRT11_TYPE_NAMES = {"fp32": "Float", "fp16": "Half", "int8": "Int8", "int32": "Int32", "bool": "Bool", "uint8": "UInt8"}


def as_trt11(data: dict) -> dict:
    def split(tensor: dict) -> dict:
        combined = tensor.pop("Format/Datatype")
        precision = dtype_of(combined)
        word = next(w for w in ("Int8", "INT8", "FP16", "Half", "FP32", "Float", "Int32", "Bool") if w in combined)
        return {**tensor, "Format": " ".join(combined.replace(word, "").split()), "DataType": TRT11_TYPE_NAMES[precision]}

    layers = [{**layer, "Inputs": [split(dict(t)) for t in layer["Inputs"]],
               "Outputs": [split(dict(t)) for t in layer["Outputs"]]} for layer in data["Layers"]]
    io = [{"Name": name, "IOMode": "Input" if i == 0 else "Output"} for i, name in enumerate(data["Bindings"])]
    return {"Layers": layers, "I/O Tensors": io}


@pytest.mark.parametrize("name", [MOBILENET, RESIDUALS, RESNET16, RESNET32])
def test_tensorrt11_schema_reads_like_tensorrt10(name):
    trt10, trt11 = engine(name), parse_layer_info(as_trt11(load(name)))
    assert "Format/Datatype" not in json.dumps(as_trt11(load(name)))
    assert trt11.precision_counts() == trt10.precision_counts()
    assert trt11.bindings == trt10.bindings and trt11.bindings
    assert [layer.name for layer in int8_float_outputs(trt11)] == [layer.name for layer in int8_float_outputs(trt10)]
    assert [layer.name for layer in dtype_reformats(trt11)] == [layer.name for layer in dtype_reformats(trt10)]


def test_tensorrt11_datatype_spelling_and_missing_type():
    layer = {"Name": "gemm_0", "LayerType": "MatrixMultiply", "Outputs": [],
             "Inputs": [{"Name": "tokens", "Dimensions": [-1, 16], "Format": "Row major linear format", "Datatype": "Half"}]}
    assert parse_layer_info({"Layers": [layer]}).precision_counts() == {"fp16": 1}
    del layer["Inputs"][0]["Datatype"]
    with pytest.raises(ValueError, match="DataType"):
        parse_layer_info({"Layers": [layer]})
