"""What-if exclusions interact: a set's result refutes none of its members when one of them alone wins back most of
the loss (issue 10, item 4: measured evidence outranks heuristics, and must be read right).

A new user's fastmrz U-Net (tests/data/bundles/fastmrz_bn_per_tensor, README there): one BatchNorm Mul quantized per
tensor zeroes 49 of 64 channels and the map collapses. The per-layer pass names that Mul (QR201), but the what-if's
12 suspects excluded together scored cosine 0.00, below the unmodified model's 0.35, and the report called QR201
"refuted by measurement, look at calibration first", while its own single-node trial of that Mul read 0.97.
"""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis import evidence
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import rank_findings

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "fastmrz_bn_per_tensor"
MUL = "model_1/batch_normalization_15/FusedBatchNormV32"


def _ranked():
    ctx = Context(Bundle(BUNDLE))
    return ctx, rank_findings(run_rules(ctx).findings)


def test_a_node_that_alone_wins_back_the_loss_is_measured_not_refuted_by_the_set():
    ctx, findings = _ranked()
    found = evidence.whatif(ctx)
    assert found.verdict == evidence.PARTIAL and found.nodes == (MUL,) and found.closed > 0.9
    first = findings[0]
    assert (first.rule_id, first.severity) == ("QR201", "error") and MUL in first.title
    assert not any("Refuted by measurement" in getattr(item, "text", "") for item in first.evidence)


def test_the_measured_node_gets_its_command_and_the_guesses_elsewhere_rank_below_it():
    _, findings = _ranked()
    measured = next(f for f in findings if f.rule_id == "QR203")
    assert measured.title.startswith(f"Measured: excluding {MUL} alone wins back")
    assert f"nodes_to_exclude=['{MUL}']" in measured.fixes[0].command
    sensitive = next(f for f in findings if f.rule_id == "QR002")  # two sensitive nodes, not the Mul
    # Measured to pass on the error born at the Mul: a lead, not a cause (info since session 44).
    assert sensitive.severity == "info" and findings.index(sensitive) > findings.index(measured)
