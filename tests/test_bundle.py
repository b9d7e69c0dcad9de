"""The bundle contract: round trip, validation, versioning, hashes, and the schema doc kept in step."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle
from qdqreport.bundle.schema import MANIFEST_SPEC, SCHEMA_VERSION, TABLE_COLUMNS
from qdqreport.bundle.writer import write_zip
from qdqreport.cli import main
from qdqreport.errors import BundleError, SchemaVersionError
from qdqreport.testing import BundleBuilder

DOC = Path(__file__).resolve().parent.parent / "docs" / "bundle.md"


def _small_bundle(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    ref = [{"logits": rng.normal(size=(1, 10)).astype(np.float32)} for _ in range(3)]
    cand = [{"logits": r["logits"] + np.float32(0.01)} for r in ref]
    BundleBuilder(tmp_path).stage("ort_fp32", ref).stage("ort_qdq", cand).class_outputs("logits").build()
    return tmp_path / "bundle"


def _rewrite_manifest(bundle: Path, change) -> None:
    path = bundle / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


def test_round_trip_keeps_arrays_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    ref = [{"y": rng.normal(size=(1, 4, 5)).astype(np.float32)} for _ in range(4)]
    bundle = BundleBuilder(tmp_path).stage("ort_fp32", ref).build()
    loaded = load_stage_outputs(bundle, "ort_fp32")
    assert len(loaded) == 4 and all(np.array_equal(a["y"], b["y"]) for a, b in zip(loaded, ref))
    assert bundle.version == tuple(int(p) for p in SCHEMA_VERSION.split("."))


def test_zip_and_folder_are_equivalent(tmp_path: Path) -> None:
    folder = _small_bundle(tmp_path)
    write_zip(folder, tmp_path / "b.zip")
    assert Bundle(tmp_path / "b.zip").manifest == Bundle(folder).manifest
    assert Bundle(tmp_path / "b.zip").table("compare/ort_qdq__vs__ort_fp32.samples.csv", "samples")[0]["top1_agree"] == 1.0


def test_newer_major_is_refused_naming_the_version(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    _rewrite_manifest(bundle, lambda m: m.update(schema_version="2.0"))
    with pytest.raises(SchemaVersionError, match=r"schema 2\.0 is newer .* reads schema 2\.x"):
        Bundle(bundle)


def test_newer_minor_with_unknown_fields_is_read(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    _rewrite_manifest(bundle, lambda m: m.update(schema_version="1.7", future_field={"x": 1}))
    assert Bundle(bundle).version == (1, 7)


@pytest.mark.parametrize("change, message", [
    (lambda m: m.pop("stages"), "required field stages is missing"),
    (lambda m: m["stages"][0].update(status="done"), r"stages\[0\]\.status must be one of ok\|failed\|skipped"),
    (lambda m: m.update(schema="something.else"), "not a qdqreport bundle"),
    (lambda m: m.update(schema_version="one"), "schema_version must look like"),
    (lambda m: m["comparisons"][0].update(purpose=3), r"comparisons\[0\]\.purpose has the wrong type"),
])
def test_invalid_manifest_names_the_json_path(tmp_path: Path, change, message: str) -> None:
    bundle = _small_bundle(tmp_path)
    _rewrite_manifest(bundle, change)
    with pytest.raises(BundleError, match=message):
        Bundle(bundle)


def test_changed_file_fails_the_hash_check(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    table = bundle / "compare" / "ort_qdq__vs__ort_fp32.samples.csv"
    table.write_text(table.read_text().replace("logits,0", "logits,9"))
    with pytest.raises(BundleError, match="sha256 does not match"):
        Bundle(bundle)


def test_corrupt_and_missing_bundles_give_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bundle = _small_bundle(tmp_path)
    (tmp_path / "garbage.zip").write_bytes(b"PK not really")
    half = tmp_path / "half"
    shutil.copytree(bundle, half)
    (half / "manifest.json").unlink()
    broken_json = tmp_path / "broken"
    shutil.copytree(bundle, broken_json)
    (broken_json / "manifest.json").write_text("{ not json")
    for path, expected in ((tmp_path / "nope", "no such bundle"), (tmp_path / "garbage.zip", "not a bundle folder"),
                           (half, "no manifest.json"), (broken_json, "not valid JSON")):
        assert main(["validate", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expected in err and str(path) in err


def test_validate_command_reports_a_good_bundle(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bundle = _small_bundle(tmp_path)
    assert main(["validate", str(bundle)]) == 0
    assert f"valid qdqreport bundle, schema {SCHEMA_VERSION}" in capsys.readouterr().out


def test_npz_with_pickled_objects_is_refused(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    path = "stages/ort_fp32/outputs.npz"
    np.savez(bundle / path, bad=np.array([{"a": 1}], dtype=object))
    _rewrite_manifest(bundle, lambda m: m["files"][path].update(sha256=_sha(bundle / path),
                                                                 bytes=(bundle / path).stat().st_size))
    with pytest.raises(BundleError, match="holds Python objects"):
        Bundle(bundle).npz(path)


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_zip_written_twice_is_identical(tmp_path: Path) -> None:
    folder = _small_bundle(tmp_path)
    write_zip(folder, tmp_path / "a.zip")
    write_zip(folder, tmp_path / "b.zip")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    names = zipfile.ZipFile(tmp_path / "a.zip").namelist()
    # Sorted, manifest last: a zip cut short never holds a manifest (bundle/writer.py).
    assert names == sorted(names, key=lambda name: (name == "manifest.json", name)) and names[-1] == "manifest.json"


def test_schema_doc_mentions_every_field_and_column() -> None:
    doc = DOC.read_text()
    assert f"`{SCHEMA_VERSION}`" in doc
    for field in MANIFEST_SPEC:
        assert re.search(rf"`{field}`", doc), f"docs/bundle.md does not document manifest field {field}"
    for kind, columns in TABLE_COLUMNS.items():
        for column, _ in columns:
            assert f"`{column}`" in doc, f"docs/bundle.md does not document {kind} column {column}"
