"""Textbook baseline mechanisms and their unbiased estimators.

The Laplace and Gaussian mechanisms (central model) and binary / k-ary
randomized response (local model), with the exact variances of the estimators
later chapters compare against. Privacy guarantees of these mechanisms are
computed in :mod:`fedfreq.accounting` (:func:`~fedfreq.accounting.rdp_laplace`,
:func:`~fedfreq.accounting.gaussian_delta`,
:func:`~fedfreq.accounting.rdp_randomized_response`).

The samplers use floating-point arithmetic from numpy. They are faithful
simulations of the mechanisms' output distributions, not side-channel-safe DP
implementations.

References
----------
- [DMNS06] C. Dwork, F. McSherry, K. Nissim, A. Smith. "Calibrating Noise to
  Sensitivity in Private Data Analysis." TCC 2006.
- [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
  Privacy." Foundations and Trends in TCS 9(3-4), 2014.
- [W65] S. L. Warner. "Randomized Response: A Survey Technique for Eliminating
  Evasive Answer Bias." JASA 60(309), 1965.
- [KOV16] P. Kairouz, S. Oh, P. Viswanath. "Extremal Mechanisms for Local
  Differential Privacy." JMLR 17, 2016.
- [WBLJ17] T. Wang, J. Blocki, N. Li, S. Jha. "Locally Differentially Private
  Protocols for Frequency Estimation." USENIX Security 2017.
"""

from __future__ import annotations

import math

import numpy as np

from ._rng import as_generator
from ._validation import check_array, check_epsilon, check_int, check_ndim, check_real, check_scale
from .deploy import release_values

__all__ = [
    "laplace_mechanism",
    "laplace_variance",
    "gaussian_mechanism",
    "gaussian_variance",
    "randomized_response",
    "rr_debias_count",
    "rr_count_variance",
    "kary_randomized_response",
    "kary_rr_frequency_estimate",
    "kary_rr_count_variance",
    "oue_frequency_estimate",
    "oue_count_variance",
]


# ---------------------------------------------------------------------------
# private helpers
# ---------------------------------------------------------------------------


def _check_values(values) -> tuple[np.ndarray, bool]:
    scalar = check_ndim("values", values) == 0
    if scalar:
        return np.asarray(check_real("values", values), dtype=float), True
    return check_array("values", values), False


def _check_epsilon(epsilon) -> float:
    return check_epsilon("epsilon", epsilon)


def _kary_probs(eps: float, k: int) -> tuple[float, float, float]:
    """(p, q, p - q) of k-RR (binary RR is k = 2).

    Written with exp(-eps) so that a large eps does not overflow, and with p - q
    formed by ``expm1`` so that it keeps its relative accuracy for a tiny eps.
    """
    w = math.exp(-eps)
    denom = 1.0 + (k - 1) * w
    return 1.0 / denom, w / denom, -math.expm1(-eps) / denom


# ---------------------------------------------------------------------------
# central-model noise addition
# ---------------------------------------------------------------------------


def laplace_mechanism(values, *, sensitivity: float, epsilon: float, rng=None, backend: str = "numpy"):
    r"""Laplace mechanism: add i.i.d. Laplace(Δ/ε) noise to every entry.

    .. math:: M(x) = f(x) + Z,\qquad Z_j \sim \mathrm{Lap}(b),\ b = \Delta/\varepsilon,

    is ε-DP when Δ bounds the ℓ1 distance between f on neighbouring datasets
    (Dwork et al. 2006; Dwork & Roth 2014, Theorem 3.6). Its exact RDP curve is
    :func:`fedfreq.accounting.rdp_laplace` with ``scale = Δ/ε``.

    With ``backend="numpy"`` (the default) the noise is drawn with numpy's
    floating-point sampler: a simulation of the mechanism's law for measuring accuracy,
    not a deployable release (a float sampler has a support gap). ``backend="opendp"``
    draws it with OpenDP's exact samplers (:func:`fedfreq.deploy.release_values`); ``rng``
    is then unused.

    Parameters
    ----------
    values : float or array_like
        The exact query answer(s) f(x) (finite).
    sensitivity : float
        ℓ1 sensitivity Δ > 0.
    epsilon : float
        Privacy parameter ε > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness (see :func:`fedfreq._rng.as_generator`).

    Returns
    -------
    float or ndarray
        Noisy answers with the shape of ``values``.

    Examples
    --------
    >>> out = laplace_mechanism([10.0, 20.0], sensitivity=1.0, epsilon=1.0, rng=0)
    >>> out.shape
    (2,)
    """
    x, scalar = _check_values(values)
    sens = check_scale("sensitivity", sensitivity)
    eps = _check_epsilon(epsilon)
    gen = as_generator(rng)
    if backend != "numpy":
        out = release_values(x, mechanism="laplace", scale=sens / eps, backend=backend)
        return float(out) if scalar else out
    out = x + gen.laplace(0.0, sens / eps, size=x.shape)
    return float(out) if scalar else out


