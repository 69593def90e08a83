"""The course guide: its data covers the book, its page and figure are generated from that
data, and the prerequisite graph is acyclic and points forward."""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_course_graph as cg  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

PARTS, CHAPTERS, BACKGROUND = cg.load()
ORDER = {ch.name: i for i, ch in enumerate(CHAPTERS)}
PAGE = cg.PAGE.read_text()


def test_every_chapter_of_the_toc_is_in_the_data():
    in_toc = [name for name, *_ in cg.toc_chapters()]
    data = yaml.safe_load(cg.DATA.read_text())["chapters"]
    assert in_toc, "no chapter notebooks found in _toc.yml"
    assert sorted(in_toc) == sorted(data)
    assert [ch.name for ch in CHAPTERS] == in_toc


def test_every_chapter_notebook_is_in_the_data():
    sources = [p.stem for p in layout.chapters()]
    assert sources == sorted(ORDER)


def test_load_refuses_data_that_misses_a_chapter(tmp_path):
    data = yaml.safe_load(cg.DATA.read_text())
    del data["chapters"]["15_debiasing"]
    bad = tmp_path / "course.yml"
    bad.write_text(yaml.safe_dump(data, allow_unicode=True))
    with pytest.raises(ValueError, match="15_debiasing"):
        cg.load(bad)


def test_the_page_section_equals_what_the_script_generates():
    assert cg.current_section(PAGE) == cg.render_section(PARTS, CHAPTERS, BACKGROUND), (
        "run: python scripts/make_course_graph.py"
    )
    assert cg.main(["--check"]) == 0


def test_the_check_notices_a_stale_section():
    section = cg.render_section(PARTS, CHAPTERS, BACKGROUND)
    stale = cg.splice(PAGE, section.replace("| 3.5 |", "| 9.5 |", 1))
    assert cg.current_section(stale) != section


def test_the_figure_exists_and_is_included():
    assert cg.SVG.stat().st_size > 10_000
    ET.parse(cg.SVG)  # well-formed SVG
    assert cg.PNG.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    figure = re.search(r"```\{figure\} images/course_graph\.svg\n(:[^\n]*\n)+", PAGE)
    assert figure, "the page must include images/course_graph.svg with a {figure} directive"
    options = dict(re.findall(r"^:(\w+):\s*(.*)$", figure.group(0), re.MULTILINE))
    assert options.get("name") == "fig-course-graph"
    assert len(options.get("alt", "")) > 150


def test_edges_point_from_earlier_to_later_chapters():
    edges = cg.edges(CHAPTERS)
    assert edges
    for src, dst in edges:
        assert ORDER[src] < ORDER[dst], f"{dst} requires the later chapter {src}"
    for ch in CHAPTERS:
        assert ch.name not in ch.see_also and ch.name not in ch.requires


