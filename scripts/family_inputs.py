"""Inputs for the corpus families added for issue 10: a YOLOX detector, a CTC text recogniser, a VAD LSTM.

YOLOX (ddddocr 1.6.1's common_det.onnx, input images [1, 3, 416, 416]): ddddocr's own preprocessing
(core/detection_engine.py `preproc`): BGR uint8 pixels letterboxed into 416x416 over grey 114, as
float32 0..255, no normalisation. Pictures: crops of scikit-image's photographs and text images
(page.png, text.png), evaluation and calibration from different positions and scales.

PP-OCRv4 recogniser (rapidocr-onnxruntime 1.4.4, input x [N, 3, 48, W], BGR, (x/255 - 0.5)/0.5):
the demo's real upright 48x192 text-line crops (qdqreport/demo/eval.npz, calib.npz: the classifier's
inputs, preprocessed exactly as rapidocr preprocesses recogniser inputs).

Silero VAD v5 (silero-vad 6.2.3's silero_vad_16k_op15.onnx, 16 kHz: 512 new samples plus the
previous 64 per call, state [2, 1, 128], sr): no speech recording ships in any installed package, so
the audio is synthesised: voiced harmonic signals (90-150 Hz fundamental, 20 harmonics) switched on
and off at a syllable rate, with pauses and a little noise. It is what the VAD's input looks like
spectrally, not real speech; the states fed with each chunk are the FP32 model's own, as a
streaming application computes them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

YOLO_SIZE = 416
YOLO_PICTURES = ("page.png", "text.png", "coffee.png", "chelsea.png", "astronaut.png", "rocket.jpg",
                 "motorcycle_left.png", "camera.png", "coins.png", "immunohistochemistry.png")
SR, CHUNK, CONTEXT = 16000, 512, 64


def yolo_letterbox(rgb: np.ndarray) -> np.ndarray:
    """ddddocr's preproc: BGR uint8 resized to fit 416x416 (top-left), grey 114 around, CHW float32."""
    height, width = rgb.shape[:2]
    ratio = min(YOLO_SIZE / height, YOLO_SIZE / width)
    size = (int(width * ratio), int(height * ratio))
    resized = np.asarray(Image.fromarray(rgb).resize(size, Image.BILINEAR), dtype=np.uint8)
    padded = np.full((YOLO_SIZE, YOLO_SIZE, 3), 114, np.uint8)
    padded[:size[1], :size[0]] = resized[..., ::-1]  # BGR, as cv2 reads it
    return padded.transpose(2, 0, 1).astype(np.float32)


def yolo_images(images: Path, calibration: bool, count: int) -> np.ndarray:
    """[count, 3, 416, 416] letterboxed crops (a third to the whole picture) of the scikit-image pictures."""
    rng = np.random.default_rng(23 if calibration else 17)
    names = [n for n in YOLO_PICTURES if (images / n).exists()]
    out = []
    for index in range(count):
        picture = np.asarray(Image.open(images / names[(index + calibration) % len(names)]).convert("RGB"))
        height, width = picture.shape[:2]
        share = float(rng.uniform(0.35, 1.0))
        h, w = max(32, int(height * share)), max(32, int(width * share * rng.uniform(0.7, 1.3)))
        h, w = min(h, height), min(w, width)
        top, left = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
        out.append(yolo_letterbox(np.ascontiguousarray(picture[top:top + h, left:left + w])))
    return np.stack(out)


def rec_sets(demo: Path, eval_count: int) -> tuple[np.ndarray, np.ndarray]:
    """(eval x, calib x): the demo's upright text-line crops (rapidocr rotates the others before recognising).

    The demo sets interleave each crop upright (even index) and rotated 180° (odd); evaluation is spread
    evenly over the 25 upright evaluation crops, calibration is the 50 upright calibration crops.
    """
    with np.load(demo / "eval.npz") as data:
        evaluation = data["x"][0::2]
    with np.load(demo / "calib.npz") as data:
        calib = data["x"][0::2]
    pick = np.linspace(0, len(evaluation) - 1, eval_count).round().astype(int)
    return evaluation[pick], calib


def speech_like(seconds: float, seed: int) -> np.ndarray:
    """Synthetic voiced audio: harmonics of a drifting 90-150 Hz pitch, 2-5 Hz syllables, pauses, a little noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    pitch = 120 + 30 * np.sin(2 * np.pi * 0.7 * t + seed)
    phase = 2 * np.pi * np.cumsum(pitch) / SR
    voiced = sum(np.sin(k * phase) / k for k in range(1, 20))
    rate = 2 + 3 * rng.random()
    envelope = np.clip(np.sin(2 * np.pi * rate * t + seed), 0, None) * (np.sin(2 * np.pi * 0.3 * t + seed) > -0.2)
    return (0.3 * voiced * envelope + 0.01 * rng.standard_normal(t.size)).astype(np.float32)


def vad_feeds(fp32: Path, seeds: tuple[int, ...], seconds: float, scale: float = 1.0,
              audio_of=None) -> dict[str, np.ndarray]:
    """A streaming VAD's feeds over synthetic audio: chunk+context, the FP32 model's own state; samples stacked.

    *scale* multiplies the audio the model sees (32768: int16 PCM values fed without dividing by 32768);
    *audio_of(seconds, seed)* makes each seed's audio (default speech_like).
    """
    import onnxruntime

    session = onnxruntime.InferenceSession(str(fp32), providers=["CPUExecutionProvider"])
    inputs, states = [], []
    for seed in seeds:
        audio = (audio_of or speech_like)(seconds, seed) * scale
        state, context = np.zeros((2, 1, 128), np.float32), np.zeros(CONTEXT, np.float32)
        for start in range(0, audio.size - CHUNK + 1, CHUNK):
            chunk = audio[start:start + CHUNK]
            feed = {"input": np.concatenate([context, chunk])[None], "state": state, "sr": np.array(SR, np.int64)}
            inputs.append(feed["input"])
            states.append(state)
            state, context = session.run(None, feed)[1], chunk[-CONTEXT:]
    return {"input": np.concatenate(inputs), "state": np.concatenate(states, axis=1), "sr": np.array(SR, np.int64)}
