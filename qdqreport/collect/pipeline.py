"""`qdqreport collect`: check every input first, run each stage once on the same samples,
compare, and write the bundle atomically."""

from __future__ import annotations

import os
import platform
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from qdqreport.analysis.compare import looks_like_probabilities
from qdqreport.analysis.comparison_tables import write_compared, write_comparison
from qdqreport.analysis.stream_compare import StageComparer
from qdqreport.analysis.target import check_target
from qdqreport.bundle.layout import ARTIFACT_PATHS, STAGE_KINDS, base_manifest, write_stage
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect import stats
from qdqreport.collect.align import GraphPair
from qdqreport.collect.batch_axis import batch_axes, check_overrides
from qdqreport.collect.inputs import (InputSet, InputShapeError, check_feed, inferred_axes_hint, layouts, load_inputs,
                                     load_reference, sample_batch)
from qdqreport.collect.models import (LoadedModel, check_model_pair, class_score_outputs, load_model, node_output_names,
                                      session_source, shorten, without_weights)
from qdqreport.collect.ort_stage import (ORT_WARNINGS, OrtStage, beside_stages, check_provider, intra_op_threads,
                                        open_stage, ort_warning_summary, provider_name)
from qdqreport.collect.output_store import DEFAULT_STORED, OutputStore, scratch_folder
from qdqreport.collect.saturation_check import (cpu_vnni, decision, diverging_outputs, kernel_nodes,
                                                run_saturation_check, skipped_entry, write_saturation_check)
from qdqreport.collect.tensor_pass import TENSOR_SAMPLES, TensorPass, announce_tensor_pass, run_tensor_pass
from qdqreport.collect.trt_stage import (TrtRequest, TrtStageResult, run_trt_stages, tensorrt_version,
                                         write_trt_comparisons, write_trt_stage)
from qdqreport.errors import InputError
from qdqreport.progress import Progress

if TYPE_CHECKING:  # imported where used: a default collect runs none of them (start-up, issue 12)
    from qdqreport.analysis.decode_step import Decoder
    from qdqreport.analysis.task import AppResults, TaskPair, TaskRun
    from qdqreport.collect.fp16_check import Fp16Check
    from qdqreport.collect.layers_stage import PerLayer

# Default of --range-samples: evaluation (and calibration) samples, spread over each set, on which every activation Q
# node's range use is measured (collect/activation_ranges.py): a bounded cost whatever N is, 16 marked FP32 runs with
# --calib (each 3-4x a plain one).
RANGE_SAMPLES = 8
# Default of --per-layer-samples: samples the per-layer statistics read, spread over the evaluation set like the
# activation-range pass's (collect/layers_stage.py). Every corpus bundle with per-layer tables (12-24 samples) reads
# all of its samples; PP-OCRv4's recogniser (30 M values a model a sample, each folded at NumPy's memory speed) goes
# from 7.3x plain inference to about 3x at N = 128 on a quiet machine (docs/BENCHMARKS.md, issue 12).
PER_LAYER_SAMPLES = 32
# A --qdq the ONNX checker rejects, of at most this many bytes, gets its ort_qdq session while it loads (that session
# is ONNX Runtime's load test): _early_qdq_stage.
EARLY_SESSION_BYTES = 64 << 20
MAX_MARKED_TENSORS = 64  # sensitive-node tensors measured by the bounded tensor pass (collect/tensor_pass.py)
# The two bounded passes of every collect (the sensitive-node tensor pass, the activation-range pass) run in a worker
# thread while the stages run (_BoundedPasses) when both models are at most BESIDE_MODEL_BYTES (serialised, no external
# data) and the tensors the passes mark are at most BESIDE_TENSOR_BYTES a sample (shape inference on the first
# sample): their three sessions then cost little memory beside the stage's. Larger models run them after the stages,
# one session at a time, as before.
BESIDE_MODEL_BYTES = 64 << 20
BESIDE_TENSOR_BYTES = 16 << 20
UNKNOWN_TENSOR_INPUTS = 16  # _marked_bytes: a marked tensor of unknown size, in sample inputs (a guess)
# --per-layer --confirm: re-quantizes the what-if's chosen set and measures it, returning the `confirmed` record or
# None. The CLI passes confirm/whatif_confirm.confirm_chosen (its arguments); the collector never imports confirm/.
ConfirmStep = Callable[..., "dict[str, Any] | None"]


@dataclass
class CollectOptions:
    fp32: str
    qdq: str
    inputs: str
    output: str
    calib: str | None = None
    reference: str | None = None
    modelopt_log: str | None = None
    ort_provider: str = "cpu"
    max_samples: int | None = None
    force: bool = False
    trt_mark_all: bool = False  # mark every TensorRT layer output (breaks fusions; per-layer TRT vs ORT)
    argv: list[str] = field(default_factory=list)
    per_layer: bool = False  # per-layer statistics and the what-if search: collect/layers_stage.py
    whatif_budget: float = 120.0
    # --per-layer-samples: samples the per-layer statistics read, spread over the set; None reads every sample
    per_layer_samples: int | None = PER_LAYER_SAMPLES
    target_cosine: float | None = None  # what-if: a floor on the median cosine beyond the report's judgement
    target_top1: float | None = None
    fp16_check: bool = True  # the FP16 check when the QDQ float part is FP16: collect/fp16_check.py
    saturation_check: bool = True  # the U8S8 unfused control: collect/saturation_check.py
    calibration_check: bool = True  # the evaluation-ranges control: collect/range_check.py
    range_samples: int = RANGE_SAMPLES  # --range-samples: samples of the activation range pass (collect/activation_ranges.py)
    postprocess: str | None = None  # FILE.py[:func]: the user's decode step (collect/postprocess.py)
    task_results: str | None = None  # what the user's application decoded (collect/task_results.py)
    task_results_stage: str = "ort_qdq"  # the stage whose outputs that application decoded
    save_inputs: bool = False  # store the evaluation inputs + a Polygraphy data loader (collect/save_inputs.py)
    redact: bool = False  # paths to file names, no host details (qdqreport/redact.py)
    batch_axes: dict[str, int | None] = field(default_factory=dict)  # --batch-axis NAME=AXIS (collect/batch_axis.py)
    allow_unquantized: bool = False  # accept a --qdq without Q/DQ nodes, swapped or identical models
    quantization: dict[str, Any] | None = None  # manifest `quantization`: who made --qdq and how (qdqreport confirm)
    confirm: ConfirmStep | None = None  # --per-layer --confirm: re-quantize the what-if's best set (ConfirmStep)
    store_outputs: int | None = DEFAULT_STORED  # --store-outputs: samples per stage kept in the bundle (None: all)
    # Bytes of outputs a stage keeps at most (the CLI's default: output_store.DEFAULT_STORE_BYTES unless --store-outputs
    # is given), None: store_outputs as given
    store_cap_bytes: int | None = None
    target: str = "tensorrt"  # --target: the deployment runtime, recorded as settings.target (analysis/target.py)
    judging: Any = None  # --output-kind/--decision-threshold (agreement.JudgingOptions), recorded in settings


