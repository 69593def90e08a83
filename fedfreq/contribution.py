r"""Bounding user contributions for user-level private histograms (seed 004).

Seed 004 {Liu, Suresh, Zhu, Kairouz, Gruteser, ICML 2023} asks how much of each
user's data to keep when a histogram :math:`\overline N = \sum_i N_i` of ``n``
users' item counts :math:`N_i \in \mathbb Z_{\ge 0}^d` is released under
user-level differential privacy. Everything the three chapters on that paper
use lives here:

* clipping: :func:`clip_l1`, :func:`fedfreq.cpbm.clip_l2` (Sec. 4) and :func:`rand_clip`
  (Sec. 5, sampling :math:`\min(\|N\|_1, C)` items without replacement);
* bounded domains: Algorithm 1 (:func:`bounded_histogram`), the calibration of
  Lemma 4.1 (:func:`lemma41_sigma`), the exact expected :math:`\ell_1` losses
  (:func:`laplace_expected_loss`, :func:`gaussian_expected_loss`), the convex
  surrogate :math:`G(C)` (:func:`threshold_objective`), the thresholds of
  Lemma 4.2 and Theorem 4.3 (:func:`laplace_threshold`,
  :func:`gaussian_threshold`), and their private versions
  (:func:`private_threshold_sgd` for Corollary 4.4, :func:`output_perturbation_threshold`
  for Algorithm 2 / Corollary 4.5);
* unbounded domains: Algorithm 3 (:func:`unbounded_histogram`), its threshold
  (:func:`unbounded_threshold`), an exact audit of its δ
  (:func:`unbounded_exact_delta`), its exact conditional error
  (:func:`unbounded_expected_error`), the surrogate :math:`V(C)`
  (:func:`surrogate_error`) and Algorithm 4 (:func:`select_threshold_exponential`);
* debiasing: :math:`h(\lambda) = \mathbb E[\min(\mathrm{Poi}(\lambda), C)]`
  (:func:`clipped_poisson_mean`), its derivative and inverse, γ_C
  (:func:`gamma_c`) and Algorithm 5 (:func:`debiased_count`);
* baselines: quantiles of the users' norms (:func:`norm_quantile`), the
  ``M``-th largest ℓ2 norm (:func:`m_quantile_threshold`, seed 004's
  "M-quantile" after Amin et al.), the ℓ2-error quantile in the manner of
  Huang et al. (:func:`l2_quantile_threshold`), and private quantiles by noisy
  gradient descent as the paper describes (:func:`private_quantile_gd`, after
  Andrew et al.) or by the exponential mechanism (:func:`private_quantile`).

Histograms are dense ``(n, d)`` arrays of non-negative integers (one row per
user). The samplers use numpy floating point; they simulate the mechanisms'
output distributions and are not side-channel-safe DP implementations.

Neighbouring relation. Seed 004's Definition 3.1 uses *replacement* of one
user. The noise scales of Algorithm 1 (``Lap(C/ε)``, ``N(0, C²σ²)``) and of
Algorithm 3 are those of *add/remove* neighbours; functions state which
relation their guarantee uses, and :func:`clip_sensitivity` gives both.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from ._rng import as_generator
from ._validation import check_array, check_choice, check_int, check_real
from .accounting import gaussian_sigma
from .cpbm import clip_l2  # ℓ2 clipping of rows lives in cpbm (seed 000); reused here, not re-exported
from .deploy import release_values

__all__ = [
    "clip_l1",
    "rand_clip",
    "clip_sensitivity",
    "lemma41_sigma",
    "bounded_histogram",
    "laplace_expected_loss",
    "gaussian_expected_loss",
    "laplace_surrogate",
    "threshold_objective",
    "laplace_threshold",
    "gaussian_threshold",
    "regularized_threshold",
    "output_perturbation_threshold",
    "private_threshold_sgd",
    "norm_quantile",
    "m_quantile_threshold",
    "private_quantile",
    "chi_mean",
    "l2_quantile_rank",
    "l2_quantile_threshold",
    "private_quantile_gd",
    "unbounded_threshold",
    "unbounded_histogram",
    "unbounded_exact_delta",
    "unbounded_expected_error",
    "surrogate_error",
    "theorem52_bounds",
    "exponential_mechanism_probabilities",
    "select_threshold_exponential",
    "clipped_poisson_mean",
    "clipped_poisson_mean_derivative",
    "clipped_poisson_mean_inverse",
    "gamma_c",
    "debiased_count",
    "check_clipped_poisson_inverse",
    "check_gaussian_threshold",
    "check_rand_clip",
]


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------


def _histograms(histograms) -> np.ndarray:
    """(n, d) array of non-negative integer counts (int64)."""
    return check_array("histograms", histograms, ndim=2, low=0.0, integer=True, min_size=1)


def _threshold(C, name: str = "C") -> float:
    return check_real(name, C, low=0.0, low_open=True)


def _epsilon(epsilon, name: str = "epsilon") -> float:
    return check_real(name, epsilon, low=0.0, low_open=True)


def _delta(delta, name: str = "delta") -> float:
    return check_real(name, delta, low=0.0, high=1.0, low_open=True, high_open=True)


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


# ---------------------------------------------------------------------------
# clipping
# ---------------------------------------------------------------------------


def clip_l1(histograms, C: float) -> np.ndarray:
    r"""ℓ1 clipping of every user's histogram (seed 004, Sec. 4).

    .. math:: \mathrm{clip}_1(N_i, C) = \frac{C\, N_i}{\max(C, \|N_i\|_1)}

    Parameters
    ----------
    histograms : array_like, shape (n, d)
        Non-negative integer counts, one row per user.
    C : float
        Clipping threshold C > 0.

    Returns
    -------
    ndarray, shape (n, d)
        Clipped (real-valued) histograms; each row has ℓ1 norm at most C.

    Examples
    --------
    >>> clip_l1([[3, 1], [1, 0]], 2.0)
    array([[1.5, 0.5],
           [1. , 0. ]])
    """
    N = _histograms(histograms).astype(float)
    c = _threshold(C)
    norms = N.sum(axis=1, keepdims=True)
    return N * (c / np.maximum(c, norms))


def rand_clip(histograms, C: int, *, rng=None) -> np.ndarray:
    r"""Random clipping of seed 004, Sec. 5: keep :math:`\min(\|N_i\|_1, C)` items drawn without replacement.

    A user whose histogram holds more than ``C`` items keeps a uniformly random
    subset of ``C`` of them (a multivariate hypergeometric draw); the others keep
    everything. The result is integer-valued with
    :math:`\|h_i\|_0, \|h_i\|_1, \|h_i\|_2, \|h_i\|_\infty \le C`, and
    :math:`\mathbb E[h_{ij}] = C N_{ij}/\max(C, \|N_i\|_1)`.

    The draw is exact and vectorised over users. A user with :math:`m > C`
    items draws the smaller of the kept set (C items) and the dropped set
    (m - C items), by recursive halving of the columns: the number of sampled
    items in the left half of a range is hypergeometric given the range's
    sample size, and given it the two halves are independent uniform subsets.
    A sample of k items costs at most about :math:`k\log_2 d` hypergeometric
    draws (instead of d for a column-by-column walk).

    Parameters
    ----------
    histograms : array_like, shape (n, d)
        Non-negative integer counts.
    C : int
        Number of items kept, an integer >= 1.
    rng : Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of int64, shape (n, d)

    Examples
    --------
    >>> h = rand_clip([[5, 5, 0], [1, 0, 1]], 4, rng=0)
    >>> h.sum(axis=1).tolist()
    [4, 2]
    """
    N = _histograms(histograms)
    c = check_int("C", C, low=1)
    gen = as_generator(rng)
    out = N.copy()
    for rows, complement, (r, col, v) in _rand_clip_blocks(N, c, gen):
        drawn = np.zeros((rows.size, N.shape[1]), dtype=np.int64)
        drawn[r, col] = v
        sub = N[rows]
        out[rows] = np.where(complement[:, None], sub - drawn, drawn)
    return out


_BLOCK = 8192  # rows per block in rand-clip: keeps the temporaries small (a few MB)


def _mv_hypergeometric_leaves(counts: np.ndarray, need: np.ndarray, gen: np.random.Generator):
    r"""One multivariate hypergeometric draw per row, as sparse triples ``(row, column, count)``.

    Row ``r`` of ``counts`` is an urn; ``need[r]`` of its items are drawn without
    replacement. Exact, by recursive halving of the columns: the number of drawn
    items that fall in the left half of a column range, whose halves hold
    ``left`` and ``right`` items, is :math:`\mathrm{Hypergeometric}(\text{left}, \text{right}, k)`,
    and given it the two halves are independent uniform draws of the stated
    sizes. Only the (row, range) pairs that must still supply items are carried
    to the next level, so a row needing ``k`` items costs at most about
    :math:`k\lceil\log_2 d\rceil` hypergeometric draws instead of ``d``.
    """
    rb, d = counts.shape
    cs = np.zeros((rb, d + 1), dtype=np.int64)
    np.cumsum(counts, axis=1, out=cs[:, 1:])
    cs = cs.ravel()
    row = np.flatnonzero(need > 0)
    cur = need[row].astype(np.int64)
    lo = np.zeros(row.size, dtype=np.int64)
    hi = np.full(row.size, d, dtype=np.int64)
    base = row * (d + 1)
    done_r, done_c, done_v = [], [], []
    while row.size:
        leaf = hi - lo == 1
        if leaf.any():
            done_r.append(row[leaf])
            done_c.append(lo[leaf])
            done_v.append(cur[leaf])
            keep = ~leaf
            row, lo, hi, cur, base = row[keep], lo[keep], hi[keep], cur[keep], base[keep]
            if not row.size:
                break
        mid = (lo + hi) // 2
        c_mid = cs[base + mid]
        left = c_mid - cs[base + lo]
        right = cs[base + hi] - c_mid
        x = np.where(right == 0, cur, 0)  # all from the left if the right half is empty; none if the left is
        both = (left > 0) & (right > 0)
        if both.any():
            x[both] = gen.hypergeometric(left[both], right[both], cur[both])
        y = cur - x
        gl, gr = x > 0, y > 0
        row = np.concatenate([row[gl], row[gr]])
        base = np.concatenate([base[gl], base[gr]])
        lo, hi = np.concatenate([lo[gl], mid[gr]]), np.concatenate([mid[gl], hi[gr]])
        cur = np.concatenate([x[gl], y[gr]])
    if not done_r:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(done_r), np.concatenate(done_c), np.concatenate(done_v)


def _rand_clip_blocks(N: np.ndarray, c: int, gen: np.random.Generator):
    """Yield ``(rows, complement, (row, col, count))`` per block of users with more than ``c`` items.

    For those users the smaller of the kept set (``c`` items) and the dropped set
    (``m - c`` items) is drawn: both are uniform subsets, and a smaller sample
    needs fewer draws. ``complement`` marks the rows whose draw is the dropped set.
    """
    m = N.sum(axis=1)
    clipped = np.flatnonzero(m > c)
    for b0 in range(0, clipped.size, _BLOCK):
        rows = clipped[b0 : b0 + _BLOCK]
        excess = m[rows] - c
        complement = excess < c
        yield rows, complement, _mv_hypergeometric_leaves(N[rows], np.where(complement, excess, c), gen)


def _rand_clip_column_sums(N: np.ndarray, c: int, gen: np.random.Generator) -> np.ndarray:
    """Column sums of ``rand_clip(N, c)``, with the same law, without forming the clipped matrix."""
    d = N.shape[1]
    dropped = np.zeros(d, dtype=np.int64)
    for rows, complement, (r, col, v) in _rand_clip_blocks(N, c, gen):
        # dropped items: the draw itself for complement rows, the row minus the draw otherwise
        dropped += np.bincount(col, weights=np.where(complement[r], v, -v), minlength=d).astype(np.int64)
        if not complement.all():
            dropped += N[rows[~complement]].sum(axis=0)
    return N.sum(axis=0) - dropped


def clip_sensitivity(C: float, *, norm: str, relation: str) -> float:
    r"""Sensitivity of the sum of clipped non-negative histograms.

    Adding or removing one user moves the sum by that user's clipped vector, of
    norm at most ``C``. Replacing one user moves it by :math:`a - b` with
    :math:`a, b \ge 0` of norm at most C: the ℓ1 distance can reach ``2C``
    (disjoint supports) and the ℓ2 distance :math:`\sqrt2\,C`
    (:math:`\|a-b\|_2^2 = \|a\|^2 + \|b\|^2 - 2a\cdot b \le 2C^2`).

    Parameters
    ----------
    C : float
        Clipping threshold > 0.
    norm : {"l1", "l2"}
        The norm in which users are clipped.
    relation : {"add-remove", "replace"}
        The neighbouring relation.

    Notes
    -----
    ℓ1 clipping is :func:`clip_l1`; ℓ2 clipping is :func:`fedfreq.cpbm.clip_l2`.

    Examples
    --------
    >>> clip_sensitivity(3.0, norm="l1", relation="replace")
    6.0
    """
    c = _threshold(C)
    check_choice("norm", norm, {"l1", "l2"})
    check_choice("relation", relation, {"add-remove", "replace"})
    if relation == "add-remove":
        return c
    return 2.0 * c if norm == "l1" else math.sqrt(2.0) * c


# ---------------------------------------------------------------------------
# Algorithm 1 (bounded domain)
# ---------------------------------------------------------------------------


def lemma41_sigma(epsilon: float, delta: float, *, method: str = "analytic") -> float:
    r"""Noise multiplier σ of Algorithm 1 (seed 004, Lemma 4.1), per unit of ℓ2 sensitivity.

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
    r"""Algorithm 1 of seed 004: clip every user, sum, add noise.

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


# ---------------------------------------------------------------------------
# exact expected losses and thresholds (Lemma 4.2, Theorem 4.3)
# ---------------------------------------------------------------------------


def _thresholds(C, allow_zero: bool = False) -> tuple[np.ndarray, bool]:
    scalar = np.ndim(C) == 0
    arr = np.atleast_1d(check_array("C", C, low=0.0, low_open=not allow_zero, min_size=1))
    return arr, scalar


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
    out = np.sum(b + noise, axis=1)
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
    sig = check_real("sigma", sigma, low=0.0, low_open=True)
    l2 = np.sqrt(np.einsum("ij,ij->i", N.astype(float), N.astype(float)))
    b = _bias_matrix(N, Cs, l2)
    tau = np.broadcast_to((Cs * sig)[:, None], b.shape)
    t1 = np.where(tau > 0, tau, 1.0)
    folded = tau * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * (b / t1) ** 2) + b * (1.0 - 2.0 * special.ndtr(-b / t1))
    out = np.sum(np.where(tau > 0, folded, b), axis=1)
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
    Cs, scalar = _thresholds(C)
    out = np.maximum(m[None, :] - Cs[:, None], 0.0).sum(axis=1) + dd * Cs / eps
    return _out(out[0]) if scalar else out


def threshold_objective(l1_norms, l2_norms, C, *, d: int, sigma: float):
    r"""The convex objective :math:`G(C) = \sum_i f_i(C) + CM` of seed 004, Eq. (3).

    :math:`f_i(C) = (1 - C/\|N_i\|_2)_+\,\|N_i\|_1` and :math:`M = d\sigma\sqrt{2/\pi}`.
    It bounds the Gaussian loss: :math:`G(C)/2 \le \mathcal L_G(C, D) \le G(C)`.

    Examples
    --------
    >>> round(threshold_objective([7.0], [5.0], 5.0, d=2, sigma=1.0), 4)
    7.9788
    """
    dd = check_int("d", d, low=1)
    l1, l2 = _norm_pair(l1_norms, l2_norms, dd)
    sig = check_real("sigma", sigma, low=0.0, low_open=True)
    Cs, scalar = _thresholds(np.asarray(C, dtype=float) if np.ndim(C) else C)
    M = dd * sig * math.sqrt(2.0 / math.pi)
    safe = np.where(l2 > 0, l2, 1.0)
    f = np.maximum(1.0 - Cs[:, None] / safe[None, :], 0.0) * l1[None, :]
    out = f.sum(axis=1) + Cs * M
    return _out(out[0]) if scalar else out


def laplace_threshold(user_sizes, *, d: int, epsilon: float) -> float:
    r"""Lemma 4.2 of seed 004: the :math:`\lceil d/\varepsilon\rceil`-th largest user size.

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
    k = math.ceil(dd / eps - 1e-12)
    if k > m.size:
        return 0.0
    return float(np.partition(m, m.size - k)[m.size - k])


