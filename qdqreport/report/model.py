"""ReportModel: everything a report shows, as plain frozen data built from a bundle and the rule results.

HTML, Markdown and findings.json are three views of this one object; templates and plots see
nothing else (no bundle, no Context), so what a report says is decided and tested here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from qdqreport import __version__
from qdqreport.analysis.calibration_check import calibration_check
from qdqreport.analysis.context import ComparisonInfo, Context, OutputSummary
from qdqreport.analysis.fp16 import control_purpose, is_control
from qdqreport.analysis.output_kinds import NOT_MIXED_SCALE
from qdqreport.analysis.saturation import (contributing_gain, explaining_gain, partly_explaining_gain,
                                           saturation_evidence)
from qdqreport.analysis.task import task_words
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import EngineResult
from qdqreport.findings import (REFUTED_SCORE, RUNTIME_ONLY_TAG, SEVERITIES, SEVERITY_RANK, SYMPTOM_TAG, Finding,
                                Metric, Series, Table, Text)
from qdqreport.report.fp16 import Fp16View, build_fp16
from qdqreport.report.layers import LayersView, build_layers
from qdqreport.report.engine import EngineView, build_engine
from qdqreport.report.sections import InputsView, PrecisionView, build_inputs, build_precision
from qdqreport.report.task import TaskView, build_task, task_agreement_of

from qdqreport.analysis.agreement import DEFAULT_THRESHOLD, LEVEL_RANK, default_threshold_decides, spatial_slices
from qdqreport.stage_names import stage_name
from qdqreport.wording import percent, ratio
# A report's size and time must not grow with the bundle (issue 11): 1,000 outputs show the worst 50.
OUTPUTS_LIMIT = 50  # outputs per comparison table; the bundle's samples table has them all
EVIDENCE_ROWS_LIMIT = 50  # rows of one finding's evidence table
DEPLOYMENT_TAG = "deployment"  # a finding about what only the deployment runtime rejects or changes (QR004)


@dataclass(frozen=True)
class Verdict:
    """The one sentence at the top of every report, and how bad it is ("ok" when nothing was found)."""

    text: str
    severity: str
    counts: dict[str, int]  # findings per severity


@dataclass(frozen=True)
class StageRow:
    id: str
    runtime: str
    precision: str
    status: str
    reason: str  # the error of a failed stage or why a stage was skipped
    seconds: float | None


@dataclass(frozen=True)
class OutputRow(OutputSummary):
    """One output of one comparison as the report shows it: the analysis's OutputSummary (judged,
    analysis/agreement.py) plus the slice note and the per-sample series the plots draw."""

    slice_note: str = ""
    # Recurrent state: each sample ran with the state the evaluation file holds (open loop); deployed, the model feeds
    # its own state back and an error can build up (a new user's GTCRN: -0.36 dB open loop, -0.97 dB closed loop).
    state_note: str = ""
    kind_note: str = ""  # where inference had to guess the kind: the other kind its values fit (_kind_note) ...
    kind_option: str = ""  # ... and the option that declares it
    sample_cosines: tuple[float | None, ...] = ()  # empty below 8 values per sample: the cosine is not shown
    sample_sqnr: tuple[float | None, ...] = ()

    @property
    def kind_name(self) -> str:
        """What the output is, as a word (analysis/output_kinds.py)."""
        return self.kind.kind if self.kind else "tensor"

    @property
    def judged(self) -> str:
        """The number that decided the judgement, as the verdict quotes it."""
        return self.judgement.headline if self.judgement else ""

    @property
    def judged_detail(self) -> str:
        """The full line of the decisions (near ties, stored samples), for the tables."""
        return (self.judgement.detail or self.judgement.headline) if self.judgement else ""

    @property
    def cosine_meaningful(self) -> bool:
        """False below 8 values per sample and for labels: the cosine is not shown."""
        return self.judgement is None or self.judgement.cosine_meaningful

    @property
    def errors_meaningful(self) -> bool:
        """False for labels (tag ids, CTC indices): SQNR, max |Δ| and relative L2 of class ids measure nothing."""
        return self.kind_name != "index"


@dataclass(frozen=True)
class ComparisonView:
    id: str
    purpose: str
    reference: str
    candidate: str
    outputs: tuple[OutputRow, ...]
    skipped: tuple[tuple[str, str], ...]  # (output, why it was not compared)
    task: tuple[float, int, int] | None = None  # decoded-result (agreement, disagreeing, samples): collect --postprocess
    outputs_total: int = 0  # outputs compared; `outputs` holds at most OUTPUTS_LIMIT of them (the worst)


@dataclass(frozen=True)
class FindingView:
    """A ranked finding with its evidence as typed dicts ({"type": "metric"|"table"|"text"|"series", ...})."""

    fingerprint: str
    rule_id: str
    title: str
    severity: str
    confidence: float
    score: float
    subject: str
    summary: str
    stage: str
    tags: tuple[str, ...]
    evidence: tuple[dict[str, Any], ...]
    fixes: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class FailureView:
    rule_id: str
    message: str


@dataclass(frozen=True)
class Provenance:
    schema_version: str
    qdqreport_version: str  # the renderer's version; the collector's is in `collector`
    collector: dict[str, Any]
    tools: dict[str, Any]
    host: dict[str, Any]
    models: tuple[dict[str, Any], ...]
    inputs: tuple[dict[str, Any], ...]
    created_at: str
    argv: tuple[str, ...]
    redacted: tuple[str, ...] = ()  # what --redact removed (manifest["redaction"]["removed"])


@dataclass(frozen=True)
class ReportModel:
    verdict: Verdict
    stages: tuple[StageRow, ...]
    comparisons: tuple[ComparisonView, ...]
    findings: tuple[FindingView, ...]
    failures: tuple[FailureView, ...]
    rules_run: tuple[str, ...]
    precision: PrecisionView | None
    inputs: InputsView | None
    provenance: Provenance
    engine: EngineView | None = None  # TensorRT engine section: report/engine.py
    layers: LayersView | None = None  # per-layer section (collect --per-layer): report/layers.py
    task: TaskView | None = None  # task-level section (collect --postprocess): report/task.py
    fp16: Fp16View | None = None  # FP16 check (QDQ float part in FP16): report/fp16.py
    target: str = "tensorrt"  # the deployment runtime the findings were judged for (analysis/target.py)
    threshold_note: str = ""  # an output judged at the default decision threshold does not agree: say it can be set

    @property
    def causes(self) -> tuple[FindingView, ...]:
        """The findings of the "Findings" section: root causes, symptoms and the rest, in rank order."""
        return tuple(f for f in self.findings if DEPLOYMENT_TAG not in f.tags)

    @property
    def deployment(self) -> tuple[FindingView, ...]:
        """Findings about what only TensorRT rejects or changes: their own section, after the root causes."""
        return tuple(f for f in self.findings if DEPLOYMENT_TAG in f.tags)

    def to_dict(self) -> dict[str, Any]:
        """The model as strict JSON data: tuples become lists, NaN and infinities become None."""
        return jsonable(asdict(self))


def build_report(bundle: Bundle, result: EngineResult, ctx: Context | None = None) -> ReportModel:
    """Assemble the report of *bundle* from the rule results; pass *ctx* to reuse a Context's cached tables."""
    ctx = ctx if ctx is not None else Context(bundle)
    comparisons = tuple(_comparison_view(ctx, info) for info in ctx.comparisons)
    stages = _stage_rows(ctx)
    task = build_task(ctx)
    return ReportModel(
        verdict=build_verdict(result.findings, comparisons, stages, task is not None and task.scored,
                              _calibration_refuted(ctx)),
        stages=stages,
        comparisons=comparisons,
        findings=tuple(_finding_view(f) for f in result.findings),
        failures=tuple(FailureView(f.rule_id, f.message) for f in result.failures),
        rules_run=tuple(result.rules_run),
        precision=build_precision(ctx),
        inputs=build_inputs(ctx),
        provenance=_provenance(ctx.manifest),
        engine=build_engine(ctx),
        layers=build_layers(ctx),
        task=task,
        fp16=build_fp16(ctx),
        target=ctx.target,
        threshold_note=_threshold_note(ctx, comparisons),
    )


