"""The HTML report opened in real headless Chromium, as a reader would: at 1400 px and at a phone's 400 px,
and printed to PDF.

Five reports rendered from real bundles: the demo (real ONNX Runtime runs of the ×255-calibrated
model), a per-layer report (collect --per-layer on the same model), an imported TensorRT engine with
a per-layer profile (sample_bundles/, real TREx dumps), a report with a failed stage, and DNSMOS with its
STFT in INT8 (corpus/dns_stft_int8: long unbroken TensorFlow node names in the findings' prose).

Measurements come from the page itself: a copy of report.html gets a probe script that writes what it
measures into the DOM, read back with `chromium --dump-dom` (no driver needed). The print layout is
measured twice: in the DOM with the page's own `@media print` rules applied at the printable width,
and in the real PDF with pdftotext (every word inside the page box, closed <details> printed, every
row of a scroll box printed). Screenshots at both widths and the PDF are written as artifacts to
$QDQREPORT_ARTIFACTS (default: a pytest temporary directory).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from qdqreport.pipeline import render_report
from qdqreport.testing import BundleBuilder

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "qdqreport" / "demo"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or shutil.which("pdftotext") is None,
    reason="headless Chromium and pdftotext are needed: `apt-get install chromium poppler-utils` (.ci/run does it)")

WIDTHS = (400, 1400)
# Letter with Chromium's default margins (0.4 in): the printable width the print stylesheet must fit, in CSS px.
PRINT_WIDTH = round((8.5 - 2 * 0.4) * 96)
FRAME = ('<!DOCTYPE html><html><body style="margin:0"><iframe id="report" src="{src}" '
         'style="border:0;width:{width}px;height:1200px"></iframe><script>addEventListener("load", function () {{'
         'var probe = document.getElementById("report").contentDocument.getElementById("qdq-probe");'
         'var out = document.createElement("pre"); out.id = "qdq-probe"; out.textContent = probe ? probe.textContent : "null";'
         'document.body.appendChild(out); }});</script></body></html>')
PROBE = (Path(__file__).resolve().parent / "data" / "browser_probe.js").read_text(encoding="utf-8")


# --- the four reports -----------------------------------------------------------------------------
def _failed_stage_bundle(directory: Path) -> Path:
    """Two real-looking stages, a TensorRT stage that failed with a long multi-line error, one skipped."""
    import numpy as np

    rng = np.random.default_rng(3)
    ref = [{"probs": rng.random((1, 10), dtype=np.float32)} for _ in range(6)]
    cand = [{"probs": (r["probs"] + rng.normal(0, 0.05, (1, 10))).astype(np.float32)} for r in ref]
    builder = BundleBuilder(directory)
    builder.class_outputs("probs").stage("ort_fp32", ref).stage("ort_qdq", cand)
    error = ("TensorRT build failed:\n" + "\n".join(f"[E] [TRT] {i}: [network.cpp::validate::{i}] Error Code 4: "
                                                     f"Internal Error (/model/layer_{i}/Conv_output_0_QuantizeLinear: "
                                                     "only activation types allowed as input to this layer.)"
                                                     for i in range(12)))
    builder.stage("trt_int8", status="failed", error=error)
    builder.stage("trt_fp16", status="skipped", details={"reason": "tensorrt is not installed on this machine"})
    return builder.build().location


@pytest.fixture(scope="module")
def reports(broken_bundle, tmp_path_factory) -> dict[str, Path]:
    from qdqreport.cli import main

    base = tmp_path_factory.mktemp("browser")
    layers = base / "layers-bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "4", "--per-layer", "--whatif-budget", "5",
                 "-o", str(layers), "--quiet"])
    assert code == 0
    bundles = {"demo": broken_bundle, "layers": layers, "engine": ROOT / "sample_bundles" / "trt_mobilenet_qat_layerinfo",
               "failed": _failed_stage_bundle(base / "failed-bundle"),
               # DNSMOS with its STFT in INT8 (corpus): TensorFlow-exported node names 56 characters long, unbroken
               "stft": ROOT / "corpus" / "dns_stft_int8",
               # SwiftF0 with its STFTs in INT8 (corpus): judged by voicing flips, a long note in the comparisons table
               "pitch": ROOT / "corpus" / "sf0_stft_int8"}
    out = {}
    for name, bundle in bundles.items():
        render_report(bundle, base / name)
        out[name] = base / name / "report.html"
    return out


# --- Chromium ---------------------------------------------------------------------------------------
def chromium(*args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
             "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=120, check=True)


def measure(report: Path, width: int, print_layout: bool = False) -> dict:
    """What the probe measures in *report* opened *width* px wide (with the print rules applied if asked)."""
    probe = report.with_name(f".probe-{width}{'-print' if print_layout else ''}.html")
    script = f"<script>window.QDQ_PRINT = {json.dumps(print_layout)};\n{PROBE}</script>"
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    # Headless windows are at least 500 px wide: the report is measured in a frame of exactly *width* px.
    frame = probe.with_suffix(".frame.html")
    frame.write_text(FRAME.format(src=probe.name, width=width), encoding="utf-8")
    run = chromium("--allow-file-access-from-files", f"--window-size={max(width, 500) + 50},1300", "--dump-dom",
                   frame.as_uri())
    match = re.search(r'<pre id="qdq-probe">(.*?)</pre>', run.stdout, re.S)
    assert match, f"the probe did not run in {probe}: {run.stderr[-2000:]}"
    result = json.loads(html.unescape(match.group(1)))
    result["console"] = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    return result


def screenshot(report: Path, width: int, height: int, target: Path) -> None:
    chromium(f"--window-size={width},{min(max(height, 600), 16000)}", f"--screenshot={target}", report.as_uri())
    assert target.stat().st_size > 10_000


def print_pdf(report: Path, target: Path) -> None:
    chromium("--no-pdf-header-footer", f"--print-to-pdf={target}", report.as_uri())
    assert target.read_bytes().startswith(b"%PDF")


# --- what a reader needs ----------------------------------------------------------------------------
def assert_screen_layout(name: str, width: int, m: dict) -> None:
    where = f"{name} report at {width} px"
    assert m["innerWidth"] == width, where
    assert m["scrollWidth"] <= m["innerWidth"], f"{where}: the page scrolls sideways ({m['scrollWidth']} px): {m['wide']}"
    for table in m["tables"]:
        assert table["box"], f"{where}: a table is not in a scroll box: {table['head']}"
        assert table["boxRight"] <= width + 0.5, f"{where}: a table's box passes the page edge: {table}"
        assert table["fits"] or table["scrollsX"], f"{where}: a table is cut, neither fits nor scrolls: {table}"
        assert not table["squeezed"], f"{where}: prose squeezed into a narrow column: {table['squeezed']}"
        assert not table["proseRight"], f"{where}: words aligned right as numbers: {table['proseRight']}"
    assert not m["brokenNames"], f"{where}: short names broken across lines: {m['brokenNames'][:5]}"
    assert not m["console"], f"{where}: console messages: {m['console']}"
    assert m["resources"] == [], f"{where}: the page loaded something: {m['resources']}"


def assert_navigation(name: str, m: dict) -> None:
    ids = set(m["ids"])
    missing = [href for href in m["links"] if href.startswith("#") and href[1:] not in ids]
    assert not missing, f"{name}: links to missing ids: {missing}"
    external = [href for href in m["links"] if not href.startswith("#")]
    assert not external, f"{name}: links leave the page: {external}"
    assert m["sticky"] == "sticky", f"{name}: the contents bar is not sticky"
    assert set(m["sections"]) <= {href[1:] for href in m["toc"]}, f"{name}: sections not in the contents: {m}"
    for svg in m["svgs"]:
        assert svg["title"] and svg["labelledby"], f"{name}: an SVG has no <title>: {svg}"


def assert_print_layout(name: str, m: dict) -> None:
    where = f"{name} report printed"
    assert m["scrollWidth"] <= m["innerWidth"], f"{where}: wider than the paper: {m['wide']}"
    clipped = [box for box in m["clipping"] if box["clipsX"] or box["clipsY"]]
    assert not clipped, f"{where}: boxes cut their content: {clipped}"
    assert not m["brokenNames"], f"{where}: short names broken across lines: {m['brokenNames'][:5]}"
    assert all(d["contentHeight"] > 0 for d in m["closedDetails"]), f"{where}: closed details not printed: {m['closedDetails']}"


def pdf_words(pdf: Path) -> tuple[str, list[tuple[float, float, float, float, float, float]]]:
    """(text, [(page width, page height, xMin, yMin, xMax, yMax) per word]) of a PDF, via pdftotext."""
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    words = []
    for page in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', xml, re.S):
        width, height = float(page.group(1)), float(page.group(2))
        for w in re.finditer(r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)"', page.group(3)):
            words.append((width, height, *map(float, w.groups())))
    return text, words


def squash(text: str) -> str:
    """Text compared without whitespace and case (badges print upper case); pdftotext reads "--" as "-"."""
    return re.sub(r"-+", "-", re.sub(r"\s+", "", text)).lower()


def words(text: str) -> list[str]:
    """The words of *text* as squash() gives them, cut at spaces and hyphens (where a printed line may break);
    a word truncated with an ellipsis (a one-line preview) is left out."""
    return [squash(w) for w in re.split(r"[\s\-]+", text) if len(w) > 2 and not w.endswith(("…", "..."))]


class _HiddenText(HTMLParser):
    """Text inside closed <details> (after the summary) and the last row of every table: what print must show."""

    def __init__(self) -> None:
        super().__init__()
        self.closed_depth = 0
        self.stack: list[bool] = []
        self.in_summary = False
        self.closed_text: list[str] = []
        self.row: list[str] = []
        self.cells: list[str] = []
        self.last_row: list[str] = []
        self.last_rows: list[list[str]] = []  # the cell texts of the last row of each table

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            closed = "open" not in dict(attrs)
            self.stack.append(closed)
            self.closed_depth += closed
        elif tag == "summary":
            self.in_summary = True
        elif tag == "tr":
            self.cells = []
        if tag in ("td", "th"):
            self.row = []

    def handle_endtag(self, tag):
        if tag == "details" and self.stack:
            self.closed_depth -= self.stack.pop()
        elif tag == "summary":
            self.in_summary = False
        elif tag in ("td", "th"):
            self.cells.append(" ".join(self.row))
        elif tag == "tr":
            self.last_row = [c for c in self.cells if c]
        elif tag == "table" and self.last_row:
            self.last_rows.append(self.last_row)

    def handle_data(self, data):
        if self.closed_depth and not self.in_summary and data.strip():
            self.closed_text.append(data.strip())
        self.row.append(data.strip())


# --- the tests -----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", ["demo", "layers", "engine", "failed", "stft", "pitch"])
def test_report_on_screen(name, reports, artifacts):
    report = reports[name]
    for width in WIDTHS:
        m = measure(report, width)
        assert_screen_layout(name, width, m)
        screenshot(report, width, m["scrollHeight"], artifacts / f"{name}-{width}.png")
        if width == 400:
            assert_navigation(name, m)
            assert m["minPlotTextPx"] is None or m["minPlotTextPx"] >= 7.5, f"{name}: plot text {m['minPlotTextPx']} px"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["demo", "layers", "engine", "failed", "stft", "pitch"])
def test_report_on_paper(name, reports, artifacts):
    report = reports[name]
    assert_print_layout(name, measure(report, PRINT_WIDTH, print_layout=True))
    pdf = artifacts / f"{name}.pdf"
    print_pdf(report, pdf)
    text, boxes = pdf_words(pdf)
    outside = [b for b in boxes if b[2] < -0.5 or b[4] > b[0] + 0.5 or b[3] < -0.5 or b[5] > b[1] + 0.5]
    assert boxes and not outside, f"{name}: words outside the page box: {outside[:5]}"
    hidden = _HiddenText()
    hidden.feed(report.read_text(encoding="utf-8"))
    printed = squash(html.unescape(text))
    # Word by word: a table cell that wraps on paper interleaves with its neighbours in pdftotext's reading order.
    missing = [w for text in hidden.closed_text for w in words(text) if w not in printed]
    assert not missing, f"{name}: text of closed <details> not printed: {missing[:5]}"
    cells = [w for row in hidden.last_rows for cell in row for w in words(cell)]
    unprinted = [c for c in cells if c not in printed]
    assert cells and not unprinted, f"{name}: cells of tables' last rows not printed: {unprinted[:5]}"


@pytest.mark.slow
def test_failed_stage_report_shows_the_whole_error_on_paper(reports, artifacts):
    text, _ = pdf_words(artifacts / "failed.pdf") if (artifacts / "failed.pdf").is_file() else ("", [])
    if not text:
        print_pdf(reports["failed"], artifacts / "failed.pdf")
        text, _ = pdf_words(artifacts / "failed.pdf")
    assert "only activation types allowed as input to this layer" in " ".join(text.split())
    assert "[E] [TRT] 11:" in text  # the last line of the 13-line error: the <details> printed in full
