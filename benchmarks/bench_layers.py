"""Per-layer comparison benchmark: qdqreport vs ORT qdq_loss_debug vs Polygraphy mark-all vs the floor.

One command (needs the models made by scripts/make_minilm.py, or --model cls for the demo CNN):

    python benchmarks/bench_layers.py [--model minilm|cls] [--sizes 8 32 128] [--repeat 3] [--rss-limit-gb 12]

Every tool runs in its own subprocess on the same N samples; we report its wall time and its peak
RSS (from wait4's ru_maxrss). A watchdog kills a tool whose RSS passes --rss-limit-gb and records
"out of memory (limit)" instead of letting it take the machine down. Tools:

  floor           plain ONNX Runtime inference of the FP32 and the QDQ model (default session options)
  qdqreport       LayerCollector: both models with all aligned tensors marked + the local graph, streaming statistics
  qdq_loss_debug  ORT's modify_model_output_intermediate_tensors (both models), collect_activations,
                  create_activation_matching, compute_activation_error (SQNR per tensor)
  polygraphy      `polygraphy run FP32 --onnxrt --onnx-outputs mark all --save-outputs`, then the same on the QDQ
                  model with --load-outputs (compares every tensor present in both)
  whatif          qdqreport's what-if search at the first size >= 32 with budget = 10x that size's floor

Every (tool, N) cell runs --repeat times, the tools interleaved round by round so that a burst of
load elsewhere on the machine hits every tool alike; a cell reports the median time and the median
peak RSS, and ratios are medians against the floor's median at the same N. A tool killed for memory
or time is not run again at that N or above: one kill is the result. The 1-minute load average
before each run is kept, so a noisy machine shows in the results.

Results are printed as a Markdown table and written to benchmarks/results_<model>.json.
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
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = {
    "minilm": (ROOT / "benchmarks/models/minilm/minilm_fp32.onnx", ROOT / "benchmarks/models/minilm/minilm_int8.onnx",
               ROOT / "benchmarks/models/minilm/eval.npz"),
    # The demo's x255-calibrated ModelOpt model: broken, so the what-if search has something to find.
    "cls": (ROOT / "qdqreport/demo/cls_fp32.onnx", ROOT / "qdqreport/demo/cls_int8_x255.onnx", ROOT / "qdqreport/demo/eval.npz"),
    # The corpus families bench_collect.py prepares in build/bench/ (`--family det yolo rec` there first).
    "det": (ROOT / "build/bench/det_fp32.onnx", ROOT / "build/bench/det_int8.onnx", ROOT / "build/bench/det_eval.npz"),
    "yolo": (ROOT / "build/bench/yolo_fp32.onnx", ROOT / "build/bench/yolo_sym.onnx", ROOT / "build/bench/yolo_eval.npz"),
    "rec": (ROOT / "build/bench/rec_fp32.onnx", ROOT / "build/bench/rec_sym.onnx", ROOT / "build/bench/rec_eval.npz"),
}

# Each child loads N feeds (cycling through the file's rows) and runs one tool.
CHILD = r'''
import sys, time, json, numpy as np
tool, fp32, qdq, data, n, work = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
with np.load(data) as d:
    arrays = {k: d[k] for k in d.files}  # read once: NpzFile[k] decompresses a new copy on every access
rows = len(next(iter(arrays.values())))
feeds = [{k: a[i % rows:i % rows + 1].copy() for k, a in arrays.items()} for i in range(n)]
del arrays
start = time.perf_counter()
extra = {}
if tool == "floor":
    import onnxruntime as ort
    for path in (fp32, qdq):
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for f in feeds:
            s.run(None, f)
elif tool == "qdqreport":
    import onnx
    from qdqreport.collect.layerwise import LayerCollector
    c = LayerCollector(onnx.load(fp32), onnx.load(qdq))
    for f in feeds:
        c.add(f)
    r = c.result()
    extra = {"tensors": r.summary["aligned_tensors"], "weights": r.summary["aligned_weights"]}
elif tool == "whatif":
    import onnx
    from qdqreport.collect.layerwise import LayerCollector
    from qdqreport.collect.whatif import WhatIfOptions, run_whatif
    from qdqreport.collect.precision import precision_summary
    budget = float(sys.argv[7])
    q = onnx.load(qdq)
    c = LayerCollector(onnx.load(fp32), q)
    for f in feeds:
        c.add(f)
    r = c.result()
    start = time.perf_counter()  # the search alone; the per-layer pass is measured as "qdqreport"
    from qdqreport.analysis.compare import looks_like_probabilities
    from qdqreport.collect.models import class_score_outputs
    classes = class_score_outputs(c.f_index.model) | {k for k in r.fp32_outputs[0] if looks_like_probabilities(r.fp32_outputs, k)}
    rows_, summary = run_whatif(c.q_index, c.f_index, feeds, r.fp32_outputs, r.layer_rows, precision_summary(q), classes,
                                WhatIfOptions(budget=budget))
    extra = {k: summary[k] for k in ("baseline", "chosen", "stopped", "trials")}
elif tool == "qdq_loss_debug":
    from onnxruntime.quantization.calibrate import CalibrationDataReader
    from onnxruntime.quantization import qdq_loss_debug as dbg
    class Reader(CalibrationDataReader):
        def __init__(self): self.it = iter(feeds)
        def get_next(self): return next(self.it, None)
    dbg.modify_model_output_intermediate_tensors(fp32, work + "/f_aug.onnx")
    dbg.modify_model_output_intermediate_tensors(qdq, work + "/q_aug.onnx")
    f_act = dbg.collect_activations(work + "/f_aug.onnx", Reader())
    q_act = dbg.collect_activations(work + "/q_aug.onnx", Reader())
    matched = dbg.create_activation_matching(q_act, f_act)
    errors = dbg.compute_activation_error(matched)
    extra = {"tensors_matched": len(matched), "with_float": sum(1 for v in errors.values() if "xmodel_err" in v)}
elif tool == "polygraphy":
    import subprocess
    from polygraphy.json import save_json
    save_json(feeds, work + "/inputs.json")
    import os, shutil
    exe = shutil.which("polygraphy") or os.path.join(os.path.dirname(sys.executable), "polygraphy")
    base = [exe, "run", "--onnxrt", "--onnx-outputs", "mark", "all", "--load-inputs",
            work + "/inputs.json", "--silent"]
    subprocess.run([*base[:2], fp32, *base[2:], "--save-outputs", work + "/fp32_out.json"], check=True)
    done = subprocess.run([*base[:2], qdq, *base[2:], "--load-outputs", work + "/fp32_out.json"])
    extra = {"exit_code": done.returncode}
print(json.dumps({"seconds": time.perf_counter() - start, **extra}))
'''


def run_tool(tool: str, model: str, n: int, limit_gb: float, budget: float = 0.0, timeout: float = 3600) -> dict:
    fp32, qdq, data = MODELS[model]
    with tempfile.TemporaryDirectory(prefix="bench_layers_") as work:
        args = [sys.executable, "-c", CHILD, tool, str(fp32), str(qdq), str(data), str(n), work, str(budget)]
        began = time.perf_counter()
        out_path, err_path = Path(work) / "stdout.txt", Path(work) / "stderr.txt"
        with open(out_path, "w") as out, open(err_path, "w") as err:  # files, not pipes: a chatty tool cannot block
            process = subprocess.Popen(args, stdout=out, stderr=err, text=True, cwd=ROOT,
                                       env={**os.environ, "PYTHONPATH": str(ROOT)})
            killed = _watch(process, limit_gb, timeout)
        stdout, stderr = out_path.read_text(), err_path.read_text()
        _, status, usage = _wait_info(process)
        wall = time.perf_counter() - began
    result = {"tool": tool, "n": n, "wall_seconds": round(wall, 2), "peak_rss_gb": round(usage / 2**20, 3)}
    if killed:
        result["error"] = killed
    elif process.returncode != 0:
        result["error"] = (stderr.strip().splitlines() or ["failed"])[-1][:200]
    else:
        result.update(json.loads(stdout.strip().splitlines()[-1]))
    return result


_USAGE: dict[int, int] = {}


def _watch(process: subprocess.Popen, limit_gb: float, timeout: float) -> str | None:
    """Poll the tree's RSS; kill it past the limit or the timeout. Peak RSS comes from wait4 in a thread."""
    def reap() -> None:
        _, status, usage = os.wait4(process.pid, 0)
        _USAGE[process.pid] = usage.ru_maxrss
        process.returncode = os.waitstatus_to_exitcode(status)

    reaper = threading.Thread(target=reap)
    reaper.start()
    began, verdict = time.perf_counter(), None
    while reaper.is_alive():
        if _tree_rss_gb(process.pid) > limit_gb:
            verdict = f"out of memory (RSS above the {limit_gb:g} GB limit)"
        elif time.perf_counter() - began > timeout:
            verdict = f"timed out after {timeout:g} s"
        if verdict:
            subprocess.run(["pkill", "-9", "-P", str(process.pid)], check=False)
            process.kill()
            break
        time.sleep(0.2)
    reaper.join()
    return verdict


