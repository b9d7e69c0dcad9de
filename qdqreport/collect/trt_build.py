"""Build one TensorRT engine from an ONNX file and record exactly how it was built.

Written against the TensorRT 10 and 11 Python APIs (docs/tensorrt.md lists each call and the
page it was checked against). The `trt` module is passed in, never imported here, so the
builder-configuration logic is unit-tested with a fake module (tests/fake_tensorrt.py).

Nothing here runs an engine: trt_run.py does that through Polygraphy's TrtRunner.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from qdqreport.analysis.trt_build_info import major_version

# TensorRT 10 weakly typed builds of the QDQ model: with and without OBEY_PRECISION_CONSTRAINTS.
# The pair exists because the pitfall is real: the two engines can differ, and users cannot
# tell which one their deployment used. Calibrators are never set: Q/DQ scales are the model's.
WEAK_FP16 = ("FP16",)
WEAK_INT8_OBEY = ("INT8", "FP16", "OBEY_PRECISION_CONSTRAINTS")
WEAK_INT8_NOOBEY = ("INT8", "FP16")

TRT11_FP16_SKIP = ("TensorRT {version} builds strongly typed networks only (BuilderFlag.FP16 was removed in 11.x): "
                   "an FP16 engine needs an FP16 ONNX model; convert it with "
                   "`python -m modelopt.onnx.autocast --onnx_path {model} --output_path model_fp16.onnx`")

_SEVERITY = {"INTERNAL_ERROR": "E", "ERROR": "E", "WARNING": "W", "INFO": "I", "VERBOSE": "V"}


@dataclass(frozen=True)
class BuildPlan:
    """One engine to build: which model, strongly or weakly typed, and which builder flags."""

    stage_id: str
    model_role: str  # "fp32" or "qdq"
    model_path: str
    strongly_typed: bool
    builder_flags: tuple[str, ...]


@dataclass
class BuildOutcome:
    plan: BuildPlan
    status: str = "failed"  # "ok" or "failed"
    error: str | None = None
    log: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    parser_errors: list[dict[str, Any]] = field(default_factory=list)
    layer_info: str | None = None  # the engine inspector's JSON, verbatim
    seconds: float = 0.0
    engine: Any = None
    keep_alive: tuple = ()  # logger and runtime must outlive the engine


def build_plans(version: str, fp32_path: str, qdq_path: str) -> tuple[list[BuildPlan], dict[str, str]]:
    """The engines to build for this TensorRT version, and the stages skipped with their reason."""
    major = major_version(version)
    if major is None or major < 10:
        reason = f"tensorrt {version} is older than 10; qdqreport builds engines with the TensorRT 10/11 API only"
        return [], {"trt_fp16": reason, "trt_int8": reason}
    if major == 10:
        return [BuildPlan("trt_fp16", "fp32", fp32_path, False, WEAK_FP16),
                BuildPlan("trt_int8", "qdq", qdq_path, False, WEAK_INT8_OBEY),
                BuildPlan("trt_int8_noobey", "qdq", qdq_path, False, WEAK_INT8_NOOBEY)], {}
    skipped = {"trt_fp16": TRT11_FP16_SKIP.format(version=version, model=fp32_path)}
    return [BuildPlan("trt_int8", "qdq", qdq_path, True, ())], skipped


def sample_shapes(feeds: Sequence[Mapping[str, Any]]) -> dict[str, list[tuple[int, ...]]]:
    """Every shape each input takes over the evaluation samples."""
    shapes: dict[str, list[tuple[int, ...]]] = {}
    for feed in feeds:
        for name, array in feed.items():
            shapes.setdefault(name, []).append(tuple(int(d) for d in array.shape))
    return shapes


def profile_shapes(shapes: Sequence[tuple[int, ...]]) -> dict[str, list[int]]:
    """min/opt/max covering exactly the sample shapes; opt is the most frequent one."""
    low = [min(dims) for dims in zip(*shapes)]
    high = [max(dims) for dims in zip(*shapes)]
    common = Counter(shapes).most_common(1)[0][0]
    return {"min": low, "opt": list(common), "max": high}


def build_engine(trt: Any, plan: BuildPlan, shapes: Mapping[str, Sequence[tuple[int, ...]]],
                 mark_all: bool = False) -> BuildOutcome:
    """Parse, configure, build, deserialize and inspect one engine; failures become data, not exceptions."""
    outcome = BuildOutcome(plan)
    logger = _capturing_logger(trt, outcome.log)
    start = time.perf_counter()
    try:
        _build(trt, plan, shapes, mark_all, logger, outcome)
    except Exception as exc:  # a TensorRT binding error must not stop the other stages
        outcome.status, outcome.error = "failed", f"{type(exc).__name__}: {_first_line(exc)}"
        outcome.log.append(f"[E] qdqreport: {outcome.error}")
    outcome.seconds = time.perf_counter() - start
    return outcome


def _build(trt: Any, plan: BuildPlan, shapes: Mapping[str, Sequence[tuple[int, ...]]], mark_all: bool,
           logger: Any, outcome: BuildOutcome) -> None:
    builder = trt.Builder(logger)
    creation_mask, creation_names = network_creation_flags(trt, plan)
    outcome.settings = base_settings(trt, plan, creation_names)
    network = builder.create_network(creation_mask)
    parser = trt.OnnxParser(network, logger)
    parsed = parser.parse_from_file(plan.model_path)
    outcome.parser_errors = parser_errors(parser)
    if not parsed or outcome.parser_errors:
        outcome.error = parse_failure_message(plan, outcome.parser_errors)
        return
    outcome.settings["network"] = network_summary(trt, network)
    if mark_all:
        outcome.settings["marked_outputs"] = mark_all_outputs(trt, network)
    config = builder.create_builder_config()
    outcome.settings["builder_flags"] = apply_builder_flags(trt, config, plan)
    config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    outcome.settings["profiles"] = add_profile(builder, network, config, shapes)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        outcome.error = "build_serialized_network returned no engine; the errors are in build.log"
        return
    runtime = trt.Runtime(logger)
    engine = runtime.deserialize_cuda_engine(serialized)
    if engine is None:
        outcome.error = "deserialize_cuda_engine returned no engine; the errors are in build.log"
        return
    outcome.layer_info = engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON)
    outcome.engine, outcome.keep_alive, outcome.status = engine, (logger, runtime, builder), "ok"


def network_creation_flags(trt: Any, plan: BuildPlan) -> tuple[int, list[str]]:
    """The create_network() bit mask. TensorRT 11 is always strongly typed; it still accepts the flag."""
    if not plan.strongly_typed:
        return 0, []
    flag = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
    return (0, []) if flag is None else (1 << int(flag), ["STRONGLY_TYPED"])


def apply_builder_flags(trt: Any, config: Any, plan: BuildPlan) -> list[str]:
    """Set the plan's BuilderFlags; never a calibrator (a QDQ model carries its own scales)."""
    for name in plan.builder_flags:
        config.set_flag(getattr(trt.BuilderFlag, name))
    return list(plan.builder_flags)