def test_the_graph_has_no_cycle():
    # Kahn's algorithm, independently of the script's own cycle check
    indegree = {ch.name: len(ch.requires) for ch in CHAPTERS}
    ready = [n for n, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for src, dst in cg.edges(CHAPTERS):
            if src == node:
                indegree[dst] -= 1
                if indegree[dst] == 0:
                    ready.append(dst)
    assert seen == len(CHAPTERS)


def test_the_cycle_check_can_fail():
    a, b = CHAPTERS[0], CHAPTERS[1]
    looped = [a.__class__(**{**a.__dict__, "requires": (b.name,)}), b]
    with pytest.raises(ValueError, match="cycle"):
        cg.depths(looped)


def test_every_chapter_but_the_first_has_a_prerequisite():
    assert CHAPTERS[0].requires == ()
    assert all(ch.requires for ch in CHAPTERS[1:])


def test_boxes_do_not_overlap():
    pos, _ = cg.layout(PARTS, CHAPTERS)
    centres = list(pos.values())
    for i, (x1, y1) in enumerate(centres):
        for x2, y2 in centres[i + 1 :]:
            assert abs(x1 - x2) >= cg.BOX_W or abs(y1 - y2) >= cg.BOX_H


def test_syllabus_chapter_numbers_match_the_book():
    number = {ch.name: ch.number for ch in CHAPTERS}
    cited = re.findall(r"\{doc\}`(?:Ch\.|Appendix) (\w+) <\.\./notebooks/(\w+)>`", PAGE)
    assert len(cited) >= 20
    for shown, name in cited:
        assert number[name] == shown, f"{name} is chapter {number[name]}, not {shown}"


def test_exercises_named_in_the_syllabi_exist():
    labels = set()
    for md in [p.md for p in layout.pages()]:
        labels |= set(re.findall(r":label:\s*(ex-\S+)", md.read_text()))
    named = set(re.findall(r"\{ref\}`(ex-[\w-]+)`", PAGE))
    assert named
    assert named <= labels, sorted(named - labels)


@pytest.mark.parametrize("name", sorted(ORDER))
def test_stored_hours_are_near_the_length_estimate(name):
    chapter = CHAPTERS[ORDER[name]]
    reading, exercises = cg.estimate_hours(name)
    for stored, estimate in ((chapter.reading_hours, reading), (chapter.exercise_hours, exercises)):
        assert abs(stored - estimate) <= max(1.0, 0.35 * estimate), (
            f"{name}: {stored} h stored, {estimate} h from its length; "
            "see python scripts/make_course_graph.py --estimate"
        )


def test_short_names_fit_their_boxes():
    for ch in CHAPTERS:
        lines = cg.textwrap.wrap(ch.short, cg.WRAP)
        assert len(lines) <= 2 and all(len(line) <= cg.WRAP for line in lines), ch.short


# ---------------------------------------------------------------- syllabi and their hours

DATA = yaml.safe_load(cg.DATA.read_text())
(LOW, HIGH), SYLLABI = cg.load_syllabi(DATA)
KINDS = cg.exercise_kinds()
ASSIGNMENT_HOURS = cg.assignment_hours(DATA)


def test_the_syllabi_section_equals_what_the_script_generates():
    markers = (cg.SYLLABI_START, cg.SYLLABI_END)
    assert cg.current_section(PAGE, markers) == cg.render_syllabi(CHAPTERS, DATA), (
        "run: python scripts/make_course_graph.py"
    )


def test_the_page_states_the_weekly_hours_of_the_data():
    assert (LOW, HIGH) == (6.0, 8.0)
    assert f"{LOW:g} to {HIGH:g} hours of work outside it each week" in PAGE


@pytest.mark.parametrize("syllabus", SYLLABI, ids=lambda s: s.key)
def test_every_week_lies_within_the_stated_hours(syllabus):
    assert len(syllabus.weeks) == 10
    for week in syllabus.weeks:
        hours = cg.week_hours(week, KINDS, ASSIGNMENT_HOURS)
        assert LOW <= hours["total"] <= HIGH, (
            f"syllabus {syllabus.key}, week {week.number}: {hours['total']:.2f} h "
            f"(see python scripts/make_course_graph.py --weeks)"
        )


def test_the_week_check_can_fail():
    week = SYLLABI[0].weeks[0]
    heavy = cg.Week(
        **{
            **week.__dict__,
            "reading": ((CHAPTERS[0].name, ()),),
            "assignment": "part1_foundations",
            "assignment_share": 1.0,
        }
    )
    assert cg.week_hours(heavy, KINDS, ASSIGNMENT_HOURS)["total"] > HIGH


def test_week_hours_add_up_their_parts():
    week = SYLLABI[0].weeks[1]
    hours = cg.week_hours(week, KINDS, ASSIGNMENT_HOURS)
    exercises = sum(cg.HOURS_PER_PROGRAMMING if KINDS[e] else cg.HOURS_PER_CONCEPTUAL for e in week.exercises)
    assert hours["exercises"] == pytest.approx(exercises)
    assert hours["assignment"] == pytest.approx(week.assignment_share * ASSIGNMENT_HOURS[week.assignment])
    assert hours["total"] == pytest.approx(sum(v for k, v in hours.items() if k != "total"))


def test_section_reading_is_part_of_the_chapter_reading():
    sections = cg.chapter_sections("01_foundations")
    whole = cg.reading_hours("01_foundations", ())
    assert whole == pytest.approx(sum(h for s, h in sections.items() if s != cg.EXERCISES_SECTION))
    assert abs(whole - CHAPTERS[0].reading_hours) <= max(1.0, 0.35 * CHAPTERS[0].reading_hours)
    with pytest.raises(ValueError, match="no section"):
        cg.reading_hours("01_foundations", ("A section that does not exist",))


def test_every_assignment_spread_over_weeks_is_done_in_full():
    for syllabus in SYLLABI:
        shares: dict[str, float] = {}
        for week in syllabus.weeks:
            if week.assignment:
                shares[week.assignment] = shares.get(week.assignment, 0.0) + week.assignment_share
        assert shares
        assert all(s == pytest.approx(1.0) for s in shares.values()), shares


def test_assignment_estimates_cover_exactly_the_questions_of_the_masters():
    masters = sorted(p.stem for p in cg.ASSIGNMENTS_DIR.glob("*.ipynb"))
    assert sorted(DATA["assignments"]) == masters
    for name, entry in DATA["assignments"].items():
        questions = cg.assignment_questions(name)
        assert questions, name
        assert sorted(entry["question_hours"]) == sorted(questions), name
        assert all(0 < float(h) <= 3 for h in entry["question_hours"].values())
