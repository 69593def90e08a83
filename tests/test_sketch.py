"""Tests of fedfreq.sketch (Wu et al. 2023: count sketches for federated frequency estimation)."""

from __future__ import annotations

import itertools
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import gaussian_mechanism as dpa_gaussian
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fedfreq import accounting
from fedfreq import sketch as sk


# ----------------------------------------------------------------------------- hashing
def test_polynomial_hash_matches_python_reference():
    rng = np.random.default_rng(1)
    coeffs = rng.integers(0, sk.MERSENNE_PRIME, size=(3, 4))
    x = rng.integers(0, sk.MERSENNE_PRIME, size=500)
    ref = [
        [
            sum(int(c) * pow(int(xi), 3 - r, sk.MERSENNE_PRIME) for r, c in enumerate(row)) % sk.MERSENNE_PRIME
            for xi in x
        ]
        for row in coeffs
    ]
    assert np.array_equal(sk.polynomial_hash(coeffs, x), np.array(ref))


def test_buckets_are_uniform_chi_square():
    # 200 000 items in W = 50 buckets: chi-square with 49 dof; reject only below p = 1e-6.
    h = sk.draw_sketch_hashes(width=50, rows=3, rng=2)
    b = h.buckets(np.arange(200_000))
    for row in b:
        counts = np.bincount(row, minlength=50)
        assert stats.chisquare(counts).pvalue > 1e-6
    s = h.signs(np.arange(200_000))
    assert set(np.unique(s)) == {-1, 1}
    # mean sign: sd 1/sqrt(2e5) = 0.0022; 5 sd = 0.011
    assert np.all(np.abs(s.mean(axis=1)) < 0.011)


def test_pairwise_collision_probability():
    # P(h(i) = h(j)) = 1/W (up to W/p) for a pairwise-independent family; 4000 draws,
    # SE = sqrt(q(1-q)/4000) with q = 0.1, tolerance 4 SE.
    W, draws = 10, 4000
    hits = 0
    rng = np.random.default_rng(3)
    for _ in range(draws):
        h = sk.draw_sketch_hashes(width=W, rows=1, rng=rng)
        b = h.buckets(np.array([5, 17]))[0]
        hits += int(b[0] == b[1])
    q = 1 / W
    assert abs(hits / draws - q) < 4 * math.sqrt(q * (1 - q) / draws)


def test_design_hash_sharing():
    items = np.arange(100)
    hs = sk.draw_sketch_hashes(width=16, rows=2, rounds=3, design="shared", rng=0)
    hh = sk.draw_sketch_hashes(width=16, rows=2, rounds=3, design="hybrid", rng=0)
    hf = sk.draw_sketch_hashes(width=16, rows=2, rounds=3, design="fresh", rng=0)
    assert np.array_equal(hs.buckets(items, 0), hs.buckets(items, 2)) and np.array_equal(
        hs.signs(items, 0), hs.signs(items, 2)
    )
    assert np.array_equal(hh.buckets(items, 0), hh.buckets(items, 2)) and not np.array_equal(
        hh.signs(items, 0), hh.signs(items, 2)
    )
    assert not np.array_equal(hf.buckets(items, 0), hf.buckets(items, 2))
    assert not np.array_equal(hf.signs(items, 0), hf.signs(items, 2))


