"""How a TensorRT engine was built: build settings JSON and build-log lines (stdlib only).

Build settings come in two forms: TREx's `<engine>.build.metadata.json` ({"model_options",
"build_options"} parsed from trtexec's "=== Build Options ===" block) and the collector's own
build_settings.json ({"producer": "qdqreport", "builder_flags", "typing", ...}).

Build-log lines recognised (trtexec and TensorRT logger output, TensorRT 8.x-10.x wording):
- "Calibrator won't be used in explicit precision mode": a calibrator was given with a Q/DQ model;
- "... requested layer computation precision and output precision types are ignored, using the
  fastest implementation" (after "No implementation of layer X obeys the requested constraints");
- ONNX parser failures: "While parsing node number N [Op -> ...]", "No importer registered for op: X",
  "In node N with name: A and operator: X (...): CODE: ..." (TRT 10), "In node N (importX): CODE: ...",
  "getPluginCreator could not find plugin: X", "Failed to parse onnx file";
- "&&&& RUNNING|PASSED|FAILED TensorRT.trtexec [TensorRT v100300] # trtexec ...": version and command.

A build log may come from a stranger (import-trt, a bundle), so parsing is linear in its size:
only the first MAX_LINE_CHARS characters of a line are examined, and the two patterns with a
lazy group are tried once, at the first occurrence of their fixed prefix, not at every position
(retrying them everywhere made one 690 KB line take minutes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_CALIBRATOR_IGNORED = re.compile(r"Calibrator won't be used in explicit precision mode", re.I)
_PRECISION_IGNORED = re.compile(r"requested layer computation precision and output precision types are ignored", re.I)
_NO_IMPL_LAYER = re.compile(r"No implementation of layer (.+?) obeys the requested constraints")
_PARSING_NODE = re.compile(r"While parsing node number (\d+) \[([^\s\]]+)")
_NO_IMPORTER = re.compile(r"No importer registered for op: ([\w.]+)")
_IN_NODE_TRT10 = re.compile(r"In node (-?\d+) with name: (.*?) and operator: ([\w.]+) \((\w+)\): (\w+): (.*)")
_IN_NODE_TRT8 = re.compile(r"In node (-?\d+) \((\w+)\): (\w+): (.*)")
_NO_PLUGIN = re.compile(r"could not find plugin:? ([\w.]+)")
_PARSE_FAILED = re.compile(r"Failed to parse onnx file|Parsing model failed|ERROR: Failed to parse the ONNX file", re.I)
_TRTEXEC_BANNER = re.compile(r"&&&& (RUNNING|PASSED|FAILED) TensorRT\.trtexec \[TensorRT v(\d+)\](?: # (.*))?")
_LOGGER_VERSION = re.compile(r"TensorRT version: (\d+\.\d+(?:\.\d+)*)")
_LOOKS_LIKE_LOG = re.compile(r"\[TRT\]|\[[IWEV]\] |TensorRT|trtexec|&&&&")
MAX_LINE_CHARS = 20_000  # real TensorRT lines are under 2,000 characters; longer ones are cut for matching
MAX_LINES_KEPT = 200  # warning lines kept per kind; a log can repeat one warning for every layer


@dataclass(frozen=True)
class BuildLog:
    tensorrt_version: str | None
    command: str | None  # the trtexec command line, as trtexec echoes it
    outcome: str | None  # PASSED / FAILED / RUNNING from the trtexec banner
    calibrator_ignored: tuple[str, ...] = ()
    precision_ignored: tuple[str, ...] = ()  # layer names whose requested precision was ignored
    unsupported_ops: tuple[str, ...] = ()
    parser_errors: tuple[str, ...] = ()
    parse_failed: bool = False
    precision_line: str | None = None  # "Precision: FP32+FP16+INT8" from the build options block

    @property
    def obey_requested(self) -> bool | None:
        """Whether the trtexec command asked TensorRT to obey precision constraints (None: no command seen)."""
        if self.command is None:
            return None
        return bool(re.search(r"--precisionConstraints=obey|--strictTypes", self.command))

    @property
    def strongly_typed(self) -> bool | None:
        return None if self.command is None else "--stronglyTyped" in self.command


def looks_like_build_log(text: str) -> bool:
    return bool(_LOOKS_LIKE_LOG.search(text))


def major_version(version: Any) -> int | None:
    """TensorRT's major version from a version as recorded anywhere ("10.3.0", "8.6.1.6", 10), else None.

    The one parser of it: the collector's build plans, the engine evidence, the fixes (trtexec syntax
    of TensorRT 10 or 11) and the rules all read the major version through here."""
    head = str(version or "").split(".", 1)[0]
    return int(head) if head.isdigit() else None


def trtexec_version(code: str) -> str:
    """"100300" -> "10.3.0"; "8601" -> "8.6.1" (trtexec prints major, 2-digit minor, 2-digit patch for 10+)."""
    if len(code) >= 6:
        return f"{int(code[:-4])}.{int(code[-4:-2])}.{int(code[-2:])}"
    return f"{int(code[:-3])}.{int(code[-3])}.{int(code[-2:])}" if len(code) >= 4 else code


def parse_build_log(text: str) -> BuildLog:
    """The TensorRT evidence in a trtexec / TensorRT logger build log."""
    version = command = outcome = precision_line = None
    calibrator: list[str] = []
    ignored: list[str] = []
    ops: list[str] = []
    errors: list[str] = []
    failed = False
    for whole in text.splitlines():
        line = whole[:MAX_LINE_CHARS]
        banner = _TRTEXEC_BANNER.search(line)
        if banner:
            outcome, version = banner.group(1), trtexec_version(banner.group(2))
            command = banner.group(3) or command
        elif _LOGGER_VERSION.search(line) and version is None:
            version = _LOGGER_VERSION.search(line).group(1)
        if _CALIBRATOR_IGNORED.search(line):
            calibrator.append(line.strip())
        if _PRECISION_IGNORED.search(line):
            layer = _at_first(_NO_IMPL_LAYER, "No implementation of layer ", line)
            ignored.append(layer.group(1) if layer else line.strip())
        found_op, error = _parser_problem(line)
        ops += [found_op] if found_op else []
        errors += [error] if error else []
        failed = failed or bool(_PARSE_FAILED.search(line))
        if precision_line is None and re.search(r"\]\s*Precision: ", line):
            precision_line = line.split("Precision: ", 1)[1].strip()
    return BuildLog(version, command, outcome, tuple(calibrator[:MAX_LINES_KEPT]),
                    tuple(dict.fromkeys(ignored))[:MAX_LINES_KEPT], tuple(dict.fromkeys(ops)),
                    tuple(dict.fromkeys(errors))[:MAX_LINES_KEPT], failed or bool(errors), precision_line)


def _parser_problem(line: str) -> tuple[str | None, str | None]:
    """(unsupported operator, parser error text) found on one log line."""
    trt10 = _at_first(_IN_NODE_TRT10, "In node ", line)
    if trt10:
        op = trt10.group(3) if trt10.group(5) in ("UNSUPPORTED_NODE", "INVALID_NODE") else None
        return op, trt10.group(0).strip()
    trt8 = _IN_NODE_TRT8.search(line)
    if trt8:
        return None, trt8.group(0).strip()
    for pattern in (_NO_IMPORTER, _NO_PLUGIN):
        match = pattern.search(line)
        if match:
            return match.group(1), line.strip()
    node = _PARSING_NODE.search(line)
    return (node.group(2), None) if node else (None, None)


def _at_first(pattern: re.Pattern[str], prefix: str, line: str) -> re.Match[str] | None:
    """*pattern* (which starts with *prefix*) matched only where *prefix* first occurs: one
    linear attempt instead of one per position."""
    start = line.find(prefix)
    return pattern.match(line, start) if start >= 0 else None


@dataclass(frozen=True)
class BuildSettings:
    """The build configuration, normalised from either settings form; None where the source is silent."""

    source: str  # "trex-metadata" or "qdqreport"
    precision: str | None
    int8: bool | None
    fp16: bool | None
    obey_precision_constraints: bool | None
    strongly_typed: bool | None
    calibrator: str | None
    tensorrt_version: str | None
    raw_keys: tuple[str, ...] = field(default_factory=tuple)


def parse_build_settings(data: Any) -> BuildSettings:
    """BuildSettings from a decoded JSON document; ValueError says what is wrong and how to fix it."""
    if not isinstance(data, dict):
        raise ValueError("is not a JSON object; pass TREx's <engine>.build.metadata.json or a qdqreport build_settings.json")
    if "build_options" in data or "model_options" in data:
        return _from_trex(data)
    if "builder_flags" in data or data.get("producer") == "qdqreport":
        return _from_qdqreport(data)
    raise ValueError("has neither \"build_options\" (TREx build.metadata.json, from the trtexec build log) nor "
                     "\"builder_flags\" (qdqreport build_settings.json); pass one of those")


def _from_trex(data: dict[str, Any]) -> BuildSettings:
    options = data.get("build_options")
    if not isinstance(options, dict):
        raise ValueError("has \"build_options\" that is not an object; regenerate it with TREx's process_engine.py")
    precision = str(options.get("Precision", "")) or None
    upper = (precision or "").upper()
    obey = _flag(options, "constraint", "obey") or _flag(options, "strict", "enabled")
    strongly = _flag(options, "strongly", "enabled")
    calibration = next((str(v) for k, v in options.items() if k.lower().startswith("calib") and str(v).strip()), None)
    return BuildSettings("trex-metadata", precision, "INT8" in upper if precision else None,
                         "FP16" in upper if precision else None, obey, strongly, calibration, None, tuple(sorted(options)))


def _flag(options: dict[str, Any], key_part: str, true_word: str) -> bool | None:
    for key, value in options.items():
        if key_part in key.lower():
            return true_word in str(value).lower()
    return None


def _from_qdqreport(data: dict[str, Any]) -> BuildSettings:
    flags = data.get("builder_flags") or []
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise ValueError("has \"builder_flags\" that is not a list of flag names; pass the build_settings.json "
                         "qdqreport wrote, unedited")
    for key in ("precision", "calibrator", "tensorrt_version", "typing"):
        if not isinstance(data.get(key), (str, type(None))):
            raise ValueError(f"has \"{key}\" that is not text; pass the build_settings.json qdqreport wrote, unedited")
    flags = [f.upper() for f in flags]
    strongly = data.get("typing") == "strong"
    return BuildSettings("qdqreport", data.get("precision"), "INT8" in flags if not strongly else None,
                         "FP16" in flags if not strongly else None,
                         "OBEY_PRECISION_CONSTRAINTS" in flags if not strongly else None, strongly,
                         data.get("calibrator"), data.get("tensorrt_version"), tuple(sorted(data)))
