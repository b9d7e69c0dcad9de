"""QR008: a pipeline stage that failed, so its comparisons are missing from the report."""

from __future__ import annotations

from pathlib import PurePath
from typing import Iterator

from qdqreport.analysis.context import Context, StageInfo
from qdqreport.bundle.vocabulary import COMPARISON_PLAN  # which comparisons a stage would have fed
from qdqreport.findings import Finding, Fix, Metric, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import model_file, python_command, shell_quote, tensorrt_major
from qdqreport.rules._common import stage_label
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_run

ERROR_LINES = 20  # the tail of a Python or TensorRT traceback holds the decisive part; the log the rest

ORT_QDQ_ERROR = ("[ONNXRuntimeError] : 1 : FAIL : Load model from cls_int8.onnx failed:Node (conv0.tmp_0_DequantizeLinear) "
                 "Op (DequantizeLinear) [ShapeInferenceError] x_zero_point and x must have the same data type")
TRT_ERROR = ("[E] [TRT] ModelImporter.cpp:949: ERROR: ModelImporter.cpp:773: While parsing node number 12 "
             "[DequantizeLinear -> \"conv0.tmp_0_dq\"]:\n[E] Assertion failed: shiftIsAllZeros(zeroPoint): "
             "TensorRT only supports symmetric quantization. The zero point for the QuantizeLinear/DequantizeLinear "
             "operator must be all zeros.")


def _qdq_fails(b):
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(class_logits(8)))
    b.stage("ort_qdq", status="failed", error=ORT_QDQ_ERROR)


def _engine_build_fails(b):
    logits = class_logits(8)
    b.stage("ort_fp32", classifier_run(logits)).stage("ort_qdq", classifier_run(logits, noise=0.01))
    b.stage("trt_int8", status="failed", error=TRT_ERROR, details={"trtexec": "/usr/src/tensorrt/bin/trtexec"})


def _no_tensorrt(b):
    logits = class_logits(8)
    b.stage("ort_fp32", classifier_run(logits)).stage("ort_qdq", classifier_run(logits, noise=0.01))
    for stage in ("trt_fp16", "trt_int8"):
        b.stage(stage, status="skipped", error="TensorRT is not installed (pip install tensorrt)")


@rule(id="QR008", slug="stage-failed", title="A pipeline stage failed",
      examples=[Fires("the QDQ model does not load in ONNX Runtime", _qdq_fails),
                Fires("TensorRT rejects a zero-point", _engine_build_fails),
                Quiet("TensorRT stages skipped on a machine without TensorRT", _no_tensorrt)])
def stage_failed(ctx: Context) -> Iterator[Finding]:
    """A stage of the pipeline (reference, ORT FP32, ORT QDQ, TRT FP16, TRT INT8) ended with status failed.

    Skipped stages (a runtime that is not installed, an input that was not given) are not
    failures and are listed by the report itself.

    Why it matters: a failed stage removes every comparison it takes part in, so the report
    cannot say whether that step loses accuracy; often the failure is itself the finding
    (TensorRT refusing a Q/DQ pattern, ONNX Runtime refusing an invalid graph).

    Fix: read the error and the stage log; the fix listed depends on the stage.
    """
    for stage in ctx.stages:
        if stage.status == "failed":
            yield _finding(ctx, stage)


def _finding(ctx: Context, stage: StageInfo) -> Finding:
    error = (stage.error or "no error message recorded").strip()
    # Python tracebacks and TensorRT parser logs both end with the decisive line.
    decisive = [line for line in error.splitlines() if line.strip()][-1]
    log = next((s.get("artifacts", {}).get("log") for s in ctx.manifest["stages"] if s["id"] == stage.id), None)
    present = {s.id for s in ctx.stages}
    lost = [purpose for ref, cand, purpose in COMPARISON_PLAN if stage.id in (ref, cand) and {ref, cand} <= present]
    evidence = [Metric("status", stage.status), Text("\n".join(error.splitlines()[-ERROR_LINES:]))]
    if log:
        evidence.append(Text(f"Full log in the bundle: {log}"))
    return stage_failed.finding(
        title=f"Stage {stage_label(stage.id)} failed", severity="error", confidence=1.0,
        # A failure blocks measurement rather than explaining lost accuracy, unless it is itself the defect.
        score=0.3, subject=stage.id, stage=stage.id, tags=("collection",),
        summary=f"{stage_label(stage.id)} ({stage.runtime}) failed: {decisive[:200]}"
                + (f"; no {' or '.join(lost)} comparison" if lost else ""),
        evidence=tuple(evidence), fixes=_fixes(ctx, stage.id))


def _fixes(ctx: Context, stage_id: str) -> tuple[Fix, ...]:
    kind = "qdq" if stage_id in ("ort_qdq", "trt_int8") else "fp32"
    path = model_file(ctx, kind)
    model = shell_quote(path)
    check = Fix("Validate the model graph; the checker names the first invalid node",
                python_command(f"import onnx; onnx.checker.check_model(onnx.load({path!r}), full_check=True)"))
    if stage_id == "reference":
        return (Fix("Check the reference outputs file: one entry per evaluation sample, output names as in the model"),)
    if stage_id.startswith("ort"):
        return (check, Fix("Check the input names, shapes and dtypes match the model (opset ≥ 13 for per-channel "
                           "Q/DQ, 19 or 21 for FP8/INT4)"))
    major = tensorrt_major(ctx)
    precision = ("--stronglyTyped" if major is not None and major >= 11
                 else "--fp16" if stage_id == "trt_fp16" else "--int8 --fp16 --precisionConstraints=obey")
    # The cleaned copy is written where the command runs, named after the model.
    folded = "<model.folded.onnx>" if path.startswith("<") else shell_quote(PurePath(path).stem + ".folded.onnx")
    return (Fix("Rebuild verbosely and read the first parser error; an unsupported op needs a plugin or a graph "
                "change", f"trtexec --onnx={model} {precision} --verbose"),
            Fix("Fold constants and clean the graph before parsing",
                f"polygraphy surgeon sanitize {model} --fold-constants -o {folded}"), check)
