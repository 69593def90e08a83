"""The checkers of the chapters on federated quantiles and on the two protocols."""

import math

import numpy as np
import pytest

from fedfreq import accounting, cpbm
from fedfreq import protocols as pr
from fedfreq import quantiles as fq
from fedfreq.exercises import check_online_threshold, check_private_cdf, check_tffe_rdp, check_warmup_rounds
from fedfreq.exercises._result import two_sided_false_fail

# --------------------------------------------------------------------------- the private CDF


def _cdf(bins, b, m, theta, rng, *, clip=False, base=None, decode_scale=1.0, noise=True):
    u = fq.histogram_user_vectors(bins, encoding="dht", b=b).astype(float)
    if clip:
        u = cpbm.clip_l2(u, 1.0)
    n = len(bins)
    if noise:
        z = rng.binomial(m, 0.5 + theta * u)
        s = (z.sum(axis=0) - m * n / 2) / (m * theta) * decode_scale
    else:
        s = u.sum(axis=0)
    h0 = n / 2**b if base is None else base(n)
    return np.cumsum(fq.inverse_haar_transform(h0, s)) / n


def right_cdf(bins, b, m, theta, rng):
    return _cdf(bins, b, m, theta, rng)


def test_private_cdf_accepts_a_correct_pipeline_on_many_seeds():
    for seed in range(20):
        result = check_private_cdf(right_cdf, trials=300, rng=seed)
        assert result.passed, result.message


