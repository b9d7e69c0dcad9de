"""The `report`, `demo` and `rules` commands end to end, on real bundles of the demo model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qdqreport.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_report_ranks_the_calibration_mismatch_first(broken_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["report", str(broken_bundle), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / "out" / name) for name in ("report.html", "report.md", "findings.json")]
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())["findings"]
    assert findings[0]["id"] == "QR003" and findings[0]["severity"] == "error"
    assert "QR001" in [f["id"] for f in findings]
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert markdown.startswith("## ") and "Quantization collapses the outputs" in markdown.splitlines()[0]


@pytest.mark.slow
def test_fail_on_sets_the_exit_code(broken_bundle: Path, healthy_bundle: Path, tmp_path: Path) -> None:
    assert main(["report", str(broken_bundle), "-o", str(tmp_path / "a"), "--fail-on", "error"]) == 1
    assert main(["report", str(healthy_bundle), "-o", str(tmp_path / "b"), "--fail-on", "error"]) == 0


@pytest.mark.slow
def test_healthy_bundle_has_no_error_finding(healthy_bundle: Path, tmp_path: Path) -> None:
    main(["report", str(healthy_bundle), "-o", str(tmp_path / "out")])
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())["findings"]
    assert not [f for f in findings if f["severity"] == "error"]


@pytest.mark.slow
def test_report_on_a_too_new_bundle_is_refused_and_writes_nothing(broken_bundle: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    bundle = tmp_path / "new"
    shutil.copytree(broken_bundle, bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["schema_version"] = "9.0"
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", str(bundle), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "schema 9.0 is newer" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.slow
def test_sample_bundles_render_offline(tmp_path: Path) -> None:
    for bundle in sorted((ROOT / "sample_bundles").iterdir()):
        if bundle.is_dir():
            assert main(["report", str(bundle), "-o", str(tmp_path / bundle.name)]) == 0
            assert (tmp_path / bundle.name / "report.html").stat().st_size > 10_000


def test_rules_lists_and_explains(capsys: pytest.CaptureFixture) -> None:
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert "QR001" in listing and "QR003" in listing
    assert main(["rules", "QR003"]) == 0
    explained = capsys.readouterr().out
    assert "Why it matters:" in explained and "Fix:" in explained
    assert main(["rules", "QR999"]) == 2


@pytest.mark.slow
def test_demo_runs_from_any_folder(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "qdqreport", "demo", "-o", str(tmp_path / "demo")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"report: {tmp_path / 'demo' / 'report.html'}" in result.stdout
    assert "ort_fp32 samples: 50/50" in result.stderr and "ort_qdq samples: 50/50" in result.stderr
    html = (tmp_path / "demo" / "report.html").read_text()
    assert "raw 0–255 pixels" in html and "25 of 50 top-1 decisions change" in html


@pytest.mark.slow
def test_real_bundle_renders_to_identical_bytes_twice(broken_bundle: Path, tmp_path: Path) -> None:
    main(["report", str(broken_bundle), "-o", str(tmp_path / "a")])
    main(["report", str(broken_bundle), "-o", str(tmp_path / "b")])
    for name in ("report.html", "report.md", "findings.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_bundle_with_a_failed_stage_still_renders(tmp_path: Path, demo: Path) -> None:
    import onnx

    model = onnx.load(str(demo / "cls_int8.onnx"))
    node = next(n for n in model.graph.node if n.op_type == "HardSigmoid")
    node.domain = "com.example.missing"  # passes the ONNX checker; no runtime implements it
    model.opset_import.append(onnx.helper.make_opsetid("com.example.missing", 1))
    onnx.save(model, tmp_path / "bad_runtime.onnx")
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(tmp_path / "bad_runtime.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--max-samples", "2", "-o", str(tmp_path / "b"), "--quiet"]) == 0
    assert main(["report", str(tmp_path / "b"), "-o", str(tmp_path / "out")]) == 0
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())["findings"]
    failed = [f for f in findings if f["id"] == "QR008"]
    assert failed and "ort_qdq" in failed[0]["subject"]
    assert "session creation failed" in (tmp_path / "out" / "report.md").read_text()


def test_rules_doc_is_generated_from_the_registry() -> None:
    from qdqreport.cli import rules_markdown
    from qdqreport.rules import discover

    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown(discover()), \
        "docs/rules.md is stale: run `qdqreport rules --markdown > docs/rules.md`"


_EXIT_NOW = """
import atexit, sys, tempfile, threading, time
from qdqreport.cli import exit_now
scratch = tempfile.TemporaryDirectory(prefix="exit-now-")  # removed at exit by its finalizer, an atexit function
print(scratch.name)
atexit.register(lambda: print("atexit ran"))
sys.stdout.write("buffered, not yet flushed")
if sys.argv[1] == "thread":
    threading.Thread(target=time.sleep, args=(0.5,)).start()
sys.exit(exit_now(int(sys.argv[2])) + 100 if sys.argv[1] == "thread" else exit_now(int(sys.argv[2])))
"""


@pytest.mark.parametrize("alive", ["alone", "thread"])
def test_exit_now_runs_the_atexit_functions_and_flushes(alive: str) -> None:
    """cli.run ends the process without the interpreter's teardown: the exit code, the atexit functions (a scratch
    folder's removal among them) and the buffered output are kept; with another thread alive it returns the code for
    the usual exit."""
    result = subprocess.run([sys.executable, "-c", _EXIT_NOW, alive, "3"], capture_output=True, text=True, timeout=60)
    lines = result.stdout.splitlines()
    assert result.returncode == (3 if alive == "alone" else 103)
    assert lines[1:] == ["buffered, not yet flushedatexit ran"]
    assert not Path(lines[0]).exists()


def test_python_m_qdqreport_exits_with_the_command_code(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "qdqreport", "collect", "--fp32", str(tmp_path / "missing.onnx"),
                             "--qdq", str(tmp_path / "q.onnx"), "--inputs", str(tmp_path / "x.npz"), "-o",
                             str(tmp_path / "b"), "--quiet"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "missing.onnx: no such file" in result.stderr


def test_exit_after_a_user_script_is_the_usual_one(tmp_path: Path) -> None:
    """A user's script (--postprocess, a data-loader script) may leave a file open and unflushed: after one ran,
    exit_now leaves the exit to the interpreter, whose teardown flushes it."""
    script, log = tmp_path / "user.py", tmp_path / "user.log"
    script.write_text(f"LOG = open({str(log)!r}, 'w')\nLOG.write('written by the script')\n")
    code = ("import sys\nfrom pathlib import Path\nfrom qdqreport.cli import exit_now\n"
            "from qdqreport.collect.script import import_script\n"
            f"user = import_script(Path({str(script)!r}), 'test script')\nsys.exit(exit_now(4) + 1)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 5  # exit_now returned the code instead of ending the process
    assert log.read_text() == "written by the script"
