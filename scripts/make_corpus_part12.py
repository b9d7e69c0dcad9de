"""The twelfth sealed part of the corpus: a batch made on 2026-11-26 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part12.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex12]

--wheels is a folder holding the unpacked packages (`pip download --no-deps khmersm==1.4.2 babel==2.19.0` (both
py3-none-any wheels), then unzip khmersm's into /tmp/ex12/khmersm/ and babel's into /tmp/ex12/babel/; this batch used
/tmp/ex12). The model, its vocabulary, its CRF transitions and its decode come from khmersm's wheel; the Khmer text
from babel's (the Unicode CLDR's Khmer locale data: the Khmer names of territories, languages, scripts and
currencies, whose multi-word names CLDR writes with a ZERO WIDTH SPACE between the words), the English text from
babel's English locale data; nothing comes from a hub. One family only (no variant of an earlier family drawn: their
work folders are gone from this machine). Every label carries "added_for": TWELFTH_PART (scripts/corpus_score.py), so
the scorer reports the batch apart and prints only its totals unless --show-sealed (STILL_SEALED). The fault of each
case was chosen from what users of this model get wrong, before anything was measured; the labels were then written
from how each case was made and from what the quantization did to the task's decisions (--measure: this script's own
ONNX Runtime runs through the package's own decode), before any rule, report or the scorer was run on the cases; the
"harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were
collected with the collector of commit d415b77 (a clean worktree of it, this script run with `PYTHONPATH=<worktree>`,
the imported qdqreport asserted to be the worktree's; return codes only read), and the part was scored once, "before"
the next round of rule changes, on the rules of d415b77 in that worktree (totals only).

New family (a new architecture and a new script: Khmer word segmentation by a transformer encoder and a CRF):
- khsm: KhmerSM, `khmersm/model.onnx` (+ `model.onnx.data`, 7 MB) of khmersm 1.4.2 (opset 17, exported by torch's
  dynamo exporter). Inputs `x` [batch, seq] int64, the ids of a Khmer text's characters in the package's 126-entry
  vocabulary (0 padding, 1 unknown), and `mask` [batch, seq] bool, True at a character (the graph negates it into a
  key-padding mask: a masked position is never attended to). The graph: a 126x192 embedding, a learned positional
  table, three post-norm transformer encoder layers (6 heads, d_model 192, feed-forward 768, ReLU; the QKV
  projections and the attention products are MatMuls, the output projections Gemms, LayerNormalization after each
  block), and a 192->2 projection: `emissions` [1, seq, 2], the scores of the tags B (a word begins) and I. The
  package's decision (khmersm.Segmenter.segment): each run of Khmer characters is encoded alone (batch 1, no padding,
  mask all True), its emissions Viterbi-decoded with the CRF transitions of config.json, and a space is written before
  every character tagged B but the first. The FP32 model is the package's file through onnxruntime's
  quant_pre_process (symbolic shape inference skipped: it stops incomplete on the exporter's shape
  arithmetic; one file, weights inline; outputs identical). A bundle sample is one text padded to 32 ids (0)
  with the mask False there: the emissions at the characters equal the unpadded run's (max |d| below 1e-5).
  Text: the Khmer runs of babel's `km` locale names (territories, languages, scripts, currencies), each with its
  ZERO WIDTH SPACEs removed (the package segments a run at a time and a ZWSP ends a run: a user hands it the words
  joined, as Khmer is usually written) and those ZWSPs kept as the known word boundaries; runs of 4 to 28 characters,
  duplicates dropped, shuffled by seed 112. Evaluation: the first 80 (the bundle's samples), calibration the next
  64. The decision measured (--measure): the package's own decode of FP32 and QDQ on every evaluation text:
  word-start (B) decisions flipped of all characters, texts segmented differently, the recall of the ZWSP-marked word
  boundaries (FP32 and QDQ), and the mean |d (B - I) emission margin|.
  Measured while choosing the recipe (symmetric MinMax, per-channel, calibrated on the calibration texts): see
  EXPLORED below. The healthy recipe quantizes every MatMul and Gemm but the 192->2 emission projection (the head),
  which stays float: quantize_static's own selection for a transformer, less the head.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

TWELFTH_PART = "sealed part 12 (2026-11-26)"  # scripts/corpus_score.py's TWELFTH_PART
MODELS = {"khsm": "KhmerSM Khmer word segmenter (khmersm 1.4.2's model.onnx: a character embedding, three "
                  "transformer encoder layers (6 heads, d_model 192) and a 192->2 projection; B/I emission scores per "
                  "character, Viterbi-decoded with a CRF by the package)"}
KHSM_SOURCE = "khmersm/khmersm/model.onnx"
KHSM_CONFIG = "khmersm/khmersm/config.json"
BABEL = "babel"
IDS, MASK, OUTPUT = "x", "mask", "emissions"
SEQ = 32  # every bundle sample: one text padded to 32 ids, the mask False beyond it
MIN_CHARS, MAX_CHARS = 4, 28
EVAL_TEXTS, CALIB_TEXTS = 80, 64
ZWSP = "\u200b"
KHMER_RUN = re.compile(r"[\u1780-\u17FF\u19E0-\u19FF\u200b]+")  # khmersm's KHMER_RE, with the ZWSP CLDR writes

WHEELS = Path("/tmp/ex12")  # --wheels (main sets it)


def _khmersm(wheels: Path):
    """khmersm.inference, the package's encoding and decode."""
    if str(wheels / "khmersm") not in sys.path:
        sys.path.insert(0, str(wheels / "khmersm"))
    import khmersm.inference as inference

    return inference


