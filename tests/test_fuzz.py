"""Bad input to every public function gets a clear refusal, never a wrong answer.

Every public function of every module and submodule of :mod:`fedfreq` (the names in
each module's ``__all__``: ``fedfreq.sketch.hashing.*`` as well as ``fedfreq.sketch.*``)
is called once as its own docstring example calls it, and then with one argument at a
time replaced by an input of another class. The classes cover what an attacker of a
numeric library tries (the parameter's kind is read from its valid value, or from its
annotation when it defaults to ``None``):

* numbers: NaN, ±inf, -1, 0, 1e18, subnormal (5e-324), tiny (1e-300) and huge (1e300,
  the largest float) values, Python ints beyond the float range and at 2**63, numpy
  scalar types, 0-d arrays of bool, str, complex and object dtype, a string, a bool,
  ``None``, a list, a dict, a set;
* arrays: NaN or inf entries, an int64-max entry, huge and subnormal entries, empty,
  wrong dimension, a scalar, a ragged list, str, bool, complex and object arrays, ints
  beyond int64, a dict, ``None``;
* choice strings: an unknown choice, a number, a list, a dict, a set, ``None``;
* flags: the string ``"False"``, ``None``, a list;
* ``rng``: a string, a bool, NaN, a negative seed, a float;
* callables (the student's function of an exercise checker): one returning ``None``, a
  string, a huge int, NaN, inf, an array of the wrong shape, one that raises, one that
  hangs, and a non-callable.

Each call runs in a forked worker process (:mod:`_fuzz_worker`) with a time limit and a
memory limit. A call passes when it

* raises ``ValueError`` or ``TypeError`` whose message names the parameter as the
  caller spelled it, or
* for an input that can be legal (-1, 0, extremes, an empty array, a scalar for an
  array, ...), returns a result with no NaN, no inf (except where the function's
  contract allows it) that passes the function's validity check where a right answer
  is known (see ``VALIDITY``);
* and never raises another exception, never warns, never prints, never hangs, never
  runs out of memory. An exercise checker answers a bad attempt with a failing
  ``CheckResult``, never an exception.

Inputs that are never legal (NaN, a string for a number, a 0-d bool array, a ragged
list, an unknown choice, a callable returning ``None``, ...) must be refused.

The test samples the input classes of each parameter deterministically so that it fits
the test budget; ``FEDFREQ_FUZZ=full`` runs every class, and ``python
tests/test_fuzz.py`` prints a report of the full run by category.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import doctest
import hashlib
import importlib
import inspect
import io
import math
import os
import pkgutil
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _fuzz_worker import Pool
from hypothesis import given, settings
from hypothesis import strategies as hst

import fedfreq
from fedfreq import _validation as val
from fedfreq.exercises import CheckResult

#: Seconds per call (the docstring examples run in at most about 2 s on a loaded machine).
TIME_LIMIT = 5.0
#: Address space a worker may add to the test process's, in bytes.
MEMORY_HEADROOM = 2 << 30
#: Input classes tried per parameter in the sampled run (all with FEDFREQ_FUZZ=full).
SAMPLE = 6
FULL = os.environ.get("FEDFREQ_FUZZ", "") == "full"

CHECKER_MODULE = "fedfreq.exercises"

# --------------------------------------------------------------------------- the functions


def public_functions() -> list[tuple[str, Callable]]:
    """(qualified name, function) of every public function of every (sub)module."""
    out: list[tuple[str, Callable]] = []
    for info in pkgutil.walk_packages(fedfreq.__path__, "fedfreq."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        mod = importlib.import_module(info.name)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and obj.__module__ == info.name:
                out.append((f"{info.name.removeprefix('fedfreq.')}.{name}", obj))
    return sorted(out)


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
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                exec(compile(example.source, "<doctest>", "exec"), globs)
        except _Recorded:
            return captured[0]
        except Exception:  # an example that raises on purpose, or a setup line that needs output
            continue
    return None


# Valid calls for public functions whose docstring example does not call them directly.
EXTRA_CALLS: dict[str, tuple[tuple, dict]] = {
    "quantiles.prefix_variance": ((np.array([1, 2, 3]),), {"encoding": "dht", "b": 2, "coordinate_variance": 1.0}),
    "quantiles.hh_variance_bound": ((), {"B": 10.0, "Delta": 1.0, "m": 16, "n": 1000, "theta": 0.2}),
    "quantiles.dht_variance_bound": ((), {"B": 10.0, "Delta": 1.0, "m": 16, "n": 1000, "theta": 0.2}),
    "datasets.shakespeare_source": ((), {"download": False}),
    "datasets.fetch_shakespeare": ((), {}),
    "exercises.bitpush.check_bitpush_estimator": ((lambda idx, rep, b, eps: 0.0,), {"n": 1000, "trials": 100}),
    "exercises.bitpush.check_split_encoding": ((lambda v, b: v,), {"trials": 60}),
    "display.glue": (("fuzz_value", 1.5), {}),
    "display.glue_table": (("fuzz_table", [["a", 1.5]]), {}),
    "scale.current_scale": ((), {}),
}

# Arguments that legitimately accept any value (with the reason).
FREE_ARGUMENTS = {
    ("scale.pick", "default"),  # the value returned at the default scale, of any type
    ("scale.pick", "full"),  # the value returned at the papers' scale, of any type
    ("display.glue", "value"),  # glues any displayable value
    ("display.glue", "name"),  # any non-empty key
    ("display.glue_table", "prefix"),  # any non-empty start of the keys
    ("scale.progress", "iterable"),  # wraps any iterable
    ("scale.progress", "desc"),  # the experiment's name: any string
    ("scale.progress", "total"),  # passed to tqdm as a display hint
    ("claims.check_claim", "evidence"),  # free text
    ("claims.check_claim", "claim_id"),  # any ledger id; unknown ids are reported by the ledger test
}

# Functions that print by design (with the reason).
PRINTS = {
    "claims.check_claim",  # prints the claim's one-line verdict in the chapter
}

# Functions whose result may contain +inf by contract (with the reason).
INF_ALLOWED = {
    "accounting.rdp.compose_rdp",  # an RDP curve: +inf means "no bound at this order"
    "accounting.rdp.rdp_randomized_response",  # infinite at order inf
    "audit.exact_epsilon",  # inf when no finite epsilon reaches delta
    "skellam.smm_rdp",  # an RDP curve: +inf where l_inf exceeds smm_l_inf_max (no bound at this order)
    "skellam.smm_epsilon",  # (inf, inf) when l_inf exceeds smm_l_inf_max at every order of the grid
}


def _finite_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool) and math.isfinite(x)


def _prob(result: Any, *_: Any) -> str | None:
    """A probability (a delta): a number in [0, 1]."""
    values = np.asarray(result, dtype=float)
    if np.any(values < 0) or np.any(values > 1):
        return f"a probability outside [0, 1]: {result!r}"
    return None


def _nonneg(result: Any, *_: Any) -> str | None:
    values = np.asarray(result, dtype=float)
    if np.any(values < 0):
        return f"a negative value where none can be: min {values.min()!r}"
    return None


def _interval_in_unit(result: Any, *_: Any) -> str | None:
    """A confidence interval for a probability: 0 <= low <= high <= 1."""
    low, high = (float(v) for v in result)
    return None if 0.0 <= low <= high <= 1.0 else f"an interval outside [0, 1] or reversed: {result!r}"


def _distribution(result: Any, *_: Any) -> str | None:
    """A probability vector: entries in [0, 1] summing to 1."""
    p = np.asarray(result, dtype=float)
    if np.any(p < 0) or np.any(p > 1) or not math.isclose(float(p.sum()), 1.0, rel_tol=1e-9):
        return f"not a probability vector: min {p.min()!r}, max {p.max()!r}, sum {p.sum()!r}"
    return None


def _clipped_mean_range(result: Any, args: tuple, kwargs: dict) -> str | None:
    """E[min(Poisson(lam), C)] lies in [0, min(lam, C)]."""
    call = inspect.signature(fedfreq.contribution.clipped_poisson_mean).bind(*args, **kwargs)
    lam = np.asarray(call.arguments["lam"], dtype=float)
    cap = np.minimum(lam, float(call.arguments["C"]))
    h = np.asarray(result, dtype=float)
    if np.any(h < 0) or np.any(h > cap * (1 + 1e-12)):
        return f"outside [0, min(lam, C)]: {result!r}"
    return None


def _gaussian_sigma_delta(result: Any, args: tuple, kwargs: dict) -> str | None:
    """A returned sigma must give a delta no larger than asked: the exact delta of the
    returned double, in mpmath, by the same function as tests/test_extremes.py."""
    from test_extremes import _mp_gaussian_delta

    call = inspect.signature(fedfreq.accounting.gaussian_sigma).bind(*args, **kwargs)
    call.apply_defaults()
    epsilon, delta, sens = (float(call.arguments[k]) for k in ("epsilon", "delta", "sensitivity"))
    got = _mp_gaussian_delta(epsilon, float(result), sens)
    return None if got <= delta else f"sigma {result!r} gives delta {float(got)!r} > {delta!r}"


# Validity checks of results where a right answer is known: (result, args, kwargs) ->
# None or what is wrong. Calibrations at extreme parameters are checked against mpmath
# in tests/test_extremes.py; here only the properties any answer must have.
VALIDITY: dict[str, Callable[..., str | None]] = {
    **dict.fromkeys(
        [
            "accounting.gaussian.gaussian_delta",
            "audit.hockey_stick",
            "audit.gaussian_hockey_stick",
            "contribution.unbounded.unbounded_exact_delta",
            "heavy_hitters.optimal_composition_delta",
            "sample_threshold.delta_exact",
            "sample_threshold.delta_exact_replace",
            "sample_threshold.delta_simple",
            "sample_threshold.delta_theorem",
            "sample_threshold.omission_probability",
            "sample_threshold.relative_error_probability",
            "trust_models.binomial_mechanism_delta",
            "trust_models.binomial_noise_probability",
            "trust_models.rr_keep_probability",
        ],
        _prob,
    ),
    **dict.fromkeys(
        [
            "baselines.gaussian_variance",
            "baselines.kary_rr_count_variance",
            "baselines.laplace_variance",
            "baselines.oue_count_variance",
            "baselines.rr_count_variance",
            "bitpush.estimator_variance",
            "bitpush.piecewise_variance",
            "bitpush.rr_report_variance",
            "cpbm.cpbm_variance",
            "metrics.l1_error",
            "metrics.l2_error",
            "metrics.linf_error",
            "metrics.mse",
            "metrics.nrmse",
            "metrics.nrmse_of_runs",
            "quantiles.cpbm_coordinate_variance",
            "quantiles.dht_variance_bound",
            "quantiles.flat_variance_bound",
            "quantiles.hh_variance_bound",
        ],
        _nonneg,
    ),
    "accounting.gaussian.gaussian_sigma": _gaussian_sigma_delta,
    "accounting.rdp.delta_for_epsilon": lambda result, *_: _prob(result[0]),  # (delta, best order)
    "audit.clopper_pearson": _interval_in_unit,
    "bitpush.optimal_probabilities": _distribution,
    "contribution.unbounded.exponential_mechanism_probabilities": _distribution,
    "contribution.debiasing.clipped_poisson_mean": _clipped_mean_range,
}


# --------------------------------------------------------------------------- input classes


@dataclasses.dataclass(frozen=True)
class Case:
    qual: str
    func: Callable
    args: tuple
    kwargs: dict
    param: str  # the parameter as the caller spells it ("" for the valid call)
    kind: str  # the input class
    refuse: bool  # True: the input is never legal and must be refused

    @property
    def id(self) -> str:
        return f"{self.qual}({self.param}={self.kind})" if self.param else f"{self.qual}(valid)"


def _none_is_legal(param: inspect.Parameter | None) -> bool:
    if param is None:
        return True
    return param.default is None or "None" in str(param.annotation)


def _param_kind(valid: Any, param: inspect.Parameter | None) -> str:
    """What kind of argument this is: rng, flag, int, float, choice, array, callable, other."""
    if param is not None and param.name == "rng":
        return "rng"
    ann = "" if param is None else str(param.annotation)
    if "PathLike" in ann:
        return "path"
    if valid is None and param is not None:
        if "Callable" in ann or "Mechanism" in ann:
            return "callable"
        if "Generator" in ann:
            return "rng"
        if "ndarray" in ann or "ArrayLike" in ann or "Sequence" in ann or "list" in ann:
            return "array"
        if "float" in ann:
            return "float"
        if "int" in ann:
            return "int"
        if "bool" in ann:
            return "flag"
        if "str" in ann:
            return "choice"
        return "other"
    if isinstance(valid, bool | np.bool_):
        return "flag"
    if isinstance(valid, int | np.integer):
        return "int"
    if isinstance(valid, float | np.floating):
        return "float"
    if isinstance(valid, str):
        return "choice"
    if callable(valid) and not isinstance(valid, type):
        return "callable"
    if isinstance(valid, np.ndarray | list | tuple) and _numeric_array(valid):
        return "array"
    return "other"


def _numeric_array(v: Any) -> bool:
    try:
        a = np.asarray(v)
    except Exception:
        return False
    return a.dtype.kind in "iuf" and a.size > 0


def _raises(*_: Any) -> Any:
    raise RuntimeError("a bug in the attempt")


def _hangs(*_: Any) -> Any:
    time.sleep(3600)


def input_classes(
    kind: str, valid: Any, param: inspect.Parameter | None, checker: bool = False
) -> list[tuple[str, Any, bool]]:
    """(class, value, must be refused) for an argument of ``kind`` whose valid value is ``valid``."""
    none_ok = _none_is_legal(param)
    none = [] if none_ok else [("none", None, True)]
    if kind == "rng":
        return [("str", "abc", True), ("bool", True, True), ("nan", math.nan, True), ("neg-seed", -1, True)] + [
            ("float-seed", 1.5, True)
        ]
    if kind == "flag":
        return [("str-flag", "False", True), ("list", [True], True), ("0d-str", np.array("True"), True)] + none
    if kind in ("int", "float"):
        integer = kind == "int"
        base = valid if valid is not None else (1 if integer else 1.0)
        numpy_scalar = np.int32(base) if integer and abs(base) < 2**31 else np.float64(base)
        return [
            ("nan", math.nan, True),
            ("inf", math.inf, True),
            ("-inf", -math.inf, True),
            ("neg", -1 if integer else -1.0, False),
            ("zero", 0 if integer else 0.0, False),
            ("huge", 10**18 if integer else 1e18, False),
            ("subnormal", 5e-324, False),
            ("tiny", 1e-300, False),
            ("huge-float", 1e300, False),
            ("max-float", sys.float_info.max, False),
            ("int-beyond-float", 10**400, False),
            ("int-2^63", 2**63, False),
            ("numpy-scalar", numpy_scalar, False),
            ("0d-bool", np.array(True), True),
            ("0d-str", np.array("1"), True),
            ("0d-complex", np.array(1 + 1j), True),
            ("0d-object", np.array(None, dtype=object), True),
            ("str", "abc", True),
            ("bool", True, True),
            ("list", [base], False),
            ("dict", {"a": base}, True),
            ("set", {base}, True),
        ] + none
    if kind == "path":
        return [("number", 3, True), ("list", ["a"], True), ("dict", {"a": 1}, True)] + none
    if kind == "choice":
        # a parameter annotated as a sequence of choices takes a collection of valid ones
        many = param is not None and "Sequence" in str(param.annotation)
        return [
            ("choice", "no-such-choice", True),
            ("number", 3, True),
            ("list", [valid], not many),
            ("dict", {valid: 1}, not many),
            ("set", {valid}, not many),
            ("unknown-in-list", ["no-such-choice"], True),
        ] + none
    if kind == "array":
        arr = np.asarray(valid) if valid is not None else np.array([1.0, 2.0])
        flat = arr.astype(float).ravel()
        with_nan, with_inf, with_huge, with_sub = (flat.copy() for _ in range(4))
        with_nan[0], with_inf[-1], with_huge[0], with_sub[0] = math.nan, math.inf, 1e300, 5e-324
        out = [
            ("nan-array", with_nan.reshape(arr.shape), True),
            ("inf-array", with_inf.reshape(arr.shape), False),
            ("huge-entry", with_huge.reshape(arr.shape), False),
            ("subnormal-entry", with_sub.reshape(arr.shape), False),
            ("empty", np.array([]), False),
            ("wrong-ndim", np.zeros((2, 2, 2, 2)), False),
            ("scalar", flat[0], False),
            ("ragged", [[1.0, 2.0], [3.0]], True),
            ("str-array", np.array(["a", "b"]), True),
            ("bool-array", np.ones(arr.shape, dtype=bool), False),
            ("complex-array", arr.astype(complex), True),
            ("object-array", np.array([None, 1.0], dtype=object), True),
            ("int-beyond-int64", [10**30] * max(1, flat.size), True),
            ("dict", {"a": 1}, True),
        ] + none
        if arr.dtype.kind in "iu":
            wrap = arr.astype(np.int64).ravel().copy()
            wrap[0] = np.iinfo(np.int64).max
            out.append(("int64-max-entry", wrap.reshape(arr.shape), False))
        return out
    if kind == "callable":
        # a hanging callable is the caller's own hang, except for an exercise checker,
        # which promises feedback on any attempt
        hangs = [("hangs", _hangs, True)] if checker else []
        return hangs + [
            ("returns-none", lambda *a, **k: None, True),
            ("returns-str", lambda *a, **k: "0.5", True),
            ("returns-huge-int", lambda *a, **k: 10**400, True),
            ("returns-nan", lambda *a, **k: math.nan, True),
            ("returns-inf", lambda *a, **k: math.inf, True),
            ("returns-wrong-shape", lambda *a, **k: np.zeros((3, 5, 7)), True),
            ("raises", _raises, True),
            ("not-callable", 3, True),
        ]
    if kind == "other" and not none_ok:
        return [("none", None, True)]
    return []


def _sample(qual: str, param: str, classes: list, full: bool = FULL) -> list:
    """A deterministic sample of ``SAMPLE`` classes (all of them with FEDFREQ_FUZZ=full).

    The classes are ordered by a hash of (function, parameter, class), so that across
    the package every class is tried many times.
    """
    if full or len(classes) <= SAMPLE:
        return classes

    def key(cls: tuple) -> str:
        return hashlib.sha256(f"{qual}:{param}:{cls[0]}".encode()).hexdigest()

    return sorted(classes, key=key)[:SAMPLE]


def valid_calls() -> list[tuple[str, Callable, tuple, dict]]:
    out = []
    for qual, func in public_functions():
        rec = EXTRA_CALLS.get(qual) or _record_call(func)
        if rec is not None:
            out.append((qual, func, rec[0], rec[1]))
    return out


def build_cases(full: bool = FULL) -> list[Case]:
    """The valid call of every public function and its calls with one argument replaced."""
    out: list[Case] = []
    for qual, func, args, kwargs in valid_calls():
        sig = inspect.signature(func)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            continue
        out.append(Case(qual, func, args, kwargs, "", "valid", False))
        params = list(sig.parameters.values())
        slots: list[tuple[str, Any, inspect.Parameter | None, int | str]] = []  # name, valid, param, where
        for i, value in enumerate(args):
            p = params[min(i, len(params) - 1)]
            var = [q for q in params[: i + 1] if q.kind is inspect.Parameter.VAR_POSITIONAL]
            p = var[0] if var else p
            slots.append((p.name, value, p, i))
        for key, value in kwargs.items():
            slots.append((key, value, sig.parameters.get(key), key))
        for name, p in sig.parameters.items():  # arguments left at their defaults, as keywords
            if name in bound.arguments or p.default is inspect.Parameter.empty:
                continue
            if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
                slots.append((name, p.default, p, name))
        for name, value, param, where in slots:
            if (qual, name) in FREE_ARGUMENTS:
                continue
            kind = _param_kind(value, param)
            checker = func.__module__.startswith(CHECKER_MODULE)
            for cls, bad, refuse in _sample(qual, name, input_classes(kind, value, param, checker), full):
                if isinstance(where, int):
                    a, k = (*args[:where], bad, *args[where + 1 :]), kwargs
                else:
                    a, k = args, {**kwargs, where: bad}
                out.append(Case(qual, func, a, k, name, cls, refuse))
    return out


# --------------------------------------------------------------------------- judging one call


def _non_finite(x: Any, depth: int = 0) -> str | None:
    """ "NaN" or "inf" if ``x`` (or something inside it) is not finite, else None."""
    if depth > 4:
        return None
    if isinstance(x, float | np.floating | complex | np.complexfloating):
        return None if np.isfinite(x) else ("NaN" if np.isnan(x) else "inf")
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "fc" or not x.size:
            return None
        if np.isnan(x).any():
            return "NaN"
        return None if np.isfinite(x).all() else "inf"
    if isinstance(x, list | tuple):
        for v in x[:1000]:
            if (bad := _non_finite(v, depth + 1)) is not None:
                return bad
    if isinstance(x, dict):
        for v in list(x.values())[:1000]:
            if (bad := _non_finite(v, depth + 1)) is not None:
                return bad
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            if (bad := _non_finite(getattr(x, f.name), depth + 1)) is not None:
                return bad
    return None


def judge(case: Case) -> str:
    """``"ok"``, or the category of the defect followed by ``": "`` and what happened."""
    args, kwargs = copy.deepcopy((case.args, case.kwargs))
    checker = case.func.__module__.startswith(CHECKER_MODULE)
    student = checker and case.param == next(iter(inspect.signature(case.func).parameters))
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            result = case.func(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            msg = f"{type(exc).__name__}: {str(exc)[:160]}"
            if case.kind == "valid":
                return f"valid call refused: {msg}"
            if student and _param_kind(None, inspect.signature(case.func).parameters[case.param]) == "callable":
                return f"checker raised on a bad attempt: {msg}"
            if case.param not in str(exc):
                return f"wrong or no parameter name: {msg}"
            return "ok"
        except MemoryError:
            return "out of memory: MemoryError"
        except Exception as exc:
            return f"unrelated exception: {type(exc).__name__}: {str(exc)[:160]}"
    if caught:
        w = caught[0]
        return f"escaped warning: {w.category.__name__}: {str(w.message)[:160]}"
    if out.getvalue() and case.qual not in PRINTS:
        return "printed: " + out.getvalue()[:80]
    if checker and isinstance(result, CheckResult):
        if case.refuse and result.passed:
            return "silent wrong result: a never-legal input passed the check"
        return "ok"
    if case.refuse:
        return "silent wrong result: a never-legal input was accepted"
    if case.qual not in INF_ALLOWED or _non_finite(result) == "NaN":
        if (bad := _non_finite(result)) is not None:
            return f"silent wrong result: {bad} in the result"
    check = VALIDITY.get(case.qual)
    if check is not None:
        try:
            why = check(result, args, kwargs)
        except Exception as exc:  # a result the validity check cannot even read
            why = f"an unreadable result ({type(exc).__name__}: {exc})"
        if why is not None:
            return f"silent wrong result: {why}"
    return "ok"


CASES = build_cases()

_BY_FUNCTION: dict[str, list[int]] = {}
for _i, _c in enumerate(CASES):
    _BY_FUNCTION.setdefault(_c.qual, []).append(_i)


def _run(index: int) -> str:
    """One call, in a worker process: a student's function that hangs is stopped by its
    checker after 0.25 s here (the checkers' limit is for a student's real work)."""
    from fedfreq.exercises import _result

    _result.STUDENT_CALL_LIMIT = 0.25
    return judge(CASES[index])


def _warm_up() -> None:
    """Parse the Shakespeare corpus before forking (a few seconds, then cached), so that
    every worker inherits it and the time limit measures the calls, not the parse."""
    from fedfreq import datasets

    datasets.user_histograms(top_d=10, plays="hamlet")
    for genre in datasets.SHAKESPEARE_FOLIO_GENRES:
        datasets.folio_speech_users(genre, 5)


@pytest.fixture(scope="module")
def pool():
    _warm_up()
    with Pool(_run, time_limit=TIME_LIMIT, memory_headroom=MEMORY_HEADROOM) as p:
        yield p


@pytest.mark.parametrize("qual", sorted(_BY_FUNCTION))
def test_bad_input_is_refused_clearly(pool, qual):
    indices = _BY_FUNCTION[qual]
    failures = [f"{CASES[i].id}: {v}" for i, v in zip(indices, pool.map(indices), strict=True) if v != "ok"]
    assert not failures, f"{len(failures)} of {len(indices)} calls:\n" + "\n".join(failures)


def test_validity_checks_name_public_functions():
    names = {q for q, _ in public_functions()}
    assert not set(VALIDITY) - names, sorted(set(VALIDITY) - names)
    assert not INF_ALLOWED - names, sorted(INF_ALLOWED - names)


def test_every_public_function_has_a_valid_call():
    have = set(_BY_FUNCTION)
    missing = [q for q, _ in public_functions() if q not in have]
    assert not missing, f"no docstring example calls: {missing}"


def test_the_judge_catches_each_defect():
    """The harness itself: each kind of defect gets its category (a judge that passes
    everything would make the fuzz test worthless)."""

    def nan_result(x):
        return math.nan

    def warns(x):
        warnings.warn("careless", RuntimeWarning, stacklevel=1)
        return 1.0

    def index_error(x):
        return [][1]

    def vague(x):
        raise ValueError("bad input")

    def clear(x):
        raise ValueError(f"x must lie in [0, 1]; got {x!r}")

    def silent(x):
        return float(x)

    def blocks(x):
        time.sleep(60)

    def run(func, kind="neg", refuse=False):
        return judge(Case("demo", func, (-1,), {}, "x", kind, refuse)).split(":")[0]

    assert run(nan_result) == "silent wrong result"
    assert run(warns) == "escaped warning"
    assert run(index_error) == "unrelated exception"
    assert run(vague) == "wrong or no parameter name"
    assert run(clear) == "ok"
    assert run(silent, "0d-bool", refuse=True) == "silent wrong result"
    assert run(silent) == "ok"
    global CASES
    saved = CASES
    CASES = [Case("demo", blocks, (1,), {}, "x", "neg", False)]
    try:
        with Pool(_run, time_limit=0.2, memory_headroom=MEMORY_HEADROOM) as p:
            assert p.call(0) == "hang"
    finally:
        CASES = saved


# --------------------------------------------------------------------------- the validators


_NEVER_REAL = hst.one_of(
    hst.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not math.isfinite(x)),
    hst.text(max_size=5),
    hst.none(),
    hst.booleans(),
    hst.complex_numbers(allow_nan=False).filter(lambda z: z.imag != 0),
    hst.integers(min_value=2**1024),
    hst.sampled_from([np.array(True), np.array("1"), np.array(1j), np.array(None, dtype=object), [1.0], {1.0}]),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(bad=_NEVER_REAL)
def test_check_real_refuses_every_non_real(bad):
    with pytest.raises((ValueError, TypeError), match="eps"):
        val.check_real("eps", bad, low=0.0, low_open=True)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(bad=hst.one_of(_NEVER_REAL, hst.integers(min_value=2**63), hst.floats(min_value=2.0**63)))
def test_check_int_refuses_every_non_int64(bad):
    with pytest.raises((ValueError, TypeError), match="m"):
        val.check_int("m", bad, low=1)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(entries=hst.lists(hst.integers(min_value=2**61, max_value=2**63 - 1), min_size=2, max_size=6))
def test_check_array_refuses_counts_whose_sum_could_wrap(entries):
    """Every entry fits in int64, but their sum reaches 2**62: refused before any sum wraps."""
    with pytest.raises(ValueError, match="counts"):
        val.check_array("counts", np.array(entries, dtype=np.int64), low=0, integer=True)


# --------------------------------------------------------------------------- report


def report() -> None:
    """Run every call (the full, unsampled set with FEDFREQ_FUZZ=full) and print by category."""
    _warm_up()
    start = time.perf_counter()
    durations = []
    with Pool(_run, time_limit=TIME_LIMIT, memory_headroom=MEMORY_HEADROOM) as p:
        verdicts = []
        for i in range(len(CASES)):
            t0 = time.perf_counter()
            verdicts.append(p.call(i))
            durations.append((time.perf_counter() - t0, CASES[i].id))
    elapsed = time.perf_counter() - start
    counts: Counter = Counter()
    examples: dict[str, list[str]] = {}
    for case, verdict in zip(CASES, verdicts, strict=True):
        category = verdict.split(":")[0]
        counts[category] += 1
        if verdict != "ok":
            examples.setdefault(category, []).append(f"{case.id}: {verdict}")
    funcs = public_functions()
    n_params = len({(c.qual, c.param) for c in CASES if c.param})
    print(
        f"{len(funcs)} public functions, {len(_BY_FUNCTION)} with a valid call, {n_params} parameters, "
        f"{len(CASES)} calls in {elapsed:.1f} s ({'full' if FULL else 'sampled'})"
    )
    for category, n in counts.most_common():
        print(f"{n:6d}  {category}")
    print("slowest calls:", ", ".join(f"{name} {t:.2f} s" for t, name in sorted(durations)[-8:]))
    for category, ex in examples.items():
        print(f"\n== {category} ({len(ex)})")
        for e in ex:
            print("   ", e)


if __name__ == "__main__":
    report()