def test_limb_evaluation_equals_horner_and_python():
    # the float64 limb product (used for tables) returns Horner's int64 values exactly, for
    # every degree it serves, at random points, at the domain 0..n-1 and at the edges of Z_p
    from fedfreq.sketch.hashing import _LIMB_MAX_K, _poly_mod_p_horner, _poly_mod_p_limbs, _poly_signs

    P = sk.MERSENNE_PRIME
    rng = np.random.default_rng(41)
    for k in range(1, _LIMB_MAX_K + 1):
        c = rng.integers(0, P, size=(2, 3, k))
        c[0, 0] = P - 1  # largest coefficients
        for x in (np.arange(700), np.concatenate([[0, 1, P - 2, P - 1], rng.integers(0, P, 600)])):
            assert np.array_equal(_poly_mod_p_limbs(c, x), _poly_mod_p_horner(c, x)), k
            parity = (1 - 2 * (_poly_mod_p_horner(c, x) & 1)).astype(np.int8)
            assert np.array_equal(_poly_mod_p_limbs(c, x, parity=True), parity), k
            assert np.array_equal(_poly_signs(c, x), parity), k
    # values that are multiples of p (where the float quotient may be one too small): g(x) = x + (p - x)
    x = np.arange(1000, 1300)
    c = np.stack([np.ones_like(x), P - x], axis=1)
    assert np.all(np.diagonal(_poly_mod_p_limbs(c, x)) == 0)
    # and the public hash agrees with exact Python integers on a large domain
    c = rng.integers(0, P, size=(1, 4))
    xs = np.arange(5000)
    ref = [sum(int(a) * pow(int(v), 3 - r, P) for r, a in enumerate(c[0])) % P for v in xs[::97]]
    assert np.array_equal(sk.polynomial_hash(c, xs)[0, ::97], ref)


@pytest.mark.parametrize("design", sk.DESIGNS)
def test_hash_tables_equal_the_hashes_and_the_old_path(design):
    # precomputed tables give exactly what the hashes give item by item, and the same estimates
    # and decodings as drawing the hashes inside sketch_estimate with the same seed
    M, L, W, d = 4, 3, 16, 250
    F = np.random.default_rng(42).dirichlet(np.ones(d), size=M)
    h = sk.draw_sketch_hashes(width=W, rows=L, rounds=M, design=design, rng=43)
    t = h.tabulate(d)
    items = np.arange(d)
    assert t.d == d and t.buckets.dtype == np.int64 and t.signs.dtype == np.int8
    for m in range(M):
        assert np.array_equal(t.buckets[m if design == "fresh" else 0], h.buckets(items, m))
        assert np.array_equal(t.signs[0 if design == "shared" else m], h.signs(items, m))
    old = sk.sketch_estimate(F, width=W, rows=L, design=design, rng=43)
    assert np.array_equal(sk.sketch_estimate(F, width=W, rows=L, design=design, hashes=h), old)
    assert np.array_equal(sk.sketch_estimate(F, width=W, rows=L, design=design, hashes=t), old)
    S = np.stack([sk.sketch_vector(F[m], h, round_index=m) for m in range(M)])
    assert np.array_equal(sk.decode_sketches(S, t, d=d), sk.decode_sketches(S, h, d=d))


def test_hash_tables_other_widths_and_designs():
    d, L, M = 120, 2, 3
    t = sk.draw_sketch_hashes(width=8, rows=L, rounds=M, design="fresh", rng=44).tabulate(d)
    # another width: the same polynomials, as if drawn with that width (width does not enter the draw)
    for W in (1, 5, 64):
        same = sk.draw_sketch_hashes(width=W, rows=L, rounds=M, design="fresh", rng=44).tabulate(d)
        assert np.array_equal(t.with_width(W).buckets, same.buckets)
        assert np.array_equal(t.with_width(W).signs, same.signs)
    # the hybrid and shared hashes read from fresh ones: round 0's buckets, every or round 0's signs
    h = sk.draw_sketch_hashes(width=8, rows=L, rounds=M, design="fresh", rng=44)
    for design, signs in (("hybrid", h.sign_coeffs), ("shared", h.sign_coeffs[:1])):
        view = t.as_design(design)
        direct = sk.SketchHashes(8, L, M, design, h.bucket_coeffs[:1], signs).tabulate(d)
        assert view.design == design
        assert np.array_equal(view.buckets, direct.buckets) and np.array_equal(view.signs, direct.signs)
    assert t.as_design("hybrid").as_design("shared").signs.shape == (1, L, d)
    with pytest.raises(ValueError, match="design"):
        t.as_design("shared").as_design("hybrid")
    with pytest.raises(ValueError, match="width"):
        t.with_width(0)
    with pytest.raises(ValueError, match="bucket_values"):
        sk.HashTables(8, L, M, "fresh", t.bucket_values[:1], t.signs)
    with pytest.raises(ValueError, match="signs"):
        sk.HashTables(8, L, M, "fresh", t.bucket_values, t.signs[:, :1])
    with pytest.raises(ValueError, match="d"):
        sk.draw_sketch_hashes(width=4, rows=2, rng=0).tabulate(0)


