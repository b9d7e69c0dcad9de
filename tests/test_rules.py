"""Every registered rule against its own Fires/Quiet examples, plus registry invariants."""

from __future__ import annotations

import ast
import random
import re
import shlex
from pathlib import Path

import pytest

from qdqreport.engine import run_rules
import qdqreport.rules as rules_package
from qdqreport.findings import SEVERITIES, Finding, Fix, Text
from qdqreport.rules import FindingFactory, RuleSpec, WrongRuleIdError, discover, rule
from qdqreport.fixes import exclusion, modelopt_command
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_graph, classifier_run, node, qdq_entry
from qdqreport.testing import BundleBuilder

RULES = discover()
EXAMPLES = [pytest.param(spec, example, id=f"{rule_id}-{'fires' if example.fires else 'quiet'}-{example.name}")
            for rule_id, spec in RULES.items() for example in spec.examples]


def findings_of(spec, example, tmp_path) -> list[Finding]:
    builder = BundleBuilder(tmp_path)
    example.build(builder)
    return spec.run(builder.context())


@pytest.mark.parametrize(("spec", "example"), EXAMPLES)
def test_example(spec, example, tmp_path):
    findings = findings_of(spec, example, tmp_path)
    own = [f for f in findings if f.rule_id == spec.id]
    if example.fires:
        assert own, f"{spec.id} stayed quiet on its Fires example {example.name!r}"
    else:
        assert not own, f"{spec.id} fired on its Quiet example {example.name!r}: {[f.summary for f in own]}"
    assert len(own) == len(findings), "a rule only returns findings of its own id"


@pytest.mark.parametrize(("spec", "example"), [p for p in EXAMPLES if p.values[1].fires])
def test_fired_findings_are_complete(spec, example, tmp_path):
    """A finding a user reads has evidence, a fix, a severity, and a root-cause or symptom role."""
    for finding in findings_of(spec, example, tmp_path):
        assert finding.severity in SEVERITIES
        assert finding.summary and finding.subject
        assert finding.evidence, f"{spec.id}: no evidence"
        assert finding.fixes and all(fix.action for fix in finding.fixes), f"{spec.id}: no concrete fix"
        for fix in finding.fixes:
            if "modelopt" in fix.command:
                # A step the model needs first (Constant weights moved into initializers) comes before it.
                quantize = fix.command.split(" && ")[-1]
                assert quantize.startswith("python -m modelopt.onnx.quantization --onnx_path=")
                assert "--output_path=" in fix.command


def test_registry_has_the_root_cause_rules():
    assert {f"QR00{i}" for i in range(1, 10)} <= set(RULES)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_is_documented_and_has_examples(rule_id):
    spec = RULES[rule_id]
    assert re.fullmatch(r"QR\d{3}", spec.id)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", spec.slug)
    assert spec.title and spec.summary and spec.summary != spec.title
    assert "Why it matters:" in spec.doc and "Fix:" in spec.doc
    assert any(e.fires for e in spec.examples) and any(not e.fires for e in spec.examples)
    assert len({e.name for e in spec.examples}) == len(spec.examples)


def test_ids_and_slugs_are_unique():
    slugs = [spec.slug for spec in RULES.values()]
    assert len(set(slugs)) == len(slugs)
    assert all(rule_id == spec.id for rule_id, spec in RULES.items())


@pytest.mark.parametrize(("spec", "example"), [p for p in EXAMPLES if p.values[1].fires])
def test_findings_of_one_rule_have_distinct_subjects(spec, example, tmp_path):
    """The engine deduplicates by fingerprint (rule id + subject): two findings must not share one."""
    fingerprints = [f.fingerprint for f in findings_of(spec, example, tmp_path)]
    assert len(set(fingerprints)) == len(fingerprints)


# --- the engine over all rules --------------------------------------------------------------

