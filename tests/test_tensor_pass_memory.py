"""Issue 12: the sensitive-node tensor pass and the ORT stages keep no session's memory arena beyond its use.

ONNX Runtime's output arrays hold the memory arena of the session that made them (their base is a capsule over its
OrtValue) until the last of them is gone: a kept output kept a closed stage's arena (~0.5 GB on U^2-Net-p), and the
tensor pass opened its FP32 and QDQ sessions together. On U^2-Net-p (default collect, --calib, N = 8) the peak went
from 2.00 to 1.10 GB with identical bundles (docs/BENCHMARKS.md)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import onnx

import qdqreport.collect.tensor_pass as tensor_pass
from qdqreport.collect.models import node_output_names, with_extra_outputs
from qdqreport.collect.ort_stage import new_session, open_stage
from qdqreport.progress import Progress


def _feeds(demo: Path, count: int) -> tuple[str, list[dict[str, np.ndarray]]]:
    proto = onnx.load(demo / "cls_fp32.onnx")
    name = proto.graph.input[0].name
    x = np.load(demo / "eval.npz")
    x = x[x.files[0]]
    return name, [{name: x[i:i + 1].astype(np.float32)} for i in range(count)]


def test_tensor_pass_has_one_session_alive_at_a_time_and_the_same_rows(demo: Path, monkeypatch) -> None:
    fp32, qdq = onnx.load(demo / "cls_fp32.onnx"), onnx.load(demo / "cls_int8_x255.onnx")
    graph_outputs = {o.name for o in fp32.graph.output}
    tensors = sorted((node_output_names(fp32) & node_output_names(qdq)) - graph_outputs)[:3]
    assert tensors
    marked = [{"tensor": t, "node": t, "op_type": "Conv"} for t in tensors]
    _, feeds = _feeds(demo, 4)
    alive: list[weakref.ref] = []
    overlaps: list[int] = []

    def tracked(model, provider, **kw):
        gc.collect()
        overlaps.append(sum(ref() is not None for ref in alive))
        session = new_session(model, provider, **kw)
        alive.append(weakref.ref(session))
        return session

    monkeypatch.setattr(tensor_pass, "new_session", tracked)
    result = tensor_pass.run_tensor_pass(fp32, qdq, marked, feeds, "cpu", Progress(quiet=True))
    assert result.error is None and len(result.rows) == len(tensors)
    assert overlaps == [0, 0]  # the FP32 session was gone before the QDQ one was built

    # the rows are those of the two sessions run side by side, sample by sample (the pass before issue 12's change)
    accumulators = {name: (tensor_pass.Accumulator(), [0.0]) for name in tensors}
    ref_s = new_session(with_extra_outputs(fp32, tensors), "cpu")
    cand_s = new_session(with_extra_outputs(qdq, tensors), "cpu")
    for feed in feeds:
        tensor_pass.accumulate_tensors(accumulators, dict(zip(tensors, ref_s.run(tensors, feed))),
                                       dict(zip(tensors, cand_s.run(tensors, feed))))
    assert result.rows == tensor_pass.tensor_rows(marked, accumulators, len(feeds))


def test_stage_outputs_do_not_hold_the_sessions_memory(demo: Path) -> None:
    fp32 = onnx.load(demo / "cls_fp32.onnx")
    _, feeds = _feeds(demo, 1)
    stage = open_stage("ort_fp32", fp32.SerializeToString(), tuple(o.name for o in fp32.graph.output), "cpu")
    out = stage.infer(feeds[0], 0)
    assert out
    # an array over ONNX Runtime's own buffer has a capsule as its base, and keeps the session's arena alive
    assert all(value.base is None for value in out.values())
