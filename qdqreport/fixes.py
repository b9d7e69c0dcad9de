"""Fix command lines for findings and the report: re-quantization with the tool that made the model (ONNX
Runtime's quantize_static or ModelOpt), trtexec rebuilds, calibration rewrites.

Rules attach these to their findings (findings.Fix); the report's per-layer section and the
configuration card (report/) print the same commands, so both import them from here. Every path
is the one the bundle's manifest recorded (fix commands run where the user ran collect), or a
readable placeholder such as <calib.npy>.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import PurePath
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from qdqreport.analysis.input_range import range_misses
from qdqreport.analysis.preprocessing import mismatched_inputs
from qdqreport.analysis.quantizer import (MODELOPT_DEFAULT_METHOD, ORT_DEFAULT_OPS, ORT_METHODS, TO_MODELOPT, TO_ORT,
                                          ModelOptRecipe, made_by_onnxruntime, modelopt_recipe, node_quantized,
                                          nodes_by_output, ort_options)
from qdqreport.analysis.trt_build_info import major_version
from qdqreport.analysis.upstream import calibrated_on_noise
from qdqreport.findings import Fix
from qdqreport.wording import plural

if TYPE_CHECKING:
    from qdqreport.analysis.context import Context


def model_file(ctx: Context, kind: str) -> str:
    """The FP32 or QDQ model path as the manifest recorded it (relative to where collect ran, absolute
    if given so, a bare name when --redact), else a placeholder: fix commands run where the user stands."""
    ref = (ctx.manifest.get("models") or {}).get(kind)
    if isinstance(ref, dict) and ref.get("path"):
        return str(ref["path"])
    return "<model.onnx>" if kind == "fp32" else "<model.quant.onnx>"


def model_arg(ctx: Context, kind: str) -> str:
    """model_file quoted for a shell command line."""
    return shell_quote(model_file(ctx, kind))


# The input types a command may cast a calibration array to (a bundle's recorded dtype is untrusted text).
NUMPY_INPUT_TYPES = frozenset({"float32", "float16", "float64", "int64", "int32", "int16", "int8", "uint8", "uint16"})


def calibration_file(ctx: Context) -> str:
    """The calibration tensor file (.npy/.npz) at the path the manifest recorded, else <calib.npy>."""
    calib = (ctx.manifest.get("inputs") or {}).get("calib")
    source = calib.get("source", "") if isinstance(calib, dict) else ""
    return source if isinstance(source, str) and source.endswith((".npy", ".npz")) else "<calib.npy>"


def calibration_rewrite(ctx: Context, input_name: str, expr: str) -> tuple[str, str | None]:
    """A one-line command that rewrites the calibration file as *expr* of its tensor x; returns (command, new file).

    The new file is written where the command runs; the old one is read where the bundle says it is. Calibration
    made by a data-loader function (calibration_feeds) has no file to rewrite: ("", None), the change is the
    function's to make and the re-quantization calls it again. A model of several inputs rewrites one array of
    an .npz (a placeholder <calib.npz> when none was recorded), never an .npy of one input."""
    if _calibrates_by_script(ctx):
        return "", None
    source = _calibration_source(ctx)
    calib, name, dtype = repr(source), repr(input_name), _input_dtype(ctx, input_name)
    if _npz(source):  # one array per model input
        code = (f"import numpy as np; d = dict(np.load({calib})); x = d[{name}]; "
                f"d[{name}] = ({expr}).astype(np.{dtype}); np.savez('calib_fixed.npz', **d)")
        return python_command(code), "calib_fixed.npz"
    code = f"import numpy as np; x = np.load({calib}); np.save('calib_fixed.npy', ({expr}).astype(np.{dtype}))"
    return python_command(code), "calib_fixed.npy"


def _input_dtype(ctx: Context, input_name: str) -> str:
    """The numpy type the model input takes, as collect recorded it (float32 where unrecorded): token ids stay
    integers (a float32 cast made a new user's tagger's fixed calibration file one quantize_static refused: "Actual:
    (tensor(float)), expected: (tensor(int64))")."""
    stats = ((ctx.eval_stats or {}).get("inputs") or {}).get(input_name) or {}
    dtype = stats.get("dtype") if isinstance(stats, dict) else None
    return dtype if dtype in NUMPY_INPUT_TYPES else "float32"


def _calibration_source(ctx: Context) -> str:
    """The calibration file a command reads: the recorded one, else a placeholder in the form the model needs
    (<calib.npz> keyed by input name for a model of several inputs)."""
    source = calibration_file(ctx)
    return "<calib.npz>" if source.startswith("<") and len(ctx.input_names) > 1 else source


def _npz(source: str) -> bool:
    """Whether a calibration file, or its placeholder (<calib.npz>), holds one array per model input. A placeholder's
    closing bracket once made a six-input VAD's corrected file an .npy that fed one input, the wrong one."""
    return source.rstrip(">").endswith(".npz")


def calibration_extend(ctx: Context) -> tuple[str, str | None]:
    """A one-line command that appends the samples of a file like the calibration file (<more_samples.npz> or .npy)
    to it; returns (command, new file). An .npz grows every input's array along that input's batch axis
    (input_layout), so each added sample feeds the whole model: growing one input of six left a streaming VAD's reader
    at its first 16 rows."""
    if _calibrates_by_script(ctx):
        return "", None
    source = _calibration_source(ctx)
    if not _npz(source):
        return calibration_rewrite(ctx, first_input_name(ctx, "input"),
                                   "np.concatenate([x, np.load('<more_samples.npy>')])")
    more = "<more_samples.npz>"
    axes = {name: axis for name, (axis, _) in input_layout(ctx).items() if axis not in (None, 0)}
    code = (f"import numpy as np; d = dict(np.load({source!r})); more = dict(np.load({more!r})); "
            f"axis = {axes!r}; np.savez('calib_fixed.npz', **{{k: np.concatenate([v, more[k]], axis.get(k, 0)) "
            "for k, v in d.items()})")
    return python_command(code), "calib_fixed.npz"


# quantize_static runs Entropy with 128 histogram bins for 128 levels (no option reaches them): one threshold to choose,
# MinMax's, so its ranges equal MinMax's (a new user's VAD: all 66, as the corpus' Silero controls byte for byte).
# Against outliers its Percentile (2048 bins, 99.999%) is the method that differs; ModelOpt's entropy is real.
def robust_method(ctx: Context) -> str:
    """The calibration method to try against outliers with the tool that made the model, in ModelOpt's names."""
    return "percentile" if made_by_ort(ctx) else "entropy"


def calibration_filter(ctx: Context, input_name: str, low: float, high: float) -> tuple[str, str | None]:
    """A one-line command that keeps the calibration samples whose input *input_name* stays within [*low*, *high*]
    (every array of an .npz cut along its first axis, the samples' axis) and says how many it kept; returns
    (command, new file). ("", None) where no file holds the samples one by one: calibration made by a data-loader
    function, or an .npy of one input is rewritten by calibration_rewrite's caller instead."""
    if _calibrates_by_script(ctx):
        return "", None
    source = calibration_file(ctx)
    if not source.endswith(".npz"):
        return "", None
    code = (f"import numpy as np; d = dict(np.load({source!r})); x = d[{input_name!r}]; flat = x.reshape(len(x), -1); "
            f"keep = (flat >= {low:.6g}).all(1) & (flat <= {high:.6g}).all(1); "
            "np.savez('calib_fixed.npz', **{k: v[keep] for k, v in d.items()}); "
            "print(int(keep.sum()), 'of', len(keep), 'calibration samples kept')")
    return python_command(code), "calib_fixed.npz"


def python_command(code: str) -> str:
    """`python -c "code"` for a POSIX shell; paths inside *code* should be Python literals (repr)."""
    if "$" in code or "`" in code:  # single quotes keep these literal (shlex reads \$ in "..." differently from sh)
        return "python -c " + shlex.quote(code)
    # Inside "..." only \ and " need a backslash (sh and shlex agree on those two).
    return 'python -c "' + re.sub(r'([\\"])', r"\\\1", code) + '"'


def node_patterns(names: Iterable[str]) -> list[str]:
    """ModelOpt matches --nodes_to_exclude with re.match (a prefix match), so anchor with $ (placeholders stay)."""
    return [name if name.startswith("<") else re.escape(name) + "$" for name in sorted(set(names))]


@dataclass(frozen=True)
class Change:
    """What a fix changes in the quantization, in neither quantizer's words: requantize_command writes it for the
    quantizer that made the model (analysis/quantizer.py)."""

    exclude_nodes: tuple[str, ...] = ()  # node names kept out of INT8
    exclude_op_types: tuple[str, ...] = ()  # op types kept out of INT8
    calibration_method: str | None = None  # ModelOpt's names: max | entropy (quantize_static: MinMax | Entropy)
    float_part_fp32: bool = False  # ModelOpt's float part in FP32 instead of FP16 (quantize_static keeps FP32)
    fp32_op_types: tuple[str, ...] = ()  # op types ModelOpt keeps out of its FP16 conversion
    per_channel_weights: bool = False  # one scale per output channel of each weight (ModelOpt's default already)
    activation_bits: int = 8  # 16: quantize_static's QInt16 activations (ModelOpt's ONNX PTQ has none)


def requantize_command(ctx: Context, change: Change = Change(), calibration: str | None = None,
                       output: str | None = None, recorded: bool = False, reduce_range: bool = False) -> str:
    """Re-quantize this bundle's FP32 model with *change*, with the tool that made its QDQ model: ONNX Runtime's
    quantize_static (its recorded options kept) when the graph says so, else ModelOpt 0.47's ONNX PTQ.

    Node and op-type exclusions are first resolved to what that quantizer can act on (resolve_exclusions): a node
    whose INT8 input another node's Q/DQ puts there is replaced by that node; exclusion_note says so in words.
    *reduce_range*: quantize_static's 7-bit weights (ModelOpt has no such option)."""
    change = resolve_exclusions(ctx, change).change
    if made_by_ort(ctx) and _ort_can(change):
        return quantize_static_command(ctx, _ort_changed(ctx, change), calibration, output, reduce_range=reduce_range,
                                       method_chosen=bool(change.calibration_method), recorded=recorded)
    return modelopt_command(ctx, change, calibration, output, recorded=recorded)


def _with_corrected(ctx: Context, calibration: str | None, recorded: bool = False) -> tuple[str | None, str | None]:
    """(the calibration file a re-quantization reads, the corrected file when that is it). Where another finding found
    the calibration data unlike the evaluation data, every re-quantization reads the corrected file that finding's fix
    writes: re-quantizing on the data just called wrong changes nothing (a new user's document unwarper calibrated on
    x255 pages: QR001's and QR004's printed fixes kept its 39 px error)."""
    if calibration is not None or recorded:  # recorded: the configuration as it was made (the config card)
        return calibration, None
    corrected = corrected_calibration(ctx)
    return corrected, corrected


def _reads_corrected(file: str | None, commented: bool) -> str:
    """The shell comment that says a command reads the corrected calibration file, made by another finding's fix."""
    if file is None:
        return ""
    # No quote character in it: a comment is copied into shells and split by tools that read quotes anywhere.
    note = f"reads {file}, the corrected calibration data that the fix of the calibration finding writes: make it first"
    return f"; it {note}" if commented else f"  # {note}"


def initializer_weights_command(ctx: Context) -> str:
    """Move the FP32 model's Constant-node tensors into initializers (a new file beside it), then re-quantize it with
    ModelOpt as before: ModelOpt leaves weights it does not read as initializers per tensor (a new user's PP-OCRv4
    DBNet, exported by paddle2onnx with every weight a Constant node: all 64 Conv weights per tensor, and the log's
    52 warnings "Expected bias ... to be an initializer")."""
    source = model_file(ctx, "fp32")
    placeholder = source.startswith("<")  # no path recorded: "<model.onnx>" stays a placeholder the user fills
    target = f"{PurePath(source.strip('<>')).stem}_initializers.onnx"
    target = f"<{target}>" if placeholder else target
    code = (f"import onnx; m = onnx.load({json.dumps(source)}); c = [n for n in m.graph.node if n.op_type == "
            '"Constant" and n.attribute and n.attribute[0].name == "value"]; '
            "[m.graph.initializer.append(onnx.helper.get_attribute_value(n.attribute[0])) or "
            'setattr(m.graph.initializer[-1], "name", n.output[0]) for n in c]; [m.graph.node.remove(n) for n in c]; '
            f'onnx.save(m, {json.dumps(target)}); print(len(c), "Constant nodes moved into initializers")')
    return f"python -c {shell_quote(code)} && " + modelopt_command(ctx, onnx_path=target)


def quantizer_name(ctx: Context) -> str:
    """How fix titles name the re-quantization tool requantize_command writes for."""
    return "quantize_static" if made_by_ort(ctx) else "ModelOpt"


def made_by_ort(ctx: Context) -> bool:
    """Whether onnxruntime's quantize_static made the QDQ model (analysis/quantizer.made_by_onnxruntime)."""
    return made_by_onnxruntime(ctx.precision, ctx.modelopt_log)


def current_calibration_method(ctx: Context) -> str:
    """The calibration method that made the model, in ModelOpt's names (max | entropy): ModelOpt's log says it;
    otherwise each tool's default (ModelOpt: entropy; quantize_static: MinMax, which the graph does not record)."""
    logged = (ctx.modelopt_log or {}).get("calibration_method")
    if logged:
        return str(logged)
    return "max" if made_by_ort(ctx) else "entropy"


HISTOGRAM_METHODS = frozenset({"entropy", "percentile", "distribution"})
SHAPES_DIFFER_NOTE = ("ONNX Runtime's Entropy, Percentile and Distribution calibrators stack each tensor over the "
                      "calibration samples and fail on samples of different shapes, as these are: pad or crop them to "
                      "one shape to use one")


def histogram_methods_fail(ctx: Context) -> bool:
    """Whether a quantize_static command with a histogram calibration method would fail on this calibration set: the
    model was made by ONNX Runtime and a calibration input's samples differ in shape (calib_stats `shapes_differ`;
    ValueError "inhomogeneous shape" on a new user's MiniMol graphs and on LAC's sentences)."""
    inputs = (ctx.calib_stats or {}).get("inputs") if isinstance(ctx.calib_stats, dict) else None
    return made_by_ort(ctx) and isinstance(inputs, dict) and any(
        isinstance(entry, dict) and entry.get("shapes_differ") is True for entry in inputs.values())


def method_name(ctx: Context, method: str) -> str:
    """*method* (ModelOpt's name) as the tool requantize_command writes for calls it."""
    return ORT_METHODS.get(TO_ORT.get(method, method), method) if made_by_ort(ctx) else method


def excluded_precision(ctx: Context) -> str:
    """The precision nodes kept out of INT8 run in: FP16 under ModelOpt's default float part, else the float part the
    recipe keeps (FP32 under quantize_static, which never converts it, or ModelOpt's --high_precision_dtype)."""
    if made_by_ort(ctx):
        return "FP32"
    return (recipe(ctx).high_precision_dtype or "fp16").upper()


def recipe(ctx: Context) -> ModelOptRecipe:
    """The ModelOpt options this bundle shows its model was made with (analysis/quantizer.modelopt_recipe)."""
    return modelopt_recipe(ctx.precision, ctx.modelopt_log, ctx.manifest, ctx.modelopt_log_text)


def modelopt_command(ctx: Context, change: Change = Change(), calibration: str | None = None,
                     output: str | None = None, recorded: bool = False, onnx_path: str | None = None) -> str:
    """A ModelOpt 0.47 ONNX PTQ command line for this bundle's FP32 model with *change*, on the recipe the bundle shows
    (recipe(ctx): the float part's dtype, the logged calibration method, the exclusions a confirm recorded,
    --calibration_eps cpu when the run calibrated on the CPU provider alone), so that only *change* differs.

    When the bundle holds ModelOpt's log, the console output is saved as requantized_log(ctx) (ModelOpt's own --log_file
    stops before the calibration lines), the log recollect_command gives the new collect."""
    shown = recipe(ctx)
    calibration, corrected = _with_corrected(ctx, calibration, recorded)
    extra = []
    nodes = [*shown.exclude_nodes, *change.exclude_nodes]
    if nodes:
        extra += ["--nodes_to_exclude", *node_patterns(nodes)]
    op_types = sorted({*shown.exclude_op_types, *change.exclude_op_types})
    if op_types:
        extra += ["--op_types_to_exclude", *op_types]
    method = change.calibration_method or TO_MODELOPT.get(shown.calibration_method or "", shown.calibration_method)
    if method and (change.calibration_method or method != MODELOPT_DEFAULT_METHOD):
        extra += ["--calibration_method", method]
    high = "fp32" if change.float_part_fp32 else shown.high_precision_dtype
    if high:
        extra += ["--high_precision_dtype", high]
    if change.fp32_op_types:
        extra += ["--op_types_to_exclude_fp16", *sorted(set(change.fp32_op_types))]
    if shown.calibration_eps:
        extra += ["--calibration_eps", *shown.calibration_eps]
    args = ["python", "-m", "modelopt.onnx.quantization", f"--onnx_path={onnx_path or model_file(ctx, 'fp32')}",
            f"--quantize_mode={shown.quantize_mode}", f"--calibration_data_path={calibration or calibration_file(ctx)}",
            *extra, f"--output_path={output or requantized_file(ctx)}"]
    command = " ".join(shell_quote(a) for a in args)
    command = command + f" 2>&1 | tee {shell_quote(requantized_log(ctx))}" if ctx.modelopt_log else command
    return command + _reads_corrected(corrected, False)


def requantized_log(ctx: Context) -> str:
    """The console log modelopt_command saves beside requantized_file (in the folder it runs in)."""
    return re.sub(r"\.onnx$", ".log", requantized_file(ctx))


# quantize_static writes nothing of its calibration method into the graph: a command that keeps the user's own method
# can only keep the default, and says so where the user copies it (a Percentile-calibrated CRAFT re-quantized by a
# printed fix with MinMax changed 4 of 24 images instead of 2).
UNRECORDED_METHOD = ("  # calibrate_method left at MinMax, the default (the graph does not record the method): "
                     "add calibrate_method=CalibrationMethod.Percentile or .Entropy if that is what you used")


def quantize_static_command(ctx: Context, options: dict[str, Any], calibration: str | None = None,
                            output: str | None = None, reduce_range: bool = False, method_chosen: bool = False,
                            recorded: bool = False) -> str:
    """A one-line ONNX Runtime quantize_static call (QDQ) for this bundle's FP32 model with *options*
    (analysis/quantizer.ort_options' keys), reading the calibration file one sample per step. Unless the fix chose
    the calibration method (*method_chosen*), the line ends in a shell comment: the method is the default, not
    necessarily the user's (UNRECORDED_METHOD)."""
    calibration, corrected = _with_corrected(ctx, calibration, recorded)
    rows = (calibration_reader(calibration, first_input_name(ctx, "input"), input_layout(ctx), input_sizes(ctx))
            if calibration
            else calibration_feeds(ctx))
    types = {"int8": "QuantType.QInt8", "uint8": "QuantType.QUInt8", "int16": "QuantType.QInt16",
             "uint16": "QuantType.QUInt16"}
    kwargs = [f"per_channel={bool(options['per_channel'])}", f"weight_type={types[options['weight_type']]}",
              f"activation_type={types[options['activation_type']]}"]
    if options.get("op_types_to_quantize") and set(options["op_types_to_quantize"]) != ORT_DEFAULT_OPS:
        kwargs.append(f"op_types_to_quantize={list(options['op_types_to_quantize'])!r}")  # left out: the default
    if options.get("nodes_to_exclude"):
        kwargs.append(f"nodes_to_exclude={list(options['nodes_to_exclude'])!r}")
    method = options.get("calibrate_method") or "minmax"
    if method != "minmax":  # MinMax is quantize_static's default
        kwargs.append(f"calibrate_method=CalibrationMethod.{ORT_METHODS.get(method, method.capitalize())}")
    if options.get("extra_options"):  # written out whole: WeightSymmetric's default depends on the weight type
        kwargs.append(f"extra_options={dict(options['extra_options'])!r}")
    if reduce_range:
        kwargs.append("reduce_range=True")
    source = repr(model_file(ctx, "fp32"))
    # Per-channel weights get DequantizeLinear nodes with an axis only opset 13 has: an older model is converted in
    # memory first (quantize_static takes the ModelProto), whichever fix asks for per-channel weights or keeps the
    # user's (a new user's opset-11 CenterNet: QR003's and QR009's re-quantizations wrote models ORT refused to load).
    if options.get("to_opset13") or options.get("per_channel"):
        rows += (f"import onnx; from onnx import version_converter; m = onnx.load({source}); v = max([o.version for o in "
                 "m.opset_import if o.domain in ('', 'ai.onnx')] or [13]); m = m if v >= 13 else "
                 "version_converter.convert_version(m, 13); ")
        source = "m"
    code = ("import types, numpy as np; from onnxruntime.quantization import CalibrationMethod, QuantFormat, "
            "QuantType, quantize_static; " + rows
            + f"quantize_static({source}, {output or requantized_file(ctx)!r}, "
            "types.SimpleNamespace(get_next=lambda: next(it, None)), quant_format=QuantFormat.QDQ, "
            + ", ".join(kwargs) + ")")
    comment = "" if method_chosen or method != "minmax" else UNRECORDED_METHOD
    return python_command(code) + comment + _reads_corrected(corrected, bool(comment))


def tensorrt_ort_options(options: dict[str, Any]) -> dict[str, Any]:
    """quantize_static *options* made what TensorRT accepts (the corpus' *_healthy_trt_nobias recipe): signed INT8
    activations and weights, symmetric (zero points 0), biases left in float (QuantizeBias False: TensorRT rejects INT32
    bias DequantizeLinear nodes); the op types, nodes and per-channel choice kept."""
    return {**options, "activation_type": "int8", "weight_type": "int8",
            "extra_options": {**options["extra_options"], "ActivationSymmetric": True, "WeightSymmetric": True,
                              "QuantizeBias": False}}


def recorded_ort_options(ctx: Context) -> dict[str, Any]:
    """quantize_static's options as this bundle's QDQ graph records them (analysis/quantizer.ort_options)."""
    return ort_options(ctx.precision or {})


def _ort_can(change: Change) -> bool:
    # quantize_static never converts the float part, so ModelOpt's float-part changes have no quantize_static form;
    # a placeholder node name is written for ModelOpt's regex.
    return (not change.float_part_fp32 and not change.fp32_op_types
            and not any(n.startswith("<") for n in change.exclude_nodes))


def can_requantize(ctx: Context, change: Change) -> bool:
    """Whether the tool that made this bundle's QDQ model can make *change* (16-bit activations: quantize_static
    only)."""
    return change.activation_bits == 8 or made_by_ort(ctx)


def _ort_changed(ctx: Context, change: Change) -> dict[str, Any]:
    options = recorded_ort_options(ctx)
    options["nodes_to_exclude"] = list(dict.fromkeys([*options["nodes_to_exclude"], *sorted(set(change.exclude_nodes))]))
    excluded = set(change.exclude_op_types)
    kept = [op for op in options["op_types_to_quantize"] if op not in excluded]
    if kept or not excluded:
        options["op_types_to_quantize"] = kept
    else:
        # Every op type it quantizes excluded: an empty list is quantize_static's default, every op type (a new user's
        # speaker encoder, its one Gemm "kept in FP32", came out with the Gemm quantized again). Exclude those nodes
        # by name instead.
        named = [n["name"] for n in (ctx.precision or {}).get("nodes", []) if n.get("op_type") in excluded]
        options["nodes_to_exclude"] = list(dict.fromkeys([*options["nodes_to_exclude"], *named]))
    if change.calibration_method:
        options["calibrate_method"] = TO_ORT.get(change.calibration_method, change.calibration_method)
    if change.activation_bits == 16:
        # quantize_static writes QInt16 Q/DQ pairs at opset 21 (it converts the model; ONNX Runtime 1.32 runs them):
        # a new user's PP-OCRv6 detector, 32 of 200 samples changed in INT8, 25 with 16-bit activations.
        options["activation_type"] = "int16"
    if change.per_channel_weights and not options["per_channel"]:
        options["per_channel"] = True
        # quantize_static writes per-channel DequantizeLinear nodes with an axis only opset 13 has: on an older model
        # ONNX Runtime refuses the result (a new user's PP-OCRv5 recognizer, opset 11, INVALID_GRAPH as printed).
        options["to_opset13"] = True
    return options


def calibration_reader(calib: str, input_name: str, layout: Mapping[str, tuple[int | None, int]] | None = None,
                       sizes: Mapping[str, int] | None = None) -> str:
    """Python that sets `it`, an iterator of one-sample feeds over the calibration file *calib* (an .npz holds one
    array per input; an .npy is *input_name*'s): any object with get_next() is a CalibrationDataReader to ONNX
    Runtime, and one sample per call is how collect read the file.

    *layout* (input_layout) maps each model input to (batch axis, rank of one sample): a sample is cut as collect cut
    it (collect/inputs.py), keeping a batch dimension of 1 on the batch axis, and an input with no batch axis is
    taken whole, its sample i when the file stacks one per sample (a new user's key CNN, [frames, 105] with no batch
    axis: the x[i:i + 1] of every command fed a rank-3 array to a rank-2 input and quantize_static refused it)."""
    if layout and (any(axis != 0 for axis, _ in layout.values()) or any(n != 1 for n in (sizes or {}).values())):
        return _cut_reader(calib, input_name, layout, sizes or {})
    if calib.endswith(".npz"):
        # Each array read once: an NpzFile reads (and decompresses) an array again at every d[k], which made a 512-row
        # calibration's reader quadratic (a new user's fix: 197 s, 7.5 s with the arrays read once).
        return (f"d = dict(np.load({calib!r})); it = iter([{{k: v[i:i + 1] for k, v in d.items()}} "
                "for i in range(len(next(iter(d.values()))))]); ")
    return f"x = np.load({calib!r}); it = iter([{{{input_name!r}: x[i:i + 1]}} for i in range(len(x))]); "


def _cut_reader(calib: str, input_name: str, layout: Mapping[str, tuple[int | None, int]],
                sizes: Mapping[str, int]) -> str:
    """calibration_reader's form for inputs whose batch axis is not the first (or absent), or whose sample holds more
    than one row along it (*sizes*: a streaming model's recurrent caches of batch 2 beside a frame of batch 1, as
    collect cut them; `v[i:i + 1]` fed a new user's GTCRN one cache row where it takes 2): one expression an input."""
    var = "d" if calib.endswith(".npz") else "x"
    names = list(layout) if var == "d" else [input_name]

    def array(name: str) -> str:
        return f"d[{name!r}]" if var == "d" else "x"

    def cut(name: str) -> str:
        axis, rank = layout.get(name, (0, 0))
        if axis is None:  # no batch axis: one value for every sample, or one stacked per sample on a new axis 0
            return f"({array(name)} if {array(name)}.ndim == {rank} else {array(name)}[i])"
        size = sizes.get(name, 1)
        if size != 1:
            return (f"{array(name)}[i * {size}:(i + 1) * {size}]" if axis == 0
                    else f"np.take({array(name)}, range(i * {size}, (i + 1) * {size}), axis={axis})")
        return f"{array(name)}[i:i + 1]" if axis == 0 else f"np.take({array(name)}, [i], axis={axis})"

    counted = next((n for n in names if layout.get(n, (0, 0))[0] is not None), names[0])
    axis, rank = layout.get(counted, (0, 0))
    per_sample = sizes.get(counted, 1)
    # Samples along the counted input's batch axis; with no batch axis anywhere, one a stacked row, else one sample.
    count = ((f"{array(counted)}.shape[{axis}]" + (f" // {per_sample}" if per_sample != 1 else "")) if axis is not None
             else f"len({array(counted)}) if {array(counted)}.ndim > {rank} else 1")
    load = f"d = dict(np.load({calib!r})); " if var == "d" else f"x = np.load({calib!r}); "
    feed = "{" + ", ".join(f"{n!r}: {cut(n)}" for n in names) + "}"
    return f"{load}it = iter([{feed} for i in range({count})]); "


def _recorded_tensors(ctx: Context, role: str) -> list[tuple[str, int | None, list[Any]]]:
    """The (name, batch axis, shape of one sample) of each model input collect recorded for *role* (calib, eval). A
    stranger's manifest: only a name, an int or null axis and a list shape are read."""
    recorded = (ctx.manifest.get("inputs") or {}).get(role)
    tensors = recorded.get("tensors") if isinstance(recorded, dict) else None
    return [(t["name"], t.get("batch_axis", 0), t["shape"]) for t in tensors or ()
            if isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("shape"), list)
            and (t.get("batch_axis", 0) is None or type(t.get("batch_axis", 0)) is int)]


