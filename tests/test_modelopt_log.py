"""parse_modelopt_log on real ModelOpt 0.47 logs (tests/data/modelopt, made by scripts/make_test_models.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qdqreport.collect.modelopt_log import parse_modelopt_log, partial_note, read_modelopt_log
from qdqreport.errors import InputError

LOGS = Path(__file__).resolve().parent / "data" / "modelopt"
TYPE_COUNTS = {"Conv": 49, "Add": 41, "Mul": 27, "BatchNormalization": 2, "GlobalAveragePool": 10}
KEYS = {"format", "total_nodes", "quantized_nodes", "quantizable_nodes", "non_quantizable_partitions",
        "nodes_to_quantize", "quantized_type_counts", "random_calibration", "calibration_method",
        "already_quantized", "warnings", "complete"}


def parsed(name: str) -> dict:
    result = read_modelopt_log(LOGS / name)
    assert set(result) == KEYS
    return json.loads(json.dumps(result, allow_nan=False))


def test_calibrated_run() -> None:
    result = parsed("calibrated.log")
    assert (result["total_nodes"], result["quantized_nodes"], result["quantizable_nodes"]) == (912, 129, 139)
    assert (result["non_quantizable_partitions"], result["nodes_to_quantize"]) == (1, 129)
    assert result["quantized_type_counts"] == TYPE_COUNTS
    assert result["random_calibration"] is False
    assert result["calibration_method"] == "entropy"
    assert result["already_quantized"] is False
    assert result["complete"] is True  # the quantized-node summary and "Quantized onnx model is saved as"
    assert "Shared constants were detected and duplicated accordingly." in result["warnings"]


def test_run_without_calibration_data_is_random_calibration() -> None:
    result = parsed("random_calibration.log")  # logs "Initializing RandomDataProvider"
    assert result["random_calibration"] is True
    assert (result["total_nodes"], result["quantized_nodes"]) == (912, 129)
    assert result["quantized_type_counts"] == TYPE_COUNTS
    assert result["calibration_method"] == "entropy"


def test_already_quantized_model_is_skipped() -> None:
    result = parsed("already_quantized.log")  # ModelOpt run on its own output with --calibration_method=max
    assert result["already_quantized"] is True
    assert result["calibration_method"] == "max"
    assert result["quantizable_nodes"] is None  # it never searched for nodes to quantize
    assert result["quantized_nodes"] == 129


def test_log_file_stops_before_the_summary() -> None:
    # What --log_file received: ModelOpt 0.47 drops the file handler at "Starting INT8 quantization".
    result = parsed("calibrated.log_file.log")
    assert result["total_nodes"] is None and result["quantized_type_counts"] is None
    assert result["random_calibration"] is False and result["calibration_method"] is None
    assert result["complete"] is False
    note = partial_note(LOGS / "calibrated.log_file.log", result)
    assert note.count("\n") == 0 and "calibrated.log_file.log" in note and "quantized-node summary" in note
    assert "python -m modelopt.onnx.quantization ... 2>&1 | tee quant.log" in note
    assert all(partial_note("x.log", parsed(name)) is None
               for name in ("calibrated.log", "random_calibration.log", "already_quantized.log"))


def test_a_run_cut_after_the_summary_is_partial() -> None:
    """A run that died while saving: the summary is there, the "saved as" line is not."""
    lines = (LOGS / "calibrated.log").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if "Quantized onnx model is saved as" in line)
    result = parse_modelopt_log("\n".join(lines[:cut]))
    assert result["quantized_nodes"] == 129 and result["complete"] is False
    assert "saved as" in partial_note("x.log", result)


def test_last_run_wins_and_warnings_are_deduplicated() -> None:
    text = (LOGS / "already_quantized.log").read_text() + (LOGS / "random_calibration.log").read_text()
    result = parse_modelopt_log(text)
    assert result["quantizable_nodes"] == 139 and result["calibration_method"] == "entropy"
    assert len(result["warnings"]) == len(set(result["warnings"]))


def test_a_file_that_is_not_a_modelopt_log_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "train.log"
    other.write_text("epoch 1 loss 0.3\n")
    with pytest.raises(InputError, match="train.log"):
        read_modelopt_log(other)


def test_binary_and_foreign_files_are_refused(tmp_path: Path) -> None:
    model = LOGS.parent / "models" / "cls_modelopt_int8.onnx"  # an .onnx passed as the log
    with pytest.raises(InputError, match=r"cls_modelopt_int8.onnx: a binary file \(NUL bytes\).*tee quant.log"):
        read_modelopt_log(model)
    script = tmp_path / "quantize.sh"  # names ModelOpt (the old check took any mention) but holds no line of its log
    script.write_text("python -m modelopt.onnx.quantization --onnx_path m.onnx --log_file quant.log\n")
    with pytest.raises(InputError, match="quantize.sh: holds no line ModelOpt writes"):
        read_modelopt_log(script)
    latin = tmp_path / "latin1.log"
    latin.write_bytes((LOGS / "calibrated.log").read_text().replace("tmp", "Åtmp").encode("latin-1", errors="replace"))
    with pytest.raises(InputError, match=r"latin1.log: not UTF-8 text \(byte \d+\)"):
        read_modelopt_log(latin)


def test_a_huge_log_line_parses_in_linear_time():
    """A hostile 350 KB line costs about what a 50 KB one does (the type-counts pattern was quadratic on a
    line repeating its prefix with no closing brace: 7x longer took ~49x the time)."""
    import time

    from qdqreport.collect.modelopt_log import parse_modelopt_log

    def best_of_3(chars: int) -> float:
        line = "Quantized type counts: {" * (chars // 24) + "\n"
        times = []
        for _ in range(3):
            start = time.perf_counter()
            parse_modelopt_log(line)
            times.append(time.perf_counter() - start)
        return min(times)

    short, long = best_of_3(50_000), best_of_3(350_000)
    assert long < 3 * short + 0.05  # linear or better; quadratic would be ~49x (seconds)