def _many_problems(builder: BundleBuilder) -> BundleBuilder:
    """A classifier whose quantization collapses, calibrated on random data, with a failed engine build."""
    logits = class_logits(40, seed=3)
    builder.manifest["models"]["fp32"] = {"path": "cls_fp32.onnx", "sha256": "0" * 64}
    builder.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    builder.stage("ort_qdq", classifier_run(logits, noise=1.5, shrink=0.3, seed=4))
    builder.stage("trt_int8", status="failed", error="Assertion failed: shiftIsAllZeros(zeroPoint)")
    builder.artifact("precision_summary", classifier_graph(head_precision="int8", softmax_precision="int8"))
    builder.artifact("modelopt_log", {"format": 1, "random_calibration": True, "calibration_method": "entropy",
                                      "warnings": ["Using random data for calibration."]})
    return builder


def test_engine_ranks_the_same_whatever_the_registry_order(tmp_path):
    ctx = _many_problems(BundleBuilder(tmp_path)).context()
    expected = run_rules(ctx, RULES)
    assert {"QR001", "QR002", "QR008", "QR009"} <= {f.rule_id for f in expected.findings}
    assert not expected.failures
    items = list(RULES.items())
    for seed in range(3):
        random.Random(seed).shuffle(items)
        shuffled = run_rules(ctx, dict(items))
        assert [(f.rule_id, f.subject, f.severity) for f in shuffled.findings] == \
               [(f.rule_id, f.subject, f.severity) for f in expected.findings]
    assert [f.rank_key() for f in expected.findings] == sorted(f.rank_key() for f in expected.findings)


def test_root_causes_rank_above_the_symptom_of_equal_severity(tmp_path):
    findings = run_rules(_many_problems(BundleBuilder(tmp_path)).context(), RULES).findings
    symptom = next(i for i, f in enumerate(findings) if "symptom" in f.tags)
    random_data = next(i for i, f in enumerate(findings) if f.rule_id == "QR009")
    assert random_data < symptom


def test_a_rule_that_raises_becomes_a_rule_failure(tmp_path):
    def broken(ctx):
        raise KeyError("nodes")

    spec = RuleSpec("QR999", "broken", "Broken", broken, (), __name__)
    result = run_rules(_many_problems(BundleBuilder(tmp_path)).context(), {**RULES, "QR999": spec})
    assert [f.rule_id for f in result.failures] == ["QR999"]
    assert "KeyError" in result.failures[0].message and "test_rules.py" in result.failures[0].message
    assert "QR999" in result.rules_run and {"QR001", "QR009"} <= {f.rule_id for f in result.findings}


# --- the finding factory bound to each rule ----------------------------------------------------

# Every module of the rules package but __init__.py, where the factory itself builds Finding.
RULE_MODULES = sorted(p for p in (Path(__file__).resolve().parent.parent / "qdqreport" / "rules").glob("*.py")
                      if p.name != "__init__.py")


def test_every_rule_carries_the_finding_factory_of_its_own_id():
    for rule_id, spec in RULES.items():
        factory = getattr(spec.function, "finding", None)
        assert isinstance(factory, FindingFactory) and factory.rule_id == rule_id, rule_id


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda p: p.name)
def test_no_rule_module_builds_a_finding_naming_a_rule_id(path):
    """The rules build findings with their own factory (`my_rule.finding(...)`): no module of the rules package
    calls Finding(...) itself or passes a rule id (a `rule_id=` keyword or a "rule_id" key), so none can emit a
    finding under another rule's id."""
    offences = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if callee == "Finding":
                offences.append(f"line {node.lineno}: Finding(...)")
            offences += [f"line {node.lineno}: rule_id=" for k in node.keywords if k.arg == "rule_id"]
        if isinstance(node, ast.Dict):
            offences += [f"line {node.lineno}: 'rule_id' key" for k in node.keys
                         if isinstance(k, ast.Constant) and k.value == "rule_id"]
    assert not offences, f"{path.name}: {offences}"


def test_the_factory_cannot_be_given_another_id():
    factory = RULES["QR008"].function.finding
    with pytest.raises(TypeError):
        factory(rule_id="QR001", title="t", severity="info", confidence=1.0, score=0.1, subject="s", summary="x")
    finding = factory(title="t", severity="info", confidence=1.0, score=0.1, subject="s", summary="x",
                      evidence=[Text("e")], fixes=[Fix("f")], tags=["symptom"])
    assert finding == Finding("QR008", "t", "info", 1.0, 0.1, "s", "x", (Text("e"),), (Fix("f"),), "", ("symptom",))


