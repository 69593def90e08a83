"""fedfreq.deploy: the float-sampler attack, and exact discrete noise with OpenDP."""

import math

import numpy as np
import opendp.prelude as dp
import pytest
from scipy import stats

from fedfreq import accounting, deploy

dp.enable_features("contrib")


def test_model_reproduces_numpy_laplace_bit_for_bit():
    for seed, loc, scale in ((0, 0.0, 1.0), (1, -3.25, 0.1), (2, 1e6, 7.0)):
        u = np.random.default_rng(seed).random(5000)
        draws = np.random.default_rng(seed).laplace(loc, scale, 5000)
        assert np.array_equal(deploy.numpy_laplace_model(u, loc, scale), draws)


def test_possible_outputs_are_recognised_and_perturbed_ones_are_not():
    y = np.random.default_rng(5).laplace(0.0, 1.0, 2000)
    assert deploy.numpy_laplace_possible(y, 0.0, 1.0).all()
    # the attack: most outputs at 0 are impossible at 1 (the neighbour)
    assert deploy.numpy_laplace_possible(y, 1.0, 1.0).mean() < 0.3
    # in the tail, consecutive uniforms give outputs about 1e-6 apart (far more than an ulp):
    # the doubles strictly between them are never outputs
    k = 2**20
    lo, hi = deploy.numpy_laplace_model(np.array([k, k + 1]) * 2.0**-53, 0.0, 1.0)
    assert hi - lo > 1e-7
    between = np.array([np.nextafter(lo, hi), (lo + hi) / 2, np.nextafter(hi, lo)])
    assert np.all((between > lo) & (between < hi))
    assert not deploy.numpy_laplace_possible(between, 0.0, 1.0).any()
    assert deploy.numpy_laplace_possible([lo, hi], 0.0, 1.0).all()


def test_float_gap_fraction_matches_the_issue_setting():
    trials = 4000
    gap = deploy.float_laplace_gap(0.0, 1.0, 1.0, trials=trials, rng=11)
    se = math.sqrt(0.25 / trials)
    assert gap - 4 * se > 0.7  # about 0.81 (C = 1, eps = 1)


def test_discrete_release_has_no_gap():
    """The attack's distinguishing event has probability 0 under the discrete sampler:
    every integer output at f is possible at f + 1, with log-ratio at most 1/t."""
    t = 1.0
    out = deploy.release_counts(np.zeros(5000, dtype=int), mechanism="laplace", scale=t, rng=3)
    lp = deploy.discrete_laplace_logpmf(out, t)
    lq = deploy.discrete_laplace_logpmf(out - 1, t)
    assert np.all(np.isfinite(lq))
    assert np.max(lp - lq) <= 1 / t + 1e-12


@pytest.mark.parametrize("t", [0.3, 1.0, 4.0])
def test_discrete_laplace_pmf_and_epsilon(t):
    k = np.arange(-int(80 * t) - 80, int(80 * t) + 81)
    p = np.exp(deploy.discrete_laplace_logpmf(k, t))
    assert abs(p.sum() - 1) < 1e-12
    for delta1 in (1, 2, 5):
        ratio = deploy.discrete_laplace_logpmf(k, t) - deploy.discrete_laplace_logpmf(k - delta1, t)
        assert abs(ratio.max() - accounting.discrete_laplace_epsilon(t, delta1)) < 1e-12
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=t)
        assert math.isclose(meas.map(delta1), accounting.discrete_laplace_epsilon(t, delta1), rel_tol=1e-12)


@pytest.mark.parametrize("sigma", [0.7, 2.0, 6.0])
def test_discrete_gaussian_zcdp_and_opendp_map(sigma):
    k = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
    orders = np.array([1.5, 2.0, 3.0, 10.0])
    for delta2 in (1, 3):
        div = accounting.renyi_divergence(
            deploy.discrete_gaussian_logpmf(k, sigma), deploy.discrete_gaussian_logpmf(k - delta2, sigma), orders
        )
        rho = accounting.discrete_gaussian_rho(sigma, delta2)
        assert np.all(div <= accounting.rdp_zcdp(orders, rho) * (1 + 1e-12))
        # integer orders: equality (the shifted lattice sum is the normaliser itself)
        assert math.isclose(div[1], 2 * rho, rel_tol=1e-9) and math.isclose(div[3], 10 * rho, rel_tol=1e-9)
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float), scale=sigma)
        assert math.isclose(meas.map(float(delta2)), rho, rel_tol=1e-12)


def _chi2(draws, logpmf, k_max):
    cells = np.arange(-k_max, k_max + 1)
    p = np.exp(logpmf(cells))
    expected = np.concatenate([[(1 - p.sum()) / 2], p, [(1 - p.sum()) / 2]]) * draws.size
    observed = np.concatenate([[np.sum(draws < -k_max)], [np.sum(draws == c) for c in cells], [np.sum(draws > k_max)]])
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("backend", ["numpy", "opendp"])
def test_samplers_draw_the_assumed_law(backend):
    """Chi-squared goodness of fit, 20 000 draws; false-fail probability 1e-4 per law."""
    n = 20_000
    lap = deploy.discrete_laplace(1.5, n, rng=21, backend=backend)
    gauss = deploy.discrete_gaussian(2.5, n, rng=22, backend=backend)
    assert lap.dtype == gauss.dtype == np.int64 and lap.shape == gauss.shape == (n,)
    assert _chi2(lap, lambda k: deploy.discrete_laplace_logpmf(k, 1.5), 8) > 1e-4
    assert _chi2(gauss, lambda k: deploy.discrete_gaussian_logpmf(k, 2.5), 8) > 1e-4


