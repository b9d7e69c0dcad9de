"""The per-layer pass's bounded sample set (--per-layer-samples) and its numbers against a plain NumPy reference.

On the demo's real classifier (ModelOpt INT8, FP16 float part, ×255 calibration): the statistics read the spread
samples only and say which; the what-if still compares every sample; and every per-layer number equals what a
straightforward float64 NumPy computation of the same tensors gives (so a faster folding cannot change them
unnoticed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import onnx
import pytest

from qdqreport.bundle.artifacts import check_artifact
from qdqreport.collect import layers_stage
from qdqreport.collect.activation_ranges import spread_indices
from qdqreport.collect.layers_stage import parse_per_layer_samples, run_per_layer, sample_record
from qdqreport.collect.layerwise import LayerCollector
from qdqreport.collect.precision import precision_summary
from qdqreport.collect.whatif import WhatIfOptions
from qdqreport.errors import BundleError, InputError
from qdqreport.progress import Progress

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"


@pytest.fixture(scope="module")
def models() -> tuple[onnx.ModelProto, onnx.ModelProto]:
    return onnx.load(str(DEMO / "cls_fp32.onnx")), onnx.load(str(DEMO / "cls_int8_x255.onnx"))


@pytest.fixture(scope="module")
def samples() -> list[dict[str, np.ndarray]]:
    with np.load(DEMO / "eval.npz") as data:
        x = data["x"]
    return [{"x": x[i:i + 1]} for i in range(10)]


def test_the_statistics_read_the_spread_samples_only_and_say_which(models, samples):
    fp32, qdq = models
    layers = run_per_layer(fp32, qdq, samples, None, WhatIfOptions(budget=0), Progress(quiet=True), limit=4)
    picked = spread_indices(len(samples), 4)
    assert picked == [0, 3, 6, 9]
    direct = LayerCollector(fp32, qdq, keep_outputs=False)
    direct.add_all([samples[i] for i in picked])
    expected = direct.result()
    assert layers.layer_rows == expected.layer_rows and layers.qnode_rows == expected.qnode_rows
    assert {k: layers.summary[k] for k in ("samples", "of_samples", "sample_indices", "sample_choice")} == \
        {"samples": 4, "of_samples": 10, "sample_indices": picked, "sample_choice": "spread"}
    check_artifact("layers_summary", json.loads(json.dumps(layers.summary)), "layers/summary.json")


def test_every_sample_is_read_below_the_bound_and_with_all(models, samples):
    fp32, qdq = models
    for limit in (None, 32):
        layers = run_per_layer(fp32, qdq, samples[:3], None, WhatIfOptions(budget=0), Progress(quiet=True), limit=limit)
        assert layers.summary["samples"] == 3 and layers.summary["of_samples"] == 3
        assert "sample_indices" not in layers.summary and "sample_choice" not in layers.summary
    assert sample_record([0, 1, 2], 3) == {"samples": 3, "of_samples": 3}


def test_the_whatif_compares_every_sample_with_the_marked_fp32_session(models, samples, monkeypatch):
    """The samples the statistics skipped get their FP32 graph outputs from the same marked session, asked for
    the graph outputs only: equal to what a full marked run returns."""
    fp32, qdq = models
    seen = {}

    def fake_whatif(q_index, f_index, feeds, reference, rows, precision, classes, options):
        seen.update(feeds=feeds, reference=reference)
        return [], None

    monkeypatch.setattr(layers_stage, "run_whatif", fake_whatif)
    run_per_layer(fp32, qdq, samples, precision_summary(qdq), WhatIfOptions(budget=1), Progress(quiet=True), limit=3)
    assert len(seen["feeds"]) == len(samples) == len(seen["reference"])
    full = LayerCollector(fp32, qdq)
    for feed, reference in zip(samples, seen["reference"]):
        values = dict(zip(full.fp32_names, full.fp32.run(full.fp32_names, feed)))
        assert reference.keys() == set(full.graph_outputs)
        assert all(np.array_equal(reference[name], values[name]) for name in full.graph_outputs)


def test_per_layer_numbers_equal_a_plain_float64_reference(models, samples):
    """Every activation row's accumulated and local metrics and FP32 range, and every activation Q node's clipping
    and observed range, against NumPy in float64 over the same ONNX Runtime tensors (the pass folds float32 dots:
    agreement to float32 rounding, extremes exact)."""
    fp32, qdq = models
    feeds = samples[:3]
    collector = LayerCollector(fp32, qdq, keep_outputs=False)
    collector.add_all(feeds)
    rows = {r["tensor"]: r for r in collector.result().layer_rows if r["kind"] == "activation"}
    sums: dict[str, dict[str, list]] = {}
    quantizer_values: dict[str, list[np.ndarray]] = {}
    for feed in feeds:
        f, q = collector._run_marked(feed)
        local = collector._run_local(feed, f)
        for tensor in collector.alignment.tensors:
            ref = np.asarray(f[tensor.name], np.float64).ravel()
            entry = sums.setdefault(tensor.name, {"ref": [], "qdq": [], "local": []})
            entry["ref"].append(ref)
            entry["qdq"].append(np.asarray(q[tensor.qdq_name], np.float64).ravel())
            entry["local"].append(np.asarray(local[tensor.qdq_name], np.float64).ravel())
        for quantizer in collector.alignment.quantizers:
            quantizer_values.setdefault(quantizer.q_node, []).append(np.asarray(q[quantizer.input], np.float32).ravel())
    checked = 0
    for name, entry in sums.items():
        row, ref = rows[name], np.concatenate(entry["ref"])
        if not ref.size or not np.isfinite(ref).all():
            continue
        assert row["ref_min"] == ref.min() and row["ref_max"] == ref.max()
        for prefix, key in (("", "qdq"), ("local_", "local")):
            cand = np.concatenate(entry[key])
            diff = cand - ref
            ref_sq, cand_sq, diff_sq = ref @ ref, cand @ cand, diff @ diff
            assert row[prefix + "max_abs"] == pytest.approx(np.abs(diff).max(), rel=1e-6, abs=1e-30)
            assert row[prefix + "mse"] == pytest.approx(diff_sq / ref.size, rel=2e-4, abs=1e-12)
            if ref_sq > 0 and cand_sq > 0:
                # the cross term is derived, (Σref² + Σcand² - Σdiff²) / 2: float32 rounding of those sums, scaled
                spread = (ref_sq + cand_sq + diff_sq) / (2 * math.sqrt(ref_sq * cand_sq))
                assert row[prefix + "cosine"] == pytest.approx(ref @ cand / math.sqrt(ref_sq * cand_sq),
                                                               abs=2e-5 * spread + 1e-6)
            if ref_sq > 0 and diff_sq > 0:
                assert row[prefix + "sqnr_db"] == pytest.approx(10 * math.log10(ref_sq / diff_sq), abs=2e-3)
        checked += 1
    assert checked > 200  # 232 aligned activations on this model
    qnodes = {r["q_node"]: r for r in collector.result().qnode_rows if r["kind"] == "activation"}
    for quantizer in collector.alignment.quantizers:
        values = np.concatenate(quantizer_values[quantizer.q_node])
        row = qnodes[quantizer.q_node]
        assert row["values"] == values.size
        assert row["observed_min"] == values.min() and row["observed_max"] == values.max()
        if quantizer.scale.size == 1:  # per-tensor: the limits in closed form
            scale, zero = float(quantizer.scale.ravel()[0]), float(quantizer.zero_point.ravel()[0])
            low = np.float32((quantizer.qmin - zero - 0.5) * scale)
            high = np.float32((quantizer.qmax - zero + 0.5) * scale)
            clipped = np.count_nonzero(values < low) + np.count_nonzero(values > high)
            assert row["clipped_share"] == pytest.approx(clipped / values.size, abs=1.0 / values.size)


def test_parse_per_layer_samples():
    assert parse_per_layer_samples("all") is None and parse_per_layer_samples(" ALL ") is None
    assert parse_per_layer_samples("16") == 16
    for bad in ("0", "-3", "x", "1.5", ""):
        with pytest.raises(InputError):
            parse_per_layer_samples(bad)


def test_the_summary_schema_refuses_malformed_sample_fields():
    good = {"format": 1, "samples": 2, "of_samples": 5, "sample_indices": [0, 4], "sample_choice": "spread"}
    check_artifact("layers_summary", good, "layers/summary.json")
    check_artifact("layers_summary", {"format": 1, "samples": 12}, "layers/summary.json")  # bundles before the option
    with pytest.raises(BundleError):
        check_artifact("layers_summary", {**good, "sample_indices": ["0"]}, "layers/summary.json")
    with pytest.raises(BundleError):
        check_artifact("layers_summary", {**good, "of_samples": -1}, "layers/summary.json")


@pytest.mark.slow
def test_collect_per_layer_samples_end_to_end(tmp_path):
    from qdqreport.cli import main
    from qdqreport.pipeline import render_report

    out = tmp_path / "bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "9", "--per-layer", "--per-layer-samples", "3",
                 "--whatif-budget", "0", "-o", str(out), "--quiet"])
    assert code == 0
    summary = json.loads((out / "layers" / "summary.json").read_text())
    assert summary["samples"] == 3 and summary["of_samples"] == 9 and summary["sample_indices"] == [0, 4, 8]
    rows = (out / "compare" / "ort_qdq__vs__ort_fp32.layers.csv").read_text().splitlines()
    assert rows[1].split(",")[rows[0].split(",").index("samples")] == "3"
    render_report(out, tmp_path / "report")
    assert "3 samples spread over the 9 evaluated" in (tmp_path / "report" / "report.md").read_text()
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--per-layer", "--per-layer-samples", "none",
                 "-o", str(tmp_path / "refused"), "--quiet"]) == 2
