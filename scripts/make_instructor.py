"""Build the instructor kit: ``_build/instructor/instructor_kit.pdf``.

Usage::

    python scripts/make_instructor.py              # write the sources, build, print
    python scripts/make_instructor.py --no-print   # write the sources and build the HTML only
    make instructor                                # the same as the first line

The kit is for instructors only and never part of the public site: its sources live in
``book/instructor/`` (not in ``_toc.yml``, and the site builds only the files of its table
of contents) and it is built into ``_build/instructor/``, apart from the site. It holds:

* every exercise of the book with its solution, chapter by chapter, taken from the chapter
  sources; the numbers a solution glues come from the chapter's stored notebook, and the
  code of a programming solution is shown with its stored output. Results of a chapter
  that an exercise refers to are copied in front of the chapter's exercises;
* under each conceptual exercise its rubric (``book/instructor/rubrics.yml``), under each
  programming exercise its checker;
* the chapter's questions of the quiz bank with their keys (``book/instructor/quiz_bank.yml``);
* the map from every learning objective (``book/course.yml``) to the exercises, quiz
  questions and assignment questions that assess it (``book/instructor/objectives.yml``);
* the assignments: their questions, points and estimated times.

The sources go to ``_build/instructor/src/`` as a small Jupyter Book (MyST pages, nothing
is executed), built with the ``singlehtml`` builder and printed by headless Chromium with
the machinery of ``scripts/make_pdf.py``. ``tests/test_instructor.py`` checks the data and,
when the PDF is there, that it holds every exercise.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_course_graph as course  # noqa: E402
import make_exercises_index as exindex  # noqa: E402
import make_pdf  # noqa: E402
from stored_outputs_config import stored_outputs_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "instructor"
RUBRICS = DATA / "rubrics.yml"
QUIZ = DATA / "quiz_bank.yml"
OBJECTIVES = DATA / "objectives.yml"
OUT = ROOT / "_build" / "instructor"
SRC = OUT / "src"
SITE = OUT / "_build" / "singlehtml"
PDF = OUT / "instructor_kit.pdf"
REPORT = OUT / "instructor_kit.json"
TITLE = "Instructor kit: Private Federated Frequency Estimation"

_FENCE_OPEN = re.compile(r"^(:{3,})\{(\w[\w:-]*)\}\s*(.*)$")
_ROLE = re.compile(r"\{(prf:ref|ref|eq|numref|doc)\}`([^`]*)`")
_GLUE = re.compile(r"\{glue(?::text)?\}`([^`:]+)(?::([^`]*))?`")
_TARGET = re.compile(r"^\(([\w-]+)\)=\s*$")


def log(message: str) -> None:
    print(f"make_instructor: {message}", flush=True)


# ---------------------------------------------------------------- data


def load_rubrics() -> dict[str, dict]:
    return yaml.safe_load(RUBRICS.read_text(encoding="utf-8"))


def load_quiz() -> dict[str, dict]:
    return yaml.safe_load(QUIZ.read_text(encoding="utf-8"))["questions"]


def load_objectives() -> dict[str, list[dict]]:
    return yaml.safe_load(OBJECTIVES.read_text(encoding="utf-8"))


def assignment_ids() -> dict[str, float]:
    """``<master>/<question>`` of every assignment question, with its points."""
    return {
        f"{name}/{q}": points
        for name in sorted(p.stem for p in course.ASSIGNMENTS_DIR.glob("*.ipynb"))
        for q, points in course.assignment_questions(name).items()
    }


def assignment_titles(name: str) -> dict[str, str]:
    """The bold title of each question of a master ("Question 1 (randomized response)")."""
    nb = json.loads((course.ASSIGNMENTS_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))
    cells = nb["cells"]
    titles = {}
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        m = re.search(r"^name:\s*(\S+)", source, re.MULTILINE)
        if "# BEGIN QUESTION" in source and m and i + 1 < len(cells):
            text = "".join(cells[i + 1]["source"])
            t = re.match(r"\s*\*\*(.+?)\*\*", text, re.DOTALL)
            titles[m.group(1)] = " ".join(t.group(1).split()).rstrip(".") if t else m.group(1)
    return titles


# ---------------------------------------------------------------- chapter sources


@dataclass(frozen=True)
class Target:
    """A label of a chapter: what it names, for a reader of the kit."""

    chapter: str  # notebook name
    kind: str  # "prf:lemma", "eq", "section", "figure", "cell", ...
    title: str
    block: str  # the source to copy into the kit (prf directives and equations), else ""
    within: str = ""  # an equation inside a result: the result's label


def chapter_titles() -> dict[str, str]:
    """Notebook name -> "Chapter 3: Optimal clipping" (or "Appendix A: ...")."""
    _, chapters, _ = course.load()
    return {
        ch.name: (f"Chapter {ch.number}" if ch.number.isdigit() else f"Appendix {ch.number}") + f": {ch.short}"
        for ch in chapters
    }


def _block_end(lines: list[str], i: int, fence: str) -> int:
    j = i + 1
    while j < len(lines) and lines[j].strip() != fence:
        j += 1
    return j


def label_index(sources: dict[str, str]) -> dict[str, Target]:
    """Every label defined in the chapter sources."""
    index: dict[str, Target] = {}
    for name, text in sources.items():
        lines = text.splitlines()
        spans: list[tuple[int, int, str]] = []  # results: (first line, last line, label)
        for i, line in enumerate(lines):
            m = _FENCE_OPEN.match(line)
            if m and m.group(2).startswith("prf:") and i + 1 < len(lines):
                lab = re.match(r":label:\s*(\S+)", lines[i + 1].strip())
                if lab:
                    end = _block_end(lines, i, m.group(1))
                    block = "\n".join(lines[i : end + 1])
                    index[lab.group(1)] = Target(name, m.group(2), m.group(3).strip(), block)
                    spans.append((i, end, lab.group(1)))
            m = _FENCE_OPEN.match(line)
            if m and m.group(2) == "figure":
                end = _block_end(lines, i, m.group(1))
                for body in lines[i + 1 : end]:
                    nm = re.match(r":name:\s*(\S+)", body.strip())
                    if nm:
                        index[nm.group(1)] = Target(name, "figure", "", "")
            eq = re.match(r"^\$\$\s*\(([\w-]+)\)\s*$", line)
            if eq:
                start = i - 1
                while start >= 0 and lines[start].strip() != "$$":
                    start -= 1
                within = next((lab for a, b, lab in spans if a < i < b), "")
                index[eq.group(1)] = Target(name, "eq", "", "\n".join(lines[start : i + 1]), within)
            t = _TARGET.match(line)
            if t:
                nxt = next((x for x in lines[i + 1 :] if x.strip()), "")
                if nxt.startswith("#"):
                    index[t.group(1)] = Target(name, "section", nxt.lstrip("#").strip(), "")
                else:
                    index[t.group(1)] = Target(name, "cell", "", "")
    return index


def exercise_region(text: str) -> str:
    """The chapter's exercises: from its ``## Exercises`` heading to the next ``##``."""
    start = text.find("\n## Exercises")
    if start < 0:
        return ""
    rest = text[start + 1 :]
    nxt = re.search(r"^## ", rest[3:], re.MULTILINE)
    return rest[: nxt.start() + 3] if nxt else rest


