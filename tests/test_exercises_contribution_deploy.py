"""The checkers of the chapters on unbounded domains, debiasing, deployment and audits.

A correct attempt passes, typical wrong attempts fail, messages never contain the answer,
and bad arguments raise ValueError naming the parameter.
"""

import math

import numpy as np
import pytest
from scipy import stats

from fedfreq import audit, deploy
from fedfreq.contribution import clipped_poisson_mean, unbounded_threshold
from fedfreq.exercises import (
    check_clipped_poisson_mean,
    check_discrete_laplace_delta,
    check_discrete_laplace_sampler,
    check_epsilon_lower_bound,
    check_hockey_stick,
    check_unbounded_release,
)

# --------------------------------------------------------------------------- h(lambda)


def h_right(lam, C):
    return lam * stats.poisson.cdf(C - 2, lam) + C * stats.poisson.sf(C - 1, lam)


def test_clipped_poisson_mean_accepts_a_stable_formula():
    result = check_clipped_poisson_mean(h_right)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong",
    [
        lambda lam, C: C - sum((C - j) * stats.poisson.pmf(j, lam) for j in range(C)),  # cancels
        lambda lam, C: min(lam, C),  # not the mean of the clipped law
        lambda lam, C: lam * stats.poisson.cdf(C - 1, lam) + C * stats.poisson.sf(C - 1, lam),  # off by one
        lambda lam, C: 1 / 0,
        lambda lam, C: [1.0, 2.0],
    ],
)
def test_clipped_poisson_mean_rejects_wrong_attempts(wrong):
    result = check_clipped_poisson_mean(wrong, trials=50)
    assert not result.passed
    assert str(result).startswith("NOT YET")


def test_clipped_poisson_mean_message_has_no_answer():
    def wrong(lam, C):  # right except where lambda and C are comparable
        return h_right(lam, C) * (1.01 if 10 < lam < 100 else 1.0)

    result = check_clipped_poisson_mean(wrong)
    assert not result.passed and "lambda = 50, C = 50" in result.message
    answer = clipped_poisson_mean(50.0, 50)
    assert f"{answer:.3g}" not in result.message and f"{1.01 * answer:.3g}" not in result.message


# --------------------------------------------------------------------------- Algorithm 3's release


def release_right(hbar, Nbar, C, epsilon, delta, rng):
    t = unbounded_threshold(C, epsilon=epsilon, delta=delta)
    noisy = hbar + rng.laplace(0.0, C / epsilon, size=hbar.size)
    return np.where((Nbar > 0) & (noisy > t), noisy, 0.0)


def _release_with(t_of, scale_of, *, mask=True, noise="laplace"):
    def release(hbar, Nbar, C, epsilon, delta, rng):
        b = scale_of(C, epsilon)
        z = rng.laplace(0.0, b, hbar.size) if noise == "laplace" else rng.normal(0.0, math.sqrt(2) * b, hbar.size)
        noisy = hbar + z
        keep = (noisy > t_of(C, epsilon, delta)) & ((Nbar > 0) if mask else True)
        return np.where(keep, noisy, 0.0)

    return release


def test_unbounded_release_accepts_algorithm3():
    result = check_unbounded_release(release_right)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong",
    [
        _release_with(lambda C, e, d: C / e * math.log(C / (2 * d)), lambda C, e: C / e),  # threshold lacks C
        _release_with(lambda C, e, d: C + C / e * math.log(C / d), lambda C, e: C / e),  # threshold too high
        _release_with(lambda C, e, d: unbounded_threshold(C, epsilon=e, delta=d), lambda C, e: 1 / e),  # scale
        _release_with(lambda C, e, d: unbounded_threshold(C, epsilon=e, delta=d), lambda C, e: C / e, mask=False),
        _release_with(lambda C, e, d: unbounded_threshold(C, epsilon=e, delta=d), lambda C, e: C / e, noise="normal"),
        lambda hbar, Nbar, C, epsilon, delta, rng: hbar,  # no noise, no threshold
        lambda hbar, Nbar, C, epsilon, delta, rng: hbar[:2],
    ],
)
def test_unbounded_release_rejects_wrong_attempts(wrong):
    result = check_unbounded_release(wrong, trials=2000)
    assert not result.passed
    t = unbounded_threshold(4, epsilon=1.0, delta=1e-3)
    assert f"{t:.2f}" not in result.message and f"{t:.1f}" not in result.message


