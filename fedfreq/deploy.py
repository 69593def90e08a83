r"""From simulation to deployment: exact discrete noise, and why float noise is not DP.

The chapters draw Laplace and Gaussian noise with numpy's continuous samplers. Their
*law* is the one the privacy proofs assume, so they are the right tool for measuring
accuracy, but a floating-point sampler does not produce every real number: numpy's
``Generator.laplace(loc, scale)`` maps a uniform on the grid
:math:`\{k\,2^{-53}\}` through ``log``, so its outputs form a sparse, ``loc``-dependent
set of doubles. An output seen under one dataset is often *impossible* under its
neighbour, and then no ε bounds the privacy loss (Mironov 2012). This module

- models numpy's Laplace sampler exactly (:func:`numpy_laplace_model`) and decides
  whether a double is a possible output (:func:`numpy_laplace_possible`), which gives the
  support-gap attack (:func:`float_laplace_gap`);
- releases integer counts with **discrete** Laplace and discrete Gaussian noise
  (Canonne, Kamath & Steinke 2020), drawn either by OpenDP's exact samplers
  (``backend="opendp"``, for deployment: integer arithmetic and a cryptographic random
  source, not seedable) or by a seeded numpy simulation of the same law
  (``backend="numpy"``, for reproducible experiments);
- gives the exact log-pmfs the accountants of :mod:`fedfreq.accounting` assume
  (:func:`discrete_laplace_logpmf`, :func:`discrete_gaussian_logpmf`).

The privacy of the discrete mechanisms is in :func:`fedfreq.accounting.discrete_laplace_epsilon`
and :func:`fedfreq.accounting.discrete_gaussian_rho`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from ._rng import as_generator
from ._validation import SCALE_MAX, SCALE_MIN, check_array, check_choice, check_int, check_real

__all__ = [
    "BACKENDS",
    "numpy_laplace_model",
    "numpy_laplace_possible",
    "float_laplace_gap",
    "discrete_laplace_logpmf",
    "discrete_gaussian_logpmf",
    "discrete_laplace",
    "discrete_gaussian",
    "release_counts",
    "release_values",
]

BACKENDS = ("numpy", "opendp")
_GRID = 2.0**-53  # numpy's next_double: (uint64 >> 11) * 2^-53


def _laplace_one(k: int, loc: float, scale: float) -> float:
    """numpy's random_laplace for the uniform u = k 2^-53 (numpy/random/src/distributions)."""
    u = k * _GRID
    if u >= 0.5:
        return loc - scale * math.log(2.0 - u - u)
    return loc + scale * math.log(u + u)


def _check_float_scale(scale) -> float:
    """The Laplace scale of numpy's sampler, at most 1e150: every output, at most
    37 scales from ``loc``, stays a finite double."""
    return check_real("scale", scale, low=0.0, low_open=True, high=SCALE_MAX, reason="every output must stay finite")


def numpy_laplace_model(u, loc: float, scale: float) -> np.ndarray:
    r"""The output of ``numpy.random.Generator.laplace(loc, scale)`` for a given uniform.

    numpy draws :math:`u` = ``Generator.random()`` (a multiple of :math:`2^{-53}` in
    [0, 1); 0 is redrawn) and returns ``loc - scale*log(2-u-u)`` if :math:`u \ge 1/2`,
    else ``loc + scale*log(u+u)``, in double precision with the C library's ``log``. This
    function evaluates the same expression with the same ``log`` (``math.log``), so for
    the same generator state it reproduces numpy's draws bit for bit.

    Parameters
    ----------
    u : array_like of float
        Uniforms in (0, 1) on the :math:`2^{-53}` grid.
    loc, scale : float
        Location and scale (> 0).

    Examples
    --------
    >>> u = np.random.default_rng(3).random(4)
    >>> bool(np.array_equal(numpy_laplace_model(u, 0.5, 2.0), np.random.default_rng(3).laplace(0.5, 2.0, 4)))
    True
    """
    loc_ = check_real("loc", loc)
    scale_ = _check_float_scale(scale)
    uu = check_array("u", u, min_size=0)
    if np.any((uu <= 0) | (uu >= 1)):
        raise ValueError("u must lie in (0, 1)")
    k = uu / _GRID
    if not np.array_equal(k, np.floor(k)):
        raise ValueError("u must be a multiple of 2**-53 (an output of Generator.random())")
    return np.array([_laplace_one(int(ki), loc_, scale_) for ki in k.ravel()]).reshape(uu.shape)


