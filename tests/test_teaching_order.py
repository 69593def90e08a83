"""Each chapter is written in teaching order (style guide, "Shape").

A chapter opens with a worked example a reader can follow by hand (a ``prf:example``)
before its first formal result; no section opens on a theorem without a sentence that
says why it is there; and every result a chapter cites by ``{prf:ref}`` is stated before
the citation, in that chapter or an earlier one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

NB = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTERS = [p.md for p in layout.pages() if p.kind != "reproduction"]
RESULT = re.compile(r"^:{3,}\{prf:(theorem|lemma|proposition|corollary)\}", re.M)
EXAMPLE = re.compile(r"^:{3,}\{prf:example\}", re.M)
LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
REF = re.compile(r"\{prf:ref\}`(?:[^`<]*<)?([^`>]+)>?`")
HEADING = re.compile(r"^(#{2,3}) (.+)$", re.M)
DIRECTIVE = re.compile(r"^:{3,}\{prf:(\w+)\}[^\n]*\n((?::\w+:[^\n]*\n)*)", re.M)


def _source(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    # only the prose and the directives: code cells and the exercises are left out
    text = re.sub(r"^```\{code-cell\}.*?^```\s*$", "", text, flags=re.M | re.S)
    return text


def _labels(text: str) -> dict[str, tuple[int, str]]:
    """Label -> (offset, kind) of every prf directive of a chapter."""
    out = {}
    for m in DIRECTIVE.finditer(text):
        lab = LABEL.search(m.group(2))
        if lab:
            out[lab.group(1)] = (m.start(), m.group(1))
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_worked_example_comes_before_the_first_result(path):
    text = _source(path)
    first_result = RESULT.search(text)
    if first_result is None:
        pytest.skip("no formal result in this chapter")
    example = EXAMPLE.search(text)
    assert example is not None, f"{path.stem}: no prf:example (a worked example) in the chapter"
    assert example.start() < first_result.start(), (
        f"{path.stem}: the first worked example comes after the first formal result"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_section_opens_on_a_formal_result(path):
    text = _source(path)
    bad = []
    for m in HEADING.finditer(text):
        rest = text[m.end() :].lstrip("\n")
        rest = re.sub(r"^\([\w-]+\)=\s*\n", "", rest)  # a label line after the heading
        if RESULT.match(rest) or rest.startswith(":::{prf:definition}"):
            bad.append(m.group(2))
    assert not bad, f"{path.stem}: sections that open on a statement without a word of why: {bad}"


def test_every_result_is_stated_before_it_is_cited():
    seen: set[str] = set()
    late = []
    for path in CHAPTERS:
        text = _source(path)
        here = _labels(text)
        for m in REF.finditer(text):
            label = m.group(1).strip()
            if label in seen or label not in here:
                continue  # an earlier chapter's result, or not a prf directive
            offset, kind = here[label]
            if kind in {"theorem", "lemma", "proposition", "corollary", "definition"} and offset > m.start():
                # the citation inside the statement itself (e.g. its own proof) is fine
                late.append(f"{path.stem}: {label} ({kind}) cited before it is stated")
        seen |= set(here)
    assert not late, "\n".join(late)
