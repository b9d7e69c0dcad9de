"""The seventeenth sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part17.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex17]

--wheels is a folder holding the unpacked package (`pip download --no-deps g2p-id-py==0.4.2`, a py3-none-any wheel
whose `g2p_id/models/bert/` holds its ONNX model, its token ids and its config, and whose `g2p_id/resources/` holds
its Indonesian pronunciation lexicon; unzipped so that /tmp/ex17/g2pid/g2p_id/ is the package). The model, its
tokenisation, its decoding and the words (the package's own lexicon_id.tsv, 27,578 Indonesian words with their IPA
pronunciation) come from g2p-id-py; nothing comes from a hub. The package imports nltk and num2words at import time
for its sentence pipeline (and nltk downloads wordnet there): neither is used by the word path measured here, so
both are stubbed (_package). One family only. Every label carries "added_for": SEVENTEENTH_PART
(scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless --show-sealed
(STILL_SEALED). The fault of each case was chosen from what users of this model get wrong, before anything was
measured; the labels were then written from how each case was made and from what the quantization did to the task's
decisions (--measure: this script's own ONNX Runtime runs through the package's own BERT.predict and
G2p._rule_based_g2p), before any rule, report or the scorer was run on the cases; the "harmless" marks
(scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were collected with the
collector of commit e602fb0 (a clean worktree of it, this script run with `PYTHONPATH=<worktree>`, the imported
qdqreport asserted to be the worktree's; return codes only read), and the part was scored once, "before" the next
round of rule changes, on the rules of e602fb0 in that worktree (totals only).

New family (a new task: grapheme-to-phoneme disambiguation, which of an Indonesian word's letters 'e' is read [e] and
which the schwa [ə]):
- gid: g2p-id-py 0.4.2's `g2p_id/models/bert/bert_mlm.onnx` (1.3 MB, opset 14, a Keras model through tf2onnx 1.9.3),
  the model its G2p uses for every word not in its lexicon: a character-level masked-LM BERT, two encoder layers of
  width 128 (8 heads of 16: the Q, K and V projections as Gemms, the attention products as MatMuls, the output
  projection an Einsum in the first layer and a Gemm in the second; a 128-128 ReLU feed-forward as two MatMuls;
  LayerNormalization as GlobalAveragePools) and the MLM head (a 128->32 MatMul and a Softmax). Input `input_1`
  [batch, 32] int64: the word's characters as ids (token2id.json), each 'e' replaced by the [mask] id, 'x' written
  'ks', padded with id 0 after the word; output `mlm_cls` [batch, 32, 32]: per position the probabilities of the 32
  ids. The package's decision (BERT.predict, then G2p._rule_based_g2p for an out-of-lexicon word): each masked 'e'
  becomes the argmax id's letter ('e' or 'ə'), and the word is spelt out in IPA. The FP32 model is the package's file
  through onnxruntime's quant_pre_process (outputs identical, max |d| below 1e-5).
  Words: the lexicon's words of 3 or more letters that hold an 'e' and whose letters are all in the model's
  vocabulary (18,020). Evaluation: 256 of them drawn with a fixed seed (a bundle sample is one word as the package
  feeds it); calibration: 128 others drawn the same way. The decision measured (--measure): the package's own
  BERT.predict with the FP32 or the QDQ model as its session and G2p._rule_based_g2p on every evaluation word: the
  words whose pronunciation is another than FP32's, and how many words' e/ə readings match the lexicon's.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

SEVENTEENTH_PART = "sealed part 17 (2026-11-27)"  # scripts/corpus_score.py's SEVENTEENTH_PART
MODELS = {"gid": "g2p-id BERT e/schwa disambiguator (g2p-id-py 0.4.2's bert_mlm.onnx: a character-level masked-LM "
                 "BERT, two encoder layers of width 128, over an Indonesian word's 32 character ids with each 'e' "
                 "masked; the decision: BERT.predict's e or schwa for each 'e', spelt in IPA by G2p._rule_based_g2p, "
                 "as the package pronounces a word not in its lexicon)"}
PACKAGE = "g2pid"  # under --wheels: <wheels>/g2pid/g2p_id is the package
MODEL = "g2pid/g2p_id/models/bert/bert_mlm.onnx"
LEXICON = "g2pid/g2p_id/resources/lexicon_id.tsv"
INPUT = "input_1"
EVAL_WORDS, CALIB_WORDS = 256, 128
SEED = 20261127

WHEELS = Path("/tmp/ex17")  # --wheels (main sets it)


def _package(wheels: Path):
    """The package's g2p_id module with nltk and num2words stubbed (imported by its sentence pipeline only)."""
    for name in ("nltk", "nltk.tag", "nltk.tag.perceptron", "nltk.tokenize", "num2words"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["nltk"].download = lambda *_a, **_k: False
    sys.modules["nltk.tag.perceptron"].PerceptronTagger = object
    sys.modules["nltk.tokenize"].TweetTokenizer = object
    sys.modules["num2words"].num2words = None
    if str(wheels / PACKAGE) not in sys.path:
        sys.path.insert(0, str(wheels / PACKAGE))
    import g2p_id
    import g2p_id.g2p  # noqa: F401

    return g2p_id


# --- the FP32 model ---------------------------------------------------------------------------
def gid_fp32(wheels: Path) -> None:
    """The package's BERT through quant_pre_process: WORK/gid_fp32.onnx (module docstring)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / MODEL), str(WORK / "gid_fp32.onnx"), skip_symbolic_shape=True)
    x = {INPUT: np.random.default_rng(0).integers(0, 31, (4, 32)).astype(np.int64)}
    a, b = _run(wheels / MODEL, x), _run(WORK / "gid_fp32.onnx", x)
    assert np.abs(a - b).max() < 1e-5, np.abs(a - b).max()


def _run(model: Path, feed: dict) -> np.ndarray:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return session.run(None, feed)[0]


# --- words ----------------------------------------------------------------------------------------
def lexicon(wheels: Path) -> list[tuple[str, str]]:
    """The lexicon's (word, IPA) pairs of 3 or more letters with an 'e', every letter in the model's vocabulary."""
    import json

    token2id = json.loads((wheels / MODEL).with_name("token2id.json").read_text(encoding="utf-8"))
    pairs = [line.rstrip("\n").split("\t") for line in (wheels / LEXICON).read_text(encoding="utf-8").splitlines()]
    return [(w, p) for w, p in pairs
            if len(w) >= 3 and "e" in w and len(w.replace("x", "ks")) <= 32 and all(c in token2id
                                                                                    for c in w.replace("x", "ks"))]


def words(wheels: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(evaluation words, calibration words): disjoint seeded draws from lexicon()."""
    pairs = lexicon(wheels)
    order = np.random.default_rng(SEED).permutation(len(pairs))
    return [pairs[i] for i in order[:EVAL_WORDS]], [pairs[i] for i in order[EVAL_WORDS:EVAL_WORDS + CALIB_WORDS]]


def ids(word: str, token2id: dict, mask: bool = True, pre_pad: bool = False) -> np.ndarray:
    """BERT.predict's input for *word* (x -> ks, each 'e' the [mask] id, padded with id 0 after the word); *mask*
    False keeps the letter 'e' (the word tokenised as spelt); *pre_pad* pads before the word (Keras pad_sequences'
    default padding='pre')."""
    word = word.replace("x", "ks")
    tokens = [token2id["[mask]"] if c == "e" and mask else token2id[c] for c in word]
    pad = [0] * (32 - len(tokens))
    return np.array(pad + tokens if pre_pad else tokens + pad, np.int64)


def answered(word: str, ipa: str) -> str:
    """*word* with each 'e' replaced by the lexicon's reading of it ('e' or 'ə', in order), where the counts agree."""
    readings = [c for c in ipa if c in "eə"]
    if len(readings) != word.count("e"):
        return word
    it = iter(readings)
    return "".join(next(it) if c == "e" else c for c in word)


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    g2p_id = _package(wheels)
    token2id = g2p_id.BERT().token2id
    gid_fp32(wheels)
    evaluation, calibration = words(wheels)
    stack = lambda rows: {INPUT: np.stack(rows)}  # noqa: E731
    np.savez(WORK / "gid_eval.npz", **stack([ids(w, token2id) for w, _ in evaluation]))
    np.savez(WORK / "gid_calib.npz", **stack([ids(w, token2id) for w, _ in calibration]))
    # the word tokenised as spelt: no [mask], every 'e' its letter's id
    np.savez(WORK / "gid_calib_unmasked.npz", **stack([ids(w, token2id, mask=False) for w, _ in calibration]))
    # padded before the word (Keras pad_sequences' default padding='pre')
    np.savez(WORK / "gid_calib_prepad.npz", **stack([ids(w, token2id, pre_pad=True) for w, _ in calibration]))
    # the MLM's labels as its inputs: each 'e' already the lexicon's 'e' or 'ə'
    np.savez(WORK / "gid_calib_answers.npz",
             **stack([ids(answered(w, p), token2id, mask=False) for w, p in calibration]))
    # the head of the file: the lexicon's first 128 such words, in its alphabetical order ('-belas' ... 'ameba')
    np.savez(WORK / "gid_calib_head.npz", **stack([ids(w, token2id) for w, _ in lexicon(wheels)[:CALIB_WORDS]]))
    # the dummy-input habit: uniform random ids of the vocabulary (np.random.randint(0, 31))
    noise = np.random.default_rng(20261131)
    np.savez(WORK / "gid_calib_random.npz", **{INPUT: noise.integers(0, 31, (CALIB_WORDS, 32)).astype(np.int64)})


# --- quantizer and measurement ----------------------------------------------------------------
q = part5.q  # ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias)
GID_OPS_ALL = ["MatMul", "Gemm", "Einsum", "Add", "Mul", "Sub", "Relu", "Softmax", "GlobalAveragePool", "Transpose",
               "Reshape", "Squeeze", "Unsqueeze", "Concat", "Gather", "Max", "Sqrt", "Reciprocal"]
HEAD = "StatefulPartitionedCall/masked_bert_model/mlm_cls/Tensordot/MatMul"  # the 128->32 MLM head


def gid_nodes(selection: str) -> list[str] | None:
    """The encoder's MatMuls and Gemms ("body": the MLM head float) or with the head ("body+head")."""
    import onnx

    graph = onnx.load(str(WORK / "gid_fp32.onnx")).graph
    body = [n.name for n in graph.node if n.op_type in ("MatMul", "Gemm") and n.name != HEAD]
    return {"body": body, "body+head": [*body, HEAD]}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool) -> None:
    """onnxruntime quantize_static (QDQ, INT8 weights, per-channel) of WORK/<family>_fp32.onnx on WORK/<calib>'s
    samples (make_corpus_part5.quantize_ort: one feed per word); *nodes* a gid_nodes selection or None (every node of
    the op types)."""
    part5.quantize_ort(family, calib, output, ops, gid_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias)


