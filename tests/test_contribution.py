"""Tests of fedfreq.contribution (Liu et al. 2023: bounding user contributions).

Statistical tests use fixed seeds; a sample mean of T draws must lie within Z = 4
standard errors (sample standard deviation / sqrt(T)) of its exact expectation,
which a correct implementation fails with probability about 6e-5 per check.
Privacy audits compute the exact worst-case privacy loss (or δ) on small instances
by enumeration, check it never exceeds the claim, and check that the same audit
flags a deliberately weakened mechanism.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dp_accounting import gaussian_mechanism as dpa_gaussian
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import fedfreq
from fedfreq import contribution as ct
from fedfreq.accounting import gaussian_delta
from fedfreq.contribution._checks import _histograms
from fedfreq.contribution.clipping import _BLOCK, _rand_clip_column_sums
from fedfreq.cpbm import clip_l2

Z = 4.0
HYP = settings(max_examples=30, deadline=None, database=None)


def _dataset(rng, n=60, d=6, lam=20.0, hetero=True):
    g = np.random.default_rng(rng)
    sizes = g.poisson(lam * (g.gamma(0.7, 1 / 0.7, size=n) if hetero else 1.0))
    p = g.dirichlet(np.full(d, 0.5), size=n)
    return np.array([g.multinomial(m, q) for m, q in zip(sizes, p, strict=False)])


def test_public_names_do_not_clash_with_the_package():
    import importlib
    import pkgutil

    others = set(fedfreq.__all__) - set(ct.__all__)
    for info in pkgutil.iter_modules(fedfreq.__path__):
        if info.name != "contribution" and not info.name.startswith("_"):
            try:
                mod = importlib.import_module(f"fedfreq.{info.name}")
            except Exception:  # another module under construction is not this test's business
                continue
            others |= set(getattr(mod, "__all__", []))
    assert not (set(ct.__all__) & others)


# ---------------------------------------------------------------------------
# clipping
# ---------------------------------------------------------------------------


def test_clipping_bounds_norms_and_keeps_small_users():
    N = _dataset(0)
    for C in (1.0, 7.5, 40.0):
        c1, c2 = ct.clip_l1(N, C), clip_l2(N, C)
        assert np.all(c1.sum(1) <= C + 1e-9) and np.all(np.linalg.norm(c2, axis=1) <= C + 1e-9)
        small = N.sum(1) <= C
        assert np.array_equal(c1[small], N[small])
        assert np.all(c1 <= N + 1e-12) and np.all(c2 <= N + 1e-12)


def test_rand_clip_keeps_min_of_size_and_C_and_is_unbiased_for_the_scaled_histogram():
    N = np.array([[5, 3, 0, 2], [1, 0, 0, 1], [0, 9, 1, 0]])
    h = np.stack([ct.rand_clip(N, 4, rng=k) for k in range(4000)])
    assert np.all(h.sum(2) == np.minimum(N.sum(1), 4)) and np.all(h <= N)
    expected = 4 * N / np.maximum(4, N.sum(1, keepdims=True))
    se = h.std(0, ddof=1) / math.sqrt(h.shape[0])
    assert np.all(np.abs(h.mean(0) - expected) <= Z * se + 1e-12)


def test_rand_clip_marginal_is_hypergeometric():
    # the kept count of item 0 is Hypergeom(total 10, good 5, sample 4): chi-square over its values
    N = np.array([[5, 3, 2]] * 5000)
    k = ct.rand_clip(N, 4, rng=3)[:, 0]
    pmf = stats.hypergeom.pmf(np.arange(5), 10, 5, 4)
    obs = np.bincount(k, minlength=5)
    assert stats.chisquare(obs, pmf * obs.sum()).pvalue > 1e-4


def _exact_mvhg_pmf(row, k):
    """Exact multivariate hypergeometric law of a sample of k items from urn ``row``: {vector: prob}."""
    m = int(sum(row))
    out = {}
    for x in itertools.product(*[range(v + 1) for v in row]):
        if sum(x) == k:
            out[x] = math.prod(math.comb(v, xi) for v, xi in zip(row, x, strict=False)) / math.comb(m, k)
    return out


@pytest.mark.parametrize("C", [3, 6, 10, 13])  # both branches: the kept set (C < m/2) and the dropped set (C > m/2)
def test_rand_clip_joint_and_marginal_laws_are_exactly_multivariate_hypergeometric(C):
    """Chi-square goodness of fit against the exact law, 20 000 users with the same urn (m = 15).

    Joint law: cells with expected count < 5 are pooled; level 1e-3 per test. Each
    marginal (item j) against Hypergeom(m, N_j, C), level 1e-3 per item with a
    Bonferroni factor of 6 (items). A correct sampler fails one of these checks
    with probability < 2e-3 per C; the seeds are fixed, so the outcome is reproducible.
    """
    row = (5, 0, 3, 1, 2, 4)
    R = 20_000
    h = ct.rand_clip(np.tile(row, (R, 1)), C, rng=100 + C)
    pmf = _exact_mvhg_pmf(row, C)
    keys = list(pmf)
    index = {key: i for i, key in enumerate(keys)}
    obs = np.bincount([index[tuple(v)] for v in h.tolist()], minlength=len(keys)).astype(float)
    exp = np.array([pmf[key] for key in keys]) * R
    big = exp >= 5
    obs_p = np.append(obs[big], obs[~big].sum())
    exp_p = np.append(exp[big], exp[~big].sum())
    if exp_p[-1] == 0:
        obs_p, exp_p = obs_p[:-1], exp_p[:-1]
    assert stats.chisquare(obs_p, exp_p).pvalue > 1e-3
    m = sum(row)
    for j, v in enumerate(row):
        if v == 0:
            assert np.all(h[:, j] == 0)
            continue
        support = np.arange(min(v, C) + 1)
        e = stats.hypergeom.pmf(support, m, v, C) * R
        o = np.bincount(h[:, j], minlength=support.size)[: support.size].astype(float)
        keep = e >= 5
        o2, e2 = np.append(o[keep], o[~keep].sum()), np.append(e[keep], e[~keep].sum())
        if e2[-1] == 0:
            o2, e2 = o2[:-1], e2[:-1]
        assert stats.chisquare(o2, e2 * o2.sum() / e2.sum()).pvalue > 1e-3 / 6


def test_rand_clip_column_sums_match_the_full_clip_draw_for_draw():
    """Algorithm 3's fast path (column sums without the clipped matrix) consumes the same randomness."""
    N = np.random.default_rng(7).poisson(4.0, size=(3000, 9))
    for C in (1, 5, 20, 60):
        fast = _rand_clip_column_sums(_histograms(N), C, np.random.default_rng(C))
        full = ct.rand_clip(N, C, rng=np.random.default_rng(C)).sum(axis=0)
        assert np.array_equal(fast, full)
        assert np.array_equal(ct.rand_clip_sum(N, C, rng=C), full)


