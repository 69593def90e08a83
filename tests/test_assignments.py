"""The otter-grader assignments: masters well formed, solutions get full marks, blanks get zero.

For every master in ``book/assignments/`` the test runs ``otter assign`` into a temporary
directory (as ``make assignments`` does, without otter's own solution run), then grades
two notebooks with the generated ``autograder.zip`` through ``otter run`` (local,
non-containerised grading, in ``--debug`` mode so that an error while executing the
notebook fails the run instead of being ignored):

* the notebook with solutions that otter writes into ``autograder/`` must score full marks
  on the public and hidden tests;
* the student notebook, executed as handed out (every answer still ``...``), must execute
  without errors and score zero on every question.

The two gradings of one assignment run concurrently; with ``pytest -n 2`` the assignments
are spread over the workers.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_assignments  # noqa: E402

MASTERS = make_assignments.masters()
PARTS = 7  # one assignment per part of the book (see _toc.yml)


def _raw(cell) -> str:
    return cell.source.strip() if cell.cell_type == "raw" else ""


def _config(nb) -> dict:
    for cell in nb.cells:
        if _raw(cell).startswith("# ASSIGNMENT CONFIG"):
            return yaml.safe_load(_raw(cell))
    raise AssertionError("no '# ASSIGNMENT CONFIG' raw cell")


def _questions(nb) -> dict[str, dict[str, int]]:
    """Per question: the numbers of public and hidden test cells."""
    questions: dict[str, dict[str, int]] = {}
    name, in_tests = None, False
    for cell in nb.cells:
        raw = _raw(cell)
        if raw.startswith("# BEGIN QUESTION"):
            name = yaml.safe_load(raw)["name"]
            questions[name] = {"public": 0, "hidden": 0}
        elif raw == "# BEGIN TESTS":
            in_tests = True
        elif raw == "# END TESTS":
            in_tests = False
        elif in_tests and cell.cell_type == "code" and name is not None:
            first = cell.source.lstrip().splitlines()[0]
            hidden = first.startswith("#") and re.search(r"\bhidden\b", first, flags=re.IGNORECASE)
            questions[name]["hidden" if hidden else "public"] += 1
    return questions


def test_one_assignment_per_part():
    assert len(MASTERS) == PARTS
    assert [m.stem.split("_")[0] for m in MASTERS] == [f"part{i}" for i in range(1, PARTS + 1)]


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_master_is_well_formed(master):
    nb = nbformat.read(master, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:  # committed masters carry no outputs
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{master.name}: a code cell has outputs"
    config = _config(nb)
    assert config["init_cell"] is False and config["export_cell"] is False
    assert config["solutions_pdf"] is False
    assert isinstance(config["generate"]["seed"], int), "grading must be seeded"
    questions = _questions(nb)
    assert 3 <= len(questions) <= 5, f"{master.name}: {len(questions)} questions"
    for name, counts in questions.items():
        assert counts["public"] >= 1 and counts["hidden"] >= 1, f"{master.name} {name}: {counts}"
    solutions = [c for c in nb.cells if c.cell_type == "code" and "SOLUTION" in c.source]
    assert len(solutions) >= len(questions)
    # at least one question checks a paper's claim by computation
    prompts = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert re.search(r"an error in the paper|an ambiguous claim of the paper", prompts), master.name


def _grade(zip_path: Path, notebook: Path, out: Path) -> tuple[float, float, dict[str, float]]:
    """Grade ``notebook`` with ``otter run --debug``; return (score, maximum, per-question scores)."""
    out.mkdir(parents=True)
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONWARNINGS="ignore::UserWarning")
    cmd = [*make_assignments.otter_command(), "run", "--debug", "--no-logo", "-a", str(zip_path), "-o", str(out)]
    proc = subprocess.run([*cmd, str(notebook)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"otter run failed on {notebook}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    results = json.loads((out / "results.json").read_text())
    scored = {t["name"]: t for t in results["tests"] if t.get("max_score") is not None}
    per_question = {name: float(t["score"]) for name, t in scored.items()}
    return sum(per_question.values()), sum(float(t["max_score"]) for t in scored.values()), per_question


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_solutions_get_full_marks_and_blanks_get_zero(master, tmp_path):
    dest = tmp_path / master.stem
    zip_path = make_assignments.assign(master, dest, run_tests=False)
    solution = dest / "autograder" / master.name
    student = dest / "student" / master.name
    text = student.read_text()
    assert "# HIDDEN" not in text and "BEGIN SOLUTION" not in text and "# SOLUTION" not in text

    with ThreadPoolExecutor(max_workers=2) as pool:
        full = pool.submit(_grade, zip_path, solution, tmp_path / "graded-solution")
        blank = pool.submit(_grade, zip_path, student, tmp_path / "graded-blank")
        score, maximum, per_question = full.result()
        blank_score, blank_max, blank_questions = blank.result()

    n_questions = len(_questions(nbformat.read(master, as_version=4)))
    assert len(per_question) == n_questions and maximum > 0
    assert score == maximum, f"{master.stem}: the solutions score {per_question} of {maximum}"
    assert blank_max == maximum
    assert blank_score == 0, f"{master.stem}: the blank notebook scores {blank_questions}"
