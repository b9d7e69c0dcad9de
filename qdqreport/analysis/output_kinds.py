"""What each model output *is*, so it can be judged by what decides the task (issue 10, item 2).

An output's kind is declared by the user (`report --output-kind NAME=KIND`, recorded by `collect`)
or inferred here from its name, dtype, shape, the graph node that produces it and the reference
values. The kind decides the measure in analysis/agreement.py:

| kind           | what it is                                         | judged by                            |
|----------------|----------------------------------------------------|--------------------------------------|
| class_scores   | one score per class (softmax, logits of a classifier) | top-1 agreement                   |
| probabilities  | independent values in [0, 1] (sigmoid, a VAD score), or one logit per row named so (its sigmoid) | threshold flips, |Δp| near it |
| map            | a dense [.., H, W] probability map (segmentation)   | IoU of the binarised maps            |
| image          | an image out of an image (super-resolution, denoising, restoration): the input's channels, a dense grid, pixel values | PSNR against the reference |
| detections     | boxes and scores along one axis (YOLO-style head)   | detections kept/lost, box error      |
| embedding      | a feature vector compared by similarity             | cosine                               |
| index          | integer outputs (argmax, CTC indices)               | exact matches (only where a paired score decides) |
| state          | recurrent state fed back as an input (internal)     | shown, never the headline            |
| scalar         | fewer than SMALL values, not probabilities          | relative error                       |
| fields         | a grid of a few fields of different kinds along one axis (a keypoint head: heatmap, peaks, angle) | each field by its own kind, the worst decides |
| tensor         | anything else                                      | cosine, per slice when mixed-scale   |

Values in [0, 1] are probabilities (or a map) only when no linear layer wrote them straight out: a Gemm's landmark
coordinates or box offsets can fall in [0, 1] too, and thresholding them would count a nose at x = 0.5 as a flipped
decision; they are judged as tensors (or scalars), unless named like a probability.

Inference never guesses a decision threshold; it is one number for the report (default 0.5).

An image-to-image model's output (waifu2x's upscale: [1, 3, 96, 96] of pixels in [0, 1] after a Clip, from a
[1, 3, 84, 84] input) is pixel values, not a probability map: binarising it at 0.5 reads IoU 1.000 while a random
calibration costs it 1.7 dB against the originals. An output is an image when it has an image input's channel count
(1, 3 or 4, on the same side: [N, C, H, W] or [N, H, W, C]), a grid at least half that input's height and width, values
within a pixel range ([0, 1], [-1, 1] or [0, 255], a tenth of it beyond either end allowed for an unclipped head), no squashing
op wrote it (Sigmoid, Softmax: a mask or a map) and it is not named like one. A matte or a saliency map has one channel
out of three in, and stays a map.

A detector that exports its class decision as two outputs of one shape (PicoDet, NanoDet, end-to-end
YOLO exports: `score = max(cls)`, `label = argmax(cls)`) has a label for every anchor, kept or not.
The label of an anchor scored 0.001 decides nothing, and on background anchors it is noise that
changes under any perturbation (40% of a healthy PicoDet's labels differ, none of its kept ones).
So an index output with such a *score gate* (score_gate below) is judged only where the score keeps
the anchor in the reference or the candidate. A gate filters: a detector keeps a few anchors of
thousands. Where the score keeps most positions (a CTC recogniser's max probability per time step
beside its argmax), every index is a decision (the string is read from all of them) and there is no gate.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

KINDS = ("class_scores", "probabilities", "map", "image", "detections", "embedding", "index", "state", "scalar",
         "fields", "tensor")
# Fewer values than this per sample: cosine says nothing (one value always has cosine 1).
SMALL = 8
# Kinds whose slices are no fields of different units: integer ids have no scale, and class scores are one score a
# class, judged by their decision (a rarely seen class has small scores, not another unit). QR007 never judges their
# slices, and the report shows no slice note for class scores judged whole (a new user's 384-bin pitch softmax read
# "scales differ 4.06x10^38x"); where a worst slice was judged (a tagger's positions), the note names it.
NOT_MIXED_SCALE = ("index", "class_scores")
# A detector head concatenates 4 box coordinates with at least one score along one axis.
BOX_FIELDS = 4
MAX_DETECTION_FIELDS = 1024
# Names recurrent models give the state they return (LSTM/GRU h/c, KV caches, "stateN").
# "state" as a word ("stateN", "state_out", "hidden_states"), not inside another one: TensorFlow exports name every
# output "StatefulPartitionedCall:N", and those are the model's outputs, not a state it takes back.
_STATE_NAME = re.compile(r"state(?!(?-i:[a-rt-z]))|hidden|cache|present|past_key|(^|[_./])[hc]_?n($|[_./])", re.I)
_STATE_SUFFIXES = {"n", "out", "new", "next"}
_LINEAR_OPS = {"Gemm", "MatMul", "Conv", "ConvTranspose", "Add", "Sub", "Mul", "Div", "BatchNormalization", "Einsum",
               "InstanceNormalization", "LayerNormalization", "PRelu", "LeakyRelu"}
_PROBABILITY_NAME = re.compile(r"prob|score|conf|sigmoid|softmax", re.I)
_EMBEDDING_NAME = re.compile(r"embed|feature|pool|vector|sentence|fingerprint|descriptor", re.I)
_LOGITS_NAME = re.compile(r"logit|class|cls|label|score", re.I)
# Names only an embedding takes (not "pool" or "feature", which a classifier's layers may carry): these win over the
# collector's class-output guess for a linear layer's 2-D output.
_EMBEDDING_ONLY_NAME = re.compile(r"embed|sentence|fingerprint|descriptor", re.I)
MAX_CLASSES = 100_000  # a last axis longer than this is not a class axis
ROW_CLASSES = 1000  # an unnamed row of scores longer than this is offered as class scores no more (a feature vector)
# How far past [0, 1] a probability may read by float32 rounding: ONNX Runtime's Sigmoid gives 1.0000001 (a new user's
# fastmrz map, 64 samples), which made 64 stored samples of a probability map a "tensor" judged by cosine where 4 of
# them were a map.
UNIT_ROUNDING = 1e-6
_EMBEDDING_OPS = {"LpNormalization", "ReduceMean", "GlobalAveragePool", "Flatten", "Gemm", "Div"}


@dataclass(frozen=True)
class OutputKind:
    kind: str
    reason: str  # how it was decided: "declared", "integer dtype", "values in [0,1] after Sigmoid", ...
    declared: bool = False
    fields_axis: int | None = None  # detections: the axis holding 4 box fields then scores
    score_fields: tuple[int, ...] = ()  # detections: the score fields (reference values within [0, 1])
    objectness: bool = False  # detections: the first score is an objectness that multiplies the class scores
    gated_by: str | None = None  # index: the output of per-position scores that says which labels are decisions
    peak: float | None = None  # image: the pixel range's width (1, 2 or 255), the PSNR's peak
    field_kinds: tuple[str, ...] = ()  # fields: the kind of each field along fields_axis (FIELD_KINDS)
    # The kind the same values would fit as well, when inference had to choose between two by a guess the user can
    # settle with --output-kind (a binary classifier's 2 logits out of a Gemm read like 2 regressed numbers).
    alternative: str | None = None
    logit: bool = False  # probabilities: the values are logits, decided as their sigmoid is (a binary logit)

    @property
    def internal(self) -> bool:
        """State outputs feed the next step: they are shown but never decide the verdict."""
        return self.kind == "state"


def parse_declarations(items: Sequence[str], where: str = "--output-kind") -> dict[str, str]:
    """NAME=KIND pairs from the command line; an unknown kind is a one-line error naming the choices."""
    declared: dict[str, str] = {}
    for item in items:
        name, sep, kind = str(item).rpartition("=")
        if not sep or not name or kind not in KINDS:
            raise ValueError(f"{where} {item!r}: expected NAME=KIND with KIND one of {', '.join(KINDS)}")
        declared[name] = kind
    return declared


def infer_kind(name: str, samples: Sequence[np.ndarray], *, declared: str | None = None,
               producer_op: str | None = None, class_output: bool = False,
               inputs: Mapping[str, Sequence[int]] | Sequence[str] = ()) -> OutputKind:
    """The kind of output *name*, from a declaration or its reference values *samples* (one array per sample).
    *inputs*: the model inputs the evaluation feeds, name -> the shape of one sample's tensor (names alone say less:
    no output is then taken for an image)."""
    if declared:
        return _with_layout(OutputKind(declared, "declared", declared=True), samples)
    arrays = [np.asarray(a) for a in samples if a is not None]
    if _is_state(name, inputs):
        return OutputKind("state", "recurrent state (named like a state the model takes back as input)")
    if arrays and all(a.dtype.kind in "iub" for a in arrays):
        return OutputKind("index", "integer values (indices or labels)")
    # Values in [0, 1] that a linear layer writes out are coordinates or fractions (landmarks), not probabilities,
    # and not class logits either: logits are unbounded and go negative (the collector's guess for a 2-D Gemm output).
    within = bool(arrays) and _within_unit(arrays)
    # Rows of values in [0, 1] that each sum to 1 are a distribution over classes, whatever op wrote them last: a
    # softmax exported as Exp / ReduceSum ends in a Div (Magika's jax2tf export). Regressed numbers do not sum to 1.
    distribution = within and _sums_to_one(arrays)
    unit_regressed = within and not distribution and _regressed(name, producer_op)
    if (class_output and arrays and not distribution and _EMBEDDING_ONLY_NAME.search(name)
            and not _LOGITS_NAME.search(name) and _is_embedding(name, arrays[0].shape, producer_op)):
        # A Gemm's [batch, 256] output named an embedding is one: a new user's speaker encoder, calibrated on noise,
        # read "its decisions hold: 0 of 230 top-1 decisions change" where 107 of 144 verifications flipped.
        return OutputKind("embedding", "a feature vector per sample (named so)")
    if class_output and not (_few_regressed(name, arrays, producer_op) or unit_regressed):
        return OutputKind("class_scores", "one score per class (the collector found class scores)")
    if not arrays:
        return OutputKind("tensor", "no stored outputs to read")
    size = int(arrays[0].size)
    in_unit = within and not unit_regressed
    if distribution:
        return OutputKind("class_scores", "rows sum to 1 (softmax)")
    if size < SMALL:
        if in_unit:
            return OutputKind("probabilities", f"{size} value(s) in [0, 1]")
        if _binary_logit(name, arrays):
            return OutputKind("probabilities", "one logit per row (named so, values of both signs): judged by the "
                                               "threshold decisions of its sigmoid", logit=True)
        return OutputKind("scalar", f"{size} value(s) per sample",
                          alternative=_logits_alternative(size, class_output and not within))
    if _EMBEDDING_NAME.search(name) and _is_embedding(name, arrays[0].shape, producer_op):
        return OutputKind("embedding", "a feature vector per sample (named so)")
    if producer_op in ("Softmax", "LogSoftmax") and arrays[0].shape[-1] > 1:
        return OutputKind("class_scores", "rows sum to 1 (softmax)")
    image = _image_of(name, arrays, producer_op, inputs)
    if image is not None:
        return image
    if in_unit and _is_dense_map(arrays[0].shape):
        return OutputKind("map", "a dense map of values in [0, 1]" + (f" after {producer_op}" if producer_op else ""))
    if in_unit:
        return OutputKind("probabilities", "values in [0, 1]" + (f" after {producer_op}" if producer_op else ""))
    if unit_regressed:
        return OutputKind("tensor", f"values in [0, 1] a {producer_op} writes out (coordinates or fractions, not "
                                    "probabilities): judged by cosine")
    layout = _detection_layout(arrays)
    if layout is not None:
        return layout
    # A linear layer's grid (CenterFace's ten landmark offsets from one Conv) holds regressed numbers, whatever range
    # some of its fields fall in: no field of it is a map.
    fields = None if _regressed(name, producer_op) else _field_grid(arrays)
    if fields is not None:
        return fields
    if _LOGITS_NAME.search(name) and 2 <= arrays[0].shape[-1] <= MAX_CLASSES:
        return OutputKind("class_scores", "logits, one per class along the last axis (named so): judged by top-1")
    if _is_embedding(name, arrays[0].shape, producer_op):
        return OutputKind("embedding", "a feature vector per sample")
    # One row of a few values per sample could be the class scores a reduction or an unnamed head writes (a new user's
    # key CNN: 24 key logits out of a ReduceMean, "Outputs agree: cosine 0.9995" while 9 of 160 keys changed): judged
    # as a tensor, with the option that judges it by top-1 offered (the user knows which).
    row = int(arrays[0].size) == int(arrays[0].shape[-1]) if arrays[0].ndim else False
    return OutputKind("tensor", "no task semantics recognised",
                      alternative="class_scores" if row and 2 <= arrays[0].size <= ROW_CLASSES else None)


IMAGE_CHANNELS = (1, 3, 4)
IMAGE_MARGIN = 0.1  # of the pixel range, beyond either end: an unclipped restoration head overshoots a little
_SQUASHING_OPS = {"Sigmoid", "Softmax", "LogSoftmax", "HardSigmoid"}
_MAP_NAME = re.compile(r"prob|score|conf|sigmoid|softmax|mask|matte|alpha|seg|saliency|heat|map", re.I)


def _image_of(name: str, arrays: Sequence[np.ndarray], producer_op: str | None,
              inputs: Mapping[str, Sequence[int]] | Sequence[str]) -> OutputKind | None:
    """An image out of an image input (module docstring), or None."""
    if not isinstance(inputs, Mapping) or producer_op in _SQUASHING_OPS or _MAP_NAME.search(name):
        return None
    shape = arrays[0].shape
    if any(a.shape != shape or a.dtype.kind != "f" for a in arrays) or len(shape) != 4:
        return None
    matched = next(((i, layout) for i, dims in inputs.items()
                    if (layout := _same_image_grid(shape, tuple(int(d) for d in dims or ()))) is not None), None)
    pixels = _pixel_range(arrays) if matched else None
    if pixels is None:
        return None
    (source, (channels, height, width)), (low, high) = matched, pixels
    return OutputKind("image", f"an image out of input {source} ({height} x {width}): {channels} channels, pixel "
                               f"values in [{low:g}, {high:g}]" + (f" after {producer_op}" if producer_op else ""),
                      peak=high - low)


def _same_image_grid(out: tuple[int, ...], image: tuple[int, ...]) -> tuple[int, int, int] | None:
    """The input's (channels, height, width) when *out* has its channels on the same side and a grid at least half
    its size."""
    if len(image) != 4:
        return None
    for channel, grid in ((1, (2, 3)), (3, (1, 2))):
        if (image[channel] in IMAGE_CHANNELS and out[channel] == image[channel]
                and all(image[g] >= SMALL and out[g] * 2 >= image[g] for g in grid)):
            return image[channel], image[grid[0]], image[grid[1]]
    return None


# Pixel ranges an image model writes: [0, 1], [-1, 1] (a Tanh generator's) and [0, 255]; the first that holds every
# value (IMAGE_MARGIN of its width beyond either end allowed) and reaches past the one before it.
PIXEL_RANGES = ((0.0, 1.0), (-1.0, 1.0), (0.0, 255.0))


def _pixel_range(arrays: Sequence[np.ndarray]) -> tuple[float, float] | None:
    """The pixel range the values lie in (PIXEL_RANGES; its width is the PSNR's peak), or None outside them all."""
    finite = [a[np.isfinite(a)] for a in arrays]
    if not all(f.size for f in finite):
        return None
    low, high = min(float(f.min()) for f in finite), max(float(f.max()) for f in finite)
    for bottom, top in PIXEL_RANGES:
        margin = IMAGE_MARGIN * (top - bottom)
        if bottom - margin <= low and high <= top + margin:
            return bottom, top
    return None


def _regressed(name: str, producer_op: str | None) -> bool:
    """Values a linear layer writes straight out (a Gemm's landmark coordinates, a Conv's box offsets) are
    regressed numbers, whatever range they happen to fall in: a probability comes out of a squashing op (Sigmoid,
    Softmax, ...) or is named like one. An unknown producer, or a shape op between (Reshape, Concat), says nothing."""
    return producer_op in _LINEAR_OPS and not _PROBABILITY_NAME.search(name)


def _logits_alternative(size: int, class_output: bool) -> str | None:
    """class_scores where the collector saw a class-score shape ([batch, k] out of a Gemm/MatMul) but too few values
    to tell logits from regressed numbers (_few_regressed): the user knows which, and a 2-class head's top-1 is the
    decision its relative error only bounds."""
    return "class_scores" if class_output and size >= 2 else None


def _few_regressed(name: str, arrays: Sequence[np.ndarray], producer_op: str | None) -> bool:
    """A handful of values (fewer than SMALL) that a linear layer writes straight out, with no softmax and no name of
    logits: the collector guesses class logits for any 2-D Gemm/MatMul output, but so few numbers out of a linear
    layer are as often regressed ones (quality scores, box offsets, coordinates), whose argmax decides nothing; they
    are judged by their relative error instead (which also bounds how far logits moved), unless declared."""
    return (bool(arrays) and int(arrays[0].size) < SMALL and producer_op in ("Gemm", "MatMul")
            and not _LOGITS_NAME.search(name))


GATE_MAX_KEPT = 0.5  # a score that keeps more than half of the positions at the threshold is not a filter


def score_gate(name: str, samples: Sequence[Mapping[str, Any]], threshold: float) -> str | None:
    """The output whose scores gate index output *name*: same shape in every sample, float values in [0, 1],
    keeping at most GATE_MAX_KEPT of the positions at *threshold* (a detector's few kept anchors).

    *samples* are the reference stage's stored outputs (output name -> array). With several candidates,
    the one named like a score wins; when that does not settle it, there is no gate (no guessing).
    """
    arrays = [np.asarray(s[name]) for s in samples if s.get(name) is not None]
    if not arrays:
        return None
    candidates = [other for other in samples[0] if other != name and _gates(other, arrays, samples, threshold)]
    if len(candidates) > 1:
        candidates = [c for c in candidates if re.search(r"score|conf|prob", c, re.I)]
    return candidates[0] if len(candidates) == 1 else None


def _gates(other: str, arrays: Sequence[np.ndarray], samples: Sequence[Mapping[str, Any]], threshold: float) -> bool:
    scores = [np.asarray(s[other]) for s in samples if s.get(other) is not None]
    return (len(scores) == len(arrays) and all(g.shape == a.shape and g.dtype.kind == "f" for g, a in zip(scores, arrays))
            and _within_unit(scores) and float(np.mean([np.mean(g >= threshold) for g in scores])) <= GATE_MAX_KEPT)


def _with_layout(kind: OutputKind, samples: Sequence[np.ndarray]) -> OutputKind:
    """A declared detector head still needs its field axis and score fields, read from the values; a declared field
    grid its field axis and each field's kind."""
    if kind.kind == "fields":
        grid = _field_grid([np.asarray(a) for a in samples if a is not None], require_decisions=False)
        return kind if grid is None else dataclasses.replace(grid, reason="declared", declared=True)
    if kind.kind != "detections":
        return kind
    layout = _detection_layout([np.asarray(a) for a in samples if a is not None], require_scores=False)
    if layout is None:
        return kind
    return OutputKind("detections", "declared", True, layout.fields_axis, layout.score_fields, layout.objectness)


def state_name(name: str) -> bool:
    """Named like recurrent state ("state", "h0", "hidden", a KV cache): what a model takes back from its own output."""
    return bool(_STATE_NAME.search(name))


def _is_state(name: str, input_names: Iterable[str]) -> bool:
    """Named like a state ("stateN", "hn", "present.0.key"), or an input's name plus "N"/"_out" (fed back), or an
    input's name after "next_"/"new_"/"out_" (a new user's streaming VAD: input recurrent, output next_recurrent)."""
    return state_name(name) or any(_fed_back(name, i) for i in input_names)


def state_input(name: str, output_names: Iterable[str]) -> bool:
    """A graph input that is recurrent state: named so, or repeated by a graph output with a state suffix or prefix
    (FlashVAD's recurrent -> next_recurrent)."""
    return state_name(name) or any(_fed_back(o, name) for o in output_names)


def _fed_back(output: str, input_name: str) -> bool:
    """*output* is *input_name* plus "N"/"_out", or after "next_"/"new_"/"out_": the input's next value."""
    lower = output.lower()
    return output != input_name and (
        (output.startswith(input_name) and lower[len(input_name):].lstrip("_.") in _STATE_SUFFIXES)
        or (lower.endswith(input_name.lower()) and lower[:-len(input_name)].rstrip("_.") in _STATE_SUFFIXES))


_BINARY_LOGIT_NAME = re.compile(r"logit", re.I)


def _binary_logit(name: str, arrays: Sequence[np.ndarray]) -> bool:
    """One float per row, named a logit, negative and positive across the samples: a binary decision's logit, which the
    application passes through a sigmoid and thresholds. A new user's streaming VAD (speech_logits [1, 1]) was judged
    by relative error 0.046, "agrees", while 1.5% of its frames crossed p = 0.5 and 1% p = 0.8."""
    if not _BINARY_LOGIT_NAME.search(name) or any(a.dtype.kind != "f" or not a.ndim or a.shape[-1] != 1 for a in arrays):
        return False
    values = np.concatenate([a[np.isfinite(a)].ravel() for a in arrays])
    return values.size > 0 and float(values.min()) < 0 < float(values.max())


def _within_unit(arrays: Sequence[np.ndarray]) -> bool:
    finite = [a[np.isfinite(a)] for a in arrays if a.dtype.kind == "f"]
    if len(finite) != len(arrays) or not any(f.size for f in finite):
        return False
    low = min(float(f.min()) for f in finite if f.size)
    high = max(float(f.max()) for f in finite if f.size)
    return _in_unit(low, high)


def _in_unit(low: float, high: float) -> bool:
    """Whether values from *low* to *high* lie in [0, 1], UNIT_ROUNDING past either end allowed."""
    return low >= -UNIT_ROUNDING and high <= 1.0 + UNIT_ROUNDING


def _sums_to_one(arrays: Sequence[np.ndarray]) -> bool:
    shape = arrays[0].shape
    if len(shape) == 0 or shape[-1] < 2:
        return False
    return all(a.shape == shape and np.allclose(a.sum(axis=-1), 1.0, atol=1e-3) for a in arrays[:16])


def _is_dense_map(shape: tuple[int, ...]) -> bool:
    """[.., H, W] with both at least SMALL long, or one channel of a grid in any layout ([1, H, W, 1]: a TensorFlow
    segmenter's NHWC map, which read as loose probabilities, by threshold flips, instead of by IoU)."""
    if len(shape) >= 3 and shape[-1] >= SMALL and shape[-2] >= SMALL:
        return True
    long = [n for n in shape if n > 1]
    return len(shape) >= 3 and len(long) == 2 and min(long) >= SMALL


def _detection_layout(arrays: Sequence[np.ndarray], require_scores: bool = True) -> OutputKind | None:
    """A YOLO-style head: one axis of 4 + k fields (boxes first, then k >= 1 scores within [0, 1])."""
    shape = arrays[0].shape
    if not arrays or any(a.shape != shape or a.dtype.kind != "f" for a in arrays) or len(shape) < 2:
        return None
    stacked = np.stack(arrays[:32])
    for axis in _field_axes(shape):
        fields = np.moveaxis(stacked, axis + 1, 1).reshape(stacked.shape[0], shape[axis], -1)
        scores = tuple(f for f in range(BOX_FIELDS, shape[axis])
                       if np.isfinite(fields[:, f]).all() and _in_unit(fields[:, f].min(), fields[:, f].max()))
        boxes_free = any(fields[:, f].min() < 0.0 or fields[:, f].max() > 1.0 for f in range(BOX_FIELDS))
        if scores and scores[0] == BOX_FIELDS and boxes_free or not require_scores and shape[axis] > BOX_FIELDS:
            return OutputKind("detections", f"{BOX_FIELDS} box fields and {len(scores)} score field(s) along axis {axis}",
                              fields_axis=axis, score_fields=scores, objectness=_has_objectness(fields, scores))
    return None


def _field_axes(shape: tuple[int, ...]) -> list[int]:
    """Candidate field axes, the shorter first ([1, 84, 8400] and [1, 8400, 6] both have it shorter). A head lists
    its candidates along one other axis: where two more axes are longer than 1 ([1, 10, 40, 40]: CenterFace's
    landmark map), the output is a map of channels over a grid, which no detector decodes as a list of boxes."""
    if sum(1 for n in shape if n > 1) != 2:
        return []
    axes = [i for i, n in enumerate(shape) if BOX_FIELDS < n <= MAX_DETECTION_FIELDS and n < max(shape)]
    return sorted(axes, key=lambda i: shape[i])


def _has_objectness(fields: np.ndarray, scores: tuple[int, ...]) -> bool:
    """YOLOv5/YOLOX put an objectness before the class scores; YOLOv8 does not. An objectness is sparse
    (most anchors near 0) while a YOLOX class score over background anchors is not."""
    if len(scores) < 2:
        return False
    first = float(fields[:, scores[0]].mean())
    typical = float(np.median([fields[:, f].mean() for f in scores[1:]]))
    # YOLOX's class scores are conditional on an object (trained on positive anchors only): dense over background,
    # beside one sparse objectness. YOLOv8's class scores are joint: each is sparse like an objectness would be, and
    # the first is merely a class rarer than the rest (a mean of the others, lifted by one common class, called it
    # an objectness and multiplied every score by it). So: the first field sparse, the typical other field dense.
    return first < SPARSE_SCORE <= typical


SPARSE_SCORE = 0.05  # a score field whose mean over anchors is below this is ~0 on background anchors


# A field grid (a keypoint or dense-prediction head writing several maps into one output: LEADER's minutiae head is
# [H, W, 4] of a position heatmap, a direction, a type and an in-graph NMS's peaks) has at most this many fields along
# one axis, the two grid axes at least SMALL each. Judged as one cosine, the fields' scales mix (the direction in
# radians outweighs the probabilities) and an angle's wrap from +pi to -pi reads as a sign error; each field is
# judged by what it is instead (analysis/decisions.py), the worst field deciding.
MAX_GRID_FIELDS = 16
FIELD_KINDS = ("map", "peaks", "angle", "tensor")
# A field in [0, 1] that is exactly 0 on this share of its grid or more is a peak map: a non-maximum suppression in
# the graph (MaxPool then Equal) kept only local maxima. Its decisions are the peaks, not the pixels.
PEAKS_ZERO_SHARE = 0.95
# A field within [-pi, pi] (an atan2) spanning at least this much of the circle is an angle: compared modulo 2 pi.
ANGLE_SPAN = 1.5 * math.pi


def _field_grid(arrays: Sequence[np.ndarray], require_decisions: bool = True) -> OutputKind | None:
    """A grid of a few fields along one axis ([.., H, W, C] or [.., C, H, W]), with at least one field that has
    decisions (a map, peaks) or an angle (unless declared: *require_decisions* False)."""
    shape = arrays[0].shape if arrays else ()
    if any(a.shape != shape or a.dtype.kind != "f" for a in arrays):
        return None
    split = _grid_split(shape, [i for i, n in enumerate(shape) if n > 1])
    if split is None or shape[split[0]] > MAX_GRID_FIELDS:
        return None
    axis = split[0]
    stacked = np.moveaxis(np.stack(arrays[:32]), axis + 1, 0).reshape(shape[axis], -1)
    kinds = tuple(_field_kind(field) for field in stacked)
    if require_decisions and all(k == "tensor" for k in kinds):
        return None
    named = ", ".join(f"{i}: {k}" for i, k in enumerate(kinds))
    return OutputKind("fields", f"a grid of {shape[axis]} fields along axis {axis} ({named}): each judged by its kind",
                      fields_axis=axis, field_kinds=kinds)


def _grid_split(shape: Sequence[int], long: Sequence[int]) -> tuple[int, tuple[int, int]] | None:
    """(channel axis, grid axes) when the axes *long* of *shape* are three: one shorter than each of the other two,
    which are at least SMALL long ([.., C, H, W] or [.., H, W, C]); None otherwise."""
    if len(long) != 3:
        return None
    axis = min(long, key=lambda i: shape[i])
    grid = tuple(i for i in long if i != axis)
    if shape[axis] < 2 or min(shape[i] for i in grid) < SMALL or shape[axis] >= min(shape[i] for i in grid):
        return None
    return axis, grid


def grid_axes(shape: Sequence[int]) -> frozenset[int]:
    """The two spatial axes of a per-sample output shaped [1?, C, H, W] or [1?, H, W, C] (the batch axis 0 aside), empty
    for any other shape. Slices along them are rows or columns of pixels, not fields of different scales: a text
    detector's blank image row has no signal, and its 'worst slice' compared nothing but noise (session 31's CRAFT
    score map, [1, 2, 160, 160], sliced along its rows)."""
    first = 1 if len(shape) > 1 else 0
    split = _grid_split(shape, [i for i in range(first, len(shape)) if shape[i] > 1])
    return frozenset(split[1]) if split else frozenset()


def _field_kind(values: np.ndarray) -> str:
    if not np.all(np.isfinite(values)):
        return "tensor"
    low, high = float(values.min()), float(values.max())
    if _in_unit(low, high):
        return "peaks" if float(np.mean(values == 0.0)) >= PEAKS_ZERO_SHARE else "map"
    if low >= -math.pi - 1e-3 and high <= math.pi + 1e-3 and high - low >= ANGLE_SPAN:
        return "angle"
    return "tensor"


def _is_embedding(name: str, shape: tuple[int, ...], producer_op: str | None) -> bool:
    vector = [n for n in shape if n > 1]
    return len(vector) == 1 and vector[0] >= SMALL and (
        bool(_EMBEDDING_NAME.search(name)) or producer_op in _EMBEDDING_OPS)


def producer_ops(precision: Mapping[str, Any] | None) -> dict[str, str]:
    """Tensor name -> op type of the node producing it, from quant/precision_summary.json."""
    ops: dict[str, str] = {}
    for node in (precision or {}).get("nodes", []) if isinstance(precision, Mapping) else []:
        for output in node.get("outputs") or []:
            if isinstance(output, str) and isinstance(node.get("op_type"), str):
                ops[output] = node["op_type"]
    # A quantized graph output is written by its DequantizeLinear, not by the layer that computed it: onnxruntime's
    # quantize_static renames the layer's output to "<output>_QuantizeLinear_Input" and lets the Q/DQ pair end on
    # the output's own name. The output's producer is the layer before the pair.
    for pair in (precision or {}).get("qdq", []) if isinstance(precision, Mapping) else []:
        tensor = pair.get("tensor") if isinstance(pair, Mapping) else None
        if isinstance(tensor, str) and tensor.endswith(_QDQ_INPUT) and not pair.get("consumers") and tensor in ops:
            ops.setdefault(tensor[:-len(_QDQ_INPUT)], ops[tensor])
    return ops


_QDQ_INPUT = "_QuantizeLinear_Input"
