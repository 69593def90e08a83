"""Build the student edition: the chapters without their solutions.

Usage::

    python scripts/make_student.py            # notebooks and site into _build/student/
    python scripts/make_student.py --no-site  # the notebooks only
    make student

Every exercise of a chapter is followed by a gated solution
(``{solution-start} <label>`` ... ``{solution-end}``), whose text and code cells the
instructor's edition shows folded. This script removes each solution, from its opening
directive to its closing one, and writes

* ``_build/student/notebooks/NN_name.ipynb``: the chapters without solutions and without
  outputs, ready to hand out. In place of each removed solution that contained code,
  the student finds one code cell that imports the exercise's checker (if it has one)
  and shows, commented out, how to call it on an attempt; the cell runs as it is, so a
  student notebook executes from top to bottom before any exercise is answered.
* ``_build/student/_build/html/``: the site built from the chapters' stored outputs with the
  solutions removed (and the rest of the book unchanged).

``tests/test_student.py`` checks that no line of any solution appears in the student
notebooks or the student site, and executes one student notebook.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stored_outputs_config import stored_outputs_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
OUT = ROOT / "_build" / "student"
START = re.compile(r"```\{solution-start\}\s+(\S+)")
END = "```{solution-end}"
CHECKER = re.compile(r"\bcheck_\w+\b")


def _fence_end(text: str, start: int) -> int:
    """Index just after the closing fence of the directive opened at ``start``."""
    first_line_end = text.index("\n", start) if "\n" in text[start:] else len(text)
    close = text.find("```", first_line_end)
    if close < 0:
        return len(text)
    nl = text.find("\n", close)
    return len(text) if nl < 0 else nl + 1


COLON = re.compile(r"^(:{3,})\{solution\}\s+(\S+)[^\n]*$", re.MULTILINE)


def _strip_colon_solutions(text: str, removed: list[dict]) -> str:
    """Remove the ``:::{solution} label`` blocks of a markdown text (recorded in
    ``removed``; the last one's ``end`` is where it ended in the returned text)."""
    while True:
        m = COLON.search(text)
        if m is None:
            return text
        close = re.compile(rf"^{m.group(1)}\s*$", re.MULTILINE).search(text, m.end())
        stop = len(text) if close is None else close.end()
        removed.append({"label": m.group(2), "text": [text[m.end() : stop]], "code": [], "colon": True})
        text = text[: m.start()] + text[stop:]
        removed[-1]["end"] = m.start()


def strip_solutions(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[dict]]:
    """The notebook without its gated solutions, and what each removed solution held
    (its label, its markdown text, its code). Code cells after a solution's closing
    directive, and text around the directives, are kept."""
    cells: list = []
    removed: list[dict] = []
    current: dict | None = None
    after_colon: dict | None = None  # a {solution} block just closed: its code follows
    for cell in nb.cells:
        if cell.cell_type == "code":
            if current is not None:
                current["code"].append(cell.source)
            elif after_colon is not None:
                after_colon["code"].append(cell.source)
            else:
                cells.append(cell)
            continue
        after_colon = None
        text, keep = _strip_colon_solutions(cell.source, removed), ""
        if removed and removed[-1].get("colon") and not text[removed[-1]["end"] :].strip():
            after_colon = removed[-1]
        while text:
            if current is None:
                m = START.search(text)
                if m is None:
                    keep += text
                    break
                keep += text[: m.start()]
                current = {"label": m.group(1), "text": [], "code": []}
                text = text[_fence_end(text, m.start()) :]
            else:
                k = text.find(END)
                if k < 0:
                    current["text"].append(text)
                    break
                current["text"].append(text[:k])
                removed.append(current)
                current = None
                text = text[_fence_end(text, k) :]
        if keep.strip():
            new = nbformat.v4.new_markdown_cell(keep.strip("\n"))
            new.metadata = cell.metadata
            cells.append(new)
    if current is not None:
        raise ValueError(f"solution {current['label']!r} has no {END}")
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    out.cells = cells
    return out, removed


def answer_cell(solution: dict) -> nbformat.NotebookNode | None:
    """A code cell for the student's answer: the checker's import and, commented out,
    its call; None for a solution without code."""
    if not solution["code"]:
        return None
    code = "\n".join(solution["code"])
    checkers = sorted(set(CHECKER.findall(code)))
    lines = [f"# Exercise {solution['label']}: write your answer here."]
    if checkers:
        lines.append(f"from fedfreq.exercises import {', '.join(checkers)}")
        lines.append("")
        lines.append("# When your answer is ready, check it, e.g.")
        for name in checkers:
            lines.append(f"# print({name}(...))  # see help({name})")
    cell = nbformat.v4.new_code_cell("\n".join(lines))
    ast.parse(cell.source)
    return cell


def student_notebook(nb: nbformat.NotebookNode, *, keep_outputs: bool) -> tuple[nbformat.NotebookNode, list[dict]]:
    """The student version of a stored chapter notebook."""
    stripped, removed = strip_solutions(nb)
    # put each answer cell where its solution was: after the exercise's markdown
    by_label = {s["label"]: s for s in removed}
    cells = []
    for cell in stripped.cells:
        cells.append(cell)
        if cell.cell_type == "markdown":
            for label in re.findall(r":label:\s*(\S+)", cell.source):
                if label in by_label:
                    extra = answer_cell(by_label[label])
                    if extra is not None:
                        cells.append(extra)
    stripped.cells = cells
    for i, cell in enumerate(stripped.cells):
        cell["id"] = f"s{i:03d}"
        if cell.cell_type == "code" and not keep_outputs:
            cell.outputs, cell.execution_count = [], None
    return stripped, removed


def chapters() -> list[Path]:
    return sorted(NB_DIR.glob("[0-9][0-9]_*.ipynb"))


def write_notebooks(out: Path, *, keep_outputs: bool) -> dict[str, list[dict]]:
    out.mkdir(parents=True, exist_ok=True)
    removed_all = {}
    for path in chapters():
        nb = nbformat.read(path, as_version=4)
        student, removed = student_notebook(nb, keep_outputs=keep_outputs)
        nbformat.write(student, out / path.name)
        removed_all[path.stem] = removed
    return removed_all


def build_site() -> Path:
    """The site from the stored outputs, solutions removed, into _build/student/_build/html."""
    src = OUT / "src"
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    write_notebooks(src / "notebooks", keep_outputs=True)
    shutil.copy(NB_DIR / "execution_times.json", src / "notebooks")
    shutil.copytree(ROOT / "book", src / "book", ignore=shutil.ignore_patterns("_mathjax", "_vendor", "_ext"))
    shutil.copy(ROOT / "_toc.yml", src / "_toc.yml")
    config = stored_outputs_config(ROOT / "_config.yml")
    config["title"] = f"{config.get('title', '')} (student edition)"
    (src / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    jb = Path(sys.executable).parent / "jupyter-book"
    subprocess.run([str(jb), "build", str(src), "-n", "-W", "--keep-going", "--path-output", str(OUT)], check=True)
    return OUT / "_build" / "html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-site", action="store_true", help="write the student notebooks only")
    args = parser.parse_args(argv)
    removed = write_notebooks(OUT / "notebooks", keep_outputs=False)
    n = sum(len(v) for v in removed.values())
    print(f"student notebooks: {len(removed)} chapters, {n} solutions removed -> {OUT / 'notebooks'}")
    if not args.no_site:
        html = build_site()
        print(f"student site: {html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
