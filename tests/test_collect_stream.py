"""Default collect (issue 12): outputs streamed to the bundle, --store-outputs, the bounded tensor pass."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.output_store import OutputStore
from qdqreport.collect.tensor_pass import TENSOR_SAMPLES

OUTPUT = "save_infer_model/scale_0.tmp_1"


def _collect(demo: Path, out: Path, *extra: str, samples: int = 12) -> int:
    return main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / "cls_int8_x255.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--max-samples", str(samples), "--no-fp16-check",
                 "-o", str(out), "--quiet", *extra])


@pytest.mark.slow
def test_first_n_keeps_n_samples_and_compares_all(tmp_path: Path, demo: Path) -> None:
    assert _collect(demo, tmp_path / "all", "--store-outputs", "all") == 0
    assert _collect(demo, tmp_path / "first", "--store-outputs", "first:5") == 0
    every, first = Bundle(tmp_path / "all"), Bundle(tmp_path / "first")
    kept = load_stage_outputs(first, "ort_qdq")
    assert len(kept) == 5 and len(load_stage_outputs(every, "ort_qdq")) == 12
    for a, b in zip(kept, load_stage_outputs(every, "ort_qdq")):
        np.testing.assert_array_equal(a[OUTPUT], b[OUTPUT])
    stage = next(s for s in first.manifest["stages"] if s["id"] == "ort_qdq")
    assert stage["details"]["samples"] == 12 and stage["details"]["outputs_stored"] == 5
    assert stage["details"]["intra_op_num_threads"] >= 1 and stage["details"]["inter_op_num_threads"] == 1
    # The comparison saw every sample, not only the stored ones: the same table as with `all`.
    table = "compare/ort_qdq__vs__ort_fp32.samples.csv"
    assert first.text(table) == every.text(table) and first.text(table).count("\n") == 13


@pytest.mark.slow
def test_none_stores_no_outputs_and_the_report_still_renders(tmp_path: Path, demo: Path) -> None:
    assert _collect(demo, tmp_path / "b", "--store-outputs", "none") == 0
    bundle = Bundle(tmp_path / "b")
    assert not list((tmp_path / "b" / "stages").rglob("outputs.npz"))
    assert all("outputs" not in s["artifacts"] for s in bundle.manifest["stages"])
    (summary,) = Context(bundle).output_summaries(Context(bundle).comparison("quantization").id)
    assert summary.samples == 12 and summary.top1 < 0.9  # the ×255 calibration collapse, measured while streaming
    assert main(["validate", str(tmp_path / "b")]) == 0
    assert main(["report", str(tmp_path / "b"), "-o", str(tmp_path / "r")]) == 0
    rules = {f["id"] for f in json.loads((tmp_path / "r" / "findings.json").read_text())["findings"]}
    assert "QR001" in rules


@pytest.mark.slow
def test_tensor_pass_is_bounded_and_recorded(tmp_path: Path, demo: Path) -> None:
    assert _collect(demo, tmp_path / "b") == 0
    ctx = Context(Bundle(tmp_path / "b"))
    rows = ctx.tensor_rows(ctx.comparison("quantization").id)
    assert rows and {r["samples"] for r in rows} == {TENSOR_SAMPLES}
    assert {r["tensor"] for r in rows} >= {"softmax_0.tmp_0"} and min(r["cosine"] for r in rows) < 0.9
    details = ctx.manifest["stages"][[s["id"] for s in ctx.manifest["stages"]].index("ort_qdq")]["details"]
    assert details["tensor_pass"] == {"samples": TENSOR_SAMPLES, "tensors": len(rows), "error": None}


@pytest.mark.parametrize("value", ["first:", "some", "first:-1"])
def test_bad_store_outputs_is_one_line_exit_2(value: str, tmp_path: Path, demo: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    assert _collect(demo, tmp_path / "b", "--store-outputs", value) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--store-outputs" in err and "first:N" in err
    assert not (tmp_path / "b").exists()


def test_output_store_reads_back_what_it_streamed(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "bundle.npz", 3, tmp_path / "scratch.npz")
    samples = [{"a": np.full((2, 3), i, np.float32), "b": np.arange(i + 1)} for i in range(7)]
    for sample in samples:
        store.append(sample)
    store.finish()
    assert len(store) == 7 and store.stored == 3
    with np.load(tmp_path / "bundle.npz") as kept:
        assert sorted(kept.files) == [f"{i:06d}/{n}" for i in range(3) for n in ("a", "b")]
    for expected, got in zip(samples, store):
        assert list(got) == ["a", "b"]
        np.testing.assert_array_equal(got["a"], expected["a"])
        np.testing.assert_array_equal(got["b"], expected["b"])
    np.testing.assert_array_equal(store[-1]["b"], samples[-1]["b"])
    store.close()


def test_streamed_input_stats_equal_numpy_on_all_samples(eval_x: np.ndarray) -> None:
    from qdqreport.collect.stats import input_stats

    samples = [{"x": eval_x[i:i + 1]} for i in range(len(eval_x))]
    entry = input_stats(samples, "eval.npz", per_sample=True)["inputs"]["x"]
    every = eval_x.astype(np.float64)
    expected = {"min": every.min(), "max": every.max(), "mean": every.mean(), "std": every.std()}
    assert entry["overall"] == pytest.approx({**expected, "absmax": np.abs(every).max()}, rel=1e-12, abs=1e-12)
    for channel in entry["channels"]:
        values = every[:, channel["index"]]
        assert channel["std"] == pytest.approx(values.std(), rel=1e-12) and channel["mean"] == pytest.approx(values.mean())
    assert len(entry["per_sample"]) == len(eval_x) and entry["per_sample"][7]["max"] == pytest.approx(every[7].max())


@pytest.mark.slow
def test_the_default_keeps_at_most_its_bytes_of_outputs_a_stage(tmp_path: Path, demo: Path, monkeypatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # A new user's background remover (seven 320 x 320 maps a sample) wrote 133 MB bundles under the default
    # first:128. The default now keeps what fits in DEFAULT_STORE_BYTES a stage; the demo's outputs are 8 bytes a
    # sample (and MEMBER_BYTES of headers), so the cap is lowered here to bite at 5 samples; an explicit first:N is
    # kept as given.
    from qdqreport.collect import output_store

    monkeypatch.setattr(output_store, "DEFAULT_STORE_BYTES", 5 * (8 + output_store.MEMBER_BYTES) + 7)
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / "cls_int8_x255.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--max-samples", "12", "--no-fp16-check",
                 "-o", str(tmp_path / "capped")]) == 0
    assert "keeping the outputs of the first 5 of 12 samples in the bundle" in capsys.readouterr().err
    capped = Bundle(tmp_path / "capped")
    for stage_id in ("ort_fp32", "ort_qdq"):
        stage = next(s for s in capped.manifest["stages"] if s["id"] == stage_id)
        assert stage["details"]["samples"] == 12 and stage["details"]["outputs_stored"] == 5
        assert len(load_stage_outputs(capped, stage_id)) == 5
    assert _collect(demo, tmp_path / "given", "--store-outputs", "first:9") == 0
    stage = next(s for s in Bundle(tmp_path / "given").manifest["stages"] if s["id"] == "ort_qdq")
    assert stage["details"]["outputs_stored"] == 9


def test_the_byte_cap_counts_the_first_sample_and_keeps_at_least_one(tmp_path: Path) -> None:
    sample = {"map": np.zeros((1, 7, 32, 32), np.float32)}  # 28,672 bytes
    store = OutputStore(tmp_path / "a.npz", 128, tmp_path / "s.npz", cap_bytes=100_000)
    for _ in range(6):
        store.append(sample)
    store.finish()
    assert store.stored == 3 and store.capped_from == 128 and len(store) == 6
    assert store[5]["map"].shape == (1, 7, 32, 32)  # the rest still read back, from the scratch file
    store.close()
    tiny = OutputStore(tmp_path / "b.npz", 128, tmp_path / "t.npz", cap_bytes=10)
    tiny.append(sample)
    tiny.finish()
    assert tiny.stored == 1
    tiny.close()
