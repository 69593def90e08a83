r"""A secure-summation (SecSum / SecAgg) simulator.

In a secure-summation protocol each client :math:`i \in \{1,\dots,n\}` holds a
vector :math:`Z_i \in \mathbb{Z}_M^D` and the untrusted server learns only the
modular sum

.. math:: S = \sum_{i=1}^n Z_i \bmod M \in \mathbb{Z}_M^D .

The OcPBM paper (Sec. 2, "SecAgg/SecSum") treats the protocol as a black box that
computes this modular sum faithfully. This module simulates exactly that
arithmetic together with the additive pairwise masking of Bonawitz et al.
(2017), so that a chapter can show (i) what a single masked report looks like to
the server (uniform noise), (ii) that the masks cancel in the sum, and (iii) what
goes wrong when the modulus :math:`M` is too small and the sum wraps around.

What this simulator is *not*: it models the sum and the view of the server
only. There is no cryptography (no key agreement, no pseudorandom generator
expanding shared seeds, no secret sharing of seeds), no dropout recovery, no
malicious clients and no network. The mask shared by a pair of clients is
modelled by an independent uniform draw from :math:`\mathbb{Z}_M^D`, which is
what a secure pseudorandom generator is meant to be indistinguishable from. A
simulation is not a deployment.

All arithmetic is exact integer arithmetic in ``int64``; the modulus is capped at
:math:`2^{62}` so that the sum of two residues never overflows, and column sums
over many clients are taken in chunks that are reduced modulo :math:`M` before
they could overflow.

References
----------
K. Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving Machine
Learning", CCS 2017 (pairwise masks on the complete graph).

J. H. Bell, K. A. Bonawitz, A. Gascón, T. Lepoint, M. Raykova, "Secure Single-Server
Aggregation with (Poly)Logarithmic Overhead", CCS 2020 (masks on a regular graph of
logarithmic degree instead of the complete graph).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._rng import as_generator
from ._validation import check_array, check_bool, check_int

__all__ = [
    "MAX_MODULUS",
    "MAX_CLIENTS",
    "MAX_ENTRIES",
    "SecureSumResult",
    "modulus_for",
    "modulus_for_signed",
    "can_wrap",
    "bits_per_entry",
    "mask_graph",
    "pairwise_masks",
    "mask_reports",
    "secure_sum",
    "secure_sum_with_check",
    "to_signed",
]

#: Largest modulus the simulator accepts: two residues below it add up to less
#: than ``2**63``, so no ``int64`` addition can overflow.
MAX_MODULUS: int = 2**62

_INT64_MAX = np.iinfo(np.int64).max
#: Largest number of clients of a simulated secure sum (the mask graph has about n·k edges).
MAX_CLIENTS: int = 10**7
#: Largest number of entries n·dim of a simulated mask matrix (8 GB of int64 at 1e9).
MAX_ENTRIES: int = 10**9


# ----------------------------------------------------------------------------
# Choosing the modulus
# ----------------------------------------------------------------------------


def modulus_for(n: int, max_entry: int) -> int:
    r"""Smallest modulus :math:`M` for which the sum of ``n`` entries in ``[0, max_entry]`` cannot wrap.

    The true sum of ``n`` integers in :math:`\{0,\dots,m\}` lies in
    :math:`\{0,\dots,nm\}`, a set of :math:`nm + 1` values. Reduction modulo
    :math:`M` is injective on it if and only if :math:`M \ge nm + 1`, so

    .. math:: M_{\min}(n, m) = nm + 1 .

    Parameters
    ----------
    n : int
        Number of clients, :math:`n \ge 1`.
    max_entry : int
        Largest value :math:`m \ge 0` a client may send in one coordinate (for the
        cPBM of the OcPBM paper a :math:`\mathrm{Binom}(m, p)` draw, so :math:`m` itself).

    Returns
    -------
    int
        :math:`\max(nm + 1, 2)`; the floor of 2 is there because the simulator
        needs a non-trivial group (with :math:`m = 0` every sum is 0 and any
        :math:`M \ge 2` works).

    Notes
    -----
    The OcPBM paper (line 146 of the text copy, Sec. 3.2 after Alg. 3) says that with
    SecSum over a group of size :math:`M`, summing :math:`n` quantities "of size
    :math:`m`" each, it avoids "integer overflows" by choosing :math:`M = nm`, so
    that each user sends :math:`\log_2(m) + \log_2(n)` bits per dimension. The
    cPBM outputs are :math:`Z[k] \sim \mathrm{Binom}(m, p[k])`, i.e. integers in
    :math:`\{0,\dots,m\}`, which is :math:`m + 1` values, not :math:`m`. Their sum
    can equal :math:`nm` exactly (every client draws :math:`m`), and
    :math:`nm \equiv 0 \pmod{nm}`: the server would decode the largest possible
    sum as the smallest one. The one-off fix is :math:`M = nm + 1`. Two remarks
    keep the correction in proportion:

    * For cPBM, :math:`p[k] \in [1/2 - \theta, 1/2 + \theta] \subseteq [1/4, 3/4]`,
      so the offending event has probability at most :math:`(3/4)^{nm}` per
      coordinate; the paper's choice is harmless in practice but not "never".
    * Communication: a residue of :math:`\mathbb{Z}_M` needs
      :math:`\lceil \log_2 M \rceil` bits (:func:`bits_per_entry`). The extra
      :math:`+1` costs one more bit only when :math:`nm` is a power of two.
      The paper's :math:`\log_2(m) + \log_2(n)` ignores the rounding up.

    Examples
    --------
    >>> modulus_for(3, 4)
    13
    >>> can_wrap(3, 4, 12), can_wrap(3, 4, 13)
    (True, False)
    """
    n = check_int("n", n, low=1)
    m = check_int("max_entry", max_entry, low=0)
    return max(n * m + 1, 2)


def modulus_for_signed(n: int, max_abs: int) -> int:
    r"""Smallest odd-centred modulus for summing ``n`` signed entries in ``[-max_abs, max_abs]``.

    Signed entries are sent as residues :math:`z \bmod M` and the server decodes
    the sum with :func:`to_signed`, which maps :math:`\mathbb{Z}_M` onto
    :math:`(-M/2, M/2]`. The true sum lies in :math:`[-na, na]`
    (:math:`a` = ``max_abs``), :math:`2na + 1` values, and the decoding window
    contains it if and only if :math:`M \ge 2na + 1`; hence

    .. math:: M_{\min} = \max(2na + 1, 2).

    This is the setting of the OcPBM paper's discrete Haar transform, whose coefficients
    are :math:`\pm 1`, and of signed bit pushing in Cormode & Markov 2021.

    Examples
    --------
    >>> modulus_for_signed(4, 1)
    9
    """
    n = check_int("n", n, low=1)
    a = check_int("max_abs", max_abs, low=0)
    return max(2 * n * a + 1, 2)


def can_wrap(n: int, max_entry: int, modulus: int) -> bool:
    r"""Whether the sum of ``n`` entries in ``[0, max_entry]`` can reach ``modulus``.

    True if and only if :math:`nm \ge M`, i.e. some admissible input makes the
    modular sum differ from the integer sum.

    Examples
    --------
    >>> can_wrap(10, 3, 30)   # the paper's M = nm: all clients send 3
    True
    >>> can_wrap(10, 3, 31)
    False
    """
    n = check_int("n", n, low=1)
    m = check_int("max_entry", max_entry, low=0)
    modulus = check_int("modulus", modulus, low=2)
    return n * m >= modulus


def bits_per_entry(modulus: int) -> int:
    r"""Bits needed to send one residue of :math:`\mathbb{Z}_M`: :math:`\lceil \log_2 M \rceil`.

    Examples
    --------
    >>> bits_per_entry(2**18), bits_per_entry(2**18 + 1)
    (18, 19)
    """
    modulus = check_int("modulus", modulus, low=2)
    return (modulus - 1).bit_length()


# ----------------------------------------------------------------------------
# Masks
# ----------------------------------------------------------------------------


def _check_modulus(modulus) -> int:
    return check_int("modulus", modulus, low=2, high=MAX_MODULUS)


def _check_neighbours(neighbours) -> int | None:
    if neighbours is None:
        return None
    return check_int("neighbours", neighbours, low=1)


def _offsets(n: int, neighbours: int | None) -> range:
    """Ring offsets ``o`` whose edges ``(i, i + o mod n)`` make up the masking graph.

    Offsets ``o`` and ``n - o`` give the same edges, so only ``o <= n // 2`` are
    used; for even ``n`` the antipodal offset ``n / 2`` contributes ``n / 2`` edges,
    every other offset ``n`` edges. Every unordered pair appears exactly once.
    """
    if n < 2:
        return range(1, 1)
    half = n // 2
    k = half if neighbours is None else min(neighbours, half)
    return range(1, k + 1)


def _edges_for_offset(n: int, o: int) -> np.ndarray:
    u = np.arange(n // 2 if 2 * o == n else n, dtype=np.int64)
    return np.stack([u, (u + o) % n], axis=1)


def mask_graph(n: int, neighbours: int | None = 1) -> np.ndarray:
    r"""Edges of the masking graph: client :math:`i` is joined to :math:`i \pm 1, \dots, i \pm k \pmod n`.

    This is the circulant (Harary) graph of degree :math:`\min(2k, n-1)`; with
    :math:`2k \ge n - 1` or ``neighbours=None`` it is the complete graph of
    Bonawitz et al. (2017). Bell et al. (2020) show how to replace the complete
    graph by a :math:`k`-regular graph of logarithmic degree while keeping the
    security guarantees. The ring used here is regular and sparse as well, but it
    is a fixed graph without their security analysis: it only serves to simulate
    the arithmetic of masks that cancel.

    Parameters
    ----------
    n : int
        Number of clients, :math:`n \ge 1`.
    neighbours : int or None
        :math:`k \ge 1`, the number of neighbours on each side; ``None`` for the
        complete graph.

    Returns
    -------
    ndarray of shape (E, 2)
        Each unordered pair once, as ``(u, v)`` with ``v = u + o mod n`` for an
        offset ``o``. With ``n = 1`` there are no edges.

    Examples
    --------
    >>> mask_graph(4, 1).tolist()
    [[0, 1], [1, 2], [2, 3], [3, 0]]
    >>> len(mask_graph(5, None))   # complete graph on 5 clients
    10
    """
    n = check_int("n", n, low=1, high=MAX_CLIENTS, reason="the simulated mask graph has about n*k edges")
    neighbours = _check_neighbours(neighbours)
    blocks = [_edges_for_offset(n, o) for o in _offsets(n, neighbours)]
    if not blocks:
        return np.empty((0, 2), dtype=np.int64)
    return np.concatenate(blocks, axis=0)


def pairwise_masks(
    n: int,
    dim: int,
    modulus: int,
    rng: np.random.Generator | int | None = None,
    *,
    neighbours: int | None = 1,
) -> np.ndarray:
    r"""Additive masks :math:`r_i \in \mathbb{Z}_M^{D}` that cancel: :math:`\sum_i r_i \equiv 0 \pmod M`.

    For every edge :math:`\{u, v\}` of :func:`mask_graph` a mask
    :math:`s_{uv} \sim \mathrm{Unif}(\mathbb{Z}_M^D)` is drawn (standing in for the
    expansion of the seed the pair shares). The client with the smaller index adds
    it, the other subtracts it:

    .. math:: r_i = \sum_{j \in N(i),\, j > i} s_{ij} - \sum_{j \in N(i),\, j < i} s_{ji} \pmod M .

    Each :math:`s_{uv}` enters the total once with each sign, so the masks cancel
    exactly. For :math:`n \ge 2` every :math:`r_i` contains at least one
    independent uniform term and is therefore uniform on :math:`\mathbb{Z}_M^D`;
    because the graph is connected, any :math:`n - 1` of the masks are jointly
    uniform and independent.

    With :math:`n = 1` there is nobody to share a mask with: the mask is zero and
    the single report reaches the server in the clear (which the sum reveals
    anyway).

    Parameters
    ----------
    n : int
        Number of clients, :math:`n \ge 1`.
    dim : int
        Length :math:`D \ge 1` of each client's vector.
    modulus : int
        :math:`M \in [2, 2^{62}]`.
    rng : Generator, int or None
        Source of randomness (see :func:`fedfreq._rng.as_generator`).
    neighbours : int or None
        Neighbours on each side of the ring (``None``: complete graph).

    Returns
    -------
    ndarray of int64, shape (n, dim)
        Entries in :math:`[0, M)`.

    Examples
    --------
    >>> r = pairwise_masks(5, 3, 11, rng=0)
    >>> r.shape, (r.sum(axis=0) % 11).tolist()
    ((5, 3), [0, 0, 0])
    """
    n = check_int("n", n, low=1, high=MAX_CLIENTS, reason="the simulated mask graph has about n*k edges")
    dim = check_int(
        "dim", dim, low=1, high=max(1, MAX_ENTRIES // n), reason="n*dim masks of 8 bytes must fit in memory"
    )
    modulus = _check_modulus(modulus)
    neighbours = _check_neighbours(neighbours)
    gen = as_generator(rng)
    masks = np.zeros((n, dim), dtype=np.int64)
    # Per offset a client receives two terms in [0, M], so its entry stays below 3M.
    # Reduce once per offset when 3M fits in int64, else after every addition.
    careful = 3 * modulus > _INT64_MAX

    def add(rows: slice, terms: np.ndarray) -> None:
        masks[rows] += terms
        if careful:
            masks[rows] %= modulus

    for o in _offsets(n, neighbours):
        if 2 * o == n:
            # antipodal edges (i, i + n/2), i < n/2: client i is the smaller index
            half = n // 2
            shared = gen.integers(0, modulus, size=(half, dim), dtype=np.int64)
            add(slice(0, half), shared)
            np.subtract(modulus, shared, out=shared)  # -shared mod M, in (0, M]
            add(slice(half, n), shared)
        else:
            # Edge (i, i + o mod n) carries shared[i]. For i < n - o client i is the
            # smaller index (adds) and client i + o subtracts; for i >= n - o the
            # edge wraps round the ring: client i + o - n adds, client i subtracts.
            shared = gen.integers(0, modulus, size=(n, dim), dtype=np.int64)
            cut = n - o
            add(slice(0, cut), shared[:cut])
            add(slice(0, o), shared[cut:])
            np.subtract(modulus, shared, out=shared)  # -shared mod M, in (0, M]
            add(slice(o, n), shared[:cut])
            add(slice(cut, n), shared[cut:])
        masks %= modulus
    return masks


# ----------------------------------------------------------------------------
# Reports and sums
# ----------------------------------------------------------------------------


def _check_values(values, modulus: int) -> np.ndarray:
    raw = values if isinstance(values, np.ndarray) else None
    if raw is not None and raw.dtype != bool and np.issubdtype(raw.dtype, np.integer):
        # residues of Z_M: their sums may exceed int64 (up to n (M - 1)), which the modular
        # and exact column sums below handle; only the range of each entry is checked here
        if raw.dtype.kind == "u" and raw.dtype.itemsize >= 8 and raw.size and int(raw.max()) > _INT64_MAX:
            raise ValueError(f"values must lie in [0, modulus - 1] = [0, {modulus - 1}]; got max {int(raw.max())}")
        arr = raw.astype(np.int64)
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) > modulus - 1):
            raise ValueError(
                f"values must lie in [0, modulus - 1] = [0, {modulus - 1}]; got min {int(arr.min())}, "
                f"max {int(arr.max())}"
            )
    else:
        arr = check_array("values", values, integer=True, low=0, high=modulus - 1)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"values must be 1-D (n,) or 2-D (n, dim); got shape {arr.shape}")
    if arr.shape[0] < 1:
        raise ValueError(f"values must hold at least one client (n >= 1); got shape {arr.shape}")
    if arr.shape[1] < 1:
        raise ValueError(f"values must have dim >= 1 columns; got shape {arr.shape}")
    return arr


def mask_reports(
    values,
    *,
    modulus: int,
    rng: np.random.Generator | int | None = None,
    neighbours: int | None = 1,
) -> np.ndarray:
    r"""The masked reports :math:`Y_i = Z_i + r_i \bmod M` that the server receives.

    Parameters
    ----------
    values : array_like of int, shape (n, dim) or (n,)
        Client vectors :math:`Z_i`, entries in :math:`[0, M)`; a 1-D array is
        read as ``n`` clients with one coordinate each.
    modulus : int
        :math:`M \in [2, 2^{62}]`.
    rng, neighbours
        As in :func:`pairwise_masks`.

    Returns
    -------
    ndarray of int64, shape (n, dim)

    Examples
    --------
    >>> y = mask_reports([[1, 2], [3, 4], [5, 6]], modulus=16, rng=1)
    >>> (y.sum(axis=0) % 16).tolist()
    [9, 12]
    """
    modulus = _check_modulus(modulus)
    z = _check_values(values, modulus)
    masks = pairwise_masks(z.shape[0], z.shape[1], modulus, rng, neighbours=neighbours)
    masks += z
    masks %= modulus
    return masks


def _modular_column_sum(x: np.ndarray, modulus: int) -> np.ndarray:
    """Column sums of residues ``x`` (entries in ``[0, M)``) modulo ``M`` without int64 overflow.

    Rows are summed in chunks of ``c`` with ``c (M - 1) <= 2**63 - 1``; each chunk
    sum is reduced modulo ``M`` and the reduction repeats on the chunk sums.
    """
    chunk = max(2, _INT64_MAX // (modulus - 1))
    while x.shape[0] > chunk:
        rows = x.shape[0]
        full = (rows // chunk) * chunk
        parts = [x[:full].reshape(-1, chunk, x.shape[1]).sum(axis=1)]
        if full < rows:
            parts.append(x[full:].sum(axis=0, keepdims=True))
        x = np.concatenate(parts, axis=0)
        x %= modulus
    return x.sum(axis=0) % modulus


def _exact_column_sum(z: np.ndarray, max_entry: int) -> np.ndarray:
    """Exact integer column sums; int64 when they fit, Python ints (object dtype) otherwise."""
    if z.shape[0] * max_entry <= _INT64_MAX:
        return z.sum(axis=0)
    lo = (z & 0xFFFFFFFF).sum(axis=0)  # each part < 2**32, n < 2**31 keeps both sums in int64
    hi = (z >> 32).sum(axis=0)
    return np.array([(int(high) << 32) + int(low) for high, low in zip(hi, lo, strict=True)], dtype=object)


def _prepare(values, modulus, max_entry, allow_wrap) -> tuple[np.ndarray, int, int]:
    modulus = _check_modulus(modulus)
    z = _check_values(values, modulus)
    if max_entry is None:
        m = modulus - 1
    else:
        m = check_int("max_entry", max_entry, low=0, high=modulus - 1)
        if z.size and int(z.max()) > m:
            raise ValueError(
                f"values must lie in [0, max_entry] = [0, {m}] (the declared bound); got max {int(z.max())}"
            )
    if not isinstance(allow_wrap, bool):
        raise ValueError(f"allow_wrap must be True or False; got {allow_wrap!r}")
    n = z.shape[0]
    if not allow_wrap and can_wrap(n, m, modulus):
        raise ValueError(
            f"modulus={modulus} lets the sum of n={n} entries in [0, {m}] wrap around "
            f"(n * max_entry = {n * m} >= modulus); the minimum safe modulus is "
            f"{modulus_for(n, m)}. Declare a smaller max_entry, enlarge modulus, or pass "
            f"allow_wrap=True to work with the modular sum deliberately."
        )
    return z, modulus, m


def secure_sum(
    values,
    *,
    modulus: int,
    max_entry: int | None = None,
    rng: np.random.Generator | int | None = None,
    allow_wrap: bool = False,
    neighbours: int | None = 1,
) -> np.ndarray:
    r"""The modular sum :math:`\sum_i Z_i \bmod M` that the server learns.

    The sum is computed the way the server computes it: from the masked reports
    of :func:`mask_reports`, summed modulo :math:`M`, so the masks cancel in this
    code path rather than being skipped.

    Parameters
    ----------
    values : array_like of int, shape (n, dim) or (n,)
        Client vectors, entries in :math:`[0, \text{max\_entry}]`.
    modulus : int
        :math:`M \in [2, 2^{62}]`.
    max_entry : int, optional
        The bound :math:`m` the clients' entries are *declared* to respect (a
        protocol parameter, never inferred from the data). Default
        :math:`M - 1`, i.e. nothing is promised beyond membership in
        :math:`\mathbb{Z}_M`.
    rng, neighbours
        As in :func:`pairwise_masks`.
    allow_wrap : bool
        If False (default) and :func:`can_wrap` says the declared bound lets the
        sum reach :math:`M`, raise instead of risking a silently wrong sum. Set it
        to True when the modular sum is what you want (signed encodings decoded
        with :func:`to_signed`, or a demonstration of wrapping; then prefer
        :func:`secure_sum_with_check`).

    Returns
    -------
    ndarray of int64, shape (dim,)

    Raises
    ------
    ValueError
        If a wrap is possible and ``allow_wrap`` is False (the message gives the
        minimum safe modulus), or for invalid input.

    Examples
    --------
    >>> secure_sum([[1, 2], [3, 4], [5, 6]], modulus=modulus_for(3, 6), max_entry=6, rng=0).tolist()
    [9, 12]
    """
    allow_wrap = check_bool("allow_wrap", allow_wrap)
    z, modulus, _ = _prepare(values, modulus, max_entry, allow_wrap)
    reports = mask_reports(z, modulus=modulus, rng=rng, neighbours=neighbours)
    return _modular_column_sum(reports, modulus)


@dataclass(frozen=True)
class SecureSumResult:
    """What the server learned, next to what the simulator knows.

    Attributes
    ----------
    modular_sum : ndarray of int64, shape (dim,)
        :math:`\\sum_i Z_i \\bmod M`, the server's view.
    true_sum : ndarray, shape (dim,)
        The integer sum (int64, or Python ints in an object array if it does not
        fit in int64). Known to the simulator only, never to a real server.
    wrapped : ndarray of bool, shape (dim,)
        ``true_sum >= modulus``: coordinates where the server's view is not the sum.
    modulus : int
        :math:`M`.
    min_safe_modulus : int
        :func:`modulus_for` ``(n, max_entry)`` for the declared bound.
    """

    modular_sum: np.ndarray
    true_sum: np.ndarray
    wrapped: np.ndarray
    modulus: int
    min_safe_modulus: int

    @property
    def any_wrapped(self) -> bool:
        """True if at least one coordinate wrapped around."""
        return bool(np.any(self.wrapped))


def secure_sum_with_check(
    values,
    *,
    modulus: int,
    max_entry: int | None = None,
    rng: np.random.Generator | int | None = None,
    allow_wrap: bool = False,
    neighbours: int | None = 1,
) -> SecureSumResult:
    r"""Like :func:`secure_sum`, but also report the true sum and whether it wrapped.

    A real server cannot know whether :math:`\sum_i Z_i \ge M`; the simulator can,
    and this function is how a chapter demonstrates a wrap without ever passing
    off a wrapped sum as the correct one.

    Examples
    --------
    >>> res = secure_sum_with_check([[3], [3], [3]], modulus=9, max_entry=3, allow_wrap=True, rng=0)
    >>> res.modular_sum.tolist(), res.true_sum.tolist(), res.wrapped.tolist(), res.min_safe_modulus
    ([0], [9], [True], 10)
    """
    allow_wrap = check_bool("allow_wrap", allow_wrap)
    z, modulus, m = _prepare(values, modulus, max_entry, allow_wrap)
    reports = mask_reports(z, modulus=modulus, rng=rng, neighbours=neighbours)
    modular = _modular_column_sum(reports, modulus)
    true = _exact_column_sum(z, m)
    if true.dtype == object:
        wrapped = np.array([int(t) >= modulus for t in true], dtype=bool)
    else:
        wrapped = true >= modulus
    return SecureSumResult(
        modular_sum=modular,
        true_sum=true,
        wrapped=wrapped,
        modulus=modulus,
        min_safe_modulus=modulus_for(z.shape[0], m),
    )


def to_signed(x, modulus: int) -> np.ndarray:
    r"""Map residues of :math:`\mathbb{Z}_M` to the centred range :math:`(-M/2, M/2]`.

    .. math:: \operatorname{signed}(x) = \begin{cases} x, & x \le M/2,\\ x - M, & x > M/2. \end{cases}

    If signed client entries are sent as :math:`z \bmod M` and the true sum lies
    in :math:`(-M/2, M/2]` (guaranteed by :func:`modulus_for_signed`), then
    ``to_signed(secure_sum(...), M)`` is the signed sum.

    Parameters
    ----------
    x : array_like of int
        Residues in :math:`[0, M)`, any shape.
    modulus : int
        :math:`M \in [2, 2^{62}]`.

    Returns
    -------
    ndarray of int64, same shape as ``x``

    Examples
    --------
    >>> to_signed([0, 1, 4, 5, 8], 9).tolist()
    [0, 1, 4, -4, -1]
    >>> to_signed([5], 10).tolist()     # M/2 itself stays positive
    [5]
    """
    modulus = _check_modulus(modulus)
    arr = check_array("x", x, integer=True, low=0, high=modulus - 1)
    return np.where(arr > modulus // 2, arr - modulus, arr)