def input_layout(ctx: Context) -> dict[str, tuple[int | None, int]]:
    """Each model input's (batch axis, rank of one sample) as collect recorded them (the calibration's, else the
    evaluation's: the same model inputs, cut the same way)."""
    for role in ("calib", "eval"):
        layout = {name: (axis, len(shape)) for name, axis, shape in _recorded_tensors(ctx, role)}
        if layout:
            return layout
    return {}


def input_sizes(ctx: Context) -> dict[str, int]:
    """Each model input's length along its batch axis in one sample, as collect recorded it (1 but for inputs such as a
    streaming model's caches of batch 2)."""
    for role in ("calib", "eval"):
        sizes = {name: shape[axis] for name, axis, shape in _recorded_tensors(ctx, role)
                 if axis is not None and 0 <= axis < len(shape) and type(shape[axis]) is int and shape[axis] > 0}
        if sizes:
            return sizes
    return {}


def calibration_feeds(ctx: Context) -> str:
    """Python that sets `it` to the calibration feeds as collect read them, every model input in each: the recorded
    data-loader script's function (--calib loader.py:load_calib: variable-length samples no single array holds), else
    the recorded .npy/.npz (calibration_reader). Without a recorded calibration, a placeholder in the form the model
    needs: <calib.npy> for one input; for several, the evaluation's own data-loader script with a <load_calib>
    function to write when the evaluation came from one (its feeds may differ in length), else <calib.npz> keyed by
    input name. An .npy of one input never feeds a model of several (a new user's LAC: `length` fed, `token_ids`
    missing, quantize_static refused to run)."""
    script = _calibrates_by_script(ctx)
    if script is not None:
        return script_reader(*script)
    return calibration_reader(_calibration_source(ctx), first_input_name(ctx, "input"), input_layout(ctx),
                              input_sizes(ctx))


