"""Tests of fedfreq.accounting.

Cross-checks against the field's reference libraries (dp-accounting, autodp),
exact numerics (closed forms, numerical integration, multi-precision sums),
values published in dp-accounting's own test-suite, and property tests of the
input validation.
"""

from __future__ import annotations

import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from autodp import dp_bank, privacy_calibrator, rdp_bank
from dp_accounting import gaussian_mechanism as dpa_gaussian
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from fedfreq.accounting import (
    DEFAULT_ORDERS,
    classical_gaussian_sigma,
    compose_rdp,
    delta_for_epsilon,
    gaussian_delta,
    gaussian_sigma,
    hockey_stick_divergence,
    rdp_gaussian,
    rdp_laplace,
    rdp_randomized_response,
    rdp_to_dp,
    renyi_divergence,
)
from fedfreq.accounting import (
    __all__ as accounting_all,
)

ORDERS = DEFAULT_ORDERS
TOL = 1e-10  # agreement required with the reference libraries (relative once |value| > 1)
HYP = settings(max_examples=40, deadline=None, database=None)


def assert_close(ours, ref, tol=TOL):
    """|ours - ref| <= tol * max(1, |ref|), elementwise; returns the max relative difference."""
    ours = np.asarray(ours, dtype=float)
    ref = np.asarray(ref, dtype=float)
    assert ours.shape == ref.shape
    scale = np.maximum(1.0, np.abs(ref))
    diff = np.abs(ours - ref) / scale
    assert np.all(diff <= tol), f"max scaled difference {diff.max():.3e} > {tol:g}"
    return float(diff.max())


def dpa_curve(event, orders=ORDERS, relation=None):
    """RDP curve of a dp_accounting event on `orders`."""
    kwargs = {} if relation is None else {"neighboring_relation": relation}
    acc = dpa_rdp.RdpAccountant(list(orders), **kwargs)
    acc.compose(event)
    return np.asarray(acc._rdp, dtype=float)


def rr_noise_parameter(epsilon, k):
    """dp_accounting's RR keeps the input w.p. 1-p and otherwise draws uniformly from all
    k buckets, so P(other bucket) = p/k. Matching q = 1/(e^eps + k - 1) gives p = k q."""
    return k / (math.exp(epsilon) + k - 1)


# ---------------------------------------------------------------------------
# module surface
# ---------------------------------------------------------------------------


def test_all_names_exist_and_default_orders_grid():
    import fedfreq.accounting as mod

    for name in accounting_all:
        assert hasattr(mod, name), name
    assert ORDERS.ndim == 1 and ORDERS.dtype == float
    assert np.all(np.diff(ORDERS) > 0) and ORDERS[0] > 1.0
    assert ORDERS[0] == 1.1 and ORDERS[98] == 10.9 and ORDERS[-1] == 1024.0
    assert {64.0, 128.0, 256.0, 512.0, 1024.0} <= set(ORDERS.tolist())
    # dp_accounting's default grid is contained bit-for-bit in ours
    assert set(map(float, dpa_rdp.DEFAULT_RDP_ORDERS)) <= set(ORDERS.tolist())
    with pytest.raises(ValueError):
        ORDERS[0] = 2.0  # read-only


def test_scalar_in_scalar_out_array_in_array_out():
    assert isinstance(rdp_gaussian(2.0, sigma=1.0), float)
    assert isinstance(rdp_laplace(2, scale=1.0), float)
    assert isinstance(rdp_randomized_response(np.float64(3.0), epsilon=1.0), float)
    grid = np.array([[1.5, 2.0], [3.0, 4.0]])
    for f in (
        lambda a: rdp_gaussian(a, sigma=2.0),
        lambda a: rdp_laplace(a, scale=2.0),
        lambda a: rdp_randomized_response(a, epsilon=1.0, k=3),
    ):
        out = f(grid)
        assert isinstance(out, np.ndarray) and out.shape == grid.shape
        assert_close(out.ravel(), [f(float(a)) for a in grid.ravel()], tol=1e-15)


# ---------------------------------------------------------------------------
# RDP curves against dp_accounting and autodp
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 20.0, 300.0])
@pytest.mark.parametrize("sensitivity", [0.5, 1.0, 3.0])
def test_rdp_gaussian_matches_dp_accounting_and_autodp(sigma, sensitivity):
    ours = rdp_gaussian(ORDERS, sensitivity=sensitivity, sigma=sigma)
    # both libraries use the noise multiplier sigma / sensitivity
    mult = sigma / sensitivity
    assert_close(ours, dpa_curve(dp_accounting.GaussianDpEvent(mult)))
    assert_close(ours, [rdp_bank.RDP_gaussian({"sigma": mult}, a) for a in ORDERS])
    assert_close(ours, ORDERS * sensitivity**2 / (2 * sigma**2), tol=1e-15)


