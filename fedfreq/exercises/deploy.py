"""Checkers for the exercises on deployment (discrete noise) and on privacy audits."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import stats

from .._rng import as_generator
from .._validation import check_int
from ..audit import epsilon_lower_bound, hockey_stick
from ..deploy import discrete_laplace_logpmf
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed

__all__ = [
    "check_discrete_laplace_sampler",
    "check_discrete_laplace_delta",
    "check_hockey_stick",
    "check_epsilon_lower_bound",
]

_REASON = "the checker runs your code that many times"


def _scalar(value) -> float:
    """The student's answer as a float; TypeError/ValueError if it is not one number."""
    if np.ndim(value) != 0:
        raise ValueError("not a scalar")
    return float(value)


#: level of the chi-squared goodness-of-fit test of the sampler checker (per value of t)
_CHI2_LEVEL = 1e-5


def _chi2_pvalue(draws: np.ndarray, support: np.ndarray, pmf: np.ndarray, k: int) -> float:
    """p-value of Pearson's chi-squared test of ``draws`` against ``pmf`` on ``support``:
    each integer with expected count >= 5 is a cell, the two tails one cell each."""
    expected = pmf * k
    inner = np.flatnonzero(expected >= 5.0)
    lo, hi = support[inner[0]], support[inner[-1]]
    cells = support[inner]
    exp_cells = expected[inner]
    counts = np.bincount(np.clip(draws, lo, hi).astype(np.int64) - lo, minlength=int(hi - lo + 1)).astype(float)[
        cells - lo
    ]
    # the tails (every draw outside [lo, hi]; the mass beyond the support window is < e^-80)
    low_tail, high_tail = float(np.sum(draws < lo)), float(np.sum(draws > hi))
    counts[0] -= low_tail
    counts[-1] -= high_tail
    exp_low, exp_high = float(expected[: inner[0]].sum()), float(expected[inner[-1] + 1 :].sum())
    obs = np.concatenate([counts, [low_tail, high_tail]])
    exp = np.concatenate([exp_cells, [exp_low, exp_high]])
    keep = exp > 0
    if np.any(obs[~keep] > 0):
        return 0.0
    obs, exp = obs[keep], exp[keep]
    stat = float(np.sum((obs - exp) ** 2 / exp))
    return float(stats.chi2.sf(stat, obs.size - 1))


