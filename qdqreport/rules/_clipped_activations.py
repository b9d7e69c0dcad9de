"""QR006's measured coverage evidence: evaluation activations beyond the ranges calibration set, or far inside them.

Not a rule module (the leading underscore keeps discover() from treating it as one): QR006
(rules/unrepresentative_calibration.py) calls it with its own finding factory and fixes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from qdqreport.analysis import evidence
from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import (MISSED_SHARE, OWN_CLIPPED, UNCOVERED_FAR_SHARE, UNDER_USE, excess_clipping,
                                      far_uncovered_quantizers, inner_measured, missed_ranges, overwide_quantizers,
                                      quantizer_ranges, ranges_from_other_data, relu_read_tensors, uncovered_line,
                                      uncovered_quantizers, wide_ranges_behind)
from qdqreport.analysis.collation import samples_held
from qdqreport.analysis.coverage import extreme_inputs
from qdqreport.analysis.preprocessing import mismatched_inputs
from qdqreport.analysis.upstream import far_too_wide_use
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.fixes import Change, calibration_filter, made_by_ort, requantize_command, robust_method
from qdqreport.rules._common import diverging_outputs, outputs_collapse, rounded
from qdqreport.rules._measured import REFUTED_SCORE
from qdqreport.wording import plural, verb

SHOWN = 10


def clipped_activations(ctx: Context, finding: Callable[..., Finding], fixes: tuple[Fix, ...]) -> Iterator[Finding]:
    """One finding when inner activation Q nodes clip uncovered_line more of the evaluation's values than of the
    calibration data's own, and no preprocessing step (QR003) explains the calibration inputs; collected without the
    calibration file, when most of some inner activation's evaluation values pass its range
    (_missed_without_calibration)."""
    ranges = quantizer_ranges(ctx)
    if ranges is not None and ranges.calib_samples is None:
        yield from _missed_without_calibration(ctx, ranges, finding, fixes)
        return
    if ranges is None or mismatched_inputs(ctx.calib_stats, ctx.eval_stats):
        return
    skip, relu_read = frozenset(ctx.input_names), relu_read_tensors(ctx.precision)
    many = uncovered_quantizers(ranges, skip, relu_read)  # a large share of some Q node's values
    far = far_uncovered_quantizers(ranges, skip, relu_read)  # a small share, far past, at many Q nodes (rare content)
    uncovered = many + [q for q in far if q not in many]
    if not uncovered:
        return
    worst, inner = uncovered[0], len(inner_measured(ranges, skip))
    yield finding(
        title=(f"{plural(len(uncovered), 'activation')} {verb(len(uncovered), 'clips')} far more of the evaluation data "
               "than of the calibration data: calibration never saw values like these") if many else
              (f"{len(far)} of {inner} activations get evaluation values far past the ranges calibration gave them, "
               "where the calibration data reached none: calibration never saw values like these"),
        **_measured_warning(ctx), subject="clipped activations",
        summary=f"Measured in the FP32 model on {ranges.samples} of {ranges.of_samples} evaluation samples and "
                f"{ranges.calib_samples} calibration samples, spread over each set: {worst.get('tensor') or worst['q_node']} "
                f"clips {float(worst['clipped_share']):.1%} of its evaluation values at the range calibration gave it "
                f"([{_g(worst.get('representable_min'))}, {_g(worst.get('representable_max'))}], evaluation values "
                f"[{_g(worst.get('observed_min'))}, {_g(worst.get('observed_max'))}]) but "
                f"{float(worst['calib_clipped_share']):.1%} of the calibration data's own: the evaluation data holds "
                "content the calibration set lacks",
        evidence=(*([Metric("worst excess clipping (evaluation − calibration share)",
                            rounded(float(excess_clipping(worst)), 4), threshold=f">= {uncovered_line(worst)}")] if many
                    else []),
                  *([Metric("share of activations whose evaluation values pass the calibrated range by a quarter of "
                            "its span or more", rounded(len(far) / max(1, inner), 3),
                            threshold=f">= {UNCOVERED_FAR_SHARE}")] if far else []),
                  Table("Activations clipped beyond what calibration data clips",
                        ("Q node", "tensor", "evaluation clipped", "calibration clipped", "calibrated min",
                         "calibrated max", "evaluation min", "evaluation max"),
                        tuple((q["q_node"], q.get("tensor"), rounded(float(q["clipped_share"]), 4),
                               rounded(float(q["calib_clipped_share"]), 4),
                               *(rounded(q.get(k)) for k in ("representable_min", "representable_max",
                                                             "observed_min", "observed_max")))
                              for q in uncovered[:SHOWN])),
                  Text("Separating evidence: entropy and percentile calibration clip a share of their own data by "
                       "design, so only clipping beyond that share counts; the calibration inputs show no "
                       "preprocessing step (QR003) and the Q nodes reading the model inputs are left out. Content "
                       "the calibration lacked (a class, scene or sound it never held, a recurrent state it never "
                       "fed) drives these activations past their ranges. If the outputs stay faithful, it is a risk "
                       "for inputs like these rather than today's cause.")),
        fixes=fixes)


def _missed_without_calibration(ctx: Context, ranges: Any, finding: Callable[..., Finding],
                                fixes: tuple[Fix, ...]) -> Iterator[Finding]:
    """Without the calibration file: inner activations whose ranges most of the evaluation's values pass
    (analysis/layers.missed_ranges). A new user's tagger calibrated on all-padding input read only "4 of 14 activations
    use less than 10% of their ranges" (too wide), where every value of its LayerNorm variances clipped."""
    skip = frozenset(ctx.input_names)
    missed = missed_ranges(ranges, skip, relu_read_tensors(ctx.precision))
    if not missed:
        return
    worst, inner = missed[0], len(inner_measured(ranges, skip))
    yield finding(
        title=f"{len(missed)} of {inner} activations clip most of their evaluation values: the calibration data never "
              "reached values like these",
        **_measured_warning(ctx), subject="clipped activations",
        summary=f"Measured in the FP32 model on {ranges.samples} of {ranges.of_samples} evaluation samples: "
                f"{worst.get('tensor') or worst['q_node']} clips {float(worst['clipped_share']):.1%} of its values at "
                f"the range calibration gave it ([{_g(worst.get('representable_min'))}, "
                f"{_g(worst.get('representable_max'))}], evaluation values [{_g(worst.get('observed_min'))}, "
                f"{_g(worst.get('observed_max'))}]). No calibration method clips that much of its own data: the data "
                "these ranges were set on held nothing like the evaluation's here (blank or padding inputs, another "
                "domain, a missing preprocessing step)",
        evidence=(Metric("worst clipped share of the evaluation values", rounded(float(worst["clipped_share"]), 4),
                         threshold=f">= {MISSED_SHARE}"),
                  _ranges_table("Activations whose ranges most evaluation values pass", "evaluation clipped",
                                "clipped_share", missed),
                  Text("Separating evidence: MinMax calibration keeps every value of its data, percentile clips about "
                       "0.001% and entropy a fifth at most; the Q nodes reading the model inputs are left out. The "
                       "calibration file was not given (collect --calib), so what it held cannot be shown: collect "
                       "again with it to see its statistics beside the evaluation's.")),
        fixes=fixes)


