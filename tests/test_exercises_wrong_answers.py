"""The exercise checkers cannot be fooled cheaply, and still accept the reference answers.

Every checker is fed its reference attempt (``fedfreq.exercises._reference``), which must
pass, and plausible wrong answers (off by one, n against n - 1, a sign error, a
perturbation below any simulation's resolution, a wrong law with the right first
moments, a float where an int is asked), which must fail with a hint. A wrong answer on
either side of the right one gets the same message, so the message carries no direction,
and no message quotes the reference value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedfreq import exercises, sketch
from fedfreq.deploy import discrete_laplace_logpmf
from fedfreq.exercises import _reference as ref


@pytest.mark.parametrize("name", sorted(ref.PASSING))
def test_the_reference_attempt_passes(name):
    result = ref.passing_call(name)()
    assert result.passed, f"{name}: {result.message}"


def test_every_checker_has_a_reference_or_takes_a_number():
    takes_number = {"check_omission_estimate"}
    assert set(exercises.__all__) - {"CheckResult"} == set(ref.PASSING) | takes_number


# --------------------------------------------------------------------------- exact checkers

# checkers whose answer is a deterministic number (or array) compared to 1e-6 or tighter
EXACT = [
    "check_rdp_conversion",
    "check_kashin_representation",
    "check_cpbm_mse",
    "check_dht_decoder",
    "check_multiround_level",
    "check_tffe_rdp",
    "check_online_threshold",
    "check_hybrid_decoder",
    "check_exact_delta",
    "check_optimal_composition",
    "check_fixed_population_variance",
    "check_clipped_poisson_inverse",
    "check_clipped_poisson_mean",
    "check_discrete_laplace_delta",
    "check_hockey_stick",
    "check_epsilon_lower_bound",
    "check_gaussian_loss",
]


# checkers whose message names the failing property (one that is one-sided by nature,
# such as the reconstruction error), not whether the answer is too large or too small
NAMES_THE_PROPERTY = {"check_kashin_representation"}


def _scaled(func, factor):
    return lambda *a: np.asarray(func(*a), dtype=float) * factor if np.ndim(func(*a)) else float(func(*a)) * factor


@pytest.mark.parametrize("name", EXACT)
def test_exact_checkers_see_a_relative_error_of_1e4_on_either_side_without_telling_which(name):
    func, kwargs = ref.PASSING[name]
    check = getattr(exercises, name)
    above = check(_scaled(func, 1 + 1e-4), **kwargs)
    below = check(_scaled(func, 1 - 1e-4), **kwargs)
    assert not above.passed and not below.passed, name
    if name not in NAMES_THE_PROPERTY:
        assert above.message == below.message, name
    assert len(above.message) > 30  # a hint, not a bare "wrong"


@pytest.mark.parametrize("name", EXACT)
def test_exact_checkers_reject_a_sign_error(name):
    func, kwargs = ref.PASSING[name]
    assert not getattr(exercises, name)(_scaled(func, -1.0), **kwargs).passed


# --------------------------------------------------------------------------- randomized response


def _rr(shift_users=0, swap=False, halve=False, fraction=False):
    def est(reports, epsilon):
        e = epsilon / 2 if halve else epsilon
        p = math.exp(e) / (1 + math.exp(e))
        q = 1 - p
        if swap:
            p, q = q, p
        n = len(reports) + shift_users
        value = (np.sum(reports) - n * q) / (p - q)
        return float(value / len(reports) if fraction else value)

    return est


@pytest.mark.parametrize(
    "wrong",
    [
        pytest.param(_rr(shift_users=-1), id="n - 1 users"),
        pytest.param(_rr(shift_users=+1), id="n + 1 users"),
        pytest.param(_rr(swap=True), id="sign error (p and q swapped)"),
        pytest.param(_rr(halve=True), id="epsilon / 2"),
        pytest.param(_rr(fraction=True), id="a fraction, not a count"),
        pytest.param(lambda r, e: float(np.sum(r)), id="no debiasing"),
        pytest.param(lambda r, e: float(np.sum(r[:-1]) * len(r) / (len(r) - 1)), id="drops a report"),
    ],
)
def test_rr_debias_rejects_biased_estimators(wrong):
    result = exercises.check_rr_debias(wrong)
    assert not result.passed
    assert "biased" in result.message or "order" in result.message


def test_rr_debias_n_minus_one_bias_is_below_the_simulation_resolution():
    """Why the exact test is needed: the n - 1 estimator's bias, (1 - p)/(2p - 1) at most
    about 1.5 users, is a fraction of one standard error of 400 simulated rounds of 2000 users."""
    for eps in (0.5, 2.0):
        p = math.exp(eps) / (1 + math.exp(eps))
        bias = (1 - p) / (2 * p - 1)
        se = math.sqrt(2000 * math.exp(eps)) / (math.exp(eps) - 1) / math.sqrt(400)
        assert bias < 0.5 * se


def test_rr_debias_rejects_an_order_dependent_estimator():
    def first_half_twice(reports, epsilon):
        half = reports[: len(reports) // 2]
        return _rr()(np.concatenate([half, half]), epsilon)

    result = exercises.check_rr_debias(first_half_twice)
    assert not result.passed and "order" in result.message


# --------------------------------------------------------------------------- discrete Laplace sampler


def _moment_matching_law(t):
    """A law on {0, ±1, ±c} with the discrete Laplace law's P(0), mean, variance and symmetry."""
    support = np.arange(-2000, 2001)
    pmf = np.exp(discrete_laplace_logpmf(support, t))
    p0, var = float(pmf[support == 0][0]), float(np.sum(support**2.0 * pmf))
    c = int(math.ceil(math.sqrt(var))) + 2
    v = (var - (1 - p0)) / (2 * (c * c - 1))
    u = (1 - p0) / 2 - v
    assert u > 0 and v > 0
    values = np.array([-c, -1, 0, 1, c])
    probs = np.array([v, u, p0, u, v])
    assert abs(probs @ values) < 1e-12 and abs(probs @ values**2 - var) < 1e-9 * var
    return values, probs