def _threshold_note(ctx: Context, comparisons: tuple[ComparisonView, ...]) -> str:
    judgements = [o.judgement for c in comparisons for o in c.outputs]
    if not default_threshold_decides(ctx.judging, judgements):
        return ""
    return (f"Thresholded outputs were judged at the default decision threshold {DEFAULT_THRESHOLD:g}. If the "
            "application decides at another probability (a face detector's heatmap at 0.2, say), pass "
            "--decision-threshold P to qdqreport report: flips, map IoU and kept detections are measured there.")


# --- verdict ------------------------------------------------------------------------------
FIX_TAG = "fix"  # a measured remedy (QR203), not a cause: the verdict calls it what it is


def build_verdict(findings: list[Finding], comparisons: tuple[ComparisonView, ...],
                  stages: tuple[StageRow, ...] = (), task_scored: bool = False, not_calibration: str = "") -> Verdict:
    """Lead with the output symptom (the first finding tagged SYMPTOM_TAG: QR001's measured divergence), the user's
    own task agreement of that stage pair when --postprocess measured it (*task_scored*: the script's compare() gave
    the scores), and its most likely root cause; otherwise say what agrees. Chosen by tags, never by rule id, so a
    plug-in symptom leads too. *not_calibration*: the calibration check's measurement when it refutes every
    calibration cause (_calibration_refuted), said where no cause is established."""
    counts = {name: sum(f.severity == name for f in findings) for name in SEVERITIES}
    severity = min((f.severity for f in findings), key=SEVERITY_RANK.__getitem__, default="ok")
    symptom = next((f for f in findings if SYMPTOM_TAG in f.tags), None)
    if symptom is not None:
        text = _symptom_sentence(symptom, findings, comparisons, task_scored, not_calibration) \
            + _deployment_only_error(findings)
    else:
        text = _agreement_sentence(comparisons, stages)
        # Raw outputs can agree while a cause shows elsewhere (e.g. decoded task results, QR010): name it.
        worst = min(findings, key=lambda f: f.rank_key(), default=None)
        if worst is not None and worst.severity in ("error", "warning"):
            # A deployment finding is no cause of anything ONNX Runtime measured: name it as what it is.
            but = "; but deployment to TensorRT: " if DEPLOYMENT_TAG in worst.tags else "; but: "
            text += (f"{but}{worst.title.rstrip('.')}" if comparisons and any(c.outputs for c in comparisons)
                     else f", so output agreement is unmeasured; the most severe finding: {worst.title.rstrip('.')}")
            # Red beside "Outputs agree" for what only TensorRT refuses: say how an ONNX Runtime deployment reads it
            # (a new user's healthy wake-word embedder under quantize_static's defaults: 0 of 56 decisions changed).
            if DEPLOYMENT_TAG in worst.tags and worst.severity == "error":
                text += " (deploying with ONNX Runtime: qdqreport report --target onnxruntime)"
    return Verdict(text, severity, counts)


