"""The per-layer pass on a graph pair it cannot fully align: an FP32 model and a QDQ model quantized from a
pre-processed copy of it, as ONNX Runtime recommends (`quant_pre_process`, then `quantize_static` on its output).

The pre-processing fuses nodes (Conv+BatchNormalization in the demo classifier; in a user's ViT also a Transpose moved
across tensors that keep their names, which crashed the pass with an internal error: the local graph fed an FP32
tensor of another shape into the QDQ graph), and quantize_static drops the Relu after a Conv. The FP32 model the user
passes is the original, so some tensors the names pair are not the same quantity. The pass compares what is the
same, skips the rest and says how many and why; with nothing to compare it records itself as skipped with the fix.
Never an internal error. Real models: the repository's l2net (two Conv+Relu) and the demo classifier.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from onnx_files import FeedReader
from qdqreport.bundle.artifacts import check_artifact
from qdqreport.cli import main
from qdqreport.collect.align import SKIP_FUSED, check_pairs, align
from qdqreport.collect.layers_stage import SKIP_HINT, run_per_layer
from qdqreport.collect.layerwise import LayerCollector
from qdqreport.collect.whatif import WhatIfOptions
from qdqreport.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "data" / "models"
DEMO = ROOT / "qdqreport" / "demo"


@pytest.fixture(scope="module")
def crops() -> np.ndarray:
    with np.load(DEMO / "eval.npz") as data:
        return np.ascontiguousarray(data["x"][:6], dtype=np.float32)


def _preprocessed_pair(work: Path, original: Path, crops: np.ndarray, **pre_options) -> dict[str, Path]:
    """*original* pre-processed by quant_pre_process, then quantized by quantize_static from that copy (per tensor:
    the demo classifier is opset 11), as ONNX Runtime's documentation recommends."""
    from onnxruntime.quantization import QuantFormat, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    pre, qdq = work / f"{original.stem}_pre.onnx", work / f"{original.stem}_int8.onnx"
    quant_pre_process(str(original), str(pre), **pre_options)
    quantize_static(str(pre), str(qdq), FeedReader([{"x": crops[i:i + 1]} for i in range(2)]), quant_format=QuantFormat.QDQ)
    np.save(work / "eval.npy", crops)
    return {"fp32": original, "pre": pre, "qdq": qdq, "eval": work / "eval.npy"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, crops: np.ndarray) -> dict[str, Path]:
    """l2net: two Conv+Relu, each Relu dropped by quantize_static (0.2 s)."""
    return _preprocessed_pair(tmp_path_factory.mktemp("l2net"), MODELS / "l2net_fp32.onnx", crops)


@pytest.fixture(scope="module")
def cls_pair(tmp_path_factory: pytest.TempPathFactory, crops: np.ndarray) -> dict[str, Path]:
    """The demo classifier (MobileNetV3): quant_pre_process folds its BatchNormalizations into the Convs (the symbolic
    shape inference it runs first fails on this Paddle export: skipped, as ONNX Runtime's message advises)."""
    return _preprocessed_pair(tmp_path_factory.mktemp("cls"), DEMO / "cls_fp32.onnx", crops, skip_symbolic_shape=True)


def test_the_pre_processing_fused_nodes_that_the_names_still_pair(pair: dict[str, Path]) -> None:
    """The premise: by the node of the same name, conv1's output pairs with the fused node's, relu1's (another
    quantity of the same shape); the pair must be skipped, not compared."""
    fp32, qdq = onnx.load(str(pair["fp32"])), onnx.load(str(pair["qdq"]))
    alignment = align(fp32, qdq)
    assert {(s.name, s.qdq_name, s.reason) for s in alignment.skipped} == {
        ("conv1.out", "relu1.out", SKIP_FUSED), ("conv2.out", "features", SKIP_FUSED)}
    assert {t.name for t in alignment.tensors} >= {"relu1.out", "features"}
    assert all(t.name == t.qdq_name for t in alignment.tensors)


def test_pairs_of_another_shape_are_neither_compared_nor_fed_to_the_local_graph(pair, crops) -> None:
    """check_pairs on real values: a tensor whose two sides differ in shape (quant_pre_process's transpose optimizer
    keeps a name across a moved Transpose) leaves the pairs; the others stay."""
    fp32, qdq = onnx.load(str(pair["fp32"])), onnx.load(str(pair["qdq"]))
    collector = LayerCollector(fp32, qdq, keep_outputs=False)
    values, qvalues = collector._run_marked({"x": crops[:1]})
    assert collector.local is not None and not collector.alignment.skipped[2:]  # the two fused pairs only
    moved = dict(values, **{"relu1.out": np.swapaxes(values["relu1.out"], 2, 3)})
    checked = check_pairs(align(fp32, qdq), moved, qvalues)
    skipped = {s.name: s for s in checked.skipped}
    assert skipped["relu1.out"].reason == "shape" and skipped["relu1.out"].fp32 == "float32[1, 16, 192, 48]"
    assert skipped["relu1.out"].qdq == "float32[1, 16, 48, 192]"
    assert "relu1.out" not in {t.name for t in checked.tensors} and "features" in {t.name for t in checked.tensors}


