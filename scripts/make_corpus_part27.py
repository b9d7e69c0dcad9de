"""The twenty-seventh sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules
on it.

    python scripts/make_corpus_part27.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex27/wh]

--wheels is a folder holding the packages (no network at run time): <wheels>/sz is slovorez 0.1.0 (`pip download
--no-deps slovorez==0.1.0`, then `pip install --no-deps --target <wheels>/sz slovorez-0.1.0-cp311-*.whl`: its wheel
ships a Russian morpheme segmenter, slovorez/models/slovorez-test/ (slovorez-test.onnx, 1.4 MB, tf2onnx, with its
config.json: the character vocabulary and the 27 BIES labels), beside the package's own preprocessing and decision:
Slovorez.predict (the C++ tokenizer slovorezCXX.FTTokenizer keeps the Russian words of the text, lowercased, in
batches; SlovorezTokenizer.encode_batch numbers each word's characters by the vocabulary (1 the UNK id) and pads
the batch after the words with 0 to its longest word; the network's per-character label probabilities read by argmax
and merged into morphemes, prefix, root, suffix, ending, postfix, by decode_predictions_detail, the package's
default (no Viterbi)), and the compiled tokenizer the package needs, built for CPython 3.11); <wheels>/fk is Faker
40.54.0 (`pip download --no-deps faker==40.54.0`, unzipped: its ru_RU and en_US providers, the texts the samples
are drawn from). Nothing comes from a hub. One family only.
No morpheme-segmentation data set ships in any package here, so the texts are drawn from Faker's ru_RU providers, and
said so: TEXTS texts (TEXT_SEED), each one of four kinds: a person's name with an address, a lorem sentence of ten
words (Faker's ru_RU lorem: a list of real Russian words), a lorem paragraph of at most 160 characters, or a job, a
company and a city; what each case is measured against is the FP32 model's own decision. Every label carries
"added_for": TWENTY_SEVENTH_PART (scripts/corpus_score.py), so the scorer reports the batch apart and prints only its
totals unless --show-sealed (STILL_SEALED). The recipe and the faults were chosen from what users of this model get
wrong after a screening of the candidate (the healthy recipe's and each fault's decision changes measured before any
case was made, /tmp notes of the maker); the labels were then written from how each case was made and from what the
quantization did to the task's decisions (--measure: this script's own ONNX Runtime runs through the package's own
Slovorez.predict), before any rule, report or the scorer was run on the cases; the "harmless" marks
(scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were collected with the
collector of commit d128fdf (a clean worktree of it, this script run with `PYTHONPATH=<worktree>` through runpy by a
wrapper that imported qdqreport and qdqreport.cli first and asserted both to be the worktree's, before and after the
run: run_part puts this checkout first on sys.path; return codes only read), and the part was scored "before" the
next round of rule changes, on the rules of d128fdf in that worktree (totals only).

New family and a new task (Russian morpheme segmentation: every character of a word labelled with its morpheme's
type and place, B/I/E/S of prefix, root, suffix, ending, postfix, link or hyphen; the corpus' first character CNN
over words, tf2onnx's Conv1d as Unsqueeze, Conv and Squeeze with the bias a separate Add):
- slz: slovorez 0.1.0's `slovorez/models/slovorez-test/slovorez-test.onnx` (685,723 parameters, opset 17): a
  character embedding (49 x 256), three width-5 Conv1d (256 -> 192 -> 192 -> 192, each a Conv, its bias Add and a
  Relu), two 1 x 1 Conv1d (192 -> 192 -> 96) and the 1 x 1 Conv1d head over the 27 labels with its Softmax. Input
  `input_layer` [words, characters] int32 (the package's encode_batch), output `output_0` [words, characters, 27]
  (probabilities). The FP32 model is the package's file made float32 (exported from Keras mixed precision: float16
  weights and output; the package's decisions on the evaluation texts are the same), then onnxruntime's
  quant_pre_process. The package's
  decision: Slovorez.predict(text) with its defaults, each Russian word's morphemes (their text and type). Texts:
  TEXTS drawn, interleaved: evaluation 64 (629 words), calibration the other 32 (292 words, each a row as the
  package encodes it, one batch padded to the longest word). The decision measured (--measure): the words of the
  evaluation texts whose morphemes differ from FP32's, and the texts with any such word. The package's C++ tokenizer
  is not deterministic across calls (in one of four passes over the evaluation texts a hyphenated word came out
  otherwise), so the words of each evaluation text are taken once, at preparation, and each model's decision is
  predict's own steps on them (encode_batch, the session, decode_predictions_detail). The bundles hold the words
  of the first EVAL_BUNDLED evaluation texts (one batch as encode_batch makes it).

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe takes the
three width-5 Convs (91% of the network's multiply-adds) and leaves the three 1 x 1 Convs float: measured in the
screening, every Conv but the head in INT8 changed 95 of the 629 words and the first 1 x 1 Conv alone 84, the
three width-5 Convs 17. The healthy control made for TensorRT is quantize_static with TensorRT-compatible settings
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

TWENTY_SEVENTH_PART = "sealed part 27 (2026-11-27)"  # scripts/corpus_score.py's TWENTY_SEVENTH_PART
MODELS = {"slz": "Slovorez Russian morpheme segmenter (slovorez 0.1.0's slovorez-test.onnx: a character embedding, "
                 "three width-5 Conv1d and three 1 x 1 Conv1d, the last the head over 27 BIES morpheme labels with its "
                 "Softmax, for every character of a word; the decision: each word's morphemes out of the package's "
                 "Slovorez.predict)"}
SOURCE = "sz/slovorez/models/slovorez-test"
INPUT = "input_layer"
TEXTS = 96  # interleaved: evaluation two of every three (64), calibration the third (32)
EVAL_BUNDLED = 6  # what collect's --inputs holds: the words of the first 6 of the measured texts
TEXT_SEED = 20270301
ALPHABET = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"

WHEELS = Path("/tmp/ex27/wh")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    if str(wheels / "sz") not in sys.path:
        sys.path.insert(0, str(wheels / "sz"))
    if str(wheels / "fk") not in sys.path:
        sys.path.append(str(wheels / "fk"))


def slovorez(wheels: Path = WHEELS):
    """The package's Slovorez on its shipped model, on the CPU."""
    _packages(wheels)
    from slovorez import Slovorez

    return Slovorez.from_pretrained(str(wheels / SOURCE), device="cpu")


