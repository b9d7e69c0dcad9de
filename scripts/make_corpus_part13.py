"""The thirteenth sealed part of the corpus: a batch made on 2026-11-26 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part13.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex13]

--wheels is a folder holding the unpacked package (`pip download --no-deps arabic-name-romanizer==0.2.0`, a
py3-none-any wheel whose only dependencies, numpy and onnxruntime, are the corpus scripts' own; unzipped into
/tmp/ex13/anr/; this batch used /tmp/ex13). The model (the GRU encoder and the attention GRU decoder), its vocabulary,
its beam search and the names come from that one wheel: `resources/names.sqlite3`, the package's index of ~82,000
attested Latin spellings of Arabic name units (Wikidata and Algerian corpora), is the real text; nothing comes from a
hub. One family only (no variant of an earlier family drawn: their work folders are gone from this machine). Every
label carries "added_for": THIRTEENTH_PART (scripts/corpus_score.py), so the scorer reports the batch apart and prints
only its totals unless --show-sealed (STILL_SEALED). The fault of each case was chosen from what users of this model
get wrong, before anything was measured; the labels were then written from how each case was made and from what the
quantization did to the task's decisions (--measure: this script's own ONNX Runtime runs through the package's own
beam search), before any rule, report or the scorer was run on the cases; the "harmless" marks (scripts/
corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were collected with the collector of
commit 5c7079f (a clean worktree of it, this script run with `PYTHONPATH=<worktree>`, the imported qdqreport asserted
to be the worktree's; return codes only read), and the part was scored once, "before" the next round of rule
changes, on the rules of 5c7079f in that worktree (totals only).

New family (a new task and architecture: Arabic-to-Latin name transliteration by a character seq2seq, a GRU encoder
and an autoregressive GRU decoder with dot-product attention, decoded by beam search):
- anr: arabic-name-romanizer 0.2.0's `resources/decoder.onnx` (4.3 MB, opset 17, torch 2.14's TorchScript exporter),
  the decoder step the package's beam search calls once per output character. Inputs `prefix` [batch, t] int64 (the
  output characters so far, BOS first; the graph reads only the last: outputs identical for any earlier ids),
  `memory` [batch, src_len, 256] float (the encoder's states), `src_mask` [batch, src_len] bool (True at the
  padding: the package's `ids == pad_id`) and `hidden` [batch, 2, 256] (the two GRU layers' state). The graph: a
  160x256 embedding of the last character, two GRU cells written out as Gemms (input and recurrent projections,
  Sigmoid gates, Tanh), a dot-product attention over `memory` (a MatMul query projection, the scores MatMul, a Where
  that puts -1e9 at the padding, Softmax, the context MatMul), a combine MatMul + Add + Tanh and the 256->160 output
  Gemm (the head) with a LogSoftmax: `logprobs` [batch, 160] and `hidden_out`. The package's decision
  (OnnxModel.transliterate_units): a unit's characters, prefixed by a country and a role token and ended by EOS, are
  encoded by `encoder.onnx` (FP32 here, not quantized: two ONNX GRU ops) and decoded by a beam search of width 2
  (meta.json) over the decoder's log-probabilities; the best beam is the Latin spelling. The FP32 model is the
  package's decoder.onnx through onnxruntime's quant_pre_process (outputs identical).
  Text: the units of names.sqlite3 (the table's Arabic lookup keys) that have one Latin spelling attested at least 3
  times more than any other and 3-14 characters, shuffled by seed 113: each is fed as a user's single name is (country
  unknown, role unknown). A bundle sample is one decoder step on the FP32 greedy path of one unit, encoded alone (the
  memory padded to 24 positions with zeros and the mask True there: outputs identical to the unpadded step), the
  prefix given as its last id: evaluation the steps of the first 40 units, calibration the steps of the next 40;
  the decisions are measured on the first 200 units (EVAL_UNITS). The decision measured (--measure): the package's own
  beam search (width 2, each unit alone) with the FP32 encoder and the FP32 or QDQ decoder: units whose top spelling
  changes, the units whose top spelling is the attested one (FP32 and QDQ), and, on the bundle's steps, the greedy
  next-character choices that flip and the mean |d log-probability| of FP32's choice.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy control made for
TensorRT is quantize_static with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False).
Models and data go to build/corpus-work/.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

THIRTEENTH_PART = "sealed part 13 (2026-11-26)"  # scripts/corpus_score.py's THIRTEENTH_PART
MODELS = {"anr": "arabic-name-romanizer Arabic-to-Latin name transliterator (arabic-name-romanizer 0.2.0's "
                 "decoder.onnx: one step of a two-layer GRU decoder with dot-product attention over the GRU "
                 "encoder's states and a 256->160 character head with LogSoftmax; the package's beam search decodes "
                 "it)"}
RESOURCES = "anr/arabic_name_romanizer/resources"
PREFIX, MEMORY, MASK, HIDDEN = "prefix", "memory", "src_mask", "hidden"
SRC = 24  # every bundle sample's memory and mask: padded to 24 source positions
MIN_CHARS, MAX_CHARS = 3, 14
BUNDLE_UNITS, CALIB_UNITS, EVAL_UNITS = 40, 40, 200
MAX_STEPS = 32  # meta.json's max_tgt_len

WHEELS = Path("/tmp/ex13")  # --wheels (main sets it)


def _package(wheels: Path):
    """arabic_name_romanizer.inference, the package's encoding and beam search."""
    if str(wheels / "anr") not in sys.path:
        sys.path.insert(0, str(wheels / "anr"))
    import arabic_name_romanizer.inference as inference

    return inference


