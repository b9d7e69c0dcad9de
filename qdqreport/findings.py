"""Typed findings with structured evidence. Rules build these; only the renderer formats them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Union

SEVERITIES = ("error", "warning", "info")

# docs/rules.md prints this (qdqreport rules --markdown), after analysis/agreement.py's docstring.
SEVERITY_AND_RANKING = """\
### Severity: what the impact was

- **error**: the model's decisions change materially (an output *collapses*: top-1 lost, threshold
  decisions flipped, map IoU or detections lost beyond the levels above), or something certain
  breaks the pipeline: a stage failed, NaN/Inf appear, the deployment target rejects the graph
  (`--target`), a scale is zero or negative.
- **warning**: the outputs *degrade* (measurable, below the agree level, decisions mostly kept), or
  a cause is present whose impact could not be measured (no outputs compared).
- **info**: the cause is present but harmless here (the measured outputs agree), or it matters only
  for another deployment target (`--target onnxruntime` and a TensorRT-only Q/DQ defect).

A cosine of 0.998 is never an error: severity comes from the judgement, not from a raw metric, and
`--fail-on error` therefore fails a build only when decisions change or the pipeline breaks.

The user's own decode (`collect --postprocess`) judges a stage pair on the same bars: its agreement
(or mean `compare()` score) below 0.99 degrades, below 0.9 collapses. Where every raw output agrees
and the calibration is not unlike the evaluation data, a decision that already changes once the FP32
outputs move less than the pair's median raw difference (the task table's "changes at rel. L2" under
its median "raw rel. L2") sits on a margin any INT8 model moves: those flips degrade the task but are
not counted towards a collapse (`analysis/agreement.decode_level`). An output judged by numbers alone (cosine,
a slice's cosine, relative error) is never judged worse than that decode judges the task: measured decisions
outrank the numbers, which stay in the table's detail (`analysis/agreement.capped_by_task`).

### Ranking: which finding comes first

Findings are listed by severity, then by score × confidence (highest first), then by rule id and
subject, so two runs on the same bundle rank the same way. *Score* is how much of the measured
damage the cause explains (a symptom such as QR001, which locates the damage without explaining it,
scores 0.3); *confidence* is how sure the rule is that the cause is present (read from the graph:
high; inferred from statistics: lower). Measured evidence outranks heuristics: where the bundle holds
an experiment (the what-if exclusion of `--per-layer`, the FP16 check's control stage, the calibration check's
evaluation ranges, per-sample patterns), the rules it confirms keep their rank and the rules it refutes drop below
the ones it supports, with the measurement quoted in their evidence.

Findings tagged `root_cause` explain a measured divergence; `symptom` locates it (QR001: the first
stage pair whose outputs do not agree), and so does `localisation` (QR200: the first tensor along the
graph that diverges), so within a severity both come after the causes they locate; `deployment` is what the chosen target will reject or change
(own report section, never the cause of a divergence ONNX Runtime itself shows), so within a severity it comes
after the causes and before a bare symptom (under `--target onnxruntime` TensorRT's objections are info notes, listed
after any info finding about the model itself). So when the outputs
were measured to collapse (a symptom of error severity) and a root cause or a measured fix of error or warning
severity explains it, no deployment finding is ranked before that explanation; otherwise (no collapse, or nothing
explains it) a deployment finding keeps its rank by severity: a TensorRT error outranks the explanation of a mere
degradation ONNX Runtime shows (a TensorRT parser error is then the first thing to fix). The verdict leads
with the symptom and the first-ranked root cause; when the outputs agree it says so, quoting the
number that decided it, and names the most severe other finding. Where every error is a deployment finding and
ONNX Runtime measured no more than a degradation, the verdict says the red is TensorRT's only and names
`--target onnxruntime` for a model deployed with ONNX Runtime. A first-ranked cause that is a layer guess
(QR002, QR200, QR201) or a structural one (QR013) which no run has tested (no what-if, local recomputation or
control behind it) is named "most likely cause (untested: ...)", with what would test it.
"""
SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}
DEPLOYMENT_TAG = "deployment"  # what only the deployment target rejects or changes: its own report section
SYMPTOM_TAG = "symptom"  # locates a measured divergence without explaining it (QR001)
# The score of a cause another measurement explains or refutes (rules/_measured.capped), under every calibration
# finding's (QR006's 0.3 and up); the headline names no cause scored this low as "most likely" (report/model.py).
REFUTED_SCORE = 0.2
LOCALISATION_TAG = "localisation"  # where along the graph the divergence first shows (QR200): it locates, too
ROOT_CAUSE_TAG = "root_cause"
FIX_TAG = "fix"  # a measured fix (QR203: excluding these nodes restores the outputs)
# A cause a control measured whole whose loss the deployment target does not share (QR012: ONNX Runtime's integer
# kernels on this CPU, target TensorRT): scored low, for nothing follows the model, but established, not a weak suspect.
RUNTIME_ONLY_TAG = "runtime_only"


@dataclass(frozen=True)
class Metric:
    """One number that decided (or supports) the finding, with the threshold it was held to."""

    name: str
    value: float | int | str | None
    unit: str = ""
    threshold: str = ""  # e.g. "< 0.99"


@dataclass(frozen=True)
class Table:
    """A small table; `note` says what was cut when rows were truncated."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Series:
    """Numbers to plot: `kind` is "bar" (labels -> values) or "points" (index -> value)."""

    title: str
    kind: str
    labels: tuple[str, ...]
    values: tuple[float, ...]
    y_label: str = ""
    threshold: float | None = None


Evidence = Union[Metric, Table, Text, Series]


@dataclass(frozen=True)
class Fix:
    """A concrete remedy: what to do, and where one exists, the command line that does it."""

    action: str
    command: str = ""


@dataclass(frozen=True)
class Finding:
    rule_id: str
    title: str
    severity: str
    confidence: float  # 0..1: how sure the rule is that this cause is real
    score: float  # 0..1: how much of the observed damage this cause plausibly explains
    subject: str  # what the finding is about: a stage pair, node names, an input
    summary: str
    evidence: tuple[Evidence, ...] = ()
    fixes: tuple[Fix, ...] = ()
    stage: str = ""  # the comparison or stage it concerns, when one
    tags: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")
        if not 0.0 <= self.confidence <= 1.0 or not 0.0 <= self.score <= 1.0:
            raise ValueError("confidence and score must be within 0..1")

    @property
    def fingerprint(self) -> str:
        """Stable across runs for the same rule and subject: an HTML anchor and a diff key."""
        return hashlib.sha1(f"{self.rule_id}\0{self.subject}".encode()).hexdigest()[:10]

    def rank_key(self) -> tuple:
        """Deterministic ranking: severity; within a severity, what explains before the symptom it explains (the
        verdict already states the symptom: a list of causes that opens with "the outputs degrade" answers
        nothing), and a cause before what only the deployment runtime would reject or change (a finding about the
        measured model before a note about the runtime; a rejection still comes before a bare symptom, which
        explains nothing); then score x confidence, then rule id and subject."""
        tags = set(self.tags)
        return (SEVERITY_RANK[self.severity], bool({SYMPTOM_TAG, LOCALISATION_TAG} & tags), DEPLOYMENT_TAG in tags,
                -round(self.score * self.confidence, 6),
                self.rule_id, self.subject)



def rank_findings(findings: list[Finding]) -> list[Finding]:
    """The order findings are reported in (findings.json, the report, SARIF, the corpus scorer).

    By `Finding.rank_key`, with one exception that the measurement decides: when the outputs were
    measured to collapse (a symptom finding of error severity) and rules explain that collapse (root
    causes, or a fix measured to restore the outputs, of error or warning severity), no deployment
    finding comes before the last of those explanations. What only the target runtime rejects or
    changes cannot cause a collapse ONNX Runtime measured, and fixing it would not restore the outputs.
    Without a collapse (the outputs agree or merely degrade, as a healthy recipe's may) or an
    explanation of it, a deployment finding keeps its rank by severity, as the most important thing to
    fix before deploying: the ninth corpus part's YOLOX detector quantized with asymmetric INT8 keeps 44
    of 47 detections on ONNX Runtime, as its healthy recipe, and TensorRT rejects its zero-points.
    """
    ranked = sorted(findings, key=Finding.rank_key)
    explanations = [f for f in ranked if (ROOT_CAUSE_TAG in f.tags or FIX_TAG in f.tags)
                    and DEPLOYMENT_TAG not in f.tags and f.severity in ("error", "warning")]
    if not explanations or not any(SYMPTOM_TAG in f.tags and f.severity == "error" for f in ranked):
        return ranked
    last = explanations[-1]
    early = [f for f in ranked if DEPLOYMENT_TAG in f.tags and f.rank_key() < last.rank_key()]
    rest = [f for f in ranked if f not in early]
    after_last = rest.index(last) + 1
    return rest[:after_last] + early + rest[after_last:]
