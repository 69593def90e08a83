"""Every exercise checker answers any attempt with feedback, never with a traceback.

A student's function may return ``None`` (a forgotten ``return``), a string, an integer
beyond the float range, NaN, inf, an array of the wrong shape, a generator, or raise,
or run for ever. Every checker whose attempt is a function turns each of these into a
failing :class:`~fedfreq.exercises.CheckResult` with a message that says what is wrong
with the attempt, and no message shows the reference answer.
"""

from __future__ import annotations

import inspect
import math
import time

import numpy as np
import pytest

from fedfreq import exercises
from fedfreq.exercises import CheckResult, _result

# checkers whose valid call needs more than the attempt (the rest take the attempt alone)
_EXTRA = {
    "check_bitpush_estimator": {"n": 1000, "trials": 100},
    "check_split_encoding": {"trials": 60},
}


def _function_checkers() -> list[str]:
    out = []
    for name in exercises.__all__:
        obj = getattr(exercises, name)
        if not name.startswith("check_"):
            continue
        first = next(iter(inspect.signature(obj).parameters.values()))
        if "Callable" in str(first.annotation):
            out.append(name)
    return out


CHECKERS = _function_checkers()


def _raises(*_):
    raise ZeroDivisionError("a bug in the attempt")


def _hangs(*_):
    time.sleep(3600)


BAD_ATTEMPTS = {
    "returns None": (lambda *a: None, "None"),
    "returns a string": (lambda *a: "0.5", "str"),
    "returns a huge int": (lambda *a: 10**400, "too large"),
    "returns NaN": (lambda *a: math.nan, None),
    "returns inf": (lambda *a: math.inf, None),
    "returns a wrong shape": (lambda *a: np.zeros((3, 5, 7)), None),
    "returns a generator": (lambda *a: iter(()), None),
    "raises": (_raises, "ZeroDivisionError"),
}


def test_every_function_checker_is_covered():
    assert len(CHECKERS) >= 30, CHECKERS


@pytest.mark.parametrize("what", sorted(BAD_ATTEMPTS))
@pytest.mark.parametrize("name", CHECKERS)
def test_a_bad_attempt_gets_feedback(name, what):
    func, says = BAD_ATTEMPTS[what]
    result = getattr(exercises, name)(func, **_EXTRA.get(name, {}))
    assert isinstance(result, CheckResult)
    assert not result.passed, f"{name} passed an attempt that {what}"
    assert result.message.strip(), "a failing check must say what is wrong"
    if says is not None:
        assert says in result.message, result.message


@pytest.mark.parametrize("name", ["check_rr_debias", "check_exact_delta", "check_dht_decoder"])
def test_a_hanging_attempt_is_stopped(name, monkeypatch):
    monkeypatch.setattr(_result, "STUDENT_CALL_LIMIT", 0.2)
    start = time.monotonic()
    result = getattr(exercises, name)(_hangs)
    assert time.monotonic() - start < 5.0
    assert not result.passed and "took more than 0.2 s" in result.message


def test_a_non_function_attempt_gets_feedback():
    result = exercises.check_rr_debias(3)
    assert not result.passed and "must be a function" in result.message


def test_the_checkers_own_parameters_are_still_refused():
    with pytest.raises(ValueError, match="trials"):
        exercises.check_rr_debias(lambda r, e: 0.0, trials=-1)


def test_unusable_output_feedback_hides_the_checkers_internals():
    """An attempt whose output breaks the checker's arithmetic in a way no checker
    foresees gets a message that names what it returned, not the exception text of the
    checker (which could contain a reference value)."""

    class Odd:
        def __float__(self):
            raise ZeroDivisionError("reference value 0.123456")

        def __array__(self, *a, **k):
            raise ZeroDivisionError("reference value 0.123456")

    result = exercises.check_clipped_poisson_mean(lambda lam, c: Odd())
    assert not result.passed
    assert "Odd" in result.message and "ZeroDivisionError" in result.message
    assert "0.123456" not in result.message, result.message


def test_an_outer_timer_survives_a_checker():
    """A checker's own timer suspends and then resumes a caller's (e.g. a test runner's)."""
    import signal

    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        exercises.check_rdp_conversion(lambda o, r, d: 0.0)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0.0 < left < 30.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert not fired
