"""Seeded hash families for count sketches: polynomials modulo the Mersenne prime 2^31 - 1
(k-wise independent), drawn once and shared by clients and server.
"""

from __future__ import annotations

from dataclasses import dataclass

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
