"""Reading the saturation check from a bundle: ONNX Runtime's fused integer kernels (U8S8; S8S8 without VNNI) against the same
QDQ model run unfused (DequantizeLinear -> float operator).

The collector (collect/saturation_check.py) writes stage `ort_qdq_unfused` (the QDQ model with
ONNX Runtime's Q/DQ fusion disabled: session config "session.disable_quant_qdq" = "1", on chosen
samples only, details `sample_indices`: control_samples) and its comparison with `ort_fp32` (purpose `other`, `control:
qdq_unfused`). This module turns them into per-output gains; it needs neither onnx nor
onnxruntime. Agree/degrade/collapse come from analysis/agreement.py (the Judgements Context
makes); the QDQ side is read on the control's samples only, so both sides count the same samples.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from qdqreport.analysis.agreement import COLLAPSE, DECISION_LEVELS, LEVEL_RANK, Judgement, cosine_of, diverges
from qdqreport.analysis.quantizer import made_by_onnxruntime

if TYPE_CHECKING:
    from qdqreport.analysis.context import ComparisonInfo, Context, OutputSummary

UNFUSED_STAGE = "ort_qdq_unfused"
CONTROL_KIND = "qdq_unfused"  # the comparison entry's "control"
MAX_SAMPLES = 32  # the control runs on this many chosen samples only (collect/control_stage.choose_samples)
# The unfused run must win back at least half of what the fused model loses on its own samples (and be judged better:
# explaining_gain) for the integer kernels to be the cause (QR012), and for the layer findings to be refuted by it
# (rules/_measured.py).
RECOVERED_MIN = 0.5
MIN_LOST_SAMPLES = 2  # samples whose decisions the fused model changes, among the control's, before a share counts


@dataclass(frozen=True)
class UnfusedGain:
    """One output that the fused QDQ model damages, against the same model unfused, on the same samples."""

    output: str
    qdq: Judgement  # the quantization comparison's judgement (every compared sample): the measured impact
    control: Judgement  # the unfused control's judgement (its samples)
    measure: str  # what qdq_value / control_value are: a decision measure's agreement, else median cosine
    qdq_value: float  # ort_qdq on the control's samples
    control_value: float
    samples: int
    indices: tuple[int, ...] = ()  # the evaluation samples the control ran on, in its order (control_samples)

    def qdq_agreements(self) -> list[float]:
        """ort_qdq's per-sample agreements on the control's samples (empty where none are recorded)."""
        agreement = self.qdq.sample_agreement or []
        return [agreement[i] for i in (self.indices or range(self.samples)) if i < len(agreement)]

    @property
    def chosen(self) -> bool:
        """Whether the control ran on chosen samples (those the QDQ model decides otherwise first), not the first."""
        return bool(self.indices) and not first_samples(self.indices)

    @property
    def where(self) -> str:
        """The control's samples in words: "the first 32" (bundles before 2026-11-28, or every sample), else "32"."""
        return f"{self.samples}" if self.chosen else f"the first {self.samples}"

    @property
    def recovered(self) -> float:
        """Share of the fused model's loss that the unfused run wins back (0..1)."""
        lost = 1.0 - max(self.qdq_value, 0.0)
        if lost <= 1e-9:
            return 0.0
        return min(max((max(self.control_value, 0.0) - max(self.qdq_value, 0.0)) / lost, 0.0), 1.0)

    @property
    def control_agrees(self) -> bool:
        return self.control.level == "agree"


@dataclass
class SaturationEvidence:
    details: dict[str, Any]  # the control stage's details (vnni, u8s8_nodes, samples, ...)
    status: str | None
    error: str | None
    gains: list[UnfusedGain] = field(default_factory=list)

    @property
    def worst(self) -> UnfusedGain | None:
        """The output that decides the finding: of the outputs the unfused run explains (control_explains), the one
        the fused model damages most (a collapse before a degradation: the finding's severity follows it), then one
        judged by its decisions (a map's IoU before a tensor's numbers), then one the control agrees on, then the
        larger share won back; when it explains none, the output it wins back most of."""
        explained = [g for g in self.gains if control_explains(g)]
        if explained:
            return max(explained, key=lambda g: (LEVEL_RANK[g.qdq.level], g.qdq.measure in DECISION_LEVELS,
                                                 g.control_agrees, g.recovered, g.output))
        return max(self.gains, key=lambda g: (g.control_agrees, g.recovered, g.output), default=None)

    def unexplained(self) -> list[UnfusedGain]:
        """The outputs the unfused run does not explain (control_explains) that the fused model damages at least as
        badly as the explained worst: the integer kernels are then not the whole cause. A new user's U2-Net-p
        quantized S8S8 on an AVX2 CPU: the control wins back a side output (map IoU 0.969 -> 0.992) while the fused
        map every user reads stays collapsed unfused (0.780 -> 0.782); "most likely cause: the integer kernels" was
        then wrong."""
        worst = self.worst
        if worst is None or not control_explains(worst):
            return []
        return [g for g in self.gains
                if not control_explains(g) and LEVEL_RANK[g.qdq.level] >= LEVEL_RANK[worst.qdq.level]]


