"""Context: the one object rules see. Typed, cached views of a bundle's data.

Rules never open files or parse CSV columns themselves; they ask the Context, which knows
the bundle schema. Everything here is NumPy and the standard library only.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Mapping, Sequence

from qdqreport.analysis.target import resolve_target
from qdqreport.analysis import agreement
from qdqreport.analysis.metrics import centred_error
from qdqreport.analysis.agreement import Judgement, JudgingOptions
from qdqreport.analysis.decisions import measure as measure_decisions
from qdqreport.analysis.input_range import without_rounding_clips
from qdqreport.analysis.output_grid import GriddedOutput, erasing_outputs
from qdqreport.analysis.output_kinds import OutputKind, infer_kind, producer_ops, score_gate
from qdqreport.analysis.records import (LayerRow, QNodeRow, SampleRow, SliceRow, TaskRow, TensorRow, WhatIfRow,
                                       table_records)
from qdqreport.analysis.upstream import describe_calibration_upstream
from qdqreport.bundle.artifacts import check_array_key, check_artifact, check_manifest, check_rows
from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.schema import MANIFEST, table_columns


@dataclass(frozen=True)
class StageInfo:
    id: str
    runtime: str
    precision: str
    status: str
    error: str | None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ComparisonInfo:
    id: str
    reference: str
    candidate: str
    purpose: str
    sliced: dict[str, dict[str, Any]]
    class_outputs: tuple[str, ...]
    skipped: dict[str, str]


@dataclass(frozen=True)
class OutputSummary:
    """One output tensor of one comparison, summarised over samples (medians and the worst)."""

    output: str
    samples: int
    cosine_median: float
    cosine_min: float
    worst_sample: int
    sqnr_median: float
    sqnr_min: float
    max_abs: float
    rel_l2_median: float
    top1: float | None  # mean top-1 agreement, None when the output is not class scores
    top5: float | None
    nonfinite_ref: int
    nonfinite_cand: int
    worst_slice: int | None = None  # the slice with the lowest cosine among those carrying signal, when sliced
    worst_slice_cosine: float | None = None
    worst_slice_sqnr: float | None = None
    slice_axis: int | None = None
    elements: int | None = None  # values per sample, when the stage outputs are stored
    kind: OutputKind | None = None  # what the output is (analysis/output_kinds.py)
    judgement: Judgement | None = None  # agree/degrade/collapse and the number that decided (analysis/agreement.py)

    @property
    def level(self) -> str | None:
        return self.judgement.level if self.judgement else None

    @property
    def internal(self) -> bool:
        return bool(self.judgement and self.judgement.internal)


class Context:
    def __init__(self, bundle: Bundle, target: str | None = None, judging: JudgingOptions | None = None):
        self.bundle = bundle
        self.manifest = bundle.manifest
        # The values rules and the report read, beyond the manifest's structure: bundle/artifacts.py.
        check_manifest(self.manifest, bundle._where(MANIFEST))
        # The deployment runtime (--target, else the bundle's settings.target, else tensorrt): analysis/target.py.
        self.target = resolve_target(target, self.manifest, bundle._where(MANIFEST))
        # The command line's output kinds and decision threshold, else what collect recorded, else inferred/0.5.
        self.judging = agreement.resolve_options(judging, self.manifest.get("settings"))
        self._stored: dict[str, list[dict[str, Any]]] = {}
        self._tables: dict[tuple[str, str], list[Any]] = {}  # typed records (analysis/records.py)
        self._grouped: dict[tuple[str, str], dict[str, list[Any]]] = {}
        self._summaries: dict[str, list[OutputSummary]] = {}
        self._task_levels: dict[str, str] = {}

    # --- stages and comparisons ----------------------------------------------------------
    @cached_property
    def stages(self) -> list[StageInfo]:
        return [StageInfo(s["id"], s["runtime"], s["precision"], s["status"], s.get("error"),
                          s.get("details", {})) for s in self.manifest["stages"]]

    def stage(self, stage_id: str) -> StageInfo | None:
        return next((s for s in self.stages if s.id == stage_id), None)

    def stage_ok(self, stage_id: str) -> bool:
        stage = self.stage(stage_id)
        return stage is not None and stage.status == "ok"

    @cached_property
    def comparisons(self) -> list[ComparisonInfo]:
        return [ComparisonInfo(c["id"], c["reference"], c["candidate"], c["purpose"], c.get("sliced", {}),
                               tuple(c.get("class_outputs", ())), c.get("skipped", {}))
                for c in self.manifest["comparisons"]]

    def comparison(self, purpose: str) -> ComparisonInfo | None:
        """The comparison made for *purpose* (export, quantization, deployment, fp16)."""
        return next((c for c in self.comparisons if c.purpose == purpose), None)

    # Tables are read as typed, frozen records (analysis/records.py), built once per table.
    def sample_rows(self, comparison_id: str) -> list[SampleRow]:
        return self._table(comparison_id, "samples")

    def slice_rows(self, comparison_id: str) -> list[SliceRow]:
        return self._table(comparison_id, "slices")

    def tensor_rows(self, comparison_id: str) -> list[TensorRow]:
        """Per-tensor errors of the marked intermediate tensors (sensitive nodes), if collected."""
        return self._table(comparison_id, "tensors")

    def layer_rows(self, comparison_id: str, kind: str = "layers") -> list[LayerRow] | list[QNodeRow] | list[WhatIfRow]:
        """Per-layer tables of a comparison (collect --per-layer): kind "layers", "qnodes" or "whatif"."""
        return self._table(comparison_id, kind)

    def sample_rows_of(self, comparison_id: str, output: str) -> list[SampleRow]:
        """The per-sample rows of one output (grouped once: bundles may hold thousands of outputs)."""
        return self._by_output(comparison_id, "samples").get(output, [])

    def output_summaries(self, comparison_id: str) -> list[OutputSummary]:
        """Every output of a comparison, summarised over samples and judged (analysis/agreement.py)."""
        if comparison_id not in self._summaries:
            slices = self._by_output(comparison_id, "slices")
            info = next((c for c in self.comparisons if c.id == comparison_id), None)
            summaries = [self._judged(info, _summarise(name, rows, slices.get(name, [])))
                         for name, rows in self._by_output(comparison_id, "samples").items()]
            level = self._task_level(info, summaries)
            self._summaries[comparison_id] = [
                dataclasses.replace(s, judgement=agreement.capped_by_task(s.judgement, level, _guessed(s)))
                for s in summaries]
        return self._summaries[comparison_id]

    def task_level(self, comparison: ComparisonInfo) -> str:
        """agree | degrade | collapse of the user's decode (collect --postprocess) on *comparison*'s stage pair,
        agree when unmeasured: analysis/agreement.decode_level, the one judgement rules and the verdict read."""
        self.output_summaries(comparison.id)
        return self._task_levels.get(comparison.id) or agreement.AGREE

    def _task_level(self, info: ComparisonInfo | None, summaries: list[OutputSummary]) -> str | None:
        """The decode's level from the raw outputs' own judgements (before a task caps them: a collapse capped to
        degrade never agrees, so the order cannot change whether every raw output agrees)."""
        task = self.task_of_pair(info.reference, info.candidate) if info is not None else None
        if task is None:
            return None
        # The data's words only: calibration_upstream also reads the calibration check, which reads these summaries.
        ordinary = (bool(summaries) and not any(agreement.diverges(s) for s in summaries)
                    and not self.calibration_upstream_words)
        level = agreement.decode_level(float(task["agreement"]), self.task_rows(task["id"]), ordinary)
        self._task_levels[info.id] = level
        return level

    def _judged(self, info: ComparisonInfo | None, summary: OutputSummary) -> OutputSummary:
        if info is None:
            return judged(summary, [], [], self.judging, self._producers, (), self.input_shapes)
        reference, candidate = self.compared_outputs(info)
        return judged(summary, reference, candidate, self.judging, self._producers, info.class_outputs,
                      self.input_shapes)

    def compared_outputs(self, info: ComparisonInfo) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The stored outputs of a comparison's reference and candidate, sample for sample: a check's control ran on
        chosen samples (its details' `sample_indices`, in its order), so the reference's are taken at those."""
        reference, candidate = self.stored_outputs(info.reference), self.stored_outputs(info.candidate)
        indices = self.sample_indices(info.candidate)
        if indices is not None:
            reference = [reference[i] for i in indices[:len(candidate)] if i < len(reference)]
        return reference, candidate

    def sample_indices(self, stage_id: str) -> tuple[int, ...] | None:
        """The evaluation samples a check's control ran on, in its order (details `sample_indices`); None where the
        stage records none, or anything but a list of non-negative integers (a bundle is untrusted input)."""
        stage = self.stage(stage_id)
        listed = stage.details.get("sample_indices") if stage is not None else None
        if not isinstance(listed, list) or not listed:
            return None
        if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in listed):
            return None
        return tuple(listed)

    def stored_outputs(self, stage_id: str) -> list[dict[str, Any]]:
        """A stage's stored outputs (collect --store-outputs), read once; [] when none were stored."""
        if stage_id not in self._stored:
            self._stored[stage_id] = load_stage_outputs(self.bundle, stage_id) if self.stage(stage_id) else []
        return self._stored[stage_id]

    @cached_property
    def _producers(self) -> dict[str, str]:
        return producer_ops(self.precision)

    @cached_property
    def input_names(self) -> tuple[str, ...]:
        """The model inputs the evaluation set feeds, as the manifest names them."""
        return tuple(self.input_shapes)

    @cached_property
    def input_shapes(self) -> dict[str, tuple[int, ...]]:
        """The model inputs the evaluation set feeds, as the manifest names them -> one sample's shape (empty when
        the manifest gives none or an odd one)."""
        tensors = ((self.manifest.get("inputs") or {}).get("eval") or {}).get("tensors") or []
        return {t["name"]: _shape(t.get("shape")) for t in tensors
                if isinstance(t, dict) and isinstance(t.get("name"), str)}

    def _by_output(self, comparison_id: str, kind: str) -> dict[str, list[Any]]:
        key = (comparison_id, kind)
        if key not in self._grouped:
            grouped: dict[str, list[Any]] = {}
            for row in self._table(comparison_id, kind):
                grouped.setdefault(row.output, []).append(row)
            self._grouped[key] = grouped
        return self._grouped[key]

    # --- graph and input evidence --------------------------------------------------------
    @cached_property
    def precision(self) -> dict[str, Any] | None:
        """quant/precision_summary.json: how every node of the QDQ graph is quantized."""
        return self._artifact_json("precision_summary")

    @cached_property
    def eval_stats(self) -> dict[str, Any] | None:
        return self._artifact_json("eval_stats")

    @cached_property
    def calib_stats(self) -> dict[str, Any] | None:
        return self._artifact_json("calib_stats")

    @cached_property
    def range_use(self) -> list[dict[str, Any]] | None:
        """How evaluation inputs fill the INT8 range of the Q nodes that read the model inputs (a limit's float rounding
        is no clipping: input_range.without_rounding_clips)."""
        entries = self._artifact_json("range_use")
        return None if entries is None else without_rounding_clips(entries)

    @cached_property
    def activation_ranges(self) -> dict[str, Any] | None:
        """Every activation Q node's range use on a spread subset of the evaluation samples (default collect)."""
        return self._artifact_json("activation_ranges")

    @cached_property
    def modelopt_log(self) -> dict[str, Any] | None:
        return self._artifact_json("modelopt_log")

    @cached_property
    def modelopt_log_text(self) -> str | None:
        """ModelOpt's log as collect copied it (quant/modelopt.log), for what the parsed log does not record (the
        calibration's execution providers: analysis/quantizer.modelopt_recipe)."""
        path = self.manifest["artifacts"].get("modelopt_log_text")
        return self.bundle.text(path) if isinstance(path, str) and self.bundle.has(path) else None

    @cached_property
    def engines(self) -> dict[str, Any]:
        """Stage id -> EngineEvidence (layer info, profile, build log, settings) of TensorRT stages: analysis/trt_evidence.py."""
        from qdqreport.analysis.trt_evidence import load_engines  # imported here: trt_evidence type-imports Context

        return load_engines(self)

    @cached_property
    def layers_summary(self) -> dict[str, Any] | None:
        """layers/summary.json: what the per-layer pass aligned and measured (collect --per-layer)."""
        return self._artifact_json("layers_summary")

    @cached_property
    def whatif_summary(self) -> dict[str, Any] | None:
        """layers/whatif.json: the what-if search's target, baseline and chosen exclusion set."""
        return self._artifact_json("whatif_summary")

    @cached_property
    def fp16_check(self) -> dict[str, Any] | None:
        """quant/fp16_check.json: what the FP16 check measured (QDQ float part in FP16)."""
        return self._artifact_json("fp16_check")

    @cached_property
    def erasing_grids(self) -> list[GriddedOutput]:
        """The task outputs the QDQ model hands over on an 8-bit grid that erases FP32's small values
        (analysis/output_grid.py), read once from the stored samples for every rule that asks (QR002, QR007, QR012)."""
        return erasing_outputs(self)

    @cached_property
    def calibration_upstream_words(self) -> str:
        """analysis/upstream.calibration_upstream's words for this bundle ("" when the calibration inputs look like the
        evaluation's), read once for every rule that asks."""
        return describe_calibration_upstream(self)

    # --- task-level results (collect --postprocess, schema 1.2) ----------------------------
    @cached_property
    def task(self) -> dict[str, Any] | None:
        """manifest["task"]: the decode step, decoded stages, the app's results and per-pair agreement."""
        task = self.manifest.get("task")
        return task if isinstance(task, dict) else None

    def task_comparison(self, purpose: str) -> dict[str, Any] | None:
        """The task comparison of *purpose* (quantization, ..., postprocess for the application's results)."""
        return next((c for c in (self.task or {}).get("comparisons", []) if c["purpose"] == purpose), None)

    def task_of_pair(self, reference: str, candidate: str) -> dict[str, Any] | None:
        """The task comparison of the stage pair *reference* -> *candidate* (collect --postprocess), or None: the one
        lookup rules, the verdict's stage matrix and the config card read."""
        return next((c for c in (self.task or {}).get("comparisons", [])
                     if c["reference"] == reference and c["candidate"] == candidate), None)

    def task_rows(self, comparison_id: str) -> list[TaskRow]:
        """Per-sample rows (table kind 'task') of one task comparison."""
        key = (comparison_id, "task")
        if key not in self._tables:
            entry = next((c for c in (self.task or {}).get("comparisons", []) if c["id"] == comparison_id), None)
            self._tables[key] = self.table(entry["table"] if entry else None, "task")
        return self._tables[key]

    def task_results(self, stage: str) -> list[dict[str, Any]]:
        """Decoded results of *stage* ("task_results" = the application's), one {field: array} per sample."""
        task = self.task or {}
        entries = [s for s in task.get("stages", []) if s["stage"] == stage and s.get("results")]
        if stage == "task_results" and task.get("task_results"):
            entries = [task["task_results"]]
        if not entries or not self.bundle.has(entries[0]["results"]):
            return []
        samples: dict[int, dict[str, Any]] = {}
        where = self.bundle._where(entries[0]["results"])
        for key, value in self.bundle.npz(entries[0]["results"]).items():
            index, name = check_array_key(key, where)
            samples.setdefault(index, {})[name] = value
        return [samples[i] for i in sorted(samples)]

    def table(self, path: str | None, kind: str) -> list[Any]:
        """Records (analysis/records.py) of the table at *path* (none when the bundle has no such file), its rows
        checked by bundle/artifacts.py first. Fp16RangeRow for kind "fp16_ranges"."""
        if not self.bundle.has(path):
            return []
        rows = check_rows(kind, table_columns(kind), self.bundle.table(path, kind), self.bundle._where(path))
        return table_records(kind, rows)

    def _artifact_json(self, kind: str) -> Any:
        path = self.manifest["artifacts"].get(kind)
        if not self.bundle.has(path):
            return None
        return check_artifact(kind, self.bundle.json(path), self.bundle._where(path))

    def _table(self, comparison_id: str, kind: str) -> list[Any]:
        key = (comparison_id, kind)
        if key not in self._tables:
            entry = next((c for c in self.manifest["comparisons"] if c["id"] == comparison_id), None)
            self._tables[key] = self.table(entry["tables"].get(kind) if entry else None, kind)
        return self._tables[key]