def test_private_cdf_rejects_typical_mistakes():
    wrong = {
        "total": lambda bins, b, m, th, rng: _cdf(bins, b, m, th, rng, base=lambda n: float(n)),
        "biased": lambda bins, b, m, th, rng: _cdf(bins, b, m, th, rng, clip=True),
        "biased ": lambda bins, b, m, th, rng: _cdf(bins, b, m, th, rng, decode_scale=1.1),
        "spread": lambda bins, b, m, th, rng: _cdf(bins, b, m, th, rng, noise=False),
        "spread ": lambda bins, b, m, th, rng: _cdf(bins, b, max(1, m // 2), th, rng),
    }
    for key, func in wrong.items():
        result = check_private_cdf(func)
        assert not result.passed, key
        word = {"total": "end at exactly 1", "biased": "biased", "spread": "spread"}[key.strip()]
        assert word in result.message, (key, result.message)
    for func in (lambda *a: np.zeros(4), lambda *a: 1 / 0, lambda *a: "abc", lambda *a: np.full(8, np.nan)):
        assert not check_private_cdf(func).passed


def test_private_cdf_spread_message_has_no_direction():
    # too little and too much noise get the same message
    less = check_private_cdf(lambda bins, b, m, th, rng: _cdf(bins, b, 4 * m, th, rng))
    more = check_private_cdf(lambda bins, b, m, th, rng: _cdf(bins, b, max(1, m // 4), th, rng))
    assert not less.passed and not more.passed and less.message == more.message


def test_private_cdf_messages_do_not_reveal_the_cdf():
    counts = np.array([30, 12, 6, 4, 3, 2, 2, 1])
    cdf = np.cumsum(counts) / counts.sum()
    result = check_private_cdf(lambda *a: np.r_[np.full(7, 0.5), 1.0])
    assert not result.passed
    for value in cdf[:-1]:
        assert f"{value:.2f}" not in result.message and f"{value:.3f}" not in result.message


@pytest.mark.parametrize("bad", [0, 199, 10**9, 2.5, math.nan, "600", True])
def test_private_cdf_bad_trials(bad):
    with pytest.raises(ValueError, match="trials"):
        check_private_cdf(right_cdf, trials=bad)


def test_private_cdf_bad_rng():
    with pytest.raises(ValueError, match="rng"):
        check_private_cdf(right_cdf, rng=-1)


def test_stated_false_fail_probability_private_cdf():
    total = two_sided_false_fail(4.5, 7) + two_sided_false_fail(5.0, 7)
    assert f"{total:.1e}" == "5.2e-05"


# --------------------------------------------------------------------------- the TFFE curve


def right_curve(orders, n, D, b, theta, m, theta_q, m_q, changed):
    k = 2 * b - 1 if changed else 2**b - 1
    return accounting.cpbm_rdp(orders, n=n, theta=theta, m=m, dim=D) + accounting.cpbm_rdp(
        orders, n=n, theta=theta_q, m=m_q, dim=k
    )


def test_tffe_rdp_accepts_the_composition():
    result = check_tffe_rdp(right_curve)
    assert result.passed, result.message
    assert check_tffe_rdp(right_curve, rng=5).passed


def test_tffe_rdp_rejects_wrong_curves_without_numbers():
    wrong = {
        "one step": lambda o, n, D, b, th, m, thq, mq, c: accounting.cpbm_rdp(o, n=n, theta=th, m=m, dim=D),
        "rule": lambda o, n, D, b, th, m, thq, mq, c: right_curve(o, n, D, b, th, m, thq, mq, not c),
        "theta": lambda o, n, D, b, th, m, thq, mq, c: right_curve(o, n, D, b, th, m, th, mq, c),
        "d not D": lambda o, n, D, b, th, m, thq, mq, c: right_curve(o, n, D // 2, b, th, m, thq, mq, c),
        "high": lambda *a: 1.01 * right_curve(*a),
        "low": lambda *a: 0.99 * right_curve(*a),
        "scalar": lambda *a: 1.0,
        "raises": lambda *a: 1 / 0,
    }
    messages = {}
    for key, func in wrong.items():
        result = check_tffe_rdp(func)
        assert not result.passed, key
        messages[key] = result.message
        want = right_curve(np.array([1.5, 2.0, 4.0]), 10_000, 100, 6, 0.2, 30, 0.2, 3, False)
        for value in want:
            assert f"{value:.3f}" not in result.message
    assert messages["high"] == messages["low"]


# --------------------------------------------------------------------------- warm-up rounds


def right_rounds(C1, C_star, eta, gamma):
    if C1 == C_star:
        return 0
    step = eta * (gamma if C1 < C_star else 1.0 - gamma)
    return math.ceil(abs(math.log(C_star / C1)) / step)


def test_warmup_rounds_accepts_the_count():
    assert check_warmup_rounds(right_rounds).passed
    assert check_warmup_rounds(right_rounds, rng=11).passed


def test_warmup_rounds_rejects_off_by_one_on_both_sides_with_one_message():
    high = check_warmup_rounds(lambda *a: right_rounds(*a) + 1)
    low = check_warmup_rounds(lambda *a: max(0, right_rounds(*a) - 1))
    assert not high.passed and not low.passed and high.message == low.message
    assert "37" not in high.message


def test_warmup_rounds_rejects_the_symmetric_step_and_non_integers():
    def symmetric(C1, C_star, eta, gamma):
        return 0 if C1 == C_star else math.ceil(abs(math.log(C_star / C1)) / (eta * gamma))

    result = check_warmup_rounds(symmetric)
    assert not result.passed and "above" in result.message
    assert not check_warmup_rounds(lambda *a: right_rounds(*a) + 0.5).passed
    assert not check_warmup_rounds(lambda *a: -1).passed
    assert not check_warmup_rounds(lambda *a: "many").passed


# --------------------------------------------------------------------------- the online threshold


def right_step(S, N, C, eta, gamma, m_q, theta_q):
    above = (S - m_q * N / 2) / (m_q * theta_q * N)
    return C * math.exp(-eta * ((1 - above) - gamma))


def test_online_threshold_accepts_the_update_and_agrees_with_mffe():
    assert check_online_threshold(right_step).passed
    assert check_online_threshold(right_step, rng=3).passed
    # a sum that decodes to a quarter of the users above C: the level estimate is 0.75
    S = 15 * 1000 / 2 + 15 * 0.2 * 1000 * 0.25
    assert math.isclose(right_step(S, 1000, 20.0, 1.0, 0.9, 15, 0.2), 20.0 * math.exp(0.15), rel_tol=1e-12)


def test_online_threshold_rejects_typical_mistakes():
    wrong = {
        "sign": (
            lambda S, N, C, eta, g, mq, thq: C * math.exp(eta * ((1 - (S - mq * N / 2) / (mq * thq * N)) - g)),
            "grow",
        ),
        "scale": (
            lambda S, N, C, eta, g, mq, thq: C * math.exp(-eta * ((1 - (S - mq * N / 2) / (thq * N)) - g)),
            "should not move",
        ),
        "rate": (
            lambda S, N, C, eta, g, mq, thq: C * math.exp(-((1 - (S - mq * N / 2) / (mq * thq * N)) - g)),
            "step",
        ),
        "no centring": (lambda S, N, C, eta, g, mq, thq: C * math.exp(-eta * ((1 - S / (mq * N)) - g)), "should not"),
    }
    for key, (func, word) in wrong.items():
        result = check_online_threshold(func)
        assert not result.passed and word in result.message, (key, result.message)
    for func in (lambda *a: -1.0, lambda *a: math.nan, lambda *a: "x", lambda *a: 1 / 0):
        assert not check_online_threshold(func).passed


def test_online_threshold_step_message_has_no_direction():
    high = check_online_threshold(lambda S, N, C, eta, g, mq, thq: right_step(S, N, C, 1.1 * eta, g, mq, thq))
    low = check_online_threshold(lambda S, N, C, eta, g, mq, thq: right_step(S, N, C, 0.9 * eta, g, mq, thq))
    assert not high.passed and not low.passed and high.message == low.message


@pytest.mark.parametrize("checker", [check_tffe_rdp, check_warmup_rounds, check_online_threshold])
@pytest.mark.parametrize("bad", [-1, "abc", True, math.nan])
def test_deterministic_checkers_refuse_a_bad_rng(checker, bad):
    with pytest.raises(ValueError, match="rng"):
        checker(lambda *a: 0.0, rng=bad)


def test_online_threshold_matches_one_mffe_round():
    """The reference step is the package's: replay the first update of `mffe`."""
    from fedfreq.kashin import tight_frame

    U = tight_frame(4, 8, rng=0)
    x = np.tile([3.0, 1.0, 0.0, 0.0], (400, 1))
    res = pr.mffe(x, U, rounds=4, theta=0.25, m=16, theta_q=0.25, m_q=16, C0=1.0, lr=1.0, rng=1)
    gamma_hat = res.gamma_hat[0]
    assert math.isclose(res.C[1], res.C[0] * math.exp(-(gamma_hat - res.gamma)), rel_tol=1e-12)
