"""Input statistics of samples whose length varies along the axis first read as channels.

tests/data/chython_reaction_distances.npz: the `distances` input [1, atoms, atoms] (int64) that chython 3.4 encodes for
25 reactions of chython's own test files, as chython-rxnmap 2.0's atom-mapping transformer reads them (corpus part 35's
maker, scripts/make_corpus_part35.py). The first reaction has 18 atoms, so axis 1 (64 or fewer) read as channels; the
second's 20 stopped collect with "operands could not be broadcast together with shapes (20,) (18,)"."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qdqreport.collect.stats import input_stats

DATA = Path(__file__).resolve().parent / "data" / "chython_reaction_distances.npz"


def test_a_length_that_varies_is_no_channel_axis():
    with np.load(DATA) as data:
        samples = [{"distances": data[str(i)]} for i in range(len(data.files))]
    assert samples[0]["distances"].shape == (1, 18, 18) and samples[1]["distances"].shape == (1, 20, 20)
    stats = input_stats(samples, "calib.npz", per_sample=True)
    entry = stats["inputs"]["distances"]
    assert entry["channel_axis"] is None and entry["channels"] == [] and entry["shapes_differ"] is True
    values = np.concatenate([s["distances"].ravel() for s in samples]).astype(np.float64)
    assert abs(entry["overall"]["mean"] - values.mean()) < 1e-9
    assert entry["overall"]["min"] == values.min() and entry["overall"]["max"] == values.max()
    assert len(entry["per_sample"]) == len(samples)
