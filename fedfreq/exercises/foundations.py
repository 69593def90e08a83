"""Checkers for the exercises of the chapter on foundations (randomized response, composition)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int, check_real, check_scale
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed

__all__ = ["check_rr_debias", "check_gaussian_budget", "check_rdp_conversion"]


@checker
def check_rr_debias(
    estimator: Callable[[np.ndarray, float], float],
    *,
    n: int = 2000,
    trials: int = 400,
    rng: np.random.Generator | int | None = 20260101,
) -> CheckResult:
    """Check a student's unbiased count estimator for binary randomized response.

    The student writes ``estimator(reports, epsilon) -> float``: given the 0/1 reports of
    ``n`` users who each kept their true bit with probability e^ε/(1+e^ε) and flipped it
    otherwise, return an unbiased estimate of the number of users whose true bit is 1.

    The attempt receives a 1-D integer array of 0s and 1s and a float, and returns one
    finite number. First an exact test (deterministic: no false fails): for ``n`` = 24
    and 25 users and ε in {0.5, 2}, the checker calls the estimator on reports with
    every possible number of ones, computes its exact expectation under every true count
    from 0 to ``n``, and requires it to equal the true count to 1e-6 (an estimate must
    depend only on how many reports are 1, not on their order). This catches small
    biases (such as an estimator built for ``n - 1`` users) that no simulation of a few
    hundred rounds can see. Then the checker simulates ``trials`` independent rounds for
    several (ε, true count) pairs and tests unbiasedness with a z-test at 4.5 standard errors, where the standard
    error is computed from the sample standard deviation of the student's estimates
    (trials ≥ 400, so the CLT applies): four tests, so a correct estimator fails with
    probability at most 4 · 2(1 − Φ(4.5)) ≈ 2.7e-5 on a random seed (the default seed is
    fixed, so the verdict is reproducible). It also rejects outputs that are not finite
    scalars, and estimators whose spread is far larger than necessary (more than twice
    the standard deviation of the best unbiased estimator), which would indicate
    double-counting the noise.

    Examples
    --------
    >>> def wrong(reports, epsilon):
    ...     return float(np.sum(reports))           # ignores the flipping
    >>> check_rr_debias(wrong, trials=400).passed
    False
    """
    n = check_int("n", n, low=10, high=MAX_TRIALS, reason="the checker runs your code that many times")
    trials = check_int("trials", trials, low=100, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    for users in (24, 25):
        for epsilon in (0.5, 2.0):
            why = _rr_exact_bias(estimator, users, epsilon, gen)
            if why is not None:
                return not_yet(why)
    for epsilon in (0.5, 2.0):
        for frac in (0.1, 0.6):
            ones = int(round(frac * n))
            bits = np.zeros(n, dtype=np.int64)
            bits[:ones] = 1
            keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
            flips = gen.random((trials, n)) >= keep
            reports = np.where(flips, 1 - bits, bits)
            estimates = np.empty(trials)
            for t in range(trials):
                try:
                    value = estimator(reports[t].copy(), epsilon)
                except Exception as exc:  # the student's code failed
                    return CheckResult(False, f"your estimator raised {type(exc).__name__}: {exc}")
                if np.ndim(value) != 0 or not np.isfinite(value):
                    return CheckResult(False, "the estimator must return one finite number per call")
                estimates[t] = float(value)
            se = estimates.std(ddof=1) / math.sqrt(trials)
            bias = estimates.mean() - ones
            if se == 0.0:
                if bias != 0.0:
                    return CheckResult(False, f"at epsilon={epsilon} your estimate never varies and is biased")
                continue
            if abs(bias) > 4.5 * se:
                side = "over" if bias > 0 else "under"
                return CheckResult(
                    False,
                    f"at epsilon={epsilon} with {ones} of {n} ones your estimates {side}-estimate the "
                    f"count on average by {abs(bias) / se:.1f} standard errors: the estimator is biased. "
                    "Write the expected number of reported ones as a function of the true count and invert it.",
                )
            best_sd = math.sqrt(n * math.exp(epsilon)) / (math.exp(epsilon) - 1.0)
            if estimates.std(ddof=1) > 2.0 * best_sd:
                return CheckResult(
                    False,
                    f"at epsilon={epsilon} your estimator is unbiased but its spread is more than twice "
                    "that of the best unbiased estimator: check the scaling.",
                )
    return CheckResult(True, "no detectable bias over 4 settings (z-test at 4.5 standard errors each)")


def _rr_exact_bias(estimator: Callable[[np.ndarray, float], float], n: int, epsilon: float, gen) -> str | None:
    """Why the estimator is not exactly unbiased for ``n`` users at ``epsilon`` (None if it is).

    Evaluates the estimator on reports holding every number of ones ``s`` (in two random
    orders), then its exact expectation for every true count from the law of the number
    of reported ones (the sum of two independent binomials).
    """
    from scipy import stats

    values = np.empty(n + 1)
    for s in range(n + 1):
        outs = []
        for _ in range(2):
            reports = np.zeros(n, dtype=np.int64)
            reports[gen.permutation(n)[:s]] = 1
            value = estimator(reports, epsilon)
            if np.ndim(value) != 0 or not np.isfinite(value):
                return "the estimator must return one finite number per call"
            outs.append(float(value))
        again = estimator(reports, epsilon)
        if np.ndim(again) != 0 or not np.isfinite(again) or float(again) != outs[1]:
            return None  # a randomized estimator: only the simulation below can judge it
        if abs(outs[0] - outs[1]) > 1e-9 * (1.0 + abs(outs[0])):
            return (
                "your estimate changes when the same reports arrive in another order: it should depend "
                "only on how many reports are 1"
            )
        values[s] = outs[0]
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    for ones in range(n + 1):
        law = np.convolve(
            stats.binom.pmf(np.arange(ones + 1), ones, keep),
            stats.binom.pmf(np.arange(n - ones + 1), n - ones, 1.0 - keep),
        )
        if abs(float(law @ values) - ones) > 1e-6 * (1.0 + n):
            return (
                f"with {n} users at epsilon={epsilon} the exact expectation of your estimate (over the "
                "random flips) differs from the true count for some true counts: the estimator is biased. "
                "Write the expected number of reported ones as a function of the true count and the number "
                "of users, and invert it."
            )
    return None


@checker
def check_gaussian_budget(value: float, *, sigma: float, k: int, delta: float) -> CheckResult:
    """Check a computed ε for ``k``-fold composition of the Gaussian mechanism.

    The exercise: ``k`` Gaussian mechanisms with sensitivity 1 and noise ``sigma`` are
    composed; use Rényi DP (λ/(2σ²) per mechanism, added over the ``k`` mechanisms)
    and the RDP→(ε, δ) conversion over :data:`fedfreq.accounting.DEFAULT_ORDERS` to give ε.
    The checker compares with a relative tolerance of 1e-6 (an exact check: no false
    fails). A wrong value gets the same message whether it is too small or too large,
    so the answer cannot be found by bisection.

    Examples
    --------
    >>> check_gaussian_budget(1.0, sigma=3.0, k=7, delta=1e-5).passed
    False
    """
    from ..accounting import DEFAULT_ORDERS, rdp_gaussian, rdp_to_dp

    sigma = check_scale("sigma", sigma)
    k = check_int("k", k, low=1)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    value = check_real("value", value, low=0.0)
    target, _ = rdp_to_dp(DEFAULT_ORDERS, k * rdp_gaussian(DEFAULT_ORDERS, sigma=sigma), delta)
    if math.isclose(value, target, rel_tol=1e-6):
        return CheckResult(True, "matches the RDP accountant to 1e-6 relative")
    return CheckResult(
        False,
        "this is not the epsilon of the RDP accountant. Check each step: the RDP of one "
        "mechanism at every order, the sum over all k mechanisms (composition adds RDP, not "
        "epsilons), the conversion formula term by term, and the minimum over the whole grid "
        "of orders.",
    )


@checker
def check_rdp_conversion(convert: Callable[[np.ndarray, np.ndarray, float], float]) -> CheckResult:
    r"""Self-check for the exercise "implement the RDP to (ε, δ) conversion".

    ``convert(orders, rdp, delta)`` receives a 1-D grid of Rényi orders (all > 1), the
    RDP values ε(λ) of a mechanism on that grid and a target δ ∈ (0, 1), and must
    return the ε of the conversion of Lemma 3 of the OcPBM paper, as corrected in the
    chapter on foundations (minimised over the orders given). The checker runs six
    curves — Gaussian, Laplace, composed randomized response and cPBM, on fine and on
    coarse grids of orders — and compares each answer with
    :func:`fedfreq.accounting.rdp_to_dp` to 1e-9 relative (an exact check: a correct
    conversion never fails). A wrong value gets the same message whether it is too
    small or too large.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def convert(orders, rdp, delta):
    ...     return 0.0
    >>> check_rdp_conversion(convert).passed
    False
    """
    from ..accounting import (
        DEFAULT_ORDERS,
        compose_rdp,
        cpbm_rdp,
        rdp_gaussian,
        rdp_laplace,
        rdp_randomized_response,
        rdp_to_dp,
    )

    coarse = np.array([1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0])
    rr = rdp_randomized_response(DEFAULT_ORDERS, epsilon=0.5)
    cases = [
        ("a Gaussian mechanism (sigma = 2)", DEFAULT_ORDERS, rdp_gaussian(DEFAULT_ORDERS, sigma=2.0), 1e-6),
        ("a Gaussian mechanism (sigma = 0.8), coarse grid", coarse, rdp_gaussian(coarse, sigma=0.8), 1e-3),
        ("a Laplace mechanism (scale 1)", DEFAULT_ORDERS, rdp_laplace(DEFAULT_ORDERS, scale=1.0), 1e-5),
        ("20-fold randomized response", DEFAULT_ORDERS, compose_rdp(*([rr] * 20)), 1e-5),
        (
            "a cPBM (n = 1e4, m = 30, D = 100)",
            DEFAULT_ORDERS,
            cpbm_rdp(DEFAULT_ORDERS, n=10_000, theta=0.2, m=30, dim=100),
            1e-4,
        ),
        ("a cPBM on the coarse grid", coarse, cpbm_rdp(coarse, n=1000, theta=0.25, m=8, dim=10), 1e-8),
    ]
    for i, (what, orders, curve, delta) in enumerate(cases, 1):
        try:
            value = attempt(convert, orders.copy(), np.array(curve, dtype=float), delta)
            value = float(np.asarray(value, dtype=float))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: the conversion must return one number (epsilon)")
        if not math.isfinite(value):
            return not_yet(f"case {i}: the conversion must return a finite number; got {value!r}")
        target, _ = rdp_to_dp(orders, curve, delta)
        if not math.isclose(value, target, rel_tol=1e-9, abs_tol=1e-12):
            return not_yet(
                f"case {i} of {len(cases)} ({what}, delta = {delta:g}): this is not the epsilon of the "
                "conversion. Check each term for one order (the logarithm's argument, the term with "
                "log(1 - 1/lambda), the division by lambda - 1), then the minimum over every order given."
            )
    return passed(f"your conversion agrees with the accountant on all {len(cases)} curves (to 1e-9 relative)")
