"""Audio calibrated at another level is other content (QR006), audio left in other units is preprocessing (QR003).

Real bundles of the corpus voice detector (Silero VAD v5, quantize_static): `vad_calib_quiet` calibrated on the same
speech 26 dB quieter, `vad_calib_scale` on int16 PCM values (not divided by 32768); both in read parts.
"""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.analysis.preprocessing import preprocessing_difference, same_centre
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _findings(case: str, target: str | None = None):
    return run_rules(Context(Bundle(CORPUS / case), target=target)).findings


def test_quieter_calibration_audio_is_a_coverage_gap_not_a_missing_normalisation():
    # Its label's target (ORT's recipe): for TensorRT, TensorRT's objections to the recipe would come first, as the
    # outputs only degrade (findings.rank_findings).
    ctx = Context(Bundle(CORPUS / "vad_calib_quiet"), target="onnxruntime")
    calib, evaluation = ctx.calib_stats["inputs"]["input"], ctx.eval_stats["inputs"]["input"]
    assert same_centre(calib["overall"], evaluation["overall"])
    assert preprocessing_difference(calib, evaluation) is None
    findings = run_rules(ctx).findings
    assert findings[0].rule_id == "QR006" and "dB" in " ".join(getattr(e, "text", "") for e in findings[0].evidence)
    assert not [f for f in findings if f.rule_id == "QR003"]


def test_int16_calibration_audio_is_still_a_preprocessing_step():
    findings = _findings("vad_calib_scale", target="onnxruntime")  # its label's target (ORT's recipe)
    assert findings[0].rule_id == "QR003" and not [f for f in findings if f.rule_id == "QR006"]


def test_music_calibrating_a_speech_detector_is_named_by_its_smoothness():
    # vad_calib_music (fifth part, read): synthesised music for the speech the detector is evaluated on. No range,
    # level or preprocessing step separates them; their neighbour correlation does (0.97 against 0.13).
    findings = _findings("vad_calib_music", target="onnxruntime")  # its label's target (ORT's recipe)
    assert findings[0].rule_id == "QR006" and "smoother" in findings[0].title


def test_the_smoothness_test_stays_quiet_on_healthy_controls_of_every_family():
    labels = __import__("json").loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    healthy = [c for c, label in labels.items() if label["healthy"] and "part 4" not in label.get("added_for", "")]
    assert len(healthy) >= 20
    for case in healthy:
        assert not [f for f in _findings(case) if f.subject.startswith("structure ")], case


def test_calibration_audio_at_another_sample_rate_is_a_preprocessing_step():
    # vad_calib_48k (fifth part, read): the same kind of speech recorded at 48 kHz, never resampled for the 16 kHz
    # detector. Louder too (spread 1.8x, no units step), so the spread names nothing; the spectral centroid does:
    # 0.30x the evaluation's, the two sets apart, the spectrum's shape kept (analysis/spectrum.py).
    ctx = Context(Bundle(CORPUS / "vad_calib_48k"), target="onnxruntime")
    calib, evaluation = ctx.calib_stats["inputs"]["input"], ctx.eval_stats["inputs"]["input"]
    found = preprocessing_difference(calib, evaluation)
    assert found is not None and found.kind == "sample_rate" and 0.25 < found.measure < 0.35
    findings = run_rules(ctx).findings
    assert findings[0].rule_id == "QR003" and "48000 Hz read as 16000 Hz" in findings[0].title


def test_no_audio_control_reads_as_another_sample_rate():
    # Every healthy control of the audio families (VAD, basic-pitch, DNSMOS), and the calibration sets of other
    # content (music for speech: 12x lower, beyond any two common rates; sines for music: the sets overlap).
    labels = __import__("json").loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    cases = [c for c, label in labels.items() if c.split("_")[0] in ("vad", "bp", "dns")
             and (label["healthy"] or c in ("vad_calib_music", "bp_calib_sines"))
             and "part 10" not in label.get("added_for", "")]
    checked = 0
    for case in cases:
        ctx = Context(Bundle(CORPUS / case))
        for name, evaluation in (ctx.eval_stats or {}).get("inputs", {}).items():
            calib = (ctx.calib_stats or {}).get("inputs", {}).get(name)
            if calib and calib.get("spectrum"):
                checked += 1
                found = preprocessing_difference(calib, evaluation)
                assert found is None or found.kind != "sample_rate", case
    assert checked >= 10
