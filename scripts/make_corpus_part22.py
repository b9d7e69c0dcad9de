"""The twenty-second sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part22.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex22]

--wheels is a folder holding the packages, each installed there with pip's --target (no network at run time):
<wheels>/bm is brainmaze-eeg-models 0.1.0 (`pip download --no-deps brainmaze-eeg-models==0.1.0`, then `pip install
--no-deps --target <wheels>/bm brainmaze_eeg_models-0.1.0-py3-none-any.whl`: its wheel ships OpenSpindleNet's scalp
EEG sleep-spindle detector brainmaze_eeg_models/spindles/_models/spindle-detector-eeg.onnx beside the package's own
preprocessing, SpindleDetector.predict_windows (each 30 s window at 250 Hz z-scored, demeaned, its 'shan6-13' wavelet
scalogram z-scored row by row), and its decoding, decode_window and interval_nms), and <wheels>/dep holds scipy and
brainmaze-utils (which the package imports; `pip install --no-deps --target <wheels>/dep scipy brainmaze-utils`).
Nothing comes from a hub. No EEG recording ships in any package here, so the EEG is synthesised, and said so: 30 s
windows of sleep-stage-2-like scalp EEG at 250 Hz in microvolts (EEG_SEED), a 1/f^1.6 background with slow waves, some
windows with alpha bursts, K-complexes and muscle noise, and 0 to 4 sleep spindles (Gaussian-enveloped 11-16 Hz bursts
of 0.5-2 s, 8-45 uV) each (FP32 finds the spindles the generator put in: the detector's own decision, not the
generator's list, is what each case is measured against). One family only. Every label carries "added_for":
TWENTY_SECOND_PART (scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless
--show-sealed (STILL_SEALED). The fault of each case was chosen from what users of this model get wrong, before
anything was measured; the labels were then written from how each case was made and from what the quantization did to
the task's decisions (--measure: this script's own ONNX Runtime runs through the package's own
SpindleDetector.predict_windows, decode_window and interval_nms), before any rule, report or the scorer was run on the
cases; the "harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles
were collected with the collector of commit 6387124 (a clean worktree of it, this script run with
`PYTHONPATH=<worktree>`, the imported qdqreport asserted to be the worktree's; return codes only read), and the part
was scored "before" the next round of rule changes, on the rules of 6387124 in that worktree (totals only).

New family (a new task: sleep-spindle detection in EEG, events on a biosignal's time axis):
- osn: brainmaze-eeg-models 0.1.0's `spindles/_models/spindle-detector-eeg.onnx` (2.8 MB), OpenSpindleNet (Seják et
  al. 2025) for scalp EEG: a temporal convolutional network (the raw signal and its 15 scalogram rows concatenated, 12
  dilated causal Conv blocks with GELUs and residual Convs) with two heads: detection (BatchNorm + Conv bottleneck with
  SiLUs, two MatMuls: for each of the window's 30 one-second segments a confidence, a centre offset and a duration)
  and segmentation (a ConvTranspose neck and a MatMul: a per-sample spindle logit). Inputs `raw_signal`
  [batch, 1, 7500] (the window z-scored) and `spectrogram` [batch, 15, 7500] (the scalogram |coef| z-scored row by
  row), both float; outputs `detection` [batch, 30, 3] and `segmentation` [batch, 7500, 1] logits. The FP32 model is
  the package's file (opset 17 already) through onnxruntime's quant_pre_process. The package's decision: the spindle
  intervals of each window (sigmoid, segments whose confidence >= 0.5, centre and duration decoded, interval NMS at
  IoU 0.3: SpindleDetector's defaults).
  Windows: 128 synthetic 30 s windows, interleaved: evaluation 64, calibration the other 64. The decision measured
  (--measure): the spindles each evaluation window gets; a window changes when a spindle is lost or added (an FP32
  spindle counts as kept when the QDQ list has one overlapping it with IoU >= 0.3, the package's own NMS threshold,
  each used once). The bundles hold the first EVAL_BUNDLED evaluation windows' inputs (each window is 16 x 7500
  floats).

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

TWENTY_SECOND_PART = "sealed part 22 (2026-11-27)"  # scripts/corpus_score.py's TWENTY_SECOND_PART
MODELS = {"osn": "OpenSpindleNet sleep-spindle detector (brainmaze-eeg-models 0.1.0's spindle-detector-eeg.onnx: a "
                 "temporal convolutional network with GELUs over the z-scored signal and its z-scored wavelet "
                 "scalogram, detection and segmentation heads; the decision: the spindles out of the package's "
                 "decode_window and interval_nms)"}
SOURCE = "bm/brainmaze_eeg_models/spindles/_models/spindle-detector-eeg.onnx"
RAW, SPEC = "raw_signal", "spectrogram"
FS, WINDOW = 250, 7500  # the model's rate and window (30 s)
WINDOWS = 128  # interleaved: evaluation the even ones, calibration the odd ones
EVAL_BUNDLED = 24  # what collect's --inputs holds: the first 24 of the measured windows
EEG_SEED = 20261222
HEADS = ("/head/detection_head/detection_head.0/MatMul", "/head/detection_head/detection_head.3/MatMul",
         "/head/segmentation_head/segmentation_head.1/MatMul")  # the detection MLP's two MatMuls, the segmentation's

WHEELS = Path("/tmp/ex22")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    for sub in ("bm", "dep"):
        if str(wheels / sub) not in sys.path:
            sys.path.append(str(wheels / sub))


# --- synthetic EEG ------------------------------------------------------------------------------
def _pink(n: int, rng: np.random.Generator, beta: float = 1.6) -> np.ndarray:
    f = np.fft.rfftfreq(n, 1 / FS)
    shape = np.zeros_like(f)
    shape[1:] = f[1:] ** (-beta / 2)
    x = np.fft.irfft(shape * (rng.standard_normal(len(f)) + 1j * rng.standard_normal(len(f))), n)
    return x / x.std()


def eeg_window(rng: np.random.Generator, spindles: bool = True) -> np.ndarray:
    """One 30 s window of sleep-stage-2-like scalp EEG at 250 Hz in microvolts: a 1/f background (20 uV RMS) with slow
    waves, alpha bursts (8-10.5 Hz) in a third of the windows, a K-complex in a quarter, muscle noise in a sixth, and
    0-4 spindles (11-16 Hz, 0.5-2 s, 8-45 uV, Gaussian envelope) unless *spindles* is False."""
    t = np.arange(WINDOW) / FS
    x = 20 * _pink(WINDOW, rng)
    for _ in range(rng.integers(1, 3)):  # slow waves
        x += rng.uniform(5, 20) * np.sin(2 * np.pi * rng.uniform(0.5, 2.0) * t + rng.uniform(0, 2 * np.pi))
    if rng.random() < 1 / 3:  # alpha bursts: not spindles
        for _ in range(rng.integers(1, 3)):
            c, d = rng.uniform(2, 28), rng.uniform(1, 3)
            x += rng.uniform(8, 25) * np.exp(-0.5 * ((t - c) / (d / 4)) ** 2) * np.sin(
                2 * np.pi * rng.uniform(8, 10.5) * t + rng.uniform(0, 2 * np.pi))
    if rng.random() < 1 / 4:  # a K-complex: a sharp negative wave, then a slower positive one
        c, a = rng.uniform(3, 27), rng.uniform(60, 140)
        x += -a * np.exp(-0.5 * ((t - c) / 0.12) ** 2) + 0.6 * a * np.exp(-0.5 * ((t - c - 0.45) / 0.2) ** 2)
    if rng.random() < 1 / 6:  # muscle noise
        burst = np.exp(-0.5 * ((t - rng.uniform(3, 27)) / rng.uniform(0.5, 2)) ** 2)
        x += rng.uniform(5, 15) * burst * np.diff(_pink(WINDOW + 1, rng, beta=-0.5))
    if spindles:
        for _ in range(rng.integers(0, 5)):
            c, d = rng.uniform(1.0, 29.0), rng.uniform(0.5, 2.0)
            x += rng.uniform(8, 45) * np.exp(-0.5 * ((t - c) / (d / 4)) ** 2) * np.sin(
                2 * np.pi * rng.uniform(11, 16) * t + rng.uniform(0, 2 * np.pi))
    return x


def windows(seed: int, count: int, spindles: bool = True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([eeg_window(rng, spindles) for _ in range(count)])


# --- the package's preprocessing -------------------------------------------------------------------
def detector(wheels: Path = WHEELS):
    _packages(wheels)
    from brainmaze_eeg_models.spindles import SpindleDetector

    return SpindleDetector("eeg", device="cpu")


def model_inputs(w: np.ndarray, wheels: Path = WHEELS, normalize: bool = True) -> dict[str, np.ndarray]:
    """The network's inputs as SpindleDetector.predict_windows computes them (the z-scored window; the scalogram of
    the demeaned window, z-scored row by row); with *normalize* False, the package's _normalize left out (the window
    and the scalogram |coef| as they come, in microvolts)."""
    _packages(wheels)
    from brainmaze_eeg_models.spindles._cwt import scalogram
    from brainmaze_eeg_models.spindles._detector import _normalize

    norm = _normalize if normalize else (lambda a: a)
    w = np.asarray(w, np.float64)
    raw = norm(w[:, None, :]).astype(np.float32)
    spec = norm(scalogram(w - w.mean(axis=-1, keepdims=True))).astype(np.float32)
    return {RAW: raw, SPEC: spec}


def minmax(a: np.ndarray) -> np.ndarray:
    """Each row scaled to [0, 1] over its last axis (the image habit) in place of the package's z-score."""
    lo, hi = a.min(axis=-1, keepdims=True), a.max(axis=-1, keepdims=True)
    return ((a - lo) / (hi - lo)).astype(np.float32)


