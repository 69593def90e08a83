"""Write the table of every exercise into the Exercises index (``book/exercises.md``).

Usage::

    python scripts/make_exercises_index.py          # rewrite the table in the page
    python scripts/make_exercises_index.py --check  # exit 1 if the page is out of date

The chapters are the single source. An exercise is a ``:::{exercise} <Level>: <title>``
directive with a ``:label:``; its level is the title's first word (Warm-up, Core or
Challenge), a title ending in "(find the error)" marks an exercise in which the student
tests a paper's claim by computation, and an exercise is a *programming* exercise when
its solution is gated (``solution-start``/``solution-end``, a solution that runs in the
build) or its text names a checker ``fedfreq.exercises.check_<name>``. The table goes
between the markers ``<!-- exercises:start -->`` and ``<!-- exercises:end -->``: first
the counts per chapter and level, then one row per exercise in the order of the book.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "exercises.md"
START, END = "<!-- exercises:start -->", "<!-- exercises:end -->"
LEVELS = ("Warm-up", "Core", "Challenge")
FIND_ERROR = "(find the error)"

_OPEN = re.compile(r"^(:{3,})\{exercise\}\s*(.*)$")
_LABEL = re.compile(r"^:label:\s*(\S+)")
_CHECKER = re.compile(r"fedfreq\.exercises\.(check_\w+)")


@dataclass(frozen=True)
class Exercise:
    chapter: str  # notebooks/<stem>
    label: str
    title: str  # without the level
    level: str  # one of LEVELS, or "" if the title names none
    programming: bool
    checkers: tuple[str, ...]

    @property
    def find_error(self) -> bool:
        return self.title.rstrip().endswith(FIND_ERROR)


def chapters() -> list[Path]:
    """The chapter sources in the order of the table of contents."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part.get("chapters", [])]
    return [ROOT / f"{f}.md" for f in files if f.startswith("notebooks/")]


def parse(md: Path) -> list[Exercise]:
    """Every exercise of one chapter source, in order."""
    lines = md.read_text(encoding="utf-8").splitlines()
    text = "\n".join(lines)
    found = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, head = m.group(1), m.group(2).strip()
        body, i = [], i + 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i])
            i += 1
        label = next((lm.group(1) for b in body if (lm := _LABEL.match(b.strip()))), "")
        level, _, title = head.partition(":")
        if level.strip() not in LEVELS:
            level, title = "", head
        gated = bool(label) and re.search(r"\{solution-start\}\s+" + re.escape(label) + r"\b", text)
        checkers = tuple(dict.fromkeys(_CHECKER.findall("\n".join(body))))
        found.append(
            Exercise(
                chapter=f"notebooks/{md.stem}",
                label=label,
                title=title.strip(),
                level=level.strip(),
                programming=bool(gated or checkers),
                checkers=checkers,
            )
        )
    return found


def all_exercises() -> list[Exercise]:
    return [ex for md in chapters() for ex in parse(md)]


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def table(exercises: list[Exercise]) -> str:
    by_chapter: dict[str, list[Exercise]] = {}
    for ex in exercises:
        by_chapter.setdefault(ex.chapter, []).append(ex)
    out = [
        START,
        "",
        "| Chapter | " + " | ".join(LEVELS) + " | Programming | Find the error | Total |",
        "|---|" + "---:|" * (len(LEVELS) + 3),
    ]
    for chapter, exs in by_chapter.items():
        counts = [sum(e.level == lv for e in exs) for lv in LEVELS]
        out.append(
            f"| {{doc}}`../{chapter}` | "
            + " | ".join(str(c) for c in counts)
            + f" | {sum(e.programming for e in exs)} | {sum(e.find_error for e in exs)} | {len(exs)} |"
        )
    totals = [sum(e.level == lv for e in exercises) for lv in LEVELS]
    out.append(
        "| **All** | "
        + " | ".join(f"**{c}**" for c in totals)
        + f" | **{sum(e.programming for e in exercises)}** | **{sum(e.find_error for e in exercises)}**"
        + f" | **{len(exercises)}** |"
    )
    out += ["", "| Chapter | Exercise | Title | Level | Kind | Self-check |", "|---|---|---|---|---|---|"]
    for ex in exercises:
        kind = "programming" if ex.programming else "conceptual"
        if ex.find_error:
            kind += ", find the error"
        if ex.checkers:
            check = ", ".join(f"`fedfreq.exercises.{c}`" for c in ex.checkers)
        else:
            check = "— (solution runs in the build)" if ex.programming else "—"
        out.append(
            f"| {{doc}}`../{ex.chapter}` | {{ref}}`{ex.label}` | {_md(ex.title) or '—'} | "
            f"{ex.level or '—'} | {kind} | {check} |"
        )
    out += ["", END]
    return "\n".join(out)


def render(page_text: str, exercises: list[Exercise]) -> str:
    if START not in page_text or END not in page_text:
        raise ValueError(f"{PAGE}: the markers {START} and {END} are missing")
    head, rest = page_text.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + table(exercises) + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = parser.parse_args(argv)
    exercises = all_exercises()
    old = PAGE.read_text(encoding="utf-8")
    new = render(old, exercises)
    if args.check:
        if new != old:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/make_exercises_index.py")
            return 1
        return 0
    if new != old:
        PAGE.write_text(new, encoding="utf-8")
    print(f"{len(exercises)} exercises in {len({e.chapter for e in exercises})} chapters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
