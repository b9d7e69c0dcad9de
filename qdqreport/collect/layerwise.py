"""Per-layer statistics, FP32 ONNX vs QDQ ONNX in ONNX Runtime, accumulated sample by sample.

Three sessions are built once: the FP32 model and the QDQ model with every aligned tensor marked
as an output, and the local model (qdqreport.collect.local_model) that recomputes each aligned
tensor from FP32 inputs. The local model is built after the first sample's marked runs: a pair whose
two sides differ in shape or type on that sample (align.check_pairs) is neither compared nor fed to
it (FP32 values of the wrong shape spliced into the QDQ graph made ONNX Runtime fail), and a local
run that fails anyway costs the local error, not the pass. Per sample, the three runs' tensors are folded into running sums
(qdqreport.analysis.metrics.Accumulator) and dropped once folded, so memory does not grow with the
number of samples (`add_all` runs the next sample while folding this one: two samples' tensors at most).

Per aligned tensor: accumulated error (QDQ vs FP32), local error (local vs FP32) and the FP32
range. Per activation QuantizeLinear: the share of values clipped at the integer limits and the
share of the representable range the values span. Per quantized weight: the error of its
dequantized value (computed from the constants, no run needed) and its Q node's range use.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import onnx

from qdqreport.analysis.metrics import Accumulator
from qdqreport.collect.align import (SKIP_REASONS, SKIP_SHAPE, AlignedTensor, AlignedWeight, Alignment, GraphPair,
                                     QuantizerInfo, SkippedTensor, along_axis, check_pairs, clip_fused,
                                     dequantized_weight, describe)
from qdqreport.collect.local_model import (LOCAL_SESSION_CONFIG, LOCAL_SUFFIX, build_local_model, fed_tensor,
                                          local_input)
from qdqreport.collect.models import (external_source, marked_source, session_source, stored_tensors, stored_value,
                                      with_extra_outputs)
from qdqreport.collect.ort_stage import new_session
from qdqreport.collect.qdq_graph import GraphIndex
from qdqreport.collect.streaming import accumulate, fold_pair
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]
# add_all overlaps the next sample's runs with this one's folding while one sample's marked tensors (FP32 + QDQ)
# stay below this (the overlap holds about 1.5x that more); above it (PP-OCRv4 rec: 230 MB, the synthetic 102 MB
# model: 103 MB) the pass goes sample by sample and holds one sample's tensors.
PIPELINE_BYTES = 96 * 2 ** 20
# Between DOUBLE_BUFFER_ABOVE and PIPELINE_BYTES (DBNet at 160x160: 83 MB) the overlap is kept with less held
# (add_all's _add_double_buffered): the QDQ and the local runs write into two sets of buffers the pass keeps, the QDQ
# values folded while the worker runs the local graph and the local values while it runs the next sample's marked
# models, so the pass holds two samples' FP32 values and one set each of QDQ and local values (four sets, not six).
# Below it (the demo classifier: 27 MB) binding every output costs more than the memory is worth: as before.
DOUBLE_BUFFER_ABOVE = 32 * 2 ** 20
# The stepped pass (collect/stepwise.py, LayerCollector._add_stepped): a model whose aligned tensors of one sample
# pass STEPPED_ABOVE bytes (as float32, by shape inference) runs its three models in steps of at most CHUNK_BYTES of
# aligned tensors each (the QDQ and local steps hold as many again). U^2-Net-p at 320x320: 577 MB, 19 steps, the pass's
# peak RSS 2.8 -> 0.6 GB (docs/BENCHMARKS.md). Below STEPPED_ABOVE (every corpus family; PP-OCRv4 rec: 115 MB, its
# attention tensors' sizes read by stepwise.resolved_bytes) the pass
# runs one run per model and sample as before.
STEPPED_ABOVE = 128 * 2 ** 20
CHUNK_BYTES = 32 * 2 ** 20
# The pass's three sessions (marked FP32, marked QDQ, local graph) run without ONNX Runtime's memory pattern. With it,
# a session's first run allocates its tensors one by one from the arena and its second run one block laid out for
# the whole run, which the arena then holds beside the first run's chunks: the synthetic 102 MB model's per-layer
# collect grew 0.56 -> 0.62 GB at its second sample (docs/BENCHMARKS.md, session 36 second round). Without it
# every run reuses the chunks the first one left. Where tensors live, not what the kernels compute: the same values.
PASS_SESSION = {"mem_pattern": False}
SKIPPED_LISTED = 20  # skipped pairs layers/summary.json lists (all are counted)
NONFINITE_LISTED = 20  # activations holding NaN/Inf that layers/summary.json lists, in graph order (all are counted)


@dataclass
class _TensorStats:
    accumulated: Accumulator = field(default_factory=Accumulator)
    local: Accumulator = field(default_factory=Accumulator)
    ref_min: float = math.inf
    ref_max: float = -math.inf


@dataclass
class QuantizerStats:
    """One Q node's clipping and observed range, folded sample by sample (collect/activation_ranges.py too)."""

    values: int = 0
    clipped: int = 0
    observed_min: float = math.inf
    observed_max: float = -math.inf


@dataclass
class LayerResult:
    """What the per-layer pass produced: bundle table rows, a summary, and the FP32 graph outputs."""

    layer_rows: list[dict[str, Any]]
    qnode_rows: list[dict[str, Any]]
    summary: dict[str, Any]
    fp32_outputs: list[Feed]  # graph outputs only, one dict per sample (what-if compares against them)


