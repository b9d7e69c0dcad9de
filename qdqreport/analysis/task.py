"""Task-level results: decode every stage's outputs with the user's decode step, compare the decoded
results stage pair by stage pair, and compare the user's deployment results with the decode of the
very outputs it decoded.

NumPy only (no onnx, onnxruntime): `collect --postprocess` and the test BundleBuilder (qdqreport/testing/)
write task data through this module, so a rule example runs the same path from decoded results to CSV
to Context as `collect` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from qdqreport.bundle.layout import output_key
from qdqreport.bundle.vocabulary import COMPARISON_PLAN
from qdqreport.bundle.writer import BundleWriter
from qdqreport.analysis.decode_step import DecodeFailed, Decoder, TaskResult
from qdqreport.analysis.calibration_check import EVAL_RANGES_STAGE
from qdqreport.analysis.saturation import UNFUSED_STAGE
from qdqreport.errors import InputError
from qdqreport.wording import percent

# The checks' controls decoded like the stages they control, on their own (first) samples: the saturation check's unfused
# QDQ model (analysis/saturation.py) and the calibration check's (analysis/calibration_check.py) judged by the user's
# decode, not their raw outputs only (a decode can read a change no raw judgement calls a collapse, or shrug off one
# that does).
CONTROL_PLAN = (("ort_fp32", UNFUSED_STAGE, "other"), ("ort_fp32", EVAL_RANGES_STAGE, "other"))
APP_STAGE = "task_results"  # the pseudo-stage holding what the user's application decoded (--task-results)
APP_PURPOSE = "postprocess"
# The FP32 model's own outputs: a decode that fails on them is the script's fault. Not "reference":
# --reference may hold only some outputs, so a decode reading another one fails there like on any stage.
BASELINE_STAGE = "ort_fp32"
FLOAT_RTOL = FLOAT_ATOL = 0.01  # generic comparison: float fields agree within 1% (scores, box pixels)
FLIP_STEPS = 10  # bisection steps of the decision-margin search (resolution 1/1024 of the raw difference)
TEXT_LIMIT = 200

Outputs = Sequence[Mapping[str, np.ndarray]]
Agreement = Callable[[TaskResult, TaskResult], float]


@dataclass(frozen=True)
class AppResults:
    """The task results the user's application produced, one per sample, and the stage it decoded."""

    source: str
    kind: str  # json | npz
    stage: str
    results: list[TaskResult]
    sha256: str | None


@dataclass
class TaskPair:
    reference: str
    candidate: str
    purpose: str
    rows: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return f"{self.candidate}__vs__{self.reference}"

    @property
    def agreement(self) -> float:
        return float(np.mean([r["agreement"] for r in self.rows])) if self.rows else 1.0

    @property
    def disagreeing(self) -> int:
        return sum(r["agreement"] < 1.0 for r in self.rows)


@dataclass
class TaskRun:
    decoder: dict[str, Any]
    results: dict[str, list[TaskResult]]
    failures: dict[str, str]
    app: AppResults | None
    pairs: list[TaskPair] = field(default_factory=list)
    app_error: str | None = None  # why the application's results were not compared (their stage not decoded)


# --- running ----------------------------------------------------------------------------------
def run_task(decoder: Decoder, stage_outputs: Mapping[str, Outputs], app: AppResults | None = None,
             inputs: Outputs | None = None, decoded: TaskRun | None = None) -> TaskRun:
    """Decode each ok stage, compare the planned pairs, and the app's results with its stage's decode; a stage and a
    pair an earlier run (*decoded*) holds are taken from it, not decoded again (a pair's rows decode perturbed outputs
    too: flip_fraction).

    A decode that fails on ort_fp32 is an InputError: the script is wrong. One that fails on another
    stage (NaN outputs of a broken engine, a --reference without the output it reads) is recorded as
    that stage's failure; when that stage is --task-results-stage, the application's comparison is
    recorded as not made, with the reason (run.app_error).
    """
    results, failures = {}, {}
    for stage, outputs in stage_outputs.items():
        if decoded is not None and stage in decoded.results:  # every sample (collect decides its checks on them)
            results[stage] = decoded.results[stage]
            continue
        try:
            results[stage] = decode_all(decoder, outputs, inputs)
        except DecodeFailed as exc:
            if stage == BASELINE_STAGE:
                raise _script_error(decoder, str(exc)) from None
            failures[stage] = str(exc)
    agree = _agreement(decoder)
    run = TaskRun(decoder.manifest_entry(), results, failures, app)
    for reference, candidate, purpose in (*COMPARISON_PLAN, *CONTROL_PLAN):
        done = next((p for p in (decoded.pairs if decoded is not None else [])
                     if (p.reference, p.candidate) == (reference, candidate)), None)
        if done is not None and reference in results and candidate in results:
            run.pairs.append(done)
        elif reference in results and candidate in results:
            rows = _pair_rows(results[reference], results[candidate], agree, decoder,
                              stage_outputs[reference], stage_outputs[candidate], inputs)
            run.pairs.append(TaskPair(reference, candidate, purpose, rows))
    if app is not None and app.stage in results:
        run.pairs.append(TaskPair(app.stage, APP_STAGE, APP_PURPOSE, _app_rows(app, results[app.stage], agree)))
    elif app is not None:
        why = failures.get(app.stage, "the stage produced no outputs: it failed or was skipped")
        run.app_error = f"--task-results-stage {app.stage} could not be decoded ({why})"
    return run


