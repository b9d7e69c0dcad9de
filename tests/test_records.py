"""The typed table records of analysis/records.py stay in step with the bundle schema's table columns."""

from __future__ import annotations

import dataclasses

import pytest

from qdqreport.analysis.records import ROW_TYPES, SampleRow, table_records
from qdqreport.bundle.schema import OPTIONAL_COLUMNS, TABLE_COLUMNS
from qdqreport.testing import BundleBuilder
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_run


@pytest.mark.parametrize("kind", sorted(TABLE_COLUMNS))
def test_every_table_kind_has_a_record_of_exactly_its_columns(kind):
    assert [f.name for f in dataclasses.fields(ROW_TYPES[kind])] == [
        name for name, _ in TABLE_COLUMNS[kind] + OPTIONAL_COLUMNS.get(kind, ())]


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


def test_optional_columns_read_as_empty_from_an_older_bundle_and_typed_from_a_newer_one(tmp_path):
    """The tensors table's input and local columns (session 35) are trailing and optional: a bundle written before
    them reads with None there, one written after gets floats."""
    bundle = tmp_path / "b"
    (bundle / "compare").mkdir(parents=True)
    old = "tensor,node,op_type,samples,cosine,sqnr_db,max_abs,rel_l2,ref_absmax\nt,n,Sigmoid,8,0.9,10,1,0.3,2\n"
    new = old.replace("ref_absmax\n", "ref_absmax,input_tensor,local_cosine,local_sqnr_db\n").replace(
        ",2\n", ",2,x,0.91,10.5\n")
    for name, text in (("old.csv", old), ("new.csv", new)):
        (bundle / "compare" / name).write_text(text)
    older, = table_records("tensors", _read(bundle, "compare/old.csv"))
    newer, = table_records("tensors", _read(bundle, "compare/new.csv"))
    assert older.input_tensor == "" and older.local_cosine is None and older.local_sqnr_db is None
    assert newer.input_tensor == "x" and newer.local_cosine == 0.91 and newer.local_sqnr_db == 10.5


def _read(root, relative):
    """The rows as Bundle.table types them: the declared columns, then the optional ones."""
    import csv
    import io

    from qdqreport.bundle.reader import _typed_row

    rows = list(csv.reader(io.StringIO((root / relative).read_text())))
    typed = TABLE_COLUMNS["tensors"] + OPTIONAL_COLUMNS["tensors"]
    return [_typed_row(rows[0], typed, row, relative) for row in rows[1:]]
