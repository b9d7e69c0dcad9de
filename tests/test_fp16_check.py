"""The FP16 check on real models: the FP32-float rewrite of a real ModelOpt QDQ model, the streaming
FP32 range scan, the control stage in a collected bundle, QR011 on real runs, and the report section."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, numpy_helper

from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import fp16_evidence
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.fp16_check import run_fp16_check
from qdqreport.collect.fp32_float import HALF_TYPES, float_constants, has_half_float, restore_fp32_float
from qdqreport.engine import run_rules
from qdqreport.progress import Progress
from qdqreport.render.filters import num

MODELS = Path(__file__).resolve().parent / "data" / "models"
DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"
CLS_OUTPUT = "save_infer_model/scale_0.tmp_1"


def _eval(count: int) -> np.ndarray:
    with np.load(DEMO / "eval.npz") as data:
        return data["x"][:count]


def _session(model: onnx.ModelProto | Path) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _constants(model: onnx.ModelProto) -> dict[str, TensorProto]:
    found = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            found[node.output[0]] = node.attribute[0].t
    return found


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- the FP32-float rewrite ----------------------------------------------------------------
def test_rewrite_of_a_real_modelopt_model_keeps_qdq_and_leaves_no_fp16():
    qdq, fp32 = onnx.load(str(MODELS / "cls_modelopt_int8.onnx")), onnx.load(str(MODELS / "cls_fp32.onnx"))
    originals = float_constants(fp32)
    control = restore_fp32_float(qdq, originals)
    onnx.checker.check_model(control)
    assert has_half_float(qdq) and not has_half_float(control)
    before, after = _constants(qdq), _constants(control)
    assert all(t.data_type not in HALF_TYPES for t in after.values())
    qdq_nodes = [(n.name, tuple(n.input), tuple(n.output)) for n in qdq.graph.node if n.op_type.endswith("Linear")]
    assert qdq_nodes == [(n.name, tuple(n.input), tuple(n.output)) for n in control.graph.node
                         if n.op_type.endswith("Linear")]
    restored = upcast = 0
    for name, tensor in before.items():
        if tensor.data_type != TensorProto.FLOAT16:
            continue
        value = numpy_helper.to_array(after[name])
        if name in originals and originals[name].shape == value.shape:
            restored += 1  # the FP32 model's value itself, not the FP16 rounding of it
            assert np.array_equal(value, originals[name])
        else:
            upcast += 1  # Q/DQ scales: the same values, exactly
            assert np.array_equal(value, numpy_helper.to_array(tensor).astype(np.float32))
    assert restored > 50 and upcast > 50


def test_rewrite_restores_a_constant_that_overflowed_in_fp16(tmp_path: Path):
    # Plant what ModelOpt's conversion did to DBNet's BatchNormalization variance: an FP32 value beyond 65504
    # whose FP16 copy is inf. Upcasting would keep inf; the rewrite must take the FP32 original.
    qdq, fp32 = onnx.load(str(MODELS / "cls_modelopt_int8.onnx")), onnx.load(str(MODELS / "cls_fp32.onnx"))
    originals = float_constants(fp32)
    name, tensor = next((n, t) for n, t in _constants(qdq).items() if t.data_type == TensorProto.FLOAT16
                        and n in originals and originals[n].size > 1)
    big = (originals[name] + 1e5).astype(np.float32)
    with np.errstate(over="ignore"):
        tensor.CopyFrom(numpy_helper.from_array(big.astype(np.float16), tensor.name))
    assert np.isinf(numpy_helper.to_array(tensor)).all()
    value = numpy_helper.to_array(_constants(restore_fp32_float(qdq, {**originals, name: big}))[name])
    assert np.array_equal(value, big)
    # A constant a quantizer rewrote under its original name (values not an FP16 copy) is upcast, not replaced.
    other = numpy_helper.to_array(_constants(restore_fp32_float(qdq, {**originals, name: np.ones_like(big)}))[name])
    assert np.isinf(other).all()


@pytest.mark.slow
def test_control_of_the_demo_model_agrees_with_fp32_as_the_qdq_model_does():
    # ModelOpt's FP16 float part is harmless on the well calibrated demo classifier: the control's outputs
    # agree with FP32 as closely as the QDQ model's do.
    qdq_path, fp32 = DEMO / "cls_int8.onnx", onnx.load(str(DEMO / "cls_fp32.onnx"))
    control = _session(restore_fp32_float(onnx.load(str(qdq_path)), float_constants(fp32)))
    reference, qdq = _session(DEMO / "cls_fp32.onnx"), _session(qdq_path)
    cosines = {"control": [], "qdq": []}
    for row in _eval(16):
        feed = {"x": row[None]}
        ref = reference.run(None, feed)[0]
        cosines["control"].append(_cosine(ref, control.run(None, feed)[0]))
        cosines["qdq"].append(_cosine(ref, qdq.run(None, feed)[0]))
    control_median, qdq_median = np.median(cosines["control"]), np.median(cosines["qdq"])
    assert control_median > 0.999 and abs(control_median - qdq_median) < 0.001


# --- the range scan ------------------------------------------------------------------------
def test_range_scan_streams_the_fp32_ranges_of_the_fp16_tensors():
    fp32, qdq = onnx.load(str(MODELS / "l2net_fp32.onnx")), onnx.load(str(MODELS / "l2net_modelopt_int8.onnx"))
    samples = [{"x": row[None]} for row in _eval(12)]
    check = run_fp16_check(fp32, qdq, samples, "cpu", Progress(quiet=True))
    rows = {r["tensor"]: r for r in check.rows}
    # Independently: the FP32 model's sum of squares, sample by sample.
    marked = onnx.load(str(MODELS / "l2net_fp32.onnx"))
    marked.graph.output.append(onnx.helper.make_empty_tensor_value_info("sum_of_squares"))
    session = _session(marked)
    sums = np.array([session.run(["sum_of_squares"], s)[0].item() for s in samples])
    row = rows["sum_of_squares"]
    assert row["kind"] == "activation" and row["samples"] == 12 and row["values"] == 12
    assert row["fp32_absmax"] == pytest.approx(float(sums.max()), rel=1e-6)
    assert row["overflow"] == int((sums > 65504).sum()) > 0
    assert row["consumers"] == "l2_norm"
    assert {r["tensor"] for r in check.rows if r["overflow"]} == {"sum_of_squares"}
    assert check.summary["activations_beyond_fp16"] == 1 and check.summary["constants_damaged"] == 0
    assert check.control.error is None and len(check.control.outputs) == 12


def test_range_scan_reads_16_samples_spread_over_the_set_and_says_so():
    """Issue 12: the scan (a marked FP32 run per sample and its folding) was the largest cost of the default collect
    on the demo classifier at N = 128; it names tensors, the control (every sample) is the measurement."""
    from qdqreport.collect.activation_ranges import spread_indices
    from qdqreport.collect.fp16_check import RANGE_SCAN_SAMPLES

    fp32, qdq = onnx.load(str(MODELS / "l2net_fp32.onnx")), onnx.load(str(MODELS / "l2net_modelopt_int8.onnx"))
    samples = [{"x": row[None]} for row in _eval(40)]
    check = run_fp16_check(fp32, qdq, samples, "cpu", Progress(quiet=True))
    picked = spread_indices(40, RANGE_SCAN_SAMPLES)
    assert RANGE_SCAN_SAMPLES == 16 and len(picked) == 16 and picked[0] == 0 and picked[-1] == 39
    marked = onnx.load(str(MODELS / "l2net_fp32.onnx"))
    marked.graph.output.append(onnx.helper.make_empty_tensor_value_info("sum_of_squares"))
    session = _session(marked)
    sums = np.array([session.run(["sum_of_squares"], samples[i])[0].item() for i in picked])
    row = next(r for r in check.rows if r["tensor"] == "sum_of_squares")
    assert row["samples"] == 16 and row["overflow"] == int((sums > 65504).sum()) > 0
    assert row["fp32_absmax"] == pytest.approx(float(sums.max()), rel=1e-6)
    assert check.summary["samples"] == 40 and check.summary["range_samples"] == 16
    assert "spread evenly" in check.summary["range_sample_choice"] and len(check.control.outputs) == 40


# --- collect, QR011 and the report ---------------------------------------------------------
@pytest.fixture(scope="module")
def l2net_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("l2net") / "bundle"
    assert main(["collect", "--fp32", str(MODELS / "l2net_fp32.onnx"), "--qdq", str(MODELS / "l2net_modelopt_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "12", "-o", str(out), "--quiet"]) == 0
    return out


@pytest.mark.slow
def test_collect_records_the_control_stage_and_the_ranges(l2net_bundle: Path):
    assert main(["validate", str(l2net_bundle)]) == 0
    ctx = Context(Bundle(l2net_bundle))
    assert ctx.stage("ort_qdq_fp32").status == "ok"
    control = next(c for c in ctx.manifest["comparisons"] if c.get("control") == "fp32_float")
    assert (control["reference"], control["candidate"], control["purpose"]) == ("ort_fp32", "ort_qdq_fp32", "other")
    evidence = fp16_evidence(ctx)
    assert [r["tensor"] for r in evidence.overflowing] == ["sum_of_squares"]
    (gain,) = evidence.gains
    assert gain.qdq > 0.99 and gain.control > 0.99  # ONNX Runtime CPU computed the sum in FP32: nothing overflowed


@pytest.mark.slow
def test_qr011_warns_of_the_overflow_this_runtime_did_not_show(l2net_bundle: Path):
    findings = run_rules(Context(Bundle(l2net_bundle))).findings
    (finding,) = [f for f in findings if f.rule_id == "QR011"]
    assert finding.severity == "warning" and finding.subject == "sum_of_squares"
    (row,) = fp16_evidence(Context(Bundle(l2net_bundle))).overflowing
    assert f"{row['fp32_absmax']:.3g}" in finding.summary and "--high_precision_dtype fp32" in finding.fixes[0].command
    assert not [f for f in findings if f.severity == "error"]


@pytest.mark.slow
def test_qr011_stays_quiet_when_int8_is_at_fault(broken_bundle: Path):
    # The ×255-calibrated demo model collapses; its FP32-float control collapses as much.
    ctx = Context(Bundle(broken_bundle))
    (gain,) = fp16_evidence(ctx).gains
    assert gain.qdq < 0.9 and abs(gain.control - gain.qdq) < 0.1
    assert "QR011" not in {f.rule_id for f in run_rules(ctx).findings}


@pytest.mark.slow
def test_report_shows_the_fp16_section(l2net_bundle: Path, tmp_path: Path):
    assert main(["report", str(l2net_bundle), "-o", str(tmp_path / "out")]) == 0
    markdown = (tmp_path / "out" / "report.md").read_text()
    section = markdown[markdown.index("### FP16 check"):markdown.index("### Precision")]
    (row,) = fp16_evidence(Context(Bundle(l2net_bundle))).overflowing
    assert "| sum\\_of\\_squares | activation | " + num(row["fp32_absmax"]) + f" | {row['overflow']} |" in section
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'id="fp16"' in html and '<a href="#fp16">' in html and "<code>sum_of_squares</code>" in html
    section = html[html.index('<section id="fp16">'):]
    assert f'<td class="n">{num(row["overflow"])}</td>' in section  # beyond 65504
    assert f'<td class="n">{num(row["values"])}</td><td><code>sum_of_squares</code>' in section  # of values


def test_no_fp16_check_writes_no_control(tmp_path: Path):
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(MODELS / "l2net_fp32.onnx"), "--qdq", str(MODELS / "l2net_modelopt_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "2", "-o", str(out), "--quiet",
                 "--no-fp16-check"]) == 0
    ctx = Context(Bundle(out))
    assert ctx.stage("ort_qdq_fp32") is None and fp16_evidence(ctx) is None
    assert main(["report", str(out), "-o", str(tmp_path / "out")]) == 0
    assert "FP16 check" not in (tmp_path / "out" / "report.md").read_text()


def test_a_control_that_cannot_run_is_a_failed_stage_not_a_failed_collect(tmp_path: Path):
    # A node no runtime implements: ort_qdq fails, and so does the control built from the same graph.
    model = onnx.load(str(MODELS / "l2net_modelopt_int8.onnx"))
    node = next(n for n in model.graph.node if n.op_type == "Sqrt")
    node.domain = "com.example.missing"
    model.opset_import.append(onnx.helper.make_opsetid("com.example.missing", 1))
    onnx.save(model, tmp_path / "bad.onnx")
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(MODELS / "l2net_fp32.onnx"), "--qdq", str(tmp_path / "bad.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "2", "-o", str(out), "--quiet"]) == 0
    ctx = Context(Bundle(out))
    control = ctx.stage("ort_qdq_fp32")
    assert control.status == "failed" and "com.example.missing" in control.error
    evidence = fp16_evidence(ctx)
    assert evidence.gains == [] and [r["tensor"] for r in evidence.overflowing] == ["sum_of_squares"]
    assert main(["report", str(out), "-o", str(tmp_path / "out")]) == 0
    assert "**failed**" in (tmp_path / "out" / "report.md").read_text()


def test_qr011_ranks_first_on_the_real_dbnet_collapse():
    # corpus/det_fp16_default: PP-OCRv4 DBNet under ModelOpt's defaults, collected for real (scripts/make_corpus.py).
    ctx = Context(Bundle(Path(__file__).resolve().parent.parent / "corpus" / "det_fp16_default"))
    findings = run_rules(ctx).findings
    first = findings[0]
    assert first.rule_id == "QR011" and first.severity == "error" and first.subject == "batch_norm_0.w_2"
    (gain,) = fp16_evidence(ctx).gains
    # Most of the loss won back (72%): scored above the unmeasured INT8 hypotheses, 0.9 + share / 10.
    assert gain.qdq < 0.1 < 0.5 < gain.control and first.score == pytest.approx(0.9 + gain.recovered / 10, abs=1e-4)
    assert any("--op_types_to_exclude_fp16 BatchNormalization" in fix.command for fix in first.fixes)
    # The INT8 findings stay in the list, below it: what the control still loses is theirs.
    assert {"QR001", "QR002"} <= {f.rule_id for f in findings[1:]}


@pytest.mark.slow
def test_a_damaged_constant_without_fp32_original_is_reported_not_a_crash(tmp_path: Path):
    # What a quantizer that folds BatchNormalization into Conv parameters and keeps their names leaves: an FP16
    # constant that is no FP16 copy of the FP32 model's constant of that name, here with one value stored as inf.
    model = onnx.load(str(MODELS / "l2net_modelopt_int8.onnx"))
    bias = next(t for t in model.graph.initializer if t.name == "conv2.b")
    folded = numpy_helper.to_array(bias).astype(np.float32) * 2 + 0.5
    folded[3] = np.inf
    bias.CopyFrom(numpy_helper.from_array(folded.astype(np.float16), "conv2.b"))
    onnx.save(model, tmp_path / "folded.onnx")
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(MODELS / "l2net_fp32.onnx"), "--qdq", str(tmp_path / "folded.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "2", "-o", str(out), "--quiet"]) == 0
    evidence = fp16_evidence(Context(Bundle(out)))
    (row,) = [r for r in evidence.overflowing if r["kind"] == "constant"]
    assert (row["tensor"], row["fp32_absmax"], row["overflow"], row["qdq_absmax"]) == ("conv2.b", None, 1, np.inf)
    run_rules(Context(Bundle(out)))  # QR011 formats every overflowing row
    assert main(["report", str(out), "-o", str(tmp_path / "out")]) == 0
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| conv2.b | constant | no FP32 original | 1 |" in markdown
    html = (tmp_path / "out" / "report.html").read_text()
    assert '<td><code>conv2.b</code></td><td>constant</td><td class="n">no FP32 original</td>' in html


# --- FP16 graph inputs and outputs -----------------------------------------------------------
def _fp16_io_models() -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """An FP32 model and its QDQ version with FP16 graph input and output (ModelOpt without keep_io_types).
    x * 1e5 * 1e-5 -> MatMul: in FP16 the constant 1e5 is inf, which the control restores from the FP32 model."""
    helper = onnx.helper
    weight = np.random.default_rng(0).normal(0.0, 1.0, (4, 3)).astype(np.float32)

    def model(half: bool) -> onnx.ModelProto:
        dtype, elem = (np.float16, TensorProto.FLOAT16) if half else (np.float32, TensorProto.FLOAT)
        with np.errstate(over="ignore"):
            constants = [numpy_helper.from_array(np.array(1e5, np.float32).astype(dtype), "up"),
                         numpy_helper.from_array(np.array(1e-5, dtype), "down")]
        nodes = [helper.make_node("Mul", ["x", "up"], ["big"]), helper.make_node("Mul", ["big", "down"], ["back"])]
        if half:
            scale = np.float16(np.abs(weight).max() / 127)
            constants += [numpy_helper.from_array(np.round(weight / np.float32(scale)).astype(np.int8), "w_q"),
                          numpy_helper.from_array(np.array(scale), "w_scale"),
                          numpy_helper.from_array(np.array(np.float16(3.0)), "x_scale"),
                          numpy_helper.from_array(np.array(0, np.int8), "zero")]
            nodes += [helper.make_node("QuantizeLinear", ["back", "x_scale", "zero"], ["back_q"]),
                      helper.make_node("DequantizeLinear", ["back_q", "x_scale", "zero"], ["back_dq"]),
                      helper.make_node("DequantizeLinear", ["w_q", "w_scale", "zero"], ["w"]),
                      helper.make_node("MatMul", ["back_dq", "w"], ["y"])]
        else:
            constants.append(numpy_helper.from_array(weight, "w"))
            nodes.append(helper.make_node("MatMul", ["back", "w"], ["y"]))
        graph = helper.make_graph(nodes, "fp16_io", [helper.make_tensor_value_info("x", elem, [None, 4])],
                                  [helper.make_tensor_value_info("y", elem, [None, 3])], constants)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])

    return model(False), model(True)


def test_control_of_a_model_with_fp16_inputs_and_outputs_runs_and_keeps_their_types():
    fp32, qdq = _fp16_io_models()
    control = restore_fp32_float(qdq, float_constants(fp32))
    onnx.checker.check_model(control, full_check=True)
    assert [(v.name, v.type.tensor_type.elem_type) for v in [*control.graph.input, *control.graph.output]] == \
        [("x", TensorProto.FLOAT16), ("y", TensorProto.FLOAT16)]
    x = np.random.default_rng(1).normal(0.0, 100.0, (16, 4)).astype(np.float16)
    (want,) = _session(fp32).run(None, {"x": x.astype(np.float32)})
    (damaged,) = _session(qdq).run(None, {"x": x})
    (got,) = _session(control).run(None, {"x": x})  # fed exactly as the QDQ model, same output type
    assert got.dtype == damaged.dtype == np.float16
    # The control restores the FP32 constant (1e5, inf in FP16): only INT8 and output rounding remain.
    assert _cosine(want, got) > 0.99 > 0.9 > _cosine(want, damaged)
    # The collector's control stage on the same model and feeds: it runs (it failed with a MatMul type error).
    check = run_fp16_check(fp32, qdq, [{"x": row[None]} for row in x[:3]], "cpu", Progress(quiet=True))
    assert check.control.error is None and len(check.control.outputs) == 3


@pytest.mark.slow
def test_qr011_says_its_counts_come_from_the_scanned_samples(tmp_path: Path):
    # 24 evaluation crops: the range scan reads 16 of them (spread), and the finding's counts are of those.
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(MODELS / "l2net_fp32.onnx"), "--qdq", str(MODELS / "l2net_modelopt_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "24", "-o", str(out), "--quiet"]) == 0
    (finding,) = [f for f in run_rules(Context(Bundle(out))).findings if f.rule_id == "QR011"]
    assert "values of the 16 spread samples scanned)" in finding.summary


def test_real_open_nsfw_fp16_float_part_flips_decisions_the_cosine_does_not_show() -> None:
    """open_nsfw under ModelOpt's defaults (tests/data/bundles/README.md): 5 of 128 decisions flip at wide margins in
    the QDQ model, none with its float part in FP32, while both read median cosine 1.0000. The report said "no root
    cause identified"; QR011 now names the FP16 float part first, from the report's own judgement of both runs."""
    from qdqreport.analysis.context import Context
    from qdqreport.bundle.reader import Bundle
    from qdqreport.engine import run_rules
    from qdqreport.findings import rank_findings
    from qdqreport.rules import discover

    ctx = Context(Bundle(Path(__file__).resolve().parent / "data" / "bundles" / "open_nsfw_fp16_default"))
    findings = rank_findings(run_rules(ctx, discover()).findings)
    first = next(f for f in findings if "root_cause" in f.tags)
    assert first.rule_id == "QR011" and first.severity == "warning"
    assert "5 of 128 top-1 decisions change" in first.summary and "0 of 128 top-1 decisions change" in first.summary


