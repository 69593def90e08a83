r"""Federated quantiles from privatised histograms: flat, hierarchical and Haar.

The OcPBM paper (Sec. 4, Algs. 4–5, Props. 1–3, App. C.4–C.6) estimates a quantile of
one private number per user (there: the norm :math:`\|y_i\|_2` of the user's
Kashin representation) under secure summation. Each user

1. discretises her value into a one-hot histogram over :math:`[0, B]` with
   :math:`2^b` bins of width :math:`\Delta = B/2^b` (:func:`discretize_values`);
2. encodes the histogram as a vector with entries in :math:`[-1, 1]`
   (:func:`histogram_user_vectors`), in one of three ways:

   ``"flat"``
       the :math:`2^b` bins themselves;
   ``"hh"``
       the hierarchical histogram: every node of the binary tree over the bins
       except the root (levels :math:`0,\dots,b-1`, :math:`2^{b+1}-2` counts;
       the root would hold the public number of users :math:`n`);
   ``"dht"``
       the :math:`2^b-1` rescaled Haar coefficients :math:`a_L - a_R` of the
       internal nodes (one :math:`\pm 1` per level, Sec. 4.2);

3. privatises the vector with a distributed DP mechanism whose secure sum the
   server decodes into an unbiased estimate of the column sums. The mechanism
   is a parameter (a callable, see :func:`exact_sum_mechanism` and
   :func:`cpbm_sum_mechanism`), so the transforms here are exact and testable
   without noise.

The server turns the estimated sums into estimated prefix counts
:math:`\hat c[1:v]` (:func:`histogram_prefix_counts`, Eq. 7 for the Haar
coefficients) and returns :math:`\Delta\hat v` with
:math:`\hat v = \arg\min_v |\hat c[1:v]/n - \gamma^*|` (Alg. 5,
:func:`quantile_from_prefix`).

Conventions fixed here (the paper is inconsistent, see the chapter
"Federated quantiles"):

* the Haar base coefficient is the **mean** of the leaves,
  :math:`H_0 = 2^{-b}\sum_v c[v]`; with the paper's "sum of the counts" the
  decoding formula is off by :math:`(2^b - 1)H_0`;
* variances are those of the estimated *fraction* :math:`\hat c[1:v]/n` at a
  fixed bin :math:`v`; they scale as :math:`1/n`, not :math:`1/n^2`.

Levels are counted from the leaves (level 0) to the root (level :math:`b`).
Haar coefficients are stored in heap order: the root first, then level
:math:`b-1` left to right, ..., level 1 last; node :math:`j` of level :math:`l`
has index :math:`2^{b-l}-1+j`. Hierarchical-histogram counts are stored level
0 (leaves) first, then level 1, ..., level :math:`b-1`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._rng import as_generator
from ._validation import (
    MAX_CELLS,
    call_checked,
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_ndim,
    check_real,
    check_scale,
)

__all__ = [
    "ENCODINGS",
    "Mechanism",
    "QuantileResult",
    "discretize_values",
    "haar_transform",
    "inverse_haar_transform",
    "histogram_dimension",
    "histogram_changed_coordinates",
    "histogram_rdp",
    "histogram_user_vectors",
    "histogram_prefix_counts",
    "prefix_weights",
    "max_prefix_weight",
    "quantile_from_prefix",
    "range_count",
    "federated_quantile",
    "average_bin_error",
    "exact_sum_mechanism",
    "cpbm_sum_mechanism",
    "cpbm_sum_sampler",
    "cpbm_coordinate_variance",
    "prefix_variance",
    "flat_variance_bound",
    "hh_variance_bound",
    "dht_variance_bound",
]

ENCODINGS = ("flat", "hh", "dht")

#: A distributed mechanism: ``mechanism(user_vectors, rng)`` takes the ``(n, dim)``
#: array of per-user vectors with entries in ``[-1, 1]`` and returns the server's
#: ``(dim,)`` unbiased estimate of their column sums.
Mechanism = Callable[[np.ndarray, np.random.Generator], np.ndarray]

_MAX_B = 20


def _check_b(b) -> int:
    return check_int("b", b, low=1, high=_MAX_B)


def _check_encoding(encoding) -> str:
    return check_choice("encoding", encoding, ENCODINGS)


# ---------------------------------------------------------------------------
# discretisation
# ---------------------------------------------------------------------------


def discretize_values(values, *, B: float, b: int, out_of_range: str = "raise") -> np.ndarray:
    r"""Bin index (0-based) of each value in a histogram of range ``B`` with ``2^b`` bins.

    Bin :math:`k` (0-based) is :math:`(k\Delta, (k+1)\Delta]` with
    :math:`\Delta = B/2^b`; the value 0 goes to bin 0. The returned quantile of
    Alg. 5 is the upper edge :math:`\Delta\hat v` of the chosen bin, where
    :math:`\hat v = k + 1` is the 1-based bin number.

    Parameters
    ----------
    values : array_like, shape (n,)
        Non-negative values (the OcPBM paper: :math:`\|y_i\|_2`).
    B : float
        Range of the histogram, > 0.
    b : int
        Number of tree levels, ``1 <= b <= 20``.
    out_of_range : {"raise", "last_bin"}
        What to do with values above ``B``: raise (default), or put them in the
        last bin (the protocol's choice when ``B`` is only a guess; then the
        histogram describes ``min(value, B)``).

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> discretize_values([0.0, 0.25, 0.26, 1.0], B=1.0, b=2).tolist()
    [0, 0, 1, 3]
    """
    B = check_scale("B", B)
    b = _check_b(b)
    check_choice("out_of_range", out_of_range, ("raise", "last_bin"))
    x = check_array("values", values, ndim=1, low=0.0)
    if out_of_range == "raise" and x.size and x.max() > B:
        raise ValueError(
            f"values must lie in [0, B] = [0, {B:g}]; got max {x.max()!r} "
            "(pass out_of_range='last_bin' to put larger values in the last bin)"
        )
    nbins = 2**b
    k = np.ceil(x * (nbins / B)).astype(np.int64) - 1
    return np.clip(k, 0, nbins - 1)


# ---------------------------------------------------------------------------
# Haar transform (Eq. 6) and its inverse (Eq. 7)
# ---------------------------------------------------------------------------


def _check_counts(counts) -> tuple[np.ndarray, int]:
    c = check_array("counts", counts, min_size=2)
    if c.ndim < 1:
        raise ValueError("counts must have at least one dimension")
    nb = c.shape[-1]
    b = int(np.log2(nb)) if nb > 0 else 0
    if nb < 2 or 2**b != nb or b > _MAX_B:
        raise ValueError(f"counts must have a last axis of length 2^b with 1 <= b <= {_MAX_B}; got {nb}")
    return c, b


def haar_transform(counts, *, rescaled: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""Discrete Haar transform of histograms with :math:`2^b` bins (the OcPBM paper, Eq. 6).

    For an internal node :math:`w` at level :math:`l \in \{1,\dots,b\}` with
    leaf sums :math:`a_L, a_R` in its left and right subtrees,

    .. math:: H_l[w] = \frac{a_L - a_R}{2^l}\quad(\text{Eq. 6}),\qquad
              \tilde H_l[w] = a_L - a_R\quad(\text{rescaled, Sec. 4.2}),

    and the base coefficient is the mean :math:`H_0 = 2^{-b}\sum_v c[v]`. These
    are the coordinates of :math:`c` in the orthogonal Haar basis
    :math:`\{\mathbf 1\} \cup \{\psi_w\}` (:math:`\psi_w = +1` on the left
    leaves of :math:`w`, :math:`-1` on the right ones), since
    :math:`\langle c,\psi_w\rangle = a_L - a_R` and
    :math:`\|\psi_w\|^2 = 2^l`.

    Parameters
    ----------
    counts : array_like, shape (..., 2^b)
        Histograms (any real entries); leading axes are batch axes.
    rescaled : bool
        Return :math:`a_L - a_R` (default, what users send) or Eq. 6's
        :math:`(a_L - a_R)/2^l`.

    Returns
    -------
    h0 : ndarray, shape (...)
        :math:`H_0`, the mean of the leaves.
    coeffs : ndarray, shape (..., 2^b - 1)
        Coefficients in heap order (root first).

    Examples
    --------
    >>> h0, h = haar_transform([3, 1, 0, 2])
    >>> float(h0), h.tolist()
    (1.5, [2.0, 2.0, -2.0])
    """
    rescaled = check_bool("rescaled", rescaled)
    c, b = _check_counts(counts)
    sums = c.astype(float)
    blocks = []
    for _level in range(1, b + 1):
        left = sums[..., 0::2]
        right = sums[..., 1::2]
        d = left - right
        if not rescaled:
            d = d / 2.0**_level
        blocks.append(d)
        sums = left + right
    h0 = sums[..., 0] / 2.0**b
    coeffs = np.concatenate(blocks[::-1], axis=-1)
    return h0, coeffs


