"""One numbering system: file names, links, the ledger, the pages at the papers' scale and
the assignments all give a chapter the number it has in ``_toc.yml``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import layout  # noqa: E402
from ledger import load_full_scale, load_ledger  # noqa: E402

ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8}


def _texts() -> list[tuple[str, str]]:
    """(path, text) of every source that can name a chapter: prose pages, their data, the
    chapters, and the assignments' masters (cell sources only)."""
    out = []
    for pattern in ("book/*.md", "book/**/*.md", "book/*.yml", "book/**/*.yml", "notebooks/*.md", "README.md"):
        for path in sorted(ROOT.glob(pattern)):
            if "_vendor" in path.parts or "_mathjax" in path.parts:
                continue
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for path in sorted((ROOT / "book" / "assignments").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"])
        out.append((str(path.relative_to(ROOT)), text))
    return list(dict(out).items())


TEXTS = _texts()


def test_file_names_carry_the_book_numbers():
    assert layout.naming_problems() == []


def test_the_table_of_contents_numbers_sixteen_chapters_and_lettered_appendices():
    chapters = [p for p in layout.chapters() if p.kind == "teaching"]
    assert [p.number for p in chapters] == [str(i) for i in range(1, len(chapters) + 1)]
    assert [p.number for p in layout.chapters() if p.kind == "appendix"] == ["A"]


DOC_LINK = re.compile(r"\{doc\}`([^`<]*?)\s*<([^>`]*notebooks/([A-Za-z0-9_]+))>`")
NUMBER_IN_TEXT = re.compile(r"^(?:(?:Ch\.|Chapter|chapter|ch\.|Appendix|appendix|app\.)\s*)?([0-9]+|[A-Z])(?=$|\s|\W)")


def test_every_numbered_link_to_a_chapter_shows_its_number():
    wrong = []
    for path, text in TEXTS:
        for m in DOC_LINK.finditer(text):
            label, stem = m.group(1).strip(), m.group(3)
            num = NUMBER_IN_TEXT.match(label)
            if not num:
                continue
            page = layout.by_stem(stem)
            if num.group(1) != page.number:
                wrong.append(f"{path}: {m.group(0)} (it is {page.name})")
            if label.lower().startswith(("ch", "app")) and label.lower().startswith("app") != (page.kind == "appendix"):
                wrong.append(f"{path}: {m.group(0)} names {page.name} as the wrong kind of page")
    assert not wrong, "\n".join(wrong)


PART_RANGE = re.compile(r"Part ([IVX]+) \(chapters? (\d+)(?:[–-](\d+))?\b")


def test_assignments_name_the_chapters_of_their_part():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    numbered = [part for part in toc["parts"] if part.get("numbered")]
    first = 1
    spans = {}
    for i, part in enumerate(numbered, start=1):
        n = len(part["chapters"])
        spans[i] = (first, first + n - 1)
        first += n
    found = 0
    wrong = []
    for path, text in TEXTS:
        for m in PART_RANGE.finditer(text):
            found += 1
            part = ROMAN[m.group(1)]
            lo, hi = int(m.group(2)), int(m.group(3) or m.group(2))
            if (lo, hi) != spans[part]:
                lo_want, hi_want = spans[part]
                wrong.append(f"{path}: '{m.group(0)}' but Part {m.group(1)} is chapters {lo_want}–{hi_want}")
    assert found >= 7, "the assignments' headers no longer name their chapters"
    assert not wrong, "\n".join(wrong)


def test_ledger_files_and_full_scale_records_are_chapters_of_the_book():
    chapters = {p.stem for p in layout.chapters()}
    ledger_chapters = {c["chapter"].split("/", 1)[1] for c in load_ledger()}
    assert ledger_chapters <= chapters, sorted(ledger_chapters - chapters)
    pages = {p.stem for p in layout.pages()}
    records = set(load_full_scale())
    assert records <= pages
    stale = sorted(p.name for p in (ROOT / "book" / "full_scale").glob("*.json") if p.stem not in pages)
    assert not stale, f"records of notebooks that are not in the book: {stale}"


@pytest.mark.parametrize("page", layout.pages(), ids=lambda p: p.stem)
def test_ledger_names_each_chapter_by_its_number(page):
    short = layout.by_stem(page.chapter).short
    assert short == (f"app. {page.number}" if page.kind == "appendix" else f"ch. {page.number}")