def _model(wheels: Path):
    """A new OnnxModel of the package, each unit decoded alone (batch 1: no padding in the encoder)."""
    return _package(wheels).OnnxModel(wheels / RESOURCES, batch_size=1)


_FP32: dict = {}


def _fp32_model(wheels: Path):
    """The package's OnnxModel with its own FP32 encoder and decoder, made once."""
    if wheels not in _FP32:
        _FP32[wheels] = _model(wheels)
    return _FP32[wheels]


# --- the FP32 model ---------------------------------------------------------------------------
def anr_fp32(wheels: Path) -> None:
    """The package's decoder through quant_pre_process: WORK/anr_fp32.onnx (module docstring)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / RESOURCES / "decoder.onnx"), str(WORK / "anr_fp32.onnx"))


# --- text ---------------------------------------------------------------------------------------
def name_units(wheels: Path) -> list[tuple[str, str]]:
    """(Arabic unit, its attested Latin spelling) of every unit of the package's index whose most counted spelling
    is counted at least 3 times more than the next, 3-14 characters, in the table's order."""
    db = sqlite3.connect(str(wheels / RESOURCES / "names.sqlite3"))
    counts: dict[str, dict[str, int]] = {}
    for key, latin, count in db.execute("SELECT arabic_key, latin, count FROM units ORDER BY rowid"):
        spellings = counts.setdefault(key, {})
        spellings[latin] = spellings.get(latin, 0) + count
    out = []
    for key, spellings in counts.items():
        ranked = sorted(spellings.values(), reverse=True)
        if MIN_CHARS <= len(key) <= MAX_CHARS and " " not in key and ranked[0] >= 3 * (ranked[1] if len(ranked) > 1
                                                                                        else 1):
            out.append((key, max(spellings, key=spellings.get)))
    return out


def source_ids(wheels: Path, unit: str, prefix_tokens: bool = True, eos: bool = True) -> list[int]:
    """The package's encode_source_ids (country unknown, role unknown); without *prefix_tokens* and *eos*: the bare
    characters (a reader that calls vocab.encode(text))."""
    inference = _package(wheels)
    vocab = _fp32_model(wheels).vocab
    if prefix_tokens and eos:
        return inference.encode_source_ids(vocab, unit, None, None)
    return vocab.encode(unit, prefix_tokens=vocab.source_prefix(None, None) if prefix_tokens else (), eos=eos)


