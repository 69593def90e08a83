"""Calibrations and accountants at extreme parameters, against mpmath.

Each calibration is checked at a grid of extreme and ordinary parameters: the exact
δ (or ε) of the returned noise, computed with mpmath at high precision from the
returned double itself, never exceeds the target, and the noise is within a stated
relative tolerance of the exact optimum where the function claims optimality.
Parameters outside a function's supported range must raise a ValueError that names
the parameter.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from fedfreq import accounting
from fedfreq.contribution import lemma41_sigma

# ---------------------------------------------------------------------------
# the Gaussian mechanism
# ---------------------------------------------------------------------------

#: ε grid for the Gaussian profile and calibration (0, subnormal-scale, tiny, ordinary, huge)
GAUSS_EPS = [0.0, 1e-300, 1e-12, 1e-9, 1e-6, 0.1, 1.0, 50.0, 700.0, 1e6]
#: δ grid (the largest is the double just below 1 - 1e-16)
GAUSS_DELTA = [1e-300, 1e-30, 1e-20, 1e-15, 1e-5, 0.5, 1 - 1e-16]
#: the calibrated σ may exceed the exact optimum by at most this relative amount
GAUSS_SIGMA_RTOL = 1e-12
#: relative error allowed for gaussian_delta against mpmath (it returns an upper bound)
GAUSS_DELTA_RTOL = 1e-12


def _mp_gaussian_delta(eps: float, sigma: float, sensitivity: float = 1.0):
    """Balle & Wang's δ(ε) at the exact ratio sensitivity/sigma, with enough digits for the cancellation."""
    with mpmath.workdps(40):
        mu = mpmath.mpf(sensitivity) / mpmath.mpf(sigma)
        y0 = mpmath.mpf(eps) / mu - mu / 2
        if y0 > 1000:  # δ < exp(-y0^2/2) / 2 < 1e-200000
            return mpmath.mpf(0)
        # the two terms agree to about log10(1 + t/h) + log10(1/h) digits: add them
        lost = int(abs(float(mpmath.log10(mpmath.mpf(eps) / mu**2 + 1))) + 5)
        mu_lost = int(max(0.0, -float(mpmath.log10(mu))))
    with mpmath.workdps(50 + lost + mu_lost):
        mu = mpmath.mpf(sensitivity) / mpmath.mpf(sigma)
        e = mpmath.mpf(eps)
        return +(mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu))


@pytest.mark.parametrize("eps", GAUSS_EPS)
def test_gaussian_sigma_never_below_the_optimum_and_never_wasteful(eps):
    for delta in GAUSS_DELTA:
        sigma = accounting.gaussian_sigma(eps, delta)
        exact = _mp_gaussian_delta(eps, sigma)
        assert exact <= delta, (eps, delta, sigma, exact)
        # a σ smaller by the stated tolerance already fails: σ is near-optimal
        smaller = sigma * (1 - GAUSS_SIGMA_RTOL)
        assert _mp_gaussian_delta(eps, smaller) > delta, (eps, delta, sigma)


def test_gaussian_sigma_refuses_beyond_its_range():
    # σ/Δ is capped at 1e300: at ε ≈ 0, δ(0) ≈ (Δ/σ)/sqrt(2π) cannot go below ~4e-301
    for eps in (0.0, 1e-300):
        with pytest.raises(ValueError, match="sigma/sensitivity must lie in"):
            accounting.gaussian_sigma(eps, 1e-305)
    # σ must be a normal double: a subnormal sensitivity gives a subnormal σ
    with pytest.raises(ValueError, match="normal"):
        accounting.gaussian_sigma(1.0, 1e-5, sensitivity=5e-324)
    with pytest.raises(ValueError, match="normal"):
        accounting.gaussian_sigma(1e-12, 1e-5, sensitivity=1e306)
    with pytest.raises(ValueError, match="sensitivity / sigma"):
        accounting.gaussian_delta(1.0, sensitivity=1e-10, sigma=1e300)


@pytest.mark.parametrize("log_mu", [-300, -200, -100, -30, -13, -8, -3, -1, 0, 1, 2])
def test_gaussian_delta_is_a_tight_upper_bound(log_mu):
    """exact <= gaussian_delta <= exact (1 + tol); tol 1e-12 at ordinary parameters
    (Δ/σ >= 1e-3, ε <= 50), 1e-9 elsewhere (the rounding of Δ/σ is amplified by
    y0 (t + h), see the docstring)."""
    sigma = 10.0 ** (-log_mu)
    for eps in GAUSS_EPS:
        ours = accounting.gaussian_delta(eps, sigma=sigma)
        exact = _mp_gaussian_delta(eps, sigma)
        if exact < 1e-320:
            assert ours <= 1e-300
            continue
        tol = GAUSS_DELTA_RTOL if (log_mu >= -3 and eps <= 50) else 1e-9
        assert exact <= ours <= exact * (1 + tol), (eps, sigma, ours, exact)


