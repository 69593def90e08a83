"""Seeded hash families for count sketches: polynomials modulo the Mersenne prime 2^31 - 1
(k-wise independent), drawn once and shared by clients and server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from .._rng import as_generator
from .._validation import check_array, check_choice, check_int

__all__ = [
    "MERSENNE_PRIME",
    "DESIGNS",
    "MAX_ROWS",
    "MAX_ROUNDS",
    "MAX_DOMAIN",
    "SketchHashes",
    "HashTables",
    "polynomial_hash",
    "draw_sketch_hashes",
]


#: The Mersenne prime :math:`2^{31}-1`; hash arithmetic stays below :math:`2^{62}`.
MERSENNE_PRIME = 2**31 - 1

#: The multi-round designs of Wu et al. 2023, Section 3.
DESIGNS = ("shared", "fresh", "hybrid")


_K_WISE = "a k-wise independent family is a polynomial of degree k - 1 evaluated per item"
#: Largest number of rows of a sketch (a row per hash function; the book uses L <= 30).
MAX_ROWS = 1_000
#: Largest number of rounds of a multi-round sketch.
MAX_ROUNDS = 100_000
#: Largest domain size d of the dense frequency vectors (8 bytes per item: 800 MB at 1e8).
MAX_DOMAIN = 10**8


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
    if c.shape[-1] <= _LIMB_MAX_K and x.size >= _LIMB_MIN_ITEMS:
        return _poly_mod_p_limbs(c, x)
    return _poly_mod_p_horner(c, x)


def _poly_mod_p_horner(c: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Horner's rule in int64: the reference evaluation (small inputs, and the tests)."""
    acc = np.broadcast_to(c[..., 0, None], c.shape[:-1] + (x.size,)).astype(np.int64)
    for r in range(1, c.shape[-1]):
        acc = _mod_p(acc * x + c[..., r, None])
    return acc


#: The limb evaluation below is exact (and its reduction correct) for at most 8 coefficients.
_LIMB_MAX_K = 8
#: Below this many items Horner's rule is as fast (no table of powers to build).
_LIMB_MIN_ITEMS = 256
#: Entries per block of the limb evaluation (blocks of 4 MB of float64 stay in cache).
_LIMB_BLOCK = 1 << 19