def _calibrates_by_script(ctx: Context) -> tuple[str, str] | None:
    """(script, function) that makes the calibration feeds (calibration_feeds): the recorded --calib script's, else,
    with no calibration recorded, a model of several inputs evaluated from a script: that script's <load_calib>."""
    inputs = ctx.manifest.get("inputs") or {}
    calib, evaluation = (inputs.get(k) if isinstance(inputs.get(k), dict) else {} for k in ("calib", "eval"))
    if calib.get("kind") == "script" and isinstance(calib.get("source"), str):
        return calib["source"], calib.get("function") or _argv_function(ctx, "--calib")
    if (not calib and len(ctx.input_names) > 1 and evaluation.get("kind") == "script"
            and isinstance(evaluation.get("source"), str)):
        return evaluation["source"], TO_WRITE
    return None


TO_WRITE = "<load_calib>"  # a function the user writes in the evaluation's own loader script (no calibration recorded)


def script_reader(script: str, function: str) -> str:
    """Python that sets `it` to the feeds *function* of the data-loader *script* returns, as collect read them
    (collect/inputs.py: the function called, or the object iterated; every value made an array). TO_WRITE: a
    load_calib the user is to write there, looked up so that its absence stops the command with what to write (a new
    user ran the printed `[...]['<load_calib>']` and got a bare KeyError)."""
    if function == TO_WRITE:
        lookup = (f"f = runpy.run_path({script!r}).get('load_calib'); assert f, {script!r} + ': write load_calib() "
                  "there, returning calibration feeds ({input: array} per sample) from training data, not the "
                  "evaluation set; then run this again'; ")
    else:
        lookup = f"f = runpy.run_path({script!r})[{function!r}]; "
    return ("import runpy; " + lookup
            + "it = iter([{k: np.asarray(v) for k, v in s.items()} for s in (f() if callable(f) else f)]); ")


