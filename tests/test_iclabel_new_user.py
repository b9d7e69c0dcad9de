"""A new user's EEG independent-component classifier (mne-icalabel 0.10.0's ICLabelNet.onnx: three small CNN branches
over a component's scalp map, power spectrum and autocorrelation, 7 classes), samples of 4 rows (the graph averages
them), quantized with quantize_static in a TensorRT style (symmetric INT8, per-channel) on 154 components of EEGLAB's
sample recordings; evaluated on 185 others. tests/data/bundles/iclabel_trt_style is its bundle, stored outputs left
out. Measured by the user on an AVX2 CPU without VNNI: 14 of 185 labels changed fused, 7 unfused."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules import discover

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "iclabel_trt_style"


def test_a_first_step_that_would_rebuild_the_same_model_prints_no_command() -> None:
    """QR001's first step named /ReduceMean, whose INT8 input no node quantize_static can exclude by name frees: the
    printed command was the recipe unchanged, and run as printed it re-made the same model (14 -> 14 labels). Now it
    says so and prints none."""
    findings = run_rules(Context(Bundle(BUNDLE)), discover()).findings
    divergence = next(f for f in findings if f.rule_id == "QR001")
    (fix,) = divergence.fixes
    assert fix.command == ""
    assert "no command, for none would differ from the recipe that made the model" in fix.action
    assert "/ReduceMean (ReduceMean)" in fix.action and "keeps them float" not in fix.action
