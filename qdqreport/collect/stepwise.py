"""A marked model run in steps, each step returning one chunk of its marked tensors: `collect --per-layer` on a model
whose marked tensors do not fit a byte budget (layerwise.CHUNK_BYTES).

A session with every aligned tensor marked as an output holds every one of them at the end of its run (U^2-Net-p at
320x320: 577 MB a model a sample, 3.7 GB peak for the pass). Marking a chunk at a time in separate sessions would
change the values: ONNX Runtime fuses across the tensors that are not marked (a QDQ model's DQ -> Conv -> Q becomes a
QLinearConv computed in integers, a float graph's Conv + Add a FusedConv), so a chunk's tensors would be computed by
other kernels than the all-marked session's. So the graph ONNX Runtime optimised with every tensor marked is taken as
it is (the session's `optimized_model_filepath`), and cut into steps: step k is the nodes that chunk k's tensors need
and no earlier step ran, run in its own session with graph optimisation off (the optimised graph is run as written:
the same kernels on the same values, bit for bit), fed the values earlier steps produced that it reads. A value is
carried from step to step only while a later step reads it, so the pass holds one chunk's tensors and the values live
across the cut (what any run of the graph holds there), instead of every marked tensor.

Step sessions are built on first use (a carried value's element type is known once its producing step has run) and
reused for every sample; they run without ONNX Runtime's memory arena, so a step's outputs return to the allocator when
they are dropped instead of staying in one arena per step.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np
import onnx
from onnx import helper

Feed = dict[str, np.ndarray]


# glibc's mallopt parameters (malloc.h) and their defaults
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536
_KEPT_BYTES = 2 ** 31 - 1  # the largest trim threshold mallopt takes (an int)


@contextmanager
def heap_kept() -> Iterator[None]:
    """While a stepped pass runs: the C heap keeps the memory its steps free, for the next step to reuse, and gives it
    back once at the end (malloc_trim). Step sessions run without ONNX Runtime's arena, so each step's tensors are
    malloc'd and freed; glibc serves large blocks with mmap and returns them to the system on free (and trimming
    after each step returned the rest), so every step of every sample touched fresh pages: U^2-Net-p's stepped
    activation-range pass took 2.75 M page faults and 6.4 s of system time against 0.26 M and 1.0 s in one run
    (issue 12). Here large blocks come from the heap (M_MMAP_MAX 0) and the heap is not trimmed while the pass runs;
    the pass's peak is then the largest step's working set and what fragmentation keeps, not every chunk at once.
    glibc only (elsewhere a no-op); the thresholds are set back to glibc's defaults after (setting them turns off its
    dynamic mmap threshold for the rest of the process)."""
    libc = _libc()
    if libc is None:
        yield
        return
    libc.mallopt(_M_MMAP_MAX, 0)
    libc.mallopt(_M_TRIM_THRESHOLD, _KEPT_BYTES)
    try:
        yield
    finally:
        libc.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
        libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
        libc.malloc_trim(0)


def _libc() -> Any:
    global _LIBC
    if _LIBC is None:
        try:
            libc = ctypes.CDLL("libc.so.6")
            _LIBC = libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else False
        except OSError:
            _LIBC = False
    return _LIBC or None


_LIBC: Any = None


class NotSteppable(Exception):
    """The optimised graph cannot be cut (a node with a subgraph reads values from outside it)."""


@dataclass
class _Step:
    nodes: list[onnx.NodeProto]
    imports: list[str]  # values the step reads that it does not produce: graph inputs or carried from earlier steps
    exports: list[str]  # values it returns: its chunk's, and those later steps read
    initializers: list[str]
    session: Any = None
    types: dict[str, int] = field(default_factory=dict)


class SteppedModel:
    """*source* (a marked model as new_session takes it) optimised once by ONNX Runtime with every output marked, then
    run as len(*chunks*) steps; `run(feed)` yields each chunk's values {name: array}, in order."""

    def __init__(self, source: bytes | str, provider: str, chunks: Sequence[Sequence[str]],
                 config: dict[str, str] | None = None):
        from qdqreport.collect.ort_stage import new_session

        self.provider, self.config = provider, config
        try:  # e.g. a graph ORT cannot build (the caller's one-run pass reports it), or too large to save
            with tempfile.TemporaryDirectory(prefix="qdqreport-steps-") as folder:
                path = os.path.join(folder, "optimized.onnx")
                session = new_session(source, provider, config, optimized_path=path)
                del session
                model = onnx.load(path)
        except Exception as exc:
            raise NotSteppable(f"{type(exc).__name__}: {exc}") from exc
        self.opset_import = list(model.opset_import)
        self.ir_version = model.ir_version
        graph = model.graph
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in graph.node for a in n.attribute):
            raise NotSteppable("a node with a subgraph")
        self.input_types = {i.name: i.type.tensor_type.elem_type for i in graph.input}
        self.initializers = {t.name: t for t in graph.initializer}
        producer = {name: position for position, node in enumerate(graph.node) for name in node.output if name}
        self.chunks = [list(dict.fromkeys(chunk)) for chunk in chunks]
        done: set[int] = set()
        steps_nodes: list[list[int]] = []
        for chunk in self.chunks:
            wanted: set[int] = set()
            stack = [producer[name] for name in chunk if name in producer]
            while stack:
                position = stack.pop()
                if position in done or position in wanted:
                    continue
                wanted.add(position)
                stack.extend(producer[name] for name in graph.node[position].input if name in producer)
            done |= wanted
            steps_nodes.append(sorted(wanted))
        produced_in = {name: k for k, positions in enumerate(steps_nodes) for p in positions
                       for name in graph.node[p].output if name}
        # A marked value ONNX Runtime folded to a constant is returned from the optimised graph's initializer, as the
        # one session returns it.
        self.constants = {name: onnx.numpy_helper.to_array(self.initializers[name]) for chunk in self.chunks
                          for name in chunk if name not in produced_in and name in self.initializers}
        missing = [name for chunk in self.chunks for name in chunk
                   if name not in produced_in and name not in self.input_types and name not in self.constants]
        if missing:
            raise NotSteppable(f"{len(missing)} marked value(s) not in the optimised graph (e.g. {missing[0]})")
        # What each step reads from outside itself (node inputs and its chunk's values), and so what each step exports.
        reads: list[list[str]] = []
        for k, positions in enumerate(steps_nodes):
            names = [name for p in positions for name in graph.node[p].input if name and name not in self.initializers]
            names += [name for name in self.chunks[k] if name not in self.constants]
            reads.append(list(dict.fromkeys(n for n in names if produced_in.get(n) != k)))
        self.last_read: dict[str, int] = {}
        for k, names in enumerate(reads):
            for name in names:
                self.last_read[name] = k
        self.steps = []
        for k, positions in enumerate(steps_nodes):
            nodes = [graph.node[p] for p in positions]
            outputs = [name for node in nodes for name in node.output if name]
            exports = [name for name in outputs if name in self.chunks[k] or self.last_read.get(name, -1) > k]
            node_reads = [name for name in reads[k] if name not in self.chunks[k] or
                          any(name in node.input for node in nodes)]
            used = sorted({name for node in nodes for name in node.input if name in self.initializers})
            self.steps.append(_Step(nodes, node_reads, exports, used))

    def run(self, feed: Feed) -> Iterator[Feed]:
        """Run every step on *feed*; yield chunk k's values after step k (the caller drops them when folded)."""
        carried: dict[str, np.ndarray] = {}
        for k, step in enumerate(self.steps):
            values = {}
            if step.nodes:
                inputs = {name: (feed[name] if name in feed and name in self.input_types else carried[name])
                          for name in step.imports}
                session = step.session or self._build(step, inputs)
                values = dict(zip(step.exports, session.run(step.exports, inputs)))
                del inputs
            chunk = {name: values[name] if name in values else self.constants[name] if name in self.constants else
                     (feed[name] if name in self.input_types and name not in carried else carried[name])
                     for name in self.chunks[k]}
            for name, value in values.items():
                if self.last_read.get(name, -1) > k:
                    carried[name] = value
            for name in [n for n in carried if self.last_read.get(n, -1) <= k]:
                del carried[name]
            del values
            handed = [chunk]
            del chunk
            yield handed.pop()  # the generator keeps no reference: the caller's drop frees the chunk

    def _build(self, step: _Step, inputs: Feed) -> Any:
        from qdqreport.collect.ort_stage import new_session

        graph = helper.make_graph(
            step.nodes, "qdqreport_step",
            [helper.make_tensor_value_info(name, self.input_types.get(name) or
                                           helper.np_dtype_to_tensor_dtype(inputs[name].dtype), None)
             for name in step.imports],
            [helper.make_empty_tensor_value_info(name) for name in step.exports],
            initializer=[self.initializers[name] for name in step.initializers])
        model = helper.make_model(graph, opset_imports=self.opset_import, producer_name="qdqreport")
        model.ir_version = self.ir_version
        step.session = new_session(model.SerializeToString(), self.provider, self.config, optimize=False, arena=False)
        return step.session


