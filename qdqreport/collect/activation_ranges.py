"""A bounded pass: how the evaluation data fills every activation Q node's calibrated range (issue 10, item 5).

The calibrated scale of a QuantizeLinear is the calibration data's range (max, percentile or entropy) of the tensor
it quantizes, observed by running the FP32 model on the calibration set. Evaluation values beyond it are clipped: a
few percent where percentile or entropy calibration cut the tail by design, a tenth or more where the calibration
never saw values like the evaluation's (other content, a state the calibration reader never fed, noise). Only the
per-layer pass measured this for inner Q nodes, so a default bundle could not tell calibration coverage from
anything else.

The default stages keep the user's own sessions (graph outputs only, issue 12); this pass builds one more session,
of the FP32 model with the quantized tensors marked as outputs (what a calibrator observes), and runs it on at most `--range-samples` evaluation samples
(collect/pipeline.RANGE_SAMPLES by default) spread evenly over the set, and as many calibration samples when --calib
is given: how much of the calibration data's own values the same ranges clip is the baseline the evaluation's
clipping is read against. Marked outputs cost: each such run takes 3-4x a plain FP32 inference (the tensors are
copied out and ONNX Runtime can no longer reuse their memory; computing the reductions inside the graph instead was
no faster), hence the small default. It runs with `--per-layer` too: that pass's qnodes table measures every sample in the QDQ
model, but has no calibration baseline.

A model whose measured tensors of one sample pass STEPPED_ABOVE bytes (as float32, by shape inference on the first
evaluation sample) runs the marked model in steps of at most CHUNK_BYTES of them (collect/stepwise.py, as the
per-layer pass does): the graph ONNX Runtime optimised with every measured tensor marked, cut along chunks of them in
graph order and run with optimisation off, so each value comes from the same kernel on the same inputs (bit for bit),
and each chunk is observed and dropped before the next step runs. U^2-Net-p at 320x320: the one run held every
quantized tensor of a sample (391 MB; its arena kept as much): the default collect's peak. Below STEPPED_ABOVE and on
another provider than the CPU's the pass runs one run a sample, as before; 28 of the corpus's 33 families are below it
(their bundles' rows: lay 158-831 MB, osn 108-383, foc 73-342, dns 313-323 and lea 38-181 MB a sample pass it).
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Sequence

import numpy as np

from qdqreport.collect.align import GraphPair, QuantizerInfo
# Above STEPPED_ABOVE bytes of measured tensors a sample the marked model runs in steps of CHUNK_BYTES: the per-layer
# pass's thresholds.
from qdqreport.collect.layerwise import (CHUNK_BYTES, PASS_SESSION, STEPPED_ABOVE, QuantizerStats, float32_outputs,
                                         observe_quantizer, quantizer_row)
from qdqreport.collect.ort_stage import new_session
from qdqreport.collect.stepwise import NotSteppable, SteppedModel, estimated_bytes, heap_kept, stepped_plan


def spread_indices(count: int, limit: int) -> list[int]:
    """At most *limit* sample indices spread evenly over *count* samples (first and last included)."""
    if limit <= 0 or count <= 0:
        return []
    if count <= limit:
        return list(range(count))
    return sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)}) if limit > 1 else [0]


def activation_ranges(graphs: GraphPair, samples: Sequence[dict[str, np.ndarray]], provider: str, limit: int,
                      calib: Sequence[dict[str, np.ndarray]] | None = None,
                      sizes: dict[str, int | None] | None = None) -> dict[str, Any] | None:
    """The range-use rows of every activation Q node over up to *limit* evaluation samples; with *calib*, each row
    also says how much of the calibration data's own values (up to *limit* samples) the same range clips. None when
    the model has no activation Q node whose tensor the FP32 model computes. *graphs*: the two models' indices and
    alignment, shared with the collect's other passes. *sizes*: stepwise.estimated_bytes of the measured tensors on the
    first evaluation sample when the caller has them (collect/pipeline._marked_bytes), else estimated here."""
    start = time.perf_counter()
    measured = _measured_tensors(graphs)
    if not measured:
        return None
    wanted = sorted({tensor for _, tensor in measured})
    marked, names = float32_outputs(graphs.fp32, wanted)  # FP16 tensors are read through a Cast to FP32 (another name)
    output_of = dict(zip(wanted, names))
    measured = [(quantizer, output_of[tensor]) for quantizer, tensor in measured]
    indices = spread_indices(len(samples), limit)
    session = _stepped(graphs, marked, [output_of[t] for t in wanted], wanted, provider, samples[indices[0]], sizes) \
        if indices and provider == "cpu" else None
    if session is None:
        # No memory pattern, as the per-layer pass's sessions (layerwise.PASS_SESSION): the pattern's block laid out at
        # the second run stayed beside the first run's chunks (the synthetic 102 MB model's default collect peaked here)
        session = new_session(marked, provider, **PASS_SESSION)
    evaluation = _observe_all(session, measured, (samples[i] for i in indices))
    rows = [quantizer_row(q, evaluation[q.q_node]) for q, _ in measured]
    result = {"samples": len(indices), "of_samples": len(samples), "sample_indices": indices}
    if calib is not None:
        calib_indices = spread_indices(len(calib), limit)
        own = _observe_all(session, measured, (calib[i] for i in calib_indices))
        for row, (quantizer, _) in zip(rows, measured):
            stats = own[quantizer.q_node]
            row["calib_values"] = stats.values
            row["calib_clipped_share"] = stats.clipped / stats.values if stats.values else None
        result["calib_samples"] = len(calib_indices)
    return {**result, "seconds": round(time.perf_counter() - start, 3), "quantizers": rows}


def _stepped(graphs: GraphPair, marked: bytes | str, names: list[str], tensors: list[str], provider: str,
             first: dict[str, np.ndarray], known: dict[str, int | None] | None = None) -> Any:
    """The marked model as a stepwise.SteppedModel in chunks of at most CHUNK_BYTES of measured tensors (*names*: the
    marked outputs of *tensors*), in the order the FP32 graph computes them; None when they fit STEPPED_ABOVE on
    *first* or the optimised graph cannot be cut (the pass then runs one run a sample)."""
    index = graphs.fp32
    order = sorted(range(len(tensors)), key=lambda i: (index.written_at(tensors[i]), tensors[i]))
    sizes = known if known is not None else estimated_bytes(index.model, first, [tensors[i] for i in order])
    plan = stepped_plan([sizes[tensors[i]] for i in order], STEPPED_ABOVE, CHUNK_BYTES)
    if plan is None:
        return None
    chunks = [[names[order[i]] for i in positions] for positions in plan]
    try:
        return SteppedModel(marked, provider, chunks)
    except NotSteppable:
        return None


def measured_tensor_names(graphs: GraphPair) -> list[str]:
    """The FP32 tensors the pass marks as outputs (before any Cast to FP32)."""
    return sorted({tensor for _, tensor in _measured_tensors(graphs)})


def _measured_tensors(graphs: GraphPair) -> list[tuple[QuantizerInfo, str]]:
    """(quantizer, FP32 tensor it quantizes) of every activation Q node whose tensor the FP32 model computes."""
    alignment, f_index = graphs.alignment, graphs.fp32
    fp32_name = {t.qdq_name: t.name for t in alignment.tensors}
    computed = set(f_index.producer) | {i.name for i in f_index.model.graph.input}
    found = []
    for quantizer in alignment.quantizers:
        name = quantizer.tensor if quantizer.tensor in computed else fp32_name.get(quantizer.input)
        if name not in computed and quantizer.input.endswith(OUTPUT_RENAMED):
            # quantize_static renames a graph output it quantizes: "<output>_QuantizeLinear_Input" is the FP32 output
            name = quantizer.input[:-len(OUTPUT_RENAMED)]
        if name in computed:  # a tensor only the QDQ graph has is not measured
            found.append((quantizer, name))
    return found


OUTPUT_RENAMED = "_QuantizeLinear_Input"


def _observe_all(session: Any, measured: list[tuple[QuantizerInfo, str]],
                 feeds: Iterable[dict[str, np.ndarray]]) -> dict[str, QuantizerStats]:
    """Each quantizer's clipping and observed range over *feeds* (*measured*: quantizer and the session output
    holding its tensor), as the per-layer pass observes them; one sample's marked tensors held at a time."""
    names = sorted({output for _, output in measured})
    stats, limits = {q.q_node: QuantizerStats() for q, _ in measured}, {}
    if isinstance(session, SteppedModel):  # each chunk's quantizers observed, then the chunk dropped
        with heap_kept():  # the steps reuse the heap's pages, given back once at the end
            for feed in feeds:
                for values in session.run(dict(feed)):
                    for quantizer, output in measured:
                        if output in values:
                            observe_quantizer(stats[quantizer.q_node], quantizer, values[output], limits)
                    del values
        return stats
    for feed in feeds:
        values = dict(zip(names, session.run(names, dict(feed))))
        for quantizer, output in measured:
            observe_quantizer(stats[quantizer.q_node], quantizer, values[output], limits)
        del values
    return stats
