"""Argument validation shared by every module of :mod:`fedfreq`.

Every public function checks its inputs with these helpers, so that bad input
raises a :class:`ValueError` that names the parameter and its allowed range,
instead of producing a silent NaN, a wrapped integer or a clipped value.

The helpers accept exactly the values a reader would call a number: Python ints and
floats, numpy integer and floating scalars, and 0-d numeric arrays. They refuse
booleans, strings, complex numbers, ``None``, containers and 0-d arrays of any other
dtype (``np.array(True)`` is not the number 1), integers beyond the range of a float
or of a 64-bit integer, subnormal floats (below 2.2e-308 in magnitude, where a float
keeps only a few significant bits and its reciprocal is infinite) as parameters, and
integer arrays whose sums could wrap around in 64-bit arithmetic.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

#: Smallest magnitude of a non-zero float parameter: the smallest normal double.
#: Below it a float is subnormal (it keeps only a few significant bits, and its
#: reciprocal overflows to inf).
TINY = float(np.finfo(float).tiny)
#: Largest integer parameter: the largest int64 (numpy's samplers and array sizes need
#: a C long).
INT_MAX = int(np.iinfo(np.int64).max)
#: Smallest privacy parameter epsilon of the local and central mechanisms: below it
#: e^epsilon - 1 (their noise level) is below 1e-10 and carries a relative rounding error
#: above 1e-6; no useful mechanism runs at such an epsilon.
EPSILON_MIN = 1e-10
#: Largest privacy parameter epsilon the calibrations accept: the Gaussian calibration
#: is verified up to it, and e^(epsilon u) of an exponential mechanism stays finite.
EPSILON_MAX = 1e6
#: Magnitude range of scale parameters (noise scales, thresholds, norms, probabilities
#: such as theta): their squares, and the squares of their reciprocals, stay finite.
SCALE_MIN = 1e-150
SCALE_MAX = 1e150
#: Largest number of entries of an array a function builds for its result (800 MB of
#: float64): a size or repetition count beyond it is refused, not left to run out of memory.
MAX_CELLS = 10**8
#: Bound on the sum of the absolute entries of an integer array (counts): sums,
#: differences and doublings of such arrays never wrap around in int64 arithmetic.
INT_SUM_LIMIT = 2**62


def _interval(low, high, low_open, high_open) -> str:
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    left = "(" if (low_open or low is None) else "["
    right = ")" if (high_open or high is None) else "]"
    return f"{left}{lo}, {hi}{right}"


def _short(value: Any) -> str:
    """``repr(value)`` cut to a readable length (a huge int or array has a huge repr)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar(value: Any) -> Any:
    """The Python or numpy number inside ``value``, or ``None`` if it is not a real number.

    Accepted: Python ints and floats, numpy integer and floating scalars, other
    :class:`numbers.Real` types, and 0-d arrays of integer or floating dtype. Refused
    (``None``): booleans of every kind, strings, complex numbers, containers, and 0-d
    arrays of any other dtype (bool, str, complex, object).
    """
    if isinstance(value, np.ndarray):
        if value.ndim != 0 or value.dtype.kind not in "iuf":
            return None
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        return None
    return value


def check_real(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    reason: str = "",
    low_reason: str = "",
) -> float:
    """Return ``value`` as a finite float inside the given interval.

    ``reason`` (e.g. why ``high`` is the limit) is appended to the message of a value
    above ``high``, ``low_reason`` to that of a value below ``low``. Subnormal values
    (non-zero, below :data:`TINY` in magnitude) are refused whatever the interval.

    Raises
    ------
    ValueError
        If ``value`` is not a real number (see :func:`_scalar`), is NaN or infinite,
        is an integer beyond the float range, is subnormal, or lies outside the
        interval; the message names ``name`` and the allowed interval.

    Examples
    --------
    >>> check_real("epsilon", 0.5, low=0.0, low_open=True)
    0.5
    >>> check_real("epsilon", np.array(True), low=0.0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be a real number in (0, inf); got array(True)
    """
    rng_txt = _interval(low, high, low_open, high_open)
    number = _scalar(value)
    if number is None:
        raise ValueError(f"{name} must be a real number in {rng_txt}; got {_short(value)}")
    try:
        x = float(number)
    except OverflowError:
        raise ValueError(
            f"{name} must be a finite real number in {rng_txt}; got an integer beyond the float range"
        ) from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite real number in {rng_txt}; got {_short(value)}")
    if x != 0.0 and abs(x) < TINY:
        raise ValueError(
            f"{name} must lie in {rng_txt} and be 0 or at least {TINY:.4g} in magnitude "
            f"(subnormal numbers are not supported); got {_short(value)}"
        )
    if low is not None and (x < low or (low_open and x == low)):
        why = f" ({low_reason})" if low_reason else ""
        raise ValueError(f"{name} must lie in {rng_txt}; got {_short(value)}{why}")
    if high is not None and (x > high or (high_open and x == high)):
        why = f" ({reason})" if reason else ""
        raise ValueError(f"{name} must lie in {rng_txt}; got {_short(value)}{why}")
    return x


