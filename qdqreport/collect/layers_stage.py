"""`collect --per-layer`: the per-layer pass and the what-if search, and where their results go in the bundle.

Off by default: it builds three ONNX Runtime sessions with every aligned tensor marked as an
output and folds every tensor of the samples it reads: at most --per-layer-samples (collect/pipeline's
PER_LAYER_SAMPLES by default) spread evenly over the evaluation set, first and last included (activation_ranges.spread_indices),
or every sample with `--per-layer-samples all`. A sample costs 4-7 plain inferences of both models (marked
runs that copy every tensor out, the local graph, the folding; docs/BENCHMARKS.md), so the bound keeps the
pass's cost fixed whatever N is; layers/summary.json records which samples were read. The what-if search
then spends up to --whatif-budget seconds re-running modified QDQ models on every sample, or on a subset when one
trial on all of them would cost more than a tenth of the budget (collect/whatif_samples.py).

A graph pair the pass cannot fully align never stops the collect: pairs whose two sides are not the same quantity
(align.check_pairs, nodes fused before quantization) are skipped and counted in layers/summary.json, and when no
activation pair is left, or a session cannot be built or run, the pass is recorded as skipped (`status`, `reason`)
with no tables (SKIP_HINT names the usual cause and its fix).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import onnx

from qdqreport.analysis.compare import looks_like_probabilities
from qdqreport.analysis.layers import skipped_words
from qdqreport.bundle.layout import ARTIFACT_PATHS
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.activation_ranges import spread_indices
from qdqreport.collect.align import GraphPair
from qdqreport.collect.layerwise import LayerCollector, exception_line
from qdqreport.collect.models import class_score_outputs
from qdqreport.collect.whatif import WhatIfOptions, run_whatif
from qdqreport.errors import InputError
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]
SAMPLE_CHOICE = "spread"  # layers/summary.json's sample_choice: evenly spread, first and last included
# The usual cause of a pair nothing aligns in: the FP32 model given is not the one the QDQ model was quantized from.
SKIP_HINT = ("pass the FP32 model the QDQ model was quantized from (e.g. the output of onnxruntime's "
             "quant_pre_process when quantize_static was run on it)")


@dataclass
class PerLayer:
    layer_rows: list[dict[str, Any]]
    qnode_rows: list[dict[str, Any]]
    summary: dict[str, Any]
    whatif_rows: list[dict[str, Any]] = field(default_factory=list)
    whatif_summary: dict[str, Any] | None = None


def run_per_layer(fp32: onnx.ModelProto, qdq: onnx.ModelProto, samples: Sequence[Feed], precision: dict[str, Any] | None,
                  options: WhatIfOptions, progress: Progress, graphs: GraphPair | None = None,
                  limit: int | None = None) -> PerLayer:
    """Per-layer statistics over at most *limit* of *samples* spread over the set (None: every sample), then
    (budget > 0) the what-if search on every sample (or a planned subset). *graphs*: the two models' indices and alignment shared with
    the collect's other passes (else built here)."""
    import time

    progress.say("per-layer pass: aligning the graphs and building the marked and local sessions")
    start = time.perf_counter()
    search = options.budget > 0 and bool(precision)
    picked = list(range(len(samples))) if limit is None else spread_indices(len(samples), limit)
    read = [samples[i] for i in picked]
    # The FP32 graph outputs of every sample are kept only for the what-if search (memory flat in N without it).
    try:
        collector = LayerCollector(fp32, qdq, options.provider, keep_outputs=search, graphs=graphs)
        collector.add_all(read, lambda index: progress.count("per-layer samples", index + 1, len(read)))
        result = collector.result(time.perf_counter() - start)
    except Exception as exc:  # a session ONNX Runtime cannot build or run on this pair: the pass, not the bundle
        reason = f"ONNX Runtime failed on the marked graphs ({exception_line(exc)})"
        progress.say(f"per-layer pass skipped: {reason}")
        return skipped_per_layer(f"{reason}; {SKIP_HINT}", len(samples), time.perf_counter() - start)
    if read and not any(row["kind"] == "activation" for row in result.layer_rows):
        skipped = result.summary.get("skipped_tensors", 0)
        reason = (f"no activation of the two graphs is the same quantity ({skipped} paired by name differ in shape "
                  f"or were fused); {SKIP_HINT}" if skipped else f"no activation of the FP32 graph has a counterpart "
                  f"in the QDQ graph; {SKIP_HINT}")
        progress.say(f"per-layer pass skipped: {reason}")
        return PerLayer([], [], {**result.summary, "status": "skipped", "reason": reason, "samples": 0,
                                 "of_samples": len(samples)})
    if result.summary.get("skipped_tensors"):
        progress.say(f"per-layer pass: {result.summary['skipped_tensors']} tensor(s) paired by name were not compared "
                     f"(their two sides differ: {skipped_words(result.summary.get('skipped_reasons') or {})})")
    layers = PerLayer(result.layer_rows, result.qnode_rows, {**result.summary, **sample_record(picked, len(samples))})
    if search:
        progress.say(f"what-if search (budget {options.budget:g} s)")
        reference = _every_fp32_output(collector, samples, picked, result.fp32_outputs)
        classes = class_score_outputs(fp32) | {name for name in reference[0]
                                               if looks_like_probabilities(reference, name)}
        layers.whatif_rows, layers.whatif_summary = run_whatif(
            collector.q_index, collector.f_index, samples, reference, result.layer_rows, precision,
            classes, options)
    return layers


