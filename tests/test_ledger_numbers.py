"""Numbers in the ledger's prose are the numbers the chapters print.

A ledger entry explains its verdict in words (``method``, ``stated_setup``, ``reading``,
``scale_note``, ``stand_in``, ``reason``, ``full_scale_note``, and its erratum's
``correction``, ``evidence`` and ``kind_reason``). Every number in those texts must be
found, within its rounding, in what the chapter computed: the printed output of the
entry's claim cell (its verdict line and anything else the cell prints) or the glue
records of the chapter's notebooks (teaching and reproduction pages, found through
``layout.chapter_pages``). A number written with k significant digits matches a computed
value that rounds to it at k significant digits (``0.904`` matches ``0.90412``; ``200``
matches only values in [199.5, 200.5), but "about 200" all of [150, 250], since an
approximate integer's trailing zeros are not significant); a percentage also matches the
fraction it stands for; signs are ignored. A scale note and a note on the papers' scale
may also cite the last run at the papers' scale.

Not extracted: the ``statement`` (the paper's claim), text inside double quotes (quoted
from the paper), code and roles in backticks, references to numbered parts of a paper or
of the book ("Lemma 2", "Sec. 3.2", "App. C.4", "Algs. 2-3"), exponents and subscripts
inside formulas and the constants of formulas (a number inside ``$...$`` counts only when
it stands alone as a value, as in ``$n = 10^4$`` or ``$d \\in \\{50, 100\\}$``). What
remains and is definitional rather than computed is in ``ALLOWED`` with its reason.
"""

from __future__ import annotations

import json
import math
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import layout  # noqa: E402
from ledger import load_ledger  # noqa: E402

LEDGER = load_ledger()
TEXT_FIELDS = ("method", "stated_setup", "reading", "scale_note", "stand_in", "reason", "full_scale_note")
ERRATUM_FIELDS = ("correction", "evidence", "kind_reason")
CLAIM_CALL = re.compile(r"check_claim\(\s*[\"']([^\"']+)[\"']")

# -- extraction -----------------------------------------------------------------------------

_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_CODE = re.compile(r"(?:\{[a-z:-]+\})?`[^`]*`")
_PART = (
    r"(?:Lemmas?|Theorems?|Thms?\.?|Propositions?|Props?\.?|Corollar(?:y|ies)|Cors?\.?|Definitions?|Defs?\.?"
    r"|Examples?|examples?|Remarks?|Rems?\.?|Algorithms?|Algs?\.?|Tables?|Tabs?\.?|Figures?|Figs?\.?|Equations?"
    r"|Eqs?\.?|Sections?|Secs?\.?|Chapters?|Ch\.|Appendi(?:x|ces)|App\.|footnotes?|Case|Cases|Step|steps?|row|rows|"
    r"panels?|Part|lines?)"
)
_LABEL = r"\(?[A-Z]?\d+(?:\.\d+)*[a-z]?\)?|[A-Z](?:\.\d+)*(?![A-Za-z])"
_REFERENCE = re.compile(rf"\b{_PART}\s*(?:{_LABEL})(?:\s*(?:,|-|–|and|or|&)\s*(?:{_LABEL}))*(?![\d.]*\d)")
_YEAR = re.compile(r"\b([A-Z][a-z]+) (?:19|20)\d\d\b")  # "Dwork & Roth 2014": a citation's year
_THOUSANDS = re.compile(r"\b\d{1,3}(?: \d{3})+\b")  # "20 000"
_MATH = re.compile(r"\$([^$]+)\$")
_APPROX = re.compile(r"\b(?:about|roughly|around|approximately|nearly)\s+$|[≈~]\s*$")
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][+-]?\d+)?"
# a number written as a power inside math: 10^{-14}, 3\cdot10^{-8}, 2^{14}, 2^6
_POWER = re.compile(rf"(?:({_NUM})\s*(?:\\cdot|\\times)\s*)?(\d+)\^\{{?(-?\d+)\}}?")
_TEXT_POWER = re.compile(rf"(?<![\w.])(?:({_NUM})\s*[·×]\s*)?(\d+)\^(-?\d+)")
_NUMBER = re.compile(rf"(?<![\w.^_])({_NUM})(\s*%)?(?![\w])")


