"""Rényi-DP curves of the textbook mechanisms, their composition, and the conversion to (ε, δ)-DP.

References: Mironov (2017); Canonne, Kamath & Steinke (2020); Balle et al. (2020).
"""

from __future__ import annotations

import math

import numpy as np

from .._numerics import log1mexp, log_expm1
from .._validation import EPSILON_MAX, SCALE_MAX, check_array, check_int, check_real
from ._checks import _ORDER_REASON, ORDER_MAX, _as_output, _check_curve_on_orders, _check_orders, _check_rdp_curve

__all__ = [
    "DEFAULT_ORDERS",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_randomized_response",
    "rdp_zcdp",
    "compose_rdp",
    "rdp_to_dp",
    "delta_for_epsilon",
]


def _check_finite_result(func: str, value, ratio: str) -> None:
    """Refuse a result that overflows (a ratio of parameters too large for double precision)."""
    if not np.all(np.isfinite(value)):
        raise ValueError(f"{func}: {ratio} is too large: the result overflows double precision (above 1.8e308)")


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
    with np.errstate(over="ignore"):
        out = alpha * np.float64(delta_ / sigma_) ** 2 / 2.0
    _check_finite_result("rdp_gaussian", out, "sensitivity / sigma")
    return _as_output(out, scalar)


def rdp_laplace(order, *, sensitivity: float = 1.0, scale: float):
    r"""Rényi DP of the Laplace mechanism.

    Adding Laplace noise of scale :math:`b` (density :math:`e^{-|x|/b}/(2b)`) to a
    query with ℓ1 sensitivity :math:`\Delta` satisfies RDP of order α with, for
    :math:`t = \Delta / b`,

    .. math::

        \varepsilon(\alpha) &= \frac{1}{\alpha-1}\log\Bigl[\frac{\alpha}{2\alpha-1}
            e^{(\alpha-1)t} + \frac{\alpha-1}{2\alpha-1} e^{-\alpha t}\Bigr] \\
        &= t + \frac{1}{\alpha-1}\log\Bigl[1 + \frac{\alpha-1}{2\alpha-1}
            \bigl(e^{-(2\alpha-1)t} - 1\bigr)\Bigr]

    (Mironov 2017, Proposition 6; exact for one-dimensional outputs). The second
    form is the one evaluated: its ``log1p`` argument lies in (-1/2, 0], so it
    neither overflows for large α or t nor loses accuracy as α → 1. It increases
    to ε(∞) = t, the pure-DP guarantee, and tends to the KL divergence
    :math:`t + e^{-t} - 1` as α → 1.

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) α in (1, 2**53] (beyond it α - 1 rounds to α).
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
    _check_finite_result("rdp_laplace", np.asarray(t), "sensitivity / scale")
    am1 = alpha - 1.0
    # (2α - 1) t may overflow to inf for a huge t: e^{-inf} - 1 = -1 is then the exact limit
    with np.errstate(over="ignore"):
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
        Rényi order(s) α in (1, 2**53] (beyond it α - 1 rounds to α).
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
    eps = check_real(
        "epsilon",
        epsilon,
        low=0.0,
        low_open=True,
        high=EPSILON_MAX,
        reason="(alpha - 1) epsilon and e^-epsilon must stay normal doubles",
    )
    k_ = check_int("k", k, low=2)
    x = (alpha - 1.0) * eps
    # log(1 - e^{-x-eps}) by log1mexp: log1p(-exp(-y)) is -inf for y below 1e-16
    log_ratio = log_expm1(x) + log1mexp(-x - eps) - math.log1p((k_ - 1) * math.exp(-eps))
    out = np.logaddexp(0.0, log_ratio) / (alpha - 1.0)
    return _as_output(out, scalar)


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
    # a huge epsilon gives -inf (delta = 0, exact to double precision), not a NaN
    with np.errstate(over="ignore"):
        log_delta[finite] = (af - 1.0) * (r[finite] - eps + np.log1p(-1.0 / af)) - np.log(af)
    i = int(np.argmin(log_delta))
    return min(math.exp(float(log_delta[i])), 1.0), float(a[i])


def rdp_zcdp(orders, rho: float) -> np.ndarray:
    r"""RDP curve of a ρ-zCDP mechanism: ε(α) = αρ for every order α > 1 (Bun & Steinke 2016).

    Examples
    --------
    >>> rdp_zcdp([2.0, 10.0], 0.05).tolist()
    [0.1, 0.5]
    """
    r = check_real("rho", rho, low=0.0, high=SCALE_MAX, reason="alpha * rho must stay finite")
    a = check_array("orders", orders, low=1.0, low_open=True)
    if a.size and float(a.max()) > ORDER_MAX:
        raise ValueError(f"orders entries must lie in (1, {ORDER_MAX:g}]; got max {a.max()!r} ({_ORDER_REASON})")
    return a * r
