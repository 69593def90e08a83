"""Tests for :mod:`fedfreq.quantiles` (the OcPBM paper, Sec. 4, Algs. 4-5, Props. 1-3)."""

from __future__ import annotations

import importlib.util
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedfreq.quantiles import (
    ENCODINGS,
    average_bin_error,
    cpbm_coordinate_variance,
    cpbm_sum_mechanism,
    cpbm_sum_sampler,
    dht_variance_bound,
    discretize_values,
    exact_sum_mechanism,
    federated_quantile,
    flat_variance_bound,
    haar_transform,
    hh_variance_bound,
    histogram_changed_coordinates,
    histogram_dimension,
    histogram_prefix_counts,
    histogram_rdp,
    histogram_user_vectors,
    inverse_haar_transform,
    max_prefix_weight,
    prefix_variance,
    prefix_weights,
    quantile_from_prefix,
    range_count,
)

HAVE_CPBM = importlib.util.find_spec("fedfreq.cpbm") is not None


def gaussian_stand_in(sigma: float):
    """Additive independent N(0, sigma^2) noise on every column sum (a test stand-in)."""

    def mech(u, rng):
        u = np.asarray(u, dtype=float)
        return u.sum(axis=0) + rng.normal(0.0, sigma, size=u.shape[1])

    return mech


# ---------------------------------------------------------------------------
# Haar transform: exact round trip, orthogonality, Eq. 6 vs Eq. 7 scaling
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("b", range(1, 11))
@pytest.mark.parametrize("rescaled", [True, False])
def test_haar_round_trip_is_exact(b, rescaled):
    rng = np.random.default_rng([11, b])
    counts = rng.integers(0, 10**6, size=(5, 2**b))
    h0, h = haar_transform(counts, rescaled=rescaled)
    back = inverse_haar_transform(h0, h, rescaled=rescaled)
    assert np.array_equal(back, counts.astype(float))  # exact, not approximate


def test_haar_matches_definition_with_fractions():
    # Eq. 6 computed node by node in exact rational arithmetic, b = 3
    b = 3
    counts = [5, 0, 2, 7, 1, 1, 0, 3]
    h0, h = haar_transform(counts, rescaled=False)
    assert Fraction(float(h0)) == Fraction(sum(counts), 2**b)  # H0 is the MEAN
    idx = 0
    for level in range(b, 0, -1):
        for j in range(2 ** (b - level)):
            lo = j * 2**level
            half = 2 ** (level - 1)
            a_l = sum(counts[lo : lo + half])
            a_r = sum(counts[lo + half : lo + 2 * half])
            assert Fraction(float(h[idx])) == Fraction(a_l - a_r, 2**level)
            idx += 1


def test_base_coefficient_as_sum_does_not_decode():
    # the paper's wording "H0 = sum of the counts" breaks Eq. 7 by (2^b - 1) H0 / 2^b per leaf
    counts = np.array([3, 1, 0, 2, 4, 0, 0, 6])
    h0, h = haar_transform(counts)
    wrong = inverse_haar_transform(counts.sum(), h)
    assert np.allclose(wrong - counts, counts.sum() - h0)


@pytest.mark.parametrize("b", range(1, 9))
def test_haar_basis_is_orthogonal(b):
    psi = histogram_user_vectors(np.arange(2**b), encoding="dht", b=b).astype(np.int64)  # (leaves, nodes)
    gram = psi.T @ psi
    levels = np.concatenate([np.full(2 ** (b - lv), lv) for lv in range(b, 0, -1)])
    assert np.array_equal(gram, np.diag(2**levels))
    assert np.all(psi.sum(axis=0) == 0)  # orthogonal to the constant vector


@pytest.mark.parametrize("b", [1, 2, 5])
def test_user_vectors_are_haar_of_one_hot(b):
    bins = np.arange(2**b)
    one_hot = np.eye(2**b)
    _, h = haar_transform(one_hot)
    assert np.array_equal(histogram_user_vectors(bins, encoding="dht", b=b), h)
    u = histogram_user_vectors(bins, encoding="dht", b=b)
    assert np.all((u != 0).sum(axis=1) == b)  # one +-1 per level