def estimated_bytes(model: onnx.ModelProto, feed: Feed, names: Sequence[str],
                    shape_values: Feed | None = None) -> dict[str, int | None]:
    """The bytes of each of *names* on *feed*, from ONNX shape inference with the graph inputs fixed to the feed's
    shapes (no run); None where inference leaves a dimension unknown (a data-dependent shape). *shape_values*: computed
    tensors whose values are known (probed_shape_values), given to inference as constants."""
    inferred = _inferred_graph(_fixed_to_feed(model, feed, shape_values or {}))
    if inferred is None:
        return {name: None for name in names}
    infos = {v.name: v for v in [*inferred.value_info, *inferred.output, *inferred.input]}
    result: dict[str, int | None] = {}
    for name in names:
        info = infos.get(name)
        result[name] = None
        if info is None or not info.type.HasField("tensor_type") or not info.type.tensor_type.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
                for d in info.type.tensor_type.shape.dim]
        elem = info.type.tensor_type.elem_type
        if None in dims or not elem:
            continue
        size = int(np.prod(dims, dtype=np.int64)) if dims else 1
        result[name] = size * max(4, helper.tensor_dtype_to_np_dtype(elem).itemsize)  # compared in float32
    return result


def resolved_bytes(model: onnx.ModelProto, feed: Feed, names: Sequence[str], above: int,
                   provider: str) -> dict[str, int | None]:
    """estimated_bytes, and, when the sizes inference leaves unknown alone decide whether *names* pass *above* bytes
    (the known ones fit; counted as the largest known one, stepped_plan's rule, they do not), the same with the
    model's shape values read from one run (probed_shape_values). ONNX's data propagation stops at an opset-12 Slice
    (Shape -> Slice -> Concat -> Reshape): PP-OCRv4 rec's 105 attention tensors of 382 were unknown, its aligned tensors
    counted 171 MB against the 115 MB they hold, and its per-layer pass ran in steps where one run a sample fits
    (twice the time; the bundle the same either way, the steps run the same kernels)."""
    sizes = estimated_bytes(model, feed, names)
    known = [size for size in sizes.values() if size is not None]
    if len(known) == len(sizes) or not known or sum(known) > above or plan_chunks(list(sizes.values()), above) is None:
        return sizes
    values = probed_shape_values(model, feed, provider)
    return estimated_bytes(model, feed, names, values) if values else sizes


