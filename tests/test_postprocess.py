"""`collect --postprocess` / `--task-results` on the real demo classifier: decoded results in the bundle,
the application's results compared with them, QR010 in the report, and every bad script refused."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.postprocess import split_spec
from qdqreport.analysis.task import field_agreement, generic_agreement
from qdqreport.errors import BundleError
from qdqreport.wording import percent

ROOT = Path(__file__).resolve().parent.parent
DECODE = ROOT / "scripts" / "decode_cls.py"
OUTPUT = "save_infer_model/scale_0.tmp_1"
SAMPLES = 12


def _script():
    spec = importlib.util.spec_from_file_location("decode_cls_for_test", DECODE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _collect(demo: Path, out: Path, *extra: str, qdq: str = "cls_int8.onnx", samples: int = SAMPLES) -> int:
    return main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(demo / qdq) if "/" not in qdq else qdq,
                 "--inputs", str(demo / "eval.npz"), "--max-samples", str(samples), "-o", str(out), "--quiet", *extra])


@pytest.fixture(scope="module")
def app_results(tmp_path_factory: pytest.TempPathFactory, demo: Path, eval_x: np.ndarray) -> Path:
    """What an application running the QDQ model with a second softmax saves (computed here, independently)."""
    session = ort.InferenceSession(str(demo / "cls_int8.onnx"), providers=["CPUExecutionProvider"])
    decode = _script().decode_double_softmax
    results = [decode({OUTPUT: session.run([OUTPUT], {"x": eval_x[i:i + 1]})[0]}) for i in range(SAMPLES)]
    path = tmp_path_factory.mktemp("app") / "app.json"
    path.write_text(json.dumps(results))
    return path


@pytest.fixture(scope="module")
def task_bundle(tmp_path_factory: pytest.TempPathFactory, demo: Path, app_results: Path) -> Path:
    out = tmp_path_factory.mktemp("task") / "bundle"
    assert _collect(demo, out, "--postprocess", str(DECODE), "--task-results", str(app_results)) == 0
    return out


@pytest.mark.slow
def test_decoded_results_are_the_decode_of_the_stored_outputs(task_bundle: Path) -> None:
    bundle = Bundle(task_bundle)
    ctx = Context(bundle)
    decode = _script().decode
    for stage in ("ort_fp32", "ort_qdq"):
        outputs = load_stage_outputs(bundle, stage)
        decoded = ctx.task_results(stage)
        assert len(decoded) == SAMPLES
        for sample, result in zip(outputs, decoded):
            expected = decode(sample)
            assert result["label"].item() == expected["label"] and result["rotate"].item() == expected["rotate"]
            assert result["score"].item() == pytest.approx(expected["score"])
    assert ctx.task["postprocess"]["function"] == "decode" and ctx.task["postprocess"]["compare"] == "compare"


@pytest.mark.slow
def test_application_results_are_compared_with_the_same_stage(task_bundle: Path) -> None:
    ctx = Context(Bundle(task_bundle))
    app = ctx.task_comparison("postprocess")
    assert app["reference"] == "ort_qdq" and app["candidate"] == "task_results"
    ours, theirs = ctx.task_results("ort_qdq"), ctx.task_results("task_results")
    rotated = sum(r["rotate"].item() for r in ours)
    assert rotated > 0 and not any(r["rotate"].item() for r in theirs)  # the second softmax never reaches 0.9
    # The script's compare() judges label and rotate: each rotated crop the app missed halves that sample's agreement.
    assert app["disagreeing"] == rotated
    assert app["agreement"] == pytest.approx(1 - 0.5 * rotated / SAMPLES, abs=1e-6)
    rows = ctx.task_rows(app["id"])
    assert {r["sample"] for r in rows if r["agreement"] < 1} == {i for i, r in enumerate(ours) if r["rotate"].item()}


@pytest.mark.slow
def test_report_ranks_qr010_first_and_shows_the_task_section(task_bundle: Path, tmp_path: Path) -> None:
    assert main(["report", str(task_bundle), "-o", str(tmp_path)]) == 0
    findings = json.loads((tmp_path / "findings.json").read_text())["findings"]
    assert findings[0]["id"] == "QR010" and "post-processing differs" in findings[0]["title"]
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    assert "### Task-level results" in md and "task agreement of the decoded results" in md
    assert "'rotate' is always False in the application" in md
    assert 'id="task"' in html and "decode_cls.py:decode" in html
    assert "but: The application&#39;s post-processing differs" in html  # the verdict names it


@pytest.mark.slow
def test_generic_comparison_without_compare(tmp_path: Path, demo: Path) -> None:
    script = tmp_path / "argmax.py"
    script.write_text(f"import numpy as np\ndef top1(outputs):\n    p = outputs[{OUTPUT!r}][0]\n"
                      "    return {'class': int(np.argmax(p)), 'p': float(p.max())}\n")
    assert _collect(demo, tmp_path / "b", "--postprocess", f"{script}:top1", samples=4) == 0
    task = Context(Bundle(tmp_path / "b")).task
    assert task["postprocess"] == {**task["postprocess"], "function": "top1", "compare": None}
    assert [s["stage"] for s in task["stages"]] == ["ort_fp32", "ort_qdq"]
    assert task["comparisons"][0]["purpose"] == "quantization" and task["comparisons"][0]["samples"] == 4


def _nan_qdq(tmp_path: Path, demo: Path) -> Path:
    model = onnx.load(str(demo / "cls_int8.onnx"))
    last_dq = [n for n in model.graph.node if n.op_type == "DequantizeLinear"][-1]
    _set_constant(model, last_dq.input[1], np.inf)  # NaN outputs, as a broken engine gives
    onnx.save(model, tmp_path / "inf_scale.onnx")
    return tmp_path / "inf_scale.onnx"


def _strict_script(tmp_path: Path) -> Path:
    """A decode that refuses non-finite outputs and probabilities that do not sum to 1."""
    script = tmp_path / "strict.py"
    script.write_text(f"import numpy as np\ndef decode(outputs):\n    p = outputs[{OUTPUT!r}][0]\n"
                      "    if not np.isfinite(p).all():\n        raise ValueError('non-finite probabilities')\n"
                      "    if abs(p.sum() - 1) > 0.01:\n        raise ValueError('not probabilities')\n"
                      "    return {'label': int(np.argmax(p))}\n")
    return script


@pytest.mark.slow
def test_decode_failing_on_the_quantized_stage_is_recorded(tmp_path: Path, demo: Path) -> None:
    assert _collect(demo, tmp_path / "b", "--postprocess", str(_strict_script(tmp_path)),
                    qdq=str(_nan_qdq(tmp_path, demo)), samples=3) == 0
    task = Context(Bundle(tmp_path / "b")).task
    failed = {s["stage"]: s for s in task["stages"]}["ort_qdq"]
    assert failed["status"] == "failed" and "ValueError: non-finite probabilities" in failed["error"]
    # No pair with the stage that failed to decode (the calibration check's control, its scales reset from the
    # evaluation's ranges, decodes and is compared).
    assert not [c for c in task["comparisons"] if "ort_qdq" in (c["reference"], c["candidate"])]


@pytest.mark.slow
def test_task_results_stage_failing_to_decode_is_recorded_not_refused(tmp_path: Path, demo: Path) -> None:
    """--task-results whose stage (ort_qdq, NaN outputs) cannot be decoded: the bundle is still written,
    the application comparison recorded as not made with the reason, and the report says so."""
    (tmp_path / "app.json").write_text(json.dumps([{"label": 0}] * 3))
    assert _collect(demo, tmp_path / "b", "--postprocess", str(_strict_script(tmp_path)), "--task-results",
                    str(tmp_path / "app.json"), qdq=str(_nan_qdq(tmp_path, demo)), samples=3) == 0
    ctx = Context(Bundle(tmp_path / "b"))
    assert ctx.task_comparison("postprocess") is None
    error = ctx.task["task_results"]["error"]
    assert "--task-results-stage ort_qdq could not be decoded" in error and "non-finite probabilities" in error
    assert main(["report", str(tmp_path / "b"), "-o", str(tmp_path / "r")]) == 0
    assert "were not compared: --task-results-stage ort\\_qdq could not" in (tmp_path / "r" / "report.md").read_text()
    assert "were not compared" in (tmp_path / "r" / "report.html").read_text()


@pytest.mark.slow
def test_decode_failing_on_the_reference_is_recorded(tmp_path: Path, demo: Path, eval_x: np.ndarray) -> None:
    """--reference outputs the decode cannot read are that stage's failure, not the script's (exit 0)."""
    np.savez(tmp_path / "ref.npz", **{OUTPUT: np.zeros((3, 2), np.float32)})  # not probabilities
    assert _collect(demo, tmp_path / "b", "--postprocess", str(_strict_script(tmp_path)),
                    "--reference", str(tmp_path / "ref.npz"), samples=3) == 0
    stages = {s["stage"]: s for s in Context(Bundle(tmp_path / "b")).task["stages"]}
    assert stages["reference"]["status"] == "failed" and "not probabilities" in stages["reference"]["error"]
    assert stages["ort_fp32"]["status"] == "ok" and stages["ort_qdq"]["status"] == "ok"


@pytest.mark.slow
def test_max_samples_cuts_the_task_results(tmp_path: Path, demo: Path, app_results: Path) -> None:
    assert _collect(demo, tmp_path / "b", "--postprocess", str(DECODE), "--task-results", str(app_results),
                    samples=4) == 0
    ctx = Context(Bundle(tmp_path / "b"))
    assert ctx.task["task_results"]["samples"] == 4 and ctx.task_comparison("postprocess")["samples"] == 4
    assert len(ctx.task_results("task_results")) == 4


@pytest.mark.slow
def test_dataclass_script_with_postponed_annotations_loads(tmp_path: Path, demo: Path) -> None:
    """@dataclass under `from __future__ import annotations` needs its module in sys.modules while it runs."""
    script = tmp_path / "typed_decode.py"
    script.write_text("from __future__ import annotations\nfrom dataclasses import dataclass\nimport numpy as np\n\n"
                      "@dataclass\nclass Result:\n    label: int\n    score: float\n\n"
                      f"def decode(outputs):\n    p = outputs[{OUTPUT!r}][0]\n"
                      "    r = Result(int(np.argmax(p)), float(p.max()))\n    return {'label': r.label, 'score': r.score}\n")
    assert _collect(demo, tmp_path / "b", "--postprocess", str(script), samples=2) == 0
    assert [s["status"] for s in Context(Bundle(tmp_path / "b")).task["stages"]] == ["ok", "ok"]
    assert not [name for name in sys.modules if name.startswith("qdqreport_user_")]  # cleaned up


def _set_constant(model: onnx.ModelProto, name: str, value: float) -> None:
    from onnx import numpy_helper

    for init in model.graph.initializer:
        if init.name == name:
            init.CopyFrom(numpy_helper.from_array(np.full_like(numpy_helper.to_array(init), value), name))
            return
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            node.attribute[0].t.CopyFrom(numpy_helper.from_array(np.full_like(numpy_helper.to_array(node.attribute[0].t), value)))
            return
    raise AssertionError(f"no constant {name}")


# --- bad scripts and files: one line naming the file, exit 2, nothing written ------------------
BAD_SCRIPTS = {
    "syntax error": ("def decode(outputs)\n    return {}\n", "cannot import"),
    "import error": ("import no_such_module_anywhere\n", "ModuleNotFoundError"),
    "no function": ("def other(outputs):\n    return {'a': 1}\n", "defines no function decode()"),
    "raises": ("def decode(outputs):\n    raise KeyError('logits')\n", "decode() raised KeyError"),
    "returns a list": ("def decode(outputs):\n    return [1, 2]\n", "returned a list"),
    "returns objects": ("def decode(outputs):\n    return {'box': object()}\n", "use str, int, float or bool"),
    "exits": ("import sys\ndef decode(outputs):\n    sys.exit(3)\n", "decode() raised SystemExit: 3"),
    "compare exits": ("import sys\ndef decode(outputs):\n    return {'a': 1}\ndef compare(a, b):\n    sys.exit()\n",
                      "compare() raised SystemExit"),
    "exits on import": ("import sys\nsys.exit(4)\n", "cannot import the post-processing script (--postprocess), SystemExit: 4;"),
    "compare out of range": ("def decode(outputs):\n    return {'a': 1}\ndef compare(a, b):\n    return 2.0\n",
                             "return an agreement between 0.0 and 1.0"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_SCRIPTS))
def test_bad_script_is_one_line_exit_2_and_nothing_written(case: str, tmp_path: Path, demo: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    text, expected = BAD_SCRIPTS[case]
    script = tmp_path / "bad_decode.py"
    script.write_text(text)
    out = tmp_path / "out" / "bundle"
    assert _collect(demo, out, "--postprocess", str(script), samples=2) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("qdqreport: error: ") and expected in err and "bad_decode.py" in err
    assert not out.exists() and not list(tmp_path.rglob(".*partial*"))


@pytest.mark.slow
def test_bad_task_results_are_refused(tmp_path: Path, demo: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "short.json").write_text(json.dumps([{"label": "0", "score": 0.9, "rotate": False}]))
    (tmp_path / "broken.json").write_text("[{")
    (tmp_path / "other_fields.json").write_text(json.dumps([{"cls": 1}] * 2))
    np.savez(tmp_path / "whole.npz", label=np.array(["0", "180"]))
    (tmp_path / "truncated.npz").write_bytes((tmp_path / "whole.npz").read_bytes()[:60])
    cases = {
        "short.json": (["--postprocess", str(DECODE)], "holds 1 task results but the inputs give 2 samples"),
        "broken.json": (["--postprocess", str(DECODE)], "not valid JSON"),
        "other_fields.json": (["--postprocess", str(DECODE)], "save the same field names"),
        "nope.npz": (["--postprocess", str(DECODE)], "no such file (--task-results)"),
        "truncated.npz": (["--postprocess", str(DECODE)], "unreadable .npz file (BadZipFile"),
    }
    cases["without_decode"] = ([], "--task-results needs --postprocess")
    cases["typo_stage"] = (["--postprocess", str(DECODE), "--task-results-stage", "ort_qdqq"],
                           "--task-results-stage ort_qdqq: not a stage")
    cases["reference_stage"] = (["--postprocess", str(DECODE), "--task-results-stage", "reference"],
                                "needs --reference")
    for name, (extra, expected) in cases.items():
        target = tmp_path / ("short.json" if name in ("without_decode", "typo_stage", "reference_stage") else name)
        out = tmp_path / f"out-{name}" / "bundle"  # not under the input file of the same name (an -o refusal)
        assert _collect(demo, out, *extra, "--task-results", str(target), samples=2) == 2, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expected in err, (name, err)
        assert not out.exists()


@pytest.mark.slow
def test_task_results_npz_layouts(tmp_path: Path, demo: Path, task_bundle: Path) -> None:
    """Both .npz layouts load to the same comparison as the JSON the task bundle was made with."""
    theirs = Context(Bundle(task_bundle)).task_results("task_results")
    np.savez(tmp_path / "stacked.npz", **{k: np.array([r[k] for r in theirs]) for k in theirs[0]})
    np.savez(tmp_path / "keyed.npz", **{f"{i:06d}/{k}": v for i, r in enumerate(theirs) for k, v in r.items()})
    expected = Context(Bundle(task_bundle)).task_comparison("postprocess")["agreement"]
    for name in ("stacked.npz", "keyed.npz"):
        out = tmp_path / name.replace(".npz", "")
        assert _collect(demo, out, "--postprocess", str(DECODE), "--task-results", str(tmp_path / name)) == 0
        assert Context(Bundle(out)).task_comparison("postprocess")["agreement"] == expected


# --- bundle contract ----------------------------------------------------------------------------
@pytest.mark.slow
def test_task_section_is_validated_on_read(task_bundle: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(task_bundle, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["task"]["comparisons"][0]["agreement"] = 1.5
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="agreement must lie within 0..1"):
        Bundle(copy)
    del manifest["task"]["stages"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="task.stages is missing"):
        Bundle(copy)


# --- the generic comparison ---------------------------------------------------------------------
def test_generic_field_agreement() -> None:
    assert field_agreement(np.array("180"), np.array("180")) == 1.0
    assert field_agreement(np.array("180"), np.array("0")) == 0.0
    assert field_agreement(np.array(0.900), np.array(0.905)) == 1.0  # within 1%
    assert field_agreement(np.array(0.90), np.array(0.80)) == 0.0
    assert field_agreement(np.zeros((3, 4)), np.zeros((4, 4))) == 0.75  # 3 boxes vs 4
    assert field_agreement(np.array([1, 2, 3, 4]), np.array([1, 2, 3, 5])) == 0.75
    assert field_agreement(np.array(1), None) == 0.0
    both = {"label": np.array(1), "score": np.array(0.5)}
    # A score beside its label does not decide (session 32: analysis/task.decision_fields); a lone score does.
    assert generic_agreement(both, {"label": np.array(1), "score": np.array(0.7)}) == 1.0
    assert generic_agreement({"score": np.array(0.5)}, {"score": np.array(0.7)}) == 0.0
    # A field only one side has counts 0, and a sample is decoded alike only as far as its least alike field is.
    assert generic_agreement(both, {"label": np.array(1)}) == 0.0
    assert generic_agreement({"a": np.array(True), "b": np.array(True)}, {"a": np.array(True), "b": np.array(False)}) == 0.0
    assert generic_agreement({"boxes": np.zeros((4, 4)), "n": np.array(4)}, {"boxes": np.zeros((3, 4)), "n": np.array(4)}) == 0.75


def test_script_spec_follows_the_data_loader_convention() -> None:
    assert split_spec("decode.py") == (Path("decode.py"), "decode")
    assert split_spec("dir/decode.py:post") == (Path("dir/decode.py"), "post")
    assert split_spec("C:/x/decode.py:post") == (Path("C:/x/decode.py"), "post")


def test_stage_matrix_shows_task_agreement(tmp_path: Path) -> None:
    """QR001's stage matrix carries the decoded results' agreement of the same stage pair."""
    from qdqreport.rules import discover
    from qdqreport.testing import BundleBuilder

    registry = discover()
    collapse = next(e for e in registry["QR010"].examples if "collapse" in e.name)
    builder = BundleBuilder(tmp_path)
    collapse.build(builder)
    ctx = builder.context()
    (finding,) = registry["QR001"].run(ctx)
    matrix = next(e for e in finding.evidence if getattr(e, "title", "") == "Stage matrix")
    assert matrix.columns[-1] == "task agreement"
    agreement = ctx.task_comparison("quantization")["agreement"]
    assert agreement < 0.9 and matrix.rows[0][-1] == percent(agreement)  # a share, shown as % like every other


# --- the script's contract up front, compare() gets arrays, the cap, the wording of a graded score ---------------
# A graded compare(): 1 - the largest probability difference, below 1 on almost every sample. It uses an array
# method on the decoded probabilities: compare() gets arrays (it got lists before, AttributeError on .astype).
SCORED = (f"import numpy as np\ndef decode(outputs):\n    p = outputs[{OUTPUT!r}][0]\n"
          "    return {'label': int(np.argmax(p)), 'probs': p.astype(np.float32)}\n"
          "def compare(a, b):\n"
          "    assert isinstance(a['label'], int) and isinstance(a['probs'], np.ndarray), (type(a['label']), type(a['probs']))\n"
          "    assert a['probs'].dtype == np.float32 and a['probs'].shape == (2,)\n"
          "    return float(1 - np.abs(a['probs'].astype(np.float64) - b['probs'].astype(np.float64)).max())\n")


@pytest.fixture(scope="module")
def scored_bundle(tmp_path_factory: pytest.TempPathFactory, demo: Path) -> Path:
    folder = tmp_path_factory.mktemp("scored")
    (folder / "graded.py").write_text(SCORED)
    assert _collect(demo, folder / "bundle", "--postprocess", str(folder / "graded.py")) == 0
    return folder / "bundle"


@pytest.mark.slow
def test_compare_gets_numpy_arrays_as_decode_returned_them(scored_bundle: Path) -> None:
    """Arrays arrive as arrays (dtype and shape kept), single values as Python values; the scores are compare()'s."""
    bundle = Bundle(scored_bundle)
    ctx = Context(bundle)
    fp32, qdq = (load_stage_outputs(bundle, s) for s in ("ort_fp32", "ort_qdq"))
    expected = [1 - np.abs(a[OUTPUT][0].astype(np.float32).astype(np.float64)
                           - b[OUTPUT][0].astype(np.float32).astype(np.float64)).max() for a, b in zip(fp32, qdq)]
    comparison = ctx.task_comparison("quantization")
    assert comparison["agreement"] == pytest.approx(np.mean(expected), abs=1e-5)
    assert comparison["disagreeing"] == sum(round(e, 6) < 1 for e in expected) > 0  # rows keep 6 decimals