def inverse_haar_transform(h0, coeffs, *, rescaled: bool = True) -> np.ndarray:
    r"""Leaf counts from the Haar coefficients (the OcPBM paper, Eq. 7, corrected base).

    .. math:: c[v] = H_0 + \sum_{l=1}^{b} \frac{\tilde H_l[w_l(v)]}{2^l}\, g_l[v],

    where :math:`w_l(v)` is the level-:math:`l` ancestor of leaf :math:`v`,
    :math:`g_l[v] = +1` (:math:`-1`) if :math:`v` lies in its left (right)
    subtree, and :math:`H_0` is the **mean** of the leaves. Computed top-down:
    a node whose leaves have mean :math:`\mu` passes :math:`\mu \pm H_l` to its
    children. Exact (in floating point) for integer histograms with fewer than
    :math:`2^{53-b}` items.

    Parameters
    ----------
    h0 : float or array_like, shape (...)
    coeffs : array_like, shape (..., 2^b - 1)
        Heap order, as returned by :func:`haar_transform` (possibly noisy).
    rescaled : bool
        Whether ``coeffs`` are :math:`a_L - a_R` (default) or Eq. 6 values.

    Examples
    --------
    >>> inverse_haar_transform(1.5, [2.0, 2.0, -2.0]).tolist()
    [3.0, 1.0, 0.0, 2.0]
    """
    rescaled = check_bool("rescaled", rescaled)
    h = check_array("coeffs", coeffs, min_size=1)
    if h.ndim < 1:
        raise ValueError("coeffs must have at least one dimension")
    nb = h.shape[-1] + 1
    b = int(np.log2(nb))
    if 2**b != nb or b < 1 or b > _MAX_B:
        raise ValueError(f"coeffs must have a last axis of length 2^b - 1 with 1 <= b <= {_MAX_B}; got {nb - 1}")
    mu = check_array("h0", h0)
    if mu.shape != h.shape[:-1]:
        raise ValueError(f"h0 must have shape {h.shape[:-1]} (the batch shape of coeffs); got {mu.shape}")
    means = mu[..., None].astype(float)
    for level in range(b, 0, -1):
        start = 2 ** (b - level) - 1
        block = h[..., start : 2 * start + 1]
        if rescaled:
            block = block / 2.0**level
        nxt = np.empty(means.shape[:-1] + (2 * means.shape[-1],))
        nxt[..., 0::2] = means + block
        nxt[..., 1::2] = means - block
        means = nxt
    return means


