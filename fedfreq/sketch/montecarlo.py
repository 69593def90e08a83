r"""Monte Carlo over many hash draws: the three multi-round designs on identical rounds
(Wu et al. 2023, Figure 2), with each draw's hashes computed once and shared by every
width, design and frequency vector, and repeats spread over processes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from .._rng import as_generator
from .._validation import check_array, check_int
from ..scale import progress
from .coding import _median_rows
from .hashing import DESIGNS, MAX_ROUNDS, MAX_ROWS, MERSENNE_PRIME, draw_sketch_hashes

__all__ = ["identical_rounds_errors"]

#: Largest number of table entries (rounds x rows x d) of one draw: 8 bytes each.
_MAX_TABLE = 10**8
#: Largest number of repeats of one call.
_MAX_REPS = 10**7
#: Rounds per sign pattern of the hybrid decoder (2^5 = 32 patterns per row and bucket).
_GROUP = 5


def identical_rounds_errors(
    frequencies,
    *,
    widths,
    rows: int,
    rounds: int,
    reps: int = 1,
    rng: np.random.Generator | int | None = None,
    workers: int = 1,
) -> np.ndarray:
    r""":math:`\ell_\infty` errors of the shared, fresh and hybrid sketches on identical rounds.

    Each frequency vector :math:`f` is the local frequency vector of all :math:`M` rounds,
    so :math:`f` is also the target (Wu et al. 2023, Figure 2). Repeat :math:`r` draws
    one set of fresh hashes (``draw_sketch_hashes(width=1, rows=rows, rounds=rounds,
    design="fresh", rng=children[r])`` with ``children = rng.spawn(reps)``) and tabulates
    it once (:meth:`SketchHashes.tabulate`). Every width reduces the same bucket
    polynomials modulo :math:`W` (:meth:`HashTables.with_width`), the shared design uses
    round 0's hashes and the hybrid design round 0's buckets with every round's signs
    (:meth:`HashTables.as_design`), and every frequency vector is sketched with them: the
    errors of one repeat are those of :func:`sketch_estimate` with ``hashes=`` these tables
    (up to rounding), and comparisons between widths, designs and vectors use common
    random numbers.

    The computation uses that the rounds are identical. A fresh round is a one-round
    sketch of :math:`f`; the shared sketch is round 0's. For the hybrid sketch, the items
    of one bucket whose signs agree in a group of five rounds share their decoded value,
    so each row is summed over the :math:`2^5` sign patterns of a group instead of over
    the rounds. A width :math:`W` that divides another width :math:`B` of the list is read
    from the width-:math:`B` sketch, its bucket :math:`b` folded to :math:`b \bmod W`
    (since :math:`(g \bmod B) \bmod W = g \bmod W`), so one pass over the items serves
    both.

    Parameters
    ----------
    frequencies : array_like, shape (k, d)
        Non-negative frequency vectors, one per row.
    widths : array_like of int, shape (w,)
        Widths :math:`W \ge 1`.
    rows, rounds : int
        :math:`L` and :math:`M`.
    reps : int
        Number of independent hash draws.
    rng : Generator, int or None
        Spawns one independent stream per repeat (``numpy.random.Generator.spawn``),
        so the result does not depend on ``workers``.
    workers : int
        Processes to use (1: run here). At full scale the repeats show a progress bar.

    Returns
    -------
    ndarray, shape (reps, k, 3, w)
        ``out[r, i, j, v]`` is :math:`\max_t |\hat f_t - f_t|` in repeat ``r`` for
        ``frequencies[i]``, design ``DESIGNS[j]`` and width ``widths[v]``.

    Examples
    --------
    >>> f = np.array([[0.5, 0.25, 0.125, 0.125]])
    >>> err = identical_rounds_errors(f, widths=[2, 64], rows=3, rounds=4, reps=2, rng=0)
    >>> err.shape
    (2, 1, 3, 2)
    >>> bool(np.all(err[:, :, :, 1] < 1e-12))  # 64 buckets: no collisions here
    True
    """
    fs = check_array("frequencies", frequencies, ndim=2, low=0.0, min_size=1)
    ws = check_array("widths", widths, ndim=1, integer=True, low=1, high=MERSENNE_PRIME - 1, min_size=1)
    rows = check_int("rows", rows, low=1, high=MAX_ROWS, reason="each row is a hash function drawn and applied")
    rounds = check_int("rounds", rounds, low=1, high=MAX_ROUNDS, reason="each round draws its own hashes")
    reps = check_int("reps", reps, low=1, high=_MAX_REPS, reason="the errors of every repeat are returned")
    workers = check_int("workers", workers, low=1, high=256, reason="one process per worker")
    if rounds * rows * fs.shape[1] > _MAX_TABLE:
        raise ValueError(
            f"rounds * rows * d must be at most {_MAX_TABLE} (the hash tables of one draw); "
            f"got {rounds} * {rows} * {fs.shape[1]}"
        )
    children = as_generator(rng).spawn(reps)
    args: _Args = (fs, ws, rows, rounds)
    desc = f"{reps} hash draws x {len(ws)} widths x 3 designs (identical rounds)"
    if workers == 1 or reps == 1:
        results = [_one_draw(*args, g) for g in progress(children, desc=desc, total=reps)]
    else:
        results = list(progress(_in_processes(args, children, workers), desc=desc, total=reps))
    return np.stack(results)


_Args = tuple[np.ndarray, np.ndarray, int, int]  # frequencies, widths, rows, rounds


def _in_processes(args: _Args, children: list, workers: int) -> Iterator[np.ndarray]:
    """Each repeat's errors, in order, computed by ``workers`` processes."""
    n_chunks = min(len(children), 50 * workers)  # small tasks: an even load and a live progress bar
    chunks = [children[c[0] : c[-1] + 1] for c in np.array_split(np.arange(len(children)), n_chunks)]
    context = multiprocessing.get_context("spawn")  # no fork of a threaded parent (a kernel)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_one_thread) as pool:
        for block in pool.map(_draws, [args] * len(chunks), chunks):
            yield from block


