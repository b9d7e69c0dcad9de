"""Typed views of the per-layer tables (collect --per-layer) for rules and the report.

Pure Python over Context tables: where the error is born (local error), where the outputs first
diverge along the graph (accumulated error), FP16 overflow risks, and Q-node range problems (also
from the default collect's bounded activation-range pass, quant/activation_ranges.json).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from qdqreport.analysis.agreement import COLLAPSED, COSINE_OK
from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import FP16_MAX
from qdqreport.analysis.quantizer import node_op_types
from qdqreport.analysis.upstream import FAR_TOO_WIDE_NODES, far_too_wide, far_too_wide_use

DIVERGED_COSINE = COSINE_OK  # a tensor "diverges" below this accumulated cosine (tensors have no decisions)
LOCAL_BAD_COSINE = 0.99  # a node "adds" error when fed FP32 inputs it still falls below this
# ... or its SQNR below this (error power half the values'): cosine reads direction only, and a tensor rescaled or
# pushed to its range's end keeps it. A new user's tagger calibrated on padding: its LayerNorm's variance plus
# epsilon, every value clipped to the range, cosine 0.997 at SQNR 0.0 dB, was passed over for a node 4.7 dB further
# on whose exclusion changed nothing (127 of 250 sentences against 130).
LOST_SQNR_DB = 3.0
# A sensitive node's own output with tensor cosine below 0.98 has lost its small values: for a softmax or a head that
# is where decisions flip. Above it, the quantization is tolerable (QR002; QR001 reads it too, through passed_on).
TENSOR_COSINE_BAD = 0.98
HEAVY_CLIPPING = 0.01  # share of an activation's values saturated at the integer limits
UNDER_USE = 0.10  # share of the representable range actually spanned
# ... by values inside it: a range that most of the values pass spans little of itself because it is too narrow or
# elsewhere, not too wide. A new user's tagger calibrated on all-padding input had LayerNorm variance ranges
# [0, 6.5e-5] for values in [0.77, 1.15]: range used 0, every value clipped, read "calibration drove them far beyond
# the evaluation's values".
MISSED_SHARE = 0.5
# layers/summary.json's skipped_reasons (collect/align.py SKIP_REASONS) in words, for the report and the progress line
SKIP_WORDS = {"shape": "of another shape", "dtype": "of another element type", "fused": "fused with the next node"}
# A tenth more of an activation's evaluation values beyond its calibrated range than of the calibration data's own,
# for a range that clips its own calibration data (entropy and percentile calibration, by design: the demo's
# MobileNetV3 squeeze-excite vectors clip 19% of their evaluation values and about as much of the calibration's; its
# entropy ranges clip up to 3.1% more of the evaluation's): the calibration never saw values like these.
UNCOVERED_CLIPPING = 0.10
# A range that keeps every calibration value (MinMax) has no such design clipping: 1.5% of the evaluation's values
# beyond it is the same sign, when they go beyond it by more than rounding: at least UNCOVERED_OVERSHOOT of the range's
# span (five of its 255 steps). The read corpus parts' healthy controls reach 0.69% at most (193 bundles with the pass);
# waifu2x's healthy SR model (fourteenth part) clips one of 64 values of two squeeze-excite vectors by 2 steps (1.56%,
# a false alarm at 1.5% alone); KhmerSM calibrated on English (ids nearly all unknown) clips 2.1% by 48% of the span;
# a new user's LAC tagger calibrated on ids all mapped to "unknown" 1.92% at its emission MatMul (0% healthy).
UNCOVERED_CLIPPING_KEPT = 0.015
UNCOVERED_OVERSHOOT = 5 / 255
# Rare content (a sleep spindle in 1% of an EEG window, a bright object) clips a small share of the values, far: a fifth
# or more of the inner activation Q nodes (at least OVERWIDE_MIN) whose ranges kept every calibration value getting
# evaluation values past them by a quarter of their span or more is the same sign, whatever the share. Read corpus with
# the pass: no healthy control has over 2% of its Q nodes so (yolo's percentile TensorRT control); OpenSpindleNet
# calibrated on windows without spindles 83% (43 of 52, each under 1% of its values, 0.8-1.5 spans past); random and
# unit-step calibrations 23-100%.
UNCOVERED_FAR = 0.25
UNCOVERED_FAR_SHARE = 0.2
# The other way round: a fifth or more of the inner activation Q nodes (at least three) whose evaluation values span
# under UNDER_USE of the range calibration gave them. The calibration data drove these activations ten times as far
# as the evaluation data does: other content, with the model inputs' own quantizers in use (no units step). Read
# corpus parts with the default pass: no healthy control has even one such Q node; over-quantization (every op, masks
# and small side tensors included) reaches 11% (DNSMOS); malvizv1's byte-image ResNet18 calibrated on photographs 47%.
OVERWIDE_SHARE = 0.2
OVERWIDE_MIN = 3


@dataclass(frozen=True)
class LayerTables:
    comparison_id: str
    activations: list[dict[str, Any]]  # QDQ topological order
    weights: list[dict[str, Any]]
    qnodes: list[dict[str, Any]]
    whatif: list[dict[str, Any]]
    summary: dict[str, Any]
    whatif_summary: dict[str, Any] | None

    @property
    def has_local(self) -> bool:
        return any(_num(r.get("local_cosine")) is not None for r in self.activations)


def layer_tables(ctx: Context) -> LayerTables | None:
    """The per-layer tables of the quantization comparison, or None when they were not collected."""
    comparison = ctx.comparison("quantization")
    if comparison is None:
        return None
    rows = ctx.layer_rows(comparison.id, "layers")
    if not rows:
        return None
    activations = sorted((r for r in rows if r["kind"] == "activation"), key=lambda r: (_index(r), r["tensor"]))
    return LayerTables(comparison.id, activations, [r for r in rows if r["kind"] == "weight"],
                       ctx.layer_rows(comparison.id, "qnodes"), ctx.layer_rows(comparison.id, "whatif"),
                       ctx.layers_summary or {}, ctx.whatif_summary)


@dataclass(frozen=True)
class BornUpstream:
    """Per-layer evidence that some nodes' tensor error is inherited: each adds little error itself, and a node
    before them does."""

    own_lowest: float  # the lowest local cosine among the nodes (each at least LOCAL_BAD_COSINE)
    birth: dict[str, Any]  # the worst error birth before them (error_births' row)


def born_upstream(tables: LayerTables | None, tensors: Sequence[str]) -> BornUpstream | None:
    """Whether the nodes writing *tensors* add little error themselves (each measured locally, on FP32 inputs, at
    LOCAL_BAD_COSINE or more) while a node before the last of them does (error_births): their tensor error is then
    inherited from it. None when one of them adds error itself, none was measured locally, or no earlier node adds
    error. A new user's U2-Net-p (quantize_static): 14 output convolutions and sigmoids at local cosine 0.995 or more,
    the error born at one BatchNorm-folded Conv (local cosine 0.53); excluding the 14 moved nothing."""
    if tables is None:
        return None
    wanted = set(tensors)
    own = [r for r in tables.activations if r["tensor"] in wanted and _num(r.get("local_cosine")) is not None]
    if not own or any(_cos(r.get("local_cosine")) < LOCAL_BAD_COSINE for r in own):
        return None
    last = max(_index(r) for r in own)
    births = [r for r in error_births(tables) if r["tensor"] not in wanted and _index(r) < last]
    if not births:
        return None
    return BornUpstream(min(_cos(r.get("local_cosine")) for r in own), births[0])


def passed_on(rows: Sequence[Any], bad_cosine: float) -> list[Any] | None:
    """The default collect's sensitive-node rows (tensors table, TensorRow) whose output is bad (cosine below
    *bad_cosine*), when each adds little itself (local cosine LOCAL_BAD_COSINE or more, recomputed from FP32 inputs:
    collect/sensitive_local.py): the error arrives at them from upstream. None when none is bad, or one adds error, or
    one was not measured locally (a bundle before 2026-11-27's session 35)."""
    bad = [r for r in rows if _num(r.cosine) is not None and r.cosine < bad_cosine]
    if not bad or any(_num(r.local_cosine) is None or r.local_cosine < LOCAL_BAD_COSINE for r in bad):
        return None
    return bad


# A head node passes its output's error on when its own (1 - local cosine) is under this share of its output's
# (1 - tensor cosine): recomputed from FP32 inputs it is nearly exact, the rest arrives with its inputs.
ARRIVED_SHARE = 0.1


def heads_pass_on(rows: Sequence[Any], faithful: float) -> list[Any] | None:
    """The sensitive-node rows of heads whose output falls short of *faithful* (a head's output is the decisions' own
    logits: any shortfall counts, not only a bad one), when each adds under ARRIVED_SHARE of its output's error
    itself; None when none falls short, or one adds more, or one was not measured locally. A new user's key CNN: its
    1x1 head Conv at tensor cosine 0.9964, recomputed from FP32 inputs 0.99993; excluding it kept the same 9 of 160
    key changes."""
    short = [r for r in rows if _num(r.cosine) is not None and r.cosine < faithful]
    if not short or any(_num(r.local_cosine) is None or 1 - r.local_cosine > ARRIVED_SHARE * (1 - r.cosine)
                        for r in short):
        return None
    return short


def born_nonfinite(tables: LayerTables) -> list[dict[str, Any]]:
    """The activations the QDQ model computes NaN or Inf in where the FP32 model has none, in graph order
    (layers/summary.json's `nonfinite`, collect/layerwise.py): the first is where they are born."""
    listed = tables.summary.get("nonfinite") or []
    return sorted((e for e in listed if e.get("qdq") and not e.get("fp32")), key=lambda e: (e.get("index") or 0))


def first_divergence(tables: LayerTables) -> dict[str, Any] | None:
    """The first activation along the QDQ graph whose accumulated cosine falls below DIVERGED_COSINE or SQNR below
    LOST_SQNR_DB."""
    return next((r for r in tables.activations if lost(r.get("cosine"), r.get("sqnr_db"), DIVERGED_COSINE)), None)


def error_births(tables: LayerTables, limit: int = 10) -> list[dict[str, Any]]:
    """Activations whose node adds error even on FP32 inputs (local cosine below LOCAL_BAD_COSINE or local SQNR below
    LOST_SQNR_DB), worst first."""
    born = [r for r in tables.activations if _num(r.get("local_cosine")) is not None
            and lost(r.get("local_cosine"), r.get("local_sqnr_db"), LOCAL_BAD_COSINE)]
    return sorted(born, key=lambda r: (_sqnr(r.get("local_sqnr_db")), _index(r)))[:limit]


def lost(cosine: Any, sqnr_db: Any, bar: float) -> bool:
    """Whether a tensor's cosine is under *bar* or its SQNR under LOST_SQNR_DB."""
    return _cos(cosine) < bar or _sqnr(sqnr_db) < LOST_SQNR_DB


def collapsed_tensor(cosine: Any, sqnr_db: Any) -> bool:
    """Whether a tensor collapsed: cosine under agreement's COLLAPSED, or SQNR under LOST_SQNR_DB."""
    return _cos(cosine) < COLLAPSED or _sqnr(sqnr_db) < LOST_SQNR_DB


def worst_local(tables: LayerTables, limit: int = 10) -> list[dict[str, Any]]:
    """Activations ranked by local SQNR, worst first (accumulated SQNR when local was not measured)."""
    key = "local_sqnr_db" if tables.has_local else "sqnr_db"
    return sorted(tables.activations, key=lambda r: (_sqnr(r.get(key)), _index(r)))[:limit]


def fp16_overflows(tables: LayerTables, float_dtype: str | None) -> list[dict[str, Any]]:
    """FP32 tensors with |x| > 65504 that the QDQ graph computes in FP16."""
    found = []
    for row in tables.activations:
        absmax = _num(row.get("ref_absmax"))
        dtype = row.get("qdq_dtype") or (float_dtype if float_dtype == "fp16" else "")
        if absmax is not None and absmax > FP16_MAX and dtype == "fp16":
            found.append(row)
    return sorted(found, key=lambda r: -float(r["ref_absmax"]))


def clipping_quantizers(tables: LayerTables, precision: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Activation Q nodes saturating more than HEAVY_CLIPPING of their values, worst first, less those whose clipping a
    Relu discards (clipped_below_relu; *precision*, the precision summary, says which pairs only Relus read)."""
    relu_read = relu_read_tensors(precision)
    return sorted((q for q in tables.qnodes if q["kind"] == "activation"
                   and (_num(q.get("clipped_share")) or 0.0) > HEAVY_CLIPPING and not clipped_below_relu(q, relu_read)),
                  key=lambda q: -float(q["clipped_share"]))


def relu_read_tensors(precision: dict[str, Any] | None) -> frozenset[str]:
    """Tensors whose Q/DQ pair is read by Relus only (the precision summary's pairs and node op types)."""
    op_types = node_op_types(precision)
    return frozenset(e["tensor"] for e in (precision or {}).get("qdq", []) if e.get("kind") == "activation"
                     and e.get("consumers") and all(op_types.get(c) == "Relu" for c in e["consumers"]))


def clipped_below_relu(row: dict[str, Any], relu_read: frozenset[str]) -> bool:
    """Whether a Q node's clipping is all below a non-positive representable minimum, on a tensor only Relus read: ONNX
    Runtime calibrates a Conv's output pair from the Relu after it, so it clips the negative values the Relu zeroes
    anyway (slovorez's character CNN: 38.5% clipped, nothing lost). Values above the representable maximum by less than
    one step are rounding, not clipping."""
    passed = _passed(row)
    low = _num(row.get("representable_min"))
    if row.get("tensor") not in relu_read or passed is None or low is None or low > 0:
        return False
    return passed[1] <= 1 / 255


@dataclass(frozen=True)
class QuantizerRanges:
    """Activation Q nodes' range use on evaluation and calibration data (quant/activation_ranges.json)."""

    rows: list[dict[str, Any]]
    samples: int
    of_samples: int
    calib_samples: int | None  # None: collected without --calib, no baseline


def quantizer_ranges(ctx: Context) -> QuantizerRanges | None:
    """The default collect's bounded activation-range pass, or None when the bundle lacks it."""
    ranges = ctx.activation_ranges
    if not ranges:
        return None
    return QuantizerRanges([q for q in ranges["quantizers"] if q["kind"] == "activation"], ranges["samples"],
                           ranges["of_samples"], ranges.get("calib_samples"))


def wide_ranges_behind(ctx: Context, nodes: Sequence[str]) -> list[str]:
    """The tensors computed by *nodes* (the per-layer rows' node -> tensor) whose calibrated ranges are a thousand
    times too wide (upstream.far_too_wide), when FAR_TOO_WIDE_NODES of them or more are; else none. The what-if's
    exclusion of such nodes restores the outputs because it takes those ranges out of INT8: it measures where the
    calibration's ranges hurt, not a node that INT8 cannot carry (a new user's MiniMol calibrated on one outlier
    molecule: QR201 'Error is born at node_linear_2', confirmed by excluding 10 nodes, 6 of them writing such tensors,
    ranked first above the over-wide ranges; the calibration without that molecule measured healthy)."""
    tables = layer_tables(ctx)
    if tables is None or not nodes:
        return []
    wide = {q.get("tensor") for q in far_too_wide(ctx.activation_ranges)}
    chosen = set(nodes)
    behind = [t for t in dict.fromkeys(r["tensor"] for r in tables.activations if r["node"] in chosen) if t in wide]
    return behind if len(behind) >= FAR_TOO_WIDE_NODES else []


def inherited(rows: list[dict[str, Any]], ranges: QuantizerRanges | None) -> set[str]:
    """The Q nodes among *rows* (the per-layer pass's, measured in the QDQ model, each clipping more than
    HEAVY_CLIPPING or under-using its range) whose FP32 values fit the same calibrated range (the activation-range
    pass, measured in the FP32 model: no heavy clipping, no under-use). Their QDQ-side values are distorted by INT8
    error upstream, not set by the calibration data: a new user's masked LM whose LayerNorm variance rounds to 0 in
    INT8 (its Rsqrt's Q node clips 17.9% in the QDQ model, none in FP32), a U-Net whose BatchNorm Mul zeroes most
    channels (the Add after it uses 4.8% of its range in the QDQ model, 71% in FP32)."""
    fp32 = {row["q_node"]: row for row in (ranges.rows if ranges else [])}
    found = set()
    for row in rows:
        own = fp32.get(row["q_node"])
        if own is None or _num(own.get("clipped_share")) is None:
            continue
        clips = (_num(row.get("clipped_share")) or 0.0) > HEAVY_CLIPPING
        fine = (_num(own.get("clipped_share")) or 0.0) <= HEAVY_CLIPPING if clips else not underused(own)
        if fine:
            found.add(row["q_node"])
    return found


def excess_clipping(row: dict[str, Any]) -> float | None:
    """How much more of the evaluation's values a Q node clips than of the calibration data's own (None: no baseline)."""
    evaluation, own = _num(row.get("clipped_share")), _num(row.get("calib_clipped_share"))
    return None if evaluation is None or own is None else evaluation - own


def uncovered_line(row: dict[str, Any]) -> float:
    """The excess clipping that says a Q node's range never saw values like the evaluation's: UNCOVERED_CLIPPING_KEPT
    for a range keeping every calibration value whose evaluation values overshoot it by more than rounding (overshoot),
    UNCOVERED_CLIPPING otherwise (a range that clips its own data by design, or an overshoot of a few steps)."""
    return UNCOVERED_CLIPPING_KEPT if _kept_calibration(row) and overshoot(row) >= UNCOVERED_OVERSHOOT \
        else UNCOVERED_CLIPPING


def _kept_calibration(row: dict[str, Any]) -> bool:
    """Whether a Q node's range kept every calibration value (MinMax: it clips none of its own data)."""
    return (_num(row.get("calib_clipped_share")) or 0.0) == 0.0


def overshoot(row: dict[str, Any]) -> float:
    """How far the evaluation's values pass the representable range, as a share of its span (0 when they do not)."""
    passed = _passed(row)
    return 0.0 if passed is None else max(*passed, 0.0)


def _passed(row: dict[str, Any]) -> tuple[float, float] | None:
    """How far the observed values pass the representable range below and above, as shares of its span (negative:
    inside it); None without the four numbers or an empty range."""
    low, high = _num(row.get("representable_min")), _num(row.get("representable_max"))
    seen_low, seen_high = _num(row.get("observed_min")), _num(row.get("observed_max"))
    if None in (low, high, seen_low, seen_high) or high <= low:
        return None
    return (low - seen_low) / (high - low), (seen_high - high) / (high - low)


def uncovered_quantizers(ranges: QuantizerRanges, skip_tensors: frozenset[str] = frozenset(),
                         relu_read: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Activation Q nodes clipping at least uncovered_line more of the evaluation's values than of the
    calibration data's own, worst first (Q nodes reading a tensor in *skip_tensors*, such as the model inputs, left
    out). Entropy and percentile calibration clip their own data by design: only the excess says the evaluation data
    holds values the calibration never saw. Clipping a Relu discards (*relu_read*: relu_read_tensors) is left out."""
    found = [(excess, q) for q in ranges.rows if q.get("tensor") not in skip_tensors
             and not clipped_below_relu(q, relu_read)
             for excess in [excess_clipping(q)] if excess is not None and excess >= uncovered_line(q)]
    return [q for _, q in sorted(found, key=lambda item: -item[0])]


def missed_ranges(ranges: QuantizerRanges, skip_tensors: frozenset[str] = frozenset(),
                  relu_read: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The inner activation Q nodes whose calibrated ranges MISSED_SHARE or more of the evaluation's values pass, most
    clipped first (Q nodes reading *skip_tensors* and clipping a Relu discards left out). No calibration method clips
    that much of its own data (MinMax none, percentile about 0.001%, entropy a fifth at most on the read corpus): read
    without the calibration file, these ranges were set on data that never reached such values."""
    missed = [q for q in inner_measured(ranges, skip_tensors)
              if (_num(q.get("clipped_share")) or 0.0) >= MISSED_SHARE and not clipped_below_relu(q, relu_read)]
    return sorted(missed, key=lambda q: -float(q["clipped_share"]))


def far_uncovered_quantizers(ranges: QuantizerRanges, skip_tensors: frozenset[str] = frozenset(),
                             relu_read: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The inner activation Q nodes whose ranges kept every calibration value and whose evaluation values pass them by
    UNCOVERED_FAR of their span or more, farthest first, when they are at least UNCOVERED_FAR_SHARE of the inner ones
    (and OVERWIDE_MIN); otherwise none."""
    inner = inner_measured(ranges, skip_tensors)
    far = [q for q in inner if _kept_calibration(q) and (_num(q.get("clipped_share")) or 0.0) > 0
           and overshoot(q) >= UNCOVERED_FAR and not clipped_below_relu(q, relu_read)]
    if len(far) < max(OVERWIDE_MIN, UNCOVERED_FAR_SHARE * len(inner)):
        return []
    return sorted(far, key=lambda q: -overshoot(q))


def underused_quantizers(tables: LayerTables) -> list[dict[str, Any]]:
    """Activation Q nodes whose observed values span less than UNDER_USE of the representable range."""
    return sorted((q for q in tables.qnodes if q["kind"] == "activation" and q.get("values") and underused(q)),
                  key=lambda q: float(q["range_used"]))


def underused(row: dict[str, Any]) -> bool:
    """Whether a Q node's observed values span less than UNDER_USE of its representable range (never for one
    constant value, which spans nothing whatever the range: _constant; nor where MISSED_SHARE of them or more lie
    beyond it)."""
    used, clipped = _num(row.get("range_used")), _num(row.get("clipped_share"))
    return (used is not None and used < UNDER_USE and not _constant(row)
            and (clipped is None or clipped < MISSED_SHARE))


def overwide_quantizers(ranges: QuantizerRanges, input_tensors: frozenset[str]) -> list[dict[str, Any]]:
    """The inner activation Q nodes (those reading a tensor in *input_tensors*, the model inputs, left out) whose
    evaluation values span under UNDER_USE of their calibrated ranges, least used first, when they are at least
    OVERWIDE_SHARE of the inner ones (and OVERWIDE_MIN), or FAR_TOO_WIDE_NODES of them use under FAR_TOO_WIDE, and no
    model input's quantizer is itself under-used (a units step at the input, QR003's); otherwise none."""
    inner = inner_measured(ranges, input_tensors)
    wide = [q for q in inner if underused(q)]
    # A thousand times too wide on a few nodes is as telling as ten times on a fifth (analysis/upstream.FAR_TOO_WIDE).
    far = [q for q in wide if far_too_wide_use(float(q["range_used"]))]
    if any(underused(q) for q in ranges.rows if q.get("tensor") in input_tensors) \
            or (len(wide) < max(OVERWIDE_MIN, OVERWIDE_SHARE * len(inner)) and len(far) < FAR_TOO_WIDE_NODES):
        return []
    return sorted(wide, key=lambda q: float(q["range_used"]))


# A MinMax range keeps every value of the data it was calibrated on, and percentile 99.999 clips about 0.001% of them
# (the read corpus's percentile controls: none of their free Q nodes clips over 0.1% of its own calibration data). A
# range that clips more than OWN_CLIPPED of the calibration file's own values was not set on that file as a whole; when
# NOT_THIS_FILE_SHARE of the free inner Q nodes (NOT_THIS_FILE_MIN at least) do, the model's ranges came from other
# data: another file, or a part of this one. The thirty-seventh part's terrain generator, quantized with onnxruntime's
# CalibMaxIntermediateOutputs=5 (documented as giving the same ranges; onnxruntime 1.32 clears each full chunk without
# computing its ranges, microsoft/onnxruntime#18893), kept the ranges of its sixteenth sample alone: 15-45% of its free
# Q nodes clip up to 48% of the calibration file's values; no other read case passes 6%. ModelOpt's entropy clips its
# own data by design (the demo: 17% of its free Q nodes, up to 19%), so only quantize_static models are judged.
OWN_CLIPPED = 1e-3
NOT_THIS_FILE_SHARE = 0.10
NOT_THIS_FILE_MIN = 5


def ranges_from_other_data(ranges: QuantizerRanges | None, input_tensors: frozenset[str]) -> list[dict[str, Any]]:
    """The free inner activation Q nodes (measured, a range of their own: not one shared with another Q node, as
    onnxruntime ties a Concat's or a MaxPool's) clipping more than OWN_CLIPPED of the calibration data's own values,
    worst first, when they are NOT_THIS_FILE_SHARE of the free ones or more (NOT_THIS_FILE_MIN at least); else none."""
    if ranges is None or not ranges.calib_samples:
        return []
    measured = [q for q in inner_measured(ranges, input_tensors) if _num(q.get("calib_clipped_share")) is not None]
    shared = Counter(_range_key(q) for q in measured)
    free = [q for q in measured if shared[_range_key(q)] == 1]
    clipping = sorted((q for q in free if float(q["calib_clipped_share"]) > OWN_CLIPPED),
                      key=lambda q: -float(q["calib_clipped_share"]))
    enough = len(clipping) >= NOT_THIS_FILE_MIN and len(clipping) >= NOT_THIS_FILE_SHARE * len(free)
    return clipping if enough else []


def _range_key(row: dict[str, Any]) -> tuple[Any, Any]:
    """A Q node's representable range, rounded: equal for the Q nodes onnxruntime gives one shared scale."""
    low, high = _num(row.get("representable_min")), _num(row.get("representable_max"))
    return (None if low is None else round(low, 7), None if high is None else round(high, 7))


def inner_measured(ranges: QuantizerRanges, input_tensors: frozenset[str]) -> list[dict[str, Any]]:
    """The activation Q nodes with a measured range use that do not read a model input (*input_tensors*) and whose
    evaluation values are not one constant: the ones overwide_quantizers judges, and the count its finding quotes. A
    constant (an LSTM's zero initial state, and the MatMul of it: a new user's diacritizer read "6 of 18 activations
    use less than 10% of their ranges" on every healthy control) uses no range whatever the calibration gave it."""
    return [q for q in ranges.rows if _num(q.get("range_used")) is not None and q.get("tensor") not in input_tensors
            and not _constant(q)]


def _constant(row: dict[str, Any]) -> bool:
    """Whether the evaluation values of a Q node's tensor were one value (observed min equal to max)."""
    low, high = _num(row.get("observed_min")), _num(row.get("observed_max"))
    return low is not None and low == high


def _num(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _cos(value: Any) -> float:
    number = _num(value)
    return -1.0 if number is None else number


def _sqnr(value: Any) -> float:
    number = _num(value)
    return math.inf if number is None else number


def _index(row: dict[str, Any]) -> int:
    return row["index"] if isinstance(row.get("index"), int) else 1 << 30


def skipped_words(reasons: dict[str, Any]) -> str:
    """A per-layer pass's skipped_reasons as words: "2 of another shape, 3 fused with the next node"."""
    return ", ".join(f"{n:,} {SKIP_WORDS.get(k, k)}" for k, n in reasons.items() if isinstance(n, int) and n)
