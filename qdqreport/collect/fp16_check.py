"""The FP16 check: does the QDQ model's FP16 float part, not its INT8 part, damage the outputs?

Runs by default when the QDQ graph holds FP16 (ModelOpt's `--high_precision_dtype fp16`
default), and never otherwise. Three pieces of evidence, none kept per sample:

  * constants: every FP16 initializer or Constant of the QDQ graph is compared with the FP32
    model's constant of the same name; values that became inf (beyond 65504) or 0 (nonzero but
    below FP16's smallest subnormal) are counted. Costs nothing but reading the graphs.
  * ranges: the FP32 model runs once more with every tensor that the QDQ graph computes in FP16
    marked as an output, on at most RANGE_SCAN_SAMPLES (16) samples spread evenly over the set
    (first and last included, activation_ranges.spread_indices); per tensor a streaming max |x|, the
    count of values beyond 65504 and of nonzero values that flush to zero in FP16. Memory is one
    sample's tensors, whatever the count. It names the tensors (evidence); the control, run on every
    sample, is the measurement. Bundles without range_samples scanned every sample: on the demo
    classifier at N = 128 the scan (128 runs with 232 tensors marked, and their folding) was the
    largest cost of the default collect (issue 12, docs/BENCHMARKS.md).
  * control: the QDQ model with its float part restored to FP32 (collect/fp32_float.py), Q/DQ
    untouched, run as stage `ort_qdq_fp32` and compared with `ort_fp32` like `ort_qdq` is.

Cost: one QDQ inference pass plus an FP32 pass with the FP16 tensors marked on at most 16 samples
(docs/bundle.md). `collect --no-fp16-check`
skips it.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import onnx

from qdqreport.analysis.fp16 import CONTROL_STAGE, FP16_MAX
from qdqreport.analysis.comparison_tables import write_comparison
from qdqreport.bundle.layout import ARTIFACT_PATHS, write_stage
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.activation_ranges import spread_indices
from qdqreport.collect.align import GraphPair
from qdqreport.collect.fp32_float import float_constants, fp32_original, has_half_float, restore_fp32_float
from qdqreport.collect.models import session_source, with_extra_outputs
from qdqreport.collect.ort_stage import OrtStage, open_stage
from qdqreport.collect.qdq_graph import PASS_THROUGH, QDQ_OPS, GraphIndex
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]
FP16_FLUSH = 2.0 ** -25  # nonzero values at or below this round to 0 in float16 (half the smallest subnormal)
HALF_NAMES = ("fp16", "bf16")
CONSUMERS_LISTED = 4
RANGE_SCAN_SAMPLES = 16  # the range scan's samples, spread evenly over the evaluation set (first and last included)
RANGE_SCAN_CHOICE = f"at most {RANGE_SCAN_SAMPLES} evaluation samples spread evenly over the set, first and last included"


@dataclass
class _Range:
    """Streaming range statistics of one FP32 tensor."""

    absmax: float = 0.0
    overflow: int = 0
    underflow: int = 0
    values: int = 0
    samples: int = 0

    def add(self, value: np.ndarray) -> None:
        self.samples += 1
        self.values += int(value.size)
        if not value.size:
            return
        magnitude = np.abs(value)
        top = float(magnitude.max())
        if not math.isfinite(top):  # NaN/Inf already in FP32 are not FP16's doing: leave them out
            magnitude = magnitude[np.isfinite(magnitude)]
            top = float(magnitude.max()) if magnitude.size else 0.0
        self.absmax = max(self.absmax, top)
        # Counted only where there can be any (the same counts; hundreds of tensors per sample, issue 12):
        # none beyond FP16's range when the largest is not, no zero when nothing is at or below the flush.
        if top > FP16_MAX:
            self.overflow += int(np.count_nonzero(magnitude > FP16_MAX))
        small = int(np.count_nonzero(magnitude <= FP16_FLUSH))
        if small:
            self.underflow += small - int(np.count_nonzero(magnitude == 0))


@dataclass
class Fp16Check:
    control: OrtStage
    rows: list[dict[str, Any]] = field(default_factory=list)  # the fp16_ranges table
    summary: dict[str, Any] = field(default_factory=dict)  # quant/fp16_check.json


def needs_fp16_check(qdq: onnx.ModelProto) -> bool:
    return has_half_float(qdq)


def run_fp16_check(fp32: onnx.ModelProto, qdq: onnx.ModelProto, samples: Sequence[Feed], provider: str,
                   progress: Progress, graphs: GraphPair | None = None) -> Fp16Check:
    """Constants, FP32 ranges of the FP16 tensors, and the FP32-float control run on *samples*. *graphs*: the two
    models' indices and alignment when the collect's other passes share them (else built here)."""
    start = time.perf_counter()
    progress.say("FP16 check: the QDQ float part is FP16; scanning FP32 ranges and running the FP32-float control")
    graphs = graphs if graphs is not None else GraphPair(fp32, qdq)
    q_index = graphs.qdq
    tensors, align_error = _fp16_tensors(graphs)
    originals = float_constants(fp32)
    constant_rows, checked, unmatched = _constant_rows(q_index, originals)
    # The control first, alone over every sample, as the stages run (its `seconds` is inference time, not shared
    # with the scan), then closed: one of the two sessions in memory at a time.
    control = _control_stage(qdq, originals, provider)
    for index, feed in enumerate(samples):
        control.infer(feed, index)
        progress.count("FP16 check samples (ort_qdq_fp32)", index + 1, len(samples))
    control.close()
    ranges = {t.name: _Range() for t in tensors}
    scan = open_stage("fp16_ranges", with_extra_outputs(fp32, list(ranges)), (), provider)
    picked = spread_indices(len(samples), RANGE_SCAN_SAMPLES)
    # The scan runs one sample ahead in a worker thread (ONNX Runtime releases the GIL) while this sample's
    # ranges are folded here: on a model of hundreds of small FP16 tensors the folding costs about as much
    # as the run (issue 12). Samples are folded in order; the counts and maxima are the same.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(scan.infer, samples[picked[0]], picked[0]) if picked else None
        for step, index in enumerate(picked):
            values = pending.result() or {}
            if step + 1 < len(picked):
                pending = pool.submit(scan.infer, samples[picked[step + 1]], picked[step + 1])
            for name, statistics in ranges.items():
                if name in values:
                    statistics.add(values[name])
            del values
            progress.count("FP16 check samples (FP32 ranges)", step + 1, len(picked))
    scan_error = align_error or scan.error
    scan.close()
    rows = [_activation_row(t, ranges[t.name], q_index) for t in tensors] + constant_rows
    summary = {"format": 1, "control_stage": CONTROL_STAGE, "samples": len(samples),
               "range_samples": len(picked), "range_sample_choice": RANGE_SCAN_CHOICE,
               "fp16_activations": len(tensors), "fp16_constants_checked": checked,
               "fp16_constants_without_fp32_original": unmatched,
               "activations_beyond_fp16": sum(1 for t in tensors if ranges[t.name].overflow),
               "constants_damaged": len(constant_rows), "range_scan_error": scan_error,
               "seconds": round(time.perf_counter() - start, 3)}
    return Fp16Check(control, rows, summary)


def _fp16_tensors(graphs: GraphPair) -> tuple[list[Any], str | None]:
    """The aligned activations the QDQ graph holds in FP16; an alignment failure costs the scan, not the collect."""
    try:
        return [t for t in graphs.alignment.tensors if t.qdq_dtype in HALF_NAMES], None
    except Exception as exc:  # an unusual graph align() cannot read: the control still runs
        return [], f"graph alignment failed: {type(exc).__name__}: {exc}"[:500]


def _control_stage(qdq: onnx.ModelProto, originals: dict[str, np.ndarray], provider: str) -> OrtStage:
    """The FP32-float control, opened now; a rewrite that fails is the stage's failure, recorded like any other."""
    outputs = tuple(o.name for o in qdq.graph.output)
    try:
        model = session_source(restore_fp32_float(qdq, originals), owned=True)
    except Exception as exc:
        stage = OrtStage(CONTROL_STAGE, outputs)
        stage.fail(f"the FP32-float rewrite failed: {type(exc).__name__}: {exc}"[:500])
        return stage
    return open_stage(CONTROL_STAGE, model, outputs, provider)


