"""Checkers for the exercises on count-sketch widths, the hybrid sketch decoder and the noise
of the private hybrid sketch."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import accounting
from .._rng import as_generator
from .._validation import check_int, check_real
from ..sketch import (
    decode_sketches,
    dp_sketch_sigma,
    draw_sketch_hashes,
    flat_frequencies,
    geometric_frequencies,
    minimax_width,
    oracle_width,
    sketch_estimate,
    sketch_sensitivity,
    sketch_vector,
    zipf_frequencies,
)
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed, student_int

__all__ = ["check_width_rule", "check_hybrid_decoder", "check_smallest_width", "check_dp_sketch_sigma"]


@checker
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
                w = student_int(attempt(rule, f.copy(), tau), "a width", low=1, high=10**6)
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


@checker
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


def _smallest_width(f: np.ndarray, tau: float) -> tuple[int, np.ndarray]:
    """Smallest W >= 1 with E(W) <= tau, and tail[k] = sum_{i>k} (f*_i)^2 for k = 0..d."""
    s = np.sort(f)[::-1] ** 2
    tail = np.concatenate([np.cumsum(s[::-1])[::-1], [0.0]])
    widths = np.arange(1, f.size + 1)
    ok = tail[1:] <= tau**2 * widths
    return int(widths[np.argmax(ok)]), tail


def _is_smallest(w: int, tail: np.ndarray, tau: float) -> bool:
    """``w`` meets E(w) <= tau and ``w - 1`` does not (up to a relative 1e-9 for ties)."""
    d = tail.size - 1
    meets = w >= d or tail[w] <= tau**2 * w * (1 + 1e-9)
    below_fails = w == 1 or tail[min(w - 1, d)] > tau**2 * (w - 1) * (1 - 1e-9)
    return bool(meets and below_fails)


@checker
def check_smallest_width(
    width: Callable[[np.ndarray, float], int],
    *,
    rng: np.random.Generator | int | None = 20260603,
) -> CheckResult:
    r"""Self-check for the exercise on the smallest width with :math:`E(W) \le \tau`.

    The student writes ``width(freqs, tau) -> W``: the smallest integer :math:`W \ge 1`
    with :math:`E(W) = \sqrt{\frac1W\sum_{i>W}(f^*_i)^2} \le \tau`, where
    :math:`f^*` is ``freqs`` sorted in non-increasing order (Wu et al. 2023, proof of
    Corollary 2.3). The checker evaluates it on twelve instances — Zipf, geometric and
    flat vectors, and random Dirichlet vectors in random order drawn from ``rng`` — and
    compares with the exact minimum (ties within a relative 1e-9 are accepted either
    way). Deterministic: a correct function never fails. A wrong width gets the same
    message whether it is too small or too large.

    Examples
    --------
    >>> check_smallest_width(lambda freqs, tau: 1).passed
    False
    """
    gen = as_generator(rng)
    cases: list[tuple[np.ndarray, float]] = [
        (zipf_frequencies(2000, 1.1), 0.01),
        (zipf_frequencies(2000, 1.1), 0.002),
        (zipf_frequencies(2000, 2.0), 0.003),
        (geometric_frequencies(60), 0.001),
        (flat_frequencies(300), 0.0123),
        (flat_frequencies(300), 0.5),
    ]
    for conc, tau in ((0.05, 0.02), (0.3, 0.01), (1.0, 0.004), (3.0, 0.002), (0.1, 0.05), (1.0, 0.2)):
        cases.append((gen.dirichlet(np.full(int(gen.integers(50, 800)), conc)), tau))
    got: list[int] = []
    for i, (f, tau) in enumerate(cases, 1):
        try:
            got.append(student_int(attempt(width, f.copy(), tau), f"instance {i}: a width", low=1, high=10**9))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError) as exc:
            return not_yet(f"instance {i}: a width is one positive integer ({exc})")
    tails = [_smallest_width(f, tau)[1] for f, tau in cases]
    wrong = [i for i, (w, t, (_, tau)) in enumerate(zip(got, tails, cases, strict=True)) if not _is_smallest(w, t, tau)]
    if not wrong:
        return passed(f"your width is the smallest with E(W) <= tau on all {len(cases)} instances")
    i = wrong[0]
    where = (
        f"instance {i + 1} of {len(cases)} (d = {cases[i][0].size}, tau = {cases[i][1]:g}): your width is not "
        "the smallest W with E(W) <= tau"
    )

    # typical slips, named only when the whole function behaves that way (so that no single
    # number can be probed for a hint)
    def everywhere(tail_of: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> bool:
        return all(_is_smallest(w, tail_of(f, t), tau) for w, t, (f, tau) in zip(got, tails, cases, strict=True))

    if everywhere(lambda f, t: np.concatenate([t[:1], t[:-1]])):
        return not_yet(f"{where}. Check where the tail starts: E(W) sums the entries ranked strictly after W.")
    if everywhere(lambda f, t: np.concatenate([np.cumsum((f**2)[::-1])[::-1], [0.0]])):
        return not_yet(f"{where}. Your width depends on the order of the entries: E(W) uses the sorted frequencies.")
    if all(w == oracle_width(f, tau) for w, (f, tau) in zip(got, cases, strict=True)):
        return not_yet(f"{where}. Your width is the bracket of Eq. (2), an upper bound; find the smallest one.")
    return not_yet(f"{where}. Check the definition of E(W) and that no smaller width also qualifies.")


@checker
def check_dp_sketch_sigma(sigma: Callable[[float, float, int, int, int], float]) -> CheckResult:
    r"""Self-check for the exercise on calibrating the noise of the private hybrid sketch.

    The student writes ``sigma(epsilon, delta, rows, n, participations) -> float``, the
    standard deviation of the Gaussian noise added to every entry of every round's
    *normalised* sketch (counts divided by the round size ``n``) so that the release of
    all rounds is :math:`(\varepsilon, \delta)`-DP under add/remove-one, when each client
    takes part in ``participations`` rounds (Wu et al. 2023, Theorem 4.1 with its proof's
    :math:`1/n`). On eleven designs with :math:`\varepsilon < 1`, :math:`\delta \le 10^{-3}`
    the answer passes if the exact privacy profile of the Gaussian mechanism
    (:func:`fedfreq.accounting.gaussian_delta`) meets δ and the noise is at most twice
    the smallest valid one. Deterministic: a correct
    function never fails. Too much and too little noise get the same message; when one
    parameter alone breaks the answer, the message names it.

    Examples
    --------
    >>> check_dp_sketch_sigma(lambda eps, delta, rows, n, k: 1.0).passed
    False
    """
    base = (0.5, 1e-6, 5, 1000, 1)
    cases = [
        base,
        (0.5, 1e-6, 5, 20, 1),
        (0.5, 1e-6, 5, 100_000, 1),
        (0.5, 1e-6, 12, 1000, 1),
        (0.5, 1e-6, 1, 1000, 1),
        (0.5, 1e-6, 5, 1000, 4),
        (0.5, 1e-6, 5, 1000, 10),
        (0.1, 1e-9, 5, 1000, 1),
        (0.9, 1e-3, 5, 1000, 1),
        (0.3, 1e-4, 8, 500, 2),
        (0.99, 1e-12, 16, 50_000, 3),
    ]
    names = ("epsilon", "delta", "rows", "n", "participations")
    wrong = []
    for i, (eps, delta, L, n, k) in enumerate(cases, 1):
        try:
            got = check_real("sigma", attempt(sigma, eps, delta, L, n, k), low=0.0, low_open=True)
        except StudentError as err:
            return err.result
        except (TypeError, ValueError) as exc:
            return not_yet(f"design {i}: a noise standard deviation is one positive number ({exc})")
        sens = sketch_sensitivity(rows=L, n=n) * math.sqrt(k)
        smallest = dp_sketch_sigma(eps, delta, rows=L, n=n, participations=k)
        valid = accounting.gaussian_delta(eps, sensitivity=sens, sigma=got) <= delta * (1 + 1e-6)
        if not (valid and got <= 2 * smallest):
            wrong.append(i - 1)
    if not wrong:
        return passed(f"your noise is (epsilon, delta)-DP and not wasteful in all {len(cases)} designs")
    eps, delta, L, n, k = cases[wrong[0]]
    where = (
        f"design {wrong[0] + 1} of {len(cases)} (epsilon={eps}, delta={delta:g}, rows={L}, n={n}, "
        f"participations={k}): your sigma is outside the acceptable range (either the release is not "
        "(epsilon, delta)-DP or the noise is more than twice what is needed)"
    )
    changed = [[nm for nm, a, b in zip(names, base, cases[j], strict=True) if a != b] for j in wrong]
    singles = {c[0] for c in changed if len(c) == 1}
    if 0 not in wrong and len(singles) == 1:
        name = singles.pop()
        return not_yet(f"{where}. It is right at the base design, so check how sigma scales with {name}.")
    return not_yet(f"{where}. Check the l2 sensitivity of all released sketches and the Gaussian calibration.")
