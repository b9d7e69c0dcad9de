"""Check `qdqreport export --model-explorer` files with Model Explorer's own Python packages.

CI cannot install them (ai-edge-model-explorer pulls a 128 MB adapter binary); run this where they are:

    pip install ai-edge-model-explorer model-explorer-onnx dacite
    python scripts/check_model_explorer_export.py OVERLAYS_DIR FP32.onnx QDQ.onnx

Each file is parsed into node_data_builder.GraphNodeData (strict: no unknown field) and every node
id must be a node of the graph that model-explorer-onnx's ONNXAdapter.convert() builds.
Exit 0 when all pass, 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(overlays: Path, models: dict[str, Path]) -> int:
    import dacite
    from model_explorer import node_data_builder as ndb
    from model_explorer_onnx.main import ONNXAdapter

    failures = 0
    for role, model in models.items():
        graph = ONNXAdapter().convert(str(model), {})["graphs"][0]
        ids = {node.id for node in graph.nodes}
        for path in sorted(overlays.glob(f"{role}.*.json")):
            for graph_id, data in json.loads(path.read_text()).items():
                dacite.from_dict(ndb.GraphNodeData, data, config=dacite.Config(strict=True))
                missing = sorted(set(data["results"]) - ids)
                ok = graph_id == graph.id and not missing
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {path.name}: graph {graph_id!r} (adapter {graph.id!r}), "
                      f"{len(data['results'])} nodes, {len(missing)} unknown {missing[:3]}")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), {"fp32": Path(sys.argv[2]), "qdq": Path(sys.argv[3])}))
