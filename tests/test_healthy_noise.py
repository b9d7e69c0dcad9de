"""Healthy INT8-like noise never earns a warning or an error, whatever the outputs look like.

Each case is an FP32 stage and a 'QDQ' stage that adds Gaussian noise at 35 dB SNR per output (healthy
INT8 keeps 30-40 dB) to outputs of one kind: class logits, softmax probabilities, a sigmoid map, a single
speech probability, an embedding, a ReLU feature map; and 150 small head outputs at 26 dB (cosine 0.997
each). A rule that fires here reports noise as a cause. A broad guard, not a proof: the one false alarm a
larger probe found (QR006 calling one noisier sample of one of 1,000 small outputs a collapse) is pinned by
QR006's own Quiet example.
Builder data, not a real model: the point is the many shapes no corpus family has.
"""

from __future__ import annotations

import numpy as np
import pytest

from qdqreport.engine import run_rules
from qdqreport.testing import BundleBuilder

SNR_DB = {"150 small outputs": 26.0}  # every other kind: 35 dB


def _outputs(kind: str, rng: np.random.Generator, n: int) -> list[dict[str, np.ndarray]]:
    if kind == "logits":
        return [{"logits": rng.normal(0, 3, (1, 10)).astype(np.float32)} for _ in range(n)]
    if kind == "probabilities":
        e = np.exp(rng.normal(0, 3, (n, 1, 10)))
        return [{"prob": (e[i] / e[i].sum(-1, keepdims=True)).astype(np.float32)} for i in range(n)]
    if kind == "sigmoid map":
        x = rng.normal(0, 4, (n, 1, 1, 32, 32))
        return [{"sigmoid_0.tmp_0": (1 / (1 + np.exp(-x[i]))).astype(np.float32)} for i in range(n)]
    if kind == "one probability":
        return [{"speech": np.array([[rng.uniform()]], np.float32)} for _ in range(n)]
    if kind == "150 small outputs":
        return [{f"head_{k}": rng.standard_normal(16).astype(np.float32) for k in range(150)} for _ in range(n)]
    if kind == "embedding":
        return [{"embedding": rng.standard_normal((1, 384)).astype(np.float32)} for _ in range(n)]
    return [{"feat": np.maximum(rng.standard_normal((1, 8, 16, 16)), 0).astype(np.float32)} for _ in range(n)]


def _noisy(samples: list[dict[str, np.ndarray]], rng: np.random.Generator, snr_db: float) -> list[dict[str, np.ndarray]]:
    out = []
    for sample in samples:
        noisy = {}
        for name, value in sample.items():
            rms = float(np.sqrt(np.mean(value.astype(np.float64) ** 2))) or 1.0
            moved = value + rng.normal(0, rms * 10 ** (-snr_db / 20), value.shape)
            if name in ("prob", "speech") or name.startswith("sigmoid"):
                moved = np.clip(moved, 0, 1)
            if name == "prob":
                moved = moved / moved.sum(-1, keepdims=True)
            noisy[name] = moved.astype(np.float32)
        out.append(noisy)
    return out


KINDS = ["logits", "probabilities", "sigmoid map", "one probability", "150 small outputs", "embedding", "feature map"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("samples", [8, 32])
def test_healthy_noise_earns_no_warning_or_error(tmp_path, kind, samples):
    loud = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        reference = _outputs(kind, rng, samples)
        builder = BundleBuilder(tmp_path / str(seed)).stage("ort_fp32", reference).stage("ort_qdq", _noisy(reference, rng, SNR_DB.get(kind, 35.0)))
        if kind == "logits":
            builder.class_outputs("logits")
        result = run_rules(builder.context())
        assert not result.failures
        loud += [(seed, f.rule_id, f.severity, f.title) for f in result.findings if f.severity in ("error", "warning")]
    assert not loud
