"""The bundle schema: the one contract between the collector and the renderer.

Versioning is MAJOR.MINOR. A minor version only adds optional fields or trailing table
columns, so a reader accepts any minor of a major it knows and ignores what it does not
know. A newer major is refused with a message naming the qdqreport version needed.

Changelog:
  1.0  first version: stages, output comparisons, precision summary, input statistics.
  1.1  optional TensorRT artefacts (imported or built) and per-layer tables; see docs/bundle.md.
  1.2  optional additions of the 2026-11-23 session: `task` (decoded task results of a user decode
       step, collect --postprocess, and their per-pair agreement); the FP16 check (stage
       `ort_qdq_fp32`, table `fp16_ranges`); see docs/bundle.md. Later optional 1.2-compatible
       additions: input `structure`/`channel_correlation`/`spectrum` statistics, artefact `activation_ranges`,
       `layers_summary` `skipped_tensors`/`skipped_reasons`/`skipped` and `status`/`reason`.

docs/bundle.md documents every field; tests/test_bundle.py keeps the two in step.
"""

from __future__ import annotations

import re
from typing import Any

from qdqreport.bundle.paths import name_problem
from qdqreport.bundle.vocabulary import PURPOSES
from qdqreport.errors import BundleError, SchemaVersionError

SCHEMA_NAME = "qdqreport.bundle"
SCHEMA_VERSION = "1.2"
MANIFEST = "manifest.json"

# The first qdqreport release that reads each major version (for the refusal message).
READER_FOR_MAJOR = {1: "0.1"}

STAGE_STATUSES = ("ok", "failed", "skipped")

# Declared columns of every CSV table kind. A minor version may append columns; a reader
# needs the declared ones to be present, in this order, at the start of the header.
TABLE_COLUMNS: dict[str, tuple[tuple[str, type], ...]] = {
    "samples": (
        ("output", str), ("sample", int), ("cosine", float), ("mse", float),
        ("max_abs", float), ("mean_abs", float), ("sqnr_db", float), ("rel_l2", float),
        ("ref_nan", int), ("ref_inf", int), ("cand_nan", int), ("cand_inf", int),
        ("top1_agree", float), ("top5_agree", float),
    ),
    "slices": (
        ("output", str), ("axis", int), ("index", int), ("ref_rms", float),
        ("cosine", float), ("sqnr_db", float), ("max_abs", float), ("rel_l2", float),
    ),
    "tensors": (
        ("tensor", str), ("node", str), ("op_type", str), ("samples", int),
        ("cosine", float), ("sqnr_db", float), ("max_abs", float), ("rel_l2", float),
        ("ref_absmax", float),
    ),
    # Per-layer localisation (collect --per-layer): docs/bundle.md "Per-layer tables".
    "layers": (
        ("tensor", str), ("node", str), ("op_type", str), ("index", int), ("kind", str), ("qdq_dtype", str),
        ("samples", int), ("cosine", float), ("sqnr_db", float), ("mse", float), ("max_abs", float),
        ("local_cosine", float), ("local_sqnr_db", float), ("local_mse", float), ("local_max_abs", float),
        ("ref_min", float), ("ref_max", float), ("ref_absmax", float),
    ),
    "qnodes": (
        ("q_node", str), ("tensor", str), ("kind", str), ("dtype", str), ("values", int), ("clipped_share", float),
        ("range_used", float), ("representable_min", float), ("representable_max", float),
        ("observed_min", float), ("observed_max", float),
    ),
    "whatif": (
        ("trial", int), ("kind", str), ("excluded_count", int), ("excluded", str), ("op_types", str),
        ("cosine", float), ("top1_agree", float), ("sqnr_db", float), ("reached", int), ("seconds", float),
    ),
    # Task-level agreement of decoded results (collect --postprocess, schema 1.2): docs/bundle.md "Task results".
    "task": (
        ("sample", int), ("agreement", float), ("differing", str), ("reference", str), ("candidate", str),
        ("flip_rel_l2", float), ("raw_rel_l2", float),
    ),
    # FP16 check of a QDQ model whose float part is FP16 (schema 1.2): docs/bundle.md "FP16 check".
    "fp16_ranges": (
        ("tensor", str), ("kind", str), ("node", str), ("op_type", str), ("consumers", str), ("samples", int),
        ("values", int), ("fp32_absmax", float), ("overflow", int), ("underflow", int), ("qdq_absmax", float),
    ),
}

# Trailing columns a 1.2-compatible collector adds after a table's declared ones: read and typed when the header has
# them, None (empty text for str) when an older bundle's does not; written after the declared columns.
OPTIONAL_COLUMNS: dict[str, tuple[tuple[str, type], ...]] = {
    # session 35 (2026-11-27): the float activation each sensitive node reads, and the node's own error, recomputed
    # from FP32 inputs (collect/sensitive_local.py)
    "tensors": (("input_tensor", str), ("local_cosine", float), ("local_sqnr_db", float)),
}