# ---------------------------------------------------------------- stored notebook outputs


def glue_values(nb: dict) -> dict[str, str]:
    """The text of every glued value of a stored notebook."""
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            scrap = out.get("metadata", {}).get("scrapbook")
            if scrap:
                data = out.get("data", {})
                text = next((v for k, v in data.items() if k.endswith("text/plain")), "")
                values[scrap["name"]] = "".join(text) if isinstance(text, list) else text
    return values


def format_glue(text: str, spec: str | None) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if spec:
        try:
            return format(float(text), spec)
        except ValueError:
            return text
    return text


def code_outputs(nb: dict) -> list[list[dict]]:
    """The outputs of each code cell of a stored notebook, in order."""
    return [cell.get("outputs", []) for cell in nb["cells"] if cell["cell_type"] == "code"]


def render_outputs(outputs: list[dict], images: Path, stem: str) -> list[str]:
    """Stored outputs as MyST: text in a literal block, images as files."""
    lines: list[str] = []
    text: list[str] = []
    for k, out in enumerate(outputs):
        if out.get("metadata", {}).get("scrapbook"):
            continue
        if out["output_type"] == "stream":
            text.append("".join(out["text"]))
        elif out["output_type"] in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "image/png" in data:
                images.mkdir(parents=True, exist_ok=True)
                path = images / f"{stem}-{k}.png"
                path.write_bytes(base64.b64decode("".join(data["image/png"])))
                lines += ["", f"```{{image}} images/{path.name}", ":width: 80%", "```", ""]
            elif "text/plain" in data:
                text.append("".join(data["text/plain"]))
        elif out["output_type"] == "error":
            text.append("\n".join(out.get("traceback", [])))
    body = "".join(text).rstrip()
    if body:
        lines = ["", "````text", body, "````", "", *lines]
    return lines


