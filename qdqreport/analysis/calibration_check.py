"""Reading the calibration check from a bundle: the QDQ model with its activation ranges taken from the evaluation
inputs themselves, against the QDQ model as calibrated (collect/range_check.py runs it).

Stage `ort_qdq_eval_ranges`, compared with `ort_fp32` on MAX_SAMPLES chosen samples (control `eval_ranges`); its
gains are read as the saturation check's are (analysis/saturation.control_gains: the same samples on both sides). On
the output the QDQ model damages most:
- the ranges RESTORE the outputs when they win back what the saturation control must win back to explain a loss
  (saturation.control_explains): the calibrated ranges are the cause, and a calibration finding is confirmed;
- they do NOT restore them when they win back under NOT_RESTORED_MAX of the loss, the judgement stays as bad, the
  loss is large enough to measure a share of (REFUTE_MIN_LOST samples with changed decisions) and the control set
  every activation quantizer of the model (details activation_quantizers): no
  calibration set, however like the evaluation data, is expected to restore the outputs, and a calibration finding,
  whatever it reads in the data, is not what loses the accuracy (a new user's copy-detection model calibrated on
  noise: re-calibrated on 56 real photos it stayed as broken, embedding cosine 0.79 -> 0.69; 16-bit activations
  restored it);
- between the two, or without a check that ran, the check says nothing.
Needs neither onnx nor onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from qdqreport.analysis.agreement import DECISION_LEVELS, LEVEL_RANK
from qdqreport.analysis.saturation import UnfusedGain, control_explains, control_gains

if TYPE_CHECKING:
    from qdqreport.analysis.context import Context

EVAL_RANGES_STAGE = "ort_qdq_eval_ranges"
CONTROL_KIND = "eval_ranges"  # the comparison entry's "control"
MAX_SAMPLES = 32  # the control runs on this many chosen samples only, the saturation check's (collect/control_stage)
NOT_RESTORED_MAX = 0.25  # share of the loss under which better ranges are measured not to be the fix
# Samples whose decisions the QDQ model changes among the control's, before "wins back under a quarter" refutes: on 6
# changed of 32 (a new user's pitch estimator, its calibration data 4.3x too wide) one sample more or less is the whole
# difference, and re-calibrated the model did lose a third fewer frames over the whole set.
REFUTE_MIN_LOST = 8


@dataclass(frozen=True)
class RangeVerdict:
    """What the evaluation's own ranges did to the output the QDQ model damages most."""

    restores: bool
    gain: UnfusedGain
    quantizers: int  # activation quantizers the control set
    of_samples: int

    @property
    def line(self) -> str:
        """The measurement in one sentence, without its conclusion."""
        g = self.gain
        won = "agrees with FP32" if g.control.level == "agree" else f"wins back {g.recovered:.0%} of the loss"
        value = f"{g.measure} {g.qdq_value:.3g} as calibrated, {g.control_value:.3g} with those ranges"
        # The headline adds what the values do not say (decisions changed), not the control's value once more.
        said = g.control.headline == f"{g.measure} {g.control_value:.3g}"
        return (f"the same QDQ model with its {self.quantizers} activation ranges taken from the evaluation inputs "
                f"themselves (MinMax, the best any calibration set could match them) {won} on output {g.output} "
                f"({value}, on {g.where} of {self.of_samples} samples"
                + (", those the QDQ model decides otherwise first" if g.chosen else "")
                + ("" if said else f"; {g.control.headline}") + ")")


def calibration_check(ctx: "Context") -> RangeVerdict | None:
    """The check's verdict (module docstring), or None when it did not run, failed, or measured neither way."""
    stage = ctx.stage(EVAL_RANGES_STAGE)
    if stage is None or stage.status != "ok":
        return None
    gains = control_gains(ctx, EVAL_RANGES_STAGE)
    if not gains:
        return None
    worst = max(gains, key=lambda g: (LEVEL_RANK[g.qdq.level], g.qdq.measure in DECISION_LEVELS, -g.qdq_value,
                                      g.output))
    quantizers = _count(stage.details.get("quantizers_set"), 0)
    of = _count(stage.details.get("of_samples"), worst.samples)
    if control_explains(worst):
        return RangeVerdict(True, worst, quantizers, of)
    stays = LEVEL_RANK[worst.control.level] >= LEVEL_RANK[worst.qdq.level]
    if stays and worst.recovered < NOT_RESTORED_MAX and _enough_lost(worst) and _every_range_set(stage.details):
        return RangeVerdict(False, worst, quantizers, of)
    return None


def _every_range_set(details: dict) -> bool:
    """Whether the control set every activation quantizer of the QDQ model: one left as calibrated may be the one that
    loses the outputs (a new user's text detector calibrated on noise: its output Sigmoid's range, [0, 0.0016], was
    among 80 of 384 the range pass could not align, and the check "refuted" the calibration whose fix of that one
    scale alone took map IoU from 0.17 to 0.61). Bundles before the count (session 42) cannot say: no refutation."""
    total, done = details.get("activation_quantizers"), details.get("quantizers_set")
    return isinstance(total, int) and isinstance(done, int) and done >= total


def _enough_lost(gain: UnfusedGain) -> bool:
    """Whether the QDQ model's loss on the control's samples is large enough for a small share won back to refute:
    REFUTE_MIN_LOST samples with changed decisions where decisions judge the output (a cosine has no count)."""
    agreement = gain.qdq_agreements() if gain.measure in DECISION_LEVELS else None
    return not agreement or sum(a < 1 for a in agreement) >= REFUTE_MIN_LOST


def _count(value: object, default: int) -> int:
    """A count from the stage's details, or *default* where a bundle holds anything else there."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default
