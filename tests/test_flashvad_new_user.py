"""A new user's FlashVAD (tests/data/flashvad: a streaming VAD whose speech logit the application passes through a
sigmoid and thresholds at 0.8 to start and 0.5 to keep speech), calibrated with every state input at 0."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnxruntime as ort

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main

DATA = Path(__file__).resolve().parent / "data" / "flashvad"
FP32, QDQ = DATA / "flashvad_stream_fp32.onnx", DATA / "flashvad_stream_zero_state_calib.onnx"
EVAL = DATA / "eval_160.npz"


def _decisions(model: Path) -> list[dict]:
    spec = importlib.util.spec_from_file_location("flashvad_decode", DATA / "decode.py")
    decode = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(decode)
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    data = dict(np.load(EVAL))
    names = [i.name for i in session.get_inputs()]
    frames = len(data["feature"])
    feeds = ({k: data[k][:, i:i + 1] if k == "recurrent" else data[k][i:i + 1] for k in names} for i in range(frames))
    return [decode.decode(dict(zip([o.name for o in session.get_outputs()], session.run(None, feed))))
            for feed in feeds]


def _collected(tmp_path: Path) -> Context:
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(FP32), "--qdq", str(QDQ), "--inputs", str(EVAL), "--postprocess",
                 str(DATA / "decode.py"), "-o", str(out), "--quiet"]) == 0
    return Context(Bundle(out), target="onnxruntime")


def test_task_agreement_is_the_share_of_samples_decoded_alike_and_the_logit_is_judged_by_its_decisions(tmp_path):
    reference, candidate = _decisions(FP32), _decisions(QDQ)
    alike = [a == b for a, b in zip(reference, candidate)]
    one_field = [sum(a[k] != b[k] for k in a) == 1 for a, b in zip(reference, candidate)]
    assert sum(one_field) >= 2 and not all(alike)  # the mean over fields would read these samples half alike
    ctx = _collected(tmp_path)
    quantization = ctx.comparison("quantization")
    task = ctx.task_of_pair(quantization.reference, quantization.candidate)
    assert task["disagreeing"] == alike.count(False)
    assert float(task["agreement"]) == np.float64(np.mean(alike)).round(6)
    kinds = {s.output: s for s in ctx.output_summaries(quantization.id)}
    logit = kinds["speech_logits"]
    assert logit.kind.kind == "probabilities" and logit.kind.logit
    assert logit.judgement.measure == "threshold decisions"
    # Its decisions read every one of the 160 frames: the default kept the first 128 (a new user's turn detector read
    # 128 of 314 clips, one language sorted first, and a mistake that cost nothing read as twice as bad).
    assert len(ctx.stored_outputs("ort_qdq")) == 160
    assert "of 160 decisions" in logit.judgement.headline and "first" not in logit.judgement.headline
    # The next state the model hands back: named after its input with "next_", never the headline.
    assert all(kinds[name].internal for name in ("next_recurrent", "next_cache_0", "next_cache_3"))


def test_calibration_fixes_of_a_six_input_model_grow_and_feed_every_input(tmp_path):
    """QR006's printed fix grew one input of six (the others kept 12 rows: the reader stopped there and the model came
    out unchanged) and suggested Entropy, which quantize_static runs as MinMax; without a recorded calibration file the
    corrected file was an .npy that fed cache_0 alone. Now every input grows along its own batch axis, the method to try
    is Percentile, and the re-quantization reads every added sample."""
    import shlex
    import subprocess
    import sys

    from qdqreport.engine import run_rules

    data = dict(np.load(EVAL))
    few = {k: v[:, :12] if k == "recurrent" else v[:12] for k, v in data.items()}
    more = {k: v[:, 12:] if k == "recurrent" else v[12:] for k, v in data.items()}
    np.savez(tmp_path / "calib_few.npz", **few)
    np.savez(tmp_path / "more.npz", **more)
    bundle = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(FP32), "--qdq", str(QDQ), "--inputs", str(EVAL), "--calib",
                 str(tmp_path / "calib_few.npz"), "-o", str(bundle), "--quiet"]) == 0
    ctx = Context(Bundle(bundle), target="onnxruntime")
    size = next(f for f in run_rules(ctx).findings if f.rule_id == "QR006" and f.subject == "calibration size")
    extend, requantize = size.fixes[0].command, size.fixes[1].command
    assert "Percentile" in size.fixes[1].action and "CalibrationMethod.Percentile" in requantize
    run = tmp_path / "run"
    run.mkdir()
    extend = extend.replace("<more_samples.npz>", str(tmp_path / "more.npz"))
    subprocess.run([sys.executable if a == "python" else a for a in shlex.split(extend)], cwd=run, check=True)
    grown = dict(np.load(run / "calib_fixed.npz"))
    assert grown["recurrent"].shape[1] == len(grown["feature"]) == 160
    assert all(len(v) == 160 for k, v in grown.items() if k != "recurrent")
    reader = requantize[requantize.index("d = dict"):requantize.index("quantize_static(")]
    scope = {"np": np}
    exec(reader.replace("'calib_fixed.npz'", repr(str(run / "calib_fixed.npz"))), scope)  # the command's own reader
    feeds = list(scope["it"])
    assert len(feeds) == 160 and set(feeds[0]) == set(data)
    assert feeds[0]["recurrent"].shape == (1, 1, 64)


def test_a_state_calibrated_at_zeros_is_named_from_the_quantizers_fallback_range(tmp_path):
    """Collected without the calibration file, the caches' input quantizers are all that shows the fault: scale 1 and
    zero-point 0, what quantize_static writes for an input calibration saw as one value. It read "calibration range
    91.6x wider than the evaluation inputs", a scaling step to hunt for."""
    from qdqreport.engine import run_rules

    ctx = _collected(tmp_path)
    caches = [f for f in run_rules(ctx).findings if f.rule_id == "QR003" and f.subject.startswith("input cache_")]
    assert len(caches) == 4
    assert all("calibration holds one value" in f.title and "wider" not in f.title for f in caches)
    assert all("not zeros" in f.fixes[0].action for f in caches)
