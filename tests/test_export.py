"""`qdqreport export` on a real bundle: Model Explorer node data keyed by the ONNX adapter's node ids,
and Polygraphy RunResults / input JSON that Polygraphy itself loads and replays.

Model Explorer's packages are not installed (ai-edge-model-explorer pulls a 128 MB adapter binary,
Flask and IPython): the format is checked against the fields of its node_data_builder.py
(ai-edge-model-explorer 0.1.34), and the node ids against onnx_ir's NameFixPass, which
model-explorer-onnx 0.4.2 runs before it names nodes (ONNXAdapter.convert -> create_graph).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx_ir.passes.common import NameFixPass

from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main

# node_data_builder.py: GraphNodeData, NodeDataResult and GradientItem fields.
GRAPH_NODE_DATA_FIELDS = {"results", "name", "thresholds", "gradient", "hideInAggregatedStatsTable",
                          "hideInChildrenStatsTable", "hideAggregatedStats", "showExpandedSummaryOnGroupNode",
                          "showLabelCountColumnsInChildrenStatsTable"}
RESULT_FIELDS = {"value", "bgColor", "textColor"}
GRADIENT_FIELDS = {"stop", "bgColor", "textColor"}


@pytest.fixture(scope="module")
def per_layer_bundle(tmp_path_factory: pytest.TempPathFactory, demo: Path) -> Path:
    """The broken demo collected with --per-layer and --save-inputs (real ONNX Runtime runs)."""
    out = tmp_path_factory.mktemp("export") / "bundle"
    code = main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / "cls_int8_x255.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--max-samples", "4", "--per-layer", "--whatif-budget", "0",
                 "--save-inputs", "-o", str(out), "--quiet"])
    assert code == 0
    return out


@pytest.fixture(scope="module")
def overlays(per_layer_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("me") / "overlays"
    assert main(["export", str(per_layer_bundle), "--model-explorer", str(out)]) == 0
    return out


def adapter_ids(path: Path) -> tuple[str, set[str]]:
    """Graph id and node ids as model-explorer-onnx 0.4.2 names them (its convert() and create_graph)."""
    model = ir.serde.deserialize_model(onnx.load(str(path), load_external_data=False))
    NameFixPass()(model)
    graph_id = model.graph.name if model.graph.name is not None else "<main>"
    ids = {node.name or f"<node_{i}>" for i, node in enumerate(model.graph)}
    return graph_id, ids | {f"[value] {value.name}" for value in model.graph.inputs}


def check_node_data_format(data: dict) -> None:
    assert isinstance(data, dict) and data
    for graph_data in data.values():
        assert set(graph_data) <= GRAPH_NODE_DATA_FIELDS and graph_data["results"]
        for result in graph_data["results"].values():
            assert set(result) <= RESULT_FIELDS and isinstance(result["value"], (int, float))
            assert np.isfinite(result["value"])
        stops = [item["stop"] for item in graph_data["gradient"]]
        assert all(set(item) <= GRADIENT_FIELDS for item in graph_data["gradient"])
        assert stops[0] == 0 and stops[-1] == 1 and stops == sorted(stops)


@pytest.mark.slow
@pytest.mark.parametrize("role, model", [("fp32", "cls_fp32.onnx"), ("qdq", "cls_int8_x255.onnx")])
def test_model_explorer_ids_are_the_onnx_adapters(overlays: Path, demo: Path, role: str, model: str) -> None:
    graph_id, ids = adapter_ids(demo / model)
    files = sorted(overlays.glob(f"{role}.*.json"))
    assert {f.name.split(".")[1] for f in files} == {"local_sqnr_db", "sqnr_db", "cosine", "clipped_share",
                                                      "precision_bits"}
    for file in files:
        data = json.loads(file.read_text())
        check_node_data_format(data)
        assert list(data) == [graph_id]
        assert set(data[graph_id]["results"]) <= ids, file.name


def test_unnamed_and_repeated_node_names_get_the_adapters_ids(demo: Path, tmp_path: Path) -> None:
    """The demo names its compute nodes; a copy with every third name removed and others repeated
    must get, node by node, the ids NameFixPass gives ("node", "node_1", ..., "Conv@0_1")."""
    from qdqreport.export.model_explorer import graph_ids

    model = onnx.load(str(demo / "cls_int8_x255.onnx"))
    for i, node in enumerate(model.graph.node):
        node.name = "" if i % 3 == 0 else ("Conv@0" if i % 7 == 0 else node.name)
    onnx.save(model, str(tmp_path / "renamed.onnx"))
    ours = graph_ids(model)
    ir_model = ir.serde.deserialize_model(onnx.load(str(tmp_path / "renamed.onnx")))
    NameFixPass()(ir_model)
    theirs = {value.name: node.name for node in ir_model.graph for value in node.outputs}
    assert {t: ours.by_output[t] for t in theirs} == theirs
    assert sum(1 for name in theirs.values() if name.startswith("node_")) > 250


@pytest.mark.slow
def test_model_explorer_values_are_the_per_layer_tables(overlays: Path, per_layer_bundle: Path, demo: Path) -> None:
    bundle = Bundle(per_layer_bundle)
    rows = bundle.table("compare/ort_qdq__vs__ort_fp32.layers.csv", "layers")
    qdq = onnx.load(str(demo / "cls_int8_x255.onnx"))
    producer = {out: node.name for node in qdq.graph.node for out in node.output}
    data = json.loads((overlays / "qdq.local_sqnr_db.json").read_text())["paddle-onnx"]["results"]
    checked = 0
    for row in rows:
        if row["kind"] == "activation" and row["local_sqnr_db"] is not None and np.isfinite(row["local_sqnr_db"]):
            assert data[producer[row["tensor"]]]["value"] <= row["local_sqnr_db"]  # the worst output of the node
            checked += 1
    assert checked > 100
    worst = min(data.items(), key=lambda item: item[1]["value"])
    assert worst[1]["value"] == min(r["local_sqnr_db"] for r in rows if r["local_sqnr_db"] is not None)
    bits = json.loads((overlays / "qdq.precision_bits.json").read_text())["paddle-onnx"]["results"]
    assert {v["value"] for v in bits.values()} == {8.0, 16.0}  # INT8 and the FP16 float part


@pytest.mark.slow
def test_polygraphy_round_trip(per_layer_bundle: Path, tmp_path: Path, demo: Path) -> None:
    from polygraphy.comparator import RunResults
    from polygraphy.json import load_json

    out = tmp_path / "replay"
    assert main(["export", str(per_layer_bundle), "--polygraphy", str(out)]) == 0
    bundle = Bundle(per_layer_bundle)
    with np.load(demo / "eval.npz") as data:
        x = data["x"]
    feeds = load_json(str(out / "inputs.json"))
    assert len(feeds) == 4
    for i, feed in enumerate(feeds):  # iteration i = sample i
        np.testing.assert_array_equal(feed["x"], x[i:i + 1])
    for stage in ("ort_fp32", "ort_qdq"):
        results = RunResults.load(str(out / f"{stage}.json"))
        (runner, iterations), = results.items()
        assert runner == f"qdqreport_{stage}"
        expected = load_stage_outputs(bundle, stage)
        assert len(iterations) == len(expected) == 4
        for iteration, sample in zip(iterations, expected):
            assert set(iteration.keys()) == set(sample)
            for name, value in sample.items():
                np.testing.assert_array_equal(iteration[name], value)


@pytest.mark.slow
def test_polygraphy_replays_the_stage(per_layer_bundle: Path, tmp_path: Path, demo: Path) -> None:
    """What a GPU machine does with --trt, done here with Polygraphy's ONNX Runtime runner."""
    out = tmp_path / "replay"
    assert main(["export", str(per_layer_bundle), "--polygraphy", str(out)]) == 0
    polygraphy = Path(sys.executable).with_name("polygraphy")
    run = subprocess.run([str(polygraphy), "run", str(demo / "cls_int8_x255.onnx"), "--onnxrt", "--load-inputs",
                          str(out / "inputs.json"), "--load-outputs", str(out / "ort_qdq.json")],
                         capture_output=True, text=True, timeout=300)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-2000:]
    assert "Passed: 4/4 iterations" in log