def test_rand_clip_sum_draws_are_successive_calls_on_one_generator():
    """draws=R gives the R sums that R calls of rand_clip(...).sum(0) on one generator give,
    across several blocks of users, kept-set and dropped-set rows, and empty users."""
    g = np.random.default_rng(8)
    n = _BLOCK + 300
    N = g.poisson(g.gamma(0.6, 10.0, size=(n, 1)), size=(n, 11))
    N[:50] = 0
    for C in (2, 9, 30):
        many = ct.rand_clip_sum(N, C, rng=np.random.default_rng([C, 1]), draws=3)
        gen = np.random.default_rng([C, 1])
        one_by_one = np.stack([ct.rand_clip(N, C, rng=gen).sum(axis=0) for _ in range(3)])
        assert many.shape == (3, 11) and many.dtype == np.int64
        assert np.array_equal(many, one_by_one)
    assert ct.rand_clip_sum(N, 10**6, rng=0).tolist() == N.sum(axis=0).tolist()  # nobody clipped
    with pytest.raises(ValueError, match="draws"):
        ct.rand_clip_sum(N, 3, rng=0, draws=0)
    with pytest.raises(ValueError, match="C"):
        ct.rand_clip_sum(N, 0, rng=0)


def test_rand_clip_random_stream_is_unchanged():
    """The vectorised bookkeeping of the halving sampler keeps its draws: these sums were produced
    by the earlier implementation (same seeds), and the stored chapter outputs rely on them."""
    g = np.random.default_rng(2024)
    N = g.poisson(g.gamma(0.7, 6.0, size=(300, 1)), size=(300, 13))
    expected = {
        3: [74, 57, 62, 61, 58, 71, 59, 82, 68, 56, 66, 58, 66],
        17: [312, 290, 302, 277, 317, 344, 308, 305, 310, 319, 305, 323, 293],
        40: [581, 572, 549, 579, 613, 618, 603, 623, 603, 595, 603, 602, 598],
    }
    for C, sums in expected.items():
        assert ct.rand_clip(N, C, rng=C).sum(axis=0).tolist() == sums
        assert ct.rand_clip_sum(N, C, rng=C).tolist() == sums
    assert ct.rand_clip(N, 17, rng=1)[:3].tolist() == [
        [1, 2, 0, 0, 1, 3, 1, 1, 2, 2, 1, 1, 2],
        [0, 2, 0, 2, 1, 0, 2, 1, 1, 2, 3, 0, 0],
        [0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0],
    ]


def test_clip_l1_sum_is_the_sum_of_clipped_rows_and_the_mean_of_rand_clip():
    g = np.random.default_rng(9)
    N = g.poisson(g.gamma(0.7, 8.0, size=(500, 1)), size=(500, 7))
    grid = np.array([0.5, 1.0, 3.0, 12.5, 40.0, 1e4])
    sums = ct.clip_l1_sum(N, grid)
    assert sums.shape == (grid.size, 7)
    for C, row in zip(grid, sums, strict=True):
        exact = ct.clip_l1(N, C).sum(axis=0)
        assert np.allclose(row, exact, rtol=1e-12, atol=1e-9)
        assert np.allclose(ct.clip_l1_sum(N, C), exact, rtol=1e-12, atol=1e-9)
    # E[rand-clip sum] = clip_l1 sum: 2000 draws, each coordinate within 4 standard errors
    R = 2000
    draws = ct.rand_clip_sum(N, 12, rng=10, draws=R)
    se = draws.std(axis=0, ddof=1) / math.sqrt(R)
    assert np.all(np.abs(draws.mean(axis=0) - ct.clip_l1_sum(N, 12.0)) <= Z * se)
    with pytest.raises(ValueError, match="C"):
        ct.clip_l1_sum(N, [1.0, -2.0])


def test_histogram_validation_fast_path_still_refuses_bad_counts():
    for bad in (
        np.array([[1, -1]], dtype=np.int64),
        np.array([[1.5, 2.0]]),
        np.array([[np.nan, 1.0]]),
        np.zeros((0, 3), dtype=np.int64),
    ):
        with pytest.raises(ValueError, match="histograms"):
            ct.rand_clip_sum(bad, 2, rng=0)
    N = np.array([[3, 0], [0, 0]], dtype=np.int64)
    assert _histograms(N) is N  # an int64 array is used as it is
    assert _histograms(N.astype(np.int32)).dtype == np.int64


def test_rand_clip_many_blocks_and_wide_rows():
    """More rows than one block, wide rows (d = 37, not a power of two) and users with m >= 2C."""
    g = np.random.default_rng(11)
    n = _BLOCK + 500
    N = g.poisson(g.gamma(0.5, 4.0, size=(n, 1)), size=(n, 37))
    h = ct.rand_clip(N, 8, rng=12)
    assert np.array_equal(h.sum(1), np.minimum(N.sum(1), 8)) and np.all((h >= 0) & (h <= N))
    small = N.sum(1) <= 8
    assert np.array_equal(h[small], N[small])


