"""The labelled corpus of real quantization failures (corpus/): the rules must rank each known cause first.

A rule change that pushes a cause down the ranking, or raises an error on a healthy control,
fails here with the whole case-by-case table in the message.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from corpus_score import (AFTER_SEALING, EIGHTEENTH_PART, EIGHTH_PART, ELEVENTH_PART, FIFTEENTH_PART, FIFTH_PART,
                          FOURTEENTH_PART, FOURTH_PART, LATER_PARTS, NEW_BATCH, NINETEENTH_PART, NINTH_PART,
                          SECOND_PART, SEVENTEENTH_PART, SEVENTH_PART, SIXTEENTH_PART, SIXTH_PART, TENTH_PART,
                          THIRD_PART, THIRTEENTH_PART, THIRTIETH_PART, THIRTY_EIGHTH_PART, THIRTY_FIFTH_PART,
                          THIRTY_NINTH_PART, FORTIETH_PART, FORTY_FIRST_PART,
                          THIRTY_FIRST_PART, THIRTY_FOURTH_PART, THIRTY_SECOND_PART, THIRTY_SEVENTH_PART,
                          THIRTY_SIXTH_PART, THIRTY_THIRD_PART, TOP1_TARGET,
                          TWELFTH_PART, TWENTIETH_PART, TWENTY_FIFTH_PART, TWENTY_EIGHTH_PART, TWENTY_FIRST_PART,
                          TWENTY_FOURTH_PART, TWENTY_NINTH_PART, TWENTY_SECOND_PART, TWENTY_SEVENTH_PART,
                          TWENTY_SIXTH_PART, TWENTY_THIRD_PART, load_labels, misses_markdown, score_corpus,
                          select_sealed, table_markdown, totals, totals_markdown)
from make_corpus import CAUSES
from qdqreport.errors import InputError

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
DOC = CORPUS.parent / "docs" / "CORPUS.md"


# The batches in the order they were made: a later batch may add variants of an earlier batch's new family (the
# seventh part's basic-pitch and MTCNN variants), which does not make that family any less new in its own batch.
MADE_IN_ORDER = (SECOND_PART, THIRD_PART, FOURTH_PART, FIFTH_PART, SIXTH_PART, SEVENTH_PART, EIGHTH_PART,
                 NINTH_PART, TENTH_PART, ELEVENTH_PART, TWELFTH_PART, THIRTEENTH_PART, FOURTEENTH_PART,
                 FIFTEENTH_PART, SIXTEENTH_PART, SEVENTEENTH_PART, EIGHTEENTH_PART, NINETEENTH_PART,
                 TWENTIETH_PART, TWENTY_FIRST_PART, TWENTY_SECOND_PART, TWENTY_THIRD_PART, TWENTY_FOURTH_PART,
                 TWENTY_FIFTH_PART, TWENTY_SIXTH_PART, TWENTY_SEVENTH_PART, TWENTY_EIGHTH_PART, TWENTY_NINTH_PART,
                 THIRTIETH_PART, THIRTY_FIRST_PART, THIRTY_SECOND_PART, THIRTY_THIRD_PART, THIRTY_FOURTH_PART,
                 THIRTY_FIFTH_PART, THIRTY_SIXTH_PART, THIRTY_SEVENTH_PART, THIRTY_EIGHTH_PART,
                 THIRTY_NINTH_PART, FORTIETH_PART, FORTY_FIRST_PART)


# Cases relabelled after their part was read, with the cause they were made as (the batch was made with every cause):
# oww_first_conv_int8, cfc_all_convs and fsv_sensitive_int8 were made as sensitive layers; measured unfused they lose
# nothing (scripts/make_corpus_part7.py, scripts/make_corpus_part9.py, scripts/make_corpus_part31.py).
MADE_AS = {"oww_first_conv_int8": 4, "cfc_all_convs": 4, "fsv_sensitive_int8": 4}


def _families_made_before(part: str, labels: dict) -> set[str]:
    """The model families of every case but those of *part* and of the batches made after it."""
    later = MADE_IN_ORDER[MADE_IN_ORDER.index(part):]
    return {label["model"] for label in labels.values() if label.get("added_for") not in later}


# Causes a batch was made without, and why: the thirty-seventh part's over-quantization fault was refused by
# quantize_static and its remaking stopped unfinished for time (corpus/README.md, "Thirty-seventh sealed part").
MADE_WITHOUT = {THIRTY_SEVENTH_PART: {3}}


def _whole_batch_with_a_new_family(part: str, labels: dict, size: int) -> list[str]:
    """The cases labelled *part*, asserting what every later batch holds: at least *size* cases,
    none carrying the first part's seeded mark, every cause 0-5 (but those MADE_WITHOUT names), a model family no batch
    made before it has, and two healthy controls (one per target) for each new family."""
    cases = [c for c, label in labels.items() if label.get("added_for") == part]
    assert len(cases) >= size and not [c for c in cases if labels[c].get("sealed")]
    causes = {MADE_AS.get(c, labels[c]["cause"]["number"]) for c in cases}
    assert causes >= {0, 1, 2, 3, 4, 5} - MADE_WITHOUT.get(part, set())
    assert not causes & MADE_WITHOUT.get(part, set())
    new = {labels[c]["model"] for c in cases} - _families_made_before(part, labels)
    assert new, f"{part} brings no new model family"
    for model in new:
        healthy = [labels[c] for c in cases if labels[c]["model"] == model and labels[c]["healthy"]]
        assert {label.get("target", "tensorrt") for label in healthy} == {"onnxruntime", "tensorrt"}, model
    return cases


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
        assert label["cause"] == {"number": label["cause"]["number"], "name": CAUSES[label["cause"]["number"]]}, case
        assert label["healthy"] == (label["cause"]["number"] == 0)
        assert label["healthy"] or label["expected_rules"] or label.get("pending"), f"{case}: needs expected rules"
    models = {label["model"] for label in labels.values()}
    for model in models:  # at least two healthy controls per model
        assert sum(l["healthy"] for l in labels.values() if l["model"] == model) >= 2, model


def test_corpus_covers_a_cnn_a_detector_and_a_transformer():
    models = " ".join(label["model"] for label in load_labels(CORPUS).values())
    for family in ("MobileNetV3", "DBNet", "transformer", "YOLOX", "CTC", "LSTM"):
        assert family in models, f"no {family} case in corpus/labels.json"


def test_sealed_part_is_the_seeded_selection_and_covers_every_model_and_cause():
    # the cases the first part was drawn from: not those added after sealing, nor the later sealed parts' batches
    labels = {c: label for c, label in load_labels(CORPUS).items()
              if AFTER_SEALING not in str(label.get("added_for", "")) and label.get("added_for") not in LATER_PARTS}
    sealed = sorted(case for case, label in labels.items() if label.get("sealed"))
    assert sealed == select_sealed(labels), "labels.json's sealed marks are not scripts/seal_corpus.py's selection"
    assert 3 * len(sealed) >= len(labels)
    for key in ("model", "cause"):
        value = (lambda label: label[key] if key == "model" else label[key]["number"])
        assert {value(labels[c]) for c in sealed} == {value(label) for label in labels.values()}, key
    new = [c for c, label in labels.items() if label.get("added_for") == NEW_BATCH]
    assert sum(c in new for c in sealed) > len(sealed) / 2, "the sealed part is drawn from the new cases first"


@pytest.mark.slow
def test_docs_show_the_sealed_part_as_the_scorer_computes_it(scores):
    """docs/CORPUS.md's sealed-part totals, wrong rankings and table are what the committed bundles score."""
    sealed = [s for s in scores if s.part == "first"]
    text = DOC.read_text(encoding="utf-8")
    assert totals_markdown(totals(sealed)) in text, "docs/CORPUS.md's sealed totals drifted: rerun corpus_score"
    assert misses_markdown(sealed) in text and table_markdown(sealed) in text


