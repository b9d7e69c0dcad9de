"""Precision before and after: which compute nodes of the QDQ graph changed precision, and the Q/DQ counts.

Nodes are aligned in two passes, like analysis/trt_align.py does for engine layers: first by node name;
then the nodes left on both sides (a re-export renamed them) by a structural signature (op type, and
whether the node feeds a graph output) in graph order, with difflib's longest matching blocks so one
inserted node does not shift every later pair.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

LOW_PRECISIONS = ("int8", "uint8", "int4", "fp8")  # "entering/leaving INT8" covers these quantized types
NODE_LIST_LIMIT = 60
COUNT_KEYS = ("nodes", "compute_nodes", "quantized_nodes", "q_nodes", "dq_nodes")


@dataclass(frozen=True)
class NodeChange:
    before: str  # node name in BEFORE ("" when the node exists only in AFTER)
    after: str
    op_type: str
    precision_before: str
    precision_after: str
    how: str  # "name", "signature" or "unmatched"


@dataclass(frozen=True)
class PrecisionDiff:
    counts: dict[str, tuple[Any, Any]]  # COUNT_KEYS -> (before, after)
    float_dtype: tuple[str, str]
    transitions: dict[str, int]  # "int8 → fp16" -> nodes
    left_int8: int  # nodes quantized (INT8/UINT8/INT4/FP8) before and not after
    entered_int8: int
    renamed: int  # pairs aligned by signature rather than name
    changes: tuple[NodeChange, ...]  # cut to NODE_LIST_LIMIT
    changes_total: int
    weights_left_int8: int = 0  # nodes of the same precision (their input still quantized) whose weights went float
    weights_entered_int8: int = 0


def precision_diff(before: dict[str, Any] | None, after: dict[str, Any] | None) -> PrecisionDiff | None:
    """The precision difference of two precision_summary.json documents, or None when either is missing."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return None
    pairs = align_nodes(_nodes(before), _nodes(after))
    changes = [p for p in pairs if p.precision_before != p.precision_after]
    transitions = Counter(f"{c.precision_before or 'absent'} → {c.precision_after or 'absent'}" for c in changes)
    counts_b, counts_a = before.get("counts") or {}, after.get("counts") or {}
    return PrecisionDiff(
        counts={key: (counts_b.get(key), counts_a.get(key)) for key in COUNT_KEYS},
        float_dtype=(str(before.get("float_dtype") or ""), str(after.get("float_dtype") or "")),
        transitions=dict(sorted(transitions.items(), key=lambda item: (-item[1], item[0]))),
        left_int8=sum(_low(c.precision_before) and not _low(c.precision_after) for c in changes),
        entered_int8=sum(_low(c.precision_after) and not _low(c.precision_before) for c in changes),
        weights_left_int8=sum(c.precision_after.endswith(f"{WEIGHTS}float)") for c in changes),
        weights_entered_int8=sum(c.precision_before.endswith(f"{WEIGHTS}float)") for c in changes),
        renamed=sum(p.how == "signature" for p in pairs),
        changes=tuple(changes[:NODE_LIST_LIMIT]), changes_total=len(changes),
    )


def align_nodes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[NodeChange]:
    """Every node of both graphs once: pairs by name, then by signature, then the unmatched ones."""
    names_after = {n["name"]: n for n in after}
    pairs = [_pair(n, names_after[n["name"]], "name") for n in before if n["name"] in names_after]
    named = {n["name"] for n in before} & set(names_after)
    rest_b = [n for n in before if n["name"] not in named]
    rest_a = [n for n in after if n["name"] not in named]
    matcher = SequenceMatcher(None, [_signature(n) for n in rest_b], [_signature(n) for n in rest_a], autojunk=False)
    used_b: set[int] = set()
    used_a: set[int] = set()
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            pairs.append(_pair(rest_b[block.a + k], rest_a[block.b + k], "signature"))
            used_b.add(block.a + k)
            used_a.add(block.b + k)
    pairs += [_pair(n, None, "unmatched") for i, n in enumerate(rest_b) if i not in used_b]
    pairs += [_pair(None, n, "unmatched") for i, n in enumerate(rest_a) if i not in used_a]
    return pairs


def _nodes(summary: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [n for n in summary.get("nodes") or [] if isinstance(n, dict) and n.get("name") is not None]
    return sorted(({**n, "name": str(n["name"])} for n in nodes), key=lambda n: (n.get("index") or 0, n["name"]))


def _signature(node: dict[str, Any]) -> tuple:
    return str(node.get("op_type")), bool(node.get("feeds_graph_output"))


def _pair(before: dict[str, Any] | None, after: dict[str, Any] | None, how: str) -> NodeChange:
    either = before or after or {}
    precisions = [str(n.get("precision") or "") if n else "" for n in (before, after)]
    weights = [str(n.get("weight_dtype") or "int8") if n.get("weight_quantized") else "float"
               for n in (before or {}, after or {})]
    if before and after and precisions[0] == precisions[1] and weights[0] != weights[1]:
        # The same precision (its input still on the INT8 grid) with its weights quantized on one side only: a fix
        # that kept a Gemm "float" leaves its input's pair, shared with the Concat before it (a new user's whatenc).
        precisions = [f"{p}{WEIGHTS}{w})" for p, w in zip(precisions, weights)]
    return NodeChange(before=str(before["name"]) if before else "", after=str(after["name"]) if after else "",
                      op_type=str(either.get("op_type")), precision_before=precisions[0],
                      precision_after=precisions[1], how=how)


WEIGHTS = " (weights "  # a precision with its weights' type, where only the weights changed: "int8 (weights float)"


def _low(precision: str) -> bool:
    return precision in LOW_PRECISIONS
