"""Synthetic frequency vectors and client samples used by the sketch experiments."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._rng import as_generator
from .._validation import check_array, check_int, check_real
from .hashing import MAX_DOMAIN, _check_items, _check_rounds_of_items

_DENSE = "a dense frequency vector of d entries must fit in memory"
#: Largest number of simulated clients (their items are kept in memory, 8 bytes each).
MAX_CLIENTS = 10**9

__all__ = [
    "zipf_frequencies",
    "geometric_frequencies",
    "log_zipf_frequencies",
    "flat_frequencies",
    "sample_client_items",
    "split_rounds",
    "round_frequencies",
]


def _normalise(v: np.ndarray) -> np.ndarray:
    return v / v.sum()


def zipf_frequencies(d: int, a: float) -> np.ndarray:
    r"""Zipf frequencies :math:`f_i \propto i^{-a}`, :math:`i = 1..d` (Wu et al. 2023, Cor. 2.4(2), Fig. 2).

    Examples
    --------
    >>> zipf_frequencies(3, 1.0).round(4).tolist()
    [0.5455, 0.2727, 0.1818]
    """
    d = check_int("d", d, low=1, high=MAX_DOMAIN, reason=_DENSE)
    a = check_real("a", a, low=0.0)
    return _normalise(np.arange(1, d + 1, dtype=float) ** (-a))


def geometric_frequencies(d: int) -> np.ndarray:
    r"""Geometric frequencies :math:`f_i \propto 2^{-i}`, :math:`i=1..d` (Wu et al. 2023, Cor. 2.4(1)).

    Examples
    --------
    >>> geometric_frequencies(2).round(4).tolist()
    [0.6667, 0.3333]
    """
    d = check_int("d", d, low=1, high=MAX_DOMAIN, reason=_DENSE)
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
    d = check_int("d", d, low=1, high=MAX_DOMAIN, reason=_DENSE)
    b = check_real("b", b, low=0.0, high=1000.0)
    i = np.arange(2, d + 2, dtype=float)
    # in log space: log(i)**b underflows or overflows for large b
    logw = -np.log(i) - b * np.log(np.log(i))
    return _normalise(np.exp(logw - logw.max()))


def flat_frequencies(n: int, d: int | None = None) -> np.ndarray:
    r"""The flat instance of Cor. 2.4(4): :math:`f_i = 10/n` for :math:`i \le n/10`, zero beyond.

    ``n`` must be a multiple of 10; ``d`` (default :math:`n/10`) pads with zeros.

    Examples
    --------
    >>> flat_frequencies(30).tolist()
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """
    n = check_int("n", n, low=10, high=10 * MAX_DOMAIN, reason=_DENSE)
    if n % 10:
        raise ValueError(f"n must be a multiple of 10; got {n}")
    k = n // 10
    d = k if d is None else check_int("d", d, low=k, high=MAX_DOMAIN, reason=_DENSE)
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
    n = check_int("n", n, low=1, high=MAX_CLIENTS, reason="one item per client is kept in memory")
    counts = as_generator(rng).multinomial(n, f / f.sum())
    return np.repeat(np.arange(f.size), counts)


def split_rounds(items, rounds: int, *, rng: np.random.Generator | int | None = None) -> list[np.ndarray]:
    r"""Shuffle clients and split them into ``rounds`` groups of (nearly) equal size.

    Examples
    --------
    >>> [len(r) for r in split_rounds(np.arange(10), 3, rng=0)]
    [4, 3, 3]
    """
    x = check_array("items", items, ndim=1, integer=True, low=0, min_size=1)
    rounds = check_int("rounds", rounds, low=1, high=x.size)
    perm = as_generator(rng).permutation(x)
    return list(np.array_split(perm, rounds))


def round_frequencies(round_items: Sequence, d: int) -> np.ndarray:
    r"""Local frequency vectors :math:`f^{(m)}` of the rounds, shape (M, d).

    Examples
    --------
    >>> round_frequencies([[0, 1], [1, 1]], 3).tolist()
    [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]
    """
    d = check_int("d", d, low=1, high=MAX_DOMAIN, reason=_DENSE)
    rounds = _check_rounds_of_items(round_items)
    out = np.empty((len(rounds), d))
    for m, x in enumerate(rounds):
        x = _check_items(x, d, name=f"round_items[{m}]")
        if x.size == 0:
            raise ValueError(f"round_items[{m}] must contain at least one client")
        out[m] = np.bincount(x, minlength=d) / x.size
    return out