def _deployment_only_error(findings: list[Finding]) -> str:
    """Where the report's errors are all deployment findings (what only TensorRT rejects) and ONNX Runtime measured no
    more than a degradation, the clause that says whence the red: a new user's key CNN quantized with quantize_static
    for ONNX Runtime read "🔴 Quantization degrades the task's decisions" under the default target, its 0 of 128 top-1
    changes ranked below TensorRT's refusal of its zero-points."""
    errors = [f for f in findings if f.severity == "error"]
    if not errors or not all(DEPLOYMENT_TAG in f.tags for f in errors):
        return ""
    return (f"; an error for TensorRT only: {errors[0].title.rstrip('.')} (deploying with ONNX Runtime: "
            "qdqreport report --target onnxruntime)")


def _symptom_sentence(symptom: Finding, findings: list[Finding], comparisons: tuple[ComparisonView, ...],
                      task_scored: bool = False, not_calibration: str = "") -> str:
    text = symptom.title.rstrip(".")
    comparison = _comparison_for(symptom.stage, comparisons)
    worst = _worst_output(comparison)
    if worst is not None and comparison.task is not None:
        # The user's own decode (collect --postprocess) is the decision the application reads: it leads, and the raw
        # output moved most follows (a new user's rembg read only one of U2-Net-p's 7 maps, and the headline quoted
        # another's IoU first).
        text += f": {task_words(*comparison.task, task_scored)}; raw outputs: {_moved_metric(worst)}"
    elif worst is not None:
        text += f": {_moved_metric(worst)}"
    # Never a deployment finding: what only TensorRT rejects cannot cause a divergence ONNX Runtime measured. A
    # measured fix ranked above every cause (QR203: re-running without some nodes restored the outputs) leads instead.
    cause = next((f for f in findings if ("root_cause" in f.tags or FIX_TAG in f.tags) and DEPLOYMENT_TAG not in f.tags),
                 None)
    if cause is not None and "root_cause" not in cause.tags:
        measured = cause.title.rstrip(".")
        return text + "; measured: " + (measured[len("Measured: "):] if measured.startswith("Measured: ") else measured)
    if cause is None:
        first = findings[0] if findings else None
        if first is not None and DEPLOYMENT_TAG in first.tags and first.severity == "error":
            # Nothing explains what ONNX Runtime measured; what TensorRT will reject is the first thing to fix.
            return text + f"; no root cause identified; before deploying to TensorRT: {first.title.rstrip('.')}"
        return text + "; no root cause identified, see the findings below"
    if RUNTIME_ONLY_TAG in cause.tags:
        # Measured whole by its control, and the deployment target does not share it: the cause of what ONNX Runtime
        # showed, not a weak suspect (the thirty-first part's VAD: S8S8 saturation, unfused 0 of 768 flips).
        return text + f"; measured cause, on this runtime only: {cause.title.rstrip('.')}"
    if cause.severity != "error" and cause.score <= REFUTED_SCORE:
        # Every cause was measured down (a refuted exclusion, kernels that explain a side output only, nodes the error
        # only passes through) or is weak by itself: naming it "most likely" would claim what the findings deny.
        spread = next((f for f in findings if {"measured", "root_cause"} <= set(f.tags)), None)
        if spread is not None:
            # The what-if measured that no exclusion restores the outputs: that, and its advice on the recipe as a
            # whole, is the finding, not a layer it refuted (a new user's copy-detection model: "weak suspect: Error
            # is born at ..." where 16-bit activations, which that advice names, restored it).
            return text + f"; no cause established: {spread.title.rstrip('.')} (measured; see its fix)"
        if not_calibration:
            # A refuted calibration finding named "weak suspect" would send the user re-calibrating for nothing (a new
            # user's copy-detection model calibrated on noise, re-calibrated on real photos: cosine 0.79 -> 0.69).
            return text + f"; no cause established; measured: {not_calibration} (see the findings)"
        return text + f"; no cause established; weak suspect: {cause.title.rstrip('.')} (see the findings)"
    untested = f" (untested: {GUESSES[cause.rule_id]})" if _untested(cause) else ""
    return text + f"; most likely cause{untested}: {cause.title.rstrip('.')}"


