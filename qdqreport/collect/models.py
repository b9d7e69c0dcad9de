"""Load ONNX models with one-line errors, and describe their inputs and outputs."""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import helper
from onnx.external_data_helper import (ExternalDataInfo, load_external_data_for_model, load_external_data_for_tensor,
                                      uses_external_data)

from qdqreport.bundle.writer import sha256_file
from qdqreport.errors import InputError


# Protobuf cannot serialise a message of 2 GiB or more; models with more tensor bytes than this go to
# ONNX Runtime as a file with external data instead (session_source).
SERIALIZE_LIMIT = 1_500_000_000
EXTERNAL_DATA_THRESHOLD = 1024  # smaller tensors stay in the .onnx file (shape constants ONNX Runtime reads early)
# The session config entry that has ONNX Runtime read the external data of a model given as bytes from a folder
# (ExternalModel); ONNX Runtime 1.18 and later (earlier ones get the model with its tensors, as before).
EXTERNAL_FOLDER_KEY = "session.model_external_initializers_file_folder_path"
# Models load_model read with their tensors in external data files: id(proto) -> (proto, its .onnx file). The
# passes that mark tensors as outputs (marked_source) give ONNX Runtime such a model's structure alone and let it
# read the tensors from the model's own folder. The last few loaded are kept (the proto is held, so its id stays its own).
_ON_DISK: dict[int, tuple[onnx.ModelProto, Path]] = {}
_ON_DISK_KEPT = 4


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int | str | None, ...]  # ints are fixed dims; str/None are dynamic
    dtype: np.dtype
    ranked: bool = True  # False: the model declares no shape at all (any rank), unlike a scalar's []

    def describe(self) -> str:
        if not self.ranked:
            return f"{self.name}[any rank] {self.dtype}"
        dims = ", ".join(str(d) if isinstance(d, int) else (d or "?") for d in self.shape)
        return f"{self.name}[{dims}] {self.dtype}"


@dataclass(frozen=True)
class LoadedModel:
    path: Path
    proto: onnx.ModelProto
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[str, ...]
    output_specs: tuple[TensorSpec, ...] = ()
    external_data: tuple[Path, ...] = ()  # data files the model's tensors live in (models over 2 GB)
    check_warning: str | None = None  # the ONNX checker's complaint about a model ONNX Runtime loads

    def manifest_entry(self) -> dict:
        entry = {"path": str(self.path), "sha256": sha256_file(self.path), "bytes": self.path.stat().st_size}
        if self.external_data:
            entry["external_data"] = [{"path": file.relative_to(self.path.parent).as_posix(), "sha256": sha256_file(file),
                                       "bytes": file.stat().st_size} for file in self.external_data]
        if self.check_warning:
            entry["check_warning"] = self.check_warning
        return entry


