"""The names users know for the collector's stage and comparison ids, for headings and columns.

Bundles, findings.json and SARIF keep the ids (`ort_qdq`, `ort_qdq__vs__ort_fp32`); the reports a
person reads show these names instead. Imports nothing, so every layer may use it."""

from __future__ import annotations

STAGE_NAMES = {
    "reference": "framework reference",
    "ort_fp32": "ONNX Runtime FP32",
    "ort_qdq": "ONNX Runtime QDQ",
    "ort_qdq_fp32": "ONNX Runtime QDQ (float part FP32)",
    "ort_qdq_unfused": "ONNX Runtime QDQ (unfused, no integer kernels)",
    "ort_qdq_eval_ranges": "ONNX Runtime QDQ (ranges from the evaluation inputs)",
    "trt_fp16": "TensorRT FP16",
    "trt_int8": "TensorRT INT8",
}
COMPARISON_SEPARATOR = "__vs__"  # comparison ids are "<candidate>__vs__<reference>" (bundle/layout.py)


def stage_name(value: object) -> str:
    """"ONNX Runtime QDQ" for `ort_qdq`, "ONNX Runtime QDQ vs ONNX Runtime FP32" for a comparison id;
    anything else (a node, an input, an unknown stage) unchanged."""
    text = "" if value is None else str(value)
    if text in STAGE_NAMES:
        return STAGE_NAMES[text]
    candidate, separator, reference = text.partition(COMPARISON_SEPARATOR)
    if separator and candidate in STAGE_NAMES and reference in STAGE_NAMES:
        return f"{STAGE_NAMES[candidate]} vs {STAGE_NAMES[reference]}"
    return text
