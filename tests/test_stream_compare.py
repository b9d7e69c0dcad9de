"""The sample-by-sample, slice-vectorised comparison gives compare_stages' numbers on real ORT outputs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.compare import compare_stages
from qdqreport.analysis.stream_compare import StageComparer
from qdqreport.bundle.layout import load_stage_outputs
from qdqreport.bundle.reader import Bundle

ROOT = Path(__file__).resolve().parents[1]
# Real ONNX Runtime outputs stored by `qdqreport collect`: the demo classifier, a DBNet detector whose
# probability map mixes scales, a YOLOX-class detector head (boxes and scores, sliced along axis 2) and
# Silero VAD (its recurrent state sliced).
BUNDLES = ["sample_bundles/cls_calib_x255", "corpus/det_calib_x255", "corpus/yolo_calib_scale", "corpus/vad_calib_scale"]


def _outputs(name: str) -> tuple[list[dict], list[dict]]:
    bundle = Bundle(ROOT / name)
    return load_stage_outputs(bundle, "ort_fp32"), load_stage_outputs(bundle, "ort_qdq")


def _same(old: list[dict], new: list[dict]) -> None:
    assert len(old) == len(new)
    for a, b in zip(old, new):
        assert a.keys() == b.keys()
        for key, value in a.items():
            if isinstance(value, float) and not (value is None or math.isnan(value) or math.isinf(value)):
                assert b[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
            else:
                assert b[key] == value or (isinstance(value, float) and math.isnan(value) and math.isnan(b[key])), key


@pytest.mark.slow
@pytest.mark.parametrize("name", BUNDLES)
def test_stream_comparison_matches_compare_stages(name: str) -> None:
    fp32, qdq = _outputs(name)
    classes = frozenset(fp32[0])  # every output treated as class scores: the top-k columns are compared too
    old = compare_stages(fp32, qdq, classes)
    comparer = StageComparer(classes)
    for ref, cand in zip(fp32, qdq):
        comparer.add(ref, cand)
    new = comparer.result()
    _same(old.sample_rows, new.sample_rows)
    _same(old.slice_rows, new.slice_rows)
    assert new.sliced.keys() == old.sliced.keys() and new.skipped == old.skipped
    for output, entry in old.sliced.items():
        assert new.sliced[output]["axis"] == entry["axis"]
        assert new.sliced[output]["spread"] == pytest.approx(entry["spread"], rel=1e-9)


def test_detector_map_is_sliced() -> None:
    fp32, qdq = _outputs("corpus/det_calib_x255")
    comparer = StageComparer()
    for ref, cand in zip(fp32, qdq):
        comparer.add(ref, cand)
    result = comparer.result()
    assert result.sliced and result.slice_rows  # the check above compared real slice rows, not none


def test_detected_probabilities_keep_topk_only_there() -> None:
    fp32, qdq = _outputs("sample_bundles/cls_calib_x255")
    comparer = StageComparer(detect_probabilities=True)
    for ref, cand in zip(fp32, qdq):
        comparer.add(ref, {k: np.asarray(v) for k, v in cand.items()})
    old = compare_stages(fp32, qdq, comparer.classes())
    assert comparer.classes()  # the demo's softmax output is found from its values
    _same(old.sample_rows, comparer.result().sample_rows)
