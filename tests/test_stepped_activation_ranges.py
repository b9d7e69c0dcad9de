"""The activation range pass (collect/activation_ranges.py) in steps: a model whose measured tensors (every quantized
tensor of the FP32 model) pass STEPPED_ABOVE a sample runs the marked model in steps of CHUNK_BYTES
(collect/stepwise.py), so no ONNX Runtime run of the pass returns more than a step's tensors and the values live
across its cut; the rows are the ones the one-run pass gives, evaluation and calibration. On the demo classifier (a
real model: one run returns the 6.4 MB of FP32 tensors its ModelOpt QDQ quantizes, a sample) with the thresholds lowered to 1 MB;
U^2-Net-p (391 MB a sample) is measured in docs/BENCHMARKS.md. Before, each run returned every measured tensor."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx

from qdqreport.collect import activation_ranges as ranges
from qdqreport.collect.align import GraphPair
from ort_runs import count_returned_bytes

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"
BUDGET = 1 << 20


def _samples(count: int, offset: int = 0) -> list[dict[str, np.ndarray]]:
    with np.load(DEMO / "eval.npz") as data:
        return [{"x": data["x"][i:i + 1]} for i in range(offset, offset + count)]


def _rows(result: dict) -> str:
    return json.dumps({k: v for k, v in result.items() if k != "seconds"}, sort_keys=True)


def test_stepped_range_pass_bounds_each_run_and_keeps_the_rows(monkeypatch) -> None:
    fp32, qdq = onnx.load(DEMO / "cls_fp32.onnx"), onnx.load(DEMO / "cls_int8_x255.onnx")
    samples, calib = _samples(5), _samples(3, offset=5)
    one_run = ranges.activation_ranges(GraphPair(fp32, qdq), samples, "cpu", 3, calib)
    returned = count_returned_bytes(monkeypatch)
    monkeypatch.setattr(ranges, "STEPPED_ABOVE", BUDGET, raising=False)
    monkeypatch.setattr(ranges, "CHUNK_BYTES", BUDGET, raising=False)
    stepped = ranges.activation_ranges(GraphPair(fp32, qdq), samples, "cpu", 3, calib)
    # A step returns its chunk (at most the budget, by shape inference) and the values later steps read
    assert max(returned) <= 2 * BUDGET, f"{max(returned) / 2 ** 20:.1f} MB returned by one run"
    assert len(returned) > 3 * (3 + 3)  # several steps on each of 3 evaluation and 3 calibration samples
    assert len(stepped["quantizers"]) > 20 and stepped["calib_samples"] == 3
    assert _rows(stepped) == _rows(one_run)


def test_stepped_range_pass_keeps_the_heap_between_steps(monkeypatch) -> None:
    """The step sessions run without ONNX Runtime's arena: trimming the C heap after every step made every step of
    every sample fault in fresh pages (U^2-Net-p: 2.75 M page faults, 6.4 s of system time, docs/BENCHMARKS.md). The
    heap is kept while the steps run (large blocks from the heap, no trim threshold) and trimmed once after the
    evaluation samples and once after the calibration ones; glibc's defaults are set back each time. Rows unchanged."""
    import onnxruntime

    from qdqreport.collect import stepwise

    real = stepwise._libc()
    if real is None:
        import pytest

        pytest.skip("not glibc")
    calls: list[tuple] = []

    class Recorder:
        def mallopt(self, param, value):
            calls.append(("mallopt", param, value))
            return real.mallopt(param, value)

        def malloc_trim(self, pad):
            calls.append(("trim",))
            return real.malloc_trim(pad)

    run = onnxruntime.InferenceSession.run

    def recorded(self, output_names, input_feed, run_options=None):
        calls.append(("run",))
        return run(self, output_names, input_feed, run_options)

    fp32, qdq = onnx.load(DEMO / "cls_fp32.onnx"), onnx.load(DEMO / "cls_int8_x255.onnx")
    samples, calib = _samples(3), _samples(2, offset=3)
    one_run = ranges.activation_ranges(GraphPair(fp32, qdq), samples, "cpu", 3, calib)
    monkeypatch.setattr(stepwise, "_LIBC", Recorder())
    monkeypatch.setattr(onnxruntime.InferenceSession, "run", recorded)
    monkeypatch.setattr(ranges, "STEPPED_ABOVE", BUDGET, raising=False)
    monkeypatch.setattr(ranges, "CHUNK_BYTES", BUDGET, raising=False)
    stepped = ranges.activation_ranges(GraphPair(fp32, qdq), samples, "cpu", 3, calib)
    assert _rows(stepped) == _rows(one_run)
    kept = [("mallopt", stepwise._M_MMAP_MAX, 0), ("mallopt", stepwise._M_TRIM_THRESHOLD, stepwise._KEPT_BYTES)]
    restored = [("mallopt", stepwise._M_MMAP_MAX, stepwise._DEFAULT_MMAP_MAX),
                ("mallopt", stepwise._M_TRIM_THRESHOLD, stepwise._DEFAULT_TRIM_THRESHOLD), ("trim",)]
    first = calls.index(kept[0])
    steps = [c for c in calls if c == ("run",)]
    assert len(steps) > 2 * (3 + 2)  # several steps a sample
    # kept before the first step run of each set, trimmed (once) only after its last
    outside = [c for c in calls[first:] if c != ("run",)]
    assert outside == (kept + restored) * 2, outside
    assert calls.count(("trim",)) == 2