def skipped_per_layer(reason: str, count: int, seconds: float) -> PerLayer:
    """The per-layer pass recorded as skipped: layers/summary.json with `status` "skipped" and the one-line `reason`,
    no tables."""
    return PerLayer([], [], {"format": 1, "status": "skipped", "reason": reason, "samples": 0, "of_samples": count,
                             "aligned_tensors": 0, "aligned_weights": 0, "quantizers": 0, "unmatched": [],
                             "unmatched_count": 0, "local": False, "local_error": None, "seconds": round(seconds, 3)})


def parse_per_layer_samples(text: str) -> int | None:
    """--per-layer-samples: `all` -> None (every sample), a whole number K >= 1 -> K."""
    value = text.strip().lower()
    if value == "all":
        return None
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise InputError(f"--per-layer-samples {text}: give a number of samples (1 or more) or all")


def sample_record(picked: list[int], count: int) -> dict[str, Any]:
    """What layers/summary.json says of the samples read: `samples` (the count, as before), `of_samples`, and, when
    the pass read fewer than all, `sample_indices` and `sample_choice`."""
    record: dict[str, Any] = {"samples": len(picked), "of_samples": count}
    if len(picked) < count:
        record.update(sample_indices=picked, sample_choice=SAMPLE_CHOICE)
    return record


def _every_fp32_output(collector: LayerCollector, samples: Sequence[Feed], picked: list[int],
                       folded: list[Feed]) -> list[Feed]:
    """The FP32 graph outputs of every sample, for the what-if: the folded samples' from the pass, the others from
    the same marked FP32 session asked for its graph outputs only (the same kernels, the same values)."""
    if len(picked) == len(samples):
        return folded
    known = dict(zip(picked, folded))
    return [known[i] if i in known else collector.fp32_graph_outputs(samples[i]) for i in range(len(samples))]


def write_per_layer(writer: BundleWriter, manifest: dict[str, Any], layers: PerLayer | None) -> None:
    """Attach the tables to the quantization comparison and the summaries to manifest['artifacts']."""
    if layers is None:
        return
    if layers.summary.get("status") == "skipped":  # no tables: the summary says why
        manifest["artifacts"]["layers_summary"] = writer.add_json(ARTIFACT_PATHS["layers_summary"], layers.summary)
        return
    comparison = next((c for c in manifest["comparisons"] if c["purpose"] == "quantization"), None)
    if comparison is not None:
        base = f"compare/{comparison['id']}"
        comparison["tables"]["layers"] = writer.add_table(f"{base}.layers.csv", "layers", layers.layer_rows)
        comparison["tables"]["qnodes"] = writer.add_table(f"{base}.qnodes.csv", "qnodes", layers.qnode_rows)
        if layers.whatif_rows:
            comparison["tables"]["whatif"] = writer.add_table(f"{base}.whatif.csv", "whatif", layers.whatif_rows)
    manifest["artifacts"]["layers_summary"] = writer.add_json(ARTIFACT_PATHS["layers_summary"], layers.summary)
    if layers.whatif_summary is not None:
        manifest["artifacts"]["whatif_summary"] = writer.add_json(ARTIFACT_PATHS["whatif_summary"], layers.whatif_summary)
