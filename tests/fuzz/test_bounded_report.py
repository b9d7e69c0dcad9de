"""Report cost is bounded: a bundle with 1,000 outputs and 5,000 per-layer rows (built from the real demo
bundle collected with --per-layer) gives a report of bounded size that says what it cut. Time goes in
benchmarks, not here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from big_bundle import build_big_bundle
from fuzz_seeds import read_folder  # noqa: F401 - the seeds fixture builds the per-layer demo

from qdqreport.cli import main


@pytest.mark.slow
def test_1000_outputs_and_5000_layer_rows_give_a_bounded_report_that_says_what_was_cut(seeds: dict, seed_cache: Path,
                                                                                     tmp_path: Path, capsys) -> None:
    bundle = build_big_bundle(seed_cache / "demo_per_layer", tmp_path / "big", outputs=1000, layers=5000)
    assert main(["validate", str(bundle)]) == 0
    assert main(["report", str(bundle), "-o", str(tmp_path / "out")]) in (0, 1)
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    findings = json.loads((tmp_path / "out" / "findings.json").read_text(encoding="utf-8"))
    # The comparisons (quantization, the FP16 check's control, the calibration check's control and, on a CPU without
    # VNNI, the saturation check's control of the S8S8 demo model) and the FP16 check's table hold 1,000 outputs: each
    # shows 50 and says so.
    stages = {s["id"] for s in json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))["stages"]
              if s["status"] == "ok"}
    tables = 3 + ("ort_qdq_unfused" in stages) + ("ort_qdq_eval_ranges" in stages)
    assert html.count("Showing 50 of 1,000 outputs") == tables
    assert md.count("Showing 50 of 1,000 outputs") == tables
    shown = set(re.findall(r"<code>(out_\d{4})</code>", html))
    assert 50 <= len(shown) <= 120  # 50 per comparison table and the FP16 check table, plus outputs findings name
    assert len(html) < 2_000_000 and len(md) < 200_000 and len(json.dumps(findings)) < 1_000_000
    # Findings' evidence: per-sample series for at most 8 outputs, tables cut at 50 rows with a note.
    for finding in findings["findings"]:
        series = [e for e in finding["evidence"] if e["type"] == "series"]
        assert len(series) <= 8
        for table in (e for e in finding["evidence"] if e["type"] == "table"):
            assert len(table["rows"]) <= 50
    qr001 = next(f for f in findings["findings"] if f["id"] == "QR001")
    assert any("8 worst of 1,000 diverging outputs" in e.get("text", "") for e in qr001["evidence"])