@pytest.mark.slow
def test_collect_per_layer_with_the_original_fp32_model_compares_what_is_the_same(cls_pair, tmp_path: Path) -> None:
    """The user's command with the original FP32 model: exit 0; the Convs whose BatchNormalization the pre-processing
    folded (and those whose Relu the quantizer dropped) counted and not compared; every compared pair gives the numbers
    it gives with the pre-processed FP32 model; the report says so in one line."""
    pair = cls_pair
    bundle, reference = tmp_path / "b", tmp_path / "b_pre"
    common = ["--qdq", str(pair["qdq"]), "--inputs", str(pair["eval"]), "--per-layer", "--whatif-budget", "0", "--quiet"]
    assert main(["collect", "--fp32", str(pair["fp32"]), *common, "-o", str(bundle)]) == 0
    assert main(["collect", "--fp32", str(pair["pre"]), *common, "-o", str(reference)]) == 0
    summary = json.loads((bundle / "layers" / "summary.json").read_text())
    pre_summary = json.loads((reference / "layers" / "summary.json").read_text())
    check_artifact("layers_summary", summary, "layers/summary.json")
    assert summary["skipped_reasons"] == {"fused": summary["skipped_tensors"]} and len(summary["skipped"]) == 20
    # The pre-processing's folds come on top of the quantizer's: the first Conv's output, before its BatchNormalization
    assert summary["skipped_tensors"] > pre_summary["skipped_tensors"] > 0
    assert {"tensor": "conv2d_53.tmp_0", "qdq_tensor": "batch_norm_0.tmp_2", "kind": "activation", "reason": "fused",
            "fp32": "", "qdq": ""} in summary["skipped"]
    assert "status" not in summary and summary["local"] is True and summary["aligned_tensors"] > 100

    def rows(path: Path) -> dict[str, dict[str, str]]:
        table = next((path / "compare").glob("*.layers.csv"))
        with table.open(newline="", encoding="utf-8") as handle:
            return {r["tensor"]: r for r in csv.DictReader(handle) if r["kind"] == "activation"}

    got, expected = rows(bundle), rows(reference)
    assert "conv2d_53.tmp_0" not in got and "batch_norm_0.tmp_2" in got
    common = set(got) & set(expected)  # the pre-processed graph also lost the Softmax's own name
    assert len(got) == summary["aligned_tensors"] and len(common) >= len(got) - 1
    for name in common:  # the same quantity on both sides: the numbers of the pre-processed FP32 model
        for column in ("cosine", "local_cosine"):
            assert float(got[name][column]) == pytest.approx(float(expected[name][column]), abs=1e-4), (name, column)
    out = tmp_path / "report"
    assert main(["report", str(bundle), "-o", str(out)]) == 0
    lines = [line for line in (out / "report.md").read_text(encoding="utf-8").splitlines() if "Not compared" in line]
    assert len(lines) == 1, lines
    assert f"{summary['skipped_tensors']} tensor(s)" in lines[0] and "fused with the next node" in lines[0]


def test_a_pair_with_nothing_in_common_records_the_pass_as_skipped(crops) -> None:
    """Two real models of the same input and nothing else in common: no activation to compare, so the pass is
    recorded as skipped with a one-line reason naming the fix, and writes no table."""
    fp32, qdq = onnx.load(str(MODELS / "l2net_fp32.onnx")), onnx.load(str(DEMO / "cls_int8.onnx"))
    result = run_per_layer(fp32, qdq, [{"x": crops[i:i + 1]} for i in range(3)], None, WhatIfOptions(budget=0),
                           Progress(quiet=True))
    summary = result.summary
    check_artifact("layers_summary", summary, "layers/summary.json")
    assert summary["status"] == "skipped" and SKIP_HINT in summary["reason"] and "\n" not in summary["reason"]
    assert result.layer_rows == [] and result.qnode_rows == [] and summary["samples"] == 0


SAMPLE = ROOT / "tests" / "data" / "bundles" / "orinet_s8s8_per_layer"


def _rewritten(tmp_path: Path, summary: dict, tables: bool) -> Path:
    """The sample per-layer bundle with *summary* as layers/summary.json (and without its per-layer tables)."""
    import hashlib
    import shutil

    bundle = tmp_path / "bundle"
    shutil.copytree(SAMPLE, bundle)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    data = json.dumps(summary).encode()
    (bundle / "layers" / "summary.json").write_bytes(data)
    manifest["files"]["layers/summary.json"] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    if not tables:
        comparison = manifest["comparisons"][0]
        for kind in ("layers", "qnodes", "whatif"):
            path = comparison["tables"].pop(kind)
            (bundle / path).unlink()
            del manifest["files"][path]
        (bundle / "layers" / "whatif.json").unlink()
        del manifest["files"]["layers/whatif.json"], manifest["artifacts"]["whatif_summary"]
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return bundle


def test_the_report_of_a_skipped_pass_says_why_in_one_line(tmp_path: Path) -> None:
    reason = f"no activation of the two graphs is the same quantity (3 paired by name differ in shape or were fused); {SKIP_HINT}"
    bundle = _rewritten(tmp_path, {"format": 1, "status": "skipped", "reason": reason, "samples": 0, "of_samples": 8,
                                   "skipped_tensors": 3, "skipped_reasons": {"shape": 3}}, tables=False)
    out = tmp_path / "report"
    assert main(["report", str(bundle), "-o", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    section = text.split("### Per-layer localisation", 1)[1].strip().splitlines()
    assert section[0].startswith("Skipped: no activation of the two graphs") and "quant\\_pre\\_process" in section[0]
    assert "Skipped: no activation" in (out / "report.html").read_text(encoding="utf-8")


def test_skipped_pairs_are_checked_when_read(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    summary = json.loads((SAMPLE / "layers" / "summary.json").read_text(encoding="utf-8"))
    bad = dict(summary, skipped_tensors=2, skipped_reasons={"shape": 2}, skipped=[{"tensor": "t", "reason": 7}])
    assert main(["validate", str(_rewritten(tmp_path, bad, tables=True))]) == 2
    assert "skipped[0].reason must be a string" in capsys.readouterr().err