def _calibration_refuted(ctx: Context) -> str:
    """The calibration check's measurement in a clause when even the evaluation's own ranges leave the outputs as
    damaged (analysis/calibration_check.py), else ""."""
    verdict = calibration_check(ctx)
    if verdict is None or verdict.restores:
        return ""
    # The control ran on the same fused kernels: where the saturation check measured them costing part of the loss,
    # the grid is not all of it (a new user's face detector, TensorRT-style recipe: the unfused run won back 74%).
    evidence = saturation_evidence(ctx)
    kernels = any(gain(evidence) is not None for gain in (explaining_gain, partly_explaining_gain, contributing_gain))
    return (f"ranges from the evaluation inputs themselves leave output {verdict.gain.output} at "
            f"{verdict.gain.control.headline}, so no calibration set restores it: the loss is the INT8 grid's own"
            + (" and, on this CPU, ONNX Runtime's integer kernels' (QR012 measures their share)" if kernels else ""))


# The guesses read from the graph and tensor errors, and what tests each. The verdict says when no run has tested one:
# a new user's GTCRN with quantize_static's defaults read "most likely cause: 16 sensitive nodes quantized to INT8",
# whose exclusion, run by hand, won back 0.36 of 7.67 dB lost; a new user's CenterNet, "16 per-tensor weights crush
# small output channels", whose per-channel fix measured worse on that CPU (F1 0.879 -> 0.812).
_BY_PER_LAYER = "collect --per-layer measures what excluding its nodes wins back"
GUESSES = {"QR002": _BY_PER_LAYER, "QR200": _BY_PER_LAYER, "QR201": _BY_PER_LAYER,
           "QR013": "its fix, re-quantized and collected again, measures it"}