def test_second_sealed_part_is_one_whole_batch_never_in_the_first():
    """The second sealed part is every case labelled SECOND_PART: none carries the first part's seeded mark."""
    labels = load_labels(CORPUS)
    second = [c for c, label in labels.items() if label.get("added_for") == SECOND_PART]
    assert len(second) >= 10 and not [c for c in second if labels[c].get("sealed")]
    assert {labels[c]["cause"]["number"] for c in second} >= {0, 1, 2, 3, 4, 5}


@pytest.mark.slow
def test_docs_show_the_second_sealed_part_as_the_scorer_computes_it(scores):
    """docs/CORPUS.md's second-part totals, wrong rankings and table are what the committed bundles score."""
    second = [s for s in scores if s.part == "second"]
    text = DOC.read_text(encoding="utf-8")
    assert totals_markdown(totals(second)) in text, "docs/CORPUS.md's second-part totals drifted: rerun corpus_score"
    assert misses_markdown(second) in text and table_markdown(second) in text


def test_third_sealed_part_is_one_whole_batch_with_a_new_family():
    """The third sealed part is every case labelled THIRD_PART: none carries the first part's seeded mark, it holds
    every cause 0-5 and a model family no earlier case has, with two healthy controls (onnxruntime and tensorrt)."""
    labels = load_labels(CORPUS)
    _whole_batch_with_a_new_family(THIRD_PART, labels, 10)


