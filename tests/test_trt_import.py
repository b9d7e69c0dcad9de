"""`qdqreport import-trt` on the real TREx dumps and on real Polygraphy RunResults files.

Polygraphy outputs: a real `polygraphy run --onnxrt --save-outputs` of the demo model is refused
(it is not TensorRT). The success path is exercised with the same real file whose runner is
renamed to a TensorRT runner name (fixture `renamed_ort_run`): it tests parsing and the
iteration -> sample mapping only, and is never committed as a sample bundle.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.pipeline import render_report
from qdqreport.stage_names import stage_name
from qdqreport.testing.trt_dumps import DUMPS

DATA = DUMPS
DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"
MOBILENET = DATA / "tests_inputs_mobilenet.qat.onnx.engine.graph.json"
RESIDUALS = DATA / "tests_inputs_mobilenet_v2_residuals.qat.onnx.engine.graph.json"
PROFILE = DATA / "tests_inputs_mobilenet.qat.onnx.engine.profile.json"
SETTINGS = DATA / "tests_inputs_mobilenet.qat.onnx.engine.build.metadata.json"
RESNET16 = DATA / "examples_pytorch_resnet_A100_fp16_resnet.onnx.engine.graph.json"
RESNET32 = DATA / "examples_pytorch_resnet_A100_fp32_resnet.onnx.engine.graph.json"
SAMPLES = 3
LOADER = f"""import numpy as np
def load_data():
    for row in np.load({str(DEMO / 'eval.npz')!r})["x"][:{SAMPLES}]:
        yield {{"x": row[None]}}
"""


def snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def polygraphy(*args: str) -> None:
    exe = Path(sys.executable).parent / "polygraphy"
    subprocess.run([str(exe), "run", *args], check=True, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> Path:
    """A real bundle of the demo classifier on its first 3 evaluation samples."""
    out = tmp_path_factory.mktemp("collected") / "bundle"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"), "--inputs",
                 str(DEMO / "eval.npz"), "--max-samples", str(SAMPLES), "-o", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def ort_run(tmp_path_factory) -> Path:
    """A real `polygraphy run --onnxrt --save-outputs` of the QDQ demo model on the bundle's 3 samples."""
    folder = tmp_path_factory.mktemp("polygraphy")
    (folder / "loader.py").write_text(LOADER)
    polygraphy(str(DEMO / "cls_int8.onnx"), "--onnxrt", "--data-loader-script", str(folder / "loader.py"),
               "--save-outputs", str(folder / "ort_run.json"))
    return folder / "ort_run.json"


@pytest.fixture()
def renamed_ort_run(ort_run, tmp_path) -> Path:
    """The real ONNX Runtime RunResults with its runner renamed to a TensorRT runner name (parser test only)."""
    data = json.loads(ort_run.read_text())
    name = data["lst"][0][0]
    assert name.startswith("onnxrt-runner-")
    data["lst"][0][0] = "trt-runner-N0-renamed-from-" + name
    for iteration in data["lst"][0][1]:
        iteration["runner_name"] = data["lst"][0][0]
    path = tmp_path / "renamed_ort_run.json"
    path.write_text(json.dumps(data))
    return path


def imported(tmp_path: Path, stage: str, *files: str) -> Path:
    bundle = tmp_path / "engine"
    assert main(["import-trt", str(bundle), "--new", "--stage", stage, *files]) == 0
    return bundle


@pytest.mark.parametrize(("dump", "stage", "precisions"), [
    (MOBILENET, "trt_int8", {"int8": 53, "fp16": 15, "fp32": 4}),
    (RESIDUALS, "trt_int8", {"int8": 53, "fp16": 3, "fp32": 1}),
    (RESNET16, "trt_fp16", {"fp16": 24, "fp32": 1}),
    (RESNET32, "trt_fp16", {"fp32": 24}),
])
@pytest.mark.slow
def test_every_dump_imports_verbatim_and_renders(tmp_path, dump, stage, precisions):
    bundle = Bundle(imported(tmp_path, stage, "--layer-info", str(dump)))
    entry = bundle.stage(stage)
    assert bundle.read_bytes(entry["artifacts"]["layer_info"]) == dump.read_bytes()  # stored verbatim
    assert entry["status"] == "skipped" and "without outputs" in entry["error"]
    assert entry["details"]["source"] == "imported"
    assert [s["id"] for s in bundle.manifest["stages"]] == ["ort_fp32", "ort_qdq", "trt_fp16", "trt_int8"]
    assert bundle.manifest["models"] == {"fp32": None, "qdq": None}
    assert Context(bundle).engines[stage].engine.precision_counts() == precisions
    outcome = render_report(bundle.location, tmp_path / "report")
    html = (tmp_path / "report" / "report.html").read_text()
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert outcome.exit_code == 0 and 'id="engine"' in html and "### Engine" in markdown
    for stage_id in ("ort_fp32", "ort_qdq", "trt_fp16", "trt_int8"):
        assert f"<tr><td>{stage_name(stage_id)}</td>" in html  # the name users know, not the id


