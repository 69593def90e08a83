"""Checkers for the exercises on user-level contribution bounding (thresholds, clipping, debiasing)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int
from ..contribution import (
    clipped_poisson_mean,
    gaussian_threshold,
    threshold_objective,
    unbounded_threshold,
)
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed

__all__ = [
    "check_clipped_poisson_inverse",
    "check_clipped_poisson_mean",
    "check_gaussian_threshold",
    "check_rand_clip",
    "check_unbounded_release",
]


@checker
def check_clipped_poisson_inverse(
    func: Callable[[float, int], float],
    *,
    C: int = 3,
    trials: int = 200,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "invert h": does ``func(y, C)`` return :math:`h^{-1}(y)`?

    Draws ``trials`` values λ from a log-uniform law on [1e-3, 30], feeds
    :math:`y = h(\lambda)` (:func:`fedfreq.contribution.clipped_poisson_mean`) and
    compares with λ to 1e-6 relative (deterministic). Then, by Monte Carlo with 20 000
    Poisson draws at λ = 1.5, tests that the student's root is consistent with a
    simulated clipped mean within 4 standard errors (a correct inverse fails this with
    probability about 2(1 − Φ(4)) ≈ 6.3e-5 on a random seed). The message never states
    the answer.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def inverse(y, C):
    ...     return y
    >>> check_clipped_poisson_inverse(inverse).passed
    False
    """
    c = check_int("C", C, low=1)
    k = check_int("trials", trials, low=1, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    lam = np.exp(gen.uniform(math.log(1e-3), math.log(30.0), size=k))
    y = clipped_poisson_mean(lam, c)
    ok = y < c * (1 - 1e-9)
    y, lam = y[ok], lam[ok]
    try:
        got = np.array([float(attempt(func, float(v), c)) for v in y])
    except StudentError as err:
        return err.result
    except (TypeError, ValueError):
        return not_yet("your function must return one number per call")
    if not np.all(np.isfinite(got)):
        return not_yet("some results are not finite: check values of y close to C, where h is flat")
    rel = np.abs(got - lam) / lam
    if np.max(rel) > 1e-6:
        i = int(np.flatnonzero(rel > 1e-6)[0])
        return not_yet(
            f"for y = {y[i]:.6g} (C = {c}) your answer is not h^-1(y) to 1e-6 relative. "
            "Remember that h is increasing and concave, and h(lambda) <= lambda."
        )
    lam0 = 1.5
    sample = np.minimum(gen.poisson(lam0, size=20_000), c)
    se = sample.std(ddof=1) / math.sqrt(sample.size)
    try:
        back = float(attempt(func, float(sample.mean()), c))
    except StudentError as err:
        return err.result
    if abs(clipped_poisson_mean(back, c) - sample.mean()) > 4 * se + 1e-9:
        return not_yet("your inverse does not reproduce simulated clipped means")
    return passed(f"{y.size} values inverted to relative accuracy {np.max(rel):.1e}")


@checker
def check_gaussian_threshold(
    func: Callable[[np.ndarray, np.ndarray, int, float], float],
    *,
    trials: int = 40,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "compute C* of Theorem 4.3": ``func(l1, l2, d, sigma)``.

    Generates ``trials`` random user-level datasets (heterogeneous sizes, Dirichlet item
    mixes) and compares the student's threshold with the minimiser of the convex
    objective G(C) (:func:`fedfreq.contribution.threshold_objective`) by its objective
    value: a correct answer attains min G to 1e-9 relative (deterministic: no false
    fails). The message never states the answer nor on which side of it the answer lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def threshold(l1, l2, d, sigma):
    ...     return 0.0
    >>> check_gaussian_threshold(threshold).passed
    False
    """
    k = check_int("trials", trials, low=1, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    for _ in range(k):
        n, d = int(gen.integers(5, 200)), int(gen.integers(1, 12))
        sizes = gen.poisson(gen.gamma(0.8, 30.0, size=n))
        mixes = gen.dirichlet(np.full(d, 0.5), size=n)
        N = np.array([gen.multinomial(m, p) for m, p in zip(sizes, mixes, strict=True)]).reshape(n, d)
        l1, l2 = N.sum(axis=1).astype(float), np.sqrt((N.astype(float) ** 2).sum(axis=1))
        sigma = float(gen.uniform(0.2, 6.0))
        try:
            got = float(attempt(func, l1, l2, d, sigma))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet("a threshold is one number")
        if not math.isfinite(got) or got < 0:
            return not_yet(f"a threshold must be a finite number >= 0; got {got!r}")
        best = threshold_objective(l1, l2, max(gaussian_threshold(l1, l2, d=d, sigma=sigma), 1e-150), d=d, sigma=sigma)
        mine = threshold_objective(l1, l2, max(got, 1e-150), d=d, sigma=sigma)
        if mine > best * (1 + 1e-9) + 1e-9:
            return not_yet(
                f"on a dataset with n = {n}, d = {d}, sigma = {sigma:.3g} a smaller value of G than "
                "your threshold's is possible. Look at the sign of the right derivative "
                "M - sum over users with ||N_i||_2 > C of ||N_i||_1/||N_i||_2."
            )
    return passed(f"your threshold minimises G(C) on all {k} random datasets")


@checker
def check_rand_clip(
    func: Callable[[np.ndarray, int, np.random.Generator], np.ndarray],
    *,
    trials: int = 3000,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "random clipping of one user": ``func(hist, C, rng)``.

    ``hist`` is a 1-D integer histogram, ``C`` an integer and ``rng`` a numpy
    Generator; the answer must be an integer histogram with :math:`\min(\|N\|_1, C)`
    items, entrywise at most ``hist``, whose mean over ``trials`` calls matches
    :math:`C N_j/\max(C, \|N\|_1)` within 4 standard errors in each of the five
    coordinates (a correct sampler fails with probability at most 5 · 2(1 − Φ(4)) ≈
    3.2e-4 on a random seed). The message never states the answer.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def clip(hist, C, rng):
    ...     return np.zeros_like(hist)
    >>> check_rand_clip(clip).passed
    False
    """
    k = check_int("trials", trials, low=100, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    hist = np.array([6, 0, 3, 1, 2])
    C = 5
    draws = []
    try:
        for _ in range(k):
            out = np.asarray(attempt(func, hist.copy(), C, gen))
            if out.shape != hist.shape or not np.all(out == np.round(out)):
                return not_yet("return an integer histogram of the same length as the input")
            if out.sum() != min(hist.sum(), C) or np.any(out < 0) or np.any(out > hist):
                return not_yet("keep exactly min(||N||_1, C) items, never more copies of an item than the user holds")
            draws.append(out)
        small = np.asarray(attempt(func, np.array([1, 2, 0, 0, 0]), C, gen))
    except StudentError as err:
        return err.result
    except (TypeError, ValueError):
        return not_yet("return an integer histogram of the same length as the input")
    sample = np.array(draws, dtype=float)
    target = C * hist / max(C, hist.sum())
    se = sample.std(axis=0, ddof=1) / math.sqrt(k)
    if np.any(np.abs(sample.mean(axis=0) - target) > 4 * se + 1e-9):
        return not_yet(
            "the sizes are right but the items are not drawn uniformly without replacement "
            "(the average kept histogram is not proportional to the input)"
        )
    if not np.array_equal(small, [1, 2, 0, 0, 0]):
        return not_yet("a user with at most C items must keep all of them")
    return passed(f"sizes, bounds and unbiasedness ({k} draws, 4 standard errors) all check out")


@checker
def check_clipped_poisson_mean(
    func: Callable[[float, int], float],
    *,
    trials: int = 200,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "compute h stably": does ``func(lam, C)`` return
    :math:`h(\lambda) = \mathbb E\min(\mathrm{Poi}(\lambda), C)` to 1e-9 relative?

    Compares with :func:`fedfreq.contribution.clipped_poisson_mean` on eight fixed hard
    cases (λ far below C, where the textbook sum cancels; λ and C in the thousands,
    where factorials overflow) and on ``trials`` random pairs (λ log-uniform on
    [1e-8, 1e4], C log-uniform on [1, 2000]). Deterministic: a correct, stable
    implementation has no false fails. The message names the regime that fails, never
    the expected value nor the size or sign of the error.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def h(lam, C):
    ...     return lam
    >>> check_clipped_poisson_mean(h).passed
    False
    """
    k = check_int("trials", trials, low=1, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    hard = [(1e-8, 1000), (1e-6, 3), (0.5, 1), (3.0, 1), (50.0, 50), (1e4, 1000), (1e4, 20), (200.0, 230)]
    lam = np.exp(gen.uniform(math.log(1e-8), math.log(1e4), size=k))
    cs = np.floor(np.exp(gen.uniform(0.0, math.log(2000.0), size=k))).astype(int)
    cases = hard + [(float(a), int(c)) for a, c in zip(lam, cs, strict=True)]
    for a, c in cases:
        try:
            got = float(attempt(func, a, c))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet("your function must return one number per call")
        ref = float(clipped_poisson_mean(a, c))
        if not math.isfinite(got) or abs(got - ref) > 1e-9 * ref + 1e-300:
            if a < c / 10:
                where = "lambda is much smaller than C (look for cancellation between nearly equal terms)"
            elif a > 10 * c:
                where = "lambda is much larger than C (look for overflow or underflow of Poisson terms)"
            else:
                where = "lambda and C are comparable (check the formula itself, and C = 1)"
            return not_yet(
                f"for lambda = {a:.3g}, C = {c} your value is not accurate to 1e-9 relative; "
                f"this is a case where {where}"
            )
    return passed(f"h(lambda) accurate to 1e-9 relative on {len(cases)} pairs (lambda, C), hard cases included")


@checker
def check_unbounded_release(
    func: Callable[[np.ndarray, np.ndarray, int, float, float, np.random.Generator], np.ndarray],
    *,
    trials: int = 3000,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "the release step of Algorithm 3":
    ``func(hbar, Nbar, C, epsilon, delta, rng)`` returns the published histogram.

    ``hbar`` holds the clipped sums :math:`\bar h_j`, ``Nbar`` the true totals; the answer
    must add Laplace noise of scale C/ε to the items with :math:`\overline N_j > 0` and
    publish :math:`\bar h_j + Z_j` only above the threshold t of Algorithm 3. In two
    settings of (C, ε, δ), each with ``trials`` calls, the checker requires an item no
    user holds to be published as exactly 0 (deterministic), and runs five z-tests at
    4.5 standard errors (CLT): the publication frequencies of three items whose clipped
    sums lie below or near t, and the mean and the variance of an item far above t (its
    chance of being withheld, below 3e-5, moves the mean by under 0.02 standard errors).
    A correct release fails with probability at most 10 · 2(1 − Φ(4.5)) ≈ 6.8e-5 on a
    random seed. The messages say which property fails, never the threshold or the
    scale, and read the same whichever side of the answer an attempt lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def release(hbar, Nbar, C, epsilon, delta, rng):
    ...     return hbar
    >>> check_unbounded_release(release).passed
    False
    """
    k = check_int("trials", trials, low=200, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    z = 4.5
    for c, eps, delta in ((4, 1.0, 1e-3), (2, 0.5, 1e-2)):
        t = unbounded_threshold(c, epsilon=eps, delta=delta)
        b = c / eps
        hbar = np.array([0.0, t - 2.6 * b, t - 1.1 * b, t - 0.1 * b, t + 11.0 * b])
        hbar = np.floor(hbar)
        Nbar = np.concatenate([[0.0], hbar[1:] + c])
        out = np.empty((k, hbar.size))
        try:
            for i in range(k):
                row = np.asarray(attempt(func, hbar.copy(), Nbar.copy(), c, eps, delta, gen), dtype=float)
                if row.shape != hbar.shape:
                    return not_yet("return one published count per item, an array the shape of hbar")
                out[i] = row
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet("return one published count per item, an array the shape of hbar")
        if not np.all(np.isfinite(out)):
            return not_yet("some published counts are not finite numbers")
        if np.any(out[:, 0] != 0):
            return not_yet(
                "an item that no user holds must never be published: Algorithm 3 adds noise only to items "
                "with Nbar_j > 0"
            )
        for j in (1, 2, 3):
            p = 0.5 * math.exp(-(t - hbar[j]) / b)
            freq = float(np.mean(out[:, j] != 0))
            if abs(freq - p) > z * math.sqrt(p * (1 - p) / k):
                return not_yet(
                    f"with C = {c}, epsilon = {eps}, delta = {delta}, items whose clipped sum lies below or near the "
                    "release threshold are published with the wrong frequency: check the threshold and the noise"
                )
        far = out[:, 4]
        if abs(far.mean() - hbar[4]) > z * math.sqrt(2 * b * b / k):
            return not_yet(
                f"with C = {c}, epsilon = {eps}, the published count of an item far above the threshold is "
                "biased: the noise must be centred at 0 and added to the clipped sum"
            )
        if abs(far.var(ddof=1) - 2 * b * b) > z * math.sqrt(20 * b**4 / k):
            return not_yet(
                f"with C = {c}, epsilon = {eps}, the spread of the published count of an item far above the "
                "threshold does not match Algorithm 3's noise: check its law and its scale"
            )
    return passed(f"publication frequencies, mean and spread match Algorithm 3 in 2 settings ({k} calls each)")
