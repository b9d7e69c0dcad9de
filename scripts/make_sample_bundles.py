"""Regenerate sample_bundles/ with the collector itself, from the real demo model and data.

    python scripts/make_sample_bundles.py      (from the repository root, with the [collect] extra)

Paths are given relative to the repository root so the bundles do not record this machine's
folders.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = "qdqreport/demo"

SAMPLES = {
    # name: (QDQ model, calibration data, ModelOpt log)
    "cls_healthy": ("cls_int8.onnx", "calib.npz", None),
    "cls_calib_x255": ("cls_int8_x255.onnx", "calib_x255.npz", "modelopt_x255.log"),
}


def main() -> int:
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    from qdqreport.cli import main as qdqreport

    for name, (qdq, calib, log) in SAMPLES.items():
        args = ["collect", "--fp32", f"{DEMO}/cls_fp32.onnx", "--qdq", f"{DEMO}/{qdq}", "--inputs", f"{DEMO}/eval.npz",
                "--calib", f"{DEMO}/{calib}", "-o", f"sample_bundles/{name}", "--force", "--quiet"]
        if log:
            args += ["--modelopt-log", f"{DEMO}/{log}"]
        if qdqreport(args) != 0:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
