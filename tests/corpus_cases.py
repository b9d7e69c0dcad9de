"""The committed corpus as the trust tests read it: a case judged for its label's target, its findings ranked as the
report and the scorer rank them (scripts/corpus_score.py)."""

from __future__ import annotations

import json
from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import Finding

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
LABELS = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))


def ranked(case: str) -> tuple[Context, list[Finding]]:
    """(context, findings as run_rules ranks them) of corpus case *case*, judged for the target its label names."""
    ctx = Context(Bundle(CORPUS / case), target=LABELS[case].get("target"))
    return ctx, run_rules(ctx).findings
