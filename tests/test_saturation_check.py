"""The saturation check (collect/saturation_check.py, stage ort_qdq_unfused) and QR012 on a real U8S8 model."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.saturation import MAX_SAMPLES, UNFUSED_STAGE
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.saturation_check import cpu_vnni, kernel_nodes, u8s8_nodes
from qdqreport.engine import run_rules

from corpus_cases import ranked

WORK = Path(__file__).resolve().parent.parent / "build" / "corpus-work"


def test_only_conv_matmul_gemm_with_uint8_activations_and_int8_weights_are_u8s8() -> None:
    nodes = [{"name": "a", "op_type": "Conv", "activation_dtype": "uint8", "weight_dtype": "int8"},
             {"name": "b", "op_type": "Conv", "activation_dtype": "uint8", "weight_dtype": "uint8"},  # U8U8: no VPMADDUBSW
             {"name": "c", "op_type": "MatMul", "activation_dtype": "int8", "weight_dtype": "int8"},  # S8S8
             {"name": "d", "op_type": "Gemm", "activation_dtype": "uint8", "weight_dtype": "int8"},
             {"name": "e", "op_type": "Add", "activation_dtype": "uint8", "weight_dtype": None}]
    assert u8s8_nodes({"nodes": nodes}) == ["a", "d"]
    assert u8s8_nodes(None) == []


@pytest.mark.parametrize("vnni, s8s8", [(False, ["c"]), (True, []), (None, [])])
def test_s8s8_nodes_are_checked_only_where_the_cpu_is_known_to_lack_vnni(vnni, s8s8) -> None:
    nodes = [{"name": "a", "op_type": "Conv", "activation_dtype": "uint8", "weight_dtype": "int8"},
             {"name": "c", "op_type": "MatMul", "activation_dtype": "int8", "weight_dtype": "int8"}]
    assert kernel_nodes({"nodes": nodes}, {"vnni": vnni}) == (["a"], s8s8)


def test_real_s8s8_orinet_saturates_and_refutes_the_sensitive_node() -> None:
    """OriNet (occular-deskew 0.5.0, tests/data/bundles/README.md) quantized S8S8 with 8-bit weights, collected on
    an AVX2 CPU without VNNI: 52/60 top-1 decisions fused, the unfused control agrees. QR012 is the cause, named for
    S8S8, with reduce_range as the fix (signed activations are what saturates here, so it does not suggest them);
    QR002's INT8 head, which the control quantizes just the same, drops to a warning that quotes the control."""
    from qdqreport.findings import rank_findings
    from qdqreport.rules import discover

    ctx = Context(Bundle(Path(__file__).resolve().parent / "data" / "bundles" / "orinet_s8s8_saturates"))
    details = next(s for s in ctx.bundle.manifest["stages"] if s["id"] == UNFUSED_STAGE)["details"]
    assert details["s8s8_nodes"] > 0 and details["u8s8_nodes"] == 0 and details["cpu"]["vnni"] is False
    findings = rank_findings(run_rules(ctx, discover()).findings)
    first = findings[0]
    assert (first.rule_id, first.severity) == ("QR012", "error")
    assert "S8S8 integer kernels saturate" in first.title and "INT8 activations x INT8 weights" in first.title
    assert "reduce_range=True" in first.fixes[0].command and "symmetric signed" not in " ".join(f.action for f in first.fixes)
    sensitive = next(f for f in findings if f.rule_id == "QR002")
    assert sensitive.severity == "warning"
    assert any("Q/DQ fusion disabled agrees with FP32" in getattr(e, "text", "") for e in sensitive.evidence)


def test_cpu_flags_are_recorded() -> None:
    info = cpu_vnni()
    assert {"machine", "vnni", "avx2"} <= set(info)
    assert info["vnni"] in (True, False, None)


