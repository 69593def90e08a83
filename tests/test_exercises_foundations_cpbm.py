"""The checkers of the chapters on foundations, the cPBM and optimal clipping: right
attempts pass, typical wrong ones fail, messages never contain the answer, and bad
arguments raise ValueError."""

import math

import numpy as np
import pytest

from fedfreq import accounting, cpbm, kashin
from fedfreq.exercises import check_cpbm_mse, check_kashin_representation, check_rdp_conversion

# --------------------------------------------------------------------------- RDP -> DP


def _conversion(orders, rdp, delta, *, log_arg=lambda o, d: np.log(1 / (o * d)), extra=True):
    orders = np.asarray(orders, dtype=float)
    tail = (orders - 1) * np.log1p(-1 / orders) if extra else 0.0
    return float(np.min(rdp + (log_arg(orders, delta) + tail) / (orders - 1)))


def test_rdp_conversion_accepts_the_formula_and_the_package():
    assert check_rdp_conversion(_conversion).passed
    assert check_rdp_conversion(lambda o, r, d: accounting.rdp_to_dp(o, r, d)[0]).passed


@pytest.mark.parametrize(
    "wrong",
    [
        lambda o, r, d: _conversion(o, r, d, log_arg=lambda o_, d_: np.log(d_ / o_)),  # the other reading
        lambda o, r, d: _conversion(o, r, d, log_arg=lambda o_, d_: np.log(1 / d_), extra=False),  # classical
        lambda o, r, d: _conversion(o, r, d, extra=False),  # drops a term
        lambda o, r, d: _conversion(o[:3], r[:3], d),  # not the whole grid
        lambda o, r, d: _conversion(o, r, d) * (1 + 1e-6),
        lambda o, r, d: _conversion(o, r, d) * (1 - 1e-6),
        lambda o, r, d: np.array([1.0, 2.0]),
        lambda o, r, d: math.nan,
    ],
)
def test_rdp_conversion_rejects_wrong_attempts(wrong):
    assert not check_rdp_conversion(wrong).passed


def test_rdp_conversion_message_gives_no_direction():
    above = check_rdp_conversion(lambda o, r, d: _conversion(o, r, d) + 0.01)
    below = check_rdp_conversion(lambda o, r, d: _conversion(o, r, d) - 0.01)
    assert not above.passed and above.message == below.message
    target = accounting.rdp_to_dp(
        accounting.DEFAULT_ORDERS, accounting.rdp_gaussian(accounting.DEFAULT_ORDERS, sigma=2.0), 1e-6
    )[0]
    for digits in (2, 3, 4):
        assert f"{target:.{digits}f}" not in above.message


def test_rdp_conversion_failing_attempt_is_feedback():
    res = check_rdp_conversion(lambda *a: 1 / 0)
    assert not res.passed and "raised ZeroDivisionError" in res.message


# --------------------------------------------------------------------------- Kashin


def _truncation(x, U, eta, nu, iterations, *, scale=1.0, shrink=True, absorb=False):
    D = U.shape[1]
    y, r = np.zeros(D), np.array(x, dtype=float)
    level = np.linalg.norm(x) / math.sqrt(nu * D)
    for _ in range(iterations):
        b = np.clip(U.T @ r, -level, level)
        y += scale * b
        r = r - U @ b
        if shrink:
            level *= eta
    if absorb:
        y += U.T @ r
    return y


def test_kashin_checker_accepts_the_algorithm():
    assert check_kashin_representation(_truncation).passed
    assert check_kashin_representation(
        lambda x, U, eta, nu, r: kashin.kashin_representation(x, U, eta=eta, nu=nu, iterations=r, exact=False)
    ).passed


def test_kashin_checker_rejects_the_printed_update_and_other_slips():
    printed = check_kashin_representation(
        lambda x, U, eta, nu, r: _truncation(x, U, eta, nu, r, scale=math.sqrt(U.shape[1]))
    )
    assert not printed.passed and "reconstruct" in printed.message
    assert not check_kashin_representation(lambda x, U, eta, nu, r: _truncation(x, U, eta, nu, r, shrink=False)).passed
    assert not check_kashin_representation(lambda x, U, eta, nu, r: _truncation(x, U, eta, nu, r, absorb=True)).passed
    assert not check_kashin_representation(lambda x, U, eta, nu, r: U.T @ x).passed  # frame coefficients
    assert not check_kashin_representation(lambda x, U, eta, nu, r: np.zeros(3)).passed
    res = check_kashin_representation(lambda *a: 1 / 0)
    assert not res.passed and "raised" in res.message


def test_kashin_checker_validates_rng():
    with pytest.raises(ValueError, match="rng"):
        check_kashin_representation(_truncation, rng="abc")


# --------------------------------------------------------------------------- exact MSE


def _mse(X, U, Y, C, theta, m, *, clipped_p=True, exact_var=True, triangle=False):
    n = len(X)
    Yc = cpbm.clip_l2(Y, C)
    p = theta * (Yc if clipped_p else Y) / C + 0.5
    if exact_var:
        var = C**2 / (m * n**2 * theta**2) * np.sum(p * (1 - p), axis=0) @ np.sum(U**2, axis=0)
    else:
        var = U.shape[0] * C**2 / (4 * n * m * theta**2)
    if triangle:
        bias_sq = np.maximum(0, np.linalg.norm(Y, axis=1) - C).mean() ** 2
    else:
        b = X.mean(axis=0) - U @ Yc.mean(axis=0)
        bias_sq = b @ b
    return float(bias_sq + var)


def test_mse_checker_accepts_the_exact_error():
    assert check_cpbm_mse(_mse).passed
    assert check_cpbm_mse(
        lambda X, U, Y, C, theta, m: sum(cpbm.cpbm_error_terms(X, U, C, theta=theta, m=m, y=Y))
    ).passed


def test_mse_checker_names_the_wrong_term():
    bound = check_cpbm_mse(lambda *a: _mse(*a, exact_var=False))
    assert not bound.passed and "variance" in bound.message
    for kw in ({"triangle": True}, {"clipped_p": False}):
        res = check_cpbm_mse(lambda *a, kw=kw: _mse(*a, **kw))
        assert not res.passed and "bias" in res.message
    assert not check_cpbm_mse(lambda *a: math.sqrt(_mse(*a))).passed  # the root, not the square
    assert not check_cpbm_mse(lambda *a: "x").passed
    res = check_cpbm_mse(lambda *a: 1 / 0)
    assert not res.passed and "raised" in res.message


def test_mse_checker_gives_no_direction():
    above = check_cpbm_mse(lambda *a: _mse(*a) * 1.01)
    below = check_cpbm_mse(lambda *a: _mse(*a) * 0.99)
    assert not above.passed and above.message == below.message
    assert not any(ch.isdigit() for ch in above.message.split("(")[0].replace("case 1 of 6", ""))


def test_mse_checker_validates_rng():
    with pytest.raises(ValueError, match="rng"):
        check_cpbm_mse(_mse, rng=-1)
