"""Checkers for the exercises on the cPBM mechanism and its clipping threshold."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int
from ..cpbm import clip_l2, clipping_error_bound, cpbm_error_terms, cpbm_variance, optimal_threshold
from ..kashin import kashin_level, kashin_representation, tight_frame
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed

__all__ = ["check_cpbm_decoder", "check_optimal_threshold", "check_kashin_representation", "check_cpbm_mse"]


@checker
def check_cpbm_decoder(
    decode: Callable[[np.ndarray, int, float, float, int], np.ndarray],
    *,
    trials: int = 400,
    rng: np.random.Generator | int | None = 20260302,
) -> CheckResult:
    r"""Self-check for the exercise "implement the cPBM decoder".

    ``decode(sums, n, theta, C, m)`` must return :math:`\hat y` (shape (D,)). The check
    simulates ``trials`` secure sums for known clipped coefficients (D = 3) and tests,
    coordinate by coordinate, that the mean over the runs is within 4 standard errors of
    the truth (exact standard errors: a correct decoder fails one of the three z-tests
    with probability at most 3 · 2(1 − Φ(4)) ≈ 1.9e-4 on a random seed), and that the
    empirical variance is within 25 % of the exact one (with 400 trials the sample
    variance's relative standard deviation is about √(2/399) ≈ 7 %, so 25 % is 3.5 of
    them). The message never states the formula.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def decode(sums, n, theta, C, m):
    ...     return np.zeros(len(sums))
    >>> check_cpbm_decoder(decode).passed
    False
    """
    gen = as_generator(rng)
    trials = check_int("trials", trials, low=50, high=MAX_TRIALS, reason="the checker runs your code that many times")
    n, D, theta, C, m = 40, 3, 0.2, 2.0, 5
    Y = clip_l2(gen.normal(0.0, 1.0, size=(n, D)), C)
    truth = Y.mean(axis=0)
    var = cpbm_variance(Y, theta=theta, C=C, m=m)
    p = theta * Y / C + 0.5
    sums = gen.binomial(m, np.broadcast_to(p, (trials, n, D))).sum(axis=1)
    try:
        est = np.array([np.asarray(attempt(decode, s, n, theta, C, m), dtype=float) for s in sums])
    except StudentError as err:
        return err.result
    except (TypeError, ValueError):
        return not_yet(f"your decoder should return {D} numbers per call")
    if est.shape != (trials, D) or not np.all(np.isfinite(est)):
        return not_yet(f"your decoder should return {D} finite numbers per call; got shape {est.shape[1:]}")
    z = (est.mean(axis=0) - truth) / np.sqrt(var / trials)
    if np.max(np.abs(z)) > 4:
        return not_yet(
            "the average of your estimates is off from the true mean of the clipped "
            "coefficients by more than 4 standard errors. Check the centring (what is E[S]?) and "
            "the scale (how does a change of y move p, and then S?)."
        )
    ratio = est.var(axis=0, ddof=1) / var
    if np.max(np.abs(ratio - 1)) > 0.25:
        return not_yet("unbiased on average, but the spread of your estimates is not the decoder's; check the scale.")
    return passed(
        f"unbiased (max |z| = {np.max(np.abs(z)):.2f} < 4) and variance ratio within 25% over {trials} trials"
    )


@checker
def check_optimal_threshold(
    func: Callable[[np.ndarray, int, int, float], float],
    *,
    rng: np.random.Generator | int | None = 20260303,
) -> CheckResult:
    r"""Self-check for the exercise "compute the OcPBM threshold".

    ``func(norms, D, m, theta)`` must return a threshold C ≥ 0 minimising the
    Theorem 1 bound :func:`fedfreq.cpbm.clipping_error_bound` for the given norms. Tested
    on four sets of norms (including ties and a regime where clipping does not pay) by
    the bound's value, to 1e-9 relative (deterministic: no false fails); the message
    never reveals the expected threshold nor on which side of it the answer lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def threshold(norms, D, m, theta):
    ...     return 0.0
    >>> check_optimal_threshold(threshold).passed
    False
    """
    gen = as_generator(rng)
    cases = [
        (gen.gamma(2.0, 1.0, size=300), 50, 30, 0.2),
        (np.round(gen.gamma(2.0, 1.0, size=200), 1), 20, 10, 0.25),
        (gen.lognormal(0.0, 1.0, size=1000), 100, 64, 0.15),
        (gen.gamma(2.0, 1.0, size=50), 400, 1, 0.05),
    ]
    for i, (a, D, m, theta) in enumerate(cases, 1):
        try:
            C = float(attempt(func, a.copy(), D, m, theta))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: the threshold must be one number")
        if not math.isfinite(C) or C < 0:
            return not_yet(f"case {i}: the threshold must be a finite number >= 0; got {C!r}")
        best = clipping_error_bound(a, optimal_threshold(a, D=D, m=m, theta=theta), D=D, m=m, theta=theta)
        got = clipping_error_bound(a, C, D=D, m=m, theta=theta)
        if got > best * (1 + 1e-9) + 1e-12:
            return not_yet(
                f"case {i} of {len(cases)}: your threshold gives a larger bound than the best one. "
                "The bound is piecewise smooth in C: look at the sign of its derivative on each side "
                "of your C, and at the norms where its pieces change."
            )
    return passed(f"your threshold minimises the bound in all {len(cases)} cases")


@checker
def check_kashin_representation(
    kashin: Callable[[np.ndarray, np.ndarray, float, float, int], np.ndarray],
    *,
    rng: np.random.Generator | int | None = 20260304,
) -> CheckResult:
    r"""Self-check for the exercise "Kashin's representation by truncation".

    ``kashin(x, U, eta, nu, iterations)`` receives one vector ``x`` (shape (d,)), a tight
    frame ``U`` (shape (d, D)) and the parameters of the truncation algorithm, and must
    return the coefficients ``y`` (shape (D,)) after ``iterations`` truncation steps,
    without absorbing the last residual. The checker runs 12 cases (two frames drawn
    from ``rng``; a spike, a dense vector and a histogram; 1, 4 and 12 steps) and
    tests, in this order: the shape; the reconstruction (:math:`\|x - Uy\|_2` no larger
    than after the same number of steps of the algorithm); the flatness
    (:math:`\|y\|_\infty \le K\|x\|_2/\sqrt D`, :math:`K = (1-\eta)^{-1}\nu^{-1/2}`); and
    finally agreement with :func:`fedfreq.kashin.kashin_representation` to 1e-9 of
    :math:`\|x\|_2`. Deterministic, to rounding: a correct implementation never fails.
    The messages name the property that fails, never the expected coefficients.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def kashin(x, U, eta, nu, iterations):
    ...     return np.zeros(U.shape[1])
    >>> check_kashin_representation(kashin).passed
    False
    """
    gen = as_generator(rng)
    cases: list[tuple[np.ndarray, np.ndarray, float, float, int]] = []
    # (frame, eta, nu): with the second pair the truncation binds at several steps
    for U, eta, nu in ((tight_frame(8, 32, rng=gen), 0.7, 0.3), (tight_frame(16, 48, rng=gen), 0.5, 0.9)):
        d = U.shape[0]
        spike = np.zeros(d)
        spike[d // 3] = 3.0
        counts = gen.poisson(np.linspace(6.0, 0.5, d)).astype(float)
        counts[0] += 1.0  # never the zero vector
        dense = np.asarray(gen.normal(0.0, 1.0, size=d), dtype=float)
        vectors: tuple[np.ndarray, ...] = (spike, dense, counts)
        for x in vectors:
            for r in (1, 4, 12):
                cases.append((x, U, eta, nu, r))
    for i, (x, U, eta, nu, r) in enumerate(cases, 1):
        D = U.shape[1]
        K = kashin_level(eta, nu)
        try:
            y = np.asarray(attempt(kashin, x.copy(), U.copy(), eta, nu, r), dtype=float)
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: your function should return {D} numbers (one per frame vector)")
        if y.shape != (D,) or not np.all(np.isfinite(y)):
            return not_yet(f"case {i}: your function should return {D} finite numbers; got shape {y.shape}")
        ref = kashin_representation(x, U, eta=eta, nu=nu, iterations=r, exact=False)
        x_norm = float(np.linalg.norm(x))
        tol = 1e-9 * x_norm
        if np.linalg.norm(x - U @ y) > np.linalg.norm(x - U @ ref) + tol:
            return not_yet(
                f"case {i} of {len(cases)} (iterations = {r}): U @ y does not reconstruct x as well as the "
                "algorithm does after that many steps. Check what you add to the coefficients at each "
                "step, and what the residual becomes."
            )
        if np.max(np.abs(y)) > K * x_norm / math.sqrt(D) + tol:
            return not_yet(
                f"case {i} of {len(cases)} (iterations = {r}): a coefficient exceeds the Kashin level "
                "K ||x||_2 / sqrt(D): check the first truncation level and how it shrinks at each step."
            )
        if np.max(np.abs(y - ref)) > tol:
            return not_yet(
                f"case {i} of {len(cases)} (iterations = {r}): your coefficients reconstruct x and are flat, but "
                "they are not those of the truncation algorithm: check the order of the steps "
                "(truncate, accumulate, update the residual, shrink the level) and do not absorb the last "
                "residual."
            )
    return passed(f"your coefficients match the truncation algorithm in all {len(cases)} cases")


@checker
def check_cpbm_mse(
    mse: Callable[[np.ndarray, np.ndarray, np.ndarray, float, float, int], float],
    *,
    rng: np.random.Generator | int | None = 20260305,
) -> CheckResult:
    r"""Self-check for the exercise "the exact mean squared error of the cPBM".

    ``mse(X, U, Y, C, theta, m)`` receives the users' histograms ``X`` (shape (n, d)),
    a tight frame ``U`` (shape (d, D)), the users' representations ``Y`` (shape (n, D),
    with ``X = Y @ U.T``), the clipping threshold and the cPBM parameters, and must
    return :math:`\mathbb E\|\bar x - \hat x\|_2^2` exactly (no simulation). The checker
    compares with the sum of :func:`fedfreq.cpbm.cpbm_error_terms` to 1e-9 relative on
    six cases drawn from ``rng``: in three of them C exceeds every norm (nobody is
    clipped, so only the noise counts), in three C is a quantile of the norms.
    Deterministic, to rounding: a correct function never fails. The message says which
    of the two terms looks wrong, never the expected value.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def mse(X, U, Y, C, theta, m):
    ...     return 0.0
    >>> check_cpbm_mse(mse).passed
    False
    """
    gen = as_generator(rng)
    setups = [(30, 4, 8, 0.2, 5), (50, 6, 12, 0.25, 16), (20, 3, 3, 0.1, 2)]
    cases = []
    for n, d, D, theta, m in setups:
        U = tight_frame(d, D, rng=gen)
        X = gen.poisson(gen.uniform(0.5, 5.0, size=d), size=(n, d)).astype(float)
        X[:, 0] += gen.integers(0, 20, size=n)  # heterogeneous users, some heavy
        Y = kashin_representation(X, U, eta=0.7, nu=0.3)
        norms = np.linalg.norm(Y, axis=1)
        cases.append(("nobody clipped", X, U, Y, float(norms.max()) * 1.5, theta, m))
        cases.append(("some users clipped", X, U, Y, float(np.quantile(norms, 0.6)), theta, m))
    cases.sort(key=lambda c: c[0] != "nobody clipped")  # the noise term alone first
    for i, (kind, X, U, Y, C, theta, m) in enumerate(cases, 1):
        try:
            value = attempt(mse, X.copy(), U.copy(), Y.copy(), C, theta, m)
            value = float(np.asarray(value, dtype=float))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: your function should return one number")
        if not math.isfinite(value):
            return not_yet(f"case {i}: your function should return a finite number; got {value!r}")
        target = sum(cpbm_error_terms(X, U, C, theta=theta, m=m, y=Y))
        if not math.isclose(value, target, rel_tol=1e-9, abs_tol=1e-15):
            if kind == "nobody clipped":
                return not_yet(
                    f"case {i} of {len(cases)} (C above every norm, so the estimate is unbiased): your "
                    "value is not the variance of x_hat. Check the variance of each coordinate of y_hat "
                    "(it depends on every user's coin bias) and how the frame carries it to x_hat."
                )
            return not_yet(
                f"case {i} of {len(cases)} (some users clipped): your value is right when nobody is clipped, "
                "but not here. Check the squared bias (the mean of the histograms minus what the decoder "
                "estimates on average, measured in the space of x), and that the coin biases of the "
                "variance use the clipped representations."
            )
    return passed(f"your mean squared error is exact in all {len(cases)} cases (to 1e-9 relative)")
