"""report.html: one self-contained file (inline CSS and SVG, no JavaScript, no external URL)."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from qdqreport import __version__
from qdqreport.render.env import html_env
from qdqreport.report.model import ReportModel


def render_html(model: ReportModel, plots: dict[str, Any] | None = None) -> str:
    """The HTML report of *model*; every user string is autoescaped, only our own SVG is marked safe.

    *plots*: report_plots(model) when it was drawn already (render/plot_worker.py); None draws them here."""
    template = html_env().get_template("report.html.j2")
    if plots is None:
        from qdqreport.render.plots import report_plots  # matplotlib, imported only by a run that draws here

        plots = report_plots(model)
    plots = dict(plots)
    links = plots.pop("series_links")  # figure ids built from comparison ids: bundle text, stays autoescaped
    return template.render(model=model, plots={**_trusted(plots), "series_links": links}, version=__version__)


def _trusted(value: Any) -> Any:
    # The SVG comes from matplotlib, and matplotlib escapes the text it draws.
    if isinstance(value, dict):
        return {key: _trusted(item) for key, item in value.items()}
    return Markup(value) if isinstance(value, str) else value
