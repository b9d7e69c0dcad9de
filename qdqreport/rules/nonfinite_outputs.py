"""QR005: NaN or Inf in the outputs of a stage, and the first stage that produces them."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Table
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.fixes import Change, model_arg, requantize_command, trtexec_fixes
from qdqreport.rules._common import stage_label
from qdqreport.testing.recipes import detector_run

# Pipeline order: the first stage listed with NaN/Inf is where they are born.
STAGE_ORDER = ("reference", "ort_fp32", "ort_qdq", "trt_fp16", "trt_int8")


def _poisoned(samples: list[dict[str, np.ndarray]], every: int) -> list[dict[str, np.ndarray]]:
    """Overflowing score logits: every *every*-th sample gets NaN scores and an Inf box."""
    out = []
    for index, sample in enumerate(samples):
        value = sample["output0"].copy()
        if index % every == 0:
            value[0, 4:9, :40] = np.nan
            value[0, 2, 7] = np.inf
        out.append({"output0": value})
    return out


def _qdq_nans(b):
    b.stage("ort_fp32", detector_run(8)).stage("ort_qdq", _poisoned(detector_run(8, box_noise=0.4), every=3))


def _fp32_nans(b):
    reference = _poisoned(detector_run(8), every=4)
    b.stage("ort_fp32", reference).stage("ort_qdq", _poisoned(detector_run(8, box_noise=0.4), every=4))


def _fp32_masks_by_design(b):
    # A model that marks missing entries with NaN (a residue without the atom): the QDQ model marks the same ones.
    reference = _poisoned(detector_run(8), every=1)
    b.stage("ort_fp32", reference).stage("ort_qdq", _poisoned(detector_run(8, box_noise=0.2), every=1))


def _scores_zeroed_but_finite(b):
    b.stage("ort_fp32", detector_run(8)).stage("ort_qdq", detector_run(8, box_noise=0.4, scores_lost=True))


@rule(id="QR005", slug="nonfinite-outputs", title="NaN or Inf in the outputs",
      examples=[Fires("QDQ detector emits NaN scores", _qdq_nans), Fires("the FP32 model already emits NaN", _fp32_nans),
                Fires("the FP32 model marks entries with NaN, and the QDQ model the same ones (info)",
                      _fp32_masks_by_design),
                Quiet("scores collapse to zero but stay finite", _scores_zeroed_but_finite)])
def nonfinite_outputs(ctx: Context) -> Iterator[Finding]:
    """NaN or Inf values in any stage's outputs, naming the first stage in the pipeline that produces them.

    Why it matters: one NaN poisons every downstream metric (NMS, argmax, mAP) and usually
    means an overflow or a zero/infinite scale, not quantization noise. Where it first appears
    decides the fix: in the FP32 model it is an input or model problem, in the QDQ model a
    scale or FP16 problem, in an engine a TensorRT precision problem.

    When the FP32 model is the first and every later stage emits exactly as many NaN and Inf
    values in every sample and output (a model that marks missing entries with NaN: caustic-nmr's
    residues without the predicted atom), quantization adds none: an info note, no cause of any
    divergence (the comparisons skip non-finite positions).

    Samples are counted once however many outputs they are non-finite in.

    Fix: FP32 stage: check the preprocessing and the inputs. QDQ stage: look for zero or
    infinite scales; where the model has an FP16 float part, keep it in FP32 (ModelOpt's
    --high_precision_dtype fp32); where it has none, the NaN/Inf come from INT8 values fed to a
    Reciprocal, Div, Log, Sqrt, Pow or Exp (a DBNet head's 1 + exp(...) on a grid up to e^50 rounds
    1 to 0): keep those nodes float, and collect --per-layer names the tensor where they are born
    (QR205). TensorRT stages: pin the overflowing layers to FP32 and obey precision constraints.
    """
    counts, samples_of = _counts_by_stage(ctx)
    affected = [s for s in STAGE_ORDER if s in counts] + sorted(set(counts) - set(STAGE_ORDER))
    if not affected:
        return
    first = affected[0]
    nan, inf = (sum(v[i] for v in counts[first].values()) for i in range(2))
    samples, total = samples_of[first]
    rows = tuple((stage, output, *values) for stage in affected for output, values in sorted(counts[stage].items()))
    mirrored = first in ("reference", "ort_fp32") and _mirrored(ctx, first)
    also = f"; also in {', '.join(map(stage_label, affected[1:]))}" if len(affected) > 1 else ""
    yield nonfinite_outputs.finding(
        title=f"{stage_label(first)} produces NaN/Inf outputs" + (", and the quantized model the same ones"
                                                                  if mirrored else ""),
        severity="info" if mirrored else "error", confidence=0.95, score=0.1 if mirrored else 0.9, subject=first,
        stage=first, tags=() if mirrored else ("root_cause",),
        summary=f"{stage_label(first)} is the first stage with non-finite outputs: {nan} NaN and {inf} Inf values "
                f"in {samples} of {total} samples" + also + (
                    ". Every later stage has exactly as many in every sample and output: quantization adds none (a "
                    "model that marks missing entries with NaN does this by design; the comparisons skip those "
                    "positions)" if mirrored else ""),
        evidence=(Metric("samples with NaN/Inf", samples, threshold="> 0"),
                  Table("Non-finite output values by stage", ("stage", "output", "NaN", "Inf", "samples affected",
                                                              "samples"), rows)),
        fixes=(Fix("Nothing to fix for quantization. If the model marks missing entries with NaN by design, the "
                    "comparisons already skip them; otherwise check the preprocessing and the inputs of the affected "
                    "samples"),) if mirrored else _fixes(ctx, first))


# Ops that turn an INT8 value into NaN or Inf: a Reciprocal or Div of a value the grid rounds to 0, the Log or Sqrt of
# one rounded to 0 or below, an Exp or Pow of one rounded up. A new user's DBNet table detector (quantize_static with
# its defaults, no FP16 anywhere): its step head 1 / (1 + exp(-k (P - T))) read 1 + exp(...) on a grid up to e^50,
# 1 rounded to 0, and 99.5% of the map was +Inf; the fix printed was ModelOpt's FP32 float part.
OVERFLOWING_OPS = ("Reciprocal", "Div", "Log", "Sqrt", "Pow", "Exp")


def _qdq_fixes(ctx: Context) -> tuple[Fix, ...]:
    """The QDQ model's NaN/Inf: from its FP16 float part when it has one (ModelOpt's default), else from INT8 values
    fed to the ops that overflow (OVERFLOWING_OPS), which stay float."""
    nodes = (ctx.precision or {}).get("nodes", [])
    if any(n.get("precision") in ("fp16", "bf16") for n in nodes) or not nodes:
        return (Fix("The FP32 model is finite, so the QDQ model overflows: ModelOpt converts the float part to FP16 "
                    "by default; keep it in FP32", requantize_command(ctx, Change(float_part_fp32=True))),)
    risky = [n["name"] for n in nodes if n.get("op_type") in OVERFLOWING_OPS and n.get("activation_quantized")]
    locate = Fix("collect --per-layer names the first tensor where NaN/Inf are born and the Q/DQ pair that makes it "
                 "(QR205)")
    if not risky:
        return (locate,)
    shown = ", ".join(risky[:6]) + (f" and {len(risky) - 6} more" if len(risky) > 6 else "")
    return (Fix(f"The QDQ model has no FP16 part: the NaN/Inf come from INT8 values fed to {shown} (a division, "
                "log, root or exponential of a value the INT8 grid rounds to 0 or up): keep them in float",
                requantize_command(ctx, Change(exclude_nodes=tuple(risky)))), locate)


def _counts_by_stage(ctx: Context) -> tuple[dict[str, dict[str, list[int]]], dict[str, tuple[int, int]]]:
    """(stage -> output -> [NaN, Inf, samples affected, samples], stage -> (samples with a NaN or Inf in any output,
    samples compared)). A stage seen in two comparisons keeps its larger counts; a sample counts once however many of
    its outputs are non-finite (two outputs of 48 samples are not 96 samples)."""
    counts: dict[str, dict[str, list[int]]] = {}
    samples: dict[str, tuple[int, int]] = {}
    for comparison in ctx.comparisons:
        rows = ctx.sample_rows(comparison.id)
        outputs = sorted({r.output for r in rows})
        for stage, side in ((comparison.reference, "ref"), (comparison.candidate, "cand")):
            for output in outputs:
                mine = ctx.sample_rows_of(comparison.id, output)
                value = [sum(getattr(r, f"{side}_nan") for r in mine), sum(getattr(r, f"{side}_inf") for r in mine),
                         sum(1 for r in mine if _nonfinite(r, side)), len(mine)]
                if value[2] and value > counts.get(stage, {}).get(output, [0] * 4):
                    counts.setdefault(stage, {})[output] = value
            samples[stage] = max(samples.get(stage, (0, 0)),
                                 (len({r.sample for r in rows if _nonfinite(r, side)}), len({r.sample for r in rows})))
    return counts, samples


def _nonfinite(row, side: str) -> bool:
    """Whether a sample row holds a NaN or Inf on *side* ("ref" or "cand")."""
    return bool(getattr(row, f"{side}_nan") + getattr(row, f"{side}_inf"))


def _mirrored(ctx: Context, stage: str) -> bool:
    """Every comparison whose reference is *stage* finds the candidate with exactly its NaN and Inf counts, in every
    sample and output (and there is at least one such comparison)."""
    pairs = [c for c in ctx.comparisons if c.reference == stage]
    return bool(pairs) and all((r.cand_nan, r.cand_inf) == (r.ref_nan, r.ref_inf)
                               for c in pairs for r in ctx.sample_rows(c.id))


def _fixes(ctx: Context, stage: str) -> tuple[Fix, ...]:
    if stage in ("reference", "ort_fp32"):
        return (Fix("The FP32 model already produces NaN/Inf: check the preprocessing (value range, dtype, a division "
                    "by a zero std) and the inputs of the affected samples; quantization cannot fix this"),)
    if stage == "ort_qdq":
        scales_bad = any(not e.get("scale_finite_positive", True) for e in (ctx.precision or {}).get("qdq", []))
        return ((Fix("Some Q/DQ scales are zero, negative or infinite (see the Q/DQ finding): re-calibrate with "
                     "varied data"),) if scales_bad else ()) + _qdq_fixes(ctx)
    if stage == "trt_fp16":
        return (Fix("FP16 overflows in TensorRT: confirm with an FP32 engine, then pin the overflowing layers to FP32 "
                    "(TensorRT 10; on TensorRT 11 keep them FP32 in the graph, e.g. ModelOpt AutoCast)",
                    f"trtexec --onnx={model_arg(ctx, 'fp32')} --fp16 --precisionConstraints=obey "
                    "--layerPrecisions=<layer>:fp32 --layerOutputTypes=<layer>:fp32"),)
    return trtexec_fixes(ctx)
