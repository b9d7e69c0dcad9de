"""collect's own stderr and the ModelOpt log it is given, on real files.

- ModelOpt 0.47's --log_file (tests/data/modelopt/calibrated.log_file.log) stops before the summary: collect says
  so in one line and the bundle records the log as partial, so the report does not show "0 warnings" as measured.
- A --modelopt-log that is not a ModelOpt log (a binary .onnx, a text without a ModelOpt line) is refused:
  one line naming the file and the fix, exit 2, nothing written.
- ONNX Runtime's session warnings (a ModelOpt model's FP16 float part on the CPU provider: "can't constant fold
  Mul node 'conv1_scale'", tests/data/models/l2net_modelopt_int8.onnx) are counted, not printed: --quiet prints
  nothing, the default one line.
- confirm saves ModelOpt's console as its log, not --log_file's file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qdqreport.cli import main

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "qdqreport" / "demo"
MODELS = ROOT / "tests" / "data" / "models"
LOGS = ROOT / "tests" / "data" / "modelopt"
FIX = "2>&1 | tee quant.log"


def _demo_args(out: Path, log: Path, *more: str) -> list[str]:
    return ["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"),
            "--inputs", str(DEMO / "eval.npz"), "--max-samples", "2", "--modelopt-log", str(log), "-o", str(out), *more]


@pytest.mark.slow
def test_log_file_output_is_recorded_partial(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    log = LOGS / "calibrated.log_file.log"  # what ModelOpt 0.47 wrote to --log_file
    out = tmp_path / "bundle"
    assert main(_demo_args(out, log)) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "calibrated.log_file.log" in line]
    assert len(said) == 1 and "warning:" in said[0] and "quantized-node summary" in said[0] and FIX in said[0]
    parsed = json.loads((out / "quant" / "modelopt_log.json").read_text())
    assert parsed["complete"] is False and parsed["total_nodes"] is None and parsed["quantized_nodes"] is None
    assert main(["validate", str(out)]) == 0
    assert main(["report", str(out), "-o", str(tmp_path / "report")]) == 0
    md = (tmp_path / "report" / "report.md").read_text()
    assert "**ModelOpt log (partial):**" in md and "in the part it holds" in md
    assert "**ModelOpt log:** — nodes" not in md
    assert "ModelOpt log (partial)</h3>" in (tmp_path / "report" / "report.html").read_text()


@pytest.mark.slow
def test_console_log_is_complete_and_quiet(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "bundle"
    assert main(_demo_args(out, LOGS / "calibrated.log")) == 0
    assert "calibrated.log" not in capsys.readouterr().err
    parsed = json.loads((out / "quant" / "modelopt_log.json").read_text())
    assert parsed["complete"] is True and parsed["quantized_nodes"] == 129


def _not_logs(tmp: Path) -> dict[str, tuple[Path, str]]:
    script = tmp / "quantize.sh"  # mentions ModelOpt, but is not its log
    script.write_text("python -m modelopt.onnx.quantization --onnx_path m.onnx --log_file quant.log\n")
    latin = tmp / "latin1.log"  # a real log re-encoded: the Å of a path is one byte, not UTF-8
    latin.write_bytes((LOGS / "calibrated.log").read_text().replace("tmpqelhj52v", "Åtmp").encode("latin-1", errors="replace"))
    utf16 = tmp / "utf16.log"  # Windows PowerShell's `>` writes UTF-16
    utf16.write_bytes((LOGS / "calibrated.log").read_text().encode("utf-16"))
    return {"onnx": (MODELS / "cls_modelopt_int8.onnx", "NUL bytes"), "script": (script, "holds no line ModelOpt writes"),
            "latin-1": (latin, "not UTF-8"), "utf-16": (utf16, "UTF-16")}


@pytest.mark.parametrize("case", ["onnx", "script", "latin-1", "utf-16"])
@pytest.mark.slow
def test_a_file_that_is_not_a_modelopt_log_is_refused(case: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path, expected = _not_logs(tmp_path)[case]
    out = tmp_path / "out" / "bundle"
    assert main(_demo_args(out, path, "--quiet")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("qdqreport: error: ") and str(path) in err
    assert expected in err and FIX in err
    assert not out.exists() and not list(tmp_path.rglob(".*partial*"))


def _l2net(out: Path, *more: str) -> list[str]:
    return ["collect", "--fp32", str(MODELS / "l2net_fp32.onnx"), "--qdq", str(MODELS / "l2net_modelopt_int8.onnx"),
            "--inputs", str(DEMO / "eval.npz"), "--max-samples", "2", "-o", str(out), *more]


@pytest.mark.slow
def test_onnxruntime_session_warnings_are_one_line_and_quiet_is_quiet(tmp_path: Path,
                                                                       capfd: pytest.CaptureFixture) -> None:
    # ONNX Runtime writes to file descriptor 2 from C++: capfd sees it, capsys would not.
    assert main(_l2net(tmp_path / "quiet", "--quiet")) == 0
    assert capfd.readouterr().err == ""
    assert main(_l2net(tmp_path / "loud", "--per-layer", "--whatif-budget", "5")) == 0
    err = capfd.readouterr().err
    assert "W:onnxruntime" not in err
    summary = [line for line in err.splitlines() if "ONNX Runtime gave" in line]
    assert len(summary) == 1 and "can't constant fold Mul node …" in summary[0]
    # Same bundle either way but timings: the warnings never reach it.
    quiet, loud = (json.loads((tmp_path / name / "quant" / "fp16_check.json").read_text()) for name in ("quiet", "loud"))
    quiet.pop("seconds"), loud.pop("seconds")
    assert quiet == loud


def test_confirm_saves_modelopt_console_not_its_log_file(tmp_path: Path) -> None:
    from qdqreport.confirm import quantizers as q

    log = tmp_path / "out" / "modelopt.log"
    args = q.modelopt_args("m.onnx", "q.onnx", "calib.npz", str(log), {}, [], [], None)
    assert not any(a.startswith("--log_file") for a in args)
    assert q.shell(args).endswith(f"--output_path=q.onnx 2>&1 | tee {log}")


@pytest.mark.slow
def test_confirm_modelopt_run_saves_a_complete_log(tmp_path: Path) -> None:
    from qdqreport.collect.modelopt_log import read_modelopt_log
    from qdqreport.confirm import quantizers as q

    if q.modelopt_version() is None:
        pytest.skip("ModelOpt is not installed (pip install 'qdqreport[modelopt]'; /work/movenv has it)")
    fp32 = tmp_path / "l2net_fp32.onnx"  # ModelOpt writes its intermediate models beside it
    fp32.write_bytes((MODELS / "l2net_fp32.onnx").read_bytes())
    log, model = tmp_path / "modelopt.log", tmp_path / "l2net_q.onnx"
    q.run_modelopt(q.modelopt_args(str(fp32), str(model), None, str(log), {}, [], [], None), log)
    parsed = read_modelopt_log(log)
    assert model.is_file() and parsed["complete"] is True and parsed["quantized_nodes"]
    assert parsed["random_calibration"] is True  # no calibration data given
