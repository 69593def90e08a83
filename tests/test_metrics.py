"""Tests for the error metrics of :mod:`fedfreq.metrics`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fedfreq.metrics import (
    ErrorEstimate,
    expected_error,
    expected_l2_error,
    l1_error,
    l2_error,
    linf_error,
    mse,
    nrmse,
    nrmse_stderr,
    relative_l1_loss,
)

# ---------------------------------------------------------------------------
# small examples computed from first principles in pure Python
# ---------------------------------------------------------------------------

EST = [3.0, 0.5, -2.0, 7.25]
TRUTH = [1.0, 1.5, 0.0, 7.0]


def _diffs(a, b):
    return [x - y for x, y in zip(a, b, strict=False)]


def test_norms_match_definitions():
    d = _diffs(EST, TRUTH)
    assert l1_error(EST, TRUTH) == pytest.approx(sum(abs(x) for x in d), rel=1e-15)
    assert l2_error(EST, TRUTH) == pytest.approx(math.sqrt(sum(x * x for x in d)), rel=1e-15)
    assert linf_error(EST, TRUTH) == max(abs(x) for x in d)
    for f in (l1_error, l2_error, linf_error):
        assert isinstance(f(EST, TRUTH), float)


def test_relative_l1_loss_matches_definition():
    # Liu et al. 2023, Eq. 2: sum_j |Nbar_j - Nhat_j| / ||Nbar||_1
    truth = [120.0, 40.0, 30.0, 10.0]
    est = [110.0, 47.0, 30.0, 0.0]
    num = sum(abs(t - e) for t, e in zip(truth, est, strict=False))
    den = sum(abs(t) for t in truth)
    assert relative_l1_loss(est, truth) == pytest.approx(num / den, rel=1e-15)


def test_nrmse_matches_definition():
    mu = 4.0
    xs = [3.5, 4.5, 4.0, 6.0, 2.0]
    root_mean_sq = math.sqrt(sum((x - mu) ** 2 for x in xs) / len(xs))
    assert nrmse(xs, mu) == pytest.approx(root_mean_sq / mu, rel=1e-15)
    # root taken before dividing: scaling estimates and truth together leaves NRMSE unchanged
    assert nrmse([10 * x for x in xs], 10 * mu) == pytest.approx(nrmse(xs, mu), rel=1e-14)
    # negative mean: divide by |mu|
    assert nrmse([-x for x in xs], -mu) == pytest.approx(nrmse(xs, mu), rel=1e-15)


def test_nrmse_stderr_matches_delta_method_by_hand():
    mu = 4.0
    xs = [3.5, 4.5, 4.0, 6.0, 2.0]
    sq = [(x - mu) ** 2 for x in xs]
    r = len(xs)
    mean_sq = sum(sq) / r
    sd_sq = math.sqrt(sum((s - mean_sq) ** 2 for s in sq) / (r - 1))
    want = (sd_sq / math.sqrt(r)) / (2 * math.sqrt(mean_sq) * mu)
    assert nrmse_stderr(xs, mu) == pytest.approx(want, rel=1e-14)
    assert nrmse_stderr([mu, mu, mu], mu) == 0.0  # exact every time: no spread


def test_mse_and_expected_errors_match_definitions():
    truth = [1.0, -1.0, 2.0]
    reps = [[1.0, -1.0, 2.0], [2.0, 1.0, 2.0], [0.0, -1.0, 5.0], [1.5, -0.5, 2.5]]
    l2s = [math.sqrt(sum(x * x for x in _diffs(r, truth))) for r in reps]
    l1s = [sum(abs(x) for x in _diffs(r, truth)) for r in reps]
    R = len(reps)
    assert mse(reps, truth) == pytest.approx(sum(v * v for v in l2s) / R, rel=1e-15)
    assert expected_l2_error(reps, truth) == pytest.approx(sum(l2s) / R, rel=1e-15)
    for norm, errs in (("l2", l2s), ("l1", l1s)):
        est = expected_error(reps, truth, norm=norm)
        mean = sum(errs) / R
        sd = math.sqrt(sum((e - mean) ** 2 for e in errs) / (R - 1))
        assert isinstance(est, ErrorEstimate) and est.repetitions == R
        assert est.mean == pytest.approx(mean, rel=1e-15)
        assert est.stderr == pytest.approx(sd / math.sqrt(R), rel=1e-14)
    linf = expected_error(reps, truth, norm="linf")
    assert linf.mean == pytest.approx(sum(max(abs(x) for x in _diffs(r, truth)) for r in reps) / R)


# ---------------------------------------------------------------------------
# broadcasting
# ---------------------------------------------------------------------------


def test_norms_broadcast_over_leading_axes():
    rng = np.random.default_rng(0)
    est = rng.normal(size=(5, 3, 7))
    truth = rng.normal(size=(3, 7))
    for f in (l1_error, l2_error, linf_error, relative_l1_loss):
        out = f(est, truth)
        assert out.shape == (5, 3)
        for i in range(5):
            for j in range(3):
                assert out[i, j] == pytest.approx(f(est[i, j], truth[j]), rel=1e-14)


def test_repetition_metrics_broadcast():
    rng = np.random.default_rng(1)
    R, B, d = 50, 4, 6
    est = rng.normal(size=(R, B, d))
    truth = rng.normal(size=(B, d))
    m = mse(est, truth)
    assert m.shape == (B,)
    for b in range(B):
        assert m[b] == pytest.approx(np.mean(l2_error(est[:, b], truth[b]) ** 2), rel=1e-12)
    e = expected_error(est, truth, norm="linf")
    assert e.mean.shape == (B,) and e.stderr.shape == (B,)
    # nrmse: one mean per column, repetitions on axis 0
    mus = np.array([1.0, -2.0, 3.0])
    xs = mus + rng.normal(size=(40, 3))
    got = nrmse(xs, mus)
    assert got.shape == (3,)
    for j in range(3):
        assert got[j] == pytest.approx(nrmse(xs[:, j], mus[j]), rel=1e-14)


# ---------------------------------------------------------------------------
# statistical checks
# ---------------------------------------------------------------------------


def test_mse_of_gaussian_noise_is_d_sigma_squared():
    # estimates = truth + N(0, sigma^2 I_d): E||e||^2 = d sigma^2 and
    # Var||e||^2 = 2 d sigma^4, so the mean over R reps has standard error
    # sigma^2 sqrt(2 d / R). Tolerance: 4 standard errors.
    rng = np.random.default_rng(2024)
    R, d, sigma = 20_000, 10, 0.3
    truth = rng.uniform(0, 5, size=d)
    est = truth + sigma * rng.normal(size=(R, d))
    se = sigma**2 * math.sqrt(2 * d / R)
    assert abs(mse(est, truth) - d * sigma**2) < 4 * se


def test_nrmse_stderr_is_calibrated():
    # Repeat a whole NRMSE experiment (R = 100 repetitions, as in Cormode & Markov 2021) E = 4000
    # times with Gaussian errors. The spread of the E NRMSE values should match the
    # average delta-method standard error. The sample SD of E values has relative
    # standard error 1/sqrt(2(E-1)) ~ 1.1%; the delta method itself is accurate to
    # O(1/R) ~ 1%; tolerance 6% (about 4 standard errors plus the O(1/R) term).
    rng = np.random.default_rng(7)
    R, E, mu, sigma = 100, 4000, 10.0, 0.2
    xs = mu + sigma * rng.normal(size=(R, E))
    values = nrmse(xs, mu)
    errors = nrmse_stderr(xs, mu)
    assert values.shape == errors.shape == (E,)
    assert np.std(values, ddof=1) == pytest.approx(np.mean(errors), rel=0.06)
    # and NRMSE itself estimates sigma / mu: E sqrt(chi2_R / R) = 1 - 1/(4R) + O(R^-2),
    # a 0.25% bias; the mean of E values has relative standard error ~0.1%, so 1%
    # covers the bias plus 4 standard errors
    assert np.mean(values) == pytest.approx(sigma / mu, rel=0.01)


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------

PAIRWISE = [l1_error, l2_error, linf_error, relative_l1_loss]
REPEATED = [mse, expected_l2_error, expected_error]


@pytest.mark.parametrize("f", PAIRWISE)
def test_pairwise_errors(f):
    with pytest.raises(ValueError, match="last axis"):
        f([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="estimate"):
        f([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="truth"):
        f([1.0, 2.0], [np.inf, 2.0])
    with pytest.raises(ValueError, match="truth"):
        f([1.0, 2.0], 3.0)
    with pytest.raises(ValueError, match="estimate"):
        f([], [])
    with pytest.raises(ValueError, match="estimate"):
        f(["a", "b"], [1.0, 2.0])
    with pytest.raises(ValueError, match="estimate"):
        f([True, False], [1.0, 2.0])


def test_relative_loss_zero_truth():
    with pytest.raises(ValueError, match="truth"):
        relative_l1_loss([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="truth"):  # one zero row among several
        relative_l1_loss(np.ones((2, 2)), [[1.0, 1.0], [0.0, 0.0]])


@pytest.mark.parametrize("f", REPEATED)
def test_repeated_errors(f):
    with pytest.raises(ValueError, match="estimates"):
        f([1.0, 2.0], [1.0, 2.0])  # 1-D: no repetition axis
    with pytest.raises(ValueError, match="truth"):
        f(np.ones((5, 3)), np.ones(4))
    with pytest.raises(ValueError, match="truth"):
        f(np.ones((5, 3)), np.ones((5, 3)))  # truth is per repetition, not per run
    with pytest.raises(ValueError, match="estimates"):
        f(np.full((5, 3), np.nan), np.ones(3))


def test_expected_error_needs_two_reps_and_a_known_norm():
    with pytest.raises(ValueError, match="estimates"):
        expected_error(np.ones((1, 3)), np.ones(3))
    with pytest.raises(ValueError, match="norm"):
        expected_error(np.ones((4, 3)), np.ones(3), norm="l3")
    assert expected_l2_error(np.ones((1, 3)), np.zeros(3)) == pytest.approx(math.sqrt(3))


def test_nrmse_errors():
    with pytest.raises(ValueError, match="truth"):
        nrmse([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="truth"):
        nrmse(np.ones((4, 2)), [1.0, 0.0])
    with pytest.raises(ValueError, match="truth"):
        nrmse(np.ones((4, 2)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="estimates"):
        nrmse([1.0, np.nan], 1.0)
    with pytest.raises(ValueError, match="estimates"):
        nrmse_stderr([1.0], 1.0)  # one repetition has no standard error
    with pytest.raises(ValueError, match="estimates"):
        nrmse([], 1.0)


def test_overflow_is_reported_not_returned():
    with pytest.raises(ValueError, match="overflow"):
        l1_error([1e308, 1e308], [-1e308, -1e308])
    # but large finite values that only overflow when squared are fine for l2
    assert l2_error([3e200, 0.0], [0.0, 4e200]) == pytest.approx(5e200)


# ---------------------------------------------------------------------------
# property tests
# ---------------------------------------------------------------------------

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def _vec_pair(d):
    return st.tuples(hnp.arrays(np.float64, d, elements=finite), hnp.arrays(np.float64, d, elements=finite))


vec_pairs = st.integers(1, 12).flatmap(_vec_pair)


@settings(max_examples=200, deadline=None)
@given(vec_pairs)
def test_norm_inequalities(pair):
    a, b = pair
    d = a.size
    l1, l2, li = l1_error(a, b), l2_error(a, b), linf_error(a, b)
    tol = 1e-9 * (1 + l1)
    assert 0 <= li <= l2 + tol
    assert l2 <= l1 + tol
    assert l1 <= d * li + tol
    assert l2 <= math.sqrt(d) * li + tol
    assert l1 == pytest.approx(l1_error(b, a))  # symmetric
    assert l1_error(a, a) == l2_error(a, a) == linf_error(a, a) == 0.0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8).flatmap(lambda d: st.tuples(*[hnp.arrays(np.float64, d, elements=finite)] * 3)))
def test_triangle_inequality(vs):
    a, b, c = vs
    for f in (l1_error, l2_error, linf_error):
        assert f(a, c) <= f(a, b) + f(b, c) + 1e-9 * (1 + f(a, b) + f(b, c))


@settings(max_examples=200, deadline=None)
@given(vec_pairs, st.floats(1e-3, 1e3))
def test_relative_loss_scale_invariant(pair, scale):
    est, truth = pair
    assume(np.sum(np.abs(truth)) > 1e-3)
    assert relative_l1_loss(scale * est, scale * truth) == pytest.approx(
        relative_l1_loss(est, truth), rel=1e-9, abs=1e-12
    )


@settings(max_examples=200, deadline=None)
@given(vec_pairs, st.data())
def test_nan_anywhere_is_rejected(pair, data):
    a, b = pair
    which = data.draw(st.sampled_from(["estimate", "truth"]))
    idx = data.draw(st.integers(0, a.size - 1))
    (a if which == "estimate" else b)[idx] = np.nan
    for f in PAIRWISE:
        with pytest.raises(ValueError, match=which):
            f(a, b)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10), st.integers(1, 10))
def test_domain_mismatch_is_rejected(d1, d2):
    assume(d1 != d2)
    for f in PAIRWISE:
        with pytest.raises(ValueError, match="truth"):
            f(np.ones(d1), np.ones(d2))


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(np.float64, st.integers(1, 30), elements=finite),
    st.floats(0.5, 1e4).flatmap(lambda m: st.sampled_from([m, -m])),
)
def test_nrmse_properties(xs, mu):
    v = nrmse(xs, mu)
    assert v >= 0
    assert v == pytest.approx(np.sqrt(np.mean((xs - mu) ** 2)) / abs(mu), rel=1e-12, abs=1e-15)
    assert nrmse(np.full(xs.shape, mu), mu) == 0.0


def test_nrmse_of_runs_matches_nrmse_and_validates():
    from fedfreq.metrics import nrmse, nrmse_of_runs

    values = iter(np.arange(1.0, 11.0))
    assert nrmse_of_runs(lambda: next(values), 5.0, reps=10) == float(nrmse(np.arange(1.0, 11.0), 5.0))
    with pytest.raises(ValueError, match="reps"):
        nrmse_of_runs(lambda: 1.0, 1.0, reps=1)
    with pytest.raises(ValueError, match="run"):
        nrmse_of_runs(3.0, 1.0, reps=5)
