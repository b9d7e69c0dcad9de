"""The thirty-eighth sealed part of the corpus: a batch made on 2026-11-28 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part38.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels build/corpus-work/s38/pf] [--words build/corpus-work/s38/wfr/usr/share/dict/french]

--wheels is the folder holding pyfrspell 0.1.1's package folder (`pip download --no-deps pyfrspell==0.1.1`, a
py3-none-any wheel, unzipped: <wheels>/pyfrspell, whose wheel ships its models, among them
pyfrspell/models/community/lemma_type_model.int8.onnx with its vocabulary and labels, and the predictor that runs it;
the package imports with numpy and onnxruntime only, from that folder on sys.path). --words is Debian's wfrench 1.2.7
word list (`apt-get download wfrench`, unpacked with dpkg-deb -x: usr/share/dict/french, 346,205 French word forms,
inflected and conjugated ones among them): the real text. Nothing comes from a hub. One family only.

New family (a new task for the corpus: French lemmatisation, a word form to its lemma and word type, the first step of
the package's spelling and derivation tools):
- frl: pyfrspell 0.1.1's lemma_type_model (a character seq2seq: a 156 x 80 character embedding, a bidirectional GRU
  encoder, a Gemm bridge + Tanh to the decoder's initial state, a GRU decoder and a 160 -> 156 output MatMul giving
  `token_logits` [batch, tgt_seq, 156] (the lemma's next character at each step); from the encoder's two final states a
  code head (Gemm 320 -> 160, Relu, Gemm 160 -> 40) giving `code_logits` [batch, 40] (the word type: 40 codes, NOUN,
  VERB, ADJE and their ambiguous unions). Inputs `src` [batch, src_seq] int64 (the word's characters and EOS) and
  `tgt_in` [batch, tgt_seq] int64 (BOS and the lemma so far). The package ships the model only as onnxruntime's
  dynamic INT8 (quantize_dynamic: its four MatMuls as DynamicQuantizeLinear + MatMulInteger, the embedding as a uint8
  table behind a DequantizeLinear, the GRUs float). The FP32 model of this family is that file dequantized back
  (fp32_from_package: each MatMulInteger and its scale Muls become one MatMul on the dequantized weight (q - zp) x
  scale, each dynamic activation quantization is dropped, the embedding table is dequantized and its
  DequantizeLinear nodes removed; no weight is retrained or changed otherwise): its decisions agree with the shipped
  INT8 file's on 988 of the 1000 decision words (EQUAL_SHIPPED). Its weights are therefore already on an 8-bit grid.
  The package's decision (its _LemmaTypePredictor.predict, what FrSpell.lemma returns): the word encoded character by
  character with EOS, the lemma decoded greedily one character per run (each run fed the BOS and the characters so
  far, the last position's argmax taken, up to 32 steps or EOS), the word type the argmax of `code_logits` mapped by
  the package's labels. A decision changes when the lemma or the word type differs from FP32's.
  Text: the wfrench words written only with characters of the model's vocabulary, shuffled by seed WORD_SEED. The
  decision measured (--measure): the package's own predict with the case's model as its session on the first
  DECISION_WORDS words (all lengths): the words whose (lemma, word type) changes, the lemma changes and the type
  changes apart. The bundle: src has no padding input (the encoder reads every position), so a bundle sample is one
  word of WORD_LEN letters (src WORD_LEN + 1 ids with EOS) with its FP32 greedy lemma teacher-forced as tgt_in (BOS and
  the lemma, padded after its end with <pad> to TGT_LEN: the decoder is causal, so its positions up to the lemma's end
  are the package's own steps and the padding changes none of them): evaluation the first EVAL_COUNT such words of the
  shuffled list not among the decision words, healthy calibration the next CALIB_COUNT.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe (RECIPE) was
chosen by a screening of recipes on the decision words before any case was made (SCREENING); the healthy control made
for TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Every label carries "added_for": THIRTY_EIGHTH_PART (scripts/corpus_score.py), so the scorer reports the batch apart
and prints only its totals unless --show-sealed (STILL_SEALED). The labels were written from how each case was made and
from what the quantization did to the decisions (--measure), before any rule, report or the scorer was run on the
cases; the "harmless" marks (scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. Models and
data go to build/corpus-work/.

The screening (SCREENING's comment): every MatMul in INT8 changes 29 of the 1000 decisions, every MatMul but the two
output heads 2, every MatMul and the embedding 26: the recipe keeps the output heads float and the sensitive-layer fault
puts them in INT8. What the measurements showed (MEASURED): the healthy controls change 2 and 2 decisions; the two
MatMuls the recipe quantizes read the encoder GRUs' final states, bounded by their Tanh, so the calibration faults move
their ranges little: the wrong-vocabulary calibration (cause 1) and the random-id calibration (cause 2, QR009) change 2
decisions each and are marked harmless; one-kind and two-word calibration change 4 each. A third healthy control (the
recipe with percentile calibration) was defined and dropped before anything was measured, to keep the healthy labels to
the screened recipe. Made with the collector of commit 69602fe (this worktree, PYTHONPATH set to it and the imported
qdqreport checked to be the worktree's).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

THIRTY_EIGHTH_PART = "sealed part 38 (2026-11-28)"  # scripts/corpus_score.py's THIRTY_EIGHTH_PART
MODELS = {"frl": "pyfrspell French lemmatiser (pyfrspell 0.1.1's lemma_type_model, shipped as dynamic INT8 and "
                 "dequantized back to FP32: a character seq2seq, bidirectional GRU encoder, GRU decoder, four MatMuls; "
                 "inputs a word's character ids and the lemma so far; outputs the next lemma character's logits and "
                 "the word type's; the decision: the package's greedy lemma and word type)"}
PACKAGE_DIR = "pyfrspell/models/community"
PACKAGE_MODEL = f"{PACKAGE_DIR}/lemma_type_model.int8.onnx"
INPUTS = ("src", "tgt_in")
OUTPUTS = ("token_logits", "code_logits")
WORD_SEED = 38
EQUAL_SHIPPED = 988  # of the DECISION_WORDS: the dequantized FP32 model's decisions equal to the shipped INT8 file's
DECISION_WORDS = 1000
WORD_LEN, TGT_LEN = 8, 16
EVAL_COUNT, CALIB_COUNT, FEW = 48, 64, 2
ONE_KIND = "ment"  # frl_calib_one: calibration words all ending so (adverbs and nouns in -ment)
WHEELS = ROOT / "build/corpus-work/s38/pf"  # --wheels
WORDS = ROOT / "build/corpus-work/s38/wfr/usr/share/dict/french"  # --words


# --- the package -----------------------------------------------------------------------------------------------------
def package():
    if str(WHEELS) not in sys.path:
        sys.path.insert(0, str(WHEELS))
    from pyfrspell import predictor

    return predictor


def lemmatiser(model: Path):
    """The package's _LemmaTypePredictor on the CPU running *model* (the case's), one thread."""
    import onnxruntime

    pred = package()._LemmaTypePredictor(model_path=str(model), vocab_path=str(WHEELS / PACKAGE_DIR /
                                         "lemma_type_vocab.json"),
                                         labels_path=str(WHEELS / PACKAGE_DIR / "lemma_type_labels.json"))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    pred.session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    return pred


def vocab(name: str = "lemma_type_vocab.json") -> list[str]:
    return json.loads((WHEELS / PACKAGE_DIR / name).read_text(encoding="utf-8"))["itos"]


def words() -> list[str]:
    """The wfrench words written with the model's characters only, shuffled by WORD_SEED."""
    known = set(vocab()[4:])
    listed = [w for w in WORDS.read_text(encoding="utf-8").split() if w and set(w) <= known]
    order = np.random.default_rng(WORD_SEED).permutation(len(listed))
    return [listed[i] for i in order]


