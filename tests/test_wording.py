"""Words and numbers of the reports (issue 13): plurals, powers of ten, percentages, stage names,
and backticks that show as code in Markdown table cells without opening a way in for bundle text."""

from __future__ import annotations

import re
from pathlib import Path

import markdown as python_markdown
import pytest

from qdqreport.pipeline import render_report
from qdqreport.render.filters import MARKDOWN_FILTERS, code_span, md_cell
from qdqreport.stage_names import stage_name
from qdqreport.wording import percent, plural, ratio, significant, verb
from test_markdown_safety import ATTACKS, assert_safe

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bundles"


@pytest.mark.parametrize(("count", "text"), [(0, "0 INT8 layers write"), (1, "1 INT8 layer writes"),
                                             (2, "2 INT8 layers write"), (1234, "1,234 INT8 layers write")])
def test_plurals_agree_with_the_count(count, text):
    assert f"{plural(count, 'INT8 layer')} {verb(count, 'writes')}" == text


@pytest.mark.parametrize(("value", "text"), [(40678189666266571388939657019392.0, "4.07×10³¹"), (123.24, "123"),
                                             (0.0047, "0.0047"), (1.5e-5, "1.5×10⁻⁵"), (99960.0, "99,960"),
                                             (9.9996e7, "1×10⁸"), (-2.5e-9, "-2.5×10⁻⁹")])
def test_large_and_small_numbers_in_powers_of_ten(value, text):
    assert significant(value) == text
    assert len(re.sub(r"\D", "", significant(value))) <= 6  # never a 32-digit integer


def test_ratio_and_percent():
    assert ratio(4.0678e31) == "4.07×10³¹×"
    assert [percent(v) for v in (0.0047, 0.44, 0.981, 0.99996, 1.0, 0.0, 1e-7)] == \
        ["0.47%", "44%", "98.1%", "99.996%", "100%", "0%", "1×10⁻⁵%"]


def test_stage_names():
    assert stage_name("ort_qdq__vs__ort_fp32") == "ONNX Runtime QDQ vs ONNX Runtime FP32"
    assert stage_name("trt_int8") == "TensorRT INT8"
    assert stage_name("input x") == "input x" and stage_name("my_stage__vs__ort_fp32") == "my_stage__vs__ort_fp32"


def test_backticks_in_a_cell_render_as_code():
    cell = md_cell("run `qdqreport collect` and `a|b` then")
    html = python_markdown.markdown(f"| reason |\n|---|\n| {cell} |\n", extensions=["tables"])
    # GFM unescapes \| inside a code span of a table cell (GFM spec, tables: "including inside other
    # inline spans"); Python-Markdown keeps the backslash. Either way the pipe did not split the cell.
    assert "<code>qdqreport collect</code>" in html and ("<code>a|b</code>" in html or "<code>a\\|b</code>" in html)
    assert "run <code>" in html and "</code> then" in html  # the sentence keeps its spaces


@pytest.mark.parametrize("inside", ["<img src=https://x.example/i.png>", "a`b", "x|y", "@octocat", "``", "\\"])
def test_a_code_span_holds_whatever_is_inside(inside):
    span = code_span(inside)
    html = python_markdown.markdown(f"| c |\n|---|\n| {span} |\n", extensions=["tables"])
    assert html.count("<code>") == 1 and "<img" not in html


@pytest.mark.parametrize("attack", ATTACKS)
def test_cells_with_code_stay_safe(attack):
    for value in (attack, f"`{attack}`", f"x `{attack}` y `"):
        assert_safe(f"| a | b |\n|---|---|\n| {MARKDOWN_FILTERS['cell'](value)} | 1 |\n")


def test_stage_reason_with_backticks_shows_code_in_the_report(tmp_path):
    """The imported-engine sample's skipped stages say to run `qdqreport collect`: code, not \\` marks."""
    outcome = render_report(SAMPLES / "trt_mobilenet_qat_layerinfo", tmp_path / "out")
    text = outcome.paths[1].read_text(encoding="utf-8")
    stages = text[text.index("### Stages"):text.index("### Findings")]
    assert "`qdqreport collect`" in stages and "\\`" not in stages
    assert "| ONNX Runtime FP32 |" in stages and "| ort_fp32 |" not in stages


@pytest.mark.parametrize("rows", [5, 20])
def test_long_task_tables_are_folded(rows):
    """A per-pair table of samples decoded differently: over ten rows it sits in <details>."""
    from types import SimpleNamespace as NS

    from qdqreport.render.env import markdown_env

    pair = NS(purpose="quantization", reference="ort_fp32", candidate="ort_qdq", samples=40, agreement=0.5,
              disagreeing=rows, rows_total=rows,
              rows=[NS(sample=i, agreement=0.0, differing="class", reference="0", candidate="1", raw_rel_l2=0.1,
                       flip_rel_l2=0.2)
                    for i in range(rows)])
    model = NS(task=NS(decode="argmax", compare="equal", scored=False, app=None, stages=[], pairs=[pair],
                       same_samples=()))
    text = markdown_env().get_template("md/task.md.j2").render(model=model, limit=50)
    folded = "<details><summary>ONNX Runtime QDQ vs ONNX Runtime FP32: 20 samples decoded differently</summary>"
    assert (folded in text) == (rows > 10) and text.count("<details>") == text.count("</details>")
    assert_safe(text)
