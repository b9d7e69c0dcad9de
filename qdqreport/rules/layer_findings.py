"""QR202 (FP16 overflow risk), QR203 (what-if proven fix) and QR204 (Q-node range use) from the per-layer tables."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import (FP16_MAX, HEAVY_CLIPPING, UNDER_USE, clipping_quantizers, fp16_overflows,
                                       layer_tables, underused_quantizers)
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.agreement import COLLAPSED
from qdqreport.fixes import exclusion_args, modelopt_command
from qdqreport.rules._common import clamp01, rounded
from qdqreport.rules._layer_examples import (chain_precision, layer_chain, qnode, quantization_run, whatif_trials)

from qdqreport.wording import percent, percent_value, plural, verb
LIST_LIMIT = 15


def _overflow(b):
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(overflow_at=9))


def _overflow_in_fp32(b):
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(overflow_at=9, dtype="fp32"))


def _healthy(b):
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain())


@rule(id="QR202", slug="fp16-overflow-risk", title="FP32 values beyond the FP16 range on a path that runs in FP16",
      examples=[Fires("an activation reaches 1.3e5 in an FP16 graph", _overflow),
                Quiet("the same activation where the QDQ graph keeps FP32", _overflow_in_fp32),
                Quiet("every activation within FP16 range", _healthy)])
def fp16_overflow_risk(ctx: Context) -> Iterator[Finding]:
    """Activations whose FP32 values exceed 65504 (the largest FP16 number) while the QDQ graph
    computes them in FP16 (ModelOpt converts the non-quantized part to FP16 by default).

    Why it matters: in FP16 such a value becomes infinity, and infinity minus infinity or zero
    times infinity becomes NaN, which spreads to the outputs. It also happens only for some inputs,
    so a small evaluation set may not show it.

    Fix: re-quantize with the non-quantized part kept in FP32 (ModelOpt --high_precision_dtype fp32),
    or rescale the model so intermediate values stay small.
    """
    tables = layer_tables(ctx)
    if tables is None:
        return
    found = fp16_overflows(tables, (ctx.precision or {}).get("float_dtype"))
    if not found:
        return
    worst = found[0]
    rows = tuple((r["tensor"], r["node"], r["op_type"], rounded(r["ref_absmax"], 1), r.get("qdq_dtype") or "")
                 for r in found[:LIST_LIMIT])
    yield Finding(
        rule_id="QR202", title=f"{plural(len(found), 'FP16 activation')} {verb(len(found), 'exceeds')} the FP16 range in FP32",
        severity="error", confidence=0.9, score=0.7, subject=";".join(r["tensor"] for r in found[:5]),
        stage=tables.comparison_id, tags=("root_cause",),
        summary=(f"{worst['tensor']} (node {worst['node']}) reaches |x| = {worst['ref_absmax']:.4g} in the FP32 model, "
                 f"beyond FP16's {FP16_MAX:.0f}, and the QDQ graph computes it in FP16."),
        evidence=(Metric("largest |x| in FP32", rounded(worst["ref_absmax"], 1), threshold=f"> {FP16_MAX:.0f}"),
                  Table("FP16 tensors whose FP32 values overflow FP16", ("tensor", "node", "op type", "FP32 |x| max",
                                                                          "dtype in QDQ"), rows,
                        note=f"{len(found) - LIST_LIMIT} more" if len(found) > LIST_LIMIT else "")),
        fixes=(Fix("Re-quantize keeping the non-quantized part in FP32",
                   modelopt_command(ctx, ["--high_precision_dtype", "fp32"])),))


def _proven(b):
    rows, summary = whatif_trials(reached=True)
    quantization_run(b, broken=True)
    b.manifest["models"]["fp32"] = {"path": "/data/models/cls_fp32.onnx", "sha256": "0" * 64}
    b.layers(layer_chain(born_at=2), whatif=rows, whatif_summary=summary)


def _unreachable(b):
    rows, summary = whatif_trials(reached=False)
    quantization_run(b, broken=True)
    b.layers(layer_chain(born_at=2), whatif=rows, whatif_summary=summary)


def _no_search(b):
    quantization_run(b, broken=False)
    b.layers(layer_chain())


@rule(id="QR203", slug="whatif-proven-fix", title="Measured: excluding these nodes restores the outputs",
      examples=[Fires("8 nodes excluded restore cosine and top-1", _proven),
                Fires("no exclusion among the suspects reaches the target", _unreachable),
                Quiet("no what-if search in the bundle", _no_search)])
def whatif_proven_fix(ctx: Context) -> Iterator[Finding]:
    """The smallest exclusion set the what-if search found, with its measured effect.

    Every number comes from ONNX Runtime runs of QDQ variants in which the excluded nodes read
    float inputs, on the same samples as the rest of the report. Severity and score follow the
    measured gain: an error when the baseline had collapsed (cosine or top-1 below 0.9) and the
    exclusion reaches the target; the score is the share of the lost agreement recovered. When no
    set of suspects reaches the target, an info finding says so: the damage is spread over the
    graph (typically a calibration problem), not in a few nodes.

    Why it matters: a hand search removes Q/DQ one node at a time; this one is measured and sized.

    Fix: re-quantize with the printed ModelOpt command; its cost is the number of nodes that leave INT8.
    """
    summary = ctx.whatif_summary
    if not summary or not summary.get("baseline") or not summary.get("chosen"):
        return
    base, chosen = summary["baseline"], summary["chosen"]
    if base.get("cosine") is None or chosen.get("cosine") is None or not chosen.get("nodes"):
        return
    evidence = [Metric("output cosine before → after", f"{base['cosine']:.4f} → {chosen['cosine']:.4f}"),
                *([Metric("top-1 agreement before → after", f"{base['top1']:.0%} → {chosen['top1']:.0%}")]
                  if base.get("top1") is not None and chosen.get("top1") is not None else []),
                Metric("nodes leaving INT8", chosen["cost_nodes"], f"of {summary.get('quantized_nodes')}"),
                _trials_table(ctx), Text(f"Search stopped: {summary.get('stopped')}; {summary.get('trials')} ONNX Runtime "
                                         f"trials in {summary.get('seconds')} s on {summary.get('samples')} samples.")]
    if not chosen.get("reached"):
        yield Finding(rule_id="QR203", title="No exclusion of the top suspects restores the outputs", severity="info",
                      confidence=0.95, score=0.2, subject="whatif", tags=("measured", "root_cause"), evidence=tuple(evidence),
                      fixes=(Fix("Check the calibration data first (QR003, QR204); exclusions cannot recover damage "
                                 "spread over the whole graph"),),
                      summary=(f"Excluding all {len(chosen['nodes'])} top suspects reaches only cosine "
                               f"{chosen['cosine']:.4f}{_top1_text(chosen)} (target {summary['target_cosine']}); the "
                               "error is spread over the graph, so look at calibration first."))
        return
    collapsed = base["cosine"] < COLLAPSED or (base.get("top1") is not None and base["top1"] < COLLAPSED)
    fixes = [Fix(f"Re-quantize with {plural(len(chosen['nodes']), 'node')} excluded (measured above)",
                 modelopt_command(ctx, exclusion_args(chosen["nodes"])))]
    op_type = summary.get("op_type") or {}
    if op_type.get("reached"):
        fixes.append(Fix(f"Or exclude every {op_type['op_type']} ({op_type['nodes']} nodes leave INT8; measured cosine "
                         f"{op_type['cosine']:.4f})", modelopt_command(ctx, exclusion_args(op_types=[op_type["op_type"]]))))
    yield Finding(
        rule_id="QR203", title=f"Measured: excluding {plural(len(chosen['nodes']), 'node')} restores the outputs",
        severity="error" if collapsed else "warning", confidence=0.95, score=_recovered(base, chosen),
        subject=";".join(chosen["nodes"][:8]), tags=("measured", "fix"), evidence=tuple(evidence), fixes=tuple(fixes),
        summary=(f"Excluding {', '.join(chosen['nodes'][:5])}{' …' if len(chosen['nodes']) > 5 else ''} raises output cosine "
                 f"from {base['cosine']:.4f} to {chosen['cosine']:.4f}{_gain_text(base, chosen)} "
                 f"({chosen['cost_nodes']} node(s) leave INT8)."))


def _top1_text(m: dict) -> str:
    return f", top-1 {m['top1']:.0%}" if m.get("top1") is not None else ""


def _gain_text(base: dict, chosen: dict) -> str:
    if base.get("top1") is None or chosen.get("top1") is None:
        return ""
    return f" and top-1 agreement from {base['top1']:.0%} to {chosen['top1']:.0%}"


def _recovered(base: dict, chosen: dict) -> float:
    key = "top1" if base.get("top1") is not None and chosen.get("top1") is not None else "cosine"
    lost = 1.0 - base[key]
    return clamp01((chosen[key] - base[key]) / lost) if lost > 0 else 0.0


def _trials_table(ctx: Context) -> Table:
    comparison = ctx.comparison("quantization")
    rows = ctx.layer_rows(comparison.id, "whatif") if comparison else []
    return Table("What-if trials (each a real ONNX Runtime run)",
                 ("trial", "kind", "excluded", "cosine", "top-1", "SQNR dB", "target met"),
                 tuple((r["trial"], r["kind"], r["op_types"] or _names(r["excluded"]), rounded(r["cosine"]),
                        rounded(r["top1_agree"]), rounded(r["sqnr_db"], 1), "yes" if r["reached"] else "no")
                       for r in rows[:25]))


def _names(joined: str) -> str:
    names = [n for n in (joined or "").split(";") if n]
    return "—" if not names else ", ".join(names[:4]) + (f" (+{len(names) - 4})" if len(names) > 4 else "")


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

    Why it matters: clipped values are lost (the scale is too small for the evaluation data); a
    range used at 5% leaves about 13 of 256 levels for the values (the scale is too large, e.g.
    calibration data on another scale or a few outliers).

    Fix: calibrate on data like the evaluation data; for clipping use max calibration, for
    under-use try entropy or percentile calibration, or exclude the node.
    """
    tables = layer_tables(ctx)
    if tables is None:
        return
    clipping, under = clipping_quantizers(tables), underused_quantizers(tables)
    if clipping:
        worst = clipping[0]
        yield Finding(
            rule_id="QR204", title=f"{plural(len(clipping), 'Q node')} {verb(len(clipping), 'clips')} more than {HEAVY_CLIPPING:.0%} of {'its' if len(clipping) == 1 else 'their'} values",
            severity="warning", confidence=0.85, score=clamp01(worst["clipped_share"] * 5),
            subject="clipping:" + ";".join(q["q_node"] for q in clipping[:5]), stage=tables.comparison_id,
            tags=("root_cause",), evidence=(Metric("worst clipped share", percent_value(worst["clipped_share"]), "%",
                                                   threshold=f"> {HEAVY_CLIPPING:.0%}"), _qnode_table(clipping)),
            summary=f"{worst['q_node']} saturates {percent(worst['clipped_share'])} of the values of {worst['tensor']}.",
            fixes=(Fix("Re-calibrate with max calibration on representative data",
                       modelopt_command(ctx, ["--calibration_method", "max"])),))
    if under:
        worst = under[0]
        yield Finding(
            rule_id="QR204", title=f"{plural(len(under), 'Q node')} {verb(len(under), 'uses')} less than {UNDER_USE:.0%} of the INT8 range",
            severity="warning", confidence=0.8, score=clamp01(1.0 - worst["range_used"] / UNDER_USE) * 0.6,
            subject="under-use:" + ";".join(q["q_node"] for q in under[:5]), stage=tables.comparison_id,
            tags=("root_cause",), evidence=(Metric("smallest range used", percent_value(worst["range_used"]), "%",
                                                   threshold=f"< {UNDER_USE:.0%}"), _qnode_table(under)),
            summary=(f"{worst['q_node']} sees values in [{worst['observed_min']:.4g}, {worst['observed_max']:.4g}] but its "
                     f"scale represents [{worst['representable_min']:.4g}, {worst['representable_max']:.4g}]: "
                     f"{percent(worst['range_used'])} of the range."),
            fixes=(Fix("Re-calibrate on data with the evaluation data's scale, or use entropy calibration against outliers",
                       modelopt_command(ctx, ["--calibration_method", "entropy"])),))


def _qnode_table(rows: list[dict]) -> Table:
    return Table("Q nodes", ("Q node", "tensor", "clipped", "range used", "representable", "observed"),
                 tuple((q["q_node"], q["tensor"], percent(q["clipped_share"]), percent(q["range_used"]),
                        f"[{q['representable_min']:.4g}, {q['representable_max']:.4g}]",
                        f"[{(q['observed_min'] or 0):.4g}, {(q['observed_max'] or 0):.4g}]") for q in rows[:LIST_LIMIT]),
                 note=f"{len(rows) - LIST_LIMIT} more" if len(rows) > LIST_LIMIT else "")
