"""Compare two stages and store the comparison's tables in a bundle being written: the collector's
stages, `import-trt` and the test BundleBuilder all write comparisons through here, so a rule example
reads the same CSV tables a real collect writes.

The metrics are analysis/stream_compare.py's; the bundle layer below only stores what it is given.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from qdqreport.analysis.stream_compare import StageComparer
from qdqreport.bundle.writer import BundleWriter


def write_comparison(writer: BundleWriter, reference: str, candidate: str, purpose: str,
                     ref_samples: Sequence[Mapping[str, np.ndarray]], cand_samples: Sequence[Mapping[str, np.ndarray]],
                     class_outputs: Iterable[str] = (), tensor_rows: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Compare two stages, store the tables, and return the comparison's manifest entry."""
    comparer = StageComparer(frozenset(class_outputs))
    for ref, cand in zip(ref_samples, cand_samples):
        comparer.add(ref, cand)
    return write_compared(writer, reference, candidate, purpose, comparer, tensor_rows)


def write_compared(writer: BundleWriter, reference: str, candidate: str, purpose: str, comparer: StageComparer,
                   tensor_rows: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Store the tables of a comparison fed sample by sample; return its manifest entry."""
    comparison_id = f"{candidate}__vs__{reference}"
    result = comparer.result()
    tables = {"samples": writer.add_table(f"compare/{comparison_id}.samples.csv", "samples", result.sample_rows)}
    if result.slice_rows:
        tables["slices"] = writer.add_table(f"compare/{comparison_id}.slices.csv", "slices", result.slice_rows)
    if tensor_rows:
        tables["tensors"] = writer.add_table(f"compare/{comparison_id}.tensors.csv", "tensors", tensor_rows)
    return {"id": comparison_id, "reference": reference, "candidate": candidate, "purpose": purpose,
            "tables": tables, "sliced": result.sliced, "class_outputs": sorted(comparer.classes() & comparer.reference_names),
            "skipped": result.skipped}
