"""Tests of fedfreq.bitpush (Cormode & Markov 2021: bit pushing).

Statistical tests use fixed seeds and CLT tolerances. A sample mean of T estimates
must lie within Z = 4 standard errors sqrt(V/T) of its expectation (V the known
variance); a sample variance s^2 of T estimates must lie within Z standard errors of
the true variance V, with SE(s^2) ~= V sqrt(2/(T-1)) (the estimates are sums of many
independent reports, hence close to normal, excess kurtosis ~ 0).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from fedfreq import accounting
from fedfreq import bitpush as bp

Z = 4.0
HYP = settings(max_examples=30, deadline=None, database=None)


def var_within(sample, v):
    t = len(sample)
    return abs(np.var(sample, ddof=1) - v) <= Z * v * math.sqrt(2.0 / (t - 1))


# ---------------------------------------------------------------------------
# Lemma 1 and its finite-population form
# ---------------------------------------------------------------------------


def test_lemma1_symbolic_iid_clients():
    """For i.i.d. clients, each bit mean is Binomial(c_j, mu_j)/c_j, independent across bits."""
    mu0, mu1, c0, c1 = sp.symbols("mu0 mu1 c0 c1", positive=True)
    # variance of 2^j * Binomial(c, mu)/c, by the binomial variance c mu (1-mu)
    var = sum(4**j * c * m * (1 - m) / c**2 for j, (m, c) in enumerate([(mu0, c0), (mu1, c1)]))
    n, p0 = sp.symbols("n p0", positive=True)
    lemma = (mu0 * (1 - mu0) / p0 + 4 * mu1 * (1 - mu1) / (1 - p0)) / n
    assert sp.simplify(var.subs({c0: n * p0, c1: n * (1 - p0)}) - lemma) == 0
    assert math.isclose(
        bp.estimator_variance([0.3, 0.6], [0.25, 0.75], 40), float(lemma.subs({mu0: 0.3, mu1: 0.6, p0: 0.25, n: 40}))
    )


def test_lemma1_monte_carlo_fresh_population():
    rng = np.random.default_rng(1)
    n, b, trials = 500, 10, 1500
    p = bp.weighted_probabilities(b, 1.0)
    ests = np.empty(trials)
    for t in range(trials):
        x = bp.synthetic_integers(n, distribution="normal", b=b, mean=350, sd=50, rng=rng)
        ests[t] = bp.bit_push(x, b=b, probs=p, rng=rng).estimate
    # bit means of the distribution, from one very large sample (its error is negligible here)
    big = bp.synthetic_integers(2_000_000, distribution="normal", b=b, mean=350, sd=50, rng=rng)
    mu = float(big.mean())
    counts = bp.qmc_counts(p, n)
    m = bp.bit_means(big, b=b)
    v = float(np.sum(4.0 ** np.arange(b) * m * (1 - m) / np.maximum(counts, 1) * (counts > 0)))
    assert abs(ests.mean() - mu) <= Z * math.sqrt(v / trials) + 0.1
    assert var_within(ests, v)
    # counts here are n p_j rounded; Lemma 1 with exact n p_j is within a few percent
    assert abs(bp.estimator_variance(m, p, n) / v - 1) < 0.1


def test_finite_population_variance_exhaustive():
    x = np.array([0, 1, 3, 2, 3])
    counts = [2, 3]
    n, b = len(x), 2
    ests = []
    for bit1_set in itertools.combinations(range(n), counts[1]):
        idx = np.zeros(n, dtype=int)
        idx[list(bit1_set)] = 1
        m = [((x >> j) & 1)[idx == j].mean() for j in range(b)]
        ests.append(m[0] + 2 * m[1])
    ests = np.array(ests)
    assert math.isclose(ests.mean(), x.mean(), rel_tol=1e-12)
    assert math.isclose(np.var(ests), bp.finite_population_variance(x, counts, b=b), rel_tol=1e-12)


def test_finite_population_variance_monte_carlo():
    rng = np.random.default_rng(2)
    b, n, trials = 10, 400, 3000
    x = bp.synthetic_integers(n, distribution="normal", b=b, mean=350, sd=50, rng=rng)
    p = bp.weighted_probabilities(b, 0.5)
    counts = bp.qmc_counts(p, n)
    ests = np.array([bp.bit_push(x, b=b, probs=p, rng=rng).estimate for _ in range(trials)])
    v = bp.finite_population_variance(x, counts, b=b)
    assert abs(ests.mean() - x.mean()) <= Z * math.sqrt(v / trials)
    assert var_within(ests, v)


# ---------------------------------------------------------------------------
# Corollary 2 (b_send > 1)
# ---------------------------------------------------------------------------


def test_corollary2_fails_for_positively_correlated_bits():
    """Values in {0, 3}: both bits equal. With b_send = 2 every client sends its whole value."""
    rng = np.random.default_rng(3)
    n, trials = 200, 3000
    ests = np.empty(trials)
    for t in range(trials):
        x = 3 * rng.integers(0, 2, n)
        ests[t] = bp.bit_push(x, b=2, probs=[0.5, 0.5], b_send=2, rng=rng).estimate - 1.5
    true_var = 2.25 / n  # the sample mean of n values with variance 9/4
    cor2 = bp.estimator_variance([0.5, 0.5], [0.5, 0.5], n, b_send=2)
    assert math.isclose(cor2, 1.25 / n)
    assert var_within(ests, true_var)
    assert np.var(ests, ddof=1) > cor2 * 1.5


def test_b_send_assignment_distinct_and_exact():
    p = bp.weighted_probabilities(6, 0.3)
    idx = bp.assign_bits(1000, p, b_send=3, rng=0)
    assert idx.shape == (1000, 3)
    assert all(len(set(r)) == 3 for r in idx.tolist())
    assert np.array_equal(np.bincount(idx.ravel(), minlength=6), bp.qmc_counts(p, 3000))
    with pytest.raises(ValueError, match="b_send"):
        bp.assign_bits(100, bp.weighted_probabilities(6, 1.0), b_send=3)


# ---------------------------------------------------------------------------
# Lemma 3
# ---------------------------------------------------------------------------


def test_lemma3_lagrangian_symbolic():
    b = 3
    p = sp.symbols("p0:3", positive=True)
    beta = sp.symbols("beta0:3", positive=True)
    lam = sp.symbols("lam", positive=True)
    lagr = sum(beta[j] / p[j] for j in range(b)) + lam * (sum(p) - 1)
    # stationarity in each p_j alone (positive root), then the constraint fixes lambda
    pj = [sp.solve(sp.diff(lagr, p[j]), p[j])[0] for j in range(b)]
    lam_star = sp.solve(sp.Eq(sum(pj), 1), lam)[0]
    a = sum(sp.sqrt(bj) for bj in beta)
    assert all(sp.simplify(pj[j].subs(lam, lam_star) - sp.sqrt(beta[j]) / a) == 0 for j in range(b))


def test_lemma3_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(5):
        m = rng.uniform(0.02, 0.98, 6)
        popt = bp.optimal_probabilities(m)
        vopt = bp.estimator_variance(m, popt, 1)

        # numerical minimisation on the simplex (softmax parametrisation)
        def f(z, m=m):
            return bp.estimator_variance(m, np.exp(z - z.max()) / np.exp(z - z.max()).sum(), 1)

        res = optimize.minimize(
            f, np.zeros(6), method="Nelder-Mead", options={"maxiter": 20000, "xatol": 1e-10, "fatol": 1e-12}
        )
        assert vopt <= res.fun * (1 + 1e-9)
        assert abs(res.fun / vopt - 1) < 1e-4
        # random points of the simplex never beat it
        for q in rng.dirichlet(np.ones(6), 200):
            assert bp.estimator_variance(m, q, 1) >= vopt * (1 - 1e-12)
    assert math.isclose(bp.estimator_variance(m, popt, 7), float(np.sum(np.sqrt(bp.bitwise_variances(m)))) ** 2 / 7)


def test_optimal_probabilities_large_b_and_degenerate():
    p = bp.optimal_probabilities(np.full(62, 0.5))
    assert np.all(np.isfinite(p)) and math.isclose(p.sum(), 1.0)
    assert np.allclose(p, bp.weighted_probabilities(62, 1.0))
    assert np.allclose(bp.optimal_probabilities([0.0, 1.0, 0.0]), 1 / 3)


# ---------------------------------------------------------------------------
# Algorithm 2 / Lemma 4
# ---------------------------------------------------------------------------


def test_adaptive_beats_weighted_when_bit_depth_is_loose():
    rng = np.random.default_rng(5)
    b, n, trials = 24, 5000, 60
    x = bp.synthetic_integers(n, distribution="normal", b=b, mean=350, sd=50, rng=rng)
    w = [bp.bit_push(x, b=b, alpha=1.0, rng=rng).estimate for _ in range(trials)]
    a = [bp.adaptive_bit_push(x, b=b, rng=rng).estimate for _ in range(trials)]
    mu = x.mean()
    assert np.mean((np.array(a) - mu) ** 2) * 100 < np.mean((np.array(w) - mu) ** 2)
    assert abs(np.mean(a) - mu) < 4 * np.std(a) / math.sqrt(trials)
    assert math.sqrt(np.mean((np.array(a) - mu) ** 2)) / mu < 0.03
    # the literal rule (a bit seen in a few reports that agree looks constant) fails here
    lit = [bp.adaptive_bit_push(x, b=b, min_reports=0, rng=rng).estimate for _ in range(trials)]
    assert np.mean((np.array(lit) - mu) ** 2) > 20 * np.mean((np.array(a) - mu) ** 2)


def test_lemma4_statement_fails_and_corrected_bound_holds():
    """x in {511, 512}: sigma^2 = 1/4 but ten bits vary; b_max sigma^2 / n is far too small."""
    rng = np.random.default_rng(6)
    n, trials, b = 3000, 300, 10
    x = np.where(np.arange(n) % 2 == 0, 511, 512)
    ests = np.array([bp.adaptive_bit_push(x, b=b, caching=False, rng=rng).estimate for _ in range(trials)])
    mse = np.mean((ests - x.mean()) ** 2)
    bmax, sigma2 = 10, float(np.var(x))
    assert mse > 1000 * bmax * sigma2 / n
    # corrected: A^2 / ((1 - delta) n) <= b_max sum(beta) / ((1 - delta) n), up to round-1 error
    beta = bp.bitwise_variances(bp.bit_means(x, b=b))
    corrected = bmax * beta.sum() / ((2 / 3) * n)
    assert mse <= corrected
    assert beta.sum() > 1000 * sigma2


def test_adaptive_unsampled_bit_fallback_and_validation():
    x = np.full(300, 7)  # every bit constant
    r = bp.adaptive_bit_push(x, b=8, rng=0)
    assert r.estimate == 7.0
    r = bp.adaptive_bit_push(x, b=8, caching=False, rng=0)
    assert r.estimate == 7.0
    with pytest.raises(ValueError, match="delta"):
        bp.adaptive_bit_push(x, b=8, delta=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        bp.adaptive_bit_push(x, b=8, squash=1.0)


# ---------------------------------------------------------------------------
# LDP variant and privacy audits
# ---------------------------------------------------------------------------


def test_rr_report_variance_monte_carlo():
    rng = np.random.default_rng(7)
    b, n, trials, eps = 10, 2000, 1500, 1.0
    x = bp.synthetic_integers(n, distribution="normal", b=b, mean=350, sd=50, rng=rng)
    p = bp.optimal_probabilities(bp.bit_means(x, b=b), epsilon=eps)
    ests = np.array([bp.bit_push(x, b=b, probs=p, epsilon=eps, rng=rng).estimate for _ in range(trials)])
    # fixed population: the RR noise is independent; sampling part is the finite-population one
    counts = bp.qmc_counts(p, n)
    v = bp.finite_population_variance(x, counts, b=b) + float(
        np.sum(4.0 ** np.arange(b) * bp.rr_report_variance(0.0, eps) / counts)
    )
    assert abs(ests.mean() - x.mean()) <= Z * math.sqrt(v / trials)
    assert var_within(ests, v)
    # the paper's per-report variance omits mu (1 - mu)
    assert bp.rr_report_variance(0.5, eps) > math.exp(eps) / math.expm1(eps) ** 2


def _report_logpmf(value: int, b: int, probs, q: float) -> np.ndarray:
    """log P[(j, y)] for one client holding ``value``: j ~ probs, y = bit j flipped w.p. q."""
    bits = (value >> np.arange(b)) & 1
    py1 = np.where(bits == 1, 1 - q, q)
    return np.log(np.concatenate([probs * (1 - py1), probs * py1]))


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_ldp_audit_exact(eps):
    b, probs = 4, bp.weighted_probabilities(4, 1.0)
    q = 1 / (1 + math.exp(eps))
    worst = 0.0
    for x, y in itertools.permutations(range(16), 2):
        lp, lq = _report_logpmf(x, b, probs, q), _report_logpmf(y, b, probs, q)
        assert accounting.hockey_stick_divergence(lp, lq, eps) <= 1e-12
        worst = max(worst, float(np.max(lp - lq)))
    assert math.isclose(worst, eps, rel_tol=1e-9)
    # the audit catches a weakened mechanism: flipping calibrated for 2 eps is not eps-LDP
    qw = 1 / (1 + math.exp(2 * eps))
    lp, lq = _report_logpmf(0, b, probs, qw), _report_logpmf(15, b, probs, qw)
    assert accounting.hockey_stick_divergence(lp, lq, eps) > 1e-3


def test_rr_rdp_matches_dp_accounting():
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    eps = 1.3
    orders = np.array([1.5, 2.0, 4.0, 10.0, 32.0])
    acc = rdp.RdpAccountant(list(orders), neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.RandomizedResponseDpEvent(noise_parameter=2 / (1 + math.exp(eps)), num_buckets=2))
    ours = accounting.rdp_randomized_response(orders, epsilon=eps)
    q = 1 / (1 + math.exp(eps))
    exact = accounting.renyi_divergence(
        _report_logpmf(0, 3, bp.weighted_probabilities(3, 1.0), q),
        _report_logpmf(7, 3, bp.weighted_probabilities(3, 1.0), q),
        orders,
    )
    assert np.allclose(acc._rdp, ours, rtol=1e-9)
    assert np.allclose(exact, ours, rtol=1e-9)


def test_piecewise_density_ratio_and_unbiasedness():
    eps = 1.5
    e = math.exp(eps / 2)
    c = (e + 1) / (e - 1)
    inner_density = e / (e + 1) / (c - 1)
    outer_density = 1 / (e + 1) / (c + 1)
    assert math.isclose(inner_density / outer_density, math.exp(eps), rel_tol=1e-12)
    rng = np.random.default_rng(8)
    for t_val in (0.0, 0.9):
        n = 200_000
        x = np.full(n, (t_val + 1) / 2 * 10)
        est = bp.piecewise_mean(x, upper=10, epsilon=eps, rng=rng)
        v = bp.piecewise_variance(t_val, eps) * 25 / n
        assert abs(est - x[0]) <= Z * math.sqrt(v)


def test_baseline_variances():
    rng = np.random.default_rng(9)
    n, trials, u, eps = 500, 1500, 1024.0, 1.0
    x = bp.synthetic_integers(n, distribution="normal", b=10, mean=350, sd=50, rng=rng).astype(float)
    mu = x / u
    cases = {
        "dith": (lambda: bp.dithering_mean(x, upper=u, rng=rng), u**2 / 12 / n),
        "dith-rr": (
            lambda: bp.dithering_mean(x, upper=u, epsilon=eps, rng=rng),
            u**2 * (1 / 12 + math.exp(eps) / math.expm1(eps) ** 2) / n,
        ),
        "rr": (
            lambda: bp.randomized_rounding_mean(x, upper=u, epsilon=eps, rng=rng),
            u**2 * np.mean(mu * (1 - mu) + math.exp(eps) / math.expm1(eps) ** 2) / n,
        ),
        "lap": (lambda: bp.laplace_mean(x, upper=u, epsilon=eps, rng=rng), 2 * u**2 / eps**2 / n),
        "pm": (
            lambda: bp.piecewise_mean(x, upper=u, epsilon=eps, rng=rng),
            np.mean(bp.piecewise_variance(2 * mu - 1, eps)) * u**2 / 4 / n,
        ),
    }
    for name, (f, v) in cases.items():
        ests = np.array([f() for _ in range(trials)])
        assert abs(ests.mean() - x.mean()) <= Z * math.sqrt(v / trials), name
        assert var_within(ests, v), name


# ---------------------------------------------------------------------------
# extensions
# ---------------------------------------------------------------------------


def test_signed_and_variance_and_geometric():
    rng = np.random.default_rng(10)
    n, trials = 4000, 200
    x = np.rint(rng.normal(-20, 30, n)).astype(int)
    s1 = [bp.signed_mean_shift(x, b=9, shift=200, rng=rng) for _ in range(trials)]
    s2 = [bp.signed_mean_split(x, b=8, rng=rng) for _ in range(trials)]
    for s in (s1, s2):
        assert abs(np.mean(s) - x.mean()) <= Z * np.std(s) / math.sqrt(trials)
    y = bp.synthetic_integers(n, distribution="normal", b=10, mean=350, sd=50, rng=rng)
    c1 = np.array([bp.variance_estimate(y, b=10, method="centered", rng=rng) for _ in range(trials)])
    c2 = np.array([bp.variance_estimate(y, b=10, method="raw", rng=rng) for _ in range(trials)])
    assert np.std(c2) > 5 * np.std(c1)  # Lemma 5: the centered estimator is far more accurate
    assert abs(np.mean(c1) / np.var(y) - 1) < 0.1
    g = bp.geometric_mean_estimate(y, frac_bits=10, rng=rng)
    assert abs(g / math.exp(np.mean(np.log(y))) - 1) < 0.05


def test_squash_removes_noise_bits():
    rng = np.random.default_rng(11)
    x = bp.synthetic_integers(10000, distribution="normal", b=10, mean=350, sd=50, rng=rng)
    plain = [bp.adaptive_bit_push(x, b=20, epsilon=2.0, rng=rng).estimate for _ in range(30)]
    sq = [bp.adaptive_bit_push(x, b=20, epsilon=2.0, squash=3.0, rng=rng).estimate for _ in range(30)]
    mu = x.mean()
    assert np.mean((np.array(sq) - mu) ** 2) * 10 < np.mean((np.array(plain) - mu) ** 2)


def test_squash_unit_subtrahend():
    # unit "subtrahend": the threshold is tau / (e^eps - 1) for every bit, whatever its count
    eps = 2.0
    u = 1.0 / math.expm1(eps)
    keep = bp.squash_mask([1.01 * u, 0.99 * u, 0.5], [5, 10**6, 0], epsilon=eps, threshold=1.0, unit="subtrahend")
    assert keep.tolist() == [True, False, False]  # a bit with no report is squashed in both units
    # the default unit is the standard deviation of the bit mean, which shrinks with the count
    assert bp.squash_mask([0.99 * u], [10**6], epsilon=eps, threshold=1.0).tolist() == [True]
    with pytest.raises(ValueError, match="unit"):
        bp.squash_mask([0.1], [10], epsilon=eps, threshold=1.0, unit="variance")
    with pytest.raises(ValueError, match="squash_unit"):
        bp.adaptive_bit_push(np.arange(100), b=8, epsilon=1.0, squash=1.0, squash_unit="bits")
    rng = np.random.default_rng(12)
    x = bp.synthetic_integers(10000, distribution="normal", b=10, mean=350, sd=50, rng=rng)
    res = bp.adaptive_bit_push(x, b=24, epsilon=eps, squash=1.0, squash_unit="subtrahend", gamma=0.0, rng=rng)
    assert np.all(res.means[12:] == 0.0)  # empty high bits are far below 1 / (e^eps - 1)
    assert abs(res.estimate / x.mean() - 1) < 0.1


# ---------------------------------------------------------------------------
# validation, performance
# ---------------------------------------------------------------------------


@HYP
@given(st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=5))
def test_values_out_of_range_raise(b, excess):
    with pytest.raises(ValueError, match="values"):
        bp.bit_push([0, 2**b - 1 + excess], b=b)
    with pytest.raises(ValueError, match="values"):
        bp.bit_push([-excess, 1], b=b)


@HYP
@given(st.floats(min_value=0.01, max_value=30).filter(lambda v: not float(v).is_integer()))
def test_non_integer_bit_depth_raises(b):
    with pytest.raises(ValueError, match="b must be an integer"):
        bp.bit_push([1, 2], b=b)


@HYP
@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=3, max_size=3).filter(lambda p: abs(sum(p) - 1) > 1e-6)
)
def test_probs_must_sum_to_one(p):
    with pytest.raises(ValueError, match="probs"):
        bp.bit_push([1, 2], b=3, probs=p)
    with pytest.raises(ValueError, match="probs"):
        bp.estimator_variance([0.5] * 3, p, 10)


def test_other_validation():
    with pytest.raises(ValueError, match="probs"):
        bp.estimator_variance([0.5, 0.5], [1.0, 0.0], 10)
    with pytest.raises(ValueError, match="epsilon"):
        bp.bit_push([1], b=2, epsilon=0.0)
    with pytest.raises(ValueError, match="design"):
        bp.bit_push([1], b=2, design="x")
    with pytest.raises(ValueError, match="bit_means"):
        bp.optimal_probabilities([1.2])
    with pytest.raises(ValueError, match="rng"):
        bp.bit_push([1], b=2, rng="seed")
    with pytest.raises(ValueError, match="upper"):
        bp.dithering_mean([1.0], upper=-1)
    with pytest.raises(ValueError, match="values"):
        bp.piecewise_mean([11.0], upper=10, epsilon=1)
    with pytest.raises(ValueError, match="needs exactly"):
        bp.synthetic_integers(5, distribution="normal", b=4, mean=3)


def test_million_clients_32_bits():
    x = np.random.default_rng(12).integers(0, 2**32, 1_000_000)
    r = bp.bit_push(x, b=32, rng=0)
    assert abs(r.estimate / x.mean() - 1) < 0.01


def test_finite_population_mse_includes_unreported_bits():
    x = np.array([1, 3, 2, 0, 3])
    # bit 0 has no report: estimate is 2 * m_1, exact since all clients report bit 1
    assert bp.finite_population_variance(x, [0, 5], b=2) == 0.0
    assert math.isclose(bp.finite_population_mse(x, [0, 5], b=2), bp.bit_means(x, b=2)[0] ** 2)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_one_bit_baselines_exact_privacy_loss(eps):
    """Randomized rounding + RR and dithering + RR: P[report = 1 | x] lies in [q, p], so the loss is <= eps.

    Dithering also reveals h, which is independent of x; conditionally on h the report is RR of a bit.
    The piecewise mechanism's density ratio is exactly e^eps; a version that spends eps on each half
    (inner probability e^eps/(e^eps+1)) is caught.
    """
    p, q = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    xs = np.linspace(0, 1, 101)
    one = q + (p - q) * xs  # randomized rounding: P[B=1] = x, then RR
    loss = max(np.max(np.log(one[:, None] / one[None, :])), np.max(np.log((1 - one)[:, None] / (1 - one)[None, :])))
    assert loss <= eps + 1e-12 and math.isclose(loss, eps, rel_tol=1e-9)
    for h in (0.0, 0.3, 0.99):
        one_d = np.where(xs >= h, p, q)
        assert np.max(np.log(one_d[:, None] / one_d[None, :])) <= eps + 1e-12
    e = math.exp(eps / 2)
    c = (e + 1) / (e - 1)
    ratio = (e / (e + 1) / (c - 1)) / (1 / (e + 1) / (c + 1))
    assert math.isclose(math.log(ratio), eps, rel_tol=1e-12)
    ew = math.exp(eps)  # weakened: central probability computed with the full eps
    ratio_w = (ew / (ew + 1) / (c - 1)) / (1 / (ew + 1) / (c + 1))
    assert math.log(ratio_w) > eps * 1.2


# ---------------------------------------------------------------------------
# server-assigned (QMC) versus client-random bit selection
# ---------------------------------------------------------------------------


def _enumerate_client_design(x, p, b):
    """Exact mean and variance of client-random bit pushing by enumerating all b^n choices."""
    ests, weights = [], []
    for lab in itertools.product(range(b), repeat=len(x)):
        lab = np.array(lab)
        est = sum(2**j * ((x >> j) & 1)[lab == j].mean() for j in range(b) if np.any(lab == j))
        ests.append(est)
        weights.append(np.prod(p[lab]))
    ests, weights = np.array(ests), np.array(weights)
    mean = float(weights @ ests)
    return mean, float(weights @ (ests - mean) ** 2)


@pytest.mark.parametrize(
    "x, p",
    [(np.array([0, 1, 3, 2, 3]), np.array([0.3, 0.7])), (np.array([5, 0, 7, 2, 6, 3]), np.array([0.2, 0.3, 0.5]))],
)
def test_client_random_exact_moments_by_enumeration(x, p):
    b = p.size
    mean, var = _enumerate_client_design(x, p, b)
    assert math.isclose(mean - x.mean(), bp.client_random_bias(x, p, b=b), rel_tol=1e-10, abs_tol=1e-12)
    assert math.isclose(var, bp.client_random_variance(x, p, b=b), rel_tol=1e-10)


def test_client_random_second_order_excess_symbolic():
    """Delta method: E[1/c] = 1/(np) + (1-p)/(n p)^2 + O(n^-3) for c ~ Bin(n, p)."""
    n, p, h = sp.symbols("n p h", positive=True)
    mean = n * p
    series = sp.series(1 / (mean + h), h, 0, 3).removeO()
    # E[h] = 0, E[h^2] = n p (1 - p)
    expect = series.coeff(h, 0) + series.coeff(h, 2) * n * p * (1 - p)
    assert sp.simplify(expect - (1 / (n * p) + (1 - p) / (n * p) ** 2)) == 0
    # and the exact variance gap approaches sum_j beta_j (1 - p_j) / (n p_j)^2
    rng = np.random.default_rng(11)
    x = bp.synthetic_integers(10_000, distribution="normal", b=10, mean=350, sd=50, rng=rng)
    q = bp.weighted_probabilities(10, 0.5)
    gap = bp.client_random_variance(x, q, b=10) - bp.finite_population_variance(x, bp.qmc_counts(q, x.size), b=10)
    beta = bp.bitwise_variances(bp.bit_means(x, b=10))
    approx = float(np.sum(beta * (1 - q) / (x.size * q) ** 2))
    assert gap > 0 and abs(gap / approx - 1) < 0.3  # QMC rounding of the counts moves the gap a little


def test_server_and_client_designs_monte_carlo():
    """Both designs: mean within 4 s.e. of x-bar (+ exact bias), variance within 4 s.e. of its exact value.

    The s.e. of a sample variance is estimated from the data, sd((e - mean)^2)/sqrt(T), so that
    no normality is assumed. The exact QMC variance must be below the client-random one, the
    simulated gap must be positive, and it must agree with the exact gap within 4 s.e. of the
    difference of two independent sample variances.
    """
    rng = np.random.default_rng(12)
    n, b, trials = 100, 10, 8000
    x = bp.synthetic_integers(n, distribution="normal", b=b, mean=350, sd=50, rng=rng)
    p = bp.weighted_probabilities(b, 0.5)
    exact = {
        "server": (0.0, bp.finite_population_variance(x, bp.qmc_counts(p, n), b=b)),
        "client": (bp.client_random_bias(x, p, b=b), bp.client_random_variance(x, p, b=b)),
    }
    se_var = {}
    sample_var = {}
    for design, (bias, v) in exact.items():
        est = np.array([bp.bit_push(x, b=b, probs=p, design=design, rng=rng).estimate for _ in range(trials)])
        assert abs(est.mean() - (x.mean() + bias)) <= Z * math.sqrt(v / trials)
        sample_var[design] = np.var(est, ddof=1)
        se_var[design] = np.std((est - est.mean()) ** 2, ddof=1) / math.sqrt(trials)
        assert abs(sample_var[design] - v) <= Z * se_var[design]
    gap = exact["client"][1] - exact["server"][1]
    assert gap > 0  # exact: QMC has the smaller variance
    diff = sample_var["client"] - sample_var["server"]
    assert diff > 0 and abs(diff - gap) <= Z * math.hypot(se_var["server"], se_var["client"])


def test_client_random_validation():
    with pytest.raises(ValueError, match="n >= 2"):
        bp.client_random_variance([3], [0.5, 0.5], b=2)
    with pytest.raises(ValueError, match="sum to 1"):
        bp.client_random_bias([1, 2], [0.5, 0.6], b=2)
    with pytest.raises(ValueError, match="values"):
        bp.client_random_variance([1, 9], [0.5, 0.5], b=2)


def test_adaptive_pooled_estimator_is_biased():
    """Algorithm 2 uses round-1 bit means both to choose round-2 counts and (with caching) in the
    final means; on Normal(350, 50) with n = 300 the mean of 1500 runs is > 4 s.e. from x-bar."""
    rng = np.random.default_rng(13)
    x = bp.synthetic_integers(300, distribution="normal", b=10, mean=350, sd=50, rng=rng)
    est = np.array([bp.adaptive_bit_push(x, b=10, rng=rng).estimate for _ in range(1500)])
    z = (est.mean() - x.mean()) / (est.std(ddof=1) / math.sqrt(est.size))
    assert z > Z
