"""The thirty-third sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part33.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex33/wh]

--wheels is a folder holding the package (no network at run time): <wheels>/isbnx is isbnx 0.0.18's package folder
(`pip download --no-deps isbnx==0.0.18`, unzipped: its wheel ships the detector it runs, isbnx/model/best.onnx, and the
detector's code, isbnx/detector.py). Nothing comes from a hub. One family only. The package ships no page images: the
pages are rendered by this script (PIL) as a book's copyright page: lines of text (The Zen of Python, Python's own `this`
module, in matplotlib's shipped DejaVu and STIX fonts) with an "ISBN 978-..." line (a valid ISBN-13 from a seeded
generator) and an EAN-13 barcode of the same number (the standard's L/G/R codes, drawn bar by bar) with its caption and
digits, on a paper tint; nothing else is synthetic but the random-calibration fault's noise. The detector's own
preprocessing (isbnx.detector.Detector._whiten_background and _preprocess: grayscale, letterbox on 114 grey, /255) is
mirrored here at 640 x 640 (DetectorConfig's input_width and input_height, set to 640: the package's default is 1280;
the model's input is dynamic and its docstring names a 640 canvas). What each case is measured against is the FP32
model's own decisions. Every label carries "added_for": THIRTY_THIRD_PART (scripts/corpus_score.py), so the scorer
reports the batch apart and prints only its totals unless --show-sealed (STILL_SEALED). The recipe and the faults were
chosen from what users of such a detector get wrong, and measured (--measure, no case collected yet: that run was the
screening too, nothing re-chosen after it); the labels were then written from how each case was made
and from what the quantization did to the task's decisions (--measure: this script's own ONNX Runtime runs), before any
rule, report or the scorer was run on the cases; the "harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY) come
from those measurements alone.

New family (a new task kind for the corpus: locating a book's ISBN on a scanned page):
- isb: isbnx 0.0.18's `isbnx/model/best.onnx` (an Ultralytics YOLO26n detector trained on "isbn_128", exported
  end-to-end, opset 20): 102 Convs (a backbone, a neck with an attention block, the one-to-one head's box and class
  branches at three strides), its decoding inside the graph (TopK, Gather), input `images` [batch, 3, H, W] (dynamic),
  output `output0` [batch, 300, 6] (x1, y1, x2, y2, score, class: 0 and 1 the ISBN text kinds, 2 the barcode). The FP32
  model is the package's file through onnxruntime's quant_pre_process (skip_symbolic_shape: the symbolic pass does not
  complete on the graph's decoding). Evaluation: EVAL_PAGES pages (seeds from
  EVAL_SEED); calibration: CALIB_PAGES other pages (seeds from CALIB_SEED); collect's --inputs (isb_eval.npz) holds
  BUNDLED pages of the evaluation. The decision measured (--measure): the package's Detector._pick_boxes on each page
  (score >= 0.3, DetectorConfig.conf_threshold, then a per-class NMS at IoU 0.45, the package's _nms_numpy, mirrored):
  a page's decision changed when its detections differ from FP32's (a detection with no detection of the same class at
  IoU >= 0.5 on the other side, either way).

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe (RECIPE)
takes the 96 Convs of the backbone, the neck and the head's hidden layers, and leaves the head's six output Convs (the
box and class logits at each stride) float (the notes at MEASURED). The healthy control made for TensorRT is
quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False). Every other
case quantizes the Convs' biases to int32, so scripts/label_targets.py gives the faulty cases of causes 1-4 the
recipe's target, onnxruntime, as in the earlier parts. The bundles were collected with the collector of commit 793152c
(a clean worktree of it, PYTHONPATH set to it and the imported qdqreport checked to be the worktree's), and the part was
scored while sealed on the rules of 793152c in that worktree (totals only). Models and data go to build/corpus-work/."""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

THIRTY_THIRD_PART = "sealed part 33 (2026-11-27)"  # scripts/corpus_score.py's THIRTY_THIRD_PART
MODELS = {"isb": "isbnx ISBN detector (isbnx 0.0.18's isbnx/model/best.onnx: an Ultralytics YOLO26n, 102 Convs, "
                 "end-to-end decoding in the graph, 3 classes: two ISBN text kinds and the barcode; input a grey page "
                 "letterboxed to 640 x 640 as the package's Detector prepares it; the decision: the package's "
                 "_pick_boxes detections per page, score >= 0.3 and per-class NMS)"}
