"""Default-collect benchmark (issue 12): `qdqreport collect` against plain ONNX Runtime inference.

    python benchmarks/bench_collect.py [--family cls det yolo rec vad big] [--sizes 32 128 1000] [--repeat 3]
        [--tools floor floor_nospin collect per_layer] [--det-model PATH/ch_PP-OCRv4_det_infer.onnx]
        [--wheels /tmp/ex] [--images /tmp/ex/skimage/data]

Every tool runs as a fresh process on the same N samples (the first rows of the family's evaluation
file, cycled to N, written once per N as an .npz before any timing); we record its wall time from
process start to exit (Python start-up, imports, model loading and session creation included) and
its peak RSS (wait4's ru_maxrss) and CPU time (user + sys, wait4's rusage: on a shared machine the load inflates wall
time, less so CPU time). Tools:

  floor      plain ONNX Runtime: load the FP32 and the QDQ model, one session each (default options),
             run every sample through both; nothing compared, nothing written
  floor_nospin  the same with the session options collect uses (intra-op threads = cores, inter-op 1,
             no spinning): on a loaded machine spinning threads cost more than the work, so this is
             the floor that separates qdqreport's own cost from the thread settings
  collect    `qdqreport collect --fp32 F --qdq Q --inputs X -o B --quiet` (every default)
  per_layer  the same with `--per-layer --whatif-budget 0`

Every (tool, N) cell runs --repeat times, the tools interleaved round by round; a cell reports the
median and the spread (min-max) of the wall times and the median peak RSS; ratios are medians against
the floor's median at the same N. The 1-minute load average before each run is kept: on a shared
machine it shows in the times. Results go to benchmarks/results_collect.json (merged by family).

Families:
  cls   the demo's PaddleOCR text-direction classifier (MobileNetV3, 48x192), ModelOpt INT8 (x255 calibration)
  yolo  the YOLOX detector of ddddocr 1.6.1 (416x416, one output [1, 3549, 6]), the corpus's yolo_healthy_ort_sym
        recipe (Convs, onnxruntime quantize_static, symmetric INT8) on the corpus's evaluation pictures
  rec   PP-OCRv4 text recogniser (rapidocr-onnxruntime 1.4.4), the corpus's rec_healthy_ort_sym recipe (the 12 SVTR
        MatMuls, onnxruntime quantize_static, symmetric INT8), with the corpus's evaluation crops
  vad   Silero VAD v5 (silero-vad 6.2.3, 16 kHz op15 file), the corpus's vad_healthy_ort_sym recipe (Convs); inputs
        with the state's samples on axis 1 and one shared sr (AXES; collect gets them as --batch-axis)
  yolo, rec, vad are made from the unpacked wheels (--wheels, --images) by scripts/make_corpus_families.py's own
        functions into build/bench/ (the corpus's build/corpus-work/ is left alone)
  big   a synthetic ResNet-50-sized model (102 MB of random weights in ONNX external data, 160x160 input), made by
        benchmarks/make_big_model.py on first use: speed and memory only
  det   DBNet (PP-OCRv4 text detector from the rapidocr-onnxruntime 1.4.4 wheel, 160x160 input as in the
        corpus det_* bundles): --det-model names the wheel's ch_PP-OCRv4_det_infer.onnx; the first run
        quantizes it (onnxruntime quantize_static, QDQ, symmetric INT8, MinMax on 16 synthetic images)
        into build/bench/. Its inputs are synthetic (smooth images, ImageNet-normalised): speed, not accuracy.
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

import numpy as np
from make_big_model import make, smooth_images  # benchmarks/ is on sys.path: the scripts run from there

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "corpus-work"
BENCH = ROOT / "build" / "bench"
FAMILIES = {
    "cls": (ROOT / "qdqreport/demo/cls_fp32.onnx", ROOT / "qdqreport/demo/cls_int8_x255.onnx", ROOT / "qdqreport/demo/eval.npz"),
    "yolo": (BENCH / "yolo_fp32.onnx", BENCH / "yolo_sym.onnx", BENCH / "yolo_eval.npz"),
    "det": (BENCH / "det_fp32.onnx", BENCH / "det_int8.onnx", BENCH / "det_eval.npz"),
    "rec": (BENCH / "rec_fp32.onnx", BENCH / "rec_sym.onnx", BENCH / "rec_eval.npz"),
    "vad": (BENCH / "vad_fp32.onnx", BENCH / "vad_sym.onnx", BENCH / "vad_eval.npz"),
    # Synthetic ResNet-50-sized model, 102 MB of weights in ONNX external data (benchmarks/make_big_model.py).
    "big": (BENCH / "big_fp32.onnx", BENCH / "big_int8.onnx", BENCH / "big_eval.npz"),
}
# Each input's batch axis where it is not 0 (None: one value shared by every sample), as collect's --batch-axis.
AXES = {"vad": {"state": 1, "sr": None}}
# The corpus recipe of each family's healthy symmetric case (scripts/make_corpus_families.py): op types, node selection.
CORPUS_RECIPES = {"yolo": (["Conv"], None), "rec": (["MatMul"], "rec_body"), "vad": (["Conv"], None)}

FLOOR = r'''
import json, os, sys, numpy as np, onnxruntime as ort
fp32, qdq, data, nospin, axes = sys.argv[1:6]
axes = json.loads(axes)
with np.load(data) as d:
    arrays = {k: d[k] for k in d.files}
rows = next(a.shape[axes.get(k, 0)] for k, a in arrays.items() if axes.get(k, 0) is not None)
options = ort.SessionOptions()
if nospin == "1":
    options.intra_op_num_threads, options.inter_op_num_threads = len(os.sched_getaffinity(0)), 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
for path in (fp32, qdq):
    session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
    for i in range(rows):
        session.run(None, {k: a if axes.get(k, 0) is None else np.take(a, [i], axis=axes.get(k, 0))
                           for k, a in arrays.items()})
'''


def main() -> int:
    if sys.argv[1:2] == ["--write-inputs"]:  # the child process _run_family starts (see there)
        _write_inputs(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), json.loads(sys.argv[5]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", nargs="+", default=["cls", "yolo", "det", "rec", "vad", "big"], choices=sorted(FAMILIES))
    parser.add_argument("--sizes", nargs="+", type=int, default=[32, 128, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tools", nargs="+", default=["floor", "floor_nospin", "collect", "per_layer"],
                        choices=["floor", "floor_nospin", "collect", "per_layer"])
    parser.add_argument("--det-model", type=Path, help="ch_PP-OCRv4_det_infer.onnx from the rapidocr-onnxruntime wheel")
    parser.add_argument("--wheels", type=Path, default=Path("/tmp/ex"),
                        help="unpacked ddddocr 1.6.1, rapidocr-onnxruntime 1.4.4 and silero-vad 6.2.3 wheels (yolo, rec, "
                             "vad; scripts/make_corpus_families.py --wheels)")
    parser.add_argument("--images", type=Path, help="scikit-image's data folder (yolo; default WHEELS/skimage/data)")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks/results_collect.json")
    parser.add_argument("--print", action="store_true", help="print the tables of --output's families; run nothing")
    args = parser.parse_args()
    results = json.loads(args.output.read_text()) if args.output.exists() else {}
    if args.print:
        print("\n\n".join(_table(family, results[family]) for family in args.family if family in results))
        return 0
    for family in args.family:
        if family == "det":
            _prepare_det(args.det_model)
        elif family == "big" and not all(p.exists() for p in FAMILIES["big"]):
            make(BENCH)
        elif family in CORPUS_RECIPES:
            _prepare_corpus_family(family, args.wheels, args.images or args.wheels / "skimage" / "data")
        missing = [str(p) for p in FAMILIES[family] if not p.exists()]
        if missing:
            print(f"{family}: skipped, missing {', '.join(missing)}", file=sys.stderr)
            continue
        run = _run_family(family, args.sizes, args.tools, args.repeat)
        # Merged by family, N and tool: a run of other sizes or tools keeps the cells measured before (each N keeps
        # the date of its last run).
        cells = dict(results.get(family, {}).get("cells", {}) if results.get(family, {}).get("fp32") == run["fp32"] else {})
        for n, tools in run["cells"].items():
            cells[n] = {**cells.get(n, {}), **tools}
        results[family] = {**run, "cells": dict(sorted(cells.items(), key=lambda item: int(item[0])))}
        args.output.write_text(json.dumps(results, indent=1))
        print(_table(family, results[family]))
    return 0


def _run_family(family: str, sizes: list[int], tools: list[str], repeat: int) -> dict:
    fp32, qdq, data = FAMILIES[family]
    cells: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-collect-") as work:
        for n in sizes:
            inputs = Path(work) / f"inputs_{n}.npz"
            # In a child process: wait4's ru_maxrss of every later tool would otherwise include this process's own
            # peak (the kernel carries the parent's high-water mark into a vfork'ed child), e.g. det's 307 MB at N = 1000.
            subprocess.run([sys.executable, __file__, "--write-inputs", str(data), str(n), str(inputs),
                            json.dumps(AXES.get(family, {}))], check=True)
            for round_ in range(repeat):
                for tool in tools:
                    run = _run_tool(tool, fp32, qdq, inputs, Path(work) / f"b_{tool}_{n}_{round_}", AXES.get(family, {}))
                    cells.setdefault(str(n), {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}) \
                        .setdefault(tool, []).append(run)
                    print(f"{family} N={n} {tool} round {round_}: {run['seconds']:.2f} s, "
                          f"{run['rss_gb']:.2f} GB, load {run['load']:.1f}", file=sys.stderr)
            inputs.unlink()
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": _machine(),
            "fp32": str(fp32.relative_to(ROOT)), "qdq": str(qdq.relative_to(ROOT)), "cells": cells}


def _write_inputs(data: Path, n: int, target: Path, axes: dict) -> None:
    """The family's evaluation samples cycled to N along each input's batch axis (np.savez: stored members)."""
    with np.load(data) as d:
        arrays = {k: d[k] for k in d.files}
    rows = next(a.shape[axes.get(k, 0)] for k, a in arrays.items() if axes.get(k, 0) is not None)
    np.savez(target, **{k: a if axes.get(k, 0) is None else np.take(a, np.arange(n) % rows, axis=axes.get(k, 0))
                        for k, a in arrays.items()})


def _run_tool(tool: str, fp32: Path, qdq: Path, inputs: Path, bundle: Path, axes: dict) -> dict:
    if tool.startswith("floor"):
        command = [sys.executable, "-c", FLOOR, str(fp32), str(qdq), str(inputs), "1" if tool == "floor_nospin" else "0",
                   json.dumps(axes)]
    else:
        command = [sys.executable, "-m", "qdqreport", "collect", "--fp32", str(fp32), "--qdq", str(qdq),
                   "--inputs", str(inputs), "-o", str(bundle), "--quiet"]
        command += [f"--batch-axis={name}={'none' if axis is None else axis}" for name, axis in axes.items()]
        if tool == "per_layer":
            command += ["--per-layer", "--whatif-budget", "0"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    error = process.stderr.read().decode(errors="replace").strip()[-300:] if status else ""
    process.stderr.close()
    return {"seconds": round(seconds, 3), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
            "rss_gb": round(usage.ru_maxrss / 1024 ** 2, 3), "load": load,
            "exit": os.waitstatus_to_exitcode(status), "error": error}


def _prepare_det(model: Path | None) -> None:
    fp32, qdq, data = FAMILIES["det"]
    if fp32.exists() and qdq.exists() and data.exists():
        return
    if model is None or not model.exists():
        print("det: pass --det-model PATH/ch_PP-OCRv4_det_infer.onnx (rapidocr-onnxruntime 1.4.4 wheel)", file=sys.stderr)
        return
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    BENCH.mkdir(parents=True, exist_ok=True)
    onnx.save(onnx.load(str(model)), str(fp32))
    name = onnx.load(str(fp32), load_external_data=False).graph.input[0].name
    images = smooth_images(64, 160)
    np.savez(data, **{name: images})

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.rows = iter(images[:16])

        def get_next(self):
            row = next(self.rows, None)
            return None if row is None else {name: row[None]}

    quantize_static(str(fp32), str(qdq), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, extra_options={"ActivationSymmetric": True})


def _prepare_corpus_family(family: str, wheels: Path, images: Path) -> None:
    """The corpus family's FP32 model, evaluation inputs and healthy symmetric QDQ model, made exactly as
    scripts/make_corpus_families.py makes them (its own functions), into build/bench/."""
    if all(p.exists() for p in FAMILIES[family]):
        return
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_corpus_families as corpus

    if not (wheels / corpus.SOURCES[family]).exists():
        print(f"{family}: pass --wheels, a folder with the unpacked wheels ({corpus.SOURCES[family]})", file=sys.stderr)
        return
    BENCH.mkdir(parents=True, exist_ok=True)
    corpus.WORK = BENCH  # the script's functions read and write its module-level WORK folder
    corpus.prepare(wheels, images, {family})
    ops, nodes = CORPUS_RECIPES[family]
    corpus.ort_static(family, f"{family}_calib.npz", f"{family}_sym.onnx", True, ops, "minmax", nodes)


def _machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024 ** 3
    return f"{platform.machine()} {cpu}, {os.cpu_count()} cores, {memory:.0f} GB RAM, Python {platform.python_version()}"


def _table(family: str, result: dict) -> str:
    lines = [f"{family}: {result['date']}, {result['machine']}", "",
             "| N | floor | floor, no spinning | collect | collect --per-layer --whatif-budget 0 |", "|---|---|---|---|---|"]
    for n, tools in result["cells"].items():
        if "floor" not in tools and "collect" not in tools:
            continue
        floor = statistics.median(r["seconds"] for r in tools["floor"]) if "floor" in tools else None
        cells = []
        for tool in ("floor", "floor_nospin", "collect", "per_layer"):
            runs = tools.get(tool)
            if not runs:
                cells.append("not run")
                continue
            seconds = [r["seconds"] for r in runs]
            median = statistics.median(seconds)
            ratio = f" ({median / floor:.1f}x)" if floor and tool != "floor" else ""  # against the default floor
            failed = sum(1 for r in runs if r["exit"] != 0)
            cpu = [r["cpu_seconds"] for r in runs if "cpu_seconds" in r]  # runs before 2026-11-24 16:40 lack it
            cells.append(f"{median:.1f} s{ratio} [{min(seconds):.1f}-{max(seconds):.1f}], "
                         + (f"cpu {statistics.median(cpu):.1f} s, " if cpu else "")
                         + f"{statistics.median(r['rss_gb'] for r in runs):.2f} GB" + (f", {failed} failed" if failed else ""))
        loads = [r["load"] for tool, runs in tools.items() if tool != "date" for r in runs]
        when = f", {tools['date']}" if "date" in tools else ""
        lines.append(f"| {n} | " + " | ".join(cells) + f" |  <!-- load {min(loads):.1f}-{max(loads):.1f}{when} -->")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
