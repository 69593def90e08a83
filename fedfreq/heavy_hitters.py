r"""Heavy hitters, quantiles and range queries from sample-and-threshold histograms (Bharadwaj & Cormode 2022, Sec. 4).

Items are integer codes in :math:`[0, \beta^L)` read as strings of ``L`` digits in base
``β`` (the *branching factor*): a word of at most ``L`` letters (:func:`encode_words`),
or a value in [0, 1] rounded to a leaf of a β-ary trie (:func:`value_to_leaf`). The
level-ℓ *prefix* of a code is ``code // β**(L - ℓ)``.

* :func:`triehh_plus_plus`: TrieHH++ — one sample-and-threshold histogram per trie
  level, each on a fresh Poisson sample; with ``restrict=True`` only clients whose
  level-(ℓ−1) prefix is already in the trie vote (TrieHH's rule), with
  ``restrict=False`` every client votes (a hierarchical histogram). Published counts
  are kept on the trie nodes.
* :func:`one_shot_heavy_hitters`: the remark of Section 4.1 — one histogram of the
  full items.
* :func:`binary_search_quantile`: a single quantile by ``h`` two-bucket histograms.
* :func:`range_decomposition`, :func:`range_counts`, :func:`trie_quantile`: range and
  quantile queries answered from a hierarchical histogram by greedy decomposition.
* privacy of L levels: :func:`composition_basic`, :func:`composition_advanced_paper`,
  :func:`composition_advanced` (Dwork & Roth 2014, Thm 3.20) and the exact optimum
  :func:`optimal_composition_delta` (Kairouz, Oh & Viswanath 2015).

Each level's histogram is (ε, δ)-DP under add/remove of one client
(:func:`fedfreq.sample_threshold.delta_exact`). A trie is stored sparsely: level ℓ is a
pair ``(nodes, counts)`` of sorted node codes and their published counts.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._rng import as_generator
from ._validation import check_array, check_bool, check_int, check_real
from .sample_threshold import _rate, _tau

__all__ = [
    "encode_words",
    "value_to_leaf",
    "triehh_plus_plus",
    "one_shot_heavy_hitters",
    "trie_level_counts",
    "binary_search_quantile",
    "range_decomposition",
    "range_counts",
    "trie_quantile",
    "composition_basic",
    "composition_advanced_paper",
    "composition_advanced",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
    "decode_words",
]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"

# Codes of a tree with `levels` levels and `branching` children are int64 integers below
# branching**levels: at most 2**62.
_MAX_CODE_BITS = 62
# Composition: epsilon enters through exp(epsilon); L + 1 binomial terms are summed.
_MAX_EPSILON = 700.0
_EXP_LIMIT = "the composition bounds evaluate exp(epsilon) in floating point"
_MAX_COMPOSED = 10**6


def _check_tree(branching, levels) -> tuple[int, int]:
    """(branching, levels) of a tree whose leaf codes fit in int64."""
    b = check_int("branching", branching, low=2)
    L = check_int("levels", levels, low=1)
    if L * math.log2(b) > _MAX_CODE_BITS:
        raise ValueError(
            f"branching**levels must be at most 2**{_MAX_CODE_BITS} (leaf codes are int64); "
            f"got branching={b}, levels={L}"
        )
    return b, L


def encode_words(words, *, length: int) -> np.ndarray:
    r"""Encode lower-case words as base-27 integers of ``length`` digits (β = 27).

    Letters a–z are digits 1–26, other characters (apostrophes) are dropped, and the
    word is cut to ``length`` letters and padded with the digit 0 (end of word). So the
    level-ℓ prefix of a word is its first ℓ letters.

    Examples
    --------
    >>> int(encode_words(["ab"], length=3)[0]) == 1 * 27**2 + 2 * 27
    True
    """
    L = check_int("length", length, low=1, high=13)
    if words is None or isinstance(words, str | bytes | dict) or not hasattr(words, "__iter__"):
        raise ValueError(f"words must be a sequence of strings; got {type(words).__name__}")
    out = []
    for w in words:
        if not isinstance(w, str):
            raise ValueError("words must be strings")
        digits = [(_LETTERS.index(c) + 1) for c in w if c in _LETTERS][:L]
        digits += [0] * (L - len(digits))
        code = 0
        for d in digits:
            code = code * 27 + d
        out.append(code)
    return np.asarray(out, dtype=np.int64)


def decode_words(codes, *, length: int) -> list[str]:
    """Inverse of :func:`encode_words` (digit 0 ends the word).

    Examples
    --------
    >>> decode_words(encode_words(["the", "and"], length=4), length=4)
    ['the', 'and']
    """
    L = check_int("length", length, low=1, high=13)
    x = check_array("codes", codes, ndim=1, integer=True, low=0, high=27**L - 1)
    out = []
    for c in x.tolist():
        digits = []
        for _ in range(L):
            c, d = divmod(c, 27)
            digits.append(d)
        out.append("".join(_LETTERS[d - 1] for d in reversed(digits) if d > 0))
    return out


def value_to_leaf(values, *, branching: int, levels: int) -> np.ndarray:
    r"""Leaf index :math:`\lfloor v\beta^L\rfloor` of values in [0, 1] (1 goes to the last leaf).

    Examples
    --------
    >>> value_to_leaf([1 / 3], branching=4, levels=2)  # the range [5/16, 6/16)
    array([5])
    """
    b, L = _check_tree(branching, levels)
    v = check_array("values", values, ndim=1, low=0.0, high=1.0)
    size = b**L
    return np.minimum(np.floor(v * size).astype(np.int64), size - 1)


def _check_codes(codes, branching: int, levels: int) -> np.ndarray:
    x = check_array("codes", codes, ndim=1, integer=True, low=0)
    if x.size and x.max() >= branching**levels:
        raise ValueError(f"codes must lie in [0, branching**levels) = [0, {branching**levels}); got max {x.max()}")
    return x


def _threshold(prefixes: np.ndarray, tau: int) -> tuple[np.ndarray, np.ndarray]:
    nodes, counts = np.unique(prefixes, return_counts=True)
    keep = counts >= tau
    return nodes[keep], counts[keep].astype(np.int64)


def triehh_plus_plus(
    codes, *, branching: int, levels: int, sampling_rate: float, tau: int, restrict: bool = True, rng=None
) -> list[tuple[np.ndarray, np.ndarray]]:
    r"""TrieHH++ (Bharadwaj & Cormode 2022, Section 4.1): L sample-and-threshold histograms over prefixes.

    For ℓ = 1, ..., L: every client joins a fresh Poisson sample with probability
    :math:`p_s`; a sampled client votes for its level-ℓ prefix (if ``restrict``, only
    when its level-(ℓ−1) prefix was published at the previous level); prefixes with at
    least τ votes are published with their counts.

    Parameters
    ----------
    codes : array_like of int
        One item per client, in :math:`[0, \beta^L)`.
    branching, levels : int
        β ≥ 2 and L ≥ 1.
    sampling_rate, tau
        Per-level :math:`p_s` and τ.
    restrict : bool
        Apply TrieHH's rule (post-processing of the unrestricted protocol).
    rng : Generator, int or None

    Returns
    -------
    list of (nodes, counts)
        Level ℓ (index ℓ − 1): sorted published prefix codes and their counts.

    Examples
    --------
    >>> trie = triehh_plus_plus([5] * 50 + [9] * 3, branching=4, levels=2, sampling_rate=0.9, tau=10, rng=0)
    >>> [level[0].tolist() for level in trie]
    [[1], [5]]
    """
    restrict = check_bool("restrict", restrict)
    b, L = _check_tree(branching, levels)
    x = _check_codes(codes, b, L)
    p = _rate(sampling_rate)
    t = _tau(tau)
    gen = as_generator(rng)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for level in range(1, L + 1):
        sampled = gen.random(x.size) < p
        prefixes = x[sampled] // b ** (L - level)
        if restrict and level > 1:
            prefixes = prefixes[np.isin(prefixes // b, out[-1][0])]
        out.append(_threshold(prefixes, t))
    return out


def one_shot_heavy_hitters(codes, *, sampling_rate: float, tau: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
    r"""One sample-and-threshold histogram of the full items (Bharadwaj & Cormode 2022, remark in Section 4.1).

    Its output is a single (ε, δ)-DP histogram: no factor L.

    Examples
    --------
    >>> one_shot_heavy_hitters([3] * 40 + [7], sampling_rate=0.5, tau=5, rng=1)[0].tolist()
    [3]
    """
    x = check_array("codes", codes, ndim=1, integer=True, low=0)
    p = _rate(sampling_rate)
    t = _tau(tau)
    gen = as_generator(rng)
    return _threshold(x[gen.random(x.size) < p], t)


def _check_trie(trie) -> list[tuple[np.ndarray, np.ndarray]]:
    """A published trie: a non-empty list or tuple of (codes, counts) pairs, one per
    level, with 1-D non-negative integer codes and counts of the same length."""
    if not isinstance(trie, list | tuple) or len(trie) == 0:
        raise ValueError(
            f"trie must be a non-empty list of (codes, counts) pairs, one per level; got {type(trie).__name__}"
        )
    out = []
    for i, entry in enumerate(trie):
        if not isinstance(entry, list | tuple) or len(entry) != 2:
            raise ValueError(f"trie[{i}] must be a pair (published codes, counts); got {type(entry).__name__}")
        pub = check_array(f"trie[{i}] codes", entry[0], ndim=1, integer=True, low=0)
        cnt = check_array(f"trie[{i}] counts", entry[1], shape=(pub.size,), integer=True, low=0)
        out.append((pub, cnt))
    return out


def trie_level_counts(trie, level: int, nodes) -> np.ndarray:
    """Published counts of the given level-``level`` nodes (0 where not published).

    Examples
    --------
    >>> trie = [(np.array([1, 3]), np.array([20, 30]))]
    >>> trie_level_counts(trie, 1, [0, 1, 3]).tolist()
    [0, 20, 30]
    """
    levels_ = _check_trie(trie)
    lv = check_int("level", level, low=1, high=len(levels_))
    q = check_array("nodes", nodes, integer=True, low=0)
    pub, cnt = levels_[lv - 1]
    if pub.size == 0:
        return np.zeros(q.shape, dtype=np.int64)
    idx = np.clip(np.searchsorted(pub, q), 0, pub.size - 1)
    return np.where(pub[idx] == q, cnt[idx], 0).astype(np.int64)


def binary_search_quantile(values, phi: float, *, steps: int, sampling_rate: float, tau: int, rng=None) -> float:
    r"""A φ-quantile of values in [0, 1] by interactive binary search (Bharadwaj & Cormode 2022, Section 4.2).

    Step j publishes a sample-and-threshold histogram with the two buckets
    :math:`[0, t)` and :math:`[t, 1]` on a fresh Poisson sample; if the published
    fraction below t is less than φ the search moves right, otherwise left. After
    ``steps`` = h steps it returns the midpoint of an interval of width
    :math:`2^{-h}`. Privacy: h-fold composition of (ε, δ)-DP histograms.
    A suppressed bucket counts as 0; if both are suppressed the step is wasted and the
    interval is kept.

    Examples
    --------
    >>> v = np.random.default_rng(0).random(100_000)
    >>> abs(binary_search_quantile(v, 0.3, steps=8, sampling_rate=0.1, tau=20, rng=1) - 0.3) < 0.02
    True
    """
    v = check_array("values", values, ndim=1, low=0.0, high=1.0, min_size=1)
    f = check_real("phi", phi, low=0.0, high=1.0, low_open=True, high_open=True)
    h = check_int("steps", steps, low=1, high=60)
    p = _rate(sampling_rate)
    t_ = _tau(tau)
    gen = as_generator(rng)
    lo, hi = 0.0, 1.0
    for _ in range(h):
        t = 0.5 * (lo + hi)
        sample = v[gen.random(v.size) < p]
        below = int(np.count_nonzero(sample < t))
        above = sample.size - below
        below = below if below >= t_ else 0
        above = above if above >= t_ else 0
        if below + above == 0:
            continue
        if below / (below + above) < f:
            lo = t
        else:
            hi = t
    return 0.5 * (lo + hi)


def range_decomposition(r: int, *, branching: int, levels: int) -> list[tuple[int, int]]:
    r"""Greedy decomposition of the leaf range :math:`[0, r)` into trie nodes (Bharadwaj & Cormode 2022, Section 4.2).

    Level ℓ contributes the whole level-ℓ nodes between the previous cut and
    :math:`\lfloor r/\beta^{L-\ell}\rfloor`: at most β − 1 nodes per level (β at level 1
    only when r covers everything), so at most L(β − 1) probes.

    Returns
    -------
    list of (level, node)

    Examples
    --------
    >>> range_decomposition(11, branching=4, levels=2)  # [0, 11/16) = [0, 1/4) + [1/4, 2/4) + [8/16, 11/16)
    [(1, 0), (1, 1), (2, 8), (2, 9), (2, 10)]
    """
    b, L = _check_tree(branching, levels)
    R = check_int("r", r, low=0, high=b**L)
    out = []
    done = 0  # in units of the current level's nodes
    for level in range(1, L + 1):
        width = b ** (L - level)
        full = R // width
        out += [(level, node) for node in range(done * b if level > 1 else 0, full)]
        done = full
    return out


def range_counts(trie, r, *, branching: int, levels: int) -> np.ndarray:
    r"""Estimated counts of the leaf ranges :math:`[0, r)` for an array of r (vectorised).

    Sums the published counts of the nodes of :func:`range_decomposition` (suppressed
    nodes count 0). ``trie`` must have one entry per level (``restrict=False``).

    Examples
    --------
    >>> trie = [(np.array([0, 1]), np.array([10, 20])), (np.array([0, 1, 2, 3]), np.array([4, 6, 9, 11]))]
    >>> range_counts(trie, [0, 1, 2, 3, 4], branching=2, levels=2).tolist()
    [0, 4, 10, 19, 30]
    """
    b, L = _check_tree(branching, levels)
    trie = _check_trie(trie)
    if len(trie) != L:
        raise ValueError(f"trie must have levels = {L} entries; got {len(trie)}")
    R = check_array("r", r, integer=True, low=0, high=b**L)
    total = np.zeros(R.shape, dtype=np.int64)
    prev_full = np.zeros(R.shape, dtype=np.int64)
    for level in range(1, L + 1):
        width = b ** (L - level)
        full = R // width
        start = prev_full * b if level > 1 else np.zeros_like(R)
        pub, cnt = trie[level - 1]
        csum = np.concatenate([[0], np.cumsum(cnt)])
        # sum of published counts of nodes in [start, full)
        total += csum[np.searchsorted(pub, full)] - csum[np.searchsorted(pub, start)]
        prev_full = full
    return total


def trie_quantile(trie, phi: float, *, branching: int, levels: int, total: float) -> float:
    r"""φ-quantile from a hierarchical histogram: the smallest leaf boundary r/β^L whose
    estimated rank ``range_counts(r) / total`` reaches φ (Bharadwaj & Cormode 2022, Section 4.2).

    ``total`` normalises counts to fractions (e.g. the expected sample size
    :math:`p_s n`). Returns 1.0 if no boundary reaches φ.

    Examples
    --------
    >>> trie = [(np.array([0, 1]), np.array([10, 20])), (np.array([0, 1, 2, 3]), np.array([4, 6, 9, 11]))]
    >>> trie_quantile(trie, 0.5, branching=2, levels=2, total=30)
    0.75
    """
    b, L = _check_tree(branching, levels)
    f = check_real("phi", phi, low=0.0, high=1.0, low_open=True)
    tot = check_real("total", total, low=0.0, low_open=True)
    r = np.arange(b**L + 1)
    est = range_counts(trie, r, branching=b, levels=L) / tot
    hit = np.nonzero(est >= f)[0]
    return float(hit[0] / b**L) if hit.size else 1.0


# ---------------------------------------------------------------------------
# composition over L levels
# ---------------------------------------------------------------------------


def _eps_delta(epsilon, delta, levels):
    e = check_real("epsilon", epsilon, low=0.0, high=_MAX_EPSILON, low_open=True, reason=_EXP_LIMIT)
    d = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    L = check_int("levels", levels, low=1, high=_MAX_COMPOSED, reason="the exact composition sums L + 1 terms")
    return e, d, L


def composition_basic(epsilon: float, delta: float, levels: int) -> tuple[float, float]:
    r"""Basic composition: L mechanisms that are (ε, δ)-DP give (Lε, Lδ) (Bharadwaj & Cormode 2022, Section 4.1 lemma).

    Examples
    --------
    >>> composition_basic(0.1, 1e-9, 10)
    (1.0, 1e-08)
    """
    e, d, L = _eps_delta(epsilon, delta, levels)
    return L * e, L * d


def composition_advanced_paper(epsilon: float, delta: float, levels: int) -> tuple[float, float]:
    r"""The advanced-composition bound as printed in Bharadwaj & Cormode 2022 (Section 4.1, proof):
    :math:`(L\varepsilon^2 + \varepsilon\sqrt{L\log(1/(\delta L))},\ 2L\delta)`.

    Not a valid bound for every (ε, δ)-DP mechanism: see
    :func:`optimal_composition_delta` and the chapter on heavy hitters.

    Examples
    --------
    >>> round(composition_advanced_paper(0.1, 1e-8, 10)[0], 4)
    1.3696
    """
    e, d, L = _eps_delta(epsilon, delta, levels)
    if d * L >= 1 or d == 0:
        raise ValueError("delta must satisfy 0 < delta * levels < 1")
    return L * e * e + e * math.sqrt(L * math.log(1.0 / (d * L))), 2 * L * d


def composition_advanced(epsilon: float, delta: float, levels: int, delta_prime: float) -> tuple[float, float]:
    r"""Advanced composition (Dwork & Roth 2014, Theorem 3.20):
    :math:`(\varepsilon\sqrt{2L\ln(1/\delta')} + L\varepsilon(e^\varepsilon - 1),\ L\delta + \delta')`.

    With :math:`\delta' = L\delta` it has the same δ as the paper's version.

    Examples
    --------
    >>> round(composition_advanced(0.1, 1e-8, 10, 1e-7)[0], 4)
    1.9006
    """
    e, d, L = _eps_delta(epsilon, delta, levels)
    dp = check_real("delta_prime", delta_prime, low=0.0, high=1.0, low_open=True, high_open=True)
    return e * math.sqrt(2 * L * math.log(1.0 / dp)) + L * e * math.expm1(e), L * d + dp


def optimal_composition_delta(epsilon: float, delta: float, levels: int, total_epsilon) -> float | np.ndarray:
    r"""Smallest δ such that *every* L-fold composition of (ε, δ)-DP mechanisms is
    (total_epsilon, δ)-DP (Kairouz, Oh & Viswanath 2015, Theorem 3.3).

    The worst case is the L-fold product of the pair
    :math:`P = (\delta, (1-\delta)\frac{e^\varepsilon}{1+e^\varepsilon}, (1-\delta)\frac{1}{1+e^\varepsilon}, 0)`,
    :math:`Q` = P reversed, whose hockey-stick divergence is

    .. math:: 1 - (1-\delta)^L + (1-\delta)^L\sum_{j=0}^{L}\binom Lj
        \bigl[a^j b^{L-j} - e^{\varepsilon_{\rm tot}} a^{L-j} b^j\bigr]_+,
        \\ a = \tfrac{e^\varepsilon}{1+e^\varepsilon},\ b = 1 - a,

    computed in log space. It reduces to the theorem's :math:`\delta_i` at
    :math:`\varepsilon_{\rm tot} = (L - 2i)\varepsilon`.

    Examples
    --------
    >>> optimal_composition_delta(0.5, 0.0, 1, 0.5)
    0.0
    """
    e, d, L = _eps_delta(epsilon, delta, levels)
    scalar = np.ndim(total_epsilon) == 0
    et = check_array("total_epsilon", np.atleast_1d(total_epsilon), low=0.0).reshape(-1, 1)
    j = np.arange(L + 1)
    lc = special.gammaln(L + 1) - special.gammaln(j + 1) - special.gammaln(L - j + 1)
    la = e - np.logaddexp(0.0, e)
    lb = -np.logaddexp(0.0, e)
    lp = lc + j * la + (L - j) * lb
    # z = et + lq - lp, with lq = lc + j lb + (L - j) la (la and lb swapped), written in
    # closed form so that z = 0 is exact at et = (2j - L) eps
    z = et - (2 * j - L) * e
    pos = z < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(pos, lp + np.log(-np.expm1(np.where(pos, z, -1.0))), -np.inf)
    hs = np.exp(special.logsumexp(terms, axis=1))
    keep = (1.0 - d) ** L
    out = -np.expm1(L * np.log1p(-d)) + keep * hs if d > 0 else hs
    out = np.minimum(out, 1.0)  # a hockey-stick divergence is at most 1 (rounding can pass it)
    return float(out[0]) if scalar else out


def optimal_composition_epsilon(epsilon: float, delta: float, levels: int, total_delta: float) -> float:
    r"""Smallest total ε with :func:`optimal_composition_delta` ≤ ``total_delta`` (bisection, relative 1e-10).

    Examples
    --------
    >>> optimal_composition_epsilon(0.1, 0.0, 1, 1e-12)
    0.1
    """
    e, d, L = _eps_delta(epsilon, delta, levels)
    td = check_real("total_delta", total_delta, low=0.0, high=1.0, low_open=True, high_open=True)
    if optimal_composition_delta(e, d, L, L * e) > td:
        raise ValueError("total_delta is below the delta of the L-fold composition at epsilon = L * eps")
    lo, hi = 0.0, L * e
    if optimal_composition_delta(e, d, L, 0.0) <= td:
        return 0.0
    for _ in range(200):  # each step halves the bracket: ends after about 35 steps
        if hi - lo <= 1e-10 * hi:
            break
        mid = 0.5 * (lo + hi)
        if optimal_composition_delta(e, d, L, mid) <= td:
            hi = mid
        else:
            lo = mid
    # hi passes; rounding to 12 decimals (for stable printing) must not move it below
    shown = round(hi, 12)
    return shown if shown >= hi else hi
