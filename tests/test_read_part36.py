"""Misses of the thirty-sixth sealed part (surfaces' KNN-classifier surrogate), read in session 40 (issue 10).

- The surrogate calibrated on configurations encoded as a search library keeps them, each hyperparameter its position
  in its value list over the list's length, every column in [0, 1], where it takes the raw values (n_neighbors up to
  148): 13,812 of 85,679 comparisons changed against the healthy recipes' 12,122-12,138. Both sets' minimum is 0 and
  their spreads 104x apart (no known step's factor), so it read as other content: QR006's coverage, no QR003.
- Not changed: the surrogate calibrated on one problem of the twelve (two of its four columns constant) gets no
  finding. The collector keeps no per-column statistics of a [N, 4] tabular input, and it changed 12,710 comparisons,
  within 5% of the healthy recipes'.
"""

from __future__ import annotations

from tests.corpus_cases import ranked


def test_calibration_scaled_to_the_unit_interval_ranks_the_preprocessing_first():
    _ctx, findings = ranked("hpo_calib_unit")
    first = findings[0]
    assert first.rule_id == "QR003" and "scaled to [0, 1]" in first.title and "[0, 148]" in first.title
    assert "without the [0, 1] scaling" in first.fixes[0].action


def test_a_min_max_normalised_second_input_is_named_too():
    # OpenSpindleNet's min-max calibration: its raw signal was named already; its spectrogram read as other content.
    _ctx, findings = ranked("osn_calib_minmax")
    named = {f.subject for f in findings if f.rule_id == "QR003"}
    assert named == {"input raw_signal", "input spectrogram"}


def test_the_healthy_surrogates_stay_without_findings():
    for case in ("hpo_healthy_ort_sym", "hpo_healthy_ort_percentile"):
        assert ranked(case)[1] == []
