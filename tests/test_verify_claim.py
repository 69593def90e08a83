"""``make verify CLAIM=<id>`` re-runs one claim's check and reports it."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import jupytext  # noqa: E402
import verify_claim  # noqa: E402


def test_every_ledger_claim_has_exactly_one_claim_cell():
    import yaml

    for path in sorted((ROOT / "book" / "claims").glob("*.yml")):
        nb = jupytext.read(ROOT / "notebooks" / f"{path.stem}.md")
        for entry in yaml.safe_load(path.read_text())["claims"]:
            verify_claim.claim_cell_index(nb, entry["id"])  # raises unless exactly one


def test_verify_one_claim(capsys):
    assert verify_claim.main(["F-SENS"]) == 0
    out = capsys.readouterr().out
    assert "F-SENS: verified." in out and "01_foundations" in out and "time" in out


def test_unknown_claim_id():
    assert verify_claim.main(["S9-NOPE"]) == 2
