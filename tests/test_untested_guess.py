"""The verdict says when its most likely cause is a layer guess no run has tested (report/model._untested).

A new user's GTCRN with quantize_static's defaults read "most likely cause: 16 sensitive nodes quantized to INT8"; the
exclusion it printed, run by hand, won back 0.36 of the 7.67 dB lost. Read corpus bundles: rec_overquant (the PP-OCR
recognizer with every op in INT8, collected without --per-layer: QR002 first, nothing measured) and
lay_all_convs (collected with --per-layer: its guesses carry the what-if's measurement)."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.report.model import build_report
from qdqreport.rules import discover

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _verdict(case: str) -> tuple[str, list]:
    bundle = Bundle(CORPUS / case)
    ctx = Context(bundle)
    result = run_rules(ctx, discover())
    return build_report(bundle, result, ctx).verdict.text, result.findings


def test_an_untested_guess_says_how_to_test_it():
    text, findings = _verdict("rec_overquant")
    assert findings[0].rule_id == "QR002" and findings[0].severity == "error"
    assert "most likely cause (untested: collect --per-layer measures what excluding its nodes wins back): " in text


def test_a_measured_guess_is_named_plainly():
    text, findings = _verdict("lay_all_convs")
    assert findings[0].rule_id == "QR201" and "untested" not in text and "most likely cause: Error is born" in text
