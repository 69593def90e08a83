"""One switch between the default (fast) scale and the papers' scale.

Chapters size their experiments with :func:`pick`, so that setting the environment
variable ``FEDFREQ_SCALE=full`` moves every experiment to the papers' setting at once,
and wrap long loops in :func:`progress`, which shows a progress bar only at full scale
(stored outputs at the default scale stay free of volatile progress text).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TypeVar

__all__ = ["SCALES", "ENV_VAR", "current_scale", "pick", "progress"]

T = TypeVar("T")
SCALES = ("default", "full")
ENV_VAR = "FEDFREQ_SCALE"


def current_scale() -> str:
    """Return ``"default"`` or ``"full"`` from ``FEDFREQ_SCALE`` (unset means default).

    Raises
    ------
    ValueError
        If the variable holds anything else.
    """
    value = os.environ.get(ENV_VAR, "default").strip().lower() or "default"
    if value not in SCALES:
        raise ValueError(f"{ENV_VAR} must be one of {SCALES}; got {value!r}")
    return value


def pick(default: T, full: T) -> T:
    """Return ``default`` at the default scale and ``full`` at the papers' scale.

    Examples
    --------
    >>> trials = pick(default=200, full=10_000)
    """
    return full if current_scale() == "full" else default


def progress(iterable: Iterable[T], **kwargs) -> Iterable[T]:
    """Wrap ``iterable`` in a tqdm progress bar at full scale; return it unchanged otherwise."""
    if current_scale() != "full":
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, **kwargs)