# ---------------------------------------------------------------------------
# per-user encodings
# ---------------------------------------------------------------------------


def histogram_dimension(encoding: str, b: int) -> int:
    r"""Number of coordinates each user privatises.

    ``"flat"``: :math:`2^b`; ``"hh"``: :math:`2^{b+1}-2` (all nodes but the
    root); ``"dht"``: :math:`2^b - 1` (the OcPBM paper, App. C.7). Pass it as ``dim``
    to the cPBM accountant.

    Examples
    --------
    >>> [histogram_dimension(e, 6) for e in ENCODINGS]
    [64, 126, 63]
    """
    encoding = _check_encoding(encoding)
    b = _check_b(b)
    return {"flat": 2**b, "hh": 2 ** (b + 1) - 2, "dht": 2**b - 1}[encoding]


def histogram_changed_coordinates(encoding: str, b: int) -> int:
    r"""Largest number of coordinates on which two users' encoded vectors differ.

    Two users in bins :math:`u \ne u'` whose lowest common ancestor sits at level
    :math:`L \le b` differ in ``"flat"``: 2 coordinates; ``"hh"``: :math:`2L`
    (the distinct ancestors at levels :math:`0,\dots,L-1`); ``"dht"``:
    :math:`2L - 1` (the common ancestor flips sign, and the distinct ancestors
    at levels :math:`1,\dots,L-1` go from :math:`\pm1` to 0 and back). The
    maximum is attained at :math:`L = b`.

    Examples
    --------
    >>> [histogram_changed_coordinates(e, 6) for e in ENCODINGS]
    [2, 12, 11]
    """
    encoding = _check_encoding(encoding)
    b = _check_b(b)
    return {"flat": 2, "hh": 2 * b, "dht": 2 * b - 1}[encoding]


def histogram_rdp(order, *, encoding: str, b: int, n: int, m: int, theta: float, rule: str = "changed"):
    r"""Rényi DP of one privatised histogram release (cPBM per coordinate, :math:`C = 1`).

    The server sees independent coordinate sums, so the Rényi divergence between
    neighbouring datasets (replace-one, :math:`n` fixed) is the **sum** of the
    per-coordinate divergences, and coordinates on which the replaced user's old
    and new vectors agree contribute exactly zero. Hence

    .. math:: \varepsilon(\lambda) \le k \cdot \varepsilon_1(\lambda),

    with :math:`\varepsilon_1` the one-coordinate bound of Lemma 2
    (:func:`fedfreq.accounting.cpbm_rdp` with ``dim=1``, valid for any pair of
    entries in :math:`[-1, 1]`) and :math:`k` =
    :func:`histogram_changed_coordinates` (``rule="changed"``), or
    :math:`k` = :func:`histogram_dimension` (``rule="all"``: the OcPBM paper,
    App. C.7, which sets ``dim`` to :math:`2^b - 1` for the Haar tree).

    Examples
    --------
    >>> from fedfreq.accounting import cpbm_rdp
    >>> r = histogram_rdp(2.0, encoding="dht", b=6, n=1000, m=3, theta=0.2)
    >>> bool(abs(r - 11 * cpbm_rdp(2.0, n=1000, theta=0.2, m=3, dim=1)) < 1e-12)
    True
    """
    from .accounting import cpbm_rdp

    check_choice("rule", rule, ("changed", "all"))
    k = histogram_changed_coordinates(encoding, b) if rule == "changed" else histogram_dimension(encoding, b)
    return cpbm_rdp(order, n=n, theta=theta, m=m, dim=k)


