"""Inputs real models need, on real models: Silero VAD (scalar `sr`, recurrent `state[2, batch, 128]`)
quantized with ONNX Runtime's own quantize_static (whose output the strict ONNX checker rejects but
ONNX Runtime runs), models stored as ONNX external data, and the pairs of models that must be refused
(the same model twice, swapped, unquantized)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onnx_files import FeedReader, with_initializers
from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.stats import input_stats

SR = 16000
CHUNK, CONTEXT = 512, 64  # Silero VAD v5 at 16 kHz: 512 new samples and the previous 64 per call
CLS_OUTPUT = "save_infer_model/scale_0.tmp_1"


# --- the real Silero VAD, quantized here --------------------------------------------------------
def _silero_dir() -> Path:
    spec = importlib.util.find_spec("silero_vad")  # find only: importing it needs torch
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("silero-vad is not installed (pip install --no-deps silero-vad; .ci/run does it)")
    return Path(spec.submodule_search_locations[0]) / "data"


def speech_like(seconds: float, seed: int) -> np.ndarray:
    """A voiced, syllable-rate modulated harmonic signal with a drifting pitch, plus a little noise.

    No audio dataset is installed here, so this stands in for speech: it has the spectral shape
    (harmonics of a 90-150 Hz fundamental) and the 4 Hz on/off rhythm the VAD responds to.
    """
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    pitch = 120 + 30 * np.sin(2 * np.pi * 0.7 * t + seed)
    phase = 2 * np.pi * np.cumsum(pitch) / SR
    voiced = sum(np.sin(k * phase) / k for k in range(1, 20))
    envelope = np.clip(np.sin(2 * np.pi * 4 * t + seed), 0, None) * (np.sin(2 * np.pi * 0.25 * t + seed) > -0.3)
    return (0.3 * voiced * envelope + 0.01 * rng.standard_normal(t.size)).astype(np.float32)


def vad_stream(session: ort.InferenceSession, seconds: float, seed: int) -> list[dict[str, np.ndarray]]:
    """The feeds a streaming VAD makes: each chunk with its context, and the state the FP32 model returned."""
    audio, state, context, feeds = speech_like(seconds, seed), np.zeros((2, 1, 128), np.float32), np.zeros(CONTEXT, np.float32), []
    for start in range(0, audio.size - CHUNK + 1, CHUNK):
        chunk = audio[start:start + CHUNK]
        feed = {"input": np.concatenate([context, chunk])[None], "state": state, "sr": np.array(SR, np.int64)}
        feeds.append(feed)
        state, context = session.run(None, feed)[1], chunk[-CONTEXT:]
    return feeds


@pytest.fixture(scope="module")
def vad(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """FP32 Silero VAD, its Conv-only per-channel QDQ model from onnxruntime's quantize_static, and eval data."""
    from onnxruntime.quantization import QuantFormat, quantize_static

    fp32 = _silero_dir() / "silero_vad_16k_op15.onnx"  # Convs at the top level (silero_vad.onnx hides them in an If)
    work = tmp_path_factory.mktemp("vad")
    session = ort.InferenceSession(str(fp32), providers=["CPUExecutionProvider"])
    calib = [f for seed in (1, 2) for f in vad_stream(session, 1.5, seed)]
    quantize_static(str(fp32), str(work / "vad_qdq.onnx"), FeedReader(calib), quant_format=QuantFormat.QDQ,
                    per_channel=True, op_types_to_quantize=["Conv"])
    feeds = [f for seed in (10, 11) for f in vad_stream(session, 0.4, seed)]
    stacked = {"input": np.concatenate([f["input"] for f in feeds]),
               "state": np.concatenate([f["state"] for f in feeds], axis=1)}  # samples on the state's batch axis 1
    np.savez(work / "eval.npz", **stacked, sr=np.array(SR, np.int64))  # one sr for every sample
    np.savez(work / "eval_sr_per_sample.npz", **stacked, sr=np.full(len(feeds), SR, np.int64))
    return {"fp32": fp32, "qdq": work / "vad_qdq.onnx", "eval": work / "eval.npz",
            "eval_sr_per_sample": work / "eval_sr_per_sample.npz", "work": work}


