"""Declared schemas of what a bundle's artifacts CONTAIN: JSON artifacts, manifest fields the report reads, table rows.

bundle/schema.py checks the manifest's structure and the tables' columns; this module checks the
values the analysis, the rules and the report use: types, ranges, finite numbers, string lengths.
A bundle is untrusted input (SECURITY.md), so every value is checked once, where it is read
(analysis/context.py), and a bad one is a one-line BundleError naming the file and the field, exit 2,
instead of a TypeError deep in a rule or a template. Unknown keys are allowed (a newer minor version
may add them); declared keys must have their declared type. docs/bundle.md "Artifact contents".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from qdqreport.errors import BundleError

FIX = "re-run `qdqreport collect`"
NAME_MAX = 4096  # a tensor, node or file name; real ones are under 300 characters
TEXT_MAX = 1 << 20  # a log line, an error message, an argv entry
ITEMS_MAX = 1_000_000  # entries of any list
COUNT_MAX = 2**53  # counts, sizes, sample indices: exact as a float, printable with thousands separators


class Spec:
    """One declared value. check() raises BundleError("<where>: <path> must be ...")."""

    nullable = False

    def check(self, value: Any, where: str, path: str) -> None:
        if value is None and self.nullable:
            return
        problem = self.problem(value, where, path)
        if problem:
            raise BundleError(f"{where}: {path or 'the document'} {problem}, got {_shown(value)}; {FIX}")

    def problem(self, value: Any, where: str, path: str) -> str | None:
        raise NotImplementedError


@dataclass
class Num(Spec):
    lo: float = -math.inf
    hi: float = math.inf
    integer: bool = False
    finite: bool = True  # False: NaN and infinities allowed (a metric of an output that has them)
    nullable: bool = False

    def problem(self, value: Any, where: str, path: str) -> str | None:
        kinds = (int,) if self.integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            return "must be an integer" if self.integer else "must be a number"
        if isinstance(value, float) and not math.isfinite(value):
            return None if not self.finite else "must be a finite number"
        if not self.lo <= value <= self.hi:
            return f"must lie within {_bound(self.lo)}..{_bound(self.hi)}"
        return None


def Count(nullable: bool = False) -> Num:  # noqa: N802 - reads like a type in the declarations
    return Num(0, COUNT_MAX, integer=True, nullable=nullable)


def Share(nullable: bool = False) -> Num:  # noqa: N802
    return Num(0.0, 1.0, nullable=nullable)


def Float(nullable: bool = False, finite: bool = False) -> Num:  # noqa: N802
    return Num(finite=finite, nullable=nullable)


@dataclass
class Str(Spec):
    max: int = NAME_MAX
    choices: tuple[str, ...] = ()
    nullable: bool = False

    def problem(self, value: Any, where: str, path: str) -> str | None:
        if not isinstance(value, str):
            return "must be a string"
        if len(value) > self.max:
            return f"must be at most {self.max:,} characters"
        if self.choices and value not in self.choices:
            return f"must be one of {'|'.join(self.choices)}"
        return None


@dataclass
class Bool(Spec):
    nullable: bool = False

    def problem(self, value: Any, where: str, path: str) -> str | None:
        return None if isinstance(value, bool) else "must be true or false"


@dataclass
class Scalar(Spec):
    """Any JSON scalar shown as text (tool versions, host facts): a string of bounded length, a number, a bool."""

    nullable: bool = True

    def problem(self, value: Any, where: str, path: str) -> str | None:
        if isinstance(value, str):
            return None if len(value) <= TEXT_MAX else f"must be at most {TEXT_MAX:,} characters"
        if isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value)):
            return None if not isinstance(value, int) or abs(value) <= COUNT_MAX else "must be a smaller number"
        if isinstance(value, list) and len(value) <= 1000:
            for i, item in enumerate(value):
                self.check(item, where, f"{path}[{i}]")
            return None
        return "must be a string, a number or a list of them"


@dataclass
class ListOf(Spec):
    item: Spec
    max_items: int = ITEMS_MAX
    nullable: bool = False

    def problem(self, value: Any, where: str, path: str) -> str | None:
        if not isinstance(value, list):
            return "must be a list"
        if len(value) > self.max_items:
            return f"must have at most {self.max_items:,} entries"
        for i, item in enumerate(value):
            self.item.check(item, where, f"{path}[{i}]")
        return None


@dataclass
class Obj(Spec):
    """An object with declared keys (checked when present; *required* must be present) and optional typed values."""

    fields: dict[str, Spec] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    values: Spec | None = None  # the spec of every value under any key (maps such as by_op_type)
    nullable: bool = False

    def problem(self, value: Any, where: str, path: str) -> str | None:
        if not isinstance(value, dict):
            return "must be an object"
        for key in self.required:
            if key not in value:
                return f"must have the field {key!r}"
        for key, item in value.items():
            spec = self.fields.get(key, self.values)
            if spec is not None:
                if len(key) > NAME_MAX:
                    return f"has a key longer than {NAME_MAX:,} characters"
                spec.check(item, where, f"{path}.{key}" if path else key)
        return None


def _bound(value: float) -> str:
    return f"{value:g}" if math.isfinite(value) else ("-inf" if value < 0 else "inf")


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= 40 else text[:37] + "..."


# --- JSON artifacts (manifest["artifacts"] kinds) ----------------------------------------------------
_NAMES = ListOf(Str())
# NaN/Inf: inputs that hold them (the report shows it); never null, never a negative spread.
_STATS = Obj({"min": Float(), "max": Float(), "mean": Float(), "std": Num(0, finite=False), "absmax": Num(0, finite=False),
              "index": Count(True),
              # optional (a channel's, since 2026-11-27): the standard error of the set's channel mean, from the spread
              # of the samples' own channel means (QR003's channel-order test weighs a gap against it)
              "mean_sem": Num(0, nullable=True)},
             required=("min", "max", "mean", "std"))
# Optional (bundles before issue 10 lack it): per-sample lag-1 autocorrelation along the last axis, summarised;
# the same shape for the per-sample lowest correlation between colour channels (bundles before 2026-11-24 lack it).
_STRUCTURE = Obj({"measure": Str(), "axis": Num(-64, 64, integer=True), "samples": Count(),
                  "mean": Num(-1, 1, nullable=True), "min": Num(-1, 1, nullable=True), "max": Num(-1, 1, nullable=True)},
                 required=("measure", "samples", "mean"))
# Optional (bundles before 2026-11-25, session 25, lack it): 1-D float signals' per-sample spectral centroids summarised.
_SPECTRUM = Obj({"measure": Str(), "unit": Str(), "axis": Num(-64, 64, integer=True), "samples": Count(),
                 **{k: Num(0, 0.5) for k in ("min", "p10", "median", "p90", "max")}, "relative_spread": Num(0, 1e6)},
                required=("measure", "samples", "median", "p10", "p90"))
# Optional (bundles before 2026-11-27, session 29, lack it): a signed integer input's most frequent values and counts.
_IDS = Obj({"values": Count(), "distinct": Count(),
            "top": ListOf(Obj({"id": Num(-2 ** 63, 2 ** 63, integer=True), "count": Count()}, required=("id", "count")))},
           required=("values", "distinct", "top"))
_INPUT_STATS = Obj({
    "input": Str(), "source": Str(TEXT_MAX), "samples": Count(True), "content_sha256": Str(nullable=True),
    "inputs": Obj(values=Obj({"dtype": Str(), "shape": ListOf(Num(-1, COUNT_MAX, integer=True, nullable=True)),
                              "channel_axis": Num(-64, 64, integer=True, nullable=True), "overall": _STATS,
                              "channels": ListOf(_STATS), "per_sample": ListOf(_STATS), "structure": _STRUCTURE,
                              "channel_correlation": _STRUCTURE, "spectrum": _SPECTRUM, "ids": _IDS},
                             required=("overall",))),  # never null: rules iterate it (fuzz seed 31, case 29652)
})
_NODE = Obj({"name": Str(), "op_type": Str(), "index": Count(),  # never null: the report sorts by it (seed 31, case 24631) "precision": Str(), "feeds_graph_output": Bool(True),
             "outputs": _NAMES, "activation_dtype": Str(nullable=True), "weight_dtype": Str(nullable=True)},
            required=("name", "op_type", "index", "precision"))
_QDQ = Obj({"q_node": Str(nullable=True), "dq_nodes": _NAMES, "consumers": _NAMES, "dtype": Str(nullable=True),
            "kind": Str(nullable=True), "axis": Num(-64, 64, integer=True, nullable=True),
            "scale_count": Count(True), "scale_min": Float(True), "scale_max": Float(True),
            "pair_scales_match": Bool(True), "scale_constant": Bool(True), "scale_finite_positive": Bool(True),
            "zero_point_nonzero": Bool(True),
            # optional, 1.2-compatible (2026-11-27): an 8-bit per-tensor weight's output channels by the integer levels
            # they reach (analysis/quantizer.LEVEL_EDGES)
            "channel_levels": Obj({"channels": Count(), "axis": Num(-64, 64, integer=True, nullable=True),
                                   "histogram": ListOf(Count()), "dead": Count(True)}, required=("channels", "histogram"),
                                  nullable=True)},
           required=("q_node", "dq_nodes", "consumers", "dtype", "kind", "axis", "scale_count", "scale_min", "scale_max",
                     "pair_scales_match", "scale_constant", "scale_finite_positive", "zero_point_nonzero"))
_RESULT = Obj({"cosine": Float(True), "top1": Share(True), "sqnr_db": Float(True)})
# Optional, 1.2-compatible (what-if bundles before 2026-11-27 lack them): the report's judgement of a what-if
# variant (analysis/agreement.py), its worst decisive output's, and every output's.
_LEVEL = Str(choices=("agree", "degrade", "collapse"), nullable=True)
_JUDGED = {"level": _LEVEL, "output": Str(TEXT_MAX, nullable=True), "measure": Str(nullable=True),
           "value": Float(True), "headline": Str(TEXT_MAX, nullable=True),
           "outputs": Obj(values=Obj({"level": _LEVEL, "measure": Str(nullable=True), "value": Float(True),
                                      "headline": Str(TEXT_MAX, nullable=True), "internal": Bool(True)}),
                          nullable=True)}

ARTIFACT_SPECS: dict[str, Spec] = {
    "precision_summary": Obj({
        "float_dtype": Str(nullable=True), "counts": Obj(values=Count(True), nullable=True),
        "by_op_type": Obj(values=Obj(values=Count()), nullable=True), "nodes": ListOf(_NODE, nullable=True),
        "qdq": ListOf(_QDQ, nullable=True),
        # optional, 1.2-compatible (session 41): the FP32 model's node count by op type (its Relus and Clips that
        # quantize_static removed say what it was asked to quantize)
        "fp32_op_counts": Obj(values=Count(), nullable=True),
        "sensitive": ListOf(Obj({"node": Str(nullable=True), "op_type": Str(nullable=True), "pattern": Str(nullable=True),
                                 "quantized": Bool(True), "tensor": Str(nullable=True),
                                 # optional, 1.2-compatible (session 35): the float activation the node reads
                                 "input": Str(nullable=True)},
                                required=("node", "op_type", "pattern", "quantized", "tensor")), nullable=True),
    }),
    "modelopt_log": Obj({
        "total_nodes": Count(True), "quantizable_nodes": Count(True), "nodes_to_quantize": Count(True),
        "quantized_nodes": Count(True), "non_quantizable_partitions": Count(True),
        "calibration_method": Str(nullable=True), "random_calibration": Bool(True), "already_quantized": Bool(True),
        "quantized_type_counts": Obj(values=Count(), nullable=True), "warnings": ListOf(Str(TEXT_MAX), nullable=True),
        # optional (bundles before 2026-11-26 lack it): the log holds the end of a finished run (false: ModelOpt's --log_file)
        "complete": Bool(True),
    }),
    "eval_stats": _INPUT_STATS,
    "calib_stats": _INPUT_STATS,
    "range_use": ListOf(Obj({
        "input": Str(nullable=True), "q_node": Str(nullable=True), "clipped_share": Share(), "range_used": Num(0),
        "eval_min": Float(True), "eval_max": Float(True), "representable_min": Float(True),
        "representable_max": Float(True), "scale": Float(True), "zero_point": Num(integer=True, nullable=True),
        "qmin": Num(integer=True, nullable=True), "qmax": Num(integer=True, nullable=True)},
        required=("input", "q_node", "clipped_share", "range_used", "eval_min", "eval_max", "representable_min",
                  "representable_max", "scale", "zero_point", "qmin", "qmax"))),
    # Every activation Q node's range use on a spread subset of the evaluation samples (collect/activation_ranges.py);
    # rows as the per-layer qnodes table's.
    "activation_ranges": Obj({
        "samples": Count(), "of_samples": Count(), "sample_indices": ListOf(Count()), "seconds": Num(0, nullable=True),
        "calib_samples": Count(True),
        "quantizers": ListOf(Obj({
            "q_node": Str(), "tensor": Str(nullable=True), "kind": Str(), "dtype": Str(nullable=True),
            "values": Count(), "clipped_share": Share(True), "range_used": Num(0, 1, nullable=True),
            "representable_min": Float(True), "representable_max": Float(True), "observed_min": Float(True),
            "observed_max": Float(True), "per_channel": Bool(True), "calib_values": Count(True),
            "calib_clipped_share": Share(True)},
            required=("q_node", "kind", "values", "clipped_share", "range_used")))},
        required=("samples", "of_samples", "quantizers")),
    "layers_summary": Obj({
        "samples": Count(True), "aligned_tensors": Count(True), "aligned_weights": Count(True), "local": Bool(True),
        "local_error": Str(TEXT_MAX, nullable=True), "quantizers": Count(True), "seconds": Num(0, nullable=True),
        "unmatched": ListOf(Str(), nullable=True), "unmatched_count": Count(True),
        # optional, 1.2-compatible (collect --per-layer-samples): the evaluation samples there were, and which the
        # statistics read when fewer than all (absent: every sample)
        "of_samples": Count(True), "sample_indices": ListOf(Count(), nullable=True), "sample_choice": Str(nullable=True),
        # optional, 1.2-compatible (2026-11-26): pairs the names give but whose two sides are not the same quantity
        # (collect/align.py: fused before quantization, another shape or element type), counted and not compared;
        # and the whole pass skipped (`status` "skipped", `reason` one line) when nothing could be compared
        "skipped_tensors": Count(True), "skipped_reasons": Obj(values=Count(), nullable=True),
        "skipped": ListOf(Obj({"tensor": Str(), "qdq_tensor": Str(nullable=True), "kind": Str(nullable=True),
                               "reason": Str(), "fp32": Str(nullable=True), "qdq": Str(nullable=True)},
                              required=("tensor", "reason")), nullable=True),
        "status": Str(nullable=True), "reason": Str(TEXT_MAX, nullable=True),
        # optional, 1.2-compatible (2026-11-27): aligned activations holding NaN/Inf in either model, counted, and the
        # first of them in graph order with their NaN/Inf value counts (the error columns skip those positions)
        "nonfinite_tensors": Count(True),
        "nonfinite": ListOf(Obj({"tensor": Str(), "node": Str(nullable=True), "op_type": Str(nullable=True),
                                 "index": Count(True), "fp32": Count(), "qdq": Count(), "values": Count(),
                                 "reads_int8": ListOf(Obj({"tensor": Str(), "node": Str(nullable=True)},
                                                          required=("tensor",)), nullable=True)},
                                required=("tensor", "fp32", "qdq", "values")), nullable=True)}),
    "whatif_summary": Obj({
        "baseline": Obj({**_RESULT.fields, **_JUDGED}, required=tuple(_RESULT.fields)),
        "chosen": Obj({**_RESULT.fields, **_JUDGED, "cost_nodes": Count(True), "nodes": ListOf(Str(), nullable=True),
                       "reached": Bool(True)}, required=(*_RESULT.fields, "cost_nodes", "nodes", "reached")),
        "op_type": Obj({**_RESULT.fields, **_JUDGED, "op_type": Str(), "nodes": Count(True), "reached": Bool(True)},
                       required=(*_RESULT.fields, "op_type", "nodes", "reached"), nullable=True),
        "confirmed": Obj({**_RESULT.fields, "quantizer": Str(nullable=True), "version": Str(nullable=True),
                          "command": Str(TEXT_MAX, nullable=True), "error": Str(TEXT_MAX, nullable=True),
                          "nodes": ListOf(Str(), nullable=True), "excluded": ListOf(Str(), nullable=True),
                          "seconds": Num(0, nullable=True)},
                         required=(*_RESULT.fields, "quantizer", "version", "nodes", "error"), nullable=True),  # collect --per-layer --confirm (qdqreport/confirm/whatif_confirm.py)
        "candidates": ListOf(Str(), nullable=True), "quantized_nodes": Count(True), "samples": Count(True),
        "seconds": Num(0, nullable=True), "budget_seconds": Num(0, nullable=True), "stopped": Str(TEXT_MAX, nullable=True),
        "target_cosine": Num(-1, 1, nullable=True), "target_top1": Share(True), "trials": Count(True),
        # optional, 1.2-compatible (2026-11-27): what "meets the target" judged, in the report's words
        "judged": Str(TEXT_MAX, nullable=True),
        # optional, 1.2-compatible (2026-11-27, session 35): trials run on a subset (collect/whatif_samples.py): of how many
        # samples, which, how chosen, and one trial on all of them as estimated
        "of_samples": Count(True), "sample_indices": ListOf(Count(), nullable=True),
        "sample_choice": Str(nullable=True), "planned_seconds": Num(0, nullable=True)},
        # Every key collect/whatif.py writes; the report's what-if paragraph reads them all.
        required=("baseline", "chosen", "target_cosine", "target_top1", "budget_seconds", "quantized_nodes", "stopped",
                  "seconds", "trials")),
    "fp16_check": Obj({
        "control_stage": Str(nullable=True), "samples": Count(True), "range_samples": Count(True),
        "seconds": Num(0, nullable=True),
        "fp16_activations": Count(True), "fp16_constants_checked": Count(True),
        "fp16_constants_without_fp32_original": Count(True), "activations_beyond_fp16": Count(True),
        "constants_damaged": Count(True), "range_scan_error": Str(TEXT_MAX, nullable=True)}),
}


def check_artifact(kind: str, value: Any, where: str) -> Any:
    """*value* (the parsed JSON artifact of *kind*) if it matches its declared schema; BundleError otherwise."""
    spec = ARTIFACT_SPECS.get(kind)
    if spec is not None:
        spec.check(value, where, "")
    return value


# --- manifest fields the report reads beyond bundle/schema.py's structure ------------------------
_DIM = Scalar(nullable=True)  # an int, or a symbolic name such as "batch"
_FILE = Obj({"path": Str(TEXT_MAX), "sha256": Str(128), "bytes": Count()})
MANIFEST_SPEC = Obj({
    "created_at": Str(100),
    "collector": Obj({"name": Str(), "version": Str(100), "argv": ListOf(Str(TEXT_MAX))}),
    "tools": Obj(values=Scalar()),
    "host": Obj(values=Scalar()),
    "models": Obj(values=Obj({"path": Str(TEXT_MAX), "sha256": Str(128), "bytes": Count()}, nullable=True)),
    "inputs": Obj(values=Obj({"source": Str(TEXT_MAX), "kind": Str(), "samples": Count(), "sha256": Str(128, nullable=True),
                              "tensors": ListOf(Obj({"name": Str(), "dtype": Str(), "shape": ListOf(_DIM, 64)}))},
                             nullable=True)),
    "stages": ListOf(Obj({"id": Str(200), "runtime": Str(200), "precision": Str(200), "status": Str(),
                          "error": Str(TEXT_MAX, nullable=True), "seconds": Num(0, nullable=True),
                          "artifacts": Obj(values=Str()), "details": Obj(nullable=True)}), 1000),
    "comparisons": ListOf(Obj({
        "id": Str(500), "reference": Str(200), "candidate": Str(200), "tables": Obj(values=Str()),
        "sliced": Obj(values=Obj({"axis": Num(-64, 64, integer=True, nullable=True), "spread": Num()},
                                 required=("axis", "spread"))),
        "class_outputs": ListOf(Str()), "skipped": Obj(values=Str(TEXT_MAX))}), 1000),
    "artifacts": Obj(values=Str()),
    "task": Obj({
        "stages": ListOf(Obj({"stage": Str(200), "samples": Count(), "fields": ListOf(Str()),
                              "error": Str(TEXT_MAX, nullable=True), "results": Str(nullable=True)})),
        "comparisons": ListOf(Obj({"id": Str(500), "reference": Str(200), "candidate": Str(200), "table": Str(),
                                   "samples": Count(), "agreement": Share(), "disagreeing": Count()})),
        "postprocess": Obj({"source": Str(TEXT_MAX), "function": Str(), "compare": Str(nullable=True)}),
        "task_results": Obj({"source": Str(TEXT_MAX), "kind": Str(), "stage": Str(200), "samples": Count(),
                             "fields": ListOf(Str()), "results": Str(), "error": Str(TEXT_MAX, nullable=True)})}),
})


def check_manifest(manifest: dict[str, Any], where: str) -> None:
    """The manifest fields the analysis and the report read, checked against MANIFEST_SPEC."""
    MANIFEST_SPEC.check(manifest, where, "")


# --- table rows (bundle/schema.py TABLE_COLUMNS gives the columns and their Python type) ----------
_COSINE = Num(-1.001, 1.001, finite=False, nullable=True)  # NaN/inf: an output with non-finite values
ROW_SPECS: dict[str, dict[str, Spec]] = {
    "samples": {"sample": Count(), "cosine": _COSINE, "ref_nan": Count(), "ref_inf": Count(), "cand_nan": Count(),
                "cand_inf": Count(), "top1_agree": Share(True), "top5_agree": Share(True)},
    "slices": {"axis": Num(-64, 64, integer=True), "index": Count(), "cosine": _COSINE},
    "tensors": {"samples": Count(True), "cosine": _COSINE},
    "layers": {"index": Count(True), "samples": Count(True), "cosine": _COSINE, "local_cosine": _COSINE},
    "qnodes": {"values": Count(True), "clipped_share": Share(True), "range_used": Num(0, finite=False, nullable=True)},
    "whatif": {"trial": Count(True), "excluded_count": Count(True), "cosine": _COSINE, "top1_agree": Share(True),
               "reached": Num(0, 1, integer=True, nullable=True), "seconds": Num(0, nullable=True)},
    "task": {"sample": Count(), "agreement": Share(), "differing": Str(TEXT_MAX), "reference": Str(TEXT_MAX),
             "candidate": Str(TEXT_MAX)},
    "fp16_ranges": {"samples": Count(True), "values": Count(True), "fp32_absmax": Num(0, finite=False, nullable=True),
                    "overflow": Count(True), "underflow": Count(True), "qdq_absmax": Num(0, finite=False, nullable=True),
                    "consumers": Str(TEXT_MAX)},
}
_BY_TYPE = {str: Str(), int: Num(-COUNT_MAX, COUNT_MAX, integer=True, nullable=True), float: Float(True)}


def check_rows(kind: str, columns: tuple[tuple[str, type], ...], rows: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """*rows* of a table of *kind* if every declared column holds a value of its declared type and range."""
    specs = [(name, ROW_SPECS.get(kind, {}).get(name, _BY_TYPE[python_type])) for name, python_type in columns]
    quick = [(name, _quick_test(spec)) for name, spec in specs]
    if all(test is not None and all(map(test, [row.get(name) for row in rows])) for name, test in quick):
        return rows  # every cell passes a test that accepts only what Spec.check accepts: nothing to report
    # Some cell is unusual or wrong: each cell checked in turn, the first problem raised as it always was.
    for line, row in enumerate(rows, start=2):
        for name, spec in specs:
            spec.check(row.get(name), where, f"line {line} column {name}")
    return rows


def _quick_test(spec: Spec) -> Callable[[Any], bool] | None:
    """A test of one cell that accepts a subset of what *spec*.check accepts (plain int, float, str and None values;
    anything else fails it), for the common case of a table that is all right: Spec.check's calls and the path text it
    builds for every cell were most of the time of reading a table (2,000 rows at N = 1,000, issue 12). None for a spec
    without one."""
    nullable = spec.nullable
    if type(spec) is Num:
        lo, hi, finite = spec.lo, spec.hi, spec.finite
        if spec.integer:
            return lambda v: (type(v) is int and lo <= v <= hi) or (v is None and nullable)

        def number(v: Any) -> bool:
            kind = type(v)
            if kind is float:
                return (lo <= v <= hi) if math.isfinite(v) else not finite
            return (kind is int and lo <= v <= hi) or (v is None and nullable)
        return number
    if type(spec) is Str:
        longest, choices = spec.max, spec.choices
        return lambda v: (type(v) is str and len(v) <= longest and (not choices or v in choices)) or (v is None and nullable)
    return None


def check_array_key(key: str, where: str) -> tuple[int, str]:
    """(sample, name) of an .npz key "<sample:06d>/<name>"; BundleError for any other key."""
    sample, _, name = key.partition("/")
    if not (sample.isascii() and sample.isdigit() and len(sample) <= 9 and name and len(name) <= NAME_MAX):
        raise BundleError(f"{where}: array key {_shown(key)} is not '<sample:06d>/<name>'; {FIX}")
    return int(sample), name
