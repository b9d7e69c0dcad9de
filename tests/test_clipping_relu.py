"""Clipping that a Relu discards is not clipping (issue 10: a new user's healthy character CNN got a QR204 warning,
ranked first, for 38.5% "clipped" values that were all negatives in front of a Relu). Real bundles only."""

from __future__ import annotations

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import clipping_quantizers, layer_tables, relu_read_tensors
from qdqreport.bundle.reader import Bundle

from corpus_cases import CORPUS


def test_negative_clipping_in_front_of_a_relu_is_left_out_and_the_rest_kept():
    # The PaddleOCR detector calibrated on 8 images (quantize_static): conv2d_489.tmp_0 clips 2.8% of its values, all
    # below -65.4 (its values reach only 34 of 64.9 on the other side), and a Relu is its only reader; the other three
    # clip above their maximum or feed other ops, and stay.
    ctx = Context(Bundle(CORPUS / "det_calib8_ood_eval"))
    tables = layer_tables(ctx)
    everything = {q["tensor"] for q in clipping_quantizers(tables)}
    kept = {q["tensor"] for q in clipping_quantizers(tables, ctx.precision)}
    assert "conv2d_489.tmp_0" in relu_read_tensors(ctx.precision)
    assert everything - kept == {"conv2d_489.tmp_0"}
    assert {"p2o.GlobalAveragePool.13", "p2o.GlobalAveragePool.15", "conv2d_483.tmp_0"} <= kept


def test_positive_clipping_in_front_of_a_relu_still_counts():
    # conv2d_483.tmp_0 clips above its maximum (21.5 against 16.0): a Relu keeps those values, so they are lost.
    ctx = Context(Bundle(CORPUS / "det_calib8_ood_eval"))
    row = next(q for q in layer_tables(ctx).qnodes if q["tensor"] == "conv2d_483.tmp_0")
    assert row["observed_max"] > row["representable_max"]
    assert row in clipping_quantizers(layer_tables(ctx), ctx.precision)
