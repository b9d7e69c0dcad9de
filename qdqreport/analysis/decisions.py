"""Decision-level agreement of two stages' stored outputs, by output kind (issue 10, item 2).

Cosine measures how far the numbers moved; a user asks whether the *decisions* moved: a class, a
speech/non-speech call, a kept detection, a text pixel. Each function here compares the reference
and candidate outputs of the stored samples (collect `--store-outputs`) and returns the share of
decisions that agree. Pure NumPy; analysis/agreement.py turns the share into agree/degrade/collapse.

A flip counts as *material* only when the reference was at least MARGIN away from the threshold:
a score of 0.49 becoming 0.51 is a near tie, not a changed decision (it flips between two FP32
runs on different hardware too). Near-tie flips are counted and shown, never decisive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from qdqreport.analysis.metrics import error_stats
from qdqreport.analysis.output_kinds import BOX_FIELDS, OutputKind
from qdqreport.wording import percent

MARGIN = 0.1  # |p_ref - threshold| below this is a near tie
BOX_MOVED = 0.1  # a kept box whose coordinates moved by more than 10% of its size counts as changed


@dataclass(frozen=True)
class Decisions:
    measure: str  # what was compared: "top-1 agreement", "threshold decisions", "map IoU", ...
    agreement: float  # share of decisions that agree (IoU for maps), 0..1
    changed: int  # decisions that changed materially
    total: int  # decisions compared
    samples: int  # samples measured (the stored ones)
    per_sample: tuple[float, ...]  # agreement of each measured sample
    detail: str  # the full line for the tables: "2 of 1,200 decisions at 0.5 flip; 5 near-tie flip(s) not counted"
    short: str = ""  # the few words a verdict quotes: "2 of 1,200 decisions flip at 0.5"
    # A field grid's fields, each measured by its own kind: (label, Decisions); analysis/agreement.py judges each and
    # the worst decides. Empty for every other kind.
    parts: tuple[tuple[str, "Decisions"], ...] = ()
    per_sample_changed: tuple[int, ...] = ()  # changed values of each measured sample (integer outputs; else empty)


def measure(kind: OutputKind, reference: Sequence[np.ndarray], candidate: Sequence[np.ndarray],
            threshold: float, gate: tuple[Sequence[np.ndarray], Sequence[np.ndarray]] | None = None) -> Decisions | None:
    """Decision agreement of *candidate* with *reference* for an output of *kind*; None when not decidable.

    *gate*: the reference and candidate values of kind.gated_by (per-position scores of an index output)."""
    pairs = [(np.asarray(r), np.asarray(c)) for r, c in zip(reference, candidate)
             if r is not None and c is not None and np.shape(r) == np.shape(c)]
    if not pairs:
        return None
    if kind.kind == "index" and gate is not None:
        return _gated_index(kind, reference, candidate, gate, threshold)
    judge = _MEASURES.get(kind.kind)
    return judge(kind, pairs, threshold) if judge else None


def _class_scores(kind: OutputKind, pairs: list, threshold: float) -> Decisions | None:
    """Top-1 agreement; where the scores are probabilities (rows sum to 1), a flip whose reference top-2 gap was
    under 2 x MARGIN (0.55 against 0.45) is a near tie: shown, not counted, as for thresholded probabilities. Logits
    are read through their softmax, the model's own confidence, the same way (a new user's key CNN: 8 of 128 keys
    "changed", every one between two keys FP32 put within 0.2 of each other, ambiguous music; the 96 labelled chord
    progressions all kept)."""
    changed = near = neighbours = rows = 0
    per_sample = []
    if any(ref.ndim == 0 or ref.shape[-1] < 2 for ref, _ in pairs):
        return None
    ordered = ordered_bins([ref for ref, _ in pairs])
    for ref, cand in pairs:
        r, c = ref.reshape(-1, ref.shape[-1]), cand.reshape(-1, cand.shape[-1])
        flips = r.argmax(-1) != c.argmax(-1)
        tie = (_near_tie(r) if _probability_rows(r) else _near_tie(_softmax(r)) if _logit_rows(r)
               else np.zeros(len(r), dtype=bool))
        # An ordered output's flip to the next bin is a measurement's rounding (a pitch one bin of 33 cents off), not
        # another class.
        step = (np.abs(r.argmax(-1) - c.argmax(-1)) == 1) & ~tie if ordered else np.zeros(len(r), dtype=bool)
        changed_here = int(np.sum(flips & ~tie & ~step))
        changed, near, rows = changed + changed_here, near + int(np.sum(flips & tie)), rows + len(r)
        neighbours += int(np.sum(flips & step))
        per_sample.append(1.0 - changed_here / max(1, len(r)))
    share = 1.0 - changed / max(1, rows)
    # Several rows a sample (a CTC recognizer's 40 time steps): say so, or "0 of 200" reads as 200 samples (a new
    # user's 200-line set, 5 stored samples x 40 steps).
    per = f" ({len(pairs):,} samples × {rows // len(pairs):,} positions)" if rows != len(pairs) and pairs else ""
    short = (f"{changed:,} of {rows:,} top-1 decisions{per} change" + (f", plus {near:,} near ties" if near else "")
             + (f", {neighbours:,} to the next bin" if neighbours else ""))
    detail = (f"{changed:,} of {rows:,} top-1 decisions{per} change (top-1 agreement {percent(share)})"
              + (f"; {near:,} near-tie flip(s), top-2 gap under {2 * MARGIN:g}, not counted" if near else "")
              + (f"; {neighbours:,} flip(s) to the next bin of an ordered output (its classes are bins of one "
                 f"quantity: FP32's top two are neighbours in {ORDERED_SHARE:.0%} of rows or more), not counted"
                 if neighbours else ""))
    return Decisions("top-1 agreement", share, changed, rows, len(pairs), tuple(per_sample), detail, short)


# Class scores over at least ORDERED_MIN_CLASSES classes whose FP32 top-two classes are neighbours in ORDERED_SHARE of
# rows or more are bins of one quantity (a pitch, an age, a depth): a new user's pitch estimator, 384 bins of 20 cents,
# 92% of rows; healthy under quantize_static's defaults, it read "208 of 1,701 top-1 decisions change: collapses",
# 196 of its 244 flips to the next bin, which the package's own decode absorbs. A classifier's classes have no order:
# its top two are neighbours about 2 / classes of the time (no class-score output of the corpus reaches 0.4).
ORDERED_MIN_CLASSES = 32
ORDERED_SHARE = 0.8


def ordered_bins(references: Sequence[np.ndarray]) -> bool:
    """Whether class scores are bins of one ordered quantity, read from FP32's own rows (ORDERED_SHARE). Bins are a
    fixed grid: scores whose count differs between samples (an attention over each sample's atoms) are not."""
    rows = [np.asarray(r).reshape(-1, np.shape(r)[-1]) for r in references if np.ndim(r) and np.shape(r)[-1] >= 2]
    if not rows or len({r.shape[-1] for r in rows}) != 1 or rows[0].shape[-1] < ORDERED_MIN_CLASSES:
        return False
    table = np.concatenate(rows)
    # The two largest of each row, unordered (their distance is what counts): a partition, not a sort of every class
    # (a CTC recognizer's 200 x 40 rows of 6,625 classes: 2.7 s sorted, 0.16 s partitioned).
    top2 = np.argpartition(table, -2, axis=-1)[:, -2:]
    return bool(np.mean(np.abs(top2[:, 1] - top2[:, 0]) == 1) >= ORDERED_SHARE)


def _logit_rows(rows: np.ndarray) -> bool:
    """Rows that read as logits: finite and reaching beyond [-1, 1] (scores bounded there, cosine similarities, have
    no temperature to read a confidence from)."""
    return bool(np.all(np.isfinite(rows)) and np.max(np.abs(rows)) > 1.0)


def _softmax(rows: np.ndarray) -> np.ndarray:
    """Logit rows (finite: _logit_rows) as the model's own class probabilities."""
    z = rows.astype(np.float64)
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def _probability_rows(rows: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(rows)) and rows.min() >= 0.0 and np.allclose(rows.sum(-1), 1.0, atol=1e-3))


