"""What reading the thirty-second corpus part (atspm-detector's FuncNet pair scorer, scripts/make_corpus_part32.py) and the
thirty-fourth (napari-czann-segment's nucleus segmenter, scripts/make_corpus_part34.py) changed, on their real bundles
and on every read healthy control of the corpus: calibration channels in another unit and raw 16-bit calibration
(QR003), and a flat embedding judged as one vector, not dimension by dimension (QR007 no longer fires on it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_read_part31 import read_healthy_inputs

from qdqreport.analysis.context import Context
from qdqreport.analysis.preprocessing import preprocessing_difference
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules import discover

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _labels() -> dict:
    labels = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    return labels.get("cases", labels)


def _stats(case: str, which: str) -> dict:
    return json.loads((CORPUS / case / "inputs" / f"{which}_stats.json").read_text(encoding="utf-8"))["inputs"]


def _ranked(case: str) -> list:
    return run_rules(Context(Bundle(CORPUS / case), target=_labels()[case].get("target")), discover()).findings


def _undo(expr: str, channel_means: list[float]) -> list[float]:
    """The printed per-channel rewrite applied to each channel's mean (a unit step scales the mean with the values)."""
    x = np.asarray(channel_means, np.float32).reshape(1, -1, 1)
    return [float(v) for v in eval(expr, {"np": np, "x": x}).ravel()]  # noqa: S307 - our own rule's expression


@pytest.mark.parametrize(("case", "channels", "factor", "severity"), [
    # Coverage channels in percent where the package renders fractions: 386 of 651 decisions changed (healthy: 17).
    ("atd_calib_percent", [0, 2, 3, 4, 5, 6, 7, 13, 14], 100.0, "error"),
    # The ON-rate channel left unhalved: 21 of 651 changed, the outputs agree (cosine 0.9997): a warning.
    ("atd_calib_unscaled", [1], 2.0, "warning")])
def test_channels_in_another_unit_are_a_preprocessing_step(case, channels, factor, severity) -> None:
    found = preprocessing_difference(_stats(case, "calib")["x"], _stats(case, "eval")["x"], "x")
    assert found is not None and found.kind == "channel_scale" and found.measure == len(channels)
    assert f"{factor:g}×" in found.label
    # The printed rewrite carries the calibration's channel means onto the healthy recipe's calibration (the same
    # windows rendered by the package): the fix is the healthy set, whose decisions were measured (17 of 651).
    fixed = _undo(found.expr, [ch["mean"] for ch in _stats(case, "calib")["x"]["channels"]])
    healthy = [ch["mean"] for ch in _stats("atd_healthy_ort_sym", "calib")["x"]["channels"]]
    assert fixed == pytest.approx(healthy, rel=1e-4, abs=1e-6)
    first = _ranked(case)[0]
    assert first.rule_id == "QR003" and first.severity == severity and "another unit" in first.title


def test_no_read_healthy_control_has_channels_in_another_unit() -> None:
    for case, name, calib, evaluation in read_healthy_inputs():
        found = preprocessing_difference(calib[name], evaluation[name], name)
        assert found is None or found.kind != "channel_scale", (case, name, found.label)


@pytest.mark.parametrize("case", ["atd_sensitive_int8", "atd_overquant", "atd_random_calib"])
def test_the_flat_embedding_is_not_judged_dimension_by_dimension(case: str) -> None:
    # z, the 128-d GELU embedding, is one flat vector a sample: its near-dead dimensions (RMS 0.0006-0.06, read 0 on
    # the QDQ model's output grid) "collapsed" as slices, QR007 ranked above the quantized head and the verdict said
    # "collapses" for 28 of 651 decisions changed (healthy 17). A dimension across samples is no field.
    ctx = Context(Bundle(CORPUS / case), target=_labels()[case].get("target"))
    summaries = {s.output: s for s in ctx.output_summaries(ctx.comparison("quantization").id)}
    assert summaries["z"].worst_slice is None
    findings = _ranked(case)
    assert findings[0].rule_id == ("QR009" if case == "atd_random_calib" else "QR002")
    assert not any(f.rule_id == "QR007" for f in findings)


def test_raw_16_bit_calibration_is_a_preprocessing_step() -> None:
    # The thirty-fourth part's nucleus tiles calibrated without the package's / 65535: every nucleus lost (379 of 379).
    found = preprocessing_difference(_stats("nuc_calib_raw16", "calib")["input:0"],
                                     _stats("nuc_calib_raw16", "eval")["input:0"], "input:0")
    assert found is not None and found.expr == "x / 65535" and "16-bit" in found.label
    assert _ranked("nuc_calib_raw16")[0].rule_id == "QR003"


def test_other_content_is_the_named_cause_of_a_collapse_above_the_calibration_size() -> None:
    # Part 34's segmenter calibrated on 8 tiles of the package's other picture (noisy fluorescence for phase contrast):
    # every nucleus lost. The verdict read "most likely cause: Calibrated on 8 sample(s)", the symptom ranked first.
    findings = _ranked("nuc_calib_lowsnr")
    assert findings[0].rule_id == "QR006" and findings[0].severity == "error"
    assert "Calibration inputs unlike the evaluation inputs" in findings[0].title
    size = next(f for f in findings if f.title.startswith("Calibrated on"))
    assert size.score < findings[0].score