def _possible_one(y: float, loc: float, scale: float) -> bool:
    # Each branch is non-decreasing in k (log, the product and the sum are monotone under
    # rounding), so a binary search finds the smallest k whose output is >= y.
    lo, hi = (1, 2**52 - 1) if y <= loc else (2**52, 2**53 - 1)
    if _laplace_one(hi, loc, scale) < y or _laplace_one(lo, loc, scale) > y:
        return False
    while lo < hi:
        mid = (lo + hi) // 2
        if _laplace_one(mid, loc, scale) < y:
            lo = mid + 1
        else:
            hi = mid
    return _laplace_one(lo, loc, scale) == y


def numpy_laplace_possible(y, loc: float, scale: float) -> np.ndarray:
    r"""Whether each double in ``y`` is a possible output of ``Generator.laplace(loc, scale)``.

    Decided exactly by a binary search over the :math:`2^{53}-1` uniforms numpy can
    draw (:func:`numpy_laplace_model` is monotone in the uniform on each side of ``loc``).

    Examples
    --------
    >>> y = np.random.default_rng(0).laplace(0.0, 1.0, 3)
    >>> numpy_laplace_possible(y, 0.0, 1.0).tolist()
    [True, True, True]
    """
    loc_ = check_real("loc", loc)
    scale_ = _check_float_scale(scale)
    yy = check_array("y", y, min_size=0)
    return np.array([_possible_one(float(v), loc_, scale_) for v in yy.ravel()], dtype=bool).reshape(yy.shape)


def float_laplace_gap(loc: float, loc_neighbour: float, scale: float, *, trials: int, rng=None) -> float:
    r"""Fraction of numpy Laplace draws at ``loc`` that are impossible at ``loc_neighbour``.

    A release :math:`f(D) + \mathrm{Lap}(b)` drawn with numpy is (ε, δ)-DP only if
    δ is at least this fraction (the event "the output is impossible under D'" has
    probability 0 under D'), whatever ε.

    Parameters
    ----------
    loc, loc_neighbour : float
        The true values on the two neighbouring datasets.
    scale : float
        Laplace scale b > 0.
    trials : int
        Number of draws (>= 1).
    rng : Generator, int or None

    Examples
    --------
    >>> float_laplace_gap(0.0, 1.0, 1.0, trials=200, rng=1) > 0.5
    True
    """
    trials_ = check_int("trials", trials, low=1, high=10**7)
    scale_ = _check_float_scale(scale)
    check_real("loc_neighbour", loc_neighbour)
    y = as_generator(rng).laplace(check_real("loc", loc), scale_, trials_)
    return float(np.mean(~numpy_laplace_possible(y, loc_neighbour, scale_)))


def discrete_laplace_logpmf(k, scale: float) -> np.ndarray:
    r"""Log-pmf of the discrete Laplace law :math:`\Pr[X=k] = \frac{1-e^{-1/t}}{1+e^{-1/t}}e^{-|k|/t}`.

    Parameters
    ----------
    k : array_like of int
    scale : float
        t > 0.

    Examples
    --------
    >>> float(np.exp(discrete_laplace_logpmf(np.arange(-60, 61), 2.0)).sum().round(12))
    1.0
    """
    t = check_real("scale", scale, low=0.0, low_open=True)
    kk = check_array("k", k, integer=True)
    # log((1 - q) / (1 + q)) with q = e^{-1/t}, written with expm1/log1p for large t
    log_norm = math.log(-math.expm1(-1.0 / t)) - math.log1p(math.exp(-1.0 / t))
    return log_norm - np.abs(kk) / t


def _check_sigma(sigma) -> float:
    """σ of the discrete Gaussian in [1e-150, 1e8]: 1/σ² stays finite (below it the
    sampler's acceptance test divides by zero), and the normalising sum over ±40σ stays
    small."""
    return check_real(
        "sigma",
        sigma,
        low=SCALE_MIN,
        high=1e8,
        reason="the normaliser sums over +-40 sigma",
        low_reason="1 / sigma**2 must stay finite",
    )


