"""The instructor kit: rubrics for every conceptual exercise whose points add up, a quiz bank
of at least five questions per chapter whose computed keys are recomputed here, a map from
every learning objective to what assesses it, the printed kit (when built) holding every
exercise, and none of it on the public site or in the student edition."""

import math
import os
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy
import yaml
from scipy import stats

from fedfreq import (
    accounting,
    audit,
    bitpush,
    contribution,
    cpbm,
    deploy,
    heavy_hitters,
    protocols,
    quantiles,
    sample_threshold,
    secagg,
    sketch,
    trust_models,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_course_graph as course  # noqa: E402
import make_exercises_index as exindex  # noqa: E402
import make_instructor as kit  # noqa: E402

EXERCISES = {ex.label: ex for ex in exindex.all_exercises()}
CONCEPTUAL = {label for label, ex in EXERCISES.items() if not ex.programming}
RUBRICS = kit.load_rubrics()
QUIZ = kit.load_quiz()
OBJECTIVES = kit.load_objectives()
COURSE = yaml.safe_load(course.DATA.read_text(encoding="utf-8"))
CHAPTERS = list(COURSE["chapters"])
POINTS_BY_LEVEL = {"Warm-up": 4, "Core": 6, "Challenge": 10}

#: What the `verify` expressions of the rubrics and the quiz bank may use.
NAMESPACE = {
    "math": math,
    "np": np,
    "sympy": sympy,
    "stats": stats,
    "accounting": accounting,
    "audit": audit,
    "bitpush": bitpush,
    "contribution": contribution,
    "cpbm": cpbm,
    "deploy": deploy,
    "heavy_hitters": heavy_hitters,
    "protocols": protocols,
    "quantiles": quantiles,
    "sample_threshold": sample_threshold,
    "secagg": secagg,
    "sketch": sketch,
    "trust_models": trust_models,
}


def recompute(expression: str) -> float:
    return float(eval(expression, dict(NAMESPACE)))  # noqa: S307 - the repository's own data


def shown_value_matches(text: str, value: float) -> bool:
    """Does ``value`` round to the number as printed (``0.954``, ``96``, ``21/100``)?"""
    if "/" in text:
        return math.isclose(float(Fraction(text)), value, rel_tol=1e-9, abs_tol=1e-12)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text) - value) <= 0.5 * 10.0**-decimals + 1e-12


def key_matches(key: float, value: float, tol: float) -> bool:
    return abs(key - value) <= tol + 1e-9 * max(1.0, abs(value))


# ---------------------------------------------------------------- rubrics


def test_every_conceptual_exercise_has_a_rubric():
    assert len(CONCEPTUAL) >= 60
    assert sorted(CONCEPTUAL - set(RUBRICS)) == [], "conceptual exercises without a rubric"
    assert sorted(set(RUBRICS) - CONCEPTUAL) == [], "rubrics of unknown or programming exercises"


@pytest.mark.parametrize("label", sorted(RUBRICS))
def test_rubric_points_add_up(label):
    rubric = RUBRICS[label]
    ex = EXERCISES[label]
    assert rubric["chapter"] == ex.chapter.removeprefix("notebooks/")
    assert rubric["points"] == POINTS_BY_LEVEL[ex.level]
    assert len(rubric["criteria"]) >= 2
    assert all(c["points"] > 0 and c["text"].strip() for c in rubric["criteria"])
    assert sum(c["points"] for c in rubric["criteria"]) == rubric["points"]
    assert rubric["mistakes"], "name at least one common mistake"


def test_numbers_in_rubrics_are_recomputed():
    checked = 0
    for label, rubric in RUBRICS.items():
        text = " ".join(c["text"] for c in rubric["criteria"])
        for item in rubric.get("verify", []):
            assert item["text"] in text, (label, item["text"])
            value = recompute(item["expr"])
            assert shown_value_matches(item["text"], value), (label, item["text"], value)
            checked += 1
    assert checked >= 20


def test_the_rubric_number_check_can_fail():
    assert shown_value_matches("0.954", 1 - math.sqrt(100 / 48000))
    assert not shown_value_matches("0.955", 1 - math.sqrt(100 / 48000))
    assert not shown_value_matches("21/100", 0.22)


# ---------------------------------------------------------------- quiz bank


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_at_least_five_quiz_questions_per_chapter(chapter):
    questions = [q for q in QUIZ.values() if q["chapter"] == chapter]
    assert len(questions) >= 5, f"{chapter}: {len(questions)} questions"


@pytest.mark.parametrize("qid", sorted(QUIZ))
def test_every_quiz_question_has_a_key(qid):
    q = QUIZ[qid]
    assert re.fullmatch(r"q-[a-z]+-\d+", qid)
    assert q["chapter"] in CHAPTERS
    assert q["question"].strip() and q["why"].strip()
    if q["kind"] == "choice":
        assert len(q["options"]) >= 3
        assert q["key"] in q["options"]
    else:
        assert q["kind"] == "numeric"
        assert isinstance(q["key"], int | float) and q["tol"] >= 0
        # every numeric key comes from a computation, and the computation is here
        assert "verify" in q, f"{qid}: a numeric key needs a verify expression"


@pytest.mark.parametrize("qid", sorted(q for q, v in QUIZ.items() if "verify" in v or "verify_choice" in v))
def test_computed_quiz_keys_are_recomputed(qid):
    q = QUIZ[qid]
    if "verify" in q:
        value = recompute(q["verify"])
        assert key_matches(q["key"], value, q["tol"]), f"{qid}: key {q['key']}, recomputed {value}"
    if "verify_choice" in q:
        assert bool(eval(q["verify_choice"], dict(NAMESPACE))), qid  # noqa: S307


