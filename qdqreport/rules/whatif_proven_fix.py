"""QR203 (what-if proven fix) from the per-layer tables: the smallest exclusion set the what-if search measured."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator

from qdqreport.analysis.agreement import COLLAPSE, COLLAPSED
from qdqreport.analysis.context import Context
from qdqreport.analysis.quantizer import recipe_shape
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.analysis.evidence import (PARTIAL, REFUTED_BELOW, WhatIfEvidence, best_single_trial, deciding_output,
                                         judged, judged_words, recovered, remedy_score, target_words, whatif,
                                         whatif_cosines_shown)
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.fixes import (Change, can_requantize, exclusion, exclusion_fix, requantize_command, robust_method,
                             trials_note)
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import clamp01, rounded
from qdqreport.rules._measured import under_calibration, under_kernels
from qdqreport.testing.layer_examples import layer_chain, quantization_run, whatif_trials
from qdqreport.wording import plural


def _proven(b):
    rows, summary = whatif_trials(reached=True, judged=True)
    quantization_run(b, broken=True)
    b.manifest["models"]["fp32"] = {"path": "/data/models/cls_fp32.onnx", "sha256": "0" * 64}
    b.layers(layer_chain(born_at=2), whatif=rows, whatif_summary=summary)


def _unreachable(b):
    rows, summary = whatif_trials(reached=False, judged=True)
    quantization_run(b, broken=True)
    b.layers(layer_chain(born_at=2), whatif=rows, whatif_summary=summary)


def _one_node_wins(b):
    """The 12 suspects together score below the baseline (exclusions interact); one of them alone wins back most."""
    rows, summary = whatif_trials(reached=False, judged=True)
    rows[1].update(cosine=0.61, top1_agree=0.41)
    summary["chosen"].update(cosine=0.61, top1=0.41)
    rows.append({**rows[1], "trial": 2, "kind": "single", "excluded_count": 1, "excluded": "Mul@1", "cosine": 0.985,
                 "top1_agree": 0.9688, "sqnr_db": 18.1})
    quantization_run(b, broken=True)
    b.layers(layer_chain(born_at=2), whatif=rows, whatif_summary=summary)


def _no_search(b):
    quantization_run(b, broken=False)
    b.layers(layer_chain())


def _cosine_judged(b):
    rows, summary = whatif_trials(reached=True)
    quantization_run(b, broken=True)
    b.layers(layer_chain(born_at=2), whatif=rows, whatif_summary=summary)


@rule(id="QR203", slug="whatif-proven-fix", title="Measured: excluding these nodes restores the outputs",
      examples=[Fires("8 nodes excluded restore the top-1 decisions the report judges the logits by", _proven),
                Fires("no exclusion among the suspects reaches the target", _unreachable),
                Fires("a search collected before the what-if read the report's judgement (cosine, top-1)",
                      _cosine_judged),
                Fires("the suspects together score below the unmodified model, one of them alone wins back 94% of "
                      "the loss: that node, measured", _one_node_wins),
                Quiet("no what-if search in the bundle", _no_search)])
def whatif_proven_fix(ctx: Context) -> Iterator[Finding]:
    """The smallest exclusion set the what-if search found, with its measured effect.

    Every number comes from ONNX Runtime runs of QDQ variants in which the excluded nodes read
    float inputs, on the same samples as the rest of the report. The target is the report's own
    judgement: a variant meets it when every output agrees as the verdict judges it, by its
    decisions where decisions judge the output (detections after NMS, class labels, threshold flips,
    map IoU, at the collect's decision threshold) and by cosine only where the verdict uses cosine;
    the finding names each output's measure. Severity and score follow the measured gain: an error
    when the baseline collapsed and the exclusion reaches the target; the score is the share of the
    lost agreement recovered, in the measure that judged the output. When no set of suspects
    reaches the target, an info finding says so: when excluding every suspect wins back half of the
    lost agreement or more (in the measure that decides: the --postprocess decode where there is
    one), it is a measured partial remedy, with its command and what it won back (at 90% or more, the measured remedy:
    an error when the outputs collapsed, else a warning, ranked above the guesses about other nodes); below half, the
    damage is spread over the graph (typically a calibration problem), not in a few nodes. A bundle collected before
    2026-11-27 judged the worst output's median cosine (0.99) and top-1 agreement instead; the finding then says so.
    When the bundle proves the calibration data unlike the evaluation data (analysis/upstream.py: a preprocessing
    step, noise, a coverage gap), a set that reaches the target is a workaround: at most a warning, scored 0.2, under
    the calibration finding (a new user's open_nsfw calibrated torchvision-style: excluding the first Conv restored
    the 128 decisions measured, yet kept 5x the healthy error and lost 2 of 6 positives). Where the saturation check's
    unfused run agrees with FP32 and the target is TensorRT, the trials measured ONNX Runtime's integer kernels on this
    CPU (QR012): a set that reaches the target is capped the same way, with that measurement.

    Why it matters: a hand search removes Q/DQ one node at a time; this one is measured and sized.

    Fix: re-quantize with the printed command (the quantizer that made the model); its cost is the number of
    nodes that leave INT8. The what-if feeds an excluded node float inputs; for a node the quantizer
    cannot exclude by name (a Softmax under quantize_static or ModelOpt) the command excludes the node
    whose Q/DQ feeds it instead, and the fix and the trials table say so. When no exclusion of the suspects restores
    the outputs (info), the fix is the calibration where the bundle shows it unlike the evaluation data, else the
    recipe as a whole (fewer op types, per-channel weights, the other calibration method, 16-bit activations), each
    change with its own command where the quantizer that made the model can make it (16-bit activations: quantize_static
    only, which writes opset-21 QInt16 pairs).
    Where a set of several nodes restores the outputs and one of them, excluded alone, won back 80% of the loss or more,
    a second fix keeps only that node out of INT8, saying what it measured (a new user's text-encoding classifier: its
    final Gemm alone took top-1 from 88.8% to 99.0%, one sample short of the target its 4-node set met).
    """
    summary = ctx.whatif_summary
    if not summary or not summary.get("baseline") or not summary.get("chosen"):
        return
    base, chosen = summary["baseline"], summary["chosen"]
    if base.get("cosine") is None or chosen.get("cosine") is None or not chosen.get("nodes"):
        return
    by_judgement = judged(base) and judged(chosen)
    shown = whatif_cosines_shown(ctx, summary)
    evidence = [*([Metric("judged outputs, before → after",
                          f"{judged_words(base)} → {judged_words(chosen)}")] if by_judgement else []),
                *([Metric("output cosine before → after", f"{base['cosine']:.4f} → {chosen['cosine']:.4f}")]
                  if shown else []),
                *([Metric("top-1 agreement before → after", f"{base['top1']:.0%} → {chosen['top1']:.0%}")]
                  if base.get("top1") is not None and chosen.get("top1") is not None else []),
                Metric("nodes leaving INT8", chosen["cost_nodes"], f"of {summary.get('quantized_nodes')}"),
                _trials_table(ctx, shown), Text(f"Search stopped: {summary.get('stopped')}; {summary.get('trials')} ONNX Runtime "
                                         f"trials in {summary.get('seconds')} s on {summary.get('samples')} samples. "
                                         f"Target met means: {target_words(summary)}.")]
    if not chosen.get("reached") and recovered(base, chosen) >= REFUTED_BELOW:
        yield under_kernels(ctx, _partial(ctx, summary, evidence))
        return
    alone = whatif(ctx) if not chosen.get("reached") else None
    if alone is not None and alone.verdict == PARTIAL and alone.excluded == 1:
        yield under_kernels(ctx, _one_node(ctx, alone, evidence))
        return
    if not chosen.get("reached"):
        yield whatif_proven_fix.finding(
            title="No exclusion of the top suspects restores the outputs", severity="info",
            confidence=0.95, score=0.2, subject="whatif", tags=("measured", "root_cause"), evidence=tuple(evidence),
            fixes=_spread_fixes(ctx),
            summary=(f"Excluding all {len(chosen['nodes'])} top suspects reaches only "
                     + (f"{judged_words(chosen)}, as the report judges the outputs ("
                        + (f"cosine {chosen['cosine']:.4f}; " if shown else "")
                        + f"target: {target_words(summary)})" if by_judgement else
                        f"cosine {chosen['cosine']:.4f}{_top1_text(chosen)} (target {summary['target_cosine']})")
                     + "; the error is spread over the graph, so "
                     + ("look at calibration first." if calibration_upstream(ctx) else "the recipe as a whole is what "
                        "to change (the calibration data shows nothing unlike the evaluation data).")))
        return
    collapsed = _collapsed(base)
    fixes = [exclusion_fix(ctx, f"Re-quantize with {plural(len(chosen['nodes']), 'node')} excluded (measured above)",
                           exclusion(chosen["nodes"]))]
    single = _smaller_remedy(ctx, base, chosen)
    if single is not None:
        fixes.append(single)
    op_type = summary.get("op_type") or {}
    if op_type.get("reached"):
        fixes.append(exclusion_fix(ctx, f"Or exclude every {op_type['op_type']} ({op_type['nodes']} nodes leave INT8; "
                                        f"measured {judged_words(op_type)})",
                                   exclusion(op_types=[op_type["op_type"]])))
    # Calibration data the bundle proves unlike the evaluation data (a preprocessing step, noise, a coverage gap) set
    # every range: the exclusion restores these samples by keeping the worst-calibrated nodes float, a workaround
    # ranked under the calibration finding (a new user's open_nsfw calibrated torchvision-style: excluding its first
    # Conv restored the 128 decisions measured, yet kept 5x the healthy error and lost 2 of 6 positives).
    yield under_kernels(ctx, under_calibration(ctx, whatif_proven_fix.finding(
        title=f"Measured: excluding {plural(len(chosen['nodes']), 'node')} restores the outputs",
        severity="error" if collapsed else "warning", confidence=0.95, score=clamp01(recovered(base, chosen)),
        subject=";".join(chosen["nodes"][:8]), tags=("measured", "fix"), evidence=tuple(evidence), fixes=tuple(fixes),
        summary=(f"Excluding {', '.join(chosen['nodes'][:5])}{' …' if len(chosen['nodes']) > 5 else ''} "
                 + (f"brings {judged_words(base)} to {judged_words(chosen)}, as the report judges the outputs"
                    + (f" (cosine {base['cosine']:.4f} → {chosen['cosine']:.4f})" if shown else "") if by_judgement else
                    f"raises output cosine from {base['cosine']:.4f} to {chosen['cosine']:.4f}{_gain_text(base, chosen)}")
                 + f" ({chosen['cost_nodes']} node(s) leave INT8).")),
        "every range was calibrated on it, so this exclusion works around the nodes it damaged most. Fix the "
        "calibration first (its finding ranks above) and collect again; exclude only what still diverges then."))


# A single node excluded alone that wins back this share of the loss, where a larger set meets the target, is offered
# as the smaller remedy beside it (a new user's text-encoding classifier: its final Gemm alone took top-1 from 88.8% to
# 99.0%, one sample short of the target its 4-node set met; the report showed only the 4 nodes).
SMALLER_REMEDY = 0.8


def _smaller_remedy(ctx: Context, base: dict[str, Any], chosen: dict[str, Any]) -> Fix | None:
    """The command keeping one node out of INT8 where the what-if measured it alone winning back SMALLER_REMEDY of the
    loss and the chosen set holds more nodes; None otherwise."""
    if len(chosen["nodes"]) < 2:
        return None
    key = "top1" if base.get("top1") is not None else "cosine"
    found = best_single_trial(ctx, key, float(base[key]))
    if found is None or found[2] < SMALLER_REMEDY:
        return None
    node, value, closed = found
    words = "top-1 agreement" if key == "top1" else "output cosine"
    return exclusion_fix(ctx, f"Or keep only {node} out of INT8, the smaller remedy: measured alone it wins back "
                              f"{closed:.0%} of the loss ({words} {float(base[key]):.4f} → {value:.4f}), short of the "
                              "target the set above meets", exclusion([node]))


def _spread_fixes(ctx: Context) -> tuple[Fix, ...]:
    """What to change when no exclusion of the suspects restores the outputs: the calibration where the bundle shows it
    unlike the evaluation data, else the recipe as a whole, each change with its command where the quantizer that
    made the model can make it (a new user's PP-OCRv6 detector got the four changes in words only; measured: 16-bit
    activations 25 of 200 samples changed against 32, the others 34-39). A new user's PP-OCRv4 DBNet, calibrated on
    78 good pictures, was sent to check its calibration first, with no calibration finding in the report."""
    upstream = calibration_upstream(ctx)
    if upstream:
        return (Fix(f"Fix the calibration data first ({upstream}: the calibration findings above); exclusions cannot "
                    "recover damage spread over the whole graph"),)
    changes = _recipe_changes(ctx)
    words = [w for w, _ in changes]
    listed = "; ".join(words[:-1]) + ("; or " if len(words) > 1 else "") + words[-1]
    return (Fix("The damage is spread over the graph and the calibration data shows nothing unlike the evaluation "
                f"data: change the recipe as a whole rather than excluding nodes ({listed}), and measure each (the "
                "commands below, one change each)"),
            *(Fix(f"Try {words}", requantize_command(ctx, change))
              for words, change in changes if can_requantize(ctx, change)))


def _recipe_changes(ctx: Context) -> list[tuple[str, Change]]:
    """The changes of the recipe as a whole this graph has not made already, in words and as a Change (a new user's
    copy-detection model, its weights per channel, was told to try per-channel weights)."""
    shape = recipe_shape(ctx.precision, ctx.modelopt_log)
    changes = []
    if shape.other_op_types:
        listed = ", ".join(shape.other_op_types[:6]) + (" …" if len(shape.other_op_types) > 6 else "")
        changes.append((f"fewer op types quantized, e.g. Conv/MatMul/Gemm only, not {listed}",
                        Change(exclude_op_types=tuple(shape.other_op_types))))
    if shape.per_tensor_weights:
        changes.append(("per-channel weights", Change(per_channel_weights=True)))
    changes.append((f"the other calibration method ({robust_method(ctx)})",
                    Change(calibration_method=robust_method(ctx))))
    if shape.activation_bits < 16:
        changes.append(("16-bit activations where the runtime supports them", Change(activation_bits=16)))
    return changes


def _one_node(ctx: Context, alone: WhatIfEvidence, evidence: list) -> Finding:
    """The set fell short but one suspect excluded alone won back most of the loss (exclusions interact): that node
    is the measured remedy, worth its command, not a sign that the damage is spread over the graph."""
    node = alone.nodes[0]
    together = f" (the {len(ctx.whatif_summary['chosen']['nodes'])} suspects excluded together)"
    evidence = [replace(item, name=item.name + together) if isinstance(item, Metric) else item for item in evidence]
    return whatif_proven_fix.finding(
        title=f"Measured: excluding {node} alone wins back {alone.closed:.0%} of the loss",
        # Under a calibration the bundle shows unlike the evaluation data, that is the fix; this node is a measured
        # palliative (a new user's UVDoc calibrated on x255 pages: one Conv alone won back 67% of the cosine's loss).
        severity="info" if calibration_upstream(ctx) else "warning", confidence=0.9,
        score=0.5 * clamp01(alone.closed), subject=node,
        tags=("measured", "fix"), evidence=tuple(evidence),
        fixes=(exclusion_fix(ctx, f"Re-quantize with {node} excluded (measured alone: {alone.closed:.0%} of the loss "
                                  "won back); then collect again to check the decisions", exclusion([node])),),
        summary=f"{alone.line[0].upper()}{alone.line[1:]}.")


def _collapsed(base: dict) -> bool:
    """Whether the unmodified QDQ model's outputs collapsed, as the what-if judged them (its cosine and top-1 in a
    bundle collected before the what-if judged as the report does)."""
    if judged(base):
        return base["level"] == COLLAPSE
    return base["cosine"] < COLLAPSED or (base.get("top1") is not None and base["top1"] < COLLAPSED)


def _partial(ctx: Context, summary: dict, evidence: list) -> Finding:
    """Every suspect excluded wins back most of the loss without reaching the target: the set is measured and worth
    its command (a new user's U^2-Net-p: 37% -> 89% of its decode, Conv_787 alone 85%), the rest is elsewhere."""
    base, chosen = summary["baseline"], summary["chosen"]
    closed, count = recovered(base, chosen), len(chosen["nodes"])
    output = deciding_output(base, chosen)
    reached = (f"{judged_words(base, output)} to {judged_words(chosen, output)}, as the report judges it"
               if judged(base) and judged(chosen) else f"cosine {base['cosine']:.4f} to {chosen['cosine']:.4f}")
    # Nearly all of the loss won back: the measured remedy, scored as the guesses it outranks read it
    # (analysis/evidence.remedy_score), an error as a restoring set is when the outputs collapsed.
    remedy = remedy_score(whatif(ctx))
    return whatif_proven_fix.finding(
        title=f"Measured: excluding {plural(count, 'node')} wins back {closed:.0%} of the loss, short of the target",
        severity=("error" if _collapsed(base) else "warning") if remedy is not None else "info", confidence=0.95,
        score=remedy if remedy is not None else 0.3 * clamp01(closed), subject=";".join(chosen["nodes"][:8]),
        tags=("measured",), evidence=tuple(evidence),
        fixes=(exclusion_fix(ctx, f"Re-quantize with the {plural(count, 'node')} excluded (measured: {closed:.0%} of "
                                  "the loss won back, the target not met)", exclusion(chosen["nodes"])),
               Fix("What is left is not in these nodes: check the calibration data (QR003, QR204) and the other "
                   "findings")),
        summary=(f"Excluding all {count} top suspects brings {reached} ({closed:.0%} of the loss won back) but not to "
                 f"the target ({target_words(summary)}); {chosen['cost_nodes']} node(s) would leave INT8."))


def _top1_text(m: dict) -> str:
    return f", top-1 {m['top1']:.0%}" if m.get("top1") is not None else ""


def _gain_text(base: dict, chosen: dict) -> str:
    if base.get("top1") is None or chosen.get("top1") is None:
        return ""
    return f" and top-1 agreement from {base['top1']:.0%} to {chosen['top1']:.0%}"


def _trials_table(ctx: Context, cosine_shown: bool = True) -> Table:
    comparison = ctx.comparison("quantization")
    rows = ctx.layer_rows(comparison.id, "whatif") if comparison else []
    return Table("What-if trials (each a real ONNX Runtime run)",
                 ("trial", "kind", "excluded", "cosine", "top-1", "SQNR dB", "target met"),
                 tuple((r.trial, r.kind, r.op_types or _names(r.excluded), rounded(r.cosine) if cosine_shown else None,
                        rounded(r.top1_agree), rounded(r.sqnr_db, 1), "yes" if r.reached else "no")
                       for r in rows[:25]),
                 note=trials_note(ctx, [n for r in rows[:25] for n in (r.excluded or "").split(";") if n]))


def _names(joined: str) -> str:
    names = [n for n in (joined or "").split(";") if n]
    return "—" if not names else ", ".join(names[:4]) + (f" (+{len(names) - 4})" if len(names) > 4 else "")
