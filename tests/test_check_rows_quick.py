"""bundle/artifacts.check_rows' quick test of a table that is all right accepts only what Spec.check accepts: every
table kind, random cells good and bad, gives the verdict (None or the same first error) of checking cell by cell."""

from __future__ import annotations

import random

import pytest

from qdqreport.bundle import artifacts
from qdqreport.bundle.schema import TABLE_COLUMNS, table_columns

VALUES = [None, 0, 1, -1, 2**60, 2**54, 0.5, -0.5, 1.5, 3.0, 1e300, -3, float("nan"), float("inf"), -float("inf"),
          True, False, "x", "", "a" * 5000, "agree", "degrade", [1], {"a": 1}]
PLAIN = {int: 1, float: 0.5, str: "s"}


def _cell_by_cell(kind, columns, rows, where):
    specs = [(name, artifacts.ROW_SPECS.get(kind, {}).get(name, artifacts._BY_TYPE[kind_])) for name, kind_ in columns]
    for line, row in enumerate(rows, start=2):
        for name, spec in specs:
            spec.check(row.get(name), where, f"line {line} column {name}")
    return rows


def _verdict(check, kind, columns, rows):
    try:
        assert check(kind, columns, rows, "t.csv") is rows
    except artifacts.BundleError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("kind", sorted(TABLE_COLUMNS))
def test_quick_check_gives_the_cell_by_cell_verdict(kind: str) -> None:
    columns = table_columns(kind)
    chance = random.Random(kind)
    verdicts = set()
    for _ in range(400):
        rows = [{name: chance.choice(VALUES) if chance.random() < 0.1 else PLAIN[python_type]
                 for name, python_type in columns} for _ in range(3)]
        expected = _verdict(_cell_by_cell, kind, columns, rows)
        assert _verdict(artifacts.check_rows, kind, columns, rows) == expected
        verdicts.add(expected is None)
    assert verdicts == {True, False}  # both kinds of table were tried
