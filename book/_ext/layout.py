"""The book's structure, read from ``_toc.yml``: which notebooks are chapters, their numbers.

One place answers "which notebook is Chapter 9?" for the build extensions, the scripts and
the tests, so that file names, the ledger, the course guide and the pages at the papers'
scale cannot disagree about numbers.

* A chapter of a numbered part is ``notebooks/NN_<slug>`` where ``NN`` is its number in the
  book (two digits). Its companion reproduction page, when it has one, is the chapter's only
  section and is named ``notebooks/NN_<slug>_reproduction``.
* An appendix notebook is ``notebooks/<L>_<slug>`` where ``L`` is its letter: the notebooks of
  the appendices part, lettered A, B, ... in the order of the table of contents.

``book/claims/<stem>.yml`` holds the claims of chapter ``<stem>``; their cells may sit on the
chapter's teaching page or on its reproduction page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TOC = ROOT / "_toc.yml"
NB_DIR = ROOT / "notebooks"
REPRODUCTION_SUFFIX = "_reproduction"


@dataclass(frozen=True)
class Page:
    """One executable notebook of the book."""

    stem: str  # file name without suffix, e.g. "09_sample_threshold_reproduction"
    chapter: str  # stem of the chapter it belongs to (names its ledger file)
    number: str  # "9" for Chapter 9, "A" for Appendix A
    kind: str  # "teaching", "reproduction" or "appendix"

    @property
    def md(self) -> Path:
        return NB_DIR / f"{self.stem}.md"

    @property
    def ipynb(self) -> Path:
        return NB_DIR / f"{self.stem}.ipynb"

    @property
    def docname(self) -> str:
        return f"notebooks/{self.stem}"

    @property
    def name(self) -> str:
        """How the prose names the chapter: "Chapter 9" or "Appendix A"."""
        return f"Appendix {self.number}" if self.kind == "appendix" else f"Chapter {self.number}"

    @property
    def short(self) -> str:
        """Short form for tables: "ch. 9" or "app. A"."""
        return f"app. {self.number}" if self.kind == "appendix" else f"ch. {self.number}"


def _stem(entry: dict) -> str | None:
    file = str(entry.get("file", ""))
    return file.split("/", 1)[1] if file.startswith("notebooks/") else None


@cache
def pages(toc: Path = TOC) -> tuple[Page, ...]:
    """Every notebook of the book in the order of the table of contents."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    out: list[Page] = []
    number = 0
    letter = 0
    for part in data.get("parts", []):
        for entry in part.get("chapters", []):
            stem = _stem(entry)
            if part.get("numbered"):
                number += 1
            if stem is None:
                continue
            if part.get("numbered"):
                out.append(Page(stem, stem, str(number), "teaching"))
                for sec in entry.get("sections", []) or []:
                    sub = _stem(sec)
                    if sub is not None:
                        out.append(Page(sub, stem, str(number), "reproduction"))
            else:
                out.append(Page(stem, stem, chr(ord("A") + letter), "appendix"))
                letter += 1
    return tuple(out)


def chapters() -> tuple[Page, ...]:
    """Chapter pages (teaching pages and appendix notebooks): one per ledger file."""
    return tuple(p for p in pages() if p.kind != "reproduction")


def by_stem(stem: str) -> Page:
    for p in pages():
        if p.stem == stem:
            return p
    raise KeyError(f"{stem!r} is not a notebook of _toc.yml")


def chapter_pages(chapter: str) -> tuple[Page, ...]:
    """The notebooks of one chapter: its teaching page, then its reproduction page if any."""
    return tuple(p for p in pages() if p.chapter == chapter)


def expected_stem_prefix(page: Page) -> str:
    """The prefix a notebook's file name must carry: "09" for Chapter 9, "A" for Appendix A."""
    return page.number if page.kind == "appendix" else f"{int(page.number):02d}"


NAME_RULE = re.compile(r"^(?:\d\d|[A-Z])_[a-z0-9_]+$")


def naming_problems() -> list[str]:
    """Every way the notebooks' file names disagree with the table of contents."""
    problems = []
    listed = {p.stem for p in pages()}
    for md in sorted(NB_DIR.glob("*.md")):
        if md.stem not in listed:
            problems.append(f"notebooks/{md.name} is not in _toc.yml")
    for p in pages():
        prefix = expected_stem_prefix(p)
        if not NAME_RULE.match(p.stem) or p.stem.split("_", 1)[0] != prefix:
            problems.append(f"{p.docname} is {p.name} but its name does not start with {prefix}_")
        if p.kind == "reproduction" and p.stem != p.chapter + REPRODUCTION_SUFFIX:
            problems.append(f"{p.docname}: a reproduction page is named {p.chapter}{REPRODUCTION_SUFFIX}")
        if not p.md.exists():
            problems.append(f"{p.docname} is in _toc.yml but notebooks/{p.stem}.md does not exist")
    return problems