@pytest.mark.parametrize("scale", [0.01, 0.1, 0.7, 1.0, 4.0, 100.0])
@pytest.mark.parametrize("sensitivity", [0.5, 1.0, 2.0])
def test_rdp_laplace_matches_dp_accounting_and_autodp(scale, sensitivity):
    ours = rdp_laplace(ORDERS, sensitivity=sensitivity, scale=scale)
    # dp_accounting: LaplaceDpEvent(noise_multiplier = b / Delta); autodp: b = scale / L1 sensitivity
    assert_close(ours, dpa_curve(dp_accounting.LaplaceDpEvent(scale / sensitivity)))
    assert_close(ours, [rdp_bank.RDP_laplace({"b": scale / sensitivity}, a) for a in ORDERS])
    # Mironov's first form, evaluated naively where it does not overflow
    t = sensitivity / scale
    a = ORDERS[ORDERS * t < 500]
    naive = np.log(a / (2 * a - 1) * np.exp((a - 1) * t) + (a - 1) / (2 * a - 1) * np.exp(-a * t)) / (a - 1)
    assert_close(rdp_laplace(a, sensitivity=sensitivity, scale=scale), naive, tol=1e-12)


def test_rdp_laplace_limits_and_no_overflow():
    t = 1.7
    # alpha -> infinity: the pure-DP epsilon t, approached from below
    big = rdp_laplace(1e12, scale=1 / t)
    assert big <= t and t - big < 1e-11
    # alpha -> 1: the KL divergence t + e^{-t} - 1
    kl = t + math.expm1(-t)
    near_one = rdp_laplace(1 + 1e-9, scale=1 / t)
    assert abs(near_one - kl) < 1e-8 * kl
    # huge t and alpha: the naive form would overflow exp((alpha-1) t)
    v = rdp_laplace(ORDERS, sensitivity=1000.0, scale=1.0)
    assert np.all(np.isfinite(v)) and np.all(v <= 1000.0) and np.all(np.diff(v) >= 0)
    assert_close(v, dpa_curve(dp_accounting.LaplaceDpEvent(1e-3)))


@pytest.mark.parametrize("epsilon", [0.01, 0.3, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("k", [2, 3, 10, 1000])
def test_rdp_randomized_response_matches_dp_accounting(epsilon, k):
    ours = rdp_randomized_response(ORDERS, epsilon=epsilon, k=k)
    ref = dpa_curve(
        dp_accounting.RandomizedResponseDpEvent(rr_noise_parameter(epsilon, k), k),
        relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
    )
    assert_close(ours, ref)
    assert np.all(np.diff(ours) > 0) and ours[-1] < epsilon


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 2.0, 6.0])
def test_rdp_binary_randomized_response_matches_autodp(epsilon):
    # autodp's p is the probability of telling the truth
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    ref = [rdp_bank.RDP_randresponse({"p": p}, a) for a in ORDERS]
    assert_close(rdp_randomized_response(ORDERS, epsilon=epsilon), ref)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_rdp_randomized_response_is_max_over_all_input_pairs(k):
    """Brute force: D_alpha(P_x || P_x') for every ordered pair x != x' of k-RR outputs."""
    epsilon = 1.3
    alphas = np.array([1.5, 2.0, 7.0, 64.0])
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    q = 1 / (math.exp(epsilon) + k - 1)
    laws = np.log(np.where(np.eye(k, dtype=bool), p, q))
    divs = np.array([renyi_divergence(laws[x], laws[y], alphas) for x in range(k) for y in range(k) if x != y])
    closed = rdp_randomized_response(alphas, epsilon=epsilon, k=k)
    assert_close(divs.max(axis=0), closed, tol=1e-13)
    assert_close(divs.min(axis=0), closed, tol=1e-13)  # every pair is a worst case


def test_rdp_randomized_response_limits():
    eps, k = 2.0, 4
    assert abs(rdp_randomized_response(1e12, epsilon=eps, k=k) - eps) < 1e-10
    # alpha -> 1: KL divergence (p - q) * eps between the two differing cells
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    q = 1 / (math.exp(eps) + k - 1)
    kl = (p - q) * eps
    assert abs(rdp_randomized_response(1 + 1e-9, epsilon=eps, k=k) - kl) < 1e-8 * kl
    # no overflow for large eps * alpha (exp(1024 * 50) overflows)
    v = rdp_randomized_response(ORDERS, epsilon=50.0, k=3)
    assert np.all(np.isfinite(v)) and v[-1] <= 50.0


