"""The configuration card: the working configuration a team ships, as facts read from one bundle.

`qdqreport report BUNDLE -o OUT --config-card` writes it as OUT/config_card.md (render/config_card.py)
to be committed next to the model: the quantization command, what stayed out of INT8, the calibration
set, the engine build and precision mix when TensorRT artefacts were imported, tool versions, and the
accuracy reached against FP32. Nothing is invented: a fact the bundle does not record is said to be missing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import is_control
from qdqreport.report.engine import build_engine
from qdqreport.report.sections import INT8_PRECISIONS, build_inputs
from qdqreport.fixes import Change, calibration_file, model_file, quantizer_name, requantize_command
from qdqreport.stage_names import stage_name

EXCLUSION_LIST_LIMIT = 60


@dataclass(frozen=True)
class CardModel:
    title: str  # the QDQ model's file name
    bundle: str
    created_at: str
    models: tuple[dict[str, Any], ...]  # role, path, sha256, bytes
    quantization: dict[str, Any]  # facts from the ModelOpt log and the QDQ graph
    command: str  # the quantizer call rebuilt from the bundle's facts, for the tool that made the model
    command_recorded_by: str  # "qdqreport confirm: onnxruntime 1.20.1" for a recorded call; "" for a rebuilt one
    command_known: tuple[str, ...]  # for a rebuilt command: which of its arguments come from recorded facts
    excluded: tuple[str, ...]  # nodes the recorded quantizer call excluded by name
    collect_argv: str
    has_graph: bool  # the bundle holds the QDQ graph's precision summary
    float_nodes: dict[str, int]  # op type -> compute nodes left in float
    float_node_names: tuple[str, ...]
    float_nodes_total: int
    data: tuple[dict[str, Any], ...]  # calibration and evaluation sets: role, source, samples, sha256, stats per input
    engines: tuple[dict[str, Any], ...]  # stage, settings, precision counts
    tools: dict[str, Any]
    accuracy: tuple[dict[str, Any], ...]  # per comparison and output vs FP32
    redacted: tuple[str, ...]  # what --redact removed (manifest["redaction"]), empty when not redacted


def build_card(ctx: Context) -> CardModel:
    manifest = ctx.manifest
    graph = ctx.precision if isinstance(ctx.precision, dict) else {}
    log = ctx.modelopt_log if isinstance(ctx.modelopt_log, dict) else {}
    floats = sorted((n for n in graph.get("nodes") or [] if n.get("precision") not in INT8_PRECISIONS),
                    key=lambda n: (n.get("index") or 0, str(n.get("name"))))
    run = manifest.get("quantization") if isinstance(manifest.get("quantization"), dict) else {}
    command, known = (str(run["command"]), ()) if run.get("command") else _command(ctx, log)
    return CardModel(
        title=_title(ctx), bundle=str(ctx.bundle.location), created_at=str(manifest.get("created_at", "")),
        models=tuple({"role": role, **ref} for role, ref in sorted((manifest.get("models") or {}).items())
                     if isinstance(ref, dict)),
        quantization=_quantization(graph, log), command=command, command_known=known,
        command_recorded_by=f"{run.get('by', 'recorded')}: {run.get('quantizer')} {run.get('version')}"
        if run.get("command") else "",
        excluded=tuple(str(n) for n in run.get("excluded_nodes") or ()) if run.get("command") else (),
        collect_argv=" ".join(str(a) for a in (manifest.get("collector") or {}).get("argv", [])),
        has_graph=bool(graph), float_nodes=dict(sorted(Counter(str(n.get("op_type")) for n in floats).items(), key=lambda i: (-i[1], i[0]))),
        float_node_names=tuple(str(n.get("name")) for n in floats[:EXCLUSION_LIST_LIMIT]),
        float_nodes_total=len(floats), data=_data(ctx), engines=_engines(ctx),
        tools=dict(sorted((manifest.get("tools") or {}).items())), accuracy=_accuracy(ctx),
        redacted=tuple(str(item) for item in (manifest.get("redaction") or {}).get("removed", [])),
    )


def _quantization(graph: dict[str, Any], log: dict[str, Any]) -> dict[str, Any]:
    counts = graph.get("counts") or {}
    producer = graph.get("producer") if isinstance(graph.get("producer"), dict) else {}
    facts = {"QDQ graph written by": f"{producer.get('name')} {producer.get('version')}" if producer else None,
             "float type of the unquantized part": graph.get("float_dtype"),
             "compute nodes quantized": f"{counts.get('quantized_nodes')} of {counts.get('compute_nodes')}"
             if counts.get("compute_nodes") is not None else None,
             "Q / DQ nodes": f"{counts.get('q_nodes')} / {counts.get('dq_nodes')}" if counts else None,
             "calibration method (ModelOpt log)": log.get("calibration_method"),
             "calibrated on random data (ModelOpt log)": log.get("random_calibration") if log else None,
             "quantizable nodes (ModelOpt log)": log.get("quantizable_nodes"),
             "ModelOpt warnings": len(log.get("warnings") or []) if log else None}
    return {k: v for k, v in facts.items() if v is not None}


def _title(ctx: Context) -> str:
    qdq = model_file(ctx, "qdq")  # the recorded path; the title names the file
    return ctx.bundle.location.name if qdq.startswith("<") else PurePath(qdq).name


def _command(ctx: Context, log: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    if model_file(ctx, "fp32").startswith("<"):
        return "", ()
    known = [f"FP32 model {model_file(ctx, 'fp32')}"]
    if log.get("calibration_method"):
        known.append("calibration method (ModelOpt log)")
    if quantizer_name(ctx) == "quantize_static":
        known.append("quantize_static options read back from the QDQ graph (types, symmetry, per-channel, op types, "
                     "excluded nodes; the calibration method is not recorded: MinMax assumed)")
    if not calibration_file(ctx).startswith("<"):
        known.append(f"calibration data {calibration_file(ctx)}")
    qdq = model_file(ctx, "qdq")  # the command's output is the QDQ model the bundle holds
    command = requantize_command(ctx, Change(calibration_method=log.get("calibration_method")),
                                 output=None if qdq.startswith("<") else qdq, recorded=True)
    return command, tuple(known)


def _data(ctx: Context) -> tuple[dict[str, Any], ...]:
    inputs = build_inputs(ctx)
    stats = {"calib": {}, "eval": {}}
    for row in inputs.rows if inputs else ():
        stats["calib"][row["input"]] = row["calib"]
        stats["eval"][row["input"]] = row["eval"]
    out = []
    for role, label in (("calib", "calibration"), ("eval", "evaluation")):
        ref = (ctx.manifest.get("inputs") or {}).get(role)
        if isinstance(ref, dict):
            out.append({"role": label, "source": ref.get("source"), "samples": ref.get("samples"),
                        "sha256": ref.get("sha256"),
                        "stats": {name: s for name, s in stats[role].items() if s}})
    return tuple(out)


def _engines(ctx: Context) -> tuple[dict[str, Any], ...]:
    view = build_engine(ctx)
    return tuple({"stage": s.stage_id, "settings": s.settings, "precision_counts": s.precision_counts,
                  "layers": s.counted} for s in (view.stages if view else ()))


def _accuracy(ctx: Context) -> tuple[dict[str, Any], ...]:
    rows = []
    for info in ctx.comparisons:
        if is_control(info):
            continue
        task = ctx.task_of_pair(info.reference, info.candidate)
        for summary in ctx.output_summaries(info.id):
            rows.append({"pair": f"{stage_name(info.candidate)} vs {stage_name(info.reference)}", "purpose": info.purpose,
                         "output": summary.output, "samples": summary.samples, "cosine": summary.cosine_median,
                         "cosine_min": summary.cosine_min, "sqnr": summary.sqnr_median, "top1": summary.top1,
                         "decision": float(task["agreement"]) if task else None})
    return tuple(rows)
