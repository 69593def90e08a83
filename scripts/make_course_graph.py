"""Draw the chapter dependency graph of the course guide and write the guide's chapter tables.

One source, ``book/course.yml``, holds every chapter's prerequisites, background, learning
objectives and time; ``_toc.yml`` gives the order of the chapters, their parts and their
numbers. From them this script writes

* ``book/images/course_graph.svg`` and ``book/images/course_graph.png``: one box per
  chapter, one band per part (top to bottom in the order of the book), columns by depth
  (the longest chain of prerequisites that leads to the chapter), an arrow for each
  prerequisite. Deterministic: no random layout, a fixed SVG hash salt, no dates.
* the chapter-by-chapter section of ``book/course_guide.md``, between the lines
  ``<!-- course:start -->`` and ``<!-- course:end -->``;
* the syllabi of the same page, between ``<!-- syllabi:start -->`` and
  ``<!-- syllabi:end -->``: every week with its hours of work outside class (reading,
  exercises, the week's share of an assignment, project work), and the time of each
  assignment. A week's reading is timed from the length of the sections it names (the
  rule of ``--estimate``), an exercise at 3/4 h (conceptual) or 1.5 h (programming), an
  assignment from the estimates per question in ``book/course.yml``.

Usage::

    python scripts/make_course_graph.py             # write the figure and the section
    python scripts/make_course_graph.py --check     # exit 1 if the section is stale or a figure is missing
    python scripts/make_course_graph.py --estimate  # hours suggested by each chapter's length
    python scripts/make_course_graph.py --weeks     # the hours of every week of the syllabi

``tests/test_course_guide.py`` runs the check, and checks that the graph has no cycle and
that every arrow points from an earlier chapter to a later one.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "course.yml"
TOC = ROOT / "_toc.yml"
PAGE = ROOT / "book" / "course_guide.md"
NB_DIR = ROOT / "notebooks"
#: File suffix of a chapter's companion reproduction page.
REPRODUCTION = "_reproduction"
IMAGES = ROOT / "book" / "images"
SVG = IMAGES / "course_graph.svg"
PNG = IMAGES / "course_graph.png"
START = "<!-- course:start -->"
END = "<!-- course:end -->"
SYLLABI_START = "<!-- syllabi:start -->"
SYLLABI_END = "<!-- syllabi:end -->"
ASSIGNMENTS_DIR = ROOT / "book" / "assignments"

# Okabe-Ito colours (safe for colour-blind readers), as on the roadmap: the part built on
# each paper has that paper's colour there.
PART_COLOURS = ["#999999", "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#555555", "#56B4E9"]
ROMAN = re.compile(r"^Part ([IVXLC]+):\s*(.*)$")

# Time per unit of a chapter, for --estimate: prose read carefully with its mathematics,
# code cells read and run, exercises attempted.
WORDS_PER_HOUR = 1100
CODE_LINES_PER_HOUR = 600
HOURS_PER_CONCEPTUAL = 0.75
HOURS_PER_PROGRAMMING = 1.5


@dataclass(frozen=True)
class Chapter:
    name: str  # notebook name, e.g. "03_optimal_clipping"
    number: str  # as the book shows it: "3", or "A" for an appendix chapter
    part: int  # index of its part in _toc.yml
    short: str
    requires: tuple[str, ...]
    see_also: tuple[str, ...]
    background: tuple[str, ...]
    reading_hours: float
    exercise_hours: float
    objectives: tuple[str, ...]

    @property
    def doc(self) -> str:
        return f"../notebooks/{self.name}"


@dataclass(frozen=True)
class Part:
    caption: str  # as in _toc.yml
    label: str  # "Part II", "Appendix"
    short: str  # from book/course.yml
    colour: str


def toc_chapters(toc_path: Path = TOC) -> list[tuple[str, int, str, bool]]:
    """(notebook name, part index, part caption, numbered) of every chapter notebook in
    ``_toc.yml``, in reading order."""
    toc = yaml.safe_load(toc_path.read_text())
    out = []
    for i, part in enumerate(toc["parts"]):
        for entry in part.get("chapters", []):
            file = entry.get("file", "")
            if file.startswith("notebooks/"):
                out.append((file.removeprefix("notebooks/"), i, part["caption"], bool(part.get("numbered"))))
    return out


def load(data_path: Path = DATA, toc_path: Path = TOC) -> tuple[list[Part], list[Chapter], dict[str, str]]:
    """The parts that hold chapters, the chapters in reading order, and the background
    glossary. Raises ``ValueError`` if the data and the table of contents disagree."""
    data = yaml.safe_load(data_path.read_text())
    entries = toc_chapters(toc_path)
    in_toc = [name for name, *_ in entries]
    if sorted(in_toc) != sorted(data["chapters"]):
        missing = sorted(set(in_toc) - set(data["chapters"]))
        extra = sorted(set(data["chapters"]) - set(in_toc))
        raise ValueError(f"book/course.yml and _toc.yml list different chapters: missing {missing}, extra {extra}")
    part_indices = sorted({i for _, i, _, _ in entries})
    if len(data["parts"]) != len(part_indices):
        raise ValueError(f"book/course.yml names {len(data['parts'])} parts; _toc.yml has {len(part_indices)}")
    toc = yaml.safe_load(toc_path.read_text())
    parts = []
    for k, i in enumerate(part_indices):
        caption = toc["parts"][i]["caption"]
        m = ROMAN.match(caption)
        label = f"Part {m.group(1)}" if m else "Appendix"
        parts.append(Part(caption, label, data["parts"][k], PART_COLOURS[k % len(PART_COLOURS)]))
    chapters = []
    numbered = 0
    appendix = 0
    for name, i, _, is_numbered in entries:
        if is_numbered:
            numbered += 1
            number = str(numbered)
        else:
            number = chr(ord("A") + appendix)
            appendix += 1
        d = data["chapters"][name]
        for key in d["background"]:
            if key not in data["background"]:
                raise ValueError(f"{name}: unknown background {key!r}")
        for other in (*d["requires"], *d["see_also"]):
            if other not in data["chapters"]:
                raise ValueError(f"{name}: unknown chapter {other!r}")
        if not 2 <= len(d["objectives"]) <= 4:
            raise ValueError(f"{name}: give two to four objectives")
        chapters.append(
            Chapter(
                name=name,
                number=number,
                part=part_indices.index(i),
                short=d["short"],
                requires=tuple(d["requires"]),
                see_also=tuple(d["see_also"]),
                background=tuple(d["background"]),
                reading_hours=float(d["reading_hours"]),
                exercise_hours=float(d["exercise_hours"]),
                objectives=tuple(" ".join(o.split()) for o in d["objectives"]),
            )
        )
    return parts, chapters, dict(data["background"])


def edges(chapters: list[Chapter]) -> list[tuple[str, str]]:
    """(prerequisite, chapter) pairs: the arrows of the graph."""
    return [(src, ch.name) for ch in chapters for src in ch.requires]


def depths(chapters: list[Chapter]) -> dict[str, int]:
    """Length of the longest chain of prerequisites ending at each chapter. Raises
    ``ValueError`` on a cycle."""
    by_name = {ch.name: ch for ch in chapters}
    depth: dict[str, int] = {}
    visiting: set[str] = set()

    def visit(name: str) -> int:
        if name in depth:
            return depth[name]
        if name in visiting:
            raise ValueError(f"the prerequisites have a cycle through {name}")
        visiting.add(name)
        depth[name] = max((visit(r) + 1 for r in by_name[name].requires), default=0)
        visiting.discard(name)
        return depth[name]

    for ch in chapters:
        visit(ch.name)
    return depth


# ---------------------------------------------------------------- the page's section


def _hours(h: float) -> str:
    return "—" if h == 0 else f"{h:g}"


def _numbers(names: tuple[str, ...], by_name: dict[str, Chapter]) -> str:
    return ", ".join(by_name[n].number for n in names) if names else "—"


def render_section(parts: list[Part], chapters: list[Chapter], background: dict[str, str]) -> str:
    """The markdown between the markers of ``book/course_guide.md``."""
    by_name = {ch.name: ch for ch in chapters}
    reading = sum(ch.reading_hours for ch in chapters)
    exercises = sum(ch.exercise_hours for ch in chapters)
    lines = [
        START,
        "<!-- generated by scripts/make_course_graph.py from book/course.yml; edit those, not this section -->",
        "",
        "*Read first* lists the chapters a student needs before this one (the arrows of",
        "{numref}`fig-course-graph`); *alongside* lists chapters that shed light on it without",
        "being needed. Chapters are given by their numbers in the book, A is the appendix on",
        "privacy audits. The hours are for a graduate student: reading the chapter with its",
        "derivations and running its cells, then doing its exercises. In all, the book takes",
        f"about {reading:g} hours of reading and {exercises:g} hours of exercises, more than",
        "any one course assigns: the syllabi below pick a few exercises a week.",
        "",
        "The *Background* column uses these short names:",
        "",
    ]
    for key, text in background.items():
        lines.append(f"- **{key}**: {' '.join(text.split())}")
    for k, part in enumerate(parts):
        members = [ch for ch in chapters if ch.part == k]
        lines += ["", f"### {part.caption}", ""]
        lines.append("| Chapter | Read first | Alongside | Background | Reading (h) | Exercises (h) |")
        lines.append("|---|---|---|---|---|---|")
        for ch in members:
            bg = ", ".join(ch.background) if ch.background else "—"
            lines.append(
                f"| {{doc}}`{ch.number} · {ch.short} <{ch.doc}>` | {_numbers(ch.requires, by_name)} "
                f"| {_numbers(ch.see_also, by_name)} | {bg} | {_hours(ch.reading_hours)} "
                f"| {_hours(ch.exercise_hours)} |"
            )
        for ch in members:
            title = "Appendix" if not ch.number.isdigit() else f"Chapter {ch.number}"
            lines += ["", f"**{title}, {{doc}}`{ch.doc}`.** After it a student can:", ""]
            lines += [f"- {o}" for o in ch.objectives]
    lines += ["", END]
    return "\n".join(lines)


def splice(page: str, section: str, markers: tuple[str, str] = (START, END)) -> str:
    """``page`` with the text between its markers replaced by ``section``."""
    first, last = markers
    start, end = page.find(first), page.find(last)
    if start < 0 or end < start:
        raise ValueError(f"{PAGE.name} has no {first} ... {last} section")
    return page[:start] + section + page[end + len(last) :]


def current_section(page: str, markers: tuple[str, str] = (START, END)) -> str:
    first, last = markers
    start, end = page.find(first), page.find(last)
    if start < 0 or end < start:
        raise ValueError(f"{PAGE.name} has no {first} ... {last} section")
    return page[start : end + len(last)]


# ---------------------------------------------------------------- the figure

BOX_W, BOX_H = 1.0, 0.6  # inches
GAP = 0.18  # between the columns of boxes
ROW = 0.74  # between the sub-rows of a band
PAD = 0.1  # inside a band, above and below its boxes
HEADER = 0.22  # a band with a chapter in the first column: its label goes above the boxes
LEFT = 0.12  # the colour stripe of each band
WRAP = 11  # characters per line in a box


def column_left(depth: int) -> float:
    """Left edge of the boxes at a depth. Depth 0 shares the first column with the part
    labels: only chapters without prerequisites sit there."""
    return LEFT + depth * (BOX_W + GAP)


def layout(parts: list[Part], chapters: list[Chapter]) -> tuple[dict[str, tuple[float, float]], list[tuple]]:
    """Centre of every chapter's box (inches; y grows downwards) and the bands
    (part, top, bottom, header). Column = depth; a band has one sub-row per chapter that
    shares a depth with another chapter of the same part."""
    depth = depths(chapters)
    pos: dict[str, tuple[float, float]] = {}
    bands = []
    y = 0.0
    for k, part in enumerate(parts):
        members = [ch for ch in chapters if ch.part == k]
        by_depth: dict[int, list[Chapter]] = {}
        for ch in members:
            by_depth.setdefault(depth[ch.name], []).append(ch)
        rows = max(len(v) for v in by_depth.values())
        header = 0 in by_depth
        top = y
        centre = top + (HEADER if header else 0.0) + PAD + rows * ROW / 2
        for d, group in by_depth.items():
            for j, ch in enumerate(group):
                pos[ch.name] = (column_left(d) + BOX_W / 2, centre + (j - (len(group) - 1) / 2) * ROW)
        y = top + (HEADER if header else 0.0) + 2 * PAD + rows * ROW
        bands.append((part, top, y, header))
    return pos, bands


def draw(parts: list[Part], chapters: list[Chapter], svg: Path = SVG, png: Path = PNG) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

    pos, bands = layout(parts, chapters)
    depth = depths(chapters)
    by_name = {ch.name: ch for ch in chapters}
    width = column_left(max(depth.values()) + 1) - GAP + 0.08
    height = bands[-1][2]
    plt.rcParams["svg.hashsalt"] = "fedfreq-course-graph"
    plt.rcParams["font.size"] = 10
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")

    for k, (part, top, bottom, header) in enumerate(bands):
        ax.add_patch(Rectangle((0, top), width, bottom - top, fc=part.colour, ec="none", alpha=0.07 if k % 2 else 0.13))
        ax.add_patch(Rectangle((0, top), 0.06, bottom - top, fc=part.colour, ec="none"))
        if header:
            ax.text(LEFT, top + 0.05, f"{part.label}: {part.short}", ha="left", va="top", fontsize=9.5, color="#222222")
        else:
            label = part.label + "\n" + textwrap.fill(part.short, 12)
            kw: dict[str, Any] = {
                "ha": "left",
                "va": "center",
                "fontsize": 9.5,
                "color": "#222222",
                "linespacing": 1.15,
            }
            ax.text(LEFT, (top + bottom) / 2, label, **kw)

    colour = {ch.name: parts[ch.part].colour for ch in chapters}
    for ch in chapters:
        x, y = pos[ch.name]
        x0, y0 = x - BOX_W / 2, y - BOX_H / 2
        style = "round,pad=0.0,rounding_size=0.08"
        ax.add_patch(FancyBboxPatch((x0, y0), BOX_W, BOX_H, boxstyle=style, fc="white", ec="none"))
        ax.add_patch(FancyBboxPatch((x0, y0), BOX_W, BOX_H, boxstyle=style, fc=colour[ch.name], ec="none", alpha=0.2))
        ax.add_patch(FancyBboxPatch((x0, y0), BOX_W, BOX_H, boxstyle=style, fc="none", ec=colour[ch.name], lw=1.5))
        name = textwrap.fill(ch.short, WRAP)
        ax.text(x, y0 + 0.05, ch.number, ha="center", va="top", fontsize=10.5, weight="bold", color="#111111")
        ax.text(
            x,
            y0 + 0.36 if "\n" in name else y0 + 0.4,
            name,
            ha="center",
            va="center",
            fontsize=10.5,
            color="#111111",
            linespacing=1.05,
        )

    arrow: dict[str, Any] = {"arrowstyle": "-|>", "mutation_scale": 10, "color": "#333333", "lw": 1.1}
    # a chapter that many chapters need, all one column to its right, feeds them through a
    # vertical trunk: one line per target instead of a fan of crossing diagonals
    targets: dict[str, list[str]] = {}
    for src, dst in edges(chapters):
        targets.setdefault(src, []).append(dst)
    for src, dsts in targets.items():
        sx, sy = pos[src]
        trunk = len(dsts) >= 3 and all(depth[d] == depth[src] + 1 for d in dsts)
        if trunk:
            tx = sx + BOX_W / 2 + GAP / 2
            low = max(pos[d][1] for d in dsts)
            ax.plot(
                [sx + BOX_W / 2, tx, tx], [sy, sy, low], color=arrow["color"], lw=arrow["lw"], solid_capstyle="butt"
            )
            for d in dsts:
                dx, dy = pos[d]
                ax.add_patch(FancyArrowPatch((tx, dy), (dx - BOX_W / 2, dy), shrinkA=0, shrinkB=1, **arrow))
        else:
            for d in dsts:
                dx, dy = pos[d]
                ax.add_patch(FancyArrowPatch((sx + BOX_W / 2, sy), (dx - BOX_W / 2, dy), shrinkA=1, shrinkB=1, **arrow))
    assert set(by_name) == set(pos)
    svg.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(svg, format="svg", facecolor="white", metadata={"Date": None})
    fig.savefig(png, format="png", dpi=150, facecolor="white", metadata={"Software": None})
    plt.close(fig)


# ---------------------------------------------------------------- time estimates


def estimate_hours(name: str) -> tuple[float, float]:
    """(reading, exercise) hours suggested by a chapter's length: words of prose, lines of
    code, and exercises (programming ones have a gated code solution), each rounded to
    half an hour."""
    text = (NB_DIR / f"{name}.md").read_text()
    prose, code, inside = [], 0, False
    for line in text.splitlines():
        if line.startswith("```{code-cell"):
            inside = True
        elif inside and line.startswith("```"):
            inside = False
        elif inside:
            code += 1
        else:
            prose.append(line)
    words = len(" ".join(prose).split())
    labels = re.findall(r":label:\s*(ex-\S+)", text)
    programming = sum(1 for label in labels if re.search(r"\{solution-start\}\s+" + re.escape(label) + r"\b", text))
    conceptual = len(labels) - programming
    reading = words / WORDS_PER_HOUR + code / CODE_LINES_PER_HOUR
    exercises = conceptual * HOURS_PER_CONCEPTUAL + programming * HOURS_PER_PROGRAMMING
    return max(0.5, math.floor(reading * 2 + 0.5) / 2), math.floor(exercises * 2 + 0.5) / 2


# ---------------------------------------------------------------- syllabi and their hours

#: Title of the pseudo-section that holds a chapter's opening (objectives and motivation,
#: before its first ``##`` heading); it is read with the chapter's first section.
EXERCISES_SECTION = "Exercises"


@dataclass(frozen=True)
class Week:
    number: int
    reading: tuple[tuple[str, tuple[str, ...]], ...]  # (chapter, sections); () = the whole chapter
    exercises: tuple[str, ...]
    assignment: str  # "" or the name of an assignment master
    assignment_share: float
    project_hours: float
    project: str
    in_class: str


@dataclass(frozen=True)
class Syllabus:
    key: str
    title: str
    summary: str
    weeks: tuple[Week, ...]


def chapter_sections(name: str) -> dict[str, float]:
    """Hours of every ``##`` section of a chapter, by the rule of :func:`estimate_hours`
    (words of prose and lines of code); the opening counts with the first section."""
    hours: dict[str, float] = {}
    current = ""
    inside = False
    for line in (NB_DIR / f"{name}.md").read_text().splitlines():
        if line.startswith("```{code-cell"):
            inside = True
            continue
        if inside and line.startswith("```"):
            inside = False
            continue
        if inside:
            hours[current] = hours.get(current, 0.0) + 1 / CODE_LINES_PER_HOUR
            continue
        if line.startswith("## "):
            title = line[3:].strip()
            if not current and "" in hours:
                hours[title] = hours.pop("")
            current = title
            continue
        hours[current] = hours.get(current, 0.0) + len(line.split()) / WORDS_PER_HOUR
    return hours


def reading_hours(name: str, sections: tuple[str, ...]) -> float:
    """Hours to read the named sections of a chapter; no sections: the whole chapter but
    its exercises (whose time is counted with the exercises set)."""
    hours = chapter_sections(name)
    if not sections:
        return sum(h for title, h in hours.items() if title != EXERCISES_SECTION)
    unknown = [s for s in sections if s not in hours]
    if unknown:
        raise ValueError(f"{name} has no section {unknown[0]!r}")
    return sum(hours[s] for s in sections)


def exercise_kinds() -> dict[str, bool]:
    """Every exercise label of the chapters: True for a programming exercise."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import make_exercises_index

    return {ex.label: ex.programming for ex in make_exercises_index.all_exercises()}


