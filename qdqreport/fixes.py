"""Fix command lines for findings and the report: ModelOpt re-quantization, trtexec rebuilds, calibration rewrites.

Rules attach these to their findings (findings.Fix); the report's per-layer section and the
configuration card (report/) print the same commands, so both import them from here. Every path
is the one the bundle's manifest recorded (fix commands run where the user ran collect), or a
readable placeholder such as <calib.npy>.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePath
from typing import TYPE_CHECKING, Iterable, Sequence

from qdqreport.analysis.trt_build_info import major_version
from qdqreport.findings import Fix

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


def calibration_file(ctx: Context) -> str:
    """The calibration tensor file (.npy/.npz) at the path the manifest recorded, else <calib.npy>."""
    calib = (ctx.manifest.get("inputs") or {}).get("calib")
    source = calib.get("source", "") if isinstance(calib, dict) else ""
    return source if isinstance(source, str) and source.endswith((".npy", ".npz")) else "<calib.npy>"


def calibration_rewrite(ctx: Context, input_name: str, expr: str) -> tuple[str, str]:
    """A one-line command that rewrites the calibration file as *expr* of its tensor x; returns (command, new file).

    The new file is written where the command runs; the old one is read where the bundle says it is."""
    source = calibration_file(ctx)
    calib, name = repr(source), repr(input_name)
    if source.endswith(".npz"):  # one array per model input
        code = (f"import numpy as np; d = dict(np.load({calib})); x = d[{name}]; "
                f"d[{name}] = ({expr}).astype(np.float32); np.savez('calib_fixed.npz', **d)")
        return python_command(code), "calib_fixed.npz"
    code = f"import numpy as np; x = np.load({calib}); np.save('calib_fixed.npy', ({expr}).astype(np.float32))"
    return python_command(code), "calib_fixed.npy"


def python_command(code: str) -> str:
    """`python -c "code"` for a POSIX shell; paths inside *code* should be Python literals (repr)."""
    if "$" in code or "`" in code:  # single quotes keep these literal (shlex reads \$ in "..." differently from sh)
        return "python -c " + shlex.quote(code)
    # Inside "..." only \ and " need a backslash (sh and shlex agree on those two).
    return 'python -c "' + re.sub(r'([\\"])', r"\\\1", code) + '"'


def node_patterns(names: Iterable[str]) -> list[str]:
    """ModelOpt matches --nodes_to_exclude with re.match (a prefix match), so anchor with $."""
    return [re.escape(name) + "$" for name in sorted(set(names))]


def modelopt_command(ctx: Context, extra: Sequence[str] = (), calibration: str | None = None) -> str:
    """A ModelOpt 0.47 ONNX PTQ command line for this bundle's FP32 model, plus *extra* arguments."""
    source = model_file(ctx, "fp32")
    output = requantized_file(ctx)
    args = ["python", "-m", "modelopt.onnx.quantization", f"--onnx_path={source}", "--quantize_mode=int8",
            f"--calibration_data_path={calibration or calibration_file(ctx)}", *extra, f"--output_path={output}"]
    return " ".join(shell_quote(a) for a in args)


def requantized_file(ctx: Context) -> str:
    """The file modelopt_command writes (in the folder it runs in)."""
    source = model_file(ctx, "fp32")
    return f"{PurePath(source).stem}.quant.onnx" if not source.startswith("<") else "<model.quant.onnx>"


def recollect_command(ctx: Context) -> str:
    """`qdqreport collect` again on the re-quantized model, with the inputs the bundle recorded, into a new folder.

    The recorded collect command is reused (its paths are relative to where it ran); a bundle made by
    `qdqreport demo` (or an unknown tool) gets a collect command built from the manifest's paths."""
    argv = [str(a) for a in (ctx.manifest.get("collector") or {}).get("argv") or []]
    if len(argv) > 2 and argv[1] == "collect":
        return " ".join(shell_quote(a) for a in _swap_collect_args(argv[:1] + ["collect"] + argv[2:], requantized_file(ctx)))
    inputs = (ctx.manifest.get("inputs") or {}).get("eval")
    source = inputs.get("source") if isinstance(inputs, dict) else None
    args = ["qdqreport", "collect", "--fp32", model_file(ctx, "fp32"), "--qdq", requantized_file(ctx),
            "--inputs", str(source) if source else "<inputs.npz>", "-o", "qdqreport-bundle-requantized"]
    return " ".join(shell_quote(a) for a in args)


def _swap_collect_args(argv: list[str], qdq: str) -> list[str]:
    """*argv* with --qdq replaced by *qdq* and the output folder renamed, so the first bundle stays."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        previous = argv[i - 1] if i else ""
        if previous == "--qdq":
            arg = qdq
        elif previous in ("-o", "--output"):
            arg = _renamed_output(arg)
        elif arg.startswith("--qdq="):
            arg = f"--qdq={qdq}"
        elif arg.startswith("--output="):
            arg = f"--output={_renamed_output(arg[9:])}"
        out.append(arg)
    return out


def _renamed_output(path: str) -> str:
    stem, dot, suffix = path.rstrip("/").rpartition(".") if path.endswith(".zip") else (path.rstrip("/"), "", "")
    return f"{stem}-requantized{dot}{suffix}"


def exclusion_args(nodes: Iterable[str] = (), op_types: Iterable[str] = ()) -> list[str]:
    args: list[str] = []
    patterns = node_patterns(nodes)
    if patterns:
        args += ["--nodes_to_exclude", *patterns]
    ops = sorted(set(op_types))
    if ops:
        args += ["--op_types_to_exclude", *ops]
    return args


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
