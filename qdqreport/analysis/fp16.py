"""Reading the FP16 check from a bundle: the FP32-float control and the FP16 range table.

The collector (collect/fp16_check.py) writes stage `ort_qdq_fp32` (the QDQ model with its float
part in FP32, Q/DQ untouched), its comparison with `ort_fp32`, `quant/fp16_check.json` and the
`fp16_ranges` table. This module turns them into the numbers rules and the report read; it needs
neither onnx nor onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qdqreport.analysis.agreement import COLLAPSE, COLLAPSED, DEGRADE, LEVEL_RANK
from qdqreport.analysis.calibration_check import EVAL_RANGES_STAGE
from qdqreport.analysis.saturation import UNFUSED_STAGE

if TYPE_CHECKING:
    from qdqreport.analysis.context import ComparisonInfo, Context, OutputSummary

CONTROL_STAGE = "ort_qdq_fp32"
FP16_MAX = 65504.0  # largest finite float16
FLUSHED_SHARE = 0.5  # a constant counts as flushed when at least this share of its values became 0


@dataclass(frozen=True)
class OutputGain:
    """One output's agreement with FP32 in the QDQ model and in the FP32-float control."""

    output: str
    qdq: float  # median per-sample cosine against ORT FP32 (1 = agrees)
    control: float
    qdq_nonfinite: int
    control_nonfinite: int
    qdq_top1: float | None = None  # top-1 agreement, for class outputs (shown, not judged: see agreement())
    control_top1: float | None = None
    # The report's judgement of each run (analysis/agreement.py: decisions where they decide, on the same stored
    # samples), as "level: headline"; None for an output judged by nothing.
    qdq_level: str | None = None
    control_level: str | None = None
    qdq_headline: str = ""
    control_headline: str = ""
    qdq_measure: str = ""  # what decided each judgement (analysis/agreement.py: "cosine", "top-1 agreement", ...)
    control_measure: str = ""
    cosine_meaningful: bool = True  # False below 8 values a sample (agreement.Judgement): the cosines are not shown

    @property
    def decided(self) -> bool:
        """The QDQ model's decisions degrade or collapse and the control's are judged better: the FP16 float part
        changes decisions the cosine median does not show (a new user's open_nsfw: 5 of 128 wide-margin flips in the
        QDQ model, none in the control, both at median cosine 1.0000 over a 2-class softmax)."""
        return (self.qdq_level in (DEGRADE, COLLAPSE) and self.control_level is not None
                and LEVEL_RANK[self.control_level] < LEVEL_RANK[self.qdq_level])

    @property
    def recovered(self) -> float:
        """Share of the QDQ model's disagreement that the FP32 float part removes (0..1)."""
        lost = 1.0 - max(self.qdq, 0.0)
        return 0.0 if lost <= 1e-9 else min(max((max(self.control, 0.0) - max(self.qdq, 0.0)) / lost, 0.0), 1.0)


@dataclass
class Fp16Evidence:
    summary: dict[str, Any]
    control_status: str | None  # ok / failed / None when the bundle has no control stage
    control_error: str | None
    gains: list[OutputGain] = field(default_factory=list)
    overflowing: list[dict[str, Any]] = field(default_factory=list)  # activations and constants beyond 65504
    flushed: list[dict[str, Any]] = field(default_factory=list)  # constants whose nonzero values became 0

    @property
    def worst(self) -> OutputGain | None:
        """The output the QDQ model damages most: one whose decisions the control wins back first (decided), then the
        lowest median cosine."""
        return min(self.gains, key=lambda g: (not g.decided, g.qdq, g.output), default=None)


def _gain(q: "OutputSummary", c: "OutputSummary") -> OutputGain:
    """One output's QDQ run and control run against ORT FP32: median cosines, top-1, NaN/Inf and judgements."""
    return OutputGain(q.output, agreement(q), agreement(c), q.nonfinite_cand - q.nonfinite_ref,
                      c.nonfinite_cand - c.nonfinite_ref, q.top1, c.top1,
                      q.judgement.level if q.judgement else None, c.judgement.level if c.judgement else None,
                      q.judgement.headline if q.judgement else "", c.judgement.headline if c.judgement else "",
                      q.judgement.measure if q.judgement else "", c.judgement.measure if c.judgement else "",
                      q.judgement is None or q.judgement.cosine_meaningful)


@dataclass(frozen=True)
class SliceGain:
    """One slice of an output (a class score's column, a detector head's field) that the QDQ model loses and the
    FP32-float control keeps: the FP16 float part destroys it, whatever the decisions on these samples."""

    output: str
    axis: int
    index: int
    qdq: float  # the slice's cosine against ORT FP32, over the samples
    control: float


