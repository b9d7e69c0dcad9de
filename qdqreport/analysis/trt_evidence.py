"""The TensorRT evidence of each stage of a bundle, parsed once for rules and the report.

Stage artefacts (docs/bundle.md, "TensorRT artefacts"): `layer_info` (stages/<id>/layer_info.json),
`profile` (profile.json), `build_log` (build.log), `build_settings` (build_settings.json), written
by the collector's TensorRT stages or by `qdqreport import-trt`. A file that is not valid JSON is a
bad bundle (exit 2); one that decodes but is not what TensorRT writes is reported in `problems`
instead of failing the report: the bundle stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from qdqreport.analysis.trt_build_info import BuildLog, BuildSettings, major_version, parse_build_log, parse_build_settings
from qdqreport.analysis.trt_layers import Engine, LayerTime, parse_layer_info, parse_profile

if TYPE_CHECKING:
    from qdqreport.analysis.context import Context


@dataclass(frozen=True)
class TrtArtifact:
    """One kind of TensorRT tool output a stage can carry: its file name under stages/<id>/ and its one parser."""

    file: str
    parse: Callable[[Any], Any]  # raises ValueError when the content is not what TensorRT writes
    json: bool  # the parser takes the decoded JSON document, else the text


# Stage artefact kind -> file and parser: the one table, read here and by `qdqreport import-trt`
# (collect/trt_import_files.py). In this order the report lists their problems.
TRT_ARTIFACTS = {
    "layer_info": TrtArtifact("layer_info.json", parse_layer_info, json=True),
    "profile": TrtArtifact("profile.json", parse_profile, json=True),
    "build_settings": TrtArtifact("build_settings.json", parse_build_settings, json=True),
    "build_log": TrtArtifact("build.log", parse_build_log, json=False),
}


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
        if any(kind in artifacts for kind in TRT_ARTIFACTS):
            found[stage["id"]] = _evidence(ctx, stage["id"], artifacts, stage.get("details") or {})
    return found


def _evidence(ctx: "Context", stage_id: str, artifacts: dict[str, str], details: dict[str, Any]) -> EngineEvidence:
    problems: list[str] = []
    parsed = {kind: _parsed(ctx, artifacts.get(kind), artifact, problems) for kind, artifact in TRT_ARTIFACTS.items()}
    runs, times = parsed["profile"] if parsed["profile"] else (None, ())
    return EngineEvidence(stage_id, parsed["layer_info"], runs, times, parsed["build_log"], parsed["build_settings"],
                          dict(details), tuple(problems))


def _parsed(ctx: "Context", path: str | None, artifact: TrtArtifact, problems: list[str]) -> Any:
    if not path or not ctx.bundle.has(path):
        return None
    # JSON goes through the bundle's decoder (depth, lone surrogates, UTF-8: a one-line BundleError, exit 2);
    # a document that decodes but is not what TensorRT writes is a problem the report shows.
    content = ctx.bundle.json(path) if artifact.json else ctx.bundle.text(path)
    try:
        return artifact.parse(content)
    except ValueError as exc:
        problems.append(f"{path}: {exc}")
        return None