def assignment_questions(name: str) -> dict[str, float]:
    """The questions of a master, ``name:`` of each ``# BEGIN QUESTION`` block, with their
    points: otter's ``points``, a number or a list (one entry per test case) that adds up;
    0 where the block gives none."""
    import json

    nb = json.loads((ASSIGNMENTS_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))
    questions: dict[str, float] = {}
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if "# BEGIN QUESTION" in source:
            config = yaml.safe_load(source.split("# BEGIN QUESTION", 1)[1]) or {}
            if "name" in config:
                points = config.get("points", 0) or 0
                questions[str(config["name"])] = float(sum(points) if isinstance(points, list) else points)
    return questions


def assignment_hours(data: dict | None = None) -> dict[str, float]:
    """Total hours of each assignment: its questions plus the time to set up and submit."""
    data = data if data is not None else yaml.safe_load(DATA.read_text())
    return {
        name: float(a["setup_hours"]) + sum(float(h) for h in a["question_hours"].values())
        for name, a in data["assignments"].items()
    }


def load_syllabi(data: dict | None = None) -> tuple[tuple[float, float], list[Syllabus]]:
    """The stated weekly hours outside class (low, high) and the syllabi."""
    data = data if data is not None else yaml.safe_load(DATA.read_text())
    s = data["syllabi"]
    low, high = s["weekly_hours"]
    syllabi = []
    for key, d in s["courses"].items():
        weeks = []
        for k, w in enumerate(d["weeks"], start=1):
            reading = tuple((r["chapter"], tuple(r.get("sections", ()))) for r in w.get("reading", []))
            a = w.get("assignment") or {}
            p = w.get("project") or {}
            weeks.append(
                Week(
                    number=k,
                    reading=reading,
                    exercises=tuple(w.get("exercises", ())),
                    assignment=a.get("name", ""),
                    assignment_share=float(a.get("share", 0.0)),
                    project_hours=float(p.get("hours", 0.0)),
                    project=p.get("what", ""),
                    in_class=w["in_class"],
                )
            )
        syllabi.append(Syllabus(key, d["title"], " ".join(d["summary"].split()), tuple(weeks)))
    return (float(low), float(high)), syllabi


