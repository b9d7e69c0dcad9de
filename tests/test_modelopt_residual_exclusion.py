"""A LayerNormalization excluded under ModelOpt frees its INT8 input only with the residual Add that ModelOpt quantizes
for it (fixes.resolve_for, RESIDUAL_PRODUCERS): a new user's ModelOpt model of pipecat's Whisper-tiny end-of-turn
detector was told to exclude its 8 LayerNorms, and ModelOpt wrote the same graph (the same 104 of 314 decisions
flipped); excluding the Adds freed every LayerNorm input. On the real precision summary of that model."""

from __future__ import annotations

import json
from pathlib import Path

from qdqreport.fixes import Change, nodes_by_output, resolve_for

SUMMARY = json.loads((Path(__file__).resolve().parent / "data" / "modelopt" /
                      "smart_turn_v3_2_precision_summary.json").read_text(encoding="utf-8"))


def test_layernorm_exclusion_under_modelopt_takes_the_residual_add_that_feeds_it():
    norms = [n["name"] for n in SUMMARY["nodes"] if n["op_type"] == "LayerNormalization"]
    by_output = nodes_by_output(SUMMARY["nodes"])
    feeding = {by_output[g["tensor"]]["name"] for g in SUMMARY["qdq"] if g.get("kind") == "activation"
               and set(g.get("consumers") or ()) & set(norms) and by_output.get(g["tensor"], {}).get("op_type") == "Add"}
    assert len(norms) == 10 and len(feeding) == 8  # two LayerNorms read an input ModelOpt left float
    resolved = resolve_for(SUMMARY, "modelopt", Change(exclude_nodes=tuple(norms)))
    quantized = {n["name"] for n in SUMMARY["nodes"] if n["name"] in norms and n.get("activation_quantized")}
    assert len(quantized) == 8 and feeding | quantized == set(resolved.change.exclude_nodes)
    assert {name for name, _ in resolved.already} == set(norms) - quantized  # float already: nothing to name
    assert {r.producer for r in resolved.redirects} == feeding


def test_a_node_modelopt_quantizes_by_its_own_inputs_is_excluded_by_name_alone():
    matmuls = [n["name"] for n in SUMMARY["nodes"] if n["op_type"] == "MatMul" and n.get("weight_quantized")][:3]
    resolved = resolve_for(SUMMARY, "modelopt", Change(exclude_nodes=tuple(matmuls)))
    assert set(resolved.change.exclude_nodes) == set(matmuls) and not resolved.redirects