def add_profile(builder: Any, network: Any, config: Any,
                shapes: Mapping[str, Sequence[tuple[int, ...]]]) -> list[dict[str, dict[str, list[int]]]]:
    """One optimization profile from the actual sample shapes when an input has a dynamic dimension."""
    dynamic = {}
    for index in range(network.num_inputs):
        tensor = network.get_input(index)
        if any(int(d) < 0 for d in tensor.shape):
            if tensor.name not in shapes:
                raise ValueError(f"input {tensor.name} is dynamic but no sample provides it")
            dynamic[tensor.name] = profile_shapes(shapes[tensor.name])
    if not dynamic:
        return []  # TensorRT makes the default profile itself for static shapes
    profile = builder.create_optimization_profile()
    for name, dims in dynamic.items():
        profile.set_shape(name, dims["min"], dims["opt"], dims["max"])
    config.add_optimization_profile(profile)
    return [dynamic]


def parser_errors(parser: Any) -> list[dict[str, Any]]:
    """Every ONNX parser error as data: code, description, node index, name and operator."""
    errors = []
    for index in range(parser.num_errors):
        error = parser.get_error(index)
        errors.append({"code": _enum_name(error.code()), "desc": str(error.desc()), "node": int(error.node()),
                       "node_name": _optional_call(error, "node_name"),
                       "node_operator": _optional_call(error, "node_operator"), "text": str(error)})
    return errors