@pytest.mark.slow
def test_docs_show_the_third_sealed_part_as_the_scorer_computes_it(scores):
    """docs/CORPUS.md's third-part totals are what the committed bundles score, once the lead has scored the part
    (its one scoring run writes the section; before that the page has none); its rows stay off the page."""
    third = [s for s in scores if s.part == "third"]
    text = DOC.read_text(encoding="utf-8")
    if "## Third sealed part (" not in text:
        pytest.skip("the third sealed part is not scored yet: docs/CORPUS.md has no section for it")
    assert totals_markdown(totals(third)) in text, "docs/CORPUS.md's third-part totals drifted: rerun corpus_score"
    # Read after its one sealed score (2026-11-24, session 20): the page shows its rows, and its title keeps that score.
    assert misses_markdown(third) in text and table_markdown(third) in text
    assert "scored once while sealed, at c8e5fc3: first-ranked 9/13" in text


def test_fourth_sealed_part_is_one_whole_batch_with_a_new_family():
    """The fourth sealed part is every case labelled FOURTH_PART: none carries the first part's seeded mark, it holds
    every cause 0-5, a model family no earlier case has, and two healthy controls (one per target) for each of its
    families, with the "before" totals on record in docs/CORPUS.md's kept part."""
    labels = load_labels(CORPUS)
    fourth = _whole_batch_with_a_new_family(FOURTH_PART, labels, 16)
    for model in {labels[c]["model"] for c in fourth}:  # every family of this batch, not only the new ones
        healthy = [labels[c] for c in fourth if labels[c]["model"] == model and labels[c]["healthy"]]
        assert {label.get("target", "tensorrt") for label in healthy} == {"onnxruntime", "tensorrt"}, model
    assert "measured:" in " ".join(labels[c]["how"] for c in fourth)
    text = DOC.read_text(encoding="utf-8")
    assert "## Fourth sealed part — before" in text and "f1e77c0" in text


