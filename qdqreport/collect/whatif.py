"""What-if experiments: which nodes, run in float, bring the QDQ model back to the FP32 outputs.

Every number is measured: each trial builds a QDQ variant (qdqreport.collect.exclusion), runs it
in ONNX Runtime on the same samples, and compares its outputs with the FP32 model's.

"Meets the target" is the report's own judgement, read from its owner (analysis/agreement.py through
analysis/context.judge_outputs): every output that is not recurrent state agrees, judged as the verdict
judges it, by its decisions where decisions judge it (detections after NMS, class labels, threshold
flips, map IoU; measured on the first --store-outputs samples, the ones the report's decisions read)
and by cosine only where the verdict uses cosine. A whole-tensor cosine of 0.9987 with 2 of 7 detections
lost is a collapse for the verdict, so it is no target met here either (a new user's NudeNet). A
--target-cosine or --target-top1 the user gives is a further floor on every output's median cosine /
top-1 agreement, never a replacement for the judgement. Judging costs each trial the collect's own
comparison of its outputs (per-sample and per-slice statistics, and the decisions: NMS at most 1,000
candidates a sample); the trial's measured seconds include it, so the budget bounds it as before. The
trial's outputs are held until they are judged (as the FP32 outputs already are).

Search, within a time budget:
  1. the unmodified QDQ model (the baseline), then the K top suspects excluded together
     (quantized nodes ranked by their local SQNR, worst first: where the error is born; before them the nodes that
     write a graph output through a Q/DQ pair, whose one scale over a whole output no tensor error ranks);
  2. if that reaches the target, a bisection over the ranked prefix for the shortest prefix that
     still reaches it, then a pruning pass that drops members one at a time (least suspicious
     first) while the target is still met;
  3. when the chosen nodes are all of one op type and cover at least half of that type's
     quantized nodes, the whole op type excluded (ModelOpt's --op_types_to_exclude);
  4. with the time left, single-node exclusions of the top suspects (evidence for the table).
A trial is started only when the time spent plus one trial's observed cost fits the budget. When one trial on every
sample would take more than a tenth of the budget, every trial runs on a subset planned before the first
(collect/whatif_samples.py: the worst samples and a spread, recorded in the summary).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from qdqreport.analysis.agreement import (AGREE, COLLAPSE, LEVEL_RANK, TASK_OK, THRESHOLD_MEASURES, JudgingOptions,
                                         task_level)
from qdqreport.analysis.context import OutputSummary, judge_outputs
from qdqreport.analysis.output_grid import output_pair_writers
from qdqreport.bundle.vocabulary import WHATIF_TASK_OUTPUT
from qdqreport.collect.exclusion import exclusion_variant
from qdqreport.collect.models import session_source
from qdqreport.collect.qdq_graph import GraphIndex
from qdqreport.collect.whatif_samples import trial_samples

Feed = dict[str, np.ndarray]
SINGLES = 5


@dataclass(frozen=True)
class WhatIfOptions:
    budget: float = 120.0  # seconds
    target_cosine: float | None = None  # a further floor on the worst median cosine (--target-cosine), None: none
    target_top1: float | None = None  # ... on the mean top-1 agreement of class outputs (--target-top1)
    candidates: int = 12
    provider: str = "cpu"
    judging: JudgingOptions | None = None  # --output-kind / --decision-threshold given to collect
    decision_samples: int | None = None  # the samples the report's decisions read (--store-outputs first:N; None: all)
    decoder: Any = None  # collect --postprocess's decode (analysis/decode_step.Decoder): it judges each variant too
    # The QDQ stage's inference seconds per sample and its samples worst first: what collect/whatif_samples.py plans
    # the trials' samples from (None / (): every sample)
    seconds_per_sample: float | None = None
    worst_samples: tuple[int, ...] = ()
    session_seconds: float = 0.0  # the QDQ stage's session creation: each trial pays about as much


@dataclass(frozen=True)
class Measured:
    cosine: float  # the worst output's median per-sample cosine
    top1: float | None  # mean top-1 agreement over class outputs, None without class outputs
    sqnr_db: float  # the worst output's median per-sample SQNR
    level: str = AGREE  # the report's judgement of the outputs (analysis/agreement.py): the worst decisive output's
    outputs: tuple[OutputSummary, ...] = ()  # every output, judged as the report judges it
    task: dict[str, Any] | None = None  # the --postprocess decode's judgement of the variant (as _judged_output's)

    @property
    def worst(self) -> OutputSummary | None:
        """The decisive output (recurrent state never decides) judged worst; the first of a tie."""
        decisive = [o for o in self.outputs if o.judgement is not None and not o.judgement.internal]
        return max(decisive, key=lambda o: LEVEL_RANK[o.judgement.level], default=None)


class WhatIf:
    """Runs trials against the FP32 outputs and records every one of them."""

    def __init__(self, q_index: GraphIndex, f_index: GraphIndex, samples: Sequence[Feed], fp32_outputs: Sequence[Feed],
                 class_outputs: set[str], options: WhatIfOptions, producers: dict[str, str] | None = None):
        self.q, self.f, self.samples, self.reference = q_index, f_index, samples, fp32_outputs
        self.classes, self.options = class_outputs, options
        self.judging = options.judging or JudgingOptions()
        self.producers = producers or {}  # output -> the op that computes it (analysis/output_kinds.producer_ops)
        self.rows: list[dict[str, Any]] = []
        self.start = time.perf_counter()
        self.costs: list[float] = []
        self.decoded = _decoded_reference(options.decoder, fp32_outputs, samples)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def affordable(self) -> bool:
        expected = max(self.costs) if self.costs else 0.0
        return self.elapsed() + expected <= self.options.budget

    def trial(self, kind: str, nodes: Sequence[str], op_types: Sequence[str] = ()) -> Measured | None:
        """Measure one variant; None when the budget does not allow it."""
        if not self.affordable():
            return None
        import onnxruntime as ort

        from qdqreport.collect.ort_stage import session_log

        began = time.perf_counter()
        model = exclusion_variant(self.q, nodes, self.f) if nodes else self.q.model
        providers = ["CUDAExecutionProvider" if self.options.provider == "cuda" else "CPUExecutionProvider"]
        with session_log():  # its warnings counted, not printed (ort_stage.ort_warning_summary)
            session = ort.InferenceSession(session_source(model), providers=providers)
        names = [o.name for o in session.get_outputs() if o.name in self.reference[0]]
        outputs = [dict(zip(names, session.run(names, feed))) for feed in self.samples]
        reference = [{name: ref[name] for name in names} for ref in self.reference]
        measured = _measured(judge_outputs(reference, outputs, self.judging, self.producers, self.classes,
                                           {name: np.shape(value) for name, value in self.samples[0].items()}
                                           if self.samples else {},
                                           self.options.decision_samples), self._task(outputs))
        seconds = time.perf_counter() - began
        self.costs.append(seconds)
        self.rows.append({"trial": len(self.rows), "kind": kind, "excluded_count": len(nodes),
                          "excluded": ";".join(nodes), "op_types": ";".join(op_types), "cosine": measured.cosine,
                          "top1_agree": measured.top1, "sqnr_db": measured.sqnr_db,
                          "reached": int(self.reached(measured)), "seconds": seconds})
        return measured

    def _task(self, outputs: list[Feed]) -> dict[str, Any] | None:
        """The user's decode of the variant's outputs against FP32's (collect --postprocess), judged as the report
        judges a stage pair's decode: a variant whose tensors agree while the decode still decides otherwise meets no
        target (a new user's tagger: three nodes excluded, 68 of 16,384 ids changed, yet 34 of 64 sentences tagged
        otherwise)."""
        if self.decoded is None:
            return None
        from qdqreport.analysis.task import decode_agreement, task_words

        agreement, differing = decode_agreement(self.options.decoder, self.decoded, outputs, self.samples)
        return {"level": task_level(agreement), "measure": "task agreement", "value": agreement, "internal": False,
                "headline": task_words(agreement, differing, len(outputs), bool(self.options.decoder.compare_fn))}

    def reached(self, measured: Measured) -> bool:
        """The report's judgement agrees on every output (analysis/agreement.py), and the floors the user gave hold."""
        floor_cosine, floor_top1 = self.options.target_cosine, self.options.target_top1
        return (measured.level == AGREE and (floor_cosine is None or measured.cosine >= floor_cosine)
                and (floor_top1 is None or measured.top1 is None or measured.top1 >= floor_top1))


