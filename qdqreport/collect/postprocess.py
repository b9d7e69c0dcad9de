"""The user's decode step (`collect --postprocess FILE.py[:func]`): load it, call it, check what it returns.

Same file[:func] convention as --data-loader-script (and as Polygraphy's
--postprocess-func-script / --compare-func-script). The script defines

    decode(outputs: dict[str, np.ndarray]) -> dict[str, value]     (default name `decode`)
    decode(outputs, inputs) -> dict[str, value]                    (or with the sample's inputs too)
    compare(a: dict, b: dict) -> float in [0, 1]                   (optional, always named `compare`)

`decode` gets one sample's outputs (output name -> array, batch dimension kept), and when it takes a
second parameter the same sample's model inputs (input name -> array, as fed to every stage: a masked
LM's decode reads which positions hold the mask id, a detector's the size it letterboxed), and returns
the task result: a dict of small values (str, int, float, bool, or lists/arrays of them, at most
10,000 values per field): labels, scores, boxes. `compare` gets two such results as stored: list and
array fields as NumPy arrays, single values as Python values (decode_step._plain). Both are checked
on the first FP32 sample as soon as it has run (analysis/task.check_decoder), then on every sample. Unlike Polygraphy, which applies one post-processing function to every
runner alike, qdqreport also takes the results the user's own application decoded
(--task-results), so a decode that differs from the baseline's can be shown.

Every problem with the script is an InputError naming the file and the fix.
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

from qdqreport.analysis.decode_step import COMPARE_FUNCTION, Decoder
from qdqreport.collect import script
from qdqreport.errors import InputError

DEFAULT_FUNCTION = "decode"


def load_decoder(spec: str) -> Decoder:
    """Import FILE.py and find its decode function (and compare, when defined)."""
    path, function = split_spec(spec)
    if path.suffix != ".py":
        raise InputError(f"{path}: --postprocess needs a Python file, FILE.py[:function]")
    if not path.is_file():
        raise InputError(f"{path}: no such post-processing script (--postprocess); pass FILE.py[:function]")
    module = script.import_script(path, "post-processing script (--postprocess)")
    decode = getattr(module, function, None)
    if not callable(decode):
        raise InputError(f"{path}: defines no function {function}(); define {function}(outputs) -> dict "
                         f"or name yours with {path}:<function>")
    compare = getattr(module, COMPARE_FUNCTION, None)
    if compare is not None and not callable(compare):
        raise InputError(f"{path}: {COMPARE_FUNCTION} is not a function; define compare(a, b) -> float in [0, 1] or remove it")
    return Decoder(path, function, decode, compare, hashlib.sha256(path.read_bytes()).hexdigest(),
                   takes_inputs(decode))


def takes_inputs(function: object) -> bool:
    """Whether the decode takes a second positional argument (the sample's inputs): two or more positional
    parameters, or *args. A signature Python cannot read counts as outputs only."""
    try:
        parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


def split_spec(spec: str) -> tuple[Path, str]:
    """FILE.py[:func] -> (path, func), default function `decode`."""
    return script.split_spec(spec, DEFAULT_FUNCTION)
