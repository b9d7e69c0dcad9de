"""The per-layer fold's shortcut for a candidate with the bits of its reference (issue 12) adds what the full fold
adds, bit for bit."""

from __future__ import annotations

import numpy as np

from qdqreport.analysis.metrics import Accumulator
from qdqreport.collect import streaming


def _sums(acc: Accumulator) -> str:
    return repr(vars(acc))


def _fold_both(pairs, monkeypatch) -> tuple[str, str]:
    """The accumulator after folding *pairs* with the shortcut, and with it turned off."""
    results = []
    for shortcut in (True, False):
        acc = Accumulator()
        with monkeypatch.context() as patch:
            if not shortcut:
                patch.setattr(streaming, "_same_bits", lambda ref, cand: False)
            for ref, cand in pairs:
                if ref.ndim == 1:  # the per-layer pass's call (a flat float32 reference), inside its errstate
                    with np.errstate(invalid="ignore", over="ignore"):
                        streaming.fold_pair(acc, ref, cand)
                else:  # the weight rows' call
                    streaming.accumulate(acc, ref, cand)
        results.append(_sums(acc))
    return results[0], results[1]


def test_identical_pairs_fold_as_the_full_fold_does(monkeypatch) -> None:
    rng = np.random.default_rng(12)
    values = [(rng.standard_normal(n) * scale).astype(np.float32)
              for n in (1, 2, 3, 1023, 1024, 1025, 65536 + 1024, 65536 + 1025, 200_000) for scale in (1e-3, 1.0, 3e4)]
    signed = np.array([0.0, -0.0, 1.0, -0.0], np.float32)
    with_inf = np.array([1.0, np.inf, 2.0], np.float32)
    with_nan = np.array([1.0, np.nan, 2.0], np.float32)
    overflow = np.full(1000, 3e38, np.float32)  # Σref² overflows float32: the finite path, shortcut or not
    cases = [[(v, v.copy()) for v in values],
             [(signed, signed.copy()), (signed, np.abs(signed))],  # -0.0 against 0.0: not the same bits
             [(with_inf, with_inf.copy()), (with_nan, with_nan.copy()), (overflow, overflow.copy())]]
    tail = values[-1].copy()
    tail[-2] += 1.0  # the same first, middle and last values, a difference inside a later block
    middle = values[-1].copy()
    middle[1500] = np.nextafter(middle[1500], np.float32(np.inf))
    cases.append([(values[-1], tail), (values[-1], middle), (values[-1], values[-1].copy())])
    cases.append([(values[9].reshape(1, 3, 11, 31), values[9].reshape(1, 3, 11, 31).copy())])  # not flat
    unaligned = np.empty(values[-1].size + 1, np.float32)[1:]
    unaligned[...] = values[-1]
    cases.append([(values[-1], unaligned)])  # the same bits at another address
    for pairs in cases:
        with_shortcut, without = _fold_both(pairs, monkeypatch)
        assert with_shortcut == without


def test_same_bits_compares_bits_not_values() -> None:
    a = np.array([0.0, 1.0, 2.0], np.float32)
    assert streaming._same_bits(a, a.copy())
    assert not streaming._same_bits(a, np.array([-0.0, 1.0, 2.0], np.float32))
    nan = np.array([np.nan, 1.0], np.float32)
    assert not streaming._same_bits(nan, nan.copy())  # NaN != NaN at the probe: the full fold handles it
    big = np.arange(300_000, dtype=np.float32)
    other = big.copy()
    other[70_000] = -1.0  # past the probe and the first block
    assert not streaming._same_bits(big, other) and streaming._same_bits(big, big.copy())