def week_hours(week: Week, kinds: dict[str, bool], assignments: dict[str, float]) -> dict[str, float]:
    """Reading, exercises, assignment and project hours of one week, and their total."""
    reading = sum(reading_hours(name, sections) for name, sections in week.reading)
    exercises = sum(HOURS_PER_PROGRAMMING if kinds[label] else HOURS_PER_CONCEPTUAL for label in week.exercises)
    assignment = week.assignment_share * assignments[week.assignment] if week.assignment else 0.0
    parts = {"reading": reading, "exercises": exercises, "assignment": assignment, "project": week.project_hours}
    return {**parts, "total": sum(parts.values())}


def _part_label(name: str) -> str:
    m = re.match(r"part(\d+)_", name)
    roman = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII"]
    return f"Part {roman[int(m.group(1))]}" if m else name


def _h1(h: float) -> str:
    return f"{h:.1f}"


def render_syllabi(chapters: list[Chapter], data: dict | None = None) -> str:
    """The syllabi section of the course guide, with every week's hours."""
    data = data if data is not None else yaml.safe_load(DATA.read_text())
    (low, high), syllabi = load_syllabi(data)
    kinds = exercise_kinds()
    assignments = assignment_hours(data)
    by_name = {ch.name: ch for ch in chapters}
    lines = [
        SYLLABI_START,
        "<!-- generated by scripts/make_course_graph.py from book/course.yml; edit those, not this section -->",
        "",
        f"Both syllabi assume a graduate course with about three hours in class and {low:g} to {high:g} hours "
        "of work outside it each week, and every week below stays within that range. A week's reading is one "
        "chapter or a set of its sections (named by their headings); its deliverable is the exercises of the "
        "week, which students check themselves, a share of an assignment for a part, which is graded, or "
        "project work. Exercise links go to the exercise in the book; the student edition has the same "
        "exercises without the solutions. Each syllabus leaves out whole parts rather than cutting chapters "
        "short, and a chapter outside the syllabus makes a good project topic.",
        "",
        "The *Hours* column is the work outside class: reading (R), exercises (E), assignment (A) and project "
        f"(P). Reading is timed from the length of the sections read ({WORDS_PER_HOUR} words or "
        f"{CODE_LINES_PER_HOUR} lines of code an hour), an exercise at {HOURS_PER_CONCEPTUAL:g} h if conceptual "
        f"and {HOURS_PER_PROGRAMMING:g} h if programming, and an assignment from the times in the table at the "
        "end of this section; an assignment spread over two weeks counts half in each.",
    ]
    for syl in syllabi:
        lines += ["", f"### {syl.key}: {syl.title}", "", syl.summary, ""]
        lines += ["| Week | Reading | Due | In class | Hours |", "|---|---|---|---|---|"]
        for w in syl.weeks:
            reading = []
            for name, sections in w.reading:
                # a chapter, or its companion reproduction page
                ch = by_name[name.removesuffix(REPRODUCTION)]
                label = f"Ch. {ch.number}" if ch.number.isdigit() else f"Appendix {ch.number}"
                doc = ch.doc
                if name != ch.name:
                    label, doc = f"{label}, reproduction", f"{ch.doc}{REPRODUCTION}"
                item = f"{{doc}}`{label} <{doc}>`"
                if sections:
                    item += ": " + ", ".join(f"*{s}*" for s in sections)
                reading.append(item)
            due = [f"{{ref}}`{label}`" for label in w.exercises]
            if w.assignment:
                half = " (half)" if w.assignment_share < 1 else ""
                due.append(f"Assignment for {_part_label(w.assignment)}{half}")
            if w.project:
                due.append(w.project)
            h = week_hours(w, kinds, assignments)
            split = " + ".join(
                f"{key[0].upper()} {_h1(h[key])}"
                for key in ("reading", "exercises", "assignment", "project")
                if h[key] > 0
            )
            lines.append(
                f"| {w.number} | {'; '.join(reading) or '—'} | {', '.join(due) or '—'} | {w.in_class} "
                f"| **{_h1(h['total'])}** ({split}) |"
            )
    lines += [
        "",
        "**Time of the assignments.** Estimated hours for a student who has read the chapters: about one "
        "hour for a question that asks for one function or number, one and a half for a question with "
        "several parts or an error of a paper to find, and half an hour to set up, run the checks and "
        "submit. *Points* are those of the assignment's questions.",
        "",
        "| Assignment | Questions | Points | Hours |",
        "|---|---|---|---|",
    ]
    for name, a in data["assignments"].items():
        qs = ", ".join(f"{q} {float(h):g} h" for q, h in a["question_hours"].items())
        points = sum(assignment_questions(name).values())
        lines.append(f"| {_part_label(name)} (`{name}`) | {qs} | {points:g} | {assignments[name]:g} |")
    lines += ["", SYLLABI_END]
    return "\n".join(lines)


