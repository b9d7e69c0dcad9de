"""The write side (issue 11): --force replaces only bundles, replacement survives kill -9, stale
partials are cleaned, one writer per -o, the -o check before any inference, one-line errors for
read-only folders and full disks, the three report files together or not at all, exit codes.

Real collects of the demo model (--max-samples 4), the committed sample bundles, real processes."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.writer import write_zip
from qdqreport.cli import main
from qdqreport.testing.trt_dumps import DUMPS

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "qdqreport" / "demo"
SAMPLE = ROOT / "sample_bundles" / "cls_healthy"
LAYER_INFO = DUMPS / "tests_inputs_mobilenet.qat.onnx.engine.graph.json"
NOBODY = 65534


def collect_args(out: Path | str, *extra: str, inputs: Path = DEMO) -> list[str]:
    return ["collect", "--fp32", str(inputs / "cls_fp32.onnx"), "--qdq", str(inputs / "cls_int8.onnx"),
            "--inputs", str(inputs / "eval.npz"), "--max-samples", "4", "--quiet", "-o", str(out), *extra]


def tree(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under *folder* (hidden ones too): mode and content, to prove nothing changed."""
    found = {".": (folder.stat().st_mode, None)}
    for path in sorted(folder.rglob("*")):
        mode = path.lstat().st_mode
        found[path.relative_to(folder).as_posix()] = (mode, path.read_bytes() if path.is_file() else None)
    return found


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


