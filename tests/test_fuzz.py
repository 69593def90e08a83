"""Bad input to every public function gets a clear refusal.

Every public function of every module in ``fedfreq.MODULES`` is called with one valid
call taken from its own docstring example (the first call of the function that the
example makes), and then with one argument at a time replaced by a bad value of every
kind that applies to it: NaN, ±inf, a negative number, zero, an absurd size (1e18),
``None``, a string, a boolean where a number is expected, the string ``"False"`` where a
boolean is expected, an unknown choice where a string is expected, arrays with NaN or
inf, an empty array, an array of the wrong dimension, a non-numeric array.

A bad call passes when it

* raises ``ValueError`` or ``TypeError`` whose message names the parameter as the
  caller spelled it (the keyword, or the signature's name for a positional argument),
  or, for the values that can be legal (negative, zero, huge, empty, wrong dimension),
  returns a result without NaN within the time limit;
* never raises another exception, never warns, and returns (or refuses) within
  ``TIME_LIMIT`` seconds.

Values that are never legal (NaN, inf, ``None`` for a required argument, a string or a
boolean for a number, ``"False"`` for a flag, an unknown choice, non-numeric arrays)
must be refused. ``hypothesis`` adds random bad values of the same kinds on top of the
fixed enumeration. Run ``python tests/test_fuzz.py`` for a report by category.
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import inspect
import math
import signal
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

import fedfreq

TIME_LIMIT = 2.0

# Functions whose first argument is the student's attempt (a callable): a bad value there
# is feedback (a failing CheckResult), not an error.
CHECKER_MODULE = "fedfreq.exercises"


class TimeLimit(Exception):
    pass


def _alarm(signum, frame):
    raise TimeLimit


# --------------------------------------------------------------------------- the functions


def public_functions() -> list[tuple[str, Callable]]:
    seen: set[int] = set()
    out: list[tuple[str, Callable]] = []
    for mod_name in fedfreq.MODULES:
        mod = importlib.import_module(f"fedfreq.{mod_name}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and id(obj) not in seen:
                seen.add(id(obj))
                out.append((f"{mod_name}.{name}", obj))
    return out


class _Recorded(Exception):
    pass


def _record_call(func: Callable) -> tuple[tuple, dict] | None:
    """The first call that ``func``'s own docstring example makes, as (args, kwargs)."""
    module = sys.modules[func.__module__]
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(func, func.__name__, module=module, globs=dict(module.__dict__))
    if not tests or not tests[0].examples:
        return None
    globs = tests[0].globs
    captured: list[tuple[tuple, dict]] = []

    def recorder(*args, **kwargs):
        captured.append((args, kwargs))
        raise _Recorded

    globs[func.__name__] = recorder
    for example in tests[0].examples:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(example.source, "<doctest>", "exec"), globs)
        except _Recorded:
            return captured[0]
        except Exception:  # an example that raises on purpose, or a setup line that needs output
            continue
    return None


def valid_calls() -> list[tuple[str, Callable, tuple, dict]]:
    out = []
    for qual, func in public_functions():
        rec = EXTRA_CALLS.get(qual) or _record_call(func)
        if rec is not None:
            out.append((qual, func, rec[0], rec[1]))
    return out


# Valid calls for public functions whose docstring example does not call them directly.
EXTRA_CALLS: dict[str, tuple[tuple, dict]] = {
    "quantiles.prefix_variance": ((np.array([1, 2, 3]),), {"encoding": "dht", "b": 2, "coordinate_variance": 1.0}),
    "quantiles.hh_variance_bound": ((), {"B": 10.0, "Delta": 1.0, "m": 16, "n": 1000, "theta": 0.2}),
    "quantiles.dht_variance_bound": ((), {"B": 10.0, "Delta": 1.0, "m": 16, "n": 1000, "theta": 0.2}),
    "datasets.shakespeare_source": ((), {"download": False}),
    "datasets.fetch_shakespeare": ((), {}),
    "exercises.check_bitpush_estimator": ((lambda idx, rep, b, eps: 0.0,), {"n": 1000, "trials": 100}),
    "exercises.check_split_encoding": ((lambda v, b: v,), {"trials": 60}),
    "display.glue": (("fuzz_value", 1.5), {}),
    "scale.current_scale": ((), {}),
    "scale.progress": (([1, 2],), {}),
}

# Arguments that legitimately accept any value (with the reason).
FREE_ARGUMENTS = {
    ("scale.pick", "default"),  # the value returned at the default scale, of any type
    ("scale.pick", "full"),  # the value returned at the papers' scale, of any type
    ("display.glue", "value"),  # glues any displayable value
    ("display.glue", "name"),  # any non-empty key
    ("scale.progress", "iterable"),  # wraps any iterable
    ("scale.progress", "desc"),  # the experiment's name: any string
    ("claims.check_claim", "evidence"),  # free text
}


