"""The what-if's "meets the target" is the verdict's judgement of the outputs, read from its owner (analysis/agreement.py).

A new user's NudeNet (YOLOv8n head, one [1, 22, 2100] output) quantized with random calibration: the verdict said
collapse (detections lost at the package's threshold 0.2) while the what-if said "the QDQ model already meets the
target", because it judged the whole-tensor cosine (0.9987) and the verdict the detections. Real model (NudeNet 3.4.2's
320n.onnx, `pip install --no-deps nudenet==3.4.2`), real pictures (matplotlib's sample portrait, as
tests/test_detections_nms.py), real quantization (onnxruntime's quantize_static on uniform noise), a real collect.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis import evidence
from qdqreport.analysis.agreement import AGREE
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle

pytest.importorskip("onnxruntime")
SPEC = importlib.util.find_spec("nudenet")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(SPEC is None, reason="nudenet 3.4.2 is not installed (pip install --no-deps nudenet==3.4.2)")]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    from qdqreport.cli import main
    from test_detections_nms import _views

    folder = tmp_path_factory.mktemp("nudenet_whatif")
    model = Path(SPEC.origin).parent / "320n.onnx"
    np.savez(folder / "eval.npz", images=np.concatenate(_views()))
    noise = np.random.default_rng(0).random((4, 1, 3, 320, 320), dtype=np.float32)  # calibration on random pixels
    np.savez(folder / "calib.npz", images=noise[:, 0])
    feeds = iter([{"images": x} for x in noise])
    quantize_static(str(model), str(folder / "random.onnx"), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    per_channel=True, op_types_to_quantize=["Conv"],
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
    out = folder / "bundle"
    assert main(["collect", "--fp32", str(model), "--qdq", str(folder / "random.onnx"), "--inputs",
                 str(folder / "eval.npz"), "--calib", str(folder / "calib.npz"), "--per-layer",
                 "--whatif-budget", "30", "--decision-threshold", "0.2", "--range-samples", "0", "-o", str(out),
                 "--quiet"]) == 0
    return out


def test_the_whatif_baseline_is_judged_as_the_verdict_judges_the_outputs(bundle):
    ctx = Context(Bundle(bundle))
    verdict = next(s for s in ctx.output_summaries(ctx.comparison("quantization").id) if s.output == "output0")
    summary = ctx.whatif_summary
    base = summary["baseline"]
    assert verdict.judgement.measure == "detections" and verdict.level != AGREE  # the verdict: detections lost
    assert base["cosine"] > 0.99  # what the what-if used to judge by: "already meets the target"
    assert "already meets" not in summary["stopped"]
    assert ctx.layer_rows(ctx.comparison("quantization").id, "whatif")[0].reached == 0
    assert (base["output"], base["measure"], base["level"], base["headline"]) == (
        "output0", "detections", verdict.level, verdict.judgement.headline)
    assert "output0 by detections; decision threshold 0.2" in summary["judged"]


def test_the_report_says_what_the_whatif_judged(bundle):
    ctx = Context(Bundle(bundle))
    assert ctx.whatif_summary["chosen"]["nodes"]  # the top suspects were tried (2 trials of the 30 s budget)
    found = evidence.whatif(ctx)
    assert found is not None and "detections" in found.line and "cosine" not in found.line.split("excluded:")[0]
    from qdqreport.engine import run_rules
    from qdqreport.rules import discover

    qr203 = [f for f in run_rules(ctx, discover()).findings if f.rule_id == "QR203"]
    assert qr203 and "detections" in qr203[0].summary and "as the report judges the outputs" in qr203[0].summary
