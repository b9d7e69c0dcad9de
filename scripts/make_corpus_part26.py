"""The twenty-sixth sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part26.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex26]

--wheels is a folder holding the packages, each unpacked there (no network at run time): <wheels>/nk is nakdimon
0.2.1 (`pip download --no-deps nakdimon==0.2.1`, its wheel unzipped: it ships the Hebrew diacritizer's network,
nakdimon/data/Nakdimon.onnx, beside the package's own preprocessing and decision, nakdimon.predict: the text's
characters normalised (hebrew.normalize: final letters to their regular forms, digits to '5', other scripts to 'O'),
split into rows of at most maxlen characters (hebrew.split_by_length), numbered by dataset.letters_table (0 the
padding) and padded after the text; the network's three logit outputs (N: the niqqud, 16 classes; D: the dagesh, 3;
S: the shin/sin dot, 4) read by argmax and merged into the dotted text by predict.merge_unconditional; the package
requires Python 3.12, its code runs here on 3.11 as it is); <wheels>/fk is Faker 40.54.0 (`pip download --no-deps
faker==40.54.0`, unzipped: its he_IL providers, the text the samples are drawn from). Nothing comes from a hub. One
family only.
No diacritization data set ships in any package here, so the texts are drawn from Faker's he_IL providers, and said
so: TEXTS texts (TEXT_SEED) of at most 79 characters, each one of four kinds: a person's name with a street address
and a city, a name with a colour and a city, a full address on one line, or a lorem sentence (Faker's he_IL lorem:
Hebrew-looking made-up words); what each case is measured against is the FP32 model's own decision. Every label
carries "added_for": TWENTY_SIXTH_PART (scripts/corpus_score.py), so the scorer reports the batch apart and prints only
its totals unless --show-sealed (STILL_SEALED). The fault of each case was chosen from what users of this model get
wrong, before anything was measured; the labels were then written from how each case was made and from what the
quantization did to the task's decisions (--measure: this script's own ONNX Runtime runs through the package's own
predict.predict), before any rule, report or the scorer was run on the cases; the "harmless" marks
(scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were collected with the
collector of commit b0cecab (a clean worktree of it, this script run from that worktree, the imported qdqreport
asserted to be the worktree's; return codes only read), and the part was scored "before" the next round of rule
changes, on the rules of b0cecab in that worktree (totals only).

New family and a new task (Hebrew diacritization: restoring the vowel points of undotted text, one decision of three
heads for every character):
- nkd: nakdimon 0.2.1's `nakdimon/data/Nakdimon.onnx` (21 MB, tf2onnx, opset 17): a character embedding (43 x 400), two
  bidirectional LSTM layers of 400 (each direction a Loop whose body holds its own MatMuls: the first time step is
  unrolled in the main graph, its input and recurrent MatMuls there), the two directions added, a 400 x 400 Dense and
  three Dense heads, N (16 niqqud classes), D (3 dagesh classes) and S (4 shin/sin classes), logits. Input `input`
  [batch, length] int32 (the package casts its ids to int32), outputs N, D and S [batch, length, classes]. The FP32
  model is the package's file as it is (onnxruntime's quant_pre_process stops on its Loops: a KeyError in symbolic
  shape inference). The package's decision: predict.predict(text, session, maxlen=80) (80: the package's training
  and validation MAXLEN), the dotted text. Texts: TEXTS drawn, interleaved: evaluation 64, calibration the other 32
  (each a row of 80 ids as the package makes it). The decision measured (--measure): the words of the evaluation texts
  whose dotting differs from FP32's, and the texts with any such word. The bundles hold the first EVAL_BUNDLED
  evaluation rows.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. quantize_static reaches only the
main graph (the Loops' bodies, where the LSTMs' later time steps run, stay float whatever is asked). The healthy
control made for TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0,
QuantizeBias=False). Models and data go to build/corpus-work/.
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

TWENTY_SIXTH_PART = "sealed part 26 (2026-11-27)"  # scripts/corpus_score.py's TWENTY_SIXTH_PART
MODELS = {"nkd": "Nakdimon Hebrew diacritizer (nakdimon 0.2.1's Nakdimon.onnx: a character embedding, two "
                 "bidirectional LSTM layers of 400 run as tf2onnx Loops, a 400 x 400 Dense and three logit heads, "
                 "niqqud, dagesh and shin/sin, for every character; the decision: the dotted text out of the "
                 "package's predict.predict)"}
SOURCE = "nk/nakdimon/data/Nakdimon.onnx"
INPUT = "input"
MAXLEN = 80  # the package's train.MAXLEN: the rows predict makes for its training-time validation
TEXTS = 96  # interleaved: evaluation two of every three (64), calibration the third (32)
EVAL_BUNDLED = 6  # what collect's --inputs holds: the first 6 of the measured texts
TEXT_SEED = 20270201

WHEELS = Path("/tmp/ex26")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    for sub in ("nk", "fk"):
        if str(wheels / sub) not in sys.path:
            sys.path.append(str(wheels / sub))


def nakdimon(wheels: Path = WHEELS):
    _packages(wheels)
    from nakdimon import dataset, hebrew, predict

    return dataset, hebrew, predict


# --- texts ----------------------------------------------------------------------------------------
def texts(seed: int, count: int, wheels: Path, locale: str = "he_IL") -> list[str]:
    """*count* texts of at most MAXLEN - 1 characters from Faker's *locale* providers, each one of four kinds: a
    name, a street address and a city; a name, a colour and a city; an address on one line; a lorem sentence."""
    _packages(wheels)
    from faker import Faker

    fake = Faker(locale)
    fake.seed_instance(seed)
    out = []
    for _ in range(count):
        kind = fake.random_int(0, 3)
        text = (f"{fake.name()}, {fake.street_address()}, {fake.city()}." if kind == 0 else
                fake.sentence(nb_words=8) if kind == 1 else
                f"{fake.name()} {fake.color_name()} {fake.city()}." if kind == 2 else
                fake.address().replace("\n", ", "))
        out.append(text[:MAXLEN - 1])
    return out


# --- the package's preprocessing --------------------------------------------------------------------
def rows(items: list[str], wheels: Path = WHEELS, mode: str = "package") -> np.ndarray:
    """The network's input rows as predict.predict makes them at maxlen MAXLEN (one row a text). *mode* "reversed":
    each text in visual order (its characters reversed, as a bidi-unaware PDF or terminal extraction gives Hebrew)."""
    dataset, hebrew, _ = nakdimon(wheels)
    out = []
    for text in items:
        text = text[::-1] if mode == "reversed" else text
        out.append(dataset.Data.from_text(hebrew.iterate_dotted_text(text), MAXLEN).normalized[0])
    return np.stack(out).astype(np.int32)


def fp32(wheels: Path) -> None:
    import shutil

    shutil.copyfile(wheels / SOURCE, WORK / "nkd_fp32.onnx")  # quant_pre_process stops on the Loops (KeyError)


def prepare(wheels: Path) -> None:
    import json

    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    items = texts(TEXT_SEED, TEXTS, wheels)
    evaluation = [t for i, t in enumerate(items) if i % 3 != 2]
    calibration = [t for i, t in enumerate(items) if i % 3 == 2]
    (WORK / "nkd_texts.json").write_text(json.dumps({"eval": evaluation, "calib": calibration}, ensure_ascii=False),
                                         encoding="utf-8")
    np.savez(WORK / "nkd_eval.npz", **{INPUT: rows(evaluation[:EVAL_BUNDLED], wheels)})
    calib = rows(calibration, wheels)
    np.savez(WORK / "nkd_calib.npz", **{INPUT: calib})
    np.savez(WORK / "nkd_calib_reversed.npz", **{INPUT: rows(calibration, wheels, "reversed")})
    # the dummy-input habit: random ids over the vocabulary, of the input's shape (np.random.randint(0, 43))
    rng = np.random.default_rng(20270202)
    np.savez(WORK / "nkd_calib_random.npz", **{INPUT: rng.integers(0, 43, calib.shape).astype(np.int32)})
    # the rows allocated and never filled (np.zeros of the input's shape: every position the padding id)
    np.savez(WORK / "nkd_calib_padding.npz", **{INPUT: np.zeros_like(calib)})
    np.savez(WORK / "nkd_calib_english.npz",
             **{INPUT: rows(texts(TEXT_SEED + 1, len(calibration), wheels, "en_US"), wheels)})


# --- quantizer and measurement ----------------------------------------------------------------
q = part5.q  # ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias)
NKD_OPS_ALL = ["MatMul", "Add", "Mul", "Gather", "Sigmoid", "Tanh", "Concat", "Transpose", "Reshape", "Squeeze",
               "Unsqueeze", "Split", "Slice", "Expand"]
HEADS = ("model/N/Tensordot/MatMul", "model/D/Tensordot/MatMul", "model/S/Tensordot/MatMul")
EMBEDDING = "model/embedding/embedding_lookup"
LOGITS = ("model/N/BiasAdd", "model/D/BiasAdd", "model/S/BiasAdd")


def nkd_nodes(selection: str) -> list[str]:
    """The main graph's twelve MatMuls ("all": the eight unrolled first-step LSTM MatMuls, input and recurrent, of
    the four directions, the 400 x 400 Dense and the three heads), with the character embedding's Gather
    ("all+embedding")."""
    import onnx

    graph = onnx.load(str(WORK / "nkd_fp32.onnx")).graph
    matmuls = [n.name for n in graph.node if n.op_type == "MatMul"]
    assert len(matmuls) == 12 and all(h in matmuls for h in HEADS) and EMBEDDING in [n.name for n in graph.node]
    gates = [n.name for n in graph.node if n.op_type in ("Sigmoid", "Tanh") or (
        n.op_type in ("Mul", "Add") and "PartitionedCall" in n.name)]
    return {"all": matmuls, "all+embedding": [*matmuls, EMBEDDING], "all+logits": [*matmuls, *LOGITS],
            "all+gates": [*matmuls, *gates]}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/nkd_fp32.onnx; *nodes* a nkd_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, nkd_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias)


_DECIDED: dict = {}


def nkd_decide(model: Path) -> list[str]:
    """The package's predict.predict(text, session, maxlen=MAXLEN) on every evaluation text with the network
    *model*."""
    key = str(model)
    if key not in _DECIDED:
        import json

        import onnxruntime as ort

        _, _, predict = nakdimon(WHEELS)
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        items = json.loads((WORK / "nkd_texts.json").read_text(encoding="utf-8"))["eval"]
        _DECIDED[key] = [predict.predict(t, session, maxlen=MAXLEN) for t in items]
    return _DECIDED[key]


def nkd_measure(qdq: Path) -> str:
    a, b = nkd_decide(WORK / "nkd_fp32.onnx"), nkd_decide(qdq)
    words = sum(len(x.split()) for x in a)
    changed = [sum(p != r for p, r in zip(x.split(), y.split())) for x, y in zip(a, b)]
    return (f"{sum(changed)} of the {words} words of the 64 evaluation texts dotted otherwise than FP32 by the "
            f"package's predict, in {sum(c > 0 for c in changed)} of the texts")


def measure(case: Case) -> str:
    return nkd_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
def nkd_cases() -> list[Case]:
    c, w = "nkd_calib.npz", ["MatMul"]
    what = ("every MatMul of the main graph, quantize_static's own selection of the op type (the eight unrolled "
            "first-step LSTM MatMuls, input and recurrent, the 400 x 400 Dense and the three heads; the embedding, "
            "the LSTMs' gates and the Loops float)")
    calib = ("32 calibration texts (Faker he_IL names, addresses and lorem, interleaved with the evaluation's, each a "
             "row of 80 ids as the package's predict makes it)")

    def sym(calib_file: str, output: str) -> list:
        return [q("nkd", calib_file, output, w, "all")]

    return [
        Case("nkd_healthy_ort_sym", "nkd", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "nkd_sym.onnx", c, make=sym(c, "nkd_sym.onnx")),
        Case("nkd_healthy_ort_percentile", "nkd", 0, (), "the same with percentile calibration (99.999%)",
             "nkd_sym_pct.onnx", c, make=[q("nkd", c, "nkd_sym_pct.onnx", w, "all", method="percentile")]),
        Case("nkd_healthy_trt_nobias", "nkd", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "nkd_sym_nobias.onnx", c, make=[q("nkd", c, "nkd_sym_nobias.onnx", w, "all", quantize_bias=False)]),
        Case("nkd_calib_reversed", "nkd", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same texts in visual order (each text's characters reversed, as a bidi-unaware PDF or terminal "
             f"extraction gives Hebrew), numbered by the package", "nkd_reversed.onnx", "nkd_calib_reversed.npz",
             make=sym("nkd_calib_reversed.npz", "nkd_reversed.onnx")),
        Case("nkd_random_calib", "nkd", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on random "
             f"ids over the 43-entry vocabulary of the input's shape (np.random.randint: a stand-in calibration set; "
             f"no quantizer log); the random file is given to collect as --calib", "nkd_random.onnx",
             "nkd_calib_random.npz", make=sym("nkd_calib_random.npz", "nkd_random.onnx")),
        Case("nkd_calib_english", "nkd", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on 32 "
             f"English texts of the same kinds (Faker en_US names, addresses and lorem: a folder of text at hand), "
             f"preprocessed as the package does (every Latin letter its 'O' token)", "nkd_english.onnx",
             "nkd_calib_english.npz", make=sym("nkd_calib_english.npz", "nkd_english.onnx")),
        Case("nkd_overquant", "nkd", 3, ("QR002",), "the healthy symmetric recipe with every op of the main graph "
             "onnxruntime can quantize forced into INT8 too: the embedding Gather, the unrolled first step's gates "
             "(Sigmoids, Tanhs, Muls, Adds), the directions' sum, the Dense's and the heads' bias Adds, the "
             "reshapes and transposes (op_types_to_quantize " + str(NKD_OPS_ALL) + ")",
             "nkd_all_ops.onnx", c, make=[q("nkd", c, "nkd_all_ops.onnx", NKD_OPS_ALL)]),
        Case("nkd_calib_padding", "nkd", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on rows "
             f"allocated and never filled (np.zeros of the input's shape: every position the padding id)",
             "nkd_padding.onnx", "nkd_calib_padding.npz", make=sym("nkd_calib_padding.npz", "nkd_padding.onnx")),
        Case("nkd_logits_int8", "nkd", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the heads' "
             f"bias Adds in INT8 too: the N, D and S logits the package's argmax reads leave the model quantized",
             "nkd_logits_int8.onnx", c, make=[q("nkd", c, "nkd_logits_int8.onnx", ["MatMul", "Add"], "all+logits")]),
        Case("nkd_gates_int8", "nkd", 3, ("QR002",), f"the healthy symmetric recipe ({what}) with the unrolled "
             f"first LSTM step's gates in INT8 too: its Sigmoids, Tanhs, Muls and Adds", "nkd_gates_int8.onnx", c,
             make=[q("nkd", c, "nkd_gates_int8.onnx", ["MatMul", "Add", "Mul", "Sigmoid", "Tanh"], "all+gates")]),
        Case("nkd_ort_uint8", "nkd", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "nkd_u8.onnx", c,
             make=[q("nkd", c, "nkd_u8.onnx", w, "all", activation="uint8", symmetric=False)]),
        Case("nkd_ort_int8_asym", "nkd", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as nkd_healthy_ort_sym otherwise)", "nkd_s8_asym.onnx", c,
             make=[q("nkd", c, "nkd_s8_asym.onnx", w, "all", symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: the package's predict.predict on the evaluation texts.
_P = "of the 391 words of the 64 evaluation texts dotted otherwise than FP32 by the package's predict"
MEASURED: dict[str, str] = {
    'nkd_healthy_ort_sym': f"9 {_P}, in 9 texts: INT8 noise on the heads' logits moves near-tie vowels",
    'nkd_healthy_ort_percentile': f"8 {_P}, in 8 texts: as nkd_healthy_ort_sym",
    'nkd_healthy_trt_nobias': f"9 {_P}, in 9 texts: as nkd_healthy_ort_sym (judged for TensorRT)",
    'nkd_calib_reversed': (
        f"7 {_P}, in 7 texts: as healthy: no more words than the healthy controls' 9 (harmless by HARMLESS_POLICY)"),
    'nkd_calib_padding': (
        f"210 {_P}, in 61 texts: 210 words against the healthy controls' 9, 8 and 9 (not harmless by "
        "HARMLESS_POLICY)"),
    'nkd_random_calib': (
        f"5 {_P}, in 5 texts: as healthy: no more words than the healthy controls' 9 (harmless by HARMLESS_POLICY)"),
    'nkd_calib_english': (
        f"11 {_P}, in 11 texts: 11 words against the healthy controls' 9, 8 and 9 (not harmless by HARMLESS_POLICY)"),
    'nkd_overquant': (
        f"13 {_P}, in 12 texts: 13 words against the healthy controls' 9, 8 and 9 (not harmless by HARMLESS_POLICY)"),
    'nkd_gates_int8': (
        f"10 {_P}, in 10 texts: 10 words against the healthy controls' 9, 8 and 9 (not harmless by HARMLESS_POLICY, "
        "by one word)"),
    'nkd_logits_int8': (
        f"10 {_P}, in 10 texts: 10 words against the healthy controls' 9, 8 and 9 (not harmless by HARMLESS_POLICY, "
        "by one word)"),
    'nkd_ort_uint8': f"3 {_P}, in 3 texts: fewer than the healthy controls on ONNX Runtime (9, 8 and 9), the cause is "
                     "TensorRT's",
    'nkd_ort_int8_asym': f"3 {_P}, in 3 texts: fewer than the healthy controls on ONNX Runtime (9, 8 and 9), the "
                         "cause is TensorRT's",
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 9, 8 and 9 of the 391
# words; nkd_calib_reversed (7) and nkd_random_calib (5) change no more: harmless. Every other fault changes more.
# Before any rule ran, on the measurements, the recipe was changed and faults replaced (those models dropped, never
# collected). The first recipe left the three heads float (the eight unrolled first-step LSTM MatMuls and the Dense
# only): healthy 3, 4 and 3 words, and every calibration fault harmless (reversed 3, the user's own Unicode-offset id
# table 3, ids padded before the text 3, random ids 4, English 1: the quantized inputs there are embedding rows and
# LSTM outputs, bounded whatever the calibration), the heads in INT8 9, every op 13, UINT8/INT8 asymmetric 5/5; so the
# healthy recipe now takes every MatMul, quantize_static's own selection (9, 8, 9). With it, the Unicode-offset table
# (8), the padding before the text (9), names alone (6), the embedding Gather in INT8 (the cause-4 case first
# chosen: 6), ids off by one (6), phone numbers (9), one text repeated (5) and rows padded with spaces (7) were
# harmless beside the reversed texts and the random ids, more than two, so rows never filled (cause 1), the heads'
# logits in INT8 (cause 4) and the first step's gates in INT8 (cause 3) replaced them.
_H = ("{n} of the 391 words dotted otherwise; the family's healthy controls change 9, 8 and 9 (marked 2026-11-27 by "
      "the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"nkd_calib_reversed": _H.format(n=7), "nkd_random_calib": _H.format(n=5)}
TARGET_ORT = {"nkd_healthy_ort_sym", "nkd_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(nkd_cases(), TWENTY_SIXTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part26_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"nkd": "nkd_calib_english.npz"}, lambda _families: prepare(args.wheels))


def write_part26_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=TWENTY_SIXTH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
