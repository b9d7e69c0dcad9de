"""The `tensors` table of the quantization comparison: errors of the sensitive nodes' output tensors,
from a separate pass bounded to the first TENSOR_SAMPLES evaluation samples.

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
from qdqreport.collect.models import with_extra_outputs
from qdqreport.collect.ort_stage import new_session
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
                    provider: str, progress: Progress, limit: int = TENSOR_SAMPLES) -> TensorPass:
    """Errors of the *marked* tensors (precision-summary `sensitive` entries) on the first *limit* samples."""
    if not marked or not samples:
        return TensorPass()
    tensors = [m["tensor"] for m in marked]
    used = list(samples[:limit])
    announce_tensor_pass(progress, marked, samples, limit)
    accumulators = {name: (Accumulator(), [0.0]) for name in tensors}
    try:
        fp32_outs = _marked_outputs(new_session(with_extra_outputs(fp32_proto, tensors), provider), tensors, used)
        qdq = new_session(with_extra_outputs(qdq_proto, tensors), provider)
        for fp32_out, feed in zip(fp32_outs, used):
            accumulate_tensors(accumulators, fp32_out, dict(zip(tensors, qdq.run(tensors, feed))))
    except Exception as exc:  # the stages ran without these tensors; losing the table must not lose the bundle
        text = str(exc).strip()
        return TensorPass(error=f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}")
    return TensorPass(tensor_rows(marked, accumulators, len(used)), len(used))


def announce_tensor_pass(progress: Progress, marked: list[dict[str, Any]], samples: Sequence[Feed],
                         limit: int = TENSOR_SAMPLES) -> None:
    """The progress line run_tensor_pass says as it starts (the collect says it itself where the pass ran early, in
    a worker thread beside the stages: collect/pipeline.py)."""
    if marked and samples:
        progress.say(f"sensitive-node tensors: {len(marked)} tensor(s) on the first {min(limit, len(samples))} sample(s)")


def _marked_outputs(session: Any, tensors: list[str], used: list[Feed]) -> list[dict[str, np.ndarray]]:
    """*session*'s marked tensors on each sample, copied: ONNX Runtime's output arrays hold its memory arena (a
    session's activations, ~0.5 GB on a 320x320 U^2-Net-p) until the last of them is gone, so the copies let the
    FP32 session's memory go before the QDQ session is built (issue 12: both sessions at once were the collect's
    peak). The session is released when this returns: the caller keeps no reference to it."""
    return [{name: np.array(value) for name, value in zip(tensors, session.run(tensors, feed))} for feed in used]


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


def tensor_rows(marked: list[dict[str, Any]], accumulators: dict, samples: int) -> list[dict[str, Any]]:
    rows = []
    for entry in marked:
        acc, absmax = accumulators[entry["tensor"]]
        rows.append({"tensor": entry["tensor"], "node": entry["node"], "op_type": entry["op_type"], "samples": samples,
                     "cosine": acc.cosine(), "sqnr_db": acc.sqnr_db(), "max_abs": acc.max_abs, "rel_l2": acc.rel_l2(),
                     "ref_absmax": absmax[0]})
    return rows