def run_whatif(q_index: GraphIndex, f_index: GraphIndex, samples: Sequence[Feed], fp32_outputs: Sequence[Feed],
               layer_rows: Sequence[dict[str, Any]], precision: dict[str, Any], class_outputs: set[str],
               options: WhatIfOptions) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The what-if table rows and summary (see the module docstring for the search)."""
    quantized = {n["name"]: n["op_type"] for n in precision.get("nodes", [])
                 if n.get("activation_quantized") or n.get("weight_quantized")}
    suspects = with_output_writers(rank_suspects(layer_rows, quantized), precision, quantized)[: options.candidates]
    from qdqreport.analysis.output_kinds import producer_ops

    chosen_samples = trial_samples(len(samples), options.seconds_per_sample, options.budget, options.worst_samples,
                                   options.session_seconds)
    if chosen_samples.narrowed:  # every trial on the same subset; its decisions read all of it
        samples = [samples[i] for i in chosen_samples.indices]
        fp32_outputs = [fp32_outputs[i] for i in chosen_samples.indices]
        options = replace(options, decision_samples=None)
    search = WhatIf(q_index, f_index, samples, fp32_outputs, class_outputs, options, producer_ops(precision))
    summary: dict[str, Any] = {"format": 1, "target_cosine": options.target_cosine, "target_top1": options.target_top1,
                               "budget_seconds": options.budget, "candidates": suspects,
                               "quantized_nodes": len(quantized), **chosen_samples.record()}
    baseline = search.trial("baseline", [])
    summary["baseline"] = _as_dict(baseline)
    summary["judged"] = _judged_words(baseline, search)
    chosen, chosen_measure, stopped = _search(search, baseline, suspects)
    op_type = _dominant_op_type(chosen, quantized)
    if op_type is not None:
        whole = sorted(n for n, op in quantized.items() if op == op_type)
        measured = search.trial("op_type", whole, [op_type])
        if measured is not None:
            summary["op_type"] = {"op_type": op_type, "nodes": len(whole), **_as_dict(measured),
                                  "reached": search.reached(measured)}
    for node in suspects[:SINGLES]:
        if [node] != chosen and search.trial("single", [node]) is None:
            break
    summary.update({"chosen": {"nodes": chosen, "cost_nodes": len(chosen), **_as_dict(chosen_measure),
                               "reached": chosen_measure is not None and search.reached(chosen_measure)},
                    "stopped": stopped, "seconds": round(search.elapsed(), 3), "trials": len(search.rows)})
    return search.rows, summary


def _search(search: WhatIf, baseline: Measured | None, suspects: list[str]) -> tuple[list[str], Measured | None, str]:
    if baseline is None:
        return [], None, "budget too small for a single trial"
    if search.reached(baseline):
        return [], baseline, "the QDQ model already meets the target"
    if not suspects:
        return [], baseline, "no quantized node to exclude"
    full = search.trial("top_k", suspects)
    if full is None:
        return [], baseline, "budget exhausted"
    if not search.reached(full):
        return suspects, full, f"excluding the top {len(suspects)} suspects does not reach the target"
    low, high, best = 0, len(suspects), full
    while high - low > 1:  # invariant: prefix(high) reaches the target, prefix(low) does not
        middle = (low + high) // 2
        measured = search.trial("bisect", suspects[:middle])
        if measured is None:
            return suspects[:high], best, "budget exhausted during bisection"
        if search.reached(measured):
            high, best = middle, measured
        else:
            low = middle
    chosen = suspects[:high]
    for node in reversed(chosen[:]):
        if len(chosen) == 1:
            break
        trial_nodes = [n for n in chosen if n != node]
        measured = search.trial("prune", trial_nodes)
        if measured is None:
            return chosen, best, "budget exhausted while pruning"
        if search.reached(measured):
            chosen, best = trial_nodes, measured
    return chosen, best, "target reached"


def rank_suspects(layer_rows: Sequence[dict[str, Any]], quantized: dict[str, str]) -> list[str]:
    """Quantized nodes, worst local SQNR first (accumulated SQNR when local error was not measured)."""
    worst: dict[str, float] = {}
    for row in layer_rows:
        if row.get("kind") != "activation" or row.get("node") not in quantized:
            continue
        value = row.get("local_sqnr_db")
        value = row.get("sqnr_db") if value is None or (isinstance(value, float) and math.isnan(value)) else value
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        worst[row["node"]] = min(worst.get(row["node"], math.inf), float(value))
    return sorted(worst, key=lambda n: (worst[n], n))


def with_output_writers(ranked: list[str], precision: dict[str, Any], quantized: dict[str, str]) -> list[str]:
    """*ranked* with the nodes that write a graph output through a Q/DQ pair first: one INT8 scale over a whole
    output is a damage no tensor error ranks (a new user's YOLO11-seg: its output Concat joins box pixels and scores
    in [0, 1], every score read 0, and the what-if never tried it; excluding it restored 102/102 boxes)."""
    writers = [n["name"] for n in output_pair_writers(precision) if n.get("name") in quantized]
    return writers + [n for n in ranked if n not in writers]


def _dominant_op_type(chosen: list[str], quantized: dict[str, str]) -> str | None:
    types = {quantized.get(n) for n in chosen}
    if len(chosen) < 2 or len(types) != 1:
        return None
    op_type = types.pop()
    total = sum(1 for op in quantized.values() if op == op_type)
    return op_type if total > len(chosen) and len(chosen) * 2 >= total else None


def _decoded_reference(decoder: Any, fp32_outputs: Sequence[Feed], samples: Sequence[Feed]) -> list[Any] | None:
    """FP32's decoded results, once, when collect has a --postprocess decode (None otherwise); *samples*: the inputs
    those outputs came from, for a decode that takes them."""
    if decoder is None:
        return None
    from qdqreport.analysis.task import decode_all

    return decode_all(decoder, fp32_outputs, samples)


def _measured(outputs: list[OutputSummary], task: dict[str, Any] | None = None) -> Measured:
    """The trial's numbers as before (worst median cosine and SQNR, mean top-1 of class outputs) and the report's
    judgement of every output and of the decode; the trial's level is the worst of them (COLLAPSE when nothing was
    compared)."""
    top1s = [o.top1 for o in outputs if o.top1 is not None]
    decisive = [o.judgement.level for o in outputs if o.judgement is not None and not o.judgement.internal]
    decisive += [task["level"]] if task else []
    level = max(decisive, key=LEVEL_RANK.__getitem__, default=AGREE if outputs else COLLAPSE)
    return Measured(min((o.cosine_median for o in outputs), default=-1.0),
                    statistics.fmean(top1s) if top1s else None,
                    min((o.sqnr_median for o in outputs), default=-math.inf), level, tuple(outputs), task)


def _as_dict(measured: Measured | None) -> dict[str, Any]:
    if measured is None:
        return {"cosine": None, "top1": None, "sqnr_db": None}
    outputs = {o.output: {"level": o.judgement.level, "measure": o.judgement.measure,
                          "value": _finite(o.judgement.value), "headline": o.judgement.headline,
                          "internal": o.judgement.internal}
               for o in measured.outputs if o.judgement is not None}
    if measured.task is not None:
        outputs[WHATIF_TASK_OUTPUT] = {**measured.task, "value": _finite(measured.task["value"])}
    worst = measured.worst
    name = worst.output if worst else None
    # The decode decides unless an output judges worse (the user's own decisions; analysis/evidence.deciding_output).
    if measured.task is not None and (worst is None or LEVEL_RANK[measured.task["level"]]
                                      >= LEVEL_RANK[worst.judgement.level]):
        name = WHATIF_TASK_OUTPUT
    judged = outputs.get(name) if name else None
    return {"cosine": measured.cosine, "top1": measured.top1,
            "sqnr_db": measured.sqnr_db if math.isfinite(measured.sqnr_db) else None,
            # The report's judgement (optional, 1.2-compatible): what the verdict would say of this variant.
            "level": measured.level, "output": name,
            "measure": judged["measure"] if judged else None, "value": judged["value"] if judged else None,
            "headline": judged["headline"] if judged else None, "outputs": outputs}


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _judged_words(measured: Measured | None, search: WhatIf) -> str:
    """What "meets the target" meant, in the words the report prints: each output's deciding measure."""
    by = "; ".join(f"{o.output} by {o.judgement.measure}" + (" (recurrent state: shown, never decisive)"
                                                            if o.judgement.internal else "")
                   for o in (measured.outputs if measured else ()) if o.judgement is not None)
    threshold = search.judging.threshold
    floors = [f"median cosine ≥ {search.options.target_cosine:g}" if search.options.target_cosine is not None else "",
              f"top-1 agreement ≥ {search.options.target_top1:.0%}" if search.options.target_top1 is not None else ""]
    floors = [f for f in floors if f]
    decode = (f", and the --postprocess decode decides alike on {TASK_OK:.0%} of the samples or more"
              if search.decoded is not None else "")
    # The threshold only where a measure reads it (a page grid judged by cosine has no decision to take at 0.5).
    thresholded = any(o.judgement is not None and o.judgement.measure in THRESHOLD_MEASURES
                      for o in (measured.outputs if measured else ()))
    where = f"; decision threshold {threshold:g}" if thresholded else ""
    return (f"every output agrees as the report judges it ({by}{where}){decode}"
            + (f", and {' and '.join(floors)} (--target-cosine/--target-top1)" if floors else ""))
