"""Recipes for the per-layer rules' (QR200-QR249) Fires/Quiet examples.

Shaped like real measurements of the PaddleOCR text-direction classifier (MobileNetV3) quantized
by ModelOpt: healthy INT8 tensors sit at 35-45 dB accumulated SQNR, FP16-only nodes add almost no
local error, and the ×255-calibrated model's input quantizer spans 0.5% of its range.
"""

from __future__ import annotations

import math
from typing import Any

from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_run, node, precision_summary

OPS = ("Conv", "BatchNormalization", "HardSigmoid", "Mul", "Add")


def cosine_of_sqnr(sqnr_db: float) -> float:
    """The cosine of a tensor with noise at *sqnr_db* (uncorrelated noise)."""
    return 1.0 / math.sqrt(1.0 + 10.0 ** (-sqnr_db / 10.0))


def layer_row(i: int, accumulated_db: float, local_db: float | None, absmax: float = 6.0, dtype: str = "fp16",
              op_type: str | None = None) -> dict[str, Any]:
    op = op_type or OPS[i % len(OPS)]
    row = {"tensor": f"{op.lower()}_{i}.tmp_0", "node": f"{op}@{i}", "op_type": op, "index": 300 + 7 * i,
           "kind": "activation", "qdq_dtype": dtype, "samples": 32, "cosine": cosine_of_sqnr(accumulated_db),
           "sqnr_db": accumulated_db, "mse": absmax ** 2 * 10 ** (-accumulated_db / 10) / 9, "max_abs": absmax / 20,
           "ref_min": -absmax, "ref_max": absmax, "ref_absmax": absmax}
    if local_db is not None:
        row.update({"local_cosine": cosine_of_sqnr(local_db), "local_sqnr_db": local_db,
                    "local_mse": absmax ** 2 * 10 ** (-local_db / 10) / 9, "local_max_abs": absmax / 40})
    return row


def layer_chain(count: int = 24, born_at: int | None = None, absmax: float = 6.0,
                overflow_at: int | None = None, dtype: str = "fp16") -> list[dict[str, Any]]:
    """Activations along a chain: noise accumulates slowly; *born_at* plants a node that adds -1 dB alone."""
    rows = []
    for i in range(count):
        accumulated = 42.0 - 0.4 * i
        local = 45.0 if OPS[i % len(OPS)] in ("Conv", "Mul", "Add") else 70.0
        if born_at is not None and i >= born_at:
            accumulated = -1.0 if i == born_at else 2.0 + 0.1 * (i - born_at)
            local = -1.0 if i == born_at else local
        big = 1.3e5 if overflow_at == i else absmax
        rows.append(layer_row(i, accumulated, local, big, dtype))
    return rows


def chain_precision(count: int = 24, fp16_nodes: tuple[int, ...] = ()) -> dict[str, Any]:
    nodes = [node(f"{OPS[i % len(OPS)]}@{i}", OPS[i % len(OPS)], 300 + 7 * i,
                  "fp16" if i in fp16_nodes else "int8", [f"{OPS[i % len(OPS)].lower()}_{i}.tmp_0"]) for i in range(count)]
    return precision_summary(nodes)


def quantization_run(b, broken: bool, degraded: bool = False) -> None:
    """Output stages of the classifier: collapsed (the ×255 model), degraded (a few top-1 decisions change) or within
    INT8 noise."""
    logits = class_logits(32, seed=21)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    if broken:
        b.stage("ort_qdq", classifier_run(logits, noise=1.5, shrink=0.3, seed=22))
    elif degraded:
        b.stage("ort_qdq", classifier_run(logits, noise=1.5, seed=23))
    else:
        b.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=23))


def born_at_bn(b) -> None:
    """The ×255-calibrated classifier with a BatchNormalization (node 5) that adds -1 dB on FP32 inputs."""
    quantization_run(b, broken=True)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5))


def healthy_chain(b) -> None:
    """Every tensor within INT8 noise, every node adding INT8-level noise."""
    quantization_run(b, broken=False)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain())


