"""An output whose kind inference had to guess says how to declare the other kind (issue 10, session 32).

Session 31's second new user's anime-or-not ResNet18 ends in a Gemm of 2 logits (anime or not). Two values out of
a linear layer read as well as regressed numbers, so the output is a "scalar" judged by relative error, and before
this change nothing in the report said that `--output-kind output=class_scores` judges it by the decision it makes.
The bundle is real (tests/data/bundles/anime_or_not_random_calib: the package's model, calibrated on noise).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import numpy as np

from qdqreport.cli import main
from qdqreport.schemas import findings_schema

ROOT = Path(__file__).resolve().parents[1]
ANIME = ROOT / "tests" / "data" / "bundles" / "anime_or_not_random_calib"
FIELD_GRID = ROOT / "corpus" / "lea_healthy_ort_sym"  # a keypoint head judged as a grid of fields


def _report(bundle: Path, out: Path, *extra: str) -> dict:
    assert main(["report", str(bundle), "-o", str(out), *extra]) == 0
    document = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(findings_schema()).validate(document)
    return document


def test_two_gemm_logits_name_the_declaration_that_judges_them_by_top1(tmp_path: Path) -> None:
    inferred = _report(ANIME, tmp_path / "inferred")
    (output,) = inferred["comparisons"][0]["outputs"]
    assert output["kind"] == "scalar" and output["kind_note"].endswith("--output-kind output=class_scores")
    markdown = (tmp_path / "inferred" / "report.md").read_text(encoding="utf-8")
    assert "`--output-kind output=class_scores`" in markdown
    assert "<code>--output-kind output=class_scores</code>" in (tmp_path / "inferred" / "report.html").read_text(
        encoding="utf-8")
    # Following the note: the same output judged by the class it decides, and no note any more.
    declared = _report(ANIME, tmp_path / "declared", "--output-kind", "output=class_scores")
    (output,) = declared["comparisons"][0]["outputs"]
    assert output["kind"] == "class_scores" and output["kind_note"] is None
    assert output["top1_agreement"] is not None and "top-1" in output["judgement"]["by"]
    assert "--output-kind" not in (tmp_path / "declared" / "report.md").read_text(encoding="utf-8")


def test_a_field_grid_output_validates_against_the_published_schema(tmp_path: Path) -> None:
    # 1.2 files wrote kind "fields" that the 1.2 schema's enum did not list (every lea_ bundle failed validation).
    document = _report(FIELD_GRID, tmp_path / "grid")
    assert any(o["kind"] == "fields" for c in document["comparisons"] for o in c["outputs"])
    assert all(o["kind_note"] is None for c in document["comparisons"] for o in c["outputs"])


def test_an_unnamed_row_of_scores_offers_the_class_scores_option(tmp_path: Path) -> None:
    """A new user's key CNN (tests/data/bundles/keycnn_default_decode, collected with --output-kind): its 24 key
    logits come out of a ReduceMean unnamed, so without the declaration the output was a tensor judged by cosine,
    "Outputs agree: cosine 0.9995" while 9 of 160 keys changed, and nothing said how to judge it by its keys."""
    from qdqreport.analysis.context import Context
    from qdqreport.analysis.output_kinds import infer_kind
    from qdqreport.bundle.reader import Bundle

    name = "output_0_squeeze_175"
    stored = Context(Bundle(ROOT / "tests" / "data" / "bundles" / "keycnn_default_decode")).stored_outputs("ort_fp32")
    logits = [s[name] for s in stored]
    kind = infer_kind(name, logits)  # its producer, a Squeeze, is no quantized node the graph summary lists
    assert kind.kind == "tensor" and kind.alternative == "class_scores"
    rows = [np.stack([a, a]) for a in logits]  # two rows a sample: a map, not one row of scores
    assert infer_kind(name, rows).alternative is None
    bundle = tmp_path / "undeclared"
    shutil.copytree(ROOT / "tests" / "data" / "bundles" / "keycnn_default_decode", bundle)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    del manifest["settings"]["output_kinds"]  # as the user first collected it
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    _report(bundle, tmp_path / "out")
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "--output-kind output_0_squeeze_175=class_scores" in text
