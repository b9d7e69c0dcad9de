"""Measure how well the rules rank the known cause of each case of a labelled corpus.

    python scripts/corpus_score.py corpus/ [--markdown docs/CORPUS.md]

A corpus is a folder of bundles (one sub-folder or .zip per case) and a labels.json:
case -> {"model", "cause": {"number", "name"}, "expected_rules": [...], "healthy": bool, "how"}, and
optionally "target": the runtime the case's model was quantized for ("tensorrt" when absent, as
`qdqreport report --target`). It is a label of the case, not a tuning knob: a model made with
onnxruntime's quantize_static (ONNX Runtime's own recipe) is healthy *for ONNX Runtime*, so its
healthy control is scored with target onnxruntime, as its user would run the report; cases about
what TensorRT will not honour (cause 5) keep target tensorrt.
Each bundle is read and its findings computed by the real rules (the same engine as `qdqreport
report`), in rank order (findings.rank_findings: findings.json's order; the report shows the same order,
with deployment findings, what only TensorRT rejects, in their own section, drawn first when one of
them ranks first). A faulty case scores on the rank of the first
finding whose rule is expected; a healthy control must have no error-severity finding. A case
labelled "pending" (a cause no rule can name yet) is listed but left out of the totals. Cases
labelled "sealed": true (chosen once by select_sealed's fixed seed, before any rule was tuned on
them) are scored and reported apart from the tuned part, so tuning can be judged on cases it never
saw; the cases whose "added_for" is SECOND_PART (a later batch, all sealed) are a second part, and those whose
"added_for" is THIRD_PART (a batch made while the second part's results drove rule changes) a third, and those whose
"added_for" is FOURTH_PART (a batch scored once before and once after a session's rule changes) a fourth, and those
whose "added_for" is FIFTH_PART (the same, a session later) a fifth, and those whose "added_for" is SIXTH_PART (the
same, made for the next round) a sixth, each reported apart too. Only the tuned part's
rows are printed unless --show-sealed is given. With --markdown, whatever follows KEPT_MARKER in the existing file
(hand-written, dated results such as a held-out test) is kept below the regenerated part.
A developer tool (not in the wheel); needs only the core install (no ONNX, no ONNX Runtime).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from qdqreport.analysis.context import Context
from qdqreport.analysis.target import TARGETS
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.errors import InputError, QdqReportError
from qdqreport.rules import discover

TOP1_TARGET = 0.9  # share of faulty cases whose first finding names the cause
TOP3_TARGET = 1.0  # share whose cause is among the first three findings
COMMAND = "python scripts/corpus_score.py corpus/ --markdown docs/CORPUS.md"
SEAL_SEED = 20261123  # fixed once, when the sealed part was drawn (issue 10); never changed to reshuffle
NEW_BATCH = "issue 10"  # labels' "added_for" of the cases the rules had never seen when the part was sealed
# Cases added after the part was sealed carry this in their "added_for": they never enter the draw, so
# adding one does not change which cases are sealed.
AFTER_SEALING = "after sealing"
# The second sealed part: a whole batch of cases made on 2026-11-24 after the first part had been scored twice
# (so it was no longer held out), by an engineer who never ran the rules on them. Every case of the batch is
# sealed (no draw): it is scored once before and once after the session's rule changes, reported apart.
SECOND_PART = "sealed part 2 (2026-11-24)"
# The third sealed part: a batch made on 2026-11-24 while the rules were being changed on the second part's results
# (so the second part was no longer held out), by an engineer who never ran the rules or the scorer on it. Every case
# of the batch is sealed (no draw): it is scored once, after the rule changes, and reported apart.
THIRD_PART = "sealed part 3 (2026-11-24)"
# The fourth sealed part: a batch made on 2026-11-24 (a new family, basic-pitch, and new variants of two others) by an
# engineer who never ran the rules or a report on it. Every case of the batch is sealed (no draw): it was scored once
# "before", on the rules of commit f1e77c0 (docs/CORPUS.md's kept part, totals only), and is scored once "after" the
# session's rule changes, reported apart, its rows withheld (STILL_SEALED).
FOURTH_PART = "sealed part 4 (2026-11-24)"
# The fifth sealed part: a batch made on 2026-11-24 (session 21; a new family, MTCNN's ONet face stage, and new variants
# of the VAD and the captcha reader) by an engineer who never ran the rules or a report on it. Every case of the batch
# is sealed (no draw): it was scored once "before" the session's rule changes, on the rules of commit 9d28983
# (docs/CORPUS.md's kept part, totals only), and is scored "after" them, reported apart, its rows withheld
# (STILL_SEALED).
FIFTH_PART = "sealed part 5 (2026-11-24)"
# The sixth sealed part: a batch made on 2026-11-24 (a new family, the RivaGAN watermark decoder of
# invisible-watermark, and new variants of the PP-OCR recogniser) by an engineer who never ran the rules or a report on
# it. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the
# rules of commit 455b96c (docs/CORPUS.md's kept part, totals only), and is to be scored "after" them, reported apart,
# its rows withheld (STILL_SEALED).
SIXTH_PART = "sealed part 6 (2026-11-24)"
# A development part: a batch made on 2026-11-24 (session 21; a new family, DNSMOS) to play the new user on and tune on.
# Never sealed: its cases are in the tuned part (read), and kept out of the first part's draw like the later parts.
DEV_PART = "development part (2026-11-24, session 21): read"
LATER_PARTS = (SECOND_PART, THIRD_PART, FOURTH_PART, FIFTH_PART, SIXTH_PART, DEV_PART)  # whole batches kept out of the first draw


@dataclass(frozen=True)
class CaseScore:
    case: str
    cause: str
    healthy: bool
    expected: tuple[str, ...]
    ranking: tuple[str, ...]  # "QR003 error" for each finding, in report order
    first: str  # the first finding: rule, severity and title
    rank: int | None  # 1-based rank of the first expected finding; None when absent
    errors: int  # error-severity findings
    rule_failures: tuple[str, ...]
    pending: str = ""  # a cause no rule can name yet: shown in the table, left out of the totals
    sealed: bool = False  # in the first sealed part (SEAL_SEED's draw): scored apart, not to be tuned on
    sealed_2: bool = False  # in the second sealed part (SECOND_PART's batch): scored apart, never tuned on
    sealed_3: bool = False  # in the third sealed part (THIRD_PART's batch): scored apart, never tuned on
    sealed_4: bool = False  # in the fourth sealed part (FOURTH_PART's batch): scored apart, never tuned on
    sealed_5: bool = False  # in the fifth sealed part (FIFTH_PART's batch): scored apart, never tuned on
    sealed_6: bool = False  # in the sixth sealed part (SIXTH_PART's batch): scored apart, never tuned on

    @property
    def tuned(self) -> bool:
        return not (self.sealed or self.sealed_2 or self.sealed_3 or self.sealed_4 or self.sealed_5
                    or self.sealed_6)

    @property
    def top1(self) -> bool:
        return self.rank == 1

    @property
    def top3(self) -> bool:
        return self.rank is not None and self.rank <= 3

    @property
    def passed(self) -> bool:
        return (self.errors == 0 if self.healthy else self.top1) and not self.rule_failures


@dataclass(frozen=True)
class Totals:
    faulty: int
    top1: int
    top3: int
    healthy: int
    healthy_with_errors: int
    rule_failures: int

    @property
    def top1_share(self) -> float:
        return self.top1 / self.faulty if self.faulty else 1.0

    @property
    def top3_share(self) -> float:
        return self.top3 / self.faulty if self.faulty else 1.0

    @property
    def met(self) -> bool:
        return (self.top1_share >= TOP1_TARGET and self.top3_share >= TOP3_TARGET
                and self.healthy_with_errors == 0 and self.rule_failures == 0)


def load_labels(corpus: Path) -> dict[str, dict]:
    path = corpus / "labels.json"
    if not path.is_file():
        raise InputError(f"{path}: no labels.json; a corpus folder holds one bundle per case and labels.json "
                         "(scripts/make_corpus.py writes both)")
    return json.loads(path.read_text(encoding="utf-8"))


def score_case(corpus: Path, case: str, label: dict) -> CaseScore:
    bundle_path = corpus / case if (corpus / case).is_dir() else corpus / f"{case}.zip"
    if not bundle_path.exists():
        raise InputError(f"{corpus / case}: labels.json names case {case!r} but its bundle is missing; "
                         "regenerate it with scripts/make_corpus.py --only " + case)
    target = label.get("target")
    if target is not None and target not in TARGETS:
        raise InputError(f"{corpus / 'labels.json'}: case {case!r} has target {target!r}; give one of "
                         f"{', '.join(TARGETS)} or leave it out (tensorrt)")
    result = run_rules(Context(Bundle(bundle_path), target=target), discover())
    findings = result.findings
    expected = tuple(label.get("expected_rules", ()))
    rank = next((i + 1 for i, f in enumerate(findings) if f.rule_id in expected), None)
    first = f"{findings[0].rule_id} {findings[0].severity}: {findings[0].title}" if findings else "(no findings)"
    cause = label["cause"]
    return CaseScore(case=case, cause=f"{cause['number']} {cause['name']}", healthy=bool(label.get("healthy")),
                     expected=expected, ranking=tuple(f"{f.rule_id} {f.severity}" for f in findings), first=first,
                     rank=rank, errors=sum(f.severity == "error" for f in findings),
                     rule_failures=tuple(f"{r.rule_id}: {r.message}" for r in result.failures),
                     pending=label.get("pending", ""), sealed=bool(label.get("sealed")),
                     sealed_2=label.get("added_for") == SECOND_PART,
                     sealed_3=label.get("added_for") == THIRD_PART,
                     sealed_4=label.get("added_for") == FOURTH_PART,
                     sealed_5=label.get("added_for") == FIFTH_PART,
                     sealed_6=label.get("added_for") == SIXTH_PART)


def score_corpus(corpus: Path) -> list[CaseScore]:
    labels = load_labels(corpus)
    return [score_case(corpus, case, labels[case]) for case in sorted(labels)]


def select_sealed(labels: dict[str, dict], seed: int = SEAL_SEED) -> list[str]:
    """The sealed part, by a fixed procedure (docs/CORPUS.md, "The sealed part"):

    1. from the new cases (added_for == NEW_BATCH), one per (model, cause), drawn by the seed;
    2. for each cause still absent, one tuned-on case of it, drawn by the seed, from a model not yet
       in the part where there is one; 3. for each model still absent, one of its cases, drawn by the
       seed; 4. more new cases, in the seed's order, until the part holds at least a third of all cases.
    Every draw shuffles the sorted candidates with one random.Random(seed), so the result depends only
    on labels.json and the seed.
    """
    labels = {c: l for c, l in labels.items()
              if AFTER_SEALING not in str(l.get("added_for", "")) and l.get("added_for") not in LATER_PARTS}
    rng = random.Random(seed)
    new = sorted(c for c, l in labels.items() if l.get("added_for") == NEW_BATCH)
    old = sorted(c for c in labels if c not in new)
    chosen: list[str] = []

    def draw(candidates: list[str]) -> None:
        if candidates:
            chosen.append(rng.sample(sorted(candidates), 1)[0])

    groups = sorted({(labels[c]["model"], labels[c]["cause"]["number"]) for c in new})
    for model, cause in groups:
        draw([c for c in new if (labels[c]["model"], labels[c]["cause"]["number"]) == (model, cause)])
    for cause in sorted({labels[c]["cause"]["number"] for c in labels}):
        if cause not in {labels[c]["cause"]["number"] for c in chosen}:
            of_cause = [c for c in old if labels[c]["cause"]["number"] == cause]
            models_in = {labels[c]["model"] for c in chosen}
            draw([c for c in of_cause if labels[c]["model"] not in models_in] or of_cause)
    for model in sorted({labels[c]["model"] for c in labels}):
        if model not in {labels[c]["model"] for c in chosen}:
            draw([c for c in labels if labels[c]["model"] == model])
    rest = rng.sample([c for c in new if c not in chosen], len([c for c in new if c not in chosen]))
    while len(chosen) < math.ceil(len(labels) / 3) and rest:
        chosen.append(rest.pop(0))
    return sorted(chosen)


def totals(scores: Sequence[CaseScore]) -> Totals:
    faulty = [s for s in scores if not s.healthy and not s.pending]
    healthy = [s for s in scores if s.healthy]
    return Totals(faulty=len(faulty), top1=sum(s.top1 for s in faulty), top3=sum(s.top3 for s in faulty),
                  healthy=len(healthy), healthy_with_errors=sum(s.errors > 0 for s in healthy),
                  rule_failures=sum(len(s.rule_failures) for s in scores))


def table_markdown(scores: Sequence[CaseScore]) -> str:
    lines = ["| case | cause | expected | first-ranked finding | rank of expected | top-1 | top-3 | "
             "errors (healthy) | ranking |", "|---|---|---|---|---|---|---|---|---|"]
    for s in scores:
        mark = (lambda ok: "✓" if ok else "✗")
        lines.append("| " + " | ".join([
            s.case, s.cause, ", ".join(s.expected) or "—", s.first.replace("|", "\\|"),
            "—" if s.healthy else "pending" if s.pending else (str(s.rank) if s.rank else "absent"),
            "—" if s.healthy or s.pending else mark(s.top1), "—" if s.healthy or s.pending else mark(s.top3),
            (f"{s.errors} {mark(s.errors == 0)}" if s.healthy else str(s.errors)),
            ", ".join(s.ranking) or "—"]) + " |")
    return "\n".join(lines) + "\n"


def totals_markdown(t: Totals) -> str:
    def verdict(ok: bool) -> str:
        return "met" if ok else "**missed**"
    return (f"| measure | value | target | |\n|---|---|---|---|\n"
            f"| first-ranked finding names the cause | {t.top1}/{t.faulty} ({t.top1_share:.0%}) | ≥ {TOP1_TARGET:.0%} | "
            f"{verdict(t.top1_share >= TOP1_TARGET)} |\n"
            f"| cause within the first three | {t.top3}/{t.faulty} ({t.top3_share:.0%}) | {TOP3_TARGET:.0%} | "
            f"{verdict(t.top3_share >= TOP3_TARGET)} |\n"
            f"| healthy controls with an error finding | {t.healthy_with_errors}/{t.healthy} | 0 | "
            f"{verdict(t.healthy_with_errors == 0)} |\n"
            f"| rules that crashed | {t.rule_failures} | 0 | {verdict(t.rule_failures == 0)} |\n")


def misses_markdown(scores: Sequence[CaseScore]) -> str:
    """One line per wrong ranking: a faulty case whose cause is not first, a healthy control with an error."""
    lines = []
    for s in scores:
        if s.pending:
            continue
        if s.healthy and s.errors:
            lines.append(f"- `{s.case}` (healthy): {s.errors} error finding(s); first: {s.first}")
        elif not s.healthy and not s.top1:
            where = f"ranked {s.rank}" if s.rank else "absent"
            lines.append(f"- `{s.case}` ({s.cause}): expected {', '.join(s.expected)} ({where}); first: {s.first}")
    lines += [f"- `{s.case}`: rule crashed: {failure}" for s in scores for failure in s.rule_failures]
    return "\n".join(lines or ["- none"]) + "\n"


# A part whose rows nobody has read yet: the page shows its totals only, so that it stays a held-out measure
# for the next round of rule work (`--show-sealed` prints its rows to whoever decides to spend it).
# The third part was read on 2026-11-24 (session 20) after its one sealed score, the fifth on 2026-11-24 (session 21)
# after its before and after scores; the fourth and the sixth are still held out.
STILL_SEALED: tuple[str, ...] = (FOURTH_PART, SIXTH_PART)
WITHHELD = ("Rows withheld: this part has been scored but not read, and stays sealed for the next round of rule "
            "work; `--show-sealed` prints them (reading them spends the part).\n")


def part_markdown(title: str, scores: Sequence[CaseScore], rows: bool = True) -> str:
    if not rows:
        return f"## {title}: totals\n\n{totals_markdown(totals(scores))}\n{WITHHELD}\n"
    return (f"## {title}: totals\n\n{totals_markdown(totals(scores))}\n"
            f"Wrong rankings:\n\n{misses_markdown(scores)}\n"
            f"## {title}: case by case\n\n{table_markdown(scores)}\n")


def report_markdown(scores: Sequence[CaseScore], labels: dict[str, dict], today: str | None = None) -> str:
    """docs/CORPUS.md: the date, the command, the sealed and tuned parts' totals and tables, how each case was made."""
    today = today or _dt.date.today().isoformat()
    how = "\n".join(f"- `{case}` ({labels[case]['model']}): {labels[case]['how']}"
                    + (f" — pending: {labels[case]['pending']}" if labels[case].get("pending") else "")
                    for case in sorted(labels))
    sealed, tuned = [s for s in scores if s.sealed], [s for s in scores if s.tuned]
    second, third = [s for s in scores if s.sealed_2], [s for s in scores if s.sealed_3]
    fourth, fifth = [s for s in scores if s.sealed_4], [s for s in scores if s.sealed_5]
    sixth = [s for s in scores if s.sealed_6]
    parts = part_markdown(f"Sixth sealed part ({len(sixth)} cases, made 2026-11-24 before the next round of rule "
                          "changes and scored before it at 455b96c, totals in the kept section below; never read, "
                          "never tuned on)", sixth, rows=SIXTH_PART not in STILL_SEALED) if sixth else ""
    parts += part_markdown(f"Fifth sealed part ({len(fifth)} cases; scored while sealed before the rule changes of "
                          "2026-11-24 (session 21), at 9d28983, and after them, at a8f0e46: both times first-ranked "
                          "8/14, within three 10/14, healthy controls with an error 2/3; then read and tuned on: no "
                          "longer held out)",
                          fifth, rows=FIFTH_PART not in STILL_SEALED) if fifth else ""
    parts += part_markdown(f"Fourth sealed part ({len(fourth)} cases, made before the rule changes of 2026-11-24 "
                          "(session 20) and scored before them at f1e77c0: first-ranked 6/12, within three 9/12, healthy "
                          "controls with an error 0/7; these totals are after them; never tuned on)",
                          fourth, rows=FOURTH_PART not in STILL_SEALED) if fourth else ""
    parts += part_markdown(f"Third sealed part ({len(third)} cases; scored once while sealed, at c8e5fc3: first-ranked "
                           "9/13, within three 11/13, healthy controls with an error 3/3; then read and tuned on: no "
                           "longer held out)", third, rows=THIRD_PART not in STILL_SEALED) if third else ""
    parts += part_markdown(f"Second sealed part ({len(second)} cases, scored before the rule changes, then read: "
                           "no longer held out)", second) if second else ""
    parts += part_markdown(f"Sealed part ({len(sealed)} cases, set aside from tuning)", sealed) if sealed else ""
    return (f"# Corpus: does the first-ranked finding name the real cause?\n\n"
            f"Measured {today} with `{COMMAND}` on the bundles in `corpus/` "
            f"(regenerated by `scripts/make_corpus.py` and `scripts/make_corpus_families.py`; what each case is "
            f"and what building it taught: `corpus/README.md`).\n\n{parts}"
            f"{part_markdown(f'Tuned part ({len(tuned)} cases)', tuned)}"
            f"## How each case was made\n\n{how}\n")


