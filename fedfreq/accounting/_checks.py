"""Input validation shared by the accounting modules."""

from __future__ import annotations

import numpy as np
from scipy import special

from .._validation import check_array, check_ndim, check_real

__all__ = []


# Largest tolerated |logsumexp(log_p)| for an input distribution.
_NORMALISATION_ATOL = 1e-6

#: Largest Rényi order accepted: 2**53, beyond which α - 1 rounds to α (and the
#: 1/(α - 1) of every RDP formula loses its meaning); every curve has long reached
#: its limit ε(∞) there.
ORDER_MAX = 2.0**53
_ORDER_REASON = "beyond 2**53 the double alpha - 1 rounds to alpha"


def _check_orders(order, name: str = "order") -> tuple[np.ndarray, bool]:
    """Validate Rényi orders (in (1, 2**53]); return (array, was_scalar)."""
    if check_ndim(name, order) == 0:
        value = check_real(name, order, low=1.0, low_open=True, high=ORDER_MAX, reason=_ORDER_REASON)
        return np.asarray(value, dtype=float), True
    arr = check_array(name, order, low=1.0, low_open=True, min_size=1)
    if np.any(arr > ORDER_MAX):
        raise ValueError(f"{name} entries must lie in (1, {ORDER_MAX:g}]; got max {arr.max()!r} ({_ORDER_REASON})")
    return arr, False


def _check_nonneg_real_or_array(name: str, value) -> tuple[np.ndarray, bool]:
    """Validate a finite, non-negative scalar or array; return (array, was_scalar)."""
    if np.ndim(value) == 0:
        return np.asarray(check_real(name, value, low=0.0), dtype=float), True
    return check_array(name, value, low=0.0, min_size=1), False


def _check_rdp_curve(name: str, value) -> np.ndarray:
    """Validate an RDP curve: real entries in [0, +inf] (+inf means 'no bound')."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy raises many types
        raise ValueError(f"{name} must be array-like; got {type(value).__name__}") from exc
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must be a real numeric array; got dtype {arr.dtype}")
    arr = arr.astype(float)
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN; entries must lie in [0, inf]")
    if np.any(arr < 0):
        raise ValueError(f"{name} entries must lie in [0, inf]; got min {arr.min()!r}")
    return arr


def _check_log_probs(name: str, value) -> np.ndarray:
    """Validate a 1-D vector of log-probabilities (entries in [-inf, 0], summing to 1)."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover
        raise ValueError(f"{name} must be array-like; got {type(value).__name__}") from exc
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must be a real numeric array of log-probabilities")
    arr = arr.astype(float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-dimensional array; got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN; entries must lie in [-inf, 0]")
    if np.any(arr > 0):
        raise ValueError(f"{name} entries are log-probabilities and must lie in [-inf, 0]; got max {arr.max()!r}")
    total = special.logsumexp(arr)
    if not abs(total) <= _NORMALISATION_ATOL:
        raise ValueError(
            f"{name} must be the log-probabilities of a distribution: logsumexp({name}) must lie in "
            f"[-{_NORMALISATION_ATOL:g}, {_NORMALISATION_ATOL:g}]; got {total!r}"
        )
    return arr


def _check_pair(log_p, log_q) -> tuple[np.ndarray, np.ndarray]:
    lp = _check_log_probs("log_p", log_p)
    lq = _check_log_probs("log_q", log_q)
    if lp.shape != lq.shape:
        raise ValueError(f"log_p and log_q must have the same shape; got {lp.shape} and {lq.shape}")
    return lp, lq


def _as_output(x: np.ndarray, scalar: bool):
    return float(x) if scalar else x


def _check_curve_on_orders(orders, rdp) -> tuple[np.ndarray, np.ndarray]:
    a = check_array("orders", orders, ndim=1, low=1.0, low_open=True, min_size=1)
    r = _check_rdp_curve("rdp", rdp)
    if r.shape != a.shape:
        raise ValueError(f"rdp must have the same shape as orders {a.shape}; got {r.shape}")
    return a, r