# --- texts ----------------------------------------------------------------------------------------
def texts(seed: int, count: int, wheels: Path, locale: str = "ru_RU") -> list[str]:
    """*count* texts from Faker's *locale* providers, each one of four kinds: a name and an address; a lorem sentence
    of ten words; a lorem paragraph of at most 160 characters; a job, a company and a city."""
    _packages(wheels)
    from faker import Faker

    fake = Faker(locale)
    fake.seed_instance(seed)
    out = []
    for _ in range(count):
        kind = fake.random_int(0, 3)
        text = (f"{fake.name()}, {fake.address()}" if kind == 0 else fake.sentence(nb_words=10) if kind == 1 else
                fake.text(max_nb_chars=160) if kind == 2 else f"{fake.job()} {fake.company()}, {fake.city()}")
        out.append(text.replace("\n", " "))
    return out


def words(text: str, wheels: Path = WHEELS) -> list[str]:
    """The words Slovorez.predict segments in *text*: the C++ tokenizer's Russian words, lowercased, in its
    batches."""
    _packages(wheels)
    from slovorez.core.tokenizer import FTTokenizer
    from slovorezCXX import TokenType

    tokenizer = FTTokenizer(text)
    tokenizer.set_filter(TokenType.RUWORD)
    tokenizer.set_token_max_len(64)
    out, batch = [], tokenizer.get_batch_tokens(tolower=True)
    while batch is not None:
        out.extend(batch)
        batch = tokenizer.get_batch_tokens()
    return out


# --- the package's preprocessing --------------------------------------------------------------------
def rows(items: list[str], wheels: Path = WHEELS, mode: str = "package") -> np.ndarray:
    """The network's input for the words of *items*, one row a word, as the package's encode_batch makes it (the
    characters numbered, padded after the word with 0 to the longest). *mode* "raw": the words split on whitespace
    (str.split) and encoded as they are (encode_batch does not lowercase: capitals and the punctuation left on a word
    get the UNK id); "prepad": the package's words and ids padded before the word (Keras pad_sequences' default
    padding='pre'); "text": each text one row, lowercased, its spaces and punctuation included (the space has its id,
    punctuation the UNK id), cut at the model's maxlen 64."""
    tokenizer = slovorez(wheels)._tokenizer
    if mode == "text":
        return tokenizer.encode_batch([t.lower()[:tokenizer.maxlen] for t in items]).astype(np.int32)
    if mode == "raw":
        return tokenizer.encode_batch([w for t in items for w in t.split()]).astype(np.int32)
    words_ = [w for t in items for w in words(t, wheels)]
    encoded = tokenizer.encode_batch(words_).astype(np.int32)
    if mode == "prepad":
        out = np.zeros_like(encoded)
        for i, w in enumerate(words_):
            n = min(len(w), encoded.shape[1])
            out[i, encoded.shape[1] - n:] = encoded[i, :n]
        return out
    return encoded


