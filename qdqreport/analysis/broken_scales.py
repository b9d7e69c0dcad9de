"""What a Q/DQ pair whose scale is NaN or Inf does to the tensor it carries, and which nodes read such a pair.

A MinMax calibration over a tensor that holds -inf (an attention mask added to the scores before a Softmax) or NaN
gives an infinite or NaN scale. QuantizeLinear then maps every finite value to 0 (x / Inf) and DequantizeLinear writes
0 x Inf = NaN: the whole tensor is NaN, not a few values. A consumer that computes on it (a Softmax, a MatMul) is NaN
everywhere, and a later QuantizeLinear turning NaN into a number leaves the outputs finite while that branch carries
nothing (KhmerSM's attention: 114 of 787 word starts flipped, none of 24 known boundaries found). Only a consumer that
can return its other operand (a Max with a constant, a Where) may mask it: Magika's Inf scale sat on a constant 0 read
by a Max, and setting that scale to 1 changed nothing measured. Zero and negative scales are another defect (a tensor
constant in calibration) and not judged here.

A finite scale of SENTINEL_SCALE or more does the same without the NaN: only a sentinel in the calibrated tensor sets a
range that wide (a Hugging Face attention mask, (1 - mask) * float32.min = -3.4e38, added to the scores), and every
ordinary value then rounds to the zero point: the Softmax reading it sees a constant (a new user's ALBERT tagger
quantized with every op type: the scores' pair had scale 1.3e36; no sentence of 64 came out as FP32's).
"""

from __future__ import annotations

from typing import Any, Mapping

# Consumers that can pass their other operand where one input is NaN: the only ones that may mask a NaN tensor.
MAY_MASK_NAN = frozenset({"Max", "Min", "Where"})
# A scale this large spans +-1.3e32 in INT8: no activation reaches that but a sentinel (float32's -3.4e38 and the like).
SENTINEL_SCALE = 1e30


def nonfinite_scale(entry: Mapping[str, Any]) -> bool:
    """A precision-summary Q/DQ entry whose scale is NaN or Inf (the summary writes no min or max for those)."""
    return not entry.get("scale_finite_positive", True) and entry.get("scale_min") is None


def sentinel_scale(entry: Mapping[str, Any]) -> bool:
    """A precision-summary Q/DQ entry whose finite scale reaches SENTINEL_SCALE (a range a sentinel value set)."""
    largest = entry.get("scale_max")
    return isinstance(largest, (int, float)) and largest >= SENTINEL_SCALE


def destroys_tensor(entry: Mapping[str, Any], op_types: Mapping[str, str]) -> bool:
    """Whether an activation pair with a NaN/Inf scale (or a sentinel's: sentinel_scale) turns its tensor into NaN (or
    into the zero point) for a consumer that keeps it: *op_types* maps node names to op types; a consumer of unknown
    type is taken to keep it."""
    consumers = entry.get("consumers") or []
    return ((nonfinite_scale(entry) or sentinel_scale(entry)) and entry.get("kind") == "activation"
            and any(op_types.get(node) not in MAY_MASK_NAN for node in consumers))

