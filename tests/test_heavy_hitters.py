"""Tests of fedfreq.heavy_hitters (Bharadwaj & Cormode 2022, Section 4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from fedfreq import heavy_hitters as hh
from fedfreq.accounting import hockey_stick_divergence

HYP = settings(max_examples=30, deadline=None, database=None)


def test_encode_words_prefixes():
    codes = hh.encode_words(["the", "then", "t", "zz'z"], length=4)
    assert codes[0] // 27 == codes[1] // 27  # same first three letters
    assert codes[2] // 27**3 == codes[0] // 27**3
    assert codes[3] == 26 * 27**3 + 26 * 27**2 + 26 * 27  # apostrophe dropped


def test_value_to_leaf_paper_example():
    # beta = 4: 1/3 lies in [1/4, 2/4) at level 1 and in [5/16, 6/16) at level 2
    leaf = hh.value_to_leaf([1 / 3], branching=4, levels=2)[0]
    assert leaf // 4 == 1 and leaf == 5
    assert hh.value_to_leaf([1.0], branching=2, levels=3)[0] == 7


def test_range_decomposition_paper_example_and_bound():
    # [0, 0.7] with beta = 4, two levels: [0,1/4], [1/4,2/4], then [8/16,9/16], [9/16,10/16], [10/16,11/16]
    assert hh.range_decomposition(11, branching=4, levels=2) == [(1, 0), (1, 1), (2, 8), (2, 9), (2, 10)]
    for b, L in [(2, 5), (3, 3), (4, 3)]:
        for r in range(b**L):
            parts = hh.range_decomposition(r, branching=b, levels=L)
            assert len(parts) <= L * (b - 1)
            covered = []
            for level, node in parts:
                w = b ** (L - level)
                covered += list(range(node * w, (node + 1) * w))
            assert sorted(covered) == list(range(r))


def test_range_counts_exact_without_threshold():
    rng = np.random.default_rng(0)
    b, L = 3, 4
    leaves = rng.integers(0, b**L, size=5000)
    # sampling rate near 1 and tau = 1: every level publishes the exact prefix counts of its sample
    trie = hh.triehh_plus_plus(leaves, branching=b, levels=L, sampling_rate=1 - 1e-12, tau=1, restrict=False, rng=1)
    r = np.arange(b**L + 1)
    want = np.array([np.count_nonzero(leaves < k) for k in r])
    assert np.array_equal(hh.range_counts(trie, r, branching=b, levels=L), want)


def test_pruning_error_bound_deterministic():
    rng = np.random.default_rng(2)
    b, L, tau = 2, 8, 10
    leaves = np.minimum((rng.beta(2, 5, size=20000) * b**L).astype(int), b**L - 1)
    raw = hh.triehh_plus_plus(leaves, branching=b, levels=L, sampling_rate=0.2, tau=1, restrict=False, rng=3)
    pub = hh.triehh_plus_plus(leaves, branching=b, levels=L, sampling_rate=0.2, tau=tau, restrict=False, rng=3)
    r = np.arange(b**L + 1)
    gap = hh.range_counts(raw, r, branching=b, levels=L) - hh.range_counts(pub, r, branching=b, levels=L)
    assert np.all(gap >= 0) and gap.max() <= L * (b - 1) * (tau - 1)


def test_restricted_trie_only_extends_published_prefixes():
    rng = np.random.default_rng(4)
    codes = rng.zipf(1.5, size=20000) % 27**3
    restricted = hh.triehh_plus_plus(codes, branching=27, levels=3, sampling_rate=0.3, tau=15, restrict=True, rng=5)
    for level in range(1, 3):
        assert restricted[level][0].size > 0
        assert np.all(np.isin(restricted[level][0] // 27, restricted[level - 1][0]))


def test_binary_search_quantile_accuracy():
    rng = np.random.default_rng(6)
    v = rng.random(200_000)
    m = 0.1 * v.size
    errs = [
        abs(
            hh.binary_search_quantile(v, 0.3, steps=10, sampling_rate=0.1, tau=20, rng=np.random.default_rng([7, t]))
            - 0.3
        )
        for t in range(30)
    ]
    # uniform data: F(f) = f; error <= 2^-10 + a few sampling standard errors
    assert max(errs) <= 2**-10 + 5 * math.sqrt(0.21 / m)


def test_trie_quantile():
    rng = np.random.default_rng(8)
    v = rng.random(100_000)
    b, L = 2, 10
    trie = hh.triehh_plus_plus(
        hh.value_to_leaf(v, branching=b, levels=L),
        branching=b,
        levels=L,
        sampling_rate=0.2,
        tau=10,
        restrict=False,
        rng=9,
    )
    q = hh.trie_quantile(trie, 0.5, branching=b, levels=L, total=0.2 * v.size)
    assert abs(q - 0.5) < L * (b - 1) * 10 / (0.2 * v.size) + 0.02


def test_one_shot():
    nodes, counts = hh.one_shot_heavy_hitters(np.repeat([1, 2, 3], [1000, 50, 2]), sampling_rate=0.5, tau=10, rng=0)
    assert nodes.tolist() == [1, 2] and counts[0] > 400


def test_optimal_composition_matches_kov_formula_and_brute_force():
    eps, delta, L = 0.3, 1e-3, 5
    e = math.exp(eps)
    for i in range(L // 2 + 1):
        tot = (L - 2 * i) * eps
        d_i = (
            sum(math.comb(L, k) * (math.exp((L - k) * eps) - math.exp((L - 2 * i + k) * eps)) for k in range(i))
            / (1 + e) ** L
        )
        want = 1 - (1 - delta) ** L * (1 - d_i)
        assert hh.optimal_composition_delta(eps, delta, L, tot) == pytest.approx(want, rel=1e-10, abs=1e-15)
    # brute force: L-fold product of the canonical pair
    P = np.array([delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0.0])
    Q = P[::-1].copy()
    L2 = 3
    PP = np.array([np.prod(P[list(t)]) for t in itertools.product(range(4), repeat=L2)])
    QQ = np.array([np.prod(Q[list(t)]) for t in itertools.product(range(4), repeat=L2)])
    with np.errstate(divide="ignore"):
        bf = hockey_stick_divergence(np.log(PP), np.log(QQ), 0.5)
    assert hh.optimal_composition_delta(eps, delta, L2, 0.5) == pytest.approx(bf, rel=1e-10)


def test_paper_advanced_composition_counterexample_and_dwork_roth_valid():
    eps, delta, L = 0.05, 1e-9, 100
    e_paper, d_paper = hh.composition_advanced_paper(eps, delta, L)
    assert hh.optimal_composition_delta(eps, delta, L, e_paper) > d_paper  # the printed bound fails
    e_dr, d_dr = hh.composition_advanced(eps, delta, L, L * delta)
    assert hh.optimal_composition_delta(eps, delta, L, e_dr) <= d_dr
    e_b, d_b = hh.composition_basic(eps, delta, L)
    assert hh.optimal_composition_delta(eps, delta, L, e_b) <= d_b + 1e-15


@HYP
@given(b=st_.integers(max_value=1))
def test_bad_branching(b):
    with pytest.raises(ValueError, match="branching"):
        hh.value_to_leaf([0.5], branching=b, levels=2)


@HYP
@given(phi=st_.one_of(st_.floats(max_value=0.0), st_.floats(min_value=1.0)))
def test_bad_phi(phi):
    with pytest.raises(ValueError, match="phi"):
        hh.binary_search_quantile([0.2, 0.4], phi, steps=3, sampling_rate=0.5, tau=1)


def test_other_validation():
    with pytest.raises(ValueError, match="codes"):
        hh.triehh_plus_plus([16], branching=4, levels=2, sampling_rate=0.5, tau=1)
    with pytest.raises(ValueError, match="values"):
        hh.value_to_leaf([1.5], branching=2, levels=2)
    with pytest.raises(ValueError, match="tau"):
        hh.one_shot_heavy_hitters([1], sampling_rate=0.5, tau=0)
    with pytest.raises(ValueError, match="trie"):
        hh.range_counts([], [1], branching=2, levels=1)
