"""Count sketch compared with its peers (count-min, frequent items) on the same instances."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._rng import as_generator
from .._validation import check_array, check_int
from .coding import decode_sketches, sketch_items
from .hashing import MERSENNE_PRIME, draw_sketch_hashes

__all__ = ["PEER_SKETCHES", "PeerSketchResult", "compare_peer_sketches"]


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
      median, Algorithm 1 of Wu et al. 2023) and count-min
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
        In the order of :data:`fedfreq.sketch.PEER_SKETCHES`.

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
    memory_words = check_int("memory_words", memory_words, low=16, high=10**8, reason="every sketch is held in memory")
    rows = check_int("rows", rows, low=1, high=memory_words)
    top_k = check_int("top_k", top_k, low=1, high=d)
    repeats = check_int("repeats", repeats, low=1, high=10_000, reason="each repeat draws and fills every sketch")
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
