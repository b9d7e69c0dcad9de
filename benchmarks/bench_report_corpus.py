"""`report` on every committed bundle: `python benchmarks/bench_report_corpus.py [--repeat 3]`.

Issue 12's target: `qdqreport report` renders any corpus bundle in at most 2 s. Each bundle of
`corpus/` and `sample_bundles/` is rendered by a fresh `python -m qdqreport report BUNDLE -o OUT`
process (Python start-up, imports, reading, rules, HTML, Markdown and JSON included, as a user or a CI
job runs it), `--repeat` times with the bundles interleaved round by round; wall time from process
start to exit and peak RSS from `wait4`. Prints the slowest bundles and the spread, writes every run to
benchmarks/results_report_corpus.json (with the 1-minute load before each round). Run on a quiet
machine: other work shows in the times. `--exclude PREFIX ...` leaves out the bundles whose names
start with a prefix (a corpus part still held out, whose reports nobody may read, e.g. `dcut_`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results_report_corpus.json"
TARGET_S = 2.0


def bundles(exclude: tuple[str, ...] = ()) -> list[Path]:
    found = [p for folder in ("corpus", "sample_bundles") for p in sorted((ROOT / folder).iterdir())
             if ((p / "manifest.json").is_file() or p.suffix == ".zip") and not p.name.startswith(exclude)]
    return found


def run_once(bundle: Path, out: Path) -> tuple[int, float, float, float]:
    """Exit code, wall seconds, CPU seconds (user + system) and peak RSS (GB) of one `report` process."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "qdqreport", "report", str(bundle), "-o", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime  # what a loaded, shared machine distorts least
    return os.waitstatus_to_exitcode(status), wall, cpu, usage.ru_maxrss / 1024 ** 2  # ru_maxrss is in KiB on Linux


def _cpu_name() -> str:
    """The processor's model name from /proc/cpuinfo (platform.processor() is often empty on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--exclude", nargs="+", default=[], metavar="PREFIX",
                        help="leave out the bundles whose names start with PREFIX (a held-out corpus part)")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.repeat):
            load = os.getloadavg()[0]
            for bundle in bundles(tuple(args.exclude)):
                code, wall, cpu, rss = run_once(bundle, Path(tmp) / f"{bundle.name}-{round_}")
                runs.setdefault(bundle.name, []).append({"round": round_, "exit": code, "wall_s": round(wall, 3),
                                                         "cpu_s": round(cpu, 3), "rss_gb": round(rss, 3),
                                                         "load_1min": round(load, 2)})
    medians = {name: statistics.median(r["wall_s"] for r in rows) for name, rows in runs.items()}
    cpu_medians = {name: statistics.median(r["cpu_s"] for r in rows) for name, rows in runs.items()}
    failed = sorted(name for name, rows in runs.items() if any(r["exit"] not in (0, 1) for r in rows))
    summary = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.processor() or platform.machine(),
               "cores": os.cpu_count(), "python": platform.python_version(), "repeat": args.repeat,
               "excluded_prefixes": args.exclude,
               "bundles": len(runs), "median_of_medians_s": round(statistics.median(medians.values()), 3),
               "max_median_s": round(max(medians.values()), 3), "slowest": sorted(medians, key=medians.get)[-5:][::-1],
               "median_of_cpu_medians_s": round(statistics.median(cpu_medians.values()), 3),
               "max_cpu_median_s": round(max(cpu_medians.values()), 3),
               "most_cpu": sorted(cpu_medians, key=cpu_medians.get)[-5:][::-1],
               "cpu": _cpu_name(), "load_1min": [round(min(r["load_1min"] for rows in runs.values() for r in rows), 2),
                                                 round(max(r["load_1min"] for rows in runs.values() for r in rows), 2)],
               "over_target": sorted(n for n, m in medians.items() if m > TARGET_S), "failed": failed,
               "max_rss_gb": round(max(r["rss_gb"] for rows in runs.values() for r in rows), 3)}
    args.output.write_text(json.dumps({"summary": summary, "runs": runs}, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    for name in summary["slowest"]:
        walls = [r["wall_s"] for r in runs[name]]
        print(f"{name}: median {medians[name]:.2f} s [{min(walls):.2f}-{max(walls):.2f}], cpu {cpu_medians[name]:.2f} s")
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
