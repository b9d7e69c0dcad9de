"""QR009: ModelOpt calibrated on random data because no calibration data was given."""

from __future__ import annotations

from typing import Iterator

from qdqreport.analysis.context import Context
from qdqreport.findings import Finding, Fix, Metric, Text
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import diverging_outputs, modelopt_command

LOG_LINES_SHOWN = 5  # the warnings that mention the random data, not the whole log


def _log(random: bool, method: str, warnings: list[str]) -> dict:
    return {"format": 1, "total_nodes": 566, "quantized_nodes": 61, "quantizable_nodes": 64,
            "non_quantizable_partitions": 3, "nodes_to_quantize": 64, "quantized_type_counts": {"Conv": 53, "MatMul": 1},
            "random_calibration": random, "calibration_method": method, "already_quantized": False, "warnings": warnings}


def _random(b):
    b.artifact("modelopt_log", _log(True, "entropy", [
        "Calibration data not provided. Using random data for calibration.",
        "Please consider providing calibration data for better accuracy."]))


def _real_data_with_warnings(b):
    b.artifact("modelopt_log", _log(False, "max", ["Model already has dynamic shapes; using calibration_shapes",
                                                   "Skipping quantization of node Softmax@0: op type not supported"]))


@rule(id="QR009", slug="random-calibration", title="ModelOpt calibrated on random data",
      examples=[Fires("no --calibration_data_path given", _random),
                Quiet("real calibration data, unrelated warnings", _real_data_with_warnings)])
def random_calibration(ctx: Context) -> Iterator[Finding]:
    """The ModelOpt log shows it calibrated on random inputs (no calibration data was passed).

    Why it matters: without --calibration_data_path ModelOpt silently feeds random tensors
    and calibrates every activation range to noise. The model quantizes without an error and
    then loses accuracy everywhere; nothing else in the graph looks wrong.

    Fix: pass real, preprocessed calibration inputs with --calibration_data_path (an .npy or
    .npz with the model's input names; a few hundred samples for a CNN).
    """
    log = ctx.modelopt_log
    if not log or not log.get("random_calibration"):
        return
    diverged = bool(diverging_outputs(ctx, "quantization"))
    mentions = [w for w in log.get("warnings", []) if "random" in w.lower()][:LOG_LINES_SHOWN]
    yield Finding(
        rule_id="QR009", title="ModelOpt calibrated on random data", severity="error", confidence=0.95,
        # Random ranges damage every quantized tensor; once outputs diverge this explains nearly all of it.
        score=0.9 if diverged else 0.6, subject="modelopt calibration", stage="quantization", tags=("root_cause",),
        summary="ModelOpt was run without --calibration_data_path and calibrated every activation range on random "
                f"inputs (calibration method {log.get('calibration_method') or 'unknown'})"
                + ("; the quantized model's outputs diverge" if diverged else ""),
        evidence=(Metric("random calibration", "yes"), Metric("calibration method", log.get("calibration_method")),
                  *([Text("ModelOpt log: " + " | ".join(mentions))] if mentions else [])),
        fixes=(Fix("Save preprocessed inputs (same preprocessing as evaluation, shape [N, ...] per model input) and "
                   "re-quantize with them", modelopt_command(ctx)),))