def _check_bins(bins, b: int) -> np.ndarray:
    return check_array("bins", bins, ndim=1, integer=True, low=0, high=2**b - 1)


def histogram_user_vectors(bins, *, encoding: str, b: int) -> np.ndarray:
    r"""Each user's encoded histogram, one row per user (entries in {-1, 0, 1}).

    ``"flat"`` is the one-hot histogram; ``"hh"`` has one 1 per level
    :math:`0,\dots,b-1` (the ancestors of the user's bin); ``"dht"`` has one
    :math:`\pm 1` per level :math:`1,\dots,b` (the OcPBM paper, Sec. 4.2: the rescaled
    coefficient :math:`a_L - a_R` of the user's one-hot histogram), so that
    ``histogram_user_vectors(...)`` equals ``haar_transform(one_hot)[1]``.

    Parameters
    ----------
    bins : array_like of int, shape (n,)
        0-based bin indices from :func:`discretize_values`.
    encoding : {"flat", "hh", "dht"}
    b : int

    Returns
    -------
    ndarray of int8, shape (n, histogram_dimension(encoding, b))

    Examples
    --------
    >>> histogram_user_vectors([2], encoding="dht", b=2).tolist()
    [[-1, 0, 1]]
    """
    encoding = _check_encoding(encoding)
    b = _check_b(b)
    k = _check_bins(bins, b)
    n = k.size
    out = np.zeros((n, histogram_dimension(encoding, b)), dtype=np.int8)
    rows = np.arange(n)
    if encoding == "flat":
        out[rows, k] = 1
    elif encoding == "hh":
        for level in range(b):
            offset = 2 ** (b + 1) - 2 ** (b - level + 1)
            out[rows, offset + (k >> level)] = 1
    else:
        for level in range(1, b + 1):
            start = 2 ** (b - level) - 1
            sign = 1 - 2 * ((k >> (level - 1)) & 1)
            out[rows, start + (k >> level)] = sign
    return out


def histogram_prefix_counts(sums, *, encoding: str, b: int, n: int) -> np.ndarray:
    r"""Estimated prefix counts :math:`\hat c[1:v]`, :math:`v = 1,\dots,2^b`.

    ``"flat"``: cumulative sums of the bins. ``"hh"``: the dyadic decomposition
    of :math:`[1, v]` into at most :math:`b` tree nodes (one per set bit of
    :math:`v`); :math:`\hat c[1:2^b] = n`. ``"dht"``: :math:`H_0 = n/2^b` (the
    number of users is public, so :math:`H_0` is not privatised) and Eq. 7
    (:func:`inverse_haar_transform`), then cumulative sums; equivalently
    :math:`\hat c[1:v] = vH_0 + \sum_w (s_L[w]-s_R[w])\tilde H[w]/2^{l}`.

    Parameters
    ----------
    sums : array_like, shape (..., dim)
        (Estimated) column sums of :func:`histogram_user_vectors`.
    encoding : {"flat", "hh", "dht"}
    b : int
    n : int
        Number of users (public).

    Returns
    -------
    ndarray, shape (..., 2^b)

    Examples
    --------
    >>> s = histogram_user_vectors([0, 1, 1, 3], encoding="hh", b=2).sum(axis=0)
    >>> histogram_prefix_counts(s, encoding="hh", b=2, n=4).tolist()
    [1.0, 3.0, 3.0, 4.0]
    """
    encoding = _check_encoding(encoding)
    b = _check_b(b)
    n = check_int("n", n, low=1)
    dim = histogram_dimension(encoding, b)
    s = check_array("sums", sums)
    if s.ndim < 1 or s.shape[-1] != dim:
        raise ValueError(
            f"sums must have a last axis of length {dim} for encoding={encoding!r}, b={b}; got shape {s.shape}"
        )
    nb = 2**b
    if encoding == "flat":
        return np.cumsum(s, axis=-1)
    if encoding == "dht":
        h0 = np.full(s.shape[:-1], n / nb)
        return np.cumsum(inverse_haar_transform(h0, s), axis=-1)
    v = np.arange(1, nb + 1)
    out = np.zeros(s.shape[:-1] + (nb,))
    for level in range(b):
        offset = 2 ** (b + 1) - 2 ** (b - level + 1)
        use = ((v >> level) & 1).astype(bool) & (v < nb)
        pos = (v[use] >> (level + 1)) << 1
        out[..., use] += s[..., offset + pos]
    out[..., nb - 1] = n
    return out


