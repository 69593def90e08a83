"""Checkers for the exercises on the cPBM mechanism and its clipping threshold."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int
from ..cpbm import clip_l2, clipping_error_bound, cpbm_variance, optimal_threshold
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, not_yet, passed

__all__ = ["check_cpbm_decoder", "check_optimal_threshold"]


def check_cpbm_decoder(
    decode: Callable[[np.ndarray, int, float, float, int], np.ndarray],
    *,
    trials: int = 400,
    rng: np.random.Generator | int | None = 20260302,
) -> CheckResult:
    r"""Self-check for the exercise "implement the cPBM decoder".

    ``decode(sums, n, theta, C, m)`` must return :math:`\hat y` (shape (D,)). The check
    simulates ``trials`` secure sums for known clipped coefficients (D = 3) and tests,
    coordinate by coordinate, that the mean over the runs is within 4 standard errors of
    the truth (exact standard errors: a correct decoder fails one of the three z-tests
    with probability at most 3 · 2(1 − Φ(4)) ≈ 1.9e-4 on a random seed), and that the
    empirical variance is within 25 % of the exact one (with 400 trials the sample
    variance's relative standard deviation is about √(2/399) ≈ 7 %, so 25 % is 3.5 of
    them). The message never states the formula.

    Examples
    --------
    >>> print(check_cpbm_decoder(lambda s, n, theta, C, m: C / (m * n * theta) * (s - m * n / 2)))
    PASS: unbiased (max |z| ...
    """
    gen = as_generator(rng)
    trials = check_int("trials", trials, low=50, high=MAX_TRIALS, reason="the checker runs your code that many times")
    n, D, theta, C, m = 40, 3, 0.2, 2.0, 5
    Y = clip_l2(gen.normal(0.0, 1.0, size=(n, D)), C)
    truth = Y.mean(axis=0)
    var = cpbm_variance(Y, theta=theta, C=C, m=m)
    p = theta * Y / C + 0.5
    sums = gen.binomial(m, np.broadcast_to(p, (trials, n, D))).sum(axis=1)
    try:
        est = np.array([np.asarray(attempt(decode, s, n, theta, C, m), dtype=float) for s in sums])
    except StudentError as err:
        return err.result
    except (TypeError, ValueError):
        return not_yet(f"your decoder should return {D} numbers per call")
    if est.shape != (trials, D) or not np.all(np.isfinite(est)):
        return not_yet(f"your decoder should return {D} finite numbers per call; got shape {est.shape[1:]}")
    z = (est.mean(axis=0) - truth) / np.sqrt(var / trials)
    if np.max(np.abs(z)) > 4:
        return not_yet(
            "the average of your estimates is off from the true mean of the clipped "
            "coefficients by more than 4 standard errors. Check the centring (what is E[S]?) and "
            "the scale (how does a change of y move p, and then S?)."
        )
    ratio = est.var(axis=0, ddof=1) / var
    if np.max(np.abs(ratio - 1)) > 0.25:
        return not_yet("unbiased on average, but the spread of your estimates is not the decoder's; check the scale.")
    return passed(
        f"unbiased (max |z| = {np.max(np.abs(z)):.2f} < 4) and variance ratio within 25% over {trials} trials"
    )


def check_optimal_threshold(
    func: Callable[[np.ndarray, int, int, float], float],
    *,
    rng: np.random.Generator | int | None = 20260303,
) -> CheckResult:
    r"""Self-check for the exercise "compute the OcPBM threshold".

    ``func(norms, D, m, theta)`` must return a threshold C ≥ 0 minimising the
    Theorem 1 bound :func:`fedfreq.cpbm.clipping_error_bound` for the given norms. Tested
    on four sets of norms (including ties and a regime where clipping does not pay) by
    the bound's value, to 1e-9 relative (deterministic: no false fails); the message
    never reveals the expected threshold nor on which side of it the answer lies.

    Examples
    --------
    >>> from fedfreq.cpbm import optimal_threshold
    >>> print(check_optimal_threshold(lambda a, D, m, theta: optimal_threshold(a, D=D, m=m, theta=theta)))
    PASS: ...
    """
    gen = as_generator(rng)
    cases = [
        (gen.gamma(2.0, 1.0, size=300), 50, 30, 0.2),
        (np.round(gen.gamma(2.0, 1.0, size=200), 1), 20, 10, 0.25),
        (gen.lognormal(0.0, 1.0, size=1000), 100, 64, 0.15),
        (gen.gamma(2.0, 1.0, size=50), 400, 1, 0.05),
    ]
    for i, (a, D, m, theta) in enumerate(cases, 1):
        try:
            C = float(attempt(func, a.copy(), D, m, theta))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: the threshold must be one number")
        if not math.isfinite(C) or C < 0:
            return not_yet(f"case {i}: the threshold must be a finite number >= 0; got {C!r}")
        best = clipping_error_bound(a, optimal_threshold(a, D=D, m=m, theta=theta), D=D, m=m, theta=theta)
        got = clipping_error_bound(a, C, D=D, m=m, theta=theta)
        if got > best * (1 + 1e-9) + 1e-12:
            return not_yet(
                f"case {i} of {len(cases)}: your threshold gives a larger bound than the best one. "
                "The bound is piecewise smooth in C: look at the sign of its derivative on each side "
                "of your C, and at the norms where its pieces change."
            )
    return passed(f"your threshold minimises the bound in all {len(cases)} cases")
