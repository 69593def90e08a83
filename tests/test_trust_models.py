"""Tests of fedfreq.trust_models: calibrations, exact privacy curves, Monte Carlo checks.

Every tolerance is derived in a comment next to it. Seeds are fixed.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from fedfreq import trust_models as tm
from fedfreq.trust_models import (
    MODELS,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    binomial_mechanism_delta,
    binomial_noise_trials,
    binomial_trials_per_client,
    calibrate_count,
    count_error_curve,
    count_std,
    rr_keep_probability,
    shuffle_calibrated_epsilon0,
    shuffle_epsilon,
    shuffle_local_epsilon,
    shuffle_max_local_epsilon,
    simulate_count,
)

DELTA = 1e-6


# ------------------------------------------------------------------ reference values


def _mp_binomial_delta(N: int, epsilon: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Both hockey-stick directions by direct summation of exact pmfs (40 digits)."""
    with mpmath.workdps(40):
        e = mpmath.e ** mpmath.mpf(epsilon)
        P = [mpmath.mpf(math.comb(N, k)) / mpmath.mpf(2) ** N for k in range(N + 1)]

        def pmf(k):
            return P[k] if 0 <= k <= N else mpmath.mpf(0)

        zero = mpmath.mpf(0)
        d1 = sum(max(zero, pmf(k) - e * pmf(k - 1)) for k in range(N + 2))
        d2 = sum(max(zero, pmf(k - 1) - e * pmf(k)) for k in range(N + 2))
        return d1, d2


def _mp_log_pmf(N: int, k: int) -> mpmath.mpf:
    """log of the Bin(N, 1/2) pmf at k from log-gamma values (use inside workdps)."""
    return mpmath.loggamma(N + 1) - mpmath.loggamma(k + 1) - mpmath.loggamma(N - k + 1) - N * mpmath.log(2)


def _mp_gauss_delta(sigma: float, epsilon: float) -> mpmath.mpf:
    """Balle & Wang's delta(sigma) at 50 digits."""
    with mpmath.workdps(50):
        s, e = mpmath.mpf(sigma), mpmath.mpf(epsilon)
        return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.e**e * mpmath.ncdf(-1 / (2 * s) - e * s)


# ------------------------------------------------------------------ Monte Carlo


def _excess_kurtosis(model: str, n: int, epsilon: float, delta: float) -> float:
    """Excess kurtosis of (estimate - S), needed for the sampling variance of s^2.

    Laplace: 3. Gaussian: 0. Randomized response: the estimate is an affine map of a sum
    of n independent Bernoulli reports, each with variance pq and fourth cumulant
    pq(1 - 6pq) whether the bit is 0 or 1, so the kurtosis is (1 - 6pq)/(n pq).
    Binomial noise: a sum of n t fair coins, pq = 1/4, giving (1 - 6/4)/(n t/4) = -2/(n t).
    """
    cal = calibrate_count(model, n=n, epsilon=epsilon, delta=delta)
    if model == "central-laplace":
        return 3.0
    if model == "central-gaussian":
        return 0.0
    if model in ("local-rr", "shuffle-rr"):
        p = float(special.expit(cal["epsilon0"]))
        pq = p * (1.0 - p)
        return (1.0 - 6.0 * pq) / (n * pq)
    return -2.0 / (n * cal["trials_per_client"])


MC_CASES = [(m, 1.0) for m in MODELS] + [
    ("shuffle-rr", 0.3),  # amplification bound inverted by brentq (eps0 below the validity cap)
    ("distributed-binomial", 0.1),  # several noise trials per client (t > 1)
    ("central-gaussian", 0.1),
]


