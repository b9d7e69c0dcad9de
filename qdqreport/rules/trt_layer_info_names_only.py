"""QR103: layer info exported without detailed profiling verbosity (names only: no precisions)."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import model_arg
from qdqreport.rules._trt import engines
from qdqreport.testing.trt_dumps import MOBILENET_QAT, imported_stage, names_only, real_dump


def _names_only(b):
    # The real MobileNetV2 QAT engine's layer info as trtexec writes it by default (layer_names_only).
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", names_only(real_dump(MOBILENET_QAT)))


def _detailed(b):
    imported_stage(b, "trt_int8", "layer_info", "layer_info.json", real_dump(MOBILENET_QAT))


@rule(id="QR103", slug="trt-layer-info-names-only", title="Engine layer info lacks detail",
      examples=[Fires("real engine exported at the default verbosity", _names_only),
                Quiet("real engine exported with --profilingVerbosity=detailed", _detailed)])
def trt_layer_info_names_only(ctx: Context) -> Iterator[Finding]:
    """A stage's layer info lists layer names only (trtexec's default layer_names_only verbosity).

    Such a file ({"Layers": ["name", ...]}) has no layer types, tensor formats or precisions, so
    none of the engine rules (float outputs, unfused Q/DQ, INT8 intent) can run on it; the report
    lists the names and says why the rest is missing.

    Why it matters: the precision each layer runs in is the evidence for every TensorRT-specific
    cause of an accuracy drop; without it the engine is a black box.

    Fix: rebuild (or reload) the engine with detailed profiling verbosity and export its layer info.
    """
    for stage_id, evidence in engines(ctx):
        engine = evidence.engine
        if engine is None or engine.detailed:
            continue
        role = "fp32" if stage_id == "trt_fp16" else "qdq"
        yield trt_layer_info_names_only.finding(
            title=f"Layer info of {stage_id} has names only, no precisions", severity="info",
            confidence=1.0, score=0.2, subject=f"{stage_id}:names-only", stage=stage_id,
            summary=(f"The layer info of {stage_id} lists {len(engine.names)} layer names without types, formats or "
                     "precisions (exported without --profilingVerbosity=detailed); engine rules cannot check it"),
            evidence=(Metric("layers listed by name only", len(engine.names)),
                      Text("trtexec's default --profilingVerbosity is layer_names_only; detailed adds each layer's "
                           "type, tensor formats, data types, tactic and (TensorRT 10+) ONNX node names.")),
            fixes=(Fix("Rebuild the engine with detailed verbosity and export its layer info (or reload an engine that "
                       "was built with it: --loadEngine=... --exportLayerInfo=...)",
                       f"trtexec --onnx={model_arg(ctx, role)} --profilingVerbosity=detailed "
                       "--exportLayerInfo=layer_info.json --exportProfile=profile.json"),),
            tags=("engine", "missing_evidence"))
