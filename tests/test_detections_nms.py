"""Detections are counted as a detector's decode keeps them: one per object after NMS, matched by IoU.

Real model and real picture: NudeNet 3.4.2's YOLOv8n head (320n.onnx, one [1, 22, 2100] output: 4 pixel-box fields and
18 class scores; `pip install --no-deps nudenet==3.4.2`) on matplotlib's own sample portrait (grace_hopper.jpg) and
crops and mirror images of it, quantized for real by onnxruntime's quantize_static. A new user's NudeNet report counted
each anchor above the threshold as a detection (186 for 44 objects) and called a healthy recipe's change a collapse.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.agreement import COLLAPSE, DECISION_LEVELS
from qdqreport.analysis.decisions import measure
from qdqreport.analysis.output_kinds import infer_kind

ort = pytest.importorskip("onnxruntime")
SPEC = importlib.util.find_spec("nudenet")
pytestmark = pytest.mark.skipif(SPEC is None, reason="nudenet 3.4.2 is not installed (pip install --no-deps nudenet==3.4.2)")


def _views() -> list[np.ndarray]:
    """The portrait letterboxed to 320x320 in [0, 1] (NudeNet's own preprocessing), as it is, cropped and mirrored."""
    from matplotlib import cbook
    from PIL import Image

    image = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)).convert("RGB"))
    views = [image, image[:, ::-1], image[50:550, 30:480], image[100:, :400][:, ::-1], image[:450, 60:],
             image[80:520, 40:470][:, ::-1]]
    out = []
    for view in views:
        h, w = view.shape[:2]
        square = np.zeros((max(h, w), max(h, w), 3), np.uint8)
        square[:h, :w] = view
        resized = np.asarray(Image.fromarray(square).resize((320, 320), Image.BILINEAR), np.float32) / 255
        out.append(resized.transpose(2, 0, 1)[None])
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, list[np.ndarray]]:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    model = Path(SPEC.origin).parent / "320n.onnx"
    views = _views()
    evaluation, calibration = views[:3], views[3:]
    folder = tmp_path_factory.mktemp("nudenet")
    runs = {"fp32": _run(model, evaluation)}
    for name, scale in (("healthy", 1.0), ("x255", 255.0)):  # x255: calibrated on pixels the model never sees
        feeds = iter([{"images": x * scale} for x in calibration])
        quantize_static(str(model), str(folder / f"{name}.onnx"), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                        quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                        per_channel=True, op_types_to_quantize=["Conv"],
                        extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
        runs[name] = _run(folder / f"{name}.onnx", evaluation)
    return runs


def _run(model: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return [session.run(None, {"images": x})[0] for x in inputs]


def test_one_detection_per_face_not_one_per_anchor(runs) -> None:
    kind = infer_kind("output0", runs["fp32"])
    assert kind.kind == "detections" and kind.fields_axis == 1 and len(kind.score_fields) == 18
    anchors = sum(int((r[0, 4:].max(axis=0) >= 0.5).sum()) for r in runs["fp32"])
    decisions = measure(kind, runs["fp32"], runs["healthy"], 0.5)
    assert anchors >= 3 * 5  # several anchors see the one face of each view
    assert decisions.detail.startswith("3 reference detections after NMS at score 0.5")


def test_a_healthy_recipe_keeps_every_face(runs) -> None:
    decisions = measure(infer_kind("output0", runs["fp32"]), runs["fp32"], runs["healthy"], 0.5)
    assert decisions.changed == 0 and decisions.agreement == 1.0


def test_calibration_on_x255_pixels_loses_them(runs) -> None:
    decisions = measure(infer_kind("output0", runs["fp32"]), runs["fp32"], runs["x255"], 0.5)
    assert decisions.agreement < DECISION_LEVELS["detections"][1], decisions.detail  # COLLAPSE's level
    assert "lost" in decisions.short and COLLAPSE == "collapse"
