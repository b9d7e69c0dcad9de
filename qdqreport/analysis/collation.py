"""Inputs that number the samples collated into one: a graph network's batch vector.

A graph neural network takes a batch of graphs as one disjoint graph: the nodes' features stacked, and an integer
vector giving each node the position of its graph in the batch (PyTorch Geometric's `batch`: 0, 0, 0, 1, 1, 2, ...).
A calibration file written that way holds K graphs in one set of tensors, read by collect as one sample (a new user's
MiniMol: 100 molecules in one graph, `--batch-axis NAME=none`), while an evaluation of one graph a sample holds 0 in
that vector everywhere. Neither difference is the user's mistake: the calibration holds K samples, and the vector's
range (0..K-1 against 0) is how each set was batched, not a preprocessing step. The reports said "Calibrated on 1
sample(s)" (its fix appended rows to the batch vector) and QR003 "evaluation holds only 0, calibration 0..99" as
the most likely cause of the broken variant.

Read from the collector's input statistics only (bundle inputs/*_stats.json: `ids`, `structure`, `per_sample`).
"""

from __future__ import annotations

from typing import Any

# The values' lag-1 autocorrelation above which they run in blocks (0, 0, 0, 1, 1, 2, ...): MiniMol's 100 collated
# molecules read 0.9989. Token ids, masks and byte inputs of the corpus read far lower or are two-valued.
SORTED_RUNS = 0.99
MIN_SEGMENTS = 3  # a 0/1 vector is a mask or a token-type id (BERT's segments), not a batch
MIN_RUN = 2.0  # values a segment at least, on average: position ids (0, 1, 2, ...) hold one each


def segment_count(stats: dict[str, Any] | None) -> int | None:
    """K when input *stats* describe a segment index: an integer input holding every id of 0..K-1 (the `ids`
    summary lists them all), K >= MIN_SEGMENTS, in blocks (lag-1 autocorrelation >= SORTED_RUNS) of MIN_RUN values
    or more on average; None otherwise."""
    if not stats or not str(stats.get("dtype", "")).startswith(("int", "uint")):
        return None
    ids, overall, structure = (_mapping(stats.get(key)) for key in ("ids", "overall", "structure"))
    distinct, top, values = ids.get("distinct"), ids.get("top"), _number(ids.get("values"))
    if not isinstance(distinct, int) or distinct < MIN_SEGMENTS or not isinstance(top, list) or len(top) < distinct:
        return None
    if overall.get("min") != 0 or overall.get("max") != distinct - 1:
        return None
    runs, samples = _number(structure.get("min")), _number(structure.get("samples")) or 1
    if runs is None or runs < SORTED_RUNS or values is None or values < MIN_RUN * distinct * max(1, samples):
        return None
    return distinct


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def one_segment(stats: dict[str, Any] | None) -> bool:
    """Every value of the input is 0: one graph a sample, the other end of a segment index."""
    overall = (stats or {}).get("overall") or {}
    return str((stats or {}).get("dtype", "")).startswith(("int", "uint")) and overall.get("min") == 0 == overall.get(
        "max")


def batching_differs(calib: dict[str, Any], evaluation: dict[str, Any]) -> bool:
    """One set collates several graphs a sample (a segment index) where the other holds one graph a sample."""
    return bool((segment_count(calib) and one_segment(evaluation))
                or (segment_count(evaluation) and one_segment(calib)))


def collated_samples(stats: dict[str, Any] | None) -> int | None:
    """How many samples (graphs) the set holds when one of its inputs is a segment index: the segments of each
    sample summed (per-sample maxima + 1), or K for a set of one sample; None when no input is one, or when the
    per-sample rows that would count them are not recorded."""
    inputs = _mapping((stats or {}).get("inputs"))
    samples = (stats or {}).get("samples")
    counts = []
    for entry in inputs.values():
        if not isinstance(entry, dict):
            continue
        segments = segment_count(entry)
        if segments is None:
            continue
        rows = entry.get("per_sample") if isinstance(entry.get("per_sample"), list) else []
        if rows and all(isinstance(row, dict) and _number(row.get("max")) is not None for row in rows):
            counts.append(int(sum(row["max"] + 1 for row in rows)))
        elif samples == 1:
            counts.append(segments)
    return max(counts) if counts else None


def samples_held(stats: dict[str, Any] | None) -> int | None:
    """The samples a set of input statistics holds: the graphs collated in it when an input is a segment index,
    else the samples collect read."""
    samples = (stats or {}).get("samples")
    return collated_samples(stats) or (samples if isinstance(samples, int) else None)
