"""confirm runs a quantize_static fix with the reduce_range its printed command sets (QR012's and QR013's 7-bit
weights, for CPUs whose integer kernels saturate). It dropped the option: a new user's face detector (MediaPipe
BlazeFace) read "regression: cosine 0.96 -> 0.71" for QR013's per-channel fix, whose printed command (per-channel and
reduce_range) was the best recipe they found (26 -> 15 of 60 images changed). Real data: the corpus bundle
dns_stft_int8 (its QR012 prints reduce_range=True) and BlazeFace with 8 of the user's photos (tests/data/blazeface)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from qdqreport.analysis.context import Context
from qdqreport.analysis.quantizer import ort_options
from qdqreport.bundle.reader import Bundle
from qdqreport.confirm import quantizers as q
from qdqreport.confirm.fix import fix_from_finding
from qdqreport.engine import run_rules

HERE = Path(__file__).resolve().parent
FACES = HERE / "data" / "blazeface"


def test_a_printed_reduce_range_is_part_of_the_fix_confirm_runs() -> None:
    ctx = Context(Bundle(HERE.parent / "corpus" / "dns_stft_int8"), target="onnxruntime")
    (finding,) = [f for f in run_rules(ctx).findings if f.rule_id == "QR012"]
    assert any("reduce_range=True" in fix.command for fix in finding.fixes)
    recorded = ort_options(ctx.precision or {})
    spec = fix_from_finding(finding, None, "onnxruntime", recorded)
    assert dict(spec.ort_options).get("reduce_range") is True
    options = q.apply_fix_ort(recorded, spec.node_patterns, spec.op_types, None, dict(spec.ort_options))
    assert options["reduce_range"] is True


def test_reduce_range_reaches_quantize_static(tmp_path: Path) -> None:
    """Run for real: every Conv weight of the re-quantized BlazeFace stays within 7 bits."""
    photos = np.load(FACES / "photos_uint8.npz")["eval"].astype(np.float32) / 127.5 - 1
    options = {"op_types_to_quantize": ["Conv"], "per_channel": True, "activation_type": "uint8",
               "weight_type": "int8", "nodes_to_exclude": [], "calibrate_method": "minmax", "reduce_range": True,
               "extra_options": {"ActivationSymmetric": False, "WeightSymmetric": True}}
    out = tmp_path / "faces.quant.onnx"
    q.run_ort(FACES / "blazeface_fp32.onnx", out, [{"input": x[None]} for x in photos[:4]], options)
    weights = [numpy_helper.to_array(t) for t in onnx.load(out).graph.initializer
               if t.data_type == onnx.TensorProto.INT8 and t.name.endswith("_quantized")]
    assert weights and max(int(np.abs(w.astype(np.int32)).max()) for w in weights) <= 64