# ---------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the section is stale or a figure missing")
    parser.add_argument("--estimate", action="store_true", help="print the hours suggested by each chapter's length")
    parser.add_argument("--weeks", action="store_true", help="print the hours of every week of the syllabi")
    args = parser.parse_args(argv)
    parts, chapters, background = load()
    if args.weeks:
        (low, high), courses = load_syllabi()
        kinds, assignments = exercise_kinds(), assignment_hours()
        for syl in courses:
            for w in syl.weeks:
                h = week_hours(w, kinds, assignments)
                flag = "" if low <= h["total"] <= high else "  <-- outside the stated hours"
                parts_txt = " ".join(f"{k[0].upper()}{v:.2f}" for k, v in h.items() if k != "total")
                print(f"{syl.key} week {w.number:2d}: {h['total']:5.2f} h ({parts_txt}){flag}")
        return 0
    if args.estimate:
        print(f"{'chapter':26} {'reading':>8} {'(stored)':>9} {'exercises':>10} {'(stored)':>9}")
        for ch in chapters:
            r, e = estimate_hours(ch.name)
            print(f"{ch.name:26} {r:8g} {ch.reading_hours:9g} {e:10g} {ch.exercise_hours:9g}")
        return 0
    page = PAGE.read_text()
    section = render_section(parts, chapters, background)
    weeks = render_syllabi(chapters)
    if args.check:
        problems = []
        if current_section(page) != section:
            problems.append(f"{PAGE.relative_to(ROOT)} is out of date with book/course.yml")
        if current_section(page, (SYLLABI_START, SYLLABI_END)) != weeks:
            problems.append(f"the syllabi of {PAGE.relative_to(ROOT)} are out of date with book/course.yml")
        problems += [f"{p.relative_to(ROOT)} is missing" for p in (SVG, PNG) if not p.exists()]
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print("run: python scripts/make_course_graph.py", file=sys.stderr)
        return 1 if problems else 0
    new = splice(splice(page, section), weeks, (SYLLABI_START, SYLLABI_END))
    if new != page:
        PAGE.write_text(new)
    draw(parts, chapters)
    print(f"wrote {SVG.relative_to(ROOT)}, {PNG.relative_to(ROOT)} and the sections of {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
