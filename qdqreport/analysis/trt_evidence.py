"""The TensorRT evidence of each stage of a bundle, parsed once for rules and the report.

Stage artefacts (docs/bundle.md, "TensorRT artefacts"): `layer_info` (stages/<id>/layer_info.json),
`profile` (profile.json), `build_log` (build.log), `build_settings` (build_settings.json), written
by the collector's TensorRT stages or by `qdqreport import-trt`. A file that does not parse is
reported in `problems` instead of failing the report: the bundle stays readable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qdqreport.analysis.trt_build_info import BuildLog, BuildSettings, parse_build_log, parse_build_settings
from qdqreport.analysis.trt_layers import Engine, LayerTime, parse_layer_info, parse_profile

if TYPE_CHECKING:
    from qdqreport.analysis.context import Context

# Stage artefact kinds holding TensorRT tool output, and their file names under stages/<id>/.
TRT_ARTIFACT_FILES = {"layer_info": "layer_info.json", "profile": "profile.json", "build_log": "build.log",
                      "build_settings": "build_settings.json"}


@dataclass(frozen=True)
class EngineEvidence:
    stage_id: str
    engine: Engine | None
    profile_runs: int | None = None
    profile: tuple[LayerTime, ...] = ()
    build_log: BuildLog | None = None
    settings: BuildSettings | None = None
    details: dict[str, Any] = field(default_factory=dict)  # the stage's details (tensorrt version, flags, parser errors)
    problems: tuple[str, ...] = ()

    @property
    def tensorrt_major(self) -> int | None:
        for version in (self.details.get("tensorrt"), self.settings and self.settings.tensorrt_version,
                        self.build_log and self.build_log.tensorrt_version):
            head = str(version or "").split(".")[0]
            if head.isdigit():
                return int(head)
        return None


def load_engines(ctx: "Context") -> dict[str, EngineEvidence]:
    """Stage id -> EngineEvidence for every stage carrying at least one TensorRT artefact."""
    found = {}
    for stage in ctx.manifest["stages"]:
        artifacts = stage.get("artifacts", {})
        if any(kind in artifacts for kind in TRT_ARTIFACT_FILES):
            found[stage["id"]] = _evidence(ctx, stage["id"], artifacts, stage.get("details") or {})
    return found


def _evidence(ctx: "Context", stage_id: str, artifacts: dict[str, str], details: dict[str, Any]) -> EngineEvidence:
    problems: list[str] = []
    engine = _parsed(ctx, artifacts.get("layer_info"), lambda t: parse_layer_info(json.loads(t)), problems)
    profile = _parsed(ctx, artifacts.get("profile"), lambda t: parse_profile(json.loads(t)), problems)
    settings = _parsed(ctx, artifacts.get("build_settings"), lambda t: parse_build_settings(json.loads(t)), problems)
    log = _parsed(ctx, artifacts.get("build_log"), parse_build_log, problems)
    runs, times = profile if profile else (None, ())
    return EngineEvidence(stage_id, engine, runs, times, log, settings, dict(details), tuple(problems))


def _parsed(ctx: "Context", path: str | None, parse: Any, problems: list[str]) -> Any:
    if not path or not ctx.bundle.has(path):
        return None
    try:
        return parse(ctx.bundle.text(path))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError too
        problems.append(f"{path}: {exc}")
        return None
