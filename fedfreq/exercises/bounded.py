"""Checkers for the exercises on bounded domains: the exact error of Algorithm 1 and the
private threshold of Algorithm 2 (Liu et al. 2023)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import integrate, stats

from .._rng import as_generator
from .._validation import check_int
from ..contribution import gaussian_expected_loss, lemma41_sigma, regularized_threshold
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed, two_sided_false_fail

__all__ = ["check_gaussian_loss", "check_output_perturbation"]


def _random_histograms(gen: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Heterogeneous users: gamma-mixed Poisson sizes, Dirichlet item mixes (some empty)."""
    sizes = gen.poisson(gen.gamma(0.6, 40.0, size=n))
    mixes = gen.dirichlet(np.full(d, 0.4), size=n)
    return np.array([gen.multinomial(m, p) for m, p in zip(sizes, mixes, strict=True)]).reshape(n, d)


@checker
def check_gaussian_loss(
    func: Callable[[np.ndarray, float, float], float],
    *,
    trials: int = 30,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "the exact error of Algorithm 1": ``func(N, C, sigma)``.

    ``N`` is an (n, d) integer array of user histograms (some users may be empty), ``C > 0``
    the :math:`\ell_2` clipping threshold and ``sigma`` the noise multiplier; the answer is
    :math:`\mathcal L_G(C) = \mathbb E\|\widehat N_G - \overline N\|_1` for the Gaussian
    variant of Algorithm 1 (noise :math:`\mathcal N(0, C^2\sigma^2 I_d)`). On ``trials``
    random datasets the checker tries three thresholds each (above every norm, so that
    nothing is clipped; below every non-zero norm; and in between) and compares with
    :func:`fedfreq.contribution.gaussian_expected_loss` to 1e-7 relative. Deterministic:
    a correct formula has no false fails. The message names the regime that fails, never
    the expected value nor the sign of the error.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def loss(N, C, sigma):
    ...     return 0.0
    >>> check_gaussian_loss(loss).passed
    False
    """
    k = check_int("trials", trials, low=1, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    regimes = (
        "C is above every user's norm (nothing is clipped: only the noise term remains)",
        "C is below every non-zero norm (every user is clipped)",
        "C lies between the users' norms (some users are clipped, some are not)",
    )
    for _ in range(k):
        n, d = int(gen.integers(3, 60)), int(gen.integers(1, 12))
        N = _random_histograms(gen, n, d)
        N[0] = 0  # an empty user: its norm is 0 and it must not produce a NaN
        norms = np.sqrt((N.astype(float) ** 2).sum(axis=1))
        pos = norms[norms > 0]
        if pos.size == 0:
            continue
        sigma = float(np.exp(gen.uniform(math.log(0.05), math.log(8.0))))
        cs = (
            float(pos.max()) * float(gen.uniform(1.0, 3.0)),
            float(pos.min()) * float(gen.uniform(0.1, 1.0)),
            float(gen.uniform(pos.min(), pos.max())) if pos.max() > pos.min() else float(pos.min()) / 2,
        )
        for regime, c in zip(regimes, cs, strict=True):
            try:
                got = float(attempt(func, N.copy(), c, sigma))
            except StudentError as err:
                return err.result
            except (TypeError, ValueError):
                return not_yet("the expected loss is one number: return a float")
            ref = float(gaussian_expected_loss(N, c, sigma=sigma))
            if not math.isfinite(got) or abs(got - ref) > 1e-7 * ref:
                return not_yet(
                    f"on a dataset with n = {n} users, d = {d} items, sigma = {sigma:.3g}, your loss is not the "
                    f"exact expected l1 error when {regime}. "
                    "Write the error of item j as |b_j - Z_j| and compute its expectation in closed form."
                )
    return passed(f"your loss matches the exact expected l1 error on {k} random datasets, 3 thresholds each")


def _projected_laplace_moments(center: float, b: float, cap: float) -> dict[str, float]:
    """Exact moments of Y = min(max(center + L, 0), cap) with L ~ Lap(b), 0 < center < cap."""

    def expect(g: Callable[[float], float]) -> float:
        low_mass = 0.5 * math.exp(-center / b)  # P(center + L <= 0)
        high_mass = 0.5 * math.exp(-(cap - center) / b)  # P(center + L >= cap)

        def inner(u: float) -> float:
            return g(center + u) * math.exp(-abs(u) / b) / (2 * b)

        left, _ = integrate.quad(inner, -center, 0.0, epsabs=0.0, epsrel=1e-11, limit=200)
        right, _ = integrate.quad(inner, 0.0, cap - center, epsabs=0.0, epsrel=1e-11, limit=200)
        return g(0.0) * low_mass + g(cap) * high_mass + left + right

    mean = expect(lambda y: y)
    dev = expect(lambda y: abs(y - center))
    return {
        "mean": mean,
        "mean_sd": math.sqrt(max(expect(lambda y: y * y) - mean**2, 0.0)),
        "dev": dev,
        "dev_sd": math.sqrt(max(expect(lambda y: (y - center) ** 2) - dev**2, 0.0)),
        "zero": 0.5 * math.exp(-center / b),
    }


@checker
def check_output_perturbation(
    func: Callable[..., float],
    *,
    trials: int = 600,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "Algorithm 2 as printed":
    ``func(l1, l2, d, sigma, C_max, s, epsilon, epsilon_prime, rng)`` returns one
    private threshold.

    ``l1`` and ``l2`` hold the users' :math:`\ell_1` and :math:`\ell_2` norms, ``epsilon``
    is the budget of the histogram (Algorithm 1), ``epsilon_prime`` the budget of the
    threshold, ``rng`` a numpy Generator. The answer must follow the book's corrected
    Algorithm 2 (:func:`fedfreq.contribution.output_perturbation_threshold`). In two fixed
    settings (one with :math:`\varepsilon' < \varepsilon`, one with
    :math:`\varepsilon' > \varepsilon`), each with ``trials`` calls, every threshold must be
    a finite number in ``[0, C_max]`` (deterministic), and three z-tests at 4.5 standard
    errors compare the frequency of the threshold 0 (an exact binomial test at the same
    level), the mean threshold and the mean distance to the regularised minimiser
    :math:`C'` (CLT, with the standard errors of the exact law of the correct output)
    with their exact values. A correct algorithm fails
    with probability at most 6 · 2(1 − Φ(4.5)) ≈ 4.1e-5 on a random seed. The messages
    say which property fails, never the expected values, and read the same whichever side
    of them an attempt lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def threshold(l1, l2, d, sigma, C_max, s, epsilon, epsilon_prime, rng):
    ...     return 0.0
    >>> check_output_perturbation(threshold, trials=200).passed
    False
    """
    k = check_int("trials", trials, low=200, high=MAX_TRIALS, reason="the checker runs your code that many times")
    gen = as_generator(rng)
    z = 4.5
    data = np.random.default_rng(20260412)  # fixed datasets: the exact reference values do not depend on rng
    for n, d, eps, eps_p in ((200, 10, 1.0, 0.1), (150, 5, 0.25, 0.5)):
        N = _random_histograms(data, n, d)
        l1 = N.sum(axis=1).astype(float)
        l2 = np.sqrt((N.astype(float) ** 2).sum(axis=1))
        sigma = lemma41_sigma(eps, 1.0 / (2 * n), method="lemma")
        s = float(d)
        c_max = 60.0
        lam = 2.0 * math.sqrt(2.0 * s) / (c_max * math.sqrt(n * eps_p))
        center = regularized_threshold(l1, l2, d=d, sigma=sigma, lam=lam, s=s)
        b = 4.0 * math.sqrt(s) / (lam * n) / eps_p
        ref = _projected_laplace_moments(center, b, c_max)
        where = f"with n = {n}, d = {d}, epsilon = {eps:g}, epsilon' = {eps_p:g}"
        out = np.empty(k)
        try:
            for i in range(k):
                out[i] = float(attempt(func, l1.copy(), l2.copy(), d, sigma, c_max, s, eps, eps_p, gen))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet("a threshold is one number: return a float")
        if not np.all(np.isfinite(out)) or np.any(out < 0) or np.any(out > c_max):
            return not_yet(
                f"{where}, some of your thresholds are not numbers in [0, C_max]: Algorithm 1 cannot clip "
                "at a negative threshold, and the analysis of Corollary 4.5 covers only thresholds up to C_max"
            )
        zeros = int(np.sum(out == 0.0))
        half_alpha = float(stats.norm.sf(z))  # exact binomial test at the level of a 4.5-SE z-test
        if (
            stats.binom.sf(zeros - 1, k, ref["zero"]) < half_alpha
            or stats.binom.cdf(zeros, k, ref["zero"]) < half_alpha
        ):
            return not_yet(
                f"{where}, your threshold is exactly 0 with the wrong frequency: check the scale of the noise, "
                "and what happens to a noisy threshold that falls below 0"
            )
        if abs(out.mean() - ref["mean"]) > z * ref["mean_sd"] / math.sqrt(k):
            return not_yet(
                f"{where}, your thresholds are centred in the wrong place: check the regularised minimiser C' "
                "and every quantity it depends on"
            )
        devs = np.abs(out - center)
        if abs(devs.mean() - ref["dev"]) > z * ref["dev_sd"] / math.sqrt(k):
            return not_yet(
                f"{where}, your thresholds spread around the regularised minimiser by the wrong amount: "
                "check the sensitivity, the budget and the law of the noise"
            )
    return passed(
        f"range, frequency of 0, centre and spread match Algorithm 2 in 2 settings ({k} calls each; "
        f"false-fail probability {two_sided_false_fail(z, 6):.0e})"
    )
