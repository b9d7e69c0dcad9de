"""TensorRT engine layer info (`trtexec --exportLayerInfo`, IEngineInspector JSON) as typed records.

Formats read (NumPy/stdlib only; checked against TensorRT issues and the TREx parser):
- detailed verbosity: {"Layers": [{"Name", "LayerType", "Inputs": [{"Name", "Dimensions",
  "Format/Datatype"}], "Outputs": [...], "ParameterType", "Origin", "TacticName", "Metadata"...}],
  "Bindings": [names]}. TensorRT 10+ adds "Metadata": "[ONNX Layer: a]\\x1f[ONNX Layer: b]"
  (0x1E or 0x1F separate entries; a single bracket holding several names is split the same way).
- layer_names_only verbosity (trtexec's default): {"Layers": ["name", ...], "Bindings": [...]}:
  names, nothing else; `Engine.detailed` is False.
- TensorRT 11 (NVIDIA's "Migrating IEngineInspector Usage from TensorRT 10.x to 11.x"): "Bindings"
  became "I/O Tensors", a list of objects with "Name", "IOMode", "DataType"...; a tensor's
  "Format/Datatype" string is split into "Format" and "DataType" (NVIDIA's own tools also read the
  spelling "Datatype"). Both generations are read; the data type field wins over words in "Format".
A layer's precision is the data type of its first input (as TREx counts it); NoOp layers are
kept in the table but left out of roll-ups (TREx folds them away).
"""

from __future__ import annotations

import math

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

# Format/Datatype words -> our precision names. Word boundaries keep "UInt8" from reading as
# "Int8" and "BFloat16" from reading as "Float".
_DTYPE_WORDS = (("UInt8", "uint8"), ("Int8", "int8"), ("INT8", "int8"), ("BFloat16", "bf16"), ("BF16", "bf16"),
                ("FP16", "fp16"), ("Half", "fp16"), ("FP32", "fp32"), ("Float", "fp32"), ("FP8", "fp8"),
                ("Int4", "int4"), ("INT4", "int4"), ("FP4", "fp4"), ("Int32", "int32"), ("INT32", "int32"),
                ("Int64", "int64"), ("Bool", "bool"), ("BOOL", "bool"), ("Double", "fp64"))
_DTYPE_PATTERNS = tuple((re.compile(rf"\b{word}\b"), name) for word, name in _DTYPE_WORDS)
FLOAT_PRECISIONS = ("fp32", "fp16", "bf16", "fp64")
QUANTIZED_PRECISIONS = ("int8", "uint8", "fp8", "int4", "fp4")
COMPUTE_PARAMETER_TYPES = {"Convolution", "Deconvolution", "FullyConnected", "MatrixMultiply", "Gemm"}
_COMPUTE_LAYER_TYPE = re.compile(r"Conv|Gemm|MatrixMultiply|FullyConnected", re.I)
_ONNX_ENTRY = re.compile(r"\[ONNX Layer: (.*?)\](?=[\x1e\x1f]|\[|\s*$)", re.S)
_SEPARATORS = re.compile(r"[\x1e\x1f]")
_PROFILE_SUFFIX = re.compile(r"\[profile +(\d+)\]")


def dtype_of(format_text: str) -> str:
    """Our precision name for a "Format/Datatype" string ("unknown" when no data-type word is found)."""
    for pattern, name in _DTYPE_PATTERNS:
        if pattern.search(format_text):
            return name
    return "unknown"


def onnx_names(metadata: str | None) -> tuple[str, ...]:
    """ONNX node names from a TensorRT 10+ Metadata field, in order, without duplicates."""
    if not metadata:
        return ()
    names: list[str] = []
    for entry in _ONNX_ENTRY.findall(metadata):
        names += [n.strip() for n in _SEPARATORS.split(entry.replace("[ONNX Layer: ", "")) if n.strip()]
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dims: tuple[int, ...]
    format: str
    dtype: str


