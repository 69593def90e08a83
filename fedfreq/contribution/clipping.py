"""Clipping one user's histogram: ℓ1 scaling, random clipping without replacement, and the
sensitivities of the clipped histogram under add/remove and replacement neighbours.
"""

from __future__ import annotations

import math

import numpy as np

from .._rng import as_generator
from .._validation import check_choice, check_int
from ._checks import _histograms, _threshold

__all__ = ["clip_l1", "rand_clip", "clip_sensitivity"]


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
