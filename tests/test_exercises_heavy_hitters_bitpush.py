"""The checkers of the heavy-hitters and bit-pushing exercises accept right answers, reject
typical wrong ones without revealing the answer, and refuse bad arguments."""

import math

import numpy as np
import pytest

from fedfreq import bitpush, heavy_hitters
from fedfreq.exercises import (
    check_composition_counterexample,
    check_eq1_counterexample,
    check_fixed_population_variance,
    check_optimal_composition,
    check_stochastic_rounding,
)
from fedfreq.exercises._result import two_sided_false_fail

# --------------------------------------------------------------------------- optimal composition


def kov(epsilon, delta, levels, total_epsilon, *, keep_delta=True):
    """A student's direct transcription of the Kairouz-Oh-Viswanath formula."""
    a = math.exp(epsilon) / (1 + math.exp(epsilon))
    b = 1 - a
    s = sum(
        math.comb(levels, j) * max(0.0, a**j * b ** (levels - j) - math.exp(total_epsilon) * a ** (levels - j) * b**j)
        for j in range(levels + 1)
    )
    if not keep_delta:
        return s
    k = (1 - delta) ** levels
    return 1 - k + k * s


def test_optimal_composition_accepts_package_and_direct_formula():
    assert check_optimal_composition(heavy_hitters.optimal_composition_delta).passed
    result = check_optimal_composition(kov)
    assert result.passed, result.message


def test_optimal_composition_rejects_wrong_attempts_alike_on_both_sides():
    high = check_optimal_composition(lambda e, d, L, t: min(1.0, 1.01 * kov(e, d, L, t)))
    low = check_optimal_composition(lambda e, d, L, t: 0.99 * kov(e, d, L, t))
    assert not high.passed and not low.passed
    assert high.message == low.message  # no bisection towards the answer
    no_delta = check_optimal_composition(lambda e, d, L, t: kov(e, d, L, t, keep_delta=False))
    assert not no_delta.passed and "right for delta = 0" in no_delta.message
    for bad in (
        lambda e, d, L, t: L * d,  # basic composition only
        lambda e, d, L, t: kov(e, d, L, -t),  # wrong sign of the exponent
        lambda e, d, L, t: np.array([0.1, 0.2]),
        lambda e, d, L, t: 1 / 0,
        lambda e, d, L, t: 2.0,
    ):
        result = check_optimal_composition(bad)
        assert not result.passed and str(result).startswith("NOT YET")


def test_optimal_composition_message_has_no_reference_value():
    result = check_optimal_composition(lambda e, d, L, t: 0.5 * kov(e, d, L, t))
    ref = heavy_hitters.optimal_composition_delta(0.1, 0.0, 10, 0.6)
    for text in (f"{ref:.3g}", f"{ref:.2e}", f"{ref:.4f}"):
        assert text not in result.message


def test_optimal_composition_refuses_bad_rng():
    with pytest.raises(ValueError, match="rng"):
        check_optimal_composition(kov, rng=-1)


# --------------------------------------------------------------------------- the printed advanced composition


def test_counterexample_found_and_not_found():
    assert check_composition_counterexample(lambda: (0.05, 1e-9, 100)).passed
    assert check_composition_counterexample(lambda: (0.02, 1e-9, 1000)).passed
    held = [
        check_composition_counterexample(lambda p=p: p) for p in ((0.5, 1e-6, 2), (0.1, 1e-8, 10), (0.2, 1e-10, 50))
    ]
    assert not any(r.passed for r in held)
    assert len({r.message for r in held}) == 1  # the same hint wherever the bound holds


@pytest.mark.parametrize(
    "point,name",
    [
        ((1.5, 1e-6, 10), "epsilon"),
        ((0.0, 1e-6, 10), "epsilon"),
        ((0.1, 0.0, 2), "delta"),
        ((0.1, 1e-6, 0), "levels"),
        ((0.1, 1e-6, 2.5), "levels"),
        ((math.nan, 1e-6, 2), "epsilon"),
        ((0.1, 0.4, 2), "2 * levels * delta"),
    ],
)
def test_counterexample_out_of_range_is_feedback(point, name):
    result = check_composition_counterexample(lambda: point)
    assert not result.passed and name in result.message


def test_counterexample_bad_returns_are_feedback():
    for bad in (lambda: 1 / 0, lambda: (0.1, 1e-6), lambda: "abc", lambda: None):
        result = check_composition_counterexample(bad)
        assert not result.passed and str(result).startswith("NOT YET")


# --------------------------------------------------------------------------- fixed-population variance


def fixed_variance(values, counts, b):
    x = np.asarray(values)
    n = x.size
    used = [j for j in range(b) if counts[j] > 0]
    part = sum(((x >> j) & 1) * 2**j for j in used)
    lead = 0.0
    for j in used:
        m = np.mean((x >> j) & 1)
        lead += 4**j * m * (1 - m) / counts[j]
    return n / (n - 1) * lead - np.var(part) / (n - 1)


def test_fixed_population_variance_accepts_right_answers():
    assert check_fixed_population_variance(fixed_variance).passed
    assert check_fixed_population_variance(lambda x, c, b: bitpush.finite_population_variance(x, c, b=b)).passed


