"""The claims ledger and the claim cells must agree one to one."""

import json
import re
from collections import Counter
from pathlib import Path

import jupytext
import pytest
import yaml

from fedfreq.claims import VERDICTS

ROOT = Path(__file__).resolve().parents[1]
LEDGER = yaml.safe_load((ROOT / "book" / "claims.yml").read_text())["claims"]
ERRATA = (ROOT / "book" / "errata.md").read_text()
CLAIM_CALL = re.compile(r"check_claim\(\s*[\"']([^\"']+)[\"']")
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md"))


def claim_calls():
    """(claim id, chapter) for every check_claim call in a chapter's code cells."""
    found = []
    for md in CHAPTERS:
        nb = jupytext.read(md)
        for cell in nb.cells:
            if cell.cell_type == "code":
                found += [(cid, f"notebooks/{md.stem}") for cid in CLAIM_CALL.findall(cell.source)]
    return found


def test_ledger_entries_are_well_formed():
    ids = [c["id"] for c in LEDGER]
    assert len(ids) == len(set(ids)), [i for i, k in Counter(ids).items() if k > 1]
    for c in LEDGER:
        for key in ("id", "source", "statement", "method", "verdict", "chapter"):
            assert c.get(key), f"{c.get('id')}: missing {key}"
        assert c["verdict"] in VERDICTS, c["id"]
        assert (ROOT / (c["chapter"] + ".md")).exists(), f"{c['id']}: no chapter {c['chapter']}"
        if c["verdict"] == "verified with correction":
            assert c.get("erratum"), f"{c['id']}: a corrected claim needs an Errata entry"
        if c.get("erratum"):
            assert f"({c['erratum']})=" in ERRATA, f"{c['id']}: label {c['erratum']} not on the Errata page"


def test_every_erratum_is_backed_by_a_claim():
    labels = re.findall(r"^\((err-[a-z0-9-]+)\)=", ERRATA, flags=re.M)
    assert labels, "the Errata page has no entries"
    used = {c.get("erratum") for c in LEDGER}
    assert set(labels) <= used, f"errata without a ledger claim: {set(labels) - used}"


def test_each_ledger_entry_is_checked_exactly_once_in_its_chapter():
    calls = claim_calls()
    counts = Counter(cid for cid, _ in calls)
    ledger = {c["id"]: c for c in LEDGER}
    unlisted = sorted(set(counts) - set(ledger))
    assert not unlisted, f"claim cells not in the ledger: {unlisted}"
    unchecked = sorted(set(ledger) - set(counts))
    assert not unchecked, f"ledger entries without a claim cell: {unchecked}"
    twice = sorted(cid for cid, k in counts.items() if k != 1)
    assert not twice, f"checked more than once: {twice}"
    for cid, chapter in calls:
        assert ledger[cid]["chapter"] == chapter, f"{cid} is checked in {chapter}, ledger says {ledger[cid]['chapter']}"


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_stored_outputs_print_the_ledger_verdicts(md):
    nb = json.loads(md.with_suffix(".ipynb").read_text())
    text = "\n".join(
        "".join(out.get("text", ""))
        for cell in nb["cells"] if cell["cell_type"] == "code"
        for out in cell.get("outputs", []) if out.get("output_type") == "stream"
    )
    for c in LEDGER:
        if c["chapter"] == f"notebooks/{md.stem}":
            assert f"{c['id']}: {c['verdict']}." in text, f"{c['id']}: stored output lacks the verdict line"
