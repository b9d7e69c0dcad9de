"""Make the real QDQ test models and ModelOpt logs under tests/data/ from the FP32 PaddleOCR classifier.

Run with the ModelOpt venv (it needs nvidia-modelopt, onnxruntime and onnx; not qdqreport):

    /work/movenv/bin/python scripts/make_test_models.py \
        [--model /tmp/ex/rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx] \
        [--page /tmp/ex/skimage/data/page.png] [--out tests/data]

It writes:
  models/cls_fp32.onnx           a copy of the FP32 model
  models/cls_modelopt_int8.onnx  ModelOpt int8, entropy calibration, fp16 high precision (the defaults)
  models/cls_ort_int8.onnx       ORT quantize_static, QDQ, per-channel int8 weights, asymmetric uint8 activations
                                 (after moving Constant-node weights to initializers and opset 11 -> 13)
  modelopt/calibrated.log        ModelOpt DEBUG console output of the run with calibration data
  modelopt/calibrated.log_file.log  what the same run wrote to --log_file (ModelOpt 0.47 stops writing it early)
  modelopt/random_calibration.log  ModelOpt DEBUG console output of the run without calibration data
  modelopt/already_quantized.log   ModelOpt run (max calibration) on cls_modelopt_int8.onnx: it skips quantization

Calibration data: 8 crops of page.png, [8,3,48,192] float32 in [-1,1] (PaddleOCR normalisation).

Logs are thinned (repeated per-tensor DEBUG lines dropped, very long lines cut) to stay small.
ModelOpt is run as the documented CLI so the logs are what a user would see. Both quantizers are
deterministic here: a rerun reproduces the .onnx files bit for bit.
"""

from __future__ import annotations

import argparse
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

DEFAULT_MODEL = "/tmp/ex/rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
DEFAULT_PAGE = "/tmp/ex/skimage/data/page.png"
CROP_HEIGHT, CROP_WIDTH, CROPS = 48, 192, 8
MAX_LOG_BYTES = 190_000


def read_gray_png(path: Path) -> np.ndarray:
    """Decode an 8-bit greyscale, non-interlaced PNG (page.png) without Pillow, which movenv lacks."""
    data = path.read_bytes()
    offset, chunks, header = 8, [], None
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind, body = data[offset + 4:offset + 8], data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if (depth, colour, interlace) != (8, 0, 0):
        raise SystemExit(f"{path}: only 8-bit greyscale non-interlaced PNGs are supported")
    return _unfilter(zlib.decompress(b"".join(chunks)), width, height)


