"""QR013: weights quantized with one scale per tensor whose smaller output channels keep a few integer levels."""

from __future__ import annotations

from typing import Any, Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import LOCAL_BAD_COSINE, error_births, layer_tables
from qdqreport.analysis.quantizer import CRUSHED_LEVELS, CrushedWeight, constant_op_types, crushed_weights, made_by
from qdqreport.analysis.saturation import per_channel_saturates_here
from qdqreport.analysis.target import ONNXRUNTIME
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.fixes import Change, initializer_weights_command, requantize_command
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import outputs_diverge, weights_severity
from qdqreport.rules._measured import REFUTED_SCORE, under_ranges
from qdqreport.testing.recipes import (CLS_OUTPUT, class_logits, classifier_graph, classifier_run, qdq_entry)
from qdqreport.wording import plural, verb

LIST_LIMIT = 12


def _weights(levels: list[dict[str, Any]]):
    """The classifier graph with per-tensor weights of the given channel-level histograms on Conv@0.."""
    graph = classifier_graph()
    graph["qdq"] += [qdq_entry(f"conv{i}.weight", [f"Conv@{i}"], kind="weight", axis=None, scale_count=1,
                               channel_levels=level) for i, level in enumerate(levels)]
    return graph


# A new user's U2-Net-p quantized with per_channel=False: its first Conv keeps 14 of 64 output channels at 0 or 1 level.
_STEM = {"channels": 64, "axis": 0, "histogram": [9, 5, 0, 4, 16, 17, 11, 2]}
_EVEN = {"channels": 64, "axis": 0, "histogram": [0, 0, 0, 1, 3, 12, 30, 18]}


def _crushed(broken: bool):
    def build(b):
        logits = class_logits(32, seed=11)
        b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
        b.stage("ort_qdq", classifier_run(logits, noise=0.9 if broken else 0.01, shrink=0.5 if broken else 1.0,
                                          seed=12))
        b.artifact("precision_summary", _weights([_STEM, _EVEN]))
    return build


def _even(b):
    logits = class_logits(32, seed=11)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.9, shrink=0.5, seed=12))
    b.artifact("precision_summary", _weights([_EVEN, _EVEN]))


@rule(id="QR013", slug="per-tensor-weights", title="Per-tensor weights crush small output channels",
      examples=[Fires("per-tensor weights crush 14 of 64 channels and the outputs collapse (a warning: unmeasured)",
                      _crushed(True)),
                Fires("the same weights while the outputs agree (info)", _crushed(False)),
                Quiet("per-tensor weights whose channels all keep 4 levels or more", _even)])
