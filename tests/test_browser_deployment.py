"""The deployment section ("Deployment to TensorRT: ...") in real headless Chromium, on a real corpus bundle.

vad_healthy_ort_sym (unsealed; onnxruntime quantize_static with int32 bias DequantizeLinear nodes) rendered
for target tensorrt: ONNX Runtime's outputs agree, so TensorRT's parser error is the first-ranked finding and
its section must come before the Findings section (findings.rank_findings), be visible and reachable from the
contents bar, and the page must keep the suite's layout rules at a phone's and a desktop's width. The
screenshots are written to $QDQREPORT_ARTIFACTS/browser (default: a pytest temporary directory).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from test_browser import CHROMIUM, WIDTHS, assert_navigation, assert_screen_layout, chromium, measure, screenshot

from qdqreport.pipeline import render_report

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "corpus" / "vad_healthy_ort_sym"
TITLE = "Deployment to TensorRT: what the engine build will reject or change"
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is needed (.ci/run installs it)")
# Where the two sections are drawn, measured by the page itself and written into the DOM for --dump-dom.
SECTIONS_PROBE = """<script>addEventListener("load", function () {
  function box(id) { var el = document.getElementById(id); if (!el) return null;
    var r = el.getBoundingClientRect(), h = el.querySelector("h2");
    return {top: r.top + scrollY, bottom: r.bottom + scrollY, height: r.height, title: h ? h.textContent : "",
            visible: getComputedStyle(el).display !== "none" && getComputedStyle(el).visibility !== "hidden",
            badges: Array.from(el.querySelectorAll("article .badge")).map(function (b) { return b.textContent; })}; }
  var out = document.createElement("pre"); out.id = "sections-probe";
  out.textContent = JSON.stringify({findings: box("findings"), deployment: box("deployment"),
    toc: Array.from(document.querySelectorAll("nav.toc a")).map(function (a) { return a.getAttribute("href"); })});
  document.body.appendChild(out); });</script>"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("deployment-report")
    render_report(CASE, out, target="tensorrt")
    return out / "report.html"


@pytest.mark.slow
def test_deployment_section_drawn_first_when_it_holds_the_first_ranked_finding(report):
    probe = report.with_name(".sections-probe.html")
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", SECTIONS_PROBE + "</body>"), encoding="utf-8")
    run = chromium("--window-size=1400,1300", "--dump-dom", probe.as_uri())
    match = re.search(r'<pre id="sections-probe">(.*?)</pre>', run.stdout, re.S)
    assert match, run.stderr[-2000:]
    drawn = json.loads(html.unescape(match.group(1)))
    findings, deployment = drawn["findings"], drawn["deployment"]
    assert deployment and deployment["visible"] and deployment["height"] > 100
    assert deployment["title"] == TITLE
    assert findings["top"] >= deployment["bottom"] - 0.5, drawn
    assert deployment["badges"] == ["error"]  # QR004's int32 bias DQ: TensorRT's parser rejects it
    assert "#deployment" in drawn["toc"] and drawn["toc"].index("#findings") == drawn["toc"].index("#deployment") + 1


@pytest.mark.slow
def test_deployment_report_on_screen(report, artifacts):
    for width in WIDTHS:
        m = measure(report, width)
        assert_screen_layout("deployment", width, m)
        assert "deployment" in m["sections"]
        if width == 400:
            assert_navigation("deployment", m)
        screenshot(report, width, m["scrollHeight"], artifacts / f"deployment-{width}.png")
