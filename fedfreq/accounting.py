"""Privacy accounting: Rényi DP curves, composition, and conversion to (ε, δ)-DP.

This module collects the accounting tools every chapter of the book relies on:

* Rényi-DP (RDP) curves of the textbook mechanisms -- Gaussian, Laplace and
  k-ary randomized response -- as functions of the order α > 1;
* sequential composition of RDP curves (:func:`compose_rdp`);
* the conversion from RDP to (ε, δ)-DP and its inverse (:func:`rdp_to_dp`,
  :func:`delta_for_epsilon`);
* exact divergences between two discrete distributions given by their
  log-probabilities (:func:`renyi_divergence`,
  :func:`hockey_stick_divergence`), used to brute-force privacy guarantees on
  small instances;
* the exact ("analytic") privacy profile of the Gaussian mechanism and its
  calibration (:func:`gaussian_delta`, :func:`gaussian_sigma`), next to the
  classical calibration (:func:`classical_gaussian_sigma`).

Conventions
-----------
``sensitivity`` (Δ) is the largest distance between the query answers on two
neighbouring datasets (ℓ2 for the Gaussian, ℓ1 for the Laplace mechanism); the
neighbouring relation is whatever the caller used to bound Δ. ``sigma`` is the
*absolute* standard deviation of the Gaussian noise (not a noise multiplier):
libraries that use a noise multiplier correspond to ``sigma / sensitivity``.
All arithmetic on probabilities is done in log space.

References
----------
- [M17] I. Mironov. "Rényi Differential Privacy." IEEE CSF 2017, arXiv:1702.07476.
- [CKS20] C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for
  Differential Privacy." NeurIPS 2020, arXiv:2004.00010.
- [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato. "Hypothesis
  Testing Interpretations and Rényi Differential Privacy." AISTATS 2020,
  arXiv:2001.05990.
- [BW18] B. Balle, Y.-X. Wang. "Improving the Gaussian Mechanism for
  Differential Privacy: Analytical Calibration and Optimal Denoising."
  ICML 2018, arXiv:1805.06530.
- [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
  Privacy." Foundations and Trends in TCS 9(3-4), 2014.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from ._validation import check_array, check_int, check_real

__all__ = [
    "DEFAULT_ORDERS",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_randomized_response",
    "discrete_laplace_epsilon",
    "discrete_gaussian_rho",
    "rdp_zcdp",
    "compose_rdp",
    "rdp_to_dp",
    "delta_for_epsilon",
    "renyi_divergence",
    "hockey_stick_divergence",
    "gaussian_delta",
    "gaussian_sigma",
    "classical_gaussian_sigma",
    "cpbm_rdp",
    "cpbm_lemma2_paper_forms",
    "cpbm_rdp_exact",
    "poisson_binomial_logpmf",
]

#: Default grid of Rényi orders: 1.1, 1.2, ..., 10.9, then 11, 12, ..., 63, then
#: 64, 128, 256, 512, 1024. The first two blocks are bit-for-bit the orders of
#: ``dp_accounting``'s default grid (``1 + x / 10.0``), so curves on the two grids
#: can be compared entry by entry.
DEFAULT_ORDERS: np.ndarray = np.concatenate(
    [
        1.0 + np.arange(1, 100) / 10.0,
        np.arange(11, 64, dtype=float),
        np.array([64.0, 128.0, 256.0, 512.0, 1024.0]),
    ]
)
DEFAULT_ORDERS.setflags(write=False)

# Largest tolerated |logsumexp(log_p)| for an input distribution.
_NORMALISATION_ATOL = 1e-6


# ---------------------------------------------------------------------------
# private helpers
# ---------------------------------------------------------------------------


def _check_orders(order, name: str = "order") -> tuple[np.ndarray, bool]:
    """Validate Rényi orders (> 1, finite); return (array, was_scalar)."""
    if np.ndim(order) == 0:
        value = check_real(name, order, low=1.0, low_open=True)
        return np.asarray(value, dtype=float), True
    return check_array(name, order, low=1.0, low_open=True, min_size=1), False


def _check_nonneg_real_or_array(name: str, value) -> tuple[np.ndarray, bool]:
    """Validate a finite, non-negative scalar or array; return (array, was_scalar)."""
    if np.ndim(value) == 0:
        return np.asarray(check_real(name, value, low=0.0), dtype=float), True
    return check_array(name, value, low=0.0, min_size=1), False


def _check_rdp_curve(name: str, value) -> np.ndarray:
    """Validate an RDP curve: real entries in [0, +inf] (+inf means 'no bound')."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy raises many types
        raise ValueError(f"{name} must be array-like; got {type(value).__name__}") from exc
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must be a real numeric array; got dtype {arr.dtype}")
    arr = arr.astype(float)
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN; entries must lie in [0, inf]")
    if np.any(arr < 0):
        raise ValueError(f"{name} entries must lie in [0, inf]; got min {arr.min()!r}")
    return arr