@dataclass
class _Loaded:
    fp32: LoadedModel
    qdq: LoadedModel
    eval: InputSet
    calib: InputSet | None
    reference: list[dict[str, np.ndarray]] | None
    modelopt_log: str | None
    decoder: Decoder | None = None
    app: AppResults | None = None
    graphs: GraphPair | None = None  # both models' indices and alignment, built once for every pass that reads them
    qdq_stage: OrtStage | None = None  # the ort_qdq stage's session when load_model's load test built it
    declared_classes: frozenset[str] = frozenset()  # outputs --output-kind declares class scores (top-1/top-5 columns)

    def __post_init__(self) -> None:
        if self.graphs is None:
            self.graphs = GraphPair(self.fp32.proto, self.qdq.proto)


def collect(options: CollectOptions, progress: Progress | None = None) -> Path:
    """Run the whole collection; return the bundle path. Raises QdqReportError on bad input."""
    progress = progress or Progress(quiet=True)
    check_target(options.target)  # API callers too: an unknown target is refused before any inference
    if options.confirm is not None and not (options.per_layer and options.whatif_budget > 0):
        raise InputError("--confirm re-quantizes the what-if's best set: it needs --per-layer and a --whatif-budget above 0")
    ort_warning_summary()  # cleared: the line below counts this collect's sessions only
    # The -o check and its lock come first: a refused -o costs no inference, and the lock is held to the commit.
    with BundleWriter(options.output, overwrite=options.force, protect=_input_paths(options)) as writer:
        path = _collect_into(writer, options, progress)
    summary = ort_warning_summary()  # its session warnings, counted instead of printed (ort_stage.new_session)
    if summary:
        progress.say(summary)
    progress.say(f"bundle written to {path}")
    return path


def _collect_into(writer: BundleWriter, options: CollectOptions, progress: Progress) -> Path:
    loaded = _load_everything(options, progress)
    if not _reads_fp32_weights(options, loaded):  # checked with the weights; the rest reads none of them
        light = without_weights(loaded.fp32)
        if light is not loaded.fp32:  # a model without external data is the same model: its GraphPair stays
            loaded.fp32 = light
            loaded.graphs = GraphPair(loaded.fp32.proto, loaded.qdq.proto)
    precision = _precision_summary(loaded, progress)
    marked = _marked_tensors(precision, loaded)
    with scratch_folder() as scratch:
        stores = _Stores(writer, options.store_outputs, scratch, options.store_cap_bytes, progress)
        stages, run = _run_ort_stages(loaded, marked, options, progress, stores)
        try:
            return _finish(writer, options, loaded, precision, stages, run, progress)
        finally:
            for stage in stages.values():
                stage.outputs.close()


def _finish(writer: BundleWriter, options: CollectOptions, loaded: _Loaded, precision: dict[str, Any] | None,
            stages: dict[str, OrtStage], run: "_OrtRun", progress: Progress) -> Path:
    # The what-if's decisions read as many samples as the report's will: the ones the stages stored (None: all).
    fp32_store = stages["ort_fp32"].outputs
    stored = None if fp32_store.keep is None else fp32_store.stored
    layers = _per_layer(options, loaded, precision, progress, stored, stages["ort_qdq"], run) if options.per_layer else None
    if options.confirm is not None and layers is not None and layers.whatif_summary is not None:
        _confirm_whatif(options, loaded, precision, layers, stages["ort_fp32"], progress)
    fp16 = _fp16_check(options, loaded, progress)
    ranges = _measured_ranges(options, loaded, progress, run.early, stages["ort_fp32"].error)
    saturation = _saturation_kernels(options, precision)  # the control itself runs once the comparisons are written
    trt_results = run_trt_stages(_trt_request(options, loaded), progress.say)
    progress.say("writing the bundle")
    manifest = _manifest(options, loaded)
    manifest["stages"] = _stage_entries(writer, loaded, stages) + [write_trt_stage(writer, r) for r in trt_results]
    manifest["comparisons"] = _comparisons(writer, loaded, stages, run) + _trt_comparisons(
        writer, loaded, stages, trt_results)
    manifest["artifacts"] = _artifacts(writer, loaded, precision)
    if ranges is not None:
        manifest["artifacts"]["activation_ranges"] = writer.add_json(ARTIFACT_PATHS["activation_ranges"], ranges)
    fp32 = stages["ort_fp32"]
    if layers is not None:
        from qdqreport.collect.layers_stage import write_per_layer

        write_per_layer(writer, manifest, layers)
    if fp16 is not None:
        from qdqreport.collect.fp16_check import write_fp16_check

        write_fp16_check(writer, manifest, fp16, [] if fp32.error else fp32.outputs,
                         _class_outputs(loaded, fp32.outputs) if fp32.outputs else set())
    # Both controls run only where the QDQ model's outputs (or the user's decode of them) do not agree: decided once.
    calibration = options.calibration_check and ranges is not None
    decoded_run = _decode_stages(loaded, stages) if saturation or calibration else None
    decoded = _quantization_pair(decoded_run)
    why = _control_decision(writer, manifest, loaded, stages, decoded) if saturation or calibration else None
    chosen = _control_samples(loaded, run, decoded) if why is not None else ()
    controls = [_saturation_check(writer, manifest, options, loaded, saturation, stages, progress, why, chosen)
                if saturation else None,
                _calibration_check(writer, manifest, loaded, ranges, stages, options.ort_provider, progress, why,
                                   chosen)
                if calibration else None]
    if loaded.decoder:
        from qdqreport.analysis.task import write_task

        write_task(writer, manifest, _task(loaded, stages, trt_results, progress, controls, decoded_run))
    if options.save_inputs:
        from qdqreport.collect.save_inputs import write_saved_inputs

        write_saved_inputs(writer, manifest, loaded.eval.samples)
    if options.redact:  # last: every file is staged, none is hashed yet
        from qdqreport.redact import redact_bundle_folder

        redact_bundle_folder(writer.root, manifest, [options.fp32, options.qdq, options.inputs, options.calib,
                                                     options.reference, options.modelopt_log, options.postprocess,
                                                     options.task_results, options.output])
    return writer.commit(manifest)


