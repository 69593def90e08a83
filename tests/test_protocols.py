"""Tests for :mod:`fedfreq.protocols` (the OcPBM paper, Algs. 6-7, Prop. 4, App. D)."""

from __future__ import annotations

import numpy as np
import pytest

from fedfreq.accounting import cpbm_rdp
from fedfreq.kashin import kashin_representation, tight_frame
from fedfreq.protocols import mffe, mffe_rdp, tffe, tffe_rdp
from fedfreq.quantiles import histogram_rdp

KASHIN = dict(eta=0.7, nu=0.3)


def _data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.poisson(rng.uniform(0.5, 3.0, size=(n, 1)) * np.array([4.0, 2.0, 1.0, 1.0])[:d], size=(n, d)).astype(float)
    return x, tight_frame(d, 2 * d, rng=seed)


def test_tffe_threshold_is_the_right_bin_and_estimate_unbiased_without_clipping():
    x, U = _data()
    norms = np.linalg.norm(kashin_representation(x, U, **KASHIN), axis=1)
    B, b = float(np.ceil(norms.max())) + 1.0, 5
    # quantile step: gamma = 0.5, very precise cPBM (large m_q): the threshold is the upper edge of the median's bin
    r = tffe(x, U, B=B, b=b, theta=0.25, m=64, theta_q=0.25, m_q=4096, gamma=0.5, rng=1)
    delta = B / 2**b
    assert np.ceil(np.quantile(norms, 0.5) / delta) * delta == pytest.approx(r.C_hat, abs=delta + 1e-9)
    # with bins wider than the largest norm, every threshold Delta * v_hat >= max norm: nobody is clipped and
    # x_hat is unbiased for the mean histogram. R = 200 runs; each coordinate's mean within 4 s.e.
    rng = np.random.default_rng(2)
    B_wide = 2**b * (norms.max() + 1.0)
    runs = np.array(
        [tffe(x, U, B=B_wide, b=b, theta=0.25, m=64, theta_q=0.25, m_q=3, gamma=0.9, rng=rng).x_hat for _ in range(200)]
    )
    se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - x.mean(axis=0)) < 4 * se)


def test_tffe_default_gamma_is_eq5():
    from fedfreq.cpbm import optimal_quantile

    x, U = _data()
    r = tffe(x, U, B=100.0, b=4, theta=0.2, m=30, theta_q=0.2, m_q=3, rng=3)
    assert r.gamma == pytest.approx(optimal_quantile(D=U.shape[1], m=30, n=x.shape[0], theta=0.2))


def test_tffe_rdp_is_the_sum_of_the_two_steps():
    orders = np.array([2.0, 8.0, 32.0])
    kw = dict(n=10_000, D=100, b=6, theta=0.2, m=30, theta_q=0.2, m_q=3)
    total = tffe_rdp(orders, **kw)
    freq = cpbm_rdp(orders, n=10_000, theta=0.2, m=30, dim=100)
    assert np.allclose(total, freq + 11 * cpbm_rdp(orders, n=10_000, theta=0.2, m=3, dim=1))
    assert np.allclose(
        tffe_rdp(orders, **kw, rule="all"), freq + 63 * cpbm_rdp(orders, n=10_000, theta=0.2, m=3, dim=1)
    )
    assert np.allclose(total - freq, histogram_rdp(orders, encoding="dht", b=6, n=10_000, m=3, theta=0.2))


def test_mffe_converges_to_the_target_quantile():
    # precise indicator (m_q large): after 40 rounds the threshold's quantile level is near gamma
    x, U = _data(n=4000, seed=4)
    norms = np.linalg.norm(kashin_representation(x, U, **KASHIN), axis=1)
    r = mffe(x, U, rounds=40, theta=0.25, m=8, theta_q=0.25, m_q=2048, gamma=0.8, C0=1.0, lr=1.0, rng=5)
    level = np.mean(norms <= r.C[-1])
    # per-round indicator s.d. ~ sqrt(0.16/100) = 0.04 plus cPBM noise; the geometric update averages it
    assert abs(level - 0.8) < 0.1
    assert r.C.shape == (41,) and r.gamma_hat.shape == (40,)
    assert np.allclose(r.x_hat, r.round_estimates.mean(axis=0))


