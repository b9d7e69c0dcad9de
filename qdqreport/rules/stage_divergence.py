"""QR001: the first pipeline comparison whose outputs stop agreeing."""

from __future__ import annotations


from typing import Any, Iterator

from qdqreport.analysis.agreement import (AGREE, CENTRED_COLLAPSE, COLLAPSE, COLLAPSED, COSINE_OK, DECISION_LEVELS,
                                         LEVEL_RANK, SLICE_COSINE_OK, TASK_OK, TOP1_OK, collapses, comparable_value,
                                         cosine_of, diverges, spatial_slices)
from qdqreport.analysis.context import ComparisonInfo, Context, OutputSummary
from qdqreport.analysis.layers import TENSOR_COSINE_BAD, passed_on
from qdqreport.analysis.quantizer import nodes_by_output
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.findings import Finding, Fix, Metric, Series, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import (Change, exclusion, exclusion_fix, per_layer_command, quantizer_name, recollect_command,
                             requantize_command, requantized_file, resolve_exclusions, trtexec_fixes)
from qdqreport.rules._common import comparison_label, judged_summaries, ordered_comparisons, rounded
from qdqreport.testing.recipes import (CLS_OUTPUT, class_logits, classifier_graph, classifier_run, detector_run,
                                       near_threshold_task)

from qdqreport.stage_names import stage_name
from qdqreport.wording import percent, percent_value, plural, ratio
# A symptom locates the damage but does not explain it: it ranks below a root cause of the
# same severity and confidence, and the matrix is exact, so the confidence is high.
SYMPTOM_SCORE = 0.3
SERIES_LIMIT = 8  # per-sample cosine series in the evidence (the report's plots draw as many lines)
MEASURED_CONFIDENCE = 0.95

_VERB = {"export": "Export", "quantization": "Quantization", "fp16": "The TensorRT FP16 build",
         "deployment": "The TensorRT INT8 build"}


def _quantization_collapse(b):
    logits = class_logits(40, seed=3)
    b.manifest["models"]["fp32"] = {"path": "/data/models/cls_fp32.onnx", "sha256": "0" * 64}
    b.artifact("precision_summary", classifier_graph(head_precision="int8"))
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=1.5, shrink=0.3, seed=4))


def _hidden_detector_scores(b):
    b.stage("ort_fp32", detector_run(6)).stage("ort_qdq", detector_run(6, box_noise=0.5, scores_lost=True))


def _engine_drifts(b):
    # ORT QDQ is faithful; the engine built without precision constraints drifts.
    logits = class_logits(40, seed=9)
    b.manifest["models"]["qdq"] = {"path": "out/cls_int8.onnx", "sha256": "2" * 64}
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=10))
    b.stage("trt_int8", classifier_run(logits, noise=0.6, seed=11))


def _healthy_pipeline(b):
    # Realistic INT8 noise on every stage: cosine ~0.9999, no near-tie flips.
    logits = class_logits(40, seed=5)
    b.class_outputs(CLS_OUTPUT).stage("reference", classifier_run(logits, noise=1e-4, seed=6))
    b.stage("ort_fp32", classifier_run(logits)).stage("ort_qdq", classifier_run(logits, noise=0.01, seed=7))
    b.stage("trt_int8", classifier_run(logits, noise=0.015, seed=8))


@rule(id="QR001", slug="stage-divergence", title="Outputs diverge at a pipeline stage",
      examples=[Fires("quantization collapses a classifier", _quantization_collapse),
                Fires("the raw outputs agree, the user's decode decides otherwise", near_threshold_task),
                Fires("detector scores lost inside a fine whole-tensor cosine", _hidden_detector_scores),
                Fires("TensorRT INT8 engine drifts from the QDQ model", _engine_drifts),
                Quiet("every stage within INT8 noise", _healthy_pipeline)])