def laplace_variance(*, sensitivity: float, epsilon: float) -> float:
    r"""Variance of the Laplace mechanism's noise per coordinate.

    .. math:: \operatorname{Var}[\mathrm{Lap}(b)] = 2b^2 = 2\Delta^2/\varepsilon^2.

    Examples
    --------
    >>> laplace_variance(sensitivity=1.0, epsilon=2.0)
    0.5
    """
    sens = check_scale("sensitivity", sensitivity)
    eps = _check_epsilon(epsilon)
    return 2.0 * (sens / eps) ** 2


def gaussian_mechanism(values, *, sensitivity: float, sigma: float, rng=None, backend: str = "numpy"):
    r"""Gaussian mechanism: add i.i.d. :math:`\mathcal N(0, \sigma^2)` noise to every entry.

    ``sigma`` is the absolute noise standard deviation, in the units of
    ``values``; ``sensitivity`` is the ℓ2 sensitivity Δ the caller vouches for.
    Δ does not change the noise: it is validated and documents the guarantee,
    which depends on Δ/σ only -- (α, αΔ²/(2σ²))-RDP for every α > 1
    (:func:`fedfreq.accounting.rdp_gaussian`, Mironov 2017, Prop. 7) and
    (ε, δ(ε))-DP with δ(ε) of :func:`fedfreq.accounting.gaussian_delta`
    (Balle & Wang 2018, Theorem 8). To calibrate σ from (ε, δ), use
    :func:`fedfreq.accounting.gaussian_sigma`.

    With ``backend="numpy"`` (the default) the noise is drawn with numpy's
    floating-point sampler: a simulation of the mechanism's law for measuring accuracy,
    not a deployable release (a float sampler has a support gap). ``backend="opendp"``
    draws it with OpenDP's exact samplers (:func:`fedfreq.deploy.release_values`); ``rng``
    is then unused.

    Parameters
    ----------
    values : float or array_like
        The exact query answer(s).
    sensitivity : float
        ℓ2 sensitivity Δ > 0.
    sigma : float
        Noise standard deviation σ > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    float or ndarray
        Noisy answers with the shape of ``values``.

    Examples
    --------
    >>> out = gaussian_mechanism(np.zeros((2, 3)), sensitivity=1.0, sigma=2.0, rng=1)
    >>> out.shape
    (2, 3)
    """
    x, scalar = _check_values(values)
    check_scale("sensitivity", sensitivity)
    sig = check_scale("sigma", sigma)
    gen = as_generator(rng)
    if backend != "numpy":
        out = release_values(x, mechanism="gaussian", scale=sig, backend=backend)
        return float(out) if scalar else out
    out = x + gen.normal(0.0, sig, size=x.shape)
    return float(out) if scalar else out


def gaussian_variance(*, sigma: float) -> float:
    r"""Variance σ² of the Gaussian mechanism's noise per coordinate.

    Examples
    --------
    >>> gaussian_variance(sigma=3.0)
    9.0
    """
    sig = check_scale("sigma", sigma)
    return sig * sig


# ---------------------------------------------------------------------------
# binary randomized response
# ---------------------------------------------------------------------------


def randomized_response(bits, *, epsilon: float, rng=None) -> np.ndarray:
    r"""Warner's binary randomized response, one report per bit.

    Each bit is reported truthfully with probability :math:`p = e^\varepsilon/(1+e^\varepsilon)`
    and flipped with probability :math:`q = 1/(1+e^\varepsilon)`; since
    :math:`p/q = e^\varepsilon` this is ε-LDP (Warner 1965; Dwork & Roth 2014, Sec. 3.2).

    Parameters
    ----------
    bits : array_like of int
        Entries in {0, 1}, any shape.
    epsilon : float
        Local privacy parameter ε > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of int64
        Reports in {0, 1}, same shape as ``bits``.

    Examples
    --------
    >>> randomized_response([0, 1, 1, 0], epsilon=50.0, rng=0)
    array([0, 1, 1, 0])
    """
    b = check_array("bits", bits, integer=True, low=0, high=1)
    eps = _check_epsilon(epsilon)
    _, q, _ = _kary_probs(eps, 2)
    gen = as_generator(rng)
    flip = gen.random(b.shape) < q
    return np.where(flip, 1 - b, b).astype(np.int64)


