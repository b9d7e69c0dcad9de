"""Regenerate qdqreport/demo/: the real model, its real ModelOpt QDQ variants, and real inputs.

    python scripts/make_demo_data.py --modelopt-python /path/to/venv-with-modelopt/bin/python

Needs: the rapidocr-onnxruntime wheel's cls model and scikit-image's page.png / text.png
(found in the installed packages, or given with --cls-model / --images), and a Python with
nvidia-modelopt[onnx] (CPU calibration is enough). Writes:

  cls_fp32.onnx        PaddleOCR text-direction classifier (rapidocr-onnxruntime 1.4.4, Apache-2.0)
  eval.npz             50 real text-line crops ({"x": [50, 3, 48, 192]}), upright and rotated 180°
  eval_labels.npy      their true direction (0 upright, 1 rotated)
  calib.npz            100 other crops, preprocessed like eval.npz (the right calibration data)
  calib_x255.npz       the same crops with the normalisation forgotten: raw 0..255 pixels
  cls_int8.onnx        ModelOpt INT8 (defaults) calibrated on calib.npz: a healthy quantization
  cls_int8_x255.onnx   ModelOpt INT8 (defaults) calibrated on calib_x255.npz: a broken one
  modelopt_x255.log    ModelOpt's console log of the broken run (its --log_file stops before the
                       summary counts in 0.47, so the console output is what qdqreport reads)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from demo_inputs import labelled_set, text_crops  # noqa: E402

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"


def main() -> None:
    args = _parse()
    DEMO.mkdir(parents=True, exist_ok=True)
    crops = text_crops(str(args.images / "page.png"), str(args.images / "text.png"))
    eval_x, eval_y = labelled_set([c for i, c in enumerate(crops) if i % 3 == 0])
    calib_x, _ = labelled_set([c for i, c in enumerate(crops) if i % 3 != 0])
    np.savez_compressed(DEMO / "eval.npz", x=eval_x)
    np.save(DEMO / "eval_labels.npy", eval_y)
    np.savez_compressed(DEMO / "calib.npz", x=calib_x)
    np.savez_compressed(DEMO / "calib_x255.npz", x=((calib_x * 0.5 + 0.5) * 255).astype(np.float32))
    shutil.copyfile(args.cls_model, DEMO / "cls_fp32.onnx")
    with tempfile.TemporaryDirectory() as scratch:
        for calib, output, log in (("calib.npz", "cls_int8.onnx", None), ("calib_x255.npz", "cls_int8_x255.onnx", "modelopt_x255.log")):
            npy = Path(scratch) / "calib.npy"  # ModelOpt 0.47 reads .npy for single-input models
            np.save(npy, np.load(DEMO / calib)["x"])
            _quantize(args.modelopt_python, DEMO / "cls_fp32.onnx", npy, DEMO / output, DEMO / log if log else None)
    print(f"wrote {sorted(p.name for p in DEMO.iterdir())}")


def _quantize(python: str, model: Path, calib: Path, output: Path, log: Path | None) -> None:
    command = [python, "-m", "modelopt.onnx.quantization", f"--onnx_path={model}", "--quantize_mode=int8",
               f"--calibration_data_path={calib}", "--calibration_eps", "cpu", f"--output_path={output}"]
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    if log is not None:
        log.write_text(result.stdout + result.stderr, encoding="utf-8")


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modelopt-python", required=True, help="a Python interpreter with nvidia-modelopt[onnx]")
    parser.add_argument("--cls-model", type=Path, default=_package_file("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx"))
    parser.add_argument("--images", type=Path, default=_package_file("skimage", "data"))
    return parser.parse_args()


def _package_file(package: str, relative: str) -> Path | None:
    try:
        import importlib.util

        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).parent / relative if spec and spec.origin else None


if __name__ == "__main__":
    main()
