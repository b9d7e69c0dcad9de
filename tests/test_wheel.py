"""The wheel carries the top-level templates/ and the rule examples' data: build it, install it into a fresh venv,
render a report, run every rule's examples."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_renders_a_report_from_a_fresh_venv(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"),
                            str(ROOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("qdqreport-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "qdqreport/templates/report.html.j2" in names and "qdqreport/demo/cls_fp32.onnx" in names
    assert "qdqreport/schemas/findings.schema.json" in names  # the published findings.json schema
    assert "qdqreport/testing/data/trt/tests_inputs_mobilenet.qat.onnx.engine.graph.json" in names  # rule examples' data
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True)
    out = tmp_path / "report"
    # Run from tmp_path so the source tree's templates/ cannot be picked up by accident.
    result = subprocess.run([str(env_dir / "bin" / "qdqreport"), "report", str(ROOT / "sample_bundles" / "cls_calib_x255"),
                             "-o", str(out)], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    html = (out / "report.html").read_text()
    assert "calibration" in html.lower() and (out / "report.md").stat().st_size > 1000
    probe = subprocess.run([str(python), "-c", "import sys, qdqreport.pipeline, qdqreport.render, qdqreport.cli; "
                            "print('onnxruntime' in sys.modules, 'onnx' in sys.modules)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert probe.stdout.split() == ["False", "False"]  # the renderer installs and runs without the collector's stack
    # Every rule's Fires/Quiet examples run from the installed package: their data ships in the wheel.
    examples = subprocess.run([str(python), "-c", "from qdqreport.testing.examples import main; main()"],
                              cwd=tmp_path, capture_output=True, text=True)
    assert examples.returncode == 0, examples.stdout[-3000:] + examples.stderr[-3000:]
    count = int(examples.stdout.split()[-5])
    assert count >= 100 and examples.stdout.strip().endswith(f"{count} examples run, 0 problems")
