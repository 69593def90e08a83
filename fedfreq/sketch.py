r"""Count sketches for single- and multi-round federated frequency estimation.

This module implements seed 001 (Wu, Kairouz, Zhu & Braverman, *Private Federated
Frequency Estimation: Adapting to the Hardness of the Instance*):

* seeded hash families (polynomials modulo the Mersenne prime :math:`p = 2^{31}-1`,
  :math:`k`-wise independent), shared by clients and server;
* the client encoding of Algorithm 1 (an :math:`L\times W` signed one-hot matrix), its
  secure sum through :mod:`fedfreq.secagg`, and a fast path that uses the linearity of
  the sketch (the sum of the clients' encodings is the sketch of their histogram);
* the three multi-round designs of Section 3: ``"shared"`` (one set of hashes for every
  round), ``"fresh"`` (independent hashes per round, decode per round, average) and
  ``"hybrid"`` (Algorithm 2: shared bucket hashes, fresh sign hashes, average over
  rounds then median over rows);
* the instance-dependent bounds (Proposition 2.1, Theorems 3.1 and 3.2), the width rules
  (Eq. 2 "oracle", Eq. 3 "minimax") and the two-phase method;
* the differentially private hybrid sketch of Theorem 4.1, with its noise calibrated
  and accounted for by :mod:`fedfreq.accounting`;
* the synthetic instances used by the paper's experiments, and two exercise checkers.

Items are 0-based: the domain :math:`[d]` of the paper is ``{0, ..., d-1}`` here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from . import accounting, secagg
from ._rng import as_generator
from ._validation import check_array, check_choice, check_int, check_real

__all__ = [
    "MERSENNE_PRIME",
    "DESIGNS",
    "SketchHashes",
    "polynomial_hash",
    "draw_sketch_hashes",
    "encode_items",
    "sketch_vector",
    "sketch_items",
    "secure_sketch_sum",
    "decode_sketches",
    "sketch_estimate",
    "sketch_estimate_clients",
    "heterogeneity_vector",
    "tail_energy",
    "minton_price_bound",
    "fresh_sketch_bound",
    "width_objective",
    "oracle_width",
    "minimax_width",
    "polynomial_frequencies",
    "fit_polynomial",
    "TwoPhaseResult",
    "two_phase_width",
    "sketch_sensitivity",
    "dp_sketch_sigma",
    "dp_sketch_epsilon",
    "paper_dp_sigma",
    "dp_hybrid_sketch_estimate",
    "sketch_bits_per_client",
    "one_hot_bits_per_client",
    "PEER_SKETCHES",
    "PeerSketchResult",
    "compare_peer_sketches",
    "zipf_frequencies",
    "geometric_frequencies",
    "log_zipf_frequencies",
    "flat_frequencies",
    "sample_client_items",
    "split_rounds",
    "round_frequencies",
    "check_width_rule",
    "check_hybrid_decoder",
]

#: The Mersenne prime :math:`2^{31}-1`; hash arithmetic stays below :math:`2^{62}`.
MERSENNE_PRIME = 2**31 - 1
#: The multi-round designs of seed 001, Section 3.
DESIGNS = ("shared", "fresh", "hybrid")


# --------------------------------------------------------------------------- hashing
def polynomial_hash(coeffs, items) -> np.ndarray:
    r"""Evaluate random polynomials modulo :math:`p = 2^{31}-1` at the given items.

    .. math:: g(x) = \Bigl(\sum_{r=0}^{k-1} a_r x^r\Bigr) \bmod p,

    with coefficients :math:`a_r` uniform on :math:`\mathbb{Z}_p`, is a :math:`k`-wise
    independent family on :math:`\mathbb{Z}_p` (Carter & Wegman). Evaluated by Horner's
    rule in int64 arithmetic: every intermediate product is below :math:`2^{62}`.

    Parameters
    ----------
    coeffs : array_like of int, shape (..., k)
        Coefficients in :math:`[0, p)`, highest degree first.
    items : array_like of int, shape (n,)
        Points in :math:`[0, p)`.

    Returns
    -------
    ndarray of int64, shape (..., n)
        Values in :math:`[0, p)`.

    Examples
    --------
    >>> polynomial_hash([[1, 2, 3]], [0, 1, 2]).tolist()  # x^2 + 2x + 3
    [[3, 6, 11]]
    """
    c = check_array("coeffs", coeffs, integer=True, low=0, high=MERSENNE_PRIME - 1)
    if c.ndim < 1 or c.shape[-1] < 1:
        raise ValueError("coeffs must have at least one coefficient on its last axis")
    x = check_array("items", items, ndim=1, integer=True, low=0, high=MERSENNE_PRIME - 1)
    return _poly_mod_p(c, x)


def _mod_p(v: np.ndarray) -> np.ndarray:
    # v in [0, 2^62): fold the high bits twice (2^31 = 1 mod p), then one conditional subtraction.
    v = (v & MERSENNE_PRIME) + (v >> 31)
    v = (v & MERSENNE_PRIME) + (v >> 31)
    return np.where(v >= MERSENNE_PRIME, v - MERSENNE_PRIME, v)


def _poly_mod_p(c: np.ndarray, x: np.ndarray) -> np.ndarray:
    acc = np.broadcast_to(c[..., 0, None], c.shape[:-1] + (x.size,)).astype(np.int64)
    for r in range(1, c.shape[-1]):
        acc = _mod_p(acc * x + c[..., r, None])
    return acc


@dataclass(frozen=True)
class SketchHashes:
    r"""The hash functions of one (possibly multi-round) count sketch.

    Attributes
    ----------
    width, rows : int
        :math:`W` and :math:`L`.
    rounds : int
        :math:`M`, the number of rounds the hashes serve.
    design : str
        ``"shared"``, ``"fresh"`` or ``"hybrid"``.
    bucket_coeffs : ndarray of int64, shape (R_b, L, k_b)
        Bucket-hash polynomials; :math:`R_b = M` for ``"fresh"``, else 1.
    sign_coeffs : ndarray of int64, shape (R_s, L, k_s)
        Sign-hash polynomials; :math:`R_s = 1` for ``"shared"``, else :math:`M`.

    Notes
    -----
    :math:`h_\ell(x) = g_\ell(x) \bmod W` and :math:`\sigma_\ell(x) = 1 - 2\,(g'_\ell(x) \bmod 2)`.
    Reducing a uniform value on :math:`\mathbb{Z}_p` modulo :math:`W` (or 2) leaves a
    bias of at most :math:`W/p` (resp. :math:`1/p`) in each probability, negligible here.
    """

    width: int
    rows: int
    rounds: int
    design: str
    bucket_coeffs: np.ndarray
    sign_coeffs: np.ndarray

    def buckets(self, items, round_index: int = 0) -> np.ndarray:
        """Bucket indices :math:`h^{(m)}_\\ell(x)` in ``[0, W)``, shape (L, len(items))."""
        m = check_int("round_index", round_index, low=0, high=self.rounds - 1)
        c = self.bucket_coeffs[m if self.bucket_coeffs.shape[0] > 1 else 0]
        x = check_array("items", items, ndim=1, integer=True, low=0, high=MERSENNE_PRIME - 1)
        return _poly_mod_p(c, x) % self.width

    def signs(self, items, round_index: int = 0) -> np.ndarray:
        """Signs :math:`\\sigma^{(m)}_\\ell(x) \\in \\{-1, +1\\}` (int64), shape (L, len(items))."""
        m = check_int("round_index", round_index, low=0, high=self.rounds - 1)
        c = self.sign_coeffs[m if self.sign_coeffs.shape[0] > 1 else 0]
        x = check_array("items", items, ndim=1, integer=True, low=0, high=MERSENNE_PRIME - 1)
        return 1 - 2 * (_poly_mod_p(c, x) & 1)


def draw_sketch_hashes(
    *,
    width: int,
    rows: int,
    rounds: int = 1,
    design: str = "shared",
    rng: np.random.Generator | int | None = None,
    bucket_independence: int = 2,
    sign_independence: int = 4,
) -> SketchHashes:
    r"""Draw the hash functions the server broadcasts (Alg. 1 step 1, Alg. 2 step 1).

    Parameters
    ----------
    width : int
        :math:`W \ge 1` buckets per row.
    rows : int
        :math:`L \ge 1` rows.
    rounds : int
        :math:`M \ge 1` rounds.
    design : {"shared", "fresh", "hybrid"}
        Which hashes are renewed per round (seed 001, Sec. 3): none, all, or the signs.
    rng : Generator, int or None
    bucket_independence, sign_independence : int
        The :math:`k` of the :math:`k`-wise independent families (defaults 2 and 4,
        the classical count-sketch requirements; the analysis of Minton & Price
        assumes fully random hashes, approached by larger :math:`k`).

    Examples
    --------
    >>> h = draw_sketch_hashes(width=8, rows=3, rounds=2, design="hybrid", rng=0)
    >>> h.bucket_coeffs.shape, h.sign_coeffs.shape
    ((1, 3, 2), (2, 3, 4))
    """
    width = check_int("width", width, low=1, high=MERSENNE_PRIME - 1)
    rows = check_int("rows", rows, low=1)
    rounds = check_int("rounds", rounds, low=1)
    design = check_choice("design", design, DESIGNS)
    kb = check_int("bucket_independence", bucket_independence, low=1)
    ks = check_int("sign_independence", sign_independence, low=1)
    gen = as_generator(rng)
    rb = rounds if design == "fresh" else 1
    rs = 1 if design == "shared" else rounds
    bc = gen.integers(0, MERSENNE_PRIME, size=(rb, rows, kb), dtype=np.int64)
    sc = gen.integers(0, MERSENNE_PRIME, size=(rs, rows, ks), dtype=np.int64)
    return SketchHashes(width, rows, rounds, design, bc, sc)


def _check_hashes(hashes) -> SketchHashes:
    if not isinstance(hashes, SketchHashes):
        raise ValueError(f"hashes must be a SketchHashes (see draw_sketch_hashes); got {type(hashes).__name__}")
    return hashes


def _check_items(items, d: int) -> np.ndarray:
    return check_array("items", items, ndim=1, integer=True, low=0, high=d - 1)


# --------------------------------------------------------------------------- encoding
def encode_items(items, hashes: SketchHashes, *, d: int, round_index: int = 0) -> np.ndarray:
    r"""Per-client encodings of Algorithm 1, step 3 (for small ``n`` only).

    .. math:: \bigl(\mathrm{enc}(x)\bigr)_{\ell,k} = \mathbb 1[h_\ell(x) = k]\,\sigma_\ell(x).

    This materialises an :math:`n\times L\times W` array and exists to show the
    protocol client by client (and to feed :func:`secure_sketch_sum`); use
    :func:`sketch_items` for the sum.

    Examples
    --------
    >>> h = draw_sketch_hashes(width=4, rows=2, rng=1)
    >>> e = encode_items([3], h, d=5)
    >>> e.shape, int(np.abs(e).sum())
    ((1, 2, 4), 2)
    """
    hashes = _check_hashes(hashes)
    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    x = _check_items(items, d)
    b = hashes.buckets(x, round_index)  # (L, n)
    s = hashes.signs(x, round_index)
    out = np.zeros((x.size, hashes.rows, hashes.width), dtype=np.int64)
    n_idx = np.arange(x.size)[None, :]
    l_idx = np.arange(hashes.rows)[:, None]
    out[n_idx, l_idx, b] = s
    return out


def sketch_vector(values, hashes: SketchHashes, *, round_index: int = 0) -> np.ndarray:
    r"""Sketch of a vector: :math:`S_{\ell,k} = \sum_{i:\,h_\ell(i)=k} \sigma_\ell(i)\, v_i`.

    Because the encoding is linear, the secure sum of the clients' encodings equals
    the sketch of their histogram; with ``values`` = frequencies it is the
    normalised sum :math:`\frac1n\sum_t \mathrm{enc}(x_t)` of Algorithm 1, step 8.

    Parameters
    ----------
    values : array_like, shape (d,)
    hashes : SketchHashes
    round_index : int

    Returns
    -------
    ndarray of float, shape (L, W)

    Examples
    --------
    >>> h = draw_sketch_hashes(width=3, rows=2, rng=0)
    >>> float(np.abs(sketch_vector([0.5, 0.5], h)).sum()) <= 2.0
    True
    """
    hashes = _check_hashes(hashes)
    v = check_array("values", values, ndim=1, min_size=1)
    if v.size > MERSENNE_PRIME - 1:
        raise ValueError(f"values must have at most {MERSENNE_PRIME - 1} entries")
    items = np.arange(v.size)
    return _sketch_table(v, hashes.buckets(items, round_index), hashes.signs(items, round_index), hashes.width)


def _sketch_table(v: np.ndarray, b: np.ndarray, s: np.ndarray, width: int) -> np.ndarray:
    rows = b.shape[0]
    flat = (b + width * np.arange(rows)[:, None]).ravel()
    out = np.bincount(flat, weights=(s * v[None, :]).ravel(), minlength=rows * width)
    return out.reshape(rows, width)


def _tables(hashes: SketchHashes, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Bucket table (R_b, L, d) and sign table (R_s, L, d) for all items of [d]."""
    items = np.arange(d)
    B = np.stack([hashes.buckets(items, m) for m in range(hashes.bucket_coeffs.shape[0])])
    Sg = np.stack([hashes.signs(items, m) for m in range(hashes.sign_coeffs.shape[0])]).astype(np.int8)
    return B, Sg