def accumulated_only(b) -> None:
    """born_at_bn's tables with accumulated error only (the local graph failed: no local_* columns)."""
    rows = [{k: v for k, v in r.items() if not k.startswith("local_")} for r in layer_chain(born_at=5)]
    quantization_run(b, broken=True)
    b.layers(rows)


def qnode(name: str, tensor: str, clipped: float, used: float, low: float = -0.927, high: float = 0.920) -> dict[str, Any]:
    return {"q_node": name, "tensor": tensor, "kind": "activation", "dtype": "int8", "values": 442368,
            "clipped_share": clipped, "range_used": used, "representable_min": low, "representable_max": high,
            "observed_min": low * min(1.0, used * 1.05), "observed_max": high * min(1.0, used * 1.05)}


def whatif_trials(reached: bool, judged: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Trials as measured on the ×255-calibrated demo model (32 samples). *judged*: as collect writes them since
    2026-11-27, each result with the report's judgement of the outputs (collect/whatif.py); else as before, by
    cosine and top-1 alone."""
    suspects = ["BatchNormalization@1", "BatchNormalization@3", "Conv@0", "Mul@1", "Mul@0", "GlobalAveragePool@0",
                "Conv@2", "Add@0", "Conv@4", "Add@1", "Mul@2", "Conv@6"]
    chosen = suspects[:8] if reached else suspects
    final = (0.9965, 1.0, 19.23) if reached else (0.9886, 0.8438, 15.22)
    rows = [_trial(0, "baseline", [], 0.7168, 0.5, 3.21), _trial(1, "top_k", suspects, *((1.0, 1.0, 48.9) if reached else final))]
    if reached:
        rows += [_trial(2, "bisect", suspects[:6], 0.9516, 0.7812, 9.1), _trial(3, "prune", chosen, *final),
                 _trial(4, "single", suspects[:1], 0.7523, 0.5, 3.6)]
    summary = {"format": 1, "target_cosine": 0.99, "target_top1": 0.99, "budget_seconds": 120.0, "samples": 32,
               "quantized_nodes": 129, "candidates": suspects, "baseline": {"cosine": 0.7168, "top1": 0.5, "sqnr_db": 3.21},
               "chosen": {"nodes": chosen, "cost_nodes": len(chosen), "cosine": final[0], "top1": final[1],
                          "sqnr_db": final[2], "reached": reached},
               "stopped": "target reached" if reached else "excluding the top 12 suspects does not reach the target",
               "seconds": 39.4, "trials": len(rows)}
    if judged:
        summary.update(target_cosine=None, target_top1=None, judged=(
            f"every output agrees as the report judges it ({CLS_OUTPUT} by top-1 agreement; decision threshold 0.5)"))
        summary["baseline"].update(_top1_judged(0.5))
        summary["chosen"].update(_top1_judged(final[1]))
    return rows, summary


def _top1_judged(top1: float) -> dict[str, Any]:
    """The report's judgement of the classifier's logits at *top1* (32 rows), as collect/whatif.py records it."""
    from qdqreport.analysis.agreement import DECISION_LEVELS, level_of

    changed = round((1.0 - top1) * 32)
    judgement = {"level": level_of(top1, *DECISION_LEVELS["top-1 agreement"]), "measure": "top-1 agreement",
                 "value": top1, "headline": f"{changed} of 32 top-1 decisions change"}
    return {**judgement, "output": CLS_OUTPUT, "outputs": {CLS_OUTPUT: {**judgement, "internal": False}}}


def _trial(index: int, kind: str, nodes: list[str], cosine: float, top1: float, sqnr: float) -> dict[str, Any]:
    return {"trial": index, "kind": kind, "excluded_count": len(nodes), "excluded": ";".join(nodes), "op_types": "",
            "cosine": cosine, "top1_agree": top1, "sqnr_db": sqnr, "reached": int(cosine >= 0.99 and top1 >= 0.99),
            "seconds": 1.8}
