"""`collect --per-layer`: the per-layer pass and the what-if search, and where their results go in the bundle.

Off by default: it builds three ONNX Runtime sessions with every aligned tensor marked as an
output and folds every tensor of every sample (with the default stages, 4-8x the plain inference
time of both models at N = 128 on a quiet machine; see docs/BENCHMARKS.md) and the what-if search
then spends up to --whatif-budget seconds re-running modified QDQ models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import onnx

from qdqreport.analysis.compare import looks_like_probabilities
from qdqreport.bundle.layout import ARTIFACT_PATHS
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.align import GraphPair
from qdqreport.collect.layerwise import LayerCollector
from qdqreport.collect.models import class_score_outputs
from qdqreport.collect.whatif import WhatIfOptions, run_whatif
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]


@dataclass
class PerLayer:
    layer_rows: list[dict[str, Any]]
    qnode_rows: list[dict[str, Any]]
    summary: dict[str, Any]
    whatif_rows: list[dict[str, Any]] = field(default_factory=list)
    whatif_summary: dict[str, Any] | None = None


def run_per_layer(fp32: onnx.ModelProto, qdq: onnx.ModelProto, samples: Sequence[Feed], precision: dict[str, Any] | None,
                  options: WhatIfOptions, progress: Progress, graphs: GraphPair | None = None) -> PerLayer:
    """Per-layer statistics over *samples*, then (budget > 0) the what-if search on the same samples. *graphs*: the
    two models' indices and alignment shared with the collect's other passes (else built here)."""
    import time

    progress.say("per-layer pass: aligning the graphs and building the marked and local sessions")
    start = time.perf_counter()
    search = options.budget > 0 and bool(precision)
    # The FP32 graph outputs of every sample are kept only for the what-if search (memory flat in N without it).
    collector = LayerCollector(fp32, qdq, options.provider, keep_outputs=search, graphs=graphs)
    collector.add_all(samples, lambda index: progress.count("per-layer samples", index + 1, len(samples)))
    result = collector.result(time.perf_counter() - start)
    layers = PerLayer(result.layer_rows, result.qnode_rows, result.summary)
    if search:
        progress.say(f"what-if search (budget {options.budget:g} s)")
        classes = class_score_outputs(fp32) | {name for name in result.fp32_outputs[0]
                                               if looks_like_probabilities(result.fp32_outputs, name)}
        layers.whatif_rows, layers.whatif_summary = run_whatif(
            collector.q_index, collector.f_index, samples, result.fp32_outputs, result.layer_rows, precision,
            classes, options)
    return layers


def write_per_layer(writer: BundleWriter, manifest: dict[str, Any], layers: PerLayer | None) -> None:
    """Attach the tables to the quantization comparison and the summaries to manifest['artifacts']."""
    if layers is None:
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