@pytest.mark.slow
def test_saved_inputs_data_loader_feeds_the_samples(per_layer_bundle: Path, demo: Path) -> None:
    from polygraphy.mod import import_from_script

    manifest = Bundle(per_layer_bundle).manifest
    assert manifest["artifacts"]["eval_inputs"] == "inputs/eval_inputs.npz"
    load_data = import_from_script(str(per_layer_bundle / manifest["artifacts"]["polygraphy_data_loader"]), "load_data")
    with np.load(demo / "eval.npz") as data:
        x = data["x"]
    feeds = list(load_data())
    assert len(feeds) == 4
    for i, feed in enumerate(feeds):
        np.testing.assert_array_equal(feed["x"], x[i:i + 1])


def test_polygraphy_without_saved_inputs_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bundle = Path(__file__).resolve().parent.parent / "sample_bundles" / "cls_healthy"
    assert main(["export", str(bundle), "--polygraphy", str(tmp_path / "p")]) == 0
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["ort_fp32.json", "ort_qdq.json", "ort_qdq_fp32.json"]
    assert "--save-inputs" in capsys.readouterr().err


@pytest.mark.slow
def test_export_bad_input_is_one_line_exit_2(per_layer_bundle: Path, tmp_path: Path, demo: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    cases = [
        (["export", str(per_layer_bundle)], "nothing to write"),
        (["export", str(per_layer_bundle), "--model-explorer", str(tmp_path / "m"), "--fp32",
          str(demo / "cls_int8.onnx")], "sha256 differs"),
        (["export", str(per_layer_bundle), "--model-explorer", str(tmp_path / "m"), "--qdq",
          str(tmp_path / "missing.onnx")], "cannot read the qdq model"),
    ]
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    cases.append((["export", str(per_layer_bundle), "--polygraphy", str(tmp_path / "full")], "--force"))
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "m").exists() and (tmp_path / "full" / "keep.txt").read_text() == "x"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left behind


@pytest.mark.slow
def test_force_replaces_an_earlier_export_but_never_a_folder_of_other_files(per_layer_bundle: Path, tmp_path: Path,
                                                                           capsys) -> None:
    out = tmp_path / "p"
    assert main(["export", str(per_layer_bundle), "--polygraphy", str(out)]) == 0
    assert main(["export", str(per_layer_bundle), "--polygraphy", str(out), "--force"]) == 0  # an earlier export
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "train.py").write_text("x")
    capsys.readouterr()
    assert main(["export", str(per_layer_bundle), "--polygraphy", str(tmp_path / "mine"), "--force"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "only an earlier export" in err, err
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["train.py"]
