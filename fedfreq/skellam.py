r"""The Skellam mixture mechanism (SMM) as a distributed-DP mean estimator.

Bao, Zhu, Xiao, Yang, Ooi, Tan and Aung (2022), "Skellam mixture mechanism: a
novel approach to federated learning with differential privacy",
arXiv:2212.04371, propose a way for clients holding real vectors to add
*integer* noise whose sum over all clients is Skellam distributed, so that the
noisy vectors can be added up by a secure-summation protocol over
:math:`\mathbb Z_M` (:mod:`fedfreq.secagg`). This module re-implements the
mechanism from its description (it shares no code with the authors'
repository) so that a chapter can compare it with cPBM (:mod:`fedfreq.cpbm`).

The mechanism
-------------
Each client :math:`i` holds :math:`x_i \in \mathbb R^D` (for frequency
estimation, a user histogram, optionally rotated by a randomized Hadamard
matrix, see :func:`random_hadamard`). With a scale :math:`\gamma > 0`, an ℓ2
radius :math:`r` and :math:`c = r^2\gamma^2`, the client

1. scales, :math:`y = \gamma x_i`;
2. clips a *combined* norm (:func:`smm_clip`). Write :math:`|y_j| = f_j + p_j`
   with :math:`f_j = \lfloor |y_j| \rfloor` and :math:`p_j \in [0, 1)`. Randomized
   rounding (step 4) turns :math:`y_j` into a two-point random variable with mean
   :math:`y_j` and variance :math:`p_j(1-p_j)`, so its second moment is
   :math:`v_j = y_j^2 + p_j(1 - p_j)`, which equals

   .. math:: v_j = f_j^2 + (2f_j + 1)\,p_j .

   The client scales :math:`v` down to :math:`\sum_j v_j \le c` when needed and
   solves the last identity for the new magnitude: with :math:`f = \lfloor\sqrt v\rfloor`,
   :math:`|y| = f + (v - f^2)/(2f + 1)`; signs are kept. The identity shows
   :math:`v` is a continuous, increasing function of :math:`|y|`, so this is
   the exact inverse;
3. clips every coordinate to :math:`[-\ell_\infty, \ell_\infty]` (this only
   lowers :math:`v`);
4. rounds every coordinate to :math:`\lfloor y_j\rfloor` or :math:`\lfloor y_j\rfloor + 1`
   with the probabilities that keep it unbiased;
5. adds :math:`\mathrm{Poisson}(\mu) - \mathrm{Poisson}(\mu)` noise to every
   coordinate, a symmetric Skellam :math:`\mathrm{Sk}(\mu)` variable
   (:func:`smm_encode`).

The server learns the modular sum of the reports, centres it
(:func:`fedfreq.secagg.to_signed`), divides by :math:`\gamma` (and by
:math:`n` for a mean) and rotates back (:func:`smm_estimate`). Summed over
:math:`n` clients, the noise is :math:`\mathrm{Sk}(\mu_{\text{tot}})` with
:math:`\mu_{\text{tot}} = n\mu`; per coordinate the error of the sum, before the
division by :math:`\gamma`, has variance :math:`2\mu_{\text{tot}} + \sum_i p_{ij}(1-p_{ij})`.

Privacy accounting and neighbouring relation
--------------------------------------------
The accountant follows the authors' code (``smm_dse_analysis.py``): the output
is :math:`(\alpha, \varepsilon(\alpha))`-RDP with

.. math:: \varepsilon(\alpha) = \frac{(1.2\alpha + 1)\,c}{4\mu_{\text{tot}}}

(:func:`smm_rdp`), valid when

.. math:: \ell_\infty \le \min\{a, b\}, \qquad a = \frac{2\mu_{\text{tot}}}{\alpha},

.. math:: b = \sqrt{\frac{4\mu_{\text{tot}}}{10.9\alpha^2 - 1.8\alpha - 9.1}}

(:func:`smm_l_inf_max`). The neighbouring relation is *add/remove one client's
data while the total noise* :math:`\mu_{\text{tot}}` *is kept*: the two
outputs compared are "the sum of all clients, one of whom holds :math:`y`" and
"the same sum with that client's rounded vector removed but the noise
:math:`\mathrm{Sk}(\mu_{\text{tot}})` left in place". A real deployment in which
a removed client also takes its noise share away leaves
:math:`\mathrm{Sk}((n-1)\mu)`; that slightly weaker guarantee is not what is
computed here (nor by the authors). The bound is per coordinate
:math:`(1.2\alpha+1) v_j / (4\mu_{\text{tot}})`; coordinates are independent,
so the divergences add up to at most the formula with :math:`c`. The test suite
checks the one-coordinate bound against the exact Rényi divergence
(``tests/test_skellam.py``).

(ε, δ) conversion: :func:`smm_epsilon` uses :func:`fedfreq.accounting.rdp_to_dp`,

.. math:: \varepsilon = \min_\alpha\, [\varepsilon(\alpha) + k(\alpha)],

.. math:: k(\alpha) = \log(1 - 1/\alpha) - \frac{\log\delta + \log\alpha}{\alpha - 1}.

Written out, this is *the same formula* as the authors' "improved" conversion,
:math:`\varepsilon(\alpha)` plus

.. math:: \frac{\log(1/\delta) + (\alpha-1)\log(1-1/\alpha) - \log\alpha}{\alpha-1};


the only differences are the grid of orders (by default the authors' integer
orders 2, ..., 99, :data:`SMM_ORDERS`) and the floor of ε at 0 in
:func:`~fedfreq.accounting.rdp_to_dp`.

This is a simulation: scaling, clipping and rounding are done in floating point
and the Poisson draws come from numpy, which is not a safe implementation of a
DP mechanism (see Mironov 2012 on floating-point attacks).

References
----------
- [B+22] E. Bao, Y. Zhu, X. Xiao, Y. Yang, B. C. Ooi, B. H. M. Tan, K. M. M. Aung.
  "Skellam Mixture Mechanism: a Novel Approach to Federated Learning with
  Differential Privacy." arXiv:2212.04371, 2022 (reference [9] of the OcPBM paper). Code:
  github.com/SkellamMixtureMechanism/SMM (``smm_dse.py``, ``smm_dse_analysis.py``).
- [AKL21] N. Agarwal, P. Kairouz, Z. Liu. "The Skellam Mechanism for
  Differentially Private Federated Learning." NeurIPS 2021, arXiv:2110.04995.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize, special, stats

from . import secagg
from ._numerics import fwht
from ._rng import as_generator
from ._validation import (
    EPSILON_MAX,
    SCALE_MAX,
    SCALE_MIN,
    check_array,
    check_bool,
    check_int,
    check_real,
    check_scale,
)
from .accounting import rdp_to_dp, renyi_divergence
from .accounting._checks import _check_orders

__all__ = [
    "SMM_ORDERS",
    "SMMResult",
    "smm_combined_norm",
    "smm_clip",
    "smm_round",
    "smm_encode",
    "smm_rdp",
    "smm_l_inf_max",
    "smm_epsilon",
    "smm_mu_for_epsilon",
    "smm_noise_bound",
    "smm_exact_rdp",
    "random_hadamard",
    "smm_estimate",
]

#: Default Rényi orders of the SMM accountant: the integers 2, 3, ..., 99, the grid
#: of the authors' ``smm_dse_analysis.py``.
SMM_ORDERS: np.ndarray = np.arange(2, 100, dtype=float)
SMM_ORDERS.setflags(write=False)

# Coefficients of the validity condition of the RDP bound (authors' script).
_K2, _K1, _K0 = 10.9, -1.8, -9.1


# ---------------------------------------------------------------------------
# private helpers
# ---------------------------------------------------------------------------


def _check_x(name: str, x) -> np.ndarray:
    arr = check_array(name, x, min_size=1, max_abs=SCALE_MAX)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (D,) or 2-D (n, D); got shape {arr.shape}")
    return arr


def _positive(name: str, value) -> float:
    """A scale parameter (c, gamma, l_inf, radius, mu_total) in [1e-150, 1e150]: its
    square and the square of its reciprocal stay finite."""
    return check_scale(name, value)


def _check_epsilon(epsilon) -> float:
    return check_real(
        "epsilon",
        epsilon,
        low=0.0,
        low_open=True,
        high=EPSILON_MAX,
        reason="the calibration's total noise must stay a normal double",
    )


#: Largest magnitude of a value rounded to an integer report: int64 with room for the
#: Poisson noise (at most :data:`_MU_MAX` per coordinate) added to it.
_ROUND_MAX = 2.0**62
#: Largest Poisson mean per client: numpy's Poisson sampler takes means up to about 9.2e18.
_MU_MAX = 1e18


def _check_delta(delta) -> float:
    return check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)


def _orders_grid(orders) -> np.ndarray:
    if orders is None:
        return np.array(SMM_ORDERS)
    return check_array("orders", orders, ndim=1, low=1.0, low_open=True, min_size=1)


def _validity_k(alpha: np.ndarray) -> np.ndarray:
    # 10.9 a^2 - 1.8 a - 9.1 = (a - 1)(10.9 a + 9.1) > 0 for every a > 1
    return _K2 * alpha**2 + _K1 * alpha + _K0


def _next_pow2(d: int) -> int:
    return 1 << (d - 1).bit_length()


#: Largest noise bound returned by :func:`smm_noise_bound` (2^53: integers stay exact).
_MAX_NOISE_BOUND = 2.0**53


def _chernoff_log_tail(t, mu_total: float):
    """log of the Chernoff bound on P(Sk(mu_total) >= t), t >= 0.

    E exp(s Sk) = exp(2 mu (cosh s - 1)); the optimal s = asinh(t / (2 mu)) gives
    log P(Sk >= t) <= 2 mu (sqrt(1 + u^2) - 1) - t asinh(u), u = t / (2 mu).
    """
    t = np.asarray(t, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        u = t / (2.0 * mu_total)
        # 2 mu (sqrt(1 + u^2) - 1) = t u / (sqrt(1 + u^2) + 1), written so that neither a
        # small u (cancellation) nor a huge u (overflow of u^2) loses it
        inv = 1.0 / u
        r = np.where(u > 1.0, 1.0 / (np.hypot(1.0, inv) + inv), u / (np.hypot(1.0, u) + 1.0))
        out = t * (r - np.arcsinh(u))
    return np.where(t == 0.0, 0.0, out)


# ---------------------------------------------------------------------------
# client side
# ---------------------------------------------------------------------------


def smm_combined_norm(x) -> float | np.ndarray:
    r"""The combined norm :math:`\sum_j x_j^2 + p_j(1 - p_j)`, :math:`p_j = |x_j| - \lfloor |x_j| \rfloor`.

    It is the expected squared norm of the randomly rounded vector (:func:`smm_round`),
    the quantity :func:`smm_clip` bounds by ``c`` and the RDP bound depends on.

    Parameters
    ----------
    x : array_like, shape (D,) or (n, D)
        One vector or one per row.

    Returns
    -------
    float or ndarray of shape (n,)
        The combined norm of ``x`` (a float for 1-D input) or of each row.

    Raises
    ------
    ValueError
        If ``x`` is not a finite real 1-D or 2-D array.

    Examples
    --------
    >>> smm_combined_norm([1.5, -2.0])     # 2.25 + 0.25 + 4 + 0
    6.5
    """
    arr = _check_x("x", x)
    a = np.abs(arr)
    p = a - np.floor(a)
    v = (a * a + p * (1.0 - p)).sum(axis=-1)
    return float(v) if arr.ndim == 1 else v


def smm_clip(x, *, c: float) -> np.ndarray:
    r"""Clip each vector so that its combined norm is at most ``c`` (SMM step 2).

    For a row with :math:`v_j = x_j^2 + p_j(1-p_j)` and :math:`V = \sum_j v_j > c`,
    every :math:`v_j` is multiplied by :math:`c/V` and mapped back to a magnitude by
    the exact inverse :math:`|x_j| = f + (v_j - f^2)/(2f + 1)`,
    :math:`f = \lfloor\sqrt{v_j}\rfloor`; signs are kept. Rows with :math:`V \le c`
    are returned unchanged. Afterwards the combined norm of every row is
    :math:`\min(V, c)` up to floating-point rounding.

    Parameters
    ----------
    x : array_like, shape (D,) or (n, D)
        Real vectors (already scaled by γ), one per row.
    c : float
        Bound c > 0 on the combined norm (:math:`c = r^2\gamma^2` in SMM).

    Returns
    -------
    ndarray of float, same shape as ``x``

    Raises
    ------
    ValueError
        If ``c <= 0`` or ``x`` is not a finite real 1-D or 2-D array.

    Examples
    --------
    >>> smm_clip([3.0, -4.0], c=100.0).tolist()      # V = 25 <= c: unchanged
    [3.0, -4.0]
    >>> y = smm_clip([3.0, -4.0], c=12.5)            # v = (9, 16) -> (4.5, 8)
    >>> y.tolist(), smm_combined_norm(y)
    ([2.1, -2.8], 12.5)
    """
    arr = _check_x("x", x)
    c = _positive("c", c)
    a = np.abs(arr)
    p = a - np.floor(a)
    v = a * a + p * (1.0 - p)
    total = v.sum(axis=-1, keepdims=True)
    over = total > c
    if not np.any(over):
        return arr.astype(float, copy=True)
    scale = np.where(over, c / np.where(over, total, 1.0), 1.0)
    v_new = v * scale
    f = np.floor(np.sqrt(v_new))
    # guard the floor against sqrt rounding at perfect squares
    f = np.where((f + 1.0) ** 2 <= v_new, f + 1.0, f)
    f = np.where(f * f > v_new, f - 1.0, f)
    mag = f + (v_new - f * f) / (2.0 * f + 1.0)
    out = np.where(over, np.sign(arr) * mag, arr)
    return out


def smm_round(x, *, rng=None) -> np.ndarray:
    r"""Unbiased randomized rounding to :math:`\lfloor x\rfloor` or :math:`\lfloor x\rfloor + 1`.

    Each entry becomes :math:`\lfloor x\rfloor + B`, :math:`B \sim \mathrm{Bernoulli}(x - \lfloor x\rfloor)`,
    independently, so :math:`\mathbb E = x` and the variance is
    :math:`p(1-p)` with :math:`p = x - \lfloor x\rfloor`.

    Parameters
    ----------
    x : array_like
        Finite reals, any shape.
    rng : Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of int64, same shape as ``x``

    Examples
    --------
    >>> smm_round([1.0, -2.0, 3.0], rng=0).tolist()
    [1, -2, 3]
    """
    arr = check_array("x", x)
    if arr.size and float(np.max(np.abs(arr))) >= _ROUND_MAX:
        raise ValueError(
            f"x entries must be less than 2**62 = {_ROUND_MAX:.4g} in magnitude (the rounded values are int64); "
            f"got {float(np.max(np.abs(arr))):g}"
        )
    gen = as_generator(rng)
    fl = np.floor(arr)
    up = gen.random(arr.shape) < (arr - fl)
    return (fl + up).astype(np.int64)


def smm_encode(x, *, gamma: float, c: float, l_inf: float, mu: float, rng=None) -> np.ndarray:
    r"""One SMM report per client: scale, clip, ℓ∞-clip, round, add Skellam noise.

    Steps 1-5 of the module docstring, vectorised over clients. Rotation, if
    any, is the caller's job (:func:`smm_estimate` does it).

    Parameters
    ----------
    x : array_like, shape (D,) or (n, D)
        Client vectors (unscaled), one per row.
    gamma : float
        Scale γ > 0.
    c : float
        Combined-norm bound c > 0 (in the scaled domain, :math:`c = r^2\gamma^2`).
    l_inf : float
        Coordinate bound :math:`\ell_\infty > 0` (scaled domain).
    mu : float
        Per-client Poisson mean μ >= 0; each coordinate gets
        :math:`\mathrm{Poisson}(\mu) - \mathrm{Poisson}(\mu)`. ``mu = 0`` gives the
        rounded vectors without noise.
    rng : Generator, int or None
        Source of randomness (rounding, then noise).

    Returns
    -------
    ndarray of int64, same shape as ``x``

    Raises
    ------
    ValueError
        For γ <= 0, c <= 0, ℓ∞ <= 0, μ < 0, or a non-finite ``x``.

    Examples
    --------
    >>> smm_encode([[0.5, 2.0]], gamma=2.0, c=100.0, l_inf=10.0, mu=0.0, rng=0).tolist()
    [[1, 4]]
    """
    arr = _check_x("x", x)
    gamma = _positive("gamma", gamma)
    c = _positive("c", c)
    l_inf = _positive("l_inf", l_inf)
    mu = check_real("mu", mu, low=0.0, high=_MU_MAX, reason="numpy's Poisson sampler takes means up to about 9.2e18")
    gen = as_generator(rng)
    if gamma * float(np.max(np.abs(arr))) > SCALE_MAX:
        raise ValueError(
            f"gamma * x must be at most {SCALE_MAX:g} in magnitude (its square must stay finite); "
            f"got gamma={gamma!r} and max |x| = {float(np.max(np.abs(arr))):g}"
        )
    y = smm_clip(gamma * arr, c=c)
    np.clip(y, -l_inf, l_inf, out=y)
    if float(np.max(np.abs(y))) >= _ROUND_MAX:
        raise ValueError(
            f"the clipped, scaled values must stay below 2**62 in magnitude (the reports are int64): "
            f"lower gamma={gamma!r}, c={c!r} or l_inf={l_inf!r}"
        )
    z = smm_round(y, rng=gen)
    if mu > 0.0:
        z += gen.poisson(mu, size=z.shape)
        z -= gen.poisson(mu, size=z.shape)
    return z


# ---------------------------------------------------------------------------
# accounting
# ---------------------------------------------------------------------------


def smm_l_inf_max(order, *, mu_total: float):
    r"""Largest :math:`\ell_\infty` for which the SMM RDP bound is claimed at order α.

    .. math:: \ell_\infty^{\max}(\alpha) = \min\{a, b\}, \qquad a = \frac{2\mu_{\text{tot}}}{\alpha},

    .. math:: b = \sqrt{\frac{4\mu_{\text{tot}}}{10.9\alpha^2 - 1.8\alpha - 9.1}}

    (authors' ``smm_dse_analysis.py``). The denominator equals
    :math:`(\alpha - 1)(10.9\alpha + 9.1) > 0` for α > 1; the bound decreases in α.

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) α in (1, 2**53] (beyond it α - 1 rounds to α).
    mu_total : float
        Total Poisson mean :math:`\mu_{\text{tot}} = n\mu > 0`.

    Returns
    -------
    float or ndarray
        Matching the shape of ``order``.

    Examples
    --------
    >>> round(smm_l_inf_max(2.0, mu_total=100.0), 6)   # sqrt(400 / 30.9)
    3.597914
    """
    alpha, scalar = _check_orders(order)
    mt = _positive("mu_total", mu_total)
    out = np.minimum(2.0 * mt / alpha, np.sqrt(4.0 * mt / _validity_k(alpha)))
    return float(out) if scalar else out


def smm_rdp(order, *, c: float, mu_total: float, l_inf: float | None = None):
    r"""RDP bound of SMM: :math:`\varepsilon(\alpha) = (1.2\alpha + 1)\,c / (4\mu_{\text{tot}})`.

    As in the authors' accountant (module docstring). The bound is claimed only
    when :math:`\ell_\infty \le` :func:`smm_l_inf_max` ``(α)``; if ``l_inf`` is
    given and exceeds that value at an order, the result there is ``inf``
    ("no bound at this order", which :func:`fedfreq.accounting.rdp_to_dp`
    skips). With ``l_inf=None`` the condition is not checked.

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) α in (1, 2**53] (beyond it α - 1 rounds to α).
    c : float
        Combined-norm bound c > 0 (scaled domain), in [1e-150, 1e150].
    mu_total : float
        Total Poisson mean :math:`n\mu > 0` of the summed noise, in [1e-150, 1e150]
        (a bound that overflows double precision raises ValueError).
    l_inf : float, optional
        Coordinate bound used by the clients (> 0).

    Returns
    -------
    float or ndarray
        ε(α) in (0, inf], matching the shape of ``order``.

    Raises
    ------
    ValueError
        For orders <= 1, c <= 0, μ_tot <= 0 or ℓ∞ <= 0.

    Examples
    --------
    >>> smm_rdp([2.0, 7.0], c=10.0, mu_total=47.0)
    array([0.18085106, 0.5       ])
    >>> smm_rdp(2.0, c=10.0, mu_total=34.0, l_inf=100.0)
    inf
    """
    alpha, scalar = _check_orders(order)
    c = _positive("c", c)
    mt = _positive("mu_total", mu_total)
    with np.errstate(over="ignore"):
        out = (1.2 * alpha + 1.0) * c / (4.0 * mt)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"c / mu_total = {c!r} / {mt!r} is too large at these orders: the bound (1.2 order + 1) c / "
            "(4 mu_total) overflows double precision"
        )
    if l_inf is not None:
        lim = _positive("l_inf", l_inf)
        bound = np.minimum(2.0 * mt / alpha, np.sqrt(4.0 * mt / _validity_k(alpha)))
        out = np.where(lim <= bound, out, np.inf)
    return float(out) if scalar else out


def smm_epsilon(delta: float, *, c: float, mu_total: float, l_inf: float | None = None, orders=None):
    r"""(ε, δ)-DP of SMM from :func:`smm_rdp` via :func:`fedfreq.accounting.rdp_to_dp`.

    The conversion is :math:`\varepsilon = \max\{0, \min_\alpha [\varepsilon(\alpha) + k(\alpha)]\}` with

    .. math:: k(\alpha) = \log(1-1/\alpha) - \frac{\log\delta + \log\alpha}{\alpha-1}.


    This is algebraically identical to the authors' conversion in
    ``smm_dse_analysis.py``; results differ from theirs only through the grid
    of orders (default :data:`SMM_ORDERS`, their integers 2..99) and the floor at 0.

    Parameters
    ----------
    delta : float
        Target δ in (0, 1).
    c, mu_total, l_inf
        As in :func:`smm_rdp`.
    orders : array_like, optional
        1-D grid of orders > 1; default :data:`SMM_ORDERS`.

    Returns
    -------
    epsilon : float
        ``inf`` if no order of the grid satisfies the ℓ∞ condition.
    best_order : float
        The order attaining the minimum (``inf`` if none).

    Examples
    --------
    The authors' example (γ = 64, r = 1, n = 100 clients with μ = 5.95):

    >>> eps, order = smm_epsilon(1e-5, c=64.0**2, mu_total=595.0)
    >>> round(eps, 4), order
    (12.7183, 3.0)
    """
    d = _check_delta(delta)
    a = _orders_grid(orders)
    curve = smm_rdp(a, c=c, mu_total=mu_total, l_inf=l_inf)
    return rdp_to_dp(a, curve, d)


def smm_mu_for_epsilon(
    epsilon: float, delta: float, *, c: float, n: int, l_inf: float | None = None, orders=None
) -> float:
    r"""Smallest per-client μ with :func:`smm_epsilon` ``(delta, c=c, mu_total=n μ) <= epsilon``.

    The RDP bound is linear in :math:`1/\mu_{\text{tot}}`, so for each order the
    smallest admissible total mean is explicit,

    .. math:: \mu_{\text{tot}}(\alpha) &= \max\Bigl\{\frac{(1.2\alpha+1)c}{4(\varepsilon - b(\alpha))},\
        \frac{\alpha\ell_\infty}{2},\ \frac{\ell_\infty^2(10.9\alpha^2-1.8\alpha-9.1)}{4}\Bigr\},
        \\ b(\alpha) & = \log(1-\tfrac1\alpha) - \frac{\log\delta + \log\alpha}{\alpha-1},

    for orders with :math:`b(\alpha) < \varepsilon` (the last two terms only when
    ``l_inf`` is given), and the answer is the minimum over the grid divided by
    n. It is then nudged up by a few ulps until :func:`smm_epsilon` confirms
    the target (floating-point rounding at the boundaries).

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    c : float
        Combined-norm bound c > 0.
    n : int
        Number of clients n >= 1.
    l_inf : float, optional
        Coordinate bound; if given, the validity condition is enforced.
    orders : array_like, optional
        Grid of orders; default :data:`SMM_ORDERS`.

    Returns
    -------
    float
        μ per client.

    Raises
    ------
    ValueError
        For invalid parameters, or if ε is too small for δ on the grid
        (:math:`\varepsilon \le \min_\alpha b(\alpha)`).

    Examples
    --------
    >>> mu = smm_mu_for_epsilon(1.0, 1e-5, c=64.0**2, n=100)
    >>> eps, _ = smm_epsilon(1e-5, c=64.0**2, mu_total=100 * mu)
    >>> round(eps, 9)
    1.0
    """
    eps = _check_epsilon(epsilon)
    d = _check_delta(delta)
    c = _positive("c", c)
    n = check_int("n", n, low=1)
    lim = None if l_inf is None else _positive("l_inf", l_inf)
    a = _orders_grid(orders)
    b = np.log1p(-1.0 / a) - (math.log(d) + np.log(a)) / (a - 1.0)
    ok = b < eps
    if not np.any(ok):
        raise ValueError(
            f"epsilon must exceed min over orders of log(1-1/a) - (log delta + log a)/(a-1) = "
            f"{float(b.min())!r} for delta={d!r} on this grid of orders; got {epsilon!r}"
        )
    af = a[ok]
    need = (1.2 * af + 1.0) * c / (4.0 * (eps - b[ok]))
    if lim is not None:
        need = np.maximum(need, np.maximum(af * lim / 2.0, lim * lim * _validity_k(af) / 4.0))
    with np.errstate(over="ignore"):
        mu_total = float(need.min())
    if not SCALE_MIN <= mu_total <= SCALE_MAX:
        raise ValueError(
            f"epsilon={eps!r}, c={c!r} and l_inf={lim!r} need a total noise mu_total = {mu_total:.4g} outside "
            f"[{SCALE_MIN:g}, {SCALE_MAX:g}], the range in which the SMM bound is evaluated"
        )
    for _ in range(200):
        got, _order = smm_epsilon(d, c=c, mu_total=mu_total, l_inf=lim, orders=a)
        if got <= eps:
            return mu_total / n
        mu_total *= 1.0 + 1e-13
    raise RuntimeError("smm_mu_for_epsilon: could not confirm the target epsilon")  # pragma: no cover


def smm_noise_bound(mu_total: float, prob: float) -> int:
    r"""An integer t with :math:`P(|\mathrm{Sk}(\mu_{\text{tot}})| \ge t) \le` ``prob``.

    Uses the Chernoff bound :math:`P(\mathrm{Sk}(\mu) \ge t) \le
    \exp\{2\mu(\sqrt{1+u^2} - 1) - t\,\operatorname{asinh} u\}`, :math:`u = t/(2\mu)`
    (from :math:`\mathbb E e^{s\,\mathrm{Sk}(\mu)} = e^{2\mu(\cosh s - 1)}`), doubled
    for the two tails; the result is rigorous, not a normal approximation.

    Parameters
    ----------
    mu_total : float
        μ > 0 of the symmetric Skellam variable.
    prob : float
        Tail probability in (0, 1).

    Returns
    -------
    int
        The smallest integer t >= 1 for which the bound is at most ``prob``, up to
        2^53; a larger t (μ_tot above about 1e29 at prob = 1e-9) raises ValueError.
        The exponent is evaluated as :math:`t\,[u/(\sqrt{1+u^2}+1) - \operatorname{asinh} u]`,
        accurate for every μ_tot > 0 (no cancellation at small u, no overflow at large u).

    Examples
    --------
    >>> smm_noise_bound(100.0, 1e-9)
    94
    """
    mt = check_real(
        "mu_total",
        mu_total,
        low=0.0,
        low_open=True,
        high=1e300,
        reason="the bound exceeds 2^53 from about 1e29 on, and mu_total log(2/prob) must stay finite",
    )
    q = check_real("prob", prob, low=0.0, high=1.0, low_open=True, high_open=True)
    target = math.log(q / 2.0)
    too_big = ValueError(
        f"mu_total={mt!r} and prob={q!r} need a bound t above 2^53 (about 9e15), beyond the integers a "
        f"double represents exactly; mu_total must be small enough that t stays below 2^53 "
        f"(t is about sqrt(4 mu_total log(2/prob)))"
    )
    hi = max(1.0, 2.0 * math.sqrt(mt * -target))
    while _chernoff_log_tail(hi, mt) > target:
        hi *= 2.0
        if hi > _MAX_NOISE_BOUND:
            raise too_big
    root = optimize.brentq(lambda t: float(_chernoff_log_tail(t, mt)) - target, 0.0, hi, xtol=1e-9, maxiter=500)
    if root > _MAX_NOISE_BOUND:
        raise too_big
    t = max(1, math.ceil(root))
    for _ in range(1000):  # guard against brentq's tolerance
        if _chernoff_log_tail(t, mt) <= target:
            return int(t)
        t += 1
    raise RuntimeError("smm_noise_bound: could not confirm the bound")  # pragma: no cover


# ---------------------------------------------------------------------------
# rotation and full pipeline
# ---------------------------------------------------------------------------


def _skellam_log_table(mu_total: float, K: int) -> np.ndarray:
    """log P(Sk(mu_total) = k) for k = -K..K, a log-space convolution of two Poisson pmfs.

    P(k) = sum_j Pois(j + |k|) Pois(j); the sum in log space does not underflow in the
    tails, unlike exp(-2 mu) I_k(2 mu).
    """
    k = np.arange(0, K + 1)
    J = int(mu_total + 40 * math.sqrt(mu_total) + 100)
    j = np.arange(J)
    terms = stats.poisson.logpmf(j[None, :] + k[:, None], mu_total) + stats.poisson.logpmf(j, mu_total)[None, :]
    half = special.logsumexp(terms, axis=1)
    return np.concatenate([half[:0:-1], half])


def smm_exact_rdp(order, *, x, mu_total: float) -> np.ndarray:
    r"""Exact Rényi divergence of one SMM coordinate, the larger of the two directions.

    For a client value :math:`x = f + p \ge 0` (:math:`f` integer, :math:`p \in [0, 1)`),
    the output with the client present is the mixture

    .. math:: P = (1-p)\,S * \delta_f + p\,S * \delta_{f+1}, \qquad S = \mathrm{Sk}(\mu_{\text{tot}}),

    and without it :math:`Q = \mathrm{Sk}(\mu_{\text{tot}})` (the neighbouring relation of
    the module docstring). Returns :math:`\max(D_\alpha(P\|Q), D_\alpha(Q\|P))`, computed
    with :func:`fedfreq.accounting.renyi_divergence` on the support
    :math:`|k| \le \lceil x\rceil + 40\sqrt{2\mu_{\text{tot}}} + 60`, whose complement has
    negligible mass (checked: the truncated pmfs sum to 1 within 1e-12). This is the
    quantity that :func:`smm_rdp` bounds with :math:`c = x^2 + p(1-p)`.

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) α in (1, 2**53] (beyond it α - 1 rounds to α).
    x : float or array_like
        Client value(s) in the scaled domain, 0 <= x <= 1000.
    mu_total : float
        Total Poisson mean, 0 < μ_tot <= 1e5.

    Returns
    -------
    ndarray, shape (len(x), len(order))

    Examples
    --------
    >>> e = smm_exact_rdp([2.0, 8.0], x=[1.0, 2.5], mu_total=50.0)
    >>> e.shape, bool(np.all(e <= np.array([smm_rdp([2.0, 8.0], c=c, mu_total=50.0) for c in (1.0, 6.5)])))
    ((2, 2), True)
    """
    alpha, _ = _check_orders(order)
    mt = check_real("mu_total", mu_total, low=0.0, high=1e5, low_open=True)
    xs = np.atleast_1d(check_array("x", x, low=0.0, high=1000.0))
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"x must be a number or a non-empty 1-d array; got shape {xs.shape}")
    S = int(math.ceil(xs.max())) + 1
    K = int(S + 40 * math.sqrt(2 * mt) + 60)
    table = _skellam_log_table(mt, K + S)
    off = K + S
    k = np.arange(-K, K + 1)
    lq = table[k + off]
    if abs(special.logsumexp(lq)) > 1e-12:  # pragma: no cover - the support is wide enough by construction
        raise RuntimeError("Skellam support truncation lost more than 1e-12 of the mass")
    lq = lq - special.logsumexp(lq)
    out = np.empty((xs.size, alpha.size))
    for i, xv in enumerate(xs):
        f = math.floor(xv)
        p = xv - f
        lp = np.logaddexp(
            math.log1p(-p) + table[k - f + off], (math.log(p) if p > 0 else -np.inf) + table[k - f - 1 + off]
        )
        lp = lp - special.logsumexp(lp)
        out[i] = np.maximum(renyi_divergence(lp, lq, alpha), renyi_divergence(lq, lp, alpha))
    return out


def random_hadamard(D: int, *, rng=None) -> np.ndarray:
    r"""A randomized Hadamard rotation :math:`R = H\,\mathrm{diag}(s)/\sqrt{D'}`.

    :math:`H` is the Sylvester Hadamard matrix of order :math:`D' = 2^{\lceil\log_2 D\rceil}`
    (``scipy.linalg.hadamard``) and :math:`s` a vector of independent random
    signs. :math:`R` is orthogonal; a client sends :math:`R x` (its vector padded
    with zeros to length :math:`D'`) and the server applies :math:`R^\top`. The
    rotation spreads a peaked vector over all coordinates, which lowers the
    coordinate bound ℓ∞ it needs.

    Parameters
    ----------
    D : int
        Dimension D >= 1.
    rng : Generator, int or None
        Source of the signs.

    Returns
    -------
    ndarray of float, shape (D', D')

    Examples
    --------
    >>> R = random_hadamard(3, rng=0)
    >>> R.shape, bool(np.allclose(R @ R.T, np.eye(4)))
    ((4, 4), True)
    """
    D = check_int("D", D, low=1, high=2**14, reason="the rotation is a dense matrix of order 2^ceil(log2 D)")
    gen = as_generator(rng)
    dp = _next_pow2(D)
    signs = gen.choice(np.array([-1.0, 1.0]), size=dp)
    return linalg.hadamard(dp).astype(float) * signs[None, :] / math.sqrt(dp)


@dataclass(frozen=True)
class SMMResult:
    """Output of :func:`smm_estimate`.

    Attributes
    ----------
    estimate : ndarray, shape (d,)
        Estimated mean histogram.
    mu : float
        Calibrated per-client Poisson mean μ.
    mu_total : float
        n μ.
    epsilon : float
        The ε certified by :func:`smm_epsilon` (<= the target).
    delta : float
        δ.
    order : float
        Rényi order attaining ε.
    l_inf : float
        Coordinate bound used (scaled domain).
    c : float
        Combined-norm bound :math:`(r\\gamma)^2`.
    gamma : float
        Scale γ.
    modulus : int
        :math:`M = 2^{\\text{bits}}` of the secure sum.
    dim : int
        Transmitted dimension D' (next power of two >= d if rotated, else d).
    n_clipped : int
        Clients whose combined norm exceeded c.
    n_linf_clipped : int
        Entries (after the combined-norm clip) that the ℓ∞ clip changed.
    noise_std : float
        Standard deviation of the Skellam part of the error of each coordinate
        of the estimate, :math:`\\sqrt{2\\mu_{\\text{tot}}}/(\\gamma n)` (the
        rounding error comes on top).
    """

    estimate: np.ndarray
    mu: float
    mu_total: float
    epsilon: float
    delta: float
    order: float
    l_inf: float
    c: float
    gamma: float
    modulus: int
    dim: int
    n_clipped: int
    n_linf_clipped: int
    noise_std: float


def smm_estimate(
    x,
    *,
    radius: float,
    gamma: float,
    epsilon: float,
    delta: float,
    l_inf: float | None = None,
    bits: int = 32,
    rotate: bool = True,
    wrap_prob: float = 1e-12,
    orders=None,
    rng=None,
) -> SMMResult:
    r"""Estimate the mean histogram with SMM and secure summation modulo :math:`2^{\text{bits}}`.

    Pipeline: calibrate μ (:func:`smm_mu_for_epsilon`, with :math:`c = r^2\gamma^2`);
    pad and rotate (if ``rotate``); encode every client (:func:`smm_encode`);
    map reports to :math:`\mathbb Z_M` and add them with
    :func:`fedfreq.secagg.secure_sum`; centre with :func:`fedfreq.secagg.to_signed`;
    divide by γn; rotate back and drop the padding.

    The estimate is unbiased for the mean of the *clipped* vectors (clipped in
    the rotated, scaled domain and mapped back). Note that the combined norm
    exceeds :math:`\|\gamma x\|_2^2` by up to :math:`D'/4`, so a vector is left
    untouched only if :math:`\gamma^2\|x\|_2^2 + \sum_j p_j(1 - p_j) \le c`.

    Default ℓ∞. Both μ_tot and the validity bound scale with c, so the default
    ℓ∞ is a fixed fraction of :math:`r\gamma` that depends on (ε, δ) only: with
    δ = 1e-5 and the default orders it is 0.119, 0.109, 0.099, 0.086, 0.068
    times :math:`r\gamma` for ε = 0.25, 1, 4, 8, 16. A coordinate larger than
    about a tenth of the radius is therefore cut by the ℓ∞ clip, whatever γ is.
    The rotation is what makes this harmless: it spreads a vector of norm
    :math:`\|x\|` to coordinates of size about :math:`\|x\|/\sqrt{D'}`, which
    needs :math:`D'` in the hundreds for, e.g., one-hot histograms. Check
    ``n_linf_clipped`` in the result.

    Modulus. The signed sum of a coordinate is the sum of the rounded values,
    at most :math:`n\lceil\ell_\infty\rceil` in absolute value, plus
    :math:`\mathrm{Sk}(\mu_{\text{tot}})` noise, which is unbounded. With
    :math:`t` = :func:`smm_noise_bound` ``(mu_total, wrap_prob / D')``, the
    function requires :math:`n\lceil\ell_\infty\rceil + t \le M/2`, which makes the
    probability that any coordinate wraps at most ``wrap_prob`` (union bound
    over coordinates); otherwise it raises ``ValueError``. In the improbable
    event that a wrap occurs anyway, the simulator (which knows the integer sum)
    raises ``RuntimeError`` rather than return a wrong estimate.

    Parameters
    ----------
    x : array_like, shape (n, d)
        Non-negative user histograms.
    radius : float
        ℓ2 radius r > 0 (unscaled); :math:`c = (r\gamma)^2`.
    gamma : float
        Scale γ > 0.
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    l_inf : float, optional
        Coordinate bound (scaled domain). Default: the largest value satisfying
        the validity condition at the order attaining ε,
        :func:`smm_l_inf_max` ``(order, mu_total)``, as in the authors' script.
        If given, μ is calibrated with the condition enforced.
    bits : int, default 32
        :math:`M = 2^{\text{bits}}`, bits in [2, 62].
    rotate : bool, default True
        Apply :func:`random_hadamard` (shared randomness) before encoding.
    wrap_prob : float, default 1e-12
        Tolerated probability in (0, 1) of a modular wrap.
    orders : array_like, optional
        Rényi orders; default :data:`SMM_ORDERS`.
    rng : Generator, int or None
        Source of all randomness (rotation, rounding, noise, masks).

    Returns
    -------
    SMMResult

    Raises
    ------
    ValueError
        For invalid input (negative or non-finite x, r, γ, ε <= 0, δ outside
        (0, 1), bits outside [2, 62]) or if ``bits`` is too small for the sum
        (the message gives the smallest sufficient number of bits).
    RuntimeError
        If a wrap happened despite the check (probability <= ``wrap_prob``).

    Examples
    --------
    2000 users with one item each out of 200 (one-hot histograms):

    >>> x = np.eye(200)[np.arange(2000) % 200]
    >>> res = smm_estimate(x, radius=1.0, gamma=50.0, epsilon=4.0, delta=1e-5, rng=0)
    >>> res.estimate.shape, res.dim, res.order, round(res.l_inf, 3), res.n_linf_clipped
    ((200,), 256, 6.0, 4.959, 0)
    >>> bool(np.max(np.abs(res.estimate - x.mean(axis=0))) < 0.005)
    True
    """
    rotate = check_bool("rotate", rotate)
    arr = check_array("x", x, ndim=2, low=0.0, min_size=1)
    n, d = arr.shape
    r = _positive("radius", radius)
    gamma = _positive("gamma", gamma)
    eps = _check_epsilon(epsilon)
    dl = _check_delta(delta)
    bits = check_int("bits", bits, low=2, high=62)
    if not isinstance(rotate, bool):
        raise ValueError(f"rotate must be True or False; got {rotate!r}")
    q = check_real("wrap_prob", wrap_prob, low=0.0, high=1.0, low_open=True, high_open=True)
    grid = _orders_grid(orders)
    c = (r * gamma) ** 2
    if not SCALE_MIN <= c <= SCALE_MAX:
        raise ValueError(
            f"(radius * gamma)^2 = c must lie in [{SCALE_MIN:g}, {SCALE_MAX:g}]; got radius={radius!r} and "
            f"gamma={gamma!r}, c = {c:g}"
        )
    if l_inf is not None:
        _positive("l_inf", l_inf)

    dim = _next_pow2(d) if rotate else d
    modulus = 1 << bits
    try:
        mu = smm_mu_for_epsilon(eps, dl, c=c, n=n, l_inf=l_inf, orders=grid)
        mu_total = n * mu
        got, order = smm_epsilon(dl, c=c, mu_total=mu_total, l_inf=l_inf, orders=grid)
        if l_inf is None:
            lim = smm_l_inf_max(order, mu_total=mu_total)
            got, order = smm_epsilon(dl, c=c, mu_total=mu_total, l_inf=lim, orders=grid)
        else:
            lim = _positive("l_inf", l_inf)
        t = smm_noise_bound(mu_total, q / dim)
    except ValueError as exc:
        raise ValueError(
            f"radius={radius!r}, gamma={gamma!r}, epsilon={epsilon!r} and l_inf={l_inf!r} (with delta={dl!r}, "
            f"n={n} and wrap_prob={q!r}) admit no supported SMM calibration: {exc}"
        ) from exc
    need = n * math.ceil(lim) + t
    if need > modulus // 2:
        min_bits = (2 * need - 1).bit_length()
        raise ValueError(
            f"bits={bits} is too small for radius={radius!r} and gamma={gamma!r}: "
            f"the signed sum can reach n*ceil(l_inf) + t = "
            f"{n}*{math.ceil(lim)} + {t} = {need} (t bounds the Skellam noise except with "
            f"probability wrap_prob/D' = {q / dim:g}), which needs 2^bits >= {2 * need}; "
            f"bits must be at least {min_bits}"
        )

    gen = as_generator(rng)
    if rotate:
        signs = gen.choice(np.array([-1.0, 1.0]), size=dim)
        padded = np.zeros((n, dim))
        padded[:, :d] = arr
        y = fwht(padded * signs) / math.sqrt(dim)
    else:
        y = arr

    scaled = smm_clip(gamma * y, c=c)
    n_clipped = int(np.count_nonzero(smm_combined_norm(gamma * y) > c))
    n_linf = int(np.count_nonzero(np.abs(scaled) > lim))
    reports = smm_encode(y, gamma=gamma, c=c, l_inf=lim, mu=mu, rng=gen)

    residues = np.mod(reports, modulus)
    modsum = secagg.secure_sum(residues, modulus=modulus, allow_wrap=True, rng=gen)
    signed = secagg.to_signed(modsum, modulus)
    if not np.array_equal(signed, reports.sum(axis=0)):
        raise RuntimeError(
            "the secure sum wrapped around the modulus despite the tail check "
            f"(probability <= wrap_prob = {q:g}); rerun with more bits"
        )
    est = signed.astype(float) / (gamma * n)
    if rotate:
        est = (fwht(est) * signs / math.sqrt(dim))[:d]
    return SMMResult(
        estimate=est,
        mu=float(mu),
        mu_total=float(mu_total),
        epsilon=float(got),
        delta=dl,
        order=float(order),
        l_inf=float(lim),
        c=float(c),
        gamma=gamma,
        modulus=modulus,
        dim=dim,
        n_clipped=n_clipped,
        n_linf_clipped=n_linf,
        noise_std=math.sqrt(2.0 * mu_total) / (gamma * n),
    )