def test_mffe_targets_and_rdp():
    from fedfreq.cpbm import optimal_quantile

    x, U = _data(n=400)
    r_n = mffe(x, U, rounds=4, theta=0.2, m=30, theta_q=0.2, m_q=3, rng=6)
    r_N = mffe(x, U, rounds=4, theta=0.2, m=30, theta_q=0.2, m_q=3, target="N", rng=6)
    assert r_n.gamma == pytest.approx(optimal_quantile(D=8, m=30, n=400, theta=0.2))
    assert r_N.gamma == pytest.approx(optimal_quantile(D=8, m=30, n=100, theta=0.2))
    orders = np.array([2.0, 10.0])
    assert np.allclose(
        mffe_rdp(orders, N=100, D=8, theta=0.2, m=30, theta_q=0.2, m_q=3),
        cpbm_rdp(orders, n=100, theta=0.2, m=30, dim=8) + cpbm_rdp(orders, n=100, theta=0.2, m=3, dim=1),
    )


def test_bad_inputs():
    x, U = _data(n=100)
    with pytest.raises(ValueError, match="rounds must divide"):
        mffe(x, U, rounds=3, theta=0.2, m=4, theta_q=0.2, m_q=4)
    with pytest.raises(ValueError, match="lr"):
        mffe(x, U, rounds=4, theta=0.2, m=4, theta_q=0.2, m_q=4, lr=0.0)
    with pytest.raises(ValueError, match="C0"):
        mffe(x, U, rounds=4, theta=0.2, m=4, theta_q=0.2, m_q=4, C0=-1.0)
    with pytest.raises(ValueError, match="b must"):
        tffe(x, U, B=10.0, b=0, theta=0.2, m=4, theta_q=0.2, m_q=4)
    with pytest.raises(ValueError, match="B must"):
        tffe(x, U, B=0.0, b=3, theta=0.2, m=4, theta_q=0.2, m_q=4)
    with pytest.raises(ValueError, match="x must have d"):
        tffe(x[:, :3], U, B=10.0, b=3, theta=0.2, m=4, theta_q=0.2, m_q=4)
    with pytest.raises(ValueError, match="rule"):
        tffe(x, U, B=10.0, b=3, theta=0.2, m=4, theta_q=0.2, m_q=4, rule="median")


# ---------------------------------------------------------------------------
# baselines of Sec. 5.2
# ---------------------------------------------------------------------------


def test_sample_items_sizes_and_means():
    from fedfreq.protocols import sample_items

    x = np.array([[5, 3, 2, 0], [1, 0, 0, 0], [0, 0, 0, 0], [2, 2, 2, 2]] * 500)
    out = sample_items(x, 4, rng=7)
    assert np.array_equal(out.sum(axis=1), np.minimum(x.sum(axis=1), 4))
    assert np.all((out >= 0) & (out <= x))
    # user type 1 (10 items, keep 4): E kept_j = 4 x_j / 10; 500 users, hypergeometric variances, 4 s.e.
    rows = out[0::4]
    N, K = 10, 4
    mean = K * x[0] / N
    var = K * (x[0] / N) * (1 - x[0] / N) * (N - K) / (N - 1)
    assert np.all(np.abs(rows.mean(axis=0) - mean) <= 4 * np.sqrt(var / len(rows)) + 1e-12)


def test_normalize_and_sample_are_unbiased_for_their_own_targets():
    from fedfreq.protocols import normalize_estimate, sample_estimate

    x, U = _data(n=300)
    rng = np.random.default_rng(8)
    R = 150  # mean of R runs within 4 s.e. (sample s.d. / sqrt(R)) of the target
    runs = np.array([normalize_estimate(x, U, theta=0.25, m=32, rng=rng) for _ in range(R)])
    target = (x / np.linalg.norm(x, axis=1, keepdims=True).clip(min=1e-300)).mean(axis=0)
    assert np.all(np.abs(runs.mean(axis=0) - target) < 4 * runs.std(axis=0, ddof=1) / np.sqrt(R))
    # Sample(k) with k >= every user's size keeps everything: unbiased for the mean histogram
    k = int(x.sum(axis=1).max())
    runs = np.array([sample_estimate(x, U, k=k, theta=0.25, m=32, rng=rng) for _ in range(R)])
    assert np.all(np.abs(runs.mean(axis=0) - x.mean(axis=0)) < 4 * runs.std(axis=0, ddof=1) / np.sqrt(R))


