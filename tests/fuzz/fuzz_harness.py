"""Run mutated bundles through `qdqreport validate` and `qdqreport report` in-process and classify each case.

Outcomes per case:
  ok       every command exited 0, 1 or 2 (2 with exactly one line on stderr)
  crash    exit 3 or an uncaught exception; signature = exception type + innermost qdqreport frame
  rule     a rule raised on the bundle (the report lists it under "internal problems"): bad data got past
           the schemas into a rule
  noisy    exit 2 with anything but one line on stderr
  hang     a command ran longer than the per-case timeout (SIGALRM)
  escape   a file was opened for writing, created, renamed or removed outside the case folder (audit hook)
  partial  the report folder holds some but not all of report.html, report.md, findings.json, or a leftover .tmp
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sys
import time
import traceback
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from fuzz_mutate import DIRECTORY, MANIFEST, Case, make_case, manifest_bytes

REPORT_FILES = ("report.html", "report.md", "findings.json")
PACKAGE = str(Path(__file__).resolve().parents[2] / "qdqreport")
BAD = ("crash", "rule", "noisy", "hang", "escape", "partial")


@dataclass
class Outcome:
    kind: str = "ok"
    signature: str = ""
    detail: str = ""
    codes: dict[str, Any] = field(default_factory=dict)


class Hang(BaseException):
    """Raised by SIGALRM; a BaseException so `except Exception` in the code under test cannot swallow it."""


# --- writing a case ---------------------------------------------------------------------------
def write_case(case: Case, folder: Path) -> Path:
    """Materialise *case* under *folder*; return the bundle path (a folder or a .zip)."""
    entries = {MANIFEST: manifest_bytes(case), **case.files}
    if not case.as_zip:
        root = folder / "bundle"
        for name, data in entries.items():
            target = root / name
            if data is DIRECTORY:
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        return root
    path = folder / "bundle.zip"
    _write_zip(path, entries, case.zip_mode)
    return path


def _write_zip(path: Path, entries: dict[str, bytes], mode: str) -> None:
    prefix = "bundle/" if mode == "prefix" else ""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": the point of mode "dup"
        for name, data in entries.items():
            if data is DIRECTORY:
                archive.writestr(prefix + name.rstrip("/") + "/", b"")
                continue
            archive.writestr(prefix + name, data)
            if mode == "dup" and name == MANIFEST:
                archive.writestr(prefix + name, b"{}")
        if mode == "dir_entry":
            archive.writestr("stages/", b"")
        if mode == "slip":
            archive.writestr("../../outside.txt", b"escaped")
    if mode == "truncate":
        raw = path.read_bytes()
        path.write_bytes(raw[: len(raw) * 2 // 3])
    elif mode == "stored_lie":
        # The central directory claims a tiny uncompressed size for the first member.
        raw = bytearray(path.read_bytes())
        at = raw.rfind(b"PK\x01\x02")
        raw[at + 24:at + 28] = (1).to_bytes(4, "little")
        path.write_bytes(bytes(raw))


# --- guards -----------------------------------------------------------------------------------
class EscapeWatch:
    """An audit hook that records writes outside the active case folder (installed once per process)."""

    WRITE_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.truncate",
                    "shutil.rmtree", "shutil.move", "shutil.copyfile", "os.chmod"}
    _installed = False
    active: Path | None = None
    hits: list[str] = []

    @classmethod
    def install(cls) -> None:
        if not cls._installed:
            sys.addaudithook(cls._hook)
            cls._installed = True

    @classmethod
    def _hook(cls, event: str, args: tuple) -> None:
        if cls.active is None:
            return
        if event == "open":
            path, mode, flags = (args + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC))
            if writing:
                cls._check(event, path)
        elif event in cls.WRITE_EVENTS:
            for arg in args[:2]:
                cls._check(event, arg)

    @staticmethod
    def _in_template_cache(text: str) -> bool:
        from qdqreport.render.env import _bytecode_cache

        cache = _bytecode_cache()
        folder = getattr(cache, "directory", None)
        if folder is None:
            return False
        path, folder = os.path.abspath(text), os.path.abspath(folder)
        return path == folder or os.path.dirname(path) == folder

    @classmethod
    def _check(cls, event: str, path: Any) -> None:
        if not isinstance(path, (str, bytes, os.PathLike)) or isinstance(path, int):
            return
        text = os.fsdecode(path)
        if text.endswith(".pyc") or "__pycache__" in text:
            return
        if cls._in_template_cache(text):
            return  # the renderer's own compiled-template cache (render/env.py), documented in the README
        try:
            resolved = Path(os.path.abspath(text))
        except (ValueError, OSError):
            return
        if resolved != cls.active and cls.active not in resolved.parents:
            cls.hits.append(f"{event} {text}")


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: Any) -> None:
        raise Hang()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def cheap_plots(enabled: bool) -> Iterator[None]:
    """Skip matplotlib's drawing (most of a report's time): the figure is built, closed, and a stub SVG returned."""
    if not enabled:
        yield
        return
    from qdqreport.render import plots

    real = plots.to_svg
    plots.to_svg = lambda figure, key, *rest, **named: f'<svg class="plot" id="{key}"></svg>'
    try:
        yield
    finally:
        plots.to_svg = real


# --- running one command ----------------------------------------------------------------------
def signature(exc: BaseException) -> str:
    """Exception type + the innermost frame inside the qdqreport package (file:function)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(PACKAGE)]
    where = f"{Path(frames[-1].filename).relative_to(Path(PACKAGE).parent)}:{frames[-1].name}" if frames else "?"
    return f"{type(exc).__name__}@{where}"


