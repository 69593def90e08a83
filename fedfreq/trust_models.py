"""The four trust models of differential privacy on the simplest task: a private count.

Each of ``n`` users holds a bit :math:`v_i \\in \\{0, 1\\}` and the analyst wants the
count :math:`S = \\sum_i v_i` under :math:`(\\varepsilon, \\delta)`-DP. This module
calibrates one unbiased estimator of :math:`S` per trust model, gives the exact
standard deviation of each estimator, and simulates each mechanism so that a Monte
Carlo experiment can check the formulas.

Neighbouring relation of the counting task
------------------------------------------
Two datasets are neighbours when they are bit vectors of the same length ``n`` that
differ in one user's bit (*replace-one*; ``n`` is public). One user can then move the
count by at most 1, so the count has sensitivity 1. The count also has sensitivity 1
under add/remove-one, so the two *central* calibrations hold under either relation;
the local, shuffle and distributed calibrations are stated for replace-one only (the
number of reports, and in the distributed model the amount of noise, reveal ``n``).

Models (:data:`MODELS`)
-----------------------
``"central-laplace"``
    A trusted curator releases :math:`S + \\mathrm{Lap}(1/\\varepsilon)`: pure
    :math:`\\varepsilon`-DP, standard deviation :math:`\\sqrt 2/\\varepsilon`.
``"central-gaussian"``
    A trusted curator releases :math:`S + N(0, \\sigma^2)` with the smallest
    :math:`\\sigma` allowed by the analytic Gaussian mechanism
    (:func:`fedfreq.accounting.gaussian_sigma`, sensitivity 1).
``"local-rr"``
    Every user reports her bit through binary randomized response at level
    :math:`\\varepsilon`; the analyst debiases the sum of reports.
``"shuffle-rr"``
    The same randomized response at a larger local level :math:`\\varepsilon_0`, the
    reports being shuffled before the analyst sees them; :math:`\\varepsilon_0` is
    chosen with the amplification bound of :func:`shuffle_epsilon`.
``"distributed-binomial"``
    Every client adds :math:`\\mathrm{Bin}(m, p)` noise to her bit, with an integer
    :math:`m \\ge 1` and :math:`p \\in (0, 1/2]`; secure aggregation reveals only the
    noisy sum :math:`S + \\mathrm{Bin}(nm, p)`, whose privacy is computed exactly
    (:func:`binomial_mechanism_delta`), and the server subtracts :math:`ntp`. When
    little noise is needed in total, the clients keep :math:`m = 1` and lower
    :math:`p`, so the error is not floored at :math:`\\sqrt n/2`
    (:func:`binomial_client_noise`).

Caveats
-------
The samplers are numpy's floating-point samplers: they illustrate the error of each
model but are not safe implementations of the mechanisms (floating-point Laplace and
Gaussian noise leak through the low-order bits). Secure aggregation is modelled by its
output, the exact sum; cryptography, dropouts and collusion are not modelled.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special

from ._numerics import binom_logpmf, log1mexp
from ._rng import as_generator
from ._validation import check_array, check_choice, check_int, check_real
from .accounting import gaussian_sigma

__all__ = [
    "MODELS",
    "binomial_client_noise",
    "binomial_mechanism_delta",
    "binomial_noise_probability",
    "binomial_noise_trials",
    "calibrate_count",
    "count_error_curve",
    "count_std",
    "rr_keep_probability",
    "shuffle_calibrated_epsilon0",
    "shuffle_epsilon",
    "shuffle_local_epsilon",
    "shuffle_max_local_epsilon",
    "simulate_count",
]

#: The five trust models compared on the counting task.
MODELS = ("central-laplace", "central-gaussian", "local-rr", "shuffle-rr", "distributed-binomial")

_NEEDS_DELTA = ("central-gaussian", "shuffle-rr", "distributed-binomial")


# --------------------------------------------------------------------------- helpers


def _check_epsilon(epsilon, name: str = "epsilon") -> float:
    return check_real(name, epsilon, low=0.0, low_open=True)


def _check_delta(delta, *, required: bool, model: str | None = None) -> float | None:
    if delta is None:
        if required:
            what = f" for model {model!r}" if model is not None else ""
            raise ValueError(f"delta must be given{what}: a real number in (0, 1); got None")
        return None
    return check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)


def _required_delta(delta, *, model: str | None = None) -> float:
    """:func:`_check_delta` for a delta that must be given (never returns None)."""
    d = _check_delta(delta, required=True, model=model)
    if d is None:  # pragma: no cover - _check_delta raises first
        raise ValueError("delta must be given: a real number in (0, 1)")
    return d


def rr_keep_probability(epsilon) -> float:
    """Probability that binary randomized response at level ``epsilon`` keeps the bit.

    .. math:: p = \\frac{e^{\\varepsilon}}{1 + e^{\\varepsilon}}, \\qquad q = 1 - p,

    so that :math:`p/q = e^{\\varepsilon}` and the mechanism is
    :math:`\\varepsilon`-locally differentially private.

    Examples
    --------
    >>> round(rr_keep_probability(math.log(3.0)), 12)
    0.75
    """
    eps = _check_epsilon(epsilon)
    return float(special.expit(eps))


def _rr_std(n: int, eps0: float) -> float:
    # n p q / (p - q)^2 = n e^eps / (e^eps - 1)^2; sqrt(e^eps)/(e^eps - 1) = e^(-eps/2)/(1 - e^(-eps))
    # (= 1 / (2 sinh(eps/2))), written so that no exponential can overflow.
    return math.sqrt(n) * math.exp(-eps0 / 2.0) / -math.expm1(-eps0)


@functools.lru_cache(maxsize=4096)
def _central_sigma(eps: float, delta: float) -> float:
    # gaussian_sigma runs a root finder; simulate_count recalibrates on every call.
    return gaussian_sigma(eps, delta)


# ------------------------------------------------------------------------- shuffle


def shuffle_max_local_epsilon(*, n, delta) -> float:
    """Largest local level allowed by the shuffling bound: :math:`\\log(n / (16\\log(2/\\delta)))`.

    Raises ``ValueError`` when this is not positive, i.e. when
    :math:`n \\le 16\\log(2/\\delta)` and the bound of :func:`shuffle_epsilon` applies to
    no :math:`\\varepsilon_0 > 0`.

    Examples
    --------
    >>> round(shuffle_max_local_epsilon(n=10_000, delta=1e-6), 4)
    3.763
    """
    n = check_int("n", n, low=1)
    d = _required_delta(delta)
    top = math.log(n / (16.0 * math.log(2.0 / d)))
    if top <= 0.0:
        raise ValueError(
            f"n must exceed 16*log(2/delta) = {16.0 * math.log(2.0 / d):.6g} for the shuffling "
            f"bound to apply to any epsilon0 > 0; got n={n}, delta={d!r}"
        )
    return top


def _shuffle_eps(eps0: float, n: int, delta: float) -> float:
    e0 = math.exp(eps0)
    inner = 8.0 * math.sqrt(e0 * math.log(4.0 / delta)) / math.sqrt(n) + 8.0 * e0 / n
    return math.log1p(math.tanh(eps0 / 2.0) * inner)  # (e^x - 1)/(e^x + 1) = tanh(x/2)


def shuffle_epsilon(epsilon0, *, n, delta) -> float:
    """Central ε after shuffling ``n`` reports of an :math:`\\varepsilon_0`-LDP randomizer.

    Feldman, McMillan & Talwar ("Hiding among the clones", FOCS 2021, Theorem 3.1):
    for :math:`0 < \\varepsilon_0 \\le \\log(n / (16\\log(2/\\delta)))` the shuffled
    reports are :math:`(\\varepsilon, \\delta)`-DP (replace-one neighbours) with

    .. math::
        \\varepsilon = \\log\\Big(1 + \\frac{e^{\\varepsilon_0} - 1}{e^{\\varepsilon_0} + 1}
        \\Big(\\frac{8\\sqrt{e^{\\varepsilon_0}\\log(4/\\delta)}}{\\sqrt n}
        + \\frac{8 e^{\\varepsilon_0}}{n}\\Big)\\Big).

    This is an *upper bound* from one published analysis. The true privacy of
    shuffled randomized response can be better (numerical analyses give smaller ε), so
    an error curve built on it shows what this analysis certifies, not a lower bound on
    the error achievable in the shuffle model.

    Raises
    ------
    ValueError
        If ``epsilon0`` lies outside :math:`(0, \\log(n / (16\\log(2/\\delta)))]`, the
        range in which the theorem holds.

    Examples
    --------
    >>> round(shuffle_epsilon(1.0, n=10_000, delta=1e-6), 4)
    0.214
    """
    eps0 = _check_epsilon(epsilon0, "epsilon0")
    n = check_int("n", n, low=1)
    d = _required_delta(delta)
    top = shuffle_max_local_epsilon(n=n, delta=d)
    if eps0 > top:
        raise ValueError(
            f"epsilon0 must lie in (0, {top:.6g}] = (0, log(n/(16 log(2/delta)))] for the "
            f"shuffling bound with n={n}, delta={d!r}; got {epsilon0!r}"
        )
    return _shuffle_eps(eps0, n, d)


#: Smallest local level searched by the inverse of the shuffling bound (about 5e-283; the
#: bound stays a normal double, above 1e-300, at every n <= 1e18).
_LOG_EPS0_MIN = -650.0

#: Relative margin between the target and the double evaluation of the shuffling bound.
_SHUFFLE_MARGIN = 1e-13


@functools.lru_cache(maxsize=4096)
def _shuffle_inverse(eps: float, n: int, delta: float) -> float:
    top = math.log(n / (16.0 * math.log(2.0 / delta)))
    if _shuffle_eps(top, n, delta) <= eps * (1.0 - _SHUFFLE_MARGIN):
        return top
    # brentq on log(eps0): relative accuracy ~1e-15 whatever the size of the root
    # (an absolute xtol would leave the root 1e-7 off in relative terms at eps ~ 1e-9)
    # the double evaluation of the bound is accurate to a few ulps: keep a margin of
    # 1e-13 (relative) so that the exact bound at the returned eps0 stays <= eps
    target = eps * (1.0 - _SHUFFLE_MARGIN)

    def gap(u: float) -> float:
        return math.log(_shuffle_eps(math.exp(u), n, delta)) - math.log(target)

    lo = math.log(top)
    step = 1.0
    while gap(lo) > 0:  # the bound behaves like eps0 * const near 0: at most ~11 steps to 1e-300
        if lo <= _LOG_EPS0_MIN:
            raise ValueError(
                f"epsilon={eps!r} needs a local level epsilon0 below exp({_LOG_EPS0_MIN:g}); epsilon must be "
                f"at least {_shuffle_eps(math.exp(_LOG_EPS0_MIN), n, delta):.3g} for n={n}, delta={delta!r}"
            )
        lo = max(lo - step, _LOG_EPS0_MIN)
        step *= 2.0
    u = optimize.brentq(gap, lo, math.log(top), xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    eps0 = math.exp(u)
    for i in range(200):  # stay on the private side of the root
        if _shuffle_eps(eps0, n, delta) <= target:
            return eps0
        eps0 = float(np.nextafter(eps0, -np.inf)) if i < 100 else eps0 * (1.0 - 1e-13)
    raise RuntimeError("shuffle_local_epsilon: could not confirm the target epsilon")  # pragma: no cover


def shuffle_local_epsilon(epsilon, *, n, delta) -> float:
    """Largest valid local level :math:`\\varepsilon_0` whose shuffled guarantee is ≤ ``epsilon``.

    Inverts :func:`shuffle_epsilon` by ``brentq``: the bound is continuous and strictly
    increasing in :math:`\\varepsilon_0` and tends to 0 with it, so the root exists
    whenever ``epsilon`` is below the bound at the top of the validity range. If even
    the largest valid :math:`\\varepsilon_0 = \\log(n/(16\\log(2/\\delta)))` gives a
    central level below ``epsilon``, that largest valid value is returned (the
    theorem says nothing beyond it), and the guarantee it certifies is then *stronger*
    than asked for. The returned value always satisfies
    ``shuffle_epsilon(eps0, n=n, delta=delta) <= epsilon``, with a relative margin of
    1e-13 for the rounding of the double evaluation (checked against 50-digit mpmath
    for ε from 1e-280 to 1e6); the root is found on log ε0, so it is accurate to a
    relative 1e-12 whatever its size.

    Raises
    ------
    ValueError
        If :math:`n \\le 16\\log(2/\\delta)` (no valid :math:`\\varepsilon_0`), or if
        ``epsilon`` needs :math:`\\varepsilon_0 < e^{-650}` (about 5e-283).

    Examples
    --------
    >>> e0 = shuffle_local_epsilon(0.5, n=10_000, delta=1e-6)
    >>> abs(shuffle_epsilon(e0, n=10_000, delta=1e-6) - 0.5) < 1e-9
    True
    """
    eps = _check_epsilon(epsilon)
    n = check_int("n", n, low=1)
    d = _required_delta(delta)
    shuffle_max_local_epsilon(n=n, delta=d)  # raises when the range is empty
    return _shuffle_inverse(eps, n, d)


def shuffle_calibrated_epsilon0(epsilon, *, n, delta) -> float:
    """Local level used by the ``"shuffle-rr"`` model for a central target ``(epsilon, delta)``.

    Two certificates are available for shuffled randomized response at level
    :math:`\\varepsilon_0`: the amplification bound (:func:`shuffle_local_epsilon`) and
    the trivial one — :math:`\\varepsilon_0`-LDP reports are :math:`\\varepsilon_0`-DP
    after any post-processing, shuffling included. The model uses the larger of the two
    admissible local levels:

    .. math::
        \\varepsilon_0 = \\max\\big(\\texttt{shuffle\\_local\\_epsilon}(\\varepsilon),
        \\varepsilon\\big),

    and falls back to :math:`\\varepsilon_0 = \\varepsilon` when
    :math:`n \\le 16\\log(2/\\delta)` (the amplification theorem does not apply). The
    trivial certificate wins only when ``epsilon`` exceeds
    :func:`shuffle_max_local_epsilon`; with this rule the shuffle model is never less
    accurate than local randomized response at the same ``epsilon``.

    Examples
    --------
    >>> shuffle_calibrated_epsilon0(4.0, n=10_000, delta=1e-6)
    4.0
    """
    eps = _check_epsilon(epsilon)
    n = check_int("n", n, low=1)
    d = _required_delta(delta)
    if n <= 16.0 * math.log(2.0 / d):
        return eps
    try:
        return max(_shuffle_inverse(eps, n, d), eps)
    except ValueError:  # epsilon below the searched range: the trivial certificate holds
        return eps


# ---------------------------------------------------------------- distributed binomial

_CHUNK = 1 << 20
#: Largest number of binomial trials (or clients) of the distributed-binomial model: the
#: exact δ sums a window of the binomial that grows like √N (under a second at 1e9).
MAX_BINOMIAL_USERS = 10**9


def _binom_direction_log_delta(N: int, p: float, eps: float, shift: int, k_lo: int, k_hi: int) -> float:
    """``log sum_{k in [k_lo, k_hi]} max(0, P(k) - e^eps P(k - shift))`` for P = Bin(N, p).

    Terms outside ``[0, N]`` of ``P(k - shift)`` are zero, so ``k = 0`` (``shift = 1``)
    and ``k = N`` (``shift = -1``) contribute their whole mass ``P(k)``.
    """
    log_odds = math.log(p) - math.log1p(-p)  # log(p/q); 0 for p = 1/2
    parts = []
    for start in range(k_lo, k_hi + 1, _CHUNK):
        k = np.arange(start, min(k_hi, start + _CHUNK - 1) + 1, dtype=np.int64)
        logp = binom_logpmf(k, N, p)
        # log of e^eps P(k - shift) / P(k) from the pmf ratio, exact up to rounding of a few logs:
        # P(k-1)/P(k) = k q / ((N-k+1) p) and P(k+1)/P(k) = (N-k) p / ((k+1) q).
        d = np.full(k.shape, -np.inf)  # -inf where P(k - shift) = 0: the whole P(k) counts
        if shift == 1:
            inside = k >= 1  # P(-1) = 0
            kk = k[inside].astype(float)
            d[inside] = eps + np.log(kk) - np.log(N - kk + 1.0) - log_odds
        else:
            inside = k <= N - 1  # P(N + 1) = 0
            kk = k[inside].astype(float)
            d[inside] = eps + np.log(N - kk) - np.log(kk + 1.0) + log_odds
        pos = d < 0.0
        if np.any(pos):
            terms = logp[pos] + log1mexp(d[pos])
            parts.append(float(special.logsumexp(terms)))
    if not parts:
        return -math.inf
    return float(special.logsumexp(np.array(parts)))


def _binomial_log_delta(N: int, eps: float, p: float = 0.5) -> float:
    if N == 0:
        return 0.0  # S itself is released: delta = 1
    q = 1.0 - p
    a = p * math.exp(-eps)  # e^-eps underflows to 0 for huge eps, never overflows
    b = q * math.exp(-eps)
    # Positive terms. shift +1: P(k) > e^eps P(k-1)  <=>  k < cA = (N+1) p / (p + q e^eps)
    # (lower tail); shift -1: P(k) > e^eps P(k+1)  <=>  k > cB = (N p e^eps - q) / (q + p e^eps)
    # (upper tail). For p = 1/2, cA = (N+1)/(1+e^eps) and cB = N - cA.
    cA = (N + 1) * a / (a + q)
    cB = (N * p - b) / (b + p)
    M0 = 64 + 8 * math.ceil(math.sqrt(N * p * q))
    out = []
    for shift in (1, -1):
        # Sum a window of M terms next to the boundary and grow it until the terms beyond
        # it are negligible. Beyond the window the pmf decreases geometrically with ratio
        # at most r < e^-eps (the pmf ratio at the window's edge; it is monotone in k), so
        # the neglected mass is at most P(edge) / (1 - r).
        M = M0
        while True:
            if shift == 1:
                hi = min(N, math.ceil(cA))
                lo = max(0, hi - M)
                val = _binom_direction_log_delta(N, p, eps, shift, lo, hi)
                if lo == 0:
                    break
                edge = lo - 1
                r = edge * q / ((N - edge + 1.0) * p)  # P(edge - 1) / P(edge)
            else:
                lo = min(N, max(0, math.floor(cB)))
                hi = min(N, lo + M)
                val = _binom_direction_log_delta(N, p, eps, shift, lo, hi)
                if hi == N:
                    break
                edge = hi + 1
                r = (N - edge) * p / ((edge + 1.0) * q)  # P(edge + 1) / P(edge)
            log_tail = float(binom_logpmf(np.array([edge]), N, p)[0]) - math.log1p(-r)
            if log_tail < val - 40.0:  # neglected part < 4e-18 of the sum
                break
            M *= 4
        out.append(val)
    return max(out)


def binomial_mechanism_delta(N, *, epsilon, p=0.5) -> float:
    """Exact δ(ε) of releasing :math:`S + \\mathrm{Bin}(N, p)` for a sensitivity-1 count.

    With :math:`P` the pmf of :math:`\\mathrm{Bin}(N, p)`, neighbouring counts
    :math:`S` and :math:`S + 1` give output laws :math:`P(\\cdot - S)` and
    :math:`P(\\cdot - S - 1)`, and the smallest valid δ is the larger hockey-stick
    divergence of the two directions,

    .. math::
        \\delta(\\varepsilon) = \\max\\Big(\\sum_{k=0}^{N+1} [P(k) - e^{\\varepsilon}P(k-1)]_+,\\;
        \\sum_{k=0}^{N+1} [P(k-1) - e^{\\varepsilon}P(k)]_+\\Big),

    with :math:`P(-1) = P(N+1) = 0`. The supports differ by one point at each end, so
    the first sum always contains the whole mass :math:`P(0) = q^N` (:math:`q = 1 - p`)
    and the second the whole mass :math:`P(N) = p^N`: hence :math:`\\delta \\ge
    \\max(q^N, p^N)`. For :math:`p = 1/2` the two sums are equal (:math:`P` is
    symmetric). For :math:`p \\ne 1/2` they differ, and either can be the larger: for
    small ``p`` the lower tail with its :math:`q^N` term usually binds, but not always
    (at :math:`N = 2`, ε = 0.5, :math:`p = 0.45` the upper tail is about 20% larger).
    Both sums are always computed. Reflecting :math:`k \\mapsto N - k` swaps them, so
    δ is the same for ``p`` and ``1 - p``.

    Each positive term is :math:`P(k)(1 - e^{d_k})` with
    :math:`d_k = \\varepsilon + \\log\\frac{P(k \\mp 1)}{P(k)}` taken from the pmf ratio
    (:math:`\\frac{P(k-1)}{P(k)} = \\frac{kq}{(N-k+1)p}`), and everything is summed in
    log space (``log1mexp``, ``logsumexp``), so tiny δ keep their relative accuracy.
    :math:`\\log P(k)` uses Loader's saddle-point form (as R's ``dbinom`` does) rather
    than ``scipy.stats.binom.logpmf``, whose difference of three ``gammaln`` values of
    size :math:`N\\log N` costs about :math:`10^{-10}` relative accuracy at
    :math:`N = 10^5`. For large ``N`` the sum runs over a window next to the boundary
    of the positive region, grown until a geometric bound on the terms left out is
    below :math:`e^{-40}` of the result.

    δ(ε) is non-increasing in ``N`` at fixed ``p``: :math:`S + \\mathrm{Bin}(N+1, p)`
    is :math:`S + \\mathrm{Bin}(N, p)` plus an independent Bernoulli(:math:`p`), a
    post-processing.

    δ(ε) is **not** monotone in ``p`` on :math:`(0, 1/2]`, although it decreases
    overall. The positive terms of the lower-tail sum are :math:`k = 0, \\dots, K`, with
    :math:`K` the last integer below :math:`c_A = (N+1)p/(p + qe^{\\varepsilon})`; while
    :math:`K` is fixed the sum is :math:`F(K) - e^{\\varepsilon}F(K-1)`, :math:`F` the
    cdf of :math:`\\mathrm{Bin}(N, p)`, whose derivative in ``p`` is
    :math:`-N[b(K) - e^{\\varepsilon}b(K-1)]` with :math:`b` the pmf of
    :math:`\\mathrm{Bin}(N-1, p)`. It is positive just after term :math:`K` enters
    (where :math:`(N-K+1)p = e^{\\varepsilon}Kq`) and stays so until
    :math:`(N-K)p = e^{\\varepsilon}Kq`: a short rise after every entry, a sawtooth on
    a falling trend. The upper-tail sum behaves the same way. The rises reach about
    20% of δ per tooth (largest for large ε); for example, with :math:`N = 100` and
    ε = 1, δ grows by about 5% from :math:`p = 0.472` to :math:`p = 0.474` (confirmed by
    40-digit summation). The test suite checks on a grid that each sum increases only on
    these predicted intervals. See :func:`binomial_noise_probability` for what this
    means for calibration.

    Parameters
    ----------
    N : int
        Number of noise trials, in :math:`[0, \\infty)`.
    epsilon : float
        In :math:`(0, \\infty)`.
    p : float, default 0.5
        Success probability of each trial, in :math:`(0, 1)`.

    Examples
    --------
    >>> binomial_mechanism_delta(1, epsilon=1.0)  # outputs {0,1} vs {1,2}: mass 1/2 at 0
    0.5
    >>> round(binomial_mechanism_delta(1, epsilon=1.0, p=0.25), 12)  # P(0) = 3/4 is uncovered
    0.75
    """
    N = check_int("N", N, low=0, high=MAX_BINOMIAL_USERS, reason="the exact delta sums a window growing like sqrt(N)")
    eps = _check_epsilon(epsilon)
    p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    return math.exp(_binomial_log_delta(N, eps, p))


def _binomial_trials_floor(eps: float, delta: float) -> float:
    """A lower bound on the trials N of any Bin(N, p) noise meeting (eps, delta).

    delta(eps) >= TV - (e^eps - 1), and the total variation between Bin(N, p) and its
    shift by one is the largest pmf value, at least 1/sqrt(2N + 2) for p = 1/2 (from
    C(2m, m)/4^m >= 1/sqrt(4m)); so N >= 1/(2 (delta + e^eps - 1)^2) - 1.
    """
    return 0.5 / (delta + math.expm1(min(eps, 300.0))) ** 2 - 1.0


@functools.lru_cache(maxsize=4096)
def _binomial_trials(eps: float, delta: float) -> int:
    target = math.log(delta)

    def ok(N: int) -> bool:
        return _binomial_log_delta(N, eps) <= target

    # Necessary: delta(eps) >= TV - (e^eps - 1) and TV = P(mode) >= 1/sqrt(2N + 2) for
    # Bin(N, 1/2) against its shift by one, so N >= 1/(2 (delta + e^eps - 1)^2) - 1.
    floor = _binomial_trials_floor(eps, delta)
    hi = 1
    while floor > MAX_BINOMIAL_USERS or not ok(hi):
        if floor > MAX_BINOMIAL_USERS or hi >= MAX_BINOMIAL_USERS:
            raise ValueError(
                f"epsilon={eps!r} is too small for delta={delta!r}: Bin(N, 1/2) noise needs more than "
                f"N = {MAX_BINOMIAL_USERS:.0e} trials (the largest N whose exact delta is computed); "
                f"use a larger epsilon or delta"
            )
        hi = min(2 * hi, MAX_BINOMIAL_USERS)
    lo = hi // 2  # fails (or is 0, which always fails since delta(0) = 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def binomial_noise_trials(*, epsilon, delta) -> int:
    """Smallest total number of fair-coin trials ``N`` with :func:`binomial_mechanism_delta` ≤ δ.

    This is the smallest symmetric noise :math:`\\mathrm{Bin}(N, 1/2)` that makes the
    count :math:`(\\varepsilon, \\delta)`-DP. Doubling search from ``N = 1`` to the
    first passing power of two, then bisection; correct because δ(ε) is non-increasing
    in ``N`` (see :func:`binomial_mechanism_delta`). The result is minimal: ``N - 1``
    fails. The search is capped at ``MAX_BINOMIAL_USERS`` (1e9) trials: a target that
    needs more (a tiny ε) raises ValueError, at once when the necessary condition
    :math:`N \\ge 1/(2(\\delta + e^{\\varepsilon} - 1)^2) - 1` (from
    :math:`\\delta(\\varepsilon) \\ge \\mathrm{TV} - (e^{\\varepsilon} - 1)` and
    :math:`\\mathrm{TV} \\ge 1/\\sqrt{2N+2}`) already rules it out. Since :math:`P(0) = 2^{-N}` always contributes,
    :math:`N \\ge \\log_2(1/\\delta)`.

    Examples
    --------
    >>> N = binomial_noise_trials(epsilon=1.0, delta=1e-6)
    >>> binomial_mechanism_delta(N, epsilon=1.0) <= 1e-6 < binomial_mechanism_delta(N - 1, epsilon=1.0)
    True
    """
    eps = _check_epsilon(epsilon)
    d = _required_delta(delta)
    return _binomial_trials(eps, d)


# Bisection on p stops when the bracket is below this fraction of p (about 1e-12).
_P_RTOL = 2.0**-40


@functools.lru_cache(maxsize=4096)
def _binomial_probability(N: int, eps: float, delta: float) -> float:
    target = math.log(delta)

    def ok(p: float) -> bool:
        return _binomial_log_delta(N, eps, p) <= target

    if not ok(0.5):
        try:
            need = f"binomial_noise_trials(epsilon, delta) = {_binomial_trials(eps, delta)}"
        except ValueError:
            need = f"{MAX_BINOMIAL_USERS:.0e} (the largest N supported), and more"
        raise ValueError(
            f"N must be at least {need} for any p in (0, 1/2] to reach delta={delta!r} at epsilon={eps!r}; got N={N}"
        )
    # Bracket [lo, hi] with ok(hi) and not ok(lo): halve from 1/2. Halving ends, since
    # delta >= (1 - p)^N -> 1 as p -> 0; the cap is never reached for delta < 1 - 2^-53
    # (then (1 - p)^N > delta once p < 2^-54 / N, i.e. after at most 85 halvings).
    hi, lo = 0.5, 0.25
    for _ in range(1100):
        if not ok(lo):
            break
        hi, lo = lo, lo / 2.0
    else:  # pragma: no cover - unreachable, see above
        raise RuntimeError("binomial_noise_probability: no failing p found")
    while hi - lo > _P_RTOL * hi:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def binomial_noise_probability(N, *, epsilon, delta) -> float:
    """Noise probability ``p`` in :math:`(0, 1/2]` making :math:`S + \\mathrm{Bin}(N, p)` (ε, δ)-DP.

    Bisection on ``p`` with the exact δ of :func:`binomial_mechanism_delta`. A bracket
    is found by halving from 1/2 (δ tends to 1 as :math:`p \\to 0`, because
    :math:`\\delta \\ge (1-p)^N`); it is then bisected until its width is below
    :math:`2^{-40}\\,p`. The returned ``p`` always meets the target (δ ≤ ``delta`` as
    computed) and a point less than :math:`2^{-40}p` below it does not, so ``p`` sits
    on a downward crossing of the target.

    Since δ is not monotone in ``p`` (see :func:`binomial_mechanism_delta`), this
    crossing need not be the first one, and a smaller valid ``p`` can exist. Example:
    :math:`N = 100`, ε = 0.5, δ = :math:`10^{-3}`, where bisection returns
    :math:`p \\approx 0.3821` but :math:`p \\approx 0.3756` also passes (a local
    minimum of the sawtooth that dips below the target). What is guaranteed is privacy,
    not minimality. For the settings of the book's table (:math:`N = n = 10^4`,
    δ = :math:`10^{-6}`, ε ∈ {0.1, 0.5, 1, 2, 4}) the test suite shows that no smaller
    ``p`` is valid: the lower-tail sum, a lower bound on δ, is above the target at every
    one of its local minima below ``p``.

    A bound that always holds: :math:`(1-p)^N \\le \\delta` is necessary, so
    :math:`p \\ge 1 - \\delta^{1/N}` and :math:`Np \\ge \\log(1/\\delta)\\,(1 -
    \\log(1/\\delta)/(2N))`. For large ε this boundary term alone decides, and the
    noise variance :math:`Npq` levels off near :math:`\\log(1/\\delta)` however large
    ε is: the shifted binomial is then close to a shifted Poisson, whose mass at 0 the
    other law never covers.

    Raises
    ------
    ValueError
        If even :math:`p = 1/2` fails, i.e. ``N`` is below
        :func:`binomial_noise_trials`.

    Examples
    --------
    >>> p = binomial_noise_probability(10_000, epsilon=1.0, delta=1e-6)
    >>> binomial_mechanism_delta(10_000, epsilon=1.0, p=p) <= 1e-6
    True
    >>> p < 0.01
    True
    """
    N = check_int("N", N, low=1, high=MAX_BINOMIAL_USERS, reason="the exact delta sums a window growing like sqrt(N)")
    eps = _check_epsilon(epsilon)
    d = _required_delta(delta)
    return _binomial_probability(N, eps, d)


@functools.lru_cache(maxsize=4096)
def _client_noise(n: int, eps: float, delta: float) -> tuple[int, float, int]:
    N = _binomial_trials(eps, delta)
    if N >= n:
        return -(-N // n), 0.5, N
    return 1, _binomial_probability(n, eps, delta), N


def binomial_client_noise(*, n, epsilon, delta) -> tuple[int, float]:
    """Per-client noise :math:`\\mathrm{Bin}(m, p)` of the ``"distributed-binomial"`` model.

    Calibration rule, with :math:`N^*` = :func:`binomial_noise_trials` (the smallest
    symmetric noise :math:`\\mathrm{Bin}(N^*, 1/2)` meeting the target):

    * if :math:`N^* \\ge n`: :math:`m = \\lceil N^*/n \\rceil` and :math:`p = 1/2`. The
      secure sum carries :math:`\\mathrm{Bin}(nm, 1/2)` with :math:`nm \\ge N^*`, at
      least as private as :math:`N^*` trials (monotonicity in ``N``);
    * if :math:`N^* < n`: :math:`m = 1` and :math:`p \\in (0, 1/2]` is the value found by
      bisection on the exact δ of :math:`S + \\mathrm{Bin}(n, p)`
      (:func:`binomial_noise_probability`; it meets the target, and it is the smallest
      valid ``p`` unless δ, which is not monotone in ``p``, dips below the target
      earlier). A solution exists because :math:`p = 1/2` passes when :math:`n > N^*`.

    The second branch is what keeps the error from being floored at :math:`\\sqrt n/2`
    (the standard deviation of one fair coin per client) when the target needs less
    noise than that. The variance of the noise is :math:`nmp(1-p)`. Skewed noise is
    less efficient than fair coins: in every case we computed, :math:`\\mathrm{Bin}(n,
    p)` with small ``p`` needs a larger variance than :math:`\\mathrm{Bin}(N^*, 1/2)`
    for the same target (its mass at 0 must be at most δ); but with every client adding
    at least one trial, fair coins would cost variance :math:`n/4`.

    This assumes all ``n`` clients are honest and none drops out: noise of colluding
    clients is known to them and missing clients add none; neither is modelled here.

    Returns
    -------
    t : int
        Noise trials per client, :math:`m` in the text, at least 1.
    p : float
        Success probability of each trial, in :math:`(0, 1/2]`.

    Examples
    --------
    >>> binomial_client_noise(n=10, epsilon=1.0, delta=1e-6)[1]
    0.5
    >>> t, p = binomial_client_noise(n=10_000, epsilon=1.0, delta=1e-6)
    >>> t == 1 and p < 0.5
    True
    """
    n = check_int("n", n, low=1, high=MAX_BINOMIAL_USERS, reason="the exact delta sums a window growing like sqrt(N)")
    eps = _check_epsilon(epsilon)
    d = _required_delta(delta)
    t, p, _ = _client_noise(n, eps, d)
    return t, p


# -------------------------------------------------------------------- calibration


def calibrate_count(model, *, n, epsilon, delta=None) -> dict:
    """Parameters of one trust model's count mechanism at ``(epsilon, delta)``.

    Returns a dict with ``"model"``, ``"std"`` (as :func:`count_std`) and the
    model's own parameters: ``"scale"`` (Laplace :math:`b = 1/\\varepsilon`),
    ``"sigma"`` (Gaussian), ``"epsilon0"`` (randomized-response level; equal to
    ``epsilon`` for ``"local-rr"``), or, for ``"distributed-binomial"``,
    ``"trials_per_client"`` (:math:`m`, returned as ``t``) and ``"p"`` (each client adds
    :math:`\\mathrm{Bin}(m, p)`; see :func:`binomial_client_noise`) together with
    ``"symmetric_trials"`` (:math:`N^*` of :func:`binomial_noise_trials`).

    Examples
    --------
    >>> calibrate_count("central-laplace", n=10, epsilon=2.0)["scale"]
    0.5
    """
    model = check_choice("model", model, MODELS)
    n = check_int("n", n, low=1)
    eps = _check_epsilon(epsilon)
    d = _check_delta(delta, required=model in _NEEDS_DELTA, model=model)
    if model == "central-laplace":
        return {"model": model, "scale": 1.0 / eps, "std": math.sqrt(2.0) / eps}
    if model == "central-gaussian":
        sigma = _central_sigma(eps, d)
        return {"model": model, "sigma": sigma, "std": sigma}
    if model == "local-rr":
        return {"model": model, "epsilon0": eps, "std": _rr_std(n, eps)}
    if model == "shuffle-rr":
        eps0 = shuffle_calibrated_epsilon0(eps, n=n, delta=d)
        return {"model": model, "epsilon0": eps0, "std": _rr_std(n, eps0)}
    t, p, N = _client_noise(n, eps, d)
    return {
        "model": model,
        "symmetric_trials": N,
        "trials_per_client": t,
        "p": p,
        "std": math.sqrt(n * t * p * (1.0 - p)),
    }


def count_std(model, *, n, epsilon, delta=None) -> float:
    """Exact standard deviation of the unbiased count estimator of one trust model.

    ``"central-laplace"``
        :math:`\\sqrt 2/\\varepsilon` (Laplace scale :math:`1/\\varepsilon`; pure DP,
        ``delta`` ignored).
    ``"central-gaussian"``
        :math:`\\sigma` of :func:`fedfreq.accounting.gaussian_sigma` with sensitivity 1
        (the analytic calibration of Balle & Wang 2018).
    ``"local-rr"``
        Each user reports her bit with probability :math:`p = e^{\\varepsilon}/(1 +
        e^{\\varepsilon})` and its flip with :math:`q = 1 - p`; the estimator
        :math:`(\\sum_i r_i - nq)/(p - q)` is unbiased. A report is Bernoulli(:math:`p`)
        when the bit is 1 and Bernoulli(:math:`q`) when it is 0, with variance
        :math:`pq` *in both cases*, so

        .. math::
            \\operatorname{Var} = \\frac{npq}{(p-q)^2} = \\frac{n e^{\\varepsilon}}
            {(e^{\\varepsilon} - 1)^2} = \\frac{n}{4\\sinh^2(\\varepsilon/2)},

        whatever the data. ``delta`` is ignored: :math:`\\varepsilon`-LDP reports give an
        :math:`\\varepsilon`-DP view to the server.
    ``"shuffle-rr"``
        The same formula at the local level :func:`shuffle_calibrated_epsilon0`.
        Certified by one published upper bound (see :func:`shuffle_epsilon`), so this is
        the error that analysis supports, not the best error of the shuffle model.
    ``"distributed-binomial"``
        :math:`\\sqrt{ntp(1-p)}` with ``(t, p)`` from :func:`binomial_client_noise`: the
        secure sum is :math:`S + \\mathrm{Bin}(nm, p)` and the server subtracts
        :math:`ntp`. When the target needs less than one fair coin per client, ``t = 1``
        and ``p < 1/2``; the error is then close to the central Gaussian's at small ε,
        drifts above it as ε grows, and levels off near
        :math:`\\sqrt{\\log(1/\\delta)}` at large ε, where the Gaussian's keeps falling
        (see :func:`binomial_noise_probability`).

    Parameters
    ----------
    model : str
        One of :data:`MODELS`.
    n : int
        Number of users, in :math:`[1, \\infty)`.
    epsilon : float
        In :math:`(0, \\infty)`.
    delta : float, optional
        In :math:`(0, 1)`; required for ``"central-gaussian"``, ``"shuffle-rr"`` and
        ``"distributed-binomial"``, checked but ignored otherwise.

    Examples
    --------
    >>> round(count_std("local-rr", n=10_000, epsilon=math.log(3.0)), 6)
    86.60254
    """
    return calibrate_count(model, n=n, epsilon=epsilon, delta=delta)["std"]


def count_error_curve(model, *, n, epsilons, delta=None) -> np.ndarray:
    """:func:`count_std` for each entry of ``epsilons`` (same shape, float array).

    Examples
    --------
    >>> count_error_curve("central-laplace", n=5, epsilons=[1.0, 2.0]).round(4)
    array([1.4142, 0.7071])
    """
    model = check_choice("model", model, MODELS)
    n = check_int("n", n, low=1)
    eps = check_array("epsilons", epsilons, low=0.0, low_open=True)
    _check_delta(delta, required=model in _NEEDS_DELTA, model=model)
    flat = []
    for e in eps.ravel():
        try:
            flat.append(count_std(model, n=n, epsilon=float(e), delta=delta))
        except ValueError as exc:
            if "epsilon" not in str(exc):
                raise
            raise ValueError(f"epsilons entry {float(e)!r} is refused: {exc}") from exc
    return np.asarray(flat, dtype=float).reshape(eps.shape)


# ---------------------------------------------------------------------- simulation


def simulate_count(bits, model, *, epsilon, delta=None, rng=None) -> float:
    """Run one trust model's count mechanism on ``bits`` and return the unbiased estimate.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Parameters
    ----------
    bits : array_like of int
        One 0/1 entry per user (1-D, at least one user); ``n = len(bits)``.
    model : str
        One of :data:`MODELS`; calibrated as in :func:`calibrate_count`.
    epsilon, delta : float
        Privacy target; see :func:`count_std`.
    rng : Generator, int or None
        Source of randomness.

    Notes
    -----
    ``"local-rr"`` and ``"shuffle-rr"`` flip every bit independently with probability
    :math:`q`; ``"shuffle-rr"`` also permutes the reports (the analyst sees only the
    shuffled multiset). ``"distributed-binomial"`` draws each client's own
    :math:`\\mathrm{Bin}(m, p)` noise (``(t, p)`` from :func:`binomial_client_noise`),
    and only the sum of the noisy values is used (the output of secure aggregation);
    the server subtracts :math:`ntp`. All operations are vectorised over users.

    Examples
    --------
    >>> bits = np.array([1, 0, 1, 1])
    >>> est = simulate_count(bits, "central-laplace", epsilon=1.0, rng=0)
    >>> isinstance(est, float)
    True
    """
    model = check_choice("model", model, MODELS)
    b = check_array("bits", bits, ndim=1, integer=True, low=0, high=1, min_size=1)
    n = int(b.size)
    cal = calibrate_count(model, n=n, epsilon=epsilon, delta=delta)
    g = as_generator(rng)
    S = int(b.sum())
    if model == "central-laplace":
        return float(S + g.laplace(0.0, cal["scale"]))
    if model == "central-gaussian":
        return float(S + g.normal(0.0, cal["sigma"]))
    if model in ("local-rr", "shuffle-rr"):
        eps0 = cal["epsilon0"]
        q = float(special.expit(-eps0))
        reports = b ^ (g.random(n) < q)
        if model == "shuffle-rr":
            reports = g.permutation(reports)
        return float((int(reports.sum()) - n * q) / math.tanh(eps0 / 2.0))  # p - q = tanh(eps0/2)
    t, p = cal["trials_per_client"], cal["p"]
    noisy = b + g.binomial(t, p, size=n)
    return float(int(noisy.sum()) - n * t * p)