def test_clip_sensitivity_by_enumeration():
    """Exhaustive over histograms in {0..3}^3: the largest move of the clipped sum."""
    C = 2.0
    hs = [np.array(v) for v in itertools.product(range(4), repeat=3)]
    zero = np.zeros(3, dtype=int)
    for norm, clip, dist in (("l1", ct.clip_l1, lambda x: np.abs(x).sum()), ("l2", clip_l2, np.linalg.norm)):
        rep = max(dist(clip(a[None], C)[0] - clip(b[None], C)[0]) for a in hs for b in hs)
        add = max(dist(clip(a[None], C)[0] - clip(zero[None], C)[0]) for a in hs)
        assert rep == pytest.approx(ct.clip_sensitivity(C, norm=norm, relation="replace"))
        assert add == pytest.approx(ct.clip_sensitivity(C, norm=norm, relation="add-remove"))


# ---------------------------------------------------------------------------
# Algorithm 1: privacy audits and exact losses
# ---------------------------------------------------------------------------


def test_algorithm1_laplace_audit_add_remove_and_replace():
    """Exact privacy loss of Lap(C/eps) noise on the clipped sum: eps * ||shift||_1 / C."""
    C, eps = 2.0, 1.0
    hs = [np.array(v) for v in itertools.product(range(4), repeat=3)]
    clipped = [ct.clip_l1(a[None], C)[0] for a in hs]
    loss_add = max(eps * np.abs(c).sum() / C for c in clipped)
    loss_rep = max(eps * np.abs(a - b).sum() / C for a in clipped for b in clipped)
    assert loss_add <= eps + 1e-12  # the claim holds for add/remove
    assert loss_rep == pytest.approx(2 * eps)  # and is off by a factor 2 under replacement
    # a weakened mechanism (noise calibrated to C/2) is caught by the same audit
    assert max(eps * np.abs(c).sum() / (C / 2) for c in clipped) > eps


def test_algorithm1_gaussian_audit():
    eps, delta = 1.0, 1e-5
    sigma = ct.lemma41_sigma(eps, delta)
    # shift C (add/remove) with noise C*sigma: exact delta within the target
    assert gaussian_delta(eps, sensitivity=1.0, sigma=sigma) <= delta
    # replacement moves the sum by sqrt(2) C: the same sigma is not enough ...
    assert gaussian_delta(eps, sensitivity=math.sqrt(2), sigma=sigma) > delta
    # ... sqrt(2) sigma is
    assert gaussian_delta(eps, sensitivity=math.sqrt(2), sigma=math.sqrt(2) * sigma) <= delta


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-5), (1.0, 1e-6), (0.1, 1e-3)])
def test_lemma41_sigmas_are_valid_and_match_dp_accounting(eps, delta):
    s_lemma = ct.lemma41_sigma(eps, delta, method="lemma")
    s_an = ct.lemma41_sigma(eps, delta)
    assert gaussian_delta(eps, sigma=s_lemma) <= delta
    assert s_an <= s_lemma
    assert s_an == pytest.approx(dpa_gaussian.get_sigma_gaussian(eps, delta, tol=1e-12), rel=1e-6)


def test_exact_losses_match_monte_carlo():
    N = _dataset(1, n=40, d=4)
    g = np.random.default_rng(2)
    T = 4000
    for C in (5.0, 20.0):
        for kind in ("lap", "gauss"):
            if kind == "lap":
                draws = np.array([ct.bounded_histogram(N, C=C, epsilon=1.0, rng=g) for _ in range(T)])
                exact = ct.laplace_expected_loss(N, C, epsilon=1.0)
            else:
                draws = np.array(
                    [ct.bounded_histogram(N, C=C, epsilon=1.0, delta=1e-5, sigma=3.0, rng=g) for _ in range(T)]
                )
                exact = ct.gaussian_expected_loss(N, C, sigma=3.0)
            err = np.abs(draws - N.sum(0)).sum(1)
            assert abs(err.mean() - exact) <= Z * err.std(ddof=1) / math.sqrt(T)


def test_losses_are_sandwiched_by_the_surrogates():
    for seed in range(5):
        N = _dataset(seed, n=80, d=5)
        Cs = np.linspace(0.5, N.sum(1).max() + 5, 60)
        m = N.sum(1)
        U = ct.laplace_surrogate(m, Cs, d=5, epsilon=0.7)
        L = ct.laplace_expected_loss(N, Cs, epsilon=0.7)
        assert np.all(U / 2 <= L + 1e-9) and np.all(L <= U + 1e-9)
        l1, l2 = N.sum(1).astype(float), np.linalg.norm(N, axis=1)
        G = ct.threshold_objective(l1, l2, Cs, d=5, sigma=2.0)
        LG = ct.gaussian_expected_loss(N, Cs, sigma=2.0)
        assert np.all(G / 2 <= LG + 1e-9) and np.all(LG <= G + 1e-9)


# ---------------------------------------------------------------------------
# contract thresholds (Lemma 4.2, Theorem 4.3)
# ---------------------------------------------------------------------------


def test_laplace_threshold_minimises_surrogate_and_is_a_2_approximation():
    for seed in range(8):
        N = _dataset(seed, n=100, d=4)
        m = N.sum(1)
        eps = [0.5, 1.0, 2.0][seed % 3]
        C = ct.laplace_threshold(m, d=4, epsilon=eps)
        assert C == np.sort(m)[::-1][math.ceil(4 / eps) - 1]
        grid = np.linspace(0.01, m.max() + 1, 3000)
        assert (
            ct.laplace_surrogate(m, C, d=4, epsilon=eps) <= ct.laplace_surrogate(m, grid, d=4, epsilon=eps).min() + 1e-9
        )
        best = ct.laplace_expected_loss(N, grid, epsilon=eps).min()
        assert ct.laplace_expected_loss(N, C, epsilon=eps) <= 2 * best


