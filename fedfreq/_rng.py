"""The single place where ``rng`` arguments are normalised."""

from __future__ import annotations

import numbers

import numpy as np

RNGLike = "np.random.Generator | int | None"


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    Parameters
    ----------
    rng : Generator, int or None
        An existing generator (returned unchanged, so draws continue its stream),
        a non-negative integer seed, or ``None`` for fresh OS entropy.

    Raises
    ------
    ValueError
        If ``rng`` is a negative integer, a boolean, or any other type.

    Examples
    --------
    >>> g = as_generator(7)
    >>> as_generator(g) is g
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"rng must be a Generator, a seed in [0, inf) or None; got {rng!r}")
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be a numpy.random.Generator, a non-negative int seed or None; got {type(rng).__name__}")
