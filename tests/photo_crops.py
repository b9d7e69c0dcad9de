"""Real images for tests about input statistics: crops of matplotlib's sample photographs (the portrait and the blue
pack, alternating), each a random window of 0.4 to 0.9 of each side, resized square, as float32 CHW 0..255 pixels."""

from __future__ import annotations

import numpy as np


def photo_crops(count: int, seed: int, size: int) -> list[np.ndarray]:
    from matplotlib import cbook
    from PIL import Image

    photos = [np.asarray(Image.open(cbook.get_sample_data(name, asfileobj=False)).convert("RGB"))
              for name in ("grace_hopper.jpg", "Minduka_Present_Blue_Pack.png")]
    rng, out = np.random.default_rng(seed), []
    for index in range(count):
        photo = photos[index % 2]
        height, width = photo.shape[:2]
        side = rng.uniform(0.4, 0.9)
        h, w = int(height * side), int(width * side)
        y, x = rng.integers(0, height - h + 1), rng.integers(0, width - w + 1)
        crop = Image.fromarray(np.ascontiguousarray(photo[y:y + h, x:x + w])).resize((size, size))
        out.append(np.asarray(crop, np.float32).transpose(2, 0, 1))
    return out
