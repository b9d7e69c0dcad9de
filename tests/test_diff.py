"""`qdqreport diff` and `report --config-card` on real bundles: the demo's ×255-calibrated model against
the correctly calibrated one (the fix its report prescribes), real corpus bundles of another model, and
real TensorRT layer info of a QAT MobileNet before and after its residual Q/DQ fix (TREx samples)."""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import layer_tables
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.diff import build_diff
from qdqreport.diff.precision import precision_diff
from qdqreport.diff.render import render_markdown
from qdqreport.render.filters import pct
from qdqreport.testing.trt_dumps import DUMPS

ROOT = Path(__file__).resolve().parent.parent
OTHER_MODEL = ROOT / "corpus" / "det_healthy_neck_entropy"  # a detector: another FP32 model
TRT = DUMPS
PAIR = "ort_qdq__vs__ort_fp32"


def _rows(bundle: Path, samples: int) -> list[dict]:
    return [r for r in Context(Bundle(bundle)).sample_rows(PAIR) if r["sample"] < samples]


def _shared_samples(before: Path, after: Path) -> int:
    return min(len({r["sample"] for r in Context(Bundle(b)).sample_rows(PAIR)}) for b in (before, after))


def _diff(tmp_path: Path, before: Path, after: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "diff"
    code = main(["diff", str(before), str(after), "-o", str(out), *extra])
    document = json.loads((out / "diff.json").read_text()) if (out / "diff.json").exists() else {}
    return code, document


@pytest.mark.slow
def test_the_fix_restores_the_outputs_with_both_bundles_numbers(broken_bundle, healthy_bundle, tmp_path):
    code, doc = _diff(tmp_path, broken_bundle, healthy_bundle, "--fail-on-regression")
    assert code == 0 and doc["regressed"] is False
    shared = _shared_samples(broken_bundle, healthy_bundle)  # the broken fixture keeps 16 samples, the healthy one 50
    top1 = [sum(r["top1_agree"] for r in _rows(b, shared)) / shared for b in (broken_bundle, healthy_bundle)]
    assert top1[0] < 0.9 <= top1[1]  # the demo really is broken, and the fix really works
    verdict = doc["verdict"]["text"]
    assert verdict.startswith(f"the fix restores the outputs (top-1 {top1[0]:.0%} → {top1[1]:.0%})"), verdict
    assert doc["verdict"]["kind"] == "restored"
    output = doc["accuracy"]["comparisons"][0]["outputs"][0]
    assert output["samples"] == shared
    cosines = [statistics.median(r["cosine"] for r in _rows(b, shared)) for b in (broken_bundle, healthy_bundle)]
    assert output["cosine"]["before"] == pytest.approx(cosines[0]) and output["cosine"]["after"] == pytest.approx(cosines[1])
    assert output["improved"] > output["worse"]
    # Same ModelOpt command, same nodes: the fix changed the calibration data, not the precision.
    assert doc["precision"]["changes_total"] == 0 and "with the same precision for every node" in verdict
    changed = {(c["group"], c["item"]) for c in doc["inputs"] if c["changed"]}
    assert ("calibration", "sha256") in changed and ("models", "qdq model") in changed
    assert ("models", "fp32 model") not in changed
    # The report's root cause of the broken model (QR003, calibration input mismatch) is resolved.
    assert "QR003" in {f["rule_id"] for f in doc["findings"]["resolved"]}
    assert "QR003" not in {f["rule_id"] for f in doc["findings"]["new"] + doc["findings"]["persisting"]}
    html = (tmp_path / "diff" / "diff.html").read_text()
    markdown = (tmp_path / "diff" / "diff.md").read_text()
    assert "<svg" in html and "http://" not in html.replace('http://www.w3.org', '')
    assert f"top-1 {top1[0]:.0%} → {top1[1]:.0%}" in markdown
    assert "save\\_infer\\_model" in markdown  # output names escaped for Markdown


@pytest.mark.slow
def test_the_reverse_order_is_a_regression_and_fails_the_gate(broken_bundle, healthy_bundle, tmp_path, capsys):
    code, doc = _diff(tmp_path, healthy_bundle, broken_bundle, "--fail-on-regression")
    assert code == 1 and doc["regressed"] is True
    shared = _shared_samples(healthy_bundle, broken_bundle)
    top1 = [sum(r["top1_agree"] for r in _rows(b, shared)) / shared for b in (healthy_bundle, broken_bundle)]
    assert doc["verdict"]["text"].startswith(f"regression: top-1 {top1[0]:.0%} → {top1[1]:.0%} (ort_qdq vs ort_fp32)")
    assert capsys.readouterr().out.strip().endswith(doc["verdict"]["text"])
    # Without the flag the regression is reported, not gated.
    assert main(["diff", str(healthy_bundle), str(broken_bundle), "-o", str(tmp_path / "plain")]) == 0


@pytest.mark.slow
def test_the_tolerance_is_the_users(broken_bundle, healthy_bundle, tmp_path):
    code, doc = _diff(tmp_path, healthy_bundle, broken_bundle, "--fail-on-regression",
                      "--top1-tolerance", "0.9", "--cosine-tolerance", "0.5")
    assert code == 0 and doc["verdict"]["kind"] == "unchanged"
    assert doc["tolerance"] == {"top1": 0.9, "cosine": 0.5}
    assert main(["diff", str(healthy_bundle), str(broken_bundle), "-o", str(tmp_path / "x"),
                 "--cosine-tolerance", "-1"]) == 2


@pytest.mark.slow
def test_bundles_of_different_models_are_refused_unless_forced(healthy_bundle, tmp_path, capsys):
    out = tmp_path / "refused"
    assert main(["diff", str(healthy_bundle), str(OTHER_MODEL), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(OTHER_MODEL) in err and "--force" in err
    assert not out.exists()
    code, doc = _diff(tmp_path, healthy_bundle, OTHER_MODEL, "--force")
    assert code == 0 and doc["forced"] is True
    assert ("models", "fp32 model") in {(c["group"], c["item"]) for c in doc["inputs"] if c["changed"]}


@pytest.mark.slow
def test_bundles_of_different_schema_minor_versions_diff_and_zips_are_read(healthy_bundle, tmp_path):
    newer = tmp_path / "newer"
    shutil.copytree(healthy_bundle, newer)
    manifest = json.loads((newer / "manifest.json").read_text())
    manifest.update(schema_version="1.9", written_by_a_later_minor={"x": 1})
    (newer / "manifest.json").write_text(json.dumps(manifest))
    zipped = shutil.make_archive(str(tmp_path / "newer"), "zip", newer)
    code, doc = _diff(tmp_path, healthy_bundle, Path(zipped), "--fail-on-regression")
    assert code == 0 and doc["verdict"]["kind"] == "unchanged"
    schema = next(c for c in doc["inputs"] if c["item"] == "schema version")
    assert schema["before"] != "1.9" and schema["after"] == "1.9" and schema["changed"]
    assert all(o["worse"] == 0 and o["improved"] == 0 for c in doc["accuracy"]["comparisons"] for o in c["outputs"])


def test_engine_difference_across_bundles_on_real_layer_info(tmp_path):
    # BEFORE: the committed sample bundle (schema 1.1) of the QAT MobileNet engine; AFTER: a bundle made
    # now (current schema) of the same network with its residual Q/DQ placement fixed.
    before, after = ROOT / "sample_bundles" / "trt_mobilenet_qat_layerinfo", tmp_path / "qat_residuals"
    assert main(["import-trt", str(after), "--new", "--stage", "trt_int8", "--layer-info",
                 str(TRT / "tests_inputs_mobilenet_v2_residuals.qat.onnx.engine.graph.json")]) == 0
    code, doc = _diff(tmp_path, before, after)
    assert code == 0
    assert doc["before"]["schema_version"] != doc["after"]["schema_version"]
    (engine,) = doc["engines"]
    counts = [json.loads((TRT / f).read_text()) for f in ("tests_inputs_mobilenet.qat.onnx.engine.graph.json",
                                                           "tests_inputs_mobilenet_v2_residuals.qat.onnx.engine.graph.json")]
    assert [sum(engine["precision_counts"][i].values()) for i in (0, 1)] == \
        [sum(1 for layer in c["Layers"] if layer.get("LayerType") != "NoOp") for c in counts]
    # Fixing the residual Q/DQ placement moves the residual Adds from FP16 into INT8 convolutions.
    assert engine["precision_counts"][1]["fp16"] < engine["precision_counts"][0]["fp16"]
    assert engine["layers"]["rows_total"] > 0
    assert f"fp16 {engine['precision_counts'][0]['fp16']} → {engine['precision_counts'][1]['fp16']}" in doc["verdict"]["text"]
    assert doc["verdict"]["text"].startswith("no stage outputs were compared")
    # The engine rules still fire on AFTER, on fewer layers: persisting, with what they said before.
    persisting = {f["rule_id"]: f for f in doc["findings"]["persisting"]}
    assert persisting["QR101"]["before"] and persisting["QR101"]["before"][1] != persisting["QR101"]["title"]


@pytest.mark.slow
def test_precision_is_aligned_by_structure_when_names_changed(healthy_bundle):
    summary = Context(Bundle(healthy_bundle)).precision
    renamed = json.loads(json.dumps(summary))
    for node in renamed["nodes"]:
        node["name"] = "exported/" + node["name"]  # a re-export renamed every node
    target = next(n for n in renamed["nodes"] if n["op_type"] == "Conv" and n["precision"] == "int8")
    target["precision"] = "fp16"
    diff = precision_diff(summary, renamed)
    assert diff.renamed == len(summary["nodes"])
    assert diff.changes_total == 1 and diff.left_int8 == 1 and diff.entered_int8 == 0
    (change,) = diff.changes
    assert change.after == target["name"] and change.how == "signature" and change.precision_after == "fp16"


@pytest.mark.slow
def test_markdown_fits_its_budget(broken_bundle, healthy_bundle):
    model = build_diff(broken_bundle, healthy_bundle)
    full = render_markdown(model)
    short = render_markdown(model, budget=1500)
    assert len(short) <= 1500 < len(full) and "diff.html" in short
    assert model.verdict.text.split(" (")[0] in short
    for budget in range(900, len(full), 150):  # wherever the cut falls, no <details> stays open
        text = render_markdown(model, budget=budget)
        assert len(text) <= budget and text.count("<details>") == text.count("</details>")


@pytest.mark.slow
def test_nothing_is_written_when_rendering_fails(broken_bundle, healthy_bundle, tmp_path, monkeypatch):
    import qdqreport.diff.render as render

    def broken(model):
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(render, "render_json", broken)
    out = tmp_path / "out"
    out.mkdir()
    (out / "diff.md").write_text("the previous diff\n")
    with pytest.raises(RuntimeError):
        render.write_diff(build_diff(broken_bundle, healthy_bundle), out)
    assert [p.name for p in out.iterdir()] == ["diff.md"] and (out / "diff.md").read_text() == "the previous diff\n"


@pytest.mark.slow
def test_config_card_documents_the_configuration(broken_bundle, tmp_path):
    out = tmp_path / "report"
    code = main(["report", str(broken_bundle), "-o", str(out), "--config-card"])
    assert code == 0
    card = (out / "config_card.md").read_text()
    assert (out / "report.html").exists()
    manifest = json.loads((broken_bundle / "manifest.json").read_text())
    ctx = Context(Bundle(broken_bundle))
    assert manifest["inputs"]["calib"]["sha256"] in card and manifest["models"]["qdq"]["sha256"] in card
    assert f"--calibration_method {ctx.modelopt_log['calibration_method']}" in card  # from the real ModelOpt log
    # The paths the bundle recorded (here absolute, as collect was given them), not bare file names.
    assert f"--calibration_data_path={manifest['inputs']['calib']['source']}" in card
    assert f"--output_path={manifest['models']['qdq']['path']}" in card
    floats = [n for n in ctx.precision["nodes"] if n["precision"] not in ("int8", "uint8")]
    assert f"{len(floats)} compute nodes of the QDQ graph run in float" in card
    assert f"onnxruntime: {manifest['tools']['onnxruntime']}" in card
    summary = next(s for s in ctx.output_summaries(PAIR))
    assert f"| {pct(summary.top1)} |" in card


def test_config_card_of_a_bad_bundle_writes_nothing(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "missing"), "-o", str(out), "--config-card"]) == 2
    assert not out.exists() and len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.slow
def test_layers_diff_computation_needs_no_renderer_and_diff_no_runtime(tmp_path):
    """The diff computation imports neither jinja2 nor matplotlib; the whole diff runs without ONNX Runtime."""
    code = ("import sys\n"
            "for name in ('onnxruntime', 'tensorrt', 'onnx', 'polygraphy'): sys.modules[name] = None\n"
            "from qdqreport.diff import build_diff\n"
            "model = build_diff(sys.argv[1], sys.argv[2])\n"
            "assert 'jinja2' not in sys.modules and 'matplotlib' not in sys.modules, 'renderer imported'\n"
            "from qdqreport.cli import main\n"
            "sys.exit(main(['diff', sys.argv[1], sys.argv[2], '-o', sys.argv[3]]))\n")
    bundles = ROOT / "sample_bundles"
    result = subprocess.run([sys.executable, "-c", code, str(bundles / "cls_calib_x255"), str(bundles / "cls_healthy"),
                             str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "the fix restores the outputs" in (tmp_path / "out" / "diff.md").read_text()


def _per_layer_bundle(tmp_path: Path, demo: Path, qdq: str, calib: str) -> Path:
    out = tmp_path / qdq.replace(".onnx", "")
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / qdq), "--inputs",
                 str(demo / "eval.npz"), "--calib", str(demo / calib), "--max-samples", "4", "--per-layer",
                 "--whatif-budget", "0", "--no-fp16-check", "-o", str(out), "--quiet"]) == 0
    return out