def _activation_row(tensor: Any, stats: _Range, q_index: GraphIndex) -> dict[str, Any]:
    return {"tensor": tensor.name, "kind": "activation", "node": tensor.node, "op_type": tensor.op_type,
            "consumers": _consumers(q_index, tensor.qdq_name), "samples": stats.samples, "values": stats.values,
            "fp32_absmax": stats.absmax if stats.samples else None, "overflow": stats.overflow,
            "underflow": stats.underflow, "qdq_absmax": None}


def _constant_rows(q_index: GraphIndex, originals: dict[str, np.ndarray]) -> tuple[list[dict[str, Any]], int, int]:
    """Rows for the FP16 constants the conversion damaged; also how many were checked and had no original."""
    rows, checked, unmatched = [], 0, 0
    for name, proto in q_index.constant_protos.items():
        if proto.data_type != onnx.TensorProto.FLOAT16:
            continue
        stored = onnx.numpy_helper.to_array(proto)
        original = fp32_original(stored, originals.get(name))  # None when the values are not an FP16 copy
        unmatched += original is None
        checked += 1
        row = _damage(name, stored.astype(np.float32), original, q_index)
        if row is not None:
            rows.append(row)
    return rows, checked, unmatched


def _damage(name: str, half: np.ndarray, original: np.ndarray | None, q_index: GraphIndex) -> dict[str, Any] | None:
    if original is None:  # no FP32 original: only a stored inf shows damage for sure
        overflow, underflow, absmax = int(np.count_nonzero(np.isinf(half))), 0, None
    else:
        finite = np.isfinite(original)
        overflow = int(np.count_nonzero(np.isinf(half) & finite))
        underflow = int(np.count_nonzero((half == 0) & (original != 0)))
        if _read_only_by_quantizers(q_index, name):
            underflow = 0  # a value below 6e-8 rounds to 0 in INT8 as well: FP16 takes nothing INT8 keeps
        absmax = float(np.abs(original[finite]).max()) if finite.any() else None
    if not overflow and not underflow:
        return None
    consumers = q_index.consumers.get(name, [])
    return {"tensor": name, "kind": "constant", "node": q_index.name_of(consumers[0]) if consumers else "",
            "op_type": consumers[0].op_type if consumers else "", "consumers": _consumers(q_index, name),
            "samples": None, "values": int(half.size), "fp32_absmax": absmax, "overflow": overflow,
            "underflow": underflow, "qdq_absmax": float(np.abs(half).max()) if half.size else None}


