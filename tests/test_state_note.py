"""A recurrent state output says what its numbers cannot show: each sample ran with the state the input file holds
(open loop), and an error that builds up over a sequence shows only on whole sequences. A new user's GTCRN speech
enhancer lost 0.36 dB of its improvement open loop and 0.97 dB closed loop (10 of 20 utterances over 1 dB)."""

from __future__ import annotations

from pathlib import Path

from qdqreport.pipeline import render_report

VAD = Path(__file__).resolve().parent.parent / "corpus" / "vad_healthy_ort_sym"  # Silero VAD: stateN, fed back


def test_the_state_note_is_said_once_a_comparison(tmp_path):
    render_report(VAD, tmp_path / "report")
    markdown = (tmp_path / "report" / "report.md").read_text()
    html = (tmp_path / "report" / "report.html").read_text()
    line = next(l for l in markdown.splitlines() if "recurrent state, never decisive" in l)
    assert line.startswith("- stateN: ") and "whole sequences" in line
    comparisons = markdown.count("#### quantization:") + markdown.count("#### saturation check control:")
    assert markdown.count("recurrent state, never decisive") == comparisons >= 1
    assert "<code>stateN</code>: recurrent state, never decisive" in html
