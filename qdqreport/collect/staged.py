"""The bundle being written, read back the way `qdqreport report` will read it.

A collect step that depends on a judgement of the outputs (the saturation check's control runs only
where the fused QDQ outputs do not agree with FP32) asks analysis/context.py's Context, the one
path by which the report judges them (analysis/agreement.py), instead of judging them a second
way. Before the commit the bundle has no manifest file and no hashes: this view reads the staged
files the collector itself wrote, with the manifest built so far, through Bundle's own accessors
(CSV tables, JSON, .npz), so every table is decoded exactly as the report decodes it; the stages'
stored outputs may come from the collector's own output stores instead (the same arrays, read back
faster). Like the report, it holds the stored samples of a stage in memory while judging
(`--store-outputs`, first 128 by default).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from qdqreport.bundle.layout import output_key
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.limits import current_limits
from qdqreport.bundle.schema import SCHEMA_NAME, SCHEMA_VERSION
from qdqreport.bundle.source import FolderSource
from qdqreport.bundle.writer import BundleWriter


class StagedBundle(Bundle):
    """A read-only view of the staging folder of *writer* under the manifest written so far (*manifest*)."""

    def __init__(self, writer: BundleWriter, manifest: dict[str, Any],
                 stored: Mapping[str, Sequence[dict[str, np.ndarray]]] | None = None):
        """*stored*: bundle path -> the samples the collector streamed into that outputs.npz (collect/output_store.py's
        OutputStore, read back with its positioned reads: the same arrays, without decoding every member's header
        again, 0.1-0.2 s of a 128-sample judgement)."""
        self._stored_samples = dict(stored or {})
        self.location = writer.root  # Bundle.__init__ would look for the manifest file
        self._source = FolderSource(writer.root)
        self._zip = None
        self.limits = current_limits()
        self.manifest = dict(manifest, schema=SCHEMA_NAME, schema_version=SCHEMA_VERSION, files={})
        self.version = tuple(int(part) for part in SCHEMA_VERSION.split("."))  # Context checks the fields it reads

    def has(self, relative: str | None) -> bool:
        """A file the collector has staged (the manifest's `files` is written at the commit)."""
        if not isinstance(relative, str):
            return False
        try:
            handle, _ = self._source.open(relative)
        except FileNotFoundError:
            return False
        handle.close()
        return True

    def _read(self, relative: str, variable: str, slack: int = 0) -> bytes:
        """The staged file's bytes (no hash yet: the collector wrote it a moment ago)."""
        handle, _ = self._open(relative, missing=f"{self._where(relative)}: not staged")
        with handle:
            return handle.read()

    def npz(self, relative: str) -> dict[str, np.ndarray]:
        samples = self._stored_samples.get(relative)
        if samples is None:
            return super().npz(relative)
        return {output_key(index, name): value for index, sample in enumerate(samples) for name, value in sample.items()}
