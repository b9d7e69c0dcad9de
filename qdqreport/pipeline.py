"""The report pipeline: bundle -> context -> rules -> report model -> rendered text -> files.

`qdqreport report` in one function (render_report), above every layer it runs: render/ only turns a
ReportModel into text, report/ only builds the model, rules/ only judge. The files are written
atomically (write_atomically): all of report.html, report.md and findings.json are replaced, or none.
Never imports onnxruntime or tensorrt.
"""

from __future__ import annotations

import glob
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from qdqreport.analysis.agreement import JudgingOptions
from qdqreport.analysis.context import Context
from qdqreport.bundle.destination import pid_alive, write_failure
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.errors import OutputError, QdqReportError
from qdqreport.render import OUTPUT_FILES, render_all
from qdqreport.render.ci import CiOutputs, CiTexts, render_ci
from qdqreport.render.plot_worker import PlotWorker
from qdqreport.report.model import FindingView, build_report
from qdqreport.rules import RuleSpec, discover

# --fail-on level -> the severities that make the exit code 1.
FAIL_ON = {None: (), "error": ("error",), "warning": ("error", "warning"), "info": ("error", "warning", "info")}


@dataclass(frozen=True)
class ReportOutcome:
    """The written files (report.html, report.md, findings.json, then --sarif and --junit) and the exit code."""

    paths: tuple[Path, ...]
    exit_code: int
    tripped: tuple[FindingView, ...] = ()  # the findings at or above --fail-on: why exit_code is 1


def render_report(bundle_path: Path | str, out_dir: Path | str, fail_on: str | None = None,
                  ci_outputs: CiOutputs | None = None,
                  rules: dict[str, RuleSpec] | None = None, redact: bool = False,
                  target: str | None = None, judging: JudgingOptions | None = None,
                  plot_worker: PlotWorker | None = None) -> ReportOutcome:
    """Read a bundle, run the rules (*rules*, default: every registered rule), and write the report files.

    *target* is the deployment runtime (--target); None means the bundle's recorded one, else tensorrt.
    *judging* holds --output-kind and --decision-threshold (analysis/agreement.py); None: the bundle's, else inferred.
    *plot_worker* (render/plot_worker.py, started by `qdqreport report` before its imports) draws the plots in other
    processes; without it, or when it fails, they are drawn here. The caller closes it.

    Either all three files are replaced or none is: everything is rendered in memory first.
    """
    if fail_on not in FAIL_ON:
        raise QdqReportError(f"--fail-on must be 'error', 'warning' or 'info', got {fail_on!r}")
    check_ci_targets(ci_outputs)
    bundle = Bundle(bundle_path)
    out = Path(out_dir)
    _refuse_inside_bundle(bundle, out)
    refuse_ci_inside_bundle(ci_outputs, bundle.location)
    redactor = _redact(bundle, out) if redact else None
    ctx = Context(bundle, target=target, judging=judging)
    registry = rules if rules is not None else discover()
    model = build_report(bundle, run_rules(ctx, registry), ctx)
    failing = FAIL_ON[fail_on]
    ci_texts = render_ci(ci_outputs, model, registry, failing, bundle.location)
    texts = render_all(model, plot_worker.draw(model) if plot_worker is not None else None)
    if redactor is not None:  # paths that reached the text another way (finding messages, logs)
        texts = {name: redactor.text(text, host=False) for name, text in texts.items()}
        ci_texts = ci_texts.map(lambda text: redactor.text(text, host=False))
    paths = write_atomically(out, texts)
    written = write_ci(ci_outputs, ci_texts)
    tripped = tuple(f for f in model.findings if f.severity in failing)
    return ReportOutcome(tuple(paths[name] for name in OUTPUT_FILES.values()) + written, 1 if tripped else 0, tripped)


def write_atomically(out_dir: Path, texts: dict[str, str]) -> dict[str, Path]:
    """Write every text to a hidden temp file in *out_dir*, then rename them all into place.

    Targets that are not regular files (a folder named report.md, a symlink) are refused before
    anything is written; any failure removes the temp files, so the old set stays whole. An
    OSError (read-only folder, disk full) becomes a one-line OutputError naming the folder."""
    _check_targets(out_dir, texts)
    staged: list[tuple[Path, Path]] = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(out_dir, texts)
        for name, text in texts.items():
            temp = out_dir / f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
            staged.append((temp, out_dir / name))
            _write_text(temp, text)
        for temp, final in staged:
            os.replace(temp, final)
    except OSError as exc:
        _unlink_all(temp for temp, _ in staged)
        raise write_failure(out_dir, exc) from None
    except BaseException:
        _unlink_all(temp for temp, _ in staged)
        raise
    return {final.name: final for _, final in staged}