def run_command(argv: list[str]) -> tuple[int | None, str, BaseException | None]:
    """(exit code, stderr, uncaught exception) of qdqreport.cli.main(argv), in this process."""
    from qdqreport.cli import main

    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
        return code, err.getvalue(), None
    except Hang:
        raise
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2, err.getvalue(), None
    except BaseException as exc:  # noqa: BLE001 - the point is to see every exception
        return None, err.getvalue(), exc


def _internal_error(argv: list[str]) -> BaseException | None:
    """Re-run a command that exited 3 with its handler called directly, to get the exception for the signature."""
    from qdqreport.cli import _parser
    from qdqreport.errors import QdqReportError

    args = _parser().parse_args(argv)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args.handler(args, argv)
    except QdqReportError:
        return None
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


def run_case(case: Case, folder: Path, timeout: float, real_plots: bool) -> Outcome:
    """Write *case* into *folder*, run validate and report, and classify what happened."""
    folder.mkdir(parents=True, exist_ok=True)
    bundle = write_case(case, folder)
    out = folder / "out"
    outcome = Outcome()
    EscapeWatch.install()
    EscapeWatch.hits = []
    EscapeWatch.active = folder.resolve()
    try:
        with time_limit(timeout), cheap_plots(not real_plots):
            for name, argv in (("validate", ["validate", str(bundle)]), ("report", ["report", str(bundle), "-o", str(out)])):
                code, stderr, exc = run_command(argv)
                outcome.codes[name] = code
                if code == 3 and exc is None:
                    exc = _internal_error(argv) or RuntimeError(stderr.strip()[-200:])
                if exc is not None:
                    return Outcome("crash", signature(exc), "".join(traceback.format_exception(exc))[-4000:], outcome.codes)
                if code == 2 and len(stderr.strip().splitlines()) != 1:
                    return Outcome("noisy", f"noisy@{name}", stderr[-2000:], outcome.codes)
                if code not in (0, 1, 2):
                    return Outcome("crash", f"exit{code}@{name}", stderr[-2000:], outcome.codes)
    except Hang:
        return Outcome("hang", "hang", f"over {timeout} s", outcome.codes)
    finally:
        EscapeWatch.active = None
    if EscapeWatch.hits:
        return Outcome("escape", "escape", "; ".join(EscapeWatch.hits[:5]), outcome.codes)
    return _check_report_folder(out, outcome)


def _check_report_folder(out: Path, outcome: Outcome) -> Outcome:
    present = [n for n in REPORT_FILES if (out / n).is_file()]
    leftovers = [p.name for p in out.glob("*.tmp")] + [p.name for p in out.glob(".*.tmp")] if out.is_dir() else []
    if leftovers or 0 < len(present) < len(REPORT_FILES):
        return Outcome("partial", "partial", f"present {present}, leftovers {leftovers}", outcome.codes)
    if outcome.codes.get("report") in (0, 1) and len(present) != len(REPORT_FILES):
        return Outcome("partial", "partial", "report exited 0/1 without writing its files", outcome.codes)
    if len(present) == len(REPORT_FILES):
        failures = json.loads((out / "findings.json").read_text(encoding="utf-8")).get("failures") or []
        if failures:
            first = failures[0]
            return Outcome("rule", f"rule:{first['rule_id']}:{_rule_signature(first['message'])}", first["message"][:2000],
                           outcome.codes)
    return outcome


