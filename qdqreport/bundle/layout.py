"""Where things live inside a bundle, and the manifest entries that point at them.

Shared by the collector and by the test BundleBuilder so both write the same layout.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from typing import Any, Mapping, Sequence

import numpy as np

from qdqreport import __version__
from qdqreport.bundle.artifacts import check_array_key
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.writer import BundleWriter

# What each stage is: (runtime, precision). Unknown stage ids are allowed by the schema.
STAGE_KINDS = {
    "reference": ("framework", "fp32"),
    "ort_fp32": ("onnxruntime", "fp32"),
    "ort_qdq": ("onnxruntime", "qdq"),
    "trt_fp16": ("tensorrt", "fp16"),
    "trt_int8": ("tensorrt", "int8"),
    "trt_int8_noobey": ("tensorrt", "int8"),  # TensorRT 10: trt_int8's build without OBEY_PRECISION_CONSTRAINTS
    "ort_qdq_fp32": ("onnxruntime", "qdq-fp32-float"),  # control: ort_qdq's model with its FP16 float part in FP32
}

# Which stage pairs are compared, and what a divergence between them means.
COMPARISON_PLAN = (
    ("reference", "ort_fp32", "export"),
    ("ort_fp32", "ort_qdq", "quantization"),
    ("ort_fp32", "trt_fp16", "fp16"),
    ("ort_qdq", "trt_int8", "deployment"),
)

ARTIFACT_PATHS = {
    "precision_summary": "quant/precision_summary.json",
    "modelopt_log": "quant/modelopt_log.json",
    "eval_stats": "inputs/eval_stats.json",
    "calib_stats": "inputs/calib_stats.json",
    "range_use": "inputs/range_use.json",
    "layers_summary": "layers/summary.json",  # per-layer pass (collect --per-layer)
    "whatif_summary": "layers/whatif.json",  # what-if search (collect --per-layer, --whatif-budget > 0)
    "fp16_check": "quant/fp16_check.json",  # FP16 check (QDQ float part in FP16): collect/fp16_check.py
    "fp16_ranges": "quant/fp16_ranges.csv",
}


def output_key(sample: int, name: str) -> str:
    """Key of one output of one sample inside stages/<id>/outputs.npz."""
    return f"{sample:06d}/{name}"


def split_key(key: str) -> tuple[int, str]:
    sample, name = key.split("/", 1)
    return int(sample), name


def write_stage(writer: BundleWriter, stage_id: str, status: str, outputs: Sequence[Mapping[str, np.ndarray]] | None = None,
                error: str | None = None, log: str = "", seconds: float | None = None,
                details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Store a stage's outputs and log; return its manifest entry."""
    runtime, precision = STAGE_KINDS.get(stage_id, ("unknown", "unknown"))
    artifacts: dict[str, str] = {}
    if outputs:
        arrays = {output_key(i, name): value for i, sample in enumerate(outputs) for name, value in sample.items()}
        artifacts["outputs"] = writer.add_npz(f"stages/{stage_id}/outputs.npz", arrays)
    if log:
        artifacts["log"] = writer.add_text(f"stages/{stage_id}/log.txt", log)
    return {"id": stage_id, "runtime": runtime, "precision": precision, "status": status, "error": error,
            "seconds": None if seconds is None else round(seconds, 3), "artifacts": artifacts,
            "details": dict(details or {})}


def load_stage_outputs(bundle: Bundle, stage_id: str) -> list[dict[str, np.ndarray]]:
    """A stage's outputs as one {name: array} dict per sample, in sample order."""
    path = bundle.artifact(stage_id, "outputs")
    if not bundle.has(path):
        return []
    samples: dict[int, dict[str, np.ndarray]] = {}
    where = bundle._where(path)
    for key, value in bundle.npz(path).items():
        index, name = check_array_key(key, where)  # a stranger's bundle: any key, refused in one line
        samples.setdefault(index, {})[name] = value
    return [samples[i] for i in sorted(samples)]


def base_manifest(argv: Sequence[str] | None = None, tools: Mapping[str, Any] | None = None,
                  created_at: str | None = None) -> dict[str, Any]:
    """The manifest fields every bundle carries before stages and comparisons are added."""
    return {
        "created_at": created_at or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "collector": {"name": "qdqreport", "version": __version__, "argv": list(argv or [])},
        "tools": {"python": platform.python_version(), "numpy": np.__version__, **dict(tools or {})},
        "host": {"platform": platform.platform(), "machine": platform.machine(),
                 "python_implementation": sys.implementation.name},
        "models": {"fp32": None, "qdq": None},
        "inputs": {},
        "stages": [],
        "comparisons": [],
        "artifacts": {},
    }
