"""report.md is posted as a GitHub comment: no string from a bundle may become HTML, a link, an
image, a mention, math, an emoji or a broken table (issue 11, Markdown injection).

A hostile bundle is made from the committed real sample bundles by renaming their outputs,
nodes, inputs and a stage to attack strings (and re-hashing every file in the manifest); the
report is rendered by the real rules and checked the way GitHub would read it: converted to
HTML with Python-Markdown (tags), plus GitHub's text-node passes (autolinks, mentions, emoji,
math) and GFM table cell counts on the Markdown itself.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown as python_markdown
import numpy as np
import pytest

from qdqreport.findings import Finding, Fix, Metric, Series, Table, Text
from qdqreport.pipeline import render_report
from qdqreport.render.filters import MARKDOWN_FILTERS, ZWSP, md, md_html
from qdqreport.render.markdown import render_summary
from qdqreport.rules import RuleSpec, discover

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bundles"
ATTACKS = (
    "<img src=https://x.example/i.png>", "[a](https://x.example)", "![i](https://x.example/i.png)", "@octocat",
    "https://evil.example/p", "www.evil.example", "<https://x.example>", "me@evil.example", "$x^2$", ":smile:",
    "a|b", "#1", "GH-2", "<script>alert(1)</script>", "**bold** _em_ `code`",
)
ALL = " ".join(ATTACKS)
# Bundle strings are capped at 200 characters (bundle schema): names carry a few attacks each.
PRECISION = "<img src=https://x.example/p.png>|@octocat"
SHORT = "<img src=https://x.example/i.png> [a](https://x.example) @octocat $x$ :smile: a|b www.e.example #2"


def attack_name(i: int) -> str:
    """The i-th renamed name: three attacks in turn, so every attack reaches several kinds of name."""
    return " ".join(ATTACKS[(i + k) % len(ATTACKS)] for k in range(3)) + f" n{i}"

# Tags our templates write; everything else in the HTML came from a bundle string.
ALLOWED_TAGS = {"h2", "h3", "h4", "p", "strong", "em", "table", "thead", "tbody", "tr", "th", "td", "details",
                "summary", "code", "pre", "ul", "li", "hr", "span", "br"}
GITHUB_TEXT_PASSES = {
    "mention": re.compile(r"(?<![\w`])@[A-Za-z0-9]"),
    "url autolink": re.compile(r"(?i)\b(?:https?|ftp)://"),
    "www autolink": re.compile(r"(?i)\bwww\."),
    "e-mail autolink": re.compile(r"[\w.+-]+@[A-Za-z0-9-]+\.[A-Za-z]"),
    # gemoji's shortcodes; the only all-digit ones are :100: and :1234: (so a time like 15:30:08 is no emoji)
    "emoji": re.compile(r":(?:(?!\d+:)[a-z0-9_+-]+|100|1234):"),
    "math": re.compile(r"\$[^$]+\$|\$\$"),
    "issue reference": re.compile(r"(?<![\w&])#\d|(?i:\bGH-\d)"),
}


# --- the hostile bundle ------------------------------------------------------------------------
def rename_json(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [rename_json(v, names) for v in value]
    if isinstance(value, dict):
        return {names.get(k, k): rename_json(v, names) for k, v in value.items()}
    return value


def rename_csv(text: str, names: dict[str, str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in csv.reader(io.StringIO(text)):
        writer.writerow([names.get(cell, cell) for cell in row])
    return out.getvalue()


def rename_npz(path: Path, names: dict[str, str]) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    renamed = {}
    for key, array in arrays.items():
        sample, _, name = key.partition("/")
        renamed[f"{sample}/{names.get(name, name)}" if name else names.get(key, key)] = array
    with open(path, "wb") as handle:
        np.savez(handle, **renamed)


def rehash(root: Path, manifest: dict) -> None:
    for name in manifest["files"]:
        data = (root / name).read_bytes()
        manifest["files"][name] = {**manifest["files"][name], "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def hostile_copy(sample: str, tmp_path: Path, names: dict[str, str], mutate=None) -> Path:
    """A copy of sample_bundles/<sample> with every exact occurrence of a key of *names* renamed."""
    root = tmp_path / f"hostile_{sample}"
    shutil.copytree(SAMPLES / sample, root)
    manifest = rename_json(json.loads((root / "manifest.json").read_text(encoding="utf-8")), names)
    for name in manifest["files"]:
        path = root / name
        if path.suffix == ".json":
            path.write_text(json.dumps(rename_json(json.loads(path.read_text(encoding="utf-8")), names)), encoding="utf-8")
        elif path.suffix == ".csv":
            path.write_text(rename_csv(path.read_text(encoding="utf-8"), names), encoding="utf-8")
        elif path.suffix == ".npz":
            rename_npz(path, names)
        elif path.suffix in (".txt", ".log"):
            path.write_text(path.read_text(encoding="utf-8") + f"\n{ALL}\n", encoding="utf-8")
    if mutate is not None:
        mutate(root, manifest)
    rehash(root, manifest)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return root


def classifier_names(sample: Path) -> dict[str, str]:
    """Output, input, Q node and float node names of the classifier sample, each to an attack string."""
    precision = json.loads((sample / "quant" / "precision_summary.json").read_text(encoding="utf-8"))
    nodes = [n["name"] for n in precision["nodes"]]
    float_nodes = [n["name"] for n in precision["nodes"] if n.get("precision") != "int8"][:3]
    picked = ["save_infer_model/scale_0.tmp_1", "x", "x_QuantizeLinear", nodes[0], *float_nodes]
    return {name: attack_name(i) for i, name in enumerate(dict.fromkeys(picked))}


def poison_classifier(root: Path, manifest: dict) -> None:
    stage = next(s for s in manifest["stages"] if s["id"] == "trt_int8")
    stage["error"] = f"build failed:\n{SHORT}"
    stage["id"] = f"trt {SHORT}"
    precision_path = root / "quant" / "precision_summary.json"
    precision = json.loads(precision_path.read_text(encoding="utf-8"))
    precision["nodes"][-1]["precision"] = PRECISION
    first_op = next(iter(precision["by_op_type"]))
    precision["by_op_type"][first_op][PRECISION] = 1  # becomes a column header of the precision table
    precision_path.write_text(json.dumps(precision), encoding="utf-8")
    log_path = root / "quant" / "modelopt_log.json"
    log = json.loads(log_path.read_text(encoding="utf-8"))
    log["calibration_method"] = SHORT
    log_path.write_text(json.dumps(log), encoding="utf-8")
    manifest["models"]["qdq"]["path"] = f"models/{SHORT}.onnx"


def hostile_rule() -> dict[str, RuleSpec]:
    """A finding whose every string, and the values the `num` filter formats, are attacks."""
    finding = Finding("QR990", ALL, "error", 0.9, 0.9, ALL, ALL, stage=ALL, tags=(ALL,), evidence=(
        Metric(ALL, ALL, ALL, ALL), Text(ALL), Table(ALL, (ALL, "value"), ((ALL, ALL), (ALL, 1.5)), note=ALL),
        Series(ALL, "bar", (ALL, "b"), (0.5, 0.9), ALL, 0.99)), fixes=(Fix(ALL, f"echo '{ALL}'"),))
    return {"QR990": RuleSpec("QR990", "hostile", "hostile", lambda ctx: [finding], (), __name__)}


# --- GitHub-like reading of report.md ----------------------------------------------------------
class Reader(HTMLParser):
    """Tags, and text nodes outside code (GitHub never links or mentions inside code)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.texts: list[str] = []
        self.code_depth = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        self.tags.append(tag)
        self.code_depth += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self.code_depth -= tag in ("code", "pre")

    def handle_data(self, data: str) -> None:
        if self.code_depth == 0:
            self.texts.append(data)