def per_tensor_weights(ctx: Context) -> Iterator[Finding]:
    """Weights quantized with one scale for the whole tensor, where a tenth or more of the output channels (at least
    two) reach at most 3 integer levels from zero: the one scale is set by the largest channel, and a channel whose
    weights are 40x smaller rounds to a handful of values or to 0 (collect/precision.py counts, for every 8-bit
    per-tensor weight, how many levels each output channel reaches: `channel_levels`).

    Why it matters: BatchNorm folded into a convolution scales each output channel by its own factor, so a layer's
    channels often differ 10-100x in size. Per-channel weight scales (ModelOpt's default; quantize_static's
    per_channel=True) give each channel all 255 levels. A new user's U2-Net-p quantized with per_channel=False kept
    foreground IoU 0.003 against FP32 (per-channel: 0.655), its first Conv keeping 14 of 64 channels at 0 or 1 level;
    another's MRZ segmenter had a BatchNorm written as a Mul whose per-tensor constant rounded 49 of 64 channels to 0.

    Channels dead before quantization (their largest weight 1e-7 of the tensor's or less, read from the FP32 model)
    lose nothing by rounding to 0 and are not counted. A Gather's lookup table (an embedding) is counted by its rows,
    the tokens' vectors (bundles collected before 2026-11-28 counted it value by value, which says nothing of its
    rows: not read); its fix keeps the Gather float, as quantize_static gives a table one scale, per_channel or not.

    Severity from impact (analysis/agreement.py, rules/_common.weights_severity): an error when the outputs collapse and
    Conv, Gemm or MatMul weights are crushed together with elementwise constants (PP-OCRv5 below), or the per-layer pass
    measures the node that adds the most error itself (local cosine, fed FP32 inputs) reading a crushed weight; a
    warning when they collapse otherwise: matrix weights alone (new users measured per-channel weights against them:
    U2-Net-p IoU 0.003 -> 0.655, but PP-OCRv4's DBNet under ModelOpt recall 0.755 -> 0.787 with its map IoU lower, and a
    DBNet table detector alike with per-channel weights), elementwise constants alone, or beside NaN/Inf the QDQ model
    writes (QR005: rounding small weights cannot make them; the table detector's per-channel fix lowered its map IoU
    0.789 -> 0.693 once its head was kept float); info otherwise. Measured on real models quantized both ways (session
    34): per-tensor weights that degrade the outputs no more than per-channel ones still crush a tenth of some layer's
    channels (a text recognizer's depthwise Conv), so degraded outputs alone are no evidence against the weights; a
    warning there ranked first as a false alarm. Per-tensor weights that cost accuracy without crushing any channel
    (waifu2x: 2.7 dB of PSNR, every channel keeping 8 levels or more) are not found by this rule.

    Where the per-layer pass ran and none of the nodes reading the crushed weights is among those that add error
    themselves (analysis/layers.error_births), the finding is scored under the error birth (0.2), quoting it: a new
    user's DeepFilterNet, its decoder's weights crushed, its error born in the encoder (per-channel weights changed
    6.8% of its frames' stages, per-tensor 6.9%).

    Fix: Conv/Gemm/MatMul weights: re-quantize with one scale per output channel (quantize_static per_channel=True;
    ModelOpt does so by default, and leaves per tensor only weights it does not read as initializers: under ModelOpt the
    fix moves the FP32 model's Constant nodes into initializers first, as paddle2onnx exports need). Elementwise
    constants (a Mul or Add of a BatchNorm left unfolded): keep those nodes float, or fold the BatchNorm into the
    convolution before quantizing (quantize_static's pre-processing,
    onnxruntime.quantization.shape_inference.quant_pre_process, folds it). Where both kinds are crushed, the first fix
    does both at once: per-channel weights with every op type that reads a quantized constant (Add, Mul,
    BatchNormalization) kept float, since either change alone leaves the other's damage (a new user's PP-OCRv5
    recognizer on ONNX Runtime's defaults: CER 99.7%; per-channel alone 88.5%; both 10.6%; FP32 0.22%). On a CPU the
    bundle records without VNNI, ONNX Runtime's fused kernels can saturate on per-channel INT8 weights
    (analysis/saturation.per_channel_saturates_here): judged for ONNX Runtime the command keeps 7-bit weights
    (reduce_range=True); judged for TensorRT it does not, and a second command with it measures the model on this CPU.
    Where the calibration check's evaluation ranges restore the outputs with these weights unchanged
    (analysis/calibration_check.py), the finding is capped under the calibration finding with that measurement.
    """
    crushed = crushed_weights(ctx.precision)
    if not crushed:
        return
    matrix = [w for w in crushed if w.matrix]
    severity = weights_severity(ctx, crushed)
    elsewhere = _born_elsewhere(ctx, crushed)
    diverged = outputs_diverge(ctx)
    worst = crushed[0]
    lost = sum(w.crushed for w in crushed)
    yield under_ranges(ctx, per_tensor_weights.finding(
        title=f"{plural(len(crushed), 'per-tensor weight')} crush{'es' if len(crushed) == 1 else ''} small "
              f"{_unit(crushed)}",
        severity=severity, confidence=0.8 if severity != "info" else 0.5,
        # Measured elsewhere by the per-layer pass: a hypothesis under the node it names (a new user's DeepFilterNet:
        # the error was born at its encoder's df_conv1, the crushed decoder Convs added none, and per-channel weights
        # with reduce_range changed 6.8% of its frames' stages against 6.9%).
        score=min({"error": 0.75, "warning": 0.45}.get(severity, 0.1), REFUTED_SCORE if elsewhere else 1.0),
        subject="per-tensor:" + ";".join(w.tensor for w in crushed[:5]), stage="precision", tags=("root_cause",),
        summary=(f"{plural(len(crushed), 'weight')} quantized with one scale per tensor "
                 f"{verb(len(crushed), 'leaves')} {lost:,} {_unit(crushed)} at most {CRUSHED_LEVELS} integer "
                 f"levels from zero ({sum(w.zeroed for w in crushed):,} rounded to 0 entirely): the one scale is set "
                 f"by each tensor's largest value. The worst, {worst.tensor} of {worst.consumer or '?'} "
                 f"({worst.op_type or '?'}), keeps {worst.crushed:,} of {worst.channels:,} {worst.unit} so."
                 + ("" if diverged else f" The outputs agree here: the {_unit(crushed)} lost did not carry the "
                                        "decisions.")),
        evidence=(Metric(f"{_unit(crushed)} crushed", lost, threshold=f"at most {CRUSHED_LEVELS} levels"),
                  _table(crushed),
                  *([Text(f"Per-layer localisation: none of the nodes reading these weights is among those that add "
                          f"error themselves (local cosine under {LOCAL_BAD_COSINE}, fed FP32 inputs); the most is "
                          f"added at {elsewhere.get('node')} ({elsewhere.get('op_type')}, local cosine "
                          f"{float(elsewhere['local_cosine']):.4f}): see the error-birth finding first.")]
                    if elsewhere else [])),
        fixes=_fixes(ctx, matrix, [w for w in crushed if not w.matrix and not w.table],
                     [w for w in crushed if w.table])), "these weights")