def _argv_function(ctx: Context, option: str) -> str:
    """The data-loader function *option* named in the recorded collect command (bundles that predate the manifest's
    `function`), else Polygraphy's default load_data."""
    argv = (ctx.manifest.get("collector") or {}).get("argv") or []
    for previous, arg in zip(["", *argv], argv):
        value = arg if previous == option else arg.split("=", 1)[1] if arg.startswith(option + "=") else None
        if isinstance(value, str) and ".py:" in value:  # FILE.py[:func], as collect/script.split_spec reads it
            return value.rsplit(":", 1)[1] or "load_data"
        if isinstance(value, str):
            break
    return "load_data"


def first_input_name(ctx: Context, missing: str) -> str:
    """The model input a single-tensor calibration file holds: the first one the statistics or the manifest name,
    else *missing*."""
    names = sorted((ctx.eval_stats or {}).get("inputs", {})) or list(ctx.input_names)
    return names[0] if names else missing


def requantized_file(ctx: Context) -> str:
    """The file modelopt_command writes (in the folder it runs in)."""
    source = model_file(ctx, "fp32")
    return f"{PurePath(source).stem}.quant.onnx" if not source.startswith("<") else "<model.quant.onnx>"


def recollect_command(ctx: Context) -> str:
    """`qdqreport collect` again on the re-quantized model, with the inputs the bundle recorded, into a new folder.

    The recorded collect command is reused (its paths are relative to where it ran); a bundle made by
    `qdqreport demo` (or an unknown tool) gets a collect command built from the manifest's paths."""
    argv = [str(a) for a in (ctx.manifest.get("collector") or {}).get("argv") or []]
    log = requantized_log(ctx) if ctx.modelopt_log and not made_by_ort(ctx) else None
    if len(argv) > 2 and argv[1] == "collect":
        # The re-quantization read the corrected calibration another finding's fix wrote: collected with the old
        # file, the new bundle would name the old calibration's fault again (a new user's re-collect did).
        swapped = _swap_collect_args(argv[:1] + ["collect"] + argv[2:], requantized_file(ctx), log,
                                     corrected_calibration(ctx))
        return " ".join(shell_quote(a) for a in swapped)
    return _built_collect(ctx, requantized_file(ctx), ["--modelopt-log", log] if log else [],
                          "qdqreport-bundle-requantized")


