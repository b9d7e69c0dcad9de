"""`qdqreport collect` on the real demo model: what the bundle holds, and every bad input refused cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from qdqreport.analysis.context import Context
from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main

OUTPUT = "save_infer_model/scale_0.tmp_1"


def _collect(demo: Path, out: Path, *extra: str, qdq: str = "cls_int8_x255.onnx", inputs: str | None = None) -> int:
    return main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / qdq),
                 "--inputs", inputs or str(demo / "eval.npz"), "--max-samples", "6", "-o", str(out), "--quiet", *extra])


@pytest.mark.slow
def test_broken_bundle_records_the_collapse_and_its_evidence(broken_bundle: Path) -> None:
    ctx = Context(Bundle(broken_bundle))
    # ort_qdq_fp32: the FP16 check's control, because ModelOpt left the demo model's float part in FP16;
    # ort_qdq_eval_ranges, the calibration check's control, because the outputs collapse; and on a CPU without VNNI
    # ort_qdq_unfused, the saturation check's control, because the demo model is S8S8.
    from qdqreport.collect.saturation_check import cpu_vnni

    expected = {"ort_fp32": "ok", "ort_qdq": "ok", "trt_fp16": "skipped", "trt_int8": "skipped", "ort_qdq_fp32": "ok",
                "ort_qdq_eval_ranges": "ok"}
    if cpu_vnni()["vnni"] is False:
        expected["ort_qdq_unfused"] = "ok"
    assert {s.id: s.status for s in ctx.stages} == expected
    assert "tensorrt" in ctx.stage("trt_int8").error
    quantization = ctx.comparison("quantization")
    assert quantization.class_outputs == (OUTPUT,)
    (summary,) = ctx.output_summaries(quantization.id)
    assert summary.samples == 16 and summary.top1 < 0.7 and summary.cosine_median < 0.95
    (first_q,) = ctx.range_use
    assert first_q["input"] == "x" and first_q["range_used"] < 0.01  # the ×255 calibration signature
    assert ctx.calib_stats["inputs"]["x"]["overall"]["max"] > 200 > ctx.eval_stats["inputs"]["x"]["overall"]["max"]
    assert len(ctx.eval_stats["inputs"]["x"]["per_sample"]) == 16
    assert ctx.modelopt_log is not None and ctx.precision["counts"]["quantized_nodes"] > 50


@pytest.mark.slow
def test_healthy_bundle_agrees(healthy_bundle: Path) -> None:
    ctx = Context(Bundle(healthy_bundle))
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.samples == 50 and summary.top1 >= 0.95 and summary.cosine_median > 0.999
    assert ctx.range_use[0]["range_used"] > 0.5


@pytest.mark.slow
def test_stage_outputs_are_the_real_onnxruntime_outputs(broken_bundle: Path, demo: Path, eval_x: np.ndarray) -> None:
    stored = load_stage_outputs(Bundle(broken_bundle), "ort_fp32")
    session = ort.InferenceSession(str(demo / "cls_fp32.onnx"), providers=["CPUExecutionProvider"])
    expected = session.run([OUTPUT], {"x": eval_x[3:4]})[0]
    np.testing.assert_allclose(stored[3][OUTPUT], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_reference_outputs_add_the_export_comparison(tmp_path: Path, demo: Path, eval_x: np.ndarray) -> None:
    session = ort.InferenceSession(str(demo / "cls_fp32.onnx"), providers=["CPUExecutionProvider"])
    reference = np.concatenate([session.run([OUTPUT], {"x": eval_x[i:i + 1]})[0] for i in range(6)])
    np.savez(tmp_path / "ref.npz", **{OUTPUT: reference})
    assert _collect(demo, tmp_path / "b", "--reference", str(tmp_path / "ref.npz")) == 0
    ctx = Context(Bundle(tmp_path / "b"))
    (export,) = ctx.output_summaries(ctx.comparison("export").id)
    assert export.cosine_min > 0.99999 and export.top1 == 1.0


@pytest.mark.slow
def test_data_loader_script_is_polygraphy_convention(tmp_path: Path, demo: Path) -> None:
    script = tmp_path / "loader.py"
    script.write_text(f"import numpy as np\ndef feeds():\n    x = np.load({str(demo / 'eval.npz')!r})['x']\n"
                      "    for i in range(3):\n        yield {'x': x[i:i + 1]}\n")
    assert _collect(demo, tmp_path / "b", inputs=f"{script}:feeds") == 0
    assert Bundle(tmp_path / "b").manifest["inputs"]["eval"]["samples"] == 3


@pytest.mark.slow
def test_data_loader_script_loads_like_the_postprocess_script(tmp_path: Path, demo: Path) -> None:
    """The shared script loader: a @dataclass under postponed annotations works, and a script named like
    an installed module (json.py) is still the user's file, not the installed module."""
    script = tmp_path / "json.py"
    script.write_text("from __future__ import annotations\nfrom dataclasses import dataclass\nimport numpy as np\n\n"
                      "@dataclass\nclass Batch:\n    x: np.ndarray\n\n"
                      f"def load_data():\n    x = np.load({str(demo / 'eval.npz')!r})['x']\n"
                      "    return [{'x': Batch(x[i:i + 1]).x} for i in range(2)]\n")
    assert _collect(demo, tmp_path / "b", inputs=str(script)) == 0
    assert Bundle(tmp_path / "b").manifest["inputs"]["eval"]["samples"] == 2


