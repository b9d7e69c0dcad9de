"""Data recipes for the rules' Fires/Quiet examples and the tests, shaped like the real demo models.

The PaddleOCR text-direction classifier (input "x" [N,3,48,192], 2-class softmax) and a YOLO-style
detector head (4 box rows in pixels concatenated with 80 sigmoid score rows): output runs, input
statistics and precision summaries to feed a BundleBuilder.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from qdqreport.analysis.calibration_data import (channel_correlation, correlation_summary, count_ids, ids_summary,
                                                 lag1_autocorrelation, structure_summary)
from qdqreport.analysis.spectrum import signal_axis, spectral_centroid, spectrum_summary

CLS_INPUT = "x"
CLS_OUTPUT = "save_infer_model/scale_0.tmp_1"
DET_OUTPUT = "output0"


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (shifted / shifted.sum(axis=-1, keepdims=True)).astype(np.float32)


def class_logits(samples: int, classes: int = 2, seed: int = 0) -> list[np.ndarray]:
    """One [1, classes] logit row per sample with realistic margins (most samples confident)."""
    rng = np.random.default_rng(seed)
    return [rng.normal(0.0, 3.0, size=(1, classes)) for _ in range(samples)]


def classifier_run(logits: Sequence[np.ndarray], noise: float = 0.0, seed: int = 1,
                   shrink: float = 1.0) -> list[dict[str, np.ndarray]]:
    """Softmax outputs of *logits*, optionally shrunk (lost contrast) and perturbed (quantization noise)."""
    rng = np.random.default_rng(seed)
    return [{CLS_OUTPUT: softmax(row * shrink + rng.normal(0.0, noise, size=row.shape))} for row in logits]


def detector_run(samples: int, seed: int = 0, box_noise: float = 0.0, scores_lost: bool = False,
                 score_noise: float = 0.0) -> list[dict[str, np.ndarray]]:
    """[1, 84, 300] detector outputs; *scores_lost* quantizes the scores with the box rows' scale (all 0)."""
    out = []
    for index in range(samples):
        rng = np.random.default_rng(seed * 1000 + index)  # same scene for every stage with the same seed
        boxes = np.concatenate([rng.uniform(0, 640, (2, 300)), rng.uniform(10, 200, (2, 300))])
        scores = 1.0 / (1.0 + np.exp(-rng.normal(-6.0, 2.0, (80, 300))))
        noise = np.random.default_rng(seed * 1000 + index + 7919)
        boxes = boxes + noise.normal(0.0, box_noise, boxes.shape)
        scores = np.zeros_like(scores) if scores_lost else np.clip(scores + noise.normal(0, score_noise, scores.shape), 0, 1)
        out.append({DET_OUTPUT: np.concatenate([boxes, scores])[None].astype(np.float32)})
    return out


def text_images(samples: int, seed: int = 0) -> np.ndarray:
    """[N,3,48,192] float32 crops in [0,1]: light paper, dark strokes, a warm colour cast."""
    rng = np.random.default_rng(seed)
    paper = rng.uniform(0.75, 0.95, (samples, 1, 1, 1)) * np.array([1.0, 0.95, 0.85]).reshape(1, 3, 1, 1)
    strokes = rng.random((samples, 1, 48, 192)) < 0.15
    return np.where(strokes, rng.uniform(0.0, 0.2, (samples, 3, 48, 192)), paper).astype(np.float32)


def audio_chunks(count: int, seed: int, level: float, recorded_at: float = 16000.0) -> np.ndarray:
    """[N,1,576] audio-like chunks swinging about zero: three tones, each chunk at its own loudness up to *level*,
    read at 16 kHz; *recorded_at* another rate puts every tone at 16000 / recorded_at of its frequency."""
    rng = np.random.default_rng(seed)
    t = np.arange(576) / recorded_at
    tones = sum(np.sin(2 * np.pi * rng.uniform(100, 900, (count, 1, 1)) * t + rng.uniform(0, 6.3, (count, 1, 1)))
                for _ in range(3))
    return (level * rng.uniform(0.3, 1.0, (count, 1, 1)) * tones).astype(np.float32)


def _mean_sem(channel: np.ndarray) -> dict[str, float]:
    """The standard error of a channel's set mean from its samples' own means, as collect/stats.py records it."""
    means = channel.reshape(channel.shape[0], -1).mean(axis=1)
    return {"mean_sem": float(np.std(means, ddof=1) / np.sqrt(len(means)))} if len(means) >= 2 else {}


def input_stats(name: str, batch: np.ndarray, source: str, per_sample: bool = True) -> dict[str, Any]:
    """An eval_stats/calib_stats document computed from a real NCHW batch."""
    def stats(values: np.ndarray) -> dict[str, float]:
        return {"min": float(values.min()), "max": float(values.max()), "mean": float(values.mean()),
                "std": float(values.std())}
    entry = {"shape": list(batch.shape[1:]), "dtype": str(batch.dtype), "channel_axis": 1,
             "overall": {**stats(batch), "absmax": float(np.abs(batch).max())},
             "channels": [{"index": c, **stats(batch[:, c]), **_mean_sem(batch[:, c])} for c in range(batch.shape[1])],
             "per_sample": [stats(sample) for sample in batch] if per_sample else []}
    # As the collector measures them (collect/stats.py): each sample's smoothness (neighbour correlation along the
    # last axis) and its lowest correlation between colour channels.
    samples = [sample[None].astype(np.float64) for sample in batch]
    entry["structure"] = structure_summary([lag1_autocorrelation(sample) for sample in samples])
    entry["channel_correlation"] = correlation_summary([channel_correlation(sample) for sample in samples])
    axis = signal_axis(batch.shape[1:]) if batch.dtype.kind == "f" else None
    if axis is not None:
        entry["spectrum"] = spectrum_summary([spectral_centroid(sample) for sample in batch], axis - batch.ndim + 1)
    if batch.dtype.kind == "i":
        counts: dict[int, int] = {}
        count_ids(counts, batch)
        ids = ids_summary(counts)
        if ids is not None:
            entry["ids"] = ids
    return {"format": 1, "source": source, "samples": int(batch.shape[0]), "inputs": {name: entry}}