_DECIDED: dict = {}


def gid_decide(wheels: Path, model: Path) -> list[str]:
    """The package's pronunciation of every evaluation word, as for a word not in its lexicon: BERT.predict with
    *model* as its session, then G2p._rule_based_g2p."""
    import onnxruntime

    key = str(model)
    if key not in _DECIDED:
        g2p_id = _package(wheels)
        bert = g2p_id.BERT()
        bert.model = types.SimpleNamespace(run=onnxruntime.InferenceSession(
            str(model), providers=["CPUExecutionProvider"]).run)
        _DECIDED[key] = [g2p_id.g2p.G2p._rule_based_g2p(None, bert.predict(w)) for w, _ in words(wheels)[0]]
    return _DECIDED[key]


def gid_measure(qdq: Path) -> str:
    a, b = gid_decide(WHEELS, WORK / "gid_fp32.onnx"), gid_decide(WHEELS, qdq)
    truth = [[c for c in p if c in "eə"] for _, p in words(WHEELS)[0]]
    right = lambda prons: sum([c for c in p if c in "eə"] == t for p, t in zip(prons, truth))  # noqa: E731
    changed = sum(x != y for x, y in zip(a, b))
    schwas = lambda prons: sum(p.count("ə") for p in prons)  # noqa: E731
    return (f"{changed} of the {len(a)} evaluation words get another pronunciation than FP32's (the package's "
            f"BERT.predict and G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the "
            f"lexicon's: FP32 {right(a)}, QDQ {right(b)} of {len(a)} words; schwas FP32 {schwas(a)}, QDQ {schwas(b)}")


