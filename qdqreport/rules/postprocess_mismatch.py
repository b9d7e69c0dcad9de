"""QR010: raw outputs agree, decoded task results do not (post-processing mismatch, cause 8)."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.context import ComparisonInfo, Context
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.agreement import COLLAPSE, COSINE_OK, TASK_OK, TOP1_OK, diverges, task_level
from qdqreport.fixes import Change, exclusion, exclusion_fix, made_by_ort, recorded_ort_options, requantize_command
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.rules._common import comparison_label, judged_summaries, ordered_comparisons, rounded, stage_label
from qdqreport.rules._measured import REFUTED_SCORE
from qdqreport.testing.recipes import CLS_OUTPUT, accept_decode, class_logits, classifier_run, near_threshold_task

# Decoded results "agree" from TASK_OK and collapse below COLLAPSED, one sample in ten decided differently
# (analysis/agreement.task_level owns both).
AMPLIFIED_WARNING = 0.95  # decode-amplified flips below this share of agreement are a warning, else info
# A decision "flips inside INT8 noise" when it changes after the FP32 outputs move less than this many times
# the run's median raw relative L2. A flip that needs more came from that sample's own large raw error
# (a per-sample quantization outlier), which the decode did not amplify.
MARGIN_FACTOR = 3.0
APP = "task_results"
ROWS_SHOWN = 12


# --- examples: a 2-class classifier with a thresholded decision, as rapidocr decodes PaddleOCR's cls ---
def _decode_double_softmax(outputs):
    probs = np.asarray(outputs[CLS_OUTPUT], dtype=np.float64).reshape(-1)
    return accept_decode({CLS_OUTPUT: np.exp(probs) / np.exp(probs).sum()})


def _healthy_run(b, seed=21):
    logits = class_logits(32, seed=seed)
    qdq = classifier_run(logits, noise=0.01, seed=seed + 1)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits)).stage("ort_qdq", qdq)
    return qdq


def _app_double_softmax(b):
    qdq = _healthy_run(b)
    b.task(accept_decode, [_decode_double_softmax(out) for out in qdq])


def _app_same_decode(b):
    qdq = _healthy_run(b)
    b.task(accept_decode, [accept_decode(out) for out in qdq])


def _one_sample_outlier(b):
    # One sample's raw error is far beyond the run's (its logit gap shrinks by 0.5): its decision flips,
    # but only after a raw change much larger than INT8 noise elsewhere: a per-sample error, not the decode.
    logits = [np.array([[0.0, 6.0 + i % 3]]) for i in range(31)] + [np.array([[0.0, np.log(9.0) + 0.3]])]
    qdq = [{CLS_OUTPUT: out[CLS_OUTPUT]} for out in classifier_run(logits[:31], noise=0.005, seed=7)]
    qdq.append(classifier_run([logits[31] - np.array([[0.0, 0.5]])])[0])
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits)).stage("ort_qdq", qdq).task(accept_decode)


def _raw_collapse(b):
    logits = class_logits(32, seed=23)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=1.5, shrink=0.3, seed=24)).task(accept_decode)


@rule(id="QR010", slug="postprocess-mismatch", title="Raw outputs agree, decoded results do not",
      examples=[Fires("the application applies softmax a second time", _app_double_softmax),
                Fires("threshold decisions flip inside INT8 noise", near_threshold_task),
                Quiet("the application decodes like the baseline", _app_same_decode),
                Quiet("raw outputs collapse: a quantization cause, not the decode", _raw_collapse),
                Quiet("one decision flips from one sample's large raw error", _one_sample_outlier)])
def postprocess_mismatch(ctx: Context) -> Iterator[Finding]:
    """Decoded task results disagree although the raw outputs they were decoded from agree.

    Needs `collect --postprocess FILE.py[:func]` (the decode step) and, for the first variant,
    `--task-results FILE` (what the application decoded). Two variants, two fixes:

    (a) The application's task results differ from the decode of the very same raw outputs
    (`--task-results-stage`, default ort_qdq): the deployment's post-processing is not the
    baseline's (another threshold, a second softmax, another label order or NMS). Both sides
    read identical raw outputs, so no quantization cause can explain it. Error when fewer than
    90% of the samples agree.

    (b) FP32 and quantized outputs agree by every raw measure (cosine >= 0.99, top-1 >= 0.99)
    and yet more samples decode differently than raw top-1 classes change: the decode turns
    small differences into different decisions (a threshold or argmax with thin margins). The
    evidence is each flipped sample's margin: how far (relative L2) its FP32 outputs had to move
    towards the quantized ones for the decision to change, next to the run's typical INT8
    difference. That difference is only the ordinary noise of INT8 when the calibration is sound:
    where the calibration inputs differ from the evaluation's (noise, another preprocessing, a
    coverage gap: analysis/upstream.py), (b) is a suspect behind that cause, at most a warning
    scored under the calibration findings. An error only when the task collapses beyond the
    flips at margins thinner than the run's median difference (analysis/agreement.decode_level).

    Why it matters: task metrics (accuracy, mAP, rotated crops) fall while every tensor
    comparison looks healthy, so the search goes to quantization and finds nothing. Raw cosine
    and top-1 being healthy is what separates this from a quantization cause: when the raw
    outputs diverge, QR001 and the quantization rules apply and this rule stays quiet on that pair.

    Fix: (a) run the baseline's decode in the application (same activation, thresholds, label
    list, resize/NMS parameters), ideally the same code; collect again with the application's new
    results. (b) judge decisions near a threshold on task metrics over many samples, re-tune the
    threshold on the quantized model, or reduce the noise at the head (keep it out of INT8, or QAT).
    """
    if ctx.task is None:
        return
    app = ctx.task_comparison("postprocess")
    if app is not None and app["agreement"] < TASK_OK:
        yield _application_differs(ctx, app)
    for comparison in ordered_comparisons(ctx):
        task = ctx.task_of_pair(comparison.reference, comparison.candidate)
        if task is not None and task["agreement"] < TASK_OK:
            finding = _decode_amplifies(ctx, comparison, task)
            if finding is not None:
                yield finding


# --- (a) the application decodes differently ---------------------------------------------------
def _application_differs(ctx: Context, app: dict[str, Any]) -> Finding:
    stage = app["reference"]
    rows = [r for r in ctx.task_rows(app["id"]) if r.agreement < 1.0]
    fields = Counter(f for r in rows for f in r.differing.split(";") if f)
    ours, theirs = ctx.task_results(stage), ctx.task_results(APP)
    agreement = app["agreement"]
    severe = task_level(agreement) == COLLAPSE
    source = (ctx.task.get("task_results") or {}).get("source", "--task-results")
    decode = _decode_name(ctx)
    field_rows = tuple((name, count, _summary(ours, name), _summary(theirs, name)) for name, count in fields.most_common())
    evidence = [
        Metric("task agreement, application vs decode of the same outputs", rounded(agreement), threshold=f"< {TASK_OK}"),
        Metric("samples decoded differently", f"{app['disagreeing']} of {app['samples']}"),
        Table(f"Fields that differ ({decode} on {stage_label(stage)} outputs vs {source})",
              ("field", "samples differing", f"{decode}", "application"), field_rows),
        *_never_reached(ours, theirs, fields),
        Table("Samples decoded differently", ("sample", "fields", f"{decode}", "application"),
              tuple((r.sample, r.differing.replace(";", ", "), r.reference, r.candidate)
                    for r in rows[:ROWS_SHOWN]), note=_cut_note(len(rows))),
        Text(f"Both sides decoded the same raw outputs ({stage_label(stage)}), so quantization cannot explain the "
             f"difference: it is in the post-processing.{_raw_context(ctx, stage)} If the application ran another "
             "runtime than this stage, collect with --task-results-stage naming the matching one."),
    ]
    return postprocess_mismatch.finding(
        title="The application's post-processing differs from the baseline decode",
        severity="error" if severe else "warning", confidence=0.9, score=0.9, subject=f"{APP} vs {stage}",
        stage=app["id"], tags=("root_cause",),
        summary=f"{app['disagreeing']} of {app['samples']} samples decode differently in the application ({source}) "
                f"than with {decode} on the same {stage_label(stage)} outputs (agreement {agreement:.0%}); "
                f"fields: {', '.join(fields) or 'none'}",
        evidence=tuple(evidence),
        fixes=(Fix(f"Use the baseline's decode in the application: the same activation (no second softmax or "
                   f"sigmoid), thresholds, label list and NMS/resize parameters as {decode}; ideally import that code. "
                   "Then collect again with the application's new results to confirm agreement",
                   _recollect(ctx)),))


def _never_reached(ours: list[dict], theirs: list[dict], fields: Counter) -> list[Text]:
    """Fields whose value never varies in the application although it does in the decode (a threshold never met)."""
    notes = []
    for name in fields:
        mine, app = _values(ours, name), _values(theirs, name)
        if len(set(mine)) > 1 and len(set(app)) == 1:
            notes.append(Text(f"'{name}' is always {app[0]!r} in the application but takes {len(set(mine))} values "
                              f"in the baseline decode: a decision the application can never make."))
        elif mine and app and all(isinstance(v, float) for v in mine + app) and max(app) < max(mine) - 0.05:
            notes.append(Text(f"'{name}' never exceeds {max(app):.4g} in the application but reaches {max(mine):.4g} "
                              "in the baseline decode: the application transforms the outputs differently, and a "
                              f"threshold above {max(app):.4g} can never pass."))
    return notes


# --- (b) the decode amplifies small differences ------------------------------------------------
def _decode_amplifies(ctx: Context, comparison: ComparisonInfo, task: dict[str, Any]) -> Finding | None:
    summaries = judged_summaries(ctx, comparison.id)
    if not summaries or any(diverges(s) for s in summaries):
        return None  # raw outputs diverge: a quantization (or export/build) cause, QR001 and its peers
    rows = ctx.task_rows(task["id"])
    noise = [r.raw_rel_l2 for r in rows if r.raw_rel_l2 is not None]
    if not noise:
        return None  # no float outputs to measure a margin on
    typical = statistics.median(noise)
    flipped = [r for r in rows if r.agreement < 1.0 and r.flip_rel_l2 is not None
               and r.flip_rel_l2 <= MARGIN_FACTOR * typical]
    raw_changes = _raw_top1_changes(ctx, comparison)
    if len(flipped) <= raw_changes:
        return None  # no more thin-margin decisions change than raw top-1 classes: nothing is amplified
    outliers = sum(r.agreement < 1.0 for r in rows) - len(flipped)
    margins = [r.flip_rel_l2 for r in flipped]
    worst_cos = min(s.cosine_median for s in summaries)
    top1 = [s.top1 for s in summaries if s.top1 is not None]
    decode = _decode_name(ctx)
    agreement = task["agreement"]
    evidence = [
        Metric("task agreement", rounded(agreement), threshold=f"< {TASK_OK}"),
        Metric("samples whose decision flips inside INT8 noise", f"{len(flipped)} of {len(rows)}"),
        Metric("raw cosine (median, worst output)", rounded(worst_cos), threshold=f">= {COSINE_OK} (healthy)"),
        *([Metric("raw top-1 agreement", rounded(min(top1)), threshold=f">= {TOP1_OK} (healthy)")] if top1 else []),
        Metric("samples whose raw top-1 class changes", raw_changes),
        Metric("decision flips at raw rel. L2 (median of flipped samples)", rounded(statistics.median(margins), 6),
               threshold=f"<= {MARGIN_FACTOR:g} x the run's median"),
        Metric("raw rel. L2 of the run (median, the INT8 noise)", rounded(typical, 6)),
        Table(f"Samples decoded differently ({comparison_label(comparison)})",
              ("sample", "fields", stage_label(comparison.reference), stage_label(comparison.candidate),
               "raw rel. L2", "changes at rel. L2"),
              tuple((r.sample, r.differing.replace(";", ", "), r.reference, r.candidate,
                     rounded(r.raw_rel_l2, 6), rounded(r.flip_rel_l2, 6)) for r in flipped[:ROWS_SHOWN]),
              note=_cut_note(len(flipped))),
        Text(f"The raw outputs agree by every raw measure (cosine {worst_cos:.4f}"
             f"{', top-1 ' + format(min(top1), '.0%') if top1 else ''}), yet the quantization's ordinary INT8 noise "
             f"changes {len(flipped)} decision(s)"
             + (f" where only {raw_changes} raw top-1 class(es) change" if comparison.class_outputs else "")
             + ". Each flipped sample's decision changes once its FP32 outputs move by the "
             "'changes at' relative L2 towards the quantized ones, within the run's ordinary INT8 difference: "
             + (f"{decode}'s compare() scores below 1 changes thinner than INT8 noise (its tolerance is tighter than "
                "the run's ordinary difference)." if _scored(ctx) else
                f"{decode} decides on margins thinner than INT8 noise (a threshold or a near-tie argmax).")
             + (f" {outliers} other sample(s) decode differently only after a raw change beyond {MARGIN_FACTOR:g}x the "
                "median: those are per-sample quantization errors, not counted here." if outliers else "")),
    ]
    # The run's "ordinary" INT8 difference is only ordinary when the calibration is: calibrated on noise or on inputs
    # preprocessed otherwise (analysis/upstream.py), every range carries that, and the margin test measures the fault
    # against itself (a new user's random calibration: this finding ranked above QR009's certain one).
    upstream = calibration_upstream(ctx)
    if upstream:
        evidence.append(Text(f"The calibration inputs differ from the evaluation inputs ({upstream}): this run's INT8 "
                             "difference is that calibration's, not the ordinary noise of a good one. Fix the calibration "
                             "first and collect again; what still flips then is the decode's margin."))
    collapsed = ctx.task_level(comparison) == COLLAPSE
    severity = "error" if collapsed else "warning" if agreement < AMPLIFIED_WARNING else "info"
    return postprocess_mismatch.finding(
        title="The decode turns small output differences into different decisions",
        # Severity from the task's impact (Context.task_level): these flips are the user's accuracy loss, an error only
        # where they collapse the task beyond the flips at margins thinner than the run's median difference;
        # under a calibration cause, a suspect behind it (at most a warning, scored under it).
        severity="warning" if upstream and severity == "error" else severity,
        confidence=0.45 if upstream else 0.75, score=REFUTED_SCORE if upstream else 0.6,
        subject=f"decode on {comparison.id}", stage=comparison.id, tags=("root_cause",),
        summary=f"{len(flipped)} of {len(rows)} samples decide differently on thin margins ({comparison_label(comparison)}, task "
                f"agreement {agreement:.0%}) while the raw outputs agree (cosine {worst_cos:.4f})"
                + (f"; {raw_changes} raw top-1 change(s)" if comparison.class_outputs else ""),
        evidence=tuple(evidence),
        fixes=(Fix("Set compare()'s tolerance from the task's own error (the accuracy the application needs), not "
                   "from exact agreement: per-sample scores of 1 cannot hold where the tolerance is thinner than INT8 "
                   "noise") if _scored(ctx) else
               Fix("Judge decisions near the decode's threshold on task metrics over many samples, or re-tune the "
                   "threshold on the quantized model's outputs; exact per-sample agreement cannot hold where margins "
                   "are thinner than INT8 noise"),
               *_noise_fix(ctx), *_head_fix(ctx)))


def _noise_fix(ctx: Context) -> tuple[Fix, ...]:
    """Less INT8 noise everywhere, where the model's weights are per tensor: a decision at a fixed threshold (a face
    mesh's presence logit at MediaPipe's 0.5) has no tolerance to set, and its head kept float changed nothing (7 of
    88 samples); per-channel weights took it to 3, 16-bit activations to 1."""
    if not made_by_ort(ctx) or recorded_ort_options(ctx)["per_channel"]:
        return ()
    return (Fix("To flip fewer of these samples, lower the INT8 noise the thin margins meet: one scale per output "
                "channel of each weight (or, measured the same way, 16-bit activations); then count the samples "
                "decoded differently again", requantize_command(ctx, Change(per_channel_weights=True))),)


def _raw_top1_changes(ctx: Context, comparison: ComparisonInfo) -> int:
    """Samples on which some class output's top-1 differs between the two stages."""
    changed = {r.sample for r in ctx.sample_rows(comparison.id)
               if r.output in comparison.class_outputs and r.top1_agree is not None and r.top1_agree < 1.0}
    return len(changed)