def read_like_github(markdown_text: str) -> Reader:
    reader = Reader()
    reader.feed(python_markdown.markdown(markdown_text, extensions=["tables"]))
    return reader


def assert_safe(markdown_text: str) -> Reader:
    reader = read_like_github(markdown_text)
    assert set(reader.tags) <= ALLOWED_TAGS, set(reader.tags) - ALLOWED_TAGS
    for text in reader.texts:
        for what, pattern in GITHUB_TEXT_PASSES.items():
            assert not pattern.search(text), f"{what} survives in {text!r}"
    assert_tables_keep_their_columns(markdown_text)
    return reader


def assert_tables_keep_their_columns(markdown_text: str) -> None:
    # GFM splits a row at every pipe not escaped with a backslash.
    width = None
    for line in markdown_text.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line)) - 1
        width = cells if width is None else width
        assert cells == width, f"row with {cells} cells in a {width}-column table: {line[:200]}"


def visible(reader: Reader) -> str:
    """What a reader sees: text nodes joined, zero-width spaces and leftover escapes removed."""
    text = "".join(reader.texts).replace(ZWSP, "")
    return re.sub(r"\\([^\w\s])", r"\1", text)


# --- tests -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_hostile_classifier_bundle_renders_safe_markdown(tmp_path: Path) -> None:
    names = classifier_names(SAMPLES / "cls_calib_x255")
    bundle = hostile_copy("cls_calib_x255", tmp_path, names, poison_classifier)
    outcome = render_report(bundle, tmp_path / "out", rules={**discover(), **hostile_rule()})
    text = outcome.paths[1].read_text(encoding="utf-8")
    reader = assert_safe(text)
    seen = visible(reader)
    # Escaped, not dropped: the attack strings are still there for a reader to see.
    assert attack_name(0) in seen  # the output name (stage matrix)
    assert ALL in seen and PRECISION in seen  # finding text, precision column header
    assert f"trt {SHORT}" in seen and "build failed: " + SHORT in seen  # stage id and its error
    assert text.count("@" + ZWSP + "octocat") >= 10
    assert_safe(render_summary(json_free_model(bundle)))