def test_laplace_threshold_edge_cases():
    assert ct.laplace_threshold([3, 1], d=5, epsilon=1.0) == 0.0  # ceil(d/eps) > n
    assert ct.laplace_threshold([3, 1, 4], d=1, epsilon=1.0) == 4.0


def test_gaussian_threshold_minimises_G_and_is_a_2_approximation():
    for seed in range(8):
        N = _dataset(seed + 20, n=100, d=6)
        l1, l2 = N.sum(1).astype(float), np.linalg.norm(N, axis=1)
        sigma = [0.5, 2.0, 5.0][seed % 3]
        C = ct.gaussian_threshold(l1, l2, d=6, sigma=sigma)
        grid = np.concatenate([np.linspace(0, l2.max() + 1, 4000)[1:], l2[l2 > 0]])
        Gs = ct.threshold_objective(l1, l2, grid, d=6, sigma=sigma)
        GC = ct.threshold_objective(l1, l2, max(C, 1e-12), d=6, sigma=sigma)
        assert GC <= Gs.min() + 1e-9
        assert (
            ct.gaussian_expected_loss(N, max(C, 1e-12), sigma=sigma)
            <= 2 * ct.gaussian_expected_loss(N, grid, sigma=sigma).min()
        )


def test_gaussian_threshold_definition_directly():
    l1 = np.array([3.0, 5.0, 2.0, 9.0])
    l2 = np.array([2.0, 4.0, 2.0, 5.0])
    C = ct.gaussian_threshold(l1, l2, d=4, sigma=1.0)
    S = lambda c: sum(a / b for a, b in zip(l1, l2, strict=False) if b > c)  # noqa: E731
    assert C in (0.0, *l2)
    M4 = 4 * math.sqrt(2 / math.pi)
    assert S(C) <= M4 and all(S(c) > M4 for c in np.linspace(0, C, 50)[:-1])


# ---------------------------------------------------------------------------
# private thresholds (Corollary 4.4, Algorithm 2, Lemma A.1)
# ---------------------------------------------------------------------------


def _norms(N):
    return N.sum(1).astype(float), np.linalg.norm(N, axis=1)


def test_regularized_threshold_is_the_minimiser_and_below_C_star():
    N = _dataset(5, n=150, d=6)
    l1, l2 = _norms(N)
    for lam in (1e-4, 1e-2, 1.0):
        c1 = ct.regularized_threshold(l1, l2, d=6, sigma=2.0, lam=lam, s=6)
        grid = np.linspace(0, l2.max() + 1, 20001)
        F = ct.threshold_objective(l1, l2, np.maximum(grid, 1e-12), d=6, sigma=2.0) / l1.size + lam / 2 * grid**2
        Fc = ct.threshold_objective(l1, l2, max(c1, 1e-12), d=6, sigma=2.0) / l1.size + lam / 2 * c1**2
        assert Fc <= F.min() + 1e-9
        assert c1 <= ct.gaussian_threshold(l1, l2, d=6, sigma=2.0) + 1e-9


def test_lemma_a1_sensitivity_audit_and_weakened_version_caught():
    """Replace one user by many others: |C'_1 - C'_2| <= 4 sqrt(s)/(lam n); in fact <= sqrt(s)/(lam n)."""
    g = np.random.default_rng(11)
    N = _dataset(7, n=50, d=4)
    l1, l2 = _norms(N)
    s, lam = 4.0, 0.05
    base = ct.regularized_threshold(l1, l2, d=4, sigma=1.0, lam=lam, s=s)
    worst = 0.0
    for _ in range(300):
        v = g.multinomial(g.integers(0, 200), g.dirichlet(np.ones(4)))
        a, b = l1.copy(), l2.copy()
        a[0], b[0] = v.sum(), np.linalg.norm(v)
        worst = max(worst, abs(ct.regularized_threshold(a, b, d=4, sigma=1.0, lam=lam, s=s) - base))
    n = l1.size
    assert worst <= math.sqrt(s) / (lam * n) + 1e-9 <= 4 * math.sqrt(s) / (lam * n)
    a, b = l1.copy(), l2.copy()
    a[0], b[0] = 400.0, 200.0  # ratio 2 = sqrt(d)
    moved = abs(
        ct.regularized_threshold(a, b, d=4, sigma=1.0, lam=lam, s=4.0)
        - ct.regularized_threshold(l1, l2, d=4, sigma=1.0, lam=lam, s=4.0)
    )
    assert moved <= math.sqrt(4.0) / (lam * n) + 1e-9


def test_output_perturbation_noise_scale():
    N = _dataset(8, n=100, d=4)
    l1, l2 = _norms(N)
    kw = dict(d=4, sigma=1.0, C_max=60.0, s=4.0, epsilon_prime=0.5)
    n = l1.size
    lam = 2 * math.sqrt(2 * 4.0) / (60.0 * math.sqrt(n * 0.5))
    c1 = ct.regularized_threshold(l1, l2, d=4, sigma=1.0, lam=lam, s=4.0)
    outs = np.array([ct.output_perturbation_threshold(l1, l2, rng=k, project=False, **kw) for k in range(3000)])
    scale = 4 * math.sqrt(4.0) / (lam * n) / 0.5
    dev = np.abs(outs - c1)
    assert abs(dev.mean() - scale) <= Z * dev.std(ddof=1) / math.sqrt(dev.size)
    proj = ct.output_perturbation_threshold(l1, l2, rng=0, **kw)
    assert 0.0 <= proj <= 60.0


def test_private_gd_approaches_C_star_with_a_large_budget():
    N = _dataset(9, n=150, d=6)
    l1, l2 = _norms(N)
    cstar = ct.gaussian_threshold(l1, l2, d=6, sigma=2.0)
    G = lambda x: ct.threshold_objective(l1, l2, max(x, 1e-9), d=6, sigma=2.0)  # noqa: E731
    cs = [
        ct.private_threshold_sgd(
            l1, l2, d=6, sigma=2.0, C_max=2 * l2.max(), s=6, epsilon_prime=200.0, delta_prime=1e-3, rng=k
        )
        for k in range(5)
    ]
    assert np.median([G(c) for c in cs]) <= 1.1 * G(cstar)


