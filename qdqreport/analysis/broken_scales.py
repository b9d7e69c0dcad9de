"""What a Q/DQ pair whose scale is NaN or Inf does to the tensor it carries, and which nodes read such a pair.

A MinMax calibration over a tensor that holds -inf (an attention mask added to the scores before a Softmax) or NaN
gives an infinite or NaN scale. QuantizeLinear then maps every finite value to 0 (x / Inf) and DequantizeLinear writes
0 x Inf = NaN: the whole tensor is NaN, not a few values. A consumer that computes on it (a Softmax, a MatMul) is NaN
everywhere, and a later QuantizeLinear turning NaN into a number leaves the outputs finite while that branch carries
nothing (KhmerSM's attention: 114 of 787 word starts flipped, none of 24 known boundaries found). Only a consumer that
can return its other operand (a Max with a constant, a Where) may mask it: Magika's Inf scale sat on a constant 0 read
by a Max, and setting that scale to 1 changed nothing measured. Zero and negative scales are another defect (a tensor
constant in calibration) and not judged here.
"""

from __future__ import annotations

from typing import Any, Mapping

# Consumers that can pass their other operand where one input is NaN: the only ones that may mask a NaN tensor.
MAY_MASK_NAN = frozenset({"Max", "Min", "Where"})


def nonfinite_scale(entry: Mapping[str, Any]) -> bool:
    """A precision-summary Q/DQ entry whose scale is NaN or Inf (the summary writes no min or max for those)."""
    return not entry.get("scale_finite_positive", True) and entry.get("scale_min") is None


def destroys_tensor(entry: Mapping[str, Any], op_types: Mapping[str, str]) -> bool:
    """Whether an activation pair with a NaN/Inf scale turns its tensor into NaN for a consumer that keeps it:
    *op_types* maps node names to op types; a consumer of unknown type is taken to keep the NaN."""
    consumers = entry.get("consumers") or []
    return (nonfinite_scale(entry) and entry.get("kind") == "activation"
            and any(op_types.get(node) not in MAY_MASK_NAN for node in consumers))