def _one_thread() -> None:
    """Worker initializer: one BLAS thread per process (the processes share the cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scipy's usual installs
        return
    threadpool_limits(1)


def _draws(args: _Args, gens: list) -> list[np.ndarray]:
    return [_one_draw(*args, g) for g in gens]


def _one_draw(fs: np.ndarray, ws: np.ndarray, L: int, M: int, gen: np.random.Generator) -> np.ndarray:
    """The (k, 3, w) errors of one hash draw (see :func:`identical_rounds_errors`)."""
    k, d = fs.shape
    t = draw_sketch_hashes(width=1, rows=L, rounds=M, design="fresh", rng=gen).tabulate(d)
    neg = t.signs < 0  # (M, L, d)
    values = t.bucket_values  # (M, L, d) bucket polynomials, reduced per width below
    ftile = [np.tile(f, L) for f in fs]  # weights for L stacked rows
    row_off = np.arange(L)[:, None]
    groups = [(s, min(s + _GROUP, M)) for s in range(0, M, _GROUP)]
    patterns = []  # per group: (L, d) sign pattern of each item, bit m - s set if sigma^(m) = -1
    pattern_signs = []  # per group: (2^g, g) sign of round m in pattern p
    for s, e in groups:
        p = np.zeros((L, d), dtype=np.intp)
        for m in range(s, e):
            p |= neg[m].astype(np.intp) << (m - s)
        patterns.append(p)
        bits = (np.arange(2 ** (e - s))[:, None] >> np.arange(e - s)) & 1
        pattern_signs.append(1.0 - 2.0 * bits)

    out = np.empty((k, len(DESIGNS), ws.size))
    i_shared, i_fresh, i_hybrid = (DESIGNS.index(x) for x in ("shared", "fresh", "hybrid"))
    code = np.empty((L, d), dtype=np.intp)
    dec = np.empty((L, d))
    work = np.empty((3, d))
    acc = np.empty((L, d))
    hyb_idx = [np.empty((L, d), dtype=np.intp) for _ in groups]
    for B, served in _base_widths(ws).items():
        # Every width W served by B divides B, so g mod W = (g mod B) mod W: the sketch of
        # width W is the width-B sketch with its buckets folded modulo W, and the items can
        # be read through their width-B codes. One pass over the items serves them all.
        fresh = np.zeros((len(served), k, d))
        for m in range(M):
            # fresh round m (round 0 is also the shared sketch): code 2 (B l + h(i)) + [sigma(i) < 0]
            _buckets_into(values[m], B, row_off, code)
            code <<= 1
            code += neg[m]
            flat = code.ravel()
            for i in range(k):
                U = np.bincount(flat, weights=ftile[i], minlength=2 * B * L).reshape(L, B, 2)
                sketch_b = U[..., 0] - U[..., 1]  # (L, B): the round's sketch at width B
                for j, (v, W) in enumerate(served):
                    signed = np.empty((L, B, 2))
                    signed[..., 0] = np.tile(_fold(sketch_b, W), (1, B // W))
                    signed[..., 1] = -signed[..., 0]
                    np.take(signed, flat, out=dec.ravel(), mode="clip")
                    med = _median_into(dec, work)
                    fresh[j, i] += med
                    if m == 0:
                        out[i, i_shared, v] = _linf(med, fs[i], work[1])
        for j, (v, _) in enumerate(served):
            for i in range(k):
                fresh[j, i] /= M
                out[i, i_fresh, v] = _linf(fresh[j, i], fs[i], work[1])
        # hybrid: shared buckets h(i) = g^(0)(i) mod B, index (B l + h(i)) 2^g + pattern
        _buckets_into(values[0], B, row_off, code)
        for (s, e), p, idx in zip(groups, patterns, hyb_idx, strict=True):
            np.left_shift(code, e - s, out=idx)
            idx += p
        for i in range(k):
            rounds_b = []  # per group: (L, B, g), the round sketches S^(m)[l, b] at width B
            for (s, e), idx, sg in zip(groups, hyb_idx, pattern_signs, strict=True):
                n_pat = 2 ** (e - s)
                U = np.bincount(idx.ravel(), weights=ftile[i], minlength=L * B * n_pat)
                rounds_b.append((U.reshape(L * B, n_pat) @ sg).reshape(L, B, e - s))
            for v, W in served:
                acc.fill(0.0)
                for idx, sg, rb in zip(hyb_idx, pattern_signs, rounds_b, strict=True):
                    decoded = _fold(rb, W) @ sg.T  # (L, W, 2^g): sum_m sigma_p^(m) S^(m)[l, b]
                    np.take(np.tile(decoded, (1, B // W, 1)), idx, out=dec, mode="clip")
                    acc += dec
                acc /= M
                out[i, i_hybrid, v] = _linf(_median_into(acc, work), fs[i], work[1])
    return out


def _base_widths(ws: np.ndarray) -> dict[int, list[tuple[int, int]]]:
    """Group the widths by the largest width they divide: {B: [(index, W), ...]}."""
    out: dict[int, list[tuple[int, int]]] = {}
    widths = ws.tolist()
    for v, W in enumerate(widths):
        B = max(x for x in widths if x % W == 0)
        out.setdefault(B, []).append((v, W))
    return out


def _fold(sketch: np.ndarray, W: int) -> np.ndarray:
    """A width-B sketch (L, B, ...) folded to width W (W divides B): bucket b' goes to b' mod W."""
    L, B = sketch.shape[:2]
    return sketch.reshape(L, B // W, W, *sketch.shape[2:]).sum(axis=1)


def _buckets_into(values: np.ndarray, W: int, row_off: np.ndarray, out: np.ndarray) -> None:
    """``out = values mod W + W l``: flat indices into an (L, W) sketch (floor division is
    the fast integer division of numpy, so v - W (v // W) beats np.remainder)."""
    np.floor_divide(values, W, out=out)
    np.multiply(out, -W, out=out)
    np.add(out, values, out=out)
    out += W * row_off


def _median_into(x: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Median over the rows of ``x`` (L, d); for L = 5 without new arrays (into ``work[0]``)."""
    if x.shape[0] != 5:
        return _median_rows(x)
    a, b, c, e, g = x
    lo, hi, t = work
    np.minimum(a, b, out=lo)
    np.minimum(c, e, out=t)
    np.maximum(lo, t, out=lo)  # the middle two of (a, b, c, e) are lo <= hi
    np.maximum(a, b, out=hi)
    np.maximum(c, e, out=t)
    np.minimum(hi, t, out=hi)
    np.maximum(g, lo, out=t)
    np.minimum(t, hi, out=t)
    np.minimum(g, lo, out=lo)
    np.maximum(lo, t, out=lo)  # median of (g, lo, hi)
    return lo


def _linf(est: np.ndarray, f: np.ndarray, buf: np.ndarray) -> float:
    np.subtract(est, f, out=buf)
    np.abs(buf, out=buf)
    return float(buf.max())
