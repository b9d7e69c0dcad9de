"""QR002: numerically sensitive nodes (softmax, sigmoid, norms, heads) quantized to INT8."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import (ARRIVED_SHARE, LOCAL_BAD_COSINE, TENSOR_COSINE_BAD, BornUpstream,
                                      born_upstream, heads_pass_on, layer_tables, passed_on)
from qdqreport.analysis.broken_scales import destroys_tensor, sentinel_scale
from qdqreport.analysis.quantizer import HEAD_PATTERNS, crushed_weights, node_op_types, recipe_shape, sensitive_in_int8
from qdqreport.analysis.output_grid import ZEROED_SHARE, GriddedOutput
from qdqreport.analysis.output_grid import words as grid_words
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import (Change, exclusion, exclusion_fix, excluded_precision, per_layer_command,
                             resolve_exclusions)
from qdqreport.rules._common import clamp01, outputs_collapse, outputs_diverge, rounded, weights_severity
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_graph, classifier_run

from qdqreport.rules._measured import REFUTED_SCORE, capped, rerank
from qdqreport.wording import plural, verb
# A sensitive node whose Q/DQ pair puts a graph output on an erasing grid: measured, not a heuristic (ranks with the
# measured calibration findings, 0.8) and direct (analysis/output_grid.py).
GRID_SCORE, GRID_CONFIDENCE = 0.8, 0.85
# At or above this its own output is faithful: INT8 left the node's result where FP32 had it (to a thousandth).
FAITHFUL_TENSOR = 0.999


def _head_and_softmax_int8(b):
    logits = class_logits(32, seed=11)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.9, shrink=0.5, seed=12))
    b.artifact("precision_summary", classifier_graph(head_precision="int8", softmax_precision="int8"))
    b.tensors("quantization", [_row("linear_1.tmp_0", "MatMul@0", "MatMul", 0.93, 8.7),
                               _row("softmax_0.tmp_0", "Softmax@0", "Softmax", 0.95, 10.2)])


def _error_arrives_at_their_inputs(b):
    # The same graph, but each node reads an input already as damaged: it passes the error on (a new user's U2-Net-p).
    _head_and_softmax_int8(b)
    b.tensors("quantization", [{**_row("linear_1.tmp_0", "MatMul@0", "MatMul", 0.93, 8.7),
                                                "input_tensor": "pool_0.tmp_0", "local_cosine": 0.9996, "local_sqnr_db": 31.0},
                               {**_row("softmax_0.tmp_0", "Softmax@0", "Softmax", 0.95, 10.2),
                                "input_tensor": "linear_1.tmp_0", "local_cosine": 0.9993, "local_sqnr_db": 29.4}])


def _sensitive_nodes_kept_fp16(b):
    # ModelOpt's default: the head and the softmax stay FP16, only the convolutions are INT8.
    logits = class_logits(32, seed=11)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=12))
    b.artifact("precision_summary", classifier_graph(head_precision="fp16", softmax_precision="fp16"))


def _softmax_output_quantized_for_consumer(b):
    # The Softmax runs in FP16; only its output is quantized, as the next MatMul's INT8 input.
    _sensitive_nodes_kept_fp16(b)
    graph = classifier_graph(head_precision="fp16", softmax_precision="fp16")
    graph["sensitive"][1]["quantized"] = True  # the collector marks an output feeding a QuantizeLinear too
    b.artifact("precision_summary", graph)


def _softmax_output_on_grid(b):
    # The output Softmax of a 50-class head quantized (quantize_static with every op type): the probabilities the
    # application reads come on a grid of step 1/127, the small ones exactly 0 (the thirty-first part's VAD).
    logits = class_logits(32, classes=50, seed=11)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", [{k: np.round(v * 127) / 127 for k, v in s.items()}
                        for s in classifier_run(logits, noise=0.05, seed=12)])
    b.artifact("precision_summary", classifier_graph(head_precision="fp16", softmax_precision="int8"))


def _row(tensor: str, node: str, op_type: str, cosine: float, sqnr: float) -> dict[str, Any]:
    return {"tensor": tensor, "node": node, "op_type": op_type, "samples": 32, "cosine": cosine,
            "sqnr_db": sqnr, "max_abs": 2.4, "rel_l2": 0.3, "ref_absmax": 9.1}


@rule(id="QR002", slug="sensitive-op-quantized", title="Sensitive operators are quantized to INT8",
      examples=[Fires("final MatMul and Softmax in INT8", _head_and_softmax_int8),
                Fires("the same, the error arriving at their inputs (a warning under the symptom)",
                      _error_arrives_at_their_inputs),
                Fires("the output Softmax quantized: its probabilities on an 8-bit grid, most exactly 0",
                      _softmax_output_on_grid),
                Quiet("head and Softmax left in FP16", _sensitive_nodes_kept_fp16),
                Quiet("Softmax in FP16, only its output quantized for the next MatMul",
                      _softmax_output_quantized_for_consumer)])
def sensitive_op_quantized(ctx: Context) -> Iterator[Finding]:
    """Softmax, sigmoid, layer-norm, log, final MatMul or detection-head nodes that run in INT8.

    Severity follows the impact on the outputs (analysis/agreement.py): an error when the
    quantized model's outputs collapse (decisions change: top-1, threshold flips, map IoU,
    detections), a warning when they degrade or when no outputs were compared; info when the
    measured outputs agree (the node is INT8, harmlessly here, whatever its own tensor's cosine),
    and info too when they only degrade while the nodes' own outputs were measured faithful
    (tensor cosine 0.999 or more: the damage is elsewhere), unless one of them is a head, whose
    output is the logits the degraded decisions are read from.
    When many other nodes are INT8 as well, the node's tensor error may be inherited from
    upstream: the confidence is then 0.65, not 0.85, and the finding names the experiment that
    separates the two (exclude the nodes, collect again). When the calibration inputs differ from
    the evaluation inputs (noise, or a preprocessing step analysis/preprocessing.py names), every
    range is off and the nodes' error is expected from that: the confidence is at most 0.45, the
    score at most 0.2 and the severity at most a warning (under every calibration finding, as when a
    what-if refutes the exclusions), and the finding says to fix the calibration first. The same holds
    when the calibration range misses a quarter of the evaluation inputs' span on a quarter of the
    samples (analysis/coverage.py: darker pictures, quieter recordings), and, with or without the
    calibration file, when the model's own input quantizer clips a tenth of the evaluation values or
    is barely used by them (analysis/input_range.py: a calibration reader that skipped a step), or when the
    calibration inputs hold other content (a mean over one evaluation std away, QR006: clean speech calibrating a VAD
    evaluated on noisy clips; analysis/upstream.py).

    A node that reads a Q/DQ pair with a NaN or Inf scale (an attention mask's -inf in the
    calibrated range: analysis/broken_scales.py) computes on NaN: read from the graph, that is
    certain (confidence 0.9, scored as the whole damage when the outputs diverge) whatever the
    calibration inputs, and the finding says why.

    A softmax, sigmoid, layer-norm, log or log front end counts only when its inputs are INT8; its output feeding a
    QuantizeLinear (the next MatMul quantized) is not the node running in INT8.

    Why it matters: these nodes turn small differences into decisions (class probabilities,
    box scores) or normalise by statistics INT8 cannot resolve. A single INT8 softmax or head
    can flip the top class while the backbone is quantized perfectly well. A log exists to compress
    an input that spans decades (a power spectrum): one INT8 scale keeps only its loudest values,
    whether the INT8 tensor is the log's input or the output of the Conv that computes it (an STFT
    as Convs, "log_front_end"; its error is measured on the log's output, where it shows). The layers that embed a
    condition (a noise level, timestep or label input beside the content input, "conditioning") set every block's
    scale and shift: ModelOpt's diffusion examples keep time_embedding and time_emb_proj out of INT8, and the
    thirty-seventh part's terrain generator with its 59 conditioning Gemms in INT8 doubled its height error. A Gather
    whose lookup table is an INT8 weight ("embedding") gives every token's vector one scale set by the table's largest
    value (quantize_static has no per-row form for it; ModelOpt's and quantize_static's usual recipes keep it float):
    hama's G2P encoder with its jamo embedding in INT8 changed 6 of 1000 words' pronunciation, its healthy recipe 1.

    Measured evidence outranks this heuristic (analysis/evidence.py): when the what-if refutes the
    exclusions, the finding drops to a warning scored under the calibration findings and quotes the
    measurement that refuted it; when the what-if confirms them, it keeps its severity and score.
    Per-layer localisation does too (analysis/layers.born_upstream): when every flagged node it measured adds
    little error itself (local cosine 0.99 or more, fed FP32 inputs) while a node before them adds it (QR201), their
    tensor error is inherited: at most a warning, scored under that node's finding, quoting both (a new user's
    U2-Net-p: 14 output Convs and Sigmoids flagged, the error born at one BatchNorm-folded Conv; excluding the 14, run
    for real, moved the foreground IoU from 0.655 to 0.659).

    A head's warning stands on its output falling short of faithful at all (a head's shortfall is the degradation
    itself); when every flagged node is a head and each, recomputed from FP32 inputs, adds under a tenth of its
    output's error itself (analysis/layers.heads_pass_on), the error arrives at it: capped the same way (a new user's
    key CNN: its 1x1 head at output cosine 0.9964, local 0.99993; excluding it kept the same 9 of 160 key changes).

    The default collect localises too, on the flagged nodes only: its sensitive-node pass recomputes each from the
    FP32 model's values of what it reads, quantized as in the QDQ model (collect/sensitive_local.py: per-layer's local
    error, for these nodes). When every flagged node with a bad output (tensor cosine below 0.98) adds little itself
    (local cosine 0.99 or more), the error arrives at them: at most a warning, scored at most 0.2, quoting the worst
    node's output and local cosine, and its first fix is collect --per-layer, the exclusion second (a new user's
    U2-Net-p without --per-layer: QR002 led with an error, "14 sensitive nodes"). Comparing a node's output SQNR with its
    input's would not do: U2-Net-p's fusing 1x1 Conv adds nothing itself yet falls from 11.9 to 5.3 dB, its weights
    of both signs cancelling the signal and not the errors. Where either localisation measured the flagged nodes
    passing on an error that reaches them (and no output grid of theirs erases values), the finding is info: a lead,
    not a cause (a new user's PP-OCRv6 text detector ranked it first as a warning; its head and Sigmoid kept float
    changed 33 of 200 samples' boxes against 32).
    A flagged node whose own Q/DQ pair sits on a graph output hands the application an 8-bit grid
    (analysis/output_grid.py): when the stored outputs show it erasing a tenth or more of FP32's non-zero values (a
    Softmax's small probabilities read exactly 0), that is measured, direct evidence (score 0.8, confidence 0.85) that
    no control can refute: the unfused run and the FP32-float control keep the same Q/DQ values. The thirty-first
    part's FSMN VAD with every op type quantized: 91% of its 248 state probabilities exactly 0, 13 of 768 top-1
    decisions changed, funasr's decode (the log of the silence probability) raised on 71 of 96 clips; the unfused
    control "agreed" on top-1 and ranked the S8S8 kernels first. Excluding the flagged nodes (the fix, measured): 79
    clips cut otherwise became 14, the rest the kernels' (QR012). The default collect's own localisation still caps
    it: when the error arrives at the flagged nodes from upstream, the grid only rounds an output already lost (a new
    user's PP-OCRv5 recognizer with every op type quantized: CER 99.7%, and 99.75% with the flagged nodes excluded).
    A dense map or image is never read so: a threshold far above half a grid step decides it, and what the grid rounds
    to 0 cannot cross one (the PP-OCRv6 detector's background at 1e-5, its threshold 0.2).

    Fix: re-quantize with these nodes excluded (ModelOpt --nodes_to_exclude with the exact,
    regex-escaped names, or --op_types_to_exclude when every node of the type is at fault;
    quantize_static's nodes_to_exclude, or the op type left out of op_types_to_quantize). A node the
    quantizer does not quantize itself cannot be excluded by its name (fixes.resolve_exclusions): a
    Softmax after an INT8 MatMul under quantize_static reads that MatMul's quantized output, so the
    command excludes the MatMul and the fix says so ("... reads the INT8 output of MatMul X: exclude
    X"); under ModelOpt, which never quantizes a Softmax and quantizes inputs only, it excludes the
    other consumers whose shared Q/DQ pair the Softmax reads. A named node no such node frees is
    listed as not acted on, never dropped silently.
    """
    flagged = sensitive_in_int8(ctx.precision)
    if not flagged:
        return
    comparison = ctx.comparison("quantization")
    errors = {r.tensor: r for r in (ctx.tensor_rows(comparison.id) if comparison else [])}
    measured = [errors[s["tensor"]] for s in flagged if s["tensor"] in errors]
    worst = min((r.cosine for r in measured if r.cosine is not None), default=None)
    # The user's own decode (collect --postprocess) judges the task beside the raw outputs (analysis/agreement.py).
    diverged, collapsed = outputs_diverge(ctx, "quantization"), outputs_collapse(ctx, "quantization")
    outputs_measured = comparison is not None and bool(ctx.output_summaries(comparison.id))
    bad_tensor = worst is not None and worst < TENSOR_COSINE_BAD
    finite = worst is not None and not math.isnan(worst)  # NaN: the QDQ model computes NaN there (a NaN/Inf scale)
    # The tensor error of a sensitive node includes whatever its inputs bring: when many other
    # nodes are INT8 too, part of it may be inherited, so the confidence that the node is the
    # cause stays moderate and the finding names the experiment that separates the two.
    others = max(0, ((ctx.precision or {}).get("counts") or {}).get("quantized_nodes", 0) - len(flagged))
    inherited = others > len(flagged)
    # Calibration inputs unlike the evaluation inputs (QR003's preprocessing step, QR009's noise, QR006's coverage gap:
    # analysis/upstream.py) put every range off: the sensitive nodes' tensor error is then expected, and no longer
    # evidence that they are the cause.
    upstream = calibration_upstream(ctx)
    # Per-layer localisation measured each node on FP32 inputs: when every flagged node adds little error itself and
    # a node before them does, their tensor error is that node's, inherited (QR201 names it): scored under it.
    born = born_upstream(layer_tables(ctx), [s["tensor"] for s in flagged])
    # An input pair with a NaN/Inf scale (a mask's -inf in the calibrated range) is read from the graph, not guessed
    # from tensor errors: the node computes on NaN whatever the calibration data, so neither the upstream cap nor the
    # inheritance doubt applies to it.
    nan_inputs = _nan_inputs(ctx, flagged)
    # A head's output is the logits the decisions are read from: when they degrade, a cosine of 0.9999 there is the
    # degradation itself, not evidence that the damage is elsewhere (the twenty-seventh part's morpheme head in INT8:
    # tensor cosine 0.9999, 147 of 629 words segmented otherwise against the healthy controls' 17-22).
    faithful = (finite and worst >= FAITHFUL_TENSOR and not nan_inputs
                and not any(s["pattern"] in HEAD_PATTERNS for s in flagged))
    rows = tuple((s["node"], s["op_type"], s["pattern"], *_errors(errors.get(s["tensor"]))) for s in flagged)
    names = ", ".join(s["node"] for s in flagged[:4]) + (" …" if len(flagged) > 4 else "")
    crushed = None if nan_inputs or born else _crushed_line(ctx, flagged)
    arrives = None if nan_inputs or born or crushed else _arrives_at_inputs(flagged, errors)
    cause = None if nan_inputs else _birth_line(born) if born else (crushed or arrives)
    # An output the flagged node hands over on an 8-bit grid is measured damage every control keeps (the unfused run
    # has the same Q/DQ values): no control refutes it (analysis/output_grid.py). Measured localisation still does:
    # when the error arrives at the flagged nodes from upstream, the grid only rounds an output already lost (a new
    # user's PP-OCRv5 recognizer, every op type quantized: its CTC Softmax on a grid, CER 99.7% with it and without).
    grids = _output_grids(ctx, flagged)
    # The activations' width as the graph records it: a new user's QInt16 model read "quantized to INT8".
    integer = f"INT{recipe_shape(ctx.precision, ctx.modelopt_log).activation_bits}"
    yield _under(cause, rerank(ctx, _on_grid(grids, upstream, sensitive_op_quantized.finding(
        title=f"{plural(len(flagged), 'sensitive node')} quantized to {integer}", subject=names,
        # Severity from impact: an error only when the outputs' decisions collapse; a node whose damage the
        # measured outputs absorb (they agree) is harmless here, so it is shown as info. When the calibration inputs
        # differ (upstream), the collapse is the calibration finding's error; this node is a suspect behind it.
        # A node whose own output was measured faithful (FAITHFUL_TENSOR) while the outputs merely degrade is not
        # where the damage is: info, as when they agree (LEADER's attention Sigmoid at 0.9995 on every healthy control).
        severity=("error" if collapsed and (nan_inputs or not upstream) else
                  "warning" if (diverged and not faithful) or not outputs_measured else "info"),
        # Direct evidence is the node's own tensor error; a diverged output alone is indirect.
        confidence=NAN_INPUT_CONFIDENCE if nan_inputs and diverged else min(
            (0.65 if inherited else 0.85) if bad_tensor else 0.6 if diverged else 0.45,
            UPSTREAM_CONFIDENCE if upstream else 1.0),
        # Tensor cosine 0.9 on a softmax or head already flips decisions: count it as the whole damage. When the
        # calibration inputs differ (upstream), that damage is what the calibration finding predicts: scored under
        # it, as a what-if that refutes the exclusions would (rules/_measured.REFUTED_SCORE).
        score=NAN_INPUT_SCORE if nan_inputs and diverged else min(
            max(clamp01((1 - worst) * 10) if finite else 0.2, 0.5 if diverged else 0.0),
            REFUTED_SCORE if upstream else 1.0),
        # "Take INT8-quantized inputs", not "run in INT8": ONNX Runtime computes a Softmax or a Log that reads a
        # DequantizeLinear in float, on the quantized values (a new user read the old words as the op itself in INT8).
        summary=f"{names} {verb(len(flagged), 'takes')} {integer}-quantized inputs" + (
            f"; {_their(flagged)} outputs reach cosine {worst:.3f} against FP32" if finite
            else f"; the QDQ model computes NaN in {_their(flagged)} outputs" if worst is not None
                                          else "") + ("; the quantized model diverges" if diverged else ""),
        evidence=(*([Metric("worst sensitive tensor cosine", rounded(worst), threshold=f"< {TENSOR_COSINE_BAD}")]
                    if worst is not None else []),
                  Table(f"Sensitive nodes in {integer}", ("node", "op type", "pattern", "tensor cosine", "SQNR dB",
                                                    "max |Δ|"), rows,
                        note=_table_note(flagged, bool(measured))),
                  *([Text(_nan_words(nan_inputs))] if nan_inputs else []),
                  *([Text(f"{others} other nodes are {integer} too, so part of this tensor error may be inherited from "
                          "upstream. Separating evidence: re-quantize with these nodes excluded (the fix below) and "
                          "collect again; if the outputs still diverge, the damage is born upstream (per-layer "
                          "localisation shows where).")] if inherited and (bad_tensor or diverged) and not nan_inputs
                    else []),
                  *([Text(f"The calibration inputs differ from the evaluation inputs ({upstream}): every calibrated range "
                          "inherits that, so these nodes' error is expected from it. Fix the calibration first and "
                          "collect again before excluding nodes.")] if upstream and not nan_inputs else [])),
        fixes=_node_fixes(ctx, flagged, born_unseen=arrives is not None and not ctx.layers_summary),
        stage=comparison.id if comparison else "", tags=("root_cause",))), _acted_on(ctx, flagged),
        controls_share=bool(grids)), passed_on_here=cause is not None and cause is not crushed and not grids)


def _node_fixes(ctx: Context, flagged: list[dict[str, Any]], born_unseen: bool) -> tuple[Fix, ...]:
    """Excluding the flagged nodes; after a per-layer collect first when the default collect measured the error
    arriving at them from upstream (part 37's terrain generator: its output Conv adds little itself, local cosine
    0.995, and the only fix given was to exclude it)."""
    exclude = exclusion_fix(ctx, f"{'Or re-quantize' if born_unseen else 'Re-quantize'} keeping these nodes in "
                                 f"{excluded_precision(ctx)}", _exclusions(ctx, flagged))
    if not born_unseen:
        return (exclude,)
    return (Fix("Find where the error is born first: these nodes pass on an error that reaches them (measured "
                "above), so collect again with --per-layer and work through the layer it names", per_layer_command(ctx)),
            exclude)


def _output_grids(ctx: Context, flagged: list[dict[str, Any]]) -> list[GriddedOutput]:
    """The graph outputs on an erasing 8-bit grid, when a flagged node's quantized output feeds a graph output."""
    nodes = {n.get("name"): n for n in (ctx.precision or {}).get("nodes") or []}
    feeds = any(nodes.get(s["node"], {}).get("feeds_graph_output") and nodes.get(s["node"], {}).get("output_quantized")
                for s in flagged)
    return ctx.erasing_grids if feeds else []


def _on_grid(grids: list[GriddedOutput], upstream: str, finding: Finding) -> Finding:
    """*finding* with the grid's measurement: direct evidence, scored GRID_SCORE (under a calibration the bundle
    proves unlike the evaluation data the grid's step is that calibration's, and the cap stays)."""
    if not grids:
        return finding
    grid = max(grids, key=lambda g: g.zeroed)
    return replace(finding, score=finding.score if upstream else max(finding.score, GRID_SCORE),
                   confidence=finding.confidence if upstream else max(finding.confidence, GRID_CONFIDENCE),
                   summary=f"{finding.summary}; {grid_words(grid)}",
                   evidence=(Metric(f"FP32's non-zero values of output {grid.output} read as exactly 0",
                                    rounded(100 * grid.zeroed, 1), unit="%", threshold=f">= {ZEROED_SHARE:.0%}"),
                             *finding.evidence,
                             Text("Measured on the stored outputs. A decode that takes these values' log, divides "
                                  "by them or thresholds them below the grid's step reads 0 where FP32 had a small "
                                  "value (an argmax over them is barely moved). The unfused control keeps the same "
                                  "Q/DQ values, so it cannot win this back; keeping the node that feeds the output in "
                                  "float (the fix) removes the output's Q/DQ pair.")))


def _under(cause: Text | None, finding: Finding, passed_on_here: bool = False) -> Finding:
    """*finding* scored under the cause *cause* names (a node per-layer localisation shows the error born at, or
    per-tensor weights that crush channels upstream): at most a warning, REFUTED_SCORE, with the evidence quoted; info
    where the nodes were measured to pass on an error that reaches them (*passed_on_here*)."""
    if cause is None:
        return finding
    severity, score = capped(finding.severity, finding.score)
    if passed_on_here:
        # Measured not to be where the error is born: a lead to follow, not a cause (a new user's text detector ranked
        # it first as a warning; excluding its head and Sigmoid changed 33 of 200 samples' boxes against 32).
        severity = "info"
    return replace(finding, severity=severity, score=score, confidence=min(finding.confidence, UPSTREAM_CONFIDENCE),
                   evidence=(*finding.evidence, cause))


def _birth_line(born: BornUpstream) -> Text:
    birth = born.birth
    return Text(f"Per-layer localisation: these nodes add little error themselves (local cosine {born.own_lowest:.3f} "
                f"or more, each fed FP32 inputs), while {birth['node']} ({birth['op_type']}) before them adds it "
                f"(local cosine {_cosine_words(birth.get('local_cosine'))}): their tensor error is inherited from there "
                "(see the error-birth finding). Excluding them alone is not expected to help.")


def _crushed_line(ctx: Context, flagged: list[dict[str, Any]]) -> Text | None:
    """Per-tensor Conv/Gemm/MatMul weights of other nodes that crush output channels (analysis/quantizer.
    crushed_weights, QR013): the flagged nodes' tensor error is what that predicts, as for a calibration unlike the
    evaluation data (a new user's U2-Net-p with per_channel=False: 34 weights, IoU 0.003)."""
    names = {s["node"] for s in flagged}
    crushed = [w for w in crushed_weights(ctx.precision) if w.matrix and w.consumer not in names]
    if not crushed or weights_severity(ctx, crushed) != "error":  # only where QR013 is the error
        return None
    return Text(f"{plural(len(crushed), 'per-tensor weight')} of other nodes crush output channels (see the "
                "per-tensor weights finding): every layer after them computes on what is left, so these nodes' error "
                "is what that predicts. Quantize the weights per channel first, then collect again.")


def _arrives_at_inputs(flagged: list[dict[str, Any]], errors: dict[str, Any]) -> Text | None:
    """The default collect's own localisation (collect/sensitive_local.py recomputes each flagged node from FP32
    inputs, quantized as in the QDQ graph): when every flagged node whose output is bad adds little itself
    (analysis/layers.passed_on), the error arrives at them; None otherwise."""
    rows = [errors[s["tensor"]] for s in flagged if s["tensor"] in errors]
    bad = passed_on(rows, TENSOR_COSINE_BAD)
    criterion = (f"each of the {len(bad)} with a bad output adds little itself (local cosine {LOCAL_BAD_COSINE} or "
                 "more") if bad else ""
    if bad is None and not any(r.cosine is not None and r.cosine < TENSOR_COSINE_BAD for r in rows):
        # No bad output: the warning stands on heads (a head's shortfall is the degradation itself); measured, their
        # own share of it may be nil.
        heads = [errors[s["tensor"]] for s in flagged if s["tensor"] in errors and s["pattern"] in HEAD_PATTERNS]
        bad = heads_pass_on(heads, FAITHFUL_TENSOR) if heads and len(heads) == len(rows) else None
        criterion = (f"each head adds under {ARRIVED_SHARE:.0%} of its output's error itself (1 - local cosine "
                     "against 1 - output cosine")
    if bad is None:
        return None
    worst = min(bad, key=lambda r: r.cosine)
    reads = f" (reading {worst.input_tensor})" if worst.input_tensor else ""
    return Text(f"Measured: the error reaches these nodes from before them. {worst.node}{reads} outputs cosine "
                f"{worst.cosine:.3f}, yet recomputed from FP32 inputs (quantized as in the QDQ model) it reaches "
                f"cosine {worst.local_cosine:.4f}; {criterion}, on the first {worst.samples} samples). The damage is "
                "born upstream: collect --per-layer localises it; excluding these nodes alone is not expected to help.")


def _cosine_words(value: Any) -> str:
    return "unmeasured" if value is None else f"{float(value):.3f}"


UPSTREAM_CONFIDENCE = 0.45  # the confidence of a node finding whose error a calibration-input mismatch explains
# A node reading a NaN/Inf-scale pair while the outputs diverge: the graph shows the NaN, as certain as QR004's defects
# (confidence 0.9) and scored as the whole damage; QR004 lists the same pairs under this finding.
NAN_INPUT_CONFIDENCE, NAN_INPUT_SCORE = 0.9, 0.9


def _their(flagged: list[dict[str, Any]]) -> str:
    return "its" if len(flagged) == 1 else "their"


def _nan_inputs(ctx: Context, flagged: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Q/DQ pairs with a NaN/Inf scale that a flagged node reads (analysis/broken_scales.py)."""
    names = {s["node"] for s in flagged}
    op_types = node_op_types(ctx.precision)
    return [e for e in (ctx.precision or {}).get("qdq", [])
            if destroys_tensor(e, op_types) and names & set(e.get("consumers") or [])]


def _nan_words(pairs: list[dict[str, Any]]) -> str:
    tensors = ", ".join(e["tensor"] for e in pairs[:4]) + (" …" if len(pairs) > 4 else "")
    readers = ", ".join(dict.fromkeys(c for e in pairs for c in e.get("consumers") or []))
    if all(sentinel_scale(e) for e in pairs):
        largest = max(float(e["scale_max"]) for e in pairs)
        return (f"The Q/DQ pair(s) on {tensors}, read by {readers}, have a scale of {largest:.3g}: the calibrated range "
                "held a sentinel (an attention mask's (1 - mask) * float32.min, -3.4e38, added to the scores is the "
                "usual source), so every ordinary value rounds to the zero point and the reader sees a constant. "
                "Keeping these nodes float removes the pairs (or build the mask with a finite value such as -1e4 "
                "before quantizing).")
    return (f"The Q/DQ pair(s) on {tensors}, read by {readers}, have a NaN or Inf scale: the calibrated range held "
            "-inf or NaN (an attention mask added before a Softmax is the usual source), so QuantizeLinear sends every "
            "value to 0 and DequantizeLinear writes 0 x Inf = NaN over the whole tensor. A later QuantizeLinear can "
            "turn the NaN into numbers, so the outputs stay finite while this branch carries nothing. Keeping these "
            "nodes float removes the pairs; QR004 lists them with the other broken scales.")


def _table_note(flagged: list[dict[str, Any]], measured: bool) -> str:
    if not measured:
        return "no per-tensor errors in the bundle (collect with tensors enabled)"
    logs = sorted({s["tensor"] for s in flagged if s["pattern"] == "log_front_end"})
    return (f"log_front_end rows are measured on the Log's output ({', '.join(logs)}), where the loss of the quiet "
            "values shows; the node's own output keeps its loud values") if logs else ""


def _errors(row: dict[str, Any] | None) -> tuple[Any, Any, Any]:
    return (None, None, None) if row is None else (rounded(row.cosine), rounded(row.sqnr_db, 1),
                                                    rounded(row.max_abs))


def _acted_on(ctx: Context, flagged: list[dict[str, Any]]) -> tuple[str, ...]:
    """The flagged nodes and the nodes a command excludes to free them (a Softmax's INT8-quantized producer): what a
    what-if exclusion must touch to have measured this finding."""
    names = [s["node"] for s in flagged]
    return tuple(dict.fromkeys([*names, *resolve_exclusions(ctx, exclusion(names)).change.exclude_nodes]))


def _exclusions(ctx: Context, flagged: list[dict[str, Any]]) -> Change:
    """Exclude whole op types when every node of that type is flagged, else the nodes by name."""
    nodes = (ctx.precision or {}).get("nodes", [])
    flagged_names = {s["node"] for s in flagged}
    whole = {s["op_type"] for s in flagged
             if {n["name"] for n in nodes if n["op_type"] == s["op_type"]} <= flagged_names
             and any(n["op_type"] == s["op_type"] for n in nodes)}
    return exclusion([s["node"] for s in flagged if s["op_type"] not in whole], whole)
