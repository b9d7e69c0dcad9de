"""Running a bundle's quantizer again with a fix: ONNX Runtime's quantize_static or ModelOpt's ONNX PTQ.

Which quantizer made the model, and the quantize_static options its graph records, are the analysis
layer's judgement (analysis/quantizer.py), shared with the fix commands of the report (fixes.py);
the calibration method is not in the graph: ONNX Runtime's default (MinMax) unless the fix or
--calib-method names one.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import logging
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from qdqreport.analysis.quantizer import (ORT_DEFAULT_OPS, ORT_METHODS, TO_MODELOPT, TO_ORT, Detected, made_by,  # noqa: F401
                                          modelopt_recipe, ort_options)  # (q.ort_options: confirm's callers)
from qdqreport.errors import InputError

QUANTIZERS = ("onnxruntime", "modelopt")
FLOAT_PRECISIONS = ("fp32", "fp16", "bf16", "float", "mixed")


class QuantizerUnavailable(InputError):
    """The quantizer cannot run here; `commands` are what to run where it can."""

    def __init__(self, message: str, commands: Sequence[str]):
        super().__init__(message)
        self.commands = tuple(commands)


def detect(precision: Mapping[str, Any] | None, modelopt_log: Mapping[str, Any] | None, forced: str | None) -> Detected:
    if forced:
        return Detected(forced, "--quantizer")
    detected = made_by(precision, modelopt_log)
    if detected is None:
        producer = ((precision or {}).get("producer") or {}).get("name")
        raise InputError(f"the QDQ model's producer is {producer!r}, not a quantizer confirm can rerun; pass "
                         "--quantizer onnxruntime or --quantizer modelopt")
    return detected


def apply_fix_ort(options: dict[str, Any], nodes: Sequence[str], op_types: Sequence[str],
                  method: str | None, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    fixed = dict(options, extra_options=dict(options["extra_options"]))
    for key, value in (overrides or {}).items():  # a quantize_static fix: types, symmetry, per-channel
        if key in fixed["extra_options"]:
            fixed["extra_options"][key] = value
        else:
            fixed[key] = value
    fixed["nodes_to_exclude"] = list(dict.fromkeys([*options["nodes_to_exclude"], *nodes]))
    fixed["op_types_to_quantize"] = [op for op in options["op_types_to_quantize"] if op not in set(op_types)]
    if method:
        method = TO_ORT.get(method, method)
        if method not in ORT_METHODS:
            raise InputError(f"calibration method {method!r}: quantize_static knows {', '.join(ORT_METHODS)}")
        fixed["calibrate_method"] = method
    if not fixed["op_types_to_quantize"]:
        raise InputError(f"excluding {', '.join(op_types)} leaves no op type to quantize; exclude fewer")
    return fixed


def run_ort(fp32: Path, output: Path, calib: Sequence[Mapping[str, np.ndarray]], options: Mapping[str, Any]) -> None:
    """One real quantize_static run (QDQ format) over the calibration samples."""
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.rows = iter(calib)

        def get_next(self):
            return next(self.rows, None)

    types = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8, "int16": QuantType.QInt16,
             "uint16": QuantType.QUInt16}
    model = _opset13(fp32) if options["per_channel"] else None
    with _quiet_root_logger():  # its "consider pre-processing" advice is logged on every call
        quantize_static(model if model is not None else str(fp32), str(output), Reader(), quant_format=QuantFormat.QDQ,
                        op_types_to_quantize=_op_types(options["op_types_to_quantize"]), per_channel=options["per_channel"],
                        activation_type=types[options["activation_type"]], weight_type=types[options["weight_type"]],
                        nodes_to_exclude=list(options["nodes_to_exclude"]),
                        reduce_range=bool(options.get("reduce_range", False)),
                        calibrate_method=getattr(CalibrationMethod, ORT_METHODS[options["calibrate_method"]]),
                        extra_options=dict(options["extra_options"]))


def _opset13(fp32: Path):
    """The FP32 model converted to opset 13 when older, else None: per-channel DequantizeLinear needs opset 13's axis,
    and quantize_static writes per-tensor weights or a graph ONNX Runtime refuses on an older one (fixes.py's printed
    commands convert the same way; a new user's PP-OCRv5 recognizer is opset 11)."""
    import onnx
    from onnx import version_converter

    model = onnx.load(str(fp32))
    opset = max([o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] or [13])
    return version_converter.convert_version(model, 13) if opset < 13 else None


def _op_types(op_types: Sequence[str]) -> list[str] | None:
    """None (quantize_static's default, every op type) for the whole default list, as the fix commands write it."""
    return None if set(op_types) == ORT_DEFAULT_OPS else list(op_types)


@contextlib.contextmanager
def _quiet_root_logger():
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def ort_call(fp32: str, output: str, calib: str, options: Mapping[str, Any]) -> str:
    """The call confirm made, as a reader would type it (the reader yields one calibration sample per step)."""
    kwargs = ", ".join(f"{k}={v!r}" for k, v in options.items() if k != "quant_format")
    return (f"onnxruntime.quantization.quantize_static({fp32!r}, {output!r}, <reader over {calib}>, "
            f"quant_format=QuantFormat.QDQ, {kwargs})")


def onnxruntime_version() -> str:
    import onnxruntime

    return onnxruntime.__version__


# --- ModelOpt --------------------------------------------------------------------------------
def modelopt_version() -> str | None:
    """ModelOpt's version when `modelopt.onnx.quantization` can be imported here, else None."""
    if importlib.util.find_spec("modelopt") is None:
        return None
    try:
        if importlib.util.find_spec("modelopt.onnx.quantization") is None:
            return None
        return importlib.metadata.version("nvidia-modelopt")
    except (ImportError, importlib.metadata.PackageNotFoundError):
        return None


def modelopt_args(fp32: str, output: str, calib: str | None, log_file: str, recovered: Mapping[str, Any],
                  nodes: Sequence[str], op_types: Sequence[str], method: str | None,
                  high_precision_dtype: str | None = None, fp32_op_types: Sequence[str] = ()) -> list[str]:
    """`python -m modelopt.onnx.quantization …` with the options its log and the graph recorded (modelopt_options: the
    recipe the report's fix commands start from too), plus the fix.

    *nodes* are exact node names; *high_precision_dtype* (fp32/fp16/bf16) overrides the recovered float part;
    *fp32_op_types* are kept out of the FP16 conversion (--op_types_to_exclude_fp16)."""
    nodes = list(dict.fromkeys([*(recovered.get("exclude_nodes") or ()), *nodes]))
    op_types = list(dict.fromkeys([*(recovered.get("exclude_op_types") or ()), *op_types]))
    args = [sys.executable, "-m", "modelopt.onnx.quantization", f"--onnx_path={fp32}",
            f"--quantize_mode={recovered.get('quantize_mode') or 'int8'}"]
    if calib:  # without it ModelOpt calibrates on random data, as the original run did
        args.append(f"--calibration_data_path={calib}")
    chosen = method or recovered.get("calibration_method")
    if chosen:
        args.append(f"--calibration_method={TO_MODELOPT.get(chosen, chosen)}")
    float_dtype = high_precision_dtype or recovered.get("high_precision_dtype")
    if float_dtype:
        args.append(f"--high_precision_dtype={float_dtype}")
    args.append("--calibration_eps=cpu")  # no GPU here: calibrate with ONNX Runtime's CPU provider
    if nodes:  # ModelOpt matches these with re.match, a prefix match: anchor each name (Conv@1 is not Conv@10)
        args += ["--nodes_to_exclude", *(re.escape(name) + "$" for name in nodes)]
    if op_types:
        args += ["--op_types_to_exclude", *op_types]
    if fp32_op_types:
        args += ["--op_types_to_exclude_fp16", *fp32_op_types]
    # The log is the console, captured (run_modelopt; shell prints `2>&1 | tee LOG`): ModelOpt 0.47's --log_file
    # stops before "Starting INT8 quantization", without the counts collect --modelopt-log reads.
    return args + [f"--output_path={output}", *_TEE, log_file]


def modelopt_options(log: Mapping[str, Any] | None, precision: Mapping[str, Any] | None,
                     manifest: Mapping[str, Any] | None = None, log_text: str | None = None) -> dict[str, Any]:
    """What ModelOpt's log, the QDQ graph and a confirm's record say about the original run: the recipe the report's
    fix commands start from (analysis/quantizer.modelopt_recipe), as the manifest's `recovered` record."""
    recipe = modelopt_recipe(precision, log, manifest, log_text)
    return {"quantize_mode": recipe.quantize_mode, "calibration_method": recipe.calibration_method,
            "random_calibration": recipe.random_calibration, "high_precision_dtype": recipe.high_precision_dtype,
            "calibration_eps": list(recipe.calibration_eps), "exclude_nodes": list(recipe.exclude_nodes),
            "exclude_op_types": list(recipe.exclude_op_types)}


_TEE = ("2>&1", "|", "tee")  # modelopt_args' tail: the console (stdout and stderr) saved to the file that follows


def _command_and_log(args: Sequence[str]) -> tuple[list[str], str | None]:
    """modelopt_args' list split into the command and the file its console goes to (None: no such tail)."""
    if len(args) > len(_TEE) and tuple(args[-len(_TEE) - 1:-1]) == _TEE:
        return list(args[:-len(_TEE) - 1]), args[-1]
    return list(args), None


def run_modelopt(args: Sequence[str], log_file: Path) -> None:
    """Run ModelOpt with stderr merged into stdout, as `2>&1 | tee` does, and save that console as *log_file*."""
    command, _ = _command_and_log(args)
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                          check=False)
    Path(log_file).write_text(done.stdout or "", encoding="utf-8")
    if done.returncode != 0:
        tail = " ".join((done.stdout or "").split()[-40:])
        raise InputError(f"ModelOpt failed (exit {done.returncode}; its log: {log_file}): {tail}")


def shell(args: Sequence[str]) -> str:
    command, log = _command_and_log(args)
    text = " ".join(shlex.quote(a) for a in ["python", *command[1:]])
    return f"{text} {' '.join(_TEE)} {shlex.quote(log)}" if log else text