class LayerCollector:
    """Sessions and accumulators of one per-layer pass; `add(feed)` per sample, `result()` at the end."""

    def __init__(self, fp32: onnx.ModelProto, qdq: onnx.ModelProto, provider: str = "cpu", keep_outputs: bool = True,
                 graphs: GraphPair | None = None):
        """*keep_outputs*: keep every sample's FP32 graph outputs for `result().fp32_outputs` (the what-if search
        compares against them); without it the pass holds nothing per sample and its memory is flat in N.
        *graphs*: the two models' indices and alignment when the collect's other passes share them (else built here)."""
        # The stages' session settings (threads, no spinning): the local graph runs in a worker thread beside
        # the statistics, and spinning pool threads would take its cores.
        graphs = graphs if graphs is not None else GraphPair(fp32, qdq)
        self.f_index, self.q_index = graphs.fp32, graphs.qdq
        self.alignment: Alignment = graphs.alignment
        self.graph_outputs = [o.name for o in fp32.graph.output]
        self.q_outputs = [o.name for o in qdq.graph.output]
        tensors = self.alignment.tensors
        q_inputs = sorted({q.input for q in self.alignment.quantizers})
        self.fp32_names = list(dict.fromkeys([*self.graph_outputs, *(t.name for t in tensors)]))
        self.qdq_names = list(dict.fromkeys([*(t.qdq_name for t in tensors), *q_inputs]))
        self.fp32 = new_session(with_extra_outputs(fp32, self.fp32_names), provider, **PASS_SESSION)
        self._fp32_proto = fp32
        marked, self.qdq_outputs = float32_outputs(self.q_index, self.qdq_names)
        self.qdq = new_session(marked, provider, **PASS_SESSION)
        self.provider = provider
        self.local, self.local_error, self.local_model = None, None, None
        self.checked = False  # the pairs are checked on the first sample's values (_check), then the local graph built
        self.skipped_weights: list[SkippedTensor] = []
        self.to_fp32_name = {t.qdq_name: t.name for t in tensors}
        self.stats = {t.name: _TensorStats() for t in tensors}
        self.qstats = {q.q_node: QuantizerStats() for q in self.alignment.quantizers}
        self.fp32_outputs: list[Feed] = []
        self.keep_outputs = keep_outputs
        self._quantizers_of: dict[str, list[QuantizerInfo]] = {}
        for quantizer in self.alignment.quantizers:
            self._quantizers_of.setdefault(quantizer.input, []).append(quantizer)
        self._limits: dict[tuple[str, int], tuple[Any, Any, Any, Any]] = {}
        self.samples = 0
        self.chunk_bytes = CHUNK_BYTES
        self.steps = 1  # the steps each model ran in (_add_stepped)
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._weights: list[dict[str, Any]] | None = None  # _weight_rows, once
        self._buffers: dict[str, np.ndarray] | None = None  # _shared_buffers, once
        self._local_buffers: dict[str, np.ndarray] | None = None  # _local_buffer_set, once

    def add(self, feed: Feed) -> None:
        """Run one sample through the three sessions and fold its tensors into the statistics."""
        fp32, qdq = self._run_marked(feed)
        # The local run is the longest of the three; ONNX Runtime releases the GIL, so it runs in a
        # worker thread while the accumulated statistics are folded in here. (Running it beside the
        # QDQ run instead was slower on 2 cores: two sessions then compete for the same cores.)
        pending = self._pool.submit(self._run_local, feed, fp32) if self.local is not None else None
        self._fold(fp32, qdq, pending.result if pending is not None else lambda: None, local_ready=pending is None)

    def add_all(self, samples: Sequence[Feed], on_sample: Callable[[int], None] | None = None) -> None:
        """`add` every sample, the next sample's three runs (in the worker thread) overlapping this one's folding.

        The same runs and the same sums in the same order as `add` one by one: only *when* each run happens
        changes. The folding is NumPy on one core while ONNX Runtime runs on the cores it is given, so the two
        keep both cores of a small machine busy (issue 12). It holds two samples' tensors at once, so a model
        whose marked tensors of one sample pass DOUBLE_BUFFER_ABOVE holds the QDQ and the local values in buffers
        of its own, one set each (`_add_double_buffered`: four models' values of a sample instead of six), and one
        above PIPELINE_BYTES goes sample by sample (`_fold_shared`: the QDQ and the local values in one set of
        buffers): memory before speed."""
        count = len(samples)
        if not count:
            return
        # The weight rows first, while the pass holds no sample: their float64 dequantization of the largest weight
        # (80 MB for the synthetic 102 MB model's) then does not add to the samples' peak (the same rows, result()'s).
        self._weight_rows()
        if self._add_stepped(samples, on_sample):
            return
        first = samples[0]
        fp32, qdq = self._run_marked(first, bind=None)
        if not self.alignment.tensors:  # nothing left to compare (check_pairs): the caller records the pass as skipped
            return
        held = _nbytes(fp32) + _nbytes(qdq)
        if DOUBLE_BUFFER_ABOVE < held <= PIPELINE_BYTES:
            self._add_double_buffered(samples, first, fp32, qdq, on_sample)
            return
        pipelined = held <= PIPELINE_BYTES
        if pipelined:
            self._buffers = None  # the first sample's QDQ values went there (_run_marked): not kept past their fold
        else:
            self._fold_shared(first, fp32, qdq)
            del fp32, qdq  # not held through the loop (a large model's sample is hundreds of MB)
            if on_sample is not None:
                on_sample(0)
            for index in range(1, count):
                fp32, qdq = self._run_marked(samples[index], bind=True)
                self._fold_shared(samples[index], fp32, qdq)
                del fp32, qdq
                if on_sample is not None:
                    on_sample(index)
            return
        current = self._pool.submit(lambda f=fp32, q=qdq: (f, q, self._run_local(first, f)))
        for index in range(count):
            fp32, qdq, local = current.result()
            if index + 1 < count:
                current = self._pool.submit(self._run_all, samples[index + 1])  # the feed is read here, in order
            self._fold(fp32, qdq, lambda: local, local_ready=True)
            del fp32, qdq, local
            if on_sample is not None:
                on_sample(index)

    def _add_double_buffered(self, samples: Sequence[Feed], first: Feed, fp32: Feed, qdq: Feed,
                             on_sample: Callable[[int], None] | None) -> None:
        """add_all for a sample of DOUBLE_BUFFER_ABOVE to PIPELINE_BYTES of marked values: per sample, the worker runs
        the local graph into the pass's local buffers while the QDQ values (in the shared buffers) are folded here, then
        the next sample's marked models (its QDQ values into the shared buffers, folded by then) while the local values
        are folded (_fold with the local run not ready, which asks for it once the QDQ values are folded). The same runs
        of the same sessions, each statistic given the same operations in the same order of samples (as _fold_shared):
        the same sums; only where the QDQ and local values are written and when the runs happen change."""
        count = len(samples)
        feed, marked = first, None
        for index in range(count):
            if marked is not None:
                fp32, qdq = marked.result()
            local = (self._pool.submit(self._run_local, feed, fp32, True, self._local_buffer_set(fp32))
                     if self.local is not None else None)
            following = samples[index + 1] if index + 1 < count else None  # the feeds are read here, in order

            def local_result(local: Future | None = local, following: Feed | None = following) -> Feed | None:
                nonlocal marked
                # The QDQ values are folded: the next sample's QDQ run may write into the shared buffers.
                marked = self._pool.submit(self._run_marked, following, True) if following is not None else None
                return local.result() if local is not None else None

            marked = None
            self._fold(fp32, qdq, local_result, local_ready=False)
            if marked is None and following is not None:  # _fold asks for the local values once; should it not have
                marked = self._pool.submit(self._run_marked, following, True)
            del fp32, qdq, local, local_result
            if on_sample is not None:
                on_sample(index)
            feed = following

    def _local_buffer_set(self, fp32: Feed) -> dict[str, np.ndarray]:
        """The float32 arrays, by QDQ name, the double-buffered path's local runs write into: a set of its own, shaped
        as _shared_buffers (the QDQ values of the next sample go there while these are folded)."""
        if self._local_buffers is None:
            self._local_buffers = self._buffer_set(fp32)
        return self._local_buffers

    def _add_stepped(self, samples: Sequence[Feed], on_sample: Callable[[int], None] | None) -> bool:
        """`add_all` for a model whose aligned tensors (as float32, by shape inference on the first sample) pass
        STEPPED_ABOVE: the three models run in steps of at most CHUNK_BYTES of aligned tensors (collect/stepwise.py),
        each step's tensors folded and dropped before the next step runs, so the pass holds one step's tensors of the
        three models and the values live across the cut, not every tensor of a sample. The same runs of the same
        optimised graphs on the same values and the same sums, per tensor in the same order of samples: the bundle is
        the same. The first sample's marked steps run once more first, to check the pairs before the local graph is
        built (`_check`). False (nothing run) when the tensors fit one step, the provider is not the CPU's, or a graph
        cannot be cut: the pass then runs as before."""
        from qdqreport.collect.stepwise import NotSteppable, SteppedModel, resolved_bytes, stepped_plan

        if self.provider != "cpu" or self.checked or not self.alignment.tensors:
            return False
        tensors = list(self.alignment.tensors)
        # Sizes inference leaves unknown are read from one probe run where they alone would make the pass step
        sizes = resolved_bytes(self._fp32_proto, samples[0], [t.name for t in tensors], STEPPED_ABOVE, self.provider)
        ranges = stepped_plan([sizes[t.name] for t in tensors], STEPPED_ABOVE, self.chunk_bytes)
        if ranges is None:
            return False
        chunk_of = {t.name: k for k, positions in enumerate(ranges) for t in (tensors[i] for i in positions)}
        fp32_chunks = [list(dict.fromkeys(tensors[i].name for i in positions)) for positions in ranges]
        fp32_chunks[-1] += [name for name in self.graph_outputs if name not in chunk_of]
        q_chunk = self._quantizer_chunks(tensors, chunk_of, len(ranges))
        out_of = dict(zip(self.qdq_names, self.qdq_outputs))
        qdq_chunks = [[name for name in self.qdq_names if q_chunk[name] == k] for k in range(len(ranges))]
        try:
            fp32_steps = SteppedModel(with_extra_outputs(self._fp32_proto, self.fp32_names), self.provider, fp32_chunks)
            marked, _ = float32_outputs(self.q_index, self.qdq_names)
            qdq_steps = SteppedModel(marked, self.provider, [[out_of[n] for n in chunk] for chunk in qdq_chunks])
        except NotSteppable:
            return False
        # The first sample's pairs, checked chunk by chunk (check_pairs keeps what a chunk does not hold)
        alignment = self.alignment
        for fp32, qdq in zip(fp32_steps.run(samples[0]), qdq_steps.run(samples[0])):
            alignment = check_pairs(alignment, fp32, {n: qdq[out_of[n]] for n in self.qdq_names if out_of[n] in qdq})
            del fp32, qdq
            _release_memory()
        local = self._stepped_local(alignment, chunk_of, len(ranges), samples[0])
        if local is False:
            return False
        self.checked, self.alignment = True, alignment
        self.steps = len(ranges)
        self.to_fp32_name = {t.qdq_name: t.name for t in alignment.tensors}
        self.stats = {t.name: self.stats[t.name] for t in alignment.tensors}
        if not alignment.tensors:
            self.local_error = "no aligned tensor to recompute"
            return True
        parts = [([t for t in alignment.tensors if chunk_of[t.name] == k],
                  [q for q in alignment.quantizers if q_chunk[q.input] == k]) for k in range(len(ranges))]
        for index, feed in enumerate(samples):
            self._stepped_sample(feed, fp32_steps, qdq_steps, local, parts, out_of)
            _release_memory()
            if on_sample is not None:
                on_sample(index)
        return True

    def _quantizer_chunks(self, tensors: list[AlignedTensor], chunk_of: dict[str, int], count: int) -> dict[str, int]:
        """The chunk each QDQ value the pass reads is asked for in: an aligned tensor's, its chunk; a Q node's input
        that is not aligned, the chunk of the first aligned tensor written at or after it in the QDQ graph."""
        written = self.q_index.written_at
        chunk = {t.qdq_name: chunk_of[t.name] for t in tensors}
        ordered = sorted((written(t.qdq_name), chunk_of[t.name]) for t in tensors)
        for name in self.qdq_names:
            if name not in chunk:
                at = written(name)
                chunk[name] = next((k for w, k in ordered if w >= at), count - 1)
        return chunk

    def _stepped_local(self, alignment: Alignment, chunk_of: dict[str, int], count: int, first: Feed) -> Any:
        """The local graph (build_local_model) run in steps of the chunks' local outputs: a StepLocal, None with
        local_error set when ONNX Runtime cannot build it, False when it cannot be cut along the chunks (the pass
        then runs as before)."""
        from qdqreport.collect.stepwise import NotSteppable, SteppedModel

        if not alignment.tensors:
            return None
        try:
            model = build_local_model(self.q_index, alignment)
        except Exception as exc:
            self.local_error = exception_line(exc)
            return None
        by_name = {t.qdq_name: t for t in alignment.tensors}
        chunks = [[out for out, name in model.outputs.items() if chunk_of[name] == k] for k in range(count)]
        try:
            steps = SteppedModel(session_source(model.proto), self.provider, chunks, LOCAL_SESSION_CONFIG)
        except NotSteppable:  # ONNX Runtime's own error, if any, is recorded by the pass as before (_check)
            return False
        # Each local input: the chunk whose FP32 values give it (0: a graph input), the first and last step reading it
        arrives: dict[int, list[str]] = {}
        for name in model.inputs:
            tensor = fed_tensor(name)
            source = 0 if tensor in first else chunk_of.get(by_name[tensor].name, count) if tensor in by_name else count
            first_read = next((k for k, step in enumerate(steps.steps) if name in step.imports), None)
            if first_read is None:
                continue
            if source > first_read:
                return False  # the local graph would need an FP32 value of a later chunk
            arrives.setdefault(source, []).append(name)
        self.local_model, self.local = model, steps
        return _StepLocal(steps, arrives)

    def _stepped_sample(self, feed: Feed, fp32_steps: Any, qdq_steps: Any, local: "_StepLocal | None",
                        parts: list[tuple[list[AlignedTensor], list[QuantizerInfo]]], out_of: dict[str, str]) -> None:
        """One sample through the steps: per chunk, its FP32 and QDQ values, its local values (run in the worker
        thread while the others are folded), folded and dropped."""
        observed: set[str] = set()
        outputs: Feed = {}
        local_feed: Feed = {}
        local_steps = local.steps.run(local_feed) if local is not None and self.local is not None else None
        for k, (fp32, qdq) in enumerate(zip(fp32_steps.run(feed), qdq_steps.run(feed))):
            qdq = {n: qdq[out_of[n]] for n in self.qdq_names if out_of[n] in qdq}
            if self.keep_outputs:
                outputs.update((name, fp32[name]) for name in self.graph_outputs if name in fp32)
            pending = None
            if local_steps is not None and self.local is not None:
                for name in local.arrives.get(k, ()):
                    local_feed[name] = self._local_input(name, feed, fp32)
                pending = self._pool.submit(self._next_local, local_steps)
            tensors, quantizers = parts[k]
            self._fold_part(fp32, qdq, pending.result if pending is not None else lambda: None, pending is None,
                            tensors, quantizers, observed)
            if local is not None:
                for name in [n for n in local_feed if local.steps.last_read.get(n, -1) <= k]:
                    del local_feed[name]
            del fp32, qdq, pending
            _release_memory()
        if self.keep_outputs:
            self.fp32_outputs.append({name: outputs[name] for name in self.graph_outputs})
        self.samples += 1

    def _local_input(self, name: str, feed: Feed, fp32: Feed) -> np.ndarray:
        """One input of the local graph, as _run_local feeds it."""
        return local_input(self.local_model, name, self.to_fp32_name, feed, fp32)

    def _next_local(self, steps: Any) -> Feed | None:
        """The local graph's next step, its outputs by QDQ name (as _run_local gives them); None once it failed."""
        if self.local is None:
            return None
        try:
            values = next(steps)
        except Exception as exc:  # as _run_local: the local error is lost, not the pass
            self.local, self.local_error = None, exception_line(exc)
            return None
        return {name[: -len(LOCAL_SUFFIX)]: value for name, value in values.items()}

    def _run_marked(self, feed: Feed, bind: bool | None = False) -> tuple[Feed, Feed]:
        """One sample's marked FP32 and QDQ values. *bind*: the QDQ run writes its float32 values into the pass's
        shared buffers (_shared_buffers; the local run of the sequential path reuses them); None: so when the FP32
        values alone are more than half of DOUBLE_BUFFER_ABOVE (the first sample, before add_all chooses its path: the
        double-buffered and the sequential paths keep the buffers, the others drop them)."""
        fp32 = dict(zip(self.fp32_names, self.fp32.run(self.fp32_names, feed)))
        if bind is None:
            bind = 2 * _nbytes(fp32) > min(DOUBLE_BUFFER_ABOVE, PIPELINE_BYTES)
        if bind:
            self._shared_buffers(fp32)
            values = _bound_run(self.qdq, self.qdq_outputs, feed, self._fitting(self.qdq_names, fp32))
        else:
            values = self.qdq.run(self.qdq_outputs, feed)
        qdq = dict(zip(self.qdq_names, values))
        if not self.checked:
            self._check(fp32, qdq)
        return fp32, qdq

    def _shared_buffers(self, fp32: Feed) -> dict[str, np.ndarray]:
        """The float32 arrays, by QDQ name, that the sequential path's QDQ runs and then its local runs write their
        values into (_fold_shared): made once, each aligned tensor's in the shape of its FP32 value on the first sample
        it sees. A sample whose values do not fit them runs unbound (_bound_run)."""
        if self._buffers is None:
            self._buffers = self._buffer_set(fp32)
        return self._buffers

    def _buffer_set(self, fp32: Feed) -> dict[str, np.ndarray]:
        buffers: dict[str, np.ndarray] = {}
        names = set(self.qdq_names)
        for tensor in self.alignment.tensors:
            value = fp32.get(tensor.name)
            if tensor.qdq_name in names and isinstance(value, np.ndarray) and value.dtype == np.float32 \
                    and self.q_index.elem_types.get(tensor.qdq_name) in _FLOAT_TYPES:
                buffers.setdefault(tensor.qdq_name, np.empty(value.shape, np.float32))
        return buffers

    def _fitting(self, qdq_names: Sequence[str], fp32: Feed,
                 buffers: dict[str, np.ndarray] | None = None) -> list[np.ndarray | None]:
        """The shared buffer of each QDQ name where it has the shape of this sample's FP32 value of the tensor (the
        QDQ and the local value have it: check_pairs dropped the pairs whose shapes differ), else None (allocated by
        ONNX Runtime): a model whose shapes change from sample to sample runs those outputs unbound rather than failing
        in ONNX Runtime and running again."""
        buffers = (self._buffers if buffers is None else buffers) or {}
        fitting = []
        for name in qdq_names:
            buffer, value = buffers.get(name), fp32.get(self.to_fp32_name.get(name, ""))
            fitting.append(buffer if buffer is not None and value is not None and buffer.shape == np.shape(value)
                           else None)
        return fitting

    def _fold_shared(self, feed: Feed, fp32: Feed, qdq: Feed) -> None:
        """_fold for the sequential path (a sample's marked values above PIPELINE_BYTES): the local run comes once
        the QDQ values are folded (_fold_part asks for it last) and writes into the same buffers, so the pass holds
        two models' values of a sample, not three (issue 12: the synthetic 102 MB model's local values were 51 MB).
        The same runs and the same operations on every statistic, in the same order (_fold with the local run not
        ready): the same sums."""
        if self.local is None:
            self._fold(fp32, qdq, lambda: None, local_ready=True)
            return
        self._fold(fp32, qdq, lambda: self._run_local(feed, fp32, bind=True), local_ready=False)

    def _check(self, fp32: Feed, qdq: Feed) -> None:
        """On the first sample's values: drop the pairs whose sides differ in shape or type, then build the local
        graph from the pairs that are left (it feeds FP32 values into the QDQ graph's tensors of the same name)."""
        self.checked = True
        self.alignment = check_pairs(self.alignment, fp32, qdq)
        self.to_fp32_name = {t.qdq_name: t.name for t in self.alignment.tensors}
        self.stats = {t.name: self.stats[t.name] for t in self.alignment.tensors}
        if not self.alignment.tensors:
            self.local_error = "no aligned tensor to recompute"
            return
        try:
            # A QDQ model read from external data files: the local graph's weights stay there (ONNX Runtime reads them
            # from the file, as for the marked QDQ session), not copied into its proto and its serialisation while
            # the first sample's values are held (the synthetic 102 MB model's 26 MB of INT8 weights, three times).
            stored = stored_tensors(self.q_index.model)
            self.local_model = build_local_model(self.q_index, self.alignment, stored=stored and stored[0])
            source = external_source(self.local_model.proto, stored[1]) if stored else session_source(self.local_model.proto)
            self.local = new_session(source, self.provider, LOCAL_SESSION_CONFIG, **PASS_SESSION)
        except Exception as exc:  # a graph ORT cannot split must not cost the accumulated statistics
            self.local_error = exception_line(exc)

    def fp32_graph_outputs(self, feed: Feed) -> Feed:
        """One sample's FP32 graph outputs from the marked FP32 session, nothing folded (the what-if's reference for
        samples the statistics did not read)."""
        return dict(zip(self.graph_outputs, self.fp32.run(self.graph_outputs, feed)))

    def _run_all(self, feed: Feed) -> tuple[Feed, Feed, Feed | None]:
        fp32, qdq = self._run_marked(feed)
        return fp32, qdq, self._run_local(feed, fp32)

    def _fold(self, fp32: Feed, qdq: Feed, local_result: Callable[[], Feed | None], local_ready: bool = False) -> None:
        """Fold one sample's tensors into the statistics; *local_result* gives the local run's (it may still run).

        Tensor by tensor (issue 12): its FP32 range and Σref², its QDQ comparison, the Q nodes that read it and,
        when the local run is *local_ready*, its local comparison, while its values are still in the CPU's caches
        (one sweep over the sample instead of four). Each statistic gets the same operations on the same values
        as before, so the sums are bit for bit the same; only the order between different tensors changed."""
        if self.keep_outputs:
            self.fp32_outputs.append({name: fp32[name] for name in self.graph_outputs})
        self._fold_part(fp32, qdq, local_result, local_ready, self.alignment.tensors, self.alignment.quantizers, set())
        self.samples += 1

    def _fold_part(self, fp32: Feed, qdq: Feed, local_result: Callable[[], Feed | None], local_ready: bool,
                   tensors: Sequence[AlignedTensor], quantizers: Sequence[QuantizerInfo], observed: set[str]) -> None:
        """_fold's statistics of *tensors*, and of *quantizers* (those reading a tensor of *qdq*) that the tensors'
        own did not observe; *observed*: the Q nodes this sample observed so far (the stepped pass folds a sample in
        chunks)."""
        local = local_result() if local_ready else None
        kept: list[tuple[_TensorStats, np.ndarray, float, AlignedTensor]] = []
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: handled by the finite path of streaming
            for tensor in tensors:
                value = fp32[tensor.name]
                if not value.size:
                    continue
                stats = self.stats[tensor.name]
                ref = np.asarray(value, dtype=np.float32).ravel()
                # A Relu or Clip quantize_static removed: the QDQ tensor of its name holds the values before it
                candidate = clip_fused(tensor, qdq[tensor.qdq_name])
                ref_sq = fold_pair(stats.accumulated, ref, candidate)
                low, high = float(ref.min()), float(ref.max())
                if not (math.isfinite(low) and math.isfinite(high)):  # the range of the finite values (masks hold -inf)
                    finite = ref[np.isfinite(ref)]
                    low, high = (float(finite.min()), float(finite.max())) if finite.size else (math.inf, -math.inf)
                stats.ref_min, stats.ref_max = min(stats.ref_min, low), max(stats.ref_max, high)
                for quantizer in self._quantizers_of.get(tensor.qdq_name, ()):
                    if quantizer.q_node not in observed:
                        observed.add(quantizer.q_node)
                        observe_quantizer(self.qstats[quantizer.q_node], quantizer, candidate, self._limits)
                if local is not None:
                    fold_pair(stats.local, ref, clip_fused(tensor, local[tensor.qdq_name]), ref_sq)
                elif not local_ready:
                    kept.append((stats, ref, ref_sq, tensor))
            for quantizer in quantizers:  # Q nodes reading a tensor that is not aligned
                if quantizer.q_node not in observed:
                    observe_quantizer(self.qstats[quantizer.q_node], quantizer, qdq[quantizer.input], self._limits)
            if not local_ready:
                local = local_result()
                if local is not None:
                    for stats, ref, ref_sq, tensor in kept:
                        fold_pair(stats.local, ref, clip_fused(tensor, local[tensor.qdq_name]), ref_sq)

    def _run_local(self, feed: Feed, fp32: Feed, bind: bool = False,
                   buffers: dict[str, np.ndarray] | None = None) -> Feed | None:
        """The local graph's values of one sample by QDQ name; *bind*: written into the shared buffers (_fold_shared),
        whose QDQ values must be folded by then, or into *buffers* (_add_double_buffered's local set)."""
        local, model = self.local, self.local_model
        if local is None or model is None:
            return None
        inputs = {name: local_input(model, name, self.to_fp32_name, feed, fp32) for name in model.inputs}
        names = list(model.outputs)
        try:
            if bind and (self._buffers if buffers is None else buffers):
                values = _bound_run(local, names, inputs,
                                    self._fitting([n[: -len(LOCAL_SUFFIX)] for n in names], fp32, buffers))
            else:
                values = local.run(names, inputs)
        except Exception as exc:  # e.g. a shape only a later sample has: the local error is lost, not the pass
            self.local, self.local_error = None, exception_line(exc)
            return None
        return {name[: -len(LOCAL_SUFFIX)]: value for name, value in zip(names, values)}

    def result(self, seconds: float = 0.0) -> LayerResult:
        rows = [self._tensor_row(t) for t in self.alignment.tensors] + self._weight_rows()
        qnode_rows = [quantizer_row(q, self.qstats[q.q_node]) for q in self.alignment.quantizers]
        qnode_rows += self._weight_quantizer_rows()
        skipped = [*self.alignment.skipped, *self.skipped_weights]
        summary = {
            "format": 1, "samples": self.samples, "aligned_tensors": len(self.alignment.tensors),
            "aligned_weights": len(self.alignment.weights) - len(self.skipped_weights), "quantizers": len(self.alignment.quantizers),
            "unmatched": self.alignment.unmatched[:50], "unmatched_count": len(self.alignment.unmatched),
            "local": self.local is not None, "local_error": self.local_error, "seconds": round(seconds, 3),
            **skipped_record(skipped), **self._nonfinite_record(),
        }
        return LayerResult(rows, qnode_rows, summary, self.fp32_outputs)

    def _nonfinite_record(self) -> dict[str, Any]:
        """What layers/summary.json says of the aligned activations holding NaN/Inf (optional, 1.2-compatible; absent
        when none): `nonfinite_tensors` (how many) and `nonfinite` (the first NONFINITE_LISTED in graph order, each
        with its NaN/Inf value counts in the FP32 and the QDQ model over the samples read). The error metrics skip
        those positions, so without this an Inf born inside the QDQ model would leave no trace."""
        found = [(t, self.stats[t.name].accumulated) for t in self.alignment.tensors]
        found = sorted(((t, acc) for t, acc in found if acc.ref_nonfinite or acc.cand_nonfinite),
                       key=lambda pair: pair[0].index)
        if not found:
            return {}
        return {"nonfinite_tensors": len(found),
                "nonfinite": [{"tensor": t.name, "node": t.node, "op_type": t.op_type, "index": t.index,
                               "fp32": acc.ref_nonfinite, "qdq": acc.cand_nonfinite,
                               "values": acc.count + acc.nonfinite_pairs,
                               "reads_int8": int8_upstream(self.q_index, t.qdq_name)}
                              for t, acc in found[:NONFINITE_LISTED]]}

    def _tensor_row(self, tensor) -> dict[str, Any]:
        stats = self.stats[tensor.name]
        ref_absmax = max(abs(stats.ref_min), abs(stats.ref_max)) if stats.ref_min <= stats.ref_max else None
        return {"tensor": tensor.name, "node": tensor.node, "op_type": tensor.op_type, "index": tensor.index,
                "kind": "activation", "qdq_dtype": tensor.qdq_dtype or "", "samples": self.samples,
                **_metrics(stats.accumulated, ""), **(_metrics(stats.local, "local_") if self.local else {}),
                "ref_min": _finite(stats.ref_min), "ref_max": _finite(stats.ref_max), "ref_absmax": ref_absmax}

    def _weight_rows(self) -> list[dict[str, Any]]:
        """The weight rows (computed once: add_all asks first) and, in skipped_weights, the weights not compared."""
        if self._weights is None:
            self._weights = self._weight_rows_now()
        return self._weights

    def _weight_rows_now(self) -> list[dict[str, Any]]:
        rows, self.skipped_weights = [], []
        for weight in self.alignment.weights:
            value = weight_value(self.f_index, weight.name)
            dequantized = _safe_dequantize(self.q_index, weight, value)
            if dequantized is None:
                continue
            if dequantized.shape != np.shape(value):  # the same name, another tensor (reshaped before quantization)
                self.skipped_weights.append(SkippedTensor(weight.name, weight.dq_node, "weight", SKIP_SHAPE,
                                                          describe(np.asarray(value)), describe(dequantized)))
                continue
            acc = Accumulator()
            accumulate(acc, np.asarray(value), dequantized)
            consumer = weight.consumers[0] if weight.consumers else weight.dq_node
            node = self.q_index.named.get(consumer)
            rows.append({"tensor": weight.name, "node": consumer, "op_type": node.op_type if node is not None else "",
                         "index": self.q_index.position[id(node)] if node is not None else None, "kind": "weight",
                         "qdq_dtype": weight.dtype, "samples": 0, **_metrics(acc, ""),
                         "ref_min": float(np.min(value)) if np.size(value) else None,
                         "ref_max": float(np.max(value)) if np.size(value) else None,
                         "ref_absmax": float(np.max(np.abs(value))) if np.size(value) else None})
        return rows

    def _weight_quantizer_rows(self) -> list[dict[str, Any]]:
        rows = []
        for weight in self.alignment.weights:
            if weight.q_node is None:
                continue  # integers stored directly: the clipping happened before the graph was written
            q_node = self.q_index.node_named(weight.q_node)
            info = _weight_quantizer(self.q_index, q_node, weight)
            value = self.q_index.constant_value(q_node.input[0])
            if info is None or value is None or not np.size(value):
                continue
            stats = QuantizerStats()
            observe_quantizer(stats, info, np.asarray(value))
            rows.append(quantizer_row(info, stats, kind="weight"))
        return rows


