"""The self-check functions accept right answers and reject typical wrong ones."""

import importlib
import math
import pkgutil

import numpy as np
import pytest

from fedfreq import (
    accounting,
    bitpush,
    contribution,
    cpbm,
    exercises,
    heavy_hitters,
    quantiles,
    sample_threshold,
    sketch,
)
from fedfreq.exercises import check_gaussian_budget, check_rr_debias
from fedfreq.exercises._result import one_sided_binomial_false_fail, two_sided_false_fail


def right(reports, epsilon):
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return (np.sum(reports) - len(reports) * (1 - p)) / (2 * p - 1)


def test_rr_checker_accepts_the_unbiased_estimator():
    result = check_rr_debias(right)
    assert result.passed, result.message


def test_rr_checker_rejects_biased_and_broken_estimators():
    def wrong_sign(r, e):
        return right(r, e) + 0.05 * len(r)

    noise = np.random.default_rng(0)

    def inflated(r, e):
        return right(r, e) + noise.normal(0, 200)

    for bad in (lambda r, e: float(np.sum(r)), wrong_sign, lambda r, e: np.array([1.0, 2.0]), lambda r, e: 1 / 0):
        result = check_rr_debias(bad, trials=200)
        assert not result.passed
        assert "NOT YET" in str(result)
    # an unbiased but needlessly noisy estimator is flagged for its spread
    result = check_rr_debias(inflated, trials=200)
    assert not result.passed and "spread" in result.message


def test_budget_checker_gives_no_direction():
    curve = 7 * accounting.rdp_gaussian(accounting.DEFAULT_ORDERS, sigma=3.0)
    eps, _ = accounting.rdp_to_dp(accounting.DEFAULT_ORDERS, curve, 1e-5)
    assert check_gaussian_budget(eps, sigma=3.0, k=7, delta=1e-5).passed
    low = check_gaussian_budget(0.9 * eps, sigma=3.0, k=7, delta=1e-5)
    high = check_gaussian_budget(1.1 * eps, sigma=3.0, k=7, delta=1e-5)
    assert not low.passed and not high.passed
    # the same message on both sides of the answer: no bisection to it
    assert low.message == high.message and f"{eps:.3f}" not in low.message


# --------------------------------------------------------------------------- one place, one type


def test_every_checker_lives_in_exercises_and_returns_check_result():
    names = [n for n in exercises.__all__ if n.startswith("check_")]
    # every checker defined in a submodule is exported, and nothing else is
    defined = set()
    for info in pkgutil.iter_modules(exercises.__path__):
        module = importlib.import_module(f"fedfreq.exercises.{info.name}")
        defined |= {
            n
            for n, obj in vars(module).items()
            if n.startswith("check_") and callable(obj) and obj.__module__ == module.__name__
        }
    assert sorted(names) == sorted(defined)
    for module in (bitpush, contribution, cpbm, heavy_hitters, quantiles, sample_threshold, sketch):
        assert not [n for n in module.__all__ if n.startswith("check_")], module.__name__
    for name in names:
        assert getattr(exercises, name).__annotations__["return"] in ("CheckResult", exercises.CheckResult)


def test_stated_false_fail_probabilities():
    # the figures quoted in the checkers' docstrings
    assert f"{two_sided_false_fail(4.5, 4):.1e}" == "2.7e-05"
    assert f"{two_sided_false_fail(4.0, 3):.1e}" == "1.9e-04"
    assert f"{two_sided_false_fail(4.0, 5):.1e}" == "3.2e-04"
    assert f"{two_sided_false_fail(4.0):.1e}" == "6.3e-05"
    assert f"{two_sided_false_fail(4.5):.1e}" == "6.8e-06"
    limit = 0.1 + 4 * math.sqrt(0.1 * 0.9 / 60)
    assert f"{4 * one_sided_binomial_false_fail(0.1, 60, limit):.0e}" == "8e-04"


# --------------------------------------------------------------------------- chapter checkers