def _five_point(t, size, rng):
    values, probs = _moment_matching_law(t)
    return rng.choice(values, size=size, p=probs)


@pytest.mark.parametrize(
    "wrong",
    [
        pytest.param(_five_point, id="5-point law with the right P(0), mean, variance"),
        pytest.param(lambda t, size, rng: np.round(rng.laplace(0.0, t, size)).astype(int), id="rounded Laplace"),
        pytest.param(
            lambda t, size, rng: rng.geometric(1 - np.exp(-t), size) - rng.geometric(1 - np.exp(-t), size),
            id="rate for scale",
        ),
        pytest.param(
            lambda t, size, rng: rng.geometric(1 - np.exp(-1 / t), size) - rng.geometric(1 - np.exp(-1 / t), size) + 1,
            id="off by one",
        ),
    ],
)
def test_discrete_laplace_sampler_rejects_wrong_laws(wrong):
    result = exercises.check_discrete_laplace_sampler(wrong)
    assert not result.passed and "at t =" in result.message


def test_the_five_point_law_passed_the_moment_tests_alone():
    """The law of the issue: it meets every z-test of the first moments, so only the
    goodness-of-fit test can reject it (its message names the shape of the law)."""
    result = exercises.check_discrete_laplace_sampler(_five_point)
    assert "chi-squared" in result.message


def test_chi_squared_false_fail_rate_of_a_correct_sampler():
    """30 seeds at 5000 draws: a correct sampler fails each with probability <= 7.4e-5,
    so a single failure among 30 has probability below 2.3e-3."""
    fails = sum(
        not exercises.check_discrete_laplace_sampler(ref.discrete_laplace_sampler, trials=5000, rng=s).passed
        for s in range(30)
    )
    assert fails == 0


# --------------------------------------------------------------------------- strict integers


def _as_float(func):
    return lambda *a: float(func(*a))


@pytest.mark.parametrize(
    "name", ["check_width_rule", "check_smallest_width", "check_warmup_rounds", "check_decomposition"]
)
def test_a_float_is_not_an_integer_answer(name):
    func, kwargs = ref.PASSING[name]
    if name == "check_decomposition":
        wrong = lambda r, b, L: [(float(lv), float(nd)) for lv, nd in func(r, b, L)]  # noqa: E731
    else:
        wrong = _as_float(func)
    result = getattr(exercises, name)(wrong, **kwargs)
    assert not result.passed
    assert "integer" in result.message and "float" in result.message


@pytest.mark.parametrize("name", ["check_width_rule", "check_smallest_width", "check_warmup_rounds"])
def test_a_numpy_integer_is_an_integer_answer(name):
    func, kwargs = ref.PASSING[name]
    assert getattr(exercises, name)(lambda *a: np.int64(func(*a)), **kwargs).passed


def test_width_checkers_reject_a_float_width_of_twelve():
    result = exercises.check_width_rule(lambda f, tau: 12.0)
    assert not result.passed and "float" in result.message and "12" not in result.message.split("got")[0]


def test_composition_counterexample_levels_must_be_an_int():
    result = exercises.check_composition_counterexample(lambda: (0.05, 1e-9, 100.0))
    assert not result.passed and "integer" in result.message


@pytest.mark.parametrize("shift", [-1, +1])
def test_smallest_width_rejects_off_by_one_the_same_way(shift):
    result = exercises.check_smallest_width(lambda f, tau: max(1, ref.smallest_width(f, tau) + shift))
    assert not result.passed


def test_smallest_width_off_by_one_messages_carry_no_direction():
    low = exercises.check_smallest_width(lambda f, tau: max(1, ref.smallest_width(f, tau) - 1))
    high = exercises.check_smallest_width(lambda f, tau: ref.smallest_width(f, tau) + 1)
    assert low.message.split(".")[0] == high.message.split(".")[0]


@pytest.mark.parametrize(
    "wrong",
    [
        pytest.param(lambda C1, Cs, eta, g: max(0, ref.warmup_rounds(C1, Cs, eta, g) - 1), id="floor"),
        pytest.param(lambda C1, Cs, eta, g: ref.warmup_rounds(C1, Cs, eta, g) + 1, id="one more"),
        pytest.param(lambda C1, Cs, eta, g: ref.warmup_rounds(C1, Cs, eta, 1 - g), id="gamma and 1 - gamma swapped"),
    ],
)
def test_warmup_rounds_rejects_plausible_slips(wrong):
    assert not exercises.check_warmup_rounds(wrong).passed


def test_width_rule_rejects_the_bracket_with_a_small_constant():
    assert not exercises.check_width_rule(lambda f, tau: sketch.oracle_width(f, tau, constant=2.0)).passed


def test_no_failing_message_quotes_a_reference_number():
    """The reference's own outputs (to 4 significant digits) appear in no hint."""
    cases = {
        "check_rdp_conversion": (
            ref.rdp_conversion,
            ref.rdp_conversion(np.array([2.0, 4.0]), np.array([0.1, 0.3]), 1e-5),
        ),
        "check_exact_delta": (ref.exact_delta, ref.exact_delta(0.05, 0.5, 3)),
    }
    for name, (func, value) in cases.items():
        msg = getattr(exercises, name)(_scaled(func, 1.01)).message
        assert f"{value:.4g}" not in msg