def judged(summary: OutputSummary, reference: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]],
           judging: JudgingOptions, producers: Mapping[str, str], class_outputs: Iterable[str],
           inputs: Mapping[str, Sequence[int]]) -> OutputSummary:
    """*summary* with its kind and judgement (analysis/agreement.py): the one path from an output's numbers and its
    two stages' outputs (*reference*, *candidate*: one {output: array} per sample, the stored ones) to agree / degrade
    / collapse. Context.output_summaries reads it for the report; judge_outputs for outputs held in memory."""
    output = summary.output
    ref_values = [_numeric(s.get(output)) for s in reference]
    cand_values = [_numeric(s.get(output)) for s in candidate]
    kind = infer_kind(output, [r for r in ref_values if r is not None], declared=judging.output_kinds.get(output),
                      producer_op=producers.get(output), class_output=output in set(class_outputs),
                      inputs=inputs)
    gate = _score_gate(output, kind, reference, candidate, judging.threshold)
    if gate is not None:
        kind = dataclasses.replace(kind, gated_by=gate[0], reason=f"{kind.reason}, judged where {gate[0]} decides")
    decisions = (measure_decisions(kind, ref_values, cand_values, judging.threshold, gate and gate[1:])
                 if ref_values else None)
    first = next((r for r in ref_values if r is not None), None)
    # The collector measures top-1 on every output it took for class scores; where the kind says otherwise
    # (declared, or a handful of regressed values) an argmax decides nothing, and no line may quote it.
    top1 = summary.top1 if kind.kind == "class_scores" else None
    summary = dataclasses.replace(summary, kind=kind, elements=int(first.size) if first is not None else None,
                                  top1=top1)
    if (kind.kind in ("embedding", "index") or _one_value_a_slice(first, summary.slice_axis)
            or _picture_rows(kind, first, summary.slice_axis)):
        # A slice of an embedding is one dimension across samples: an L2-normalised vector's dimension 1069 at
        # cosine -0.83 is noise (a new user's EfficientWord-Net), and the vector's own cosine judges it. A slice of
        # integer labels has no scale to compare (a tagger's "worst slice 88: cosine 0.45"): exact matches judge it.
        # A flat vector's slice holds one value a sample whatever its kind (a new user's 512-d molecular fingerprint,
        # "degrades: slice 276 of axis 1 at cosine 0.95" on every healthy variant, its 5 worst dimensions 0.04% of
        # the energy): a dimension across samples, not a field of other units.
        summary = dataclasses.replace(summary, worst_slice=None, worst_slice_cosine=None, worst_slice_sqnr=None)
    centred = centred_error(ref_values, cand_values) if kind.kind == "tensor" and decisions is None else None
    return dataclasses.replace(summary, judgement=agreement.judge(summary, kind, decisions, centred))


