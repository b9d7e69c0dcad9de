"""The checks' controls (the calibration check's evaluation ranges, the saturation check's unfused run) run on chosen
samples: those whose decisions the QDQ model changes first, then a spread (collect/control_stage.choose_samples), and
every comparison and decode reads the reference at those samples (details.sample_indices).

A new user's text-encoding classifier (whatenc 0.9.1), its evaluation file grouped by label, had all 22 changed
labels beyond the first 32 samples: the calibration check ran on the first 32, read "agree, 0 of 32 decisions change"
and so could not refute the calibration finding (QR006 on the length input, an error) that ranked first, though the
evaluation's own ranges change the same 22 labels; the per-tensor final Gemm was the cause (3 with it kept float)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import onnxruntime as ort

from qdqreport.analysis.calibration_check import EVAL_RANGES_STAGE, calibration_check
from qdqreport.analysis.context import Context
from qdqreport.analysis.task import FLIP_STEPS
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.control_stage import choose_samples
from qdqreport.diff import build_diff
from qdqreport.engine import run_rules
from qdqreport.report.model import build_report
from qdqreport.rules import discover

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"
WHATENC = Path(__file__).resolve().parent / "data" / "bundles" / "whatenc_plain_calib"


def test_changed_samples_come_first_then_a_spread() -> None:
    chosen = choose_samples(196, 32, changed=list(range(120, 142)))
    assert len(chosen) == 32 and set(range(120, 142)) <= set(chosen) and list(chosen) == sorted(chosen)
    assert min(chosen) < 32 and max(chosen) > 150  # the rest spread over the other samples
    assert choose_samples(20, 32, changed=[3]) == tuple(range(20))  # fewer samples than the limit: all of them
    many = choose_samples(500, 32, changed=list(range(0, 500, 5)))
    assert len(many) == 32 and all(i % 5 == 0 for i in many) and many[-1] > 400  # a spread of the changed
    assert choose_samples(100, 32, worst=[99, 98, 97]) [-3:] == (97, 98, 99)  # no decision changed: the worst first


def test_a_check_on_the_first_samples_alone_no_longer_hides_the_changed_decisions() -> None:
    ctx = Context(Bundle(WHATENC))
    stage = ctx.stage(EVAL_RANGES_STAGE)
    changed = [int(r["sample"]) for r in ctx.task_rows("ort_qdq__vs__ort_fp32") if float(r["agreement"]) < 1.0]
    assert len(changed) == 22 and min(changed) >= 32
    assert set(changed) <= set(stage.details["sample_indices"])
    verdict = calibration_check(ctx)
    assert verdict is not None and not verdict.restores  # the evaluation's own ranges change them as much
    findings = [f for f in run_rules(ctx, discover()).findings if "root_cause" in f.tags]
    assert findings[0].rule_id == "QR002" and "node_linear" in findings[0].subject
    coverage = next(f for f in findings if f.subject == "coverage input_length")
    assert coverage.severity == "warning" and "so this is not what loses the accuracy" in coverage.summary
    # A length feature (one value a sample) has no dark images, and a quantizer does read it, after an Unsqueeze.
    assert "images" not in coverage.summary and "no quantizer reads this input as it comes" in coverage.summary


def test_the_control_is_judged_against_fp32_on_its_own_samples() -> None:
    """The control's raw top-1 (21 of 32 plus a near tie) and its decode (22 of 32) describe the same samples; read
    against FP32's first 32 they said 30 of 32."""
    ctx = Context(Bundle(WHATENC))
    control = next(s for s in ctx.output_summaries("ort_qdq_eval_ranges__vs__ort_fp32") if s.output == "logits")
    assert control.judgement.headline == "21 of 32 top-1 decisions change, plus 1 near ties"
    model = build_report(ctx.bundle, run_rules(ctx, discover()), ctx)
    (same,) = model.task.same_samples
    assert same["samples"] == 32 and same["disagreeing"] == 22 and same["where"].startswith("32 chosen")


def test_collect_runs_the_control_on_the_changed_samples(tmp_path: Path) -> None:
    """The demo's classifier calibrated on raw 0-255 pixels (25 of 50 decisions change), its evaluation reordered so
    that the unchanged samples come first: the control's samples hold every changed one and the check confirms the
    calibration finding on them."""
    inputs = dict(np.load(DEMO / "eval.npz"))
    (name, images), = inputs.items()
    fp32 = ort.InferenceSession(str(DEMO / "cls_fp32.onnx"), providers=["CPUExecutionProvider"])
    qdq = ort.InferenceSession(str(DEMO / "cls_int8_x255.onnx"), providers=["CPUExecutionProvider"])
    top = [(fp32.run(None, {name: x[None]})[0].argmax(), qdq.run(None, {name: x[None]})[0].argmax()) for x in images]
    order = sorted(range(len(images)), key=lambda i: top[i][0] != top[i][1])  # unchanged first, as a file may be
    np.savez(tmp_path / "eval.npz", **{name: images[order]})
    bundle = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(tmp_path / "eval.npz"), "--calib", str(DEMO / "calib_x255.npz"), "-o", str(bundle),
                 "--quiet"]) == 0
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    stage = next(s for s in manifest["stages"] if s["id"] == EVAL_RANGES_STAGE)
    changed = [i for i, (a, b) in enumerate(top[j] for j in order) if a != b]
    assert len(changed) > 20 and min(changed) > 20 and set(changed) <= set(stage["details"]["sample_indices"])
    verdict = calibration_check(Context(Bundle(bundle)))
    assert verdict is not None and verdict.restores and verdict.gain.qdq_value < 0.5


