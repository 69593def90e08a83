"""Tests for the secure-summation simulator :mod:`fedfreq.secagg`."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fedfreq.secagg import (
    MAX_MODULUS,
    SecureSumResult,
    bits_per_entry,
    can_wrap,
    mask_graph,
    mask_reports,
    modulus_for,
    modulus_for_signed,
    pairwise_masks,
    secure_sum,
    secure_sum_with_check,
    to_signed,
)

# chi-square tests below use a fixed seed and pass when p > P_MIN; with a correct
# (uniform) sampler a p-value is itself uniform, so a fresh seed fails with prob. 1e-3
P_MIN = 1e-3


def exact_colsum_mod(x: np.ndarray, modulus: int) -> list[int]:
    """Column sums in Python integers (no overflow possible), reduced mod M."""
    return [sum(int(v) for v in col) % modulus for col in x.T]


# ---------------------------------------------------------------------------
# masks cancel
# ---------------------------------------------------------------------------

CASES = [
    (n, dim, modulus, k)
    for n in (1, 2, 3, 4, 5, 8, 13)
    for dim in (1, 4)
    for modulus in (2, 3, 16, 1_000_003, 2**31, 2**62 - 1, MAX_MODULUS)
    for k in (1, 2, 3, None)
]


@pytest.mark.parametrize("n, dim, modulus, k", CASES)
def test_masks_cancel_and_lie_in_range(n, dim, modulus, k):
    r = pairwise_masks(n, dim, modulus, rng=12345, neighbours=k)
    assert r.shape == (n, dim) and r.dtype == np.int64
    assert r.min() >= 0 and r.max() < modulus
    assert exact_colsum_mod(r, modulus) == [0] * dim


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 60),
    dim=st.integers(1, 5),
    modulus=st.integers(2, MAX_MODULUS),
    k=st.one_of(st.none(), st.integers(1, 40)),
    seed=st.integers(0, 2**32),
)
def test_masks_cancel_property(n, dim, modulus, k, seed):
    r = pairwise_masks(n, dim, modulus, rng=seed, neighbours=k)
    assert exact_colsum_mod(r, modulus) == [0] * dim


def test_single_client_has_no_mask():
    # With n = 1 there is no partner to share a mask with: the mask is zero and the
    # server receives the value in the clear (which the sum would reveal anyway).
    assert mask_graph(1, 3).shape == (0, 2)
    assert np.array_equal(pairwise_masks(1, 4, 97, rng=0), np.zeros((1, 4), dtype=np.int64))
    assert mask_reports([[5, 6, 7]], modulus=97, rng=0).tolist() == [[5, 6, 7]]


def test_two_clients_masks_are_negatives():
    # n = 2: a single edge {0, 1}; client 0 adds s, client 1 subtracts it
    modulus = 101
    r = pairwise_masks(2, 1000, modulus, rng=3, neighbours=5)
    assert mask_graph(2, 5).tolist() == [[0, 1]]
    assert np.array_equal((r[0] + r[1]) % modulus, np.zeros(1000, dtype=np.int64))
    assert np.any(r[0] != 0)


def _brute_edges(n: int, k: int | None) -> set[frozenset]:
    kk = n if k is None else k
    return {
        frozenset((i, (i + s * o) % n))
        for i in range(n)
        for o in range(1, kk + 1)
        for s in (1, -1)
        if (i + s * o) % n != i
    }


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 10, 11])
@pytest.mark.parametrize("k", [1, 2, 3, 5, None])
def test_mask_graph_is_the_ring_graph(n, k):
    edges = mask_graph(n, k)
    pairs = [frozenset(map(int, e)) for e in edges]
    assert all(len(p) == 2 for p in pairs)  # no self-loops
    assert len(pairs) == len(set(pairs))  # each pair once
    assert set(pairs) == _brute_edges(n, k)
    degree = np.bincount(edges.ravel(), minlength=n) if n > 1 else np.zeros(1)
    expected = n - 1 if k is None else min(2 * k, n - 1)
    assert np.all(degree == expected)


@pytest.mark.parametrize("n, k", [(2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (7, 1), (9, 4)])
def test_masks_follow_the_edge_rule(n, k):
    """Rebuild the masks edge by edge (smaller index adds, larger subtracts).

    The reference consumes the generator in the same order as the package (one
    block of shared masks per ring offset), so the two must agree exactly.
    """
    modulus, dim = 1009, 3
    got = pairwise_masks(n, dim, modulus, rng=77, neighbours=k)
    gen = np.random.default_rng(77)
    want = np.zeros((n, dim), dtype=np.int64)
    for o in range(1, min(k, n // 2) + 1):
        block = mask_graph(n, k)
        block = block[(block[:, 1] - block[:, 0]) % n == o]
        shared = gen.integers(0, modulus, size=(len(block), dim), dtype=np.int64)
        for (u, v), s in zip(block, shared, strict=False):
            lo, hi = min(u, v), max(u, v)
            want[lo] = (want[lo] + s) % modulus
            want[hi] = (want[hi] - s) % modulus
    assert np.array_equal(got, want)


# ---------------------------------------------------------------------------
# the server's view of a single report is uniform
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n, k", [(2, 1), (3, 1), (6, 1), (6, 2), (5, None)])
def test_single_masked_report_is_uniform(n, k):
    # Every client sends the same fixed vector; each of the `dim` columns is an
    # independent run of the protocol. Pearson chi-square test of uniformity of
    # client 0's (and the last client's) report over Z_7, 35_000 runs
    # (5_000 expected per cell, 6 degrees of freedom).
    modulus, runs = 7, 35_000
    values = np.full((n, runs), 5, dtype=np.int64)
    y = mask_reports(values, modulus=modulus, rng=2024 + n, neighbours=k)
    for client in (0, n - 1):
        counts = np.bincount(y[client], minlength=modulus)
        p = stats.chisquare(counts).pvalue
        assert p > P_MIN, (client, counts, p)


def test_two_reports_jointly_uniform():
    # n = 3: any n - 1 = 2 reports are jointly uniform on Z_M^2 (the third is
    # pinned by the sum). Chi-square over the 7 x 7 = 49 cells, 49_000 runs
    # (1_000 expected per cell, 48 degrees of freedom).
    modulus, runs = 7, 49_000
    values = np.array([[1], [4], [6]]) * np.ones((1, runs), dtype=np.int64)
    y = mask_reports(values, modulus=modulus, rng=99)
    cells = np.bincount(y[0] * modulus + y[1], minlength=modulus**2)
    assert stats.chisquare(cells).pvalue > P_MIN
    # the third report is determined: Y_2 = (sum - Y_0 - Y_1) mod M
    assert np.all((y[0] + y[1] + y[2]) % modulus == (1 + 4 + 6) % modulus)


def test_chi_square_has_power_against_an_unmasked_report():
    # control: with n = 1 the report is the value itself, and the same test rejects
    modulus, runs = 7, 35_000
    y = mask_reports(np.full((1, runs), 5), modulus=modulus, rng=0)
    counts = np.bincount(y[0], minlength=modulus)
    assert stats.chisquare(counts).pvalue < 1e-100


# ---------------------------------------------------------------------------
# the sum
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 10, 257])
@pytest.mark.parametrize("k", [1, 4, None])
def test_secure_sum_equals_plain_sum_mod_m(n, k):
    rng = np.random.default_rng(n)
    modulus = 97  # small: wraps happen, so allow them and compare modular sums
    z = rng.integers(0, modulus, size=(n, 6))
    got = secure_sum(z, modulus=modulus, rng=5, neighbours=k, allow_wrap=True)
    assert got.tolist() == exact_colsum_mod(z, modulus)
    # the reports the server sees are not the values (masking happened) when n >= 2
    if n >= 2:
        assert not np.array_equal(mask_reports(z, modulus=modulus, rng=5, neighbours=k), z)


def test_secure_sum_exact_with_safe_modulus():
    rng = np.random.default_rng(1)
    n, m = 1000, 30
    z = rng.binomial(m, 0.7, size=(n, 8))
    modulus = modulus_for(n, m)
    assert secure_sum(z, modulus=modulus, max_entry=m, rng=2).tolist() == z.sum(axis=0).tolist()


def test_one_dimensional_values_are_n_clients():
    z = [3, 1, 4, 1, 5]
    out = secure_sum(z, modulus=modulus_for(5, 5), max_entry=5, rng=0)
    assert out.shape == (1,) and out.tolist() == [sum(z)]


def test_large_modulus_no_overflow():
    # residues close to 2**62: int64 partial sums would overflow without chunking
    modulus = MAX_MODULUS
    rng = np.random.default_rng(8)
    z = rng.integers(modulus - 1000, modulus, size=(9, 3), dtype=np.int64)
    res = secure_sum_with_check(z, modulus=modulus, rng=1, allow_wrap=True)
    true = [sum(int(v) for v in col) for col in z.T]
    assert res.modular_sum.tolist() == [t % modulus for t in true]
    assert [int(t) for t in res.true_sum] == true
    assert res.wrapped.tolist() == [t >= modulus for t in true]


def test_same_seed_same_reports():
    z = np.arange(12).reshape(4, 3)
    a = mask_reports(z, modulus=50, rng=11)
    b = mask_reports(z, modulus=50, rng=np.random.default_rng(11))
    c = mask_reports(z, modulus=50, rng=12)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ---------------------------------------------------------------------------
# wrap-around
# ---------------------------------------------------------------------------


def test_paper_modulus_nm_wraps_when_everyone_sends_m():
    # the OcPBM paper chooses M = n m; the all-m input sums to n m, which is 0 mod n m
    n, m = 5, 3
    z = np.full((n, 2), m)
    with pytest.raises(ValueError, match=r"modulus=15.*minimum safe modulus is 16"):
        secure_sum(z, modulus=n * m, max_entry=m, rng=0)
    with pytest.raises(ValueError, match="modulus"):
        secure_sum_with_check(z, modulus=n * m, max_entry=m, rng=0)
    assert secure_sum(z, modulus=n * m, max_entry=m, rng=0, allow_wrap=True).tolist() == [0, 0]
    res = secure_sum_with_check(z, modulus=n * m, max_entry=m, rng=0, allow_wrap=True)
    assert isinstance(res, SecureSumResult)
    assert res.modular_sum.tolist() == [0, 0]
    assert res.true_sum.tolist() == [n * m, n * m]
    assert res.wrapped.tolist() == [True, True] and res.any_wrapped
    assert res.min_safe_modulus == n * m + 1
    # one more residue fixes it
    fixed = secure_sum_with_check(z, modulus=n * m + 1, max_entry=m, rng=0)
    assert fixed.modular_sum.tolist() == [n * m, n * m] and not fixed.any_wrapped


def test_default_bound_is_modulus_minus_one():
    # nothing declared: entries may be anything in Z_M, so two clients can wrap
    with pytest.raises(ValueError, match="modulus"):
        secure_sum([[1], [2]], modulus=10)
    # a single client can never wrap: (M - 1) < M
    assert secure_sum([[9]], modulus=10).tolist() == [9]


def test_values_above_declared_bound_rejected():
    with pytest.raises(ValueError, match="values"):
        secure_sum([[1], [4]], modulus=100, max_entry=3)


def test_no_wrap_is_flagged_when_sum_below_modulus():
    z = np.array([[1, 0], [2, 0], [3, 0]])
    res = secure_sum_with_check(z, modulus=10, max_entry=9, allow_wrap=True, rng=4)
    assert res.true_sum.tolist() == [6, 0] and res.wrapped.tolist() == [False, False]


# ---------------------------------------------------------------------------
# choosing the modulus
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n, m", [(1, 1), (1, 4), (2, 1), (2, 3), (3, 2), (3, 3), (4, 1)])
def test_modulus_for_is_minimal_by_enumeration(n, m):
    # from first principles: enumerate every input, collect the achievable sums,
    # and find the smallest M for which reduction mod M is injective on them
    sums = {sum(t) for t in itertools.product(range(m + 1), repeat=n)}
    injective = [M for M in range(2, n * m + 3) if len({s % M for s in sums}) == len(sums)]
    assert min(injective) == modulus_for(n, m) == n * m + 1


@given(n=st.integers(1, 10**9), m=st.integers(1, 10**9))
def test_modulus_for_minimal_property(n, m):
    M = modulus_for(n, m)
    assert not can_wrap(n, m, M)
    assert M - 1 < 2 or can_wrap(n, m, M - 1)


def test_modulus_for_zero_entries():
    # all entries 0: every sum is 0 and the smallest group the simulator accepts is Z_2
    assert modulus_for(7, 0) == 2 and not can_wrap(7, 0, 2)


def test_bits_per_entry():
    for modulus in (2, 3, 4, 5, 255, 256, 257, 10**6, 2**40, 2**40 + 1):
        assert bits_per_entry(modulus) == math.ceil(math.log2(modulus))
    # the +1 costs a bit only when n m is a power of two (n = 2**13, m = 2**5)
    n, m = 2**13, 2**5
    assert bits_per_entry(n * m) == 18 and bits_per_entry(modulus_for(n, m)) == 19
    n, m = 10**4, 30  # the OcPBM paper's default setting: no extra bit
    assert bits_per_entry(n * m) == bits_per_entry(modulus_for(n, m))


# ---------------------------------------------------------------------------
# signed sums
# ---------------------------------------------------------------------------


def test_to_signed_is_centred():
    for modulus in (2, 3, 9, 10, 2**40 + 3):
        x = np.array([0, 1, modulus // 2, (modulus + 1) // 2, modulus - 1])
        s = to_signed(x, modulus)
        assert np.all((s - x) % modulus == 0)  # same residue
        assert np.all(s > -modulus / 2) and np.all(s <= modulus / 2)


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(1, 30),
    a=st.integers(1, 1000),
    dim=st.integers(1, 4),
    seed=st.integers(0, 2**32),
)
def test_signed_sum_round_trip(n, a, dim, seed):
    rng = np.random.default_rng(seed)
    signed = rng.integers(-a, a + 1, size=(n, dim))
    modulus = modulus_for_signed(n, a)
    encoded = signed % modulus
    # the encoding wraps by design (negative entries), so wrapping is allowed
    got = to_signed(secure_sum(encoded, modulus=modulus, rng=seed, allow_wrap=True), modulus)
    assert got.tolist() == signed.sum(axis=0).tolist()


def test_signed_modulus_is_minimal():
    n, a = 4, 3
    modulus = modulus_for_signed(n, a)
    assert modulus == 2 * n * a + 1
    lowest = np.full((n, 1), -a)
    for M, ok in ((modulus, True), (modulus - 1, False)):
        got = to_signed(secure_sum(lowest % M, modulus=M, rng=0, allow_wrap=True), M)
        assert (got.tolist() == [-n * a]) is ok  # with 2na the sum -na decodes as +na


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(values=[[1, 2], [3, 10]], modulus=10), "values"),
        (dict(values=[[1, -1]], modulus=10), "values"),
        (dict(values=[[1.5]], modulus=10), "values"),
        (dict(values=[[np.nan]], modulus=10), "values"),
        (dict(values=np.zeros((2, 2, 2), dtype=int), modulus=10), "values"),
        (dict(values=np.zeros((0, 2), dtype=int), modulus=10), "values"),
        (dict(values=np.zeros((2, 0), dtype=int), modulus=10), "values"),
        (dict(values=[["a"]], modulus=10), "values"),
        (dict(values=[[1]], modulus=1), "modulus"),
        (dict(values=[[1]], modulus=MAX_MODULUS + 1), "modulus"),
        (dict(values=[[1]], modulus=10.5), "modulus"),
        (dict(values=[[1]], modulus=10, max_entry=-1), "max_entry"),
        (dict(values=[[1]], modulus=10, max_entry=10), "max_entry"),
        (dict(values=[[1]], modulus=10, allow_wrap=1), "allow_wrap"),
        (dict(values=[[1], [1]], modulus=10, max_entry=1, neighbours=0), "neighbours"),
        (dict(values=[[1], [1]], modulus=10, max_entry=1, rng=-1), "rng"),
    ],
)
def test_secure_sum_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        secure_sum(**kwargs)


def test_other_functions_reject_bad_input():
    with pytest.raises(ValueError, match="n"):
        pairwise_masks(0, 3, 10)
    with pytest.raises(ValueError, match="dim"):
        pairwise_masks(3, 0, 10)
    with pytest.raises(ValueError, match="modulus"):
        pairwise_masks(3, 3, 1)
    with pytest.raises(ValueError, match="max_entry"):
        modulus_for(3, -1)
    with pytest.raises(ValueError, match="n"):
        modulus_for(0, 3)
    with pytest.raises(ValueError, match="modulus"):
        can_wrap(3, 3, 1)
    with pytest.raises(ValueError, match="x"):
        to_signed([10], 10)
    with pytest.raises(ValueError, match="modulus"):
        bits_per_entry(1)


# ---------------------------------------------------------------------------
# performance
# ---------------------------------------------------------------------------


def test_a_million_clients():
    """n = 1e6 clients, dim = 10: the simulated secure sum equals the plain sum (its speed
    against drawing the masks alone is measured by scripts/bench.py)."""
    n, dim, m = 10**6, 10, 30
    z = np.random.default_rng(0).integers(0, m + 1, size=(n, dim))
    out = secure_sum(z, modulus=modulus_for(n, m), max_entry=m, rng=1)
    assert out.tolist() == z.sum(axis=0).tolist()