def _picture_rows(kind: OutputKind, first: np.ndarray | None, axis: int | None) -> bool:
    """Whether a dense map's or image's slices are its rows or columns (the axis among its two largest past the
    batch): one picture's, whose scales differ with the content, not fields of other units. A new user's text
    detector's probability map, sliced along its height, read "worst slice 2: cosine 0.09" for a row of background
    (FP32 at most 0.0037, the decision threshold 0.2) beside a map IoU of 0.94. Its channels (a segmenter's classes)
    stay slices."""
    if kind.kind not in ("map", "image", "probabilities") or first is None or axis is None or first.ndim < 3:
        return False
    spatial = sorted(range(1, first.ndim), key=lambda i: (-first.shape[i], i))[:2]
    return axis in spatial and first.shape[axis] >= PICTURE_ROWS_MIN


PICTURE_ROWS_MIN = 8  # rows or columns a picture has at the least; fewer along an axis: fields or channels


def _score_gate(output: str, kind: OutputKind, reference: Sequence[Mapping[str, Any]],
                candidate: Sequence[Mapping[str, Any]], threshold: float) -> tuple[str, list, list] | None:
    """(gate name, its reference values, its candidate values) for an inferred index output with a score gate."""
    if kind.kind != "index" or kind.declared:
        return None
    name = score_gate(output, reference, threshold)
    if name is None:
        return None
    return name, [_numeric(s.get(name)) for s in reference], [_numeric(s.get(name)) for s in candidate]