def _collect(fp32: Path, qdq: Path, source: list[str], out: Path, *extra: str) -> int:
    return main(["collect", "--fp32", str(fp32), "--qdq", str(qdq), *source, "-o", str(out), "--quiet", *extra])


@pytest.mark.slow
def test_the_ort_quantized_model_is_one_the_checker_rejects_and_ort_runs(vad: dict[str, Path]) -> None:
    # The premise of the next test: quantize_static's output really fails the strict checker.
    with pytest.raises(onnx.checker.ValidationError, match="topologically sorted"):
        onnx.checker.check_model(str(vad["qdq"]), full_check=True)
    ort.InferenceSession(str(vad["qdq"]), providers=["CPUExecutionProvider"])


@pytest.mark.slow
def test_vad_collects_end_to_end_and_renders(vad: dict[str, Path], tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    assert _collect(vad["fp32"], vad["qdq"], ["--inputs", str(vad["eval"])], bundle) == 0
    manifest = Bundle(bundle).manifest
    tensors = {t["name"]: t for t in manifest["inputs"]["eval"]["tensors"]}
    assert {n: (t["shape"], t["batch_axis"]) for n, t in tensors.items()} == {
        "input": ([1, 576], 0), "state": ([2, 1, 128], 1), "sr": ([], None)}
    # The checker's whole complaint, not its first line: the failing node comes after a line break.
    warning = manifest["models"]["qdq"]["check_warning"]
    assert "topologically sorted" in warning and warning.endswith("OpType: If") and "\n" not in warning
    assert "check_warning" not in manifest["models"]["fp32"]
    assert {s["id"]: s["status"] for s in manifest["stages"]}["ort_qdq"] == "ok"
    # Sample 5 is the 6th chunk with the 6th state (axis 1) and the shared sr: as ONNX Runtime computes it.
    data = np.load(vad["eval"])
    expected = ort.InferenceSession(str(vad["fp32"]), providers=["CPUExecutionProvider"]).run(
        None, {"input": data["input"][5:6], "state": data["state"][:, 5:6], "sr": data["sr"]})
    stored = load_stage_outputs(Bundle(bundle), "ort_fp32")
    assert len(stored) == data["input"].shape[0]
    np.testing.assert_allclose(stored[5]["output"], expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stored[5]["stateN"], expected[1], rtol=1e-5, atol=1e-6)
    stats = Bundle(bundle).json(manifest["artifacts"]["eval_stats"])["inputs"]
    assert stats["sr"]["overall"]["min"] == stats["sr"]["overall"]["max"] == SR
    assert stats["state"]["overall"]["absmax"] == pytest.approx(float(np.abs(data["state"]).max()))
    out = tmp_path / "report"
    assert main(["report", str(bundle), "-o", str(out)]) == 0
    assert "stateN" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_scalar_given_once_per_sample_and_from_a_loader_script(vad: dict[str, Path], tmp_path: Path) -> None:
    assert _collect(vad["fp32"], vad["qdq"], ["--inputs", str(vad["eval_sr_per_sample"])], tmp_path / "a") == 0
    script = tmp_path / "loader.py"
    script.write_text("import numpy as np\n"
                      f"DATA = np.load({str(vad['eval'])!r})\n"
                      "def load_data():\n"
                      "    for i in range(3):\n"
                      "        yield {'input': DATA['input'][i:i + 1], 'state': DATA['state'][:, i:i + 1],\n"
                      "               'sr': np.array(16000, dtype=np.int64)}\n")
    assert _collect(vad["fp32"], vad["qdq"], ["--data-loader-script", str(script)], tmp_path / "b") == 0
    once = load_stage_outputs(Bundle(tmp_path / "a"), "ort_qdq")
    scripted = load_stage_outputs(Bundle(tmp_path / "b"), "ort_qdq")
    assert len(scripted) == 3
    np.testing.assert_array_equal(scripted[2]["output"], once[2]["output"])


def _rename_batch_dims(source: Path, target: Path) -> None:
    """The VAD with its batch dimension named 'n' and the state's 128 left dynamic: nothing to infer from."""
    model = onnx.load(str(source))
    for value in model.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param == "batch":
                dim.dim_param = "n"
            elif value.name == "state" and dim.dim_value == 128:
                dim.dim_param = "hidden"
    onnx.save(model, str(target))


@pytest.mark.slow
def test_batch_axis_flag_when_the_model_does_not_say(vad: dict[str, Path], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    fp32, qdq = tmp_path / "fp32.onnx", tmp_path / "qdq.onnx"
    _rename_batch_dims(vad["fp32"], fp32)
    _rename_batch_dims(vad["qdq"], qdq)
    source = ["--inputs", str(vad["eval"])]
    assert _collect(fp32, qdq, source, tmp_path / "a") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "state: 1 along axis 0" in err and "--batch-axis" in err
    assert not (tmp_path / "a").exists()
    assert _collect(fp32, qdq, source, tmp_path / "b", "--batch-axis", "state=1") == 0
    tensors = {t["name"]: t["batch_axis"] for t in Bundle(tmp_path / "b").manifest["inputs"]["eval"]["tensors"]}
    assert tensors == {"input": 0, "state": 1, "sr": None}


@pytest.mark.slow
def test_reference_outputs_on_their_batch_axis(vad: dict[str, Path], tmp_path: Path) -> None:
    data = np.load(vad["eval"])
    session = ort.InferenceSession(str(vad["fp32"]), providers=["CPUExecutionProvider"])
    runs = [session.run(None, {"input": data["input"][i:i + 1], "state": data["state"][:, i:i + 1], "sr": data["sr"]})
            for i in range(4)]
    np.savez(tmp_path / "reference.npz", output=np.concatenate([r[0] for r in runs]),
             stateN=np.concatenate([r[1] for r in runs], axis=1))  # stateN[2, batch, 128]: samples on axis 1
    assert _collect(vad["fp32"], vad["qdq"], ["--inputs", str(vad["eval"])], tmp_path / "b",
                    "--reference", str(tmp_path / "reference.npz"), "--max-samples", "4") == 0
    export = next(c for c in Bundle(tmp_path / "b").manifest["comparisons"] if c["purpose"] == "export")
    assert export["reference"] == "reference"
    stored = load_stage_outputs(Bundle(tmp_path / "b"), "reference")
    np.testing.assert_array_equal(stored[3]["stateN"], runs[3][1])
    tensors = Bundle(tmp_path / "b").manifest["inputs"]["reference"]["tensors"]
    assert {t["name"]: t["batch_axis"] for t in tensors} == {"output": 0, "stateN": 1}


# --- refused with one line, exit 2, before any inference -----------------------------------------
def _refusals(vad: dict[str, Path], tmp: Path) -> dict[str, tuple[list[str], str]]:
    data = dict(np.load(vad["eval"]))
    np.savez(tmp / "sr_matrix.npz", **{**data, "sr": np.zeros((3, 2), np.int64)})
    fp32, qdq, source = str(vad["fp32"]), str(vad["qdq"]), ["--inputs", str(vad["eval"])]
    return {
        "scalar of wrong rank": (["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "sr_matrix.npz")],
                                 "'sr' has shape [3, 2]; sr[] int64 has no batch axis"),
        "axis of a scalar": (["--fp32", fp32, "--qdq", qdq, *source, "--batch-axis", "sr=0"],
                             "--batch-axis sr=0: sr[] int64 has rank 0"),
        "axis out of range": (["--fp32", fp32, "--qdq", qdq, *source, "--batch-axis", "state=3"],
                              "use an axis in 0..2 or none"),
        "axis of no tensor": (["--fp32", fp32, "--qdq", qdq, *source, "--batch-axis", "states=1"],
                              "'states' is not an input or output"),
        "axis malformed": (["--fp32", fp32, "--qdq", qdq, *source, "--batch-axis", "state"], "expected NAME=AXIS"),
        "same model twice": (["--fp32", fp32, "--qdq", fp32, *source], "--qdq is the same model as --fp32"),
        "swapped": (["--fp32", qdq, "--qdq", fp32, *source], "--fp32 and --qdq look swapped"),
    }


@pytest.mark.parametrize("case", ["scalar of wrong rank", "axis of a scalar", "axis out of range", "axis of no tensor",
                                  "axis malformed", "same model twice", "swapped"])
@pytest.mark.slow
def test_refused_in_one_line(case: str, vad: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args, expected = _refusals(vad, tmp_path)[case]
    out = tmp_path / "out"
    assert main(["collect", *args, "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("qdqreport: error: ") and expected in err
    assert not out.exists()


@pytest.mark.slow
def test_a_quantizer_run_that_quantized_nothing_is_refused(vad: dict[str, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    # silero_vad.onnx keeps its Convs inside If branches; quantize_static does not enter them and writes
    # a model without a single Q/DQ node, which would otherwise give a perfect, meaningless report.
    from onnxruntime.quantization import QuantFormat, quantize_static

    fp32 = _silero_dir() / "silero_vad.onnx"
    session = ort.InferenceSession(str(fp32), providers=["CPUExecutionProvider"])
    quantize_static(str(fp32), str(tmp_path / "not_quantized.onnx"), FeedReader(vad_stream(session, 0.5, 3)),
                    quant_format=QuantFormat.QDQ, per_channel=True, op_types_to_quantize=["Conv"])
    assert _collect(fp32, tmp_path / "not_quantized.onnx", ["--inputs", str(vad["eval"])], tmp_path / "b") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no QuantizeLinear/DequantizeLinear node" in err
    assert not (tmp_path / "b").exists()


def test_unquantized_qdq_is_refused_unless_allowed(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = onnx.load(str(demo / "cls_fp32.onnx"))
    model.doc_string = "re-exported"  # another file, the same float graph
    onnx.save(model, str(tmp_path / "float_again.onnx"))
    args = ["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(tmp_path / "float_again.onnx"),
            "--inputs", str(demo / "eval.npz"), "--max-samples", "2", "--quiet", "-o"]
    assert main([*args, str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "has no QuantizeLinear/DequantizeLinear node" in err and "--allow-unquantized" in err
    assert main([*args, str(tmp_path / "b"), "--allow-unquantized"]) == 0


def test_a_model_onnxruntime_cannot_load_is_still_refused(demo: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    model = onnx.load(str(demo / "cls_int8.onnx"))
    dropped = model.graph.initializer[0].name
    del model.graph.initializer[0]  # a node now reads a tensor nothing defines
    onnx.save(model, str(tmp_path / "broken.onnx"))
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(tmp_path / "broken.onnx"),
                 "--inputs", str(demo / "eval.npz"), "-o", str(tmp_path / "b"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ONNX Runtime cannot load it" in err and dropped in err
    assert not (tmp_path / "b").exists()


# --- ONNX external data ---------------------------------------------------------------------------
def _save_external(source: Path, folder: Path, size_threshold: int = 1024) -> Path:
    """*source* as exporters of large models save it: weights as initializers, those of 1 KiB or more
    (onnx's and torch.onnx's default threshold) in one external data file beside the model."""
    folder.mkdir()
    target = folder / source.name
    model = with_initializers(source)
    onnx.save_model(model, str(target), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=f"{source.stem}.data", size_threshold=size_threshold)
    return target


@pytest.mark.slow
def test_models_with_external_data(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    fp32 = _save_external(demo / "cls_fp32.onnx", tmp_path / "fp32")
    qdq = _save_external(demo / "cls_int8.onnx", tmp_path / "qdq")
    # The weights really are outside the .onnx files.
    for model, data in ((fp32, "cls_fp32.data"), (qdq, "cls_int8.data")):
        initializers = onnx.load(str(model), load_external_data=False).graph.initializer
        assert sum(t.data_location == onnx.TensorProto.EXTERNAL for t in initializers) > 30
        assert (model.parent / data).stat().st_size > 200_000
    args = ["--inputs", str(demo / "eval.npz"), "--max-samples", "3"]
    assert _collect(fp32, qdq, args, tmp_path / "external") == 0
    assert _collect(demo / "cls_fp32.onnx", demo / "cls_int8.onnx", args, tmp_path / "inline") == 0
    models = Bundle(tmp_path / "external").manifest["models"]
    for role, name in (("fp32", "cls_fp32.data"), ("qdq", "cls_int8.data")):
        (data,) = models[role]["external_data"]
        file = tmp_path / role / name
        assert (data["path"], data["bytes"]) == (name, file.stat().st_size)
        assert data["sha256"] == hashlib.sha256(file.read_bytes()).hexdigest()
    for stage in ("ort_fp32", "ort_qdq"):
        external = load_stage_outputs(Bundle(tmp_path / "external"), stage)
        inline = load_stage_outputs(Bundle(tmp_path / "inline"), stage)
        np.testing.assert_array_equal(external[2][CLS_OUTPUT], inline[2][CLS_OUTPUT])
    # With every tensor external (size_threshold=0) ONNX Runtime itself cannot load the model: a Reshape's
    # shape is then external data its shape inference cannot read. Refused, with ONNX Runtime's reason.
    strict = _save_external(demo / "cls_int8.onnx", tmp_path / "all_external", size_threshold=0)
    assert _collect(fp32, strict, args, tmp_path / "d") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ONNX Runtime cannot load it" in err and "external" in err
    # The model moved without its data file: one line naming the file.
    shutil.copy(qdq, tmp_path / "alone.onnx")
    assert _collect(fp32, tmp_path / "alone.onnx", args, tmp_path / "c") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'cls_int8.data' is missing" in err


@pytest.mark.slow
def test_a_collect_that_reads_no_fp32_weight_drops_them_and_writes_the_same_bundle(demo: Path, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12: a default collect of a model without FP16 (no FP16 check), without the what-if or TensorRT, keeps the
    FP32 model's external tensors in its files once the models are checked (models.without_weights); here every
    external tensor (WEIGHT_BYTES 1), and the bundle's tables and artefacts are those of the collect that held them
    (the per-layer pass's weight rows too, read from the files)."""
    import qdqreport.collect.models as models

    fp32 = _save_external(demo / "cls_fp32.onnx", tmp_path / "fp32")
    qdq = _save_external(Path(__file__).parent / "data" / "models" / "cls_ort_int8.onnx", tmp_path / "qdq")
    args = ["--inputs", str(demo / "eval.npz"), "--max-samples", "6"]
    assert _collect(fp32, qdq, args, tmp_path / "held") == 0
    dropped: list[onnx.ModelProto] = []
    real = models.without_weights
    monkeypatch.setattr(models, "WEIGHT_BYTES", 1)
    monkeypatch.setattr("qdqreport.collect.pipeline.without_weights",
                        lambda model: dropped.append(real(model).proto) or real(model))
    assert _collect(fp32, qdq, args, tmp_path / "dropped") == 0
    (proto,) = dropped
    assert not any(t.raw_data for t in proto.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL)
    held, light = tmp_path / "held", tmp_path / "dropped"
    for name in ("compare/ort_qdq__vs__ort_fp32.samples.csv", "compare/ort_qdq__vs__ort_fp32.tensors.csv",
                 "inputs/range_use.json", "quant/precision_summary.json", "stages/ort_qdq/outputs.npz"):
        assert (held / name).read_bytes() == (light / name).read_bytes(), name
    ranges = [json.loads((b / "quant/activation_ranges.json").read_text()) for b in (held, light)]
    assert [r.pop("seconds") is not None for r in ranges] and ranges[0] == ranges[1] and ranges[0]["quantizers"]
    # The per-layer pass without the what-if reads each weight from its file (layerwise.weight_value): the same rows
    # as with the weights held; the what-if reads them all, so they are held for it.
    per_layer = [*args, "--per-layer", "--whatif-budget", "0"]
    monkeypatch.setattr("qdqreport.collect.pipeline.without_weights", lambda model: model)
    assert _collect(fp32, qdq, per_layer, tmp_path / "pl_held") == 0
    monkeypatch.setattr("qdqreport.collect.pipeline.without_weights",
                        lambda model: dropped.append(real(model).proto) or real(model))
    assert _collect(fp32, qdq, per_layer, tmp_path / "pl") == 0 and len(dropped) == 2
    for name in ("compare/ort_qdq__vs__ort_fp32.layers.csv", "compare/ort_qdq__vs__ort_fp32.qnodes.csv"):
        assert (tmp_path / "pl_held" / name).read_bytes() == (tmp_path / "pl" / name).read_bytes(), name
    assert "weight" in (tmp_path / "pl" / "compare/ort_qdq__vs__ort_fp32.layers.csv").read_text()
    assert main(["collect", "--fp32", str(fp32), "--qdq", str(qdq), *args, "-o", str(tmp_path / "wi"), "--quiet",
                 "--per-layer", "--whatif-budget", "1"]) == 0 and len(dropped) == 2  # the what-if reads them


@pytest.mark.slow
def test_models_past_the_protobuf_limit_reach_onnxruntime_as_files(demo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # A model over 2 GiB cannot be serialised, so it has external data: its stage sessions read its file, the passes
    # that mark tensors get its graph alone and read its weights from its folder (models.marked_source), and every
    # model the collect builds from it (the FP16 check's control, the local graph, what-if variants) gets a scratch
    # copy saved with external data. The limit is lowered so the demo models take that path.
    import qdqreport.collect.models as models

    fp32 = _save_external(demo / "cls_fp32.onnx", tmp_path / "fp32")
    qdq = _save_external(demo / "cls_int8.onnx", tmp_path / "qdq")
    args = ["--inputs", str(demo / "eval.npz"), "--max-samples", "2", "--per-layer", "--whatif-budget", "1"]
    assert _collect(fp32, qdq, args, tmp_path / "inline") == 0
    saved: list[str] = []
    original = onnx.save_model
    monkeypatch.setattr(models, "SERIALIZE_LIMIT", 0)
    monkeypatch.setattr(models.onnx, "save_model", lambda model, path, **kw: (saved.append(path), original(model, path, **kw)))
    structures, on_disk = [], models._structure_on_disk
    monkeypatch.setattr(models, "_structure_on_disk", lambda proto: structures.append(on_disk(proto)) or structures[-1])
    assert _collect(fp32, qdq, args, tmp_path / "files") == 0
    assert len(saved) >= 2 and all(Path(p).is_file() for p in saved)
    assert len(structures) >= 5 and all(s is not None and any(t.data_location == onnx.TensorProto.EXTERNAL for t in s.graph.initializer)
                                               for s in structures)
    data = [file.stat().st_size for file in (Path(p).with_name("model.data") for p in saved) if file.exists()]
    assert data and max(data) > 100_000
    for stage in ("ort_fp32", "ort_qdq", "ort_qdq_fp32"):
        files = load_stage_outputs(Bundle(tmp_path / "files"), stage)
        inline = load_stage_outputs(Bundle(tmp_path / "inline"), stage)
        np.testing.assert_array_equal(files[1][CLS_OUTPUT], inline[1][CLS_OUTPUT])
    layers = [_layers(Bundle(tmp_path / name)) for name in ("files", "inline")]
    assert len(layers[0]) > 50 and layers[0] == layers[1]


def _layers(bundle: Bundle) -> list[dict]:
    comparison = next(c for c in bundle.manifest["comparisons"] if c["purpose"] == "quantization")
    return bundle.table(comparison["tables"]["layers"], "layers")


@pytest.mark.slow
def test_an_input_with_no_declared_shape(demo: Path, tmp_path: Path, eval_x: np.ndarray) -> None:
    # No shape at all is "any rank", not a scalar: samples along axis 0, as the arrays say.
    for name in ("cls_fp32", "cls_int8"):
        model = onnx.load(str(demo / f"{name}.onnx"))
        model.graph.input[0].type.tensor_type.ClearField("shape")
        onnx.save(model, str(tmp_path / f"{name}.onnx"))
    assert _collect(tmp_path / "cls_fp32.onnx", tmp_path / "cls_int8.onnx",
                    ["--inputs", str(demo / "eval.npz"), "--max-samples", "2"], tmp_path / "b") == 0
    bundle = Bundle(tmp_path / "b")
    (tensor,) = bundle.manifest["inputs"]["eval"]["tensors"]
    assert (tensor["shape"], tensor["batch_axis"]) == ([1, *eval_x.shape[1:]], 0)
    session = ort.InferenceSession(str(demo / "cls_fp32.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(load_stage_outputs(bundle, "ort_fp32")[1][CLS_OUTPUT],
                               session.run([CLS_OUTPUT], {"x": eval_x[1:2]})[0], rtol=1e-5, atol=1e-6)


def test_input_stats_of_scalars_and_other_batch_axes() -> None:
    samples = [{"sr": np.array(16000, np.int64), "state": np.full((2, 1, 3), float(i), np.float32)} for i in range(4)]
    stats = input_stats(samples, "loader.py", per_sample=True, batch_axes={"sr": None, "state": 1})["inputs"]
    assert stats["sr"]["overall"] == {"min": 16000.0, "max": 16000.0, "mean": 16000.0, "std": 0.0, "absmax": 16000.0}
    assert stats["state"]["overall"]["mean"] == pytest.approx(1.5) and stats["state"]["channel_axis"] is None
    assert [s["max"] for s in stats["state"]["per_sample"]] == [0.0, 1.0, 2.0, 3.0]
    json.dumps(stats)


@pytest.mark.slow
def test_the_reader_checks_the_new_optional_fields(vad: dict[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    bundle = tmp_path / "bundle"
    assert _collect(vad["fp32"], vad["qdq"], ["--inputs", str(vad["eval"]), "--max-samples", "2"], bundle) == 0
    assert main(["validate", str(bundle)]) == 0
    good = (bundle / "manifest.json").read_text()
    for field, damage in [("inputs.eval.tensors[1].batch_axis", lambda m: m["inputs"]["eval"]["tensors"][1].update(batch_axis="1")),
                          ("models.qdq.check_warning", lambda m: m["models"]["qdq"].update(check_warning=["not", "text"])),
                          ("models.fp32.external_data[0].bytes",
                           lambda m: m["models"]["fp32"].update(external_data=[{"path": "w.data", "sha256": "0", "bytes": "9"}]))]:
        manifest = json.loads(good)
        damage(manifest)
        (bundle / "manifest.json").write_text(json.dumps(manifest))
        capsys.readouterr()
        assert main(["validate", str(bundle)]) == 2
        assert f"{field} has the wrong type" in capsys.readouterr().err


def test_nhwc_images_have_their_colour_channels_compared():
    """TensorFlow/Keras exports read N, H, W, C: the statistics found no channels there (the axis after the batch is
    the height), so a greyscale or channel-swapped calibration set went unchecked (a new user's open_nsfw, 224 x 224 x
    3). Real photograph: matplotlib's sample grace_hopper.jpg, cut into 96 x 96 crops; calibration the other crops,
    made grey (the mean of the channels, repeated) as a greyscale loader would."""
    import matplotlib.image as mpimg
    from matplotlib import cbook

    from qdqreport.analysis.preprocessing import preprocessing_difference

    photo = mpimg.imread(cbook.get_sample_data("grace_hopper.jpg")).astype(np.float32)
    crops = [photo[y:y + 96, x:x + 96][None] for y in range(0, 400, 100) for x in range(0, 400, 100)]
    evaluation = input_stats([{"image": c} for c in crops[::2]], "eval.npz", True)["inputs"]["image"]
    grey = [{"image": np.repeat(c.mean(-1, keepdims=True), 3, axis=-1)} for c in crops[1::2]]
    calibration = input_stats(grey, "calib.npz", True)["inputs"]["image"]
    assert evaluation["channel_axis"] == 3 and len(evaluation["channels"]) == 3
    assert evaluation["channel_correlation"]["axis"] == 3
    assert preprocessing_difference(calibration, evaluation).kind == "greyscale"
    # N, C, H, W stays channels-first.
    assert input_stats([{"image": np.moveaxis(crops[0], 3, 1).copy()}], "e", True)["inputs"]["image"]["channel_axis"] == 1


def test_token_ids_are_counted_and_masks_and_floats_are_not() -> None:
    """Signed integer inputs keep their most frequent values (the statistics' `ids`, QR003's left-out [mask]); a 0/1
    mask and float inputs do not. Counts add up over samples of different lengths, ties ordered by id."""
    samples = [{"ids": np.array([[101, 7, 7, 102, 0, 0]], np.int64), "mask": np.array([[1, 1, 1, 1, 0, 0]], np.int64),
                "x": np.zeros((1, 3), np.float32)},
               {"ids": np.array([[101, 9, 102, 0, 0, 0]], np.int64), "mask": np.array([[1, 1, 1, 0, 0, 0]], np.int64),
                "x": np.ones((1, 3), np.float32)}]
    inputs = input_stats(samples, "eval.npz", per_sample=True)["inputs"]
    assert inputs["ids"]["ids"] == {"values": 12, "distinct": 5, "top": [
        {"id": 0, "count": 5}, {"id": 7, "count": 2}, {"id": 101, "count": 2}, {"id": 102, "count": 2},
        {"id": 9, "count": 1}]}
    assert "ids" not in inputs["mask"] and "ids" not in inputs["x"]



@pytest.mark.slow
def test_a_samples_axis_inferred_past_axis_0_is_named_with_the_option_that_overrides_it(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # ddddocr's text recognizer reads input1[1, 1, 64, image_width]: batch 1, the width dynamic, which collect takes as
    # the samples' axis; the file stacks 4 crops on axis 0 (values irrelevant to the layout: uniform noise). A new
    # user's DeepFilterNet ([1, 1, S, 32]) read only "has shape [96, 1, 1, 32] but the model expects ...", a shape
    # they never passed, and no word of --batch-axis.
    spec = importlib.util.find_spec("ddddocr")  # find only: importing it loads its models
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("ddddocr is not installed (pip install --no-deps ddddocr==1.6.1; .ci/run does it)")
    fp32 = Path(spec.submodule_search_locations[0]) / "common.onnx"
    copy = tmp_path / "common_copy.onnx"
    copy.write_bytes(fp32.read_bytes())
    crops = tmp_path / "crops.npz"
    np.savez(crops, input1=np.random.default_rng(0).random((4, 1, 64, 128), dtype=np.float32))
    out = tmp_path / "out"
    assert _collect(fp32, copy, ["--inputs", str(crops)], out, "--allow-unquantized") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has shape [4, 1, 64, 1]" in err
    assert "collect took axis 3 of input1" in err and "--batch-axis input1=0" in err
    assert not out.exists()
    assert _collect(fp32, copy, ["--inputs", str(crops)], out, "--allow-unquantized", "--batch-axis", "input1=0",
                    "--no-saturation-check") == 0  # the override reads the same file
