"""Checkers for the exercises on count-sketch widths and the hybrid sketch decoder."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int
from ..sketch import (
    decode_sketches,
    draw_sketch_hashes,
    minimax_width,
    oracle_width,
    sketch_estimate,
    sketch_vector,
    zipf_frequencies,
)
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, not_yet, passed

__all__ = ["check_width_rule", "check_hybrid_decoder"]


def check_width_rule(
    rule: Callable[[np.ndarray, float], int],
    *,
    trials: int = 60,
    rng: np.random.Generator | int | None = 20260601,
) -> CheckResult:
    r"""Self-check for the chapter exercise on choosing a count-sketch width.

    The student writes ``rule(freqs, tau) -> width``. For several Zipf instances
    (:math:`d = 2000`) and tolerances, the checker runs ``trials`` independent count
    sketches with :math:`L = 10 \approx \ln(d/p)` rows at the proposed width and counts
    how often the ℓ∞ error exceeds τ. It passes if the failure rate is at most
    :math:`p = 0.1` up to four binomial standard errors at :math:`p` (a rule that is
    exactly (τ, 0.1)-correct fails one of the four instances with probability at most
    ``4 * one_sided_binomial_false_fail(0.1, 60, limit)`` ≈ 8e-4 at 60 trials), and if
    the width is not wasteful (at most 16 times the width of Eq. (2) with :math:`C = 1`,
    and never above the minimax width of Eq. (3) with :math:`C = 2`). A width outside
    the acceptable range gets the same message on either side, so the range cannot be
    found by bisection: measure your rule's failure rate yourself.

    Examples
    --------
    >>> check_width_rule(lambda f, tau: 1).passed
    False
    """
    trials = check_int("trials", trials, low=20, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    p = 0.1
    d = 2000
    for a in (1.2, 2.0):
        f = zipf_frequencies(d, a)
        for tau in (0.02, 0.005):
            try:
                w = check_int("width", attempt(rule, f.copy(), tau), low=1, high=10**6)
            except StudentError as err:
                return err.result
            except (TypeError, ValueError) as exc:
                return not_yet(f"your rule returned an invalid width: {exc}")
            outside = (
                f"for the Zipf instance with exponent {a} and tau={tau} your width is outside the acceptable "
                "range: either the l_inf error exceeds tau in more than a fraction 0.1 of sketches, or the "
                "width is far larger than the instance needs. Simulate your rule's failure rate and "
                "compare it with what the instance's tail predicts."
            )
            if w > 16 * oracle_width(f, tau) or w > minimax_width(tau, constant=2.0):
                return not_yet(outside)
            fails = 0
            for _ in range(trials):
                est = sketch_estimate(f[None, :], width=w, rows=10, design="shared", rng=gen)
                fails += bool(np.max(np.abs(est - f)) > tau)
            rate = fails / trials
            tol = p + 4 * math.sqrt(p * (1 - p) / trials)
            if rate > tol:
                return not_yet(outside)
    return passed("your widths are (tau, 0.1)-correct on every test instance and not wasteful")


def check_hybrid_decoder(
    decoder: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    *,
    rng: np.random.Generator | int | None = 20260602,
) -> CheckResult:
    r"""Self-check for the chapter exercise on decoding a hybrid sketch.

    The student writes ``decoder(sketches, buckets, signs) -> estimate`` where
    ``sketches`` has shape (M, L, W), ``buckets`` shape (L, d) (shared bucket hashes)
    and ``signs`` shape (M, L, d) (fresh sign hashes), and returns the (d,) estimate
    of Algorithm 2. The checker compares with :func:`fedfreq.sketch.decode_sketches` on random
    instances (tolerance 1e-9; deterministic: no false fails) and reports the first mismatch without the answer.

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
            got = np.asarray(attempt(decoder, S.copy(), buckets.copy(), signs.copy()), dtype=float)
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"expected an estimate of {d} numbers")
        if got.shape != (d,):
            return not_yet(f"expected an estimate of shape ({d},); got {got.shape}")
        if not np.allclose(got, want, atol=1e-9, rtol=0):
            rows_idx = np.arange(L)[:, None]
            swapped = np.mean(np.median(signs * S[:, rows_idx, buckets], axis=1), axis=0)
            if M > 1 and np.allclose(got, swapped, atol=1e-9):
                hint = "check the order of the two aggregations (over rounds and over rows)"
            else:
                hint = "check how a row's estimate reads the bucket and applies the sign of its round"
            return not_yet(f"mismatch with M={M}, L={L}, W={W}: {hint}")
    return passed("your decoder reproduces Algorithm 2 on every test instance")
