"""A synthetic ResNet-50-sized model (>= 100 MB of FP32 weights, ONNX external data) for issue 12's large-model target.

    python benchmarks/make_big_model.py [--out build/bench] [--size 160]

No model of that size ships as weights in a wheel this project could use without a model hub (the
corpus families are 1-11 MB), so this one is synthetic, and says so: ResNet-50's topology (stem,
bottleneck stages of 3, 4, 6 and 3 blocks, widths 256-2048, global pool, a 1000-way Gemm; BatchNorm
folded into the Convs, as exporters write it) with random weights, 25.6 M parameters, 102 MB. He-normal
weights, the last Conv of each residual branch scaled down (as Fixup-style initialisation does) so
the activations stay finite through 16 blocks. It measures speed and memory, not accuracy: its
quantization error means nothing.

Writes big_fp32.onnx (+ big_fp32.onnx.data), big_int8.onnx (+ .data: onnxruntime quantize_static,
QDQ, symmetric INT8 activations, per-channel weights, MinMax on 8 images) and big_eval.npz (64 smooth
random images, ImageNet-normalised, the shape of bench_collect.py's det inputs).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))  # (bottleneck width, blocks, first stride)


def build(path: Path, size: int) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(50)
    nodes, inits = [], []

    def conv(x: str, cin: int, cout: int, k: int, stride: int, name: str, gain: float = 1.0, relu: bool = True) -> str:
        w = (rng.standard_normal((cout, cin, k, k)) * gain * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.01).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, f"{name}.w"), numpy_helper.from_array(b, f"{name}.b")])
        nodes.append(helper.make_node("Conv", [x, f"{name}.w", f"{name}.b"], [f"{name}.out"], name=name,
                                      kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))
        if not relu:
            return f"{name}.out"
        nodes.append(helper.make_node("Relu", [f"{name}.out"], [f"{name}.relu"], name=f"{name}/Relu"))
        return f"{name}.relu"

    x = conv("images", 3, 64, 7, 2, "stem")
    nodes.append(helper.make_node("MaxPool", [x], ["stem.pool"], name="stem/MaxPool", kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "stem.pool", 64
    for stage, (width, blocks, stride) in enumerate(STAGES, start=1):
        for block in range(blocks):
            name, s = f"layer{stage}.{block}", stride if block == 0 else 1
            y = conv(x, cin, width, 1, 1, f"{name}.conv1")
            y = conv(y, width, width, 3, s, f"{name}.conv2")
            y = conv(y, width, width * 4, 1, 1, f"{name}.conv3", gain=0.2, relu=False)
            shortcut = conv(x, cin, width * 4, 1, s, f"{name}.down", relu=False) if block == 0 else x
            nodes.append(helper.make_node("Add", [y, shortcut], [f"{name}.add"], name=f"{name}/Add"))
            nodes.append(helper.make_node("Relu", [f"{name}.add"], [f"{name}.out"], name=f"{name}/Relu"))
            x, cin = f"{name}.out", width * 4
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"], name="head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], name="head/Flatten"))
    fc = (rng.standard_normal((1000, 2048)) * np.sqrt(1.0 / 2048)).astype(np.float32)
    inits.extend([numpy_helper.from_array(fc, "fc.w"), numpy_helper.from_array(np.zeros(1000, np.float32), "fc.b")])
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="head/Gemm", transB=1))
    graph = helper.make_graph(nodes, "synthetic_resnet50",
                              [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="qdqreport-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location=path.name + ".data")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--size", type=int, default=160)
    args = parser.parse_args()
    make(args.out, args.size)
    return 0


def make(out: Path, size: int = 160) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    out.mkdir(parents=True, exist_ok=True)
    fp32, qdq = out / "big_fp32.onnx", out / "big_int8.onnx"
    build(fp32, size)
    images = smooth_images(64, size)
    np.savez(out / "big_eval.npz", images=images)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.rows = iter(images[:8])

        def get_next(self):
            row = next(self.rows, None)
            return None if row is None else {"images": row[None]}

    quantize_static(str(fp32), str(qdq), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, per_channel=True, use_external_data_format=True,
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})


def smooth_images(count: int, size: int) -> np.ndarray:
    """Low-frequency random RGB images in [0, 1], ImageNet-normalised, NCHW float32 (also bench_collect's det inputs)."""
    rng = np.random.default_rng(0)
    coarse = rng.random((count, 3, 10, 10))
    images = np.kron(coarse, np.ones((1, 1, size // 10, size // 10)))
    mean, std = np.array([0.485, 0.456, 0.406])[:, None, None], np.array([0.229, 0.224, 0.225])[:, None, None]
    return ((images - mean) / std).astype(np.float32)


if __name__ == "__main__":
    raise SystemExit(main())
