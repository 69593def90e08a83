"""Tests of fedfreq.cpbm: the clipped Poisson binomial mechanism (the OcPBM paper, Algs. 1-3, Eq. 3, Eq. 5)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedfreq import cpbm
from fedfreq.kashin import kashin_representation, tight_frame


def test_clip_l2():
    Y = cpbm.clip_l2([[3.0, 4.0], [0.0, 0.0], [0.6, 0.8]], 1.0)
    np.testing.assert_allclose(Y, [[0.6, 0.8], [0.0, 0.0], [0.6, 0.8]])


def test_encoder_range_and_mean():
    # E Z = m p: the mean over 4000 users of one coordinate is within 4 standard errors
    rng = np.random.default_rng(1)
    n, D, m, theta, C = 4000, 5, 7, 0.2, 2.0
    Y = cpbm.clip_l2(rng.normal(0, 1.5, size=(n, D)), C)
    Z = cpbm.cpbm_encode(Y, theta=theta, C=C, m=m, rng=rng)
    assert Z.dtype.kind == "i" and Z.min() >= 0 and Z.max() <= m
    p = theta * Y / C + 0.5
    se = np.sqrt(np.sum(m * p * (1 - p), axis=0)) / n
    assert np.all(np.abs(Z.mean(axis=0) - m * p.mean(axis=0)) < 4 * se)


def test_decoder_unbiased_and_variance_eq3():
    # Monte Carlo: T = 3000 secure sums of n = 50 users; mean within 4 SE, variance within
    # 4 SE of the sample variance (SE of s^2 ≈ var * sqrt(2/(T-1)) for near-normal sums)
    rng = np.random.default_rng(2)
    n, D, m, theta, C, T = 50, 4, 6, 0.15, 1.0, 3000
    Y = cpbm.clip_l2(rng.normal(0, 1.0, size=(n, D)), C)
    p = theta * Y / C + 0.5
    sums = rng.binomial(m, np.broadcast_to(p, (T, n, D))).sum(axis=1)
    est = np.array([cpbm.cpbm_decode(s, n=n, theta=theta, C=C, m=m) for s in sums])
    var = cpbm.cpbm_variance(Y, theta=theta, C=C, m=m)
    assert np.all(var <= C**2 / (4 * n * m * theta**2) + 1e-15)
    assert np.all(np.abs(est.mean(axis=0) - Y.mean(axis=0)) < 4 * np.sqrt(var / T))
    assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) < 4 * math.sqrt(2 / (T - 1)))


def test_whole_protocol_through_secure_sum():
    # unclipped regime (C above every norm): x_hat is unbiased for the mean histogram
    rng = np.random.default_rng(3)
    d, D, n, m, theta = 4, 8, 300, 16, 0.25
    U = tight_frame(d, D, rng=rng)
    X = rng.poisson(1.0, size=(n, d)).astype(float)
    C = 1.01 * np.linalg.norm(kashin_representation(X, U, eta=0.7, nu=0.3), axis=1).max()
    T = 200
    est = np.array([cpbm.cpbm_estimate(X, U, theta=theta, C=C, m=m, rng=rng) for _ in range(T)])
    sd = math.sqrt(C**2 / (4 * n * m * theta**2))  # bound on the sd of each y_hat coordinate
    # each x_hat coordinate is a unit-norm combination of independent y_hat[k]: sd <= sd_y
    assert np.all(np.abs(est.mean(axis=0) - X.mean(axis=0)) < 4 * sd / math.sqrt(T))


def test_optimal_quantile_eq5_and_threshold():
    q = cpbm.optimal_quantile(D=100, m=30, n=10_000, theta=0.2)
    assert math.isclose(q, 1 - math.sqrt(100 / (4 * 30 * 10_000 * 0.04)), rel_tol=1e-15)
    assert cpbm.optimal_quantile(D=10_000, m=1, n=10, theta=0.01) == 0.0
    norms = np.random.default_rng(4).gamma(2.0, 1.0, size=500)
    C_star = cpbm.optimal_threshold(norms, D=50, m=10, theta=0.2)
    grid = np.linspace(0, norms.max(), 20001)
    values = cpbm.clipping_error_bound(norms, grid, D=50, m=10, theta=0.2)
    best = cpbm.clipping_error_bound(norms, C_star, D=50, m=10, theta=0.2)
    assert best <= values.min() + 1e-12
    # and C* is the (1-s)-quantile in the order-statistic sense
    s = math.sqrt(50 / (4 * 10 * 500 * 0.04))
    assert np.mean(norms > C_star) <= s < np.mean(norms >= C_star)


@settings(max_examples=30, deadline=None)
@given(bad=st.sampled_from([("theta", 0.0), ("theta", 0.3), ("C", 0.0), ("C", -1.0), ("m", 0), ("m", 1.5)]))
def test_bad_input_names_parameter(bad):
    name, value = bad
    kw = dict(theta=0.2, C=1.0, m=3)
    kw[name] = value
    with pytest.raises(ValueError, match=name):
        cpbm.cpbm_encode(np.zeros((2, 3)), rng=0, **kw)


def test_bad_shapes_and_sums():
    with pytest.raises(ValueError, match="y"):
        cpbm.cpbm_encode(np.zeros((2, 3, 4)), theta=0.2, C=1.0, m=3, rng=0)
    with pytest.raises(ValueError, match="sums"):
        cpbm.cpbm_decode([100], n=2, theta=0.2, C=1.0, m=3)
    with pytest.raises(ValueError, match="n"):
        cpbm.optimal_quantile(D=10, m=3, n=0, theta=0.2)
    U = tight_frame(2, 4, rng=0)
    with pytest.raises(ValueError, match="sums"):
        cpbm.cpbm_server([1, 2, 3], U, n=5, theta=0.2, C=1.0, m=4)


def test_error_terms_match_monte_carlo():
    # E||x_bar - x_hat||^2 = bias^2 + sum_k v_k ||u_k||^2: T = 400 runs, 4 standard errors
    rng = np.random.default_rng(6)
    d, D, n, m, theta = 5, 10, 200, 6, 0.2
    U = tight_frame(d, D, rng=rng)
    X = rng.poisson(2.0, size=(n, d)).astype(float)
    Y = kashin_representation(X, U, eta=0.7, nu=0.3)
    C = float(np.quantile(np.linalg.norm(Y, axis=1), 0.7))
    b, v = cpbm.cpbm_error_terms(X, U, C, theta=theta, m=m, y=Y)
    assert v <= d * C**2 / (4 * n * m * theta**2) + 1e-12
    T = 400
    sq = []
    for _ in range(T):
        S = cpbm.cpbm_encode(Y, theta=theta, C=C, m=m, rng=rng).sum(axis=0)
        sq.append(np.sum((X.mean(axis=0) - cpbm.cpbm_server(S, U, n=n, theta=theta, C=C, m=m)) ** 2))
    sq = np.array(sq)
    assert abs(sq.mean() - (b + v)) < 4 * sq.std(ddof=1) / math.sqrt(T)
    b2, v2 = cpbm.cpbm_error_terms(X, U, C, theta=theta, m=m)
    assert math.isclose(b, b2, rel_tol=1e-9, abs_tol=1e-12) and math.isclose(v, v2, rel_tol=1e-9)


def test_clipping_error_bound_matches_the_definition():
    rng = np.random.default_rng(7)
    a = np.round(rng.gamma(2.0, 1.0, size=300), 1)  # with ties
    Cs = np.concatenate([[0.0], np.sort(a)[::37], rng.uniform(0, 10, size=20)])
    s = math.sqrt(40 / (4 * 10 * 300 * 0.2**2))
    naive = np.array([np.maximum(0, a - c).mean() + c * s for c in Cs])
    np.testing.assert_allclose(cpbm.clipping_error_bound(a, Cs, D=40, m=10, theta=0.2), naive, rtol=1e-12, atol=1e-12)


def test_closed_form_mse_equals_the_error_terms_at_every_kind_of_threshold():
    """cpbm_mse against the direct sum of cpbm_error_terms: thresholds below every norm,
    exactly at norms (ties included), between them and above all; a zero row too."""
    rng = np.random.default_rng(11)
    n, d, theta, m = 60, 5, 0.2, 7
    U = tight_frame(d, 2 * d, rng=rng)
    X = np.round(rng.gamma(1.5, 2.0, size=(n, d)), 0)
    X[3] = 0.0  # a user with nothing: its representation is zero, never clipped
    X[10] = X[11]  # two users with the same norm
    Y = kashin_representation(X, U, eta=0.7, nu=0.3)
    a = np.linalg.norm(Y, axis=1)
    Cs = np.concatenate(
        [[1e-3, a[a > 0].min() / 2], np.sort(a[a > 0])[::9], [a[10]], rng.uniform(0.1, 2 * a.max(), 15), [3 * a.max()]]
    )
    direct = np.array([sum(cpbm.cpbm_error_terms(X, U, C, theta=theta, m=m, y=Y)) for C in Cs])
    fast = cpbm.cpbm_mse(X, U, Cs, theta=theta, m=m, y=Y)
    assert fast.shape == Cs.shape
    np.testing.assert_allclose(fast, direct, rtol=1e-10, atol=1e-12)
    assert isinstance(cpbm.cpbm_mse(X, U, float(Cs[5]), theta=theta, m=m, y=Y), float)
    np.testing.assert_allclose(
        cpbm.cpbm_mse(X, U, Cs.reshape(-1, 1), theta=theta, m=m, y=Y).ravel(), direct, rtol=1e-10
    )


def test_the_exact_minimum_is_below_every_threshold_and_attained():
    """No threshold on a dense grid, nor any user norm, beats cpbm_mse_minimum, and the MSE it
    reports is the MSE at its threshold."""
    rng = np.random.default_rng(12)
    for n, d, m in ((40, 4, 3), (200, 8, 30)):
        U = tight_frame(d, 2 * d, rng=rng)
        X = rng.poisson(rng.uniform(0.2, 6.0, size=(n, 1)), size=(n, d)).astype(float)
        Y = kashin_representation(X, U, eta=0.7, nu=0.3)
        C_min, e_min = cpbm.cpbm_mse_minimum(X, U, theta=0.2, m=m, y=Y)
        a = np.linalg.norm(Y, axis=1)
        grid = np.concatenate([np.linspace(1e-3, 1.5 * a.max(), 4001), a[a > 0]])
        curve = cpbm.cpbm_mse(X, U, grid, theta=0.2, m=m, y=Y)
        assert C_min > 0
        assert e_min <= curve.min() * (1 + 1e-12)
        assert math.isclose(cpbm.cpbm_mse(X, U, C_min, theta=0.2, m=m, y=Y), e_min, rel_tol=1e-9)
        # the grid comes close to it: the minimum is not an artefact of one interval
        assert curve.min() <= e_min * (1 + 1e-3)


@pytest.mark.parametrize("C", [0.0, -1.0, float("nan"), [], [1.0, 0.0]])
def test_closed_form_mse_refuses_a_threshold_that_is_not_positive(C):
    U = tight_frame(2, 4, rng=0)
    with pytest.raises(ValueError, match="^C "):
        cpbm.cpbm_mse(np.ones((3, 2)), U, C, theta=0.2, m=3)
