"""Output kinds inferred from real stored outputs (corpus bundles) and declared by the user."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.output_kinds import infer_kind, parse_declarations, producer_ops
from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _reference(case: str, output: str) -> list[np.ndarray]:
    return [sample[output] for sample in load_stage_outputs(Bundle(CORPUS / case), "ort_fp32")]


@pytest.mark.parametrize("case, output, inputs, kind", [
    ("yolo_healthy_ort_percentile", "output", ("images",), "detections"),  # YOLOX: 4 raw box fields, obj, class
    ("vad_healthy_ort_sym", "output", ("input", "state", "sr"), "probabilities"),  # one speech probability
    ("vad_healthy_ort_sym", "stateN", ("input", "state", "sr"), "state"),  # the LSTM state fed back
    ("det_healthy_neck_entropy", "sigmoid_0.tmp_0", ("x",), "map"),  # DBNet's text probability map
    ("lm_healthy_ort", "embedding", ("input_ids", "attention_mask"), "embedding"),  # MiniLM sentence embedding
    ("rec_healthy_ort_percentile", "ctc_index", ("x",), "index"),  # CTC argmax
    ("cls_healthy_entropy", "save_infer_model/scale_0.tmp_1", ("x",), "class_scores"),  # 2-class softmax
    ("cfc_healthy_ort_sym", "537", ("input.1",), "map"),  # CenterFace's face-centre heatmap (a Sigmoid)
    # CenterFace's landmarks [1, 10, 40, 40]: ten channels over a grid, some of them within [0, 1]; no YOLO head
    # (boxes then scores along one axis, candidates along one other), and one Conv writes the grid: regressed
    # numbers, no field grid of maps, so judged by cosine.
    ("cfc_healthy_ort_sym", "540", ("input.1",), "tensor"),
    # LEADER's minutiae head [1, 96, 96, 4]: a heatmap, a direction (atan2), a type and an NMS's peaks, concatenated.
    ("lea_healthy_ort_sym", "head_conc", ("input",), "fields"),
    # waifu2x's 2x upscale [1, 3, 96, 96] out of [1, 3, 84, 84], pixels in [0, 1] after a Clip: an image, judged by
    # PSNR, not a map binarised at 0.5 (IoU 1.000 under a random calibration that costs it 1.7 dB).
    ("w2x_healthy_ort_sym", "upscale", ("image",), "image"),
    # A focus ViT's importance map [1, 1, 224, 224] out of a colour image: one channel of three, a map.
    ("foc_healthy_ort_sym", "output_importance", ("input_image",), "map"),
])
def test_kinds_of_real_outputs(case, output, inputs, kind):
    # The producer and the inputs' shapes as the report reads them: from the bundle's precision summary and manifest.
    ctx = Context(Bundle(CORPUS / case))
    assert tuple(ctx.input_shapes) == inputs
    producer = producer_ops(ctx.precision).get(output)
    assert infer_kind(output, _reference(case, output), producer_op=producer, inputs=ctx.input_shapes).kind == kind


def test_a_field_grid_names_each_fields_kind_and_a_declared_one_finds_them():
    samples = _reference("lea_healthy_ort_sym", "head_conc")
    inferred = infer_kind("head_conc", samples, producer_op="Concat")
    assert inferred.fields_axis == 3 and inferred.field_kinds == ("map", "angle", "map", "peaks")
    declared = infer_kind("head_conc", samples, declared="fields")
    assert declared.declared and declared.field_kinds == inferred.field_kinds
    assert infer_kind("head_conc", samples, declared="tensor").kind == "tensor"


def test_tensorflow_output_names_are_not_recurrent_state():
    # tf2onnx names every output of a Keras model "StatefulPartitionedCall:N": a word containing "state" is no state.
    maps = _reference("det_healthy_neck_entropy", "sigmoid_0.tmp_0")
    assert infer_kind("StatefulPartitionedCall:1", maps, inputs=("input_2",)).kind == "map"
    assert infer_kind("stateN", maps, inputs=("input", "state")).kind == "state"


def test_yolox_head_has_an_objectness_before_its_class_score():
    kind = infer_kind("output", _reference("yolo_healthy_ort_percentile", "output"))
    assert kind.fields_axis == 2 and kind.score_fields == (4, 5) and kind.objectness


def test_a_declaration_wins_and_a_declared_detector_still_finds_its_fields():
    samples = _reference("yolo_healthy_ort_percentile", "output")
    assert infer_kind("output", samples, declared="tensor").kind == "tensor"
    declared = infer_kind("output", samples, declared="detections")
    assert declared.declared and declared.fields_axis == 2


def test_logits_named_so_are_judged_by_top1():
    logits = [np.random.default_rng(i).normal(0, 3, (1, 10)).astype(np.float32) for i in range(4)]
    assert infer_kind("logits", logits).kind == "class_scores"
    assert infer_kind("conv_out", logits).kind == "tensor"


def test_bad_declarations_are_one_line_errors():
    assert parse_declarations(["a/b:0=map"]) == {"a/b:0": "map"}  # names may hold '/', ':' and '='-free text
    with pytest.raises(ValueError, match="KIND one of class_scores"):
        parse_declarations(["output=boxes"])
    with pytest.raises(ValueError, match="NAME=KIND"):
        parse_declarations(["output"])


def test_values_a_linear_layer_writes_out_are_not_probabilities_whatever_their_range():
    # Landmark coordinates (fractions of a face crop) or box offsets out of a Gemm can all fall in [0, 1]; thresholding
    # them at 0.5 would count a nose at x = 0.5 as a flipped decision. Real [0, 1] values (DBNet's map) stand in.
    maps = _reference("det_healthy_neck_entropy", "sigmoid_0.tmp_0")
    assert infer_kind("sigmoid_0.tmp_0", maps, producer_op="Sigmoid").kind == "map"
    assert infer_kind("landmarks", maps, producer_op="Gemm").kind == "tensor"
    assert infer_kind("landmarks", [m.reshape(-1)[:4] for m in maps], producer_op="Gemm").kind == "scalar"
    assert infer_kind("face_prob", [m.reshape(-1)[:4] for m in maps], producer_op="Gemm").kind == "probabilities"
    # A shape op between (Reshape, Concat) or no precision summary says nothing about the values: read as before.
    assert infer_kind("landmarks", maps, producer_op="Reshape").kind == "map"
    assert infer_kind("landmarks", maps).kind == "map"


def test_landmarks_a_gemm_writes_out_are_not_class_logits_even_when_the_collector_guessed_so():
    # The fifth corpus part's MTCNN ONet (read after its sealed scores): dense_6 holds 5 landmarks as 10 fractions of the
    # face crop, out of a Gemm; the collector took the 2-D Gemm output for class logits, and its argmax (which
    # coordinate is largest) "changed" on 3 of 24 faces, an error on a healthy model. Logits are unbounded and go
    # negative; coordinates in [0, 1] out of a linear layer are judged by cosine.
    landmarks = _reference("mtc_healthy_ort_sym", "dense_6")
    assert all(0.0 <= a.min() and a.max() <= 1.0 for a in landmarks)
    kind = infer_kind("dense_6", landmarks, producer_op="Gemm", class_output=True)
    assert kind.kind == "tensor"
    # Logits out of the same kind of layer stay class scores (the classifier head of the corpus captcha model's kin).
    assert infer_kind("dense_6", [a * 8.0 - 4.0 for a in landmarks], producer_op="Gemm",
                      class_output=True).kind == "class_scores"


def test_the_healthy_face_stage_gets_no_error():
    from qdqreport.analysis.context import Context
    from qdqreport.engine import run_rules

    for case in ("mtc_healthy_ort_sym", "mtc_healthy_trt_nobias", "mtc_healthy_ort_percentile"):
        findings = run_rules(Context(Bundle(CORPUS / case))).findings
        assert not [f for f in findings if f.severity == "error" and "deployment" not in f.tags], case


def test_a_sigmoid_map_a_rounding_past_one_is_still_a_map():
    # ONNX Runtime's Sigmoid reads 1.0000001 on a new user's fastmrz map (64 samples stored): the map was judged as a
    # tensor by cosine, while 4 stored samples of it (all within [0, 1]) were judged by IoU.
    rng = np.random.default_rng(0)
    maps = [rng.uniform(0, 1, (1, 64, 64, 1)).astype(np.float32) for _ in range(3)]
    maps[1][0, 0, 0, 0] = np.float32(1.0000001)
    assert infer_kind("Identity", maps, producer_op="Sigmoid").kind == "map"
    maps[2][0, 0, 0, 0] = np.float32(1.01)  # a real overshoot is not a probability
    assert infer_kind("Identity", maps, producer_op="Sigmoid").kind != "map"
