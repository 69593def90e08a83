"""Clipping one user's histogram: ℓ1 scaling, random clipping without replacement, and the
sensitivities of the clipped histogram under add/remove and replacement neighbours.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from .._rng import as_generator
from .._validation import MAX_CELLS, check_choice, check_int
from ._checks import _histograms, _threshold, _thresholds

__all__ = ["clip_l1", "clip_l1_sum", "rand_clip", "rand_clip_sum", "clip_sensitivity"]


def clip_l1(histograms, C: float) -> np.ndarray:
    r"""ℓ1 clipping of every user's histogram (Liu et al. 2023, Sec. 4).

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


def clip_l1_sum(histograms, C) -> np.ndarray:
    r"""Column sums of the ℓ1-clipped histograms, for one threshold or many.

    .. math:: \sum_i \mathrm{clip}_1(N_i, C) = \sum_i \frac{C\, N_i}{\max(C, \|N_i\|_1)}
       = \mathbb E\Big[\sum_i \text{rand-clip}(N_i, C)\Big]

    (the second form is the expected clipped sum :math:`\mathbb E\bar h` of
    Algorithm 3, Liu et al. 2023, Sec. 5). The weight of a user depends only on its
    size :math:`\|N_i\|_1`, so the users are first summed by size (exactly, in
    integers); every threshold then costs one small matrix product instead of a
    pass over the n users. Equal to ``clip_l1(histograms, C).sum(axis=0)`` up to
    floating-point rounding.

    Parameters
    ----------
    histograms : array_like, shape (n, d)
        Non-negative integer counts.
    C : float or array_like of float, shape (k,)
        Threshold(s) > 0.

    Returns
    -------
    ndarray, shape (d,) for a scalar ``C``, (k, d) for an array

    Examples
    --------
    >>> clip_l1_sum([[3, 1], [1, 0]], 2.0)
    array([2.5, 0.5])
    >>> clip_l1_sum([[3, 1], [1, 0]], [2.0, 4.0]).tolist()
    [[2.5, 0.5], [4.0, 1.0]]
    """
    N = _histograms(histograms)
    Cs, scalar = _thresholds(C)
    sizes, _, by_size = _sums_by_size(N)
    w = Cs[:, None] / np.maximum(Cs[:, None], np.maximum(sizes, 1)[None, :])
    out = w @ by_size.astype(float)
    return out[0] if scalar else out