def ranges_not_from_this_file(ctx: Context, finding: Callable[..., Finding]) -> Iterator[Finding]:
    """One finding when a quantize_static model's ranges clip the calibration file's own values at many Q nodes
    (analysis/layers.ranges_from_other_data): they were set on other data than the file collect was given."""
    ranges = quantizer_ranges(ctx)
    if ranges is None or not made_by_ort(ctx):
        return  # ModelOpt's entropy clips its own calibration data by design
    clipping = ranges_from_other_data(ranges, frozenset(ctx.input_names))
    if not clipping:
        return
    worst, inner = clipping[0], len(inner_measured(ranges, frozenset(ctx.input_names)))
    yield finding(
        title=f"{len(clipping)} of {inner} activation ranges clip the calibration file's own values: the model was "
              "not calibrated on this file as a whole",
        # Scored as a weak suspect: which ranges serve the model better is unmeasured (on the thirty-seventh part's
        # generator the whole file's served it worse: output cosine 0.875 with the last chunk's, -0.17 with the
        # file's under MinMax, 0.40 under Percentile).
        **{**_measured_warning(ctx), "score": REFUTED_SCORE}, subject="ranges from other data",
        summary=f"Measured in the FP32 model on {ranges.calib_samples} calibration samples: "
                f"{worst.get('tensor') or worst['q_node']} clips {float(worst['calib_clipped_share']):.1%} of the "
                f"values the calibration file gives it (its range [{_g(worst.get('representable_min'))}, "
                f"{_g(worst.get('representable_max'))}]). A MinMax calibration on this file keeps every one of its "
                "values and a percentile one clips about 0.001% of them: these ranges came from other data, another "
                "file or a part of this one",
        evidence=(Metric(f"activation ranges clipping over {OWN_CLIPPED:.1%} of their own calibration values",
                         len(clipping), threshold=f"of {inner}"),
                  Table("Activations whose range clips the calibration file's own values",
                        ("Q node", "tensor", "calibration clipped", "calibrated min", "calibrated max"),
                        tuple((q["q_node"], q.get("tensor"), rounded(float(q["calib_clipped_share"]), 4),
                               *(rounded(q.get(k)) for k in ("representable_min", "representable_max")))
                              for q in clipping[:SHOWN])),
                  Text("Separating evidence: Q nodes that share one range (onnxruntime ties a Concat's or a "
                       "MaxPool's) are left out, as are those reading the model inputs. Two known ways to get here: "
                       "the model was calibrated on another file than the one given to collect (--calib), or on a "
                       "part of it: onnxruntime's CalibMaxIntermediateOutputs, documented as giving the same ranges "
                       "with less memory, keeps only the last chunk's ranges (onnxruntime 1.32 clears each full chunk "
                       "without computing it; microsoft/onnxruntime#18893). Entropy calibration also clips its own "
                       "data: if the model was calibrated with Entropy, read this as that.")),
        fixes=(Fix("Find which data set these ranges: if your quantize_static call sets "
                   "extra_options={'CalibMaxIntermediateOutputs': ...}, they are its last chunk's (CalibStridedMinMax, "
                   "with a stride dividing the sample count, bounds memory and merges every chunk); if the model was "
                   "calibrated on another file, collect again with that file as --calib: this report's calibration "
                   "findings judge the file collect was given", ""),
               Fix("Re-quantize on the whole file and measure it against this model (qdqreport confirm) before "
                   "keeping it: the whole file's ranges keep every outlier and can serve the model worse",
                   requantize_command(ctx)),
               Fix("Or on the whole file with Percentile calibration, measured the same way",
                   requantize_command(ctx, Change(calibration_method=robust_method(ctx))))))