SOURCE = "isbnx/model/best.onnx"
SIZE = 640  # DetectorConfig.input_width / input_height as set for this part (the package's default 1280)
EVAL_PAGES, EVAL_SEED = 40, 1000
CALIB_PAGES, CALIB_SEED = 24, 5000
BUNDLED = 3  # evaluation pages in the bundles
CONF, NMS_IOU, MATCH_IOU = 0.3, 0.45, 0.5
WHEELS = Path("/tmp/ex33/wh")  # --wheels (main sets it)


# --- pages ---------------------------------------------------------------------------------------------
def _fonts() -> Path:
    import matplotlib

    return Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf"


def _zen() -> list[str]:
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return [line for line in codecs.decode(this.s, "rot13").splitlines() if line.strip()]


_L = ["0001101", "0011001", "0010011", "0111101", "0100011", "0110001", "0101111", "0111011", "0110111", "0001011"]
_G = ["0100111", "0110011", "0011011", "0100001", "0011101", "0111001", "0000101", "0010001", "0001001", "0010111"]
_R = ["1110010", "1100110", "1101100", "1000010", "1011100", "1001110", "1010000", "1000100", "1001000", "1110100"]
_PARITY = ["LLLLLL", "LLGLGG", "LLGGLG", "LLGGGL", "LGLLGG", "LGGLLG", "LGGGLL", "LGLGLG", "LGLGGL", "LGGLGL"]


def isbn13(rng) -> str:
    digits = [9, 7, 8, *(int(d) for d in rng.integers(0, 10, 9))]
    check = (10 - sum(d * (1 if i % 2 == 0 else 3) for i, d in enumerate(digits)) % 10) % 10
    return "".join(map(str, [*digits, check]))


def ean13_bits(code: str) -> str:
    d = [int(c) for c in code]
    left = "".join((_L if _PARITY[d[0]][i] == "L" else _G)[d[i + 1]] for i in range(6))
    return "101" + left + "01010" + "".join(_R[x] for x in d[7:]) + "101"