def _sums_by_size(N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Users grouped by size :math:`\|N_i\|_1`: the distinct sizes (sorted), how many users have each,
    and per size the column sums of its users (int64, exact)."""
    m = N.sum(axis=1)
    sizes, group, counts = np.unique(m, return_inverse=True, return_counts=True)
    ones = np.ones(m.size, dtype=np.int64)
    by_size = sparse.csr_array((ones, (group, np.arange(m.size))), shape=(sizes.size, m.size)) @ N
    return sizes, counts, np.asarray(by_size, dtype=np.int64)


def rand_clip(histograms, C: int, *, rng=None) -> np.ndarray:
    r"""Random clipping of Liu et al. 2023, Sec. 5: keep :math:`\min(\|N_i\|_1, C)` items drawn without replacement.

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


def rand_clip_sum(histograms, C: int, *, rng=None, draws: int | None = None) -> np.ndarray:
    r"""Column sums :math:`\bar h = \sum_i \text{rand-clip}(N_i, C)` of :func:`rand_clip`, without the clipped matrix.

    Algorithm 3 of Liu et al. 2023 needs only these sums. The draw is the one of
    :func:`rand_clip` with the same random numbers: ``rand_clip_sum(N, C, rng=g)``
    equals ``rand_clip(N, C, rng=g).sum(axis=0)`` draw for draw, and with
    ``draws=R`` the R rows equal R successive such calls on one generator. It
    costs the hypergeometric draws of the clipped users only (no (n, d) copy); the
    users' sizes and which of them are clipped are computed once for all draws.

    Parameters
    ----------
    histograms : array_like, shape (n, d)
        Non-negative integer counts.
    C : int
        Number of items kept per user, an integer >= 1.
    rng : Generator, int or None
        Source of randomness.
    draws : int or None
        None for one draw (shape (d,)), or the number R >= 1 of independent draws
        (shape (R, d)).

    Returns
    -------
    ndarray of int64, shape (d,) or (draws, d)

    Examples
    --------
    >>> rand_clip_sum([[5, 5, 0], [1, 0, 1]], 4, rng=0).sum()
    np.int64(6)
    >>> rand_clip_sum([[5, 5, 0], [1, 0, 1]], 4, rng=0, draws=3).shape
    (3, 3)
    """
    N = _histograms(histograms)
    c = check_int("C", C, low=1)
    cap = max(1, MAX_CELLS // max(1, N.shape[1]))
    reason = f"the result holds draws * d counts, at most {MAX_CELLS:.0e}"
    R = 1 if draws is None else check_int("draws", draws, low=1, high=cap, reason=reason)
    gen = as_generator(rng)
    plan = _RandClipPlan(N, c)
    out = np.stack([plan.column_sums(gen) for _ in range(R)])
    return out[0] if draws is None else out


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

    A range is carried as its two end positions in the flattened per-row
    cumulative counts (row ``r``, column ``j`` at ``r (d + 1) + j``) together
    with the cumulative counts there, so each level gathers only the midpoints.
    """
    rb, d = counts.shape
    w = d + 1
    cs = np.zeros((rb, w), dtype=np.int64)
    np.cumsum(counts, axis=1, out=cs[:, 1:])
    cs = cs.ravel()
    row = np.flatnonzero(need > 0)
    cur = need[row].astype(np.int64)
    lo = row * w  # (lo + hi) // 2 is then r (d + 1) + the midpoint of the columns
    hi = lo + d
    c_lo, c_hi = cs[lo], cs[hi]
    done_a, done_v = [], []
    while lo.size:
        leaf = hi - lo == 1
        if leaf.any():
            done_a.append(lo[leaf])
            done_v.append(cur[leaf])
            keep = ~leaf
            lo, hi, cur, c_lo, c_hi = lo[keep], hi[keep], cur[keep], c_lo[keep], c_hi[keep]
            if not lo.size:
                break
        mid = (lo + hi) >> 1
        c_mid = cs[mid]
        left = c_mid - c_lo
        right = c_hi - c_mid
        x = np.where(right == 0, cur, 0)  # all from the left if the right half is empty; none if the left is
        both = (left > 0) & (right > 0)
        if both.any():
            x[both] = gen.hypergeometric(left[both], right[both], cur[both])
        y = cur - x
        gl, gr = x > 0, y > 0
        lo, hi = np.concatenate([lo[gl], mid[gr]]), np.concatenate([mid[gl], hi[gr]])
        c_lo, c_hi = np.concatenate([c_lo[gl], c_mid[gr]]), np.concatenate([c_mid[gl], c_hi[gr]])
        cur = np.concatenate([x[gl], y[gr]])
    if not done_a:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    a = np.concatenate(done_a)
    return a // w, a % w, np.concatenate(done_v)


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


class _RandClipPlan:
    r"""What the draws of :func:`rand_clip_sum` share: the clipped users, their samples' sizes, a fixed part of the sum.

    The sum is :math:`\bar h = K + \sum_{\text{kept-set rows}} \text{draw} - \sum_{\text{dropped-set rows}} \text{draw}`
    with :math:`K = \sum_i N_i - \sum_{\text{kept-set rows}} N_i`, since a clipped
    user whose kept set is drawn contributes the draw and one whose dropped set is
    drawn contributes :math:`N_i` minus it. The blocks and the order of the draws
    are those of :func:`_rand_clip_blocks`, so the random stream is the same.
    """

    def __init__(self, N: np.ndarray, c: int):
        m = N.sum(axis=1)
        self.N, self.d = N, N.shape[1]
        clipped = np.flatnonzero(m > c)
        self.blocks = []
        fixed = N.sum(axis=0)
        for b0 in range(0, clipped.size, _BLOCK):
            rows = clipped[b0 : b0 + _BLOCK]
            excess = m[rows] - c
            complement = excess < c
            if not complement.all():
                fixed -= N[rows[~complement]].sum(axis=0)
            self.blocks.append((rows, complement, np.where(complement, excess, c)))
        self.fixed = fixed

    def column_sums(self, gen: np.random.Generator) -> np.ndarray:
        out = self.fixed.copy()
        for rows, complement, need in self.blocks:
            r, col, v = _mv_hypergeometric_leaves(self.N[rows], need, gen)
            out += np.bincount(col, weights=np.where(complement[r], -v, v), minlength=self.d).astype(np.int64)
        return out


def _rand_clip_column_sums(N: np.ndarray, c: int, gen: np.random.Generator) -> np.ndarray:
    """Column sums of ``rand_clip(N, c)``, with the same law and the same draws, without forming the clipped matrix."""
    return _RandClipPlan(N, c).column_sums(gen)


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