def prefix_weights(v, *, encoding: str, b: int) -> np.ndarray:
    r"""Weights :math:`w` with :math:`\hat c[1:v] = \text{const} + \sum_k w_k \hat S_k`.

    :math:`\hat S_k` are the estimated column sums; the constant is :math:`0`
    (flat), :math:`n[v = 2^b]` (hh) or :math:`vn/2^b` (dht). For the Haar
    coefficients :math:`w = (s_L[w]-s_R[w])/2^l`, non-zero for at most one node
    per level with :math:`|w| \le 1/2` (App. C.6). With independent noise of
    variance :math:`\sigma_k^2` on :math:`\hat S_k`,
    :math:`\mathrm{Var}(\hat c[1:v]) = \sum_k w_k^2\sigma_k^2`.

    Parameters
    ----------
    v : int or array_like of int
        Prefix lengths in :math:`1,\dots,2^b`.

    Returns
    -------
    ndarray, shape (len(v), dim) (or (dim,) for a scalar ``v``)

    Examples
    --------
    >>> prefix_weights(3, encoding="dht", b=2).tolist()
    [0.25, 0.0, 0.5]
    """
    encoding = _check_encoding(encoding)
    b = _check_b(b)
    if b > 12:
        raise ValueError(f"b must be at most 12 for prefix_weights (dense matrix); got {b}")
    nb = 2**b
    scalar = check_ndim("v", v) == 0
    vv = check_array("v", np.atleast_1d(v), ndim=1, integer=True, low=1, high=nb)
    dim = histogram_dimension(encoding, b)
    # exact in floating point: weights are dyadic rationals
    basis = np.eye(dim)
    if encoding == "dht":
        # prefix counts are linear in the coefficients with zero offset once H0 = 0
        cum = np.cumsum(inverse_haar_transform(np.zeros(dim), basis), axis=-1)  # (dim, nb)
    else:
        cum = histogram_prefix_counts(basis, encoding=encoding, b=b, n=1)
        if encoding == "hh":
            cum[:, nb - 1] = 0.0
    w = cum[:, vv - 1].T
    return w[0] if scalar else w


def max_prefix_weight(encoding: str, b: int) -> tuple[float, int]:
    r"""Exact :math:`\max_v \sum_k w_k(v)^2` and a maximising :math:`v` (1-based).

    The worst-case number of unit-variance noise terms a prefix count carries:
    the constant that replaces :math:`B/\Delta = 2^b` (Prop. 1), :math:`b`
    (Prop. 2) and the bound :math:`b/4` (Prop. 3).

    Examples
    --------
    >>> max_prefix_weight("flat", 3)
    (8.0, 8)
    """
    b = _check_b(b)
    w = prefix_weights(np.arange(1, 2**b + 1), encoding=encoding, b=b)
    tot = np.sum(w**2, axis=1)
    i = int(np.argmax(tot))
    return float(tot[i]), i + 1


# ---------------------------------------------------------------------------
# quantile search (Alg. 5) and range queries
# ---------------------------------------------------------------------------


def quantile_from_prefix(prefix, gamma, *, n: int, B: float, rule: str = "argmin") -> np.ndarray:
    r"""Alg. 5, step 3: the threshold :math:`\Delta\hat v` for target level(s) :math:`\gamma`.

    ``rule="argmin"`` (the paper):
    :math:`\hat v = \arg\min_v |\hat c[1:v]/n - \gamma|`, ties to the smallest
    :math:`v`. The noisy prefix need not be monotone, and where the true CDF is
    flat (e.g. equal to 1 over many bins) the argmin lands on whichever of
    those bins has the most favourable noise, possibly far from the quantile.

    ``rule="first"``: the smallest :math:`v` with :math:`\hat c[1:v]/n \ge \gamma`
    (:math:`2^b` if there is none), the usual definition of a quantile from a
    CDF; it only looks at the noise up to the crossing.

    Parameters
    ----------
    prefix : array_like, shape (..., 2^b)
        Estimated prefix counts.
    gamma : float or array_like
        Target quantile level(s) in [0, 1].
    n : int
    B : float
    rule : {"argmin", "first"}

    Returns
    -------
    ndarray, shape prefix.shape[:-1] + gamma.shape
        The thresholds :math:`\Delta\hat v`.

    Examples
    --------
    >>> quantile_from_prefix([1.0, 3.0, 3.0, 4.0], 0.5, n=4, B=1.0).tolist()
    0.25
    >>> quantile_from_prefix([1.0, 3.0, 3.0, 4.0], 0.5, n=4, B=1.0, rule="first").tolist()
    0.5
    """
    p = check_array("prefix", prefix)
    if p.ndim < 1 or p.shape[-1] < 2:
        raise ValueError("prefix must have a last axis with at least 2 entries")
    g = check_array("gamma", gamma, low=0.0, high=1.0)
    n = check_int("n", n, low=1)
    B = check_scale("B", B)
    check_choice("rule", rule, ("argmin", "first"))
    nb = p.shape[-1]
    frac = p[..., None, :] / n
    target = g.reshape(-1, 1)
    if rule == "argmin":
        vhat = np.argmin(np.abs(frac - target), axis=-1) + 1
    else:
        reached = frac >= target
        vhat = np.where(reached.any(axis=-1), np.argmax(reached, axis=-1) + 1, nb)
    return vhat.reshape(p.shape[:-1] + g.shape) * (B / nb)


