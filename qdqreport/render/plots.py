"""Plots as inline SVG strings, drawn from ReportModel parts with matplotlib's object API.

Determinism: a fixed style (rc_context), a fixed `svg.hashsalt`, no date metadata and text kept
as <text> (svg.fonttype none), so the same model gives byte-identical SVG. Ids inside each SVG
get a per-plot prefix because several SVGs share one HTML document.

Readability rules every plot follows: axis labels with units, legends outside the data, labelled
threshold and divergence markers, one axis range per metric across the whole report (Scales), a
<title> per SVG, and no plot drawn twice (a finding's series equal to a plot elsewhere links to it).
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from dataclasses import dataclass
from html import escape
from typing import Any, Callable, Iterable

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from qdqreport.report.model import ComparisonView, PrecisionView, ReportModel

STYLE = {
    "svg.hashsalt": "qdqreport",
    "svg.fonttype": "none",
    "text.parse_math": False,  # user names such as `$\cmd{$` are drawn as written, never parsed as mathtext
    "font.family": "DejaVu Sans",
    "font.size": 10.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.5,
    "xtick.labelsize": 9.0,
    "ytick.labelsize": 9.0,
    "legend.fontsize": 9.0,
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
MARKER_COLOR = "#c62828"
LABEL_BOX = {"facecolor": "white", "edgecolor": "none", "pad": 1.0, "alpha": 0.85}  # marker labels stay readable over lines
MAX_LINES = 8  # outputs drawn per comparison plot; the tables list them all
MAX_BARS = 40
# A strip's dots are drawn once per distinct position at this fraction of the axis: 4-point dots on a 5-inch axis
# overlap within a few hundredths of it, so dots closer than that draw the same picture. A new user's 14,284 VAD
# frames drew 85,000 SVG markers and took 6 s of a 10 s report (issue 12); at most STRIP_CELLS dots a row now.
STRIP_CELLS = 1000
TOP_MARKED = 5  # worst activations numbered on the per-layer plot (ranks of its Top table)
# Figure sizes in inches: a column plot (two side by side on a wide screen, one on a phone) and a wide plot.
COLUMN = 5.2
WIDE = 7.4
SQNR_CAP = 60.0  # dB: the per-layer plot's axis stops here (the tables give every value)
COSINE_LABEL = "cosine similarity (1 = identical)"
SQNR_LABEL = "SQNR (dB, higher is better)"


@dataclass(frozen=True)
class Scales:
    """One axis range per metric for the whole report, so two plots of one metric compare at a glance."""

    cosine: tuple[float, float] | None
    sqnr: tuple[float, float] | None


def report_plots(model: ReportModel, draw: Callable[[list[PlotJob]], list[str | None]] | None = None) -> dict[str, Any]:
    """Every plot of a report, keyed for the HTML template.

    *draw* turns the list of plot jobs into their SVGs, in order (render/plot_worker.py draws them in other
    processes); None draws them here, one after another."""
    jobs, links = plot_jobs(model)
    svgs = draw(jobs) if draw is not None else [job.draw() for job in jobs]
    out: dict[str, Any] = {"comparisons": {c.id: {} for c in model.comparisons}, "precision": None, "series": {},
                           "series_links": links, "layers": None, "engine": None}
    for job, svg in zip(jobs, svgs, strict=True):
        if job.slot[0] == "comparisons":
            out["comparisons"][job.slot[1]][job.slot[2]] = svg
        elif job.slot[0] == "series":
            out["series"][job.slot[1]] = svg
        else:
            out[job.slot[0]] = svg
    return out


@dataclass(frozen=True)
class PlotJob:
    """One figure to draw: where its SVG goes in report_plots' dict, the function that draws it and its arguments.
    Each job draws its own Figure, so jobs can be drawn in any order or process and give the same SVG."""

    slot: tuple[str, ...]
    function: Callable[..., str | None]
    args: tuple[Any, ...]
    cost: float  # a rough relative drawing time, to share the jobs out between processes

    def draw(self) -> str | None:
        return self.function(*self.args)


def plot_jobs(model: ReportModel) -> tuple[list[PlotJob], dict[str, str]]:
    """The figures of a report in drawing order, and the series links (series key -> id of the figure that
    already draws it)."""
    drawn = _drawn_elsewhere(model)
    scales = report_scales(model, drawn)
    jobs: list[PlotJob] = []
    links: dict[str, str] = {}  # series key -> id of the figure that already draws it
    thresholds: dict[str, float] = {}  # figure id -> threshold of a series it stands in for
    for finding in model.findings:
        for index, ev in enumerate(finding.evidence):
            if ev["type"] != "series":
                continue
            key = f"{finding.fingerprint}-{index}"
            target = _same_plot(ev, drawn)
            if target is None:
                jobs.append(PlotJob(("series", key), series_plot, (ev, f"s-{key}", scales), 2.0))
                continue
            links[key] = target
            if ev.get("threshold") is not None:
                thresholds.setdefault(target, float(ev["threshold"]))
    for c in model.comparisons:
        jobs.append(PlotJob(("comparisons", c.id, "cosine"), cosine_plot,
                            (c, scales, thresholds.get(f"fig-cos-{c.id}")), 2.0))
        jobs.append(PlotJob(("comparisons", c.id, "sqnr"), sqnr_strip, (c, scales), 1.0))
    jobs.append(PlotJob(("precision",), precision_bar, (model.precision,), 2.0 if model.precision is not None else 0.0))
    jobs.append(PlotJob(("layers",), layers_plot, (model.layers,), 2.0 if model.layers is not None else 0.0))
    layers_drawn = sum(len(view.sequence) for view in model.engine.stages) if model.engine else 0
    jobs.append(PlotJob(("engine",), engine_precision_map, (model.engine,), 1.0 + layers_drawn / 50 if layers_drawn else 0.0))
    return jobs, links


def report_scales(model: ReportModel, drawn: list[tuple[str, tuple[float, ...]]] | None = None) -> Scales:
    """The cosine and SQNR ranges spanning every output-level value the plots of *model* draw.

    The per-layer plot keeps its own SQNR range: activations inside the graph reach 100+ dB where
    outputs sit near 0, and one range would flatten the outputs' plots to a line."""
    cosines = [v for c in model.comparisons for row in c.outputs for v in row.sample_cosines]
    sqnrs = [v for c in model.comparisons for row in c.outputs for v in row.sample_sqnr]
    for finding in model.findings:
        for ev in finding.evidence:
            if ev["type"] == "series" and _same_plot(ev, drawn or []) is None:
                metric = _metric(ev)
                target = cosines if metric == "cosine" else sqnrs if metric == "sqnr" else []
                target.extend(list(ev.get("values", [])) + [ev.get("threshold")])
    cosine = _span(cosines, ceiling=1.0)
    return Scales(cosine=None if cosine is None else (cosine[0], max(cosine[1], 1.0)), sqnr=_span(sqnrs))