def gaussian_threshold(l1_norms, l2_norms, *, d: int, sigma: float) -> float:
    r"""Theorem 4.3 of seed 004: :math:`C^* = \min\{C \ge 0 : \sum_{i:\|N_i\|_2 > C} \|N_i\|_1/\|N_i\|_2 \le M\}`.

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
    r"""Minimiser :math:`C'` of :math:`F(C) = G(C)/n + \frac{\lambda}{2}C^2` over C >= 0 (seed 004, Alg. 2 / Eq. 5).

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


def output_perturbation_threshold(
    l1_norms,
    l2_norms,
    *,
    d: int,
    sigma: float,
    C_max: float,
    s: float,
    epsilon_prime: float,
    rng=None,
    lam: float | None = None,
    project: bool = True,
) -> float:
    r"""Algorithm 2 of seed 004: private threshold by output perturbation (ε'-DP).

    :math:`\lambda = 2\sqrt{2s}/(C_m\sqrt{n\varepsilon'})`, :math:`\Delta = 4\sqrt s/(\lambda n)`,
    :math:`C_{output} = C' + \mathrm{Lap}(\Delta/\varepsilon')` with C' from
    :func:`regularized_threshold`. Lemma A.1 bounds the replace-one sensitivity of
    C' by Δ. ``project=True`` maps the result to :math:`[0, C_m]` (post-processing,
    needed because a negative threshold is meaningless; it only moves the output
    closer to C', which lies in :math:`[0, C^*] \subseteq [0, C_m]`).

    Examples
    --------
    >>> c = output_perturbation_threshold(
    ...     [4.0] * 50, [2.0] * 50, d=4, sigma=1.0, C_max=10.0, s=4.0, epsilon_prime=1.0, rng=0
    ... )
    >>> bool(0.0 <= c <= 10.0)
    True
    """
    dd = check_int("d", d, low=1)
    l1, _ = _norm_pair(l1_norms, l2_norms, dd)
    cm = check_real("C_max", C_max, low=0.0, low_open=True)
    ss = check_real("s", s, low=1.0)
    ep = _epsilon(epsilon_prime, "epsilon_prime")
    gen = as_generator(rng)
    n = l1.size
    lm = (
        2.0 * math.sqrt(2.0 * ss) / (cm * math.sqrt(n * ep))
        if lam is None
        else check_real("lam", lam, low=0.0, low_open=True)
    )
    c1 = regularized_threshold(l1_norms, l2_norms, d=dd, sigma=sigma, lam=lm, s=ss)
    out = c1 + gen.laplace(0.0, 4.0 * math.sqrt(ss) / (lm * n) / ep)
    return float(min(max(out, 0.0), cm)) if project else float(out)


