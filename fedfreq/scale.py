"""One switch between the default (fast) scale and the papers' scale.

Chapters size their experiments with :func:`pick`, so that setting the environment
variable ``FEDFREQ_SCALE=full`` moves every experiment to the papers' setting at once,
and wrap long loops in :func:`progress`, which shows a progress bar only at full scale
(stored outputs at the default scale stay free of volatile progress text).
"""

from __future__ import annotations

import os
import reprlib
from collections.abc import Iterable, Iterator, Sized
from typing import TypeVar

from ._validation import check_int

__all__ = ["SCALES", "ENV_VAR", "PROGRESS_VAR", "current_scale", "pick", "progress"]

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


#: Environment variable naming a file that receives the progress bars (set by
#: ``scripts/execute_notebooks.py``, which relays the file to the terminal).
PROGRESS_VAR = "FEDFREQ_PROGRESS"


def progress(iterable: Iterable[T], *, desc: str = "", total: int | None = None, **kwargs) -> Iterable[T]:
    """Wrap ``iterable`` in a progress bar at the papers' scale; return it unchanged otherwise.

    At the default scale nothing is shown, so stored outputs stay free of volatile
    text. At full scale the bar (tqdm) shows ``desc`` (the experiment's name; callers
    should pass one, otherwise a short description of ``iterable`` stands in), the count
    and an ETA. When ``FEDFREQ_PROGRESS`` names a file, the bar is written there as
    plain text instead of into the notebook: ``scripts/execute_notebooks.py`` sets it
    and relays the file to the terminal, so a long chapter shows where it is.

    Examples
    --------
    >>> list(progress(range(3), desc="demo"))  # the default scale: no bar
    [0, 1, 2]
    """
    if not isinstance(desc, str):
        raise ValueError(f"desc must be a string (the experiment's name); got {desc!r}")
    if total is not None:
        total = check_int("total", total, low=0)
    if current_scale() != "full":
        return iterable
    desc = desc or _describe(iterable)
    target = os.environ.get(PROGRESS_VAR, "").strip()
    if target:
        from tqdm import tqdm as plain_tqdm

        stream = open(target, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - closed with the bar
        bar = plain_tqdm(iterable, desc=desc, total=total, file=stream, mininterval=1.0, ascii=True, **kwargs)
        return _closing(bar, stream)
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, **kwargs)


def _describe(iterable: object) -> str:
    """A short name for a bar whose caller gave none: ``range(0, 200)``, ``ndarray of 12``."""
    short = reprlib.Repr()
    short.maxother = short.maxstring = 40
    short.maxlist = short.maxtuple = 4
    text = "" if hasattr(iterable, "shape") else short.repr(iterable)  # arrays: by size
    if text and " at 0x" not in text and len(text) <= 40 and "\n" not in text:
        return text
    size = f" of {len(iterable)}" if isinstance(iterable, Sized) else ""
    return f"{type(iterable).__name__}{size}"


def _closing(bar, stream) -> Iterator:
    try:
        yield from bar
    finally:
        bar.close()
        stream.write("\n")
        stream.close()
