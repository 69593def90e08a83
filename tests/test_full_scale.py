"""The stored results of the last run at the papers' scale (book/full_scale/, written by
`make full` through scripts/full_results.py) cover every chapter and every claim, and a
claim whose verdict differs between the two scales says why in its ledger entry."""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import full_results  # noqa: E402
import layout  # noqa: E402
from ledger import chapter_stored_verdicts, load_full_scale, load_ledger  # noqa: E402

CHAPTERS = [p.stem for p in layout.pages()]
RECORDS = load_full_scale()
LEDGER = load_ledger()
#: What the papers' scale may take per chapter on a 2-core machine: 30 minutes of the
#: kernel's CPU time (recorded since 2026-11-28; older records give the wall time only),
#: which, unlike the wall time, does not grow when other programs share the cores.
MAX_SECONDS, MAX_GB = 1800, 4.0


def test_every_chapter_has_a_stored_full_scale_run():
    assert full_results.check(CHAPTERS) == []
    assert sorted(RECORDS) == CHAPTERS


@pytest.mark.parametrize("stem", CHAPTERS)
def test_each_chapter_completed_within_its_limits(stem):
    rec = RECORDS[stem]
    assert rec["status"] == "ok", f"{stem}: {rec['status']} ({rec.get('detail')})"
    if "cpu_seconds" in rec:
        assert 0 < rec["cpu_seconds"] <= MAX_SECONDS, f"{stem}: {rec['cpu_seconds']} s of CPU time"
    else:
        assert rec["seconds"] <= MAX_SECONDS, f"{stem}: {rec['seconds']} s"
    assert 0 < rec["peak_rss_gb"] <= MAX_GB, f"{stem}: {rec['peak_rss_gb']} GB"
    for key in ("date", "machine", "python"):
        assert rec.get(key), f"{stem}: no {key}"


@pytest.mark.parametrize("chapter", [p.stem for p in layout.chapters()])
def test_every_claim_has_a_verdict_at_both_scales(chapter):
    """Each claim of a chapter has one verdict at the papers' scale, from whichever of the
    chapter's notebooks (teaching or reproduction page) checks it, and one stored verdict."""
    want = {c["id"] for c in LEDGER if c["chapter"] == f"notebooks/{chapter}"}
    full = [c["id"] for page in layout.chapter_pages(chapter) for c in RECORDS[page.stem]["claims"]]
    assert len(full) == len(set(full)), f"{chapter}: a claim checked twice at full scale"
    assert set(full) == want, f"{chapter}: missing {sorted(want - set(full))}, extra {sorted(set(full) - want)}"
    stored = set(chapter_stored_verdicts(chapter))
    assert want <= stored, f"{chapter}: the stored outputs lack {sorted(want - stored)}"


def test_a_verdict_that_differs_between_scales_is_explained():
    full = {c["id"]: c for rec in RECORDS.values() for c in rec["claims"]}
    unexplained = [
        f"{c['id']}: {c['verdict']} here, {full[c['id']]['verdict']} at the papers' scale"
        for c in LEDGER
        if c["id"] in full and full[c["id"]]["verdict"] != c["verdict"] and not c.get("full_scale_note")
    ]
    assert not unexplained, "ledger entries need a full_scale_note:\n" + "\n".join(unexplained)


@pytest.mark.parametrize("stem", CHAPTERS)
def test_stored_results_sit_under_a_section_of_the_chapter(stem):
    """The page of results at the papers' scale groups them by the chapter's sections: a
    section renamed since the run must be renamed in the stored record too."""
    source = (ROOT / "notebooks" / f"{stem}.md").read_text(encoding="utf-8")
    headings = {h.strip() for h in re.findall(r"^#+ (.+)$", source, re.M)}
    rec = RECORDS[stem]
    stale = {item["section"] for item in rec["figures"] + rec["tables"] if item["section"] not in headings}
    assert not stale, f"{stem}: stored results under sections the chapter no longer has: {sorted(stale)}"


def test_every_stored_figure_has_a_caption_and_alt_text():
    for stem, rec in RECORDS.items():
        for fig in rec["figures"]:
            assert (full_results.DATA_DIR / fig["file"]).stat().st_size > 1000, fig["file"]
            assert fig["section"], f"{stem}: a figure outside any section"
            assert fig["caption"] and len(fig["alt"]) >= 20, f"{stem}: {fig['file']} lacks a caption or alt text"


def test_the_json_is_what_the_script_writes():
    for stem, rec in RECORDS.items():
        path = full_results.DATA_DIR / f"{stem}.json"
        assert path.read_text() == json.dumps(rec, indent=1, ensure_ascii=False) + "\n"
