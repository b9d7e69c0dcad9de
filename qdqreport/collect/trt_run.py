"""Run a built TensorRT engine on the evaluation samples through Polygraphy's TrtRunner, and,
only with --trt-mark-all, compare every marked layer output with ONNX Runtime's value of the
same tensor.

Needs a GPU: nothing in this module runs on a machine without TensorRT and CUDA.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from qdqreport.analysis.metrics import Accumulator

Feed = dict[str, np.ndarray]

MARK_ALL_WARNING = ("--trt-mark-all marks every layer output as an engine output: TensorRT cannot fuse across a "
                    "marked tensor, so these engines are NOT the engines you deploy; their layer info and accuracy "
                    "describe an unfused build")


@dataclass
class EngineRun:
    outputs: list[Feed] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    tensor_rows: list[dict[str, Any]] = field(default_factory=list)


def run_engine(engine: Any, stage_id: str, feeds: Sequence[Feed], graph_outputs: Sequence[str],
               layerwise: "LayerwiseComparison | None" = None) -> EngineRun:
    """Infer every sample; keep the graph outputs; feed the extra (marked) outputs to *layerwise*."""
    from polygraphy.backend.trt import TrtRunner

    run = EngineRun()
    try:
        with TrtRunner(engine, name=stage_id) as runner:
            for index, feed in enumerate(feeds):
                start = time.perf_counter()
                result = {name: np.array(value) for name, value in runner.infer(feed).items()}
                run.seconds += time.perf_counter() - start
                run.outputs.append({name: result[name] for name in graph_outputs if name in result})
                if layerwise is not None:
                    layerwise.add(feed, result)
    except Exception as exc:  # a failed inference is recorded; the other stages go on
        text = str(exc).strip()
        run.error = f"sample {len(run.outputs)}: {type(exc).__name__}: {text.splitlines()[0][:500] if text else ''}"
        run.outputs = []
    if layerwise is not None and run.error is None:
        run.tensor_rows = layerwise.rows()
    return run


class LayerwiseComparison:
    """ONNX Runtime values of the tensors TensorRT marked, accumulated against TensorRT's values."""

    def __init__(self, proto: Any, provider: str):
        self.proto = proto
        self.provider = provider
        self.session = None
        self.names: list[str] = []
        self.accumulators: dict[str, tuple[Accumulator, list[float]]] = {}
        self.samples = 0

    def add(self, feed: Feed, trt_result: Mapping[str, np.ndarray]) -> None:
        if self.session is None:
            self._open(trt_result)
        if not self.names:
            return
        reference = dict(zip(self.names, self.session.run(self.names, feed)))
        self.samples += 1
        for name in self.names:
            ref, cand = np.asarray(reference[name], np.float64), np.asarray(trt_result[name], np.float64)
            if ref.shape != cand.shape:
                continue  # TensorRT may keep a reshaped layout for a fused tensor; only like shapes compare
            acc, absmax = self.accumulators[name]
            finite = np.isfinite(ref) & np.isfinite(cand)
            acc.add(ref[finite], cand[finite])
            if finite.any():
                absmax[0] = max(absmax[0], float(np.abs(ref[finite]).max()))

    def rows(self) -> list[dict[str, Any]]:
        """Rows of the bundle's 'tensors' table, in ONNX graph order."""
        producers = {out: node for node in self.proto.graph.node for out in node.output}
        rows = []
        for name in self.names:
            acc, absmax = self.accumulators[name]
            if acc.count == 0:
                continue
            node = producers[name]
            rows.append({"tensor": name, "node": node.name, "op_type": node.op_type, "samples": self.samples,
                         "cosine": acc.cosine(), "sqnr_db": acc.sqnr_db(), "max_abs": acc.max_abs,
                         "rel_l2": acc.rel_l2(), "ref_absmax": absmax[0]})
        return rows

    def _open(self, trt_result: Mapping[str, np.ndarray]) -> None:
        """Compare only tensors that exist under the same name in the ONNX graph and are floating point."""
        import onnxruntime as ort

        from qdqreport.collect.models import session_config, with_extra_outputs

        order = [out for node in self.proto.graph.node for out in node.output]
        graph_outputs = {o.name for o in self.proto.graph.output}
        self.names = [n for n in order if n in trt_result and n not in graph_outputs
                      and np.issubdtype(np.asarray(trt_result[n]).dtype, np.floating)]
        providers = ["CPUExecutionProvider"] if self.provider == "cpu" else [self.provider]
        source, options = with_extra_outputs(self.proto, self.names), ort.SessionOptions()
        for key, value in session_config(source).items():  # a model read from external data: its folder
            options.add_session_config_entry(key, value)
        from qdqreport.collect.ort_stage import session_log

        with session_log():  # its warnings counted, not printed (ort_stage.ort_warning_summary)
            self.session = ort.InferenceSession(source, sess_options=options, providers=providers)
        self.accumulators = {name: (Accumulator(), [0.0]) for name in self.names}


def gpu_name() -> str | None:
    """The first GPU's name from nvidia-smi, or None where it is absent (recorded, never guessed)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        done = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return lines[0] if done.returncode == 0 and lines else None