def test_given_hashes_must_match_the_sketch():
    F = np.full((2, 10), 0.1)
    t = sk.draw_sketch_hashes(width=4, rows=2, rounds=2, design="hybrid", rng=0).tabulate(10)
    ok = {"width": 4, "rows": 2, "design": "hybrid"}
    with pytest.raises(ValueError, match="rng"):
        sk.sketch_estimate(F, **ok, rng=1, hashes=t)
    for name, bad in (("width", 5), ("rows", 3), ("design", "fresh")):
        with pytest.raises(ValueError, match=name):
            sk.sketch_estimate(F, **{**ok, name: bad}, hashes=t)
    with pytest.raises(ValueError, match="rounds"):
        sk.sketch_estimate(F[:1], **ok, hashes=t)
    with pytest.raises(ValueError, match="d = 10"):
        sk.sketch_estimate(np.full((2, 12), 1 / 12), **ok, hashes=t)
    with pytest.raises(ValueError, match="hashes"):
        sk.sketch_estimate(F, **ok, hashes="not hashes")
    with pytest.raises(ValueError, match="d = 10"):
        sk.decode_sketches(np.zeros((2, 2, 4)), t, d=11)


def test_median_network_equals_numpy_median():
    from fedfreq.sketch.coding import _median_rows

    rng = np.random.default_rng(45)
    for L in range(1, 8):
        x = rng.normal(size=(3, L, 200))
        x[:, :, :20] = np.round(x[:, :, :20])  # ties
        assert np.array_equal(_median_rows(x), np.median(x, axis=-2)), L


# ----------------------------------------------------------------------------- many draws
def _identical_rounds_direct(fs, widths, L, M, reps, seed):
    """identical_rounds_errors recomputed with sketch_estimate on each repeat's tables."""
    out = np.empty((reps, len(fs), 3, len(widths)))
    for r, g in enumerate(np.random.default_rng(seed).spawn(reps)):
        t = sk.draw_sketch_hashes(width=1, rows=L, rounds=M, design="fresh", rng=g).tabulate(fs[0].size)
        for v, W in enumerate(widths):
            for i, f in enumerate(fs):
                for j, des in enumerate(sk.DESIGNS):
                    tw = t.with_width(W).as_design(des)
                    est = sk.sketch_estimate(np.tile(f, (M, 1)), width=W, rows=L, design=des, hashes=tw)
                    out[r, i, j, v] = np.max(np.abs(est - f))
    return out


@pytest.mark.parametrize("L,M", [(5, 10), (5, 3), (3, 7), (1, 1), (4, 12)])
def test_identical_rounds_errors_equal_sketch_estimate(L, M):
    fs = [sk.zipf_frequencies(300, a) for a in (1.1, 3.0)]
    widths = [3, 16, 64]
    fast = sk.identical_rounds_errors(fs, widths=widths, rows=L, rounds=M, reps=2, rng=46)
    direct = _identical_rounds_direct(fs, widths, L, M, 2, 46)
    assert fast.shape == (2, 2, 3, 3)
    assert np.allclose(fast, direct, rtol=1e-9, atol=1e-14)


def test_identical_rounds_errors_do_not_depend_on_workers():
    fs = [sk.zipf_frequencies(200, 1.5)]
    kw = {"widths": [4, 32], "rows": 5, "rounds": 6, "reps": 5}
    one = sk.identical_rounds_errors(fs, **kw, rng=47, workers=1)
    two = sk.identical_rounds_errors(fs, **kw, rng=np.random.default_rng(47), workers=2)
    assert np.array_equal(one, two)
    # repeat r uses the r-th spawned stream: the first repeats do not depend on how many follow
    assert np.array_equal(sk.identical_rounds_errors(fs, **{**kw, "reps": 2}, rng=47), one[:2])


