"""Which quantizer made a bundle's QDQ model, and the quantize_static options its graph records.

Both ONNX Runtime's quantize_static and ModelOpt's ONNX PTQ (which calls ONNX Runtime's quantizer
underneath) stamp the producer `onnx.quantize`, so the producer alone does not tell them apart.
ModelOpt is recognised by its log in the bundle (`collect --modelopt-log`) or by the float part it
converts to FP16 by default; quantize_static never changes the float precision. Options a QDQ
graph records (activation/weight types, symmetry, per-channel weights, the op types and nodes that
were quantized) are read back from the bundle's precision summary; the calibration method is not
in the graph: ONNX Runtime's default (MinMax) is assumed.

Fix commands (qdqreport/fixes.py) re-quantize with the tool that made the model; `qdqreport confirm`
reruns it (confirm/quantizers.py). Both read this one judgement.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping

ORT_PRODUCER = "onnx.quantize"
# quantize_static's calibration methods by their lower-case names (CalibrationMethod's attributes as values), and the
# same calibration under each quantizer's name: ModelOpt says max where ONNX Runtime says MinMax.
ORT_METHODS = {"minmax": "MinMax", "entropy": "Entropy", "percentile": "Percentile", "distribution": "Distribution"}
TO_ORT = {"max": "minmax"}
TO_MODELOPT = {"minmax": "max"}


@dataclass(frozen=True)
class Detected:
    quantizer: str  # onnxruntime | modelopt
    reason: str  # how it was recognised


def made_by(precision: Mapping[str, Any] | None, modelopt_log: Mapping[str, Any] | None) -> Detected | None:
    """The quantizer that made the QDQ model, or None when the graph does not say (another producer: a QAT export,
    a hand-edited graph, another tool)."""
    if modelopt_log:
        return Detected("modelopt", "the bundle holds ModelOpt's log")
    float_dtype = (precision or {}).get("float_dtype")
    if float_dtype in ("fp16", "mixed"):
        return Detected("modelopt", f"the QDQ graph's float part is {float_dtype} (ModelOpt's default; "
                                    "quantize_static keeps FP32)")
    if ((precision or {}).get("producer") or {}).get("name") == ORT_PRODUCER:
        return Detected("onnxruntime", f"producer {ORT_PRODUCER} with an FP32 float part and no ModelOpt log")
    return None


def ort_options(precision: Mapping[str, Any]) -> dict[str, Any]:
    """quantize_static's options as the QDQ graph records them."""
    groups = precision.get("qdq") or []
    acts = [g for g in groups if g.get("kind") == "activation"]
    weights = [g for g in groups if g.get("kind") == "weight"]
    nodes = precision.get("nodes") or []
    op_types = sorted({n["op_type"] for n in nodes if n.get("weight_quantized")}) or sorted(
        {n["op_type"] for n in nodes if n.get("activation_quantized") and n.get("output_quantized")})
    excluded = [n["name"] for n in nodes if n["op_type"] in op_types and not n.get("weight_quantized")
                and not n.get("activation_quantized")]
    activation, weight = _dtype(acts, "uint8"), _dtype(weights, "int8")
    return {"quant_format": "QDQ", "activation_type": activation, "weight_type": weight,
            "per_channel": any(g.get("axis") is not None for g in weights),
            "op_types_to_quantize": op_types, "nodes_to_exclude": excluded, "calibrate_method": "minmax",
            "extra_options": {"ActivationSymmetric": _symmetric(acts, activation),
                              "WeightSymmetric": _symmetric(weights, weight)}}


def _dtype(groups: list[dict[str, Any]], default: str) -> str:
    counts = Counter(str(g.get("dtype")) for g in groups if g.get("dtype") in ("int8", "uint8"))
    return counts.most_common(1)[0][0] if counts else default


def _symmetric(groups: list[dict[str, Any]], dtype: str) -> bool:
    # ORT's symmetric mode for signed types puts every zero point at 0; unsigned stays asymmetric here.
    return dtype == "int8" and not any(g.get("zero_point_nonzero") for g in groups)
