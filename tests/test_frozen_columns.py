"""Calibration held some columns of a table at one value (analysis/coverage.frozen_channels): the thirty-sixth part's
surrogate calibrated on one problem of the twelve it serves (tests/data/surfaces: dataset and cv columns constant) got
no finding, because the collector kept no per-column statistics of an [N, 4] input and the whole input's range was
set by the other columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.engine import run_rules

DATA = Path(__file__).resolve().parent / "data" / "surfaces"
CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _collected(tmp_path: Path, qdq: str, calib: str) -> Path:
    out = tmp_path / qdq
    assert main(["collect", "--fp32", str(DATA / "hpo_fp32.onnx"), "--qdq", str(DATA / f"{qdq}.onnx"), "--inputs",
                 str(DATA / "hpo_eval.npz"), "--calib", str(DATA / f"{calib}.npz"), "-o", str(out), "--quiet"]) == 0
    return out


@pytest.mark.slow
def test_columns_calibrated_at_one_value_are_named_and_the_healthy_recipe_gets_nothing(tmp_path):
    frozen = _collected(tmp_path, "hpo_default", "hpo_calib_default")
    stats = json.loads((frozen / "inputs" / "calib_stats.json").read_text())["inputs"]["input"]
    assert stats["channel_axis"] == 1 and len(stats["channels"]) == 4 and "channel_correlation" not in stats
    first = run_rules(Context(Bundle(frozen))).findings[0]
    assert first.rule_id == "QR006" and "channels 2, 3 of 4" in first.title
    healthy = _collected(tmp_path, "hpo_sym", "hpo_calib")
    assert run_rules(Context(Bundle(healthy))).findings == []


def test_an_image_like_input_s_frozen_channels_are_named_too():
    # The corpus's ATSPM detector calibrated with a gap: two of its 15 feature channels constant in calibration.
    causes = [f for f in run_rules(Context(Bundle(CORPUS / "atd_calib_gap"))).findings if "deployment" not in f.tags]
    assert causes[0].rule_id == "QR006" and "channels 13, 14 of 15" in causes[0].title


def test_the_fix_asks_for_the_missing_slices_not_for_more_cnn_samples():
    causes = [f for f in run_rules(Context(Bundle(CORPUS / "atd_calib_gap"))).findings if f.rule_id == "QR006"]
    first = causes[0].fixes[0].action
    assert "every category, dataset or setting" in first and "channels 13, 14" in first and "CNNs" not in first