# ---------------------------------------------------------------- pages


@dataclass
class KitContext:
    titles: dict[str, str]
    labels: dict[str, Target]
    in_kit: set[str]  # labels that resolve inside the kit
    copied: set[str]  # results already copied into some chapter page
    objectives: dict[str, list[str]]  # of each chapter, from book/course.yml


def _kind_name(kind: str) -> str:
    return kind.removeprefix("prf:").replace("-", " ").capitalize()


def _plain_title(title: str) -> str:
    """A result's title fit for link text: without citations and without the parenthesis
    that holds them."""
    title = re.sub(r"\s*\([^()]*\{cite[^`]*`[^`]*`[^()]*\)", "", title)
    title = re.sub(r"\{[\w:-]+\}`([^`]*)`", r"\1", title)
    return title.strip() or "result"


def resolve_roles(text: str, ctx: KitContext) -> str:
    """Cross-references into the book become references inside the kit where the target is
    copied, and plain text naming the chapter otherwise."""

    def sub(m: re.Match) -> str:
        role, body = m.group(1), m.group(2)
        explicit = re.match(r"(.*?)\s*<([^>]+)>$", body, re.DOTALL)
        text_, label = (explicit.group(1), explicit.group(2)) if explicit else (None, body)
        if role == "doc":
            return text_ or label.rsplit("/", 1)[-1]
        if label in ctx.in_kit:
            if role == "eq":
                return m.group(0)
            target = ctx.labels.get(label)
            if text_ is None and target is not None and target.kind.startswith("prf:"):
                kind = _kind_name(target.kind)
                title = _plain_title(target.title) if target.title else ""
                # "Lemma {prf:ref}`...`" in the source: the kind is already written
                named = m.string[: m.start()].rstrip().lower().endswith(kind.lower())
                if named:
                    text_ = title or kind
                else:
                    text_ = f"{kind} ({title})" if title else kind
            return f"{{ref}}`{text_} <{label}>`" if text_ else f"{{ref}}`{label}`"
        target = ctx.labels.get(label)
        where = ctx.titles.get(target.chapter, "the book") if target else "the book"
        if text_:
            return f"{text_} ({where})"
        if target is None:
            return f"`{label}`"
        if target.kind == "section":
            return f"the section *{target.title}* of {where}"
        if target.kind == "figure":
            return f"the figure `{label}` of {where}"
        if target.kind == "cell":
            return f"the claim cell `{label}` of {where}"
        if target.kind == "eq":
            return f"the equation `{label}` of {where}"
        return f"{_kind_name(target.kind)} `{label}` of {where}"

    return _ROLE.sub(sub, text)


