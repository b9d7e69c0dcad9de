"""The deployment target: the runtime the QDQ model is meant to run on (`--target tensorrt|onnxruntime`).

One place decides it (resolve_target, called by Context): the command-line option, else the
target the bundle recorded when it was collected (manifest settings.target), else tensorrt,
which is also what bundles written before the option existed mean. Rules read ctx.target to
say whether a finding about what only TensorRT rejects or changes matters to this user.
"""

from __future__ import annotations

from typing import Any

from qdqreport.errors import BundleError, InputError

TENSORRT = "tensorrt"
ONNXRUNTIME = "onnxruntime"
TARGETS = (TENSORRT, ONNXRUNTIME)
DEFAULT_TARGET = TENSORRT
TARGET_NAMES = {TENSORRT: "TensorRT", ONNXRUNTIME: "ONNX Runtime"}


def check_target(value: str) -> str:
    """*value* if it names a target; an InputError (exit 2) naming the choices otherwise."""
    if value not in TARGETS:
        raise InputError(f"--target {value!r}: give one of {', '.join(TARGETS)} (the runtime you deploy the QDQ model on)")
    return value


def recorded_target(manifest: dict[str, Any], where: str) -> str | None:
    """The target the collector recorded in the manifest (settings.target), None in older bundles."""
    settings = manifest.get("settings")
    value = settings.get("target") if isinstance(settings, dict) else None
    if value is None:
        return None
    if value not in TARGETS:
        shown = repr(value)[:60]
        raise BundleError(f"{where}: settings.target is {shown}, not one of {', '.join(TARGETS)}; re-collect the "
                          "bundle, or pass --target to override it")
    return value


def resolve_target(option: str | None, manifest: dict[str, Any], where: str) -> str:
    """The command-line option, else the bundle's recorded target, else tensorrt."""
    if option is not None:
        return check_target(option)
    return recorded_target(manifest, where) or DEFAULT_TARGET