def test_a_finding_of_another_rule_id_is_a_rule_failure(tmp_path):
    """A rule (a plug-in, say) that builds Finding itself with the wrong id: the engine drops its findings and
    records a failure naming both ids; the other rules' findings are kept."""
    def impostor(ctx):
        return [Finding("QR009", "not mine", "error", 1.0, 1.0, "s", "x")]

    spec = RuleSpec("QR999", "impostor", "Impostor", impostor, (), __name__)
    with pytest.raises(WrongRuleIdError):
        spec.run(BundleBuilder(tmp_path / "a").context())
    result = run_rules(_many_problems(BundleBuilder(tmp_path / "b")).context(), {**RULES, "QR999": spec})
    assert [f.rule_id for f in result.failures] == ["QR999"]
    assert "WrongRuleIdError" in result.failures[0].message and "'QR009'" in result.failures[0].message
    assert "not mine" not in [f.title for f in result.findings] and "QR009" in {f.rule_id for f in result.findings}


def test_a_decorated_rule_finds_with_its_own_id(tmp_path, monkeypatch):
    """What a plug-in author writes: @rule binds `finding` to the function; the registry entry runs it."""
    monkeypatch.setattr(rules_package, "REGISTRY", {})

    @rule("QR990", "plugin-example", "A plug-in example")
    def plugin_example(ctx):
        """Always fires."""
        yield plugin_example.finding(title="t", severity="info", confidence=1.0, score=0.1, subject="s", summary="x")

    [finding] = rules_package.REGISTRY["QR990"].run(BundleBuilder(tmp_path).context())
    assert finding.rule_id == "QR990"


# --- fix command lines ------------------------------------------------------------------------

def _example(rule_id: str, name: str):
    return next(e for e in RULES[rule_id].examples if e.name == name)


def test_deployment_divergence_fix_rebuilds_with_obeyed_precisions(tmp_path):
    spec = RULES["QR001"]
    [finding] = findings_of(spec, _example("QR001", "TensorRT INT8 engine drifts from the QDQ model"), tmp_path)
    assert finding.stage == "trt_int8__vs__ort_qdq"
    commands = [fix.command for fix in finding.fixes]
    # The model at the path the bundle recorded (relative to where collect ran), not a bare file name.
    assert "trtexec --onnx=out/cls_int8.onnx --int8 --fp16 --precisionConstraints=obey" in commands[0]
    assert commands[1] == "trtexec --onnx=out/cls_int8.onnx --stronglyTyped"
    assert "TensorRT 11" in finding.fixes[1].action


def test_node_exclusions_match_exactly_the_named_nodes_as_modelopt_reads_them(tmp_path):
    """ModelOpt applies --nodes_to_exclude with re.match; a pattern must not catch a prefix sibling."""
    names = ["/model.22/dfl/conv/Conv", "/model.2/m.0/Conv_1", "Softmax@0"]
    siblings = ["/model.22/dfl/conv/Conv_1", "/model.2/m.0/Conv_10", "Softmax@01", "/modelX22/dfl/conv/Conv"]
    command = modelopt_command(BundleBuilder(tmp_path).context(), exclusion(names))
    argv = shlex.split(command)
    start = argv.index("--nodes_to_exclude") + 1
    patterns = argv[start:start + len(names)]
    assert all(not p.startswith("--") for p in patterns)
    assert sorted(n for n in names if any(re.match(p, n) for p in patterns)) == sorted(names)
    assert not [s for s in siblings if any(re.match(p, s) for p in patterns)]