def stage_divergence(ctx: Context) -> Iterator[Finding]:
    """The first comparison (export, quantization, FP16, deployment) whose outputs diverge.

    Whether an output diverges is decided once, by analysis/agreement.py, from what decides the
    task: top-1 agreement of class scores, threshold flips of probabilities, the IoU of binarised
    maps, detections kept, exact matches of indices; the median cosine (below 0.99), the worst
    signal-carrying slice (below 0.98) and top-1 (below 0.99) only where no decision is defined.
    Recurrent state never diverges on its own. With `collect --postprocess`, the user's own
    decode judges the stage pair too (analysis/agreement.decode_level: its agreement, or mean
    compare() score, below 0.99 degrades, below 0.9 collapses; where every raw output agrees,
    decisions that flip at less than the pair's median raw difference degrade but never
    collapse: the decode's thin margins): raw outputs that agree while the decode decides
    otherwise are the task's loss, and this rule names it. It is an error when the output collapses
    (decisions change materially; cosine, top-1 or a slice below 0.9 where there are no
    decisions), else a warning. When no comparison diverges this rule stays silent and the
    renderer states "all stages agree" from the stage matrix it draws itself.

    Why it matters: every comparison isolates one step, so the first diverging one says where
    to look: export, the Q/DQ model in ONNX Runtime, or the TensorRT build. Fixing a later
    step first wastes time because the earlier damage is inherited.

    Fix: depends on the stage: re-export (export), follow the ranked root causes and exclude
    the sensitive nodes (quantization), keep FP32 where FP16 overflows (fp16), or rebuild the
    engine with obeyed precision constraints (deployment). For quantization, when the default
    collect's sensitive-node pass measured the nodes that produce the outputs adding little themselves
    (analysis/layers.passed_on: local cosine 0.99 or more) and no per-layer pass ran, excluding the
    output nodes is not expected to help: the first step is the same collect with --per-layer. Where a
    producer was not measured (a DBNet's DB step after its measured Sigmoids), the first step excludes
    the producers. Where no producer is quantized, the fix is to work through the ranked causes, and, when no
    per-layer pass ran and the calibration data shows nothing unlike the evaluation data, the per-layer collect as a
    second step (the thirty-seventh part's terrain generator: its healthy recipe collapses and no rule names a cause).
    """
    diverging = [(c, [s for s in judged_summaries(ctx, c.id) if diverges(s)]) for c in ordered_comparisons(ctx)]
    diverging = [(c, outs) for c, outs in diverging if outs or ctx.task_level(c) != AGREE]
    if not diverging:
        return
    first, outputs = diverging[0]
    if not outputs:  # the raw outputs agree; the user's own decode does not (collect --postprocess)
        yield _task_divergence(ctx, first, diverging)
        return
    worst = max(outputs, key=_badness)
    severe = any(collapses(s) for s in outputs) or ctx.task_level(first) == COLLAPSE
    # One per-sample series per diverging output, the worst SERIES_LIMIT of them: a model with 1,000 outputs
    # must not make a report of 1,000 plots.
    worst_first = {id(s) for s in sorted(outputs, key=lambda s: (s.cosine_median, s.output))[:SERIES_LIMIT]}
    plotted = [s for s in outputs if id(s) in worst_first and (s.judgement is None or s.judgement.cosine_meaningful)]
    evidence = [*_task_metric(ctx, first), *_metrics(worst), _stage_matrix(ctx),
                *(_per_sample(ctx, first, s) for s in plotted),
                *([Text(f"Per-sample cosine shown for the {SERIES_LIMIT} worst of {len(outputs):,} diverging outputs.")]
                  if len(outputs) > SERIES_LIMIT else []),
                *_sliced_notes(first, outputs[:SERIES_LIMIT])]
    if len(diverging) > 1:
        later = "; ".join(f"{c.purpose} ({comparison_label(c)})" for c, _ in diverging[1:])
        evidence.append(Text(f"Later comparisons also diverge, each on its own: {later}."))
    fixes = [fix for c, outs in diverging for fix in _fixes(ctx, c, outs)]
    title = f"{_VERB.get(first.purpose, first.purpose)} {'collapses' if severe else 'degrades'} the outputs"
    yield stage_divergence.finding(
        title=title, severity="error" if severe else "warning",
        confidence=MEASURED_CONFIDENCE, score=SYMPTOM_SCORE, subject=first.id, stage=first.id,
        summary=f"{title} ({comparison_label(first)}): {_headline(worst)}", evidence=tuple(evidence),
        fixes=tuple(fixes), tags=("symptom",))