def comparison_plots(comparison: ComparisonView, scales: Scales | None = None,
                     threshold: float | None = None) -> dict[str, str | None]:
    """Per-sample cosine and the per-sample SQNR of one comparison ({"cosine": svg, "sqnr": svg})."""
    return {"cosine": cosine_plot(comparison, scales, threshold), "sqnr": sqnr_strip(comparison, scales)}


def cosine_plot(comparison: ComparisonView, scales: Scales | None = None, threshold: float | None = None) -> str | None:
    outputs = [row for row in comparison.outputs if row.sample_cosines][:MAX_LINES]
    if not outputs:
        return None
    title = _short(f"{comparison.candidate} vs {comparison.reference}: cosine per sample", 80)
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(COLUMN, 2.9), layout="constrained")
        axes = figure.add_subplot()
        for row in outputs:
            values = [math.nan if v is None else v for v in row.sample_cosines]
            axes.plot(range(len(values)), values, marker="o" if len(values) <= 60 else None, markersize=3,
                      linewidth=1.0, label=_short(row.output))
        if threshold is not None:
            _threshold_line(axes, threshold)
        axes.set_xlabel("sample index (evaluation order)")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # samples are whole: no 0.5 ticks
        axes.set_ylabel(COSINE_LABEL)
        _limit(axes.set_ylim, scales.cosine if scales else None)
        axes.set_title(title)
        # Always a legend (it names the output): every cosine plot keeps one axes height, so one set of ticks.
        _legend(figure, axes, len(outputs) + (threshold is not None), always=True)
        return to_svg(figure, f"cos-{comparison.id}", title)