def test_identical_rounds_errors_validation():
    f = [[0.5, 0.5]]
    ok = {"widths": [2], "rows": 1, "rounds": 1}
    for kw, name in (
        ({"widths": [0]}, "widths"),
        ({"widths": []}, "widths"),
        ({"rows": 0}, "rows"),
        ({"rounds": 0}, "rounds"),
        ({"reps": 0}, "reps"),
        ({"workers": 0}, "workers"),
        ({"rounds": 10**5, "rows": 1000}, "rounds"),
    ):
        with pytest.raises(ValueError, match=name):
            sk.identical_rounds_errors(f, **{**ok, **kw})
    for bad in ([0.5, 0.5], [[0.5, -0.5]], [[np.nan, 1.0]]):
        with pytest.raises(ValueError, match="frequencies"):
            sk.identical_rounds_errors(bad, **ok)


# ----------------------------------------------------------------------------- encoding
def test_encoding_sum_equals_fast_path_and_secure_sum():
    rng = np.random.default_rng(4)
    d = 40
    x = rng.integers(0, d, size=60)
    h = sk.draw_sketch_hashes(width=7, rows=4, rng=rng)
    enc = sk.encode_items(x, h, d=d)
    assert enc.shape == (60, 4, 7)
    assert np.all(np.abs(enc).sum(axis=(1, 2)) == 4)  # one signed one-hot per row
    fast = sk.sketch_items(x, h, d=d)
    assert np.array_equal(enc.sum(axis=0), fast)
    assert np.array_equal(sk.secure_sketch_sum(x, h, d=d, rng=5), fast)
    assert np.allclose(sk.sketch_vector(np.bincount(x, minlength=d) / 60, h), fast / 60)


def test_decode_is_exact_without_collisions():
    f = np.zeros(50)
    f[[3, 11, 40]] = [0.5, 0.3, 0.2]
    for design in sk.DESIGNS:
        est = sk.sketch_estimate(np.tile(f, (3, 1)), width=4096, rows=5, design=design, rng=6)
        # with 3 non-zero items in 4096 buckets a collision in a majority of rows is unlikely
        assert np.allclose(est, f, atol=1e-12)


def test_sketch_estimate_is_reproducible_and_shaped():
    F = np.tile(sk.zipf_frequencies(300, 1.1), (4, 1))
    a = sk.sketch_estimate(F, width=20, rows=3, design="hybrid", rng=7)
    b = sk.sketch_estimate(F, width=20, rows=3, design="hybrid", rng=7)
    assert a.shape == (300,) and np.array_equal(a, b)


def test_client_level_matches_frequency_level():
    rng = np.random.default_rng(8)
    d = 200
    rounds = sk.split_rounds(sk.sample_client_items(sk.zipf_frequencies(d, 1.3), 3000, rng=rng), 3, rng=rng)
    F = sk.round_frequencies(rounds, d)
    for design in sk.DESIGNS:
        a = sk.sketch_estimate_clients(rounds, d=d, width=30, rows=5, design=design, rng=9)
        b = sk.sketch_estimate(F, width=30, rows=5, design=design, rng=9)
        assert np.allclose(a, b, atol=1e-12)