def _task_divergence(ctx: Context, first: ComparisonInfo, diverging: list) -> Finding:
    """The stage pair whose raw outputs agree while the user's decode decides otherwise: the task's loss is the
    symptom (QR010 says why the decode amplifies the raw differences)."""
    task = ctx.task_of_pair(first.reference, first.candidate)
    level = ctx.task_level(first)
    title = f"{_VERB.get(first.purpose, first.purpose)} {'collapses' if level == COLLAPSE else 'degrades'} the task's decisions"
    words = (f"{task['disagreeing']:,} of {task['samples']:,} samples decoded differently "
             f"(task agreement {percent(float(task['agreement']))})")
    later = [f"{c.purpose} ({comparison_label(c)})" for c, _ in diverging[1:]]
    return stage_divergence.finding(
        title=title, severity="error" if level == COLLAPSE else "warning",
        confidence=MEASURED_CONFIDENCE, score=SYMPTOM_SCORE, subject=first.id, stage=first.id,
        summary=f"{title} ({comparison_label(first)}): {words}, by the --postprocess decode; the raw outputs agree",
        evidence=(Metric("task agreement (the --postprocess decode)", percent_value(float(task["agreement"])), "%",
                         threshold=f"< {TASK_OK:.0%} degrades, < {COLLAPSED:.0%} collapses"),
                  _stage_matrix(ctx),
                  Text("Every raw output agrees by its own measure (the stage table's 'judged' column: a few changed "
                       "values among many count as agreeing), but the decode given to collect --postprocess decides "
                       "differently on these samples: that is the accuracy the quantization costs the task. Where the "
                       "report has a QR010 finding, it says whether the decode decides on margins thinner than INT8 "
                       "noise."),
                  *([Text(f"Later comparisons also diverge, each on its own: {'; '.join(later)}.")] if later else [])),
        fixes=tuple(_fixes(ctx, first, [])), tags=("symptom",))


def _badness(s: OutputSummary) -> tuple:
    """Worst output first: the judged level (analysis/agreement.py), then the lowest deciding value."""
    level = LEVEL_RANK[s.level] if s.level else 0
    judged = s.judgement is not None and s.judgement.value is not None
    value = comparable_value(s.judgement.measure, s.judgement.value) if judged else s.cosine_median
    return (level, -value, s.output)


def _headline(s: OutputSummary) -> str:
    """The number that decided the judgement: a decision share, an IoU, or a cosine (never the cosine of a
    few values, which is 1 whatever happens)."""
    if s.judgement is not None:
        return f"{s.judgement.headline} (output {s.output})"
    parts = [f"cosine {s.cosine_median:.2f}" if s.cosine_median < COSINE_OK else f"cosine {s.cosine_median:.4f}"]
    if s.worst_slice_cosine is not None and s.worst_slice_cosine < SLICE_COSINE_OK:
        parts.append(f"slice {s.worst_slice} of axis {s.slice_axis} at cosine {s.worst_slice_cosine:.2f}")
    if s.top1 is not None:
        parts.append(f"top-1 agreement {percent(s.top1)}")
    return ", ".join(parts) + f" (output {s.output})"


def _metrics(s: OutputSummary) -> list[Metric]:
    judged = s.judgement
    decided = ([_decision_metric(judged.measure, judged.value)]
               if judged is not None and judged.value is not None and judged.measure in DECISION_LEVELS else
               [Metric("error against the outputs' spread across samples", rounded(judged.value, 3),
                       threshold=f">= {CENTRED_COLLAPSE:g} collapses")]
               if judged is not None and judged.measure == "error against the spread" else [])
    # The threshold beside the number that decided; a cosine that did not decide is context, with none beside it (a new
    # user read "median cosine 0.9979 | < 0.99" on a finding its worst slice had raised).
    cosine = ([Metric("median cosine", rounded(s.cosine_median),
                      threshold=f"< {COSINE_OK}" if judged is None or judged.measure == "cosine" else "")]
              if judged is None or judged.cosine_meaningful else [])
    return [*decided, *cosine,
            *([Metric("top-1 agreement (raw)", percent_value(s.top1), "%", threshold=f"< {TOP1_OK:.0%}")]
              if s.top1 is not None and not (judged and judged.measure == "top-1 agreement") else []),
            *([Metric("worst slice cosine", rounded(s.worst_slice_cosine), threshold=f"< {SLICE_COSINE_OK}")]
              if s.worst_slice_cosine is not None and (judged is None or judged.measure not in DECISION_LEVELS) else [])]


def _task_metric(ctx: Context, comparison: ComparisonInfo) -> list[Metric]:
    """The user's decode of the pair (collect --postprocess), first: where it collapses, it decided the verdict (a new
    user's UVDoc: the finding quoted cosine 0.981 alone, which its own table calls a degradation, not the decode's
    2.7% agreement)."""
    task = ctx.task_of_pair(comparison.reference, comparison.candidate)
    if task is None:
        return []
    return [Metric("task agreement (your --postprocess decode)", percent_value(task["agreement"]), "%",
                   threshold=f"< {TASK_OK:.0%} degrades, < {COLLAPSED:.0%} collapses")]


