"""Calibrations and accountants at extreme parameters, against mpmath.

Each calibration is checked at a grid of extreme and ordinary parameters: the exact
δ (or ε) of the returned noise, computed with mpmath at high precision from the
returned double itself, never exceeds the target, and the noise is within a stated
relative tolerance of the exact optimum where the function claims optimality.
Parameters outside a function's supported range must raise a ValueError that names
the parameter.
"""

from __future__ import annotations

import mpmath
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