# ----------------------------------------------------------------------------- statistics
@pytest.mark.parametrize("design", ["shared", "hybrid", "fresh"])
def test_single_row_unbiased_with_predicted_variance(design):
    """With L = 1 the estimate of item j is f_j + sum_{i != j} 1[h(i)=h(j)] (signs) f_i.

    Its mean is f_j and its variance is ||v_{-j}||^2 / W with v = f (shared) or v = F
    (hybrid and fresh, Thm 3.2 proof). 1500 trials; mean within 4 SE, variance within
    4 SE of the sample variance (SE from the sample fourth moment).
    """
    rng = np.random.default_rng(10)
    M, d, W, trials, j = 4, 60, 8, 1500, 0
    F = rng.dirichlet(np.full(d, 0.5), size=M)
    f = F.mean(axis=0)
    v = f if design == "shared" else sk.heterogeneity_vector(F)
    pred = (np.sum(v**2) - v[j] ** 2) / W
    err = np.array([sk.sketch_estimate(F, width=W, rows=1, design=design, rng=rng)[j] - f[j] for _ in range(trials)])
    se_mean = err.std(ddof=1) / math.sqrt(trials)
    assert abs(err.mean()) < 4 * se_mean
    var = err.var(ddof=1)
    se_var = math.sqrt(np.mean((err - err.mean()) ** 4) - var**2) / math.sqrt(trials)
    assert abs(var - pred) < 4 * se_var


def test_hybrid_beats_shared_on_homogeneous_light_tail():
    # F = f / sqrt(M): hybrid l_inf error should be well below shared's on f ~ i^-2.
    rng = np.random.default_rng(11)
    F = np.tile(sk.zipf_frequencies(2000, 2.0), (10, 1))
    errs = {
        des: np.mean(
            [np.max(np.abs(sk.sketch_estimate(F, width=20, rows=5, design=des, rng=rng) - F[0])) for _ in range(30)]
        )
        for des in ("shared", "hybrid")
    }
    assert errs["hybrid"] < 0.6 * errs["shared"]


# ----------------------------------------------------------------------------- bounds, widths
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0, 1), min_size=5, max_size=5), min_size=1, max_size=6))
def test_heterogeneity_vector_below_frequency(rows):
    F = np.array(rows)
    Fv = sk.heterogeneity_vector(F)
    assert np.all(Fv <= F.mean(axis=0) + 1e-12)
    assert np.allclose(sk.heterogeneity_vector(np.tile(F[0], (4, 1))), F[0] / 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1e-4, 1), min_size=2, max_size=30), st.floats(0.01, 0.9))
def test_width_objective_minimised_at_kstar_and_bounds(raw, tau):
    f = np.array(raw) / np.sum(raw)
    k = np.arange(0, f.size + 1)
    vals = sk.width_objective(f, k, tau)
    kstar = int(np.sum(f >= tau))
    assert vals[kstar] <= vals.min() + 1e-9
    bracket = kstar + np.sum(f[f < tau] ** 2) / tau**2
    assert math.isclose(vals[kstar], bracket, rel_tol=1e-9, abs_tol=1e-12)
    assert bracket <= 2 / tau + 1e-9  # Eq. (3)
    assert sk.oracle_width(f, tau, constant=2.0) <= sk.minimax_width(tau, constant=2.0)
    # Corollary 2.3, both claims: the smallest W with E(W) <= tau lies in [bracket/2, bracket]
    s2 = np.sort(f)[::-1] ** 2
    E = np.array([math.sqrt(np.sum(s2[w:]) / w) for w in range(1, f.size + 2)])
    wmin = 1 + int(np.argmax(E <= tau))
    assert bracket / 2 - 1e-9 <= wmin <= max(math.ceil(bracket - 1e-9), 1)


def test_fit_polynomial_and_model():
    a, b = sk.fit_polynomial(0.2 * np.arange(1, 21) ** -1.3)
    assert math.isclose(a, 1.3, rel_tol=1e-6) and math.isclose(b, 0.2, rel_tol=1e-6)
    m = sk.polynomial_frequencies(1.1, 0.3, 10_000)
    assert m.sum() <= 1 + 1e-12 and np.all(np.diff(m[m > 0]) < 0)


