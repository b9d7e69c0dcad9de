"""Ranges the calibration file did not set (QR006, analysis/layers.ranges_from_other_data), on onnxruntime's real
CalibMaxIntermediateOutputs: documented as giving the same ranges as a whole-file calibration with less memory, it
clears each full chunk without computing its ranges (onnxruntime 1.32; microsoft/onnxruntime#18893), so the model keeps
the last partial chunk's. The thirty-seventh corpus part's terrain generator was quantized so, on its 16 terrains with
chunks of 5: every range its sixteenth's. The demo classifier here, quantized by quantize_static for real."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.engine import run_rules

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"
CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SUBJECT = "ranges from other data"


def _quantize(out: Path, chunk: int | None) -> None:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    data = dict(np.load(DEMO / "calib.npz"))
    feeds = iter([{k: v[i:i + 1] for k, v in data.items()} for i in range(len(data["x"]))])
    options = {"ActivationSymmetric": True, "WeightSymmetric": True}
    if chunk:
        options["CalibMaxIntermediateOutputs"] = chunk
    quantize_static(str(DEMO / "cls_fp32.onnx"), str(out), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ, per_channel=True, weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8, extra_options=options)


def _findings(tmp_path: Path, chunk: int | None):
    tmp_path.mkdir()
    model, bundle = tmp_path / "cls_int8.onnx", tmp_path / "bundle"
    _quantize(model, chunk)
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(model), "--inputs",
                 str(DEMO / "eval.npz"), "--calib", str(DEMO / "calib.npz"), "-o", str(bundle), "--quiet"]) == 0
    return run_rules(Context(Bundle(bundle))).findings


@pytest.mark.slow
def test_ranges_of_the_last_chunk_are_named_and_a_whole_file_calibration_is_not(tmp_path: Path):
    # 100 calibration crops in chunks of 7: the ranges are the last 2 crops'.
    chunked = _findings(tmp_path / "chunked", 7)
    (other,) = [f for f in chunked if f.subject == SUBJECT]
    assert other.rule_id == "QR006" and other.severity == "warning" and chunked[0] is other
    assert "CalibMaxIntermediateOutputs" in other.fixes[0].action and not other.fixes[0].command
    assert "quantize_static(" in other.fixes[1].command and "CalibMaxIntermediateOutputs" not in other.fixes[1].command
    assert "Percentile" in other.fixes[2].command
    # Compared with a file that did not set the ranges, clipping says nothing of the calibration that made them.
    assert not [f for f in chunked if f.subject in ("clipped activations", "over-wide activation ranges")]
    whole = _findings(tmp_path / "whole", None)
    assert not [f for f in whole if f.subject == SUBJECT]


def test_the_terrain_generators_ranges_are_its_last_terrains_and_a_two_terrain_calibration_is_its_own():
    # Quantized with CalibMaxIntermediateOutputs=5 on 16 terrains: the sixteenth set every range. On 2 terrains (fewer
    # than a chunk) the ranges are the file's own: nothing to say.
    one = run_rules(Context(Bundle(CORPUS / "ter_healthy_ort_sym"), target="onnxruntime")).findings
    (other,) = [f for f in one if f.subject == SUBJECT]
    assert other.title.startswith("79 of 392 activation ranges clip")
    few = run_rules(Context(Bundle(CORPUS / "ter_calib_few"), target="onnxruntime")).findings
    assert not [f for f in few if f.subject == SUBJECT]
    # ModelOpt's entropy clips its own calibration data by design: the demo's ModelOpt model is not judged.
