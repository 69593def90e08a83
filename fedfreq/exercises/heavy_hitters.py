"""Checkers for the exercises of the chapter on heavy hitters: range decomposition and the
accounting of L private histograms (optimal composition, the misprinted advanced-composition bound)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from .._rng import as_generator
from .._validation import check_real
from ..heavy_hitters import composition_advanced_paper, optimal_composition_delta
from ._result import CheckResult, StudentError, attempt, checker, not_yet, passed, student_int

__all__ = ["check_decomposition", "check_optimal_composition", "check_composition_counterexample"]


@checker
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
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def decompose(r, branching, levels):
    ...     return []
    >>> check_decomposition(decompose).passed
    False
    """
    gen = as_generator(rng)
    for _ in range(200):
        b = int(gen.integers(2, 6))
        L = int(gen.integers(1, 5))
        r = int(gen.integers(0, b**L))
        try:
            parts = list(attempt(func, r, b, L))
            pairs = [
                (
                    student_int(level, "a level", low=-(2**62), high=2**62),
                    student_int(node, "a node", low=-(2**62), high=2**62),
                )
                for level, node in parts
            ]
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


def _scalar(value) -> float | None:
    """``value`` as a finite float, or None if it is not one finite number."""
    if isinstance(value, bool) or np.ndim(value) != 0:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


@checker
def check_optimal_composition(
    func: Callable[[float, float, int, float], float],
    *,
    rng: np.random.Generator | int | None = 20020905,
) -> CheckResult:
    r"""Self-check for the exercise on the optimal composition bound.

    ``func(epsilon, delta, levels, total_epsilon)`` must return the smallest δ such
    that *every* composition of ``levels`` (ε, δ)-DP mechanisms is
    (``total_epsilon``, δ)-DP, the optimal composition theorem of Kairouz, Oh &
    Viswanath (2015). The attempt returns one float in [0, 1].

    The checker first tests two properties (a value in [0, 1]; no increase as
    ``total_epsilon`` grows), then compares with
    :func:`fedfreq.heavy_hitters.optimal_composition_delta` on 12 fixed and 36 random
    cases (ε in [0.02, 1], L up to 150, δ = 0 and δ > 0, ``total_epsilon`` from 0 to
    beyond Lε) to a relative tolerance of 1e-6 (plus 1e-12 absolute). The check is exact:
    a correct function never fails, whatever the seed. A wrong value gets the same
    message on either side of the answer.

    Examples
    --------
    >>> def basic_only(epsilon, delta, levels, total_epsilon):
    ...     return levels * delta if total_epsilon >= levels * epsilon else 1.0
    >>> print(check_optimal_composition(basic_only))  # doctest: +ELLIPSIS
    NOT YET: at epsilon=0.1, delta=0, levels=10, total_epsilon=0.6 your delta is not the worst case ...
    """
    gen = as_generator(rng)
    fixed = [(0.1, 0.0, 10, 0.6), (0.5, 0.0, 1, 0.5), (0.5, 0.0, 1, 0.2), (0.25, 0.0, 4, 0.0), (1.0, 0.0, 7, 3.0)]
    fixed += [(1.0, 0.0, 30, 4.5), (0.05, 0.0, 100, 1.5), (0.3, 1e-6, 5, 0.9), (0.1, 1e-8, 10, 1.2)]
    fixed += [(0.2, 1e-3, 3, 0.0), (0.05, 1e-9, 100, 2.26), (0.5, 1e-4, 12, 6.5)]
    cases = list(fixed)
    for _ in range(36):
        e = float(np.round(gen.uniform(0.02, 1.0), 3))
        L = int(gen.integers(1, 151))
        d = float(gen.choice([0.0, 1e-10, 1e-6, 1e-3]))
        t = float(np.round(gen.uniform(0.0, 1.1 * L * e), 3))
        cases.append((e, d, L, t))
    try:
        # properties first: a probability, and monotone in total_epsilon
        e, d, L = 0.2, 1e-6, 20
        seq = []
        for t in (0.0, 1.0, 2.0, 3.0, 4.0):
            v = _scalar(attempt(func, e, d, L, t))
            if v is None:
                return not_yet("your function must return one finite number")
            if not (-1e-12 <= v <= 1.0 + 1e-12):
                return not_yet(
                    f"at epsilon={e}, delta={d:.0e}, levels={L}, total_epsilon={t} your value is not a probability"
                )
            seq.append(v)
        if any(b > a + 1e-12 for a, b in zip(seq, seq[1:], strict=False)):
            return not_yet("your delta grows with total_epsilon; a larger epsilon can never need a larger delta")
        wrong_zero, wrong_pos = None, None
        for e, d, L, t in cases:
            v = _scalar(attempt(func, e, d, L, t))
            if v is None:
                return not_yet("your function must return one finite number")
            ref = float(optimal_composition_delta(e, d, L, t))
            if abs(v - ref) > 1e-6 * ref + 1e-12:
                if d == 0.0 and wrong_zero is None:
                    wrong_zero = (e, d, L, t)
                if d > 0.0 and wrong_pos is None:
                    wrong_pos = (e, d, L, t)
    except StudentError as err:
        return err.result
    if wrong_zero is not None:
        e, d, L, t = wrong_zero
        return not_yet(
            f"at epsilon={e:g}, delta=0, levels={L}, total_epsilon={t:g} your delta is not the worst case over "
            "all (epsilon, delta)-DP mechanisms: check the binomial weights and which terms enter the positive part"
        )
    if wrong_pos is not None:
        e, d, L, t = wrong_pos
        return not_yet(
            f"right for delta = 0, but not at epsilon={e:g}, delta={d:.0e}, levels={L}, total_epsilon={t:g}: "
            "check how the per-mechanism delta enters, both outside and inside the sum"
        )
    return passed(f"matches the optimal composition bound in all {len(cases)} cases (relative 1e-6)")


