"""Where things live inside a bundle, and the manifest entries that point at them.

Shared by the collector and by the test BundleBuilder so both write the same layout.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from qdqreport import __version__
# ARTIFACT_PATHS (and STAGE_KINDS) are imported from here by collect/ until it reads bundle/vocabulary.py itself.
from qdqreport.bundle.vocabulary import ARTIFACT_PATHS, STAGE_KINDS  # noqa: F401
from qdqreport.bundle.writer import BundleWriter

if TYPE_CHECKING:  # the reader's modules (and the artefact checks) are imported where a bundle is read: a collect
    from qdqreport.bundle.reader import Bundle  # that reads none starts without them (issue 12)


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
    from qdqreport.bundle.artifacts import check_array_key

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