def check_epsilon(name: str, value, *, high: float | None = None, reason: str = "") -> float:
    """Return a privacy parameter epsilon in ``[EPSILON_MIN, high]`` as a float.

    Examples
    --------
    >>> check_epsilon("epsilon", 1e-300)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must lie in [1e-10, inf); got 1e-300 (below it e^epsilon - 1 loses its precision)
    """
    return check_real(
        name,
        value,
        low=EPSILON_MIN,
        high=high,
        reason=reason,
        low_reason="below it e^epsilon - 1 loses its precision",
    )


def check_scale(name: str, value, *, high: float | None = None, high_open: bool = False, reason: str = "") -> float:
    """Return a positive scale parameter in ``[SCALE_MIN, min(high, SCALE_MAX)]`` as a float.

    Scale parameters (noise scales, clipping thresholds, probabilities such as theta)
    are squared and inverted; inside this range neither overflows nor divides by zero.
    """
    top = SCALE_MAX if high is None else min(high, SCALE_MAX)
    return check_real(
        name,
        value,
        low=SCALE_MIN,
        high=top,
        high_open=high_open and top == high,
        reason=reason or "its square must stay finite",
        low_reason="the square of its reciprocal must stay finite",
    )


def check_int(name: str, value, *, low: int | None = None, high: int | None = None, reason: str = "") -> int:
    """Return ``value`` as a Python int inside ``[low, high]`` and inside the int64 range.

    Integral floats such as ``1e9`` are accepted up to 2**53 (where every integer is
    still a float); ``2.5``, NaN, booleans and 0-d bool arrays are not. Without
    ``high``, the largest accepted value is :data:`INT_MAX` (2**63 - 1). ``reason``
    (e.g. why ``high`` is the limit) is appended to the message of a value above ``high``.

    Examples
    --------
    >>> check_int("m", 1e3, low=1)
    1000
    >>> check_int("m", 2**63, low=1)
    Traceback (most recent call last):
    ...
    ValueError: m must be an integer in [1, inf) that fits in 64 bits (|m| < 2**63); got 9223372036854775808
    """
    rng_txt = _interval(low, high, False, False)
    number = _scalar(value)
    if isinstance(number, numbers.Integral):
        k = int(number)
    elif number is not None and math.isfinite(x := float(number)) and x.is_integer() and abs(x) <= 2.0**53:
        k = int(x)
    else:
        raise ValueError(f"{name} must be an integer in {rng_txt}; got {_short(value)}")
    if (low is not None and k < low) or (high is not None and k > high):
        why = f" ({reason})" if reason and high is not None and k > high else ""
        raise ValueError(f"{name} must be an integer in {rng_txt}; got {_short(value)}{why}")
    if not -INT_MAX - 1 <= k <= INT_MAX:
        raise ValueError(
            f"{name} must be an integer in {rng_txt} that fits in 64 bits (|{name}| < 2**63); got {_short(value)}"
        )
    return k