# Both runs under the collapse line on a decision measure, the unfused one winning back two thirds of the fused model's
# loss (more than RECOVERED_MIN, as the level stays): the kernels are most of the damage (a new user's DeepFilterNet
# with per-channel weights on an AVX2 CPU without VNNI: gain-mask IoU 0.232 fused, 0.828 unfused over all its clips,
# 71% won back on the control's 32; reduce_range=True restored it, and no saturation finding was raised).
RECOVERED_WITHIN_COLLAPSE = 2 / 3


def control_explains(gain: UnfusedGain) -> bool:
    """The control (the unfused run, or another of control_gains) is judged better than the fused model (collapse
    to degrade or agree, degrade to agree) and wins back at least RECOVERED_MIN of the fused model's loss on the same
    samples, a loss of decisions on at least MIN_LOST_SAMPLES of them; or, on a decision measure both runs collapse
    on, it wins back RECOVERED_WITHIN_COLLAPSE of it."""
    better = LEVEL_RANK[gain.control.level] < LEVEL_RANK[gain.qdq.level]
    within = (gain.measure in DECISION_LEVELS and gain.control.level == gain.qdq.level == COLLAPSE
              and gain.recovered >= RECOVERED_WITHIN_COLLAPSE)
    return (better and gain.recovered >= RECOVERED_MIN or within) and not one_off(gain)


def one_off(gain: UnfusedGain) -> bool:
    """Whether the fused model's decisions change on fewer than MIN_LOST_SAMPLES of the control's samples: a share won
    back of one sample's decision is no measurement (a new user's key CNN, percentile calibration: one near tie in the
    control's 32 samples read "share won back 1" and ranked the kernels first; on all 256, fused and unfused both
    changed 3 keys)."""
    agreement = gain.qdq_agreements() if gain.measure in DECISION_LEVELS else None
    return bool(agreement) and sum(a < 1 for a in agreement) < MIN_LOST_SAMPLES


def kernels_explain(ctx: "Context") -> UnfusedGain | None:
    """The worst output's gain when the integer kernels explain the damage (explaining_gain), else None."""
    return explaining_gain(saturation_evidence(ctx))


def explaining_gain(evidence: SaturationEvidence | None) -> UnfusedGain | None:
    """The worst output's gain when the integer kernels explain the damage: on the control's own samples the unfused
    run wins back at least RECOVERED_MIN of what the fused model loses (all of it when it agrees with FP32), and its
    judgement is better than the fused model's (collapse to degrade or agree, degrade to agree: a cosine shortfall
    shared out between two runs that both merely degrade changes no decision), and no output it does not explain is
    damaged as badly (SaturationEvidence.unexplained); None otherwise (no check, a failed control, no such gain). An
    unfused control that agrees where the fused model lost nothing on those samples explains nothing: the loss measured
    on the other samples was never put to the test."""
    if evidence is None or evidence.status != "ok" or evidence.worst is None:
        return None
    worst = evidence.worst
    return worst if control_explains(worst) and not evidence.unexplained() else None


def partly_explaining_gain(evidence: SaturationEvidence | None) -> UnfusedGain | None:
    """The worst explained output's gain when the unfused run explains some outputs while others it does not explain
    are damaged as badly (SaturationEvidence.unexplained): the kernels are a cause, not the cause; None otherwise."""
    if evidence is None or evidence.status != "ok" or evidence.worst is None or not evidence.unexplained():
        return None
    return evidence.worst


# Under RECOVERED_MIN but at least this share of the loss won back unfused, on a loss of decisions on at least
# MIN_LOST_SAMPLES samples: the integer kernels are part of the loss, not its cause (a new user's copy-detection model,
# TensorRT-style recipe on an AVX2 CPU: embedding cosine 0.69 fused, 0.77 unfused, 26% won back; reported nowhere).
CONTRIBUTES_MIN = 0.2


def contributing_gain(evidence: SaturationEvidence | None) -> UnfusedGain | None:
    """The collapsed output whose loss the unfused run wins back most of, when that is at least CONTRIBUTES_MIN of it
    but the kernels explain no output (explaining_gain and partly_explaining_gain give none); None otherwise. Outputs
    that only degrade are left out: a share of a healthy recipe's small loss is no finding (part of the corpus's
    healthy controls have one)."""
    if evidence is None or evidence.status != "ok" or not evidence.gains:
        return None
    if explaining_gain(evidence) is not None or partly_explaining_gain(evidence) is not None:
        return None
    collapsed = [g for g in evidence.gains if g.qdq.level == COLLAPSE]
    best = max(collapsed, key=lambda g: (g.recovered, g.output), default=None)
    if best is None:
        return None
    return best if best.recovered >= CONTRIBUTES_MIN and not one_off(best) else None