def check_decoder(decoder: Decoder, first: Mapping[str, np.ndarray],
                  first_inputs: Mapping[str, np.ndarray] | None = None) -> None:
    """The script's contract on the first sample's FP32 outputs, as soon as they exist: decode() returns a usable
    result and compare() (when defined) scores it against itself within [0, 1]. A failure is the InputError
    run_task would raise once every stage has run, before the other samples run (collect calls this after the
    first FP32 sample); run_task still checks every sample."""
    try:
        result = decoder.decode(first, first_inputs)
    except DecodeFailed as exc:
        raise _script_error(decoder, f"sample 0: {exc}") from None
    if decoder.compare_fn is not None:
        try:
            decoder.user_agreement(result, result)
        except DecodeFailed as exc:
            raise InputError(f"{decoder.path}: sample 0: {exc} (comparing the decode of the {BASELINE_STAGE} outputs "
                             "with itself); fix compare(a, b) so it returns a float in [0, 1] for two decoded results "
                             "(single values arrive as Python values, arrays as NumPy arrays)") from None


def _script_error(decoder: Decoder, what: str) -> InputError:
    return InputError(f"{decoder.path}: {what} on stage {BASELINE_STAGE}; fix the script so it decodes the "
                      "FP32 outputs (dict of output name -> array, batch dimension kept)")


def decode_all(decoder: Decoder, outputs: Outputs, inputs: Outputs | None = None) -> list[TaskResult]:
    """Every sample's decoded result; *inputs*: the samples' model inputs, by the same index (for a decode that takes
    them)."""
    decoded = []
    for index, sample in enumerate(outputs):
        try:
            decoded.append(decoder.decode(sample, _inputs_of(inputs, index)))
        except DecodeFailed as exc:
            raise DecodeFailed(f"sample {index}: {exc}") from None
    return decoded


def decode_agreement(decoder: Decoder, reference: list[TaskResult], outputs: Outputs,
                     inputs: Outputs | None = None) -> tuple[float, int]:
    """(mean agreement, samples decoded differently) of *outputs* decoded against the *reference* results, as a task
    pair's agreement is measured (the script's compare(), else the generic one). A decode that fails on these
    outputs (NaN, say) agrees on nothing."""
    agree = _agreement(decoder)
    try:
        values = [_checked(agree, a, b, decoder, index)
                  for index, (a, b) in enumerate(zip(reference, decode_all(decoder, outputs, inputs)))]
    except DecodeFailed:
        return 0.0, len(reference)
    return (float(np.mean(values)) if values else 1.0), sum(v < 1.0 for v in values)


def task_words(agreement: float, differing: int, samples: int, scored: bool) -> str:
    """A decode's agreement in the report's words: a script's compare() gives scores (*scored*), not a share. The
    generic comparison's is a share of decoded values (an array's equal elements), which the words say: "task
    agreement 99.9% (23 of 250 samples decoded differently)" read as a contradiction to new users."""
    if scored:
        return f"mean compare() score {agreement:.3g} ({differing:,} of {samples:,} samples scored below 1)"
    return (f"task agreement {percent(agreement)} of decoded values ({differing:,} of {samples:,} samples decoded "
            "differently)")


def _agreement(decoder: Decoder) -> Agreement:
    """How two decoded results compare: the script's compare() when it has one, else the generic comparison."""
    return decoder.user_agreement if decoder.compare_fn else generic_agreement


def _inputs_of(inputs: Outputs | None, index: int) -> Mapping[str, np.ndarray] | None:
    """Sample *index*'s model inputs, when the caller has them."""
    return None if inputs is None or index >= len(inputs) else inputs[index]


