"""The report's FP16-check section: the FP32-float control and the FP16 ranges, as plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qdqreport.analysis.agreement import COSINE_OK
from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import FP16_MAX, fp16_evidence

OUTPUTS_LIMIT = 50  # outputs in the control table, the worst (a report's size must not grow with the bundle)
ROWS_LIMIT = 15  # largest FP16 activations listed; the bundle's fp16_ranges table has them all


@dataclass(frozen=True)
class Fp16View:
    control_status: str  # ok / failed / absent
    control_error: str
    outputs: tuple[dict[str, Any], ...]  # output, qdq, control, recovered
    damaged: tuple[dict[str, Any], ...]  # rows beyond 65504 or flushed constants
    largest: tuple[dict[str, Any], ...]  # largest FP32 activations among the FP16 ones (headroom)
    activations: int
    constants_checked: int
    seconds: float | None
    outputs_total: int = 0  # outputs compared; `outputs` holds the OUTPUTS_LIMIT worst of them


def build_fp16(ctx: Context) -> Fp16View | None:
    """The FP16-check section, or None when the bundle has no FP16 check (float part not FP16)."""
    evidence = fp16_evidence(ctx)
    if evidence is None:
        return None
    table = ctx.manifest["artifacts"].get("fp16_ranges")
    rows = ctx.table(table, "fp16_ranges")
    activations = sorted((r for r in rows if r["kind"] == "activation" and r["fp32_absmax"] is not None),
                         key=lambda r: -r["fp32_absmax"])
    damaged = evidence.overflowing + [r for r in evidence.flushed if r not in evidence.overflowing]
    summary = evidence.summary
    return Fp16View(
        control_status=evidence.control_status or "absent", control_error=evidence.control_error or "",
        # A share of a loss that is not there is noise: shown only where the QDQ output diverges.
        # The judgement beside the cosine: a float part that flips decisions can leave both medians at 1.0000 (a new
        # user's open_nsfw: 5 of 128 decisions in the QDQ model, 0 in the control, both 1.0000).
        # The cosine of an output of fewer than 8 values a sample is no evidence (1.0000 for a one-logit detector whose
        # decisions flip: a new user's turn detector): neither it nor the share of it won back is shown.
        outputs=tuple({"output": g.output, "qdq": g.qdq if g.cosine_meaningful else None,
                       "control": g.control if g.cosine_meaningful else None,
                       "qdq_judged": _judged(g.qdq_level, g.qdq_headline, g.qdq_measure),
                       "control_judged": _judged(g.control_level, g.control_headline, g.control_measure),
                       "recovered": g.recovered if g.qdq < COSINE_OK and g.cosine_meaningful else None}
                      for g in _worst(evidence.gains)),
        damaged=tuple(_row(r) for r in damaged[:ROWS_LIMIT]),
        largest=tuple(_row(r) for r in activations[:ROWS_LIMIT]),
        activations=int(summary.get("fp16_activations") or 0),
        constants_checked=int(summary.get("fp16_constants_checked") or 0),
        seconds=summary.get("seconds"), outputs_total=len(evidence.gains))


def _judged(level: str | None, headline: str, measure: str) -> str:
    """"level: headline" of a run judged by something other than its cosine (the analysis' judgement), else "": the
    cosine has its own place in the cell."""
    return f"{level}: {headline}" if level and headline and measure != "cosine" else ""


def _worst(gains: list[Any]) -> list[Any]:
    """At most OUTPUTS_LIMIT outputs, the lowest QDQ cosine first kept, in bundle order."""
    if len(gains) <= OUTPUTS_LIMIT:
        return gains
    keep = set(sorted(range(len(gains)), key=lambda i: (gains[i].qdq, i))[:OUTPUTS_LIMIT])
    return [g for i, g in enumerate(gains) if i in keep]


def _row(row: dict[str, Any]) -> dict[str, Any]:
    absmax = row["fp32_absmax"]
    return {"tensor": row["tensor"], "kind": row["kind"], "node": row["node"], "op_type": row["op_type"],
            "consumers": (row["consumers"] or "").replace(";", ", "), "fp32_absmax": absmax,
            "headroom": None if absmax in (None, 0) else FP16_MAX / absmax,
            "overflow": row["overflow"], "underflow": row["underflow"], "count": row["values"]}