@checker
def check_composition_counterexample(find: Callable[[], tuple[float, float, int]]) -> CheckResult:
    r"""Self-check for the find-the-error exercise on the advanced-composition bound.

    The student writes ``find() -> (epsilon, delta, levels)``, a search that returns a
    per-level budget with 0 < ε < 1, 0 < δ and 2 · levels · δ < 1, and a number of
    levels (an integer in [1, 100000]) at which the bound printed by Bharadwaj & Cormode
    (2022, Section 4.1),
    :math:`(L\varepsilon^2 + \varepsilon\sqrt{L\log(1/(\delta L))},\ 2L\delta)`, fails:
    some composition of ``levels`` (ε, δ)-DP mechanisms is *not* private at that
    level. The checker computes the worst case exactly
    (:func:`fedfreq.heavy_hitters.optimal_composition_delta`, Kairouz, Oh & Viswanath
    2015) at the printed ε and compares it with the printed δ. Exact, so no false fails.
    A point outside the allowed range is feedback (a failing result naming the entry),
    not an error.

    Examples
    --------
    >>> print(check_composition_counterexample(lambda: (0.5, 1e-6, 2)))  # doctest: +ELLIPSIS
    NOT YET: at this point the printed bound holds: ...
    """
    try:
        point = attempt(find)
    except StudentError as err:
        return err.result
    try:
        e_raw, d_raw, L_raw = point
    except (TypeError, ValueError):
        return not_yet("find() must return three numbers: (epsilon, delta, levels)")
    try:
        e = check_real("epsilon", e_raw, low=0.0, high=1.0, low_open=True, high_open=True)
        L = student_int(L_raw, "levels", low=1, high=100_000)
        d = check_real("delta", d_raw, low=0.0, high=1.0, low_open=True, high_open=True)
    except StudentError as err:
        return err.result
    except ValueError as exc:
        return not_yet(f"the point returned by find() is outside the exercise's range: {exc}")
    if 2 * L * d >= 1:
        return not_yet("the point returned by find() needs 2 * levels * delta < 1 (the printed bound's delta)")
    eps_printed, delta_printed = composition_advanced_paper(e, d, L)
    need = optimal_composition_delta(e, d, L, eps_printed)
    if need > delta_printed * (1.0 + 1e-9):
        return passed(
            f"a counterexample: at the printed epsilon = {eps_printed:.4g} the worst-case composition needs "
            f"delta = {need:.3g}, more than the printed 2 L delta = {delta_printed:.3g}"
        )
    return not_yet(
        "at this point the printed bound holds: no composition of these mechanisms needs more than 2 L delta at "
        "the printed epsilon. Compare the printed formula with the theorem it cites, term by term, and look where "
        "it promises more"
    )