def load_model(path: Path | str, role: str, load_test: Callable[[onnx.ModelProto], bool] | None = None) -> LoadedModel:
    """Read and check an ONNX model; *role* ("--fp32", "--qdq") names the option in errors.

    Tensors stored as external data are read from the model's folder. A model the ONNX checker
    rejects is still accepted when ONNX Runtime loads it (ONNX Runtime's own quantize_static writes
    such models); the checker's complaint is kept as `check_warning` for the bundle. *load_test*: for
    such a model without external data, the caller's own proof that ONNX Runtime loads it (it builds
    the session it will use from the loaded proto and says whether that worked); when it says no, or
    is not given, ONNX Runtime's load test below decides, as before.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file (given as {role}); pass the path of an .onnx model")
    proto, external = _read(path, role)
    warning = _checker_complaint(path)
    if warning is not None and not (load_test is not None and not external and load_test(proto)):
        _require_onnxruntime_loads(path, role, warning)
    if external:
        _remember_on_disk(proto, path)
    initializers = {init.name for init in proto.graph.initializer}
    inputs = tuple(_spec(value) for value in proto.graph.input if value.name not in initializers)
    outputs = tuple(_spec(value) for value in proto.graph.output)
    return LoadedModel(path, proto, inputs, tuple(o.name for o in outputs), outputs, external, warning)


def _read(path: Path, role: str) -> tuple[onnx.ModelProto, tuple[Path, ...]]:
    try:
        proto = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # onnx raises DecodeError, google.protobuf errors...
        raise InputError(f"{path}: not a valid ONNX model ({_one_line(exc)}); re-export it or pass the right file "
                         f"as {role}") from None
    external = _external_files(proto, path)
    if external:
        try:  # onnx refuses locations outside the model's folder itself
            load_external_data_for_model(proto, str(path.parent))
        except Exception as exc:
            raise InputError(f"{path}: cannot read its external data ({_one_line(exc)}); keep the model's data "
                             f"files ({', '.join(f.name for f in external)}) beside it, as onnx.save_model wrote them") from None
    return proto, external


def _external_files(proto: onnx.ModelProto, path: Path) -> tuple[Path, ...]:
    locations = {ExternalDataInfo(t).location for t in _all_tensors(proto.graph) if uses_external_data(t)}
    files = []
    for location in sorted(locations):
        file = path.parent / location
        if not file.is_file():
            raise InputError(f"{path}: its external data file {location!r} is missing; keep the model's data files "
                             "beside it, as onnx.save_model wrote them")
        files.append(file)
    return tuple(files)


def _all_tensors(graph: onnx.GraphProto):
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                yield from _all_tensors(sub)


def _checker_complaint(path: Path) -> str | None:
    """The full ONNX checker's complaint on one line, or None. Checked by path: external data and
    models over 2 GB are read the way onnx expects."""
    try:
        onnx.checker.check_model(str(path), full_check=True)
    except Exception as exc:
        return _one_line(exc)
    return None


def _require_onnxruntime_loads(path: Path, role: str, complaint: str) -> None:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL  # a load test only
    options.log_severity_level = 3
    try:
        onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise InputError(f"{path}: not a valid ONNX model: ONNX Runtime cannot load it ({_one_line(exc)}) and the "
                         f"ONNX checker says: {shorten(complaint, 400)}; {_remedy(complaint, role)}") from None


def _remedy(complaint: str, role: str) -> str:
    """What to do about a model neither ONNX Runtime nor the checker accepts. Per-channel Q/DQ needs opset 13 (the
    `axis` attribute): quantize_static writes it into an opset-10/11 model all the same (a new user's U^2-Net-p)."""
    if "axis" in complaint and ("QuantizeLinear" in complaint or "DequantizeLinear" in complaint):
        return ("its per-channel Q/DQ nodes need opset 13 or later: convert the FP32 model first "
                "(onnx.version_converter.convert_version(model, 13)) and quantize again, or quantize per tensor; "
                f"then pass the new file as {role}")
    return f"re-export it or pass the right file as {role}"


def _one_line(exc: BaseException) -> str:
    """The whole message on one line (never cut: the reason often comes after the first line)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def shorten(text: str, limit: int) -> str:
    """*text* cut at a word boundary for a one-line message (the bundle keeps the full text)."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _spec(value: onnx.ValueInfoProto) -> TensorSpec:
    tensor_type = value.type.tensor_type
    dims = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor_type.shape.dim)
    return TensorSpec(value.name, dims, np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)),
                      ranked=tensor_type.HasField("shape"))


# Tensors of at least this many bytes that a model keeps in external data are left there by without_weights.
WEIGHT_BYTES = 1 << 20


def without_weights(model: LoadedModel) -> LoadedModel:
    """*model* with its tensors of WEIGHT_BYTES or more left in its external data files, unread, when it has any: its
    graph re-read from its file, the smaller external tensors (shape constants, biases) read as load_model reads them.
    For a collect whose passes read no weight of this model, or read each from the file when they need it (stored_value:
    the per-layer pass's weight rows) (issue 12: the 102 MB model's loaded weights were its collect's largest copy but
    the sessions'): its stage sessions read the file, the marking passes get its graph alone (marked_source), shape
    inference reads small tensors only (qdq_graph._without_large_initializers)."""
    if not model.external_data:
        return model
    structure = onnx.load(str(model.path), load_external_data=False)
    for tensor in _all_tensors(structure.graph):
        if uses_external_data(tensor) and _external_bytes(tensor) < WEIGHT_BYTES:
            load_external_data_for_tensor(tensor, str(model.path.parent))
    _ON_DISK.pop(id(model.proto), None)  # the loaded weights go with the last reference to them
    _remember_on_disk(structure, model.path)
    return LoadedModel(model.path, structure, model.inputs, model.outputs, model.output_specs, model.external_data,
                       model.check_warning)


def stored_value(proto: onnx.ModelProto, tensor: onnx.TensorProto) -> np.ndarray | None:
    """The value of *tensor*, an initializer of *proto* that without_weights left in its external data file, read from
    that file into a copy of the reference (*proto* keeps none of it); None for any other tensor."""
    entry = _ON_DISK.get(id(proto))
    if entry is None or entry[0] is not proto or not uses_external_data(tensor):
        return None
    loaded = onnx.TensorProto()
    loaded.CopyFrom(tensor)
    load_external_data_for_tensor(loaded, str(entry[1].parent))
    return onnx.numpy_helper.to_array(loaded)


