"""Regenerate sample_bundles/trt_mobilenet_qat_layerinfo with `qdqreport import-trt --new` from the
real MobileNetV2 QAT engine dump in qdqreport/testing/data/trt (TREx samples, Apache-2.0: see its README).

    python scripts/make_trt_sample_bundle.py      (from anywhere; needs no onnxruntime or tensorrt)

Paths are relative to the repository root so the bundle does not record this machine's folders.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DUMPS = "qdqreport/testing/data/trt/tests_inputs_mobilenet.qat.onnx.engine"
BUNDLE = "sample_bundles/trt_mobilenet_qat_layerinfo"


def main() -> int:
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    from qdqreport.cli import main as qdqreport

    return qdqreport(["import-trt", BUNDLE, "--new", "--force", "--stage", "trt_int8",
                      "--layer-info", f"{DUMPS}.graph.json", "--profile", f"{DUMPS}.profile.json",
                      "--build-settings", f"{DUMPS}.build.metadata.json"])


if __name__ == "__main__":
    sys.exit(main())
