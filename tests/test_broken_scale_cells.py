"""QR004's table of broken scales shows them: the precision summary keeps the min and max of the finite scales only,
and a new user's Transformer (tests/data/bundles/ruaccent_ort_default: its causal mask's Where output quantized as a
weight, every scale inf or NaN) read "scale min —, scale max —" in the table about broken scales."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import Table

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "ruaccent_ort_default"


def test_scales_that_are_not_finite_say_so():
    broken = next(f for f in run_rules(Context(Bundle(BUNDLE))).findings
                  if f.rule_id == "QR004" and "non-finite or non-positive scale" in f.title)
    table = next(e for e in broken.evidence if isinstance(e, Table))
    minimum, maximum = table.columns.index("scale min"), table.columns.index("scale max")
    assert table.rows and all(row[minimum] == row[maximum] == "not finite" for row in table.rows)