def fp32_from_package(src: Path, dst: Path) -> None:
    """The shipped dynamic-INT8 model dequantized back to FP32 (module docstring)."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(str(src))
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    producers = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    drop, new_nodes, new_inits, rename = set(), [], {}, {}
    for n in g.node:
        if n.op_type == "MatMulInteger":
            xq, wq, _xzp, wzp = n.input
            dql = producers[xq]
            x = dql.input[0]
            scale = inits[wq.replace("_quantized", "_scale")]
            w = (inits[wq].astype(np.float32) - inits[wzp].astype(np.float32)) * scale
            wname = wq.replace("_quantized", "")
            new_inits[wname] = w.astype(np.float32)
            cast = consumers[n.output[0]][0]
            out_mul = consumers[cast.output[0]][0]
            scale_mul = producers[out_mul.input[1]]
            drop |= {id(n), id(dql), id(cast), id(out_mul), id(scale_mul)}
            new_nodes.append((out_mul, helper.make_node("MatMul", [x, wname], [out_mul.output[0]],
                                                        name=n.name.replace("_quant", ""))))
        elif n.op_type == "DequantizeLinear" and n.input[0] in ("/embedding/Gather_output_0_quantized",
                                                                 "/encoder/Transpose_output_0_quantized",
                                                                 "/decoder/Transpose_output_0_quantized"):
            drop.add(id(n))
            rename[n.output[0]] = n.input[0]
    table = "embedding.weight_quantized"
    emb = (inits[table].astype(np.float32) - inits["embedding.weight_zero_point"].astype(np.float32)) * \
        inits["embedding.weight_scale"]
    new_inits["embedding.weight"] = emb.astype(np.float32)
    kept = []
    for n in g.node:
        if id(n) in drop:
            for old, made in new_nodes:
                if old is n:
                    kept.append(made)
            continue
        kept.append(n)
    for n in kept:
        for k, i in enumerate(n.input):
            if i == table:
                n.input[k] = "embedding.weight"
            elif i in rename:
                n.input[k] = rename[i]
    # the outputs once quantized are float now: give them their DequantizeLinear outputs' names back
    for n in kept:
        for k, o in enumerate(n.output):
            for new, old in rename.items():
                if o == old:
                    n.output[k] = new
    for n in kept:
        for k, i in enumerate(n.input):
            for new, old in rename.items():
                if i == old:
                    n.input[k] = new
    used = {i for n in kept for i in n.input}
    g.ClearField("node")
    g.node.extend(kept)
    keep_inits = [t for t in g.initializer if t.name in used]
    g.ClearField("initializer")
    g.initializer.extend(keep_inits)
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in new_inits.items() if k in used)
    g.ClearField("value_info")
    onnx.checker.check_model(m)
    onnx.save(m, str(dst))


def encode(word: str, itos: list[str]) -> list[int]:
    stoi = {t: i for i, t in enumerate(itos)}
    return [stoi.get(c, stoi["<unk>"]) for c in word] + [stoi["<eos>"]]


def lemma_ids(pred, word: str) -> list[int]:
    """FP32's greedy lemma of *word* as ids (no EOS), the package's own loop."""
    stoi = pred.stoi
    src = np.asarray([pred._encode_word(word)], np.int64)
    tgt = [stoi["<bos>"]]
    for _ in range(pred.decode_limit):
        logits = pred.session.run(["token_logits"], {"src": src, "tgt_in": np.asarray([tgt], np.int64)})[0]
        nxt = int(np.argmax(logits[0, -1]))
        if nxt == stoi["<eos>"]:
            break
        tgt.append(nxt)
    return tgt[1:]


def feeds(word_list: list[str], pred, itos: list[str] | None = None) -> dict[str, np.ndarray]:
    """Bundle samples: each word (WORD_LEN letters) with FP32's greedy lemma teacher-forced, padded to TGT_LEN.
    *itos*: the vocabulary the words are encoded with (the package's unless a fault says otherwise)."""
    itos = itos or vocab()
    stoi = {t: i for i, t in enumerate(itos)}
    src, tgt = [], []
    for w in word_list:
        lem = [pred.itos[i] for i in lemma_ids(pred, w)]
        ids = [stoi["<bos>"]] + [stoi.get(c, stoi["<unk>"]) for c in lem]
        ids = (ids + [stoi["<pad>"]] * TGT_LEN)[:TGT_LEN]
        src.append(encode(w, itos))
        tgt.append(ids)
    return {"src": np.asarray(src, np.int64), "tgt_in": np.asarray(tgt, np.int64)}


def save(name: str, data: dict[str, np.ndarray]) -> None:
    np.savez(WORK / name, **{k: np.asarray(data[k], np.int64) for k in INPUTS})


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32_from_package(wheels / PACKAGE_MODEL, WORK / "frl_fp32.onnx")
    pred = lemmatiser(WORK / "frl_fp32.onnx")
    listed = words()
    pool = [w for w in listed[DECISION_WORDS:] if len(w) == WORD_LEN]
    save("frl_eval.npz", feeds(pool[:EVAL_COUNT], pred))
    calib_words = pool[EVAL_COUNT:EVAL_COUNT + CALIB_COUNT]
    calib = feeds(calib_words, pred)
    save("frl_calib.npz", calib)
    save("frl_calib_few.npz", {k: v[:FEW] for k, v in calib.items()})
    # the faults' calibration files
    save("frl_calib_othervocab.npz", feeds(calib_words, pred, vocab("derive_form_vocab.json")))
    one = [w for w in pool[EVAL_COUNT + CALIB_COUNT:] if w.endswith(ONE_KIND)][:CALIB_COUNT]
    save("frl_calib_one.npz", feeds(one, pred))
    rng = np.random.default_rng(WORD_SEED)
    save("frl_calib_random.npz", {"src": rng.integers(0, len(vocab()), (CALIB_COUNT, WORD_LEN + 1)),
                                  "tgt_in": rng.integers(0, len(vocab()), (CALIB_COUNT, TGT_LEN))})


# --- the package's decision --------------------------------------------------------------------------------------
_DECIDED: dict = {}


def decisions(model: Path) -> list[tuple[str, str]]:
    key = str(model)
    if key not in _DECIDED:
        pred = lemmatiser(model)
        _DECIDED[key] = [(r["lemma"], r["wordType"]) for r in (pred.predict(w) for w in words()[:DECISION_WORDS])]
    return _DECIDED[key]


def frl_measure(qdq: Path) -> str:
    ref, got = decisions(WORK / "frl_fp32.onnx"), decisions(qdq)
    changed = sum(a != b for a, b in zip(ref, got))
    lemma = sum(a[0] != b[0] for a, b in zip(ref, got))
    kind = sum(a[1] != b[1] for a, b in zip(ref, got))
    return (f"{changed} of the {len(ref)} words' decisions (lemma, word type) differ from FP32's (the package's "
            f"greedy lemma and word type), {lemma} lemmas and {kind} word types")


def measure(case: Case) -> str:
    return frl_measure(WORK / case.qdq)


# --- models --------------------------------------------------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


FRL_OPS_ALL = ["MatMul", "Gather", "Add", "Mul", "Tanh", "Relu", "Transpose", "Concat", "Squeeze", "Unsqueeze"]


def frl_nodes(selection: str) -> list[str] | None:
    """Named selections (SCREENING): "matmuls" the four MatMuls; "inner" the MatMuls but the two output heads
    (decoder_out, code_head.3); "matmuls_emb" the four MatMuls and the embedding's two Gathers; "all" None (every node
    of the ops given)."""
    import onnx

    nodes = onnx.load(str(WORK / "frl_fp32.onnx")).graph.node
    mm = [n.name for n in nodes if n.op_type == "MatMul"]
    heads = [n for n in mm if "decoder_out" in n or "code_head.3" in n]
    gathers = [n.name for n in nodes if n.op_type == "Gather" and n.input[0] == "embedding.weight"]
    return {"matmuls": mm, "inner": [n for n in mm if n not in heads], "matmuls_emb": [*mm, *gathers],
            "all": None}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """make_corpus_part37.ort_static's quantize_static call, fed one word a feed."""
    import shutil
    import tempfile

    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    if isinstance(nodes, str):
        nodes = frl_nodes(nodes)
    with np.load(WORK / calib) as data:
        rows = {k: data[k] for k in INPUTS}
    count = len(rows["src"])

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.start, self.end = 0, count

        def __len__(self) -> int:
            return count

        def set_range(self, start_index: int, end_index: int) -> None:
            self.start, self.end = start_index, end_index

        def get_next(self):
            if self.start >= self.end:
                return None
            self.start += 1
            return {k: v[self.start - 1:self.start] for k, v in rows.items()}

    options = {"ActivationSymmetric": symmetric, "WeightSymmetric": True}
    if not quantize_bias:
        options["QuantizeBias"] = False
    private = Path(tempfile.mkdtemp(dir=WORK)) / f"{family}_fp32.onnx"
    shutil.copyfile(WORK / f"{family}_fp32.onnx", private)
    quantize_static(str(private), str(WORK / output), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type={"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[activation],
                    weight_type=QuantType.QInt8, op_types_to_quantize=ops, nodes_to_quantize=nodes,
                    per_channel=per_channel, extra_options=options,
                    calibrate_method={"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                                      "percentile": CalibrationMethod.Percentile}[method])
    shutil.rmtree(private.parent)


# --- cases ---------------------------------------------------------------------------------------------------------
FRL_COLLECT_ARGS = ("--output-kind", "token_logits=class_scores", "--output-kind", "code_logits=class_scores")
RECIPE, RECIPE_OPS = "inner", ["MatMul"]
SENSITIVE, SENSITIVE_OPS = "matmuls", ["MatMul"]
RECIPE_WHAT = ("every MatMul but the two output heads in INT8 (the bridge and the code head's first Gemm, both fed by "
               "the encoder's final states); the output projection (decoder_out), the code head's last Gemm "
               "(code_head.3), the embedding, the GRUs and the rest float")
SENSITIVE_WHAT = "the two output heads (the 160 -> 156 output projection decoder_out and the code head's last Gemm)"
# The screening (2026-11-28, on the 1000 decision words, symmetric MinMax INT8, per-channel weights, the healthy
# calibration; words whose (lemma, word type) changes): every MatMul 29 (11 lemmas, 18 types); every MatMul but the
# two output heads 2 (2 lemmas, 0 types); every MatMul and the embedding's Gathers 26 (10 lemmas, 16 types). The recipe
# keeps the output heads float (what the screening showed sensitive: the first and last layers kept in higher precision,
# as is common); the sensitive-layer fault puts them in INT8. Fixed before any case was made; nothing re-chosen after.
SCREENING = ("every MatMul 29 of 1000 decisions changed; every MatMul but the two output heads 2; every MatMul and the "
             "embedding 26")


def frl_cases() -> list[Case]:
    c, w, what = "frl_calib.npz", RECIPE_OPS, RECIPE_WHAT
    calib = f"the {CALIB_COUNT} calibration words ({WORD_LEN} letters, FP32's lemma teacher-forced)"

    def recipe(calib_file: str, output: str, **kw) -> list:
        return [q("frl", calib_file, output, w, RECIPE, **kw)]

    return [
        Case("frl_healthy_ort_sym", "frl", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, on {calib}", "frl_sym.onnx", c, make=recipe(c, "frl_sym.onnx")),
        Case("frl_healthy_trt_nobias", "frl", 0, (), f"onnxruntime quantize_static with TensorRT-compatible settings: "
             f"symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False and every "
             f"zero-point 0: a model TensorRT takes as it is (target tensorrt)", "frl_sym_nobias.onnx", c,
             make=recipe(c, "frl_sym_nobias.onnx", quantize_bias=False)),
        Case("frl_calib_othervocab", "frl", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same words encoded with the package's other vocabulary file (derive_form_vocab.json, the derivation "
             f"model's, whose ids differ) where the lemmatiser reads lemma_type_vocab.json", "frl_othervocab.onnx",
             "frl_calib_othervocab.npz", make=recipe("frl_calib_othervocab.npz", "frl_othervocab.onnx")),
        Case("frl_calib_one", "frl", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"{CALIB_COUNT} words of one kind only (all ending in -{ONE_KIND})", "frl_one.onnx",
             "frl_calib_one.npz", make=recipe("frl_calib_one.npz", "frl_one.onnx")),
        Case("frl_calib_few", "frl", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on {FEW} "
             f"words only (the calibration's first {FEW})", "frl_few.onnx", "frl_calib_few.npz",
             make=recipe("frl_calib_few.npz", "frl_few.onnx")),
        Case("frl_random_calib", "frl", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on random "
             f"ids (uniform over the 156-token vocabulary for every position of src and tgt_in, no EOS or BOS)",
             "frl_random.onnx", "frl_calib_random.npz", make=recipe("frl_calib_random.npz", "frl_random.onnx")),
        Case("frl_overquant", "frl", 3, ("QR002",), f"symmetric INT8 on every op onnxruntime quantizes of "
             f"{', '.join(FRL_OPS_ALL)} (the bias Adds, the Tanh, the Relu, the embedding and the reshapes too; the "
             f"GRUs stay float: quantize_static has no QDQ GRU), on {calib}", "frl_overquant.onnx", c,
             make=[q("frl", c, "frl_overquant.onnx", FRL_OPS_ALL, None)]),
        Case("frl_sensitive_int8", "frl", 4, ("QR002",), f"the healthy symmetric recipe with {SENSITIVE_WHAT} in INT8 "
             f"too", "frl_sensitive_int8.onnx", c,
             make=[q("frl", c, "frl_sensitive_int8.onnx", SENSITIVE_OPS, SENSITIVE)]),
        Case("frl_ort_uint8", "frl", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "frl_u8.onnx", c, make=recipe(c, "frl_u8.onnx", activation="uint8",
                                                                   symmetric=False)),
        Case("frl_ort_int8_asym", "frl", 5, ("QR004",), f"asymmetric INT8 activations (non-zero zero-points; {what})",
             "frl_i8asym.onnx", c, make=recipe(c, "frl_i8asym.onnx", symmetric=False)),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-28), before any rule, report or the
# scorer was run on the cases.
MEASURED: dict[str, str] = {
    'frl_healthy_ort_sym': "2 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 2 lemmas and 0 word types",
    'frl_healthy_trt_nobias': "2 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 2 lemmas and 0 word types (judged for TensorRT)",
    'frl_calib_othervocab': "2 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 1 lemmas and 1 word types: 2 words against the healthy controls' 2 and 2: no more (harmless by HARMLESS_POLICY)",
    'frl_calib_one': "4 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 3 lemmas and 1 word types: 4 words against the healthy controls' 2 and 2: more (not harmless by HARMLESS_POLICY)",
    'frl_calib_few': "4 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 3 lemmas and 1 word types: 4 words against the healthy controls' 2 and 2: more (not harmless by HARMLESS_POLICY)",
    'frl_random_calib': "2 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 1 lemmas and 1 word types: 2 words against the healthy controls' 2 and 2: no more (harmless by HARMLESS_POLICY)",
    'frl_overquant': "46 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 11 lemmas and 37 word types: 46 words against the healthy controls' 2 and 2: more (not harmless by HARMLESS_POLICY)",
    'frl_sensitive_int8': "29 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 11 lemmas and 18 word types: 29 words against the healthy controls' 2 and 2: more (not harmless by HARMLESS_POLICY)",
    'frl_ort_uint8': "7 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 4 lemmas and 3 word types, on ONNX Runtime; the cause as made is TensorRT's (non-zero zero-points)",
    'frl_ort_int8_asym': "3 of the 1000 words' decisions (lemma, word type) differ from FP32's (the package's greedy lemma and word type), 3 lemmas and 0 word types, on ONNX Runtime; the cause as made is TensorRT's (non-zero zero-points)",
}
_H = ("{n} of the 1000 words' decisions changed; the family's healthy controls change 2 and 2 (marked "
      "2026-11-28 by the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {'frl_calib_othervocab': _H.format(n=2), 'frl_random_calib': _H.format(n=2)}
TARGET_ORT = {"frl_healthy_ort_sym"}


def cases() -> list[Case]:
    return part2.part_cases(frl_cases(), THIRTY_EIGHTH_PART, MEASURED, {"frl": FRL_COLLECT_ARGS})


def main() -> int:
    global WHEELS, WORDS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv.pop(sys.argv.index("--wheels") + 1)).resolve()
        sys.argv.remove("--wheels")
    if "--words" in sys.argv:
        WORDS = Path(sys.argv.pop(sys.argv.index("--words") + 1)).resolve()
        sys.argv.remove("--words")
    return part2.run_part(__doc__, cases, write_part38_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"frl": "frl_calib_random.npz"}, lambda _families: prepare(WHEELS))


def write_part38_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRTY_EIGHTH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
