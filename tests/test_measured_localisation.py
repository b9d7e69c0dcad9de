"""Per-layer measurements outrank heuristics (issue 10; a new user's U2-Net-p, session 34): sensitive nodes that add
little error themselves rank under the node where the error is born, and an exclusion the what-if never tried says
so in its fix. Real bundles and real ONNX Runtime runs only."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import LOCAL_BAD_COSINE, born_upstream, layer_tables
from qdqreport.analysis.quantizer import sensitive_in_int8
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.engine import run_rules
from qdqreport.rules._measured import REFUTED_SCORE

from corpus_cases import CORPUS, ranked


def test_sensitive_heads_that_add_little_error_rank_under_the_birth():
    # lay_all_convs (quantize_static on all 102 Convs of a layout detector, --per-layer): the 4 flagged head Convs
    # reach local cosine 0.997 or more; p2o.Conv.5 in the fragile stem adds the error (local cosine 0.78).
    ctx, findings = ranked("lay_all_convs")
    qr002 = next(f for f in findings if f.rule_id == "QR002")
    # Measured to pass on an error born before them: a lead, not a cause (info since session 44).
    assert qr002.severity == "info" and qr002.score <= REFUTED_SCORE
    assert any("p2o.Conv.5" in str(e) and "inherited" in str(e) for e in qr002.evidence)
    assert findings[0].rule_id == "QR201" and "p2o.Conv.5" in findings[0].title


def test_a_flagged_node_that_adds_error_itself_keeps_the_heuristic():
    ctx = Context(Bundle(CORPUS / "lay_all_convs"))
    tables = layer_tables(ctx)
    flagged = [s["tensor"] for s in sensitive_in_int8(ctx.precision)]
    born = born_upstream(tables, flagged)
    assert born is not None and born.own_lowest >= LOCAL_BAD_COSINE and born.birth["node"] == "p2o.Conv.5"
    # With the birth's own tensor among the nodes judged, one of them adds error itself: nothing is inherited.
    assert born_upstream(tables, [*flagged, born.birth["tensor"]]) is None
    assert born_upstream(None, flagged) is None


def test_an_exclusion_the_what_if_never_tried_says_so(tmp_path: Path, demo: Path):
    # A what-if budget that one trial overruns: only the baseline runs, as on U2-Net-p's 76 s trials and 120 s budget.
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / "cls_int8_x255.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--calib", str(demo / "calib_x255.npz"), "--max-samples", "16",
                 "--per-layer", "--whatif-budget", "0.01", "-o", str(out), "--quiet"]) == 0
    findings = run_rules(Context(Bundle(out))).findings
    qr201 = next(f for f in findings if f.rule_id == "QR201")
    words = qr201.fixes[0].action
    assert "NOT measured" in words and "after 1 trial" in words and "--whatif-budget" in words
    assert not [f for f in findings if f.rule_id == "QR203" and "excluding" in f.title.lower()]


def test_the_same_collapsed_samples_in_two_outputs_are_one_finding(tmp_path: Path):
    # The rule's own example (a new user's U2-Net-p had "3 of 40 samples collapse" twice, numbered 1 and 2, for its
    # fused map and a side map: the same 3 crops).
    from qdqreport.rules import REGISTRY
    from qdqreport.testing.examples import run_example

    spec = REGISTRY["QR006"]
    example = next(e for e in spec.examples if "two outputs" in e.name)
    findings = [f for f in run_example(spec, example, tmp_path) if "collapse under" in f.title]
    assert len(findings) == 1 and "side_logits" in findings[0].summary + findings[0].subject