def rr_debias_count(reports, *, epsilon: float, axis: int | None = None):
    r"""Unbiased estimate of the number of ones from binary randomized-response reports.

    With n reports, :math:`\mathbb E[\sum_i y_i] = c\,p + (n-c)\,q` when c users hold a 1, so

    .. math:: \hat c = \frac{\sum_i y_i - n q}{p - q},\qquad p - q = \frac{e^\varepsilon-1}{e^\varepsilon+1},

    is unbiased for c; its variance is :func:`rr_count_variance`.

    Parameters
    ----------
    reports : array_like of int
        Reports in {0, 1}.
    epsilon : float
        The ε used by :func:`randomized_response`.
    axis : int or None, default None
        Axis holding the users; ``None`` treats all entries as one population.
        With an axis, one estimate per remaining index is returned (useful for
        many independent trials at once).

    Returns
    -------
    float or ndarray
        :math:`\hat c` (may be negative or exceed n: it is unbiased, not clipped).

    Examples
    --------
    >>> round(rr_debias_count([1, 1, 0, 0], epsilon=math.log(3.0)), 10)
    2.0
    """
    y = check_array("reports", reports, integer=True, low=0, high=1)
    eps = _check_epsilon(epsilon)
    if axis is None:
        n, total = y.size, y.sum()
    else:
        ax = check_int("axis", axis, low=-y.ndim, high=y.ndim - 1) if y.ndim else None
        if ax is None:
            raise ValueError("axis must be None for a 0-dimensional reports array")
        n, total = y.shape[ax], y.sum(axis=ax)
    _, q, pmq = _kary_probs(eps, 2)
    out = (total - n * q) / pmq
    return float(out) if np.ndim(out) == 0 else out


def rr_count_variance(n: int, *, epsilon: float) -> float:
    r"""Exact variance of :func:`rr_debias_count` for n users.

    Derivation: a user holding 1 reports 1 with probability p, a user holding 0
    with probability q = 1 - p, so every report is Bernoulli with variance
    :math:`p(1-p) = q(1-q) = e^\varepsilon/(1+e^\varepsilon)^2`, whatever the bit.
    The reports are independent, hence

    .. math::

        \operatorname{Var}[\hat c] = \frac{n\,e^\varepsilon/(1+e^\varepsilon)^2}{(p-q)^2}
        = \frac{n\,e^\varepsilon}{(e^\varepsilon-1)^2},

    independent of the true count.

    Parameters
    ----------
    n : int
        Number of users, >= 0.
    epsilon : float
        ε > 0.

    Examples
    --------
    >>> round(rr_count_variance(100, epsilon=math.log(3.0)), 10)
    75.0
    """
    n_ = check_int("n", n, low=0)
    eps = _check_epsilon(epsilon)
    # e^eps / (e^eps - 1)^2 = e^-eps / (1 - e^-eps)^2, overflow-free for large eps
    return n_ * math.exp(-eps) / math.expm1(-eps) ** 2


# ---------------------------------------------------------------------------
# k-ary randomized response (direct encoding)
# ---------------------------------------------------------------------------