def fp32(wheels: Path) -> None:
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / SOURCE), str(WORK / "osn_fp32.onnx"))


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    eeg = windows(EEG_SEED, WINDOWS)
    evaluation, calibration = eeg[0::2], eeg[1::2]
    np.save(WORK / "osn_measure.npy", evaluation)
    np.savez(WORK / "osn_eval.npz", **model_inputs(evaluation[:EVAL_BUNDLED], wheels))
    calib = model_inputs(calibration, wheels)
    np.savez(WORK / "osn_calib.npz", **calib)
    # the package's _normalize left out: the window and its scalogram in microvolts, as they come
    np.savez(WORK / "osn_calib_microvolts.npz", **model_inputs(calibration, wheels, normalize=False))
    # min-max scaling of each row to [0, 1] (the image habit) in place of the z-score
    raw_uv = model_inputs(calibration, wheels, normalize=False)
    np.savez(WORK / "osn_calib_minmax.npz", **{k: minmax(v) for k, v in raw_uv.items()})
    # the signal z-scored but the scalogram fed as the wavelet transform gives it (|coef| in microvolts)
    np.savez(WORK / "osn_calib_scalogram_raw.npz", **{RAW: calib[RAW], SPEC: raw_uv[SPEC]})
    # the dummy-input habit: standard normal noise of the inputs' shapes
    rng = np.random.default_rng(20261223)
    np.savez(WORK / "osn_calib_random.npz", **{k: rng.standard_normal(v.shape).astype(np.float32)
                                               for k, v in calib.items()})
    # windows with no spindle in them (the wake and REM stretches of a night: the same generator, no spindle put in)
    np.savez(WORK / "osn_calib_no_spindles.npz", **model_inputs(windows(EEG_SEED + 1, len(calibration), spindles=False),
                                                                wheels))


