"""QR105: the TensorRT ONNX parser rejected nodes (unsupported operators, missing plugins)."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import model_arg
from qdqreport.rules._trt import engines
from qdqreport.testing.trt_dumps import imported_stage

# TensorRT 10 parser output, as reported in NVIDIA/TensorRT and open-mmlab/mmdeploy issues.
PARSER_FAILURE_LOG = """&&&& RUNNING TensorRT.trtexec [TensorRT v100300] # trtexec --onnx=det_int8.onnx --stronglyTyped
[11/20/2025-10:02:13] [E] [TRT] ModelImporter.cpp:963: While parsing node number 412 [GridSample3D -> "/dense_motion_network/GridSample_output_0"]:
[11/20/2025-10:02:13] [E] [TRT] ModelImporter.cpp:968: ERROR: onnxOpCheckers.cpp:818 In function checkFallbackPluginImporter:
[6] creator && "Plugin not found, are the plugin name, version, and namespace correct?"
[11/20/2025-10:02:13] [E] In node 412 with name: /dense_motion_network/GridSample and operator: GridSample3D (checkFallbackPluginImporter): INVALID_NODE: creator && "Plugin not found, are the plugin name, version, and namespace correct?"
[11/20/2025-10:02:13] [E] Failed to parse onnx file
[11/20/2025-10:02:13] [E] Parsing model failed
&&&& FAILED TensorRT.trtexec [TensorRT v100300] # trtexec --onnx=det_int8.onnx --stronglyTyped
"""
PASSED_LOG = """&&&& RUNNING TensorRT.trtexec [TensorRT v100300] # trtexec --onnx=det_int8.onnx --stronglyTyped
[11/20/2025-10:02:11] [I] [TRT] Loaded engine size: 2 MiB
&&&& PASSED TensorRT.trtexec [TensorRT v100300] # trtexec --onnx=det_int8.onnx --stronglyTyped
"""


def _plugin_missing(b):
    b.stage("trt_int8", status="failed", error="the imported build log shows the TensorRT ONNX parser failing",
            details={"source": "imported"})
    b.stage_file("trt_int8", "build_log", "build.log", PARSER_FAILURE_LOG)


def _collector_details(b):
    # The collector's own record of a parser failure (stage details), without a log file.
    b.stage("trt_int8", status="failed", error="the TensorRT ONNX parser failed on det_int8.onnx",
            details={"tensorrt": "10.3.0", "unsupported_operators": ["DCNv2"],
                     "parser_errors": [{"code": "UNSUPPORTED_NODE", "desc": "No importer registered for op: DCNv2",
                                        "node": 135, "node_name": "/DCNv2", "node_operator": "DCNv2",
                                        "text": "In node 135 with name: /DCNv2 and operator: DCNv2"}]})
    b.stage_file("trt_int8", "build_log", "build.log", "[E] [TRT] No importer registered for op: DCNv2\n")


def _passed(b):
    imported_stage(b, "trt_int8", "build_log", "build.log", PASSED_LOG)


@rule(id="QR105", slug="trt-parser-errors", title="TensorRT could not parse the ONNX model",
      examples=[Fires("TensorRT 10: plugin not found for a custom operator", _plugin_missing),
                Fires("collector recorded an unsupported operator", _collector_details),
                Quiet("build passed", _passed)])
def trt_parser_errors(ctx: Context) -> Iterator[Finding]:
    """ONNX parser errors or unsupported operators in a TensorRT stage's build log or stage details.

    Read from the log ("While parsing node number N [Op ...]", "No importer registered for op",
    "In node N with name: A and operator: X (...): INVALID_NODE/UNSUPPORTED_NODE", "could not find
    plugin") and from the collector's `parser_errors` / `unsupported_operators` stage details. An
    error when parsing failed (no engine); a warning when the log only names operators.

    Why it matters: without an engine there is nothing to compare; an operator TensorRT imports
    only as a plugin must be provided by a plugin library, in every precision.

    Fix: replace or decompose the operator at export (a newer opset often has a native import),
    or load the plugin library that implements it (trtexec --staticPlugins / --dynamicPlugins).
    """
    for stage_id, evidence in engines(ctx):
        log = evidence.build_log
        ops = sorted(set(log.unsupported_ops if log else ()) | set(evidence.details.get("unsupported_operators") or ()))
        errors = list(log.parser_errors if log else ()) + [str(e.get("text") or e.get("desc"))
                                                          for e in evidence.details.get("parser_errors") or []]
        failed = bool((log and log.parse_failed) or ctx.stage(stage_id).status == "failed" and errors)
        if not ops and not errors:
            continue
        model = model_arg(ctx, "fp32" if stage_id == "trt_fp16" else "qdq")
        yield trt_parser_errors.finding(
            title=f"TensorRT could not parse {', '.join(ops) or 'the model'} ({stage_id})",
            severity="error" if failed else "warning", confidence=0.95, score=0.8 if failed else 0.4,
            subject=f"{stage_id}:parser", stage=stage_id,
            summary=(f"The TensorRT ONNX parser {'failed' if failed else 'reported errors'} for {stage_id}"
                     + (f": unsupported operator(s) {', '.join(ops)}" if ops else "")),
            evidence=(Metric("unsupported operators", len(ops), threshold="> 0"),
                      Metric("parser errors", len(errors)), *(Text(e) for e in dict.fromkeys(errors[:3]))),
            fixes=(Fix("Export the operator as standard ONNX ops (a newer opset, or a decomposition), or load the "
                       "plugin library implementing it when building",
                       f"trtexec --onnx={model} --dynamicPlugins=libmy_plugins.so --profilingVerbosity=detailed "
                       "--exportLayerInfo=layer_info.json"),
                   Fix("List which nodes TensorRT supports natively", f"polygraphy inspect capability {model}")),
            tags=("engine", "build", "root_cause") if failed else ("engine", "build"))
