"""The TensorRT evidence of each stage of a bundle, parsed once for rules and the report.

Stage artefacts (docs/bundle.md, "TensorRT artefacts"): `layer_info` (stages/<id>/layer_info.json),
`profile` (profile.json), `build_log` (build.log), `build_settings` (build_settings.json), written
by the collector's TensorRT stages or by `qdqreport import-trt`. A file that is not valid JSON is a
bad bundle (exit 2); one that decodes but is not what TensorRT writes is reported in `problems`
instead of failing the report: the bundle stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qdqreport.analysis.trt_build_info import BuildLog, BuildSettings, major_version, parse_build_log, parse_build_settings
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
            major = major_version(version)
            if major is not None:
                return major
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
    engine = _parsed(ctx, artifacts.get("layer_info"), parse_layer_info, problems, json=True)
    profile = _parsed(ctx, artifacts.get("profile"), parse_profile, problems, json=True)
    settings = _parsed(ctx, artifacts.get("build_settings"), parse_build_settings, problems, json=True)
    log = _parsed(ctx, artifacts.get("build_log"), parse_build_log, problems)
    runs, times = profile if profile else (None, ())
    return EngineEvidence(stage_id, engine, runs, times, log, settings, dict(details), tuple(problems))


def _parsed(ctx: "Context", path: str | None, parse: Any, problems: list[str], json: bool = False) -> Any:
    if not path or not ctx.bundle.has(path):
        return None
    # JSON goes through the bundle's decoder (depth, lone surrogates, UTF-8: a one-line BundleError, exit 2);
    # a document that decodes but is not what TensorRT writes is a problem the report shows.
    content = ctx.bundle.json(path) if json else ctx.bundle.text(path)
    try:
        return parse(content)
    except ValueError as exc:
        problems.append(f"{path}: {exc}")
        return None