def test_two_phase_width_adapts():
    rng = np.random.default_rng(12)
    d, n, tau = 5000, 50_000, 0.005
    f = sk.zipf_frequencies(d, 2.0)
    x = sk.sample_client_items(f, n, rng=rng)
    res = sk.two_phase_width(x, d=d, tau=tau, pilot_clients=3000, rng=rng)
    assert 1.6 < res.alpha < 2.4
    assert res.width < sk.minimax_width(tau, constant=2.0, n=n) / 4


def test_minton_price_bound_formula():
    f = np.array([0.4, 0.3, 0.2, 0.1])
    got = sk.minton_price_bound(f, width=2, rows=3, p=0.1, constant=2.0)
    assert math.isclose(got, 2 * math.sqrt(math.log(10) / 3 * (0.04 + 0.01) / 2))
    assert sk.minton_price_bound(f, width=4, rows=3, p=0.1) == 0.0
    assert sk.minton_price_bound(f, width=4, rows=3, p=0.1, tail_start=1) > 0


# ----------------------------------------------------------------------------- privacy
def test_sigma_matches_dp_accounting_analytic_gaussian():
    for eps, delta, L, n in ((0.5, 1e-6, 16, 10_000), (1.0, 1e-5, 5, 1000), (3.0, 1e-8, 8, 500)):
        sigma = sk.dp_sketch_sigma(eps, delta, rows=L, n=n)
        sens = math.sqrt(L) / n
        ref = dpa_gaussian.get_sigma_gaussian(eps, delta)  # sensitivity 1
        assert math.isclose(sigma / sens, ref, rel_tol=1e-3)
        # the calibrated mechanism meets delta exactly (PLD cross-check)
        pld = dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism(standard_deviation=sigma / sens)
        assert pld.get_delta_for_epsilon(eps) <= delta * 1.01


def test_epsilon_matches_dp_accounting_rdp_accountant():
    sigma, delta, L, n, k = 0.02, 1e-6, 9, 1000, 3
    eps, _ = sk.dp_sketch_epsilon(sigma, delta, rows=L, n=n, participations=k)
    acc = dpa_rdp.RdpAccountant(list(accounting.DEFAULT_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(sigma / (math.sqrt(L) / n)), k)
    assert math.isclose(eps, acc.get_epsilon(delta), rel_tol=1e-9)


def _max_sensitivity(hashes, d, n, relation):
    """Exact max l2 distance of the normalised sketch over all neighbouring datasets."""
    items = np.arange(d)
    B, S = hashes.buckets(items), hashes.signs(items)
    enc = np.zeros((d, hashes.rows, hashes.width))
    enc[items[:, None], np.arange(hashes.rows)[None, :], B.T] = S.T
    if relation == "add_remove":
        return np.max(np.linalg.norm(enc.reshape(d, -1), axis=1)) / n
    diffs = [np.linalg.norm((enc[a] - enc[b]).ravel()) for a, b in itertools.combinations(range(d), 2)]
    return max(diffs) / n


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
def test_privacy_audit_exact_delta(relation):
    """Exact audit on small instances: the true sensitivity never exceeds the stated one,
    and the Gaussian privacy profile at the true sensitivity meets the target delta;
    a weakened calibration (sensitivity 1/n, forgetting the L rows) is caught."""
    eps, delta, n, d = 1.0, 1e-5, 20, 12
    caught = 0
    for seed in range(25):
        h = sk.draw_sketch_hashes(width=3, rows=4, rng=seed)
        true_sens = _max_sensitivity(h, d, n, relation)
        assert true_sens <= sk.sketch_sensitivity(rows=4, n=n, relation=relation) + 1e-12
        sigma = sk.dp_sketch_sigma(eps, delta, rows=4, n=n, relation=relation)
        assert accounting.gaussian_delta(eps, sensitivity=true_sens, sigma=sigma) <= delta * (1 + 1e-9)
        weak = accounting.gaussian_sigma(eps, delta, sensitivity=1.0 / n)
        caught += accounting.gaussian_delta(eps, sensitivity=true_sens, sigma=weak) > delta
    assert caught == 25


def test_dp_error_matches_noise_term():
    # Noise-only regime (W huge, no collisions): each row's average over M rounds has
    # sd sigma/sqrt(M); the median of L = 5 such rows has sd c*sigma/sqrt(M) with
    # c^2 = var(median of 5 standard normals) (about 0.287). 200 trials x 3 items.
    rng = np.random.default_rng(13)
    M, L, sigma = 8, 5, 0.01
    f = np.zeros(3)
    f[0] = 1.0
    med = np.median(rng.standard_normal((200_000, L)), axis=1).var()
    errs = np.concatenate(
        [
            sk.dp_hybrid_sketch_estimate(np.tile(f, (M, 1)), width=4096, rows=L, sigma=sigma, rng=rng) - f
            for _ in range(200)
        ]
    )
    pred = med * sigma**2 / M
    var = errs.var()
    assert abs(var - pred) < 4 * pred * math.sqrt(2 / errs.size) * 1.5


def test_paper_sigma_and_communication():
    assert math.isclose(sk.paper_dp_sigma(1.0, 1e-5, rows=4, n=100), math.sqrt(2 * 4 * math.log(1e5)) / 100)
    assert sk.sketch_bits_per_client(rows=16, width=1000, n=10**6) < sk.one_hot_bits_per_client(d=10**5, n=10**6)


# ----------------------------------------------------------------------------- exercises


# ----------------------------------------------------------------------------- validation
@settings(max_examples=40, deadline=None)
@given(st.integers(-5, 0))
def test_bad_width_and_rows_raise(bad):
    F = np.full((2, 4), 0.25)
    with pytest.raises(ValueError, match="width"):
        sk.sketch_estimate(F, width=bad, rows=2, design="shared", rng=0)
    with pytest.raises(ValueError, match="rows"):
        sk.sketch_estimate(F, width=4, rows=bad, design="shared", rng=0)


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=8).filter(lambda s: s not in sk.DESIGNS))
def test_unknown_design_raises(name):
    with pytest.raises(ValueError, match="design"):
        sk.sketch_estimate(np.full((1, 3), 1 / 3), width=4, rows=2, design=name, rng=0)