def discrete_gaussian_logpmf(k, sigma: float) -> np.ndarray:
    r"""Log-pmf of the discrete Gaussian :math:`\Pr[X=k] \propto e^{-k^2/(2\sigma^2)}` on the integers.

    The normaliser is summed over :math:`|j| \le \lceil 40\sigma\rceil + 40` (the rest is
    below :math:`e^{-800}`).

    Examples
    --------
    >>> float(np.exp(discrete_gaussian_logpmf(np.arange(-40, 41), 3.0)).sum().round(12))
    1.0
    """
    s = _check_sigma(sigma)
    kk = check_array("k", k, integer=True)
    j = np.arange(-(math.ceil(40 * s) + 40), math.ceil(40 * s) + 41, dtype=float)
    log_z = float(logsumexp(-(j**2) / (2 * s * s)))
    with np.errstate(over="ignore"):
        out = -(kk.astype(float) ** 2) / (2 * s * s) - log_z
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"k**2 / (2 sigma**2) must stay finite: |k| = {float(np.max(np.abs(kk))):g} is too large for sigma={s!r}"
        )
    return out


def _opendp():
    """Import OpenDP and opt in to its "contrib" components (a global OpenDP setting)."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - opendp is pinned in requirements.txt
        raise ValueError("backend='opendp' needs the opendp package (pip install opendp)") from exc
    dp.enable_features("contrib")
    return dp


def _opendp_noise(kind: str, scale: float, n: int) -> np.ndarray:
    """n draws of OpenDP's discrete Laplace or discrete Gaussian noise (added to zeros)."""
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=int))
    if kind == "laplace":
        meas = dp.m.make_laplace(domain, dp.l1_distance(T=int), scale=scale)
    else:
        meas = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)
    return np.asarray(meas([0] * n), dtype=np.int64)


def discrete_laplace(scale: float, size: int, *, rng=None, backend: str = "numpy") -> np.ndarray:
    r"""Draw ``size`` discrete Laplace variables of scale t (:func:`discrete_laplace_logpmf`).

    ``backend="numpy"`` (simulation, seeded by ``rng``): the difference of two i.i.d.
    geometric variables with success probability :math:`1-e^{-1/t}`, which has exactly
    the discrete Laplace law (up to the rounding of that probability).
    ``backend="opendp"`` (deployment): OpenDP's exact sampler, integer arithmetic and an
    OS cryptographic random source; ``rng`` is ignored and draws are not reproducible.

    Examples
    --------
    >>> discrete_laplace(2.0, 5, rng=0).dtype
    dtype('int64')
    """
    t = check_real("scale", scale, low=0.0, low_open=True, high=1e12)
    n = check_int("size", size, low=0, high=10**8)
    backend_ = check_choice("backend", backend, BACKENDS)
    if backend_ == "opendp":
        return _opendp_noise("laplace", t, n)
    gen = as_generator(rng)
    p = -math.expm1(-1.0 / t)
    return (gen.geometric(p, n) - gen.geometric(p, n)).astype(np.int64)


def discrete_gaussian(sigma: float, size: int, *, rng=None, backend: str = "numpy") -> np.ndarray:
    r"""Draw ``size`` discrete Gaussian variables of scale σ (:func:`discrete_gaussian_logpmf`).

    ``backend="numpy"`` (simulation, seeded by ``rng``): the rejection sampler of Canonne,
    Kamath & Steinke (2020, Algorithm 3): propose :math:`Y` discrete Laplace with
    :math:`t = \lfloor\sigma\rfloor + 1`, accept with probability
    :math:`\exp(-(|Y| - \sigma^2/t)^2/(2\sigma^2))`; the acceptance test is done in floating
    point, so the law is exact up to rounding. ``backend="opendp"``: OpenDP's exact
    sampler (not seedable).

    Examples
    --------
    >>> discrete_gaussian(3.0, 4, rng=0).shape
    (4,)
    """
    s = _check_sigma(sigma)
    n = check_int("size", size, low=0, high=10**8)
    backend_ = check_choice("backend", backend, BACKENDS)
    if backend_ == "opendp":
        return _opendp_noise("gaussian", s, n)
    gen = as_generator(rng)
    t = math.floor(s) + 1
    out = np.empty(0, dtype=np.int64)
    while out.size < n:
        batch = max(16, 2 * (n - out.size))
        y = discrete_laplace(t, batch, rng=gen)
        accept = gen.random(batch) < np.exp(-((np.abs(y) - s * s / t) ** 2) / (2 * s * s))
        out = np.concatenate([out, y[accept]])
    return out[:n]


