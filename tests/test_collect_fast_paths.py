"""The default collect's faster paths give what the slower ones gave (issue 12, docs/BENCHMARKS.md 2026-11-24 19:59)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import onnx

from onnx_files import with_initializers
from qdqreport.collect import qdq_graph
from qdqreport.collect.inputs import load_inputs
from qdqreport.collect.layerwise import float32_outputs
from qdqreport.collect.models import (EXTERNAL_FOLDER_KEY, ExternalModel, load_model, session_config, session_source,
                                      with_extra_outputs)
from qdqreport.collect.ort_stage import INFERENCE, new_session, open_stage
from qdqreport.collect.qdq_graph import GraphIndex
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


@pytest.mark.parametrize("bound, held", [(0, 0), (48, 2), (1 << 20, 3)])
def test_store_reads_back_what_np_load_reads(tmp_path: Path, bound: int, held: int, monkeypatch) -> None:
    """Samples read back from the files, or from the copies held in memory (the first IN_MEMORY_BYTES of plain arrays:
    a sample of 24 bytes, 48 hold two; a big-endian Fortran-ordered array in the fourth ends the holding)."""
    from qdqreport.collect import output_store

    monkeypatch.setattr(output_store, "IN_MEMORY_BYTES", bound)
    store = OutputStore(tmp_path / "bundle.npz", 2, tmp_path / "scratch.npz")
    rng = np.random.default_rng(0)
    samples = [{"x": rng.standard_normal((1, 4)).astype(np.float32), "y": np.array(i), "z": np.zeros((0, 3))}
               for i in range(5)]
    samples[3]["x"] = np.asfortranarray(rng.standard_normal((3, 2))).astype(">f4")
    for sample in samples:
        store.append(sample)
    original = samples[0]["x"].copy()
    samples[0]["x"][...] = 7  # the caller's array changes after append: the store kept its own
    store.finish()
    assert len(store._held) == held
    for index, sample in enumerate(samples):
        where = tmp_path / ("bundle.npz" if index < 2 else "scratch.npz")
        if index == 2 and held == 3:  # the third sample went to the scratch file when the fourth was not held
            with np.load(where) as loaded:
                assert sorted({name[:6] for name in loaded.files}) == ["000002", "000003", "000004"]
        with np.load(where) as loaded:
            assert list(store[index]) == [name[7:] for name in loaded.files if name.startswith(f"{index:06d}/")]
            for name in sample:
                want, have = loaded[f"{index:06d}/{name}"], store[index][name]
                assert have.dtype == want.dtype and have.shape == want.shape and np.array_equal(have, want)
                assert have.flags.c_contiguous == want.flags.c_contiguous
    first = store[0]["x"]
    assert np.array_equal(first, original)
    whole = OutputStore(tmp_path / "all.npz", 2, tmp_path / "never.npz")  # every sample held: no scratch file at all
    for sample in samples[:3]:
        whole.append(sample)
    whole.finish()
    assert not (tmp_path / "never.npz").exists() or held < 3
    if held == 3:
        assert [whole[i]["y"] for i in range(3)] == [0, 1, 2] and np.array_equal(whole[2]["x"], samples[2]["x"])
    whole.close()
    first[...] = 0  # a fresh copy on every read, as np.load gives
    assert np.array_equal(store[0]["x"], original)
    store.close()


def test_the_collect_passes_share_one_index_of_each_model(tmp_path: Path, monkeypatch) -> None:
    """The precision summary, activation ranges, the FP16 check and the per-layer pass read one GraphIndex of each
    model and one alignment (collect/align.GraphPair); each used to build its own (issue 12: 0.6 s a pair on the 102 MB synthetic model)."""
    from qdqreport.cli import main
    from qdqreport.collect import align, qdq_graph

    models = Path(__file__).resolve().parent / "data" / "models"
    built: list[str] = []
    aligned: list[int] = []
    index_init, align_fn = qdq_graph.GraphIndex.__init__, align.align

    def counting_init(self, model):
        built.append(model.graph.name)
        index_init(self, model)

    def counting_align(fp32, qdq):
        aligned.append(1)
        return align_fn(fp32, qdq)

    monkeypatch.setattr(qdq_graph.GraphIndex, "__init__", counting_init)
    monkeypatch.setattr(align, "align", counting_align)
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(models / "l2net_fp32.onnx"), "--qdq", str(models / "l2net_modelopt_int8.onnx"),
                 "--inputs", str(models.parent.parent.parent / "qdqreport" / "demo" / "eval.npz"), "--max-samples", "2",
                 "--per-layer", "--whatif-budget", "0", "-o", str(out), "--quiet"]) == 0
    assert (out / "quant" / "fp16_check.json").is_file() and (out / "quant" / "activation_ranges.json").is_file()
    assert (out / "layers" / "summary.json").is_file()
    # The shared pair, which the precision summary reads too: two in all, one alignment.
    assert len(built) == 2 and len(aligned) == 1


def test_a_shared_index_gives_what_separate_indices_give() -> None:
    import onnx

    from qdqreport.collect.activation_ranges import activation_ranges
    from qdqreport.collect.align import GraphPair, align
    from qdqreport.collect.qdq_graph import GraphIndex

    models = Path(__file__).resolve().parent / "data" / "models"
    fp32, qdq = onnx.load(str(models / "cls_fp32.onnx")), onnx.load(str(models / "cls_modelopt_int8.onnx"))
    pair = GraphPair(fp32, qdq)
    assert pair.alignment is pair.alignment and pair.fp32 is pair.fp32  # built once
    alone = align(GraphIndex(fp32), GraphIndex(qdq))
    assert pair.alignment.tensors == alone.tensors and pair.alignment.unmatched == alone.unmatched
    assert [q.q_node for q in pair.alignment.quantizers] == [q.q_node for q in alone.quantizers]
    feeds = [{"x": np.full((1, 3, 48, 192), v, np.float32)} for v in (-0.5, 0.25, 0.9)]
    first = activation_ranges(pair, feeds, "cpu", 2)
    again = activation_ranges(GraphPair(fp32, qdq), feeds, "cpu", 2)
    assert {k: v for k, v in first.items() if k != "seconds"} == {k: v for k, v in again.items() if k != "seconds"}


def test_per_sample_rows_and_structure_are_what_each_sample_alone_gives() -> None:
    """The input statistics take a sample's mean, std and centred values from the block they fold (issue 12); they are
    the numbers values.mean(), values.std() and lag1_autocorrelation(values) give, bit for bit, in every layout."""
    from qdqreport.analysis.calibration_data import lag1_autocorrelation
    from qdqreport.collect.stats import input_stats

    rng = np.random.default_rng(3)
    fortran = np.asfortranarray(rng.standard_normal((2, 5, 16)).astype(np.float32))
    zeros = np.zeros((1, 3, 4, 4))
    zeros[0, 0] = -0.0
    cases = [([{"x": rng.standard_normal((1, 3, 20, 20)).astype(np.float32) * 50 + 3} for _ in range(4)], {"x": 0}),
             ([{"s": fortran[:, i:i + 1, :]} for i in range(5)], {"s": 1}),  # batched on axis 1, not contiguous
             ([{"s": np.ascontiguousarray(fortran[:, i:i + 1, :])} for i in range(5)], {"s": 1}),
             ([{"a": rng.integers(-9, 9, (1, 700)), "sr": np.array(16000)} for _ in range(3)], {"a": 0, "sr": None}),
             ([{"z": zeros}, {"z": zeros + 1.5}], {"z": 0})]
    for samples, axes in cases:
        entries = input_stats(samples, "x", per_sample=True, batch_axes=axes)["inputs"]
        for name, entry in entries.items():
            axis = axes[name]
            alone = [np.asarray(s[name]).astype(np.float64) if axis is None else
                     np.moveaxis(np.asarray(s[name]).astype(np.float64), axis, 0) for s in samples]
            alone = [a[np.newaxis] if axis is None else a for a in alone]
            assert entry["per_sample"] == [{"min": float(a.min()), "max": float(a.max()), "mean": float(a.mean()),
                                            "std": float(a.std())} for a in alone]
            structure = [v for v in (lag1_autocorrelation(a) for a in alone) if v is not None]
            assert entry["structure"]["samples"] == len(structure)
            if structure:
                assert (entry["structure"]["min"], entry["structure"]["max"]) == (min(structure), max(structure))
                assert entry["structure"]["mean"] == float(np.mean(structure))


def test_held_back_samples_give_the_statistics_of_each_alone(monkeypatch) -> None:
    """Input statistics folded a run of samples at a time (issue 12) are those of each sample folded alone, bit for bit
    (compared as JSON text: signed zeros too): images with channels first and last, audio with its state and `sr`,
    two signals per sample, a constant sample, shape changes midway, a non-contiguous batch axis, an empty sample."""
    import json

    from qdqreport.collect import stats

    rng = np.random.default_rng(5)
    fortran = np.asfortranarray(rng.standard_normal((2, 5, 16)).astype(np.float32))
    zeros = np.zeros((1, 3, 4, 4))
    zeros[0, 0] = -0.0
    audio = [{"input": (rng.standard_normal((1, 576)) * 0.1).astype(np.float32),
              "state": rng.standard_normal((2, 1, 128)).astype(np.float32), "sr": np.array(16000)} for _ in range(150)]
    audio[7]["input"][:] = 0.25
    cases = [([{"x": rng.standard_normal((1, 3, 20, 20)).astype(np.float32) * 50 + 3} for _ in range(9)], {"x": 0}),
             ([{"x": rng.standard_normal((1, 8, 8, 3)).astype(np.float32)} for _ in range(9)], {"x": 0}),
             ([{"s": fortran[:, i:i + 1, :]} for i in range(5)], {"s": 1}),
             ([{"s": np.ascontiguousarray(fortran[:, i:i + 1, :])} for i in range(5)], {"s": 1}),
             ([{"a": rng.integers(-9, 9, (1, 700)), "sr": np.array(16000)} for _ in range(3)], {"a": 0, "sr": None}),
             ([{"z": zeros}, {"z": zeros + 1.5}, {"z": -zeros}, {"z": zeros * 0}], {"z": 0}),
             ([{"z": np.array([[a, b]])} for a, b in ((-0.0, 1.0), (0.0, 2.0), (1.0, -0.0), (0.0, -0.0))], {"z": 0}),
             (audio, {"input": 0, "state": 1, "sr": None}),
             ([{"input": rng.standard_normal((2, 1000)).astype(np.float32)} for _ in range(40)], {"input": 0}),
             ([{"t": rng.standard_normal((1, n)).astype(np.float32)} for n in (5, 5, 5, 7, 7, 5, 5, 300, 300)], {"t": 0}),
             ([{"t": np.zeros((1, 3))}, {"t": np.zeros((1, 0))}, {"t": np.zeros((1, 3))}], {"t": 0})]
    for samples, axes in cases:
        for per_sample in (True, False):
            found = []
            for run in (1, 64):  # each alone; runs of up to 64 (the audio's 150 samples end one midway)
                monkeypatch.setattr(stats, "_RUN_SAMPLES", run)
                found.append(json.dumps(stats.input_stats(samples, "x", per_sample, batch_axes=axes)))
            assert found[0] == found[1], (list(axes), per_sample)


def _with_initializers(source: Path, folder: Path | None = None) -> Path | onnx.ModelProto:
    """The demo model with its Constant-node weights as initializers (as exporters write them); saved with those of
    1 KiB or more in one external data file in *folder* when given, else returned."""
    model = with_initializers(source)
    if folder is None:
        return model
    folder.mkdir()
    onnx.save_model(model, str(folder / source.name), save_as_external_data=True, location="weights.data",
                    size_threshold=1024)
    return folder / source.name


def _marked_the_old_way(proto: onnx.ModelProto, outputs: list[str], nodes=()) -> onnx.ModelProto:
    """What with_extra_outputs and float32_outputs built before marked_source: a modified copy of the whole model."""
    model = onnx.ModelProto()
    model.CopyFrom(proto)
    present = {o.name for o in model.graph.output}
    model.graph.node.extend(nodes)
    for name in outputs:
        if name not in present:
            model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    return model


def test_marked_models_are_the_modified_copies_without_copying_the_weights(demo: Path, tmp_path: Path) -> None:
    """Issue 12, the 102 MB model's RSS: a marked model is the loaded one serialised once with the additions as a
    continuation message (the very model a modified copy gives), or, for a model read from external data, its
    structure alone, whose tensors ONNX Runtime reads from the model's folder (the same outputs)."""
    fp32 = load_model(demo / "cls_fp32.onnx", "--fp32")
    names = [node.output[0] for node in fp32.proto.graph.node if node.op_type in ("Conv", "Relu")][:12]
    names.append(fp32.outputs[0])  # already an output: not added again
    marked = with_extra_outputs(fp32.proto, names)
    assert type(marked) is bytes
    assert onnx.ModelProto.FromString(marked) == _marked_the_old_way(fp32.proto, names)
    qdq = GraphIndex(load_model(demo / "cls_int8_x255.onnx", "--qdq").proto)  # FP16 float part: read through Casts
    half = sorted(n for n, t in qdq.elem_types.items() if t == onnx.TensorProto.FLOAT16 and n in qdq.producer)[:6]
    source, outputs = float32_outputs(qdq, half)
    assert outputs == [n + "__fp32" for n in half]
    casts = [onnx.helper.make_node("Cast", [n], [n + "__fp32"], to=onnx.TensorProto.FLOAT, name=n + "__fp32") for n in half]
    assert onnx.ModelProto.FromString(source) == _marked_the_old_way(qdq.model, outputs, casts)

    external = load_model(_with_initializers(demo / "cls_fp32.onnx", tmp_path / "ext"), "--fp32")
    inline = _with_initializers(demo / "cls_fp32.onnx")
    assert external.external_data
    marked = with_extra_outputs(external.proto, names)
    assert isinstance(marked, ExternalModel) and marked.folder == str(tmp_path / "ext")
    assert len(marked) < len(external.proto.SerializeToString()) / 4  # the structure, not the weights
    assert session_config(marked) == {EXTERNAL_FOLDER_KEY: str(tmp_path / "ext")} and session_config(b"") == {}
    feeds = load_inputs(str(demo / "eval.npz"), external.inputs, "--inputs", limit=2).samples
    new, old = new_session(marked, "cpu"), new_session(_marked_the_old_way(inline, names).SerializeToString(), "cpu")
    assert [o.name for o in new.get_outputs()] == [o.name for o in old.get_outputs()]
    for feed in feeds:
        for have, want in zip(new.run(None, feed), old.run(None, feed)):
            assert have.dtype == want.dtype and np.array_equal(have, want)
    # A loaded model changed in place since (nothing does so) is no longer its file: serialised whole, as before.
    external.proto.graph.output.pop()
    assert type(with_extra_outputs(external.proto, names)) is bytes


