"""Make the smallest honest model whose FP16 float part overflows after ModelOpt's default PTQ.

    /work/movenv/bin/python scripts/make_fp16_overflow_model.py [--out tests/data/models]
        [--calib qdqreport/demo/calib.npz]

None of the real models at hand (PaddleOCR classifier and recogniser, MiniLM-L6) has an FP32
activation or constant beyond 65504 where ModelOpt puts FP16; PP-OCRv4 DBNet does (a
BatchNormalization variance of ~1e8, corpus case det_fp16_default). To have a second, different
kind of FP16 overflow (an activation, not a constant) this builds a model that overflows the way
real networks do when they L2-normalise a whole feature map (PyTorch `f / (f * f).sum().sqrt()`):

  x [1,3,48,192] -> Conv 3->16 3x3 -> Relu -> Conv 16->16 3x3 -> Relu = f
  f * f -> ReduceSum over C,H,W -> Sqrt -> Div(f, .) -> GlobalAveragePool -> Flatten -> embedding [1,16]

The weights are seeded random (He initialisation, the second conv x3), not trained. Over the
16x48x192 map the sum of squares reaches ~7e5 in FP32: beyond 65504, so FP16 holds inf, the norm is
inf and every embedding value becomes 0. The two Convs are the only nodes ModelOpt quantizes.

Measured on ONNX Runtime's CPU provider the outputs still agree: it has no FP16 kernel for Conv,
Mul, ReduceSum, Sqrt, Div or GlobalAveragePool and runs the whole chain in FP32 between two
inserted Casts (even a Clip, which has an FP16 kernel, is pulled into the FP32 island), so the sum
is never stored in FP16 there. The graph declares it FP16; a runtime that honours the types
(TensorRT strongly typed, or any FP16 kernel) stores inf. That is a risk the FP16 check's range scan
shows, not a failure this machine can measure.

Writes l2net_fp32.onnx and, with ModelOpt importable (run it with /work/movenv/bin/python),
l2net_modelopt_int8.onnx: `python -m modelopt.onnx.quantization --quantize_mode=int8` with ModelOpt
0.47's defaults (entropy calibration, FP16 float part) on the demo's 100 calibration crops.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent


def l2net(seed: int = 0) -> onnx.ModelProto:
    """The FP32 model described in the module docstring (deterministic for a given seed)."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0.0, np.sqrt(2 / 27), (16, 3, 3, 3)).astype(np.float32)
    w2 = (3 * rng.normal(0.0, np.sqrt(2 / 144), (16, 16, 3, 3))).astype(np.float32)
    b1, b2 = np.zeros(16, np.float32), np.full(16, 0.1, np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "conv1.w", "conv1.b"], ["conv1.out"], "conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1.out"], ["relu1.out"], "relu1"),
        helper.make_node("Conv", ["relu1.out", "conv2.w", "conv2.b"], ["conv2.out"], "conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2.out"], ["features"], "relu2"),
        helper.make_node("Mul", ["features", "features"], ["squares"], "square"),
        helper.make_node("ReduceSum", ["squares", "axes"], ["sum_of_squares"], "sum_of_squares", keepdims=1),
        helper.make_node("Sqrt", ["sum_of_squares"], ["l2_norm"], "l2_norm"),
        helper.make_node("Div", ["features", "l2_norm"], ["normalised"], "normalise"),
        helper.make_node("GlobalAveragePool", ["normalised"], ["pooled"], "pool"),
        helper.make_node("Flatten", ["pooled"], ["embedding"], "flatten"),
    ]
    initializers = [numpy_helper.from_array(v, n) for n, v in
                    (("conv1.w", w1), ("conv1.b", b1), ("conv2.w", w2), ("conv2.b", b2))]
    initializers.append(numpy_helper.from_array(np.array([1, 2, 3], np.int64), "axes"))
    graph = helper.make_graph(nodes, "l2net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 48, 192])],
                              [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, [1, 16])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="qdqreport-l2net")
    onnx.checker.check_model(model)
    return model


def quantize(fp32: Path, calib: Path, output: Path, python: str) -> None:
    """ModelOpt 0.47 ONNX PTQ with its defaults (what a user runs first)."""
    with np.load(calib) as data:
        crops = data["x"]
    with tempfile.TemporaryDirectory() as tmp:
        calib_npy = Path(tmp) / "calib.npy"
        np.save(calib_npy, crops.astype(np.float32))
        command = [python, "-m", "modelopt.onnx.quantization", f"--onnx_path={fp32}", "--quantize_mode=int8",
                   f"--calibration_data_path={calib_npy}", "--calibration_eps", "cpu", f"--output_path={output}"]
        result = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
    if result.returncode != 0 or not output.exists():
        raise SystemExit(f"ModelOpt failed:\n{result.stderr[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "models")
    parser.add_argument("--calib", type=Path, default=ROOT / "qdqreport" / "demo" / "calib.npz")
    parser.add_argument("--modelopt-python", default=sys.executable)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    fp32 = args.out / "l2net_fp32.onnx"
    onnx.save(l2net(), str(fp32))
    quantize(fp32.resolve(), args.calib.resolve(), (args.out / "l2net_modelopt_int8.onnx").resolve(), args.modelopt_python)
    print(f"wrote {fp32} and {args.out / 'l2net_modelopt_int8.onnx'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