def private_threshold_sgd(
    l1_norms,
    l2_norms,
    *,
    d: int,
    sigma: float,
    C_max: float,
    s: float,
    epsilon_prime: float,
    delta_prime: float,
    steps: int | None = None,
    rng=None,
) -> float:
    r"""Private estimate of C* by noisy SGD (Bassily, Smith & Thakurta 2014, Alg. 1); seed 004, Cor. 4.4.

    Per-user loss :math:`\ell_i(C) = f_i(C) + MC/n` with the ratio
    :math:`\|N_i\|_1/\|N_i\|_2` capped at :math:`\sqrt s`, so that
    :math:`\ell_i` is L-Lipschitz with :math:`L = \sqrt s + M/n`. For
    ``T = steps`` iterations (default :math:`n^2`, as in Bassily et al.): pick a
    user i uniformly, and set
    :math:`C_{t+1} = \Pi_{[0, C_m]}\big(C_t - \eta_t (n\,\ell_i'(C_t) + b_t)\big)`,
    :math:`b_t \sim \mathcal N(0, \sigma_{sgd}^2)`,
    :math:`\sigma_{sgd}^2 = 32 L^2 T \log(n/\delta')\log(1/\delta')/\varepsilon'^2`
    (their Algorithm 1 with T = n² has :math:`n^2` in place of T),
    :math:`\eta_t = C_m/\sqrt{t(n^2L^2 + \sigma_{sgd}^2)}`. Returns the last
    iterate. The privacy proof (sampling amplification + advanced composition)
    is theirs; this is a floating-point simulation.

    Examples
    --------
    >>> c = private_threshold_sgd(
    ...     [4.0] * 20, [2.0] * 20, d=4, sigma=1.0, C_max=10.0, s=4.0, epsilon_prime=1.0, delta_prime=1e-3, rng=0
    ... )
    >>> bool(0.0 <= c <= 10.0)
    True
    """
    dd = check_int("d", d, low=1)
    l1, l2 = _norm_pair(l1_norms, l2_norms, dd)
    sig = check_real("sigma", sigma, low=0.0, low_open=True)
    cm = check_real("C_max", C_max, low=0.0, low_open=True)
    ss = check_real("s", s, low=1.0)
    ep = _epsilon(epsilon_prime, "epsilon_prime")
    dp = _delta(delta_prime, "delta_prime")
    n = l1.size
    T = n * n if steps is None else check_int("steps", steps, low=1)
    gen = as_generator(rng)
    M = dd * sig * math.sqrt(2.0 / math.pi)
    L = math.sqrt(ss) + M / n
    r = np.where(l2 > 0, np.minimum(l1 / np.where(l2 > 0, l2, 1.0), math.sqrt(ss)), 0.0)
    var = 32.0 * L * L * T * math.log(max(n / dp, math.e)) * math.log(1.0 / dp) / ep**2
    users = gen.integers(0, n, size=T)
    noise = gen.normal(0.0, math.sqrt(var), size=T)
    denom = n * n * L * L + var
    c = 0.5 * cm
    for t in range(T):
        i = users[t]
        grad = n * (M / n - (r[i] if l2[i] > c else 0.0)) + noise[t]
        c = min(max(c - cm / math.sqrt((t + 1) * denom) * grad, 0.0), cm)
    return float(c)


