"""Per-layer localisation on real QDQ models: alignment, streaming statistics, local vs accumulated
error, and the measured what-if search (qdqreport.collect.align/layerwise/whatif)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from qdqreport.analysis.metrics import error_stats
from qdqreport.collect.align import align, dequantized_weight
from qdqreport.collect.exclusion import exclusion_variant
from qdqreport.collect.layerwise import LayerCollector, collect_layers
from qdqreport.collect.precision import precision_summary
from qdqreport.collect.qdq_graph import GraphIndex
from qdqreport.collect.whatif import WhatIfOptions, run_whatif

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "qdqreport" / "demo"
MODELS = ROOT / "tests" / "data" / "models"
INJECTED_TENSOR = "hardswish_3.tmp_0"  # its Q/DQ feeds only Conv@18 in ModelOpt's graph
INJECTED_NODE = "Conv@18"
MINILM = Path(os.environ.get("QDQREPORT_MINILM_DIR", ROOT / "benchmarks" / "models" / "minilm"))


@pytest.fixture(scope="module")
def fp32() -> onnx.ModelProto:
    return onnx.load(str(DEMO / "cls_fp32.onnx"))


@pytest.fixture(scope="module")
def samples(eval_x) -> list[dict[str, np.ndarray]]:
    return [{"x": eval_x[i:i + 1]} for i in range(12)]


def _injected(scale_factor: float = 0.02) -> onnx.ModelProto:
    """The healthy ModelOpt model with one activation's Q and DQ scale made 50x too small (heavy clipping)."""
    model = onnx.load(str(DEMO / "cls_int8.onnx"))
    names = {n.input[1] for n in model.graph.node
             if n.op_type in ("QuantizeLinear", "DequantizeLinear") and n.name.startswith(INJECTED_TENSOR + "_")}
    assert len(names) == 2
    for init in model.graph.initializer:
        if init.name in names:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * np.asarray(scale_factor, init_dtype(init)),
                                                  init.name))
    return model


def init_dtype(init: onnx.TensorProto) -> np.dtype:
    return onnx.helper.tensor_dtype_to_np_dtype(init.data_type)


@pytest.mark.parametrize(("qdq", "weights", "quantizers", "fused"), [
    (DEMO / "cls_int8.onnx", 49, 122, 0),  # ModelOpt: float weight -> Q -> DQ, FP16 graph
    (MODELS / "cls_modelopt_int8.onnx", 49, 122, 0),
    # ORT: w_quantized -> DQ (BN parameters and Add constants too); quantize_static drops the Relu/Clip after a node
    # whose output it quantizes, so that node outputs the Relu's tensor: its own FP32 output has no counterpart
    (MODELS / "cls_ort_int8.onnx", 108, 220, 33),
])
def test_alignment_on_real_modelopt_and_ort_layouts(fp32, qdq, weights, quantizers, fused):
    result = align(fp32, onnx.load(str(qdq)))
    assert len(result.tensors) == 232 - fused and not result.unmatched  # every FP32 compute output found
    assert len(result.skipped) == fused and {s.reason for s in result.skipped} <= {"fused"}
    assert all(t.name == t.qdq_name or t.qdq_name not in result.by_name() for t in result.tensors)
    assert len(result.weights) == weights and len(result.quantizers) == quantizers
    by_name = result.by_name()
    assert by_name["softmax_0.tmp_0"].op_type == "Softmax"  # renamed by the opset converter, still aligned


def test_weights_are_matched_where_qdq_loss_debug_finds_none(fp32, tmp_path):
    from onnxruntime.quantization.qdq_loss_debug import create_weight_matching

    qdq = onnx.load(str(DEMO / "cls_int8.onnx"))
    assert create_weight_matching(str(DEMO / "cls_fp32.onnx"), str(DEMO / "cls_int8.onnx")) == {}
    f_index, q_index = GraphIndex(fp32), GraphIndex(qdq)
    weights = align(f_index, q_index).weights
    conv = next(w for w in weights if w.name == "conv1_weights")
    value = f_index.constant_value(conv.name)
    dequantized = dequantized_weight(q_index, conv, value)
    assert dequantized.shape == value.shape and 25.0 < error_stats(value, dequantized).sqnr_db < 60.0


