"""The fix to confirm: which nodes and op types leave INT8, which calibration file and method.

A finding's fixes are ModelOpt command lines or quantize_static calls (qdqreport/fixes.py's
requantize_command: the tool that made the model); their node and op-type exclusions, calibration
file and method (and quantize_static's types and symmetry) are read back here. Nothing in a fix is executed: a fix that rewrites the
calibration data first (a `python -c` line) needs the rewritten file passed with --calib.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Iterable, Mapping, Sequence

from qdqreport.errors import InputError
from qdqreport.findings import Finding

CALIB_METHODS = ("minmax", "max", "entropy", "percentile", "distribution")  # max: ModelOpt's name of minmax
_LIST_FLAGS = ("--nodes_to_exclude", "--op_types_to_exclude", "--op_types_to_exclude_fp16")


@dataclass(frozen=True)
class FixSpec:
    source: str  # what the fix came from: "finding QR203 (fingerprint …)", "--exclude/--calib"
    node_patterns: tuple[str, ...] = ()  # ModelOpt --nodes_to_exclude patterns (re.match) or exact names
    op_types: tuple[str, ...] = ()
    calibration: str | None = None  # the corrected calibration file to quantize with
    calibration_method: str | None = None
    wants_calibration: str | None = None  # the file a fix's command names that the user must supply
    action: str = ""
    ort_options: tuple[tuple[str, object], ...] = ()  # quantize_static arguments a fix sets (QR004's QInt8)
    high_precision_dtype: str | None = None  # ModelOpt's float part a fix names (QR011's fp32)
    fp32_op_types: tuple[str, ...] = ()  # ModelOpt --op_types_to_exclude_fp16 a fix names

    def describe(self) -> dict[str, object]:
        return {"source": self.source, "action": self.action, "nodes_to_exclude": list(self.node_patterns),
                "op_types_to_exclude": list(self.op_types), "calibration": self.calibration,
                "calibration_method": self.calibration_method, "quantize_static_options": dict(self.ort_options),
                "high_precision_dtype": self.high_precision_dtype, "op_types_to_exclude_fp16": list(self.fp32_op_types)}


@dataclass
class _Parsed:
    patterns: list[str] = field(default_factory=list)
    op_types: list[str] = field(default_factory=list)
    calibration: str | None = None
    method: str | None = None
    high_precision_dtype: str | None = None
    fp32_op_types: list[str] = field(default_factory=list)


def find_finding(findings: Sequence[Finding], wanted: str, bundle: str) -> Finding:
    """The finding named by its fingerprint or rule id (a rule id must name exactly one finding)."""
    matches = [f for f in findings if wanted in (f.fingerprint, f.rule_id)]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(f"{f.rule_id} {f.fingerprint}" for f in findings) or "none"
    if not matches:
        raise InputError(f"{bundle}: no finding {wanted!r}; pass a rule id or fingerprint of its findings ({listed})")
    raise InputError(f"{bundle}: {len(matches)} findings of {wanted}; pass one fingerprint instead "
                     f"({', '.join(f.fingerprint for f in matches)})")


def fix_from_finding(finding: Finding, calib_file: str | None, quantizer: str = "modelopt",
                     recorded: Mapping[str, Any] | None = None) -> FixSpec:
    """The first fix of *finding* that re-quantizes, read back from its command line; for an ONNX Runtime
    model a quantize_static fix comes before a ModelOpt one, read as its difference from *recorded* (the
    quantize_static options the bundle's graph records: analysis/quantizer.ort_options)."""
    source = f"finding {finding.rule_id} (fingerprint {finding.fingerprint})"
    if quantizer == "onnxruntime":
        for fix in finding.fixes:
            call = _quantize_static_call(fix.command)
            if call is not None:
                return _ort_fix(source, fix.action, call, calib_file, recorded or {})
    for fix in finding.fixes:
        parsed = _parse_command(fix.command)
        if parsed is None:
            continue
        return FixSpec(source, tuple(parsed.patterns), tuple(parsed.op_types), calib_file, parsed.method,
                       parsed.calibration, fix.action, high_precision_dtype=parsed.high_precision_dtype,
                       fp32_op_types=tuple(parsed.fp32_op_types))
    raise InputError(f"finding {finding.rule_id} ({finding.fingerprint}): none of its fixes re-quantizes the model "
                     "(no ModelOpt command); confirm exclusions or calibration with --exclude NODE or --calib FILE")


_UNRECORDED = object()


def _ort_fix(source: str, action: str, call: dict[str, Any], calib_file: str | None,
             recorded: Mapping[str, Any]) -> FixSpec:
    """A quantize_static fix as what it changes: the nodes and op types it adds to the recorded exclusions, the
    calibration method and file, and the options (types, symmetry, per-channel) it sets otherwise."""
    nodes = [n for n in call.pop("nodes_to_exclude", []) if n not in set(recorded.get("nodes_to_exclude") or [])]
    kept = call.pop("op_types_to_quantize", None)
    op_types = [op for op in recorded.get("op_types_to_quantize") or [] if kept is not None and op not in kept]
    method = call.pop("calibrate_method", None)
    wanted = call.pop("calibration", None)
    extra = recorded.get("extra_options") or {}
    # An option the recording lacks counts as changed (the sentinel equals no value): reduce_range, which no graph
    # records, is run as the fix prints it (QR012's and QR013's 7-bit weights; dropped, a new user's face detector read
    # "regression" for the per-channel fix that, run as printed, was the best recipe found).
    changed = {k: v for k, v in call.items() if extra.get(k, recorded.get(k, _UNRECORDED)) != v}
    return FixSpec(source, tuple(nodes), tuple(op_types), calib_file, method, wanted, action, tuple(changed.items()))


def _quantize_static_call(command: str) -> dict[str, Any] | None:
    """The arguments of the quantize_static(...) call a fix's `python -c` command makes, or None when it makes none:
    types and calibration method by name, flags, node and op-type lists, and the calibration file np.load reads."""
    if "quantize_static(" not in command:
        return None
    try:
        args = shlex.split(command.split("&&")[-1])
        tree = ast.parse(args[args.index("-c") + 1])
    except (ValueError, IndexError, SyntaxError):
        return None
    call: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "load" and \
                node.args and isinstance(node.args[0], ast.Constant) and "calibration" not in call:
            call["calibration"] = node.args[0].value
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "quantize_static":
            for keyword in node.keywords:
                call.update(_keyword(keyword))
    return call


def _keyword(keyword: ast.keyword) -> dict[str, Any]:
    value = keyword.value
    if keyword.arg in ("activation_type", "weight_type") and isinstance(value, ast.Attribute):
        return {keyword.arg: value.attr[1:].lower()}  # QuantType.QInt8 -> int8
    if keyword.arg == "calibrate_method" and isinstance(value, ast.Attribute):
        return {keyword.arg: value.attr.lower()}
    try:
        literal = ast.literal_eval(value)
    except ValueError:
        return {}
    if keyword.arg == "extra_options" and isinstance(literal, dict):
        return {k: v for k, v in literal.items() if k in ("ActivationSymmetric", "WeightSymmetric")}
    if keyword.arg in ("per_channel", "reduce_range", "nodes_to_exclude", "op_types_to_quantize"):
        return {keyword.arg: literal}
    return {}


def fix_from_flags(exclude: Iterable[str], op_types: Iterable[str], calib_file: str | None,
                   method: str | None) -> FixSpec:
    return FixSpec("--exclude/--exclude-op-type/--calib/--calib-method", tuple(exclude), tuple(op_types), calib_file,
                   method, None, "as given on the command line")


def merge(fix: FixSpec, exclude: Iterable[str], op_types: Iterable[str], method: str | None) -> FixSpec:
    """A finding's fix plus what the command line adds (more exclusions, another calibration method)."""
    return FixSpec(fix.source, tuple(dict.fromkeys([*fix.node_patterns, *exclude])),
                   tuple(dict.fromkeys([*fix.op_types, *op_types])), fix.calibration, method or fix.calibration_method,
                   fix.wants_calibration, fix.action, fix.ort_options, fix.high_precision_dtype, fix.fp32_op_types)


def check_calibration(fix: FixSpec, original: str | None) -> None:
    """A fix naming another calibration file than the bundle's needs that file from the user (never run for them)."""
    wanted = fix.wants_calibration
    if fix.calibration or not wanted or wanted.startswith("<"):
        return
    if original and PurePath(wanted).name == PurePath(original).name:
        return
    raise InputError(f"{fix.source}: the fix quantizes with new calibration data ({wanted}); make it as the report's "
                     f"fix says and pass it with --calib {wanted}")


def resolve_nodes(patterns: Sequence[str], names: Sequence[str], where: str) -> list[str]:
    """Node names matched by each pattern as ModelOpt matches --nodes_to_exclude (re.match), exact names first."""
    chosen: list[str] = []
    known = set(names)
    for pattern in patterns:
        if pattern in known:
            chosen.append(pattern)
            continue
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise InputError(f"--exclude {pattern!r}: not a node name of {where} nor a valid pattern ({exc})") from None
        hits = [n for n in names if regex.match(n)]
        if not hits:
            raise InputError(f"--exclude {pattern!r}: matches no node of {where}; give node names as the report "
                             "lists them")
        chosen += hits
    return list(dict.fromkeys(chosen))


def _parse_command(command: str) -> _Parsed | None:
    """The quantizer options of a ModelOpt command line, or None when the command is not one."""
    # A fix may be two commands joined by && (rewrite the calibration data, then quantize): read the last.
    part = command.split("&&")[-1]
    try:
        args = shlex.split(part)
    except ValueError:
        return None
    if "modelopt.onnx.quantization" not in args:
        return None
    if "|" in args:  # `2>&1 | tee LOG`: the console saved beside the model
        args = args[:args.index("|")]
    parsed, current = _Parsed(), None
    for arg in args:
        flag, eq, value = arg.partition("=")
        if arg.startswith("--"):
            current = flag
            if eq:
                _set(parsed, flag, value)
                current = None
        elif current:
            _set(parsed, current, arg)
            current = current if current in _LIST_FLAGS else None
    return parsed


def _set(parsed: _Parsed, flag: str, value: str) -> None:
    if flag == "--calibration_data_path":
        parsed.calibration = value
    elif flag == "--calibration_method":
        parsed.method = value.lower()
    elif flag == "--high_precision_dtype":
        parsed.high_precision_dtype = value.lower()
    elif flag in _LIST_FLAGS:
        _add(parsed, flag, value.split(","))


def _add(parsed: _Parsed, flag: str, values: list[str]) -> None:
    target = {"--nodes_to_exclude": parsed.patterns, "--op_types_to_exclude_fp16": parsed.fp32_op_types}
    target.get(flag, parsed.op_types).extend(v for v in values if v)
