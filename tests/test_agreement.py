"""One owner of agreement (issue 10): the verdict, the stage table and the rules read one judgement.

Real bundles only: every committed corpus case and sample bundle for the invariants, and the tuned
corpus cases of the issue's examples (a healthy YOLOX detector, a healthy Silero VAD, a healthy
DBNet) for the behaviour. Sealed corpus cases are read only by the invariant test, which checks
consistency, not a ranking.
"""

from __future__ import annotations

import re

import json
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.agreement import AGREE, COLLAPSE, DEGRADE, LEVEL_RANK, LEVEL_RANK as LEVELS, JudgingOptions, task_level
from qdqreport.analysis.context import Context
from qdqreport.analysis.fp16 import CONTROL_PURPOSES
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.pipeline import render_report
from qdqreport.report.model import build_report
from qdqreport.rules import discover

ROOT = Path(__file__).resolve().parents[1]
BUNDLES = sorted([p for p in (ROOT / "corpus").iterdir() if (p / "manifest.json").exists()]
                 + [p for p in (ROOT / "sample_bundles").iterdir() if (p / "manifest.json").exists()])
LABELS = json.loads((ROOT / "corpus" / "labels.json").read_text(encoding="utf-8"))


def _model(path: Path, **options):
    ctx = Context(Bundle(path), **options)
    return ctx, build_report(ctx.bundle, run_rules(ctx, discover()), ctx)


@pytest.mark.slow
@pytest.mark.parametrize("path", BUNDLES, ids=lambda p: p.name)
def test_stage_table_verdict_and_rules_agree_on_every_committed_bundle(path):
    ctx, model = _model(path)
    for view in model.comparisons:
        summaries = {s.output: s for s in ctx.output_summaries(view.id)}
        for row in view.outputs:
            summary = summaries[row.output]
            # The stage table names the judged worst slice (signal-carrying), never another one.
            if summary.kind is not None and summary.kind.kind == "fields":
                assert "judged field by field" in row.slice_note  # its fields' measures judged it, not a slice
            elif summary.worst_slice is not None:
                assert f"worst slice {summary.worst_slice}:" in row.slice_note
            assert row.level == summary.level
    # Controls (the FP16, saturation and calibration checks') are measurements, not pipeline stages
    # (analysis/fp16.is_control); the calibration check's control collapsed on part 40's models.
    controls = set(CONTROL_PURPOSES.values())
    pipeline = [row for view in model.comparisons if view.purpose not in controls
                for row in view.outputs if not row.internal]
    moved = [row for row in pipeline if row.level != AGREE]
    # The user's own decode (collect --postprocess) judges a pipeline stage pair beside its raw outputs.
    tasks = [task_level(view.task[0]) for view in model.comparisons if view.task is not None
             and view.purpose not in controls]
    says_agree = model.verdict.text.startswith("Outputs agree")
    assert says_agree == (not moved and AGREE == max(tasks, key=LEVEL_RANK.get, default=AGREE) and bool(pipeline)), (
        model.verdict.text, [(r.output, r.level) for r in moved], tasks)
    symptom = next((f for f in model.findings if f.rule_id == "QR001"), None)
    assert (symptom is not None) == (bool(moved) or any(t != AGREE for t in tasks))
    if symptom is not None:  # "collapses" exactly when an output, or the decode, collapsed
        assert ("collapses" in symptom.title) == (any(row.level == COLLAPSE for row in moved) or COLLAPSE in tasks)


def test_healthy_yolox_detector_is_judged_by_its_detections_and_gets_no_error():
    ctx, model = _model(ROOT / "corpus" / "yolo_healthy_ort_percentile", target=LABELS["yolo_healthy_ort_percentile"].get("target"))
    [row] = model.comparisons[0].outputs
    assert row.kind_name == "detections" and row.level == AGREE
    assert row.judged == "4 of 196 detections lost, 3 extra" and "18 near-tie change(s) not counted" in row.judged_detail
    # Class-score slices of background anchors lose their cosine; the detections do not change, so no QR007.
    assert not [f for f in model.findings if f.severity == "error"]
    assert not [f for f in model.findings if f.rule_id in ("QR001", "QR007")]


def test_healthy_modelopt_detector_head_nodes_are_info_not_errors():
    ctx, model = _model(ROOT / "corpus" / "yolo_healthy_modelopt_conv")
    sensitive = [f for f in model.findings if f.rule_id == "QR002"]
    assert sensitive and all(f.severity == "info" for f in sensitive)
    assert not [f for f in model.findings if f.severity == "error"]