def referenced_results(region: str, ctx: KitContext) -> list[str]:
    """Results of the book that the exercises refer to, copied once into the kit: the
    statements of theorems, lemmas and definitions, and numbered equations."""
    blocks = []
    for m in _ROLE.finditer(region):
        role, body = m.group(1), m.group(2)
        label = re.sub(r"^.*<([^>]+)>$", r"\1", body, flags=re.DOTALL)
        target = ctx.labels.get(label)
        if target is not None and target.within:  # an equation inside a result: copy the result
            label = target.within
            target = ctx.labels.get(label)
        if target is None or label in ctx.copied or not target.block:
            continue
        if role not in ("prf:ref", "eq", "ref"):
            continue
        ctx.copied.add(label)
        ctx.in_kit.add(label)
        inner = {lab for lab, tg in ctx.labels.items() if tg.within == label}
        ctx.copied |= inner
        ctx.in_kit |= inner
        where = ctx.titles.get(target.chapter, "")
        if target.kind == "eq":
            blocks += [f"From {where}:", "", target.block, ""]
        else:
            lines = target.block.splitlines()
            body_lines = [x for x in lines[1:-1] if not re.match(r":(label|class|nonumber):", x.strip())]
            title = (
                f"{_kind_name(target.kind)}: {target.title} ({where})"
                if target.title
                else f"{_kind_name(target.kind)} ({where})"
            )
            fence = ":" * max(4, len(lines[0]) - len(lines[0].lstrip(":")) + 1)
            blocks += [f"({label})=", f"{fence}{{admonition}} {title}", ":class: note", *body_lines, fence, ""]
    return blocks


def rubric_lines(rubric: dict) -> list[str]:
    lines = ["", f"**Rubric ({rubric['points']} points).**", "", "| Criterion | Points |", "|---|---:|"]
    for c in rubric["criteria"]:
        cell = c["text"].replace("|", "\\|")
        lines.append(f"| {cell} | {c['points']} |")
    lines += ["", "*Common mistakes:*", ""]
    lines += [f"- {m}" for m in rubric.get("mistakes", [])]
    return [*lines, ""]