def _remember_on_disk(proto: onnx.ModelProto, path: Path) -> None:
    """Record that *proto*'s tensors live in the external data beside *path* (marked_source reads it), keeping the last
    _ON_DISK_KEPT."""
    _ON_DISK[id(proto)] = (proto, path)
    while len(_ON_DISK) > _ON_DISK_KEPT:
        del _ON_DISK[next(iter(_ON_DISK))]


def _external_bytes(tensor: onnx.TensorProto) -> int:
    length = ExternalDataInfo(tensor).length
    if length:
        return int(length)
    try:
        return int(np.prod(tensor.dims, dtype=np.int64)) * np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except Exception:  # an element type NumPy has no size for: read it, as load_model would
        return 0


def qdq_node_count(graph: onnx.GraphProto) -> int:
    """QuantizeLinear/DequantizeLinear nodes, in any domain, subgraphs (If/Loop bodies) included."""
    count = 0
    for node in graph.node:
        count += node.op_type in ("QuantizeLinear", "DequantizeLinear")
        for attribute in node.attribute:
            for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                count += qdq_node_count(sub)
    return count


def check_model_pair(fp32: LoadedModel, qdq: LoadedModel, allow_unquantized: bool) -> None:
    """Refuse, before any inference, the pairs that give a confident wrong report: the same model
    twice, the two models swapped, or a --qdq without any Q/DQ node."""
    if allow_unquantized:
        return
    anyway = "; or pass --allow-unquantized to compare them anyway"
    if fp32.path.resolve() == qdq.path.resolve() or fp32.proto == qdq.proto:
        raise InputError(f"{qdq.path}: --qdq is the same model as --fp32 ({fp32.path}); pass the Q/DQ model quantized "
                         f"from it as --qdq{anyway}")
    in_fp32, in_qdq = qdq_node_count(fp32.proto.graph), qdq_node_count(qdq.proto.graph)
    if in_qdq == 0 and in_fp32 > 0:
        raise InputError(f"{qdq.path}: --fp32 and --qdq look swapped: this --qdq model has no QuantizeLinear/"
                         f"DequantizeLinear node while --fp32 ({fp32.path}) has {in_fp32}; swap the two paths{anyway}")
    if in_qdq == 0:
        raise InputError(f"{qdq.path}: has no QuantizeLinear/DequantizeLinear node, so it is no Q/DQ model (given as "
                         "--qdq); pass the model your quantizer wrote in QDQ format (ModelOpt, or onnxruntime "
                         f"quantize_static with quant_format=QuantFormat.QDQ){anyway}")


def with_extra_outputs(proto: onnx.ModelProto, tensor_names: list[str]) -> bytes | str:
    """The model with *tensor_names* added as graph outputs (for intermediate errors), as marked_source() gives it."""
    return marked_source(proto, tensor_names)


class ExternalModel(bytes):
    """A serialised model whose tensors stay in the external data files of the model it was made from: ONNX Runtime
    reads them from *folder* (session_config: EXTERNAL_FOLDER_KEY)."""

    folder: str


def session_config(source: bytes | str) -> dict[str, str]:
    """The session config entries *source* needs beyond the caller's own (the folder of an ExternalModel's tensors)."""
    return {EXTERNAL_FOLDER_KEY: source.folder} if isinstance(source, ExternalModel) else {}


def marked_source(proto: onnx.ModelProto, outputs: list[str], nodes: list[onnx.NodeProto] = ()) -> bytes | str:
    """*proto* with *nodes* appended and *outputs* (those not yet graph outputs) added as graph outputs, as
    session_source() gives a model, without a copy of its tensors in this process (issue 12: a 102 MB model's marked
    sessions held the loaded model, a copy and its serialisation at once, 4.5x its weights).

    A model load_model read from external data files goes to ONNX Runtime as its structure alone, re-read from its
    file, its tensors read by ONNX Runtime from the model's folder (ExternalModel). Any other model is serialised
    once, the additions as a second message after it: protobuf parses a message and its continuation as one,
    repeated fields appended in order, so ONNX Runtime gets the very model a modified copy would give."""
    present = {o.name for o in proto.graph.output}
    extra = onnx.ModelProto()
    extra.graph.node.extend(nodes)
    extra.graph.output.extend(helper.make_empty_tensor_value_info(name) for name in outputs if name not in present)
    structure = _structure_on_disk(proto)
    if structure is not None:
        structure.MergeFrom(extra)
        source = ExternalModel(structure.SerializeToString())
        source.folder = str(_ON_DISK[id(proto)][1].parent)
        return source
    if _serializable(proto):
        return proto.SerializeToString() + extra.SerializeToString()
    model = _copy(proto)
    model.MergeFrom(extra)
    return session_source(model, owned=True)