def test_gaussian_baselines_variance():
    from fedfreq.accounting import gaussian_sigma
    from fedfreq.protocols import central_gaussian_estimate, local_gaussian_estimate

    x, _ = _data(n=200)
    C = float(np.linalg.norm(x, axis=1).max()) + 1.0  # no clipping: unbiased
    sigma = gaussian_sigma(1.0, 1e-5, sensitivity=2 * C)
    rng = np.random.default_rng(9)
    R = 800  # sample variance within 4 s.e. (relative sqrt(2/R)); mean within 4 s.e.
    for fn, var in ((central_gaussian_estimate, sigma**2 / 200**2), (local_gaussian_estimate, sigma**2 / 200)):
        runs = np.array([fn(x, C=C, epsilon=1.0, delta=1e-5, rng=rng) for _ in range(R)])
        assert np.all(np.abs(runs.mean(axis=0) - x.mean(axis=0)) < 4 * np.sqrt(var / R))
        assert np.all(np.abs(runs.var(axis=0, ddof=1) / var - 1) < 4 * np.sqrt(2 / R))


def test_tffe_epsilon_uses_the_accountant():
    from fedfreq.accounting import DEFAULT_ORDERS, rdp_to_dp
    from fedfreq.protocols import tffe_epsilon

    kw = dict(n=10_000, D=100, b=6, theta=0.2, m=30, theta_q=0.2, m_q=3)
    eps = tffe_epsilon(1e-4, **kw)
    assert eps == rdp_to_dp(DEFAULT_ORDERS, tffe_rdp(DEFAULT_ORDERS, **kw), 1e-4)[0]
    assert eps < tffe_epsilon(1e-4, **kw, rule="all")


def test_multiround_fixed_estimate_unbiased_without_clipping_and_validates():
    from fedfreq.protocols import multiround_fixed_estimate

    x, U = _data()
    norms = np.linalg.norm(kashin_representation(x, U, **KASHIN), axis=1)
    # C above every norm: no clipping, so the round average is unbiased. 100 runs, 4 standard errors.
    rng = np.random.default_rng(5)
    runs = np.array(
        [
            multiround_fixed_estimate(x, U, rounds=4, C=float(norms.max()) + 1, theta=0.25, m=32, rng=rng)
            for _ in range(100)
        ]
    )
    se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - x.mean(axis=0)) < 4 * se)
    with pytest.raises(ValueError, match="rounds"):
        multiround_fixed_estimate(x, U, rounds=7, C=1.0, theta=0.25, m=8)
    with pytest.raises(ValueError, match="C"):
        multiround_fixed_estimate(x, U, rounds=4, C=0.0, theta=0.25, m=8)


def test_precomputed_representation_gives_the_same_run_and_is_checked():
    from fedfreq.cpbm import ocpbm_estimate

    x, U = _data()
    y = kashin_representation(x, U, **KASHIN)
    a = tffe(x, U, B=60.0, b=5, theta=0.2, m=8, theta_q=0.2, m_q=4, rng=3)
    b = tffe(x, U, B=60.0, b=5, theta=0.2, m=8, theta_q=0.2, m_q=4, rng=3, y=y)
    assert np.array_equal(a.x_hat, b.x_hat) and a.C_hat == b.C_hat
    e1, C1 = ocpbm_estimate(x, U, theta=0.2, m=8, rng=5)
    e2, C2 = ocpbm_estimate(x, U, theta=0.2, m=8, rng=5, y=y)
    assert np.array_equal(e1, e2) and C1 == C2
    with pytest.raises(ValueError, match="y must have shape"):
        tffe(x, U, B=60.0, b=5, theta=0.2, m=8, theta_q=0.2, m_q=4, rng=3, y=y[:-1])
    with pytest.raises(ValueError, match="y must have shape"):
        ocpbm_estimate(x, U, theta=0.2, m=8, rng=5, y=y[:, :-1])