def per_layer_command(ctx: Context) -> str:
    """The recorded `qdqreport collect` again with --per-layer, into a new folder: the same models, to localise where
    the error is born (built from the manifest's paths when the bundle recorded no collect command)."""
    argv = [str(a) for a in (ctx.manifest.get("collector") or {}).get("argv") or []]
    if len(argv) > 2 and argv[1] == "collect":
        renamed = [_renamed_output(a, "-per-layer") if i and argv[i - 1] in ("-o", "--output") else
                   f"--output={_renamed_output(a[9:], '-per-layer')}" if a.startswith("--output=") else a
                   for i, a in enumerate(argv)]
        return " ".join(shell_quote(a) for a in renamed + ([] if "--per-layer" in argv else ["--per-layer"]))
    return _built_collect(ctx, model_file(ctx, "qdq"), ["--per-layer"], "qdqreport-bundle-per-layer")


def _built_collect(ctx: Context, qdq: str, options: list[str], output: str) -> str:
    """A `qdqreport collect` built from the manifest's paths (the bundle recorded no collect command: `qdqreport demo`
    or another tool made it): the FP32 model, *qdq*, the evaluation inputs, *options*, into *output*."""
    inputs = (ctx.manifest.get("inputs") or {}).get("eval")
    source = inputs.get("source") if isinstance(inputs, dict) else None
    args = ["qdqreport", "collect", "--fp32", model_file(ctx, "fp32"), "--qdq", qdq,
            "--inputs", str(source) if source else "<inputs.npz>", *options, "-o", output]
    return " ".join(shell_quote(a) for a in args)