@pytest.mark.slow
def test_graded_compare_is_worded_as_a_score(scored_bundle: Path, tmp_path: Path) -> None:
    """A compare() score below 1 is not 'decoded differently': the report names the mean score and the samples
    below 1, and explains the margin column."""
    assert main(["report", str(scored_bundle), "-o", str(tmp_path)]) == 0
    comparison = Context(Bundle(scored_bundle)).task_comparison("quantization")
    below, samples = comparison["disagreeing"], comparison["samples"]
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    score = f"{comparison['agreement']:.3g}"
    assert (f"- task agreement of the decoded results: mean compare() score **{score}** ({below} of {samples} "
            "samples scored below 1)") in md
    assert f"mean compare() score <strong>{score}</strong> ({below} of {samples} samples scored below 1;" in html
    assert "| mean compare() score | samples below 1 |" in md and "<th>mean compare() score</th>" in html
    assert f"samples scored below 1 by compare()" in md and f"{below} samples scored below 1 by compare()" in html
    for text in (md, html):
        assert "decoded differently" not in text and "flips at" not in text
        assert "changes at rel. L2" in text and "the decode's margin on that sample" in text


@pytest.mark.slow
def test_generic_comparison_keeps_decoded_differently(task_bundle: Path, tmp_path: Path) -> None:
    """Without a graded score (decode_cls's compare counts equal fields) the wording stays a share... only the
    script's compare() is a score; the generic rule's still reads 'decoded differently'."""
    out = tmp_path / "b"
    import shutil

    shutil.copytree(task_bundle, out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["task"]["postprocess"]["compare"] = None
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", str(out), "-o", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert "samples decoded differently)" in md and "| task agreement | decoded differently |" in md
    assert "compare() score" not in md and "changes at rel. L2" in md


