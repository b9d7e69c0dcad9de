"""The renderer: report model, HTML, Markdown and findings.json from real BundleBuilder bundles.

Rules are written elsewhere, so these tests run a test-local rule (`RuleSpec`) that returns
hand-made findings; nothing here depends on which rules exist.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import markdown as python_markdown
import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.engine import run_rules
from qdqreport.errors import QdqReportError
from qdqreport.findings import Finding, Fix, Metric, Series, Table, Text
from qdqreport.pipeline import render_report
from qdqreport.render.filters import fence, md
from qdqreport.render.markdown import render_markdown
from qdqreport.report.model import build_report
from qdqreport.report.sections import NODE_LIST_LIMIT
from qdqreport.rules import RuleSpec
from qdqreport.testing import BundleBuilder
from qdqreport.wording import percent

EVIL = "<script>alert(1)</script>"
CLASSES = 10


# --- bundles ------------------------------------------------------------------------------
def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (shifted / shifted.sum(axis=-1, keepdims=True)).astype(np.float32)


def class_runs(samples: int = 24) -> tuple[list[dict], list[dict]]:
    """FP32 class scores, and a QDQ run whose logits were squashed and shuffled (a collapsed model)."""
    rng = np.random.default_rng(7)
    logits = rng.normal(0.0, 3.0, size=(samples, 1, CLASSES))
    collapsed = 0.2 * logits + rng.normal(0.0, 1.0, size=logits.shape)
    return [{"probs": softmax(x)} for x in logits], [{"probs": softmax(x)} for x in collapsed]


def detector_runs(samples: int = 6) -> tuple[list[dict], list[dict]]:
    """A head concatenating 4 box coordinates (hundreds of pixels) with 2 scores (0..1) on axis 1."""
    rng = np.random.default_rng(11)
    fp32, qdq = [], []
    for _ in range(samples):
        boxes = rng.uniform(0, 640, size=(1, 4, 100))
        scores = rng.uniform(0, 1, size=(1, 2, 100))
        fp32.append({"det": np.concatenate([boxes, scores], axis=1).astype(np.float32)})
        noisy_boxes = boxes + rng.normal(0, 0.5, size=boxes.shape)
        qdq.append({"det": np.concatenate([noisy_boxes, rng.uniform(0, 1, size=scores.shape)], axis=1).astype(np.float32)})
    return fp32, qdq


def precision_summary(non_int8: int = 3) -> dict:
    """precision_summary.json as SHARED.md describes it, with a hostile node name among the float nodes."""
    nodes = [{"name": f"conv_{i}", "op_type": "Conv", "index": i, "precision": "int8", "activation_quantized": True,
              "weight_quantized": True, "activation_dtype": "int8", "weight_dtype": "int8", "output_quantized": True,
              "outputs": [f"conv_{i}_out"], "feeds_graph_output": False} for i in range(20)]
    for j in range(non_int8):
        name = EVIL if j == 0 else f"float_{j}"
        nodes.append({"name": name, "op_type": "Softmax" if j == 0 else "Add", "index": 20 + j, "precision": "fp16",
                      "activation_quantized": False, "weight_quantized": False, "activation_dtype": None,
                      "weight_dtype": None, "output_quantized": False, "outputs": [f"{name}_out"],
                      "feeds_graph_output": j == 0})
    return {
        "format": 1, "producer": {"name": "qdqreport", "version": "0.1.0"}, "float_dtype": "fp16",
        "counts": {"nodes": 60 + non_int8, "compute_nodes": 20 + non_int8, "quantized_nodes": 20, "q_nodes": 20,
                   "dq_nodes": 40},
        "by_op_type": {"Conv": {"int8": 20}, "Softmax": {"fp16": 1}, "Add": {"fp16": max(0, non_int8 - 1)}},
        "nodes": nodes,
        "qdq": [{"q_node": "q_0", "dq_nodes": ["dq_0"], "tensor": "x", "kind": "activation", "dtype": "int8", "axis": None,
                 "scale_count": 1, "scale_min": 0.02, "scale_max": 0.02, "scale_constant": True,
                 "scale_finite_positive": True, "zero_point_nonzero": False, "zero_point_max_abs": 0,
                 "pair_scales_match": True, "consumers": ["conv_0"]}],
        "sensitive": [{"node": EVIL, "op_type": "Softmax", "pattern": "softmax", "quantized": False, "tensor": f"{EVIL}_out"}],
    }


def input_stats(scale: float, per_sample: bool) -> dict:
    entry = {"shape": [1, 3, 48, 192], "dtype": "float32", "channel_axis": 1,
             "overall": {"min": -1.0 * scale, "max": 1.0 * scale, "mean": 0.1 * scale, "std": 0.5 * scale, "absmax": scale},
             "channels": [{"index": c, "min": -scale, "max": scale, "mean": 0.1, "std": 0.5} for c in range(3)]}
    if per_sample:
        entry["per_sample"] = [{"min": -1.0, "max": 1.0, "mean": 0.1, "std": 0.5}] * 4
    return {"format": 1, "source": "eval.npz" if per_sample else "calib.npz", "samples": 4, "inputs": {"x": entry}}


def collapsed_classifier(tmp_path: Path, non_int8: int = 3) -> BundleBuilder:
    fp32, qdq = class_runs()
    builder = BundleBuilder(tmp_path)
    builder.manifest["models"]["fp32"] = {"path": "/models/cls_fp32.onnx", "sha256": "a" * 64, "bytes": 1000}
    builder.manifest["models"]["qdq"] = {"path": "/models/cls_int8.onnx", "sha256": "b" * 64, "bytes": 400}
    builder.class_outputs("probs").stage("ort_fp32", fp32).stage("ort_qdq", qdq)
    builder.stage("trt_int8", status="failed", error="TensorRT build failed:\nno implementation for " + EVIL)
    builder.stage("trt_fp16", status="skipped", details={"reason": "tensorrt is not installed"})
    builder.tensors("quantization", [{"tensor": f"{EVIL}_out", "node": EVIL, "op_type": "Softmax", "samples": 24,
                                      "cosine": 0.42, "sqnr_db": 1.5, "max_abs": 0.9, "rel_l2": 0.8, "ref_absmax": 1.0}])
    builder.artifact("precision_summary", precision_summary(non_int8))
    builder.artifact("eval_stats", input_stats(1.0, per_sample=True))
    builder.artifact("calib_stats", input_stats(255.0, per_sample=False))
    builder.artifact("range_use", [{"input": "x", "q_node": "x_q", "scale": 2.0, "zero_point": 0, "qmin": -128,
                                    "qmax": 127, "representable_min": -256.0, "representable_max": 254.0,
                                    "eval_min": -1.0, "eval_max": 1.0, "range_used": 0.004, "clipped_share": 0.0}])
    builder.artifact("modelopt_log", {"format": 1, "total_nodes": 63, "quantized_nodes": 20, "quantizable_nodes": 21,
                                      "non_quantizable_partitions": 1, "nodes_to_quantize": 21,
                                      "quantized_type_counts": {"Conv": 20}, "random_calibration": False,
                                      "calibration_method": "entropy", "already_quantized": False,
                                      "warnings": ["Softmax " + EVIL + " not quantized"]})
    return builder


# --- hand-made findings through a test-local rule --------------------------------------------
SYMPTOM = Finding("QR001", "Quantization collapses the outputs", "error", 0.95, 0.5, "ort_qdq__vs__ort_fp32",
                  "Top-1 agreement fell to chance.", evidence=(Metric("median cosine", 0.31, "", "< 0.99"),),
                  stage="ort_qdq__vs__ort_fp32", tags=("symptom",))
CAUSE = Finding(
    "QR050", "Softmax quantized", "error", 0.9, 0.9, EVIL, f"The softmax {EVIL} is | quantized `badly`.",
    evidence=(Metric("cosine", float("nan")), Text(f"node {EVIL}"),
              Table("nodes", ("node", "cosine"), tuple((f"{EVIL}_{i}", 0.5) for i in range(40)), note="cut"),
              Series("error per node", "bar", ("a", "b", "c"), (0.1, 0.5, 0.9), "cosine", 0.99)),
    fixes=(Fix("Exclude the softmax", "python -m modelopt.onnx.quantization --nodes_to_exclude '<script>alert\\(1\\)</script>'"),),
    stage="quantization", tags=("root_cause",))
NOTE = Finding("QR060", "Calibration range", "warning", 0.5, 0.4, "x", "Calibration used a 255x range.", tags=("root_cause",))


def findings_rule(*findings: Finding) -> dict[str, RuleSpec]:
    """One test rule per rule id of *findings*, returning its own (a rule's findings carry its id)."""
    by_id: dict[str, list[Finding]] = {}
    for finding in findings:
        by_id.setdefault(finding.rule_id, []).append(finding)
    return {rule_id: RuleSpec(rule_id, "test-rule", "test rule", lambda ctx, own=tuple(own): list(own), (), __name__)
            for rule_id, own in by_id.items()}


def broken_rule() -> dict[str, RuleSpec]:
    def explode(ctx):
        raise RuntimeError(f"cannot read {EVIL}")
    return {"QR998": RuleSpec("QR998", "broken", "broken", explode, (), __name__)}


@pytest.fixture
def rendered(tmp_path):
    bundle = collapsed_classifier(tmp_path).build()
    outcome = render_report(bundle.location, tmp_path / "out", rules={**findings_rule(NOTE, CAUSE, SYMPTOM), **broken_rule()})
    html, md_text, findings = (path.read_text(encoding="utf-8") for path in outcome.paths)
    return outcome, html, md_text, findings


class Tags(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.starts: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.starts.append((tag, dict(attrs)))

    def named(self, tag: str) -> list[dict]:
        return [attrs for name, attrs in self.starts if name == tag]


def outside_code(markdown_text: str) -> str:
    return re.sub(r"^(`{3,}).*?^\1$", "", markdown_text, flags=re.S | re.M)


# --- HTML ---------------------------------------------------------------------------------
def test_html_is_self_contained_and_escapes_node_names(rendered):
    _, html, _, _ = rendered
    tags = Tags(html)
    links = [attrs.get(key) or "" for _, attrs in tags.starts for key in ("src", "href", "xlink:href")]
    assert links and all("//" not in value and not value.startswith(("http:", "https:", "data:")) for value in links)
    assert not tags.named("script") and not tags.named("link") and not tags.named("img")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<svg") >= 4  # cosine + SQNR per comparison, precision bars, the Series evidence


def test_html_has_every_section_and_finding_anchor(rendered):
    _, html, _, findings = rendered
    ids = [attrs["id"] for _, attrs in Tags(html).starts if "id" in attrs]
    assert len(ids) == len(set(ids)), "SVG ids must not collide once several plots share the page"
    order = [html.index(f'id="{section}"') for section in ("verdict", "stages", "findings", "plots", "precision",
                                                           "inputs", "provenance")]
    assert order == sorted(order)
    for finding in json.loads(findings)["findings"]:
        assert f'id="f-{finding["fingerprint"]}"' in html
    assert "TensorRT build failed" in html and "tensorrt is not installed" in html
    assert "Internal problems" in html and "QR998" in html


# --- Markdown -----------------------------------------------------------------------------
def test_markdown_escapes_user_strings(rendered):
    _, _, md_text, _ = rendered
    prose = outside_code(md_text)
    assert "<script" not in prose and "&lt;script&gt;alert(1)&lt;/script&gt;" in prose
    as_html = python_markdown.markdown(md_text, extensions=["tables", "fenced_code"])
    assert not Tags(as_html).named("script")
    assert "--nodes_to_exclude '<script>alert\\(1\\)</script>'" in md_text  # commands stay copy-pastable in a fence


def test_markdown_fits_one_github_comment_with_5000_float_nodes(tmp_path):
    bundle = collapsed_classifier(tmp_path, non_int8=5000).build()
    ctx = Context(bundle)
    model = build_report(bundle, run_rules(ctx, findings_rule(CAUSE, SYMPTOM)), ctx)
    assert model.precision.non_int8_total == 5000 and len(model.precision.non_int8) == NODE_LIST_LIMIT
    text = render_markdown(model)
    assert len(text) < 60000
    assert "4,975 more nodes, see report.html" in text  # 25 rows shown at the first level
    assert "Softmax quantized" in text


def test_markdown_drops_lower_sections_then_cuts(tmp_path):
    bundle = collapsed_classifier(tmp_path).build()
    ctx = Context(bundle)
    model = build_report(bundle, run_rules(ctx, findings_rule(CAUSE, SYMPTOM)), ctx)
    full = render_markdown(model)
    assert "### Provenance" in full
    smaller = render_markdown(model, budget=len(full) - 200)
    assert len(smaller) <= len(full) - 200 and "Softmax quantized" in smaller
    tiny = render_markdown(model, budget=1800)
    assert len(tiny) <= 1800 and "Left out to fit a GitHub comment: Findings, Task-level results, FP16 check, Precision" in tiny
    assert len(render_markdown(model, budget=300)) <= 300
    assert tiny.startswith("## 🔴 Quantization collapses the outputs")


def test_md_filter_and_fence():
    assert md("a|b <i>`x`</i>\nnext_line") == "a\\|b &lt;i&gt;\\`x\\`&lt;/i&gt; next\\_line"
    block = fence("echo ```")
    assert block.startswith("````sh\n") and block.endswith("\n````")


# --- findings.json and the model ------------------------------------------------------------
def test_findings_json_is_strict_and_ranked(rendered):
    _, _, _, text = rendered
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}"))
    assert document["format"] == "qdqreport.findings" and document["version"] == "1.4"
    assert [f["id"] for f in document["findings"]] == ["QR050", "QR001", "QR060"]  # severity, then score x confidence
    cause = document["findings"][0]
    assert cause["evidence"][0] == {"type": "metric", "name": "cosine", "value": None, "unit": "", "threshold": ""}
    assert cause["fingerprint"] == CAUSE.fingerprint and cause["fixes"][0]["command"].startswith("python -m modelopt")
    assert document["verdict"]["severity"] == "error"
    assert document["failures"][0]["rule_id"] == "QR998"


def test_verdict_names_symptom_numbers_and_top_root_cause(tmp_path):
    bundle = collapsed_classifier(tmp_path).build()
    ctx = Context(bundle)
    model = build_report(bundle, run_rules(ctx, findings_rule(NOTE, CAUSE, SYMPTOM)), ctx)
    row = model.comparisons[0].outputs[0]
    assert row.cosine_median < 0.9 and row.top1 is not None and row.top1 < 0.9
    # Judged by what decides the task (analysis/agreement.py): a 3-class output's cosine says nothing.
    assert model.verdict.text == ("Quantization collapses the outputs: 13 of 24 top-1 decisions change, plus 3 near ties "
                                  "(output probs); most likely cause: Softmax quantized")
    assert row.top1 == pytest.approx(8 / 24)  # the table's raw top-1 column: 16 flips, 3 of them near ties
    assert model.verdict.severity == "error" and model.verdict.counts == {"error": 2, "warning": 1, "info": 0}
    json.dumps(model.to_dict(), allow_nan=False)


def test_verdict_when_outputs_agree(tmp_path):
    fp32, _ = class_runs()
    bundle = BundleBuilder(tmp_path).class_outputs("probs").stage("ort_fp32", fp32).stage("ort_qdq", fp32).build()
    ctx = Context(bundle)
    model = build_report(bundle, run_rules(ctx, rules={}), ctx)
    # Class scores are judged by their decisions (analysis/agreement.py), and the verdict quotes them.
    assert model.verdict.text.startswith("Outputs agree at every compared stage; the least: 0 of 24 top-1 decisions change (")
    assert model.verdict.text.endswith("output probs)")
    assert model.verdict.severity == "ok"
    html = render_report(bundle.location, tmp_path / "out", rules={}).paths[0].read_text(encoding="utf-8")
    assert "every compared sample is identical" in html  # SQNR is infinite, so no histogram


def test_stage_matrix_notes_mixed_scale_slices(tmp_path):
    fp32, qdq = detector_runs()
    bundle = BundleBuilder(tmp_path).stage("ort_fp32", fp32).stage("ort_qdq", qdq).build()
    ctx = Context(bundle)
    model = build_report(bundle, run_rules(ctx, rules={}), ctx)
    row = model.comparisons[0].outputs[0]
    assert row.cosine_median > 0.99  # boxes dominate the whole-tensor cosine...
    assert re.fullmatch(r"compared per slice along axis 1: scales differ [\d,.]+(×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?×; worst slice [45]: cosine 0\.\d\d",
                        row.slice_note)  # ...but the score slices are wrong
    assert row.slice_note.replace("×", "") in render_markdown(model).replace("×", "").replace("\\", "")


def test_model_holds_stages_precision_inputs_and_provenance(tmp_path):
    bundle = collapsed_classifier(tmp_path).build()
    ctx = Context(bundle)
    model = build_report(bundle, run_rules(ctx, rules={}), ctx)
    stages = {s.id: s for s in model.stages}
    assert stages["trt_int8"].status == "failed" and "no implementation" in stages["trt_int8"].reason
    assert stages["trt_fp16"].reason == "tensorrt is not installed"
    assert model.precision.columns == ("int8", "uint8", "fp16", "fp32")
    assert model.precision.by_op_type[0] == {"op_type": "Conv", "counts": [20, 0, 0, 0], "total": 20}
    assert model.precision.sensitive[0]["cosine"] == pytest.approx(0.42)
    assert model.precision.modelopt["warnings_total"] == 1
    assert model.inputs.rows[0]["calib"]["max"] == 255.0 and model.inputs.range_use[0]["range_used"] == 0.004
    assert [m["role"] for m in model.provenance.models] == ["fp32", "qdq"]
    assert model.provenance.argv == ("qdqreport-testing",)


# --- files: determinism, atomicity, exit codes -----------------------------------------------
def test_rendering_twice_gives_identical_bytes(tmp_path):
    bundle = collapsed_classifier(tmp_path).build()
    rules = findings_rule(CAUSE, SYMPTOM, NOTE)
    first = render_report(bundle.location, tmp_path / "a", rules=rules)
    second = render_report(bundle.location, tmp_path / "b", rules=rules)
    for one, two in zip(first.paths, second.paths):
        assert one.read_bytes() == two.read_bytes(), one.name


def test_a_failing_renderer_leaves_the_output_folder_untouched(tmp_path, monkeypatch):
    bundle = collapsed_classifier(tmp_path).build()
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("previous report")

    def fail(model, budget=60000):
        raise RuntimeError("markdown renderer broke")

    monkeypatch.setattr("qdqreport.render.markdown.render_markdown", fail)
    with pytest.raises(RuntimeError, match="markdown renderer broke"):
        render_report(bundle.location, out, rules={})
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]
    assert (out / "report.html").read_text() == "previous report"