def _decision_metric(measure: str, value: float) -> Metric:
    """The deciding share as a percentage (as every share in the report), an IoU as a number, a PSNR in dB."""
    agree, collapse = DECISION_LEVELS[measure]
    if measure == "map IoU":
        return Metric(measure, rounded(value), threshold=f"< {agree:g} degrades, < {collapse:g} collapses")
    if measure == "PSNR":
        return Metric(measure, rounded(value, 1), "dB", threshold=f"< {agree:g} dB degrades, < {collapse:g} dB collapses")
    return Metric(measure, percent_value(value), "%", threshold=f"< {agree:.0%} degrades, < {collapse:.0%} collapses")


def _share(value: float | None) -> str | None:
    return None if value is None else percent(value)


def _stage_matrix(ctx: Context) -> Table:
    # Shares as % and stages by name, as in every other table of the report.
    # The judgement first; the comparisons section of the report holds every other metric (SQNR, max |Δ|, ...).
    rows = [(c.purpose, stage_name(c.reference), stage_name(c.candidate), s.output, *_judged_cells(s),
             rounded(s.cosine_median) if s.judgement is None or s.judgement.cosine_meaningful else None,
             _share(s.top1), rounded(s.worst_slice_cosine))
            for c in ordered_comparisons(ctx) for s in judged_summaries(ctx, c.id)]
    columns = ("purpose", "reference", "candidate", "output", "judged", "by", "cosine median", "top-1, ties counted",
               "worst slice cosine")
    if ctx.task is None:
        return Table("Stage matrix", columns, tuple(rows))
    # With collect --postprocess, the decoded results' agreement of the same stage pair (QR010 reads it).
    task = {(stage_name(c["reference"]), stage_name(c["candidate"])): _share(c["agreement"]) for c in ctx.task["comparisons"]}
    return Table("Stage matrix", (*columns, "task agreement"), tuple((*r, task.get((r[1], r[2]))) for r in rows))


def _judged_cells(s: OutputSummary) -> tuple[str | None, str | None]:
    if s.judgement is None:
        return None, None
    return s.judgement.level + (" (internal)" if s.judgement.internal else ""), s.judgement.headline


def _per_sample(ctx: Context, comparison: ComparisonInfo, s: OutputSummary) -> Series:
    rows = ctx.sample_rows_of(comparison.id, s.output)
    return Series(f"Per-sample cosine of {s.output} ({comparison_label(comparison)})", "points",
                  tuple(str(r.sample) for r in rows),
                  tuple(cosine_of(r) for r in rows),
                  y_label="cosine", threshold=COSINE_OK)


def _sliced_notes(comparison: ComparisonInfo, outputs: list[OutputSummary]) -> list[Text]:
    return [Text(f"output {s.output} mixes scales (spread {ratio(comparison.sliced[s.output]['spread'])}): "
                 f"compared per slice along axis {comparison.sliced[s.output]['axis']}"
                 + ("; judged field by field, each by its kind" if s.kind is not None and s.kind.kind == "fields" else ""))
            for s in outputs if s.output in comparison.sliced and not spatial_slices(s)]


