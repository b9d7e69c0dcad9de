"""The diff pairs two bundles' samples when they hold the same samples, whatever file or loader held them: confirm
replays a bundle's saved inputs (collect --save-inputs) through its own loader script, and its diff said "the bundles
were evaluated on different data (250 and 250 samples) ... samples are not paired" on a new user's tagger. Real runs:
the demo classifier collected from eval.npz, then from the first bundle's saved inputs and their loader."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.diff.accuracy import accuracy_diff

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"


def _collect(source: list[str], out: Path) -> Context:
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"), *source,
                 "--max-samples", "12", "--save-inputs", "-o", str(out)]) == 0
    return Context(Bundle(out))


def test_samples_replayed_through_the_saved_loader_are_paired(tmp_path: Path) -> None:
    before = _collect(["--inputs", str(DEMO / "eval.npz")], tmp_path / "before")
    replay = tmp_path / "replay"
    replay.mkdir()
    shutil.copy(tmp_path / "before" / "inputs" / "eval_inputs.npz", replay / "eval_inputs.npz")
    shutil.copy(tmp_path / "before" / "inputs" / "qdqreport_inputs.py", replay / "qdqreport_inputs.py")
    after = _collect(["--data-loader-script", str(replay / "qdqreport_inputs.py")], tmp_path / "after")
    assert before.manifest["inputs"]["eval"]["sha256"] != after.manifest["inputs"]["eval"]["sha256"]
    diff = accuracy_diff(before, after)
    assert diff.paired and diff.note == "same evaluation data, 12 samples paired by index"


def test_other_samples_are_not_paired(tmp_path: Path) -> None:
    before = _collect(["--inputs", str(DEMO / "eval.npz")], tmp_path / "before")
    with np.load(DEMO / "eval.npz") as data:
        shifted = {k: data[k][1:13] for k in data.files}
    np.savez(tmp_path / "other.npz", **shifted)
    after = _collect(["--inputs", str(tmp_path / "other.npz")], tmp_path / "after")
    assert not accuracy_diff(before, after).paired



def test_findings_on_decoded_results_are_not_resolved_by_leaving_the_decode_out(tmp_path: Path) -> None:
    """BEFORE decoded its outputs (--postprocess), AFTER did not: the findings only the decode raised are "not judged
    in AFTER", never "resolved" (confirm without --postprocess read "3 resolved" on a face-mesh model whose decisions
    had not changed). BEFORE: a new user's tagger bundle with its decode's results; AFTER: the same bundle with the
    decode's results taken out, as a collect without --postprocess writes it."""
    import json

    from qdqreport.diff import build_diff
    from qdqreport.diff.render import render_markdown

    before = Path(__file__).resolve().parent / "data" / "bundles" / "khmertagger_zeros_calib"
    after = tmp_path / "after"
    shutil.copytree(before, after)
    manifest = json.loads((after / "manifest.json").read_text(encoding="utf-8"))
    del manifest["task"]
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("task/")}
    (after / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    shutil.rmtree(after / "task")
    diff = build_diff(before, after)
    findings = diff.findings
    assert not findings.resolved and "without the --postprocess decode" in findings.unjudged_reason
    # The decode judged QR001 an error ("collapses": 130 of 250 sentences); AFTER judges the raw logits only.
    (symptom,) = [f for f in findings.persisting if f.rule_id == "QR001"]
    assert symptom.before[0] == "error" and symptom.severity == "warning"
    assert "Not judged: AFTER was collected without the --postprocess decode" in render_markdown(diff)


def test_confirm_replays_the_evaluation_file_the_bundle_records(tmp_path: Path) -> None:
    """Collected from eval.npz without --save-inputs, confirm refused ("holds no evaluation inputs") though the bundle
    names the file and its sha256 (a new user's face mesh). It now takes that file while its content is unchanged, and
    refuses as before once it differs."""
    from qdqreport.confirm.run import ConfirmOptions, _with_recorded_inputs

    data = tmp_path / "eval.npz"
    shutil.copy(DEMO / "eval.npz", data)
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"), "--inputs",
                 str(data), "--max-samples", "8", "-o", str(tmp_path / "bundle")]) == 0
    ctx = Context(Bundle(tmp_path / "bundle"))
    options = ConfirmOptions(bundle=str(tmp_path / "bundle"), output=str(tmp_path / "out"))
    assert _with_recorded_inputs(options, ctx).inputs == str(data)
    with np.load(DEMO / "eval.npz") as original:
        np.savez(data, **{k: original[k][::-1] for k in original.files})
    assert _with_recorded_inputs(options, ctx).inputs is None
