"""Plots as inline SVG strings, drawn from ReportModel parts with matplotlib's object API.

Determinism: a fixed style (rc_context), a fixed `svg.hashsalt`, no date metadata and text kept
as <text> (svg.fonttype none), so the same model gives byte-identical SVG. Ids inside each SVG
get a per-plot prefix because several SVGs share one HTML document.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from qdqreport.report_model import ComparisonView, PrecisionView, ReportModel

STYLE = {
    "svg.hashsalt": "qdqreport",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 8.0,
    "axes.titlesize": 9.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 72.0,
    "savefig.dpi": 72.0,
    "path.simplify": True,
    "axes.prop_cycle": matplotlib.cycler(color=["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                                "#8c564b", "#e377c2", "#17becf"]),
}
# One colour per precision, shared with the CSS badges: INT8 green, FP16 amber, FP32 red.
PRECISION_COLORS = {"int8": "#2e7d32", "uint8": "#66bb6a", "int4": "#00838f", "fp8": "#4db6ac",
                    "fp16": "#f9a825", "bf16": "#ffcc80", "fp32": "#c62828"}
MAX_LINES = 8  # outputs drawn per comparison plot; the tables list them all
MAX_BARS = 40


def comparison_plots(comparison: ComparisonView) -> dict[str, str | None]:
    """Per-sample cosine and the SQNR distribution of one comparison ({"cosine": svg, "sqnr": svg})."""
    return {"cosine": cosine_plot(comparison), "sqnr": sqnr_histogram(comparison)}


def cosine_plot(comparison: ComparisonView) -> str | None:
    outputs = [row for row in comparison.outputs if row.sample_cosines][:MAX_LINES]
    if not outputs:
        return None
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 2.6), layout="constrained")
        axes = figure.add_subplot()
        for row in outputs:
            values = [math.nan if v is None else v for v in row.sample_cosines]
            axes.plot(range(len(values)), values, marker="o" if len(values) <= 60 else None, markersize=3,
                      linewidth=1.0, label=_short(row.output))
        axes.set_xlabel("sample")
        axes.set_ylabel("cosine")
        axes.set_title(_short(f"{comparison.candidate} vs {comparison.reference}: cosine per sample", 90))
        _legend(axes, len(outputs))
        return to_svg(figure, f"cos-{comparison.id}")


def sqnr_histogram(comparison: ComparisonView) -> str | None:
    series = [(row.output, [v for v in row.sample_sqnr if v is not None]) for row in comparison.outputs]
    series = [(name, values) for name, values in series if values][:MAX_LINES]
    if not series:
        return None  # identical outputs: every SQNR is infinite, nothing to draw
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 2.4), layout="constrained")
        axes = figure.add_subplot()
        for name, values in series:
            axes.hist(values, bins=min(30, max(5, len(values))), histtype="stepfilled", alpha=0.45, label=_short(name))
        axes.set_xlabel("SQNR per sample (dB)")
        axes.set_ylabel("samples")
        axes.set_title(_short(f"{comparison.candidate} vs {comparison.reference}: error distribution", 90))
        _legend(axes, len(series))
        return to_svg(figure, f"sqnr-{comparison.id}")


def precision_bar(precision: PrecisionView | None) -> str | None:
    """Stacked horizontal bars: compute nodes per op type, split by precision (largest op types first)."""
    if precision is None or not precision.by_op_type:
        return None
    rows = list(precision.by_op_type[:MAX_BARS])[::-1]
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 0.8 + 0.22 * len(rows)), layout="constrained")
        axes = figure.add_subplot()
        left = [0] * len(rows)
        labels = [_short(row["op_type"]) for row in rows]
        for column_index, name in enumerate(precision.columns):
            widths = [row["counts"][column_index] for row in rows]
            if any(widths):
                axes.barh(labels, widths, left=left, color=PRECISION_COLORS.get(name, "#9e9e9e"), label=name)
                left = [a + b for a, b in zip(left, widths)]
        axes.set_xlabel("compute nodes")
        axes.set_title("precision by op type")
        axes.legend(loc="lower right", fontsize=7)
        return to_svg(figure, "precision")


def series_plot(series: dict[str, Any], key: str) -> str | None:
    """A finding's Series evidence: bars (labels -> values) or points (index -> value)."""
    values = [float(v) for v in series.get("values", [])]
    if not values:
        return None
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 2.4), layout="constrained")
        axes = figure.add_subplot()
        if series.get("kind") == "bar":
            labels = [_short(label, 18) for label in series.get("labels", [])][:MAX_BARS]
            axes.bar(range(len(labels)), values[:len(labels)], color="#1f77b4")
            axes.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=6)
        else:
            axes.plot(range(len(values)), values, marker="o" if len(values) <= 60 else None, markersize=3, linewidth=1.0)
        if series.get("threshold") is not None:
            axes.axhline(float(series["threshold"]), color="#c62828", linestyle="--", linewidth=1.0)
        axes.set_ylabel(_short(str(series.get("y_label", "")), 60))
        axes.set_title(_short(str(series.get("title", "")), 90))
        return to_svg(figure, key)


