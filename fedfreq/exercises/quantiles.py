"""Checker for the exercise on decoding the Haar (DHT) encoding of a histogram."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from .._validation import check_int
from ..quantiles import haar_transform
from ._result import MAX_TRIALS, CheckResult, StudentError, attempt, not_yet, passed

__all__ = ["check_dht_decoder"]


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
