"""The otter-grader assignments: archives that grade on their own, and scores that are fair.

Every archive is built once per test session (``otter assign`` through
``scripts/make_assignments.py``, one wheel shared by the seven; with ``pytest -n 2`` the
workers share the build through a lock file), into a temporary folder or, when
``FEDFREQ_ASSIGNMENTS_OUT`` names one (``make test`` gives ``_build/assignments``), into that
folder, emptied first, where ``make test-handouts`` then scans the same build. Then:

* **from the archive alone**: the seven archives ask for the same environment (their
  ``requirements.txt`` and ``environment.yml`` are compared), so one fresh virtualenv is
  built from the first archive's ``requirements.txt`` (unzipped into a temporary folder,
  pip run from there, the pins of the repository's ``requirements.txt`` given as
  constraints) and every archive grades, with that environment's ``otter run`` (otter's
  grading entry point, which unzips the archive and runs ``run_autograder``'s code), the
  notebook with solutions (full marks) and the blank student notebook (zero, executed
  without errors in ``--debug`` mode);
* **fair scoring**: public tests carry no points, every question has one hidden test that
  carries all of them, and the tests of the archive (otter's own test-file runner, on the
  namespace of the executed notebook) give zero to a notebook of well-typed constants, at
  most 10 % to a notebook that hard-codes the values the reference returns on the first
  inputs it sees (what a student learns from a public test), and zero to each plausible
  wrong answer listed in ``book/assignments/<name>.wrong.yml`` (several per question; the
  other questions keep their full marks).
"""

from __future__ import annotations

import ast
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_assignments  # noqa: E402

MASTERS = make_assignments.masters()
PARTS = 7  # one assignment per part of the book (see _toc.yml)
HARD_CODED_MAX = 0.10
#: Two student ids of the course roster's form (the masters carry a third as their sample).
STUDENT_IDS = ("a1234567", "zz-98765")
OTHER_ID = STUDENT_IDS[0]


def _raw(cell) -> str:
    return cell.source.strip() if cell.cell_type == "raw" else ""


def _config(nb) -> dict:
    for cell in nb.cells:
        if _raw(cell).startswith("# ASSIGNMENT CONFIG"):
            return yaml.safe_load(_raw(cell))
    raise AssertionError("no '# ASSIGNMENT CONFIG' raw cell")


def _is_hidden(source: str) -> bool:
    lines = source.lstrip().splitlines()
    return bool(lines) and lines[0].startswith("#") and bool(re.search(r"\bhidden\b", lines[0], flags=re.IGNORECASE))


def _questions(nb) -> dict[str, dict[str, Any]]:
    """Per question: its points, its public and hidden test cells, and its solution cells."""
    questions: dict[str, dict[str, Any]] = {}
    name, block = None, None
    for cell in nb.cells:
        raw = _raw(cell)
        if raw.startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(raw)
            name = config["name"]
            questions[name] = {"points": config["points"], "public": [], "hidden": [], "solution": []}
        elif raw in ("# BEGIN TESTS", "# BEGIN SOLUTION"):
            block = raw.split()[-1].lower()
        elif raw in ("# END TESTS", "# END SOLUTION"):
            block = None
        elif name is not None and cell.cell_type == "code" and block == "tests":
            questions[name]["hidden" if _is_hidden(cell.source) else "public"].append(cell.source)
        elif name is not None and cell.cell_type == "code" and block == "solution":
            questions[name]["solution"].append(cell.source)
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
    for name, q in questions.items():
        assert q["solution"], f"{master.name} {name}: no solution cell"
        assert len(q["public"]) >= 1 and len(q["hidden"]) == 1, f"{master.name} {name}: one hidden test per question"
        # all or nothing: the public tests are worth nothing, the hidden test is worth the question
        points = q["points"]
        assert isinstance(points, list) and len(points) == len(q["public"]) + 1, f"{master.name} {name}: {points}"
        assert all(p == 0 for p in points[:-1]) and points[-1] > 0, f"{master.name} {name}: {points}"
    # at least one question checks a paper's claim by computation
    prompts = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert re.search(r"an error in the paper|an ambiguous claim of the paper", prompts), master.name


# --------------------------------------------------------------------------------------------
# questions that coincide with a chapter's published solution


