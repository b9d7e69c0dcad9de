"""A check's control stage: a variant of the QDQ model run on chosen evaluation samples (choose_samples: those
whose decisions the QDQ model changes first) and compared with ort_fp32 on the same samples. The saturation check
(collect/saturation_check.py) and the calibration check (collect/range_check.py) run and write theirs alike."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from qdqreport.bundle.layout import write_stage
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.ort_stage import OrtStage
from qdqreport.progress import Progress

Feed = dict[str, np.ndarray]


def choose_samples(of: int, limit: int, changed: Sequence[int] = (), worst: Sequence[int] = ()) -> tuple[int, ...]:
    """The evaluation samples a check's control runs on, at most *limit* of *of*, ascending: those whose decisions the
    QDQ model changes (*changed*), a spread of them where more; the rest a spread over the other samples, so that a
    control that mends the changed samples while breaking the others shows it. Without changed decisions, half the
    *worst* (the lowest cosine first) and a spread. The first samples alone can hold none of the changed decisions: a
    new user's text-encoding classifier, its evaluation file grouped by class, had its 22 changed labels beyond the
    first 32 samples, and the calibration check read "agree" on the 32 it ran, which measured nothing."""
    if of <= limit:
        return tuple(range(of))
    picked = _spread(sorted(set(changed)), limit) if changed else list(worst[:limit // 2])
    rest = [i for i in range(of) if i not in set(picked)]
    return tuple(sorted({*picked, *_spread(rest, limit - len(picked))}))


def _spread(items: Sequence[int], count: int) -> list[int]:
    """*count* of *items* evenly spaced (all of them when fewer)."""
    if count >= len(items):
        return list(items)
    if count <= 0:
        return []
    return [items[int(k * len(items) / count)] for k in range(count)]


def run_chosen(control: OrtStage, samples: Sequence[Feed], indices: Sequence[int], progress: Progress,
               check: str) -> None:
    """Run *control* on *samples* at *indices* (recorded as details.sample_indices, its outputs in that order),
    counting them as *check*'s ("saturation check"), then close it."""
    control.details["sample_indices"] = list(indices)
    for position, index in enumerate(indices):
        control.infer(samples[index], position)
        progress.count(f"{check} samples ({control.stage_id})", position + 1, len(indices))
    control.close()


def ran_on(control: OrtStage, count: int) -> Sequence[int]:
    """The evaluation samples *control* ran on, in its order (run_chosen records them), else its first *count*."""
    return control.details.get("sample_indices") or range(count)


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
        same = [fp32_outputs[i] for i in ran_on(control, samples) if i < len(fp32_outputs)]
        comparison = compare(writer, "ort_fp32", control.stage_id, "other", same, control.outputs, class_outputs)
        comparison["control"] = kind
        manifest["comparisons"].append(comparison)
