"""Debiasing clipped counts under Poisson data (Liu et al., 2023, Appendix C): h(λ), its
derivative and inverse, γ_C and Algorithm 5.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from .._rng import as_generator
from .._validation import check_array, check_int, check_real
from ._checks import _epsilon, _lams, _out

__all__ = [
    "clipped_poisson_mean",
    "clipped_poisson_mean_derivative",
    "clipped_poisson_mean_inverse",
    "gamma_c",
    "debiased_count",
]


def clipped_poisson_mean(lam, C: int):
    r""":math:`h(\lambda) = \mathbb E[\min(X, C)]`, :math:`X \sim \mathrm{Poi}(\lambda)` (Liu et al. 2023, Algorithm 5).

    Exact and vectorised in ``lam``, through regularised incomplete gamma functions:

    .. math:: h(\lambda) = \lambda \Pr[X \le C-2] + C \Pr[X \ge C]
       = \lambda\, Q(C-1, \lambda) + C\, P(C, \lambda)

    (:math:`\mathbb E[X\mathbf 1\{X \le C-1\}] = \lambda\Pr[X \le C-2]`; the first
    term is absent for C = 1). Equal to the paper's
    :math:`C - \sum_{j<C}(C-j)e^{-\lambda}\lambda^j/j!` without its cancellation.

    Parameters
    ----------
    lam : float or array_like
        Poisson means λ >= 0.
    C : int
        Clipping level C >= 1.

    Examples
    --------
    >>> round(clipped_poisson_mean(1.0, 2), 6)  # 2 - 3/e
    0.896362
    """
    lm, scalar = _lams(lam)
    c = check_int("C", C, low=1)
    out = c * special.gammainc(c, lm)
    if c >= 2:
        out = out + lm * special.gammaincc(c - 1, lm)
    return _out(out[0]) if scalar else out


def clipped_poisson_mean_derivative(lam, C: int, order: int = 1):
    r"""Derivatives of :math:`h`: :math:`h'(\lambda) = \Pr[X \le C-1]`,
    :math:`h''(\lambda) = -e^{-\lambda}\lambda^{C-1}/(C-1)!`.

    Examples
    --------
    >>> round(clipped_poisson_mean_derivative(1.0, 1), 6)
    0.367879
    """
    lm, scalar = _lams(lam)
    c = check_int("C", C, low=1)
    k = check_int("order", order, low=1, high=2)
    if k == 1:
        out = special.gammaincc(c, lm)
    else:
        out = -np.exp(stats.poisson.logpmf(c - 1, lm)) if c > 1 else -np.exp(-lm)
    return _out(out[0]) if scalar else out


def clipped_poisson_mean_inverse(y, C: int):
    r"""Inverse :math:`h^{-1}(y)` of :func:`clipped_poisson_mean` for :math:`0 \le y < C`.

    h is increasing and concave from h(0) = 0 towards C. The root is bracketed
    on :math:`[y, \lambda_{hi}]` (h(λ) <= λ puts it right of y), found by
    vectorised bisection on :math:`\log\lambda` and polished by Newton steps.

    Raises
    ------
    ValueError
        If any y lies outside [0, C) (no finite preimage). Algorithm 5's
        estimator projects first (:func:`debiased_count`).

    Examples
    --------
    >>> import math
    >>> round(clipped_poisson_mean_inverse(2 - 3 / math.e, 2), 10)
    1.0
    """
    yy, scalar = _lams(y, "y")
    c = check_int("C", C, low=1)
    if np.any(yy >= c):
        raise ValueError(f"y must lie in [0, C) = [0, {c}); got max {yy.max()!r}")
    out = np.zeros_like(yy)
    pos = yy > 0
    if np.any(pos):
        target = yy[pos]
        lo = target.copy()
        hi = np.maximum(2.0 * target, 1.0)
        for _ in range(200):
            low_h = clipped_poisson_mean(hi, c) < target
            if not np.any(low_h):
                break
            hi = np.where(low_h, 2.0 * hi, hi)
        for _ in range(100):
            mid = np.sqrt(lo * hi)
            below = clipped_poisson_mean(mid, c) < target
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        x = np.sqrt(lo * hi)
        for _ in range(3):
            step = (clipped_poisson_mean(x, c) - target) / np.maximum(clipped_poisson_mean_derivative(x, c), 1e-300)
            x = np.clip(x - step, lo, hi)
        out[pos] = x
    return _out(out[0]) if scalar else out


def gamma_c(C: int) -> float:
    r""":math:`\gamma_C = 1/\Pr[\mathrm{Poi}(1) < C]` of Liu et al. 2023, Theorem C.1.

    Examples
    --------
    >>> round(gamma_c(1), 6)  # e
    2.718282
    """
    c = check_int("C", C, low=1)
    return float(1.0 / special.gammaincc(c, 1.0))


def debiased_count(counts, *, C: int, epsilon: float, lam_max: float, rng=None) -> float:
    r"""Algorithm 5 of Liu et al. 2023: clipped, noised and debiased total count (d = 1), ε-DP.

    :math:`Y_i = \min(N_i, C)`, :math:`y = (\sum_i Y_i + \mathrm{Lap}(C/\varepsilon))/n`,
    :math:`\widehat N = n\, h^{-1}(\Pi(y))` where Π projects y onto
    :math:`[0, h(\lambda_{max})]` (post-processing; Theorem C.1 takes
    :math:`\lambda_{max} = 1`).

    Privacy: ε-DP under replacement of one user with the number of users n known
    and fixed, which is the paper's model (its Sec. 3). Each :math:`Y_i` lies in
    [0, C], so replacing a user moves the clipped sum by at most C, and the rest is
    post-processing of the Laplace release *given n*. Under add/remove neighbours the
    estimate as released is not ε-DP for any finite ε: n enters the output (the
    estimate is capped at :math:`n\lambda_{max}`, an atom whose position reveals n).
    There, release the noisy sum and a private count of users instead.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Parameters
    ----------
    counts : array_like, shape (n,)
        Users' non-negative integer counts of the item.
    C : int
        Clipping level >= 1.
    epsilon : float
    lam_max : float
        Upper end of the range of λ̂ (> 0).
    rng : Generator, int or None

    Examples
    --------
    >>> est = debiased_count([0, 1, 2, 3] * 100, C=2, epsilon=1.0, lam_max=5.0, rng=0)
    >>> 400 < est < 800
    True
    """
    x = check_array("counts", counts, ndim=1, low=0.0, integer=True, min_size=1)
    c = check_int("C", C, low=1)
    eps = _epsilon(epsilon)
    lmax = check_real("lam_max", lam_max, low=0.0, low_open=True)
    gen = as_generator(rng)
    n = x.size
    y = (np.minimum(x, c).sum() + gen.laplace(0.0, c / eps)) / n
    y = min(max(y, 0.0), clipped_poisson_mean(lmax, c))
    if y >= c:  # h(lam_max) rounds to C in double precision
        return n * lmax
    return float(n * min(clipped_poisson_mean_inverse(y, c), lmax))
