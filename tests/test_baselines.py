"""Tests of fedfreq.baselines.

Statistical tests use fixed seeds and tolerances from the CLT: a sample mean must
lie within Z = 4 standard errors of its expectation, with the standard error
computed from the *known* variance and the number of draws; a sample variance s^2
of T draws must lie within Z standard errors of the true variance v, where
SE(s^2) = v * sqrt(2/(T-1) + kurt/T) and kurt is the known excess kurtosis of a
draw (normal approximation of the sampling distribution of s^2).
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedfreq.accounting import rdp_laplace, rdp_randomized_response
from fedfreq.baselines import (
    __all__ as baselines_all,
)
from fedfreq.baselines import (
    gaussian_mechanism,
    gaussian_variance,
    kary_randomized_response,
    kary_rr_count_variance,
    kary_rr_frequency_estimate,
    laplace_mechanism,
    laplace_variance,
    oue_count_variance,
    oue_frequency_estimate,
    randomized_response,
    rr_count_variance,
    rr_debias_count,
)

Z = 4.0
HYP = settings(max_examples=40, deadline=None, database=None)


def assert_mean(sample_mean, expected, variance_of_one, n, label=""):
    se = math.sqrt(variance_of_one / n)
    assert abs(sample_mean - expected) <= Z * se, f"{label}: mean {sample_mean} vs {expected} (4 SE = {Z * se})"


def assert_variance(sample_var, expected, n, excess_kurtosis=0.0, label=""):
    se = expected * math.sqrt(2.0 / (n - 1) + excess_kurtosis / n)
    assert abs(sample_var - expected) <= Z * se, f"{label}: var {sample_var} vs {expected} (4 SE = {Z * se})"


def kary_probs(epsilon, k):
    e = math.exp(epsilon)
    return e / (e + k - 1), 1 / (e + k - 1)


def bernoulli_sum_excess_kurtosis(probs):
    """Excess kurtosis of a sum of independent Bernoulli(p_i): sum p q (1 - 6 p q) / (sum p q)^2."""
    v = np.asarray(probs) * (1 - np.asarray(probs))
    return float(np.sum(v * (1 - 6 * v)) / np.sum(v) ** 2)


# ---------------------------------------------------------------------------
# surface, shapes, determinism
# ---------------------------------------------------------------------------


def test_all_names_exist():
    import fedfreq.baselines as mod

    for name in baselines_all:
        assert callable(getattr(mod, name)), name


def test_shapes_scalars_and_seeding():
    x = np.arange(12.0).reshape(3, 4)
    a = laplace_mechanism(x, sensitivity=1.0, epsilon=0.5, rng=3)
    b = laplace_mechanism(x, sensitivity=1.0, epsilon=0.5, rng=3)
    assert a.shape == x.shape and np.array_equal(a, b)
    assert isinstance(laplace_mechanism(5.0, sensitivity=1.0, epsilon=1.0, rng=0), float)
    assert isinstance(gaussian_mechanism(5, sensitivity=1.0, sigma=1.0, rng=0), float)
    g = np.random.default_rng(11)
    first = gaussian_mechanism(x, sensitivity=1.0, sigma=2.0, rng=g)
    second = gaussian_mechanism(x, sensitivity=1.0, sigma=2.0, rng=g)
    assert not np.array_equal(first, second)  # a Generator's stream continues
    bits = np.array([[0, 1, 1], [1, 0, 0]])
    rr = randomized_response(bits, epsilon=1.0, rng=5)
    assert rr.shape == bits.shape and rr.dtype == np.int64 and set(np.unique(rr)) <= {0, 1}
    items = np.array([0, 4, 2, 2, 1])
    kr = kary_randomized_response(items, k=5, epsilon=1.0, rng=5)
    assert kr.shape == items.shape and kr.dtype == np.int64 and kr.min() >= 0 and kr.max() <= 4
    assert np.array_equal(kr, kary_randomized_response(items, k=5, epsilon=1.0, rng=5))
    est = kary_rr_frequency_estimate(kr, k=5, epsilon=1.0)
    assert est.shape == (5,) and abs(est.sum() - items.size) < 1e-9  # estimates sum to n


def test_huge_epsilon_is_identity_and_no_overflow():
    items = np.arange(50) % 7
    assert np.array_equal(kary_randomized_response(items, k=7, epsilon=800.0, rng=0), items)
    assert np.array_equal(randomized_response(items % 2, epsilon=800.0, rng=0), items % 2)
    assert np.allclose(kary_rr_frequency_estimate(items, k=7, epsilon=800.0), np.bincount(items))
    assert rr_count_variance(10, epsilon=800.0) == 0.0
    assert kary_rr_count_variance(10, 3, k=7, epsilon=800.0) == 0.0


# ---------------------------------------------------------------------------
# Laplace and Gaussian noise
# ---------------------------------------------------------------------------


def test_laplace_mechanism_mean_and_variance():
    n = 200_000
    sens, eps = 2.0, 0.5
    b = sens / eps
    values = np.full(n, 3.0)
    noise = laplace_mechanism(values, sensitivity=sens, epsilon=eps, rng=20240601) - values
    var = laplace_variance(sensitivity=sens, epsilon=eps)
    assert var == 2 * b**2
    assert_mean(noise.mean(), 0.0, var, n, "Laplace mean")
    # Laplace: excess kurtosis 3
    assert_variance(noise.var(ddof=1), var, n, excess_kurtosis=3.0, label="Laplace variance")
    # E|Z| = b with Var|Z| = b^2 (|Z| is exponential): pins down the Laplace shape
    assert_mean(np.abs(noise).mean(), b, b**2, n, "Laplace E|Z|")


def test_gaussian_mechanism_mean_and_variance():
    n = 200_000
    sigma = 1.7
    values = np.linspace(-5, 5, n)
    noise = gaussian_mechanism(values, sensitivity=1.0, sigma=sigma, rng=99) - values
    var = gaussian_variance(sigma=sigma)
    assert var == sigma**2
    assert_mean(noise.mean(), 0.0, var, n, "Gaussian mean")
    assert_variance(noise.var(ddof=1), var, n, excess_kurtosis=0.0, label="Gaussian variance")
    # E|Z| = sigma sqrt(2/pi), Var|Z| = sigma^2 (1 - 2/pi)
    assert_mean(np.abs(noise).mean(), sigma * math.sqrt(2 / math.pi), var * (1 - 2 / math.pi), n, "E|Z|")


def test_laplace_scale_matches_rdp_accounting():
    """The noise scale used by laplace_mechanism is Delta/eps, i.e. its RDP curve tends to eps."""
    assert abs(rdp_laplace(1e12, sensitivity=3.0, scale=3.0 / 0.8) - 0.8) < 1e-10


# ---------------------------------------------------------------------------
# binary randomized response
# ---------------------------------------------------------------------------


def test_randomized_response_flip_rate():
    n = 100_000
    eps = 0.8
    bits = (np.arange(n) % 3 == 0).astype(int)
    reports = randomized_response(bits, epsilon=eps, rng=7)
    q = 1 / (1 + math.exp(eps))
    flips = reports != bits
    assert_mean(flips[bits == 1].mean(), q, q * (1 - q), int((bits == 1).sum()), "flip | 1")
    assert_mean(flips[bits == 0].mean(), q, q * (1 - q), int((bits == 0).sum()), "flip | 0")


@pytest.mark.parametrize("eps,true_count", [(0.5, 150), (2.0, 30), (4.0, 0)])
def test_rr_debias_count_unbiased_with_stated_variance(eps, true_count):
    trials, n = 4000, 500
    bits = np.zeros((trials, n), dtype=int)
    bits[:, :true_count] = 1
    reports = randomized_response(bits, epsilon=eps, rng=1234 + true_count)
    estimates = rr_debias_count(reports, epsilon=eps, axis=1)
    assert estimates.shape == (trials,)
    v = rr_count_variance(n, epsilon=eps)
    assert abs(v - n * math.exp(eps) / (math.exp(eps) - 1) ** 2) <= 1e-12 * v
    p = math.exp(eps) / (1 + math.exp(eps))
    kurt = bernoulli_sum_excess_kurtosis([p] * true_count + [1 - p] * (n - true_count))
    assert_mean(estimates.mean(), true_count, v, trials, "RR mean")
    assert_variance(estimates.var(ddof=1), v, trials, kurt, "RR variance")
    # axis=None pools everything; equals the sum of per-row estimates
    assert abs(rr_debias_count(reports, epsilon=eps) - estimates.sum()) < 1e-6 * trials * n


def test_rr_count_variance_equals_kary_variance_for_k2():
    for eps in [0.1, 1.0, 3.0]:
        for c in [0, 10, 100]:
            assert abs(kary_rr_count_variance(100, c, k=2, epsilon=eps) - rr_count_variance(100, epsilon=eps)) <= (
                1e-12 * rr_count_variance(100, epsilon=eps)
            )


# ---------------------------------------------------------------------------
# k-ary randomized response
# ---------------------------------------------------------------------------


def test_kary_randomized_response_report_distribution():
    n, k, eps = 120_000, 6, 1.2
    items = np.full(n, 2)
    reports = kary_randomized_response(items, k=k, epsilon=eps, rng=42)
    p, q = kary_probs(eps, k)
    freq = np.bincount(reports, minlength=k) / n
    for j in range(k):
        target = p if j == 2 else q
        assert_mean(freq[j], target, target * (1 - target), n, f"cell {j}")
    # the item is never replaced by itself: exactly p of the mass, not p + q
    assert abs(freq[2] - p) < abs(freq[2] - (p + q))


def test_kary_rr_frequency_estimate_unbiased_with_stated_variance():
    k, eps, trials = 6, 1.0, 2000
    counts = np.array([400, 300, 150, 100, 50, 0])
    n = int(counts.sum())
    items = np.repeat(np.arange(k), counts)
    reports = kary_randomized_response(np.tile(items, (trials, 1)), k=k, epsilon=eps, rng=2024)
    estimates = np.array([kary_rr_frequency_estimate(row, k=k, epsilon=eps) for row in reports])
    variances = kary_rr_count_variance(n, counts, k=k, epsilon=eps)
    assert variances.shape == (k,)
    p, q = kary_probs(eps, k)
    for j in range(k):
        kurt = bernoulli_sum_excess_kurtosis([p] * counts[j] + [q] * (n - counts[j]))
        assert_mean(estimates[:, j].mean(), counts[j], variances[j], trials, f"item {j} mean")
        assert_variance(estimates[:, j].var(ddof=1), variances[j], trials, kurt, f"item {j} var")
        # the Wang et al. form of the same variance
        alt = n * q * (1 - q) / (p - q) ** 2 + counts[j] * (1 - p - q) / (p - q)
        assert abs(variances[j] - alt) <= 1e-10 * alt


def test_kary_rr_privacy_matches_accounting():
    """p/q = e^eps exactly, and the RDP curve of k-RR tends to that eps."""
    for k in [2, 5, 50]:
        p, q = kary_probs(1.3, k)
        reports_equal = kary_randomized_response(np.zeros(1, dtype=int), k=k, epsilon=1.3, rng=0)
        assert reports_equal.shape == (1,)
        assert abs(math.log(p / q) - 1.3) < 1e-14
        assert abs(rdp_randomized_response(1e12, epsilon=1.3, k=k) - 1.3) < 1e-10


# ---------------------------------------------------------------------------
# cross-check with pure-ldp's direct encoding (= k-RR)
# ---------------------------------------------------------------------------


def _load_pure_ldp_direct_encoding():
    """Import pure_ldp's DE client/server.

    ``pure_ldp.frequency_oracles/__init__`` imports every oracle, and its RAPPOR server
    needs scikit-learn, which pure-ldp does not declare as a dependency. The two
    direct-encoding modules only need ``pure_ldp.core``, so they are loaded by file.
    """
    try:
        from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer

        return DEClient, DEServer
    except ImportError:
        pass
    core_spec = importlib.util.find_spec("pure_ldp.core")
    if core_spec is None:  # pragma: no cover
        pytest.skip("pure_ldp is not installed")
    base = Path(core_spec.origin).parents[1] / "frequency_oracles" / "direct_encoding"
    classes = []
    for mod_name, cls_name in [("de_client", "DEClient"), ("de_server", "DEServer")]:
        spec = importlib.util.spec_from_file_location(f"_fedfreq_test_pure_ldp_{mod_name}", base / f"{mod_name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        classes.append(getattr(module, cls_name))
    return tuple(classes)


@pytest.fixture(scope="module")
def pure_ldp_de():
    return _load_pure_ldp_direct_encoding()


@pytest.fixture
def seeded_python_random():
    """pure_ldp draws from the global `random` module; seed it and restore its state."""
    state = random.getstate()
    random.seed(31415)
    yield
    random.setstate(state)


def test_pure_ldp_estimator_formula_on_identical_reports(pure_ldp_de):
    DEClient, DEServer = pure_ldp_de
    for k, eps in [(2, 0.7), (5, 1.0), (40, 3.0)]:
        client = DEClient(eps, k, index_mapper=lambda x: x)
        p, q = kary_probs(eps, k)
        assert abs(client.p - p) < 1e-15 and abs(client.q - q) < 1e-15
        items = np.random.default_rng(k).integers(0, k, size=3000)
        reports = kary_randomized_response(items, k=k, epsilon=eps, rng=k + 1)
        server = DEServer(eps, k, index_mapper=lambda x: x)
        server.aggregate_all(reports.tolist())
        theirs = server.estimate_all(range(k), suppress_warnings=True)
        ours = kary_rr_frequency_estimate(reports, k=k, epsilon=eps)
        assert np.max(np.abs(ours - theirs)) <= 1e-9 * max(1.0, np.max(np.abs(theirs)))


def test_pure_ldp_client_has_our_report_distribution(pure_ldp_de, seeded_python_random):
    DEClient, _ = pure_ldp_de
    k, eps, n = 5, 0.9, 20_000
    client = DEClient(eps, k, index_mapper=lambda x: x)
    reports = np.array([client.privatise(3) for _ in range(n)])
    p, q = kary_probs(eps, k)
    freq = np.bincount(reports, minlength=k) / n
    for j in range(k):
        target = p if j == 3 else q
        assert_mean(freq[j], target, target * (1 - target), n, f"pure_ldp cell {j}")


def test_pure_ldp_estimates_unbiased_with_our_variance(pure_ldp_de, seeded_python_random):
    """pure_ldp end to end (its client, its server): mean and variance of its estimate of
    one item over T trials agree with kary_rr_count_variance (4 SE)."""
    DEClient, DEServer = pure_ldp_de
    k, eps, trials = 4, 1.0, 1000
    counts = np.array([150, 100, 50, 0])
    n = int(counts.sum())
    items = np.repeat(np.arange(k), counts).tolist()
    client = DEClient(eps, k, index_mapper=lambda x: x)
    est = np.empty((trials, k))
    for t in range(trials):
        server = DEServer(eps, k, index_mapper=lambda x: x)
        server.aggregate_all([client.privatise(x) for x in items])
        est[t] = server.estimate_all(range(k), suppress_warnings=True)
    var = kary_rr_count_variance(n, counts, k=k, epsilon=eps)
    p, q = kary_probs(eps, k)
    for j in range(k):
        kurt = bernoulli_sum_excess_kurtosis([p] * counts[j] + [q] * (n - counts[j]))
        assert_mean(est[:, j].mean(), counts[j], var[j], trials, f"pure_ldp item {j}")
        assert_variance(est[:, j].var(ddof=1), var[j], trials, kurt, f"pure_ldp item {j} var")


# ---------------------------------------------------------------------------
# input validation (property tests)
# ---------------------------------------------------------------------------

nonpositive_or_nonfinite = st.one_of(
    st.floats(max_value=0.0, allow_nan=False),
    st.sampled_from([float("nan"), float("inf"), -float("inf")]),
)


@HYP
@given(eps=nonpositive_or_nonfinite)
def test_bad_epsilon_raises(eps):
    for call in (
        lambda: laplace_mechanism([1.0], sensitivity=1.0, epsilon=eps, rng=0),
        lambda: laplace_variance(sensitivity=1.0, epsilon=eps),
        lambda: randomized_response([0, 1], epsilon=eps, rng=0),
        lambda: rr_debias_count([0, 1], epsilon=eps),
        lambda: rr_count_variance(10, epsilon=eps),
        lambda: kary_randomized_response([0, 1], k=3, epsilon=eps, rng=0),
        lambda: kary_rr_frequency_estimate([0, 1], k=3, epsilon=eps),
        lambda: kary_rr_count_variance(10, 2, k=3, epsilon=eps),
    ):
        with pytest.raises(ValueError, match="epsilon"):
            call()


@HYP
@given(value=nonpositive_or_nonfinite)
def test_bad_sigma_and_sensitivity_raise(value):
    with pytest.raises(ValueError, match="sigma"):
        gaussian_mechanism([1.0], sensitivity=1.0, sigma=value, rng=0)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_variance(sigma=value)
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_mechanism([1.0], sensitivity=value, sigma=1.0, rng=0)
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_mechanism([1.0], sensitivity=value, epsilon=1.0, rng=0)


@HYP
@given(bad=st.one_of(st.integers(min_value=2), st.integers(max_value=-1)), pos=st.integers(0, 3))
def test_non_binary_bits_raise(bad, pos):
    bits = [0, 1, 1, 0]
    bits[pos] = bad
    with pytest.raises(ValueError, match="bits"):
        randomized_response(bits, epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="reports"):
        rr_debias_count(bits, epsilon=1.0)


@HYP
@given(k=st.integers(min_value=2, max_value=50), offset=st.integers(min_value=0, max_value=100))
def test_items_outside_alphabet_raise(k, offset):
    with pytest.raises(ValueError, match="items"):
        kary_randomized_response([0, k + offset], k=k, epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="items"):
        kary_randomized_response([-1 - offset, 0], k=k, epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="reports"):
        kary_rr_frequency_estimate([k + offset], k=k, epsilon=1.0)


@HYP
@given(n=st.integers(min_value=0, max_value=10**9), extra=st.integers(min_value=1, max_value=10**6))
def test_true_count_outside_range_raises(n, extra):
    with pytest.raises(ValueError, match="true_count"):
        kary_rr_count_variance(n, n + extra, k=3, epsilon=1.0)
    with pytest.raises(ValueError, match="true_count"):
        kary_rr_count_variance(n, [0, -extra], k=3, epsilon=1.0)
    assert kary_rr_count_variance(n, n, k=3, epsilon=1.0) >= 0.0


def test_other_validation_messages():
    for bad_k in [1, 0, 2.5, float("nan")]:
        with pytest.raises(ValueError, match="k"):
            kary_randomized_response([0], k=bad_k, epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="n"):
        rr_count_variance(-1, epsilon=1.0)
    with pytest.raises(ValueError, match="n"):
        kary_rr_count_variance(2.5, 1, k=3, epsilon=1.0)
    with pytest.raises(ValueError, match="values"):
        laplace_mechanism([1.0, float("nan")], sensitivity=1.0, epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="rng"):
        gaussian_mechanism([1.0], sensitivity=1.0, sigma=1.0, rng=-3)
    with pytest.raises(ValueError, match="rng"):
        randomized_response([0, 1], epsilon=1.0, rng="seed")
    with pytest.raises(ValueError, match="bits"):
        randomized_response([0.5, 1.0], epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="axis"):
        rr_debias_count([[0, 1]], epsilon=1.0, axis=2)


# ---------------------------------------------------------------------------
# optimised unary encoding
# ---------------------------------------------------------------------------


def test_oue_unbiased_with_stated_variance():
    eps, trials = 0.7, 3000
    counts = np.array([500, 200, 50, 0])
    n = int(counts.sum())
    gen = np.random.default_rng(7)
    est = np.array([oue_frequency_estimate(counts, epsilon=eps, rng=gen) for _ in range(trials)])
    var = oue_count_variance(n, counts, epsilon=eps)
    q = 1 / (math.exp(eps) + 1)
    for j in range(counts.size):
        kurt = bernoulli_sum_excess_kurtosis([0.5] * counts[j] + [q] * (n - counts[j]))
        assert_mean(est[:, j].mean(), counts[j], var[j], trials, f"item {j} mean")
        assert_variance(est[:, j].var(ddof=1), var[j], trials, kurt, f"item {j} var")
    # closed form 4 n e^eps / (e^eps - 1)^2 + c
    closed = 4 * n * math.exp(eps) / math.expm1(eps) ** 2 + counts
    assert np.allclose(var, closed, rtol=1e-12)


def test_oue_matches_per_user_bit_flipping():
    """The aggregate draw has the law of per-user unary encoding with independent flips."""
    eps, trials = 1.0, 4000
    counts = np.array([30, 10, 0])
    n, k = int(counts.sum()), counts.size
    gen = np.random.default_rng(11)
    onehot = np.eye(k, dtype=int)[np.repeat(np.arange(k), counts)]
    q = 1 / (math.exp(eps) + 1)
    keep = gen.random((trials, n, k)) < np.where(onehot == 1, 0.5, q)
    direct = (keep.sum(axis=1) - n * q) / (0.5 - q)
    agg = np.array([oue_frequency_estimate(counts, epsilon=eps, rng=gen) for _ in range(trials)])
    var = oue_count_variance(n, counts, epsilon=eps)
    for j in range(k):
        se = math.sqrt(2 * var[j] / trials)
        assert abs(direct[:, j].mean() - agg[:, j].mean()) <= Z * se


def test_oue_is_eps_ldp():
    """Two one-hot inputs differ in two bits; the worst report ratio is exactly e^eps."""
    for eps in [0.1, 1.0, 5.0]:
        p, q = 0.5, 1 / (math.exp(eps) + 1)
        ratio = (p / q) * ((1 - q) / (1 - p))
        assert abs(math.log(ratio) - eps) < 1e-12


def test_oue_validation():
    with pytest.raises(ValueError, match="counts"):
        oue_frequency_estimate([1, -1], epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="epsilon"):
        oue_frequency_estimate([1, 2], epsilon=0.0, rng=0)
    with pytest.raises(ValueError, match="true_count"):
        oue_count_variance(5, 6, epsilon=1.0)
    with pytest.raises(ValueError, match="n"):
        oue_count_variance(-1, 0, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        oue_count_variance(5, 1, epsilon=float("nan"))
