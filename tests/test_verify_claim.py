"""``make verify CLAIM=<id>`` re-runs one claim's check and reports it."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import jupytext  # noqa: E402
import verify_claim  # noqa: E402


def test_every_ledger_claim_has_exactly_one_claim_cell():
    import yaml

    for path in sorted((ROOT / "book" / "claims").glob("*.yml")):
        # a chapter's claim cells sit on its teaching page or on its reproduction page
        notebooks = [jupytext.read(page.md) for page in verify_claim.layout.chapter_pages(path.stem)]
        for entry in yaml.safe_load(path.read_text())["claims"]:
            found = 0
            for nb in notebooks:
                try:
                    verify_claim.claim_cell_index(nb, entry["id"])  # raises unless exactly one
                    found += 1
                except LookupError:
                    continue
            assert found == 1, f"{entry['id']}: claim cells on {found} pages of {path.stem}"


def test_verify_one_claim(capsys):
    assert verify_claim.main(["F-SENS"]) == 0
    out = capsys.readouterr().out
    assert "F-SENS: verified." in out and "01_foundations" in out and "time" in out


def test_unknown_claim_id():
    assert verify_claim.main(["S9-NOPE"]) == 2


def test_verify_a_claim_of_a_reproduction_page(capsys):
    """A claim whose cell sits on a chapter's reproduction page runs from that page."""
    assert verify_claim.main(["S2-L1"]) == 0
    out = capsys.readouterr().out
    assert "S2-L1: verified." in out and "09_sample_threshold_reproduction" in out
