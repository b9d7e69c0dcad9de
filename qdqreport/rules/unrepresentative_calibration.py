"""QR006: a few samples collapse under quantization while the rest stay faithful."""

from __future__ import annotations

import math
import statistics
from typing import Any, Iterator

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Series, Table, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import (
    CLS_INPUT, CLS_OUTPUT, calibration_rewrite, class_logits, cosine_of, classifier_run, input_stats, modelopt_command, rounded,
    text_images)

MEDIAN_OK = 0.98  # the typical sample is faithful: the quantization itself works
SAMPLE_COLLAPSED = 0.9  # a sample below this cosine has changed its decision, not just its noise
SQNR_DROP_DB = 10.0  # or its SQNR is 10 dB (10x noise power) under the median sample's ...
SQNR_FLOOR_DB = 20.0  # ... and below 20 dB: at 1% noise power or less a sample is still faithful
MIN_SHARE, MAX_SHARE = 0.01, 0.25  # "a few": more than a quarter is a global problem, not coverage
# "The rest are fine": the collapsed samples must stand apart, their best SQNR at least 6 dB
# (4x noise power) under the worst remaining sample's. Real INT8 noise on uncertain inputs
# forms a continuum (the demo's healthy classifier: 7, 8, 8, 12, 14 ... dB) and is not a coverage gap.
SEPARATION_DB = 6.0
WORST_SHOWN = 10
COLLAPSED_SAMPLES = (5, 17, 31)


def _bright_samples_collapse(share_all: bool):
    def build(b):
        logits, images = class_logits(40, seed=31), text_images(40, seed=31)
        reference, quantized = classifier_run(logits), classifier_run(logits, noise=0.01, seed=32)
        hit = range(0, 40, 3) if share_all else COLLAPSED_SAMPLES
        for i in hit:  # unusually bright crops: the input quantizer saturates and the class flips
            images[i] = np.clip(images[i] * 1.3, 0, 1)
            quantized[i] = {CLS_OUTPUT: reference[i][CLS_OUTPUT][..., ::-1]}
        b.class_outputs(CLS_OUTPUT).stage("ort_fp32", reference).stage("ort_qdq", quantized)
        b.artifact("eval_stats", input_stats(CLS_INPUT, (images - 0.5) / 0.5, "eval.npy"))
        calib = (text_images(64, seed=33) - 0.5) / 0.5
        b.artifact("calib_stats", input_stats(CLS_INPUT, calib, "calib.npy", per_sample=False))
    return build


def _uncertain_samples_noisy(b):
    # Healthy INT8 noise: near-tie samples move most, in a continuum (6, 9.5, 10, 10.6 ... dB), no cluster.
    logits = class_logits(50, seed=41)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.5, seed=42))


@rule(id="QR006", slug="unrepresentative-calibration", title="Calibration does not cover some inputs",
      examples=[Fires("3 bright crops of 40 flip their class", _bright_samples_collapse(False)),
                Quiet("a third of the samples collapse: a global problem", _bright_samples_collapse(True)),
                Quiet("near-tie samples degrade in a continuum", _uncertain_samples_noisy)])
