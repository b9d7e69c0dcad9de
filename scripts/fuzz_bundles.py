"""Long fuzz run over real bundles: `python scripts/fuzz_bundles.py --cases 50000 --seed S --jobs 1 --out DIR`.

Each case mutates a real seed bundle (tests/fuzz/fuzz_seeds.py), re-hashes it, and runs `qdqreport validate`
and `qdqreport report` in-process (tests/fuzz/fuzz_harness.py says how outcomes are classified). Writes
DIR/summary.json at the end (counts, cases per second, exit codes, every bad signature with example cases),
DIR/progress-<first index>.json every 100 cases per worker, and saves bad cases under
DIR/cases/<signature>/case-N/ (the bundle and case.json). Exit 0 when no case was bad, 1 otherwise.

Replay one saved case: `python scripts/fuzz_bundles.py --replay DIR/cases/<signature>/case-N`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from fuzz_harness import BAD, RunStats, run_cases, run_command  # noqa: E402
from fuzz_seeds import ROOT, load_seeds  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000, help="number of cases (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="run seed: case i of seed S is always the same bundle")
    parser.add_argument("--start", type=int, default=0, help="first case index (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz", help="summary and saved cases")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--plot-every", type=int, default=10,
                        help="draw real matplotlib plots every Nth case (0: never); other cases skip only the drawing")
    parser.add_argument("--minutes", type=float, help="stop after this much wall time")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="address-space limit per worker (default 4)")
    parser.add_argument("--replay", type=Path, help="re-run one saved case folder and print what happens")
    args = parser.parse_args()
    if args.replay:
        return replay(args.replay)
    args.out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    chunks = [list(range(args.start + j, args.start + args.cases, args.jobs)) for j in range(args.jobs)]
    jobs = [(args, chunk, deadline) for chunk in chunks]
    start = time.monotonic()
    if args.jobs == 1:
        results = [_work(jobs[0])]
    else:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            results = pool.map(_work, jobs)
    total = _merge(results, time.monotonic() - start)
    summary = {"seed": args.seed, "start": args.start, "requested": args.cases, **total.to_dict()}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=True))
    print(json.dumps({k: summary[k] for k in ("cases", "seconds", "cpu_seconds", "cases_per_cpu_second", "counts", "exits")}))
    for name, entry in sorted(total.signatures.items(), key=lambda kv: -kv[1]["count"]):
        print(f"{entry['count']:6d} {entry['kind']:8s} {name}")
    return 1 if total.bad() else 0


def _work(job: tuple) -> RunStats:
    args, indices, deadline = job
    limit = int(args.memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    seeds = load_seeds(args.out / "seeds")
    progress = args.out / f"progress-{indices[0] if indices else 0}.json"

    def report_progress(stats: RunStats, index: int) -> None:
        # A long run in the background: what it has done so far, rewritten every 100 cases.
        progress.write_text(json.dumps({"seed": args.seed, "last_index": index, **stats.to_dict()}, indent=1,
                                       ensure_ascii=True))

    with tempfile.TemporaryDirectory(prefix="qdqfuzz-") as work:
        return run_cases(seeds, args.seed, indices, Path(work), timeout=args.timeout, plot_every=args.plot_every,
                         save=args.out / "cases", deadline=deadline, on_progress=report_progress)


def _merge(results: list[RunStats], seconds: float) -> RunStats:
    total = RunStats(seconds=seconds)
    for stats in results:
        total.cases += stats.cases
        total.cpu_seconds += stats.cpu_seconds
        for kind, count in stats.counts.items():
            total.counts[kind] = total.counts.get(kind, 0) + count
        for key, count in stats.exits.items():
            total.exits[key] = total.exits.get(key, 0) + count
        for name, entry in stats.signatures.items():
            merged = total.signatures.setdefault(name, {"kind": entry["kind"], "count": 0, "cases": []})
            merged["count"] += entry["count"]
            merged["cases"] = (merged["cases"] + entry["cases"])[:3]
    return total


def replay(folder: Path) -> int:
    bundle = folder / "bundle.zip" if (folder / "bundle.zip").exists() else folder / "bundle"
    with tempfile.TemporaryDirectory(prefix="qdqfuzz-replay-") as out:
        for argv in (["validate", str(bundle)], ["report", str(bundle), "-o", out]):
            code, stderr, exc = run_command(argv)
            print(f"qdqreport {argv[0]}: exit {code}; stderr: {stderr.strip()[:500]}")
            if exc is not None:
                import traceback

                traceback.print_exception(exc)
                return 1
    return 0


if __name__ == "__main__":
    assert set(BAD)  # the outcome kinds that fail a run
    sys.exit(main())
