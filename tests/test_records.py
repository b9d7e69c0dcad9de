"""The typed table records of analysis/records.py stay in step with the bundle schema's table columns."""

from __future__ import annotations

import dataclasses

import pytest

from qdqreport.analysis.records import ROW_TYPES, SampleRow, table_records
from qdqreport.bundle.schema import TABLE_COLUMNS
from qdqreport.testing import BundleBuilder
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_run


@pytest.mark.parametrize("kind", sorted(TABLE_COLUMNS))
def test_every_table_kind_has_a_record_of_exactly_its_columns(kind):
    assert [f.name for f in dataclasses.fields(ROW_TYPES[kind])] == [name for name, _ in TABLE_COLUMNS[kind]]


def test_records_are_frozen_and_carry_only_declared_columns():
    row = {name: (0 if kind is int else "" if kind is str else 0.5) for name, kind in TABLE_COLUMNS["samples"]}
    [record] = table_records("samples", [{**row, "a_newer_column": "x"}])
    assert isinstance(record, SampleRow) and record.cosine == 0.5 and not hasattr(record, "a_newer_column")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.cosine = 1.0  # type: ignore[misc]
    # Key access, for readers not yet moved to attributes: the declared columns only.
    assert record["cosine"] == 0.5 and record.get("top1_agree") == 0.5 and record.get("a_newer_column", 7) == 7
    with pytest.raises(KeyError):
        record["a_newer_column"]


def test_context_reads_tables_as_records(tmp_path):
    logits = class_logits(8)
    builder = BundleBuilder(tmp_path).class_outputs(CLS_OUTPUT)
    builder.stage("ort_fp32", classifier_run(logits)).stage("ort_qdq", classifier_run(logits, noise=0.01))
    ctx = builder.context()
    rows = ctx.sample_rows(ctx.comparison("quantization").id)
    assert rows and all(isinstance(r, SampleRow) for r in rows)
    assert [r.sample for r in rows] == sorted(r.sample for r in rows)
