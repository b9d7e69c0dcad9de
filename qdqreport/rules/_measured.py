"""How measured evidence re-ranks a heuristic layer finding (QR002, QR200, QR201): one place for the rule of thumb.

analysis/evidence.py decides what the what-if says (analysis/saturation.py what the unfused control
says: when the integer kernels explain the damage, the layer hypotheses are refuted the same way). When
the what-if refutes the layer hypotheses, the
finding drops to a warning with at most REFUTED_SCORE (below the calibration findings, which a
refuted what-if points to) and says which measurement refuted it; when it confirms them, the
finding keeps its severity and score and says so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from qdqreport.analysis import evidence
from qdqreport.analysis.agreement import COLLAPSE
from qdqreport.analysis.calibration_check import RangeVerdict, calibration_check
from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import wide_ranges_behind
from qdqreport.analysis.saturation import kernels_explain
from qdqreport.analysis.target import ONNXRUNTIME, TARGET_NAMES
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.findings import REFUTED_SCORE, Finding, Text
from qdqreport.rules._common import diverging_outputs, outputs_collapse, task_judgement


def impact_allows_error(ctx: Context) -> bool:
    """An inner tensor's collapse is an error only when an output collapses too (severity from impact, issue 10):
    when the outputs only degrade, the finding says where to look, as a warning. Unmeasured (no quantization
    comparison), the tensor's own judgement stands."""
    if ctx.comparison("quantization") is None:
        return True
    return outputs_collapse(ctx)


def layer_severity(ctx: Context, severe: bool) -> str:
    """A layer finding's severity from the outputs' impact (issue 10): an error only for a *severe* tensor when an
    output collapses too (impact_allows_error); info when the quantization comparison's outputs all agree (a healthy
    model's inner tensors are where to look if asked, never a reason to fail `--fail-on warning`); else a warning."""
    if severe and impact_allows_error(ctx):
        return "error"
    if ctx.comparison("quantization") is not None and not diverging_outputs(ctx, "quantization"):
        return "info"
    return "warning"


def reranked(ctx: Context, severity: str, score: float, nodes: Sequence[str] = (),
             controls_share: bool = False) -> tuple[str, float, tuple[Text, ...]]:
    """(severity, score, evidence lines) of a layer finding about *nodes* after the what-if's verdict, then under a
    calibration the bundle shows unlike the evaluation data (analysis/upstream.py) unless the what-if confirmed these
    nodes: every range is then set on the wrong data, and a layer's error is what that predicts (QR002 caps itself
    the same way; a new user's document unwarper calibrated on x255 pages had QR201 and QR200 errors ranked above the
    calibration finding's consequences, with the 12 suspects excluded measured worse).

    *controls_share*: the finding rests on Q/DQ values every control keeps (an output on an 8-bit grid,
    analysis/output_grid.py), so neither the unfused control nor the FP32-float one can refute it."""
    found = evidence.whatif(ctx)
    severity, score, lines = _after_whatif(ctx, found, severity, score, nodes, controls_share)
    remedy = evidence.remedy_score(found)
    if remedy is not None and nodes and not set(nodes) <= set(found.nodes) and score >= remedy:
        # Measured evidence outranks heuristics: the exclusion the what-if measured (QR203) comes first; this guess
        # names nodes outside it.
        score = max(0.0, round(remedy - 0.01, 4))
        lines = (*lines, Text("Ranked under the measured exclusion (QR203): it restores more than excluding the "
                              "nodes named here is known to."))
    confirmed = found is not None and found.verdict == evidence.CONFIRMS and set(nodes) & set(found.nodes)
    wide = wide_ranges_behind(ctx, found.nodes) if confirmed else []
    if wide and (severity == "error" or score > REFUTED_SCORE):
        # The exclusion that restores the outputs takes ranges calibration set a thousand times too wide out of INT8:
        # it confirms where those ranges hurt, and the over-wide ranges (QR006) are why.
        severity, score = capped(severity, score)
        return severity, score, (*lines, Text(
            f"Where, not why: {len(wide)} of the excluded nodes compute tensors whose calibrated ranges are a "
            f"thousand times wider than their evaluation values ({', '.join(wide[:3])}{' …' if len(wide) > 3 else ''}): "
            "the calibration data set them (QR006). Fix the calibration first; excluding the nodes hides it."))
    upstream = calibration_upstream(ctx)
    if upstream and not confirmed and (severity == "error" or score > REFUTED_SCORE):
        severity, score, under = _refuted(severity, score, f"the calibration data is unlike the evaluation data "
                                          f"({upstream}): every calibrated range is set on the wrong data, and this "
                                          "node's error is what that predicts. Fix the calibration first (QR003, "
                                          "QR006, QR009).")
        lines = (*lines, *under)
    return severity, score, lines


