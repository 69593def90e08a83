"""The four trust models of differential privacy on the simplest task: a private count.

Each of ``n`` users holds a bit :math:`b_i \\in \\{0, 1\\}` and the analyst wants the
count :math:`S = \\sum_i b_i` under :math:`(\\varepsilon, \\delta)`-DP. This module
calibrates one unbiased estimator of :math:`S` per trust model, gives the exact
standard deviation of each estimator, and simulates each mechanism so that a Monte
Carlo experiment can check the formulas.

Neighbouring relation
---------------------
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
    (:func:`analytic_gaussian_sigma`).
``"local-rr"``
    Every user reports her bit through binary randomized response at level
    :math:`\\varepsilon`; the analyst debiases the sum of reports.
``"shuffle-rr"``
    The same randomized response at a larger local level :math:`\\varepsilon_0`, the
    reports being shuffled before the analyst sees them; :math:`\\varepsilon_0` is
    chosen with the amplification bound of :func:`shuffle_epsilon`.
``"distributed-binomial"``
    Every client adds :math:`\\mathrm{Bin}(t, 1/2)` noise to her bit; secure aggregation
    reveals only the noisy sum; the privacy of :math:`S + \\mathrm{Bin}(nt, 1/2)` is
    computed exactly (:func:`binomial_mechanism_delta`).

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

from ._rng import as_generator
from ._validation import check_array, check_choice, check_int, check_real

__all__ = [
    "MODELS",
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "binomial_mechanism_delta",
    "binomial_noise_trials",
    "binomial_trials_per_client",
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


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for ``x < 0``, accurate near 0 and for very negative ``x``."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    near = x > -math.log(2.0)
    out[near] = np.log(-np.expm1(x[near]))
    out[~near] = np.log1p(-np.exp(x[~near]))
    return out


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


# ---------------------------------------------------------------- central Gaussian


def _gauss_log_delta(sigma: float, eps: float) -> float:
    a = 0.5 / sigma - eps * sigma
    b = -0.5 / sigma - eps * sigma
    la = float(special.log_ndtr(a))
    lb = eps + float(special.log_ndtr(b))
    x = lb - la
    if x >= 0.0:  # only reachable through rounding when delta is below ~1e-16 of Phi(a)
        return -math.inf
    return la + float(_log1mexp(np.array([x]))[0])


def analytic_gaussian_delta(sigma, *, epsilon) -> float:
    """Exact :math:`\\delta(\\varepsilon)` of the Gaussian mechanism with sensitivity 1.

    Balle & Wang (ICML 2018, Theorem 8): adding :math:`N(0, \\sigma^2)` to a query of
    sensitivity :math:`\\Delta = 1` is :math:`(\\varepsilon, \\delta)`-DP if and only if

    .. math::
        \\delta \\ge \\Phi\\Big(\\frac{1}{2\\sigma} - \\varepsilon\\sigma\\Big)
        - e^{\\varepsilon}\\,\\Phi\\Big(-\\frac{1}{2\\sigma} - \\varepsilon\\sigma\\Big).

    The right-hand side is evaluated in log space (``scipy.special.log_ndtr``), as
    :math:`\\log\\Phi(a) + \\log(1 - e^{\\varepsilon + \\log\\Phi(b) - \\log\\Phi(a)})`, so
    that values of :math:`\\delta` far below machine epsilon keep their relative accuracy.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, in :math:`(0, \\infty)`.
    epsilon : float
        In :math:`(0, \\infty)`.

    Examples
    --------
    >>> f"{analytic_gaussian_delta(4.0, epsilon=1.0):.4e}"
    '2.9243e-06'
    """
    s = check_real("sigma", sigma, low=0.0, low_open=True)
    eps = _check_epsilon(epsilon)
    return math.exp(_gauss_log_delta(s, eps))


@functools.lru_cache(maxsize=4096)
def _analytic_sigma(eps: float, delta: float) -> float:
    target = math.log(delta)

    def g(u: float) -> float:
        return _gauss_log_delta(math.exp(u), eps) - target

    # delta(sigma) falls from 1 (sigma -> 0) to 0 (sigma -> inf): bracket in log sigma.
    u0 = math.log(math.sqrt(2.0 * math.log(1.25 / delta)) / eps)
    lo, hi = u0 - 1.0, u0 + 1.0
    while g(lo) <= 0.0:
        lo -= 1.0
    while g(hi) >= 0.0:
        hi += 1.0
    u = optimize.brentq(g, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    sigma = math.exp(u)
    # brentq returns a point within xtol of the root; make sure it is on the private side.
    while _gauss_log_delta(sigma, eps) > target:
        sigma = float(np.nextafter(sigma, np.inf))
    return sigma


def analytic_gaussian_sigma(epsilon, *, delta) -> float:
    """Smallest :math:`\\sigma` for which the Gaussian mechanism (sensitivity 1) is (ε, δ)-DP.

    Solves :math:`\\delta(\\sigma) = \\delta` for the exact curve of
    :func:`analytic_gaussian_delta` (Balle & Wang 2018, Theorem 8) with ``brentq`` on
    :math:`\\log\\sigma`; :math:`\\delta(\\sigma)` is strictly decreasing, so the root is
    unique. The returned value satisfies :math:`\\delta(\\sigma) \\le \\delta`.

    Unlike the classical calibration :math:`\\sqrt{2\\log(1.25/\\delta)}/\\varepsilon`
    (Dwork & Roth 2014, Theorem A.1, proved for :math:`\\varepsilon < 1` only), this is
    valid for every :math:`\\varepsilon > 0`, and it is never larger.

    Examples
    --------
    >>> round(analytic_gaussian_sigma(1.0, delta=1e-6), 4)
    4.2247
    >>> analytic_gaussian_sigma(0.5, delta=1e-6) < math.sqrt(2 * math.log(1.25 / 1e-6)) / 0.5
    True
    """
    eps = _check_epsilon(epsilon)
    d = _check_delta(delta, required=True)
    return _analytic_sigma(eps, d)


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
    d = _check_delta(delta, required=True)
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
    d = _check_delta(delta, required=True)
    top = shuffle_max_local_epsilon(n=n, delta=d)
    if eps0 > top:
        raise ValueError(
            f"epsilon0 must lie in (0, {top:.6g}] = (0, log(n/(16 log(2/delta)))] for the "
            f"shuffling bound with n={n}, delta={d!r}; got {epsilon0!r}"
        )
    return _shuffle_eps(eps0, n, d)


@functools.lru_cache(maxsize=4096)
def _shuffle_inverse(eps: float, n: int, delta: float) -> float:
    top = math.log(n / (16.0 * math.log(2.0 / delta)))
    if _shuffle_eps(top, n, delta) <= eps:
        return top
    eps0 = optimize.brentq(
        lambda x: _shuffle_eps(x, n, delta) - eps, 0.0, top, xtol=1e-14, rtol=4 * np.finfo(float).eps
    )
    while _shuffle_eps(eps0, n, delta) > eps:  # stay on the private side of the root
        eps0 = float(np.nextafter(eps0, -np.inf))
    return eps0


def shuffle_local_epsilon(epsilon, *, n, delta) -> float:
    """Largest valid local level :math:`\\varepsilon_0` whose shuffled guarantee is ≤ ``epsilon``.

    Inverts :func:`shuffle_epsilon` by ``brentq``: the bound is continuous and strictly
    increasing in :math:`\\varepsilon_0` and tends to 0 with it, so the root exists
    whenever ``epsilon`` is below the bound at the top of the validity range. If even
    the largest valid :math:`\\varepsilon_0 = \\log(n/(16\\log(2/\\delta)))` gives a
    central level below ``epsilon``, that largest valid value is returned (the
    theorem says nothing beyond it), and the guarantee it certifies is then *stronger*
    than asked for. The returned value always satisfies
    ``shuffle_epsilon(eps0, n=n, delta=delta) <= epsilon``.

    Raises
    ------
    ValueError
        If :math:`n \\le 16\\log(2/\\delta)` (no valid :math:`\\varepsilon_0`).

    Examples
    --------
    >>> e0 = shuffle_local_epsilon(0.5, n=10_000, delta=1e-6)
    >>> abs(shuffle_epsilon(e0, n=10_000, delta=1e-6) - 0.5) < 1e-9
    True
    """
    eps = _check_epsilon(epsilon)
    n = check_int("n", n, low=1)
    d = _check_delta(delta, required=True)
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
    d = _check_delta(delta, required=True)
    if n <= 16.0 * math.log(2.0 / d):
        return eps
    return max(_shuffle_inverse(eps, n, d), eps)


# ---------------------------------------------------------------- distributed binomial

_CHUNK = 1 << 20
_LOG_2PI = math.log(2.0 * math.pi)
# Coefficients of the Stirling series log(n!) - log(sqrt(2 pi n) (n/e)^n) = 1/(12n) - 1/(360n^3) + ...
_S0, _S1, _S2, _S3, _S4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """Error of Stirling's formula, ``log(n!) - log(sqrt(2 pi n) (n/e)^n)``, for n >= 1."""
    n = np.asarray(n, dtype=float)
    out = np.empty_like(n)
    small = n <= 15.0
    ns = n[small]
    out[small] = special.gammaln(ns + 1.0) - (ns + 0.5) * np.log(ns) + ns - 0.5 * _LOG_2PI
    nl = n[~small]
    nn = nl * nl
    out[~small] = (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / nl
    return out


def _bd0(x: np.ndarray, m: float) -> np.ndarray:
    """Deviance term ``x log(x/m) + m - x`` without cancellation (x > 0, m > 0)."""
    x = np.asarray(x, dtype=float)
    out = x * np.log(x / m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    if np.any(near):
        xn = x[near]
        v = (xn - m) / (xn + m)
        acc = (xn - m) * v
        ej = 2.0 * xn * v
        v2 = v * v
        for j in range(1, 40):  # |v| < 0.1: each term shrinks by 100, 40 terms is far past 1e-16
            ej = ej * v2
            acc = acc + ej / (2 * j + 1)
        out[near] = acc
    return out


def _log_binom_half_pmf(k: np.ndarray, N: int) -> np.ndarray:
    """``log P(k)`` for P = Bin(N, 1/2), with absolute error of a few units of rounding.

    The error is a few ``eps`` times the size of the terms summed (the deviances
    ``x log(x/m)``), about 1e-13 wherever ``log P > -1000``, for any ``N``.

    ``scipy.stats.binom.logpmf`` forms log C(N, k) from three ``gammaln`` values of size
    about N log N, so its absolute error grows like 1e-16 N log N (about 1e-10 at
    N = 1e5). The saddle-point form of Loader (2000), used by R's ``dbinom``, keeps
    only small, well-conditioned terms.
    """
    k = np.asarray(k, dtype=np.int64)
    out = np.full(k.shape, -N * math.log(2.0))  # k = 0 and k = N
    mid = (k > 0) & (k < N)
    if np.any(mid):
        x = k[mid].astype(float)
        y = N - x
        m = N / 2.0
        lc = _stirlerr(np.array([float(N)]))[0] - _stirlerr(x) - _stirlerr(y) - _bd0(x, m) - _bd0(y, m)
        out[mid] = lc - 0.5 * (_LOG_2PI + np.log(x) + np.log(y) - math.log(N))
    return out


def _binom_direction_log_delta(N: int, eps: float, shift: int, k_lo: int, k_hi: int) -> float:
    """``log sum_{k in [k_lo, k_hi]} max(0, P(k) - e^eps P(k - shift))`` for P = Bin(N, 1/2)."""
    parts = []
    for start in range(k_lo, k_hi + 1, _CHUNK):
        k = np.arange(start, min(k_hi, start + _CHUNK - 1) + 1, dtype=np.int64)
        logp = _log_binom_half_pmf(k, N)
        # log of e^eps P(k - shift) / P(k) from the pmf ratio, exact up to rounding of two logs:
        # P(k-1)/P(k) = k/(N-k+1) and P(k+1)/P(k) = (N-k)/(k+1).
        d = np.full(k.shape, -np.inf)
        if shift == 1:
            inside = k >= 1  # P(-1) = 0
            kk = k[inside].astype(float)
            d[inside] = eps + np.log(kk) - np.log(N - kk + 1.0)
        else:
            inside = k <= N - 1  # P(N + 1) = 0
            kk = k[inside].astype(float)
            d[inside] = eps + np.log(N - kk) - np.log(kk + 1.0)
        pos = d < 0.0
        if np.any(pos):
            terms = logp[pos] + _log1mexp(d[pos])
            parts.append(float(special.logsumexp(terms)))
    if not parts:
        return -math.inf
    return float(special.logsumexp(np.array(parts)))


def _binomial_log_delta(N: int, eps: float) -> float:
    if N == 0:
        return 0.0  # S itself is released: delta = 1
    c = (N + 1) * float(special.expit(-eps))
    out = []
    for shift in (1, -1):
        # Positive terms: shift +1 -> k < c = (N+1)/(1+e^eps) (lower tail), shift -1 ->
        # k > N - c (upper tail). Sum a window of M terms next to the boundary and grow it
        # until the terms beyond it are negligible. Beyond the window the pmf decreases
        # geometrically with ratio at most r < 1 (pmf ratio at the window's edge), so the
        # neglected mass is at most P(edge) / (1 - r).
        M = 64 + 4 * math.isqrt(N)
        while True:
            if shift == 1:
                hi = min(N, math.ceil(c))
                lo = max(0, hi - M)
                val = _binom_direction_log_delta(N, eps, shift, lo, hi)
                if lo == 0:
                    break
                edge = lo - 1
                r = edge / (N - edge + 1.0)  # P(edge - 1) / P(edge)
            else:
                lo = max(0, math.floor(N - c))
                hi = min(N, lo + M)
                val = _binom_direction_log_delta(N, eps, shift, lo, hi)
                if hi == N:
                    break
                edge = hi + 1
                r = (N - edge) / (edge + 1.0)  # P(edge + 1) / P(edge)
            log_tail = float(_log_binom_half_pmf(np.array([edge]), N)[0]) - math.log1p(-r)
            if log_tail < val - 40.0:  # neglected part < 4e-18 of the sum
                break
            M *= 4
        out.append(val)
    return max(out)


def binomial_mechanism_delta(N, *, epsilon) -> float:
    """Exact δ(ε) of releasing :math:`S + \\mathrm{Bin}(N, 1/2)` for a sensitivity-1 count.

    With :math:`P` the pmf of :math:`\\mathrm{Bin}(N, 1/2)`, neighbouring counts
    :math:`S` and :math:`S + 1` give output laws :math:`P(\\cdot - S)` and
    :math:`P(\\cdot - S - 1)`, and the smallest valid δ is the larger hockey-stick
    divergence of the two directions,

    .. math::
        \\delta(\\varepsilon) = \\max\\Big(\\sum_k [P(k) - e^{\\varepsilon}P(k-1)]_+,\\;
        \\sum_k [P(k-1) - e^{\\varepsilon}P(k)]_+\\Big)

    (the two sums are equal because :math:`P` is symmetric, which the computation does
    not assume). Each positive term is :math:`P(k)(1 - e^{d_k})` with
    :math:`d_k = \\varepsilon + \\log\\frac{P(k \\mp 1)}{P(k)}` taken from the pmf ratio,
    and everything is summed in log space (``log1mexp``, ``logsumexp``), so tiny δ keep
    their relative accuracy. :math:`\\log P(k)` uses Loader's saddle-point form
    (Stirling-series errors and deviance terms) rather than ``scipy.stats.binom.logpmf``,
    whose difference of three ``gammaln`` values of size :math:`N\\log N` costs about
    :math:`10^{-10}` relative accuracy at :math:`N = 10^5`. For large ``N`` the sum
    runs over a window next to the boundary of the positive region, grown until a
    geometric bound on the terms left out is below :math:`e^{-40}` of the result.

    δ(ε) is non-increasing in ``N``: :math:`S + \\mathrm{Bin}(N+1, 1/2)` is
    :math:`S + \\mathrm{Bin}(N, 1/2)` plus an independent fair coin, a post-processing.

    Parameters
    ----------
    N : int
        Number of fair-coin trials in the noise, in :math:`[0, \\infty)`.
    epsilon : float
        In :math:`(0, \\infty)`.

    Examples
    --------
    >>> binomial_mechanism_delta(1, epsilon=1.0)  # outputs {0,1} vs {1,2}: mass 1/2 at 0
    0.5
    """
    N = check_int("N", N, low=0)
    eps = _check_epsilon(epsilon)
    return math.exp(_binomial_log_delta(N, eps))


@functools.lru_cache(maxsize=4096)
def _binomial_trials(eps: float, delta: float) -> int:
    target = math.log(delta)

    def ok(N: int) -> bool:
        return _binomial_log_delta(N, eps) <= target

    hi = 1
    while not ok(hi):
        hi *= 2
    lo = hi // 2  # fails (or is 0, which always fails since delta(0) = 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def binomial_noise_trials(*, epsilon, delta) -> int:
    """Smallest total number of noise trials ``N`` with :func:`binomial_mechanism_delta` ≤ δ.

    Doubling search from ``N = 1`` to the first passing power of two, then bisection;
    correct because δ(ε) is non-increasing in ``N`` (see
    :func:`binomial_mechanism_delta`). The result is minimal: ``N - 1`` fails. Since
    :math:`P(0) = 2^{-N}` always contributes, :math:`N \\ge \\log_2(1/\\delta)`.

    Examples
    --------
    >>> N = binomial_noise_trials(epsilon=1.0, delta=1e-6)
    >>> binomial_mechanism_delta(N, epsilon=1.0) <= 1e-6 < binomial_mechanism_delta(N - 1, epsilon=1.0)
    True
    """
    eps = _check_epsilon(epsilon)
    d = _check_delta(delta, required=True)
    return _binomial_trials(eps, d)


def binomial_trials_per_client(*, n, epsilon, delta) -> int:
    """Trials ``t = ceil(N / n)`` each of ``n`` clients uses for its Bin(t, 1/2) noise.

    The secure sum then carries :math:`\\mathrm{Bin}(nt, 1/2)` with :math:`nt \\ge N`,
    which is at least as private as ``N`` trials (monotonicity in ``N``). This assumes
    all ``n`` clients are honest and none drops out: noise of colluding clients is
    known to them and missing clients add none; neither is modelled here.

    Examples
    --------
    >>> binomial_trials_per_client(n=10, epsilon=1.0, delta=1e-6) >= 1
    True
    """
    n = check_int("n", n, low=1)
    N = binomial_noise_trials(epsilon=epsilon, delta=delta)
    return -(-N // n)


# -------------------------------------------------------------------- calibration


def calibrate_count(model, *, n, epsilon, delta=None) -> dict:
    """Parameters of one trust model's count mechanism at ``(epsilon, delta)``.

    Returns a dict with ``"model"``, ``"std"`` (as :func:`count_std`) and the
    model's own parameters: ``"scale"`` (Laplace :math:`b = 1/\\varepsilon`),
    ``"sigma"`` (Gaussian), ``"epsilon0"`` (randomized-response level; equal to
    ``epsilon`` for ``"local-rr"``), or ``"total_trials"`` (the minimal ``N``) and
    ``"trials_per_client"`` (``t``) for ``"distributed-binomial"``.

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
        sigma = _analytic_sigma(eps, d)
        return {"model": model, "sigma": sigma, "std": sigma}
    if model == "local-rr":
        return {"model": model, "epsilon0": eps, "std": _rr_std(n, eps)}
    if model == "shuffle-rr":
        eps0 = shuffle_calibrated_epsilon0(eps, n=n, delta=d)
        return {"model": model, "epsilon0": eps0, "std": _rr_std(n, eps0)}
    N = _binomial_trials(eps, d)
    t = -(-N // n)
    return {
        "model": model,
        "total_trials": N,
        "trials_per_client": t,
        "std": math.sqrt(n * t) / 2.0,
    }


def count_std(model, *, n, epsilon, delta=None) -> float:
    """Exact standard deviation of the unbiased count estimator of one trust model.

    ``"central-laplace"``
        :math:`\\sqrt 2/\\varepsilon` (Laplace scale :math:`1/\\varepsilon`; pure DP,
        ``delta`` ignored).
    ``"central-gaussian"``
        :math:`\\sigma` of :func:`analytic_gaussian_sigma`.
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
        :math:`\\sqrt{nt}/2` with ``t`` from :func:`binomial_trials_per_client` (noise
        :math:`\\mathrm{Bin}(nt, 1/2)` has variance :math:`nt/4`). The integer ``t >= 1``
        per client means the noise never falls below :math:`\\mathrm{Bin}(n, 1/2)`, so
        the curve flattens at :math:`\\sqrt n/2` once the required ``N`` drops below ``n``.

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
    flat = [count_std(model, n=n, epsilon=float(e), delta=delta) for e in eps.ravel()]
    return np.asarray(flat, dtype=float).reshape(eps.shape)


# ---------------------------------------------------------------------- simulation


def simulate_count(bits, model, *, epsilon, delta=None, rng=None) -> float:
    """Run one trust model's count mechanism on ``bits`` and return the unbiased estimate.

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
    :math:`\\mathrm{Bin}(t, 1/2)` noise, and only the sum of the noisy values is used
    (the output of secure aggregation); the server subtracts :math:`nt/2`. All
    operations are vectorised over users.

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
    t = cal["trials_per_client"]
    noisy = b + g.binomial(t, 0.5, size=n)
    return float(int(noisy.sum()) - n * t / 2.0)