def test_coefficients_of_a_random_user_are_correlated_unless_uniform():
    b = 2
    psi = histogram_user_vectors(np.arange(4), encoding="dht", b=b).astype(float)
    uniform = np.full(4, 0.25)
    skewed = np.array([0.7, 0.1, 0.1, 0.1])
    for p, zero in ((uniform, True), (skewed, False)):
        mean = p @ psi
        cov = psi.T @ (p[:, None] * psi) - np.outer(mean, mean)
        off = cov - np.diag(np.diag(cov))
        assert np.allclose(off, 0.0) == zero


# ---------------------------------------------------------------------------
# encodings and decoders
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("b", [1, 3, 6])
def test_noiseless_prefix_counts_are_exact(encoding, b):
    rng = np.random.default_rng([12, b])
    bins = rng.integers(0, 2**b, size=500)
    u = histogram_user_vectors(bins, encoding=encoding, b=b)
    assert u.shape == (500, histogram_dimension(encoding, b))
    prefix = histogram_prefix_counts(exact_sum_mechanism(u), encoding=encoding, b=b, n=500)
    truth = np.cumsum(np.bincount(bins, minlength=2**b))
    assert np.array_equal(prefix, truth.astype(float))


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("b", [1, 2, 4, 7])
def test_prefix_weights_reproduce_the_decoder(encoding, b):
    rng = np.random.default_rng([13, b])
    dim = histogram_dimension(encoding, b)
    s = rng.normal(size=dim)
    n = 37
    v = np.arange(1, 2**b + 1)
    w = prefix_weights(v, encoding=encoding, b=b)
    const = {"flat": 0 * v, "hh": n * (v == 2**b), "dht": v * n / 2**b}[encoding]
    assert np.allclose(const + w @ s, histogram_prefix_counts(s, encoding=encoding, b=b, n=n))


@pytest.mark.parametrize("b", range(1, 10))
def test_proof_counting(b):
    v = np.arange(1, 2**b + 1)
    # Prop. 2: a prefix uses popcount(v) <= b nodes
    w = prefix_weights(v, encoding="hh", b=b)
    used = (w != 0).sum(axis=1)
    assert np.array_equal(used[:-1], [bin(x).count("1") for x in v[:-1]]) and used.max() <= b
    # Prop. 3: at most one non-zero weight per level, |s_L - s_R| / 2^l <= 1/2
    w = prefix_weights(v, encoding="dht", b=b)
    for level in range(1, b + 1):
        start = 2 ** (b - level) - 1
        block = w[:, start : 2 * start + 1]
        assert np.all((block != 0).sum(axis=1) <= 1)
        assert np.all(np.abs(block) * 2**level <= 2 ** (level - 1))
    assert np.abs(w).max() == 0.5


@pytest.mark.parametrize("b", range(1, 11))
def test_worst_case_prefix_weights(b):
    assert max_prefix_weight("flat", b) == (float(2**b), 2**b)
    assert max_prefix_weight("hh", b) == (float(b), 2**b - 1)
    dht, _ = max_prefix_weight("dht", b)
    assert b / 9 <= dht <= b / 4  # Prop. 3's b/4 holds; the truth grows like b/9


def test_range_count_and_quantile_search():
    prefix = np.array([1.0, 3.0, 3.0, 4.0])
    assert float(range_count(prefix, 1, 4)) == 4.0
    assert float(range_count(prefix, 2, 3)) == 2.0
    t = quantile_from_prefix(prefix, [0.25, 0.75, 1.0], n=4, B=8.0)
    assert t.tolist() == [2.0, 4.0, 8.0]
    # batched prefixes
    tt = quantile_from_prefix(np.stack([prefix, prefix]), [0.25, 0.75], n=4, B=8.0)
    assert tt.shape == (2, 2)


