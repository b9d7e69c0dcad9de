"""quant/modelopt_log.json: the facts a ModelOpt ONNX quantization log states about a run.

Learned from nvidia-modelopt 0.47 (`python -m modelopt.onnx.quantization ... --log_level DEBUG`);
tests/data/modelopt/ holds real logs. The lines relied on (message part, after
"<time> - [modelopt][onnx] - <LEVEL> - "):

  INFO  Total number of nodes: 912                        -> total_nodes (of the quantized graph)
  INFO  Total number of quantized nodes: 129              -> quantized_nodes (nodes with a DQ input)
  INFO  Total number of quantizable nodes: 139            -> quantizable_nodes
  INFO  Found 1 non-quantizable partitions                -> non_quantizable_partitions
  INFO  Final number of nodes to quantize: 129            -> nodes_to_quantize
  DEBUG Quantized type counts: {'Conv': 49, ...}          -> quantized_type_counts (DEBUG level only)
  INFO  Initializing RandomDataProvider                   -> random_calibration (no calibration data given:
  INFO  Generating random inputs for model                   ModelOpt calibrated on random inputs)
  INFO  Starting INT8 quantization with method: entropy   -> calibration_method (also FP8/INT4)
  DEBUG Calibration method: CalibrationMethod.Entropy     -> calibration_method when the line above is missing
  INFO  Model already has QDQ nodes, skipping quantization -> already_quantized
  WARNING / ERROR lines, and Python "WARNING:<logger>:" lines of the ORT quantizer -> warnings

ModelOpt 0.47 stops writing --log_file at "Starting INT8 quantization" (int8.quantize reconfigures
the logger without the file handler), so the summary lines are only on the console; a --log_file
log gives null counts but still shows random calibration. When a log holds several runs the last
value of each count wins.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from qdqreport.errors import InputError

FORMAT = 1
MAX_WARNINGS = 50
MAX_WARNING_CHARS = 400

_COUNTS = {
    "total_nodes": re.compile(r"Total number of nodes: (\d+)"),
    "quantized_nodes": re.compile(r"Total number of quantized nodes: (\d+)"),
    "quantizable_nodes": re.compile(r"Total number of quantizable nodes: (\d+)"),
    "non_quantizable_partitions": re.compile(r"Found (\d+) non-quantizable partitions"),
    "nodes_to_quantize": re.compile(r"Final number of nodes to quantize: (\d+)"),
}
MAX_LINE_CHARS = 20_000  # longest log line parsed (the rest of a longer line is ignored)
_TYPE_COUNTS = re.compile(r"Quantized type counts: (\{.*\})")
_RANDOM = re.compile(r"Initializing RandomDataProvider|Generating random inputs for model")
_METHOD = re.compile(r"Starting \w+ quantization with method: ([\w.-]+)")
_METHOD_DEBUG = re.compile(r"Calibration method: (?:CalibrationMethod\.)?([\w-]+)")
_ALREADY = re.compile(r"already has QDQ nodes", re.IGNORECASE)
_WARNING = re.compile(r"(?:- (?:WARNING|ERROR) - |^(?:WARNING|ERROR):[\w.]*:)\s*(.*)")
_MODELOPT_MARK = re.compile(r"\[modelopt\]|modelopt", re.IGNORECASE)


def parse_modelopt_log(text: str) -> dict[str, Any]:
    """The quant/modelopt_log.json structure for the text of a ModelOpt quantization log."""
    result: dict[str, Any] = {"format": FORMAT, **{key: None for key in _COUNTS}, "quantized_type_counts": None,
                              "random_calibration": False, "calibration_method": None, "already_quantized": False,
                              "warnings": []}
    debug_method = None
    for full_line in text.splitlines():
        # ModelOpt's own lines are short; a hostile or corrupt line must not cost more than linear time.
        line = full_line[:MAX_LINE_CHARS]
        for key, pattern in _COUNTS.items():
            match = pattern.search(line)
            if match:
                result[key] = int(match.group(1))
        result["quantized_type_counts"] = _type_counts(line) or result["quantized_type_counts"]
        result["random_calibration"] = result["random_calibration"] or bool(_RANDOM.search(line))
        result["already_quantized"] = result["already_quantized"] or bool(_ALREADY.search(line))
        method = _METHOD.search(line)
        result["calibration_method"] = method.group(1).lower() if method else result["calibration_method"]
        debug = _METHOD_DEBUG.search(line)
        debug_method = debug.group(1).lower() if debug else debug_method
        _add_warning(result["warnings"], line)
    result["calibration_method"] = result["calibration_method"] or debug_method
    return result


def read_modelopt_log(path: Path | str) -> dict[str, Any]:
    """Parse a log file; refuse a file that is not a ModelOpt log (a wrong --modelopt-log argument)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the ModelOpt log ({exc.strerror}); pass the file given to --log_file "
                         "or the saved console output of `python -m modelopt.onnx.quantization`") from None
    if not _MODELOPT_MARK.search(text):
        raise InputError(f"{path}: no ModelOpt log lines found; pass the console output of "
                         "`python -m modelopt.onnx.quantization ... --log_level DEBUG`")
    return parse_modelopt_log(text)


def _type_counts(line: str) -> dict[str, int] | None:
    match = _TYPE_COUNTS.search(line)
    if not match:
        return None
    try:
        counts = ast.literal_eval(match.group(1))  # a printed dict literal; literal_eval runs no code
    except (ValueError, SyntaxError):
        return None
    if not isinstance(counts, dict):
        return None
    return {str(op): int(n) for op, n in counts.items() if isinstance(n, int)}


def _add_warning(warnings: list[str], line: str) -> None:
    match = _WARNING.search(line)
    if not match or len(warnings) >= MAX_WARNINGS:
        return
    message = match.group(1).strip()[:MAX_WARNING_CHARS]
    if message and message not in warnings:
        warnings.append(message)
