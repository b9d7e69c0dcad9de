"""Real seed bundles for the fuzzer: the sample bundles, corpus bundles, the demo with --per-layer, an imported engine.

Each seed is held in memory as {relative path: bytes}; the mutator never touches the originals.
Bundles that must be made first (the demo, the imported engine) are built once into a cache folder.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "qdqreport" / "demo"
TRT_DATA = ROOT / "qdqreport" / "testing" / "data" / "trt"
# Committed bundles, each covering a part of the schema the others do not.
COMMITTED = {
    "cls_calib_x255": ROOT / "sample_bundles" / "cls_calib_x255",  # ModelOpt log, FP16 check, tensors table
    "cls_healthy": ROOT / "sample_bundles" / "cls_healthy",
    "trt_layerinfo": ROOT / "sample_bundles" / "trt_mobilenet_qat_layerinfo",  # import-trt --new: layer info, profile
    "cls_task": ROOT / "corpus" / "cls_postprocess_double_softmax",  # task results (collect --postprocess)
    "lm_slices": ROOT / "corpus" / "lm_modelopt_default",  # transformer: integer inputs, sliced outputs
    "det_fp16": ROOT / "corpus" / "det_fp16_default",  # detector: several outputs, FP16 damage
}


def read_folder(folder: Path) -> dict[str, bytes]:
    """Every regular file under *folder*, keyed by its POSIX path relative to it."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def load_seeds(cache: Path, built: bool = True) -> dict[str, dict[str, bytes]]:
    """Seed name -> files. *built*: also the demo collected with --per-layer and a bundle with an imported engine."""
    seeds = {name: read_folder(path) for name, path in COMMITTED.items()}
    if built:
        seeds["demo_per_layer"] = read_folder(_demo_per_layer(cache))
        seeds["cls_imported_trt"] = read_folder(_imported_engine(cache))
    return seeds


def _run(argv: list[str]) -> None:
    from qdqreport.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"building a fuzz seed failed: qdqreport {' '.join(argv)} exited {code}")


def _demo_per_layer(cache: Path) -> Path:
    """The demo's broken classifier collected with --per-layer (layers, qnodes, what-if tables), 8 samples."""
    out = cache / "demo_per_layer"
    if not (out / "manifest.json").is_file():
        shutil.rmtree(out, ignore_errors=True)
        _run(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
              "--inputs", str(DEMO / "eval.npz"), "--calib", str(DEMO / "calib_x255.npz"),
              "--modelopt-log", str(DEMO / "modelopt_x255.log"), "--max-samples", "8", "--per-layer",
              "--whatif-budget", "8", "-o", str(out), "--quiet"])
    return out


def _imported_engine(cache: Path) -> Path:
    """A collected sample bundle with real trtexec layer info, profile and build metadata imported as trt_int8."""
    out = cache / "cls_imported_trt"
    if not (out / "manifest.json").is_file():
        shutil.rmtree(out, ignore_errors=True)
        prefix = TRT_DATA / "tests_inputs_mobilenet.qat.onnx.engine"
        _run(["import-trt", str(COMMITTED["cls_calib_x255"]), "-o", str(out), "--stage", "trt_int8",
              "--layer-info", f"{prefix}.graph.json", "--profile", f"{prefix}.profile.json",
              "--build-settings", f"{prefix}.build.metadata.json"])
    return out
