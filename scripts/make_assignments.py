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

Unless ``--no-run-tests`` is given, ``otter assign`` also grades the solutions with the
full tests and fails if they do not get full marks. ``tests/test_assignments.py`` builds
every assignment into a temporary directory and grades the solutions (full marks) and the
blank student notebook (zero, executed without errors).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "book" / "assignments"
OUT = ROOT / "_build" / "assignments"


def masters() -> list[Path]:
    """The master notebooks, in the order of the book's parts."""
    return sorted(MASTERS.glob("part*.ipynb"))


def otter_command() -> list[str]:
    """The ``otter`` command line of the running interpreter's environment."""
    exe = Path(sys.executable).with_name("otter")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "otter"]


def assign(master: Path, dest: Path, *, run_tests: bool = True) -> Path:
    """Run ``otter assign`` on ``master`` into ``dest``; return the path of ``autograder.zip``.

    otter names the zip after the master and a timestamp; it is renamed to
    ``autograder.zip`` so that the grading command is the same for every assignment.
    """
    if dest.exists():
        shutil.rmtree(dest)
    cmd = [*otter_command(), "assign", str(master), str(dest)]
    if not run_tests:
        cmd.append("--no-run-tests")
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONWARNINGS="ignore::UserWarning")
    proc = subprocess.run(cmd, cwd=master.parent, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"otter assign failed on {master.name}:\n{proc.stdout}\n{proc.stderr}")
    zips = sorted((dest / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"expected one autograder zip in {dest / 'autograder'}, found {zips}")
    target = dest / "autograder" / "autograder.zip"
    zips[0].rename(target)
    return target


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

    def build(master: Path) -> str:
        zip_path = assign(master, args.out / master.stem, run_tests=not args.no_run_tests)
        return f"{master.stem}: {zip_path.relative_to(args.out)} and student/{master.name}"

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for line in pool.map(build, todo):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