def test_mobilenet_findings_show_what_the_engine_does(tmp_path):
    bundle = imported(tmp_path, "trt_int8", "--layer-info", str(MOBILENET), "--profile", str(PROFILE),
                      "--build-settings", str(SETTINGS))
    render_report(bundle, tmp_path / "report")
    findings = {f["id"]: f for f in json.loads((tmp_path / "report" / "findings.json").read_text())["findings"]}
    assert findings["QR100"]["title"] == "16 INT8 layers of TensorRT INT8 write float outputs"
    assert findings["QR101"]["title"] == "16 unfused Q/DQ Reformat layers in TensorRT INT8"
    assert "QR103" not in findings  # detailed verbosity
    residual = imported(tmp_path / "r", "trt_int8", "--layer-info", str(RESIDUALS))
    render_report(residual, tmp_path / "r" / "report")
    fewer = {f["id"]: f for f in json.loads((tmp_path / "r" / "report" / "findings.json").read_text())["findings"]}
    assert fewer["QR100"]["title"] == "1 INT8 layer of TensorRT INT8 writes float outputs"
    assert fewer["QR101"]["title"] == "1 unfused Q/DQ Reformat layer in TensorRT INT8"


def test_second_engine_is_added_and_diffed(tmp_path):
    bundle = imported(tmp_path, "trt_fp16", "--layer-info", str(RESNET16))
    assert main(["import-trt", str(bundle), "--stage", "trt_int8", "--layer-info", str(MOBILENET)]) == 0
    ctx = Context(Bundle(bundle))
    assert set(ctx.engines) == {"trt_fp16", "trt_int8"}
    assert len(Bundle(bundle).manifest["imports"]) == 2
    render_report(bundle, tmp_path / "report")
    assert "Engine difference" in (tmp_path / "report" / "report.html").read_text()


