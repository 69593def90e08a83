"""Non-private threshold baselines: quantiles of the users' norms, the M-th largest ℓ2
norm, and the ℓ2-error quantile.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._validation import check_array, check_int, check_real, check_scale

__all__ = ["norm_quantile", "m_quantile_threshold", "chi_mean", "l2_quantile_rank", "l2_quantile_threshold"]


def norm_quantile(norms, q: float) -> float:
    r"""Non-private baseline threshold: the ``q``-quantile of the users' norms (e.g. median, 90 %).

    Examples
    --------
    >>> norm_quantile([1, 2, 3, 4, 5], 0.5)
    3.0
    """
    x = check_array("norms", norms, ndim=1, low=0.0, min_size=1)
    qq = check_real("q", q, low=0.0, high=1.0)
    return float(np.quantile(x, qq))


def m_quantile_threshold(l2_norms, *, d: int, sigma: float) -> float:
    r"""The :math:`\lceil M\rceil`-th largest ℓ2 norm, :math:`M = d\sigma\sqrt{2/\pi}`
    ("M-quantile" of Liu et al. 2023, Sec. 7.1).

    The analogue, for the Gaussian mechanism, of the Amin et al. (2019) quantile,
    and close to the ℓ2-norm quantile of Huang et al. (2021); 0.0 when
    :math:`\lceil M\rceil > n`.

    Examples
    --------
    >>> m_quantile_threshold([5.0, 1.0, 3.0], d=1, sigma=1.0)
    5.0
    """
    l2 = check_array("l2_norms", l2_norms, ndim=1, low=0.0, min_size=1)
    dd = check_int("d", d, low=1)
    sig = check_scale("sigma", sigma)
    k = math.ceil(dd * sig * math.sqrt(2.0 / math.pi))
    if k > l2.size:
        return 0.0
    return float(np.partition(l2, l2.size - k)[l2.size - k])


def chi_mean(d: int) -> float:
    r""":math:`\mathbb E\|Z\|_2` for :math:`Z \sim \mathcal N(0, I_d)`:
    :math:`\sqrt2\,\Gamma(\frac{d+1}2)/\Gamma(\frac d2)` (log-space).

    Examples
    --------
    >>> round(chi_mean(1), 6)  # sqrt(2/pi)
    0.797885
    """
    dd = check_int("d", d, low=1)
    return float(math.exp(0.5 * math.log(2.0) + special.gammaln((dd + 1) / 2.0) - special.gammaln(dd / 2.0)))


def l2_quantile_rank(*, d: int, sigma: float) -> int:
    r"""Rank :math:`k = \lceil \sigma\,\mathbb E\|Z\|_2\rceil` of the ℓ2-error quantile (Huang et al. 2021 reading).

    The ℓ2 error of Algorithm 1 (Gaussian) obeys, by the triangle inequality,
    :math:`\mathbb E\|\widehat N_G - \overline N\|_2 \le U_2(C) = \sum_i (\|N_i\|_2 - C)_+ + C\sigma\,\mathbb E\|Z\|_2`
    (:func:`chi_mean`), whose right derivative :math:`\sigma\mathbb E\|Z\|_2 - \#\{i : \|N_i\|_2 > C\}`
    changes sign at the k-th largest ℓ2 norm. This is the ℓ2 analogue of the
    :math:`\lceil M\rceil` of Theorem 4.3, and of order :math:`\sqrt d/\sqrt\rho`
    under ρ-zCDP (:math:`\sigma = 1/\sqrt{2\rho}`), the quantile of the norms that
    Huang et al.'s clipped-mean estimator uses (their constants and log factors aside).

    Examples
    --------
    >>> l2_quantile_rank(d=100, sigma=1.0)
    10
    """
    sig = check_scale("sigma", sigma)
    return max(1, math.ceil(sig * chi_mean(d) - 1e-12))


def l2_quantile_threshold(l2_norms, *, d: int, sigma: float) -> float:
    r"""The :func:`l2_quantile_rank`-th largest ℓ2 norm: a Huang et al. (2021) baseline (Liu et al. 2023, Sec. 4).

    Minimises :math:`U_2(C)` of :func:`l2_quantile_rank` (a bound on the ℓ2 error);
    Liu et al. 2023 notes that such a quantile of the ℓ2 norms differs from the
    ℓ1-optimal C* of Theorem 4.3. 0.0 when the rank exceeds n.

    Examples
    --------
    >>> l2_quantile_threshold([5.0, 1.0, 3.0, 2.0], d=4, sigma=1.0)
    3.0
    """
    l2 = check_array("l2_norms", l2_norms, ndim=1, low=0.0, min_size=1)
    k = l2_quantile_rank(d=d, sigma=sigma)
    if k > l2.size:
        return 0.0
    return float(np.partition(l2, l2.size - k)[l2.size - k])
