"""QR107: the QDQ model is healthy in ONNX Runtime but the TensorRT INT8 engine is not: rank the TensorRT causes."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.trt_build_info import major_version
from qdqreport.analysis.trt_evidence import EngineEvidence
from qdqreport.analysis.trt_layers import dtype_reformats
from qdqreport.findings import Finding, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.agreement import collapses
from qdqreport.fixes import trtexec_fixes
from qdqreport.rules._common import diverging_outputs, rounded
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_graph, classifier_run
from qdqreport.rules._trt import DEFECTS, detailed, headline, lost_intents
from qdqreport.testing.trt_dumps import CALIBRATOR_LOG, MOBILENET_QAT, real_dump

from qdqreport.wording import plural, verb

def _engine_drifts(b):
    # ORT QDQ is faithful; the INT8 engine drifts. Its real layer info shows 16 unfused Q layers, and the
    # build log a calibrator set on a Q/DQ model without precision constraints (TensorRT 8.6 wording).
    logits = class_logits(40, seed=31)
    b.artifact("precision_summary", classifier_graph())
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=32))
    b.stage("trt_int8", classifier_run(logits, noise=0.7, seed=33), details={"source": "imported"})
    b.stage_file("trt_int8", "layer_info", "layer_info.json", real_dump(MOBILENET_QAT))
    b.stage_file("trt_int8", "build_log", "build.log", CALIBRATOR_LOG)


def _no_engine_evidence(b):
    logits = class_logits(40, seed=34)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=35))
    b.stage("trt_int8", classifier_run(logits, noise=0.7, seed=36), details={"tensorrt": "11.0.0"})


def _quantization_broken_too(b):
    # ORT QDQ already collapses: the cause is the quantization, not TensorRT (QR001 and the QDQ rules say so).
    logits = class_logits(40, seed=37)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=1.5, shrink=0.3, seed=38))
    b.stage("trt_int8", classifier_run(logits, noise=1.5, shrink=0.3, seed=39))


def _engine_faithful(b):
    logits = class_logits(40, seed=40)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=41))
    b.stage("trt_int8", classifier_run(logits, noise=0.012, seed=42))


@rule(id="QR107", slug="trt-deployment-causes", title="TensorRT INT8 diverges from a healthy QDQ model",
      examples=[Fires("engine drifts; layer info and build log explain why", _engine_drifts),
                Fires("engine drifts; TensorRT 11 and no engine artefacts", _no_engine_evidence),
                Quiet("the QDQ model itself collapses", _quantization_broken_too),
                Quiet("engine within INT8 noise of the QDQ model", _engine_faithful)])
def trt_deployment_causes(ctx: Context) -> Iterator[Finding]:
    """ORT QDQ agrees with ORT FP32 but TRT INT8 diverges from ORT QDQ: TensorRT causes, ranked by evidence.

    Candidates, each weighted by what the bundle shows: a TensorRT 10 weakly typed build without
    --precisionConstraints=obey (from build settings or the trtexec command in the build log);
    QDQ-graph INT8 nodes running float in the engine (layer info joined to the precision summary);
    layers whose requested precision was ignored and a calibrator set on a Q/DQ model (build log);
    Q/DQ semantics TensorRT does not honour (zero-points, UINT8, unequal pair scales); FP16 overflow
    in the float part (the fp16 comparison diverges too); unfused Q/DQ Reformats. On TensorRT 11
    builds are strongly typed, so the precision-constraint cause does not apply.

    Why it matters: the model was validated in ONNX Runtime; the deployed engine computes something
    else. The ranking says which TensorRT setting or Q/DQ pattern to check first.

    Fix: rebuild so TensorRT obeys the Q/DQ precisions (TensorRT 10: --precisionConstraints=obey,
    or --stronglyTyped; TensorRT 11: strongly typed by design), then work down the ranked causes.
    """
    deployment = diverging_outputs(ctx, "deployment")
    quantization = ctx.comparison("quantization")
    if not deployment or quantization is None or diverging_outputs(ctx, "quantization"):
        return
    evidence = ctx.engines.get("trt_int8") or next((e for s, e in sorted(ctx.engines.items()) if s != "trt_fp16"), None)
    major = _major(ctx, evidence)
    causes = sorted(_causes(ctx, evidence, major), key=lambda c: (-c[0], c[1]))
    worst = min(deployment, key=lambda s: s.cosine_median)
    rows = tuple((rank, cause, detail, rounded(weight, 2)) for rank, (weight, cause, detail) in enumerate(causes, 1))
    has_evidence = any(weight >= 0.5 for weight, _, _ in causes)
    yield trt_deployment_causes.finding(
        title="TensorRT-specific causes of the INT8 engine's divergence",
        severity="error" if collapses(worst) else "warning", confidence=0.8 if has_evidence else 0.5,
        score=0.7 if has_evidence else 0.4, subject="deployment-causes", stage="deployment",
        summary=(f"ORT QDQ matches ORT FP32 but TRT INT8 diverges from it ({headline(worst)}); "
                 f"most likely: {causes[0][1]}"),
        evidence=(Metric("median cosine TRT INT8 vs ORT QDQ", rounded(worst.cosine_median), threshold="< 0.99"),
                  Metric("TensorRT major version", major if major is not None else "unknown"),
                  Table("Ranked TensorRT causes", ("rank", "cause", "evidence", "weight"), rows),
                  Text("Weights are evidence strength: 0.8+ read from the bundle's engine artefacts, 0.3 and below "
                       "generic candidates without evidence.")),
        fixes=trtexec_fixes(ctx), tags=("root_cause", "engine"))


def _major(ctx: Context, evidence: EngineEvidence | None) -> int | None:
    if evidence is not None and evidence.tensorrt_major is not None:
        return evidence.tensorrt_major
    stage = ctx.stage("trt_int8")
    return major_version((stage.details if stage else {}).get("tensorrt"))


def _causes(ctx: Context, evidence: EngineEvidence | None, major: int | None) -> list[tuple[float, str, str]]:
    causes: list[tuple[float, str, str]] = []
    log = evidence.build_log if evidence else None
    settings = evidence.settings if evidence else None
    strongly = (settings and settings.strongly_typed) or (log and log.strongly_typed) or (major is not None and major >= 11)
    obey = settings.obey_precision_constraints if settings and settings.obey_precision_constraints is not None else (
        log.obey_requested if log else None)
    if strongly:
        causes.append((0.3, "strongly typed build runs the graph's own types",
                       "TensorRT 11 / --stronglyTyped: look at Q/DQ placement and casts in the graph, not build flags"))
    else:
        if obey is False:
            causes.append((0.85, "weakly typed build without precision constraints",
                           "the build did not ask TensorRT to obey the Q/DQ precisions (no --precisionConstraints=obey)"))
        else:
            causes.append((0.3, "weakly typed build may pick other precisions",
                           "TensorRT 10 weak typing; the build settings do not say whether constraints were obeyed"))
    engine = detailed(evidence) if evidence else None
    if engine is not None and ctx.precision:
        flagged, _, total = lost_intents(ctx, engine)
        if flagged:
            causes.append((0.8 if engine.has_onnx_names else 0.6, "quantized nodes run in float in the engine",
                           f"{len(flagged)} of {total} INT8 nodes of the QDQ graph (QR102)"))
    if log and log.precision_ignored:
        causes.append((0.7, "requested layer precisions ignored", f"{plural(len(log.precision_ignored), 'layer')} in the build log"))
    if log and log.calibrator_ignored:
        causes.append((0.5, "calibrator set on a Q/DQ model", "the build mixes calibration with explicit Q/DQ (QR104)"))
    causes += _qdq_semantics(ctx)
    if diverging_outputs(ctx, "fp16"):
        causes.append((0.6, "FP16 overflow in the float part", "the FP16 engine of the FP32 model diverges too (QR106)"))
    if engine is not None and dtype_reformats(engine):
        causes.append((0.2, "unfused Q/DQ", f"{plural(len(dtype_reformats(engine)), 'Reformat layer')} {verb(len(dtype_reformats(engine)), 'changes')} type (QR101)"))
    if evidence is None:
        causes.append((0.1, "no engine artefacts to check", "import the layer info and build log: qdqreport import-trt"))
    return causes


def _qdq_semantics(ctx: Context) -> list[tuple[float, str, str]]:
    entries = (ctx.precision or {}).get("qdq", [])
    found = [(defect, sum(test(e) for e in entries)) for defect, (test, _, _) in DEFECTS.items()]
    return [(0.75, f"Q/DQ with a {defect}", f"{count} Q/DQ pairs (QR004)") for defect, count in found if count]
