"""--redact: make a bundle or a report safe to attach to a public ticket.

Absolute and user-given paths are reduced to file names, host details are dropped, and the
manifest records what was removed (`manifest["redaction"]`, shown in the report's provenance).
Pure text and dict work: no third-party imports, so every layer may use it.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, Iterable

# Bundle files whose text is scrubbed (arrays are numbers; their keys are sample/output names).
TEXT_SUFFIXES = (".json", ".txt", ".csv", ".log", ".md", ".py")
# Manifest fields that hold a path the user gave: reduced to the file name whatever it looks like.
_PATH_FIELDS = (("models", "*", "path"), ("inputs", "*", "source"), ("task", "postprocess", "source"),
                ("task", "task_results", "source"))
# Characters a path cannot follow: a base64 run or a word (so "/tmp" inside data is left alone).
_NOT_AFTER = r"(?<![A-Za-z0-9+_.\-])"
_PATH_TAIL = r"(?:/[^\s\"'<>|:;,*?()\[\]{}=`]*)?"


@dataclass
class Redactor:
    """Reduces paths under *roots* and the *given* strings to file names; counts what it changed."""

    roots: tuple[str, ...]
    given: tuple[str, ...] = ()
    hostname: str = ""
    removed: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        roots = sorted({r.rstrip("/") for r in self.roots if r and r.rstrip("/")}, key=len, reverse=True)
        self._pattern = re.compile(_NOT_AFTER + "(?:" + "|".join(re.escape(r) for r in roots) + ")" + _PATH_TAIL) \
            if roots else None
        self._given = sorted({g for g in self.given if g and ("/" in g or "\\" in g)}, key=len, reverse=True)

    def text(self, value: str, host: bool = True) -> str:
        """*value* with every sensitive path reduced to its file name and (with *host*) the host name
        replaced. Rendered reports pass host=False: their embedded images are base64 text."""
        for given in self._given:
            value = value.replace(given, file_name(given))
        if self._pattern is not None:
            value = self._pattern.sub(lambda m: file_name(m.group(0)), value)
        if host and len(self.hostname) >= 2:
            value = re.sub(rf"(?<![\w.\-]){re.escape(self.hostname)}(?![\w\-])", "<host>", value)
        return value


def file_name(path: str) -> str:
    """The last component of a path as written on any OS ("" stays "", "dir/" gives "dir")."""
    stripped = path.rstrip("/\\")
    if not stripped:
        return path
    return PurePath(stripped.replace("\\", "/")).name or stripped


def redactor_for(paths: Iterable[str | os.PathLike | None]) -> Redactor:
    """A redactor for this machine: the working directory, home, temp folder, this checkout, the
    folders of every path given on the command line, and the host name."""
    given = [str(p) for p in paths if p]
    roots = {os.getcwd(), str(Path.home()), tempfile.gettempdir(), str(Path(__file__).resolve().parent.parent)}
    for path in given:
        for candidate in (Path(path.split(":")[0]), Path(path)):
            absolute = candidate.expanduser().absolute()
            roots.update({str(absolute.parent), str(absolute.resolve().parent)})
    user = _user()
    if user:
        roots.add(f"/home/{user}")
    roots = {r for r in roots if r not in ("/", "") and len(PurePath(r).parts) >= 2}
    return Redactor(tuple(roots), tuple(given), socket.gethostname())


def redact_manifest(manifest: dict[str, Any], redactor: Redactor, by: str) -> dict[str, Any]:
    """Redact a manifest in place and record what was removed under manifest['redaction']."""
    removed = list(manifest.get("redaction", {}).get("removed", []))
    argv = manifest.get("collector", {}).get("argv")
    if isinstance(argv, list) and argv:
        manifest["collector"]["argv"] = [_argv_item(a, redactor) for a in argv]
        if manifest["collector"]["argv"] != argv:
            removed.append("collector.argv: folders of the paths in the command")
    for where in _PATH_FIELDS:
        removed += _reduce_path_field(manifest, where)
    host = manifest.get("host")
    if isinstance(host, dict) and host:
        removed += [f"host.{key}" for key in sorted(host)]
        manifest["host"] = {}
    before = repr(manifest)
    _walk_strings(manifest, redactor.text)
    if repr(manifest) != before:
        removed.append("absolute paths and the host name in other manifest fields")
    manifest["redaction"] = {"by": by, "removed": _unique(removed + redactor.removed)}
    return manifest


def redact_folder(root: Path, redactor: Redactor) -> list[str]:
    """Scrub every text file under *root* in place (a bundle's staging folder); return those changed."""
    changed = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
        text = path.read_text(encoding="utf-8", errors="replace")
        clean = redactor.text(text)
        if clean != text:
            path.write_text(clean, encoding="utf-8")
            changed.append(path.relative_to(root).as_posix())
    if changed:
        redactor.removed.append(f"absolute paths and the host name in {', '.join(changed)}")
    return changed


def _argv_item(arg: str, redactor: Redactor) -> str:
    if arg.startswith("-") and "=" in arg:
        option, value = arg.split("=", 1)
        return f"{option}={_argv_item(value, redactor)}"
    if "/" in arg or "\\" in arg:
        return file_name(arg)
    return redactor.text(arg)


def _reduce_path_field(manifest: dict[str, Any], where: tuple[str, ...]) -> list[str]:
    removed = []
    for parent, key, label in _find(manifest, where, ""):
        value = parent.get(key)
        if isinstance(value, str) and file_name(value) != value:
            parent[key] = file_name(value)
            removed.append(f"{label}: folder of the path")
    return removed


def _find(obj: Any, where: tuple[str, ...], label: str) -> Iterable[tuple[dict[str, Any], str, str]]:
    if not isinstance(obj, dict):
        return
    head, rest = where[0], where[1:]
    keys = sorted(obj) if head == "*" else [head]
    for key in keys:
        path = f"{label}.{key}" if label else key
        if not rest:
            if key in obj:
                yield obj, key, path
        elif key in obj:
            yield from _find(obj[key], rest, path)


def _walk_strings(obj: Any, clean) -> None:
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in list(items):
        if isinstance(value, str):
            obj[key] = clean(value)
        else:
            _walk_strings(value, clean)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def redact_bundle_folder(root: Path, manifest: dict[str, Any], given: Iterable[str | None]) -> None:
    """collect --redact: scrub the staged bundle's text files and its manifest before the commit
    hashes them, so the published bundle never held the removed details."""
    redactor = redactor_for(given)
    redact_folder(root, redactor)
    redact_manifest(manifest, redactor, by="qdqreport collect --redact")
