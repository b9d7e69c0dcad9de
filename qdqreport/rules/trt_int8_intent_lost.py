"""QR102: nodes the QDQ graph quantizes to INT8 that the TensorRT engine runs in FP16/FP32."""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import trtexec_fixes
from qdqreport.rules._common import diverging_outputs
from qdqreport.testing.recipes import node, precision_summary
from qdqreport.rules._trt import ROWS_SHOWN, detailed, engines, lost_intents
from qdqreport.testing.trt_dumps import MOBILENET_QAT, imported_stage, real_dump, with_trt10_metadata

from qdqreport.stage_names import stage_name
from qdqreport.wording import plural, verb
_COMPUTE_NODE = re.compile(r"\b(?:Conv|Gemm)_\d+\b")


def _summary_of_dump(text: str, extra_int8: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """A precision summary of the QAT MobileNetV2 graph as its engine names it: every Conv/Gemm INT8, plus *extra_int8*."""
    names = [n for layer in json.loads(text)["Layers"] for n in _COMPUTE_NODE.findall(layer["Name"])]
    nodes = [node(name, name.split("_")[0], i, "int8") for i, name in enumerate(dict.fromkeys(names))]
    nodes += [node(name, op, len(nodes) + i, "int8") for i, (name, op) in enumerate(extra_int8)]
    return precision_summary(nodes)


def _pool_meant_int8_trt10(b):
    # Real engine (Metadata derived from its layer names, as TensorRT 10 writes it); the QDQ graph is
    # taken to quantize the global pooling's input, which TensorRT ran in FP16 after a float conv output.
    dump = with_trt10_metadata(real_dump(MOBILENET_QAT))
    b.artifact("precision_summary", _summary_of_dump(dump, (("GlobalAveragePool_843", "GlobalAveragePool"),)))
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", dump)


def _pool_meant_int8_trt8(b):
    # The same with the real pre-TensorRT-10 dump: joined through fused layer names, approximately.
    dump = real_dump(MOBILENET_QAT)
    b.artifact("precision_summary", _summary_of_dump(dump, (("GlobalAveragePool_843", "GlobalAveragePool"),)))
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", dump)


def _convs_int8_as_meant(b):
    dump = with_trt10_metadata(real_dump(MOBILENET_QAT))
    b.artifact("precision_summary", _summary_of_dump(dump))
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", dump)


@rule(id="QR102", slug="trt-int8-intent-lost", title="Nodes quantized in the QDQ graph run in float in the engine",
      examples=[Fires("TensorRT 10 dump: a pooling meant INT8 runs FP16", _pool_meant_int8_trt10),
                Fires("TensorRT 8 dump, joined by layer names", _pool_meant_int8_trt8),
                Quiet("every quantized convolution runs INT8", _convs_int8_as_meant)])
def trt_int8_intent_lost(ctx: Context) -> Iterator[Finding]:
    """QDQ-graph nodes with quantized inputs (precision_summary) whose engine layers all run FP16/FP32.

    Nodes are joined to layers through the ONNX names TensorRT 10+ writes into each layer's
    Metadata (exact). Older layer info has no Metadata: the join then reads node names out of
    the fused layer names ("A + B + PWN(C)"), which is approximate (renamed or anonymous layers
    are missed), and the finding says so with a lower confidence. Nodes that join to no layer are
    counted, not flagged. An error when the deployment comparison also diverges.

    Why it matters: ONNX Runtime ran these nodes in INT8 with the Q/DQ scales; TensorRT dropped
    the quantization (weakly typed builds may choose any precision without precision constraints),
    so the engine is not the model you validated.

    Fix: build with the Q/DQ precisions obeyed (TensorRT 10: --precisionConstraints=obey, or
    --stronglyTyped; TensorRT 11 is always strongly typed), then re-export the layer info.
    """
    deployment_bad = bool(diverging_outputs(ctx, "deployment"))
    for stage_id, evidence in engines(ctx, int8_only=True):
        engine = detailed(evidence)
        if engine is None:
            continue
        flagged, joined, total = lost_intents(ctx, engine)
        if flagged:
            yield _finding(ctx, stage_id, flagged, joined, total, engine.has_onnx_names, deployment_bad)


def _finding(ctx: Context, stage_id: str, flagged: list, joined: int, total: int, exact: bool,
             deployment_bad: bool) -> Finding:
    rows = tuple((intent["name"], intent["op_type"], intent["precision"], layers[0].name,
                  ", ".join(sorted({layer.precision for layer in layers}))) for intent, layers in flagged[:ROWS_SHOWN])
    join = ("exact: through the ONNX names in each layer's Metadata (TensorRT 10+)" if exact else
            "approximate: no Metadata in this layer info (TensorRT < 10), so node names were read from fused layer "
            "names; renamed or anonymous layers are missed")
    return trt_int8_intent_lost.finding(
        title=f"{plural(len(flagged), 'node')} quantized in the QDQ graph {verb(len(flagged), 'runs')} in float in {stage_name(stage_id)}",
        severity="error" if deployment_bad else "warning", confidence=0.9 if exact else 0.6,
        score=0.7 if deployment_bad else 0.4, subject=f"{stage_id}:int8-intent-lost", stage=stage_id,
        summary=(f"{len(flagged)} of {total} quantized QDQ-graph nodes run FP16/FP32 in {stage_id} "
                 f"({joined} of {total} could be joined to engine layers; join {'exact' if exact else 'approximate'})"),
        evidence=(Metric("quantized nodes running in float", len(flagged), threshold="> 0"),
                  Metric("quantized nodes joined to layers", joined), Text(f"Join: {join}."),
                  Table("Quantized nodes TensorRT ran in float", ("node", "op type", "QDQ precision", "engine layer",
                                                                  "engine precision"), rows,
                        note=f"{len(flagged) - ROWS_SHOWN} more not shown" if len(flagged) > ROWS_SHOWN else "")),
        fixes=trtexec_fixes(ctx), tags=("root_cause", "engine"))