@pytest.mark.slow
def test_statistics_stream_without_growing_memory(fp32, eval_x):
    """tracemalloc peak of the accumulation loop: 16 samples must not need more than 4 did."""
    collector = LayerCollector(fp32, onnx.load(str(DEMO / "cls_int8.onnx")))
    feeds = [{"x": eval_x[i % len(eval_x):i % len(eval_x) + 1]} for i in range(20)]
    collector.add(feeds[0])  # warm-up: first-run allocations are not per-sample cost

    def peak(count: int) -> int:
        tracemalloc.start()
        for feed in feeds[:count]:
            collector.add(feed)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(4), peak(16)
    assert large <= small * 1.1 + 64 * 1024, (small, large)
    assert collector.samples == 21


@pytest.mark.slow
@pytest.mark.parametrize("pipeline_bytes", [None, 0])  # the overlapped loop, and the sample-by-sample fallback
def test_add_all_gives_the_same_numbers_as_add_one_by_one(fp32, samples, monkeypatch, pipeline_bytes):
    """add_all overlaps the next sample's runs with this one's folding: the same runs and the same sums in the
    same order as add(), so every row is equal, not close."""
    from qdqreport.collect import layerwise

    qdq = _injected()
    one_by_one = LayerCollector(fp32, qdq)
    for feed in samples:
        one_by_one.add(feed)
    if pipeline_bytes is not None:
        monkeypatch.setattr(layerwise, "PIPELINE_BYTES", pipeline_bytes)
    seen = []
    overlapped = LayerCollector(fp32, qdq)
    overlapped.add_all(samples, seen.append)
    expected, got = one_by_one.result(), overlapped.result()
    assert seen == list(range(len(samples)))
    assert got.layer_rows == expected.layer_rows and got.qnode_rows == expected.qnode_rows
    assert all(a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
               for a, b in zip(got.fp32_outputs, expected.fp32_outputs))


def test_without_kept_outputs_the_rows_are_the_same_and_nothing_is_held_per_sample(fp32, samples):
    """keep_outputs=False (per-layer without the what-if search): the same rows, no FP32 outputs kept per sample."""
    qdq = _injected()
    kept, dropped = LayerCollector(fp32, qdq), LayerCollector(fp32, qdq, keep_outputs=False)
    kept.add_all(samples)
    dropped.add_all(samples)
    expected, got = kept.result(), dropped.result()
    assert got.layer_rows == expected.layer_rows and got.qnode_rows == expected.qnode_rows
    assert got.fp32_outputs == [] and len(expected.fp32_outputs) == len(samples)


@pytest.mark.slow
def test_local_error_points_at_the_injected_node_and_accumulated_error_spreads(fp32, samples):
    result = collect_layers(fp32, _injected(), samples)
    rows = [r for r in result.layer_rows if r["kind"] == "activation"]
    worst_local = min(rows, key=lambda r: r["local_sqnr_db"])
    assert worst_local["node"] == INJECTED_NODE
    after = [r for r in rows if r["index"] > worst_local["index"] and r["op_type"] == "Conv"]
    inherited = [r for r in after if r["sqnr_db"] < 15.0 and r["local_sqnr_db"] > 20.0]
    assert inherited, "downstream convs inherit the error without adding it"
    clipped = next(q for q in result.qnode_rows if q["q_node"] == INJECTED_TENSOR + "_QuantizeLinear")
    assert clipped["clipped_share"] > 0.3 and result.summary["local"] is True


@pytest.mark.slow
def test_whatif_finds_the_injected_node_and_its_numbers_are_ort_runs(fp32, samples):
    qdq = _injected()
    collector = LayerCollector(fp32, qdq)
    for feed in samples:
        collector.add(feed)
    layers = collector.result()
    options = WhatIfOptions(budget=120, target_cosine=0.999, target_top1=0.0, candidates=6)
    rows, summary = run_whatif(collector.q_index, collector.f_index, samples, layers.fp32_outputs, layers.layer_rows,
                               precision_summary(qdq), set(), options)
    assert summary["candidates"][0] == INJECTED_NODE
    assert summary["baseline"]["cosine"] < 0.999 and summary["chosen"]["reached"]
    assert INJECTED_NODE in summary["chosen"]["nodes"] and len(summary["chosen"]["nodes"]) <= 2
    # Re-measure the chosen set independently: the table holds what ONNX Runtime really returns.
    import onnxruntime as ort

    variant = exclusion_variant(collector.q_index, summary["chosen"]["nodes"], collector.f_index)
    session = ort.InferenceSession(variant.SerializeToString(), providers=["CPUExecutionProvider"])
    name = session.get_outputs()[0].name
    cosines = [error_stats(ref[name], session.run([name], feed)[0]).cosine
               for feed, ref in zip(samples, layers.fp32_outputs)]
    assert float(np.median(cosines)) == pytest.approx(summary["chosen"]["cosine"], abs=1e-9)
    assert rows[0]["kind"] == "baseline" and all(r["seconds"] > 0 for r in rows)