def test_chi2_catches_a_wrong_law():
    """Control: a sampler with the wrong scale is rejected."""
    wrong = deploy.discrete_laplace(2.0, 20_000, rng=23)
    assert _chi2(wrong, lambda k: deploy.discrete_laplace_logpmf(k, 1.5), 8) < 1e-6


def test_numpy_backend_is_reproducible():
    a = deploy.release_counts([[1, 2], [3, 4]], mechanism="gaussian", scale=2.0, rng=9)
    b = deploy.release_counts([[1, 2], [3, 4]], mechanism="gaussian", scale=2.0, rng=9)
    assert a.shape == (2, 2) and np.array_equal(a, b)


def test_discrete_variance_not_above_continuous():
    for eps in (0.1, 1.0, 3.0):
        k = np.arange(-2000, 2001)
        var = float(np.sum(k.astype(float) ** 2 * np.exp(deploy.discrete_laplace_logpmf(k, 1 / eps))))
        assert var <= 2 / eps**2
        assert math.isclose(var / (2 / eps**2), (eps / 2) ** 2 / math.sinh(eps / 2) ** 2, rel_tol=1e-9)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="scale"):
        deploy.discrete_laplace(0.0, 3)
    with pytest.raises(ValueError, match="sigma"):
        deploy.discrete_gaussian(-1.0, 3)
    with pytest.raises(ValueError, match="size"):
        deploy.discrete_laplace(1.0, -1)
    with pytest.raises(ValueError, match="backend"):
        deploy.discrete_laplace(1.0, 3, backend="torch")
    with pytest.raises(ValueError, match="mechanism"):
        deploy.release_counts([1], mechanism="exponential", scale=1.0)
    with pytest.raises(ValueError, match="counts"):
        deploy.release_counts([1.5], mechanism="laplace", scale=1.0)
    with pytest.raises(ValueError, match="u must"):
        deploy.numpy_laplace_model([0.3], 0.0, 1.0)  # not on the 2^-53 grid? 0.3 is not a multiple
    with pytest.raises(ValueError, match="u must"):
        deploy.numpy_laplace_model([0.0], 0.0, 1.0)
    with pytest.raises(ValueError, match="trials"):
        deploy.float_laplace_gap(0.0, 1.0, 1.0, trials=0)
    with pytest.raises(ValueError, match="sensitivity"):
        accounting.discrete_laplace_epsilon(1.0, 0)
    with pytest.raises(ValueError, match="rho"):
        accounting.rdp_zcdp([2.0], -1.0)
    with pytest.raises(ValueError, match="orders"):
        accounting.rdp_zcdp([1.0], 0.1)


@pytest.mark.parametrize("mechanism,scale,var", [("laplace", 1.5, 2 * 1.5**2), ("gaussian", 2.0, 4.0)])
@pytest.mark.parametrize("backend", ["numpy", "opendp"])
def test_release_values_has_the_stated_law(mechanism, scale, var, backend):
    """Mean 0 and variance as stated, 20 000 draws, 4-standard-error tolerances; the sample
    variance's standard error is var * sqrt((2 + excess kurtosis) / n), the excess kurtosis
    being 3 for the Laplace law and 0 for the Gaussian."""
    n = 20_000
    noise = deploy.release_values(np.zeros(n), mechanism=mechanism, scale=scale, rng=31, backend=backend)
    assert noise.shape == (n,) and noise.dtype == float
    assert abs(noise.mean()) < 4 * math.sqrt(var / n)
    kurt_excess = 3.0 if mechanism == "laplace" else 0.0
    se_var = var * math.sqrt((2 + kurt_excess) / n)
    assert abs(noise.var() - var) < 4 * se_var


def test_mechanisms_switch_to_opendp():
    from fedfreq import baselines
    from fedfreq import contribution as ct

    x = np.arange(6.0).reshape(2, 3)
    assert baselines.laplace_mechanism(x, sensitivity=1.0, epsilon=1.0, backend="opendp").shape == (2, 3)
    assert isinstance(baselines.gaussian_mechanism(2.0, sensitivity=1.0, sigma=1.0, backend="opendp"), float)
    N = np.array([[3, 0, 1], [0, 5, 0]])
    assert ct.bounded_histogram(N, C=2.0, epsilon=1.0, backend="opendp").shape == (3,)
    assert ct.bounded_histogram(N, C=2.0, epsilon=1.0, delta=1e-5, backend="opendp").shape == (3,)
    # the numpy default is unchanged and reproducible
    a = baselines.laplace_mechanism(x, sensitivity=1.0, epsilon=1.0, rng=4)
    assert np.array_equal(a, baselines.laplace_mechanism(x, sensitivity=1.0, epsilon=1.0, rng=4))
    with pytest.raises(ValueError, match="backend"):
        baselines.laplace_mechanism(x, sensitivity=1.0, epsilon=1.0, backend="torch")
    with pytest.raises(ValueError, match="backend"):
        ct.bounded_histogram(N, C=2.0, epsilon=1.0, backend="torch")
