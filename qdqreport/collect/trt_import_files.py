"""Read and check the TensorRT tool outputs given to `qdqreport import-trt`, before anything is written.

Each file is kept byte for byte (the bundle stores it verbatim); the parse only proves it is
what it claims to be. A bad file raises InputError: one line naming the file, what is wrong,
and what to pass instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qdqreport.analysis.trt_build_info import looks_like_build_log
from qdqreport.analysis.trt_evidence import TRT_ARTIFACTS
from qdqreport.analysis.trt_layers import Engine
from qdqreport.bundle.limits import current_limits, over_limit
from qdqreport.errors import InputError

# option -> (artefact kind, what the option wants, for "no such file" messages)
OPTIONS = {"--layer-info": ("layer_info", "the JSON written by trtexec --exportLayerInfo"),
           "--profile": ("profile", "the JSON written by trtexec --exportProfile"),
           "--build-log": ("build_log", "the console output of the trtexec or TensorRT build"),
           "--build-settings": ("build_settings", "TREx's <engine>.build.metadata.json or a qdqreport build_settings.json")}
MIN_PROFILE_OVERLAP = 0.5  # share of timed layers that must exist in the layer info: else two engines were mixed


@dataclass(frozen=True)
class ToolFile:
    kind: str  # layer_info, profile, build_log, build_settings
    source: Path
    data: bytes
    parsed: Any

    @property
    def bundle_name(self) -> str:
        return TRT_ARTIFACTS[self.kind].file


def read_tool_files(given: dict[str, str | None], stage: str) -> dict[str, ToolFile]:
    """Kind -> ToolFile for every option given (option -> path or None), checked alone and together."""
    files = {}
    for option, path in given.items():
        if path is not None:
            kind, wanted = OPTIONS[option]
            files[kind] = _read(Path(path), kind, option, wanted)
    if "layer_info" in files:
        _check_engine_fits_stage(files["layer_info"], stage)
        if "profile" in files:
            _check_same_engine(files["layer_info"], files["profile"])
    return files


def _read(path: Path, kind: str, option: str, wanted: str) -> ToolFile:
    if not path.is_file():  # also refuses a FIFO or a device, which would block or never end
        raise InputError(f"{path}: no such file ({option}); pass {wanted}")
    variable = "QDQREPORT_MAX_TEXT_BYTES" if kind == "build_log" else "QDQREPORT_MAX_JSON_BYTES"
    size = path.stat().st_size
    if size > getattr(current_limits(), variable.removeprefix("QDQREPORT_MAX_").lower()):
        raise InputError(over_limit(f"{path} ({option})", size, variable))
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text ({option}); pass {wanted}, unedited") from None
    try:
        return ToolFile(kind, path, data, _parse(kind, text))
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to be {wanted}; pass the file the tool wrote, unedited") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                         f"pass {wanted}, unedited") from None
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None


def _parse(kind: str, text: str) -> Any:
    """The file parsed by the bundle's own parser of its kind (analysis/trt_evidence.py, TRT_ARTIFACTS)."""
    artifact = TRT_ARTIFACTS[kind]
    if kind == "build_log" and not looks_like_build_log(text):
        raise ValueError("does not look like a TensorRT build log (no [TRT], [I]/[W]/[E] or trtexec lines); "
                         "pass the console output of `trtexec --onnx=... > build.log 2>&1`")
    return artifact.parse(json.loads(text) if artifact.json else text)


def _check_engine_fits_stage(layer_info: ToolFile, stage: str) -> None:
    engine: Engine = layer_info.parsed
    int8 = sum(layer.precision == "int8" for layer in engine.counted)
    if stage == "trt_fp16" and int8:
        raise InputError(f"{layer_info.source}: {int8} layers run in INT8, so this is an INT8 engine, not the FP16 engine "
                         "of the FP32 model; import it with --stage trt_int8")


def _check_same_engine(layer_info: ToolFile, profile: ToolFile) -> None:
    engine: Engine = layer_info.parsed
    _, times = profile.parsed
    if not engine.detailed:
        return  # names-only layer info still has names; the check below works on them
    names = set(engine.names)
    shared = sum(record.name in names for record in times)
    if shared < MIN_PROFILE_OVERLAP * len(times):
        raise InputError(f"{profile.source}: only {shared} of {len(times)} timed layers are in {layer_info.source.name}; "
                         "the profile and the layer info come from different engines: export both from the same engine")