def weight_value(index: GraphIndex, name: str) -> np.ndarray | None:
    """GraphIndex.constant_value (through Identity and Cast), reading a weight models.without_weights left in its
    external data file from that file: a collect whose per-layer pass runs no what-if keeps the FP32 weights there and
    the weight rows read them one at a time (issue 12: the synthetic 102 MB model's loaded weights were held through
    the whole pass, the marked FP32 session reading its own copy from the file)."""
    for depth in range(10):  # constant_value's walk: at most 9 Identity/Cast nodes
        tensor = index.constant_protos.get(name)
        if tensor is not None:
            on_disk = stored_value(index.model, tensor)
            return on_disk if on_disk is not None else index.constant_value(name)
        node = index.producer.get(name)
        if node is None or depth == 9 or node.op_type not in ("Identity", "Cast") or not node.input:
            return None
        name = node.input[0]
    return None


def collect_layers(fp32: onnx.ModelProto, qdq: onnx.ModelProto, samples: Sequence[Feed], provider: str = "cpu",
                   progress: Progress | None = None) -> LayerResult:
    """The per-layer pass over *samples* (each sample's tensors are dropped once accumulated)."""
    start = time.perf_counter()
    collector = LayerCollector(fp32, qdq, provider)
    collector.add_all(samples, None if progress is None else
                      lambda index: progress.count("per-layer samples", index + 1, len(samples)))
    return collector.result(time.perf_counter() - start)


