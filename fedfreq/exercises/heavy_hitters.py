"""Checker for the exercise on decomposing a range into tree nodes."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .._rng import as_generator
from ._result import CheckResult, StudentError, attempt, not_yet, passed

__all__ = ["check_decomposition"]


def check_decomposition(
    func: Callable[[int, int, int], Iterable[tuple[int, int]]],
    *,
    rng: np.random.Generator | int | None = 12345,
) -> CheckResult:
    r"""Self-check for the exercise on range decomposition.

    ``func(r, branching, levels)`` must return the greedy decomposition of the leaf
    range [0, r) of a tree with ``levels`` levels and ``branching`` children per node,
    as a list of ``(level, node)`` pairs (level 1 is below the root). Tested on 200
    random ``(r, branching, levels)`` (deterministic: no false fails): the nodes must
    tile [0, r) exactly and use at most β − 1 nodes per level. The message never shows
    a correct decomposition.

    Examples
    --------
    >>> from fedfreq.heavy_hitters import range_decomposition
    >>> print(check_decomposition(lambda r, b, L: range_decomposition(r, branching=b, levels=L)))
    PASS: every range was tiled exactly with at most (branching - 1) nodes per level
    """
    gen = as_generator(rng)
    for _ in range(200):
        b = int(gen.integers(2, 6))
        L = int(gen.integers(1, 5))
        r = int(gen.integers(0, b**L))
        try:
            parts = list(attempt(func, r, b, L))
            pairs = [(int(level), int(node)) for level, node in parts]
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"return a list of (level, node) pairs of integers (r={r}, branching={b}, levels={L})")
        covered: list[int] = []
        per_level: dict[int, int] = {}
        for level, node in pairs:
            if not (1 <= level <= L):
                return not_yet(f"level {level} is outside 1..{L} (r={r}, branching={b}, levels={L})")
            w = b ** (L - level)
            covered += range(node * w, (node + 1) * w)
            per_level[level] = per_level.get(level, 0) + 1
        if sorted(covered) != list(range(r)):
            return not_yet(f"the nodes do not tile [0, {r}) exactly for branching={b}, levels={L} (gaps or overlaps)")
        if any(c > b - 1 for c in per_level.values()):
            return not_yet(
                f"some level uses more than branching - 1 = {b - 1} nodes (r={r}, levels={L}): use coarser nodes first"
            )
    return passed("every range was tiled exactly with at most (branching - 1) nodes per level")