def test_rdp_curves_match_multiprecision_even_when_tiny():
    """Reference: the defining formulas evaluated with 50-digit mpmath. Where an RDP value is
    tiny (small epsilon, large k, alpha near 1) the libraries' logsumexp forms cancel: dp_accounting's
    REPLACE_ONE randomized response is then off by ~2e-8 relative (eps=0.01, k=1000) and autodp's
    Laplace by ~2e-11 -- absolute errors ~1e-14, which is why the library cross-checks above scale
    by max(1, |value|). The log1p/expm1 forms used here keep ~1e-13 relative accuracy."""
    mpmath.mp.dps = 50
    idx = [0, 1, 5, 50, len(ORDERS) - 1]

    def rr_exact(a, e, k):
        a, e = mpmath.mpf(a), mpmath.mpf(e)
        q = 1 / (mpmath.exp(e) + k - 1)
        p = mpmath.exp(e) * q
        return mpmath.log(p**a * q ** (1 - a) + q**a * p ** (1 - a) + (k - 2) * q) / (a - 1)

    def laplace_exact(a, t):
        a, t = mpmath.mpf(a), mpmath.mpf(t)
        inner = a / (2 * a - 1) * mpmath.exp((a - 1) * t) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * t)
        return mpmath.log(inner) / (a - 1)

    for eps, k in [(0.01, 1000), (0.01, 2), (1.0, 10), (8.0, 3)]:
        ours = rdp_randomized_response(ORDERS, epsilon=eps, k=k)
        for i in idx:
            exact = float(rr_exact(ORDERS[i], eps, k))
            assert abs(ours[i] - exact) <= 1e-13 * exact
    for scale in [0.01, 1.0, 100.0]:
        ours = rdp_laplace(ORDERS, scale=scale)
        for i in idx:
            exact = float(laplace_exact(ORDERS[i], 1 / scale))
            assert abs(ours[i] - exact) <= 1e-13 * exact


# ---------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------


def test_compose_rdp_matches_dp_accounting_composition():
    events = dp_accounting.ComposedDpEvent(
        [
            dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(3.0), 7),
            dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(2.0), 3),
            dp_accounting.GaussianDpEvent(0.8),
        ]
    )
    ours = compose_rdp(
        *[rdp_gaussian(ORDERS, sigma=3.0)] * 7,
        *[rdp_laplace(ORDERS, scale=2.0)] * 3,
        rdp_gaussian(ORDERS, sigma=0.8),
    )
    assert_close(ours, dpa_curve(events))


def test_compose_rdp_shapes_scalars_and_infinity():
    assert compose_rdp(0.5, 0.25) == 0.75
    out = compose_rdp([0.1, np.inf], [0.2, 0.3])
    assert out[1] == np.inf and abs(out[0] - 0.3) < 1e-15
    with pytest.raises(ValueError, match="shape"):
        compose_rdp(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="rdps"):
        compose_rdp()
    with pytest.raises(ValueError, match=r"rdps\[1\]"):
        compose_rdp([0.1, 0.2], [0.1, -0.2])


# ---------------------------------------------------------------------------
# RDP -> (eps, delta) conversion
# ---------------------------------------------------------------------------


def _shared_branch(orders, rdp, delta):
    """True when compute_epsilon applies the same formula as rdp_to_dp at every order:
    no order in [1, 1.01] and no RDP value below -log(1 - delta^2) (its KL shortcut)."""
    rdp = np.asarray(rdp)
    return bool(np.all(np.asarray(orders) > 1.01) and np.all(rdp >= -math.log1p(-(delta**2))))


GRID_SIGMAS = [0.5, 0.8, 1.0, 2.0, 5.0, 20.0, 100.0]
GRID_DELTAS = [0.1, 1e-3, 1e-5, 1e-8, 1e-12, 1e-30]


def test_rdp_to_dp_matches_compute_epsilon_on_gaussian_grid():
    n_compared = 0
    worst = 0.0
    for sigma in GRID_SIGMAS:
        curve = rdp_gaussian(ORDERS, sigma=sigma)
        for delta in GRID_DELTAS:
            if not _shared_branch(ORDERS, curve, delta):
                continue
            eps, order = rdp_to_dp(ORDERS, curve, delta)
            ref_eps, ref_order = dpa_rdp.compute_epsilon(ORDERS, curve, delta)
            worst = max(worst, assert_close(eps, ref_eps))
            assert order == ref_order
            n_compared += 1
    # 42 pairs; (sigma, delta) = (20, 0.1) and (100, 0.1) hit dp_accounting's KL shortcut
    assert n_compared == 40
    assert worst <= TOL


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_rdp_to_dp_matches_accountant_on_composed_curves(delta):
    for steps, sigma, lap_scale in [(1, 1.0, 5.0), (50, 4.0, 20.0), (1000, 30.0, 200.0)]:
        event = dp_accounting.ComposedDpEvent(
            [
                dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma), steps),
                dp_accounting.LaplaceDpEvent(lap_scale),
            ]
        )
        acc = dpa_rdp.RdpAccountant(list(ORDERS))
        acc.compose(event)
        ours_curve = compose_rdp(steps * rdp_gaussian(ORDERS, sigma=sigma), rdp_laplace(ORDERS, scale=lap_scale))
        assert _shared_branch(ORDERS, ours_curve, delta)
        eps, order = rdp_to_dp(ORDERS, ours_curve, delta)
        ref_eps, ref_order = acc.get_epsilon_and_optimal_order(delta)
        assert_close(eps, ref_eps)
        assert order == ref_order
        assert_close(eps, acc.get_epsilon(delta))