def is_unfused_control(comparison: "ComparisonInfo") -> bool:
    return comparison.candidate == UNFUSED_STAGE


def lacks_vnni(ctx: "Context") -> bool:
    """Whether the collecting CPU was measured to be an x86 one without VNNI (the saturation check records the CPU
    whether or not it ran): there ONNX Runtime's fused U8S8 and S8S8 kernels can saturate."""
    stage = ctx.stage(UNFUSED_STAGE)
    cpu = (stage.details.get("cpu") if stage is not None else None) or {}
    return cpu.get("vnni") is False and cpu.get("machine") in ("x86_64", "AMD64")


def per_channel_saturates_here(ctx: "Context") -> bool:
    """Whether a quantize_static model with per-channel INT8 weights, measured on the collecting CPU, risks the fused
    kernels' saturation there (lacks_vnni): a new user's DeepFilterNet, per-tensor weights made per-channel as a fix
    printed it, took its enhanced audio from 17 dB to 2.9 dB of FP32's on an AVX2 CPU; reduce_range=True avoided it."""
    return made_by_onnxruntime(ctx.precision, ctx.modelopt_log) and lacks_vnni(ctx)


def saturation_evidence(ctx: "Context") -> SaturationEvidence | None:
    """The check's evidence, or None when the bundle has no unfused control stage."""
    stage = ctx.stage(UNFUSED_STAGE)
    if stage is None:
        return None
    evidence = SaturationEvidence(dict(stage.details), stage.status, stage.error)
    evidence.gains.extend(control_gains(ctx, UNFUSED_STAGE))
    return evidence


def control_gains(ctx: "Context", control_stage: str) -> list[UnfusedGain]:
    """Each diverging output of the quantization comparison against a control of the QDQ model (*control_stage*,
    compared with ort_fp32 on its own samples): the two judgements and their values on the control's samples. The
    saturation check's unfused run and the calibration check's evaluation ranges (analysis/calibration_check.py) are
    read alike."""
    quantization = ctx.comparison("quantization")
    control = next((c for c in ctx.comparisons if c.candidate == control_stage), None)
    if quantization is None or control is None:
        return []
    controls = {s.output: s for s in ctx.output_summaries(control.id)}
    gains = []
    for q in ctx.output_summaries(quantization.id):
        c = controls.get(q.output)
        if c is None or not diverges(q) or q.judgement is None or c.judgement is None:
            continue
        indices = control_samples(ctx, control_stage, c.samples)
        measure, qdq_value, control_value = _same_samples(ctx, quantization.id, q, c, indices)
        gains.append(UnfusedGain(q.output, q.judgement, c.judgement, measure, qdq_value, control_value, c.samples,
                                 indices))
    return gains


def first_samples(indices: Sequence[int]) -> bool:
    """Whether *indices* are the evaluation's first samples in order (what every control ran on before 2026-11-28)."""
    return list(indices) == list(range(len(indices)))


def control_samples(ctx: "Context", control_stage: str, count: int) -> tuple[int, ...]:
    """The evaluation samples a control ran on, in its order: its details' `sample_indices` (collect/control_stage.py
    chooses them), else its first *count* (bundles collected before 2026-11-28)."""
    listed = ctx.sample_indices(control_stage)
    return listed[:count] if listed is not None and len(listed) >= count else tuple(range(count))


def _same_samples(ctx: "Context", qdq_id: str, q: "OutputSummary", c: "OutputSummary",
                  indices: tuple[int, ...]) -> tuple[str, float, float]:
    """(measure, QDQ value, control value) on the control's samples (*indices*, in the control's order): the decision
    measure both were judged by, from its per-sample agreement, else the median per-sample cosine."""
    count = c.samples
    qj, cj = q.judgement, c.judgement
    same_measure = qj.measure == cj.measure and qj.measure in DECISION_LEVELS
    if same_measure and count >= q.samples and qj.value is not None and cj.value is not None:
        return qj.measure, qj.value, cj.value  # the control ran on every sample: the judged values themselves
    # A subset: the mean of the per-sample agreements, on the same samples for both (a sample with few decisions
    # weighs as much as one with many, on both sides alike).
    n = min(count, len(cj.sample_agreement or []))
    if same_measure and qj.sample_agreement and n and all(i < len(qj.sample_agreement) for i in indices[:n]):
        return (qj.measure, statistics.fmean(qj.sample_agreement[i] for i in indices[:n]),
                statistics.fmean(cj.sample_agreement[:n]))
    chosen = set(indices)
    rows = [r for r in ctx.sample_rows_of(qdq_id, q.output) if int(r["sample"]) in chosen]
    qdq_cos = statistics.median(cosine_of(r) for r in rows) if rows else q.cosine_median
    return "cosine", qdq_cos, c.cosine_median
