"""The coverage sweep of the papers (book/claims/coverage/<prefix>.yml) is complete and consistent.

Every numbered result and every quantitative sentence of a paper's experiments is an item
that the ledger checks (ids that exist), or that is out of scope with a reason, or that is
marked as a gap with what a new entry should check.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from ledger import COVERAGE_DIR, PAPERS, coverage_status, load_coverage, load_ledger  # noqa: E402

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
        assert ids or item.get("out_of_scope") or item.get("gap"), f"{prefix} {where}: no ids, reason or gap"
        assert not (ids and item.get("out_of_scope")), f"{prefix} {where}: both checked and out of scope"
        assert coverage_status(item) in ("checked", "partly checked", "out of scope", "not yet checked")


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