@pytest.mark.slow
def test_per_layer_curves_of_both_bundles(demo, tmp_path):
    before = _per_layer_bundle(tmp_path, demo, "cls_int8_x255.onnx", "calib_x255.npz")
    after = _per_layer_bundle(tmp_path, demo, "cls_int8.onnx", "calib.npz")
    code, doc = _diff(tmp_path, before, after)
    assert code == 0 and doc["verdict"]["kind"] == "restored"
    curves = doc["curves"]
    for side, bundle in (("before", before), ("after", after)):
        activations = layer_tables(Context(Bundle(bundle))).activations
        assert curves[f"{side}_tensors"] == [r["tensor"] for r in activations] and len(activations) > 100
        assert curves[f"{side}_sqnr"][-1] == pytest.approx(activations[-1]["sqnr_db"])
    # The ×255 calibration damages the whole graph, not one layer: the fixed model's median is far higher.
    assert curves["median_sqnr"]["after"] > curves["median_sqnr"]["before"] + 10
    assert (tmp_path / "diff" / "diff.html").read_text().count("per-layer error along the graph, before and after") == 1


@pytest.mark.slow
def test_decision_agreement_of_decoded_results(demo, tmp_path):
    bundles = []
    for qdq, calib in (("cls_int8_x255.onnx", "calib_x255.npz"), ("cls_int8.onnx", "calib.npz")):
        bundles.append(tmp_path / qdq.replace(".onnx", ""))
        assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / qdq), "--inputs",
                     str(demo / "eval.npz"), "--calib", str(demo / calib), "--max-samples", "12", "--no-fp16-check",
                     "--postprocess", str(ROOT / "scripts" / "decode_cls.py"), "-o", str(bundles[-1]), "--quiet"]) == 0
    code, doc = _diff(tmp_path, *bundles)
    assert code == 0
    agreement = [next(c["agreement"] for c in json.loads((b / "manifest.json").read_text())["task"]["comparisons"]
                      if c["id"] == PAIR) for b in bundles]
    decision = next(c for c in doc["accuracy"]["comparisons"] if c["id"] == PAIR)["decision"]
    assert [decision["before"], decision["after"]] == pytest.approx(agreement)
    assert agreement[0] < agreement[1]
    assert f"{pct(agreement[0])} → {pct(agreement[1])}" in (tmp_path / "diff" / "diff.md").read_text()