def test_private_sgd_noise_multiplier_and_average():
    N = _dataset(9, n=150, d=6)
    l1, l2 = _norms(N)
    kw = dict(d=6, sigma=2.0, C_max=2 * l2.max(), s=6.0, epsilon_prime=0.5, delta_prime=1e-3, steps=400)
    n, T = l1.size, 400
    L = math.sqrt(6.0) + 6 * 2.0 * math.sqrt(2 / math.pi) / n
    z_bassily = math.sqrt(32 * T * math.log(n / 1e-3) * math.log(1 / 1e-3)) / 0.5 / n
    # the closed-form calibration is noise_multiplier = sigma_sgd / (n L)
    a = ct.private_threshold_sgd(l1, l2, rng=3, **kw)
    b = ct.private_threshold_sgd(l1, l2, rng=3, noise_multiplier=z_bassily, **kw)
    assert abs(a - b) <= 1e-9 * max(1.0, abs(a))
    # average=True returns the mean of the second half of the same iterates
    kw_small = dict(kw, steps=7)
    avg = ct.private_threshold_sgd(l1, l2, rng=5, average=True, **kw_small)
    # the path, recomputed step by step from the same draws
    gen = np.random.default_rng(5)
    M = 6 * 2.0 * math.sqrt(2 / math.pi)
    r = np.where(l2 > 0, np.minimum(l1 / np.where(l2 > 0, l2, 1.0), math.sqrt(6.0)), 0.0)
    var = 32 * L * L * 7 * math.log(n / 1e-3) * math.log(1 / 1e-3) / 0.25
    users, noise = gen.integers(0, n, size=7), gen.normal(0.0, math.sqrt(var), size=7)
    c, path = 0.5 * kw["C_max"], []
    for t in range(7):
        g = M - (n * r[users[t]] if l2[users[t]] > c else 0.0) + noise[t]
        c = min(max(c - kw["C_max"] / math.sqrt((t + 1) * (n * n * L * L + var)) * g, 0.0), kw["C_max"])
        path.append(c)
    assert abs(path[-1] - ct.private_threshold_sgd(l1, l2, rng=5, **kw_small)) <= 1e-9 * kw["C_max"]
    assert abs(avg - np.mean(path[3:])) <= 1e-9 * kw["C_max"]
    with pytest.raises(ValueError, match="noise_multiplier"):
        ct.private_threshold_sgd(l1, l2, rng=0, noise_multiplier=0.0, **kw)
    with pytest.raises(ValueError, match="average"):
        ct.private_threshold_sgd(l1, l2, rng=0, average="yes", **kw)


def _sgd_loop(
    l1, l2, *, d, sigma, C_max, s, epsilon_prime, delta_prime, steps, rng, noise_multiplier=None, average=False
):
    """The noisy SGD of private_threshold_sgd written as the step-by-step loop of its docstring."""
    gen = np.random.default_rng(rng)
    n, T = l1.size, steps
    M = d * sigma * math.sqrt(2.0 / math.pi)
    L = math.sqrt(s) + M / n
    r = np.where(l2 > 0, np.minimum(l1 / np.where(l2 > 0, l2, 1.0), math.sqrt(s)), 0.0)
    if noise_multiplier is None:
        var = 32.0 * L * L * T * math.log(max(n / delta_prime, math.e)) * math.log(1.0 / delta_prime) / epsilon_prime**2
    else:
        var = (noise_multiplier * n * L) ** 2
    users, noise = gen.integers(0, n, size=T), gen.normal(0.0, math.sqrt(var), size=T)
    denom = n * n * L * L + var
    c, half, tail, clamped = 0.5 * C_max, T // 2, 0.0, False
    for t in range(T):
        i = users[t]
        step = c - C_max / math.sqrt((t + 1) * denom) * (n * (M / n - (r[i] if l2[i] > c else 0.0)) + noise[t])
        clamped |= step < 0.0
        c = min(max(step, 0.0), C_max)
        if t >= half:
            tail += c
    return (tail / (T - half) if average else c), clamped


@pytest.mark.parametrize(
    "case",
    [
        # (n, d, steps, extra): several 2^16-step chunks, Bassily et al.'s noise and a tighter one,
        # last iterate and averaged iterates, a threshold C* = 0 (the iterates sit on 0, where
        # blocks are reflected), and a run shorter than one block
        (150, 6, 150 * 150, {}),
        (150, 6, 2**17 + 17, {"noise_multiplier": 2.0, "average": True}),
        (400, 10, 40_000, {"noise_multiplier": 0.5}),
        (60, 200, 20_000, {"noise_multiplier": 0.7, "average": True}),
        (40, 3, 9, {"average": True}),
    ],
)
def test_private_sgd_block_recursion_agrees_with_the_step_by_step_loop(case):
    """The block-wise recursion (cumulative sums, re-checked indicators, Lindley reflection at 0)
    against the plain loop on the same draws, within 1e-12 C_m (rounding)."""
    n, d, steps, extra = case
    N = _dataset(21, n=n, d=d)
    l1, l2 = _norms(N)
    kw = dict(d=d, sigma=2.0, C_max=2 * float(l2.max()), s=float(d), epsilon_prime=0.5, delta_prime=1e-3, steps=steps)
    kw.update(extra)
    for seed in (0, 1):
        fast = ct.private_threshold_sgd(l1, l2, rng=seed, **kw)
        slow, _ = _sgd_loop(l1, l2, rng=seed, **kw)
        assert abs(fast - slow) <= 1e-12 * kw["C_max"]


