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


def _exact(comparer: StageComparer) -> dict:
    """Everything the comparer found, floats by repr (bit for bit, signed zeros and NaN included)."""
    result = comparer.result()
    return {"rows": [repr(sorted(r.items())) for r in result.sample_rows],
            "slices": [repr(sorted(r.items())) for r in result.slice_rows], "sliced": repr(result.sliced),
            "skipped": result.skipped, "classes": sorted(comparer.classes()),
            "sums": {name: {axis: repr([getattr(sums, f).tolist() for f in ("rms_sq", "count", "ref_sq", "cand_sq", "dot",
                                                                            "diff_sq", "max_abs")] + [sums.rms_count])
                            for axis, sums in state.axes.items()} for name, state in comparer.outputs.items()}}


def _held_back_cases() -> dict[str, tuple[list[dict], list[dict], frozenset]]:
    rng = np.random.default_rng(11)

    def soft(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)

    def noisy(sample: dict, scale: float = 0.01) -> dict:
        return {k: (v + rng.standard_normal(v.shape) * scale).astype(v.dtype) for k, v in sample.items()}

    cases = {}
    refs = [{"output": rng.random((1, 1)).astype(np.float32), "stateN": rng.standard_normal((2, 1, 128)).astype(np.float32)}
            for _ in range(150)]
    cases["vad"] = (refs, [noisy(r) for r in refs], frozenset())
    refs = [{"p": soft(rng.standard_normal((1, 2))), "q": soft(rng.standard_normal((1, 10)))} for _ in range(100)]
    refs[70]["q"] = refs[70]["q"] * 3  # stops being a probability vector midway: top-k stops there
    cases["cls"] = (refs, [noisy(r, 0.05) for r in refs], frozenset())
    cases["cls_given"] = (refs, [noisy(r, 0.05) for r in refs], frozenset({"q"}))
    refs = [{"a": rng.standard_normal((1, 64, 64)).astype(np.float32) * np.logspace(0, 3, 64, dtype=np.float32),
             "b": rng.standard_normal((1, 4097)).astype(np.float32),
             "c": rng.standard_normal((3, 7, 5)).astype(np.float32), "d": rng.standard_normal((1, 16, 3))}
            for _ in range(50)]
    cands = [noisy(r) for r in refs]
    cands[17]["c"][0, 0, 0], refs[40]["c"][1, 2, 3], cands[41]["a"][0, 3, 3] = np.nan, np.inf, -np.inf
    refs[45]["d"][:], cands[45]["d"][:] = 0.0, -0.0
    cases["layouts"] = (refs, cands, frozenset())  # "a" mixes scales along its last axis: transposed slice blocks
    refs = [{"v": rng.standard_normal((1, 10 if i % 7 else 12, 4)).astype(np.float32),
             "m": rng.standard_normal((1, 5)).astype(np.float32 if i < 30 else np.float16)} for i in range(80)]
    cands = [noisy(r) for r in refs]
    cands[70]["v"] = cands[70]["v"][:, :, :3].copy()  # shapes differ: the output is skipped from there
    cases["varying"] = (refs, cands, frozenset())
    cases["scalar"] = ([{"x": np.float32(i)} for i in range(5)], [{"x": np.float32(i + 0.5)} for i in range(5)], frozenset())
    cases["empty"] = ([{"x": np.ones((1, 0), np.float32)}] * 5, [{"x": np.ones((1, 0), np.float32)}] * 5, frozenset())
    return cases


def test_held_back_samples_compare_as_each_alone(monkeypatch) -> None:
    """Samples held back and reduced a run at a time (issue 12) give what each sample compared alone gives, bit for
    bit: every row, slice row and running sum; probability detection, NaN/Inf samples, a varying length, a shape
    change, another dtype midway, outputs over metrics.ROWS_MAX_VALUES values."""
    _same_held_back(monkeypatch, _held_back_cases())


@pytest.mark.slow
def test_held_back_real_outputs_compare_as_each_alone(monkeypatch) -> None:
    """The same on the real ORT outputs of BUNDLES (vad's 1- and 256-value outputs are held back; the detectors' maps
    are over metrics.ROWS_MAX_VALUES values and compared alone)."""
    _same_held_back(monkeypatch, {name: (*_outputs(name), frozenset()) for name in BUNDLES})


def _same_held_back(monkeypatch, cases: dict) -> None:
    from qdqreport.analysis import stream_compare

    for name, (refs, cands, classes) in cases.items():
        for detect in (True, False):
            found = []
            for run in (1, 64):  # each alone; runs of 64 (vad's 150 samples end one midway)
                monkeypatch.setattr(stream_compare, "_RUN_SAMPLES", run)
                comparer = StageComparer(classes, detect_probabilities=detect)
                for ref, cand in zip(refs, cands):
                    comparer.add(ref, cand)
                found.append(_exact(comparer))
            assert found[0] == found[1], (name, detect)
