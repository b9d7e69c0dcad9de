"""Import contracts: the layer table in docs/ARCHITECTURE.md, checked against the package's import graph.

The contracts live in docs/ARCHITECTURE.md only; this file parses them. The checker reads the
source with `ast` (nothing is imported), so it can check a planted copy of the package too.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "qdqreport"
CONTRACT_DOC = ROOT / "docs" / "ARCHITECTURE.md"
SAMPLE_BUNDLES = ROOT / "sample_bundles"


# ---------------------------------------------------------------- the contract, read from the doc

@dataclass(frozen=True)
class Layer:
    name: str
    patterns: tuple[str, ...]
    may_import: frozenset[str]


@dataclass(frozen=True)
class Forbidden:
    patterns: tuple[str, ...]
    externals: frozenset[str]


@dataclass
class Contract:
    layers: list[Layer]
    forbidden: list[Forbidden]
    known: set[tuple[str, str]] = field(default_factory=set)


def _table(text: str, marker: str) -> list[list[str]]:
    """The body rows of the markdown table right after `<!-- contract: marker -->`."""
    found = re.search(rf"<!-- contract: {re.escape(marker)} -->\n((?:\|.*\n?)+)", text)
    assert found, f"{CONTRACT_DOC}: no table after <!-- contract: {marker} -->"
    rows = [line.strip().strip("|").split("|") for line in found.group(1).splitlines()]
    return [[cell.strip() for cell in row] for row in rows[2:]]  # skip the header and the --- line


def _names(cell: str) -> tuple[str, ...]:
    return tuple(name.strip().strip("`") for name in cell.split(",") if name.strip())


def read_contract(doc: Path = CONTRACT_DOC) -> Contract:
    text = doc.read_text(encoding="utf-8")
    layers = [Layer(row[0], _names(row[1]), frozenset(_names(row[2]))) for row in _table(text, "layers")]
    forbidden = [Forbidden(_names(row[0]), frozenset(_names(row[1]))) for row in _table(text, "forbidden")]
    known = {(_names(row[0])[0], _names(row[1])[0]) for row in _table(text, "known-violations")}
    return Contract(layers, forbidden, known)


def matches(module: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns)


# ---------------------------------------------------------------- the import graph, read from the source

@dataclass
class Graph:
    ours: dict[str, set[str]]        # module -> our modules it imports (static and dynamic)
    external: dict[str, set[str]]    # module -> top-level third-party names it imports
    dynamic: dict[str, set[str]] = field(default_factory=dict)  # the part of `ours` no import statement names


def module_names(package_dir: Path) -> dict[str, Path]:
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(tree: ast.AST):
    """Import nodes that can run: everything but the body of `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            children = node.orelse  # only the `else:` branch runs
        else:
            children = [node]
        for child in children:
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            yield from _runtime_imports(child)


@functools.lru_cache(maxsize=None)
def _parsed_imports(source: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Parsed once per source text: the planted copies share all but one file with the package."""
    return tuple(_runtime_imports(ast.parse(source)))


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: dict) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parent = module.split(".") if is_package else module.split(".")[:-1]
        parent = parent[:len(parent) - (node.level - 1)]
        base = ".".join(parent + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]


def _ours(name: str, known: dict) -> str:
    """The closest enclosing module of *name* that exists (`a.b.C` -> `a.b`)."""
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def import_graph(package_dir: Path) -> Graph:
    known = module_names(package_dir)
    root = package_dir.name
    graph = Graph({m: set() for m in known}, {m: set() for m in known})
    for module, path in known.items():
        for node in _parsed_imports(path.read_text(encoding="utf-8")):
            for target in _targets(node, module, path.name == "__init__.py", known):
                if target.split(".")[0] == root:
                    graph.ours[module].add(_ours(target, known))
                else:
                    graph.external[module].add(target.split(".")[0])
        graph.ours[module].discard(module)
    rules = f"{root}.rules"  # discover() imports every public rule module: a dynamic import the AST cannot see
    if rules in graph.ours:
        graph.dynamic[rules] = {m for m in known if m.startswith(rules + ".") and not m.rsplit(".", 1)[1].startswith("_")}
        graph.ours[rules] |= graph.dynamic[rules]
    return graph


# ---------------------------------------------------------------- the checks

def layer_of(module: str, contract: Contract) -> Layer:
    owners = [layer for layer in contract.layers if matches(module, layer.patterns)]
    assert len(owners) == 1, (f"{module}: in {len(owners)} layers of {CONTRACT_DOC.name} "
                              f"({[layer.name for layer in owners]}); add it to exactly one")
    return owners[0]


def _private_to(imported: str) -> str | None:
    """The package a private module belongs to, or None when *imported* is public."""
    last = imported.rsplit(".", 1)[-1]
    return imported.rsplit(".", 1)[0] if last.startswith("_") and not last.startswith("__") else None


def _reachable(start: str, graph: Graph) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.ours[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def violations(graph: Graph, contract: Contract) -> set[tuple[str, str]]:
    """(importer, imported) pairs that break a layer, a private-module or a forbidden-import contract."""
    found: set[tuple[str, str]] = set()
    for module, imported in graph.ours.items():
        layer = layer_of(module, contract)
        for target in imported:
            target_layer = layer_of(target, contract)
            if target_layer.name != layer.name and target_layer.name not in layer.may_import:
                found.add((module, target))
            private = _private_to(target)
            if private is not None and not (module == private or module.startswith(private + ".")):
                found.add((module, target))
    for rule in contract.forbidden:
        for module in (m for m in graph.ours if matches(m, rule.patterns)):
            for reached in _reachable(module, graph):
                found |= {(reached, name) for name in graph.external[reached] & rule.externals}
    return found


def cycles(graph: Graph) -> set[tuple[str, ...]]:
    """Import cycles through import statements (rule discovery's dynamic imports left out: rule
    modules import the rules package for @rule by design), each as its sorted set of modules."""
    static = Graph({m: graph.ours[m] - graph.dynamic.get(m, set()) for m in graph.ours}, graph.external)
    reach = {module: _reachable(module, static) for module in static.ours}
    return {tuple(sorted(m for m in reach[a] if a in reach[m])) for a in static.ours
            if any(a in reach[b] for b in static.ours[a])}


def broken(importer: str, imported: str) -> str:
    return (f"{importer} imports {imported}: breaks {CONTRACT_DOC.name}'s contracts; import downwards "
            "(or, if the table is wrong, change the table)")


def check(package_dir: Path, contract: Contract) -> list[str]:
    """One line per problem: a cycle, a violation not in the known list, or a known one that is gone."""
    graph = import_graph(package_dir)
    loops = [f"import cycle between {', '.join(c)}: break it (one of them imports the other only)"
             for c in sorted(cycles(graph))]
    current = violations(graph, contract)
    new = [broken(a, b) for a, b in sorted(current - contract.known)]
    gone = [f"{a} no longer imports {b}: remove its row from the known violations in {CONTRACT_DOC.name}"
            for a, b in sorted(contract.known - current)]
    return loops + new + gone


# ---------------------------------------------------------------- tests

def test_the_package_keeps_its_import_contracts():
    assert check(PACKAGE, read_contract()) == []


def test_rules_never_import_each_other():
    """One file per rule id, shared logic in rules/_*.py or analysis/ (docs/ARCHITECTURE.md, "Rules")."""
    graph = import_graph(PACKAGE)
    rule_modules = {m for m in graph.ours if m.startswith("qdqreport.rules.") and not m.rsplit(".", 1)[1].startswith("_")}
    assert {(m, other) for m in rule_modules for other in graph.ours[m] & rule_modules} == set()


def test_every_module_is_in_exactly_one_layer():
    contract = read_contract()
    assert {layer_of(module, contract).name for module in module_names(PACKAGE)} == {
        layer.name for layer in contract.layers}  # and every layer of the table holds at least one module


def _planted_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "qdqreport"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.onnx", "*.npz", "*.npy"))
    return copy


def test_a_planted_upward_import_fails_the_check(tmp_path):
    copy = _planted_copy(tmp_path)
    paths = copy / "bundle" / "paths.py"
    paths.write_text(paths.read_text(encoding="utf-8") + "\nimport qdqreport.render\n", encoding="utf-8")
    problems = check(copy, read_contract())
    assert broken("qdqreport.bundle.paths", "qdqreport.render") in problems
    assert not [p for p in problems if "no longer imports" in p]  # the known list still holds


def test_a_planted_import_inside_a_function_fails_the_check_but_type_checking_imports_do_not(tmp_path):
    copy = _planted_copy(tmp_path)
    metrics = copy / "analysis" / "metrics.py"
    metrics.write_text(metrics.read_text(encoding="utf-8") + (
        "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from qdqreport.report.model import ReportModel\n"
        "\ndef _late():\n    from qdqreport.render import plots\n"), encoding="utf-8")
    problems = check(copy, read_contract())
    assert broken("qdqreport.analysis.metrics", "qdqreport.render.plots") in problems
    assert broken("qdqreport.render.plots", "matplotlib") in problems  # now reachable from analysis
    assert broken("qdqreport.analysis.metrics", "qdqreport.report.model") not in problems  # TYPE_CHECKING only


def test_a_planted_third_party_import_is_found_through_the_graph(tmp_path):
    copy = _planted_copy(tmp_path)
    limits = copy / "bundle" / "limits.py"  # far below the renderer: reached from it only transitively
    limits.write_text(limits.read_text(encoding="utf-8") + "\ntry:\n    import onnxruntime\nexcept ImportError:\n    pass\n",
                      encoding="utf-8")
    assert check(copy, read_contract()) == [broken("qdqreport.bundle.limits", "onnxruntime")]


def test_a_planted_import_cycle_fails_the_check(tmp_path):
    copy = _planted_copy(tmp_path)  # both in the analysis layer: only the cycle contract can catch it
    trt_layers = copy / "analysis" / "trt_layers.py"
    trt_layers.write_text(trt_layers.read_text(encoding="utf-8") + "\nfrom qdqreport.analysis import trt_align\n",
                          encoding="utf-8")
    assert check(copy, read_contract()) == ["import cycle between qdqreport.analysis.trt_align, "
                                            "qdqreport.analysis.trt_layers: break it (one of them imports the other only)"]


def test_a_fixed_known_violation_must_leave_the_list():
    """A row for an import the code no longer makes fails the check until the row is removed. The list is empty
    today, so the row is planted: the last one, fixed in the re-layout (issue 9)."""
    contract = read_contract()
    stale = ("qdqreport.collect.pipeline", "qdqreport.confirm.whatif_confirm")
    assert stale not in contract.known
    problems = check(PACKAGE, Contract(contract.layers, contract.forbidden, contract.known | {stale}))
    assert f"{stale[0]} no longer imports {stale[1]}: remove its row from the known violations in ARCHITECTURE.md" in problems


def test_report_with_rule_discovery_never_imports_onnx_or_tensorrt(tmp_path):
    """The runtime half of the contract: plug-ins and dynamic imports the graph cannot see."""
    bundle = next(path for path in sorted(SAMPLE_BUNDLES.iterdir()) if (path / "manifest.json").is_file())
    script = ("import sys\n"
              "for name in ('onnx', 'onnxruntime', 'tensorrt', 'polygraphy'): sys.modules[name] = None\n"
              "from qdqreport.pipeline import render_report\n"
              f"render_report({str(bundle)!r}, {str(tmp_path / 'out')!r})  # rules=None: discover()\n"
              "from qdqreport.rules import discover\n"
              "assert len(discover()) > 10\n")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT)
    assert (tmp_path / "out" / "findings.json").is_file()