def fp32(wheels: Path) -> None:
    """The package's network made float32 (it was exported from Keras mixed precision: float16 weights, the embedding
    Cast to float16, a float16 output; ONNX Runtime's CPU runs its Convs in float32 through inserted Casts anyway, and
    the package's decisions on the evaluation texts are the same with either), then quant_pre_process."""
    import onnx
    from onnx import TensorProto, numpy_helper
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model = onnx.load(str(wheels / SOURCE / "slovorez-test.onnx"))
    graph = model.graph
    for i, init in enumerate(graph.initializer):
        if init.data_type == TensorProto.FLOAT16:
            graph.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float32),
                                                                  init.name))
    for node in graph.node:
        for a in node.attribute:
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT16:
                a.i = TensorProto.FLOAT
    for out in graph.output:
        if out.type.tensor_type.elem_type == TensorProto.FLOAT16:
            out.type.tensor_type.elem_type = TensorProto.FLOAT
    onnx.checker.check_model(model)
    onnx.save(model, str(WORK / "slz_float32.onnx"))
    quant_pre_process(str(WORK / "slz_float32.onnx"), str(WORK / "slz_fp32.onnx"))


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    items = texts(TEXT_SEED, TEXTS, wheels)
    evaluation = [t for i, t in enumerate(items) if i % 3 != 2]
    calibration = [t for i, t in enumerate(items) if i % 3 == 2]
    # the words of each evaluation text taken once (the package's C++ tokenizer is not deterministic across calls)
    eval_words = [words(t, wheels) for t in evaluation]
    (WORK / "slz_texts.json").write_text(json.dumps({"eval": evaluation, "calib": calibration,
                                                     "eval_words": eval_words}, ensure_ascii=False), encoding="utf-8")
    np.savez(WORK / "slz_eval.npz", **{INPUT: rows(evaluation[:EVAL_BUNDLED], wheels)})
    calib = rows(calibration, wheels)
    np.savez(WORK / "slz_calib.npz", **{INPUT: calib})
    np.savez(WORK / "slz_calib_raw.npz", **{INPUT: rows(calibration, wheels, "raw")})
    np.savez(WORK / "slz_calib_prepad.npz", **{INPUT: rows(calibration, wheels, "prepad")})
    np.savez(WORK / "slz_calib_text.npz", **{INPUT: rows(calibration, wheels, "text")})
    # the dummy-input habit: random ids over the 49-entry vocabulary, of the input's shape (np.random.randint(0, 49))
    rng = np.random.default_rng(20270302)
    np.savez(WORK / "slz_calib_random.npz", **{INPUT: rng.integers(0, 49, calib.shape).astype(np.int32)})
    # a folder of text at hand: English texts of the same kinds (Faker en_US), split on whitespace, lowercased and
    # encoded by the package's encode_batch (every Latin letter its UNK id)
    english = [t.lower() for t in texts(TEXT_SEED + 1, len(calibration), wheels, "en_US")]
    np.savez(WORK / "slz_calib_english.npz", **{INPUT: rows(english, wheels, "raw")})


# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    """make_corpus_part5.q with per_channel (the TensorRT control's per-tensor weights)."""
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


SLZ_OPS_ALL = ["Conv", "Add", "Mul", "Relu", "Gather", "Softmax", "Squeeze", "Unsqueeze", "Transpose"]
HEAD = "StatefulPartitionedCall/functional_1/morpheme_1/convolution"


def slz_nodes(selection: str) -> list[str]:
    """The three width-5 Convs ("wide"), or with the head ("wide+head")."""
    import onnx

    graph = onnx.load(str(WORK / "slz_fp32.onnx")).graph
    convs = [n for n in graph.node if n.op_type == "Conv"]
    wide = [n.name for n in convs if [list(a.ints) for a in n.attribute if a.name == "kernel_shape"] == [[1, 5]]]
    assert len(convs) == 6 and len(wide) == 3 and convs[-1].name == HEAD
    return {"wide": wide, "wide+head": [*wide, HEAD]}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/slz_fp32.onnx; *nodes* a slz_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, slz_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias, per_channel)


_DECIDED: dict = {}


