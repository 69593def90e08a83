"""Numbers at the precision a claim needs: glue and print helpers for the chapters.

A stored notebook output must read the same when the notebook is re-executed on
another machine. The last one to three digits of a 17-digit float repr change with
the BLAS kernels the CPU selects, numpy's SIMD dispatch level and the C maths
library, so no chapter stores a raw repr. Every chapter

- glues numbers with :func:`glue`, which rounds a float to a stated number of
  significant digits (default ``GLUE_DIGITS``) before it is stored;
- prints errors that sit at rounding level with :func:`bound_text`, which prints
  ``"< 1e-12"`` instead of a value whose digits are noise;
- rounds what it prints with :func:`round_sig`, or formats it with an explicit precision.

The test suite scans every stored output for floats with 13 or more significant
digits and fails if it finds one.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ._validation import check_real

__all__ = ["GLUE_DIGITS", "PALETTE", "book_style", "glue", "round_sig", "bound_text"]

#: The colour cycle of the book's figures: the Okabe-Ito palette, which readers with
#: any common form of colour blindness can tell apart (blue, vermillion, bluish green,
#: reddish purple, orange, sky blue, black; yellow last, as it is faint on white).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")

#: Significant digits kept by :func:`glue` unless a call asks for fewer or more. Eight
#: digits cover every format the prose uses (at most four decimals on values below
#: 10 000), and a rounding-level difference (relative 1e-15) changes an 8-digit rounding
#: with probability about 1e-7 per number.
GLUE_DIGITS = 8


def book_style(*, width: float = 6.4, height: float = 3.8) -> None:
    """Set matplotlib's defaults for the book's figures.

    A colour-blind-safe cycle (:data:`PALETTE`, so ``"C0"``, ``"C1"``... name its
    colours), type large enough to read when a figure is shrunk to a phone's width, a
    white background that stays readable in the site's dark mode, and a light grid.

    Parameters
    ----------
    width, height : float
        Default figure size in inches, each in (0, 20].

    Raises
    ------
    ValueError
        If ``width`` or ``height`` is outside (0, 20].

    Examples
    --------
    >>> import matplotlib as mpl
    >>> book_style(width=5.0, height=3.0)
    >>> mpl.rcParams["axes.prop_cycle"].by_key()["color"][0] == PALETTE[0]
    True
    >>> book_style()
    """
    width = check_real("width", width, low=0.0, high=20.0, low_open=True)
    height = check_real("height", height, low=0.0, high=20.0, low_open=True)
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(
        {
            "figure.dpi": 110,
            "figure.figsize": (width, height),
            "figure.facecolor": "white",
            "axes.facecolor": "white",
            "savefig.facecolor": "white",
            "axes.prop_cycle": cycler(color=list(PALETTE)),
            "font.size": 11,
            "axes.titlesize": 11,
            "axes.labelsize": 11,
            "legend.fontsize": 9.5,
            "xtick.labelsize": 10,
            "ytick.labelsize": 10,
            "lines.linewidth": 1.8,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )


def round_sig(value, digits: int = 6):
    """Round a real number, or every entry of an array, to ``digits`` significant digits.

    Parameters
    ----------
    value : float, int or array_like of float
        Finite real number(s). Integers (Python or numpy) are returned unchanged.
    digits : int
        Number of significant digits, 1 to 15.

    Returns
    -------
    float, int or numpy.ndarray
        The rounded value, as a Python float for a scalar.

    Raises
    ------
    ValueError
        If ``digits`` is outside 1..15 or ``value`` is not finite.

    Examples
    --------
    >>> round_sig(1.0367690791769075, 4)
    1.037
    >>> round_sig([0.000123456, 98765.4], 3).tolist()
    [0.000123, 98800.0]
    """
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or not 1 <= digits <= 15:
        raise ValueError(f"digits must be an integer in [1, 15]; got {digits!r}")
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"value must be a real number, not a boolean; got {value!r}")
    if isinstance(value, numbers.Integral):
        return value
    if isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x):
            raise ValueError(f"value must be finite; got {value!r}")
        return _rounded_finite(float(f"{x:.{digits}g}"))
    arr = np.asarray(value)
    if arr.dtype.kind in "iu":
        return arr
    if arr.dtype.kind != "f":
        raise ValueError(f"value must be a real number or an array of them; got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("value must be finite (it contains NaN or infinity)")
    return _rounded_finite(np.vectorize(lambda x: float(f"{x:.{digits}g}"), otypes=[float])(arr))


def _rounded_finite(rounded):
    """``rounded``, unless rounding up a value near the largest float made it infinite."""
    if not np.all(np.isfinite(rounded)):
        raise ValueError("value is too close to the largest float: rounded, it would overflow to inf")
    return rounded


def bound_text(value, floor: float, *, digits: int = 2) -> str:
    """Text for an error: ``"< floor"`` when it is below ``floor``, else its value.

    Use it for deviations that the analysis expects to be at rounding level, so the
    printed text does not depend on the last bits of a float: ``bound_text(3.1e-16, 1e-12)``
    gives ``"< 1e-12"`` on every machine. A value at or above ``floor`` is printed with
    ``digits`` significant digits, because then it is a real error, not rounding.

    Parameters
    ----------
    value : float
        The error (its absolute value is used); must be finite.
    floor : float
        Positive threshold below which the value is reported only as a bound.
    digits : int
        Significant digits for a value at or above ``floor`` (1 to 6).

    Examples
    --------
    >>> bound_text(3.1e-16, 1e-12)
    '< 1e-12'
    >>> bound_text(0.0123, 1e-12)
    '0.012'
    """
    x = check_real("value", value)
    f = check_real("floor", floor, low=0.0, low_open=True)
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or not 1 <= digits <= 6:
        raise ValueError(f"digits must be an integer in [1, 6]; got {digits!r}")
    if abs(x) < f:
        return f"< {f:.0e}".replace("e-0", "e-").replace("e+0", "e+")
    return f"{abs(x):.{digits}g}"


def glue(name: str, value: Any, display: bool = False, *, digits: int = GLUE_DIGITS) -> None:
    """Glue a value for the prose (as ``myst_nb.glue`` does), rounding floats to ``digits`` digits.

    Integers, strings and booleans are glued unchanged; numpy scalars become Python
    scalars first (numpy 2 would otherwise store ``np.float64(...)``).

    Parameters
    ----------
    name : str
        Glue key, referenced from the prose as ``{glue:text}`name:.3f```.
    value : float, int, str, bool or matplotlib Figure
        The value. A float must be finite. A figure is glued as it is, for a
        ``{glue:figure}`` directive that gives it a number, a caption and alt text.
    display : bool
        Show the value in the cell output too (``myst_nb.glue``'s ``display``).
    digits : int
        Significant digits kept for a float (1 to 15). Give fewer for a value that comes
        out of an optimiser or a Monte Carlo loop whose precision is lower.

    Raises
    ------
    ValueError
        For an empty name, a non-finite float or an unsupported type.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string; got {name!r}")
    if not isinstance(display, bool | np.bool_):
        raise ValueError(f"display must be True or False; got {display!r}")
    stored: Any
    if hasattr(value, "savefig"):  # a matplotlib figure, pasted by {glue:figure} with a caption
        stored = value
    elif isinstance(value, (bool, np.bool_)):
        stored = bool(value)
    elif isinstance(value, str):
        stored = value
    elif isinstance(value, numbers.Integral):
        stored = int(value)
    elif isinstance(value, numbers.Real) or (isinstance(value, np.ndarray) and value.ndim == 0):
        stored = round_sig(float(value), digits)
    else:
        raise ValueError(
            f"value for glue key {name!r} must be a number, string, boolean or figure; got {type(value).__name__}"
        )
    _emit_glue(name, stored, display)


#: Mime-type prefix of a value glued without being shown (the record myst-nb reads).
GLUE_PREFIX = "application/papermill.record/"


def _emit_glue(name: str, value: Any, display: bool) -> None:
    """Record ``value`` under ``name`` in the cell's outputs, in the format of ``myst_nb.glue``.

    The same display call as myst-nb's own ``glue`` (its formatted mime bundle, prefixed
    when not shown, with ``scrapbook`` metadata naming the key), made with IPython alone, so
    that a chapter runs on a kernel without the book-building tools; the book build reads
    the record as myst-nb's. ``tests/test_display.py`` checks the two calls are identical.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    bundle, metadata = format_display_data(value)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