def _decode_tables(S: np.ndarray, B: np.ndarray, Sg: np.ndarray, design: str) -> np.ndarray:
    M, L, _ = S.shape
    rows_idx = np.arange(L)[:, None]
    if design == "fresh":
        acc = np.zeros(B.shape[2])
        for m in range(M):
            acc += np.median(Sg[m] * S[m][rows_idx, B[m]], axis=0)
        return acc / M
    if design == "shared":
        return np.median(Sg[0] * S.mean(axis=0)[rows_idx, B[0]], axis=0)
    acc = np.zeros(B.shape[1:])
    for m in range(M):
        acc += Sg[m] * S[m][rows_idx, B[0]]
    return np.median(acc / M, axis=0)


def _sketch_rounds(F: np.ndarray, hashes: SketchHashes, B: np.ndarray, Sg: np.ndarray) -> np.ndarray:
    M = F.shape[0]
    return np.stack(
        [
            _sketch_table(F[m], B[m if B.shape[0] > 1 else 0], Sg[m if Sg.shape[0] > 1 else 0], hashes.width)
            for m in range(M)
        ]
    )


def sketch_items(items, hashes: SketchHashes, *, d: int, round_index: int = 0) -> np.ndarray:
    r"""The integer sum :math:`\sum_t \mathrm{enc}(x_t)` of ``n`` clients' encodings.

    Computed without per-client matrices: a histogram of the items
    (``np.bincount``, :math:`O(n)`) followed by one sketch of the histogram
    (:math:`O(Ld)`), which equals the sum by linearity.

    Returns
    -------
    ndarray of int64, shape (L, W)

    Examples
    --------
    >>> h = draw_sketch_hashes(width=4, rows=2, rng=1)
    >>> bool(np.array_equal(sketch_items([0, 3, 3], h, d=5), encode_items([0, 3, 3], h, d=5).sum(axis=0)))
    True
    """
    hashes = _check_hashes(hashes)
    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    x = _check_items(items, d)
    counts = np.bincount(x, minlength=d)
    return np.rint(sketch_vector(counts, hashes, round_index=round_index)).astype(np.int64)


