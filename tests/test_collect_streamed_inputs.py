"""Evaluation inputs read from the file sample by sample (issue 12: memory flat in N) give the very same
samples, and the very same bundle, as the inputs loaded whole (the code before, `npfile.read_arrays`)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from qdqreport.cli import main
from qdqreport.collect import inputs
from qdqreport.collect.inputs import Samples, load_inputs
from qdqreport.collect.models import TensorSpec
from qdqreport.collect.npfile import read_arrays
from qdqreport.collect.npstream import StoredArray, open_arrays
from qdqreport.errors import InputError


def _whole():
    """The path before streaming: every array read into memory by NumPy."""
    return mock.patch.object(inputs, "open_arrays", read_arrays)


def _same_feeds(a, b) -> None:
    assert len(a) == len(b)
    for one, two in zip(a, b):
        assert list(one) == list(two)
        for name in one:
            x, y = np.asarray(one[name]), np.asarray(two[name])
            assert type(one[name]) is type(two[name]) and x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("in_memory", [True, False])
@pytest.mark.parametrize("compressed", [False, True])
def test_samples_equal_the_whole_load_on_every_layout(tmp_path: Path, compressed: bool, in_memory: bool,
                                                      monkeypatch) -> None:
    """Read from the file sample by sample, or (small inputs, IN_MEMORY_BYTES) read whole once and cut in memory."""
    if not in_memory:
        monkeypatch.setattr(inputs, "IN_MEMORY_BYTES", 0)
    rng = np.random.default_rng(3)
    arrays = {"image": rng.standard_normal((6, 3, 4, 5)).astype(np.float32),  # batch axis 0, C order
              "state": np.asfortranarray(rng.standard_normal((2, 6, 8)).astype(np.float32)),  # axis 1, Fortran order
              "ids": rng.integers(0, 9, (12, 7)),  # fixed batch 2: 6 samples of 2 rows
              "sr": np.full(6, 16000, np.int64),  # a scalar, one per sample on a new axis 0
              "gain": np.array(0.5, np.float32)}  # a scalar shared by every sample
    specs = [TensorSpec("image", ("n", 3, 4, 5), np.dtype(np.float32)), TensorSpec("state", (2, "n", 8), np.dtype(np.float32)),
             TensorSpec("ids", (2, 7), np.dtype(np.int64)), TensorSpec("sr", (), np.dtype(np.int64)),
             TensorSpec("gain", (), np.dtype(np.float32))]
    axes = {"state": 1, "sr": None, "gain": None}
    path = tmp_path / "x.npz"
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    streamed = load_inputs(str(path), specs, "--inputs", axes=axes)
    with _whole():
        whole = load_inputs(str(path), specs, "--inputs", axes=axes)
    assert isinstance(streamed.samples, Samples) and streamed.samples.in_memory() is in_memory
    _same_feeds(streamed.samples, whole.samples)
    _same_feeds(streamed.samples[2:5], whole.samples[2:5])
    _same_feeds([streamed.samples[-1]], [whole.samples[-1]])
    assert streamed.manifest_entry() == whole.manifest_entry()
    assert load_inputs(str(path), specs, "--inputs", limit=4, axes=axes).manifest_entry()["samples"] == 4
    with pytest.raises(IndexError):
        streamed.samples[6]  # noqa: B018


def test_small_inputs_are_read_whole_and_a_bad_value_is_still_named_by_its_sample(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    """Inputs of at most IN_MEMORY_BYTES are read once and cut in memory, their values checked in one pass; a NaN is
    named by its sample, as the per-sample check names it; larger inputs stay on disk."""
    specs = [TensorSpec("x", ("n", 4), np.dtype(np.float32))]
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    np.savez(tmp_path / "x.npz", x=x)
    loaded = load_inputs(str(tmp_path / "x.npz"), specs, "--inputs")
    assert loaded.samples.in_memory() and loaded.samples.all_finite()
    x[7, 2] = np.nan
    np.savez(tmp_path / "nan.npz", x=x)
    for limit in (None, 7):
        if limit is None:
            with pytest.raises(InputError, match="nan.npz sample 7: input 'x' contains 1 NaN/Inf"):
                load_inputs(str(tmp_path / "nan.npz"), specs, "--inputs")
        else:  # the bad sample is past --max-samples: the per-sample check finds nothing
            assert len(load_inputs(str(tmp_path / "nan.npz"), specs, "--inputs", limit=limit).samples) == 7
    monkeypatch.setattr(inputs, "IN_MEMORY_BYTES", x.nbytes - 1)
    assert not load_inputs(str(tmp_path / "x.npz"), specs, "--inputs").samples.in_memory()


def test_members_stay_on_disk_and_a_sample_costs_one_sample(tmp_path: Path) -> None:
    big = np.arange(64 * 256 * 256, dtype=np.float32).reshape(64, 256, 256)  # 16 MB
    np.save(tmp_path / "x.npy", big)
    np.savez(tmp_path / "s.npz", x=big)
    np.savez_compressed(tmp_path / "c.npz", x=big)
    for name in ("x.npy", "s.npz", "c.npz"):
        opened = open_arrays(tmp_path / name, "fix")
        stored = opened if name.endswith(".npy") else opened["x"]
        assert isinstance(stored, StoredArray) and stored.shape == big.shape
        tracemalloc.start()
        for index in range(64):
            np.testing.assert_array_equal(stored.take(0, index, 1), big[index:index + 1])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 8 * big[0].nbytes  # a sample and the check's temporaries, never the 16 MB array


def test_files_numpy_cannot_read_keep_their_one_line_error(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.zeros((4, 3), np.float32))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "a.npy").read_bytes()[:140])
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 not a zip")
    for name in ("cut.npy", "obj.npy", "bad.npz"):
        with pytest.raises(InputError, match=f"{name}: unreadable"):
            open_arrays(tmp_path / name, "re-save it")


def _bundle_files(root: Path) -> dict[str, object]:
    """Every file of a bundle; JSON without wall times, dates, the command line (it names -o) and the inputs path."""
    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in ("seconds", "created_at", "argv", "source")}
        return [clean(v) for v in value] if isinstance(value, list) else value

    def content(file: Path) -> object:
        if file.suffix == ".json":
            return clean(json.loads(file.read_text()))
        if file.suffix == ".npz":  # the arrays, not the zip entries' dates
            with np.load(file) as data:
                return {key: (data[key].dtype.str, data[key].shape, data[key].tobytes()) for key in data.files}
        return file.read_bytes()

    return {str(f.relative_to(root)): content(f) for f in sorted(root.rglob("*")) if f.is_file()}


@pytest.mark.slow
def test_the_bundle_is_the_same_as_with_the_inputs_loaded_whole(demo: Path, tmp_path: Path) -> None:
    """The demo classifier (ModelOpt, FP16 float part: the FP16 check runs too), per-layer pass and
    --save-inputs, from the compressed demo file, an uncompressed copy and an .npy."""
    with np.load(demo / "eval.npz") as data:
        x = data["x"][:10]
    np.savez(tmp_path / "stored.npz", x=x)
    np.save(tmp_path / "x.npy", x)

    def collect(source: Path, out: Path) -> dict[str, object]:
        assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / "cls_int8_x255.onnx"),
                     "--inputs", str(source), "--max-samples", "10", "--save-inputs", "--per-layer",
                     "--whatif-budget", "0", "-o", str(out), "--quiet"]) == 0
        files = _bundle_files(out)
        files["manifest.json"].pop("files")  # type: ignore[union-attr]  # hashes of files with times; each is compared
        files["manifest.json"]["inputs"]["eval"].pop("sha256")  # type: ignore[index]
        files["manifest.json"]["inputs"]["eval"].pop("kind")  # type: ignore[index]
        return files

    with _whole():
        before = collect(demo / "eval.npz", tmp_path / "whole")
    assert any(name.startswith("layers/") for name in before) and "quant/fp16_ranges.csv" in before
    for bound in (inputs.IN_MEMORY_BYTES, 0):  # read whole once (small inputs), then from the file sample by sample
        with mock.patch.object(inputs, "IN_MEMORY_BYTES", bound):
            for source in (demo / "eval.npz", tmp_path / "stored.npz", tmp_path / "x.npy"):
                after = collect(source, tmp_path / f"bundle_{bound}_{source.name}")
                assert sorted(after) == sorted(before)
                for name in before:
                    assert after[name] == before[name], name


def test_a_layout_check_reads_the_first_sample_of_a_file_and_every_feed_of_a_script(tmp_path: Path) -> None:
    """The --qdq layout check (collect/pipeline.py) reads one sample of an .npz: its samples are cut from the same
    arrays, so every one has the first's names, shapes and dtypes; a loader script's feeds are each checked."""
    rng = np.random.default_rng(5)
    path = tmp_path / "x.npz"
    np.savez(path, state=rng.standard_normal((2, 5, 8)).astype(np.float32), sr=np.array(16000, np.int64))
    specs = [TensorSpec("state", (2, "n", 8), np.dtype(np.float32)), TensorSpec("sr", (), np.dtype(np.int64))]
    streamed = load_inputs(str(path), specs, "--inputs", axes={"state": 1, "sr": None})
    assert all(inputs.check_feed(feed, specs, "x") is None for feed in streamed.samples)  # every sample, same layout
    reads = []
    with mock.patch.object(Samples, "__getitem__", lambda self, i: reads.append(i) or {"state": 0}):
        assert [index for index, _ in inputs.layouts(streamed.samples)] == [0]
    assert reads == [0]
    feeds = [{"x": np.zeros(2, np.float32)}, {"x": np.zeros(3, np.float32)}]  # a script may vary its shapes
    assert [index for index, _ in inputs.layouts(feeds)] == [0, 1]
    assert list(inputs.layouts(streamed.samples[:0])) == []
