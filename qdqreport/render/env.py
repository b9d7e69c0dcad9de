"""The two Jinja environments. Templates live in the repository's top-level templates/ folder,
which the wheel carries as qdqreport/templates (see pyproject.toml)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from jinja2 import BytecodeCache, Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket

import qdqreport
from qdqreport.errors import QdqReportError
from qdqreport.render.filters import FILTERS, MARKDOWN_FILTERS


def template_dirs() -> list[Path]:
    """Installed wheel first (qdqreport/templates), then the source tree (templates/ beside the package)."""
    package = Path(qdqreport.__file__).resolve().parent
    return [package / "templates", package.parent / "templates"]


def _loader() -> FileSystemLoader:
    found = [str(path) for path in template_dirs() if (path / "report.html.j2").is_file()]
    if not found:
        tried = " or ".join(str(p) for p in template_dirs())
        raise QdqReportError(f"report templates not found in {tried}; reinstall qdqreport (pip install --force-reinstall qdqreport)")
    return FileSystemLoader(found)


class _BestEffortCache(FileSystemBytecodeCache):
    """A cache that can only save time: a full or read-only temp directory must not fail the report."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass  # the next run compiles again

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            pass


@lru_cache(maxsize=None)
def _bytecode_cache() -> BytecodeCache | None:
    """Compiled templates kept between runs: compiling the 18 templates is a quarter of a report's time.

    Jinja's own per-user cache folder in the temp directory (`_jinja2-cache-<uid>`, created 0700, refused
    when another user owns it); each entry is checked against its template's source, so an edited
    template is recompiled. None (compile every time) when that folder cannot be used, or when
    QDQREPORT_NO_TEMPLATE_CACHE is set."""
    if os.environ.get("QDQREPORT_NO_TEMPLATE_CACHE"):
        return None
    try:
        return _BestEffortCache()
    except (OSError, RuntimeError):
        return None


# auto_reload=False: the templates ship with the package and do not change during a run, so a template loaded once
# is not stat-ed again on every render (a second report in one process, or one run as another user, reads no file).
@lru_cache(maxsize=None)
def html_env() -> Environment:
    """Autoescaping on: every node name and error text in the HTML is escaped unless marked safe."""
    env = Environment(loader=_loader(), autoescape=True, undefined=StrictUndefined, bytecode_cache=_bytecode_cache(),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, auto_reload=False)
    env.filters.update(FILTERS)
    return env


@lru_cache(maxsize=None)
def markdown_env() -> Environment:
    """No autoescaping (the output is Markdown): templates pass user strings through the `md` filter."""
    env = Environment(loader=_loader(), autoescape=False, undefined=StrictUndefined, bytecode_cache=_bytecode_cache(),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, auto_reload=False)
    env.filters.update(MARKDOWN_FILTERS)
    return env