def _pair_rows(ref: list[TaskResult], cand: list[TaskResult], agree: Agreement, decoder: Decoder,
               ref_out: Outputs, cand_out: Outputs, inputs: Outputs | None = None) -> list[dict[str, Any]]:
    rows = []
    for index, (a, b) in enumerate(zip(ref, cand)):
        value = _checked(agree, a, b, decoder, index)
        raw = raw_rel_l2(ref_out[index], cand_out[index])
        flip = None
        if value < 1.0 and raw is not None:
            fraction = flip_fraction(decoder, agree, a, ref_out[index], cand_out[index], _inputs_of(inputs, index))
            flip = None if fraction is None else fraction * raw
        # The fields a differing sample names: those that decided its agreement (every field under a compare()).
        fields = decision_fields(a, b) if agree is generic_agreement else sorted(set(a) | set(b))
        rows.append(_row(index, value, a, b, fields, flip, raw))
    return rows


def _app_rows(app: AppResults, decoded: list[TaskResult], agree: Agreement) -> list[dict[str, Any]]:
    if len(app.results) != len(decoded):
        raise InputError(f"{app.source}: holds {len(app.results)} task results but the inputs give {len(decoded)} "
                         "samples; save one result per input sample, in input order")
    rows = []
    for index, (ours, theirs) in enumerate(zip(decoded, app.results)):
        common = sorted(set(ours) & set(theirs))
        if not common:
            raise InputError(f"{app.source}: sample {index} has fields {sorted(theirs)} but the decode returns "
                             f"{sorted(ours)}; save the same field names")
        ours_common = {k: ours[k] for k in common}
        theirs_common = {k: theirs[k] for k in common}
        try:
            value = agree(ours_common, theirs_common)
        except DecodeFailed as exc:
            raise InputError(f"{app.source}: sample {index}: {exc}") from None
        rows.append(_row(index, value, ours_common, theirs_common, common, None, None))
    return rows


def _checked(agree: Agreement, a: TaskResult, b: TaskResult, decoder: Decoder, index: int) -> float:
    try:
        return agree(a, b)
    except DecodeFailed as exc:
        raise InputError(f"{decoder.path}: sample {index}: {exc}") from None


def _row(index: int, value: float, a: TaskResult, b: TaskResult, fields: list[str], flip: float | None,
         raw: float | None) -> dict[str, Any]:
    differing = [k for k in fields if field_agreement(a.get(k), b.get(k)) < 1.0]
    return {"sample": index, "agreement": round(float(value), 6), "differing": ";".join(differing),
            "reference": describe(a, differing), "candidate": describe(b, differing),
            "flip_rel_l2": flip, "raw_rel_l2": raw}


# --- the generic comparison ---------------------------------------------------------------------
def generic_agreement(a: TaskResult, b: TaskResult) -> float:
    """The least field_agreement among the deciding fields of both results (decision_fields; a field missing on one
    side counts 0): a sample is decoded alike only as far as each of its decisions is, so the mean over samples is the
    share of samples decoded alike that the report promises. The mean over fields let a second decision hide the
    first: a new user's streaming VAD decoded {start_ok, keep_ok} differently on 218 of 14,284 frames (98.47% alike,
    below the 0.99 bar) and read "task agreement 99.2%", "Outputs agree"; its start decision alone read "degrades"."""
    fields = decision_fields(a, b)
    return float(min(field_agreement(a.get(k), b.get(k)) for k in fields)) if fields else 1.0


def decision_fields(a: TaskResult, b: TaskResult) -> list[str]:
    """The fields the generic comparison judges: all of them, except a single float value (a score, a probability)
    beside a single str/int/bool value in both results (the decision it scores): opennsfw's {is_nsfw, nsfw} kept every
    is_nsfw of 64 images, yet 15 nsfw scores moved by more than 1% and the task read 'collapses'. Arrays (boxes,
    per-detection scores) always count; a compare() in the decode script judges as it likes."""
    fields = sorted(set(a) | set(b))

    def single(value: np.ndarray | None, kinds: str) -> bool:
        return value is not None and value.size == 1 and value.dtype.kind in kinds

    if not any(single(a.get(k), "biuU") and single(b.get(k), "biuU") for k in fields):
        return fields
    return [k for k in fields if not (single(a.get(k), "f") and single(b.get(k), "f"))]


def field_agreement(a: np.ndarray | None, b: np.ndarray | None) -> float:
    """1.0 when one field agrees: exact for str/int/bool, within 1% for floats; arrays by share of
    elements; arrays of different lengths (a different number of detections) by the ratio of lengths."""
    if a is None or b is None:
        return 0.0
    if a.shape != b.shape:
        if a.ndim and b.ndim and a.shape[1:] == b.shape[1:] and max(len(a), len(b)):
            return min(len(a), len(b)) / max(len(a), len(b))
        return 0.0
    if a.size == 0:
        return 1.0
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
            return 0.0
        same = np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=FLOAT_RTOL, atol=FLOAT_ATOL, equal_nan=True)
        return float(np.mean(same))
    if (a.dtype.kind == "U") != (b.dtype.kind == "U"):
        return 0.0
    return float(np.mean(a == b))


