"""Self-check functions for the programming exercises.

Each checker runs a statistical or exact test of a student's attempt and returns a
:class:`CheckResult` whose message says what looks wrong (bias, variance, shape,
direction of an error) without printing the expected answer. Checkers are
deterministic: they draw from a fixed seed unless ``rng`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._rng import as_generator
from ._validation import check_int, check_real


@dataclass(frozen=True)
class CheckResult:
    """Outcome of a self-check: ``passed`` and a human-readable ``message``."""

    passed: bool
    message: str

    def __bool__(self) -> bool:  # lets ``assert check_...(...)`` work
        return self.passed

    def __str__(self) -> str:
        return ("PASS: " if self.passed else "NOT YET: ") + self.message


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

    The checker simulates ``trials`` independent rounds for several (ε, true count)
    pairs and tests unbiasedness with a z-test at 4.5 standard errors, where the standard
    error is computed from the sample standard deviation of the student's estimates
    (trials ≥ 400, so the CLT applies). It also rejects outputs that are not finite
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
    n = check_int("n", n, low=10)
    trials = check_int("trials", trials, low=100)
    gen = as_generator(rng)
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


def check_gaussian_budget(value: float, *, sigma: float, k: int, delta: float) -> CheckResult:
    """Check a computed ε for ``k``-fold composition of the Gaussian mechanism.

    The exercise: ``k`` Gaussian mechanisms with sensitivity 1 and noise ``sigma`` are
    composed; use Rényi DP (λ/(2σ²) per mechanism, added over the ``k`` mechanisms)
    and the RDP→(ε, δ) conversion over :data:`fedfreq.accounting.DEFAULT_ORDERS` to give ε.
    The checker compares with a relative tolerance of 1e-6 and only says whether
    ``value`` is too small (unsafe) or too large (wasteful).
    """
    from .accounting import DEFAULT_ORDERS, rdp_gaussian, rdp_to_dp

    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    k = check_int("k", k, low=1)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    value = check_real("value", value, low=0.0)
    target, _ = rdp_to_dp(DEFAULT_ORDERS, k * rdp_gaussian(DEFAULT_ORDERS, sigma=sigma), delta)
    if math.isclose(value, target, rel_tol=1e-6):
        return CheckResult(True, "matches the RDP accountant to 1e-6 relative")
    if value < target:
        return CheckResult(
            False,
            "too small: this epsilon is not justified by the accountant. Did you account for all "
            "k mechanisms, and check the sign of the log(1/delta) term?",
        )
    return CheckResult(
        False,
        "too large: valid but loose. Did you convert each mechanism separately and add the "
        "epsilons, use a single order instead of minimising over the grid, or leave out the "
        "log(1 - 1/lambda) term of the conversion?",
    )
