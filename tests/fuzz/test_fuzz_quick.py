"""The quick fuzz run: seeded mutations of real bundles through `validate` and `report`, in-process.

Default: QDQREPORT_FUZZ_CASES cases (500: about 0.14 s of CPU each, 70 s, plots drawn every 10th case).
More: `QDQREPORT_FUZZ_CASES=3000 python -m pytest -q tests/fuzz/test_fuzz_quick.py`, or the long run,
`python scripts/fuzz_bundles.py --cases 50000 --seed S --out DIR` (SECURITY.md, "Fuzzing").
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from fuzz_harness import BAD, Outcome, _check_report_folder, run_case, run_cases
from fuzz_mutate import DIRECTORY, MANIFEST, Case, make_case

CASES = int(os.environ.get("QDQREPORT_FUZZ_CASES", "500"))
SEED = int(os.environ.get("QDQREPORT_FUZZ_SEED", "20261123"))


@pytest.mark.slow
def test_mutated_real_bundles_give_exit_0_1_or_2_and_nothing_else(seeds: dict, tmp_path: Path) -> None:
    stats = run_cases(seeds, SEED, range(CASES), tmp_path / "work", timeout=120, plot_every=10,
                      save=tmp_path / "cases")
    bad = {name: entry for name, entry in stats.signatures.items() if entry["kind"] in BAD}
    assert stats.cases == CASES
    assert not bad, json.dumps(bad, indent=1)[:6000]
    # The cases must reach the rules and the renderer, not all stop at a check: a share renders a report.
    rendered = stats.exits.get("report:0", 0) + stats.exits.get("report:1", 0)
    assert rendered >= CASES // 4, stats.exits


@pytest.mark.slow
def test_cases_are_reproducible_and_rehashed(seeds: dict) -> None:
    first, again = make_case(seeds, SEED, 7), make_case(seeds, SEED, 7)
    assert (first.seed, first.steps, first.files.keys()) == (again.seed, again.steps, again.files.keys())
    mutated = [make_case(seeds, SEED, i) for i in range(40)]
    files_steps = [c for c in mutated if any(s.startswith(("json ", "csv ", "npz ")) for s in c.steps)]
    assert files_steps, "the mutator never changed an artifact"
    for case in files_steps:
        if not isinstance(case.manifest, dict) or not isinstance(case.manifest.get("files"), dict):
            continue  # the manifest mutation replaced the files table itself
        for name, entry in case.manifest["files"].items():
            data = case.files.get(name)
            if isinstance(entry, dict) and isinstance(data, bytes) and data is not DIRECTORY \
                    and not any("files" in s for s in case.steps):
                assert entry["sha256"] == hashlib.sha256(data).hexdigest(), (case.steps, name)


def _unmutated(seeds: dict, name: str = "cls_healthy") -> Case:
    files = dict(seeds[name])
    return Case(name, files, json.loads(files.pop(MANIFEST)))


@pytest.mark.slow
def test_the_harness_sees_crashes_hangs_escapes_and_partial_sets(seeds: dict, tmp_path: Path, monkeypatch) -> None:
    """The classifier itself: each kind of bad outcome, provoked on a real bundle, is reported as such."""
    import time as time_module

    from qdqreport.report import model as report_model
    from qdqreport.render import markdown

    assert run_case(_unmutated(seeds), tmp_path / "fine", timeout=120, real_plots=False).kind == "ok"

    def broken(*args, **kwargs):
        raise TypeError("provoked")

    with monkeypatch.context() as patch:
        patch.setattr(report_model, "build_verdict", broken)
        outcome = run_case(_unmutated(seeds), tmp_path / "crash", timeout=120, real_plots=False)
    assert (outcome.kind, outcome.signature) == ("crash", "TypeError@qdqreport/report/model.py:build_report")

    with monkeypatch.context() as patch:
        patch.setattr(report_model, "build_verdict", lambda *a, **k: time_module.sleep(30))
        assert run_case(_unmutated(seeds), tmp_path / "hang", timeout=1, real_plots=False).kind == "hang"

    outside = tmp_path / "outside.txt"
    real_render = markdown.render_markdown

    def escaping(model):
        outside.write_text("escaped")
        return real_render(model)

    with monkeypatch.context() as patch:
        patch.setattr(markdown, "render_markdown", escaping)
        outcome = run_case(_unmutated(seeds), tmp_path / "escape", timeout=120, real_plots=False)
    assert outcome.kind == "escape" and str(outside) in outcome.detail

    (tmp_path / "partial" / "out").mkdir(parents=True)
    (tmp_path / "partial" / "out" / "report.md").mkdir()  # report refuses (exit 2) and must leave no .tmp
    assert run_case(_unmutated(seeds), tmp_path / "partial", timeout=120, real_plots=False).kind == "ok"
    (tmp_path / "partial" / "out" / ".report.html.1-ab.tmp").write_text("left over")
    assert _check_report_folder(tmp_path / "partial" / "out", Outcome()).kind == "partial"