# --------------------------------------------------------------------------- bad values

ALWAYS_BAD = {"nan", "inf", "-inf", "none", "str", "bool", "str-flag", "choice", "nan-array", "str-array", "neg-seed"}


def _none_is_legal(param: inspect.Parameter | None) -> bool:
    if param is None:
        return True
    return param.default is None or "None" in str(param.annotation)


def bad_values(valid: Any, param: inspect.Parameter | None) -> list[tuple[str, Any]]:
    """Kinds of bad values that apply to an argument whose valid value is ``valid``."""
    if param is not None and param.name == "rng":
        # a Generator, a non-negative int seed or None are legal (any seed: no "huge" or "zero")
        return [("str", "abc"), ("bool", True), ("nan", math.nan), ("neg-seed", -1)]
    default = None if _none_is_legal(param) else "required"
    if isinstance(valid, bool | np.bool_):
        return [("str-flag", "False"), ("none", None)] if default is not None else [("str-flag", "False")]
    if isinstance(valid, int | float | np.integer | np.floating):
        integer = isinstance(valid, int | np.integer)
        vals: list[tuple[str, Any]] = [
            ("nan", math.nan),
            ("inf", math.inf),
            ("-inf", -math.inf),
            ("neg", -1 if integer else -1.0),
            ("zero", 0 if integer else 0.0),
            ("huge", 10**18 if integer else 1e18),
            ("str", "abc"),
            ("bool", True),
        ]
        if default is not None:
            vals.append(("none", None))
        return vals
    if isinstance(valid, str):
        return [("choice", "no-such-choice"), ("str-number", 3)]
    if isinstance(valid, np.ndarray | list | tuple) and _numeric_array(valid):
        arr = np.asarray(valid, dtype=float)
        vals = [("empty", np.array([])), ("wrong-ndim", np.zeros((2, 2, 2, 2)))]
        if arr.size:
            with_nan = arr.copy().ravel()
            with_nan[0] = math.nan
            with_inf = arr.copy().ravel()
            with_inf[-1] = math.inf
            vals += [("nan-array", with_nan.reshape(arr.shape)), ("inf-array", with_inf.reshape(arr.shape))]
        vals.append(("str-array", np.array(["a", "b"])))
        if default is not None:
            vals.append(("none", None))
        return vals
    return []


def _numeric_array(v) -> bool:
    try:
        a = np.asarray(v)
    except Exception:
        return False
    return a.dtype != object and (np.issubdtype(a.dtype, np.number) or a.dtype == bool) and a.dtype != bool