@pytest.mark.slow
def test_collect_per_layer_end_to_end_on_the_broken_demo(tmp_path):
    from qdqreport.cli import main
    from qdqreport.pipeline import render_report

    out = tmp_path / "bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "8", "--per-layer", "--whatif-budget", "15",
                 "-o", str(out), "--quiet"])
    assert code == 0 and (out / "layers" / "summary.json").is_file()
    render_report(out, tmp_path / "report")
    markdown = (tmp_path / "report" / "report.md").read_text()
    html = (tmp_path / "report" / "report.html").read_text()
    assert "Per-layer localisation" in html and 'id="layers"' in html
    assert "QR200" in markdown and "QR201" in markdown and "x\\_QuantizeLinear" in markdown


@pytest.mark.skipif(not (MINILM / "minilm_fp32.onnx").is_file(),
                    reason="MiniLM-L6 is not in the repository (90 MB): run scripts/make_minilm.py to create "
                           "benchmarks/models/minilm/ (or set QDQREPORT_MINILM_DIR)")
def test_minilm_alignment_and_local_error():
    fp32 = onnx.load(str(MINILM / "minilm_fp32.onnx"))
    qdq = onnx.load(str(MINILM / "minilm_int8.onnx"))
    result = align(fp32, qdq)
    # Every float output of the 187 FP32 compute nodes and all 36 MatMul weights (6 layers x Q, K, V, O, FFN in/out).
    assert (len(result.tensors), len(result.weights), result.unmatched) == (187, 36, [])
    with np.load(MINILM / "eval.npz") as data:
        feeds = [{k: data[k][i:i + 1] for k in data.files} for i in range(4)]
    layers = collect_layers(fp32, qdq, feeds)
    worst = min((r for r in layers.layer_rows if r["kind"] == "activation"), key=lambda r: r["local_sqnr_db"])
    assert layers.summary["local"] is True and "/output/" in worst["node"]  # an FFN output (dense or residual Add)


@pytest.mark.slow
def test_exclusion_variant_on_ort_layout_uses_the_fp32_weights(fp32, eval_x):
    """ORT stores weights as `<w>_quantized`; the excluded node reads the FP32 model's weight instead."""
    import onnxruntime as ort

    q_index, f_index = GraphIndex(onnx.load(str(MODELS / "cls_ort_int8.onnx"))), GraphIndex(fp32)
    variant = exclusion_variant(q_index, ["Conv@0"], f_index)
    conv = next(n for n in variant.graph.node if n.name == "Conv@0")
    weights = {i.name: i for i in variant.graph.initializer}
    assert conv.input[0] == "x" and conv.input[1] in weights
    assert np.array_equal(numpy_helper.to_array(weights[conv.input[1]]), f_index.constant_value("conv1_weights"))
    feed = {"x": eval_x[:1]}
    reference = ort.InferenceSession(fp32.SerializeToString(), providers=["CPUExecutionProvider"])
    original = ort.InferenceSession(q_index.model.SerializeToString(), providers=["CPUExecutionProvider"])
    marked = ort.InferenceSession(_with_output(variant, "conv2d_53.tmp_0"), providers=["CPUExecutionProvider"])
    exact = _with_output(fp32, "conv2d_53.tmp_0")
    want = ort.InferenceSession(exact, providers=["CPUExecutionProvider"]).run(["conv2d_53.tmp_0"], feed)[0]
    got = marked.run(["conv2d_53.tmp_0"], feed)[0]
    assert np.allclose(got, want, atol=1e-4)  # Conv@0 now computes in float exactly as the FP32 model does
    assert original.run(None, feed)[0].shape == reference.run(None, feed)[0].shape


def _with_output(model: onnx.ModelProto, name: str) -> bytes:
    from qdqreport.collect.models import with_extra_outputs

    return with_extra_outputs(model, [name])