def _power_value(m: re.Match) -> str:
    mant = float(m[1].replace(",", "")) if m[1] else 1.0
    value = mant * float(m[2]) ** int(m[3])
    digits = len(m[1].replace(",", "").replace(".", "").lstrip("0")) if m[1] else None
    return _encode(value, digits)


def _encode(value: float, digits: int | None) -> str:
    """A placeholder token ``⟨value|digits⟩`` (digits None: exact)."""
    return f" ⟨{value!r}|{digits if digits is not None else 'x'}⟩ "


_TOKEN = re.compile(r"⟨([^|⟩]+)\|([^⟩]+)⟩")
_ALONE_BEFORE = re.compile(
    r"(?:^|=|<|>|\\le|\\ge|\\leq|\\geq|\\approx|\\sim|,|\\\{|\[|\\in|\\to|\\pm|~|\\lt|\\gt|:)\s*$"
)
_ALONE_AFTER = re.compile(r"^\s*(?:$|,|\\\}|\]|\)|\\%|%|\\dots|\\ldots|\\le|\\ge|<|>|=|\\pm|\\text\{|\\,\\text|;|:)")


def _math_numbers(expr: str) -> list[str]:
    """The numbers of a formula that stand alone as values (tokens, see _encode)."""
    expr = _POWER.sub(lambda m: _power_value(m), expr)
    out = []
    # exact values written as powers
    for m in _TOKEN.finditer(expr):
        before, after = expr[: m.start()].rstrip().rstrip("⟩ "), expr[m.end() :]
        if _ALONE_BEFORE.search(expr[: m.start()].rstrip()) and _ALONE_AFTER.match(after):
            out.append(m.group(0).strip())
        del before
    plain = _TOKEN.sub(" T ", expr)
    plain = re.sub(r"[_^]\{[^}]*\}|[_^]\\?\w", " ", plain)  # subscripts and exponents
    for m in _NUMBER.finditer(plain):
        if _ALONE_BEFORE.search(plain[: m.start()]) and _ALONE_AFTER.match(plain[m.end() :]):
            out.append(m.group(0).strip())
    return out


def numbers_in(text: str) -> list[str]:
    """The numbers of a ledger text that must be found in the chapter's outputs, as written."""
    text = " ".join(str(text).split())
    text = _QUOTED.sub(" ", text)
    text = _YEAR.sub(r"\1", text)
    text = _THOUSANDS.sub(lambda m: m[0].replace(" ", ""), text)
    text = _CODE.sub(" ", text)
    found: list[str] = []

    def math(m: re.Match) -> str:
        found.extend(_math_numbers(m[1]))
        return " "

    text = _MATH.sub(math, text)
    text = _REFERENCE.sub(" ", text)
    text = _TEXT_POWER.sub(lambda m: _power_value(m), text)
    found += [m.group(0).strip() for m in _TOKEN.finditer(text)]
    text = _TOKEN.sub(" ", text)
    for m in _NUMBER.finditer(text):
        number = m.group(0).strip()
        if _APPROX.search(text[: m.start()]) and re.fullmatch(r"\d+(?:,\d{3})*0", number):
            # "about 1300": the trailing zeros of an approximate integer are not significant
            value = number.replace(",", "")
            number = _encode(float(value), len(value.rstrip("0"))).strip()
        found.append(number)
    return found


def parse(number: str) -> tuple[float, int | None, bool]:
    """(value, significant digits or None if exact, is a percentage)."""
    m = _TOKEN.fullmatch(number)
    if m:
        return float(m[1]), None if m[2] == "x" else int(m[2]), False
    pct = number.endswith("%")
    s = number.rstrip("%").strip().replace(",", "")
    mant = re.split(r"[eE]", s)[0]
    digits = len(mant.replace(".", "").lstrip("0")) or 1
    return float(s), digits, pct


def _rounds_to(value: float, target: float, digits: int | None) -> bool:
    value, target = abs(value), abs(target)
    if digits is None or target == 0:
        return math.isclose(value, target, rel_tol=1e-9, abs_tol=1e-300)
    if value == 0:
        return False
    exp = math.floor(math.log10(target)) - digits + 1
    step = 10.0**exp
    return abs(value - target) <= step / 2 * (1 + 1e-9)


