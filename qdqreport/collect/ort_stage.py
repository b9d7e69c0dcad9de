"""ONNX Runtime stages, run through Polygraphy's OnnxrtRunner (the runner Polygraphy users know).

The runner creates and activates the session; each sample is run by that session's own
`run(None, feed)`, the call OnnxrtRunner.infer makes, named by the session's outputs as infer names
them, so the outputs are the ones `runner.infer(feed)` returns. What is left out is infer's Python
around that call: for every input of every sample it asks whether the array is a PyTorch tensor,
which looks for the torch package on sys.path each time (importlib.util.find_spec) and, where torch
is installed, imports it on the first call. On a 0.2 ms model that came to more than the inference
(0.3 ms per call; issue 12, docs/BENCHMARKS.md). The stage details say so (`inference`).

A stage that cannot start or that raises on a sample is recorded as failed with its error;
the other stages go on, and the bundle is still written.

Thread counts are set, not left to ONNX Runtime's defaults, and recorded in the stage details:
intra-op threads = the CPU cores this process may use (ORT's own default counts physical cores,
which some containers under-report), inter-op threads = 1 (the graph runs sequentially: a
batch-1 inference has little parallelism between nodes, and a second pool would fight the first
for the same cores), and no spinning: idle pool threads that spin for work took the cores from the
running session and from other processes (the demo's two models ran 2-3x faster without spinning
on a loaded 2-core machine; issue 12, docs/BENCHMARKS.md).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from qdqreport.errors import InputError

Feed = dict[str, np.ndarray]
# How each sample runs (stage details `inference`): the runner's session, as OnnxrtRunner.infer calls it.
INFERENCE = "OnnxrtRunner.sess.run(None, feed), as OnnxrtRunner.infer calls it, without its per-call PyTorch check"


@dataclass
class OrtStage:
    stage_id: str
    graph_outputs: tuple[str, ...]
    runner: Any = None
    error: str | None = None
    outputs: list[Feed] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    seconds: float = 0.0
    open_seconds: float = 0.0  # creating the session (collect/whatif_samples.py plans a trial's fixed cost from it)
    details: dict[str, Any] = field(default_factory=dict)
    _names: tuple[str, ...] = ()  # the session's output names, in its order (what infer names its outputs by)

    @property
    def active(self) -> bool:
        return self.runner is not None and self.error is None

    def infer(self, feed: Feed, index: int) -> Feed | None:
        """Run one sample; return all outputs (graph and extra), or None after a failure."""
        if not self.active:
            return None
        start = time.perf_counter()
        try:
            # Every feed was checked against both models before any run (inputs.check_feed); Polygraphy's own
            # check would refuse an input whose model declares no shape at all, which ONNX Runtime accepts.
            # OnnxrtRunner.infer's call (the module docstring): feeds are NumPy arrays, which it passes as they are.
            with RUNS:  # in turn with the runs of a bounded pass beside the stages (beside_stages)
                values = self.runner.sess.run(None, feed)
            # Copied: ONNX Runtime's output arrays hold the session's memory arena (its activations, ~0.5 GB on a
            # 320x320 U^2-Net-p) until the last of them is gone, and a sample's outputs outlive the stage (the
            # comparison's held-back samples, a loop's last value), so a closed stage's arena stayed in memory
            # beside the next session's (issue 12). The copy is of the outputs only (2.8 MB a sample there).
            result = {name: np.array(value) for name, value in zip(self._names, values)}
            del values
        except Exception as exc:
            self.fail(f"sample {index}: {type(exc).__name__}: {_first_line(exc)}")
            return None
        self.seconds += time.perf_counter() - start
        self.outputs.append({name: result[name] for name in self.graph_outputs})
        return result

    def fail(self, message: str) -> None:
        self.error = message
        self.log.append(f"ERROR {message}")
        self.close()

    def close(self) -> None:
        if self.runner is not None:
            try:
                self.runner.deactivate()
            except Exception:  # deactivation failure must not hide the real error
                pass
            self.runner = None


# The bounded passes may run in a worker thread while the stages run (collect/pipeline._BoundedPasses). Their sessions
# are built there beside the stages' (ONNX Runtime releases the GIL while it builds one), but each run takes RUNS in
# turn with the stages' runs: two sessions' intra-op pools running at once on two cores left a pool's caller waiting
# for a helper thread the other pool had displaced (vad under load: +20% CPU). Every session keeps its thread settings.
#
# A session built in a worker thread carries a log id (BESIDE_LOGID, or the stage's id for a stage session built there),
# and the capture of descriptor 2 while it is built (session_log) counts the ONNX Runtime warnings of that id only:
# whatever else is written meanwhile (a stage's run-time warnings in the main thread, progress lines) is passed on.
RUNS = threading.Lock()
BESIDE_LOGID = "qdqreport-beside"
_WORKER = threading.local()  # .logid: the log id of the sessions this thread builds; .in_turn: their runs take RUNS
_WORKER_LOGIDS = {BESIDE_LOGID}


@contextmanager
def beside_stages(logid: str = BESIDE_LOGID, in_turn: bool = True) -> Iterator[None]:
    """Sessions new_session builds in this (worker) thread meanwhile carry *logid*; with *in_turn* their runs take RUNS
    in turn with the stages' runs."""
    _WORKER_LOGIDS.add(logid)
    _WORKER.logid, _WORKER.in_turn = logid, in_turn
    try:
        yield
    finally:
        _WORKER.logid, _WORKER.in_turn = None, False


