"""A what-if that wins back nearly all of the loss without reaching its target is the measured remedy: it ranks above
the guesses about other nodes (analysis/evidence.NEARLY, rules/_measured.py).

A new user's GTCRN speech enhancer, every Conv, ConvTranspose and MatMul in INT8 (SI-SNR improvement -18.09 dB): the
what-if's 12 suspects won back 96% of the loss (-0.80 dB measured by hand) and ranked 7th as info under "8 sensitive
nodes quantized to INT8", an error scored 1.00 whose exclusion measured -14.83 dB. That bundle is 24 MB; here the
read corpus's lay_all_convs (a real per-layer collect of a layout model with every Conv in INT8, its what-if won back
55% with 12 Convs) has its measured set's cosine set to 0.97 (97% of the loss): the ranking is what is tested."""

from __future__ import annotations

import copy
from pathlib import Path

from qdqreport.analysis import evidence
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules import discover

BUNDLE = Path(__file__).resolve().parent.parent / "corpus" / "lay_all_convs"


def _findings(chosen_cosine: float | None):
    ctx = Context(Bundle(BUNDLE))
    if chosen_cosine is not None:
        summary = copy.deepcopy(ctx.whatif_summary)
        summary["chosen"]["cosine"] = chosen_cosine
        ctx.__dict__["whatif_summary"] = summary  # Context's cached reading of layers/whatif.json
    return ctx, run_rules(ctx, discover()).findings


def test_nearly_all_of_the_loss_won_back_ranks_the_measured_set_first():
    ctx, findings = _findings(0.97)
    found = evidence.whatif(ctx)
    assert found.verdict == evidence.PARTIAL and found.closed >= evidence.NEARLY
    first = findings[0]
    assert first.rule_id == "QR203" and first.severity == "error" and "wins back 97%" in first.title
    guesses = [f for f in findings if f.rule_id in ("QR002", "QR200", "QR201")]
    assert all(f.score < first.score or f.confidence * f.score < first.confidence * first.score for f in guesses)


def test_half_of_the_loss_stays_an_info_finding_under_the_guesses():
    _, findings = _findings(None)  # as measured: 55%
    partial = next(f for f in findings if f.rule_id == "QR203")
    assert partial.severity == "info" and findings.index(partial) > 2