def _write_text(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def _check_targets(out_dir: Path, names: Iterable[str]) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir}: is a file, not a folder; pass a folder for the report with -o")
    for name in names:
        target = out_dir / name
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise OutputError(f"{target}: exists and is not a regular file; nothing was written; move it away or "
                              "choose another -o")


def _remove_stale_temps(out_dir: Path, names: Iterable[str]) -> None:
    """Temp files of runs that were killed (their PID is gone) are removed; others are left alone."""
    for name in names:
        for temp in out_dir.glob(f".{glob.escape(name)}.*.tmp"):
            pid = temp.name[len(name) + 2:].split("-", 1)[0]
            if pid.isdigit() and len(pid) < 10 and not pid_alive(int(pid)):
                temp.unlink(missing_ok=True)


def _unlink_all(paths: Iterable[Path]) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def _redact(bundle: Bundle, out_dir: Path):
    """report --redact: the manifest is redacted in memory before anything reads it (docs/export.md)."""
    from qdqreport.redact import redact_manifest, redactor_for

    redactor = redactor_for([str(bundle.location), str(out_dir)])
    redact_manifest(bundle.manifest, redactor, by="qdqreport report --redact")
    return redactor


def _refuse_inside_bundle(bundle: Bundle, out_dir: Path) -> None:
    # The bundle is read-only evidence; writing into it would break its sha256 index.
    if bundle.location.is_dir():
        root, target = bundle.location.resolve(), out_dir.resolve()
        if target == root or root in target.parents:
            raise QdqReportError(f"{out_dir}: is inside the bundle {bundle.location}; pass another -o directory")


# --- CI outputs (--sarif, --junit, $GITHUB_STEP_SUMMARY): rendered by render/ci.py, written here ---------

def check_ci_targets(outputs: CiOutputs | None) -> None:
    """Refuse before any work when a --sarif or --junit path cannot be a file we replace,
    or $GITHUB_STEP_SUMMARY cannot be appended to."""
    outputs = outputs or CiOutputs()
    for flag, path in outputs.targets().items():
        _check_ci_target(path, flag)
    summary = outputs.step_summary
    if summary is not None and (summary.is_dir() or (summary.exists() and not os.access(summary, os.W_OK))):
        raise QdqReportError(f"GITHUB_STEP_SUMMARY={summary}: is not a writable file; unset it or point it to one")


def refuse_ci_inside_bundle(outputs: CiOutputs | None, bundle_location: Path) -> None:
    # The bundle is read-only evidence: a file written into it would break its sha256 index.
    if not bundle_location.is_dir():
        return
    root = bundle_location.resolve()
    for flag, path in (outputs or CiOutputs()).targets().items():
        if root in path.resolve().parents:
            raise QdqReportError(f"{flag} {path}: is inside the bundle {bundle_location}; write it somewhere else")


def write_ci(outputs: CiOutputs | None, texts: CiTexts) -> tuple[Path, ...]:
    """Write the --sarif/--junit files (each atomically) and append the job summary; return the files written."""
    written = tuple(_write_ci_file(path, text, flag) for flag, path, text in texts.files)
    if outputs is not None and outputs.step_summary is not None and texts.summary is not None:
        _append_step_summary(outputs.step_summary, texts.summary)
    return written


def _check_ci_target(path: Path, flag: str) -> None:
    """Refuse before any work when *path* cannot be a file we replace."""
    if path.is_dir():
        example = path / ("qdqreport.sarif" if flag == "--sarif" else "qdqreport.xml")
        raise QdqReportError(f"{flag} {path}: is a directory; pass a file path such as {example}")
    existing = next(parent for parent in path.parents if parent.exists() or parent == parent.parent)
    if not existing.is_dir():  # missing folders are created (like -o); a file on the way cannot be
        raise QdqReportError(f"{flag} {path}: {existing} is a file, not a folder; pass another path")


def _write_ci_file(path: Path, text: str, flag: str) -> Path:
    """Write *text* to *path* atomically (temp file in the same folder, then rename)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temp, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise QdqReportError(f"{flag} {path}: cannot write ({exc.strerror or exc}); pass a writable path") from exc
    return path


def _append_step_summary(path: Path, text: str) -> None:
    """Append the Markdown report's head to $GITHUB_STEP_SUMMARY (never truncate: other steps write there too)."""
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as handle:
            handle.write("\n" + text)  # a blank line keeps it apart from what the previous step wrote
    except OSError as exc:
        raise QdqReportError(f"GITHUB_STEP_SUMMARY={path}: cannot append ({exc.strerror or exc}); "
                             "unset it or point it to a writable file") from exc