@pytest.mark.slow
@pytest.mark.parametrize("part, ordinal, history", [
    (FOURTH_PART, "fourth", ['at f1e77c0: first-ranked 6/12, within three 9/12', 'at 32cefed: 7/12, 10/12, 0/7']),
    (FIFTH_PART, "fifth", ['at 9d28983, and after them, at a8f0e46: both times first-ranked 8/14']),
    (SIXTH_PART, "sixth", ['at 455b96c, and after them, at e10e087: both times first-ranked 10/12']),
    (SEVENTH_PART, "seventh", ['at 32cefed: first-ranked 8/10, within three 8/10']),
    (EIGHTH_PART, "eighth", ['at 67f6631: first-ranked 1/10, within three 4/10, healthy controls with an error 3/5']),
    (NINTH_PART, "ninth", ['at eb9f28f: first-ranked 5/7, within three 7/7, healthy controls with an error 0/5']),
    (TENTH_PART, "tenth", ['at 66e4f04: first-ranked 7/9, within three 8/9', 'at 5a59b7f: 8/9, 8/9, 0/4']),
    (ELEVENTH_PART, "eleventh", ['at 5ad6f45: first-ranked 6/9, within three 8/9', 'at f88ca0c: the same']),
    (TWELFTH_PART, "twelfth", ['at d415b77: first-ranked 3/9, within three 5/9', 'at 1cf6a97: the same']),
    (THIRTEENTH_PART, "thirteenth", ['at 5c7079f: first-ranked 5/6, within three 5/6', 'at b159f5f: the same']),
    (FOURTEENTH_PART, "fourteenth", ['at b791512: first-ranked 6/9, within three 6/9', 'at 5ced7f3: 4/9, 6/9, 0/3']),
    (FIFTEENTH_PART, "fifteenth", ['at 5ced7f3: first-ranked 4/5, within three 4/5', 'at 958078a: the same']),
    (SIXTEENTH_PART, "sixteenth", ['at 958078a: first-ranked 6/7, within three 6/7', 'at 5687696: the same']),
    (SEVENTEENTH_PART, "seventeenth", ['at e602fb0: first-ranked 3/5, within three 3/5', 'at f3f998f: the same']),
    (EIGHTEENTH_PART, "eighteenth", ['at f3f998f: first-ranked 2/5, within three 2/5', 'at 7ab2bbb: the same']),
    (NINETEENTH_PART, "nineteenth", ['at 7ab2bbb: first-ranked 3/5, within three 3/5', 'at 708387e: the same']),
    (TWENTIETH_PART, "twentieth", ['at 708387e: first-ranked 4/7, within three 5/7', 'at 478c5b8: the same']),
    (TWENTY_FIRST_PART, "twenty-first", ['at 478c5b8: first-ranked 4/9, within three 8/9', 'at 8ea1ebe: the same']),
    (TWENTY_SECOND_PART, "twenty-second", ['at 6387124: first-ranked 7/8, within three 7/8', 'at ce0a0f9: the same']),
    (TWENTY_THIRD_PART, "twenty-third", ['at ce0a0f9: first-ranked 4/4, within three 4/4', 'at 6509a78: the same']),
    (TWENTY_FOURTH_PART, "twenty-fourth", ['at 6509a78: first-ranked 7/7, within three 7/7', 'at fe7ff4c: the same']),
    (TWENTY_SIXTH_PART, "twenty-sixth", ['at b0cecab: first-ranked 6/7, within three 6/7', 'at 6702737: the same']),
    (TWENTY_FIFTH_PART, "twenty-fifth", ['at b0cecab: first-ranked 6/7, within three 6/7', 'at 265c840: the same']),
    (TWENTY_SEVENTH_PART, "twenty-seventh", ['at d128fdf: first-ranked 5/8, within three 6/8',
                                             'at 265c840: the same']),
    (TWENTY_EIGHTH_PART, "twenty-eighth", ['at 1536cd2: first-ranked 5/5, within three 5/5', 'at 437ae9c: the same',
                                           'at 220814e: the same']),
    (TWENTY_NINTH_PART, "twenty-ninth", ['at 931fb71: first-ranked 5/7, within three 5/7', 'at 0bc8555: the same',
                                         'a3def9a: the same']),
    (THIRTIETH_PART, "thirtieth", ['at a3def9a: first-ranked 8/8, within three 8/8', 'at 045b73c: the same']),
    (THIRTY_FIRST_PART, "thirty-first", ['at 4f2c4c9: first-ranked 3/7, within three 6/7', 'at 793152c: the same']),
    (THIRTY_FIFTH_PART, "thirty-fifth", ['at d7ff478: first-ranked 2/4, within three 3/4', 'at e636946', 'the same']),
    (THIRTY_SIXTH_PART, "thirty-sixth", ['at e636946: first-ranked 5/7, within three 5/7', 'at 461387d',
                                         'then read (2026-11-28, session 40)']),
    (THIRTY_SEVENTH_PART, "thirty-seventh", ['at f013e64: first-ranked 1/5, within three 4/5', '69602fe',
                                             'then read (2026-11-28, session 41)']),
    (THIRTY_EIGHTH_PART, "thirty-eighth", ['at 69602fe: first-ranked 5/6, within three 5/6', 'be6fc24',
                                           'then read (2026-11-28, session 42)']),
    (THIRTY_NINTH_PART, "thirty-ninth", ['at f3387a1: first-ranked 4/4, within three 4/4', '5c5bca9',
                                         'then read (2026-11-28, session 43)']),
    (FORTIETH_PART, "fortieth", ['at 5c5bca9: first-ranked 2/5, within three 4/5', '698a5ae',
                                 'then read (2026-11-28, session 44)']),
])
def test_docs_show_a_read_sealed_part_as_the_scorer_computes_it(scores, part, ordinal, history):
    """docs/CORPUS.md's totals and rows of each part read after its sealed scores are what the committed bundles
    score (the page shows its rows), and its title keeps the scores it had while sealed."""
    from corpus_score import STILL_SEALED

    assert part not in STILL_SEALED and part in LATER_PARTS
    read = [s for s in scores if s.part == ordinal]
    text = DOC.read_text(encoding="utf-8")
    assert totals_markdown(totals(read)) in text, f"docs/CORPUS.md's {ordinal}-part totals drifted: rerun corpus_score"
    assert misses_markdown(read) in text and table_markdown(read) in text
    assert all(words in text for words in history)


