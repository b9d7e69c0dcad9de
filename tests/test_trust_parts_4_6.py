"""What the fourth and sixth sealed corpus parts taught (issue 10), tested on their real bundles.

Both parts were scored while sealed (docs/CORPUS.md keeps every score) and read on 2026-11-25 (session 23):
these cases are now tuning data, and each test names the behaviour the reading changed. Real basic-pitch,
DNSMOS, YOLOX (ddddocr), PP-OCRv4 and RivaGAN bundles; nothing synthetic.
"""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import rank_findings
from qdqreport.rules import discover

from corpus_cases import ranked


def test_a_log_computing_on_int8_input_is_a_sensitive_node_and_the_named_cause():
    # basic-pitch's normalised log reads a constant-Q power that spans decades; quantized, its note F1 falls to 0.65.
    # The collector marks the Log sensitive ("log"); QR002 names it first, above the collapse it explains.
    ctx, findings = ranked("bp_log_int8")
    log = [s for s in ctx.precision["sensitive"] if s["pattern"] == "log"]
    assert [s["op_type"] for s in log] == ["Log"] and log[0]["quantized"]
    assert findings[0].rule_id == "QR002" and findings[0].severity == "error"
    assert "normalized_log_1/Log" in findings[0].subject


def test_a_log_left_in_float_is_not_flagged():
    # The healthy recipe keeps the Log in FP32 (its input is no DQ): it is listed, never counted.
    ctx, findings = ranked("bp_healthy_ort_sym")
    assert [s["op_type"] for s in ctx.precision["sensitive"] if s["pattern"] == "log"] == ["Log"]
    assert not [f for f in findings if f.rule_id == "QR002"]


def test_imagenet_normalised_calibration_of_a_raw_pixel_model_is_a_preprocessing_step():
    # Calibration (x/255 - mean)/std spans -2.1..2.6; the detector reads raw 0..255 pixels. The narrow calibration sat
    # within 5% of 255 of the black level and passed for "darker content"; it goes 2.1 below that level, which no
    # content can. Named as the step it is, first; its fix undoes that step per channel (the per-channel fit lies near
    # the ImageNet mean and std: analysis/preprocessing.per_channel_map), not one affine fitted to both sets.
    _, findings = ranked("yolo_calib_imagenet")
    assert findings[0].rule_id == "QR003"
    assert "calibration carries a mean/std normalisation the evaluation inputs lack" in findings[0].title
    action = " ".join(fix.action for fix in findings[0].fixes)
    assert ("x → (x * np.array([0.229, 0.224, 0.225], np.float32).reshape((-1, 1, 1)) + np.array([0.485, 0.456, "
            "0.406], np.float32).reshape((-1, 1, 1))) * 255 (the ImageNet mean and std, per channel") in action


def test_darker_pictures_and_blank_pages_keep_their_level_and_stay_content():
    # A quarter of the brightness keeps the black level (0); blank pages keep the white level: content, not a
    # preprocessing step (QR006's, never QR003's).
    for case in ("yolo_calib_dark", "ori_calib_blank"):
        _, findings = ranked(case)
        assert not [f for f in findings if f.rule_id == "QR003"], case
        assert any(f.rule_id == "QR006" for f in findings), case


def test_a_calibration_range_missing_most_of_the_evaluation_span_outranks_the_sensitive_nodes_behind_it():
    # The detector calibrated on pictures at a quarter of their brightness: calibration [0, 64], every evaluation
    # picture beyond it, 164 of 196 detections lost. The gap is the error; the 15 head nodes' tensor error is what it
    # predicts, so QR002 is a warning under it that says to fix the calibration first.
    _, findings = ranked("yolo_calib_dark")
    assert (findings[0].rule_id, findings[0].severity) == ("QR006", "error")
    assert findings[0].title.startswith("Calibration covers [0, 64] of input images")
    sensitive = next(f for f in findings if f.rule_id == "QR002")
    assert sensitive.severity == "warning" and sensitive.score <= 0.2
    assert any("misses 75% of the evaluation range of input images" in getattr(e, "text", "") for e in sensitive.evidence)


