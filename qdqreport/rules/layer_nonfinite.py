"""QR205 (NaN/Inf born inside the QDQ model) from the per-layer pass: the first tensor the QDQ model computes
NaN or Inf in where the FP32 model has none."""

from __future__ import annotations

from typing import Any, Iterator

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import born_nonfinite, layer_tables
from qdqreport.findings import Finding, Fix, Metric, Table
from qdqreport.fixes import Change, requantize_command
from qdqreport.rules import Fires, Quiet, rule
from qdqreport.rules._common import outputs_collapse
from qdqreport.testing.layer_examples import layer_chain, quantization_run
from qdqreport.wording import percent, plural

LIST_LIMIT = 10
# The shape of a new user's masked LM (g2p-id's BERT, quantize_static): a LayerNorm's variance + epsilon is an INT8
# activation, rows whose variance rounds to 0 give Sqrt 0, and the Reciprocal after it Inf in 183 of 1,024 values.
_RECIPROCAL = {"tensor": "ln/batchnorm/Rsqrt__30:0", "node": "ln/batchnorm/Rsqrt__30", "op_type": "Reciprocal",
               "index": 282, "fp32": 0, "qdq": 183, "values": 1024,
               "reads_int8": [{"tensor": "ln/batchnorm/add:0", "node": "ln/batchnorm/add"}]}


def _variance_rounds_to_zero(broken: bool):
    def build(b):
        quantization_run(b, broken=broken)
        b.layers(layer_chain(), summary={"nonfinite_tensors": 1, "nonfinite": [_RECIPROCAL]})
    return build


def _mask_in_both(b):
    # An attention mask's -inf, in the FP32 model and the QDQ model alike: the model's own, not quantization's.
    quantization_run(b, broken=False)
    b.layers(layer_chain(), summary={"nonfinite_tensors": 1, "nonfinite": [
        {"tensor": "mask_add:0", "node": "mask_add", "op_type": "Add", "index": 40, "fp32": 4096, "qdq": 4096,
         "values": 65536, "reads_int8": []}]})


def _all_finite(b):
    quantization_run(b, broken=False)
    b.layers(layer_chain())


@rule(id="QR205", slug="layer-nonfinite", title="NaN or Inf born inside the QDQ model",
      examples=[Fires("a LayerNorm's Reciprocal turns Inf on variances that round to 0 (outputs agree: a warning)",
                      _variance_rounds_to_zero(False)),
                Fires("the same Inf while the outputs collapse (an error)", _variance_rounds_to_zero(True)),
                Quiet("an attention mask's -inf in both models", _mask_in_both),
                Quiet("every aligned tensor finite", _all_finite)])
def layer_nonfinite(ctx: Context) -> Iterator[Finding]:
    """An aligned activation that holds NaN or Inf in the QDQ model where the FP32 model has none, the first along
    the QDQ graph named (collect --per-layer counts NaN/Inf per tensor over the samples it reads:
    layers/summary.json's `nonfinite`).

    Why it matters: the error columns of the per-layer tables skip non-finite positions, and Q nodes after the
    tensor saturate an Inf to their largest value, so the outputs often stay finite and the damage hides: a new
    user's masked LM
    (quantize_static) had a LayerNorm whose variance + epsilon was an INT8 activation; rows whose variance rounded
    to 0 gave Sqrt 0 and the Reciprocal after it Inf in 18% of its values. The finding names the INT8 activations
    the tensor is computed from (through at most four float nodes: collect/layerwise.int8_upstream), where a value
    rounds to 0 or saturates.

    A tensor that holds NaN/Inf in the FP32 model too (an attention mask's -inf) is the model's own, not counted.

    Severity from impact: an error when the outputs collapse (analysis/agreement.py) or hold NaN/Inf themselves
    (QR005 names the stage, this the tensor), scored 0.85; a warning otherwise (a computed Inf is never INT8 noise,
    and inputs with more rows like those would carry it further), scored 0.3, under the measured causes: whether the
    decisions read the rows it touches, the per-layer pass cannot tell. On the masked LM, keeping the LayerNorm's
    variance path float removed every Inf and moved no decoded word (11 of 256 before and after): the rows it
    touched were mostly padding, and the others did not reach the masked positions' decisions.

    Fix: keep the nodes that write those INT8 activations out of INT8 (the variance path of a LayerNorm in float),
    or, when none was found, the node itself.
    """
    tables = layer_tables(ctx)
    born = born_nonfinite(tables) if tables is not None else []
    if not born:
        return
    first = born[0]
    sources = [s for s in first.get("reads_int8") or [] if s.get("node")]
    outputs_nonfinite = _outputs_nonfinite(ctx)
    severe = outputs_nonfinite or outputs_collapse(ctx)
    share = first["qdq"] / first["values"] if first.get("values") else None
    over = tables.summary.get("samples")
    yield layer_nonfinite.finding(
        title=f"The QDQ model computes NaN/Inf at {first['node']} ({first.get('op_type') or '?'})",
        severity="error" if severe else "warning", confidence=0.9,
        score=0.85 if severe else 0.3,
        subject="nonfinite:" + first["tensor"], stage=tables.comparison_id, tags=("root_cause",),
        summary=_summary(first, share, over, sources, outputs_nonfinite, len(born)),
        evidence=(Metric("NaN/Inf values in the QDQ model", first["qdq"], threshold="> 0 where FP32 has none"),
                  _table(born)),
        fixes=(_fix(ctx, first, sources),))


