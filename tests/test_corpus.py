"""The labelled corpus of real quantization failures (corpus/): the rules must rank each known cause first.

A rule change that pushes a cause down the ranking, or raises an error on a healthy control,
fails here with the whole case-by-case table in the message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qdqreport.corpus_score import (TOP1_TARGET, load_labels, score_corpus, table_markdown, totals,
                                    totals_markdown)

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@pytest.fixture(scope="module")
def scores():
    return score_corpus(CORPUS)


def _table(scores) -> str:
    return "\n" + table_markdown(scores) + "\n" + totals_markdown(totals(scores))


def test_every_labelled_case_has_a_bundle_and_a_known_cause():
    labels = load_labels(CORPUS)
    assert len(labels) >= 16
    for case, label in labels.items():
        assert (CORPUS / case / "manifest.json").is_file(), case
        assert 0 <= label["cause"]["number"] <= 8
        assert label["healthy"] == (label["cause"]["number"] == 0)
        assert label["healthy"] or label["expected_rules"] or label.get("pending"), f"{case}: needs expected rules"
    models = {label["model"] for label in labels.values()}
    for model in models:  # at least two healthy controls per model
        assert sum(l["healthy"] for l in labels.values() if l["model"] == model) >= 2, model


def test_corpus_covers_a_cnn_a_detector_and_a_transformer():
    models = " ".join(label["model"] for label in load_labels(CORPUS).values())
    for family in ("MobileNetV3", "DBNet", "transformer"):
        assert family in models, f"no {family} case in corpus/labels.json"


def test_manifests_record_no_machine_paths():
    """make_corpus.py collects from the repository root: models, inputs and -o are relative paths."""
    for case in load_labels(CORPUS):
        manifest = json.loads((CORPUS / case / "manifest.json").read_text(encoding="utf-8"))
        given = [*manifest["collector"]["argv"], *(m["path"] for m in manifest["models"].values()),
                 *(i["source"] for i in manifest["inputs"].values() if i and i.get("source"))]
        assert not [p for p in given if Path(p).is_absolute()], f"{case}: absolute path in its manifest"


def test_markdown_keeps_the_hand_written_part(tmp_path):
    from qdqreport.corpus_score import KEPT_MARKER, main

    report = tmp_path / "CORPUS.md"
    report.write_text(f"old table\n{KEPT_MARKER}\n## Held-out before tuning\n| dated | result |\n", encoding="utf-8")
    main([str(CORPUS), "--markdown", str(report)])
    text = report.read_text(encoding="utf-8")
    assert "old table" not in text and "## Totals" in text
    assert text.endswith(f"{KEPT_MARKER}\n## Held-out before tuning\n| dated | result |\n")


def test_ranking_meets_the_targets(scores):
    result = totals(scores)
    assert result.rule_failures == 0, _table(scores)
    assert result.top1_share >= TOP1_TARGET, "first-ranked finding misses the cause too often:" + _table(scores)
    assert result.top3 == result.faulty, "a cause fell out of the first three findings:" + _table(scores)
    assert result.healthy_with_errors == 0, "a healthy control has an error-severity finding:" + _table(scores)


def test_scorer_counts_a_miss(scores):
    """The scorer itself can fail: relabelling a case with a rule that never fires drops it out of the top three."""
    case = next(s for s in scores if not s.healthy)
    from qdqreport.corpus_score import score_case

    wrong = score_case(CORPUS, case.case, {**load_labels(CORPUS)[case.case], "expected_rules": ["QR999"]})
    assert wrong.rank is None and not wrong.top3
