"""fedfreq.display: numbers stored at the precision a claim needs."""

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fedfreq.display import GLUE_DIGITS, bound_text, glue, round_sig


def test_round_sig_scalars_and_arrays():
    assert round_sig(1.0367690791769075, 4) == 1.037
    assert round_sig(-0.000123456, 3) == -0.000123
    assert round_sig(7, 2) == 7 and isinstance(round_sig(np.int64(7), 2), np.integer)
    assert round_sig([0.000123456, 98765.4], 3).tolist() == [0.000123, 98800.0]


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300), st.integers(1, 15))
@example(8.965440441867975e-59, 15)  # 0.53 units away: half a unit plus the double's own rounding
def test_round_sig_is_within_half_a_unit_of_the_last_digit(x, digits):
    r = round_sig(x, digits)
    if x == 0:
        assert r == 0
    else:
        unit = 10.0 ** (math.floor(math.log10(abs(x))) - digits + 1)
        # the decimal rounding d is within half a unit of x, and r is the double nearest to
        # d, within half an ulp of it (at 15 digits that ulp is up to a fifth of a unit)
        assert abs(r - x) <= 0.5 * unit * (1 + 1e-9) + 0.5 * math.ulp(r) + 1e-300


@given(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6).filter(lambda v: abs(v) > 1e-300)
)
def test_round_sig_absorbs_last_bit_changes(x):
    """The point of the helper: a one-ulp change almost never changes the stored value."""
    neighbour = float(np.nextafter(x, np.inf))
    same = round_sig(x, GLUE_DIGITS) == round_sig(neighbour, GLUE_DIGITS)
    # a change is possible only when x sits on a rounding boundary; then the two differ by one unit
    if not same:
        unit = 10.0 ** (math.floor(math.log10(max(abs(x), abs(neighbour)))) - GLUE_DIGITS + 1)
        assert math.isclose(abs(round_sig(neighbour, GLUE_DIGITS) - round_sig(x, GLUE_DIGITS)), unit, rel_tol=1e-6)


def test_round_sig_rejects_bad_input():
    for bad in (0, 16, 2.5, True):
        with pytest.raises(ValueError, match="digits"):
            round_sig(1.0, bad)
    with pytest.raises(ValueError, match="finite"):
        round_sig(float("nan"))
    with pytest.raises(ValueError, match="finite"):
        round_sig([1.0, np.inf])
    with pytest.raises(ValueError, match="boolean"):
        round_sig(True)
    with pytest.raises(ValueError, match="dtype"):
        round_sig(np.array(["a"]))


def test_bound_text():
    assert bound_text(3.1e-16, 1e-12) == "< 1e-12"
    assert bound_text(-3.1e-16, 1e-12) == "< 1e-12"
    assert bound_text(2.9e-16, 1e-12) == bound_text(1.6e-15, 1e-12)  # rounding noise reads the same
    assert bound_text(0.0123, 1e-12) == "0.012"
    assert bound_text(5e-7, 1e-6) == "< 1e-6"
    for kwargs in ({"floor": 0.0}, {"floor": -1.0}, {"floor": float("inf")}, {"floor": 1e-9, "digits": 0}):
        with pytest.raises(ValueError, match="floor|digits"):
            bound_text(1.0, **kwargs)
    with pytest.raises(ValueError, match="value"):
        bound_text(float("nan"), 1e-9)


@pytest.mark.parametrize("display", [False, True])
@pytest.mark.parametrize("value", [0.5, 12, "< 1e-12", True])
def test_glue_records_what_myst_nb_records(monkeypatch, value, display):
    """The glue record is the one myst-nb's own ``glue`` writes (the book build reads it)."""
    import IPython.display
    import myst_nb.ext.glue

    calls = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: calls.append((a, k)))
    monkeypatch.setattr(myst_nb.ext.glue, "ipy_display", lambda *a, **k: calls.append((a, k)))
    glue("key", value, display=display)
    myst_nb.glue("key", value, display=display)
    assert len(calls) == 2 and calls[0] == calls[1]
    bundle = calls[0][0][0]
    assert all(k.startswith("application/papermill.record/") != display for k in bundle)


