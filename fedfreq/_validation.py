"""Argument validation shared by every module of :mod:`fedfreq`.

Every public function checks its inputs with these helpers, so that bad input
raises a :class:`ValueError` that names the parameter and its allowed range,
instead of producing a silent NaN or a clipped value.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _interval(low, high, low_open, high_open) -> str:
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    left = "(" if (low_open or low is None) else "["
    right = ")" if (high_open or high is None) else "]"
    return f"{left}{lo}, {hi}{right}"


def check_real(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    reason: str = "",
) -> float:
    """Return ``value`` as a finite float inside the given interval.

    ``reason`` (e.g. why ``high`` is the limit) is appended to the message of a value
    above ``high``.

    Raises
    ------
    ValueError
        If ``value`` is not a real number, is NaN or infinite, or lies outside
        the interval; the message names ``name`` and the allowed interval.
    """
    rng_txt = _interval(low, high, low_open, high_open)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        else:
            raise ValueError(f"{name} must be a real number in {rng_txt}; got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite real number in {rng_txt}; got {value!r}")
    if low is not None and (x < low or (low_open and x == low)):
        raise ValueError(f"{name} must lie in {rng_txt}; got {value!r}")
    if high is not None and (x > high or (high_open and x == high)):
        why = f" ({reason})" if reason else ""
        raise ValueError(f"{name} must lie in {rng_txt}; got {value!r}{why}")
    return x


def check_int(name: str, value, *, low: int | None = None, high: int | None = None, reason: str = "") -> int:
    """Return ``value`` as a Python int inside ``[low, high]``.

    Integral floats such as ``1e9`` are accepted; ``2.5``, NaN and booleans are not.
    ``reason`` (e.g. why ``high`` is the limit) is appended to the message of a value
    outside the range.
    """
    rng_txt = _interval(low, high, False, False)
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer in {rng_txt}; got {value!r}")
    if isinstance(value, numbers.Integral):
        k = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        k = int(float(value))
    else:
        raise ValueError(f"{name} must be an integer in {rng_txt}; got {value!r}")
    if (low is not None and k < low) or (high is not None and k > high):
        why = f" ({reason})" if reason and high is not None and k > high else ""
        raise ValueError(f"{name} must be an integer in {rng_txt}; got {value!r}{why}")
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
) -> np.ndarray:
    """Return ``value`` as a finite float (or int) ndarray satisfying the constraints.

    Parameters
    ----------
    shape : tuple, optional
        Required shape; ``None`` entries match any length.
    integer : bool
        Require integral entries (returned with dtype int64).
    """
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy raises many types
        raise ValueError(f"{name} must be array-like; got {type(value).__name__}") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.number)):
        raise ValueError(f"{name} must be a numeric array; got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real-valued")
    arr = arr.astype(np.int64 if (integer and np.issubdtype(arr.dtype, np.integer)) else float, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional; got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape, strict=False)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}; got {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} entries; got {arr.size}")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    if integer and arr.dtype != np.int64:
        if arr.size and not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must contain integers only")
        arr = arr.astype(np.int64)
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


def check_bool(name: str, value) -> bool:
    """Return ``value`` as a bool; only ``True``/``False`` (or numpy booleans) are accepted.

    A string such as ``"False"`` is refused rather than read as true.
    """
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)!r}; got {value!r}")
    return value