def unrepresentative_calibration(ctx: Context) -> Iterator[Finding]:
    """A few evaluation samples (1–25%) collapse under quantization while the median sample stays faithful.

    A sample collapses when its cosine falls below 0.9 or its SQNR is 10 dB under the median
    sample's (and under 20 dB), while the median cosine is at least 0.98 and the collapsed
    samples stand apart: their best SQNR is 6 dB under the worst remaining sample's.

    Why it matters: quantization that works for most inputs and fails for a few usually
    means those inputs fall outside the ranges seen in calibration (brighter, darker, other
    scenes): their activations clip. The mean metric hides them; users meet them.

    Fix: add inputs like the collapsed samples to the calibration set (at least 500 samples
    for CNNs) and try the other calibration method (max keeps outliers, entropy clips them).
    """
    comparison = ctx.comparison("quantization")
    if comparison is None:
        return
    by_output: dict[str, list[dict[str, Any]]] = {}
    for row in ctx.sample_rows(comparison.id):
        by_output.setdefault(row["output"], []).append(row)
    for output, rows in sorted(by_output.items()):
        cosines = [cosine_of(r) for r in rows]
        sqnrs = [r["sqnr_db"] if r["sqnr_db"] is not None and not math.isnan(r["sqnr_db"]) else -math.inf for r in rows]
        sqnr_low = min(statistics.median(sqnrs) - SQNR_DROP_DB, SQNR_FLOOR_DB)
        collapsed = [r for r, c, q in zip(rows, cosines, sqnrs) if c < SAMPLE_COLLAPSED or q <= sqnr_low]
        share = len(collapsed) / len(rows)
        if statistics.median(cosines) < MEDIAN_OK or not collapsed or not MIN_SHARE <= share <= MAX_SHARE:
            continue
        ids = {r["sample"] for r in collapsed}
        kept = [q for r, q in zip(rows, sqnrs) if r["sample"] not in ids]
        if kept and min(kept) - max(q for r, q in zip(rows, sqnrs) if r["sample"] in ids) < SEPARATION_DB:
            continue
        outside, note = _outside_calibration(ctx, [r["sample"] for r in collapsed], len(rows))
        worst = sorted(collapsed, key=lambda r: (cosine_of(r), r["sample"]))[:WORST_SHOWN]
        yield Finding(
            rule_id="QR006", title=f"{len(collapsed)} of {len(rows)} samples collapse under quantization",
            severity="error" if share >= 0.1 else "warning", confidence=0.8 if outside else 0.55,
            score=0.7 if outside else 0.5, subject=f"{comparison.id}:{output}", stage=comparison.id,
            summary=f"Output {output}: median cosine {statistics.median(cosines):.4f}, yet {len(collapsed)} samples "
                    f"({share:.0%}) collapse (worst cosine {cosine_of(worst[0]):.2f})" + (f"; {note}" if note else ""),
            evidence=(Metric("collapsed samples", len(collapsed), threshold=f"cosine < {SAMPLE_COLLAPSED}"),
                      Series(f"Per-sample cosine of {output}", "points", tuple(str(r["sample"]) for r in rows),
                             tuple(cosines), "cosine", SAMPLE_COLLAPSED),
                      Table("Worst samples", ("sample", "cosine", "SQNR dB", "max |Δ|", "top-1 agree"),
                            tuple((r["sample"], rounded(r["cosine"]), rounded(r["sqnr_db"], 1), rounded(r["max_abs"]),
                                   r["top1_agree"]) for r in worst)),
                      *([Text(note)] if note else [])),
            fixes=_fixes(ctx, [r["sample"] for r in worst], _input_name(ctx)), tags=("root_cause",))


def _outside_calibration(ctx: Context, collapsed: list[int], total: int) -> tuple[bool, str]:
    """Whether the collapsed samples' inputs leave the calibration range more often than the others'."""
    calib, evaluation = (ctx.calib_stats or {}).get("inputs", {}), (ctx.eval_stats or {}).get("inputs", {})
    for name in sorted(set(calib) & set(evaluation)):
        low, high = calib[name]["overall"]["min"], calib[name]["overall"]["max"]
        margin = 0.01 * (high - low)
        per_sample = evaluation[name].get("per_sample") or []
        out = {i for i, s in enumerate(per_sample) if s["min"] < low - margin or s["max"] > high + margin}
        if per_sample and out:
            hits = len(out & set(collapsed))
            rest = len(out - set(collapsed))
            return (hits > len(collapsed) / 2 and rest / max(total - len(collapsed), 1) < 0.5,
                    f"{hits} of {len(collapsed)} collapsed samples have input {name} outside the calibration range "
                    f"[{low:.3g}, {high:.3g}] (vs {rest} of {total - len(collapsed)} other samples)")
    return False, ""


def _fixes(ctx: Context, samples: list[int], input_name: str) -> tuple[Fix, ...]:
    method = (ctx.modelopt_log or {}).get("calibration_method") or "entropy"  # ModelOpt's default
    other = "max" if method != "max" else "entropy"
    extend, extended = calibration_rewrite(ctx, input_name, "np.concatenate([x, np.load('<similar_inputs.npy>')])")
    return (Fix(f"Add inputs like samples {', '.join(map(str, samples))} (from training data, not the evaluation set) "
                "to the calibration set; use at least 500 calibration samples for CNNs", extend),
            Fix(f"Re-quantize with the extended set and try --calibration_method {other} (now {method})",
                modelopt_command(ctx, ["--calibration_method", other], calibration=extended)))


def _input_name(ctx: Context) -> str:
    """The model input the calibration file holds (the first one named anywhere), for .npz rewrites."""
    names = sorted((ctx.eval_stats or {}).get("inputs", {})) or [
        t["name"] for t in ((ctx.manifest.get("inputs") or {}).get("eval") or {}).get("tensors", [])]
    return names[0] if names else "<input name>"