def _limbs(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split integers in [0, 2^31) into 16-bit limbs (high < 2^15, low < 2^16), as float64."""
    return (v >> 16).astype(float), (v & 0xFFFF).astype(float)


def _power_limbs(x: np.ndarray, k: int) -> np.ndarray:
    """The (4k, n) float64 matrix [x1; x0; x1; x0] of the limbs of x^r mod p, r = 0..k-1."""
    X = np.empty((k, x.size), dtype=np.int64)
    X[0] = 1
    for r in range(1, k):
        X[r] = (X[r - 1] * x) % MERSENNE_PRIME  # both factors < 2^31: the product is < 2^62
    x1, x0 = _limbs(X)
    return np.concatenate([x1, x0, x1, x0])


@lru_cache(maxsize=4)
def _domain_power_limbs(d: int, k: int) -> np.ndarray:
    """:func:`_power_limbs` of the whole domain ``0..d-1`` (cached: every draw reuses it)."""
    out = _power_limbs(np.arange(d, dtype=np.int64), k)
    out.flags.writeable = False
    return out


def _poly_mod_p_limbs(c: np.ndarray, x: np.ndarray, *, parity: bool = False) -> np.ndarray:
    r""":func:`_poly_mod_p_horner` for many polynomials at once, as one exact float64 product.

    With :math:`X_r = x^r \bmod p` and 16-bit limbs :math:`a_r = 2^{16}a'_r + a''_r`,
    :math:`X_r = 2^{16}x'_r + x''_r`, and since :math:`2^{32} \equiv 2 \pmod p`,

    .. math:: g(x) \equiv v = \sum_r 2a'_r x'_r + 2^{16}(a'_r x''_r + a''_r x'_r) + a''_r x''_r \pmod p.

    Each term is an integer below :math:`2^{48} + 2^{33}`, so for :math:`k \le 8` every
    partial sum is below :math:`2^{51.01}` and a float64 matrix product (in any summation
    order) computes :math:`v` exactly. Then :math:`q = \lfloor v \cdot \mathrm{fl}(1/p)\rfloor`:
    two roundings put the computed :math:`v/p < 2^{20.01}` off by less than
    :math:`2^{20.01 - 52} < 2^{-31} < 1/p`, and :math:`v/p` is at least :math:`1/p` away from
    every integer other than itself; so :math:`q` is the true quotient unless :math:`p`
    divides :math:`v`, where it may be one less. Hence :math:`v - qp` (exact) lies in
    :math:`[0, p]` and one conditional subtraction finishes. Returns the int64 values of
    Horner's rule, or with ``parity`` the signs :math:`1 - 2(g \bmod 2)` as int8.
    """
    k = c.shape[-1]
    lead = c.shape[:-1]
    a = c[..., ::-1].reshape(-1, k)  # lowest degree first, one row per polynomial
    a1, a0 = _limbs(a)
    A = np.concatenate([2.0 * a1, 65536.0 * a1, 65536.0 * a0, a0], axis=1)
    n = x.size
    if n and x[0] == 0 and x[-1] == n - 1 and np.array_equal(x, np.arange(n)):
        XX = _domain_power_limbs(n, k)
    else:
        XX = _power_limbs(x, k)
    out = np.empty((A.shape[0], n), dtype=np.int8 if parity else np.int64)
    step = max(1, _LIMB_BLOCK // n)
    v = np.empty((min(step, A.shape[0]), n))  # work buffers reused by every block
    q = np.empty_like(v)
    for start in range(0, A.shape[0], step):
        block = A[start : start + step]
        vb, qb = v[: block.shape[0]], q[: block.shape[0]]
        np.matmul(block, XX, out=vb)
        np.multiply(vb, 1.0 / MERSENNE_PRIME, out=qb)
        np.floor(qb, out=qb)
        np.multiply(qb, MERSENNE_PRIME, out=qb)
        np.subtract(vb, qb, out=vb)  # exact, in [0, p]
        np.subtract(vb, MERSENNE_PRIME, out=vb, where=vb >= MERSENNE_PRIME)
        if parity:  # 1 - 2 (v - 2 floor(v/2)) = 1 - 2v + 4 floor(v/2)
            np.multiply(vb, 0.5, out=qb)
            np.floor(qb, out=qb)
            np.multiply(qb, 4.0, out=qb)
            np.multiply(vb, -2.0, out=vb)
            np.add(vb, qb, out=vb)
            np.add(vb, 1.0, out=vb)
        out[start : start + block.shape[0]] = vb
    return out.reshape(lead + (n,))


def _poly_signs(c: np.ndarray, x: np.ndarray) -> np.ndarray:
    r"""Signs :math:`1 - 2(g(x) \bmod 2)` of :func:`_poly_mod_p` as int8."""
    if c.shape[-1] <= _LIMB_MAX_K and x.size >= _LIMB_MIN_ITEMS:
        return _poly_mod_p_limbs(c, x, parity=True)
    return (1 - 2 * (_poly_mod_p_horner(c, x) & 1)).astype(np.int8)


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

    def tabulate(self, d: int) -> HashTables:
        """Every item's bucket and sign, for all rounds, computed once (see :class:`HashTables`).

        Examples
        --------
        >>> h = draw_sketch_hashes(width=8, rows=3, rounds=2, design="hybrid", rng=0)
        >>> t = h.tabulate(5)
        >>> t.buckets.shape, t.signs.shape
        ((1, 3, 5), (2, 3, 5))
        >>> bool(np.array_equal(t.buckets[0], h.buckets(np.arange(5))))
        True
        """
        d = check_int("d", d, low=1, high=MAX_DOMAIN, reason="a table holds every item of the domain")
        x = np.arange(d, dtype=np.int64)
        values = _poly_mod_p(self.bucket_coeffs, x)
        signs = _poly_signs(self.sign_coeffs, x)
        return HashTables(self.width, self.rows, self.rounds, self.design, values, signs)


@dataclass(frozen=True, eq=False)
class HashTables:
    r"""Every item's bucket and sign under one draw of sketch hashes, computed once.

    :meth:`SketchHashes.tabulate` evaluates the hash polynomials at every item of
    :math:`\{0, \dots, d-1\}`. The tables then serve any number of sketches and
    decodings (``sketch_estimate(..., hashes=tables)``, :func:`decode_sketches`), so a
    repeated experiment hashes the domain once per draw instead of once per call. They
    hold exactly what :meth:`SketchHashes.buckets` and :meth:`SketchHashes.signs` return.

    Attributes
    ----------
    width, rows, rounds : int
        :math:`W`, :math:`L` and :math:`M`.
    design : str
        ``"shared"``, ``"fresh"`` or ``"hybrid"``.
    bucket_values : ndarray of int64, shape (R_b, L, d)
        The bucket polynomials :math:`g^{(m)}_\ell(i) \in [0, p)`; the buckets are these
        values modulo :math:`W` (:attr:`buckets`). :math:`R_b = M` for ``"fresh"``, else 1.
    signs : ndarray of int8, shape (R_s, L, d)
        :math:`\sigma^{(m)}_\ell(i) \in \{-1, +1\}`; :math:`R_s = 1` for ``"shared"``, else :math:`M`.

    Notes
    -----
    :meth:`with_width` reduces the same polynomials modulo another width, and
    :meth:`as_design` reads the hashes of a design that renews fewer of them (shared
    from hybrid, shared or hybrid from fresh: round 0's buckets, and round 0's or every
    round's signs). Each derived set is a valid draw of its own family; reusing one draw
    across widths and designs makes their errors correlated (common random numbers),
    which sharpens comparisons between them.

    Examples
    --------
    >>> t = draw_sketch_hashes(width=4, rows=2, rounds=3, design="fresh", rng=1).tabulate(6)
    >>> t.as_design("hybrid").buckets.shape, t.as_design("hybrid").signs.shape
    ((1, 2, 6), (3, 2, 6))
    >>> int(t.with_width(2).buckets.max()) <= 1
    True
    """

    width: int
    rows: int
    rounds: int
    design: str
    bucket_values: np.ndarray = field(repr=False)
    signs: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        check_int("width", self.width, low=1, high=MERSENNE_PRIME - 1)
        check_choice("design", self.design, DESIGNS)
        rb = self.rounds if self.design == "fresh" else 1
        rs = 1 if self.design == "shared" else self.rounds
        bv, sg = self.bucket_values, self.signs
        if not (isinstance(bv, np.ndarray) and bv.ndim == 3 and bv.shape[:2] == (rb, self.rows)):
            raise ValueError(f"bucket_values must be an array of shape ({rb}, {self.rows}, d) for {self.design!r}")
        if not (isinstance(sg, np.ndarray) and sg.shape == (rs, self.rows, bv.shape[2])):
            raise ValueError(f"signs must be an array of shape ({rs}, {self.rows}, {bv.shape[2]}) for {self.design!r}")

    @property
    def d(self) -> int:
        """The domain size: the tables cover the items ``0, ..., d-1``."""
        return int(self.bucket_values.shape[2])

    @cached_property
    def buckets(self) -> np.ndarray:
        r"""Bucket indices :math:`h^{(m)}_\ell(i) = g^{(m)}_\ell(i) \bmod W`, shape (R_b, L, d)."""
        return self.bucket_values % self.width

    @cached_property
    def _row_buckets(self) -> np.ndarray:
        r"""Buckets offset by :math:`W\ell` (flat indices into an (L, W) sketch), shape (R_b, L, d)."""
        return self.buckets + self.width * np.arange(self.rows)[:, None]

    def with_width(self, width: int) -> HashTables:
        """The same hash polynomials reduced modulo another ``width`` (no re-hashing)."""
        width = check_int("width", width, low=1, high=MERSENNE_PRIME - 1)
        return HashTables(width, self.rows, self.rounds, self.design, self.bucket_values, self.signs)

    def as_design(self, design: str) -> HashTables:
        """The hashes of ``design`` read from these: ``"fresh"`` gives all three, ``"hybrid"``
        gives ``"shared"`` too (round 0's buckets; round 0's or every round's signs)."""
        design = check_choice("design", design, DESIGNS)
        if design == self.design:
            return self
        order = {"shared": 0, "hybrid": 1, "fresh": 2}
        if order[design] > order[self.design]:
            raise ValueError(
                f"design {design!r} renews more hashes than these {self.design!r} tables hold; "
                "tabulate fresh hashes to derive every design"
            )
        signs = self.signs[:1] if design == "shared" else self.signs
        table = HashTables(self.width, self.rows, self.rounds, design, self.bucket_values[:1], signs)
        if "buckets" in self.__dict__:  # keep the reduced buckets already computed
            table.__dict__["buckets"] = self.buckets[:1]
        return table


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
        Which hashes are renewed per round (Wu et al. 2023, Sec. 3): none, all, or the signs.
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
    rows = check_int("rows", rows, low=1, high=MAX_ROWS, reason="each row is a hash function drawn and applied")
    rounds = check_int("rounds", rounds, low=1, high=MAX_ROUNDS, reason="each round draws its own hashes")
    design = check_choice("design", design, DESIGNS)
    kb = check_int("bucket_independence", bucket_independence, low=1, high=64, reason=_K_WISE)
    ks = check_int("sign_independence", sign_independence, low=1, high=64, reason=_K_WISE)
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


def _check_items(items, d: int, name: str = "items", min_size: int = 0) -> np.ndarray:
    return check_array(name, items, ndim=1, integer=True, low=0, high=d - 1, min_size=min_size)


def _check_rounds_of_items(round_items, name: str = "round_items") -> list:
    """The rounds of a multi-round input: a non-empty sequence of 1-D item arrays."""
    if isinstance(round_items, np.ndarray) and round_items.ndim == 1 and round_items.dtype.kind in "iuf":
        return [round_items]
    if round_items is None or isinstance(round_items, str | bytes) or not hasattr(round_items, "__len__"):
        raise ValueError(f"{name} must be a sequence of 1-D arrays of items (one per round); got {round_items!r}")
    if len(round_items) < 1:
        raise ValueError(f"{name} must contain at least one round")
    if len(round_items) > MAX_ROUNDS:
        raise ValueError(f"{name} must have at most {MAX_ROUNDS} rounds; got {len(round_items)}")
    return list(round_items)