def release_counts(counts, *, mechanism: str, scale: float, rng=None, backend: str = "numpy") -> np.ndarray:
    r"""Release integer counts with discrete noise: the deployable form of a noisy histogram.

    Parameters
    ----------
    counts : array_like of int
        The exact counts (any shape).
    mechanism : {"laplace", "gaussian"}
        Discrete Laplace of scale t (ε-DP with ε = Δ₁/t,
        :func:`fedfreq.accounting.discrete_laplace_epsilon`) or discrete Gaussian of scale
        σ (ρ-zCDP with ρ = Δ₂²/(2σ²), :func:`fedfreq.accounting.discrete_gaussian_rho`).
    scale : float
        t or σ, > 0.
    rng : Generator, int or None
        Used by the numpy backend only.
    backend : {"numpy", "opendp"}
        Seeded simulation of the same law, or OpenDP's exact samplers (deployment).

    Returns
    -------
    ndarray of int64, the shape of ``counts``

    Examples
    --------
    >>> release_counts([3, 0, 7], mechanism="laplace", scale=1.0, rng=0).shape
    (3,)
    """
    arr = check_array("counts", counts, integer=True)
    mech = check_choice("mechanism", mechanism, ("laplace", "gaussian"))
    draw = discrete_laplace if mech == "laplace" else discrete_gaussian
    noise = draw(scale, arr.size, rng=rng, backend=backend)
    return arr.astype(np.int64) + noise.reshape(arr.shape)


def release_values(values, *, mechanism: str, scale: float, rng=None, backend: str = "numpy") -> np.ndarray:
    r"""Add Laplace or Gaussian noise to real values: simulated with numpy, or safely with OpenDP.

    For real-valued releases (clipped, rescaled histograms; sketch counters after
    normalisation; means). ``backend="numpy"`` draws the continuous law with numpy's float
    samplers: right for measuring accuracy, but it has the support gap of
    :func:`float_laplace_gap` and is not a safe release. ``backend="opendp"`` draws
    OpenDP's float Laplace / Gaussian, which samples exactly on a fine grid of doubles
    and so has no such gap; its draws are not reproducible. Integer counts are better
    released with :func:`release_counts`.

    Parameters
    ----------
    values : array_like of float
        Finite values (any shape).
    mechanism : {"laplace", "gaussian"}
        Laplace of scale b (ε = Δ₁/b) or Gaussian of standard deviation σ.
    scale : float
        b or σ, > 0.
    rng : Generator, int or None
        Used by the numpy backend only.
    backend : {"numpy", "opendp"}

    Returns
    -------
    ndarray of float, the shape of ``values``

    Examples
    --------
    >>> release_values([0.5, 2.0], mechanism="gaussian", scale=1.0, rng=0).shape
    (2,)
    """
    x = check_array("values", values)
    mech = check_choice("mechanism", mechanism, ("laplace", "gaussian"))
    b = check_real("scale", scale, low=0.0, low_open=True, high=1e12)
    backend_ = check_choice("backend", backend, BACKENDS)
    if backend_ == "numpy":
        gen = as_generator(rng)
        noise = gen.laplace(0.0, b, x.shape) if mech == "laplace" else gen.normal(0.0, b, x.shape)
        return x + noise
    if x.size == 0:
        return x.copy()
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=int(x.size))
    if mech == "laplace":
        meas = dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=b)
    else:
        meas = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=b)
    return np.asarray(meas([float(v) for v in x.ravel()]), dtype=float).reshape(x.shape)
