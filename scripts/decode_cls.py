"""Decode steps for PaddleOCR's text-direction classifier, for `qdqreport collect --postprocess`.

`decode` is rapidocr-onnxruntime 1.4.4's own post-processing (ch_ppocr_cls: ClsPostProcess takes
the argmax over label_list ['0', '180'] and that class's probability; TextClassifier rotates a
crop when the label is '180' and the probability exceeds cls_thresh 0.9), written out here for one
sample. The model's output already is a softmax (probabilities summing to 1).

`decode_double_softmax` is the same decode in an application that treats the output as logits and
applies softmax again: a realistic porting bug (the exported graph ends in Softmax, the training
code's head did not). Probabilities in [0, 1] squashed by a second softmax never exceed
e/(1+e) ≈ 0.73, so the 0.9 threshold is never reached and no crop is ever rotated, while the label
(the argmax) stays the same. The corpus case cls_postprocess_double_softmax uses it as "the
deployment's decode" (staged: no real application was run).
"""

from __future__ import annotations

import numpy as np

LABELS = ("0", "180")
CLS_THRESH = 0.9  # rapidocr config.yaml, Cls.cls_thresh
OUTPUT = "save_infer_model/scale_0.tmp_1"


def decode(outputs):
    """rapidocr's decode of one crop: {label, score, rotate}."""
    return _decision(np.asarray(outputs[OUTPUT], dtype=np.float64).reshape(-1))


def decode_double_softmax(outputs):
    """The application's decode: softmax applied to outputs that already are probabilities."""
    probs = np.asarray(outputs[OUTPUT], dtype=np.float64).reshape(-1)
    exp = np.exp(probs - probs.max())
    return _decision(exp / exp.sum())


def _decision(probs):
    index = int(np.argmax(probs))
    score = float(probs[index])
    label = LABELS[index]
    return {"label": label, "score": score, "rotate": bool("180" in label and score > CLS_THRESH)}


def compare(a, b):
    """Agreement of the two decisions that change what the OCR pipeline does: the label and whether the
    crop is rotated (the score only informs them; it differs a little under any quantization)."""
    return (float(a["label"] == b["label"]) + float(a["rotate"] == b["rotate"])) / 2