def _config(wheels: Path) -> dict:
    return json.loads((wheels / KHSM_CONFIG).read_text(encoding="utf-8"))


def _locale(wheels: Path, name: str):
    if str(wheels / BABEL) not in sys.path:
        sys.path.insert(0, str(wheels / BABEL))
    from babel import Locale

    return Locale.parse(name)


# --- the FP32 model ---------------------------------------------------------------------------
def khsm_fp32(wheels: Path) -> None:
    """The package's KhmerSM through quant_pre_process: WORK/khsm_fp32.onnx (module docstring)."""
    import onnx
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # the weights inline first (quant_pre_process cannot follow the package's external data file)
    onnx.save(onnx.load(str(wheels / KHSM_SOURCE)), str(WORK / "khsm_package.onnx"))
    # symbolic shape inference stops on the exporter's shape arithmetic (incomplete); onnx's is enough
    quant_pre_process(str(WORK / "khsm_package.onnx"), str(WORK / "khsm_fp32.onnx"), skip_symbolic_shape=True)


# --- text ---------------------------------------------------------------------------------------
def cldr_names(locale) -> list[str]:
    """The locale's display names: territories, languages, scripts and currencies, in that order."""
    return [*locale.territories.values(), *locale.languages.values(), *locale.scripts.values(),
            *locale.currencies.values()]


def khmer_texts(wheels: Path) -> list[tuple[str, list[int]]]:
    """(a Khmer run without its ZWSPs, the index of each character a ZWSP stood before) of every CLDR Khmer name,
    4-28 characters, duplicates dropped, in the names' order."""
    seen, out = set(), []
    for name in cldr_names(_locale(wheels, "km")):
        for run in KHMER_RUN.findall(name):
            text, starts = "", []
            for piece in run.split(ZWSP):
                if piece:
                    if text:
                        starts.append(len(text))
                    text += piece
            if MIN_CHARS <= len(text) <= MAX_CHARS and text not in seen:
                seen.add(text)
                out.append((text, starts))
    return out


def english_texts(wheels: Path, count: int = CALIB_TEXTS) -> list[str]:
    """English names of the same CLDR data (babel's `en` locale): the text at hand in the same package."""
    out = [n for n in cldr_names(_locale(wheels, "en")) if MIN_CHARS <= len(n) <= MAX_CHARS]
    return out[:count]