def test_rdp_to_dp_formula_and_infinite_entries():
    orders = np.array([2.0, 5.0, 17.5])
    rdp = np.array([0.8, np.inf, 1.3])
    delta = 1e-6
    by_hand = [
        r + math.log(1 / (a * delta)) / (a - 1) + math.log(1 - 1 / a)
        for a, r in zip(orders, rdp, strict=False)
        if r < np.inf
    ]
    eps, order = rdp_to_dp(orders, rdp, delta)
    assert abs(eps - min(by_hand)) < 1e-13 and order == 17.5
    assert_close(eps, dpa_rdp.compute_epsilon(orders, rdp, delta)[0])  # inf handled alike
    assert rdp_to_dp(orders, np.full(3, np.inf), delta) == (math.inf, math.inf)
    # never negative: tiny RDP at a large delta gives eps = 0
    assert rdp_to_dp(orders, [1e-3, 1e-3, 1e-3], 0.9)[0] == 0.0
    e, o = rdp_to_dp([3.0], [0.2], 1e-3)
    assert isinstance(e, float) and isinstance(o, float)


def test_rdp_to_dp_where_dp_accounting_differs():
    """Two documented differences, each valid but a different bound.

    (i) KL shortcut: compute_epsilon returns 0 when rdp < -log(1 - delta^2), using
        TV <= sqrt(1 - exp(-KL)) and KL <= D_alpha. rdp_to_dp applies Prop. 12 only,
        which is positive here, hence larger (more conservative), never smaller.
    (ii) Orders in (1, 1.01]: compute_epsilon gives up (inf); the Prop. 12 formula is
        valid for every alpha > 1, and rdp_to_dp returns a finite bound that is still
        an upper bound on the exact epsilon of the mechanism.
    """
    delta = 1e-5
    tiny = np.full(ORDERS.shape, 1e-12)  # below delta^2 = 1e-10
    assert not _shared_branch(ORDERS, tiny, delta)
    ref_eps, _ = dpa_rdp.compute_epsilon(ORDERS, tiny, delta)
    eps, _ = rdp_to_dp(ORDERS, tiny, delta)
    assert ref_eps == 0 and eps > 0

    sigma = 50.0
    orders = np.array([1.005])
    curve = rdp_gaussian(orders, sigma=sigma)
    assert dpa_rdp.compute_epsilon(orders, curve, delta)[0] == np.inf
    eps, order = rdp_to_dp(orders, curve, delta)
    assert np.isfinite(eps) and order == 1.005
    # still a valid bound: the exact Gaussian delta at this epsilon is below the target
    assert gaussian_delta(eps, sigma=sigma) <= delta


def test_delta_for_epsilon_round_trip_and_dp_accounting():
    for sigma in [0.7, 2.0, 10.0]:
        curve = compose_rdp(rdp_gaussian(ORDERS, sigma=sigma), rdp_laplace(ORDERS, scale=30.0))
        for delta in [1e-2, 1e-5, 1e-9, 1e-20]:
            eps, order = rdp_to_dp(ORDERS, curve, delta)
            assert eps > 0
            back, back_order = delta_for_epsilon(ORDERS, curve, eps)
            assert abs(back - delta) <= 1e-9 * delta and back_order == order
            ref, ref_order = dpa_rdp.compute_delta(ORDERS, curve, eps)
            assert abs(back - ref) <= TOL * ref and back_order == ref_order
    # conventions: delta capped at 1; all-infinite curve certifies nothing
    assert delta_for_epsilon([2.0], [50.0], 0.0) == (1.0, 2.0)
    assert delta_for_epsilon([2.0, 3.0], [np.inf, np.inf], 1.0) == (1.0, math.inf)
    # log space: a delta of ~1e-280 is returned, not underflowed to 0
    d, _ = delta_for_epsilon([64.0], [1.0], 11.0)
    assert 0 < d < 1e-250


# ---------------------------------------------------------------------------
# values stated in dp-accounting's own test-suite
# ---------------------------------------------------------------------------