@pytest.mark.slow
def test_real_u8s8_captcha_reader_is_named_saturation(tmp_path: Path) -> None:
    """The corpus captcha CRNN quantized with quantize_static's defaults (scripts/make_corpus_part2.py cap_ort_uint8).

    Measured on AVX2 without VNNI: 14/24 strings fused, 24/24 unfused (scripts/measure_u8s8_saturation.py)."""
    fp32, qdq, inputs = WORK / "cap_fp32.onnx", WORK / "cap_u8.onnx", WORK / "cap_eval.npz"
    if not all(p.exists() for p in (fp32, qdq, inputs)):
        pytest.skip("build/corpus-work/cap_* not made here (scripts/make_corpus_part2.py --only cap_ort_uint8)")
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(fp32), "--qdq", str(qdq), "--inputs", str(inputs), "--batch-axis",
                 "input1=0", "-o", str(out), "--quiet"]) == 0
    ctx = Context(Bundle(out))
    stage = ctx.stage(UNFUSED_STAGE)
    assert stage is not None and stage.status == "ok"
    assert stage.details["samples"] == min(MAX_SAMPLES, stage.details["of_samples"])
    assert stage.details["u8s8_nodes"] > 0 and "vnni" in stage.details["cpu"]
    comparison = next(c for c in ctx.manifest["comparisons"] if c["candidate"] == UNFUSED_STAGE)
    assert comparison["control"] == "qdq_unfused" and comparison["purpose"] == "other"
    if stage.details["cpu"]["vnni"] is False:  # the measured case: this CPU saturates
        # Deployed with ONNX Runtime, the saturation is the first thing to fix; for TensorRT (the default target)
        # the outputs only degrade here, and TensorRT's rejection of UINT8 comes first (findings.rank_findings).
        findings = run_rules(Context(Bundle(out), target="onnxruntime")).findings
        assert findings[0].rule_id == "QR012", [f.rule_id for f in findings]
        assert "root_cause" in findings[0].tags and "reduce_range=True" in findings[0].fixes[1].command
        for_tensorrt = run_rules(ctx).findings
        assert for_tensorrt[0].rule_id == "QR004" and "QR012" in [f.rule_id for f in for_tensorrt]

    skipped = tmp_path / "skipped"
    assert main(["collect", "--fp32", str(fp32), "--qdq", str(qdq), "--inputs", str(inputs), "--batch-axis",
                 "input1=0", "--max-samples", "2", "-o", str(skipped), "--quiet", "--no-saturation-check"]) == 0
    assert UNFUSED_STAGE not in {s["id"] for s in Bundle(skipped).manifest["stages"]}


@pytest.mark.parametrize("case", ["vad_calib_quiet", "mtc_first_conv_int8", "cap_overquant"])
def test_an_unfused_control_that_changes_no_judgement_explains_nothing(case) -> None:
    """Re-collected corpus cases (S8S8, this AVX2 CPU): vad_calib_quiet's control agrees on its first 32 samples where
    the fused model lost nothing either (its flips are later); MTCNN's INT8 first Conv degrades fused and unfused
    (the control wins back 69% of a cosine shortfall that changes no decision); the over-quantized captcha reader's
    control wins back 43%. None is the kernels' doing: QR012 stays quiet and the labelled cause leads."""
    findings = ranked(case)[1]
    assert not [f for f in findings if f.rule_id == "QR012"]


def test_saturation_under_random_calibration_ranks_under_the_calibration() -> None:
    """basic-pitch calibrated on noise (re-collected, S8S8): fused its note map collapses, unfused it agrees; the
    noise set the ranges whose magnitudes saturate, so QR009 leads and QR012 is a warning that says so."""
    findings = ranked("bp_random_calib")[1]
    assert findings[0].rule_id == "QR009"
    kernels = next(f for f in findings if f.rule_id == "QR012")
    assert kernels.severity == "warning" and kernels.score <= 0.2
    assert "fix the calibration first" in kernels.summary


def test_the_decision_names_the_outputs_that_do_not_agree() -> None:
    from qdqreport.collect.saturation_check import decision

    assert decision([]) is None  # every output agrees: skipped
    assert decision(None) == "ran: no quantization comparison to judge the fused outputs by"
    assert decision(["out degrades (cosine 0.95)"]) == "ran: output out degrades (cosine 0.95)"
    assert decision([f"o{i} collapses (x)" for i in range(5)]).endswith("; output o2 collapses (x) and 2 more")


DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"


def _demo_collect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qdq: str, vnni: bool = False) -> Context:
    """The demo (S8S8) collected as on a CPU without VNNI (or with it), whatever this CPU has."""
    from qdqreport.collect import pipeline

    monkeypatch.setattr(pipeline, "cpu_vnni", lambda: {"machine": "x86_64", "vnni": vnni, "avx2": True})
    out = tmp_path / qdq
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / qdq), "--inputs",
                 str(DEMO / "eval.npz"), "--max-samples", "8", "--no-fp16-check", "-o", str(out), "--quiet"]) == 0
    assert main(["validate", str(out)]) == 0
    return Context(Bundle(out))