UPSTREAM_HOPS = 4  # float nodes walked back from a tensor to the INT8 activations its values come from


def int8_upstream(index: GraphIndex, tensor: str) -> list[dict[str, str]]:
    """The quantized activations (a QuantizeLinear -> DequantizeLinear on a computed tensor, not a weight) that *tensor*
    of the QDQ graph is computed from through at most UPSTREAM_HOPS float nodes, nearest first: each as its tensor and
    the node that writes it. A Reciprocal that turns Inf reads an INT8 value that rounded to 0 somewhere up there."""
    found: list[dict[str, str]] = []
    seen, frontier = {tensor}, [tensor]
    for _ in range(UPSTREAM_HOPS):
        following = []
        for name in frontier:
            node = index.producer.get(name)
            for source in (node.input if node is not None else ()):
                if not source or source in seen:
                    continue
                seen.add(source)
                quantized = _dequantized_activation(index, source)
                if quantized is not None:
                    writer = index.producer.get(quantized)
                    found.append({"tensor": quantized, "node": writer.name if writer is not None else ""})
                elif source in index.producer and not index.is_constant(source):
                    following.append(source)
        if found:
            return found
        frontier = following
    return found


def _dequantized_activation(index: GraphIndex, name: str) -> str | None:
    """The activation a DequantizeLinear output *name* carries, when its QuantizeLinear reads a computed tensor."""
    dq = index.producer.get(name)
    if dq is None or dq.op_type != "DequantizeLinear":
        return None
    q = index.producer.get(dq.input[0])
    if q is None or q.op_type != "QuantizeLinear" or index.is_constant(q.input[0]):
        return None
    return q.input[0]


