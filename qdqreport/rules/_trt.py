"""Helpers shared by the TensorRT engine rules (QR100-QR149): engines of a bundle, joins to the
QDQ graph, layer tables, trtexec fixes. The real engine dumps their examples are built on are
qdqreport/testing/trt_dumps.py's.

Not a rule module (the leading underscore keeps discover() from treating it as one).
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Callable, Iterator

from qdqreport.analysis.context import Context, OutputSummary
from qdqreport.analysis.trt_evidence import EngineEvidence
from qdqreport.analysis.trt_layers import FLOAT_PRECISIONS, QUANTIZED_PRECISIONS, Engine, Layer
from qdqreport.findings import Fix, Table
from qdqreport.fixes import model_arg, tensorrt_major
from qdqreport.rules._common import rounded
from qdqreport.wording import percent

ROWS_SHOWN = 12  # layers listed per finding; the count says how many there are
_WRAPPER = re.compile(r"^(?:PWN|ForeignNode)\((.*)\)$")


def engines(ctx: Context, int8_only: bool = False) -> Iterator[tuple[str, EngineEvidence]]:
    """(stage id, evidence) of stages with TensorRT artefacts; *int8_only* skips the FP16 engine of the FP32 model."""
    for stage_id, evidence in sorted(ctx.engines.items()):
        if int8_only and stage_id == "trt_fp16":
            continue
        yield stage_id, evidence


def detailed(evidence: EngineEvidence) -> Engine | None:
    engine = evidence.engine
    return engine if engine is not None and engine.detailed else None


def name_tokens(layer: Layer) -> set[str]:
    """ONNX node names readable from a fused layer's name ("A + B + PWN(C)"), for the approximate join."""
    tokens = set()
    for part in layer.name.split(" + "):
        part = part.strip()
        match = _WRAPPER.match(part)
        while match:
            part = match.group(1)
            match = _WRAPPER.match(part)
        tokens |= {p.strip() for p in part.split(", ")}
    return tokens


def layers_of_node(engine: Engine, node: str) -> tuple[list[Layer], bool]:
    """The engine layers that computed ONNX node *node*, and whether the join is exact (Metadata ONNX names)."""
    return list(_node_index(engine).get(node, ())), engine.has_onnx_names


# ONNX node name -> engine layers, built once per engine: rules ask for every node of the graph, and a
# scan of every layer per node was quadratic (8 s per report for 300 nodes x 150 layers).
_INDEXES: dict[int, tuple[Engine, dict[str, list[Layer]]]] = {}


def _node_index(engine: Engine) -> dict[str, list[Layer]]:
    cached = _INDEXES.get(id(engine))
    if cached is None or cached[0] is not engine:
        index: dict[str, list[Layer]] = {}
        for layer in engine.layers:
            for name in dict.fromkeys(layer.onnx_names if engine.has_onnx_names else sorted(name_tokens(layer))):
                index.setdefault(name, []).append(layer)
        if len(_INDEXES) >= 8:
            _INDEXES.clear()
        cached = _INDEXES[id(engine)] = (engine, index)
    return cached[1]


def node_precisions(ctx: Context) -> dict[str, dict[str, Any]]:
    """QDQ graph node name -> its precision_summary entry (empty without a summary)."""
    return {n["name"]: n for n in (ctx.precision or {}).get("nodes", [])}


def layer_table(title: str, layers: list[Layer], engine: Engine, note_what: str = "layers") -> Table:
    rows = tuple((layer.index, layer.name, layer.kind, layer.origin or "—", layer.precision, layer.output_precision,
                  ", ".join(layer.onnx_names) or "—") for layer in layers[:ROWS_SHOWN])
    note = f"{len(layers) - ROWS_SHOWN} more {note_what} not shown" if len(layers) > ROWS_SHOWN else ""
    return Table(title, ("#", "layer", "kind", "origin", "input precision", "output precision", "ONNX nodes"), rows, note)