@pytest.mark.slow
def test_the_control_is_skipped_with_its_reason_where_the_fused_outputs_agree(tmp_path, monkeypatch) -> None:
    """The healthy demo model agrees with FP32: the control is not run (issue 12: its fixed cost bought nothing, QR012
    reads it only on outputs that diverge), and the bundle says so: stage skipped, the reason as its error and in
    details.decision, the kernels and the CPU as for a run; no comparison, no outputs."""
    ctx = _demo_collect(tmp_path, monkeypatch, "cls_int8.onnx")
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.level == "agree"
    stage = ctx.stage(UNFUSED_STAGE)
    assert stage.status == "skipped" and stage.error.startswith("skipped: every output of the QDQ model agrees with FP32")
    assert stage.details["decision"] == stage.error and stage.details["samples"] == 0
    assert stage.details["s8s8_nodes"] > 0 and stage.details["cpu"]["vnni"] is False
    assert not [c for c in ctx.comparisons if c.candidate == UNFUSED_STAGE]
    assert not ctx.bundle.stage(UNFUSED_STAGE)["artifacts"]
    assert not [f for f in run_rules(ctx).findings if f.rule_id in ("QR008", "QR012")]  # skipped is no failure


@pytest.mark.slow
def test_the_control_runs_where_an_output_does_not_agree_and_says_why(tmp_path, monkeypatch) -> None:
    ctx = _demo_collect(tmp_path, monkeypatch, "cls_int8_x255.onnx")
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.level != "agree"
    stage = ctx.stage(UNFUSED_STAGE)
    assert stage.status == "ok" and stage.details["samples"] == 8
    assert stage.details["decision"].startswith(f"ran: output {summary.output} {summary.level}s (")
    assert [c.purpose for c in ctx.comparisons if c.candidate == UNFUSED_STAGE] == ["other"]


@pytest.mark.slow
def test_no_control_at_all_for_s8s8_on_a_vnni_cpu(tmp_path, monkeypatch) -> None:
    ctx = _demo_collect(tmp_path, monkeypatch, "cls_int8_x255.onnx", vnni=True)
    assert ctx.stage(UNFUSED_STAGE) is None


def test_kernels_that_rescue_a_side_output_only_are_a_cause_not_the_cause(tmp_path) -> None:
    """A new user's U2-Net-p, quantized S8S8 per channel and collected on this AVX2 CPU: unfused, side output 1965 is
    won back (map IoU 0.969 -> 0.992) while the fused map 1959 stays collapsed (0.780 -> 0.782), and the headline
    said "most likely cause: the integer kernels". QR012 now fires as a capped warning that names the outputs left
    collapsed, and it no longer refutes the layer findings (kernels_explain is None)."""
    from qdqreport.analysis.saturation import kernels_explain
    from qdqreport.rules import discover
    from qdqreport.rules.u8s8_saturation import _side_output_rescued
    from qdqreport.testing.builder import BundleBuilder

    builder = BundleBuilder(tmp_path / "bundle")
    _side_output_rescued(builder)
    ctx = builder.context()
    finding, = discover()["QR012"].run(ctx)
    assert finding.severity == "warning" and finding.score <= 0.2
    assert "output main (" in finding.summary and "stays as damaged unfused" in finding.summary
    assert kernels_explain(ctx) is None


def test_the_headline_names_no_cause_when_every_cause_was_measured_down(tmp_path) -> None:
    """The same bundle's report: the outputs collapse, and the only cause left is the capped QR012: the headline
    says no cause is established instead of "most likely cause: the integer kernels"."""
    from qdqreport.pipeline import render_report
    from qdqreport.rules.u8s8_saturation import _side_output_rescued
    from qdqreport.testing.builder import BundleBuilder

    builder = BundleBuilder(tmp_path)
    _side_output_rescued(builder)
    render_report(builder.build().location, tmp_path / "report")
    headline = (tmp_path / "report" / "report.md").read_text().splitlines()[0]
    assert "no cause established; weak suspect: ONNX Runtime's" in headline and "most likely cause" not in headline


@pytest.mark.parametrize(("vnni", "first"), [(False, "reduce_range=True"), (True, "'ActivationSymmetric': True")])
def test_on_a_cpu_without_vnni_the_u8s8_fix_is_7_bit_weights_not_s8s8(tmp_path, vnni, first) -> None:
    """Without VNNI, S8S8 runs in saturating kernels too: a new user's PP-OCRv6 recognizer (U8S8, AVX2) lost 9 of 200
    lines; QR012's first fix, symmetric INT8 activations, took it to 41 lost; reduce_range to 6. The fix order
    follows the CPU the bundle records."""
    from qdqreport.rules import discover
    from qdqreport.rules.u8s8_saturation import CPU_NO_VNNI, _bundle
    from qdqreport.testing.builder import BundleBuilder

    builder = BundleBuilder(tmp_path)
    _bundle(builder, 4.0, 0.05, cpu={**CPU_NO_VNNI, "vnni": vnni, "vnni_flags": ["avx512_vnni"] if vnni else []})
    finding, = discover()["QR012"].run(builder.context())
    assert first in finding.fixes[0].command
    if not vnni:
        assert "saturating kernels too" in finding.fixes[1].action and "'ActivationSymmetric': True" in finding.fixes[1].command
