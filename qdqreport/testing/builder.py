"""BundleBuilder: write small real bundles in tests and in rule examples.

It writes through the same BundleWriter and layout functions as the collector, and its
comparisons run the same comparison code, so a rule example exercises the real path from
arrays to CSV to Context.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.analysis.decode_step import Decoder, normalise_result
from qdqreport.analysis.calibration_check import CONTROL_KIND as EVAL_RANGES_KIND, EVAL_RANGES_STAGE
from qdqreport.analysis.saturation import CONTROL_KIND, UNFUSED_STAGE
from qdqreport.analysis.task import AppResults, run_task, write_task
from qdqreport.analysis.comparison_tables import write_comparison
from qdqreport.bundle.layout import base_manifest, write_stage
from qdqreport.bundle.vocabulary import ARTIFACT_PATHS, COMPARISON_PLAN
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.writer import BundleWriter

Samples = Sequence[Mapping[str, np.ndarray]]


class BundleBuilder:
    def __init__(self, directory: Path | str):
        self.destination = Path(directory) / "bundle"
        self.manifest = base_manifest(argv=["qdqreport-testing"], created_at="2026-01-01T00:00:00Z")
        self._stages: dict[str, dict[str, Any]] = {}
        self._outputs: dict[str, Samples] = {}
        self._artifacts: dict[str, Any] = {}
        self._class_outputs: set[str] = set()
        self._tensor_rows: dict[str, list[Mapping[str, Any]]] = {}
        self._stage_files: dict[str, dict[str, tuple[str, str]]] = {}
        self._writer: BundleWriter | None = None

    def stage(self, stage_id: str, outputs: Samples | None = None, status: str = "ok", error: str | None = None,
              details: Mapping[str, Any] | None = None) -> "BundleBuilder":
        """Add a stage; ok stages need outputs (one {name: array} per sample)."""
        self._stages[stage_id] = {"status": status, "error": error, "details": dict(details or {})}
        if outputs is not None:
            self._outputs[stage_id] = [{k: np.asarray(v) for k, v in s.items()} for s in outputs]
        return self

    def class_outputs(self, *names: str) -> "BundleBuilder":
        self._class_outputs.update(names)
        return self

    def tensors(self, purpose: str, rows: Iterable[Mapping[str, Any]]) -> "BundleBuilder":
        """Per-tensor rows (schema table 'tensors') for the comparison of *purpose*."""
        self._tensor_rows[purpose] = list(rows)
        return self

    def artifact(self, kind: str, data: Any) -> "BundleBuilder":
        """A JSON artefact of a known kind (precision_summary, eval_stats, calib_stats, range_use, modelopt_log)."""
        self._artifacts[kind] = data
        return self

    def stage_file(self, stage_id: str, kind: str, name: str, text: str) -> "BundleBuilder":
        """A stage artefact stored verbatim as stages/<stage_id>/<name> (e.g. kind layer_info, name layer_info.json)."""
        self._stage_files.setdefault(stage_id, {})[kind] = (name, text)
        return self

    def layers(self, rows: Iterable[Mapping[str, Any]], qnodes: Iterable[Mapping[str, Any]] = (),
               whatif: Iterable[Mapping[str, Any]] = (), whatif_summary: Mapping[str, Any] | None = None,
               summary: Mapping[str, Any] | None = None) -> "BundleBuilder":
        """Per-layer tables (schema kinds 'layers', 'qnodes', 'whatif') of the quantization comparison; *summary*:
        fields of layers/summary.json beside its format (e.g. `nonfinite`)."""
        self._layers = (list(rows), list(qnodes), list(whatif), whatif_summary, dict(summary or {}))
        return self

    def task(self, decode: Any, results: Sequence[Mapping[str, Any]] | None = None, stage: str = "ort_qdq",
             compare: Any = None) -> "BundleBuilder":
        """Decode every stage with *decode* (collect --postprocess) and, with *results*, compare the
        application's task results (collect --task-results) with the decode of *stage*."""
        self._task = (decode, results, stage, compare)
        return self

    def _attach_task(self, writer: BundleWriter, manifest: dict[str, Any]) -> None:
        if getattr(self, "_task", None) is None:
            return
        decode, results, stage, compare = self._task
        decoder = Decoder(Path("decode.py"), decode.__name__, decode, compare, "0" * 64)
        app = None if results is None else AppResults(
            "app_results.json", "json", stage, [normalise_result(r, "example") for r in results], None)
        ok = {sid: self._outputs[sid] for sid, spec in self._stages.items() if spec["status"] == "ok" and sid in self._outputs}
        write_task(writer, manifest, run_task(decoder, ok, app))

    def _attach_layers(self, writer: BundleWriter, manifest: dict[str, Any]) -> None:
        rows, qnodes, whatif, summary, layers_summary = getattr(self, "_layers", ([], [], [], None, {}))
        comparison = next((c for c in manifest["comparisons"] if c["purpose"] == "quantization"), None)
        if not rows or comparison is None:
            return
        for kind, table in (("layers", rows), ("qnodes", qnodes), ("whatif", whatif)):
            if table:
                comparison["tables"][kind] = writer.add_table(f"compare/{comparison['id']}.{kind}.csv", kind, table)
        manifest["artifacts"]["layers_summary"] = writer.add_json(ARTIFACT_PATHS["layers_summary"],
                                                                     {"format": 1, **layers_summary})
        if summary is not None:
            manifest["artifacts"]["whatif_summary"] = writer.add_json(ARTIFACT_PATHS["whatif_summary"], dict(summary))

    def fp16_check(self, rows: Iterable[Mapping[str, Any]], summary: Mapping[str, Any]) -> "BundleBuilder":
        """The FP16 check (collect/fp16_check.py): the fp16_ranges table and its summary; a stage
        ort_qdq_fp32 added with .stage() is compared with ort_fp32 as the collector does."""
        self._fp16 = (list(rows), dict(summary))
        return self

    def _attach_fp16(self, writer: BundleWriter, manifest: dict[str, Any]) -> None:
        if getattr(self, "_fp16", None) is None:
            return
        rows, summary = self._fp16
        if "ort_fp32" in self._outputs and "ort_qdq_fp32" in self._outputs:
            entry = write_comparison(writer, "ort_fp32", "ort_qdq_fp32", "other", self._outputs["ort_fp32"],
                                     self._outputs["ort_qdq_fp32"], self._class_outputs)
            manifest["comparisons"].append({**entry, "control": "fp32_float"})
        manifest["artifacts"]["fp16_check"] = writer.add_json(ARTIFACT_PATHS["fp16_check"], summary)
        manifest["artifacts"]["fp16_ranges"] = writer.add_table(ARTIFACT_PATHS["fp16_ranges"], "fp16_ranges", rows)

    def build(self) -> Bundle:
        with BundleWriter(self.destination, overwrite=True) as writer:
            manifest = dict(self.manifest)
            manifest["stages"] = [write_stage(writer, sid, spec["status"], self._outputs.get(sid), spec["error"],
                                              details=spec["details"]) for sid, spec in self._stages.items()]
            for entry in manifest["stages"]:
                for kind, (name, text) in self._stage_files.get(entry["id"], {}).items():
                    entry["artifacts"][kind] = writer.add_text(f"stages/{entry['id']}/{name}", text)
            manifest["comparisons"] = self._comparisons(writer)
            manifest["artifacts"] = {kind: writer.add_json(ARTIFACT_PATHS[kind], data)
                                     for kind, data in self._artifacts.items()}
            self._attach_layers(writer, manifest)
            self._attach_fp16(writer, manifest)
            self._attach_task(writer, manifest)
            writer.commit(manifest)
        return Bundle(self.destination)

    def context(self) -> Context:
        return Context(self.build())

    def _comparisons(self, writer: BundleWriter) -> list[dict[str, Any]]:
        entries = []
        for reference, candidate, purpose in COMPARISON_PLAN:
            if reference in self._outputs and candidate in self._outputs:
                entries.append(write_comparison(writer, reference, candidate, purpose, self._outputs[reference],
                                                self._outputs[candidate], self._class_outputs,
                                                self._tensor_rows.get(purpose)))
        # The checks' controls: the saturation check's unfused run, the calibration check's evaluation ranges.
        for control, kind in ((UNFUSED_STAGE, CONTROL_KIND), (EVAL_RANGES_STAGE, EVAL_RANGES_KIND)):
            if "ort_fp32" in self._outputs and control in self._outputs:
                entry = write_comparison(writer, "ort_fp32", control, "other", self._outputs["ort_fp32"],
                                         self._outputs[control], self._class_outputs)
                entries.append({**entry, "control": kind})
        return entries
