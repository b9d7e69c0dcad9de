"""QR013 on a real recognizer quantized with ONNX Runtime's defaults (tests/data/bundles/ppocrv5_ort_default): both
per-tensor matrix weights and elementwise constants are crushed, and only the fix that changes both at once was
measured to help (CER 99.7% -> 10.6%, per-channel weights alone 88.5%)."""

from __future__ import annotations

import re
from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules import discover

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "ppocrv5_ort_default"


def _qr013():
    findings = run_rules(Context(Bundle(BUNDLE), target="onnxruntime"), discover()).findings
    assert findings[0].rule_id == "QR013"
    return findings[0]


def test_the_first_fix_turns_per_channel_on_and_keeps_every_constant_reading_op_float() -> None:
    first = _qr013().fixes[0]
    assert "ops that read constants (Add, BatchNormalization, Mul) float, both at once" in first.action
    command = first.command
    assert "per_channel=True" in command and "convert_version(m, 13)" in command  # the model is opset 11
    listed = re.search(r"op_types_to_quantize=\[([^]]*)\]", command).group(1)
    types = {t.strip(" '") for t in listed.split(",")}
    assert {"Conv", "MatMul"} <= types and not types & {"Add", "Mul", "BatchNormalization"}


def test_per_channel_alone_and_the_crushed_adds_alone_stay_offered_after_it() -> None:
    descriptions = [f.action for f in _qr013().fixes]
    assert descriptions[1].startswith("Re-quantize with one scale per output channel")
    assert descriptions[2].startswith("Keep Add.")