@checker
def check_discrete_laplace_sampler(
    func: Callable[[float, int, np.random.Generator], np.ndarray],
    *,
    trials: int = 20_000,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "a discrete Laplace sampler": ``func(t, size, rng)``.

    The answer must return ``size`` integers drawn from the discrete Laplace law of scale
    t, :math:`\Pr[X = k] \propto e^{-|k|/t}` (:func:`fedfreq.deploy.discrete_laplace_logpmf`),
    using the numpy Generator ``rng``. For t = 0.7 and t = 3 the checker draws ``trials``
    values and runs four z-tests at 4.5 standard errors, with standard errors from the
    exact law (CLT): the mean, the variance (its standard error from the exact fourth
    moment), the probability of 0, and the balance between positive and negative
    draws. Moments can be matched by a wrong law, so the checker then tests the whole
    law: a chi-squared goodness-of-fit test over the integers (every integer with an
    expected count of at least 5 is a cell of its own, the two tails are pooled into one
    cell each) at level 1e-5 per value of t. A correct sampler fails with probability at
    most 8 · 2(1 − Φ(4.5)) + 2 · 1e-5 ≈ 7.4e-5 on a random seed. The messages say which
    property fails (centre, spread, mass at 0, symmetry, shape), never the expected value
    nor on which side of it the attempt lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def sampler(t, size, rng):
    ...     return np.zeros(size, dtype=int)
    >>> check_discrete_laplace_sampler(sampler).passed
    False
    """
    k = check_int("trials", trials, low=1000, high=10**7, reason="the checker draws that many values")
    gen = as_generator(rng)
    z = 4.5
    for t in (0.7, 3.0):
        support = np.arange(-(math.ceil(80 * t) + 40), math.ceil(80 * t) + 41)
        pmf = np.exp(discrete_laplace_logpmf(support, t))
        var = float(np.sum(support.astype(float) ** 2 * pmf))
        m4 = float(np.sum(support.astype(float) ** 4 * pmf))
        p0 = float(pmf[support == 0][0])
        try:
            draws = np.asarray(attempt(func, t, k, gen))
        except StudentError as err:
            return err.result
        if draws.shape != (k,) or not np.issubdtype(draws.dtype, np.number) or np.iscomplexobj(draws):
            return not_yet("return a 1-D numeric array of `size` draws")
        x = draws.astype(float)
        if not np.all(np.isfinite(x)) or not np.all(x == np.round(x)):
            return not_yet("the discrete Laplace law lives on the integers: every draw must be an integer")
        if abs(x.mean()) > z * math.sqrt(var / k):
            return not_yet(f"at t = {t} your draws are not centred at 0")
        if abs(np.mean(x**2) - var) > z * math.sqrt((m4 - var * var) / k):
            return not_yet(f"at t = {t} the spread of your draws does not match the discrete Laplace law of scale t")
        if abs(np.mean(x == 0) - p0) > z * math.sqrt(p0 * (1 - p0) / k):
            return not_yet(f"at t = {t} the probability of drawing 0 is off: the shape of your law near 0 is wrong")
        if abs(np.mean(np.sign(x))) > z * math.sqrt((1 - p0) / k):
            return not_yet(f"at t = {t} your law is not symmetric about 0")
        if _chi2_pvalue(x, support, pmf, k) < _CHI2_LEVEL:
            return not_yet(
                f"at t = {t} the frequencies of your draws do not follow the discrete Laplace law of scale t "
                "(chi-squared goodness of fit over the integers): the first moments can agree while the shape "
                "of the law is wrong. Compare your law's probabilities with e^(-|k|/t) up to normalisation."
            )
    return passed(f"centre, spread, mass at 0 and symmetry all match at t = 0.7 and t = 3 ({k} draws each)")


def _dlap_reference(t: float, shift: int, eps: float) -> float:
    lo, hi = -(math.ceil(100 * t) + 60), math.ceil(100 * t) + 60 + shift
    ks = np.arange(lo, hi + 1)
    return hockey_stick(discrete_laplace_logpmf(ks, t), discrete_laplace_logpmf(ks - shift, t), eps)


@checker
def check_discrete_laplace_delta(
    func: Callable[[float, int, float], float],
    *,
    trials: int = 100,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "δ(ε) of the discrete Laplace mechanism in closed form":
    ``func(t, sensitivity, epsilon)``.

    The answer is the exact hockey-stick divergence
    :math:`\delta(\varepsilon) = \sum_k (p_k - e^\varepsilon q_k)_+` between the discrete
    Laplace laws of scale t centred at 0 and at the integer ``sensitivity`` Δ. The
    checker compares with :func:`fedfreq.audit.hockey_stick` summed over a window holding
    all but :math:`e^{-100}` of the mass, on three fixed cases and ``trials`` random
    ones (t log-uniform on [0.2, 20], Δ in 1..5, ε uniform on [0, 1.2Δ/t], so some lie
    beyond Δ/t where δ = 0), to 1e-9 relative. Deterministic: no false fails. The
    message gives the failing case, never the expected value nor the sign of the error.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def delta(t, sensitivity, epsilon):
    ...     return 0.0
    >>> check_discrete_laplace_delta(delta).passed
    False
    """
    n = check_int("trials", trials, low=1, high=10_000, reason=_REASON)
    gen = as_generator(rng)
    cases = [(1.0, 2, 1.0), (1.0, 1, 0.0), (0.5, 1, 2.0)]
    for _ in range(n):
        t = float(math.exp(gen.uniform(math.log(0.2), math.log(20.0))))
        d = int(gen.integers(1, 6))
        cases.append((t, d, float(gen.uniform(0.0, 1.2 * d / t))))
    for t, d, eps in cases:
        try:
            got = _scalar(attempt(func, t, d, eps))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet("return one number, delta(epsilon), per call")
        ref = _dlap_reference(t, d, eps)
        if not math.isfinite(got) or abs(got - ref) > 1e-9 * ref + 1e-14:
            return not_yet(
                f"for t = {t:.4g}, sensitivity {d}, epsilon = {eps:.4g} your delta is not the exact hockey-stick "
                "divergence (to 1e-9 relative). Split the integers where the privacy loss log(p_k/q_k) changes "
                "form (k <= 0, 0 < k < sensitivity, k >= sensitivity) and sum each part exactly."
            )
    return passed(f"exact delta(epsilon) on {len(cases)} settings of (t, sensitivity, epsilon)")


def _random_law(gen: np.random.Generator, size: int, holes: int) -> np.ndarray:
    p = gen.dirichlet(np.full(size, float(gen.choice([0.3, 1.0, 5.0]))))
    if holes:
        p[gen.choice(size, size=holes, replace=False)] = 0.0
        p /= p.sum()
    with np.errstate(divide="ignore"):
        return np.log(p)


@checker
def check_hockey_stick(
    func: Callable[[np.ndarray, np.ndarray, float], float],
    *,
    trials: int = 200,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "the privacy profile of two discrete laws":
    ``func(log_p, log_q, epsilon)``.

    The answer is :math:`\delta(\varepsilon) = \max\big(\sum_i (p_i - e^\varepsilon q_i)_+,
    \sum_i (q_i - e^\varepsilon p_i)_+\big)` for two laws given by their log-probabilities
    (``-inf`` for an outcome a law cannot produce). The checker compares with
    :func:`fedfreq.audit.hockey_stick` on ``trials`` random pairs (2 to 30 outcomes,
    Dirichlet laws, some outcomes impossible under one law, ε uniform on [0, 3]) and on
    two fixed pairs (identical laws; randomized response), to 1e-9 relative.
    Deterministic: no false fails. The message gives the failing case and what to look
    at, never the expected value nor the sign of the error.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def profile(log_p, log_q, epsilon):
    ...     return 0.0
    >>> check_hockey_stick(profile).passed
    False
    """
    n = check_int("trials", trials, low=1, high=MAX_TRIALS, reason=_REASON)
    gen = as_generator(rng)
    rr = np.log([0.75, 0.25])
    cases = [(rr, rr, 0.0), (rr, rr[::-1].copy(), 0.5)]
    for _ in range(n):
        size = int(gen.integers(2, 31))
        lp = _random_law(gen, size, int(gen.integers(0, size // 2 + 1)))
        lq = _random_law(gen, size, int(gen.integers(0, size // 2 + 1)))
        cases.append((lp, lq, float(gen.uniform(0.0, 3.0))))
    for lp, lq, eps in cases:
        try:
            got = _scalar(attempt(func, lp.copy(), lq.copy(), eps))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet("return one number, delta(epsilon), per call")
        ref = hockey_stick(lp, lq, eps)
        if not math.isfinite(got):
            return not_yet(
                f"on a pair of laws with {lp.size} outcomes your delta is not a finite number; an outcome one law "
                "cannot produce has log-probability -inf there"
            )
        if abs(got - ref) > 1e-9 * ref + 1e-12:
            holes = bool(np.any(np.isinf(lp)) or np.any(np.isinf(lq)))
            return not_yet(
                f"on a pair of laws with {lp.size} outcomes"
                + (" (some impossible under one of them)" if holes else "")
                + f", at epsilon = {eps:.3g}, your delta is not the privacy profile. Check the definition term by "
                "term: which terms are kept, the factor e^epsilon, and both directions of the pair."
            )
    return passed(f"exact privacy profile on {len(cases)} pairs of laws")


@checker
def check_epsilon_lower_bound(
    func: Callable[[int, int, int, int, float, float], float],
    *,
    trials: int = 200,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "a Monte Carlo lower bound on ε":
    ``func(k_p, n_p, k_q, n_q, delta, confidence)``.

    ``k_p`` of ``n_p`` runs on D and ``k_q`` of ``n_q`` runs on D' produced the event;
    the attempt returns one float >= 0, the lower bound on ε of the chapter's
    construction, built from Clopper–Pearson intervals that hold jointly with
    probability ``confidence``. The checker compares on ``trials`` random inputs
    (runs from 10 to 5000 per side, δ in {0, 1e-3, 0.05}, confidence in {0.95, 0.99,
    1 − 1e-6}) and three fixed ones, to 1e-6 relative (beta quantiles are computed to
    about 1e-12). Deterministic: no false fails. The message gives the failing input and
    what to look at, never the expected value nor whether the attempt is above or below.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def bound(k_p, n_p, k_q, n_q, delta, confidence):
    ...     return 0.0
    >>> check_epsilon_lower_bound(bound).passed
    False
    """
    n = check_int("trials", trials, low=1, high=MAX_TRIALS, reason=_REASON)
    gen = as_generator(rng)
    cases = [(900, 1000, 100, 1000, 0.0, 0.99), (500, 1000, 500, 1000, 0.0, 0.99), (40, 50, 0, 50, 1e-3, 1 - 1e-6)]
    for _ in range(n):
        n_p, n_q = (int(v) for v in np.exp(gen.uniform(math.log(10), math.log(5000), size=2)))
        p = float(gen.uniform(0.05, 1.0))
        q = p * math.exp(-float(gen.uniform(0.0, 4.0)))
        cases.append(
            (
                int(gen.binomial(n_p, p)),
                n_p,
                int(gen.binomial(n_q, q)),
                n_q,
                float(gen.choice([0.0, 1e-3, 0.05])),
                float(gen.choice([0.95, 0.99, 1 - 1e-6])),
            )
        )
    for k_p, n_p, k_q, n_q, delta, conf in cases:
        try:
            got = _scalar(attempt(func, k_p, n_p, k_q, n_q, delta, conf))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet("return one number, the lower bound on epsilon, per call")
        ref = epsilon_lower_bound(k_p, n_p, k_q, n_q, delta=delta, confidence=conf)
        if not math.isfinite(got) or got < 0:
            return not_yet("a lower bound on epsilon is a finite number >= 0: report 0 when the samples show nothing")
        if abs(got - ref) > 1e-6 * ref + 1e-9:
            return not_yet(
                f"for {k_p}/{n_p} events on D, {k_q}/{n_q} on D', delta = {delta:g} and confidence {conf:g} your "
                "bound differs from the Clopper-Pearson construction. Check the level of each interval (the two "
                "share the error budget), which end of each interval you use, and where delta enters."
            )
    return passed(f"matches the Clopper-Pearson lower bound on {len(cases)} inputs")
