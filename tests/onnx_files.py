"""ONNX model files as exporters write them, made from the demo models for tests of how collect reads models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper


def with_initializers(source: Path) -> onnx.ModelProto:
    """*source* with its Constant-node weights as initializers (the demo models, a Paddle export, hold their
    weights in Constant nodes; most exporters write initializers)."""
    model = onnx.load(str(source))
    nodes = []
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute[0].name == "value":
            model.graph.initializer.append(numpy_helper.from_array(numpy_helper.to_array(node.attribute[0].t),
                                                                   node.output[0]))
        else:
            nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


class FeedReader:
    """onnxruntime.quantization's CalibrationDataReader over a list of feeds (get_next until None)."""

    def __init__(self, feeds: list[dict[str, np.ndarray]]):
        self.feeds = iter(feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.feeds, None)