def chapter_page(name: str, ctx: KitContext, rubrics: dict, quiz: dict) -> str:
    """One chapter of the kit: referenced results, exercises with solutions and rubrics, quiz."""
    md = ROOT / "notebooks" / f"{name}.md"
    text = md.read_text(encoding="utf-8")
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    glue = glue_values(nb)
    outputs = code_outputs(nb)
    # the index of the region's first code cell among all the chapter's code cells
    region = exercise_region(text)
    first_cell = text[: text.find(region)].count("```{code-cell")
    exercises = {ex.label: ex for ex in exindex.parse(md)}
    out = [f"# {ctx.titles[name]}", ""]
    objs = ctx.objectives[name]
    out += ["After this chapter a student can:", ""]
    out += [f"{k}. {' '.join(o.split())}" for k, o in enumerate(objs, start=1)]
    out += [""]
    results = referenced_results(region, ctx)
    if results:
        out += ["## Results the exercises refer to", "", *results]
    out += ["## Exercises and solutions", ""]
    lines = region.splitlines()[1:]  # without the heading
    cell = first_cell
    pending: list[str] = []  # a rubric, printed after the solution and its code cells
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE_OPEN.match(line)
        if m and m.group(2) == "exercise":
            out += pending
            pending = []
            fence = m.group(1)
            end = _block_end(lines, i, fence)
            body = lines[i + 1 : end]
            label = next((b.split(":label:")[1].strip() for b in body if b.strip().startswith(":label:")), "")
            body = [b for b in body if not b.strip().startswith(":label:")]
            ex = exercises.get(label)
            kind = "programming" if ex and ex.programming else "conceptual"
            out += [f"({label})=", f"### `{label}` · {m.group(3).strip()}", "", f"*{kind.capitalize()} exercise.*", ""]
            out += body
            out += [""]
            i = end + 1
            continue
        if m and m.group(2) == "solution":
            fence = m.group(1)
            end = _block_end(lines, i, fence)
            label = m.group(3).strip()
            body = [b for b in lines[i + 1 : end] if not re.match(r":(class|label):", b.strip())]
            out += ["", "**Solution.**", "", *body, ""]
            if label in rubrics:
                pending = rubric_lines(rubrics[label])
            i = end + 1
            continue
        if line.startswith("```{solution-start}"):
            label = line.split("}", 1)[1].strip()
            end = _block_end(lines, i, "```")
            ex = exercises.get(label)
            checker = ", ".join(f"`fedfreq.exercises.{c}`" for c in ex.checkers) if ex and ex.checkers else ""
            out += ["", "**Solution** (it runs when the book is built; output as stored).", ""]
            if checker:
                out += [
                    f"*Self-check:* {checker}. Grade the attempt by the checker's verdict, then the code's clarity.",
                    "",
                ]
            i = end + 1
            continue
        if line.startswith("```{solution-end}"):
            i = _block_end(lines, i, "```") + 1
            continue
        if line.startswith("```{code-cell"):
            end = _block_end(lines, i, "```")
            code = lines[i + 1 : end]
            if code and code[0].strip() == "---":
                close = code.index("---", 1)
                code = code[close + 1 :]
            code = [c for c in code if not re.match(r"^:tags:", c)]
            out += ["", "```python", *code, "```"]
            if cell < len(outputs):
                out += render_outputs(outputs[cell], SRC / "images", f"{name}-{cell}")
            cell += 1
            i = end + 1
            continue
        if _TARGET.match(line):  # targets of claim cells stay in the book
            i += 1
            continue
        out.append(line)
        i += 1
    out += pending
    out += quiz_lines(name, quiz)
    page = "\n".join(out) + "\n"
    page = _GLUE.sub(lambda g: format_glue(glue.get(g.group(1), f"[{g.group(1)}]"), g.group(2)), page)
    return resolve_roles(page, ctx)


def quiz_lines(name: str, quiz: dict) -> list[str]:
    questions = [(qid, q) for qid, q in quiz.items() if q["chapter"] == name]
    lines = ["", "## Quiz questions", ""]
    for qid, q in questions:
        lines += [f"({qid})=", f"**`{qid}`** {q['question']}", ""]
        if q["kind"] == "choice":
            lines += [f"- ({k}) {v}" for k, v in q["options"].items()]
            lines += ["", f"*Key:* ({q['key']}). {q['why']}", ""]
        else:
            tol = f" (accept ±{q['tol']:g})" if q.get("tol") else ""
            lines += [f"*Key:* {q['key']:g}{tol}. {q['why']}", ""]
    return lines


def objectives_page(objectives: dict, ctx: KitContext) -> str:
    data = yaml.safe_load(course.DATA.read_text(encoding="utf-8"))
    lines = [
        "# Learning objectives and what assesses them",
        "",
        "For every learning objective of the course guide: the exercises (linked to their "
        "solutions in this kit), the quiz questions and the assignment questions "
        "(`<assignment>/<question>`) that assess it.",
        "",
    ]
    for name, entries in objectives.items():
        lines += [f"## {ctx.titles[name]}", "", "| Objective | Exercises | Quiz | Assignments |", "|---|---|---|---|"]
        for obj, entry in zip(data["chapters"][name]["objectives"], entries, strict=True):
            items = entry["assessed_by"]
            exs = ", ".join(f"{{ref}}`{i} <{i}>`" for i in items if i.startswith("ex-"))
            qs = ", ".join(f"{{ref}}`{i} <{i}>`" for i in items if i.startswith("q-"))
            asg = ", ".join(f"`{i}`" for i in items if "/" in i)
            lines.append(f"| {' '.join(obj.split())} | {exs or '—'} | {qs or '—'} | {asg or '—'} |")
        lines.append("")
    return "\n".join(lines)