def test_unbounded_release_messages_do_not_tell_the_side():
    low = check_unbounded_release(
        _release_with(lambda C, e, d: 0.95 * unbounded_threshold(C, epsilon=e, delta=d), lambda C, e: C / e)
    )
    high = check_unbounded_release(
        _release_with(lambda C, e, d: 1.05 * unbounded_threshold(C, epsilon=e, delta=d), lambda C, e: C / e)
    )
    assert not low.passed and not high.passed
    assert low.message == high.message


def test_unbounded_release_false_fail_rate_is_small():
    fails = sum(not check_unbounded_release(release_right, trials=1000, rng=seed).passed for seed in range(40))
    assert fails <= 1


# --------------------------------------------------------------------------- discrete Laplace sampler


def sampler_right(t, size, rng):
    p = -math.expm1(-1.0 / t)
    return rng.geometric(p, size) - rng.geometric(p, size)


def test_sampler_accepts_geometric_difference_and_package():
    assert check_discrete_laplace_sampler(sampler_right).passed
    assert check_discrete_laplace_sampler(lambda t, size, rng: deploy.discrete_laplace(t, size, rng=rng)).passed


@pytest.mark.parametrize(
    "wrong",
    [
        lambda t, size, rng: np.round(rng.laplace(0.0, t, size)),  # rounded continuous Laplace
        lambda t, size, rng: rng.laplace(0.0, t, size),  # not integers
        lambda t, size, rng: rng.geometric(1 / (1 + t), size) - rng.geometric(1 / (1 + t), size),  # wrong p
        lambda t, size, rng: rng.geometric(-math.expm1(-1 / t), size) - 1,  # one-sided
        lambda t, size, rng: sampler_right(t, size, rng)[:-1],
        lambda t, size, rng: None,
    ],
)
def test_sampler_rejects_wrong_attempts(wrong):
    result = check_discrete_laplace_sampler(wrong, trials=5000)
    assert not result.passed and str(result).startswith("NOT YET")


def test_sampler_false_fail_rate_is_small():
    fails = sum(not check_discrete_laplace_sampler(sampler_right, trials=5000, rng=s).passed for s in range(40))
    assert fails <= 1


# --------------------------------------------------------------------------- discrete Laplace delta


def delta_right(t, sensitivity, epsilon):
    q = math.exp(-1 / t)
    c = (1 - q) / (1 + q)
    if epsilon >= sensitivity / t:
        return 0.0
    total = (1 - math.exp(epsilon - sensitivity / t)) * c / (1 - q)
    for k in range(1, sensitivity):
        if (sensitivity - 2 * k) / t > epsilon:
            total += c * (math.exp(-k / t) - math.exp(epsilon - (sensitivity - k) / t))
    return total


def test_delta_checker_accepts_the_closed_form():
    result = check_discrete_laplace_delta(delta_right)
    assert result.passed, result.message


def test_delta_checker_rejects_and_gives_no_side():
    continuous = check_discrete_laplace_delta(lambda t, s, e: max(0.0, 1 - math.exp((e - s / t) / 2)))
    low = check_discrete_laplace_delta(lambda t, s, e: 0.9 * delta_right(t, s, e))
    high = check_discrete_laplace_delta(lambda t, s, e: 1.1 * delta_right(t, s, e))
    for r in (continuous, low, high):
        assert not r.passed
    assert low.message == high.message
    assert f"{delta_right(1.0, 2, 1.0):.3g}" not in low.message
    assert not check_discrete_laplace_delta(lambda t, s, e: "abc").passed


# --------------------------------------------------------------------------- hockey stick