def greedy_steps(wheels: Path, sources: list[list[int]], first_only: bool = False) -> dict[str, np.ndarray]:
    """Every decoder step of FP32's greedy path of each source (encoded alone by the package's FP32 encoder), as
    decoder feeds: the prefix's last id, the memory padded to SRC with zeros and the mask True there, the hidden
    state; *first_only*: the first step of each source only."""
    model = _fp32_model(wheels)
    enc, dec = model.backend.encoder, model.backend.decoder
    eos = model.vocab.eos_id
    rows: dict[str, list] = {PREFIX: [], MEMORY: [], MASK: [], HIDDEN: []}
    for src in sources:
        src = src[:SRC]
        ids = np.array([src], np.int64)
        memory, _mask, hidden = enc.run(None, {"src": ids, "src_mask": ids == model.vocab.pad_id})
        padded = np.zeros((1, SRC, memory.shape[2]), np.float32)
        padded[:, :len(src)] = memory
        mask = np.ones((1, SRC), bool)
        mask[:, :len(src)] = False
        last = model.vocab.bos_id
        for _ in range(1 if first_only else MAX_STEPS):
            feed = {PREFIX: np.array([[last]], np.int64), MEMORY: padded, MASK: mask, HIDDEN: hidden}
            for k, v in feed.items():
                rows[k].append(v)
            logprobs, hidden = dec.run(None, feed)
            last = int(logprobs[0].argmax())
            if last == eos:
                break
    return {k: np.concatenate(v) for k, v in rows.items()}


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    anr_fp32(wheels)
    units = name_units(wheels)
    order = np.random.default_rng(113).permutation(len(units))
    chosen = [units[i] for i in order[:EVAL_UNITS + CALIB_UNITS]]
    evaluation, calib = chosen[:EVAL_UNITS], chosen[EVAL_UNITS:]
    (WORK / "anr_units.json").write_text(json.dumps(
        {"eval": [u for u, _ in evaluation], "eval_attested": [s for _, s in evaluation],
         "calib": [u for u, _ in calib]}, ensure_ascii=False, indent=1), encoding="utf-8")
    bundle_units, calib_units = [u for u, _ in evaluation[:BUNDLE_UNITS]], [u for u, _ in calib]
    np.savez(WORK / "anr_eval.npz", **greedy_steps(wheels, [source_ids(wheels, u) for u in bundle_units]))
    good = greedy_steps(wheels, [source_ids(wheels, u) for u in calib_units])
    np.savez(WORK / "anr_calib.npz", **good)
    # the mask inverted: True at the characters and False at the padding (the attention_mask convention of most
    # tokenizers, where True means 'attend'; the package's src_mask is True at the padding)
    np.savez(WORK / "anr_calib_mask_inverted.npz", **{**good, MASK: ~good[MASK]})
    # the names reversed, character by character, before encoding (the visual left-to-right order a PDF or a
    # terminal's copy of right-to-left text gives), then decoded as the package would
    np.savez(WORK / "anr_calib_reversed.npz",
             **greedy_steps(wheels, [source_ids(wheels, u[::-1]) for u in calib_units]))
    # the bare characters: no country and role tokens before them and no EOS after (vocab.encode(text))
    np.savez(WORK / "anr_calib_bare.npz",
             **greedy_steps(wheels, [source_ids(wheels, u, prefix_tokens=False, eos=False) for u in calib_units]))
    # only the first decoder step of each name (BOS and the encoder's hidden state): a reader that runs the decoder
    # once per name
    np.savez(WORK / "anr_calib_first_step.npz",
             **greedy_steps(wheels, [source_ids(wheels, u) for u in calib_units], first_only=True))
    noise = np.random.default_rng(20261127)
    np.savez(WORK / "anr_calib_random.npz",  # a stand-in calibration set: np.random ids, randn states, no padding
             **{PREFIX: noise.integers(0, 160, good[PREFIX].shape).astype(np.int64),
                MEMORY: noise.standard_normal(good[MEMORY].shape).astype(np.float32),
                MASK: np.zeros_like(good[MASK]),
                HIDDEN: noise.standard_normal(good[HIDDEN].shape).astype(np.float32)})


# --- quantizer and measurement ----------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


HEAD, LOG_SOFTMAX = "/out/Gemm", "/LogSoftmax"  # the 256->160 character head and its LogSoftmax
ANR_BODY, ANR_EVERYTHING = "anr_body", "anr_everything"
ANR_OPS_ALL = ["Gemm", "MatMul", "Gather", "Add", "Sub", "Mul", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Where",
               "Concat", "Unsqueeze", "Transpose", "Slice"]


