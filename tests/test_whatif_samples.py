"""The what-if's trials on a subset when one trial on every sample would eat the budget (collect/whatif_samples.py):
the planning examples, and a real `collect --per-layer` on the demo's broken classifier whose budget affords
only trials on a subset."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from qdqreport.collect.whatif_samples import (MIN_SAMPLES, TRIAL_OVERHEAD, TRIALS_WANTED, samples_that_fit,
                                              trial_samples, worst_and_spread)

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "qdqreport" / "demo"


def test_every_sample_when_a_trial_fits_a_tenth_of_the_budget_or_its_cost_is_unknown():
    assert samples_that_fit(40, 0.01, 120.0) == 40
    assert samples_that_fit(40, None, 1.0) == 40
    assert trial_samples(40, None, 1.0).narrowed is False
    assert trial_samples(40, 0.01, 120.0).record() == {"samples": 40}


def test_a_heavy_model_gets_the_samples_that_fit_and_never_fewer_than_the_minimum():
    # U2-Net-p as a new user measured it: 40 samples, one trial 76 s (about 1.3 s of inference a sample)
    per_sample = 76.0 / 40 / TRIAL_OVERHEAD
    keep = samples_that_fit(40, per_sample, 120.0)
    assert keep == MIN_SAMPLES  # 6 would fit a tenth of the budget: the minimum, about 15 s a trial, 8 trials
    assert samples_that_fit(40, per_sample, 600.0) == int(600.0 / TRIALS_WANTED / (per_sample * TRIAL_OVERHEAD)) == 31
    assert samples_that_fit(40, 10.0, 120.0) == MIN_SAMPLES
    assert samples_that_fit(5, 10.0, 120.0) == 5  # fewer samples than the minimum: all of them
    assert samples_that_fit(40, 0.01, 1.0, fixed_seconds=0.3) == MIN_SAMPLES  # the session alone exceeds a tenth


def test_half_the_subset_is_the_worst_samples_and_the_rest_spreads_over_the_set():
    chosen = worst_and_spread(40, 8, [17, 3, 17, 99, 25, 30, 31])
    assert len(chosen) == 8 and chosen == sorted(chosen)
    assert {17, 3, 25, 30} <= set(chosen)  # the first four valid, distinct worst samples
    assert 0 in chosen and 39 in chosen  # the spread: first and last
    assert worst_and_spread(10, 10, range(10)) == list(range(10))
    assert len(worst_and_spread(9, 8, [0, 1, 2, 3])) == 8  # overlapping picks topped up


def test_the_record_says_which_samples_and_why():
    chosen = trial_samples(50, 0.02, 1.0, worst=[7, 3])
    record = chosen.record()
    assert record["samples"] == MIN_SAMPLES and record["of_samples"] == 50
    assert {7, 3} <= set(record["sample_indices"]) and record["sample_choice"] == "worst and spread"
    assert record["planned_seconds"] == pytest.approx(50 * 0.02 * TRIAL_OVERHEAD)


@pytest.mark.slow
def test_a_budget_too_small_for_every_sample_still_measures_exclusions_on_the_worst_samples(tmp_path):
    """The demo's x255 classifier on all 50 samples with a 4 s budget: one trial on every sample costs 0.6-0.9 s on
    this machine, more than a tenth of the budget, so every trial runs on the same subset holding the stage
    comparison's worst samples, and the report says on which."""
    from qdqreport.cli import main
    from qdqreport.pipeline import render_report

    out = tmp_path / "bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--per-layer", "--whatif-budget", "4", "-o", str(out), "--quiet"])
    assert code == 0
    summary = json.loads((out / "layers" / "whatif.json").read_text())
    assert summary["of_samples"] == 50 and MIN_SAMPLES <= summary["samples"] < 50
    indices = summary["sample_indices"]
    assert len(indices) == summary["samples"] and indices == sorted(set(indices))
    with (out / "compare" / "ort_qdq__vs__ort_fp32.samples.csv").open() as handle:
        cosines = {int(r["sample"]): float(r["cosine"]) for r in csv.DictReader(handle)}
    worst = sorted(cosines, key=lambda i: (cosines[i], i))[: summary["samples"] // 2]
    assert set(worst) <= set(indices)
    assert summary["trials"] >= 3 and summary["baseline"]["cosine"] is not None
    render_report(out, tmp_path / "report")
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert f"measured on {summary['samples']} of 50 samples, the worst first, then a spread" in markdown
