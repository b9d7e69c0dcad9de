"""A new user's MiniMol (tests/data/bundles/minimol_*: a GNN's 512-d molecular fingerprint, healthy and with one
outlier molecule in calibration), judged as the measured task says."""

from __future__ import annotations

import json
from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.analysis.preprocessing import preprocessing_difference
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.report.model import build_report
from qdqreport.rules import discover

BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"


def _report(name: str):
    bundle = Bundle(BUNDLES / name)
    ctx = Context(bundle, target="onnxruntime")
    result = run_rules(ctx, discover())
    return ctx, result, build_report(bundle, result, ctx)


def test_a_flat_fingerprint_is_not_judged_dimension_by_dimension() -> None:
    # Healthy: 1 of 160 predictions moved. Its 5 worst of 512 dimensions (0.04% of the energy) read "slice 276 of
    # axis 1 at cosine 0.95" and the verdict said "degrades": a dimension across samples is no field.
    ctx, _, report = _report("minimol_healthy_nocalib")
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.worst_slice is None and summary.judgement.level == "agree"
    assert report.verdict.text.startswith("Outputs agree at every compared stage")


def test_signed_features_with_an_outlier_are_not_called_raw_pixels() -> None:
    # Laplacian eigenvectors: calibration [-5716, 3554] against [-0.87, 1] (one outlier molecule), 229x the spread.
    stats = {which: json.loads((BUNDLES / "minimol_explicit_h" / "inputs" / f"{which}_stats.json").read_text())
             for which in ("calib", "eval")}
    name = "laplacian_eigvec"
    assert stats["calib"]["inputs"][name]["overall"]["min"] < 0
    found = preprocessing_difference(stats["calib"]["inputs"][name], stats["eval"]["inputs"][name], name)
    assert found is None or "pixels" not in found.label
    _, result, _ = _report("minimol_explicit_h")
    assert not any("pixels" in f.title for f in result.findings)


def test_real_values_that_look_like_noise_are_not_called_random_calibration() -> None:
    # 100 real molecules: their Laplacian eigenvector entries are uncorrelated neighbour to neighbour in both sets and
    # fit a normal law in the calibration; their moments match the evaluation's to 3 decimals. QR009 ranked first on
    # every healthy bundle. Noise really drawn for calibration is still named (the random-calibration variant).
    from qdqreport.analysis.calibration_data import noise_inputs

    stats = [json.loads((BUNDLES / "minimol_healthy" / "inputs" / f"{w}_stats.json").read_text()) for w in ("calib", "eval")]
    assert noise_inputs(*stats) == []
    _, result, _ = _report("minimol_healthy")
    assert not any(f.rule_id == "QR009" for f in result.findings)


def test_ranges_a_thousand_times_too_wide_name_the_calibration_before_the_sensitive_nodes() -> None:
    # One outlier molecule in calibration: 10 of 161 activations use under 0.1% of their calibrated ranges. QR002 ("54
    # sensitive nodes", the healthy model's same LayerNorms) ranked first; its exclusion was measured still broken.
    _, result, report = _report("minimol_explicit_h_nocalib")
    causes = [f for f in result.findings if "root_cause" in f.tags]
    assert causes[0].rule_id == "QR006" and "ranges calibration gave them" in causes[0].title
    qr002 = next(f for f in result.findings if f.rule_id == "QR002")
    assert qr002.severity != "error" and qr002.score < causes[0].score
    assert "most likely cause: 10 of 160 activations" in report.verdict.text


def test_a_calibration_of_collated_graphs_counts_its_graphs_and_its_batch_vector_is_no_preprocessing() -> None:
    # 100 calibration molecules collated into one graph (`--batch-axis NAME=none`), 160 evaluation molecules one a
    # sample: the healthy model read "Calibrated on 1 sample(s)" (its fix appended rows to the batch vector), and the
    # broken one "most likely cause: Calibration input batch: evaluation holds only 0, calibration 0..99".
    from qdqreport.analysis.collation import samples_held, segment_count

    for name in ("minimol_healthy", "minimol_explicit_h"):
        calib = json.loads((BUNDLES / name / "inputs" / "calib_stats.json").read_text())
        assert calib["samples"] == 1 and segment_count(calib["inputs"]["batch"]) == 100
        assert samples_held(calib) == 100
        _, result, report = _report(name)
        assert not [f for f in result.findings if f.rule_id in ("QR003", "QR006") and ("batch" in f.title
                                                                                  or "Calibrated on" in f.title)]
    assert "most likely cause: 10 of 160 activations" in report.verdict.text  # the over-wide ranges, as without calib


def test_an_exclusion_that_takes_far_too_wide_ranges_out_of_int8_confirms_the_calibration() -> None:
    # Collected again after the local graph ran unfused: the what-if's 10 suspects restore the outputs (cosine 0.72 ->
    # 0.998), and 6 of them compute tensors calibrated a thousand times too wide by one outlier molecule. QR201 "Error
    # is born at node_linear_2" led as a confirmed error; the calibration without that molecule measured healthy
    # (RMSE 1.248 against FP32's 1.231), so the over-wide ranges are the cause and the exclusion where they hurt.
    for name in ("minimol_explicit_h", "minimol_explicit_h_nocalib"):
        _, result, report = _report(name)
        causes = [f for f in result.findings if "root_cause" in f.tags]
        first = causes[0]
        assert first.rule_id == "QR006" and "ranges calibration gave them" in first.title and first.severity == "error"
        assert any("Confirmed by measurement" in getattr(e, "text", "") for e in first.evidence)
        born = next(f for f in result.findings if f.rule_id == "QR201")
        assert born.severity == "warning" and born.score < first.score
        assert any("Where, not why" in getattr(e, "text", "") for e in born.evidence)
        assert "most likely cause: 10 of 160 activations" in report.verdict.text