def test_real_open_nsfw_without_positives_names_the_score_column_the_fp16_part_destroys() -> None:
    """The same model on crops without a positive: every decision agrees and the report read ✅ with no finding while
    its own slice table showed the nsfw column at cosine 0.17 (0.99 in the FP32-float control). QR011 warns."""
    from qdqreport.analysis.context import Context
    from qdqreport.bundle.reader import Bundle
    from qdqreport.engine import run_rules
    from qdqreport.findings import rank_findings
    from qdqreport.rules import discover

    ctx = Context(Bundle(Path(__file__).resolve().parent / "data" / "bundles" / "open_nsfw_fp16_no_positives"))
    findings = rank_findings(run_rules(ctx, discover()).findings)
    assert [(f.rule_id, f.severity) for f in findings][:1] == [("QR011", "warning")]
    assert findings[0].subject == "outputs[1]" and "cosine 0.17" in findings[0].summary


def test_the_fp16_table_shows_each_runs_judgement_not_its_cosine(tmp_path: Path) -> None:
    """A new user's open_nsfw under ModelOpt's FP16 float part (tests/data/bundles/open_nsfw_fp16_default): 5 of 128
    decisions change in the QDQ model and none in the FP32-float control, both at median cosine 1.0000; the FP16 check
    table showed only "1.0000 | 1.0000", beside a QR011 finding that says the float part changes decisions. Two class
    scores a sample are too few for a cosine to be evidence (session 40): the judgement stands alone."""
    from qdqreport.cli import main

    bundle = Path(__file__).resolve().parent / "data" / "bundles" / "open_nsfw_fp16_default"
    assert main(["report", str(bundle), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    table = text[text.index("### FP16 check"):text.index("### Precision")]
    assert "degrade: 5 of 128 top-1 decisions change" in table and "agree: 0 of 128 top-1 decisions change" in table
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "agree: 0 of 128 top-1 decisions change</td>" in html and "; cosine" not in table


def test_qr011_s_share_is_a_cosine_s_and_says_when_the_control_still_moves_decisions():
    # A new user's PP-OCRv4 DBNet read "the FP16 part accounts for 93% of the loss" while its boxes still changed on 31
    # of 48 pictures with the float part FP32: the corpus DBNet's control likewise still collapses by map IoU.
    ctx = Context(Bundle(Path(__file__).resolve().parent.parent / "corpus" / "det_fp16_default"))
    first = run_rules(ctx).findings[0]
    assert first.rule_id == "QR011"
    assert "of the loss by cosine, while by its decisions the control still collapses (map IoU" in first.summary
