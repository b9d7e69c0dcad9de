"""QR006's measured coverage evidence: evaluation activations beyond the ranges calibration set, or far inside them.

Not a rule module (the leading underscore keeps discover() from treating it as one): QR006
(rules/unrepresentative_calibration.py) calls it with its own finding factory and fixes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import (UNCOVERED_FAR_SHARE, UNDER_USE, excess_clipping, far_uncovered_quantizers,
                                      inner_measured, overwide_quantizers, quantizer_ranges, relu_read_tensors,
                                      uncovered_line, uncovered_quantizers)
from qdqreport.analysis.preprocessing import mismatched_inputs
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules._common import diverging_outputs, rounded
from qdqreport.wording import plural, verb

SHOWN = 10


def clipped_activations(ctx: Context, finding: Callable[..., Finding], fixes: tuple[Fix, ...]) -> Iterator[Finding]:
    """One finding when inner activation Q nodes clip uncovered_line more of the evaluation's values than of the
    calibration data's own, and no preprocessing step (QR003) explains the calibration inputs."""
    ranges = quantizer_ranges(ctx)
    if ranges is None or ranges.calib_samples is None or mismatched_inputs(ctx.calib_stats, ctx.eval_stats):
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
    yield finding(
        title=f"{len(wide)} of {inner} activations use less than {UNDER_USE:.0%} of the ranges calibration gave them: "
              "the calibration data drove them far beyond the evaluation's values",
        **_measured_warning(ctx), subject="over-wide activation ranges",
        summary=f"Measured in the FP32 model on {ranges.samples} of {ranges.of_samples} evaluation samples: "
                f"{worst.get('tensor') or worst['q_node']} reaches [{_g(worst.get('observed_min'))}, "
                f"{_g(worst.get('observed_max'))}] but calibration set its range to "
                f"[{_g(worst.get('representable_min'))}, {_g(worst.get('representable_max'))}] "
                f"({float(worst['range_used']):.1%} of it used): the evaluation values fall on a few of the 256 "
                "levels. The model inputs' own quantizers are in use, so the calibration inputs are on the "
                "evaluation's scale but hold other content",
        evidence=(Metric("activations using under " + f"{UNDER_USE:.0%} of their range", len(wide),
                         threshold=f"of {inner}"),
                  Table("Activations whose calibrated range is far wider than the evaluation values",
                        ("Q node", "tensor", "range used", "calibrated min", "calibrated max", "evaluation min",
                         "evaluation max"),
                        tuple((q["q_node"], q.get("tensor"), rounded(float(q["range_used"]), 4),
                               *(rounded(q.get(k)) for k in ("representable_min", "representable_max",
                                                             "observed_min", "observed_max")))
                              for q in wide[:SHOWN])),
                  Text("Separating evidence: the Q nodes reading the model inputs use their ranges and the calibration "
                       "inputs show no preprocessing step (QR003), yet inside the network the calibration data made "
                       "activations ten times larger than the evaluation data does, across many layers: content of "
                       "another kind (photographs for a model of another domain, louder or denser signals). If the "
                       "outputs stay faithful, it is a risk for precision rather than today's cause.")),
        fixes=fixes)


def _measured_warning(ctx: Context) -> dict[str, Any]:
    """Severity, confidence, score, stage and tags of either finding: scored under QR006's input-level findings (0.55-0.6,
    0.3-0.35 when the outputs agree), which name the content the calibration lacks; what the activations show is its
    consequence inside the network, a risk rather than today's cause when the outputs agree."""
    diverging = diverging_outputs(ctx, "quantization")
    # Confidence x score stays under the input-level content finding's (0.45 x 0.3 when the outputs agree): photographs
    # calibrating a layout model got both, and the input-level one names the content.
    return {"severity": "warning", "confidence": 0.7 if diverging else 0.45, "score": 0.45 if diverging else 0.25,
            "stage": "calibration", "tags": ("root_cause",)}


def _g(value: Any) -> str:
    return "?" if value is None else f"{float(value):.3g}"