@pytest.mark.parametrize(
    "bad",
    [np.array([[0.5, -0.1]]), np.array([[np.nan, 0.5]]), np.array([0.5, 0.5]), np.array([[np.inf, 0.0]])],
)
def test_bad_frequencies_raise(bad):
    with pytest.raises(ValueError, match="round_frequencies"):
        sk.sketch_estimate(bad, width=4, rows=2, design="hybrid", rng=0)


@settings(max_examples=40, deadline=None)
@given(st.integers(-3, -1) | st.integers(10, 20))
def test_items_outside_domain_raise(item):
    h = sk.draw_sketch_hashes(width=4, rows=2, rng=0)
    with pytest.raises(ValueError, match="items"):
        sk.sketch_items([0, item], h, d=10)
    with pytest.raises(ValueError, match="items"):
        sk.sketch_estimate_clients([[0, item]], d=10, width=4, rows=2, design="fresh", rng=0)


def test_other_validation():
    with pytest.raises(ValueError, match="tau"):
        sk.oracle_width([0.5, 0.5], 0.0)
    with pytest.raises(ValueError, match="p "):
        sk.minton_price_bound([0.5], width=1, rows=1, p=1.0)
    with pytest.raises(ValueError, match="relation"):
        sk.sketch_sensitivity(rows=2, n=3, relation="swap")
    with pytest.raises(ValueError, match="hashes"):
        sk.sketch_vector([1.0], hashes="not hashes")
    with pytest.raises(ValueError, match="n must be a multiple"):
        sk.flat_frequencies(15)
    with pytest.raises(ValueError, match="sketches"):
        h = sk.draw_sketch_hashes(width=4, rows=2, rounds=2, design="hybrid", rng=0)
        sk.decode_sketches(np.zeros((1, 2, 4)), h, d=5)