def test_vad_probability_is_judged_by_threshold_flips_and_its_state_is_internal():
    ctx, model = _model(ROOT / "corpus" / "vad_healthy_ort_sym", target="onnxruntime")
    rows = {row.output: row for row in model.comparisons[0].outputs}
    speech, state = rows["output"], rows["stateN"]
    assert speech.kind_name == "probabilities" and not speech.cosine_meaningful  # one value: cosine is always 1
    # 2: a probability near 0.5 whose quantized value landed 0.1 or more across it counts (session 35), still agree.
    assert speech.judged == "2 of 75 decisions flip at 0.5" and speech.level == AGREE
    assert state.kind_name == "state" and state.internal
    assert "stateN" not in model.verdict.text and model.verdict.text.startswith("Outputs agree")
    assert not [f for f in model.findings if f.severity == "error"]


def test_vad_decision_threshold_is_the_users(tmp_path):
    # At 0.05 the VAD's (mostly low) probabilities sit around the threshold: more decisions are compared there.
    _, at_default = _model(ROOT / "corpus" / "vad_healthy_ort_sym", target="onnxruntime")
    _, at_low = _model(ROOT / "corpus" / "vad_healthy_ort_sym", target="onnxruntime",
                       judging=JudgingOptions(threshold=0.05, threshold_given=True))
    default_row = next(r for r in at_default.comparisons[0].outputs if r.output == "output")
    low_row = next(r for r in at_low.comparisons[0].outputs if r.output == "output")
    assert default_row.judged.endswith("flip at 0.5") and low_row.judged.endswith("flip at 0.05")


def test_a_declared_kind_wins_over_the_inferred_one():
    ctx, model = _model(ROOT / "corpus" / "vad_healthy_ort_sym", judging=JudgingOptions({"stateN": "tensor"}))
    state = next(r for r in model.comparisons[0].outputs if r.output == "stateN")
    # Declared a plain tensor, it is judged and can decide: by its whole cosine (0.99, under COSINE_OK), its 128 state
    # units' scales being one continuum (agreement.one_quantity), where its worst slice judged before session 38.
    assert state.kind_name == "tensor" and not state.internal and state.level == DEGRADE
    assert any(f.rule_id == "QR001" for f in model.findings)


