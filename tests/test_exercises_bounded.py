"""The checkers of the chapter on bounded domains (the exact error of Algorithm 1 and the
corrected Algorithm 2 of Liu et al. 2023).

A correct attempt passes, typical wrong attempts fail, messages never contain the answer,
and bad arguments raise ValueError naming the parameter.
"""

import math

import numpy as np
import pytest
from scipy import special, stats

from fedfreq import contribution as ct
from fedfreq.exercises import check_gaussian_loss, check_output_perturbation
from fedfreq.exercises.bounded import _projected_laplace_moments

# --------------------------------------------------------------------------- exact loss


def _bias(N, C, norm):
    N = np.asarray(N, dtype=float)
    norms = np.linalg.norm(N, axis=1) if norm == 2 else N.sum(axis=1)
    return np.maximum(1 - C / np.where(norms > 0, norms, np.inf), 0.0) @ N


def loss_right(N, C, sigma):
    b, tau = _bias(N, C, 2), C * sigma
    return float(
        np.sum(
            tau * math.sqrt(2 / math.pi) * np.exp(-(b**2) / (2 * tau**2)) + b * special.erf(b / (tau * math.sqrt(2)))
        )
    )


def loss_foldnorm(N, C, sigma):
    tau = C * sigma
    return float(np.sum(stats.foldnorm.mean(_bias(N, C, 2) / tau, scale=tau)))


@pytest.mark.parametrize(
    "func", [loss_right, loss_foldnorm, lambda N, C, sigma: ct.gaussian_expected_loss(N, C, sigma=sigma)]
)
def test_gaussian_loss_accepts_correct_formulas(func):
    result = check_gaussian_loss(func)
    assert result.passed, result.message
    assert str(result).startswith("PASS")


def _with_bias(norm, noise):
    def loss(N, C, sigma):
        b, tau = _bias(N, C, norm), C * sigma
        if noise == "upper":  # the triangle-inequality bound G(C), not the loss
            return float(np.sum(b + tau * math.sqrt(2 / math.pi)))
        if noise == "laplace":
            return float(np.sum(b + tau * np.exp(-b / tau)))
        if noise == "none":
            return float(np.sum(b))
        return float(
            np.sum(
                tau * math.sqrt(2 / math.pi) * np.exp(-(b**2) / (2 * tau**2))
                + b * special.erf(b / (tau * math.sqrt(2)))
            )
        )

    return loss


@pytest.mark.parametrize(
    "wrong",
    [
        _with_bias(2, "upper"),
        _with_bias(2, "laplace"),
        _with_bias(2, "none"),
        _with_bias(1, "gauss"),  # l1 clipping instead of l2
        lambda N, C, sigma: loss_right(N, C, sigma) * 1.001,
        lambda N, C, sigma: loss_right(N, C, sigma / math.sqrt(2)),
        lambda N, C, sigma: float("nan"),
        lambda N, C, sigma: [1.0, 2.0],
        lambda N, C, sigma: 1 / 0,
    ],
)
def test_gaussian_loss_rejects_wrong_attempts(wrong):
    result = check_gaussian_loss(wrong)
    assert not result.passed
    assert str(result).startswith("NOT YET")


def test_gaussian_loss_message_has_no_answer_and_no_side():
    low = check_gaussian_loss(lambda N, C, sigma: loss_right(N, C, sigma) * 0.99)
    high = check_gaussian_loss(lambda N, C, sigma: loss_right(N, C, sigma) * 1.01)
    assert not low.passed and low.message == high.message
    assert "larger" not in low.message and "smaller" not in low.message


