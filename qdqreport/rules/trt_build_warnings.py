"""QR104: TensorRT build-log warnings that precisions were not what the build asked for."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import model_arg, trtexec_fixes
from qdqreport.rules._common import diverging_outputs
from qdqreport.rules._trt import ROWS_SHOWN, engines
from qdqreport.testing.trt_dumps import CALIBRATOR_LOG, imported_stage

# Real log lines, in the wording of TensorRT 8.x issues (NVIDIA/TensorRT #1837, #2462) and trtexec's banner.
CLEAN_LOG = """&&&& RUNNING TensorRT.trtexec [TensorRT v100300] # trtexec --onnx=cls_int8.onnx --stronglyTyped
[11/20/2025-10:02:11] [I] [TRT] Loaded engine size: 2 MiB
&&&& PASSED TensorRT.trtexec [TensorRT v100300] # trtexec --onnx=cls_int8.onnx --stronglyTyped
"""


def _calibrator_and_ignored(b):
    imported_stage(b, "trt_int8", "build_log", "build.log", CALIBRATOR_LOG)


def _clean(b):
    imported_stage(b, "trt_int8", "build_log", "build.log", CLEAN_LOG)


@rule(id="QR104", slug="trt-build-precision-warnings", title="The TensorRT build ignored requested precisions",
      examples=[Fires("calibrator given with a Q/DQ model, precision requests ignored", _calibrator_and_ignored),
                Quiet("strongly typed build without warnings", _clean)])
def trt_build_precision_warnings(ctx: Context) -> Iterator[Finding]:
    """The build log says a calibrator was ignored (Q/DQ model) or layers' requested precisions were ignored.

    "Calibrator won't be used in explicit precision mode": a calibrator (--calib) was set for a
    network with Q/DQ nodes; TensorRT uses the Q/DQ scales and ignores it. "Requested layer
    computation precision and output precision types are ignored": no kernel met the precision
    constraints, so TensorRT ran those layers in the fastest precision instead.

    Why it matters: the first shows the build mixes implicit (calibrated) and explicit (Q/DQ)
    quantization, a sign the build script does not match the model; the second means layers did
    not run in the precision the build asked for, so the engine can drift from the QDQ model.

    Fix: build a Q/DQ model without a calibrator and with precision constraints obeyed (TensorRT
    10) or strongly typed; check the named layers' precisions in the layer info.
    """
    deployment_bad = bool(diverging_outputs(ctx, "deployment"))
    for stage_id, evidence in engines(ctx):
        log = evidence.build_log
        if log is None or not (log.calibrator_ignored or log.precision_ignored):
            continue
        evidence_items = [Metric("layers whose requested precision was ignored", len(log.precision_ignored),
                                 threshold="> 0"),
                          Metric("calibrator ignored (Q/DQ model)", "yes" if log.calibrator_ignored else "no")]
        if log.precision_ignored:
            evidence_items.append(Table("Layers whose requested precision TensorRT ignored", ("layer",),
                                        tuple((name,) for name in log.precision_ignored[:ROWS_SHOWN]),
                                        note=_more(len(log.precision_ignored))))
        evidence_items += [Text(line) for line in log.calibrator_ignored[:1]]
        if log.command:
            evidence_items.append(Text(f"Build command from the log: {log.command}"))
        fixes = list(trtexec_fixes(ctx))
        if log.calibrator_ignored:
            fixes.insert(0, Fix("Drop the calibrator (--calib / IInt8Calibrator) for a Q/DQ model: its scales are in the "
                                "graph", f"trtexec --onnx={model_arg(ctx, 'qdq')} --stronglyTyped"))
        what = " and ".join(part for part, present in (("a calibrator was ignored", log.calibrator_ignored),
                                                        (f"{len(log.precision_ignored)} layers' requested precision was "
                                                         "ignored", log.precision_ignored)) if present)
        yield trt_build_precision_warnings.finding(
            title=f"The {stage_id} build log: {what}", severity="warning",
            confidence=0.95, score=0.5 if deployment_bad and log.precision_ignored else 0.25,
            subject=f"{stage_id}:build-precision-warnings", stage=stage_id,
            summary=f"The build log of {stage_id} says {what} (TensorRT {log.tensorrt_version or 'version unknown'})",
            evidence=tuple(evidence_items), fixes=tuple(fixes), tags=("engine", "build"))


def _more(count: int) -> str:
    return f"{count - ROWS_SHOWN} more not shown" if count > ROWS_SHOWN else ""
