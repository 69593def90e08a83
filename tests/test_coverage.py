"""The coverage sweep of the papers (book/claims/coverage/<prefix>.yml) is complete and consistent.

Every numbered result and every quantitative sentence of a paper's experiments is an item
that the ledger checks (ids that exist), or that is out of scope with a reason, or that is
marked as a gap with what a new entry should check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from ledger import (  # noqa: E402
    COVERAGE_DIR,
    COVERAGE_STATUSES,
    OUT_OF_SCOPE_REASONS,
    PAPERS,
    coverage_status,
    load_coverage,
    load_ledger,
)

COVERAGE = load_coverage()
IDS = {c["id"] for c in load_ledger()}


def test_every_paper_has_a_coverage_file():
    assert sorted(COVERAGE) == sorted(PAPERS), f"missing files in {COVERAGE_DIR}"


@pytest.mark.parametrize("prefix", PAPERS)
def test_items_have_a_status_and_its_reason(prefix):
    data = COVERAGE[prefix]
    assert data["paper"] == prefix
    assert data["items"], f"{prefix}: no items"
    for item in data["items"]:
        where = item.get("where")
        assert where and item.get("text"), f"{prefix}: an item lacks 'where' or 'text': {item}"
        ids = item.get("ledger") or []
        unknown = [i for i in ids if i not in IDS]
        assert not unknown, f"{prefix} {where}: unknown ledger ids {unknown}"
        assert all(i.split("-")[0] in (prefix, "F") for i in ids), f"{prefix} {where}: ids of another paper {ids}"
        assert ids or item.get("out_of_scope") or item.get("gap") or item.get("checkable"), (
            f"{prefix} {where}: no ids, reason or gap"
        )
        assert not (ids and item.get("out_of_scope")), f"{prefix} {where}: both checked and out of scope"
        assert coverage_status(item) in COVERAGE_STATUSES


@pytest.mark.parametrize("prefix", PAPERS)
def test_every_ledger_entry_of_a_paper_is_in_its_coverage(prefix):
    listed = {i for item in COVERAGE[prefix]["items"] for i in item.get("ledger") or []}
    own = {i for i in IDS if i.split("-")[0] == prefix}
    assert not own - listed, f"{prefix}: ledger entries no coverage item names: {sorted(own - listed)}"


@pytest.mark.parametrize("prefix", PAPERS)
def test_no_statement_is_left_unexamined(prefix):
    """Every item is checked (at least partly) by a ledger entry or is out of scope with a reason."""
    open_items = [item["where"] for item in COVERAGE[prefix]["items"] if coverage_status(item) == "not yet checked"]
    assert not open_items, f"{prefix}: statements with neither a ledger entry nor a reason: {open_items}"


def test_out_of_scope_takes_a_reason_from_the_closed_list():
    """An out-of-scope item names one reason of OUT_OF_SCOPE_REASONS (listed on the ledger
    page); an item that could be checked by substitution, derivation or a small simulation is
    'checkable' (with what the check would compute), never out of scope."""
    for prefix, data in COVERAGE.items():
        for item in data["items"]:
            where = item["where"]
            if item.get("out_of_scope"):
                assert item.get("reason") in OUT_OF_SCOPE_REASONS, f"{prefix} {where}: reason {item.get('reason')!r}"
                assert not item.get("checkable"), f"{prefix} {where}: both checkable and out of scope"
            else:
                assert "reason" not in item, f"{prefix} {where}: a reason without out_of_scope"
            if item.get("checkable"):
                assert not item.get("ledger"), f"{prefix} {where}: checkable items have no ledger ids yet"


def test_the_ledger_page_lists_the_reasons():
    page = (ROOT / "book" / "claims_ledger.md").read_text(encoding="utf-8")
    for reason in OUT_OF_SCOPE_REASONS:
        assert f"*{reason}*" in page, f"the ledger page does not explain the reason {reason!r}"


#: Every numbered theorem, lemma, proposition and corollary the papers state (appendices
#: included), read from the texts in /work/shared/seeds; results the papers cite from
#: elsewhere (e.g. Lemma 3.6 of [20], Theorem 2.4 of Bassily et al.) are not theirs.
NUMBERED = {
    "S0": [
        "Lemma 1",
        "Lemma 2",
        "Lemma 3",
        "Lemma 4",
        "Theorem 1",
        "Proposition 1",
        "Proposition 2",
        "Proposition 3",
        "Proposition 4",
        "Corollary 1",
    ],
    "S1": [
        "Proposition 2.1",
        "Corollary 2.2",
        "Corollary 2.3",
        "Corollary 2.4",
        "Theorem 3.1",
        "Theorem 3.2",
        "Theorem 4.1",
    ],
    "S2": ["Lemma 1", "Theorem 1"],
    "S3": ["Lemma 1", "Corollary 2", "Lemma 3", "Lemma 4", "Lemma 5"],
    "S4": [
        "Lemma 4.1",
        "Lemma 4.2",
        "Theorem 4.3",
        "Corollary 4.4",
        "Corollary 4.5",
        "Lemma 5.1",
        "Theorem 5.2",
        "Corollary 5.3",
        "Lemma A.1",
        "Lemma A.2",
        "Theorem B.1",
        "Lemma B.2",
        "Lemma B.3",
        "Corollary B.4",
        "Corollary B.5",
        "Theorem C.1",
        "Theorem C.2",
        "Theorem C.3",
        "Lemma C.4",
    ],
}
_ABBREV = {
    "Lemma": "(?:Lemma|L\\.)",
    "Theorem": "(?:Theorem|Thm\\.?)",
    "Proposition": "(?:Proposition|Prop\\.?)",
    "Corollary": "(?:Corollary|Cor\\.?)",
}


def _names(text: str, result: str) -> bool:
    kind, number = result.split()
    return re.search(rf"{_ABBREV[kind]}s?\s*{re.escape(number)}(?![\d.]*\d)", text) is not None


def numbered_without_entry() -> dict[str, list[str]]:
    """The numbered results of each paper that no ledger entry's source names."""
    ledger = load_ledger()
    out = {}
    for prefix, results in NUMBERED.items():
        sources = [c["source"] for c in ledger if c["id"].split("-")[0] == prefix]
        out[prefix] = [r for r in results if not any(_names(s, r) for s in sources)]
    return out


@pytest.mark.parametrize("prefix", PAPERS)
def test_every_numbered_result_has_an_entry_or_a_coverage_item(prefix):
    missing = []
    for result in numbered_without_entry()[prefix]:
        items = [i for i in COVERAGE[prefix]["items"] if _names(i["where"], result)]
        if not any(coverage_status(i) != "not yet checked" for i in items):
            missing.append(result)
    assert not missing, f"{prefix}: numbered results with neither a ledger entry nor a coverage item: {missing}"
