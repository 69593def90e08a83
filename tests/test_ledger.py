"""The claims ledger (book/claims/<chapter>.yml) and the claim cells agree one to one."""

import json
import re
import sys
from collections import Counter
from pathlib import Path

import jupytext
import pytest

from fedfreq.claims import VERDICTS, claim_slug

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from ledger import ERRATUM_KINDS, SOURCES, ledger_files, load_ledger, row_anchor  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

LEDGER = load_ledger()

# What a ledger entry must say besides its verdict, by verdict.
REASON_FIELDS = {
    "verified with correction": ("erratum",),
    "refuted": ("erratum",),
    "reproduced under another reading": ("reading",),
    "not reproduced at the book's scale": ("scale_note",),
    "not reproduced on stand-in data": ("stand_in",),
    "not checkable": ("reason",),
}
CLAIM_CALL = re.compile(r"check_claim\(\s*[\"']([^\"']+)[\"']")
CHAPTERS = [p.md for p in layout.pages()]  # every notebook (teaching and reproduction pages)
CHAPTER_MDS = [p.md for p in layout.chapters()]  # one per ledger file


def claim_calls():
    """(claim id, chapter) for every check_claim call in a chapter's code cells."""
    found = []
    for md in CHAPTERS:
        for cell in jupytext.read(md).cells:
            if cell.cell_type == "code":
                chapter = layout.by_stem(md.stem).chapter
                found += [(cid, f"notebooks/{chapter}") for cid in CLAIM_CALL.findall(cell.source)]
    return found


def test_claim_cells_are_folded():
    """A claim cell shows its verdict; its code is one click away (tag hide-input)."""
    unfolded = []
    for md in CHAPTERS:
        for cell in jupytext.read(md).cells:
            if cell.cell_type == "code" and CLAIM_CALL.search(cell.source):
                tags = set(cell.metadata.get("tags", []))
                if not tags & {"hide-input", "hide-cell", "remove-input"}:
                    unfolded.append(f"{md.stem}: {CLAIM_CALL.findall(cell.source)}")
    assert not unfolded, "claim cells without hide-input (run scripts/format_chapters.py):\n" + "\n".join(unfolded)


def test_every_ledger_file_names_a_chapter():
    assert ledger_files(), "no ledger files"
    for path in ledger_files():
        assert (ROOT / "notebooks" / f"{path.stem}.md").exists(), f"{path.name}: no chapter {path.stem}"


def test_ledger_entries_are_well_formed():
    ids = [c["id"] for c in LEDGER]
    assert len(ids) == len(set(ids)), [i for i, k in Counter(ids).items() if k > 1]
    labels = []
    for c in LEDGER:
        for key in ("id", "source", "statement", "method", "verdict"):
            assert c.get(key), f"{c.get('id')}: missing {key}"
        assert c["id"].split("-")[0] in SOURCES, f"{c['id']}: unknown source prefix"
        assert c["verdict"] in VERDICTS, f"{c['id']}: verdict {c['verdict']!r} is not one of {VERDICTS}"
        for key in REASON_FIELDS.get(c["verdict"], ()):
            assert c.get(key), f"{c['id']}: a claim whose verdict is {c['verdict']!r} needs the field {key!r}"
        if c["verdict"] == "refuted":
            assert c["erratum"]["kind"] == "error", f"{c['id']}: a refuted claim's erratum is an error"
        assert "verdict_full" not in c, f"{c['id']}: the verdict at the papers' scale comes from book/full_scale/"
        if c.get("erratum"):
            e = c["erratum"]
            for key in ("label", "title", "kind", "paper", "correction", "evidence"):
                assert e.get(key), f"{c['id']}: erratum lacks {key}"
            assert re.fullmatch(r"err-[a-z0-9-]+", e["label"]), e["label"]
            assert e["kind"] in ERRATUM_KINDS, f"{c['id']}: erratum kind {e['kind']!r}"
            labels.append(e["label"])
    assert len(labels) == len(set(labels)), "duplicate erratum labels"