def _reads_fp32_weights(options: CollectOptions, loaded: _Loaded) -> bool:
    """Whether a pass of this collect reads the FP32 model's weights: the what-if search and --confirm, the FP16 check
    (the FP32 originals of the FP16 constants) and the TensorRT stages (the engine is built from the model). The
    stages, the sensitive-node tensor pass, the activation-range pass, the precision summary and the per-layer pass
    without the what-if read its graph only (its sessions read the file: models.without_weights; the per-layer
    weight rows read each weight from the file: layerwise.weight_value)."""
    from qdqreport.collect.fp32_float import has_half_float

    return ((options.per_layer and options.whatif_budget > 0) or options.confirm is not None
            or tensorrt_version()[0] is not None
            or (options.fp16_check and has_half_float(loaded.qdq.proto)))


def _input_paths(options: CollectOptions) -> list[Path]:
    """Every file the collect reads; the bundle destination must not be one of them or hold one."""
    given = [options.fp32, options.qdq, options.inputs, options.calib, options.reference, options.modelopt_log,
             options.postprocess, options.task_results]
    # Script specs are FILE.py[:FUNC]; keep the FILE part.
    return [Path(p if os.path.exists(p) else p.rsplit(":", 1)[0]) for p in given if p]


# --- loading and checking ---------------------------------------------------------------
def _load_everything(options: CollectOptions, progress: Progress) -> _Loaded:
    progress.say("loading models and inputs")
    check_provider(options.ort_provider)
    log_text = _modelopt_log_text(options.modelopt_log, progress) if options.modelopt_log else None
    fp32 = load_model(options.fp32, "--fp32")
    early: dict[str, OrtStage] = {}
    qdq = load_model(options.qdq, "--qdq", load_test=_early_qdq_stage(options.ort_provider, early))
    check_model_pair(fp32, qdq, options.allow_unquantized)
    _check_same_interface(fp32, qdq)
    for model in (fp32, qdq):
        if model.check_warning:
            progress.say(f"warning: {model.path}: the ONNX checker complains ({shorten(model.check_warning, 300)}); "
                         "ONNX Runtime loads it, so it is used (the full complaint is kept in the bundle)")
    check_overrides(options.batch_axes, fp32.inputs, fp32.outputs, str(fp32.path))
    axes = batch_axes(fp32.inputs, options.batch_axes, "an input of --fp32")
    try:
        eval_set = load_inputs(options.inputs, fp32.inputs, "--inputs", limit=options.max_samples, axes=axes)
    except InputShapeError as exc:  # a layout error only: a missing file has no axis to blame
        raise InputError(f"{exc}{inferred_axes_hint(options.inputs, axes, options.batch_axes)}") from None
    for index, feed in layouts(eval_set.samples):  # values: load_inputs found every one finite
        check_feed(feed, qdq.inputs, f"{options.inputs} sample {index} (for --qdq {qdq.path})", values=False)
    calib = load_inputs(options.calib, fp32.inputs, "--calib", axes=axes) if options.calib else None
    reference = None
    if options.reference:
        output_axes = batch_axes(fp32.output_specs, options.batch_axes, "an output of --fp32")
        reference = load_reference(options.reference, fp32.outputs, len(eval_set.samples), sample_batch(eval_set),
                                   output_axes)
    decoder, app = _load_task_inputs(options, len(eval_set.samples))
    declared = frozenset(name for name, kind in (getattr(options.judging, "output_kinds", None) or {}).items()
                         if kind == "class_scores")
    return _Loaded(fp32, qdq, eval_set, calib, reference, log_text, decoder, app, qdq_stage=early.get("ort_qdq"),
                   declared_classes=declared)


def _early_qdq_stage(provider: str, into: dict[str, OrtStage]) -> Callable[[Any], bool] | None:
    """load_model's load test for a --qdq the ONNX checker rejects (ONNX Runtime's quantize_static writes such
    models): the ort_qdq stage's own session, built now instead of a load-test session that is thrown away (one
    session less per collect; vad, issue 12), kept in *into* for the stage. Only on the CPU provider and for a model
    of at most EARLY_SESSION_BYTES: this session waits while the FP32 stage runs. When it cannot be built, the
    warnings ONNX Runtime gave are forgotten and load_model's own load test decides; the stage then tries again at
    its usual place and fails there, as it did before."""
    if provider_name(provider) != "CPUExecutionProvider":
        return None

    def build(proto: Any) -> bool:
        if proto.ByteSize() > EARLY_SESSION_BYTES:
            return False
        counted = dict(ORT_WARNINGS)
        stage = open_stage("ort_qdq", session_source(proto), tuple(o.name for o in proto.graph.output), provider)
        if stage.error:
            ORT_WARNINGS.clear()
            ORT_WARNINGS.update(counted)
            return False
        into["ort_qdq"] = stage
        return True

    return build


def _load_task_inputs(options: CollectOptions, samples: int) -> tuple[Decoder | None, AppResults | None]:
    if options.task_results and not options.postprocess:
        raise InputError(f"{options.task_results}: --task-results needs --postprocess FILE.py[:func], the decode "
                         "the application's results are compared with")
    if options.task_results:
        _check_task_stage(options)
    decoder, app = None, None
    if options.postprocess:
        from qdqreport.collect.postprocess import load_decoder

        decoder = load_decoder(options.postprocess)
    if options.task_results:
        from qdqreport.collect.task_results import load_task_results

        app = load_task_results(options.task_results, options.task_results_stage)
    if app is not None and options.max_samples is not None:  # cut like the inputs: the first N samples
        app = replace(app, results=app.results[:options.max_samples])
    if app is not None and len(app.results) != samples:
        raise InputError(f"{app.source}: holds {len(app.results)} task results but the inputs give {samples} samples; "
                         "save one result per input sample, in input order (or match --max-samples)")
    return decoder, app


def _check_task_stage(options: CollectOptions) -> None:
    stage = options.task_results_stage
    if stage not in STAGE_KINDS:
        raise InputError(f"--task-results-stage {stage}: not a stage; name the one whose outputs your application "
                         f"decoded, one of {', '.join(STAGE_KINDS)}")
    if stage == "reference" and not options.reference:
        raise InputError("--task-results-stage reference: needs --reference FILE.npz, the outputs your application decoded")


def _check_same_interface(fp32: LoadedModel, qdq: LoadedModel) -> None:
    fp32_inputs = sorted(s.name for s in fp32.inputs)
    qdq_inputs = sorted(s.name for s in qdq.inputs)
    if fp32_inputs != qdq_inputs:
        raise InputError(f"{qdq.path}: inputs {qdq_inputs} differ from the FP32 model's {fp32_inputs}; "
                         "pass the QDQ model quantized from this FP32 model")
    if not set(fp32.outputs) & set(qdq.outputs):
        raise InputError(f"{qdq.path}: shares no output name with {fp32.path}; pass the QDQ model quantized from it")
    # Both models read the same tensors: a pair that takes different input types can never be fed (a new user's
    # shipped FP16 model against an INT8 one quantized from its FP32 conversion was told "convert to float16", then,
    # converted, "convert to float32").
    qdq_types = {s.name: s.dtype for s in qdq.inputs}
    for spec in fp32.inputs:
        if qdq_types[spec.name] != spec.dtype:
            raise InputError(f"{qdq.path}: input {spec.name!r} is {qdq_types[spec.name]} but in --fp32 {fp32.path} it "
                             f"is {spec.dtype}; collect feeds both models the same tensors: pass the FP32 model the "
                             "QDQ model was quantized from (an FP16 model converted to FP32 first, say)")


