"""QR201 (layer error born) from the per-layer tables: the nodes that add large error even when fed FP32 inputs."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import (LOCAL_BAD_COSINE, LOST_SQNR_DB, collapsed_tensor, error_births,
                                      layer_tables)
from qdqreport.findings import Finding, Fix, Metric, Table
from qdqreport.analysis import evidence
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.fixes import exclusion, exclusion_fix
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import rounded
from qdqreport.rules._measured import layer_severity, reranked
from qdqreport.testing.layer_examples import (accumulated_only, born_at_bn, chain_precision, healthy_chain, layer_chain,
                                              quantization_run, whatif_trials)
from qdqreport.wording import plural, verb


def _born_at_bn_refuted(b):
    # The what-if excluded the 12 suspects and stayed far from the target: QR201 stays, as a warning.
    rows, summary = whatif_trials(reached=False)
    summary = {**summary, "chosen": {**summary["chosen"], "cosine": 0.73, "top1": 0.53}}
    quantization_run(b, broken=True)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5), whatif=rows,
                                                               whatif_summary=summary)


@rule(id="QR201", slug="layer-error-born", title="A node adds large error even when fed FP32 inputs",
      examples=[Fires("a BatchNormalization adds -1 dB on FP32 inputs", born_at_bn),
                Fires("the same, refuted by the what-if: a warning that quotes it", _born_at_bn_refuted),
                Quiet("every node adds INT8-level noise", healthy_chain),
                Quiet("local error not measured", accumulated_only)])
def layer_error_born(ctx: Context) -> Iterator[Finding]:
    """Nodes whose LOCAL error is high: run as quantized in the QDQ graph (input Q/DQ, weight Q/DQ,
    FP16 precision) on the FP32 model's own input values, their output still has cosine below 0.99 or SQNR
    below 3 dB (cosine reads direction only: a LayerNorm variance clipped to its range's end read 0.997 at 0.0 dB).

    Why it matters: accumulated error mixes what a node inherits with what it adds. A node with
    high local error is where the error is born: its input scale, weight quantization or precision
    cannot represent what it computes. Nodes after it only inherit the damage.

    Severity from impact: an error only when the tensor collapses (cosine under 0.9) and an output of
    the quantization comparison collapses too; a warning when the outputs only degrade; info when every
    output agrees.

    Measured evidence outranks this heuristic (analysis/evidence.py): when the what-if refutes the
    exclusions, the finding drops to a warning scored under the calibration findings, with a line
    saying which measurement refuted it ("excluding the 12 suspects from INT8 changed the output
    cosine from X to Y"); when the what-if confirms them, it keeps its severity and score.

    Fix: exclude the node from quantization (ModelOpt --nodes_to_exclude or quantize_static's
    nodes_to_exclude, command below; a node the quantizer cannot exclude by name is replaced by the
    node whose Q/DQ feeds it, as QR002 does), or fix its calibration range. The fix says what the
    what-if measured of it: the same set ("measured by the what-if"), part of it (which nodes; the
    others unmeasured), another set, or nothing ("unmeasured until QR203 confirms it"); when the what-if's time budget
    ran out before any exclusion was tried, the fix says "NOT measured", with the trial's cost and a budget that would
    fit (analysis/evidence.whatif_cut_short: a new user's U2-Net-p ran only its 76 s baseline in 120 s, and the
    printed exclusion, run by hand, made the model worse). Where the what-if refuted a set holding every node here, the
    fix prints no command: it says the exclusion is not expected to help and points at QR203's advice on the recipe
    (a new user's copy-detection model: its two refuted Convs, excluded as printed, made it worse). A node the what-if
    also tried alone is quoted with that trial's output cosine. Where the calibration inputs differ from the evaluation
    inputs (analysis/upstream.py), the fix says to fix the calibration first: every range is off, and excluding the
    node hides that (a new user's text detector calibrated without its normalisation: Conv.0 excluded left 41 of 200
    samples' boxes changed, the calibration fixed 33).
    """
    tables = layer_tables(ctx)
    if tables is None or not tables.has_local:
        return
    births = error_births(tables)
    if not births:
        return
    worst = births[0]
    nodes = list(dict.fromkeys(r.node for r in births))
    severity = layer_severity(ctx, collapsed_tensor(worst.local_cosine, worst.local_sqnr_db))
    severe = severity == "error"
    rows = tuple((r.node, r.op_type, r.tensor, rounded(r.local_cosine), rounded(r.local_sqnr_db, 1),
                  rounded(r.cosine), rounded(r.sqnr_db, 1)) for r in births)
    severity, score, measured = reranked(ctx, severity, 0.6 if severe else 0.4, nodes)
    yield layer_error_born.finding(
        title=f"Error is born at {worst.node} ({worst.op_type})",
        severity=severity, confidence=0.85, score=score,
        subject=";".join(nodes[:5]), stage=tables.comparison_id, tags=("root_cause",),
        summary=(f"Fed the FP32 model's inputs, {worst.node} still produces cosine {worst.local_cosine:.4f} "
                 f"(local SQNR {worst.local_sqnr_db:.1f} dB); {plural(len(births), 'node')} "
                 f"{verb(len(births), 'adds')} "
                 f"error below cosine {LOCAL_BAD_COSINE} or SQNR {LOST_SQNR_DB:g} dB on their own"
                 + (" (a cosine this high with so low an SQNR: the values are rescaled or pushed to a range's end, "
                    "which cosine does not see)" if (worst.local_cosine or 0.0) >= LOCAL_BAD_COSINE else "") + "."),
        evidence=(Metric("local cosine", rounded(worst.local_cosine), threshold=f"< {LOCAL_BAD_COSINE}"),
                  Metric("local SQNR", rounded(worst.local_sqnr_db, 1), "dB", threshold=f"< {LOST_SQNR_DB:g}"),
                  Table("Nodes that add error (local = fed FP32 inputs; accumulated = inside the QDQ model)",
                        ("node", "op type", "tensor", "local cosine", "local SQNR dB", "accumulated cosine",
                         "accumulated SQNR dB"), rows), *measured),
        fixes=(_fix(ctx, nodes[:5]),))


def _alone(ctx: Context, nodes: list[str]) -> str:
    """The what-if's single-node trial of the one node named, in words; "" where there is none (a new user's text
    detector: "unmeasured alone" beside its own trials table's row "single | Conv.0 | 0.9884")."""
    trial = evidence.single_trial(ctx, nodes[0]) if len(nodes) == 1 else None
    if trial is None:
        return ""
    base, value = trial
    return f"measured alone by the what-if: output cosine {base:.4f} → {value:.4f} with {nodes[0]} excluded"


def _fix(ctx: Context, nodes: list[str]) -> Fix:
    """Exclude *nodes*, saying what the what-if measured of that: the same set, part of it, or another set."""
    subject = "this node" if len(nodes) == 1 else "these nodes"
    found = evidence.whatif(ctx)
    chosen = list(found.nodes) if found is not None else []  # the set the what-if measured
    short = evidence.whatif_cut_short(ctx) if not chosen else None
    if short:
        said = f"NOT measured: {short}. Run the command and check the model it writes before deploying it"
    elif not chosen:
        said = "unmeasured until QR203 confirms it"
    elif set(chosen) == set(nodes):
        said = f"measured by the what-if: {found.line}; QR203"
    else:
        measured = [n for n in nodes if n in chosen]
        others = len(nodes) - len(measured)
        named = ", ".join(chosen[:5]) + (" …" if len(chosen) > 5 else "")
        if not measured:
            said = f"unmeasured: the what-if measured another set, {named} (QR203)"
        elif not others and (alone := _alone(ctx, nodes)):
            said = f"{alone}; the set of {len(chosen)}, {named}, won back {found.closed:.0%} of the loss; QR203"
        elif not others:  # every node here inside a larger measured set (a new user's: "the other 0 nodes")
            said = (f"unmeasured alone: the what-if measured {subject} within a set of {len(chosen)}, {named}, "
                    f"which won back {found.closed:.0%} of the loss; QR203")
        else:
            said = (f"the what-if measured excluding {named} only (QR203); the other {plural(others, 'node')} here "
                    f"{verb(others, 'is')} unmeasured")
    if found is not None and found.verdict == evidence.REFUTES and set(nodes) <= set(chosen):
        # Measured not to help, inside the set the what-if excluded: no command to run (a new user's copy-detection
        # model, its two refuted Convs excluded as printed: cosine 0.690 -> 0.674, 11 -> 14 decisions changed).
        return Fix(f"Not expected to help: the what-if excluded {subject} within a set of {len(chosen)}, which won "
                   f"back {found.closed:.0%} of the loss; the finding on the recipe as a whole (QR203) says what to "
                   "change instead", "")
    upstream = calibration_upstream(ctx)
    # Under calibration data unlike the evaluation's, every range is off and the birth may be that: excluding the
    # node hides the calibration's mistake (a new user's text detector calibrated without its normalisation: Conv.0
    # excluded left 41 of 200 samples' boxes changed, the calibration fixed 33).
    first = (f"Fix the calibration first ({upstream}) and collect again; if the error is still born here, keep "
             if upstream else "Keep ")
    return exclusion_fix(ctx, f"{first}{subject} out of INT8 ({said})", exclusion(nodes))