@pytest.mark.parametrize(("args", "message"), [
    (["--layer-info", str(PROFILE)], "tests_inputs_mobilenet.qat.onnx.engine.profile.json: is a JSON list, not a layer-info"),
    (["--profile", str(MOBILENET)], "is a layer-info file"),
    (["--layer-info", "missing.json"], "missing.json: no such file (--layer-info)"),
    (["--build-settings", str(PROFILE)], "is not a JSON object"),
    (["--build-log", str(SETTINGS)], "does not look like a TensorRT build log"),
    (["--layer-info", str(RESIDUALS), "--profile", str(PROFILE)], "come from different engines"),
    (["--stage", "trt_fp16", "--layer-info", str(MOBILENET)], "this is an INT8 engine"),
])
@pytest.mark.slow
def test_bad_files_give_one_line_errors_and_leave_the_bundle_untouched(collected, tmp_path, capsys, args, message):
    bundle = tmp_path / "bundle"
    shutil.copytree(collected, bundle)
    before = snapshot(bundle)
    stage = [] if "--stage" in args else ["--stage", "trt_int8"]
    assert main(["import-trt", str(bundle), *stage, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert snapshot(bundle) == before
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


@pytest.mark.slow
def test_invalid_json_names_line_and_column(collected, tmp_path, capsys):
    broken = tmp_path / "layers.json"
    broken.write_text(MOBILENET.read_text()[:500])
    assert main(["import-trt", str(collected), "--stage", "trt_int8", "--layer-info", str(broken), "-o",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "layers.json: not valid JSON (" in err and "line" in err and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_onnxruntime_run_results_are_refused(collected, ort_run, tmp_path, capsys):
    bundle = tmp_path / "bundle"
    shutil.copytree(collected, bundle)
    before = snapshot(bundle)
    assert main(["import-trt", str(bundle), "--stage", "trt_int8", "--outputs", str(ort_run)]) == 2
    err = capsys.readouterr().err
    assert "onnxrt-runner-N" in err and "are not TensorRT runners" in err and "refusing" in err
    assert snapshot(bundle) == before


@pytest.mark.slow
def test_renamed_run_maps_iterations_to_samples(collected, renamed_ort_run, tmp_path):
    out = tmp_path / "with_outputs"
    assert main(["import-trt", str(collected), "--stage", "trt_int8", "--outputs", str(renamed_ort_run),
                 "--layer-info", str(MOBILENET), "-o", str(out)]) == 0
    bundle = Bundle(out)
    stage = bundle.stage("trt_int8")
    assert stage["status"] == "ok" and stage["details"]["runner"].startswith("trt-runner-N0-renamed-from-onnxrt")
    comparison = next(c for c in bundle.manifest["comparisons"] if c["purpose"] == "deployment")
    rows = Context(bundle).sample_rows(comparison["id"])
    # The same ONNX Runtime model on the same samples: identical outputs iff iteration i landed on sample i.
    assert [r["sample"] for r in rows] == list(range(SAMPLES)) and all(r["cosine"] == 1.0 for r in rows)
    assert Bundle(collected).stage("trt_int8")["status"] == "skipped"  # -o left the source alone


@pytest.mark.slow
def test_per_iteration_folder_and_count_check(collected, tmp_path, capsys):
    (tmp_path / "loader.py").write_text(LOADER)
    folder = tmp_path / "run"  # extensionless: Polygraphy 0.53 writes one JSON per iteration
    polygraphy(str(DEMO / "cls_int8.onnx"), "--onnxrt", "--data-loader-script", str(tmp_path / "loader.py"),
               "--save-outputs", str(folder))
    assert sorted(p.name for p in folder.iterdir()) == [f"{i:010d}.json" for i in range(SAMPLES)]
    for path in folder.iterdir():  # rename the runner in each iteration file (parser test only)
        path.write_text(path.read_text().replace("onnxrt-runner-N", "trt-runner-N0-renamed-from-onnxrt-runner-N"))
    out = tmp_path / "out"
    assert main(["import-trt", str(collected), "--stage", "trt_int8", "--outputs", str(folder), "-o", str(out)]) == 0
    outputs = Bundle(out).npz(Bundle(out).stage("trt_int8")["artifacts"]["outputs"])
    reference = Bundle(out).npz(Bundle(out).stage("ort_qdq")["artifacts"]["outputs"])
    assert sorted(outputs) == sorted(reference)
    assert all(np.array_equal(outputs[k], reference[k]) for k in reference)
    (folder / f"{SAMPLES - 1:010d}.json").unlink()
    assert main(["import-trt", str(collected), "--stage", "trt_int8", "--outputs", str(folder), "-o",
                 str(tmp_path / "short")]) == 2
    assert f"2 iterations, but the bundle has {SAMPLES} samples" in capsys.readouterr().err


@pytest.mark.slow
def test_outputs_need_ort_outputs(renamed_ort_run, tmp_path, capsys):
    assert main(["import-trt", str(tmp_path / "b"), "--new", "--stage", "trt_int8", "--outputs", str(renamed_ort_run)]) == 2
    assert "--new bundles hold no ONNX Runtime outputs" in capsys.readouterr().err


@pytest.mark.slow
def test_zip_bundle_is_rewritten_in_place(collected, tmp_path):
    archive = tmp_path / "bundle.zip"
    assert main(["import-trt", str(collected), "--stage", "trt_int8", "--layer-info", str(MOBILENET), "-o",
                 str(archive)]) == 0
    assert main(["import-trt", str(archive), "--stage", "trt_fp16", "--layer-info", str(RESNET16)]) == 0
    bundle = Bundle(archive)
    assert {"trt_fp16", "trt_int8"} <= set(Context(bundle).engines)
    assert bundle.stage("ort_qdq")["status"] == "ok"  # the collected stages came along


def test_sample_bundle_is_the_imported_real_dump(tmp_path):
    bundle = Bundle(Path(__file__).resolve().parent.parent / "sample_bundles" / "trt_mobilenet_qat_layerinfo")
    stage = bundle.stage("trt_int8")
    for kind, source in (("layer_info", MOBILENET), ("profile", PROFILE), ("build_settings", SETTINGS)):
        assert bundle.read_bytes(stage["artifacts"][kind]) == source.read_bytes()
    assert bundle.manifest["imports"][0]["argv"][:3] == ["qdqreport", "import-trt", "sample_bundles/trt_mobilenet_qat_layerinfo"]
    render_report(bundle.location, tmp_path)
    titles = {f["id"]: f["title"] for f in json.loads((tmp_path / "findings.json").read_text())["findings"]}
    assert titles["QR100"].startswith("16 INT8 layers") and titles["QR101"].startswith("16 unfused Q/DQ")


def test_import_needs_neither_onnxruntime_nor_tensorrt(tmp_path):
    code = ("import sys\n"
            "for name in ('onnxruntime', 'tensorrt', 'onnx'): sys.modules[name] = None  # importing them now fails\n"
            "from qdqreport.cli import main\n"
            f"sys.exit(main(['import-trt', {str(tmp_path / 'b')!r}, '--new', '--stage', 'trt_int8', "
            f"'--layer-info', {str(MOBILENET)!r}, '--profile', {str(PROFILE)!r}]))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert Bundle(tmp_path / "b").stage("trt_int8")["artifacts"]["profile"] == "stages/trt_int8/profile.json"
