"""qdqreport's TensorRT builder-configuration logic, against a FAKE tensorrt module (tests/fake_tensorrt.py).

No TensorRT exists here: these tests check only what OUR code asks of the TensorRT API (flags,
network creation flags, profiles, no calibrator, parser errors as data). The skip path is
tested for real: tensorrt is absent on this machine.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from fake_tensorrt import FAKE_LAYER_INFO, FAKE_STATE, FakeSpec, make_fake_tensorrt
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect import trt_stage
from qdqreport.collect.trt_build import build_engine, build_plans, sample_shapes
from qdqreport.collect.trt_stage import TrtRequest, TrtStageResult, run_trt_stages, write_trt_stage

FEEDS = [{"x": np.zeros((1, 3, 48, 192), np.float32)}]


def _fake(monkeypatch: pytest.MonkeyPatch, version: str, spec: FakeSpec | None = None):
    trt = make_fake_tensorrt(version, spec)
    monkeypatch.setitem(sys.modules, "tensorrt", trt)
    return trt


def _build_all(trt, version: str, feeds=FEEDS, mark_all: bool = False):
    plans, skipped = build_plans(version, "fp32.onnx", "qdq.onnx")
    return {p.stage_id: build_engine(trt, p, sample_shapes(feeds), mark_all) for p in plans}, skipped


def _config(stage_index: int):
    return FAKE_STATE.builders[stage_index].configs[0]


def test_tensorrt_10_builds_weakly_typed_int8_twice_with_and_without_obey(monkeypatch):
    trt = _fake(monkeypatch, "10.8.0.43")
    outcomes, skipped = _build_all(trt, "10.8.0.43")
    assert skipped == {} and list(outcomes) == ["trt_fp16", "trt_int8", "trt_int8_noobey"]
    assert [_config(i).flags for i in range(3)] == [["FP16"], ["INT8", "FP16", "OBEY_PRECISION_CONSTRAINTS"],
                                                    ["INT8", "FP16"]]
    assert [b.networks[0].creation_flags for b in FAKE_STATE.builders] == [0, 0, 0]  # weakly typed
    assert outcomes["trt_fp16"].plan.model_path == "fp32.onnx" and outcomes["trt_int8"].plan.model_path == "qdq.onnx"
    for index, outcome in enumerate(outcomes.values()):
        assert outcome.status == "ok", outcome.error
        assert _config(index).assigned["profiling_verbosity"] == trt.ProfilingVerbosity.DETAILED
        assert outcome.layer_info == FAKE_LAYER_INFO  # stored verbatim, not re-serialised
        assert outcome.settings["typing"] == "weak" and outcome.settings["calibrator"] is None


def test_no_calibrator_is_ever_set(monkeypatch):
    for version in ("10.8.0.43", "11.1.0"):
        trt = _fake(monkeypatch, version)
        _build_all(trt, version)
        for builder in FAKE_STATE.builders:
            assigned = builder.configs[0].assigned
            assert set(assigned) == {"profiling_verbosity"}, assigned  # int8_calibrator never assigned


def test_tensorrt_11_builds_the_qdq_model_strongly_typed_without_precision_flags(monkeypatch):
    trt = _fake(monkeypatch, "11.1.0")
    outcomes, skipped = _build_all(trt, "11.1.0")
    assert list(outcomes) == ["trt_int8"] and "modelopt.onnx.autocast" in skipped["trt_fp16"]
    (builder,) = FAKE_STATE.builders
    assert builder.networks[0].creation_flags == 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)
    assert builder.configs[0].flags == []
    settings = outcomes["trt_int8"].settings
    assert settings["network_creation_flags"] == ["STRONGLY_TYPED"] and settings["builder_flags"] == []
    assert settings["equivalent_trtexec"] == ("trtexec --onnx=qdq.onnx --stronglyTyped --profilingVerbosity=detailed "
                                              "--exportLayerInfo=layer_info.json")


def test_tensorrt_older_than_10_is_skipped_with_the_reason():
    plans, skipped = build_plans("8.6.1", "fp32.onnx", "qdq.onnx")
    assert plans == [] and set(skipped) == {"trt_fp16", "trt_int8"} and "older than 10" in skipped["trt_int8"]


def test_dynamic_inputs_get_a_profile_from_the_actual_sample_shapes(monkeypatch):
    trt = _fake(monkeypatch, "10.8.0.43", FakeSpec(inputs={"x": (-1, 3, 48, -1)}))
    feeds = [{"x": np.zeros(shape, np.float32)} for shape in [(1, 3, 48, 192), (2, 3, 48, 160), (2, 3, 48, 160)]]
    outcomes, _ = _build_all(trt, "10.8.0.43", feeds)
    (profile,) = _config(0).profiles
    assert profile.shapes == {"x": ([1, 3, 48, 160], [2, 3, 48, 160], [2, 3, 48, 192])}
    assert outcomes["trt_fp16"].settings["profiles"] == [{"x": {"min": [1, 3, 48, 160], "opt": [2, 3, 48, 160],
                                                                "max": [2, 3, 48, 192]}}]


def test_static_inputs_add_no_profile(monkeypatch):
    trt = _fake(monkeypatch, "10.8.0.43")
    outcomes, _ = _build_all(trt, "10.8.0.43")
    assert _config(0).profiles == [] and outcomes["trt_fp16"].settings["profiles"] == []


def test_parser_errors_become_recorded_data(monkeypatch):
    errors = [("UNSUPPORTED_NODE", "No importer registered for op: FancyOp", 7, "head/fancy", "FancyOp"),
              ("INVALID_NODE", "Assertion failed: shiftIsAllZeros(zeroPoint)", 3, "x_QuantizeLinear", "QuantizeLinear")]
    trt = _fake(monkeypatch, "10.8.0.43", FakeSpec(parser_errors=errors))
    outcome = _build_all(trt, "10.8.0.43")[0]["trt_int8"]
    assert outcome.status == "failed" and outcome.layer_info is None
    assert "2 error(s)" in outcome.error and "head/fancy (FancyOp)" in outcome.error
    assert [(e["code"], e["node"], e["node_name"], e["node_operator"]) for e in outcome.parser_errors] == [
        ("UNSUPPORTED_NODE", 7, "head/fancy", "FancyOp"), ("INVALID_NODE", 3, "x_QuantizeLinear", "QuantizeLinear")]
    assert FAKE_STATE.builders[1].configs == []  # nothing is built from a network that did not parse


def test_failed_builds_are_recorded_per_stage_with_unsupported_operators(monkeypatch):
    errors = [("UNSUPPORTED_NODE", "No importer registered for op: FancyOp", 7, "head/fancy", "FancyOp")]
    _fake(monkeypatch, "10.8.0.43", FakeSpec(parser_errors=errors))
    monkeypatch.setattr(trt_stage, "_gpu_name", lambda: None)
    request = TrtRequest("fp32.onnx", "qdq.onnx", None, None, ("y",), ("y",), FEEDS)
    results = run_trt_stages(request)
    assert [(r.stage_id, r.status) for r in results] == [("trt_fp16", "failed"), ("trt_int8", "failed"),
                                                         ("trt_int8_noobey", "failed")]
    details = results[1].details
    assert details["unsupported_operators"] == ["FancyOp"] and details["parser_errors"][0]["node_name"] == "head/fancy"
    assert details["variant"] == "obey_precision_constraints" and results[2].details["pair"] == "trt_int8"
    assert "[I] FAKE parsing qdq.onnx" in results[1].log


def test_build_failure_keeps_the_log_and_drops_verbose_lines(monkeypatch):
    trt = _fake(monkeypatch, "11.1.0", FakeSpec(build_fails=True))
    outcome = _build_all(trt, "11.1.0")[0]["trt_int8"]
    assert outcome.status == "failed" and "build.log" in outcome.error
    assert "[W] FAKE build warning" in outcome.log and not any("tactic timing" in line for line in outcome.log)


def test_mark_all_marks_every_layer_output_but_shape_layers(monkeypatch):
    trt = _fake(monkeypatch, "10.8.0.43")
    outcome = _build_all(trt, "10.8.0.43", mark_all=True)[0]["trt_int8"]
    assert FAKE_STATE.builders[1].networks[0].marked == ["t0", "t1", "t2"]
    assert outcome.settings["marked_outputs"] == 3 and outcome.settings["network"]["qdq_layers"] == 2


def test_stage_files_are_where_the_importer_expects_them(tmp_path):
    # Hand-written strings (no fake involved): the layout contract with collect/trt_import.py.
    result = TrtStageResult("trt_int8", "failed", "the TensorRT ONNX parser failed", log="[E] parse error\n",
                            settings={"format": 1, "builder_flags": ["INT8"]}, layer_info='{"Layers": []}',
                            details={"parser_errors": []})
    with BundleWriter(tmp_path / "b") as writer:
        entry = write_trt_stage(writer, result)
        manifest = {"schema": "qdqreport.bundle", "schema_version": "1.1", "created_at": "2025-01-01T00:00:00Z",
                    "collector": {}, "tools": {}, "host": {}, "models": {}, "inputs": {}, "stages": [entry],
                    "comparisons": [], "artifacts": {}}
        writer.commit(manifest)
    bundle = Bundle(tmp_path / "b")
    assert entry["artifacts"] == {"layer_info": "stages/trt_int8/layer_info.json",
                                  "build_settings": "stages/trt_int8/build_settings.json",
                                  "build_log": "stages/trt_int8/build.log"}
    assert (tmp_path / "b" / "stages/trt_int8/layer_info.json").read_text() == '{"Layers": []}'
    assert json.loads((tmp_path / "b" / "stages/trt_int8/build_settings.json").read_text())["builder_flags"] == ["INT8"]
    assert bundle.manifest["stages"][0]["error"] == "the TensorRT ONNX parser failed"


def test_without_tensorrt_the_stages_are_skipped_with_the_reason():
    if trt_stage.tensorrt_version()[0] is not None:
        pytest.skip("tensorrt is importable here; this test is about machines without it")
    request = TrtRequest("fp32.onnx", "qdq.onnx", None, None, ("y",), ("y",), FEEDS)
    results = run_trt_stages(request)
    assert [(r.stage_id, r.status) for r in results] == [("trt_fp16", "skipped"), ("trt_int8", "skipped")]
    assert all(r.error.startswith("tensorrt is not importable") and "trtexec --exportLayerInfo" in r.error
               for r in results)