def assignments_page(objectives: dict) -> str:
    data = yaml.safe_load(course.DATA.read_text(encoding="utf-8"))
    hours = course.assignment_hours(data)
    assessed: dict[str, list[str]] = {}
    titles = chapter_titles()
    for name, entries in objectives.items():
        for k, entry in enumerate(entries, start=1):
            for item in entry["assessed_by"]:
                if "/" in item:
                    assessed.setdefault(item, []).append(f"{titles[name]}, objective {k}")
    lines = [
        "# Assignments",
        "",
        "One autograded assignment per part of the book (masters in `book/assignments/`, built by "
        "`make assignments`). Times are those of the course guide: what a student who has read the "
        "chapters needs, including half an hour to set up and submit.",
        "",
    ]
    for name, entry in data["assignments"].items():
        qs = course.assignment_questions(name)
        names = assignment_titles(name)
        lines += [
            f"## `{name}`: {sum(qs.values()):g} points, about {hours[name]:g} hours",
            "",
            "| Question | Points | Hours | Objectives |",
            "|---|---:|---:|---|",
        ]
        for q, points in qs.items():
            objs = "; ".join(assessed.get(f"{name}/{q}", [])) or "—"
            h = entry["question_hours"].get(q, 0)
            lines.append(f"| `{q}` {names.get(q, '')} | {points:g} | {float(h):g} | {objs} |")
        lines.append("")
    return "\n".join(lines)


def intro_page(n_exercises: int, n_rubrics: int, n_quiz: int, n_objectives: int, n_chapters: int) -> str:
    return f"""# {TITLE}

This kit is for instructors. It is not part of the book's site and should not be posted
where students can read it: it gathers the solutions of every exercise, the grading
rubrics and the keys of the quiz bank. Build it from a clone of the repository with
`make instructor`; its sources are in `book/instructor/` and the chapters.

**What is inside.**

- The {n_exercises} exercises of the {n_chapters} chapters, each with its solution, in the
  order of the book. The numbers in the solutions are those the chapters compute; the
  programming solutions are shown with the output they print. Where an exercise refers to
  a result of its chapter, the result is copied in front of the chapter's exercises.
- A rubric under each of the {n_rubrics} conceptual exercises: points per criterion and
  the mistakes students make most often. Warm-up exercises are worth 4 points, core ones 6
  and challenge ones 10. Programming exercises are graded by their checker in
  `fedfreq.exercises` (named under the exercise): the checker's verdict first, the
  clarity of the code second.
- At the end of each chapter, questions for quizzes and exams ({n_quiz} in all, at least
  five a chapter), multiple choice or numeric, each with its key and a one-line reason.
  Every numeric key that comes from a computation is recomputed by the book's tests.
- A map from each of the {n_objectives} learning objectives of the course guide to the
  exercises, quiz questions and assignment questions that assess it, and a page on the
  assignments with their points and estimated times.

**Grading a class of sixty.** The self-checked programming exercises need no grading
beyond completion. For conceptual exercises, grade a sample of criteria per week rather
than every exercise, and use the common mistakes as comments. A weekly quiz of five
questions from the bank takes about ten minutes in class; numeric keys come with the
tolerance to accept.
"""


