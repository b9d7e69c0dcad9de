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

from dataclasses import dataclass
from typing import Sequence

import numpy as np

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
    under 2 x MARGIN (0.55 against 0.45) is a near tie: shown, not counted, as for thresholded probabilities."""
    changed = near = rows = 0
    per_sample = []
    for ref, cand in pairs:
        if ref.ndim == 0 or ref.shape[-1] < 2:
            return None
        r, c = ref.reshape(-1, ref.shape[-1]), cand.reshape(-1, cand.shape[-1])
        flips = r.argmax(-1) != c.argmax(-1)
        tie = _near_tie(r) if _probability_rows(r) else np.zeros(len(r), dtype=bool)
        changed_here = int(np.sum(flips & ~tie))
        changed, near, rows = changed + changed_here, near + int(np.sum(flips & tie)), rows + len(r)
        per_sample.append(1.0 - changed_here / max(1, len(r)))
    share = 1.0 - changed / max(1, rows)
    short = f"{changed:,} of {rows:,} top-1 decisions change" + (f", plus {near:,} near ties" if near else "")
    detail = (f"{changed:,} of {rows:,} top-1 decisions change (top-1 agreement {percent(share)})"
              + (f"; {near:,} near-tie flip(s), top-2 gap under {2 * MARGIN:g}, not counted" if near else ""))
    return Decisions("top-1 agreement", share, changed, rows, len(pairs), tuple(per_sample), detail, short)


def _probability_rows(rows: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(rows)) and rows.min() >= 0.0 and np.allclose(rows.sum(-1), 1.0, atol=1e-3))


def _near_tie(rows: np.ndarray) -> np.ndarray:
    top2 = np.sort(rows, axis=-1)[:, -2:]
    return (top2[:, 1] - top2[:, 0]) < 2 * MARGIN


def _probabilities(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    material = near = total = 0
    per_sample = []
    # Rows that sum to 1 (a softmax declared as probabilities) hold one decision each, not one per class: a 2-class
    # row that flips at 0.5 flips both columns at once and is one changed decision.
    rows = all(r.ndim >= 1 and r.shape[-1] >= 2 and _probability_rows(r.reshape(-1, r.shape[-1])) for r, _ in pairs)
    for ref, cand in pairs:
        flips = (ref >= threshold) != (cand >= threshold)
        decided = np.abs(ref - threshold) >= MARGIN
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
    what = "rows' decisions (rows sum to 1: one decision per row)" if rows else "decisions"
    detail = f"{material:,} of {total:,} {what} at {threshold:g} flip" + (f"; {near:,} near-tie flip(s) not counted" if near else "")
    return Decisions("threshold decisions", 1.0 - material / max(1, total), material, total, len(pairs),
                     tuple(per_sample), detail, f"{material:,} of {total:,} decisions flip at {threshold:g}")


def _map(kind: OutputKind, pairs: list, threshold: float) -> Decisions:
    """IoU of the binarised maps. A pixel that differs only because its reference sat within MARGIN of the threshold
    is a near tie, as for probabilities: left out of the union (shown, never counted). A soft map (a note
    posteriorgram) has many pixels there, and INT8 noise moves them across without changing a decision."""
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
    total = sum(int(r.size) for r, _ in pairs)
    same = sum(int(np.sum(r == c)) for r, c in pairs)
    per_sample = tuple(float(np.mean(r == c)) if r.size else 1.0 for r, c in pairs)
    text = f"{total - same:,} of {total:,} values differ"
    return Decisions("exact matches", same / max(1, total), total - same, total, len(pairs), per_sample, text, text)


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
    if kind.fields_axis is None or not kind.score_fields:
        return None
    lost = extra = kept_total = near = moved = both_total = 0
    pixel_boxes = True  # raw head outputs (grid offsets, log sizes) have negative fields: their moves are not judged
    per_sample = []
    for ref, cand in pairs:
        r, c = _fields(ref, kind.fields_axis), _fields(cand, kind.fields_axis)
        conf_r, conf_c = _confidence(r, kind), _confidence(c, kind)
        kept_r, kept_c = conf_r >= threshold, conf_c >= threshold
        decided = np.abs(conf_r - threshold) >= MARGIN
        lost_here = int(np.sum(kept_r & ~kept_c & decided))
        extra_here = int(np.sum(~kept_r & kept_c & decided))
        both = kept_r & kept_c
        pixel_boxes = pixel_boxes and bool(np.all(r[:BOX_FIELDS] >= 0))
        moved_here = int(np.sum(_box_moved(r[:BOX_FIELDS, both], c[:BOX_FIELDS, both]))) if pixel_boxes else 0
        lost, extra, moved = lost + lost_here, extra + extra_here, moved + moved_here
        near += int(np.sum((kept_r != kept_c) & ~decided))
        kept_total += int(np.sum(kept_r))
        both_total += int(np.sum(both))
        per_sample.append(1.0 - min(1.0, (lost_here + extra_here + moved_here) / max(1, int(np.sum(kept_r)))))
    changed = lost + extra + moved
    boxes = ("" if not both_total else
             f", {moved:,} of {both_total:,} kept boxes moved by more than {BOX_MOVED:.0%} of their size" if pixel_boxes
             else "; box fields are raw head outputs (not judged)")
    detail = (f"{kept_total:,} reference detections at score {threshold:g}: {lost:,} lost, {extra:,} extra{boxes}"
              + (f"; {near:,} near-tie change(s) not counted" if near else ""))
    agreement = 1.0 - min(1.0, changed / max(1, kept_total)) if kept_total or changed else 1.0
    short = (f"{lost:,} of {kept_total:,} detections lost, {extra:,} extra"
             + (f", {moved:,} boxes moved" if pixel_boxes and moved else ""))
    return Decisions("detections", agreement, changed, max(kept_total, changed), len(pairs), tuple(per_sample), detail,
                     short)


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


_MEASURES = {"class_scores": _class_scores, "probabilities": _probabilities, "map": _map, "index": _index,
             "detections": _detections}