def skipped_record(skipped: list[SkippedTensor]) -> dict[str, Any]:
    """What layers/summary.json says of the pairs not compared (optional, 1.2-compatible; absent when none):
    `skipped_tensors` (how many), `skipped_reasons` (how many per reason) and `skipped` (the first SKIPPED_LISTED)."""
    if not skipped:
        return {}
    reasons = {reason: sum(1 for s in skipped if s.reason == reason) for reason in SKIP_REASONS}
    return {"skipped_tensors": len(skipped), "skipped_reasons": {k: n for k, n in reasons.items() if n},
            "skipped": [s.record() for s in skipped[:SKIPPED_LISTED]]}


def exception_line(exc: BaseException) -> str:
    """An exception as one line for a bundle's record: its type and the first 300 characters of its first line."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"


@dataclass
class _StepLocal:
    """The local graph in steps (collect/stepwise.py) and, per chunk, the local inputs its FP32 values give."""

    steps: Any
    arrives: dict[int, list[str]]


def _release_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's malloc_trim): the stepped pass's arrays of one sample
    are freed, and without it the allocator keeps their pages in its per-thread heaps."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None


_FLOAT_TYPES = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)  # marked as float32


def _bound_run(session: Any, names: list[str], feed: Feed, buffers: list[np.ndarray | None]) -> list[np.ndarray]:
    """session.run(names, feed) with each output that has a buffer written into it (ONNX Runtime's I/O binding; the
    others allocated by ONNX Runtime as in run): the same kernels on the same values, the values in memory the pass
    reuses instead of in the session's arena, which keeps what a run allocated for the session's life. Where the
    binding fails (a value of another shape than its buffer's: LayerCollector._fitting binds only the buffers of this
    sample's shapes) the run is run unbound, so its error, if any, is run's own; a session wrapped for the stages'
    turns runs unbound."""
    import onnxruntime

    if not isinstance(session, onnxruntime.InferenceSession) or not any(b is not None for b in buffers):
        return session.run(names, feed)
    try:
        binding = session.io_binding()
        for name, value in feed.items():
            binding.bind_cpu_input(name, np.ascontiguousarray(value))
        for name, buffer in zip(names, buffers):
            if buffer is None:
                binding.bind_output(name, "cpu")
            else:
                binding.bind_output(name, "cpu", 0, buffer.dtype, list(buffer.shape), buffer.ctypes.data)
        session.run_with_iobinding(binding)
        produced = binding.get_outputs()
        values = [buffer if buffer is not None else produced[i].numpy() for i, buffer in enumerate(buffers)]
        del produced, binding
        return values
    except Exception:  # noqa: BLE001 - run unbound: its result or its own error
        return session.run(names, feed)


def _nbytes(values: Feed) -> int:
    return sum(int(getattr(value, "nbytes", 0)) for value in values.values())


def float32_outputs(index: GraphIndex, names: list[str]) -> tuple[bytes | str, list[str]]:
    """The model with *names* as outputs, FP16/BF16 ones cast to FP32 inside the graph (ONNX Runtime's
    Cast is vectorised; NumPy's float16 conversion costs more than the run). Returns the output names."""
    casts, outputs = [], []
    for name in names:
        if index.elem_types.get(name) in (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16):
            casts.append(onnx.helper.make_node("Cast", [name], [name + "__fp32"], to=onnx.TensorProto.FLOAT,
                                               name=name + "__fp32"))
            name = name + "__fp32"
        outputs.append(name)
    return marked_source(index.model, outputs, casts), outputs


def observe_quantizer(stats: QuantizerStats, quantizer: QuantizerInfo, values: np.ndarray,
             limits: dict[tuple[str, int], tuple[Any, Any, Any, Any]] | None = None) -> None:
    """Count values beyond the integer limits (after rounding) and track the observed range.

    *limits* caches each Q node's limits by rank (they are the same for every sample)."""
    x = np.asarray(values, dtype=np.float32)
    if not x.size:
        return
    key = (quantizer.q_node, x.ndim)
    bounds = limits.get(key) if limits is not None else None
    if bounds is None:
        axis = quantizer.axis if quantizer.axis is None or quantizer.axis >= 0 else quantizer.axis + x.ndim
        scale = along_axis(quantizer.scale, axis or 0, x.ndim)
        zero = along_axis(quantizer.zero_point, axis or 0, x.ndim)
        # A sentinel's scale (1.3e36 on a float32.min attention mask) puts a limit past float32's range: as -inf or
        # inf it compares right with the float32 values (nothing lies beyond it), without an overflow warning at
        # each comparison's cast on the user's console.
        low = _within_float32((quantizer.qmin - zero - 0.5) * scale)
        high = _within_float32((quantizer.qmax - zero + 0.5) * scale)
        bounds = (low, high, low if isinstance(low, float) else low.max(), high if isinstance(high, float) else high.min())
        if limits is not None:
            limits[key] = bounds
    low, high, widest_low, narrowest_high = bounds
    stats.values += x.size
    smallest, largest = x.min(), x.max()  # NaN propagates, ±inf shows: both finite means every value is
    if np.isfinite(smallest) and np.isfinite(largest):
        # Two passes instead of six in the usual case (issue 12): a range inside every channel's limits
        # clips nothing, compared in the same dtype as the element-wise count it skips.
        if smallest < widest_low or largest > narrowest_high:
            stats.clipped += int(np.count_nonzero(x < low)) + int(np.count_nonzero(x > high))
        stats.observed_min = min(stats.observed_min, float(smallest))
        stats.observed_max = max(stats.observed_max, float(largest))
        return
    stats.clipped += int(np.count_nonzero(x < low)) + int(np.count_nonzero(x > high))
    finite = x[np.isfinite(x)]
    if finite.size:
        stats.observed_min = min(stats.observed_min, float(finite.min()))
        stats.observed_max = max(stats.observed_max, float(finite.max()))


def _within_float32(limit: Any) -> Any:
    """*limit* with values beyond float32's range as -inf or inf (a float stays a float)."""
    bound = float(np.finfo(np.float32).max)
    if isinstance(limit, float):
        return limit if abs(limit) <= bound else math.copysign(math.inf, limit)
    return np.where(np.abs(limit) <= bound, limit, np.copysign(np.inf, limit))


def quantizer_row(quantizer: QuantizerInfo, stats: QuantizerStats, kind: str = "activation") -> dict[str, Any]:
    scale = float(np.max(quantizer.scale))
    zero = float(quantizer.zero_point.ravel()[0])
    low, high = (quantizer.qmin - zero) * scale, (quantizer.qmax - zero) * scale
    used = None
    if stats.values and high > low:
        span = min(stats.observed_max, high) - max(stats.observed_min, low)
        used = max(0.0, min(1.0, span / (high - low)))
    return {"q_node": quantizer.q_node, "tensor": quantizer.tensor, "kind": kind, "dtype": quantizer.dtype,
            "values": stats.values, "clipped_share": stats.clipped / stats.values if stats.values else None,
            "range_used": used, "representable_min": low, "representable_max": high,
            "observed_min": _finite(stats.observed_min), "observed_max": _finite(stats.observed_max),
            "per_channel": quantizer.scale.size > 1}


def _weight_quantizer(q_index: GraphIndex, q_node: onnx.NodeProto, weight: AlignedWeight) -> QuantizerInfo | None:
    from qdqreport.collect.align import QRANGE, qdq_params

    if weight.dtype not in QRANGE:
        return None
    scale, zero = qdq_params(q_index, q_node)
    axis = int(next((a.i for a in q_node.attribute if a.name == "axis"), 1)) if scale.size > 1 else None
    return QuantizerInfo(weight.q_node or "", q_node.input[0], weight.name, weight.dtype, scale, zero, axis,
                         *QRANGE[weight.dtype])


def _safe_dequantize(q_index: GraphIndex, weight: AlignedWeight, value: np.ndarray | None) -> np.ndarray | None:
    if value is None or not np.size(value):
        return None
    try:
        return dequantized_weight(q_index, weight, np.asarray(value))
    except (ValueError, TypeError):  # blocked or exotic layouts: the weight is listed as unmatched instead
        return None


def _metrics(acc: Accumulator, prefix: str) -> dict[str, Any]:
    return {f"{prefix}cosine": acc.cosine(), f"{prefix}sqnr_db": acc.sqnr_db(), f"{prefix}mse": acc.mse(),
            f"{prefix}max_abs": acc.max_abs if acc.count else None}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
