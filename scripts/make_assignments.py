"""Build the autograded assignments (otter-grader) from their master notebooks.

Usage::

    python scripts/make_assignments.py                  # every master into _build/assignments/
    python scripts/make_assignments.py part3_sketching  # one assignment
    python scripts/make_assignments.py --no-run-tests   # skip otter's solution check
    make assignments

The masters are ``book/assignments/partN_*.ipynb``, one per part of the book, in the
Otter Assign format: an ``# ASSIGNMENT CONFIG`` raw cell, then for every question a
``# BEGIN QUESTION`` block with the prompt, the solution (``# BEGIN SOLUTION`` /
``# SOLUTION`` markers) and public and hidden tests (``# BEGIN TESTS``, hidden ones
starting with ``# HIDDEN``). For each master ``otter assign`` writes

* ``_build/assignments/<name>/student/<name>.ipynb``: the notebook to hand out, with the
  solutions replaced by ``...`` and only the public tests (``grader.check("q1")``);
* ``_build/assignments/<name>/autograder/``: the notebook with solutions, and
  ``autograder.zip``, the autograder with every test (public and hidden), to grade locally
  with ``otter run -a autograder.zip submission.ipynb`` or to upload to Gradescope.

The archive grades where courses grade. Before ``otter assign`` runs, the master is copied
into a staging folder together with the package's wheel (built once per run from a copy of
the sources), and its configuration gains what a grading service needs: Python 3.11, the
wheel as an autograder file, and the pinned requirements (every distribution the grading
environment needs, at the versions of ``requirements.txt``) in place of otter's defaults.
So ``autograder.zip`` holds

* ``environment.yml``: the conda environment Gradescope's ``setup.sh`` builds: ``python=3.11``
  and the pinned pip requirements, the wheel as ``/autograder/source/files/<wheel>``;
* ``requirements.txt``: the same pip requirements for any other service or a local virtualenv,
  the wheel as ``./files/<wheel>`` (install from the unzipped archive's folder);
* ``files/<wheel>``, the tests (``tests/q*.py``) and otter's own ``run_autograder``,
  ``run_otter.py`` and ``otter_config.json``.

Every student works on parameters of their own. The setup cell of a master sets
``STUDENT_ID`` (a sample id in the master and the notebook with solutions, ``""`` in the
student notebook, where the student writes their id from the course roster) and defines
``parameters(student_id)``, which hashes the id into a seed and draws from it every
question's sizes, epsilons and seeds. Hidden tests recompute the expected answers from the
notebook's ``STUDENT_ID`` with the master's own ``parameters`` function: a hidden test line
``_P = PARAMETERS(STUDENT_ID)`` is replaced, in the staged copy, by that function's source
(renamed ``_parameters``), so that a student who redefines ``parameters`` cannot change
what the tests expect, and answers copied from a classmate (computed for another id) fail.
The instructor checks that each submission's ``STUDENT_ID`` is its author's.

Unless ``--no-run-tests`` is given, ``otter assign`` also grades the solutions with the
full tests and fails if they do not get full marks. ``tests/test_assignments.py`` grades
every archive from the archive alone, in a fresh virtualenv, and checks that the tests
fail constant, copied and wrong answers.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "book" / "assignments"
OUT = ROOT / "_build" / "assignments"
#: The Python of the grading environment (fedfreq needs 3.11 or later).
PYTHON_VERSION = "3.11"
#: What the grading environment imports beyond the package: otter and the kernel it runs
#: the notebook in (the tests import numpy, scipy and fedfreq only).
GRADING_REQUIREMENTS = ("fedfreq", "otter-grader", "ipykernel", "nbconvert", "nbformat", "jupyter_client", "dill")
#: otter's autograder folder on Gradescope (``autograder_dir`` of ``otter_config.json``).
AUTOGRADER_DIR = "/autograder"
STUDENT_ID_LINE = re.compile(r'^STUDENT_ID = "[^"\n]*"$', re.MULTILINE)
PARAMETERS_LINE = re.compile(r"^(?P<indent>\s*)_P = PARAMETERS\(STUDENT_ID\)\s*$", re.MULTILINE)


def _wheel_module():
    """``scripts/wheel.py`` (loaded by path: the name ``wheel`` is also a distribution)."""
    spec = importlib.util.spec_from_file_location("fedfreq_wheel", Path(__file__).with_name("wheel.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_wheel(dest: Path) -> Path:
    """The package's wheel, built from a copy of its sources into ``dest``."""
    return Path(_wheel_module().build_wheel(dest))