@pytest.mark.parametrize("bad", [{"trials": 0}, {"trials": 2.5}, {"trials": 10**7}, {"rng": -1}, {"rng": "seed"}])
def test_gaussian_loss_bad_arguments(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        check_gaussian_loss(loss_right, **bad)


# --------------------------------------------------------------------------- Algorithm 2


def _alg2(*, lam_budget="threshold", project="both", noise="laplace", delta_factor=4.0):
    def alg2(l1, l2, d, sigma, C_max, s, epsilon, epsilon_prime, rng):
        n = len(l1)
        e = epsilon_prime if lam_budget == "threshold" else epsilon
        lam = 2 * math.sqrt(2 * s) / (C_max * math.sqrt(n * e))
        c1 = ct.regularized_threshold(l1, l2, d=d, sigma=sigma, lam=lam, s=s)
        b = delta_factor * math.sqrt(s) / (lam * n) / epsilon_prime
        if noise == "laplace":
            x = c1 + rng.laplace(0.0, b)
        elif noise == "gauss":  # same variance, wrong law
            x = c1 + rng.normal(0.0, math.sqrt(2) * b)
        else:
            x = c1
        if project == "both":
            return min(max(x, 0.0), C_max)
        if project == "zero":
            return max(x, 0.0)
        if project == "reflect":
            return min(abs(x), C_max)
        return x

    return alg2


def alg2_package(l1, l2, d, sigma, C_max, s, epsilon, epsilon_prime, rng):
    return ct.output_perturbation_threshold(
        l1, l2, d=d, sigma=sigma, C_max=C_max, s=s, epsilon_prime=epsilon_prime, rng=rng
    )


@pytest.mark.parametrize("func", [_alg2(), alg2_package])
def test_output_perturbation_accepts_the_corrected_algorithm(func):
    result = check_output_perturbation(func)
    assert result.passed, result.message


def test_output_perturbation_false_fail_rate_is_small():
    fails = sum(not check_output_perturbation(_alg2(), trials=200, rng=seed).passed for seed in range(40))
    assert fails == 0


@pytest.mark.parametrize(
    "wrong",
    [
        _alg2(lam_budget="histogram"),  # Algorithm 2 as printed (line 2)
        _alg2(project="none"),  # as printed: negative thresholds
        _alg2(project="zero"),
        _alg2(project="reflect"),
        _alg2(noise="gauss"),
        _alg2(noise="none"),
        _alg2(delta_factor=1.0),
        lambda *args: float("nan"),
        lambda *args: "threshold",
        lambda *args: 1 / 0,
    ],
)
def test_output_perturbation_rejects_wrong_attempts(wrong):
    result = check_output_perturbation(wrong)
    assert not result.passed
    assert str(result).startswith("NOT YET")


def test_output_perturbation_printed_lambda_fails_in_the_second_setting_too():
    def alg2(l1, l2, d, sigma, C_max, s, epsilon, epsilon_prime, rng):
        first = epsilon_prime < epsilon  # right in the first setting, printed form in the second
        return _alg2(lam_budget="threshold" if first else "histogram")(
            l1, l2, d, sigma, C_max, s, epsilon, epsilon_prime, rng
        )

    result = check_output_perturbation(alg2)
    assert not result.passed and "epsilon = 0.25" in result.message


def test_output_perturbation_messages_have_no_answer():
    for wrong in (_alg2(lam_budget="histogram"), _alg2(project="reflect"), _alg2(noise="gauss")):
        msg = check_output_perturbation(wrong).message
        assert "lambda =" not in msg and "Delta =" not in msg
        assert "sqrt" not in msg and "epsilon_prime" not in msg


def test_projected_laplace_moments_match_simulation():
    gen = np.random.default_rng(3)
    center, b, cap = 14.0, 19.0, 60.0
    y = np.clip(center + gen.laplace(0.0, b, size=400_000), 0.0, cap)
    ref = _projected_laplace_moments(center, b, cap)
    assert abs(y.mean() - ref["mean"]) < 5 * ref["mean_sd"] / math.sqrt(y.size)
    assert abs(y.std() - ref["mean_sd"]) < 0.01 * ref["mean_sd"]
    dev = np.abs(y - center)
    assert abs(dev.mean() - ref["dev"]) < 5 * ref["dev_sd"] / math.sqrt(y.size)
    assert abs(np.mean(y == 0) - ref["zero"]) < 5 * math.sqrt(ref["zero"] / y.size)


@pytest.mark.parametrize("bad", [{"trials": 100}, {"trials": 2.5}, {"trials": 10**7}, {"rng": -1}, {"rng": 1.5}])
def test_output_perturbation_bad_arguments(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        check_output_perturbation(_alg2(), **bad)