def table_columns(kind: str) -> tuple[tuple[str, type], ...]:
    """Every column a table of *kind* may hold, in order: its declared columns, then its optional ones."""
    return TABLE_COLUMNS[kind] + OPTIONAL_COLUMNS.get(kind, ())


_VERSION = re.compile(r"[0-9]{1,6}\.[0-9]{1,6}")  # ASCII digits only, and few: int() of 5,000 digits raises


def parse_version(text: Any, where: str) -> tuple[int, int]:
    """Return (major, minor) of a "MAJOR.MINOR" string or raise BundleError naming *where*."""
    if not isinstance(text, str) or not _VERSION.fullmatch(text):
        raise BundleError(f"{where}: schema_version must look like '1.0', got {_shown(text)}")
    major, minor = text.split(".")
    return int(major), int(minor)


def _shown(value: Any) -> str:
    """*value* for a one-line message: its repr, cut short (a hostile manifest may hold megabytes)."""
    try:
        text = repr(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
    except ValueError:  # an int beyond Python's digit limit
        text = "a number of thousands of digits"
    return text if len(text) <= 60 else text[:60] + "..."


def check_version(manifest: dict[str, Any], where: str) -> tuple[int, int]:
    """Refuse a manifest of another schema or of a major version newer than ours."""
    if not isinstance(manifest, dict):
        raise BundleError(f"{where}: the manifest must be a JSON object; pass the folder or .zip written by "
                          "`qdqreport collect`")
    if manifest.get("schema") != SCHEMA_NAME:
        raise BundleError(f"{where}: not a qdqreport bundle (schema is {_shown(manifest.get('schema'))}, "
                          f"expected {SCHEMA_NAME!r}); pass the folder or .zip written by `qdqreport collect`")
    major, minor = parse_version(manifest.get("schema_version"), where)
    ours = parse_version(SCHEMA_VERSION, "qdqreport")[0]
    if major > ours:
        raise SchemaVersionError(
            f"{where}: bundle schema {major}.{minor} is newer than this qdqreport reads ({SCHEMA_VERSION}); "
            f"upgrade qdqreport to a release that reads schema {major}.x (pip install -U qdqreport)")
    return major, minor


# --- manifest validation ------------------------------------------------------------------
# A small structural spec, checked by hand so the core install needs no jsonschema. Each key
# maps to (type, required). Nested dicts are specs; [spec] is a list of items of that spec.

# Optional 1.2-compatible model fields (collect/models.py): ONNX external data files, hashed, and the
# ONNX checker's complaint about a model ONNX Runtime loads.
_EXTERNAL_FILE = {"path": (str, True), "sha256": (str, True), "bytes": (int, True)}
_FILE_REF = {"path": (str, True), "sha256": (str, True), "bytes": (int, False),
             "external_data": ([_EXTERNAL_FILE], False), "check_warning": (str, False)}
# batch_axis (optional, 1.2-compatible): the axis the samples were split along; null when none (a scalar).
_TENSOR = {"name": (str, True), "shape": (list, True), "dtype": (str, True), "batch_axis": ((int, type(None)), False)}
# function (optional, 1.2-compatible): the data-loader script's function that gave the feeds (kind "script").
_INPUT_SET = {"source": (str, True), "kind": (str, True), "samples": (int, True),
              "tensors": ([_TENSOR], True), "sha256": ((str, type(None)), False), "function": (str, False)}
_STAGE = {
    "id": (str, True), "runtime": (str, True), "precision": (str, True), "status": (str, True),
    "error": ((str, type(None)), False), "seconds": ((float, int, type(None)), False),
    "artifacts": (dict, True), "details": (dict, False),
}
_COMPARISON = {"id": (str, True), "reference": (str, True), "candidate": (str, True),
               "purpose": (str, True), "tables": (dict, True)}
# manifest["task"] (schema 1.2, optional): decoded task results and their per-pair agreement.
_TASK_STAGE = {"stage": (str, True), "status": (str, True), "error": ((str, type(None)), False),
               "samples": (int, True), "fields": (list, True), "results": ((str, type(None)), True)}
_TASK_COMPARISON = {"id": (str, True), "reference": (str, True), "candidate": (str, True), "purpose": (str, True),
                    "table": (str, True), "samples": (int, True), "agreement": ((float, int), True),
                    "disagreeing": (int, True)}
_TASK = {
    "postprocess": ({"source": (str, True), "function": (str, True), "compare": ((str, type(None)), False),
                     "sha256": ((str, type(None)), False), "inputs": (bool, False)}, True),
    "stages": ([_TASK_STAGE], True), "comparisons": ([_TASK_COMPARISON], True),
    "task_results": ({"source": (str, True), "kind": (str, True), "stage": (str, True), "samples": (int, True),
                      "sha256": ((str, type(None)), False), "fields": (list, True), "results": (str, True),
                      "error": ((str, type(None)), False)}, False),  # why no comparison was made
}
TASK_PURPOSES = (*PURPOSES, "postprocess")
MANIFEST_SPEC = {
    "schema": (str, True), "schema_version": (str, True), "created_at": (str, True),
    "collector": (dict, True), "tools": (dict, True), "host": (dict, True),
    "models": ({"fp32": ((dict, type(None)), False), "qdq": ((dict, type(None)), False)}, True),
    "inputs": (dict, True), "stages": ([_STAGE], True), "comparisons": ([_COMPARISON], True),
    "artifacts": (dict, True), "files": (dict, True),
}


def validate_manifest(manifest: Any, where: str = MANIFEST) -> None:
    """Raise BundleError naming the JSON path of the first field that breaks the spec."""
    if not isinstance(manifest, dict):
        raise BundleError(f"{where}: the manifest must be a JSON object")
    _check_spec(manifest, MANIFEST_SPEC, where, "")
    _check_files(manifest["files"], where)
    _check_paths(manifest, where)
    for i, stage in enumerate(manifest["stages"]):
        _check_choice(stage["status"], STAGE_STATUSES, where, f"stages[{i}].status")
    for i, comp in enumerate(manifest["comparisons"]):
        _check_choice(comp["purpose"], PURPOSES, where, f"comparisons[{i}].purpose")
    for name, ref in manifest["models"].items():
        if isinstance(ref, dict):
            _check_spec(ref, _FILE_REF, where, f"models.{name}")
    for name, ref in manifest["inputs"].items():
        if isinstance(ref, dict):
            _check_spec(ref, _INPUT_SET, where, f"inputs.{name}")
    if "task" in manifest:
        _check_value(manifest["task"], _TASK, where, "task")
        for i, stage in enumerate(manifest["task"]["stages"]):
            _check_choice(stage["status"], ("ok", "failed"), where, f"task.stages[{i}].status")
        for i, comp in enumerate(manifest["task"]["comparisons"]):
            _check_choice(comp["purpose"], TASK_PURPOSES, where, f"task.comparisons[{i}].purpose")
            if not 0.0 <= comp["agreement"] <= 1.0:
                raise BundleError(f"{where}: task.comparisons[{i}].agreement must lie within 0..1")


_SHA256 = re.compile(r"[0-9a-f]{64}")
_FILE_ENTRY = {"sha256": (str, True), "bytes": (int, True)}


def _check_files(files: dict[str, Any], where: str) -> None:
    """Every `files` key is a safe relative path (refused by name, before any file is opened)
    with a hex sha256 and a non-negative size: the reader checks each file against both."""
    for name, entry in files.items():
        problem = name_problem(name)
        if problem:
            raise BundleError(f"{where}: files key {name[:80]!r} {problem}; this bundle is damaged or hostile, "
                              "do not use it")
        _check_value(entry, _FILE_ENTRY, where, f"files[{name!r}]")
        if not _SHA256.fullmatch(entry["sha256"]) or entry["bytes"] < 0:
            raise BundleError(f"{where}: files[{name!r}] needs a 64-digit lowercase hex sha256 and bytes >= 0")
    for name in files:  # a zip can list both "a" and "a/b"; no folder can hold them
        parts = name.split("/")
        clash = next(("/".join(parts[:i]) for i in range(1, len(parts)) if "/".join(parts[:i]) in files), None)
        if clash is not None:
            raise BundleError(f"{where}: files lists both {clash!r} and {name!r}, a file and a folder of one name")


def _check_paths(manifest: dict[str, Any], where: str) -> None:
    """Artefact and table references are text naming a bundle file (the file may be absent:
    then the artefact counts as missing)."""
    refs = [(f"artifacts.{k}", v) for k, v in manifest["artifacts"].items()]
    refs += [(f"stages[{i}].artifacts.{k}", v) for i, s in enumerate(manifest["stages"]) for k, v in s["artifacts"].items()]
    refs += [(f"comparisons[{i}].tables.{k}", v) for i, c in enumerate(manifest["comparisons"])
             for k, v in c["tables"].items()]
    for path, value in refs:
        problem = name_problem(value)
        if problem:
            raise BundleError(f"{where}: {path} {problem}; re-run `qdqreport collect`")


def _check_choice(value: str, choices: tuple[str, ...], where: str, path: str) -> None:
    if value not in choices:
        raise BundleError(f"{where}: {path} must be one of {'|'.join(choices)}, got {_shown(value)}")


def _check_spec(obj: dict[str, Any], spec: dict[str, Any], where: str, prefix: str) -> None:
    for key, (kind, required) in spec.items():
        path = f"{prefix}.{key}" if prefix else key
        if key not in obj:
            if required:
                raise BundleError(f"{where}: required field {path} is missing")
            continue
        _check_value(obj[key], kind, where, path)


def _check_value(value: Any, kind: Any, where: str, path: str) -> None:
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            raise BundleError(f"{where}: {path} must be an object")
        _check_spec(value, kind, where, path)
    elif isinstance(kind, list):
        if not isinstance(value, list):
            raise BundleError(f"{where}: {path} must be a list")
        for i, item in enumerate(value):
            _check_value(item, kind[0], where, f"{path}[{i}]")
    elif not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise BundleError(f"{where}: {path} has the wrong type ({type(value).__name__})")
