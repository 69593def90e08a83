"""Tests of fedfreq.kashin: tight frames and Kashin's representation (the OcPBM paper, App. B)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedfreq.kashin import (
    frame_coefficients,
    kashin_level,
    kashin_representation,
    tight_frame,
    uncertainty_eta,
)


@pytest.mark.parametrize("kind", ["orthogonal", "dct"])
@pytest.mark.parametrize("d,D", [(1, 1), (3, 3), (5, 12), (20, 80)])
def test_tight_frame_is_parseval(kind, d, D):
    U = tight_frame(d, D, kind=kind, rng=1)
    assert U.shape == (d, D)
    np.testing.assert_allclose(U @ U.T, np.eye(d), atol=1e-12)
    x = np.random.default_rng(2).standard_normal(d)
    assert math.isclose(np.sum((x @ U) ** 2), np.sum(x**2), rel_tol=1e-12)


def test_frame_is_reproducible_from_the_seed():
    np.testing.assert_array_equal(tight_frame(4, 9, rng=5), tight_frame(4, 9, rng=5))


def test_frame_coefficients_reconstruct():
    U = tight_frame(6, 20, rng=3)
    X = np.random.default_rng(4).poisson(3.0, size=(7, 6)).astype(float)
    np.testing.assert_allclose(frame_coefficients(X, U) @ U.T, X, atol=1e-12)


@pytest.mark.parametrize("eta,nu", [(0.5, 0.5), (0.7, 0.3), (0.9, 0.1)])
def test_level_guarantee_always_holds(eta, nu):
    # |y_k| <= sum_j eta^j M = K ||x|| / sqrt(D), by construction, whatever the frame
    d, D = 10, 30
    U = tight_frame(d, D, rng=6)
    X = np.random.default_rng(7).standard_normal((50, d)) * 5
    Y = kashin_representation(X, U, eta=eta, nu=nu, iterations=25, exact=False)
    bound = kashin_level(eta, nu) * np.linalg.norm(X, axis=1) / math.sqrt(D)
    assert np.all(np.abs(Y).max(axis=1) <= bound * (1 + 1e-12))


def test_reconstruction_error_contracts_geometrically():
    # the residual after r steps is at most eta^r ||x|| when the uncertainty principle holds;
    # with D = 4d and (eta, nu) = (0.7, 0.3) it holds on these inputs (checked step by step)
    d, D = 20, 80
    U = tight_frame(d, D, rng=8)
    X = np.random.default_rng(9).poisson(2.0, size=(100, d)).astype(float)
    norms = np.linalg.norm(X, axis=1)
    for r in (1, 3, 6, 10):
        Y = kashin_representation(X, U, eta=0.7, nu=0.3, iterations=r, exact=False)
        resid = np.linalg.norm(X - Y @ U.T, axis=1)
        assert np.all(resid <= 0.7**r * norms * (1 + 1e-9))


def test_exact_mode_reconstructs_and_spreads():
    d, D = 20, 80
    U = tight_frame(d, D, rng=10)
    X = np.random.default_rng(11).poisson(2.0, size=(200, d)).astype(float)
    Y = kashin_representation(X, U, eta=0.7, nu=0.3, iterations=20)
    np.testing.assert_allclose(Y @ U.T, X, atol=1e-10)
    # the representation is flatter than the plain frame coefficients
    flat_k = np.abs(Y).max(axis=1) / np.linalg.norm(X, axis=1)
    flat_f = np.abs(frame_coefficients(X, U)).max(axis=1) / np.linalg.norm(X, axis=1)
    assert np.mean(flat_k) < np.mean(flat_f)


def test_paper_scaling_reconstructs_sqrt_D_times_x():
    # the OcPBM paper accumulates a += sqrt(D) * b_hat: those coefficients give U a = sqrt(D) x
    d, D = 5, 20
    U = tight_frame(d, D, rng=12)
    x = np.arange(1.0, d + 1)
    a = math.sqrt(D) * kashin_representation(x, U, eta=0.7, nu=0.3)
    np.testing.assert_allclose(U @ a, math.sqrt(D) * x, atol=1e-9)
    assert not np.allclose(U @ a, x)


def test_uncertainty_eta_is_attained_lower_bound():
    U = tight_frame(10, 40, rng=13)
    eta = uncertainty_eta(U, 0.1, rng=0)
    # the value is the norm of some 4-column submatrix: never below a random one's
    rng = np.random.default_rng(1)
    random_norm = max(np.linalg.norm(U[:, rng.choice(40, 4, replace=False)], 2) for _ in range(20))
    assert random_norm <= eta + 1e-12 <= 1.0 + 1e-12


def test_kashin_level_formula():
    assert kashin_level(0.5, 0.25) == 4.0


@settings(max_examples=25, deadline=None)
@given(
    bad=st.sampled_from([("eta", 0.0), ("eta", 1.0), ("nu", 0.0), ("nu", 1.5), ("iterations", 0), ("iterations", 1.5)])
)
def test_bad_parameters_raise(bad):
    name, value = bad
    U = tight_frame(3, 6, rng=0)
    kw = dict(eta=0.5, nu=0.5, iterations=3)
    kw[name] = value
    with pytest.raises(ValueError, match=name):
        kashin_representation(np.ones(3), U, **kw)


def test_bad_shapes_and_frames_raise():
    U = tight_frame(3, 6, rng=0)
    with pytest.raises(ValueError, match="x"):
        kashin_representation(np.ones(4), U, eta=0.5, nu=0.5)
    with pytest.raises(ValueError, match="U"):
        kashin_representation(np.ones(3), 2 * U, eta=0.5, nu=0.5)
    with pytest.raises(ValueError, match="D"):
        tight_frame(5, 3)
    with pytest.raises(ValueError, match="kind"):
        tight_frame(2, 3, kind="haar")


def test_unique_rows_give_the_representation_of_every_row():
    # one-item histograms (unit vectors), repeated: unique=True represents each distinct row once and copies it
    rng = np.random.default_rng(11)
    d = 12
    U = tight_frame(d, 2 * d, rng=4)
    X = np.eye(d)[rng.integers(0, d, size=500)] * rng.integers(1, 3, size=(500, 1))
    full = kashin_representation(X, U, eta=0.7, nu=0.3)
    once = kashin_representation(X, U, eta=0.7, nu=0.3, unique=True)
    assert once.shape == full.shape
    assert np.allclose(once, full, rtol=0.0, atol=1e-12)
    rows, inverse = np.unique(X, axis=0, return_inverse=True)
    assert rows.shape[0] <= 2 * d
    assert all(np.array_equal(once[i], once[j]) for i, j in [(0, np.flatnonzero(inverse == inverse[0])[-1])])
    # distinct rows and a single vector go through unchanged
    Z = rng.normal(size=(40, d))
    assert np.array_equal(
        kashin_representation(Z, U, eta=0.7, nu=0.3, unique=True), kashin_representation(Z, U, eta=0.7, nu=0.3)
    )
    assert np.array_equal(
        kashin_representation(Z[0], U, eta=0.7, nu=0.3, unique=True), kashin_representation(Z[0], U, eta=0.7, nu=0.3)
    )
    with pytest.raises(ValueError, match="unique"):
        kashin_representation(Z, U, eta=0.7, nu=0.3, unique="yes")


def test_representation_is_homogeneous_and_row_wise():
    # what the precomputed-representation arguments of fedfreq.protocols rely on
    rng = np.random.default_rng(12)
    U = tight_frame(10, 30, rng=5)
    X = rng.poisson(3.0, size=(300, 10)).astype(float) + 0.5
    Y = kashin_representation(X, U, eta=0.7, nu=0.3)
    c = rng.uniform(0.01, 100.0, size=(300, 1))
    assert np.allclose(kashin_representation(c * X, U, eta=0.7, nu=0.3), c * Y, rtol=1e-12, atol=1e-12 * c.max())
    idx = rng.choice(300, size=37, replace=False)
    assert np.allclose(kashin_representation(X[idx], U, eta=0.7, nu=0.3), Y[idx], rtol=0.0, atol=1e-12)


def test_large_inputs_are_processed_in_blocks_of_rows(monkeypatch):
    import fedfreq.kashin as kashin_module

    rng = np.random.default_rng(13)
    U = tight_frame(8, 16, rng=6)
    X = rng.poisson(2.0, size=(1000, 8)).astype(float)
    whole = kashin_representation(X, U, eta=0.7, nu=0.3)
    monkeypatch.setattr(kashin_module, "_BLOCK_ENTRIES", 0)
    monkeypatch.setattr(kashin_module, "_BLOCK_ROWS", 300)  # four blocks of 250 rows
    calls = []
    block = kashin_module._truncation_block
    monkeypatch.setattr(kashin_module, "_truncation_block", lambda X, *a: calls.append(len(X)) or block(X, *a))
    blocked = kashin_representation(X, U, eta=0.7, nu=0.3)
    assert calls == [250, 250, 250, 250]
    assert np.allclose(blocked, whole, rtol=0.0, atol=1e-12)