def range_count(prefix, lo, hi) -> np.ndarray:
    r"""Estimated number of users in bins :math:`lo,\dots,hi` (1-based, inclusive).

    :math:`\hat c[lo:hi] = \hat c[1:hi] - \hat c[1:lo-1]`.

    Examples
    --------
    >>> float(range_count([1.0, 3.0, 3.0, 4.0], 2, 4))
    3.0
    """
    p = check_array("prefix", prefix, min_size=1)
    if p.ndim not in (1, 2):
        raise ValueError(f"prefix must be 1-D (one histogram) or 2-D (one per row); got shape {p.shape}")
    nb = p.shape[-1]
    lo = check_int("lo", lo, low=1, high=nb)
    hi = check_int("hi", hi, low=lo, high=nb)
    return p[..., hi - 1] - (p[..., lo - 2] if lo > 1 else 0.0)


# ---------------------------------------------------------------------------
# mechanisms
# ---------------------------------------------------------------------------


def exact_sum_mechanism(user_vectors, rng=None) -> np.ndarray:
    """The noiseless mechanism: the exact column sums (the non-private reference).

    Examples
    --------
    >>> exact_sum_mechanism([[1, 0], [1, -1]]).tolist()
    [2.0, -1.0]
    """
    u = check_array("user_vectors", user_vectors, ndim=2, low=-1.0, high=1.0)
    as_generator(rng)  # noiseless, but a bad rng is refused as everywhere else
    return u.sum(axis=0)


def cpbm_sum_mechanism(*, m: int, theta: float, neighbours: int | None = 1) -> Mechanism:
    r"""cPBM applied coordinate-wise with :math:`C = 1`, summed by SecSum, decoded by Eq. 3.

    Each coordinate :math:`y \in [-1, 1]` is sent as
    :math:`Z \sim \mathrm{Bin}(m, 1/2 + \theta y)` (the OcPBM paper, Alg. 4: cPBM on
    every node of the tree with :math:`C = 1`); the server learns
    :math:`\sum_i Z_i` through :func:`fedfreq.secagg.secure_sum` (modulus
    :math:`nm + 1`) and returns :math:`\hat S = n\,\hat y` with :math:`\hat y`
    from :func:`fedfreq.cpbm.cpbm_decode`, unbiased for :math:`\sum_i y_i`.

    The encoder is :func:`fedfreq.cpbm.cpbm_encode` applied to every coordinate
    as a one-dimensional vector, so its :math:`\ell_2` clipping to :math:`C = 1`
    is the identity on entries in :math:`[-1, 1]`. Clipping a user's whole Haar
    vector (norm :math:`\sqrt b`) to :math:`\ell_2` norm 1 instead would shrink
    it by :math:`1/\sqrt b` and bias the decoded counts; the coordinate-wise
    privacy analysis (:func:`histogram_rdp`) needs only :math:`|y| \le 1`.
    Because that clipping is the identity, the draws are made directly from
    :math:`1/2 + \theta y`: the same probabilities and the same random numbers as
    :func:`~fedfreq.cpbm.cpbm_encode` (the test suite checks it), without a norm per
    entry (:math:`n(2^b - 1)` of them at depth b).

    Returns
    -------
    callable ``mechanism(user_vectors, rng) -> ndarray`` of shape (dim,)

    Examples
    --------
    >>> mech = cpbm_sum_mechanism(m=8, theta=0.25)
    >>> mech(histogram_user_vectors([0, 1, 3], encoding="dht", b=2), 0).shape
    (3,)
    """
    m = check_int("m", m, low=1)
    theta = check_scale("theta", theta, high=0.25)
    if neighbours is not None:
        neighbours = check_int("neighbours", neighbours, low=1)
    from .cpbm import cpbm_decode
    from .secagg import modulus_for, secure_sum

    def mechanism(user_vectors, rng=None) -> np.ndarray:
        g = as_generator(rng)
        u = check_array("user_vectors", user_vectors, ndim=2, low=-1.0, high=1.0)
        n = u.shape[0]
        # cpbm_encode(u.reshape(-1, 1), theta=theta, C=1.0, m=m, rng=g) without its clipping (see above)
        p = u * theta
        p += 0.5
        z = g.binomial(m, p)
        total = secure_sum(z, modulus=modulus_for(n, m), max_entry=m, rng=g, neighbours=neighbours)
        return n * cpbm_decode(total, n=n, theta=theta, C=1.0, m=m)

    return mechanism


