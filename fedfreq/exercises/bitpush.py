"""Checkers for the exercises on bit pushing (LDP estimator, exact variance, the bound of Eq. (1))
and on its extensions (signed values, stochastic rounding)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_array, check_int
from ..baselines import randomized_response
from ..bitpush import (
    assign_bits,
    bit_means,
    bit_push,
    estimator_variance,
    finite_population_variance,
    synthetic_integers,
    weighted_probabilities,
)
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed

__all__ = [
    "check_bitpush_estimator",
    "check_split_encoding",
    "check_fixed_population_variance",
    "check_eq1_counterexample",
    "check_stochastic_rounding",
]


@checker
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

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def estimator(bit_index, reported_bit, b, epsilon):
    ...     return 0.0
    >>> check_bitpush_estimator(estimator, n=1000, trials=100).passed
    False
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


@checker
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

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def encode(values, b):
    ...     return np.abs(values)
    >>> check_split_encoding(encode, trials=60).passed
    False
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


def _random_counts(gen: np.random.Generator, n: int, b: int, *, all_used: bool) -> np.ndarray:
    """A random split of ``n`` clients over ``b`` bits (every bit used, or some left empty)."""
    if all_used:
        cuts = np.sort(gen.choice(np.arange(1, n), size=b - 1, replace=False))
    else:
        cuts = np.sort(gen.integers(0, n + 1, size=b - 1))
    return np.diff(np.concatenate([[0], cuts, [n]])).astype(np.int64)


@checker
def check_fixed_population_variance(
    func: Callable[[np.ndarray, np.ndarray, int], float],
    *,
    rng: np.random.Generator | int | None = 20210807,
) -> CheckResult:
    r"""Self-check for the exercise on the exact variance of bit pushing for a fixed population.

    ``func(values, counts, b)`` must return the exact variance of server-assigned bit
    pushing when the ``n`` clients holding ``values`` (integers in [0, 2**b - 1]) are split
    uniformly at random into groups of sizes ``counts[j]`` (summing to n) that report bit
    ``j``; a bit with no report is estimated by 0. Compared with
    :func:`fedfreq.bitpush.finite_population_variance` on 30 random populations in which
    every bit is reported and then 30 in which some bits are not (b from 1 to 8, n from
    2 to 60), to a relative tolerance of 1e-9. Exact: a correct function never fails.

    Examples
    --------
    >>> def lemma1(values, counts, b):        # the i.i.d. formula of Lemma 1
    ...     m = np.array([np.mean((np.asarray(values) >> j) & 1) for j in range(b)])
    ...     return float(np.sum(4.0 ** np.arange(b) * m * (1 - m) / np.asarray(counts)))
    >>> print(check_fixed_population_variance(lemma1))  # doctest: +ELLIPSIS
    NOT YET: this is the variance for i.i.d. reports (Lemma 1); ...
    """
    gen = as_generator(rng)
    cases = []
    for all_used in (True, False):
        for _ in range(30):
            b = int(gen.integers(1, 9))
            n = int(gen.integers(max(2, b + 1), 61))
            if gen.random() < 0.5:
                x = gen.integers(0, 2**b, n)
            else:  # values concentrated around a random centre: correlated bits
                centre = int(gen.integers(0, 2**b))
                x = np.clip(centre + gen.integers(-3, 4, n), 0, 2**b - 1)
            cases.append((all_used, x.astype(np.int64), _random_counts(gen, n, b, all_used=all_used), b))
    try:
        for all_used, x, c, b in cases:
            v = attempt(func, x.copy(), c.copy(), b)
            if isinstance(v, bool) or np.ndim(v) != 0 or not np.isfinite(v):
                return not_yet("your function must return one finite number")
            ref = finite_population_variance(x, c, b=b)
            if abs(float(v) - ref) <= 1e-9 * abs(ref) + 1e-12:
                continue
            if all_used:
                m = bit_means(x, b=b)
                iid = float(np.sum(4.0 ** np.arange(b) * m * (1 - m) / c))
                if abs(float(v) - iid) <= 1e-9 * iid + 1e-12:
                    return not_yet(
                        "this is the variance for i.i.d. reports (Lemma 1); here the population is fixed and split "
                        "into disjoint groups, one per bit"
                    )
                return not_yet(
                    f"for a population of n = {x.size} values with b = {b} bits, every bit reported, your variance is "
                    "not the exact one: account for sampling without replacement within a group and for the "
                    "covariance between the groups of different bits"
                )
            return not_yet(
                f"right when every bit is reported, but not for n = {x.size}, b = {b} with some bits unreported "
                "(estimated by 0): which part of each value do the reported bits see?"
            )
    except StudentError as err:
        return err.result
    return passed(f"exact on all {len(cases)} populations, with and without unreported bits")


@checker
def check_eq1_counterexample(make_population: Callable[[int], np.ndarray], *, b: int = 10) -> CheckResult:
    r"""Self-check for the find-the-error exercise on the variance bound of Eq. (1) of
    Cormode & Markov (2021).

    The student writes ``make_population(b) -> values``, returning a population of
    integers in [0, 2**b - 1] on which the printed bound
    :math:`\frac1n\sum_j(2^b-1)\bar x^{(j)}(1-\bar x^{(j)})2^j < \bar x\,2^{b-2}/n`
    fails, i.e. the variance of Lemma 1 with :math:`p_j = 2^j/(2^b-1)` exceeds
    :math:`\bar x\,2^{b-2}/n`. Exact (the variance is a closed form), so no false fails.
    A population outside the allowed range is feedback, not an error.

    Raises
    ------
    ValueError
        If ``b`` is not an integer in [2, 30].

    Examples
    --------
    >>> print(check_eq1_counterexample(lambda b: [2**b - 1, 2**b - 1, 2**b - 2], b=3))  # doctest: +ELLIPSIS
    NOT YET: for this population the bound holds. ...
    """
    b_ = check_int("b", b, low=2, high=30, reason="bit depths of the chapter")
    try:
        out = attempt(make_population, b_)
    except StudentError as err:
        return err.result
    try:
        x = check_array("values", out, ndim=1, integer=True, min_size=1)
    except ValueError:
        return not_yet("make_population(b) must return a non-empty 1-D array of integers")
    if x.min() < 0 or x.max() >= 2**b_:
        return not_yet(f"the values must be integers in [0, 2**b - 1] = [0, {2**b_ - 1}] for b = {b_}")
    n = x.size
    mean = float(x.mean())
    if mean == 0.0:
        return not_yet("with every value 0 both sides are 0: that is no violation")
    v = estimator_variance(bit_means(x, b=b_), weighted_probabilities(b_, 1.0), n)
    bound = mean * 2.0 ** (b_ - 2) / n
    if v > bound * (1.0 + 1e-9):
        return passed(f"a counterexample: Lemma 1's variance is {v / bound:.3g} times the printed bound")
    return not_yet(
        "for this population the bound holds. Write out what the last inequality needs bit by bit, and look for "
        "bit means where that fails"
    )


@checker
def check_stochastic_rounding(
    func: Callable[[np.ndarray, int, np.random.Generator], np.ndarray],
    *,
    trials: int = 400,
    rng: np.random.Generator | int | None = 20210808,
) -> CheckResult:
    r"""Self-check for the exercise on unbiased stochastic rounding to a fixed-point grid.

    ``func(values, frac_bits, rng)`` must round each non-negative value to one of the two
    neighbouring points of the grid :math:`2^{-f}\mathbb Z` (``f = frac_bits``), at random
    (drawing from ``rng``), so that the rounded value is unbiased. The checker calls it
    ``trials`` times for each of f = 0, 2, 5 on 900 values in three groups (fractional
    part, in grid units, in [0.05, 0.45], in [0.55, 0.95], and anywhere), checks every
    output exactly (on the grid, one of the two neighbours), and tests each group's
    bias with a z-test at 4.5 standard errors (from the spread of the per-call group
    means, so dependence between the values of one call is allowed). Nine tests: a
    correct rounding fails with probability about 9 · 2(1 − Φ(4.5)) ≈ 6.1e-5 on a random
    seed (the default seed is fixed).

    Examples
    --------
    >>> def nearest(values, frac_bits, rng):
    ...     return np.round(values * 2.0**frac_bits) / 2.0**frac_bits
    >>> print(check_stochastic_rounding(nearest, trials=100))  # doctest: +ELLIPSIS
    NOT YET: with frac_bits=0 your rounding never varies between calls: ...
    """
    t_ = check_int("trials", trials, low=100, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    groups = ("whose fractional part is below one half", "whose fractional part is above one half", "of any kind")
    for f in (0, 2, 5):
        scale = 2.0**f
        fracs = np.concatenate(
            [gen.uniform(0.05, 0.45, 300), gen.uniform(0.55, 0.95, 300), gen.uniform(0.02, 0.98, 300)]
        )
        whole = gen.integers(0, 20 * int(scale), 900)
        v = (whole + fracs) / scale
        lo, hi = np.floor(v * scale), np.ceil(v * scale)
        means = np.empty((t_, 3))
        for t in range(t_):
            try:
                out = attempt(func, v.copy(), f, gen)
                r = np.asarray(out, dtype=float)
            except StudentError as err:
                return err.result
            except (TypeError, ValueError):
                return not_yet("return an array of numbers, one per value")
            if r.shape != v.shape or not np.all(np.isfinite(r)):
                return not_yet("return one finite number per value (an array of the same shape)")
            s = r * scale
            if np.any(np.abs(s - np.round(s)) > 1e-6):
                return not_yet(f"with frac_bits={f} some outputs are not on the grid of multiples of 2**-frac_bits")
            if np.any((s < lo - 1e-6) | (s > hi + 1e-6)):
                return not_yet(f"with frac_bits={f} some outputs are not one of the two grid points around their value")
            means[t] = (s - v * scale).reshape(3, 300).mean(axis=1)
        for g in range(3):
            mu, sd = float(means[:, g].mean()), float(means[:, g].std(ddof=1))
            if sd < 1e-12:
                if abs(mu) > 1e-9:
                    return not_yet(
                        f"with frac_bits={f} your rounding never varies between calls: a deterministic rounding to "
                        "a grid cannot be unbiased for every value"
                    )
                continue
            if abs(mu) > 4.5 * sd / math.sqrt(t_):
                return not_yet(
                    f"with frac_bits={f} your rounding is biased for values {groups[g]} (in grid units): the rounded "
                    "value should equal the value on average"
                )
    return passed("outputs on the grid, always a neighbouring point, and unbiased in all 9 tests")