TESTED = ("Measured", "Confirmed", "Refuted", "Ranked under the measured")


def _untested(cause: Finding) -> bool:
    """Whether *cause* is a guess (GUESSES) that carries no measurement of its own (no what-if, no local
    recomputation, no control)."""
    return cause.rule_id in GUESSES and not any(
        isinstance(getattr(e, "text", None), str) and e.text.startswith(TESTED) for e in cause.evidence)


def _moved_metric(row: OutputRow) -> str:
    """The number that decided the judgement (analysis/agreement.py): a verdict of "degrades" quotes the
    decisions, IoU or cosine that moved, never a cosine that rounds to 1.0000 or the cosine of one value."""
    return f"{row.judged} (output {row.output})"


def _agreement_sentence(comparisons: tuple[ComparisonView, ...], stages: tuple[StageRow, ...]) -> str:
    failed = [stage_name(s.id) for s in stages if s.status == "failed"]
    tail = f"; failed stages: {', '.join(failed)}" if failed else ""
    # The checks' controls (FP16, saturation) are measurements, not stages of the pipeline: never the verdict's subject.
    candidates = [(row, comp) for comp in comparisons if not is_control(comp) for row in comp.outputs]
    if not candidates:
        return "No stage outputs could be compared" + tail
    row, comp = max(candidates, key=lambda pair: _badness(pair[0], pair[1].id))
    where = f"{stage_name(comp.candidate)} vs {stage_name(comp.reference)}, output {row.output}"
    if row.cosine_meaningful and row.kind_name in ("tensor", "embedding", "state"):
        text = f"Outputs agree at every compared stage: worst median cosine {_short_cosine(row.cosine_median)} ({where})"
    else:
        text = f"Outputs agree at every compared stage; the least: {row.judged} ({where})"
    if row.top1 is not None and "top-1" not in text:
        text += f", top-1 agreement {percent(row.top1)}"
    return text + tail


def _badness(row: OutputRow, comparison_id: str = "") -> tuple:
    """Worst output first, as analysis/agreement.py judged it: level, then the lowest cosine; state last."""
    return (not row.internal, LEVEL_RANK.get(row.level, 0), -row.cosine_median, comparison_id, row.output)


def _comparison_for(stage: str, comparisons: tuple[ComparisonView, ...]) -> ComparisonView | None:
    for match in (lambda c: stage in (c.id, c.purpose, c.candidate), lambda c: c.purpose == "quantization"):
        found = next((c for c in comparisons if match(c)), None)
        if found is not None:
            return found
    return comparisons[0] if comparisons else None


def _worst_output(comparison: ComparisonView | None) -> OutputRow | None:
    if comparison is None or not comparison.outputs:
        return None
    return max(comparison.outputs, key=_badness)


def _short_cosine(value: float) -> str:
    # 0.31 needs two digits; 0.9991 vs 0.9999 is the whole story near 1.
    return f"{value:.2f}" if value < 0.99 else f"{value:.4f}"


# --- stages and comparisons -----------------------------------------------------------------
def _stage_rows(ctx: Context) -> tuple[StageRow, ...]:
    seconds = {s["id"]: s.get("seconds") for s in ctx.manifest["stages"]}
    return tuple(StageRow(s.id, s.runtime, s.precision, s.status, _stage_reason(s.error, s.details), seconds.get(s.id))
                 for s in ctx.stages)


def _stage_reason(error: str | None, details: dict[str, Any]) -> str:
    if error:
        return error
    return str(details.get("reason") or details.get("skip_reason") or "")


