"""The exact (analytic) privacy profile of the Gaussian mechanism and its calibration
(Balle & Wang, 2018), next to the classical calibration (Dwork & Roth, 2014).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .._numerics import log1mexp
from .._validation import check_real
from ._checks import _as_output, _check_nonneg_real_or_array

__all__ = ["gaussian_delta", "gaussian_sigma", "classical_gaussian_sigma"]


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
    out[ok] = log_a[ok] + log1mexp(ratio[ok])
    return out


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
