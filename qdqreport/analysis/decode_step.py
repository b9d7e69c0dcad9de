"""The user's decode step as data: a Decoder calls the decode (and optional compare) function and checks
what it returns. Loading the script (`collect --postprocess FILE.py[:func]`) is collect/postprocess.py's;
this half is NumPy only, so analysis/task.py and the test BundleBuilder (qdqreport/testing/) use it
without the collector.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

COMPARE_FUNCTION = "compare"
MAX_FIELD_VALUES = 10_000  # values per field: a task result is small (labels, scores, boxes); a whole tensor is a mistake
ALLOWED_KINDS = "biufU"  # bool, int, uint, float, unicode: what .npz stores without pickle

TaskResult = dict[str, np.ndarray]


class DecodeFailed(Exception):
    """The user's decode raised or returned something unusable on one sample (message says which)."""


@dataclass(frozen=True)
class Decoder:
    path: Path
    function: str
    decode_fn: Callable[[dict[str, np.ndarray]], Any]
    compare_fn: Callable[[Mapping[str, Any], Mapping[str, Any]], Any] | None
    sha256: str
    # decode(outputs, inputs): the function takes a second argument, the sample's inputs {name: array} (a masked LM's
    # decode reads which positions were masked; a detector's, the image size it letterboxed).
    takes_inputs: bool = False

    @property
    def where(self) -> str:
        return f"{self.path}:{self.function}"

    def decode(self, outputs: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray] | None = None) -> TaskResult:
        """One sample's task result, normalised to named NumPy arrays; *inputs*, the sample's model inputs, go to a
        decode that takes them (copies: the script cannot change what the next stage reads). Raises DecodeFailed."""
        if self.takes_inputs and inputs is None:
            raise DecodeFailed(f"{self.function}() takes the sample's inputs, which this step does not have")
        arguments = [{name: np.array(value) for name, value in outputs.items()}]
        if self.takes_inputs:
            arguments.append({name: np.array(value) for name, value in inputs.items()})
        try:
            result = self.decode_fn(*arguments)
        except BaseException as exc:  # the user's code: any exception (even sys.exit) is theirs to fix
            if isinstance(exc, KeyboardInterrupt):  # Ctrl-C stops the collect; not the script's failure
                raise
            raise DecodeFailed(f"{self.function}() raised {type(exc).__name__}: {exc}") from None
        return normalise_result(result, f"{self.function}()")

    def user_agreement(self, a: TaskResult, b: TaskResult) -> float:
        """The script's compare(a, b), checked to be a finite number within [0, 1]."""
        try:
            value = self.compare_fn({k: _plain(v) for k, v in a.items()}, {k: _plain(v) for k, v in b.items()})
            number = float(value)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):  # Ctrl-C stops the collect; not the script's failure
                raise
            raise DecodeFailed(f"compare() raised {type(exc).__name__}: {exc}") from None
        if not math.isfinite(number) or not 0.0 <= number <= 1.0:
            raise DecodeFailed(f"compare() returned {value!r}; return an agreement between 0.0 and 1.0")
        return number

    def manifest_entry(self) -> dict[str, Any]:
        return {"source": str(self.path), "function": self.function,
                "compare": COMPARE_FUNCTION if self.compare_fn else None, "sha256": self.sha256,
                **({"inputs": True} if self.takes_inputs else {})}


def normalise_result(result: Any, what: str) -> TaskResult:
    """A task result as {field: array} of kinds NumPy stores without pickle. Raises DecodeFailed."""
    if not isinstance(result, Mapping):
        raise DecodeFailed(f"{what} returned a {type(result).__name__}; return a dict of field name -> "
                           "value (str, int, float, bool, or a list/array of them)")
    if not result:
        raise DecodeFailed(f"{what} returned an empty dict; return at least one field (e.g. {{'label': ...}})")
    fields = {}
    for key, value in result.items():
        if not isinstance(key, str) or "/" in key or not key:
            raise DecodeFailed(f"{what} returned field name {key!r}; use non-empty strings without '/'")
        fields[key] = _field_array(key, value, what)
    return fields


def _field_array(key: str, value: Any, what: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise DecodeFailed(f"{what} field {key!r} is a ragged list; return a rectangular array or split it "
                           "into fields") from None
    if array.dtype.kind == "S":
        array = array.astype(str)
    if array.dtype.kind not in ALLOWED_KINDS:
        raise DecodeFailed(f"{what} field {key!r} holds {array.dtype} values ({type(value).__name__}); "
                           "use str, int, float or bool values, or arrays of them")
    if array.size > MAX_FIELD_VALUES:
        raise DecodeFailed(f"{what} field {key!r} holds {array.size:,} values, over the cap of {MAX_FIELD_VALUES:,} "
                           "values per field (every sample of every stage is stored); return the decision (labels, "
                           "boxes, scores), a summary (a count, an area, a bounding box) or a downsampled array "
                           "(e.g. mask[::4, ::4])")
    return array


def _plain(array: np.ndarray) -> Any:
    """A field as compare() gets it: a single value as a Python str/int/float/bool, anything else as the NumPy
    array decode's result is stored as (a copy: compare() cannot change the stored results). A decode that returned
    an array gets an array back, with its dtype and shape; a list arrives as the array np.asarray made of it."""
    return array.item() if array.ndim == 0 else array.copy()
