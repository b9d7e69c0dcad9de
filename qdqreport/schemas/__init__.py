"""Published JSON Schemas (package data, shipped in the wheel): findings.schema.json describes findings.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent
FINDINGS_SCHEMA = SCHEMA_DIR / "findings.schema.json"


def findings_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of findings.json, as data."""
    return json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8"))
