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