def _float_nodes(graph, ops: list[str]) -> list[str]:
    """The nodes of *ops* that compute on float32 (not the shape arithmetic's integers)."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(onnx.helper.make_model(graph)).graph
    types = {v.name: v.type.tensor_type.elem_type for v in [*inferred.value_info, *inferred.input, *inferred.output]}
    types.update({t.name: t.data_type for t in graph.initializer})
    return [n.name for n in graph.node if n.op_type in ops and types.get(n.output[0]) == onnx.TensorProto.FLOAT]


NODE_SELECTIONS: dict = {
    # every Gemm and MatMul but the character head
    ANR_BODY: lambda g: [n.name for n in g.node if n.op_type in ("MatMul", "Gemm") and n.name != HEAD],
    ANR_EVERYTHING: lambda g: _float_nodes(g, ANR_OPS_ALL),
}


def selected_nodes(family: str, selection) -> list[str] | None:
    if selection is None or isinstance(selection, list):
        return selection
    import onnx

    if selection.startswith(ANR_BODY + "+"):  # the body and the named nodes
        return NODE_SELECTIONS[ANR_BODY](onnx.load(str(WORK / f"{family}_fp32.onnx")).graph) + \
            selection.split("+", 1)[1].split(",")
    return NODE_SELECTIONS[selection](onnx.load(str(WORK / f"{family}_fp32.onnx")).graph)


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """onnxruntime quantize_static (QDQ, INT8 weights) of WORK/<family>_fp32.onnx on WORK/<calib>'s samples
    (make_corpus_part5.quantize_ort, with this part's node selections)."""
    part5.quantize_ort(family, calib, output, ops, selected_nodes(family, nodes), activation, symmetric, method,
                       quantize_bias, per_channel)


def anr_decode(wheels: Path, decoder: Path) -> list[str]:
    """The top spelling of every evaluation unit by the package's own beam search (width 2, each unit alone), with
    the package's FP32 encoder and *decoder* as its decoder session."""
    import onnxruntime

    model = _model(wheels)
    model.backend.decoder = onnxruntime.InferenceSession(str(decoder), providers=["CPUExecutionProvider"])
    units = json.loads((WORK / "anr_units.json").read_text(encoding="utf-8"))["eval"]
    return [hyps[0][0] if hyps else "" for hyps in model.transliterate_units(units, None, 1)]


def anr_steps(decoder: Path) -> np.ndarray:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(decoder), providers=["CPUExecutionProvider"])
    with np.load(WORK / "anr_eval.npz") as data:
        feeds = {k: data[k] for k in data.files}
    return np.concatenate([session.run(["logprobs"], {k: v[i:i + 1] for k, v in feeds.items()})[0]
                           for i in range(len(feeds[PREFIX]))])


def anr_measure(qdq: Path) -> str:
    a, b = anr_decode(WHEELS, WORK / "anr_fp32.onnx"), anr_decode(WHEELS, qdq)
    attested = json.loads((WORK / "anr_units.json").read_text(encoding="utf-8"))["eval_attested"]
    changed = sum(x != y for x, y in zip(a, b))
    ra, rb = sum(x == t for x, t in zip(a, attested)), sum(y == t for y, t in zip(b, attested))
    la, lb = anr_steps(WORK / "anr_fp32.onnx"), anr_steps(qdq)
    choice = la.argmax(axis=1)
    flips = int((choice != lb.argmax(axis=1)).sum())
    rows = np.arange(len(choice))
    dl = np.abs(la[rows, choice] - lb[rows, choice])
    return (f"{changed} of the {len(a)} units' top spellings change (the package's beam search, width 2, FP32 "
            f"encoder); the attested spelling on top: FP32 {ra}, QDQ {rb} of {len(a)}; greedy next-character choices "
            f"flipped on the bundle's {len(choice)} decoder steps: {flips}; mean |d log-probability| of FP32's "
            f"choice {float(dl.mean()):.3f}, max {float(dl.max()):.2f}")


def measure(case: Case) -> str:
    return anr_measure(WORK / case.qdq)


# Measured while choosing the recipe (2026-11-26, before any case was made): symmetric MinMax, per-channel, on the
# calibration steps, through the package's beam search on the 200 evaluation units.
EXPLORED = (
    "every MatMul and Gemm: 10 of the 200 units' top spellings change (no greedy choice of the bundle's 307 steps "
    "flips); the same with the 256->160 character head float (the healthy recipe): 5. The package's decoder alone is "
    "quantized: its encoder is two ONNX GRU ops, which quantize_static leaves float")

ANR_HEAD = ANR_BODY + f"+{HEAD},{LOG_SOFTMAX}"