@pytest.mark.parametrize(("found", "fail_on", "code"), [
    ((NOTE,), None, 0), ((NOTE,), "error", 0), ((NOTE,), "warning", 1),
    ((NOTE, CAUSE), "error", 1), ((), "warning", 0),
])
@pytest.mark.slow
def test_fail_on_sets_the_exit_code(tmp_path, found, fail_on, code):
    bundle = collapsed_classifier(tmp_path).build()
    assert render_report(bundle.location, tmp_path / "out", fail_on=fail_on, rules=findings_rule(*found)).exit_code == code


def test_bad_fail_on_and_output_inside_bundle_are_refused(tmp_path):
    bundle = collapsed_classifier(tmp_path).build()
    with pytest.raises(QdqReportError, match="--fail-on"):
        render_report(bundle.location, tmp_path / "out", fail_on="fatal", rules={})
    with pytest.raises(QdqReportError, match="inside the bundle"):
        render_report(bundle.location, bundle.location / "report", rules={})


@pytest.mark.slow
def test_renderer_never_imports_onnx_or_tensorrt(tmp_path):
    bundle = collapsed_classifier(tmp_path).build()
    script = ("import sys\nfrom qdqreport.pipeline import render_report\n"
              f"render_report({str(bundle.location)!r}, {str(tmp_path / 'out')!r}, rules={{}})\n"
              "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('onnx', 'onnxruntime', 'tensorrt', 'polygraphy'))\n"
              "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).resolve().parent.parent)


def test_templates_load_from_the_installed_package_first(tmp_path, monkeypatch):
    import shutil

    import qdqreport
    from qdqreport.render import env

    source = Path(qdqreport.__file__).resolve().parent.parent / "templates"
    installed = tmp_path / "site" / "qdqreport"
    shutil.copytree(source, installed / "templates")
    monkeypatch.setattr(qdqreport, "__file__", str(installed / "__init__.py"))
    env.html_env.cache_clear()
    try:
        assert env.html_env().loader.searchpath == [str(installed / "templates")]
        shutil.rmtree(installed / "templates")
        env.html_env.cache_clear()
        with pytest.raises(QdqReportError, match="report templates not found"):
            env.html_env()
    finally:
        env.html_env.cache_clear()


def test_a_template_cache_that_cannot_be_written_or_read_costs_nothing(tmp_path):
    from jinja2 import Environment

    from qdqreport.render.env import _BestEffortCache, _loader
    from qdqreport.render.filters import MARKDOWN_FILTERS

    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder should be", encoding="utf-8")  # a full or broken /tmp
    cached = Environment(loader=_loader(), bytecode_cache=_BestEffortCache(str(not_a_folder)))
    plain = Environment(loader=_loader())
    cached.filters.update(MARKDOWN_FILTERS)
    plain.filters.update(MARKDOWN_FILTERS)
    for name in ("report.md.j2", "diff.md.j2"):  # compiled, the cache's write and read both fail: no error
        assert cached.get_template(name).filename == plain.get_template(name).filename
    assert not_a_folder.read_text(encoding="utf-8").startswith("a file")  # nothing written over it