def overwide_ranges(ctx: Context, finding: Callable[..., Finding], fixes: tuple[Fix, ...]) -> Iterator[Finding]:
    """One finding when a large share of the inner activation Q nodes use under UNDER_USE of their calibrated ranges
    (analysis/layers.overwide_quantizers) and no preprocessing step (QR003) explains the calibration inputs."""
    ranges = quantizer_ranges(ctx)
    if ranges is None or mismatched_inputs(ctx.calib_stats, ctx.eval_stats):
        return
    wide = overwide_quantizers(ranges, frozenset(ctx.input_names))
    if not wide:
        return
    inner = len(inner_measured(ranges, frozenset(ctx.input_names)))
    worst = wide[0]
    confirmed = _whatif_behind(ctx)
    yield finding(
        title=f"{len(wide)} of {inner} activations use less than {UNDER_USE:.0%} of the ranges calibration gave them: "
              "the calibration data drove them far beyond the evaluation's values",
        **(_confirmed(ctx) if confirmed else _measured_warning(ctx)), subject="over-wide activation ranges",
        summary=f"Measured in the FP32 model on {ranges.samples} of {ranges.of_samples} evaluation samples: "
                f"{worst.get('tensor') or worst['q_node']} reaches [{_g(worst.get('observed_min'))}, "
                f"{_g(worst.get('observed_max'))}] but calibration set its range to "
                f"[{_g(worst.get('representable_min'))}, {_g(worst.get('representable_max'))}] "
                f"({float(worst['range_used']):.1%} of it used): the evaluation values fall on a few of the 256 "
                "levels. The model inputs' own quantizers are in use, so the calibration inputs are on the "
                "evaluation's scale but hold other content",
        evidence=(Metric("activations using under " + f"{UNDER_USE:.0%} of their range", len(wide),
                         threshold=f"of {inner}"),
                  _ranges_table("Activations whose calibrated range is far wider than the evaluation values",
                                "range used", "range_used", wide),
                  Text("Separating evidence: the Q nodes reading the model inputs use their ranges and the calibration "
                       "inputs show no preprocessing step (QR003), yet inside the network the calibration data made "
                       "activations ten times larger than the evaluation data does, across many layers: content of "
                       "another kind (photographs for a model of another domain, louder or denser signals). If the "
                       "outputs stay faithful, it is a risk for precision rather than today's cause."), *confirmed),
        fixes=_outlier_fixes(ctx) if any(far_too_wide_use(float(q["range_used"])) for q in wide) else fixes)


