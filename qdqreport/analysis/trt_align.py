"""Align the layers of two engines (FP16 vs INT8, or before/after a Q/DQ change) although fusions differ.

Two passes, like a diff of two programs:
1. exact: layers that share an ONNX node name (TensorRT 10+ Metadata) are the same layers;
2. signature: the remaining compute and "other" layers are aligned in execution order by a
   signature (operation kind + first output's dimensions without the batch dimension), with a
   longest-matching-blocks alignment (difflib), so an extra Reformat or a fused Add on one side
   does not shift everything after it. TREx aligns by type and dimensions too; this alignment
   is our own and is deterministic.
Reformat and NoOp layers are never aligned: they exist because of the precisions, so they are
listed as present on one side only.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from qdqreport.analysis.trt_layers import Engine, Layer


@dataclass(frozen=True)
class AlignedPair:
    a: Layer | None
    b: Layer | None
    how: str  # "onnx" (shared ONNX node name), "signature", or "unmatched"

    @property
    def precision_changed(self) -> bool:
        return self.a is not None and self.b is not None and self.a.precision != self.b.precision

    @property
    def output_changed(self) -> bool:
        """Same input precision but another output type: e.g. an INT8 conv whose output Q fused on one side only."""
        return self.a is not None and self.b is not None and self.a.output_precision != self.b.output_precision


def signature(layer: Layer) -> tuple:
    dims = layer.outputs[0].dims[1:] if layer.outputs else ()
    return layer.kind, dims


def align(first: Engine, second: Engine) -> list[AlignedPair]:
    """Pairs of layers in the order of *first* (unmatched layers of *second* at their position)."""
    alignable_a = [l for l in first.layers if l.role not in ("reformat", "noop")]
    alignable_b = [l for l in second.layers if l.role not in ("reformat", "noop")]
    pairs = _by_onnx_names(alignable_a, alignable_b)
    matched_a = {id(p.a) for p in pairs}
    matched_b = {id(p.b) for p in pairs}
    rest_a = [l for l in alignable_a if id(l) not in matched_a]
    rest_b = [l for l in alignable_b if id(l) not in matched_b]
    pairs += _by_signature(rest_a, rest_b)
    paired_a = {id(p.a) for p in pairs if p.a is not None}
    paired_b = {id(p.b) for p in pairs if p.b is not None}
    pairs += [AlignedPair(l, None, "unmatched") for l in first.layers if id(l) not in paired_a]
    pairs += [AlignedPair(None, l, "unmatched") for l in second.layers if id(l) not in paired_b]
    return sorted(pairs, key=_order)


def _by_onnx_names(a_layers: list[Layer], b_layers: list[Layer]) -> list[AlignedPair]:
    owner = {}
    for layer in b_layers:
        for name in layer.onnx_names:
            owner.setdefault(name, layer)
    pairs, used = [], set()
    for layer in a_layers:
        match = next((owner[n] for n in layer.onnx_names if n in owner and id(owner[n]) not in used), None)
        if match is not None:
            used.add(id(match))
            pairs.append(AlignedPair(layer, match, "onnx"))
    return pairs


def _by_signature(a_layers: list[Layer], b_layers: list[Layer]) -> list[AlignedPair]:
    matcher = SequenceMatcher(None, [signature(l) for l in a_layers], [signature(l) for l in b_layers], autojunk=False)
    pairs = []
    for block in matcher.get_matching_blocks():
        pairs += [AlignedPair(a_layers[block.a + k], b_layers[block.b + k], "signature") for k in range(block.size)]
    return pairs


def _order(pair: AlignedPair) -> tuple:
    # First engine's order; a layer only in the second engine sorts by its own index, after equals.
    if pair.a is not None:
        return pair.a.index, 0, pair.b.index if pair.b else -1
    return pair.b.index, 1, pair.b.index


def diff_summary(pairs: list[AlignedPair]) -> dict[str, int]:
    """Counts for a report line: aligned layers, precision changes, and layers on one side only."""
    return {"aligned": sum(p.a is not None and p.b is not None for p in pairs),
            "by_onnx_name": sum(p.how == "onnx" for p in pairs),
            "precision_changed": sum(p.precision_changed for p in pairs),
            "output_changed": sum(p.output_changed for p in pairs),
            "only_first": sum(p.b is None for p in pairs), "only_second": sum(p.a is None for p in pairs)}
