"""Load the task results the user's application produced (`collect --task-results FILE`).

Formats (one result per evaluation sample, in input order):
  .json   a list of objects, one per sample: [{"label": "180", "score": 0.97, "rotate": true}, ...]
  .npz    keys "<sample:06d>/<field>" (the bundle's own layout, e.g. "000003/label"), or one array
          per field with samples along axis 0 ({"label": [...], "score": [...]})

Each result is checked like the output of the decode step (small str/int/float/bool values).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from qdqreport.collect.npfile import read_arrays
from qdqreport.analysis.decode_step import DecodeFailed, TaskResult, normalise_result
from qdqreport.analysis.task import AppResults
from qdqreport.errors import InputError

FIX = "save one result per input sample as a JSON list of objects or an .npz keyed '<sample:06d>/<field>'"


def load_task_results(source: str, stage: str) -> AppResults:
    path = Path(source)
    if not path.is_file():
        raise InputError(f"{path}: no such file (--task-results); {FIX}")
    if path.suffix == ".json":
        raw, kind = _from_json(path), "json"
    elif path.suffix == ".npz":
        raw, kind = _from_npz(path), "npz"
    else:
        raise InputError(f"{path}: unsupported task-results format (--task-results); {FIX}")
    if not raw:
        raise InputError(f"{path}: holds no task results; {FIX}")
    results = []
    for index, item in enumerate(raw):
        try:
            results.append(normalise_result(item, f"sample {index}"))
        except DecodeFailed as exc:
            raise InputError(f"{path}: {exc}") from None
    return AppResults(str(path), kind, stage, results, hashlib.sha256(path.read_bytes()).hexdigest())


def _from_json(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc}); {FIX}") from None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    if not isinstance(data, list):
        raise InputError(f"{path}: holds a JSON {type(data).__name__}, not a list; {FIX}")
    return data


def _from_npz(path: Path) -> list[TaskResult]:
    arrays = read_arrays(path, FIX)
    if not isinstance(arrays, dict):
        raise InputError(f"{path}: holds a single .npy array, not an .npz archive; {FIX}")
    if arrays and all("/" in key for key in arrays):
        return _per_sample_keys(arrays, path)
    if any("/" in key for key in arrays):
        raise InputError(f"{path}: mixes '<sample>/<field>' keys with plain field keys; {FIX}")
    return _stacked_fields(arrays, path)


def _per_sample_keys(arrays: dict[str, np.ndarray], path: Path) -> list[TaskResult]:
    samples: dict[int, TaskResult] = {}
    for key, value in arrays.items():
        sample, name = key.split("/", 1)
        if not sample.isdigit():
            raise InputError(f"{path}: key {key!r} does not start with a sample number; {FIX}")
        samples.setdefault(int(sample), {})[name] = value
    if sorted(samples) != list(range(len(samples))):
        raise InputError(f"{path}: sample numbers are not 0..{len(samples) - 1} without gaps; {FIX}")
    return [samples[i] for i in range(len(samples))]


def _stacked_fields(arrays: dict[str, np.ndarray], path: Path) -> list[TaskResult]:
    counts = {name: (len(value) if value.ndim else -1) for name, value in arrays.items()}
    if len(set(counts.values())) != 1 or -1 in counts.values():
        raise InputError(f"{path}: fields hold different sample counts {counts}; stack one row per sample for each")
    count = next(iter(counts.values()), 0)
    return [{name: value[i] for name, value in arrays.items()} for i in range(count)]
