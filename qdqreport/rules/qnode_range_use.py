"""QR204 (Q-node range use) from the per-layer tables: Q nodes that clip heavily or use little of the INT8 range."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.input_range import input_clipping, over_every_sample, over_samples
from qdqreport.analysis.layers import (HEAVY_CLIPPING, UNDER_USE, clipping_quantizers, inherited, layer_tables,
                                      quantizer_ranges, ranges_from_other_data, underused_quantizers)
from qdqreport.findings import Finding, Fix, Metric, Table
from qdqreport.fixes import (SHAPES_DIFFER_NOTE, Change, corrected_calibration, current_calibration_method,
                             histogram_methods_fail, method_name, requantize_command, robust_method)
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import clamp01
from qdqreport.rules._measured import under_calibration
from qdqreport.testing.layer_examples import layer_chain, qnode, quantization_run
from qdqreport.wording import percent, percent_value, plural, verb

LIST_LIMIT = 15


def _clipping(b):
    quantization_run(b, broken=False)
    b.layers(layer_chain(), qnodes=[qnode("x_QuantizeLinear", "x", 0.0008, 1.0),
                                    qnode("conv2d_57.tmp_0_QuantizeLinear", "conv2d_57.tmp_0", 0.083, 1.0)])


def _underused(b):
    quantization_run(b, broken=True)
    b.layers(layer_chain(), qnodes=[qnode("x_QuantizeLinear", "x", 0.0, 0.0047, -209.9, 208.2)])


def _healthy_qnodes(b):
    quantization_run(b, broken=False)
    b.layers(layer_chain(), qnodes=[qnode("x_QuantizeLinear", "x", 0.0008, 1.0), qnode("Clip@0_QuantizeLinear", "Clip@0", 0.0, 0.62)])


@rule(id="QR204", slug="qnode-range-use", title="Q nodes that clip heavily or use little of the INT8 range",
      examples=[Fires("8% of an activation saturates", _clipping),
                Fires("the ×255 input quantizer spans 0.5% of its range", _underused),
                Quiet("healthy activation quantizers", _healthy_qnodes)])
def qnode_range_use(ctx: Context) -> Iterator[Finding]:
    """Activation QuantizeLinear nodes that saturate more than 1% of the evaluation values, or whose
    observed values span less than 10% of the representable range (measured in the QDQ model).
    Clipping a Relu discards is not counted (analysis/layers.clipped_below_relu): ONNX Runtime
    calibrates a Conv's output pair from the Relu after it, so a pair read only by Relus that
    clips below a non-positive minimum (and not above its maximum) loses nothing.

    A Q node whose calibrated range fits its FP32 values (the default collect's activation-range pass,
    measured in the FP32 model: no heavy clipping, no under-use) and is distorted only in the QDQ model
    is no calibration fault: INT8 error upstream changes the values it quantizes (a LayerNorm variance
    rounded to 0, a per-tensor BatchNorm multiplier that zeroes channels). Those Q nodes get one info
    finding of their own, a symptom that points upstream (QR201, QR200), and no re-calibration fix.
    When the bundle proves the calibration data unlike the evaluation data (analysis/upstream.py: a
    preprocessing step, noise, a coverage gap), the clipping and under-use findings are what that
    predicts: at most a warning, scored 0.2, under the calibration finding, saying so.

    Why it matters: clipped values are lost (the scale is too small for the evaluation data); a
    range used at 5% leaves about 13 of 256 levels for the values (the scale is too large, e.g.
    calibration data on another scale or a few outliers).

    Fix: calibrate on data like the evaluation data; for clipping use max calibration, for
    under-use try entropy or percentile calibration, or exclude the node. The clipping fix never
    reprints the user's own recipe: when another finding names a corrected calibration file
    (QR003's calib_fixed, QR009's real_calib.npz) its command reads that file; when the model already
    used max (MinMax) calibration and no corrected file exists, it prints no command and says what
    the calibration data must change (the same recipe on the same file rebuilds the same ranges).
    """
    tables = layer_tables(ctx)
    if tables is None:
        return
    clipping, under = clipping_quantizers(tables, ctx.precision), underused_quantizers(tables)
    # Ranges the FP32 values fit, distorted only in the QDQ model, are upstream INT8 error, not calibration's.
    ranges = quantizer_ranges(ctx)
    upstream = inherited(clipping + under, ranges)
    if upstream:
        yield _inherited(tables, ranges, [q for q in clipping + under if q.q_node in upstream])
        clipping, under = [q for q in clipping if q.q_node not in upstream], [q for q in under if q.q_node not in upstream]
    # The per-layer pass reads a spread subset of the evaluation samples; QR003's first quantizer range reads them all
    # (analysis/input_range.py): each share says which samples it is over, and an input quantizer's quotes both.
    over = over_samples(tables.summary.get("samples"), tables.summary.get("of_samples"))
    everyone = over_every_sample(ctx.manifest)
    if clipping:
        worst = clipping[0]
        whole = input_clipping(ctx.range_use, worst.q_node)
        yield _under_calibration(ctx, qnode_range_use.finding(
            title=f"{plural(len(clipping), 'Q node')} {verb(len(clipping), 'clips')} more than {HEAVY_CLIPPING:.0%} of {'its' if len(clipping) == 1 else 'their'} values",
            severity="warning", confidence=0.85, score=clamp01(worst.clipped_share * 5),
            subject="clipping:" + ";".join(q.q_node for q in clipping[:5]), stage=tables.comparison_id,
            tags=("root_cause",), evidence=(Metric("worst clipped share", percent_value(worst.clipped_share), "%",
                                                   threshold=f"> {HEAVY_CLIPPING:.0%}"), _qnode_table(clipping, over, everyone, ctx)),
            summary=f"{worst.q_node} saturates {percent(worst.clipped_share)} of the values of {worst.tensor}"
                    + (f" {over}" if over else "")
                    + (f" ({percent(whole)} {everyone}, as the first quantizer range shows)"
                       if whole is not None and everyone and everyone != over else "") + ".",
            fixes=(_clipping_fix(ctx, worst),)))
    if under:
        worst = under[0]
        yield _under_calibration(ctx, qnode_range_use.finding(
            title=f"{plural(len(under), 'Q node')} {verb(len(under), 'uses')} less than {UNDER_USE:.0%} of the INT8 range",
            severity="warning", confidence=0.8, score=clamp01(1.0 - worst.range_used / UNDER_USE) * 0.6,
            subject="under-use:" + ";".join(q.q_node for q in under[:5]), stage=tables.comparison_id,
            tags=("root_cause",), evidence=(Metric("smallest range used", percent_value(worst.range_used), "%",
                                                   threshold=f"< {UNDER_USE:.0%}"), _qnode_table(under, over, everyone, ctx)),
            summary=(f"{worst.q_node} sees values in [{worst.observed_min:.4g}, {worst.observed_max:.4g}] but its "
                     f"scale represents [{worst.representable_min:.4g}, {worst.representable_max:.4g}]: "
                     f"{percent(worst.range_used)} of the range."),
            fixes=(_underuse_fix(ctx),)))


def _under_calibration(ctx: Context, finding: Finding) -> Finding:
    """*finding* ranked under the calibration finding when the bundle proves the calibration data unlike the evaluation
    data (analysis/upstream.py): its ranges were set on that data, so their clipping or under-use is what the mismatch
    predicts, and re-calibrating the same data another way is not the fix (a new user's open_nsfw calibrated
    torchvision-style: a clipping first Conv led, above the preprocessing step itself)."""
    return under_calibration(ctx, finding, "these ranges were set on it. Fix the calibration first (its finding "
                                           "ranks above), then collect again.")


def _inherited(tables, ranges, rows: list) -> Finding:
    """Q nodes whose ranges fit their FP32 values (*ranges*, the activation-range pass) and are distorted only in the
    QDQ model (analysis/layers.inherited): a symptom of INT8 error upstream, which no calibration change undoes."""
    fp32 = {row["q_node"]: row for row in ranges.rows}
    first = rows[0]
    return qnode_range_use.finding(
        title=(f"1 Q node clips or under-uses its range only in the QDQ model" if len(rows) == 1 else
               f"{len(rows)} Q nodes clip or under-use their ranges only in the QDQ model")
              + ": error inherited from upstream",
        severity="info", confidence=0.8, score=0.1, subject="inherited:" + ";".join(q.q_node for q in rows[:5]),
        stage=tables.comparison_id, tags=("symptom",),
        evidence=(Table("The same Q nodes in the QDQ model and in the FP32 model",
                        ("Q node", "QDQ clipped", "FP32 clipped", "QDQ range used", "FP32 range used"),
                        tuple((q.q_node, percent(q.clipped_share), percent(fp32[q.q_node]["clipped_share"]),
                               percent(q.range_used), _share(fp32[q.q_node].get("range_used")))
                              for q in rows[:LIST_LIMIT])),),
        summary=(f"{first.q_node}'s calibrated range [{_g(first.representable_min)}, {_g(first.representable_max)}] fits "
                 f"its FP32 values ([{_g(fp32[first.q_node].get('observed_min'))}, "
                 f"{_g(fp32[first.q_node].get('observed_max'))}], the activation-range pass), but in the QDQ model it "
                 f"sees [{_g(first.observed_min)}, {_g(first.observed_max)}]: INT8 error upstream distorts the values "
                 "it quantizes, so re-calibrating cannot fix it."),
        fixes=(Fix("Find where the error is born upstream (QR201, QR200) and keep that node in float; the calibration "
                   "set these ranges right"),))


def _underuse_fix(ctx: Context) -> Fix:
    """Re-calibrate on the corrected calibration file another finding names (QR003, QR009) when there is one: entropy
    on the same unlike data rebuilt the same wide ranges (a new user's CRAFT calibrated on raw 0..255 pixels: 24 of 24
    images still changed, 1 box of 144); else entropy calibration against outliers."""
    fixed = corrected_calibration(ctx)
    if fixed:
        return _on_corrected(ctx, fixed, Change())
    if histogram_methods_fail(ctx):
        return Fix(f"Re-calibrate on data with the evaluation data's scale, without the outliers ({SHAPES_DIFFER_NOTE})")
    robust = robust_method(ctx)
    return Fix(f"Re-calibrate on data with the evaluation data's scale, or use {method_name(ctx, robust)} calibration "
               "against outliers", requantize_command(ctx, Change(calibration_method=robust)))


def _clipping_fix(ctx: Context, worst) -> Fix:
    """Re-calibrate so that *worst* stops clipping, never with the user's own recipe unchanged: on the corrected
    calibration file another finding names (QR003, QR009), with max calibration when the model used another method;
    when neither changes anything (max calibration already, no corrected file), say what to change instead."""
    fixed = corrected_calibration(ctx)
    already_max = current_calibration_method(ctx) == "max"
    method = method_name(ctx, "max")
    if fixed:
        return _on_corrected(ctx, fixed, Change(calibration_method=None if already_max else "max"),
                             "" if already_max else f", with {method} calibration")
    if not already_max:
        # Unmeasured, and a trade: no clipping for coarser steps everywhere. A new user's PP-OCRv4 DBNet under
        # ModelOpt (entropy; 2% clipped at one ReLU) kept 49% of its boxes with max where entropy kept 75%.
        return Fix(f"Re-calibrate with {method} calibration (it keeps the calibration data's whole range), on data "
                   "like the evaluation inputs, and compare: every range it widens gets coarser steps, which can cost "
                   "more than the clipping it removes", requantize_command(ctx, Change(calibration_method="max")))
    if ranges_from_other_data(quantizer_ranges(ctx), frozenset(ctx.input_names)):
        # The ranges clip the calibration file's own values: not set on this file as a whole (a chunk of it under
        # onnxruntime's CalibMaxIntermediateOutputs, or another file), so the same recipe on it changes them.
        return Fix(f"These ranges were not set on the calibration file as a whole (they clip its own values: see the "
                   f"calibration finding), so re-quantizing on it changes them: {worst.tensor} reaches "
                   f"[{_g(worst.observed_min)}, {_g(worst.observed_max)}] against "
                   f"[{_g(worst.representable_min)}, {_g(worst.representable_max)}]. Re-quantize on the whole file and "
                   "measure it against this model (qdqreport confirm) before keeping it", requantize_command(ctx))
    return Fix(f"Calibrate on data that covers the evaluation inputs: {worst.tensor} reaches "
               f"[{_g(worst.observed_min)}, {_g(worst.observed_max)}] but its calibrated scale represents "
               f"[{_g(worst.representable_min)}, {_g(worst.representable_max)}]. The model already uses {method} "
               "calibration, which keeps every calibration value, so re-running the same recipe on the same file "
               "rebuilds the same ranges: the calibration samples must be preprocessed as the evaluation inputs and "
               "span their range (then re-quantize with that file)")


def _on_corrected(ctx: Context, fixed: str, change: Change, method: str = "") -> Fix:
    """Re-quantize on the corrected calibration file the calibration finding's fix writes (*method*: the words of a
    calibration method *change* also sets)."""
    return Fix(f"Re-calibrate on the corrected calibration data ({fixed}, which the calibration finding's fix writes: "
               f"the current file is unlike the evaluation inputs){method}", requantize_command(ctx, change, fixed))


def _share(value: float | None) -> str:
    return "?" if value is None else percent(float(value))


def _g(value: float | None) -> str:
    return "?" if value is None else f"{value:.4g}"


def _qnode_table(rows: list[dict], over: str, everyone: str, ctx: Context) -> Table:
    inputs = [(q.q_node, input_clipping(ctx.range_use, q.q_node)) for q in rows[:LIST_LIMIT]]
    whole = "; ".join(f"{name}, an input quantizer, clips {percent(share)} {everyone} (the first quantizer range)"
                      for name, share in inputs if share is not None and everyone and everyone != over)
    return Table("Q nodes", ("Q node", "tensor", "clipped", "range used", "representable", "observed"),
                 tuple((q.q_node, q.tensor, percent(q.clipped_share), percent(q.range_used),
                        f"[{q.representable_min:.4g}, {q.representable_max:.4g}]",
                        f"[{(q.observed_min or 0):.4g}, {(q.observed_max or 0):.4g}]") for q in rows[:LIST_LIMIT]),
                 note="; ".join(filter(None, (f"{len(rows) - LIST_LIMIT} more" if len(rows) > LIST_LIMIT else "",
                                              f"clipped and range used {over} (the per-layer pass's)" if over else "",
                                              whole))))