def check_array(
    name: str,
    value,
    *,
    ndim: int | None = None,
    shape: tuple | None = None,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    min_size: int = 0,
    max_abs: float | None = None,
) -> np.ndarray:
    """Return ``value`` as a finite float (or int) ndarray satisfying the constraints.

    Parameters
    ----------
    shape : tuple, optional
        Required shape; ``None`` entries match any length.
    max_abs : float, optional
        Largest magnitude of an entry (e.g. :data:`SCALE_MAX` for vectors that are
        squared and summed).
    integer : bool
        Require integral entries (returned with dtype int64). Without ``high`` (counts),
        their absolute values must sum to less than :data:`INT_SUM_LIMIT` (2**62), so
        that no sum, difference or doubling of them wraps around; entries bounded by
        ``high`` (item ids, residues modulo a modulus) are the caller's to combine.

    Raises
    ------
    ValueError
        If ``value`` is not a rectangular array of real numbers (a ragged list, strings,
        booleans, complex numbers, objects, ints beyond int64), has NaN or inf entries,
        or breaks a constraint; the message names ``name``. (Subnormal entries are
        accepted: a probability vector's far tail may hold them.)

    Examples
    --------
    >>> check_array("counts", [3, 1], low=0, integer=True)
    array([3, 1])
    >>> check_array("counts", [[1, 2], [3]])
    Traceback (most recent call last):
    ...
    ValueError: counts must be a rectangular array of real numbers; got a ragged or mixed sequence
    """
    if isinstance(value, dict | set | frozenset | str | bytes):
        raise ValueError(f"{name} must be an array of real numbers; got {type(value).__name__}")
    try:
        with np.errstate(all="ignore"):
            arr = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(f"{name} must be a rectangular array of real numbers; got a ragged or mixed sequence") from exc
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be an array of real numbers (int or float); got dtype {arr.dtype}"
            + (" (integers beyond the int64 range?)" if arr.dtype == object else "")
        )
    if arr.dtype.kind == "u" and arr.size and arr.max() > INT_MAX:
        raise ValueError(f"{name} entries must be at most 2**63 - 1; got max {arr.max()!r}")
    int_input = arr.dtype.kind in "iu"
    arr = arr.astype(np.int64 if (integer and int_input) else float, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional; got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape, strict=False)):
            want = (
                "(" + ", ".join("any" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            )
            raise ValueError(f"{name} must have shape {want}; got {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} entries; got {arr.size}")
    if arr.size and not int_input:
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    if max_abs is not None and arr.size and float(np.max(np.abs(arr))) > max_abs:
        raise ValueError(
            f"{name} entries must be at most {max_abs:g} in magnitude (their squares must stay finite); "
            f"got {float(np.max(np.abs(arr))):g}"
        )
    if integer:
        if arr.size and not int_input and not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must contain integers only")
        # counts (no upper bound) are summed: their sums must not wrap. Entries the caller
        # bounds (item ids, residues modulo a modulus) are the caller's to combine safely.
        if high is None and arr.size and max(abs(float(arr.max())), abs(float(arr.min()))) * arr.size >= INT_SUM_LIMIT:
            total = float(np.abs(arr.astype(float)).sum())
            if total >= INT_SUM_LIMIT:
                raise ValueError(
                    f"{name} entries must sum (in absolute value) to less than 2**62 = {INT_SUM_LIMIT:.3g}, "
                    f"so that sums of them cannot wrap around; got {total:.3g}"
                )
        arr = arr.astype(np.int64, copy=False)
    rng_txt = _interval(low, high, low_open, high_open)
    if arr.size and low is not None:
        bad = arr <= low if low_open else arr < low
        if np.any(bad):
            raise ValueError(f"{name} entries must lie in {rng_txt}; got min {arr.min()!r}")
    if arr.size and high is not None:
        bad = arr >= high if high_open else arr > high
        if np.any(bad):
            raise ValueError(f"{name} entries must lie in {rng_txt}; got max {arr.max()!r}")
    return arr


def check_ndim(name: str, value) -> int:
    """``np.ndim(value)``; a ragged or mixed sequence raises a ValueError naming ``name``.

    Used where a function takes a number or an array and dispatches on which it got.
    """
    try:
        with np.errstate(all="ignore"):
            return int(np.ndim(value))
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(
            f"{name} must be a number or a rectangular array of real numbers; got a ragged or mixed sequence"
        ) from exc


def check_bool(name: str, value) -> bool:
    """Return ``value`` as a bool; only ``True``/``False`` (or numpy booleans) are accepted.

    A string such as ``"False"`` is refused rather than read as true.
    """
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; got {_short(value)}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError listing them.

    Only a string (or an element of the same type as the choices) can match: a list,
    dict or set is refused with the same message, not with an unrelated ``TypeError``.
    """
    try:
        ok = value in choices
    except TypeError:  # an unhashable value tested against a set
        ok = False
    if not ok:
        listed = sorted(choices, key=str)
        raise ValueError(f"{name} must be one of {listed!r}; got {_short(value)}")
    return value


def call_checked(name: str, func: Callable[..., Any], *args: Any) -> Any:
    """Call a user-supplied function ``func`` (the argument ``name``) and return its result.

    A non-callable ``func`` raises :class:`TypeError`, and an exception raised inside
    ``func`` is re-raised as :class:`ValueError` naming ``name`` (with the original as its
    cause), so that the caller sees which argument failed.
    """
    if not callable(func):
        raise TypeError(f"{name} must be callable; got {_short(func)}")
    try:
        return func(*args)
    except Exception as exc:
        raise ValueError(f"{name} raised {type(exc).__name__}: {exc}") from exc
