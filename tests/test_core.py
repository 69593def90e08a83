"""Tests of the shared helpers: rng normalisation, validation, claims, scale switch."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fedfreq
from fedfreq import scale
from fedfreq._rng import as_generator
from fedfreq._validation import TINY, check_array, check_choice, check_int, check_real
from fedfreq.claims import ClaimFailed, check_claim


def test_as_generator_accepts_the_three_forms():
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    assert as_generator(5).integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)
    assert isinstance(as_generator(None), np.random.Generator)
    assert as_generator(np.int64(3)).random() == np.random.default_rng(3).random()


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, [1, 2]])
def test_as_generator_rejects_other_input(bad):
    with pytest.raises(ValueError, match="rng"):
        as_generator(bad)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_check_real_never_lets_a_bad_value_through(x):
    try:
        y = check_real("theta", x, low=0.0, high=0.25, low_open=True)
    except ValueError as err:
        assert "theta" in str(err)
        # refused: outside (0, 0.25], or subnormal (below the smallest normal double)
        assert not (math.isfinite(x) and TINY <= x <= 0.25)
    else:
        assert 0.0 < y <= 0.25


@given(st.one_of(st.integers(-10, 10), st.floats(-10, 10), st.booleans()))
def test_check_int(x):
    try:
        k = check_int("m", x, low=1)
    except ValueError as err:
        assert "m must be an integer in [1, inf)" in str(err)
    else:
        assert k >= 1 and k == x and not isinstance(x, bool)


def test_check_int_accepts_integral_floats_like_1e9():
    assert check_int("n", 1e9, low=1) == 10**9


def test_check_array():
    assert check_array("x", [1, 2, 3], ndim=1, low=0).dtype == float
    assert check_array("x", [1.0, 2.0], integer=True).dtype == np.int64
    for bad, pattern in [
        ([1, np.nan], "finite"),
        ([[1, 2]], "1-dimensional"),
        ([1.5], "integers"),
        ([-1], r"\[0, inf\)"),
    ]:
        with pytest.raises(ValueError, match="x"):
            check_array("x", bad, ndim=1, integer=pattern == "integers", low=0)
    with pytest.raises(ValueError, match="shape"):
        check_array("x", np.zeros((2, 3)), shape=(None, 4))
    assert check_choice("design", "fresh", {"fresh", "shared"}) == "fresh"
    with pytest.raises(ValueError, match="design"):
        check_choice("design", "other", {"fresh", "shared"})


def test_check_claim_prints_and_fails_loudly(capsys, monkeypatch):
    monkeypatch.delenv(scale.ENV_VAR, raising=False)
    assert check_claim("S0-L3", passed=True, evidence="x  y", verdict="verified with correction") is None
    assert capsys.readouterr().out == "S0-L3: verified with correction. x y\n"
    with pytest.raises(ClaimFailed, match="S0-L3"):
        check_claim("S0-L3", passed=False, evidence="off by 2")
    check_claim("F-X", passed=np.bool_(True), evidence="")
    assert capsys.readouterr().out.startswith("F-X: verified.")
    for kwargs in ({"passed": 1}, {"passed": np.array([True])}, {"passed": True, "verdict": "plausible"}):
        with pytest.raises(ValueError):
            check_claim("F-X", evidence="", **kwargs)
    with pytest.raises(ValueError, match="claim_id"):
        check_claim("lemma 3", passed=True, evidence="")


def test_check_claim_at_the_papers_scale_reports_and_goes_on(capsys, monkeypatch, tmp_path):
    import json

    from fedfreq.claims import FULL_SCALE_FAILURE, LOG_VAR

    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv(scale.ENV_VAR, "full")
    monkeypatch.setenv(LOG_VAR, str(log))
    check_claim("S0-L3", passed=False, evidence="off by 2")  # no exception at this scale
    check_claim("S0-L4", passed=False, evidence="as expected", otherwise="refuted")
    check_claim("S0-L5", passed=True, evidence="fine")
    assert capsys.readouterr().out.splitlines() == [
        f"S0-L3: {FULL_SCALE_FAILURE}. off by 2",
        "S0-L4: refuted. as expected",
        "S0-L5: verified. fine",
    ]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["id"], r["verdict"], r["passed"], r["scale"]) for r in records] == [
        ("S0-L3", FULL_SCALE_FAILURE, False, "full"),
        ("S0-L4", "refuted", False, "full"),
        ("S0-L5", "verified", True, "full"),
    ]
    monkeypatch.delenv(scale.ENV_VAR)
    with pytest.raises(ClaimFailed):  # the default scale still stops at once
        check_claim("S0-L3", passed=False, evidence="off by 2")
    assert len(log.read_text().splitlines()) == 3


def test_scale_switch(monkeypatch):
    monkeypatch.delenv(scale.ENV_VAR, raising=False)
    assert scale.pick(1, 2) == 1 and scale.progress([1, 2]) == [1, 2]
    monkeypatch.setenv(scale.ENV_VAR, "full")
    assert scale.pick(1, 2) == 2
    monkeypatch.setenv(scale.ENV_VAR, "huge")
    with pytest.raises(ValueError, match="FEDFREQ_SCALE"):
        scale.current_scale()


def test_top_level_namespace_is_explicit_and_small():
    import ast
    import importlib
    from pathlib import Path

    for name in fedfreq.__all__:
        assert hasattr(fedfreq, name), name
    # the stable entry points are the modules' own objects
    assert fedfreq.cpbm_rdp is fedfreq.accounting.cpbm_rdp
    assert fedfreq.sketch_estimate is fedfreq.sketch.sketch_estimate
    assert fedfreq.clipped_poisson_mean is fedfreq.contribution.clipped_poisson_mean
    # no star imports anywhere in the package
    for path in Path(fedfreq.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert all(alias.name != "*" for alias in node.names), path
    # every module's __all__ names exist, and a subpackage exports exactly its submodules' names
    for mod_name in fedfreq.MODULES:
        mod = importlib.import_module(f"fedfreq.{mod_name}")
        for name in mod.__all__:
            assert hasattr(mod, name), (mod_name, name)
        if hasattr(mod, "__path__"):
            files = [p for p in Path(mod.__path__[0]).glob("*.py") if p.stem != "__init__"]
            subs = [importlib.import_module(f"{mod.__name__}.{p.stem}") for p in files]
            union = [n for s in subs for n in getattr(s, "__all__", [])]
            assert sorted(union) == sorted(mod.__all__), mod_name
            assert len(set(union)) == len(union), mod_name