def test_published_value_gaussian_sigma_for_one_and_1e_6():
    """dp-accounting 0.6.0, dp_accounting/rdp/rdp_privacy_accountant_test.py,
    test_compute_epsilon_delta_gaussian: "noise multiplier is chosen to obtain exactly
    (1,1e-6)-DP" -- sigma = 4.530877117 with the Prop. 12 conversion over the orders
    0.001 * i, i = 1000..99999 (checked there with assertAlmostEqual, 7 places).
    Order 1.000 is dropped here (rdp_to_dp requires alpha > 1; compute_epsilon gives
    inf at alpha = 1 anyway, so the minimum is unchanged)."""
    orders = 0.001 * np.arange(1001, 100000)
    curve = rdp_gaussian(orders, sigma=4.530877117)
    eps, _ = rdp_to_dp(orders, curve, 1e-6)
    assert abs(eps - 1.0) < 5e-8
    delta, _ = delta_for_epsilon(orders, curve, 1.0)
    assert abs(delta - 1e-6) < 5e-8 * 1e-6 * 100  # delta is ~100x more sensitive than eps here


def test_published_value_pure_dp_conversion():
    """Same test file, test_compute_epsilon_delta_pure_dp: a constant RDP curve 1.1 on
    orders 2..32 at delta = 1e-5 gives epsilon = 1.32783806176 ("computed by hand",
    11 decimals) at order 32."""
    orders = np.arange(2, 33, dtype=float)
    eps, order = rdp_to_dp(orders, np.full(orders.shape, 1.1), 1e-5)
    assert abs(eps - 1.32783806176) <= 5e-12 and order == 32.0
    # independent check of that number: the formula at alpha = 32
    a = 32.0
    assert abs(eps - (1.1 + math.log(1 / (a * 1e-5)) / (a - 1) + math.log(1 - 1 / a))) < 1e-14


def test_gaussian_delta_matches_balle_wang_erfc_form():
    """dp-accounting's test_delta_bounds_gaussian writes Balle & Wang (2018) Theorem 8
    for sigma = Delta = 1 as erfc((eps - 1/2)/sqrt 2)/2 - e^eps erfc((eps + 1/2)/sqrt 2)/2."""
    eps = 0.1 * np.arange(0, 80)
    ref = special.erfc((eps - 0.5) / math.sqrt(2)) / 2 - np.exp(eps) * special.erfc((eps + 0.5) / math.sqrt(2)) / 2
    ours = gaussian_delta(eps, sigma=1.0)
    ok = ref > 1e-10  # the erfc difference loses relative accuracy below this
    assert np.all(np.abs(ours[ok] - ref[ok]) <= 1e-12 * ref[ok])
    # and the RDP route is never tighter than the exact profile (it is an upper bound)
    curve = rdp_gaussian(ORDERS, sigma=1.0)
    for e in eps[1::7]:
        assert delta_for_epsilon(ORDERS, curve, float(e))[0] >= gaussian_delta(float(e), sigma=1.0)


# ---------------------------------------------------------------------------
# exact divergences
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("a,b", [(0.3, 0.6), (0.01, 0.5), (0.5, 0.49), (0.9, 0.2)])
def test_renyi_divergence_bernoulli_closed_form(a, b):
    alphas = np.array([1.01, 1.5, 2.0, 3.0, 10.0, 50.0])
    closed = np.log(a**alphas * b ** (1 - alphas) + (1 - a) ** alphas * (1 - b) ** (1 - alphas)) / (alphas - 1)
    ours = renyi_divergence(np.log([a, 1 - a]), np.log([b, 1 - b]), alphas)
    assert_close(ours, closed, tol=1e-12)
    # KL as alpha -> 1
    kl = a * math.log(a / b) + (1 - a) * math.log((1 - a) / (1 - b))
    assert abs(renyi_divergence(np.log([a, 1 - a]), np.log([b, 1 - b]), 1 + 1e-8) - kl) < 1e-6 * kl


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_renyi_divergence_reproduces_randomized_response_rdp(epsilon):
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    lp, lq = np.log([p, 1 - p]), np.log([1 - p, p])
    ours = renyi_divergence(lp, lq, ORDERS)
    assert_close(ours, rdp_randomized_response(ORDERS, epsilon=epsilon), tol=1e-12)
    assert_close(ours, [rdp_bank.RDP_randresponse({"p": p}, a) for a in ORDERS])


def test_renyi_divergence_zero_probabilities():
    # p = 0 contributes nothing, also where q = 0 too
    with np.errstate(divide="ignore"):
        lp = np.log([0.5, 0.5, 0.0, 0.0])
        lq = np.log([0.25, 0.25, 0.5, 0.0])
    expected = math.log(2 * 0.5**2 / 0.25)  # alpha = 2
    assert abs(renyi_divergence(lp, lq, 2.0) - expected) < 1e-14
    # q = 0 where p > 0: infinite
    assert renyi_divergence(lq, lp, [1.5, 2.0]).tolist() == [np.inf, np.inf]
    # identical distributions: zero up to rounding, and never negative
    same = renyi_divergence(lp, lp, ORDERS)
    # rounding budget: the terms alpha*log p + (1-alpha)*log q have magnitude ~ alpha*log 2,
    # each exact to a few ulps of that; the sum is then divided by alpha - 1
    budget = 4 * np.finfo(float).eps * (ORDERS * math.log(2) + 1)
    assert np.all(same >= 0.0) and np.all(same * (ORDERS - 1) <= budget)
    near = np.log([0.3, 0.7])
    assert np.all(renyi_divergence(near, near, ORDERS) >= 0.0)