@dataclass(frozen=True)
class Layer:
    """One engine layer (after fusion): what it computes, in which precision, from which ONNX nodes."""

    index: int
    name: str
    layer_type: str  # the kernel family, e.g. CaskConvolution, Reformat, kgen
    parameter_type: str  # the operation, e.g. Convolution, Pooling, Reformat ("" when absent)
    origin: str  # "QDQ", "REFORMAT", ... ("" when absent)
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    onnx_names: tuple[str, ...]
    tactic: str

    @property
    def kind(self) -> str:
        """What TREx calls the layer type: the operation, else the kernel family."""
        return self.parameter_type or self.layer_type

    @property
    def precision(self) -> str:
        return self.inputs[0].dtype if self.inputs else "none"

    @property
    def output_precision(self) -> str:
        return self.outputs[0].dtype if self.outputs else "none"

    @property
    def role(self) -> str:
        """noop, reformat, compute (convolution/GEMM-like, with weights) or other."""
        if self.layer_type == "NoOp":
            return "noop"
        if self.layer_type == "Reformat" or self.parameter_type == "Reformat":
            return "reformat"
        if self.parameter_type in COMPUTE_PARAMETER_TYPES or _COMPUTE_LAYER_TYPE.search(self.layer_type):
            return "compute"
        return "other"

    @property
    def changes_dtype(self) -> bool:
        return bool(self.inputs and self.outputs) and self.precision != self.output_precision


@dataclass(frozen=True)
class Engine:
    """A parsed layer-info document. With layer_names_only verbosity only `names` is filled."""

    layers: tuple[Layer, ...]
    bindings: tuple[str, ...]
    detailed: bool
    names: tuple[str, ...]
    other_profiles_dropped: int = 0  # layers of optimization profiles 1.. (only profile 0 is analysed)

    @property
    def has_onnx_names(self) -> bool:
        return any(layer.onnx_names for layer in self.layers)

    @property
    def counted(self) -> tuple[Layer, ...]:
        """The layers counted in roll-ups: all but NoOp."""
        return tuple(layer for layer in self.layers if layer.role != "noop")

    def precision_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(layer.precision for layer in self.counted).items()))

    def type_precision_counts(self) -> dict[str, dict[str, int]]:
        """Layer kind -> precision -> count, kinds with most layers first."""
        table: dict[str, Counter] = {}
        for layer in self.counted:
            table.setdefault(layer.kind, Counter())[layer.precision] += 1
        return {kind: dict(sorted(c.items())) for kind, c in sorted(table.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))}

    def feeds_binding(self, layer: Layer) -> bool:
        """True when an output is an engine output binding, directly or through NoOp layers."""
        aliases = self._binding_aliases()
        return any(t.name in aliases for t in layer.outputs)

    def reads_binding(self, layer: Layer) -> bool:
        """True when an input is an engine input binding (the network input)."""
        produced = {t.name for other in self.layers for t in other.outputs}
        return any(t.name in self.bindings and t.name not in produced for t in layer.inputs)

    def _binding_aliases(self) -> set[str]:
        aliases = set(self.bindings)
        changed = True
        while changed:  # a NoOp whose output is (an alias of) a binding makes its input one too
            changed = False
            for layer in self.layers:
                if layer.role == "noop" and any(t.name in aliases for t in layer.outputs):
                    new = {t.name for t in layer.inputs} - aliases
                    aliases |= new
                    changed = changed or bool(new)
        return aliases


def int8_float_outputs(engine: Engine) -> list[Layer]:
    """INT8 compute layers whose first output is float, except those writing an engine output (that must be float)."""
    return [layer for layer in engine.layers if layer.role == "compute" and layer.precision == "int8"
            and layer.output_precision in FLOAT_PRECISIONS and not engine.feeds_binding(layer)]