def test_the_former_failure_is_gone():
    """σ/Δ ~ 1e13 with ε ~ 1e-12: the former log_ndtr difference accepted a σ whose
    exact δ exceeded the target 1e-300 by a factor ~3e269, and gave δ = 0 there."""
    sigma = accounting.gaussian_sigma(1e-12, 1e-300)
    assert _mp_gaussian_delta(1e-12, sigma) <= 1e-300
    assert accounting.gaussian_delta(1e-12, sigma=8.40228e12) > 1e-31  # formerly 0.0
    assert float(_mp_gaussian_delta(1e-12, 8.40228e12)) == pytest.approx(
        accounting.gaussian_delta(1e-12, sigma=8.40228e12), rel=1e-12
    )


@pytest.mark.parametrize("eps", [1e-12, 1e-6, 0.1, 0.5, 1.0])
def test_lemma41_sigma_is_valid(eps):
    for delta in [1e-300, 1e-20, 1e-5, 0.5, 1 - 1e-16]:
        for method in ("lemma", "analytic"):
            try:
                sigma = lemma41_sigma(eps, delta, method=method)
            except ValueError as exc:
                assert "epsilon" in str(exc) and method == "lemma"
                continue
            assert _mp_gaussian_delta(eps, sigma) <= delta, (eps, delta, method)


# ---------------------------------------------------------------------------
# binomial noise (distributed model)
# ---------------------------------------------------------------------------