def measure(case: Case) -> str:
    return gid_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def gid_cases() -> list[Case]:
    c, w = "gid_calib.npz", ["MatMul", "Gemm"]
    what = ("the 2 encoder layers' 7 Gemms (the Q, K and V projections, and the second layer's attention output "
            "projection) and 8 MatMuls (the 4 attention products and the 4 feed-forward layers) (the MLM head's "
            "128->32 MatMul float; the first layer's attention output projection (an Einsum), the "
            "LayerNormalizations, the Softmaxes, the residual Adds and the embeddings float)")
    calib = (f"{CALIB_WORDS} calibration words (drawn from the package's lexicon_id.tsv, disjoint from the "
             f"evaluation's; as the package feeds them: x -> ks, each 'e' masked, padded after the word)")

    def sym(calib_file: str, output: str) -> list:
        return [q("gid", calib_file, output, w, "body")]

    return [
        Case("gid_healthy_ort_sym", "gid", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "gid_sym.onnx", c, make=sym(c, "gid_sym.onnx")),
        Case("gid_healthy_ort_percentile", "gid", 0, (), "the same with percentile calibration (99.999%)",
             "gid_sym_pct.onnx", c, make=[q("gid", c, "gid_sym_pct.onnx", w, "body", method="percentile")]),
        Case("gid_healthy_trt_nobias", "gid", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "gid_sym_nobias.onnx", c, make=[q("gid", c, "gid_sym_nobias.onnx", w, "body", quantize_bias=False)]),
        Case("gid_calib_unmasked", "gid", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same words tokenised as spelt: every 'e' its letter's id, never the [mask] id (the package's masking "
             f"step left out of the calibration reader)", "gid_unmasked.onnx", "gid_calib_unmasked.npz",
             make=sym("gid_calib_unmasked.npz", "gid_unmasked.onnx")),
        Case("gid_calib_prepad", "gid", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"words masked as the package does but padded before the word (Keras pad_sequences' default "
             f"padding='pre'; the package pads after it)", "gid_prepad.onnx", "gid_calib_prepad.npz",
             make=sym("gid_calib_prepad.npz", "gid_prepad.onnx")),
        Case("gid_calib_answers", "gid", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same words with their answers in place of the masks: each 'e' already the lexicon's e or schwa id "
             f"(the masked LM's labels fed as its inputs; the 19 of the 128 words whose lexicon readings do not "
             f"line up with their letters 'e' tokenised as spelt)", "gid_answers.onnx", "gid_calib_answers.npz",
             make=sym("gid_calib_answers.npz", "gid_answers.onnx")),
        Case("gid_random_calib", "gid", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"uniform random ids of the 31-id vocabulary of the input's shape (np.random.randint: a stand-in "
             f"calibration set; no quantizer log); the random file is given to collect as --calib",
             "gid_random.onnx", "gid_calib_random.npz", make=sym("gid_calib_random.npz", "gid_random.onnx")),
        Case("gid_calib_head", "gid", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"lexicon's first {CALIB_WORDS} such words in the file's alphabetical order (a few suffix entries such as "
             f"'-belas', then words from 'ab' to 'am'), prepared as the package does: real words, the right "
             f"tokenisation, an unrepresentative slice", "gid_head.onnx", "gid_calib_head.npz",
             make=sym("gid_calib_head.npz", "gid_head.onnx")),
        Case("gid_overquant", "gid", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too, the MLM head, the Softmaxes, the LayerNormalizations' pools, the "
             "residual Adds, the Transposes and Reshapes and the embeddings' Gathers among them (op_types_to_quantize "
             + str(GID_OPS_ALL) + ")", "gid_all_ops.onnx", c, make=[q("gid", c, "gid_all_ops.onnx", GID_OPS_ALL)]),
        Case("gid_head_int8", "gid", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the head that "
             f"decides in INT8 too: the MLM head's 128->32 MatMul, whose argmax picks e or schwa",
             "gid_head_int8.onnx", c, make=[q("gid", c, "gid_head_int8.onnx", w, "body+head")]),
        Case("gid_ort_uint8", "gid", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "gid_u8.onnx", c,
             make=[q("gid", c, "gid_u8.onnx", w, "body", activation="uint8", symmetric=False)]),
        Case("gid_ort_int8_asym", "gid", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as gid_healthy_ort_sym otherwise)", "gid_s8_asym.onnx", c,
             make=[q("gid", c, "gid_s8_asym.onnx", w, "body", symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's BERT.predict and G2p._rule_based_g2p on the evaluation words.
MEASURED: dict[str, str] = {
    'gid_healthy_ort_sym': (
        "5 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 236 "
        'of 256 words; schwas FP32 293, QDQ 292: mild: INT8 of the encoder moves 5 close calls'),
    'gid_healthy_ort_percentile': (
        "4 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 237 "
        'of 256 words; schwas FP32 293, QDQ 295: as gid_healthy_ort_sym'),
    'gid_healthy_trt_nobias': (
        "5 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 236 "
        'of 256 words; schwas FP32 293, QDQ 292: as gid_healthy_ort_sym (the same model: no quantized Gemm or '
        'MatMul has a bias input, tf2onnx adds the biases apart, so QuantizeBias=False changes nothing; judged '
        'for TensorRT)'),
    'gid_calib_unmasked': (
        "6 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 235 "
        "of 256 words; schwas FP32 293, QDQ 293: 6 words against the healthy controls' 5 at most (not harmless by "
        'HARMLESS_POLICY)'),
    'gid_calib_prepad': (
        "5 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 236 "
        "of 256 words; schwas FP32 293, QDQ 294: as healthy: 5 words, no more than the healthy controls' 5 (harmless "
        'by HARMLESS_POLICY)'),
    'gid_calib_answers': (
        "6 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 235 "
        "of 256 words; schwas FP32 293, QDQ 293: 6 words against the healthy controls' 5 at most (not harmless by "
        'HARMLESS_POLICY)'),
    'gid_random_calib': (
        "2 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 237 "
        "of 256 words; schwas FP32 293, QDQ 295: as healthy: 2 words, fewer than the healthy controls' 5 (harmless by "
        'HARMLESS_POLICY)'),
    'gid_calib_head': (
        "3 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 238 "
        "of 256 words; schwas FP32 293, QDQ 292: as healthy: 3 words, fewer than the healthy controls' 5 (harmless by "
        'HARMLESS_POLICY)'),
    'gid_overquant': (
        "13 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 234 "
        "of 256 words; schwas FP32 293, QDQ 296: 13 words against the healthy controls' 5 at most (not harmless by "
        'HARMLESS_POLICY)'),
    'gid_head_int8': (
        "5 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 236 "
        "of 256 words; schwas FP32 293, QDQ 292: as healthy: 5 words, no more than the healthy controls' 5 (harmless "
        'by HARMLESS_POLICY)'),
    'gid_ort_uint8': (
        "4 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 239 "
        'of 256 words; schwas FP32 293, QDQ 291: as the healthy controls on ONNX Runtime (4 words), the cause is '
        "TensorRT's"),
    'gid_ort_int8_asym': (
        "4 of the 256 evaluation words get another pronunciation than FP32's (the package's BERT.predict and "
        "G2p._rule_based_g2p: each masked 'e' read e or schwa); e/schwa readings as the lexicon's: FP32 237, QDQ 239 "
        'of 256 words; schwas FP32 293, QDQ 291: as the healthy controls on ONNX Runtime (4 words), the cause is '
        "TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 5, 4 and 5 of the 256
# words; gid_calib_prepad (5), gid_head_int8 (5), gid_calib_head (3) and gid_random_calib (2) change no more: harmless.
# gid_overquant (13), gid_calib_unmasked (6) and gid_calib_answers (6) are not.
_MARK = ("the family's healthy controls change 5, 4 and 5 (marked 2026-11-27 by the maker's measurement, before any "
         "rule ran)")
HARMLESS: dict[str, str] = {
    "gid_calib_prepad": f"5 of the 256 words get another pronunciation; {_MARK}",
    "gid_head_int8": f"5 of the 256 words get another pronunciation; {_MARK}",
    "gid_calib_head": f"3 of the 256 words get another pronunciation; {_MARK}",
    "gid_random_calib": f"2 of the 256 words get another pronunciation; {_MARK}",
}
TARGET_ORT = {"gid_healthy_ort_sym", "gid_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(gid_cases(), SEVENTEENTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part17_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"gid": "gid_calib_random.npz"}, lambda _families: prepare(args.wheels))


def write_part17_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=SEVENTEENTH_PART, onnxruntime_cases=TARGET_ORT, harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
