"""Privacy audits of the mechanisms whose guarantee had no audit of its own.

Each audit measures the privacy loss of a concrete pair of neighbouring output laws
with `fedfreq.audit` and compares it with the mechanism's claim:

* exact, where the output law can be enumerated on a small instance: the noise law is
  read from the mechanism's own draws (`RecordingGenerator`), and worst-case neighbours
  are found by searching every neighbour of a small instance;
* otherwise a Monte Carlo lower bound on epsilon with Clopper-Pearson intervals on a
  worst-case pair, at confidence 1 - 1e-6: an honest mechanism fails such an audit with
  probability at most 1e-6 (the draws are seeded, so a run is reproducible).

Every audit also runs a deliberately weakened mechanism (noise scale too small,
sensitivity miscounted, a step of composition dropped) and asserts that the audit
catches it: the audited loss exceeds the claimed epsilon (or delta).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from fedfreq import accounting, audit
from fedfreq import contribution as ct
from fedfreq import heavy_hitters as hh
from fedfreq import protocols as pr
from fedfreq import sample_threshold as st
from fedfreq import sketch as sk
from fedfreq.kashin import kashin_representation, tight_frame

#: Confidence of every Monte Carlo audit: the probability that an honest mechanism is
#: flagged by chance is at most 1 - CONFIDENCE.
CONFIDENCE = 1 - 1e-6


def _laplace_scale(gen: audit.RecordingGenerator) -> float:
    """The scale of the single Laplace draw a mechanism made (centred at 0)."""
    (draw,) = gen.draws("laplace")
    loc, scale = (list(draw.args) + [draw.kwargs.get("loc"), draw.kwargs.get("scale")])[:2]
    assert loc == 0.0
    return float(scale)


def _laplace_pair_epsilon(shift: float, scale: float) -> float:
    """Exact epsilon of Lap(0, b) against Lap(shift, b), on cells fine enough to reach it."""
    width = max(abs(shift), scale) / 8
    edges = np.arange(-40, 41) * width
    return audit.exact_epsilon(
        audit.binned_laplace_logpmf(0.0, scale, edges), audit.binned_laplace_logpmf(shift, scale, edges)
    )


# ---------------------------------------------------------------------------------------
# 1. Algorithm 5: the debiased count
# ---------------------------------------------------------------------------------------

DEBIAS = dict(C=2, epsilon=1.0, lam_max=3.0)


def _debiased(counts, eps, z=None):
    gen = audit.RecordingGenerator(0, replay=None if z is None else {"laplace": [z]})
    out = ct.debiased_count(list(counts), C=DEBIAS["C"], epsilon=eps, lam_max=DEBIAS["lam_max"], rng=gen)
    return out, _laplace_scale(gen)


def test_debiased_count_exact_audit_replacement():
    """Claim: epsilon-DP under replacement of one user, n known (the paper's model).

    The release is a function of the clipped sum plus Laplace noise. The audit (i) reads
    the Laplace scale from the mechanism's draw, (ii) checks with replayed noise that the
    output on D' equals the output on D with the noise shifted by the change of the
    clipped sum (so both output laws are images of two shifted Laplace laws under one
    map), and (iii) takes the exact epsilon of the worst shift over every replacement of
    one user in every dataset of 3 users with counts in 0..3. The weakened mechanism is
    the same call with the noise scale halved (epsilon doubled): caught."""
    C, eps = DEBIAS["C"], DEBIAS["epsilon"]
    worst = 0
    pair = None
    for D in itertools.combinations_with_replacement(range(4), 3):
        for i, v in itertools.product(range(3), range(4)):
            Dp = D[:i] + (v,) + D[i + 1 :]
            shift = abs(int(np.minimum(Dp, C).sum()) - int(np.minimum(D, C).sum()))
            if shift > worst:
                worst, pair = shift, (D, Dp)
    assert pair is not None
    D, Dp = pair
    s, sp = int(np.minimum(D, C).sum()), int(np.minimum(Dp, C).sum())
    for z in (-3.0, -0.4, 0.7, 2.5):  # the output on D' is the output on D with noise z + s' - s
        assert _debiased(Dp, eps, z)[0] == pytest.approx(_debiased(D, eps, z + sp - s)[0], rel=1e-12, abs=1e-12)
    _, scale = _debiased(D, eps)
    audited = _laplace_pair_epsilon(worst, scale)
    assert worst == C  # the clipped sum moves by at most C ...
    assert audited == pytest.approx(eps, rel=1e-9)  # ... so the claim is tight
    _, weak_scale = _debiased(D, 2 * eps)
    assert _laplace_pair_epsilon(worst, weak_scale) > 1.5 * eps


def test_debiased_count_is_not_private_for_add_remove():
    """Under add/remove neighbours (not the paper's model) the released estimate is not
    epsilon-DP for any epsilon: it is n h^{-1}(Pi(y)), and Pi caps y at h(lam_max), so
    the estimate has an atom at n * lam_max whose position depends on n. The audit
    computes the atom's mass on D = (2, 2, 2) with the Laplace law read from the
    mechanism: the output law of D puts that mass where the law of D + {0} puts none,
    so delta >= the mass at every epsilon. This is why the docstring states the claim
    for replacement neighbours with n known."""
    C, eps, lam_max = DEBIAS["C"], DEBIAS["epsilon"], DEBIAS["lam_max"]
    D = (2, 2, 2)
    top, scale = _debiased(D, eps, z=1e6)  # a huge noise value lands on the cap
    assert top == pytest.approx(len(D) * lam_max)
    top_added, _ = _debiased(D + (0,), eps, z=1e6)
    assert top_added == pytest.approx((len(D) + 1) * lam_max)
    for z in np.linspace(-50.0, 50.0, 201):  # D + {0} never outputs the cap of D
        assert _debiased(D + (0,), eps, z)[0] != pytest.approx(top, rel=1e-9)
    # P[y >= h(lam_max)] = P[Lap(scale) >= n h(lam_max) - S]
    cut = len(D) * ct.clipped_poisson_mean(lam_max, C) - sum(min(x, C) for x in D)
    atom = 0.5 * math.exp(-cut / scale) if cut >= 0 else 1 - 0.5 * math.exp(cut / scale)
    assert atom > 0.5


# ---------------------------------------------------------------------------------------
# 2. Private thresholds and quantiles
# ---------------------------------------------------------------------------------------

OP = dict(d=2, sigma=1.0, C_max=10.0, s=2.0, epsilon_prime=1.0)
OP_BASES = ([(2, 1), (1, 1), (3, 0), (0, 2)], [(1, 1), (1, 1), (1, 1), (1, 1)], [(6, 6), (0, 1), (2, 2), (4, 0)])


def _norms(hists):
    h = np.asarray(hists, dtype=float)
    return h.sum(1), np.linalg.norm(h, axis=1)


def test_output_perturbation_threshold_exact_audit():
    """Claim: Algorithm 2 is epsilon'-DP under replacement of one user.

    The release is C'(D) + Lap(b): with replayed noise 0 the mechanism returns exactly the
    regularised minimiser C' (computed with `regularized_threshold` at Algorithm 2's
    lambda), and the scale b is read from its draw. The exact epsilon of a pair is
    |C'(D) - C'(D')| / b; the audit takes the worst over replacing each user of three
    base datasets (n = 4, d = 2) by every histogram with entries in {0, 2, 4, 6}.
    The weakened mechanism calibrates the noise to a sensitivity miscounted by a factor
    16 (scale b/16); the paper's Delta is about 12 times the largest move found, so a
    factor 16 is caught."""
    n = 4
    lam = 2 * math.sqrt(2 * OP["s"]) / (OP["C_max"] * math.sqrt(n * OP["epsilon_prime"]))
    cands = [(a, b) for a in range(0, 7, 2) for b in range(0, 7, 2)]

    def c_prime(l1, l2):
        return ct.regularized_threshold(l1, l2, d=OP["d"], sigma=OP["sigma"], lam=lam, s=OP["s"])

    worst, scale = 0.0, None
    for base in OP_BASES:
        l1, l2 = _norms(base)
        gen = audit.RecordingGenerator(0, replay={"laplace": [0.0]})
        out = ct.output_perturbation_threshold(l1, l2, rng=gen, project=False, **OP)
        c0 = c_prime(l1, l2)
        assert out == pytest.approx(c0, rel=1e-12)  # the release is C' plus the noise
        scale = _laplace_scale(gen)
        for i, h in itertools.product(range(n), cands):
            a, b = l1.copy(), l2.copy()
            a[i], b[i] = _norms([h])[0][0], _norms([h])[1][0]
            worst = max(worst, abs(c_prime(a, b) - c0))
    assert scale is not None and worst > 0
    audited = _laplace_pair_epsilon(worst, scale)
    assert audited <= OP["epsilon_prime"]
    assert _laplace_pair_epsilon(worst, scale / 16) > OP["epsilon_prime"]


SGD_DELTA = 1e-3
# worst-case pair: user 0 has the largest capped ratio sqrt(s) and a norm above C_max (its
# gradient term is -sqrt(s) everywhere), or holds nothing (term 0 everywhere)
SGD_PAIR = (
    (np.array([40.0, 2, 2, 2]), np.array([20.0, 2, 2, 2])),
    (np.array([0.0, 2, 2, 2]), np.array([0.0, 2, 2, 2])),
)
SGD_THRESHOLDS = np.linspace(0.5, 9.5, 19)


def _sgd_samples(pair_index: int, epsilon_prime: float, trials: int, seed: int) -> np.ndarray:
    l1, l2 = SGD_PAIR[pair_index]
    return np.array(
        [
            ct.private_threshold_sgd(
                l1,
                l2,
                d=4,
                sigma=1.0,
                C_max=10.0,
                s=4.0,
                epsilon_prime=epsilon_prime,
                delta_prime=SGD_DELTA,
                rng=np.random.default_rng([seed, t]),
            )
            for t in range(trials)
        ]
    )


def test_private_threshold_sgd_monte_carlo_audit():
    """Claim: (epsilon', delta')-DP (Bassily et al. 2014, as used for Corollary 4.4).

    Monte Carlo on the worst-case pair (n = 4, T = n^2 = 16 steps): 2000 runs per
    dataset, threshold events {C > t} and {C <= t} for 19 fixed t, both directions,
    confidence 1 - 1e-6 (false-fail probability <= 1e-6). The weakened mechanism is the
    same call with epsilon' = 1000 (noise 1000 times smaller) while claiming 1: with
    1000 runs per dataset its lower bound exceeds 1."""
    eps = 1.0
    lb = audit.threshold_epsilon_lower_bound(
        _sgd_samples(0, eps, 2000, 1),
        _sgd_samples(1, eps, 2000, 2),
        SGD_THRESHOLDS,
        delta=SGD_DELTA,
        confidence=CONFIDENCE,
    )
    assert lb <= eps
    weak = audit.threshold_epsilon_lower_bound(
        _sgd_samples(0, 1000.0, 1000, 3),
        _sgd_samples(1, 1000.0, 1000, 4),
        SGD_THRESHOLDS,
        delta=SGD_DELTA,
        confidence=CONFIDENCE,
    )
    assert weak > eps


def test_private_quantile_gd_exact_audit():
    """Claim: (epsilon, delta)-DP under replacement (the T noisy counts compose).

    Each step releases a count of values below the current threshold plus N(0, sigma_b^2)
    noise, sigma_b read from the mechanism's draw. A count moves by at most 1 when one
    value is replaced (checked on every replacement of a small instance at every
    threshold); the worst pair (a value far below against far above every threshold the
    run can reach) moves every count by exactly 1, so the transcript is a Gaussian pair
    with mu = sqrt(T)/sigma_b and the exact delta at epsilon is the Gaussian hockey-stick.
    The weakened mechanism drops the sqrt(T) of composition from sigma_b: caught."""
    eps, delta, T = 1.0, 1e-5, 50
    x = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
    gen = audit.RecordingGenerator(0)
    ct.private_quantile_gd(x, rank=2, epsilon=eps, delta=delta, steps=T, rng=gen)
    (draw,) = gen.draws("normal")
    sigma_b, size = float(draw.args[1]), draw.kwargs["size"]
    assert draw.args[0] == 0.0 and size == T
    cuts = np.geomspace(0.1, 20.0, 200)
    for i, v in itertools.product(range(x.size), [0.05, 0.7, 3.0, 50.0]):
        y = x.copy()
        y[i] = v
        moved = np.abs((x[:, None] <= cuts).sum(0) - (y[:, None] <= cuts).sum(0))
        assert moved.max() <= 1
    mu = math.sqrt(T) / sigma_b
    assert audit.gaussian_hockey_stick(eps, mu) <= delta * (1 + 1e-9)
    assert audit.gaussian_epsilon(delta, mu) <= eps * (1 + 1e-9)
    sigma_weak = sigma_b / math.sqrt(T)  # a step of composition dropped
    assert audit.gaussian_hockey_stick(eps, math.sqrt(T) / sigma_weak) > delta
    assert audit.gaussian_epsilon(delta, math.sqrt(T) / sigma_weak) > eps


PQ_GRID = [1.0, 2.0, 3.0, 4.0]


def _quantile_law(values, rank: int, eps: float) -> np.ndarray:
    gen = audit.RecordingGenerator(0)
    ct.private_quantile(list(values), rank=rank, grid=PQ_GRID, epsilon=eps, rng=gen)
    (draw,) = gen.draws("choice")
    return np.log(draw.kwargs["p"])


def _worst_replacement(laws: dict, datasets, n: int, options) -> float:
    worst = 0.0
    for D in datasets:
        for i, v in itertools.product(range(n), options):
            Dp = tuple(sorted(D[:i] + D[i + 1 :] + (v,)))
            if Dp in laws:
                worst = max(worst, audit.exact_epsilon(laws[D], laws[Dp]))
    return worst


def test_private_quantile_exact_audit_over_all_neighbours():
    """Claim: epsilon-DP under replacement (exponential mechanism, sensitivity 1).

    The output law is the probability vector the mechanism hands to `choice`. The audit
    enumerates every dataset of 3 values on the grid {1, 2, 3, 4}, every replacement of
    one value and ranks 1..3, and takes the exact epsilon of the worst pair. The weakened
    mechanism miscounts the sensitivity as 1/2 (the same call at 2 epsilon): caught."""
    eps = 1.0
    datasets = list(itertools.combinations_with_replacement(PQ_GRID, 3))
    for rank in (1, 2, 3):
        laws = {D: _quantile_law(D, rank, eps) for D in datasets}
        assert _worst_replacement(laws, datasets, 3, PQ_GRID) <= eps * (1 + 1e-12)
    weak = {D: _quantile_law(D, 2, 2 * eps) for D in datasets}
    assert _worst_replacement(weak, datasets, 3, PQ_GRID) > eps


# ---------------------------------------------------------------------------------------
# 6. Algorithm 4: the threshold chosen by the exponential mechanism, worst-case neighbours
# ---------------------------------------------------------------------------------------

EM_HISTS = [(a, b) for a in range(4) for b in range(4) if a + b <= 3]
EM_GRID = [1.0, 2.0, 3.0]


def _em_law(D, epsilon_prime: float) -> np.ndarray:
    gen = audit.RecordingGenerator(0)
    ct.select_threshold_exponential(
        [list(h) for h in D], EM_GRID, epsilon=1.0, delta=0.1, epsilon_prime=epsilon_prime, C_max=3, rng=gen
    )
    (draw,) = gen.draws("choice")
    return np.log(draw.kwargs["p"])


def test_select_threshold_exponential_worst_case_neighbours():
    """Claim: epsilon'-DP under replacement of one user holding at most C_m items.

    Every dataset of 3 users over d = 2 items with at most C_m = 3 items each (219 with
    at least one item), every replacement of one user by any allowed histogram, the
    exact epsilon of the output law the mechanism hands to `choice`: the worst pair stays
    below epsilon'. Its value is far below (the sensitivity 5 C_m / 2 is conservative),
    so the weakened mechanism must be far weaker to be caught: the same call at
    epsilon' = 20 while claiming 1 (sensitivity miscounted by a factor 20) is caught."""
    eps = 1.0
    datasets = [D for D in itertools.combinations_with_replacement(EM_HISTS, 3) if sum(map(sum, D)) > 0]
    honest = {D: _em_law(D, eps) for D in datasets}
    worst = _worst_replacement(honest, datasets, 3, EM_HISTS)
    assert 0 < worst <= eps
    weak = {D: _em_law(D, 20 * eps) for D in datasets}
    assert _worst_replacement(weak, datasets, 3, EM_HISTS) > eps


# ---------------------------------------------------------------------------------------
# 3. TrieHH++ and the one-shot heavy hitters
# ---------------------------------------------------------------------------------------


def _level_law(k: int, p: float, tau: int, kmax: int) -> np.ndarray:
    """Law of one sample-and-threshold count of k clients: 'suppressed' or v in tau..kmax."""
    v = np.arange(tau, kmax + 1)
    return np.concatenate([[stats.binom.logcdf(tau - 1, k, p)], stats.binom.logpmf(v, k, p)])


def _trie_worst(p: float, tau: int, levels: int, eps: float, kmax: int, step: int) -> float:
    """Largest exact delta at eps of `levels` independent levels, over the counts
    k_1 >= ... >= k_L (on a grid of the given step, refined around the single-level worst
    count) of the other clients sharing the added
    client's prefixes (add/remove, both directions)."""
    worst, grid = 0.0, set(range(0, kmax + 1, step))
    if levels > 1:  # add the neighbourhood of the single-level worst counts to the grid
        single = [
            audit.hockey_stick(_level_law(k, p, tau, k + 1), _level_law(k + 1, p, tau, k + 1), eps)
            for k in range(kmax + 1)
        ]
        peak = int(np.argmax(single))
        grid |= set(range(max(peak - 3, 0), min(peak + 4, kmax + 1)))
    for ks in itertools.combinations_with_replacement(sorted(grid), levels):
        lp = audit.product_logpmf(*[_level_law(k, p, tau, k + 1) for k in ks])
        lq = audit.product_logpmf(*[_level_law(k + 1, p, tau, k + 1) for k in ks])
        worst = max(worst, audit.hockey_stick(lp, lq, eps))
    return worst


def _full_budget_rate(eps: float, delta: float, tau: int, kmax: int) -> float:
    """The largest sampling rate at which one level with threshold tau is (eps, delta)-DP
    (bisection on the exact single-level audit): a level that spends the whole budget."""
    lo, hi = 1e-4, 0.999
    for _ in range(20):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _trie_worst(mid, tau, 1, eps, kmax, 1) <= delta else (lo, mid)
    return lo


def test_sample_threshold_law_matches_the_mechanisms():
    """The exact laws above model the code: with replayed uniforms, TrieHH++ (unrestricted)
    and the one-shot histogram publish exactly the counts of uniforms below p that reach
    tau, level by level."""
    g = np.random.default_rng(5)
    codes = np.array([5] * 30 + [6] * 7 + [9] * 3)
    p, tau = 0.4, 4
    u = [g.random(codes.size) for _ in range(2)]
    trie = hh.triehh_plus_plus(
        codes,
        branching=4,
        levels=2,
        sampling_rate=p,
        tau=tau,
        restrict=False,
        rng=audit.RecordingGenerator(0, replay={"random": u}),
    )
    for level, ui in zip((1, 2), u, strict=True):
        pref = codes // 4 ** (2 - level)
        want = {c: int(np.sum((pref == c) & (ui < p))) for c in np.unique(pref)}
        want = {c: k for c, k in want.items() if k >= tau}
        got = dict(zip(trie[level - 1][0].tolist(), trie[level - 1][1].tolist(), strict=True))
        assert got == want
    nodes, counts = hh.one_shot_heavy_hitters(
        codes, sampling_rate=p, tau=tau, rng=audit.RecordingGenerator(0, replay={"random": [u[0]]})
    )
    want = {c: int(np.sum((codes == c) & (u[0] < p))) for c in np.unique(codes)}
    assert dict(zip(nodes.tolist(), counts.tolist(), strict=True)) == {c: k for c, k in want.items() if k >= tau}


def test_triehh_and_one_shot_exact_audit():
    """Claim (heavy-hitters chapter): each of the L levels runs with (epsilon/L, delta/L)
    chosen by `choose_parameters`, so TrieHH++ is (epsilon, delta)-DP by basic composition
    under add/remove; the one-shot histogram with (epsilon, delta) is (epsilon, delta)-DP.

    Exact audit: the levels are independent (fresh samples) and restricting votes is
    post-processing, so the output differs between D and D + {client} only in the counts
    of the client's L prefixes; the audit takes the exact delta at epsilon of the product
    of the L level laws, over the other clients' counts k_1 >= k_2 on a grid of step 6 up
    to 120, refined around the single-level worst count. Weakened
    controls: TrieHH++ whose every level spends the whole (epsilon, delta) (sampling rate
    raised until one level is exactly (epsilon, delta)-DP: the composition step dropped),
    and the one-shot histogram with tau lowered by 2."""
    eps, delta, L = 1.0, 1e-3, 2
    per = st.choose_parameters(eps / L, delta / L, method="exact")
    assert _trie_worst(per["sampling_rate"], per["tau"], L, eps, 120, 6) <= delta
    p_full = _full_budget_rate(eps, delta, per["tau"], 120)
    assert _trie_worst(p_full, per["tau"], L, eps, 120, 6) > delta
    one = st.choose_parameters(eps, delta, method="exact")
    assert _trie_worst(one["sampling_rate"], one["tau"], 1, eps, 120, 1) <= delta
    assert _trie_worst(one["sampling_rate"], one["tau"] - 2, 1, eps, 120, 1) > delta


# ---------------------------------------------------------------------------------------
# 4. The count sketch's noisy release
# ---------------------------------------------------------------------------------------


def test_dp_sketch_release_exact_audit():
    """Claim: with sigma = dp_sketch_sigma(epsilon, delta, rows, n) the hybrid sketch release
    is (epsilon, delta)-DP for adding or removing one client of one round (n public).

    The audit checks that the mechanism's estimate is the decoding of the round sketches
    (rebuilt with the public `sketch_vector` from the hashes its seed draws) plus
    sigma times the next standard normal draws: the released object is a Gaussian
    mechanism on the sketches. It then takes the largest l2 move of the sketches over
    every item added to every round, for 20 hash draws (d = 6, width 3, 4 rows, 2
    rounds), and the exact Gaussian delta at that move. Weakened controls: sigma
    calibrated for sensitivity 1/n (the rows forgotten), and a client in both rounds
    with sigma for one participation (a step of composition dropped)."""
    eps, delta, n, d, W, L, M = 1.0, 1e-5, 10, 6, 3, 4, 2
    sigma = sk.dp_sketch_sigma(eps, delta, rows=L, n=n)
    F = np.tile(np.arange(1.0, d + 1) / np.arange(1.0, d + 1).sum(), (M, 1))
    g = np.random.default_rng(7)
    h = sk.draw_sketch_hashes(width=W, rows=L, rounds=M, design="hybrid", rng=g)
    S = np.stack([sk.sketch_vector(F[m], h, round_index=m) for m in range(M)])
    want = sk.decode_sketches(S + sigma * g.standard_normal(S.shape), h, d=d)
    got = sk.dp_hybrid_sketch_estimate(F, width=W, rows=L, sigma=sigma, rng=7)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    worst, worst_both = 0.0, 0.0
    for seed in range(20):
        h = sk.draw_sketch_hashes(width=W, rows=L, rounds=M, design="hybrid", rng=seed)
        for item in range(d):
            e = np.zeros(d)
            e[item] = 1.0 / n
            moves = [np.linalg.norm(sk.sketch_vector(e, h, round_index=m)) for m in range(M)]
            worst = max(worst, *moves)
            worst_both = max(worst_both, math.hypot(*moves))
    assert audit.gaussian_hockey_stick(eps, worst / sigma) <= delta * (1 + 1e-9)
    assert audit.gaussian_epsilon(delta, worst / sigma) <= eps * (1 + 1e-9)
    weak = accounting.gaussian_sigma(eps, delta, sensitivity=1.0 / n)
    assert audit.gaussian_epsilon(delta, worst / weak) > eps
    assert audit.gaussian_epsilon(delta, worst_both / sigma) > eps
    sigma2 = sk.dp_sketch_sigma(eps, delta, rows=L, n=n, participations=2)
    assert audit.gaussian_epsilon(delta, worst_both / sigma2) <= eps * (1 + 1e-9)


# ---------------------------------------------------------------------------------------
# 5. TFFE and MFFE end to end
# ---------------------------------------------------------------------------------------

PROTO_U = tight_frame(2, 4, rng=0)
# worst-case pair: user 0's whole mass moves from one item to the other (replacement)
PROTO_X = (np.array([[4.0, 0], [1, 1], [1, 1], [1, 1]]), np.array([[0.0, 4], [1, 1], [1, 1], [1, 1]]))
PROTO_M = 64
PROTO_THRESHOLDS = np.linspace(-2.0, 2.0, 21)


def _tffe_claim(theta: float, delta: float) -> float:
    return pr.tffe_epsilon(delta, n=4, D=4, b=2, theta=theta, m=PROTO_M, theta_q=theta, m_q=PROTO_M)


def _mffe_claim(theta: float, delta: float) -> float:
    o = accounting.DEFAULT_ORDERS
    curve = pr.mffe_rdp(o, N=2, D=4, theta=theta, m=PROTO_M, theta_q=theta, m_q=PROTO_M)
    return accounting.rdp_to_dp(o, curve, delta)[0]


def _protocol_samples(kind: str, which: int, theta: float, trials: int, seed: int) -> np.ndarray:
    x = PROTO_X[which]
    out = np.empty(trials)
    if kind == "tffe":
        y = kashin_representation(x, PROTO_U, eta=0.7, nu=0.3, iterations=20)
        for t in range(trials):
            r = pr.tffe(
                x,
                PROTO_U,
                B=8.0,
                b=2,
                theta=theta,
                m=PROTO_M,
                theta_q=theta,
                m_q=PROTO_M,
                y=y,
                rng=np.random.default_rng([seed, t]),
            )
            out[t] = r.x_hat[0] - r.x_hat[1]
    else:
        for t in range(trials):
            rm = pr.mffe(
                x,
                PROTO_U,
                rounds=2,
                theta=theta,
                m=PROTO_M,
                theta_q=theta,
                m_q=PROTO_M,
                rng=np.random.default_rng([seed, t]),
            )
            out[t] = rm.x_hat[0] - rm.x_hat[1]
    return out


@pytest.mark.parametrize("kind", ["tffe", "mffe"])
def test_protocols_monte_carlo_audit(kind):
    """Claim: TFFE is (epsilon, delta)-DP with epsilon = tffe_epsilon (Prop. 4: the RDP of
    the quantile and frequency steps add); MFFE with the epsilon of mffe_rdp (one round's
    frequency step plus one indicator coordinate), both under replacement of one user.

    Monte Carlo end to end on a worst-case pair (n = 4 users, d = 2, D = 4, m = m' = 64,
    two rounds for MFFE): the statistic x_hat[0] - x_hat[1], threshold events at 21
    fixed points, both directions, confidence 1 - 1e-6 (false-fail probability
    <= 1e-6). Honest: theta = theta' = 0.01 (claimed epsilon about 1.5), 300 runs per
    dataset. Weakened: the protocol runs with theta = theta' = 0.25 while claiming the
    epsilon of theta = 0.003 (the noise parameter miscounted), 600 runs per dataset."""
    delta = 1e-3
    claim = _tffe_claim if kind == "tffe" else _mffe_claim
    honest = audit.threshold_epsilon_lower_bound(
        _protocol_samples(kind, 0, 0.01, 300, 1),
        _protocol_samples(kind, 1, 0.01, 300, 2),
        PROTO_THRESHOLDS,
        delta=delta,
        confidence=CONFIDENCE,
    )
    assert honest <= claim(0.01, delta)
    weak = audit.threshold_epsilon_lower_bound(
        _protocol_samples(kind, 0, 0.25, 600, 3),
        _protocol_samples(kind, 1, 0.25, 600, 4),
        PROTO_THRESHOLDS,
        delta=delta,
        confidence=CONFIDENCE,
    )
    assert weak > claim(0.003, delta)


# ---------------------------------------------------------------------------------------
# the audit tools themselves
# ---------------------------------------------------------------------------------------


def test_exact_epsilon_inverts_the_hockey_stick():
    g = np.random.default_rng(0)
    for _ in range(100):
        k = int(g.integers(2, 30))
        p, q = g.dirichlet(np.full(k, 0.5)), g.dirichlet(np.full(k, 0.5))
        lp, lq = np.log(p), np.log(q)
        delta = float(g.choice([1e-3, 0.05, 0.3]))
        e = audit.exact_epsilon(lp, lq, delta)
        assert audit.hockey_stick(lp, lq, e) <= delta * (1 + 1e-9)
        if e > 1e-6:
            assert audit.hockey_stick(lp, lq, e - 1e-6) > delta
        assert max(
            accounting.hockey_stick_divergence(lp, lq, e), accounting.hockey_stick_divergence(lq, lp, e)
        ) == pytest.approx(audit.hockey_stick(lp, lq, e), rel=1e-9, abs=1e-15)


def test_exact_epsilon_with_many_ties_in_the_privacy_loss():
    """Binned Laplace counts: thousands of outcomes share the largest loss 2C/b up to
    rounding, and grouping them must not produce a NaN that misdirects the search. The
    pair moved by a public constant (1000) is the same pair and must give the same eps,
    and eps must sit where the hockey stick crosses delta (counterexample: 1.656 had been
    returned for 1000, where delta(1.656) = 0.084)."""
    C, b, delta = 8.0, 8.0, 1e-4
    results = []
    for base in (0.0, 1000.0):
        edges = np.unique(np.r_[np.linspace(-10 * b, C + 10 * b, 161), 0.0, C]) + base
        low, high = (audit.binned_laplace_logpmf(loc, b, edges) for loc in (base, base + C))
        P, Q = audit.product_logpmf(high, low), audit.product_logpmf(low, high)
        e = audit.exact_epsilon(P, Q, delta)
        assert audit.hockey_stick(P, Q, e) <= delta * (1 + 1e-9)
        assert audit.hockey_stick(P, Q, e - 1e-6) > delta
        results.append(e)
    assert results[0] == pytest.approx(results[1], rel=1e-9)
    assert 2 * C / b - 0.01 < results[0] < 2 * C / b  # just below the largest loss, 2C/b


def test_gaussian_tools_match_the_accountant():
    for mu in (0.1, 1.0, 3.0):
        for eps in (0.0, 0.5, 2.0):
            assert audit.gaussian_hockey_stick(eps, mu) == pytest.approx(
                accounting.gaussian_delta(eps, sensitivity=mu, sigma=1.0), rel=1e-9, abs=1e-300
            )
    sigma = accounting.gaussian_sigma(1.0, 1e-5, sensitivity=1.0)
    assert audit.gaussian_epsilon(1e-5, 1 / sigma) == pytest.approx(1.0, rel=1e-7)


def test_monte_carlo_bound_covers_the_truth():
    """200 audits of a Laplace pair of true epsilon 1 at confidence 0.9: the bound
    exceeds 1 in at most 10% of them on average; the binomial tail allows 35 of 200
    (probability < 1e-6 for a correct bound). Most audits see a bound above 0.5."""
    g = np.random.default_rng(1)
    over = near = 0
    for _ in range(200):
        x, y = g.laplace(0.0, 1.0, 3000), g.laplace(1.0, 1.0, 3000)
        lb = audit.threshold_epsilon_lower_bound(x, y, [-1.0, 0.0, 1.0, 2.0], delta=0.0, confidence=0.9)
        over += lb > 1.0
        near += lb > 0.5
    assert over <= 35 and near >= 150


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: audit.hockey_stick([0.0], [0.0], -1.0), "epsilon"),
        (lambda: audit.exact_epsilon([0.0], [0.0], 1.0), "delta"),
        (lambda: audit.exact_epsilon(np.log([0.5, 0.6]), np.log([0.5, 0.5])), "log_p"),
        (lambda: audit.exact_epsilon([0.0], np.log([0.5, 0.5])), "log_q"),
        (lambda: audit.clopper_pearson(5, 3, 0.9), "successes"),
        (lambda: audit.clopper_pearson(1, 3, 1.0), "confidence"),
        (lambda: audit.binned_laplace_logpmf(0.0, 0.0, [1.0]), "scale"),
        (lambda: audit.binned_laplace_logpmf(0.0, 1.0, [1.0, 0.0]), "edges"),
        (lambda: audit.gaussian_epsilon(0.0, 1.0), "delta"),
        (lambda: audit.threshold_epsilon_lower_bound([1.0], [np.nan], [0.0], delta=0.0, confidence=0.9), "samples_q"),
        (lambda: audit.RecordingGenerator(-1), "seed"),
        (lambda: audit.RecordingGenerator(0, replay={"gamma": [1.0]}), "replay"),
    ],
)
def test_bad_input_is_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()