def _counting_inference(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    from qdqreport.collect.ort_stage import OrtStage

    calls: list[tuple[str, int]] = []
    real = OrtStage.infer

    def counting(self, feed, index):
        calls.append((self.stage_id, index))
        return real(self, feed, index)

    monkeypatch.setattr(OrtStage, "infer", counting)
    return calls


EARLY_REFUSALS = {
    "decode over the cap": (f"import numpy as np\ndef decode(outputs):\n    return {{'mask': np.zeros((224, 224), np.uint8)}}\n",
                            "holds 50,176 values, over the cap of 10,000 values per field"),
    "compare raises": (SCORED.replace("return float(1 -", "return a['probs'].no_such_method() or float(1 -"),
                       "compare() raised AttributeError"),
    "compare out of range": (SCORED.replace("return float(1 -", "return 2.0 + float(1 -"),
                             "return an agreement between 0.0 and 1.0"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(EARLY_REFUSALS))
def test_bad_script_is_refused_after_the_first_fp32_sample(case: str, tmp_path: Path, demo: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture) -> None:
    """decode() and compare() run on the first FP32 sample's outputs as soon as they exist: a bad script costs one
    inference, not both full passes (a new user's ViT: 30 s before the refusal)."""
    text, expected = EARLY_REFUSALS[case]
    (tmp_path / "bad_decode.py").write_text(text)
    calls = _counting_inference(monkeypatch)
    out = tmp_path / "out" / "bundle"
    assert _collect(demo, out, "--postprocess", str(tmp_path / "bad_decode.py"), samples=8) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and "bad_decode.py: sample 0:" in err, err
    assert calls == [("ort_fp32", 0)]
    assert not out.exists() and not list(tmp_path.rglob(".*partial*"))


def test_cap_refusal_names_the_cap_and_the_fix() -> None:
    from qdqreport.analysis.decode_step import DecodeFailed, MAX_FIELD_VALUES, normalise_result

    normalise_result({"mask": np.zeros(MAX_FIELD_VALUES, np.uint8)}, "decode()")  # at the cap: kept
    with pytest.raises(DecodeFailed) as caught:
        normalise_result({"mask": np.zeros((56, 56 * 4), np.uint8)}, "decode()")
    message = str(caught.value)
    assert "12,544 values, over the cap of 10,000 values per field" in message
    assert "a summary" in message and "downsampled array (e.g. mask[::4, ::4])" in message


def test_help_names_the_cap(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "at most 10,000 values per field" in text and "compare(a, b) gets arrays as NumPy arrays" in text


@pytest.mark.slow
@pytest.mark.parametrize("graded", [True, False])
def test_verdict_names_the_task_agreement_of_the_diverging_pair(graded: bool, tmp_path: Path, demo: Path) -> None:
    """Calibrated on 0-255 pixels, the demo classifier collapses: the headline leads with what the user's own decode
    makes of it, worded as compare()'s score or as the generic share, then the raw output moved most."""
    script = tmp_path / "decode.py"
    script.write_text(SCORED if graded else SCORED[:SCORED.index("def compare")])
    assert _collect(demo, tmp_path / "b", "--postprocess", str(script), qdq="cls_int8_x255.onnx") == 0
    assert main(["report", str(tmp_path / "b"), "-o", str(tmp_path / "r")]) == 0
    comparison = Context(Bundle(tmp_path / "b")).task_comparison("quantization")
    below, samples = comparison["disagreeing"], comparison["samples"]
    assert 0 < below <= samples
    words = (f"mean compare() score {comparison['agreement']:.3g} ({below} of {samples} samples scored below 1)" if graded
             else f"task agreement {percent(comparison['agreement'])} of decoded values ({below} of {samples} samples "
                  "decoded differently)")
    headline = (tmp_path / "r" / "report.md").read_text().splitlines()[0]
    assert headline.replace("\\_", "_").startswith(f"## 🔴 Quantization collapses the outputs: {words}; raw outputs: ")
    assert "); most likely cause: " in headline


def test_decoded_text_in_the_task_table_is_readable_not_escaped() -> None:
    """A new user's Chinese OCR lines read `text="\\u6ce8\\u610f..."` in the task table; they are shown as written, in
    quotes (a label a decode returns is the user's own text, escaped for the page by the renderer)."""
    from qdqreport.analysis.task import describe

    line = describe({"text": np.asarray("注意安全 exit"), "tokens": np.asarray(["注", "意"])}, ["text", "tokens"])
    assert line == 'text="注意安全 exit"; tokens=["注", "意"]'