def page(seed: int, isbn: bool = True, width: int = 900, height: int = 1200):
    """A copyright page: Zen lines (one of them the ISBN line) and an EAN-13 barcode with caption and digits."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(seed)
    tone = int(rng.integers(225, 256))
    image = Image.new("RGB", (width, height), (tone, tone - int(rng.integers(0, 12)), tone - int(rng.integers(0, 25))))
    draw = ImageDraw.Draw(image)
    font_name = ["DejaVuSerif.ttf", "DejaVuSans.ttf", "DejaVuSansMono.ttf", "STIXGeneral.ttf"][int(rng.integers(0, 4))]
    size = int(rng.integers(18, 30))
    font = ImageFont.truetype(str(_fonts() / font_name), size)
    code = isbn13(rng)
    y, x0 = int(rng.integers(60, 200)), int(rng.integers(50, 150))
    zen = _zen()
    lines = [zen[i] for i in rng.choice(len(zen), size=int(rng.integers(6, 14)), replace=False)]
    isbn_line = f"ISBN {code[:3]}-{code[3]}-{code[4:8]}-{code[8:12]}-{code[12]}"
    at = int(rng.integers(2, len(lines)))
    if isbn:
        lines.insert(at, isbn_line)
    for line in lines:
        draw.text((x0, y), line, fill=(20, 20, 20), font=font)
        y += int(size * 1.7)
    module, bar_h = int(rng.integers(2, 4)), int(rng.integers(70, 120))
    bx = int(rng.integers(40, max(41, width - 95 * module - 40)))
    by = min(height - bar_h - 60, y + int(rng.integers(30, 120)))
    if isbn:
        draw.rectangle([bx - 15, by - 25, bx + 95 * module + 15, by + bar_h + 40], fill=(255, 255, 255))
        small = ImageFont.truetype(str(_fonts() / "DejaVuSansMono.ttf"), 12 + 3 * module)
        draw.text((bx, by - 22), isbn_line, fill=(0, 0, 0), font=small)
        for i, bit in enumerate(ean13_bits(code)):
            if bit == "1":
                draw.rectangle([bx + i * module, by, bx + i * module + module - 1, by + bar_h], fill=(0, 0, 0))
        draw.text((bx, by + bar_h + 4), f"{code[0]} {code[1:7]} {code[7:]}", fill=(0, 0, 0), font=small)
    return image


def preprocess(image, grey: bool = True) -> np.ndarray:
    """isbnx.detector.Detector._whiten_background and _preprocess at SIZE: grey (L then RGB), resized to fit, pasted
    centred on a 114-grey canvas, /255, [1, 3, SIZE, SIZE]."""
    from PIL import Image

    if grey:
        image = image.convert("L").convert("RGB")
    width, height = image.size
    scale = min(SIZE / width, SIZE / height)
    rw, rh = round(width * scale), round(height * scale)
    canvas = Image.new("RGB", (SIZE, SIZE), (114, 114, 114))
    canvas.paste(image.resize((rw, rh), Image.Resampling.BILINEAR), ((SIZE - rw) // 2, (SIZE - rh) // 2))
    return np.ascontiguousarray((np.asarray(canvas, dtype=np.float32) / 255.0).transpose(2, 0, 1)[None])


def pages(first_seed: int, count: int, **kw) -> np.ndarray:
    return np.concatenate([preprocess(page(first_seed + k, **kw)) for k in range(count)])


# --- the package's decision --------------------------------------------------------------------------
def _nms(boxes: np.ndarray, scores: np.ndarray, iou_thres: float = NMS_IOU) -> list[int]:
    """isbnx.detector._nms_numpy."""
    x1, y1, x2, y2 = boxes.T
    areas = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    order, keep = scores.argsort()[::-1], []
    while order.size > 0:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        w = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        h = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        inter = w * h
        union = areas[i] + areas[rest] - inter
        iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        order = rest[iou <= iou_thres]
    return keep


def pick_boxes(output: np.ndarray) -> list[tuple[np.ndarray, float, int]]:
    """isbnx.detector.Detector._pick_boxes: score >= CONF, per-class NMS, by score."""
    scores, classes = output[:, 4], output[:, 5].astype(np.int64)
    mask = scores >= CONF
    boxes, scores, classes = output[mask, :4], scores[mask], classes[mask]
    picked = []
    for c in np.unique(classes):
        m = classes == c
        for i in _nms(boxes[m], scores[m]):
            picked.append((boxes[m][i], float(scores[m][i]), int(c)))
    return sorted(picked, key=lambda p: -p[1])


_DECIDED: dict = {}


def isb_decide(model: Path) -> list:
    key = str(model)
    if key not in _DECIDED:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        with np.load(WORK / "isb_eval_pages.npz") as data:
            images = data["images"]
        _DECIDED[key] = [pick_boxes(session.run(None, {"images": images[i:i + 1]})[0][0]) for i in range(len(images))]
    return _DECIDED[key]


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return float(w * h / union) if union > 0 else 0.0


def _unmatched(these: list, those: list) -> int:
    return sum(not any(c == d and _iou(b, e) >= MATCH_IOU for e, _t, d in those) for b, _s, c in these)


def isb_measure(qdq: Path) -> str:
    a, b = isb_decide(WORK / "isb_fp32.onnx"), isb_decide(qdq)
    lost = [_unmatched(x, y) for x, y in zip(a, b)]
    new = [_unmatched(y, x) for x, y in zip(a, b)]
    changed = sum(1 for p, q in zip(lost, new) if p or q)
    total = sum(len(x) for x in a)
    return (f"{changed} of the {len(a)} evaluation pages' detections changed (a detection with no same-class "
            f"detection at IoU >= 0.5 on the other side): {sum(lost)} of FP32's {total} detections lost, {sum(new)} "
            f"new")


def measure(case: Case) -> str:
    return isb_measure(WORK / case.qdq)


# --- models and data --------------------------------------------------------------------------------
def fp32(wheels: Path) -> None:
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / SOURCE), str(WORK / "isb_fp32.onnx"), skip_symbolic_shape=True)


def save(name: str, x: np.ndarray) -> None:
    np.savez(WORK / name, images=x.astype(np.float32))


IMAGENET_MEAN, IMAGENET_STD = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    evaluation = pages(EVAL_SEED, EVAL_PAGES)
    save("isb_eval_pages.npz", evaluation)
    save("isb_eval.npz", evaluation[:BUNDLED])
    calib = pages(CALIB_SEED, CALIB_PAGES)
    save("isb_calib.npz", calib)
    # pixels left 0..255: the package's /255 left out
    save("isb_calib_x255.npz", calib * 255.0)
    # the ImageNet habit: (x - mean) / std per channel after /255
    save("isb_calib_imagenet.npz", (calib - IMAGENET_MEAN[None, :, None, None]) / IMAGENET_STD[None, :, None, None])
    # pages of the same books' text without an ISBN line or a barcode
    save("isb_calib_textonly.npz", pages(CALIB_SEED, CALIB_PAGES, isbn=False))
    # a few pages only: 2
    save("isb_calib_few.npz", calib[:2])
    # the dummy-input habit: standard normal noise of the pages' shape
    rng = np.random.default_rng(20271127)
    save("isb_calib_random.npz", rng.standard_normal(calib.shape).astype(np.float32))


def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


ISB_OPS_ALL = ["Conv", "Mul", "Sigmoid", "Add", "Concat", "MaxPool", "Resize", "MatMul", "Softmax", "Transpose",
               "Reshape", "Split", "Slice", "Gather", "TopK"]


def isb_nodes(selection: str) -> list[str]:
    """Named selections of the detector's 102 Convs: "body" all but the head's six output Convs (the box and class
    logits at each stride: one2one_cv2.N.2 and one2one_cv3.N.2), "all" every Conv."""
    import onnx

    convs = [n.name for n in onnx.load(str(WORK / "isb_fp32.onnx")).graph.node if n.op_type == "Conv"]
    heads = [c for c in convs if c.endswith((".2/Conv",)) and "/model.23/one2one_cv" in c]
    assert len(convs) == 102 and len(heads) == 6, (len(convs), heads)
    return {"all": convs, "body": [c for c in convs if c not in heads], "heads": heads}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    if isinstance(nodes, str):
        nodes = isb_nodes(nodes)
    part5.quantize_ort(family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


# --- cases ----------------------------------------------------------------------------------
ISB_COLLECT_ARGS = ("--batch-axis", "images=0", "--batch-axis", "output0=0")
RECIPE = "body"


def isb_cases() -> list[Case]:
    c, w = "isb_calib.npz", ["Conv"]
    what = "the 96 Convs of the backbone, the neck and the head's hidden layers (the head's six output Convs float)"
    calib = (f"{CALIB_PAGES} rendered copyright pages (other seeds than the evaluation's), prepared as the package's "
             f"Detector does (grey, letterboxed to {SIZE}, /255)")

    def recipe(calib_file: str, output: str, **kw) -> list:
        return [q("isb", calib_file, output, w, RECIPE, **kw)]

    return [
        Case("isb_healthy_ort_sym", "isb", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, on {calib}", "isb_sym.onnx", c, make=recipe(c, "isb_sym.onnx")),
        Case("isb_healthy_ort_percentile", "isb", 0, (), "the same with percentile calibration (99.999%)",
             "isb_sym_pct.onnx", c, make=recipe(c, "isb_sym_pct.onnx", method="percentile")),
        Case("isb_healthy_trt_nobias", "isb", 0, (), f"onnxruntime quantize_static with TensorRT-compatible settings: "
             f"symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False (the Convs' "
             f"biases float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "isb_sym_nobias.onnx", c, make=recipe(c, "isb_sym_nobias.onnx", quantize_bias=False)),
        Case("isb_calib_x255", "isb", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"pages with pixels left 0..255 (the package's /255 left out)", "isb_x255.onnx", "isb_calib_x255.npz",
             make=recipe("isb_calib_x255.npz", "isb_x255.onnx")),
        Case("isb_calib_imagenet", "isb", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same pages normalised the ImageNet way ((x/255 - mean) / std per channel) where the package only "
             f"divides by 255", "isb_imagenet.onnx", "isb_calib_imagenet.npz",
             make=recipe("isb_calib_imagenet.npz", "isb_imagenet.onnx")),
        Case("isb_random_calib", "isb", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on standard "
             f"normal noise of the pages' shape (np.random.randn: a stand-in calibration set; no quantizer log); the "
             f"random file is given to collect as --calib", "isb_random.onnx", "isb_calib_random.npz",
             make=recipe("isb_calib_random.npz", "isb_random.onnx")),
        Case("isb_calib_textonly", "isb", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same books' pages without the ISBN line and the barcode (text only)", "isb_textonly.onnx",
             "isb_calib_textonly.npz", make=recipe("isb_calib_textonly.npz", "isb_textonly.onnx")),
        Case("isb_calib_few", "isb", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 2 pages only",
             "isb_few.onnx", "isb_calib_few.npz", make=recipe("isb_calib_few.npz", "isb_few.onnx")),
        Case("isb_overquant", "isb", 3, ("QR002",), "every op onnxruntime can quantize forced into INT8, every node "
             "(every Conv, the SiLUs' Sigmoid and Mul, the Adds, Concats, MaxPools, Resizes, the attention's MatMuls "
             "and Softmax, the decoding's Transposes, Reshapes, Splits, Slices, Gathers and TopK; op_types_to_quantize "
             + str(ISB_OPS_ALL) + ")", "isb_all_ops.onnx", c, make=[q("isb", c, "isb_all_ops.onnx", ISB_OPS_ALL)]),
        Case("isb_sensitive_int8", "isb", 4, ("QR002",), f"the healthy symmetric recipe with the head's six output "
             f"Convs (the box and class logits at each stride) in INT8 too: every Conv", "isb_sensitive_int8.onnx", c,
             make=[q("isb", c, "isb_sensitive_int8.onnx", w, "all")]),
        Case("isb_ort_uint8", "isb", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "isb_u8.onnx", c, make=recipe(c, "isb_u8.onnx", activation="uint8",
                                                                    symmetric=False)),
        Case("isb_ort_int8_asym", "isb", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations but "
             f"ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as isb_healthy_ort_sym otherwise)", "isb_s8_asym.onnx", c,
             make=recipe(c, "isb_s8_asym.onnx", symmetric=False)),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's box picking on the 40 evaluation pages (FP32 finds 42 detections on them).
_P = ("of the 40 evaluation pages' detections changed (a detection with no same-class detection at IoU >= 0.5 on the "
      "other side, by the package's box picking)")
_N = " pages against the healthy controls' 10, 5 and 6 (not harmless by HARMLESS_POLICY)"
_A = " pages against the healthy controls' 10, 5 and 6: as healthy (harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    "isb_healthy_ort_sym": f"10 {_P}: 7 of FP32's 42 detections lost, 4 new",
    "isb_healthy_ort_percentile": f"5 {_P}: 4 of FP32's 42 detections lost, 2 new",
    "isb_healthy_trt_nobias": f"6 {_P}: 5 of FP32's 42 detections lost, 3 new (judged for TensorRT)",
    "isb_calib_x255": f"35 {_P}: 42 of FP32's 42 detections lost, 0 new: 35{_N}",
    "isb_calib_imagenet": f"11 {_P}: 10 of FP32's 42 detections lost, 1 new: 11{_N}",
    "isb_random_calib": f"7 {_P}: 7 of FP32's 42 detections lost, 0 new: 7{_A}",
    "isb_calib_textonly": f"8 {_P}: 7 of FP32's 42 detections lost, 1 new: 8{_A}",
    "isb_calib_few": f"4 {_P}: 3 of FP32's 42 detections lost, 1 new: 4{_A}",
    "isb_overquant": f"35 {_P}: 42 of FP32's 42 detections lost, 0 new: 35{_N}",
    "isb_sensitive_int8": f"8 {_P}: 6 of FP32's 42 detections lost, 2 new: 8{_A}",
    "isb_ort_uint8": f"14 {_P}: 11 of FP32's 42 detections lost, 5 new, on ONNX Runtime; the cause as made is "
                     "TensorRT's (non-zero zero-points)",
    "isb_ort_int8_asym": f"6 {_P}: 5 of FP32's 42 detections lost, 1 new, on ONNX Runtime (no more than the healthy "
                         "controls, 10, 5 and 6): the cause is TensorRT's",
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 10, 5 and 6 of the 40
# pages; isb_calib_few (4), isb_random_calib (7), isb_calib_textonly (8) and isb_sensitive_int8 (8) change no more:
# harmless. isb_calib_imagenet (11), isb_calib_x255 (35) and isb_overquant (35) change more.
# This measurement run was the screening too (the recipe fixed before it: every Conv but the head's six output Convs):
# the detector's decisions are fragile at this size (a barcode's or an ISBN line's score near the 0.3 threshold), so
# the healthy recipe moves a quarter of the pages; nothing was re-chosen after it.
_H = ("{n} of the 40 pages changed; the family's healthy controls change 10, 5 and 6 (marked 2026-11-27 by the maker's "
      "measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"isb_calib_few": _H.format(n=4), "isb_random_calib": _H.format(n=7),
                            "isb_calib_textonly": _H.format(n=8), "isb_sensitive_int8": _H.format(n=8)}
TARGET_ORT = {"isb_healthy_ort_sym", "isb_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(isb_cases(), THIRTY_THIRD_PART, MEASURED, {"isb": ISB_COLLECT_ARGS})


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part33_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"isb": "isb_calib_random.npz"}, lambda _families: prepare(WHEELS))


def write_part33_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRTY_THIRD_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
