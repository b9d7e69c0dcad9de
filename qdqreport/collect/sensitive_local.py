"""The sensitive nodes' local error in the default collect: each flagged node recomputed from the FP32 model's values
of what it reads, quantized as in the QDQ graph (its input Q/DQ, its weight Q/DQ), on the tensor pass's samples.

`collect --per-layer` measures this for every aligned tensor (collect/local_model.py, the same graph builder); the
default collect measured only the flagged nodes' accumulated error, which cannot tell a node that adds the error from
one that passes on what arrives at its input. A new user's U2-Net-p without --per-layer: QR002 led with an error on
14 output Convs and Sigmoids at tensor cosine 0.86, while per-layer showed each adding nothing (local cosine 0.9999)
and the error born at one Conv far upstream. Comparing the output's SQNR with the input's is no substitute: the
fusing 1x1 Conv over six side maps adds nothing itself (local cosine 0.99994) yet its SQNR falls from 11.9 to 5.3 dB,
its weights of both signs cancelling the signal and not the errors. So the flagged nodes get their own small local
graph: one more session, run on the same few samples, fed with FP32 values the tensor pass's FP32 session already
computes (their tensors marked there too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from qdqreport.collect.align import GraphPair
from qdqreport.analysis.metrics import Accumulator
from qdqreport.collect.local_model import (LOCAL_SESSION_CONFIG, LocalModel, build_local_model, fed_tensor,
                                          local_input)

Feed = dict[str, np.ndarray]


@dataclass(frozen=True)
class SensitiveLocal:
    model: LocalModel
    to_fp32: dict[str, str]  # a local graph input (QDQ tensor name) -> the FP32 tensor whose values feed it
    fed: tuple[str, ...]  # FP32 tensors the tensor pass's FP32 session must mark for the local graph

    def inputs(self, feed: Feed, fp32: Feed) -> Feed:
        """The local graph's inputs for one sample: graph inputs from *feed*, the rest from the FP32 values."""
        return {name: local_input(self.model, name, self.to_fp32, feed, fp32) for name in self.model.inputs}

    def by_fp32_name(self, names: Sequence[str], values: Sequence[Any]) -> Feed:
        """The local graph's outputs keyed by the FP32 tensor each recomputes."""
        return {self.model.outputs[name]: np.asarray(value) for name, value in zip(names, values)}


def sensitive_local(graphs: GraphPair, tensors: Sequence[str]) -> SensitiveLocal | None:
    """The local graph of the aligned tensors among *tensors* (FP32 names); None when none is aligned."""
    alignment = graphs.alignment
    wanted = {t.qdq_name for t in alignment.tensors if t.name in set(tensors)}
    if not wanted:
        return None
    model = build_local_model(graphs.qdq, alignment, only=wanted)
    to_fp32 = {t.qdq_name: t.name for t in alignment.tensors}
    fed = tuple(dict.fromkeys(to_fp32[fed_tensor(name)] for name in model.inputs if fed_tensor(name) in to_fp32))
    return SensitiveLocal(model, to_fp32, fed)


class LocalErrors:
    """Each recomputed tensor's local error, folded sample by sample as the FP32 values arrive (only one sample's
    feed is held: on U2-Net-p the flagged nodes read full-resolution feature maps, and 8 samples of them held at once
    took the default collect's peak from 1.0 to 1.5 GB). A local graph ONNX Runtime cannot build or run (a pair whose
    FP32 value the QDQ graph cannot take) gives no local error; the accumulated errors still stand."""

    def __init__(self, local: SensitiveLocal | None, provider: str):
        self.local, self.provider, self.session = local, provider, None
        self.names = list(local.model.outputs) if local is not None else []
        self.errors = {tensor: Accumulator() for tensor in local.model.outputs.values()} if local is not None else {}

    def add(self, feed: Feed, fp32: Feed) -> None:
        """One sample: its feed and the FP32 values of the flagged tensors and of local.fed."""
        if self.local is None:
            return
        try:
            if self.session is None:
                from qdqreport.collect.models import session_source
                from qdqreport.collect.ort_stage import new_session

                self.session = new_session(session_source(self.local.model.proto), self.provider, LOCAL_SESSION_CONFIG)
            values = self.session.run(self.names, self.local.inputs(feed, fp32))
        except Exception:  # noqa: BLE001 - the local error is lost, not the pass
            self.local, self.session, self.errors = None, None, {}
            return
        for tensor, value in self.local.by_fp32_name(self.names, values).items():
            ref = np.asarray(fp32[tensor], np.float64)
            if ref.shape == value.shape:
                finite = np.isfinite(ref) & np.isfinite(value)
                self.errors[tensor].add(ref[finite], value.astype(np.float64)[finite])

    def result(self) -> dict[str, Accumulator]:
        return {tensor: acc for tensor, acc in self.errors.items() if acc.count}