def _modelopt_log_text(path: str, progress: Progress) -> str:
    """The --modelopt-log text, checked before any model loads (a binary or foreign file is refused, exit 2); one
    line when it lacks what a finished ModelOpt run writes (ModelOpt 0.47's --log_file)."""
    from qdqreport.collect.modelopt_log import parse_modelopt_log, partial_note, read_modelopt_text

    text = read_modelopt_text(path)
    note = partial_note(path, parse_modelopt_log(text))
    if note:
        progress.say(note)
    return text


# --- running ----------------------------------------------------------------------------
def _precision_summary(loaded: _Loaded, progress: Progress) -> dict[str, Any] | None:
    from qdqreport.collect.precision import precision_summary

    progress.say("reading the precision of every node of the QDQ graph")
    # The indexes the later passes read too; the FP32 one tells dead weight channels apart.
    summary = precision_summary(loaded.qdq.proto, loaded.graphs.qdq, lambda: loaded.graphs.fp32)
    summary["fp32_op_counts"] = dict(sorted(Counter(n.op_type for n in loaded.fp32.proto.graph.node).items()))
    return summary


def _marked_tensors(precision: dict[str, Any] | None, loaded: _Loaded) -> list[dict[str, Any]]:
    """Sensitive nodes whose output tensor exists under the same name in both graphs; each one's `input` (the
    activation it reads, which the tensors table names) kept only where the FP32 graph has that tensor too."""
    if not precision:
        return []
    in_both = node_output_names(loaded.fp32.proto) & node_output_names(loaded.qdq.proto)
    marked = [{**s, "input": s.get("input") if s.get("input") in in_both else None}
              for s in precision.get("sensitive", []) if s["tensor"] in in_both and s["tensor"] not in loaded.fp32.outputs]
    return marked[:MAX_MARKED_TENSORS]


@dataclass
class _Stores:
    """Where each ORT stage streams its outputs (collect/output_store.py)."""
    writer: BundleWriter
    keep: int | None
    scratch: str
    cap_bytes: int | None = None
    progress: Progress | None = None

    def open(self, stage_id: str) -> OutputStore:
        return OutputStore(self.writer.path(f"stages/{stage_id}/outputs.npz"), self.keep,
                           Path(self.scratch) / f"{stage_id}.npz", self.cap_bytes)

    def said(self, store: OutputStore, samples: int) -> None:
        """One line when the byte cap kept fewer samples' outputs than --store-outputs' default would."""
        if store.capped_from is None or self.progress is None or store.stored >= min(samples, store.capped_from):
            return
        self.progress.say(f"keeping the outputs of the first {store.stored} of {samples} samples in the bundle "
                          f"({self.cap_bytes >> 20} MB a stage by default; --store-outputs first:N or all keeps "
                          "more); every sample is still compared")


def _run_stage(stage: OrtStage, samples: list[dict[str, np.ndarray]], progress: Progress, lazy: bool = False):
    """Run every sample through *stage* (outputs streamed to its store); with *lazy*, yield each sample's outputs."""
    def run():
        for index, feed in enumerate(samples):
            yield stage.infer(feed, index)
            progress.count(f"{stage.stage_id} samples", index + 1, len(samples))
        stage.close()
        stage.outputs.finish()

    if lazy:
        return run()
    for _ in run():
        pass
    return None


@dataclass
class _OrtRun:
    comparer: StageComparer  # ort_qdq vs ort_fp32, fed while the stages run
    tensor_rows: list[dict[str, Any]]
    early: _Early | None = None  # the bounded passes, when they ran beside the stages (_BoundedPasses)


def _run_ort_stages(loaded: _Loaded, marked: list[dict[str, Any]], options: CollectOptions, progress: Progress,
                    stores: _Stores) -> tuple[dict[str, OrtStage], _OrtRun]:
    """Both stages with the graph outputs only (the sessions users deploy), each sample's outputs streamed to
    the bundle and compared at once; the sensitive-node tensors come from a separate pass on a few samples
    (collect/tensor_pass.py)."""
    bounded = _BoundedPasses.start(options, loaded, marked)
    try:
        return _run_stages(loaded, marked, options, progress, stores, bounded)
    finally:
        if bounded is not None:
            bounded.wait()  # a stage that raised leaves the worker's sessions to end first


def _run_stages(loaded: _Loaded, marked: list[dict[str, Any]], options: CollectOptions, progress: Progress,
                stores: _Stores, bounded: _BoundedPasses | None) -> tuple[dict[str, OrtStage], _OrtRun]:
    provider = options.ort_provider
    # One model at a time, as plain inference would run them: alternating the two sessions per sample
    # was 40% slower on the demo (each evicts the other's weights from the caches). The QDQ outputs are
    # compared with the FP32 ones read back from the stream, so the QDQ session is created only once the
    # FP32 stage has run and closed its own: one model's session in memory at a time (issue 12: with both
    # open, a 102 MB model's collect peaked at 4.5x its weights; a small model's QDQ session is built while the FP32
    # stage runs, below, and runs after it). A QDQ model ONNX Runtime cannot load still fails its own stage only.
    fp32 = open_stage("ort_fp32", _stage_source(loaded.fp32), loaded.fp32.outputs, provider)
    fp32.outputs = stores.open("ort_fp32")
    # A small QDQ model's session is built in a worker thread while the FP32 stage runs (ONNX Runtime releases the GIL
    # while it builds one: the demo's QDQ session, with its FP16 float part, took 0.13 s of a core): a session of a
    # model of at most BESIDE_MODEL_BYTES holds little before its first run, when its arena is allocated.
    qdq_pending = None
    if loaded.qdq_stage is None and bounded is not None:
        qdq_pending = _in_worker("qdqreport-session", lambda: _open_beside(
            "ort_qdq", _stage_source(loaded.qdq), loaded.qdq.outputs, provider))
    comparer = StageComparer(frozenset(class_score_outputs(loaded.fp32.proto)) | loaded.declared_classes,
                             detect_probabilities=True)
    try:
        for index, fp32_out in enumerate(_run_stage(fp32, loaded.eval.samples, progress, lazy=True)):
            if index == 0 and fp32_out is not None and loaded.decoder is not None:
                _check_decoder(loaded.decoder, fp32, fp32_out, loaded.eval.samples[0])
    except BaseException:
        if qdq_pending is not None:
            qdq_pending.result().close()  # built meanwhile: released before the error goes on
        raise
    qdq = loaded.qdq_stage or (qdq_pending.result() if qdq_pending is not None else
                               open_stage("ort_qdq", _stage_source(loaded.qdq), loaded.qdq.outputs, provider))
    loaded.qdq_stage = None
    qdq.outputs = stores.open("ort_qdq")
    stages = {"ort_fp32": fp32, "ort_qdq": qdq}
    stores.said(fp32.outputs, len(loaded.eval.samples))
    for index, qdq_out in enumerate(_run_stage(qdq, loaded.eval.samples, progress, lazy=True)):
        if qdq_out is not None and not fp32.error:
            comparer.add(fp32.outputs[index], qdq_out)
    early = bounded.result() if bounded is not None else None
    if stages["ort_fp32"].error or stages["ort_qdq"].error:  # the worker's tensor pass, if it ran, is dropped
        return stages, _OrtRun(comparer, [], early)
    if early is not None:
        announce_tensor_pass(progress, marked, loaded.eval.samples)
        tensors = early.tensors
    else:
        tensors = run_tensor_pass(loaded.fp32.proto, loaded.qdq.proto, marked, loaded.eval.samples, provider, progress,
                                  graphs=loaded.graphs)
    if marked:
        stages["ort_qdq"].details.update(tensors.details())
    return stages, _OrtRun(comparer, tensors.rows, early)


