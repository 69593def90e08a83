"""The claim mutations, run inside the nbval run: one execution of each chapter serves both.

With ``--claim-mutations`` (``make test-nbval`` passes it), just before nbval executes a
code cell, the ledger mutations planned for that cell (``scripts/mutate_claims.py``: the
claim cell's source with the paper's printed form, a perturbed constant or a weakened
implementation; for a mutation that reaches ``cells: k`` earlier cells, before the first of
them) run in the same kernel, each in a copy of the kernel's variables that is restored
afterwards, so that the real cell then computes exactly what it computes without them
(nbval compares its outputs with the stored ones, which proves it). A mutation that does
not flip its check (the mutated cell raises ``ClaimFailed`` for the claim, or prints
another verdict than the ledger's), a mutation that no longer applies, or a claim without
a mutation fails the cell's test. The summary counts the mutations that flipped.

With ``--student-check`` the same execution also checks each teaching page's student
notebook (``scripts/make_student.py``: solutions removed, an answer cell in place of each).
The student notebook agrees with the chapter up to the code cell where it first departs
from it, which nbval runs anyway; just before that cell, the student's cells from there on
run in a copy of the kernel's variables (as a mutation does), and any error fails the
cell's test: no cell may depend on a removed solution, and each answer cell must run
unanswered. The state is restored, and nbval's comparison of the chapter's real cells that
follow proves it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import make_student  # noqa: E402
import mutate_claims  # noqa: E402
import nbformat  # noqa: E402

#: seconds a mutation run may take (the slowest mutated claim cells take a few seconds)
MUTATION_TIMEOUT = 600
_plans: dict[str, dict] = {}


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--claim-mutations",
        action="store_true",
        default=False,
        help="run each claim's ledger mutations before its cell; each must flip the check",
    )
    parser.addoption(
        "--student-check",
        action="store_true",
        default=False,
        help="run each teaching page's student notebook from its first exercise on, in a "
        "copy of the kernel's state, before the chapter's cell where it departs",
    )


_students: dict[str, dict] = {}


def _student_plan(notebook: Path) -> dict:
    """Where the chapter's student notebook departs from it (code cell k), and its cells
    from there on; none for a reproduction page (it has no exercises)."""
    key = str(notebook)
    if key not in _students:
        plan = {"k": None, "sources": [], "problem": None}
        if not notebook.stem.endswith("_reproduction"):
            nb = nbformat.read(notebook, as_version=4)
            k, sources = make_student.student_suffix(nb)
            n_code = sum(c.cell_type == "code" for c in nb.cells)
            if not any(src.startswith("# Exercise ") for src in sources):
                plan["problem"] = "the student notebook has no answer cell"
            elif k >= n_code:
                plan["problem"] = (
                    "the student notebook departs after the chapter's last cell"
                )
            else:
                plan.update(k=k, sources=sources)
        _students[key] = plan
    return _students[key]


def _run_student_check(item) -> list[str]:
    """Run the student suffix in the kernel; the problems found (empty if it ran clean)."""
    plan = _student_plan(Path(str(item.parent.fspath)))
    if plan["problem"]:
        return [plan["problem"]] if item.cell_num == 0 else []
    if item.cell_num != plan["k"]:
        return []
    mplan = _plan(Path(str(item.parent.fspath)))
    if not mplan["runner"]:
        _execute(item, mutate_claims.RUNNER)
        mplan["runner"] = True
    _execute(item, make_student.STUDENT_RUNNER)
    said = [
        json.loads(line[len(make_student.STUDENT_MARK) :])
        for line in _execute(
            item, f"_run_student_suffix({plan['sources']!r})"
        ).splitlines()
        if line.startswith(make_student.STUDENT_MARK)
    ]
    item.user_properties.append(("student_check", 1))
    if len(said) != 1:
        return ["the student-notebook runner reported nothing"]
    if said[0]["error"]:
        return [f"student notebook, from its first exercise on: {said[0]['error']}"]
    return []


def _plan(notebook: Path) -> dict:
    key = str(notebook)
    if key not in _plans:
        entries = mutate_claims.load_mutations().get(notebook.stem, [])
        calls, planned, problems = mutate_claims.plan_calls(notebook.stem, entries)
        problems += [
            f"{e['id']}: no mutation in the ledger"
            for e in entries
            if not e.get("mutations")
        ]
        _plans[key] = {
            "calls": calls,
            "planned": planned,
            "problems": problems,
            "runner": False,
        }
    return _plans[key]


def _execute(item, code: str) -> str:
    """Run ``code`` in the notebook's kernel and return what it printed."""
    kernel = item.parent.kernel
    msg_id = kernel.execute_cell_input(code, allow_stdin=False)
    kernel.await_reply(msg_id, timeout=MUTATION_TIMEOUT)
    printed = []
    while True:
        msg = kernel.get_message(stream="iopub", timeout=MUTATION_TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            return "".join(printed)
        if kind == "stream":
            printed.append(content["text"])
        elif kind == "error":
            raise RuntimeError(
                f"mutation runner failed: {content['ename']}: {content['evalue']}"
            )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item) -> None:
    if type(item).__name__ != "IPyNbCell":
        return
    failures = []
    if item.config.getoption("--student-check"):
        failures += _run_student_check(item)
    if not item.config.getoption("--claim-mutations"):
        if failures:
            pytest.fail("\n  ".join(failures), pytrace=False)
        return
    plan = _plan(Path(str(item.parent.fspath)))
    if item.cell_num == 0:
        failures += plan["problems"]
    calls = plan["calls"].get(item.cell_num, [])
    results = []
    if calls:
        if not plan["runner"]:
            _execute(item, mutate_claims.RUNNER)
            plan["runner"] = True
        for call in calls:
            for line in _execute(item, call).splitlines():
                if line.startswith(mutate_claims.MARK):
                    results.append(json.loads(line[len(mutate_claims.MARK) :]))
        if len(results) != len(calls):
            failures.append(f"{len(calls)} mutations planned, {len(results)} reported")
    failures += [
        f"{r['id']} mutation {r['index']}: {r['outcome']} ({r['said']})"
        for r in results
        if r["outcome"] != "flipped"
    ]
    flipped = sum(r["outcome"] == "flipped" for r in results)
    item.user_properties.append(("claim_mutations", [len(calls), flipped]))
    if failures:
        pytest.fail("claim mutations:\n  " + "\n  ".join(failures), pytrace=False)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    planned = flipped = students = 0
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", []):
                if name == "claim_mutations":
                    planned += value[0]
                    flipped += value[1]
                elif name == "student_check":
                    students += value
    if config.getoption("--claim-mutations"):
        terminalreporter.write_line(
            f"claim mutations: {flipped}/{planned} flip their check"
        )
    if config.getoption("--student-check"):
        terminalreporter.write_line(
            f"student notebooks: {students} run from their first exercise on"
        )
