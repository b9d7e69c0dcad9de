"""analysis/collation.py on every input of the corpus and of the committed bundles: only a graph network's batch
vector reads as a segment index (token ids, masks, token-type and byte inputs never do)."""

from __future__ import annotations

import json
from pathlib import Path

from qdqreport.analysis.collation import batching_differs, one_segment, segment_count

ROOT = Path(__file__).resolve().parent.parent


def _inputs():
    for stats_file in sorted([*ROOT.glob("corpus/*/inputs/*_stats.json"), *ROOT.glob("tests/data/bundles/*/inputs/*_stats.json")]):
        for name, entry in json.loads(stats_file.read_text()).get("inputs", {}).items():
            yield stats_file, name, entry


def test_only_the_batch_vector_of_collated_graphs_is_a_segment_index() -> None:
    found = {(path.parent.parent.name, path.name, name) for path, name, entry in _inputs() if segment_count(entry)}
    integer = [1 for _, _, entry in _inputs() if str(entry.get("dtype", "")).startswith(("int", "uint"))]
    assert len(integer) > 40  # token ids, masks, token types, bytes, lengths: the inputs the check must not take
    assert found == {(bundle, "calib_stats.json", "batch") for bundle in
                     ("minimol_explicit_h", "minimol_explicit_h_nocalib", "minimol_healthy", "minimol_healthy_nocalib")
                     if (ROOT / "tests/data/bundles" / bundle / "inputs/calib_stats.json").is_file()}


def test_a_segment_index_needs_blocks_of_values() -> None:
    # The calibration's batch vector: 100 ids in blocks. Position ids 0..L-1 (one value each) are no batch.
    batch = json.loads((ROOT / "tests/data/bundles/minimol_healthy/inputs/calib_stats.json").read_text())["inputs"]["batch"]
    evaluation = json.loads((ROOT / "tests/data/bundles/minimol_healthy/inputs/eval_stats.json").read_text())["inputs"]["batch"]
    assert segment_count(batch) == 100 and one_segment(evaluation) and batching_differs(batch, evaluation)
    positions = {**batch, "ids": {**batch["ids"], "values": batch["ids"]["distinct"]}}
    assert segment_count(positions) is None
    unsorted = {**batch, "structure": {**batch["structure"], "min": 0.3, "max": 0.3, "mean": 0.3}}
    assert segment_count(unsorted) is None
