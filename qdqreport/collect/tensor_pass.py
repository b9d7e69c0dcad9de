"""The `tensors` table of the quantization comparison: errors of the sensitive nodes' output tensors, and each node's
own error (recomputed from FP32 inputs: collect/sensitive_local.py), from a separate pass bounded to the first
TENSOR_SAMPLES evaluation samples.

The stage sessions (ort_fp32, ort_qdq) carry the graph outputs only, as deployed: marking
intermediate tensors as outputs keeps ONNX Runtime from fusing across them and copies every
marked tensor out on every run (2.5x the inference of a YOLO-class detector, issue 12). So the
marked tensors get their own pair of sessions, run on a few samples; the rows say how many
(`samples`). `collect --per-layer` measures every aligned tensor on every sample (layers table).

One session at a time: the FP32 one runs the samples and its marked tensors are kept (copied out of its
memory arena), then it is released and the QDQ one runs them, each sample folded at once (issue 12: the
two sessions together, each with its arena, were the default collect's peak on U^2-Net-p).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from qdqreport.analysis.metrics import Accumulator
from qdqreport.collect.align import GraphPair
from qdqreport.collect.models import with_extra_outputs
from qdqreport.collect.ort_stage import new_session
from qdqreport.collect.sensitive_local import LocalErrors, SensitiveLocal, sensitive_local
from qdqreport.progress import Progress

TENSOR_SAMPLES = 8  # samples of the bounded pass; the sensitive-node rule reads a cosine, not a distribution

Feed = dict[str, np.ndarray]


@dataclass
class TensorPass:
    rows: list[dict[str, Any]] = field(default_factory=list)
    samples: int = 0
    error: str | None = None  # why the pass gave no rows (a session ORT could not build or run)

    def details(self) -> dict[str, Any]:
        """What the ort_qdq stage details record about this pass."""
        return {"tensor_pass": {"samples": self.samples, "tensors": len(self.rows), "error": self.error}}


def run_tensor_pass(fp32_proto: Any, qdq_proto: Any, marked: list[dict[str, Any]], samples: Sequence[Feed],
                    provider: str, progress: Progress, limit: int = TENSOR_SAMPLES,
                    graphs: GraphPair | None = None) -> TensorPass:
    """Errors of the *marked* tensors (precision-summary `sensitive` entries) on the first *limit* samples; with
    *graphs* (the two models' shared indices and alignment), each node's local error too (collect/sensitive_local.py)."""
    if not marked or not samples:
        return TensorPass()
    tensors = [m["tensor"] for m in marked]
    used = list(samples[:limit])
    announce_tensor_pass(progress, marked, samples, limit)
    accumulators = {name: (Accumulator(), [0.0]) for name in tensors}
    local = _local_graph(graphs, tensors)
    fp32_tensors = list(dict.fromkeys(tensors + list(local.fed if local else ())))
    own = LocalErrors(local, provider)
    try:
        fp32_outs = _marked_outputs(new_session(with_extra_outputs(fp32_proto, fp32_tensors), provider), fp32_tensors,
                                    tensors, used, own)
        qdq = new_session(with_extra_outputs(qdq_proto, tensors), provider)
        for fp32_out, feed in zip(fp32_outs, used):
            accumulate_tensors(accumulators, fp32_out, dict(zip(tensors, qdq.run(tensors, feed))))
    except Exception as exc:  # the stages ran without these tensors; losing the table must not lose the bundle
        text = str(exc).strip()
        return TensorPass(error=f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}")
    return TensorPass(tensor_rows(marked, accumulators, len(used), own.result()), len(used))


def _local_graph(graphs: GraphPair | None, tensors: list[str]) -> SensitiveLocal | None:
    """The flagged nodes' local graph, None without *graphs* or when the pair cannot be aligned (no local error then:
    the accumulated errors still stand)."""
    if graphs is None:
        return None
    try:
        return sensitive_local(graphs, tensors)
    except Exception:  # an alignment that raises here raises in the per-layer pass too, which says why
        return None


def announce_tensor_pass(progress: Progress, marked: list[dict[str, Any]], samples: Sequence[Feed],
                         limit: int = TENSOR_SAMPLES) -> None:
    """The progress line run_tensor_pass says as it starts (the collect says it itself where the pass ran early, in
    a worker thread beside the stages: collect/pipeline.py)."""
    if marked and samples:
        progress.say(f"sensitive-node tensors: {len(marked)} tensor(s) on the first {min(limit, len(samples))} sample(s)")


def _marked_outputs(session: Any, marked: list[str], kept: list[str], used: list[Feed],
                    own: LocalErrors) -> list[dict[str, np.ndarray]]:
    """*session*'s *kept* tensors on each sample, copied, after *own* has folded the sample's local error from all
    its *marked* ones (only one sample's local feed held at a time). Copied: ONNX Runtime's output arrays hold its
    memory arena (a session's activations, ~0.5 GB on a 320x320 U^2-Net-p) until the last of them is gone, so the
    copies let the FP32 session's memory go before the QDQ session is built (issue 12: both sessions at once were the
    collect's peak). The session is released when this returns: the caller keeps no reference to it."""
    kept_values = []
    for feed in used:
        values = dict(zip(marked, session.run(marked, feed)))
        own.add(feed, values)
        kept_values.append({name: np.array(values[name]) for name in kept})
        del values
    return kept_values


def accumulate_tensors(accumulators: dict[str, tuple[Accumulator, list[float]]], fp32_out: dict, qdq_out: dict) -> None:
    """Fold one sample's marked tensors into the accumulators (float64, finite positions only)."""
    for name, (acc, absmax) in accumulators.items():
        ref, cand = np.asarray(fp32_out[name], np.float64), np.asarray(qdq_out[name], np.float64)
        if ref.shape != cand.shape:
            continue  # a reshaped counterpart cannot be compared element-wise
        finite = np.isfinite(ref) & np.isfinite(cand)
        acc.add(ref[finite], cand[finite])
        if finite.any():
            absmax[0] = max(absmax[0], float(np.abs(ref[finite]).max()))


def tensor_rows(marked: list[dict[str, Any]], accumulators: dict, samples: int,
                own: dict[str, Accumulator] | None = None) -> list[dict[str, Any]]:
    """One row a sensitive node: its output's errors, and (optional columns, session 35) the activation it reads and
    its own error (*own*: local errors by tensor, collect/sensitive_local.py)."""
    rows = []
    for entry in marked:
        acc, absmax = accumulators[entry["tensor"]]
        row = {"tensor": entry["tensor"], "node": entry["node"], "op_type": entry["op_type"], "samples": samples,
               "cosine": acc.cosine(), "sqnr_db": acc.sqnr_db(), "max_abs": acc.max_abs, "rel_l2": acc.rel_l2(),
               "ref_absmax": absmax[0]}
        local = (own or {}).get(entry["tensor"])
        if local is not None:
            row.update(input_tensor=entry.get("input") or "", local_cosine=local.cosine(), local_sqnr_db=local.sqnr_db())
        rows.append(row)
    return rows
