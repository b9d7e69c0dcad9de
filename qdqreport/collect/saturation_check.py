"""The saturation check: do ONNX Runtime's fused U8S8 integer kernels, not the quantization, damage the outputs?

Runs by default when the QDQ graph has Conv/MatMul/Gemm nodes reading UINT8 activations and INT8
weights ("U8S8"), or signed INT8 activations and INT8 weights ("S8S8") on a CPU known to lack VNNI,
and never otherwise. ONNX Runtime's CPU
provider fuses such DequantizeLinear -> Conv -> QuantizeLinear groups into integer kernels. On an
x86-64 CPU with SSE4.1/AVX2/AVX-512 but no VNNI, the U8S8 kernel multiplies with VPMADDUBSW, which
adds each pair of u8*s8 products into a signed 16-bit lane and saturates there: a pair of large
activations times large weights of the same sign (255*127*2 > 32767) is clipped before it reaches
the 32-bit accumulator. onnxruntime's quantization docs warn of it and recommend reduce_range
(7-bit weights) or signed INT8 activations; a VNNI CPU (VPDPBUSD, 32-bit) and TensorRT do not
saturate.

Control: the same QDQ model in a session with "session.disable_quant_qdq" = "1", which leaves the
Q/DQ nodes unfused: every DequantizeLinear runs, then the float operator, with the same quantized
weights and activation grid; no integer kernel, so nothing can saturate. Stage `ort_qdq_unfused`,
compared with `ort_fp32` like `ort_qdq` is (comparison `control: qdq_unfused`, purpose `other`).
The stage details record the CPU's VNNI flags (Linux /proc/cpuinfo) and the U8S8 nodes.

When it runs: only where the fused QDQ outputs do not agree with FP32. The decision is taken once
the quantization comparison is written, by the report's own judgement (analysis/context.py's Context
on the bundle being written, collect/staged.py; agreement.diverges: any output not judged "agree",
recurrent state aside, which never diverges), or, where every raw output agrees, by the user's decode
(--postprocess) of the samples deciding otherwise on the QDQ model than on FP32 (pipeline's
_decode_differs: a thresholded decision moves within the raw outputs' tolerance). Otherwise the stage is recorded as
`skipped` with the reason (details `decision`): QR012 and the layer findings it refutes read the
control only on outputs that diverge (analysis/saturation.saturation_evidence), so there it could
change no finding, and its fixed cost (+16% on Silero VAD, +23% on the PP-OCRv4 recogniser at
N = 128 on an AVX2 CPU, docs/BENCHMARKS.md) bought nothing.

Cost: one more QDQ inference pass on MAX_SAMPLES (32) chosen samples only (control_stage.choose_samples), run in
float (a little slower per sample than the fused model). `collect --no-saturation-check` skips it.
Measured on the corpus (scripts/measure_u8s8_saturation.py, AVX2 without VNNI): the captcha CRNN
keeps 14/24 strings fused and 24/24 unfused; the YOLOX detector keeps 33/47 detections fused, 44/47
unfused.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from qdqreport.analysis.saturation import CONTROL_KIND, MAX_SAMPLES, UNFUSED_STAGE
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.control_stage import run_chosen, write_control
from qdqreport.collect.ort_stage import OrtStage, open_stage
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]
INTEGER_KERNEL_OPS = ("Conv", "MatMul", "Gemm")
NODES_LISTED = 8
VNNI_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")
UNFUSED_CONFIG = {"session.disable_quant_qdq": "1"}  # Q/DQ left unfused: float operators, no integer kernels
DIVERGING_LISTED = 3
SKIPPED = ("skipped: every output of the QDQ model agrees with FP32 as the report judges it (recurrent state "
           "aside), so the integer kernels lose nothing a control could win back; it runs only where an output does "
           "not agree")


@dataclass
class SaturationCheck:
    control: OrtStage
    samples: int
    of: int


def u8s8_nodes(precision: dict[str, Any] | None, activation: str = "uint8") -> list[str]:
    """The Conv/MatMul/Gemm nodes that read *activation* (UINT8) activations and INT8 weights (precision_summary
    nodes)."""
    return [n["name"] for n in (precision or {}).get("nodes", [])
            if n.get("op_type") in INTEGER_KERNEL_OPS and n.get("activation_dtype") == activation
            and n.get("weight_dtype") == "int8"]


def kernel_nodes(precision: dict[str, Any] | None, cpu: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(U8S8 nodes, S8S8 nodes) the check is for. S8S8 (signed INT8 activations) only where the CPU is known to lack
    VNNI: measured on an AVX2 CPU without it, OriNet (occular-deskew) quantized S8S8 with 8-bit weights keeps 52/60
    top-1 decisions fused and 60/60 unfused (reduce_range: 60/60 fused), so the signed kernels saturate there too."""
    return u8s8_nodes(precision), (u8s8_nodes(precision, "int8") if cpu.get("vnni") is False else [])