def _wait_info(process: subprocess.Popen) -> tuple[int, int, int]:
    return process.pid, process.returncode, _USAGE.get(process.pid, 0)


def _tree_rss_gb(pid: int) -> float:
    total = 0
    for child in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 2**20


def _children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(c) for c in found] + [g for c in found for g in _children(int(c))]


def run_cells(tools: list[str], sizes: list[int], repeat: int, model: str, limit_gb: float, timeout: float) -> list[dict]:
    """Every run of every (tool, N) cell, round-robin over the tools within each round."""
    runs, dead = [], set()  # dead: tools killed at some N are not run at that N or larger again
    for n in sizes:
        for round_ in range(repeat):
            for tool in tools:
                if tool in dead:
                    continue
                run = run_tool(tool, model, n, limit_gb, timeout=timeout)
                run.update(round=round_, load_1min=round(os.getloadavg()[0], 2))
                runs.append(run)
                print(json.dumps(run), flush=True)
                if "error" in run and ("memory" in run["error"] or "timed out" in run["error"]):
                    dead.add(tool)
    return runs


def median_cells(runs: list[dict]) -> list[dict]:
    """One row per (tool, N): median seconds and peak RSS over the successful runs, the error otherwise."""
    cells: dict[tuple[str, int], list[dict]] = {}
    for run in runs:
        cells.setdefault((run["tool"], run["n"]), []).append(run)
    rows = []
    for (tool, n), group in cells.items():
        ok = [r for r in group if "error" not in r]
        row = {"tool": tool, "n": n, "runs": len(group), "ok_runs": len(ok)}
        if ok:
            row["seconds"] = statistics.median(r["seconds"] for r in ok)
            row["peak_rss_gb"] = statistics.median(r["peak_rss_gb"] for r in ok)
            row["seconds_all"] = [round(r["seconds"], 2) for r in ok]
        if len(ok) < len(group):  # kept even when other runs of the cell succeeded: a kill is a result
            row["error"] = next(r["error"] for r in group if "error" in r)
            row["failed_runs"] = len(group) - len(ok)
        rows.append(row)
    return rows