def _fixes(ctx: Context, comparison: ComparisonInfo, outputs: list[OutputSummary]) -> list[Fix]:
    if comparison.purpose == "export":
        return [Fix("Re-export with a current opset (17 or newer), the same dynamic axes as the framework model, "
                    "and no custom ops; then compare the framework and ONNX Runtime FP32 outputs on the same tensors")]
    if comparison.purpose == "quantization":
        producers = _output_producers(ctx, outputs)
        passing = _passed_on(ctx, comparison)
        # The measured nodes speak for the outputs only where they are the outputs' producers: a new user's DBNet
        # had its Sigmoids measured (local cosine 0.9993) and the DB step after them, 1 / (1 + exp(...)) in INT8,
        # unmeasured; keeping that head float removed every Inf (map IoU 0.37 -> 0.79) where this said it would not.
        measured = {r.node for r in passing or ()}
        if producers and passing is not None and not ctx.layers_summary and _only_measured(ctx, producers, measured):
            # Measured: the sensitive nodes before the outputs only pass the error on (a new user's U2-Net-p: the
            # first step excluded output Sigmoids and Convs that add nothing themselves, local cosine 0.9999).
            return [Fix(f"Find where the error is born first: the {plural(len(passing), 'sensitive node')} measured "
                        f"before the outputs add little error themselves (recomputed from FP32 inputs, local cosine "
                        f"{min(r.local_cosine for r in passing):.4f} or more), so excluding the nodes that produce the "
                        "outputs is not expected to help. Collect again with --per-layer, then work through the "
                        "ranked root causes", per_layer_command(ctx))]
        if producers:
            return [exclusion_fix(ctx, "Work through the ranked root causes of this report; as a first step keep the "
                                  "nodes producing the diverging outputs out of INT8", exclusion(producers))]
        # No generic re-quantize command here: it would repeat whatever calibration caused the collapse.
        # "The commands above" was false where QR001 ranks first and the only command is a deployment finding's below
        # it (a new user's tagger): the words name no place.
        fixes = [Fix(f"Fix the root causes ranked in this report and re-quantize (each {quantizer_name(ctx)} command "
                     f"in this report writes {requantized_file(ctx)}), then collect again with that model to confirm "
                     "the outputs agree", recollect_command(ctx))]
        if not ctx.layers_summary and not calibration_upstream(ctx):
            # Part 37's terrain generator: its healthy recipe collapses (PSNR 11 dB), no rule names a cause, and the
            # only fix told the user to fix causes the report does not have. Calibration inputs unlike the
            # evaluation inputs (analysis/upstream.py) are a cause the report names: no detour then.
            fixes.append(Fix("Where the report establishes no cause, or fixing it leaves the outputs diverging, find "
                             "where the error is born: collect again with --per-layer", per_layer_command(ctx)))
        return fixes
    if comparison.purpose == "fp16":
        return [Fix("FP16 overflows or underflows somewhere: build an FP32 engine to confirm, and quantize with "
                    "the float part kept in FP32", requantize_command(ctx, Change(float_part_fp32=True)))]
    return list(trtexec_fixes(ctx))


def _only_measured(ctx: Context, producers: list[str], measured: set[str]) -> bool:
    """Whether the producers, or the nodes their exclusion acts on, are all among the *measured* sensitive nodes. As
    the command would act: a producer quantize_static cannot exclude (a Div after an INT8 Gemm) is freed by excluding
    the node whose output it reads (a new user's copy-detection model: the exclusion named the measured Gemm, local
    cosine 0.9993, and changed nothing, as QR002 beside it said)."""
    if set(producers) <= measured:
        return True
    acted_on = set(resolve_exclusions(ctx, Change(exclude_nodes=tuple(producers))).change.exclude_nodes)
    return bool(acted_on) and acted_on <= measured


def _passed_on(ctx: Context, comparison: ComparisonInfo) -> list[Any] | None:
    """The sensitive-node rows whose bad output only passes on an error born upstream (analysis/layers.passed_on), or
    None."""
    return passed_on(ctx.tensor_rows(comparison.id), TENSOR_COSINE_BAD)


# Ops that pick an index from their input: kept float, they read the same INT8-quantized input (quantize_static
# quantizes the output of the node before them) and pick the same index. A new user's tagger: excluding its /ArgMax,
# the only node the first step named, changed no sentence. The node whose output they read is freed instead, where
# the precision summary shows it (a shape-only op between them hides it: then the step names nothing).
_PICKERS = frozenset({"ArgMax", "ArgMin"})


def _output_producers(ctx: Context, outputs: list[OutputSummary]) -> list[str]:
    """Quantized nodes that feed the diverging graph outputs, from the precision summary; for an ArgMax or ArgMin, the
    quantized node whose output it reads."""
    names = {s.output for s in outputs}
    nodes = (ctx.precision or {}).get("nodes", [])
    by_output = nodes_by_output(nodes)
    read = {c: pair.get("tensor") for pair in (ctx.precision or {}).get("qdq") or []
            if pair.get("kind") == "activation" for c in pair.get("consumers") or ()}
    found = []
    for node in nodes:
        if not (node.get("activation_quantized") and (names & set(node.get("outputs", ())) or node.get("feeds_graph_output"))):
            continue
        if node["op_type"] not in _PICKERS:
            found.append(node["name"])
            continue
        before = by_output.get(read.get(node["name"]))
        if before is not None and before.get("activation_quantized"):
            found.append(before["name"])
    return list(dict.fromkeys(found))