# ----------------------------------------------------------------------------- peers
def _peer_stream(n=20_000, d=2000, a=1.2, seed=11):
    rng = np.random.default_rng(seed)
    return rng.permutation(sk.sample_client_items(sk.zipf_frequencies(d, a), n, rng=rng)), d


def test_peer_comparison_shapes_merges_and_guarantees():
    datasketches = pytest.importorskip("datasketches")
    x, d = _peer_stream()
    res = sk.compare_peer_sketches(x, d=d, memory_words=256, rows=8, top_k=10, repeats=2, rng=5)
    assert tuple(r.name for r in res) == sk.PEER_SKETCHES
    assert [r.implementation for r in res] == ["fedfreq", "datasketches", "datasketches"]
    assert [r.memory_words for r in res] == [256, 256, 256]  # 8 x 32 counters; 2^7 slots x (item, count)
    # linear sketches: the merge of the halves is the sketch of the whole; Misra-Gries with purges: not
    assert [r.merge_equals_whole for r in res] == [True, True, False]
    assert res[0].histogram_updates_per_second == res[0].updates_per_second
    assert res[2].histogram_updates_per_second is None
    for r in res:
        assert 0 <= r.top_k_error <= r.linf_error and 0 <= r.top_k_recall <= 1 and r.updates_per_second > 0
    # Misra-Gries guarantee (deterministic): every estimate within the a-priori error of the sketch
    apriori = datasketches.frequent_items_sketch.get_apriori_error(7, x.size) / x.size
    assert res[2].linf_error <= apriori


def test_peer_comparison_is_reproducible_and_matches_direct_count_sketch():
    pytest.importorskip("datasketches")
    x, d = _peer_stream(n=5000, d=500)
    fields = ("linf_error", "top_k_error", "top_k_recall", "merge_equals_whole", "memory_words")
    a = sk.compare_peer_sketches(x, d=d, memory_words=128, rows=5, top_k=5, rng=3)
    b = sk.compare_peer_sketches(x, d=d, memory_words=128, rows=5, top_k=5, rng=3)
    assert [[getattr(r, f) for f in fields] for r in a] == [[getattr(r, f) for f in fields] for r in b]
    # the count-sketch row is Algorithm 1 with the first hashes drawn from the generator
    h = sk.draw_sketch_hashes(width=128 // 5, rows=5, rng=np.random.default_rng(3))
    est = sk.decode_sketches(sk.sketch_items(x, h, d=d)[None] / x.size, h, d=d)
    assert a[0].linf_error == float(np.max(np.abs(est - np.bincount(x, minlength=d) / x.size)))


def test_frequent_items_exact_when_the_map_holds_every_item():
    pytest.importorskip("datasketches")
    rng = np.random.default_rng(4)
    x = rng.integers(0, 50, size=3000)  # 50 distinct items; 2^7 slots hold up to 96 items
    res = sk.compare_peer_sketches(x, d=50, memory_words=256, rows=4, top_k=5, rng=0)
    fi = res[2]
    assert fi.linf_error == 0.0 and fi.top_k_recall == 1.0 and fi.merge_equals_whole


@settings(max_examples=30, deadline=None)
@given(st.integers(-4, 15))
def test_peer_comparison_validation(bad_memory):
    pytest.importorskip("datasketches")
    x = np.array([0, 1, 1, 2])
    with pytest.raises(ValueError, match="memory_words"):
        sk.compare_peer_sketches(x, d=3, memory_words=bad_memory, rows=2)
    with pytest.raises(ValueError, match="rows"):
        sk.compare_peer_sketches(x, d=3, memory_words=16, rows=17)
    with pytest.raises(ValueError, match="items"):
        sk.compare_peer_sketches([0, 3], d=3, memory_words=16, rows=2)
    with pytest.raises(ValueError, match="top_k"):
        sk.compare_peer_sketches(x, d=3, memory_words=16, rows=2, top_k=4)
    with pytest.raises(ValueError, match="repeats"):
        sk.compare_peer_sketches(x, d=3, memory_words=16, rows=2, top_k=2, repeats=0)