def layer_info_fix(ctx: Context, stage_id: str, action: str) -> Fix:
    """Rebuild the engine and re-export its layer info (ONNX names in Metadata on TensorRT 10+) to check a change.

    TensorRT 11 has no --int8/--fp16/--precisionConstraints: engines there are strongly typed.
    """
    model = model_arg(ctx, "fp32" if stage_id == "trt_fp16" else "qdq")
    model = model if model.startswith("<") else shlex.quote(model)
    major = tensorrt_major(ctx)
    if major is not None and major >= 11:
        flags = "--stronglyTyped"
    else:
        flags = "--fp16" if stage_id == "trt_fp16" else "--int8 --fp16 --precisionConstraints=obey"
    return Fix(action, f"trtexec --onnx={model} {flags} --profilingVerbosity=detailed "
                       "--exportLayerInfo=layer_info.json --exportProfile=profile.json")


def headline(summary: OutputSummary) -> str:
    """"median cosine 0.9987, top-1 agreement 85% (output y)": the numbers that broke the agreement test."""
    text = f"median cosine {summary.cosine_median:.4f}"
    if summary.top1 is not None:
        text += f", top-1 agreement {percent(summary.top1)}"
    return text + f", output {summary.output}"


def share(part: int, whole: int) -> float:
    return rounded(part / whole if whole else 0.0, 3)


# --- shared by QR004/QR102 and QR107 (rules never import each other) ----------------------------

# Quantized types TensorRT 10 executes: INT8 and FP8 everywhere, INT4/FP4 for (block) weights.
TRT_DTYPES = {"int8", "float8e4m3fn"}
TRT_WEIGHT_ONLY_DTYPES = {"int4", "float4e2m1"}
# defect -> (test on a qdq entry, severity, why TensorRT cannot honour it). QR004 and QR107
# read this table and unpack three fields; where the damage shows is kept apart in DAMAGE_SHOWS_IN.
DEFECTS: dict[str, tuple[Callable[[dict[str, Any]], bool], str, str]] = {
    "non-finite or non-positive scale": (lambda e: not e["scale_finite_positive"], "error",
                                         "a zero, negative, NaN or Inf scale yields NaN/Inf or zeros in every runtime"),
    # TensorRT's ONNX parser asserts shiftIsAllZeros(zeroPoint) and has no UINT8 Q/DQ: the engine does not build.
    "non-zero zero-point": (lambda e: e["zero_point_nonzero"], "error",
                            "TensorRT supports symmetric quantization only (zero-point 0); its parser rejects the graph"),
    "type TensorRT lacks": (lambda e: e["dtype"] not in TRT_DTYPES and not (
        e["kind"] == "weight" and e["dtype"] in TRT_WEIGHT_ONLY_DTYPES), "error",
        "TensorRT has no UINT8/INT16/INT32 quantized compute; its parser rejects such Q/DQ pairs"),
    "non-constant scale": (lambda e: not e["scale_constant"], "warning",
                           "TensorRT needs build-time constant scales to fuse Q/DQ into INT8 kernels"),
    "Q/DQ pair scales differ": (lambda e: not e["pair_scales_match"], "warning",
                                "TensorRT fuses a Q/DQ pair assuming one scale; ONNX Runtime applies each DQ's own "
                                "scale, so the values are rescaled in the QDQ model itself"),
}


def lost_intents(ctx: Context, engine: Engine) -> tuple[list[tuple[dict[str, Any], list[Layer]]], int, int]:
    """(quantized nodes whose layers all run float with those layers, nodes joined to a layer, quantized nodes)."""
    intents = [n for n in (ctx.precision or {}).get("nodes", []) if n.get("precision") in QUANTIZED_PRECISIONS
               and n.get("activation_quantized")]
    flagged, joined = [], 0
    for intent in intents:
        layers, _ = layers_of_node(engine, intent["name"])
        compute = [layer for layer in layers if layer.role not in ("reformat", "noop")]
        joined += bool(compute)
        if compute and all(layer.precision in FLOAT_PRECISIONS for layer in compute):
            flagged.append((intent, compute))
    return flagged, joined, len(intents)
