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
