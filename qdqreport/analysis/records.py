"""Typed, frozen records of the bundle's tables: what Context hands rules instead of raw dicts.

One record class per table kind of bundle/schema.TABLE_COLUMNS, with exactly its declared columns and then its
OPTIONAL_COLUMNS (tests/test_records.py holds them in step). Context builds them once, from rows that
bundle/artifacts.check_rows has checked, so every field holds a value of its declared type (a float
column may be None: an empty cell). Columns a newer minor schema adds are not carried.

Rules read fields (`row.cosine`). Analysis and the report still read some rows by key; until they
move, a record also answers `row["cosine"]` and `row.get("cosine")` (TableRow), so both work during
the migration.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping


class TableRow:
    """Key access to a record's fields, for the readers not yet moved to attributes."""

    def __getitem__(self, key: str) -> Any:
        if key not in _field_names(type(self)):
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in _field_names(type(self)) else default


@dataclass(frozen=True)
class SampleRow(TableRow):
    """compare/<pair>.samples.csv: one output of one sample."""

    output: str
    sample: int
    cosine: float | None
    mse: float | None
    max_abs: float | None
    mean_abs: float | None
    sqnr_db: float | None
    rel_l2: float | None
    ref_nan: int
    ref_inf: int
    cand_nan: int
    cand_inf: int
    top1_agree: float | None
    top5_agree: float | None


@dataclass(frozen=True)
class SliceRow(TableRow):
    """compare/<pair>.slices.csv: one slice along the sliced axis of one output, over samples."""

    output: str
    axis: int
    index: int
    ref_rms: float | None
    cosine: float | None
    sqnr_db: float | None
    max_abs: float | None
    rel_l2: float | None


@dataclass(frozen=True)
class TensorRow(TableRow):
    """compare/<pair>.tensors.csv: one marked intermediate tensor (sensitive nodes)."""

    tensor: str
    node: str
    op_type: str
    samples: int
    cosine: float | None
    sqnr_db: float | None
    max_abs: float | None
    rel_l2: float | None
    ref_absmax: float | None
    # optional columns (bundle/schema.OPTIONAL_COLUMNS, session 35): the float activation the node reads, and the
    # node recomputed from FP32 inputs, quantized as in the QDQ graph
    input_tensor: str = ""
    local_cosine: float | None = None
    local_sqnr_db: float | None = None


@dataclass(frozen=True)
class LayerRow(TableRow):
    """compare/<pair>.layers.csv (collect --per-layer): one aligned tensor, end to end and local."""

    tensor: str
    node: str
    op_type: str
    index: int
    kind: str
    qdq_dtype: str
    samples: int
    cosine: float | None
    sqnr_db: float | None
    mse: float | None
    max_abs: float | None
    local_cosine: float | None
    local_sqnr_db: float | None
    local_mse: float | None
    local_max_abs: float | None
    ref_min: float | None
    ref_max: float | None
    ref_absmax: float | None


@dataclass(frozen=True)
class QNodeRow(TableRow):
    """compare/<pair>.qnodes.csv (collect --per-layer): how one Q node's range is used."""

    q_node: str
    tensor: str
    kind: str
    dtype: str
    values: int
    clipped_share: float | None
    range_used: float | None
    representable_min: float | None
    representable_max: float | None
    observed_min: float | None
    observed_max: float | None


@dataclass(frozen=True)
class WhatIfRow(TableRow):
    """compare/<pair>.whatif.csv (collect --per-layer): one trial of the what-if exclusion search."""

    trial: int
    kind: str
    excluded_count: int
    excluded: str
    op_types: str
    cosine: float | None
    top1_agree: float | None
    sqnr_db: float | None
    reached: int
    seconds: float | None


@dataclass(frozen=True)
class TaskRow(TableRow):
    """task/<pair>.csv (collect --postprocess): the decoded results of one sample compared."""

    sample: int
    agreement: float | None
    differing: str
    reference: str
    candidate: str
    flip_rel_l2: float | None
    raw_rel_l2: float | None


@dataclass(frozen=True)
class Fp16RangeRow(TableRow):
    """quant/fp16_ranges.csv (FP16 check): one FP16 activation's FP32 and QDQ ranges."""

    tensor: str
    kind: str
    node: str
    op_type: str
    consumers: str
    samples: int
    values: int
    fp32_absmax: float | None
    overflow: int
    underflow: int
    qdq_absmax: float | None


ROW_TYPES: dict[str, type[TableRow]] = {
    "samples": SampleRow, "slices": SliceRow, "tensors": TensorRow, "layers": LayerRow, "qnodes": QNodeRow,
    "whatif": WhatIfRow, "task": TaskRow, "fp16_ranges": Fp16RangeRow,
}

_FIELDS: dict[type, frozenset[str]] = {}


def _field_names(cls: type) -> frozenset[str]:
    if cls not in _FIELDS:
        _FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return _FIELDS[cls]


def table_records(kind: str, rows: list[Mapping[str, Any]]) -> list[Any]:
    """The records of checked *rows* of a table of *kind* (only its declared columns)."""
    cls = ROW_TYPES[kind]
    names = [f.name for f in dataclasses.fields(cls)]
    return [cls(**{name: row[name] for name in names}) for row in rows]