def _swap_collect_args(argv: list[str], qdq: str, log: str | None = None, calib: str | None = None) -> list[str]:
    """*argv* with --qdq replaced by *qdq*, --modelopt-log by *log* (the new quantization's; the option is dropped
    without one: the old run's log would describe the old model), --calib by *calib* when given (the corrected
    calibration file) and the output folder renamed, so the first bundle stays."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        previous = argv[i - 1] if i else ""
        if calib is not None and (previous == "--calib" or arg.startswith("--calib=")):
            out.append(f"--calib={calib}" if arg.startswith("--calib=") else calib)
            continue
        if arg == "--modelopt-log" and log is None:
            continue
        if previous == "--modelopt-log" or arg.startswith("--modelopt-log="):
            if log is None:
                continue
            arg = f"--modelopt-log={log}" if arg.startswith("--modelopt-log=") else log
        elif previous == "--qdq":
            arg = qdq
        elif previous in ("-o", "--output"):
            arg = _renamed_output(arg)
        elif arg.startswith("--qdq="):
            arg = f"--qdq={qdq}"
        elif arg.startswith("--output="):
            arg = f"--output={_renamed_output(arg[9:])}"
        out.append(arg)
    return out


def _renamed_output(path: str, tail: str = "-requantized") -> str:
    stem, dot, suffix = path.rstrip("/").rpartition(".") if path.endswith(".zip") else (path.rstrip("/"), "", "")
    return f"{stem}{tail}{dot}{suffix}"


def exclusion(nodes: Iterable[str] = (), op_types: Iterable[str] = ()) -> Change:
    """The change that keeps *nodes* (by name) and every node of *op_types* out of INT8."""
    return Change(exclude_nodes=tuple(sorted(set(nodes))), exclude_op_types=tuple(sorted(set(op_types))))


# The op types ModelOpt 0.47's INT8 mode quantizes (so its --nodes_to_exclude can act on them): ONNX Runtime's QDQ and
# QLinear registries (1.32) plus the ones ModelOpt registers, less the copy, reduction and activation ops its
# configure_ort removes (Softmax, Sigmoid, Relu, Concat, Reshape, Transpose, ...: modelopt/onnx/quantization/ort_utils.py).
# ModelOpt quantizes inputs only (OpTypesToExcludeOutputQuantization lists every op type), and its Q/DQ pairs are shared
# (DedicatedQDQPair False): a Softmax reading INT8 there reads a pair ModelOpt put on another consumer's input.
MODELOPT_QUANTIZED_OPS = frozenset({
    "Add", "AveragePool", "BatchNormalization", "Clip", "Conv", "ConvTranspose", "CumSum", "Flatten", "Gemm",
    "GlobalAveragePool", "HardSwish", "LRN", "LayerNormalization", "MatMul", "MaxPool", "Mul", "Resize", "TopK"})
NOTE_PAIRS = 4  # redirected nodes named in words (the command names them all)


@dataclass(frozen=True)
class Redirect:
    """A named node the quantizer cannot exclude, and the nodes whose exclusion frees its INT8 input instead."""

    node: str
    op_type: str
    producer: str | None  # the node whose quantized output it reads, when that node is among *instead*
    producer_op_type: str
    instead: tuple[str, ...]  # the producer and/or the other consumers that put the Q/DQ pair on its input
    itself: bool = False  # the quantizer quantizes the node itself too: the command excludes it as well


@dataclass(frozen=True)
class Resolved:
    change: Change  # what the command excludes
    quantizer: str  # quantize_static | ModelOpt
    redirects: tuple[Redirect, ...] = ()
    unreachable: tuple[tuple[str, str], ...] = ()  # (node, op type) named but not acted on by the command
    option: str = ""  # the quantizer's option for excluding nodes
    # (node, op type) whose INT8 input no op type of the command's op_types_to_quantize puts there: the recorded graph
    # quantized it, so the user's list held an op type the graph cannot show; the command, without it, keeps it float
    unlisted: tuple[tuple[str, str], ...] = ()
    # (node, op type) named but already float in the recorded graph (no INT8 input or weight): excluding it again
    # changes nothing; a head's INT8 output is its readers' input pair
    already: tuple[tuple[str, str], ...] = ()


def resolve_exclusions(ctx: Context, change: Change) -> Resolved:
    """*change* with its exclusions made actionable for the quantizer requantize_command writes for.

    quantize_static excludes by name only nodes of the op types it quantizes (the recorded op_types_to_quantize);
    ModelOpt only nodes of the op types it quantizes (MODELOPT_QUANTIZED_OPS). A named node outside them (a Softmax
    after an INT8 MatMul) gets its INT8 input from a Q/DQ pair another node puts there: quantize_static quantizes a
    quantized node's output, so its producer (found through the Q/DQ pair and shape-only ops: the precision summary's
    pairs list their consumers through them); under either tool, any other consumer of the same pair that is quantized.
    Those nodes replace it; a node none can free is listed as unreachable, never dropped silently. An op type the
    quantizer never quantizes is resolved node by node the same way (its INT8-fed nodes)."""
    ort = made_by_ort(ctx) and _ort_can(change)
    return resolve_for(ctx.precision or {}, "onnxruntime" if ort else "modelopt", change)


def resolve_for(precision: dict[str, Any], quantizer: str, change: Change) -> Resolved:
    """resolve_exclusions for the quantizer *quantizer* (onnxruntime | modelopt) and the precision summary *precision*:
    what `qdqreport confirm` and `collect --confirm` re-quantize with, so they measure what the printed fix does."""
    ort = quantizer == "onnxruntime"
    quantizer, option = ("quantize_static", "nodes_to_exclude") if ort else ("ModelOpt", "--nodes_to_exclude")
    nodes = {n["name"]: n for n in precision.get("nodes", []) if isinstance(n, dict) and n.get("name")}
    if not nodes or not (change.exclude_nodes or change.exclude_op_types):
        return Resolved(change, quantizer, option=option)
    acts = set(ort_options(precision)["op_types_to_quantize"]) if ort else set(MODELOPT_QUANTIZED_OPS)
    kept_types = tuple(t for t in change.exclude_op_types if t in acts)
    gone_types = {t for t in change.exclude_op_types if t not in acts}
    named = list(dict.fromkeys([*change.exclude_nodes, *(n["name"] for n in nodes.values()
                                                          if n["op_type"] in gone_types and node_quantized(n))]))
    # An op type left out of op_types_to_quantize frees its nodes' own Q/DQ, not the INT8 output of the node before them.
    typed = [n["name"] for n in nodes.values() if ort and n["op_type"] in kept_types and _activation_only(n)
             and n["name"] not in named]
    by_output = nodes_by_output(nodes.values())
    pairs = [g for g in precision.get("qdq") or [] if isinstance(g, dict) and g.get("kind") == "activation"
             and g.get("dtype") != "int32"]
    keep: list[str] = []
    redirects: list[Redirect] = []
    unreachable: list[tuple[str, str]] = []
    unlisted: list[tuple[str, str]] = []
    already: list[tuple[str, str]] = []
    for name in [*named, *typed]:
        node = nodes.get(name)
        if node is not None and not node_quantized(node):
            # Float already (a new user's key CNN: its head Conv excluded, re-collected, flagged for its quantized
            # output, and the report printed the same exclusion again): naming it changes nothing.
            already.append((name, node["op_type"]))
            continue
        itself = node is not None and node["op_type"] in acts
        # A node the quantizer excludes itself: by name, unless its only INT8 part is its input and that input is a
        # pair other nodes put there (below): excluded alone it would still read INT8. Under quantize_static any
        # quantized producer's; under ModelOpt a residual Add's (RESIDUAL_PRODUCERS).
        if node is None or (itself and not (_activation_only(node)
                                            and (ort or _residual_fed(name, pairs, by_output)))):
            keep.append(name)  # a placeholder, an unknown name, or a node with weights the quantizer keeps in float
            continue
        instead: list[str] = []
        producer = None
        for pair in (g for g in pairs if name in (g.get("consumers") or ())):
            source = by_output.get(pair.get("tensor"))
            # Under quantize_static any quantized producer writes the pair; under ModelOpt a residual Add.
            frees = (source is not None and source["op_type"] in acts and source.get("output_quantized")
                     and node_quantized(source)) if ort else _residual(source)
            if frees:
                producer = producer or source
                instead.append(source["name"])
            instead += [c for c in pair.get("consumers") or () if c != name and c in nodes
                        and nodes[c]["op_type"] in acts and node_quantized(nodes[c])]
        instead = list(dict.fromkeys(instead))
        if itself and name in named:
            keep.append(name)
        if instead:
            redirects.append(Redirect(name, node["op_type"], producer["name"] if producer else None,
                                      producer["op_type"] if producer else "", tuple(instead), itself))
        elif not itself and ort and not _explained(name, pairs, by_output, nodes, acts):
            unlisted.append((name, node["op_type"]))
        elif not itself:
            unreachable.append((name, node["op_type"]))
    nodes_out = tuple(sorted(set(keep) | {n for r in redirects for n in r.instead}))
    # Every other part of the change kept as asked (per-channel weights too: a fix that excludes op types and turns
    # per-channel weights on printed per_channel=False once rebuilt field by field).
    return Resolved(replace(change, exclude_nodes=nodes_out, exclude_op_types=kept_types),
                    quantizer, tuple(redirects), tuple(unreachable), option, tuple(unlisted), tuple(already))


# ModelOpt 0.47 quantizes a residual Add's output for the LayerNormalization that reads it: excluding the LayerNorm,
# by name or by op type, leaves that pair in place (a new user's Whisper-tiny turn detector: the same graph, the same
# 104 of 314 decisions flipped); excluding the Add frees it (all 8 LayerNorm inputs float).
RESIDUAL_PRODUCERS = frozenset({"Add"})


def _residual(source: dict[str, Any] | None) -> bool:
    """Whether *source* is a residual producer (RESIDUAL_PRODUCERS) whose output ModelOpt quantized."""
    return source is not None and source["op_type"] in RESIDUAL_PRODUCERS and bool(source.get("output_quantized"))


def _residual_fed(name: str, pairs: list[dict[str, Any]], by_output: dict[str, dict[str, Any]]) -> bool:
    """Whether *name* reads an INT8 pair ModelOpt put on a residual producer's output."""
    return any(_residual(by_output.get(g.get("tensor"))) for g in pairs if name in (g.get("consumers") or ()))


