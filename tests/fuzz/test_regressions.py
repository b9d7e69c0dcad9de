"""Every crash signature the fuzzer found, as a damaged copy of a real bundle: `validate` and `report` both
exit 2 with one line naming the file and the field (bundle/artifacts.py), and report writes nothing."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from fuzz_seeds import COMMITTED

from qdqreport.cli import main


def damaged(source: Path, target: Path, relative: str, edit: Callable[[Any], Any], kind: str = "json") -> Path:
    """A copy of the real bundle *source* with one file edited and the manifest re-hashed (so the hash check passes).

    *kind*: json, csv, npz (the file is parsed, edited, written back) or raw (written already: only re-hashed).
    """
    shutil.copytree(source, target)
    path = target / relative
    if kind == "json":
        path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    elif kind == "csv":
        rows = edit(list(csv.reader(io.StringIO(path.read_text()))))
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)
        path.write_text(buffer.getvalue())
    elif kind == "npz":
        with np.load(path) as data:
            arrays = edit({k: data[k] for k in data.files})
        with open(path, "wb") as handle:
            np.savez(handle, **arrays)
    if relative != "manifest.json":
        manifest = json.loads((target / "manifest.json").read_text())
        data = path.read_bytes()
        manifest["files"][relative] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        (target / "manifest.json").write_text(json.dumps(manifest))
    return target


def assert_refused(bundle: Path, out: Path, capsys: pytest.CaptureFixture, *words: str) -> None:
    for argv in (["validate", str(bundle)], ["report", str(bundle), "-o", str(out)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        for word in words:
            assert word in err, (word, err)
    assert not out.exists() or not any(out.iterdir())


def _set(path: list[Any], value: Any) -> Callable[[Any], Any]:
    def edit(doc: Any) -> Any:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return doc
    return edit


def _delete(path: list[Any]) -> Callable[[Any], Any]:
    def edit(doc: Any) -> Any:
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        return doc
    return edit


SAMPLE = COMMITTED["cls_calib_x255"]
# (fuzz signature it reproduces, file, edit, words the error must contain)
JSON_CASES = [
    # rule:QR004:KeyError@rules/trt_unsupported_qdq.py
    ("qdq_item_without_pair_scales_match", "quant/precision_summary.json", _delete(["qdq", 5, "pair_scales_match"]),
     ("precision_summary.json", "qdq[5]", "pair_scales_match")),
    # UndefinedError@render/html.py (inputs.html.j2 r["input"])
    ("range_use_item_empty", "inputs/range_use.json", _set([0], {}), ("range_use.json", "[0]", "'input'")),
    ("precision_counts_string", "quant/precision_summary.json", _set(["by_op_type", "Conv", "int8"], "many"),
     ("precision_summary.json", "by_op_type.Conv.int8", "integer")),
    ("node_name_list", "quant/precision_summary.json", _set(["nodes", 0, "name"], ["x"]),
     ("precision_summary.json", "nodes[0].name", "string")),
    ("eval_stats_nested", "inputs/eval_stats.json", _set(["inputs", "x", "overall"], [1, 2]),
     ("eval_stats.json", "inputs.x.overall", "object")),
    ("modelopt_warnings_not_list", "quant/modelopt_log.json", _set(["warnings"], 5),
     ("modelopt_log.json", "warnings", "list")),
    ("fp16_check_negative_count", "quant/fp16_check.json", _set(["fp16_activations"], -1),
     ("fp16_check.json", "fp16_activations", "0..")),
    ("manifest_details_string", "manifest.json", _set(["stages", 0, "details"], "oops"),
     ("manifest.json", "stages[0].details", "wrong type")),
    ("manifest_argv_numbers", "manifest.json", _set(["collector", "argv"], [1, 2]),
     ("manifest.json", "collector.argv[0]", "string")),
    ("manifest_class_outputs_string", "manifest.json", _set(["comparisons", 0, "class_outputs"], "logits"),
     ("manifest.json", "comparisons[0].class_outputs", "list")),
    # rule:QR004:KeyError@rules/trt_unsupported_qdq.py (long run, seed 23, case 970): a qdq entry without its zero-point flag.
    ("qdq_item_without_zero_point_nonzero", "quant/precision_summary.json", _delete(["qdq", 4, "zero_point_nonzero"]),
     ("precision_summary.json", "qdq[4]", "zero_point_nonzero")),
    ("manifest_tensor_shape_dict", "manifest.json", _set(["inputs", "eval", "tensors", 0, "shape"], {"a": 1}),
     ("manifest.json", "inputs.eval.tensors[0].shape", "wrong type")),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, relative, edit, words", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_wrongly_typed_json_artifact_is_one_line_exit_2(name: str, relative: str, edit: Callable, words: tuple,
                                                       tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bundle = damaged(SAMPLE, tmp_path / "bundle", relative, edit)
    assert_refused(bundle, tmp_path / "out", capsys, *words)


CSV_CASES = [
    ("sample_index_huge", "compare/ort_qdq__vs__ort_fp32.samples.csv", (1, "sample", "99999999999999999999"),
     ("samples.csv", "line 2 column sample")),
    ("cosine_out_of_range", "compare/ort_qdq__vs__ort_fp32.samples.csv", (3, "cosine", "7"),
     ("samples.csv", "line 4 column cosine", "-1.001..1.001")),
    ("nan_count_negative", "compare/ort_qdq__vs__ort_fp32.samples.csv", (1, "cand_nan", "-1"),
     ("samples.csv", "column cand_nan")),
    ("top1_share_above_one", "compare/ort_qdq__vs__ort_fp32.samples.csv", (1, "top1_agree", "inf"),
     ("samples.csv", "column top1_agree", "finite")),
    ("fp16_overflow_negative", "quant/fp16_ranges.csv", (2, "overflow", "-5"), ("fp16_ranges.csv", "column overflow")),
    ("tensor_name_huge", "compare/ort_qdq__vs__ort_fp32.tensors.csv", (1, "tensor", "A" * 20_000),
     ("tensors.csv", "column tensor", "4,096 characters")),
]


@pytest.mark.parametrize("name, relative, change, words", CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_out_of_range_table_cell_is_one_line_exit_2(name: str, relative: str, change: tuple, words: tuple,
                                                   tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    row, column, value = change

    def edit(rows: list[list[str]]) -> list[list[str]]:
        rows[row][rows[0].index(column)] = value
        return rows

    bundle = damaged(SAMPLE, tmp_path / "bundle", relative, edit, kind="csv")
    assert_refused(bundle, tmp_path / "out", capsys, *words)


@pytest.mark.slow
def test_whatif_chosen_without_cosine_is_refused(seed_cache: Path, seeds: dict, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    # UndefinedError@render/filters.py:num (layers.html.j2 s["chosen"]["cosine"]) on the per-layer demo bundle.
    bundle = damaged(seed_cache / "demo_per_layer", tmp_path / "bundle", "layers/whatif.json", _delete(["chosen", "cosine"]))
    assert_refused(bundle, tmp_path / "out", capsys, "whatif.json", "chosen", "'cosine'")


def test_task_results_with_a_foreign_array_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = COMMITTED["cls_task"]
    manifest = json.loads((source / "manifest.json").read_text())
    results = manifest["task"]["task_results"]["results"]  # the application's results, read by QR010

    def edit(arrays: dict) -> dict:
        key = sorted(arrays)[0]
        arrays["labels"] = arrays.pop(key)
        return arrays

    bundle = damaged(source, tmp_path / "bundle", results, edit, kind="npz")
    assert_refused(bundle, tmp_path / "out", capsys, results.rsplit("/", 1)[-1], "'labels'", "<sample:06d>/<name>")


def test_sliced_output_without_spread_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # rule:QR001:KeyError@rules/stage_divergence.py (fuzz seed 5): a sliced entry without its scale spread.
    bundle = damaged(COMMITTED["lm_slices"], tmp_path / "bundle", "manifest.json",
                     _delete(["comparisons", 0, "sliced", "embedding", "spread"]))
    assert_refused(bundle, tmp_path / "out", capsys, "manifest.json", "comparisons[0].sliced.embedding", "'spread'")


def _imported(seed_cache: Path) -> Path:
    return seed_cache / "cls_imported_trt"


@pytest.mark.slow
def test_profile_with_a_list_as_run_count_is_a_reported_problem(seed_cache: Path, seeds: dict, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    # TypeError@analysis/trt_layers.py:<genexpr> (fuzz seed 11): int() of a list. A profile that decodes but is
    # not what trtexec writes is shown as a problem of the engine section; the rest of the report stands.
    bundle = damaged(_imported(seed_cache), tmp_path / "bundle", "stages/trt_int8/profile.json", _set([0, "count"], []))
    assert main(["report", str(bundle), "-o", str(tmp_path / "out")]) in (0, 1)
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "profile.json" in html and "run count" in html


@pytest.mark.slow
def test_layer_info_with_infinite_dimensions_is_a_reported_problem(seed_cache: Path, seeds: dict, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    # OverflowError: int(inf) of a tensor dimension written as 1e999.
    def edit(doc: dict) -> dict:
        layer = next(item for item in doc["Layers"] if item.get("Inputs"))
        layer["Inputs"][0]["Dimensions"] = [float("inf")]
        return doc

    bundle = damaged(_imported(seed_cache), tmp_path / "bundle", "stages/trt_int8/layer_info.json", edit)
    assert main(["report", str(bundle), "-o", str(tmp_path / "out")]) in (0, 1)
    assert "not a list of integers" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_deeply_nested_layer_info_is_one_line_exit_2(seed_cache: Path, seeds: dict, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    # TensorRT JSON went through json.loads directly (RecursionError); now through the bundle's decoder.
    bundle = damaged(_imported(seed_cache), tmp_path / "bundle", "stages/trt_int8/layer_info.json", lambda doc: doc)
    (bundle / "stages/trt_int8/layer_info.json").write_text("[" * 100_000 + "]" * 100_000)
    rehashed = damaged(bundle, tmp_path / "again", "stages/trt_int8/layer_info.json", lambda doc: doc, kind="raw")
    assert_refused(rehashed, tmp_path / "out", capsys, "layer_info.json", "nested too deeply")


def test_input_statistic_null_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # rule:QR006:TypeError@rules/unrepresentative_calibration.py (fuzz seed 12): a per-sample minimum of null.
    bundle = damaged(SAMPLE, tmp_path / "bundle", "inputs/eval_stats.json", _set(["inputs", "x", "per_sample", 0, "min"], None))
    assert_refused(bundle, tmp_path / "out", capsys, "eval_stats.json", "inputs.x.per_sample[0].min", "number")


@pytest.mark.slow
def test_calibration_frozen_at_one_value_is_a_finding_not_a_rule_crash(tmp_path: Path) -> None:
    # rule:QR003:ZeroDivisionError@rules/calibration_input_mismatch.py (fuzz seed 12): calibration std 0 (or -0.0).
    bundle = damaged(SAMPLE, tmp_path / "bundle", "inputs/calib_stats.json", _set(["inputs", "x", "overall", "std"], -0.0))
    assert main(["report", str(bundle), "-o", str(tmp_path / "out")]) in (0, 1)
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert findings["failures"] == []
    qr003 = next(f for f in findings["findings"] if f["id"] == "QR003")
    assert "calibration holds one value" in qr003["title"] + qr003["summary"]


@pytest.mark.slow
def test_whatif_summary_without_its_target_is_refused(seed_cache: Path, seeds: dict, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    # UndefinedError@render/filters.py:md (fuzz seed 14): validate exited 3 on a what-if summary without target_cosine.
    bundle = damaged(seed_cache / "demo_per_layer", tmp_path / "bundle", "layers/whatif.json", _delete(["target_cosine"]))
    assert_refused(bundle, tmp_path / "out", capsys, "whatif.json", "'target_cosine'")


def test_task_row_without_agreement_and_range_use_without_share_are_refused(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    # TypeError@report_task.py (a short task row) and rule:QR003:TypeError@wording.py (range_used null), fuzz seed 11.
    bundle = damaged(SAMPLE, tmp_path / "a", "inputs/range_use.json", _set([0, "range_used"], None))
    assert_refused(bundle, tmp_path / "out-a", capsys, "range_use.json", "[0].range_used")
    source = COMMITTED["cls_task"]
    table = json.loads((source / "manifest.json").read_text())["task"]["comparisons"][0]["table"]
    bundle = damaged(source, tmp_path / "b", table, lambda rows: [*rows[:-1], rows[-1][:1]], kind="csv")
    assert_refused(bundle, tmp_path / "out-b", capsys, table.rsplit("/", 1)[-1], "column agreement")


def test_range_use_with_an_unknown_bound_is_shown_not_a_rule_crash(tmp_path: Path) -> None:
    # rule:QR003:TypeError@rules/calibration_input_mismatch.py (long run, seed 23, case 5505): representable_min null,
    # which the schema allows (no finite bound): QR003 shows it as unknown instead of failing on the format string.
    bundle = damaged(SAMPLE, tmp_path / "bundle", "inputs/range_use.json", _set([0, "representable_min"], None))
    assert main(["report", str(bundle), "-o", str(tmp_path / "out")]) in (0, 1)
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert findings["failures"] == []
    assert any(f["id"] == "QR003" for f in findings["findings"])


def test_stored_outputs_with_a_key_that_is_not_sample_and_name_are_refused(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    # ValueError@bundle/layout.py:split_key, fuzz seed 41 case 148: report now reads the stored outputs (issue 10's
    # decision-level agreement), so a stage's outputs.npz with a key like 'abc' must be a one-line refusal.
    bundle = damaged(SAMPLE, tmp_path / "a", "stages/ort_qdq/outputs.npz",
                     lambda arrays: {**arrays, "abc": np.zeros(2, dtype=np.float32)}, kind="npz")
    assert_refused(bundle, tmp_path / "out-a", capsys, "outputs.npz", "'abc'")


def test_input_statistics_without_inputs_and_a_node_without_index_are_refused(tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture) -> None:
    # The 50,000-case run (seed 31): rule:QR003:TypeError@calibration_input_mismatch.py (calib_stats "inputs": null,
    # case 29652; QR006 failed on it too) and TypeError@report_sections.py:build_precision (a node "index": null,
    # case 24631: the precision table sorts by it). Both are refused by the artefact schemas now.
    bundle = damaged(SAMPLE, tmp_path / "a", "inputs/calib_stats.json", _set(["inputs"], None))
    assert_refused(bundle, tmp_path / "out-a", capsys, "calib_stats.json", "inputs must be an object")
    bundle = damaged(SAMPLE, tmp_path / "b", "quant/precision_summary.json", _set(["nodes", 8, "index"], None))
    assert_refused(bundle, tmp_path / "out-b", capsys, "precision_summary.json", "nodes[8].index")