def _normal(line: str) -> str:
    return re.sub(r"\s+", "", line.split("#")[0])


def chapter_solution_lines() -> dict[str, str]:
    """Every substantial code line of the chapters' solution blocks, normalised, with its chapter."""
    lines: dict[str, str] = {}
    for path in sorted((ROOT / "notebooks").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        blocks = [m.group(2) for m in re.finditer(r"(:{3,})\{solution\}[^\n]*\n(.*?)\n\1", text, re.S)]
        blocks += [
            m.group(1) for m in re.finditer(r"```\{solution-start\}[^\n]*\n(.*?)```\{solution-end\}", text, re.S)
        ]
        for block in blocks:
            for line in block.splitlines():
                key = _normal(line)
                if len(key) > 20:
                    lines.setdefault(key, path.stem)
    return lines


def reused_lines(master: Path, chapters: dict[str, str]) -> dict[str, set[str]]:
    """Per question of ``master``: the chapters whose solution shares a line with it."""
    out: dict[str, set[str]] = {}
    for name, q in _questions(nbformat.read(master, as_version=4)).items():
        for source in q["solution"] + q["public"]:
            for line in source.splitlines():
                if _normal(line) in chapters:
                    out.setdefault(name, set()).add(chapters[_normal(line)])
    return out


#: Questions that still share code with a chapter's published solution (same function, same
#: self-check): each is to be replaced by a new question. The test fails if a question is
#: added to this list's findings, and also once one is replaced and not struck off here.
STILL_REUSED: dict[str, dict[str, set[str]]] = {}


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_no_question_copies_a_chapter_solution_beyond_the_known_list(master):
    found = reused_lines(master, chapter_solution_lines())
    assert found == STILL_REUSED.get(master.stem, {}), f"{master.stem}: questions sharing a chapter's solution"


def test_the_reuse_check_finds_a_copied_solution(tmp_path):
    chapters = chapter_solution_lines()
    line = next(k for k, v in chapters.items() if v == "01_foundations" and k.startswith("def"))
    nb = nbformat.read(MASTERS[2], as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "# BEGIN SOLUTION" in cell.source:
            cell.source = line + "\n" + cell.source
            break
    copy = tmp_path / MASTERS[2].name
    nbformat.write(nb, copy)
    assert reused_lines(copy, chapters) != STILL_REUSED.get(MASTERS[2].stem, {})


# --------------------------------------------------------------------------------------------
# building the archives once per session


def _shared_dir(tmp_path_factory, worker_id: str) -> Path:
    base = tmp_path_factory.getbasetemp()
    return (base.parent if worker_id != "master" else base) / "fedfreq-assignments"


@pytest.fixture(scope="session")
def built(tmp_path_factory, worker_id) -> Path:
    """All seven assignments, built once (the workers of ``pytest -n`` share them)."""
    shared = _shared_dir(tmp_path_factory, worker_id)
    shared.mkdir(parents=True, exist_ok=True)
    target = os.environ.get("FEDFREQ_ASSIGNMENTS_OUT")
    out = Path(target).resolve() if target else shared
    # the lock and the marker live in this session's temporary folder, so that a folder
    # named by FEDFREQ_ASSIGNMENTS_OUT is rebuilt by every session, never reused stale
    with open(shared / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "built.ok").exists():
            if target:
                shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="fedfreq-wheel-") as tmp:
                wheel = make_assignments.build_wheel(Path(tmp))
                with ThreadPoolExecutor(max_workers=2) as pool:
                    list(
                        pool.map(
                            lambda m: make_assignments.assign(m, out / m.stem, wheel=wheel, run_tests=False),
                            MASTERS,
                        )
                    )
            (shared / "built.ok").write_text(str(out))
    return out


def _zip(built: Path, master: Path) -> Path:
    return built / master.stem / "autograder" / "autograder.zip"


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_nothing_of_the_answers_reaches_the_student(built, master):
    student = (built / master.stem / "student" / master.name).read_text()
    assert "# HIDDEN" not in student and "BEGIN SOLUTION" not in student and "# SOLUTION" not in student
    assert not (built / master.stem / "student" / "requirements.txt").exists()
    assert not list((built / master.stem / "student").glob("*.whl"))
    if _per_student(master):  # the student writes their own id; no sample id is handed out
        ids = make_assignments.STUDENT_ID_LINE.findall(student)
        assert ids == [], ids
        nb = nbformat.read(built / master.stem / "student" / master.name, as_version=4)
        lines = [m.group(0) for c in nb.cells for m in make_assignments.STUDENT_ID_LINE.finditer(c.source)]
        assert lines == ['STUDENT_ID = ""'], lines


def test_the_archives_ask_for_one_environment(built):
    setups = [make_assignments.archive_setup(_zip(built, m)) for m in MASTERS]
    first = setups[0]
    wheel = next(r for r in first["requirements"] if r.endswith(".whl"))
    assert wheel.startswith("./files/fedfreq-") and wheel[2:] in first["names"]
    assert first["python"] == [f"python={make_assignments.PYTHON_VERSION}"]
    assert tuple(int(x) for x in make_assignments.PYTHON_VERSION.split(".")) >= (3, 11)
    pins = make_assignments.pinned_requirements()
    assert first["requirements"] == [wheel, *(f"{n}=={v}" for n, v in pins.items())]
    # Gradescope's conda environment: the same pins, the wheel where otter unpacks the archive
    autograder_dir = first["config"].get("autograder_dir", make_assignments.AUTOGRADER_DIR)
    assert first["conda_pip"] == [f"{autograder_dir}/source/{wheel[2:]}", *first["requirements"][1:]]
    assert "otter-grader==5.7.1" in first["requirements"]
    for master, setup in zip(MASTERS, setups, strict=True):
        assert setup["python"] == first["python"], master.stem
        assert setup["requirements"] == first["requirements"], master.stem
        assert setup["conda_pip"] == first["conda_pip"], master.stem


# --------------------------------------------------------------------------------------------
# grading from the archive alone, in a fresh virtualenv


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_REQ"))}
    env.update(PYTHONHASHSEED="0", PYTHONWARNINGS="ignore::UserWarning", **extra)
    return env


def _uv() -> str | None:
    """The ``uv`` of the running environment (pinned in requirements.txt), if installed."""
    exe = Path(sys.executable).with_name("uv")
    return str(exe) if exe.exists() else shutil.which("uv")


def _grade_with(otter: list[str], zip_path: Path, notebook: Path, out: Path) -> tuple[float, float, dict]:
    """Grade ``notebook`` with ``otter run --debug``; return (score, maximum, per-question scores)."""
    out.mkdir(parents=True)
    cmd = [*otter, "run", "--debug", "--no-logo", "-a", str(zip_path), "-o", str(out), str(notebook)]
    proc = subprocess.run(cmd, cwd=out, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"otter run failed on {notebook}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    results = json.loads((out / "results.json").read_text())
    scored = {t["name"]: t for t in results["tests"] if t.get("max_score") is not None}
    per_question = {name: float(t["score"]) for name, t in scored.items()}
    return sum(per_question.values()), sum(float(t["max_score"]) for t in scored.values()), per_question


@pytest.mark.slow
def test_every_archive_grades_alone_in_a_fresh_virtualenv(built, tmp_path):
    # a grading service's view: only the archive, unzipped into a folder of its own
    unpacked = tmp_path / "archive"
    with zipfile.ZipFile(_zip(built, MASTERS[0])) as zf:
        zf.extractall(unpacked)
    setup = make_assignments.archive_setup(_zip(built, MASTERS[0]))
    python = shutil.which(f"python{make_assignments.PYTHON_VERSION}") or sys.executable
    venv = tmp_path / "venv"
    start = time.perf_counter()
    vpy = venv / "bin" / "python"
    uv = _uv()
    if uv is not None:  # uv installs the same pins as pip, several times faster
        subprocess.run([uv, "venv", "--quiet", "--seed", "-p", python, str(venv)], check=True, env=_clean_env())
        install = [uv, "pip", "install", "--quiet", "-p", str(vpy)]
    else:
        subprocess.run([python, "-m", "venv", str(venv)], check=True, env=_clean_env())
        install = [str(vpy), "-m", "pip", "install", "--quiet", "--no-compile"]
    proc = subprocess.run(
        [*install, "-r", "requirements.txt", "-c", str(ROOT / "requirements.txt")],
        cwd=unpacked,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"installing the archive's requirements failed:\n{proc.stderr[-3000:]}"
    installed = time.perf_counter() - start
    version = subprocess.run(
        [str(vpy), "-c", "import sys, fedfreq; print(sys.version_info >= (3, 11), fedfreq.__file__)"],
        cwd=tmp_path,
        env=_clean_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert version[0] == "True" and str(venv) in version[1] and str(ROOT) not in version[1]
    assert setup["requirements"][0].startswith("./files/fedfreq-")

    otter = [str(venv / "bin" / "otter")]
    # one grading per archive, in parallel: the notebook with solutions, under a student id
    # other than the master's sample (the blank notebook is graded in-process, below)
    jobs = []
    for master in MASTERS:
        solution = built / master.stem / "autograder" / master.name
        if _per_student(master):
            copy = tmp_path / "submissions" / master.stem / master.name
            copy.parent.mkdir(parents=True)
            solution = make_assignments.set_student_id(solution, OTHER_ID, copy)
        jobs.append((master, solution))
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {m.stem: pool.submit(_grade_with, otter, _zip(built, m), nb, tmp_path / m.stem) for m, nb in jobs}
        results = {key: f.result() for key, f in futures.items()}
    graded = time.perf_counter() - start - installed
    print(f"fresh virtualenv: installed in {installed:.0f} s, {len(jobs)} gradings in {graded:.0f} s")
    for master in MASTERS:
        score, maximum, per_question = results[master.stem]
        n_questions = len(_questions(nbformat.read(master, as_version=4)))
        assert len(per_question) == n_questions and maximum > 0
        assert score == maximum, f"{master.stem}: the solutions score {per_question} of {maximum}"


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_the_blank_notebook_runs_and_scores_zero(built, master):
    student = nbformat.read(built / master.stem / "student" / master.name, as_version=4)
    cells = _code_cells(student)
    if _per_student(master):
        with pytest.raises(ValueError, match="STUDENT_ID"):  # no id written: a clear message
            _execute(cells)
        cells = _with_id(cells, OTHER_ID)
    scores = _grade_env(_zip(built, master), _execute(cells))  # runs without errors
    assert scores and all(p > 0 for _, p in scores.values())
    assert sum(s for s, _ in scores.values()) == 0, f"{master.stem}: the blank notebook scores {scores}"


# --------------------------------------------------------------------------------------------
# fair scoring: the archive's tests against constant, hard-coded and wrong answers


def _code_cells(nb) -> list[str]:
    """The notebook's code, without otter's own calls (``grader.check`` is a no-op when grading)."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = [
            line
            for line in cell.source.splitlines()
            if not re.match(r"\s*grader\s*(=|\.check)", line) and not re.match(r"\s*import otter\s*$", line)
        ]
        cells.append("\n".join(lines))
    return cells


def _execute(cells: list[str]) -> dict[str, Any]:
    env: dict[str, Any] = {"__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in cells:
            exec(compile(source, "<notebook>", "exec"), env)  # noqa: S102 - the notebook under test
    return env


def _grade_env(zip_path: Path, env: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Per question: (score, possible), from the archive's test files run on ``env``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # otter's imports warn about deprecated APIs of its dependencies
        from otter.test_files import OKTestFile

    out = {}
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(zip_path) as zf:
        names = sorted(n for n in zf.namelist() if re.fullmatch(r"tests/q\d+\.py", n))
        zf.extractall(tmp, members=names)
        cwd = os.getcwd()
        os.chdir(tmp)  # the tests see the folder of the notebook, as in grading
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for name in names:
                    test = OKTestFile.from_file(os.path.join(tmp, name))
                    test.run(dict(env))
                    out[test.name] = (float(test.score), float(test.possible))
        finally:
            os.chdir(cwd)
    return out


def _answer_names(master: Path) -> dict[str, list[str]]:
    """Per question: the names its solution defines that its tests use (the answers)."""
    out = {}
    for name, q in _questions(nbformat.read(master, as_version=4)).items():
        defined: list[str] = []
        for source in q["solution"]:
            for node in ast.parse(source).body:
                if isinstance(node, ast.FunctionDef):
                    defined.append(node.name)
                elif isinstance(node, ast.Assign):
                    defined += [t.id for t in node.targets if isinstance(t, ast.Name)]
        used = {n.id for s in q["public"] + q["hidden"] for n in ast.walk(ast.parse(s)) if isinstance(n, ast.Name)}
        out[name] = [d for d in dict.fromkeys(defined) if d in used]
        assert out[name], f"{master.stem} {name}: no answer name found"
    return out


def _constant_like(value: Any) -> Any:
    """A well-typed constant of the form of ``value``."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, int | np.integer):
        return 1
    if isinstance(value, float | np.floating):
        return 1.0
    if isinstance(value, np.ndarray):
        return np.ones_like(value)
    if isinstance(value, list | tuple):
        return type(value)(_constant_like(v) for v in value)
    return value


def _constant_function(fn, *, hard_coded: bool):
    """A function answering with constants of the form of ``fn``'s answers: ones and
    ``False`` (``hard_coded=False``), or, always, what ``fn`` returned on its first call."""
    first: list[Any] = []

    def answer(*args, **kwargs):
        if not first:
            first.append(fn(*args, **kwargs))
        return first[0] if hard_coded else _constant_like(first[0])

    return answer


def _replace_answers(env: dict[str, Any], names: list[str], *, hard_coded: bool) -> dict[str, Any]:
    env = dict(env)
    for name in names:
        value = env[name]
        if callable(value):
            env[name] = _constant_function(value, hard_coded=hard_coded)
        else:
            env[name] = _constant_like(value)  # no public test shows a variable's value
    return env


def _wrong_answers(master: Path) -> dict[str, list[dict[str, str]]]:
    return yaml.safe_load(master.with_suffix(".wrong.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_constant_hard_coded_and_wrong_answers_lose_the_points(built, master):
    zip_path = _zip(built, master)
    solution_nb = nbformat.read(built / master.stem / "autograder" / master.name, as_version=4)
    cells = _code_cells(solution_nb)
    answers = _answer_names(master)
    reference = _execute(cells)
    full = _grade_env(zip_path, reference)
    assert all(s == p > 0 for s, p in full.values()), f"{master.stem}: the solutions score {full}"
    total = sum(p for _, p in full.values())

    constant = _grade_env(
        zip_path, _replace_answers(reference, [n for v in answers.values() for n in v], hard_coded=False)
    )
    assert sum(s for s, _ in constant.values()) == 0, f"{master.stem}: well-typed constants score {constant}"

    # functions that always answer what the reference answered first (a value a public test
    # could show), variables as constants: at most 10 % in all
    names = [n for v in answers.values() for n in v]
    functions = [n for n in names if callable(reference[n])]
    hard = _grade_env(zip_path, _replace_answers(reference, names, hard_coded=True))
    hard_score = sum(s for s, _ in hard.values())
    function_questions = {q for q, names in answers.items() if any(n in functions for n in names)}
    assert all(hard[q][0] == 0 for q in function_questions), f"{master.stem}: hard-coded answers score {hard}"

    wrong = _wrong_answers(master)
    assert set(wrong) == set(full), f"{master.stem}: wrong answers for {sorted(wrong)}, questions {sorted(full)}"
    for q, entries in wrong.items():
        assert len(entries) >= 3, f"{master.stem} {q}: list at least three plausible wrong answers"
    source = "\n\n".join(cells)
    # a question that uses another's answer (Part V's bound uses the variance of question 1)
    # may lose its points with it
    questions = _questions(nbformat.read(master, as_version=4))
    uses = {
        q: {
            p
            for p, names in answers.items()
            if p != q and any(re.search(rf"\b{n}\b", s) for s in questions[q]["solution"] for n in names)
        }
        for q in answers
    }
    for i in range(max(len(v) for v in wrong.values())):
        variant = list(cells)
        changed = []
        for q, entries in wrong.items():
            if i >= len(entries):
                continue
            entry = entries[i]
            hits = [k for k, c in enumerate(variant) if entry["replace"] in c]
            assert len(hits) == 1 and variant[hits[0]].count(entry["replace"]) == 1, (
                f"{master.stem} {q}: {entry['why']!r} must match the solution exactly once"
            )
            variant[hits[0]] = variant[hits[0]].replace(entry["replace"], entry["with"])
            changed.append(q)
        scores = _grade_env(zip_path, _execute(variant))
        for q, (score, possible) in scores.items():
            if q in changed:
                assert score == 0, f"{master.stem} {q}: the wrong answer {wrong[q][i]['why']!r} scores {score}"
            elif not uses[q] & set(changed):
                assert score == possible, f"{master.stem} {q}: scores {score} with its solution intact"
    assert source  # the solution notebook has code
    print(f"{master.stem}: constants 0/{total:g}, hard-coded {hard_score:g}/{total:g}")
    assert hard_score <= HARD_CODED_MAX * total, f"{master.stem}: hard-coded answers score {hard}"


# --------------------------------------------------------------------------------------------
# per-student parameters: every student's numbers are their own


def _per_student(master: Path) -> bool:
    nb = nbformat.read(master, as_version=4)
    return make_assignments.parameters_source(nb) is not None


def _per_student_questions(master: Path) -> set[str]:
    """The questions whose hidden test recomputes the answer from the notebook's ``STUDENT_ID``."""
    questions = _questions(nbformat.read(master, as_version=4))
    return {q for q, v in questions.items() if any("PARAMETERS(STUDENT_ID)" in h for h in v["hidden"])}


#: Questions with a number or an array for an answer that do not yet depend on the student id
#: (each is to be given per-student parameters; the test fails once one is and is not struck
#: off here).
NOT_YET_PER_STUDENT: dict[str, set[str]] = {}


def _with_id(cells: list[str], student_id: str) -> list[str]:
    out = [make_assignments.STUDENT_ID_LINE.sub(f'STUDENT_ID = "{student_id}"', c) for c in cells]
    assert sum(bool(make_assignments.STUDENT_ID_LINE.search(c)) for c in out) == 1
    return out


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_every_number_is_the_students_own(built, master):
    answers = _answer_names(master)
    solution_nb = nbformat.read(built / master.stem / "autograder" / master.name, as_version=4)
    cells = _code_cells(solution_nb)
    per_student = _per_student_questions(master)
    reference = _execute(cells)
    numeric = {q for q, names in answers.items() if any(not callable(reference[n]) for n in names)}
    assert numeric - per_student == NOT_YET_PER_STUDENT.get(master.stem, set()), master.stem
    if not per_student:
        return
    zip_path = _zip(built, master)
    envs = {sid: _execute(_with_id(cells, sid)) for sid in STUDENT_IDS}
    for sid, env in envs.items():  # the reference solution scores full marks whatever the id
        scores = _grade_env(zip_path, env)
        assert all(s == p > 0 for s, p in scores.values()), f"{master.stem}, id {sid!r}: {scores}"
    # a notebook whose answers were computed for a classmate's id scores 0 on every
    # per-student question (the other questions, asking for functions, keep their points)
    copied = dict(envs[STUDENT_IDS[0]], STUDENT_ID=STUDENT_IDS[1])
    scores = _grade_env(zip_path, copied)
    for q in per_student:
        assert scores[q][0] == 0, f"{master.stem} {q}: answers copied from another id score {scores[q]}"
    print(
        f"{master.stem}: copied answers {sum(s for s, _ in scores.values()):g}/{sum(p for _, p in scores.values()):g}"
    )


@pytest.mark.parametrize("master", [m for m in MASTERS if _per_student(m)], ids=lambda p: p.stem)
def test_parameters_need_an_id_and_differ_between_students(master) -> None:
    source = make_assignments.parameters_source(nbformat.read(master, as_version=4))
    assert source is not None
    env: dict[str, Any] = {}
    exec(compile(source, "<parameters>", "exec"), env)  # noqa: S102 - the master's own function
    parameters = env["parameters"]
    for bad in ("", "   ", None, ...):
        with pytest.raises(ValueError, match="STUDENT_ID"):
            parameters(bad)
    a, b = (parameters(sid) for sid in STUDENT_IDS)
    assert a == parameters(STUDENT_IDS[0])  # deterministic
    assert parameters(" " + STUDENT_IDS[0] + " ") == a  # stray spaces do not change the problem
    assert set(a) == set(b) and all(a[q] != b[q] for q in a), (a, b)
    # over a class of 60 students, no two share a question's parameters
    many = [parameters(f"s{k:07d}") for k in range(60)]
    for q in a:
        assert len({repr(p[q]) for p in many}) == 60, f"{master.stem} {q}: two students share parameters"