def parse_failure_message(plan: BuildPlan, errors: list[dict[str, Any]]) -> str:
    if not errors:
        return f"the TensorRT ONNX parser rejected {plan.model_path} without an error record; see build.log"
    first = errors[0]
    where = first["node_name"] or f"node {first['node']}"
    operator = f" ({first['node_operator']})" if first["node_operator"] else ""
    return (f"the TensorRT ONNX parser failed on {plan.model_path}: {len(errors)} error(s); first at "
            f"{where}{operator}: {first['code']}: {first['desc']}")


def unsupported_operators(errors: list[dict[str, Any]]) -> list[str]:
    """Operators the parser reported as unsupported nodes, for the stage details."""
    return sorted({e["node_operator"] for e in errors if e["code"] == "UNSUPPORTED_NODE" and e["node_operator"]})


def mark_all_outputs(trt: Any, network: Any) -> int:
    """Mark every layer output as a network output (breaks fusions: only on request)."""
    skip = {getattr(trt.LayerType, name) for name in ("SHAPE", "CONSTANT") if hasattr(trt.LayerType, name)}
    marked = 0
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        if layer.type in skip:
            continue
        for out in range(layer.num_outputs):
            tensor = layer.get_output(out)
            if tensor is not None and not tensor.is_network_output and not tensor.is_shape_tensor:
                network.mark_output(tensor)
                marked += 1
    return marked


def network_summary(trt: Any, network: Any) -> dict[str, Any]:
    """Layer count and Q/DQ layer count: an INT8 build of a network without Q/DQ layers means no INT8 at all."""
    qdq_types = {getattr(trt.LayerType, n) for n in ("QUANTIZE", "DEQUANTIZE") if hasattr(trt.LayerType, n)}
    types = [network.get_layer(i).type for i in range(network.num_layers)]
    return {"layers": len(types), "qdq_layers": sum(t in qdq_types for t in types),
            "inputs": [_tensor_entry(network.get_input(i)) for i in range(network.num_inputs)]}


def base_settings(trt: Any, plan: BuildPlan, creation_names: list[str]) -> dict[str, Any]:
    """build_settings.json before the build; the build fills in flags, profiles and the network summary."""
    precision = "FP32+FP16+INT8" if "INT8" in plan.builder_flags else "FP32+FP16" if "FP16" in plan.builder_flags \
        else "strongly typed (ONNX types)" if plan.strongly_typed else "FP32"
    return {"format": 1, "producer": "qdqreport", "tensorrt_version": str(trt.__version__),
            "stage": plan.stage_id, "model": plan.model_role, "model_path": plan.model_path,
            "typing": "strong" if plan.strongly_typed else "weak", "network_creation_flags": creation_names,
            "builder_flags": list(plan.builder_flags), "precision": precision, "calibrator": None,
            "profiling_verbosity": "DETAILED", "profiles": [], "marked_outputs": 0,
            "equivalent_trtexec": trtexec_command(plan)}


def trtexec_command(plan: BuildPlan) -> str:
    """The trtexec line a user would run to build the same engine by hand."""
    parts = [f"trtexec --onnx={plan.model_path}"]
    parts += ["--stronglyTyped"] if plan.strongly_typed else [f"--{f.lower()}" for f in plan.builder_flags
                                                              if f in ("FP16", "INT8")]
    if "OBEY_PRECISION_CONSTRAINTS" in plan.builder_flags:
        parts.append("--precisionConstraints=obey")
    parts += ["--profilingVerbosity=detailed", "--exportLayerInfo=layer_info.json"]
    return " ".join(parts)


def _capturing_logger(trt: Any, lines: list[str]) -> Any:
    """A trt.ILogger subclass that keeps the messages (INFO and above) for build.log."""

    class CapturingLogger(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, severity: Any, msg: str) -> None:
            level = _SEVERITY.get(_enum_name(severity), "?")
            if level != "V":  # VERBOSE runs to megabytes of tactic timing; INFO and above carry the evidence
                lines.append(f"[{level}] {msg}")

    return CapturingLogger()


def _tensor_entry(tensor: Any) -> dict[str, Any]:
    return {"name": tensor.name, "shape": [int(d) for d in tensor.shape], "dtype": _enum_name(tensor.dtype)}


def _enum_name(value: Any) -> str:
    return str(getattr(value, "name", value)).split(".")[-1]


def _optional_call(obj: Any, method: str) -> str | None:
    """node_name()/node_operator() exist on TensorRT 10 parser errors; None where absent."""
    func = getattr(obj, method, None)
    value = func() if callable(func) else None
    return str(value) if value else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__