def layers_plot(layers: Any) -> str | None:
    """Accumulated and local SQNR of every aligned activation along the QDQ graph, first divergence marked."""
    if layers is None or not layers.tensors:
        return None
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 2.6), layout="constrained")
        axes = figure.add_subplot()
        for values, label in ((layers.accumulated_sqnr, "accumulated (QDQ model)"), (layers.local_sqnr, "local (FP32 inputs)")):
            if any(v is not None for v in values):
                axes.plot(range(len(values)), [math.nan if v is None else v for v in values], linewidth=1.0, label=label)
        if layers.first_position is not None:
            axes.axvline(layers.first_position - 1, color="#c62828", linestyle="--", linewidth=1.0)
        axes.set_xlabel("activation, in QDQ graph order")
        axes.set_ylabel("SQNR vs FP32 (dB)")
        axes.set_title("per-layer error along the graph")
        axes.legend(loc="lower left", fontsize=7)
        return to_svg(figure, "layers")


def engine_precision_map(engine: Any) -> str | None:
    """One strip per TensorRT engine: each layer in execution order, coloured by precision; ▼ marks unfused Q/DQ."""
    stages = [view for view in (engine.stages if engine else ()) if view.sequence]
    if not stages:
        return None
    with matplotlib.rc_context({**STYLE, "axes.grid": False}):
        figure = Figure(figsize=(7.0, 0.9 + 0.55 * len(stages)), layout="constrained")
        axes = figure.add_subplot()
        seen: dict[str, Any] = {}
        for row, view in enumerate(stages):
            for x, (precision, flag) in enumerate(view.sequence):
                bar = axes.bar(x, 0.7, bottom=row - 0.35, width=1.0, color=PRECISION_COLORS.get(precision, "#9e9e9e"),
                               linewidth=0)
                seen.setdefault(precision, bar)
                if flag == "unfused Q/DQ":
                    axes.plot(x, row + 0.45, marker="v", color="#212121", markersize=4)
        axes.set_yticks(range(len(stages)), [_short(v.stage_id, 20) for v in stages])
        axes.set_ylim(-0.6, len(stages) - 0.2)
        axes.set_xlabel("engine layer, in execution order (NoOp layers left out)")
        axes.set_title("engine precision map (▼ unfused Q/DQ)")
        figure.legend([seen[k] for k in sorted(seen)], sorted(seen), loc="outside right upper", fontsize=7)
        return to_svg(figure, "engine-map")


def report_plots(model: ReportModel) -> dict[str, Any]:
    """Every plot of a report, keyed for the HTML template."""
    series = {f"{finding.fingerprint}-{index}": series_plot(ev, f"s-{finding.fingerprint}-{index}")
              for finding in model.findings for index, ev in enumerate(finding.evidence) if ev["type"] == "series"}
    return {"comparisons": {c.id: comparison_plots(c) for c in model.comparisons},
            "precision": precision_bar(model.precision), "series": series, "layers": layers_plot(model.layers),
            "engine": engine_precision_map(model.engine)}


def to_svg(figure: Figure, key: str) -> str:
    """The figure as an <svg> element ready to inline: no XML prolog, no metadata, ids prefixed by *key*."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    # Namespace declarations are implied for inline SVG in HTML; dropping them keeps the report URL-free.
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text)
    prefix = "g" + hashlib.sha1(key.encode()).hexdigest()[:8] + "-"
    text = re.sub(r'(\bid="|href="#|url\(#)([^")]+)', lambda m: m.group(1) + prefix + m.group(2), text)
    return text.replace("<svg ", '<svg class="plot" role="img" ', 1).strip()


def _legend(axes: Any, count: int) -> None:
    if count > 1:
        axes.legend(loc="lower left", fontsize=7)


def _short(text: str, limit: int = 40) -> str:
    """A label cut to *limit* characters; `$` escaped so names are never parsed as mathtext."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("$", r"\$")

