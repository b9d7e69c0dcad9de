"""QR101: Reformat layers that change the data type inside an engine, above all unfused Q/DQ (Origin QDQ)."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.trt_layers import dtype_reformats
from qdqreport.findings import Finding, Fix, Metric, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._trt import detailed, engines, layer_info_fix, layer_table
from qdqreport.testing.trt_dumps import MOBILENET_QAT, MOBILENET_RESIDUALS, RESNET_FP16, imported_stage, real_dump

from qdqreport.stage_names import stage_name
from qdqreport.wording import plural, verb

def _mobilenet_qat(b):
    # Real engine: 16 QuantizeLinear nodes run as standalone FP16/FP32 -> Int8 Reformat layers.
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", real_dump(MOBILENET_QAT))


def _mobilenet_residuals(b):
    # Real engine: besides the network input's Q, one Q after the FP16 global pooling stays unfused.
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", real_dump(MOBILENET_RESIDUALS))


def _resnet_fp16(b):
    # Real FP16 engine: FP32 -> FP16 at the input binding and back at the output binding only.
    imported_stage(b, "trt_fp16", "layer_info", "layer_info.json", real_dump(RESNET_FP16))


@rule(id="QR101", slug="trt-reformat-dtype", title="Reformat layers convert data types inside the engine",
      examples=[Fires("real MobileNetV2 QAT engine: 16 unfused Q layers", _mobilenet_qat),
                Fires("real MobileNetV2 engine with residual Q/DQ: one unfused Q", _mobilenet_residuals),
                Quiet("real ResNet FP16 engine: conversions only at input and output", _resnet_fp16)])
def trt_reformat_dtype(ctx: Context) -> Iterator[Finding]:
    """Reformat layers whose input and output data types differ, found in an engine's layer info.

    Conversions at the engine's input and output bindings are expected and not counted. A
    Reformat with `Origin: QDQ` is a QuantizeLinear/DequantizeLinear that TensorRT could not fuse
    into a neighbouring kernel (a warning); other type-changing Reformats (FP32 <-> FP16 inside
    the network) are information.

    Why it matters: every unfused Q/DQ is an extra pass over the tensor, and it shows where the
    Q/DQ placement and TensorRT's fusion rules disagree: typically a Q whose producer runs in
    float (a residual Add, a pooling) so the quantization happens separately instead of inside
    the producing kernel.

    Fix: place Q/DQ so each Q follows a quantizable producer (quantize residual Adds and pooling
    inputs), or remove Q/DQ pairs around operations you want in float; then re-export the layer
    info and check the Reformat layers are gone.
    """
    for stage_id, evidence in engines(ctx):
        engine = detailed(evidence)
        layers = dtype_reformats(engine) if engine else []
        if not layers:
            continue
        qdq = [layer for layer in layers if layer.origin == "QDQ"]
        conversions = sorted({f"{layer.precision}→{layer.output_precision}" for layer in layers})
        title = (f"{plural(len(qdq), 'unfused Q/DQ Reformat layer')} in {stage_name(stage_id)}" if qdq
                 else f"{plural(len(layers), 'type-converting Reformat layer')} in {stage_name(stage_id)}")
        yield trt_reformat_dtype.finding(
            title=title, severity="warning" if qdq else "info", confidence=0.9,
            score=0.3 if qdq else 0.1, subject=f"{stage_id}:reformat-dtype", stage=stage_id,
            summary=(f"{plural(len(layers), 'Reformat layer')} inside {stage_name(stage_id)} {verb(len(layers), 'converts')} data types ({', '.join(conversions)}); "
                     f"{len(qdq)} come from Q/DQ nodes TensorRT did not fuse"),
            evidence=(Metric("unfused Q/DQ Reformat layers", len(qdq), threshold="> 0"),
                      Metric("type-converting Reformat layers", len(layers)),
                      layer_table("Reformat layers changing the data type", qdq or layers, engine),
                      Text("Reformats at the engine's input and output bindings (e.g. quantizing the network input) "
                           "are expected and not counted.")),
            fixes=(Fix("Quantize the float producers of these Q nodes (residual Add, pooling) so TensorRT fuses each Q "
                       "into the producing kernel, or drop Q/DQ pairs around operations meant to stay float"),
                   layer_info_fix(ctx, stage_id, "Rebuild and check the Reformat layers with Origin QDQ are gone")),
            tags=("engine", "performance"))