def sqnr_strip(comparison: ComparisonView, scales: Scales | None = None) -> str | None:
    """Every sample's SQNR as a dot, one row per output, the median as a bar: readable for 3 samples or 3000."""
    series = [(row.output, [v for v in row.sample_sqnr if v is not None]) for row in comparison.outputs]
    series = [(name, values) for name, values in series if values][:MAX_LINES]
    if not series:
        return None  # identical outputs: every SQNR is infinite, nothing to draw
    title = _short(f"{comparison.candidate} vs {comparison.reference}: SQNR per sample", 80)
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(COLUMN, 1.4 + 0.35 * len(series)), layout="constrained")
        axes = figure.add_subplot()
        low, high = min(min(v) for _, v in series), max(max(v) for _, v in series)
        for row, (name, values) in enumerate(series):
            dots = _distinct_positions(values, low, high)
            axes.plot(dots, [row] * len(dots), linestyle="none", marker="o", markersize=4, alpha=0.45, color="#1f77b4")
            median = sorted(values)[len(values) // 2]
            axes.plot([median], [row], linestyle="none", marker="|", markersize=14, markeredgewidth=2, color="#202124")
        # One output: its name is in the table above; the axis keeps the width for the dots.
        axes.set_yticks(range(len(series)), [_short(name, 24) for name, _ in series] if len(series) > 1 else [""])
        axes.set_ylim(-0.6, len(series) - 0.4)
        axes.set_xlabel(f"{SQNR_LABEL}; dots: samples, bar: median")
        _limit(axes.set_xlim, scales.sqnr if scales else None)
        axes.set_title(title)
        return to_svg(figure, f"sqnr-{comparison.id}", title)


def _distinct_positions(values: list[float], low: float, high: float) -> list[float]:
    """*values* with those that share a cell of the STRIP_CELLS between *low* and *high* drawn once (every value
    when there are fewer than that: a small strip is left exactly as its samples are)."""
    if len(values) <= STRIP_CELLS or high <= low:
        return values if len(values) <= STRIP_CELLS else values[:1]
    cells = {}
    for value in values:
        cells.setdefault(round((value - low) / (high - low) * STRIP_CELLS), value)
    return list(cells.values())


def precision_bar(precision: PrecisionView | None) -> str | None:
    """Stacked horizontal bars: compute nodes per op type, split by precision (largest op types first)."""
    if precision is None or not precision.by_op_type:
        return None
    rows = list(precision.by_op_type[:MAX_BARS])[::-1]
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(COLUMN, 1.2 + 0.22 * len(rows)), layout="constrained")
        axes = figure.add_subplot()
        left = [0] * len(rows)
        labels = [_short(row["op_type"]) for row in rows]
        drawn = 0
        for column_index, name in enumerate(precision.columns):
            widths = [row["counts"][column_index] for row in rows]
            if any(widths):
                axes.barh(labels, widths, left=left, color=PRECISION_COLORS.get(name, "#9e9e9e"), label=name)
                left = [a + b for a, b in zip(left, widths)]
                drawn += 1
        axes.set_xlabel("compute nodes (count)")
        axes.set_title("precision by op type")
        _legend(figure, axes, drawn, always=True)
        return to_svg(figure, "precision", "Compute nodes per op type, by precision")


def series_plot(series: dict[str, Any], key: str, scales: Scales | None = None) -> str | None:
    """A finding's Series evidence: bars (labels -> values) or points (index -> value), the 3 lowest points named."""
    values = [float(v) for v in series.get("values", [])]
    if not values:
        return None
    title = _short(str(series.get("title", "")), 80)
    labels = [str(label) for label in series.get("labels", [])]
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(COLUMN, 3.0), layout="constrained")
        axes = figure.add_subplot()
        if series.get("kind") == "bar":
            shown = [_short(label, 18) for label in labels][:MAX_BARS]
            axes.bar(range(len(shown)), values[:len(shown)], color="#1f77b4")
            axes.set_xticks(range(len(shown)), shown, rotation=60, ha="right", fontsize=7)
        else:
            axes.plot(range(len(values)), values, marker="o" if len(values) <= 60 else None, markersize=3, linewidth=1.0)
            axes.set_xlabel("sample index" if labels and all(label.isdigit() for label in labels) else "position")
            _name_lowest(axes, values, labels, 3)
        if series.get("threshold") is not None:
            _threshold_line(axes, float(series["threshold"]))
        metric = _metric(series)
        axes.set_ylabel(_short(str(series.get("y_label", "")), 60))
        if scales is not None:
            _limit(axes.set_ylim, scales.cosine if metric == "cosine" else scales.sqnr if metric == "sqnr" else None)
        axes.set_title(title)
        return to_svg(figure, key, title)