#: Verdicts that depend on how the paper's experiment is set up: the entry must say what
#: the paper states for that setup (anywhere in it, appendices included) and that the check
#: used it before any reading of what it leaves open.
SETUP_VERDICTS = (
    "reproduced under another reading",
    "not reproduced on stand-in data",
    "not reproduced at the book's scale",
)
#: Chapters whose ledger entries do not yet carry ``stated_setup`` and ``kind_reason``.
#: The set may only shrink: a chapter listed here whose entries are complete is an error.
PENDING_SECOND_PASS: set[str] = set()


def _second_pass_gaps(chapter: str) -> list[str]:
    gaps = []
    for c in LEDGER:
        if c["chapter"] != f"notebooks/{chapter}":
            continue
        if c["verdict"] in SETUP_VERDICTS and not c.get("stated_setup"):
            gaps.append(f"{c['id']}: no stated_setup")
        if c.get("erratum") and not c["erratum"].get("kind_reason"):
            gaps.append(f"{c['id']}: erratum without kind_reason")
    return gaps


@pytest.mark.parametrize("md", CHAPTER_MDS, ids=lambda p: p.stem)
def test_verdicts_start_from_the_stated_setup_and_errata_justify_their_kind(md):
    """Every reading, stand-in or scale verdict says what the paper states for the setup and
    that it was used first; every erratum says in one sentence why it is an error, an
    ambiguity or a typo."""
    gaps = _second_pass_gaps(md.stem)
    if md.stem in PENDING_SECOND_PASS:
        assert gaps, f"{md.stem} is complete: remove it from PENDING_SECOND_PASS"
    else:
        assert not gaps, f"{md.stem}:\n" + "\n".join(gaps)
    for c in LEDGER:
        reason = (c.get("erratum") or {}).get("kind_reason")
        if c["chapter"] == f"notebooks/{md.stem}" and reason:
            ends = re.findall(r"[.!?](?=\s+[A-Z]|\s*$)", reason.strip())
            assert len(ends) == 1, f"{c['id']}: kind_reason is one sentence"


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