def probed_shape_values(model: onnx.ModelProto, feed: Feed, provider: str) -> Feed:
    """The values of the integer tensors of rank 0 or 1 *model*'s nodes compute on *feed* (shape arithmetic, by shape
    inference), from one ONNX Runtime run that marks them alone: a few integers held, whatever the model's
    activations; {} when there are none or ONNX Runtime fails."""
    from qdqreport.collect.models import with_extra_outputs
    from qdqreport.collect.ort_stage import new_session

    inferred = _inferred_graph(_fixed_to_feed(model, feed, {}))
    if inferred is None:
        return {}
    computed = {name for node in model.graph.node if node.op_type != "Constant" for name in node.output if name}
    names = [v.name for v in inferred.value_info if v.name in computed and _shape_value(v)]
    if not names:
        return {}
    try:
        session = new_session(with_extra_outputs(model, names), provider)
        return dict(zip(names, session.run(names, feed)))
    except Exception:  # best effort, as inference: the unknown sizes stay unknown
        return {}


def _shape_value(info: onnx.ValueInfoProto) -> bool:
    """Whether inference gives *info* an integer type and a rank of at most 1 (its length may be unknown: a Cast of
    a value inference could not follow), the shape arithmetic of a graph."""
    tensor = info.type.tensor_type
    return (tensor.elem_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32) and tensor.HasField("shape")
            and len(tensor.shape.dim) <= 1)


