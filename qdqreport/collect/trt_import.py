"""`qdqreport import-trt`: bring TensorRT artefacts made on another machine into a bundle.

Every file is checked first (trt_import_files.py, trt_outputs.py); only then is the bundle
rewritten, through BundleWriter (staging folder, manifest last, atomic replace), so a bad file
leaves the bundle untouched. Tool outputs are stored verbatim as stages/<stage>/layer_info.json,
profile.json, build.log, build_settings.json. Needs neither onnxruntime nor tensorrt; Polygraphy
only for --outputs.

Stage status after an import (docs/bundle.md, "Imported TensorRT artefacts"):
- with --outputs: "ok", details.source "imported", compared with ort_fp32 (fp16) or ort_qdq (deployment);
- artefacts only: the stage keeps outputs it already had (status unchanged); a stage without
  outputs becomes "skipped" with `error` saying only artefacts were imported (the engine is
  analysed, not compared), or "failed" when the imported build log shows the ONNX parser failing.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qdqreport.analysis.compare import looks_like_probabilities
from qdqreport.analysis.comparison_tables import write_comparison
from qdqreport.bundle.layout import STAGE_KINDS, base_manifest, load_stage_outputs, output_key
from qdqreport.bundle.paths import name_problem
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.trt_import_files import ToolFile, read_tool_files
from qdqreport.collect.trt_outputs import TrtOutputs, load_trt_outputs, match_reference
from qdqreport.errors import InputError

# imported stage -> (reference stage, comparison purpose)
IMPORT_STAGES = {"trt_fp16": ("ort_fp32", "fp16"), "trt_int8": ("ort_qdq", "deployment")}
PIPELINE = ("ort_fp32", "ort_qdq", "trt_fp16", "trt_int8")
NOT_IN_NEW_BUNDLE = ("not part of this bundle: it was started by `qdqreport import-trt --new` from TensorRT artefacts "
                     "only; run `qdqreport collect` and import into that bundle to compare stages")
ARTEFACTS_ONLY = ("imported TensorRT artefacts without outputs ({kinds}): the engine is analysed but not compared; "
                  "add --outputs from `polygraphy run MODEL.onnx --trt --save-outputs F.json`")


@dataclass
class ImportOptions:
    bundle: str
    stage: str
    layer_info: str | None = None
    profile: str | None = None
    outputs: str | None = None
    build_log: str | None = None
    build_settings: str | None = None
    output: str | None = None
    new: bool = False
    force: bool = False
    argv: list[str] = field(default_factory=list)


def import_trt(options: ImportOptions) -> Path:
    """Check every file, then write the bundle with the imported stage; return the bundle path."""
    if options.stage not in IMPORT_STAGES:
        raise InputError(f"--stage must be one of {', '.join(IMPORT_STAGES)}, got {options.stage!r}")
    files = read_tool_files({"--layer-info": options.layer_info, "--profile": options.profile,
                             "--build-log": options.build_log, "--build-settings": options.build_settings}, options.stage)
    if not files and not options.outputs:
        raise InputError(f"{options.bundle}: nothing to import; pass --layer-info, --profile, --outputs, --build-log "
                         "or --build-settings")
    source, manifest, destination = _open(options)
    reference_stage, purpose = IMPORT_STAGES[options.stage]
    outputs = _outputs(options, source, reference_stage)
    with BundleWriter(destination, overwrite=True) as writer:
        replaced = _copy_unchanged(writer, source, manifest, options.stage, set(files) | ({"outputs"} if outputs else set()))
        stage = _stage_entry(writer, manifest, options.stage, files, outputs)
        manifest["stages"] = _replace_stage(manifest["stages"], stage)
        if outputs is not None:
            comparisons = [c for c in manifest["comparisons"] if c["candidate"] != options.stage]
            reference = load_stage_outputs(source, reference_stage)
            comparisons.append(write_comparison(writer, reference_stage, options.stage, purpose, reference,
                                                outputs.samples, _class_outputs(manifest, reference)))
            manifest["comparisons"] = comparisons
        manifest.setdefault("imports", []).append(_import_record(options, files, outputs, replaced))
        manifest.pop("files", None)
        return writer.commit(manifest)


def _open(options: ImportOptions) -> tuple[Bundle | None, dict[str, Any], Path]:
    destination = Path(options.output or options.bundle)
    if options.new:
        if destination.exists() and not options.force:
            raise InputError(f"{destination}: already exists; --new starts a bundle, so pass a new path or --force to replace it")
        if options.outputs:
            raise InputError(f"{options.outputs}: --new bundles hold no ONNX Runtime outputs to check TensorRT outputs "
                             "against; import --outputs into a bundle written by `qdqreport collect`")
        return None, _new_manifest(options), destination
    source = Bundle(options.bundle)
    if options.output and destination.exists() and destination.resolve() != source.location.resolve() and not options.force:
        raise InputError(f"{destination}: already exists; choose another -o or pass --force to replace it")
    return source, copy.deepcopy(source.manifest), destination


def _new_manifest(options: ImportOptions) -> dict[str, Any]:
    manifest = base_manifest(argv=["qdqreport", *options.argv])
    manifest["stages"] = [_placeholder(stage, NOT_IN_NEW_BUNDLE if stage.startswith("ort") else
                                       "not imported: run `qdqreport import-trt` with --stage " + stage)
                          for stage in PIPELINE]
    return manifest


def _placeholder(stage_id: str, reason: str) -> dict[str, Any]:
    runtime, precision = STAGE_KINDS[stage_id]
    return {"id": stage_id, "runtime": runtime, "precision": precision, "status": "skipped", "error": reason,
            "seconds": None, "artifacts": {}, "details": {}}


def _outputs(options: ImportOptions, source: Bundle | None, reference_stage: str) -> TrtOutputs | None:
    if not options.outputs:
        return None
    path = Path(options.outputs)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder (--outputs); pass the RunResults JSON (or per-iteration "
                         "folder) written by `polygraphy run MODEL.onnx --trt --save-outputs F.json`")
    loaded = load_trt_outputs(path)
    reference = load_stage_outputs(source, reference_stage) if source is not None else []
    if not reference:
        raise InputError(f"{source.location if source else options.bundle}: stage {reference_stage} has no outputs to "
                         f"check the TensorRT outputs against; import --outputs into a bundle whose {reference_stage} ran")
    return match_reference(loaded, reference, reference_stage, path)


def _copy_unchanged(writer: BundleWriter, source: Bundle | None, manifest: dict[str, Any], stage: str,
                    kinds: set[str]) -> list[str]:
    """Copy every file of the old bundle the import does not replace (stage artefacts of *kinds*,
    and with new outputs the stage's comparison tables); return the replaced paths."""
    if source is None:
        return []
    entry = next((s for s in manifest["stages"] if s["id"] == stage), None)
    dropped = {entry["artifacts"].get(kind) for kind in kinds} if entry else set()
    if "outputs" in kinds:
        for comparison in manifest["comparisons"]:
            if comparison["candidate"] == stage:
                dropped |= set(comparison["tables"].values())
    for relative in sorted(source.manifest["files"]):
        if relative not in dropped:  # an artefact re-imported under the same path is written again below
            source.copy_to(relative, _staged_target(writer, relative))
    return sorted(p for p in dropped if p)


def _staged_target(writer: BundleWriter, relative: str) -> Path:
    """Where *relative* goes in the staging folder; refused unless it stays inside it. The reader
    already refused unsafe names; this holds even if a name or a link slipped past it."""
    problem = name_problem(relative)
    root = writer.root.resolve()
    target = (root / relative).resolve() if problem is None else None
    if target is None or root not in target.parents:
        raise InputError(f"{writer.root}: refusing to write {relative[:80]!r} outside the staging folder of "
                         f"{writer.destination}; the source bundle is damaged or hostile, do not use it")
    if target.exists():  # a case-insensitive disk: two listed names differ only in case
        raise InputError(f"{writer.destination}: the source bundle lists {relative[:80]!r} twice (names that differ "
                         "only in case); re-run `qdqreport collect`")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _stage_entry(writer: BundleWriter, manifest: dict[str, Any], stage_id: str, files: dict[str, ToolFile],
                 outputs: TrtOutputs | None) -> dict[str, Any]:
    old = next((s for s in manifest["stages"] if s["id"] == stage_id), None) or _placeholder(stage_id, "")
    entry = {**old, "artifacts": dict(old.get("artifacts", {})), "details": dict(old.get("details") or {})}
    base = f"stages/{stage_id}"
    for kind, file in sorted(files.items()):
        entry["artifacts"][kind] = writer.add_bytes(f"{base}/{file.bundle_name}", file.data)
    details = entry["details"]
    details.update(source="imported", imported_files={k: f.source.name for k, f in sorted(files.items())})
    version = _tensorrt_version(files)
    if version:
        details["tensorrt"] = version
    if outputs is not None:
        arrays = {output_key(i, name): value for i, sample in enumerate(outputs.samples) for name, value in sample.items()}
        entry["artifacts"]["outputs"] = writer.add_npz(f"{base}/outputs.npz", arrays)
        details.update(runner=outputs.runner, ignored_runners=outputs.ignored_runners,
                       dropped_outputs=outputs.dropped_outputs, sample_mapping="Polygraphy iteration i = bundle sample i")
        entry.update(status="ok", error=None, seconds=None)
    elif "outputs" not in entry["artifacts"]:
        entry.update(_status_without_outputs(files))
    return entry


def _status_without_outputs(files: dict[str, ToolFile]) -> dict[str, Any]:
    log = files.get("build_log")
    if log is not None and log.parsed.parse_failed and "layer_info" not in files:
        first = (log.parsed.parser_errors or ("see build.log",))[0]
        return {"status": "failed", "error": f"the imported build log shows the TensorRT ONNX parser failing: {first}"}
    kinds = ", ".join(kind.replace("_", " ") for kind in sorted(files))
    return {"status": "skipped", "error": ARTEFACTS_ONLY.format(kinds=kinds)}


def _tensorrt_version(files: dict[str, ToolFile]) -> str | None:
    log, settings = files.get("build_log"), files.get("build_settings")
    return (log.parsed.tensorrt_version if log else None) or (settings.parsed.tensorrt_version if settings else None)


def _replace_stage(stages: list[dict[str, Any]], entry: dict[str, Any]) -> list[dict[str, Any]]:
    if any(s["id"] == entry["id"] for s in stages):
        return [entry if s["id"] == entry["id"] else s for s in stages]
    return [*stages, entry]


def _class_outputs(manifest: dict[str, Any], reference: list[dict[str, Any]]) -> set[str]:
    """Outputs treated as class scores: as in the bundle's other comparisons, or probability rows."""
    known = {name for c in manifest["comparisons"] for name in c.get("class_outputs", [])}
    return known | {name for name in reference[0] if looks_like_probabilities(reference, name)}


def _import_record(options: ImportOptions, files: dict[str, ToolFile], outputs: TrtOutputs | None,
                   replaced: list[str]) -> dict[str, Any]:
    record = {"stage": options.stage, "argv": ["qdqreport", *options.argv],
              "files": {kind: {"source": f.source.name, "sha256": hashlib.sha256(f.data).hexdigest()}
                        for kind, f in sorted(files.items())}, "replaced": replaced}
    if outputs is not None:
        record["outputs"] = {"source": Path(options.outputs).name, "runner": outputs.runner, "samples": len(outputs.samples)}
    return record