def test_private_sgd_is_bitwise_the_loop_when_nothing_is_projected_onto_zero():
    """Without a projection onto 0 a cumulative sum adds exactly as the loop does: equal bits."""
    N = _dataset(21, n=150, d=6)
    l1, l2 = _norms(N)
    kw = dict(d=6, sigma=2.0, C_max=2 * float(l2.max()), s=6.0, epsilon_prime=100.0, delta_prime=1e-3, steps=22_500)
    slow, clamped = _sgd_loop(l1, l2, rng=1, **kw)
    assert not clamped  # the premise: this run never reaches 0
    assert ct.private_threshold_sgd(l1, l2, rng=1, **kw) == slow
    avg, _ = _sgd_loop(l1, l2, rng=1, average=True, **kw)
    assert ct.private_threshold_sgd(l1, l2, rng=1, average=True, **kw) == avg


# ---------------------------------------------------------------------------
# Algorithm 3 and 4
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("C", [1, 2, 5, 10, 20])
@pytest.mark.parametrize("eps,delta", [(1.0, 1e-6), (0.3, 1e-3), (3.0, 0.1)])
def test_algorithm3_exact_delta_within_claim_and_weakened_threshold_caught(C, eps, delta):
    assert ct.unbounded_exact_delta(C, epsilon=eps, delta=delta) <= delta * (1 + 1e-12)
    t_weak = max((C / eps) * math.log(C / (2 * delta)), C)  # the threshold of Lemma 5.1 without its leading C
    assert ct.unbounded_exact_delta(C, epsilon=eps, delta=delta, t=t_weak) > delta


def test_algorithm3_release_probability_by_simulation():
    # one new item with c copies is released w.p. exp(-eps (t - c)/C) / 2
    C, eps, delta, c = 4, 1.0, 0.2, 3
    t = ct.unbounded_threshold(C, epsilon=eps, delta=delta)
    p = 0.5 * math.exp(-eps * (t - c) / C)
    N = np.array([[c, 0]])
    T = 6000
    rel = np.array([ct.unbounded_histogram(N, C=C, epsilon=eps, delta=delta, rng=k)[0] > 0 for k in range(T)])
    assert abs(rel.mean() - p) <= Z * math.sqrt(p * (1 - p) / T)


def test_unbounded_expected_error_matches_simulation():
    g = np.random.default_rng(4)
    N = g.poisson(3.0, size=(30, 5))
    C = int(N.sum(1).max())  # no user clipped: hbar = Nbar deterministic
    exact = ct.unbounded_expected_error(N.sum(0), N.sum(0), C=C, epsilon=1.0, delta=0.01)
    T = 3000
    err = np.array(
        [np.abs(ct.unbounded_histogram(N, C=C, epsilon=1.0, delta=0.01, rng=g) - N.sum(0)).sum() for _ in range(T)]
    )
    assert abs(err.mean() - exact) <= Z * err.std(ddof=1) / math.sqrt(T)


def test_surrogate_error_matches_its_formula_user_by_user():
    """V(C) summed by size equals the per-user formula of Algorithm 4 (empty users and items included)."""
    g = np.random.default_rng(6)
    N = g.poisson(g.gamma(0.5, 6.0, size=(400, 1)), size=(400, 9))
    N[:, 4] = 0
    N[:7] = 0
    m = N.sum(1).astype(float)
    for C in (0.5, 1.0, 2.0, 7.3, 25.0, 500.0):
        t = ct.unbounded_threshold(C, epsilon=0.7, delta=1e-3)
        eh = (C / np.maximum(C, np.maximum(m, 1.0))) @ N
        direct = 2 * np.maximum(m - C, 0.0).sum() + np.minimum(eh[N.sum(0) > 0], t).sum()
        assert math.isclose(ct.surrogate_error(N, C, epsilon=0.7, delta=1e-3), direct, rel_tol=1e-12)


def test_surrogate_sensitivity_within_5Cm_over_2():
    g = np.random.default_rng(5)
    N = g.poisson(2.0, size=(20, 6))
    Cm = 30
    grid = np.arange(1, Cm + 1)
    base = ct.surrogate_error(N, grid, epsilon=1.0, delta=0.01)
    worst = 0.0
    for _ in range(200):
        M = N.copy()
        M[0] = g.multinomial(g.integers(0, Cm + 1), g.dirichlet(np.ones(6)))
        worst = max(worst, np.abs(ct.surrogate_error(M, grid, epsilon=1.0, delta=0.01) - base).max())
    assert worst <= 2 * Cm <= 2.5 * Cm


def test_exponential_mechanism_selection_frequencies():
    N = np.array([[3, 1], [1, 1], [5, 0]])
    grid = np.array([1.0, 2.0, 4.0, 5.0])
    p = ct.exponential_mechanism_probabilities(
        ct.surrogate_error(N, grid, epsilon=1.0, delta=0.1), epsilon=5.0, sensitivity=12.5
    )
    draws = np.array(
        [
            ct.select_threshold_exponential(N, grid, epsilon=1.0, delta=0.1, epsilon_prime=5.0, C_max=5, rng=k)
            for k in range(1500)
        ]
    )
    freq = np.array([(draws == c).mean() for c in grid])
    assert np.all(np.abs(freq - p) <= Z * np.sqrt(p * (1 - p) / draws.size) + 1e-12)