def test_hockey_stick_matches_randomized_response_closed_form():
    for eps0, k in [(1.0, 2), (2.5, 2), (1.0, 5), (3.0, 20)]:
        p = math.exp(eps0) / (math.exp(eps0) + k - 1)
        q = 1 / (math.exp(eps0) + k - 1)
        lp = np.log(np.r_[p, q, np.full(k - 2, q)])
        lq = np.log(np.r_[q, p, np.full(k - 2, q)])
        grid = np.linspace(0, eps0 + 1, 41)
        closed = np.maximum(0.0, (math.exp(eps0) - np.exp(grid)) / (math.exp(eps0) + k - 1))
        ours = hockey_stick_divergence(lp, lq, grid)
        assert np.all(np.abs(ours - closed) <= 1e-14)
        # TV distance at eps = 0
        assert abs(hockey_stick_divergence(lp, lq, 0.0) - (p - q)) < 1e-15


def test_hockey_stick_tiny_values_against_multiprecision():
    """Binomial(40, 0.3) vs Binomial(40, 0.7) at large epsilon: delta spans 1e-4 .. 1e-200.
    Reference: the same float log-probabilities summed exactly with mpmath (60 digits), so the
    comparison measures only our arithmetic. Error budget: z = eps + lq - lp carries an absolute
    rounding error <= 1e-13 and 1 - e^z is at least 1e-3 away from 0 on this grid -> 1e-9."""
    n = 40
    lp = stats.binom.logpmf(np.arange(n + 1), n, 0.3)
    lq = stats.binom.logpmf(np.arange(n + 1), n, 0.7)
    mpmath.mp.dps = 60
    for eps in [2.0, 10.0, 20.0, 33.0]:
        exact = mpmath.fsum(
            max(mpmath.mpf(0), mpmath.exp(mpmath.mpf(a)) - mpmath.exp(eps + mpmath.mpf(b)))
            for a, b in zip(lp, lq, strict=False)
        )
        ours = hockey_stick_divergence(lp, lq, eps)
        assert ours > 0
        assert abs(ours - float(exact)) <= 1e-9 * float(exact), (eps, ours, exact)
    # smallest case really is tiny (the naive p - e^eps q sum would still work, but
    # only the log-space one keeps relative accuracy when the terms nearly cancel)
    assert hockey_stick_divergence(lp, lq, 33.0) < 1e-6


def test_hockey_stick_support_mismatch_and_vectorisation():
    with np.errstate(divide="ignore"):
        lp = np.log([0.5, 0.5, 0.0])
        lq = np.log([0.5, 0.0, 0.5])
    # the 0.5 mass where q = 0 can never be covered
    assert hockey_stick_divergence(lp, lq, [0.0, 5.0, 50.0]).tolist() == [0.5, 0.5, 0.5]
    assert hockey_stick_divergence(lp, lp, 0.0) == 0.0


# ---------------------------------------------------------------------------
# the exact Gaussian mechanism
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("sigma,sensitivity", [(1.0, 1.0), (3.0, 1.0), (0.5, 2.0), (10.0, 4.0)])
def test_gaussian_delta_matches_numerical_integration(sigma, sensitivity):
    """delta(eps) = int max(0, p(x) - e^eps q(x)) dx for p = N(0, s^2), q = N(Delta, s^2);
    the integrand is positive exactly for x < Delta/2 - eps s^2 / Delta."""
    for eps in [0.0, 0.2, 1.0, 3.0]:
        x_star = sensitivity / 2 - eps * sigma**2 / sensitivity

        def integrand(x, eps=eps):
            return stats.norm.pdf(x, 0, sigma) - math.exp(eps) * stats.norm.pdf(x, sensitivity, sigma)

        ref, err = integrate.quad(integrand, -np.inf, x_star, epsabs=0, epsrel=1e-12, limit=200)
        ours = gaussian_delta(eps, sensitivity=sensitivity, sigma=sigma)
        assert ref > 0 and abs(ours - ref) <= max(1e-9 * ref, 10 * err), (eps, ours, ref, err)


