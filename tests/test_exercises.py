"""The self-check functions accept right answers and reject typical wrong ones."""

import math

import numpy as np

from fedfreq import accounting
from fedfreq.exercises import check_gaussian_budget, check_rr_debias


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


def test_budget_checker_directions():
    curve = 7 * accounting.rdp_gaussian(accounting.DEFAULT_ORDERS, sigma=3.0)
    eps, _ = accounting.rdp_to_dp(accounting.DEFAULT_ORDERS, curve, 1e-5)
    assert check_gaussian_budget(eps, sigma=3.0, k=7, delta=1e-5).passed
    low = check_gaussian_budget(0.9 * eps, sigma=3.0, k=7, delta=1e-5)
    high = check_gaussian_budget(1.1 * eps, sigma=3.0, k=7, delta=1e-5)
    assert not low.passed and "too small" in low.message and f"{eps:.3f}" not in low.message
    assert not high.passed and "too large" in high.message