def cpu_vnni() -> dict[str, Any]:
    """What this CPU offers for U8S8 integer products: VNNI (no saturation) or not; None where unknown."""
    info: dict[str, Any] = {"machine": platform.machine(), "vnni": None, "avx2": None, "flags_source": None}
    path = Path("/proc/cpuinfo")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return info
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), None)
    if flags is None:
        return info
    found = [flag for flag in VNNI_FLAGS if flag in flags]
    return {**info, "vnni": bool(found), "vnni_flags": found, "avx2": "avx2" in flags,
            "avx512f": "avx512f" in flags, "flags_source": str(path)}


def diverging_outputs(writer: BundleWriter, manifest: dict[str, Any],
                      stored: dict[str, Sequence[Feed]] | None = None) -> list[str] | None:
    """The outputs of the quantization comparison that do not agree with FP32, each with its judgement ("out
    degrades (map IoU 0.93 at 0.5)"), judged as `report` will judge them: its Context on the bundle being written
    (collect/staged.py) and agreement.diverges, so no second threshold exists. None when there is no quantization
    comparison (a stage failed): nothing to judge. *stored*: StagedBundle's shortcut to the stages' stored outputs."""
    from qdqreport.analysis.agreement import diverges
    from qdqreport.analysis.context import Context
    from qdqreport.collect.staged import StagedBundle  # with the bundle reader: only a collect that judges imports it

    ctx = Context(StagedBundle(writer, manifest, stored))
    comparison = ctx.comparison("quantization")
    if comparison is None:
        return None
    return [f"{s.output} {s.judgement.level}s ({s.judgement.headline})" for s in ctx.output_summaries(comparison.id)
            if diverges(s)]


def decision(diverging: list[str] | None) -> str | None:
    """Why the control runs ("ran: ..."), or SKIPPED when every output agrees (*diverging*: diverging_outputs)."""
    if diverging is None:
        return "ran: no quantization comparison to judge the fused outputs by"
    if not diverging:
        return None
    more = f" and {len(diverging) - DIVERGING_LISTED:,} more" if len(diverging) > DIVERGING_LISTED else ""
    return f"ran: output {'; output '.join(diverging[:DIVERGING_LISTED])}{more}"


def _details(nodes: tuple[list[str], list[str]], cpu: dict[str, Any], count: int, of: int, why: str) -> dict[str, Any]:
    u8s8, s8s8 = nodes
    return {"control_of": "ort_qdq", "session_config": dict(UNFUSED_CONFIG), "samples": count, "of_samples": of,
            "u8s8_nodes": len(u8s8), "s8s8_nodes": len(s8s8), "u8s8_nodes_listed": (u8s8 + s8s8)[:NODES_LISTED],
            "cpu": cpu, "decision": why}


def skipped_entry(nodes: tuple[list[str], list[str]], cpu: dict[str, Any], of: int) -> dict[str, Any]:
    """The manifest entry of a control not run because every output agrees: status skipped, the reason as its error
    and details.decision, the kernels and the CPU recorded as for a run."""
    return {"id": UNFUSED_STAGE, "runtime": "onnxruntime", "precision": "qdq-unfused", "status": "skipped",
            "error": SKIPPED, "seconds": None, "artifacts": {}, "details": _details(nodes, cpu, 0, of, SKIPPED)}


def run_saturation_check(qdq_model: bytes | str, graph_outputs: Sequence[str], samples: Sequence[Feed],
                         nodes: tuple[list[str], list[str]], provider: str, progress: Progress,
                         cpu: dict[str, Any], why: str = "ran",
                         indices: Sequence[int] | None = None) -> SaturationCheck:
    """Run the unfused control on *samples* at *indices* (control_stage.choose_samples; default the first
    MAX_SAMPLES) (*nodes*: kernel_nodes' U8S8 and S8S8; *why*: decision's text, recorded as details.decision)."""
    indices = tuple(range(min(len(samples), MAX_SAMPLES))) if indices is None else tuple(indices)
    count = len(indices)
    u8s8, s8s8 = nodes
    progress.say(f"saturation check: {len(u8s8) + len(s8s8)} Conv/MatMul/Gemm run in integer kernels (U8S8 "
                 f"{len(u8s8)}, S8S8 {len(s8s8)}); running the QDQ model unfused on {count} of "
                 f"{len(samples)} samples ({why})")
    control = open_stage(UNFUSED_STAGE, qdq_model, tuple(graph_outputs), provider, UNFUSED_CONFIG)
    control.details.update(_details(nodes, cpu, count, len(samples), why))
    run_chosen(control, samples, indices, progress, "saturation check")
    return SaturationCheck(control, count, len(samples))


def write_saturation_check(writer: BundleWriter, manifest: dict[str, Any], check: SaturationCheck | None,
                           fp32_outputs: Sequence[Feed], class_outputs: set[str], compare: Callable[..., dict]) -> None:
    """The control stage and its comparison with ort_fp32 on the same samples (*compare*: write_comparison)."""
    if check is not None:
        write_control(writer, manifest, check.control, "qdq-unfused", CONTROL_KIND, check.samples, fp32_outputs,
                      class_outputs, compare)