def kary_randomized_response(items, *, k: int, epsilon: float, rng=None) -> np.ndarray:
    r"""k-ary randomized response (k-RR, "direct encoding").

    Each item :math:`x \in \{0,\dots,k-1\}` is reported unchanged with probability
    :math:`p = e^\varepsilon/(e^\varepsilon+k-1)`; otherwise the report is uniform on the
    other k - 1 values, so each of them has probability
    :math:`q = 1/(e^\varepsilon+k-1)` and :math:`p/q = e^\varepsilon` (ε-LDP; Kairouz,
    Oh & Viswanath 2016; Wang et al. 2017). Vectorised: a replacement
    :math:`r \in \{0,\dots,k-2\}` is drawn uniformly and mapped to
    :math:`r + \mathbf 1\{r \ge x\}`, which is uniform on the values other than x.

    Parameters
    ----------
    items : array_like of int
        True items in {0, ..., k-1}, any shape.
    k : int
        Alphabet size, >= 2.
    epsilon : float
        ε > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of int64
        Reports, same shape as ``items``.

    Examples
    --------
    >>> kary_randomized_response([0, 3, 2], k=4, epsilon=50.0, rng=0)
    array([0, 3, 2])
    """
    k_ = check_int("k", k, low=2, high=10**8, reason="one count per item must fit in memory")
    x = check_array("items", items, integer=True, low=0, high=k_ - 1)
    eps = _check_epsilon(epsilon)
    p, _, _ = _kary_probs(eps, k_)
    gen = as_generator(rng)
    keep = gen.random(x.shape) < p
    other = gen.integers(0, k_ - 1, size=x.shape)
    other = other + (other >= x)
    return np.where(keep, x, other).astype(np.int64)


def kary_rr_frequency_estimate(reports, *, k: int, epsilon: float) -> np.ndarray:
    r"""Unbiased count estimate of every item from k-RR reports.

    If :math:`c_j` of the n users hold item j, the number :math:`N_j` of reports
    equal to j has mean :math:`c_j p + (n - c_j) q`, so

    .. math:: \hat c_j = \frac{N_j - n q}{p - q},\qquad p - q = \frac{e^\varepsilon-1}{e^\varepsilon+k-1},

    is unbiased (Wang et al. 2017, direct encoding; the same estimator as
    ``pure_ldp``'s ``DEServer``). Its variance is :func:`kary_rr_count_variance`.

    Parameters
    ----------
    reports : array_like of int
        Reports in {0, ..., k-1} (flattened: all entries are users).
    k : int
        Alphabet size, >= 2.
    epsilon : float
        ε > 0.

    Returns
    -------
    ndarray of float, shape (k,)
        :math:`\hat c_0, \dots, \hat c_{k-1}` (unclipped; they sum to n).

    Examples
    --------
    >>> kary_rr_frequency_estimate([0, 0, 1, 2], k=3, epsilon=math.log(4.0)).round(6)
    array([2.666667, 0.666667, 0.666667])
    """
    k_ = check_int("k", k, low=2, high=10**8, reason="one count per item must fit in memory")
    y = check_array("reports", reports, integer=True, low=0, high=k_ - 1)
    eps = _check_epsilon(epsilon)
    _, q, pmq = _kary_probs(eps, k_)
    counts = np.bincount(y.ravel(), minlength=k_).astype(float)
    return (counts - y.size * q) / pmq


def _check_counts(n, true_count) -> tuple[int, np.ndarray, bool]:
    """n >= 0, and the count(s) c in [0, n] as floats, with whether c was a scalar."""
    n_ = check_int("n", n, low=0)
    if check_ndim("true_count", true_count) == 0:
        return n_, np.asarray(check_int("true_count", true_count, low=0, high=n_), dtype=float), True
    return n_, check_array("true_count", true_count, integer=True, low=0, high=n_).astype(float), False


def kary_rr_count_variance(n: int, true_count, *, k: int, epsilon: float):
    r"""Exact variance of the k-RR count estimate of one item.

    Derivation: with c of the n users holding item j, the indicator
    :math:`\mathbf 1\{\text{report}_i = j\}` is Bernoulli(p) for those c users and
    Bernoulli(q) for the other n - c, independently. Hence
    :math:`\operatorname{Var}[N_j] = c\,p(1-p) + (n-c)\,q(1-q)` and

    .. math::

        \operatorname{Var}[\hat c_j] = \frac{c\,p(1-p) + (n-c)\,q(1-q)}{(p-q)^2}
        = \frac{n\,q(1-q)}{(p-q)^2} + \frac{c\,(1-p-q)}{p-q},

    the second form being the one given for direct encoding by Wang et al. (2017).
    For k = 2 it reduces to :func:`rr_count_variance`.

    Parameters
    ----------
    n : int
        Number of users, >= 0.
    true_count : int or array_like of int
        Number(s) c of holders of the item, each in [0, n].
    k : int
        Alphabet size, >= 2.
    epsilon : float
        ε > 0.

    Returns
    -------
    float or ndarray
        The variance, matching the shape of ``true_count``.

    Examples
    --------
    >>> round(kary_rr_count_variance(100, 0, k=3, epsilon=math.log(4.0)), 10)
    55.5555555556
    """
    n_, c, scalar = _check_counts(n, true_count)
    k_ = check_int("k", k, low=2, high=10**8, reason="one count per item must fit in memory")
    eps = _check_epsilon(epsilon)
    p, q, pmq = _kary_probs(eps, k_)
    out = (c * p * (1.0 - p) + (n_ - c) * q * (1.0 - q)) / pmq**2
    return float(out) if scalar else out