def node(name: str, op_type: str, index: int, precision: str = "int8", outputs: Sequence[str] = (),
         feeds_graph_output: bool = False) -> dict[str, Any]:
    quantized = precision not in ("fp16", "fp32", "bf16")
    weighted = op_type in ("Conv", "MatMul", "Gemm", "ConvTranspose")
    return {"name": name, "op_type": op_type, "index": index, "precision": precision,
            "activation_quantized": quantized, "weight_quantized": quantized and weighted,
            "activation_dtype": precision if quantized else None,
            "weight_dtype": precision if quantized and weighted else None, "output_quantized": quantized,
            "outputs": list(outputs) or [f"{name}.out"], "feeds_graph_output": feeds_graph_output}


def qdq_entry(tensor: str, consumers: Sequence[str], kind: str = "activation", **overrides: Any) -> dict[str, Any]:
    """A healthy symmetric INT8 Q/DQ pair; *overrides* plant the defect under test."""
    entry = {"q_node": f"{tensor}_QuantizeLinear", "dq_nodes": [f"{tensor}_DequantizeLinear"], "tensor": tensor,
             "kind": kind, "dtype": "int8", "axis": 0 if kind == "weight" else None,
             "scale_count": 16 if kind == "weight" else 1, "scale_min": 0.0042, "scale_max": 0.031,
             "scale_constant": True, "scale_finite_positive": True, "zero_point_nonzero": False,
             "zero_point_max_abs": 0, "pair_scales_match": True, "consumers": list(consumers)}
    entry.update(overrides)
    return entry


def precision_summary(nodes: Sequence[dict[str, Any]], qdq: Sequence[dict[str, Any]] = (),
                      sensitive: Sequence[dict[str, Any]] = (), float_dtype: str = "fp16") -> dict[str, Any]:
    """A quant/precision_summary.json document, counts derived from *nodes*."""
    by_op: dict[str, dict[str, int]] = {}
    for n in nodes:
        by_op.setdefault(n["op_type"], {}).setdefault(n["precision"], 0)
        by_op[n["op_type"]][n["precision"]] += 1
    quantized = sum(1 for n in nodes if n["activation_quantized"])
    q_nodes = sum(1 for e in qdq if e["q_node"])
    return {"format": 1, "producer": {"name": "modelopt", "version": "0.47.0"}, "float_dtype": float_dtype,
            "counts": {"nodes": len(nodes) + q_nodes + sum(len(e["dq_nodes"]) for e in qdq),
                       "compute_nodes": len(nodes), "quantized_nodes": quantized, "q_nodes": q_nodes,
                       "dq_nodes": sum(len(e["dq_nodes"]) for e in qdq)},
            "by_op_type": by_op, "nodes": list(nodes), "qdq": list(qdq), "sensitive": list(sensitive)}


def classifier_graph(head_precision: str = "int8", softmax_precision: str = "fp16") -> dict[str, Any]:
    """The MobileNetV3 text-direction classifier's tail: convs, the final MatMul, Softmax."""
    nodes = [node(f"Conv@{i}", "Conv", i, outputs=[f"conv{i}.tmp_0"]) for i in range(6)]
    nodes += [node("MatMul@0", "MatMul", 6, head_precision, ["linear_1.tmp_0"]),
              node("Softmax@0", "Softmax", 7, softmax_precision, ["softmax_0.tmp_0"], feeds_graph_output=True)]
    qdq = [qdq_entry(f"conv{i}.tmp_0", [f"Conv@{i + 1}"]) for i in range(5)]
    sensitive = [{"node": "MatMul@0", "op_type": "MatMul", "pattern": "final_matmul",
                  "quantized": head_precision == "int8", "tensor": "linear_1.tmp_0"},
                 {"node": "Softmax@0", "op_type": "Softmax", "pattern": "softmax",
                  "quantized": softmax_precision == "int8", "tensor": "softmax_0.tmp_0"}]
    return precision_summary(nodes, qdq, sensitive)


def accept_decode(outputs: dict[str, np.ndarray]) -> dict[str, object]:
    """A thresholded decision as rapidocr decodes PaddleOCR's cls: the label, its probability, and whether class 1 is
    accepted above 0.9."""
    probs = np.asarray(outputs[CLS_OUTPUT], dtype=np.float64).reshape(-1)
    index = int(np.argmax(probs))
    return {"label": index, "score": float(probs[index]), "accept": bool(index == 1 and probs[index] > 0.9)}


def near_threshold_task(b) -> None:
    """Every sample's class-1 probability sits near accept_decode's 0.9 threshold (logit gap ln 9 +/- 0.05): INT8-sized
    noise (0.05 on the logits) keeps the argmax and the cosine but flips "accept" on many samples."""
    rng = np.random.default_rng(5)
    logits = [np.array([[0.0, np.log(9.0) + d]]) for d in rng.uniform(-0.05, 0.05, 32)]
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.05, seed=6)).task(accept_decode)
