"""`qdqreport confirm` on real models: the demo's FP32 classifier quantized for real by ONNX Runtime's
quantize_static (calibrated on the demo's raw-pixel calibration data, or with its UINT8 defaults),
collected on the demo's real evaluation inputs, then re-quantized with a fix and diffed. Every number
compared is read from the two bundles. Each confirm is one real quantization and 16 samples of ORT."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

from qdqreport.cli import main
from qdqreport.render.filters import pct
from qdqreport.confirm.quantizers import modelopt_version

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"
ROOT = Path(__file__).resolve().parents[1]
CLS_OUTPUT = "save_infer_model/scale_0.tmp_1"  # the demo classifier's Softmax
SAMPLES = "16"
CALIB_ROWS = 32  # calibration rows per set: enough for MinMax, cheap on shared cores


def _quantize(fp32: Path, out: Path, calib: Path, activation: str, ops: list[str]) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.rows = iter({"x": row[None]} for row in np.load(calib)["x"])

        def get_next(self):
            return next(self.rows, None)

    symmetric = activation == "int8"
    quantize_static(str(fp32), str(out), Reader(), quant_format=QuantFormat.QDQ, op_types_to_quantize=ops,
                    activation_type=QuantType.QInt8 if symmetric else QuantType.QUInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": symmetric})


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("confirm")
    for name in ("calib", "calib_x255"):
        np.savez(root / f"{name}.npz", x=np.load(DEMO / f"{name}.npz")["x"][:CALIB_ROWS])
    return root


def _collect(work: Path, qdq: Path, calib: Path, name: str, *extra: str) -> Path:
    out = work / name
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(qdq), "--inputs",
                 str(DEMO / "eval.npz"), "--calib", str(calib), "--max-samples", SAMPLES, "--save-inputs",
                 "-o", str(out), "--quiet", *extra]) == 0
    return out


@pytest.fixture(scope="module")
def x255_bundle(work: Path) -> Path:
    """Symmetric INT8 Conv + MatMul calibrated on raw 0-255 pixels while the model is fed [-1, 1];
    with a short what-if search, whose best set one test re-quantizes."""
    model = work / "cls_ort_x255.onnx"
    _quantize(DEMO / "cls_fp32.onnx", model, work / "calib_x255.npz", "int8", ["Conv", "MatMul"])
    return _collect(work, model, work / "calib_x255.npz", "x255_bundle", "--per-layer", "--whatif-budget", "8", "--confirm")


@pytest.fixture(scope="module")
def uint8_bundle(work: Path) -> Path:
    """quantize_static's defaults (asymmetric UINT8 activations) on good calibration data."""
    model = work / "cls_ort_u8.onnx"
    _quantize(DEMO / "cls_fp32.onnx", model, work / "calib.npz", "uint8", ["Conv", "MatMul"])
    return _collect(work, model, work / "calib.npz", "uint8_bundle")


def _top1(bundle: Path) -> float:
    rows = list(csv.DictReader(open(bundle / "compare" / "ort_qdq__vs__ort_fp32.samples.csv")))
    return statistics.mean(float(r["top1_agree"]) for r in rows if r["top1_agree"])


def _cosine(bundle: Path) -> float:
    rows = list(csv.DictReader(open(bundle / "compare" / "ort_qdq__vs__ort_fp32.samples.csv")))
    return statistics.median(float(r["cosine"]) for r in rows)


def _manifest(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_text())


def _precisions(bundle: Path) -> dict[str, str]:
    summary = json.loads((bundle / "quant" / "precision_summary.json").read_text())
    return {node["name"]: node["precision"] for node in summary["nodes"]}


def _finding(bundle: Path, rule: str, tmp_path: Path) -> str:
    assert main(["report", str(bundle), "-o", str(tmp_path / f"report-{rule}")]) in (0, 1)
    findings = json.loads((tmp_path / f"report-{rule}" / "findings.json").read_text())["findings"]
    return next(f["fingerprint"] for f in findings if f["id"] == rule)