def json_free_model(bundle: Path):
    from qdqreport.analysis.context import Context
    from qdqreport.bundle.reader import Bundle
    from qdqreport.engine import run_rules
    from qdqreport.report.model import build_report

    loaded = Bundle(bundle)
    ctx = Context(loaded)
    return build_report(loaded, run_rules(ctx, {**discover(), **hostile_rule()}), ctx)


def test_hostile_engine_bundle_renders_safe_markdown(tmp_path: Path) -> None:
    layer_info = json.loads((SAMPLES / "trt_mobilenet_qat_layerinfo" / "stages" / "trt_int8" / "layer_info.json").read_text())
    layers = layer_info["Layers"] if isinstance(layer_info, dict) else layer_info
    names = {layer["Name"]: attack_name(i) for i, layer in enumerate(layers[:6]) if isinstance(layer, dict)}
    names[layers[1]["LayerType"]] = attack_name(7)  # a layer kind: a row header of the engine table
    assert len(names) == 7
    bundle = hostile_copy("trt_mobilenet_qat_layerinfo", tmp_path, names)
    outcome = render_report(bundle, tmp_path / "out")
    text = outcome.paths[1].read_text(encoding="utf-8")
    seen = visible(assert_safe(text))
    assert any(attack_name(i) in seen for i in range(len(names)))  # layer names reach the report, escaped


@pytest.mark.parametrize("attack", ATTACKS)
def test_num_and_md_filters_never_pass_an_attack_through(attack: str) -> None:
    for name in ("num", "cosine", "db", "pct", "seconds", "score"):
        out = MARKDOWN_FILTERS[name](attack)
        assert out == md(attack), name
    for escaped in (md(attack), f"| {md(attack)} |\n|---|\n| {md(attack)} |", f"<details><summary>{md_html(attack)}</summary>\n\nx\n\n</details>"):
        reader = assert_safe(escaped)
        assert visible(reader).replace("x", "").strip() or attack.strip()
    assert MARKDOWN_FILTERS["num"]([attack]) == md([attack])  # not a number at all: escaped, never str() raw


def test_numbers_still_format_as_numbers() -> None:
    assert MARKDOWN_FILTERS["num"](1234567) == "1,234,567" and MARKDOWN_FILTERS["num"](0.123456) == "0.1235"
    assert MARKDOWN_FILTERS["pct"](0.5) == "50%" and MARKDOWN_FILTERS["num"](None) == "—"
    assert md(md("a_b")) == md("a_b") == "a\\_b"  # escaping twice is escaping once


@pytest.mark.parametrize("text", ["---", "===", "+ item", "- item", "1. item", "7) item", "* item"])
def test_a_bundle_string_alone_on_its_line_starts_no_list_rule_or_heading(text: str) -> None:
    reader = read_like_github(f"paragraph\n{md(text)}\n\n{md(text)}\n")
    assert not {"hr", "li", "ul", "ol", "h1", "h2"} & set(reader.tags), reader.tags
    assert visible(reader).count(text) == 2