@pytest.fixture
def no_sessions(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Records any ONNX Runtime session opened (and refuses it): a refused -o must cost no inference."""
    import onnxruntime

    opened: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        opened.append(args)
        raise RuntimeError("an ONNX Runtime session was opened")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)
    return opened


def user_folder(path: Path) -> Path:
    (path / "data").mkdir(parents=True)
    (path / "train.py").write_text("print('my training')\n")
    (path / "data" / "x.npy").write_bytes(b"\x93NUMPY user data")
    path.chmod(0o750)
    return path


# --- refusals before any inference ----------------------------------------------------------
def _existing_bundle(tmp: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp / "b"))


def _bundle_with_user_file(tmp: Path) -> Path:
    bundle = _existing_bundle(tmp)
    (bundle / "notes.txt").write_text("mine\n")
    return bundle


def _user_zip(tmp: Path) -> Path:
    target = tmp / "b.zip"
    write_zip(user_folder(tmp / "src"), target)  # a zip, but without a qdqreport manifest
    shutil.rmtree(tmp / "src")
    return target


@pytest.mark.parametrize("make, force, says", [
    (_existing_bundle, False, "already exists; choose another -o or pass --force"),
    (lambda tmp: user_folder(tmp / "b"), True, "has no manifest.json, so it is not a qdqreport bundle"),
    (_bundle_with_user_file, True, "holds files the bundle does not list (notes.txt)"),
    (_user_zip, True, "holds no manifest.json, so it is not a qdqreport bundle"),
])
def test_refused_output_is_untouched_and_costs_no_inference(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            no_sessions: list[object], make, force: bool,
                                                            says: str) -> None:
    target = make(tmp_path)
    before = tree(tmp_path)
    code = main(collect_args(target, *(["--force"] if force else [])))
    line = one_error_line(capsys)
    assert code == 2 and str(target) in line and says in line
    assert no_sessions == []
    assert tree(tmp_path) == before  # contents and modes; no .partial, no .lock left


def test_output_is_not_the_current_folder_or_a_parent_of_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  no_sessions: list[object],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = tmp_path / "inputs"
    shutil.copytree(DEMO, inputs)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    before = tree(tmp_path)
    for out, says in ((".", "is the current folder"), ("..", "is the current folder"),
                      (str(inputs), f"holds the input {inputs / 'cls_fp32.onnx'}"),
                      (str(inputs / "eval.npz"), "holds the input")):
        assert main(collect_args(out, "--force", inputs=inputs)) == 2
        assert says in one_error_line(capsys)
    assert no_sessions == [] and tree(tmp_path) == before


# --- replacing a bundle --------------------------------------------------------------------
@pytest.mark.slow
def test_force_replaces_a_folder_bundle_and_a_zip_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = Path(shutil.copytree(SAMPLE, tmp_path / "b"))
    zipped = tmp_path / "b.zip"
    write_zip(SAMPLE, zipped)
    old = {folder: digest(folder / "manifest.json"), zipped: digest(zipped)}
    for target in (folder, zipped):
        assert main(collect_args(target, "--force")) == 0
        bundle = Bundle(target)
        assert bundle.manifest["inputs"]["eval"]["samples"] == 4  # the new collect's (the sample bundle has 50)
    assert digest(folder / "manifest.json") != old[folder] and digest(zipped) != old[zipped]
    umask = os.umask(0o022)
    os.umask(umask)
    assert folder.stat().st_mode & 0o777 == 0o777 & ~umask  # not mkdtemp's 0700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "b.zip"]  # no partial, backup or lock left


def test_import_trt_new_force_replaces_only_a_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user = user_folder(tmp_path / "engine")
    before = tree(user)
    args = ["import-trt", str(user), "--new", "--force", "--stage", "trt_int8", "--layer-info", str(LAYER_INFO)]
    assert main(args) == 2
    assert "not a qdqreport bundle" in one_error_line(capsys) and tree(user) == before
    shutil.rmtree(user)
    shutil.copytree(SAMPLE, user)
    assert main(args) == 0
    assert Bundle(user).stage("ort_fp32")["status"] == "skipped"  # the new, TensorRT-only bundle


# --- interrupted and concurrent runs (real processes, SIGKILL) ------------------------------
PAUSE_AFTER_BACKUP = """
import os, pathlib, sys, time
real_replace = os.replace
def replace(src, dst, *args, **kwargs):
    real_replace(src, dst, *args, **kwargs)
    if ".old-" in os.fspath(dst):  # the old bundle moved aside, the new one not yet in place
        pathlib.Path({mark!r}).touch()
        time.sleep(300)
os.replace = replace
from qdqreport.cli import main
sys.exit(main({args!r}))
"""

PAUSE_IN_INFERENCE = """
import pathlib, sys, time
import qdqreport.collect.pipeline as pipeline
def paused(*args, **kwargs):
    pathlib.Path({mark!r}).touch()
    time.sleep(300)
pipeline._run_ort_stages = paused
from qdqreport.cli import main
sys.exit(main({args!r}))
"""


@contextmanager
def paused_run(script: str, args: list[str], tmp: Path) -> Iterator[subprocess.Popen]:
    """A real `qdqreport` process stopped at a hook point; killed with SIGKILL on leaving."""
    mark = tmp / "paused.mark"
    process = subprocess.Popen([sys.executable, "-c", script.format(mark=str(mark), args=args)],
                               stderr=subprocess.PIPE, text=True, cwd=tmp)
    try:
        deadline = time.monotonic() + 120
        while not mark.exists():
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the paused run never reached its hook"
            time.sleep(0.05)
        yield process
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate()
        mark.unlink(missing_ok=True)


@pytest.mark.slow
def test_kill_between_the_two_renames_keeps_the_old_bundle_and_the_next_run_restores_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = Path(shutil.copytree(SAMPLE, tmp_path / "b"))
    old = tree(target)
    with paused_run(PAUSE_AFTER_BACKUP, collect_args(target, "--force"), tmp_path):
        pass  # SIGKILL in the worst place: the old bundle renamed away, the new one not yet in place
    backups = list(tmp_path.glob(".b.old-*"))
    assert not target.exists() and len(backups) == 1 and tree(backups[0]) == old  # the documented window
    assert list(tmp_path.glob(".b.partial-*"))  # the finished staging folder, never renamed
    assert main(collect_args(target)) == 2  # the next run for this -o restores, then refuses (no --force)
    err = capsys.readouterr().err
    assert f"{target}: restored from {backups[0].name}" in err and "already exists" in err
    assert tree(target) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]  # the dead run's partial removed


@pytest.mark.slow
def test_a_second_collect_is_refused_while_the_first_writes_and_a_killed_one_is_cleaned_up(tmp_path: Path) -> None:
    target = Path(shutil.copytree(SAMPLE, tmp_path / "b"))
    old = tree(target)
    with paused_run(PAUSE_IN_INFERENCE, collect_args(target, "--force"), tmp_path) as first:
        second = subprocess.run([sys.executable, "-m", "qdqreport", *collect_args(target, "--force")],
                                capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert second.returncode == 2, second.stderr
        assert second.stderr.strip() == (f"qdqreport: error: {target}: another qdqreport run (pid {first.pid}) is "
                                         "writing it now; wait for it to finish or choose another -o")
    assert tree(target) == old and list(tmp_path.glob(".b.partial-*"))  # killed mid-collect: old bundle intact
    third = subprocess.run([sys.executable, "-m", "qdqreport", *collect_args(target, "--force")],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert third.returncode == 0, third.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"] and Bundle(target).manifest["files"]


@pytest.mark.slow
def test_two_collects_started_together_one_wins_the_other_is_refused(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "qdqreport", *collect_args(tmp_path / "b")]
    runs = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path) for _ in range(2)]
    results = sorted((run.wait(timeout=300), run.communicate()[1]) for run in runs)
    assert [code for code, _ in results] == [0, 2], results
    assert "another qdqreport run" in results[1][1] or "already exists" in results[1][1]
    assert Bundle(tmp_path / "b").manifest["files"] and sorted(p.name for p in tmp_path.iterdir()) == ["b"]


@pytest.mark.slow
def test_stale_partials_of_dead_runs_are_removed_and_live_ones_named(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / f".b.zip.partial-{dead.pid}-x1").mkdir()
    (tmp_path / f".b.zip.partial-{dead.pid}-x2.zipping").write_bytes(b"PK half a zip")
    live = tmp_path / f".b.zip.partial-{os.getppid()}-x3"
    live.mkdir()
    alike = tmp_path / f".b.zip.old-{dead.pid}.txt"  # not a name qdqreport makes: never touched
    alike.write_text("mine\n")
    assert main(collect_args(tmp_path / "b.zip")) == 0
    err = capsys.readouterr().err
    assert f"{live}: an unfinished bundle of another run (pid {os.getppid()})" in err and alike.name not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [alike.name, live.name, "b.zip"]


# --- read-only folders and full disks ---------------------------------------------------------
@contextmanager
def unprivileged() -> Iterator[None]:
    """Root ignores file modes: act as nobody (effective ids) so that a chmod really forbids writing."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A temp folder others may read (pytest's tmp_path is 0700 to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="qdqreport-ro-"))
    folder.chmod(0o755)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(folder)


@pytest.mark.slow
def test_read_only_output_folders_give_one_line_and_write_nothing(shared_tmp: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # First as ourselves into writable folders: the same code runs, so every lazy import is done
    # before we drop to nobody (who may not read the Python installation under /root).
    assert main(collect_args(shared_tmp / "warm")) == 0
    # nobody reads the bundle from a folder it may enter: a checkout under a 0700 folder (a fresh clone in
    # `mktemp -d`) would make the report fail on reading the bundle, before the write this test is about.
    bundle = Path(shutil.copytree(SAMPLE, shared_tmp / "bundle"))
    assert main(["report", str(bundle), "-o", str(shared_tmp / "report")]) == 0
    capsys.readouterr()
    read_only = shared_tmp / "ro"
    read_only.mkdir()
    shutil.copytree(shared_tmp / "report", read_only / "report")
    for folder in (read_only, read_only / "report"):
        folder.chmod(0o555)
    before = tree(read_only)
    with unprivileged():
        assert not os.access(read_only, os.W_OK, effective_ids=True)
        collect_code = main(collect_args(read_only / "b"))
        collect_line = one_error_line(capsys)
        report_code = main(["report", str(bundle), "-o", str(read_only / "report")])
        report_line = one_error_line(capsys)
    assert collect_code == 2 and f"{read_only / 'b'}: cannot write: Permission denied" in collect_line
    assert report_code == 2 and f"{read_only / 'report'}: cannot write: Permission denied" in report_line
    assert tree(read_only) == before


@pytest.mark.slow
def test_a_full_disk_while_writing_a_bundle_keeps_the_old_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    target = Path(shutil.copytree(SAMPLE, tmp_path / "b"))
    old = tree(target)

    def full_disk(handle, **arrays: np.ndarray) -> None:
        handle.write(b"\0" * 4096)  # some bytes made it, then the disk filled up
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(np, "savez_compressed", full_disk)
    assert main(collect_args(target, "--force")) == 2
    line = one_error_line(capsys)
    assert f"{target}: cannot write: No space left on device" in line and "free some disk space" in line
    assert tree(target) == old and sorted(p.name for p in tmp_path.iterdir()) == ["b"]


FULL_DISK = """
import hashlib, json, os, shutil, subprocess, sys
from pathlib import Path
disk, sample, commands = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=True)
shutil.copytree(sample, disk / "b")
assert subprocess.run([sys.executable, "-m", "qdqreport", "report", sample, "-o", str(disk / "out")]).returncode == 0
fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"\\0" * 4096)
except OSError:
    pass
os.ftruncate(fd, max(0, os.fstat(fd).st_size - 65536))  # 64 KiB free: less than a bundle or a report
os.close(fd)
def state():
    return {str(p): (p.lstat().st_mode, hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None)
            for p in sorted(disk.rglob("*"))}
before = state()
runs = [subprocess.run([sys.executable, "-m", "qdqreport", *args], capture_output=True, text=True) for args in commands]
print(json.dumps({"runs": [[r.returncode, r.stderr] for r in runs], "unchanged": state() == before}))
"""


@pytest.mark.slow
def test_a_real_full_disk_keeps_the_old_bundle_and_the_old_report(tmp_path: Path) -> None:
    """A 1 MiB tmpfs with 64 KiB left, in a private mount namespace (unshare: no root needed)."""
    if not (shutil.which("unshare") and shutil.which("mount")) or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -rm (user and mount namespaces) to mount a tiny tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    commands = [collect_args(disk / "b", "--force"), ["report", str(SAMPLE), "-o", str(disk / "out")]]
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK)
    result = subprocess.run(["unshare", "-rm", sys.executable, str(script), str(disk), str(SAMPLE), json.dumps(commands)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    (collect_code, collect_err), (report_code, report_err) = outcome["runs"]
    assert collect_code == 2 and collect_err.startswith(f"qdqreport: error: {disk / 'b'}: cannot write: No space left")
    assert report_code == 2 and report_err.startswith(f"qdqreport: error: {disk / 'out'}: cannot write: No space left")
    assert len(collect_err.splitlines()) == 1 and len(report_err.splitlines()) == 1
    assert outcome["unchanged"]  # old bundle and old report intact; no partial, temp or lock file left


# --- the report's three files -----------------------------------------------------------------
def _old_report(out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, bytes | None]]:
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 0
    capsys.readouterr()
    return tree(out)


@pytest.mark.slow
def test_report_refuses_a_folder_named_report_md_before_writing(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    _old_report(out, capsys)
    (out / "report.md").unlink()
    (out / "report.md").mkdir()
    (out / "report.md" / "mine.txt").write_text("keep\n")
    before = tree(out)
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 2
    assert f"{out / 'report.md'}: exists and is not a regular file" in one_error_line(capsys)
    assert tree(out) == before  # old report.html and findings.json untouched, no .tmp files


def test_a_full_disk_while_writing_the_report_keeps_the_old_set(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import qdqreport.pipeline as render

    out = tmp_path / "out"
    before = _old_report(out, capsys)
    real_write = render._write_text
    written: list[Path] = []

    def fill_up(path: Path, text: str) -> None:
        if written:  # the second file: half of it, then no space
            path.write_text(text[: len(text) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(path)
        real_write(path, text)

    monkeypatch.setattr(render, "_write_text", fill_up)
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 2
    assert f"{out}: cannot write: No space left on device" in one_error_line(capsys)
    assert tree(out) == before


@pytest.mark.slow
def test_report_removes_temp_files_of_killed_runs_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "out"
    out.mkdir()
    stale = out / f".report.md.{dead.pid}-0a1b2c3d.tmp"
    running = out / f".report.md.{os.getppid()}-0a1b2c3d.tmp"
    for temp in (stale, running):
        temp.write_text("half a report")
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 0
    assert not stale.exists() and running.exists()


# --- exit codes ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_an_internal_error_exits_3_with_one_line_and_the_traceback_only_with_debug(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import qdqreport.render.markdown as markdown

    def broken(model: object) -> str:
        raise ZeroDivisionError("float division\nby zero")

    monkeypatch.setattr(markdown, "render_markdown", broken)
    assert main(["report", str(SAMPLE), "-o", str(tmp_path / "a")]) == 3
    assert one_error_line(capsys) == ("qdqreport: internal error: ZeroDivisionError: float division by zero; this is a "
                                      "bug, please report it with --debug output")
    for args in (["--debug", "report", str(SAMPLE), "-o", str(tmp_path / "b")],
                 ["report", str(SAMPLE), "-o", str(tmp_path / "c"), "--debug"]):
        assert main(args) == 3
        err = capsys.readouterr().err
        assert "Traceback (most recent call last)" in err and "in broken" in err
        assert err.strip().endswith("please report it with --debug output")
    assert not list(tmp_path.iterdir())  # nothing written


def test_help_documents_the_exit_codes() -> None:
    result = subprocess.run([sys.executable, "-m", "qdqreport", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for line in ("0  success", "1  findings at or above --fail-on", "2  bad input", "3  internal error"):
        assert line in result.stdout


def test_a_closed_stdout_is_not_reported_as_a_bug() -> None:
    run = subprocess.Popen([sys.executable, "-m", "qdqreport", "rules", "--markdown"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    run.stdout.close()  # like `| head` that has read enough
    assert run.wait(timeout=60) == 141
    assert run.stderr.read() == b""