def cpbm_sum_sampler(user_vectors, *, m: int, theta: float, size: int | None = None, rng=None) -> np.ndarray:
    r"""Draw the decoded secure sum of coordinate-wise cPBM reports from its exact law.

    When every entry is in :math:`\{-1, 0, 1\}`, the sum over users of
    :math:`\mathrm{Bin}(m, 1/2 + \theta y_i)` is, coordinate by coordinate,
    :math:`\mathrm{Bin}(mn_-, 1/2-\theta) + \mathrm{Bin}(mn_0, 1/2) +
    \mathrm{Bin}(mn_+, 1/2+\theta)` with :math:`n_{-}, n_0, n_+` the numbers
    of users with entry :math:`-1, 0, 1`. Same distribution as
    :func:`cpbm_sum_mechanism` (before the secure-sum masking, which cancels),
    at the cost of three draws per coordinate instead of :math:`n`: for Monte
    Carlo studies of the estimators, never for a deployment. Returns the Eq. 3
    estimate :math:`(\sum_i Z_i - mn/2)/(m\theta)` of the column sums, shape
    ``(dim,)``, or ``(size, dim)`` for ``size`` independent repetitions.

    Examples
    --------
    >>> u = histogram_user_vectors([0, 1, 1], encoding="dht", b=1)
    >>> cpbm_sum_sampler(u, m=4, theta=0.25, rng=0).shape
    (1,)
    """
    m = check_int("m", m, low=1)
    theta = check_scale("theta", theta, high=0.25)
    u = check_array("user_vectors", user_vectors, ndim=2, low=-1.0, high=1.0)
    if u.size and not np.all(np.isin(u, (-1.0, 0.0, 1.0))):
        raise ValueError("user_vectors must have entries in {-1, 0, 1} for cpbm_sum_sampler")
    g = as_generator(rng)
    cap = max(1, MAX_CELLS // max(1, u.shape[1]))
    reason = f"the result holds size * dim numbers, at most {MAX_CELLS:.0e}"
    shape = None if size is None else (check_int("size", size, low=1, high=cap, reason=reason), u.shape[1])
    n = u.shape[0]
    n_plus = (u > 0).sum(axis=0)
    n_minus = (u < 0).sum(axis=0)
    n_zero = n - n_plus - n_minus
    z = (
        g.binomial(m * n_minus, 0.5 - theta, size=shape)
        + g.binomial(m * n_zero, 0.5, size=shape)
        + g.binomial(m * n_plus, 0.5 + theta, size=shape)
    )
    return (z - m * n / 2.0) / (m * theta)


def cpbm_coordinate_variance(sum_sq, *, n: int, m: int, theta: float):
    r"""Exact variance of the Eq. 3 sum estimate of one coordinate (:math:`C = 1`).

    .. math:: \mathrm{Var}(\hat S) = \sum_i \frac{1/4 - \theta^2 y_i^2}{m\theta^2}
              = \frac{n}{4m\theta^2} - \frac{\sum_i y_i^2}{m}
              \le \frac{n}{4m\theta^2}.

    Parameters
    ----------
    sum_sq : float or array_like
        :math:`\sum_i y_i^2` per coordinate (for 0/±1 entries: the number of
        users with a non-zero entry).

    Examples
    --------
    >>> float(cpbm_coordinate_variance(0.0, n=100, m=4, theta=0.25))
    100.0
    """
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1)
    theta = check_scale("theta", theta, high=0.25)
    s = check_array("sum_sq", sum_sq, low=0.0, high=float(n))
    out = n / (4.0 * m * theta**2) - s / m
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------
# variances (Props. 1-3)
# ---------------------------------------------------------------------------


def prefix_variance(v, *, encoding: str, b: int, coordinate_variance) -> np.ndarray:
    r"""Variance of :math:`\hat c[1:v]` given the noise variance of each coordinate.

    .. math:: \mathrm{Var}(\hat c[1:v]) = \sum_k w_k(v)^2\,\sigma_k^2

    for independent noise across coordinates (cPBM samples every coordinate
    independently); :math:`w` from :func:`prefix_weights`. Divide by
    :math:`n^2` for the variance of the estimated fraction.

    Parameters
    ----------
    coordinate_variance : float or array_like, shape (dim,)
    """
    w = prefix_weights(v, encoding=encoding, b=b)
    var = check_array("coordinate_variance", coordinate_variance, low=0.0)
    if var.ndim not in (0, 1) or (var.ndim == 1 and var.shape[0] != w.shape[-1]):
        raise ValueError(f"coordinate_variance must be a scalar or have length {w.shape[-1]}")
    return (w**2) @ (np.broadcast_to(var, (w.shape[-1],)))


def _bound_args(m, n, theta):
    m = check_int("m", m, low=1)
    n = check_int("n", n, low=1)
    theta = check_scale("theta", theta, high=0.25)
    return m, n, theta


def _bins(B, Delta) -> float:
    B = check_scale("B", B)
    Delta = check_real("Delta", Delta, low=0.0, high=B, low_open=True)
    return B / Delta


def flat_variance_bound(*, B: float, Delta: float, m: int, n: int, theta: float, as_printed: bool = False) -> float:
    r"""The OcPBM paper, Prop. 1: variance of the flat-histogram estimate of :math:`c[1:v]/n`.

    .. math:: \mathrm{Var}_{\text{flat}} \le \frac{B}{4\Delta m n\theta^2}
              \quad\Bigl(\text{as printed: } \frac{B}{4\Delta m n^2\theta^2}\Bigr).

    A prefix sums at most :math:`B/\Delta` bins, each carrying noise of variance
    at most :math:`1/(4mn\theta^2)` on the fraction scale (Eq. 3 with
    :math:`C = 1`). ``as_printed=True`` returns the paper's formula.

    Examples
    --------
    >>> flat_variance_bound(B=64, Delta=1, m=1, n=16, theta=0.25)
    16.0
    """
    as_printed = check_bool("as_printed", as_printed)
    r = _bins(B, Delta)
    m, n, theta = _bound_args(m, n, theta)
    return r / (4.0 * m * n ** (2 if as_printed else 1) * theta**2)