# ---------------------------------------------------------------------------
# Algorithm 5 and h
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("C", [1, 2, 3, 7, 40])
def test_clipped_poisson_mean_matches_the_papers_sum_and_derivatives(C):
    lam = np.array([0.0, 1e-8, 0.3, 1.0, 4.0, 25.0, 300.0])
    j = np.arange(C)
    direct = C - np.sum((C - j)[None, :] * stats.poisson.pmf(j[None, :], lam[:, None]), axis=1)
    assert np.allclose(ct.clipped_poisson_mean(lam, C), direct, rtol=1e-12, atol=1e-15)
    x = np.array([0.2, 1.0, 3.0])
    hstep = 1e-5
    fd1 = (ct.clipped_poisson_mean(x + hstep, C) - ct.clipped_poisson_mean(x - hstep, C)) / (2 * hstep)
    assert np.allclose(ct.clipped_poisson_mean_derivative(x, C), fd1, rtol=1e-6)
    fd2 = (ct.clipped_poisson_mean_derivative(x + hstep, C) - ct.clipped_poisson_mean_derivative(x - hstep, C)) / (
        2 * hstep
    )
    assert np.allclose(ct.clipped_poisson_mean_derivative(x, C, order=2), fd2, rtol=1e-5, atol=1e-9)


def test_clipped_poisson_mean_small_lambda_is_relatively_accurate_and_large_is_finite():
    assert ct.clipped_poisson_mean(1e-300, 3) == pytest.approx(1e-300, rel=1e-12)
    assert ct.clipped_poisson_mean(1e9, 5) == 5.0


def test_clipped_poisson_mean_by_simulation():
    g = np.random.default_rng(6)
    x = np.minimum(g.poisson(2.5, size=200_000), 3)
    assert abs(x.mean() - ct.clipped_poisson_mean(2.5, 3)) <= Z * x.std(ddof=1) / math.sqrt(x.size)


@pytest.mark.parametrize("C", [1, 2, 5, 30])
def test_inverse_roundtrip(C):
    lam = np.logspace(-6, math.log10(C + 3), 60)
    y = ct.clipped_poisson_mean(lam, C)
    inv = ct.clipped_poisson_mean_inverse(y, C)
    # conditioning: an error of one ulp in y moves lambda by eps*y/h'(lambda)
    tol = 64 * np.finfo(float).eps * (y / ct.clipped_poisson_mean_derivative(lam, C) + lam)
    assert np.all(np.abs(inv - lam) <= tol)
    assert ct.clipped_poisson_mean_inverse(0.0, C) == 0.0
    with pytest.raises(ValueError, match="y"):
        ct.clipped_poisson_mean_inverse(float(C), C)


def test_gamma_c_and_its_bound():
    for C in range(1, 80):
        g = ct.gamma_c(C)
        assert g == pytest.approx(1 / stats.poisson.cdf(C - 1, 1.0), rel=1e-12)
        assert g <= max(math.e, 1 / (1 - math.exp(-((C - 1) ** 2) / (2 * C))) if C > 1 else math.e) + 1e-12


def test_debiased_count_removes_clipping_bias_for_iid_poisson():
    g = np.random.default_rng(7)
    n, lam, C = 2000, 1.5, 2
    est = np.array(
        [ct.debiased_count(g.poisson(lam, size=n), C=C, epsilon=1.0, lam_max=10.0, rng=g) for _ in range(200)]
    )
    naive = n * ct.clipped_poisson_mean(lam, C)
    # the clipped sum is biased by n (lam - h(lam)) ~ 700; the debiased one is centred at n lam
    assert abs(est.mean() - n * lam) <= Z * est.std(ddof=1) / math.sqrt(est.size) + 0.01 * n
    assert abs(naive - n * lam) > 100


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------


@HYP
@given(C=st.one_of(st.floats(max_value=0.0), st.just(float("nan"))))
def test_bad_thresholds_raise(C):
    with pytest.raises(ValueError, match="C"):
        ct.clip_l1([[1, 2]], C)
    with pytest.raises(ValueError, match="C"):
        ct.clipped_poisson_mean(1.0, C)


@HYP
@given(eps=st.floats(max_value=0.0), delta=st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0)))
def test_bad_privacy_parameters_raise(eps, delta):
    with pytest.raises(ValueError, match="epsilon"):
        ct.laplace_threshold([1, 2, 3], d=1, epsilon=eps)
    with pytest.raises(ValueError, match="delta"):
        ct.unbounded_threshold(3, epsilon=1.0, delta=delta)


@HYP
@given(bad=st.sampled_from([[[1, -1]], [[1.5, 2]], [[np.nan, 1]], [1, 2]]))
def test_bad_histograms_raise(bad):
    with pytest.raises(ValueError, match="histograms"):
        ct.bounded_histogram(bad, C=1.0, epsilon=1.0)


def test_other_validation():
    with pytest.raises(ValueError, match="s"):
        ct.output_perturbation_threshold([1.0], [1.0], d=1, sigma=1.0, C_max=1.0, s=0.5, epsilon_prime=1.0)
    with pytest.raises(ValueError, match="l2_norms"):
        ct.gaussian_threshold([1.0], [2.0], d=2, sigma=1.0)
    with pytest.raises(ValueError, match="sqrt"):
        ct.gaussian_threshold([3.0], [1.0], d=2, sigma=1.0)
    with pytest.raises(ValueError, match="C"):
        ct.rand_clip([[1, 2]], 2.5)
    with pytest.raises(ValueError, match="C_max"):
        ct.select_threshold_exponential([[9, 9]], [1, 2], epsilon=1.0, delta=0.1, epsilon_prime=1.0, C_max=5)
    with pytest.raises(ValueError, match="lam"):
        ct.clipped_poisson_mean(-1.0, 2)
    with pytest.raises(ValueError, match="counts"):
        ct.debiased_count([1, -2], C=2, epsilon=1.0, lam_max=1.0)


# ---------------------------------------------------------------------------
# baselines of Liu et al. 2023, Sec. 7.1: Huang et al. l2 quantile, DP-M-quantile by noisy GD
# ---------------------------------------------------------------------------


def test_chi_mean_matches_scipy_and_sqrt_d_asymptotics():
    for d in (1, 2, 5, 100, 5000):
        assert ct.chi_mean(d) == pytest.approx(stats.chi(d).mean(), rel=1e-10)
    assert ct.chi_mean(10**6) == pytest.approx(math.sqrt(10**6 - 0.5), rel=1e-9)