def test_precomputed_representation_in_mffe_multiround_and_baselines():
    # the y= argument skips Kashin's computation and changes neither the random draws nor (beyond rounding) the result
    from fedfreq.protocols import multiround_fixed_estimate, normalize_estimate, sample_estimate

    x, U = _data(n=400)
    y = kashin_representation(x, U, **KASHIN)
    a = mffe(x, U, rounds=4, theta=0.2, m=16, theta_q=0.2, m_q=16, rng=9)
    b = mffe(x, U, rounds=4, theta=0.2, m=16, theta_q=0.2, m_q=16, rng=9, y=y)
    assert np.array_equal(a.x_hat, b.x_hat) and np.array_equal(a.C, b.C)
    a = multiround_fixed_estimate(x, U, rounds=4, C=8.0, theta=0.2, m=16, rng=10)
    b = multiround_fixed_estimate(x, U, rounds=4, C=8.0, theta=0.2, m=16, rng=10, y=y)
    assert np.array_equal(a, b)
    x0 = np.vstack([x, np.zeros((1, x.shape[1]))])  # a user with no items: normalised to zero either way
    y0 = kashin_representation(x0, U, **KASHIN)
    g1, g2 = np.random.default_rng(11), np.random.default_rng(11)
    a = normalize_estimate(x0, U, theta=0.2, m=16, rng=g1)
    b = normalize_estimate(x0, U, theta=0.2, m=16, rng=g2, y=y0)
    assert np.allclose(a, b, rtol=0.0, atol=1e-12)
    assert g1.random() == g2.random()  # the same number of draws
    for k in (1, 3, 8, int(x.sum(axis=1).max())):  # sampled, partly sampled, and nobody sampled
        g1, g2 = np.random.default_rng(12), np.random.default_rng(12)
        a = sample_estimate(x, U, k=k, theta=0.2, m=16, rng=g1)
        b = sample_estimate(x, U, k=k, theta=0.2, m=16, rng=g2, y=y)
        assert np.allclose(a, b, rtol=0.0, atol=1e-12), k
        assert g1.random() == g2.random()
    for f, kw in (
        (normalize_estimate, {}),
        (sample_estimate, {"k": 2}),
        (multiround_fixed_estimate, {"rounds": 4, "C": 8.0}),
    ):
        with pytest.raises(ValueError, match="y must have shape"):
            f(x, U, theta=0.2, m=16, rng=1, y=y[:-1], **kw)
    with pytest.raises(ValueError, match="y must have shape"):
        mffe(x, U, rounds=4, theta=0.2, m=16, theta_q=0.2, m_q=16, rng=9, y=y[:, :-1])


def test_quantile_mechanism_draws_as_cpbm_encode():
    # the coordinate-wise cPBM of the quantile step skips the (identity) clipping of cpbm_encode: same draws
    from fedfreq import secagg
    from fedfreq.cpbm import cpbm_decode, cpbm_encode
    from fedfreq.quantiles import cpbm_sum_mechanism, histogram_user_vectors

    u = histogram_user_vectors(np.random.default_rng(3).integers(0, 16, size=300), encoding="dht", b=4)
    got = cpbm_sum_mechanism(m=3, theta=0.2)(u, np.random.default_rng(4))
    g = np.random.default_rng(4)
    z = cpbm_encode(u.reshape(-1, 1).astype(float), theta=0.2, C=1.0, m=3, rng=g).reshape(u.shape)
    total = secagg.secure_sum(z, modulus=secagg.modulus_for(300, 3), max_entry=3, rng=g)
    assert np.array_equal(got, 300 * cpbm_decode(total, n=300, theta=0.2, C=1.0, m=3))
