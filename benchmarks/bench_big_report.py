"""Report cost with many outputs: `python benchmarks/bench_big_report.py [--outputs 1000] [--layers 5000]`.

Builds the bundle of tests/fuzz/test_bounded_report.py (the demo collected with --per-layer, its rows
replicated to OUTPUTS outputs and LAYERS per-layer rows) and times `validate` and `report` in-process:
wall and CPU seconds (CPU is what matters on a shared machine) and the report files' sizes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

from big_bundle import build_big_bundle  # noqa: E402
from fuzz_seeds import _demo_per_layer  # noqa: E402

from qdqreport.cli import main  # noqa: E402


def timed(argv: list[str]) -> tuple[int, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, time.perf_counter() - wall, time.process_time() - cpu


def run() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=1000)
    parser.add_argument("--layers", type=int, default=5000)
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "bench-seeds")
    args = parser.parse_args()
    seed = _demo_per_layer(args.cache)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = build_big_bundle(seed, Path(tmp) / "big", args.outputs, args.layers)
        timed(["report", str(seed), "-o", str(Path(tmp) / "warm")])  # imports, fonts, template compilation
        results = {"outputs": args.outputs, "layer_rows": args.layers}
        for name, argv in (("validate", ["validate", str(bundle)]), ("report", ["report", str(bundle), "-o", str(Path(tmp) / "out")])):
            code, wall, cpu = timed(argv)
            results[name] = {"exit": code, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
        results["bytes"] = {p.name: p.stat().st_size for p in sorted((Path(tmp) / "out").iterdir())}
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