def encode(texts: list[str], wheels: Path, inverted_mask: bool = False,
           unmasked: bool = False) -> dict[str, np.ndarray]:
    """The package's _encode_chars of every text, padded to SEQ with id 0 and the mask False there (as
    khmersm's own training batches were); *inverted_mask*: True at the padding instead (PyTorch's
    src_key_padding_mask convention); *unmasked*: the mask True everywhere, padding included."""
    inference = _khmersm(wheels)
    char2id = _config(wheels)["char2id"]
    ids = np.zeros((len(texts), SEQ), np.int64)
    mask = np.zeros((len(texts), SEQ), bool)
    for i, text in enumerate(texts):
        row = inference._encode_chars(text, char2id)[:SEQ]
        ids[i, :len(row)] = row
        mask[i, :len(row)] = True
    if inverted_mask:
        mask = ~mask
    if unmasked:
        mask[:] = True
    return {IDS: ids, MASK: mask}


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    khsm_fp32(wheels)
    texts = khmer_texts(wheels)
    order = np.random.default_rng(112).permutation(len(texts))
    chosen = [texts[i] for i in order[:EVAL_TEXTS + CALIB_TEXTS]]
    evaluation, calib = chosen[:EVAL_TEXTS], chosen[EVAL_TEXTS:]
    (WORK / "khsm_texts.json").write_text(json.dumps(
        {"eval": [t for t, _ in evaluation], "eval_word_starts": {t: s for t, s in evaluation},
         "calib": [t for t, _ in calib]}, ensure_ascii=False, indent=1), encoding="utf-8")
    calib_texts = [t for t, _ in calib]
    np.savez(WORK / "khsm_eval.npz", **encode([t for t, _ in evaluation], wheels))
    np.savez(WORK / "khsm_calib.npz", **encode(calib_texts, wheels))
    # the mask inverted: True at the padding, False at the characters (PyTorch's src_key_padding_mask convention)
    np.savez(WORK / "khsm_calib_mask_inverted.npz", **encode(calib_texts, wheels, inverted_mask=True))
    # padded to 32 with id 0 and the mask left True everywhere: the padding attended to
    np.savez(WORK / "khsm_calib_unmasked.npz", **encode(calib_texts, wheels, unmasked=True))
    # the CLDR names as they are, ZWSPs, spaces and punctuation included, encoded whole (every ZWSP, space and
    # bracket an unknown id 1) instead of one Khmer run at a time
    raw = [n for n in cldr_names(_locale(wheels, "km")) if ZWSP in n or " " in n]
    raw = [n for n in raw if n.replace(ZWSP, "").replace(" ", "") not in {t for t, _ in evaluation}]
    np.savez(WORK / "khsm_calib_raw.npz", **encode([n for n in raw if len(n) <= SEQ][:CALIB_TEXTS], wheels))
    np.savez(WORK / "khsm_calib_english.npz", **encode(english_texts(wheels), wheels))
    noise = np.random.default_rng(20261126)
    good = encode(calib_texts, wheels)
    np.savez(WORK / "khsm_calib_random.npz",  # np.random.randint over the vocabulary, every position a character
             **{IDS: noise.integers(0, len(_config(wheels)["char2id"]), good[IDS].shape).astype(np.int64),
                MASK: np.ones_like(good[MASK])})


# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


HEAD = "node_MatMul_340"  # the 192->2 emission projection (its bias Add follows)
KHSM_BODY, KHSM_EVERYTHING = "khsm_body", "khsm_everything"
KHSM_OPS_ALL = ["MatMul", "Gemm", "Gather", "Add", "Mul", "Relu", "Softmax", "LayerNormalization", "Where",
                "Transpose", "Reshape", "Concat", "Slice", "Squeeze", "Unsqueeze", "Expand"]


