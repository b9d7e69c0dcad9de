"""A check's control stage: a variant of the QDQ model run on the evaluation's first samples and compared with ort_fp32
on the same samples. The saturation check (collect/saturation_check.py) and the calibration check
(collect/range_check.py) run and write theirs alike."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from qdqreport.bundle.layout import write_stage
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.ort_stage import OrtStage
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]


def run_first(control: OrtStage, samples: Sequence[Feed], count: int, progress: Progress, check: str) -> None:
    """Run *control* on the first *count* of *samples*, counting them as *check*'s ("saturation check"), then close
    it."""
    for index in range(count):
        control.infer(samples[index], index)
        progress.count(f"{check} samples ({control.stage_id})", index + 1, count)
    control.close()


def write_control(writer: BundleWriter, manifest: dict[str, Any], control: OrtStage, precision: str, kind: str,
                  samples: int, fp32_outputs: Sequence[Feed], class_outputs: set[str],
                  compare: Callable[..., dict]) -> None:
    """The control stage (*precision*: the manifest's name of its variant) and its comparison with ort_fp32 on the
    same first *samples* (*kind*: the comparison's "control"; *compare*: write_comparison)."""
    status = "failed" if control.error else "ok"
    # Stored like the stages it controls (--store-outputs): no more samples than ort_fp32 kept in the bundle.
    fp32_entry = next((e for e in manifest["stages"] if e["id"] == "ort_fp32"), {})
    stored = min(samples, int(fp32_entry.get("details", {}).get("outputs_stored", samples) or 0))
    entry = write_stage(writer, control.stage_id, status, control.outputs[:stored] if status == "ok" else None,
                        control.error, log="\n".join(control.log) + "\n", seconds=control.seconds,
                        details=control.details)
    entry["runtime"], entry["precision"] = "onnxruntime", precision
    entry["details"]["outputs_stored"] = stored if status == "ok" else 0
    manifest["stages"].append(entry)
    if status == "ok" and fp32_outputs:
        first = [fp32_outputs[i] for i in range(min(samples, len(fp32_outputs)))]
        comparison = compare(writer, "ort_fp32", control.stage_id, "other", first, control.outputs, class_outputs)
        comparison["control"] = kind
        manifest["comparisons"].append(comparison)
