"""Real inputs for the demo model: text-line crops of two photographs that ship in scikit-image.

The demo model is PaddleOCR's text-direction classifier (via rapidocr-onnxruntime): it reads a
48x192 text-line crop and says whether the text is upright (class 0) or rotated 180° (class 1).
Its inputs here are crops of skimage's `page.png` (a photographed book page) and `text.png`
(handwriting on paper), each also rotated by 180°, preprocessed exactly as rapidocr does:
resize to height 48 keeping the aspect ratio, scale to [-1, 1] ((x/255 - 0.5) / 0.5), pad
the width to 192 with zeros.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

HEIGHT, WIDTH = 48, 192

# (top, bottom) pixel rows of the text lines in page.png and text.png, read off the images.
PAGE_LINES = [(12, 34), (47, 65), (65, 83), (82, 100), (99, 117), (116, 135), (168, 190)]
TEXT_LINES = [(0, 40), (25, 70), (55, 105), (95, 140), (125, 172)]


def line_windows(image: np.ndarray, lines: list[tuple[int, int]], aspect: float, stride: float) -> list[np.ndarray]:
    """Cut each text line into overlapping windows of width aspect*height."""
    crops = []
    for top, bottom in lines:
        height = bottom - top
        width = int(round(aspect * height))
        for left in range(0, image.shape[1] - width + 1, max(1, int(stride * width))):
            crops.append(image[top:bottom, left:left + width])
    return crops


def preprocess(crop: np.ndarray) -> np.ndarray:
    """rapidocr's cls preprocessing: grey crop -> float32 [3, 48, 192] in [-1, 1], zero-padded."""
    height, width = crop.shape
    new_width = min(WIDTH, int(np.ceil(HEIGHT * width / height)))
    resized = np.asarray(Image.fromarray(crop).resize((new_width, HEIGHT), Image.BILINEAR), dtype=np.float32)
    normalised = (resized / 255.0 - 0.5) / 0.5
    out = np.zeros((3, HEIGHT, WIDTH), dtype=np.float32)
    out[:, :, :new_width] = normalised
    return out


def text_crops(page_png: str, text_png: str) -> list[np.ndarray]:
    page = np.asarray(Image.open(page_png).convert("L"))
    text = np.asarray(Image.open(text_png).convert("L"))
    return line_windows(page, PAGE_LINES, aspect=4.0, stride=0.5) + line_windows(text, TEXT_LINES, aspect=4.0, stride=0.5)


def labelled_set(crops: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each crop upright (label 0) and rotated by 180° (label 1), preprocessed, interleaved."""
    arrays, labels = [], []
    for crop in crops:
        for label, image in ((0, crop), (1, crop[::-1, ::-1])):
            arrays.append(preprocess(np.ascontiguousarray(image)))
            labels.append(label)
    return np.stack(arrays), np.asarray(labels, dtype=np.int64)
