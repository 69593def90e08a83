"""Tests of the cPBM Rényi-DP accountant (seed 000, Lemma 2) and its brute-force companions."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedfreq import accounting
from fedfreq.accounting import (
    cpbm_lemma2_paper_forms,
    cpbm_rdp,
    cpbm_rdp_exact,
    poisson_binomial_logpmf,
    renyi_divergence,
)

ORDERS = np.array([1.1, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0])


def _pq(n_prime, theta):
    """P = Ber(1/2-θ) + Bin(n', 1/2+θ) and Q = Bin(n'+1, 1/2+θ), as log-pmfs."""
    lo, hi = 0.5 - theta, 0.5 + theta
    log_p = poisson_binomial_logpmf(np.array([lo] + [hi] * n_prime))
    log_q = poisson_binomial_logpmf(np.array([hi] * (n_prime + 1)))
    return log_p, log_q


def test_single_user_is_binary_randomized_response():
    # n = 1, m = 1: the output is one Bernoulli(1/2 ± θ), i.e. RR with e^eps = (1+2θ)/(1-2θ)
    for theta in (0.05, 0.2, 0.25):
        eps = math.log((1 + 2 * theta) / (1 - 2 * theta))
        got = cpbm_rdp(ORDERS, n=1, theta=theta, m=1, dim=1)
        want = accounting.rdp_randomized_response(ORDERS, epsilon=eps)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 11, 40])
@pytest.mark.parametrize("theta", [0.1, 0.25])
def test_equals_the_two_direct_divergences(n, theta):
    n_prime = math.ceil((n - 1) / 2)
    log_p, log_q = _pq(n_prime, theta)
    direct = np.maximum(renyi_divergence(log_p, log_q, ORDERS), renyi_divergence(log_q, log_p, ORDERS))
    np.testing.assert_allclose(cpbm_rdp(ORDERS, n=n, theta=theta, m=1, dim=1), direct, rtol=1e-11)


@pytest.mark.parametrize("n", [1, 4, 9, 30])
def test_appendix_form_matches_and_main_text_form_is_infinite(n):
    l1, l2 = cpbm_lemma2_paper_forms(ORDERS, n=n, theta=0.2, form="appendix")
    np.testing.assert_allclose(np.maximum(l1, l2) / (ORDERS - 1), cpbm_rdp(ORDERS, n=n, theta=0.2, m=1, dim=1), rtol=1e-11)
    m1, m2 = cpbm_lemma2_paper_forms(ORDERS, n=n, theta=0.2, form="main")
    np.testing.assert_allclose(m1, l1, rtol=1e-13)  # Pi_1 is printed identically
    assert np.all(np.isinf(m2))  # mu_{n'+1} = log 0 in the main text


@pytest.mark.parametrize("n", [2, 3, 5, 8])
@pytest.mark.parametrize("theta", [0.05, 0.2, 0.25])
def test_bound_dominates_brute_force_over_all_configurations(n, theta):
    # m = 1: the vertex enumeration is the exact supremum (convexity argument in the docstring)
    exact = cpbm_rdp_exact(ORDERS, n=n, theta=theta)
    bound = cpbm_rdp(ORDERS, n=n, theta=theta, m=1, dim=1)
    assert np.all(exact <= bound * (1 + 1e-12))
    # with n = 2 there is one other user and n' = 1: the bound is attained
    if n == 2:
        np.testing.assert_allclose(exact, bound, rtol=1e-11)


def test_vertices_are_the_worst_configurations_for_m1():
    # a finer grid of the other users' probabilities never beats the two endpoints
    ends = cpbm_rdp_exact(ORDERS, n=4, theta=0.2, grid=2)
    fine = cpbm_rdp_exact(ORDERS, n=4, theta=0.2, grid=5)
    np.testing.assert_allclose(fine, ends, rtol=1e-12)


@pytest.mark.parametrize("m", [2, 3])
def test_composition_over_trials_dominates_grid_search(m):
    exact = cpbm_rdp_exact(ORDERS[:5], n=4, theta=0.25, m=m, grid=3)
    bound = cpbm_rdp(ORDERS[:5], n=4, theta=0.25, m=m, dim=1)
    assert np.all(exact <= bound)


def test_audit_catches_a_weakened_mechanism():
    # without clipping a user with |y| = 1.6 C has p = 1/2 ± 1.6 θ: the claimed bound must fail
    n, theta = 5, 0.15
    bound = cpbm_rdp(ORDERS, n=n, theta=theta, m=1, dim=1)
    unclipped = cpbm_rdp_exact(ORDERS, n=n, theta=1.6 * theta)
    assert np.all(unclipped > bound)


def test_linear_in_m_and_dim_and_monotone():
    base = cpbm_rdp(ORDERS, n=101, theta=0.2, m=1, dim=1)
    np.testing.assert_allclose(cpbm_rdp(ORDERS, n=101, theta=0.2, m=7, dim=3), 21 * base, rtol=1e-14)
    assert np.all(np.diff(base) > 0)  # increasing in the order
    assert np.all(cpbm_rdp(ORDERS, n=1001, theta=0.2, m=1, dim=1) < base)  # decreasing in n
    assert np.all(cpbm_rdp(ORDERS, n=101, theta=0.1, m=1, dim=1) < base)  # increasing in theta


@pytest.mark.parametrize("n", [10**3, 10**6, 10**9])
def test_accuracy_at_large_n_against_exact_moments(n):
    # Pi_1 at orders 2 and 3 is a polynomial moment of K ~ Bin(N, q): exact in mpmath
    mp.mp.dps = 50
    theta = 0.2
    N = n // 2 + 1
    a = (1 + 2 * mp.mpf(theta)) / (1 - 2 * mp.mpf(theta))
    b = 1 / a
    q = mp.mpf(0.5 + theta)
    m2 = N * q * (1 - q)
    m3 = N * q * (1 - q) * (1 - 2 * q)
    d2 = mp.log1p((a - b) ** 2 * m2 / N**2)
    d3 = mp.log1p(3 * (a - b) ** 2 * m2 / N**2 - (a - b) ** 3 * m3 / N**3) / 2
    log_excess = accounting._log_excess_moment(N, 0.5 + theta, float(a), float(b), np.array([2.0, 3.0]))
    got = np.logaddexp(0.0, log_excess) / np.array([1.0, 2.0])
    assert abs(got[0] / float(d2) - 1) < 1e-12
    assert abs(got[1] / float(d3) - 1) < 1e-12
    # and the public bound is at least the (exact) first divergence, with both positive
    total = cpbm_rdp(np.array([2.0, 3.0]), n=n, theta=theta, m=1, dim=1)
    assert np.all(total >= got * (1 - 1e-12)) and np.all(total > 0)


def test_asymptotic_rate():
    # eps(λ) n / (λ θ^2) -> 16 / (1 - 4θ^2) (Gaussian limit with n' ≈ n/2 other users)
    theta = 0.2
    r = cpbm_rdp(np.array([2.0, 8.0]), n=10**9, theta=theta, m=1, dim=1) * 1e9 / (np.array([2.0, 8.0]) * theta**2)
    np.testing.assert_allclose(r, 16 / (1 - 4 * theta**2), rtol=1e-6)


def test_fast_enough_at_n_1e9():
    import time

    start = time.perf_counter()
    cpbm_rdp(2.0, n=10**9, theta=0.2, m=1, dim=1)
    assert time.perf_counter() - start < 2.0  # generous: the machine may be shared


@settings(max_examples=40, deadline=None)
@given(
    bad=st.sampled_from(
        [
            ("order", 1.0),
            ("order", 0.5),
            ("theta", 0.0),
            ("theta", 0.26),
            ("theta", float("nan")),
            ("m", 0),
            ("m", 2.5),
            ("n", 0),
            ("dim", 0),
            ("dim", 1.5),
        ]
    )
)
def test_bad_input_names_the_parameter(bad):
    name, value = bad
    kwargs = dict(n=10, theta=0.2, m=3, dim=4)
    order = 2.0
    if name == "order":
        order = value
    else:
        kwargs[name] = value
    with pytest.raises(ValueError, match=name):
        cpbm_rdp(order, **kwargs)


def test_other_validation():
    with pytest.raises(ValueError, match="form"):
        cpbm_lemma2_paper_forms(2.0, n=3, theta=0.2, form="other")
    with pytest.raises(ValueError, match="probs"):
        poisson_binomial_logpmf([0.5, 1.5])
    with pytest.raises(ValueError, match="n"):
        cpbm_rdp_exact(2.0, n=100, theta=0.2)


def test_poisson_binomial_logpmf_matches_binomial():
    from scipy import stats

    got = np.exp(poisson_binomial_logpmf([0.3] * 4, m=3))
    np.testing.assert_allclose(got, stats.binom.pmf(np.arange(13), 12, 0.3), rtol=1e-12)
