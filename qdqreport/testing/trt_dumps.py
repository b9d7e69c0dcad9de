"""Real TensorRT engine dumps for rule examples and tests, and what they look like at other verbosities.

The dumps in data/trt/ are the TensorRT Engine Explorer (TREx) samples, Apache-2.0 (data/trt/README.md
says where from); they ship in the wheel, so every rule's examples run from an installed package.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from qdqreport.testing.builder import BundleBuilder

DUMPS = Path(__file__).resolve().parent / "data" / "trt"  # shipped in the wheel (package data)
MOBILENET_QAT = "tests_inputs_mobilenet.qat.onnx.engine.graph.json"
MOBILENET_RESIDUALS = "tests_inputs_mobilenet_v2_residuals.qat.onnx.engine.graph.json"
RESNET_FP16 = "examples_pytorch_resnet_A100_fp16_resnet.onnx.engine.graph.json"
MOBILENET_PROFILE = "tests_inputs_mobilenet.qat.onnx.engine.profile.json"
MOBILENET_SETTINGS = "tests_inputs_mobilenet.qat.onnx.engine.build.metadata.json"
_NODE_NAME = re.compile(r"\b(?:[A-Z][A-Za-z]*)_\d+\b")


def real_dump(name: str) -> str:
    """A real engine dump of DUMPS, verbatim."""
    return (DUMPS / name).read_text(encoding="utf-8")


def imported_stage(b: BundleBuilder, stage_id: str, kind: str, filename: str, text: str) -> None:
    """Rule examples: a TensorRT stage not built here but imported (import-trt) with one artefact."""
    b.stage(stage_id, status="skipped", error="imported artefacts only", details={"source": "imported"})
    b.stage_file(stage_id, kind, filename, text)


def with_trt10_metadata(text: str) -> str:
    """The real dump re-expressed as TensorRT 10 writes it: a Metadata field naming each layer's ONNX nodes.

    The names are those TensorRT 8 fused into the layer name (Conv_94, Add_144, ...), joined with the
    0x1F separator TensorRT 10 uses; everything else is unchanged.
    """
    data = json.loads(text)
    for layer in data["Layers"]:
        names = _NODE_NAME.findall(layer["Name"])
        if names:
            layer["Metadata"] = "\x1f".join(f"[ONNX Layer: {n}]" for n in names)
    return json.dumps(data, indent=1)


def names_only(text: str) -> str:
    """The real dump as trtexec writes it at the default layer_names_only verbosity."""
    data = json.loads(text)
    return json.dumps({"Layers": [layer["Name"] for layer in data["Layers"]], "Bindings": data.get("Bindings", [])})


# A trtexec build log (TensorRT 8.6 wording): a calibrator set on a Q/DQ model, precision constraints ignored.
CALIBRATOR_LOG = """&&&& RUNNING TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=cls_int8.onnx --int8 --fp16 --calib=calib.cache
[11/20/2025-10:02:11] [I] Precision: FP32+FP16+INT8
[11/20/2025-10:02:13] [W] [TRT] Calibrator won't be used in explicit precision mode. Use quantization aware training to generate network with Quantize/Dequantize nodes.
[11/20/2025-10:02:40] [W] [TRT] No implementation of layer Reshape_118 obeys the requested constraints in strict mode. No conforming implementation was found i.e. requested layer computation precision and output precision types are ignored, using the fastest implementation.
[11/20/2025-10:02:40] [W] [TRT] No implementation of layer PWN(Sigmoid_122) obeys the requested constraints in strict mode. No conforming implementation was found i.e. requested layer computation precision and output precision types are ignored, using the fastest implementation.
&&&& PASSED TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=cls_int8.onnx --int8 --fp16 --calib=calib.cache
"""
