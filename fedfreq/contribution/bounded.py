"""Bounded domains (Liu et al., 2023, Section 4): Algorithm 1, the calibration of Lemma 4.1,
the exact expected ℓ1 losses, the convex surrogate G(C) and the thresholds of Lemma 4.2 and
Theorem 4.3.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .._rng import as_generator
from .._validation import call_checked, check_array, check_choice, check_int, check_real, check_scale
from ..accounting import gaussian_sigma
from ..cpbm import clip_l2  # ℓ2 clipping of rows lives in cpbm (the OcPBM paper); reused here, not re-exported
from ..deploy import release_values
from ._checks import _delta, _epsilon, _finite_loss, _histograms, _out, _threshold, _thresholds

__all__ = [
    "lemma41_sigma",
    "bounded_histogram",
    "laplace_expected_loss",
    "gaussian_expected_loss",
    "laplace_surrogate",
    "threshold_objective",
    "laplace_threshold",
    "gaussian_threshold",
    "regularized_threshold",
    "min_loss",
]


# Algorithm 1 (bounded domain)
def lemma41_sigma(epsilon: float, delta: float, *, method: str = "analytic") -> float:
    r"""Noise multiplier σ of Algorithm 1 (Liu et al. 2023, Lemma 4.1), per unit of ℓ2 sensitivity.

    ``method="lemma"``: :math:`\sigma = \sqrt{2\log(1.32/\delta)}/\varepsilon`, the
    formula Lemma 4.1 states for ε <= 1. ``method="analytic"``: the smallest σ
    of the analytic Gaussian mechanism (Balle & Wang 2018, the calibration
    Lemma 4.1 cites for ε > 1), from :func:`fedfreq.accounting.gaussian_sigma`.
    Algorithm 1 adds :math:`\mathcal N(0, C^2\sigma^2)`, which is (ε, δ)-DP when
    the ℓ2 sensitivity is C (add/remove neighbours); under replacement use
    ``sqrt(2) * sigma`` (:func:`clip_sensitivity`).

    Examples
    --------
    >>> round(lemma41_sigma(1.0, 1e-5, method="lemma"), 3)
    4.856
    """
    eps = _epsilon(epsilon)
    d = _delta(delta)
    check_choice("method", method, {"lemma", "analytic"})
    if method == "lemma":
        if eps > 1.0:
            raise ValueError(f"epsilon must lie in (0, 1] for method='lemma'; got {epsilon!r}")
        return math.sqrt(2.0 * math.log(1.32 / d)) / eps
    return gaussian_sigma(eps, d, sensitivity=1.0)


def bounded_histogram(
    histograms,
    *,
    C: float,
    epsilon: float,
    delta: float = 0.0,
    sigma: float | None = None,
    rng=None,
    backend: str = "numpy",
) -> np.ndarray:
    r"""Algorithm 1 of Liu et al. 2023: clip every user, sum, add noise.

    With ``delta == 0``: :math:`\widehat N_L = \sum_i \mathrm{clip}_1(N_i, C) + \mathrm{Lap}(C/\varepsilon)^d`.
    With ``delta > 0``: :math:`\widehat N_G = \sum_i \mathrm{clip}_2(N_i, C) + \mathcal N(0, C^2\sigma^2 I_d)`
    with ``sigma`` given, or :func:`lemma41_sigma` (analytic) when ``sigma`` is None.
    The guarantee is (ε, δ)-DP for add/remove neighbours (see :func:`clip_sensitivity`
    for replacement).

    With ``backend="numpy"`` (the default) the noise is drawn with numpy's
    floating-point sampler: a simulation of the mechanism's law for measuring accuracy,
    not a deployable release (a float sampler has a support gap). ``backend="opendp"``
    draws it with OpenDP's exact samplers (:func:`fedfreq.deploy.release_values`); ``rng``
    is then unused.

    Parameters
    ----------
    histograms : array_like, shape (n, d)
    C : float
        Clipping threshold > 0.
    epsilon : float
        ε > 0.
    delta : float, default 0
        0 selects the Laplace variant; δ in (0, 1) the Gaussian one.
    sigma : float, optional
        Noise multiplier for the Gaussian variant (> 0).
    rng : Generator, int or None

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> bounded_histogram([[2, 0], [0, 1]], C=2.0, epsilon=1.0, rng=0).shape
    (2,)
    """
    N = _histograms(histograms)
    c = _threshold(C)
    eps = _epsilon(epsilon)
    dl = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    gen = as_generator(rng)
    d = N.shape[1]
    if dl == 0.0:
        if sigma is not None:
            raise ValueError("sigma must be None when delta == 0 (the Laplace variant)")
        w = c / np.maximum(c, N.sum(axis=1))
        if backend != "numpy":
            return release_values(w @ N, mechanism="laplace", scale=c / eps, backend=backend)
        return w @ N + gen.laplace(0.0, c / eps, size=d)
    sig = lemma41_sigma(eps, dl) if sigma is None else check_real("sigma", sigma, low=0.0, low_open=True)
    total = clip_l2(N.astype(float), c).sum(axis=0)
    if backend != "numpy":
        return release_values(total, mechanism="gaussian", scale=c * sig, backend=backend)
    return total + gen.normal(0.0, c * sig, size=d)


def _bias_matrix(N: np.ndarray, Cs: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """b_j(C) = sum_i N_ij * max(1 - C/||N_i||, 0), shape (len(Cs), d)."""
    safe = np.where(norms > 0, norms, 1.0)
    w = np.maximum(1.0 - Cs[:, None] / safe[None, :], 0.0) * (norms > 0)[None, :]
    return w @ N.astype(float)


def laplace_expected_loss(histograms, C, *, epsilon: float):
    r"""Exact :math:`\mathcal L_L(C, D) = \mathbb E\|\widehat N_L - \overline N\|_1` of Algorithm 1 (Laplace).

    The ℓ1 clipping bias of item j is :math:`b_j = \sum_i N_{ij}(1 - C/\|N_i\|_1)_+ \ge 0`
    and :math:`\mathbb E|b + Z| = b + s e^{-b/s}` for :math:`Z\sim\mathrm{Lap}(s)`, so

    .. math:: \mathcal L_L(C, D) = \sum_{j=1}^d \Big(b_j(C) + \frac{C}{\varepsilon} e^{-\varepsilon b_j(C)/C}\Big).

    C = 0 is allowed (the release is the zero histogram, loss :math:`\|\overline N\|_1`).

    Parameters
    ----------
    histograms : array_like, shape (n, d)
    C : float or array_like
        Threshold(s) > 0 (vectorised).
    epsilon : float

    Examples
    --------
    >>> round(laplace_expected_loss([[4, 0], [1, 1]], 2.0, epsilon=1.0), 4)
    4.7358
    """
    N = _histograms(histograms)
    Cs, scalar = _thresholds(C, allow_zero=True)
    eps = _epsilon(epsilon)
    b = _bias_matrix(N, Cs, N.sum(axis=1).astype(float))
    s = (Cs / eps)[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        noise = np.where(s > 0, s * np.exp(-b / np.where(s > 0, s, 1.0)), 0.0)
        out = _finite_loss(np.sum(b + noise, axis=1), "C, epsilon and the histograms")
    return _out(out[0]) if scalar else out


def gaussian_expected_loss(histograms, C, *, sigma: float):
    r"""Exact :math:`\mathcal L_G(C, D) = \mathbb E\|\widehat N_G - \overline N\|_1` of Algorithm 1 (Gaussian).

    With the ℓ2 clipping bias :math:`b_j = \sum_i N_{ij}(1 - C/\|N_i\|_2)_+` and
    :math:`\tau = C\sigma`, the folded-normal mean gives

    .. math:: \mathcal L_G(C, D) = \sum_j \Big(\tau\sqrt{2/\pi}\, e^{-b_j^2/2\tau^2} + b_j\,(1 - 2\Phi(-b_j/\tau))\Big).

    Examples
    --------
    >>> round(gaussian_expected_loss([[3, 4]], 5.0, sigma=1.0), 4)
    7.9788
    """
    N = _histograms(histograms)
    Cs, scalar = _thresholds(C, allow_zero=True)
    sig = check_scale("sigma", sigma)
    l2 = np.sqrt(np.einsum("ij,ij->i", N.astype(float), N.astype(float)))
    b = _bias_matrix(N, Cs, l2)
    tau = np.broadcast_to((Cs * sig)[:, None], b.shape)
    t1 = np.where(tau > 0, tau, 1.0)
    # (b/tau)^2 may overflow for a tiny tau: e^-inf = 0 is then the exact limit
    with np.errstate(over="ignore"):
        folded = tau * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * (b / t1) ** 2) + b * (1.0 - 2.0 * special.ndtr(-b / t1))
        out = _finite_loss(np.sum(np.where(tau > 0, folded, b), axis=1), "C, sigma and the histograms")
    return _out(out[0]) if scalar else out


def _norm_pair(l1_norms, l2_norms, d: int) -> tuple[np.ndarray, np.ndarray]:
    l1 = check_array("l1_norms", l1_norms, ndim=1, low=0.0, min_size=1)
    l2 = check_array("l2_norms", l2_norms, shape=(l1.size,), low=0.0)
    tol = 1e-9 * np.maximum(l1, 1.0)
    if np.any(l2 > l1 + tol):
        raise ValueError("l2_norms must not exceed l1_norms entrywise (||x||_2 <= ||x||_1)")
    if np.any(l1 > math.sqrt(d) * l2 + tol):
        raise ValueError("l1_norms must not exceed sqrt(d) * l2_norms entrywise (Cauchy-Schwarz); check d")
    return l1, l2


def laplace_surrogate(user_sizes, C, *, d: int, epsilon: float):
    r"""Upper bound :math:`U(C) = \sum_i (m_i - C)_+ + dC/\varepsilon` on :math:`\mathcal L_L(C, D)`.

    The proof of Lemma 4.2 (after Amin et al. 2019) sandwiches
    :math:`U(C)/2 \le \mathcal L_L(C, D) \le U(C)`.

    Examples
    --------
    >>> laplace_surrogate([1, 5, 9], 4.0, d=2, epsilon=1.0)
    14.0
    """
    m = check_array("user_sizes", user_sizes, ndim=1, low=0.0, min_size=1)
    dd = check_int("d", d, low=1)
    eps = _epsilon(epsilon)
    Cs, scalar = _thresholds(C, allow_zero=True)  # C = 0 keeps nothing: U(0) = sum of the sizes
    with np.errstate(over="ignore"):
        out = _finite_loss(np.maximum(m[None, :] - Cs[:, None], 0.0).sum(axis=1) + dd * Cs / eps, "C, d and epsilon")
    return _out(out[0]) if scalar else out


def threshold_objective(l1_norms, l2_norms, C, *, d: int, sigma: float):
    r"""The convex objective :math:`G(C) = \sum_i f_i(C) + CM` of Liu et al. 2023, Eq. (3).

    :math:`f_i(C) = (1 - C/\|N_i\|_2)_+\,\|N_i\|_1` and :math:`M = d\sigma\sqrt{2/\pi}`.
    It bounds the Gaussian loss: :math:`G(C)/2 \le \mathcal L_G(C, D) \le G(C)`.

    Examples
    --------
    >>> round(threshold_objective([7.0], [5.0], 5.0, d=2, sigma=1.0), 4)
    7.9788
    """
    dd = check_int("d", d, low=1)
    l1, l2 = _norm_pair(l1_norms, l2_norms, dd)
    sig = check_scale("sigma", sigma)
    Cs, scalar = _thresholds(C, allow_zero=True)  # C* = 0 when the noise dominates
    M = dd * sig * math.sqrt(2.0 / math.pi)
    safe = np.where(l2 > 0, l2, 1.0)
    with np.errstate(over="ignore"):
        f = np.maximum(1.0 - Cs[:, None] / safe[None, :], 0.0) * l1[None, :]
        out = _finite_loss(f.sum(axis=1) + Cs * M, "C, d, sigma and the norms")
    return _out(out[0]) if scalar else out


def laplace_threshold(user_sizes, *, d: int, epsilon: float) -> float:
    r"""Lemma 4.2 of Liu et al. 2023: the :math:`\lceil d/\varepsilon\rceil`-th largest user size.

    The threshold minimises the surrogate :math:`U(C) = \sum_i (m_i - C)_+ + dC/\varepsilon`
    (:func:`laplace_surrogate`), whose right derivative is
    :math:`d/\varepsilon - \#\{i : m_i > C\}`; since
    :math:`U/2 \le \mathcal L_L \le U`, it is a 2-approximation of the best C.
    When :math:`\lceil d/\varepsilon\rceil > n`, U increases on :math:`[0, \infty)`
    and the minimiser is C = 0 (release the all-zero histogram); 0.0 is returned.

    Parameters
    ----------
    user_sizes : array_like, shape (n,)
        :math:`m_i = \|N_i\|_1 \ge 0`.
    d : int
        Domain size >= 1.
    epsilon : float
        ε > 0 of the Laplace mechanism.

    Examples
    --------
    >>> laplace_threshold([1, 9, 3, 7, 5], d=2, epsilon=1.0)
    7.0
    """
    m = check_array("user_sizes", user_sizes, ndim=1, low=0.0, min_size=1)
    dd = check_int("d", d, low=1)
    eps = _epsilon(epsilon)
    k = max(1, math.ceil(dd / eps - 1e-12))  # at least the largest size: the limit as epsilon grows
    if k > m.size:
        return 0.0
    return float(np.partition(m, m.size - k)[m.size - k])


def min_loss(loss, upper: float, *, points: int = 2000) -> float:
    r"""The least value of a loss over thresholds :math:`C \in (0, \text{upper}]`, by search.

    A reference minimum for checking the closed-form thresholds (:func:`laplace_threshold`,
    :func:`gaussian_threshold`) against: ``loss`` is evaluated on ``points`` equally
    spaced thresholds from ``upper/points`` to ``upper``, and the best grid point is
    refined by a bounded scalar minimisation between its two neighbours (absolute
    tolerance 1e-9 in :math:`C`). The result is the smaller of the two values, so it never
    exceeds the grid's minimum. It is exact only for losses that are unimodal near their
    grid minimum, which the chapters' losses are (convex or piecewise smooth in :math:`C`).

    Parameters
    ----------
    loss : callable
        Maps an array of thresholds to an array of losses, and a float to a float.
    upper : float
        Largest threshold searched, ``> 0`` and finite.
    points : int
        Grid size, ``>= 3``.

    Examples
    --------
    >>> round(min_loss(lambda c: (c - 1.0) ** 2 + 2.0, 4.0), 9)
    2.0
    >>> min_loss(lambda c: c, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: upper must lie in (0, inf); got 0.0
    """
    if not callable(loss):
        raise ValueError(f"loss must be callable; got {type(loss).__name__}")
    upper = check_real("upper", upper, low=0.0, low_open=True)
    points = check_int("points", points, low=3)
    grid = np.linspace(upper / points, upper, points)
    bad = f"loss must return finite losses, one per threshold, on the grid of (0, upper = {upper!r}]"
    try:
        vals = np.asarray(call_checked("loss", loss, grid), dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{bad}: {exc}") from exc
    if vals.shape != grid.shape or not np.all(np.isfinite(vals)):
        raise ValueError(bad)

    def at(c: float) -> float:
        value = float(call_checked("loss", loss, c))
        if not math.isfinite(value):
            raise ValueError(bad)
        return value

    k = int(np.argmin(vals))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = optimize.minimize_scalar(at, bounds=(lo, hi), method="bounded", options={"xatol": 1e-9})
    if not res.success:  # pragma: no cover - bounded Brent converges on any finite interval
        raise RuntimeError("the bounded refinement did not converge")
    return min(float(vals[k]), float(res.fun))


def gaussian_threshold(l1_norms, l2_norms, *, d: int, sigma: float) -> float:
    r"""Liu et al. 2023, Thm. 4.3: :math:`C^* = \min\{C \ge 0 : \sum_{i:\|N_i\|_2 > C} \|N_i\|_1/\|N_i\|_2 \le M\}`.

    With :math:`M = d\sigma\sqrt{2/\pi}`, C* minimises the convex :math:`G(C)`
    (:func:`threshold_objective`) and is a 2-approximation of the best threshold
    for Algorithm 1 with Gaussian noise :math:`\mathcal N(0, C^2\sigma^2)`.
    It is always 0 or one of the ``l2_norms``.

    Parameters
    ----------
    l1_norms, l2_norms : array_like, shape (n,)
        Users' :math:`\|N_i\|_1` and :math:`\|N_i\|_2` (users with empty histograms
        have both 0 and never count).
    d : int
        Domain size.
    sigma : float
        Noise multiplier σ > 0.

    Examples
    --------
    >>> gaussian_threshold([1.0, 2.0, 8.0], [1.0, 2.0, 8.0], d=1, sigma=1.0)
    8.0
    """
    dd = check_int("d", d, low=1)
    l1, l2 = _norm_pair(l1_norms, l2_norms, dd)
    sig = check_real("sigma", sigma, low=0.0, low_open=True)
    M = dd * sig * math.sqrt(2.0 / math.pi)
    pos = l2 > 0
    order = np.argsort(l2[pos])
    v = l2[pos][order]
    r = (l1[pos] / l2[pos])[order]
    suffix = np.concatenate([np.cumsum(r[::-1])[::-1], [0.0]])  # suffix[k] = sum r[k:]
    cands = np.concatenate([[0.0], v])
    S = suffix[np.searchsorted(v, cands, side="right")]  # sum of r over v > c
    ok = S <= M * (1.0 + 1e-12)
    return float(cands[ok].min())


def _ratio_sum(v: np.ndarray, suffix: np.ndarray, C):
    return suffix[np.searchsorted(v, C, side="right")]


def regularized_threshold(l1_norms, l2_norms, *, d: int, sigma: float, lam: float, s: float | None = None) -> float:
    r"""Minimiser :math:`C'` of :math:`F(C) = G(C)/n + \frac{\lambda}{2}C^2`, C >= 0 (Liu et al. 2023, Alg. 2, Eq. 5).

    With the ratios :math:`r_i = \|N_i\|_1/\|N_i\|_2` capped at :math:`\sqrt s` (so
    that every :math:`f_i` is :math:`\sqrt s`-Lipschitz, as Algorithm 2 assumes),
    the right derivative :math:`(M - \sum_{i:\|N_i\|_2 > C} r_i)/n + \lambda C` is
    non-decreasing, and C' is its first non-negative point (found by bisection to
    machine precision).

    Examples
    --------
    >>> round(regularized_threshold([1.0, 2.0, 8.0], [1.0, 2.0, 8.0], d=1, sigma=1.0, lam=1e-3), 6)
    8.0
    """
    dd = check_int("d", d, low=1)
    l1, l2 = _norm_pair(l1_norms, l2_norms, dd)
    sig = check_real("sigma", sigma, low=0.0, low_open=True)
    lm = check_real("lam", lam, low=0.0, low_open=True)
    ss = float(dd) if s is None else check_real("s", s, low=1.0)
    n = l1.size
    M = dd * sig * math.sqrt(2.0 / math.pi)
    pos = l2 > 0
    order = np.argsort(l2[pos])
    v = l2[pos][order]
    r = np.minimum((l1[pos] / l2[pos])[order], math.sqrt(ss))
    suffix = np.concatenate([np.cumsum(r[::-1])[::-1], [0.0]])

    def grad(c: float) -> float:
        return (M - float(_ratio_sum(v, suffix, c))) / n + lm * c

    if grad(0.0) >= 0:
        return 0.0
    lo, hi = 0.0, max(float(v.max()) if v.size else 1.0, float(suffix[0]) / (n * lm)) + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if grad(mid) >= 0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 4 * np.finfo(float).eps * hi:
            break
    return hi
