"""`collect --postprocess` with a decode that takes the sample's inputs too, `decode(outputs, inputs)` (a masked LM's
decode reads where the mask ids are; a new user's g2p-id BERT had to add an Identity output of its input to both
models to find them). On the real demo classifier: every stage's decode, and the what-if's, gets the inputs of the
same sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.postprocess import takes_inputs

OUTPUT = "save_infer_model/scale_0.tmp_1"
SAMPLES = 6

# The decode records the input it was given, so the bundle shows which sample's inputs each call received.
SCRIPT = f"""import numpy as np
def decode(outputs, inputs):
    return {{"label": int(np.argmax(outputs[{OUTPUT!r}][0])), "input_sum": round(float(inputs["x"].sum()), 3)}}
"""


@pytest.mark.slow
def test_every_stage_decodes_with_the_inputs_of_its_own_sample(tmp_path: Path, demo: Path, eval_x: np.ndarray) -> None:
    script = tmp_path / "decode_with_inputs.py"
    script.write_text(SCRIPT)
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / "cls_int8.onnx"),
                 "--inputs", str(demo / "eval.npz"), "--max-samples", str(SAMPLES), "--postprocess", str(script),
                 "-o", str(tmp_path / "b"), "--quiet", "--per-layer", "--whatif-budget", "20"]) == 0
    ctx = Context(Bundle(tmp_path / "b"))
    assert ctx.task["postprocess"]["inputs"] is True
    expected = [round(float(eval_x[i:i + 1].sum()), 3) for i in range(SAMPLES)]
    for stage in ("ort_fp32", "ort_qdq"):
        assert [float(r["input_sum"]) for r in ctx.task_results(stage)] == expected
    # The what-if decodes its trials with their samples' inputs too: a decode refused for want of them agrees on
    # nothing (0), the demo's healthy INT8 model decides alike on most samples.
    decoded = ctx.whatif_summary["baseline"]["outputs"]["decoded task results"]
    assert decoded["measure"] == "task agreement" and decoded["value"] >= 0.5
    # Class scores are judged by top-1, which no threshold decides: the target's words do not name one.
    assert "decision threshold" not in ctx.whatif_summary["judged"]


def test_a_decode_takes_the_inputs_when_it_has_a_second_positional_parameter() -> None:
    def outputs_only(outputs): ...
    def with_inputs(outputs, inputs): ...
    def keyword_only(outputs, *, inputs=None): ...
    def variadic(*args): ...
    assert [takes_inputs(f) for f in (outputs_only, with_inputs, keyword_only, variadic)] == [False, True, False, True]