# --- quantizer and measurement ----------------------------------------------------------------
q = part5.q  # ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias)
OSN_OPS_ALL = ["Conv", "ConvTranspose", "MatMul", "Gemm", "Mul", "Add", "Div", "Sub", "Erf", "Sigmoid",
               "BatchNormalization", "Concat", "Slice", "Transpose", "Reshape", "Gather", "Unsqueeze", "Squeeze"]


def osn_nodes(selection: str) -> list[str]:
    """Every Conv, ConvTranspose and MatMul but the three head MatMuls ("body"), with the detection head's two MatMuls
    ("body+detection")."""
    import onnx

    weighted = [n.name for n in onnx.load(str(WORK / "osn_fp32.onnx")).graph.node
                if n.op_type in ("Conv", "ConvTranspose", "MatMul")]
    assert all(h in weighted for h in HEADS)
    body = [n for n in weighted if n not in HEADS]
    return {"body": body, "body+detection": body + list(HEADS[:2])}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/osn_fp32.onnx; *nodes* an osn_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, osn_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias)


_DETECTED: dict = {}


def osn_detect(model: Path) -> list[np.ndarray]:
    """The package's SpindleDetector.predict_windows on every evaluation window with the network *model* (its session
    swapped in), then decode_window and interval_nms at the detector's defaults: one (N, 3) array a window (start,
    end in samples, confidence)."""
    key = str(model)
    if key not in _DETECTED:
        _packages(WHEELS)
        from brainmaze_eeg_models.runtime import OnnxModel
        from brainmaze_eeg_models.spindles._decode import decode_window, interval_nms

        det = detector()
        det._model = OnnxModel(str(model), device="cpu", batch_size=32, name=f"OpenSpindleNet-{model.stem}")
        out = det.predict_windows(np.load(WORK / "osn_measure.npy"))["detection"]
        _DETECTED[key] = [interval_nms(decode_window(d, WINDOW, det.confidence_threshold), det.nms_iou_threshold)
                          for d in out]
    return _DETECTED[key]