def test_the_key_check_can_fail():
    q = QUIZ["q-fnd-3"]
    value = recompute(q["verify"])
    assert key_matches(q["key"], value, q["tol"])
    assert not key_matches(q["key"] + 0.05, value, q["tol"])


def test_quiz_ids_are_unique_across_files():
    # YAML keeps the last of two equal keys: count them in the text
    ids = re.findall(r"^  (q-[a-z]+-\d+):", kit.QUIZ.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(ids) == len(set(ids)) == len(QUIZ)


# ---------------------------------------------------------------- objectives map


def test_the_map_covers_every_objective():
    assert list(OBJECTIVES) == CHAPTERS
    for chapter, entries in OBJECTIVES.items():
        objectives = COURSE["chapters"][chapter]["objectives"]
        assert len(entries) == len(objectives), chapter
        for entry, objective in zip(entries, objectives, strict=True):
            assert " ".join(objective.split()).startswith(entry["starts"]), (chapter, entry["starts"])
            assert entry["assessed_by"], f"{chapter}: '{entry['starts']}' is assessed by nothing"


def test_every_id_of_the_map_exists():
    assignments = kit.assignment_ids()
    assert assignments
    known = set(EXERCISES) | set(QUIZ) | set(assignments)
    items = [i for entries in OBJECTIVES.values() for e in entries for i in e["assessed_by"]]
    assert sorted(set(items) - known) == []


def test_every_exercise_and_quiz_question_assesses_an_objective():
    items = {i for entries in OBJECTIVES.values() for e in entries for i in e["assessed_by"]}
    assert sorted(set(EXERCISES) - items) == []
    assert sorted(set(QUIZ) - items) == []


def test_every_assignment_question_assesses_an_objective():
    items = {i for entries in OBJECTIVES.values() for e in entries for i in e["assessed_by"]}
    assert sorted(set(kit.assignment_ids()) - items) == []


def test_an_item_assesses_objectives_of_its_own_chapter():
    for chapter, entries in OBJECTIVES.items():
        for entry in entries:
            for item in entry["assessed_by"]:
                if item in EXERCISES:
                    assert EXERCISES[item].chapter == f"notebooks/{chapter}", item
                elif item in QUIZ:
                    assert QUIZ[item]["chapter"] == chapter, item


# ---------------------------------------------------------------- the kit's sources and PDF


def test_glued_numbers_are_formatted_as_the_book_formats_them():
    assert kit.format_glue("0.51734461", ".3f") == "0.517"
    assert kit.format_glue("'300001'", None) == "300001"
    assert kit.format_glue("19", None) == "19"


def test_the_kit_sources_hold_every_exercise_and_rubric(tmp_path, monkeypatch):
    monkeypatch.setattr(kit, "SRC", tmp_path / "src")
    counts = kit.write_sources()
    assert counts["exercises"] == len(EXERCISES) and counts["rubrics"] == len(RUBRICS)
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((tmp_path / "src").glob("*.md")))
    for label in EXERCISES:
        assert f"({label})=" in text, label
    for qid in QUIZ:
        assert f"({qid})=" in text, qid
    assert text.count("**Rubric (") == len(RUBRICS)
    assert "{glue" not in text, "a glued number was left unresolved"
    assert not re.search(r"\[[a-z]+_ex_[a-z_0-9]+\]", text), "a glued number is missing from the stored notebook"
    toc = yaml.safe_load((tmp_path / "src" / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert files[: len(CHAPTERS)] == CHAPTERS


def test_the_printed_kit_holds_every_exercise():
    if not kit.PDF.is_file():
        pytest.skip("the kit is not built (make instructor)")
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is missing (make poppler)")
    text = subprocess.run(["pdftotext", str(kit.PDF), "-"], capture_output=True, text=True, check=True).stdout
    missing = [label for label in EXERCISES if label not in text]
    assert missing == [], f"exercises missing from the printed kit: {missing[:5]}"
    assert [qid for qid in QUIZ if qid not in text] == []
    assert text.count("Rubric (") == len(RUBRICS)


# ---------------------------------------------------------------- kept out of the public site


def test_the_site_never_builds_the_instructor_material():
    assert "instructor" not in (ROOT / "_toc.yml").read_text(encoding="utf-8")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["only_build_toc_files"] is True


def test_the_student_edition_leaves_the_instructor_material_out():
    source = (ROOT / "scripts" / "make_student.py").read_text(encoding="utf-8")
    ignore = re.search(r"ignore_patterns\(([^)]*)\)", source)
    assert ignore and '"instructor"' in ignore.group(1)


@pytest.mark.parametrize("build", ["_build/html", "_build/student"])
def test_no_instructor_material_in_the_builds(build):
    site = ROOT / build
    if not site.is_dir():
        assert not os.environ.get("FEDFREQ_REQUIRE_BUILDS"), f"{build} is missing"
        pytest.skip(f"{build} is not built")
    assert [p for p in site.rglob("*instructor*")] == []
    markers = [kit.TITLE, "Common mistakes:", "quiz_bank"]
    for marker in markers:
        found = subprocess.run(["grep", "-rlF", "--include=*.html", marker, str(site)], capture_output=True, text=True)
        assert found.stdout == "", f"{marker!r} found in {found.stdout.split()[:3]}"
