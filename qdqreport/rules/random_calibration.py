"""QR009: calibrated on random data: ModelOpt's log says so, or the calibration tensors are noise."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.calibration_data import (
    NoiseVerdict, lag1_autocorrelation, log_says_random, noise_inputs, structure_summary)
from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.analysis.target import TENSORRT
from qdqreport.fixes import (RANDOM_CALIBRATION_FIX, calibration_reader, input_layout, input_sizes, model_file,
                             python_command, quantize_static_command, quantizer_name, recorded_ort_options,
                             requantize_command, requantized_file, tensorrt_ort_options)
from qdqreport.rules._common import diverging_outputs, outputs_collapse, rounded
from qdqreport.rules._measured import calibration_measured
from qdqreport.testing.recipes import CLS_INPUT, input_stats, text_images

LOG_LINES_SHOWN = 5  # the warnings that mention the random data, not the whole log
TESTS = {"structure": "lag-1 autocorrelation of neighbouring values: ~0 for noise, high for the evaluation inputs",
         "uniformity": "the collector recorded no structure measure, or the evaluation inputs have none: every "
                       "channel and sample alike within sampling error and the values fit a noise law"}


def _log(random: bool, method: str, warnings: list[str]) -> dict:
    return {"format": 1, "total_nodes": 566, "quantized_nodes": 61, "quantizable_nodes": 64,
            "non_quantizable_partitions": 3, "nodes_to_quantize": 64, "quantized_type_counts": {"Conv": 53, "MatMul": 1},
            "random_calibration": random, "calibration_method": method, "already_quantized": False, "warnings": warnings}


def _random(b):
    b.artifact("modelopt_log", _log(True, "entropy", [
        "Calibration data not provided. Using random data for calibration.",
        "Please consider providing calibration data for better accuracy."]))


def _real_data_with_warnings(b):
    b.artifact("modelopt_log", _log(False, "max", ["Model already has dynamic shapes; using calibration_shapes",
                                                   "Skipping quantization of node Softmax@0: op type not supported"]))


def _stats(batch: np.ndarray, source: str, structure: bool, per_sample: bool) -> dict[str, Any]:
    """input_stats of a real NCHW batch, with the collector's structure measure unless *structure* is False
    (a bundle written before the collector recorded it)."""
    document = input_stats(CLS_INPUT, batch, source, per_sample=per_sample)
    if structure:
        document["inputs"][CLS_INPUT]["structure"] = structure_summary(
            [lag1_autocorrelation(sample.astype(np.float64)) for sample in batch])
    return document


def _crops(samples: int, seed: int) -> np.ndarray:
    """Text crops in [0,1] whose strokes are 5 pixels wide, as printed text is (neighbours correlate)."""
    images = text_images(samples, seed).astype(np.float64)
    padded = np.concatenate([images[..., :1].repeat(4, axis=-1), images], axis=-1).cumsum(axis=-1)
    return (padded[..., 4:] - np.concatenate([np.zeros_like(padded[..., :1]), padded[..., :-5]], axis=-1)) / 5


def _calibrated_on(kind: str, structure: bool = True):
    """Evaluation: text crops normalised to [-1, 1]; calibration: noise or crops, per *kind*; no ModelOpt log."""
    def build(b):
        evaluation = (_crops(24, seed=61) - 0.5) / 0.5
        rng = np.random.default_rng(62)
        calib = {"uniform": rng.random((16, 3, 48, 192)), "normal": rng.standard_normal((16, 3, 48, 192)),
                 "crops": (_crops(32, seed=63) - 0.5) / 0.5, "x255": _crops(32, seed=63) * 255.0,
                 "grey": np.repeat((_crops(32, seed=64)[:, :1] - 0.5) / 0.5, 3, axis=1)}[kind]
        b.manifest["inputs"]["calib"] = {"source": "calib.npy", "kind": "npy", "samples": len(calib),
                                         "tensors": [{"name": CLS_INPUT, "shape": [-1, 3, 48, 192], "dtype": "float32"}]}
        b.artifact("eval_stats", _stats(evaluation, "eval.npy", structure, per_sample=True))
        b.artifact("calib_stats", _stats(calib.astype(np.float32), "calib.npy", structure, per_sample=False))
    return build


def _random_and_noise(b):
    _random(b)
    _calibrated_on("uniform")(b)


@rule(id="QR009", slug="random-calibration", title="Calibrated on random data",
      examples=[Fires("no --calibration_data_path given", _random),
                Fires("ModelOpt log and noise calibration statistics agree", _random_and_noise),
                Fires("no log: calibration tensors are np.random.rand noise", _calibrated_on("uniform")),
                Fires("no log, no structure measure (older bundle): standard-normal noise",
                      _calibrated_on("normal", structure=False)),
                Quiet("real calibration data, unrelated warnings", _real_data_with_warnings),
                Quiet("no log: calibration on other crops, same preprocessing", _calibrated_on("crops")),
                Quiet("no log: calibration as raw 0-255 crops (a preprocessing error, QR003)", _calibrated_on("x255")),
                Quiet("no log, no structure measure: grey crops with identical channels",
                      _calibrated_on("grey", structure=False))])
def random_calibration(ctx: Context) -> Iterator[Finding]:
    """The calibration ran on random inputs: ModelOpt's log says so, or the calibration tensors are noise.

    Two sources. The ModelOpt log says it initialised its RandomDataProvider (no
    --calibration_data_path). Without the log, the calibration statistics (collect --calib) are
    judged by analysis/calibration_data.py: neighbouring values of noise are uncorrelated (lag-1
    autocorrelation ~0 where the evaluation inputs have 0.5-0.99) and fit a textbook law (real codes
    fed as floats, English letters' say, can be uncorrelated too, but fit none), and, for bundles without that
    measure, noise fits a textbook law (uniform, normal) identically in every channel and sample
    while real data vary. Token ids drawn uniformly over the vocabulary (np.random.randint) are noise
    where the evaluation's ids fit no law: real text's ids are Zipfian, whatever their neighbours'
    correlation. The finding names the test that decided. With both, the statistics corroborate
    the log.

    Severity follows the measured impact, as for every calibration cause: an error when an output
    collapses (or no comparison measured the quantized model), a warning when the outputs only
    degrade or agree.
    Measured by the calibration check where the bundle has one (collect/range_check.py: the QDQ model with every
    activation range taken from the evaluation inputs themselves): when even those ranges do not restore the
    outputs, the finding is capped under the other causes with that measurement (fixing the calibration alone will
    not restore them); when they do, it says so (rules/_measured.calibration_measured).

    Why it matters: random tensors calibrate every activation range to noise. The model
    quantizes without an error and then loses accuracy everywhere; nothing else in the graph
    looks wrong. A rescale does not fix it (noise has no preprocessing to undo).

    Fix: calibrate on real, preprocessed samples: ModelOpt --calibration_data_path (an .npy or
    .npz with the model's input names; a few hundred samples for a CNN), or an ONNX Runtime
    CalibrationDataReader that yields them.
    """
    log = ctx.modelopt_log
    noise = noise_inputs(ctx.calib_stats, ctx.eval_stats)
    if log_says_random(log):
        yield calibration_measured(ctx, _from_log(ctx, log, noise))
    elif noise:
        yield calibration_measured(ctx, _from_stats(ctx, noise))


def _severity(ctx: Context) -> str:
    """Severity from impact (analysis/agreement.py, as QR003's): an error when an output collapses, or when nothing
    measured the quantized model; a warning when its outputs only degrade or agree (the recipe is still wrong, and
    the fix stands, but it is not what failed the model: a layout model calibrated on noise changed 3 of 127 labels
    where its healthy controls change 0-1)."""
    return "error" if outputs_collapse(ctx) or ctx.comparison("quantization") is None else "warning"


def _from_log(ctx: Context, log: dict[str, Any], noise: list[NoiseVerdict]) -> Finding:
    diverged = bool(diverging_outputs(ctx, "quantization"))
    mentions = [w for w in log.get("warnings", []) if "random" in w.lower()][:LOG_LINES_SHOWN]
    return random_calibration.finding(
        title="ModelOpt calibrated on random data", severity=_severity(ctx), confidence=0.95,
        # Random ranges damage every quantized tensor; once outputs diverge this explains nearly all of it.
        score=0.9 if diverged else 0.6, subject="modelopt calibration", stage="quantization", tags=("root_cause",),
        summary="ModelOpt was run without --calibration_data_path and calibrated every activation range on random "
                f"inputs (calibration method {log.get('calibration_method') or 'unknown'})"
                + ("; the quantized model's outputs diverge" if diverged else "")
                + ("; the calibration statistics look like noise too" if noise else ""),
        evidence=(Metric("random calibration", "yes"), Metric("calibration method", log.get("calibration_method")),
                  *([Text("ModelOpt log: " + " | ".join(mentions))] if mentions else []),
                  *((_noise_table(noise),) if noise else ())),
        fixes=_fixes(ctx))


def _from_stats(ctx: Context, noise: list[NoiseVerdict]) -> Finding:
    diverged = bool(diverging_outputs(ctx, "quantization"))
    measured = ctx.comparison("quantization") is not None
    tests = sorted({v.test for v in noise})
    names = ", ".join(v.input for v in noise)
    # The structure test reads a direct property of noise; the uniformity test infers it from moments.
    confidence = 0.9 if tests == ["structure"] else 0.8
    return random_calibration.finding(
        title=f"Calibration data is random noise (input {names})",
        severity=_severity(ctx), confidence=confidence,
        score=0.9 if diverged else 0.6 if not measured else 0.2, subject="calibration data", stage="calibration",
        tags=("root_cause",),
        summary=f"The calibration tensors for input {names} are synthetic noise, not preprocessed samples: "
                + "; ".join(v.reason for v in noise)
                + ". Every activation range was calibrated on noise; no rescale of it is a fix"
                + ("; the quantized model's outputs diverge" if diverged else ""),
        evidence=(Text("Decided by the " + " and ".join(f"{t} test ({TESTS[t]})" for t in tests) + "."),
                  _noise_table(noise)),
        fixes=_fixes(ctx))


def _noise_table(noise: list[NoiseVerdict]) -> Table:
    return Table("Calibration inputs judged as noise",
                 ("input", "test", "calibration lag-1 autocorr.", "evaluation lag-1 autocorr.", "noise law",
                  "channel-mean spread (calib / eval, in std)"),
                 tuple((v.input, v.test, _value(v.calib_structure), _value(v.eval_structure), v.law or "–",
                        f"{_value(v.channel_spread)} / {_value(v.eval_channel_spread)}") for v in noise))


def _value(value: float | None) -> Any:
    return "–" if value is None else rounded(value, 3)


def _fixes(ctx: Context) -> tuple[Fix, ...]:
    # Any object with get_next() is a CalibrationDataReader to ONNX Runtime (its __subclasshook__); one sample per call.
    reader = ("import types, numpy as np; from onnxruntime.quantization import quantize_static; "
              + calibration_reader(RANDOM_CALIBRATION_FIX, (ctx.input_names or ("x",))[0], input_layout(ctx),
                                   input_sizes(ctx))
              + f"quantize_static({model_file(ctx, 'fp32')!r}, {requantized_file(ctx)!r}, "
              "types.SimpleNamespace(get_next=lambda: next(it, None)))")
    # The words name the tool the command below runs (a new user's ORT model was told "ModelOpt
    # --calibration_data_path" above a quantize_static command).
    tool = ("quantize_static, reading them one sample at a time" if quantizer_name(ctx) == "quantize_static"
            else "ModelOpt --calibration_data_path")
    first = Fix(f"Save real, preprocessed samples to {RANDOM_CALIBRATION_FIX} (the evaluation preprocessing, shape "
                f"[N, ...] per model input, a few hundred for a CNN) and re-quantize with them: {tool}",
                requantize_command(ctx, calibration=RANDOM_CALIBRATION_FIX))
    if ctx.target != TENSORRT:
        return (first, Fix("With ONNX Runtime quantize_static: a CalibrationDataReader whose get_next() yields those "
                           "samples ({input name: one preprocessed sample}), never np.random data", python_command(reader)))
    # quantize_static's defaults (UINT8 activations, non-zero zero points, INT32 biases) are what TensorRT rejects (QR004).
    if quantizer_name(ctx) != "quantize_static":
        return (first,)  # ModelOpt made the model: its command above is the fix, on TensorRT's recipe already
    recorded = recorded_ort_options(ctx)
    bias = any(isinstance(g, dict) and g.get("dtype") == "int32" for g in (ctx.precision or {}).get("qdq") or [])
    if not bias and (recorded["activation_type"], recorded["weight_type"]) == ("int8", "int8") and \
            recorded["extra_options"]["ActivationSymmetric"] and recorded["extra_options"]["WeightSymmetric"]:
        return (first,)  # the recorded settings, which the command above keeps, are TensorRT's already
    options = tensorrt_ort_options(recorded)
    return (first, Fix("For TensorRT, quantize_static with TensorRT-compatible settings: symmetric signed INT8 "
                       "activations and weights (zero points 0), biases left in float (QuantizeBias False), "
                       "calibrated on those samples",
                       quantize_static_command(ctx, options, RANDOM_CALIBRATION_FIX)))
