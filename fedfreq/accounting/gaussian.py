"""The exact (analytic) privacy profile of the Gaussian mechanism and its calibration
(Balle & Wang, 2018), next to the classical calibration (Dwork & Roth, 2014).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .._numerics import log1mexp
from .._validation import EPSILON_MAX, check_real
from ._checks import _as_output, _check_nonneg_real_or_array

__all__ = ["gaussian_delta", "gaussian_sigma", "classical_gaussian_sigma"]


# ---- numerics of the Gaussian privacy profile ----

_LOG2 = math.log(2.0)
_RT2 = math.sqrt(2.0)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_U = 2.0**-53  # unit roundoff

#: Supported range of the ratio Δ/σ: inside it Δ/σ and Δ/(2σ) are normal doubles.
_MU_RANGE = (1e-300, 1e300)

#: Bound on the relative error of the erfcx-based evaluation itself (erfcx, the
#: quadrature and the asymptotic series), checked against 50-digit mpmath in
#: tests/test_extremes.py; the error propagated from the rounding of ε/μ and μ/2 is
#: added per point (see ``_gaussian_profile``).
_BASE_REL = 4e-14

# asymptotic series of g(x) = 1/sqrt(pi) - x erfcx(x) for x > 8:
# g(x) sqrt(pi) = sum_{k>=1} (-1)^(k+1) (2k-1)!! / (2 x^2)^k; 30 terms leave < 1e-22 relative
_G_SERIES = np.array([(-1.0) ** (k + 1) * math.prod(range(1, 2 * k, 2)) / 2.0**k for k in range(1, 31)])
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(32)


def _g(x: np.ndarray) -> np.ndarray:
    """g(x) = 1/sqrt(pi) - x erfcx(x) = -erfcx'(x)/2 > 0, without cancellation for large x."""
    x = np.asarray(x, dtype=float)
    out = np.empty(x.shape)
    big = x > 8.0
    if np.any(big):
        z = 1.0 / (x[big] * x[big])
        acc = np.full(z.shape, _G_SERIES[-1])
        for c in _G_SERIES[-2::-1]:
            acc = acc * z + c
        out[big] = acc * z * _INV_SQRT_PI
    small = ~big
    out[small] = _INV_SQRT_PI - x[small] * special.erfcx(x[small])
    return out


def _erfcx_difference(a: float, c: float) -> float:
    """erfcx(a) - erfcx(a + c) for c > 0 and a >= -4, to relative accuracy ~1e-14.

    Directly when the two terms differ by a factor 2 or more; otherwise as the integral
    2 * int_a^{a+c} g(x) dx of a positive, entire integrand (32-point Gauss-Legendre),
    which has no cancellation.
    """
    e1 = float(special.erfcx(a))
    e2 = float(special.erfcx(a + c))
    if e2 <= 0.5 * e1:
        return e1 - e2
    half = 0.5 * c
    nodes = a + half * (1.0 + _GL_NODES)
    return 2.0 * half * float(np.dot(_GL_WEIGHTS, _g(nodes)))


