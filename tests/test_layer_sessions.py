"""The per-layer pass's sessions run without ONNX Runtime's memory pattern (collect/layerwise.PASS_SESSION): the
pattern's block, laid out at a session's second run, stayed in the arena beside the first run's chunks (the synthetic
102 MB model's per-layer collect: 0.61 -> 0.54 GB, docs/BENCHMARKS.md). Where the tensors live changes, not what the
kernels compute: the rows are the same, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from qdqreport.collect import layerwise
from qdqreport.collect.layerwise import LayerCollector

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"


def same_rows(rows: list, before: list) -> None:
    """The per-layer rows of two runs are the same, bit for bit (NaN where NaN), and there are many of them."""
    assert len(rows) == len(before) > 50
    for row, reference in zip(rows, before):
        assert row.keys() == reference.keys()
        for key, value in row.items():
            if isinstance(value, float) and np.isnan(value):
                assert np.isnan(reference[key]), key
            else:
                assert value == reference[key], (row.get("tensor"), key)


def _rows(monkeypatch, pass_session: dict, samples) -> tuple[list, LayerCollector]:
    with monkeypatch.context() as patch:
        patch.setattr(layerwise, "PASS_SESSION", pass_session)
        collector = LayerCollector(onnx.load(str(DEMO / "cls_fp32.onnx")), onnx.load(str(DEMO / "cls_int8.onnx")),
                                   keep_outputs=False)
        collector.add_all(samples)
        result = collector.result()
    return [*result.layer_rows, *result.qnode_rows], collector


def test_pass_sessions_run_without_the_memory_pattern_and_give_the_same_rows(monkeypatch, eval_x) -> None:
    samples = [{"x": eval_x[i:i + 1]} for i in range(4)]
    rows, collector = _rows(monkeypatch, {"mem_pattern": False}, samples)
    assert collector.local is not None
    for session in (collector.fp32, collector.qdq, collector.local):
        options = session.get_session_options()
        assert not options.enable_mem_pattern and options.enable_cpu_mem_arena
    before, old = _rows(monkeypatch, {}, samples)
    assert old.fp32.get_session_options().enable_mem_pattern
    same_rows(rows, before)


def test_range_pass_session_runs_without_the_memory_pattern_and_gives_the_same_rows(monkeypatch, eval_x) -> None:
    """The activation-range pass's one-run session too (the default collect's peak on the 102 MB model)."""
    from qdqreport.collect import activation_ranges
    from qdqreport.collect.align import GraphPair

    samples = [{"x": eval_x[i:i + 1]} for i in range(4)]
    graphs = GraphPair(onnx.load(str(DEMO / "cls_fp32.onnx")), onnx.load(str(DEMO / "cls_int8.onnx")))
    built: list = []
    real = activation_ranges.new_session

    def recorded(*args, **kwargs):
        built.append(real(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(activation_ranges, "new_session", recorded)
    rows = activation_ranges.activation_ranges(graphs, samples, "cpu", 3, samples[:2])
    assert len(built) == 1 and not built[0].get_session_options().enable_mem_pattern
    monkeypatch.setattr(activation_ranges, "PASS_SESSION", {})
    before = activation_ranges.activation_ranges(graphs, samples, "cpu", 3, samples[:2])
    assert built[1].get_session_options().enable_mem_pattern
    rows.pop("seconds", None), before.pop("seconds", None)
    assert repr(rows) == repr(before) and len(rows["quantizers"]) > 20
