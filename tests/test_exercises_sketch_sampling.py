"""The checkers of the count-sketch and sample-and-threshold chapters accept right answers,
reject typical wrong ones without revealing the answer, and refuse bad arguments."""

import math

import numpy as np
import pytest
from scipy import stats

from fedfreq import accounting, sample_threshold, sketch
from fedfreq.exercises import check_dp_sketch_sigma, check_exact_delta, check_smallest_width
from fedfreq.exercises.sketch import _smallest_width

# --------------------------------------------------------------------------- smallest width


def smallest_width(freqs, tau):
    s = np.sort(freqs)[::-1] ** 2
    tail = np.append(np.cumsum(s[::-1])[::-1][1:], 0.0)  # tail[W - 1] = sum_{i > W}
    widths = np.arange(1, s.size + 1)
    return int(widths[np.argmax(tail <= tau**2 * widths)])


def tail_from_w(freqs, tau):  # sums the entries ranked W and after: one too many
    s = np.sort(freqs)[::-1] ** 2
    tail = np.cumsum(s[::-1])[::-1]
    widths = np.arange(1, s.size + 1)
    return int(widths[np.argmax(tail <= tau**2 * widths)])


def unsorted(freqs, tau):
    tail = np.append(np.cumsum((freqs**2)[::-1])[::-1][1:], 0.0)
    widths = np.arange(1, freqs.size + 1)
    return int(widths[np.argmax(tail <= tau**2 * widths)])


def test_smallest_width_accepts_the_exact_minimum_and_binary_search():
    assert check_smallest_width(smallest_width).passed

    def bisect(freqs, tau):  # E(W) is non-increasing in W, so bisection works too
        lo, hi = 1, freqs.size
        while lo < hi:
            mid = (lo + hi) // 2
            if math.sqrt(sketch.tail_energy(freqs, mid) / mid) <= tau:
                hi = mid
            else:
                lo = mid + 1
        return lo

    assert check_smallest_width(bisect).passed
    assert check_smallest_width(smallest_width, rng=7).passed


def test_smallest_width_rejects_typical_slips_with_a_named_hint():
    res = check_smallest_width(tail_from_w)
    assert not res.passed and "where the tail starts" in res.message
    res = check_smallest_width(unsorted)
    assert not res.passed and "order of the entries" in res.message
    res = check_smallest_width(lambda f, t: sketch.oracle_width(f, t))
    assert not res.passed and "Eq. (2)" in res.message
    for bad in (lambda f, t: smallest_width(f, t) + 2, lambda f, t: max(1, smallest_width(f, t) - 2)):
        res = check_smallest_width(bad)
        assert not res.passed and "Check the definition of E(W)" in res.message
    for broken in (lambda f, t: 1 / 0, lambda f, t: -3, lambda f, t: 2.5, lambda f, t: "wide"):
        assert not check_smallest_width(broken).passed


def test_smallest_width_gives_no_direction_and_no_answer():
    want = _smallest_width(sketch.zipf_frequencies(2000, 1.1), 0.01)[0]
    low = check_smallest_width(lambda f, t: max(1, want - 5))
    high = check_smallest_width(lambda f, t: want + 5)
    assert not low.passed and not high.passed and low.message == high.message
    assert str(want) not in low.message.split(":", 1)[1].replace("(d = 2000, tau = 0.01)", "")
    # a constant one above the answer gets no off-by-one hint (hints need the whole function)
    assert "tail starts" not in check_smallest_width(lambda f, t: want + 1).message


def test_smallest_width_refuses_a_bad_rng():
    for bad in (-1, "seed", True, 1.5):
        with pytest.raises(ValueError, match="rng"):
            check_smallest_width(smallest_width, rng=bad)


# --------------------------------------------------------------------------- DP sketch noise


def analytic(eps, delta, rows, n, k):
    return accounting.gaussian_sigma(eps, delta, sensitivity=math.sqrt(k * rows) / n)


def textbook(eps, delta, rows, n, k):
    return math.sqrt(2 * math.log(1.25 / delta)) * math.sqrt(k * rows) / (n * eps)


def test_dp_sigma_accepts_the_analytic_and_the_textbook_calibrations():
    assert check_dp_sketch_sigma(analytic).passed
    assert check_dp_sketch_sigma(textbook).passed
    # the paper's formula with its proof's 1/n (and sqrt(k) for repeated participation)
    assert check_dp_sketch_sigma(
        lambda e, d, L, n, k: math.sqrt(2) * math.sqrt(k * L * math.log(1 / d)) / (n * e)
    ).passed
    assert check_dp_sketch_sigma(lambda e, d, L, n, k: sketch.dp_sketch_sigma(e, d, rows=L, n=n, participations=k))


