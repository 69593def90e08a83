"""Checkers for the exercises on sample-and-threshold: the omission probability and the
exact δ."""

from __future__ import annotations

import math
from collections.abc import Callable

from .._validation import check_int, check_real
from ..sample_threshold import delta_exact, delta_exact_profile, omission_probability
from ._result import CheckResult, StudentError, attempt, checker, not_yet, passed

__all__ = ["check_omission_estimate", "check_exact_delta"]


@checker
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
    Pass the fraction your own simulation measured (here a placeholder, not an answer):

    >>> check_omission_estimate(1.0, W=40, sampling_rate=0.5, tau=5, trials=10_000).passed
    False
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


@checker
def check_exact_delta(delta: Callable[[float, float, int], float]) -> CheckResult:
    r"""Self-check for the exercise on computing the exact δ of sample-and-threshold.

    The student writes ``delta(sampling_rate, epsilon, tau) -> float``: the smallest δ for
    which sample-and-threshold is :math:`(\varepsilon, \delta)`-DP under add/remove-one,
    the supremum over the number of copies :math:`k \ge 1` of the hockey-stick
    divergences between the published value of a bucket with :math:`k` copies and with
    :math:`k - 1` copies, in both directions. It is compared with
    :func:`fedfreq.sample_threshold.delta_exact` on eight settings (sampling rates from
    0.05 to 0.7, both inside and outside Theorem 1's condition
    :math:`p_s \le 1 - e^{-\varepsilon}`, thresholds 1 to 10) to a relative 1e-6.
    Deterministic: a correct function never fails. A wrong value gets the same message
    whether it is too small or too large; typical slips (the boundary count, the
    suppressed output, the worst count) are named.

    Examples
    --------
    >>> check_exact_delta(lambda p, eps, tau: 0.0).passed
    False
    """
    cases = [
        (0.2, 1.0, 1),
        (0.1, 1.0, 5),
        (0.05, 0.5, 3),
        (0.2, 2.0, 10),
        (0.5, 0.1, 4),
        (0.7, 0.3, 8),
        (0.3, 0.05, 6),
        (0.105, 1.0, 8),
    ]
    got: list[float] = []
    for i, (p, eps, tau) in enumerate(cases, 1):
        try:
            got.append(check_real("delta", attempt(delta, p, eps, tau), low=0.0, high=1.0))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError) as exc:
            return not_yet(f"setting {i}: a delta is one number in [0, 1] ({exc})")

    def matches(reference: Callable[[float, float, int], float], only: Callable[[int], bool] = lambda t: True) -> bool:
        return all(
            math.isclose(g, reference(p, eps, tau), rel_tol=1e-6, abs_tol=1e-300)
            for g, (p, eps, tau) in zip(got, cases, strict=True)
            if only(tau)
        )

    if matches(delta_exact):
        return passed(f"your delta is the exact one in all {len(cases)} settings")
    i = next(
        j
        for j, (g, (p, eps, tau)) in enumerate(zip(got, cases, strict=True))
        if not math.isclose(g, delta_exact(p, eps, tau), rel_tol=1e-6, abs_tol=1e-300)
    )
    p, eps, tau = cases[i]
    where = (
        f"setting {i + 1} of {len(cases)} (sampling_rate={p}, epsilon={eps}, tau={tau}): your delta differs "
        "from the exact one by more than a relative 1e-6"
    )
    # typical slips, named only when the whole function behaves that way (so that no single
    # number can be probed for a hint)
    if matches(lambda p, e, t: delta_exact(p, e, t + 1)) or matches(
        lambda p, e, t: delta_exact(p, e, t - 1), only=lambda t: t > 1
    ):
        return not_yet(f"{where}. Check which counts are published: the case of a count equal to tau.")
    if matches(lambda p, e, t: delta_exact(p, e, 1)):
        return not_yet(
            f"{where}. Check how suppressed counts are treated: the analyst sees one and the same output "
            "for every count below tau."
        )

    def at_tau(p: float, e: float, t: int) -> float:
        first = delta_exact_profile(p, e, t, [t])
        return max(float(first["add"][0]), float(first["remove"][0]))

    if matches(at_tau):
        return not_yet(f"{where}. The worst number of copies k is not always the smallest one that can be published.")
    return not_yet(f"{where}. Check the hockey-stick divergence and the supremum over the number of copies k.")