# --- the decision margin --------------------------------------------------------------------------
def raw_rel_l2(ref: Mapping[str, np.ndarray], cand: Mapping[str, np.ndarray]) -> float | None:
    """‖cand − ref‖ / ‖ref‖ over every float output both stages share with the same shape."""
    names = _interpolable(ref, cand)
    if not names:
        return None
    r = np.concatenate([np.asarray(ref[n], np.float64).ravel() for n in names])
    c = np.concatenate([np.asarray(cand[n], np.float64).ravel() for n in names])
    finite = np.isfinite(r) & np.isfinite(c)
    norm = float(np.linalg.norm(r[finite]))
    return float(np.linalg.norm(c[finite] - r[finite]) / norm) if norm > 0 else None


def flip_fraction(decoder: Decoder, agree: Agreement, ref_result: TaskResult, ref: Mapping[str, np.ndarray],
                  cand: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray] | None = None) -> float | None:
    """The smallest t (bisected) at which decoding ref + t·(cand − ref) no longer agrees with decode(ref).

    t · rel_l2 is how far the raw outputs have to move for the decision to change: the decode's
    margin on this sample, comparable with the INT8 noise of the whole run.
    """
    names = _interpolable(ref, cand)
    if not names:
        return None
    low, high = 0.0, 1.0
    for _ in range(FLIP_STEPS):
        middle = (low + high) / 2
        mixed = {**ref, **{n: (ref[n] + middle * (cand[n].astype(ref[n].dtype) - ref[n])).astype(ref[n].dtype)
                           for n in names}}
        try:
            differs = agree(ref_result, decoder.decode(mixed, inputs)) < 1.0
        except DecodeFailed:
            return None
        low, high = (low, middle) if differs else (middle, high)
    return high


def _interpolable(ref: Mapping[str, np.ndarray], cand: Mapping[str, np.ndarray]) -> list[str]:
    return [n for n in ref if n in cand and np.asarray(ref[n]).dtype.kind == "f"
            and np.asarray(ref[n]).shape == np.asarray(cand[n]).shape]


# --- text for the table -------------------------------------------------------------------------
def describe(result: TaskResult, fields: Sequence[str]) -> str:
    """`field=value; ...` of the named fields, short enough for a table cell."""
    text = "; ".join(f"{k}={_value_text(result[k])}" for k in fields if k in result)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 1] + "…"


def _value_text(array: np.ndarray) -> str:
    if array.ndim == 0:
        value = array.item()
        if isinstance(value, str):  # quoted, but readable: a Chinese OCR line showed as \u6ce8\u610f...
            return json.dumps(value, ensure_ascii=False)
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    if array.size > 8:
        return f"{array.dtype.name}{list(array.shape)}"
    flat = [round(v, 4) if isinstance(v, float) else v for v in array.ravel().tolist()]
    return json.dumps(flat, ensure_ascii=False) if array.ndim == 1 else f"{flat} shape {list(array.shape)}"


# --- writing --------------------------------------------------------------------------------------
def write_task(writer: BundleWriter, manifest: dict[str, Any], run: TaskRun | None) -> None:
    """Store decoded results, the app's results and the per-pair tables; add manifest["task"]."""
    if run is None:
        return
    stages = [{"stage": s, "status": "ok", "error": None, "samples": len(r), "fields": _fields(r),
               "results": writer.add_npz(f"task/{s}.npz", _arrays(r))} for s, r in run.results.items()]
    stages += [{"stage": s, "status": "failed", "error": error, "samples": 0, "fields": [], "results": None}
               for s, error in run.failures.items()]
    task: dict[str, Any] = {"postprocess": run.decoder, "stages": stages, "comparisons": []}
    if run.app is not None:
        task["task_results"] = {"source": run.app.source, "kind": run.app.kind, "stage": run.app.stage,
                                "samples": len(run.app.results), "sha256": run.app.sha256, "fields": _fields(run.app.results),
                                "results": writer.add_npz(f"task/{APP_STAGE}.npz", _arrays(run.app.results)),
                                "error": run.app_error}
    for pair in run.pairs:
        task["comparisons"].append({
            "id": pair.id, "reference": pair.reference, "candidate": pair.candidate, "purpose": pair.purpose,
            "table": writer.add_table(f"task/{pair.id}.csv", "task", pair.rows), "samples": len(pair.rows),
            "agreement": round(pair.agreement, 6), "disagreeing": pair.disagreeing})
    manifest["task"] = task


def _arrays(results: list[TaskResult]) -> dict[str, np.ndarray]:
    return {output_key(i, name): value for i, result in enumerate(results) for name, value in result.items()}


def _fields(results: list[TaskResult]) -> list[str]:
    return sorted({name for result in results for name in result})
