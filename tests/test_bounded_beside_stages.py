"""Issue 12: the bounded passes (sensitive-node tensors, activation ranges) run in a worker thread beside the stages on
small models (collect/pipeline._BoundedPasses), and the bundle is the one they give in their usual places."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from qdqreport.collect import activation_ranges as ranges_module
from qdqreport.collect import pipeline

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "data" / "models"
sys.path.insert(0, str(ROOT / "benchmarks"))
from compare_bundles import compare  # noqa: E402


def _collect(out: Path, *extra: str) -> int:
    from qdqreport.cli import main

    return main(["collect", "--fp32", str(MODELS / "l2net_fp32.onnx"), "--qdq", str(MODELS / "l2net_modelopt_int8.onnx"),
                 "--inputs", str(ROOT / "qdqreport" / "demo" / "eval.npz"), "--max-samples", "3", "-o", str(out),
                 "--quiet", *extra])


def _threads_of(monkeypatch) -> dict[str, set[str]]:
    """The threads each bounded pass ran in."""
    seen: dict[str, set[str]] = {"tensors": set(), "ranges": set()}
    run_tensor_pass, activation_ranges = pipeline.run_tensor_pass, ranges_module.activation_ranges

    def tensors(*args, **kwargs):
        seen["tensors"].add(threading.current_thread().name)
        return run_tensor_pass(*args, **kwargs)

    def ranges(*args, **kwargs):
        seen["ranges"].add(threading.current_thread().name)
        return activation_ranges(*args, **kwargs)

    monkeypatch.setattr(pipeline, "run_tensor_pass", tensors)
    monkeypatch.setattr(ranges_module, "activation_ranges", ranges)
    return seen


def test_beside_the_stages_the_bundle_is_the_one_of_the_passes_in_place(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "intra_op_threads", lambda: 2)  # a one-core runner would not overlap
    seen = _threads_of(monkeypatch)
    assert _collect(tmp_path / "beside") == 0
    assert seen["tensors"] and seen["ranges"]
    assert all(name.startswith("qdqreport-bounded") for name in seen["tensors"] | seen["ranges"])

    seen["tensors"].clear()
    seen["ranges"].clear()
    monkeypatch.setattr(pipeline, "BESIDE_MODEL_BYTES", -1)  # too large: the passes run in their places
    assert _collect(tmp_path / "in_place") == 0
    assert seen["tensors"] == seen["ranges"] == {threading.current_thread().name}
    assert compare(tmp_path / "in_place", tmp_path / "beside") == []


def test_large_marked_tensors_keep_the_passes_in_place(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "intra_op_threads", lambda: 2)
    monkeypatch.setattr(pipeline, "BESIDE_TENSOR_BYTES", 0)
    seen = _threads_of(monkeypatch)
    assert _collect(tmp_path / "b") == 0
    assert seen["ranges"] == {threading.current_thread().name}


@pytest.mark.parametrize("beside", [True, False])
def test_a_range_pass_that_raises_fails_the_collect_either_way(tmp_path: Path, monkeypatch, capsys,
                                                               beside: bool) -> None:
    monkeypatch.setattr(pipeline, "intra_op_threads", lambda: 2)
    if not beside:
        monkeypatch.setattr(pipeline, "BESIDE_MODEL_BYTES", -1)

    def broken(*args, **kwargs):
        raise RuntimeError("range pass broke")

    monkeypatch.setattr(ranges_module, "activation_ranges", broken)
    assert _collect(tmp_path / "b") == 3  # the CLI's internal error, as before
    assert "RuntimeError: range pass broke" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_a_small_qdq_models_session_is_built_while_the_fp32_stage_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "intra_op_threads", lambda: 2)
    built: dict[str, str] = {}
    open_stage = pipeline.open_stage

    def recording(stage_id, *args, **kwargs):
        built[stage_id] = threading.current_thread().name
        return open_stage(stage_id, *args, **kwargs)

    monkeypatch.setattr(pipeline, "open_stage", recording)
    assert _collect(tmp_path / "beside") == 0
    assert built["ort_qdq"].startswith("qdqreport-session") and built["ort_fp32"] == threading.current_thread().name

    built.clear()
    monkeypatch.setattr(pipeline, "BESIDE_MODEL_BYTES", -1)
    assert _collect(tmp_path / "in_place") == 0
    assert set(built.values()) == {threading.current_thread().name}
    assert compare(tmp_path / "in_place", tmp_path / "beside") == []


def test_sessions_built_beside_the_stages_run_in_turn_with_them() -> None:
    import numpy as np
    import onnx

    from qdqreport.collect import ort_stage

    proto = onnx.load(str(MODELS / "l2net_fp32.onnx"))
    plain = ort_stage.new_session(proto.SerializeToString(), "cpu")
    with ort_stage.beside_stages():
        in_turn = ort_stage.new_session(proto.SerializeToString(), "cpu")
    assert isinstance(in_turn, ort_stage._InTurn) and not isinstance(plain, ort_stage._InTurn)
    assert ort_stage.new_session(proto.SerializeToString(), "cpu").__class__ is plain.__class__  # the flag is off again
    inputs = in_turn.get_inputs()[0]
    feed = {inputs.name: np.random.default_rng(0).standard_normal(
        [d if isinstance(d, int) else 1 for d in inputs.shape]).astype(np.float32)}
    with ort_stage.RUNS:  # a stage's run in progress: the other thread's run waits for it
        waiter = threading.Thread(target=in_turn.run, args=(None, feed))
        waiter.start()
        waiter.join(0.2)
        assert waiter.is_alive()
    waiter.join()
    assert all(np.array_equal(a, b) for a, b in zip(plain.run(None, feed), in_turn.run(None, feed)))


def test_a_worker_sessions_capture_counts_its_own_warnings_and_passes_the_rest_on(capsys) -> None:
    """While a worker thread builds a session, descriptor 2 is captured for the whole process: a stage's run-time
    warnings (main thread) and progress lines written meanwhile are passed on, not counted as the session's."""
    from qdqreport.collect import ort_stage

    own = "\x1b[0;93m2026-11-27 16:00:11.5 [W:onnxruntime:qdqreport-beside, graph.cc:128 MergeShapeInfo] merging 'y'\x1b[m"
    stage = "2026-11-27 16:00:11.5 [W:onnxruntime:, execution_frame.cc:870 VerifyOutputSizes] Expected shape of 'y'"
    saved = dict(ort_stage.ORT_WARNINGS)
    ort_stage.ORT_WARNINGS.clear()
    try:
        ort_stage._sort_out("\n".join([own, stage, "[qdqreport 0.3s] ort_fp32 samples: 13/128"]), ort_stage.BESIDE_LOGID)
        assert ort_stage.ORT_WARNINGS == {"merging …": 1}
        assert capsys.readouterr().err.splitlines() == [stage, "[qdqreport 0.3s] ort_fp32 samples: 13/128"]
        ort_stage.ORT_WARNINGS.clear()
        ort_stage._sort_out("\n".join([own, stage]))  # a main-thread capture: the worker's run-time line is passed on
        assert ort_stage.ORT_WARNINGS == {"Expected shape of …": 1}
        assert capsys.readouterr().err.splitlines() == [own]
    finally:
        ort_stage.ORT_WARNINGS.clear()
        ort_stage.ORT_WARNINGS.update(saved)