@pytest.mark.slow
def test_corrected_calibration_restores_the_outputs(x255_bundle: Path, work: Path, tmp_path: Path, capsys) -> None:
    fingerprint = _finding(x255_bundle, "QR003", tmp_path)  # the calibration-scale finding, by fingerprint
    out = tmp_path / "confirmed"
    assert main(["confirm", str(x255_bundle), "--fix", fingerprint, "--calib", str(work / "calib.npz"),
                 "-o", str(out), "--quiet"]) == 0
    after = out / "bundle"
    before_top1, after_top1 = _top1(x255_bundle), _top1(after)
    # The re-quantized model's integer kernels depend on the CPU: 16 of 16 top-1 decisions kept on an AMD EPYC
    # (AVX2, no VNNI), 15 of 16 on an Intel Xeon with AVX512-VNNI (sample 4 flips, cosine 0.17): both restored.
    assert before_top1 < 0.9 and after_top1 >= 15 / 16 and _cosine(after) > 0.99 > _cosine(x255_bundle)
    diff = json.loads((out / "diff" / "diff.json").read_text())
    assert diff["verdict"]["kind"] == "restored"
    assert f"top-1 {before_top1:.0%} → {after_top1:.0%}" in diff["verdict"]["text"]
    assert diff["verdict"]["text"] in capsys.readouterr().out
    record = _manifest(after)["quantization"]
    assert record["quantizer"] == "onnxruntime" and record["version"] == onnxruntime.__version__
    assert record["fix"]["source"] == f"finding QR003 (fingerprint {fingerprint})"
    assert record["calibration"] == str(work / "calib.npz") and record["options"]["activation_type"] == "int8"
    assert record["options"]["op_types_to_quantize"] == ["Conv", "MatMul"]
    # Same model, same inputs: the diff compared the very samples the bundle holds.
    assert _manifest(after)["inputs"]["eval"]["samples"] == _manifest(x255_bundle)["inputs"]["eval"]["samples"] == 16
    confirmed = json.loads((out / "confirm.json").read_text())
    assert confirmed["verdict"] == diff["verdict"]["text"] and confirmed["caveats"] == []  # same inputs, same ORT


