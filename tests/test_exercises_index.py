"""The exercises of every chapter: levels, programming exercises with checkers, the index page.

The chapters are parsed by ``scripts/make_exercises_index.py``, which also writes the
table of the Exercises index; these tests hold the chapters to what the course kit
promises and the page to what the chapters contain.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

import fedfreq.exercises

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_exercises_index as index  # noqa: E402

EXERCISES = index.all_exercises()
CHAPTERS = [f"notebooks/{md.stem}" for md in index.chapters()]
APPENDICES = {"notebooks/A_privacy_audits"}  # shorter exercise sections


def of(chapter: str) -> list[index.Exercise]:
    return [e for e in EXERCISES if e.chapter == chapter]


def test_the_index_page_is_up_to_date():
    assert index.main(["--check"]) == 0, "run: python scripts/make_exercises_index.py"


def test_labels_are_unique_and_every_exercise_has_a_level():
    labels = Counter(e.label for e in EXERCISES)
    assert all(labels), "an exercise has no :label:"
    assert not [lb for lb, k in labels.items() if k > 1], "duplicate exercise labels"
    no_level = [e.label for e in EXERCISES if e.level not in index.LEVELS]
    assert not no_level, f"titles must start with one of {index.LEVELS} and a colon: {no_level}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_has_a_full_exercise_section(chapter):
    exs = of(chapter)
    least = 4 if chapter in APPENDICES else 6
    assert len(exs) >= least, f"{chapter}: {len(exs)} exercises, at least {least} expected"
    levels = Counter(e.level for e in exs)
    assert all(levels[lv] >= 1 for lv in index.LEVELS), f"{chapter}: levels {dict(levels)}"
    with_checker = [e for e in exs if e.checkers]
    assert len(with_checker) >= 2, f"{chapter}: {len(with_checker)} programming exercises with a checker"
    assert any(e.find_error for e in exs), f"{chapter}: no find-the-error exercise"


def test_every_named_checker_exists():
    missing = {c for e in EXERCISES for c in e.checkers if c not in fedfreq.exercises.__all__}
    assert not missing, f"checkers named in exercises but not in fedfreq.exercises: {sorted(missing)}"


def test_the_parser_reads_level_kind_and_checker(tmp_path):
    md = tmp_path / "99_demo.md"
    md.write_text(
        "\n".join(
            [
                ":::{exercise} Core: a decoder (find the error)",
                ":label: ex-demo-decoder",
                "Check it with `fedfreq.exercises.check_rr_debias(f)`.",
                ":::",
                "",
                ":::{exercise} no level here",
                ":label: ex-demo-plain",
                "Why?",
                ":::",
            ]
        ),
        encoding="utf-8",
    )
    first, second = index.parse(md)
    assert (first.level, first.title, first.find_error) == ("Core", "a decoder (find the error)", True)
    assert first.programming and first.checkers == ("check_rr_debias",)
    assert (second.level, second.programming, second.find_error) == ("", False, False)