@pytest.mark.parametrize("part, size, heading, commit", [(FIFTH_PART, 14, "Fifth", "9d28983"),
                                                         (SIXTH_PART, 15, "Sixth", "455b96c"),
                                                         (SEVENTH_PART, 15, "Seventh", "32cefed"),
                                                         (EIGHTH_PART, 15, "Eighth", "67f6631"),
                                                         (NINTH_PART, 12, "Ninth", "eb9f28f"),
                                                         (TENTH_PART, 13, "Tenth", "66e4f04"),
                                                         (ELEVENTH_PART, 12, "Eleventh", "5ad6f45"),
                                                         (TWELFTH_PART, 12, "Twelfth", "d415b77"),
                                                         (THIRTEENTH_PART, 12, "Thirteenth", "5c7079f"),
                                                         (FOURTEENTH_PART, 12, "Fourteenth", "b791512"),
                                                         (FIFTEENTH_PART, 12, "Fifteenth", "5ced7f3"),
                                                         (SIXTEENTH_PART, 12, "Sixteenth", "958078a"),
                                                         (SEVENTEENTH_PART, 12, "Seventeenth", "e602fb0"),
                                                         (EIGHTEENTH_PART, 12, "Eighteenth", "f3f998f"),
                                                         (NINETEENTH_PART, 12, "Nineteenth", "7ab2bbb"),
                                                         (TWENTIETH_PART, 12, "Twentieth", "708387e"),
                                                         (TWENTY_FIRST_PART, 12, "Twenty-first", "478c5b8"),
                                                         (TWENTY_SECOND_PART, 12, "Twenty-second", "6387124"),
                                                         (TWENTY_THIRD_PART, 12, "Twenty-third", "ce0a0f9"),
                                                         (TWENTY_FOURTH_PART, 12, "Twenty-fourth", "6509a78"),
                                                         (TWENTY_FIFTH_PART, 12, "Twenty-fifth", "b0cecab"),
                                                         (TWENTY_SIXTH_PART, 12, "Twenty-sixth", "b0cecab"),
                                                         (TWENTY_SEVENTH_PART, 12, "Twenty-seventh", "d128fdf"),
                                                         (TWENTY_EIGHTH_PART, 12, "Twenty-eighth", "1536cd2"),
                                                         (TWENTY_NINTH_PART, 12, "Twenty-ninth", "931fb71"),
                                                         (THIRTIETH_PART, 12, "Thirtieth", "a3def9a"),
                                                         (THIRTY_FIRST_PART, 12, "Thirty-first", "4f2c4c9"),
                                                         (THIRTY_SECOND_PART, 12, "Thirty-second", "793152c"),
                                                         (THIRTY_THIRD_PART, 12, "Thirty-third", "793152c"),
                                                         (THIRTY_FOURTH_PART, 12, "Thirty-fourth", "d498cb4"),
                                                         (THIRTY_FIFTH_PART, 12, "Thirty-fifth", "d7ff478"),
                                                         (THIRTY_SIXTH_PART, 12, "Thirty-sixth", "e636946"),
                                                         (THIRTY_SEVENTH_PART, 7, "Thirty-seventh", "f013e64"),
                                                         (THIRTY_EIGHTH_PART, 10, "Thirty-eighth", "69602fe"),
                                                         (THIRTY_NINTH_PART, 10, "Thirty-ninth", "f3387a1"),
                                                         (FORTIETH_PART, 10, "Fortieth", "5c5bca9"),
                                                         (FORTY_FIRST_PART, 10, "Forty-first", "698a5ae")])
