"""An image model's output judged as pixels (PSNR), not as a probability map binarised at 0.5 (issue 10, item 2).

waifu2x (the corpus' w2x family: a 2x upscaler, [1, 3, 84, 84] in, [1, 3, 96, 96] out after a Clip to [0, 1]) was
judged "map IoU 1.000 at 0.5" whatever its calibration: a random calibration that costs 1.7 dB against the originals
(903 of 1020 blocks lose more than 1 dB, the healthy controls 561-610) read "Outputs agree".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.agreement import AGREE, COLLAPSE, DEGRADE, comparable_value
from qdqreport.analysis.context import Context
from qdqreport.analysis.output_kinds import infer_kind
from qdqreport.bundle.reader import Bundle

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _upscale(case: str):
    if not (CORPUS / case).is_dir():
        pytest.skip(f"corpus case {case} not present")
    ctx = Context(Bundle(CORPUS / case))
    comparison = ctx.comparison("quantization")
    return next(s for s in ctx.output_summaries(comparison.id) if s.output == "upscale")


@pytest.mark.parametrize("case, level", [
    ("w2x_healthy_ort_sym", AGREE), ("w2x_healthy_ort_percentile", AGREE), ("w2x_healthy_trt_nobias", AGREE),
    ("w2x_random_calib", DEGRADE),  # 34.7-36.3 dB against FP32 in the maker's measurement
    ("w2x_calib_0_255", COLLAPSE),  # black images: 5-11 dB
])
def test_an_upscalers_output_is_judged_by_its_psnr(case, level):
    summary = _upscale(case)
    assert summary.kind.kind == "image" and summary.kind.peak == 1.0
    assert summary.judgement.measure == "PSNR" and summary.judgement.level == level
    # The bundle stores 8 of its 40 samples' outputs: the few words say the PSNR read those (agreement._decision_headline).
    assert summary.judgement.headline.startswith("PSNR ") and summary.judgement.headline.endswith(
        " dB (first 8 of 40 samples)")


def test_images_in_byte_range_take_255_as_their_peak_and_maps_or_masks_stay_maps():
    rng = np.random.default_rng(0)
    inputs = {"image": (1, 64, 64, 3)}
    pixels = [rng.uniform(0, 255, (1, 128, 128, 3)).astype(np.float32) for _ in range(2)]
    kind = infer_kind("output", pixels, producer_op="Add", inputs=inputs)
    assert (kind.kind, kind.peak) == ("image", 255.0)
    generated = [rng.uniform(-1, 1, (1, 3, 64, 64)).astype(np.float32) for _ in range(2)]  # a Tanh generator's
    kind = infer_kind("output", generated, producer_op="Tanh", inputs={"x": (1, 3, 64, 64)})
    assert (kind.kind, kind.peak) == ("image", 2.0) and "values in [-1, 1]" in kind.reason
    unit = [rng.uniform(0, 1, (1, 3, 64, 64)).astype(np.float32) for _ in range(2)]
    assert infer_kind("output", unit, producer_op="Sigmoid", inputs={"x": (1, 3, 64, 64)}).kind == "map"
    assert infer_kind("mask", unit, producer_op="Clip", inputs={"x": (1, 3, 64, 64)}).kind == "map"
    # Names alone (no shapes) never make an image.
    assert infer_kind("output", unit, producer_op="Clip", inputs=("x",)).kind == "map"


def test_psnr_ranks_beside_shares_on_one_scale():
    assert comparable_value("PSNR", 20.0) == pytest.approx(0.9)
    assert comparable_value("top-1 agreement", 0.95) == 0.95


def test_the_collapse_finding_quotes_the_psnr_in_db():
    from qdqreport.engine import run_rules

    if not (CORPUS / "w2x_random_calib").is_dir():
        pytest.skip("corpus case w2x_random_calib not present")
    qr001 = next(f for f in run_rules(Context(Bundle(CORPUS / "w2x_random_calib"))).findings if f.rule_id == "QR001")
    psnr = next(item for item in qr001.evidence if getattr(item, "name", "") == "PSNR")
    assert psnr.unit == "dB" and 20 < psnr.value < 38 and "dB degrades" in psnr.threshold