def _comparison_view(ctx: Context, info: ComparisonInfo) -> ComparisonView:
    summaries = ctx.output_summaries(info.id)
    shown = _worst_outputs(summaries, OUTPUTS_LIMIT)
    outputs = tuple(_output_row(summary, info, ctx.sample_rows_of(info.id, summary.output)) for summary in shown)
    # The FP16 check's control is stored with purpose "other"; the report names what it is for.
    purpose = control_purpose(info) if is_control(info) else info.purpose
    return ComparisonView(info.id, purpose, info.reference, info.candidate, outputs,
                          tuple(sorted(info.skipped.items())[:OUTPUTS_LIMIT]),
                          task_agreement_of(ctx, info.reference, info.candidate), len(summaries))


def _worst_outputs(summaries: list[OutputSummary], limit: int) -> list[OutputSummary]:
    """At most *limit* outputs, the worst by median cosine, in bundle order: a report's size must not grow with them."""
    if len(summaries) <= limit:
        return summaries
    keep = set(sorted(range(len(summaries)), key=lambda i: (summaries[i].cosine_median, i))[:limit])
    return [s for i, s in enumerate(summaries) if i in keep]


def _output_row(summary: OutputSummary, info: ComparisonInfo, rows: list[dict[str, Any]]) -> OutputRow:
    kind_note = _kind_note(summary)
    return OutputRow(
        **{f.name: getattr(summary, f.name) for f in fields(OutputSummary)},
        slice_note=_slice_note(summary, info.sliced.get(summary.output)),
        state_note=STATE_NOTE if summary.kind is not None and summary.kind.internal else "",
        kind_note=kind_note,
        kind_option=f"--output-kind {summary.output}={summary.kind.alternative}" if kind_note else "",
        # Fewer than 8 values per sample: the cosine is 1 whatever happens, so it is neither plotted nor quoted.
        sample_cosines=tuple(_finite(r["cosine"]) for r in rows)
        if summary.judgement is None or summary.judgement.cosine_meaningful else (),
        sample_sqnr=tuple(_finite(r["sqnr_db"]) for r in rows),
    )


STATE_NOTE = ("recurrent state, never decisive: each sample ran with the state the input file holds; deployed, the "
              "model feeds its own state back and its error can build up over a sequence, which only whole sequences "
              "show (collect --postprocess with a decode that runs them)")


# What a kind the user declares is judged by, for the note that offers it (analysis/agreement.py decides).
_ALTERNATIVE_WORDS = {"class_scores": ("class logits or scores", "by top-1 (the class they decide)")}


def _kind_note(summary: OutputSummary) -> str:
    """Where the inferred kind was a guess between two (OutputKind.alternative), the option that settles it: a binary
    classifier's 2 logits judged as a scalar by relative error never show a flipped class."""
    kind = summary.kind
    if kind is None or kind.declared or not kind.alternative:
        return ""
    what, measure = _ALTERNATIVE_WORDS.get(kind.alternative, (kind.alternative.replace("_", " "), "as such"))
    return (f"inferred as {kind.kind.replace('_', ' ')} ({kind.reason}); if these are {what}, judge them {measure} "
            "with")


def _slice_note(summary: OutputSummary, sliced: dict[str, Any] | None) -> str:
    kind = summary.kind.kind if summary.kind is not None else None
    if not sliced or kind == "index" or spatial_slices(summary):
        return ""  # labels have no scale: slices of ids compared by cosine say nothing
    if kind in NOT_MIXED_SCALE and summary.worst_slice is None:
        # Class scores judged whole, by their decisions: their slices are no fields of other units, and the scales of
        # classes far from the decision say nothing (a new user's 384-bin pitch softmax: "scales differ 4.06x10^38x").
        return ""
    note = f"compared per slice along axis {sliced.get('axis')}: scales differ {ratio(float(sliced.get('spread', 0)))}"
    if summary.kind is not None and summary.kind.kind == "fields":
        # The fields' own measures judged it (analysis/decisions._field_grid): a slice's cosine would contradict them.
        return note + "; judged field by field, each by its kind (how judged), not by the slices' cosine"
    if summary.worst_slice is not None and summary.worst_slice_cosine is not None:
        note += f"; worst slice {summary.worst_slice}: cosine {_short_cosine(summary.worst_slice_cosine)}"
    else:  # one quantity across its scales, an embedding or a flat vector (analysis/agreement.py, context.py)
        note += "; judged as a whole"
    return note