def _unit(crushed: list[CrushedWeight]) -> str:
    """The crushed weights' counted unit where they share one (output channels, or a lookup table's rows), else
    "channels"."""
    units = {w.unit for w in crushed}
    return units.pop() if len(units) == 1 else "channels"


def _born_elsewhere(ctx: Context, crushed: list[CrushedWeight]) -> dict[str, Any] | None:
    """The per-layer pass's worst error birth when no node reading a crushed weight adds error itself; else None (no
    per-layer pass, no birth, or a crushed weight's reader among the births)."""
    tables = layer_tables(ctx)
    births = error_births(tables, limit=1000) if tables is not None else []
    readers = {w.consumer for w in crushed if w.consumer}
    if not births or any(b.get("node") in readers for b in births):
        return None
    return births[0]


def _table(crushed: list[CrushedWeight]) -> Table:
    rows = tuple((w.tensor, w.consumer, w.op_type, w.crushed, w.zeroed, w.channels) for w in crushed[:LIST_LIMIT])
    note = f"{len(crushed) - LIST_LIMIT} more not shown" if len(crushed) > LIST_LIMIT else ""
    unit = _unit(crushed)
    return Table(f"Per-tensor weights and their crushed {unit}", ("weight", "read by", "op type",
                 f"{unit} at most {CRUSHED_LEVELS} levels", f"{unit} at 0", unit), rows, note=note)


# analysis/saturation.per_channel_saturates_here, in words (a new user's DeepFilterNet: the per-channel fix printed
# without reduce_range took its suppression flips from 2.5% to 18%; with it, back at the default's level).
SATURATION_WORDS = ("on this CPU (x86 without VNNI, as the bundle records) ONNX Runtime's fused integer kernels can "
                    "saturate on per-channel INT8 weights")