@pytest.mark.slow
def test_zip_bundle_reads_like_the_folder(tmp_path: Path, demo: Path) -> None:
    # no control stage (no FP16 check, no saturation check, no calibration check): the four pipeline stages
    assert _collect(demo, tmp_path / "b.zip", "--no-fp16-check", "--no-saturation-check",
                    "--no-calibration-check") == 0
    bundle = Bundle(tmp_path / "b.zip")
    assert [s["id"] for s in bundle.manifest["stages"]] == ["ort_fp32", "ort_qdq", "trt_fp16", "trt_int8"]
    assert len(load_stage_outputs(bundle, "ort_qdq")) == 6


@pytest.mark.slow
def test_failed_stage_is_recorded_and_the_bundle_still_written(tmp_path: Path, demo: Path) -> None:
    model = onnx.load(str(demo / "cls_int8.onnx"))
    node = next(n for n in model.graph.node if n.op_type == "HardSigmoid")
    node.domain = "com.example.missing"  # passes the ONNX checker, but no runtime implements it
    model.opset_import.append(onnx.helper.make_opsetid("com.example.missing", 1))
    onnx.save(model, tmp_path / "bad_runtime.onnx")
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(tmp_path / "bad_runtime.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--max-samples", "2", "-o", str(tmp_path / "b"), "--quiet"]) == 0
    ctx = Context(Bundle(tmp_path / "b"))
    assert ctx.stage("ort_qdq").status == "failed" and "session creation failed" in ctx.stage("ort_qdq").error
    assert ctx.stage("ort_fp32").status == "ok" and ctx.comparison("quantization") is None


def _fails_at_run_time(source: Path, target: Path) -> None:
    """*source* with a Reshape of its input to [5, -1] and back in front: sessions build, and every run of a
    [1, 3, 48, 192] sample fails inside ONNX Runtime (27,648 values do not split in 5), as a model whose samples are
    groups of rows does when each row is fed alone."""
    model = onnx.load(str(source))
    name = model.graph.input[0].name
    for node in model.graph.node:
        node.input[:] = [f"{name}_back" if i == name else i for i in node.input]
    model.graph.initializer.extend([numpy_helper.from_array(np.array([5, -1], np.int64), "rows_of_5"),
                                    numpy_helper.from_array(np.array([-1, 3, 48, 192], np.int64), "back")])
    model.graph.node.insert(0, onnx.helper.make_node("Reshape", [name, "rows_of_5"], [f"{name}_rows"]))
    model.graph.node.insert(1, onnx.helper.make_node("Reshape", [f"{name}_rows", "back"], [f"{name}_back"]))
    onnx.save(model, str(target))


@pytest.mark.slow
def test_a_model_failing_on_every_sample_is_recorded_not_a_crash(tmp_path: Path, demo: Path) -> None:
    """Both stages fail on every sample: the activation-range pass, which runs the same FP32 model on those samples,
    is left out (it ended the collect with exit 3, "internal error", for a new user's EEG classifier fed one row of
    its 4-row samples at a time) and the bundle says why the stages failed."""
    _fails_at_run_time(demo / "cls_fp32.onnx", tmp_path / "fp32.onnx")
    _fails_at_run_time(demo / "cls_int8_x255.onnx", tmp_path / "qdq.onnx")
    assert main(["collect", "--fp32", str(tmp_path / "fp32.onnx"), "--qdq", str(tmp_path / "qdq.onnx"), "--inputs",
                 str(demo / "eval.npz"), "--calib", str(demo / "calib_x255.npz"), "--max-samples", "4",
                 "-o", str(tmp_path / "b"), "--quiet", "--no-fp16-check"]) == 0
    ctx = Context(Bundle(tmp_path / "b"))
    assert ctx.stage("ort_fp32").status == "failed" and "Reshape" in ctx.stage("ort_fp32").error
    assert ctx.activation_ranges is None and ctx.comparison("quantization") is None
    assert main(["report", str(tmp_path / "b"), "-o", str(tmp_path / "r")]) == 0