def layers_plot(layers: Any) -> str | None:
    """Accumulated and local SQNR of every aligned activation along the graph; the first divergence named,
    the worst activations numbered with their rank in the per-layer Top table."""
    if layers is None or not layers.tensors:
        return None
    title = "per-layer error along the graph"
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(WIDE, 3.4), layout="constrained")
        axes = figure.add_subplot()
        lines = 0
        for values, label in ((layers.accumulated_sqnr, "accumulated (QDQ model vs FP32)"),
                              (layers.local_sqnr, "local (node alone, FP32 inputs)")):
            if any(v is not None for v in values):
                axes.plot(range(len(values)), [math.nan if v is None else v for v in values], linewidth=1.0, label=label)
                lines += 1
        _cap_sqnr(axes, layers.accumulated_sqnr + layers.local_sqnr)
        _mark_top(axes, layers)
        if layers.first_position is not None:
            node = (layers.first_divergence or {}).get("node") or layers.tensors[layers.first_position - 1]
            x = layers.first_position - 1
            axes.axvline(x, color=MARKER_COLOR, linestyle="--", linewidth=1.0, label=_short(f"first divergence: {node}", 50))
            axes.annotate(_short(str(node), 30), (x, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -2),
                          textcoords="offset points", va="top", fontsize=8, color=MARKER_COLOR, bbox=LABEL_BOX)
            lines += 1
        axes.set_xlabel("activation index, in QDQ graph order (numbered: worst activations, ranks of the Top table)")
        axes.set_ylabel(SQNR_LABEL)
        axes.set_title(title)
        _legend(figure, axes, lines, always=True)
        return to_svg(figure, "layers", "Per-layer SQNR along the graph, first divergence and worst activations marked")


def engine_precision_map(engine: Any) -> str | None:
    """One strip per TensorRT engine: each layer in execution order, coloured by precision; ▼ marks unfused Q/DQ."""
    stages = [view for view in (engine.stages if engine else ()) if view.sequence]
    if not stages:
        return None
    with matplotlib.rc_context({**STYLE, "axes.grid": False}):
        figure = Figure(figsize=(WIDE, 1.4 + 0.55 * len(stages)), layout="constrained")
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
        axes.set_xlabel("engine layer index, in execution order (NoOp layers left out)")
        axes.set_title("engine precision map (▼ unfused Q/DQ)")
        figure.legend([seen[k] for k in sorted(seen)], sorted(seen), loc="outside right upper")
        return to_svg(figure, "engine-map", "Engine precision map: each engine layer coloured by its precision")


def to_svg(figure: Figure, key: str, title: str = "") -> str:
    """The figure as an <svg> element ready to inline: no XML prolog, no metadata, ids prefixed by *key*,
    a <title> named by aria-labelledby so screen readers and tooltips say what the plot shows."""
    buffer = io.StringIO()
    # savefig on a figure with a layout engine draws it twice: once with drawing switched off, for the engine to
    # place the axes, then into the SVG. The engine placed here, on an SVG canvas (whose text metrics the layout
    # reads, as savefig's first draw does), and then dropped, the figure is drawn once: the same SVG, byte for byte
    # (every report of corpus/ and sample_bundles/ compared), in 60-75% of the time (issue 12).
    FigureCanvasSVG(figure)
    engine = figure.get_layout_engine()
    if engine is not None:
        engine.execute(figure)
        figure.set_layout_engine(None)
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    # Namespace declarations are implied for inline SVG in HTML; dropping them keeps the report URL-free.
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text)
    prefix = "g" + hashlib.sha1(key.encode()).hexdigest()[:8] + "-"
    text = re.sub(r'(\bid="|href="#|url\(#)([^")]+)', lambda m: m.group(1) + prefix + m.group(2), text)
    title_id = f"{prefix}title"
    text = re.sub(r"<svg ([^>]*)>", lambda m: f'<svg class="plot" role="img" aria-labelledby="{title_id}" {m.group(1)}>'
                  f'<title id="{title_id}">{escape(title or key)}</title>', text, count=1)
    return text.strip()


def figure_id(key: str) -> str:
    """The id of the <figure> that holds the plot *key* ("cos-<comparison>", "layers")."""
    return f"fig-{key}"


# --- helpers ---------------------------------------------------------------------------------
def _legend(figure: Figure, axes: Any, count: int, always: bool = False) -> None:
    # Below the axes, never on top of the data.
    if count > 1 or (always and count):
        handles, labels = axes.get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 2), frameon=False)


