"""The deployment target (`--target tensorrt|onnxruntime`, issue 10 item 6) on real corpus bundles.

The healthy controls below were quantized with onnxruntime's quantize_static (int32 bias DequantizeLinear
nodes, which TensorRT's parser rejects); the *_ort_uint8 cases use its defaults (UINT8 with zero-points).
All are unsealed corpus cases. What only TensorRT rejects is a deployment finding: an error for target
tensorrt, an info note for onnxruntime, never a root cause, shown in its own report section.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.target import recorded_target, resolve_target
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from corpus_score import load_labels, score_case
from qdqreport.engine import run_rules
from qdqreport.errors import BundleError, InputError
from qdqreport.pipeline import render_report
from qdqreport.report.model import build_report
from qdqreport.schemas import findings_schema
from qdqreport.testing import BundleBuilder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
DEMO = ROOT / "qdqreport" / "demo"
HEALTHY_ORT = ("vad_healthy_ort_sym", "yolo_healthy_ort_percentile")
UINT8_ORT = ("cls_ort_uint8", "det_ort_uint8")
SECTION = "Deployment to TensorRT: what the engine build will reject or change"


def findings(case: str, target: str | None):
    return run_rules(Context(Bundle(CORPUS / case), target=target)).findings


def test_the_cases_are_unsealed_and_made_as_described():
    labels = load_labels(CORPUS)
    for case in HEALTHY_ORT + UINT8_ORT:
        assert not labels[case].get("sealed"), f"{case} is sealed: never test on it"
        assert "onnxruntime" in labels[case]["how"] or labels[case]["how"].startswith("the same")
    for case in HEALTHY_ORT:
        dtypes = {e["dtype"] for e in Context(Bundle(CORPUS / case)).precision["qdq"]}
        assert "int32" in dtypes and "uint8" not in dtypes  # symmetric INT8 plus ORT's quantized biases


@pytest.mark.parametrize("case", HEALTHY_ORT)
def test_healthy_ort_model_has_no_error_for_onnxruntime(case):
    found = findings(case, "onnxruntime")
    # Other rules' judgement of these outputs is issue 10's agreement work; here: nothing TensorRT-only errs.
    assert not [f for f in found if f.severity == "error" and (f.rule_id == "QR004" or "deployment" in f.tags)]
    qr004 = [f for f in found if f.rule_id == "QR004"]
    assert qr004 and all(f.severity == "info" and f.tags == ("deployment",) for f in qr004)
    assert all("only matters if you deploy with TensorRT" in f.summary for f in qr004)


@pytest.mark.parametrize("case", HEALTHY_ORT + UINT8_ORT)
def test_tensorrt_target_keeps_parser_rejections_as_deployment_errors(case):
    qr004 = [f for f in findings(case, "tensorrt") if f.rule_id == "QR004"]
    assert qr004 and all(f.severity == "error" for f in qr004)
    assert all("deployment" in f.tags and "root_cause" not in f.tags for f in qr004)


def test_int32_bias_is_named_with_the_parser_message_and_a_fix():
    [finding] = [f for f in findings("vad_healthy_ort_sym", "tensorrt") if f.rule_id == "QR004"]
    assert finding.subject == "type TensorRT lacks"
    assert "only activation types allowed as input to this layer" in finding.summary
    assert any("'QuantizeBias': False" in fix.command for fix in finding.fixes)


@pytest.mark.parametrize("case", UINT8_ORT)
def test_uint8_is_info_for_onnxruntime(case):
    qr004 = [f for f in findings(case, "onnxruntime") if f.rule_id == "QR004"]
    assert {f.subject for f in qr004} == {"non-zero zero-point", "type TensorRT lacks"}
    assert all(f.severity == "info" for f in qr004)


def test_pair_scales_that_ort_computes_stay_a_root_cause_for_either_target():
    for target in ("tensorrt", "onnxruntime"):
        [finding] = [f for f in findings("cls_pair_scales_differ", target) if f.rule_id == "QR004"]
        assert finding.severity == "error" and finding.tags == ("root_cause",)


@pytest.mark.slow
@pytest.mark.parametrize("case", UINT8_ORT + HEALTHY_ORT)
def test_report_shows_the_deployment_section_in_its_own_place_in_rank_order(case, tmp_path):
    outcome = render_report(CORPUS / case, tmp_path / "tensorrt", fail_on="error", target="tensorrt")
    assert outcome.exit_code == 1 and {f.rule_id for f in outcome.tripped} >= {"QR004"}
    md = (tmp_path / "tensorrt" / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "tensorrt" / "report.html").read_text(encoding="utf-8")
    report = json.loads((tmp_path / "tensorrt" / "findings.json").read_text(encoding="utf-8"))
    # The section of the first-ranked finding (findings.json's order) comes first, in both formats.
    deployment_first = "deployment" in report["findings"][0]["tags"]
    assert (md.index(f"### {SECTION}") < md.index("### Findings (")) == deployment_first
    assert (html.index('<section id="deployment">') < html.index('<section id="findings">')) == deployment_first
    findings_part = md[md.index("### Findings ("):]
    findings_part = findings_part[:findings_part.index(f"### {SECTION}")] if not deployment_first else \
        findings_part[:findings_part.index("\n### ", 1)]
    assert "QR004" in md[md.index(f"### {SECTION}"):] and "QR004" not in findings_part
    headline = md.splitlines()[0]
    assert "most likely cause: " not in headline or "Q/DQ pair(s)" not in headline.split("most likely cause: ")[1]
    assert any(f["id"] == "QR004" and "deployment" in f["tags"] for f in report["findings"])
    jsonschema.validate(report, findings_schema())
    assert report["target"] == "tensorrt"

    ort = render_report(CORPUS / case, tmp_path / "ort", fail_on="warning", target="onnxruntime")
    assert not [f for f in ort.tripped if f.rule_id == "QR004"]
    ort_md = (tmp_path / "ort" / "report.md").read_text(encoding="utf-8")
    assert f"### {SECTION}" in ort_md and "Your deployment target is ONNX Runtime" in ort_md
    assert json.loads((tmp_path / "ort" / "findings.json").read_text(encoding="utf-8"))["target"] == "onnxruntime"


def test_verdict_never_names_a_deployment_finding_as_the_cause_of_an_ort_divergence():
    """cls_ort_uint8 diverges in ONNX Runtime itself (QR001); UINT8 is no cause of that, whatever the target."""
    bundle = Bundle(CORPUS / "cls_ort_uint8")
    ctx = Context(bundle, target="tensorrt")
    result = run_rules(ctx)
    assert any(f.rule_id == "QR001" for f in result.findings)
    verdict = build_report(bundle, result, ctx).verdict.text
    # The deployment error may be named as the next thing to fix before TensorRT, never as the cause.
    assert "most likely cause" not in verdict and "no root cause identified" in verdict
    cause_part, _, deployment_part = verdict.partition("before deploying to TensorRT:")
    assert "zero-point" not in cause_part and "TensorRT lacks" not in cause_part
    assert "zero-point" in deployment_part


def test_agreeing_outputs_name_the_deployment_error_as_such(tmp_path):
    render_report(CORPUS / "vad_healthy_ort_sym", tmp_path, target="tensorrt")
    headline = (tmp_path / "report.md").read_text(encoding="utf-8").splitlines()[0]
    assert "; but deployment to TensorRT: 5 bias DequantizeLinear node(s): type TensorRT lacks" in headline
    # ... and how a deployment on ONNX Runtime reads it (the red is TensorRT's only).
    assert headline.endswith("(deploying with ONNX Runtime: qdqreport report --target onnxruntime)")


# --- where the target comes from ------------------------------------------------------------------
def _bundle_with_target(tmp_path: Path, target) -> Bundle:
    builder = BundleBuilder(tmp_path)
    if target is not None:
        builder.manifest["settings"] = {"target": target}
    return builder.build()


def test_precedence_option_then_bundle_then_tensorrt(tmp_path):
    assert Context(_bundle_with_target(tmp_path / "a", None)).target == "tensorrt"
    recorded = _bundle_with_target(tmp_path / "b", "onnxruntime")
    assert Context(recorded).target == "onnxruntime"
    assert Context(recorded, target="tensorrt").target == "tensorrt"
    assert resolve_target(None, {"settings": {"ort_provider": "cpu"}}, "m") == "tensorrt"  # bundles before the option


def test_bad_targets_are_one_line_errors(tmp_path, capsys):
    with pytest.raises(InputError, match="--target 'trt'"):
        resolve_target("trt", {}, "manifest.json")
    with pytest.raises(BundleError, match="settings.target is 'gpu'"):
        recorded_target({"settings": {"target": "gpu"}}, "manifest.json")
    bundle = _bundle_with_target(tmp_path / "bad", "gpu")
    assert main(["validate", str(bundle.location)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "manifest.json" in err and "settings.target" in err and "--target" in err
    assert main(["validate", str(bundle.location), "--target", "onnxruntime"]) == 0  # the option overrides it
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(bundle.location), "-o", str(tmp_path / "r"), "--target", "trt"])
    assert exit_.value.code == 2 and not (tmp_path / "r").exists()


@pytest.mark.slow
def test_cli_report_target_decides_fail_on_error(tmp_path, capsys):
    bundle = str(CORPUS / "vad_healthy_ort_sym")
    assert main(["report", bundle, "-o", str(tmp_path / "ort"), "--target", "onnxruntime", "--fail-on", "error"]) == 0
    assert main(["report", bundle, "-o", str(tmp_path / "trt"), "--target", "tensorrt", "--fail-on", "error"]) == 1
    assert "QR004 error" in capsys.readouterr().err
    assert main(["report", bundle, "-o", str(tmp_path / "default"), "--fail-on", "error"]) == 1  # older bundle: tensorrt


@pytest.mark.slow
def test_collect_records_the_target_and_report_reads_it(tmp_path):
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "2", "--no-fp16-check", "-o", str(out),
                 "--target", "onnxruntime", "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["target"] == "onnxruntime"
    ctx = Context(Bundle(out))
    assert ctx.target == "onnxruntime"
    assert build_report(ctx.bundle, run_rules(ctx), ctx).target == "onnxruntime"
    default = tmp_path / "default"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "2", "--no-fp16-check", "-o", str(default),
                 "--quiet"]) == 0
    assert json.loads((default / "manifest.json").read_text(encoding="utf-8"))["settings"]["target"] == "tensorrt"


def test_diff_judges_both_bundles_for_one_target(tmp_path):
    from qdqreport.diff import build_diff

    for target, severity in (("tensorrt", "error"), ("onnxruntime", "info")):
        model = build_diff(CORPUS / "vad_healthy_ort_sym", CORPUS / "vad_healthy_ort_sym", target=target)
        assert [f.severity for f in model.findings.persisting if f.rule_id == "QR004"] == [severity], target


def test_help_documents_the_option(capsys):
    for command in ("report", "validate", "collect", "diff"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--target {tensorrt,onnxruntime}" in capsys.readouterr().out


# --- the corpus scorer reads the label ------------------------------------------------------------
def test_corpus_scorer_uses_the_case_target(tmp_path):
    labels = load_labels(CORPUS)
    label = labels["vad_healthy_ort_sym"]
    assert label["target"] == "onnxruntime" and label["healthy"]
    assert score_case(CORPUS, "vad_healthy_ort_sym", label).errors == 0
    as_tensorrt = {k: v for k, v in label.items() if k != "target"}
    assert score_case(CORPUS, "vad_healthy_ort_sym", as_tensorrt).errors >= 1
    assert all("target" not in labels[c] for c in labels if labels[c]["cause"]["number"] == 5)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copytree(CORPUS / "vad_healthy_ort_sym", corpus / "vad_healthy_ort_sym")
    (corpus / "labels.json").write_text(json.dumps({"vad_healthy_ort_sym": {**label, "target": "trt"}}))
    with pytest.raises(InputError, match=r"labels.json: case 'vad_healthy_ort_sym' has target 'trt'"):
        score_case(corpus, "vad_healthy_ort_sym", {**label, "target": "trt"})


@pytest.mark.slow
def test_unexplained_ort_divergence_points_at_the_deployment_error_first(tmp_path):
    # cls_ort_uint8 (unsealed): ONNX Runtime's uint8 recipe moves 1 of 24 decisions and no rule explains it;
    # TensorRT would not honour its zero-points. The verdict says so and the deployment section comes first.
    render_report(CORPUS / "cls_ort_uint8", tmp_path, target="tensorrt")
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    headline = md.splitlines()[0]
    assert "no root cause identified; before deploying to TensorRT: " in headline and "zero-point" in headline
    assert md.index(f"### {SECTION}") < md.index("### Findings (")