# --- cases ----------------------------------------------------------------------------------
def anr_cases() -> list[Case]:
    c, w, body = "anr_calib.npz", ["MatMul", "Gemm"], ANR_BODY
    what = ("the 4 Gemms of the two GRU cells (input and recurrent projections) and the 4 MatMuls of the attention "
            "and the combine layer (the query projection, the scores, the context, the combine projection); the "
            "256->160 character head, its LogSoftmax, the gates' Sigmoid and Tanh, the Softmax and the mask's Where "
            "float")
    calib = (f"the decoder steps of FP32's greedy path of {CALIB_UNITS} calibration units (Arabic name units of the "
             f"package's names.sqlite3, 3-14 characters, encoded by the package with country and role unknown; the "
             f"memory padded to {SRC} with the mask True there)")
    return [
        Case("anr_healthy_ort_sym", "anr", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, {calib}", "anr_sym.onnx", c,
             make=[q("anr", c, "anr_sym.onnx", w, body)]),
        Case("anr_healthy_ort_percentile", "anr", 0, (), "the same with percentile calibration (99.999%)",
             "anr_sym_pct.onnx", c, make=[q("anr", c, "anr_sym_pct.onnx", w, body, method="percentile")]),
        Case("anr_healthy_trt_nobias", "anr", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False "
             f"(biases stay float) and every zero-point 0: a model TensorRT takes as it is (target tensorrt)",
             "anr_sym_nobias.onnx", c, make=[q("anr", c, "anr_sym_nobias.onnx", w, body, quantize_bias=False)]),
        Case("anr_calib_mask_inverted", "anr", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"the same steps with the source mask inverted: True at the characters and False at the padding (the "
             f"attention_mask convention of most tokenizers, where True means 'attend'; the package's src_mask is "
             f"True at the padding), so the calibration's attention sees only the zero padding",
             "anr_mask_inverted.onnx", "anr_calib_mask_inverted.npz",
             make=[q("anr", "anr_calib_mask_inverted.npz", "anr_mask_inverted.onnx", w, body)]),
        Case("anr_calib_reversed", "anr", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same units reversed character by character before encoding (the visual left-to-right order that a "
             f"PDF's or a terminal's copy of right-to-left text gives), encoded and decoded as the package does",
             "anr_reversed.onnx", "anr_calib_reversed.npz",
             make=[q("anr", "anr_calib_reversed.npz", "anr_reversed.onnx", w, body)]),
        Case("anr_calib_bare", "anr", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"units encoded as bare characters (vocab.encode(text): no country and role tokens before them, no EOS "
             f"after), encoded and decoded as the package does otherwise", "anr_bare.onnx", "anr_calib_bare.npz",
             make=[q("anr", "anr_calib_bare.npz", "anr_bare.onnx", w, body)]),
        Case("anr_random_calib", "anr", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on random "
             f"feeds of the evaluation's shapes (prefix ids np.random over the 160-entry vocabulary, memory and "
             f"hidden standard normal, no padding: a stand-in calibration set; no quantizer log); the random file is "
             f"given to collect as --calib", "anr_random.onnx", "anr_calib_random.npz",
             make=[q("anr", "anr_calib_random.npz", "anr_random.onnx", w, body)]),
        Case("anr_calib_first_step", "anr", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"first decoder step of each calibration unit only ({CALIB_UNITS} steps: BOS as the prefix and the "
             f"encoder's final state as the hidden state; a reader that runs the decoder once per name), never a "
             f"later step's state", "anr_first_step.onnx", "anr_calib_first_step.npz",
             make=[q("anr", "anr_calib_first_step.npz", "anr_first_step.onnx", w, body)]),
        Case("anr_overquant", "anr", 3, ("QR002",), "the healthy symmetric recipe with every float32 Gemm (the "
             "character head included), MatMul, Gather, Add, Sub, Mul, Sigmoid, Tanh, Softmax, LogSoftmax, Where, "
             "Concat, Unsqueeze, Transpose and Slice forced into INT8 too (op_types_to_quantize " + str(ANR_OPS_ALL)
             + ")", "anr_all_ops.onnx", c, make=[q("anr", c, "anr_all_ops.onnx", ANR_OPS_ALL, ANR_EVERYTHING)]),
        Case("anr_head_int8", "anr", 4, ("QR002",), f"the healthy symmetric recipe ({what}) with the 256->160 "
             f"character head and its LogSoftmax in INT8 too (op_types_to_quantize ['MatMul', 'Gemm', "
             f"'LogSoftmax']): the log-probabilities the beam search ranks, on one INT8 grid",
             "anr_head.onnx", c, make=[q("anr", c, "anr_head.onnx", ["MatMul", "Gemm", "LogSoftmax"], ANR_HEAD)]),
        Case("anr_ort_uint8", "anr", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "anr_u8.onnx", c,
             make=[q("anr", c, "anr_u8.onnx", w, body, activation="uint8", symmetric=False)]),
        Case("anr_ort_int8_asym", "anr", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as anr_healthy_ort_sym otherwise)", "anr_s8_asym.onnx", c,
             make=[q("anr", c, "anr_s8_asym.onnx", w, body, symmetric=False)]),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-26), before any rule, report or the