def slz_decide(model: Path) -> list[list[tuple]]:
    """The package's Slovorez.predict (its defaults) on every evaluation text with the network *model* (its session
    swapped in): each word and its morphemes' text and type. The words are the ones prepare took once from the
    package's tokenizer (which is not deterministic across calls: a hyphenated word now and then comes out otherwise),
    and the rest is predict's own steps on them: encode_batch, the session, decode_predictions_detail (no Viterbi), the
    Morpheme types."""
    key = str(model)
    if key not in _DECIDED:
        import onnxruntime as ort
        from slovorez.core.vocab import REV_MORPHEME_TYPE_VOCAB

        segmenter = slovorez(WHEELS)
        resource = segmenter._model
        resource._session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        resource._input_names = [i.name for i in resource._session.get_inputs()]
        resource._output_names = [o.name for o in resource._session.get_outputs()]
        tokenizer = segmenter._tokenizer
        decided = []
        for batch in json.loads((WORK / "slz_texts.json").read_text(encoding="utf-8"))["eval_words"]:
            if not batch:
                decided.append([])
                continue
            logits = resource.predict(tokenizer.encode_batch(batch))
            rich = tokenizer.decode_predictions_detail(batch, logits, segmenter._model_name, use_viterbi=False)
            decided.append([(r["word"], tuple((text, REV_MORPHEME_TYPE_VOCAB[t]) for text, t, _ in r["morphemes"]))
                            for r in rich])
        _DECIDED[key] = decided
    return _DECIDED[key]


def slz_measure(qdq: Path) -> str:
    a, b = slz_decide(WORK / "slz_fp32.onnx"), slz_decide(qdq)
    total = sum(len(x) for x in a)
    changed = [sum(p != r for p, r in zip(x, y)) for x, y in zip(a, b)]
    return (f"{sum(changed)} of the {total} words of the 64 evaluation texts segmented otherwise than FP32 by the "
            f"package's predict, in {sum(c > 0 for c in changed)} of the texts")