def test_l2_quantile_threshold_minimises_the_l2_error_bound():
    """Brute force over all candidate thresholds (0 and every norm): U2(C) is minimal at the returned C."""
    g = np.random.default_rng(3)
    for _ in range(20):
        d = int(g.integers(1, 400))
        sigma = float(g.uniform(0.1, 3.0))
        l2 = g.gamma(0.7, 20.0, size=int(g.integers(5, 300)))
        mu = ct.chi_mean(d)

        def U2(c, l2=l2, sigma=sigma, mu=mu):
            return np.maximum(l2 - c, 0.0).sum() + c * sigma * mu

        c = ct.l2_quantile_threshold(l2, d=d, sigma=sigma)
        best = min(U2(v) for v in np.append(l2, 0.0))
        assert U2(c) <= best * (1 + 1e-12) + 1e-12
        k = ct.l2_quantile_rank(d=d, sigma=sigma)
        assert (k > l2.size and c == 0.0) or np.sum(l2 > c) < k <= np.sum(l2 >= c)


def test_private_quantile_gd_privacy_accounting_matches_dp_accounting():
    """T compositions of a sensitivity-1 Gaussian with noise sqrt(T) sigma(eps, delta) are (eps, delta)-DP.

    T Gaussians compose exactly as one Gaussian with noise sigma_b / sqrt(T) (Gaussian DP), whose
    exact delta(eps) must not exceed delta, in agreement with dp-accounting's calibration; half
    the noise exceeds delta (the audit catches a weakened mechanism)."""
    from fedfreq.accounting import gaussian_sigma

    eps, delta, T = 0.1, 1e-4, 200
    sigma_b = math.sqrt(T) * gaussian_sigma(eps, delta, sensitivity=1.0)
    got = gaussian_delta(eps, sigma=sigma_b / math.sqrt(T))
    assert got <= delta * (1 + 1e-9)
    # dp-accounting's exact Gaussian calibration (sensitivity 1) agrees with the composed noise
    assert sigma_b / math.sqrt(T) == pytest.approx(dpa_gaussian.get_sigma_gaussian(eps, delta), rel=1e-3)
    assert gaussian_delta(eps, sigma=0.5 * sigma_b / math.sqrt(T)) > delta


def test_private_quantile_gd_converges_to_the_rank_with_weak_privacy():
    x = np.random.default_rng(4).lognormal(3.0, 1.0, size=20_000)
    # eta = 1: near an extreme quantile the pinball gradient is small, and eta = 0.2 needs more steps
    for rank in (50, 2000, 10_000):
        target = np.sort(x)[-rank]
        c = ct.private_quantile_gd(x, rank=rank, epsilon=20.0, delta=1e-6, steps=400, eta=1.0, rng=rank)
        above = np.sum(x > c)
        # rank within 5 % (plus 10) of the target: the noise on each count is ~ 0.2 sqrt(T) users
        assert abs(above - (rank - 1)) <= 0.05 * rank + 10, (rank, above, c, target)


def test_private_quantile_gd_is_reproducible_and_validates():
    x = np.arange(1.0, 101.0)
    a = ct.private_quantile_gd(x, rank=10, epsilon=1.0, delta=1e-3, rng=5)
    assert a == ct.private_quantile_gd(x, rank=10, epsilon=1.0, delta=1e-3, rng=5)
    for kw, name in (
        (dict(rank=0), "rank"),
        (dict(rank=101), "rank"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(delta=1.0), "delta"),
        (dict(steps=1), "steps"),
        (dict(eta=-1.0), "eta"),
        (dict(init=0.0), "init"),
    ):
        args = dict(rank=10, epsilon=1.0, delta=1e-3) | kw
        with pytest.raises(ValueError, match=name):
            ct.private_quantile_gd(x, **args)
    with pytest.raises(ValueError, match="sigma"):
        ct.l2_quantile_rank(d=3, sigma=0.0)
    with pytest.raises(ValueError, match="d"):
        ct.chi_mean(0)


def test_zero_threshold_loses_every_item():
    N = np.array([[3, 1], [0, 2]])
    assert ct.laplace_expected_loss(N, 0.0, epsilon=1.0) == 6.0
    assert ct.gaussian_expected_loss(N, 0.0, sigma=1.0) == 6.0


def test_the_objectives_accept_a_threshold_of_zero():
    """C* = 0 when the noise dominates; the objectives are defined there: G(0) and U(0) are the
    totals of the users' l1 sizes (everything is clipped away)."""
    N = np.array([[3, 0, 0, 0], [1, 1, 1, 2], [0, 0, 0, 0]])
    l1, l2 = N.sum(1).astype(float), np.linalg.norm(N, axis=1)
    assert ct.gaussian_threshold(l1, l2, d=4, sigma=100.0) == 0.0
    assert ct.threshold_objective(l1, l2, 0.0, d=4, sigma=100.0) == l1.sum()
    assert ct.laplace_surrogate(l1, 0.0, d=4, epsilon=1.0) == l1.sum()
    with pytest.raises(ValueError, match="C"):
        ct.threshold_objective(l1, l2, -1.0, d=4, sigma=1.0)


def test_unbounded_expected_error_per_item_sums_to_the_total():
    g = np.random.default_rng(5)
    Nb = g.integers(0, 40, size=12).astype(float)
    h = np.stack([np.minimum(Nb, g.integers(0, 40, size=12)) for _ in range(3)])
    kw = dict(C=4.0, epsilon=0.8, delta=1e-3)
    per = ct.unbounded_expected_error(h, Nb, per_item=True, **kw)
    assert per.shape == h.shape and np.all(per[:, Nb == 0] == 0) and np.all(per >= 0)
    np.testing.assert_allclose(per.sum(axis=-1), ct.unbounded_expected_error(h, Nb, **kw), rtol=1e-12)
    with pytest.raises(ValueError, match="per_item"):
        ct.unbounded_expected_error(h, Nb, per_item="yes", **kw)
