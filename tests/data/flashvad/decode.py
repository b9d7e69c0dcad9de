"""flashvad's per-frame decisions (its HysteresisDetector, flashvad-stream.json): p = sigmoid(speech_logits); a frame
may start speech at p >= 0.8 and keeps it while p > 0.5."""
import numpy as np


def decode(outputs):
    logit = float(np.asarray(outputs["speech_logits"]).reshape(-1)[0])
    p = 1.0 / (1.0 + np.exp(-logit))
    return {"start_ok": bool(p >= 0.8), "keep_ok": bool(p > 0.5)}