def pinned_requirements() -> dict[str, str]:
    """Every distribution of the grading environment but fedfreq, pinned as in ``requirements.txt``."""
    return dict(_wheel_module().pinned_closure(list(GRADING_REQUIREMENTS)))


def requirement_lines(wheel_path: str) -> list[str]:
    """The pip requirements of the grading environment: the wheel, then the pins."""
    return [wheel_path, *(f"{name}=={version}" for name, version in pinned_requirements().items())]


def parameters_source(nb) -> str | None:
    """The source of the master's ``parameters`` function (in its setup cell), if any."""
    for cell in nb.cells:
        if cell.cell_type != "code" or "def parameters(" not in cell.source:
            continue
        tree = ast.parse(cell.source)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "parameters":
                return ast.get_source_segment(cell.source, node)
    return None


def stage(master: Path, staging: Path, wheel: Path) -> Path:
    """Copy ``master`` into ``staging`` with the grading environment in its configuration."""
    nb = nbformat.read(master, as_version=4)
    shutil.copy2(wheel, staging / wheel.name)
    lines = requirement_lines(f"{AUTOGRADER_DIR}/source/files/{wheel.name}")
    (staging / "requirements.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    source = parameters_source(nb)
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.lstrip().startswith("# ASSIGNMENT CONFIG"):
            config = yaml.safe_load(cell.source)
            config.update(
                python_version=PYTHON_VERSION,
                requirements="requirements.txt",
                overwrite_requirements=True,
                autograder_files=[wheel.name],
            )
            cell.source = "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)
        elif cell.cell_type == "code" and PARAMETERS_LINE.search(cell.source):
            if source is None:
                raise RuntimeError(f"{master.name}: a test recomputes the parameters but there is no parameters()")
            renamed = source.replace("def parameters(", "def _parameters(", 1)

            def expand(m: re.Match[str], renamed: str = renamed) -> str:
                indent = m.group("indent")
                body = "\n".join(indent + line if line else line for line in renamed.splitlines())
                return f"{body}\n{indent}_P = _parameters(STUDENT_ID)"

            cell.source = PARAMETERS_LINE.sub(expand, cell.source)
    target = staging / master.name
    nbformat.write(nb, target)
    return target


def blank_student_id(notebook: Path) -> None:
    """Empty the sample ``STUDENT_ID`` of a notebook (the student writes their own)."""
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and STUDENT_ID_LINE.search(cell.source):
            cell.source = STUDENT_ID_LINE.sub('STUDENT_ID = ""', cell.source)
    nbformat.write(nb, notebook)


def set_student_id(notebook: Path, student_id: str, dest: Path) -> Path:
    """A copy of ``notebook`` at ``dest`` whose ``STUDENT_ID`` is ``student_id``."""
    nb = nbformat.read(notebook, as_version=4)
    hits = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and STUDENT_ID_LINE.search(cell.source):
            cell.source = STUDENT_ID_LINE.sub(f"STUDENT_ID = {json.dumps(student_id)}", cell.source)
            hits += 1
    if hits != 1:
        raise RuntimeError(f"{notebook.name}: {hits} STUDENT_ID lines, expected one")
    nbformat.write(nb, dest)
    return dest


def add_local_requirements(zip_path: Path, wheel: Path) -> None:
    """Add ``requirements.txt`` (the wheel as ``./files/<wheel>``) at the root of the archive."""
    lines = requirement_lines(f"./files/{wheel.name}")
    head = (
        f"# The grading environment: Python >= {PYTHON_VERSION}, then, from the unzipped archive's folder,\n"
        "#   python -m pip install -r requirements.txt\n"
    )
    with zipfile.ZipFile(zip_path, "a") as zf:
        zf.writestr("requirements.txt", head + "\n".join(lines) + "\n")


def masters() -> list[Path]:
    """The master notebooks, in the order of the book's parts."""
    return sorted(MASTERS.glob("part*.ipynb"))


def otter_command() -> list[str]:
    """The ``otter`` command line of the running interpreter's environment."""
    exe = Path(sys.executable).with_name("otter")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "otter"]


