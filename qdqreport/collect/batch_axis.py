"""Which axis of each model input (and output) holds the samples.

Most models batch along axis 0, but not all: Silero VAD's recurrent state is `state[2, batch, 128]`,
and its sample rate `sr` is a scalar with no batch axis at all. The axis is read from the model
where it can be, and set with `--batch-axis NAME=AXIS` (or `NAME=none`) where it cannot:

  rank 0 (a scalar)                          no batch axis
  one dimension whose name contains "batch"  that dimension
  exactly one dynamic dimension              that dimension
  anything else                              axis 0 (the common layout; fixed-shape models too)

An input with no batch axis holds the same value for every sample, or one value per sample
stacked along a new leading axis (see collect/inputs.py).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from qdqreport.collect.models import TensorSpec
from qdqreport.errors import InputError

def parse_batch_axes(values: Sequence[str]) -> dict[str, int | None]:
    """`--batch-axis NAME=AXIS` options (AXIS an integer or `none`) as {name: axis}."""
    axes: dict[str, int | None] = {}
    for value in values:
        name, sep, axis = value.rpartition("=")
        axis = axis.strip().lower()
        if not sep or not name or not (axis == "none" or axis.lstrip("-").isdigit()):
            raise InputError(f"--batch-axis {value}: expected NAME=AXIS (an integer, or none for an input with no "
                             "batch axis), e.g. --batch-axis state=1")
        axes[name] = None if axis == "none" else int(axis)
    return axes


def batch_axes(specs: Sequence[TensorSpec], overrides: Mapping[str, int | None], role: str) -> dict[str, int | None]:
    """The batch axis of every tensor in *specs*: an override where given, otherwise inferred.

    Overrides naming none of *specs* are ignored here (they may name the other side: inputs or
    outputs); check_overrides() refuses names that are neither.
    """
    axes = {}
    for spec in specs:
        axes[spec.name] = _checked(spec, overrides[spec.name], role) if spec.name in overrides else infer_batch_axis(spec)
    return axes


def check_overrides(overrides: Mapping[str, int | None], inputs: Sequence[TensorSpec], outputs: Sequence[str],
                    model: str) -> None:
    known = [s.name for s in inputs] + list(outputs)
    for name in overrides:
        if name not in known:
            raise InputError(f"--batch-axis {name}=...: {name!r} is not an input or output of {model}; "
                             f"name one of {', '.join(known)}")


def infer_batch_axis(spec: TensorSpec) -> int | None:
    if not spec.ranked:
        return 0  # the model says nothing: the common layout
    if not spec.shape:
        return None
    dynamic = [axis for axis, dim in enumerate(spec.shape) if not (isinstance(dim, int) and dim > 0)]
    named = [axis for axis in dynamic if isinstance(spec.shape[axis], str) and "batch" in spec.shape[axis].lower()]
    if len(named) == 1:
        return named[0]
    if len(dynamic) == 1:
        return dynamic[0]
    return 0


def _checked(spec: TensorSpec, axis: int | None, role: str) -> int | None:
    rank = len(spec.shape)
    if axis is None or (not spec.ranked and axis >= 0):  # any rank: checked against the arrays instead
        return axis
    if not -rank <= axis < rank:
        valid = "0 or above, or none (its rank is not declared)" if not spec.ranked else (
            f"0..{rank - 1} or none" if rank else "none (it is a scalar)")
        raise InputError(f"--batch-axis {spec.name}={axis}: {spec.describe()} has rank {rank} ({role}); "
                         f"use an axis in {valid}")
    return axis % rank