def _near_tie(rows: np.ndarray) -> np.ndarray:
    top2 = np.sort(rows, axis=-1)[:, -2:]
    return (top2[:, 1] - top2[:, 0]) < 2 * MARGIN


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(values.astype(np.float64), -60.0, 60.0)))


def _probabilities(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    material = near = total = 0
    per_sample = []
    # Rows that sum to 1 (a softmax declared as probabilities) hold one decision each, not one per class: a 2-class
    # row that flips at 0.5 flips both columns at once and is one changed decision.
    rows = all(r.ndim >= 1 and r.shape[-1] >= 2 and _probability_rows(r.reshape(-1, r.shape[-1])) for r, _ in pairs)
    if kind.logit:  # a binary logit is decided as its sigmoid is
        pairs = [(_sigmoid(ref), _sigmoid(cand)) for ref, cand in pairs]
    for ref, cand in pairs:
        flips = (ref >= threshold) != (cand >= threshold)
        # A near tie is a flip both sides of which sit within MARGIN of the threshold: rounding noise. A reference near
        # the threshold whose candidate moved far across it (0.22 -> 0.003 at 0.2: a new user's open_nsfw) changed.
        decided = (np.abs(ref - threshold) >= MARGIN) | (np.abs(cand - threshold) >= MARGIN)
        changed, tied = flips & decided, flips & ~decided
        if rows:
            width = ref.shape[-1]
            changed, tied = changed.reshape(-1, width).any(-1), tied.reshape(-1, width).any(-1)
            tied &= ~changed
        material_here = int(np.sum(changed))
        material += material_here
        near += int(np.sum(tied))
        total += changed.size
        per_sample.append(1.0 - material_here / max(1, changed.size))
    what = ("rows' decisions (rows sum to 1: one decision per row)" if rows
            else "decisions of the logit's sigmoid" if kind.logit else "decisions")
    detail = f"{material:,} of {total:,} {what} at {threshold:g} flip" + (f"; {near:,} near-tie flip(s) not counted" if near else "")
    return Decisions("threshold decisions", 1.0 - material / max(1, total), material, total, len(pairs),
                     tuple(per_sample), detail, f"{material:,} of {total:,} decisions flip at {threshold:g}")


def _map(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    """IoU of the binarised maps. A pixel that differs only because its reference sat within MARGIN of the threshold
    is a near tie: left out of the union (shown, never counted). Unlike a probability, a map pixel whose candidate moved
    far across stays a near tie: a soft heatmap's shoulders move so under INT8 while its peaks, the decisions, stay
    (CenterFace calibrated on ImageNet-normalised data kept 51 of 53 faces, yet counting those pixels read a collapse).
    A soft map (a note posteriorgram) has many pixels there, and INT8 noise moves them across without changing a
    decision."""
    inter = union = near = 0
    per_sample = []
    for ref, cand in pairs:
        a, b = ref >= threshold, cand >= threshold
        tie = int(np.sum((a != b) & (np.abs(ref - threshold) < MARGIN)))
        i, u = int(np.sum(a & b)), int(np.sum(a | b)) - tie
        inter, union, near = inter + i, union + u, near + tie
        per_sample.append(1.0 if u == 0 else i / u)
    iou = 1.0 if union == 0 else inter / union
    # The plain IoU (near ties counted) beside the judged one: on a smooth map most flips can be near ties (a new
    # user's saliency map: 0.940 judged, 0.823 plain), and a reader comparing with their own IoU must see both.
    plain = f", {inter / (union + near):.3f} counting them" if near else ""
    detail = (f"IoU {iou:.3f} of the maps binarised at {threshold:g} ({union - inter:,} of {union:,} pixels in the "
              f"union differ" + (f"; {near:,} near-tie pixel(s) not counted{plain}" if near else "") + ")")
    return Decisions("map IoU", iou, union - inter, union, len(pairs), tuple(per_sample), detail,
                     f"map IoU {iou:.3f} at {threshold:g}")


def _index(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    """Exact matches of integer outputs, over the positions that hold something: the trailing run of the last axis
    where both stages write 0 (a tagger's [PAD] after the sentence, CTC blanks after the text) decides nothing, and
    counting it made a tagger whose 64 sentences were all tagged otherwise "92% exact matches" (a new user's
    ALBERT tagger: 1,289 of 16,384 ids differ, and 12,829 of the 16,384 are padding in both)."""
    kept = [~_trailing_padding(r, c) for r, c in pairs]
    total = sum(int(k.sum()) for k in kept)
    same = sum(int(np.sum((r == c) & k)) for (r, c), k in zip(pairs, kept))
    per_sample = tuple(float(np.mean((r == c)[k])) if k.any() else 1.0 for (r, c), k in zip(pairs, kept))
    changed = tuple(int(np.sum((r != c) & k)) for (r, c), k in zip(pairs, kept))
    padding = sum(int(r.size) for r, _ in pairs) - total
    text = f"{total - same:,} of {total:,} values differ"
    detail = text + (f" ({padding:,} trailing padding position(s), 0 in both stages, not compared)" if padding else "")
    return Decisions("exact matches", same / max(1, total), total - same, total, len(pairs), per_sample, detail, text,
                     per_sample_changed=changed)


def _trailing_padding(ref: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Positions at the end of the last axis where both stages hold 0, up to the last position either fills."""
    if ref.ndim == 0 or ref.shape[-1] < 2:
        return np.zeros(ref.shape, dtype=bool)
    both = np.flip((ref == 0) & (cand == 0), axis=-1)
    return np.flip(np.logical_and.accumulate(both, axis=-1), axis=-1)


def _gated_index(kind: OutputKind, reference: Sequence, candidate: Sequence, gate: tuple, threshold: float
                 ) -> Decisions | None:
    """Labels compared only where the gate's score keeps the position (>= threshold) in either stage."""
    rows = [(np.asarray(r), np.asarray(c), np.asarray(gr), np.asarray(gc))
            for r, c, gr, gc in zip(reference, candidate, *gate)
            if r is not None and c is not None and gr is not None and gc is not None]
    rows = [row for row in rows if row[0].shape == row[1].shape == row[2].shape == row[3].shape]
    if not rows:
        return None
    kept = [(gr >= threshold) | (gc >= threshold) for _, _, gr, gc in rows]
    differ = [int(np.sum((r != c) & k)) for (r, c, _, _), k in zip(rows, kept)]
    total, changed = sum(int(k.sum()) for k in kept), sum(differ)
    per_sample = tuple(1.0 - d / max(1, int(k.sum())) for d, k in zip(differ, kept))
    text = f"{changed:,} of {total:,} labels differ where {kind.gated_by} ≥ {threshold:g}"
    return Decisions("exact matches", 1.0 - changed / max(1, total), changed, total, len(rows), per_sample,
                     text + f" (labels of positions scored below {threshold:g} decide nothing: not compared)", text)


def _detections(kind: OutputKind, pairs: list, threshold: float) -> Decisions | None:
    """Detections as a detector's decode keeps them: the anchors scoring at least *threshold*, one box per object
    after non-maximum suppression (NMS_IOU, per class) when the box fields are pixel boxes, each reference detection
    matched to a candidate one of its class at IoU >= MATCH_IOU. A raw head's anchors (grid offsets, log sizes: some
    box field negative) are compared anchor by anchor, as no box can be drawn from them.

    Counting the anchors above the threshold instead overstated a YOLOv8 head's change (a new user's NudeNet: 22 of
    186 anchors "lost", a collapse, where the package's own decode kept 40 of 44 detections, as its healthy recipe)."""
    if kind.fields_axis is None or not kind.score_fields:
        return None
    fields = [(_fields(ref, kind.fields_axis), _fields(cand, kind.fields_axis)) for ref, cand in pairs]
    if not all(np.all(r[:BOX_FIELDS] >= 0) for r, _ in fields):
        return _anchor_detections(kind, fields, threshold)
    count = _Count()
    per_sample = []
    for r, c in fields:
        here = _matched(_detected(r, kind, threshold), _detected(c, kind, threshold), threshold)
        count.add(here)
        per_sample.append(here.kept_share)
    return count.decisions(len(pairs), tuple(per_sample), threshold, pixel_boxes=True, unit="detections after NMS")


# Greedy non-maximum suppression, per class, at this IoU (YOLO's decoders use 0.45-0.7; cv2.dnn.NMSBoxes callers
# mostly 0.45-0.5), and the IoU at which a candidate detection is the same object as a reference one.
NMS_IOU = 0.5
MATCH_IOU = 0.5
# At most this many anchors per sample enter NMS and this many detections leave it, the best scored (YOLO's own
# decoders cap both: max_nms, max_det): a head whose every anchor passes the threshold (calibration on noise can do
# that) must not make the report quadratic in its anchors.
MAX_CANDIDATES = 1000
MAX_DETECTIONS = 100


@dataclass
class _Detected:
    boxes: np.ndarray  # [n, 4] corners x1, y1, x2, y2
    scores: np.ndarray  # [n] confidence
    classes: np.ndarray  # [n] class index (argmax of the class scores)


@dataclass
class _Count:
    reference: int = 0
    lost: int = 0
    extra: int = 0
    moved: int = 0
    both: int = 0
    near: int = 0

    @property
    def changed(self) -> int:
        return self.lost + self.extra + self.moved

    @property
    def kept_share(self) -> float:
        """1 - changed / reference (0 when more changed than the reference held; 1 with nothing to keep or change)."""
        return 1.0 - min(1.0, self.changed / max(1, self.reference))

    def add(self, other: "_Count") -> None:
        for name in ("reference", "lost", "extra", "moved", "both", "near"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def unmatched_reference(self, score: float, threshold: float) -> None:
        """A reference detection or peak nothing in the candidate matched: lost, or a near tie within MARGIN."""
        if abs(score - threshold) < MARGIN:
            self.near += 1
        else:
            self.lost += 1

    def unmatched_candidates(self, scores: np.ndarray, threshold: float) -> None:
        """The candidate's detections or peaks left unmatched: extra, or near ties within MARGIN."""
        near = np.abs(scores - threshold) < MARGIN
        self.near += int(np.sum(near))
        self.extra += int(np.sum(~near))

    def decisions(self, samples: int, per_sample: tuple[float, ...], threshold: float, pixel_boxes: bool | None,
                  unit: str) -> Decisions:
        """*pixel_boxes*: True for drawn boxes (moves judged), False for a raw head's box fields, None for no boxes
        (peaks of a map)."""
        boxes = ("" if not self.both or pixel_boxes is None else
                 f", {self.moved:,} of {self.both:,} kept boxes moved by more than {BOX_MOVED:.0%} of their size"
                 if pixel_boxes else "; box fields are raw head outputs (not judged)")
        detail = (f"{self.reference:,} reference {unit} at score {threshold:g}: {self.lost:,} lost, {self.extra:,} "
                  f"extra{boxes}" + (f"; {self.near:,} near-tie change(s) not counted" if self.near else ""))
        agreement = self.kept_share
        short = (f"{self.lost:,} of {self.reference:,} {'peaks' if pixel_boxes is None else 'detections'} lost, "
                 f"{self.extra:,} extra"
                 + (f", {self.moved:,} boxes moved" if pixel_boxes and self.moved else ""))
        return Decisions("detections", agreement, self.changed, max(self.reference, self.changed), samples,
                         per_sample, detail, short)


def _detected(fields: np.ndarray, kind: OutputKind, threshold: float) -> _Detected:
    """The detections a decoder keeps from one sample's [fields, anchors]: score >= threshold, then NMS per class."""
    confidence = _confidence(fields, kind)
    keep = np.flatnonzero(confidence >= threshold)
    if len(keep) > MAX_CANDIDATES:
        keep = keep[np.argsort(-confidence[keep], kind="stable")[:MAX_CANDIDATES]]
    class_scores = fields[list(kind.score_fields[1:] if kind.objectness else kind.score_fields)]
    boxes = _corners(fields[:BOX_FIELDS, keep]).T
    scores, classes = confidence[keep], class_scores[:, keep].argmax(axis=0)
    chosen = _nms(boxes, scores, classes)
    return _Detected(boxes[chosen], scores[chosen], classes[chosen])


def _corners(boxes: np.ndarray) -> np.ndarray:
    """[4, n] boxes as corners; centre-size boxes (a positive w, h not beyond x, y) converted, as _box_moved reads."""
    if boxes.shape[1] == 0 or np.all(boxes[2:4] > boxes[0:2]):
        return boxes
    half = boxes[2:4] / 2
    return np.concatenate([boxes[0:2] - half, boxes[0:2] + half])


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of one corner box with each of *others* ([n, 4]); plain column arithmetic: NMS calls it per detection."""
    width = np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0])
    height = np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1])
    inter = np.maximum(width, 0) * np.maximum(height, 0)
    area = max(box[2] - box[0], 0) * max(box[3] - box[1], 0)
    areas = np.maximum(others[:, 2] - others[:, 0], 0) * np.maximum(others[:, 3] - others[:, 1], 0)
    return inter / np.maximum(area + areas - inter, 1e-12)


def _nms(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray) -> np.ndarray:
    order, kept = np.argsort(-scores, kind="stable"), []
    while len(order) and len(kept) < MAX_DETECTIONS:
        best, order = order[0], order[1:]
        kept.append(best)
        order = order[~((_iou(boxes[best], boxes[order]) > NMS_IOU) & (classes[order] == classes[best]))]
    return np.array(kept, dtype=int)


def _matched(reference: _Detected, candidate: _Detected, threshold: float) -> _Count:
    """Each reference detection, best score first, takes the unmatched candidate of its class it overlaps most (IoU
    >= MATCH_IOU): kept (moved when its box moved by more than BOX_MOVED of its size), else lost; unmatched candidates
    are extra. A lost or extra detection scored within MARGIN of the threshold is a near tie, not counted."""
    count = _Count(reference=len(reference.scores))
    free = np.ones(len(candidate.scores), dtype=bool)
    for i in np.argsort(-reference.scores, kind="stable"):
        same = np.flatnonzero(free & (candidate.classes == reference.classes[i]))
        overlaps = _iou(reference.boxes[i], candidate.boxes[same]) if len(same) else np.zeros(0)
        if len(same) and overlaps.max() >= MATCH_IOU:
            j = same[int(overlaps.argmax())]
            free[j] = False
            count.both += 1
            count.moved += int(_box_moved(reference.boxes[i][:, None], candidate.boxes[j][:, None])[0])
        else:
            count.unmatched_reference(reference.scores[i], threshold)
    count.unmatched_candidates(candidate.scores[free], threshold)
    return count


def _anchor_detections(kind: OutputKind, fields: list, threshold: float) -> Decisions:
    """Anchor by anchor: a raw head whose box fields cannot be drawn (grid offsets, log sizes)."""
    count = _Count()
    per_sample = []
    for r, c in fields:
        conf_r, conf_c = _confidence(r, kind), _confidence(c, kind)
        kept_r, kept_c = conf_r >= threshold, conf_c >= threshold
        decided = np.abs(conf_r - threshold) >= MARGIN
        here = _Count(reference=int(np.sum(kept_r)), lost=int(np.sum(kept_r & ~kept_c & decided)),
                      extra=int(np.sum(~kept_r & kept_c & decided)), both=int(np.sum(kept_r & kept_c)),
                      near=int(np.sum((kept_r != kept_c) & ~decided)))
        count.add(here)
        per_sample.append(here.kept_share)
    return count.decisions(len(fields), tuple(per_sample), threshold, pixel_boxes=False, unit="detections")


def _fields(array: np.ndarray, axis: int) -> np.ndarray:
    """[fields, anchors] view of a detector head."""
    return np.moveaxis(array, axis, 0).reshape(array.shape[axis], -1)


def _confidence(fields: np.ndarray, kind: OutputKind) -> np.ndarray:
    scores = fields[list(kind.score_fields)]
    if kind.objectness:
        return scores[0] * scores[1:].max(axis=0)
    return scores.max(axis=0)


def _box_moved(ref: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Per kept anchor: did the pixel box move by more than BOX_MOVED of its size (sqrt of its area)?"""
    if ref.shape[1] == 0:
        return np.zeros(0, dtype=bool)
    error = np.abs(cand - ref).max(axis=0)
    # Centre-size boxes have a positive (w, h); corner boxes (x1, y1, x2, y2) have x2 > x1.
    if np.all(ref[2:4] > ref[0:2]):
        size = np.sqrt((ref[2] - ref[0]) * (ref[3] - ref[1]))
    else:
        size = np.sqrt(np.abs(ref[2] * ref[3]))
    return error > BOX_MOVED * np.maximum(size, 1e-6)


def _field_grid(kind: OutputKind, pairs: list, threshold: float) -> Decisions | None:
    """Each field of a grid (output_kinds._field_grid) by its own kind: a map by IoU, peaks by the peaks kept, an
    angle modulo 2 pi, anything else by its cosine. The parts go to analysis/agreement.py, which judges each."""
    if kind.fields_axis is None or len(kind.field_kinds) != pairs[0][0].shape[kind.fields_axis]:
        return None
    parts = []
    for index, field_kind in enumerate(kind.field_kinds):
        field = [(np.take(r, index, kind.fields_axis), np.take(c, index, kind.fields_axis)) for r, c in pairs]
        measured = _FIELD_MEASURES[field_kind](kind, field, threshold)
        parts.append((f"field {index} ({field_kind})", measured))
    first = parts[0][1]
    return Decisions("fields", first.agreement, sum(p.changed for _, p in parts), sum(p.total for _, p in parts),
                     len(pairs), first.per_sample, "; ".join(f"{label}: {p.detail}" for label, p in parts),
                     parts=tuple(parts))


# A peak of the candidate within this many grid cells (rows and columns) of a reference peak is the same peak: an
# INT8 heatmap moves a maximum by a cell where two neighbours nearly tie (afis's own matching allows 3 pixels).
PEAK_RADIUS = 2


def _peaks(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    """Peaks of an NMS'd map (exactly 0 but at local maxima): each reference peak at or above *threshold* matched to
    the nearest free candidate peak within PEAK_RADIUS, else lost; the unmatched candidate peaks are extra. A lost
    or extra peak scored within MARGIN of the threshold is a near tie, not counted."""
    count = _Count()
    per_sample = []
    for ref, cand in pairs:
        here = _matched_peaks(ref, cand, threshold)
        count.add(here)
        per_sample.append(here.kept_share)
    return count.decisions(len(pairs), tuple(per_sample), threshold, pixel_boxes=None, unit="peaks")


def _matched_peaks(ref: np.ndarray, cand: np.ndarray, threshold: float) -> _Count:
    points_r, points_c = np.argwhere(ref >= threshold), np.argwhere(cand >= threshold)
    scores_r, scores_c = ref[ref >= threshold], cand[cand >= threshold]
    count = _Count(reference=len(points_r))
    free = np.ones(len(points_c), dtype=bool)
    for i in np.argsort(-scores_r, kind="stable")[:MAX_CANDIDATES]:
        distance = np.abs(points_c - points_r[i]).max(axis=1) if len(points_c) else np.zeros(0)
        near = np.flatnonzero(free & (distance <= PEAK_RADIUS))
        if len(near):
            free[near[int(np.argmin(distance[near]))]] = False
            count.both += 1
        else:
            count.unmatched_reference(scores_r[i], threshold)
    count.unmatched_candidates(scores_c[free], threshold)
    return count


# An angle that moved by more than this (radians, modulo 2 pi) counts as a changed value.
ANGLE_MOVED = math.pi / 6


def _angles(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    """An angle field (an atan2's output in [-pi, pi]) by the mean cosine of the angle differences: +pi and -pi are the
    same direction, which a plain cosine of the values reads as opposite signs."""
    moved = total = 0
    agreement, per_sample = [], []
    for ref, cand in pairs:
        delta = np.cos(ref.astype(np.float64) - cand.astype(np.float64))
        per_sample.append(float(delta.mean()) if delta.size else 1.0)
        agreement.append(delta.ravel())
        moved, total = moved + int(np.sum(delta < math.cos(ANGLE_MOVED))), total + int(delta.size)
    mean = float(np.concatenate(agreement).mean()) if total else 1.0
    detail = (f"mean cosine of the angle differences {mean:.4f} ({moved:,} of {total:,} angles moved by more than "
              f"{math.degrees(ANGLE_MOVED):.0f}°)")
    return Decisions("angle agreement", mean, moved, total, len(pairs), tuple(per_sample), detail,
                     f"angle agreement {mean:.4f}")


def _field_cosine(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    """A field with no decisions of its own: its median cosine over the samples (as a slice of a mixed-scale tensor)."""
    per_sample = tuple(error_stats(r, c).cosine for r, c in pairs)
    median = float(np.median(per_sample))
    return Decisions("field cosine", median, len(per_sample), len(per_sample), len(pairs), per_sample,
                     f"median cosine {median:.4f} over {len(per_sample):,} samples (no decisions: numbers only)",
                     f"cosine {median:.4f}")


def _image(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    """An image's pixels against the reference's: the PSNR of each sample over the pixel range (kind.peak), the
    median judged (in dB, by analysis/agreement.py's levels). Every sample's pixels are compared, so each counts as
    a decision: one image alone never collapses a set (MIN_CHANGED_TO_COLLAPSE)."""
    peak = kind.peak or 1.0
    per_sample = tuple(_psnr(ref, cand, peak) for ref, cand in pairs)
    median = float(np.median(per_sample))
    detail = f"PSNR {median:.1f} dB (median over {len(pairs):,} samples, peak {peak:g}; worst {min(per_sample):.1f} dB)"
    return Decisions("PSNR", median, len(pairs), len(pairs), len(pairs), per_sample, detail, f"PSNR {median:.1f} dB")


PSNR_IDENTICAL = 99.0  # dB shown for two identical images (no error: an infinite PSNR)


def _psnr(ref: np.ndarray, cand: np.ndarray, peak: float) -> float:
    """10·log10(peak² / MSE) over the finite pixels of both; a NaN pixel in the candidate alone makes it 0 dB."""
    ref, cand = np.asarray(ref, np.float64), np.asarray(cand, np.float64)
    finite = np.isfinite(ref) & np.isfinite(cand)
    if (np.isfinite(ref) & ~np.isfinite(cand)).any() or not finite.any():
        return 0.0
    mse = float(np.mean((cand[finite] - ref[finite]) ** 2))
    return PSNR_IDENTICAL if mse == 0.0 else min(PSNR_IDENTICAL, 10.0 * math.log10(peak * peak / mse))


_FIELD_MEASURES = {"map": _map, "peaks": _peaks, "angle": _angles, "tensor": _field_cosine}
_MEASURES = {"class_scores": _class_scores, "probabilities": _probabilities, "map": _map, "index": _index,
             "detections": _detections, "fields": _field_grid, "image": _image}