def _rule_signature(message: str) -> str:
    # "TypeError: ... (/path/qdqreport/rules/x.py:12)" -> "TypeError@rules/x.py"
    kind = message.split(":", 1)[0]
    tail = message.rsplit("(", 1)[-1].rstrip(")")
    return f"{kind}@{tail.split('qdqreport/')[-1].rsplit(':', 1)[0]}"


# --- a run ------------------------------------------------------------------------------------
@dataclass
class RunStats:
    cases: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time: the machine may be shared, wall time says little
    counts: dict[str, int] = field(default_factory=dict)
    exits: dict[str, int] = field(default_factory=dict)  # "report:0" -> cases: how deep the cases got
    signatures: dict[str, dict[str, Any]] = field(default_factory=dict)

    def bad(self) -> int:
        return sum(self.counts.get(kind, 0) for kind in BAD)

    def to_dict(self) -> dict[str, Any]:
        return {"cases": self.cases, "seconds": round(self.seconds, 1), "cpu_seconds": round(self.cpu_seconds, 1),
                "cases_per_second": round(self.cases / self.seconds, 2) if self.seconds else None,
                "cases_per_cpu_second": round(self.cases / self.cpu_seconds, 2) if self.cpu_seconds else None,
                "counts": dict(sorted(self.counts.items())), "exits": dict(sorted(self.exits.items())),
                "signatures": self.signatures}


def run_cases(seeds: dict[str, dict[str, bytes]], run_seed: int, indices: range | list[int], work: Path,
              timeout: float = 60.0, plot_every: int = 10, save: Path | None = None, keep_per_signature: int = 2,
              deadline: float | None = None, on_progress: Any = None) -> RunStats:
    """Run the cases *indices* of run *run_seed*; save up to *keep_per_signature* bad cases per signature under *save*."""
    stats = RunStats()
    _warm_up(seeds, work)
    start, cpu = time.monotonic(), time.process_time()
    for index in indices:
        if deadline is not None and time.monotonic() > deadline:
            break
        case = make_case(seeds, run_seed, index)
        folder = work / f"case-{index}"
        outcome = run_case(case, folder, timeout, real_plots=plot_every > 0 and index % plot_every == 0)
        stats.cases += 1
        stats.counts[outcome.kind] = stats.counts.get(outcome.kind, 0) + 1
        for name, code in outcome.codes.items():
            stats.exits[f"{name}:{code}"] = stats.exits.get(f"{name}:{code}", 0) + 1
        if outcome.kind != "ok":
            entry = stats.signatures.setdefault(outcome.signature, {"kind": outcome.kind, "count": 0, "cases": []})
            entry["count"] += 1
            if len(entry["cases"]) < keep_per_signature:
                entry["cases"].append({"index": index, "seed": case.seed, "steps": case.steps, "codes": outcome.codes,
                                       "detail": outcome.detail[-1500:]})
                if save is not None:
                    _save(case, outcome, save, index, run_seed)
        shutil.rmtree(folder, ignore_errors=True)
        if on_progress is not None and stats.cases % 100 == 0:
            stats.seconds, stats.cpu_seconds = time.monotonic() - start, time.process_time() - cpu
            on_progress(stats, index)
    stats.seconds, stats.cpu_seconds = time.monotonic() - start, time.process_time() - cpu
    return stats


def _warm_up(seeds: dict[str, dict[str, bytes]], work: Path) -> None:
    """One unmutated report with real plots before watching: matplotlib creates its config and cache folders once, in
    this process (the report may draw its plots in a forked worker, render/plot_worker.py, when a core is free: then
    only this import brings matplotlib here, and cheap_plots' first import inside a watched case would be reported as
    an escape into ~/.config/matplotlib)."""
    from qdqreport.render import plots  # noqa: F401  matplotlib and its folders, before any case is watched

    name = sorted(seeds)[0]
    files = dict(seeds[name])
    case = Case(name, files, json.loads(files.pop(MANIFEST)))
    folder = work / "warm-up"
    folder.mkdir(parents=True, exist_ok=True)
    run_command(["report", str(write_case(case, folder)), "-o", str(folder / "out")])
    shutil.rmtree(folder, ignore_errors=True)


def _save(case: Case, outcome: Outcome, save: Path, index: int, run_seed: int) -> None:
    slug = "".join(c if c.isalnum() else "_" for c in outcome.signature)[:80]
    target = save / slug / f"case-{index}"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    write_case(case, target)
    (target / "case.json").write_text(json.dumps({"run_seed": run_seed, "index": index, "seed": case.seed,
                                                  "steps": case.steps, "signature": outcome.signature,
                                                  "kind": outcome.kind, "codes": outcome.codes,
                                                  "detail": outcome.detail}, indent=1, ensure_ascii=True))
