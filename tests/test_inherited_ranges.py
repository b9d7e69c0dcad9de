"""A Q node whose calibrated range fits its FP32 values, distorted only in the QDQ model, is upstream INT8 error, not
a calibration fault (QR204; issue 10: a new user's two models, tests/data/bundles/README.md).

- g2p_mlm_layernorm: a LayerNorm's variance rounds to 0 in INT8, the Rsqrt's Q node clips 17.9% of its values in the
  QDQ model and none in FP32; QR204 ranked it first with "calibrate on data that covers the evaluation inputs".
- fastmrz_bn_per_tensor: a BatchNorm Mul zeroes 49 of 64 channels, the Add after it uses 4.8% of its range in the
  QDQ model (71% in FP32); QR204 said "re-calibrate or use entropy calibration".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import clipping_quantizers, inherited, layer_tables, quantizer_ranges, underused_quantizers
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"


@pytest.mark.parametrize("bundle, kind", [("g2p_mlm_layernorm", "clipping"), ("fastmrz_bn_per_tensor", "under-use")])
def test_ranges_distorted_only_in_the_qdq_model_are_inherited_not_calibrations(bundle, kind):
    ctx = Context(Bundle(BUNDLES / bundle))
    tables = layer_tables(ctx)
    measured = clipping_quantizers(tables, ctx.precision) if kind == "clipping" else underused_quantizers(tables)
    assert measured and {q.q_node for q in measured} <= inherited(measured, quantizer_ranges(ctx))
    own = [f for f in run_rules(ctx).findings if f.rule_id == "QR204"]
    assert [(f.severity, f.tags) for f in own] == [("info", ("symptom",))]
    assert "only in the QDQ model: error inherited from upstream" in own[0].title
    assert "re-calibrating cannot fix it" in own[0].summary


def test_the_fastmrz_map_in_nhwc_is_judged_by_iou():
    ctx = Context(Bundle(BUNDLES / "fastmrz_bn_per_tensor"))
    summary = ctx.output_summaries(ctx.comparison("quantization").id)[0]
    assert summary.kind.kind == "map" and summary.judgement.measure == "map IoU"
    assert summary.judgement.level == "collapse"  # the INT8 map is one constant value