@pytest.mark.parametrize(("model", "epsilon"), MC_CASES)
def test_monte_carlo_unbiased_with_stated_std(model, epsilon):
    n, T = 2000, 4000
    bits = (np.random.default_rng(20240601).random(n) < 0.3).astype(np.int64)
    S = int(bits.sum())
    sigma = count_std(model, n=n, epsilon=epsilon, delta=DELTA)
    rng = np.random.default_rng(1000 + MC_CASES.index((model, epsilon)))
    est = np.array([simulate_count(bits, model, epsilon=epsilon, delta=DELTA, rng=rng) for _ in range(T)])
    # Mean: the sample mean of T iid draws has standard error sigma/sqrt(T); 4 standard
    # errors bound a false alarm at 6e-5 per test under the CLT.
    assert abs(est.mean() - S) <= 4.0 * sigma / math.sqrt(T)
    # Variance: for iid samples Var(s^2) = sigma^4 (2/(T-1) + kappa/T) exactly, kappa the
    # excess kurtosis (Laplace kappa = 3 gives (mu4 - sigma^4)/T = 5 sigma^4/T to first
    # order, since mu4 = 24 b^4 and sigma^2 = 2 b^2). Again 4 standard errors.
    kappa = _excess_kurtosis(model, n, epsilon, DELTA)
    se_var = sigma**2 * math.sqrt(2.0 / (T - 1) + kappa / T)
    assert abs(est.var(ddof=1) - sigma**2) <= 4.0 * se_var


def test_simulate_is_reproducible_and_returns_float():
    bits = np.array([0, 1, 1, 0, 1] * 40)
    for model in MODELS:
        a = simulate_count(bits, model, epsilon=0.7, delta=DELTA, rng=5)
        b = simulate_count(bits, model, epsilon=0.7, delta=DELTA, rng=5)
        assert isinstance(a, float) and a == b


# ------------------------------------------------------------------ closed forms


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 3.0, 10.0])
def test_rr_variance_does_not_depend_on_data(epsilon):
    n = 1234
    p = rr_keep_probability(epsilon)
    q = 1.0 - p
    # Var of the debiased estimator when every bit is 1 (reports ~ Bern(p)) and when every
    # bit is 0 (reports ~ Bern(q)): identical, and equal to n e^eps/(e^eps - 1)^2.
    var_ones = n * p * (1 - p) / (p - q) ** 2
    var_zeros = n * q * (1 - q) / (p - q) ** 2
    closed = n * math.exp(epsilon) / math.expm1(epsilon) ** 2
    # Only floating-point rounding separates these (a few ulps, amplified by 1/(p-q)^2
    # cancellation of at most ~1/eps^2 = 400 at eps = 0.05): 1e-10 relative is ample.
    assert var_ones == pytest.approx(closed, rel=1e-10)
    assert var_zeros == pytest.approx(closed, rel=1e-10)
    assert count_std("local-rr", n=n, epsilon=epsilon) ** 2 == pytest.approx(closed, rel=1e-12)
    assert math.log(p / q) == pytest.approx(epsilon, rel=1e-12)


def test_central_laplace_and_curve():
    assert count_std("central-laplace", n=10, epsilon=0.5) == pytest.approx(2 * math.sqrt(2), rel=1e-15)
    eps = np.array([[0.1, 0.5], [1.0, 2.0]])
    for model in MODELS:
        curve = count_error_curve(model, n=10_000, epsilons=eps, delta=DELTA)
        assert curve.shape == eps.shape
        for e, v in zip(eps.ravel(), curve.ravel()):
            assert v == count_std(model, n=10_000, epsilon=e, delta=DELTA)
        # more privacy budget never costs accuracy
        assert np.all(np.diff(curve.ravel()) <= 0)


# ------------------------------------------------------------------ analytic Gaussian


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.5, 0.9, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_analytic_gaussian_sigma_is_exact(epsilon, delta):
    sigma = analytic_gaussian_sigma(epsilon, delta=delta)
    # delta(sigma) from an independent 50-digit evaluation. The float evaluation used by
    # the root finder carries ~1e-11 relative error (test below), and the root is nudged
    # to the private side; 1e-9 relative is the required accuracy of the calibration.
    ref = float(_mp_gauss_delta(sigma, epsilon))
    assert ref == pytest.approx(delta, rel=1e-9)
    if epsilon < 1.0:
        classical = math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon  # Dwork & Roth, Thm A.1
        assert sigma < classical
        assert float(_mp_gauss_delta(classical, epsilon)) <= delta  # the classical one is valid too


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 2.0])
def test_analytic_gaussian_agrees_with_accounting_module(epsilon):
    # The accounting chapter calibrates the same mechanism independently; both solve
    # delta(sigma) = delta to ~1e-14 in sigma, so they must agree to 1e-12 relative.
    accounting = pytest.importorskip("fedfreq.accounting")
    assert analytic_gaussian_sigma(epsilon, delta=DELTA) == pytest.approx(
        accounting.gaussian_sigma(epsilon, DELTA), rel=1e-12
    )