def _after_whatif(ctx: Context, found: evidence.WhatIfEvidence | None, severity: str, score: float,
                  nodes: Sequence[str] = (), controls_share: bool = False) -> tuple[str, float, tuple[Text, ...]]:
    """(severity, score, evidence lines) of a layer finding about *nodes* after the what-if's verdict *found*."""
    confirmed = found is not None and found.verdict == evidence.CONFIRMS
    kernels = kernels_explain(ctx)
    # A what-if that confirmed another exclusion does not shield these nodes from the control: its trials ran on the
    # same saturating kernels (a new user's EEG classifier: QR002 ranked first for TensorRT on that confirmation).
    if kernels is not None and not ((confirmed and set(nodes) & set(found.nodes)) or controls_share):
        won = "agrees with FP32" if kernels.control_agrees else f"wins back {kernels.recovered:.0%} of the loss"
        return _refuted(severity, score, f"the same QDQ model with Q/DQ fusion disabled {won} on output "
                        f"{kernels.output}, with this node quantized just the same. The damage is ONNX Runtime's "
                        "integer kernels on this CPU (QR012), not this INT8 node.")
    ranges = ranges_restore(ctx)
    if ranges is not None and not (confirmed and set(nodes) & set(found.nodes)):
        return _refuted(severity, score, f"{ranges.line}, with this node quantized just the same. The calibrated "
                        "ranges lose the accuracy, not this INT8 node (see the calibration finding).")
    control = evidence.float_part(ctx)
    if control is not None and control.verdict == evidence.IMPLICATES and not (confirmed or controls_share):
        return _refuted(severity, score, f"{control.line}. The damage is in the FP16 float part, not in this INT8 "
                        "node (QR011).")
    if found is None:
        return severity, score, ()
    if found.verdict == evidence.INCONCLUSIVE:
        return severity, score, (Text(f"Measured, inconclusive: {found.line}."),)
    if found.verdict == evidence.PARTIAL and nodes and found.excluded == 1 and found.nodes[0] in nodes:
        return severity, score, (Text(f"Measured: {found.line}. This node explains most of the damage."),)
    if found.verdict == evidence.PARTIAL and found.excluded == 1:
        # Measured evidence outranks heuristics: the node the measurement points at ranks above these guesses.
        return _refuted(severity, score, f"{found.line}. That node is not among those named here.")
    if found.verdict == evidence.REFUTES:
        return _refuted(severity, score, f"{found.line}. This node is not where the damage comes from; look at "
                        "calibration first (QR006, QR003, QR204).")
    if confirmed and nodes and not set(nodes) & set(found.nodes):
        # The what-if confirmed another set: these nodes were not what it measured (a new user read "Confirmed"
        # on QR002's Softmax nodes while the confirmed exclusion was a Conv elsewhere).
        return severity, score, (Text(f"Measured: {found.line}. None of the nodes named here is in that set: the "
                                      "measurement confirms another exclusion, not this one."),)
    if confirmed:
        return severity, score, (Text(f"Confirmed by measurement: {found.line}."),)
    if found.verdict == evidence.PARTIAL and nodes and not set(nodes) & set(found.nodes):
        # Most of the loss won back by a set without any of these nodes: the measurement points elsewhere (a new
        # user's GTCRN: 12 suspects won back 96%, the 8 sensitive nodes QR002 named as the most likely cause, none
        # of them among the 12, measured useless by hand: -18.09 -> -14.83 dB of -18.09).
        return _refuted(severity, score, f"{found.line}. None of the nodes named here is in that set.")
    return severity, score, (Text(f"Measured: {found.line}; the exclusion explains part of the damage only."),)


def under_calibration(ctx: Context, finding: Finding, consequence: str) -> Finding:
    """*finding* ranked under the calibration finding when the bundle proves the calibration data unlike the
    evaluation data (analysis/upstream.py): capped, with the line "The calibration data is unlike the evaluation
    data (<why>): <consequence>"; unchanged otherwise."""
    upstream = calibration_upstream(ctx)
    if not upstream:
        return finding
    severity, score = capped(finding.severity, finding.score)
    return replace(finding, severity=severity, score=score, evidence=(*finding.evidence, Text(
        f"The calibration data is unlike the evaluation data ({upstream}): {consequence}")))


