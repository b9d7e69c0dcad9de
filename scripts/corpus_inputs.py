"""Real inputs for the corpus models, from images that ship in scikit-image.

Classifier (PaddleOCR text direction, input x [N, 3, 48, 192] in [-1, 1]): the demo's text-line
crops (scripts/demo_inputs.py), upright and rotated 180°.

Detector (PP-OCRv4 DBNet, input x [N, 3, H, W], BGR, (x/255 - 0.5)/0.5 as rapidocr does):
160x160 crops of scikit-image's `page.png` (a photographed book page, the only image there with
printed text the detector finds), half of them plain and half "printed" on colour photographs
of the same package (multiply blend: page * (0.35 + 0.65 * photo)), so colour order matters.
Evaluation and calibration crops come from different positions and scales of the same pictures.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

SIZE = 160
PHOTOS_EVAL = ("chelsea.png", "coffee.png", "rocket.jpg", "color.png", "ihc.png", "retina.jpg")
PHOTOS_CALIB = PHOTOS_EVAL  # the same kind of pictures; other crops of them (positions, scales differ)


def _crop(images: Path, name: str, short: int, fx: float, fy: float) -> np.ndarray:
    """An RGB float crop in [0, 1] of *name* resized so its short side is *short*."""
    image = Image.open(images / name).convert("RGB")
    width, height = image.size
    scale = short / min(width, height)
    image = image.resize((max(SIZE, round(width * scale)), max(SIZE, round(height * scale))), Image.BILINEAR)
    array = np.asarray(image, dtype=np.float32) / 255.0
    top, left = int((array.shape[0] - SIZE) * fy), int((array.shape[1] - SIZE) * fx)
    return array[top:top + SIZE, left:left + SIZE]


def det_preprocess(rgb: np.ndarray) -> np.ndarray:
    """rapidocr's detector preprocessing of [N, H, W, 3] RGB in [0, 1]: BGR, (x - 0.5) / 0.5, NCHW."""
    return ((rgb[..., ::-1] - 0.5) / 0.5).transpose(0, 3, 1, 2).astype(np.float32)


def det_rgb(images: Path, calibration: bool, count: int) -> np.ndarray:
    """[count, 160, 160, 3] RGB crops in [0, 1]: page crops, half printed on photographs."""
    rng = np.random.default_rng(11 if calibration else 7)
    photos = PHOTOS_CALIB if calibration else PHOTOS_EVAL
    out = []
    for index in range(count):
        short = int(rng.integers(170, 330))
        page = _crop(images, "page.png", short, float(rng.random()), float(rng.random()))
        if index % 2:
            photo = _crop(images, photos[(index // 2) % len(photos)], 220, float(rng.random()), float(rng.random()))
            page = page * (0.35 + 0.65 * photo)
        out.append(page)
    return np.stack(out)


def cls_sets(demo: Path, eval_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(eval x, eval labels, calib x) from the demo's real crops; eval evenly spread over the 50."""
    with np.load(demo / "eval.npz") as data:
        evaluation = data["x"]
    labels = np.load(demo / "eval_labels.npy")
    with np.load(demo / "calib.npz") as data:
        calib = data["x"]
    pick = np.linspace(0, len(evaluation) - 1, eval_count).round().astype(int)
    return evaluation[pick], labels[pick], calib