def write_sources() -> dict[str, int]:
    """Write the kit's book into ``_build/instructor/src``; return what it holds."""
    if SRC.exists():
        shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    rubrics, quiz, objectives = load_rubrics(), load_quiz(), load_objectives()
    titles = chapter_titles()
    sources = {md.stem: md.read_text(encoding="utf-8") for md in exindex.chapters()}
    exercises = exindex.all_exercises()
    in_kit = {ex.label for ex in exercises} | set(quiz)
    data = yaml.safe_load(course.DATA.read_text(encoding="utf-8"))
    objectives_text = {name: d["objectives"] for name, d in data["chapters"].items()}
    ctx = KitContext(titles, label_index(sources), in_kit, set(), objectives_text)
    pages = []
    for name in sources:
        page = f"{name}.md"
        (SRC / page).write_text(chapter_page(name, ctx, rubrics, quiz), encoding="utf-8")
        pages.append(name)
    (SRC / "objectives.md").write_text(objectives_page(objectives, ctx), encoding="utf-8")
    (SRC / "assignments.md").write_text(assignments_page(objectives), encoding="utf-8")
    (SRC / "references.md").write_text("# References\n\n```{bibliography}\n```\n", encoding="utf-8")
    counts = {
        "exercises": len(exercises),
        "rubrics": len(rubrics),
        "quiz": len(quiz),
        "objectives": sum(len(v) for v in objectives.values()),
        "chapters": len(pages),
    }
    (SRC / "intro.md").write_text(
        intro_page(counts["exercises"], counts["rubrics"], counts["quiz"], counts["objectives"], counts["chapters"]),
        encoding="utf-8",
    )
    toc = {
        "format": "jb-book",
        "root": "intro",
        "parts": [
            {"caption": "Exercises, solutions, rubrics and quizzes", "chapters": [{"file": p} for p in pages]},
            {
                "caption": "Assessment",
                "chapters": [{"file": "objectives"}, {"file": "assignments"}, {"file": "references"}],
            },
        ],
    }
    (SRC / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False), encoding="utf-8")
    config = stored_outputs_config(ROOT / "_config.yml")
    config["title"] = TITLE
    config["exclude_patterns"] = ["_build"]
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {
        k: v for k, v in sphinx["local_extensions"].items() if k in ("print_edition", "dedupe_inline_js")
    }
    sphinx["extra_extensions"] = [e for e in sphinx["extra_extensions"] if e in ("sphinx_proof", "sphinx_exercise")]
    sphinx["config"] = {k: v for k, v in sphinx["config"].items() if not k.startswith(("auto", "napoleon"))}
    config["html"]["extra_footer"] = "Instructor material: not for students."
    config["html"]["use_download_button"] = False
    (SRC / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return counts


def build(strict: bool) -> None:
    jb = Path(sys.executable).parent / "jupyter-book"
    flags = ["-n", "-W", "--keep-going"] if strict else ["-n", "--keep-going"]
    cmd = [str(jb), "build", str(SRC), *flags, "--builder", "singlehtml", "--path-output", str(OUT)]
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        raise SystemExit("make_instructor: the build failed (--no-strict keeps going on warnings)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-print", action="store_true", help="build the HTML only")
    ap.add_argument("--no-strict", action="store_true", help="do not turn build warnings into errors")
    ap.add_argument("--timeout", type=float, default=600, help="seconds to wait for loading and MathJax")
    args = ap.parse_args(argv)
    started = time.monotonic()
    counts = write_sources()
    log(
        f"{counts['exercises']} exercises, {counts['rubrics']} rubrics, {counts['quiz']} quiz questions, "
        f"{counts['objectives']} objectives in {counts['chapters']} chapters"
    )
    build(strict=not args.no_strict)
    if args.no_print:
        return 0
    page = make_pdf.place_page(SITE)
    log(f"single page: {page.relative_to(ROOT)} ({page.stat().st_size / 1e6:.1f} MB)")
    # the footer and the title page name the kit, not the book
    config = {**make_pdf.book_config(), "title": TITLE}
    make_pdf.book_config = lambda: config
    report = make_pdf.print_pdf(SITE, PDF, "A4", args.timeout)
    report["pdf"] = str(PDF)
    report["counts"] = counts
    REPORT.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {PDF.relative_to(ROOT)} ({PDF.stat().st_size / 1e6:.1f} MB) in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
