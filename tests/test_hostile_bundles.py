"""Bundles from strangers are untrusted input (issue 11, SECURITY.md): each test copies a REAL
bundle (sample_bundles/cls_calib_x255, collected from the demo model) and damages it the way an
attacker or an unlucky user would, then runs the real CLI. Whatever runs the risk of hanging or
exhausting memory runs in a subprocess with a timeout and its peak RSS measured."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.trt_build_info import parse_build_log
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.writer import write_zip
from qdqreport.cli import main
from qdqreport.errors import BundleError
from qdqreport.rules.trt_parser_errors import PARSER_FAILURE_LOG
from qdqreport.testing.trt_dumps import DUMPS

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_bundles" / "cls_calib_x255"
LOG_FILE = "stages/ort_qdq/log.txt"  # read as text by `report`
STATS = "inputs/eval_stats.json"  # read as JSON by `report`
SAMPLE_NPZ = "stages/ort_qdq/outputs.npz"
TASK_BUNDLE = ROOT / "corpus" / "cls_postprocess_double_softmax"  # a real bundle whose report loads .npz
TASK_NPZ = "task/ort_qdq.npz"  # decoded results, read by `report`
GIB = 1 << 30
BOMB_BYTES = GIB + GIB // 4  # more than the 1 GB peak RSS allowed, a few MB compressed
RSS_CEILING_KB = 1_000_000  # 1 GB
UNIX_ONLY = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and symbolic links need a POSIX system")


# --- helpers ---------------------------------------------------------------------------------
def _copy(tmp_path: Path, source: Path = SAMPLE) -> Path:
    bundle = tmp_path / "bundle"
    shutil.copytree(source, bundle)
    return bundle


def _manifest(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))


def _save_manifest(bundle: Path, manifest: dict) -> None:
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _list(bundle: Path, name: str, data: bytes) -> None:
    """List *name* in the manifest with the sha256 and size of *data*: what an attacker who
    rewrites the manifest to match would do."""
    manifest = _manifest(bundle)
    manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    _save_manifest(bundle, manifest)


def _replace(bundle: Path, name: str, data: bytes) -> None:
    (bundle / name).write_bytes(data)
    _list(bundle, name, data)


def _validate(path: Path, capsys: pytest.CaptureFixture) -> str:
    """Run `qdqreport validate`; assert exit 2 and a one-line error; return the line."""
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def _run_cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, str, int]:
    """Run `python -m qdqreport ARGS` in a child of a small wrapper; return (exit code, stderr,
    peak RSS in kB of the CLI process alone, from the wrapper's RUSAGE_CHILDREN)."""
    wrapper = ("import resource, subprocess, sys\n"
               "r = subprocess.run([sys.executable, '-m', 'qdqreport', *sys.argv[2:]], capture_output=True, text=True, "
               "timeout=float(sys.argv[1]))\n"
               "sys.stderr.write(r.stderr)\n"
               "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    done = subprocess.run([sys.executable, "-c", wrapper, str(timeout), *args], capture_output=True, text=True,
                          timeout=timeout + 30, env={**os.environ, **(env or {})}, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]  # the wrapper itself: a timeout would show here
    code, peak = done.stdout.split()
    return int(code), done.stderr, int(peak)


def _zero_bomb_zip(folder: Path, target: Path, name: str, size: int) -> None:
    """Zip *folder* as a bundle plus an entry *name* of *size* zero bytes (deflated at level 1:
    about 4.6 MB per GiB)."""
    block = bytes(1 << 20)
    write_zip(folder, target)
    with zipfile.ZipFile(target, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open(name, "w", force_zip64=True) as entry:  # a name, so the archive's compression applies
            for _ in range(size // len(block)):
                entry.write(block)


def _declare(bundle: Path, name: str, sha256: str, size: int) -> None:
    manifest = _manifest(bundle)
    manifest["files"][name] = {"sha256": sha256, "bytes": size}
    _save_manifest(bundle, manifest)


# --- paths: zip-slip, absolute, Windows, symbolic links --------------------------------------
@pytest.mark.parametrize("name", ["../../x", "/tmp/qdqreport-hostile-x", "stages/../../x", "C:/x", "stages\\x",
                                  "stages//x", "stages/./x", "x\x00y"])
def test_unsafe_manifest_names_are_refused_by_name_in_folder_and_zip(tmp_path, capsys, name):
    bundle = _copy(tmp_path)
    _list(bundle, name, b"secret\n")
    err = _validate(bundle, capsys)
    assert "files key" in err and "manifest.json" in err
    write_zip(bundle, tmp_path / "b.zip")
    assert "files key" in _validate(tmp_path / "b.zip", capsys)


def test_zip_slip_entry_is_refused_and_import_trt_writes_nothing_outside(tmp_path, capsys):
    """The issue's attack: a zip listing `../../x` (with a matching hash) made import-trt
    write x two levels above its staging folder, and `validate` called the zip valid."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    bundle = _copy(tmp_path)
    payload = b"echo pwned\n"
    _list(bundle, "../../x", payload)
    target = work / "bundle.zip"
    write_zip(bundle, target)
    with zipfile.ZipFile(target, "a") as archive:
        archive.writestr("../../x", payload)
    assert "../../x" in _validate(target, capsys)
    code = main(["import-trt", str(target), "--stage", "trt_int8", "--layer-info",
                 str(DUMPS / "tests_inputs_mobilenet.qat.onnx.engine.graph.json")])
    assert code == 2 and capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "x").exists() and not (work.parent / "x").exists()
    assert sorted(p.name for p in work.iterdir()) == ["bundle.zip"]  # nothing staged is left behind


def test_zip_entry_name_outside_is_refused_even_when_unlisted(tmp_path, capsys):
    bundle = _copy(tmp_path)
    write_zip(bundle, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip", "a") as archive:
        archive.writestr("/etc/qdqreport-x", b"x")
    assert "zip entry name is an absolute path" in _validate(tmp_path / "b.zip", capsys)


def test_symlink_stored_in_a_zip_is_refused(tmp_path, capsys):
    bundle = _copy(tmp_path)
    data = b"/etc/passwd"
    (bundle / STATS).unlink()
    _list(bundle, STATS, data)
    write_zip(bundle, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip", "a") as archive:
        info = zipfile.ZipInfo(STATS)
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, data)
    assert "symbolic link stored in the zip" in _validate(tmp_path / "b.zip", capsys)


@UNIX_ONLY
def test_symlink_to_an_outside_file_with_matching_hash_is_refused(tmp_path, capsys):
    """With the hash of the outside file in the manifest, the old reader put its content into
    the report and import-trt rewrote it in place."""
    bundle = _copy(tmp_path)
    outside = tmp_path / "private.json"
    outside.write_text(json.dumps({"secret": "token"}))
    before = (outside.read_bytes(), outside.stat().st_mtime_ns)
    (bundle / STATS).unlink()
    (bundle / STATS).symlink_to(outside)
    _list(bundle, STATS, outside.read_bytes())
    assert "symbolic link" in _validate(bundle, capsys)
    code = main(["import-trt", str(bundle), "--stage", "trt_int8", "--layer-info",
                 str(DUMPS / "tests_inputs_mobilenet.qat.onnx.engine.graph.json")])
    assert code == 2 and "symbolic link" in capsys.readouterr().err
    assert (outside.read_bytes(), outside.stat().st_mtime_ns) == before


@UNIX_ONLY
def test_symlinked_folder_inside_the_bundle_is_refused(tmp_path, capsys):
    bundle = _copy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(bundle / "stages" / "ort_qdq", elsewhere)
    (bundle / "stages" / "ort_qdq").symlink_to(elsewhere, target_is_directory=True)
    assert "symbolic link" in _validate(bundle, capsys)


@UNIX_ONLY
def test_symlink_is_refused_where_open_has_no_dir_fd(tmp_path, capsys, monkeypatch):
    """The lstat fallback (Windows has no dir_fd) refuses a link too, and still reads a good bundle."""
    from qdqreport.bundle import paths

    monkeypatch.setattr(paths.os, "supports_dir_fd", set())
    assert main(["validate", str(_copy(tmp_path / "good"))]) == 0
    bundle = _copy(tmp_path)
    outside = tmp_path / "private.json"
    outside.write_bytes((bundle / STATS).read_bytes())
    (bundle / STATS).unlink()
    (bundle / STATS).symlink_to(outside)
    assert "symbolic link" in _validate(bundle, capsys)


def test_outside_names_do_not_reveal_whether_a_file_exists(tmp_path, capsys):
    """'missing' vs 'sha256 does not match' told an attacker which outside files exist."""
    (tmp_path / "exists.txt").write_text("here")
    errors = []
    for i, name in enumerate(("../../exists.txt", "../../absent.txt")):
        bundle = _copy(tmp_path / str(i))
        _list(bundle, name, b"guess")
        errors.append(_validate(bundle, capsys).replace(name, "NAME").replace(str(bundle), "B"))
    assert errors[0] == errors[1] and "missing" not in errors[0] and "sha256" not in errors[0]


def test_staging_folder_refuses_a_target_outside_it(tmp_path):
    from qdqreport.bundle.writer import BundleWriter
    from qdqreport.collect.trt_import import _staged_target
    from qdqreport.errors import InputError

    with BundleWriter(tmp_path / "out" / "bundle") as writer:
        for name in ("../escape", "/abs/escape", "a/../../escape"):
            with pytest.raises(InputError, match="outside the staging folder"):
                _staged_target(writer, name)
        assert _staged_target(writer, "stages/ok.txt") == writer.root.resolve() / "stages" / "ok.txt"
    assert not (tmp_path / "out" / "escape").exists() and not (tmp_path / "escape").exists()


# --- file types: FIFO, /dev/zero -------------------------------------------------------------
@pytest.mark.slow
@UNIX_ONLY
def test_fifo_in_a_folder_bundle_is_refused_without_hanging(tmp_path):
    bundle = _copy(tmp_path)
    (bundle / STATS).unlink()
    os.mkfifo(bundle / STATS)
    layer_info = str(DUMPS / "tests_inputs_mobilenet.qat.onnx.engine.graph.json")
    for command in (["validate", str(bundle)], ["report", str(bundle), "-o", str(tmp_path / "out")],
                    ["import-trt", str(bundle), "--stage", "trt_int8", "--layer-info", layer_info]):
        code, err, _ = _run_cli(command, timeout=60)
        assert code == 2 and "FIFO" in err and STATS in err and err.count("\n") == 1, err
    assert not (tmp_path / "out" / "report.html").exists()


@pytest.mark.slow
@UNIX_ONLY
def test_fifo_as_the_manifest_is_refused_without_hanging(tmp_path):
    bundle = _copy(tmp_path)
    (bundle / "manifest.json").unlink()
    os.mkfifo(bundle / "manifest.json")
    code, err, _ = _run_cli(["validate", str(bundle)], timeout=60)
    assert code == 2 and "FIFO" in err, err


@pytest.mark.slow
@UNIX_ONLY
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_dev_zero_as_a_key_or_a_link_is_refused_fast_and_small(tmp_path):
    """A `files` key /dev/zero made the old reader allocate until the memory limit."""
    bundle = _copy(tmp_path)
    _list(bundle, "/dev/zero", b"")
    code, err, peak = _run_cli(["report", str(bundle), "-o", str(tmp_path / "out")], timeout=60)
    assert code == 2 and "absolute path" in err and peak < RSS_CEILING_KB, err
    bundle = _copy(tmp_path / "link")
    (bundle / LOG_FILE).unlink()
    (bundle / LOG_FILE).symlink_to("/dev/zero")
    _list(bundle, LOG_FILE, b"")
    code, err, peak = _run_cli(["report", str(bundle), "-o", str(tmp_path / "out")], timeout=60)
    assert code == 2 and "symbolic link" in err and peak < RSS_CEILING_KB, err


# --- bombs -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_zip_bomb_entry_is_refused_before_reading_by_its_declared_size(tmp_path):
    """The issue's 4.3 MB zip with a 4 GiB entry: 8.2 GB peak. Here the entry replaces the
    stage log, and the manifest keeps the real log's size: refused before inflating a byte."""
    bundle = _copy(tmp_path)
    (bundle / LOG_FILE).unlink()
    target = tmp_path / "bomb.zip"
    _zero_bomb_zip(bundle, target, LOG_FILE, BOMB_BYTES)
    assert target.stat().st_size < 10 << 20
    start = time.perf_counter()
    code, err, peak = _run_cli(["report", str(target), "-o", str(tmp_path / "out")])
    assert code == 2 and "bytes stored but the manifest declares" in err and peak < RSS_CEILING_KB, err
    assert time.perf_counter() - start < 60


@pytest.mark.slow
def test_zip_bomb_declared_honestly_is_refused_by_its_kind_limit_before_reading(tmp_path):
    """The attacker also declares the bomb's true size: a log is read as text, so its declared
    size alone breaks the text limit, before a byte is inflated or hashed."""
    bundle = _copy(tmp_path)
    (bundle / LOG_FILE).unlink()
    _declare(bundle, LOG_FILE, "0" * 64, BOMB_BYTES)
    _zero_bomb_zip(bundle, tmp_path / "bomb.zip", LOG_FILE, BOMB_BYTES)
    start = time.perf_counter()
    code, err, peak = _run_cli(["report", str(tmp_path / "bomb.zip"), "-o", str(tmp_path / "out")])
    assert code == 2 and "QDQREPORT_MAX_TEXT_BYTES=2G" in err and peak < RSS_CEILING_KB, err
    assert time.perf_counter() - start < 30


@pytest.mark.slow
def test_zip_bomb_with_wrong_hash_is_found_in_streams(tmp_path):
    """A 1.25 GiB array file, within the array limit, declared with its true size but a wrong
    sha256: hashed in 1 MiB blocks and refused, never held (the old reader read it whole)."""
    bundle = _copy(tmp_path)
    (bundle / SAMPLE_NPZ).unlink()
    _declare(bundle, SAMPLE_NPZ, "0" * 64, BOMB_BYTES)
    _zero_bomb_zip(bundle, tmp_path / "bomb.zip", SAMPLE_NPZ, BOMB_BYTES)
    code, err, peak = _run_cli(["validate", str(tmp_path / "bomb.zip")])
    assert code == 2 and "sha256 does not match" in err and peak < RSS_CEILING_KB, err


def test_wrong_hash_is_found_reading_at_most_the_declared_size_plus_one_block(tmp_path, monkeypatch):
    """The manifest declares 1 MiB, the entry holds 64 MiB. The zip header tells the truth, so
    the size check refuses before reading; when the header lies too (as a crafted zip can),
    the streamed read stops one block past the declared size: count the bytes pulled."""
    from qdqreport.bundle import source

    bundle = _copy(tmp_path)
    (bundle / LOG_FILE).unlink()
    _declare(bundle, LOG_FILE, "0" * 64, 1 << 20)
    _zero_bomb_zip(bundle, tmp_path / "lying.zip", LOG_FILE, 64 << 20)
    with pytest.raises(BundleError, match="bytes stored but the manifest declares"):
        Bundle(tmp_path / "lying.zip")
    pulled, honest_open = [], source.ZipSource.open

    def lying_open(self, name):
        handle, size = honest_open(self, name)
        if name != LOG_FILE:
            return handle, size
        read = handle.read
        handle.read = lambda n=-1: pulled.append(len(block := read(n))) or block
        return handle, 1 << 20

    monkeypatch.setattr(source.ZipSource, "open", lying_open)
    with pytest.raises(BundleError, match="more bytes than the manifest declares"):
        Bundle(tmp_path / "lying.zip")
    assert 1 << 20 < sum(pulled) <= 2 << 20


def _npz_with_member(path: Path, name: str, header_shape: tuple[int, ...], data_bytes: int) -> None:
    """An .npz whose member *name* declares *header_shape* float32 and holds *data_bytes* zeros."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open(name + ".npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_2_0(member, {"descr": "<f4", "fortran_order": False, "shape": header_shape})
            block = bytes(1 << 20)
            for _ in range(data_bytes // len(block)):
                member.write(block)


@pytest.mark.slow
def test_npz_declaring_a_shape_of_1e12_is_one_line(tmp_path):
    """The old reader died with numpy's _ArrayMemoryError (a traceback)."""
    bundle = _copy(tmp_path, TASK_BUNDLE)
    _npz_with_member(bundle / TASK_NPZ, "000000/score", (10 ** 12,), 0)
    _list(bundle, TASK_NPZ, (bundle / TASK_NPZ).read_bytes())
    code, err, peak = _run_cli(["report", str(bundle), "-o", str(tmp_path / "out")])
    assert code == 2 and "QDQREPORT_MAX_ARRAY_BYTES" in err and "shape [1000000000000]" in err, err
    assert peak < RSS_CEILING_KB and err.count("\n") == 1


@pytest.mark.slow
def test_npz_member_bomb_stays_under_1gb(tmp_path):
    """A real member bomb (1.25 GiB of zeros, ~6 MB on disk) with the array limit lowered to
    512M, as SECURITY.md tells a cautious user to do; the old reader peaked at 8.3 GB."""
    bundle = _copy(tmp_path, TASK_BUNDLE)
    _npz_with_member(bundle / TASK_NPZ, "000000/score", (BOMB_BYTES // 4,), BOMB_BYTES)
    assert (bundle / TASK_NPZ).stat().st_size < 10 << 20
    _list(bundle, TASK_NPZ, (bundle / TASK_NPZ).read_bytes())
    code, err, peak = _run_cli(["report", str(bundle), "-o", str(tmp_path / "out")],
                               env={"QDQREPORT_MAX_ARRAY_BYTES": "512M"})
    assert code == 2 and "QDQREPORT_MAX_ARRAY_BYTES=" in err and peak < RSS_CEILING_KB, err


def test_limits_are_overridable_and_a_bad_value_is_one_line(tmp_path, capsys, monkeypatch):
    bundle = _copy(tmp_path)
    monkeypatch.setenv("QDQREPORT_MAX_FILE_BYTES", "1K")
    assert "QDQREPORT_MAX_FILE_BYTES=" in _validate(bundle, capsys)
    monkeypatch.setenv("QDQREPORT_MAX_FILE_BYTES", "lots")
    assert "not a size" in _validate(bundle, capsys)
    monkeypatch.setenv("QDQREPORT_MAX_FILE_BYTES", "4G")
    assert main(["validate", str(bundle)]) == 0


@pytest.mark.slow
def test_zip_with_a_huge_directory_is_refused_before_zipfile_reads_it(tmp_path, capsys, monkeypatch):
    """A few MB of zip directory can list millions of entries (each a Python object once read):
    the directory's size is held to the JSON limit, lowered here so a small zip shows it."""
    bundle = _copy(tmp_path)
    write_zip(bundle, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip", "a") as archive:
        for i in range(20_000):
            archive.writestr(f"pad/{i}", b"")
    monkeypatch.setenv("QDQREPORT_MAX_JSON_BYTES", "512K")
    assert "(zip directory)" in _validate(tmp_path / "b.zip", capsys)
    monkeypatch.delenv("QDQREPORT_MAX_JSON_BYTES")
    assert main(["validate", str(tmp_path / "b.zip")]) == 0  # unlisted entries are otherwise ignored


# --- JSON ------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("depth, expected", [(100_000, "nested too deeply"), (500, "nests more than 64 levels")])
def test_deep_json_artefact_is_one_line(tmp_path, depth, expected):
    bundle = _copy(tmp_path)
    _replace(bundle, STATS, ("[" * depth + "]" * depth).encode())
    code, err, _ = _run_cli(["report", str(bundle), "-o", str(tmp_path / "out")])
    assert code == 2 and expected in err and STATS in err and err.count("\n") == 1, err


def test_deep_json_in_the_manifest_names_the_field(tmp_path, capsys):
    bundle = _copy(tmp_path)
    manifest = _manifest(bundle)
    manifest["host"]["notes"] = json.loads("[" * 200 + "]" * 200)
    _save_manifest(bundle, manifest)
    assert "field $.host.notes" in _validate(bundle, capsys)


def test_5000_digit_schema_version_is_one_line(tmp_path, capsys):
    """int() of a 5,000-digit string raises ValueError (Python's digit limit): was a traceback."""
    bundle = _copy(tmp_path)
    manifest = _manifest(bundle)
    manifest["schema_version"] = "1." + "9" * 5000
    _save_manifest(bundle, manifest)
    err = _validate(bundle, capsys)
    assert "schema_version must look like" in err and len(err) < 400


@pytest.mark.parametrize("manifest, expected", [([], "must be a JSON object"), ("x", "must be a JSON object"),
                                                 ({"schema": "x" * 1_000_000}, "not a qdqreport bundle")])
def test_manifest_of_the_wrong_shape_is_one_short_line(tmp_path, capsys, manifest, expected):
    bundle = _copy(tmp_path)
    _save_manifest(bundle, manifest)
    err = _validate(bundle, capsys)
    assert expected in err and len(err) < 400


def test_5000_digit_number_in_json_is_one_line(tmp_path, capsys):
    bundle = _copy(tmp_path)
    text = (bundle / "manifest.json").read_text().replace('"host": {', '"host": {"n": ' + "7" * 5000 + ", ", 1)
    (bundle / "manifest.json").write_text(text)
    assert "not valid JSON" in _validate(bundle, capsys)


@pytest.mark.parametrize("payload, expected", [(b'{"source": "\\ud800"}', "lone surrogate"),
                                               (b'{"source": "\xff\xfe"}', "not UTF-8")])
@pytest.mark.slow
def test_surrogates_and_invalid_utf8_in_json_are_one_line(tmp_path, payload, expected):
    bundle = _copy(tmp_path)
    _replace(bundle, STATS, payload)
    code, err, _ = _run_cli(["report", str(bundle), "-o", str(tmp_path / "out")])
    assert code == 2 and expected in err and STATS in err, err


@pytest.mark.parametrize("damage, expected", [(lambda layers: layers[0].update(Name="\ud800"), "lone surrogate"),
                                              (lambda layers: layers[0].update(Extra=json.loads("[" * 900 + "]" * 900)),
                                               "nests more than 64 levels")])
@pytest.mark.slow
def test_json_artefacts_parsed_elsewhere_are_checked_at_open(tmp_path, damage, expected):
    """TensorRT evidence and rules parse layer_info.json themselves; the reader checks every
    listed JSON file when the bundle is opened, so they never meet these (a real TREx dump)."""
    bundle = _copy(tmp_path, ROOT / "sample_bundles" / "trt_mobilenet_qat_layerinfo")
    name = "stages/trt_int8/layer_info.json"
    info = json.loads((bundle / name).read_text(encoding="utf-8"))
    damage(info["Layers"])
    _replace(bundle, name, json.dumps(info).encode())
    code, err, _ = _run_cli(["report", str(bundle), "-o", str(tmp_path / "out")])
    assert code == 2 and expected in err and name in err and err.count("\n") == 1, err


@pytest.mark.slow
def test_huge_manifest_is_refused_fast_by_size(tmp_path):
    """A 300 MB manifest took 122 s and 6.4 GB; the folder one is sparse, the zip one deflated."""
    bundle = _copy(tmp_path)
    with open(bundle / "manifest.json", "r+b") as handle:
        handle.truncate(300 << 20)
    start = time.perf_counter()
    code, err, peak = _run_cli(["validate", str(bundle)])
    assert code == 2 and "QDQREPORT_MAX_JSON_BYTES" in err and peak < 300_000, err
    assert time.perf_counter() - start < 30
    zipped = _copy(tmp_path / "z")
    write_zip(zipped, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip") as old, zipfile.ZipFile(tmp_path / "c.zip", "w", zipfile.ZIP_DEFLATED,
                                                                      compresslevel=1) as new:
        for info in old.infolist():
            if info.filename != "manifest.json":
                new.writestr(info, old.read(info))
        with new.open("manifest.json", "w", force_zip64=True) as member:
            member.write(b'{"schema": "qdqreport.bundle",' + b" " * (300 << 20) + b"}")
    code, err, peak = _run_cli(["validate", str(tmp_path / "c.zip")])
    assert code == 2 and "QDQREPORT_MAX_JSON_BYTES" in err and peak < 300_000, err


# --- build log ------------------------------------------------------------------------------
def _best_seconds(text: str, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        parse_build_log(text)
        best = min(best, time.perf_counter() - start)
    return best


def test_a_long_build_log_line_parses_in_linear_time():
    """One 690 KB line took 85 s (a lazy regex retried at every position). 7x the line must
    cost about 7x, not 49x; the ratio is compared, never absolute seconds."""
    unit = "[E] [TRT] ModelImporter.cpp:771: In node 12 with name: a"
    short = PARSER_FAILURE_LOG + "\n" + unit * (100_000 // len(unit)) + "\n"
    long = PARSER_FAILURE_LOG + "\n" + unit * (700_000 // len(unit)) + "\n"
    ratio = _best_seconds(long) / max(_best_seconds(short), 1e-6)
    assert ratio < 20, ratio
    assert parse_build_log(long).parse_failed  # the real failure lines are still found


def test_import_trt_of_a_build_log_with_a_690kb_line_finishes(tmp_path):
    log = tmp_path / "build.log"
    log.write_text(PARSER_FAILURE_LOG + "\n" + "In node 1 with name: x " * 30_000 + "\n", encoding="utf-8")
    code, err, _ = _run_cli(["import-trt", str(tmp_path / "b"), "--new", "--stage", "trt_int8",
                             "--build-log", str(log)], timeout=60)
    assert code == 0, err
    assert Bundle(tmp_path / "b").stage("trt_int8")["status"] == "failed"