def _head_fix(ctx: Context) -> tuple[Fix, ...]:
    """Keeping the quantized nodes that feed the outputs in float, when there are any."""
    nodes = (ctx.precision or {}).get("nodes", [])
    head = [n["name"] for n in nodes if n.get("feeds_graph_output") and n.get("activation_quantized")]
    if not head:
        return ()
    return (exclusion_fix(ctx, "To shrink the noise at the decision itself, keep the quantized nodes feeding the "
                          "outputs out of INT8 (or use QAT)", exclusion(head)),)


# --- shared helpers --------------------------------------------------------------------------
def _scored(ctx: Context) -> bool:
    """Whether the decode script's compare() scored the samples (a tolerance on values, say), not the generic rule's
    decisions: a regression's shifts in ppm have no threshold to re-tune (session 32's caustic-nmr)."""
    return bool(((ctx.task or {}).get("postprocess") or {}).get("compare"))


def _decode_name(ctx: Context) -> str:
    post = ctx.task.get("postprocess", {})
    name = str(post.get("source", "decode")).replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{post.get('function', 'decode')}"


def _values(results: list[dict], name: str) -> list[Any]:
    return [r[name].item() for r in results if name in r and np.ndim(r[name]) == 0]


def _summary(results: list[dict], name: str) -> str:
    values = _values(results, name)
    if not values:
        return "arrays" if any(name in r for r in results) else "absent"
    if all(isinstance(v, float) for v in values):
        return f"{min(values):.4g} … {max(values):.4g}"
    counts = Counter(values)
    return ", ".join(f"{value!r}×{count}" for value, count in counts.most_common(4))


def _raw_context(ctx: Context, stage: str) -> str:
    comparison = next((c for c in ctx.comparisons if c.candidate == stage), None)
    summaries = judged_summaries(ctx, comparison.id) if comparison else []
    if not summaries:
        return ""
    worst = min(summaries, key=lambda s: s.cosine_median)
    top1 = f", top-1 {worst.top1:.0%}" if worst.top1 is not None else ""
    return (f" For reference, {comparison_label(comparison)} raw outputs: cosine {worst.cosine_median:.4f}{top1}"
            f" ({'diverging: see the other findings' if diverges(worst) else 'healthy'}).")


def _recollect(ctx: Context) -> str:
    import shlex

    return shlex.join(ctx.manifest["collector"].get("argv", []))


def _cut_note(count: int) -> str:
    return f"first {ROWS_SHOWN} of {count}" if count > ROWS_SHOWN else ""