def measure(case: Case) -> str:
    return slz_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def slz_cases() -> list[Case]:
    c, w = "slz_calib.npz", ["Conv"]
    what = ("the three width-5 Convs (the embedding's 256 -> 192 and the two 192 -> 192; the two 1 x 1 Convs, the "
            "head, the bias Adds, the Relus and the Softmax float)")
    calib = ("32 calibration texts (Faker ru_RU names, addresses, lorem and jobs, interleaved with the evaluation's; "
             "their 292 words, each a row as the package's encode_batch makes it, padded after the word)")

    def sym(calib_file: str, output: str) -> list:
        return [q("slz", calib_file, output, w, "wide")]

    return [
        Case("slz_healthy_ort_sym", "slz", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "slz_sym.onnx", c, make=sym(c, "slz_sym.onnx")),
        Case("slz_healthy_ort_percentile", "slz", 0, (), "the same with percentile calibration (99.999%)",
             "slz_sym_pct.onnx", c, make=[q("slz", c, "slz_sym_pct.onnx", w, "wide", method="percentile")]),
        Case("slz_healthy_trt_pertensor", "slz", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-tensor weights, {what}, extra_options QuantizeBias=False and "
             f"every zero-point 0: a model TensorRT takes as it is (target tensorrt)", "slz_sym_pertensor.onnx", c,
             make=[q("slz", c, "slz_sym_pertensor.onnx", w, "wide", quantize_bias=False, per_channel=False)]),
        Case("slz_calib_raw", "slz", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"texts' words split on whitespace (str.split) and encoded by the package's encode_batch as they are, "
             f"where predict's tokenizer keeps the Russian words lowercased: capitals and the punctuation left on a "
             f"word get the UNK id", "slz_raw.onnx", "slz_calib_raw.npz",
             make=sym("slz_calib_raw.npz", "slz_raw.onnx")),
        Case("slz_calib_prepad", "slz", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same words and ids padded before the word (Keras pad_sequences' default padding='pre'), where the "
             f"package pads after it", "slz_prepad.onnx", "slz_calib_prepad.npz",
             make=sym("slz_calib_prepad.npz", "slz_prepad.onnx")),
        Case("slz_calib_text", "slz", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"texts fed whole, one row a text (lowercased, its spaces and punctuation included, cut at the model's "
             f"maxlen 64), where the package feeds one word a row", "slz_text.onnx", "slz_calib_text.npz",
             make=sym("slz_calib_text.npz", "slz_text.onnx")),
        Case("slz_random_calib", "slz", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on random "
             f"ids over the 49-entry vocabulary of the input's shape (np.random.randint: a stand-in calibration set; "
             f"no quantizer log); the random file is given to collect as --calib", "slz_random.onnx",
             "slz_calib_random.npz", make=sym("slz_calib_random.npz", "slz_random.onnx")),
        Case("slz_calib_english", "slz", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 32 "
             f"English texts of the same kinds (Faker en_US names, addresses, lorem and jobs: a folder of text at "
             f"hand), split on whitespace, lowercased and encoded by the package's encode_batch (every Latin letter "
             f"its UNK id)", "slz_english.onnx", "slz_calib_english.npz",
             make=sym("slz_calib_english.npz", "slz_english.onnx")),
        Case("slz_overquant", "slz", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too: the embedding Gather, every Conv with the 1 x 1 Convs and the head, the "
             "bias Adds, the Relus, the input mask's Mul, the Softmax and the reshapes and transposes "
             "(op_types_to_quantize " + str(SLZ_OPS_ALL) + ")", "slz_all_ops.onnx", c,
             make=[q("slz", c, "slz_all_ops.onnx", SLZ_OPS_ALL)]),
        Case("slz_head_int8", "slz", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the head in INT8 "
             f"too: the 1 x 1 Conv whose 27 label logits the Softmax and the package's argmax read",
             "slz_head_int8.onnx", c, make=[q("slz", c, "slz_head_int8.onnx", w, "wide+head")]),
        Case("slz_ort_uint8", "slz", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "slz_u8.onnx", c,
             make=[q("slz", c, "slz_u8.onnx", w, "wide", activation="uint8", symmetric=False)]),
        Case("slz_ort_int8_asym", "slz", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as slz_healthy_ort_sym otherwise)", "slz_s8_asym.onnx", c,
             make=[q("slz", c, "slz_s8_asym.onnx", w, "wide", symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's Slovorez.predict on the evaluation texts.
_P = "of the 629 words of the 64 evaluation texts segmented otherwise than FP32 by the package's predict"
_N = " words against the healthy controls' 17, 22 and 20 (not harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    'slz_healthy_ort_sym': f"17 {_P}, in 16 texts: INT8 noise moves near-tie morpheme boundaries",
    'slz_healthy_ort_percentile': f"22 {_P}, in 19 texts: as slz_healthy_ort_sym",
    'slz_healthy_trt_pertensor': f"20 {_P}, in 19 texts: as slz_healthy_ort_sym (judged for TensorRT)",
    'slz_calib_raw': f"43 {_P}, in 33 texts: 43{_N}",
    'slz_calib_prepad': (
        f"17 {_P}, in 15 texts: as healthy: no more words than the healthy controls' 22 (harmless by "
        "HARMLESS_POLICY)"),
    'slz_calib_text': f"34 {_P}, in 28 texts: 34{_N}",
    'slz_random_calib': f"45 {_P}, in 32 texts: 45{_N}",
    'slz_calib_english': f"31 {_P}, in 25 texts: 31{_N}",
    'slz_overquant': f"174 {_P}, in 62 texts: 174{_N}",
    'slz_head_int8': f"147 {_P}, in 61 texts: 147{_N}",
    'slz_ort_uint8': (
        f"18 {_P}, in 15 texts: no more than the healthy controls on ONNX Runtime (17, 22 and 20), the cause is "
        "TensorRT's"),
    'slz_ort_int8_asym': (
        f"18 {_P}, in 15 texts: no more than the healthy controls on ONNX Runtime (17, 22 and 20), the cause is "
        "TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 17, 22 and 20 of the 629
# words; slz_calib_prepad (17) changes no more: harmless. Every other fault of causes 1-4 changes more. The screening
# (before any case was made, on the same texts) chose the recipe and the faults: with every Conv but the head in
# INT8 the healthy recipe changed 95 words (the first 1 x 1 Conv alone 84), so the three width-5 Convs became the
# recipe; faults measured then and not taken: the user's own alphabet table ('а' 1 ... 'я' 33, 27 words), rows never
# filled (np.zeros, 68), random digit ids (87), and the first 1 x 1 Conv in INT8 too (84).
_H = ("{n} of the 629 words segmented otherwise; the family's healthy controls change 17, 22 and 20 (marked 2026-11-27 "
      "by the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"slz_calib_prepad": _H.format(n=17)}
TARGET_ORT = {"slz_healthy_ort_sym", "slz_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(slz_cases(), TWENTY_SEVENTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part27_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"slz": "slz_calib_english.npz"}, lambda _families: prepare(args.wheels))


def write_part27_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=TWENTY_SEVENTH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
