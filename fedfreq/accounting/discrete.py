"""Privacy of the discrete Laplace (pure DP) and discrete Gaussian (zCDP) mechanisms
(Canonne, Kamath & Steinke, 2020).
"""

from __future__ import annotations

import math

from .._validation import check_int, check_real

__all__ = ["discrete_laplace_epsilon", "discrete_gaussian_rho"]


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
    eps = delta1 / t
    if not math.isfinite(eps):
        raise ValueError(f"sensitivity / scale overflows double precision; got scale={scale!r}")
    return eps


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
    ratio = d2 / s  # (d2 / s)^2, not d2^2 / s^2: s * s underflows to 0 for s < 1e-154
    rho = ratio * ratio / 2 if ratio < 1e154 else math.inf
    if not math.isfinite(rho):
        raise ValueError(
            f"sensitivity / sigma is too large: rho overflows double precision; got sigma={sigma!r}, "
            f"sensitivity={sensitivity!r}"
        )
    return rho