# ---------------------------------------------------------------------------
# optimised unary encoding
# ---------------------------------------------------------------------------


def _oue_probs(eps: float) -> tuple[float, float]:
    """(p, q) of optimised unary encoding: p = 1/2, q = 1/(e^eps + 1), overflow-free."""
    w = math.exp(-eps)
    return 0.5, w / (1.0 + w)


def oue_frequency_estimate(counts, *, epsilon: float, rng=None) -> np.ndarray:
    r"""Unbiased count estimates from optimised unary encoding (OUE) of the users' items.

    Each user holding item x encodes it as the one-hot vector :math:`e_x \in \{0,1\}^k`
    and reports every bit independently: a 1 is kept with probability :math:`p = 1/2`,
    a 0 becomes 1 with probability :math:`q = 1/(e^\varepsilon+1)`. Two inputs differ in
    two bits and :math:`\frac{p}{q}\cdot\frac{1-q}{1-p} = e^\varepsilon`, so this is
    ε-LDP (Wang, Blocki, Li & Jha 2017, "optimized unary encoding"). The server's count
    of ones in column j is :math:`N_j \sim \mathrm{Bin}(c_j, p) + \mathrm{Bin}(n - c_j, q)`,
    independently over j (every bit is flipped independently), and

    .. math:: \hat c_j = \frac{N_j - n q}{p - q}

    is unbiased; its variance is :func:`oue_count_variance`. The columns are drawn
    directly from these binomials, the exact law of the aggregate, at O(k) cost instead
    of O(nk).

    Parameters
    ----------
    counts : array_like of int
        True histogram :math:`c_0, \dots, c_{k-1}` of the n users' items (1-D, ≥ 0).
    epsilon : float
        ε > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of float, shape (k,)
        :math:`\hat c_0, \dots, \hat c_{k-1}` (unclipped).

    Examples
    --------
    >>> est = oue_frequency_estimate([3000, 1000, 0], epsilon=1.0, rng=0)
    >>> est.shape
    (3,)
    """
    c = check_array("counts", counts, ndim=1, integer=True, low=0, min_size=1)
    eps = _check_epsilon(epsilon)
    p, q = _oue_probs(eps)
    gen = as_generator(rng)
    n_ = int(c.sum())
    ones = gen.binomial(c, p) + gen.binomial(n_ - c, q)
    return (ones - n_ * q) / (p - q)


def oue_count_variance(n: int, true_count, *, epsilon: float):
    r"""Exact variance of the OUE count estimate of one item.

    With c of the n users holding the item, :math:`N \sim \mathrm{Bin}(c, 1/2) +
    \mathrm{Bin}(n-c, q)`, :math:`q = 1/(e^\varepsilon+1)`, so

    .. math::

        \operatorname{Var}[\hat c] = \frac{c/4 + (n-c)\,q(1-q)}{(1/2-q)^2}
        = \frac{4 n e^\varepsilon}{(e^\varepsilon-1)^2} + c,

    whose first term, :math:`4ne^\varepsilon/(e^\varepsilon-1)^2`, is the
    approximation given by Wang et al. (2017) for c ≪ n.

    Parameters
    ----------
    n : int
        Number of users, >= 0.
    true_count : int or array_like of int
        Number(s) c of holders of the item, each in [0, n].
    epsilon : float
        ε > 0.

    Returns
    -------
    float or ndarray
        The variance, matching the shape of ``true_count``.

    Examples
    --------
    >>> round(oue_count_variance(100, 0, epsilon=math.log(3.0)), 10)
    300.0
    """
    n_, c, scalar = _check_counts(n, true_count)
    eps = _check_epsilon(epsilon)
    p, q = _oue_probs(eps)
    out = (c * p * (1.0 - p) + (n_ - c) * q * (1.0 - q)) / (p - q) ** 2
    return float(out) if scalar else out