def assign(master: Path, dest: Path, *, wheel: Path | None = None, run_tests: bool = True) -> Path:
    """Run ``otter assign`` on a staged copy of ``master`` into ``dest``; return ``autograder.zip``.

    ``wheel`` is the package's wheel to ship (built here if not given). otter names the zip
    after the master and a timestamp; it is renamed to ``autograder.zip`` so that the
    grading command is the same for every assignment.
    """
    dest = dest.resolve()
    if dest.exists():
        shutil.rmtree(dest)
    with tempfile.TemporaryDirectory(prefix="fedfreq-assign-") as tmp:
        staging = Path(tmp)
        if wheel is None:
            wheel = build_wheel(staging / "dist")
        staged = stage(master, staging, wheel)
        cmd = [*otter_command(), "assign", str(staged), str(dest)]
        if not run_tests:
            cmd.append("--no-run-tests")
        env = dict(os.environ, PYTHONHASHSEED="0", PYTHONWARNINGS="ignore::UserWarning")
        proc = subprocess.run(cmd, cwd=staging, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"otter assign failed on {master.name}:\n{proc.stdout}\n{proc.stderr}")
    zips = sorted((dest / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"expected one autograder zip in {dest / 'autograder'}, found {zips}")
    target = dest / "autograder" / "autograder.zip"
    zips[0].rename(target)
    add_local_requirements(target, wheel)
    blank_student_id(dest / "student" / master.name)
    for extra in (dest / "autograder" / wheel.name, dest / "autograder" / "requirements.txt"):
        extra.unlink(missing_ok=True)  # copies otter leaves beside the archive; the archive holds them
    return target


def archive_setup(zip_path: Path) -> dict[str, object]:
    """What an archive asks of the grading environment: its Python, and its pip requirements
    from ``environment.yml`` and from ``requirements.txt`` (the wheel's path put aside)."""
    with zipfile.ZipFile(zip_path) as zf:
        env = yaml.safe_load(zf.read("environment.yml"))
        local = [
            line.strip()
            for line in zf.read("requirements.txt").decode().splitlines()
            if line.strip() and not line.startswith("#")
        ]
        config = json.loads(zf.read("otter_config.json"))
        names = zf.namelist()
    python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python=")]
    conda_pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return {
        "python": python,
        "conda_pip": conda_pip,
        "requirements": local,
        "config": config,
        "names": names,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="assignments to build (default: all), e.g. part1_foundations")
    parser.add_argument("--out", type=Path, default=OUT, help="output directory (default: _build/assignments)")
    parser.add_argument("--no-run-tests", action="store_true", help="do not grade the solutions while assigning")
    parser.add_argument("--jobs", type=int, default=2, help="assignments built in parallel (default: 2)")
    args = parser.parse_args(argv)

    todo = masters()
    if args.names:
        known = {m.stem: m for m in todo}
        unknown = [n for n in args.names if n not in known]
        if unknown:
            parser.error(f"unknown assignment(s) {unknown}; known: {sorted(known)}")
        todo = [known[n] for n in args.names]

    out = args.out.resolve()
    with tempfile.TemporaryDirectory(prefix="fedfreq-wheel-") as tmp:
        wheel = build_wheel(Path(tmp))

        def build(master: Path) -> str:
            zip_path = assign(master, out / master.stem, wheel=wheel, run_tests=not args.no_run_tests)
            return f"{master.stem}: {zip_path.relative_to(out)} and student/{master.name}"

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for line in pool.map(build, todo):
                print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
