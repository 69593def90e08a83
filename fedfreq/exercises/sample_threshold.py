"""Checker for the exercise on simulating the omission probability of sample-and-threshold."""

from __future__ import annotations

import math

from .._validation import check_int, check_real
from ..sample_threshold import omission_probability
from ._result import CheckResult, not_yet, passed

__all__ = ["check_omission_estimate"]


def check_omission_estimate(estimate: float, *, W: int, sampling_rate: float, tau: int, trials: int) -> CheckResult:
    r"""Self-check for a Monte Carlo estimate of the probability that an item is suppressed.

    ``estimate`` is the fraction of ``trials`` simulated runs in which an item with ``W``
    copies, each sampled with probability ``sampling_rate``, is published as 0 by the
    threshold ``tau``. It is compared with the exact probability
    (:func:`fedfreq.sample_threshold.omission_probability`), allowing 4 binomial standard
    errors plus one trial's worth of slack: an honest simulation fails with probability
    below 2(1 − Φ(4)) ≈ 6.3e-5 once ``trials`` is large enough for the CLT. The message
    is the same whether the estimate is too high or too low, so the exact value cannot
    be found by bisection.

    Examples
    --------
    >>> check_omission_estimate(0.5, W=10, sampling_rate=0.5, tau=5, trials=10).passed
    True
    """
    est = check_real("estimate", estimate, low=0.0, high=1.0)
    T = check_int("trials", trials, low=1)
    truth = omission_probability(check_int("W", W, low=1), sampling_rate=sampling_rate, tau=tau)
    se = math.sqrt(max(truth * (1 - truth), 1e-300) / T)
    if abs(est - truth) <= 4 * se + 1.0 / T:
        return passed("your estimate agrees with the exact probability within 4 standard errors")
    return not_yet(
        f"your estimate is more than 4 standard errors from the exact probability for {T} trials. "
        "Check that a count equal to tau is published (only counts below tau are suppressed) and "
        "that each copy is sampled independently with probability sampling_rate."
    )
