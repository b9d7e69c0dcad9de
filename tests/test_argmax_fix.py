"""QR001's first step never names an ArgMax to keep out of INT8 (a new user's sudachi tagger: the step excluded its
/ArgMax, an index picker that, kept float, reads the same INT8-quantized logits; run as printed it changed no sentence
of 64). It names the quantized node whose output the ArgMax reads, or nothing when the summary does not show that node
(a shape-only op between them), and then says to fix the ranked causes instead."""

from __future__ import annotations

from qdqreport.rules import discover
from qdqreport.testing.builder import BundleBuilder
from qdqreport.testing.recipes import (CLS_OUTPUT, class_logits, classifier_run, node, precision_summary,
                                      qdq_entry)


def _first_step(tmp_path, linked: bool) -> str:
    nodes = [node("Conv@0", "Conv", 0, outputs=["conv0.tmp_0"]), node("MatMul@0", "MatMul", 1, outputs=["logits"]),
             node("ArgMax@0", "ArgMax", 2, outputs=[CLS_OUTPUT], feeds_graph_output=True)]
    # The ArgMax's input pair: on the MatMul's own output, or on a Reshape's (not in the summary) after it.
    pairs = [qdq_entry("conv0.tmp_0", ["MatMul@0"]), qdq_entry("logits" if linked else "reshaped", ["ArgMax@0"])]
    b = BundleBuilder(tmp_path)
    logits = class_logits(40, seed=3)
    b.artifact("precision_summary", precision_summary(nodes, pairs))
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=1.5, shrink=0.3, seed=4))
    finding = next(f for f in discover()["QR001"].run(b.context()) if f.rule_id == "QR001")
    return finding.fixes[0].action + " " + (finding.fixes[0].command or "")


def test_the_node_an_argmax_reads_is_named_not_the_argmax(tmp_path):
    step = _first_step(tmp_path, linked=True)
    assert "first step" in step and "MatMul@0" in step and "ArgMax@0" not in step


def test_an_argmax_whose_input_node_is_hidden_is_not_named(tmp_path):
    step = _first_step(tmp_path, linked=False)
    assert "ArgMax@0" not in step and "Fix the root causes ranked" in step
