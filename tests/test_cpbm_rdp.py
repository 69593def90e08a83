"""Tests of the cPBM Rényi-DP accountant (the OcPBM paper, Lemma 2) and its brute-force companions."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedfreq import accounting
from fedfreq.accounting import (
    cpbm_accountant,
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
    np.testing.assert_allclose(
        np.maximum(l1, l2) / (ORDERS - 1), cpbm_rdp(ORDERS, n=n, theta=0.2, m=1, dim=1), rtol=1e-11
    )
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
    log_excess = cpbm_accountant._log_excess_moment(N, 0.5 + theta, float(a), float(b), np.array([2.0, 3.0]))
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


def _reference_log_excess(n, theta, s_list, J=70, dps=60):
    """E[(1+u_K)^s] - 1 to 50 digits, independently of the package's summation.

    With X = K - Nq (K ~ Bin(N, 1/2+θ), N = n'+1) and c = (a - 1/a)/N, 1 + u_K = 1 - cX and
    E[(1-cX)^s] - 1 = sum_{j>=2} binom(s, j) (-c)^j E[X^j] (E X = 0). The central moments come
    from the Bernoulli cumulants times N (exact recursions, no sampling, no summation over k).
    For integer s the series is the exact finite expansion; otherwise it is asymptotic and the
    neglected part is below P(|cX| >= 1/2) ~ exp(-N KL) (far below 1e-50 for n >= 1e6). The
    last term kept is returned to show the truncation is negligible.
    """
    with mp.workdps(dps):
        N = n // 2 + 1
        th = mp.mpf(theta)
        q = mp.mpf(1) / 2 + th
        a = (1 + 2 * th) / (1 - 2 * th)
        c = (a - 1 / a) / N
        mom = [q * (1 - q) ** j + (1 - q) * (-q) ** j for j in range(J + 1)]  # E[(B - q)^j]
        kap = [mp.mpf(0)] * (J + 1)
        for r in range(1, J + 1):
            kap[r] = mom[r] - mp.fsum(mp.binomial(r - 1, i - 1) * kap[i] * mom[r - i] for i in range(1, r))
        mu = [mp.mpf(1)] + [mp.mpf(0)] * J
        for r in range(1, J + 1):
            mu[r] = mp.fsum(mp.binomial(r - 1, i - 1) * N * kap[i] * mu[r - i] for i in range(1, r + 1))
        out = []
        for s in s_list:
            terms = [mp.binomial(mp.mpf(s), j) * (-c) ** j * mu[j] for j in range(2, J + 1)]
            out.append((mp.fsum(terms), abs(terms[-1])))
        return out


BIG_ORDERS = [1.1, 1.5, 2.0, 3.0, 8.0, 32.0, 64.0, 256.0, 1024.0]


@pytest.mark.parametrize("n,theta", [(10**9, 0.001), (10**9, 0.2), (10**9, 0.25), (10**7, 0.05)])
def test_windowed_sum_against_50_digit_references(n, theta):
    # both Pi_1 - 1 (s = λ) and Pi_2 - 1 (s = 1 - λ) on orders up to 1024: the windowed sum
    # plus its Chernoff tail bounds agrees with the 50-digit value to 1e-10 relative
    # (measured: <= 2e-11, the worst case being θ = 0.001, λ = 1.1, where g_s = (1+u)^s - 1 - su
    # is formed from terms 1e2 times larger); the public ε agrees to the same accuracy
    s_list = BIG_ORDERS + [1.0 - o for o in BIG_ORDERS]
    ref = _reference_log_excess(n, theta, s_list)
    assert all(r[1] < 1e-40 * r[0] for r in ref)  # the series' truncation is negligible
    N = n // 2 + 1
    a = (1 + 2 * theta) / (1 - 2 * theta)
    got = cpbm_accountant._log_excess_moment(N, 0.5 + theta, a, 1 / a, np.array(s_list))
    want = np.array([float(mp.log(r[0])) for r in ref])
    np.testing.assert_allclose(np.exp(got - want), 1.0, rtol=1e-10, atol=0)
    k = len(BIG_ORDERS)
    lam = np.array(BIG_ORDERS)
    eps_ref = np.array(
        [float(max(mp.log1p(r1[0]), mp.log1p(r2[0]))) for r1, r2 in zip(ref[:k], ref[k:], strict=False)]
    ) / (lam - 1)
    np.testing.assert_allclose(cpbm_rdp(lam, n=n, theta=theta, m=1, dim=1), eps_ref, rtol=1e-10)


def _exact_tails(N, q, a, b, s, lo, hi):
    """log of sum_{k<lo} and sum_{k>hi} of Bin(k; N, q) g_s(u_k) by full summation."""
    from scipy import special, stats

    k = np.arange(N + 1, dtype=float)
    u = (a - 1) - (a - b) * k / N
    t = s * np.log1p(u)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        big = t > 30
        log_g = np.where(
            big,
            t + np.log1p(-(1 + s * u) * np.exp(-np.where(big, t, 0.0))),
            np.log(np.maximum(np.expm1(np.where(big, 0.0, t)) - s * u, 0.0)),
        )
    terms = stats.binom.logpmf(k, N, q) + log_g
    lower = special.logsumexp(terms[: int(lo)]) if lo > 0 else -np.inf
    upper = special.logsumexp(terms[int(hi) + 1 :]) if hi < N else -np.inf
    return lower, upper


@pytest.mark.parametrize("theta", [0.01, 0.2, 0.25])
def test_chernoff_tail_bounds_dominate_the_exact_tails(theta):
    # the bounds that replace the tails outside the window, checked against full summation
    # at N = 20001 for exponents on both sides, from 1/3 to 60 standard deviations out
    # (both the tilted branch and the gamma = beta / chord branch occur)
    N = 20001
    q = 0.5 + theta
    a = (1 + 2 * theta) / (1 - 2 * theta)
    sd = math.sqrt(N * q * (1 - q))
    for s in (1.1, 2.0, 32.0, 1024.0, -0.1, -1.0, -31.0, -1023.0):
        for dist in (0.3, 1.0, 3.0, 8.0, 15.0, 30.0, 60.0):
            lo = max(math.floor(N * q - dist * sd), 0)
            hi = min(math.ceil(N * q + dist * sd), N)
            bl, bu = cpbm_accountant._cpbm_tail_bounds(N, q, a, 1 / a, np.array([s]), np.array([lo]), np.array([hi]))
            el, eu = _exact_tails(N, q, a, 1 / a, s, lo, hi)
            assert el <= bl[0] + 1e-9 and eu <= bu[0] + 1e-9, (s, dist, el, bl, eu, bu)
            if dist == 8.0:  # and not vacuous: within e^25 of the exact tails (the slack is
                # the factor u^2 s(s-1)/2 that g_s has near u = 0 and the bounds do not use)
                assert bl[0] - el < 25.0 and bu[0] - eu < 25.0, (s, el, bl, eu, bu)


def test_window_is_narrow_and_its_bound_negligible():
    # at n = 1e9 the summed window is about ±11 sd wide for every order of the default grid
    # (it was up to ±75 sd with Hoeffding's bound at order 1024), and the added tail bound is
    # below 2^-53 of the window's sum
    theta, n = 0.25, 10**9
    N, q, a = n // 2 + 1, 0.5 + theta, (1 + 2 * theta) / (1 - 2 * theta)
    s = np.concatenate([accounting.DEFAULT_ORDERS, 1 - accounting.DEFAULT_ORDERS])
    var_u = (a - 1 / a) ** 2 * q * (1 - q) / N
    target = np.log(np.abs(s * (s - 1)) / 2 * var_u) - cpbm_accountant._LOG_TAIL_MARGIN
    lo, hi = cpbm_accountant._cpbm_window(N, q, a, 1 / a, s, target)
    sd = math.sqrt(N * q * (1 - q))
    assert np.all((hi - lo) / sd < 26)
    bl, bu = cpbm_accountant._cpbm_tail_bounds(N, q, a, 1 / a, s, lo, hi)
    total = cpbm_accountant._log_excess_moment(N, q, a, 1 / a, s)
    assert np.all(np.logaddexp(bl, bu) < total + math.log(2.0**-53))


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
