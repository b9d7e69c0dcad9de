"""Interleaved before/after pairs of the default collect (or of `collect --per-layer`), with plain inference (the floor) in the same rounds.

    python benchmarks/bench_pairs.py --before DIR --after DIR --cells vad:128 vad:1000 cls:128 [--repeat 3]
        [--per-layer] [--output benchmarks/results_pairs.json]

DIR is a copy of the repository's code (e.g. `git archive <commit> | tar -x -C DIR`, then
`python -m compileall -q DIR/qdqreport`, so neither side compiles its modules in every run);
`qdqreport collect` runs from it through PYTHONPATH. Each round runs the floor (bench_collect.py's
FLOOR: ONNX Runtime with default session options, both models, every sample) and the floor with the
session options collect uses (no spinning: on a loaded machine the default floor's spinning threads slow
it more than anything else), then before and after in alternating order, each a fresh process on the same N samples (bench_collect.py's families and
inputs); `--per-layer` runs both sides as `collect --per-layer --whatif-budget 0` and keeps the cell as
"FAMILY:N per-layer". Wall time from start to exit, CPU time (user + sys) and peak RSS from wait4, and the
1-minute load before each run. `--print` prints the table of --output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_collect as bench  # benchmarks/ is on sys.path: the scripts run from there


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path)
    parser.add_argument("--cells", nargs="+", default=[], help="FAMILY:N, e.g. vad:1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-layer", action="store_true", help="before and after run collect --per-layer --whatif-budget 0")
    parser.add_argument("--output", type=Path, default=bench.ROOT / "benchmarks/results_pairs.json")
    parser.add_argument("--print", action="store_true", help="print the table of --output; run nothing")
    args = parser.parse_args()
    results = json.loads(args.output.read_text()) if args.output.exists() else {}
    if not args.print:
        for cell in args.cells:
            results[cell + (" per-layer" if args.per_layer else "")] = _run_cell(cell, args.before, args.after, args.repeat,
                                                                                 args.per_layer)
            args.output.write_text(json.dumps(results, indent=1))
    print(_table(results))
    return 0


def _run_cell(cell: str, before: Path, after: Path, repeat: int, per_layer: bool = False) -> dict:
    family, n = cell.split(":")
    fp32, qdq, data = bench.FAMILIES[family]
    axes = bench.AXES.get(family, {})
    runs: dict[str, list[dict]] = {"floor": [], "floor_nospin": [], "before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="bench-pairs-") as work:
        inputs = Path(work) / "inputs.npz"
        subprocess.run([sys.executable, bench.__file__, "--write-inputs", str(data), n, str(inputs), json.dumps(axes)],
                       check=True)
        for round_ in range(repeat):
            for tool in ("floor", "floor_nospin", "before", "after") if round_ % 2 == 0 else \
                    ("floor", "floor_nospin", "after", "before"):
                if tool.startswith("floor"):
                    command, env = [sys.executable, "-c", bench.FLOOR, str(fp32), str(qdq), str(inputs),
                                    "1" if tool == "floor_nospin" else "0", json.dumps(axes)], None
                else:
                    bundle = Path(work) / f"bundle_{tool}"
                    shutil.rmtree(bundle, ignore_errors=True)
                    command = [sys.executable, "-m", "qdqreport", "collect", "--fp32", str(fp32), "--qdq", str(qdq),
                               "--inputs", str(inputs), "-o", str(bundle), "--quiet"]
                    command += [f"--batch-axis={k}={'none' if v is None else v}" for k, v in axes.items()]
                    command += ["--per-layer", "--whatif-budget", "0"] if per_layer else []
                    env = {**os.environ, "PYTHONPATH": str((before if tool == "before" else after).resolve())}
                run = _run(command, env, work)
                runs[tool].append(run)
                print(f"{cell} {tool} round {round_}: {run['seconds']:.2f} s, cpu {run['cpu_seconds']:.2f} s, "
                      f"load {run['load']:.1f}", file=sys.stderr)
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": bench._machine(),
            "code": {"before": str(before), "after": str(after)}, "per_layer": per_layer, **runs}


def _run(command: list[str], env: dict | None, cwd: str) -> dict:
    load = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    error = process.stderr.read().decode(errors="replace").strip()[-300:] if status else ""
    process.stderr.close()
    return {"seconds": round(seconds, 3), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
            "rss_gb": round(usage.ru_maxrss / 1024 ** 2, 3), "load": load, "exit": os.waitstatus_to_exitcode(status),
            "error": error, "at": time.strftime("%H:%M:%S", time.gmtime())}


def _table(results: dict) -> str:
    lines = ["| cell | floor | floor, no spinning | before | after | after vs before (wall, cpu) | load |",
             "|---|---|---|---|---|---|---|"]
    for cell, runs in results.items():
        wall = {k: [r["seconds"] for r in runs[k]] for k in ("floor", "floor_nospin", "before", "after") if runs.get(k)}
        cpu = {k: statistics.median(r["cpu_seconds"] for r in runs[k]) for k in wall}
        med = {k: statistics.median(v) for k, v in wall.items()}
        rss = {k: statistics.median(r["rss_gb"] for r in runs[k]) for k in wall}
        failed = sum(r["exit"] != 0 for k in wall for r in runs[k])

        def cell_text(k: str) -> str:
            ratio = "" if k == "floor" else f" ({med[k] / med['floor']:.1f}x; cpu {cpu[k] / cpu['floor']:.1f}x)"  # vs floor
            return (f"{med[k]:.2f} s [{min(wall[k]):.2f}-{max(wall[k]):.2f}]{ratio}, cpu {cpu[k]:.2f} s, "
                    f"{rss[k]:.2f} GB")

        loads = [r["load"] for k in wall for r in runs[k]]
        lines.append(f"| {cell} | " + " | ".join(cell_text(k) if k in wall else "not run" for k in
                                              ("floor", "floor_nospin", "before", "after"))
                     + f" | {100 * (med['after'] / med['before'] - 1):+.0f}%, {100 * (cpu['after'] / cpu['before'] - 1):+.0f}%"
                     + f" | {min(loads):.1f}-{max(loads):.1f}, {runs['date']}" + (f", {failed} failed" if failed else "")
                     + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