def test_federated_quantile_noiseless_matches_empirical_quantile():
    rng = np.random.default_rng(14)
    x = rng.exponential(2.0, size=4000)
    B, b = float(np.ceil(x.max())), 8
    gammas = np.linspace(0.8, 0.99, 20)
    for enc in ENCODINGS:
        r = federated_quantile(x, gammas, encoding=enc, B=B, b=b)
        delta = B / 2**b
        # the bin edge found is within one bin of the empirical quantile
        assert np.all(np.abs(r.threshold - np.quantile(x, gammas)) <= delta + 1e-12)
    assert average_bin_error(r.threshold, r.threshold, B=B, b=b) == 0.0


def test_discretize_edges():
    assert discretize_values([0.0, 0.5, 0.5000001, 2.0], B=2.0, b=2).tolist() == [0, 0, 1, 3]
    assert discretize_values([3.0], B=2.0, b=2, out_of_range="last_bin").tolist() == [3]
    with pytest.raises(ValueError, match="values must lie in"):
        discretize_values([3.0], B=2.0, b=2)


# ---------------------------------------------------------------------------
# variance: formulas vs Monte Carlo with a stand-in additive noise
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_prefix_variance_matches_monte_carlo(encoding):
    # R = 4000 independent noise draws; the sample variance has relative s.e. sqrt(2/(R-1)) = 2.2%,
    # so 4 standard errors allow 9% relative deviation.
    b, R, n = 5, 4000, 200
    rng = np.random.default_rng([15, ENCODINGS.index(encoding)])
    bins = rng.integers(0, 2**b, size=n)
    u = histogram_user_vectors(bins, encoding=encoding, b=b).astype(float)
    dim = u.shape[1]
    sig = rng.uniform(1.0, 3.0, size=dim)  # heterogeneous, independent noise per coordinate
    noisy = u.sum(axis=0) + rng.normal(size=(R, dim)) * sig
    prefix = histogram_prefix_counts(noisy, encoding=encoding, b=b, n=n)
    v = np.array([1, 7, 11, 21, 31])
    emp = prefix[:, v - 1].var(axis=0, ddof=1)
    theory = prefix_variance(v, encoding=encoding, b=b, coordinate_variance=sig**2)
    assert np.all(np.abs(emp / theory - 1) < 4 * np.sqrt(2 / (R - 1)))


def test_bounds_relations_and_as_printed():
    kw = dict(B=64.0, Delta=1.0, m=3, n=1000, theta=0.2)
    f, h, d = flat_variance_bound(**kw), hh_variance_bound(**kw), dht_variance_bound(**kw)
    assert np.isclose(f, 64 / (4 * 3 * 1000 * 0.04))
    assert np.isclose(h, 6 / (4 * 3 * 1000 * 0.04)) and np.isclose(d, h / 4)
    for fn in (flat_variance_bound, hh_variance_bound, dht_variance_bound):
        assert np.isclose(fn(**kw) / fn(**kw, as_printed=True), 1000)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_exact_cpbm_variance_below_bound(encoding):
    b, n, m, theta = 6, 500, 3, 0.2
    rng = np.random.default_rng(16)
    u = histogram_user_vectors(rng.integers(0, 2**b, size=n), encoding=encoding, b=b)
    var = cpbm_coordinate_variance((u.astype(float) ** 2).sum(axis=0), n=n, m=m, theta=theta)
    v = np.arange(1, 2**b + 1)
    frac_var = prefix_variance(v, encoding=encoding, b=b, coordinate_variance=var) / n**2
    bound = {"flat": flat_variance_bound, "hh": hh_variance_bound, "dht": dht_variance_bound}[encoding](
        B=2.0**b, Delta=1.0, m=m, n=n, theta=theta
    )
    assert frac_var.max() <= bound * (1 + 1e-12)
    # and the n^2 version printed in the paper is violated
    assert frac_var.max() > bound / n


