"""TensorRT stages: build and run trt_fp16 / trt_int8 (and, on TensorRT 10, trt_int8_noobey) on the
same samples as the ONNX Runtime stages, or record them as skipped with the reason.

TensorRT 10: weakly typed builds. trt_fp16 = FP32 model with FP16; trt_int8 = QDQ model with
INT8+FP16+OBEY_PRECISION_CONSTRAINTS; trt_int8_noobey = the same without OBEY. TensorRT 11: the
QDQ model as a strongly typed network; trt_fp16 is skipped (11.x has no FP16 flag). Never a
calibrator. Each engine leaves layer_info.json (engine inspector, verbatim), build.log and
build_settings.json in stages/<id>/ (docs/bundle.md, docs/tensorrt.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from qdqreport.analysis.comparison_tables import write_comparison
from qdqreport.bundle.layout import write_stage
from qdqreport.bundle.writer import BundleWriter

if TYPE_CHECKING:  # imported where used: without tensorrt no engine is planned or built (start-up, issue 12)
    from qdqreport.collect.trt_build import BuildOutcome, BuildPlan

TRT_STAGES = ("trt_fp16", "trt_int8")
STAGE_ORDER = ("trt_fp16", "trt_int8", "trt_int8_noobey")
# candidate stage -> (reference stage, comparison purpose)
TRT_COMPARISONS = {"trt_fp16": ("ort_fp32", "fp16"), "trt_int8": ("ort_qdq", "deployment"),
                   "trt_int8_noobey": ("ort_qdq", "other")}
VARIANTS = {"trt_fp16": "fp16", "trt_int8": "obey_precision_constraints", "trt_int8_noobey": "no_precision_constraints"}

Feed = dict[str, np.ndarray]


@dataclass
class TrtRequest:
    """What the TensorRT stages need from the collector: models, the very same samples, options."""

    fp32_path: str
    qdq_path: str
    fp32_proto: Any
    qdq_proto: Any
    fp32_outputs: tuple[str, ...]
    qdq_outputs: tuple[str, ...]
    feeds: Sequence[Feed]
    mark_all: bool = False
    ort_provider: str = "cpu"


@dataclass
class TrtStageResult:
    stage_id: str
    status: str
    error: str | None = None
    outputs: list[Feed] = field(default_factory=list)
    log: str = ""
    settings: dict[str, Any] | None = None
    layer_info: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    tensor_rows: list[dict[str, Any]] = field(default_factory=list)


def tensorrt_version() -> tuple[str | None, str]:
    """(version, "") when `tensorrt` imports, else (None, why not)."""
    try:
        module = importlib.import_module("tensorrt")
    except Exception as exc:  # the PyPI stub wheels raise at import when their real libraries are missing
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, f"tensorrt is not importable ({type(exc).__name__}: {message})"
    return str(getattr(module, "__version__", "unknown")), ""


def skip_reason(version: str | None, why_absent: str) -> str:
    """Why a TensorRT stage did not run when tensorrt is absent."""
    return (f"{why_absent}; build the engines on a GPU machine with TensorRT "
            "(trtexec --exportLayerInfo) to add TensorRT evidence")


def run_trt_stages(request: TrtRequest, say: Callable[[str], None] = lambda _: None) -> list[TrtStageResult]:
    """Every TensorRT stage for the installed version, each ok, failed or skipped with its reason."""
    version, why = tensorrt_version()
    if version is None:
        return [TrtStageResult(s, "skipped", skip_reason(None, why), details={"tensorrt": None}) for s in TRT_STAGES]
    from qdqreport.collect.trt_build import build_plans

    trt = importlib.import_module("tensorrt")
    plans, skipped = build_plans(version, request.fp32_path, request.qdq_path)
    results = [TrtStageResult(s, "skipped", reason, details={"tensorrt": version}) for s, reason in skipped.items()]
    device = _gpu_name()
    for plan in plans:
        say(f"building TensorRT {version} engine {plan.stage_id}")
        results.append(_run_plan(trt, version, plan, request, device, say))
    return sorted(results, key=lambda r: STAGE_ORDER.index(r.stage_id))


def _run_plan(trt: Any, version: str, plan: BuildPlan, request: TrtRequest, device: str | None,
              say: Callable[[str], None]) -> TrtStageResult:
    from qdqreport.collect.trt_build import build_engine, sample_shapes
    from qdqreport.collect.trt_run import MARK_ALL_WARNING

    if request.mark_all:
        say(f"warning: {MARK_ALL_WARNING}")
    outcome = build_engine(trt, plan, sample_shapes(request.feeds), mark_all=request.mark_all)
    outcome.settings["device"] = device
    if request.mark_all:
        outcome.log.insert(0, f"[W] qdqreport: {MARK_ALL_WARNING}")
    result = _result_from_build(outcome, version, request.mark_all)
    if outcome.status == "ok":
        _run_built_engine(outcome, request, result, say)
    return result


def _result_from_build(outcome: BuildOutcome, version: str, mark_all: bool) -> TrtStageResult:
    from qdqreport.collect.trt_build import unsupported_operators

    plan = outcome.plan
    details: dict[str, Any] = {"tensorrt": version, "variant": VARIANTS[plan.stage_id],
                               "typing": "strong" if plan.strongly_typed else "weak",
                               "builder_flags": list(plan.builder_flags), "calibrator": None,
                               "build_seconds": round(outcome.seconds, 3), "mark_all_outputs": mark_all,
                               "parser_errors": outcome.parser_errors,
                               "unsupported_operators": unsupported_operators(outcome.parser_errors)}
    if mark_all:
        from qdqreport.collect.trt_run import MARK_ALL_WARNING

        details["warning"] = MARK_ALL_WARNING
    if plan.stage_id == "trt_int8_noobey":
        details["pair"] = "trt_int8"  # the same build with OBEY_PRECISION_CONSTRAINTS
    status = "ok" if outcome.status == "ok" else "failed"
    return TrtStageResult(plan.stage_id, status, outcome.error, log="\n".join(outcome.log) + "\n",
                          settings=outcome.settings, layer_info=outcome.layer_info, details=details)


def _run_built_engine(outcome: BuildOutcome, request: TrtRequest, result: TrtStageResult,
                      say: Callable[[str], None]) -> None:
    from qdqreport.collect.trt_run import LayerwiseComparison, run_engine

    qdq = outcome.plan.model_role == "qdq"
    proto, outputs = (request.qdq_proto, request.qdq_outputs) if qdq else (request.fp32_proto, request.fp32_outputs)
    layerwise = LayerwiseComparison(proto, request.ort_provider) if request.mark_all else None
    say(f"running {result.stage_id} on {len(request.feeds)} samples")
    run = run_engine(outcome.engine, result.stage_id, request.feeds, outputs, layerwise)
    result.seconds = run.seconds
    if run.error:
        result.status, result.error = "failed", f"inference failed: {run.error}"
        result.log += f"[E] qdqreport: {result.error}\n"
        return
    result.outputs, result.tensor_rows = run.outputs, run.tensor_rows


def write_trt_stage(writer: BundleWriter, result: TrtStageResult) -> dict[str, Any]:
    """Store one TensorRT stage (outputs, layer_info.json, build.log, build_settings.json); return its entry."""
    outputs = result.outputs if result.status == "ok" else None
    entry = write_stage(writer, result.stage_id, result.status, outputs, result.error, seconds=result.seconds,
                        details=result.details)
    entry["error"] = result.error  # write_stage keeps it too; skipped stages carry their reason here
    base = f"stages/{result.stage_id}"
    if result.layer_info is not None:
        entry["artifacts"]["layer_info"] = writer.add_text(f"{base}/layer_info.json", result.layer_info)
    if result.settings:
        entry["artifacts"]["build_settings"] = writer.add_json(f"{base}/build_settings.json", result.settings)
    if result.log.strip():
        entry["artifacts"]["build_log"] = writer.add_text(f"{base}/build.log", result.log)
    return entry


def write_trt_comparisons(writer: BundleWriter, results: Sequence[TrtStageResult], ort_outputs: dict[str, list[Feed]],
                          class_outputs: Callable[[list[Feed]], set[str]]) -> list[dict[str, Any]]:
    """fp16 (ort_fp32 -> trt_fp16), deployment (ort_qdq -> trt_int8), other (ort_qdq -> trt_int8_noobey)."""
    entries = []
    for result in results:
        reference, purpose = TRT_COMPARISONS[result.stage_id]
        ref_samples = ort_outputs.get(reference)
        if result.status != "ok" or not ref_samples:
            continue
        entries.append(write_comparison(writer, reference, result.stage_id, purpose, ref_samples, result.outputs,
                                        class_outputs(ref_samples), result.tensor_rows or None))
    return entries


def _gpu_name() -> str | None:
    from qdqreport.collect.trt_run import gpu_name

    return gpu_name()