@pytest.mark.slow
def test_healthy_dbnet_report_does_not_contradict_itself(tmp_path):
    render_report(ROOT / "corpus" / "det_healthy_neck_entropy", tmp_path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Outputs agree" in text and "cosine 0.00" not in text
    assert "map IoU 0.993 at 0.5" in text and "IoU 0.993 of the maps binarised at 0.5" in text
    assert "671 near-tie pixel(s) not counted" in text


@pytest.mark.parametrize("case, level", [("bp_healthy_ort_sym", AGREE), ("bp_healthy_trt_nobias", AGREE),
                                         ("bp_log_int8", COLLAPSE)])
def test_soft_map_pixels_near_the_threshold_are_near_ties_not_changed_decisions(case, level):
    # basic-pitch's note posteriorgram is a soft map: in the healthy controls dozens of pixels sit within 0.1 of
    # 0.5 and INT8 noise moves some across (61 of 982 on the note map). Counted, they made healthy models "degrade"
    # and a mild calibration fault "collapse"; a Log node in INT8 (bp_log_int8) still collapses without them.
    ctx = Context(Bundle(ROOT / "corpus" / case))
    judged = [s.judgement for s in ctx.output_summaries(ctx.comparison("quantization").id)]
    assert {j.measure for j in judged} == {"map IoU"}
    assert max(judged, key=lambda j: LEVELS[j.level]).level == level
    assert all("near-tie pixel(s) not counted" in j.detail for j in judged)
    # The plain IoU, near ties counted, is shown beside the judged one (never above it).
    for j in judged:
        plain = float(re.search(r", (\d\.\d{3}) counting them\)", j.detail).group(1))
        assert plain <= round(j.value, 3)


def test_decisions_measured_on_fewer_stored_samples_say_so(tmp_path):
    from qdqreport.analysis import agreement
    from qdqreport.analysis.decisions import Decisions

    ctx = Context(Bundle(ROOT / "corpus" / "vad_healthy_ort_sym"))
    summary = next(s for s in ctx.output_summaries(ctx.comparisons[0].id) if s.output == "output")
    partial = Decisions("threshold decisions", 1.0, 0, 10, 10, (1.0,) * 10, "0 of 10 decisions at 0.5 flip")
    judged = agreement.judge(summary, summary.kind, partial)
    assert judged.detail.endswith(f"(on the first 10 of {summary.samples} samples, the stored ones)")


def test_recogniser_samples_collapse_only_when_their_strings_do():
    # Healthy PP-OCRv4 recogniser (ORT percentile): 2 of 16 samples have a low cosine but lose one CTC step each
    # (2 of 384 indices differ, 2 of the 276 that are not trailing blanks in both stages); one changed value is an
    # anecdote (MIN_CHANGED_TO_COLLAPSE), even where it is a one-character line's only character, so no sample
    # "collapses" (QR006 stays quiet).
    ctx, model = _model(ROOT / "corpus" / "rec_healthy_ort_percentile")
    rows = {row.output: row for row in model.comparisons[0].outputs}
    assert rows["ctc_index"].kind_name == "index" and rows["ctc_index"].judged == "2 of 276 values differ"
    assert "108 trailing padding position(s), 0 in both stages, not compared" in rows["ctc_index"].judged_detail
    assert not [f for f in model.findings if f.rule_id == "QR006" and "samples collapse" in f.title]
    assert not [f for f in model.findings if f.severity == "error"]


def test_diff_reads_each_sides_judgement():
    from qdqreport.diff.model import build_diff

    # The same YOLOX detector calibrated on random data (before) and on real images (after): the detections
    # come back, so the diff says restored, from the same judgement each side's report shows.
    model = build_diff(ROOT / "corpus" / "yolo_random_calib_modelopt", ROOT / "corpus" / "yolo_healthy_modelopt_conv")
    [output] = [o for c in model.accuracy.comparisons if c.purpose == "quantization" for o in c.outputs]
    assert output.levels == (COLLAPSE, AGREE)
    assert model.verdict.kind == "restored"


@pytest.mark.parametrize("dtype", ["complex64", "datetime64[s]"])
def test_stored_outputs_of_odd_dtypes_are_not_judged_by_decisions(tmp_path, dtype):
    # A stranger's bundle may store npy dtypes no decision can be read from; the metrics judge the output then.
    from qdqreport.testing import BundleBuilder

    odd = np.zeros((1, 16), dtype=dtype)
    bundle = BundleBuilder(tmp_path).stage("ort_fp32", [{"out": odd}] * 3).stage("ort_qdq", [{"out": odd}] * 3).build()
    ctx = Context(bundle)
    [summary] = ctx.output_summaries(ctx.comparisons[0].id)
    assert summary.judgement is not None and summary.judgement.measure == "cosine" and summary.elements is None


@pytest.mark.parametrize("flipped, level", [((3,), "degrade"), ((3, 6), COLLAPSE)])
def test_one_changed_decision_is_never_a_collapse(tmp_path, flipped, level):
    """8 samples of 10 class logits with clear winners: one flip is 12.5% of the decisions, yet an anecdote."""
    rng = np.random.default_rng(5)
    reference = [{"logits": rng.normal(0, 1, (1, 10)).astype(np.float32)} for _ in range(8)]
    for sample in reference:
        sample["logits"][0, 0] = 8.0  # class 0 wins by far: no near ties
    candidate = [{"logits": s["logits"][:, ::-1].copy() if i in flipped else s["logits"] + 0.01}
                 for i, s in enumerate(reference)]
    from qdqreport.testing import BundleBuilder

    ctx = BundleBuilder(tmp_path).class_outputs("logits").stage("ort_fp32", reference).stage("ort_qdq", candidate).context()
    (summary,) = ctx.output_summaries(ctx.comparison("quantization").id)
    assert summary.judgement.measure == "top-1 agreement"
    assert summary.judgement.level == level


@pytest.mark.parametrize("case", ["cap_overquant", "cap_calib_pm1"])
def test_integer_ctc_indices_are_judged_by_exact_matches_not_slices(case):
    """ddddocr's captcha CRNN: the int64 CTC index output [1, 27] has slices of one value each; QR007 once
    called 3-4 of them collapsed 'behind a whole-tensor cosine of 1.0000'."""
    ctx = Context(Bundle(ROOT / "corpus" / case))
    (summary,) = [s for s in ctx.output_summaries(ctx.comparison("quantization").id) if s.output == "ctc_index"]
    assert summary.kind.kind == "index" and summary.judgement.measure == "exact matches"
    assert not [f for f in run_rules(ctx).findings if f.rule_id == "QR007"]


def test_a_softmax_declared_as_probabilities_counts_one_decision_per_row():
    # The PaddleOCR direction classifier's 2-class softmax, calibrated on raw pixels: 9 of 24 crops change direction.
    # Declared `probabilities`, each row's two columns cross 0.5 together; counted per column it read "18 of 48".
    bundle = Path(__file__).resolve().parents[1] / "corpus" / "cls_calib_x255"
    inferred = Context(Bundle(bundle))
    comparison = inferred.comparison("quantization")
    top1 = inferred.output_summaries(comparison.id)[0]
    declared = Context(Bundle(bundle), judging=JudgingOptions({top1.output: "probabilities"}))
    summary = declared.output_summaries(comparison.id)[0]
    assert summary.kind.kind == "probabilities" and top1.kind.kind == "class_scores"
    assert summary.judgement.headline == "9 of 24 decisions flip at 0.5" and "9 of 24 top-1" in top1.judgement.headline
    assert summary.judgement.sample_agreement == top1.judgement.sample_agreement


@pytest.mark.parametrize("case", ["lm_modelopt_default", "lm_healthy_ort", "emb_fp16_l2norm"])
def test_an_embedding_has_no_worst_slice(case):
    """A slice of an embedding is one dimension across samples (a new user's L2-normalised 2048-d vector: dimension
    1069 at cosine -0.83 beside a whole-vector cosine of 0.42): the vector's cosine judges it, and no table, note or
    finding quotes a worst slice."""
    ctx, model = _model(ROOT / "corpus" / case, target=LABELS[case].get("target"))
    info = ctx.comparison("quantization")
    assert [s for s in ctx.slice_rows(info.id) if s.output == "embedding"], "the collector compared it per slice"
    [summary] = [s for s in ctx.output_summaries(info.id) if s.output == "embedding"]
    assert summary.kind.kind == "embedding" and summary.worst_slice is None and summary.worst_slice_cosine is None
    row = next(r for v in model.comparisons for r in v.outputs if r.output == "embedding" and v.id == info.id)
    assert "worst slice" not in row.slice_note
    assert not [m for f in model.findings for m in f.evidence if getattr(m, "name", "") == "worst slice cosine"]


def test_a_sequence_of_class_rows_counts_positions_and_says_so():
    """A CTC recognizer's [40, C] scores a sample: 5 stored samples give 200 top-1 decisions, said as 5 samples x 40
    positions (a new user read "0 of 200" as 200 of their 200 lines); a classifier's one row a sample says nothing
    more."""
    from qdqreport.analysis.decisions import measure
    from qdqreport.analysis.output_kinds import OutputKind

    rng = np.random.default_rng(3)
    ref = [rng.normal(scale=8.0, size=(40, 12)).astype(np.float32) for _ in range(5)]  # confident logits: no near tie
    cand = [r.copy() for r in ref]
    cand[0][7] = cand[0][7][::-1]  # one position's scores reversed: its argmax moves
    decisions = measure(OutputKind("class_scores", "test"), ref, cand, 0.5)
    assert decisions.short == "1 of 200 top-1 decisions (5 samples × 40 positions) change"
    single = measure(OutputKind("class_scores", "test"), [r[:1] for r in ref], [c[:1] for c in cand], 0.5)
    assert single.short == "0 of 5 top-1 decisions change"


def test_a_flip_is_a_near_tie_only_when_both_sides_sit_near_the_threshold():
    """A new user's open_nsfw at --decision-threshold 0.2: an nsfw probability 0.22 -> 0.003 was shown as a near tie
    (the reference's margin alone), 1 flip where there were 4. A flip that lands far across the threshold counts."""
    from qdqreport.analysis.decisions import measure
    from qdqreport.analysis.output_kinds import OutputKind

    ref = [np.array([0.22, 0.22, 0.9, 0.05], np.float32)]
    cand = [np.array([0.003, 0.18, 0.9, 0.05], np.float32)]
    decisions = measure(OutputKind("probabilities", "test"), ref, cand, 0.2)
    assert decisions.changed == 1 and "1 near-tie flip(s) not counted" in decisions.detail
