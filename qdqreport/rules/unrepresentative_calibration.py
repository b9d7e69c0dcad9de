"""QR006: a few samples collapse under quantization while the rest stay faithful."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.agreement import COLLAPSED, MIN_CHANGED_TO_COLLAPSE, collapsed_samples, cosine_of
from qdqreport.analysis import evidence
from qdqreport.analysis.context import Context
from qdqreport.analysis.calibration_data import STRUCTURE_GAP, structure_differs
from qdqreport.analysis.collation import samples_held
from qdqreport.analysis.coverage import (OUT_OF_RANGE_SHARE, UNCOVERED_SPAN, coverage_gaps, frozen_channels,
                                         inside_share, uncovered)
from qdqreport.analysis.input_range import input_entry
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.analysis.preprocessing import (MEAN_SHIFT_STD, SCALE_BAND, UNSEEN_IDS, calibration_samples, categorical,
                                             content_differs, mismatched_inputs, preprocessing_mismatch, same_centre,
                                             shares_level, spread_at_level, unseen_ids, values_a_sample)
from qdqreport.findings import Finding, Fix, Metric, Series, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.wording import percent, plural, verb
from qdqreport.fixes import (HISTOGRAM_METHODS, SHAPES_DIFFER_NOTE, Change, calibration_extend,
                             calibration_rewrite, current_calibration_method, first_input_name, histogram_methods_fail, method_name,
                             requantize_command, robust_method)
from qdqreport.rules._clipped_activations import clipped_activations, overwide_ranges, ranges_not_from_this_file
from qdqreport.rules._common import diverging_outputs, outputs_collapse, rounded
from qdqreport.rules._measured import calibration_measured
from qdqreport.testing.recipes import (CLS_INPUT, CLS_OUTPUT, audio_chunks, class_logits, classifier_graph,
                                      classifier_run, input_stats, text_images)

MEDIAN_OK = 0.98  # the typical sample is faithful: the quantization itself works
MIN_SHARE, MAX_SHARE = 0.01, 0.25  # "a few": more than a quarter is a global problem, not coverage
# "The rest are fine": the collapsed samples must stand apart, their best SQNR at least 6 dB
# (4x noise power) under the worst remaining sample's. Real INT8 noise on uncertain inputs
# forms a continuum (the demo's healthy classifier: 7, 8, 8, 12, 14 ... dB) and is not a coverage gap.
SEPARATION_DB = 6.0
WORST_SHOWN = 10
COLLAPSED_SAMPLES = (5, 17, 31)
# Entropy and percentile calibration estimate each range from a histogram of the calibration
# activations: with fewer than 16 samples one image sets every range (ModelOpt asks for ~500).
MIN_CALIB_SAMPLES = 16
# A 0/1 integer input (an attention mask) whose share of ones in calibration is under half the
# evaluation's: the calibration sequences are less than half as long, so the activations of the
# positions only evaluation fills (position embeddings, attention over longer context) were never seen.
SHORTER_RATIO = 0.5


def _bright_samples_collapse(share_all: bool, side: str | None = None):
    """*side*: a second class output that copies the logits (a side head), collapsing on the same samples."""
    def build(b):
        logits, images = class_logits(40, seed=31), text_images(40, seed=31)
        reference, quantized = classifier_run(logits), classifier_run(logits, noise=0.01, seed=32)
        hit = range(0, 40, 3) if share_all else COLLAPSED_SAMPLES
        for i in hit:  # unusually bright crops: the input quantizer saturates and the class flips
            images[i] = np.clip(images[i] * 1.3, 0, 1)
            quantized[i] = {CLS_OUTPUT: reference[i][CLS_OUTPUT][..., ::-1]}
        if side is not None:
            reference, quantized = ([{**s, side: s[CLS_OUTPUT].copy()} for s in run] for run in (reference, quantized))
        b.class_outputs(CLS_OUTPUT, *([side] if side else [])).stage("ort_fp32", reference).stage("ort_qdq", quantized)
        b.artifact("eval_stats", input_stats(CLS_INPUT, (images - 0.5) / 0.5, "eval.npy"))
        calib = (text_images(64, seed=33) - 0.5) / 0.5
        b.artifact("calib_stats", input_stats(CLS_INPUT, calib, "calib.npy", per_sample=False))
    return build


def _uncertain_samples_noisy(b):
    # Healthy INT8 noise: near-tie samples move most, in a continuum (6, 9.5, 10, 10.6 ... dB), no cluster.
    logits = class_logits(50, seed=41)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.5, seed=42))


def _one_noisier_sample(b):
    # An output of 16 values: sample 4 carries 5x the INT8 noise of the others (SQNR 14 dB under them),
    # yet keeps cosine 0.986: ordinary noise on a small output, not a collapse.
    rng = np.random.default_rng(47)
    reference = [{"out_13": rng.standard_normal(16).astype(np.float32)} for _ in range(8)]
    quantized = [{"out_13": r["out_13"] + rng.normal(0, 0.12 if i == 4 else 0.03, 16).astype(np.float32)}
                 for i, r in enumerate(reference)]
    b.stage("ort_fp32", reference).stage("ort_qdq", quantized)


def _four_calibration_crops(b):
    # Four upright crops calibrated the model; one near-tie sample of 40 flips.
    _uncertain_samples_noisy(b)
    calib = (text_images(4, seed=43) - 0.5) / 0.5
    b.artifact("calib_stats", input_stats(CLS_INPUT, calib, "calib.npy", per_sample=False))


def _dark_calibration(b):
    # Calibrated on the same crops at 30% brightness: black stays -1, nothing above -0.4 is seen.
    _uncertain_samples_noisy(b)
    evaluation = (text_images(40, seed=44) - 0.5) / 0.5
    b.artifact("eval_stats", input_stats(CLS_INPUT, evaluation, "eval.npy"))
    b.artifact("calib_stats", input_stats(CLS_INPUT, (text_images(64, seed=45) * 0.3 - 0.5) / 0.5, "calib.npy",
                                          per_sample=False))


def _quiet_recordings(quiet: float):
    def build(b):
        # A voice detector's audio, calibrated on recordings 1/quiet as loud: both swing about zero, no black level.
        _uncertain_samples_noisy(b)
        b.artifact("eval_stats", input_stats(CLS_INPUT, audio_chunks(40, 47, 0.1), "eval.npy"))
        b.artifact("calib_stats", input_stats(CLS_INPUT, audio_chunks(64, 48, 0.1 / quiet), "calib.npy", per_sample=False))
    return build


def _smoothness(calib_noise: float):
    def build(b):
        # Evaluation: tones under broadband noise (speech in a room: neighbour correlation ~0.2); calibration: the
        # same tones with *calib_noise* of that noise (0.0: pure tones, as music or audio at another sample rate).
        _uncertain_samples_noisy(b)
        rng = np.random.default_rng(49)
        for kind, count, noise in (("eval", 40, 1.0), ("calib", 64, calib_noise)):
            tones = audio_chunks(count, 50 if kind == "eval" else 51, 0.1)
            audio = (tones + noise * 0.1 * rng.standard_normal(tones.shape)).astype(np.float32)
            b.artifact(f"{kind}_stats", input_stats(CLS_INPUT, audio, f"{kind}.npy", per_sample=kind == "eval"))
    return build


def _photo_calibration(b):
    # Photographs (mid-tones, black and white present) calibrate a model evaluated on white pages of text.
    _uncertain_samples_noisy(b)
    rng = np.random.default_rng(46)
    photos = np.clip(rng.beta(1.5, 3.0, (64, 3, 1, 1)) + 0.25 * rng.standard_normal((64, 3, 48, 192)), 0.0, 1.0)
    photos[:, :, 0, 0], photos[:, :, 0, 1] = 0.0, 1.0
    b.artifact("eval_stats", input_stats(CLS_INPUT, (text_images(40, seed=44) - 0.5) / 0.5, "eval.npy"))
    b.artifact("calib_stats", input_stats(CLS_INPUT, (photos - 0.5) / 0.5, "calib.npy", per_sample=False))


def _masks(lengths: list[int], width: int = 128) -> np.ndarray:
    """Attention masks [N, width] with the given numbers of real tokens."""
    return np.array([[1] * n + [0] * (width - n) for n in lengths], dtype=np.int64)


def _three_word_calibration(b):
    # Calibration texts cut to their first three words (5-8 tokens), evaluation sentences of 12-28 tokens.
    _uncertain_samples_noisy(b)
    b.artifact("eval_stats", input_stats("attention_mask", _masks([12 + i % 17 for i in range(24)]), "eval.npz"))
    b.artifact("calib_stats", input_stats("attention_mask", _masks([5 + i % 4 for i in range(48)]), "calib.npz",
                                          per_sample=False))


def _same_length_calibration(b):
    _uncertain_samples_noisy(b)
    b.artifact("eval_stats", input_stats("attention_mask", _masks([12 + i % 17 for i in range(24)]), "eval.npz"))
    b.artifact("calib_stats", input_stats("attention_mask", _masks([10 + i % 20 for i in range(48)]), "calib.npz",
                                          per_sample=False))


def _clipped_logits(share: float):
    def build(b):
        # The default collect's activation-range pass: the classifier's last Q node (its logits) clips *share* of the
        # evaluation values, as when the calibration never held one of the classes; the inner layers clip nothing.
        _uncertain_samples_noisy(b)
        rows = [{"q_node": f"{t}_QuantizeLinear", "tensor": t, "kind": "activation", "dtype": "int8", "values": 3200,
                 "clipped_share": c, "range_used": 0.6, "representable_min": -4.6, "representable_max": 4.6,
                 "observed_min": -2.8, "observed_max": 5.3 if c else 2.8, "per_channel": False, "calib_values": 3200,
                 "calib_clipped_share": own}
                for t, c, own in (("conv_1", 0.0, 0.0), ("conv_2", 0.0003, 0.0), ("logits", share, 0.02))]
        b.artifact("activation_ranges", {"samples": 16, "of_samples": 50, "sample_indices": list(range(0, 48, 3)),
                                         "calib_samples": 16, "seconds": 0.1, "quantizers": rows})
    return build


def _wide_ranges(share: float):
    def build(b):
        # The default collect's activation-range pass on 20 inner Q nodes: *share* of them see evaluation values
        # twenty times smaller than the range calibration gave them (photographs calibrating a byte-image model);
        # the input's quantizer is in use (same preprocessing).
        _uncertain_samples_noisy(b)
        wide = round(share * 20)
        rows = [{"q_node": f"{t}_QuantizeLinear", "tensor": t, "kind": "activation", "dtype": "int8", "values": 3200,
                 "clipped_share": 0.0, "range_used": used, "representable_min": -2.0 / used,
                 "representable_max": 2.0 / used, "observed_min": -1.0, "observed_max": 1.0, "per_channel": False,
                 "calib_values": 3200, "calib_clipped_share": 0.0}
                for t, used in (("input", 0.9), *((f"conv_{i}", 0.05 if i < wide else 0.6) for i in range(20)))]
        b.artifact("activation_ranges", {"samples": 8, "of_samples": 50, "sample_indices": list(range(0, 48, 6)),
                                         "calib_samples": 8, "seconds": 0.1, "quantizers": rows})
    return build


def _ranges_of_one_chunk(share: float):
    def build(b):
        # The default collect's activation-range pass on 20 inner Q nodes of a quantize_static model: *share* of them
        # clip 5-30% of the calibration file's own values (ranges set on its last chunk alone), the evaluation's alike.
        _uncertain_samples_noisy(b)
        clipping = round(share * 20)
        rows = [{"q_node": f"conv_{i}_QuantizeLinear", "tensor": f"conv_{i}", "kind": "activation", "dtype": "int8",
                 "values": 3200, "clipped_share": own, "range_used": 1.0, "representable_min": -2.0 - i / 10,
                 "representable_max": 2.0 + i / 10, "observed_min": -3.0, "observed_max": 3.0, "per_channel": False,
                 "calib_values": 3200, "calib_clipped_share": own}
                for i, own in ((i, 0.05 + i / 100 if i < clipping else 0.0) for i in range(20))]
        b.artifact("activation_ranges", {"samples": 8, "of_samples": 50, "sample_indices": list(range(0, 48, 6)),
                                         "calib_samples": 8, "seconds": 0.1, "quantizers": rows})
        b.artifact("precision_summary", {**classifier_graph(), "float_dtype": "fp32",
                                         "producer": {"name": "onnx.quantize", "version": "0.1.0"}})
    return build


@rule(id="QR006", slug="unrepresentative-calibration", title="Calibration does not cover some inputs",
      examples=[Fires("3 bright crops of 40 flip their class", _bright_samples_collapse(False)),
                Fires("the same 3 crops flip in two outputs (one finding)",
                      _bright_samples_collapse(False, side="side_logits")),
                Fires("calibrated on 4 crops", _four_calibration_crops),
                Fires("calibrated on dark images only", _dark_calibration),
                Fires("calibrated on photographs, evaluated on documents", _photo_calibration),
                Fires("calibration texts of 5-8 tokens, evaluation 12-28", _three_word_calibration),
                Fires("the logits' Q node clips 19% of the evaluation values, 2% of the calibration's",
                      _clipped_logits(0.19)),
                Quiet("the logits' Q node clips 6% of the evaluation values, 2% of the calibration's",
                      _clipped_logits(0.06)),
                Fires("9 of 20 inner activations use 5% of their calibrated ranges", _wide_ranges(0.45)),
                Quiet("2 of 20 inner activations use 5% of their calibrated ranges", _wide_ranges(0.1)),
                Fires("8 of 20 inner ranges clip 5-12% of the calibration file's own values",
                      _ranges_of_one_chunk(0.4)),
                Quiet("1 of 20 inner ranges clips 5% of the calibration file's own values", _ranges_of_one_chunk(0.05)),
                Fires("audio calibrated on recordings 20x (26 dB) quieter", _quiet_recordings(20.0)),
                Fires("calibration audio far smoother than the evaluation's (pure tones for noisy speech)",
                      _smoothness(0.0)),
                Quiet("calibration audio as rough as the evaluation's", _smoothness(1.0)),
                Quiet("audio calibrated at the evaluation's level", _quiet_recordings(1.0)),
                Quiet("calibration sequences as long as the evaluation's", _same_length_calibration),
                Quiet("a third of the samples collapse: a global problem", _bright_samples_collapse(True)),
                Quiet("near-tie samples degrade in a continuum", _uncertain_samples_noisy),
                Quiet("one sample of a 16-value output is noisier (cosine 0.986): not a collapse", _one_noisier_sample)])
def unrepresentative_calibration(ctx: Context) -> Iterator[Finding]:
    """A few evaluation samples (1–25%) collapse under quantization while the median sample stays faithful.

    Also fires when the calibration set has fewer than 16 samples, and when a quarter or more
    of the evaluation samples (two at least: one sample's few edge pixels are an anecdote) reach beyond
    the calibration's value range, which misses at least
    a quarter of the evaluation span, while both sets share
    their minimum or maximum (darker or brighter content, not a preprocessing step: QR003
    reports those, and the shared level is what separates the two), or, for signals that swing
    about zero (audio), both stay centred on zero and differ in level by less than 100× (quieter
    recordings; a units step such as int16 PCM, 32768×, is QR003's).

    Where the output is judged by its decisions (analysis/agreement.py: a CTC string, a sample's
    detections, its top-1 classes), a sample collapses when its own decisions collapse; its
    cosine only says how far its numbers moved. Recurrent state is never counted. Otherwise
    a sample collapses when its cosine falls below agreement's collapse level (0.9), while the
    median cosine is at least 0.98 and the collapsed samples stand apart: their best SQNR is 6 dB
    under the worst remaining sample's. A sample whose SQNR alone falls far under the others'
    (cosine 0.98, say) is not collapsed: on an output of a few values, and across many outputs,
    one such sample is ordinary INT8 noise.

    The same samples collapsing in several outputs (a fused map and a side map) are one finding, naming the other
    outputs.

    Measured evidence first (analysis/evidence.py): the finding names the collapsed samples, their
    own decision agreement where the output is judged by decisions (map IoU, top-1, threshold
    flips) and their input statistics beside the calibration set's. When the samples' decisions
    collapse and the what-if refutes the layer exclusions (excluding the suspects does not help, or
    the unmodified model already meets the target: its outputs agree as the report judges them), it
    says the calibration set does not cover them and ranks first (score 0.8, over the refuted layer
    findings' 0.2).

    Calibration signals whose smoothness differs from the evaluation's (mean lag-1 autocorrelation apart by 0.5
    or more, both real signals, no range or preprocessing step telling them apart) hold other frequency content:
    music calibrating a speech model, or audio at another sample rate, images at another size (a warning).

    A calibration input frozen at one value (np.zeros, blank frames, silence) where the evaluation
    varies is the extreme of a coverage gap: a blank calibration set, named so. So are some channels (a table's
    columns, a feature map's channels) held at one value each in calibration while the evaluation varies them and
    other channels vary in both (analysis/coverage.frozen_channels): one slice of the data, one category, dataset or
    setting (the thirty-sixth part's surrogate calibrated on one problem of its twelve: two of its four columns).

    Calibration inputs whose mean lies more than one evaluation standard deviation from the
    evaluation mean, with the same minimum or maximum and a spread no known step explains (so no preprocessing
    step maps one onto the other: analysis/preprocessing.content_differs), hold other content
    (photographs calibrating a document model): an error when the outputs' decisions collapse (the named
    cause, as a coverage gap is), else a warning, scored as a risk when the outputs agree. The calibration's
    size ("Calibrated on 8 sample(s)") scores under such a measured difference between the sets
    (analysis/upstream.py), which is the likelier cause.

    Activation Q nodes inside the network whose calibrated range clips more of the evaluation
    values than of the calibration data's own, 1.5% more for a range that keeps every calibration
    value (MinMax) when those values pass it by more than rounding (five of its 255 steps), a tenth
    more otherwise (a range that clips its own data by design: entropy, percentile;
    analysis/layers.uncovered_line;
    collect measures both in the FP32 model on up to 8 samples of each set, spread over it,
    when --calib is given), where no preprocessing step (QR003) explains the calibration inputs:
    the calibration never saw activations like the evaluation's (a class or scene it lacked, a
    recurrent state it never fed). Entropy and percentile calibration clip their own data by
    design, so only the excess counts. A warning, scored as a risk when the outputs agree.
    Rare content clips little, far: a fifth or more of the inner activation Q nodes (at least three) whose ranges
    kept every calibration value getting evaluation values a quarter of their span or more past them counts too,
    whatever the share (analysis/layers.far_uncovered_quantizers: sleep spindles in 1% of an EEG window that the
    calibration windows lacked).

    The other way round, from the same pass: a fifth or more of the inner activation Q nodes (at least three) use
    under 10% of their calibrated ranges while the model inputs' own quantizers are in use and no preprocessing step
    (QR003) explains the calibration inputs (analysis/layers.overwide_quantizers): the calibration data drove the
    activations ten times as far as the evaluation data does (photographs calibrating a model of files' bytes seen
    as images), so the evaluation values fall on a few levels. A warning, scored as a risk when the outputs agree;
    an error ranked above the layer findings when the what-if restored the outputs by excluding the nodes that
    compute those tensors (analysis/evidence.py). Ranges a thousand times too wide on three Q nodes or more come from
    a few extreme calibration values, which more data or Percentile/Entropy calibration keep: that fix names the
    input whose calibration values reach far past the evaluation's and prints a command that drops those samples.

    From the same pass, whether the ranges came from the calibration file collect was given at all: a MinMax range
    keeps every value of its calibration data and a percentile one clips about 0.001%, so when a tenth or more of a
    quantize_static model's free inner Q nodes (five at least; Q nodes sharing one range left out) clip over 0.1% of
    the file's own values (analysis/layers.ranges_from_other_data), the model was calibrated on other data: another
    file, or a part of this one. onnxruntime's CalibMaxIntermediateOutputs, documented as giving the same ranges with
    less memory, keeps only the last chunk's (onnxruntime 1.32; microsoft/onnxruntime#18893): the thirty-seventh
    part's terrain generator, calibrated so on 16 terrains, kept the ranges of the sixteenth (15-45% of its free Q
    nodes clip up to 48% of the file's values; no other read case passes 6%). A warning: which ranges are better is
    for confirm to measure (the whole file under MinMax made that generator worse: its outliers widen every range), so
    the fix offers MinMax and Percentile on the whole file. ModelOpt models are not judged (its entropy clips its own
    data: the demo, 17% of its free Q nodes).

    Integer inputs (token ids, attention masks) are categories: their value ranges are not
    compared. For a 0/1 input (an attention mask) the share of ones is the share of positions
    holding real tokens: when calibration's is under half the evaluation's, the calibration
    sequences are too short to cover the positions the evaluation fills (a warning; a risk
    rather than the cause when the outputs stay as faithful as a healthy quantization).
    For a sequence of ids (8 or more a sample), when both sets' id lists are whole: half or more of
    the evaluation's id values (its most frequent id, the padding, set aside) never occurring in
    calibration means the calibration was another vocabulary (English texts for a Russian or Hebrew
    character model: every letter one unknown id); a warning, scored as a risk when the outputs
    agree. Every healthy control of the corpus misses none of its evaluation's ids.

    Why it matters: quantization that works for most inputs and fails for a few usually
    means those inputs fall outside the ranges seen in calibration (brighter, darker, other
    scenes): their activations clip. The mean metric hides them; users meet them.

    Measured by the calibration check where the bundle has one (collect/range_check.py: the QDQ model with every
    activation range taken from the evaluation inputs themselves): when even those ranges do not restore the
    outputs, the finding is capped under the other causes with that measurement (fixing the calibration alone will
    not restore them); when they do, it says so (rules/_measured.calibration_measured).

    Fix: add inputs like the collapsed samples to the calibration set (at least 500 samples
    for CNNs) and try the other calibration method (max keeps outliers, entropy clips them).
    """
    for finding in _from_the_data(ctx):
        yield calibration_measured(ctx, finding)
    # Not re-ranked by the check: its control runs on the first samples with ranges from a few spread ones, which need
    # not hold the samples that collapse.
    yield from _few_samples_collapse(ctx)


def _from_the_data(ctx: Context) -> Iterator[Finding]:
    """The findings read from the calibration data and the calibrated ranges, before the calibration check."""
    yield from _too_few_samples(ctx)
    yield from _range_not_covered(ctx)
    yield from _frozen_channels(ctx)
    yield from _other_content(ctx)
    yield from _other_structure(ctx)
    yield from _shorter_sequences(ctx)
    yield from _other_vocabulary(ctx)
    other_data = list(ranges_not_from_this_file(ctx, unrepresentative_calibration.finding))
    yield from other_data
    if not other_data:
        # Ranges set on other data than the file given: what the activations clip or leave unused, compared with that
        # file's own values, says nothing of the calibration that made them.
        yield from clipped_activations(ctx, unrepresentative_calibration.finding, _fixes(ctx, [], _input_name(ctx)))
        yield from overwide_ranges(ctx, unrepresentative_calibration.finding, _fixes(ctx, [], _input_name(ctx)))


def _few_samples_collapse(ctx: Context) -> Iterator[Finding]:
    """A few samples collapse while the median sample stays faithful (one finding per set of samples)."""
    comparison = ctx.comparison("quantization")
    if comparison is None:
        return
    by_output: dict[str, list[dict[str, Any]]] = {}
    same_samples: dict[frozenset, list[tuple[str, Finding]]] = {}
    for row in ctx.sample_rows(comparison.id):
        by_output.setdefault(row.output, []).append(row)
    summaries = {s.output: s for s in ctx.output_summaries(comparison.id)}
    for output, rows in sorted(by_output.items()):
        summary = summaries.get(output)
        if summary is not None and summary.internal:  # recurrent state is judged through the outputs it feeds
            continue
        cosines = [cosine_of(r) for r in rows]
        sqnrs = [r.sqnr_db if r.sqnr_db is not None and not math.isnan(r.sqnr_db) else -math.inf for r in rows]
        # Where the output is judged by decisions (analysis/agreement.py), a sample collapses when its own
        # decisions do (a CTC string, its detections); its cosine alone says how far its numbers moved.
        by_decisions = collapsed_samples(summary) if summary is not None else None
        measured = len(summary.judgement.sample_agreement) if by_decisions is not None else 0
        # Without decisions a sample collapses by agreement's cosine level alone: one sample whose SQNR sits
        # far under the others' at cosine 0.98 is noise on a small output (and, over many outputs, one
        # always does), not a changed decision.
        # Under 8 values a sample (a 2-logit head) no per-sample number judges a sample: the cosine of 2 values and
        # the relative error of near-zero logits both swing at a near tie (a new user's anime-or-not, random
        # calibration: one sample's logits (-0.095, -0.063) -> (-0.28, 0.12), its decision kept, read "cosine 0.54"
        # and ranked "1 of 48 samples collapse" first). Only decisions judge such samples.
        meaningful = summary is None or summary.judgement is None or summary.judgement.cosine_meaningful
        collapsed = [r for r, c in zip(rows, cosines)
                     if (r.sample in by_decisions if r.sample < measured else meaningful and c < COLLAPSED)]
        share = len(collapsed) / len(rows)
        if statistics.median(cosines) < MEDIAN_OK or not collapsed or not MIN_SHARE <= share <= MAX_SHARE:
            continue
        ids = {r.sample for r in collapsed}
        kept = [q for r, q in zip(rows, sqnrs) if r.sample not in ids]
        if kept and min(kept) - max(q for r, q in zip(rows, sqnrs) if r.sample in ids) < SEPARATION_DB:
            continue
        outside, note = _outside_calibration(ctx, [r.sample for r in collapsed], len(rows))
        worst = sorted(collapsed, key=lambda r: (cosine_of(r), r.sample))[:WORST_SHOWN]
        # Measured evidence first (analysis/evidence.py): the samples' own decisions confirm the collapse, and a
        # what-if that refutes the layer exclusions leaves calibration coverage as the cause: rank it first.
        pattern, refuted = evidence.few_samples_collapse(ctx), evidence.refutes_layers(ctx)
        decided = pattern is not None and pattern.output == output and pattern.measure != "cosine" \
            and ids & set(pattern.collapsed)
        measured = bool(decided and refuted)
        named = ", ".join(str(r.sample) for r in worst)
        same_samples.setdefault(frozenset(ids), []).append((output, unrepresentative_calibration.finding(
            title=f"{len(collapsed)} of {len(rows)} samples collapse under quantization"
                                   + (": calibration does not cover them" if measured else ""),
            # One collapsed sample is an anecdote, never an error (analysis/agreement's MIN_CHANGED_TO_COLLAPSE): a
            # saliency model's healthy-like calibration on textures, 1 of its 6 stored images collapsed, 17%, was one.
            severity="error" if share >= 0.1 and len(collapsed) >= MIN_CHANGED_TO_COLLAPSE else "warning",
            confidence=0.85 if measured else 0.8 if outside else 0.55,
            score=0.8 if measured else 0.7 if outside else 0.5, subject=f"{comparison.id}:{output}", stage=comparison.id,
            summary=f"Output {output}: median cosine {statistics.median(cosines):.4f}, yet {plural(len(collapsed), 'sample')} "
                    f"({share:.0%}; sample {named}) {verb(len(collapsed), 'collapses')} (worst cosine {cosine_of(worst[0]):.2f})"
                    + (f"; {note}" if note else "")
                    + ("; the calibration set does not cover inputs like these" if measured else ""),
            evidence=(Metric("collapsed samples", len(collapsed), threshold=f"cosine < {COLLAPSED}"),
                      Series(f"Per-sample cosine of {output}", "points", tuple(str(r.sample) for r in rows),
                             tuple(cosines), "cosine", COLLAPSED),
                      Table("Worst samples", ("sample", "cosine", "SQNR dB", "max |Δ|", "top-1 agree",
                                              *(["decisions agree"] if decided else [])),
                            tuple((r.sample, rounded(r.cosine), rounded(r.sqnr_db, 1), rounded(r.max_abs),
                                   r.top1_agree, *([_decision_share(ctx, output, r.sample)] if decided else []))
                                  for r in worst)),
                      *_input_table(ctx, [r.sample for r in worst]),
                      *([Text(note)] if note else []),
                      *([Text(f"Measured by their own decisions ({pattern.measure}): {len(pattern.collapsed)} of "
                              f"{pattern.total} samples collapse (sample {', '.join(map(str, pattern.collapsed))}) "
                              "while the median sample is faithful.")] if decided else []),
                      *([Text(f"Measured: {refuted.line}. No layer exclusion is the fix; calibration data like these "
                              "samples is.")] if measured else [])),
            fixes=_fixes(ctx, [r.sample for r in worst], _input_name(ctx)), tags=("root_cause",))))
    yield from _one_per_sample_set(same_samples)


def _one_per_sample_set(found: dict[frozenset, list[tuple[str, Finding]]]) -> Iterator[Finding]:
    """One finding per set of collapsed samples: the same samples collapsing in several outputs (a new user's
    U2-Net-p: its fused map and a side map, the same 3 of 40 crops) are one cause, named once with the other outputs."""
    for group in found.values():
        (_, first), others = group[0], [output for output, _ in group[1:]]
        if others:
            first = replace(first, summary=first.summary + f"; the same samples collapse in output"
                                                            f"{'s' if len(others) > 1 else ''} {', '.join(others)} too")
        yield first


def _decision_share(ctx: Context, output: str, sample: int) -> Any:
    """The sample's own decision agreement (map IoU, top-1 ...) as analysis/agreement.py judged it."""
    comparison = ctx.comparison("quantization")
    summary = next((s for s in ctx.output_summaries(comparison.id) if s.output == output), None) if comparison else None
    shares = summary.judgement.sample_agreement if summary is not None and summary.judgement else ()
    return rounded(shares[sample], 3) if 0 <= sample < len(shares) else None


def _input_table(ctx: Context, samples: list[int]) -> tuple[Table, ...]:
    """The named samples' input statistics beside the calibration set's (mean and std show other content)."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    for name in sorted(set(calib) & set(evaluation)):
        per_sample, overall = evaluation[name].get("per_sample") or [], calib[name].get("overall") or {}
        if not per_sample or not overall:
            continue
        rows = [(f"sample {i}", *(rounded(per_sample[i].get(k)) for k in ("min", "max", "mean", "std")))
                for i in samples if 0 <= i < len(per_sample)]
        others = [s for i, s in enumerate(per_sample) if i not in samples]
        if others:
            rows.append(("other evaluation samples (median)",
                         *(rounded(statistics.median(s[k] for s in others)) if all(k in s for s in others) else None
                           for k in ("min", "max", "mean", "std"))))
        rows.append(("calibration (all)", *(rounded(overall.get(k)) for k in ("min", "max", "mean", "std"))))
        return (Table(f"Input {name}: collapsed samples against the calibration set", ("set", "min", "max", "mean", "std"),
                      tuple(rows)),)
    return ()


def _outside_calibration(ctx: Context, collapsed: list[int], total: int) -> tuple[bool, str]:
    """Whether the collapsed samples' inputs leave the calibration range more often than the others'."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    for name in sorted(n for n in set(calib) & set(evaluation) if not categorical(evaluation[n])):
        low, high = calib[name]["overall"]["min"], calib[name]["overall"]["max"]
        margin = 0.01 * (high - low)
        per_sample = evaluation[name].get("per_sample") or []
        out = {i for i, s in enumerate(per_sample) if s["min"] < low - margin or s["max"] > high + margin}
        if per_sample and out:
            hits = len(out & set(collapsed))
            rest = len(out - set(collapsed))
            return (hits > len(collapsed) / 2 and rest / max(total - len(collapsed), 1) < 0.5,
                    f"{hits} of {len(collapsed)} collapsed samples have input {name} outside the calibration range "
                    f"[{low:.3g}, {high:.3g}] (vs {rest} of {total - len(collapsed)} other samples)")
    return False, ""


# The set size the coverage fix quotes: TensorRT's recommendation for CNN and ViT models, as ModelOpt's ONNX PTQ
# README cites it. Not "for CNNs" alone: beside a terrain generator's difficulty label the words read as a CNN rule of
# thumb misapplied.
CALIBRATION_SAMPLES = 500


def _fixes(ctx: Context, samples: list[int], input_name: str, like: str | None = None) -> tuple[Fix, ...]:
    """Extend the calibration set with inputs *like* (default: the collapsed *samples*, else more varied ones) and
    re-quantize with another method. A set sliced by category (*like* given) needs the missing slices, not a size."""
    method = current_calibration_method(ctx)
    other = "max" if method != "max" else robust_method(ctx)
    extend, extended = calibration_extend(ctx)
    sliced = like is not None
    like = like or (f"inputs like samples {', '.join(map(str, samples))}" if samples else "more varied inputs")
    # "At least 500" only where the set is smaller (a new user's 512-sample set was told to use at least 500).
    calibrated = samples_held(ctx.calib_stats) if isinstance(ctx.calib_stats, dict) else None
    size = (f"; use a few hundred calibration samples or more (TensorRT recommends at least {CALIBRATION_SAMPLES} for "
            "CNN and ViT models)"
            if not sliced and (not isinstance(calibrated, int) or calibrated < CALIBRATION_SAMPLES) else "")
    first = Fix(f"Add {like} (from training data, not the evaluation set) to the calibration set{size}", extend)
    if other in HISTOGRAM_METHODS and histogram_methods_fail(ctx):
        return (first, Fix(f"Re-quantize with the extended set, with {method_name(ctx, method)} calibration "
                           f"({SHAPES_DIFFER_NOTE})", requantize_command(ctx, Change(), extended)))
    return (first,
            Fix(f"Re-quantize with the extended set and try {method_name(ctx, other)} calibration ({_now(ctx, method)})",
                requantize_command(ctx, Change(calibration_method=other), extended)))


def _now(ctx: Context, method: str) -> str:
    """The method the model was calibrated with, as known: ModelOpt's log says it; else it is the tool's default,
    which the graph does not record (a new user's Percentile-calibrated recognizer read "now MinMax")."""
    if (ctx.modelopt_log or {}).get("calibration_method"):
        return f"now {method_name(ctx, method)}"
    return f"if you used the default, {method_name(ctx, method)}; the graph does not record the method"


def _input_name(ctx: Context) -> str:
    """The model input the calibration file holds (the first one named anywhere), for .npz rewrites."""
    return first_input_name(ctx, "<input name>")


SIZE_BEHIND_MEASURED = 0.5  # under the measured calibration findings' 0.55


def _too_few_samples(ctx: Context) -> Iterator[Finding]:
    """A calibration set so small that a handful of images set every activation range."""
    calib = ctx.calib_stats or {}
    count = samples_held(calib)  # a GNN's calibration of 100 molecules in one graph holds 100 (analysis/collation)
    if count is None or count >= MIN_CALIB_SAMPLES:
        return
    read = calib.get("samples")
    held = f"{count} sample(s)" if count == read else f"{count} graphs, collated into {read} sample(s)"
    diverging = diverging_outputs(ctx, "quantization")
    evaluation = (ctx.eval_stats or {}).get("samples")
    # A measured difference between the sets (analysis/upstream.py: other content, a step, a gap, noise) is a likelier
    # cause than their size: part 34's nucleus segmenter calibrated on 8 tiles of another picture (every nucleus lost)
    # read "most likely cause: Calibrated on 8 sample(s)" above "Calibration inputs unlike the evaluation inputs".
    measured = calibration_upstream(ctx)
    yield unrepresentative_calibration.finding(
        title=f"Calibrated on {held}", severity="warning",
        # The count is certain; that it causes the loss is likelier when outputs diverge, and
        # nothing else in the bundle separates it from plain INT8 noise, so confidence stays moderate.
        confidence=0.6 if diverging else 0.4,
        score=(SIZE_BEHIND_MEASURED if measured else 0.55) if diverging else 0.3, subject="calibration size",
        stage="calibration", tags=("root_cause",),
        summary=f"The calibration set has {held} (evaluation: {evaluation}); every activation range was "
                "estimated from them" + ("; the quantized outputs diverge" if diverging else ""),
        evidence=(Metric("calibration samples", count, threshold=f"< {MIN_CALIB_SAMPLES}"),
                  Text("Separating evidence: a preprocessing mismatch (QR003) shows as different input statistics and "
                       "a per-sample coverage gap as a few collapsed samples; a set this small can look right on both "
                       "and still miss the activation extremes of inputs it does not contain.")),
        fixes=_fixes(ctx, [], _input_name(ctx)))


def _separating_evidence(calib: dict[str, float], evaluation: dict[str, float], eval_input: dict[str, Any]) -> str:
    if calib["min"] == calib["max"] and not _blank(calib, evaluation):
        at = (calib["min"] - evaluation["min"]) / max(evaluation["max"] - evaluation["min"], 1e-12)
        return (f"Separating evidence: the one calibration value lies inside the evaluation range ({at:.0%} of the "
                "way up it), and no preprocessing step maps one value onto a spread: the calibration holds one setting "
                "of this input, not other preprocessing.")
    if shares_level(calib, evaluation):
        return ("Separating evidence: both sets keep the same minimum or maximum, so the preprocessing agrees (a "
                "forgotten ×255 or normalisation would move it, QR003); the content differs.")
    if not same_centre(calib, evaluation):  # coverage_gaps admitted it for lying inside the evaluation range
        end = "low" if calib["max"] - evaluation["min"] < evaluation["max"] - calib["min"] else "high"
        at_level = spread_at_level(calib, eval_input)
        why = ("an affine map fitted to their means and spreads misses their extremes" if at_level is None else
               f"the calibration spreads {at_level:.2f}× as much as the evaluation samples at its level, where a step "
               "would rescale every sample")
        return (f"Separating evidence: {inside_share(calib, evaluation):.0%} of the calibration range lies inside the "
                f"evaluation range, at its {end} end, and no preprocessing step maps one set onto the other ({why}): "
                "the calibration holds only part of the evaluation content (e.g. only silence or background, only "
                "dark scenes), not other preprocessing.")
    factor = evaluation["std"] / calib["std"]
    return (f"Separating evidence: both sets swing about zero and differ in level by {factor:.3g}× "
            f"({20 * np.log10(factor):+.0f} dB), less than any units step (int16 PCM is 32768×): "
            f"{'quieter' if factor > 1 else 'louder'} data, not a preprocessing error; the content differs.")


def _range_not_covered(ctx: Context) -> Iterator[Finding]:
    """Evaluation inputs beyond the calibration range, with the same black/white level: content, not preprocessing
    (analysis/coverage.py decides)."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    diverging = diverging_outputs(ctx, "quantization")
    misread = mismatched_inputs(ctx.calib_stats, ctx.eval_stats)
    for gap in coverage_gaps(ctx.calib_stats, ctx.eval_stats):
        name, beyond, per_sample = gap.name, list(gap.beyond), gap.samples
        c, e = calib[name]["overall"], evaluation[name]["overall"]
        # Another input of the same file read unlike the evaluation's (QR003) puts the reader in doubt: this input's
        # difference may be the same reader's missing step (a new user's DeepFilterNet calibrated without its
        # feature normalisation: feat_erb was named a normalisation step, feat_spec "quieter data, not a
        # preprocessing error"; QR003's fix of the reader restored both).
        sibling = next((other for other in misread if other != name), None)
        held = (f"holds input {name} at one value ({c['min']:.3g})" if c["min"] == c["max"] else
                f"covers [{c['min']:.3g}, {c['max']:.3g}] of input {name}")
        yield unrepresentative_calibration.finding(
            title=f"Calibration {held}; {len(beyond)} of {per_sample} evaluation samples "
                  + ("differ from it" if c["min"] == c["max"] else "go beyond it"),
            # An error when the outputs' decisions collapse: the gap is then the named cause of an error-level
            # divergence (a sensitive node behind it is a suspect, QR002, and ranks under it).
            severity="error" if outputs_collapse(ctx) and sibling is None else "warning",
            confidence=0.7 if diverging else 0.5, score=(0.6 if diverging else 0.35) if sibling is None else 0.3,
            subject=f"coverage {name}", stage="calibration", tags=("root_cause",),
            summary=(f"Every calibration value is {c['min']:.3g} while the evaluation inputs span [{e['min']:.3g}, "
                     f"{e['max']:.3g}]: " + ("a blank calibration set (np.zeros, empty frames, silence) calibrates "
                                             "every range on no content at all" if _blank(c, e) else
                                             "the calibration set is one setting of this input (one class, level or "
                                             "condition), and every range it feeds was calibrated for that setting "
                                             "alone") if c["min"] == c["max"] else
                     f"The calibration inputs span [{c['min']:.3g}, {c['max']:.3g}] while the evaluation inputs span "
                     f"[{e['min']:.3g}, {e['max']:.3g}]: the calibration set misses part of the evaluation distribution"
                     f"{_examples(evaluation[name])}, " + _what_clips(ctx, name)),
            evidence=(Metric("evaluation samples beyond the calibration range", len(beyond),
                             threshold=f">= {OUT_OF_RANGE_SHARE:.0%} of {per_sample}"),
                      Table("Input ranges", ("set", "min", "max", "mean", "std"),
                            tuple((label, *(rounded(s[k]) for k in ("min", "max", "mean", "std")))
                                  for label, s in (("calibration", c), ("evaluation", e)))),
                      Text(_separating_evidence(c, e, evaluation[name]) if sibling is None else
                           f"Separating evidence: input {sibling} of the same calibration file was read unlike the "
                           "evaluation inputs (a preprocessing step differs: see that finding), so this input's "
                           "difference may be the same reader's missing step rather than other content: fix the "
                           "reader first and collect again.")),
            fixes=_fixes(ctx, beyond[:WORST_SHOWN], name))


def _examples(stats: dict) -> str:
    """Examples of a missed part, for an input of many values a sample (an image, a recording); none for a feature of
    a few values (a new user's text classifier read "only dark or only bright images" of its length input)."""
    return "" if values_a_sample(stats) <= 8 else " (e.g. only dark or only bright images, only quiet recordings)"


# Under this share of the evaluation values clipped, the model's input quantizer covers the evaluation data.
INPUT_COVERED = 0.01


def _what_clips(ctx: Context, name: str) -> str:
    """What the coverage gap clips: the ranges of the missing part; where the model's own input quantizer was measured
    (range_use) to clip under INPUT_COVERED of the evaluation values, not that one (a new user's EEG classifier: its
    symmetric input quantizer spans [-1.01, 1.00] and clipped 0.16% of an input the calibration covered only on
    [0, 1]; "the missing part clips" read as if it all did)."""
    entry = input_entry(ctx.range_use, name)
    if entry is None and isinstance(ctx.range_use, list):
        # No quantizer reads the input itself (a new user's speaker encoder: its mel input float, the LSTMs after it
        # too, and no decision changed): nothing at the input clips; what the gap reaches are the ranges inside.
        return ("and though no quantizer reads this input as it comes (one may after a reshape), the ranges "
                "calibrated inside the model were set on that narrower data")
    share = entry.get("clipped_share") if entry else None
    if not isinstance(share, (int, float)) or share >= INPUT_COVERED:
        return "so the ranges of the missing part clip"
    low, high = entry.get("representable_min"), entry.get("representable_max")
    span = f"its range [{low:.3g}, {high:.3g}]" if isinstance(low, (int, float)) and isinstance(high, (int, float)) \
        else "its range"
    return (f"yet the model's own input quantizer covers the evaluation values ({span} clips {share:.2%} of them): the "
            "gap reaches the ranges calibrated inside the model, set on that narrower data")


def _blank(calib: dict[str, float], evaluation: dict[str, float]) -> bool:
    """A calibration held at zero or at the evaluation's black or white level: no content (np.zeros, silence), where
    one value inside the range is one setting of the input (a difficulty label held at 0.49 of 0..1)."""
    return calib["min"] == 0 or shares_level(calib, evaluation)


def _frozen_channels(ctx: Context) -> Iterator[Finding]:
    """Channels (a table's columns) the calibration held at one value while the evaluation varies them
    (analysis/coverage.frozen_channels)."""
    diverging = diverging_outputs(ctx, "quantization")
    evaluation = (ctx.eval_stats or {}).get("inputs", {})
    for frozen in frozen_channels(ctx.calib_stats, ctx.eval_stats):
        spread = [evaluation[frozen.name]["channels"][i] for i in frozen.channels]
        yield unrepresentative_calibration.finding(
            title=f"Calibration holds {plural(len(frozen.channels), 'channel')} of input {frozen.name} at one value "
                  f"({_index_words(frozen.channels)} of {frozen.of}) that the evaluation inputs vary",
            severity="error" if outputs_collapse(ctx) else "warning",
            confidence=0.7 if diverging else 0.5, score=0.55 if diverging else 0.3,
            subject=f"frozen channels {frozen.name}", stage="calibration", tags=("root_cause",),
            summary=(f"Every calibration sample has the same value in {_index_words(frozen.channels)} of input "
                     f"{frozen.name} (along axis {frozen.axis}), while the evaluation samples vary there: the "
                     "calibration set is one slice of the data (one category, dataset, site or setting), and every "
                     "range those values feed was calibrated without the others"),
            evidence=(Table("Channels held at one value in calibration", ("channel", "calibration value",
                                                                          "evaluation mean", "evaluation std"),
                            tuple((i, rounded(v), rounded(s["mean"]), rounded(s["std"]))
                                  for i, v, s in zip(frozen.channels, frozen.values, spread))),),
            fixes=_fixes(ctx, [], frozen.name, like=f"inputs from every category, dataset or setting the evaluation "
                                                    f"covers (varying {_index_words(frozen.channels)})"))


def _index_words(indices: tuple[int, ...]) -> str:
    return ("channel " if len(indices) == 1 else "channels ") + ", ".join(str(i) for i in indices[:8]) + (
        " …" if len(indices) > 8 else "")


def _other_content(ctx: Context) -> Iterator[Finding]:
    """Calibration inputs whose mean sits far from the evaluation's at the same black/white level: other content."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    diverging = diverging_outputs(ctx, "quantization")
    samples = calibration_samples(ctx.calib_stats)
    for name in sorted(set(calib) & set(evaluation)):
        shift = content_differs(calib[name], evaluation[name], name, samples)
        c, e = calib[name]["overall"], evaluation[name]["overall"]
        if shift is None or uncovered(c, e) >= UNCOVERED_SPAN:
            continue  # a range the calibration misses is _range_not_covered's finding
        yield unrepresentative_calibration.finding(
            title=f"Calibration inputs unlike the evaluation inputs: input {name} mean {c['mean']:.3g} "
                  f"against {e['mean']:.3g}",
            # An error when the outputs' decisions collapse, as the coverage gap's: the measured difference is then the
            # named cause of an error-level divergence (part 34's segmenter calibrated on another picture lost every
            # nucleus, and the symptom ranked above its cause).
            severity="error" if outputs_collapse(ctx) else "warning",
            confidence=0.6 if diverging else 0.45, score=0.55 if diverging else 0.3,
            subject=f"content {name}", stage="calibration", tags=("root_cause",),
            summary=f"The calibration mean of input {name} is {shift:.2g} evaluation standard deviations from the "
                    f"evaluation mean, with the same black or white level and {_spread_words(c, e)}: the calibration set holds "
                    "other content than the inputs the model is evaluated on (other scenes, another domain), so its "
                    "activation ranges fit that content",
            evidence=(Metric("|Δmean| / evaluation std", rounded(shift, 3), threshold=f"> {MEAN_SHIFT_STD}"),
                      Table("Input statistics", ("set", "min", "max", "mean", "std"),
                            tuple((label, *(rounded(s[k]) for k in ("min", "max", "mean", "std")))
                                  for label, s in (("calibration", c), ("evaluation", e)))),
                      Text("Separating evidence: the sets share their minimum or maximum, so no "
                           "preprocessing step (×255, normalisation, channel order, inversion: QR003) maps one onto "
                           "the other; the content differs. If the outputs stay as faithful as a healthy quantization, "
                           "this is a risk for inputs like the calibration set's rather than today's cause.")),
            fixes=_fixes(ctx, [], name))


def _spread_words(c: dict[str, float], e: dict[str, float]) -> str:
    """The spreads in words: alike within SCALE_BAND, else their factor (no known step gives it: QR003 spoke first)."""
    ratio = c["std"] / e["std"] if e["std"] > 0 else 1.0
    return "a similar spread" if 1 / SCALE_BAND <= ratio <= SCALE_BAND else f"a spread {ratio:.2g}× the evaluation's"


def _other_structure(ctx: Context) -> Iterator[Finding]:
    """Calibration signals much smoother (or rougher) than the evaluation's, where no range, level or preprocessing
    step tells them apart: other content (music for speech) or another sample rate (analysis/calibration_data.py)."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    diverging = diverging_outputs(ctx, "quantization")
    for name in sorted(set(calib) & set(evaluation)):
        smoothness = structure_differs(calib[name], evaluation[name])
        samples = calibration_samples(ctx.calib_stats)
        if (smoothness is None or preprocessing_mismatch(calib[name], evaluation[name], name, samples)
                or content_differs(calib[name], evaluation[name], name, samples) is not None):
            continue  # QR003 names a step, or _other_content already says the content differs
        c_lag, e_lag = smoothness
        yield unrepresentative_calibration.finding(
            title=f"Calibration inputs unlike the evaluation inputs: input {name} is "
                  f"{'smoother' if c_lag > e_lag else 'rougher'} (neighbour correlation {c_lag:.2f} against {e_lag:.2f})",
            severity="warning", confidence=0.55 if diverging else 0.4, score=0.5 if diverging else 0.3,
            subject=f"structure {name}", stage="calibration", tags=("root_cause",),
            summary=f"Neighbouring values of input {name} correlate at {c_lag:.2f} on average in the calibration set and "
                    f"at {e_lag:.2f} in the evaluation set: the calibration signals have other frequency content "
                    "(other scenes or sounds, music for speech, or a sample rate or image size the evaluation "
                    "pipeline converts and the calibration reader did not), so its activation ranges fit that content",
            evidence=(Metric("mean lag-1 autocorrelation, calibration − evaluation", rounded(c_lag - e_lag, 3),
                             threshold=f"|Δ| >= {STRUCTURE_GAP}"),
                      Text("Separating evidence: both sets are real signals (neighbouring values correlate; noise would "
                           "not, QR009), and no range, level or preprocessing step (QR003) tells them apart; their "
                           "smoothness does. Check the calibration reader's sample rate or resize against the "
                           "evaluation pipeline's, then the content.")),
            fixes=_fixes(ctx, [], name))


def _shorter_sequences(ctx: Context) -> Iterator[Finding]:
    """A 0/1 integer input (attention mask) with under half the evaluation's share of ones in calibration."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    diverging = diverging_outputs(ctx, "quantization")
    for name in sorted(n for n in set(calib) & set(evaluation) if categorical(evaluation[n])):
        c, e = calib[name]["overall"], evaluation[name]["overall"]
        if not _is_mask(c) or not _is_mask(e) or e["mean"] <= 0 or c["mean"] >= SHORTER_RATIO * e["mean"]:
            continue
        shape = evaluation[name].get("shape") or [1]
        width = math.prod(int(d) for d in (shape[1:] if len(shape) > 1 else shape))  # one sequence, not the batch
        yield unrepresentative_calibration.finding(
            title=f"Calibration sequences are shorter: input {name} holds {c['mean']:.1%} ones in "
                                   f"calibration, {e['mean']:.1%} in evaluation",
            severity="warning", confidence=0.6 if diverging else 0.45, score=0.55 if diverging else 0.3,
            subject=f"coverage {name}", stage="calibration", tags=("root_cause",),
            summary=f"On average {c['mean'] * width:.1f} of {width} positions hold real tokens in calibration against "
                    f"{e['mean'] * width:.1f} in evaluation: the activations of the later positions (position "
                    "embeddings, attention over a longer context) were never calibrated",
            evidence=(Metric(f"share of ones in {name}: calibration / evaluation", rounded(c["mean"] / e["mean"], 3),
                             threshold=f"< {SHORTER_RATIO}"),
                      Table("Mask statistics", ("set", "share of ones", "real tokens per sample"),
                            (("calibration", rounded(c["mean"], 4), rounded(c["mean"] * width, 1)),
                             ("evaluation", rounded(e["mean"], 4), rounded(e["mean"] * width, 1)))),
                      Text("Separating evidence: both sets use the mask's two values, so it was built the same way (a "
                           "mask frozen at one value is QR003's finding); only the lengths differ. If the outputs are "
                           "as faithful as a healthy quantization, this is a risk for long inputs rather than the "
                           "cause of today's error.")),
            fixes=(Fix("Calibrate on texts with the evaluation's length distribution (whole sentences or documents, "
                       "not truncated snippets), then quantize again"),))


def _other_vocabulary(ctx: Context) -> Iterator[Finding]:
    """An id input whose evaluation values are mostly ids the calibration never holds (analysis/preprocessing.unseen_ids):
    the calibration texts were another vocabulary (another language or alphabet), so the embedding rows the evaluation
    reads never reached any calibrated range."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    diverging = diverging_outputs(ctx, "quantization")
    for name in sorted(set(calib) & set(evaluation)):
        share = unseen_ids(calib[name], evaluation[name])
        if share is None or share < UNSEEN_IDS:
            continue
        c, e = calib[name]["ids"], evaluation[name]["ids"]
        yield unrepresentative_calibration.finding(
            title=f"{percent(share)} of the evaluation's ids never occur in calibration (input {name}): another "
                  "vocabulary",
            severity="warning", confidence=0.6 if diverging else 0.45, score=0.55 if diverging else 0.3,
            subject=f"vocabulary {name}", stage="calibration", tags=("root_cause",),
            summary=f"{percent(share)} of the evaluation's id values of input {name} (its most frequent id set "
                    f"aside, as it may be padding) are ids no calibration sample holds: the calibration has "
                    f"{c['distinct']} distinct ids, the evaluation {e['distinct']}. The calibration texts were of "
                    "another vocabulary (another language or alphabet, or a tokeniser that maps them to one unknown "
                    "id), so the activations of the evaluation's own ids were never calibrated",
            evidence=(Metric(f"evaluation id values unseen in calibration ({name})", rounded(100 * share, 1), unit="%",
                             threshold=f">= {UNSEEN_IDS:.0%}"),
                      Table("Ids", ("set", "values", "distinct ids"),
                            (("calibration", c["values"], c["distinct"]), ("evaluation", e["values"], e["distinct"]))),
                      Text("Separating evidence: the ids are categories, so no rescale or preprocessing step (QR003) "
                           "maps one set onto the other; the calibration simply lacks the evaluation's ids. If the "
                           "outputs are as faithful as a healthy quantization, this is a risk for such inputs rather "
                           "than the cause of today's error.")),
            fixes=(Fix("Calibrate on texts of the evaluation's language and alphabet, encoded by the evaluation "
                       "pipeline's own tokeniser, then quantize again"),))


def _is_mask(overall: dict[str, Any]) -> bool:
    return overall.get("min") == 0 and overall.get("max") == 1
