"""Checker for the exercise on the quantile level of the multi-round protocol."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from ..cpbm import optimal_quantile
from ._result import CheckResult, StudentError, attempt, not_yet, passed

__all__ = ["check_multiround_level"]


def check_multiround_level(
    func: Callable[[int, int, int, int, float], float],
    *,
    rng: np.random.Generator | int | None = 20260405,
) -> CheckResult:
    r"""Self-check for the exercise "the optimal quantile level of the multi-round protocol".

    ``func(D, m, N, R, theta)`` must return the quantile level :math:`\gamma^*` that
    minimises the Eq. 4 bound of the *averaged* estimator :math:`\frac1R\sum_r \hat
    x^{(r)}` of :math:`R` rounds with :math:`N` users each (the anonymous submission
    on optimal contribution bounding, Corollary 1). Checked on nine designs (three
    fixed, six random) to 1e-9 absolute (deterministic: no false fails); the message
    never reveals the expected level.

    Examples
    --------
    >>> from fedfreq.cpbm import optimal_quantile
    >>> print(check_multiround_level(lambda D, m, N, R, theta: optimal_quantile(D=D, m=m, n=N * R, theta=theta)))
    PASS: ...
    """
    gen = as_generator(rng)
    cases = [(100, 15, 1000, 100, 0.2), (200, 30, 500, 4, 0.2), (50, 8, 2000, 10, 0.25)]
    cases += [
        (
            int(gen.integers(10, 400)),
            int(gen.integers(4, 64)),
            int(gen.integers(500, 5000)),
            int(gen.integers(2, 200)),
            float(gen.uniform(0.15, 0.25)),
        )
        for _ in range(6)
    ]
    for i, (D, m, N, R, theta) in enumerate(cases, 1):
        try:
            got = float(attempt(func, D, m, N, R, theta))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: a quantile level is one number")
        if not math.isfinite(got) or not 0.0 <= got <= 1.0:
            return not_yet(f"case {i}: a quantile level must lie in [0, 1]; got {got!r}")
        want = optimal_quantile(D=D, m=m, n=N * R, theta=theta)
        if abs(got - want) > 1e-9:
            hint = (
                "your level ignores the number of rounds: the averaged estimator's noise comes from all users"
                if abs(got - optimal_quantile(D=D, m=m, n=N, theta=theta)) < 1e-9
                else "differentiate the Eq. 4 bound of the averaged estimator with respect to C"
            )
            return not_yet(f"case {i} of {len(cases)}, R = {R}: {hint}")
    return passed(f"your level is optimal in all {len(cases)} designs")