def test_shape_inference_reads_no_weight_and_gives_the_same_types(demo: Path, monkeypatch) -> None:
    """GraphIndex infers types on the model with its initializers of INFERENCE_VALUE_BYTES or more as typed graph
    inputs (issue 12: inference copied a 102 MB model's weights four times); the types are those of the whole model,
    here with every initializer left out (threshold 1 byte)."""
    for model in (_with_initializers(demo / "cls_fp32.onnx"), _with_initializers(demo / "cls_int8_x255.onnx"),
                  onnx.load(str(demo / "cls_int8.onnx"))):
        monkeypatch.setattr(qdq_graph, "INFERENCE_VALUE_BYTES", 1)
        light = qdq_graph._without_large_initializers(model)
        assert light is model or not light.graph.initializer
        stripped = GraphIndex(model).elem_types
        monkeypatch.setattr(qdq_graph, "_without_large_initializers", lambda m: m)
        assert stripped == GraphIndex(model).elem_types
        monkeypatch.undo()
    model = _with_initializers(demo / "cls_fp32.onnx")
    assert qdq_graph._without_large_initializers(model) is model  # no initializer of 1 MiB: inferred as it is


def test_spectrum_percentiles_are_numpys_without_importing_numpy_ma() -> None:
    """The spectrum summary's percentiles and median are np.percentile's and np.median's doubles (their linear method),
    computed without them: their np.unique imports numpy.ma, 12-17 ms of a 1-D signal's collect (issue 12)."""
    import subprocess
    import sys

    from qdqreport.analysis.spectrum import PERCENTILES, median_of, percentiles

    rng = np.random.default_rng(0)
    for trial in range(3000):
        count = int(rng.integers(1, 40)) if trial % 10 else int(rng.integers(40, 2000))
        values = [float(v) for v in (rng.random(count) * 0.5 if trial % 3 else np.round(rng.random(count), 2)
                                     if trial % 2 else rng.lognormal(size=count) * 10.0 ** rng.integers(-8, 8))]
        points = PERCENTILES if trial % 4 else tuple(int(p) for p in rng.integers(0, 101, 4))
        assert percentiles(values, points) == [float(v) for v in np.percentile(values, points)]
        assert median_of(values) == float(np.median(values))
    code = ("import sys, numpy as np; from qdqreport.analysis.spectrum import spectrum_summary; "
            "spectrum_summary([(0.1 + i / 100, 0.5) for i in range(20)], 1); print('numpy.ma' in sys.modules)")
    here = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])  # this tree's qdqreport
    assert here.stdout.strip() == "False"