@pytest.mark.slow
def test_nonfinite_scale_gives_nan_outputs_counted_per_sample(tmp_path: Path, demo: Path) -> None:
    model = onnx.load(str(demo / "cls_int8.onnx"))
    last_dq = [n for n in model.graph.node if n.op_type == "DequantizeLinear"][-1]
    _set_constant(model, last_dq.input[1], np.inf)
    onnx.save(model, tmp_path / "inf_scale.onnx")
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(tmp_path / "inf_scale.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--max-samples", "3", "-o", str(tmp_path / "b"), "--quiet"]) == 0
    ctx = Context(Bundle(tmp_path / "b"))
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.nonfinite_cand > 0 and summary.nonfinite_ref == 0


def _set_constant(model: onnx.ModelProto, name: str, value: float) -> None:
    for init in model.graph.initializer:
        if init.name == name:
            array = numpy_helper.to_array(init)
            init.CopyFrom(numpy_helper.from_array(np.full_like(array, value), name))
            return
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            array = numpy_helper.to_array(node.attribute[0].t)
            node.attribute[0].t.CopyFrom(numpy_helper.from_array(np.full_like(array, value)))
            return
    raise AssertionError(f"no constant {name}")


@pytest.mark.slow
def test_progress_goes_to_stderr_and_quiet_silences_it(tmp_path: Path, demo: Path, capsys: pytest.CaptureFixture) -> None:
    main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / "cls_int8.onnx"),
          "--inputs", str(demo / "eval.npz"), "--max-samples", "4", "-o", str(tmp_path / "a")])
    loud = capsys.readouterr()
    assert "samples: 4/4" in loud.err and loud.out.strip() == str(tmp_path / "a")
    _collect(demo, tmp_path / "b")
    assert capsys.readouterr().err == ""


