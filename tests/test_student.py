"""The student edition: no solution reaches the student, and a student notebook runs."""

import ast
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_student  # noqa: E402

CHAPTERS = make_student.chapters()


def _solution_lines(removed):
    """Distinctive lines of the removed solutions (imports of checkers are handed out)."""
    lines = set()
    for sol in removed:
        for block in sol["text"] + sol["code"]:
            for line in block.splitlines():
                line = line.strip()
                if len(line) >= 25 and not line.startswith("from fedfreq.exercises import"):
                    lines.add(line)
    return lines


def _everything(nb):
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(str(out.get("text", "")))
            parts.extend(str(v) for v in out.get("data", {}).values())
    return "\n".join(parts)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_reaches_the_student(path):
    nb = nbformat.read(path, as_version=4)
    for keep_outputs in (False, True):  # the handed-out notebook and the site's source
        student, removed = make_student.student_notebook(nb, keep_outputs=keep_outputs)
        text = _everything(student)
        leaked = [line for line in _solution_lines(removed) if line in text]
        assert not leaked, f"{path.stem}: solution lines in the student edition: {leaked[:3]}"
        assert "{solution" not in text, f"{path.stem}: a solution directive survived"
        for cell in student.cells:
            if cell.cell_type == "code":
                ast.parse(cell.source)
        nbformat.validate(student)


def test_every_exercise_with_a_solution_is_found():
    """Each exercise label of the chapters has its solution removed."""
    labels, removed_labels = set(), set()
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown" and "{exercise}" in cell.source:
                labels.update(
                    line.split(":label:")[1].strip() for line in cell.source.splitlines() if ":label:" in line
                )
        removed_labels.update(s["label"] for s in make_student.student_notebook(nb, keep_outputs=False)[1])
    assert labels and labels <= removed_labels, sorted(labels - removed_labels)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_student_notebook_runs_before_any_exercise_is_answered(path, tmp_path):
    """Each student notebook executes from top to bottom as handed out: no cell of the
    chapter depends on a removed solution, and each answer cell runs unanswered."""
    nb = nbformat.read(path, as_version=4)
    student, _ = make_student.student_notebook(nb, keep_outputs=False)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    NotebookClient(
        student, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    ).execute()
    answers = [c for c in student.cells if c.cell_type == "code" and c.source.startswith("# Exercise ")]
    assert answers, f"{path.stem}: no answer cells"
    assert all(not any(o.get("output_type") == "error" for o in c.outputs) for c in answers)


def test_the_student_kit_holds_what_a_student_installs_and_nothing_else(tmp_path):
    """The kit: the wheel, its pinned requirements, the student notebooks, a README; no
    solution and no assignment master. (tests/test_install.py installs it in a fresh
    virtualenv and runs one of its notebooks.)"""
    kit = make_student.build_kit(tmp_path / "kit", hub="https://hub.example.edu", kit_repo="https://github.com/c/kit")
    files = sorted(str(p.relative_to(kit)) for p in kit.rglob("*") if p.is_file())
    (wheel,) = [f for f in files if f.endswith(".whl")]
    notebooks = [f for f in files if f.startswith("notebooks/")]
    assert set(files) == {wheel, "requirements.txt", "README.md", *notebooks}
    assert sorted(notebooks) == sorted(f"notebooks/{p.name}" for p in CHAPTERS)
    readme = (kit / "README.md").read_text()
    assert f"pip install -r requirements.txt {wheel}" in readme
    assert readme.count("/hub/user-redirect/git-pull?") == len(CHAPTERS)
    listed = {}
    for line in (kit / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            listed[name] = version
    from wheel import pinned_closure

    assert listed == pinned_closure(list(make_student.KIT_REQUIREMENTS))
    assert "otter-grader" in listed and "fedfreq" not in listed
    for path in CHAPTERS:
        nb = nbformat.read(kit / "notebooks" / path.name, as_version=4)
        _, removed = make_student.student_notebook(nbformat.read(path, as_version=4), keep_outputs=False)
        leaked = [line for line in _solution_lines(removed) if line in _everything(nb)]
        assert not leaked, f"{path.stem}: solution lines in the kit: {leaked[:3]}"


def test_nbgitpuller_links_open_the_chapter_in_the_pulled_repository():
    from urllib.parse import parse_qs, urlsplit

    link = make_student.nbgitpuller_link(
        "https://hub.example.edu/", "https://github.com/course/pffe-kit.git", "notebooks/02_cpbm.ipynb", branch="fall"
    )
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "hub.example.edu", "/hub/user-redirect/git-pull")
    query = parse_qs(parts.query)
    assert query == {
        "repo": ["https://github.com/course/pffe-kit.git"],
        "branch": ["fall"],
        "urlpath": ["lab/tree/pffe-kit/notebooks/02_cpbm.ipynb"],
    }
    classic = make_student.nbgitpuller_link("https://h", "https://g/x/k", "a.ipynb", ui="tree")
    assert parse_qs(urlsplit(classic).query)["urlpath"] == ["tree/k/a.ipynb"]
    with pytest.raises(ValueError, match="ui"):
        make_student.nbgitpuller_link("https://h", "https://g/x/k", "a.ipynb", ui="vscode")