def _stored_lines(chapter: str) -> list[str]:
    """The printed lines of the stored outputs of a chapter's notebooks (both pages)."""
    lines = []
    for page in layout.chapter_pages(chapter):
        nb = json.loads(page.ipynb.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            for out in cell.get("outputs", []):
                if out.get("output_type") in ("stream", "display_data"):
                    lines += "".join(out.get("text", "") or out.get("data", {}).get("text/plain", "")).splitlines()
    return lines


@pytest.mark.parametrize("md", CHAPTER_MDS, ids=lambda p: p.stem)
def test_stored_outputs_print_the_ledger_verdicts(md):
    text = "\n".join(_stored_lines(md.stem))
    for c in LEDGER:
        if c["chapter"] == f"notebooks/{md.stem}":
            assert f"{c['id']}: {c['verdict']}." in text, f"{c['id']}: stored output lacks the verdict line"


@pytest.mark.parametrize("md", CHAPTER_MDS, ids=lambda p: p.stem)
def test_a_bound_reports_its_tightness(md):
    """An entry marked ``bound: true`` prints how close the worst case found comes to the bound."""
    lines = _stored_lines(md.stem)
    for c in LEDGER:
        if c["chapter"] != f"notebooks/{md.stem}":
            continue
        assert c.get("bound", False) in (True, False), f"{c['id']}: bound must be true or false"
        if c.get("bound"):
            line = next(x for x in lines if x.startswith(f"{c['id']}: {c['verdict']}."))
            assert "tightness" in line, f"{c['id']}: a bound's verdict line must report its tightness"


def test_errata_and_ledger_pages_render_from_the_data():
    assert "```{errata}" in (ROOT / "book" / "errata.md").read_text()
    assert "```{claims-ledger}" in (ROOT / "book" / "claims_ledger.md").read_text()


def test_row_anchors_are_unique_and_html_safe():
    """Each claim's row on the ledger page has its own anchor (#ledger-<slug>)."""
    anchors = [row_anchor(c["id"]) for c in LEDGER]
    assert len(anchors) == len(set(anchors)), [a for a, k in Counter(anchors).items() if k > 1]
    assert all(re.fullmatch(r"ledger-[a-z0-9]+(-[a-z0-9]+)*", a) for a in anchors)
    assert row_anchor("S1-P2.1") == "ledger-s1-p2-1"


def test_each_claim_cell_has_its_label():
    """The ledger links each claim to its cell through the target (claim-<slug>)=."""
    for md in CHAPTERS:
        source = md.read_text()
        for cell in jupytext.read(md).cells:
            if cell.cell_type == "code":
                for cid in CLAIM_CALL.findall(cell.source):
                    assert f"(claim-{claim_slug(cid)})=" in source, f"{cid}: no label before its claim cell"


def test_every_claim_has_a_mutation_that_applies():
    """Each ledger entry lists at least one mutation of its claim cell (run by
    ``make test-mutations``, which requires every mutation to flip the check); here,
    statically, that each names a known kind and applies to its claim cell."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import mutate_claims

    missing = [c["id"] for c in LEDGER if not c.get("mutations")]
    assert not missing, f"claims without a mutation: {missing}"
    ledger = mutate_claims.load_mutations()
    planned, problems = 0, []
    for stem, entries in ledger.items():
        _, plan, found = mutate_claims.plan_chapter(stem, entries)
        planned += len(plan)
        problems += found
    assert not problems, problems
    assert planned >= len(LEDGER)


def test_the_fast_yaml_parser_reads_the_ledger_as_the_reference_parser_does():
    """The ledger and coverage files are parsed with libyaml (the build asks for the ledger
    at every verdict badge); it must give exactly what PyYAML's pure-Python parser gives,
    and the cached ledger must follow an edit of a file."""
    import yaml
    from ledger import COVERAGE_DIR, YAML_LOADER, load_yaml

    assert YAML_LOADER is getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in [*ledger_files(), *sorted(COVERAGE_DIR.glob("*.yml"))]:
        assert load_yaml(path) == yaml.safe_load(path.read_text(encoding="utf-8")), path.name
    first = load_ledger()
    first[0]["id"] = "changed by the caller"
    assert load_ledger()[0]["id"] != "changed by the caller"  # callers get copies


def test_the_cached_ledger_follows_an_edit_of_its_files(tmp_path, monkeypatch):
    import ledger

    src = ledger_files()[0]
    (tmp_path / src.name).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(ledger, "LEDGER_DIR", tmp_path)
    before = ledger.load_ledger()
    text = (tmp_path / src.name).read_text(encoding="utf-8")
    (tmp_path / src.name).write_text(text.replace(f"id: {before[0]['id']}", "id: EDITED-ID", 1), encoding="utf-8")
    after = ledger.load_ledger()
    assert before[0]["id"] != "EDITED-ID" and after[0]["id"] == "EDITED-ID"
    assert len(after) == len(before)


#: A claim about a paper's experiment: its source names a figure or a table, or the paper's
#: experimental setup or details.
EXPERIMENT_SOURCE = re.compile(r"\b(?:Fig\.?|Figures?|Tables?|Tab\.)\s*\d|\bexperiment", re.IGNORECASE)


def test_every_corrected_or_failed_experiment_records_the_papers_stated_setup():
    """Not only readings, stand-ins and scale verdicts: any verdict other than *verified* on
    one of the papers' experiments says what the paper states for that experiment's setup
    and how the check used it."""
    missing = [
        c["id"]
        for c in LEDGER
        if c["verdict"] != "verified" and EXPERIMENT_SOURCE.search(c["source"]) and not c.get("stated_setup")
    ]
    assert not missing, missing
