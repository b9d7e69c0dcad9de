"""TensorRT outputs from `polygraphy run MODEL --trt --save-outputs F` (a RunResults JSON file, or, with
an extensionless path in Polygraphy 0.53+, a folder of per-iteration `0000000000.json` files).

Read with Polygraphy's own loader (RunResults.load_streaming: arrays are decoded with
allow_pickle=False). Only a TensorRT runner's iterations are accepted: Polygraphy names them
`trt-runner-N<k>-<date>-<time>` (TrtRunner's prefix); a file holding only other runners
(`onnxrt-runner-...`) is refused, so ONNX Runtime numbers are never recorded as a TensorRT stage.
Iteration i is taken as sample i of the bundle, and checked against the ONNX Runtime stage:
same count, same output names, same shapes.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from qdqreport.errors import InputError

TRT_RUNNER = re.compile(r"^(trt|tensorrt)", re.I)  # trt-runner-N0-..., trt-legacy-runner-..., user names like trt_int8
RUN_HINT = "pass the file written by `polygraphy run MODEL.onnx --trt --save-outputs F.json` on the bundle's samples"


@dataclass
class TrtOutputs:
    runner: str
    samples: list[dict[str, np.ndarray]]
    ignored_runners: list[str] = field(default_factory=list)
    dropped_outputs: list[str] = field(default_factory=list)


def load_trt_outputs(path: Path) -> TrtOutputs:
    """The one TensorRT runner's iterations of a RunResults file or per-iteration folder."""
    runs = _load_run_results(path)
    names = list(runs.keys())
    trt = [name for name in names if TRT_RUNNER.match(name)]
    if not trt:
        raise InputError(f"{path}: runner(s) {', '.join(repr(n) for n in names)} are not TensorRT runners "
                         "(Polygraphy names those trt-runner-N…); refusing to record non-TensorRT outputs as a TensorRT "
                         f"stage; {RUN_HINT}")
    if len(trt) > 1:
        raise InputError(f"{path}: holds {len(trt)} TensorRT runners ({', '.join(trt)}); save one engine's outputs per "
                         "file (one `polygraphy run --trt` per engine) and import each into its stage")
    iterations = runs[trt[0]]
    samples = [{name: np.asarray(value) for name, value in iteration.items()} for iteration in iterations]
    if not samples:
        raise InputError(f"{path}: runner {trt[0]!r} has no iterations; {RUN_HINT}")
    return TrtOutputs(trt[0], samples, [n for n in names if n not in trt])


def _load_run_results(path: Path) -> Any:
    try:
        from polygraphy.comparator import RunResults
    except ImportError:
        raise InputError(f"{path}: reading Polygraphy RunResults needs polygraphy; pip install 'qdqreport[collect]'") from None
    if path.is_dir() and not any(path.glob("*.json")):
        raise InputError(f"{path}: folder holds no per-iteration *.json files; {RUN_HINT}")
    quiet = io.StringIO()
    try:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):  # Polygraphy prints before raising
            runs = RunResults.concat(RunResults.load_streaming(str(path)))
    except Exception as exc:  # PolygraphyException, JSON errors, unexpected structure
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise InputError(f"{path}: not a Polygraphy RunResults file ({message}); {RUN_HINT}") from None
    if not isinstance(runs, RunResults) or not list(runs.keys()):
        raise InputError(f"{path}: holds no runner results; {RUN_HINT}")
    return runs


def match_reference(outputs: TrtOutputs, reference: Sequence[dict[str, np.ndarray]], reference_stage: str,
                    path: Path) -> TrtOutputs:
    """Keep the reference stage's outputs of every iteration; refuse count, name or shape mismatches."""
    if len(outputs.samples) != len(reference):
        raise InputError(f"{path}: {len(outputs.samples)} iterations, but the bundle has {len(reference)} samples "
                         f"in {reference_stage}; run polygraphy on exactly the bundle's samples, one iteration each, in order")
    wanted = list(reference[0])
    for index, (sample, ref) in enumerate(zip(outputs.samples, reference)):
        missing = [name for name in wanted if name not in sample]
        if missing:
            raise InputError(f"{path}: iteration {index} lacks output {missing[0]!r} (it has {sorted(sample)}); "
                             f"run the model whose outputs {reference_stage} holds")
        for name in wanted:
            if np.shape(sample[name]) != np.shape(ref[name]):
                raise InputError(f"{path}: iteration {index} output {name!r} has shape {tuple(np.shape(sample[name]))}, "
                                 f"{reference_stage} sample {index} has {tuple(np.shape(ref[name]))}; feed the same "
                                 "inputs (batch size and shapes) as the bundle's samples")
    dropped = sorted(set(outputs.samples[0]) - set(wanted))
    kept = [{name: sample[name] for name in wanted} for sample in outputs.samples]
    return TrtOutputs(outputs.runner, kept, outputs.ignored_runners, dropped)