# --- findings -------------------------------------------------------------------------------
def _finding_view(finding: Finding) -> FindingView:
    return FindingView(
        fingerprint=finding.fingerprint, rule_id=finding.rule_id, title=finding.title, severity=finding.severity,
        confidence=finding.confidence, score=finding.score, subject=finding.subject, summary=finding.summary,
        stage=finding.stage, tags=tuple(finding.tags), evidence=tuple(evidence_dict(e) for e in finding.evidence),
        fixes=tuple({"action": fix.action, "command": fix.command} for fix in finding.fixes),
    )


def evidence_dict(evidence: Any) -> dict[str, Any]:
    """One Evidence object as a typed dict; an unknown kind degrades to text rather than failing the report.

    Tables keep their first EVIDENCE_ROWS_LIMIT rows (rules list the worst first) and say how many were cut.
    """
    if isinstance(evidence, Table) and len(evidence.rows) > EVIDENCE_ROWS_LIMIT:
        cut = f"showing {EVIDENCE_ROWS_LIMIT} of {len(evidence.rows):,} rows"
        evidence = Table(evidence.title, evidence.columns, tuple(evidence.rows[:EVIDENCE_ROWS_LIMIT]),
                         f"{evidence.note}; {cut}" if evidence.note else cut)
    if isinstance(evidence, Metric):
        return {"type": "metric", "name": evidence.name, "value": cell(evidence.value), "unit": evidence.unit,
                "threshold": evidence.threshold}
    if isinstance(evidence, Table):
        return {"type": "table", "title": evidence.title, "columns": [str(c) for c in evidence.columns],
                "rows": [[cell(v) for v in row] for row in evidence.rows], "note": evidence.note}
    if isinstance(evidence, Series):
        return {"type": "series", "title": evidence.title, "kind": evidence.kind,
                "labels": [str(label) for label in evidence.labels], "values": [float(v) for v in evidence.values],
                "y_label": evidence.y_label, "threshold": evidence.threshold}
    if isinstance(evidence, Text):
        return {"type": "text", "text": evidence.text}
    return {"type": "text", "text": str(evidence)}


def cell(value: Any) -> Any:
    """A table cell or metric value as a JSON scalar (NumPy scalars unwrapped, anything else as text)."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


# --- provenance -----------------------------------------------------------------------------
def _provenance(manifest: dict[str, Any]) -> Provenance:
    models = tuple({"role": role, **ref} for role, ref in sorted(manifest["models"].items()) if isinstance(ref, dict))
    inputs = tuple({"role": role, "source": ref.get("source", ""), "kind": ref.get("kind", ""),
                    "samples": ref.get("samples"), "sha256": ref.get("sha256"),
                    "tensors": ", ".join(_tensor_text(t) for t in ref.get("tensors", []))}
                   for role, ref in sorted(manifest["inputs"].items()) if isinstance(ref, dict))
    collector = manifest.get("collector", {})
    return Provenance(
        schema_version=manifest["schema_version"], qdqreport_version=__version__,
        collector={k: v for k, v in collector.items() if k != "argv"}, tools=dict(sorted(manifest["tools"].items())),
        host=dict(sorted(manifest["host"].items())), models=models, inputs=inputs,
        created_at=manifest["created_at"], argv=tuple(str(a) for a in collector.get("argv", [])),
        redacted=_redacted(manifest),
    )


def _redacted(manifest: dict[str, Any]) -> tuple[str, ...]:
    redaction = manifest.get("redaction")
    removed = redaction.get("removed") if isinstance(redaction, dict) else None
    return tuple(str(item) for item in removed) if isinstance(removed, list) else ()


def _tensor_text(tensor: dict[str, Any]) -> str:
    shape = ", ".join(str(d) for d in tensor.get("shape", []))
    return f"{tensor.get('name')} {tensor.get('dtype')}[{shape}]"


# --- JSON -----------------------------------------------------------------------------------
def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def jsonable(value: Any) -> Any:
    """Strict-JSON data: containers to dicts/lists, non-finite floats to None."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return cell(value)