@pytest.mark.slow
def test_calibration_fix_without_the_new_file_is_refused(x255_bundle: Path, tmp_path: Path, capsys) -> None:
    assert main(["confirm", str(x255_bundle), "--fix", "QR003", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--calib calib_fixed.npz" in err
    assert not (tmp_path / "out").exists()


def test_a_python_that_cannot_render_the_diff_is_refused_before_quantizing(uint8_bundle: Path, tmp_path: Path,
                                                                         monkeypatch, capsys) -> None:
    """The diff is the last step: without its renderer (a ModelOpt venv without matplotlib) confirm stops at once, in
    one line, with nothing written, instead of after the quantization and the collect."""
    monkeypatch.setitem(__import__("sys").modules, "qdqreport.diff.render", None)  # import fails as if absent
    out = tmp_path / "no_renderer"
    assert main(["confirm", str(uint8_bundle), "--exclude-op-type", "Conv", "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot render its diff" in err
    assert not out.exists()


@pytest.mark.slow
def test_excluding_an_op_type_restores_top1(uint8_bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "no_conv"
    assert main(["confirm", str(uint8_bundle), "--exclude-op-type", "Conv", "-o", str(out), "--quiet"]) == 0
    before, after = _precisions(uint8_bundle), _precisions(out / "bundle")
    convs = [name for name in after if name.startswith("Conv@")]
    assert all(before[n] != "fp32" for n in convs) and all(after[n] == "fp32" for n in convs)
    assert after["MatMul@0"] != "fp32"  # the rest is re-quantized as before
    assert _top1(uint8_bundle) < 0.99 and _top1(out / "bundle") == 1.0
    diff = json.loads((out / "diff" / "diff.json").read_text())
    left = [n for n in before if before[n] != "fp32" and after[n] == "fp32"]  # Convs and the nodes they fed
    assert diff["verdict"]["kind"] in ("restored", "improved") and f"{len(left)} nodes leaving INT8" in diff["verdict"]["text"]


def test_the_after_bundle_is_judged_as_the_bundle_was_and_decoded_only_when_asked(work: Path, tmp_path: Path,
                                                                                  capsys) -> None:
    """A new user's confirm of a key CNN collected with --output-kind and --postprocess wrote an after-bundle judged by
    cosine and never decoded: "Outputs agree", the diff "resolved", with the same 9 keys still changed. The recorded
    output kinds, decision threshold and target travel with the fix; the decode runs only when the user passes it
    again (confirm runs no code a bundle names: a downloaded bundle could name a script it brought), and without it
    confirm says so."""
    model = work / "cls_ort_u8_judged.onnx"
    _quantize(DEMO / "cls_fp32.onnx", model, work / "calib.npz", "uint8", ["Conv", "MatMul"])
    decode = f"{ROOT / 'scripts' / 'decode_cls.py'}:decode"
    bundle = _collect(work, model, work / "calib.npz", "judged_bundle", "--output-kind", f"{CLS_OUTPUT}=probabilities",
                      "--decision-threshold", "0.7", "--target", "onnxruntime", "--postprocess", decode)
    undecoded, decoded = tmp_path / "undecoded", tmp_path / "decoded"
    assert main(["confirm", str(bundle), "--exclude-op-type", "Conv", "-o", str(undecoded), "--quiet"]) == 0
    assert "caveat: the bundle's outputs were decoded by --postprocess" in capsys.readouterr().out
    before, after = _manifest(bundle), _manifest(undecoded / "bundle")
    for key in ("output_kinds", "decision_threshold", "target"):
        assert after["settings"][key] == before["settings"][key], key
    assert "task" not in after
    from qdqreport.analysis.context import Context
    from qdqreport.bundle.reader import Bundle

    stored = [len(Context(Bundle(b)).stored_outputs("ort_fp32")) for b in (bundle, undecoded / "bundle")]
    assert stored[0] == stored[1] > 0  # the same samples stored on both sides, under the byte cap
    assert main(["confirm", str(bundle), "--exclude-op-type", "Conv", "--postprocess", decode, "-o", str(decoded),
                 "--quiet"]) == 0
    after = _manifest(decoded / "bundle")
    assert after["task"]["postprocess"] == before["task"]["postprocess"]
    assert after["task"]["comparisons"][0]["samples"] == before["task"]["comparisons"][0]["samples"]


@pytest.mark.slow
def test_a_findings_node_exclusions_leave_int8(uint8_bundle: Path, tmp_path: Path) -> None:
    """QR002 names the head; --exclude adds a node: both, and only they, run in float after re-quantizing."""
    out = tmp_path / "head"
    assert main(["confirm", str(uint8_bundle), "--fix", "QR002", "--exclude", "Conv@52", "-o", str(out), "--quiet"]) == 0
    before, after = _precisions(uint8_bundle), _precisions(out / "bundle")
    left = sorted(n for n in before if before[n] != "fp32" and after[n] == "fp32")
    assert "Conv@52" in left and before["MatMul@0"] != "fp32" == after["MatMul@0"]
    assert after["Conv@0"] == before["Conv@0"] != "fp32"
    record = _manifest(out / "bundle")["quantization"]
    assert "Conv@52" in record["options"]["nodes_to_exclude"] and "MatMul" not in record["options"]["op_types_to_quantize"]


@pytest.mark.slow
def test_quantize_static_fix_of_qr004(uint8_bundle: Path, tmp_path: Path) -> None:
    """QR004's fix for an ONNX Runtime model is quantize_static with signed symmetric INT8: applied as such."""
    out = tmp_path / "int8"
    report = json.loads((_report(uint8_bundle, tmp_path) / "findings.json").read_text())["findings"]
    fingerprint = next(f["fingerprint"] for f in report if f["id"] == "QR004" and "zero-point" in f["title"])
    assert main(["confirm", str(uint8_bundle), "--fix", fingerprint, "-o", str(out), "--quiet"]) == 0
    record = _manifest(out / "bundle")["quantization"]
    assert record["options"]["activation_type"] == "int8" and record["options"]["extra_options"]["ActivationSymmetric"]
    summary = json.loads((out / "bundle" / "quant" / "precision_summary.json").read_text())
    assert {g["dtype"] for g in summary["qdq"]} == {"int8"} and not any(g["zero_point_nonzero"] for g in summary["qdq"])
    assert _top1(out / "bundle") >= _top1(uint8_bundle)


@pytest.mark.slow
def test_whatif_estimate_beside_the_requantized_number(x255_bundle: Path, tmp_path: Path, capsys) -> None:
    chosen = json.loads((x255_bundle / "layers" / "whatif.json").read_text())["chosen"]
    out = tmp_path / "whatif"
    args = [a for node in chosen["nodes"] for a in ("--exclude", node)]
    assert main(["confirm", str(x255_bundle), *args, "-o", str(out), "--quiet"]) == 0
    record = json.loads((out / "confirm.json").read_text())
    assert record["estimate"]["cosine"] == chosen["cosine"] and record["estimate"]["top1"] == chosen["top1"]
    assert record["confirmed"]["top1"] == _top1(out / "bundle")
    assert record["confirmed"]["cosine"] == pytest.approx(_cosine(out / "bundle"), abs=1e-6)
    assert f"what-if bypass estimate cosine {chosen['cosine']:.4f}" in capsys.readouterr().out


@pytest.mark.slow
def test_collect_confirm_puts_the_requantized_number_beside_the_estimate(x255_bundle: Path, tmp_path: Path) -> None:
    """collect --per-layer --confirm: the what-if's chosen set re-quantized inside collect; the report shows both."""
    summary = json.loads((x255_bundle / "layers" / "whatif.json").read_text())
    chosen, confirmed = summary["chosen"], summary["confirmed"]
    assert confirmed["error"] is None and confirmed["quantizer"] == "onnxruntime"
    assert confirmed["version"] == onnxruntime.__version__ and confirmed["nodes"] == chosen["nodes"]
    # The re-quantization excludes the chosen set as the report's printed fix would (fixes.resolve_for): a node the
    # quantizer does not quantize (a BatchNormalization outside op_types_to_quantize) through the node feeding it.
    assert f"nodes_to_exclude={confirmed['excluded']!r}" in confirmed["command"]
    assert 0 < confirmed["cosine"] <= 1 and confirmed["top1"] is not None
    markdown = (_report(x255_bundle, tmp_path) / "report.md").read_text()
    line = next(l for l in markdown.splitlines() if "Confirmed by a real re-quantization" in l)
    # The demo classifier's two class scores are too few for a cosine to be evidence: its top-1 agreements stand.
    assert f"bypass estimate top-1 {pct(chosen['top1'])}" in line and f"re-quantized top-1 {pct(confirmed['top1'])}" in line
    assert "cosine" not in line
    assert "Confirmed by a real re-quantization" in (tmp_path / "report" / "report.html").read_text()


def test_collect_confirm_needs_the_what_if(tmp_path: Path, capsys) -> None:
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"), "--inputs",
                 str(DEMO / "eval.npz"), "--confirm", "-o", str(tmp_path / "b")]) == 2
    assert "--per-layer" in capsys.readouterr().err and not (tmp_path / "b").exists()


def _report(bundle: Path, tmp_path: Path) -> Path:
    assert main(["report", str(bundle), "-o", str(tmp_path / "report")]) in (0, 1)
    return tmp_path / "report"


@pytest.mark.slow
def test_refusals_are_one_line_and_write_nothing(uint8_bundle: Path, tmp_path: Path, capsys) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    cases = [["--fix", "QR999"], ["--fix", "QR004"], ["--exclude", "NoSuchNode"], [], ["--fp32", str(DEMO / "cls_int8.onnx"), "--exclude", "Conv@0"],
             ["--high-precision-dtype", "fp32"]]  # a ModelOpt option, refused for a quantize_static bundle
    for extra in cases:
        assert main(["confirm", str(uint8_bundle), *extra, "-o", str(tmp_path / "out")]) == 2, extra
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
        assert not (tmp_path / "out").exists()
    assert main(["confirm", str(uint8_bundle), "--exclude", "Conv@0", "-o", str(taken)]) == 2
    assert "not a confirm folder" in capsys.readouterr().err and (taken / "keep.txt").read_text() == "mine"


@pytest.mark.slow
def test_a_failure_after_writing_started_leaves_nothing_and_force_keeps_the_old_run(uint8_bundle: Path, tmp_path: Path,
                                                                                   capsys) -> None:
    wrong = tmp_path / "wrong_key.npz"  # found only when the quantizer reads it, after OUT was created
    np.savez(wrong, image=np.load(DEMO / "calib.npz")["x"][:4])
    out = tmp_path / "out"
    assert main(["confirm", str(uint8_bundle), "--calib", str(wrong), "-o", str(out), "--quiet"]) == 2
    assert "wrong_key.npz" in capsys.readouterr().err and not out.exists()
    assert main(["confirm", str(uint8_bundle), "--calib-method", "entropy", "-o", str(out), "--quiet"]) == 0
    first = (out / "confirm.json").read_text()
    assert main(["confirm", str(uint8_bundle), "--calib", str(wrong), "-o", str(out), "--force", "--quiet"]) == 2
    assert (out / "confirm.json").read_text() == first  # the failed --force run restored the old folder
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


@pytest.mark.skipif(modelopt_version() is not None, reason="ModelOpt is installed: the real run below applies")
def test_modelopt_bundle_without_modelopt_prints_the_commands(tmp_path: Path, capsys) -> None:
    """A bundle of the corpus that ModelOpt made (its log is in the bundle): one line, then the three commands."""
    corpus = Path(__file__).resolve().parents[1] / "corpus" / "cls_calib_x255"
    out = tmp_path / "out"
    code = main(["confirm", str(corpus), "--fp32", str(DEMO / "cls_fp32.onnx"), "--inputs", str(DEMO / "eval.npz"),
                 "--calib", str(DEMO / "calib.npz"), "-o", str(out)])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and not out.exists()
    assert lines[0].startswith("qdqreport: error: ") and "not installed" in lines[0]
    assert "-m modelopt.onnx.quantization" in lines[1] and f"--calibration_data_path={DEMO / 'calib.npz'}" in lines[1]
    assert lines[2].lstrip().startswith("qdqreport collect") and lines[3].lstrip().startswith("qdqreport diff")


def _top1_of(bundle: Path, stage: str) -> float:
    rows = list(csv.DictReader(open(bundle / "compare" / f"{stage}__vs__ort_fp32.samples.csv")))
    return statistics.mean(float(r["top1_agree"]) for r in rows if r["top1_agree"])


@pytest.mark.skipif(modelopt_version() is None, reason="ModelOpt is not installed (pip install 'qdqreport[modelopt]'); "
                                                       "the ModelOpt confirm runs only where it is")
def test_modelopt_calibration_fix_restores_the_outputs(tmp_path: Path) -> None:
    """ModelOpt re-quantizes with its defaults (entropy, FP16 float part) on the correctly preprocessed crops.

    Measured (docs/confirm.md): the model ModelOpt 0.47 writes is byte-identical to the demo's healthy
    cls_int8.onnx; ONNX Runtime 1.32 runs it at 98% top-1, but onnxruntime-gpu 1.24.4 on CPU runs its FP16
    float part wrongly (50%) while the FP32-float control stage of the same bundle gives 98%. So the
    calibration fix is judged on the control stage; the verdict on ort_qdq depends on this ONNX Runtime
    and must be the honest one either way: restored, or QR011 (the FP16 float part) named as new."""
    corpus = Path(__file__).resolve().parents[1] / "corpus" / "cls_calib_x255"
    out = tmp_path / "out"
    assert main(["confirm", str(corpus), "--fp32", str(DEMO / "cls_fp32.onnx"), "--inputs", str(DEMO / "eval.npz"),
                 "--calib", str(DEMO / "calib.npz"), "-o", str(out), "--quiet"]) == 0
    after = out / "bundle"
    record = _manifest(after)["quantization"]
    assert record["quantizer"] == "modelopt" and record["version"] == modelopt_version()
    assert f"--calibration_data_path={DEMO / 'calib.npz'}" in record["command"]
    # The calibration fix itself: with the float part in FP32 the re-quantized model agrees with FP32.
    before, control, qdq = _top1(corpus), _top1_of(after, "ort_qdq_fp32"), _top1(after)
    assert before < 0.9 <= control
    diff = json.loads((out / "diff" / "diff.json").read_text())
    new = {f["rule_id"] for f in diff["findings"]["new"]}
    resolved = {f["rule_id"] for f in diff["findings"]["resolved"]}
    assert "QR003" in resolved  # the raw-pixel calibration finding is gone
    caveats = json.loads((out / "confirm.json").read_text())["caveats"]  # 24 corpus samples vs the demo's 50
    assert any(c.startswith("other evaluation inputs") for c in caveats)
    other_ort = _manifest(corpus)["tools"]["onnxruntime"] != onnxruntime.__version__
    assert any(c.startswith("another onnxruntime version") for c in caveats) == other_ort
    if qdq >= 0.9:  # this ONNX Runtime runs the FP16 float part faithfully
        assert diff["verdict"]["kind"] == "restored" and "QR011" not in new
    else:  # it does not: the report must say the FP16 float part, not the calibration, is what is left
        assert qdq < control and "QR011" in new
    # QR011's fix on top: ModelOpt keeps the float part in FP32; ort_qdq itself is then restored here.
    fixed = tmp_path / "fp32_float"
    assert main(["confirm", str(corpus), "--fp32", str(DEMO / "cls_fp32.onnx"), "--inputs", str(DEMO / "eval.npz"),
                 "--calib", str(DEMO / "calib.npz"), "--high-precision-dtype", "fp32", "-o", str(fixed), "--quiet"]) == 0
    record = _manifest(fixed / "bundle")["quantization"]
    assert "--high_precision_dtype=fp32" in record["command"] and record["high_precision_dtype"] == "fp32"
    assert json.loads((fixed / "bundle" / "quant" / "precision_summary.json").read_text())["float_dtype"] == "fp32"
    diff = json.loads((fixed / "diff" / "diff.json").read_text())
    assert _top1(fixed / "bundle") >= 0.9 > before and diff["verdict"]["kind"] == "restored"
    assert f"top-1 {before:.0%} → {_top1(fixed / 'bundle'):.0%}" in diff["verdict"]["text"]
    assert not {f["rule_id"] for f in diff["findings"]["new"]} & {"QR011"}


@pytest.mark.slow
def test_a_calibration_read_along_a_recorded_batch_axis_is_read_so_again(work: Path, tmp_path: Path) -> None:
    """A bundle collected with --batch-axis (its calibration file stacks samples on another axis) re-collects the
    re-quantized model with the same axes, its saved inputs replayed: without them the after-collect stopped with
    "inputs hold different sample counts" (a new user's graph inputs, --batch-axis NAME=none)."""
    model = work / "cls_ort_u8.onnx"
    if not model.exists():
        _quantize(DEMO / "cls_fp32.onnx", model, work / "calib.npz", "uint8", ["Conv", "MatMul"])
    # x=none: each file is one sample, the whole batch (as a graph model's collated inputs are).
    bundle = _collect(tmp_path, model, work / "calib.npz", "whole_bundle", "--batch-axis", "x=none")
    assert json.loads((bundle / "manifest.json").read_text())["inputs"]["calib"]["samples"] == 1
    out = tmp_path / "confirmed"
    assert main(["confirm", str(bundle), "--exclude-op-type", "MatMul", "-o", str(out), "--quiet"]) == 0
    after = json.loads((out / "bundle" / "manifest.json").read_text())
    assert after["inputs"]["calib"]["samples"] == 1  # read whole, as the bundle read it (32 rows otherwise)