def test_bitpush_estimator_checker():
    def good(idx, rep, b, eps):
        p = math.exp(eps) / (1 + math.exp(eps))
        tot = 0.0
        for j in range(b):
            r = rep[idx == j]
            if r.size:
                tot += 2**j * (r.mean() - (1 - p)) / (2 * p - 1)
        return tot

    def bad(idx, rep, b, eps):
        return float(sum(2**j * rep[idx == j].mean() for j in range(b) if np.any(idx == j)))

    assert exercises.check_bitpush_estimator(good, n=1000, trials=100)
    res = exercises.check_bitpush_estimator(bad, n=1000, trials=100)
    assert not res and "flipping" in res.message
    assert "raised ZeroDivisionError" in exercises.check_bitpush_estimator(lambda *a: 1 / 0).message


def test_split_encoding_checker():
    assert exercises.check_split_encoding(lambda v, b: np.where(v >= 0, v, np.left_shift(-v, b)), trials=60)
    res = exercises.check_split_encoding(lambda v, b: np.abs(v), trials=60)
    assert not res and "decode" in res.message


def test_clipped_poisson_inverse_checker():
    assert exercises.check_clipped_poisson_inverse(contribution.clipped_poisson_mean_inverse).passed
    assert not exercises.check_clipped_poisson_inverse(lambda y, C: y).passed
    assert "raised" in exercises.check_clipped_poisson_inverse(lambda y, C: 1 / 0).message


def test_gaussian_threshold_checker():
    def good(l1, l2, d, sigma):
        return contribution.gaussian_threshold(l1, l2, d=d, sigma=sigma)

    assert exercises.check_gaussian_threshold(good, trials=10).passed
    assert not exercises.check_gaussian_threshold(lambda l1, l2, d, sigma: float(np.median(l2)), trials=10).passed


def test_rand_clip_checker():
    def good(h, C, g):
        return contribution.rand_clip(np.asarray(h)[None, :], C, rng=g)[0]

    assert exercises.check_rand_clip(good, trials=500).passed
    res = exercises.check_rand_clip(lambda h, C, g: np.minimum(h, C), trials=500)
    assert not res.passed

    def first_items(h, C, g):  # right sizes, but always the first items: biased
        out = np.zeros_like(h)
        left = C
        for j, c in enumerate(h):
            out[j] = min(c, left)
            left -= out[j]
        return out

    res = exercises.check_rand_clip(first_items, trials=500)
    assert not res.passed and "uniformly" in res.message


def test_cpbm_decoder_checker():
    def good(s, n, theta, C, m):
        return C / (m * n * theta) * (s - m * n / 2)

    assert exercises.check_cpbm_decoder(good).passed

    def uncentred(s, n, theta, C, m):
        return C / (m * n * theta) * s

    assert not exercises.check_cpbm_decoder(uncentred).passed

    def wrong_scale(s, n, theta, C, m):
        return 2 * C / (m * n * theta) * (s - m * n / 2)

    res = exercises.check_cpbm_decoder(wrong_scale)
    assert not res.passed and "spread" in res.message or "scale" in res.message


def test_optimal_threshold_checker():
    def good(a, D, m, theta):
        return cpbm.optimal_threshold(a, D=D, m=m, theta=theta)

    assert exercises.check_optimal_threshold(good).passed
    assert not exercises.check_optimal_threshold(lambda a, D, m, theta: float(np.median(a))).passed
    # no direction: a threshold too small and one too large get the same message
    lo = exercises.check_optimal_threshold(lambda a, D, m, theta: 1e-3)
    hi = exercises.check_optimal_threshold(lambda a, D, m, theta: 1e3)
    assert not lo.passed and lo.message == hi.message