def _in_worker(name: str, work: Callable[[], Any]) -> Future:
    """*work* started in a thread of its own (named *name*), its result or exception kept in the Future; the thread
    ends with the work."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
    try:
        return pool.submit(work)
    finally:
        pool.shutdown(wait=False)


def _open_beside(stage_id: str, source: bytes | str, outputs: tuple[str, ...], provider: str) -> OrtStage:
    """open_stage in a worker thread: the session carries the stage's id as its log id (ort_stage.beside_stages), so
    the warnings of the stage running meanwhile are not counted as its own; its runs, in the main thread, are the
    stage's."""
    with beside_stages(stage_id, in_turn=False):
        return open_stage(stage_id, source, outputs, provider)


@dataclass
class _Early:
    """What the bounded passes gave in the worker thread, taken up where they would have run."""
    tensors: TensorPass
    ranges: dict[str, Any] | None = None
    ranges_error: Exception | None = None  # raised where the activation-range pass would have raised it


class _BoundedPasses:
    """The sensitive-node tensor pass and the activation-range pass in a worker thread while the stages run: each
    builds its own sessions (two and one; ONNX Runtime releases the GIL while it builds and runs them) and runs at most
    TENSOR_SAMPLES and --range-samples samples, so on a small model their fixed cost was a third of the default
    collect's, spent on one core while the other waited (vad, issue 12). Their results are the same: other sessions on
    the same samples, read where the passes ran before (the tensor rows once both stages ran; the ranges after the
    FP16 check), with the same progress lines. Only for small models (BESIDE_MODEL_BYTES, BESIDE_TENSOR_BYTES, the
    CPU provider, two cores or more); the worker returns None at once for larger marked tensors and the passes then
    run in their usual places."""

    def __init__(self, work: Callable[[], _Early | None]) -> None:
        self._future = _in_worker("qdqreport-bounded", work)

    @classmethod
    def start(cls, options: CollectOptions, loaded: _Loaded, marked: list[dict[str, Any]]) -> _BoundedPasses | None:
        if (provider_name(options.ort_provider) != "CPUExecutionProvider" or intra_op_threads() < 2
                or not loaded.eval.samples or loaded.fp32.external_data or loaded.qdq.external_data
                or loaded.fp32.proto.ByteSize() + loaded.qdq.proto.ByteSize() > BESIDE_MODEL_BYTES):
            return None
        quiet = Progress(quiet=True)

        def work() -> _Early | None:
            with beside_stages():
                return beside()

        def beside() -> _Early | None:
            try:
                held, sizes = _marked_bytes(loaded, marked)
            except Exception:  # noqa: BLE001 - a graph the alignment cannot read: the passes run (and fail) in place
                return None
            if held > BESIDE_TENSOR_BYTES:
                return None
            tensors = run_tensor_pass(loaded.fp32.proto, loaded.qdq.proto, marked, loaded.eval.samples,
                                      options.ort_provider, quiet, graphs=loaded.graphs)
            early = _Early(tensors)
            try:
                early.ranges = _activation_ranges(options, loaded, quiet, sizes=sizes)
            except Exception as exc:  # noqa: BLE001 - re-raised by _activation_ranges in the main thread
                early.ranges_error = exc
            return early

        return cls(work)

    def result(self) -> _Early | None:
        return self._future.result()

    def wait(self) -> None:
        self._future.exception()  # waits; what it raised, if anything, is result()'s to raise


def _marked_bytes(loaded: _Loaded, marked: list[dict[str, Any]]) -> tuple[float, dict[str, int | None]]:
    """The bytes the bounded passes hold of the tensors they mark: one sample of the activation-range pass's, and
    TENSOR_SAMPLES samples of the tensor pass's (its FP32 tensors are kept until the QDQ session runs), as float32 by
    ONNX shape inference on the first evaluation sample. A size shape inference leaves unknown counts as the largest
    known one or, when none is known (Silero VAD's tensors live in an If branch), as UNKNOWN_TENSOR_INPUTS times the
    first sample's largest input: a guess, which the model-size bound caps. Also returns the estimates (the
    activation-range pass's own, which it then does not repeat)."""
    from qdqreport.collect.activation_ranges import measured_tensor_names
    from qdqreport.collect.stepwise import estimated_bytes

    ranged, tensors = set(measured_tensor_names(loaded.graphs)), {m["tensor"] for m in marked}
    if not ranged and not tensors:
        return 0, {}
    first = loaded.eval.samples[0]
    sizes = estimated_bytes(loaded.graphs.fp32.model, first, sorted(ranged | tensors))
    known = [size for size in sizes.values() if size is not None]
    unknown = max(known) if known else UNKNOWN_TENSOR_INPUTS * max(4 * np.size(v) for v in first.values())
    size = {name: unknown if value is None else value for name, value in sizes.items()}
    return sum(size[name] for name in ranged) + TENSOR_SAMPLES * sum(size[name] for name in tensors), sizes


def _check_decoder(decoder: Decoder, stage: OrtStage, outputs: dict[str, np.ndarray],
                   inputs: dict[str, np.ndarray]) -> None:
    """--postprocess's decode (and compare) on the first FP32 sample, before the other samples run: a script
    that cannot decode is refused after one inference, not after both full passes (a new user's ViT: 30 s)."""
    from qdqreport.analysis.task import check_decoder

    try:
        check_decoder(decoder, {name: outputs[name] for name in stage.graph_outputs}, inputs)
    except InputError:
        stage.close()
        stage.outputs.close()
        raise