def _mp_binomial_delta(N: int, eps: float, p: float = 0.5):
    """max of the two hockey-stick sums of Bin(N, p) against its shift by one, 50 digits."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps))
        pp = mpmath.mpf(p)
        pmf = [mpmath.binomial(N, k) * pp**k * (1 - pp) ** (N - k) for k in range(N + 1)]
        P = [mpmath.mpf(0)] + pmf + [mpmath.mpf(0)]  # P(k) for k = -1..N+1
        up = sum(max(mpmath.mpf(0), P[k + 1] - e * P[k]) for k in range(N + 2))
        down = sum(max(mpmath.mpf(0), P[k] - e * P[k + 1]) for k in range(N + 2))
        return max(up, down)


@pytest.mark.parametrize("eps", [0.05, 1.0, 50.0, 700.0, 1e6])
def test_binomial_noise_trials_is_minimal_and_valid(eps):
    from fedfreq.trust_models import binomial_noise_trials

    for delta in [1e-30, 1e-6, 0.5, 1 - 1e-16]:
        N = binomial_noise_trials(epsilon=eps, delta=delta)
        if N > 2000:  # the mpmath sum is quadratic in N; the grid keeps N small
            continue
        assert _mp_binomial_delta(N, eps) <= delta, (eps, delta, N)
        assert N == 1 or _mp_binomial_delta(N - 1, eps) > delta


def test_binomial_searches_are_capped():
    """Tiny epsilon needs more than 1e9 trials: refused at once (it used to double forever)."""
    from fedfreq.trust_models import binomial_client_noise, binomial_noise_probability, binomial_noise_trials

    for eps in (1e-300, 1e-12, 1e-6):
        with pytest.raises(ValueError, match="too small"):
            binomial_noise_trials(epsilon=eps, delta=1e-6)
        with pytest.raises(ValueError, match="epsilon"):
            binomial_client_noise(n=10, epsilon=eps, delta=1e-6)
    with pytest.raises(ValueError, match="N must be at least"):
        binomial_noise_probability(1000, epsilon=1e-6, delta=1e-6)


@pytest.mark.parametrize("eps,p", [(1e-9, 0.5), (1e-3, 0.1), (2.0, 0.3), (50.0, 0.5), (1e6, 0.01)])
def test_binomial_mechanism_delta_against_mpmath(eps, p):
    from fedfreq.trust_models import binomial_mechanism_delta

    for N in (1, 7, 60, 400):
        ours = binomial_mechanism_delta(N, epsilon=eps, p=p)
        ref = _mp_binomial_delta(N, eps, p)
        assert abs(ours - ref) <= 1e-12 * ref, (N, eps, p, ours, ref)


# ---------------------------------------------------------------------------
# shuffle amplification, Skellam, composition, RDP, thresholds
# ---------------------------------------------------------------------------


def _mp_shuffle_eps(eps0: float, n: int, delta: float):
    with mpmath.workdps(50):
        e0 = mpmath.exp(mpmath.mpf(eps0))
        inner = 8 * mpmath.sqrt(e0 * mpmath.log(4 / mpmath.mpf(delta))) / mpmath.sqrt(n) + 8 * e0 / n
        # (e^x - 1)/(e^x + 1) = tanh(x/2), which keeps its digits at x ~ 1e-280
        return mpmath.log1p(mpmath.tanh(mpmath.mpf(eps0) / 2) * inner)


@pytest.mark.parametrize("eps", [1e-280, 1e-12, 1e-9, 1e-6, 0.5, 50.0, 1e6])
def test_shuffle_local_epsilon_is_valid_and_tight(eps):
    from fedfreq.trust_models import shuffle_calibrated_epsilon0, shuffle_local_epsilon, shuffle_max_local_epsilon

    n, delta = 10**6, 1e-6
    e0 = shuffle_local_epsilon(eps, n=n, delta=delta)
    assert 0 < e0 <= shuffle_max_local_epsilon(n=n, delta=delta)
    central = _mp_shuffle_eps(e0, n, delta)
    assert central <= eps
    if e0 < shuffle_max_local_epsilon(n=n, delta=delta):  # root found: tight to 1e-12
        assert _mp_shuffle_eps(e0 * (1 + 1e-12), n, delta) > eps
    assert shuffle_calibrated_epsilon0(eps, n=n, delta=delta) >= min(e0, eps)
    with pytest.raises(ValueError, match="epsilon"):
        shuffle_local_epsilon(1e-300, n=n, delta=delta)


def test_skellam_noise_bound_at_the_extremes():
    from fedfreq.skellam import smm_noise_bound

    def mp_log_tail(t, mu):
        with mpmath.workdps(50):
            t, mu = mpmath.mpf(t), mpmath.mpf(mu)
            u = t / (2 * mu)
            return 2 * mu * (mpmath.sqrt(1 + u**2) - 1) - t * mpmath.asinh(u)

    for mu in (1e-300, 1e-6, 1.0, 100.0, 1e12, 1e28):
        for prob in (1e-300, 1e-9, 0.5, 1 - 1e-16):
            t = smm_noise_bound(mu, prob)
            target = mpmath.log(mpmath.mpf(prob) / 2)
            assert mp_log_tail(t, mu) <= target, (mu, prob, t)
            assert t == 1 or mp_log_tail(t - 1, mu) > target
    with pytest.raises(ValueError, match="2\\^53"):
        smm_noise_bound(1e300, 1e-9)  # this used to loop for ever


def test_composition_at_the_extremes():
    from fedfreq.heavy_hitters import optimal_composition_delta, optimal_composition_epsilon

    assert optimal_composition_delta(50.0, 1e-12, 10, 0.5) <= 1.0  # was 1 + 2.2e-16
    for eps in (1e-12, 1e-6, 0.1, 2.0, 50.0):
        for L, d, td in ((1, 0.0, 1e-12), (10, 1e-12, 1e-6), (40, 1e-9, 1e-3)):
            try:
                total = optimal_composition_epsilon(eps, d, L, td)
            except ValueError as exc:
                assert "total_delta" in str(exc)
                continue
            # the returned epsilon passes (rounding for printing never moves it below the bisection)
            assert optimal_composition_delta(eps, d, L, total) <= td


def test_rdp_curves_refuse_overflow_and_keep_tiny_values():
    with pytest.raises(ValueError, match="sensitivity / sigma"):
        accounting.rdp_gaussian(2.0, sigma=1e-300)  # was OverflowError
    with pytest.raises(ValueError, match="sensitivity / scale"):
        accounting.rdp_laplace(2.0, sensitivity=1e300, scale=1e-300)
    with pytest.raises(ValueError, match="sensitivity / sigma"):
        accounting.discrete_gaussian_rho(1e-300)  # was ZeroDivisionError
    assert accounting.discrete_gaussian_rho(1e-150) == pytest.approx(0.5e300, rel=1e-15)
    # k-RR at tiny epsilon: D_2 = log(1 + (e^e - 1)^2 / (e^e + k - 1) ...) ~ eps^2 / k
    for eps in (1e-150, 1e-12, 1e-6, 1.0):
        with mpmath.workdps(60):
            e = mpmath.mpf(eps)
            p = mpmath.exp(e) / (mpmath.exp(e) + 1)
            q = 1 / (mpmath.exp(e) + 1)
            ref = mpmath.log(p**2 / q + q**2 / p)
        assert accounting.rdp_randomized_response(2.0, epsilon=eps) == pytest.approx(float(ref), rel=1e-12)


def test_rdp_to_dp_matches_mpmath_at_extreme_deltas():
    orders = np.array([1.0 + 1e-12, 1.5, 2.0, 64.0, 1e6])
    curve = accounting.rdp_gaussian(orders, sigma=3.0)
    for delta in (1e-300, 1e-30, 1e-5, 0.5, 1 - 1e-16):
        eps, order = accounting.rdp_to_dp(orders, curve, delta)
        with mpmath.workdps(50):
            a = mpmath.mpf(order)
            d = mpmath.mpf(delta)
            ref = a / 18 + mpmath.log(1 - 1 / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1)
        assert eps == pytest.approx(max(float(ref), 0.0), rel=1e-12, abs=1e-300)


def test_delta_theorem_at_tiny_epsilon():
    from fedfreq.sample_threshold import delta_theorem

    for eps in (1e-300, 1e-12, 1.0, 50.0):
        p = 0.5 * -math.expm1(-eps) if eps < 1 else 0.1
        with mpmath.workdps(400):  # 1 - exp(-1e-300) needs 300 digits before the first one
            e, pp = mpmath.mpf(eps), mpmath.mpf(p)
            q = 1 - mpmath.exp(-e) * (1 - pp)
            kl = q * mpmath.log(q / pp) + (1 - q) * mpmath.log((1 - q) / (1 - pp))
            ref = mpmath.exp(-20 / q * kl)
        assert delta_theorem(p, eps, 20) == pytest.approx(float(ref), rel=1e-12)  # was ZeroDivision at 1e-300


def test_cpbm_rdp_order_range_and_unbounded_threshold_overflow():
    from fedfreq.contribution import unbounded_threshold

    with pytest.raises(ValueError, match="order"):
        accounting.cpbm_rdp(1e300, n=10, theta=0.25, m=1, dim=1)
    assert accounting.cpbm_rdp(1e15, n=10, theta=0.25, m=1, dim=1) == pytest.approx(math.log(3.0), rel=1e-12)
    with pytest.raises(ValueError, match="overflow"):
        unbounded_threshold(1e100, epsilon=1e-300, delta=1e-6)


@pytest.mark.parametrize("log_mu", [-300, -100, -30, -13, -8, -3, 0, 1, 2])
def test_audit_gaussian_profile_at_large_noise(log_mu):
    """audit.gaussian_hockey_stick is the certified upper bound of gaussian_delta: at
    σ/Δ up to 1e300, where the difference of normal CDFs cancels to 0, it stays within
    the stated tolerance above the exact value; gaussian_epsilon's ε attains its δ."""
    from fedfreq import audit

    mu = 10.0**log_mu
    for eps in GAUSS_EPS:
        ours = audit.gaussian_hockey_stick(eps, mu)
        exact = _mp_gaussian_delta(eps, 1.0, mu)
        if exact < 1e-320:
            assert ours <= 1e-300
            continue
        tol = GAUSS_DELTA_RTOL if (log_mu >= -3 and eps <= 50) else 1e-9
        assert exact <= ours <= exact * (1 + tol), (eps, mu, ours, exact)
    for delta in (1e-300, 1e-12, 1e-5, 0.3):
        if audit.gaussian_hockey_stick(0.0, mu) <= delta:
            assert audit.gaussian_epsilon(delta, mu) == 0.0
            continue
        eps = audit.gaussian_epsilon(delta, mu)
        assert float(_mp_gaussian_delta(eps, 1.0, mu)) == pytest.approx(delta, rel=1e-6), (delta, mu, eps)
    assert audit.gaussian_hockey_stick(0.0, 1e-20) > 3e-21  # a difference of normal CDFs gives 0 here


def test_audit_gaussian_profile_refuses_beyond_its_range():
    from fedfreq import audit

    with pytest.raises(ValueError, match="mu"):
        audit.gaussian_hockey_stick(1.0, 1e-305)
    with pytest.raises(ValueError, match="mu"):
        audit.gaussian_hockey_stick(1.0, 1.7e308)
    with pytest.raises(ValueError, match="mu"):
        audit.gaussian_epsilon(1e-300, 1e300)
