"""export --model-explorer DIR: per-node overlays for Google's Model Explorer.

One node-data file per graph and metric (Model Explorer shows one value per node and file):
DIR/<fp32|qdq>.<metric>.json. The format is ai-edge-model-explorer's ModelNodeData
(model_explorer/node_data_builder.py): {graph id: {"results": {node id: {"value": number}},
"gradient": [...]}}. Node and graph ids are the ones the ONNX adapter (model-explorer-onnx,
model_explorer_onnx/main.py) gives: the graph's name, and each node's name after onnx_ir's
NameFixPass (an unnamed node becomes "node", "node_1", ...; a repeated name gets "_1", ...);
a graph input is "[value] <name>". The values come from the per-layer tables (collect
--per-layer) and the precision summary; non-finite values (identical tensors: SQNR = inf) are
left out, so those nodes stay uncoloured.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qdqreport.bundle.reader import Bundle
from qdqreport.errors import InputError
from qdqreport.export.publish import staged_folder

# Red (worst) to green (best); Model Explorer maps stop 0 to the smallest value, 1 to the largest.
_LOW_IS_BAD = [{"stop": 0, "bgColor": "#d73027"}, {"stop": 0.5, "bgColor": "#fee08b"}, {"stop": 1, "bgColor": "#1a9850"}]
_HIGH_IS_BAD = [{"stop": 0, "bgColor": "#1a9850"}, {"stop": 0.5, "bgColor": "#fee08b"}, {"stop": 1, "bgColor": "#d73027"}]
BITS = {"int4": 4, "int8": 8, "uint8": 8, "fp8": 8, "int16": 16, "uint16": 16, "fp16": 16, "bf16": 16,
        "fp32": 32, "float": 32, "fp64": 64}


@dataclass(frozen=True)
class Metric:
    stem: str  # file name part
    title: str  # shown by Model Explorer as the node data's name
    low_is_bad: bool


METRICS = {
    "local_sqnr_db": Metric("local_sqnr_db", "local SQNR dB (error this node adds)", True),
    "sqnr_db": Metric("sqnr_db", "accumulated SQNR dB", True),
    "cosine": Metric("cosine", "accumulated cosine", True),
    "clipped_share": Metric("clipped_share", "share of values the Q node clips", False),
    "precision_bits": Metric("precision_bits", "bits the QDQ model computes this node in", True),
}


@dataclass(frozen=True)
class GraphIds:
    """The ids Model Explorer's ONNX adapter gives one model's main graph."""

    graph_id: str
    by_name: dict[str, str]  # original node name -> id (named nodes)
    by_output: dict[str, str]  # tensor -> id of the node that produces it; graph inputs "[value] x"
    q_by_input: dict[str, str]  # tensor -> id of the QuantizeLinear node that quantizes it


def export_model_explorer(bundle: Bundle, destination: Path, models: dict[str, Path | None],
                          force: bool = False) -> list[Path]:
    """Write DIR/<role>.<metric>.json for the FP32 and QDQ graphs; return the files written."""
    tables = _per_node_rows(bundle)
    ids = {role: graph_ids(_load_model(bundle, role, models.get(role))) for role in ("fp32", "qdq")}
    files = {}
    for role, graph in ids.items():
        for stem, values in _metric_values(tables, graph).items():
            if values:
                files[f"{role}.{stem}.json"] = node_data(graph.graph_id, METRICS[stem], values)
    if not files:
        raise InputError(f"{bundle.location}: no table matches a node of the models; were they collected with "
                         "these --fp32/--qdq models? re-run `qdqreport collect --per-layer`")
    with staged_folder(destination, force, "--model-explorer") as staging:
        for name, data in sorted(files.items()):
            (staging / name).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [destination / name for name in sorted(files)]


def node_data(graph_id: str, metric: Metric, values: dict[str, float]) -> dict[str, Any]:
    """One ModelNodeData: the graph id -> GraphNodeData (results, name, gradient)."""
    results = {node: {"value": value} for node, value in sorted(values.items())}
    gradient = _LOW_IS_BAD if metric.low_is_bad else _HIGH_IS_BAD
    return {graph_id: {"name": metric.title, "results": results, "gradient": gradient}}


# --- the adapter's ids -------------------------------------------------------------------------
def graph_ids(model) -> GraphIds:
    """Node ids as model-explorer-onnx 0.4 gives them (onnx_ir NameFixPass, then node.name)."""
    graph = model.graph
    counter: Counter[str] = Counter()
    used: set[str] = set()
    by_name, by_output, q_by_input = {}, {}, {}
    for node in graph.node:
        node_id = _unique(node.name or "node", used, counter)
        _number_subgraphs(node, counter)
        if node.name:
            by_name.setdefault(node.name, node_id)
        by_output.update({out: node_id for out in node.output if out})
        if node.op_type == "QuantizeLinear" and node.input:
            q_by_input.setdefault(node.input[0], node_id)
    by_output.update({value.name: f"[value] {value.name}" for value in graph.input if value.name not in by_output})
    return GraphIds(graph.name, by_name, by_output, q_by_input)


def _unique(preferred: str, used: set[str], counter: Counter[str]) -> str:
    name = preferred
    while name in used:
        counter[preferred] += 1
        name = f"{preferred}_{counter[preferred]}"
    used.add(name)
    return name


def _number_subgraphs(node, counter: Counter[str]) -> None:
    # NameFixPass walks If/Loop bodies right after their node, with their own name scope but the
    # same counter, so unnamed nodes in a body shift the numbers of later unnamed main-graph nodes.
    for attr in node.attribute:
        for body in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            used: set[str] = set()
            for inner in body.node:
                _unique(inner.name or "node", used, counter)
                _number_subgraphs(inner, counter)


# --- values --------------------------------------------------------------------------------------
def _per_node_rows(bundle: Bundle) -> dict[str, list[dict[str, Any]]]:
    comparison = next((c for c in bundle.manifest["comparisons"] if c["purpose"] == "quantization"), None)
    tables = comparison["tables"] if comparison else {}
    rows = {kind: bundle.table(tables[kind], kind) for kind in ("layers", "qnodes") if bundle.has(tables.get(kind))}
    precision = bundle.manifest["artifacts"].get("precision_summary")
    summary = bundle.json(precision) if bundle.has(precision) else {}
    nodes = summary.get("nodes") if isinstance(summary, dict) else None
    rows["precision"] = [n for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else []
    if not rows.get("layers") and not rows["precision"]:
        raise InputError(f"{bundle.location}: no per-layer tables and no precision summary; "
                         "re-run `qdqreport collect --per-layer` to get per-node values")
    return rows


def _metric_values(tables: dict[str, list[dict[str, Any]]], graph: GraphIds) -> dict[str, dict[str, float]]:
    values: dict[str, dict[str, float]] = {stem: {} for stem in METRICS}
    for row in tables.get("layers", []):
        if row.get("kind") != "activation" or row.get("tensor") not in graph.by_output:
            continue
        node = graph.by_output[row["tensor"]]
        for stem in ("local_sqnr_db", "sqnr_db", "cosine"):
            _keep_worst(values[stem], node, row.get(stem), METRICS[stem])
    for row in tables.get("qnodes", []):
        node = graph.by_name.get(row.get("q_node")) or graph.q_by_input.get(row.get("tensor")) \
            or graph.by_output.get(row.get("tensor"))
        _keep_worst(values["clipped_share"], node, row.get("clipped_share"), METRICS["clipped_share"])
    for entry in tables.get("precision", []):
        outputs = entry.get("outputs") if isinstance(entry.get("outputs"), list) else []
        node = next((graph.by_output[o] for o in outputs if o in graph.by_output), None)
        _keep_worst(values["precision_bits"], node, BITS.get(str(entry.get("precision"))), METRICS["precision_bits"])
    return values


def _keep_worst(values: dict[str, float], node: str | None, value: Any, metric: Metric) -> None:
    if node is None or not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return
    old = values.get(node)
    worse = old is None or (value < old if metric.low_is_bad else value > old)
    values[node] = float(value) if worse else old


# --- the models ------------------------------------------------------------------------------------
def _load_model(bundle: Bundle, role: str, given: Path | None):
    path = given or _recorded_path(bundle, role)
    try:
        import onnx
    except ImportError:
        raise InputError("export --model-explorer reads the ONNX models: pip install onnx "
                         "(or 'qdqreport[collect]')") from None
    data = _read(path, role)
    expected = (bundle.manifest["models"].get(role) or {}).get("sha256")
    if expected and hashlib.sha256(data).hexdigest() != expected:
        raise InputError(f"{path}: not the {role} model this bundle was collected with (sha256 differs); "
                         f"pass the right file with --{role}")
    try:
        return onnx.load_from_string(data)
    except Exception as exc:  # protobuf DecodeError and friends
        raise InputError(f"{path}: not an ONNX model ({type(exc).__name__}); pass the {role} model with --{role}") from None


def _recorded_path(bundle: Bundle, role: str) -> Path:
    entry = bundle.manifest["models"].get(role)
    recorded = entry.get("path") if isinstance(entry, dict) else None
    if not isinstance(recorded, str) or not recorded:
        raise InputError(f"{bundle.location}: the bundle names no {role} model; pass it with --{role} MODEL.onnx")
    candidates = [Path(recorded), bundle.location.parent / recorded]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise InputError(f"{recorded}: the {role} model named by the bundle is not here; pass it with --{role} MODEL.onnx")
    return found


def _read(path: Path, role: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {role} model ({exc.strerror}); pass it with --{role} MODEL.onnx") from None