def test_one_grey_picture_is_not_a_greyscale_loader_when_the_evaluation_has_grey_pictures_too():
    # Calibrated on one picture that happens to be grey; the evaluation holds grey pictures of its own. "Load the
    # calibration in colour" would not help: the one picture is the fault, and QR006 names too few samples first.
    _, findings = ranked("yolo_calib_one")
    assert not [f for f in findings if f.rule_id == "QR003"]
    assert findings[0].rule_id == "QR006"


def test_dnsmos_int8_stft_is_named_and_measured_where_its_loss_shows():
    # DNSMOS computes its STFT as two Convs on raw audio, then magnitude and a Log. With the Convs in INT8 the
    # quiet bins are lost (|dMOS| up to 2.4): QR002 names the two Convs (it named only the final Gemm before, and its
    # fix excluded the wrong node), measured on the Log's output (cosine 0.79; their own output reads 0.9997).
    ctx, findings = ranked("dns_stft_int8")
    first = findings[0]
    assert first.rule_id == "QR002" and "stft-real" in first.subject and "stft-imag" in first.subject
    front = {s["node"]: s for s in ctx.precision["sensitive"] if s["pattern"] == "log_front_end"}
    assert set(front) == {"stft-real", "stft-imag"} and all(s["quantized"] for s in front.values())
    assert {s["tensor"] for s in front.values()} == {"mos_estimator_logpow/Log"}
    worst = next(e for e in first.evidence if getattr(e, "name", "") == "worst sensitive tensor cosine")
    assert worst.value < 0.9
    # quantize_static made the model: its fix is a quantize_static call naming the nodes exactly
    assert "'stft-imag', 'stft-real']" in " ".join(fix.command for fix in first.fixes)
    _, healthy = ranked("dns_healthy_ort_sym")  # the healthy recipe keeps the STFT float: listed, not flagged
    assert not [f for f in healthy if f.rule_id == "QR002" and "stft" in f.subject]


def test_which_side_lacks_the_normalisation_follows_the_sign_not_the_spread():
    # OriNet (occular-deskew, outside the corpus): evaluation ImageNet-normalised (-1.9..2.6), calibration / 255 only
    # (0.18..1.0), so the calibration is the narrower, as for yolo_calib_imagenet, but it is the one that LACKS the
    # normalisation; the side with negative values carries the mean subtraction.
    bundle = Path(__file__).resolve().parent / "data" / "bundles" / "orinet_calib_unnormalised"
    findings = rank_findings(run_rules(Context(Bundle(bundle)), discover()).findings)
    assert (findings[0].rule_id, findings[0].severity) == ("QR003", "error")
    assert findings[0].title.endswith("calibration lacks the mean/std normalisation (spread 0.186×)")
    # The map fitted per channel lies near the ImageNet mean and std: the fix is that step, exact, and says so.
    assert "x → (x - np.array([0.485, 0.456, 0.406], np.float32)" in findings[0].fixes[0].action
    assert "the ImageNet mean and std, per channel" in findings[0].fixes[0].action


def test_a_fully_quantized_graph_says_so_instead_of_an_unknown_float_type(tmp_path):
    # OriNet quantized with every op type (24 of 24 compute nodes): the precision line said "Compute that is not
    # quantized runs in unknown".
    from qdqreport.pipeline import render_report

    render_report(Path(__file__).resolve().parent / "data" / "bundles" / "orinet_calib_unnormalised", tmp_path)
    for name in ("report.md", "report.html"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert "Every compute node is quantized." in text and "runs in unknown" not in text and "unknown</span>" not in text


def test_the_headline_names_a_measured_fix_that_ranks_above_every_cause(tmp_path):
    # OriNet S8S8 with --per-layer: the what-if measured that excluding one node restores the outputs (QR203, first);
    # the headline named QR002's INT8 head as "most likely cause" all the same.
    from qdqreport.pipeline import render_report

    render_report(Path(__file__).resolve().parent / "data" / "bundles" / "orinet_s8s8_per_layer", tmp_path,
                  target="onnxruntime")
    headline = (tmp_path / "report.md").read_text(encoding="utf-8").splitlines()[0]
    assert headline.endswith("; measured: excluding 1 node restores the outputs")
    assert "sensitive node" not in headline