def judge_outputs(reference: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]],
                  judging: JudgingOptions, producers: Mapping[str, str], class_outputs: Iterable[str],
                  inputs: Mapping[str, Sequence[int]], decision_samples: int | None = None) -> list[OutputSummary]:
    """Every output of two stages run on the same samples, held in memory (the what-if's trials, collect/whatif.py),
    summarised and judged as Context.output_summaries judges a bundle's: the rows collect writes
    (analysis/compare.py), the same summary, the same judged() on the first *decision_samples* samples (the ones
    collect --store-outputs keeps, which the report's decisions read; None: every sample)."""
    from qdqreport.analysis.compare import compare_stages

    result = compare_stages(reference, candidate, frozenset(class_outputs))
    rows: dict[str, list[dict[str, Any]]] = {}
    slices: dict[str, list[dict[str, Any]]] = {}
    for row in result.sample_rows:
        rows.setdefault(row["output"], []).append(row)
    for row in result.slice_rows:
        slices.setdefault(row["output"], []).append(row)
    stored = slice(None) if decision_samples is None else slice(0, decision_samples)
    return [judged(_summarise(name, output_rows, slices.get(name, [])), reference[stored], candidate[stored],
                   judging, producers, class_outputs, inputs) for name, output_rows in rows.items()]