def dtype_reformats(engine: Engine) -> list[Layer]:
    """Reformat layers converting the data type, except at the engine's input and output bindings."""
    return [layer for layer in engine.layers if layer.role == "reformat" and layer.changes_dtype
            and not engine.reads_binding(layer) and not engine.feeds_binding(layer)]


def parse_layer_info(data: Any) -> Engine:
    """An Engine from a decoded layer-info JSON document; ValueError says what is wrong and how to fix it."""
    if isinstance(data, list):
        hint = " (it looks like an --exportProfile timing file; pass it with --profile)" if _looks_like_profile(data) else ""
        raise ValueError(f"is a JSON list, not a layer-info object with a \"Layers\" list{hint}; "
                         "pass the file written by trtexec --exportLayerInfo")
    if not isinstance(data, dict) or not isinstance(data.get("Layers"), list):
        raise ValueError("has no \"Layers\" list; pass the file written by trtexec --exportLayerInfo=FILE "
                         "(or IEngineInspector.get_engine_information(LayerInformationFormat.JSON))")
    raw_layers, bindings = data["Layers"], _binding_names(data)
    if not raw_layers:
        raise ValueError("has an empty \"Layers\" list; export the layer info of a built engine")
    if all(isinstance(item, str) for item in raw_layers):
        return Engine((), bindings, False, tuple(raw_layers))
    if not all(isinstance(item, dict) for item in raw_layers):
        raise ValueError("mixes layer names and layer objects in \"Layers\"; re-export it with "
                         "trtexec --profilingVerbosity=detailed --exportLayerInfo=FILE")
    kept = [raw for raw in raw_layers if not _other_profile(str(raw.get("Name", "")))]
    layers = tuple(_layer(i, raw) for i, raw in enumerate(kept))
    return Engine(layers, tuple(b for b in bindings if not _other_profile(b)), True,
                  tuple(layer.name for layer in layers), len(raw_layers) - len(kept))


def _binding_names(data: dict[str, Any]) -> tuple[str, ...]:
    """Engine I/O names: TensorRT 10's "Bindings" strings or TensorRT 11's "I/O Tensors" objects."""
    if isinstance(data.get("Bindings"), list):
        return tuple(str(b) for b in data["Bindings"])
    io_tensors = data.get("I/O Tensors")
    if isinstance(io_tensors, list):
        return tuple(str(t["Name"]) for t in io_tensors if isinstance(t, dict) and "Name" in t)
    return ()


def _looks_like_profile(data: list) -> bool:
    return any(isinstance(item, dict) and ("timeMs" in item or "averageMs" in item) for item in data)


def _other_profile(name: str) -> bool:
    match = _PROFILE_SUFFIX.search(name)
    return match is not None and match.group(1) != "0"


def _layer(index: int, raw: dict[str, Any]) -> Layer:
    where = f"layer {index}"
    name = raw.get("Name")
    if not isinstance(name, str):
        raise ValueError(f"{where} has no \"Name\"; the file is damaged, re-export it with trtexec --exportLayerInfo")
    return Layer(index=index, name=name, layer_type=str(raw.get("LayerType", "")),
                 parameter_type=str(raw.get("ParameterType") or ""), origin=str(raw.get("Origin") or ""),
                 inputs=_tensors(raw.get("Inputs", []), f"{where} ({name!r}) Inputs"),
                 outputs=_tensors(raw.get("Outputs", []), f"{where} ({name!r}) Outputs"),
                 onnx_names=onnx_names(raw.get("Metadata") if isinstance(raw.get("Metadata"), str) else None),
                 tactic=str(raw.get("TacticName") or raw.get("TacticValue") or ""))


