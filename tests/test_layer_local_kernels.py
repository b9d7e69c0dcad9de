"""The per-layer local graph computes a node as the QDQ model does, not in another integer kernel.

sudachi-c-imitator 0.2.1's ALBERT character tagger (`pip install --no-deps --ignore-requires-python
sudachi-c-imitator==0.2.1`, 3.3 MB), its MatMuls quantized by onnxruntime's quantize_static with its defaults (QDQ,
U8S8), calibrated on 16 of the real sentences of tests/data/sudachi_char_ids.npz and run on 4 others. Its first
quantized MatMul reads the embeddings' LayerNorm, which nothing quantized precedes: fed the FP32 values, the local
copy of that MatMul has exactly the inputs it has in the QDQ model, so its local error must be its accumulated error.
With ONNX Runtime's Q/DQ fusion on, the local copy (no Q after it) ran as MatMulIntegerToFloat, whose U8S8 path
saturates on x86 without VNNI: SQNR 35.044 dB against the QDQ model's 35.053 here, and on a new user's MiniMol
cosine 0.949 against 0.99996 (session 37).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest

from qdqreport.collect.layerwise import collect_layers

SPEC = importlib.util.find_spec("sudachi_c_imitator")
pytestmark = pytest.mark.skipif(SPEC is None, reason="sudachi-c-imitator 0.2.1 is not installed (pip install "
                                "--no-deps --ignore-requires-python sudachi-c-imitator==0.2.1)")
IDS = Path(__file__).resolve().parent / "data" / "sudachi_char_ids.npz"


def _feed(row: np.ndarray) -> dict[str, np.ndarray]:
    ids = row[None].astype(np.int64)
    return {"input.1": ids, "onnx::Unsqueeze_1": (ids != 0).astype(np.int64), "input.3": np.zeros_like(ids)}


class _Reader:
    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)


def test_a_node_fed_exact_inputs_has_its_accumulated_error_as_local_error(tmp_path):
    from onnxruntime.quantization import QuantFormat, quantize_static

    fp32 = Path(SPEC.submodule_search_locations[0]) / "model.onnx"
    ids = np.load(IDS)
    qdq = tmp_path / "tagger_matmul_int8.onnx"
    quantize_static(str(fp32), str(qdq), _Reader([_feed(r) for r in ids["calib"][:16]]), quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=["MatMul"])
    layers = collect_layers(onnx.load(str(fp32)), onnx.load(str(qdq)), [_feed(r) for r in ids["eval"][:4]])
    matmuls = [r for r in layers.layer_rows if r["kind"] == "activation" and r["op_type"] == "MatMul"]
    first = matmuls[0]
    assert first["node"].endswith("embedding_hidden_mapping_in/MatMul") and first["sqnr_db"] < 40
    assert first["local_sqnr_db"] == pytest.approx(first["sqnr_db"], rel=1e-9, abs=0)
    assert first["local_cosine"] == pytest.approx(first["cosine"], rel=1e-12, abs=0)
    # Downstream nodes inherit error, so their local error is smaller than what they carry.
    assert all(r["local_sqnr_db"] >= r["sqnr_db"] - 0.5 for r in matmuls[1:])
