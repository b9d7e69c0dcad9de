"""Shared fixtures: the real demo model (PaddleOCR text-direction classifier), its real ModelOpt
QDQ variants and real inputs, all shipped in qdqreport/demo/."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"
# Developer tools that do not ship in the wheel (scripts/corpus_score.py) are imported by the tests from there.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))


@pytest.fixture(scope="session")
def demo() -> Path:
    return DEMO


@pytest.fixture(scope="session")
def eval_x() -> np.ndarray:
    with np.load(DEMO / "eval.npz") as data:
        return data["x"]


@pytest.fixture(scope="session")
def broken_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundle collected from the ×255-calibrated QDQ model (real ONNX Runtime runs)."""
    from qdqreport.cli import main

    out = tmp_path_factory.mktemp("broken") / "bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--calib", str(DEMO / "calib_x255.npz"),
                 "--modelopt-log", str(DEMO / "modelopt_x255.log"), "--max-samples", "16", "-o", str(out), "--quiet"])
    assert code == 0
    return out


@pytest.fixture(scope="session")
def healthy_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundle collected from the correctly calibrated QDQ model."""
    from qdqreport.cli import main

    out = tmp_path_factory.mktemp("healthy") / "bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--calib", str(DEMO / "calib.npz"), "-o", str(out), "--quiet"])
    assert code == 0
    return out


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where browser tests keep their screenshots: $QDQREPORT_ARTIFACTS/browser in CI (uploaded), else a temp folder."""
    where = os.environ.get("QDQREPORT_ARTIFACTS")
    path = Path(where) / "browser" if where else tmp_path_factory.mktemp("browser-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path