def _summary(first: dict[str, Any], share: float | None, over: Any, sources: list[dict[str, Any]],
             outputs_nonfinite: bool, count: int) -> str:
    where = f"{first['qdq']:,} of {first['values']:,} values ({percent(share)})" if share is not None \
        else f"{first['qdq']:,} values"
    text = (f"{first['tensor']} holds NaN/Inf in {where}" + (f" over the {over} samples the per-layer pass read"
                                                             if over else "")
            + "; the FP32 model has none there.")
    if sources:
        names = ", ".join(f"{s['tensor']} (written by {s['node']})" for s in sources[:3])
        text += (f" Its values are computed from the INT8 {'activation' if len(sources) == 1 else 'activations'} "
                 f"{names}: a value that "
                 f"rounds to 0 or saturates in INT8 makes {first.get('op_type') or 'the node'} divide by zero or "
                 "overflow.")
    text += (" The outputs hold NaN/Inf too (see the non-finite outputs finding)." if outputs_nonfinite else
             " The outputs stay finite (Q nodes after it saturate an Inf to their largest value), so the error "
             "metrics hide it; whether the decisions read the values it touches, only a run without it tells.")
    if count > 1:
        text += f" {plural(count - 1, 'later tensor')} also hold NaN/Inf only in the QDQ model."
    return text


def _table(born: list[dict[str, Any]]) -> Table:
    rows = tuple((e["tensor"], e.get("op_type") or "", e["qdq"], e["fp32"], e["values"],
                  ", ".join(s["tensor"] for s in e.get("reads_int8") or []) or "—") for e in born[:LIST_LIMIT])
    return Table("Tensors holding NaN/Inf only in the QDQ model (graph order)",
                 ("tensor", "op", "NaN/Inf (QDQ)", "NaN/Inf (FP32)", "values", "computed from INT8"), rows)


def _fix(ctx: Context, first: dict[str, Any], sources: list[dict[str, Any]]) -> Fix:
    nodes = tuple(dict.fromkeys(s["node"] for s in sources)) or (first["node"],)
    why = ("its INT8 input rounds small values to 0" if sources else "it runs on INT8 values")
    return Fix(f"Keep {', '.join(nodes)} out of INT8 ({why} before {first['node']}), then collect again with "
               "--per-layer: the NaN/Inf should be gone, and the outputs say whether they cost decisions. A "
               "normalisation whose variance still rounds to 0 then reads 1/sqrt(epsilon) instead of Inf: keep its "
               "input float too", requantize_command(ctx, Change(exclude_nodes=nodes)))


def _outputs_nonfinite(ctx: Context) -> bool:
    """Whether the quantization comparison's QDQ outputs hold NaN/Inf where FP32's do not."""
    comparison = ctx.comparison("quantization")
    rows = ctx.sample_rows(comparison.id) if comparison is not None else []
    return any(r.cand_nan + r.cand_inf > r.ref_nan + r.ref_inf for r in rows)