def test_multiround_level_checker():
    ok = exercises.check_multiround_level(
        lambda D, m, N, R, theta: cpbm.optimal_quantile(D=D, m=m, n=N * R, theta=theta)
    )
    assert ok.passed
    bad = exercises.check_multiround_level(lambda D, m, N, R, theta: cpbm.optimal_quantile(D=D, m=m, n=N, theta=theta))
    assert not bad.passed and "rounds" in bad.message
    assert "raised" in exercises.check_multiround_level(lambda *a: 1 / 0).message


def test_dht_decoder_checker():
    def good(n, coeffs):
        return quantiles.inverse_haar_transform(n / (len(coeffs) + 1), coeffs)

    def bad_base(n, coeffs):
        return quantiles.inverse_haar_transform(float(n), coeffs)

    def bad_scale(n, coeffs):
        return quantiles.inverse_haar_transform(n / (len(coeffs) + 1), coeffs, rescaled=False)

    assert exercises.check_dht_decoder(good).passed
    res = exercises.check_dht_decoder(bad_base)
    assert not res.passed and "base coefficient" in res.message
    res = exercises.check_dht_decoder(bad_scale)
    assert not res.passed and "scaling" in res.message


def test_omission_checker_gives_no_direction():
    W, p, tau, T = 60, 0.25, 12, 20000
    truth = sample_threshold.omission_probability(W, sampling_rate=p, tau=tau)
    rng = np.random.default_rng(9)
    est = float(np.mean(rng.binomial(W, p, size=T) < tau))
    assert exercises.check_omission_estimate(est, W=W, sampling_rate=p, tau=tau, trials=T).passed
    wrong = float(np.mean(rng.binomial(W, p, size=T) <= tau))  # the off-by-one mistake
    low = exercises.check_omission_estimate(wrong, W=W, sampling_rate=p, tau=tau, trials=T)
    high = exercises.check_omission_estimate(min(1.0, 2 * truth + 0.1), W=W, sampling_rate=p, tau=tau, trials=T)
    assert not low.passed and not high.passed and low.message == high.message
    assert f"{truth:.3}" not in low.message


def test_width_rule_checker_gives_no_direction():
    assert exercises.check_width_rule(lambda f, tau: sketch.oracle_width(f, tau, constant=8.0)).passed
    small = exercises.check_width_rule(lambda f, tau: 2)
    large = exercises.check_width_rule(lambda f, tau: sketch.minimax_width(tau, constant=4.0))
    assert not small.passed and not large.passed
    assert small.message == large.message
    assert not exercises.check_width_rule(lambda f, tau: sketch.oracle_width(f, tau, constant=2.0)).passed


def test_hybrid_decoder_checker():
    def good(S, b, s):
        rows = np.arange(b.shape[0])[:, None]
        return np.median(np.mean(s * S[:, rows, b], axis=0), axis=0)

    def swapped(S, b, s):
        rows = np.arange(b.shape[0])[:, None]
        return np.mean(np.median(s * S[:, rows, b], axis=1), axis=0)

    assert exercises.check_hybrid_decoder(good).passed
    res = exercises.check_hybrid_decoder(swapped)
    assert not res.passed and "order" in res.message


def test_decomposition_checker():
    def good(r, b, L):
        return heavy_hitters.range_decomposition(r, branching=b, levels=L)

    assert exercises.check_decomposition(good).passed
    leaves = exercises.check_decomposition(lambda r, b, L: [(L, leaf) for leaf in range(r)])
    assert not leaves.passed and "coarser" in leaves.message
    assert not exercises.check_decomposition(lambda r, b, L: [(L, 0)]).passed
    assert not exercises.check_decomposition(lambda r, b, L: 5).passed


@pytest.mark.parametrize("name", [n for n in exercises.__all__ if n.startswith("check_")])
def test_a_failing_attempt_is_feedback_not_a_traceback(name):
    checker = getattr(exercises, name)
    if name in ("check_gaussian_budget", "check_omission_estimate"):
        return  # these take a number, not a function
    res = checker(lambda *a: 1 / 0)
    assert isinstance(res, exercises.CheckResult) and not res.passed and "raised" in res.message