def _check_log_probs(name: str, value) -> np.ndarray:
    """Validate a 1-D vector of log-probabilities (entries in [-inf, 0], summing to 1)."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover
        raise ValueError(f"{name} must be array-like; got {type(value).__name__}") from exc
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must be a real numeric array of log-probabilities")
    arr = arr.astype(float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-dimensional array; got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN; entries must lie in [-inf, 0]")
    if np.any(arr > 0):
        raise ValueError(f"{name} entries are log-probabilities and must lie in [-inf, 0]; got max {arr.max()!r}")
    total = special.logsumexp(arr)
    if not abs(total) <= _NORMALISATION_ATOL:
        raise ValueError(
            f"{name} must be the log-probabilities of a distribution: logsumexp({name}) must lie in "
            f"[-{_NORMALISATION_ATOL:g}, {_NORMALISATION_ATOL:g}]; got {total!r}"
        )
    return arr


def _check_pair(log_p, log_q) -> tuple[np.ndarray, np.ndarray]:
    lp = _check_log_probs("log_p", log_p)
    lq = _check_log_probs("log_q", log_q)
    if lp.shape != lq.shape:
        raise ValueError(f"log_p and log_q must have the same shape; got {lp.shape} and {lq.shape}")
    return lp, lq


def _as_output(x: np.ndarray, scalar: bool):
    return float(x) if scalar else x


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate for x near 0 and for x very negative."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(exp(x) - 1) for x >= 0 without overflow (equals -inf at x = 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return x + np.log(-np.expm1(-x))


def _log_gaussian_delta(eps: np.ndarray, mu: float) -> np.ndarray:
    """log δ(ε) of the Gaussian mechanism with Δ/σ = mu (Balle & Wang 2018, Thm 8)."""
    eps = np.asarray(eps, dtype=float)
    shift = eps / mu
    log_a = special.log_ndtr(mu / 2.0 - shift)
    log_b = eps + special.log_ndtr(-mu / 2.0 - shift)
    with np.errstate(invalid="ignore"):
        ratio = log_b - log_a
    # Mathematically ratio < 0. A ratio >= 0 (or log_a = -inf) only arises from
    # rounding when the true δ is far below the smallest positive double; the
    # answer is then exactly -inf in floating point.
    ok = np.isfinite(log_a) & (ratio < 0)
    out = np.full(np.shape(eps), -np.inf)
    out[ok] = log_a[ok] + _log1mexp(ratio[ok])
    return out


# ---------------------------------------------------------------------------
# RDP curves of basic mechanisms
# ---------------------------------------------------------------------------


def rdp_gaussian(order, *, sensitivity: float = 1.0, sigma: float):
    r"""Rényi DP of the Gaussian mechanism.

    Adding :math:`\mathcal N(0, \sigma^2 I)` noise to a query with ℓ2 sensitivity
    :math:`\Delta` satisfies :math:`(\alpha, \varepsilon(\alpha))`-RDP with

    .. math:: \varepsilon(\alpha) = \frac{\alpha \Delta^2}{2\sigma^2},

    which is the exact Rényi divergence between :math:`\mathcal N(0,\sigma^2)` and
    :math:`\mathcal N(\Delta,\sigma^2)` (Mironov 2017, Proposition 7).

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) α, each finite and > 1.
    sensitivity : float, default 1.0
        ℓ2 sensitivity Δ > 0.
    sigma : float
        Standard deviation σ > 0 of the noise (absolute, not a multiplier).

    Returns
    -------
    float or ndarray
        ε(α), a float for a scalar ``order`` and an array of the same shape otherwise.

    Examples
    --------
    >>> rdp_gaussian(2.0, sigma=1.0)
    1.0
    >>> rdp_gaussian([2.0, 4.0], sensitivity=2.0, sigma=2.0)
    array([1., 2.])
    """
    alpha, scalar = _check_orders(order)
    delta_ = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    sigma_ = check_real("sigma", sigma, low=0.0, low_open=True)
    out = alpha * (delta_ / sigma_) ** 2 / 2.0
    return _as_output(out, scalar)


def rdp_laplace(order, *, sensitivity: float = 1.0, scale: float):
    r"""Rényi DP of the Laplace mechanism.

    Adding Laplace noise of scale :math:`b` (density :math:`e^{-|x|/b}/(2b)`) to a
    query with ℓ1 sensitivity :math:`\Delta` satisfies RDP of order α with, for
    :math:`t = \Delta / b`,

    .. math::

        \varepsilon(\alpha) = \frac{1}{\alpha-1}\log\Bigl[\frac{\alpha}{2\alpha-1}
            e^{(\alpha-1)t} + \frac{\alpha-1}{2\alpha-1} e^{-\alpha t}\Bigr]
        = t + \frac{1}{\alpha-1}\log\Bigl[1 + \frac{\alpha-1}{2\alpha-1}
            \bigl(e^{-(2\alpha-1)t} - 1\bigr)\Bigr]

    (Mironov 2017, Proposition 6; exact for one-dimensional outputs). The second
    form is the one evaluated: its ``log1p`` argument lies in (-1/2, 0], so it
    neither overflows for large α or t nor loses accuracy as α → 1. It increases
    to ε(∞) = t, the pure-DP guarantee, and tends to the KL divergence
    :math:`t + e^{-t} - 1` as α → 1.

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) α > 1.
    sensitivity : float, default 1.0
        ℓ1 sensitivity Δ > 0.
    scale : float
        Laplace scale b > 0.

    Returns
    -------
    float or ndarray
        ε(α), matching the shape of ``order``.

    Examples
    --------
    >>> round(rdp_laplace(2.0, scale=1.0), 12)
    0.619123629999
    >>> bool(abs(rdp_laplace(1e9, scale=1.0) - 1.0) < 1e-8)
    True
    """
    alpha, scalar = _check_orders(order)
    delta_ = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    b = check_real("scale", scale, low=0.0, low_open=True)
    t = delta_ / b
    am1 = alpha - 1.0
    inner = am1 / (2.0 * alpha - 1.0) * np.expm1(-(2.0 * alpha - 1.0) * t)
    out = t + np.log1p(inner) / am1
    return _as_output(out, scalar)


def rdp_randomized_response(order, *, epsilon: float, k: int = 2):
    r"""Rényi DP of k-ary randomized response.

    k-ary randomized response (k-RR) reports the true value
    :math:`x \in \{0,\dots,k-1\}` with probability :math:`p = e^\varepsilon/(e^\varepsilon+k-1)`
    and each of the other k - 1 values with probability :math:`q = 1/(e^\varepsilon+k-1)`.
    For two inputs :math:`x \ne x'` the output laws differ only on the cells x and x',
    where they are (p, q) and (q, p); the remaining k - 2 cells carry q under both. So

    .. math::

        D_\alpha(P_x \,\|\, P_{x'}) = \frac{1}{\alpha-1}\log\bigl(p^\alpha q^{1-\alpha}
            + q^\alpha p^{1-\alpha} + (k-2)\,q\bigr).

    The expression is the same for every ordered pair (all pairs are related by a
    relabelling of the outputs, and swapping x and x' swaps the first two terms),
    so it is the maximum over pairs, i.e. the RDP of k-RR under the "replace one
    value" neighbouring relation, and the divergence is symmetric. With
    :math:`p = e^\varepsilon q` and :math:`x = (\alpha-1)\varepsilon` it equals

    .. math::

        \frac{1}{\alpha-1}\log\Bigl(1 + \frac{(e^{x}-1)(1-e^{-x-\varepsilon})}
            {1+(k-1)e^{-\varepsilon}}\Bigr),

    which is evaluated in log space (no overflow for large α ε, no cancellation as
    α → 1). It increases to ε as α → ∞. For k = 2 this is the RDP of Warner's
    binary randomized response, one of the basic mechanisms tabulated by
    Mironov (2017, Table II).

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) α > 1.
    epsilon : float
        Local privacy parameter ε > 0 of the k-RR mechanism.
    k : int, default 2
        Alphabet size, an integer >= 2.

    Returns
    -------
    float or ndarray
        ε(α), matching the shape of ``order``.

    Examples
    --------
    >>> round(rdp_randomized_response(2.0, epsilon=1.0), 12)
    0.735325664056
    >>> round(rdp_randomized_response(1e6, epsilon=1.0, k=5), 4)
    1.0
    """
    alpha, scalar = _check_orders(order)
    eps = check_real("epsilon", epsilon, low=0.0, low_open=True)
    k_ = check_int("k", k, low=2)
    x = (alpha - 1.0) * eps
    log_ratio = _log_expm1(x) + np.log1p(-np.exp(-x - eps)) - math.log1p((k_ - 1) * math.exp(-eps))
    out = np.logaddexp(0.0, log_ratio) / (alpha - 1.0)
    return _as_output(out, scalar)


# ---------------------------------------------------------------------------
# composition and conversion
# ---------------------------------------------------------------------------


def compose_rdp(*rdps):
    r"""Sequential composition of RDP curves.

    If mechanisms :math:`M_1,\dots,M_J` (possibly chosen adaptively) satisfy
    :math:`(\alpha, \varepsilon_j(\alpha))`-RDP, their composition satisfies
    :math:`(\alpha, \sum_j \varepsilon_j(\alpha))`-RDP (Mironov 2017, Proposition 1).
    The curves must be evaluated on the same grid of orders.

    Parameters
    ----------
    *rdps : array_like
        One or more RDP curves of equal shape, entries in [0, +inf]
        (+inf means "no bound at this order").

    Returns
    -------
    float or ndarray
        The elementwise sum (a float when the curves are scalars).

    Examples
    --------
    >>> compose_rdp([0.5, 1.0], [0.25, 0.5], [0.25, 0.5])
    array([1., 2.])
    """
    if len(rdps) == 0:
        raise ValueError("compose_rdp needs at least one RDP curve (rdps must be non-empty)")
    curves = [_check_rdp_curve(f"rdps[{i}]", r) for i, r in enumerate(rdps)]
    shape = curves[0].shape
    for i, c in enumerate(curves[1:], start=1):
        if c.shape != shape:
            raise ValueError(
                f"rdps must all have the same shape (same order grid); rdps[0] has shape {shape}, "
                f"rdps[{i}] has shape {c.shape}"
            )
    total = np.sum(np.stack(curves), axis=0)
    return float(total) if total.ndim == 0 else total


def _check_curve_on_orders(orders, rdp) -> tuple[np.ndarray, np.ndarray]:
    a = check_array("orders", orders, ndim=1, low=1.0, low_open=True, min_size=1)
    r = _check_rdp_curve("rdp", rdp)
    if r.shape != a.shape:
        raise ValueError(f"rdp must have the same shape as orders {a.shape}; got {r.shape}")
    return a, r


def rdp_to_dp(orders, rdp, delta: float) -> tuple[float, float]:
    r"""Convert an RDP curve to an (ε, δ)-DP guarantee.

    A mechanism that is :math:`(\lambda, \varepsilon(\lambda))`-RDP for every
    order λ of the grid is (ε, δ)-DP for every δ ∈ (0, 1) with

    .. math::

        \varepsilon = \max\Bigl\{0,\ \min_\lambda\ \varepsilon(\lambda)
            + \frac{\log(1/(\lambda\delta)) + (\lambda-1)\log(1-1/\lambda)}{\lambda-1}\Bigr\}

    (Canonne, Kamath & Steinke 2020, Proposition 12 in arXiv v4; Balle et al.
    2020, arXiv:2001.05990 Eq. (20) of v1; Lemma 3, Eq. (8) of the book's first
    source paper). It improves Mironov's :math:`\varepsilon(\lambda) + \log(1/\delta)/(\lambda-1)`
    by :math:`\log(1-1/\lambda) - \log(\lambda)/(\lambda-1) < 0`.

    Relation to ``dp_accounting``: on inputs with every order > 1.01 and every
    RDP value :math:`\ge -\log(1-\delta^2)`, the result (ε and the order) equals
    ``dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon``. That function
    additionally (i) returns ε = 0 at any order whose RDP value is below
    :math:`-\log(1-\delta^2)` -- a different, valid argument: the KL divergence
    is at most that value, and a KL divergence κ bounds the total-variation
    distance, hence δ(0), by :math:`\sqrt{1-e^{-\kappa}}`; and (ii) gives up
    (ε = ∞) at orders in [1, 1.01], where this function still applies the
    formula above (valid for every λ > 1). It also accepts order 1, δ = 0 and
    negative RDP values, which are rejected here.

    Parameters
    ----------
    orders : array_like
        1-D grid of Rényi orders, each finite and > 1.
    rdp : array_like
        RDP values ε(λ) on ``orders``: entries >= 0, or +inf where the mechanism
        has no bound at that order (such orders are ignored).
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    epsilon : float
        The smallest ε given by the formula, at least 0; ``inf`` if every entry
        of ``rdp`` is infinite.
    best_order : float
        The first order attaining the minimum (``inf`` if every entry is infinite).

    Examples
    --------
    >>> eps, order = rdp_to_dp(DEFAULT_ORDERS, rdp_gaussian(DEFAULT_ORDERS, sigma=5.0), 1e-5)
    >>> round(eps, 6), order
    (0.794522, 22.0)
    """
    a, r = _check_curve_on_orders(orders, rdp)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    finite = np.isfinite(r)
    if not np.any(finite):
        return math.inf, math.inf
    eps = np.full(a.shape, np.inf)
    af = a[finite]
    eps[finite] = r[finite] + np.log1p(-1.0 / af) - (math.log(d) + np.log(af)) / (af - 1.0)
    i = int(np.argmin(eps))
    return max(float(eps[i]), 0.0), float(a[i])


def delta_for_epsilon(orders, rdp, epsilon: float) -> tuple[float, float]:
    r"""Smallest δ certified by an RDP curve for a target ε (inverse of :func:`rdp_to_dp`).

    Solving the conversion of :func:`rdp_to_dp` for δ at a fixed order gives

    .. math::

        \log\delta(\lambda) = (\lambda-1)\bigl(\varepsilon(\lambda) - \varepsilon
            + \log(1-1/\lambda)\bigr) - \log\lambda,

    and the returned δ is :math:`\min\{1, \min_\lambda \delta(\lambda)\}`, computed
    in log space (Canonne, Kamath & Steinke 2020, Proposition 12). For every
    order and δ ∈ (0, 1) the two maps are inverse to each other, so
    ``delta_for_epsilon(orders, rdp, rdp_to_dp(orders, rdp, d)[0])`` returns ``d``
    whenever that ε is positive. The same differences from ``dp_accounting``
    (``compute_delta``) as described in :func:`rdp_to_dp` apply.

    Parameters
    ----------
    orders : array_like
        1-D grid of Rényi orders > 1.
    rdp : array_like
        RDP values on ``orders``, entries in [0, +inf].
    epsilon : float
        Target ε >= 0.

    Returns
    -------
    delta : float
        The certified δ in [0, 1] (1 if every entry of ``rdp`` is infinite; it
        can be 0.0 when the true value is below the smallest positive double).
    best_order : float
        The first order attaining the minimum (``inf`` if every entry is infinite).

    Examples
    --------
    >>> curve = rdp_gaussian(DEFAULT_ORDERS, sigma=5.0)
    >>> eps, _ = rdp_to_dp(DEFAULT_ORDERS, curve, 1e-5)
    >>> d, order = delta_for_epsilon(DEFAULT_ORDERS, curve, eps)
    >>> f"{d:.6e}", order
    ('1.000000e-05', 22.0)
    """
    a, r = _check_curve_on_orders(orders, rdp)
    eps = check_real("epsilon", epsilon, low=0.0)
    finite = np.isfinite(r)
    if not np.any(finite):
        return 1.0, math.inf
    log_delta = np.full(a.shape, np.inf)
    af = a[finite]
    log_delta[finite] = (af - 1.0) * (r[finite] - eps + np.log1p(-1.0 / af)) - np.log(af)
    i = int(np.argmin(log_delta))
    return min(math.exp(float(log_delta[i])), 1.0), float(a[i])


# ---------------------------------------------------------------------------
# exact divergences between discrete distributions
# ---------------------------------------------------------------------------


def renyi_divergence(log_p, log_q, order):
    r"""Exact Rényi divergence between two discrete distributions.

    .. math::

        D_\alpha(P\,\|\,Q) = \frac{1}{\alpha-1}\log\sum_i p_i^\alpha q_i^{1-\alpha}
        = \frac{1}{\alpha-1}\,\mathrm{logsumexp}_i\bigl(\alpha\log p_i + (1-\alpha)\log q_i\bigr)

    for α > 1 (Rényi 1961; Mironov 2017, Definition 3). Outcomes with
    :math:`p_i = 0` contribute nothing (also when :math:`q_i = 0`); an outcome with
    :math:`p_i > 0 = q_i` makes the divergence +inf. The divergence is non-negative,
    and the result is floored at 0 so that rounding (of order 1e-16 when P ≈ Q)
    cannot produce a negative value.

    Parameters
    ----------
    log_p, log_q : array_like
        1-D arrays of equal length with the natural-log probabilities of P and Q
        on a common support; entries in [-inf, 0] (``-inf`` for probability 0),
        each vector summing to 1 up to 1e-6 in log space.
    order : float or array_like
        Rényi order(s) α > 1; the computation is vectorised over orders.

    Returns
    -------
    float or ndarray
        :math:`D_\alpha(P\|Q)` (possibly +inf), matching the shape of ``order``.

    Examples
    --------
    >>> lp, lq = np.log([0.75, 0.25]), np.log([0.25, 0.75])
    >>> round(renyi_divergence(lp, lq, 2.0), 12)
    0.847297860387
    >>> renyi_divergence(np.log([0.5, 0.5]), [0.0, -np.inf], 2.0)
    inf
    """
    lp, lq = _check_pair(log_p, log_q)
    alpha, scalar = _check_orders(order)
    a = alpha.reshape(-1, 1)
    support = np.isfinite(lp)
    with np.errstate(invalid="ignore"):
        terms = a * lp + (1.0 - a) * lq
    terms = np.where(support, terms, -np.inf)
    out = special.logsumexp(terms, axis=1) / (alpha.reshape(-1) - 1.0)
    # D_alpha >= 0 exactly; rounding can leave e.g. -5e-17 for P = Q, which would
    # then be rejected as an RDP value, so the result is floored at 0.
    out = np.maximum(out, 0.0).reshape(alpha.shape)
    return _as_output(out, scalar)


def hockey_stick_divergence(log_p, log_q, epsilon):
    r"""Exact hockey-stick divergence δ(ε) between two discrete distributions.

    .. math::

        \delta(\varepsilon) = \sum_i \max\{0,\ p_i - e^\varepsilon q_i\}
        = \sum_{i:\ \log p_i > \varepsilon + \log q_i} p_i\bigl(1 - e^{\varepsilon + \log q_i - \log p_i}\bigr),

    the smallest δ such that :math:`P(S) \le e^\varepsilon Q(S) + \delta` for every
    event S (Dwork & Roth 2014, Definition 2.4, written as a divergence). A
    mechanism is (ε, δ)-DP iff δ(ε) <= δ for every ordered pair of neighbouring
    output distributions. Each positive term is formed in log space as
    :math:`\log p_i + \log(-\mathrm{expm1}(\varepsilon+\log q_i-\log p_i))` and the
    terms are combined with ``logsumexp``, so a δ of 1e-300 keeps its relative
    accuracy (no subtraction of nearly equal probabilities happens).

    Parameters
    ----------
    log_p, log_q : array_like
        1-D log-probability vectors of P and Q on a common support (see
        :func:`renyi_divergence`).
    epsilon : float or array_like
        Finite real ε (vectorised).

    Returns
    -------
    float or ndarray
        δ(ε) in [0, 1], matching the shape of ``epsilon``.

    Examples
    --------
    >>> lp, lq = np.log([0.75, 0.25]), np.log([0.25, 0.75])
    >>> round(hockey_stick_divergence(lp, lq, 0.0), 12)
    0.5
    >>> hockey_stick_divergence(lp, lq, np.log(3.0))
    0.0
    """
    lp, lq = _check_pair(log_p, log_q)
    if np.ndim(epsilon) == 0:
        eps, scalar = np.asarray(check_real("epsilon", epsilon), dtype=float), True
    else:
        eps, scalar = check_array("epsilon", epsilon, min_size=1), False
    e = eps.reshape(-1, 1)
    with np.errstate(invalid="ignore"):
        z = e + lq - lp  # log(e^eps q / p); NaN where p = q = 0, handled by `positive`
        positive = np.isfinite(lp) & (z < 0)
        z = np.where(positive, z, -1.0)
        terms = np.where(positive, lp + _log1mexp(z), -np.inf)
    out = np.exp(special.logsumexp(terms, axis=1)).reshape(eps.shape)
    return _as_output(out, scalar)


# ---------------------------------------------------------------------------
# the exact Gaussian mechanism
# ---------------------------------------------------------------------------


def gaussian_delta(epsilon, *, sensitivity: float = 1.0, sigma: float):
    r"""Exact privacy profile δ(ε) of the Gaussian mechanism.

    The Gaussian mechanism with ℓ2 sensitivity Δ and noise :math:`\mathcal N(0,\sigma^2 I)`
    is (ε, δ)-DP if and only if δ >= δ(ε), where

    .. math::

        \delta(\varepsilon) = \Phi\Bigl(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
            - e^{\varepsilon}\,\Phi\Bigl(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)

    (Balle & Wang 2018, Theorem 8). It is the hockey-stick divergence between
    :math:`\mathcal N(0,\sigma^2)` and :math:`\mathcal N(\Delta,\sigma^2)`. Both terms
    are evaluated with ``scipy.special.log_ndtr`` and subtracted in log space
    (:math:`\log\delta = \log A + \log(1 - B/A)`), so values such as 1e-300 are
    returned with full relative accuracy instead of 0 or NaN. Values below the
    smallest positive double are returned as 0.0. In the opposite corner, noise far
    larger than the sensitivity, the two terms nearly cancel and the relative
    accuracy is about :math:`10^{-15}\,\sigma/\Delta` (1e-10 at σ/Δ = 1e5).

    Parameters
    ----------
    epsilon : float or array_like
        ε >= 0 (vectorised).
    sensitivity : float, default 1.0
        ℓ2 sensitivity Δ > 0.
    sigma : float
        Noise standard deviation σ > 0.

    Returns
    -------
    float or ndarray
        δ(ε), matching the shape of ``epsilon``.

    Examples
    --------
    >>> f"{gaussian_delta(1.0, sigma=4.0):.6e}"
    '2.924272e-06'
    >>> 0.0 < gaussian_delta(37.0, sigma=1.0) < 1e-290
    True
    """
    eps, scalar = _check_nonneg_real_or_array("epsilon", epsilon)
    delta_ = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    sigma_ = check_real("sigma", sigma, low=0.0, low_open=True)
    out = np.exp(_log_gaussian_delta(eps, delta_ / sigma_))
    return _as_output(out, scalar)


def gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    r"""Smallest noise σ for which the Gaussian mechanism is (ε, δ)-DP (analytic calibration).

    δ(ε) of :func:`gaussian_delta` is continuous and strictly decreasing in σ, from
    1 as σ → 0 to 0 as σ → ∞, so the smallest σ with δ(ε) <= δ is the root of
    :math:`\log\delta_\sigma(\varepsilon) = \log\delta`. The root is found with
    Brent's method on u = log σ (Balle & Wang 2018, Algorithm 1 solves the same
    equation by bisection in another parametrisation), and the result is then
    nudged up by at most a few ulps so that ``gaussian_delta(epsilon, sigma=result)``
    does not exceed ``delta``.

    Parameters
    ----------
    epsilon : float
        Target ε >= 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float, default 1.0
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        The calibrated σ (relative accuracy about 1e-14 while σ/Δ < 1e5; see
        :func:`gaussian_delta` for the cancellation beyond).

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1e-5), 6)
    3.730632
    """
    eps = check_real("epsilon", epsilon, low=0.0)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    sens = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    log_target = math.log(d)
    eps_arr = np.asarray(eps)

    def excess(u: float) -> float:
        return float(_log_gaussian_delta(eps_arr, sens / math.exp(u))) - log_target

    # bracket the root on the log scale: excess(lo) > 0 >= excess(hi)
    lo = hi = math.log(sens)
    while excess(lo) <= 0 and lo > -700.0:
        lo -= 1.0
    while excess(hi) > 0 and hi < 700.0:
        hi += 1.0
    if not (excess(lo) > 0 >= excess(hi)):
        raise ValueError(
            f"gaussian_sigma: no sigma in [exp(-700), exp(700)] * sensitivity attains delta={d!r} at "
            f"epsilon={eps!r}; epsilon and delta are too extreme for double precision"
        )
    u = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    for _ in range(64):
        if excess(u) <= 0:
            break
        u = float(np.nextafter(u, np.inf))
    return math.exp(u)


def classical_gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    r"""Classical calibration of the Gaussian mechanism.

    .. math:: \sigma = \frac{\Delta\sqrt{2\log(1.25/\delta)}}{\varepsilon}

    gives (ε, δ)-DP for ε ∈ (0, 1) (Dwork & Roth 2014, Theorem A.1). The proof
    needs ε < 1, and Balle & Wang (2018) show the formula is not a valid
    calibration for large ε, so other ε raise. :func:`gaussian_sigma` is never
    larger.

    Parameters
    ----------
    epsilon : float
        ε in (0, 1).
    delta : float
        δ in (0, 1).
    sensitivity : float, default 1.0
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        σ.

    Examples
    --------
    >>> round(classical_gaussian_sigma(0.5, 1e-5), 6)
    9.689611
    """
    eps = check_real("epsilon", epsilon, low=0.0, high=1.0, low_open=True, high_open=True)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    sens = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    return sens * math.sqrt(2.0 * math.log(1.25 / d)) / eps


# ---------------------------------------------------------------------------
# the clipped Poisson binomial mechanism (seed 000, Lemma 2)
# ---------------------------------------------------------------------------


def _check_theta(theta) -> float:
    return check_real("theta", theta, low=0.0, high=0.25, low_open=True)


def _lemma2_base(n: int, theta: float) -> tuple[int, float, float, float]:
    """(N = n'+1, q = 1/2+θ, a = (1+2θ)/(1-2θ), b = 1/a) for Lemma 2."""
    n_prime = n // 2  # = ceil((n - 1) / 2)
    a = (1.0 + 2.0 * theta) / (1.0 - 2.0 * theta)
    return n_prime + 1, 0.5 + theta, a, 1.0 / a


_FULL_SUM_SIZE = 4096  # below this many support points the whole binomial support is summed
_LOG_TAIL_MARGIN = 40.0  # window: tail bound below e^-40 (4e-18) times the second-order estimate
_TAIL_REL = 2.0**-53  # a posteriori: tail bound below this fraction of the window sum
_CHUNK = 32768  # points per chunk (temporaries stay in the L2 cache)


def _cpbm_tail_bounds(N: int, q: float, a: float, b: float, s: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    r"""Rigorous bounds on the two tails of :math:`\sum_k \mathrm{Bin}(k; N, q)\, g_s(u_k)`.

    Here :math:`1 + u_k = a - (a-b)k/N` (zero at k = Nq) and
    :math:`g_s(u) = (1+u)^s - 1 - s u \ge 0`. Returns ``(log_lower, log_upper)``, bounds
    on the logarithms of :math:`\sum_{k<lo}` and :math:`\sum_{k>hi}`, for integer-valued
    ``lo <= Nq <= hi`` (arrays broadcast with ``s``; ``-inf`` for an empty tail).

    * Polynomial side (lower tail with s < 0, upper tail with s > 0): there
      :math:`(1+u)^s \le 1`, so :math:`g_s(u) \le |s|\,|u| \le |s|\max|u|`, times the
      Chernoff bound :math:`\Pr[K \le lo] \le e^{-N\,\mathrm{KL}(lo/N\,\|\,q)}`
      (and the same for :math:`\Pr[K \ge hi]`).
    * Exponential side (lower tail with s > 0, upper tail with s < 0):
      :math:`g_s(u) \le (1+u)^s = e^{f(k)}`, :math:`f(k) = s\log(1+u_k)`. For s > 0, f is
      concave, so :math:`f(k) \le f(lo) + \beta(lo-k)` with :math:`\beta = -f'(lo)`; for
      s < 0, f is convex on [hi, N] and below its chord, :math:`f(k) \le f(hi) + c(k-hi)`.
      With :math:`e^{\gamma(lo-k)} \ge 1` on the tail, for every :math:`\gamma \ge \beta`,
      :math:`\sum_{k<lo} \le e^{f(lo)+\gamma\,lo}(1-q+qe^{-\gamma})^N`; the minimising
      :math:`\gamma^* = \log\frac{q(N-lo)}{(1-q)lo}` gives
      :math:`e^{f(lo) - N\,\mathrm{KL}(lo/N\|q)}` whenever :math:`\gamma^*\ge\beta`,
      otherwise :math:`\gamma = \beta` is used (mirror image for the upper tail).

    :math:`N\,\mathrm{KL}` is evaluated as ``_bd0(lo, Nq) + _bd0(N - lo, N(1-q))``
    (no cancellation).
    """
    s = np.asarray(s, dtype=float)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    Nf = float(N)
    mean = Nf * q
    slope = (a - b) / Nf
    log_lo = np.full(np.broadcast(s, lo).shape, -np.inf)
    log_hi = np.full(np.broadcast(s, hi).shape, -np.inf)
    s_lo, lo_b = np.broadcast_arrays(s, lo)
    s_hi, hi_b = np.broadcast_arrays(s, hi)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # lower tail, k < lo (non-empty for lo >= 1)
        sel = lo_b >= 1.0
        if np.any(sel):
            ss, ll = s_lo[sel], lo_b[sel]
            nkl = _bd0(ll, mean) + _bd0(Nf - ll, Nf - mean)
            one_u = a - slope * ll
            f = ss * np.log(one_u)
            beta = ss * slope / one_u
            gstar = np.log(q * (Nf - ll) / ((1.0 - q) * ll))
            expo = np.where(
                gstar >= beta,
                f - nkl,
                f + beta * ll + Nf * np.log1p(q * np.expm1(-beta)),
            )
            poly = np.log(np.abs(ss) * (a - 1.0)) - nkl
            log_lo[sel] = np.where(ss > 0, expo, poly)
        # upper tail, k > hi (non-empty for hi <= N - 1)
        sel = hi_b <= Nf - 1.0
        if np.any(sel):
            ss, hh = s_hi[sel], hi_b[sel]
            nkl = _bd0(hh, mean) + _bd0(Nf - hh, Nf - mean)
            one_u = a - slope * hh
            f = ss * np.log(one_u)
            chord = (ss * math.log(b) - f) / (Nf - hh)
            gstar = np.log(hh * (1.0 - q) / ((Nf - hh) * q))
            expo = np.where(
                gstar >= chord,
                f - nkl,
                f - chord * hh + Nf * np.log1p(q * np.expm1(chord)),
            )
            poly = np.log(np.abs(ss) * (1.0 - b)) - nkl
            log_hi[sel] = np.where(ss < 0, expo, poly)
    return log_lo, log_hi


def _cpbm_window(N: int, q: float, a: float, b: float, s: np.ndarray, log_target: np.ndarray):
    """Per exponent s, a narrow integer window [lo, hi] around Nq whose two tail bounds
    (``_cpbm_tail_bounds``) are below ``log_target``.

    Both half-widths are found by bisection (to 1 % or one point) from a bracket sized by
    the Gaussian approximation; the caller adds the bounds at the returned window, so the
    search affects only the speed, never the validity of the result.
    """
    s = np.asarray(s, dtype=float)
    log_target = np.broadcast_to(np.asarray(log_target, dtype=float), s.shape)
    Nf = float(N)
    mean = Nf * q
    sd = math.sqrt(Nf * q * (1.0 - q))
    shift = np.abs(s) * (a - b) / Nf * sd * sd * max(a, 1.0 / b)  # tilt of the exponential side (a bound)
    prefactor = np.log1p(np.abs(s) * (a - 1.0))
    w0 = shift + sd * np.sqrt(2.0 * np.maximum(prefactor - log_target, 1.0)) * 1.3 + 10.0

    def sides(w_lo, w_hi):
        lo = np.maximum(np.floor(mean - w_lo), 0.0)
        hi = np.minimum(np.ceil(mean + w_hi), Nf)
        lt, ut = _cpbm_tail_bounds(N, q, a, b, s, lo, hi)
        return lo, hi, lt <= log_target, ut <= log_target

    # brackets: (bad, good) per side; a failing guess falls back to the whole support
    _, _, ok_l, ok_u = sides(w0, w0)
    good_l = np.where(ok_l, w0, mean + 1.0)
    good_u = np.where(ok_u, w0, Nf - mean + 1.0)
    bad_l = np.zeros(s.shape)
    bad_u = np.zeros(s.shape)
    for _ in range(64):
        open_l = good_l - bad_l > np.maximum(1.0, 0.01 * good_l)
        open_u = good_u - bad_u > np.maximum(1.0, 0.01 * good_u)
        if not (open_l.any() or open_u.any()):
            break
        mid_l = np.where(open_l, 0.5 * (good_l + bad_l), good_l)
        mid_u = np.where(open_u, 0.5 * (good_u + bad_u), good_u)
        _, _, ok_l, ok_u = sides(mid_l, mid_u)
        good_l, bad_l = np.where(ok_l, mid_l, good_l), np.where(ok_l, bad_l, mid_l)
        good_u, bad_u = np.where(ok_u, mid_u, good_u), np.where(ok_u, bad_u, mid_u)
    lo, hi, _, _ = sides(good_l, good_u)
    return lo.astype(np.int64), hi.astype(np.int64)


def _binom_logpmf_central(k: np.ndarray, N: int, q: float) -> np.ndarray:
    r"""log Bin(k; N, q) near the mean of a large binomial (fast path of ``_binom_logpmf``).

    Loader's decomposition with x = k - Nq, A = Nq, B = N(1-q):
    :math:`\log\mathrm{Bin}(k) = \delta(N) - \frac{N}{12k(N-k)}
    - \sum_{j=2}^{J}\frac{x^j}{j(j-1)}\bigl[(-1)^jA^{1-j} + B^{1-j}\bigr]
    + \tfrac12\log\frac{N}{2\pi k(N-k)}`, where the sum is the two deviance terms
    bd0(k, A) + bd0(N-k, B) as one polynomial. Valid (absolute error below 1e-18 plus
    rounding) when min(k, N-k) > 1e6 (the dropped Stirling terms are below 3e-21)
    and r = max|x| / min(A, B) <= 0.05; J is chosen so that the series remainder
    :math:`2\min(A,B)\,r^{J+1}/(1-r)` is below 1e-18.
    """
    Nf = float(N)
    A, B = Nf * q, Nf * (1.0 - q)
    x = np.subtract(k, A)
    r = float(max(x.max(), -x.min())) / min(A, B) if x.size else 0.0
    J = 2
    while J < 40 and 2.0 * min(A, B) * r ** (J + 1) / (1.0 - r) > 1e-18:
        J += 1
    coef = [((-1.0) ** j * A ** (1 - j) + B ** (1 - j)) / (j * (j - 1.0)) for j in range(2, J + 1)]
    poly = np.full(x.shape, coef[-1])
    for c in coef[-2::-1]:
        poly *= x
        poly += c
    poly *= x
    poly *= x
    prod = np.subtract(Nf, k)
    prod *= k
    out = np.divide(Nf / (2.0 * math.pi), prod)
    np.log(out, out=out)
    out *= 0.5
    np.divide(Nf / 12.0, prod, out=prod)
    out -= prod
    out -= poly
    out += _stirlerr(np.array([Nf]))[0]
    return out


def _log_excess_moment(N: int, q: float, a: float, b: float, s: np.ndarray) -> np.ndarray:
    r"""log(E[(1+u_K)^s] - 1) for K ~ Bin(N, q), u_k = a - (a-b)k/N - 1, per exponent s.

    E[u_K] = 0, so E[(1+u)^s] - 1 = E[g_s(u)] with g_s(u) = (1+u)^s - 1 - s u >= 0 for
    s >= 1 or s <= 0 (convexity). Summing the non-negative g_s avoids the cancellation
    that loses a divergence of 1e-9 when 1 + 1e-9 is formed.

    For N + 1 > 4096 only a window lo <= k <= hi is summed and the two tails are
    replaced by the rigorous Chernoff-type bounds of ``_cpbm_tail_bounds``, which are
    *added*: the result is an upper bound on the exact value (up to rounding). The
    window is sized so that the bounds are below e^-40 times the second-order estimate
    s(s-1)/2 Var(u); it is then checked that the added bound is below 2^-53 of the
    window's sum, i.e. the truncation moves the result by less than a unit in the last
    place (otherwise the window is re-sized from the window's sum and the sum redone).
    The window is processed in cache-sized chunks.
    """
    s = np.asarray(s, dtype=float).reshape(-1)
    if N + 1 <= _FULL_SUM_SIZE:
        lo_s = np.zeros(s.shape, dtype=np.int64)
        hi_s = np.full(s.shape, N, dtype=np.int64)
    else:
        var_u = (a - b) ** 2 * q * (1.0 - q) / N
        log_guess = np.log(np.maximum(np.abs(s * (s - 1.0)) / 2.0 * var_u, 1e-300))
        lo_s, hi_s = _cpbm_window(N, q, a, b, s, log_guess - _LOG_TAIL_MARGIN)
    out = np.empty(s.shape)
    todo = np.arange(s.size)
    slope = (a - b) / N
    for _attempt in range(4):
        lo_all, hi_all = int(lo_s[todo].min()), int(hi_s[todo].max())
        centre = N * q
        central = min(lo_all, N - hi_all) > 1e6 and max(centre - lo_all, hi_all - centre) <= 0.05 * min(
            centre, N - centre
        )
        logpmf = (lambda kk: _binom_logpmf_central(kk, N, q)) if central else (lambda kk: _binom_logpmf(kk, N, q))
        k_ref = float(min(max(round(centre), lo_all), hi_all))
        top = float(logpmf(np.array([k_ref]))[0])
        ends = np.array([lo_s[todo], hi_s[todo]], dtype=float)  # (2, len(todo))
        log_pmf_ends = logpmf(ends.ravel()).reshape(ends.shape)
        t_ends = s[todo] * np.log1p((a - 1.0) - slope * ends)
        # linear-scale summation where nothing can over- or underflow (t and log-pmf are
        # monotone / unimodal in k, so their extremes sit at the window's ends)
        linear = (np.abs(t_ends).max(axis=0) <= 100.0) & (log_pmf_ends.min(axis=0) - top > -600.0)
        sums = np.zeros(todo.size)
        lin_idx = np.flatnonzero(linear)
        if lin_idx.size:
            lo_l, hi_l = lo_s[todo[lin_idx]], hi_s[todo[lin_idx]]
            s_l = s[todo[lin_idx]]
            start, stop = int(lo_l.min()), int(hi_l.max()) + 1
            buf = np.empty(_CHUNK)
            buf2 = np.empty(_CHUNK)
            for c0 in range(start, stop, _CHUNK):
                c1 = min(c0 + _CHUNK, stop)
                k = np.arange(c0, c1, dtype=float)
                w = logpmf(k)
                w -= top
                np.exp(w, out=w)
                u = k  # reuse: u = a - 1 - slope k
                u *= -slope
                u += a - 1.0
                l1pu = np.log1p(u)
                for j in np.flatnonzero((lo_l < c1) & (hi_l >= c0)):
                    i0, i1 = max(int(lo_l[j]), c0) - c0, min(int(hi_l[j]) + 1, c1) - c0
                    g, h = buf[: i1 - i0], buf2[: i1 - i0]
                    np.multiply(l1pu[i0:i1], s_l[j], out=g)
                    np.expm1(g, out=g)
                    np.multiply(u[i0:i1], s_l[j], out=h)
                    g -= h
                    np.maximum(g, 0.0, out=g)
                    g *= w[i0:i1]
                    sums[lin_idx[j]] += float(g.sum())  # pairwise within the chunk
        totals = np.full(todo.size, -np.inf)
        with np.errstate(divide="ignore"):
            totals[lin_idx] = top + np.log(sums[lin_idx])
        for j in np.flatnonzero(~linear):
            i = todo[j]
            si = s[i]
            k = np.arange(lo_s[i], hi_s[i] + 1, dtype=float)
            u = (a - 1.0) - slope * k
            t = si * np.log1p(u)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # g = expm1(t) - s u; for t > 30 write it as e^t (1 - (1 + s u) e^{-t})
                big = t > 30.0
                g_small = np.expm1(np.where(big, 0.0, t)) - si * u
                log_g = np.where(
                    big,
                    t + np.log1p(-(1.0 + si * u) * np.exp(-np.where(big, t, 0.0))),
                    np.log(np.maximum(g_small, 0.0)),
                )
            totals[j] = _logsumexp(logpmf(k) + log_g)
        log_tail_lo, log_tail_hi = _cpbm_tail_bounds(N, q, a, b, s[todo], lo_s[todo], hi_s[todo])
        log_tail = np.logaddexp(log_tail_lo, log_tail_hi)
        out[todo] = np.logaddexp(totals, log_tail)
        # a posteriori: is the added tail bound below 2^-53 of the window's sum?
        bad = np.isfinite(totals) & (log_tail > totals + math.log(_TAIL_REL))
        retry = []
        for j in np.flatnonzero(bad):
            i = todo[j]
            new_lo, new_hi = _cpbm_window(N, q, a, b, s[i : i + 1], np.array([totals[j] + math.log(_TAIL_REL) - 2.0]))
            if new_lo[0] < lo_s[i] or new_hi[0] > hi_s[i]:
                lo_s[i], hi_s[i] = min(new_lo[0], lo_s[i]), max(new_hi[0], hi_s[i])
                retry.append(i)
        if not retry:
            break
        todo = np.array(retry)
    # every returned value is a window's sum plus a rigorous bound on the rest
    return out


def _stirlerr(x: np.ndarray) -> np.ndarray:
    """log(x!) - [(x + 1/2) log x - x + log(2π)/2] for x >= 1 (series for x >= 15)."""
    x = np.asarray(x, dtype=float)

    def series(v):
        inv = np.divide(1.0, v)
        if v.size and v.min() > 1e6:  # the dropped terms are below 1/(360 v^3) < 3e-21
            inv *= 1.0 / 12.0
            return inv
        inv2 = inv * inv
        acc = inv2 * (1.0 / 1680.0)
        np.subtract(1.0 / 1260.0, acc, out=acc)
        acc *= inv2
        np.subtract(1.0 / 360.0, acc, out=acc)
        acc *= inv2
        np.subtract(1.0 / 12.0, acc, out=acc)
        acc *= inv
        return acc

    if x.size and x.min() >= 15.0:
        return series(x)
    out = np.empty(x.shape)
    small = x < 15.0
    xs = x[small]
    out[small] = special.gammaln(xs + 1.0) - (xs + 0.5) * np.log(xs) + xs - 0.5 * math.log(2.0 * math.pi)
    out[~small] = series(x[~small])
    return out


def _bd0(x: np.ndarray, mean: float) -> np.ndarray:
    """x log(x/mean) + mean - x, accurately also for x close to mean (Loader 2000)."""
    t = np.subtract(x, mean)
    t /= mean

    def series(ts):
        # phi(t) = (1+t) log1p(t) - t = t^2 sum_j (-t)^j / ((j+1)(j+2)), |t| < 0.05;
        # the dropped terms are below |t|^terms < e^-37 relative (Horner, in place)
        tmax = float(max(ts.max(), -ts.min())) if ts.size else 0.0
        terms = 2 if tmax == 0.0 else min(16, max(2, int(math.ceil(-37.0 / math.log(tmax))) + 1))
        acc = np.full(ts.shape, 1.0 / (terms * (terms + 1.0)))
        for j in range(terms - 2, -1, -1):
            acc *= ts
            np.subtract(1.0 / ((j + 1.0) * (j + 2.0)), acc, out=acc)
        acc *= ts
        acc *= ts
        acc *= mean
        return acc

    if t.size and max(t.max(), -t.min()) < 0.05:
        return series(t)
    out = np.empty(t.shape)
    small = np.abs(t) < 0.05
    out[small] = series(t[small])
    tl = t[~small]
    out[~small] = mean * ((1.0 + tl) * np.log1p(tl) - tl)
    return out


def _logsumexp(x: np.ndarray) -> float:
    """Fast 1-D logsumexp (-inf for an all -inf input)."""
    mx = float(np.max(x))
    if not math.isfinite(mx):
        return mx
    return mx + math.log(float(np.sum(np.exp(x - mx))))


def _binom_logpmf(k: np.ndarray, N: int, p: float) -> np.ndarray:
    """log Bin(k; N, p) by Loader's saddle-point decomposition.

    Absolute error about 1e-16 |k - Np| (1e-10 at N = 1e9 near the mean), where the
    naive gammaln difference, and scipy's binom.logpmf, lose 1e-6 at N = 1e9.
    """
    k = np.asarray(k, dtype=float)
    out = np.empty(k.shape)
    if k.size and k.min() > 0 and k.max() < N:
        mid = slice(None)
    else:
        lo = k == 0
        hi = k == N
        out[lo] = N * math.log1p(-p)
        out[hi] = N * math.log(p)
        mid = ~(lo | hi)
    km = k[mid]
    if km.size == 0:
        return out
    rest = np.subtract(float(N), km)
    # in place: temporaries of the window's size dominate the cost at N = 1e9
    acc = km * rest
    np.divide(N / (2.0 * math.pi), acc, out=acc)
    np.log(acc, out=acc)
    acc *= 0.5
    acc += _stirlerr(np.array([float(N)]))[0]
    acc -= _stirlerr(km)
    acc -= _stirlerr(rest)
    acc -= _bd0(km, N * p)
    acc -= _bd0(rest, N * (1.0 - p))
    if isinstance(mid, slice):
        return acc
    out[mid] = acc
    return out


def cpbm_rdp(order, *, n: int, theta: float, m: int, dim: int):
    r"""Rényi DP of the secure sum of ``n`` users' clipped Poisson binomial (cPBM) outputs.

    Each user clips her vector to ℓ2 norm C, maps every coordinate to
    :math:`p = \theta y/C + 1/2 \in [\tfrac12-\theta, \tfrac12+\theta]` and sends
    :math:`\mathrm{Binom}(m, p)` per coordinate; the server sees the coordinate-wise sums.
    Under replace-one neighbours (n fixed) the order-λ RDP is at most

    .. math::

        \varepsilon(\lambda) = \frac{m\,\mathrm{dim}}{\lambda-1}\log\max(\Pi_1, \Pi_2),\qquad
        \Pi_1 = \mathbb E\bigl[(1+u_K)^{\lambda}\bigr],\quad
        \Pi_2 = \mathbb E\bigl[(1+u_K)^{1-\lambda}\bigr],

    with :math:`K \sim \mathrm{Bin}(n'+1, \tfrac12+\theta)`, :math:`n' = \lceil (n-1)/2\rceil`,
    :math:`a = \frac{1+2\theta}{1-2\theta}` and
    :math:`1+u_k = a\frac{n'+1-k}{n'+1} + \frac1a\frac{k}{n'+1}` (:math:`= e^{\xi_k}` of the
    paper). :math:`\Pi_1` is :math:`e^{(\lambda-1)D_\lambda(P\|Q)}` and :math:`\Pi_2` is
    :math:`e^{(\lambda-1)D_\lambda(Q\|P)}` for
    :math:`P = \mathrm{Ber}(\tfrac12-\theta) + \mathrm{Bin}(n', \tfrac12+\theta)`,
    :math:`Q = \mathrm{Bin}(n'+1, \tfrac12+\theta)`; this is seed 000, Lemma 2 in the form
    of its Appendix C.2 (whose :math:`\Pi_2`, after the substitution
    :math:`k \to n'+1-k`, is this one), with two corrections verified in the book's
    chapter on the cPBM: ``dim`` must count the coordinates that are actually
    privatised (the Kashin dimension D, not the data dimension d), and the main
    text's :math:`\mu_m` and :math:`\Pi_2` are misprinted.

    Evaluation: :math:`\Pi - 1 = \mathbb E[(1+u)^s - 1 - s u]` (because
    :math:`\mathbb E u_K = 0`) is a sum of non-negative terms, so divergences of 1e-9
    keep their relative accuracy at n = 1e9. For n'+2 > 4096 only a window
    :math:`lo \le k \le hi` around the mean is summed (about ±11 standard
    deviations); each tail is replaced by a rigorous Chernoff bound
    (exponential tilting of the binomial, with a tangent or chord bound on
    :math:`(1+u_k)^s`), which is *added*, and the window is widened until the added
    bound is below :math:`2^{-53}` of the window's sum. Hence the truncation error
    satisfies :math:`0 \le \hat\Pi - \Pi \le 2^{-53}(\Pi - 1)`: the result is never
    below the exact value (floating-point rounding aside: relative error about
    1e-13, at most 2e-11 for θ = 0.001, against 50-digit references) and costs
    about 10-20 ms per order at n = 1e9.

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) λ > 1 (vectorised).
    n : int
        Number of users, n >= 1.
    theta : float
        cPBM parameter θ in (0, 1/4].
    m : int
        Binomial trials per coordinate, m >= 1.
    dim : int
        Number of privatised coordinates (D for the cPBM of Kashin coefficients), >= 1.

    Returns
    -------
    float or ndarray
        ε(λ), matching the shape of ``order``.

    Examples
    --------
    >>> round(cpbm_rdp(2.0, n=1, theta=0.25, m=1, dim=1), 6)   # randomized response, p = 3/4
    0.847298
    >>> 0 < cpbm_rdp(2.0, n=10**9, theta=0.2, m=1, dim=1) < 1e-8
    True
    """
    alpha, scalar = _check_orders(order)
    n_ = check_int("n", n, low=1)
    th = _check_theta(theta)
    m_ = check_int("m", m, low=1)
    dim_ = check_int("dim", dim, low=1)
    N, q, a, b = _lemma2_base(n_, th)
    lam = alpha.reshape(-1)
    s = np.concatenate([lam, 1.0 - lam])
    log_excess = _log_excess_moment(N, q, a, b, s)
    log_pi = np.logaddexp(0.0, log_excess)  # log(1 + (Pi - 1))
    k = lam.size
    out = m_ * dim_ * np.maximum(log_pi[:k], log_pi[k:]) / (lam - 1.0)
    return _as_output(out.reshape(alpha.shape), scalar)


def cpbm_lemma2_paper_forms(order, *, n: int, theta: float, form: str):
    r"""log Π1 and log Π2 of seed 000's Lemma 2 exactly as printed (for checking the paper).

    ``form="main"`` transcribes Section 3.2:
    :math:`\Pi_2 = \sum_{m=0}^{n'+1}\mathrm{Bin}(m, n', \tfrac12-\theta)
    \bigl(\frac{m}{n'-m+1}\frac{1+2\theta}{1-2\theta} + \frac{1-2\theta}{1+2\theta}\bigr)e^{-\lambda\mu_m}`
    with :math:`\mu_m = \log(\frac{1+2\theta}{1-2\theta}\frac{n'+1-m}{n'+1})`;
    ``form="appendix"`` transcribes Appendix C.2, whose :math:`\Pi_2` carries an extra
    factor :math:`(\tfrac12+\theta)` and :math:`\mu_m = \log(\frac{1+2\theta}{1-2\theta}
    \frac{m}{n'+1} + \frac{1-2\theta}{1+2\theta}\frac{n'+1-m}{n'+1})`. Both share
    :math:`\Pi_1`. The term m = n'+1 of :math:`\Pi_2` is a 0·∞ product in the printed
    form; it is evaluated as its limit
    :math:`\bigl(\tfrac12-\theta\bigr)^{n'} e^{-\lambda\mu_{n'+1}}` times the printed
    prefactor (1 for the main text, 1/2+θ for the appendix); in the main text
    :math:`\mu_{n'+1} = \log 0`, so its :math:`\Pi_2` is infinite.
    Direct summation: meant for small n (n' <= 10^5).

    Returns
    -------
    (log_pi1, log_pi2) : tuple of float or ndarray
        Natural logarithms, matching the shape of ``order`` (``inf`` where the printed
        sum is infinite).

    Examples
    --------
    >>> l1, l2 = cpbm_lemma2_paper_forms(2.0, n=5, theta=0.2, form="appendix")
    >>> bool(abs(max(l1, l2) - cpbm_rdp(2.0, n=5, theta=0.2, m=1, dim=1)) < 1e-12)
    True
    """
    alpha, scalar = _check_orders(order)
    n_ = check_int("n", n, low=1)
    th = _check_theta(theta)
    if form not in ("main", "appendix"):
        raise ValueError(f"form must be one of ['appendix', 'main']; got {form!r}")
    N, q, a, b = _lemma2_base(n_, th)
    n_prime = N - 1
    if n_prime > 100_000:
        raise ValueError(f"n must be at most 200001 for direct summation; got {n_}")
    k = np.arange(0, N + 1, dtype=float)
    lam = alpha.reshape(-1, 1)
    xi = np.log(a * (N - k) / N + b * k / N)
    log_pi1 = special.logsumexp(_binom_logpmf(k, N, q) + lam * xi, axis=1)
    with np.errstate(divide="ignore"):
        if form == "main":
            mu = np.log(a * (N - k) / N)  # -inf at k = N
        else:
            mu = np.log(a * k / N + b * (N - k) / N)
    # Bin(k, n', 1/2 - theta) * (k/(n'-k+1) * a + b), with the k = n'+1 limit
    r = 0.5 - th
    kk = k[:-1]
    log_bin = _binom_logpmf(kk, n_prime, r)
    front = np.empty(N + 1)
    front[:-1] = log_bin + np.log(kk / (n_prime - kk + 1.0) * a + b)
    front[-1] = n_prime * math.log(r)  # lim Bin(k, n', r) (k a/(n'-k+1) + b) at k = n'+1
    if form == "appendix":
        front = front + math.log(0.5 + th)
    with np.errstate(invalid="ignore"):
        terms = front - lam * mu
    terms = np.where(np.isnan(terms) | (terms == np.inf), np.inf, terms)
    log_pi2 = special.logsumexp(terms, axis=1)
    return _as_output(log_pi1.reshape(alpha.shape), scalar), _as_output(log_pi2.reshape(alpha.shape), scalar)


def poisson_binomial_logpmf(probs, *, m: int = 1) -> np.ndarray:
    r"""Log-pmf of :math:`S = \sum_j \mathrm{Binom}(m, p_j)` on :math:`\{0, \dots, m\,J\}`.

    Computed by successive convolution in log space (J·m convolution steps of
    length at most mJ + 1): exact up to rounding, for small instances (brute-force
    privacy audits).

    Parameters
    ----------
    probs : array_like
        1-D array of the J >= 0 success probabilities, each in [0, 1].
    m : int, default 1
        Trials per user.

    Examples
    --------
    >>> np.exp(poisson_binomial_logpmf([0.5, 0.5])).round(3).tolist()
    [0.25, 0.5, 0.25]
    """
    p = check_array("probs", probs, ndim=1, low=0.0, high=1.0)
    m_ = check_int("m", m, low=1)
    out = np.zeros(1)
    with np.errstate(divide="ignore"):
        for pj in p:
            lp, lq = math.log(pj) if pj > 0 else -np.inf, math.log1p(-pj) if pj < 1 else -np.inf
            for _ in range(m_):
                new = np.full(out.size + 1, -np.inf)
                new[:-1] = out + lq
                new[1:] = np.logaddexp(new[1:], out + lp)
                out = new
    return out


def cpbm_rdp_exact(order, *, n: int, theta: float, m: int = 1, grid: int = 2):
    r"""Brute-force worst-case Rényi divergence of one cPBM coordinate's secure sum (small n).

    Maximises, over ordered replace-one neighbours, the exact divergence
    :math:`D_\lambda(S + Z \,\|\, S + Z')` where the changed user sends
    :math:`Z \sim \mathrm{Binom}(m, p)`, :math:`Z' \sim \mathrm{Binom}(m, p')`,
    :math:`p, p' \in \{\tfrac12-\theta, \tfrac12+\theta\}`, and the other n - 1 users'
    probabilities range over all multisets of ``grid`` equally spaced points of
    :math:`[\tfrac12-\theta, \tfrac12+\theta]`. For m = 1 the two endpoints (``grid=2``)
    give the exact supremum over *all* configurations: the moment
    :math:`\sum P^\lambda Q^{1-\lambda}` is jointly convex in (P, Q), and P, Q are affine
    in each user's probability, so the maximum sits at a vertex of the box; by
    symmetry only the number j of others at the upper endpoint matters. For m > 1
    the result is a lower bound on the supremum (a grid search).

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) λ > 1.
    n : int
        Number of users, 1 <= n <= 60 (m (n) + 1 support points are enumerated).
    theta : float
        θ in (0, 1/4].
    m : int, default 1
        Trials per user, 1 <= m <= 16.
    grid : int, default 2
        Number of grid points for the other users' probabilities (>= 2).

    Returns
    -------
    float or ndarray
        The maximal divergence, matching ``order``.

    Examples
    --------
    >>> exact = cpbm_rdp_exact(2.0, n=5, theta=0.2)
    >>> bool(exact <= cpbm_rdp(2.0, n=5, theta=0.2, m=1, dim=1))
    True
    """
    import itertools

    alpha, scalar = _check_orders(order)
    n_ = check_int("n", n, low=1, high=60)
    th = _check_theta(theta)
    m_ = check_int("m", m, low=1, high=16)
    g = check_int("grid", grid, low=2, high=50)
    points = np.linspace(0.5 - th, 0.5 + th, g)
    ends = (0.5 - th, 0.5 + th)
    best = np.zeros(alpha.reshape(-1).shape)
    k = np.arange(m_ + 1, dtype=float)
    user = {p: _binom_logpmf(k, m_, p) for p in ends}
    for others in itertools.combinations_with_replacement(points, n_ - 1):
        base = poisson_binomial_logpmf(np.array(others), m=m_)
        dists = {}
        for p in ends:
            conv = np.full(base.size + m_, -np.inf)
            for z in range(m_ + 1):
                conv[z : z + base.size] = np.logaddexp(conv[z : z + base.size], base + user[p][z])
            dists[p] = conv - special.logsumexp(conv)
        for p, pp in ((ends[0], ends[1]), (ends[1], ends[0])):
            best = np.maximum(best, np.atleast_1d(renyi_divergence(dists[p], dists[pp], alpha.reshape(-1))))
    return _as_output(best.reshape(alpha.shape), scalar)


def discrete_laplace_epsilon(scale: float, sensitivity: int = 1) -> float:
    r"""Pure DP of adding discrete Laplace noise of scale t to an integer query: ε = Δ₁/t.

    With :math:`\Pr[X=k]\propto e^{-|k|/t}` on the integers and a query whose value moves
    by at most Δ₁ (an integer, in ℓ1 over all coordinates) between neighbours, every
    output's probability ratio is :math:`e^{(|k-f'|-|k-f|)/t} \le e^{\Delta_1/t}`
    (Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020). Unlike the
    continuous mechanism drawn in floating point, the discrete one has no support gap.

    Examples
    --------
    >>> discrete_laplace_epsilon(2.0, 3)
    1.5
    """
    t = check_real("scale", scale, low=0.0, low_open=True)
    delta1 = check_int("sensitivity", sensitivity, low=1)
    return delta1 / t


def discrete_gaussian_rho(sigma: float, sensitivity: float = 1.0) -> float:
    r"""zCDP of adding discrete Gaussian noise of scale σ to an integer query: ρ = Δ₂²/(2σ²).

    Canonne, Kamath & Steinke (2020, Theorem 4): for integer-valued queries with ℓ2
    sensitivity Δ₂, the discrete Gaussian mechanism is ρ-zCDP with this ρ, i.e. its
    Rényi divergence of order α is at most αρ (:func:`rdp_zcdp`) — the same curve as the
    continuous Gaussian.

    Examples
    --------
    >>> discrete_gaussian_rho(3.0, 1.0)
    0.05555555555555555
    """
    s = check_real("sigma", sigma, low=0.0, low_open=True)
    d2 = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    return d2 * d2 / (2 * s * s)


def rdp_zcdp(orders, rho: float) -> np.ndarray:
    r"""RDP curve of a ρ-zCDP mechanism: ε(α) = αρ for every order α > 1 (Bun & Steinke 2016).

    Examples
    --------
    >>> rdp_zcdp([2.0, 10.0], 0.05).tolist()
    [0.1, 0.5]
    """
    r = check_real("rho", rho, low=0.0)
    a = check_array("orders", orders, low=1.0, low_open=True)
    return a * r