def test_dp_sigma_rejects_wrong_calibrations():
    # the statement's printed scale, without 1/n
    res = check_dp_sketch_sigma(lambda e, d, L, n, k: math.sqrt(2) * math.sqrt(L * math.log(1 / d)) / e)
    assert not res.passed and "design 1 " in res.message
    res = check_dp_sketch_sigma(lambda e, d, L, n, k: analytic(e, d, L, n, 1))
    assert not res.passed and "scales with participations" in res.message
    res = check_dp_sketch_sigma(lambda e, d, L, n, k: analytic(e, d, L, n, k) * 1000 / n)
    assert not res.passed and "scales with n" in res.message
    for bad in (
        lambda e, d, L, n, k: analytic(e, d, 1, n, k),  # sensitivity of one row
        lambda e, d, L, n, k: analytic(e, d, L, n, k) / 2,  # too little noise
        lambda e, d, L, n, k: 0.0,
        lambda e, d, L, n, k: math.nan,
        lambda e, d, L, n, k: [1.0, 2.0],
        lambda e, d, L, n, k: 1 / 0,
    ):
        assert not check_dp_sketch_sigma(bad).passed


def test_dp_sigma_same_message_on_both_sides_and_no_answer():
    low = check_dp_sketch_sigma(lambda e, d, L, n, k: 0.8 * analytic(e, d, L, n, k))
    high = check_dp_sketch_sigma(lambda e, d, L, n, k: 2.5 * analytic(e, d, L, n, k))
    assert not low.passed and not high.passed and low.message == high.message
    ref = analytic(0.5, 1e-6, 5, 1000, 1)
    assert f"{ref:.3g}" not in low.message and f"{ref:.2e}" not in low.message


# --------------------------------------------------------------------------- exact delta


def brute_delta(p, eps, tau, k_max=120):
    """Brute force: hockey-stick divergences of the thresholded binomials, k = 1..k_max."""
    best = 0.0
    for k in range(1, k_max):
        v = np.arange(k + 1)
        P, Q = stats.binom.pmf(v, k, p), stats.binom.pmf(v, k - 1, p)
        P = np.concatenate([[P[:tau].sum()], P[tau:]])
        Q = np.concatenate([[Q[:tau].sum()], Q[tau:]])
        for a, b in ((P, Q), (Q, P)):
            best = max(best, float(np.maximum(a - math.exp(eps) * b, 0).sum()))
    return best


def test_exact_delta_accepts_brute_force_and_the_package():
    assert check_exact_delta(brute_delta).passed
    assert check_exact_delta(sample_threshold.delta_exact).passed


def test_exact_delta_names_typical_slips():
    res = check_exact_delta(lambda p, e, t: brute_delta(p, e, t + 1))
    assert not res.passed and "count equal to tau" in res.message
    res = check_exact_delta(lambda p, e, t: brute_delta(p, e, 1))
    assert not res.passed and "suppressed counts" in res.message
    res = check_exact_delta(lambda p, e, t: brute_delta(p, e, t, k_max=t + 1))
    assert not res.passed and "worst number of copies" in res.message
    for bad in (
        lambda p, e, t: 0.0,
        lambda p, e, t: 1.01 * sample_threshold.delta_exact(p, e, t),
        lambda p, e, t: 2.0,
        lambda p, e, t: math.nan,
        lambda p, e, t: 1 / 0,
    ):
        res = check_exact_delta(bad)
        assert not res.passed and "NOT YET" in str(res)


def test_exact_delta_same_message_on_both_sides_and_no_answer():
    low = check_exact_delta(lambda p, e, t: 0.99 * sample_threshold.delta_exact(p, e, t))
    high = check_exact_delta(lambda p, e, t: 1.01 * sample_threshold.delta_exact(p, e, t))
    assert not low.passed and not high.passed and low.message == high.message
    # a function right at one setting only gets no pattern hint
    probe = check_exact_delta(lambda p, e, t: sample_threshold.delta_exact(p, e, 2))
    assert "count equal to tau" not in probe.message
    for p, e, t in ((0.1, 1.0, 5), (0.105, 1.0, 8)):  # (setting 1 has delta = sampling_rate)
        want = sample_threshold.delta_exact(p, e, t)
        assert all(f"{want:{fmt}}" not in low.message for fmt in (".2g", ".3g", ".4g", ".2e", ".3e"))