def _one_value_a_slice(first: Any, axis: int | None) -> bool:
    """Whether each slice along *axis* of a stored sample *first* holds one value (the sample is a flat vector)."""
    shape = tuple(getattr(first, "shape", ()))
    if axis is None or not 0 <= axis < len(shape):
        return False
    return math.prod(shape) == shape[axis]


def _shape(value: Any) -> tuple[int, ...]:
    """A manifest tensor's shape as ints; () for anything else (a symbolic or missing dimension)."""
    if not isinstance(value, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in value):
        return ()
    return tuple(value)


def _guessed(summary: OutputSummary) -> bool:
    """Whether the output's kind, and so its decision measure, was inferred rather than declared (--output-kind)."""
    return summary.kind is not None and not summary.kind.declared


def _summarise(name: str, rows: list[dict[str, Any]], slices: list[dict[str, Any]]) -> OutputSummary:
    cosines = [_num(r["cosine"]) for r in rows]
    sqnrs = [_num(r["sqnr_db"]) for r in rows]
    worst = min(range(len(rows)), key=lambda i: (cosines[i], i))
    summary = OutputSummary(
        output=name, samples=len(rows),
        cosine_median=statistics.median(cosines), cosine_min=cosines[worst], worst_sample=rows[worst]["sample"],
        sqnr_median=statistics.median(sqnrs), sqnr_min=min(sqnrs),
        max_abs=max(_num(r["max_abs"], 0.0) for r in rows),
        rel_l2_median=statistics.median(_num(r["rel_l2"], math.inf) for r in rows),
        top1=_mean_or_none(r.get("top1_agree") for r in rows), top5=_mean_or_none(r.get("top5_agree") for r in rows),
        nonfinite_ref=sum(r["ref_nan"] + r["ref_inf"] for r in rows),
        nonfinite_cand=sum(r["cand_nan"] + r["cand_inf"] for r in rows),
    )
    worst_slice = agreement.worst_slice(slices)
    if worst_slice is None:
        return summary
    return dataclasses.replace(summary, worst_slice=worst_slice["index"],
                               worst_slice_cosine=agreement.cosine_value(worst_slice["cosine"]),
                               worst_slice_sqnr=_num(worst_slice["sqnr_db"]), slice_axis=worst_slice["axis"])


def _numeric(array: Any) -> Any:
    """A stored output judged by decisions only when it is real numbers (a bundle may hold any npy dtype:
    strings, complex or structured arrays are not outputs a decision can be read from)."""
    kind = getattr(getattr(array, "dtype", None), "kind", None)
    return array if kind is not None and kind in "biuf" else None


def _num(value: Any, nan_as: float = -1.0) -> float:
    """A metric as a float; a missing or NaN metric counts as the worst value (-1 for cosine: agreement.cosine_value)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return nan_as
    return float(value)


def _mean_or_none(values: Any) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