# scorer was run on the cases: the package's beam search on the evaluation units.
MEASURED: dict[str, str] = {
    'anr_healthy_ort_sym': (
        "5 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 78 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.004, max 0.11: mild (no greedy choice "
        "flips: the changes are the beam search's, between close candidates)"),
    'anr_healthy_ort_percentile': (
        "3 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 78 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.004, max 0.05: as anr_healthy_ort_sym"),
    'anr_healthy_trt_nobias': (
        "5 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 78 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.004, max 0.11: as anr_healthy_ort_sym"),
    'anr_calib_mask_inverted': (
        "200 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 0 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 196; mean |d log-probability| of FP32's choice 2.699, max 8.82: severe: every unit's "
        "spelling changes, none attested is kept on top (calibrated on attention spread over the zero padding: "
        "the attention weights' INT8 range is 0.1, the healthy recipe's 1.0, so every peaked weight clips)"),
    'anr_calib_reversed': (
        "3 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 79 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.004, max 0.05: no more than the "
        "healthy controls' 3-5 each: harmless by HARMLESS_POLICY"),
    'anr_calib_bare': (
        "4 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 77 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.004, max 0.04: no more than the "
        "healthy controls' 3-5 each: harmless by HARMLESS_POLICY"),
    'anr_random_calib': (
        "47 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 74 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 11; mean |d log-probability| of FP32's choice 0.122, max 2.85: severe for the task: "
        '47 of 200 spellings change, 11 greedy choices flip (the healthy controls 3-5 and 0)'),
    'anr_calib_first_step': (
        "5 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 78 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.007, max 0.59: no more than the "
        "healthy controls' 3-5 each: harmless by HARMLESS_POLICY (the log-probabilities move more: max 0.59 "
        'against 0.05-0.11)'),
    'anr_overquant': (
        "197 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 3 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 146; mean |d log-probability| of FP32's choice 1.700, max 6.29: severe: 197 of 200 "
        "spellings change, 3 attested on top where FP32 has 78 (the mask's -1e9 in the Softmax input: the Where "
        "output's INT8 scale is 7.9e6)"),
    'anr_head_int8': (
        "14 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 78 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.022, max 0.15: degraded: 14 of 200 "
        "spellings change against the healthy controls' 3-5 (not harmless by HARMLESS_POLICY); no greedy choice "
        "flips: the grid of the log-probabilities reorders the beams' near ties"),
    'anr_ort_uint8': (
        "2 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 77 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.004, max 0.05: as healthy on ONNX "
        "Runtime, the cause is TensorRT's"),
    'anr_ort_int8_asym': (
        "2 of the 200 units' top spellings change (the package's beam search, width 2, FP32 encoder); the "
        "attested spelling on top: FP32 78, QDQ 77 of 200; greedy next-character choices flipped on the bundle's "
        "307 decoder steps: 0; mean |d log-probability| of FP32's choice 0.004, max 0.05: as anr_ort_uint8 on "
        "ONNX Runtime (the same grid, zero-points shifted by 128), the cause is TensorRT's"),
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 5, 3 and 5 of the 200
# units' spellings; anr_calib_reversed (3), anr_calib_bare (4) and anr_calib_first_step (5) change no more: harmless.
# anr_calib_mask_inverted (200), anr_random_calib (47), anr_overquant (197) and anr_head_int8 (14) are not.
_MARK = ("the family's healthy controls change 5, 3 and 5 (marked 2026-11-26 by the maker's measurement, before any "
         "rule ran)")
HARMLESS: dict[str, str] = {
    "anr_calib_reversed": f"3 of the 200 units' top spellings change; {_MARK}",
    "anr_calib_bare": f"4 of the 200 units' top spellings change; {_MARK}",
    "anr_calib_first_step": f"5 of the 200 units' top spellings change; {_MARK}",
}
TARGET_ORT = {"anr_healthy_ort_sym", "anr_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(anr_cases(), THIRTEENTH_PART, MEASURED)


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part13_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"anr": "anr_calib_random.npz"}, lambda _families: prepare(args.wheels))


def write_part13_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRTEENTH_PART, onnxruntime_cases=TARGET_ORT, harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())
