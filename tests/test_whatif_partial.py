"""A what-if that wins back most of the loss without reaching the target is a measured partial remedy, said as one
(issue 10, item 4). A new user's U^2-Net-p background remover (rembg's u2netp.onnx, every Conv in INT8): excluding the
12 top suspects took the user's decode (mean mask IoU, their compare()) from 0.37 to 0.89, the maps to IoU 0.99;
QR203 said "No exclusion of the top suspects restores the outputs ... the error is spread over the graph, look at
calibration first" with no command, QR201 "won back 99% of the loss" (the maps' measure, not the decode the target
judged) and "the other 0 nodes here are unmeasured"."""

from __future__ import annotations

import pytest

from qdqreport.analysis.evidence import deciding_output, recovered
from qdqreport.bundle.vocabulary import WHATIF_TASK_OUTPUT
from qdqreport.rules import discover
from qdqreport.testing.builder import BundleBuilder
from qdqreport.testing.layer_examples import chain_precision, layer_chain, quantization_run, whatif_trials

RULES = discover()


def _decoded(value: float, changed: int) -> dict:
    return {"level": "collapse" if value < 0.9 else "degrade" if value < 0.99 else "agree", "measure": "task agreement",
            "value": value, "internal": False,
            "headline": f"mean compare() score {value:.3g} ({changed} of 32 samples scored below 1)"}


def _partial(b):
    rows, summary = whatif_trials(reached=False, judged=True)
    for key, value, changed in (("baseline", 0.37, 32), ("chosen", 0.89, 30)):
        result = summary[key]
        result["outputs"] = {**result["outputs"], WHATIF_TASK_OUTPUT: _decoded(value, changed)}
        result.update(output=WHATIF_TASK_OUTPUT, level="collapse", measure="task agreement", value=value,
                      headline=_decoded(value, changed)["headline"])
    summary["judged"] += ", and the --postprocess decode decides alike on 99% of the samples or more"
    summary["chosen"]["nodes"] = [*summary["chosen"]["nodes"][:11], "Conv@5"]  # holds the node where error is born
    quantization_run(b, broken=True)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5), whatif=rows,
                                                              whatif_summary=summary)
    return summary


def _run(rule_id: str, tmp_path):
    builder = BundleBuilder(tmp_path)
    _partial(builder)
    return RULES[rule_id].run(builder.context())


def test_the_decode_measures_what_an_exclusion_won_back(tmp_path):
    summary = _partial(BundleBuilder(tmp_path))
    base, chosen = summary["baseline"], summary["chosen"]
    assert deciding_output(base, chosen) == WHATIF_TASK_OUTPUT
    assert recovered(base, chosen) == pytest.approx((0.89 - 0.37) / (1 - 0.37))


def test_a_partial_exclusion_prints_its_command_and_says_it_falls_short(tmp_path):
    (finding,) = _run("QR203", tmp_path)
    assert finding.title == "Measured: excluding 12 nodes wins back 83% of the loss, short of the target"
    assert finding.severity == "info" and "fix" not in finding.tags
    command, rest = finding.fixes
    assert command.command and "nodes_to_exclude" in command.command and "83% of the loss won back" in command.action
    assert "calibration" in rest.action
    assert "mean compare() score 0.37" in finding.summary and "mean compare() score 0.89" in finding.summary


def test_the_error_birth_inside_the_measured_set_is_said_to_be_measured_only_with_it(tmp_path):
    findings = _run("QR201", tmp_path)
    text = " ".join(f.action for finding in findings for f in finding.fixes)
    assert "the other 0" not in text and "QR203 prints that command" not in text
    assert "within a set of 12" in text and "won back 83% of the loss" in text