def hh_variance_bound(*, B: float, Delta: float, m: int, n: int, theta: float, as_printed: bool = False) -> float:
    r"""The OcPBM paper, Prop. 2: variance for hierarchical histograms.

    .. math:: \mathrm{Var}_{\text{HH}} \le \frac{\log_2(B/\Delta)}{4mn\theta^2}
              \quad\Bigl(\text{as printed: } n^2 \text{ in the denominator}\Bigr).

    A prefix is a union of at most :math:`\log_2(B/\Delta) = b` tree nodes.
    """
    as_printed = check_bool("as_printed", as_printed)
    r = _bins(B, Delta)
    m, n, theta = _bound_args(m, n, theta)
    return float(np.log2(r)) / (4.0 * m * n ** (2 if as_printed else 1) * theta**2)


def dht_variance_bound(*, B: float, Delta: float, m: int, n: int, theta: float, as_printed: bool = False) -> float:
    r"""The OcPBM paper, Prop. 3: variance for the Haar (DHT) protocol.

    .. math:: \mathrm{Var}_{\text{DHT}} \le \frac{\log_2(B/\Delta)}{16mn\theta^2}
              \quad\Bigl(\text{as printed: } n^2 \text{ in the denominator}\Bigr).

    One cut node per level, weight :math:`|s_L - s_R|/2^l \le 1/2`.
    """
    as_printed = check_bool("as_printed", as_printed)
    r = _bins(B, Delta)
    m, n, theta = _bound_args(m, n, theta)
    return float(np.log2(r)) / (16.0 * m * n ** (2 if as_printed else 1) * theta**2)


# ---------------------------------------------------------------------------
# end to end
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QuantileResult:
    """Output of :func:`federated_quantile`.

    Attributes
    ----------
    threshold : ndarray
        :math:`\\Delta\\hat v` for each requested quantile level.
    prefix : ndarray, shape (2^b,)
        Estimated prefix counts :math:`\\hat c[1:v]`.
    sums : ndarray, shape (dim,)
        The decoded (noisy) column sums the server obtained.
    dim : int
        Number of privatised coordinates per user.
    """

    threshold: np.ndarray
    prefix: np.ndarray
    sums: np.ndarray
    dim: int


def federated_quantile(
    values,
    gamma,
    *,
    encoding: str = "dht",
    B: float,
    b: int,
    mechanism: Mechanism | None = None,
    rng: np.random.Generator | int | None = None,
    out_of_range: str = "raise",
    rule: str = "argmin",
) -> QuantileResult:
    r"""Algs. 4–5 end to end (and their flat / hierarchical counterparts).

    Discretise, encode (:func:`histogram_user_vectors`), privatise and sum with
    ``mechanism`` (default: :func:`exact_sum_mechanism`, no privacy), decode the
    prefix counts and search for the quantile(s).

    Examples
    --------
    >>> r = federated_quantile([0.1, 0.2, 0.6, 0.9], 0.5, B=1.0, b=2)
    >>> float(r.threshold)
    0.25
    """
    encoding = _check_encoding(encoding)
    b = _check_b(b)
    g = as_generator(rng)
    bins = discretize_values(values, B=B, b=b, out_of_range=out_of_range)
    n = bins.size
    if n == 0:
        raise ValueError("values must contain at least one user")
    u = histogram_user_vectors(bins, encoding=encoding, b=b)
    mech = exact_sum_mechanism if mechanism is None else mechanism
    sums = check_array("mechanism(user_vectors, rng)", call_checked("mechanism", mech, u, g))
    if sums.shape != (u.shape[1],):
        raise ValueError(f"mechanism must return shape ({u.shape[1]},); got {sums.shape}")
    prefix = histogram_prefix_counts(sums, encoding=encoding, b=b, n=n)
    thr = quantile_from_prefix(prefix, gamma, n=n, B=B, rule=rule)
    return QuantileResult(threshold=thr, prefix=prefix, sums=sums, dim=u.shape[1])


def average_bin_error(estimated, reference, *, B: float, b: int) -> float:
    r"""Mean of :math:`|\hat t - t|/\Delta` over quantile queries (the OcPBM paper, Table 5).

    Examples
    --------
    >>> average_bin_error([0.5, 0.75], [0.25, 0.75], B=1.0, b=2)
    0.5
    """
    B = check_scale("B", B)
    b = _check_b(b)
    e = check_array("estimated", estimated, ndim=1, min_size=1)
    r = check_array("reference", reference, shape=e.shape)
    return float(np.mean(np.abs(e - r)) / (B / 2**b))
