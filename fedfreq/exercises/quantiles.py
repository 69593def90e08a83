"""Checkers for the exercises on federated quantiles: the Haar decoder and the private CDF."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int
from ..quantiles import (
    cpbm_coordinate_variance,
    haar_transform,
    histogram_user_vectors,
    prefix_variance,
)
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, checker, not_yet, passed

__all__ = ["check_dht_decoder", "check_private_cdf"]


@checker
def check_dht_decoder(
    decoder: Callable[[int, np.ndarray], np.ndarray],
    *,
    b: int = 4,
    trials: int = 20,
    rng: np.random.Generator | int | None = 0,
) -> CheckResult:
    r"""Self-check for the exercise "implement the Haar decoder".

    ``decoder(n, coeffs)`` must return the :math:`2^b` leaf counts from the public
    number of users ``n`` and the rescaled coefficients :math:`a_L - a_R` in heap order
    (as :func:`fedfreq.quantiles.haar_transform` returns them). ``trials`` random integer
    histograms are encoded and the decoder's output compared exactly (deterministic: no
    false fails). The hint says which property fails, never the answer.

    Examples
    --------
    >>> check_dht_decoder(lambda n, h: np.zeros(16)).passed
    False
    """
    b = check_int("b", b, low=1, high=20)
    trials = check_int("trials", trials, low=1, high=MAX_TRIALS, reason="the checker runs your code that many times")
    g = as_generator(rng)
    nb = 2**b
    for _ in range(trials):
        counts = g.integers(0, 20, size=nb)
        n = int(counts.sum())
        _, coeffs = haar_transform(counts)
        try:
            got = np.asarray(attempt(decoder, n, coeffs.copy()), dtype=float)
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"expected {nb} leaf counts (numbers)")
        if got.shape != (nb,):
            return not_yet(f"expected {nb} leaf counts, got shape {got.shape}")
        if not np.allclose(got.sum(), n):
            return not_yet(
                "the decoded counts do not add up to n: check the base coefficient "
                "(is it the total or the mean of the leaves?)"
            )
        if not np.allclose(got, counts):
            return not_yet(
                "the counts add up to n but individual leaves are wrong: check the "
                "scaling of each level's coefficient and the sign for left/right children"
            )
    return passed(f"your decoder reproduces {trials} random histograms with 2^{b} bins exactly")


@checker
def check_private_cdf(
    func: Callable[[np.ndarray, int, int, float, np.random.Generator], np.ndarray],
    *,
    trials: int = 600,
    rng: np.random.Generator | int | None = 20260404,
) -> CheckResult:
    r"""Self-check for the exercise "the private CDF from Haar coefficients, end to end".

    ``func(bins, b, m, theta, rng)`` receives the 0-based bins of :math:`n` users
    (integers in :math:`0, \dots, 2^b - 1`), must encode each user's bin by its Haar
    coefficients :math:`a_L - a_R`, privatise every coordinate with the cPBM
    (:math:`C = 1`, parameters ``m`` and ``theta``), add the reports, decode, and return
    the estimated CDF :math:`\hat c[1:v]/n`, :math:`v = 1, \dots, 2^b` (shape
    :math:`(2^b,)`), drawing its noise from the generator ``rng``.

    The check runs ``trials`` attempts on a fixed skewed population of 60 users
    (:math:`b = 3`, :math:`m = 8`, :math:`\theta = 0.2`). The last entry must equal 1 (the
    number of users is public). For each of the seven other prefixes, the mean of the
    attempts must lie within 4.5 standard errors of the true CDF (exact standard errors
    from :func:`fedfreq.quantiles.prefix_variance`) and the sample variance within
    :math:`5\sqrt{2/(\text{trials}-1)}` (29 % at 600 trials) of the exact variance of
    coordinate-wise cPBM noise. A correct attempt fails on a random seed with probability
    at most about :math:`7 \cdot 2(1-\Phi(4.5)) + 7 \cdot 2(1 - \Phi(5)) \approx 5.2\times10^{-5}`
    (union bound over the 14 CLT-normal tests). The message says which property fails
    (the total, the bias, or the spread), never the expected values, and a spread that is
    too large or too small gets the same message.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def pipeline(bins, b, m, theta, rng):
    ...     return np.zeros(2**b)
    >>> check_private_cdf(pipeline, trials=200).passed
    False
    """
    trials = check_int("trials", trials, low=200, high=MAX_TRIALS, reason="the checker runs your code that many times")
    g = as_generator(rng)
    b, m, theta = 3, 8, 0.2
    nb = 2**b
    counts = np.array([30, 12, 6, 4, 3, 2, 2, 1])
    n = int(counts.sum())
    bins = np.repeat(np.arange(nb), counts)
    cdf = np.cumsum(counts) / n
    u = histogram_user_vectors(bins, encoding="dht", b=b).astype(float)
    coord_var = cpbm_coordinate_variance((u**2).sum(axis=0), n=n, m=m, theta=theta)
    var = prefix_variance(np.arange(1, nb + 1), encoding="dht", b=b, coordinate_variance=coord_var) / n**2
    est = np.empty((trials, nb))
    for t in range(trials):
        try:
            got = np.asarray(attempt(func, bins.copy(), b, m, theta, g), dtype=float)
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"expected the {nb} values of the estimated CDF (numbers)")
        if got.shape != (nb,) or not np.all(np.isfinite(got)):
            return not_yet(f"expected {nb} finite values of the estimated CDF, got shape {got.shape}")
        est[t] = got
    if not np.allclose(est[:, -1], 1.0, rtol=0.0, atol=1e-9):
        return not_yet(
            "your estimated CDF does not end at exactly 1 in every run: the number of users is "
            "public, so the last prefix carries no noise. Check how the base coefficient enters "
            "your decoder."
        )
    se = np.sqrt(var[:-1] / trials)
    z = (est[:, :-1].mean(axis=0) - cdf[:-1]) / se
    if np.max(np.abs(z)) > 4.5:
        worst = int(np.argmax(np.abs(z))) + 1
        return not_yet(
            f"biased: over {trials} runs the average of your CDF at prefix v = {worst} (among others) "
            "is more than 4.5 standard errors from the true CDF. Check the centring and the scale "
            "of the decoded sums, the scale of each level's coefficient, and that no clipping "
            "shrinks the coefficients."
        )
    ratio = est[:, :-1].var(axis=0, ddof=1) / var[:-1]
    tol = 5.0 * math.sqrt(2.0 / (trials - 1))
    if np.max(np.abs(ratio - 1.0)) > tol:
        return not_yet(
            "unbiased, but the spread of your estimates is not that of coordinate-wise cPBM noise "
            "with these m and theta: check that every coordinate gets its own independent "
            "binomial draws with the given parameters, and the scale of the decoder."
        )
    return passed(
        f"the total is exact, unbiased (max |z| = {np.max(np.abs(z)):.2f} < 4.5) and the "
        f"variance ratios lie within {tol:.0%} of 1 over {trials} runs"
    )
