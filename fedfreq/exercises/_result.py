"""The one result type of every exercise checker, and the helpers they share."""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy import stats

__all__ = ["CheckResult"]


#: Largest number of trials (or simulated users) a checker accepts: a checker runs the
#: student's code that many times, which must finish in minutes, not days.
MAX_TRIALS = 100_000

#: Seconds one call of the student's function may take before the checker stops it and
#: says so (only in the main thread of a Unix process, where a timer signal is available).
#: The checkers call the student's function on small inputs, which takes milliseconds.
STUDENT_CALL_LIMIT = 30.0


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
    except StudentError:
        raise
    except Exception as exc:  # the student's code failing is feedback, not an error
        raise StudentError(not_yet(f"your function raised {type(exc).__name__}: {exc}")) from exc


class _StudentTimeout(BaseException):
    """Raised by the timer inside a student's function that runs too long (a BaseException,
    so that an ``except Exception`` in the student's code cannot swallow it)."""


def _on_timer(signum, frame):
    raise _StudentTimeout


def _describe(value: Any) -> str:
    """What the student's function returned, in words (never the value itself)."""
    if value is None:
        return "None (is a return statement missing?)"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


def _unusable(value: Any) -> str | None:
    """Why a returned value can never be an answer, or None if it might be one."""
    if value is None or isinstance(value, str | bytes):
        return f"your function returned {_describe(value)}; it must return numbers"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) > 2**1023:
        return "your function returned an integer too large for a float"
    return None


def _timer_available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class _StudentTimer:
    """For the duration of a checker run: each call of the student's function is stopped
    after :data:`STUDENT_CALL_LIMIT` seconds. A caller's own timer (e.g. a test runner's)
    is suspended for the run and resumed afterwards with the time it had left."""

    def __enter__(self) -> _StudentTimer:
        self.active = _timer_available()
        if self.active:
            self.outer_handler = signal.signal(signal.SIGALRM, _on_timer)
            self.outer_left, self.outer_interval = signal.setitimer(signal.ITIMER_REAL, 0)
            self.start = time.monotonic()
        return self

    def call(self, func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if not self.active:
            return func(*args, **kwargs)
        signal.setitimer(signal.ITIMER_REAL, STUDENT_CALL_LIMIT)
        try:
            return func(*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def __exit__(self, *exc: Any) -> None:
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.outer_handler)
            if self.outer_left > 0:
                left = max(self.outer_left - (time.monotonic() - self.start), 1e-6)
                signal.setitimer(signal.ITIMER_REAL, left, self.outer_interval)


F = TypeVar("F", bound=Callable[..., CheckResult])


def checker(check: F) -> F:
    """Make an exercise checker give feedback, never a traceback, on any attempt.

    The checker's first parameter is the student's attempt. A non-callable attempt where
    a function is expected, a function that raises, runs longer than
    :data:`STUDENT_CALL_LIMIT` seconds, or returns ``None``, a string or an integer
    beyond the float range gets a failing :class:`CheckResult` saying so. Any other
    exception raised while the checker works on what the function returned (a
    ``TypeError`` from a wrong type, an ``OverflowError``, a shape mismatch, ...) becomes
    a failing result too, without the exception's text (it could show a reference
    value). Errors in the checker's own parameters (``trials``, ``rng``, ...) are raised
    before the first call of the student's function, as usual.
    """
    sig = inspect.signature(check)
    first = next(iter(sig.parameters))
    wants_function = "Callable" in str(sig.parameters[first].annotation)

    @functools.wraps(check)
    def wrapper(*args: Any, **kwargs: Any) -> CheckResult:
        bound = sig.bind(*args, **kwargs)
        student = bound.arguments[first]
        if wants_function and not callable(student):
            return not_yet(f"{first} must be a function (see the exercise); got {_describe(student)}")
        state: dict[str, Any] = {"calls": 0, "last": None}
        timer = _StudentTimer()

        def guarded(*a: Any, **k: Any) -> Any:
            state["calls"] += 1
            try:
                value = timer.call(student, a, k)
            except _StudentTimeout:
                raise StudentError(
                    not_yet(f"one call of your function took more than {STUDENT_CALL_LIMIT:g} s; it must be faster")
                ) from None
            except StudentError:
                raise
            except Exception as exc:  # the student's code failing is feedback, not an error
                raise StudentError(not_yet(f"your function raised {type(exc).__name__}: {exc}")) from exc
            state["last"] = value
            if (why := _unusable(value)) is not None:
                raise StudentError(not_yet(why))
            return value

        if wants_function:
            bound.arguments[first] = functools.wraps(student)(guarded) if inspect.isfunction(student) else guarded
        try:
            with timer:
                return check(*bound.args, **bound.kwargs)
        except StudentError as err:
            return err.result
        except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
            if not state["calls"]:
                raise  # an error in the checker's own parameters, before the attempt ran
            return not_yet(
                f"the checker could not use what your function returned ({_describe(state['last'])}: "
                f"{type(exc).__name__}); check the type and shape the exercise asks for"
            )

    return wrapper  # type: ignore[return-value]


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


def student_int(value: Any, what: str, *, low: int, high: int) -> int:
    """The student's ``value`` as an int in ``[low, high]``, strictly: a Python or numpy
    integer (not a bool, and not a float even when it is whole, such as ``12.0``).

    Raises :class:`StudentError` with a hint (that never shows the expected value) otherwise.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise StudentError(
            not_yet(
                f"{what} must be an integer (a Python int or a numpy integer); got {_describe(value)}. "
                "Round where the exercise says to (e.g. math.ceil) and return an int, not a float."
            )
        )
    k = int(value)
    if not low <= k <= high:
        raise StudentError(not_yet(f"{what} must be an integer in [{low}, {high}]"))
    return k