# (epsilon, sigma) pairs with delta from ~1 down to ~1e-270 (all within the float range)
GAUSS_GRID = [
    (0.01, 0.2), (0.01, 7.0), (0.01, 400.0), (0.3, 1.0), (0.3, 20.0), (0.3, 60.0),
    (1.0, 0.2), (1.0, 2.5), (1.0, 20.0), (5.0, 1.0), (5.0, 2.5), (5.0, 7.0),
]


@pytest.mark.parametrize(("epsilon", "sigma"), GAUSS_GRID)
def test_analytic_gaussian_delta_log_space_accuracy(epsilon, sigma):
    ref = _mp_gauss_delta(sigma, epsilon)
    # log Phi(a) has absolute error ~1e-16 |log Phi(a)|, which becomes a relative error in
    # delta divided by |x| = |log(e^eps Phi(b)/Phi(a))|; on this grid that stays below
    # ~1e-12 (measured worst 5e-13). 1e-10 gives a margin of 100.
    assert analytic_gaussian_delta(sigma, epsilon=epsilon) == pytest.approx(float(ref), rel=1e-10)


# ------------------------------------------------------------------ binomial mechanism


@pytest.mark.parametrize("N", [0, 1, 2, 3, 5, 10, 20, 37, 60])
@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0, 2.0, 5.0])
def test_binomial_delta_matches_brute_force(N, epsilon):
    d1, d2 = _mp_binomial_delta(N, epsilon)
    # The two directions coincide (P is symmetric) to the 40 working digits.
    assert abs(d1 - d2) <= mpmath.mpf("1e-35") * max(d1, d2)
    # Log-space terms carry a few ulps each (measured worst 5e-14 relative): 1e-12.
    assert binomial_mechanism_delta(N, epsilon=epsilon) == pytest.approx(float(max(d1, d2)), rel=1e-12)