def matches(number: str, values: list[float]) -> bool:
    target, digits, pct = parse(number)
    targets = [target] + ([target / 100] if pct else [])
    return any(_rounds_to(v, t, digits) for t in targets for v in values)


# -- the chapters' outputs ------------------------------------------------------------------

_OUT_NUMBER = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w])")
_OUT_POWER = re.compile(r"(?:(\d+(?:\.\d+)?)\s*(?:[·×*]|\\cdot|\\times)\s*)?(\d+)\s*(?:\^|\*\*)\s*\{?([+-−]?\d+)\}?")


def values_in(text: str) -> list[float]:
    text = text.replace("−", "-").replace("..", " .. ")
    vals = [float(m[1].replace(",", "")) for m in _OUT_NUMBER.finditer(text)]
    for m in _OUT_POWER.finditer(text):
        mant = float(m[1]) if m[1] else 1.0
        vals.append(mant * float(m[2]) ** int(m[3].replace("−", "-")))
    return vals


def _texts(out: dict) -> str:
    data = out.get("data", {})
    parts = [out.get("text", "")]
    parts += [v for k, v in data.items() if k.endswith("text/plain")]
    return "".join("".join(p) if isinstance(p, list) else str(p) for p in parts)


@cache
def chapter_outputs(chapter: str) -> tuple[dict[str, list[float]], list[float], dict[str, list[float]]]:
    """Per claim id the numbers its claim cell printed, the numbers of the glue records, and
    per claim id the literals of its claim cell's code."""
    cells: dict[str, list[float]] = {}
    glue: list[float] = []
    code: dict[str, list[float]] = {}
    for page in layout.chapter_pages(chapter):
        if not page.ipynb.is_file():
            continue
        nb = json.loads(page.ipynb.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            ids = CLAIM_CALL.findall("".join(cell["source"]))
            for cid in ids:
                code.setdefault(cid, []).extend(literals_in("".join(cell["source"])))
            for out in cell.get("outputs", []):
                if out.get("metadata", {}).get("scrapbook"):
                    glue += values_in(_texts(out))
                elif ids:
                    for cid in ids:
                        cells.setdefault(cid, []).extend(values_in(_texts(out)))
    return cells, glue, code


_LITERAL = re.compile(r"(?<![\w.])(\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])")


def literals_in(source: str) -> list[float]:
    """The numeric literals of a cell's code, and the powers written in it (``2**16``, ``10**-5``)."""
    vals = [float(m[1].replace("_", "")) for m in _LITERAL.finditer(source)]
    vals += [float(a) ** int(b) for a, b in re.findall(r"(\d+)\s*\*\*\s*\(?\s*(-?\d+)", source)]
    return vals


@cache
def full_scale_values(chapter: str) -> dict[str, list[float]]:
    """Per claim id the numbers of its evidence in the last run at the papers' scale."""
    out: dict[str, list[float]] = {}
    for page in layout.chapter_pages(chapter):
        path = ROOT / "book" / "full_scale" / f"{page.stem}.json"
        if path.is_file():
            for c in json.loads(path.read_text(encoding="utf-8")).get("claims", []):
                out.setdefault(c["id"], []).extend(values_in(c.get("evidence", "")))
    return out


# -- numbers that are definitional, not computed ---------------------------------------------

#: (claim id, number as written): why it needs no computed counterpart.
ALLOWED: dict[tuple[str, str], str] = {
    ("S0-Fig4", "⟨1e-05|x⟩"): "the paper's delta for its experiments (Sec. 5), a constant it states",
    ("S0-E1-comm", "63"): "2^6 - 1, the Haar coefficients of the paper's quantile step with b = 6",
    ("S1-P2.1", "0"): "the stated bound on the flat instance, an empty tail sum by definition",
    ("S1-C2.4", "0"): "log 1 = 0, an identity",
    ("S3-Fig5ab", "350"): "the paper's data recipe, Normal with mean 350 (caption of its Figure 1)",
    ("S3-Fig5c", "350"): "the paper's data recipe, Normal with mean 350 (caption of its Figure 1)",
    ("S4-L4.1", "1.32"): "the constant of the sigma formula of Lemma 4.1 of Liu et al., quoted from the paper",
    ("F-FLOAT-GAP", "⟨9007199254740992.0|x⟩"): "2^53, the number of doubles the sampler's uniform can take",
}
#: Numbers of the ledger's prose that the claim's printed evidence does not show yet: each
#: is to be printed by its claim cell (or glued) or removed from the text. The list may only
#: shrink: an entry whose number is found is an error, like a number missing from the list.
UNRECONCILED: set[tuple[str, str, str]] = set()


def ledger_numbers() -> list[tuple[str, str, str, str]]:
    """(chapter stem, claim id, field, number) for every number of the ledger's prose."""
    rows = []
    for c in LEDGER:
        stem = c["chapter"].split("/")[-1]
        texts = [(f, c.get(f)) for f in TEXT_FIELDS]
        texts += [(f"erratum.{f}", (c.get("erratum") or {}).get(f)) for f in ERRATUM_FIELDS]
        for field, text in texts:
            if text:
                rows += [(stem, c["id"], field, n) for n in numbers_in(text)]
    return rows


def drifted(stem: str, raw: bool = False) -> list:
    """The numbers of a chapter's ledger entries that its outputs do not show, as text lines
    (those of UNRECONCILED left out), or with ``raw`` as (claim id, field, number), all of them."""
    cells, glue, code = chapter_outputs(stem)
    full = full_scale_values(stem)
    bad: list[Any] = []
    for s, cid, field, number in ledger_numbers():
        if s != stem or (cid, number) in ALLOWED:
            continue
        printed = cells.get(cid, []) + glue
        if field in ("full_scale_note", "scale_note"):  # a scale note may cite both scales
            printed += full.get(cid, [])
        if matches(number, printed):
            continue
        value, _, pct = parse(number)
        if any(math.isclose(v, value, rel_tol=1e-12) for v in code.get(cid, [])) and not pct:
            continue  # a parameter the claim cell sets, written exactly as in its code
        if raw:
            bad.append((cid, field, number))
        elif (cid, field, number) not in UNRECONCILED:
            bad.append(f"{cid} {field}: {number}")
    return bad


def test_the_unreconciled_numbers_are_still_unreconciled():
    """An entry of UNRECONCILED whose number the evidence now shows must leave the list."""
    missing = set()
    for stem in {p.chapter for p in layout.pages()}:
        missing |= {tuple(x) for x in drifted(stem, raw=True)}
    found = sorted(UNRECONCILED - missing)
    assert not found, f"these numbers are now found in the evidence; remove them from UNRECONCILED: {found}"


CHAPTERS = [p.stem for p in layout.chapters()]


@pytest.mark.parametrize(
    "stem",
    CHAPTERS,
)
def test_ledger_numbers_are_the_chapters_numbers(stem):
    bad = drifted(stem)
    assert not bad, f"{stem}: numbers of the ledger's prose not found in the claim's output or glue:\n" + "\n".join(bad)


def test_the_allowlist_is_used_and_small():
    """Every allowed number occurs in the ledger, and the list stays short."""
    present = {(cid, n) for _, cid, _, n in ledger_numbers()}
    assert not set(ALLOWED) - present, f"unused allowlist entries: {sorted(set(ALLOWED) - present)}"
    assert len(ALLOWED) <= 12


def test_the_extractor():
    """What counts as a number of the prose, and what rounding matches it."""
    assert numbers_in("at $n = 10^4$ users and $d \\in \\{50, 100\\}$") == ["⟨10000.0|x⟩", "50", "100"]
    assert numbers_in('Lemma 2 and Algs. 2-3 give "2.75" (Dwork & Roth 2014)') == []
    assert numbers_in("the residual $4\\|x\\|_2$ and $(1 - 2^{-b})$") == []
    # an approximate integer: its trailing zeros are not significant
    assert numbers_in("about 1300 users and 1300 items") == ["⟨1300.0|2⟩", "1300"]
    assert matches("⟨1300.0|2⟩", [1307.0]) and not matches("1300", [1307.0])
    assert matches("⟨50.0|1⟩", [53.3]) and not matches("⟨50.0|1⟩", [56.0])
    assert numbers_in("20 000 draws, 12.5 %") == ["20000", "12.5 %"]
    assert matches("0.904", [0.90412]) and not matches("0.904", [0.9])
    assert matches("200", [200.4]) and not matches("200", [203])
    assert matches("12.5 %", [0.125]) and matches("⟨1e-12|x⟩", [1e-12])