def markdown_table(rows: list[dict], tools: list[str], sizes: list[int]) -> str:
    """Median time (ratio to the floor's median), median peak RSS; kills and failures in words."""
    index = {(r["tool"], r["n"]): r for r in rows}
    lines = ["| N | " + " | ".join(tools) + " |", "|---|" + "---|" * len(tools)]
    for n in sizes:
        floor = index.get(("floor", n), {}).get("seconds")
        cells = []
        for tool in tools:
            row = index.get((tool, n))
            if row is None:
                killed = [r["n"] for r in rows if r["tool"] == tool and "seconds" not in r]
                cells.append(f"not run (killed at N = {min(killed)})" if killed else "not run")
            elif "seconds" not in row:
                cells.append(row.get("error", "failed"))
            else:
                ratio = f" ({row['seconds'] / floor:.1f}×)" if floor and tool != "floor" else ""
                failed = f" ({row['failed_runs']} of {row['runs']} runs failed: {row['error']})" if "error" in row else ""
                cells.append(f"{row['seconds']:.1f} s{ratio}, {row['peak_rss_gb']:.2f} GB{failed}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="minilm")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--tools", nargs="+", default=["floor", "qdqreport", "qdq_loss_debug", "polygraphy", "whatif"])
    parser.add_argument("--repeat", type=int, default=3, help="runs per (tool, N) cell; the table shows medians")
    parser.add_argument("--rss-limit-gb", type=float, default=12.0)
    parser.add_argument("--timeout", type=float, default=1800.0, help="per tool run, seconds")
    parser.add_argument("--output", type=Path, help="results file (default benchmarks/results_<model>.json)")
    args = parser.parse_args()
    if not MODELS[args.model][0].is_file():
        raise SystemExit(f"{MODELS[args.model][0]} is missing: run scripts/make_minilm.py first")
    plain = [t for t in args.tools if t != "whatif"]
    args.repeat = max(1, args.repeat)
    runs = run_cells(plain, args.sizes, args.repeat, args.model, args.rss_limit_gb, args.timeout)
    rows = median_cells(runs)
    if "whatif" in args.tools:  # one search: its budget is set from the floor's median, so it stops itself
        n = next((s for s in args.sizes if s >= 32), args.sizes[-1])
        floor = next((r.get("seconds") for r in rows if r["tool"] == "floor" and r["n"] == n), None)
        if floor is None:
            raise SystemExit(f"whatif needs the floor's time at N = {n} for its budget: add 'floor' to --tools")
        whatif = run_tool("whatif", args.model, n, args.rss_limit_gb, budget=10 * floor, timeout=args.timeout)
        whatif["floor_seconds"] = floor
        runs.append(whatif)
        print(json.dumps(whatif), flush=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "cpu": _cpu_name(), "model": args.model, "python": platform.python_version(), "repeat": args.repeat}
    output = args.output or ROOT / "benchmarks" / f"results_{args.model}.json"
    output.write_text(json.dumps({"meta": meta, "medians": rows, "results": runs}, indent=1))
    print(markdown_table(rows, plain, args.sizes))


def _cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


if __name__ == "__main__":
    main()
