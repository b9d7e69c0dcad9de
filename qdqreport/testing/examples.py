"""Run rules against their own Fires/Quiet examples: what tests/test_rules.py checks, for plug-in authors
and for an installed wheel (tests/test_wheel.py runs every built-in rule's examples from one).

    python -c "from qdqreport.testing.examples import main; main()"     # exit 1 on any problem
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from qdqreport.findings import Finding
from qdqreport.rules import Example, RuleSpec, discover
from qdqreport.testing.builder import BundleBuilder


def run_example(spec: RuleSpec, example: Example, directory: Path | str) -> list[Finding]:
    """The findings of *spec* on the bundle *example* builds in *directory*."""
    builder = BundleBuilder(directory)
    example.build(builder)
    return spec.run(builder.context())


def example_problems(rules: dict[str, RuleSpec] | None = None) -> tuple[int, list[str]]:
    """(examples run, one line per problem): a Fires example the rule stays quiet on, a Quiet one it
    fires on, a finding of another rule id, or an example that raises."""
    registry = rules if rules is not None else discover()
    problems, count = [], 0
    with tempfile.TemporaryDirectory(prefix="qdqreport-examples-") as scratch:
        for rule_id, spec in sorted(registry.items()):
            for index, example in enumerate(spec.examples):
                count += 1
                where = f"{rule_id} {'Fires' if example.fires else 'Quiet'} {example.name!r}"
                try:
                    findings = run_example(spec, example, Path(scratch) / f"{rule_id}-{index}")
                except Exception as exc:  # noqa: BLE001 - reported, the other examples still run
                    problems.append(f"{where}: {type(exc).__name__}: {exc}")
                    continue
                own = [f for f in findings if f.rule_id == spec.id]
                if example.fires and not own:
                    problems.append(f"{where}: the rule stayed quiet")
                if not example.fires and own:
                    problems.append(f"{where}: the rule fired: {[f.summary for f in own]}")
                if len(own) != len(findings):
                    problems.append(f"{where}: findings of another rule id")
    return count, problems


def main() -> None:
    count, problems = example_problems()
    for line in problems:
        print(line)
    print(f"{count} examples run, {len(problems)} problems")
    sys.exit(1 if problems else 0)