@pytest.mark.skipif(not HAVE_CPBM, reason="fedfreq.cpbm not available")
def test_cpbm_mechanism_unbiased_and_variance():
    # R = 1500 runs; mean within 4 s.e.; variance within 4 s.e. of a sample variance (rel. sqrt(2/R))
    b, n, m, theta, R = 3, 50, 4, 0.2, 1500
    rng = np.random.default_rng(17)
    u = histogram_user_vectors(rng.integers(0, 2**b, size=n), encoding="dht", b=b)
    mech = cpbm_sum_mechanism(m=m, theta=theta)
    draws = np.array([mech(u, rng) for _ in range(R)])
    var = cpbm_coordinate_variance((u.astype(float) ** 2).sum(axis=0), n=n, m=m, theta=theta)
    se = np.sqrt(var / R)
    assert np.all(np.abs(draws.mean(axis=0) - u.sum(axis=0)) < 4 * se)
    assert np.all(np.abs(draws.var(axis=0, ddof=1) / var - 1) < 4 * np.sqrt(2 / R))


def test_fast_sampler_matches_per_user_law():
    # per-user Binomial reports (test stand-in for the cPBM encoder) vs the aggregate sampler:
    # means within 4 s.e., variances within 4 s.e. (relative sqrt(2/R)) of the exact variance
    b, n, m, theta, R = 3, 40, 3, 0.2, 4000
    rng = np.random.default_rng(19)
    u = histogram_user_vectors(rng.integers(0, 2**b, size=n), encoding="dht", b=b)
    var = cpbm_coordinate_variance((u.astype(float) ** 2).sum(axis=0), n=n, m=m, theta=theta)
    fast = np.array([cpbm_sum_sampler(u, m=m, theta=theta, rng=rng) for _ in range(R)])
    slow = (rng.binomial(m, 0.5 + theta * u, size=(R,) + u.shape).sum(axis=1) - m * n / 2) / (m * theta)
    for draws in (fast, slow):
        assert np.all(np.abs(draws.mean(axis=0) - u.sum(axis=0)) < 4 * np.sqrt(var / R))
        assert np.all(np.abs(draws.var(axis=0, ddof=1) / var - 1) < 4 * np.sqrt(2 / R))
    with pytest.raises(ValueError, match="entries in"):
        cpbm_sum_sampler([[0.5]], m=1, theta=0.2)


def test_stand_in_end_to_end():
    rng = np.random.default_rng(18)
    x = rng.uniform(0, 10, size=100_000)
    r = federated_quantile(x, 0.9, encoding="dht", B=10.0, b=8, mechanism=gaussian_stand_in(50.0), rng=rng)
    assert abs(float(r.threshold) - 9.0) < 0.2  # s.d. of the fraction ~ 50 * 0.5 * sqrt(8/9)/1e5


# ---------------------------------------------------------------------------
# privacy: changed coordinates, exact audit of the histogram release
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("b", range(1, 8))
def test_changed_coordinates_by_enumeration(encoding, b):
    u = histogram_user_vectors(np.arange(2**b), encoding=encoding, b=b).astype(np.int64)
    diff = (u[:, None, :] != u[None, :, :]).sum(axis=2)
    assert diff.max() == histogram_changed_coordinates(encoding, b)
    # the full-swing change (-1 <-> +1) happens on at most one coordinate (the common ancestor)
    full = (np.abs(u[:, None, :] - u[None, :, :]) == 2).sum(axis=2)
    assert full.max() == (1 if encoding == "dht" else 0)