def hs_right(log_p, log_q, epsilon):
    p, q = np.exp(log_p), np.exp(log_q)
    return max(np.maximum(p - math.exp(epsilon) * q, 0).sum(), np.maximum(q - math.exp(epsilon) * p, 0).sum())


def test_hockey_stick_checker():
    assert check_hockey_stick(hs_right).passed
    assert check_hockey_stick(audit.hockey_stick).passed
    one_way = check_hockey_stick(lambda lp, lq, e: np.maximum(np.exp(lp) - math.exp(e) * np.exp(lq), 0).sum())
    no_exp = check_hockey_stick(lambda lp, lq, e: hs_right(lp, lq, 0.0) - e)
    tv = check_hockey_stick(lambda lp, lq, e: 0.5 * np.abs(np.exp(lp) - np.exp(lq)).sum())
    for r in (one_way, no_exp, tv):
        assert not r.passed
    rr = np.log([0.75, 0.25])
    assert f"{audit.hockey_stick(rr, rr[::-1], 0.5):.3g}" not in one_way.message


# --------------------------------------------------------------------------- Monte Carlo lower bound


def lb_right(k_p, n_p, k_q, n_q, delta, confidence):
    a = 1 - confidence
    p_lo = 0.0 if k_p == 0 else stats.beta.ppf(a / 2, k_p, n_p - k_p + 1)
    q_hi = 1.0 if k_q == n_q else stats.beta.ppf(1 - a / 2, k_q + 1, n_q - k_q)
    return 0.0 if p_lo <= delta else max(0.0, math.log((p_lo - delta) / q_hi))


def test_lower_bound_checker():
    assert check_epsilon_lower_bound(lb_right).passed

    def full_alpha(k_p, n_p, k_q, n_q, delta, confidence):
        return lb_right(k_p, n_p, k_q, n_q, delta, 2 * confidence - 1)

    def plug_in(k_p, n_p, k_q, n_q, delta, confidence):
        return max(0.0, math.log(max(k_p / n_p - delta, 1e-300) / max(k_q / n_q, 1e-300)))

    def no_delta(k_p, n_p, k_q, n_q, delta, confidence):
        return lb_right(k_p, n_p, k_q, n_q, 0.0, confidence)

    def negative(k_p, n_p, k_q, n_q, delta, confidence):
        a = 1 - confidence
        p_lo = stats.beta.ppf(a / 2, max(k_p, 1), n_p - k_p + 1)
        q_hi = stats.beta.ppf(1 - a / 2, k_q + 1, max(n_q - k_q, 1))
        return math.log(p_lo / q_hi)

    results = [check_epsilon_lower_bound(f) for f in (full_alpha, plug_in, no_delta, negative)]
    assert not any(r.passed for r in results)
    ref = audit.epsilon_lower_bound(900, 1000, 100, 1000, delta=0.0, confidence=0.99)
    assert all(f"{ref:.3f}" not in r.message and f"{ref:.2f}" not in r.message for r in results)


# --------------------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    ("checker", "func", "bad"),
    [
        (check_clipped_poisson_mean, h_right, {"trials": 0}),
        (check_unbounded_release, release_right, {"trials": 10}),
        (check_discrete_laplace_sampler, sampler_right, {"trials": 10**9}),
        (check_discrete_laplace_delta, delta_right, {"trials": -1}),
        (check_hockey_stick, hs_right, {"trials": 2.5}),
        (check_epsilon_lower_bound, lb_right, {"trials": math.nan}),
    ],
)
def test_bad_trials_raise(checker, func, bad):
    with pytest.raises(ValueError, match="trials"):
        checker(func, **bad)


@pytest.mark.parametrize(
    "checker",
    [
        check_clipped_poisson_mean,
        check_unbounded_release,
        check_discrete_laplace_sampler,
        check_discrete_laplace_delta,
        check_hockey_stick,
        check_epsilon_lower_bound,
    ],
)
def test_bad_rng_raises(checker):
    with pytest.raises(ValueError, match="rng"):
        checker(lambda *a: 0.0, rng=-1)
