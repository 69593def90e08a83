"""Tests of fedfreq.sample_threshold (Bharadwaj & Cormode 2022).

Privacy audits: delta_exact is checked against a brute-force hockey-stick divergence
computed with fedfreq.accounting on each count k separately; Theorem 1 and Lemma 3.2
must upper-bound it; a deliberately weakened mechanism (no threshold) must be caught.
Statistical tests use fixed seeds and 4-standard-error tolerances from the CLT.
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_
from scipy import stats

from fedfreq import sample_threshold as st
from fedfreq.accounting import hockey_stick_divergence

Z = 4.0
HYP = settings(max_examples=30, deadline=None, database=None)


def thresholded_law(k: int, p: float, tau: int, size: int) -> np.ndarray:
    """log-law of the published count on {0, 1, ..., size-1} (0 = suppressed)."""
    pmf = stats.binom.pmf(np.arange(size), k, p) if k >= 0 else np.zeros(size)
    out = np.zeros(size)
    out[0] = pmf[:tau].sum()
    out[tau:] = pmf[tau:]
    out = np.minimum(out, 1.0)
    with np.errstate(divide="ignore"):
        return np.log(out)


def brute_delta(p, eps, tau, k_max):
    best = 0.0
    for k in range(1, k_max + 1):
        P = thresholded_law(k, p, tau, k_max + 2)
        Q = thresholded_law(k - 1, p, tau, k_max + 2)
        best = max(best, hockey_stick_divergence(P, Q, eps), hockey_stick_divergence(Q, P, eps))
    return best


# ---------------------------------------------------------------------------
# privacy audits
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("p,eps,tau", [(0.1, 1.0, 3), (0.3, 0.5, 2), (0.05, 0.2, 1), (0.2, 1.0, 5), (0.6, 0.3, 2)])
def test_delta_exact_matches_brute_force(p, eps, tau):
    got = st.delta_exact(p, eps, tau)
    want = brute_delta(p, eps, tau, 400)
    assert got == pytest.approx(want, rel=1e-8)


def test_delta_exact_tau_one_closed_form():
    # tau = 1, k = 1: outputs {0: 1-p, 1: p} vs {0: 1}; the add direction gives p, the worst k.
    for p, eps in [(0.05, 1.0), (0.2, 0.5)]:
        if p <= 1 - math.exp(-eps):
            assert st.delta_exact(p, eps, 1) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("alpha", [0.05, 1 / 6, 0.4, 1.0])
@pytest.mark.parametrize("tau", [1, 4, 15])
def test_theorem_and_lemma_upper_bound_exact(eps, alpha, tau):
    p = st.sampling_rate_for(eps, alpha)
    exact = st.delta_exact(p, eps, tau)
    assert exact <= st.delta_theorem(p, eps, tau) * (1 + 1e-9)
    assert exact <= st.delta_simple(alpha, tau) * (1 + 1e-9)
    assert st.delta_theorem(p, eps, tau) <= st.delta_simple(alpha, tau) * (1 + 1e-9)


def test_paper_numeric_example():
    p = st.sampling_rate_for(1.0, 1 / 6)
    assert round(p, 3) == 0.105
    assert round(st.c_alpha(1 / 6), 3) == 0.935
    assert st.delta_simple(1 / 6, 20) < 1e-8
    assert st.choose_parameters(1.0, 1e-8)["tau"] == 20


def test_audit_catches_weakened_mechanism():
    """Without the threshold (tau = 0) a cell's count is Bin(k, p) vs Bin(k-1, p): at
    k = 1 the output 1 has probability p vs 0, so delta >= p; with a large claimed
    threshold the audit's value for the honest mechanism is tiny. The brute-force
    audit run on the weakened mechanism exceeds the honest claim."""
    p, eps, tau = 0.1, 1.0, 10
    claim = st.delta_exact(p, eps, tau)
    weakened = brute_delta(p, eps, 1, 50)  # tau = 1 publishes every sampled count
    assert weakened >= p - 1e-12
    assert weakened > 1e6 * claim


def test_delta_exact_replace_at_least_add_remove_and_within_composition():
    p, eps, tau = 0.3, 1.0, 2
    rep = st.delta_exact_replace(p, eps, tau, 16)
    assert rep >= st.delta_exact(p, eps, tau) * (1 - 1e-12)
    # basic composition of an add in one cell and a remove in the other, at 2 eps
    rep2 = st.delta_exact_replace(p, 2 * eps, tau, 16)
    assert rep2 <= (1 + math.exp(eps)) * st.delta_exact(p, eps, tau) * (1 + 1e-9)


def test_profile_and_argmax():
    prof = st.delta_exact_profile(0.1, 1.0, 5, np.arange(1, 200))
    d = np.maximum(prof["add"], prof["remove"])
    assert np.all(prof["remove"] == 0.0)  # p <= 1 - e^-eps: the remove direction is pure
    assert d.max() == pytest.approx(st.delta_exact(0.1, 1.0, 5), rel=1e-9)
    assert prof["argmax"] == 1 + int(np.argmax(d))


# --- the former implementation, kept as a slow reference ---------------------------------
# It enumerated k = tau, tau+1, ..., K with the vectorised rows of st._log_delta_rows and
# doubled K until Chernoff bounds certified that no k > K reaches 1e-9 of the maximum.
# Outside Theorem 1's regime (p_s > 1 - e^-eps) K reaches thousands and a call takes
# seconds; use it on small cases only.


def _old_log_tail_certificate(p, eps, tau, k):
    q = 1.0 - math.exp(-eps) * (1.0 - p)
    b1 = -k * float(st.kl_bernoulli(q, p))
    r = math.exp(eps) * (1.0 - p)
    if r >= 1.0:
        return b1
    a = max(tau - 1.0, k * (1.0 - r)) / (k - 1.0)
    if a >= p:
        return 0.0
    b2 = -(k - 1.0) * float(st.kl_bernoulli(a, p))
    return float(np.logaddexp(b1, b2))


def old_delta_exact_log(p, eps, tau):
    q = 1.0 - math.exp(-eps) * (1.0 - p)
    kmax = max(2 * tau + 8, int(math.ceil(2.0 * tau / q)) + 8)
    best, arg, start = -np.inf, tau, tau
    while True:
        for lo in range(start, kmax + 1, 512):
            k = np.arange(lo, min(lo + 512, kmax + 1))
            d1, d2 = st._log_delta_rows(p, eps, tau, k)
            d = np.maximum(d1, d2)
            i = int(np.argmax(d))
            if d[i] > best:
                best, arg = float(d[i]), int(k[i])
        if _old_log_tail_certificate(p, eps, tau, kmax + 1) <= best + math.log(1e-9):
            return best, arg
        start, kmax = kmax + 1, 2 * kmax


# the grid: Theorem 1's regime with tau up to 100, and the other regime (p_s > 1 - e^-eps)
# where the old code is still fast enough for a unit test (< ~0.5 s per case; at p_s = 0.95,
# eps = 0.5 it needs 20-40 s).
OLD_GRID = (
    [(p, e, t) for p in (0.01, 0.1, 0.3) for e in (0.3, 1.0, 3.0) for t in (1, 5, 20, 100)]
    + [(p, e, t) for p in (0.5, 0.8) for e in (1.0, 2.0) for t in (1, 3, 10)]
    + [(0.5, 0.5, 3), (0.95, 2.0, 10), (0.7, 0.5, 3), (0.5, 0.3, 5)]
)


def test_delta_exact_agrees_with_former_enumeration():
    worst = 0.0
    for p, e, t in OLD_GRID:
        old, old_arg = old_delta_exact_log(p, e, t)
        new, new_arg = st._delta_exact_log(p, e, t)
        worst = max(worst, abs(math.expm1(new - old)))
        assert new_arg == old_arg, (p, e, t)
    assert worst < 1e-9  # the old code was exact to 1e-9 relative; observed ~1e-13


@pytest.mark.parametrize(
    "p,eps,tau",
    [
        (0.1, 1.0, 20),
        (0.5, 0.1, 20),
        (0.5, 0.1, 60),
        (0.3, 0.2, 8),
        (0.9, 0.5, 30),
        (0.05, 0.02, 10),
        (0.6, 1.0, 12),
        (0.005, 0.015, 3),
    ],
)
def test_delta_k_is_unimodal_with_the_predicted_peaks(p, eps, tau):
    """The argument that replaces the enumeration: delta_+(k) rises up to
    k_+ = max(tau, ceil((tau-1)/q)) and then falls; delta_-(k) is 0 if a <= 0, else rises
    up to k_- = max(tau, ceil((tau-1)/a)) and then falls. Checked on k = tau .. 4 max(k_+-)
    with the row-wise profile (an independent code path), and the maximum of the profile
    equals delta_exact. The last case (worst k = 101, m = 3) goes through the certified
    truncation of the upper tail."""
    q = 1 - math.exp(-eps) * (1 - p)
    a = 1 - math.exp(eps) * (1 - p)
    kp = max(tau, math.ceil((tau - 1) / q))
    km = max(tau, math.ceil((tau - 1) / a)) if a > 0 else tau
    ks = np.arange(tau, 4 * max(kp, km) + 40)
    prof = st.delta_exact_profile(p, eps, tau, ks)
    for d, peak in ((prof["add"], kp), (prof["remove"], km)):
        i = int(peak - tau)
        slack = 1e-12 * d.max()
        assert np.all(np.diff(d[: i + 1]) >= -slack)
        assert np.all(np.diff(d[i:]) <= slack)
    if a <= 0:
        assert np.all(prof["remove"] == 0.0)
    else:
        assert prof["remove"].max() > 0.0
    assert np.maximum(prof["add"], prof["remove"]).max() == pytest.approx(st.delta_exact(p, eps, tau), rel=1e-10)


@settings(max_examples=25, deadline=None, database=None)
@given(
    p=st_.floats(0.01, 0.99),
    eps=st_.floats(0.02, 4.0),
    tau=st_.integers(1, 12),
)
def test_delta_exact_is_the_profile_maximum_property(p, eps, tau):
    q = 1 - math.exp(-eps) * (1 - p)
    a = 1 - math.exp(eps) * (1 - p)
    top = max(tau / q, tau / a if a > 0 else 0.0)
    if top > 400:  # keep the row-wise profile small (its cost grows like k^2)
        return
    ks = np.arange(tau, int(3 * top) + 30)
    prof = st.delta_exact_profile(p, eps, tau, ks)
    d = np.maximum(prof["add"], prof["remove"])
    assert d.max() == pytest.approx(st.delta_exact(p, eps, tau), rel=1e-9)
    # and beyond the grid the monotone upper bound certifies nothing larger exists
    assert d[-1] <= d.max()


def test_delta_exact_extreme_parameters():
    # worst counts k up to ~1e11: no enumeration, finite and within (0, 1]
    for p, e, t in [
        (1e-9, 1e-9, 100),
        (1e-6, 1e-3, 100),
        (1 - 1e-9, 1e-6, 100),
        (0.5, math.log(2) - 1e-9, 50),
        (0.3, 50.0, 100),
    ]:
        d = st.delta_exact(p, e, t)
        assert 0.0 <= d <= 1.0
        assert math.isfinite(st._delta_exact_log(p, e, t)[0]) or d == 0.0
    # huge eps (e^-eps below the rounding error of q, or underflowing): only "all tau copies
    # sampled" is distinguishable, so delta = p^tau; the lower bound delta >= p^tau holds always
    for p, e, t in [(0.5, 40.0, 3), (0.3, 800.0, 7), (0.9, 1e6, 100)]:
        assert st.delta_exact(p, e, t) == pytest.approx(p**t, rel=1e-12)
    for p, e, t in [(0.2, 0.01, 5), (0.7, 2.0, 30), (1e-3, 25.0, 10)]:
        assert st._delta_exact_log(p, e, t)[0] >= t * math.log(p) * (1 + 1e-12)
    # tau = 1 closed form in both regimes: delta = max(p, 1 - e^eps (1 - p)) = p
    for p, e in [(0.9, 0.01), (1e-8, 1e-9), (0.5, 5.0)]:
        assert st.delta_exact(p, e, 1) == pytest.approx(p, rel=1e-12)
    # the truncated upper tail at a huge count against a 40-digit sum (mpmath); scipy's
    # gammaln-based logpmf is itself off by ~3e-7 in log at k = 1e9
    import mpmath

    k, t = 10**9, 30
    with mpmath.workdps(40):
        p, e = mpmath.mpf("2e-8"), mpmath.mpf("1e-8")
        q = 1 - mpmath.exp(-e) * (1 - p)
        m = max(t, int(mpmath.floor(k * q)) + 1)
        total = (
            sum(mpmath.binomial(k, v) * p**v * (1 - p) ** (k - v) * (v / mpmath.mpf(k) - q) for v in range(m, 400))
            * mpmath.exp(e)
            / (1 - p)
        )
        ref = float(mpmath.log(total))
    assert st._log_add_at(2e-8, 1e-8, t, k) == pytest.approx(ref, rel=1e-12)


# ---------------------------------------------------------------------------
# mechanism
# ---------------------------------------------------------------------------


def test_mechanism_law_matches_counts_version():
    rng = np.random.default_rng(5)
    items = rng.integers(0, 4, size=2000)
    h = np.bincount(items, minlength=4)
    T = 400
    a = np.array(
        [
            st.sample_and_threshold(items, n_buckets=4, sampling_rate=0.3, tau=1, rng=np.random.default_rng([1, t]))
            for t in range(T)
        ]
    )
    mean = a.mean(axis=0)
    sd = np.sqrt(h * 0.3 * 0.7 / T)
    assert np.all(np.abs(mean - 0.3 * h) <= Z * sd)


def test_threshold_semantics():
    out = st.sample_and_threshold_counts([100, 5], sampling_rate=0.999999, tau=5, rng=0)
    assert out[1] in (0, 5)
    rng = np.random.default_rng(0)
    items = rng.integers(0, 2**14, size=1_000_000)
    h = st.sample_and_threshold(items, n_buckets=2**14, sampling_rate=0.1, tau=20, rng=1)
    assert np.all((h == 0) | (h >= 20))


def test_fixed_size_leak():
    n, m, T = 50, 10, 4000
    items = np.zeros(n, dtype=int)
    items[0] = 1  # D: one unique item
    hits = sum(
        st.fixed_size_sample_and_threshold(items, n_buckets=2, m=m, tau=2, rng=np.random.default_rng([2, t])).sum()
        == m - 1
        for t in range(T)
    )
    frac = hits / T
    se = math.sqrt(0.2 * 0.8 / T)
    assert abs(frac - m / n) <= Z * se
    # on D' (all identical) the total is always m
    same = np.zeros(n, dtype=int)
    assert all(
        st.fixed_size_sample_and_threshold(same, n_buckets=2, m=m, tau=2, rng=np.random.default_rng([3, t])).sum() == m
        for t in range(50)
    )


def test_two_stage_schemes():
    n, m, c, T = 2000, 100, 3.0, 3000
    s = st.contact_size(m, c)
    sizes_paper = np.array([st.two_stage_sample(n, m, c, rng=np.random.default_rng([4, t])).size for t in range(T)])
    # sample size Bin(s, m/s): variance m (1 - m/s), far below Poisson's m (1 - m/n)
    v_paper = m * (1 - m / s)
    assert abs(sizes_paper.mean() - m) <= Z * math.sqrt(v_paper / T)
    assert sizes_paper.var() < 0.5 * m * (1 - m / n)
    sizes_pois = np.array(
        [st.two_stage_sample(n, m, 10.0, scheme="poisson", rng=np.random.default_rng([5, t])).size for t in range(T)]
    )
    v_pois = m * (1 - m / n)
    assert abs(sizes_pois.var() - v_pois) <= Z * v_pois * math.sqrt(2 / (T - 1))
    assert st.poisson_overflow_bound(10.0) == pytest.approx(math.exp(-100 / 3))


# ---------------------------------------------------------------------------
# accuracy lemmas
# ---------------------------------------------------------------------------


def test_omission_and_relative_error():
    assert st.omission_bound(1000, n=1e6, m=1e5, tau=20) == pytest.approx(math.exp(-32))
    assert st.omission_probability(1000, sampling_rate=0.1, tau=20) < math.exp(-32)
    for W in [300, 500, 1000]:
        assert st.omission_probability(W, sampling_rate=0.1, tau=20) <= st.omission_bound(W, n=1.0, m=0.1, tau=20)
    g = 10**-0.5
    assert st.relative_error_probability(3000, sampling_rate=0.1, gamma=g) <= st.relative_error_bound(300, g)


# ---------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------


def test_hadamard_response_unbiased_and_variance():
    B, eps, N, T = 6, 1.0, 3000, 200
    rng = np.random.default_rng(11)
    items = rng.integers(0, B, size=N)
    truth = np.bincount(items, minlength=B)
    ests = np.array(
        [
            st.hadamard_response_estimate(
                st.hadamard_response(items, n_buckets=B, epsilon=eps, rng=np.random.default_rng([12, t])),
                n_buckets=B,
                epsilon=eps,
            )
            for t in range(T)
        ]
    )
    e = math.exp(eps)
    # S_x is a sum of independent Bernoulli with success e/(1+e) (c_x users) and 1/2 (others)
    a = 2 * (1 + e) / (e - 1)
    var = a**2 * (truth * (e / (1 + e)) * (1 / (1 + e)) + (N - truth) * 0.25)
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= Z * np.sqrt(var / T))
    assert np.all(np.abs(ests.var(axis=0, ddof=1) - var) <= Z * var * math.sqrt(2 / (T - 1)))


def _load_pure_ldp_hr():
    core_spec = importlib.util.find_spec("pure_ldp.core")
    if core_spec is None:  # pragma: no cover
        pytest.skip("pure_ldp is not installed")
    base = Path(core_spec.origin).parents[1] / "frequency_oracles" / "hadamard_response" / "internal"
    name = "pure_ldp.frequency_oracles.hadamard_response.internal.k2k_hadamard"
    try:
        import pure_ldp.frequency_oracles.hadamard_response.internal.k2k_hadamard as mod  # noqa: F401

        return mod
    except ImportError:
        pass
    for sub in ["functions", "k2k_hadamard"]:
        spec = importlib.util.spec_from_file_location(
            f"pure_ldp.frequency_oracles.hadamard_response.internal.{sub}", base / f"{sub}.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_pure_ldp_hadamard_cross_check():
    """pure_ldp's high-privacy HR must match ours: same output alphabet, same C_x
    membership law, and its estimator equals ours on identical reports."""
    try:
        k2k = _load_pure_ldp_hr()
    except ImportError as exc:  # pragma: no cover
        pytest.skip(f"pure_ldp not importable: {exc}")
    B, eps = 11, 0.8
    hr = k2k.Hadamard_Rand_high_priv(B, eps)
    assert hr.outsz == 16
    rng = np.random.default_rng(3)
    items = rng.integers(0, B, size=4000)
    ours = st.hadamard_response(items, n_buckets=B, epsilon=eps, rng=4)
    theirs = hr.decode_string(list(ours), iffast=1, normalization=-1) * len(ours)
    mine = st.hadamard_response_estimate(ours, n_buckets=B, epsilon=eps)
    assert np.allclose(theirs, mine, atol=1e-6)
    # their client: fraction of reports in C_x for a fixed x is e^eps/(1+e^eps)
    state = random.getstate()
    random.seed(2718)
    try:
        T = 6000
        x = 5
        with warnings.catch_warnings():
            # pure_ldp passes a float to random.randint (deprecated in CPython 3.10+);
            # the warning comes from the third-party client, not from fedfreq.
            warnings.simplefilter("ignore", DeprecationWarning)
            outs = np.array([hr.encode_symbol(x) for _ in range(T)])
    finally:
        random.setstate(state)
    in_c = (np.bitwise_count((x + 1) & outs) % 2) == 0
    pe = math.exp(eps) / (1 + math.exp(eps))
    assert abs(in_c.mean() - pe) <= Z * math.sqrt(pe * (1 - pe) / T)
    ours_x = st.hadamard_response(np.full(T, x), n_buckets=B, epsilon=eps, rng=5)
    in_c2 = (np.bitwise_count((x + 1) & ours_x) % 2) == 0
    assert abs(in_c2.mean() - pe) <= Z * math.sqrt(pe * (1 - pe) / T)


def test_hadamard_response_is_eps_ldp_exactly():
    B, eps = 5, 0.7
    K = 8
    e = math.exp(eps)
    # exact report law per input: e/(1+e) spread over C_x, 1/(1+e) over the complement
    laws = []
    for x in range(B):
        y = np.arange(K)
        in_c = (np.bitwise_count((x + 1) & y) % 2) == 0
        laws.append(np.where(in_c, e / (1 + e) / (K / 2), 1 / (1 + e) / (K / 2)))
    for a in range(B):
        for b in range(B):
            assert hockey_stick_divergence(np.log(laws[a]), np.log(laws[b]), eps) == pytest.approx(0.0, abs=1e-15)
    # the empirical law of our sampler matches it (chi-square style, 4 SE per cell)
    T = 8000
    out = st.hadamard_response(np.full(T, 2), n_buckets=B, epsilon=eps, rng=6)
    freq = np.bincount(out, minlength=K) / T
    assert np.all(np.abs(freq - laws[2]) <= Z * np.sqrt(laws[2] * (1 - laws[2]) / T))


def test_bernoulli_and_laplace_baselines_unbiased():
    h = np.array([50, 0, 500])
    T = 300
    b = np.array(
        [
            st.bernoulli_shuffle_histogram(h, m=20000, epsilon=1.0, delta=1e-8, rng=np.random.default_rng([7, t]))
            for t in range(T)
        ]
    )
    from fedfreq.trust_models import binomial_noise_probability

    r = binomial_noise_probability(20000, epsilon=1.0, delta=1e-8)
    sd = math.sqrt(20000 * r * (1 - r) / T)
    assert np.all(np.abs(b.mean(axis=0) - h) <= Z * sd)
    lap = np.array([st.laplace_histogram(h, epsilon=0.5, rng=np.random.default_rng([8, t])) for t in range(T)])
    assert np.all(np.abs(lap.mean(axis=0) - h) <= Z * math.sqrt(2 / 0.25 / T))


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


@HYP
@given(p=st_.one_of(st_.floats(max_value=0.0), st_.floats(min_value=1.0), st_.just(float("nan"))))
def test_bad_sampling_rate(p):
    with pytest.raises(ValueError, match="sampling_rate"):
        st.delta_exact(p, 1.0, 5)


@HYP
@given(e=st_.one_of(st_.floats(max_value=0.0), st_.just(float("inf"))))
def test_bad_epsilon(e):
    with pytest.raises(ValueError, match="epsilon"):
        st.delta_exact(0.1, e, 5)


@HYP
@given(t=st_.one_of(st_.integers(max_value=0), st_.floats(0.1, 0.9)))
def test_bad_tau(t):
    with pytest.raises(ValueError, match="tau"):
        st.delta_simple(0.2, t)


@HYP
@given(a=st_.one_of(st_.floats(max_value=0.0), st_.floats(min_value=1.0001)))
def test_bad_alpha(a):
    with pytest.raises(ValueError, match="alpha"):
        st.c_alpha(a)


def test_other_validation():
    with pytest.raises(ValueError, match="1 - exp"):
        st.delta_theorem(0.9, 0.1, 5)
    with pytest.raises(ValueError, match="items"):
        st.sample_and_threshold([0, 3], n_buckets=3, sampling_rate=0.5, tau=1)
    with pytest.raises(ValueError, match="sampling_rate"):
        st.epsilon_for(0.3, 0.2)
    with pytest.raises(ValueError, match="method"):
        st.choose_parameters(1.0, 1e-6, method="guess")
    with pytest.raises(ValueError, match="delta"):
        st.choose_parameters(1.0, 0.0)
    with pytest.raises(ValueError, match="W"):
        st.omission_bound(10, n=1e6, m=1e5, tau=20)
    with pytest.raises(ValueError, match="rng"):
        st.sample_and_threshold_counts([3], sampling_rate=0.5, tau=1, rng="seed")