KEPT_MARKER = "<!-- written by hand below this line: corpus_score keeps it when it rewrites the file -->"


def kept_section(path: Path) -> str:
    """The hand-written part of an existing report (a dated held-out result, say), from KEPT_MARKER on."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return "\n" + text[text.index(KEPT_MARKER):] if KEPT_MARKER in text else ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/corpus_score.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="folder with labels.json and one bundle per case")
    parser.add_argument("--markdown", type=Path, help="also write the table, totals and date to this file")
    parser.add_argument("--show-sealed", action="store_true",
                        help="print the sealed parts' rows too (by default only their totals: whoever tunes rules "
                             "must not read them)")
    args = parser.parse_args(argv)
    try:
        scores = score_corpus(args.corpus)
        labels = load_labels(args.corpus)
    except QdqReportError as exc:
        print(f"corpus_score: error: {exc}", file=sys.stderr)
        return 2
    sealed, tuned = [s for s in scores if s.sealed], [s for s in scores if s.tuned]
    second, third = [s for s in scores if s.sealed_2], [s for s in scores if s.sealed_3]
    fourth, fifth = [s for s in scores if s.sealed_4], [s for s in scores if s.sealed_5]
    sixth = [s for s in scores if s.sealed_6]
    print(table_markdown(scores if args.show_sealed else tuned))
    if sixth:
        print(f"sixth sealed part ({len(sixth)} cases):\n{totals_markdown(totals(sixth))}")
    if fifth:
        print(f"fifth sealed part ({len(fifth)} cases):\n{totals_markdown(totals(fifth))}")
    if fourth:
        print(f"fourth sealed part ({len(fourth)} cases):\n{totals_markdown(totals(fourth))}")
    if third:
        print(f"third sealed part ({len(third)} cases):\n{totals_markdown(totals(third))}")
    if second:
        print(f"second sealed part ({len(second)} cases):\n{totals_markdown(totals(second))}")
    if sealed:
        print(f"sealed part ({len(sealed)} cases):\n{totals_markdown(totals(sealed))}")
    result = totals(tuned)  # the exit status: the targets on the tuned part (the sealed part is measured, not gated)
    print(f"tuned part ({len(tuned)} cases):\n{totals_markdown(result)}")
    if args.markdown:
        args.markdown.write_text(report_markdown(scores, labels) + kept_section(args.markdown), encoding="utf-8")
        print(f"written: {args.markdown}")
    return 0 if result.met else 1


if __name__ == "__main__":
    raise SystemExit(main())