def test_later_sealed_part_is_one_whole_batch_with_a_new_family(part, size, heading, commit):
    """The fifth to forty-first sealed parts are each every case labelled with the part: none carries the first
    part's seeded mark, each holds every cause 0-5 (the thirty-seventh all but 3: MADE_WITHOUT), a model family no
    earlier case has, two healthy controls (one per target) for each new family, every label says what was measured,
    and its "before" totals (on the rules of *commit*) are on record in docs/CORPUS.md."""
    labels = load_labels(CORPUS)
    cases = _whole_batch_with_a_new_family(part, labels, size)
    assert all("measured:" in labels[c]["how"] for c in cases)
    text = DOC.read_text(encoding="utf-8")
    assert f"## {heading} sealed part — before" in text and commit in text


@pytest.mark.slow
# Every part held out now: the forty-first (the thirty-first was read in session 36, the thirty-second and the
# thirty-fourth in session 37, the thirty-third in session 38, the thirty-fifth in session 39, the thirty-sixth in
# session 40, the thirty-seventh in session 41, the thirty-eighth in session 42, the thirty-ninth in session 43, the
# fortieth in session 44).
@pytest.mark.parametrize(("part", "ordinal", "heading", "size"),
                         [(FORTY_FIRST_PART, "forty-first", "Forty-first", 10)])
def test_docs_show_a_held_out_sealed_part_as_held_out(scores, part, ordinal, heading, size):
    """A held-out part (sealed for the next round of rule changes): neither totals nor rows are on the generated page
    (a page regenerated after each rule change would otherwise show its totals moving); its "before" is in the kept
    part."""
    from corpus_score import KEPT_MARKER, STILL_SEALED

    assert part in STILL_SEALED and part in LATER_PARTS
    held = [s for s in scores if s.part == ordinal]
    assert len(held) == size
    text = DOC.read_text(encoding="utf-8")
    generated = text[:text.index(KEPT_MARKER)]
    assert f"## {heading} sealed part ({size} cases" in generated
    # A totals table names no part, and another part's may read the same: its own section must not hold it.
    own = generated[generated.index(f"## {heading} sealed part ({size} cases"):]
    own = own[:own.index("\n## ")]
    assert totals_markdown(totals(held)) not in own and "| measure |" not in own
    assert table_markdown(held) not in text
    assert not [s.case for s in held if f"\n| {s.case} |" in text], f"a {ordinal}-part row is on the page"


def test_harmless_faults_are_scored_as_controls_with_the_earlier_totals_beside():
    """HARMLESS_POLICY on the read eleventh part: its harmless faults leave the first-ranked totals, an error finding
    on one would count as a false alarm, and the line under the totals keeps the count as faults."""
    from corpus_score import as_faults_line, harmless_reason, score_case

    labels = load_labels(CORPUS)
    harmless = sorted(c for c, l in labels.items() if l.get("harmless"))
    assert harmless and all(labels[c]["cause"]["number"] in (1, 2, 3, 4) for c in harmless)
    scored = [score_case(CORPUS, c, labels[c]) for c in harmless]
    t = totals(scored)
    assert (t.faulty, t.harmless, t.harmless_with_errors) == (0, len(harmless), sum(s.errors > 0 for s in scored))
    assert f"first-ranked {sum(s.top1 for s in scored)}/{len(scored)}" in as_faults_line(scored)
    with pytest.raises(InputError, match="only faults of causes 1-4"):
        harmless_reason("x", {"healthy": False, "cause": {"number": 5}, "harmless": "0 flips"})


def test_healthy_controls_with_a_warning_are_counted_apart_from_errors():
    """The read fourteenth part's healthy controls (waifu2x): a round's new line once gave all three a QR006 warning
    ranked first while 'healthy controls with an error' stayed 0/3. The warning count shows such a round, ungated."""
    from corpus_score import score_case

    labels = load_labels(CORPUS)
    healthy = sorted(c for c, l in labels.items() if l.get("healthy") and l.get("added_for") == FOURTEENTH_PART)
    scored = [score_case(CORPUS, c, labels[c]) for c in healthy]
    t = totals(scored)
    assert t.healthy == len(healthy) == 3 and t.healthy_with_warnings == sum(s.warnings > 0 for s in scored)
    warned = [dataclasses.replace(s, warnings=1) for s in scored]
    assert totals(warned).healthy_with_warnings == 3 and totals(warned).healthy_with_errors == t.healthy_with_errors
    assert "| healthy controls with a warning | 3/3 | not gated | |" in totals_markdown(totals(warned))