def _unfilter(raw: bytes, width: int, height: int) -> np.ndarray:
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, width + 1)
    image = np.zeros((height, width), dtype=np.int32)
    previous = np.zeros(width, dtype=np.int32)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        out = np.zeros(width, dtype=np.int32)
        for x in range(width):
            left = out[x - 1] if x else 0
            up, up_left = previous[x], (previous[x - 1] if x else 0)
            predictor = (0, left, up, (left + up) // 2, _paeth(left, up, up_left))[kind]
            out[x] = (line[x] + predictor) & 0xFF
        image[y] = previous = out
    return image.astype(np.uint8)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def page_crops(page: Path, seed: int = 0) -> np.ndarray:
    """CROPS text crops of the page as the classifier sees them: [N,3,48,192], (x/255-0.5)/0.5.

    Every other crop is rotated by 180 degrees so both classes of the direction classifier occur.
    """
    image = read_gray_png(page).astype(np.float32)
    rng = np.random.default_rng(seed)
    crops = []
    for index in range(CROPS):
        y = int(rng.integers(0, image.shape[0] - CROP_HEIGHT))
        x = int(rng.integers(0, image.shape[1] - CROP_WIDTH))
        crop = image[y:y + CROP_HEIGHT, x:x + CROP_WIDTH]
        crops.append(crop[::-1, ::-1] if index % 2 else crop)
    batch = (np.stack(crops)[:, None] / 255.0 - 0.5) / 0.5
    return np.ascontiguousarray(np.repeat(batch, 3, axis=1), dtype=np.float32)


def run_modelopt(model: Path, output: Path, log: Path, calibration: Path | None, method: str = "") -> str:
    """Run the ModelOpt CLI with its defaults (int8, entropy, fp16 high precision) at DEBUG level.

    Returns the console output. ModelOpt 0.47 stops writing --log_file part-way (its handler is
    replaced while quantizing), so the console holds the summary lines and is the fixture we keep.
    """
    command = [sys.executable, "-m", "modelopt.onnx.quantization", f"--onnx_path={model}", "--quantize_mode=int8",
               "--calibration_eps", "cpu", f"--output_path={output}", "--log_level", "DEBUG", "--log_file", str(log),
               f"--calibration_shapes=x:{CROPS}x3x{CROP_HEIGHT}x{CROP_WIDTH}"]
    if calibration is not None:
        command.append(f"--calibration_data_path={calibration}")
    if method:
        command.append(f"--calibration_method={method}")
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return done.stdout


def constants_to_initializers(source: Path, target: Path) -> None:
    """Prepare the Paddle export for ORT: Constant-node weights become initializers, opset 11 becomes 13.

    quantize_static only treats initializers as weights (Constant-node weights get calibrated
    per-tensor like activations), and per-channel DequantizeLinear needs opset 13. Tensor names
    do not change, so the FP32 and QDQ graphs still line up.
    """
    import onnx
    from onnx import numpy_helper, version_converter

    model = onnx.load(str(source))
    kept = []
    for node in model.graph.node:
        value = next((a for a in node.attribute if a.name == "value"), None)
        if node.op_type == "Constant" and value is not None:
            tensor = numpy_helper.from_array(numpy_helper.to_array(value.t), node.output[0])
            model.graph.initializer.append(tensor)
        else:
            kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    onnx.save(version_converter.convert_version(model, 13), str(target))


def run_ort(model: Path, output: Path, calibration: np.ndarray) -> None:
    """ORT quantize_static, QDQ format, per-channel int8 weights, asymmetric uint8 activations.

    ORT 1.24 defaults activations to int8; uint8 is asked for explicitly because its non-zero
    zero-points are what TensorRT cannot run, which the tests need a real example of.
    """
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.samples = iter([{"x": calibration[i:i + 1]} for i in range(len(calibration))])

        def get_next(self):
            return next(self.samples, None)

    prepared = output.parent / f"{output.stem}.prepared.onnx"
    constants_to_initializers(model, prepared)
    try:
        quantize_static(str(prepared), str(output), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    finally:
        prepared.unlink(missing_ok=True)


# Per-tensor DEBUG chatter that makes a DEBUG console log ~450 KB; the first few of each kind are kept.
NOISY_MESSAGES = ("Inject cast to float", "Found foldable Constant->Cast", "Found redundant same-type cast",
                  "is not a float, skipping", "Convert initializer", "Added quantizable node", "Expected bias")
NOISY_KEEP = 3
MAX_LINE_CHARS = 2000


def trim_log(text: str, target: Path) -> None:
    """Write a log small enough for tests/data: long lines cut, repetitive per-tensor lines thinned out.

    Summary lines (counts, calibration, warnings) are short and unique, so they all survive.
    """
    seen: dict[str, int] = {}
    kept = []
    for line in text.splitlines():
        noisy = next((m for m in NOISY_MESSAGES if m in line), None)
        if noisy is not None:
            seen[noisy] = seen.get(noisy, 0) + 1
            if seen[noisy] > NOISY_KEEP:
                continue
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" [... {len(line) - MAX_LINE_CHARS} characters trimmed]"
        kept.append(line)
    dropped = {m: n - NOISY_KEEP for m, n in seen.items() if n > NOISY_KEEP}
    kept.append(f"[make_test_models.py dropped repeated lines: {dropped}]")
    data = ("\n".join(kept) + "\n").encode("utf-8")
    if len(data) > MAX_LOG_BYTES:
        raise SystemExit(f"{target}: trimmed log is still {len(data)} bytes; extend NOISY_MESSAGES")
    target.write_bytes(data)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path(DEFAULT_MODEL))
    parser.add_argument("--page", type=Path, default=Path(DEFAULT_PAGE))
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "data")
    args = parser.parse_args(argv)
    models, logs = args.out / "models", args.out / "modelopt"
    models.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    calibration = page_crops(args.page)
    # ModelOpt 0.47 writes intermediate files next to its input and rewrites the input itself (it saves
    # inferred value_info into it): work on copies so the committed FP32 model stays byte-identical.
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        np.save(work / "calib.npy", calibration)
        for name in ("modelopt", "random", "ort"):
            shutil.copyfile(args.model, work / f"{name}_fp32.onnx")
        console = run_modelopt(work / "modelopt_fp32.onnx", models / "cls_modelopt_int8.onnx",
                               work / "calibrated.log", work / "calib.npy")
        trim_log(console, logs / "calibrated.log")
        trim_log((work / "calibrated.log").read_text(), logs / "calibrated.log_file.log")
        console = run_modelopt(work / "random_fp32.onnx", work / "random.onnx", work / "random.log", None)
        trim_log(console, logs / "random_calibration.log")
        # Quantizing an already quantized model: ModelOpt skips and says so (and ignores --calibration_method).
        shutil.copyfile(models / "cls_modelopt_int8.onnx", work / "again.onnx")
        console = run_modelopt(work / "again.onnx", work / "again_q.onnx", work / "again.log", work / "calib.npy",
                               "max")
        trim_log(console, logs / "already_quantized.log")
        run_ort(work / "ort_fp32.onnx", work / "cls_ort_int8.onnx", calibration)
        shutil.copyfile(work / "cls_ort_int8.onnx", models / "cls_ort_int8.onnx")
    shutil.copyfile(args.model, models / "cls_fp32.onnx")


if __name__ == "__main__":
    main()
