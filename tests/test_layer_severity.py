"""Severity from impact for the per-layer findings (issue 10, item 3): a tensor that collapses inside the network is
an error only when an output collapses too; when the outputs degrade, QR200 and QR201 say where to look, as warnings
(info when every output agrees), and the verdict's cause and the first finding are the same one (no self-contradicting report)."""

from __future__ import annotations

from qdqreport.engine import run_rules
from qdqreport.testing import BundleBuilder
from qdqreport.testing.layer_examples import chain_precision, layer_chain, quantization_run


def _layer_findings(tmp_path, outputs_collapse: bool, outputs_degrade: bool = True):
    b = BundleBuilder(tmp_path)
    quantization_run(b, broken=outputs_collapse, degraded=outputs_degrade)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5))
    findings = run_rules(b.context()).findings
    return findings, {f.rule_id: f.severity for f in findings if f.rule_id in ("QR200", "QR201")}


def test_an_inner_collapse_is_an_error_when_the_outputs_collapse(tmp_path):
    _, severity = _layer_findings(tmp_path, outputs_collapse=True)
    assert severity == {"QR200": "error", "QR201": "error"}


def test_an_inner_collapse_is_a_warning_when_the_outputs_hold(tmp_path):
    findings, severity = _layer_findings(tmp_path, outputs_collapse=False)  # degraded, not collapsed
    assert severity == {"QR200": "warning", "QR201": "warning"}
    # The node where the error is born (a cause) comes before the tensor that locates it.
    ranked = [f.rule_id for f in findings if f.rule_id in ("QR200", "QR201")]
    assert ranked == ["QR201", "QR200"]


def test_an_inner_collapse_is_info_when_every_output_agrees(tmp_path):
    """A healthy model's first divergence is where to look if asked, not a fault: `--fail-on warning` passes it (the
    new user of session 26: open_nsfw calibrated RGB for BGR, 0 of 69 decisions changed, had a QR200 warning)."""
    findings, severity = _layer_findings(tmp_path, outputs_collapse=False, outputs_degrade=False)
    assert severity == {"QR200": "info", "QR201": "info"}
