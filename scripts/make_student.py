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
  solutions removed (and the rest of the book unchanged; the assignment masters and the
  instructor's materials are left out of it).
* ``_build/student/kit/``: what a student installs and opens, and nothing else: the package's
  wheel, ``requirements.txt`` (everything the chapters and the assignments need, pinned as
  in the book's own environment), the student notebooks, and a README with the three
  ways to start (a laptop, a JupyterHub through an nbgitpuller link, Colab). With
  ``--hub URL --kit-repo URL`` the README lists each chapter's nbgitpuller link.

``tests/test_student.py`` checks that no line of any solution appears in the student
notebooks or the student site; the nbval run of ``make test`` (``--student-check``, see
:func:`student_suffix`) runs every student notebook from its first exercise on.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stored_outputs_config import stored_outputs_config  # noqa: E402
from wheel import build_wheel, pinned_closure  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

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


def student_suffix(nb: nbformat.NotebookNode) -> tuple[int, list[str]]:
    """Where a student notebook first departs from its chapter, and what it runs from there.

    Returns ``(k, sources)``: the student's code cells agree with the chapter's up to code
    cell ``k`` (exclusive), and ``sources`` are the student's code cells from there on
    (its answer cells and the chapter's cells that follow them, solutions removed). The
    student notebook therefore runs as the chapter runs up to cell k, and then runs
    ``sources``; the nbval run of the chapter (``--student-check``) runs them in a copy of
    the kernel's state just before the chapter's cell k.
    """
    student, _ = student_notebook(nb, keep_outputs=False)
    chapter = [c.source for c in nb.cells if c.cell_type == "code"]
    handed = [c.source for c in student.cells if c.cell_type == "code"]
    k = 0
    while k < min(len(chapter), len(handed)) and chapter[k] == handed[k]:
        k += 1
    return k, handed[k:]


#: The mark of the line the student-suffix runner prints (a JSON object follows it).
STUDENT_MARK = "@@student@@ "

#: Code run in a chapter's kernel by the nbval run (``--student-check``): runs a student
#: notebook's cells from its first departure from the chapter, one after another, in a
#: copy of the names they can reach, restores the kernel's state, and prints one marked
#: JSON line: the number of cells run and the first error, if any. It needs the mutation
#: runner's ``_snapshot`` and ``_restore`` (``scripts/mutate_claims.py``), run first.
STUDENT_RUNNER = r"""
def _run_student_suffix(sources):
    import json
    from IPython import get_ipython
    from IPython.utils.capture import capture_output
    g = globals()
    codes = [get_ipython().transform_cell(s) for s in sources]
    saved, before = _snapshot(codes, g)
    result = {"cells": len(codes), "error": None}
    try:
        with capture_output():
            for i, code in enumerate(codes):
                try:
                    exec(compile(code, f"<student code cell {i}>", "exec"), g)
                except Exception as exc:
                    first = sources[i].strip().splitlines()[0] if sources[i].strip() else ""
                    result["error"] = f"cell {i} ({first[:60]!r}): {type(exc).__name__}: {exc}"[:400]
                    break
    finally:
        _restore(g, saved, before)
    print("@@student@@ " + json.dumps(result))
"""


def chapters() -> list[Path]:
    return [p.ipynb for p in layout.pages()]


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
    # the assignment masters (solutions, hidden tests) and the instructor's materials stay out
    shutil.copytree(
        ROOT / "book",
        src / "book",
        ignore=shutil.ignore_patterns("_mathjax", "_vendor", "_ext", "assignments", "instructor"),
    )
    shutil.copy(ROOT / "_toc.yml", src / "_toc.yml")
    config = stored_outputs_config(ROOT / "_config.yml")
    config["title"] = f"{config.get('title', '')} (student edition)"
    (src / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    jb = Path(sys.executable).parent / "jupyter-book"
    subprocess.run([str(jb), "build", str(src), "-n", "-W", "--keep-going", "--path-output", str(OUT)], check=True)
    return OUT / "_build" / "html"


#: What the student kit's environment holds besides the package: the chapters' requirements
#: and otter-grader (``grader.check`` in the assignments).
KIT_REQUIREMENTS = ("fedfreq[book]", "otter-grader")


def kit_requirements() -> str:
    """The kit's ``requirements.txt``: every distribution it needs, pinned."""
    head = (
        "# Everything the book's chapters and assignments need, pinned as in the book's own\n"
        "# environment. Install it together with the package's wheel, from this folder:\n"
        "#   python -m pip install -r requirements.txt fedfreq-*.whl\n"
    )
    return head + "".join(f"{n}=={v}\n" for n, v in pinned_closure(list(KIT_REQUIREMENTS)).items())


def nbgitpuller_link(hub: str, kit_repo: str, notebook: str, *, branch: str = "main", ui: str = "lab") -> str:
    """A link that makes a JupyterHub pull the kit's repository and open ``notebook`` in it.

    ``hub`` is the hub's address, ``kit_repo`` the git repository holding the kit (cloned
    into a folder named after the repository), ``notebook`` a path inside the kit, ``ui``
    ``lab`` (JupyterLab) or ``tree`` (classic notebook). The form is nbgitpuller's
    ``/hub/user-redirect/git-pull?repo=...&branch=...&urlpath=...``.
    """
    if ui not in ("lab", "tree"):
        raise ValueError(f"ui must be 'lab' or 'tree'; got {ui!r}")
    folder = kit_repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    urlpath = f"{'lab/tree' if ui == 'lab' else 'tree'}/{folder}/{notebook}"
    query = urlencode({"repo": kit_repo, "branch": branch, "urlpath": urlpath}, safe="/")
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


KIT_README = """# Private Federated Frequency Estimation: student kit

This folder is all you need to work through the book's chapters and assignments: the
book's package `fedfreq` as a wheel (`{wheel}`), the pinned requirements, and the
chapters as notebooks without their solutions (`notebooks/`). Read the book online
alongside; the notebooks are the same chapters, with room for your answers. Each exercise
with code has an answer cell that imports its checker from `fedfreq.exercises`: run the
checker on your attempt for a hint; it never shows the answer.

## On a laptop (Python 3.11 or newer)

    python -m venv .venv
    .venv/bin/python -m pip install -r requirements.txt {wheel}

then open `notebooks/` with the kernel of `.venv` in any Jupyter front end (JupyterLab,
VS Code; if you have none, `.venv/bin/python -m pip install jupyterlab` and
`.venv/bin/jupyter lab`). On Windows the folder is `.venv\\Scripts\\` instead of
`.venv/bin/`.

## On the course's JupyterHub

Your instructor puts this folder in a git repository and gives you one link per chapter
(nbgitpuller): clicking it copies the repository into your hub account, or updates it
without touching your answers, and opens the chapter. The first time, run
`%pip install -r requirements.txt {wheel}` in a notebook cell from the kit's folder
(unless the hub's image already has them), then restart the kernel.
{links}
## On Colab

Upload a notebook from `notebooks/` (or open it from the kit's repository on GitHub).
Its first cell installs the package, pinned to the book's edition, when it is missing;
if the package index is out of reach, upload `{wheel}` and run
`%pip install {wheel}[book]` first.
"""


def build_kit(out: Path, *, hub: str | None = None, kit_repo: str | None = None) -> Path:
    """Write the student kit into ``out`` (replacing it) and return ``out``."""
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    write_notebooks(out / "notebooks", keep_outputs=False)
    wheel = build_wheel(out)
    (out / "requirements.txt").write_text(kit_requirements(), encoding="utf-8")
    links = ""
    if hub and kit_repo:
        rows = [f"- [{p.stem}]({nbgitpuller_link(hub, kit_repo, f'notebooks/{p.name}')})" for p in chapters()]
        links = "\nThe links of this course:\n\n" + "\n".join(rows) + "\n"
    (out / "README.md").write_text(KIT_README.format(wheel=wheel.name, links=links), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-site", action="store_true", help="write the student notebooks and the kit only")
    parser.add_argument("--hub", help="the course's JupyterHub address, for the kit's nbgitpuller links")
    parser.add_argument("--kit-repo", help="the git repository the kit is published in, for the same links")
    args = parser.parse_args(argv)
    removed = write_notebooks(OUT / "notebooks", keep_outputs=False)
    n = sum(len(v) for v in removed.values())
    print(f"student notebooks: {len(removed)} chapters, {n} solutions removed -> {OUT / 'notebooks'}")
    kit = build_kit(OUT / "kit", hub=args.hub, kit_repo=args.kit_repo)
    print(f"student kit: {kit}")
    if not args.no_site:
        html = build_site()
        print(f"student site: {html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
