"""`collect --per-layer --confirm`: the what-if's best exclusion set re-quantized for real.

The what-if measures an exclusion by bypassing the Q/DQ pairs of the excluded nodes in the existing
QDQ model. Here the FP32 model is quantized again by the quantizer that made the QDQ model
(quantizers.py: options recovered from the graph, the chosen nodes excluded as the report's printed fix excludes
them, fixes.resolve_for, the collect's --calib data) and the result runs on the same samples through the what-if's own measurement (WhatIf.trial),
so the two numbers are directly comparable. The record goes into the what-if summary as `confirmed`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from qdqreport.confirm import quantizers as q
from qdqreport.errors import InputError
from qdqreport.fixes import exclusion, resolve_for

Feed = dict[str, np.ndarray]


def confirm_chosen(fp32: Path, summary: dict[str, Any], precision: Mapping[str, Any], modelopt_log: Mapping[str, Any] | None,
                   calib: Sequence[Feed] | None, calib_source: str | None, samples: Sequence[Feed],
                   fp32_outputs: Sequence[Feed], classes: set[str], provider: str) -> dict[str, Any] | None:
    """The `confirmed` record for the what-if's chosen set, or None when the search chose no node."""
    nodes = list((summary.get("chosen") or {}).get("nodes") or [])
    if not nodes:
        return None
    detected = q.detect(precision, modelopt_log, None)
    # The nodes the re-quantization excludes are the printed fix's (fixes.resolve_for): a Softmax the quantizer cannot
    # free by its name is freed through the node whose Q/DQ feeds it, as the report's command does.
    excluded = list(resolve_for(dict(precision), detected.quantizer, exclusion(nodes)).change.exclude_nodes)
    record: dict[str, Any] = {"quantizer": detected.quantizer, "nodes": nodes, "excluded": excluded, "cosine": None,
                              "top1": None, "sqnr_db": None, "error": None}
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="qdqreport-confirm-") as scratch:
        model = Path(scratch) / "requantized.onnx"
        try:
            record.update(_quantize(fp32, model, detected.quantizer, precision, modelopt_log, calib, calib_source,
                                    excluded))
        except q.QuantizerUnavailable as exc:
            return {**record, "error": str(exc), "command": exc.commands[0], "version": None}
        except InputError as exc:
            return {**record, "error": str(exc), "command": None, "version": None}
        record.update(_measure(model, samples, fp32_outputs, classes, provider))
    record["seconds"] = round(time.perf_counter() - began, 3)
    return record


def _quantize(fp32: Path, model: Path, quantizer: str, precision: Mapping[str, Any], log: Mapping[str, Any] | None,
              calib: Sequence[Feed] | None, calib_source: str | None, nodes: list[str]) -> dict[str, Any]:
    if quantizer == "modelopt":
        recovered = q.modelopt_options(log, precision)
        args = q.modelopt_args(str(fp32), str(model), calib_source, str(model.with_suffix(".log")), recovered,
                               nodes, (), None)
        version = q.modelopt_version()
        if version is None:
            raise q.QuantizerUnavailable("ModelOpt is not installed here, so the chosen set was not re-quantized; "
                                         "run the command where it is", [q.shell(args)])
        q.run_modelopt(args, model.with_suffix(".log"))
        return {"version": version, "command": q.shell(args)}
    if not calib:
        raise InputError("no calibration data: pass --calib (the data the model was quantized with) to re-quantize")
    options = q.apply_fix_ort(q.ort_options(precision), nodes, (), None)
    q.run_ort(fp32, model, calib, options)
    return {"version": q.onnxruntime_version(), "command": q.ort_call(str(fp32), "<requantized.onnx>", str(calib_source),
                                                                       options)}


def _measure(model: Path, samples: Sequence[Feed], fp32_outputs: Sequence[Feed], classes: set[str],
             provider: str) -> dict[str, Any]:
    """The what-if's own measurement (worst median cosine, mean top-1, worst median SQNR) of the new model."""
    import onnx

    from qdqreport.collect.qdq_graph import GraphIndex
    from qdqreport.collect.whatif import WhatIf, WhatIfOptions

    index = GraphIndex(onnx.load(str(model)))
    search = WhatIf(index, index, samples, fp32_outputs, classes, WhatIfOptions(budget=float("inf"), provider=provider))
    measured = search.trial("confirm", [])
    sqnr = measured.sqnr_db if np.isfinite(measured.sqnr_db) else None
    return {"cosine": measured.cosine, "top1": measured.top1, "sqnr_db": sqnr}
