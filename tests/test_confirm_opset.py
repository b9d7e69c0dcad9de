"""confirm's own quantize_static run converts an opset < 13 model before a per-channel re-quantization, as the printed
commands do (fixes.py): run on a real opset-11 YOLOX (ddddocr's detector) with a real photograph."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest

from qdqreport.confirm.quantizers import run_ort


def _detector() -> Path:
    spec = importlib.util.find_spec("ddddocr")  # find only: importing it loads its models
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("ddddocr is not installed (pip install --no-deps ddddocr==1.6.1; .ci/run does it)")
    return Path(spec.submodule_search_locations[0]) / "common_det.onnx"


def _photographs() -> list[dict[str, np.ndarray]]:
    from matplotlib import cbook
    from PIL import Image

    with cbook.get_sample_data("grace_hopper.jpg") as handle:
        image = np.asarray(Image.open(handle).convert("RGB").resize((416, 416)), np.float32)
    chw = image.transpose(2, 0, 1)[None]
    return [{"images": chw}, {"images": chw[:, :, :, ::-1].copy()}]


@pytest.mark.slow
def test_a_per_channel_requantization_of_an_opset_11_model_loads(tmp_path: Path) -> None:
    fp32 = _detector()
    assert max(o.version for o in onnx.load(fp32, load_external_data=False).opset_import if o.domain in ("", "ai.onnx")) < 13
    options = {"op_types_to_quantize": ["Conv"], "per_channel": True, "activation_type": "int8", "weight_type": "int8",
               "nodes_to_exclude": [], "calibrate_method": "minmax",
               "extra_options": {"ActivationSymmetric": True, "WeightSymmetric": True}}
    out = tmp_path / "det.quant.onnx"
    run_ort(fp32, out, _photographs(), options)
    model = onnx.load(out)
    per_channel = [n for n in model.graph.node if n.op_type == "DequantizeLinear"
                   and any(a.name == "axis" for a in n.attribute)]
    assert per_channel and max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) >= 13
    onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])  # loads: the axis is valid
