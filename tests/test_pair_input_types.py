"""A model pair that takes different input types is refused up front, naming both models (a new user's shipped FP16
model against an INT8 one quantized from its FP32 conversion was told "convert it with .astype(np.float16)", then,
converted, "convert it with .astype(np.float32)")."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from qdqreport.cli import main


def _float16_input(source: Path, target: Path) -> Path:
    """The demo's FP32 classifier taking float16 pixels: its input retyped, a Cast to float32 in front (as a model
    exported in FP16 then partly converted reads its input)."""
    model = onnx.load(str(source))
    graph = model.graph
    name = graph.input[0].name
    graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT16
    for node in graph.node:
        node.input[:] = [f"{name}_fp32" if i == name else i for i in node.input]
    graph.node.insert(0, helper.make_node("Cast", [name], [f"{name}_fp32"], to=TensorProto.FLOAT))
    onnx.save(model, str(target))
    return target


def test_a_pair_with_different_input_types_is_one_line_naming_both(tmp_path: Path, demo: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    fp16 = _float16_input(demo / "cls_fp32.onnx", tmp_path / "cls_fp16_input.onnx")
    code = main(["collect", "--fp32", str(fp16), "--qdq", str(demo / "cls_int8.onnx"), "--inputs",
                 str(demo / "eval.npz"), "-o", str(tmp_path / "b"), "--quiet"])
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(error) == 1 and not (tmp_path / "b").exists()
    assert "cls_int8.onnx: input 'x' is float32 but in --fp32" in error[0] and "cls_fp16_input.onnx" in error[0]
    assert "is float16" in error[0]