def test_glue_rounds_before_storing(monkeypatch):
    stored = {}

    def fake_glue(name, value, display):
        stored[name] = (value, display)

    import fedfreq.display

    monkeypatch.setattr(fedfreq.display, "_emit_glue", fake_glue)
    glue("x", np.float64(1.0367690791769075))
    glue("y", 0.123456789, digits=3)
    glue("k", np.int64(12))
    glue("s", "< 1e-12")
    glue("b", np.bool_(True))
    glue("z", np.array(2.0 / 3.0))
    assert stored["x"] == (1.0367691, False)
    assert stored["y"][0] == 0.123 and type(stored["y"][0]) is float
    assert stored["k"][0] == 12 and type(stored["k"][0]) is int
    assert stored["s"][0] == "< 1e-12"
    assert stored["b"][0] is True
    assert stored["z"][0] == 0.66666667
    with pytest.raises(ValueError, match="name"):
        glue("", 1.0)
    with pytest.raises(ValueError, match="finite"):
        glue("nan", float("nan"))
    with pytest.raises(ValueError, match="number, string, boolean or figure"):
        glue("arr", np.arange(3.0))


def test_book_style_sets_a_colour_blind_safe_cycle_and_checks_its_sizes():
    import matplotlib as mpl
    import pytest

    from fedfreq.display import PALETTE, book_style

    saved = mpl.rcParams.copy()
    try:
        book_style(width=5, height=3)
        assert list(mpl.rcParams["figure.figsize"]) == [5, 3]
        assert mpl.rcParams["axes.prop_cycle"].by_key()["color"] == list(PALETTE)
        assert len(set(PALETTE)) == len(PALETTE) == 8
        for bad in (0, -1, 21, float("nan")):
            with pytest.raises(ValueError, match="width"):
                book_style(width=bad)
    finally:
        mpl.rcParams.update(saved)


def test_figure_text_check_flags_text_too_small_for_a_phone():
    """Text of s points on an image w inches wide shows s/72 * 342/w px on a phone: the
    book's defaults pass, a 9-point title on a 6.4-inch figure warns, and each figure
    warns once per image width."""
    import io
    import warnings

    import matplotlib as mpl
    import matplotlib.pyplot as plt

    from fedfreq.display import MIN_PHONE_TEXT_PX, PHONE_FIGURE_PX, FigureTextWarning, book_style, figure_text_px

    saved = mpl.rcParams.copy()
    try:
        book_style()
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1], label="$p_s$")
        ax.set(xlabel="$x$", ylabel="$y$")
        ax.legend()
        with warnings.catch_warnings():
            warnings.simplefilter("error", FigureTextWarning)
            fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
        px, _ = figure_text_px(fig, 5.4 * fig.dpi)
        assert px == pytest.approx(11.5 / 72 * PHONE_FIGURE_PX / 5.4) and px >= MIN_PHONE_TEXT_PX
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        ax.plot([0, 1], [0, 1])
        ax.set_title("small title", fontsize=9)
        with pytest.warns(FigureTextWarning, match="'small title' is") as record:
            fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
        assert len(record) == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error", FigureTextWarning)
            fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")  # same width: no second warning
        # an image narrower than the phone's column is shown at its own size
        assert figure_text_px(fig, 100)[0] == pytest.approx(9 / 72 * fig.dpi)
        plt.close(fig)
    finally:
        mpl.rcParams.update(saved)


def test_glue_table_glues_each_cell_as_text(monkeypatch):
    import fedfreq.display
    from fedfreq.display import glue_table

    stored = {}
    monkeypatch.setattr(fedfreq.display, "_emit_glue", lambda name, value, display: stored.update({name: value}))
    glue_table("t", [["a", "1.50"], [3, 0.25]])
    assert stored == {"t_0_0": "a", "t_0_1": "1.50", "t_1_0": "3", "t_1_1": "0.25"}
    with pytest.raises(ValueError, match="prefix"):
        glue_table("", [[1]])
    with pytest.raises(ValueError, match="rows must be"):
        glue_table("t", None)
    with pytest.raises(ValueError, match=r"rows\[0\]\[1\] must be finite"):
        glue_table("t", [[1.0, float("nan")]])


def test_the_browser_check_holds_figures_to_the_width_their_text_was_checked_for():
    """scripts/browser_check.py fails a page whose figure is shown narrower on a phone than
    the width fedfreq.display assumes when it checks a figure's text."""
    import re
    from pathlib import Path

    from fedfreq.display import PHONE_FIGURE_PX

    script = (Path(__file__).resolve().parents[1] / "scripts" / "browser_check.py").read_text()
    assert int(re.search(r"^PHONE_FIGURE_PX = (\d+)$", script, re.M).group(1)) == PHONE_FIGURE_PX