def test_fixed_population_variance_rejects_wrong_answers():
    def lemma1(values, counts, b):
        m = bitpush.bit_means(values, b=b)
        return float(np.sum(4.0 ** np.arange(b) * m * (1 - m) / counts))

    def whole_variance(values, counts, b):  # ignores that unreported bits are estimated by 0
        x = np.asarray(values)
        n = x.size
        m = bitpush.bit_means(x, b=b)
        c = np.asarray(counts)
        lead = np.sum(np.where(c > 0, 4.0 ** np.arange(b) * m * (1 - m) / np.maximum(c, 1), 0.0))
        return n / (n - 1) * lead - np.var(x) / (n - 1)

    r = check_fixed_population_variance(lemma1)
    assert not r.passed and "i.i.d." in r.message
    r = check_fixed_population_variance(whole_variance)
    assert not r.passed and "unreported" in r.message
    high = check_fixed_population_variance(lambda x, c, b: 1.05 * fixed_variance(x, c, b) + 1e-3)
    low = check_fixed_population_variance(lambda x, c, b: 0.95 * fixed_variance(x, c, b) - 1e-3)
    assert not high.passed and not low.passed and high.message == low.message
    for bad in (lambda x, c, b: math.nan, lambda x, c, b: [1.0, 2.0], lambda x, c, b: x[10**6]):
        assert not check_fixed_population_variance(bad).passed


# --------------------------------------------------------------------------- Eq. (1)


def test_eq1_counterexample():
    assert check_eq1_counterexample(lambda b: np.arange(2**b)).passed  # uniform values break it
    assert check_eq1_counterexample(lambda b: [0] * 99 + [2**b - 1]).passed  # so do sparse ones
    for held in ([7, 7, 6, 7], [3, 3, 3]):
        r = check_eq1_counterexample(lambda b, held=held: held, b=3)
        assert not r.passed
    assert not check_eq1_counterexample(lambda b: [0, 0, 0], b=4).passed


@pytest.mark.parametrize("b", [1, 31, 2.5, math.nan, "10", True])
def test_eq1_refuses_bad_b(b):
    with pytest.raises(ValueError, match="b must"):
        check_eq1_counterexample(lambda b: [1, 2, 3], b=b)


@pytest.mark.parametrize(
    "values",
    [[1, 2, 9], [-1, 2], [], [[1, 2], [3, 0]], [1.5, 2.0], [1.0, math.nan], "abc", None],
)
def test_eq1_bad_populations_are_feedback(values):
    result = check_eq1_counterexample(lambda b: values, b=3)
    assert not result.passed and str(result).startswith("NOT YET")
    assert not check_eq1_counterexample(lambda b: 1 / 0).passed


# --------------------------------------------------------------------------- stochastic rounding


def stochastic(values, frac_bits, rng):
    s = values * 2.0**frac_bits
    f = np.floor(s)
    return (f + (rng.random(s.shape) < s - f)) / 2.0**frac_bits


def test_stochastic_rounding_accepts_unbiased_rounding():
    assert check_stochastic_rounding(stochastic).passed
    # one shared uniform per call is still unbiased value by value
    shared = check_stochastic_rounding(
        lambda v, f, rng: (np.floor(v * 2.0**f) + (rng.random() < v * 2.0**f - np.floor(v * 2.0**f))) / 2.0**f
    )
    assert shared.passed, shared.message
    assert f"{two_sided_false_fail(4.5, 9):.1e}" == "6.1e-05"  # quoted in the docstring


def test_stochastic_rounding_rejects_wrong_roundings():
    def scale(v, f):
        return v * 2.0**f

    attempts = {
        "floor": lambda v, f, rng: np.floor(scale(v, f)) / 2.0**f,
        "nearest": lambda v, f, rng: np.round(scale(v, f)) / 2.0**f,
        "coin": lambda v, f, rng: (np.floor(scale(v, f)) + (rng.random(v.shape) < 0.5)) / 2.0**f,
        "tilted": lambda v, f, rng: (
            (np.floor(scale(v, f)) + (rng.random(v.shape) < 0.9 * (scale(v, f) - np.floor(scale(v, f))))) / 2.0**f
        ),
        "unrounded": lambda v, f, rng: v,
        "too far": lambda v, f, rng: (np.floor(scale(v, f)) - 1) / 2.0**f,
        "wrong shape": lambda v, f, rng: v[:10],
        "raises": lambda v, f, rng: 1 / 0,
    }
    for name, bad in attempts.items():
        result = check_stochastic_rounding(bad, trials=100)
        assert not result.passed, name
    assert "biased" in check_stochastic_rounding(attempts["tilted"]).message
    assert "grid" in check_stochastic_rounding(attempts["unrounded"]).message


@pytest.mark.parametrize("kwargs,name", [({"trials": 10}, "trials"), ({"trials": 2.5}, "trials"), ({"rng": -3}, "rng")])
def test_stochastic_rounding_refuses_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        check_stochastic_rounding(stochastic, **kwargs)
