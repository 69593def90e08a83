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
from scipy import special, stats

from fedfreq import _numerics
from fedfreq import trust_models as tm
from fedfreq.accounting import classical_gaussian_sigma, gaussian_sigma, hockey_stick_divergence
from fedfreq.trust_models import (
    MODELS,
    binomial_client_noise,
    binomial_mechanism_delta,
    binomial_noise_probability,
    binomial_noise_trials,
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
EPS = np.finfo(float).eps


# ------------------------------------------------------------------ reference values


def _mp_binomial_delta(N: int, epsilon: float, p: float = 0.5) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Both hockey-stick directions by direct summation of exact pmfs (40 digits).

    ``p`` is taken as the exact binary value of the float and q = 1 - p exactly, so the
    reference is the law of Bin(N, p) for the very float the code receives.
    """
    with mpmath.workdps(40):
        e = mpmath.e ** mpmath.mpf(epsilon)
        pp = mpmath.mpf(p)
        qq = 1 - pp
        P = [mpmath.mpf(math.comb(N, k)) * pp**k * qq ** (N - k) for k in range(N + 1)]

        def pmf(k):
            return P[k] if 0 <= k <= N else mpmath.mpf(0)

        zero = mpmath.mpf(0)
        # k runs over the union of both supports, {0, ..., N + 1}: the mass at 0 (only
        # in the first law) and at N + 1 (only in the second) is included.
        d1 = sum(max(zero, pmf(k) - e * pmf(k - 1)) for k in range(N + 2))
        d2 = sum(max(zero, pmf(k - 1) - e * pmf(k)) for k in range(N + 2))
        return d1, d2


def _mp_log_pmf(N: int, k: int, p: float = 0.5) -> mpmath.mpf:
    """log of the Bin(N, p) pmf at k from log-gamma values (use inside workdps)."""
    pp = mpmath.mpf(p)
    return (
        mpmath.loggamma(N + 1)
        - mpmath.loggamma(k + 1)
        - mpmath.loggamma(N - k + 1)
        + k * mpmath.log(pp)
        + (N - k) * mpmath.log(1 - pp)
    )


def _mp_gauss_delta(sigma: float, epsilon: float) -> mpmath.mpf:
    """Balle & Wang's delta(sigma) at 50 digits."""
    with mpmath.workdps(50):
        s, e = mpmath.mpf(sigma), mpmath.mpf(epsilon)
        return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.e**e * mpmath.ncdf(-1 / (2 * s) - e * s)


def _log_direction(N: int, p: float, eps: float, shift: int) -> float:
    """log of one hockey-stick direction, summed over its whole positive region (no window).

    shift = +1: sum_k [P(k) - e^eps P(k-1)]_+ (lower tail, contains P(0) = q^N), whose
    terms are positive exactly for k < cA = (N+1) p / (p + q e^eps);
    shift = -1: sum_k [P(k) - e^eps P(k+1)]_+ (upper tail, contains P(N) = p^N), positive
    exactly for k > cB = (N p e^eps - q) / (q + p e^eps). Summing over [0, ceil(cA)] or
    [floor(cB), N] therefore drops only terms that are not positive.
    """
    q, e = 1.0 - p, math.exp(eps)
    if shift == 1:
        cA = (N + 1) * p / (p + q * e)
        return tm._binom_direction_log_delta(N, p, eps, 1, 0, min(N, math.ceil(cA)))
    cB = (N * p * e - q) / (q + p * e)
    return tm._binom_direction_log_delta(N, p, eps, -1, min(N, max(0, math.floor(cB))), N)


def _rising_intervals(N: int, eps: float, shift: int) -> np.ndarray:
    """Intervals of p on which one direction of delta increases (rows [start, end]).

    Lower tail: while its positive region is {0, ..., K} the sum is F(K) - e^eps F(K-1),
    F the cdf of Bin(N, p). Since dF(K)/dp = -N b(K), with b the Bin(N-1, p) pmf, its
    derivative in p is -N [b(K) - e^eps b(K-1)]. That is positive from the p where term K
    enters, (N-K+1) p = e^eps K q, up to the p where (N-K) p = e^eps K q, and negative
    after. Upper tail: the sum over {K, ..., N} is (1 - F(K-1)) - e^eps (1 - F(K)), with
    derivative N [b(K-1) - e^eps b(K)], positive from the p where term K - 1 leaves,
    (N-K+1) p e^eps = K q, up to the p where (N-K) p e^eps = K q.
    """
    e = math.exp(eps)
    K = np.arange(1, N + 1, dtype=float)
    if shift == 1:
        return np.column_stack([K * e / (N + 1 - K + K * e), K * e / (N - K + K * e)])
    return np.column_stack([K / ((N - K + 1) * e + K), K / ((N - K) * e + K)])


def _lower_kinks(N: int, eps: float) -> np.ndarray:
    """Values of p at which a term enters the lower-tail sum (starts of its rising intervals)."""
    return _rising_intervals(N, eps, 1)[:, 0]


# ------------------------------------------------------------------ Monte Carlo


def _excess_kurtosis(model: str, n: int, epsilon: float, delta: float) -> float:
    """Excess kurtosis of (estimate - S), needed for the sampling variance of s^2.

    Laplace: 3. Gaussian: 0. Randomized response: the estimate is an affine map of a sum
    of n independent Bernoulli reports, each with variance pq and fourth cumulant
    pq(1 - 6pq) whether the bit is 0 or 1, so the kurtosis is (1 - 6pq)/(n pq).
    Binomial noise: a sum of n t Bernoulli(p) trials, so likewise (1 - 6pq)/(n t pq).
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
    pq = cal["p"] * (1.0 - cal["p"])
    return (1.0 - 6.0 * pq) / (n * cal["trials_per_client"] * pq)


MC_N = 2000
MC_CASES = [(m, 1.0) for m in MODELS] + [
    ("shuffle-rr", 0.3),  # amplification bound inverted by brentq (eps0 below the validity cap)
    ("distributed-binomial", 0.1),  # several fair coins per client (t > 1, p = 1/2)
    ("distributed-binomial", 4.0),  # t = 1 and p at the floor set by P(0) = q^n <= delta
    ("central-gaussian", 0.1),
]


def test_monte_carlo_cases_cover_both_distributed_regimes():
    # The Monte Carlo test below must exercise both branches of the calibration rule.
    regimes = {}
    for eps in (0.1, 1.0, 4.0):
        cal = calibrate_count("distributed-binomial", n=MC_N, epsilon=eps, delta=DELTA)
        regimes[eps] = (cal["trials_per_client"], cal["p"])
    assert regimes[0.1][0] > 1 and regimes[0.1][1] == 0.5
    assert regimes[1.0][0] == 1 and regimes[1.0][1] < 0.1
    assert regimes[4.0][0] == 1 and regimes[4.0][1] < regimes[1.0][1]


@pytest.mark.parametrize(("model", "epsilon"), MC_CASES)
def test_monte_carlo_unbiased_with_stated_std(model, epsilon):
    n, T = MC_N, 4000
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


def test_distributed_simulation_adds_per_client_binomial_noise():
    # With every bit 0 and t = 1 the secure sum is exactly Bin(n, p), the debiased
    # estimate is that sum minus n p, so it is an integer minus n p.
    n = 500
    cal = calibrate_count("distributed-binomial", n=n, epsilon=2.0, delta=1e-3)
    assert cal["trials_per_client"] == 1 and cal["p"] < 0.5
    est = simulate_count(np.zeros(n, dtype=int), "distributed-binomial", epsilon=2.0, delta=1e-3, rng=3)
    total = est + n * cal["p"]
    # n p is below 500, so the float sum is exact up to ~1e-13; 1e-9 is loose.
    assert abs(total - round(total)) < 1e-9 and 0 <= round(total) <= n
    # the same stream: the secure sum is the sum of the per-client draws
    draws = np.random.default_rng(3).binomial(1, cal["p"], size=n)
    assert round(total) == int(draws.sum())


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
        for e, v in zip(eps.ravel(), curve.ravel(), strict=False):
            assert v == count_std(model, n=10_000, epsilon=e, delta=DELTA)
        # more privacy budget never costs accuracy
        assert np.all(np.diff(curve.ravel()) <= 0)


# ------------------------------------------------------------------ central Gaussian


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10, 1e-100])
def test_central_gaussian_uses_the_analytic_calibration(epsilon, delta):
    # The model's noise is the accounting module's calibration at sensitivity 1, not a copy.
    sigma = count_std("central-gaussian", n=100, epsilon=epsilon, delta=delta)
    assert sigma == gaussian_sigma(epsilon, delta)
    # delta(sigma) from an independent 50-digit evaluation of Balle & Wang's Theorem 8.
    # The float evaluation the root finder uses is accurate to ~1e-11 relative even at
    # delta = 1e-100 (tested in test_accounting), and the root is nudged to the private
    # side, so 1e-9 relative is the accuracy required of the calibration.
    ref = float(_mp_gauss_delta(sigma, epsilon))
    assert ref == pytest.approx(delta, rel=1e-9)
    if epsilon < 1.0:
        classical = classical_gaussian_sigma(epsilon, delta)  # Dwork & Roth, Thm A.1
        assert sigma < classical


# ------------------------------------------------------------------ binomial mechanism

BRUTE_P = [0.5, 0.37, 0.2, 0.05, 1e-3, 0.8]


@pytest.mark.parametrize("p", BRUTE_P)
@pytest.mark.parametrize("N", [0, 1, 2, 3, 5, 10, 20, 37, 60])
@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0, 2.0, 5.0])
def test_binomial_delta_matches_brute_force(N, epsilon, p):
    d1, d2 = _mp_binomial_delta(N, epsilon, p)
    if p == 0.5:
        # The two directions coincide (P is symmetric) to the 40 working digits.
        assert abs(d1 - d2) <= mpmath.mpf("1e-35") * max(d1, d2)
    # Log-space terms carry a few ulps each (measured worst 4e-15 relative on this grid):
    # 1e-12.
    assert binomial_mechanism_delta(N, epsilon=epsilon, p=p) == pytest.approx(float(max(d1, d2)), rel=1e-12)


def test_binomial_delta_takes_the_larger_direction():
    # For p != 1/2 the two directions differ and either can be the larger one, so
    # computing only one of them would under-report delta. Lower tail larger:
    d1, d2 = _mp_binomial_delta(20, 1.0, 0.2)
    assert d1 > 5 * d2  # ratio ~7.6
    assert binomial_mechanism_delta(20, epsilon=1.0, p=0.2) == pytest.approx(float(d1), rel=1e-12)
    # Upper tail larger, although p < 1/2 (found on a grid; d2/d1 is about 1.20 here):
    d1, d2 = _mp_binomial_delta(2, 0.5, 0.45)
    assert d2 > 1.1 * d1
    assert binomial_mechanism_delta(2, epsilon=0.5, p=0.45) == pytest.approx(float(d2), rel=1e-12)


@pytest.mark.parametrize(("N", "p", "epsilon"), [(1, 0.2, 1.0), (1000, 1e-5, 1.0), (10**7, 1e-9, 0.5), (50, 5e-4, 3.0)])
def test_binomial_delta_boundary_term(N, p, epsilon):
    # Closed form when N p / q < e^-eps: no k >= 1 enters the lower-tail sum (its
    # first candidate needs N p / q > e^eps), so that sum is exactly P(0) = q^N, the
    # mass at 0 that the shifted law cannot cover; every term of the upper-tail sum is
    # positive, so it telescopes to 1 - e^eps (1 - q^N) < q^N. Hence delta = q^N.
    q = 1.0 - p
    assert N * p / q < math.exp(-epsilon)
    qN = math.exp(N * math.log1p(-p))
    # N log1p(-p) has relative error ~1e-16, i.e. absolute < 1e-14 here; with the sum of
    # a few rounded logs, 1e-12 relative is ample.
    assert binomial_mechanism_delta(N, epsilon=epsilon, p=p) == pytest.approx(qN, rel=1e-12)
    # and the upper-tail closed form, through the direction on its own
    upper = -math.expm1(epsilon) * (1.0 - qN) + qN  # = 1 - e^eps (1 - q^N)
    if N <= 10_000:  # (the direction on its own is summed without a window: keep N small)
        assert math.exp(_log_direction(N, p, epsilon, -1)) == pytest.approx(upper, rel=1e-9, abs=1e-15)


def test_binomial_delta_never_below_the_end_masses():
    # delta >= max(q^N, p^N) for every p, N, eps: the mass of each law outside the other's support.
    for N in (1, 7, 40, 300):
        for p in (1e-4, 0.01, 0.2, 0.5, 0.9):
            for eps in (0.1, 1.0, 10.0):
                floor = max(N * math.log1p(-p), N * math.log(p))
                assert tm._binomial_log_delta(N, eps, p) >= floor - 1e-12 * abs(floor)


@pytest.mark.parametrize("N", [1, 4, 33, 500, 20_000])
@pytest.mark.parametrize("p", [0.01, 0.3, 0.45])
def test_binomial_delta_symmetric_in_p(N, p):
    # Reflecting k -> N - k maps Bin(N, p) to Bin(N, 1 - p) and swaps the two directions,
    # so delta is the same; only rounding (a few ulps per term) may differ: 1e-11 in log.
    for eps in (0.2, 1.5):
        a = tm._binomial_log_delta(N, eps, p)
        b = tm._binomial_log_delta(N, eps, 1.0 - p)
        assert abs(a - b) <= 1e-11 * max(1.0, abs(a))


@pytest.mark.parametrize("p", [0.5, 0.1, 1e-3])
def test_log_pmf_accuracy_large_N(p):
    # Loader's form against 40-digit log-gamma values, including N = 1e7 where
    # scipy.stats.binom.logpmf loses about 1e-9 in absolute terms.
    for N in (1_000, 12_345, 100_000, 10_000_000):
        m1, m2 = N * p, N * (1.0 - p)
        W = int(math.sqrt(400 * m1 * (1.0 - p))) + 1
        h = int(m1)
        ks = np.unique(np.clip([0, 1, h - W, h - W // 3, h - 5, h, h + 1, h + W, N - 1, N], 0, N))
        got = _numerics.binom_logpmf(ks, N, p)
        with mpmath.workdps(40):
            for k, v in zip(ks.tolist(), got, strict=False):
                ref = float(_mp_log_pmf(N, k, p))
                # Loader's form sums a handful of once-rounded terms; the largest are the
                # pieces x log(x/m1) and y log(y/m2) of the two deviances, which can cancel.
                # Rounding error is therefore a few units of eps times
                # A = |x log(x/m1)| + |y log(y/m2)| + |log P| + 1; allow 16 (measured worst 1.2).
                x, y = float(k), float(N - k)
                A = abs(x * math.log(x / m1)) if x else 0.0
                A += abs(y * math.log(y / m2)) if y else 0.0
                A += abs(ref) + 1.0
                assert abs(v - ref) <= 16 * EPS * A, (N, k, v, ref)


@pytest.mark.parametrize(("p", "eps"), [(0.5, 0.03), (0.02, 0.2)])
def test_binomial_delta_large_N_window(p, eps):
    # N = 1e5 uses a summation window next to the boundary of the positive region.
    # Reference: 40-digit summation of every positive term within 30 standard deviations
    # (sd) of the mean N p. By Chernoff's bounds the mass beyond is below
    # exp(-a^2 / (2 (N p + a/3))) with a = 30 sd, i.e. below e^-200 for both cases here,
    # while delta is above 1e-3: the terms left out are far below the tolerance.
    N = 100_000
    sd = math.sqrt(N * p * (1 - p))
    kstar = int((N + 1) * p / (p + (1 - p) * math.exp(eps))) + 1
    with mpmath.workdps(40):
        e = mpmath.e ** mpmath.mpf(eps)
        ratio = (1 - mpmath.mpf(p)) / mpmath.mpf(p)
        tot = mpmath.mpf(0)
        for k in range(max(1, int(N * p - 30 * sd)), kstar + 1):
            pk = mpmath.e ** _mp_log_pmf(N, k, p)
            term = pk * (1 - e * k * ratio / (N - k + 1))  # P(k) - e^eps P(k - 1)
            if term > 0:
                tot += term
        if p == 0.5:
            d_ref = tot  # the two directions are equal
        else:
            # the other (upper-tail) direction, summed the same way from its boundary
            up = mpmath.mpf(0)
            kb = int((N * p * math.exp(eps) - (1 - p)) / ((1 - p) + p * math.exp(eps)))
            for k in range(max(0, kb), min(N, int(N * p + 30 * sd)) + 1):
                pk = mpmath.e ** _mp_log_pmf(N, k, p)
                term = pk * (1 - e * (N - k) / ((k + 1) * ratio))  # P(k) - e^eps P(k + 1)
                if term > 0:
                    up += term
            d_ref = max(tot, up)
    # each log P(k) is accurate to ~1e-13 absolute (previous test), so the sum is accurate
    # to ~1e-13 relative; 1e-11 leaves a margin of 100.
    assert binomial_mechanism_delta(N, epsilon=eps, p=p) == pytest.approx(float(d_ref), rel=1e-11)


@pytest.mark.parametrize("p", [0.5, 0.1])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
def test_binomial_delta_nonincreasing_in_N(epsilon, p):
    # Adding one more Bernoulli(p) trial is post-processing, so delta_{N+1} <= delta_N
    # exactly; the numerical curve may only wobble by its own relative error (~1e-13).
    d = np.array([binomial_mechanism_delta(N, epsilon=epsilon, p=p) for N in range(0, 400)])
    assert np.all(d[1:] <= d[:-1] * (1 + 1e-12))
    assert d[0] == 1.0
    for N in (1_000, 4_000, 16_000, 64_000):
        d_next = binomial_mechanism_delta(N + 1, epsilon=epsilon, p=p)
        assert d_next <= binomial_mechanism_delta(N, epsilon=epsilon, p=p) * (1 + 1e-12)


# ------------------------------------------------- delta as a function of p (not monotone)


def test_binomial_delta_is_not_monotone_in_p():
    # The finding, confirmed by 40-digit brute force independent of the package: for
    # N = 100, eps = 1, delta rises by ~5% when p goes from 0.472 to 0.474.
    lo, hi = (max(_mp_binomial_delta(100, 1.0, p)) for p in (0.472, 0.474))
    assert hi > 1.04 * lo
    assert binomial_mechanism_delta(100, epsilon=1.0, p=0.474) > 1.04 * binomial_mechanism_delta(
        100, epsilon=1.0, p=0.472
    )
    # Smallest case, by hand: N = 2, eps = 0.01. For p above e^eps/(2 + e^eps) ~ 0.3344
    # the lower tail is q^2 + q (2p - e^eps q), whose derivative 2 (e^eps q - p) is > 0
    # up to p = e^eps/(1 + e^eps); p = 0.36 has a larger delta than p = 0.34.
    assert binomial_mechanism_delta(2, epsilon=0.01, p=0.36) > binomial_mechanism_delta(2, epsilon=0.01, p=0.34)


@pytest.mark.parametrize("N", [2, 5, 20, 100, 1000])
def test_binomial_delta_in_p_rises_only_where_the_derivative_says(N):
    # Each direction is a smooth function of p between the values of p at which a term
    # enters or leaves its positive region; the derivative there (see _rising_intervals)
    # is positive only on one short interval after each such p. So, on a grid, each
    # direction may increase between consecutive points only if the step meets one of
    # its rising intervals -- and it does increase somewhere (the finding above).
    ps = np.unique(np.concatenate([np.geomspace(1e-4, 0.5, 160), np.linspace(0.25, 0.5, 101)]))
    rose = False
    for eps in (0.01, 0.3, 1.0, 3.0):
        for shift in (1, -1):
            L = np.array([_log_direction(N, float(p), eps, shift) for p in ps])
            R = _rising_intervals(N, eps, shift)
            meets = np.array(
                [bool(np.any((R[:, 0] < b) & (R[:, 1] > a))) for a, b in zip(ps[:-1], ps[1:], strict=False)]
            )
            ok = np.isfinite(L[:-1])
            up = L[1:] - L[:-1]
            # log delta carries an absolute error of ~1e-13 (1 + |log delta|); 1e-11 is loose.
            tol = 1e-11 * (1.0 + np.abs(L[:-1]))
            assert np.all(up[ok & ~meets] <= tol[ok & ~meets]), (eps, shift)
            rose |= bool(np.any(up[ok & meets] > tol[ok & meets]))
    assert rose


# ------------------------------------------------------------------ calibration


@pytest.mark.parametrize(
    ("epsilon", "delta"), [(0.1, 1e-6), (0.5, 1e-6), (1.0, 1e-6), (2.0, 1e-9), (4.0, 1e-6), (1.0, 0.1)]
)
def test_binomial_noise_trials_is_minimal(epsilon, delta):
    N = binomial_noise_trials(epsilon=epsilon, delta=delta)
    assert binomial_mechanism_delta(N, epsilon=epsilon) <= delta
    assert binomial_mechanism_delta(N - 1, epsilon=epsilon) > delta
    assert N >= math.log2(1.0 / delta)  # P(0) = 2^-N is always part of delta


@pytest.mark.parametrize("N", [50, 1_000, 10_000, 10**9])
@pytest.mark.parametrize(("epsilon", "delta"), [(0.3, 1e-3), (1.0, 1e-6), (4.0, 1e-6)])
def test_binomial_noise_probability_meets_target(N, epsilon, delta):
    if N < binomial_noise_trials(epsilon=epsilon, delta=delta):
        with pytest.raises(ValueError, match="N must"):
            binomial_noise_probability(N, epsilon=epsilon, delta=delta)
        return
    p = binomial_noise_probability(N, epsilon=epsilon, delta=delta)
    assert 0.0 < p <= 0.5
    assert binomial_mechanism_delta(N, epsilon=epsilon, p=p) <= delta
    # The bisection stops with an infeasible point less than 2^-40 p below the result;
    # delta is monotone on so short an interval unless a kink falls inside it, so the
    # point exactly 2^-40 p below fails too.
    if p < 0.5:
        assert binomial_mechanism_delta(N, epsilon=epsilon, p=p * (1 - 2.0**-40)) > delta
    # Proven lower bound: delta >= P(0) = (1 - p)^N, so (1 - p)^N <= delta is necessary.
    assert p >= -math.expm1(math.log(delta) / N)


def test_bisection_on_p_is_not_always_minimal():
    # Because delta is not monotone in p, the downward crossing that bisection finds
    # need not be the first one. N = 100, eps = 0.5, delta = 1e-3: bisection returns
    # p ~ 0.3821, yet at the kink p_K of the lower tail with K = 27 (~0.3756, where that
    # tail is at a local minimum) delta is already below 1e-3 -- by 40-digit brute force.
    N, eps, delta = 100, 0.5, 1e-3
    p = binomial_noise_probability(N, epsilon=eps, delta=delta)
    kinks = _lower_kinks(N, eps)
    earlier = [float(k) for k in kinks if k < p and binomial_mechanism_delta(N, epsilon=eps, p=float(k)) <= delta]
    assert earlier and min(earlier) < 0.99 * p
    assert max(_mp_binomial_delta(N, eps, min(earlier))) <= delta


TABLE_EPS = [0.1, 0.5, 1.0, 2.0, 4.0]


@pytest.mark.parametrize("epsilon", TABLE_EPS)
def test_table_calibration_is_minimal(epsilon):
    # For the book's table (n = 1e4, delta = 1e-6) the p found by bisection is the smallest
    # valid p up to the bisection width. Computer-assisted argument: delta >= A, the lower-
    # tail direction. A is non-increasing except on its rising intervals, each of which
    # starts at a kink p_K, so every local minimum of A on (0, lo] is a kink or lo itself.
    # If A > target at lo and at every kink in (0, lo], then delta > target on all of
    # (0, lo]. Kinks below p_lb = 1 - delta^(1/n) need no check: there A >= q^n > delta.
    n = 10_000
    t, p = binomial_client_noise(n=n, epsilon=epsilon, delta=DELTA)
    assert t == 1 and p < 0.5
    target = math.log(DELTA)
    lo = p * (1 - 2.0**-40)
    p_lb = -math.expm1(target / n)
    assert _log_direction(n, lo, epsilon, 1) > target
    kinks = _lower_kinks(n, epsilon)
    for pk in kinks[(kinks >= p_lb) & (kinks <= lo)]:
        assert _log_direction(n, float(pk), epsilon, 1) > target


@pytest.mark.parametrize("n", [1, 7, 2000, 10_000, 10**9])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0])
def test_distributed_calibration_rule(n, epsilon):
    cal = calibrate_count("distributed-binomial", n=n, epsilon=epsilon, delta=DELTA)
    t, p, N = cal["trials_per_client"], cal["p"], cal["symmetric_trials"]
    assert (t, p) == binomial_client_noise(n=n, epsilon=epsilon, delta=DELTA)
    assert N == binomial_noise_trials(epsilon=epsilon, delta=DELTA)
    if N >= n:
        assert p == 0.5 and n * t >= N and n * (t - 1) < N
    else:
        assert t == 1 and p == binomial_noise_probability(n, epsilon=epsilon, delta=DELTA)
    assert binomial_mechanism_delta(n * t, epsilon=epsilon, p=p) <= DELTA
    assert cal["std"] == math.sqrt(n * t * p * (1 - p))
    # never more noise than the old rule (t = ceil(N/n) fair coins per client)
    assert cal["std"] <= math.sqrt(n * -(-N // n)) / 2


@pytest.mark.parametrize(("n", "epsilon", "delta"), [(200, 1.0, 1e-3), (60, 0.5, 1e-2), (300, 3.0, 1e-4)])
def test_distributed_calibration_audit_with_accounting_divergence(n, epsilon, delta):
    # Independent audit: build the two output laws of S + Bin(n t, p) for S = 0 and S = 1
    # on {0, ..., n t + 1} with scipy's logpmf and measure both hockey-stick divergences
    # with fedfreq.accounting. scipy's logpmf is accurate to ~1e-14 relative at these
    # sizes, so the audit may exceed delta by at most ~1e-12 relative.
    t, p = binomial_client_noise(n=n, epsilon=epsilon, delta=delta)
    assert t == 1 and p < 0.5

    def audit(pp: float) -> float:
        M = n * t
        k = np.arange(M + 2)
        with np.errstate(divide="ignore"):
            l0 = np.where(k <= M, stats.binom.logpmf(k, M, pp), -np.inf)
            l1 = np.where(k >= 1, stats.binom.logpmf(k - 1, M, pp), -np.inf)
        return max(hockey_stick_divergence(l0, l1, epsilon), hockey_stick_divergence(l1, l0, epsilon))

    assert audit(p) <= delta * (1 + 1e-12)
    # the audit catches a weakened mechanism: half the noise probability fails
    assert audit(p / 2) > delta


def test_distributed_std_table():
    # n = 1e4, delta = 1e-6. (1) The rule removes the old floor sqrt(n)/2 = 50.
    # (2) Proven floor: (1 - p)^n <= delta forces p >= p_lb = 1 - delta^(1/n), so with
    # t = 1 the std is at least sqrt(n p_lb (1 - p_lb)) ~ sqrt(log(1/delta)) = 3.72; at
    # eps = 4 the calibration sits on it. (3) On this grid the distributed std is not
    # below the central Gaussian's (an observation, not a theorem: discrete noise could
    # in principle beat Gaussian noise; a value below would call for a closer look).
    n = 10_000
    p_lb = -math.expm1(math.log(DELTA) / n)
    floor = math.sqrt(n * p_lb * (1 - p_lb))
    for eps in TABLE_EPS:
        dist = count_std("distributed-binomial", n=n, epsilon=eps, delta=DELTA)
        gauss = count_std("central-gaussian", n=n, epsilon=eps, delta=DELTA)
        assert dist < math.sqrt(n) / 2
        assert dist >= floor
        assert dist >= gauss
    # at eps = 4 the boundary term is what binds: p is within 1e-3 of its lower bound
    p4 = binomial_client_noise(n=n, epsilon=4.0, delta=DELTA)[1]
    assert p4 == pytest.approx(p_lb, rel=1e-3)


# ------------------------------------------------------------------ shuffling bound


def test_shuffle_bound_properties():
    for n in (1_000, 10_000, 10**6):
        top = shuffle_max_local_epsilon(n=n, delta=DELTA)
        assert top == pytest.approx(math.log(n / (16 * math.log(2 / DELTA))), rel=1e-15)
        for eps0 in np.linspace(0.01, top, 25):
            assert shuffle_epsilon(eps0, n=n, delta=DELTA) < eps0
    # decreasing in n at fixed eps0
    vals = [shuffle_epsilon(1.0, n=n, delta=DELTA) for n in (1_000, 10_000, 10**5, 10**6, 10**8)]
    assert all(a > b for a, b in zip(vals, vals[1:], strict=False))
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

_bad_eps = st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf")), st.text(max_size=3))
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
    for p in (0.0, 1.0, -0.1, float("nan"), 2):
        with pytest.raises(ValueError, match="p must"):
            binomial_mechanism_delta(5, epsilon=1.0, p=p)
    with pytest.raises(ValueError, match="N must"):
        binomial_noise_probability(0, epsilon=1.0, delta=DELTA)
    with pytest.raises(ValueError, match="N must be at least"):
        binomial_noise_probability(10, epsilon=1.0, delta=DELTA)  # even p = 1/2 fails
    with pytest.raises(ValueError, match="delta"):
        binomial_noise_probability(10_000, epsilon=1.0, delta=1.0)
    with pytest.raises(ValueError, match="n must"):
        binomial_client_noise(n=0, epsilon=1.0, delta=DELTA)
    with pytest.raises(ValueError, match="epsilon"):
        binomial_client_noise(n=10, epsilon=0.0, delta=DELTA)
    with pytest.raises(ValueError, match="delta"):
        binomial_client_noise(n=10, epsilon=1.0, delta=None)
    with pytest.raises(ValueError, match="epsilons"):
        count_error_curve("local-rr", n=10, epsilons=[1.0, -1.0])
    for bits in ([0, 2, 1], [[0, 1]], [], [0.5, 1.0], [0, float("nan")]):
        with pytest.raises(ValueError, match="bits"):
            simulate_count(bits, "local-rr", epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="rng"):
        simulate_count([0, 1], "local-rr", epsilon=1.0, rng=-3)