def test_gaussian_delta_matches_dp_accounting_and_autodp():
    worst = 0.0
    for sigma in [0.3, 1.0, 2.0, 7.0, 40.0]:
        for eps in [0.0, 0.1, 1.0, 5.0, 20.0]:
            ours = gaussian_delta(eps, sigma=sigma)
            if ours == 0.0:
                continue
            for ref_log in (dpa_gaussian._get_log_delta(sigma, eps), dp_bank.get_logdelta_ana_gaussian(sigma, eps)):
                diff = abs(math.log(ours) - ref_log)
                worst = max(worst, diff)
                assert diff <= 1e-10 * max(1.0, abs(ref_log))
    assert worst < 1e-10


def test_gaussian_delta_no_underflow_near_1e_minus_300():
    """At sigma = 1, eps = 37.45 the exact delta is ~1e-300: still positive and accurate
    (reference: Theorem 8 evaluated with 80-digit mpmath). Error budget: log_ndtr is
    accurate to ~1e-16 relative (|log A| ~ 700 -> 1e-13 absolute) and 1 - B/A ~ 0.026,
    so the relative error of delta is ~1e-11; tolerance 1e-9."""
    mpmath.mp.dps = 80
    for eps in [30.0, 37.45, 37.5]:
        ours = gaussian_delta(eps, sigma=1.0)
        ref = mpmath.ncdf(0.5 - eps) - mpmath.exp(eps) * mpmath.ncdf(-0.5 - eps)
        assert np.isfinite(ours) and ours > 0
        assert abs(ours - float(ref)) <= 1e-9 * float(ref)
    assert 1e-301 < gaussian_delta(37.45, sigma=1.0) < 1e-299
    # below the double range: 0.0, never NaN; also vectorised
    out = gaussian_delta(np.array([1.0, 60.0, 1e4]), sigma=1.0)
    assert not np.any(np.isnan(out)) and out[0] > 0 and out[1] == 0.0 and out[2] == 0.0
    # the naive evaluation indeed fails here (1 - 1 cancellation gives 0 or garbage)
    tiny = gaussian_delta(37.45, sigma=1.0)
    naive = stats.norm.cdf(0.5 - 37.45) - math.exp(37.45) * stats.norm.cdf(-0.5 - 37.45)
    assert not abs(naive - tiny) <= 1e-3 * tiny


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-10])
def test_gaussian_sigma_is_the_smallest_valid_sigma(epsilon, delta):
    sigma = gaussian_sigma(epsilon, delta, sensitivity=2.0)
    assert gaussian_delta(epsilon, sensitivity=2.0, sigma=sigma) <= delta
    assert gaussian_delta(epsilon, sensitivity=2.0, sigma=sigma * (1 - 1e-10)) > delta
    # dp_accounting, with its search tolerance tightened to 1e-14 (sensitivity 1 scales out)
    ref = dpa_gaussian.get_sigma_gaussian(epsilon, delta, tol=1e-14)
    assert abs(sigma / 2.0 - ref) <= TOL * ref


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-2, 1e-3, 1e-5])
def test_gaussian_sigma_consistent_with_autodp_balle_wang_algorithm(epsilon, delta):
    """autodp's ana_gaussian_mech is a port of Balle & Wang's reference code; it stops when
    |delta(sigma) - delta| <= 1e-12 (absolute). Its answer must meet that criterion when
    judged by our delta(eps) formula, and bracket ours accordingly."""
    theirs = privacy_calibrator.ana_gaussian_mech(epsilon, delta)["sigma"]
    assert abs(gaussian_delta(epsilon, sigma=theirs) - delta) <= 1e-12 + 1e-15
    ours = gaussian_sigma(epsilon, delta)
    # translate the 1e-12 delta tolerance to sigma through the slope of delta(sigma)
    h = 1e-6 * ours
    slope = abs(gaussian_delta(epsilon, sigma=ours + h) - gaussian_delta(epsilon, sigma=ours - h)) / (2 * h)
    assert abs(theirs - ours) <= 1.5e-12 / slope + 1e-13 * ours


def test_classical_gaussian_sigma():
    # Dwork & Roth Theorem A.1 by hand
    by_hand = 3.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5
    assert abs(classical_gaussian_sigma(0.5, 1e-5, sensitivity=3.0) - by_hand) < 1e-12
    # keyword form of delta works too (same call shape as other calibrations in the package)
    assert classical_gaussian_sigma(0.5, delta=1e-5, sensitivity=3.0) == by_hand
    for eps in [0.01, 0.3, 0.9, 0.999]:
        for delta in [1e-2, 1e-6, 1e-12]:
            classical = classical_gaussian_sigma(eps, delta)
            # valid (its delta is below target) and never smaller than the analytic calibration
            assert gaussian_delta(eps, sigma=classical) <= delta
            assert classical >= gaussian_sigma(eps, delta)
    # autodp implements the same classical formula
    theirs = privacy_calibrator.classical_gaussian_mech(0.7, 1e-6)["sigma"]
    assert abs(classical_gaussian_sigma(0.7, 1e-6) - theirs) < 1e-12
    for bad in [1.0, 2.0, 0.0, -0.5]:
        with pytest.raises(ValueError, match="epsilon"):
            classical_gaussian_sigma(bad, 1e-5)