def _explained(name: str, pairs: list[dict[str, Any]], by_output: dict[str, dict[str, Any]],
               nodes: dict[str, dict[str, Any]], acts: set[str]) -> bool:
    """Whether an op type quantize_static is told to quantize (*acts*) puts a Q/DQ pair on *name*'s input: the pair's
    producer (quantize_static quantizes a listed node's outputs) or another consumer (and its inputs) is of one."""
    for pair in (g for g in pairs if name in (g.get("consumers") or ())):
        source = by_output.get(pair.get("tensor"))
        if source is not None and source["op_type"] in acts:
            return True
        if any(c != name and c in nodes and nodes[c]["op_type"] in acts for c in pair.get("consumers") or ()):
            return True
    return False


def _activation_only(node: dict[str, Any]) -> bool:
    """A node whose only INT8 part is its activation input (a Softmax, a Sigmoid, an attention MatMul): keeping it out
    of INT8 means feeding it float, as the what-if measures it."""
    return bool(node.get("activation_quantized")) and not node.get("weight_quantized")


def exclusion_note(ctx: Context, change: Change) -> str:
    """The words a fix excluding *change*'s nodes adds when the command excludes other nodes than the ones named:
    which node each one reads its INT8 input from, and any named node the command cannot act on ("" if none)."""
    return _note_words(resolve_exclusions(ctx, change))


def _note_words(resolved: Resolved) -> str:
    """exclusion_note's words for exclusions already resolved."""
    parts = []
    also = [r for r in resolved.redirects if r.itself]
    if also:
        types = " or ".join(sorted({r.op_type for r in also}))
        listed = ("all op types, its default" if resolved.quantizer != "quantize_static" else
                  "the command's op_types_to_quantize lists them")
        parts.append(f"{resolved.quantizer} quantizes {types} nodes here ({listed}) and excluding them "
                     "keeps their own Q/DQ out, but their INT8 input is also the quantized output of the node before them (or a Q/DQ "
                     "pair it puts on another consumer's input), so excluded alone they would still read INT8. The "
                     "command excludes those nodes too: " + _redirects_words(also))
    redirects = [r for r in resolved.redirects if not r.itself]
    if redirects:
        types = " or ".join(sorted({r.op_type for r in redirects}))
        how = (f"{types} is not among the op types it quantizes; their INT8 input is the quantized output of the node "
               "before them (or a Q/DQ pair it puts on another consumer's input)"
               if resolved.quantizer == "quantize_static" else
               f"ModelOpt never quantizes {types}; their INT8 input is a Q/DQ pair it put on another consumer of the "
               "same tensor (it quantizes inputs only, and shares the pair)")
        parts.append(f"{resolved.quantizer}'s {resolved.option} cannot keep {types} nodes out of INT8: {how}. The "
                     "command excludes those nodes instead: " + _redirects_words(redirects))
    # Not "your own op_types_to_quantize likely listed ...": a new user's DeepFilterNet, quantized with
    # quantize_static's defaults, read that of its Einsums.
    if resolved.unlisted:
        listed = ", ".join(f"{n} ({t})" for n, t in resolved.unlisted)
        types = " or ".join(sorted({t for _, t in resolved.unlisted}))
        parts.append(f"{listed}: the recorded graph has an INT8 pair on their input that no op type of the recipe as "
                     f"read from the graph (its quantized weights, or quantize_static's default list) puts there, so "
                     f"no node quantize_static can exclude by name frees it; the recipe that made the model put it "
                     f"there through {types} or the node that writes their input: if you list op types, leave that one "
                     "out")
    if resolved.already:
        listed = ", ".join(f"{n} ({t})" for n, t in resolved.already)
        parts.append(f"Already float in the recorded graph: {listed}: excluding {'it' if len(resolved.already) == 1 else 'them'} "
                     "again changes nothing; what is INT8 about it is its output, the Q/DQ pair the nodes reading it "
                     "put there (collect --per-layer shows where the error is born)")
    if resolved.unreachable:
        listed = ", ".join(f"{n} ({t})" for n, t in resolved.unreachable)
        parts.append(f"Not acted on by this command: {listed}: no node {resolved.quantizer} can exclude puts their "
                     "INT8 input there in the recorded graph, so they stay as they are")
    return ". ".join(parts)