def secure_sketch_sum(
    items,
    hashes: SketchHashes,
    *,
    d: int,
    round_index: int = 0,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    r"""Sum the clients' encodings through the secure-sum simulator (Alg. 1, steps 4-6).

    Entries are in :math:`\{-1, 0, 1\}`, so the signed sum lies in :math:`[-n, n]`;
    the modulus is :func:`fedfreq.secagg.modulus_for_signed` ``(n, 1)`` :math:`= 2n+1`,
    and :func:`fedfreq.secagg.to_signed` decodes it. Builds per-client matrices
    (memory :math:`nLW`): meant for small ``n``, and to check :func:`sketch_items`.

    Returns
    -------
    ndarray of int64, shape (L, W)

    Examples
    --------
    >>> h = draw_sketch_hashes(width=4, rows=2, rng=1)
    >>> bool(np.array_equal(secure_sketch_sum([0, 3, 3], h, d=5, rng=2), sketch_items([0, 3, 3], h, d=5)))
    True
    """
    enc = encode_items(items, hashes, d=d, round_index=round_index)
    n = enc.shape[0]
    if n < 1:
        raise ValueError("items must contain at least one client")
    modulus = secagg.modulus_for_signed(n, 1)
    residues = np.mod(enc.reshape(n, -1), modulus)
    total = secagg.secure_sum(residues, modulus=modulus, rng=rng, allow_wrap=True)
    return secagg.to_signed(total, modulus).reshape(hashes.rows, hashes.width)


# --------------------------------------------------------------------------- decoding
def decode_sketches(sketches, hashes: SketchHashes, *, d: int) -> np.ndarray:
    r"""Server-side decoding of :math:`M` (normalised) round sketches.

    With :math:`\mathrm{dec}(j; m, \ell) = \sigma^{(m)}_\ell(j)\, S^{(m)}_{\ell, h^{(m)}_\ell(j)}`:

    * ``"shared"`` and ``"hybrid"``: :math:`\mathrm{median}_\ell \frac1M\sum_m \mathrm{dec}(j; m, \ell)`
      (Alg. 2, step 11; for shared hashes this is Alg. 1 on the averaged sketch);
    * ``"fresh"``: :math:`\frac1M\sum_m \mathrm{median}_\ell\, \mathrm{dec}(j; m, \ell)`.

    Parameters
    ----------
    sketches : array_like, shape (M, L, W)
        Round sketches, each normalised by its number of clients.
    hashes : SketchHashes
        The hashes used, with ``hashes.rounds == M``.
    d : int
        Domain size.

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> h = draw_sketch_hashes(width=64, rows=5, rounds=2, design="hybrid", rng=3)
    >>> f = np.array([0.5, 0.3, 0.2])
    >>> S = np.stack([sketch_vector(f, h, round_index=m) for m in range(2)])
    >>> np.round(decode_sketches(S, h, d=3), 3).tolist()
    [0.5, 0.3, 0.2]
    """
    hashes = _check_hashes(hashes)
    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    S = check_array("sketches", sketches, shape=(hashes.rounds, hashes.rows, hashes.width))
    B, Sg = _tables(hashes, d)
    return _decode_tables(S, B, Sg, hashes.design)


def _check_round_frequencies(round_frequencies) -> np.ndarray:
    F = check_array("round_frequencies", round_frequencies, ndim=2, low=0.0, min_size=1)
    return F


def sketch_estimate(
    round_frequencies,
    *,
    width: int,
    rows: int,
    design: str,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    r"""Estimate the global frequency vector with a multi-round count sketch.

    ``round_frequencies`` holds the local frequency vectors :math:`f^{(m)}`, one per
    round (seed 001, Sec. 3); each round's server view is the normalised sketch
    :math:`\frac1n\sum_t \mathrm{enc}^{(m)}(x^{(m)}_t)`, which by linearity equals the
    sketch of :math:`f^{(m)}` (:func:`sketch_vector`). Hashes are drawn with
    :func:`draw_sketch_hashes` according to ``design`` and the sketches are decoded by
    :func:`decode_sketches`. The target is :math:`f = \frac1M\sum_m f^{(m)}`.

    Parameters
    ----------
    round_frequencies : array_like, shape (M, d)
        Non-negative per-round frequency vectors.
    width, rows : int
        :math:`W \ge 1`, :math:`L \ge 1`.
    design : {"shared", "fresh", "hybrid"}
    rng : Generator, int or None

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> f = np.array([[0.6, 0.4, 0.0], [0.2, 0.4, 0.4]])
    >>> np.round(sketch_estimate(f, width=256, rows=5, design="hybrid", rng=0), 3).tolist()
    [0.4, 0.4, 0.2]
    """
    F = _check_round_frequencies(round_frequencies)
    M, d = F.shape
    if d > MERSENNE_PRIME - 1:
        raise ValueError(f"the domain size d must lie in [1, {MERSENNE_PRIME - 1}]; got {d}")
    hashes = draw_sketch_hashes(width=width, rows=rows, rounds=M, design=design, rng=rng)
    B, Sg = _tables(hashes, d)
    return _decode_tables(_sketch_rounds(F, hashes, B, Sg), B, Sg, design)


def sketch_estimate_clients(
    round_items: Sequence,
    *,
    d: int,
    width: int,
    rows: int,
    design: str,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    r"""Client-level multi-round sketch: each round's clients send their encodings.

    Round :math:`m`'s clients hold the items ``round_items[m]``; the server receives
    the integer sum of their encodings (:func:`sketch_items`), divides by the round's
    :math:`n_m` and decodes (:func:`decode_sketches`). With equal :math:`n_m` the
    target is the global frequency vector; with unequal ones it is the mean of the
    local frequency vectors, as in the paper's definition.

    Examples
    --------
    >>> est = sketch_estimate_clients([[0, 0, 1], [1, 1, 2]], d=3, width=128, rows=5, design="fresh", rng=0)
    >>> np.round(est, 3).tolist()
    [0.333, 0.5, 0.167]
    """
    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    if isinstance(round_items, np.ndarray) and round_items.ndim == 1:
        round_items = [round_items]
    if len(round_items) < 1:
        raise ValueError("round_items must contain at least one round")
    M = len(round_items)
    hashes = draw_sketch_hashes(width=width, rows=rows, rounds=M, design=design, rng=rng)
    S = np.empty((M, hashes.rows, hashes.width))
    for m, x in enumerate(round_items):
        x = _check_items(x, d)
        if x.size == 0:
            raise ValueError(f"round_items[{m}] must contain at least one client")
        S[m] = sketch_items(x, hashes, d=d, round_index=m) / x.size
    return decode_sketches(S, hashes, d=d)


# --------------------------------------------------------------------------- bounds
def heterogeneity_vector(round_frequencies) -> np.ndarray:
    r"""The heterogeneity vector of seed 001, Theorem 3.2.

    .. math:: F_i = \frac1M\sqrt{\textstyle\sum_{m=1}^M \bigl(f^{(m)}_i\bigr)^2}
              \;\le\; f_i = \frac1M\sum_m f^{(m)}_i,

    with :math:`F = f/\sqrt M` when all rounds are identical.

    Examples
    --------
    >>> heterogeneity_vector([[0.5, 0.5], [0.5, 0.5]]).round(4).tolist()
    [0.3536, 0.3536]
    """
    F = _check_round_frequencies(round_frequencies)
    return np.sqrt(np.sum(F**2, axis=0)) / F.shape[0]


def tail_energy(values, k: int) -> float:
    r"""Tail energy :math:`\sum_{i > k} (v^*_i)^2` of a non-negative vector sorted decreasingly.

    Examples
    --------
    >>> round(tail_energy([0.1, 0.5, 0.2, 0.2], 2), 6)
    0.05
    """
    v = check_array("values", values, ndim=1, low=0.0)
    k = check_int("k", k, low=0)
    s = np.sort(v)[::-1]
    return float(np.sum(s[k:] ** 2))


def minton_price_bound(
    values,
    *,
    width: int,
    rows: int,
    p: float,
    constant: float = 1.0,
    tail_start: int | None = None,
) -> float:
    r"""Instance-dependent count-sketch error bound (seed 001, Prop. 2.1 / Thm 3.2).

    .. math:: C\sqrt{\frac{\log(1/p)}{L}\cdot\frac1W\sum_{i>k}(v^*_i)^2},

    with :math:`v = f` for one round (Proposition 2.1) or :math:`v = F` for the hybrid
    sketch (Theorem 3.2). The paper uses :math:`k = W`; Minton & Price's theorem and
    the paper's own proof of Theorem 3.2 need the tail to start at a constant fraction
    of the width (``tail_start``, e.g. :math:`k = \lfloor W/10 \rfloor`), see the
    chapter "Count sketch and the hardness of the instance".

    Examples
    --------
    >>> round(minton_price_bound([0.5, 0.25, 0.25], width=1, rows=1, p=math.exp(-1)), 4)
    0.3536
    """
    width = check_int("width", width, low=1)
    rows = check_int("rows", rows, low=1)
    p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    constant = check_real("constant", constant, low=0.0, low_open=True)
    k = width if tail_start is None else check_int("tail_start", tail_start, low=0)
    return constant * math.sqrt(math.log(1.0 / p) / rows * tail_energy(values, k) / width)


def fresh_sketch_bound(
    round_frequencies,
    *,
    width: int,
    rows: int,
    p: float,
    constant: float = 1.0,
    tail_start: int | None = None,
) -> float:
    r"""Seed 001, Theorem 3.1 (FreshSketch): the hybrid bound times :math:`\sqrt{\log(M/p)}`.

    .. math:: C\sqrt{\frac{\log(1/p)\log(M/p)}{L}\cdot\frac1W\sum_{i>k}(F^*_i)^2}.

    Examples
    --------
    >>> b = fresh_sketch_bound([[0.5, 0.5], [0.5, 0.5]], width=1, rows=1, p=0.5, tail_start=0)
    >>> round(b, 4)
    0.4901
    """
    F = heterogeneity_vector(round_frequencies)
    p_ = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    M = np.asarray(round_frequencies).shape[0]
    base = minton_price_bound(F, width=width, rows=rows, p=p_, constant=constant, tail_start=tail_start)
    return base * math.sqrt(math.log(M / p_))


def width_objective(freqs, k, tau: float):
    r"""The function :math:`F(k) = k + \tau^{-2}\sum_{i>k}(f^*_i)^2` of the proof of Cor. 2.3.

    Vectorised in ``k``. Its minimum over :math:`k \ge 0` is attained at
    :math:`k^\star = \#\{i: f_i \ge \tau\}` and equals the bracket of Eq. (2).

    Examples
    --------
    >>> width_objective([0.5, 0.3, 0.2], [0, 1, 2, 3], 0.4).round(4).tolist()
    [2.375, 1.8125, 2.25, 3.0]
    """
    f = check_array("freqs", freqs, ndim=1, low=0.0)
    tau = check_real("tau", tau, low=0.0, high=1.0, low_open=True, high_open=True)
    kk = check_array("k", k, integer=True, low=0)
    s = np.sort(f)[::-1] ** 2
    tail = np.concatenate([np.cumsum(s[::-1])[::-1], [0.0]])  # tail[k] = sum_{i>k}
    kk_c = np.minimum(kk, s.size)
    out = kk + tail[kk_c] / tau**2
    return float(out) if np.ndim(k) == 0 else out


def oracle_width(freqs, tau: float, *, constant: float = 1.0, n: int | None = None) -> int:
    r"""Instance-optimal width of seed 001, Eq. (2) (Corollary 2.3).

    .. math:: W = \Bigl\lceil C\min\Bigl\{\#\{f_i\ge\tau\} + \tau^{-2}\sum_{f_i<\tau} f_i^2,\ n\Bigr\}\Bigr\rceil

    (at least 1; without ``n`` the minimum is omitted).

    Examples
    --------
    >>> oracle_width([0.5, 0.3, 0.2], 0.4)
    2
    """
    f = check_array("freqs", freqs, ndim=1, low=0.0, min_size=1)
    tau = check_real("tau", tau, low=0.0, high=1.0, low_open=True, high_open=True)
    constant = check_real("constant", constant, low=0.0, low_open=True)
    val = np.sum(f >= tau) + np.sum(f[f < tau] ** 2) / tau**2
    if n is not None:
        val = min(val, check_int("n", n, low=1))
    return max(1, int(math.ceil(constant * val - 1e-9)))


def minimax_width(tau: float, *, constant: float = 1.0, n: int | None = None) -> int:
    r"""Worst-case width of seed 001, Eq. (3): :math:`\lceil C\min\{2/\tau, n\}\rceil`.

    Examples
    --------
    >>> minimax_width(0.01, constant=2.0)
    400
    """
    tau = check_real("tau", tau, low=0.0, high=1.0, low_open=True, high_open=True)
    constant = check_real("constant", constant, low=0.0, low_open=True)
    val = 2.0 / tau
    if n is not None:
        val = min(val, check_int("n", n, low=1))
    return max(1, int(math.ceil(constant * val - 1e-9)))


def polynomial_frequencies(alpha: float, beta: float, d: int) -> np.ndarray:
    r"""The truncated polynomial model of the two-phase method (seed 001, Sec. 2).

    .. math:: \mathrm{poly}(i;\alpha,\beta) = \beta i^{-\alpha}\ \text{for}\ i \le i^\star,\quad 0\ \text{beyond},

    :math:`i^\star = \max\{i: \sum_{j\le i}\beta j^{-\alpha} \le 1\}`, here also capped at
    ``d``. Entry 0 of the result is :math:`i = 1`.

    Examples
    --------
    >>> polynomial_frequencies(1.0, 0.5, 5).round(3).tolist()
    [0.5, 0.25, 0.167, 0.0, 0.0]
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    beta = check_real("beta", beta, low=0.0, low_open=True)
    d = check_int("d", d, low=1)
    v = beta * np.arange(1, d + 1, dtype=float) ** (-alpha)
    keep = np.cumsum(v) <= 1.0 + 1e-12
    return np.where(keep, v, 0.0)


def fit_polynomial(top_values) -> tuple[float, float]:
    r"""Fit :math:`\beta i^{-\alpha}` to the decreasing top-:math:`k` estimates (squared error).

    Minimises :math:`\sum_{i\le k}(\tilde f^*_i - \beta i^{-\alpha})^2` over
    :math:`\alpha, \beta > 0` (seed 001, two-phase method step 3), starting from the
    least-squares line through :math:`(\log i, \log \tilde f^*_i)` on positive entries.

    Returns
    -------
    (alpha, beta)

    Examples
    --------
    >>> a, b = fit_polynomial(0.3 * np.arange(1, 21) ** -1.5)
    >>> round(a, 4), round(b, 4)
    (1.5, 0.3)
    """
    y = check_array("top_values", top_values, ndim=1, min_size=2)
    y = np.sort(y)[::-1]
    i = np.arange(1, y.size + 1, dtype=float)
    pos = y > 0
    if pos.sum() < 2:
        raise ValueError("top_values must contain at least two positive estimates")
    slope, icpt = np.polyfit(np.log(i[pos]), np.log(y[pos]), 1)
    x0 = np.array([max(-slope, 1e-3), icpt])

    def resid(theta):
        a, logb = theta
        return np.exp(logb) * i ** (-a) - y

    sol = optimize.least_squares(resid, x0, bounds=([1e-6, -50.0], [50.0, 5.0]), xtol=1e-12, ftol=1e-12, gtol=1e-12)
    if not sol.success:  # status <= 0: the iteration limit or a numerical failure, not convergence
        raise RuntimeError(f"fit_polynomial: least squares did not converge ({sol.message})")
    return float(sol.x[0]), float(np.exp(sol.x[1]))


@dataclass(frozen=True)
class TwoPhaseResult:
    """Outcome of :func:`two_phase_width`: the width and the fitted model."""

    width: int
    alpha: float
    beta: float
    pilot_clients: int


def two_phase_width(
    items,
    *,
    d: int,
    tau: float,
    pilot_clients: int = 5000,
    pilot_width: int = 100,
    pilot_rows: int = 16,
    top_k: int = 20,
    constant: float = 2.0,
    rng: np.random.Generator | int | None = None,
) -> TwoPhaseResult:
    r"""The two-phase sketch-size selection of seed 001, Section 2.

    1. sample ``pilot_clients`` clients without replacement; 2. run a
    ``pilot_rows`` :math:`\times` ``pilot_width`` count sketch on them; 3. fit
    :math:`\beta i^{-\alpha}` to the ``top_k`` largest estimates (:func:`fit_polynomial`);
    4. return the width of Eq. (2) for the fitted model (:func:`oracle_width`, with
    :math:`n` the number of clients and the given constant).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = sample_client_items(zipf_frequencies(1000, 1.5), 20000, rng=rng)
    >>> res = two_phase_width(x, d=1000, tau=0.01, pilot_clients=2000, rng=rng)
    >>> 1 <= res.width <= 400
    True
    """
    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    x = _check_items(items, d)
    n = x.size
    pilot_clients = check_int("pilot_clients", pilot_clients, low=1, high=max(n, 1))
    top_k = check_int("top_k", top_k, low=2, high=d)
    gen = as_generator(rng)
    sample = gen.choice(x, size=pilot_clients, replace=False)
    est = sketch_estimate_clients([sample], d=d, width=pilot_width, rows=pilot_rows, design="shared", rng=gen)
    top = np.sort(est)[::-1][:top_k]
    alpha, beta = fit_polynomial(top)
    model = polynomial_frequencies(alpha, beta, d)
    w = oracle_width(model, tau, constant=constant, n=n)
    return TwoPhaseResult(w, alpha, beta, pilot_clients)


# --------------------------------------------------------------------------- privacy
def sketch_sensitivity(*, rows: int, n: int, relation: str = "add_remove") -> float:
    r"""ℓ2 sensitivity of the released normalised sketches (seed 001, proof of Thm 4.1).

    One client contributes one signed one-hot per row to one round's sketch,
    scaled by :math:`1/n` (``n`` public). Adding or removing that contribution moves
    the :math:`M` released sketches by :math:`\sqrt L/n` in ℓ2 (``"add_remove"``, the
    paper's value). Replacing the client's item by another moves each row by
    :math:`\sqrt2/n` if the two items fall in different buckets and by up to
    :math:`2/n` if they share a bucket with opposite signs, so the worst case over
    hashes is :math:`2\sqrt L/n` (``"replace"``).

    Examples
    --------
    >>> sketch_sensitivity(rows=4, n=10), sketch_sensitivity(rows=4, n=10, relation="replace")
    (0.2, 0.4)
    """
    rows = check_int("rows", rows, low=1)
    n = check_int("n", n, low=1)
    relation = check_choice("relation", relation, ("add_remove", "replace"))
    factor = 1.0 if relation == "add_remove" else 2.0
    return factor * math.sqrt(rows) / n


def dp_sketch_sigma(
    epsilon: float,
    delta: float,
    *,
    rows: int,
    n: int,
    relation: str = "add_remove",
    participations: int = 1,
) -> float:
    r"""Noise standard deviation per sketch entry for (ε, δ)-DP (seed 001, Thm 4.1).

    A client appears in ``participations`` rounds (1 in the paper: every round has new
    clients, so the :math:`M` Gaussian releases compose in parallel and the whole
    release is one Gaussian mechanism with sensitivity :math:`\Delta`). For
    :math:`k` participations the joint release is a Gaussian mechanism with
    sensitivity :math:`\sqrt k\,\Delta`. The noise is calibrated exactly with
    :func:`fedfreq.accounting.gaussian_sigma` (analytic Gaussian, Balle & Wang 2018).

    Examples
    --------
    >>> s = dp_sketch_sigma(1.0, 1e-5, rows=4, n=1000)
    >>> round(s * 1000 / 2, 4)   # = analytic sigma for sensitivity 1
    3.7306
    """
    participations = check_int("participations", participations, low=1)
    delta_s = sketch_sensitivity(rows=rows, n=n, relation=relation) * math.sqrt(participations)
    return accounting.gaussian_sigma(epsilon, delta, sensitivity=delta_s)


def dp_sketch_epsilon(
    sigma: float,
    delta: float,
    *,
    rows: int,
    n: int,
    relation: str = "add_remove",
    participations: int = 1,
    orders=None,
) -> tuple[float, float]:
    r"""ε of the DP sketch from the Rényi accountant (seed 001, Thm 4.1).

    Each round in which a client takes part is a Gaussian mechanism with RDP
    :math:`\alpha\Delta^2/(2\sigma^2)` (:func:`fedfreq.accounting.rdp_gaussian`); the
    ``participations`` rounds are composed (:func:`fedfreq.accounting.compose_rdp`) and
    converted with :func:`fedfreq.accounting.rdp_to_dp` over ``orders``.

    Returns
    -------
    (epsilon, best_order)

    Examples
    --------
    >>> eps, order = dp_sketch_epsilon(0.01, 1e-5, rows=4, n=1000)
    >>> round(eps, 3)
    0.795
    """
    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    participations = check_int("participations", participations, low=1)
    orders = accounting.DEFAULT_ORDERS if orders is None else orders
    delta_s = sketch_sensitivity(rows=rows, n=n, relation=relation)
    one = accounting.rdp_gaussian(orders, sensitivity=delta_s, sigma=sigma)
    total = accounting.compose_rdp(*([one] * participations))
    return accounting.rdp_to_dp(orders, total, delta)


def paper_dp_sigma(epsilon: float, delta: float, *, rows: int, n: int, c0: float = math.sqrt(2.0)) -> float:
    r"""The noise scale as written in the proof of Thm 4.1: :math:`c_0\sqrt{L\log(1/\delta)}/(n\varepsilon)`.

    (The theorem's statement omits the :math:`1/n`; the proof has it.) With
    :math:`c_0 = \sqrt2` this is the classical calibration
    :math:`\Delta\sqrt{2\log(1/\delta)}/\varepsilon` for :math:`\Delta = \sqrt L/n`,
    slightly below the textbook :math:`\sqrt{2\log(1.25/\delta)}` factor.

    Examples
    --------
    >>> round(paper_dp_sigma(1.0, 1e-5, rows=4, n=1000) * 1000, 4)
    9.5971
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    rows = check_int("rows", rows, low=1)
    n = check_int("n", n, low=1)
    c0 = check_real("c0", c0, low=0.0, low_open=True)
    return c0 * math.sqrt(rows * math.log(1.0 / delta)) / (n * epsilon)


def dp_hybrid_sketch_estimate(
    round_frequencies,
    *,
    width: int,
    rows: int,
    sigma: float,
    rng: np.random.Generator | int | None = None,
    design: str = "hybrid",
) -> np.ndarray:
    r"""The DP hybrid sketch of seed 001, Theorem 4.1 (central DP, simulated).

    Each round's normalised sketch gets independent :math:`\mathcal N(0,\sigma^2)` noise
    in every entry before decoding (:func:`decode_sketches`). Calibrate ``sigma`` with
    :func:`dp_sketch_sigma`. Floating-point Gaussian sampling is a model of the
    mechanism, not a safe DP implementation.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Examples
    --------
    >>> f = np.tile([0.5, 0.3, 0.2], (4, 1))
    >>> est = dp_hybrid_sketch_estimate(f, width=64, rows=5, sigma=1e-3, rng=0)
    >>> bool(np.max(np.abs(est - f[0])) < 0.01)
    True
    """
    F = _check_round_frequencies(round_frequencies)
    sigma = check_real("sigma", sigma, low=0.0)
    gen = as_generator(rng)
    M, d = F.shape
    hashes = draw_sketch_hashes(width=width, rows=rows, rounds=M, design=design, rng=gen)
    B, Sg = _tables(hashes, d)
    S = _sketch_rounds(F, hashes, B, Sg)
    S = S + sigma * gen.standard_normal(S.shape)
    return _decode_tables(S, B, Sg, design)


# --------------------------------------------------------------------------- communication
def sketch_bits_per_client(*, rows: int, width: int, n: int) -> int:
    r"""Bits a client sends for an :math:`L\times W` sketch through SecSum.

    :math:`LW\lceil\log_2(2n+1)\rceil`: every entry is a residue modulo
    :func:`fedfreq.secagg.modulus_for_signed` ``(n, 1)``.

    Examples
    --------
    >>> sketch_bits_per_client(rows=16, width=1000, n=10**6)
    336000
    """
    rows = check_int("rows", rows, low=1)
    width = check_int("width", width, low=1)
    return rows * width * secagg.bits_per_entry(secagg.modulus_for_signed(n, 1))


def one_hot_bits_per_client(*, d: int, n: int) -> int:
    r"""Bits a client sends with one-hot encoding through SecSum: :math:`d\lceil\log_2(n+1)\rceil`.

    Examples
    --------
    >>> one_hot_bits_per_client(d=100000, n=10**6)
    2000000
    """
    d = check_int("d", d, low=1)
    return d * secagg.bits_per_entry(secagg.modulus_for(n, 1))


# --------------------------------------------------------------------------- peers
#: The sketches compared by :func:`compare_peer_sketches`.
PEER_SKETCHES = ("count sketch", "count-min", "frequent items")


@dataclass(frozen=True)
class PeerSketchResult:
    r"""One row of :func:`compare_peer_sketches`.

    Attributes
    ----------
    name : str
        ``"count sketch"`` (this module), ``"count-min"`` or ``"frequent items"``
        (Apache DataSketches).
    implementation : str
        ``"fedfreq"`` or ``"datasketches"``.
    memory_words : int
        64-bit words of sketch state: :math:`LW` counters for the two linear sketches,
        two words (item, count) per hash-map slot for frequent items.
    linf_error : float
        :math:`\lVert\hat f - f\rVert_\infty` over the whole domain, mean over repeats.
    top_k_error : float
        :math:`\max_{j\in T_k}\lvert\hat f_j - f_j\rvert` over the true top-:math:`k`
        items :math:`T_k`, mean over repeats.
    top_k_recall : float
        :math:`\lvert \hat T_k \cap T_k\rvert / k`, with :math:`\hat T_k` the
        :math:`k` largest estimates, mean over repeats.
    merge_equals_whole : bool
        Whether merging the sketches of the two halves of the stream gives exactly the
        sketch of the whole stream (checked with the first hash draw; for the linear
        sketches, merging is the entrywise sum that secure summation computes). For
        count-min it also requires that the sketch built from the histogram equals the
        streamed one, in every repeat.
    updates_per_second : float
        Stream items processed per second (median over repeats; a timing, machine
        dependent): one call per item for DataSketches, one batch call
        (:func:`sketch_items`) for the count sketch.
    histogram_updates_per_second : float or None
        For the linear sketches, items per second when the sketch is built from the
        histogram of the stream (one weighted update per distinct item for
        count-min); ``None`` for frequent items.
    """

    name: str
    implementation: str
    memory_words: int
    linf_error: float
    top_k_error: float
    top_k_recall: float
    merge_equals_whole: bool
    updates_per_second: float
    histogram_updates_per_second: float | None


def _top_k_metrics(est: np.ndarray, f: np.ndarray, top: np.ndarray) -> tuple[float, float, float]:
    err = np.abs(est - f)
    est_top = np.argsort(-est, kind="stable")[: top.size]
    recall = np.intersect1d(est_top, top).size / top.size
    return float(err.max()), float(err[top].max()), float(recall)


def compare_peer_sketches(
    items,
    *,
    d: int,
    memory_words: int,
    rows: int,
    top_k: int = 20,
    repeats: int = 1,
    rng: np.random.Generator | int | None = None,
) -> tuple[PeerSketchResult, ...]:
    r"""Count sketch against the count-min and frequent-items sketches of Apache DataSketches.

    All three sketches process the same stream ``items`` (in the given order: the
    frequent-items sketch depends on it) at matched memory, counted in 64-bit words:

    * count sketch (:func:`draw_sketch_hashes`, :func:`sketch_items`, decoded by the
      median, Algorithm 1 of seed 001) and count-min
      (``datasketches.count_min_sketch``, decoded by the minimum) with the same
      :math:`L\times W` shape, :math:`L` = ``rows`` and
      :math:`W = \lfloor \text{memory\_words}/L\rfloor`;
    * frequent items (``datasketches.frequent_items_sketch``, a Misra–Gries summary)
      with a hash map of :math:`2^{g}` slots, each holding an item and a count,
      :math:`g = \lfloor\log_2(\text{memory\_words}/2)\rfloor`; items it does not
      track are estimated as 0.

    Frequencies are normalised by the stream length :math:`n`. Each repeat draws new
    hashes for the two linear sketches; the frequent-items sketch has no randomness and
    runs once. The merge check (with the first hashes) splits the stream into halves
    :math:`A, B` and compares the merged sketch with the sketch of :math:`A\cup B`:
    entrywise for the count sketch
    (``sketch_items(A) + sketch_items(B)``), byte for byte (serialised state) for
    count-min, estimate by estimate over :math:`[d]` for frequent items.

    Parameters
    ----------
    items : array_like of int, shape (n,)
        The stream: one item in ``[0, d)`` per client, in arrival order.
    d : int
        Domain size.
    memory_words : int
        Memory budget in 64-bit words, at least 16 (the smallest frequent-items map
        has 8 slots) and at least ``rows``.
    rows : int
        :math:`L` for the two linear sketches.
    top_k : int
        :math:`k` of the top-:math:`k` metrics, in ``[1, d]``.
    repeats : int
        Independent hash draws.
    rng : Generator, int or None

    Returns
    -------
    tuple of PeerSketchResult
        In the order of :data:`PEER_SKETCHES`.

    Notes
    -----
    Requires the ``datasketches`` package (Apache DataSketches, Python bindings).
    The timings (``updates_per_second``) are wall-clock measurements and vary between
    runs and machines; every other field is determined by ``items`` and ``rng``.

    Examples
    --------
    >>> x = np.repeat(np.arange(5), [40, 30, 20, 6, 4])
    >>> res = compare_peer_sketches(x, d=5, memory_words=64, rows=4, top_k=2, rng=0)
    >>> [(r.name, r.memory_words, r.linf_error, r.merge_equals_whole) for r in res]  # doctest: +NORMALIZE_WHITESPACE
    [('count sketch', 64, 0.0, True), ('count-min', 64, 0.0, True), ('frequent items', 64, 0.0, True)]
    """
    try:
        import datasketches as dsk
    except ImportError as exc:  # pragma: no cover - the pinned environment has it
        raise ImportError("compare_peer_sketches needs the 'datasketches' package (pip install datasketches)") from exc

    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    x = check_array("items", items, ndim=1, integer=True, low=0, high=d - 1, min_size=2)
    memory_words = check_int("memory_words", memory_words, low=16)
    rows = check_int("rows", rows, low=1, high=memory_words)
    top_k = check_int("top_k", top_k, low=1, high=d)
    repeats = check_int("repeats", repeats, low=1)
    gen = as_generator(rng)

    n = x.size
    width = memory_words // rows
    lg_max_k = int(math.floor(math.log2(memory_words / 2)))
    counts = np.bincount(x, minlength=d)
    f = counts / n
    top = np.argsort(-f, kind="stable")[:top_k]
    stream = x.tolist()
    half = n // 2
    distinct = np.flatnonzero(counts)
    hist = list(zip(distinct.tolist(), counts[distinct].tolist(), strict=False))
    domain = range(d)

    def _estimates(sk_obj) -> np.ndarray:
        return np.fromiter((sk_obj.get_estimate(j) for j in domain), dtype=float, count=d) / n

    metrics: dict[str, list[tuple[float, float, float]]] = {name: [] for name in PEER_SKETCHES}
    merges: dict[str, bool] = {}
    rates: dict[str, list[float]] = {name: [] for name in PEER_SKETCHES}
    hist_rate = []
    for rep in range(repeats):
        check_merge = rep == 0  # the merge checks and the (deterministic) frequent-items sketch run once
        # count sketch (this module): one batch call, linear by construction
        hashes = draw_sketch_hashes(width=width, rows=rows, rng=gen)
        t0 = time.perf_counter()
        total = sketch_items(x, hashes, d=d)
        rates["count sketch"].append(n / (time.perf_counter() - t0))
        est = decode_sketches(total[None] / n, hashes, d=d)
        metrics["count sketch"].append(_top_k_metrics(est, f, top))
        if check_merge:
            parts = sketch_items(x[:half], hashes, d=d) + sketch_items(x[half:], hashes, d=d)
            merges["count sketch"] = bool(np.array_equal(parts, total))

        # count-min (DataSketches): one update per item, then from the histogram
        seed = int(gen.integers(0, 2**63 - 1))
        cm = dsk.count_min_sketch(rows, width, seed)
        t0 = time.perf_counter()
        for v in stream:
            cm.update(v)
        rates["count-min"].append(n / (time.perf_counter() - t0))
        cm_hist = dsk.count_min_sketch(rows, width, seed)
        t0 = time.perf_counter()
        for v, c in hist:
            cm_hist.update(v, float(c))
        hist_rate.append(n / (time.perf_counter() - t0))
        metrics["count-min"].append(_top_k_metrics(_estimates(cm), f, top))
        whole = cm.serialize()
        same_hist = cm_hist.serialize() == whole
        if check_merge:
            cm_a, cm_b = dsk.count_min_sketch(rows, width, seed), dsk.count_min_sketch(rows, width, seed)
            for v in stream[:half]:
                cm_a.update(v)
            for v in stream[half:]:
                cm_b.update(v)
            cm_a.merge(cm_b)
            merges["count-min"] = bool(cm_a.serialize() == whole)
        merges["count-min"] &= bool(same_hist)

        if check_merge:
            # frequent items (DataSketches): one update per item; no randomness, so one run
            fi = dsk.frequent_items_sketch(lg_max_k)
            t0 = time.perf_counter()
            for v in stream:
                fi.update(v)
            rates["frequent items"].append(n / (time.perf_counter() - t0))
            est_fi = _estimates(fi)
            metrics["frequent items"].append(_top_k_metrics(est_fi, f, top))
            fi_a, fi_b = dsk.frequent_items_sketch(lg_max_k), dsk.frequent_items_sketch(lg_max_k)
            for v in stream[:half]:
                fi_a.update(v)
            for v in stream[half:]:
                fi_b.update(v)
            fi_a.merge(fi_b)
            merges["frequent items"] = bool(np.array_equal(_estimates(fi_a), est_fi))

    words = {"count sketch": rows * width, "count-min": rows * width, "frequent items": 2 * 2**lg_max_k}
    out = []
    for name in PEER_SKETCHES:
        m = np.mean(metrics[name], axis=0)
        out.append(
            PeerSketchResult(
                name=name,
                implementation="fedfreq" if name == "count sketch" else "datasketches",
                memory_words=int(words[name]),
                linf_error=float(m[0]),
                top_k_error=float(m[1]),
                top_k_recall=float(m[2]),
                merge_equals_whole=bool(merges[name]),
                updates_per_second=float(np.median(rates[name])),
                histogram_updates_per_second={
                    "count sketch": float(np.median(rates["count sketch"])),
                    "count-min": float(np.median(hist_rate)),
                    "frequent items": None,
                }[name],
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------- instances
def _normalise(v: np.ndarray) -> np.ndarray:
    return v / v.sum()


def zipf_frequencies(d: int, a: float) -> np.ndarray:
    r"""Zipf frequencies :math:`f_i \propto i^{-a}`, :math:`i = 1..d` (seed 001, Cor. 2.4(2), Fig. 2).

    Examples
    --------
    >>> zipf_frequencies(3, 1.0).round(4).tolist()
    [0.5455, 0.2727, 0.1818]
    """
    d = check_int("d", d, low=1)
    a = check_real("a", a, low=0.0)
    return _normalise(np.arange(1, d + 1, dtype=float) ** (-a))


def geometric_frequencies(d: int) -> np.ndarray:
    r"""Geometric frequencies :math:`f_i \propto 2^{-i}`, :math:`i=1..d` (seed 001, Cor. 2.4(1)).

    Examples
    --------
    >>> geometric_frequencies(2).round(4).tolist()
    [0.6667, 0.3333]
    """
    d = check_int("d", d, low=1)
    return _normalise(np.exp2(-np.arange(1, d + 1, dtype=float)))


def log_zipf_frequencies(d: int, b: float) -> np.ndarray:
    r"""Frequencies :math:`f_i \propto 1/\bigl((i+1)\log^b(i+1)\bigr)`, :math:`i = 1..d` (Cor. 2.4(3)).

    The paper writes :math:`i^{-1}\log^{-b}(i)`, infinite at :math:`i=1`; the index is
    shifted by one so that every entry is finite (same asymptotics).

    Examples
    --------
    >>> bool(np.all(np.diff(log_zipf_frequencies(10, 2.0)) < 0))
    True
    """
    d = check_int("d", d, low=1)
    b = check_real("b", b, low=0.0)
    i = np.arange(2, d + 2, dtype=float)
    return _normalise(1.0 / (i * np.log(i) ** b))


def flat_frequencies(n: int, d: int | None = None) -> np.ndarray:
    r"""The flat instance of Cor. 2.4(4): :math:`f_i = 10/n` for :math:`i \le n/10`, zero beyond.

    ``n`` must be a multiple of 10; ``d`` (default :math:`n/10`) pads with zeros.

    Examples
    --------
    >>> flat_frequencies(30).tolist()
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """
    n = check_int("n", n, low=10)
    if n % 10:
        raise ValueError(f"n must be a multiple of 10; got {n}")
    k = n // 10
    d = k if d is None else check_int("d", d, low=k)
    out = np.zeros(d)
    out[:k] = 10.0 / n
    return out


def sample_client_items(freqs, n: int, *, rng: np.random.Generator | int | None = None) -> np.ndarray:
    r"""Draw ``n`` clients' items i.i.d. from ``freqs`` (normalised), via a multinomial histogram.

    Returns the items sorted by value; shuffle (or :func:`split_rounds`) to assign
    them to rounds.

    Examples
    --------
    >>> sample_client_items([0.5, 0.5, 0.0], 6, rng=0).shape
    (6,)
    """
    f = check_array("freqs", freqs, ndim=1, low=0.0, min_size=1)
    if f.sum() <= 0:
        raise ValueError("freqs must have a positive sum")
    n = check_int("n", n, low=1)
    counts = as_generator(rng).multinomial(n, f / f.sum())
    return np.repeat(np.arange(f.size), counts)


def split_rounds(items, rounds: int, *, rng: np.random.Generator | int | None = None) -> list[np.ndarray]:
    r"""Shuffle clients and split them into ``rounds`` groups of (nearly) equal size.

    Examples
    --------
    >>> [len(r) for r in split_rounds(np.arange(10), 3, rng=0)]
    [4, 3, 3]
    """
    x = check_array("items", items, ndim=1, integer=True, low=0)
    rounds = check_int("rounds", rounds, low=1, high=max(x.size, 1))
    perm = as_generator(rng).permutation(x)
    return list(np.array_split(perm, rounds))


def round_frequencies(round_items: Sequence, d: int) -> np.ndarray:
    r"""Local frequency vectors :math:`f^{(m)}` of the rounds, shape (M, d).

    Examples
    --------
    >>> round_frequencies([[0, 1], [1, 1]], 3).tolist()
    [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]
    """
    d = check_int("d", d, low=1)
    out = np.empty((len(round_items), d))
    for m, x in enumerate(round_items):
        x = _check_items(x, d)
        if x.size == 0:
            raise ValueError(f"round_items[{m}] must contain at least one client")
        out[m] = np.bincount(x, minlength=d) / x.size
    return out


# --------------------------------------------------------------------------- exercises
def _check_result(passed: bool, message: str):
    from .exercises import CheckResult

    return CheckResult(passed, message)


def check_width_rule(
    rule: Callable[[np.ndarray, float], int],
    *,
    trials: int = 60,
    rng: np.random.Generator | int | None = 20260601,
):
    r"""Self-check for the chapter exercise on choosing a count-sketch width.

    The student writes ``rule(freqs, tau) -> width``. For several Zipf instances
    (:math:`d = 2000`) and tolerances, the checker runs ``trials`` independent count
    sketches with :math:`L = 10 \approx \ln(d/p)` rows at the proposed width and counts
    how often the ℓ∞ error exceeds τ. It passes if the failure rate is at most
    :math:`p = 0.1` up to four binomial standard errors at :math:`p`, and if the
    width is not wasteful (at most 16 times the width of Eq. (2) with :math:`C = 1`,
    and never above the minimax width of Eq. (3) with :math:`C = 2`).

    Examples
    --------
    >>> check_width_rule(lambda f, tau: 1).passed
    False
    """
    trials = check_int("trials", trials, low=20)
    gen = as_generator(rng)
    p = 0.1
    d = 2000
    for a in (1.2, 2.0):
        f = zipf_frequencies(d, a)
        for tau in (0.02, 0.005):
            try:
                w = rule(f.copy(), tau)
                w = check_int("width", w, low=1, high=10**6)
            except Exception as exc:  # the student's code failed or returned nonsense
                return _check_result(False, f"your rule raised or returned an invalid width: {exc}")
            if w > 16 * oracle_width(f, tau) or w > minimax_width(tau, constant=2.0):
                return _check_result(
                    False,
                    f"for a Zipf instance with exponent {a} and tau={tau} your width is larger than necessary; "
                    "use what the instance's tail tells you",
                )
            fails = 0
            for _ in range(trials):
                est = sketch_estimate(f[None, :], width=w, rows=10, design="shared", rng=gen)
                fails += bool(np.max(np.abs(est - f)) > tau)
            rate = fails / trials
            tol = p + 4 * math.sqrt(p * (1 - p) / trials)
            if rate > tol:
                return _check_result(
                    False,
                    f"for a Zipf instance with exponent {a} and tau={tau} the l_inf error exceeded tau in "
                    f"{fails} of {trials} runs ({rate:.2f} > {tol:.2f}): the width is too small",
                )
    return _check_result(True, "your widths are (tau, 0.1)-correct on every test instance and not wasteful")


def check_hybrid_decoder(
    decoder: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    *,
    rng: np.random.Generator | int | None = 20260602,
):
    r"""Self-check for the chapter exercise on decoding a hybrid sketch.

    The student writes ``decoder(sketches, buckets, signs) -> estimate`` where
    ``sketches`` has shape (M, L, W), ``buckets`` shape (L, d) (shared bucket hashes)
    and ``signs`` shape (M, L, d) (fresh sign hashes), and returns the (d,) estimate
    of Algorithm 2. The checker compares with :func:`decode_sketches` on random
    instances (tolerance 1e-9) and reports the first mismatch without the answer.

    Examples
    --------
    >>> check_hybrid_decoder(lambda S, b, s: np.zeros(b.shape[1])).passed
    False
    """
    gen = as_generator(rng)
    for M, L, W, d in ((1, 3, 8, 20), (4, 5, 16, 50), (6, 4, 4, 30)):
        h = draw_sketch_hashes(width=W, rows=L, rounds=M, design="hybrid", rng=gen)
        F = gen.dirichlet(np.full(d, 0.3), size=M)
        S = np.stack([sketch_vector(F[m], h, round_index=m) for m in range(M)])
        items = np.arange(d)
        buckets = h.buckets(items, 0)
        signs = np.stack([h.signs(items, m) for m in range(M)])
        want = decode_sketches(S, h, d=d)
        try:
            got = np.asarray(decoder(S.copy(), buckets.copy(), signs.copy()), dtype=float)
        except Exception as exc:  # the student's code failed
            return _check_result(False, f"your decoder raised {type(exc).__name__}: {exc}")
        if got.shape != (d,):
            return _check_result(False, f"expected an estimate of shape ({d},); got {got.shape}")
        if not np.allclose(got, want, atol=1e-9, rtol=0):
            rows_idx = np.arange(L)[:, None]
            swapped = np.mean(np.median(signs * S[:, rows_idx, buckets], axis=1), axis=0)
            if M > 1 and np.allclose(got, swapped, atol=1e-9):
                hint = "check the order of the two aggregations (over rounds and over rows)"
            else:
                hint = "check how a row's estimate reads the bucket and applies the sign of its round"
            return _check_result(False, f"mismatch with M={M}, L={L}, W={W}: {hint}")
    return _check_result(True, "your decoder reproduces Algorithm 2 on every test instance")