def _fixed_to_feed(model: onnx.ModelProto, feed: Feed, values: Feed) -> onnx.ModelProto:
    """A copy of *model* without its large initializers, its graph inputs' shapes those of *feed*, and each of *values*
    a constant (its node's output renamed away) for inference."""
    from qdqreport.collect.qdq_graph import _without_large_initializers

    fixed = onnx.ModelProto()
    fixed.CopyFrom(_without_large_initializers(model))
    del fixed.graph.value_info[:]  # recorded shapes (an exporter's -1 for a dynamic size) would be kept as they are
    for graph_output in fixed.graph.output:
        graph_output.type.tensor_type.ClearField("shape")
    for graph_input in fixed.graph.input:
        value = feed.get(graph_input.name)
        if value is None or not graph_input.type.HasField("tensor_type"):
            continue
        shape = graph_input.type.tensor_type.shape
        shape.Clear()
        for size in np.shape(value):
            shape.dim.add().dim_value = int(size)
    if values:
        for node in fixed.graph.node:
            for position, name in enumerate(node.output):
                if name in values:
                    node.output[position] = name + "__probed"
        fixed.graph.initializer.extend(onnx.numpy_helper.from_array(np.asarray(v), n) for n, v in values.items())
    return fixed


def _inferred_graph(fixed: onnx.ModelProto) -> onnx.GraphProto | None:
    try:
        return onnx.shape_inference.infer_shapes(fixed, data_prop=True).graph
    except Exception:  # best effort: custom ops, broken shapes
        return None


def stepped_plan(sizes: Sequence[int | None], above: int, chunk: int) -> list[range] | None:
    """The chunks of at most *chunk* bytes a pass runs in when its tensors' *sizes* pass *above* bytes a sample
    (plan_chunks); None when they fit (the pass runs one run a sample)."""
    return plan_chunks(sizes, chunk) if plan_chunks(sizes, above) is not None else None


def plan_chunks(sizes: Sequence[int | None], budget: int) -> list[range] | None:
    """Contiguous ranges of positions whose *sizes* sum to at most *budget* each (a value larger than the budget alone
    in its range); an unknown size counts as the largest known one. None when everything fits one range (or nothing
    is known): the pass runs as one run per model."""
    known = [s for s in sizes if s is not None]
    if not known:
        return None
    largest = max(known)
    counted = [largest if s is None else s for s in sizes]
    if sum(counted) <= budget:
        return None
    chunks, start, total = [], 0, 0
    for position, size in enumerate(counted):
        if position > start and total + size > budget:
            chunks.append(range(start, position))
            start, total = position, 0
        total += size
    chunks.append(range(start, len(counted)))
    return chunks