def _gaussian_profile(eps: float, mu: float) -> tuple[float, float, float]:
    r"""(log δ̂, log(1 - δ̂), rel) for the Gaussian mechanism with Δ/σ = mu at ε = eps.

    With h = μ/2, t = ε/μ and y0 = t - h, Balle & Wang's
    δ = Φ(-y0) - e^ε Φ(-(t + h)) equals, since -(t+h)²/2 + ε = -y0²/2,

    .. math:: \delta = \tfrac12 e^{-y_0^2/2}\,\bigl[\operatorname{erfcx}(y_0/\sqrt2)
        - \operatorname{erfcx}((y_0 + 2h)/\sqrt2)\bigr],

    a difference of two numbers of order one whose cancellation (when h is small) is
    removed by :func:`_erfcx_difference`. For y0 < -5 (δ > 1 - 3e-7) the log_ndtr form
    is used: there e^ε Φ(-(t+h)) < 2e-6 Φ(-y0), no cancellation. ``1 - δ`` is
    Φ(y0) + e^ε Φ(-(t+h)), a sum of two positive terms.

    ``rel`` bounds the relative error of δ̂ and of 1 - δ̂ with respect to the exact value
    at the *exact* ratio Δ/σ (μ itself carries a rounding error): ``_BASE_REL`` plus the
    effect of the rounding of y0, whose absolute error is at most 4u(t + h + |y0|)
    (u = 2^-53) and moves log δ by at most |y0| + 2 per unit.
    """
    h = 0.5 * mu
    t = eps / mu
    y0 = t - h
    dy = 4.0 * _U * (t + h + abs(y0))
    if y0 - dy > 40.0:  # δ < e^-800 / 2 (erfcx <= 1 for y0 >= 0): far below every double
        return -math.inf, 0.0, _BASE_REL
    if y0 + dy < -40.0:
        # 1 - δ = Φ(y0) + e^ε Φ(-(t+h)) < Φ(y0) + φ(y0)/(t+h) < e^-800 (t + h >= |y0| > 40):
        # δ is 1 to every double's precision, whatever the rounding of y0
        return 0.0, -math.inf, _BASE_REL
    rel = _BASE_REL + 2.0 * dy * (abs(y0) + 2.0)
    if y0 < -5.0:
        log_a = float(special.log_ndtr(-y0))
        log_b = eps + float(special.log_ndtr(-h - t))
        log_d = log_a + float(log1mexp(np.array(log_b - log_a)))
        log_c = float(np.logaddexp(special.log_ndtr(y0), log_b))
        return log_d, log_c, rel + 4.0 * _U * max(abs(log_d), abs(log_c))
    half_sq = 0.5 * y0 * y0
    diff = _erfcx_difference(y0 / _RT2, mu / _RT2)
    log_d = -_LOG2 - half_sq + math.log(diff) if diff > 0.0 else -math.inf
    if log_d > -_LOG2:  # δ > 1/2 happens only for y0 < 0: complement as a sum
        log_b = -_LOG2 - half_sq + math.log(float(special.erfcx((y0 + mu) / _RT2)))
        log_c = float(np.logaddexp(special.log_ndtr(y0), log_b))
    else:
        log_c = float(log1mexp(np.array(min(log_d, -1e-300))))
    return log_d, log_c, rel + 4.0 * _U * max(abs(log_d), abs(log_c))


def _check_ratio(sensitivity: float, sigma: float) -> float:
    """μ = Δ/σ, refused outside ``_MU_RANGE`` (where it would be subnormal or overflow)."""
    mu = sensitivity / sigma
    lo, hi = _MU_RANGE
    if not lo <= mu <= hi:
        raise ValueError(
            f"sensitivity / sigma must lie in [{lo:g}, {hi:g}] (the range in which the Gaussian "
            f"privacy profile is evaluated to full accuracy); got sensitivity={sensitivity!r}, sigma={sigma!r}"
        )
    return mu


def _delta_upper(eps: float, mu: float) -> float:
    """A certified upper bound on δ(ε) at Δ/σ = mu, within ``rel`` of the exact value."""
    log_d, log_c, rel = _gaussian_profile(eps, mu)
    if log_c == -math.inf:
        return 1.0
    if rel > 1e-3:
        raise ValueError(
            f"epsilon={eps!r} and sensitivity / sigma={mu!r} lie outside the range in which the Gaussian "
            "privacy profile is evaluated to full accuracy (epsilon sigma / sensitivity and sensitivity / sigma "
            "must stay below about 1e7, unless delta is 0 or 1 to double precision)"
        )
    if log_d <= -_LOG2:
        return min(1.0, math.exp(log_d) * (1.0 + rel))
    # δ > 1/2: 1 - δ is known to relative accuracy rel; round the difference up
    return min(1.0, float(np.nextafter(-math.expm1(log_c + math.log1p(-rel)), np.inf)))