def test_manifests_record_no_machine_paths():
    """make_corpus.py collects from the repository root: models, inputs and -o are relative paths."""
    for case in load_labels(CORPUS):
        manifest = json.loads((CORPUS / case / "manifest.json").read_text(encoding="utf-8"))
        given = [*manifest["collector"]["argv"], *(m["path"] for m in manifest["models"].values()),
                 *(i["source"] for i in manifest["inputs"].values() if i and i.get("source"))]
        assert not [p for p in given if Path(p).is_absolute()], f"{case}: absolute path in its manifest"


@pytest.mark.slow
def test_markdown_keeps_the_hand_written_part(tmp_path):
    from corpus_score import KEPT_MARKER, main

    report = tmp_path / "CORPUS.md"
    report.write_text(f"old table\n{KEPT_MARKER}\n## Held-out before tuning\n| dated | result |\n", encoding="utf-8")
    main([str(CORPUS), "--markdown", str(report)])
    text = report.read_text(encoding="utf-8")
    assert "old table" not in text and "## Sealed part (" in text and "## Tuned part (" in text
    assert "## Second sealed part (" in text and "## Third sealed part (" in text
    assert "## Fourth sealed part (" in text and "## Fifth sealed part (" in text
    assert "## Sixth sealed part (" in text and "## Seventh sealed part (" in text
    assert "## Eighth sealed part (" in text and "## Ninth sealed part (" in text
    assert text.endswith(f"{KEPT_MARKER}\n## Held-out before tuning\n| dated | result |\n")


@pytest.mark.slow
def test_ranking_meets_the_targets_on_the_tuned_original_cases(scores):
    """Today's targets on the cases the rules were tuned on (the sealed part and the issue-10 cases are measured
    in docs/CORPUS.md, not held to the targets until the rule work for issue 10)."""
    labels = load_labels(CORPUS)
    original = [s for s in scores if s.tuned and labels[s.case].get("added_for") != NEW_BATCH]
    assert len(original) >= 25
    result = totals(original)
    assert result.rule_failures == 0, _table(original)
    assert result.top1_share >= TOP1_TARGET, "first-ranked finding misses the cause too often:" + _table(original)
    assert result.top3 == result.faulty, "a cause fell out of the first three findings:" + _table(original)
    assert result.healthy_with_errors == 0, "a healthy control has an error-severity finding:" + _table(original)


@pytest.mark.slow
def test_scorer_counts_a_miss(scores):
    """The scorer itself can fail: relabelling a case with a rule that never fires drops it out of the top three."""
    case = next(s for s in scores if not s.healthy)
    from corpus_score import score_case

    wrong = score_case(CORPUS, case.case, {**load_labels(CORPUS)[case.case], "expected_rules": ["QR999"]})
    assert wrong.rank is None and not wrong.top3


def test_every_case_is_judged_for_the_runtime_its_recipe_was_made_for():
    """scripts/label_targets.py's rule holds on every label: a QDQ model with int32 bias DequantizeLinear nodes
    (onnxruntime's quantize_static recipe) is judged --target onnxruntime, unless its cause is what TensorRT will not
    honour (5), which is judged for TensorRT; and the rule has cases of both kinds to hold on."""
    import label_targets

    labels = load_labels(CORPUS)
    assert label_targets.apply(json.loads(json.dumps(labels)), CORPUS) == 0, "run python scripts/label_targets.py"
    with_bias = {c for c in labels if label_targets.has_int32_bias(CORPUS / c)}
    assert {labels[c].get("target", "tensorrt") for c in with_bias} == {"onnxruntime", "tensorrt"}
    assert all(labels[c].get("target", "tensorrt") == "tensorrt" for c in with_bias
               if labels[c]["cause"]["number"] == label_targets.TENSORRT_CAUSE)


def test_a_sealed_part_missing_from_parts_is_refused_not_scored_as_tuned():
    """Labels of a new part merged before its PARTS entry would be scored as tuned data and their rows printed."""
    from corpus_score import part_of



    with pytest.raises(InputError, match=r"'sealed part 99 \(2026-12-01\)' names no part in .*PARTS; register it"):
        part_of({"added_for": "sealed part 99 (2026-12-01)"})
    assert part_of({"added_for": NINTH_PART}) == "ninth" and part_of({}) == ""
