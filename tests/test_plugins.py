"""Plug-in rules from the `qdqreport.rules` entry-point group, installed for real as a dist-info folder.

Each test runs `qdqreport report` in a subprocess whose sys.path holds the plug-in's site folder, so
importlib.metadata finds the entry points as it does for a pip-installed plug-in, and the global
rule registry of this test process stays untouched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "sample_bundles" / "cls_healthy"

GOOD_PLUGIN = '''
from qdqreport.rules import rule


@rule("QR990", "plugin-says-nothing", "A plug-in rule that finds nothing")
def says_nothing(ctx):
    """A plug-in rule that finds nothing."""
    return []
'''


def _install(site: Path, entry_points: str, modules: dict[str, str]) -> None:
    """What pip leaves behind for a plug-in distribution: its modules and a dist-info folder."""
    dist_info = site / "qdqreport_test_plugins-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: qdqreport-test-plugins\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[qdqreport.rules]\n{entry_points}")
    for name, text in modules.items():
        (site / f"{name}.py").write_text(text)


def _report(site: Path, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "qdqreport", "report", str(BUNDLE), "-o", str(out)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_a_plugin_that_fails_to_import_is_a_rule_failure_in_the_report(tmp_path):
    site = tmp_path / "site"
    _install(site, "missing = qdqreport_test_no_such_module\n"
                   "raises = qdqreport_test_raises\n"
                   "good = qdqreport_test_good\n",
             {"qdqreport_test_raises": "raise RuntimeError('the plug-in needs a licence file')\n",
              "qdqreport_test_good": GOOD_PLUGIN})
    done = _report(site, tmp_path / "out")
    assert done.returncode == 0, done.stderr  # not a crash
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())
    failures = {f["rule_id"]: f["message"] for f in findings["failures"]}
    assert set(failures) == {"plugin:missing", "plugin:raises"}
    assert ("plug-in rule missing = qdqreport_test_no_such_module (distribution qdqreport-test-plugins) failed to "
            "import: ModuleNotFoundError: No module named 'qdqreport_test_no_such_module'") in failures["plugin:missing"]
    assert "RuntimeError: the plug-in needs a licence file" in failures["plugin:raises"]
    assert "QR990" in findings["rules_run"]  # the working plug-in next to them still ran
    assert "QR001" in findings["rules_run"]  # and so did the built-in rules
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "Internal problems" in markdown and "plugin:missing" in markdown and "plugin:raises" in markdown


@pytest.mark.slow
def test_a_plugin_with_a_bad_rule_id_is_a_rule_failure_not_a_crash(tmp_path):
    site = tmp_path / "site"
    _install(site, "badid = qdqreport_test_bad_id\n",
             {"qdqreport_test_bad_id": GOOD_PLUGIN.replace("QR990", "R7")})
    done = _report(site, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    failures = json.loads((tmp_path / "out" / "findings.json").read_text())["failures"]
    assert [f["rule_id"] for f in failures] == ["plugin:badid"]
    assert "ValueError: rule id 'R7' must look like QR001" in failures[0]["message"]


FINDING_PLUGIN = '''
from qdqreport.findings import Finding, Fix, Text
from qdqreport.rules import rule


@rule("QR991", "plugin-always-fires", "A plug-in rule that always fires")
def always_fires(ctx):
    """A plug-in rule that always fires."""
    yield always_fires.finding(title="plug-in finding", severity="info", confidence=0.5, score=0.1,
                               subject="plugin", summary="found by a plug-in", evidence=(Text("e"),),
                               fixes=(Fix("nothing"),))


@rule("QR992", "plugin-impostor", "A plug-in rule that reports under another rule's id")
def impostor(ctx):
    """A plug-in rule that builds Finding itself, with a built-in rule's id."""
    return [Finding("QR001", "impostor", "error", 1.0, 1.0, "impostor", "not QR001's")]
'''


@pytest.mark.slow
def test_a_plugin_finds_with_its_bound_factory_and_cannot_report_under_another_id(tmp_path):
    site = tmp_path / "site"
    _install(site, "findings = qdqreport_test_findings\n", {"qdqreport_test_findings": FINDING_PLUGIN})
    done = _report(site, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert [f["title"] for f in findings["findings"] if f["id"] == "QR991"] == ["plug-in finding"]
    assert "impostor" not in [f["title"] for f in findings["findings"]]
    [failure] = findings["failures"]
    assert failure["rule_id"] == "QR992" and "WrongRuleIdError: rule QR992 emitted a finding of rule 'QR001'" in failure["message"]