def gaussian_delta(epsilon, *, sensitivity: float = 1.0, sigma: float):
    r"""Exact privacy profile δ(ε) of the Gaussian mechanism.

    The Gaussian mechanism with ℓ2 sensitivity Δ and noise :math:`\mathcal N(0,\sigma^2 I)`
    is (ε, δ)-DP if and only if δ >= δ(ε), where

    .. math::

        \delta(\varepsilon) = \Phi\Bigl(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
            - e^{\varepsilon}\,\Phi\Bigl(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)

    (Balle & Wang 2018, Theorem 8). It is the hockey-stick divergence between
    :math:`\mathcal N(0,\sigma^2)` and :math:`\mathcal N(\Delta,\sigma^2)`. Both terms
    nearly cancel when the noise is large (σ ≫ Δ), and a naive evaluation returns 0
    or a value far below the truth there. Writing h = Δ/(2σ), t = εσ/Δ and
    :math:`y_0 = t - h`, the identity :math:`\varepsilon - (t+h)^2/2 = -y_0^2/2` gives

    .. math:: \delta(\varepsilon) = \tfrac12 e^{-y_0^2/2}\bigl[\operatorname{erfcx}(y_0/\sqrt2)
        - \operatorname{erfcx}((y_0 + 2h)/\sqrt2)\bigr],

    and the difference of the two scaled complementary error functions is evaluated
    without cancellation (as :math:`2\int g`, :math:`g = 1/\sqrt\pi - x\,\mathrm{erfcx}(x) > 0`,
    by Gauss–Legendre quadrature, with g's asymptotic series for x > 8). For
    :math:`y_0 < -5` (δ > 1 - 3e-7) the two terms are taken from
    ``scipy.special.log_ndtr`` and subtracted in log space.

    **Exactness.** The value returned is a certified *upper bound*: the computed δ
    times :math:`1 + r`, where r bounds the relative error of the evaluation,
    :math:`r = 4\cdot10^{-14} + 2^{-50}(t + h + |y_0|)(|y_0| + 2) + 2^{-51}|\log\delta|`
    (the second term is the rounding of Δ/σ and of y0, the third that of log δ);
    r is about 1e-13 at ordinary parameters and stays below 1e-9 for ε <= 1e6 and
    Δ/σ >= 1e-3. This is checked against 60-digit mpmath over
    Δ/σ ∈ [1e-300, 1e3] and ε ∈ {0} ∪ [1e-300, 1e6] (``tests/test_extremes.py``).
    Values below the smallest positive double are returned as 0.0 (the exact value
    is then below 5e-324). For δ > 1/2 the complement 1 - δ is computed as a sum of
    two positive terms and the result rounded up. The ratio Δ/σ must lie in
    [1e-300, 1e300]; outside it (where Δ/σ is subnormal or overflows) a ValueError
    is raised. Where 1 - δ is below e^-800 (y0 < -40 even after its rounding) δ is
    1.0 exactly; where the rounding bound r would exceed 1e-3 (only for ε far beyond
    1e6 together with an extreme Δ/σ) a ValueError is raised.

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
    mu = _check_ratio(delta_, sigma_)
    flat = eps.reshape(-1)
    out = np.array([_delta_upper(float(e), mu) for e in flat]).reshape(eps.shape)
    return _as_output(out, scalar)


def gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    r"""Smallest noise σ for which the Gaussian mechanism is (ε, δ)-DP (analytic calibration).

    δ(ε) of :func:`gaussian_delta` is continuous and strictly decreasing in σ, from
    1 as σ → 0 to 0 as σ → ∞, so the smallest σ with δ(ε) <= δ is the root of
    :math:`\log\delta_\sigma(\varepsilon) = \log\delta`. The root is found with
    Brent's method on u = log σ (Balle & Wang 2018, Algorithm 1 solves the same
    equation by bisection in another parametrisation) applied to the *certified upper
    bound* of :func:`gaussian_delta` (for δ > 1/2, to the certified lower bound on
    1 - δ), and the result is then nudged up until the returned double itself passes
    that test. Hence the exact δ of the returned σ never exceeds ``delta``, and σ
    exceeds the exact optimum only by the certification margin (relative
    :math:`r/|d\log\delta/d\log\sigma|`, below 1e-12 at every point of the test grid:
    ε ∈ {0, 1e-300, …, 1e6}, δ ∈ {1e-300, …, 1 - 1e-16}, checked against 60-digit
    mpmath).

    The bracket search is capped: σ/Δ must lie in [1e-300, 1e300] and σ must be a
    normal double. Targets needing more noise than that (ε ≈ 0 with δ below about
    4e-301) raise a ValueError naming the range.

    Parameters
    ----------
    epsilon : float
        Target ε in [0, 1e6] (the range checked against mpmath).
    delta : float
        Target δ in (0, 1).
    sensitivity : float, default 1.0
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        The calibrated σ.

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1e-5), 6)
    3.730632
    """
    eps = check_real(
        "epsilon", epsilon, low=0.0, high=EPSILON_MAX, reason="the calibration is verified against mpmath up to it"
    )
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    sens = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    complement = d > 0.5
    log_target = math.log1p(-d) if complement else math.log(d)

    def excess_at(sigma: float) -> float:
        """> 0 when sigma fails the certified test, <= 0 when it passes."""
        log_d, log_c, rel = _gaussian_profile(eps, sens / sigma)
        if complement:
            # 1 - δ below every double (log_c = -inf): sigma fails by far
            value = log_target - (log_c + math.log1p(-rel)) if log_c > -math.inf else 1e4
        else:
            value = log_d + math.log1p(rel) - log_target
        return max(value, -1e4)  # -inf (delta far below every double) would stall brentq

    def excess(u: float) -> float:
        return excess_at(math.exp(u))

    # sigma/sensitivity in [1e-300, 1e300] (mu in _MU_RANGE) and sigma a normal double
    span = math.log(_MU_RANGE[1]) - 1e-9
    u_min = max(math.log(sens) - span, math.log(np.finfo(float).tiny))
    u_max = min(math.log(sens) + span, math.log(np.finfo(float).max) - 1e-9)
    lo = hi = min(max(math.log(sens), u_min), u_max)
    step = 1.0
    while excess(lo) <= 0 and lo > u_min:
        lo, step = max(lo - step, u_min), 2.0 * step
    step = 1.0
    while excess(hi) > 0 and hi < u_max:
        hi, step = min(hi + step, u_max), 2.0 * step
    if not (excess(lo) > 0 >= excess(hi)):
        raise ValueError(
            f"gaussian_sigma: the smallest sigma attaining delta={d!r} at epsilon={eps!r} lies outside the "
            f"supported range: sigma/sensitivity must lie in [1e-300, 1e300] and sigma must be a normal "
            f"double in [{np.finfo(float).tiny:.3g}, {np.finfo(float).max:.3g}] (sensitivity={sens!r})"
        )
    u = optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    sigma = math.exp(u)
    # the returned double itself must pass the certified test of gaussian_delta
    for i in range(1000):
        if excess_at(sigma) <= 0 if complement else _delta_upper(eps, _check_ratio(sens, sigma)) <= d:
            return sigma
        sigma = float(np.nextafter(sigma, np.inf)) if i < 100 else sigma * (1.0 + 1e-13)
    raise RuntimeError("gaussian_sigma: could not confirm the target delta")  # pragma: no cover


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
    sigma = sens * math.sqrt(2.0 * math.log(1.25 / d)) / eps
    if not np.finfo(float).tiny <= sigma < math.inf:
        raise ValueError(
            f"classical_gaussian_sigma: sigma = {sigma!r} is not a normal finite double for "
            f"sensitivity={sens!r}, epsilon={eps!r}, delta={d!r}; sigma must lie in "
            f"[{np.finfo(float).tiny:.3g}, {np.finfo(float).max:.3g}]"
        )
    return sigma
