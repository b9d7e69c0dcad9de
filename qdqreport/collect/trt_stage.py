"""TensorRT stages: detected here; when TensorRT is absent they are recorded as skipped with the reason.

Building and running engines is not implemented in this version: a bundle never carries
TensorRT numbers that a real engine did not produce.
"""

from __future__ import annotations

import importlib

TRT_STAGES = ("trt_fp16", "trt_int8")


def tensorrt_version() -> tuple[str | None, str]:
    """(version, "") when `tensorrt` imports, else (None, why not)."""
    try:
        module = importlib.import_module("tensorrt")
    except Exception as exc:  # the PyPI stub wheels raise at import when their real libraries are missing
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, f"tensorrt is not importable ({type(exc).__name__}: {message})"
    return str(getattr(module, "__version__", "unknown")), ""


def skip_reason(version: str | None, why_absent: str) -> str:
    if version is None:
        return (f"{why_absent}; build the engines on a GPU machine with TensorRT "
                "(trtexec --exportLayerInfo) to add TensorRT evidence")
    return f"tensorrt {version} is installed, but this qdqreport version does not build engines yet"
