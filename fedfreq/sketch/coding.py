"""Encoding, secure summation and decoding of count sketches (Wu et al., 2023, Algorithms 1
and 2) for the shared, fresh and hybrid multi-round designs, and their communication cost.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import secagg
from .._validation import SCALE_MAX, check_array, check_choice, check_int
from .hashing import (
    DESIGNS,
    MERSENNE_PRIME,
    HashTables,
    SketchHashes,
    _check_hashes,
    _check_items,
    _check_rounds_of_items,
    draw_sketch_hashes,
)

__all__ = [
    "encode_items",
    "sketch_vector",
    "sketch_items",
    "secure_sketch_sum",
    "decode_sketches",
    "sketch_estimate",
    "sketch_estimate_clients",
    "sketch_bits_per_client",
    "one_hot_bits_per_client",
]


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


def _as_tables(hashes, d: int) -> HashTables:
    """The tables of ``hashes`` (a SketchHashes, tabulated here, or HashTables for [d])."""
    if isinstance(hashes, HashTables):
        if hashes.d != d:
            raise ValueError(f"hashes must tabulate the domain of size d = {d}; these cover d = {hashes.d}")
        return hashes
    return _check_hashes(hashes).tabulate(d)


def _median_rows(x: np.ndarray) -> np.ndarray:
    """``np.median(x, axis=-2)``, by a min/max network for 1, 3 or 5 rows (the same values:
    for an odd count the median is one of the entries)."""
    L = x.shape[-2]
    if L == 1:
        return x[..., 0, :].copy()
    if L == 3:
        a, b, c = (x[..., i, :] for i in range(3))
        return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
    if L == 5:
        # the middle two of (a, b, c, e) are max(min(a,b), min(c,e)) and min(max(a,b), max(c,e));
        # the median of five is the median of those two and the fifth entry
        a, b, c, e, g = (x[..., i, :] for i in range(5))
        lo = np.maximum(np.minimum(a, b), np.minimum(c, e))
        hi = np.minimum(np.maximum(a, b), np.maximum(c, e))
        return np.maximum(np.minimum(g, lo), np.minimum(np.maximum(g, lo), hi))
    return np.median(x, axis=-2)


def _decode(S: np.ndarray, t: HashTables) -> np.ndarray:
    """Decode (M, L, W) normalised sketches with the tables ``t`` (see :func:`decode_sketches`)."""
    M = S.shape[0]
    flat = t._row_buckets  # (R_b, L, d) indices into a flattened (L, W) sketch
    if t.design == "fresh":
        acc = np.zeros(t.d)
        for m in range(M):
            acc += _median_rows(t.signs[m] * np.take(S[m], flat[m]))
        return acc / M
    if t.design == "shared":
        return _median_rows(t.signs[0] * np.take(S.mean(axis=0), flat[0]))
    acc = np.zeros((t.rows, t.d))
    for m in range(M):
        acc += t.signs[m] * np.take(S[m], flat[0])
    return _median_rows(acc / M)


def _sketch_rounds(F: np.ndarray, t: HashTables) -> np.ndarray:
    """The (M, L, W) sketches of the rows of ``F`` (round m uses round m's hashes)."""
    M = F.shape[0]
    flat = t._row_buckets
    size = t.rows * t.width
    out = np.empty((M, t.rows, t.width))
    for m in range(M):
        b = flat[m if flat.shape[0] > 1 else 0]
        s = t.signs[m if t.signs.shape[0] > 1 else 0]
        out[m] = np.bincount(b.ravel(), weights=(s * F[m][None, :]).ravel(), minlength=size).reshape(t.rows, t.width)
    return out


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


def decode_sketches(sketches, hashes: SketchHashes | HashTables, *, d: int) -> np.ndarray:
    r"""Server-side decoding of :math:`M` (normalised) round sketches.

    With :math:`\mathrm{dec}(j; m, \ell) = \sigma^{(m)}_\ell(j)\, S^{(m)}_{\ell, h^{(m)}_\ell(j)}`:

    * ``"shared"`` and ``"hybrid"``: :math:`\mathrm{median}_\ell \frac1M\sum_m \mathrm{dec}(j; m, \ell)`
      (Alg. 2, step 11; for shared hashes this is Alg. 1 on the averaged sketch);
    * ``"fresh"``: :math:`\frac1M\sum_m \mathrm{median}_\ell\, \mathrm{dec}(j; m, \ell)`.

    Parameters
    ----------
    sketches : array_like, shape (M, L, W)
        Round sketches, each normalised by its number of clients.
    hashes : SketchHashes or HashTables
        The hashes used, with ``hashes.rounds == M``; tables (:meth:`SketchHashes.tabulate`)
        save hashing the domain again.
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
    if not isinstance(hashes, HashTables):
        hashes = _check_hashes(hashes)
    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    S = check_array("sketches", sketches, shape=(hashes.rounds, hashes.rows, hashes.width))
    return _decode(S, _as_tables(hashes, d))


def _check_round_frequencies(round_frequencies) -> np.ndarray:
    F = check_array("round_frequencies", round_frequencies, ndim=2, low=0.0, min_size=1, max_abs=SCALE_MAX)
    return F


def sketch_estimate(
    round_frequencies,
    *,
    width: int,
    rows: int,
    design: str,
    rng: np.random.Generator | int | None = None,
    hashes: SketchHashes | HashTables | None = None,
) -> np.ndarray:
    r"""Estimate the global frequency vector with a multi-round count sketch.

    ``round_frequencies`` holds the local frequency vectors :math:`f^{(m)}`, one per
    round (Wu et al. 2023, Sec. 3); each round's server view is the normalised sketch
    :math:`\frac1n\sum_t \mathrm{enc}^{(m)}(x^{(m)}_t)`, which by linearity equals the
    sketch of :math:`f^{(m)}` (:func:`sketch_vector`). Hashes are drawn with
    :func:`draw_sketch_hashes` according to ``design`` and the sketches are decoded by
    :func:`decode_sketches`. The target is :math:`f = \frac1M\sum_m f^{(m)}`.

    Parameters
    ----------
    round_frequencies : array_like, shape (M, d)
        Non-negative per-round frequency vectors.
    width, rows : int
        :math:`W \ge 1`, :math:`1 \le L \le` ``MAX_ROWS``. Degenerate sizes are legal and
        mean what the definitions say: with :math:`W = 1` every item shares one bucket,
        so each estimate is :math:`\pm` the signed total of the round (unbiased, but with
        the variance of the whole vector); with :math:`L = 1` there is no median, only the
        one row's estimate.
    design : {"shared", "fresh", "hybrid"}
    rng : Generator, int or None
        Draws the hashes (when ``hashes`` is not given).
    hashes : SketchHashes or HashTables, optional
        Hashes drawn already, to reuse one draw across calls: then ``rng`` must be None
        and the hashes' width, rows, design and number of rounds must be those asked for.
        Tables (:meth:`SketchHashes.tabulate`) also save hashing the domain on each call.
        The same draw gives the same estimate: ``rng=g`` is the same as
        ``hashes=draw_sketch_hashes(width=width, rows=rows, rounds=M, design=design, rng=g)``.

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> f = np.array([[0.6, 0.4, 0.0], [0.2, 0.4, 0.4]])
    >>> np.round(sketch_estimate(f, width=256, rows=5, design="hybrid", rng=0), 3).tolist()
    [0.4, 0.4, 0.2]
    >>> t = draw_sketch_hashes(width=256, rows=5, rounds=2, design="hybrid", rng=0).tabulate(3)
    >>> np.round(sketch_estimate(f, width=256, rows=5, design="hybrid", hashes=t), 3).tolist()
    [0.4, 0.4, 0.2]
    """
    F = _check_round_frequencies(round_frequencies)
    M, d = F.shape
    if d > MERSENNE_PRIME - 1:
        raise ValueError(f"the domain size d must lie in [1, {MERSENNE_PRIME - 1}]; got {d}")
    if hashes is None:
        tables = draw_sketch_hashes(width=width, rows=rows, rounds=M, design=design, rng=rng).tabulate(d)
    else:
        tables = _given_tables(hashes, width=width, rows=rows, rounds=M, design=design, d=d, rng=rng)
    return _decode(_sketch_rounds(F, tables), tables)


def _given_tables(hashes, *, width, rows, rounds: int, design, d: int, rng) -> HashTables:
    """Check hashes passed to an estimator against the sketch asked for; return their tables."""
    if rng is not None:
        raise ValueError("pass either rng (to draw the hashes) or hashes (drawn already), not both")
    if not isinstance(hashes, SketchHashes | HashTables):
        raise ValueError(
            f"hashes must be a SketchHashes or HashTables (see draw_sketch_hashes); got {type(hashes).__name__}"
        )
    width = check_int("width", width, low=1, high=MERSENNE_PRIME - 1)
    rows = check_int("rows", rows, low=1)
    design = check_choice("design", design, DESIGNS)
    asked = {"width": width, "rows": rows, "rounds": rounds, "design": design}
    for name, value in asked.items():
        if getattr(hashes, name) != value:
            raise ValueError(
                f"hashes were drawn with {name} = {getattr(hashes, name)!r}, but {name} = {value!r} "
                "was asked for (see HashTables.with_width and HashTables.as_design)"
            )
    return _as_tables(hashes, d)


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
    rounds = [_check_items(x, d, name=f"round_items[{m}]") for m, x in enumerate(_check_rounds_of_items(round_items))]
    for m, x in enumerate(rounds):
        if x.size == 0:
            raise ValueError(f"round_items[{m}] must contain at least one client")
    M = len(rounds)
    hashes = draw_sketch_hashes(width=width, rows=rows, rounds=M, design=design, rng=rng)
    S = np.empty((M, hashes.rows, hashes.width))
    for m, x in enumerate(rounds):
        S[m] = sketch_items(x, hashes, d=d, round_index=m) / x.size
    return decode_sketches(S, hashes, d=d)


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
