"""The two Jinja environments. Templates live in the repository's top-level templates/ folder,
which the wheel carries as qdqreport/templates (see pyproject.toml)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

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


@lru_cache(maxsize=None)
def html_env() -> Environment:
    """Autoescaping on: every node name and error text in the HTML is escaped unless marked safe."""
    env = Environment(loader=_loader(), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(FILTERS)
    return env


@lru_cache(maxsize=None)
def markdown_env() -> Environment:
    """No autoescaping (the output is Markdown): templates pass user strings through the `md` filter."""
    env = Environment(loader=_loader(), autoescape=False, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(MARKDOWN_FILTERS)
    return env