def _exact_release_divergence(encoding, b, n, m, theta_true, orders):
    """max over neighbouring datasets of the exact Renyi divergence of all coordinate sums."""
    import itertools

    from fedfreq.accounting import poisson_binomial_logpmf, renyi_divergence

    vec = histogram_user_vectors(np.arange(2**b), encoding=encoding, b=b).astype(float)
    best = np.zeros(len(orders))
    for others in itertools.combinations_with_replacement(range(2**b), n - 1):
        po = 0.5 + theta_true * vec[list(others)]  # (n-1, dim)
        for u in range(2**b):
            for u2 in range(2**b):
                if u == u2:
                    continue
                tot = np.zeros(len(orders))
                for k in np.flatnonzero(vec[u] != vec[u2]):
                    lp = poisson_binomial_logpmf(np.append(po[:, k], 0.5 + theta_true * vec[u, k]), m=m)
                    lq = poisson_binomial_logpmf(np.append(po[:, k], 0.5 + theta_true * vec[u2, k]), m=m)
                    tot += np.array([renyi_divergence(lp, lq, o) for o in orders])
                best = np.maximum(best, tot)
    return best


@pytest.mark.parametrize("encoding, m", [("flat", 1), ("hh", 1), ("dht", 1), ("dht", 2)])
def test_privacy_audit_exact_divergence(encoding, m):
    b, n, theta = 2, 3, 0.2
    orders = np.array([2.0, 32.0])
    exact = _exact_release_divergence(encoding, b, n, m, theta, orders)
    claimed = histogram_rdp(orders, encoding=encoding, b=b, n=n, m=m, theta=theta)
    assert np.all(exact <= claimed * (1 + 1e-9))
    assert np.all(claimed <= histogram_rdp(orders, encoding=encoding, b=b, n=n, m=m, theta=theta, rule="all"))
    # the audit catches a weakened mechanism that really uses theta = 0.45 while claiming 0.2
    weak = _exact_release_divergence(encoding, b, n, m, 0.45, orders)
    assert np.any(weak > claimed)


# ---------------------------------------------------------------------------
# exercise checker
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(b=st.integers(max_value=0) | st.integers(min_value=21, max_value=100))
def test_bad_b_raises(b):
    with pytest.raises(ValueError, match="b must"):
        histogram_dimension("dht", b)


@settings(max_examples=30, deadline=None)
@given(B=st.floats(max_value=0.0) | st.just(float("nan")) | st.just(float("inf")))
def test_bad_range_raises(B):
    with pytest.raises(ValueError, match="B must"):
        discretize_values([0.1], B=B, b=3)


@settings(max_examples=30, deadline=None)
@given(g=st.floats(min_value=1.0000001, max_value=10) | st.floats(max_value=-1e-9, min_value=-10))
def test_bad_gamma_raises(g):
    with pytest.raises(ValueError, match="gamma"):
        quantile_from_prefix([1.0, 2.0], g, n=2, B=1.0)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="encoding"):
        histogram_dimension("wavelet", 3)
    with pytest.raises(ValueError, match="bins"):
        histogram_user_vectors([8], encoding="flat", b=3)
    with pytest.raises(ValueError, match="values"):
        discretize_values([-0.1], B=1.0, b=3)
    with pytest.raises(ValueError, match="counts"):
        haar_transform([1, 2, 3])
    with pytest.raises(ValueError, match="coeffs"):
        inverse_haar_transform(0.0, [1.0, 2.0])
    with pytest.raises(ValueError, match="sums"):
        histogram_prefix_counts([1.0, 2.0], encoding="dht", b=3, n=4)
    with pytest.raises(ValueError, match="theta"):
        flat_variance_bound(B=1.0, Delta=0.5, m=1, n=1, theta=0.3)
    with pytest.raises(ValueError, match="Delta"):
        hh_variance_bound(B=1.0, Delta=2.0, m=1, n=1, theta=0.2)
    with pytest.raises(ValueError, match="user_vectors"):
        exact_sum_mechanism([[2.0]])
    with pytest.raises(ValueError, match="mechanism must return"):
        federated_quantile([0.1], 0.5, B=1.0, b=2, mechanism=lambda u, g: np.zeros(2))
    with pytest.raises(ValueError, match="hi"):
        range_count([1.0, 2.0], 2, 1)