def test_a_diff_says_when_only_a_nodes_weights_left_int8() -> None:
    """QR002's fix kept the whatenc model's final Gemm out of quantize_static's op types: its weights, bias and output
    pairs are gone, its input's pair stays (the Concat before it is quantized). The diff said "with the same precision
    for every node" and "No compute node changed precision" though the fix took 22 changed labels to 3."""
    model = build_diff(WHATENC, WHATENC.with_name("whatenc_gemm_float"))
    assert model.verdict.text.endswith("with the weights of 1 node leaving INT8 (their inputs still quantized)")
    (change,) = model.precision.changes
    assert (change.before, change.precision_before, change.precision_after) == (
        "node_linear", "int8 (weights int8)", "int8 (weights float)")


def test_a_diffs_samples_that_changed_most_hold_the_better_ones_too() -> None:
    """A fix that restores most samples and costs a few listed only the ones that got worse (a new user's detector:
    182 better, 18 worse, its table all regressions under a "restores" verdict). Here the same two bundles the other
    way round: 192 worse, 2 better; both improved samples are listed after the worst."""
    model = build_diff(WHATENC.with_name("whatenc_gemm_float"), WHATENC)
    (output,) = next(c for c in model.accuracy.comparisons if c.purpose == "quantization").outputs
    assert (output.worse, output.improved) == (192, 2)
    directions = [(c.cosine.after or 0) > (c.cosine.before or 0) or (c.top1.delta or 0) > 0 for c in output.worst]
    assert len(output.worst) == 10 and directions[-2:] == [True, True] and not any(directions[:8])


def test_a_spread_of_four_values_is_no_normalisation_step() -> None:
    """Calibrated on 4 samples: the length input holds one value a sample, and its 4 values spread 0.344x the
    evaluation's 196. QR003 called that "a normalisation step differs" (an error before the chosen control samples)
    and its fix rescaled the lengths; the calibration's size is QR006's to name."""
    findings = run_rules(Context(Bundle(WHATENC.with_name("whatenc_calib4"))), discover()).findings
    assert not [f for f in findings if f.rule_id == "QR003"]
    assert any(f.rule_id == "QR006" and f.title == "Calibrated on 4 sample(s)" for f in findings)


def test_a_single_node_that_wins_back_most_of_the_loss_is_offered_beside_the_set() -> None:
    """--per-layer: the what-if's 4 nodes meet the target; the final Gemm alone wins back 91% of the loss (top-1 88.8%
    -> 99.0%, one sample short). The report showed only the 4 nodes; the smaller remedy comes second, with its
    command."""
    ctx = Context(Bundle(WHATENC.with_name("whatenc_default_per_layer")))
    measured = next(f for f in run_rules(ctx, discover()).findings if f.rule_id == "QR203")
    smaller = measured.fixes[1]
    assert smaller.action.startswith("Or keep only node_linear out of INT8, the smaller remedy: measured alone it "
                                     "wins back 91% of the loss (top-1 agreement 0.8878 → 0.9898)")
    assert "nodes_to_exclude=['node_linear']" in smaller.command


def test_collect_decodes_each_stage_once(tmp_path: Path) -> None:
    """The decode of every sample that picks the controls' samples is the one the task tables keep: a decode the user
    wrote (a detector's NMS, a CTC beam) runs once a sample and stage, whatever the checks need."""
    calls = tmp_path / "calls.txt"
    script = tmp_path / "decode.py"
    script.write_text("import numpy as np\n"
                      f"def decode(outputs):\n    open({str(calls)!r}, 'a').write('x')\n"
                      "    return {'label': int(np.argmax(next(iter(outputs.values()))))}\n", encoding="utf-8")
    bundle = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--calib", str(DEMO / "calib_x255.npz"), "--max-samples", "16",
                 "--postprocess", str(script), "-o", str(bundle), "--quiet"]) == 0
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    decoded = [s for s in manifest["task"]["stages"] if s["status"] == "ok"]
    assert any(s["stage"] == EVAL_RANGES_STAGE for s in decoded)  # the calibration check ran and was decoded
    differing = sum(float(row["agreement"]) < 1.0 for c in manifest["task"]["comparisons"]
                    for row in csv.DictReader((bundle / c["table"]).open(encoding="utf-8")))
    # Each stage's samples once; the first FP32 sample once more (the script's contract is checked as soon as its
    # outputs exist); FLIP_STEPS decodes of interpolated outputs for each sample decoded otherwise (its margin).
    assert len(calls.read_text()) == 1 + sum(s["samples"] for s in decoded) + FLIP_STEPS * differing


@pytest.mark.parametrize("hostile", [5, "abc", {"a": 1}, [1, -3], [99999], None, [True], list(range(31)) + [99999]])
def test_hostile_sample_indices_are_read_as_none_recorded(tmp_path: Path, hostile, capsys) -> None:
    """A bundle is untrusted input: details.sample_indices that are no list of in-range indices are ignored or cut,
    never a crash ('int' object is not iterable, before the reading had one owner: Context.sample_indices)."""
    bundle = tmp_path / "bundle"
    shutil.copytree(WHATENC, bundle)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    next(s for s in manifest["stages"] if s["id"] == EVAL_RANGES_STAGE)["details"]["sample_indices"] = hostile
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["report", str(bundle), "-o", str(tmp_path / "report")]) in (0, 1)
    assert "internal error" not in capsys.readouterr().err