# ---------------------------------------------------------------------------
# input validation (property tests)
# ---------------------------------------------------------------------------

nonpositive_or_nonfinite = st.one_of(
    st.floats(max_value=0.0, allow_nan=False),
    st.sampled_from([float("nan"), float("inf"), -float("inf")]),
)
outside_unit_interval = st.one_of(
    st.floats(max_value=0.0, allow_nan=False),
    st.floats(min_value=1.0, allow_nan=False),
    st.just(float("nan")),
)
bad_order = st.one_of(st.floats(max_value=1.0, allow_nan=False), st.sampled_from([float("nan"), float("inf")]))


@HYP
@given(sigma=nonpositive_or_nonfinite)
def test_bad_sigma_raises(sigma):
    for call in (
        lambda: rdp_gaussian(2.0, sigma=sigma),
        lambda: rdp_gaussian(ORDERS, sigma=sigma),
        lambda: gaussian_delta(1.0, sigma=sigma),
    ):
        with pytest.raises(ValueError, match="sigma"):
            call()


@HYP
@given(value=nonpositive_or_nonfinite)
def test_bad_scale_sensitivity_epsilon_raise(value):
    with pytest.raises(ValueError, match="scale"):
        rdp_laplace(2.0, scale=value)
    with pytest.raises(ValueError, match="sensitivity"):
        rdp_laplace(2.0, sensitivity=value, scale=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_sigma(1.0, 1e-5, sensitivity=value)
    with pytest.raises(ValueError, match="epsilon"):
        rdp_randomized_response(2.0, epsilon=value)


@HYP
@given(delta=outside_unit_interval)
def test_bad_delta_raises(delta):
    for call in (
        lambda: rdp_to_dp(ORDERS, rdp_gaussian(ORDERS, sigma=1.0), delta),
        lambda: gaussian_sigma(1.0, delta),
        lambda: classical_gaussian_sigma(0.5, delta),
    ):
        with pytest.raises(ValueError, match="delta"):
            call()


@HYP
@given(order=bad_order, position=st.integers(min_value=0, max_value=4))
def test_bad_order_raises(order, position):
    grid = [1.5, 2.0, 3.0, 8.0, 32.0]
    grid[position] = order
    lp = np.log([0.5, 0.5])
    for call in (
        lambda: rdp_gaussian(order, sigma=1.0),
        lambda: rdp_gaussian(grid, sigma=1.0),
        lambda: rdp_laplace(grid, scale=1.0),
        lambda: rdp_randomized_response(order, epsilon=1.0),
        lambda: renyi_divergence(lp, lp, grid),
        lambda: rdp_to_dp(grid, np.ones(5), 1e-5),
        lambda: delta_for_epsilon(grid, np.ones(5), 1.0),
    ):
        with pytest.raises(ValueError, match="order"):
            call()


@HYP
@given(bad=st.one_of(st.floats(max_value=-1e-300, allow_nan=False), st.just(float("nan"))))
def test_bad_rdp_values_raise(bad):
    curve = np.ones(4)
    curve[2] = bad
    with pytest.raises(ValueError, match="rdp"):
        rdp_to_dp([2.0, 3.0, 4.0, 5.0], curve, 1e-5)
    with pytest.raises(ValueError, match="rdp"):
        delta_for_epsilon([2.0, 3.0, 4.0, 5.0], curve, 1.0)


def test_other_validation_messages():
    with pytest.raises(ValueError, match="k"):
        rdp_randomized_response(2.0, epsilon=1.0, k=1)
    with pytest.raises(ValueError, match="k"):
        rdp_randomized_response(2.0, epsilon=1.0, k=2.5)
    with pytest.raises(ValueError, match="same shape as orders"):
        rdp_to_dp([2.0, 3.0], [1.0], 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        delta_for_epsilon([2.0], [1.0], -0.1)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_delta(-1.0, sigma=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_sigma(float("nan"), 1e-5)
    lp = np.log([0.5, 0.5])
    with pytest.raises(ValueError, match="log_p"):
        renyi_divergence([0.5, 0.5], lp, 2.0)  # probabilities instead of log-probabilities
    with pytest.raises(ValueError, match="log_q"):
        hockey_stick_divergence(lp, np.log([0.5, 0.6]), 0.0)  # not normalised
    with pytest.raises(ValueError, match="same shape"):
        renyi_divergence(lp, np.log([0.2, 0.3, 0.5]), 2.0)
    with pytest.raises(ValueError, match="log_p"):
        hockey_stick_divergence([np.nan, 0.0], lp, 0.0)
    with pytest.raises(ValueError, match="epsilon"):
        hockey_stick_divergence(lp, lp, float("nan"))