# --- bad inputs: one line, exit 2, nothing written ------------------------------------------
def _bad_inputs(tmp: Path, demo: Path, eval_x: np.ndarray) -> dict[str, tuple[list[str], str]]:
    (tmp / "corrupt.onnx").write_bytes(b"this is not a protobuf")
    np.savez(tmp / "wrong_name.npz", image=eval_x[:2])
    np.savez(tmp / "wrong_shape.npz", x=eval_x[:2, :2])  # 2 channels; H and W are dynamic in this model
    np.savez(tmp / "wrong_dtype.npz", x=eval_x[:2].astype(np.float64))
    nan_x = eval_x[:2].copy()
    nan_x[1, 0, 0, 0] = np.nan
    np.savez(tmp / "nan_inputs.npz", x=nan_x)
    np.savez(tmp / "nan_reference.npz", **{OUTPUT: np.full((2, 2), np.nan, dtype=np.float32)})
    np.savez(tmp / "short_reference.npz", **{OUTPUT: np.zeros((1, 2), dtype=np.float32)})
    np.savez(tmp / "two.npz", x=eval_x[:2])
    (tmp / "truncated.npz").write_bytes((tmp / "two.npz").read_bytes()[:200])
    (tmp / "exits.py").write_text("import sys\ndef load_data():\n    sys.exit(5)\n")
    fp32, qdq = str(demo / "cls_fp32.onnx"), str(demo / "cls_int8.onnx")
    base = ["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "two.npz")]
    return {
        "missing model": (["--fp32", str(tmp / "nope.onnx"), "--qdq", qdq, "--inputs", str(tmp / "two.npz")], "nope.onnx"),
        "corrupt onnx": (["--fp32", fp32, "--qdq", str(tmp / "corrupt.onnx"), "--inputs", str(tmp / "two.npz")], "corrupt.onnx"),
        "missing inputs": (["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "nope.npz")], "nope.npz"),
        "wrong input name": (["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "wrong_name.npz")], "'image'"),
        "wrong shape": (["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "wrong_shape.npz")], "dim 1 must be 3"),
        "wrong dtype": (["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "wrong_dtype.npz")], "astype(np.float32)"),
        "nan inputs": (["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "nan_inputs.npz")], "NaN/Inf"),
        "nan reference": ([*base, "--reference", str(tmp / "nan_reference.npz")], "nan_reference.npz"),
        "short reference": ([*base, "--reference", str(tmp / "short_reference.npz")], "one reference row per input row"),
        "missing modelopt log": ([*base, "--modelopt-log", str(tmp / "nope.log")], "nope.log"),
        "bad loader script": (["--fp32", fp32, "--qdq", qdq, "--data-loader-script", f"{tmp / 'nope.py'}:load"], "nope.py"),
        "unknown provider": ([*base, "--ort-provider", "cuda"], "--ort-provider cuda: not available"),
        "truncated inputs": (["--fp32", fp32, "--qdq", qdq, "--inputs", str(tmp / "truncated.npz")],
                             "truncated.npz: unreadable .npz file"),
        "truncated reference": ([*base, "--reference", str(tmp / "truncated.npz")], "truncated.npz: unreadable .npz file"),
        "loader exits": (["--fp32", fp32, "--qdq", qdq, "--data-loader-script", str(tmp / "exits.py")],
                         "load_data() raised SystemExit: 5"),
    }


@pytest.mark.parametrize("case", ["missing model", "corrupt onnx", "missing inputs", "wrong input name", "wrong shape",
                                  "wrong dtype", "nan inputs", "nan reference", "short reference", "missing modelopt log",
                                  "bad loader script", "unknown provider", "truncated inputs", "truncated reference",
                                  "loader exits"])
@pytest.mark.slow
def test_bad_input_is_one_line_exit_2_and_nothing_written(case: str, tmp_path: Path, demo: Path, eval_x: np.ndarray,
                                                          capsys: pytest.CaptureFixture) -> None:
    args, expected = _bad_inputs(tmp_path, demo, eval_x)[case]
    out = tmp_path / "out" / "bundle"
    assert main(["collect", *args, "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("qdqreport: error: ") and expected in err
    assert not out.exists()
    assert not list(tmp_path.rglob(".*partial*"))


@pytest.mark.slow
def test_existing_bundle_needs_force(tmp_path: Path, demo: Path, capsys: pytest.CaptureFixture) -> None:
    assert _collect(demo, tmp_path / "b") == 0
    first = json.loads((tmp_path / "b" / "manifest.json").read_text())["created_at"]
    assert _collect(demo, tmp_path / "b") == 2 and "--force" in capsys.readouterr().err
    assert _collect(demo, tmp_path / "b", "--force", qdq="cls_int8.onnx") == 0
    assert Bundle(tmp_path / "b").manifest["models"]["qdq"]["path"].endswith("cls_int8.onnx") and first


@pytest.mark.slow
def test_interrupted_collect_leaves_no_bundle(tmp_path: Path, demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import qdqreport.collect.pipeline as pipeline

    def explode(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # what Ctrl-C in the middle of writing looks like

    monkeypatch.setattr(pipeline, "write_compared", explode)  # the quantization comparison, fed while streaming
    assert _collect(demo, tmp_path / "b") == 130
    assert not (tmp_path / "b").exists() and not list(tmp_path.glob(".b.partial-*"))


def test_per_channel_qdq_in_an_opset_11_model_is_refused_with_the_conversion(tmp_path: Path, demo: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # A new user's U^2-Net-p (opset 11) quantized per channel: DequantizeLinear with `axis` needs opset 13, and the
    # refusal said only "re-export it". The smallest such model: one per-channel weight DequantizeLinear into a Conv.
    from onnx import TensorProto, helper

    weight = numpy_helper.from_array(np.ones((2, 3, 1, 1), np.int8), "w_q")
    scale = numpy_helper.from_array(np.full(2, 0.1, np.float32), "w_scale")
    zero = numpy_helper.from_array(np.zeros(2, np.int8), "w_zero")
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zero"], ["w"], name="w_dq", axis=0),
             helper.make_node("Conv", ["x", "w"], ["y"], name="conv")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])],
                              [weight, scale, zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    onnx.save(model, tmp_path / "qdq_opset11.onnx")
    np.savez(tmp_path / "x.npz", x=np.ones((2, 1, 3, 4, 4), np.float32))
    fp32 = helper.make_model(helper.make_graph(
        [helper.make_node("Conv", ["x", "wf"], ["y"], name="conv")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])],
        [numpy_helper.from_array(np.full((2, 3, 1, 1), 0.1, np.float32), "wf")]),
        opset_imports=[helper.make_opsetid("", 11)])
    onnx.save(fp32, tmp_path / "fp32.onnx")
    assert main(["collect", "--fp32", str(tmp_path / "fp32.onnx"), "--qdq", str(tmp_path / "qdq_opset11.onnx"),
                 "--inputs", str(tmp_path / "x.npz"), "-o", str(tmp_path / "b"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "qdq_opset11.onnx" in err
    assert "need opset 13 or later" in err and "convert_version(model, 13)" in err and "--qdq" in err
    assert not (tmp_path / "b").exists()
