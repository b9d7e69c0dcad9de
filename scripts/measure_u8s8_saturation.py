"""Measure whether ONNX Runtime's U8S8 integer kernels (UINT8 activations x INT8 weights) saturate on this CPU.

    nice -n 10 python scripts/measure_u8s8_saturation.py [--only cls yolo cap ori] [--wheels /tmp/ex]

For each `*_ort_uint8` corpus recipe (onnxruntime quantize_static defaults, per-channel INT8 weights, asymmetric
UINT8 activations, made by the same functions as scripts/make_corpus*.py) the QDQ model is run in ONNX Runtime
(CPU) three ways, each compared with the FP32 model on the case's evaluation set:

  fused    the session as collect runs it: Q/DQ fused into QLinearConv / integer kernels
  unfused  the same model with SessionOptions "session.disable_quant_qdq" = "1": DequantizeLinear -> float Conv,
           the same quantized weights and activations, no integer kernel (so nothing can saturate)
  rr       the same recipe with reduce_range=True (7-bit weights), fused

On an x86-64 CPU with AVX2 but no VNNI, the U8S8 kernel adds pairs of u8*s8 products in int16 (VPMADDUBSW) and
saturates; if `unfused` agrees with FP32 where `fused` does not, the loss is that saturation, not the quantization.
Missing QDQ models are made in build/corpus-work/ (the corpus names); reduce_range models go to
build/corpus-work/scratch/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
WORK = ROOT / "build" / "corpus-work"
SCRATCH = WORK / "scratch"


def make(family: str, output: Path, reduce_range: bool) -> None:
    import onnxruntime.quantization as quantization

    original = quantization.quantize_static

    def patched(*args, **kwargs):
        kwargs["reduce_range"] = reduce_range
        return original(*args, **kwargs)

    quantization.quantize_static = patched
    try:
        if family == "cls":
            import make_corpus

            make_corpus.ort_static("cls_fp32.onnx", "cls_calib.npy", str(output.relative_to(WORK)), False, ["Conv"])
        elif family == "yolo":
            import make_corpus_families

            make_corpus_families.ort_static("yolo", "yolo_calib.npz", str(output.relative_to(WORK)), False, ["Conv"],
                                            "minmax", None)
        else:  # cap, ori: make_corpus_part2's Convs-only default recipe
            import make_corpus_part2

            make_corpus_part2.ort_static(family, f"{family}_calib.npz", str(output.relative_to(WORK)), False, ["Conv"],
                                         "minmax", None, True)
    finally:
        quantization.quantize_static = original


def feeds(family: str) -> list[dict[str, np.ndarray]]:
    if family == "cls":
        return [{"x": row[None]} for row in np.load(WORK / "cls_eval.npy")]
    import make_corpus_part2

    return make_corpus_part2.eval_feeds(family)


def run(model: Path, family: str, unfused: bool = False) -> list[dict[str, np.ndarray]]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if unfused:
        options.add_session_config_entry("session.disable_quant_qdq", "1")
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return [dict(zip(names, session.run(None, feed))) for feed in feeds(family)]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def task(family: str, fp32: list[dict], other: list[dict]) -> str:
    import make_corpus_part2 as p2

    first = lambda r: r[next(iter(r))]  # noqa: E731
    if family in ("cls", "ori"):
        a = np.concatenate([first(r) for r in fp32])
        b = np.concatenate([first(r) for r in other])
        return (f"{int((a.argmax(1) == b.argmax(1)).sum())}/{len(a)} top-1 as FP32, "
                f"max |dp| {float(np.abs(a - b).max()):.3f}")
    if family == "yolo":
        ref = [p2.yolo_detections(first(r)) for r in fp32]
        got = [p2.yolo_detections(first(r)) for r in other]
        kept = sum(p2.matched(x, y) for x, y in zip(ref, got))
        total, found = sum(len(x) for x in ref), sum(len(y) for y in got)
        return f"{kept}/{total} FP32 detections kept, {found - kept} extra"
    same = sum(p2.ctc_string(a["ctc_index"]) == p2.ctc_string(b["ctc_index"]) for a, b in zip(fp32, other))
    steps = np.mean([np.mean(a["ctc_index"] == b["ctc_index"]) for a, b in zip(fp32, other)])
    return f"{same}/{len(fp32)} strings as FP32 ({steps:.1%} of CTC steps)"


def output_cosine(fp32: list[dict], other: list[dict]) -> float:
    """The worst per-sample cosine over every float output."""
    return min(cosine(a[k], b[k]) for a, b in zip(fp32, other) for k in a if np.issubdtype(a[k].dtype, np.floating))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=["cls", "yolo", "cap", "ori"])
    parser.add_argument("--wheels", type=Path, default=Path("/tmp/ex"))
    args = parser.parse_args()
    import make_corpus_part2

    if (args.wheels / "ddddocr" / "charsets.py").exists():
        make_corpus_part2.load_charset(args.wheels)
    cpu = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    flags = set(next((line.split(":", 1)[1].split() for line in cpu.splitlines() if line.startswith("flags")), []))
    print(f"CPU: avx2={'avx2' in flags} avx512f={'avx512f' in flags} avx512_vnni={'avx512_vnni' in flags} "
          f"avx_vnni={'avx_vnni' in flags}", flush=True)
    SCRATCH.mkdir(parents=True, exist_ok=True)
    names = {"cls": "cls_ort_u8.onnx"}
    for family in args.only:
        u8 = WORK / names.get(family, f"{family}_u8.onnx")
        rr = SCRATCH / f"{family}_u8_reduce_range.onnx"
        for path, reduce in ((u8, False), (rr, True)):
            if not path.exists():
                print(f"making {path.relative_to(ROOT)}", flush=True)
                make(family, path, reduce)
        fp32 = run(WORK / f"{family}_fp32.onnx", family)
        for label, outputs in (("fused", run(u8, family)), ("unfused", run(u8, family, unfused=True)),
                               ("reduce_range", run(rr, family))):
            print(f"{family} {label:13s} {task(family, fp32, outputs)}; worst output cosine "
                  f"{output_cosine(fp32, outputs):.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
