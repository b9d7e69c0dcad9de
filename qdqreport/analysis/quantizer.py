"""Which quantizer made a bundle's QDQ model, and the quantize_static options its graph records.

Both ONNX Runtime's quantize_static and ModelOpt's ONNX PTQ (which calls ONNX Runtime's quantizer
underneath) stamp the producer `onnx.quantize`, so the producer alone does not tell them apart.
ModelOpt is recognised by its log in the bundle (`collect --modelopt-log`) or by the float part it
converts to FP16 by default; quantize_static never changes the float precision. Options a QDQ
graph records (activation/weight types, symmetry, per-channel weights, the op types and nodes that
were quantized) are read back from the bundle's precision summary; the calibration method is not
in the graph: ONNX Runtime's default (MinMax) is assumed.

Fix commands (qdqreport/fixes.py) re-quantize with the tool that made the model; `qdqreport confirm`
reruns it (confirm/quantizers.py). Both read this one judgement, and for ModelOpt the one recipe
(modelopt_recipe) the bundle shows: the options a re-quantization must repeat so that only the fix changes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

ORT_PRODUCER = "onnx.quantize"
# quantize_static's calibration methods by their lower-case names (CalibrationMethod's attributes as values), and the
# same calibration under each quantizer's name: ModelOpt says max where ONNX Runtime says MinMax.
ORT_METHODS = {"minmax": "MinMax", "entropy": "Entropy", "percentile": "Percentile", "distribution": "Distribution"}
TO_ORT = {"max": "minmax"}
TO_MODELOPT = {"minmax": "max"}


@dataclass(frozen=True)
class Detected:
    quantizer: str  # onnxruntime | modelopt
    reason: str  # how it was recognised


def made_by(precision: Mapping[str, Any] | None, modelopt_log: Mapping[str, Any] | None) -> Detected | None:
    """The quantizer that made the QDQ model, or None when the graph does not say (another producer: a QAT export,
    a hand-edited graph, another tool)."""
    if modelopt_log:
        return Detected("modelopt", "the bundle holds ModelOpt's log")
    float_dtype = (precision or {}).get("float_dtype")
    if float_dtype in ("fp16", "mixed"):
        return Detected("modelopt", f"the QDQ graph's float part is {float_dtype} (ModelOpt's default; "
                                    "quantize_static keeps FP32)")
    if ((precision or {}).get("producer") or {}).get("name") == ORT_PRODUCER:
        return Detected("onnxruntime", f"producer {ORT_PRODUCER} with an FP32 float part and no ModelOpt log")
    return None


def made_by_onnxruntime(precision: Mapping[str, Any] | None, modelopt_log: Mapping[str, Any] | None) -> bool:
    """Whether quantize_static made the QDQ model (made_by)."""
    detected = made_by(precision, modelopt_log)
    return detected is not None and detected.quantizer == "onnxruntime"


@dataclass(frozen=True)
class ModelOptRecipe:
    """The ModelOpt options a bundle shows its QDQ model was made with (modelopt_recipe). Every ModelOpt command
    qdqreport prints (fixes.modelopt_command) or runs (confirm) starts from it, so a fix changes only what it names."""

    quantize_mode: str = "int8"
    calibration_method: str | None = None  # as ModelOpt's log states it (None: not logged)
    high_precision_dtype: str | None = None  # fp32/bf16 when the float part is; None: ModelOpt's default (fp16)
    calibration_eps: tuple[str, ...] = ()  # ("cpu",) when the run calibrated on the CPU provider alone
    random_calibration: bool = False
    exclude_nodes: tuple[str, ...] = ()  # node names the run excluded (known from a confirm's record only)
    exclude_op_types: tuple[str, ...] = ()  # op types the run excluded (likewise)


# The float precisions ModelOpt's --high_precision_dtype writes; its default fp16 is left out of commands.
_HIGH_PRECISION = {"fp32": "fp32", "bf16": "bf16"}
MODELOPT_DEFAULT_METHOD = "entropy"  # ModelOpt 0.47's INT8 default calibration


def modelopt_recipe(precision: Mapping[str, Any] | None, modelopt_log: Mapping[str, Any] | None,
                    manifest: Mapping[str, Any] | None = None, log_text: str | None = None) -> ModelOptRecipe:
    """The ModelOpt options the bundle shows: the float part's dtype (--high_precision_dtype), the log's calibration
    method, random calibration and execution providers (--calibration_eps cpu when only the CPU provider ran), and,
    for a model `qdqreport confirm` made, the exclusions and --calibration_eps its manifest's quantization record
    holds. A QDQ graph cannot tell the user's node exclusions from ModelOpt's own, so outside such a record none are
    recovered."""
    log = modelopt_log or {}
    types = {str(k).lower() for k in (log.get("quantized_type_counts") or {})}
    record = (manifest or {}).get("quantization")
    record = record if isinstance(record, dict) and record.get("quantizer") == "modelopt" else {}
    fix = record.get("fix") if isinstance(record.get("fix"), dict) else {}
    recovered = record.get("recovered") if isinstance(record.get("recovered"), dict) else {}
    command = str(record.get("command") or "")
    eps = _calibration_eps(command) or _log_eps(log_text)
    method = log.get("calibration_method") or fix.get("calibration_method") or recovered.get("calibration_method")
    return ModelOptRecipe(
        quantize_mode="fp8" if any("fp8" in t or "float8" in t for t in types) else "int8",
        calibration_method=str(method) if method else None,
        high_precision_dtype=_HIGH_PRECISION.get(str((precision or {}).get("float_dtype"))),
        calibration_eps=eps, random_calibration=bool(log.get("random_calibration")),
        exclude_nodes=tuple(str(n) for n in record.get("excluded_nodes") or ()),
        exclude_op_types=tuple(str(t) for t in fix.get("op_types_to_exclude") or ()))


_EPS_FLAG = re.compile(r"--calibration_eps(?:=|\s+)([\w:,-]+(?:\s+(?!-)[\w:-]+)*)")


def _calibration_eps(command: str) -> tuple[str, ...]:
    match = _EPS_FLAG.search(command)
    return tuple(e for e in re.split(r"[\s,]+", match.group(1)) if e) if match else ()


_EPS_LINE = re.compile(r"Successfully enabled \d+ EPs for ORT: \[(.{0,2000})\]")
_EP_NAME = re.compile(r"'(\w+)ExecutionProvider'")


def _log_eps(text: str | None) -> tuple[str, ...]:
    """("cpu",) when ModelOpt's console log ("Successfully enabled 1 EPs for ORT: ['CPUExecutionProvider']", its last
    such line) shows calibration on the CPU provider alone; () otherwise (its default list, cpu cuda:0 trt, enables
    CUDA where it can, and ModelOpt's --log_file stops before that line)."""
    lines = _EPS_LINE.findall(text or "")
    return ("cpu",) if lines and _EP_NAME.findall(lines[-1]) == ["CPU"] else ()


def ort_options(precision: Mapping[str, Any]) -> dict[str, Any]:
    """quantize_static's options as the QDQ graph records them."""
    groups = precision.get("qdq") or []
    acts = [g for g in groups if g.get("kind") == "activation"]
    weights = [g for g in groups if g.get("kind") == "weight"]
    nodes = precision.get("nodes") or []
    op_types = sorted({n["op_type"] for n in nodes if n.get("weight_quantized")}) or sorted(
        {n["op_type"] for n in nodes if n.get("activation_quantized") and n.get("output_quantized")})
    default = default_op_types(precision, op_types)
    if default:  # written out whole; fix commands leave the argument out while it is the whole default
        op_types = sorted(ORT_DEFAULT_OPS)
    else:
        op_types = sorted({*op_types, *listed_without_weights(precision, op_types)})
    # Under the default, every node of an op type it always quantizes is quantized (default_op_types): none is excluded,
    # and a Reshape or MaxPool left float was never meant to be quantized (its input was not). A node on integer ids or
    # a bool mask (precision "unknown") is never quantized: it was not excluded either.
    excluded = [] if default else [n["name"] for n in nodes if n["op_type"] in op_types and not n.get("weight_quantized")
                                   and not n.get("activation_quantized") and n.get("precision") != "unknown"]
    activation, weight = _dtype(acts, "uint8"), _dtype(weights, "int8")
    return {"quant_format": "QDQ", "activation_type": activation, "weight_type": weight,
            "per_channel": any(g.get("axis") is not None for g in weights),
            "op_types_to_quantize": op_types, "nodes_to_exclude": excluded, "calibrate_method": "minmax",
            "extra_options": {"ActivationSymmetric": _symmetric(acts, activation),
                              "WeightSymmetric": _symmetric(_matrix_weights(weights, precision) or weights, weight)}}


def _matrix_weights(weights: list[dict[str, Any]], precision: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The weights a Conv/Gemm/MatMul reads: what WeightSymmetric governs. quantize_static quantizes an Add's or a Mul's
    constant as it quantizes activations (asymmetric unless ActivationSymmetric): a new user's PP-OCRv6 recognizer had
    12 such constants with non-zero zero points, symmetric matrix weights, and the fixes printed WeightSymmetric False."""
    op_types = node_op_types(precision)
    return [g for g in weights if any(op_types.get(c) in MATRIX_OPS for c in g.get("consumers") or [])]


# quantize_static's default op_types_to_quantize (None): every op type of ONNX Runtime 1.32's QLinearOpsRegistry and
# QDQRegistry (onnxruntime/quantization/registry.py). Of these, the ones quantize_static quantizes unconditionally (the
# generic QDQOperatorBase and the weight-bearing ops): the others (QDQDirect8BitOp: Reshape, Transpose, MaxPool, ...;
# Relu and Clip, removable; Gather, Pad, Split, Where, Resize) are quantized only when their input already is.
ORT_DEFAULT_OPS = frozenset({
    "Add", "ArgMax", "AveragePool", "BatchNormalization", "Clip", "Concat", "Conv", "ConvTranspose", "CumSum",
    "EmbedLayerNormalization", "Flatten", "Gather", "GatherElements", "Gemm", "GlobalAveragePool",
    "InstanceNormalization", "LayerNormalization", "LeakyRelu", "MatMul", "MaxPool", "Mul", "Pad", "Relu", "Reshape",
    "Resize", "Sigmoid", "Slice", "Softmax", "Split", "Squeeze", "TopK", "Transpose", "Unsqueeze", "Where"})
_ORT_ALWAYS = frozenset({
    "Add", "ArgMax", "BatchNormalization", "Concat", "Conv", "ConvTranspose", "CumSum", "EmbedLayerNormalization",
    "Gemm", "GlobalAveragePool", "InstanceNormalization", "LayerNormalization", "LeakyRelu", "MatMul", "Mul",
    "Sigmoid", "Softmax"})


def default_op_types(precision: Mapping[str, Any], weight_types: list[str]) -> bool:
    """Whether the graph says quantize_static ran with op_types_to_quantize left at its default (every op type).

    The op types whose weights are quantized are what an explicit list names. Beyond them, a Q/DQ pair that no such node
    explains (neither its producer, which quantizes its own output, nor a consumer, which quantizes its input, is of
    those types and quantized) was put there by another op type: a Softmax or Sigmoid feeding a graph output, a Concat
    between float ops. That alone could be an explicit list naming that type too, so the default is read only when,
    besides, every node of an op type the default quantizes unconditionally (_ORT_ALWAYS) is quantized: an explicit
    list leaves some Add, Mul or Softmax float; and a node of an op type the default never quantizes (a Pow with its
    constant quantized, or a pair only a Log or a Sqrt could have put there) proves an explicit list."""
    nodes = [n for n in precision.get("nodes") or [] if isinstance(n, dict) and n.get("name")]
    listed = set(weight_types)
    if not listed or not listed <= ORT_DEFAULT_OPS:  # a quantized Pow or Div was listed by name: the default never is
        return False
    # quantize_static quantizes float tensors only: an Add or Mul on integer ids or a bool mask (precision "unknown":
    # no float input or output) stays unquantized under the default too (slovorez's and LAC's embedding masks).
    if any(n["op_type"] in _ORT_ALWAYS and not node_quantized(n) and n.get("precision") != "unknown" for n in nodes):
        return False
    unexplained = unexplained_pairs(precision, listed)
    # A pair only an op type outside the default's could have put there (a Log, a Sqrt) proves an explicit list.
    if unexplained:
        return all(types & ORT_DEFAULT_OPS for types in unexplained)
    return bool(removed_activations(precision))


# quantize_static removes a Relu or Clip it quantizes after a quantized node (its QDQ removable activations): FP32 Relus
# missing from the QDQ graph were listed, as the default lists them. A new user's copy-detection model under the
# defaults: 28 Relus folded, every pair explained by its Convs and Gemm, and the recipe read back as ['Conv', 'Gemm'],
# which keeps the Relus with a Q/DQ pair each (86 Q nodes, not 58): its printed fix measured cosine 0.61, not 0.71.
REMOVABLE = ("Relu", "Clip")


def removed_activations(precision: Mapping[str, Any]) -> dict[str, int]:
    """The FP32 model's Relus and Clips missing from the QDQ graph, by op type (precision summary `fp32_op_counts`;
    empty for bundles written before it)."""
    fp32 = precision.get("fp32_op_counts")
    if not isinstance(fp32, Mapping):
        return {}
    present = Counter(n.get("op_type") for n in precision.get("nodes") or [] if isinstance(n, dict))
    return {op: int(fp32[op]) - present[op] for op in REMOVABLE
            if isinstance(fp32.get(op), int) and int(fp32[op]) > present[op]}


# The shape-only op types the default quantizes when their input is (QDQDirect8BitOp): the precision summary does not
# list their nodes, so a pair on such a node's output has no producer there.
_SHAPE_OPS = frozenset({"Flatten", "Reshape", "Squeeze", "Transpose", "Unsqueeze"})


def unexplained_pairs(precision: Mapping[str, Any], listed: Iterable[str]) -> list[set[str]]:
    """For each activation Q/DQ pair that no quantized node of a *listed* op type explains (neither its producer, which
    quantizes its own output, nor a consumer, which quantizes its input), the op types that could have put it there:
    its producer's and consumers'; a pair without a producer in the summary is a shape-only op's output (_SHAPE_OPS).
    Pairs with a consumer the summary does not list are left out: who put them there cannot be told."""
    return [consumers | producer for consumers, producer in _unexplained(precision, listed)]


def _unexplained(precision: Mapping[str, Any], listed: Iterable[str]) -> list[tuple[set[str], set[str]]]:
    """unexplained_pairs' candidates of each pair, split: (the quantized consumers' op types, the producer's)."""
    nodes = [n for n in precision.get("nodes") or [] if isinstance(n, dict) and n.get("name")]
    listed = set(listed)
    by_name = {n["name"]: n for n in nodes}
    by_output = nodes_by_output(nodes)
    found = []
    for pair in precision.get("qdq") or []:
        if not isinstance(pair, dict) or pair.get("kind") != "activation" or pair.get("dtype") == "int32":
            continue
        consumers = [by_name.get(c) for c in pair.get("consumers") or ()]
        if any(c is None for c in consumers):
            continue
        # A listed node quantizes its inputs, so a side that put the pair there is itself quantized.
        readers = [c for c in consumers if c and node_quantized(c)]
        producer = by_output.get(pair.get("tensor"))
        writer = [producer] if producer and node_quantized(producer) else []
        if not any(s["op_type"] in listed for s in [*readers, *writer]) and (readers or writer or not producer):
            found.append(({c["op_type"] for c in readers},
                          {w["op_type"] for w in writer} | (set() if producer else set(_SHAPE_OPS))))
    return found


def listed_without_weights(precision: Mapping[str, Any], weight_types: Iterable[str]) -> list[str]:
    """The fewest op types of quantize_static's default that, listed beside *weight_types*, explain every pair those
    leave unexplained (_unexplained), the type explaining most pairs first: a Mul of a hard-swish, a Softmax. A pair is
    explained by a quantized reader's op type or by its writer's (a listed node quantizes its inputs and its output:
    QDQOperatorBase), but not by a type the graph contradicts (_contradicted): a listed Add would have quantized its
    output too (KhmerSM's Softmax after the mask Add: the list held Softmax; a new user's Transformer made with MatMul
    and Gemm alone read Add and Softmax, and the fixes re-quantized them: 7.4% of its outputs changed became 93%).
    Where every candidate of a pair is contradicted, its readers are taken, else its writer. A pair only a shape-only
    op explains adds none (the summary cannot tell which)."""
    contradicted = _contradicted(precision)
    open_pairs = [((readers | writer) - contradicted or readers or writer) & ORT_DEFAULT_OPS - _SHAPE_OPS
                  for readers, writer in _unexplained(precision, weight_types)]
    open_pairs = [types for types in open_pairs if types]
    chosen: list[str] = []
    while open_pairs:
        best = max(sorted(set().union(*open_pairs)), key=lambda t: sum(t in types for types in open_pairs))
        chosen.append(best)
        open_pairs = [types for types in open_pairs if best not in types]
    return chosen


def _contradicted(precision: Mapping[str, Any]) -> set[str]:
    """Op types the graph shows were not listed: quantize_static quantizes the output of every node of a listed type
    it quantizes (one of _ORT_ALWAYS, whose outputs are float), so a node of that type with an INT8 input and a float
    output that feeds no graph output was not quantized as listed: its INT8 input is another node's output pair."""
    return {n["op_type"] for n in precision.get("nodes") or [] if isinstance(n, dict)
            and n.get("op_type") in _ORT_ALWAYS - {"ArgMax"} and n.get("activation_quantized")
            and not n.get("output_quantized") and not n.get("feeds_graph_output")}


def nodes_by_output(nodes: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Precision-summary nodes by each tensor they write (a Q/DQ pair's `tensor` finds its producer here)."""
    return {out: n for n in nodes for out in n.get("outputs") or ()}


def node_op_types(precision: Mapping[str, Any] | None) -> dict[str, str]:
    """Each precision-summary node's op type, by name."""
    return {n["name"]: n["op_type"] for n in (precision or {}).get("nodes", [])}


def node_quantized(node: Mapping[str, Any]) -> bool:
    """A precision-summary node with an INT8 input: its activation, its weights, or both (fixes reads it too)."""
    return bool(node.get("activation_quantized") or node.get("weight_quantized"))


# A head's quantized output is its own loss (INT8 logits), whatever its inputs.
HEAD_PATTERNS = ("final_matmul", "head")


def sensitive_in_int8(precision: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The precision summary's sensitive nodes (softmax, sigmoid, norms, logs, heads) that compute on INT8 inputs, the
    one judgement QR002 names and QR004 defers to. A softmax, sigmoid or norm counts only when its own inputs are INT8:
    its output feeding a QuantizeLinear means its consumer is quantized (a transformer's LayerNorm -> Q -> MatMul is the
    usual recipe), not that it computes on INT8 values."""
    nodes = {n["name"]: n for n in (precision or {}).get("nodes", [])}
    listed = [s for s in (precision or {}).get("sensitive", []) if s.get("quantized") and (
        s["pattern"] in HEAD_PATTERNS or s["node"] not in nodes or node_quantized(nodes[s["node"]]))]
    return listed + _embeddings_in_int8(precision, {s["node"] for s in listed})


def _embeddings_in_int8(precision: Mapping[str, Any] | None, listed: set[str]) -> list[dict[str, Any]]:
    """Gathers whose lookup table is an INT8 weight ("embedding"): every token's vector comes off one scale set by the
    table's largest value (quantize_static has no per-row form for it), where ModelOpt and quantize_static's usual
    recipes keep it float. hama's G2P encoder with its 19,750 x 80 jamo embedding in INT8 changed 6 of 1000 words'
    pronunciation, its healthy recipe 1 (the fortieth corpus part)."""
    tables = {c for e in (precision or {}).get("qdq", []) if e.get("kind") == "weight"
              for c in e.get("consumers") or []}
    return [{"node": n["name"], "op_type": "Gather", "pattern": "embedding", "quantized": True,
             "tensor": (n.get("outputs") or [""])[0], "input": None}
            for n in (precision or {}).get("nodes", [])
            if n.get("op_type") == "Gather" and n.get("weight_quantized") and n["name"] in tables
            and n["name"] not in listed]


@dataclass(frozen=True)
class RecipeShape:
    """What a QDQ graph shows of its recipe, for advice on changing it as a whole: the op types computing on quantized
    inputs beyond the matrix ops, whether some matrix weight has one scale per tensor, the activations' widest type."""

    other_op_types: tuple[str, ...]
    per_tensor_weights: bool
    activation_bits: int


def recipe_shape(precision: Mapping[str, Any] | None, modelopt_log: Mapping[str, Any] | None = None) -> RecipeShape:
    """The recipe as the precision summary shows it (RecipeShape); 8-bit activations when none are recorded. The op
    types are quantize_static's list as read back (ort_options): a node of another type can read an INT8 input its
    neighbour's pair puts there without having been listed (the terrain generator's Adds under ['Conv']); for another
    quantizer, the op types of the nodes on quantized inputs."""
    precision = precision or {}
    nodes = [n for n in precision.get("nodes") or [] if isinstance(n, dict)]
    if made_by_onnxruntime(precision, modelopt_log):  # of the op types the graph has
        listed = set(ort_options(precision)["op_types_to_quantize"]) & {str(n.get("op_type")) for n in nodes}
    else:
        listed = {str(n.get("op_type")) for n in nodes if node_quantized(n)}
    groups = [g for g in precision.get("qdq") or [] if isinstance(g, dict)]
    weights = _matrix_weights([g for g in groups if g.get("kind") == "weight"], precision)
    acts = [g for g in groups if g.get("kind") == "activation"]
    bits = 16 if _dtype(acts, "int8") in ("int16", "uint16") else 8
    # One scale for a weight of one output channel is per channel too: quantize_static's per_channel writes it without
    # an axis (the terrain generator's output Conv), so beside weights with an axis, one without counts as per tensor
    # only where its channels are known to be more than one.
    by_channel = any(g.get("axis") is not None for g in weights)
    per_tensor = any(g.get("axis") is None and (g.get("channel_levels") or {}).get("channels", 1 if by_channel else 2) > 1
                     for g in weights)
    return RecipeShape(tuple(sorted(listed - MATRIX_OPS)), per_tensor, bits)


# The types quantize_static writes for activations and weights (QuantType.QInt8 ... QUInt16). 16-bit activations were
# read as "uint8", the default: a new user's copy-detection model quantized with QInt16 activations (cosine 0.98 to
# FP32) was told to re-quantize with QUInt8 asymmetric ones in every printed fix, which took it to 0.64.
ORT_TYPES = ("int8", "uint8", "int16", "uint16")


def _dtype(groups: list[dict[str, Any]], default: str) -> str:
    counts = Counter(str(g.get("dtype")) for g in groups if g.get("dtype") in ORT_TYPES)
    return counts.most_common(1)[0][0] if counts else default


def _symmetric(groups: list[dict[str, Any]], dtype: str) -> bool:
    # ORT's symmetric mode for signed types puts every zero point at 0; unsigned stays asymmetric here.
    return dtype in ("int8", "int16") and not any(g.get("zero_point_nonzero") for g in groups)


# Per-tensor weights (collect/precision.py `channel_levels`): an output channel whose weights reach at most
# CRUSHED_LEVELS integer levels from zero (two bits of INT8's 127) under the one scale the largest channel set is
# crushed; a weight with CRUSHED_SHARE of its channels so, and at least MIN_CRUSHED of them, crushes its layer.
CRUSHED_LEVELS = 3
CRUSHED_SHARE = 0.1
MIN_CRUSHED = 2
# Upper ends of the buckets of `channel_levels.histogram` (collect/precision.py writes it): how many channels reach
# at most 0, 1, 3, 7, 15, 31, 63 integer levels from zero (max |q - zero_point|), and the rest (64 or more).
LEVEL_EDGES = (0, 1, 3, 7, 15, 31, 63)
MATRIX_OPS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul"})  # weights with output channels: per-channel works


def constant_op_types(precision: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The op types other than Conv/Gemm/MatMul that read a quantized constant (an Add's bias, a BatchNorm's scale
    written as a Mul, a BatchNormalization's parameters): constants no per-channel scale serves."""
    op_types = node_op_types(precision)
    return tuple(sorted({op_types[c] for g in (precision or {}).get("qdq") or [] if g.get("kind") == "weight"
                         for c in g.get("consumers") or [] if c in op_types and op_types[c] not in MATRIX_OPS}))


@dataclass(frozen=True)
class CrushedWeight:
    """A weight quantized with one scale whose smaller output channels keep a few integer levels."""

    tensor: str
    consumer: str
    op_type: str
    crushed: int  # channels at most CRUSHED_LEVELS levels from zero
    zeroed: int  # channels rounded to 0 entirely
    channels: int

    @property
    def matrix(self) -> bool:
        """A Conv/Gemm/MatMul weight: one scale per output channel (per_channel=True) is the fix; for an elementwise
        constant (a BatchNorm written as Mul) or a lookup table it is keeping the node float."""
        return self.op_type in MATRIX_OPS

    @property
    def table(self) -> bool:
        """A Gather's lookup table (an embedding): quantize_static gives it one scale, per_channel or not."""
        return self.op_type == "Gather"

    @property
    def unit(self) -> str:
        """What a counted channel is, plural: a lookup table's rows, else output channels (an elementwise constant's
        values are its channels)."""
        return "rows" if self.table else "output channels"


def crushed_weights(precision: Mapping[str, Any] | None) -> list[CrushedWeight]:
    """The per-tensor weights that crush their layer's channels, the most crushed share first."""
    op_types = node_op_types(precision)
    found = []
    for entry in (precision or {}).get("qdq", []):
        levels = entry.get("channel_levels") or {}
        consumer = (entry.get("consumers") or [""])[0]
        if op_types.get(consumer) == "Gather" and levels.get("axis") is None:
            continue  # a lookup table counted value by value (collected before 2026-11-28): its rows are unknown
        histogram, channels = levels.get("histogram") or [], levels.get("channels") or 0
        live = channels - (levels.get("dead") or 0)  # channels dead before quantization lose nothing: not counted
        crushed = sum(histogram[:LEVEL_EDGES.index(CRUSHED_LEVELS) + 1])
        if live <= 0 or crushed < max(MIN_CRUSHED, CRUSHED_SHARE * live):
            continue
        found.append(CrushedWeight(entry["tensor"], consumer, op_types.get(consumer, ""), crushed,
                                   histogram[0] if histogram else 0, channels))
    return sorted(found, key=lambda w: (-w.crushed / w.channels, w.tensor))