def _stage_source(model: LoadedModel) -> bytes | str:
    """A stage session's model: the file itself when its tensors live in external data files (ONNX Runtime reads
    them from there, without a serialised copy of a large model beside the loaded one: the session's creation
    was the collect's peak, issue 12), else the loaded proto serialised (load_model does not modify it)."""
    return str(model.path) if model.external_data else session_source(model.proto)


def _activation_ranges(options: CollectOptions, loaded: _Loaded, progress: Progress, early: _Early | None = None,
                       sizes: dict[str, int | None] | None = None) -> dict[str, Any] | None:
    """Every activation Q node's range use on a bounded, evenly spread subset of the evaluation samples (*early*: as
    the worker thread measured it beside the stages)."""
    if options.range_samples <= 0:
        return None
    from qdqreport.collect.activation_ranges import activation_ranges

    progress.say(f"measuring activation ranges on {min(options.range_samples, len(loaded.eval.samples))} samples"
                 + (" and as many calibration samples" if loaded.calib is not None else ""))
    if early is not None:
        if early.ranges_error is not None:
            raise early.ranges_error
        return early.ranges
    return activation_ranges(loaded.graphs, loaded.eval.samples, options.ort_provider, options.range_samples,
                             loaded.calib.samples if loaded.calib is not None else None, sizes)


def _measured_ranges(options: CollectOptions, loaded: _Loaded, progress: Progress, early: _Early | None,
                     fp32_failed: str | None) -> dict[str, Any] | None:
    """_activation_ranges, or None when the FP32 model itself failed on the evaluation samples (*fp32_failed*: its
    stage's error, which the bundle records and QR008 reports): the pass runs that model on those samples and fails
    the same way (a new user's samples of 4 rows on a dynamic batch axis fed one row at a time ended the collect with
    exit 3 there). Any other failure of the pass is raised."""
    try:
        return _activation_ranges(options, loaded, progress, early)
    except Exception:
        if not fp32_failed:
            raise
        progress.say("activation ranges: not measured, the FP32 model fails on the evaluation samples (stage ort_fp32)")
        return None


def _per_layer(options: CollectOptions, loaded: _Loaded, precision: dict[str, Any] | None, progress: Progress,
               decision_samples: int | None, qdq: OrtStage, run: "_OrtRun") -> PerLayer:
    from qdqreport.collect.layers_stage import run_per_layer
    from qdqreport.collect.whatif import WhatIfOptions

    # The what-if judges its variants as the report will judge the QDQ model: the same output kinds and decision
    # threshold, decisions on the same stored samples (collect/whatif.py); it plans its trials' samples from the QDQ
    # stage's inference time and its worst samples (collect/whatif_samples.py).
    ran = len(qdq.outputs) if qdq.error is None else 0
    whatif = WhatIfOptions(options.whatif_budget, options.target_cosine, options.target_top1, provider=options.ort_provider,
                           judging=options.judging, decision_samples=decision_samples, decoder=loaded.decoder,
                           seconds_per_sample=qdq.seconds / ran if ran else None,
                           session_seconds=qdq.open_seconds,
                           worst_samples=tuple(run.comparer.worst_samples()) if options.whatif_budget > 0 else ())
    return run_per_layer(loaded.fp32.proto, loaded.qdq.proto, loaded.eval.samples, precision, whatif, progress,
                         loaded.graphs, options.per_layer_samples)


def _confirm_whatif(options: CollectOptions, loaded: _Loaded, precision: dict[str, Any] | None, layers: PerLayer,
                    fp32: OrtStage, progress: Progress) -> None:
    from qdqreport.collect.modelopt_log import parse_modelopt_log

    if fp32.error or not precision:
        return
    progress.say("--confirm: re-quantizing with the what-if's best set excluded")
    log = parse_modelopt_log(loaded.modelopt_log) if loaded.modelopt_log else None
    calib = loaded.calib.samples if loaded.calib is not None else None
    record = options.confirm(loaded.fp32.path, layers.whatif_summary, precision, log, calib, options.calib,
                             loaded.eval.samples, fp32.outputs, _class_outputs(loaded, fp32.outputs), options.ort_provider)
    if record is not None:
        layers.whatif_summary["confirmed"] = record


def _task(loaded: _Loaded, stages: dict[str, OrtStage], trt_results: list[TrtStageResult], progress: Progress,
          controls: Sequence[OrtStage | None] = (), decoded: "TaskRun | None" = None) -> TaskRun:
    """The user's decode of every stage that ran, and of the checks' controls that ran (*controls*: the saturation
    check's unfused run, the calibration check's evaluation ranges; their chosen samples): a control's task comparison
    judges it as the QDQ model's judges that. *decoded*: _decode_stages' run, whose decoded stages are not decoded
    again."""
    from qdqreport.analysis.task import TaskRun, run_task
    from qdqreport.collect.control_stage import ran_on

    progress.say(f"decoding every stage's outputs with {loaded.decoder.where}")
    outputs = {"reference": loaded.reference} if loaded.reference is not None else {}
    outputs.update({sid: s.outputs for sid, s in stages.items() if not s.error})
    outputs.update({r.stage_id: r.outputs for r in trt_results if r.status == "ok" and r.outputs})
    run = run_task(loaded.decoder, outputs, loaded.app, loaded.eval.samples, decoded)
    fp32 = stages.get("ort_fp32")
    for control in (c for c in controls if c is not None and not c.error):
        indices = ran_on(control, len(control.outputs))  # decoded against ort_fp32 on the control's own samples
        fp32_decoded = run.results.get("ort_fp32")  # decoded above: taken at the control's samples, not decoded again
        known = TaskRun(run.decoder, {"ort_fp32": [fp32_decoded[i] for i in indices]}, {}, None) if fp32_decoded \
            else None
        same = run_task(loaded.decoder, {"ort_fp32": [fp32.outputs[i] for i in indices],
                                         control.stage_id: control.outputs},
                        None, [loaded.eval.samples[i] for i in indices], known)
        run.results.update({k: v for k, v in same.results.items() if k == control.stage_id})
        run.failures.update(same.failures)
        run.pairs.extend(p for p in same.pairs if p.candidate == control.stage_id)
    return run