def _has_nan(x, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(x, float | np.floating):
        return math.isnan(x)
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc" and bool(np.isnan(x).any())
    if isinstance(x, list | tuple):
        return any(_has_nan(v, depth + 1) for v in x[:1000])
    if isinstance(x, dict):
        return any(_has_nan(v, depth + 1) for v in list(x.values())[:1000])
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return any(_has_nan(getattr(x, f.name), depth + 1) for f in dataclasses.fields(x))
    return False


# --------------------------------------------------------------------------- one bad call


def judge(func: Callable, args: tuple, kwargs: dict, param: str, kind: str) -> str:
    """``"ok"`` or the category of the defect."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = func(*args, **kwargs)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except TimeLimit:
        return "too slow"
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if param not in msg:
            return "wrong or no parameter name"
        return "ok"
    except MemoryError:
        return "MemoryError"
    except OverflowError:
        return "OverflowError"
    except Exception as exc:
        return type(exc).__name__
    finally:
        signal.signal(signal.SIGALRM, old)
    if func.__module__.startswith(CHECKER_MODULE) and isinstance(result, fedfreq.exercises.CheckResult):
        if kind in ALWAYS_BAD and result.passed:
            return "accepted silently"
        return "ok"
    if caught:
        return "warning"
    if kind in ALWAYS_BAD:
        return "accepted silently"
    if _has_nan(result):
        return "silent NaN"
    return "ok"


def cases() -> list[tuple[str, Callable, tuple, dict, str, str, Any]]:
    out = []
    for qual, func, args, kwargs in valid_calls():
        sig = inspect.signature(func)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            continue
        positional = list(sig.parameters.values())
        for i, value in enumerate(args):
            p = positional[min(i, len(positional) - 1)]
            var = [q for q in positional[: i + 1] if q.kind is inspect.Parameter.VAR_POSITIONAL]
            p = var[0] if var else p
            if (qual, p.name) in FREE_ARGUMENTS:
                continue
            for kind, bad in bad_values(value, p):
                new = list(args)
                new[i] = bad
                out.append((qual, func, tuple(new), kwargs, p.name, kind, bad))
        for key, value in kwargs.items():
            kp = sig.parameters.get(key)
            if (qual, key) in FREE_ARGUMENTS:
                continue
            for kind, bad in bad_values(value, kp):
                out.append((qual, func, args, {**kwargs, key: bad}, key, kind, bad))
        # arguments left at their defaults are fuzzed too (as keywords)
        for name, p in sig.parameters.items():
            if name in bound.arguments or p.default is inspect.Parameter.empty or (qual, name) in FREE_ARGUMENTS:
                continue
            if p.kind not in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
                continue
            for kind, bad in bad_values(p.default, p):
                out.append((qual, func, args, {**kwargs, name: bad}, name, kind, bad))
    return out


_CASES = cases()


@pytest.fixture(scope="module", autouse=True)
def _parsed_corpus():
    """Parse the Shakespeare corpus before the timed calls (once per test process, a few
    seconds, then cached), so that the time limit measures each bad call and not the
    one-time parse, whatever the load of the machine."""
    from fedfreq import datasets

    datasets.user_histograms(top_d=10, plays="hamlet")
    for genre in datasets.SHAKESPEARE_FOLIO_GENRES:
        datasets.folio_speech_users(genre, 5)


@pytest.mark.parametrize(
    "qual,func,args,kwargs,param,kind,bad",
    _CASES,
    ids=[f"{c[0]}-{c[4]}-{c[5]}" for c in _CASES],
)
def test_bad_input_is_refused_clearly(qual, func, args, kwargs, param, kind, bad):
    verdict = judge(func, args, kwargs, param, kind)
    assert verdict == "ok", f"{qual}({param}={bad!r}): {verdict}"


def test_every_public_function_has_a_valid_call():
    have = {q for q, *_ in valid_calls()}
    missing = [q for q, _ in public_functions() if q not in have]
    assert not missing, f"no docstring example calls: {missing}"


# hypothesis: random bad values of the same kinds, on random functions and arguments
_RANDOM_BAD = hst.one_of(
    hst.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not math.isfinite(x)),
    hst.text(min_size=1, max_size=5),
    hst.none(),
    hst.booleans(),
)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=hst.data())
def test_random_never_legal_values_are_refused(data):
    calls = [c for c in _VALID if c[2] or c[3]]
    qual, func, args, kwargs = data.draw(hst.sampled_from(calls))
    sig = inspect.signature(func)
    names = list(sig.parameters)
    slots = [("pos", i, names[min(i, len(names) - 1)]) for i in range(len(args))] + [("kw", k, k) for k in kwargs]
    slots = [s for s in slots if (qual, s[2]) not in FREE_ARGUMENTS]
    if not slots:
        return
    where, key, pname = data.draw(hst.sampled_from(slots))
    current = args[key] if where == "pos" else kwargs[key]
    if not isinstance(current, int | float | np.integer | np.floating) or isinstance(current, bool):
        return
    bad = data.draw(_RANDOM_BAD)
    p = sig.parameters.get(pname)
    if bad is None and _none_is_legal(p):
        return
    if isinstance(bad, str) and bad.strip().lstrip("+-").replace(".", "", 1).isdigit():
        return
    if where == "pos":
        new = list(args)
        new[key] = bad
        verdict = judge(func, tuple(new), kwargs, pname, "nan")
    else:
        verdict = judge(func, args, {**kwargs, key: bad}, pname, "nan")
    assert verdict == "ok", f"{qual}({pname}={bad!r}): {verdict}"


_VALID = valid_calls()


def report() -> None:
    counts: Counter = Counter()
    examples: dict[str, list[str]] = {}
    for qual, func, args, kwargs, param, kind, bad in _CASES:
        verdict = judge(func, args, kwargs, param, kind)
        counts[verdict] += 1
        if verdict != "ok":
            examples.setdefault(verdict, []).append(f"{qual}({param}={bad!r})")
    funcs = public_functions()
    print(f"{len(funcs)} public functions, {len(_VALID)} with a valid call, {len(_CASES)} bad calls")
    for verdict, n in counts.most_common():
        print(f"{n:6d}  {verdict}")
    for verdict, ex in examples.items():
        print(f"\n== {verdict} ({len(ex)})")
        for e in ex:
            print("   ", e)
    have = {q for q, *_ in _VALID}
    print("\nno valid call:", [q for q, _ in funcs if q not in have])


if __name__ == "__main__":
    report()
