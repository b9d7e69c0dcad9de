"""Per-tensor weights that crush output channels (issue 10; session 34's new user: U2-Net-p quantized with
per_channel=False kept foreground IoU 0.003 and the report blamed the sensitive heads). collect records, for each 8-bit
per-tensor weight, how many integer levels each output channel reaches; QR013 names the weights that leave channels a
few levels. Real models and real bundles only."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import onnx

from qdqreport.analysis.context import Context
from qdqreport.analysis.quantizer import crushed_weights
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.precision import precision_summary
from qdqreport.engine import run_rules

BUNDLES = Path(__file__).parent / "data" / "bundles"
MUL_15 = "model_1/batch_normalization_15/FusedBatchNormV32"


def test_the_mrz_segmenter_s_batchnorm_mul_is_named():
    # fastmrz's BatchNorm written as a Mul, its per-channel factors quantized with one scale (quantize_static): 49 of
    # its 64 channels round to 0 (the channel-zeroing Mul QR201 and QR203 localise by measurement).
    ctx = Context(Bundle(BUNDLES / "fastmrz_bn_per_tensor"), target="onnxruntime")
    crushed = {w.consumer: w for w in crushed_weights(ctx.precision)}
    assert crushed[MUL_15].zeroed == 49 and crushed[MUL_15].channels == 64 and not crushed[MUL_15].matrix
    # Its FP32 multipliers (0.00048 to 31.2) are all alive: the collector found them and counts none dead.
    entry = next(e for e in ctx.precision["qdq"] if MUL_15 in e["consumers"] and e.get("channel_levels"))
    assert entry["channel_levels"]["dead"] == 0
    findings = run_rules(ctx).findings
    qr013 = next(f for f in findings if f.rule_id == "QR013")
    # Outputs collapse, but only elementwise constants are crushed: a warning, fixed by keeping the Muls float.
    assert qr013.severity == "warning" and MUL_15 in qr013.fixes[0].command
    assert len(qr013.fixes) == 1 and qr013.fixes[0].action.startswith("Keep")  # the Convs are per-channel already
    assert findings.index(qr013) > findings.index(next(f for f in findings if f.rule_id == "QR201"))


def _quantize(fp32: Path, out: Path, calib: np.ndarray, per_channel: bool) -> None:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    feeds = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    quantize_static(str(fp32), str(out), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ, per_channel=per_channel, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)


def test_collect_records_channel_levels_of_per_tensor_weights_only(tmp_path, demo):
    # The demo classifier quantized by quantize_static (its Conv weights come out per tensor, one scale each): each gets
    # its channel histogram, counts adding up to its output channels; its convolutions' channels are alike in size, so
    # nothing is crushed and QR013 stays quiet. fastmrz's per-channel Conv weights get none.
    with np.load(demo / "calib.npz") as data:
        calib = data["x"][:16].astype(np.float32)
    qdq = tmp_path / "cls.onnx"
    _quantize(demo / "cls_fp32.onnx", qdq, calib, per_channel=False)
    summary = precision_summary(onnx.load(qdq))
    op_types = {n["name"]: n["op_type"] for n in summary["nodes"]}
    convs = [e for e in summary["qdq"] if e["kind"] == "weight" and op_types.get(e["consumers"][0]) == "Conv"]
    assert convs and all(e["scale_count"] == 1 and e["channel_levels"]["axis"] == 0 for e in convs)
    # quantize_static wrote these weights as float constants behind Q nodes: each says how many channels were dead
    # before quantization (none in this classifier), with or without the FP32 model.
    assert all(e["channel_levels"].get("dead") == 0 for e in convs)
    from qdqreport.collect.qdq_graph import GraphIndex

    fp32_index = GraphIndex(onnx.load(demo / "cls_fp32.onnx"))
    with_fp32 = precision_summary(onnx.load(qdq), fp32=lambda: fp32_index)
    assert all(e["channel_levels"].get("dead") == 0 for e in with_fp32["qdq"]
               if e.get("channel_levels") and op_types.get(e["consumers"][0]) == "Conv")
    levels = [e["channel_levels"] for e in summary["qdq"] if e.get("channel_levels")]
    assert all(sum(level["histogram"]) == level["channels"] for level in levels)
    np.savez(tmp_path / "calib.npz", x=calib)
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(qdq), "--inputs",
                 str(demo / "eval.npz"), "--calib", str(tmp_path / "calib.npz"), "--max-samples", "8", "-o", str(out),
                 "--quiet"]) == 0
    written = json.loads((out / "quant" / "precision_summary.json").read_text(encoding="utf-8"))
    assert [e.get("channel_levels") for e in written["qdq"] if e.get("channel_levels")] == levels
    assert not [f for f in run_rules(Context(Bundle(out))).findings if f.rule_id == "QR013"]
    mrz = Context(Bundle(BUNDLES / "fastmrz_bn_per_tensor")).precision
    mrz_ops = {n["name"]: n["op_type"] for n in mrz["nodes"]}
    mrz_convs = [e for e in mrz["qdq"] if e["kind"] == "weight" and mrz_ops.get(e["consumers"][0]) == "Conv"]
    assert mrz_convs and not [e for e in mrz_convs if e.get("channel_levels")]


def test_channels_dead_before_quantization_are_not_crushed():
    # A channel whose FP32 weights are ~0 (dead filters: the age predictor's stem has 21 of 64 at 1e-10 to 1e-38 of its
    # largest) loses nothing by rounding to 0: the same Mul, its 49 zeroed channels declared dead, is not named.
    precision = Context(Bundle(BUNDLES / "fastmrz_bn_per_tensor")).precision
    entry = next(e for e in precision["qdq"] if MUL_15 in (e.get("consumers") or []) and e.get("channel_levels"))
    assert MUL_15 in {w.consumer for w in crushed_weights(precision)}
    entry["channel_levels"] = {**entry["channel_levels"], "dead": 49,
                               "histogram": [0, *entry["channel_levels"]["histogram"][1:]]}
    assert MUL_15 not in {w.consumer for w in crushed_weights(precision)}