def _iou(a, b) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def _kept(reference: np.ndarray, other: np.ndarray, iou: float = 0.3) -> int:
    """How many of *reference*'s spindles *other* has: one overlapping it with IoU >= *iou* (each used once)."""
    used, kept = set(), 0
    for a in reference:
        for j, b in enumerate(other):
            if j not in used and _iou(a, b) >= iou:
                used.add(j)
                kept += 1
                break
    return kept


def osn_measure(qdq: Path) -> str:
    a, b = osn_detect(WORK / "osn_fp32.onnx"), osn_detect(qdq)
    kept = [_kept(x, y) for x, y in zip(a, b)]
    lost = sum(len(x) - k for x, k in zip(a, kept))
    added = sum(len(y) - k for y, k in zip(b, kept))
    changed = sum(len(x) != k or len(y) != k for x, y, k in zip(a, b, kept))
    return (f"{changed} of the {len(a)} evaluation windows get other spindles from the package's decoding than "
            f"FP32's; spindles FP32/QDQ {sum(map(len, a))}/{sum(map(len, b))}, {lost} lost, {added} added")


def measure(case: Case) -> str:
    return osn_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def osn_cases() -> list[Case]:
    c, w = "osn_calib.npz", ["Conv", "ConvTranspose", "MatMul"]
    what = ("the 26 Convs and ConvTransposes of the temporal convolutional network, the two heads' bottlenecks "
            "and the segmentation neck (the three head MatMuls: the detection MLP's two and the segmentation's, "
            "float, with the GELUs, SiLUs, BatchNorms and residual Adds)")
    calib = ("64 calibration windows (synthetic 30 s sleep-EEG windows interleaved with the evaluation's, fed as the "
             "package's predict_windows feeds them: the window z-scored, its scalogram z-scored row by row)")

    def sym(calib_file: str, output: str) -> list:
        return [q("osn", calib_file, output, w, "body")]

    return [
        Case("osn_healthy_ort_sym", "osn", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "osn_sym.onnx", c, make=sym(c, "osn_sym.onnx")),
        Case("osn_healthy_ort_percentile", "osn", 0, (), "the same with percentile calibration (99.999%)",
             "osn_sym_pct.onnx", c, make=[q("osn", c, "osn_sym_pct.onnx", w, "body", method="percentile")]),
        Case("osn_healthy_trt_nobias", "osn", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "osn_sym_nobias.onnx", c, make=[q("osn", c, "osn_sym_nobias.onnx", w, "body", quantize_bias=False)]),
        Case("osn_calib_microvolts", "osn", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"the same windows with the package's z-score left out: the signal and its scalogram |coef| in "
             f"microvolts, as they come, where predict_windows z-scores both", "osn_microvolts.onnx",
             "osn_calib_microvolts.npz", make=sym("osn_calib_microvolts.npz", "osn_microvolts.onnx")),
        Case("osn_calib_minmax", "osn", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same windows scaled to [0, 1] row by row (min-max, the image habit) where predict_windows z-scores "
             f"the signal and each scalogram row", "osn_minmax.onnx", "osn_calib_minmax.npz",
             make=sym("osn_calib_minmax.npz", "osn_minmax.onnx")),
        Case("osn_calib_scalogram_raw", "osn", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"the same windows with the signal z-scored but the scalogram fed as the wavelet transform gives it "
             f"(|coef| in microvolts, not z-scored row by row)", "osn_scalogram_raw.onnx",
             "osn_calib_scalogram_raw.npz", make=sym("osn_calib_scalogram_raw.npz", "osn_scalogram_raw.onnx")),
        Case("osn_random_calib", "osn", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of both inputs' shapes (a stand-in calibration set at the z-scored inputs' "
             f"scale; no quantizer log); the noise file is given to collect as --calib", "osn_random.onnx",
             "osn_calib_random.npz", make=sym("osn_calib_random.npz", "osn_random.onnx")),
        Case("osn_calib_no_spindles", "osn", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"64 windows with no spindle in them (the same generator with no spindle put in: a night's wake and "
             f"REM stretches; the right preprocessing, no spindle)", "osn_no_spindles.onnx",
             "osn_calib_no_spindles.npz", make=sym("osn_calib_no_spindles.npz", "osn_no_spindles.onnx")),
        Case("osn_overquant", "osn", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too: the three head MatMuls, the GELUs' and SiLUs' Mul/Div/Add and "
             "Sigmoid, the residual Adds, the causal padding's Slices and Concats, the input Concat and the "
             "Transposes (op_types_to_quantize " + str(OSN_OPS_ALL) + ")", "osn_all_ops.onnx", c,
             make=[q("osn", c, "osn_all_ops.onnx", OSN_OPS_ALL)]),
        Case("osn_detection_head_int8", "osn", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the "
             f"detection head's two MatMuls in INT8 too (quantize_static's own selection of every MatMul takes "
             f"them: the MLP whose last MatMul gives each one-second segment's confidence, centre offset and "
             f"duration logits)", "osn_detection_int8.onnx", c,
             make=[q("osn", c, "osn_detection_int8.onnx", w, "body+detection")]),
        Case("osn_ort_uint8", "osn", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "osn_u8.onnx", c,
             make=[q("osn", c, "osn_u8.onnx", w, "body", activation="uint8", symmetric=False)]),
        Case("osn_ort_int8_asym", "osn", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as osn_healthy_ort_sym otherwise)", "osn_s8_asym.onnx", c,
             make=[q("osn", c, "osn_s8_asym.onnx", w, "body", symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's predict_windows, decode_window and interval_nms on the evaluation windows.
_W = "of the 64 evaluation windows get other spindles from the package's decoding than FP32's; "
MEASURED: dict[str, str] = {
    'osn_healthy_ort_sym': (
        f"0 {_W}spindles FP32/QDQ 107/107, 0 lost, 0 added: INT8 of the 26 Convs and ConvTransposes changes no "
        "window's spindles"),
    'osn_healthy_ort_percentile': (
        f"0 {_W}spindles FP32/QDQ 107/107, 0 lost, 0 added: as osn_healthy_ort_sym"),
    'osn_healthy_trt_nobias': (
        f"0 {_W}spindles FP32/QDQ 107/107, 0 lost, 0 added: as osn_healthy_ort_sym (judged for TensorRT)"),
    'osn_calib_microvolts': (
        f"39 {_W}spindles FP32/QDQ 107/57, 53 lost, 3 added: 39 windows against the healthy controls' 0 (not "
        "harmless by HARMLESS_POLICY)"),
    'osn_calib_minmax': (
        f"44 {_W}spindles FP32/QDQ 107/21, 86 lost, 0 added: 44 windows against the healthy controls' 0 (not "
        "harmless by HARMLESS_POLICY)"),
    'osn_calib_scalogram_raw': (
        f"40 {_W}spindles FP32/QDQ 107/58, 52 lost, 3 added: 40 windows against the healthy controls' 0 (not "
        "harmless by HARMLESS_POLICY)"),
    'osn_random_calib': (
        f"52 {_W}spindles FP32/QDQ 107/0, 107 lost, 0 added: every spindle lost (not harmless by HARMLESS_POLICY)"),
    'osn_calib_no_spindles': (
        f"5 {_W}spindles FP32/QDQ 107/112, 0 lost, 5 added: 5 windows against the healthy controls' 0 (not "
        "harmless by HARMLESS_POLICY)"),
    'osn_overquant': (
        f"6 {_W}spindles FP32/QDQ 107/105, 4 lost, 2 added: 6 windows against the healthy controls' 0 (not "
        "harmless by HARMLESS_POLICY)"),
    'osn_detection_head_int8': (
        f"0 {_W}spindles FP32/QDQ 107/107, 0 lost, 0 added: as healthy: no more windows than the healthy "
        "controls' 0 (harmless by HARMLESS_POLICY)"),
    'osn_ort_uint8': (
        f"0 {_W}spindles FP32/QDQ 107/107, 0 lost, 0 added: as the healthy controls on ONNX Runtime (0, 0 and 0 "
        "windows), the cause is TensorRT's"),
    'osn_ort_int8_asym': (
        f"0 {_W}spindles FP32/QDQ 107/107, 0 lost, 0 added: as the healthy controls on ONNX Runtime (0, 0 and 0 "
        "windows), the cause is TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 0, 0 and 0 of the 64
# windows; osn_detection_head_int8 changes none either: harmless. osn_calib_no_spindles (5) and osn_overquant (6)
# change a few windows, osn_calib_microvolts (39), osn_calib_scalogram_raw (40), osn_calib_minmax (44) and
# osn_random_calib (52) most: not harmless. The detection head's whole MLP in INT8 (its MatMuls, Adds, Sigmoid and
# Mul: 0 windows) was tried as a replacement before any rule ran and changed no more, so the head's MatMuls stay the
# cause-4 case, labelled harmless (that model dropped, never collected).
HARMLESS: dict[str, str] = {
    "osn_detection_head_int8": "0 of the 64 windows get other spindles; the family's healthy controls change 0, 0 "
                               "and 0 (marked 2026-11-27 by the maker's measurement, before any rule ran)",
}
TARGET_ORT = {"osn_healthy_ort_sym", "osn_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(osn_cases(), TWENTY_SECOND_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part22_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"osn": "osn_calib_no_spindles.npz"}, lambda _families: prepare(args.wheels))


def write_part22_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=TWENTY_SECOND_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