# A slice the QDQ model collapses (cosine below COLLAPSED) while the control keeps it (SLICE_KEPT or more): measured on
# a new user's open_nsfw, the nsfw column at 0.17 in the QDQ model and 0.99 in the control, every decision agreeing
# because no evaluation sample came near the 0.5 threshold (6 of 6 positives lost on crops that did).
SLICE_KEPT = 0.98


def slice_gains(ctx: "Context") -> list[SliceGain]:
    """The slices the FP32-float control wins back from collapse (see SLICE_KEPT), worst first; [] without a control."""
    quantization, control = ctx.comparison("quantization"), control_comparison(ctx)
    if quantization is None or control is None:
        return []
    kept = {(r.output, r.axis, r.index): r.cosine for r in ctx.slice_rows(control.id) if r.cosine is not None}
    found = [SliceGain(r.output, r.axis, r.index, r.cosine, kept[(r.output, r.axis, r.index)])
             for r in ctx.slice_rows(quantization.id)
             if r.cosine is not None and r.cosine < COLLAPSED and kept.get((r.output, r.axis, r.index), -1.0) >= SLICE_KEPT]
    return sorted(found, key=lambda g: (g.qdq, g.output, g.index))


def control_comparison(ctx: "Context") -> "ComparisonInfo | None":
    """The FP32-float control's comparison with ORT FP32, or None when the FP16 check did not run it."""
    return next((c for c in ctx.comparisons if c.candidate == CONTROL_STAGE), None)


def is_control(comparison: "ComparisonInfo") -> bool:
    """The FP32-float control (FP16 check), the unfused control (saturation check, analysis/saturation.py) and the
    evaluation-ranges control (calibration check, analysis/calibration_check.py) are measurements, not pipeline
    stages."""
    return comparison.candidate in CONTROL_PURPOSES


# What each control comparison is for, as the report names it (by its candidate stage).
CONTROL_PURPOSES = {CONTROL_STAGE: "FP16 check control", UNFUSED_STAGE: "saturation check control",
                    EVAL_RANGES_STAGE: "calibration check control"}


def control_purpose(comparison: "ComparisonInfo") -> str:
    """What a control comparison is for, as the report names it."""
    return CONTROL_PURPOSES.get(comparison.candidate, "FP16 check control")


def agreement(summary: "OutputSummary") -> float:
    """An output's median per-sample cosine: what the control is judged on.

    Not the worst slice: one slice of a partly INT8-damaged map can sit near 0 in both runs and
    would hide what the control wins back everywhere else. Not top-1 agreement: near-tie
    decisions flip with any rounding change, in either direction (measured on the corpus
    classifiers: 2 of 24 flipped back by the control in one model, 2 flipped by it in another),
    while FP16 damage worth a finding moves the median cosine too."""
    return summary.cosine_median


def fp16_evidence(ctx: "Context") -> Fp16Evidence | None:
    """The FP16 check's evidence, or None when the bundle has none (float part not FP16, or an older bundle)."""
    summary = ctx.fp16_check
    if summary is None:
        return None
    stage = ctx.stage(CONTROL_STAGE)
    evidence = Fp16Evidence(summary, stage.status if stage else None, stage.error if stage else None)
    table = ctx.manifest["artifacts"].get("fp16_ranges")
    rows = ctx.table(table, "fp16_ranges")
    # Constants first, largest FP32 value first; a constant with no FP32 original (fp32_absmax None: a quantizer
    # stored rewritten values under the name, e.g. BatchNormalization folded into Conv weights) after those whose
    # FP32 value shows how far beyond 65504 they are.
    evidence.overflowing = sorted((r for r in rows if (r["overflow"] or 0) > 0),
                                  key=lambda r: (r["kind"] != "constant", r["fp32_absmax"] is None,
                                                 -(r["fp32_absmax"] or 0.0)))
    # A few tiny biases flushed to 0 change nothing; a constant that loses most of its values (an epsilon, a
    # scale, small statistics) changes what its reader computes.
    evidence.flushed = [r for r in rows if r["kind"] == "constant" and (r["underflow"] or 0) > 0
                        and (r["qdq_absmax"] == 0 or r["underflow"] >= FLUSHED_SHARE * max(r["values"] or 1, 1))]
    quantization, control = ctx.comparison("quantization"), control_comparison(ctx)
    if quantization is None or control is None:
        return evidence
    qdq = {s.output: s for s in ctx.output_summaries(quantization.id)}
    for s in ctx.output_summaries(control.id):
        if s.output in qdq:
            q = qdq[s.output]
            evidence.gains.append(_gain(q, s))
    return evidence