def _control_samples(loaded: _Loaded, run: "_OrtRun", decoded: "TaskPair | None") -> tuple[int, ...]:
    """The samples the checks' controls run on (control_stage.choose_samples): those whose decisions the QDQ model
    changes, by the user's decode where there is one (*decoded*: every sample), else by the compared outputs' top-1;
    without any, the lowest cosine first."""
    from qdqreport.analysis.calibration_check import MAX_SAMPLES
    from qdqreport.collect.control_stage import choose_samples

    changed = ([int(r["sample"]) for r in decoded.rows if float(r["agreement"]) < 1.0] if decoded is not None
               else run.comparer.changed_samples())
    return choose_samples(len(loaded.eval.samples), MAX_SAMPLES, changed,
                          run.comparer.worst_samples() if not changed else ())


def _decode_stages(loaded: _Loaded, stages: dict[str, OrtStage]) -> "TaskRun | None":
    """The user's decode (--postprocess) of every sample of ort_fp32 and ort_qdq, compared (the task then reuses the
    decoded results); None without a decode or a stage. Every sample: the first 32 alone can hold none of the changed
    decisions (an evaluation file grouped by class)."""
    fp32, qdq = stages.get("ort_fp32"), stages.get("ort_qdq")
    if loaded.decoder is None or fp32 is None or qdq is None or fp32.error or qdq.error:
        return None
    if not len(fp32.outputs) == len(qdq.outputs) == len(loaded.eval.samples):
        return None
    from qdqreport.analysis.task import run_task

    return run_task(loaded.decoder, {"ort_fp32": fp32.outputs, "ort_qdq": qdq.outputs}, None, loaded.eval.samples)


def _quantization_pair(early: "TaskRun | None") -> "TaskPair | None":
    """The ort_fp32 -> ort_qdq pair of _decode_stages' run, or None."""
    pairs = early.pairs if early is not None else []
    return next((p for p in pairs if p.reference == "ort_fp32" and p.candidate == "ort_qdq"), None)


def _fp16_check(options: CollectOptions, loaded: _Loaded, progress: Progress) -> Fp16Check | None:
    from qdqreport.collect.fp32_float import has_half_float  # fp16_check.needs_fp16_check, without importing the check

    if not options.fp16_check or not has_half_float(loaded.qdq.proto):
        return None
    from qdqreport.collect.fp16_check import run_fp16_check

    return run_fp16_check(loaded.fp32.proto, loaded.qdq.proto, loaded.eval.samples, options.ort_provider, progress,
                          loaded.graphs)


def _saturation_kernels(options: CollectOptions,
                        precision: dict[str, Any] | None) -> tuple[dict[str, Any], tuple[list[str], list[str]]] | None:
    """(CPU flags, the U8S8 and S8S8 nodes) when the saturation check applies to this model on this CPU."""
    if not options.saturation_check:
        return None
    cpu = cpu_vnni()
    nodes = kernel_nodes(precision, cpu)
    return (cpu, nodes) if any(nodes) else None


def _decode_differs(loaded: _Loaded, decoded: "TaskPair | None") -> str | None:
    """Why the control runs where every raw output agrees but the user's decode (--postprocess, *decoded*: every
    sample) decides otherwise on the QDQ model than on FP32; None otherwise. Raw outputs within their tolerance can
    still move a thresholded decision: the control then measures whether the kernels moved it (the open item of
    session 40: the check was skipped when only the decode degraded)."""
    from qdqreport.analysis.agreement import AGREE, task_level

    if decoded is None or task_level(decoded.agreement) == AGREE:
        return None
    return (f"ran: every raw output agrees, but the decode ({loaded.decoder.where}) of {decoded.disagreeing} of "
            f"{len(decoded.rows)} samples differs")


def _control_decision(writer: BundleWriter, manifest: dict[str, Any], loaded: _Loaded,
                      stages: dict[str, OrtStage], decoded: "TaskPair | None" = None) -> str | None:
    """Why the checks' controls run ("ran: ..."), or None where every fused QDQ output agrees with FP32: judged by the
    report's own judgement on the stages and comparisons already in *manifest* (saturation_check.diverging_outputs), or
    by the user's decode (_decode_differs)."""
    stored = {entry["artifacts"]["outputs"]: stages[entry["id"]].outputs[:stages[entry["id"]].outputs.stored]
              for entry in manifest["stages"] if entry["id"] in stages and "outputs" in entry["artifacts"]}
    return decision(diverging_outputs(writer, manifest, stored)) or _decode_differs(loaded, decoded)


def _saturation_check(writer: BundleWriter, manifest: dict[str, Any], options: CollectOptions, loaded: _Loaded,
                      kernels: tuple[dict[str, Any], tuple[list[str], list[str]]], stages: dict[str, OrtStage],
                      progress: Progress, why: str | None, chosen: Sequence[int] = ()) -> OrtStage | None:
    """The unfused control (returned when it ran), only where the fused QDQ outputs do not agree with FP32 (*why*:
    _control_decision); where every output agrees the stage is recorded as skipped, with the reason."""
    cpu, nodes = kernels
    fp32 = stages["ort_fp32"]
    if why is None:
        progress.say("saturation check: the fused QDQ outputs agree with FP32; the unfused control is not run")
        manifest["stages"].append(skipped_entry(nodes, cpu, len(loaded.eval.samples)))
        return None
    check = run_saturation_check(session_source(loaded.qdq.proto), loaded.qdq.outputs, loaded.eval.samples, nodes,
                                 options.ort_provider, progress, cpu, why, chosen or None)
    write_saturation_check(writer, manifest, check, [] if fp32.error else fp32.outputs,
                           _class_outputs(loaded, fp32.outputs) if fp32.outputs else set(), write_comparison)
    return check.control


def _calibration_check(writer: BundleWriter, manifest: dict[str, Any], loaded: _Loaded, ranges: dict[str, Any],
                       stages: dict[str, OrtStage], provider: str, progress: Progress,
                       why: str | None, chosen: Sequence[int] = ()) -> OrtStage | None:
    """The evaluation-ranges control (collect/range_check.py; returned when it ran), only where the fused QDQ outputs
    do not agree with FP32 (*why*: _control_decision); otherwise recorded as skipped, with the reason."""
    from qdqreport.collect.range_check import (SKIPPED_AGREE, SKIPPED_FP32, SKIPPED_UNSET, run_calibration_check,
                                               skipped_entry, write_calibration_check)

    fp32 = stages["ort_fp32"]
    control = None
    if why is not None and not fp32.error:
        control = run_calibration_check(loaded.graphs.qdq, loaded.qdq.outputs, loaded.eval.samples,
                                        ranges.get("quantizers") or [], provider, progress, why,
                                        loaded.graphs.fp32, chosen or None)
    if control is None:
        reason = SKIPPED_AGREE if why is None else SKIPPED_FP32 if fp32.error else SKIPPED_UNSET
        manifest["stages"].append(skipped_entry(reason, len(loaded.eval.samples)))
        return None
    write_calibration_check(writer, manifest, control, fp32.outputs,
                            _class_outputs(loaded, fp32.outputs) if fp32.outputs else set(), write_comparison)
    return control


