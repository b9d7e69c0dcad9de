"""The stepped per-layer pass (collect/stepwise.py): a model whose aligned tensors pass STEPPED_ABOVE runs its marked
models in steps of CHUNK_BYTES, so no ONNX Runtime run of the pass returns more than a step's tensors and the values
live across its cut; the rows are the ones the one-run pass gives. On the demo classifier (a real model, 232 aligned
tensors, 12.6 MB a sample) with the thresholds lowered to 1 MB; U^2-Net-p (577 MB a sample) is measured in
docs/BENCHMARKS.md. Before the stepped pass, each run returned every aligned tensor (12.6 MB)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from qdqreport.collect import layerwise
from ort_runs import count_returned_bytes

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"
BUDGET = 1 << 20


def _samples(count: int) -> list[dict[str, np.ndarray]]:
    with np.load(DEMO / "eval.npz") as data:
        return [{"x": data["x"][i:i + 1]} for i in range(count)]


def _rows(result) -> str:
    return json.dumps([result.layer_rows, result.qnode_rows, {k: v for k, v in result.summary.items() if k != "seconds"},
                       [{k: v.tolist() for k, v in o.items()} for o in result.fp32_outputs]], sort_keys=True, default=str)


def test_stepped_pass_bounds_each_run_and_keeps_the_rows(monkeypatch) -> None:
    fp32, qdq = onnx.load(DEMO / "cls_fp32.onnx"), onnx.load(DEMO / "cls_int8_x255.onnx")
    samples = _samples(3)
    one_run = layerwise.LayerCollector(fp32, qdq)
    one_run.add_all(samples)
    returned = count_returned_bytes(monkeypatch)
    monkeypatch.setattr(layerwise, "STEPPED_ABOVE", BUDGET, raising=False)
    monkeypatch.setattr(layerwise, "CHUNK_BYTES", BUDGET, raising=False)
    stepped = layerwise.LayerCollector(fp32, qdq)
    stepped.add_all(samples)
    # A step returns its chunk (at most the budget, by shape inference) and the values later steps read
    assert max(returned) <= 2 * BUDGET, f"{max(returned) / 2 ** 20:.1f} MB returned by one run"
    assert len(returned) > 3 * 3 * 2  # several steps of each model, on every sample
    assert _rows(stepped.result()) == _rows(one_run.result())


@pytest.mark.parametrize("budget", [1, 1000, 10 ** 6])
def test_chunk_plan_keeps_each_chunk_under_the_budget(budget: int) -> None:
    from qdqreport.collect.stepwise import plan_chunks

    rng = np.random.default_rng(32)
    sizes = [int(s) for s in rng.integers(1, 5000, 300)] + [None, 7]
    chunks = plan_chunks(sizes, budget)
    if sum(s or 4999 for s in sizes) <= budget:
        assert chunks is None
        return
    assert [i for chunk in chunks for i in chunk] == list(range(len(sizes)))  # contiguous, in order, each once
    largest = max(s for s in sizes if s is not None)
    for chunk in chunks:
        total = sum(largest if sizes[i] is None else sizes[i] for i in chunk)
        assert total <= budget or len(chunk) == 1
