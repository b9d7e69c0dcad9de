"""What the measurements say about the hypotheses (issue 10, item 4): one owner, rules read it.

Heuristic findings guess where the damage comes from (a node with high local error, a sensitive
node in INT8); the bundle also holds measurements that test those guesses:

- the what-if search (collect --per-layer): the QDQ model re-run with the top suspects in float.
  * confirms the layer hypotheses when an exclusion set reaches the target;
  * refutes them when excluding every suspect closes less than half of the lost agreement, or
    when the unmodified QDQ model already meets the target (its outputs agree as the report judges
    them and, with collect --postprocess, the user's decode agrees too, collect/whatif.py; before
    2026-11-27, the worst output's median cosine): no node is broken
    for typical inputs, what fails is specific to some inputs;
  * is partial in between (more than half closed, target not reached); a set that closes 90% or more
    (NEARLY) is the measured remedy all the same, and a guess about other nodes ranks under it;
  * a set says nothing on its own once exclusions interact: when one suspect excluded alone (the
    search's single-node trials) wins back at least half the loss that the whole set did not, the
    evidence is partial for that node (a new user's fastmrz U-Net: one BatchNorm Mul whose per-tensor
    multiplier zeroes 49 of 64 channels, 0.38 -> 0.96 alone, while the 12 suspects together scored
    0.00); and a set that scores worse than the unmodified model refutes nothing (inconclusive).
- the FP16 check's control (the same INT8 nodes with the float part in FP32): it implicates the
  FP16 float part when it wins back at least half the loss, and exonerates it otherwise. When it
  implicates the float part and no what-if confirmed an exclusion, the INT8 layer findings drop
  as they do under a refuting what-if.
- the per-sample pattern: k of N samples collapse while the median sample is faithful. The
  quantization itself works; those inputs were not covered by the calibration data.

Rule of thumb the rules apply: measured evidence outranks heuristics. When the what-if refutes
the exclusions, local-error and sensitive-op findings drop to warnings (below the calibration
findings) and carry a Text line naming the measurement; when it confirms them they keep their rank,
unless three or more of the nodes it excluded compute tensors whose calibrated ranges are a thousand times
wider than their evaluation values (analysis/layers.wide_ranges_behind): the exclusion then took those ranges
out of INT8, so it confirms where the calibration hurts, not why. The layer findings drop as under a refuting
what-if, with a line saying so, and QR006's over-wide finding, which names the ranges, is an error when the outputs
collapse and ranks above them (a new user's MiniMol calibrated with one outlier molecule).
A few collapsed samples with the median fine is its own cause (QR006, calibration coverage) and
ranks first when the what-if refutes the layer hypotheses.

The calibration inputs themselves are evidence too. When the bundle shows them unlike the evaluation
inputs (random noise, QR009; a named preprocessing step, QR003; a value range that misses a quarter
of the evaluation span on a quarter of the samples, QR006 by analysis/coverage.py), every calibrated
range downstream is set on the wrong data, and a sensitive node's error is what that predicts: the
sensitive-op finding (QR002) is then at most a warning scored 0.2, under the calibration finding,
which is an error when the outputs collapse.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.bundle.vocabulary import WHATIF_TASK_OUTPUT

CONFIRMS, REFUTES, PARTIAL, INCONCLUSIVE = "confirms", "refutes", "partial", "inconclusive"
REFUTED_BELOW = 0.5  # an exclusion of every suspect that closes less than half the gap did not find the cause
# A set that wins back this share of the loss without reaching the target is the measured remedy all the same: its
# finding (QR203) is a warning scored PARTIAL_REMEDY x the share, and a guess about other nodes ranks under it (a new
# user's GTCRN: 12 suspects won back 96% of the loss, -18.09 -> -0.80 dB measured by hand, ranked 7th as info under
# "8 sensitive nodes", whose exclusion measured -14.83 dB).
NEARLY = 0.9
PARTIAL_REMEDY = 0.6


def remedy_score(found: "WhatIfEvidence | None") -> float | None:
    """The score of the what-if's own finding for the set it measured (QR203) when that set is a remedy: it reached
    the target (the share won back), or it won back NEARLY all of the loss (PARTIAL_REMEDY x the share); None
    otherwise. A layer guess about other nodes ranks under it (rules/_measured.py)."""
    if found is None:
        return None
    if found.verdict == CONFIRMS:
        return max(0.0, min(1.0, found.closed))
    if found.verdict == PARTIAL and found.closed >= NEARLY:
        return PARTIAL_REMEDY * min(1.0, found.closed)
    return None


@dataclass(frozen=True)
class WhatIfEvidence:
    verdict: str  # confirms | refutes | partial
    closed: float  # share of the lost agreement the exclusion won back (0..1); 0 when nothing was lost
    excluded: int  # nodes excluded in the measured set (0: the baseline already met the target)
    before: float  # output cosine of the unmodified QDQ model (median sample)
    after: float  # ... with the set excluded
    line: str  # the sentence a finding quotes
    nodes: tuple[str, ...] = ()  # the excluded set measured


def whatif_cut_short(ctx: Context) -> str | None:
    """Why the what-if measured no exclusion, when its time budget is the reason (None otherwise): its budget, the
    trials it ran and one trial's cost, in words, with a budget that would fit the first exclusions. A new user's
    U2-Net-p (320 x 320, 40 samples): one trial took 76 s of a 120 s budget, so only the baseline ran, and the
    exclusion QR201 printed, run by hand, made the model worse (map IoU 0.66 -> 0.40)."""
    summary = ctx.whatif_summary or {}
    if not summary or (summary.get("chosen") or {}).get("nodes") or "budget" not in str(summary.get("stopped", "")):
        return None
    trials, seconds, budget = summary.get("trials") or 0, _num(summary.get("seconds")), _num(summary.get("budget_seconds"))
    per_trial = seconds / trials if trials and seconds else None
    ran = (f"after {trials} trial{'s' if trials != 1 else ''} ({_seconds(per_trial)} s each on "
           f"{summary.get('samples')} samples)" if per_trial else "before a single trial")
    wanted = f"; collect again with --whatif-budget {60 * math.ceil(4 * per_trial / 60):.0f} or more to measure it" \
        if per_trial else ""
    return (f"the what-if's budget ({_seconds(budget)} s) ran out {ran}, before any exclusion was tried" if budget else
            f"the what-if stopped {ran}, before any exclusion was tried") + wanted


def _seconds(value: float) -> str:
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def whatif(ctx: Context) -> WhatIfEvidence | None:
    """The what-if search's verdict on the layer hypotheses, or None when no search was run or it measured nothing.

    A search collected since 2026-11-27 judged each variant as the report judges the outputs (collect/whatif.py:
    decisions where they decide, cosine elsewhere) and says so; an older one judged the worst output's median
    cosine, and its line says that instead."""
    summary = ctx.whatif_summary or {}
    base, chosen = summary.get("baseline") or {}, summary.get("chosen") or {}
    if _num(base.get("cosine")) is None:
        return None
    target = target_words(summary)
    if not chosen.get("nodes"):
        if "already meets" not in str(summary.get("stopped", "")):
            return None
        return WhatIfEvidence(REFUTES, 0.0, 0, base["cosine"], base["cosine"], (
            f"the what-if measured the unmodified QDQ model at {judged_words(base)} (target: {target}) with every "
            "node in INT8: no node needs excluding for typical inputs"))
    if _num(chosen.get("cosine")) is None:
        return None
    closed = recovered(base, chosen)
    verdict = CONFIRMS if chosen.get("reached") else REFUTES if closed < REFUTED_BELOW else PARTIAL
    if verdict == REFUTES:
        interacting = _interacting(ctx, base, chosen)
        if interacting is not None:
            return interacting
    count = len(chosen["nodes"])
    named = ", ".join(chosen["nodes"][:3]) + (f" and {count - 3} more" if count > 3 else "")
    deciding = deciding_output(base, chosen)
    line = (f"excluding the {count} suspect{'s' if count != 1 else ''} from INT8 changed {_what(base, deciding)} from "
            f"{_value_words(base, deciding)} to {_value_words(chosen, deciding)} ({closed:.0%} of the loss won back; "
            f"target: {target}; "
            f"excluded: {named})")
    return WhatIfEvidence(verdict, closed, count, base["cosine"], chosen["cosine"], line, tuple(chosen["nodes"]))


def _interacting(ctx: Context, base: dict[str, Any], chosen: dict[str, Any]) -> WhatIfEvidence | None:
    """The evidence when the whole set's result says nothing about its members: a suspect that alone wins back at
    least REFUTED_BELOW of the output cosine's loss (partial, for that node), or a set scoring below the unmodified
    model (inconclusive); None otherwise (the set's refutation stands)."""
    key = "top1" if _num(base.get("top1")) is not None else "cosine"  # the trials table's measures (as _closed)
    words = "top-1 agreement" if key == "top1" else "output cosine"
    before, after, count = base[key], _num(chosen.get(key)), len(chosen["nodes"])
    single = best_single_trial(ctx, key, before)
    if single is not None and single[2] >= REFUTED_BELOW:
        node, value, closed = single
        return WhatIfEvidence(PARTIAL, closed, 1, base["cosine"], value, (
            f"excluding {node} alone from INT8 changed the {words} from {before:.4f} to {value:.4f} ({closed:.0%} of "
            f"the loss won back), while the {count} suspects excluded together scored {after:.4f}: exclusions "
            "interact, so the set's result refutes none of them"), (node,))
    if after is not None and after < before - 1e-6:
        return WhatIfEvidence(INCONCLUSIVE, 0.0, count, base["cosine"], chosen["cosine"], (
            f"excluding the {count} suspects from INT8 together lowered the {words} from {before:.4f} to "
            f"{after:.4f}, and no suspect excluded alone won back half the loss: exclusions interact, so the "
            "measurement neither confirms nor refutes these nodes"), tuple(chosen["nodes"]))
    return None


def best_single_trial(ctx: Context, key: str, baseline: float) -> tuple[str, float, float] | None:
    """(node, value, share of the loss won back) of the single-node what-if trial that won back the most in *key*
    ("cosine" or "top1", the trials table's measures), or None. A single trial's excluded field is the one node's
    whole name (a node's name may hold the list's ';')."""
    lost = 1.0 - baseline
    values = [(row, _num(row.top1_agree if key == "top1" else row.cosine)) for row in _whatif_rows(ctx)
              if _single(row)]
    singles = [(row.excluded, value, (value - baseline) / lost) for row, value in values
               if value is not None and lost > 1e-9]
    return max(singles, key=lambda item: item[2]) if singles else None


def single_trial(ctx: Context, node: str) -> tuple[float, float] | None:
    """(baseline cosine, cosine) of the what-if's trial excluding *node* alone, or None where none ran."""
    rows = _whatif_rows(ctx)
    base = next((_num(r.cosine) for r in rows if r.kind == "baseline"), None)
    value = next((_num(r.cosine) for r in rows if _single(r) and r.excluded == node), None)
    return (base, value) if base is not None and value is not None else None


def _whatif_rows(ctx: Context) -> list:
    """The what-if's trials table of the quantization comparison ([] without one)."""
    comparison = ctx.comparison("quantization")
    return ctx.layer_rows(comparison.id, "whatif") if comparison else []


def _single(row) -> bool:
    """A trial that excluded one node alone (its excluded field is that node's whole name)."""
    return row.kind == "single" and row.excluded_count == 1


def cosine_evidence(ctx: Context) -> bool:
    """Whether the quantization comparison's output cosines say anything: False when every judged output but recurrent
    state holds fewer than 8 values a sample (agreement.Judgement.cosine_meaningful), where a what-if's trials all read
    cosine 1.0000 (a new user's one-logit turn detector, 7 of 19 decisions flipping at "1.0000")."""
    comparison = ctx.comparison("quantization")
    if comparison is None:
        return True
    judged_outputs = [s.judgement for s in ctx.output_summaries(comparison.id)
                      if s.judgement is not None and not s.judgement.internal]
    return not judged_outputs or any(j.cosine_meaningful for j in judged_outputs)


def whatif_cosines_shown(ctx: Context, summary: dict[str, Any]) -> bool:
    """Whether the what-if's findings and tables quote its results' cosines: a search the report's judgement judged
    (bundles since 2026-11-27) quotes them only where they are evidence (cosine_evidence); one judged by cosine alone
    has nothing else to quote."""
    judged_search = judged(summary.get("baseline") or {}) and judged(summary.get("chosen") or {})
    return cosine_evidence(ctx) or not judged_search


def judged(result: dict[str, Any]) -> bool:
    """Whether a what-if result (baseline, chosen, op_type), or one output's entry in it, carries the report's
    judgement (bundles since 2026-11-27)."""
    return isinstance(result.get("level"), str) and isinstance(result.get("headline"), str)


def judged_words(result: dict[str, Any], output: Any = None) -> str:
    """A what-if result in the words of what judged it: "output0: 2 of 7 detections lost, 1 extra (collapse)" as the
    report judges the outputs (*output*'s judgement when given and judged, else the result's worst), or the worst
    output's median cosine for a search collected before it did."""
    if not judged(result):
        return f"output cosine {result['cosine']:.4f}"
    own = _own(result, output) if output is not None else None
    name = output if isinstance(own, dict) and judged(own) else result.get("output") or "outputs"
    return f"{name}: {_value_words(result, output)}"


def target_words(summary: dict[str, Any]) -> str:
    """What "meets the target" meant in that search, and on which samples when not on all of them."""
    if isinstance(summary.get("judged"), str):
        return summary["judged"] + trial_samples_words(summary)
    return (f"worst output's median cosine ≥ {summary.get('target_cosine', 0.99)}"
            + (f" and top-1 agreement ≥ {summary['target_top1']}" if _num((summary.get("baseline") or {}).get("top1"))
               is not None and _num(summary.get("target_top1")) is not None else "") + trial_samples_words(summary))


def trial_samples_words(summary: dict[str, Any]) -> str:
    """"; measured on 16 of 40 samples, the worst first, then a spread; one trial on all 40: about 70 s of the 120 s
    budget" when the search ran its trials on a subset (collect/whatif_samples.py); "" when on every sample."""
    count, total = summary.get("samples"), summary.get("of_samples")
    if not isinstance(count, int) or not isinstance(total, int) or not 0 < count < total:
        return ""
    planned, budget = _num(summary.get("planned_seconds")), _num(summary.get("budget_seconds"))
    why = (f"; one trial on all {total}: about {_seconds(planned)} s of the {_seconds(budget)} s budget"
           if planned and budget else "")
    return f"; measured on {count} of {total} samples, the worst first, then a spread{why}"


def recovered(base: dict[str, Any], chosen: dict[str, Any]) -> float:
    """The share of the lost agreement an exclusion won back (0..1), in the measure that judged the baseline's worst
    output when both results carry the judgement; else in top-1 agreement or cosine, as searches before it."""
    measured = _judged_pair(base, chosen)
    if measured is None:
        return _closed(base, chosen)
    before, after, lower_is_better = measured
    lost = before if lower_is_better else 1.0 - before
    won = before - after if lower_is_better else after - before
    return 0.0 if lost <= 1e-9 else min(max(won / lost, 0.0), 1.0)


def deciding_output(base: dict[str, Any], chosen: dict[str, Any]) -> Any:
    """The output whose judgement measures what an exclusion won back: the --postprocess decode where both results
    carry it (the user's own decisions decide, and the target includes them: a map won back to IoU 0.994 while the
    decode stayed at 0.89 is no 99% recovery), else the baseline's worst output."""
    if all(isinstance(r.get("outputs"), dict) and isinstance(r["outputs"].get(WHATIF_TASK_OUTPUT), dict)
           for r in (base, chosen)):
        return WHATIF_TASK_OUTPUT
    return base.get("output")


def _own(result: dict[str, Any], output: Any) -> dict[str, Any] | None:
    """*result*'s judgement of *output*: its own entry in "outputs", else the result's worst when that is *output*."""
    outputs = result.get("outputs")
    own = outputs.get(output) if isinstance(outputs, dict) and isinstance(output, str) else None
    if isinstance(own, dict):
        return own
    return result if result.get("output") == output else None


def _judged_pair(base: dict[str, Any], chosen: dict[str, Any]) -> tuple[float, float, bool] | None:
    """(before, after, lower is better) of the deciding output (deciding_output) in the measure that judged it, or
    None."""
    if not (judged(base) and judged(chosen)):
        return None
    output = deciding_output(base, chosen)
    before, after = _own(base, output), _own(chosen, output)
    if not isinstance(before, dict) or not isinstance(after, dict) or after.get("measure") != before.get("measure"):
        return None
    before_value, after_value = _num(before.get("value")), _num(after.get("value"))
    if before_value is None or after_value is None:
        return None
    return before_value, after_value, before.get("measure") in LOWER_IS_BETTER


LOWER_IS_BETTER = ("relative error", "non-finite values", "error against the spread")  # the judged measures where a smaller number agrees more


def _what(base: dict[str, Any], output: Any) -> str:
    if judged(base) and output == WHATIF_TASK_OUTPUT:
        return "the --postprocess decode's task agreement (as the report judges it)"
    if judged(base):
        measure = (_own(base, output) or base).get("measure")
        return f"output {output or ''}'s judgement ({measure}, as the report judges it)"
    return "the output cosine"


def _value_words(result: dict[str, Any], output: Any = None) -> str:
    """A result's judgement (of *output* when it judged that output too), or its cosine before judgements."""
    if not judged(result):
        return f"{result['cosine']:.4f}"
    own = _own(result, output)
    chosen = own if isinstance(own, dict) and judged(own) else result
    return f"{chosen['headline']} ({chosen['level']})"


IMPLICATES, EXONERATES = "implicates", "exonerates"
CONTROL_WINS_BACK = 0.5  # the FP32-float control wins back at least half the loss: the float part is the cause


@dataclass(frozen=True)
class FloatPartEvidence:
    verdict: str  # implicates | exonerates (the FP16 float part)
    output: str
    qdq: float  # median cosine of the QDQ model (float part FP16)
    control: float  # ... of the control (same INT8 nodes, float part FP32)
    line: str


def float_part(ctx: Context) -> FloatPartEvidence | None:
    """What the FP16 check's control (collect's FP32-float run) says about the FP16 float part, or None."""
    from qdqreport.analysis.fp16 import fp16_evidence

    found = fp16_evidence(ctx)
    worst = found.worst if found is not None and found.control_status == "ok" else None
    if worst is None or (1.0 - max(worst.qdq, 0.0) < 0.01 and not worst.decided):  # no control, or nothing lost
        return None
    if worst.decided:  # the report's own judgement: decisions the control wins back (analysis/fp16.OutputGain)
        return FloatPartEvidence(IMPLICATES, worst.output, worst.qdq, worst.control, (
            f"the FP32-float control (the same INT8 nodes, the float part in FP32) took output {worst.output} from "
            f"{worst.qdq_headline} to {worst.control_headline}"))
    verdict = IMPLICATES if worst.recovered >= CONTROL_WINS_BACK else EXONERATES
    line = (f"the FP32-float control (the same INT8 nodes, the float part in FP32) moved output {worst.output}'s "
            f"cosine from {worst.qdq:.4f} to {worst.control:.4f}")
    return FloatPartEvidence(verdict, worst.output, worst.qdq, worst.control, line)


def refutes_layers(ctx: Context) -> WhatIfEvidence | None:
    """The what-if evidence when it refutes the layer hypotheses, else None."""
    found = whatif(ctx)
    return found if found is not None and found.verdict == REFUTES else None


@dataclass(frozen=True)
class SamplePattern:
    output: str
    collapsed: tuple[int, ...]  # sample indices whose own decisions (or cosine) collapse
    total: int
    median_cosine: float
    measure: str  # what judged the samples: "map IoU", "top-1 agreement", "cosine"


def few_samples_collapse(ctx: Context, max_share: float = 0.25) -> SamplePattern | None:
    """k of N samples collapse while the median sample is faithful, on the output where that is clearest.

    Samples are judged by the output's own decisions when agreement.py measured them per sample
    (map IoU, top-1, threshold flips), else by cosine below 0.9."""
    from qdqreport.analysis.agreement import COLLAPSED, collapsed_samples, cosine_value

    comparison = ctx.comparison("quantization")
    if comparison is None:
        return None
    found = []
    for summary in ctx.output_summaries(comparison.id):
        if summary.internal:
            continue
        rows = ctx.sample_rows_of(comparison.id, summary.output)
        if not rows:
            continue
        median = statistics.median(cosine_value(r.get("cosine")) for r in rows)
        by_decisions = collapsed_samples(summary)
        ids = sorted(by_decisions) if by_decisions is not None else sorted(
            r["sample"] for r in rows if cosine_value(r.get("cosine")) < COLLAPSED)
        measure = summary.judgement.measure if by_decisions is not None else "cosine"
        if ids and len(ids) <= max_share * len(rows) and median >= 0.98:
            found.append(SamplePattern(summary.output, tuple(ids), len(rows), median, measure))
    return min(found, key=lambda p: (len(p.collapsed), p.output), default=None)


def _closed(base: dict[str, Any], chosen: dict[str, Any]) -> float:
    key = "top1" if _num(base.get("top1")) is not None and _num(chosen.get("top1")) is not None else "cosine"
    lost = 1.0 - base[key]
    return 0.0 if lost <= 1e-9 else min(max((chosen[key] - base[key]) / lost, 0.0), 1.0)


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value == value else None