# --- writing ----------------------------------------------------------------------------
def _stage_entries(writer: BundleWriter, loaded: _Loaded, stages: dict[str, OrtStage]) -> list[dict[str, Any]]:
    entries = []
    if loaded.reference is not None:
        entries.append(write_stage(writer, "reference", "ok", loaded.reference, details={"source": "--reference"}))
    for stage_id, stage in stages.items():
        status = "failed" if stage.error else "ok"
        store: OutputStore = stage.outputs
        details = {**stage.details, "samples": len(store), "outputs_stored": store.stored if status == "ok" else 0}
        entry = write_stage(writer, stage_id, status, None, stage.error, log="\n".join(stage.log) + "\n",
                            seconds=stage.seconds, details=details)
        if status == "ok" and store.in_bundle():  # streamed there while the stage ran
            entry["artifacts"]["outputs"] = f"stages/{stage_id}/outputs.npz"
        elif store.in_bundle():  # a failed stage keeps no outputs: drop the partial file
            store.close()
            store.bundle_path.unlink(missing_ok=True)
        entries.append(entry)
    return entries


def _trt_request(options: CollectOptions, loaded: _Loaded) -> TrtRequest:
    return TrtRequest(str(loaded.fp32.path), str(loaded.qdq.path), loaded.fp32.proto, loaded.qdq.proto,
                      loaded.fp32.outputs, loaded.qdq.outputs, loaded.eval.samples, options.trt_mark_all,
                      options.ort_provider)


def _trt_comparisons(writer: BundleWriter, loaded: _Loaded, stages: dict[str, OrtStage],
                     trt_results: list[TrtStageResult]) -> list[dict[str, Any]]:
    ort_outputs = {stage_id: stage.outputs for stage_id, stage in stages.items() if not stage.error}
    return write_trt_comparisons(writer, trt_results, ort_outputs, lambda samples: _class_outputs(loaded, samples))


def _comparisons(writer: BundleWriter, loaded: _Loaded, stages: dict[str, OrtStage], run: _OrtRun) -> list[dict[str, Any]]:
    fp32, qdq = stages["ort_fp32"], stages["ort_qdq"]
    entries = []
    if loaded.reference is not None and not fp32.error:
        classes = _class_outputs(loaded, loaded.reference)
        entries.append(write_comparison(writer, "reference", "ort_fp32", "export", loaded.reference, fp32.outputs, classes))
    if not fp32.error and not qdq.error:
        entries.append(write_compared(writer, "ort_fp32", "ort_qdq", "quantization", run.comparer, run.tensor_rows))
    return entries


def _class_outputs(loaded: _Loaded, samples: list[dict[str, np.ndarray]]) -> set[str]:
    # What the user declared class scores counts too: a key CNN's 24 logits out of a ReduceMean, declared with
    # --output-kind, had no top-1 column ("—" in the report's table) while its judgement counted top-1 flips.
    from_graph = class_score_outputs(loaded.fp32.proto)
    declared = {name for name in samples[0] if name in loaded.declared_classes}
    return from_graph | declared | {name for name in samples[0] if looks_like_probabilities(samples, name)}


def _artifacts(writer: BundleWriter, loaded: _Loaded, precision: dict[str, Any] | None) -> dict[str, str]:
    artifacts = {}
    if precision is not None:
        artifacts["precision_summary"] = writer.add_json(ARTIFACT_PATHS["precision_summary"], precision)
    if loaded.modelopt_log is not None:
        from qdqreport.collect.modelopt_log import parse_modelopt_log

        artifacts["modelopt_log"] = writer.add_json(ARTIFACT_PATHS["modelopt_log"], parse_modelopt_log(loaded.modelopt_log))
        artifacts["modelopt_log_text"] = writer.add_text("quant/modelopt.log", loaded.modelopt_log)
    artifacts["eval_stats"] = writer.add_json(ARTIFACT_PATHS["eval_stats"],
                                              stats.input_stats(loaded.eval.samples, loaded.eval.source, per_sample=True,
                                                                batch_axes=loaded.eval.batch_axes))
    if loaded.calib is not None:
        artifacts["calib_stats"] = writer.add_json(ARTIFACT_PATHS["calib_stats"],
                                                   stats.input_stats(loaded.calib.samples, loaded.calib.source,
                                                                     per_sample=False, batch_axes=loaded.calib.batch_axes))
    artifacts["range_use"] = writer.add_json(ARTIFACT_PATHS["range_use"], stats.range_use(loaded.qdq.proto, loaded.eval.samples))
    return artifacts


def _manifest(options: CollectOptions, loaded: _Loaded) -> dict[str, Any]:
    manifest = base_manifest(argv=options.argv, tools=_tool_versions())
    manifest["host"].update(_host())
    manifest["models"] = {"fp32": loaded.fp32.manifest_entry(), "qdq": loaded.qdq.manifest_entry()}
    manifest["inputs"] = {"eval": loaded.eval.manifest_entry()}
    if loaded.calib is not None:
        manifest["inputs"]["calib"] = loaded.calib.manifest_entry()
    if options.reference:
        first = loaded.reference[0]
        axes = batch_axes(loaded.fp32.output_specs, options.batch_axes, "an output of --fp32")
        manifest["inputs"]["reference"] = {
            "source": options.reference, "kind": "npz", "samples": len(loaded.reference), "sha256": None,
            "tensors": [{"name": k, "shape": list(v.shape), "dtype": str(v.dtype), "batch_axis": axes.get(k, 0)}
                        for k, v in first.items()]}
    manifest["settings"] = {"ort_provider": options.ort_provider, "max_samples": options.max_samples,
                            "target": options.target}
    if options.judging is not None:  # what the user declared about the outputs: report reads it back
        manifest["settings"].update(output_kinds=dict(options.judging.output_kinds),
                                    **({"decision_threshold": options.judging.threshold}
                                       if options.judging.threshold_given else {}))
    if options.quantization:
        manifest["quantization"] = options.quantization
    if options.trt_mark_all:
        from qdqreport.collect.trt_run import MARK_ALL_WARNING

        manifest["settings"].update(trt_mark_all=True, trt_mark_all_warning=MARK_ALL_WARNING)
    return manifest


def _tool_versions() -> dict[str, Any]:
    import onnx
    import onnxruntime
    import polygraphy

    version, _ = tensorrt_version()
    return {"onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__, "polygraphy": polygraphy.__version__,
            "tensorrt": version, "onnxruntime_providers": onnxruntime.get_available_providers()}


def _host() -> dict[str, Any]:
    # No host name: reports get attached to public tickets.
    return {"cpu": _cpu_name(), "cpu_count": os.cpu_count(), "gpu": None}


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