def stored_tensors(proto: onnx.ModelProto) -> tuple[dict[str, onnx.TensorProto], str] | None:
    """The top-level initializers of *proto* as its file holds them (those in external data as references to it, not
    read) and the folder ONNX Runtime reads that data from (ExternalModel), when load_model read *proto* from external
    data files and the file still holds its graph (_structure_on_disk); else None. For a graph made from *proto*'s
    tensors (the per-layer pass's local graph) without a copy of them in this process."""
    structure = _structure_on_disk(proto)
    if structure is None:
        return None
    return {t.name: t for t in structure.graph.initializer}, str(_ON_DISK[id(proto)][1].parent)


def external_source(model: onnx.ModelProto, folder: str) -> ExternalModel:
    """*model* serialised for ONNX Runtime, its external data read from *folder* (its tensors from stored_tensors)."""
    source = ExternalModel(model.SerializeToString())
    source.folder = folder
    return source


def _structure_on_disk(proto: onnx.ModelProto) -> onnx.ModelProto | None:
    """The model file of *proto* re-read without its external data, when load_model read *proto* from external data
    files, the file still holds that graph (same nodes, inputs and outputs) and ONNX Runtime reads external data
    from a folder; else None."""
    entry = _ON_DISK.get(id(proto))
    if entry is None or entry[0] is not proto or not _reads_external_folder():
        return None
    try:
        structure = onnx.load(str(entry[1]), load_external_data=False)
    except Exception:
        return None
    same = (len(structure.graph.node) == len(proto.graph.node)
            and all(a.op_type == b.op_type and a.output == b.output for a, b in zip(structure.graph.node, proto.graph.node))
            and [i.name for i in structure.graph.input] == [i.name for i in proto.graph.input]
            and [o.name for o in structure.graph.output] == [o.name for o in proto.graph.output])
    return structure if same else None


@functools.lru_cache(maxsize=1)
def _reads_external_folder() -> bool:
    import onnxruntime

    try:
        return tuple(int(part) for part in onnxruntime.__version__.split(".")[:2]) >= (1, 18)
    except ValueError:
        return False


def session_source(model: onnx.ModelProto, owned: bool = False) -> bytes | str:
    """What onnxruntime.InferenceSession (and Polygraphy's SessionFromOnnx) take: the serialised model, or,
    when its tensors are too large for one protobuf message (2 GiB), the path of a copy saved with its
    tensors as external data in a scratch folder removed at exit. *owned*: *model* may be modified."""
    if _serializable(model):
        return model.SerializeToString()
    if not owned:
        model = _copy(model)
    folder = Path(tempfile.mkdtemp(prefix="model-", dir=_scratch().name))
    onnx.save_model(model, str(folder / "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.data", size_threshold=EXTERNAL_DATA_THRESHOLD)
    return str(folder / "model.onnx")


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def _serializable(model: onnx.ModelProto) -> bool:
    """Whether *model*'s tensors hold fewer than SERIALIZE_LIMIT bytes (_tensor_bytes), decided without walking them
    in Python when its whole serialisation is under an eighth of the limit: a tensor's counted bytes are at most 8
    times what it takes serialised (raw data and floats as many bytes, an int32 or int64 value at least 1), so such a
    model's are under the limit too. ByteSize is 0.3-0.8 ms, the walk 1.8-5.3 ms, 5-7 times a collect (issue 12)."""
    return model.ByteSize() * 8 < SERIALIZE_LIMIT or _tensor_bytes(model.graph) < SERIALIZE_LIMIT


def _tensor_bytes(graph: onnx.GraphProto) -> int:
    return sum(len(t.raw_data) + 4 * (len(t.float_data) + len(t.int32_data)) + 8 * len(t.int64_data)
               for t in _all_tensors(graph))


@functools.lru_cache(maxsize=1)
def _scratch() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="qdqreport-models-")  # removed when the process exits


def node_output_names(proto: onnx.ModelProto) -> set[str]:
    return {name for node in proto.graph.node for name in node.output}


def producers(proto: onnx.ModelProto) -> dict[str, onnx.NodeProto]:
    return {name: node for node in proto.graph.node for name in node.output}


def class_score_outputs(proto: onnx.ModelProto) -> set[str]:
    """Outputs that look like class scores from the graph: produced by (Log)Softmax, or a 2-D Gemm/MatMul."""
    made_by = producers(proto)
    found = set()
    for output in proto.graph.output:
        node = made_by.get(output.name)
        while node is not None and node.op_type in ("Identity", "Reshape", "Flatten", "Squeeze", "Cast"):
            node = made_by.get(node.input[0])
        rank = len(output.type.tensor_type.shape.dim)
        if node is not None and (node.op_type in ("Softmax", "LogSoftmax") or (node.op_type in ("Gemm", "MatMul") and rank == 2)):
            found.add(output.name)
    return found