def test_log_pmf_accuracy_large_N():
    # Loader's form against 40-digit log-gamma values, including N = 1e7 where
    # scipy.stats.binom.logpmf loses about 1e-9 in absolute terms.
    for N in (1_000, 12_345, 100_000, 10_000_000):
        W = int(math.sqrt(400 * N))
        h = N // 2
        ks = np.unique(np.clip([h - W, h - W // 3, h - 5, h, h + 1, h + W], 0, N))
        got = tm._log_binom_half_pmf(ks, N)
        with mpmath.workdps(40):
            for k, v in zip(ks.tolist(), got):
                ref = float(_mp_log_pmf(N, k))
                # Loader's form sums a handful of once-rounded terms; the largest are the
                # pieces x log(x/m) and y log(y/m) of the two deviances (m = N/2), which can
                # cancel. Rounding error is therefore a few units of eps times
                # A = |x log(x/m)| + |y log(y/m)| + |log P| + 1; allow 16 (measured worst 10).
                x, y, m = float(k), float(N - k), N / 2.0
                A = sum(abs(z * math.log(z / m)) for z in (x, y) if z > 0) + abs(ref) + 1.0
                assert abs(v - ref) <= 16 * np.finfo(float).eps * A


def test_binomial_delta_large_N_window():
    # N = 1e5 uses the summation window |k - N/2| <= sqrt(400 N). Reference: direct
    # 40-digit summation over every positive term from N/2 - 8000 (the mass below is
    # < exp(-2 * 8000^2 / N) = exp(-1280)).
    N, eps = 100_000, 0.03
    kstar = int((N + 1) / (1 + math.exp(eps))) + 1
    with mpmath.workdps(40):
        e = mpmath.e ** mpmath.mpf(eps)
        tot = mpmath.mpf(0)
        for k in range(N // 2 - 8000, kstar + 1):
            pk = mpmath.e ** _mp_log_pmf(N, k)
            term = pk * (1 - e * k / (N - k + 1))
            if term > 0:
                tot += term
    # each log P(k) is accurate to ~1e-13 absolute (previous test), so the sum is accurate
    # to ~1e-13 relative; 1e-11 leaves a margin of 100.
    assert binomial_mechanism_delta(N, epsilon=eps) == pytest.approx(float(tot), rel=1e-11)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
def test_binomial_delta_nonincreasing_in_N(epsilon):
    # Adding a fair coin is post-processing, so delta_{N+1} <= delta_N exactly; the
    # numerical curve may only wobble by its own relative error (~1e-13).
    d = np.array([binomial_mechanism_delta(N, epsilon=epsilon) for N in range(0, 400)])
    assert np.all(d[1:] <= d[:-1] * (1 + 1e-12))
    assert d[0] == 1.0
    for N in (1_000, 4_000, 16_000, 64_000):
        d_next = binomial_mechanism_delta(N + 1, epsilon=epsilon)
        assert d_next <= binomial_mechanism_delta(N, epsilon=epsilon) * (1 + 1e-12)


@pytest.mark.parametrize(
    ("epsilon", "delta"), [(0.1, 1e-6), (0.5, 1e-6), (1.0, 1e-6), (2.0, 1e-9), (4.0, 1e-6), (1.0, 0.1)]
)
def test_binomial_noise_trials_is_minimal(epsilon, delta):
    N = binomial_noise_trials(epsilon=epsilon, delta=delta)
    assert binomial_mechanism_delta(N, epsilon=epsilon) <= delta
    assert binomial_mechanism_delta(N - 1, epsilon=epsilon) > delta
    assert N >= math.log2(1.0 / delta)  # P(0) = 2^-N is always part of delta


@pytest.mark.parametrize("n", [1, 7, 2000, 10_000, 10**9])
def test_distributed_noise_meets_target(n):
    eps = 0.5
    t = binomial_trials_per_client(n=n, epsilon=eps, delta=DELTA)
    N = binomial_noise_trials(epsilon=eps, delta=DELTA)
    assert t >= 1 and n * t >= N and n * (t - 1) < N
    assert binomial_mechanism_delta(n * t, epsilon=eps) <= DELTA
    assert count_std("distributed-binomial", n=n, epsilon=eps, delta=DELTA) == math.sqrt(n * t) / 2


# ------------------------------------------------------------------ shuffling bound


def test_shuffle_bound_properties():
    for n in (1_000, 10_000, 10**6):
        top = shuffle_max_local_epsilon(n=n, delta=DELTA)
        assert top == pytest.approx(math.log(n / (16 * math.log(2 / DELTA))), rel=1e-15)
        for eps0 in np.linspace(0.01, top, 25):
            assert shuffle_epsilon(eps0, n=n, delta=DELTA) < eps0
    # decreasing in n at fixed eps0
    vals = [shuffle_epsilon(1.0, n=n, delta=DELTA) for n in (1_000, 10_000, 10**5, 10**6, 10**8)]
    assert all(a > b for a, b in zip(vals, vals[1:]))
    # vanishes as n grows; for small eps0 it is eps0 * 4 sqrt(log(4/delta)/n) to first order
    # (tanh(x/2) ~ x/2, log1p(y) ~ y); the neglected terms are O(eps0) and O(1/sqrt(n)) relative.
    n, eps0 = 10**12, 1e-4
    approx = eps0 * 4 * math.sqrt(math.log(4 / DELTA) / n)
    assert shuffle_epsilon(eps0, n=n, delta=DELTA) == pytest.approx(approx, rel=1e-3)


def test_shuffle_bound_validity_range():
    top = shuffle_max_local_epsilon(n=10_000, delta=DELTA)
    with pytest.raises(ValueError, match="epsilon0"):
        shuffle_epsilon(top * 1.001, n=10_000, delta=DELTA)
    with pytest.raises(ValueError, match="n must exceed"):
        shuffle_epsilon(0.1, n=200, delta=DELTA)  # 16 log(2e6) = 232 > 200
    with pytest.raises(ValueError, match="n must exceed"):
        shuffle_local_epsilon(0.1, n=200, delta=DELTA)


@pytest.mark.parametrize("n", [1_000, 10_000, 10**6])
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.3, 0.6])
def test_shuffle_inverse_round_trip(n, epsilon):
    eps0 = shuffle_local_epsilon(epsilon, n=n, delta=DELTA)
    top = shuffle_max_local_epsilon(n=n, delta=DELTA)
    fwd = shuffle_epsilon(eps0, n=n, delta=DELTA)
    assert fwd <= epsilon
    if eps0 < top:
        # brentq with xtol 1e-14 on eps0; d eps/d eps0 <= 1, so 1e-9 relative is loose.
        assert fwd == pytest.approx(epsilon, rel=1e-9)
    else:
        assert fwd < epsilon  # the cap binds: a stronger guarantee than asked for


def test_shuffle_calibration_never_worse_than_local():
    n = 10_000
    for eps in (0.1, 0.5, 1.0, 2.0, 4.0, 8.0):
        e0 = shuffle_calibrated_epsilon0(eps, n=n, delta=DELTA)
        assert e0 >= eps
        shuffled = count_std("shuffle-rr", n=n, epsilon=eps, delta=DELTA)
        assert shuffled <= count_std("local-rr", n=n, epsilon=eps)
    top = shuffle_max_local_epsilon(n=n, delta=DELTA)
    assert shuffle_local_epsilon(8.0, n=n, delta=DELTA) == top  # capped by the theorem
    assert shuffle_calibrated_epsilon0(8.0, n=n, delta=DELTA) == 8.0  # trivial certificate wins
    assert shuffle_calibrated_epsilon0(0.5, n=100, delta=DELTA) == 0.5  # theorem inapplicable


# ------------------------------------------------------------------ input validation

_bad_eps = st.one_of(
    st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf")), st.text(max_size=3)
)
_bad_delta = st.one_of(
    st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(float("nan")), st.just(float("-inf"))
)
_bad_n = st.one_of(
    st.integers(max_value=0),
    st.floats(min_value=0.01, max_value=1e6).filter(lambda x: not x.is_integer()),
)


@settings(max_examples=40, deadline=None)
@given(eps=_bad_eps, model=st.sampled_from(MODELS))
def test_bad_epsilon_raises(eps, model):
    with pytest.raises(ValueError, match="epsilon"):
        count_std(model, n=100, epsilon=eps, delta=DELTA)
    with pytest.raises(ValueError, match="epsilon"):
        simulate_count(np.array([0, 1]), model, epsilon=eps, delta=DELTA, rng=0)


@settings(max_examples=40, deadline=None)
@given(delta=_bad_delta, model=st.sampled_from(MODELS))
def test_bad_delta_raises(delta, model):
    with pytest.raises(ValueError, match="delta"):
        count_std(model, n=100, epsilon=1.0, delta=delta)


@pytest.mark.parametrize("model", ["central-gaussian", "shuffle-rr", "distributed-binomial"])
def test_missing_delta_raises(model):
    with pytest.raises(ValueError, match="delta"):
        count_std(model, n=100, epsilon=1.0)


@settings(max_examples=40, deadline=None)
@given(n=_bad_n, model=st.sampled_from(MODELS))
def test_bad_n_raises(n, model):
    with pytest.raises(ValueError, match="n must"):
        count_std(model, n=n, epsilon=1.0, delta=DELTA)


@settings(max_examples=40, deadline=None)
@given(model=st.text(max_size=25).filter(lambda s: s not in MODELS))
def test_bad_model_raises(model):
    with pytest.raises(ValueError, match="model"):
        count_std(model, n=100, epsilon=1.0, delta=DELTA)


@settings(max_examples=30, deadline=None)
@given(eps0=st.one_of(st.floats(max_value=0.0), st.just(float("nan"))))
def test_bad_epsilon0_raises(eps0):
    with pytest.raises(ValueError, match="epsilon0"):
        shuffle_epsilon(eps0, n=10_000, delta=DELTA)


def test_bad_arguments_of_helpers():
    with pytest.raises(ValueError, match="N must"):
        binomial_mechanism_delta(-1, epsilon=1.0)
    with pytest.raises(ValueError, match="N must"):
        binomial_mechanism_delta(2.5, epsilon=1.0)
    with pytest.raises(ValueError, match="sigma"):
        analytic_gaussian_delta(0.0, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilons"):
        count_error_curve("local-rr", n=10, epsilons=[1.0, -1.0])
    for bits in ([0, 2, 1], [[0, 1]], [], [0.5, 1.0], [0, float("nan")]):
        with pytest.raises(ValueError, match="bits"):
            simulate_count(bits, "local-rr", epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="rng"):
        simulate_count([0, 1], "local-rr", epsilon=1.0, rng=-3)