# ---------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------


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
    ("M-quantile" of seed 004, Sec. 7.1).

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
    sig = check_real("sigma", sigma, low=0.0, low_open=True)
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
    sig = check_real("sigma", sigma, low=0.0, low_open=True)
    return max(1, math.ceil(sig * chi_mean(d) - 1e-12))


def l2_quantile_threshold(l2_norms, *, d: int, sigma: float) -> float:
    r"""The :func:`l2_quantile_rank`-th largest ℓ2 norm: the Huang et al. (2021) style baseline of seed 004, Sec. 4.

    Minimises :math:`U_2(C)` of :func:`l2_quantile_rank` (a bound on the ℓ2 error);
    seed 004 notes that such a quantile of the ℓ2 norms differs from the
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


def private_quantile_gd(
    values, *, rank: int, epsilon: float, delta: float, steps: int = 200, eta: float = 0.2, init: float = 1.0, rng=None
) -> float:
    r"""(ε, δ)-DP estimate of the ``rank``-th largest value by noisy gradient descent (Andrew et al. 2021, Sec. 2).

    The private "DP-M-quantile" of seed 004, Sec. 7.1, which the paper estimates
    "by gradient descent with differential privacy" after Andrew et al. With
    target fraction :math:`\gamma = (n - \mathrm{rank} + \frac12)/n` of values at
    or below the threshold, each step releases the count below the current
    threshold with Gaussian noise and takes a geometric step on the pinball loss:

    .. math:: \tilde b_t = \frac{\#\{i : x_i \le C_t\} + \mathcal N(0, \sigma_b^2)}{n},
       \qquad C_{t+1} = C_t \exp\big(-\eta(\tilde b_t - \gamma)\big).

    Each count has sensitivity 1 (one value added, removed or replaced), and T
    adaptively composed Gaussian mechanisms of noise :math:`\sigma_b` compose
    exactly like one with noise :math:`\sigma_b/\sqrt T`, so
    :math:`\sigma_b = \sqrt T\,\sigma(\varepsilon, \delta)` with σ the analytic
    Gaussian calibration (:func:`fedfreq.accounting.gaussian_sigma`). ``n`` is
    treated as public (replacement neighbours, seed 004's Definition 3.1). The
    output is the geometric mean of the second half of the iterates
    (post-processing). ``init`` must not depend on the data.

    Parameters
    ----------
    values : array_like, shape (n,)
        The values (e.g. users' ℓ2 norms).
    rank : int
        1 <= rank <= n; 1 is the maximum.
    epsilon, delta : float
        Privacy parameters of the whole run, ε > 0 and δ in (0, 1).
    steps : int
        Number T of noisy steps (>= 2).
    eta : float
        Step size of the geometric update (> 0).
    init : float
        Starting threshold (> 0), fixed before seeing the data.
    rng : Generator, int or None

    Examples
    --------
    >>> x = np.arange(1.0, 1001.0)
    >>> c = private_quantile_gd(x, rank=100, epsilon=5.0, delta=1e-6, rng=0)
    >>> bool(850 < c < 950)
    True
    """
    x = np.sort(check_array("values", values, ndim=1, min_size=1))
    n = x.size
    k = check_int("rank", rank, low=1, high=n)
    eps = _epsilon(epsilon)
    dl = _delta(delta)
    T = check_int("steps", steps, low=2)
    lr = check_real("eta", eta, low=0.0, low_open=True)
    c0 = check_real("init", init, low=0.0, low_open=True)
    gen = as_generator(rng)
    sigma_b = math.sqrt(T) * gaussian_sigma(eps, dl, sensitivity=1.0)
    gamma = (n - k + 0.5) / n
    noise = gen.normal(0.0, sigma_b, size=T)
    logc = math.log(c0)
    trace = np.empty(T)
    for t in range(T):  # T steps, each one O(log n): not a per-user loop
        below = float(np.searchsorted(x, math.exp(logc), side="right"))
        logc -= lr * ((below + noise[t]) / n - gamma)
        trace[t] = logc
    return float(math.exp(trace[T // 2 :].mean()))


def private_quantile(values, *, rank: int, grid, epsilon: float, rng=None) -> float:
    r"""ε-DP estimate of the ``rank``-th largest value by the exponential mechanism over ``grid``.

    Utility :math:`u(c) = -|\#\{i : x_i > c\} - (\mathrm{rank} - 1)|`, sensitivity 1
    under replacement; :math:`\Pr[c] \propto e^{\varepsilon u(c)/2}`. This is the
    private quantile used for the "DP-M-quantile" and top-⌈d/ε⌉ baselines.

    Examples
    --------
    >>> private_quantile([1, 2, 3, 50], rank=1, grid=[1, 2, 3, 50], epsilon=50.0, rng=0)
    50.0
    """
    x = check_array("values", values, ndim=1, min_size=1)
    k = check_int("rank", rank, low=1)
    g = np.sort(check_array("grid", grid, ndim=1, min_size=1))
    eps = _epsilon(epsilon)
    gen = as_generator(rng)
    above = x.size - np.searchsorted(np.sort(x), g, side="right")
    u = -np.abs(above - (k - 1)).astype(float)
    p = exponential_mechanism_probabilities(-u, epsilon=eps, sensitivity=1.0)
    return float(g[gen.choice(g.size, p=p)])


# ---------------------------------------------------------------------------
# Algorithm 3 (unbounded domain)
# ---------------------------------------------------------------------------


def unbounded_threshold(C: float, *, epsilon: float, delta: float) -> float:
    r"""Release threshold of Algorithm 3: :math:`t = C + \frac{C}{\varepsilon}\log\frac{C}{2\delta}`.

    Examples
    --------
    >>> round(unbounded_threshold(10, epsilon=1.0, delta=1e-3), 4)
    95.1719
    """
    c = _threshold(C)
    return c + (c / _epsilon(epsilon)) * math.log(c / (2.0 * _delta(delta)))


def unbounded_histogram(histograms, *, C: int, epsilon: float, delta: float, rng=None) -> np.ndarray:
    r"""Algorithm 3 of seed 004: rand-clip, Laplace noise on non-zero counts, threshold.

    :math:`h_i = \text{rand-clip}(N_i, C)`, :math:`\widetilde N_j = \sum_i h_{ij} + \mathrm{Lap}(C/\varepsilon)`
    for the items with :math:`\overline N_j > 0`, and
    :math:`\widehat N_j = \widetilde N_j\,\mathbf 1\{\widetilde N_j > t\}` with
    t of :func:`unbounded_threshold`. Items never held by anyone, and items below
    the threshold, get 0. (ε, δ)-DP for add/remove neighbours (Lemma 5.1).
    The run time is linear in the number of items with non-zero counts.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> unbounded_histogram([[0, 3], [0, 2]], C=2, epsilon=1.0, delta=0.1, rng=0).tolist()[0]
    0.0
    """
    N = _histograms(histograms)
    c = check_int("C", C, low=1)
    eps = _epsilon(epsilon)
    t = unbounded_threshold(c, epsilon=eps, delta=delta)
    gen = as_generator(rng)
    support = np.flatnonzero(N.sum(axis=0) > 0)
    # rand-clip only needs the columns that occur; its column sums are formed
    # without materialising the clipped (n, d) matrix
    sub = N if support.size == N.shape[1] else N[:, support]
    hbar = _rand_clip_column_sums(sub, c, gen).astype(float)
    noisy = hbar + gen.laplace(0.0, c / eps, size=support.size)
    out = np.zeros(N.shape[1])
    out[support] = np.where(noisy > t, noisy, 0.0)
    return out


def unbounded_exact_delta(C: int, *, epsilon: float, delta: float, t: float | None = None) -> float:
    r"""Exact δ of Algorithm 3 at level ε for one added user holding only new items (add/remove).

    If a user holding :math:`c_1, \dots, c_k` copies of items no one else holds
    (:math:`\sum c_j \le C` after rand-clip) joins, every other output keeps its
    law up to a factor :math:`e^{\varepsilon}`, and each new item is released
    with probability :math:`p_j = \tfrac12 e^{-\varepsilon(t - c_j)/C}` (:math:`c_j \le t`).
    The hockey-stick divergence of the pair (with, without) at ε is then exactly
    :math:`1 - \prod_j (1 - p_j)`; this function maximises it over all integer
    partitions of at most C units. ``t`` defaults to :func:`unbounded_threshold`;
    a different ``t`` audits a modified threshold.

    Examples
    --------
    >>> unbounded_exact_delta(4, epsilon=1.0, delta=1e-3) <= 1e-3
    True
    """
    c = check_int("C", C, low=1, high=40)
    eps = _epsilon(epsilon)
    dl = _delta(delta)
    tt = unbounded_threshold(c, epsilon=eps, delta=dl) if t is None else check_real("t", t, low=float(c))
    best = 0.0

    # the divergence grows with every unit, so only partitions of exactly C matter
    def partitions(total, max_part):
        if total == 0:
            yield []
            return
        for first in range(min(total, max_part), 0, -1):
            for rest in partitions(total - first, first):
                yield [first] + rest

    for parts in partitions(c, c):
        logp = math.log(0.5) - eps * (tt - np.asarray(parts, dtype=float)) / c
        val = -math.expm1(float(np.sum(np.log1p(-np.exp(logp)))))
        best = max(best, val)
    return best


def _laplace_tail_moments(u: np.ndarray, mu: np.ndarray, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(P[X > u], E[X 1{X > u}]) for X ~ Laplace(mu, b), elementwise."""
    z = (u - mu) / b
    upper = z >= 0
    e = np.exp(-np.abs(z))
    p = np.where(upper, 0.5 * e, 1.0 - 0.5 * e)
    m = np.where(upper, 0.5 * e * (u + b), mu - 0.5 * e * (u - b))
    return p, m


def unbounded_expected_error(hbar, Nbar, *, C: float, epsilon: float, delta: float):
    r"""Exact :math:`\mathbb E[\|\widehat N - \overline N\|_1 \mid \bar h]` of Algorithm 3 given the clipped sums.

    For each item with :math:`\overline N_j > 0` and :math:`X = \bar h_j + Z`,
    :math:`Z \sim \mathrm{Lap}(C/\varepsilon)`:
    :math:`\mathbb E|X\mathbf 1\{X > t\} - \overline N_j|
    = \overline N_j \Pr[X \le t] + \mathbb E[|X - \overline N_j|\mathbf 1\{X > t\}]`,
    in closed form from the Laplace tail moments. The expectation over rand-clip
    is left to the caller (average over draws of ``hbar``).

    Parameters
    ----------
    hbar : array_like, shape (..., d)
        Clipped sums :math:`\bar h_j = \sum_i h_{ij}` (one or several draws).
    Nbar : array_like, shape (d,)
        True totals; items with :math:`\overline N_j = 0` are ignored.

    Examples
    --------
    >>> round(unbounded_expected_error([100.0], [100.0], C=1, epsilon=1.0, delta=0.01), 4)
    1.0
    """
    h = check_array("hbar", hbar, low=0.0)
    Nb = check_array("Nbar", Nbar, ndim=1, low=0.0)
    if h.shape[-1] != Nb.size:
        raise ValueError(f"hbar must have last axis {Nb.size} (the size of Nbar); got shape {h.shape}")
    c = _threshold(C)
    eps = _epsilon(epsilon)
    t = unbounded_threshold(c, epsilon=eps, delta=delta)
    b = c / eps
    keep = Nb > 0
    h = h[..., keep]
    Nv = np.broadcast_to(Nb[keep], h.shape)
    mt = np.maximum(t, Nv)
    p_t, m_t = _laplace_tail_moments(np.full(h.shape, t), h, b)
    p_m, m_m = _laplace_tail_moments(mt, h, b)
    err = Nv * (1.0 - p_t) + (m_m - Nv * p_m) + (Nv * (p_t - p_m) - (m_t - m_m))
    return _out(err.sum(axis=-1))


def surrogate_error(histograms, C, *, epsilon: float, delta: float):
    r"""The surrogate :math:`V(C)` of Algorithm 4 (seed 004, Sec. 5).

    .. math:: V(C) = 2\sum_i (\|N_i\|_1 - C)_+ + \sum_{j:\overline N_j > 0}
       \min\Big(\sum_i \frac{C N_{ij}}{\max(C, \|N_i\|_1)},\ C + \frac{C}{\varepsilon}\log\frac{C}{2\delta}\Big)

    Vectorised over an array of thresholds ``C``.

    Examples
    --------
    >>> surrogate_error([[4, 0], [1, 1]], 2.0, epsilon=1.0, delta=0.1)
    8.0
    """
    N = _histograms(histograms)
    Cs, scalar = _thresholds(C)
    eps = _epsilon(epsilon)
    dl = _delta(delta)
    m = N.sum(axis=1).astype(float)
    keep = N.sum(axis=0) > 0
    Nk = N[:, keep].astype(float)
    out = np.empty(Cs.size)
    for k, c in enumerate(Cs):
        w = c / np.maximum(c, np.where(m > 0, m, 1.0))
        eh = w @ Nk
        out[k] = (
            2.0 * np.maximum(m - c, 0.0).sum() + np.minimum(eh, unbounded_threshold(c, epsilon=eps, delta=dl)).sum()
        )
    return _out(out[0]) if scalar else out


def theorem52_bounds(
    histograms, hbar_draws, C: float, *, epsilon: float, delta: float, C_max: float
) -> tuple[float, float, float]:
    r"""The two sides of seed 004, Theorem 5.2 (Eq. 1), and a corrected upper bound.

    With :math:`E_j = \mathbb E[\min(\bar h_j, t)]` estimated by the mean over the
    rand-clip draws ``hbar_draws`` (shape (R, d)) and :math:`B = \sum_i (\|N_i\|_1 - C)_+`:

    * lower :math:`= B/2 + \sum_j E_j / (12\log(C_m/2\delta))`;
    * upper (paper) :math:`= 2B + \sum_j E_j`;
    * corrected upper :math:`= 2B + \sum_j E_j + (t + C/\varepsilon)\sum_{j:\bar h_j \le t} q_j`,
      :math:`q_j = \tfrac12 e^{-\varepsilon(t - \bar h_j)/C}` (averaged over the draws): the
      probability that an item below the threshold is released anyway, times a bound
      on the error it then causes. Valid when :math:`t \ge 2C/\varepsilon`.

    Only items with :math:`\overline N_j > 0` count. Returns ``(lower, upper, corrected_upper)``.

    Examples
    --------
    >>> lo, up, fixed = theorem52_bounds([[1]], [[1]], 1, epsilon=1.0, delta=0.01, C_max=1)
    >>> bool(lo <= up <= fixed)
    True
    """
    N = _histograms(histograms)
    h = check_array("hbar_draws", hbar_draws, ndim=2, low=0.0)
    if h.shape[1] != N.shape[1]:
        raise ValueError(f"hbar_draws must have shape (R, {N.shape[1]}); got {h.shape}")
    c = _threshold(C)
    eps = _epsilon(epsilon)
    dl = _delta(delta)
    cm = check_real("C_max", C_max, low=c)
    t = unbounded_threshold(c, epsilon=eps, delta=dl)
    keep = N.sum(axis=0) > 0
    h = h[:, keep]
    B = float(np.maximum(N.sum(axis=1) - c, 0.0).sum())
    Ej = float(np.minimum(h, t).sum(axis=1).mean())
    q = np.where(h <= t, 0.5 * np.exp(-eps * (t - np.minimum(h, t)) / c), 0.0).sum(axis=1).mean()
    lower = B / 2 + Ej / (12.0 * math.log(cm / (2.0 * dl)))
    upper = 2 * B + Ej
    return lower, upper, upper + (t + c / eps) * float(q)


def exponential_mechanism_probabilities(scores, *, epsilon: float, sensitivity: float) -> np.ndarray:
    r"""Output law of the exponential mechanism minimising ``scores``:
    :math:`p_k \propto e^{-\varepsilon V_k/(2\Delta)}`.

    Computed with logsumexp, so large scores neither overflow nor underflow.

    Examples
    --------
    >>> exponential_mechanism_probabilities([0.0, 2.0], epsilon=1.0, sensitivity=1.0).round(4).tolist()
    [0.7311, 0.2689]
    """
    v = check_array("scores", scores, ndim=1, min_size=1)
    eps = _epsilon(epsilon)
    sens = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    logits = -eps * v / (2.0 * sens)
    return np.exp(logits - special.logsumexp(logits))


def select_threshold_exponential(
    histograms, grid, *, epsilon: float, delta: float, epsilon_prime: float, C_max: float, rng=None
) -> float:
    r"""Algorithm 4 of seed 004: private threshold for Algorithm 3 by the exponential mechanism.

    Scores :math:`V(C)` (:func:`surrogate_error`) on ``grid`` ⊆ [1, C_m], sensitivity
    :math:`5C_m/2` as in the paper, privacy ε'. The paper's bound on the
    sensitivity assumes every user holds at most :math:`C_m` items.

    Examples
    --------
    >>> c = select_threshold_exponential(
    ...     [[3, 1], [1, 1]], [1, 2, 4], epsilon=1.0, delta=0.1, epsilon_prime=1.0, C_max=4, rng=0
    ... )
    >>> c in (1, 2, 4)
    True
    """
    N = _histograms(histograms)
    g = check_array("grid", grid, ndim=1, low=0.0, low_open=True, min_size=1)
    cm = check_real("C_max", C_max, low=0.0, low_open=True)
    if g.max() > cm:
        raise ValueError(f"grid must lie in (0, C_max]; got max {g.max()!r} > {cm!r}")
    if N.sum(axis=1).max() > cm:
        raise ValueError("C_max must bound every user's ||N_i||_1 (the sensitivity 5 C_max / 2 relies on it)")
    gen = as_generator(rng)
    v = surrogate_error(N, g, epsilon=epsilon, delta=delta)
    p = exponential_mechanism_probabilities(np.atleast_1d(v), epsilon=epsilon_prime, sensitivity=2.5 * cm)
    return float(g[gen.choice(g.size, p=p)])


# ---------------------------------------------------------------------------
# Algorithm 5 (debiasing Poisson counts)
# ---------------------------------------------------------------------------


def _lams(lam, name: str = "lam") -> tuple[np.ndarray, bool]:
    scalar = np.ndim(lam) == 0
    return np.atleast_1d(check_array(name, lam, low=0.0)).astype(float), scalar


def clipped_poisson_mean(lam, C: int):
    r""":math:`h(\lambda) = \mathbb E[\min(X, C)]`, :math:`X \sim \mathrm{Poi}(\lambda)` (seed 004, Algorithm 5).

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
    r""":math:`\gamma_C = 1/\Pr[\mathrm{Poi}(1) < C]` of seed 004, Theorem C.1.

    Examples
    --------
    >>> round(gamma_c(1), 6)  # e
    2.718282
    """
    c = check_int("C", C, low=1)
    return float(1.0 / special.gammaincc(c, 1.0))


def debiased_count(counts, *, C: int, epsilon: float, lam_max: float, rng=None) -> float:
    r"""Algorithm 5 of seed 004: clipped, noised and debiased total count (d = 1), ε-DP.

    :math:`Y_i = \min(N_i, C)`, :math:`y = (\sum_i Y_i + \mathrm{Lap}(C/\varepsilon))/n`,
    :math:`\widehat N = n\, h^{-1}(\Pi(y))` where Π projects y onto
    :math:`[0, h(\lambda_{max})]` (post-processing; Theorem C.1 takes
    :math:`\lambda_{max} = 1`). Privacy is that of the Laplace step: ε-DP for
    add/remove neighbours, 2ε under replacement.

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


# ---------------------------------------------------------------------------
# exercise checker
# ---------------------------------------------------------------------------


def check_clipped_poisson_inverse(func, *, C: int = 3, trials: int = 200, rng=0) -> str:
    r"""Self-check for the exercise "invert h": does ``func(y, C)`` return :math:`h^{-1}(y)`?

    Draws ``trials`` values λ from a log-uniform law on [1e-3, 30], feeds
    ``y = h(λ)`` and compares with λ. Also tests, by Monte Carlo with 20 000
    Poisson draws at one λ, that the student's root is consistent with simulated
    clipped means (4 standard errors). Returns a message; never the answer.

    Examples
    --------
    >>> check_clipped_poisson_inverse(clipped_poisson_mean_inverse).startswith("Correct")
    True
    """
    c = check_int("C", C, low=1)
    k = check_int("trials", trials, low=1)
    gen = as_generator(rng)
    lam = np.exp(gen.uniform(math.log(1e-3), math.log(30.0), size=k))
    y = clipped_poisson_mean(lam, c)
    ok = y < c * (1 - 1e-9)
    y, lam = y[ok], lam[ok]
    try:
        got = np.array([float(func(float(v), c)) for v in y])
    except Exception as exc:  # the student's code failing is feedback, not an error
        return f"Your function raised {type(exc).__name__}: {exc}"
    if not np.all(np.isfinite(got)):
        return "Some results are not finite: check values of y close to C, where h is flat."
    rel = np.abs(got - lam) / lam
    if np.max(rel) > 1e-6:
        i = int(np.argmax(rel))
        return (
            f"Not yet: for y = {y[i]:.6g} (C = {c}) your answer is off by a relative {rel[i]:.2e}. "
            "Remember that h is increasing and concave, and h(lambda) <= lambda."
        )
    lam0 = 1.5
    sample = np.minimum(gen.poisson(lam0, size=20_000), c)
    se = sample.std(ddof=1) / math.sqrt(sample.size)
    back = float(func(float(sample.mean()), c))
    if abs(clipped_poisson_mean(back, c) - sample.mean()) > 4 * se + 1e-9:
        return "Not yet: your inverse does not reproduce simulated clipped means."
    return f"Correct: {y.size} values inverted to relative accuracy {np.max(rel):.1e}."


def check_gaussian_threshold(func, *, trials: int = 40, rng=0) -> str:
    r"""Self-check for the exercise "compute C* of Theorem 4.3": ``func(l1, l2, d, sigma)``.

    Generates ``trials`` random user-level datasets (heterogeneous sizes,
    Dirichlet item mixes), and compares the student's threshold with the
    minimiser of the convex objective G(C) by its objective value (a correct
    answer attains min G to 1e-9 relative). Returns a message; never the answer.

    Examples
    --------
    >>> def mine(l1, l2, d, sigma):
    ...     return gaussian_threshold(l1, l2, d=d, sigma=sigma)
    >>> check_gaussian_threshold(mine).startswith("Correct")
    True
    """
    k = check_int("trials", trials, low=1)
    gen = as_generator(rng)
    for _ in range(k):
        n, d = int(gen.integers(5, 200)), int(gen.integers(1, 12))
        sizes = gen.poisson(gen.gamma(0.8, 30.0, size=n))
        N = np.array(
            [gen.multinomial(m, p) for m, p in zip(sizes, gen.dirichlet(np.full(d, 0.5), size=n), strict=False)]
        ).reshape(n, d)
        l1, l2 = N.sum(axis=1).astype(float), np.sqrt((N.astype(float) ** 2).sum(axis=1))
        sigma = float(gen.uniform(0.2, 6.0))
        try:
            got = float(func(l1, l2, d, sigma))
        except Exception as exc:  # the student's error is feedback
            return f"Your function raised {type(exc).__name__}: {exc}"
        if not math.isfinite(got) or got < 0:
            return f"Not yet: a threshold must be a finite number >= 0; got {got!r}."
        best = threshold_objective(l1, l2, max(gaussian_threshold(l1, l2, d=d, sigma=sigma), 1e-300), d=d, sigma=sigma)
        mine = threshold_objective(l1, l2, max(got, 1e-300), d=d, sigma=sigma)
        if mine > best * (1 + 1e-9) + 1e-9:
            return (
                f"Not yet: on a dataset with n = {n}, d = {d}, sigma = {sigma:.3g}, your C gives "
                f"G(C) = {mine:.6g}, but a smaller value of G is possible. Look at the sign of the "
                "right derivative M - sum over users with ||N_i||_2 > C of ||N_i||_1/||N_i||_2."
            )
    return f"Correct: your threshold minimises G(C) on all {k} random datasets."


def check_rand_clip(func, *, trials: int = 3000, rng=0) -> str:
    r"""Self-check for the exercise "random clipping of one user": ``func(hist, C, rng)``.

    ``hist`` is a 1-D integer histogram, ``C`` an integer and ``rng`` a
    numpy Generator; the answer must be an integer histogram with
    :math:`\min(\|N\|_1, C)` items, entrywise at most ``hist``, whose mean over
    ``trials`` calls matches :math:`C N_j/\max(C, \|N\|_1)` within 4 standard
    errors. Returns a message; never the answer.

    Examples
    --------
    >>> check_rand_clip(lambda h, C, g: rand_clip(np.asarray(h)[None, :], C, rng=g)[0]).startswith("Correct")
    True
    """
    k = check_int("trials", trials, low=100)
    gen = as_generator(rng)
    hist = np.array([6, 0, 3, 1, 2])
    C = 5
    draws = []
    for _ in range(k):
        try:
            out = np.asarray(func(hist.copy(), C, gen))
        except Exception as exc:  # the student's error is feedback
            return f"Your function raised {type(exc).__name__}: {exc}"
        if out.shape != hist.shape or not np.all(out == np.round(out)):
            return "Not yet: return an integer histogram of the same length as the input."
        if out.sum() != min(hist.sum(), C) or np.any(out < 0) or np.any(out > hist):
            return "Not yet: keep exactly min(||N||_1, C) items, never more copies of an item than the user holds."
        draws.append(out)
    sample = np.array(draws, dtype=float)
    target = C * hist / max(C, hist.sum())
    se = sample.std(axis=0, ddof=1) / math.sqrt(k)
    if np.any(np.abs(sample.mean(axis=0) - target) > 4 * se + 1e-9):
        return (
            "Not yet: the sizes are right but the items are not drawn uniformly without replacement "
            "(the average kept histogram is not proportional to the input)."
        )
    small = np.asarray(func(np.array([1, 2, 0, 0, 0]), C, gen))
    if not np.array_equal(small, [1, 2, 0, 0, 0]):
        return "Not yet: a user with at most C items must keep all of them."
    return f"Correct: sizes, bounds and unbiasedness ({k} draws, 4 standard errors) all check out."
