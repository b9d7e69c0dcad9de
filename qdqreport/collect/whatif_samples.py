"""Which samples the what-if's trials run on: every sample, unless one trial on all of them would eat the budget.

A new user's U2-Net-p (320 x 320, 40 samples): one trial on every sample took 76 s of the 120 s budget, so only the
unmodified model ran and no exclusion was ever measured; the report then printed an exclusion nobody had tried, and
run by hand it made the model worse. The search now plans its trials before the first one: from the QDQ stage's own
inference time per sample (the same model on the same samples, measured while the stage ran), when one trial on every
sample would cost more than a TRIALS_WANTED-th of the budget, every trial (the baseline included) runs on the largest
subset that fits, at least MIN_SAMPLES: half of it the samples the stage comparison found worst (the lowest
per-sample cosine of any output: where a fix has to show, and where a few collapsed samples hide), the rest spread
evenly over the set (activation_ranges.spread_indices), so a variant that mends only the worst samples while breaking
the others does not pass for a fix. What was measured on which samples is recorded (layers/whatif.json `samples`,
`of_samples`, `sample_indices`, `sample_choice`) and the report says it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from qdqreport.collect.activation_ranges import spread_indices

TRIALS_WANTED = 10  # the baseline, the top-K set, four bisection steps, a few prunes and single exclusions
MIN_SAMPLES = 8  # fewer and a decision (a flip, a map's IoU) rests on a handful of samples
# A trial costs more than its inference: the variant's graph built and serialised, its session created, every output
# judged: the session's creation is counted once a trial (the stage's own, as measured), the rest scales with the
# samples. Measured on the demo classifier (its QDQ model's FP16 float part makes sessions dear): a trial on all 50
# samples 1.0-1.5x the stage's inference time on them; 1.5 keeps to the budget's side.
TRIAL_OVERHEAD = 1.5
SAMPLE_CHOICE = "worst and spread"


@dataclass(frozen=True)
class TrialSamples:
    indices: tuple[int, ...]  # the samples every trial runs on, ascending
    of_samples: int
    planned_seconds: float | None  # one trial on every sample, as estimated (None: no stage timing to go on)

    @property
    def narrowed(self) -> bool:
        return len(self.indices) < self.of_samples

    def record(self) -> dict:
        """layers/whatif.json's account of the samples: `samples` always; the rest only when narrowed."""
        record: dict = {"samples": len(self.indices)}
        if self.narrowed:
            record.update(of_samples=self.of_samples, sample_indices=list(self.indices), sample_choice=SAMPLE_CHOICE,
                          planned_seconds=round(self.planned_seconds or 0.0, 3))
        return record


def trial_samples(count: int, seconds_per_sample: float | None, budget: float, worst: Sequence[int] = (),
                  fixed_seconds: float = 0.0) -> TrialSamples:
    """The samples of *count* the trials run on, given the QDQ model's inference seconds per sample (None: unknown,
    every sample), a trial's cost whatever its samples (*fixed_seconds*: the stage's session creation) and the
    search's *budget*; *worst*: sample indices, worst first (the stage comparison's)."""
    planned = None if seconds_per_sample is None else fixed_seconds + count * seconds_per_sample * TRIAL_OVERHEAD
    keep = samples_that_fit(count, seconds_per_sample, budget, fixed_seconds)
    if keep >= count:
        return TrialSamples(tuple(range(count)), count, planned)
    return TrialSamples(tuple(worst_and_spread(count, keep, worst)), count, planned)


def samples_that_fit(count: int, seconds_per_sample: float | None, budget: float, fixed_seconds: float = 0.0) -> int:
    """How many samples one trial can run on for TRIALS_WANTED trials to fit *budget*: *count* when all fit or the
    cost is unknown, never fewer than MIN_SAMPLES (or *count*, when smaller)."""
    if seconds_per_sample is None or seconds_per_sample <= 0 or count <= MIN_SAMPLES:
        return count
    fit = math.floor((budget / TRIALS_WANTED - fixed_seconds) / (seconds_per_sample * TRIAL_OVERHEAD))
    return max(min(fit, count), MIN_SAMPLES)


def worst_and_spread(count: int, keep: int, worst: Sequence[int]) -> list[int]:
    """*keep* sample indices: the first keep // 2 of *worst* (valid, distinct), topped up by indices spread evenly
    over the set (first and last first), ascending."""
    chosen: list[int] = []
    for index in worst:
        if len(chosen) >= keep // 2:
            break
        if 0 <= index < count and index not in chosen:
            chosen.append(index)
    limit = keep - len(chosen)
    while len(chosen) < keep and limit <= count:
        chosen += [i for i in spread_indices(count, limit) if i not in chosen][: keep - len(chosen)]
        limit += 1
    return sorted(chosen)