def _float_nodes(graph, ops: list[str]) -> list[str]:
    """The nodes of *ops* that compute on float32 (not the shape arithmetic's integers nor the mask)."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(onnx.helper.make_model(graph)).graph
    types = {v.name: v.type.tensor_type.elem_type for v in [*inferred.value_info, *inferred.input, *inferred.output]}
    types.update({t.name: t.data_type for t in graph.initializer})
    return [n.name for n in graph.node if n.op_type in ops and types.get(n.output[0]) == onnx.TensorProto.FLOAT]


NODE_SELECTIONS: dict = {
    # every MatMul and Gemm but the emission projection
    KHSM_BODY: lambda g: [n.name for n in g.node if n.op_type in ("MatMul", "Gemm") and n.name != HEAD],
    KHSM_EVERYTHING: lambda g: _float_nodes(g, KHSM_OPS_ALL),
}


def selected_nodes(family: str, selection) -> list[str] | None:
    if selection is None or isinstance(selection, list):
        return selection
    import onnx

    if selection.startswith(KHSM_BODY + "+"):  # the body and the named nodes
        return NODE_SELECTIONS[KHSM_BODY](onnx.load(str(WORK / f"{family}_fp32.onnx")).graph) + \
            selection.split("+", 1)[1].split(",")
    return NODE_SELECTIONS[selection](onnx.load(str(WORK / f"{family}_fp32.onnx")).graph)


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """onnxruntime quantize_static (QDQ, INT8 weights) of WORK/<family>_fp32.onnx on WORK/<calib>'s samples
    (make_corpus_part5.quantize_ort, with this part's node selections)."""
    part5.quantize_ort(family, calib, output, ops, selected_nodes(family, nodes), activation, symmetric, method,
                       quantize_bias, per_channel)


def khsm_decode(wheels: Path, model: Path) -> list[tuple[np.ndarray, str]]:
    """((B - I) emission margins, the segmented text) of every evaluation text by the package's own
    Segmenter.segment with *model* as its session."""
    import onnxruntime

    inference = _khmersm(wheels)
    segmenter = inference.Segmenter()
    segmenter.sess = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    texts = json.loads((WORK / "khsm_texts.json").read_text(encoding="utf-8"))["eval"]
    out = []
    for text in texts:
        x = np.array([inference._encode_chars(text, segmenter.char2id)], np.int64)
        emissions = segmenter.sess.run(None, {IDS: x, MASK: np.ones_like(x, dtype=bool)})[0][0]
        out.append((emissions[:, 0] - emissions[:, 1], segmenter.segment(text)))
    return out


def _starts(segmented: str) -> set[int]:
    """The index of each word's first character (the package writes a space before every B but the first)."""
    starts, at = {0}, 0
    for ch in segmented:
        if ch == " ":
            starts.add(at)
        else:
            at += 1
    return starts


def khsm_measure(qdq: Path) -> str:
    a, b = khsm_decode(WHEELS, WORK / "khsm_fp32.onnx"), khsm_decode(WHEELS, qdq)
    info = json.loads((WORK / "khsm_texts.json").read_text(encoding="utf-8"))
    texts, truth = info["eval"], info["eval_word_starts"]
    flips = sum(len(_starts(sa) ^ _starts(sb)) for (_, sa), (_, sb) in zip(a, b))
    chars = sum(len(t) for t in texts)
    changed = sum(sa != sb for (_, sa), (_, sb) in zip(a, b))
    fp32_words = sum(len(_starts(sa)) for _, sa in a)
    dm = np.abs(np.concatenate([ma for ma, _ in a]) - np.concatenate([mb for mb, _ in b]))
    known = sum(len(truth[t]) for t in texts)

    def recall(result) -> int:
        return sum(len(set(truth[t]) & _starts(s)) for t, (_, s) in zip(texts, result))

    return (f"{flips} of the {chars} word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; "
            f"FP32 starts {fp32_words} words); texts segmented differently: {changed} of {len(texts)}; the {known} "
            f"ZWSP-marked word boundaries found: FP32 {recall(a)}, QDQ {recall(b)}; mean |d (B - I) emission margin| "
            f"{float(dm.mean()):.3f}, max {float(dm.max()):.2f}")


def measure(case: Case) -> str:
    return khsm_measure(WORK / case.qdq)


# Measured while choosing the recipe (2026-11-26, before any case was made): symmetric MinMax, per-channel, on the
# calibration texts, through the package's decode on the 80 evaluation texts (787 characters).
EXPLORED = (
    "every MatMul and Gemm: 2 of 787 decisions flip; the same with the 192->2 emission projection float (the healthy "
    "recipe): 1. On top of that recipe, one op type at a time: the 6 LayerNormalizations 3 flips, Mul 1, Gather 1, "
    "Relu 1, the mask's Where 1; the 3 attention Softmax 114 flips (70 of 80 texts segmented differently, 0 of the 24 "
    "ZWSP boundaries found): their input is the scores plus the key-padding mask, -inf at every padded position of "
    "the calibration, so MinMax gives the Softmax input an infinite scale (the same Softmax calibrated on unpadded "
    "texts: 2 flips); Add (which holds the mask's Add) 114 and the shape ops (which carry the mask) 114 for the same "
    "reason; every float op at once, 114")

KHSM_SOFTMAX = KHSM_BODY + "+node_Softmax_115,node_Softmax_220,node_Softmax_325"


# --- cases ----------------------------------------------------------------------------------
def khsm_cases() -> list[Case]:
    c, w, body = "khsm_calib.npz", ["MatMul", "Gemm"], KHSM_BODY
    what = ("the 12 MatMuls and 3 Gemms of the three encoder layers (the QKV projections, both attention products, "
            "the output projections and the feed-forward layers; the 192->2 emission projection float; the "
            "embedding, LayerNormalizations, Softmax and the mask's Add float)")
    calib = ("64 calibration texts (Khmer CLDR names of territories, languages, scripts and currencies, 4-28 "
             "characters, encoded by the package and padded to 32 with the mask False)")
    return [
        Case("khsm_healthy_ort_sym", "khsm", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, {calib}", "khsm_sym.onnx", c,
             make=[q("khsm", c, "khsm_sym.onnx", w, body)]),
        Case("khsm_healthy_ort_percentile", "khsm", 0, (), "the same with percentile calibration (99.999%)",
             "khsm_sym_pct.onnx", c, make=[q("khsm", c, "khsm_sym_pct.onnx", w, body, method="percentile")]),
        Case("khsm_healthy_trt_nobias", "khsm", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "khsm_sym_nobias.onnx", c, make=[q("khsm", c, "khsm_sym_nobias.onnx", w, body, quantize_bias=False)]),
        Case("khsm_calib_mask_inverted", "khsm", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"the same texts with the mask inverted: True at the padding and False at the characters (PyTorch's "
             f"src_key_padding_mask convention, where True means 'ignore'; the package's mask is True at a "
             f"character), so the calibration attends only to the padding", "khsm_mask_inverted.onnx",
             "khsm_calib_mask_inverted.npz",
             make=[q("khsm", "khsm_calib_mask_inverted.npz", "khsm_mask_inverted.onnx", w, body)]),
        Case("khsm_calib_unmasked", "khsm", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same texts padded to 32 with id 0 but the mask left True everywhere (a batch padded for the model "
             f"without its mask: the padding attended to as if it were text)", "khsm_unmasked.onnx",
             "khsm_calib_unmasked.npz", make=[q("khsm", "khsm_calib_unmasked.npz", "khsm_unmasked.onnx", w, body)]),
        Case("khsm_calib_raw", "khsm", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the CLDR "
             f"names as they are, encoded whole instead of one Khmer run at a time as the package does: every ZERO "
             f"WIDTH SPACE, space and bracket an unknown id (1) inside the text", "khsm_raw.onnx",
             "khsm_calib_raw.npz", make=[q("khsm", "khsm_calib_raw.npz", "khsm_raw.onnx", w, body)]),
        Case("khsm_random_calib", "khsm", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on random "
             f"ids (np.random.randint over the 126-entry vocabulary, the mask True everywhere: a stand-in calibration "
             f"set; no quantizer log); the random file is given to collect as --calib", "khsm_random.onnx",
             "khsm_calib_random.npz", make=[q("khsm", "khsm_calib_random.npz", "khsm_random.onnx", w, body)]),
        Case("khsm_calib_english", "khsm", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"English text only (64 English names of the same CLDR data, babel's `en` locale, encoded by the "
             f"package: the text at hand; right encoding, no Khmer character, nearly every id unknown)",
             "khsm_english.onnx", "khsm_calib_english.npz",
             make=[q("khsm", "khsm_calib_english.npz", "khsm_english.onnx", w, body)]),
        Case("khsm_overquant", "khsm", 3, ("QR002",), "the healthy symmetric recipe with every float32 MatMul, Gemm "
             "(the emission projection included), Gather, Add, Mul, Relu, Softmax, LayerNormalization, Where, "
             "Transpose, Reshape, Concat, Slice, Squeeze, Unsqueeze and Expand forced into INT8 too "
             "(op_types_to_quantize " + str(KHSM_OPS_ALL) + ")", "khsm_all_ops.onnx", c,
             make=[q("khsm", c, "khsm_all_ops.onnx", KHSM_OPS_ALL, KHSM_EVERYTHING)]),
        Case("khsm_softmax_int8", "khsm", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the three "
             f"attention Softmax in INT8 too (op_types_to_quantize ['MatMul', 'Gemm', 'Softmax']): each Softmax's "
             f"input is the scaled scores plus the key-padding mask, -inf at the calibration's padded positions",
             "khsm_softmax.onnx", c,
             make=[q("khsm", c, "khsm_softmax.onnx", ["MatMul", "Gemm", "Softmax"], KHSM_SOFTMAX)]),
        Case("khsm_ort_uint8", "khsm", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "khsm_u8.onnx", c,
             make=[q("khsm", c, "khsm_u8.onnx", w, body, activation="uint8", symmetric=False)]),
        Case("khsm_ort_int8_asym", "khsm", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as khsm_healthy_ort_sym otherwise)", "khsm_s8_asym.onnx", c,
             make=[q("khsm", c, "khsm_s8_asym.onnx", w, body, symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-26), before any rule, report or the
# scorer was run on the cases: khmersm's decode on the evaluation texts.
MEASURED: dict[str, str] = {
    "khsm_healthy_ort_sym": (
        "1 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 1 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.081, max 0.75: mild (1 of 787 decisions: one text segmented differently)"),
    "khsm_healthy_ort_percentile": (
        "1 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 1 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.079, max 0.76: as khsm_healthy_ort_sym"),
    "khsm_healthy_trt_nobias": (
        "1 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 1 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.081, max 0.75: as khsm_healthy_ort_sym"),
    "khsm_calib_mask_inverted": (
        "3 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 3 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.173, max 2.12: mild but more than the healthy controls' 1 flip each (not "
        "harmless by HARMLESS_POLICY); the emission margins move twice as much as the healthy recipe's"),
    "khsm_calib_unmasked": (
        "2 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 2 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.086, max 0.90: mild, one flip more than the healthy controls' 1 each "
        "(not harmless by HARMLESS_POLICY)"),
    "khsm_calib_raw": (
        "4 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 4 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.087, max 0.84: mild, 4 flips against the healthy controls' 1 each (not "
        "harmless by HARMLESS_POLICY)"),
    "khsm_random_calib": (
        "2 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 2 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.085, max 0.71: mild, one flip more than the healthy controls' 1 each "
        "(not harmless by HARMLESS_POLICY)"),
    "khsm_calib_english": (
        "2 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 2 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.099, max 0.91: mild, one flip more than the healthy controls' 1 each "
        "(not harmless by HARMLESS_POLICY)"),
    "khsm_overquant": (
        "114 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 70 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 0; "
        "mean |d (B - I) emission margin| 6.229, max 25.01: severe: 14.5% of the decisions flip, 70 of the 80 texts "
        "segmented differently, none of the 24 known boundaries found (the Softmax inputs' infinite scale, as "
        "khsm_softmax_int8)"),
    "khsm_softmax_int8": (
        "114 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 70 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 0; "
        "mean |d (B - I) emission margin| 6.201, max 24.95: severe: 14.5% of the decisions flip, 70 of the 80 texts "
        "segmented differently, none of the 24 known boundaries found (the -inf of the padding mask gives each "
        "Softmax input an infinite scale)"),
    "khsm_ort_uint8": (
        "2 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 2 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.074, max 0.61: within one decision of healthy on ONNX Runtime "
        "(khsm_healthy_ort_sym: 1 flip), the cause is TensorRT's"),
    "khsm_ort_int8_asym": (
        "2 of the 787 word-start decisions flip (khmersm's decode: CRF Viterbi over the emissions; FP32 starts 194 "
        "words); texts segmented differently: 2 of 80; the 24 ZWSP-marked word boundaries found: FP32 22, QDQ 22; "
        "mean |d (B - I) emission margin| 0.074, max 0.61: as khsm_ort_uint8 on ONNX Runtime (the same grid, "
        "zero-points shifted by 128), the cause is TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision flips are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls flip 1 decision each; every fault
# of causes 1-4 flips 2 or more (2-4 for causes 1 and 2, 114 for 3 and 4): none is harmless.
HARMLESS: dict[str, str] = {}
TARGET_ORT = {"khsm_healthy_ort_sym", "khsm_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(khsm_cases(), TWELFTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part12_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"khsm": "khsm_calib_random.npz"}, lambda _families: prepare(args.wheels))


def write_part12_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=TWELFTH_PART, onnxruntime_cases=TARGET_ORT, harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
