"""Root-cause rules: one module each, registered by the @rule decorator, discovered by a walk.

Adding a rule means adding one file to this package (or a plug-in module named in the
`qdqreport.rules` entry-point group; one that fails to import becomes a recorded rule failure,
see discover()). No central list is edited.

A rule is a function `(ctx: Context) -> Iterable[Finding]`. Its docstring is its
documentation (first line: what it detects; then "Why it matters" and "Fix" paragraphs).
Its `examples` are bundle recipes that it must fire on (`Fires`) or stay quiet on
(`Quiet`); tests/test_rules.py runs every example of every registered rule.

A rule builds its findings with the factory its registration binds to it, `my_rule.finding(title=...,
...)`: every field of a Finding but `rule_id`, which is the rule's own. A finding that carries
another id is a bug of the rule: RuleSpec.run raises, and the engine records a rule failure.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Callable, Iterable, Protocol

from qdqreport.findings import Evidence, Finding, Fix

if TYPE_CHECKING:  # the Context and the builder are only types here; no import cycle at run time
    from qdqreport.analysis.context import Context
    from qdqreport.testing import BundleBuilder

RuleFunction = Callable[["Context"], Iterable[Finding]]
_ID_PATTERN = re.compile(r"^QR\d{3}$")


@dataclass(frozen=True)
class Example:
    """A bundle recipe: `build(builder)` fills a BundleBuilder; `fires` says what the rule must do."""

    name: str
    build: Callable[["BundleBuilder"], None]
    fires: bool


def Fires(name: str, build: Callable[["BundleBuilder"], None]) -> Example:  # noqa: N802 - reads as a label
    return Example(name, build, True)


def Quiet(name: str, build: Callable[["BundleBuilder"], None]) -> Example:  # noqa: N802
    return Example(name, build, False)


@dataclass(frozen=True)
class FindingFactory:
    """The findings of one rule: a Finding of every field given, and the rule's own id (not an argument)."""

    rule_id: str

    def __call__(self, *, title: str, severity: str, confidence: float, score: float, subject: str, summary: str,
                 evidence: Iterable[Evidence] = (), fixes: Iterable[Fix] = (), stage: str = "",
                 tags: Iterable[str] = ()) -> Finding:
        return Finding(rule_id=self.rule_id, title=title, severity=severity, confidence=confidence, score=score,
                       subject=subject, summary=summary, evidence=tuple(evidence), fixes=tuple(fixes), stage=stage,
                       tags=tuple(tags))


class Rule(Protocol):
    """What @rule returns: the rule function, carrying `finding`, the factory of its findings."""

    finding: FindingFactory

    def __call__(self, ctx: "Context") -> Iterable[Finding]: ...


class WrongRuleIdError(RuntimeError):
    """A rule emitted a finding that carries another rule's id."""


@dataclass(frozen=True)
class RuleSpec:
    id: str
    slug: str
    title: str
    function: RuleFunction
    examples: tuple[Example, ...]
    module: str

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.function.__doc__ or "")

    @property
    def summary(self) -> str:
        return self.doc.splitlines()[0] if self.doc else self.title

    def run(self, ctx: "Context") -> list[Finding]:
        """The rule's findings; raises WrongRuleIdError when one carries another id (the engine records a failure)."""
        findings = list(self.function(ctx))
        for finding in findings:
            if finding.rule_id != self.id:
                raise WrongRuleIdError(f"rule {self.id} emitted a finding of rule {finding.rule_id!r} "
                                       f"({finding.title!r}); build findings with the rule's own `.finding(...)`")
        return findings


REGISTRY: dict[str, RuleSpec] = {}


def rule(id: str, slug: str, title: str, examples: Iterable[Example] = ()) -> Callable[[RuleFunction], Rule]:  # noqa: A002
    """Register the decorated function as rule *id*; ids are unique and never reused.

    The function is returned carrying `finding`, the FindingFactory of rule *id*: the rule (and its
    module's helpers) build findings with `function.finding(title=..., ...)`, never naming an id."""
    if not _ID_PATTERN.match(id):
        raise ValueError(f"rule id {id!r} must look like QR001")

    def register(function: RuleFunction) -> Rule:
        existing = REGISTRY.get(id)
        if existing is not None and existing.module != function.__module__:
            raise ValueError(f"rule id {id} is used by both {existing.module} and {function.__module__}")
        function.finding = FindingFactory(id)  # type: ignore[attr-defined]
        REGISTRY[id] = RuleSpec(id, slug, title, function, tuple(examples), function.__module__)
        return function  # type: ignore[return-value]

    return register


def discover() -> dict[str, RuleSpec]:
    """Import every rule module of this package and of installed plug-ins; return the registry.

    A plug-in that fails to import (missing module, a bug at import time, a bad rule id) is not
    fatal and not skipped: it is returned as a rule `plugin:NAME` that raises when run, so the
    engine records it as a rule failure and the report lists it among its internal problems."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    unloadable: dict[str, RuleSpec] = {}
    for entry in entry_points(group="qdqreport.rules"):
        try:
            entry.load()
        except Exception as exc:  # one broken plug-in must not take every report down with it
            spec = _unloadable_plugin(entry, exc)
            unloadable[spec.id] = spec
    return dict(sorted({**REGISTRY, **unloadable}.items()))


class PluginImportError(RuntimeError):
    """A plug-in rule module named in the `qdqreport.rules` entry-point group could not be imported."""


def _unloadable_plugin(entry: EntryPoint, exc: Exception) -> RuleSpec:
    dist = getattr(entry, "dist", None)
    source = f" (distribution {dist.name})" if dist is not None and getattr(dist, "name", None) else ""
    message = (f"plug-in rule {entry.name} = {entry.value}{source} failed to import: {type(exc).__name__}: {exc}; "
               f"fix the plug-in or uninstall it")

    def run(ctx: "Context") -> Iterable[Finding]:
        raise PluginImportError(message)

    run.__doc__ = f"Plug-in {entry.name} could not be imported.\n\n{message}"
    return RuleSpec(f"plugin:{entry.name}", entry.name, f"plug-in {entry.value} failed to import", run, (), entry.module)
