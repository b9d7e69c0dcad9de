"""diff.html, diff.md and diff.json from a DiffModel, written together atomically."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
from markupsafe import Markup
from matplotlib.figure import Figure

from qdqreport import __version__
from qdqreport.diff.accuracy import OutputDiff
from qdqreport.diff.model import DiffModel, LayerCurves
from qdqreport.errors import QdqReportError
from qdqreport.pipeline import write_atomically
from qdqreport.render.env import html_env, markdown_env
from qdqreport.render.plots import STYLE, to_svg

OUTPUT_FILES = {"html": "diff.html", "markdown": "diff.md", "json": "diff.json"}
FORMAT = "qdqreport.diff"
VERSION = "1.0"
# (rows per table, input rows shown) per attempt: GitHub caps a comment at 65,536 characters.
MD_LEVELS = ((30, 80), (10, 30), (5, 12))
MD_BUDGET = 60000
MAX_PLOTS = 4


@dataclass(frozen=True)
class DiffOutcome:
    paths: tuple[Path, ...]  # diff.html, diff.md, diff.json
    regressed: bool


def write_diff(model: DiffModel, out_dir: Path | str) -> DiffOutcome:
    """Render all three files in memory, then move them into *out_dir* together."""
    out = Path(out_dir)
    for ref in (model.before, model.after):
        _refuse_inside_bundle(Path(ref.location), out)
    texts = {OUTPUT_FILES["html"]: render_html(model), OUTPUT_FILES["markdown"]: render_markdown(model),
             OUTPUT_FILES["json"]: render_json(model)}
    paths = write_atomically(out, texts)
    return DiffOutcome(tuple(paths[name] for name in OUTPUT_FILES.values()), model.verdict.regressed)


def render_json(model: DiffModel) -> str:
    document = {"format": FORMAT, "version": VERSION, "generator": {"name": "qdqreport", "version": __version__},
                "regressed": model.verdict.regressed, **model.to_dict()}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def render_markdown(model: DiffModel, budget: int = MD_BUDGET) -> str:
    """At most *budget* characters: tables are shortened first, then the text is cut at a line end."""
    text = ""
    for rows, inputs in MD_LEVELS:
        text = _markdown(model, rows, inputs)
        if len(text) <= budget:
            return text
    note = "\n\n… diff cut to fit a GitHub comment; see diff.html for the rest.\n"
    head = text[: max(0, budget - len(note) - 16)].rsplit("\n", 1)[0]
    # Close a <details> left open, or the note would be folded away inside it.
    head += "\n\n</details>" * max(0, head.count("<details>") - head.count("</details>"))
    return head + note


def _markdown(model: DiffModel, rows: int, inputs: int) -> str:
    template = markdown_env().get_template("diff.md.j2")
    text = template.render(model=model, limit=rows, inputs_limit=inputs, delta=delta, signed=signed)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def render_html(model: DiffModel) -> str:
    template = html_env().get_template("diff.html.j2")
    return template.render(model=model, plots=_plots(model), delta=delta, signed=signed, version=__version__)


def delta(value: float | None, kind: str = "cosine") -> str:
    """AFTER minus BEFORE with its sign: percentage points for shares, dB for SQNR, 4 decimals for cosine."""
    if value is None or not math.isfinite(value):
        return "—"
    if kind == "pct":
        return f"{value * 100:+.1f} pt".replace(".0 pt", " pt")
    if kind == "db":
        return f"{value:+.1f} dB"
    return f"{value:+.4f}"


def signed(value: Any) -> str:
    return f"{value:+,}" if isinstance(value, int) and not isinstance(value, bool) else "—"


# --- plots (our own SVG, marked safe) --------------------------------------------------------------
def _plots(model: DiffModel) -> dict[str, Any]:
    samples = {}
    for comparison in model.accuracy.comparisons:
        for output in comparison.outputs:
            if len(samples) < MAX_PLOTS and output.improved is not None and not comparison.control:
                key = f"{comparison.id}/{output.output}"
                samples[key] = _sample_plot(key, output)
    return {"samples": {k: v for k, v in samples.items() if v}, "curves": _curves_plot(model.curves)}


def _sample_plot(key: str, output: OutputDiff) -> Markup | None:
    if not output.series:
        return None
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 2.4), layout="constrained")
        axes = figure.add_subplot()
        for side, label in ((0, "before"), (1, "after")):
            values = [math.nan if pair[side] is None else pair[side] for pair in output.series]
            axes.plot(range(len(values)), values, marker="o" if len(values) <= 60 else None, markersize=3,
                      linewidth=1.0, label=label)
        axes.set_xlabel("sample")
        axes.set_ylabel("cosine vs reference")
        axes.set_title("per-sample cosine, before and after")
        axes.legend(loc="lower left", fontsize=7)
        return Markup(to_svg(figure, "diff-" + key))


def _curves_plot(curves: LayerCurves | None) -> Markup | None:
    if curves is None:
        return None
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 2.6), layout="constrained")
        axes = figure.add_subplot()
        for values, label in ((curves.before_sqnr, "before"), (curves.after_sqnr, "after")):
            if any(v is not None for v in values):
                axes.plot(range(len(values)), [math.nan if v is None else v for v in values], linewidth=1.0, label=label)
        axes.set_xlabel("activation, in QDQ graph order")
        axes.set_ylabel("accumulated SQNR vs FP32 (dB)")
        axes.set_title("per-layer error along the graph, before and after")
        axes.legend(loc="lower left", fontsize=7)
        return Markup(to_svg(figure, "diff-layers"))


def _refuse_inside_bundle(bundle: Path, out_dir: Path) -> None:
    # A bundle is read-only evidence; writing into it would break its sha256 index.
    if bundle.is_dir():
        root, target = bundle.resolve(), out_dir.resolve()
        if target == root or root in target.parents:
            raise QdqReportError(f"{out_dir}: is inside the bundle {bundle}; pass another -o directory")