def _tensors(items: Any, where: str) -> tuple[TensorInfo, ...]:
    if not isinstance(items, list):
        raise ValueError(f"{where} is not a list; re-export the layer info with trtexec --profilingVerbosity=detailed")
    tensors = []
    for item in items:
        described = _format_and_dtype(item) if isinstance(item, dict) else None
        if described is None:
            raise ValueError(f"{where} has a tensor without \"Format/Datatype\" (TensorRT 10) or \"DataType\" "
                             "(TensorRT 11); re-export the layer info with trtexec --profilingVerbosity=detailed")
        dims = item.get("Dimensions") or []
        if not isinstance(dims, list) or not all(_is_dim(d) for d in dims):
            raise ValueError(f"{where} has \"Dimensions\" that are not a list of integers; re-export the layer info")
        tensors.append(TensorInfo(str(item.get("Name", "")), tuple(int(d) for d in dims), *described))
    return tuple(tensors)


def _is_dim(value: Any) -> bool:
    # -1 for a dynamic axis; a float only when integral (an infinity or NaN is a damaged file)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value == int(value) and -1 <= value < 2**63


def _format_and_dtype(item: dict[str, Any]) -> tuple[str, str] | None:
    """(format text, precision) from TensorRT 10's "Format/Datatype" or TensorRT 11's split fields."""
    combined = item.get("Format/Datatype")
    if isinstance(combined, str):
        return combined, dtype_of(combined)
    dtype = item.get("DataType", item.get("Datatype"))
    if not isinstance(dtype, str):
        return None
    layout = item.get("Format") if isinstance(item.get("Format"), str) else ""
    precision = dtype_of(dtype)
    return f"{layout} {dtype}".strip(), precision if precision != "unknown" else dtype_of(layout)


# --- per-layer timing (--exportProfile) ----------------------------------------------------------

@dataclass(frozen=True)
class LayerTime:
    name: str
    time_ms: float  # total over the profiled runs
    average_ms: float
    median_ms: float | None  # TensorRT 8.4+
    percentage: float


def parse_profile(data: Any) -> tuple[int | None, tuple[LayerTime, ...]]:
    """(profiled run count, per-layer times) of a `trtexec --exportProfile` document."""
    if isinstance(data, dict) and "Layers" in data:
        raise ValueError("is a layer-info file (it has \"Layers\"), not a profile; pass it with --layer-info")
    if not isinstance(data, list):
        raise ValueError("is not a JSON list of per-layer timings; pass the file written by trtexec --exportProfile")
    count = next((item["count"] for item in data if isinstance(item, dict) and "count" in item), None)
    if count is not None and not (isinstance(count, int) and not isinstance(count, bool) and count >= 0):
        raise ValueError("has a \"count\" that is not a run count; pass the file written by trtexec --exportProfile")
    records = [item for item in data if isinstance(item, dict) and "name" in item]
    if not records:
        raise ValueError("holds no per-layer record ({\"name\", \"averageMs\", ...}); pass the file written by "
                         "trtexec --exportProfile")
    times = []
    for i, item in enumerate(records):
        try:
            record = LayerTime(str(item["name"]), float(item.get("timeMs", 0.0)), float(item["averageMs"]),
                               float(item["medianMs"]) if "medianMs" in item else None,
                               float(item.get("percentage", 0.0)))
            if not all(math.isfinite(v) for v in (record.time_ms, record.average_ms, record.median_ms or 0.0,
                                                  record.percentage)):
                raise ValueError("not finite")
            times.append(record)
        except (KeyError, TypeError, ValueError, OverflowError):
            raise ValueError(f"record {i} ({item.get('name')!r}) lacks a numeric \"averageMs\"; pass the file "
                             "written by trtexec --exportProfile") from None
    return count, tuple(times)


def time_by_precision(engine: Engine, times: Iterable[LayerTime]) -> dict[str, float]:
    """Average milliseconds per precision, joining timings to layers by name (unmatched under "unmatched")."""
    precision = {layer.name: layer.precision for layer in engine.layers}
    total: Counter = Counter()
    for record in times:
        total[precision.get(record.name, "unmatched")] += record.average_ms
    return dict(sorted(total.items()))
