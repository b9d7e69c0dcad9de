"""A new user's slider-captcha gap detector (captcha-recognizer 1.0.2's slider.onnx: a YOLO11s-seg, output0 [1, 37,
8400] concatenating 4 box coordinates in pixels, 1 class score in [0, 1] and 32 mask coefficients), quantized with
quantize_static's defaults on 40 calibration pictures; evaluated on 60 (20 real captcha pictures of the package's
repository and 40 crops, rescales and re-encodings of them). Measured by the user: the gap's drag distance kept (within
4 px) on 7 of 60 pictures, 0 of FP32's 102 boxes. tests/data/bundles/slider_yolo_seg_default is its bundle, the
stored outputs cut to output0 of the first sample (the maps of output1 are 3.3 MB a sample)."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.rules import discover

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "slider_yolo_seg_default"


def test_an_output_quantized_whole_names_the_node_whose_pair_rounds_its_scores_away() -> None:
    """quantize_static put one Q/DQ pair (step 2.65, sized for the box pixels) on the output Concat: every class score
    reads 0. QR007 named the 4 head Convs (one of them feeding the other output); excluding them, as printed, kept 7
    of 60 decisions and 0 boxes. It now names /model.23/Concat_6 and its fix excludes it (with the nodes whose pairs
    feed it, which quantize_static needs to free its inputs): measured, all 102 boxes back."""
    findings = run_rules(Context(Bundle(BUNDLE)), discover()).findings
    first = findings[0]
    assert first.rule_id == "QR007" and first.severity == "error"
    assert "quantized whole, one INT8 scale for all its fields (/model.23/Concat_6)" in first.title
    (fix,) = first.fixes
    assert "'/model.23/Concat_6'" in fix.command and "cv4" not in fix.command and "proto" not in fix.command
    assert any(getattr(e, "name", "").startswith("FP32's non-zero values of output0") for e in first.evidence)


def test_the_what_if_tries_the_nodes_that_write_an_output_through_a_pair_first() -> None:
    """With --per-layer the what-if ranked its 12 suspects by whole-tensor SQNR and never tried the output Concat;
    its exclusion, feeding float inputs only, kept the output's pair anyway (collect/exclusion.py now hands such an
    output over in float). The nodes that write a graph output through a pair (the Concat for output0, the mask
    head's Mul for output1; from the bundle's real precision summary) now lead the suspects. Run on this model, the
    12 suspects so chosen won back 93% of the lost detections (306 of 309 lost -> 10)."""
    import json

    from qdqreport.collect.whatif import with_output_writers

    precision = json.loads((BUNDLE / "quant" / "precision_summary.json").read_text(encoding="utf-8"))
    quantized = {n["name"]: n["op_type"] for n in precision["nodes"]
                 if n.get("activation_quantized") or n.get("weight_quantized")}
    ranked = ["/model.23/dfl/Softmax", "/model.1/act/Mul"]
    suspects = with_output_writers(ranked, precision, quantized)
    assert set(suspects[:2]) == {"/model.23/Concat_6", "/model.23/proto/cv3/act/Mul"}
    assert suspects[2:] == ranked