def test_sensitive_op_fix_excludes_by_name_when_the_op_type_is_shared(tmp_path):
    graph = classifier_graph(head_precision="int8", softmax_precision="int8")
    graph["nodes"].append(node("MatMul@1", "MatMul", 3, "int8"))  # an attention-like MatMul that is fine
    builder = BundleBuilder(tmp_path).artifact("precision_summary", graph)
    [finding] = RULES["QR002"].run(builder.context())
    argv = shlex.split(finding.fixes[0].command)
    assert argv[argv.index("--nodes_to_exclude") + 1] == r"MatMul@0$"
    # ModelOpt never quantizes a Softmax (configure_ort drops it from ORT's registries): --op_types_to_exclude Softmax
    # would change nothing. No pair in this graph says which node put the Softmax's INT8 input there, so the fix says it
    # cannot act on it instead of dropping it silently.
    assert "--op_types_to_exclude" not in argv and "Softmax" not in finding.fixes[0].command
    assert "Not acted on by this command: Softmax@0 (Softmax)" in finding.fixes[0].action
    assert finding.severity == "warning"  # nothing measured: no tensor errors, no diverging comparison


def test_a_softmax_modelopt_cannot_exclude_is_freed_through_the_consumer_that_shares_its_pair(tmp_path):
    """ModelOpt quantizes inputs only and shares a tensor's Q/DQ pair among its consumers: a Softmax reading INT8
    reads the pair ModelOpt put on another consumer's input, so that consumer is the node to exclude, in words."""
    graph = classifier_graph(head_precision="int8", softmax_precision="int8")
    graph["nodes"].append(node("MatMul@1", "MatMul", 8, "int8"))
    graph["qdq"].append(qdq_entry("linear_1.tmp_0", ["Softmax@0", "MatMul@1"]))
    [finding] = RULES["QR002"].run(BundleBuilder(tmp_path).artifact("precision_summary", graph).context())
    argv = shlex.split(finding.fixes[0].command)
    start = argv.index("--nodes_to_exclude") + 1
    assert argv[start:start + 2] == [r"MatMul@0$", r"MatMul@1$"] and "--op_types_to_exclude" not in argv
    assert "Softmax@0 reads the Q/DQ pair on the input of MatMul@1: exclude MatMul@1" in finding.fixes[0].action


# --- each diagnosis names the right cause -----------------------------------------------------

@pytest.mark.parametrize(("rule_id", "example_name", "expected"), [
    ("QR001", "quantization collapses a classifier", "Quantization collapses the outputs (ORT FP32 → ORT QDQ)"),
    ("QR001", "detector scores lost inside a fine whole-tensor cosine", "88 of 179 detections lost, 0 extra"),
    ("QR003", "calibration saved as raw 0-255 pixels", "x → x / 127.5 - 1"),
    ("QR003", "calibration left in [0,1], evaluation in [-1,1]", "x → (x - 0.5) / 0.5"),
    ("QR003", "calibration in BGR, evaluation in RGB", "x → np.flip(x, axis=1)"),
    ("QR003", "[0,1]-calibrated input fed 0-255 pixels", "x → x * 255"),
    ("QR005", "QDQ detector emits NaN scores", "ORT QDQ is the first stage"),
    ("QR005", "the FP32 model already emits NaN", "ORT FP32 is the first stage"),
    ("QR006", "3 bright crops of 40 flip their class", "3 of 3 collapsed samples have input x outside"),
    ("QR007", "detector scores quantized with the box scale", "80 of 84 slices along axis 1 collapse"),
    ("QR008", "TensorRT rejects a zero-point", "must be all zeros.; no deployment comparison"),
])
def test_diagnosis_names_the_cause(rule_id, example_name, expected, tmp_path):
    findings = findings_of(RULES[rule_id], _example(rule_id, example_name), tmp_path)
    text = " | ".join(f"{f.title} | {f.summary} | " + " | ".join(fix.action for fix in f.fixes) for f in findings)
    assert expected in text


def test_tensorrt_11_gets_only_the_strongly_typed_rebuild(tmp_path):
    logits = class_logits(40, seed=9)
    builder = BundleBuilder(tmp_path).class_outputs(CLS_OUTPUT)
    builder.stage("ort_qdq", classifier_run(logits, noise=0.01, seed=10))
    builder.stage("trt_int8", classifier_run(logits, noise=0.6, seed=11), details={"tensorrt": "11.1.0"})
    [finding] = RULES["QR001"].run(builder.context())
    assert [fix.command for fix in finding.fixes] == ["trtexec --onnx=<model.quant.onnx> --stronglyTyped"]
