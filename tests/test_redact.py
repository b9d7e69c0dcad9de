"""--redact on collect and report: no absolute path, home folder or host name left in any output
file, and the manifest / report provenance say what was removed (real demo collect)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from pathlib import Path

import pytest

from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.redact import Redactor, file_name

REPO = Path(__file__).resolve().parent.parent


def _collect(demo: Path, work: Path, out: Path, *extra: str) -> None:
    # Models, inputs and the ModelOpt log from a temp folder, calibration from the repository: both
    # kinds of absolute path reach argv, the manifest, the input statistics and the log.
    for name in ("cls_fp32.onnx", "cls_int8_x255.onnx", "eval.npz", "modelopt_x255.log"):
        shutil.copy(demo / name, work / name)
    code = main(["collect", "--fp32", str(work / "cls_fp32.onnx"), "--qdq", str(work / "cls_int8_x255.onnx"),
                 "--inputs", str(work / "eval.npz"), "--calib", str(demo / "calib_x255.npz"),
                 "--modelopt-log", str(work / "modelopt_x255.log"), "--max-samples", "4", "--save-inputs",
                 "-o", str(out), "--quiet", *extra])
    assert code == 0


def _leaks(folders: list[Path], work: Path) -> list[str]:
    secrets = {str(work), str(work.resolve()), str(REPO), str(Path.home()) + "/", os.getcwd() + "/"}
    host = socket.gethostname()
    found = []
    for path in sorted(p for folder in folders for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path}: {s}" for s in secrets if s.encode() in data]
        # Compressed arrays are random bytes: a short host name turns up there by chance.
        if path.suffix != ".npz" and re.search(rb"(?<![\w.-])" + re.escape(host.encode()) + rb"(?![\w-])", data):
            found.append(f"{path}: host name {host}")
    return found


@pytest.mark.slow
def test_collect_and_report_redact_every_output(demo: Path, tmp_path: Path) -> None:
    work = tmp_path / "private"
    work.mkdir()
    bundle, report = tmp_path / "bundle", tmp_path / "report"
    _collect(demo, work, bundle, "--redact")
    assert main(["report", str(bundle), "-o", str(report), "--redact"]) == 0
    files = {p.name for p in report.iterdir()}
    assert {"report.html", "report.md", "findings.json"} <= files
    assert _leaks([bundle, report], work) == []
    manifest = Bundle(bundle).manifest  # still a valid, hash-checked bundle
    removed = manifest["redaction"]["removed"]
    assert manifest["host"] == {} and "host.platform" in removed and "host.cpu" in removed
    assert "models.fp32.path: folder of the path" in removed
    assert manifest["models"]["qdq"]["path"] == "cls_int8_x255.onnx"
    assert str(work / "eval.npz") not in manifest["collector"]["argv"] and "eval.npz" in manifest["collector"]["argv"]
    assert "redacted: " in (report / "report.md").read_text()
    assert "<dt>redacted</dt>" in (report / "report.html").read_text()


@pytest.mark.slow
def test_report_redact_leaves_the_bundle_alone(demo: Path, tmp_path: Path) -> None:
    work = tmp_path / "private"
    work.mkdir()
    bundle = tmp_path / "bundle"
    _collect(demo, work, bundle)
    before = (bundle / "manifest.json").read_text()
    assert str(work) in before and json.loads(before)["host"]  # the plain bundle does hold them
    assert main(["report", str(bundle), "-o", str(tmp_path / "plain")]) == 0
    assert _leaks([tmp_path / "plain"], work)  # and an unredacted report shows them
    assert main(["report", str(bundle), "-o", str(tmp_path / "public"), "--redact"]) == 0
    assert _leaks([tmp_path / "public"], work) == []
    assert (bundle / "manifest.json").read_text() == before


@pytest.mark.parametrize("text, expected", [
    ("/data/private/models/model.onnx", "model.onnx"),
    ("loaded /data/private/eval.npz (4 samples)", "loaded eval.npz (4 samples)"),
    ("/backbone/conv1/Conv_output_0", "/backbone/conv1/Conv_output_0"),  # an ONNX tensor name, not a path
    ("iVBORw0KGgo+/data/private/x", "iVBORw0KGgo+/data/private/x"),  # inside base64 image data
])
def test_redactor_reduces_paths_under_its_roots_only(text: str, expected: str) -> None:
    assert Redactor(roots=("/data/private",)).text(text) == expected


def test_file_name_of_any_path() -> None:
    assert file_name("C:\\Users\\me\\model.onnx") == "model.onnx"
    assert file_name("scripts/decode.py:decode") == "decode.py:decode"
    assert file_name("out/") == "out"
