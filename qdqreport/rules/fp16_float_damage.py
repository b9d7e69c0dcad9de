"""QR011: the QDQ model's FP16 float part, not its INT8 part, damages the outputs (measured control)."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import (CONTROL_STAGE, FP16_MAX, Fp16Evidence, OutputGain, SliceGain, fp16_evidence,
                                   slice_gains)
from qdqreport.analysis.layers import layer_tables
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.agreement import COLLAPSE, COLLAPSED, DEGRADE
from qdqreport.fixes import Change, requantize_command
from qdqreport.rules._common import diverging_outputs, outputs_collapse, rounded
from qdqreport.testing.recipes import classifier_graph
from qdqreport.testing.layer_examples import layer_chain

from qdqreport.wording import plural, verb
# The control must win back a real part of the damage, not rounding: at least a quarter of the
# QDQ model's disagreement (1 - cosine) and 0.05 of cosine.
RECOVERED_MIN = 0.25
GAIN_MIN = 0.05
# The score of decisions the control wins back while the median cosine moves too little to count (OutputGain.decided):
# above every calibration finding's, as a measured cause is.
DECIDED_SCORE = 0.6
SLICE_SCORE = 0.5  # a slice the control keeps, decisions unmoved on these samples: under a measured decision change
MAJORITY = 0.5  # a measured share of the loss at or above which the FP16 part is the main cause
MASKED_SCORE = 0.5  # an inf constant whose harm another fault hides from the control: under the measured causes
ROWS_SHOWN = 10


# --- examples: a 16x16 probability map per sample (a text detector's output) -----------------
def _maps(samples: int, seed: int, noise: float = 0.0, zero: bool = False) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(samples):
        logits = np.random.default_rng(100 + i).normal(-2.0, 3.0, (1, 1, 16, 16))
        value = 1 / (1 + np.exp(-(logits + rng.normal(0.0, noise, logits.shape))))
        out.append({"maps": np.zeros_like(value) if zero else value.astype(np.float32)})
    return out


def _bn_variance_overflow() -> list[dict[str, Any]]:
    # What collect wrote for PP-OCRv4 DBNet under ModelOpt's defaults: the head's BatchNormalization variance is
    # ~1e8 in FP32, inf in FP16; the largest FP16 activation stays below 65504.
    return [{"tensor": "batch_norm_0.w_2", "kind": "constant", "node": "p2o.BatchNormalization.1",
             "op_type": "BatchNormalization", "consumers": "p2o.BatchNormalization.1", "samples": None, "values": 24,
             "fp32_absmax": 9.79e7, "overflow": 24, "underflow": 0, "qdq_absmax": float("inf")},
            {"tensor": "conv2d_497.tmp_0", "kind": "activation", "node": "p2o.Conv.61", "op_type": "Conv",
             "consumers": "p2o.BatchNormalization.1", "samples": 24, "values": 921600, "fp32_absmax": 17392.1,
             "overflow": 0, "underflow": 0, "qdq_absmax": None}]


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": 1, "control_stage": CONTROL_STAGE, "samples": 24, "fp16_activations": 329,
            "fp16_constants_checked": 744, "activations_beyond_fp16": 0,
            "constants_damaged": sum(1 for r in rows if r["kind"] == "constant"), "seconds": 10.8}


def _fp16_zeroes_map(b):
    b.artifact("precision_summary", classifier_graph())
    b.stage("ort_fp32", _maps(24, 1)).stage("ort_qdq", _maps(24, 2, zero=True))
    rows = _bn_variance_overflow()
    b.stage(CONTROL_STAGE, _maps(24, 3, noise=1.2)).fp16_check(rows, _summary(rows))


def _int8_at_fault(b):
    # The same collapse, but the control collapses as much: the FP16 part is not the cause.
    b.artifact("precision_summary", classifier_graph())
    b.stage("ort_fp32", _maps(24, 1)).stage("ort_qdq", _maps(24, 2, noise=4.0))
    b.stage(CONTROL_STAGE, _maps(24, 3, noise=4.0)).fp16_check([], _summary([]))


def _fp16_harmless(b):
    # FP16 constants overflow, but the outputs agree anyway (the damaged constant feeds nothing that matters).
    b.artifact("precision_summary", classifier_graph())
    b.stage("ort_fp32", _maps(24, 1)).stage("ort_qdq", _maps(24, 2, noise=0.05))
    rows = _bn_variance_overflow()
    b.stage(CONTROL_STAGE, _maps(24, 3, noise=0.04)).fp16_check(rows, _summary(rows))


def _l2_sum_overflow() -> list[dict[str, Any]]:
    # What collect wrote for scripts/make_fp16_overflow_model.py's model: a sum of squares at 7.1e5 in a tensor the
    # QDQ graph declares FP16, which ONNX Runtime's CPU provider computes in FP32 anyway.
    return [{"tensor": "sum_of_squares", "kind": "activation", "node": "sum_of_squares", "op_type": "ReduceSum",
             "consumers": "l2_norm", "samples": 50, "values": 50, "fp32_absmax": 709831.5, "overflow": 38,
             "underflow": 0, "qdq_absmax": None}]


def _folded_weight_without_original(b):
    # A quantizer folded BatchNormalization into the Conv weights and kept the weight's name: the FP16 weight matches
    # no FP32 constant (fp32_absmax None) and stores inf; the control upcasts it as it is. The map is damaged by an
    # FP16 activation beyond 65504, which the control computes in FP32.
    rows = [{"tensor": "conv2d_12.w_0", "kind": "constant", "node": "p2o.Conv.12", "op_type": "Conv",
             "consumers": "p2o.Conv.12", "samples": None, "values": 1152, "fp32_absmax": None, "overflow": 3,
             "underflow": 0, "qdq_absmax": float("inf")},
            {"tensor": "conv2d_12.tmp_0", "kind": "activation", "node": "p2o.Conv.12", "op_type": "Conv",
             "consumers": "p2o.Relu.12", "samples": 24, "values": 921600, "fp32_absmax": 2.1e5, "overflow": 40,
             "underflow": 0, "qdq_absmax": None}]
    b.artifact("precision_summary", classifier_graph())
    b.stage("ort_fp32", _maps(24, 1)).stage("ort_qdq", _maps(24, 2, zero=True))
    b.stage(CONTROL_STAGE, _maps(24, 3, noise=1.2)).fp16_check(rows, _summary(rows))


def _risk_only(b):
    b.artifact("precision_summary", classifier_graph())
    b.stage("ort_fp32", _maps(24, 1)).stage("ort_qdq", _maps(24, 2, noise=0.05))
    b.stage(CONTROL_STAGE, _maps(24, 3, noise=0.05)).fp16_check(_l2_sum_overflow(), _summary(_l2_sum_overflow()))


def _risk_with_per_layer_tables(b):
    # The same overflow collected with --per-layer: QR202 reports it from the layers table, not QR011 a second time.
    _risk_only(b)
    b.layers(layer_chain(overflow_at=9))


def _near_ties_flip_back(b):
    # Measured on the corpus classifier (ModelOpt max calibration): 2 of 24 near-tie decisions flip in the QDQ model
    # and not in the control, while the median cosine does not move. Rounding noise, not FP16 damage.
    rows = [np.array([[0.9, 0.1]] if i % 3 else [[0.2, 0.8]], np.float32) for i in range(24)]
    rows[5] = rows[11] = np.array([[0.505, 0.495]], np.float32)
    close = [{"p": p + np.float32(1e-4)} for p in rows]
    flipped = [{"p": p[:, ::-1].copy()} if i in (5, 11) else close[i] for i, p in enumerate(rows)]
    b.artifact("precision_summary", classifier_graph()).class_outputs("p")
    b.stage("ort_fp32", [{"p": p} for p in rows]).stage("ort_qdq", flipped).stage(CONTROL_STAGE, close)
    b.fp16_check([], _summary([]))


def _wide_flips_fp16(b):
    # A new user's open_nsfw under ModelOpt's FP16 float part: decisions flip at wide margins in the QDQ model and not
    # in the control, while the median cosine of a 2-class softmax stays 1.0000 (most samples far from a decision).
    rows = [np.array([[0.97, 0.03]] if i % 5 else [[0.3, 0.7]], np.float32) for i in range(40)]
    close = [{"p": p + np.float32(1e-4)} for p in rows]
    flipped = [{"p": p[:, ::-1].copy()} if i in (0, 5, 10) else close[i] for i, p in enumerate(rows)]
    b.artifact("precision_summary", classifier_graph()).class_outputs("p")
    b.stage("ort_fp32", [{"p": p} for p in rows]).stage("ort_qdq", flipped).stage(CONTROL_STAGE, close)
    b.fp16_check([], _summary([]))


def _score_column_lost(b):
    # open_nsfw's case without positives: every decision agrees, the class-1 column collapses in the QDQ model only.
    rows = [np.array([[0.97 - 0.01 * (i % 7), 0.03 + 0.01 * (i % 7)]], np.float32) for i in range(40)]
    noisy = [{"p": np.array([[1 - q, q]], np.float32)} for q in np.random.default_rng(4).uniform(0.0, 0.12, 40)]
    b.artifact("precision_summary", classifier_graph()).class_outputs("p")
    b.stage("ort_fp32", [{"p": p} for p in rows]).stage("ort_qdq", noisy)
    b.stage(CONTROL_STAGE, [{"p": p + np.float32(1e-4)} for p in rows]).fp16_check([], _summary([]))


@rule(id="QR011", slug="fp16-float-damage", title="The FP16 float part of the QDQ model damages the outputs",
      examples=[Fires("ModelOpt's FP16 float part zeroes a map; with it in FP32 the map comes back", _fp16_zeroes_map),
                Fires("an FP16 activation passes 65504 although this runtime's outputs agree (risk)", _risk_only),
                Fires("a damaged FP16 constant with no FP32 original (folded weights) is listed, not restored",
                      _folded_weight_without_original),
                Quiet("the control collapses as much: INT8 is at fault", _int8_at_fault),
                Quiet("FP16 constants overflow but the outputs agree", _fp16_harmless),
                Quiet("the control only flips back two near-tie decisions", _near_ties_flip_back),
                Fires("decisions flip at wide margins only in the QDQ model, the median cosine unmoved", _wide_flips_fp16),
                Fires("every decision agrees but a score column collapses in the QDQ model only", _score_column_lost),
                Quiet("the same risk collected with --per-layer (QR202 reports it)", _risk_with_per_layer_tables)])
def fp16_float_damage(ctx: Context) -> Iterator[Finding]:
    """The QDQ model diverges, and the same model with its float part in FP32 diverges much less.

    ModelOpt's ONNX PTQ converts the non-quantized part of the graph (weights, biases,
    normalisation statistics, Q/DQ scales, every float activation) to FP16 by default
    (`--high_precision_dtype fp16`). When `collect` sees FP16 in the QDQ graph it runs the
    FP16 check: the control stage `ort_qdq_fp32` is the QDQ model with that part restored to
    FP32 (original FP32 constants, Q/DQ nodes and scale values untouched), compared with
    ORT FP32 on the same inputs. This rule fires when the QDQ outputs diverge and the control
    wins back at least a quarter of the disagreement (and 0.05 of cosine); the share won back
    is the finding's score. Judged on median per-sample cosine: top-1 agreement alone is not
    enough, because near-tie decisions flip with any rounding change, either way. It fires too
    when the report's own judgement (analysis/agreement.py: decisions, near ties not counted, on the
    same stored samples) degrades or collapses for the QDQ model and is better for the control
    (score 0.6): a new user's open_nsfw, ModelOpt's default FP16 float part, flipped 5 of 128
    decisions at wide margins, the control none, both at median cosine 1.0000 (a 2-class softmax
    far from its threshold on most samples); keeping the float part FP32 lost none of the 6 positives.
    And when no decision moves on these samples but a slice of an output (a class's score column, a
    detector field: the compared slices) collapses in the QDQ model (cosine below 0.9) while the
    control keeps it (0.98 or more), it warns (score 0.5): the same open_nsfw on crops with no
    positive, every decision agreeing, the nsfw column at cosine 0.17 against the control's 0.99. It lists the
    FP16 constants that overflowed (inf) or flushed to zero and the FP16 activations whose FP32
    values pass 65504, with the nodes reading them.
    An error when the QDQ outputs collapse and the control wins back 0.3 or more of cosine. A share won back of half
    the loss or more ranks above every unmeasured INT8 hypothesis (score 0.9 + share / 10): INT8 causes are in the
    control too (a new user's DBNet without calibration data: FP16 won back 89%, random calibration ranked first, and
    the calibration fixed alone kept none of its boxes). When the control collapses as well but an FP16 constant is
    inf (with an FP32 original the control restores), another fault hides the control's gain: the constant is reported
    all the same (the same DBNet with unnormalised calibration: its printed calibration fixes kept 0 boxes, 78% with
    the float part FP32 as well).

    Without measured damage it still warns (confidence 0.5) when an activation the QDQ graph
    declares FP16 passes 65504 in FP32: ONNX Runtime's CPU provider has no FP16 kernels for most
    operators and computes them in FP32 between Casts, so the overflow may not show here, while
    a runtime that stores the tensor in FP16 (TensorRT honouring the graph's types) holds inf.
    With `collect --per-layer` that risk is QR202's.

    Separating evidence: INT8 causes (calibration, over-quantized or sensitive nodes) are in
    the control as well, so they cannot explain what the control wins back; what the control
    still loses is INT8's share. Quiet when the control is no better and no activation passes
    65504 (FP16 is harmless there: a damaged constant was used by this run and changed nothing).

    Why it matters: FP16 holds nothing beyond 65504 and nothing nonzero below 6e-8. A
    BatchNormalization variance of 1e8 becomes inf, the layer outputs its bias alone, and the
    map goes flat; every INT8 rule then points at the wrong nodes.

    Fix: quantize with `--high_precision_dtype fp32`, or keep the op types that read the
    damaged values in FP32 with `--op_types_to_exclude_fp16` (ModelOpt 0.47 has no per-node
    option for this); for activations beyond 65504, rescale the model or keep those ops FP32.
    Collect again: the control's cosine is what to expect.
    """
    evidence = fp16_evidence(ctx)
    if evidence is None:
        return
    worst = evidence.worst
    measured = bool(diverging_outputs(ctx, "quantization")) and worst is not None and (worst.decided or _by_cosine(worst))
    if measured:
        yield _measured(ctx, evidence, worst)
    elif (slices := slice_gains(ctx)) and evidence.control_status == "ok":
        yield _slice_damage(ctx, evidence, slices)
    elif (lost := _lost_constants(evidence)) and diverging_outputs(ctx, "quantization"):
        yield _masked(ctx, evidence, lost)
    elif _risky(evidence) and layer_tables(ctx) is None:
        yield _risk(ctx, evidence)


def _lost_constants(evidence: Fp16Evidence) -> list[Any]:
    """FP16 constants that overflowed to inf, with an FP32 original the control restores."""
    return [r for r in evidence.overflowing if r.kind == "constant" and r.fp32_absmax is not None]


def _masked(ctx: Context, evidence: Fp16Evidence, lost: list[Any]) -> Finding:
    """The outputs diverge, an FP16 constant holds inf, and the control (float part FP32) diverges as much: another
    fault masks the control's gain, not the constant's harm. A new user's PP-OCRv4 DBNet under ModelOpt, calibrated
    without its normalisation: its head BatchNorm's variance (9.8e7) was inf, the map flat; the control collapsed too
    (the calibration), so nothing was reported, and the calibration fixed alone left box recall at 0 (0.755 with the
    float part FP32 as well)."""
    first = lost[0]
    collapsed = outputs_collapse(ctx)
    return fp16_float_damage.finding(
        title=f"{plural(len(lost), 'FP16 constant')} overflowed to inf, e.g. {first.tensor} ({first.op_type})",
        severity="error" if collapsed else "warning", confidence=0.85, score=MASKED_SCORE,
        subject=";".join(r.tensor for r in lost[:5]), stage="quantization", tags=("root_cause",),
        summary=(f"the QDQ model's FP16 float part stores {first.tensor} (read by {first.node}, {first.op_type}; "
                 f"{_fp32_max(first, 'FP32 max ')}) as inf in {first.overflow} of {first.values} values"
                 + (f", and {len(lost) - 1} more constant(s) alike" if len(lost) > 1 else "")
                 + ". The control run with the float part in FP32 diverges as much here, so another fault (see the "
                 "findings above) hides what restoring it wins: fix both, and collect again"),
        evidence=(_damage_table(lost), Text("Not measured apart: the control restores these constants, but the "
                                            "outputs still diverge for another reason, so its gain is not seen.")),
        fixes=_fixes(ctx, evidence))


def _slice_damage(ctx: Context, evidence: Fp16Evidence, slices: list[SliceGain]) -> Finding:
    """Decisions agree on these samples, but a slice the control keeps collapses in the QDQ model."""
    first = slices[0]
    others = f" ({len(slices) - 1} more slice(s) alike)" if len(slices) > 1 else ""
    return fp16_float_damage.finding(
        title=f"The FP16 float part destroys slice {first.index} of output {first.output}",
        # The decisions measured here agree (no sample near a threshold), so no error; the values are measured lost.
        severity="warning", confidence=0.8, score=SLICE_SCORE, subject=f"{first.output}[{first.index}]",
        stage="quantization", tags=("root_cause",),
        summary=(f"output {first.output}, slice {first.index} along axis {first.axis}: cosine {first.qdq:.2f} against "
                 f"FP32 in the QDQ model, {first.control:.2f} with its float part in FP32 (Q/DQ untouched){others}. The "
                 "decisions measured here agree, but these values no longer track FP32: samples whose score comes "
                 "near a decision threshold would decide otherwise (a class-1 probability, a box field). The FP16 part, "
                 "not INT8, loses them"),
        evidence=(Table("Slices the FP32 float part keeps", ("output", "axis", "slice", "QDQ cosine", "control cosine"),
                        tuple((g.output, g.axis, g.index, rounded(g.qdq), rounded(g.control)) for g in slices[:ROWS_SHOWN]),
                        note="cosine of the slice over every compared sample, against ORT FP32"),
                  *_evidence(evidence)[1:]),
        fixes=_fixes(ctx, evidence))


def _measured_score(worst: OutputGain) -> float:
    """The share of the loss the control wins back; above MAJORITY it is most of the loss, measured, and outranks
    every unmeasured INT8 hypothesis (scores up to 0.9): INT8 causes are in the control too, so they explain at most
    the rest. A new user's PP-OCRv4 DBNet under ModelOpt without calibration data: the FP16 part won back 89%, and
    'ModelOpt calibrated on random data' (0.9) ranked first; calibration fixed alone kept 0 of 1,003 boxes, the float
    part FP32 alone 65%."""
    if not _by_cosine(worst):
        return DECIDED_SCORE
    share = round(worst.recovered, 4)
    return round(0.9 + 0.1 * share, 4) if share >= MAJORITY else share


def _by_cosine(worst: OutputGain) -> bool:
    """The control wins back at least RECOVERED_MIN of the median cosine's loss, and GAIN_MIN of cosine."""
    return worst.recovered >= RECOVERED_MIN and worst.control - worst.qdq >= GAIN_MIN


def _risky(evidence: Fp16Evidence) -> list[dict[str, Any]]:
    return [r for r in evidence.overflowing if r.kind == "activation"]


def _measured(ctx: Context, evidence: Fp16Evidence, worst: OutputGain) -> Finding:
    gain = worst.control - worst.qdq
    severe = (worst.qdq < COLLAPSED and gain >= 0.3) or (worst.decided and worst.qdq_level == COLLAPSE)
    pinpointed = bool(evidence.overflowing or evidence.flushed)
    return fp16_float_damage.finding(
        title="The FP16 float part damages the QDQ model's outputs",
        severity="error" if severe else "warning",
        # Measured by the control run; lower when no tensor or constant shows where FP16 fails.
        confidence=0.95 if pinpointed else 0.8, score=_measured_score(worst),
        subject=";".join(r.tensor for r in (evidence.overflowing or evidence.flushed)[:5]) or "fp16 float part",
        stage="quantization", tags=("root_cause",),
        summary=_summary_text(worst, evidence), evidence=_evidence(evidence), fixes=_fixes(ctx, evidence))


def _scanned(evidence: Fp16Evidence) -> str:
    """Which samples the range scan read, when collect scanned fewer than all (fp16_check.json's range_samples)."""
    scanned, total = evidence.summary.get("range_samples"), evidence.summary.get("samples")
    return f" of the {scanned} spread samples scanned" if isinstance(scanned, int) and scanned != total else ""


def _risk(ctx: Context, evidence: Fp16Evidence) -> Finding:
    rows = _risky(evidence)
    return fp16_float_damage.finding(
        title=f"{plural(len(rows), 'FP16 activation')} {verb(len(rows), 'exceeds')} 65504 in FP32: overflow where stored in FP16",
        severity="warning", confidence=0.5, score=0.5, subject=";".join(r.tensor for r in rows[:5]),
        stage="quantization", tags=("root_cause",),
        summary=f"the QDQ graph declares {rows[0].tensor} FP16 but its FP32 values reach {_fp32_max(rows[0])} "
                f"(in {rows[0].overflow} of {rows[0].values} values{_scanned(evidence)}); this run's outputs "
                + ("agree" if not diverging_outputs(ctx, "quantization") else "do not improve with the float part in FP32")
                + ": this runtime evidently computed it in FP32; one that stores it in FP16 holds inf",
        evidence=(_damage_table(rows),
                  Text("Not measured here: ONNX Runtime's CPU provider computes most FP16 operators in FP32 between "
                       "Casts, so an FP16 overflow inside such a chain never happens on this machine. A TensorRT "
                       "engine built from this graph with its types honoured (strongly typed) stores the tensor in "
                       "FP16.")),
        fixes=_fixes(ctx, evidence))


def _damage_table(rows: list[dict[str, Any]]) -> Table:
    return Table("Values FP16 cannot carry", ("tensor", "kind", "FP32 max |x|", "beyond 65504", "flushed to 0",
                                              "of values", "produced/read by", "read by"),
                 tuple((r.tensor, r.kind, _fp32_cell(r), r.overflow, r.underflow,
                        r.values, f"{r.node} ({r.op_type})", r.consumers) for r in rows[:ROWS_SHOWN]))


def _fp32_max(row: dict[str, Any], label: str = "") -> str:
    """A row's FP32 max |x| for a sentence. A damaged constant may have no FP32 original (a quantizer stored
    rewritten values under the name, e.g. BatchNormalization folded into Conv weights): its FP16 value is shown."""
    if row.fp32_absmax is not None:
        return f"{label}{row.fp32_absmax:.3g}"
    stored = row.qdq_absmax
    return ("no FP32 original, so the control keeps its FP16 value too"
            + (f"; stored max {stored:.3g}" if stored is not None else ""))


def _fp32_cell(row: dict[str, Any]) -> Any:
    return rounded(row.fp32_absmax, 1) if row.fp32_absmax is not None else "no FP32 original"


def _summary_text(worst: OutputGain, evidence: Fp16Evidence) -> str:
    if not _by_cosine(worst):  # decisions move, the median cosine does not show it
        text = (f"output {worst.output}: in the QDQ model {worst.qdq_headline} ({worst.qdq_level}); with its float "
                f"part in FP32 (Q/DQ untouched) {worst.control_headline} ({worst.control_level}): the FP16 part, "
                f"not INT8, changes these decisions (median cosine {worst.qdq:.4f} and {worst.control:.4f}: most "
                "samples are far from a decision)")
    else:
        text = (f"with the float part in FP32 (Q/DQ untouched) output {worst.output} agrees at {worst.control:.2f} "
                f"instead of {worst.qdq:.2f}: the FP16 part, not INT8, accounts for {worst.recovered:.0%} of the loss")
        # The share is a cosine's; where the decisions still move in the control, say so (a new user's DBNet: 93% of
        # the loss won back, its boxes still changed on 31 of 48 pictures with the float part FP32).
        if worst.control_level in (DEGRADE, COLLAPSE) and worst.control_headline:
            text += (f" by cosine, while by its decisions the control still {worst.control_level}s "
                     f"({worst.control_headline}): the rest is INT8's")
    constants = [r for r in evidence.overflowing if r.kind == "constant"]
    activations = [r for r in evidence.overflowing if r.kind == "activation"]
    if constants:
        text += f"; {plural(len(constants), 'FP16 constant')} overflowed to inf, e.g. {constants[0].tensor} " \
                f"({_fp32_max(constants[0], 'FP32 max ')})"
    if activations:
        text += f"; {plural(len(activations), 'FP16 activation')} {verb(len(activations), 'exceeds')} {FP16_MAX:g} in FP32, e.g. " \
                f"{activations[0].tensor} ({_fp32_max(activations[0])})"
    return text


def _evidence(evidence: Fp16Evidence) -> tuple:
    rows = tuple((g.output, rounded(g.qdq), rounded(g.control), rounded(g.recovered), rounded(g.qdq_top1),
                  rounded(g.control_top1), g.qdq_nonfinite, g.control_nonfinite) for g in evidence.gains)
    items: list = [Metric("share of the loss the FP32 float part wins back", rounded(evidence.worst.recovered),
                          threshold=f">= {RECOVERED_MIN}"),
                   Table("Measured control: QDQ model vs the same model with its float part in FP32 (both vs ORT FP32)",
                         ("output", "QDQ cosine", "control cosine", "share won back", "QDQ top-1", "control top-1",
                          "QDQ NaN/Inf", "control NaN/Inf"), rows,
                         note="median per-sample cosine against ORT FP32; top-1 agreement is shown, and the "
                              "report's own judgement of both runs' decisions counts (near ties left out: they flip "
                              "with any rounding change)")]
    damaged = evidence.overflowing + [r for r in evidence.flushed if r not in evidence.overflowing]
    if damaged:
        items.append(_damage_table(damaged))
    else:
        # Not "FP16 rounding": a new user's ResNet-50 embedding (EfficientWord-Net) lost cosine 0.42 -> 0.99 with its
        # float part in FP32, and also agreed (0.995) in FP16 with ONNX Runtime's Q/DQ fusion disabled: the loss was
        # how ORT's CPU kernels run FP16 around the fused Q/DQ nodes, which TensorRT does not share.
        items.append(Text("No FP16 constant overflowed and no FP16 activation passes 65504 in FP32. What this control "
                          "measured is the FP16 float part as ONNX Runtime runs it: FP16 rounding, values too small "
                          "for FP16 inside an operator, or ONNX Runtime's own CPU kernels for FP16 around its fused "
                          "Q/DQ nodes (the same model with session option session.disable_quant_qdq=1 tells the last "
                          "apart). TensorRT runs FP16 its own way: its FP16 and INT8 stages (collect on a GPU "
                          "machine, or import their results) show whether a TensorRT engine loses the same."))
    items.append(Text("Separating evidence: INT8 causes are present in the control too, so they cannot explain "
                      "what it wins back; what the control still loses is INT8's share (see the other findings)."))
    return tuple(items)


def _fixes(ctx: Context, evidence: Fp16Evidence) -> tuple[Fix, ...]:
    fixes = [Fix("Quantize with the non-quantized part kept in FP32", requantize_command(ctx, Change(float_part_fp32=True)))]
    # A damaged constant is fixed by keeping its reader in FP32. An activation beyond 65504 is not: ModelOpt would
    # cast it back to FP16 for the next node, so for those the whole float part stays FP32 (the first fix).
    op_types = sorted({r.op_type for r in evidence.overflowing + evidence.flushed if r.kind == "constant"
                       and r.op_type and r.op_type not in ("QuantizeLinear", "DequantizeLinear")})
    if op_types:
        fixes.append(Fix("Or keep only the op types that read the damaged values in FP32 (ModelOpt 0.47 excludes op "
                         "types from the FP16 conversion, not single nodes)",
                         requantize_command(ctx, Change(fp32_op_types=tuple(op_types)))))
    return tuple(fixes)