def _fixes(ctx: Context, matrix: list[CrushedWeight], elementwise: list[CrushedWeight],
           tables: list[CrushedWeight]) -> tuple[Fix, ...]:
    fixes = []
    # Every op type reading a quantized constant, not only those whose constants are crushed: per-channel weights do
    # not reach them (quantize_static warns "Axis 1 is out-of-range" on a rank-1 BatchNorm scale). Either change alone
    # leaves the other's damage: a new user's PP-OCRv5 recognizer (ORT's defaults, every op type, per-tensor weights:
    # CER 99.7% against FP32's 0.22%) read 88.5% with per-channel weights alone, 94.8% with them and only its Adds
    # (whose biases were the crushed constants) float, 30.2% with its Adds and Muls float, 10.6% with its Adds, Muls
    # and BatchNormalizations float (this fix, run as printed; tests/data/bundles/ppocrv5_ort_default), measured.
    kinds = constant_op_types(ctx.precision) if elementwise else ()
    reduce = per_channel_saturates_here(ctx) and ctx.target == ONNXRUNTIME
    if matrix and kinds:
        fixes.append(Fix(f"Re-quantize with per-channel weights and the ops that read constants ({', '.join(kinds)}) "
                         "float, both at once: their constants have no per-channel form, and either change alone "
                         "leaves the other's crushed channels (the command converts an opset < 13 model first)"
                         + (f"; {SATURATION_WORDS}, so the command keeps them to 7 bits (reduce_range=True)"
                            if reduce else ""),
                         requantize_command(ctx, Change(per_channel_weights=True, exclude_op_types=kinds),
                                            reduce_range=reduce)))
    detected = made_by(ctx.precision, ctx.modelopt_log)
    if matrix and detected is not None and detected.quantizer == "modelopt":
        # Its default is per channel already: the same command would write the same per-tensor weights.
        warned = (ctx.modelopt_log_text or "").count("to be an initializer")
        fixes.append(Fix("ModelOpt writes one scale per output channel by default; these weights came out per tensor, "
                         "as it leaves weights it does not read as initializers (exporters such as paddle2onnx write "
                         "every weight as a Constant node"
                         + (f"; its log warns {warned} times that a tensor was expected to be an initializer"
                            if warned else "")
                         + "): move the Constant nodes into initializers, then re-quantize",
                         initializer_weights_command(ctx)))
    elif matrix:
        fixes.append(Fix("Re-quantize with one scale per output channel of each weight (per-channel weights; "
                         "quantize_static needs an opset 13 model for them: on an older one it has written per-tensor "
                         "weights without a word, or Q/DQ nodes ONNX Runtime refuses to load (DequantizeLinear's "
                         "axis); the command converts an older model with onnx.version_converter first)"
                         + (f"; {SATURATION_WORDS}, so the command keeps them to 7 bits (reduce_range=True)"
                            if reduce else ""),
                         requantize_command(ctx, Change(per_channel_weights=True), reduce_range=reduce)))
        if per_channel_saturates_here(ctx) and ctx.target != ONNXRUNTIME:
            fixes.append(Fix(f"To measure that model on this CPU first: {SATURATION_WORDS}, so add reduce_range=True "
                             "(7-bit weights) to the ONNX Runtime model you measure; the engine TensorRT builds needs "
                             "no such change", requantize_command(ctx, Change(per_channel_weights=True),
                                                                  reduce_range=True)))
    if elementwise:
        nodes = tuple(dict.fromkeys(w.consumer for w in elementwise if w.consumer))
        fold = (", or fold the BatchNorm into the convolution before quantizing (onnxruntime's quant_pre_process; "
                "where it stops with 'Incomplete symbolic shape inference', pass skip_symbolic_shape=True)"
                if _convolutional(ctx) else "")
        fixes.append(Fix(f"Keep {', '.join(nodes[:5])}{' …' if len(nodes) > 5 else ''} float (elementwise constants "
                         f"have no per-channel form here){fold}", requantize_command(ctx, Change(exclude_nodes=nodes))))
    if tables:
        nodes = tuple(dict.fromkeys(w.consumer for w in tables if w.consumer))
        fixes.append(Fix(f"Keep the lookup table{'s' if len(nodes) > 1 else ''} of {', '.join(nodes[:5])}"
                         f"{' …' if len(nodes) > 5 else ''} float: quantize_static gives a Gather's table one scale, "
                         "per_channel or not, and the rows it crushes are tokens whose vectors are small",
                         requantize_command(ctx, Change(exclude_nodes=nodes))))
    return tuple(fixes)


def _convolutional(ctx: Context) -> bool:
    """Whether the FP32 model has a convolution or a BatchNormalization to fold: a tagger's LayerNorm and embedding
    constants were told to "fold the BatchNorm into the convolution" in a model holding neither."""
    counts = (ctx.precision or {}).get("fp32_op_counts") or {}
    return any(counts.get(op) for op in ("Conv", "ConvTranspose", "BatchNormalization"))
