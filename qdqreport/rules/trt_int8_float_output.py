"""QR100: INT8 compute layers of an engine that write float outputs (a missing output Q, a failed fusion)."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.trt_layers import Engine, Layer, int8_float_outputs
from qdqreport.findings import Finding, Fix, Metric, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._trt import detailed, engines, layer_info_fix, layer_table, layers_of_node, node_precisions, share
from qdqreport.testing.trt_dumps import MOBILENET_QAT, MOBILENET_RESIDUALS, RESNET_FP16, imported_stage, real_dump

from qdqreport.stage_names import stage_name
from qdqreport.wording import plural, verb

def _mobilenet_qat(b):
    # Real MobileNetV2 QAT engine: the residual-path convolutions end in FP16/FP32 before each Add.
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", real_dump(MOBILENET_QAT))


def _mobilenet_residuals(b):
    # Q/DQ on the residual paths too: only the last conv before the FP16 pooling keeps a float output.
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", real_dump(MOBILENET_RESIDUALS))


def _fp16_engine(b):
    imported_stage(b, "trt_fp16", "layer_info", "layer_info.json", real_dump(RESNET_FP16))


@rule(id="QR100", slug="trt-int8-float-output", title="INT8 engine layers write float outputs",
      examples=[Fires("real MobileNetV2 QAT engine: residual convolutions end in FP16", _mobilenet_qat),
                Fires("real MobileNetV2 engine with residual Q/DQ: one conv before an FP16 pooling", _mobilenet_residuals),
                Quiet("real ResNet FP16 engine (no INT8 layer)", _fp16_engine)])
def trt_int8_float_output(ctx: Context) -> Iterator[Finding]:
    """INT8 convolution/GEMM layers of a TensorRT engine whose output is FP16 or FP32, read from the layer info.

    A layer writing an engine output is exempt (engine outputs are float). When the QDQ graph's
    precision summary says the node's output was quantized (it feeds a QuantizeLinear), TensorRT
    failed to fuse that Q: a warning. Otherwise the graph has no output Q there (e.g. before a
    residual Add or a pooling left in float): information about speed, not accuracy.

    Why it matters: an INT8 kernel with a float output writes 2-4x the bytes and usually means the
    next operation runs in float, often followed by a Reformat that quantizes again. Where the Q
    existed in the graph but did not fuse, TensorRT computed something other than ONNX Runtime's
    QDQ model.

    Fix: quantize the consumer too (Q/DQ on the residual Add inputs, on pooling inputs) so TensorRT
    fuses the output Q into the convolution, then re-export the layer info and check the layer
    writes Int8.
    """
    intents = node_precisions(ctx)
    for stage_id, evidence in engines(ctx, int8_only=True):
        engine = detailed(evidence)
        layers = int8_float_outputs(engine) if engine else []
        if not layers:
            continue
        int8_compute = sum(layer.role == "compute" and layer.precision == "int8" for layer in engine.layers)
        unfused = [layer for layer in layers if _output_was_quantized(engine, layer, intents)]
        severity = "warning" if unfused else "info"
        summary = (f"{len(layers)} of {plural(int8_compute, 'INT8 compute layer')} of {stage_name(stage_id)} {verb(len(layers), 'writes')} FP16/FP32 outputs"
                   + (f"; {len(unfused)} of them had an output Q in the QDQ graph that TensorRT did not fuse" if unfused
                      else "; the next operations run in float, then get re-quantized"))
        yield trt_int8_float_output.finding(
            title=f"{plural(len(layers), 'INT8 layer')} of {stage_name(stage_id)} {verb(len(layers), 'writes')} float outputs", severity=severity,
            confidence=0.9, score=0.4 if unfused else 0.15, subject=f"{stage_id}:int8-float-output", stage=stage_id,
            summary=summary,
            evidence=(Metric("INT8 compute layers with float output", len(layers), threshold="> 0"),
                      Metric("share of INT8 compute layers", share(len(layers), int8_compute)),
                      layer_table("INT8 layers with float outputs", unfused or layers, engine),
                      Text("Precision is the type of a layer's first input, as TensorRT's layer info and TREx report it; "
                           "layers writing an engine output are not counted.")),
            fixes=(Fix("Put Q/DQ on the float consumer's inputs (residual Add, pooling) so the output Q fuses into the "
                       "convolution; with ModelOpt, quantize those op types too (do not exclude Add/GlobalAveragePool)"),
                   layer_info_fix(ctx, stage_id, "Rebuild and check that these layers now write Int8 outputs")),
            tags=("engine", "performance"))


def _output_was_quantized(engine: Engine, layer: Layer, intents: dict) -> bool:
    """Whether a QDQ graph node computed by *layer* had its output quantized (joined through ONNX names)."""
    names = layer.onnx_names or tuple(n for n in intents if layer in layers_of_node(engine, n)[0])
    return any(intents.get(name, {}).get("output_quantized") and intents[name].get("op_type") in
               ("Conv", "ConvTranspose", "MatMul", "Gemm") for name in names)
