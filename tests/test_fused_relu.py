"""A Relu that quantize_static removed is compared as the FP32 graph computes it (issue 10: a new user's healthy OriNet,
48 of 48 pages as FP32, got a per-layer report of "9 Q nodes clip more than 1%" (94.9%), "error is born at
/body/body.21/Conv, local cosine 0.0585" and "first diverges at /body/body.0/Conv").

With asymmetric activations (quantize_static's default) ONNX Runtime removes a Relu after a Conv whose output it
quantizes: the Conv then writes its output under the Relu's output name, before any Relu, and the Q node's range,
which starts at zero, clips what the Relu would have. The per-layer pass paired that tensor with FP32's Relu output
by name. Real model (the demo's MobileNetV3 text-direction classifier, 15 Relus), real quantization, a real collect.
"""

from __future__ import annotations

import csv
import types
from pathlib import Path

import numpy as np
import onnx
import pytest

from qdqreport.cli import main
from qdqreport.collect.align import align
from qdqreport.collect.qdq_graph import GraphIndex

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def healthy(tmp_path_factory) -> Path:
    from onnxruntime.quantization import QuantFormat, quantize_static

    folder = tmp_path_factory.mktemp("fused_relu")
    with np.load(DEMO / "calib.npz") as data:
        calib = data["x"][:24]
    with np.load(DEMO / "eval.npz") as data:
        np.savez(folder / "eval.npz", x=data["x"][:16])
    rows = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    quantize_static(str(DEMO / "cls_fp32.onnx"), str(folder / "qdq.onnx"),
                    types.SimpleNamespace(get_next=lambda: next(rows, None)), quant_format=QuantFormat.QDQ,
                    per_channel=True)  # every default: asymmetric UINT8 activations, so the Relus go
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(folder / "qdq.onnx"),
                 "--inputs", str(folder / "eval.npz"), "--per-layer", "--whatif-budget", "0", "-o",
                 str(folder / "bundle"), "--quiet"]) == 0
    return folder


def _table(bundle: Path, kind: str) -> list[dict[str, str]]:
    path = next((bundle / "compare").glob(f"*.{kind}.csv"))
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_removed_relus_and_clips_are_recorded_with_their_bounds(healthy):
    fp32, qdq = onnx.load(str(DEMO / "cls_fp32.onnx")), onnx.load(str(healthy / "qdq.onnx"))
    kept = {n.name for n in qdq.graph.node}
    removed = {n.output[0]: n.op_type for n in fp32.graph.node if n.op_type in ("Relu", "Clip") and n.name not in kept}
    fused = {t.name: t.fused_bounds for t in align(GraphIndex(fp32), GraphIndex(qdq)).tensors if t.fused_bounds}
    assert "Relu" in removed.values() and set(fused) == set(removed)
    assert {fused[name] for name, op in removed.items() if op == "Relu"} == {(0.0, float("inf"))}
    assert all(low == 0.0 and high > 0 for name, (low, high) in fused.items() if removed[name] == "Clip")


def test_a_healthy_cnn_with_removed_relus_shows_no_clipping_or_local_error_there(healthy):
    bundle = healthy / "bundle"
    removed = {t for t in (r["tensor"] for r in _table(bundle, "layers")) if t.endswith("Relu_output_0") or "relu" in t.lower()}
    assert removed
    rows = {r["tensor"]: r for r in _table(bundle, "layers") if r["kind"] == "activation"}
    relu_rows = [rows[t] for t in removed if t in rows]
    assert relu_rows
    # Before: the Conv's values before the Relu against FP32's after it (negative cosine on some, local cosines ~0).
    assert min(float(r["cosine"]) for r in relu_rows) > 0.9
    assert min(float(r["local_cosine"]) for r in relu_rows if r["local_cosine"]) > 0.95
    qnodes = {r["tensor"]: r for r in _table(bundle, "qnodes")}
    assert max(float(qnodes[t]["clipped_share"]) for t in removed if t in qnodes) < 0.01  # was the negatives: ~50%
