"""The one result type of every exercise checker, and the helpers they share."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scipy import stats

__all__ = ["CheckResult"]


#: Largest number of trials (or simulated users) a checker accepts: a checker runs the
#: student's code that many times, which must finish in minutes, not days.
MAX_TRIALS = 100_000


@dataclass(frozen=True)
class CheckResult:
    """Outcome of a self-check: ``passed`` and a human-readable ``message``.

    ``bool(result)`` is ``result.passed``, so ``assert check_...(...)`` works, and
    ``str(result)`` starts with ``PASS:`` or ``NOT YET:``.

    Examples
    --------
    >>> print(CheckResult(False, "the estimate is biased"))
    NOT YET: the estimate is biased
    """

    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return ("PASS: " if self.passed else "NOT YET: ") + self.message


def passed(message: str) -> CheckResult:
    """A passing result with ``message``."""
    return CheckResult(True, message)


def not_yet(message: str) -> CheckResult:
    """A failing result with ``message`` (a hint that never contains the answer)."""
    return CheckResult(False, message)


class StudentError(Exception):
    """Raised inside a checker when the student's function fails; carries the result."""

    def __init__(self, result: CheckResult):
        super().__init__(result.message)
        self.result = result


def attempt(func: Callable[..., Any], *args: Any) -> Any:
    """Call the student's ``func``; if it raises, raise :class:`StudentError` with a hint.

    Checkers wrap their body in ``try: ... except StudentError as e: return e.result``,
    so that a failing attempt is feedback, not a traceback.
    """
    try:
        return func(*args)
    except Exception as exc:  # the student's code failing is feedback, not an error
        raise StudentError(not_yet(f"your function raised {type(exc).__name__}: {exc}")) from exc


def two_sided_false_fail(z: float, tests: int = 1) -> float:
    """Union bound on the probability that a correct answer fails ``tests`` z-tests at ``z``.

    Each test rejects a correct (unbiased, CLT-normal) answer with probability
    :math:`2(1 - \\Phi(z))`.

    Examples
    --------
    >>> f"{two_sided_false_fail(4.5, 8):.1e}"
    '5.4e-05'
    """
    return min(1.0, tests * 2.0 * float(stats.norm.sf(z)))


def one_sided_binomial_false_fail(p: float, trials: int, limit: float) -> float:
    """Probability that Binomial(trials, p) / trials exceeds ``limit`` (a correct answer's
    failure rate is at most ``p``, so this bounds its chance of failing the check)."""
    return float(stats.binom.sf(math.floor(limit * trials), trials, p))