def _redirects_words(redirects: list[Redirect]) -> str:
    """The first NOTE_PAIRS redirects in words, and how many more the command names."""
    more = len(redirects) - NOTE_PAIRS
    return ("; ".join(_redirect_words(r) for r in redirects[:NOTE_PAIRS])
            + (f"; and {more} more the same way (the command names them all)" if more > 0 else ""))


def _redirect_words(r: Redirect) -> str:
    others = [n for n in r.instead if n != r.producer]
    if r.producer:
        words = (f"{r.node} reads the INT8 output of {r.producer_op_type} {r.producer}: exclude {r.producer}"
                 + (" too" if r.itself else ""))
        return words + (f" (and {', '.join(others)}, which read the same Q/DQ pair)" if others else "")
    return f"{r.node} reads the Q/DQ pair on the input of {', '.join(others)}: exclude {', '.join(others)}"


def exclusion_fix(ctx: Context, action: str, change: Change, calibration: str | None = None) -> Fix:
    """Fix(*action*, the re-quantize command excluding *change*), with exclusion_note's words when the command acts
    on other nodes than the ones named."""
    resolved = resolve_exclusions(ctx, change)
    note = _note_words(resolved)
    if not (resolved.change.exclude_nodes or resolved.change.exclude_op_types):
        # Nothing left to exclude (every named node float already, or none the quantizer can exclude frees it): a
        # command would re-make the same model (the loop a new user hit; a new user's EEG classifier ran the printed
        # "keep /ReduceMean float" command and got the same model back, 14 of 185 labels changed before and after).
        return Fix(note if resolved.already and not resolved.unlisted else
                   f"{action}: no command, for none would differ from the recipe that made the model. {note}")
    return Fix(f"{action}. {note}" if note else action, requantize_command(ctx, change, calibration))


def trials_note(ctx: Context, names: Iterable[str]) -> str:
    """A note for a list of what-if trials excluding *names*: the what-if feeds an excluded node float inputs, which
    for a node the quantizer cannot exclude by name means excluding the nodes that put its INT8 input there ("" when
    the quantizer can exclude every one)."""
    resolved = resolve_exclusions(ctx, exclusion(names))
    kinds = sorted({r.op_type for r in resolved.redirects if not r.itself} | {t for _, t in resolved.unreachable})
    also = sorted({r.op_type for r in resolved.redirects if r.itself})
    if not (kinds or also):
        return ""
    unreachable = len(resolved.unreachable)
    how = []
    if kinds:
        how.append(f"{resolved.quantizer} cannot exclude {' or '.join(kinds)} nodes by name, so the fixes' commands "
                   "exclude the nodes whose Q/DQ feeds them instead")
    if also:
        how.append(f"{' or '.join(also)} nodes excluded by name would still read the INT8 output of the node before "
                   "them, so the fixes' commands exclude that node too")
    return ("The what-if measures an exclusion by feeding the excluded nodes float inputs; " + "; ".join(how)
            + (f"; for {plural(unreachable, 'node')} of the trials no such node exists in the recorded graph"
               if unreachable else ""))


def corrected_calibration(ctx: Context) -> str | None:
    """The corrected calibration file another finding's fix names, else None: QR009's real_calib.npz when the
    calibration inputs are random noise (analysis/calibration_data.py), QR003's calibration_rewrite file when a
    preprocessing step tells them from the evaluation inputs (analysis/preprocessing.py) or, collected without
    calibration statistics, when the evaluation inputs miss the input quantizer's range (analysis/input_range.py)."""
    if calibrated_on_noise(ctx):
        return RANDOM_CALIBRATION_FIX
    named = mismatched_inputs(ctx.calib_stats, ctx.eval_stats)
    if not (ctx.calib_stats or {}).get("inputs"):  # no calibration statistics: QR003 reads the input quantizer's range
        named = [m.input for m in range_misses(ctx.range_use)]
    return calibration_rewrite(ctx, named[0], "x")[1] if named else None


RANDOM_CALIBRATION_FIX = "real_calib.npz"  # the file QR009's fix tells the user to save real samples to


def tensorrt_major(ctx: Context) -> int | None:
    """TensorRT's major version as the collector recorded it in a TensorRT stage's details, if any."""
    for stage in ctx.stages:
        major = major_version(stage.details.get("tensorrt"))
        if major is not None:
            return major
    return None


def trtexec_fixes(ctx: Context) -> tuple[Fix, ...]:
    """Rebuild the INT8 engine so TensorRT obeys the Q/DQ precisions (TRT 10 and/or TRT 11 syntax)."""
    model = model_file(ctx, "qdq")
    major = tensorrt_major(ctx)
    fixes = (
        Fix("Rebuild the engine so TensorRT obeys the precisions the Q/DQ nodes imply (TensorRT 10), "
            "and check the layer info for unfused Q/DQ or FP32 fallbacks",
            f"trtexec --onnx={shell_quote(model)} --int8 --fp16 --precisionConstraints=obey "
            "--exportLayerInfo=layers.json --profilingVerbosity=detailed"),
        Fix("Or build strongly typed (opt-in on TensorRT 10.12+, always on in TensorRT 11, which dropped --int8, "
            "--fp16 and --precisionConstraints): every layer then runs in the precision the Q/DQ nodes and casts "
            "give it, so remaining drift must be fixed in the graph", f"trtexec --onnx={shell_quote(model)} --stronglyTyped"),
    )
    return fixes[1:] if major is not None and major >= 11 else fixes


def shell_quote(arg: str) -> str:
    """*arg* quoted for a POSIX shell; placeholders like <calib.npy> stay readable."""
    # Placeholders like <calib.npy> stay readable; anything else a shell could misread is quoted.
    if "=<" in arg or arg.startswith("<"):
        return arg
    return shlex.quote(arg)