def _read_only_by_quantizers(q_index: GraphIndex, name: str) -> bool:
    readers = q_index.consumers.get(name, [])
    return bool(readers) and all(node.op_type == "QuantizeLinear" for node in readers)


def _consumers(q_index: GraphIndex, name: str) -> str:
    """The compute nodes reading *name*, looking through Cast/Q/DQ and data movement (what a damaged value feeds)."""
    found, seen, stack = set(), set(), [name]
    while stack:
        tensor = stack.pop()
        seen.add(tensor)
        for node in q_index.consumers.get(tensor, ()):
            if node.op_type in PASS_THROUGH | QDQ_OPS and node.input and node.input[0] == tensor:
                stack.extend(out for out in node.output if out and out not in seen)
            else:
                found.add(q_index.name_of(node))
    ordered = sorted(found)
    return ";".join(ordered[:CONSUMERS_LISTED]) + (";…" if len(ordered) > CONSUMERS_LISTED else "")


def write_fp16_check(writer: BundleWriter, manifest: dict[str, Any], check: Fp16Check | None,
                     fp32_outputs: list[Feed], class_outputs: set[str]) -> None:
    """The control stage, its comparison with ort_fp32 (purpose `other`), the table and the summary."""
    if check is None:
        return
    control = check.control
    status = "failed" if control.error else "ok"
    # Stored like the stages it controls (--store-outputs): no more samples than ort_fp32 kept in the bundle.
    fp32_entry = next((e for e in manifest["stages"] if e["id"] == "ort_fp32"), {})
    stored = int(fp32_entry.get("details", {}).get("outputs_stored", len(control.outputs)) or 0)
    details = {**control.details, "control_of": "ort_qdq", "float_part": "fp32",
               "outputs_stored": min(stored, len(control.outputs)) if status == "ok" else 0}
    manifest["stages"].append(write_stage(writer, CONTROL_STAGE, status, control.outputs[:stored] if status == "ok" else None,
                                          control.error, log="\n".join(control.log) + "\n", seconds=control.seconds,
                                          details=details))
    if status == "ok" and fp32_outputs:
        entry = write_comparison(writer, "ort_fp32", CONTROL_STAGE, "other", fp32_outputs, control.outputs, class_outputs)
        entry["control"] = "fp32_float"
        manifest["comparisons"].append(entry)
    manifest["artifacts"]["fp16_check"] = writer.add_json(ARTIFACT_PATHS["fp16_check"], check.summary)
    manifest["artifacts"]["fp16_ranges"] = writer.add_table(ARTIFACT_PATHS["fp16_ranges"], "fp16_ranges", check.rows)