def _threshold_line(axes: Any, threshold: float) -> None:
    axes.axhline(threshold, color=MARKER_COLOR, linestyle="--", linewidth=1.0, label=f"threshold {threshold:g}")
    # Clipped: a threshold outside the plotted range (every sample at cosine 0.9994 or more, the line at 0.99) would
    # put its label far below the axes, and the constrained layout, making room for it, collapsed the axes to nothing.
    axes.annotate(f"threshold {threshold:g}", (1.0, threshold), xycoords=("axes fraction", "data"), xytext=(-2, 2),
                  textcoords="offset points", ha="right", va="bottom", fontsize=8, color=MARKER_COLOR,
                  annotation_clip=True)


def _name_lowest(axes: Any, values: list[float], labels: list[str], count: int) -> None:
    """Name the *count* lowest points (the worst, for cosine and SQNR) with their labels."""
    if len(labels) != len(values) or len(values) <= count:
        return
    finite = [(v, i) for i, v in enumerate(values) if math.isfinite(v)]
    for value, index in sorted(finite)[:count]:
        axes.annotate(_short(labels[index], 24), (index, value), xytext=(4, -8), textcoords="offset points",
                      fontsize=7, color=MARKER_COLOR)


def _cap_sqnr(axes: Any, values: tuple[float | None, ...]) -> None:
    """Cut the axis at SQNR_CAP dB: nearly exact activations (100+ dB) would otherwise flatten the low,
    interesting part to a line; the cut is written on the axis."""
    finite = [v for v in values if v is not None]
    if finite and max(finite) > SQNR_CAP:
        low = min(finite)
        axes.set_ylim(low - 0.05 * (SQNR_CAP - low), SQNR_CAP)
        axes.annotate(f"axis cut at {SQNR_CAP:g} dB", (1.0, 1.0), xycoords="axes fraction", xytext=(-2, -2),
                      textcoords="offset points", ha="right", va="top", fontsize=8, color="#5f6368", bbox=LABEL_BOX)


def _mark_top(axes: Any, layers: Any) -> None:
    """Number the worst activations (ranks of the per-layer Top table) at their points on the plot."""
    position = {tensor: index for index, tensor in enumerate(layers.tensors)}
    local = getattr(layers, "local", False)
    values = layers.local_sqnr if local else layers.accumulated_sqnr
    for rank, row in enumerate(layers.top[:TOP_MARKED], start=1):
        index = position.get(row.get("tensor"))
        if index is None or values[index] is None:
            continue
        axes.plot([index], [values[index]], marker="o", markersize=5, color="#202124", linestyle="none")
        axes.annotate(str(rank), (index, values[index]), xytext=(3, 3), textcoords="offset points", fontsize=8,
                      fontweight="bold")


def _drawn_elsewhere(model: ReportModel) -> list[tuple[str, tuple[float, ...]]]:
    """(figure id, values) of every line a finding's series may repeat: comparison cosines, per-layer SQNR."""
    out = [(figure_id(f"cos-{c.id}"), _rounded(row.sample_cosines))
           for c in model.comparisons for row in c.outputs[:MAX_LINES] if row.sample_cosines]
    if model.layers is not None and model.layers.tensors:
        out.append((figure_id("layers"), _rounded(model.layers.accumulated_sqnr)))
    return out


def _same_plot(series: dict[str, Any], drawn: list[tuple[str, tuple[float, ...]]]) -> str | None:
    values = _rounded(series.get("values", ()))
    return next((target for target, line in drawn if values and values == line), None)


def _rounded(values: Iterable[Any]) -> tuple[float, ...]:
    return tuple(round(float(v), 6) if isinstance(v, (int, float)) and math.isfinite(v) else math.inf for v in values)


def _metric(series: dict[str, Any]) -> str:
    label = f'{series.get("y_label", "")} {series.get("title", "")}'.lower()
    return "cosine" if "cosine" in label else "sqnr" if "sqnr" in label else ""


def _span(values: Iterable[Any], ceiling: float | None = None) -> tuple[float, float] | None:
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not finite:
        return None
    low, high = min(finite), max(finite)
    if ceiling is not None:
        high = max(high, ceiling)
    pad = max((high - low) * 0.06, 1e-3 if ceiling is not None else 0.5)
    return (low - pad, high + pad)


def _limit(setter: Any, span: tuple[float, float] | None) -> None:
    if span is not None:
        setter(*span)


def _short(text: str, limit: int = 40) -> str:
    """A label cut to *limit* characters (text.parse_math is off, so `$` needs no escaping)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