@pytest.mark.slow
def test_bundle_strings_are_escaped_in_markdown(healthy_bundle, tmp_path):
    hostile = tmp_path / "hostile"
    shutil.copytree(healthy_bundle, hostile)
    manifest = json.loads((hostile / "manifest.json").read_text())
    manifest["models"]["qdq"]["path"] = "m|x <script>alert(1)</script> `q`.onnx"
    manifest["inputs"]["calib"]["source"] = "calib|*evil*_[link](http://x).npz"
    (hostile / "manifest.json").write_text(json.dumps(manifest))
    code, _ = _diff(tmp_path, healthy_bundle, hostile)
    assert code == 0
    assert main(["report", str(hostile), "-o", str(tmp_path / "report"), "--config-card"]) in (0, 1)
    for text in ((tmp_path / "diff" / "diff.md").read_text(), (tmp_path / "report" / "config_card.md").read_text()):
        # A fenced command shows the recorded paths verbatim (code is never HTML, a link or a table);
        # everywhere else they are escaped.
        prose = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", text, flags=re.S | re.M)
        assert "<script>" not in prose and "[link](" not in prose and "m|x" not in prose and "calib|" not in prose
        assert "&lt;script&gt;" in prose
    html = (tmp_path / "diff" / "diff.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html


@pytest.mark.slow
def test_config_card_is_redacted_with_the_report(healthy_bundle, demo, tmp_path):
    plain, redacted = tmp_path / "plain", tmp_path / "redacted"
    assert main(["report", str(healthy_bundle), "-o", str(plain), "--config-card"]) in (0, 1)
    assert main(["report", str(healthy_bundle), "-o", str(redacted), "--config-card", "--redact"]) in (0, 1)
    assert str(demo) in (plain / "config_card.md").read_text().replace("\\_", "_")  # the fixture's absolute paths
    card = (redacted / "config_card.md").read_text()
    for secret in (str(demo), str(healthy_bundle.parent), str(tmp_path)):
        assert secret not in card.replace("\\_", "_")
    assert "Redacted (`--redact`)" in card and "cls\\_int8.onnx" in card


def test_precision_changes_between_real_corpus_quantizations(tmp_path):
    """ModelOpt with extra ops quantized (cls_overquant) against its defaults (cls_healthy_entropy), same FP32 model."""
    before, after = ROOT / "corpus" / "cls_overquant", ROOT / "corpus" / "cls_healthy_entropy"
    code, doc = _diff(tmp_path, before, after)
    assert code == 0
    nodes = [{n["name"]: n["precision"] for n in json.loads((b / "quant" / "precision_summary.json").read_text())["nodes"]}
             for b in (before, after)]
    left = sum(p == "int8" and nodes[1].get(name) not in ("int8", None) for name, p in nodes[0].items())
    entered = sum(p != "int8" and nodes[1].get(name) == "int8" for name, p in nodes[0].items())
    assert left > 0 and entered > 0
    assert (doc["precision"]["left_int8"], doc["precision"]["entered_int8"]) == (left, entered)
    assert f"with {entered} node{'s' if entered != 1 else ''} entering INT8 and {left} leaving it" in doc["verdict"]["text"]
    counts = [json.loads((b / "quant" / "precision_summary.json").read_text())["counts"]["q_nodes"] for b in (before, after)]
    assert doc["precision"]["counts"]["q_nodes"] == counts


@pytest.mark.slow
def test_a_recorded_quantizer_call_is_diffed_and_carded(healthy_bundle, tmp_path):
    """manifest `quantization` (written by `qdqreport confirm`, docs/bundle.md): the call that made the QDQ model."""
    confirmed = tmp_path / "confirmed"
    shutil.copytree(healthy_bundle, confirmed)
    manifest = json.loads((confirmed / "manifest.json").read_text())
    call = "onnxruntime.quantization.quantize_static('cls_fp32.onnx', 'out.onnx', <reader over calib.npz>, nodes_to_exclude=['MatMul@0'])"
    manifest["quantization"] = {"quantizer": "onnxruntime", "version": "1.20.1", "command": call,
                                "excluded_nodes": ["MatMul@0"], "fix": "exclude MatMul@0", "by": "qdqreport confirm"}
    (confirmed / "manifest.json").write_text(json.dumps(manifest))
    code, doc = _diff(tmp_path, healthy_bundle, confirmed)
    assert code == 0
    rows = {c["item"]: c for c in doc["inputs"] if c["group"] == "quantization"}
    assert rows["quantizer"]["before"] is None and rows["quantizer"]["after"] == "onnxruntime 1.20.1"
    assert rows["quantizer call"]["after"] == call and rows["nodes excluded by the quantizer call"]["after"] == "MatMul@0"
    assert main(["report", str(confirmed), "-o", str(tmp_path / "report"), "--config-card"]) in (0, 1)
    card = (tmp_path / "report" / "config_card.md").read_text()
    assert call in card and "qdqreport confirm: onnxruntime 1.20.1" in card and "rebuilt" not in card
    assert "Nodes it excluded by name: MatMul@0." in card


def test_a_cosine_that_moves_while_the_decisions_stay_collapsed_is_no_improvement() -> None:
    """A new user's confirm of a PP-OCRv5 recognizer (every op type quantized, CER 99.7%): the fix moved the median
    cosine 0.5695 -> 0.5714 while the top-1 stayed at 56.1% and the decoded agreement fell 0.217% -> 0.201%; the
    verdict read "✅ the fix improves the outputs (cosine 0.57 → 0.57)"."""
    from qdqreport.diff.accuracy import AccuracyDiff, ComparisonDiff, MetricPair, OutputDiff
    from qdqreport.diff.model import FindingsDiff
    from qdqreport.diff.verdict import Tolerance, build_verdict

    output = OutputDiff("fetch_name_0", 200, MetricPair.of(0.5695, 0.5714), MetricPair.of(0.2, 0.2),
                        MetricPair.of(1.0, 1.0), MetricPair.of(0.561, 0.561), 106, 89, (), (),
                        levels=("collapse", "collapse"))
    comparison = ComparisonDiff("q", "quantization", "ort_fp32", "ort_qdq", False, (output,),
                                MetricPair.of(0.00217, 0.00201))
    verdict = build_verdict(AccuracyDiff((comparison,), (), (), True, 200, 200, ""), None, FindingsDiff((), (), ()),
                            Tolerance())
    assert verdict.kind == "unchanged" and "improves" not in verdict.text
    assert "no change in the decisions: the outputs are judged collapsed before and after" in verdict.text
    restored = OutputDiff("fetch_name_0", 200, MetricPair.of(0.5695, 0.99), MetricPair.of(0.2, 0.9),
                          MetricPair.of(1.0, 30.0), MetricPair.of(0.561, 0.99), 190, 2, (), (),
                          levels=("collapse", "agree"))
    better = build_verdict(AccuracyDiff((ComparisonDiff("q", "quantization", "ort_fp32", "ort_qdq", False,
                                                        (restored,), None),), (), (), True, 200, 200, ""),
                           None, FindingsDiff((), (), ()), Tolerance())
    assert better.kind == "restored"


def test_recurrent_state_never_makes_the_headline():
    """Silero VAD calibrated on noise, then on speech (read corpus): its state stateN moved from cosine 0.24 to 0.99 and
    the headline read "the fix improves the outputs (cosine 0.24 → 0.99)", the state unnamed (a new user's GTCRN diff
    likewise quoted a cache). State is never decisive (analysis/output_kinds.py): its moves are left out."""
    model = build_diff(ROOT / "corpus" / "vad_random_calib", ROOT / "corpus" / "vad_healthy_ort_sym", force=True)
    state = next(o for c in model.accuracy.comparisons for o in c.outputs if o.output == "stateN")
    assert "internal" in state.levels and state.cosine.after - state.cosine.before > 0.5
    assert "0.24" not in model.verdict.text and not [m for m in model.verdict.improvements if m.output == "stateN"]


def test_a_judged_level_that_changes_is_a_move_whatever_the_cosine():
    """A single-value speech probability has cosine 1 on both sides: Silero VAD calibrated on quiet speech (threshold
    decisions 96.0%, degrades) against its healthy symmetric recipe (97.3%, agrees) read "no accuracy change beyond the
    tolerance" both ways. The measure that judged the output moves the verdict, its level named."""
    fixed = build_diff(ROOT / "corpus" / "vad_calib_quiet", ROOT / "corpus" / "vad_healthy_ort_sym", force=True)
    assert fixed.verdict.kind == "improved"
    assert "threshold decisions 96.0% → 97.3%, degraded → agreeing" in fixed.verdict.text
    broken = build_diff(ROOT / "corpus" / "vad_healthy_ort_sym", ROOT / "corpus" / "vad_calib_quiet", force=True)
    assert broken.verdict.regressed and "agreeing → degraded" in broken.verdict.text
    same = build_diff(ROOT / "corpus" / "vad_healthy_ort_sym", ROOT / "corpus" / "vad_healthy_trt_nobias", force=True)
    assert same.verdict.kind == "unchanged"
