"""Checkers for the exercises on bit pushing (LDP estimator, signed values)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int
from ..baselines import randomized_response
from ..bitpush import (
    assign_bits,
    bit_means,
    bit_push,
    estimator_variance,
    synthetic_integers,
    weighted_probabilities,
)
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt

__all__ = ["check_bitpush_estimator", "check_split_encoding"]


def check_bitpush_estimator(
    estimator: Callable[[np.ndarray, np.ndarray, int, float], float],
    *,
    n: int = 4000,
    trials: int = 300,
    rng: np.random.Generator | int | None = 20210804,
) -> CheckResult:
    r"""Self-check for the chapter exercise on LDP bit pushing.

    The student writes ``estimator(bit_index, reported_bit, b, epsilon) -> float``: the
    ``n`` clients' server-assigned bit indices (with :math:`p_j\propto 2^j`) and their
    randomized-response reports at level ``epsilon``; it must return an unbiased estimate
    of the mean value. The checker runs ``trials`` simulations on two populations and
    two values of ε and applies a z-test at 4.5 standard errors (standard error from the
    sample spread of the student's estimates, trials ≥ 100; four tests, so a correct
    estimator fails with probability about 4 · 2(1 − Φ(4.5)) ≈ 2.7e-5 on a random seed),
    and flags estimators whose variance is more than 4 times the prediction of
    :func:`fedfreq.bitpush.estimator_variance`.

    Returns
    -------
    fedfreq.exercises.CheckResult
        ``passed`` and a hint that never shows the expected answer.
    """
    n_ = check_int("n", n, low=100, high=MAX_TRIALS, reason="the checker runs your code that many times")
    t_ = check_int("trials", trials, low=100, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    b = 8
    pops = {
        "values near 40": synthetic_integers(n_, distribution="normal", b=b, mean=40, sd=8, rng=gen),
        "uniform values": synthetic_integers(n_, distribution="uniform", b=b, low=0, high=255, rng=gen),
    }
    p = weighted_probabilities(b, 1.0)
    for label, x in pops.items():
        truth = float(x.mean())
        for eps in (1.0, 3.0):
            est = np.empty(t_)
            for t in range(t_):
                idx = assign_bits(n_, p, rng=gen)[:, 0]
                rep = randomized_response((x >> idx) & 1, epsilon=eps, rng=gen)
                try:
                    val = attempt(estimator, idx.copy(), rep.copy(), b, eps)
                except StudentError as err:
                    return err.result
                if np.ndim(val) != 0 or not np.isfinite(val):
                    return CheckResult(False, "your estimator must return one finite number")
                est[t] = float(val)
            se = est.std(ddof=1) / math.sqrt(t_)
            z = (est.mean() - truth) / se if se > 0 else (0.0 if est.mean() == truth else np.inf)
            if abs(z) > 4.5:
                return CheckResult(
                    False,
                    f"on {label} at epsilon={eps} your estimates are biased (z = {z:.1f}); "
                    "did you undo the flipping of randomized response bit by bit?",
                )
            pred = estimator_variance(bit_means(x, b=b), p, n_, epsilon=eps)
            if est.var(ddof=1) > 4.0 * pred:
                return CheckResult(
                    False, f"on {label} at epsilon={eps} your estimates are unbiased but far noisier than necessary"
                )
    return CheckResult(True, "unbiased on both populations and both epsilons, with the expected spread")


def check_split_encoding(
    encode: Callable[[np.ndarray, int], np.ndarray],
    *,
    trials: int = 200,
    rng: np.random.Generator | int | None = 20210805,
) -> CheckResult:
    r"""Self-check for the bit-splitting exercise of the chapter on signed values.

    The student writes ``encode(values, b) -> codes``: for signed integers with
    :math:`|x| \le 2^b - 1` it must return non-negative integer codes of ``2b`` bits whose
    low ``b`` bits are :math:`[x \ge 0]\,|x|^{(j)}` and whose high ``b`` bits are
    :math:`[x < 0]\,|x|^{(j)}`, so that :math:`\sum_j 2^j(u^{(j)} - w^{(j)})` recovers the value.
    The checker decodes random inputs (several ``b``) exactly and then runs bit pushing
    on the codes, testing that the estimated mean is unbiased (z-test at 4.5 standard
    errors over ``trials`` runs: a correct encoding fails with probability about
    2(1 − Φ(4.5)) ≈ 6.8e-6 on a random seed).

    Returns
    -------
    fedfreq.exercises.CheckResult
    """
    t_ = check_int("trials", trials, low=50, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    for b in (3, 6, 10):
        x = gen.integers(-(2**b) + 1, 2**b, 500)
        try:
            codes = np.asarray(attempt(encode, x.copy(), b))
        except StudentError as err:
            return err.result
        if codes.shape != x.shape or not np.issubdtype(codes.dtype, np.integer):
            return CheckResult(False, "encode must return one integer code per value (same shape)")
        if codes.min() < 0 or codes.max() >= 2 ** (2 * b):
            return CheckResult(False, f"codes must lie in [0, 2**(2b) - 1]; for b = {b} some do not")
        low, high = codes & (2**b - 1), codes >> b
        if np.any((low > 0) & (high > 0)):
            return CheckResult(False, "a code uses both halves: the sign should select exactly one half")
        if not np.array_equal(low - high, x):
            wrong = int(np.count_nonzero(low - high != x))
            return CheckResult(False, f"for b = {b}, {wrong} of 500 codes do not decode to their value")
    x = gen.integers(-100, 40, 3000)
    half = weighted_probabilities(7, 1.0)
    probs = np.concatenate([half, half]) / 2.0
    try:
        codes = np.asarray(attempt(encode, x.copy(), 7))
    except StudentError as err:
        return err.result
    est = np.empty(t_)
    for t in range(t_):
        r = bit_push(codes, b=14, probs=probs, rng=gen)
        w = np.exp2(np.arange(7))
        est[t] = np.sum(w * r.means[:7]) - np.sum(w * r.means[7:])
    z = (est.mean() - x.mean()) / (est.std(ddof=1) / math.sqrt(t_))
    if abs(z) > 4.5:
        return CheckResult(False, f"bit pushing on your codes is biased (z = {z:.1f})")
    return CheckResult(True, "codes decode exactly and bit pushing on them is unbiased")