def _outlier_fixes(ctx: Context) -> tuple[Fix, ...]:
    """Ranges a thousand times too wide are set by a few extreme calibration values, not by a set too small or too
    plain: more data keeps the extremes, and Percentile or Entropy calibration drops them only when they are a sliver
    of the values (a new user's MiniMol, one outlier molecule among 100: MinMax RMSE 4.589, Percentile 4.495, Entropy
    4.586 kcal/mol; the 99 others alone 1.248, FP32 1.231). So the fix finds and drops those samples."""
    extremes = extreme_inputs(ctx.calib_stats, ctx.eval_stats)
    read = (ctx.calib_stats or {}).get("samples")
    collated = read is not None and (samples_held(ctx.calib_stats) or read) > read
    if not extremes:
        return (Fix("Find the calibration samples that drive these activations far beyond the evaluation's values and "
                    "drop them or fix how they were made (the model inputs do not show them: compare what each "
                    "calibration sample makes of the tensors listed), then re-quantize", ""),)
    x = extremes[0]
    low, high = x.evaluation
    span = high - low
    where = (f"input {x.name}'s calibration values reach [{x.calib[0]:.4g}, {x.calib[1]:.4g}], "
             f"{x.spans:.0f} times the evaluation's span past its [{low:.4g}, {high:.4g}]")
    command, filtered = ("", None) if collated else calibration_filter(ctx, x.name, low - span, high + span)
    how = ("filter the graphs before collating them into one calibration sample" if collated else
           "the command keeps the samples within one evaluation span of the evaluation range" if command else
           "drop them where your calibration reader makes them")
    first = Fix(f"Drop the calibration samples with extreme values, or fix how they were made: {where}; {how}", command)
    if filtered is None:
        return (first,)
    return (first, Fix("Re-quantize with the filtered set", requantize_command(ctx, Change(), filtered)))


# Over the layer findings' 0.6: the what-if located the damage in the nodes these ranges feed (analysis/layers.
# wide_ranges_behind), and the ranges say why it is there.
CONFIRMED_SCORE = 0.62


def _whatif_behind(ctx: Context) -> tuple[Text, ...]:
    """The what-if's confirmation, as evidence, when the set it measured restoring the outputs computes tensors whose
    ranges are a thousand times too wide; else nothing."""
    found = evidence.whatif(ctx)
    if found is None or found.verdict != evidence.CONFIRMS or not wide_ranges_behind(ctx, found.nodes):
        return ()
    return (Text(f"Confirmed by measurement: {found.line}. Those nodes compute the tensors whose ranges are far too "
                 "wide: taking them out of INT8 takes the ranges out; calibrating without the data that set them keeps "
                 "the nodes in INT8."),)


def _confirmed(ctx: Context) -> dict[str, Any]:
    """Severity, confidence, score, stage and tags of the over-wide finding the what-if confirmed: an error when an
    output collapses (severity from impact), ranked above the layer findings it explains."""
    return {"severity": "error" if outputs_collapse(ctx) else "warning", "confidence": 0.85,
            "score": CONFIRMED_SCORE, "stage": "calibration", "tags": ("root_cause",)}


def _measured_warning(ctx: Context) -> dict[str, Any]:
    """Severity, confidence, score, stage and tags of either finding: scored under QR006's input-level findings (0.55-0.6,
    0.3-0.35 when the outputs agree), which name the content the calibration lacks; what the activations show is its
    consequence inside the network, a risk rather than today's cause when the outputs agree."""
    diverging = diverging_outputs(ctx, "quantization")
    # Confidence x score stays under the input-level content finding's (0.45 x 0.3 when the outputs agree): photographs
    # calibrating a layout model got both, and the input-level one names the content.
    return {"severity": "warning", "confidence": 0.7 if diverging else 0.45, "score": 0.45 if diverging else 0.25,
            "stage": "calibration", "tags": ("root_cause",)}


def _ranges_table(title: str, measure: str, key: str, rows: list[dict[str, Any]]) -> Table:
    """The first SHOWN activation quantizers of *rows*: their *key* share (as *measure*), calibrated and evaluation
    ranges."""
    return Table(title, ("Q node", "tensor", measure, "calibrated min", "calibrated max", "evaluation min",
                         "evaluation max"),
                 tuple((q["q_node"], q.get("tensor"), rounded(float(q[key]), 4),
                        *(rounded(q.get(k)) for k in ("representable_min", "representable_max", "observed_min",
                                                      "observed_max")))
                       for q in rows[:SHOWN]))


def _g(value: Any) -> str:
    return "?" if value is None else f"{float(value):.3g}"
