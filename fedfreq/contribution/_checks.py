"""Input validation shared by the contribution-bounding modules."""

from __future__ import annotations

import numpy as np

from .._validation import EPSILON_MAX, SCALE_MAX, SCALE_MIN, check_array, check_ndim, check_real, check_scale

__all__ = []


def _histograms(histograms) -> np.ndarray:
    """(n, d) array of non-negative integer counts (int64).

    An int64 array of the right shape needs only its minimum checked (it is finite
    and integral by type), which spares large histograms the temporaries of the
    general check; anything else goes through :func:`check_array`, which also
    raises the error message for a negative count.
    """
    if (
        isinstance(histograms, np.ndarray)
        and histograms.dtype == np.int64
        and histograms.ndim == 2
        and histograms.size
        and histograms.min() >= 0
    ):
        return histograms
    return check_array("histograms", histograms, ndim=2, low=0.0, integer=True, min_size=1)


def _threshold(C, name: str = "C") -> float:
    return check_scale(name, C)


def _epsilon(epsilon, name: str = "epsilon") -> float:
    return check_real(
        name,
        epsilon,
        low=0.0,
        low_open=True,
        high=EPSILON_MAX,
        reason="e^(epsilon u) of the exponential mechanism and the threshold's e^-epsilon stay finite",
    )


def _delta(delta, name: str = "delta") -> float:
    return check_real(name, delta, low=0.0, high=1.0, low_open=True, high_open=True)


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


# exact expected losses and thresholds (Lemma 4.2, Theorem 4.3)
def _thresholds(C, allow_zero: bool = False, name: str = "C") -> tuple[np.ndarray, bool]:
    scalar = check_ndim(name, C) == 0
    arr = np.atleast_1d(check_array(name, C, low=0.0, low_open=not allow_zero, min_size=1))
    nonzero = arr[arr != 0.0]
    if nonzero.size and (nonzero.min() < SCALE_MIN or nonzero.max() > SCALE_MAX):
        lead = "0 or " if allow_zero else ""
        raise ValueError(
            f"{name} entries must be {lead}in [{SCALE_MIN:g}, {SCALE_MAX:g}] (their squares and the squares of their "
            f"reciprocals must stay finite); got min {nonzero.min()!r}, max {nonzero.max()!r}"
        )
    return arr, scalar


def _finite_loss(out: np.ndarray, names: str) -> np.ndarray:
    """Refuse a loss that overflows double precision (parameters too large together)."""
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{names} are too large together: the loss overflows double precision (above 1.8e308)")
    return out


# Algorithm 5 (debiasing Poisson counts)
def _lams(lam, name: str = "lam") -> tuple[np.ndarray, bool]:
    scalar = check_ndim(name, lam) == 0
    return np.atleast_1d(check_array(name, lam, low=0.0)).astype(float), scalar