class _InTurn:
    """A session whose runs take RUNS; everything else is the session's."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def run(self, *args: Any, **kwargs: Any) -> Any:
        with RUNS:
            return self._session.run(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def open_stage(stage_id: str, model_bytes: bytes | str, graph_outputs: tuple[str, ...], provider: str,
               config: dict[str, str] | None = None) -> OrtStage:
    """Create the session now, so a model ORT cannot load fails before any sample runs.

    *model_bytes*: the serialised model, or the path of one too large to serialise (models.session_source);
    *config*: session config entries beyond the thread settings (the saturation check's
    session.disable_quant_qdq)."""
    from polygraphy.backend.onnxrt import OnnxrtRunner
    from polygraphy.logger import G_LOGGER

    # We record every failure in the stage ourselves; Polygraphy's own lines (and its hint about the
    # optional 'colored' module) would only clutter stderr, and --quiet must mean quiet.
    G_LOGGER.colors = False
    G_LOGGER.module_severity = G_LOGGER.CRITICAL + 1
    stage = OrtStage(stage_id, graph_outputs)
    start = time.perf_counter()
    try:
        runner = OnnxrtRunner(new_session(model_bytes, provider, config), name=stage_id)
        runner.activate()
        stage.open_seconds = time.perf_counter() - start
    except Exception as exc:
        stage.fail(f"session creation failed: {type(exc).__name__}: {_first_line(exc)}")
        return stage
    stage.runner = runner
    stage._names = tuple(node.name for node in runner.sess.get_outputs())
    stage.details = {"providers": list(runner.sess.get_providers()), "runner": "polygraphy.OnnxrtRunner",
                     "inference": INFERENCE, **thread_details()}
    stage.log.append(f"INFO session created with providers {stage.details['providers']}")
    return stage


def intra_op_threads() -> int:
    """The CPU cores this process may run on (its affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def thread_details() -> dict[str, Any]:
    """What the stage details record about threading (docs/bundle.md)."""
    return {"intra_op_num_threads": intra_op_threads(), "inter_op_num_threads": 1, "execution_mode": "sequential",
            "allow_spinning": False}


def new_session(model: bytes | str, provider: str, config: dict[str, str] | None = None,
                optimized_path: str | None = None, optimize: bool = True, arena: bool = True,
                mem_pattern: bool = True) -> Any:
    """An onnxruntime.InferenceSession with the thread counts of thread_details() and *provider*
    matched as Polygraphy's SessionFromOnnx does (exact name, or a case-insensitive part of one).

    *optimized_path*: where ONNX Runtime writes the graph it optimised; *optimize* False: run the graph as written (one
    ONNX Runtime optimised already); *arena* False: no CPU memory arena (collect/stepwise.py); *mem_pattern* False:
    no memory pattern (collect/layerwise.py's marked and local sessions: where the tensors are allocated, not what
    the kernels compute)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if optimized_path is not None:
        options.optimized_model_filepath = optimized_path
    if not optimize:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    if not arena:
        options.enable_cpu_mem_arena = False
    if not mem_pattern:
        options.enable_mem_pattern = False
    options.intra_op_num_threads = intra_op_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    from qdqreport.collect.models import session_config

    for key, value in {**(config or {}), **session_config(model)}.items():
        options.add_session_config_entry(key, value)
    logid = getattr(_WORKER, "logid", None)
    if logid:
        options.logid = logid
    with session_log(logid):
        session = onnxruntime.InferenceSession(model, sess_options=options, providers=[provider_name(provider)])
    return _InTurn(session) if getattr(_WORKER, "in_turn", False) else session


# ONNX Runtime's warnings while it builds a session, counted by kind (ort_warning_summary) instead of printed: its
# graph optimisation warns once per node it cannot constant-fold (an FP16 float part on the CPU provider, which has
# no FP16 kernel to fold with: 36 lines a session for EfficientWord-Net, every session of a collect), which changes
# no output. Errors and anything else written to stderr meanwhile are passed on.
ORT_WARNINGS: dict[str, int] = {}
_ORT_LINE = re.compile(r"^(?:\x1b\[[0-9;]*m)?\S+ \S+ \[W:onnxruntime:([^,\]]*)[^\]]*\] (.*?)(?:\x1b\[m)?$")
_NODE_NAME = re.compile(r"(?<!\S)(?:'[^']*'|\"[^\"]*\")")  # a quoted name (not the ' of "can't")
_CAPTURING = threading.Lock()


@contextmanager
def session_log(logid: str | None = None) -> Iterator[None]:
    """Capture what ONNX Runtime writes to file descriptor 2 while a session is created (it writes there from C++,
    past sys.stderr); count its warnings into ORT_WARNINGS and write everything else back. One capture at a time:
    descriptor 2 is the process's, and two threads swapping it would leave it pointing at a closed capture."""
    with _CAPTURING:
        try:
            sys.stderr.flush()
            saved = os.dup(2)
        except (OSError, ValueError):  # no usable stderr: leave it alone
            yield
            return
        with tempfile.TemporaryFile() as captured:
            os.dup2(captured.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                captured.seek(0)
                _sort_out(captured.read().decode("utf-8", errors="replace"), logid)


def _sort_out(text: str, logid: str | None = None) -> None:
    """Count the ONNX Runtime warnings of the session built meanwhile: of log id *logid* when a worker thread built it
    (beside_stages), else of any id but a worker's; pass everything else on."""
    passed_on = []
    for line in text.splitlines():
        match = _ORT_LINE.match(line)
        if match and (match.group(1) == logid if logid else match.group(1) not in _WORKER_LOGIDS):
            kind = _NODE_NAME.sub("…", match.group(2))  # the kind: the message with node and tensor names left out
            ORT_WARNINGS[kind] = ORT_WARNINGS.get(kind, 0) + 1
        else:
            passed_on.append(line)
    if passed_on:
        print("\n".join(passed_on), file=sys.stderr, flush=True)


def ort_warning_summary() -> str | None:
    """One line for the warnings ONNX Runtime gave while building this process's sessions; None when it gave none.
    Clears the count."""
    if not ORT_WARNINGS:
        return None
    total = sum(ORT_WARNINGS.values())
    kinds = sorted(ORT_WARNINGS.items(), key=lambda item: (-item[1], item[0]))
    ORT_WARNINGS.clear()
    listed = "; ".join(f"{n} x {kind}" for kind, n in kinds[:3]) + ("; ..." if len(kinds) > 3 else "")
    return f"ONNX Runtime gave {total} warning{'s' if total != 1 else ''} while building its sessions: {listed}"


def provider_name(provider: str) -> str:
    """The ONNX Runtime provider --ort-provider names (as new_session matches it)."""
    available = onnxruntime_providers()
    if provider in available:
        return provider
    return next((name for name in available if provider.lower() in name.lower()), provider)


def onnxruntime_providers() -> list[str]:
    import onnxruntime

    return list(onnxruntime.get_available_providers())


def check_provider(provider: str) -> None:
    """Refuse an execution provider this onnxruntime lacks, before any model is loaded.

    Matches as Polygraphy's SessionFromOnnx does: exact name, or a case-insensitive part of one.
    """
    import onnxruntime

    available = onnxruntime.get_available_providers()
    if provider in available or any(provider.lower() in name.lower() for name in available):
        return
    raise InputError(f"--ort-provider {provider}: not available in this onnxruntime (available: {', '.join(available)}); "
                     "install the onnxruntime build that has it (e.g. onnxruntime-gpu for cuda) or use cpu")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__
