"""The default collect's faster paths give what the slower ones gave (issue 12, docs/BENCHMARKS.md 2026-11-24 19:59)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from qdqreport.collect.inputs import load_inputs
from qdqreport.collect.models import load_model, session_source
from qdqreport.collect.ort_stage import INFERENCE, open_stage
from qdqreport.collect.output_store import NpzStream, OutputStore


def test_stage_outputs_are_the_runners_and_skip_its_torch_check(demo: Path, monkeypatch) -> None:
    import polygraphy.util.array as polygraphy_array

    model = load_model(demo / "cls_int8_x255.onnx", "--qdq")
    feeds = load_inputs(str(demo / "eval.npz"), model.inputs, "--inputs", limit=3).samples
    stage = open_stage("ort_qdq", session_source(model.proto), model.outputs, "cpu")
    assert stage.details["runner"] == "polygraphy.OnnxrtRunner" and stage.details["inference"] == INFERENCE
    expected = [stage.runner.infer(feed, check_inputs=False) for feed in feeds]  # Polygraphy's own call

    def probed(_):
        raise AssertionError("the stage asked Polygraphy whether a NumPy feed is a torch tensor")

    monkeypatch.setattr(polygraphy_array, "is_torch", probed)
    got = [stage.infer(feed, index) for index, feed in enumerate(feeds)]
    for want, have in zip(expected, got):
        assert list(have) == list(want)
        for name in want:
            assert have[name].dtype == want[name].dtype and np.array_equal(have[name], want[name])
    stage.close()


def test_streamed_members_are_the_bytes_write_array_writes(tmp_path: Path) -> None:
    arrays = {"000000/a": np.arange(12, dtype=np.float32).reshape(3, 4), "000000/b": np.array(7, np.int64),
              "000001/a": np.zeros((3, 4), np.float32), "000001/c": np.asfortranarray(np.ones((2, 3))),
              "000001/d": np.arange(6, dtype=">f4")[::2], "000002/e": np.zeros((0, 5), np.float16),
              "000002/f": np.array([True, False])}
    stream = NpzStream(tmp_path / "streamed.npz")
    for key, array in arrays.items():
        stream.add(key, array)
    stream.close()
    with zipfile.ZipFile(tmp_path / "reference.npz", "w", allowZip64=True) as reference:
        for key, array in arrays.items():
            with reference.open(f"{key}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    assert (tmp_path / "streamed.npz").read_bytes() == (tmp_path / "reference.npz").read_bytes()


def test_store_reads_back_what_np_load_reads(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "bundle.npz", 2, tmp_path / "scratch.npz")
    rng = np.random.default_rng(0)
    samples = [{"x": rng.standard_normal((1, 4)).astype(np.float32), "y": np.array(i), "z": np.zeros((0, 3))}
               for i in range(5)]
    for sample in samples:
        store.append(sample)
    store.finish()
    for index, sample in enumerate(samples):
        where = tmp_path / ("bundle.npz" if index < 2 else "scratch.npz")
        with np.load(where) as loaded:
            for name in sample:
                want, have = loaded[f"{index:06d}/{name}"], store[index][name]
                assert have.dtype == want.dtype and have.shape == want.shape and np.array_equal(have, want)
    first = store[0]["x"]
    first[...] = 0  # a fresh copy on every read, as np.load gives
    assert np.array_equal(store[0]["x"], samples[0]["x"])
    store.close()

