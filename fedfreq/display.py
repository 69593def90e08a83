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

__all__ = [
    "GLUE_DIGITS",
    "MIN_PHONE_TEXT_PX",
    "PALETTE",
    "PHONE_FIGURE_PX",
    "FigureTextWarning",
    "book_style",
    "bound_text",
    "figure_text_px",
    "glue",
    "glue_table",
    "round_sig",
]

#: The colour cycle of the book's figures: the Okabe-Ito palette, which readers with
#: any common form of colour blindness can tell apart (blue, vermillion, bluish green,
#: reddish purple, orange, sky blue, black; yellow last, as it is faint on white).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")

#: Significant digits kept by :func:`glue` unless a call asks for fewer or more. Eight
#: digits cover every format the prose uses (at most four decimals on values below
#: 10 000), and a rounding-level difference (relative 1e-15) changes an 8-digit rounding
#: with probability about 1e-7 per number.
GLUE_DIGITS = 8


#: Width, in CSS pixels, at which the book's site shows a figure on a phone 390 px wide
#: (the text column less its margins, measured in Chromium by ``scripts/browser_check.py``,
#: which fails if an output image is shown narrower than this at 390 px).
PHONE_FIGURE_PX = 342

#: The smallest text, in CSS pixels, a figure may show at :data:`PHONE_FIGURE_PX`.
MIN_PHONE_TEXT_PX = 10.0


class FigureTextWarning(UserWarning):
    """A figure's text would be smaller than :data:`MIN_PHONE_TEXT_PX` on a phone."""


def _visible_texts(fig):
    from matplotlib.text import Text

    for artist in fig.findobj(match=Text):
        if (
            artist.get_visible()
            and artist.get_text().strip()
            and (artist.get_alpha() is None or artist.get_alpha() > 0)
        ):
            yield artist


def figure_text_px(fig, width_px: float | None = None) -> tuple[float, str]:
    """The smallest visible text of a figure, in CSS pixels when shown on a phone.

    A figure image ``width_px`` pixels wide (default: the figure's width at its dpi) is
    shown at most :data:`PHONE_FIGURE_PX` wide on a phone, so text of ``s`` points
    appears ``s / 72 * dpi * min(1, PHONE_FIGURE_PX / width_px)`` pixels high.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    width_px : float, optional
        Width of the stored image in pixels, in (0, 1e6].

    Returns
    -------
    (float, str)
        That height for the smallest text, and the text itself (``(inf, "")`` for a
        figure without text).

    Raises
    ------
    ValueError
        If ``fig`` is not a figure or ``width_px`` is outside (0, 1e6].

    Examples
    --------
    >>> import matplotlib
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(5.4, 3.3), dpi=110)
    >>> _ = fig.text(0.5, 0.5, "tiny", fontsize=6)
    >>> px, text = figure_text_px(fig)
    >>> round(px, 2), text
    (5.28, 'tiny')
    """
    if not hasattr(fig, "findobj") or not hasattr(fig, "bbox"):
        raise ValueError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    if width_px is None:
        width = float(fig.bbox.width)
    else:
        width = check_real("width_px", width_px, low=0.0, high=1e6, low_open=True)
    scale = fig.dpi / 72.0 * min(1.0, PHONE_FIGURE_PX / width) if width > 0 else fig.dpi / 72.0
    best = (math.inf, "")
    for artist in _visible_texts(fig):
        px = artist.get_fontsize() * scale
        if px < best[0]:
            best = (px, artist.get_text())
    return best


def _warn_small_text(event) -> None:
    """``draw_event`` callback: warn once per figure and image width if text is too small.

    The image width is the one a notebook stores: the figure cropped to its tight
    bounding box plus ``savefig.pad_inches`` (the inline backend saves with
    ``bbox_inches="tight"``), whichever of the draws ``savefig`` makes fires the event.
    """
    import matplotlib as mpl

    fig = event.canvas.figure
    pad = mpl.rcParams["savefig.pad_inches"]
    pad = float(pad) if isinstance(pad, int | float) else 0.1
    try:
        inches = float(fig.get_tightbbox(event.renderer).width) + 2.0 * pad
    except Exception:  # an artist that cannot report its extent: fall back to the canvas
        inches = float(fig.get_figwidth())
    width = round(inches * fig.dpi)
    seen = fig.__dict__.setdefault("_fedfreq_text_checked", set())
    if width in seen:
        return
    seen.add(width)
    px, text = figure_text_px(fig, width)
    if px < MIN_PHONE_TEXT_PX:
        import warnings

        warnings.warn(
            f"figure text {text[:40]!r} is {px:.1f} px high on a phone (an image {inches:.1f} in wide is shown "
            f"{PHONE_FIGURE_PX} px wide); the book needs >= {MIN_PHONE_TEXT_PX:g} px: enlarge the font or narrow "
            "the figure",
            FigureTextWarning,
            stacklevel=2,
        )


def _connect_text_check(fig) -> None:
    """matplotlib ``figure.hooks`` entry: check the text size of every figure pyplot makes."""
    fig.canvas.mpl_connect("draw_event", _warn_small_text)


def book_style(*, width: float = 5.4, height: float = 3.3) -> None:
    """Set matplotlib's defaults for the book's figures.

    A colour-blind-safe cycle (:data:`PALETTE`, so ``"C0"``, ``"C1"``... name its
    colours), a white background that stays readable in the site's dark mode, a light
    grid, and type that stays readable when a figure is shrunk to a phone's width: the
    default 5.4-inch figure with 11.5-point ticks and legend shows them
    ``11.5 / 72 * 342 / 5.4`` ≈ 10.1 px high on a phone. Every figure pyplot creates
    afterwards is checked when drawn: text below :data:`MIN_PHONE_TEXT_PX` on a phone
    raises a :class:`FigureTextWarning` (``tests/test_notebooks.py`` fails on a stored one).

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
            "font.size": 12,
            "axes.titlesize": 12,
            "axes.labelsize": 12,
            "legend.fontsize": 11.5,
            "xtick.labelsize": 11.5,
            "ytick.labelsize": 11.5,
            "figure.hooks": ["fedfreq.display:_connect_text_check"],
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


def glue_table(prefix: str, rows) -> None:
    """Glue every cell of a table for a MyST ``{table}``: row ``i``, column ``j`` as ``<prefix>_<i>_<j>``.

    Each cell is glued as its ``str``, so a table's numbers are formatted by the caller
    (e.g. ``f"{x:.3f}"``) and shown as given by ``{glue:text}`<prefix>_<i>_<j>```.

    Parameters
    ----------
    prefix : str
        Non-empty start of every glue key.
    rows : sequence of sequences
        The table's rows; strings, numbers (finite) and booleans.

    Raises
    ------
    ValueError
        For an empty prefix, rows that are not a sequence of sequences, or a float
        cell that is not finite.
    """
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"prefix must be a non-empty string; got {prefix!r}")
    if isinstance(rows, str | bytes | dict) or not hasattr(rows, "__iter__"):
        raise ValueError(f"rows must be a sequence of rows (lists or tuples); got {type(rows).__name__}")
    for i, row in enumerate(rows):
        if isinstance(row, str | bytes | dict) or not hasattr(row, "__iter__"):
            raise ValueError(f"rows[{i}] must be a list or tuple of cells; got {type(row).__name__}")
        for j, value in enumerate(row):
            if isinstance(value, float | np.floating) and not math.isfinite(value):
                raise ValueError(f"rows[{i}][{j}] must be finite; got {value!r}")
            glue(f"{prefix}_{i}_{j}", str(value))


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
