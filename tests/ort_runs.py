"""What each ONNX Runtime run of a test returns, counted (the stepped passes' memory bound, issue 12)."""

from __future__ import annotations

import numpy as np
import pytest


def count_returned_bytes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, every InferenceSession.run appends the bytes it returned to the list given back."""
    import onnxruntime

    returned: list[int] = []
    run = onnxruntime.InferenceSession.run

    def counted(self, output_names, input_feed, run_options=None):
        values = run(self, output_names, input_feed, run_options)
        returned.append(sum(int(np.asarray(v).nbytes) for v in values))
        return values

    monkeypatch.setattr(onnxruntime.InferenceSession, "run", counted)
    return returned
