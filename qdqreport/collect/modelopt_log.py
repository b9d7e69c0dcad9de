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
  INFO  Total number of quantized nodes: ... and         -> complete (the run finished; both lines present)
  INFO  Quantized onnx model is saved as ...

A run that finished writes, at its end, the quantized-node summary ("Total number of quantized nodes")
and "Quantized onnx model is saved as ..." (modelopt/onnx/quantization/quantize.py); `complete` records
whether the log holds both. ModelOpt 0.47's --log_file lacks them: configure_logging(level, log_file)
attaches the file handler, but int8.quantize (and fp8/int4) call configure_logging(level) again, which
removes every handler and adds back only the console one (stdout), so the file stops at "No MHA partitions
found" / "Starting INT8 quantization". A log without them (that file, or a run that crashed) gives null
counts and complete=false, but still shows random calibration; collect says so in one line. When a log
holds several runs the last value of each count wins.
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
_SUMMARY = re.compile(r"Total number of quantized nodes: \d+")
_SAVED = re.compile(r"(?:Quantized onnx|high-precision ONNX) model is saved as ")
# What only ModelOpt writes: its log format's tag, or a message it logs at every run.
_MODELOPT_MARK = re.compile(r"\[modelopt\]\[onnx\]|Quantization mode: \w+|Starting quantization process for model: "
                            r"|Total number of (?:quantized |quantizable )?nodes: \d+|Quantized onnx model is saved as ")
CONSOLE_FIX = "`python -m modelopt.onnx.quantization ... 2>&1 | tee quant.log`, then --modelopt-log quant.log"


def parse_modelopt_log(text: str) -> dict[str, Any]:
    """The quant/modelopt_log.json structure for the text of a ModelOpt quantization log."""
    result: dict[str, Any] = {"format": FORMAT, **{key: None for key in _COUNTS}, "quantized_type_counts": None,
                              "random_calibration": False, "calibration_method": None, "already_quantized": False,
                              "warnings": []}
    debug_method = None
    summary = saved = False  # the two lines a finished run ends with
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
        summary = summary or bool(_SUMMARY.search(line))
        saved = saved or bool(_SAVED.search(line))
        _add_warning(result["warnings"], line)
    result["calibration_method"] = result["calibration_method"] or debug_method
    result["complete"] = summary and saved
    return result


def missing_parts(log: dict[str, Any]) -> str | None:
    """What a parsed log lacks of a finished run, in words; None for a complete log (or one written before
    `complete` was recorded)."""
    if log.get("complete") is not False:
        return None
    return "the quantized-node summary and the final \"saved as\" line" if log.get("quantized_nodes") is None \
        else "the final \"Quantized onnx model is saved as\" line"


def partial_note(path: Path | str, log: dict[str, Any]) -> str | None:
    """One line for collect when *log* lacks what a finished ModelOpt run writes."""
    missing = missing_parts(log)
    if missing is None:
        return None
    return (f"warning: {path}: this ModelOpt log lacks {missing}, so its node counts are unknown (ModelOpt 0.47's "
            f"--log_file stops before \"Starting INT8 quantization\", as does a failed run); the bundle records it as "
            f"partial. Save the console instead: {CONSOLE_FIX}")


def read_modelopt_log(path: Path | str) -> dict[str, Any]:
    """Parse a log file; refuse a file that is not a ModelOpt log (a wrong --modelopt-log argument)."""
    return parse_modelopt_log(read_modelopt_text(path))


def read_modelopt_text(path: Path | str) -> str:
    """The text of a ModelOpt log file; InputError (one line naming the file and the fix) for a missing or
    unreadable file, a binary one (NUL bytes, not UTF-8: an .onnx or .npz passed by mistake) and a text
    holding nothing ModelOpt writes."""
    path = Path(path)
    fix = f"pass ModelOpt's console output: {CONSOLE_FIX}"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (--modelopt-log); {fix}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a ModelOpt log (--modelopt-log); {fix}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the ModelOpt log ({exc.strerror}); {fix}") from None
    if b"\0" in data:
        raise InputError(f"{path}: a binary file (NUL bytes), not a ModelOpt log (--modelopt-log); {fix}"
                         + (" (a UTF-16 file: save it as UTF-8)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""))
    try:
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text: universal newlines
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}), not a ModelOpt log (--modelopt-log); {fix}") from None
    if not any(_MODELOPT_MARK.search(line[:MAX_LINE_CHARS]) for line in text.splitlines()):
        raise InputError(f"{path}: holds no line ModelOpt writes (\"- [modelopt][onnx] - INFO - ...\"); {fix}")
    return text


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
