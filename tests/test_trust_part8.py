"""What the eighth sealed corpus part taught (issue 10), tested on its real bundles.

The part (Magika's file content-type model from the magika 1.0.3 wheel, run on real files of pinned wheels) was
scored while sealed before and after the first rule changes of session 24 (docs/CORPUS.md keeps both totals) and then
read: these cases are tuning data now, and each test names the behaviour the reading changed. Real bundles only.
"""

from __future__ import annotations

import pytest

from qdqreport.analysis.calibration_data import noise_inputs
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle

from corpus_cases import CORPUS, ranked


def _text(finding) -> str:
    return " ".join(str(getattr(item, "text", "")) for item in finding.evidence)


@pytest.mark.parametrize("case", ["mgk_healthy_ort_sym", "mgk_healthy_ort_percentile", "mgk_healthy_trt_conv"])
def test_a_softmax_written_as_exp_over_sum_is_judged_by_its_decisions(case):
    # Magika's jax2tf export ends its softmax in a Div (Exp / ReduceSum). Read as a linear layer's regressed numbers,
    # the 214 probabilities were compared per class column: the near-zero classes "collapsed" (QR007 and QR001
    # errors on every healthy control). Rows in [0, 1] summing to 1 are class scores, judged by top-1.
    ctx, findings = ranked(case)
    comparison = ctx.comparison("quantization")
    kinds = {s.output: s.kind.kind for s in ctx.output_summaries(comparison.id)}
    assert kinds == {"target_label": "class_scores"}
    assert not [f for f in findings if f.severity == "error"]


def test_an_inf_scale_masked_before_the_outputs_does_not_explain_their_collapse():
    # Every op forced into INT8: quantize_static gives a constant 0 weight an Inf scale. Its DequantizeLinear writes
    # NaN, which a Max masks (the QDQ outputs are finite; with the scale set to 1 the labels are still all lost), so
    # the INT8 Tanh and head (measured at cosine 0.26) rank first and QR004 says the divergence has another cause.
    _, findings = ranked("mgk_overquant")
    assert findings[0].rule_id == "QR002"
    broken = next(f for f in findings if f.rule_id == "QR004" and f.subject == "non-finite or non-positive scale")
    assert "never reaches the outputs" in _text(broken)


def test_random_byte_tokens_are_noise_by_their_structure():
    # np.random.randint tokens: neighbouring bytes uncorrelated (lag-1 0.002) where real files' are (0.50). Ids were
    # never judged; structured ones now are, by the structure test only.
    ctx, findings = ranked("mgk_random_calib")
    assert [v.input for v in noise_inputs(ctx.calib_stats, ctx.eval_stats)] == ["bytes"]
    assert findings[0].rule_id == "QR009"


def test_word_piece_ids_without_structure_are_still_not_judged_as_noise():
    # MiniLM's input ids: consecutive word pieces do not correlate, so no structure test applies to them.
    for case in ("lm_healthy_ort", "lm_calib_short", "lm_calib_mask1"):
        ctx = Context(Bundle(CORPUS / case))
        assert not noise_inputs(ctx.calib_stats, ctx.eval_stats), case


def test_bytes_read_as_signed_are_a_preprocessing_difference():
    # The calibration reader used np.int8: values down to -128 where no evaluation byte is negative. The quantized
    # model happens to be the healthy one, so QR003 is the only finding, a warning.
    _, findings = ranked("mgk_calib_signed")
    assert [f.rule_id for f in findings] == ["QR003"]
    assert "read as signed" in findings[0].title