def calibration_measured(ctx: Context, finding: Finding) -> Finding:
    """*finding*, a calibration cause (QR003, QR006, QR009), after the calibration check
    (analysis/calibration_check.py): when the evaluation inputs' own ranges do not restore the outputs, capped (a
    warning at most, scored at most REFUTED_SCORE) with that measurement: what the finding reads in the data stays
    true and its fix still stands, but it is not what loses the accuracy; when they restore them, with the confirming
    measurement; unchanged otherwise (no check in the bundle, or it measured neither way)."""
    verdict = calibration_check(ctx)
    if verdict is None or "root_cause" not in finding.tags:
        return finding
    if verdict.restores:
        # Measured evidence outranks guesses: the share the ranges win back is this cause's score, and a collapse
        # they win back is an error (a new user's text detector calibrated on noise ranked "15 per-tensor weights"
        # first, untested, over the calibration finding the check confirmed: map IoU 0 -> 0.83).
        # ... as is one where the ranges bring the output back to agreement while the user's decode of it collapses
        # (a new user's tagger on all-padding calibration: logits cosine 0.92 -> 1, 130 of 250 sentences changed).
        collapsed = verdict.gain.qdq.level == COLLAPSE or (verdict.gain.control.level == "agree"
                                                            and task_judgement(ctx, "quantization") == COLLAPSE)
        return replace(finding, severity="error" if collapsed else finding.severity,
                       score=max(finding.score, round(min(verdict.gain.recovered, CONFIRMED_SCORE), 4)),
                       evidence=(*finding.evidence, Text(
                           f"Confirmed by measurement: {verdict.line}: ranges set on data like the evaluation's "
                           "restore the outputs.")))
    severity, score, lines = _refuted(finding.severity, finding.score, (
        f"{verdict.line}. No calibration set is expected to restore the outputs: fixing the calibration alone will "
        "not. The loss is what the INT8 grid itself costs (see the other findings; collect --per-layer measures "
        "where)."))
    summary = (f"{finding.summary}; measured: even ranges from the evaluation inputs themselves leave output "
               f"{verdict.gain.output} {verdict.gain.control.headline}, so this is not what loses the accuracy")
    return replace(finding, severity=severity, score=score, summary=summary, evidence=(*finding.evidence, *lines))


def under_kernels(ctx: Context, finding: Finding) -> Finding:
    """*finding*, an exclusion the what-if measured (QR203), capped under the integer kernels when the saturation
    check's unfused run agrees with FP32 and the target is not ONNX Runtime: the what-if's trials ran on the kernels
    that saturate on this CPU, so what the exclusion wins back is theirs, which TensorRT does not share (a new user's
    EEG classifier: "excluding 1 node restores the outputs" led its --per-layer report for TensorRT, where the unfused
    model already changed 7 of 185 labels, the exclusion 6; reduce_range 7). Unchanged otherwise."""
    kernels = kernels_explain(ctx)
    if kernels is None or not kernels.control_agrees or ctx.target == ONNXRUNTIME:
        return finding
    severity, score = capped(finding.severity, finding.score)
    return replace(finding, severity=severity, score=score, evidence=(*finding.evidence, Text(
        f"Measured on ONNX Runtime's integer kernels, which saturate on this CPU: the same QDQ model with Q/DQ fusion "
        f"disabled agrees with FP32 on output {kernels.output} ({kernels.control.headline}; QR012). The exclusion wins "
        f"back what the kernels lose here; {TARGET_NAMES[ctx.target]} does not saturate, so it does not need it (on "
        "this CPU, QR012's reduce_range=True keeps every node in INT8).")))


CONFIRMED_SCORE = 0.95  # a cause the calibration check confirmed scores the share it wins back, up to this


def ranges_restore(ctx: Context) -> RangeVerdict | None:
    """The calibration check's verdict when the evaluation's own ranges restore the outputs, else None: every node
    and weight is quantized in its control just as in the QDQ model, so a guess about them is refuted by it."""
    verdict = calibration_check(ctx)
    return verdict if verdict is not None and verdict.restores else None


def under_ranges(ctx: Context, finding: Finding, kept: str) -> Finding:
    """*finding*, a guess about something the calibration check's control keeps as it is (*kept*: "these weights"),
    capped with the check's measurement when the evaluation's own ranges restore the outputs; unchanged otherwise."""
    ranges = ranges_restore(ctx)
    if ranges is None or finding.severity == "info":
        return finding
    severity, score, lines = _refuted(finding.severity, finding.score, f"{ranges.line}, with {kept} quantized just "
                                      "the same. The calibrated ranges lose the accuracy (see the calibration "
                                      "finding).")
    return replace(finding, severity=severity, score=score, evidence=(*finding.evidence, *lines))


def capped(severity: str, score: float) -> tuple[str, float]:
    """(severity, score) of a finding another cause explains: a warning at most, scored at most REFUTED_SCORE."""
    return "warning" if severity == "error" else severity, min(score, REFUTED_SCORE)


def _refuted(severity: str, score: float, why: str) -> tuple[str, float, tuple[Text, ...]]:
    """A warning at most, scored at most REFUTED_SCORE, with the measurement that refuted it."""
    return (*capped(severity, score), (Text(f"Refuted by measurement: {why}"),))


def rerank(ctx: Context, finding: Finding, nodes: Sequence[str] = (), controls_share: bool = False) -> Finding:
    """*finding* (about *nodes*) with the severity, score and evidence line the what-if's verdict gives it."""
    severity, score, lines = reranked(ctx, finding.severity, finding.score, nodes, controls_share)
    return replace(finding, severity=severity, score=score, evidence=(*finding.evidence, *lines))