def test_serializable_decides_as_the_tensor_walk_does(monkeypatch) -> None:
    """models._serializable (ByteSize first) says what _tensor_bytes < SERIALIZE_LIMIT says, whatever the limit: int64
    and int32 values as 1-byte varints (8 and 4 counted bytes), floats, raw data, a Constant's tensor attribute."""
    from onnx import TensorProto, helper

    from qdqreport.collect import models

    tensors = [helper.make_tensor("i64", TensorProto.INT64, [300], [1] * 300),
               helper.make_tensor("i32", TensorProto.INT32, [200], [2] * 200),
               helper.make_tensor("f", TensorProto.FLOAT, [100], [0.5] * 100),
               helper.make_tensor("raw", TensorProto.FLOAT, [64], np.ones(64, np.float32).tobytes(), raw=True)]
    constant = helper.make_node("Constant", [], ["c"], value=helper.make_tensor("cv", TensorProto.INT64, [50], [3] * 50))
    graph = helper.make_graph([constant, helper.make_node("Identity", ["c"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [50])], tensors)
    model = helper.make_model(graph)
    counted = models._tensor_bytes(model.graph)
    assert counted > model.ByteSize()  # the varints count more than they take
    for limit in sorted({1, counted - 1, counted, counted + 1, 8 * model.ByteSize() - 1, 8 * model.ByteSize(),
                         8 * model.ByteSize() + 1, 10 ** 9}):
        monkeypatch.setattr(models, "SERIALIZE_LIMIT", limit)
        assert models._serializable(model) == (counted < limit)


def test_an_empty_sample_leaves_the_input_described_by_the_others() -> None:
    """A graph's edge list with 0 rows (a one-atom molecule among a new user's FreeSolv molecules) once marked the input
    empty for good: its statistics vanished from the bundle. The empty sample is left out; the others' moments are
    those of their values alone, and an input empty in every sample is still not described."""
    from qdqreport.collect.stats import input_stats

    rng = np.random.default_rng(7)
    sizes = (6, 0, 8, 0, 3)
    samples = [{"edge_feat": rng.random((n, 4)).astype(np.float32)} for n in sizes]
    entry = input_stats(samples, "loader.py", True, {"edge_feat": None})["inputs"]["edge_feat"]
    values = np.concatenate([s["edge_feat"] for s in samples]).astype(np.float64)
    assert entry["shape"] == [6, 4] and len(entry["per_sample"]) == 3
    assert entry["overall"]["mean"] == pytest.approx(values.mean()) and entry["overall"]["std"] == pytest.approx(values.std())
    empty = [{"edge_feat": np.zeros((0, 4), np.float32)} for _ in range(3)]
    assert input_stats(empty, "loader.py", True, {"edge_feat": None})["inputs"] == {}
