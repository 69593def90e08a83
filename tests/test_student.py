"""The student edition: no solution reaches the student, and a student notebook runs."""

import ast
import html
import os
import re
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
                # the label of each exercise directive (a cell may also hold other boxes)
                labels.update(re.findall(r"\{exercise\}[^\n]*\n(?::[a-z-]+:[^\n]*\n)*?:label:\s*(\S+)", cell.source))
        removed_labels.update(s["label"] for s in make_student.student_notebook(nb, keep_outputs=False)[1])
    assert labels and labels <= removed_labels, sorted(labels - removed_labels)


# The teaching pages and appendices, which carry the exercises (a reproduction page has none,
# and its execution is checked by nbval).
WITH_EXERCISES = [p for p in CHAPTERS if not p.stem.endswith("_reproduction")]


@pytest.mark.skipif(
    not os.environ.get("FEDFREQ_STUDENT_EXECUTE"),
    reason="make test checks every student notebook inside its nbval run (--student-check, "
    "notebooks/conftest.py); FEDFREQ_STUDENT_EXECUTE=1 executes each one on its own",
)
@pytest.mark.parametrize("path", WITH_EXERCISES, ids=lambda p: p.stem)
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


# Lines of the passing attempts the checkers' docstrings used to show: none may reach a student.
OLD_PASSING_SNIPPETS = (
    "C / (m * n * theta) * (s - m * n / 2)",
    "above = float(cpbm_decode([S], n=N, theta=theta_q, C=1.0, m=m_q)[0])",
    "check_clipped_poisson_inverse(clipped_poisson_mean_inverse",
    "check_hockey_stick(audit.hockey_stick)",
    "check_omission_estimate(0.5, W=10, sampling_rate=0.5, tau=5, trials=10)",
    "k = np.arange(-math.ceil(100 * t) - 60, math.ceil(100 * t) + 61 + sensitivity)",
    "l1, l2, d=d, sigma=sigma, C_max=C_max, s=s, epsilon_prime=epsilon_prime, rng=rng",
    "lp = deploy.discrete_laplace_logpmf(k, t)",
    "lq = deploy.discrete_laplace_logpmf(k - sensitivity, t)",
    "noisy = hbar + rng.laplace(0.0, C / epsilon, size=hbar.size)",
    "optimal_quantile(D=D, m=m, n=N * R, theta=theta)",
    "optimal_threshold(a, D=D, m=m, theta=theta)",
    "rand_clip(np.asarray(h)[None, :], C, rng=g)[0]",
    "range_decomposition(r, branching=b, levels=L)",
    "rdp_to_dp(o, r, d)[0]",
    "return C * math.exp(-eta * ((1.0 - above) - gamma))",
    "return audit.epsilon_lower_bound(k_p, n_p, k_q, n_q, delta=delta, confidence=confidence)",
    "return audit.hockey_stick(lp, lq, epsilon)",
    'return fq.histogram_prefix_counts(sums, encoding="dht", b=b, n=len(bins)) / len(bins)',
    "return gaussian_expected_loss(N, C, sigma=sigma)",
    "return gaussian_threshold(l1, l2, d=d, sigma=sigma)",
    "return kashin_representation(x, U, eta=eta, nu=nu, iterations=iterations, exact=False)",
    "return lam * stats.poisson.cdf(C - 2, lam) + C * stats.poisson.sf(C - 1, lam)",
    "return math.ceil(abs(math.log(C_star / C1)) / step)",
    "return np.where((Nbar > 0) & (noisy > t), noisy, 0.0)",
    "return rng.geometric(p, size) - rng.geometric(p, size)",
    "return sum(cpbm_error_terms(X, U, C, theta=theta, m=m, y=Y))",
    "return tffe_rdp(orders, n=n, D=D, b=b, theta=theta, m=m, theta_q=theta_q, m_q=m_q, rule=rule)",
    'rule = "changed" if changed else "all"',
    "step = eta * (gamma if C1 < C_star else 1.0 - gamma)",
    "sums = fq.cpbm_sum_mechanism(m=m, theta=theta)(u, rng)",
    "t = unbounded_threshold(C, epsilon=epsilon, delta=delta)",
    'u = fq.histogram_user_vectors(bins, encoding="dht", b=b)',
)


def _forbidden():
    """Lines of the chapters' solutions (and the old passing snippets) a student must not see.

    Left out: a function's signature (part of the exercise's statement), import lines, and
    lines the student edition itself shows outside the solutions (a seeded generator, a
    plotting call): those are not answers."""
    lines = set(OLD_PASSING_SNIPPETS)
    visible = []
    for path in CHAPTERS:
        student, removed = make_student.student_notebook(nbformat.read(path, as_version=4), keep_outputs=False)
        lines |= _solution_lines(removed)
        visible.extend(cell.source for cell in student.cells)
    shown = "\n".join(visible)
    shown += "\n" + shown.replace("`", "")  # as the rendered text shows inline code
    return {line for line in lines if not line.startswith(("def ", "import ", "from ")) and line not in shown}


def _leaks(text, forbidden):
    """The forbidden lines found in ``text``, also once HTML tags (syntax highlighting splits a
    line of code into many spans) are stripped, entities decoded and blanks folded."""
    plain = html.unescape(text)
    stripped = " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())
    return sorted(line for line in forbidden if line in text or line in plain or " ".join(line.split()) in stripped)


def test_help_of_every_checker_shows_no_answer():
    """What a student reads with help(check_...): no solution line, no passing attempt."""
    import pydoc

    from fedfreq import exercises

    forbidden = _forbidden()
    for name in exercises.__all__:
        page = pydoc.render_doc(getattr(exercises, name), renderer=pydoc.plaintext)
        assert not _leaks(page, forbidden), f"help({name}) shows: {_leaks(page, forbidden)[:3]}"
        if name.startswith("check_"):
            assert "PASS:" not in page and ".passed\n    True" not in page, name


def test_the_api_page_of_the_checkers_renders_only_their_docstrings():
    page = (ROOT / "book" / "api" / "exercises.md").read_text()
    assert not _leaks(page, _forbidden())


STUDENT_SITE = ROOT / "_build" / "student" / "_build" / "html"


def test_the_built_student_site_shows_no_answer():
    """Every page of the student site and its search index (built by make student)."""
    if not STUDENT_SITE.is_dir():
        assert not os.environ.get("FEDFREQ_REQUIRE_BUILDS"), f"{STUDENT_SITE} is missing"
        pytest.skip(
            f"the student site is not built ({STUDENT_SITE.relative_to(ROOT)} is missing; make student builds it)"
        )
    forbidden = _forbidden()
    files = [*STUDENT_SITE.rglob("*.html"), *STUDENT_SITE.rglob("searchindex.js")]
    assert files
    for path in files:
        found = _leaks(path.read_text(errors="replace"), forbidden)
        assert not found, f"{path.relative_to(ROOT)}: {found[:3]}"


def test_the_built_assignments_hand_out_no_answer():
    """The student side of every built assignment archive (make assignments), if built."""
    if os.environ.get("FEDFREQ_ASSIGNMENTS_OUT") and not os.environ.get("FEDFREQ_REQUIRE_BUILDS"):
        # the unit tests are building _build/assignments right now (tests/test_assignments.py);
        # make test-handouts scans that build once it is complete
        pytest.skip("the assignments are being built by this session; test-handouts scans them")
    sides = sorted((ROOT / "_build" / "assignments").glob("*/student"))
    if not sides:
        assert not os.environ.get("FEDFREQ_REQUIRE_BUILDS"), "no built assignment under _build/assignments"
        pytest.skip("no assignment is built (_build/assignments/*/student is missing; make assignments builds them)")
    forbidden = _forbidden()
    for side in sides:
        for path in side.rglob("*"):
            if path.is_file() and path.suffix in {".ipynb", ".md", ".py", ".txt", ".html", ".json"}:
                found = _leaks(path.read_text(errors="replace"), forbidden)
                assert not found, f"{path.relative_to(ROOT)}: {found[:3]}"


def _tiny_chapter(later: str) -> nbformat.NotebookNode:
    """A chapter with one exercise, whose solution defines ``answer``, and a later cell."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    return nbformat.v4.new_notebook(
        cells=[
            code("import numpy as np\nrng = np.random.default_rng(1)\nvalues = [1, 2]"),
            md(":::{exercise} Core: a sum\n:label: ex-tiny\n\nAdd the values.\n:::"),
            md("```{solution-start} ex-tiny\n:class: dropdown\n```"),
            code("answer = sum(values)\nvalues.append(answer)"),
            md("```{solution-end}\n```"),
            code(later),
        ]
    )


def _run_suffix_in_a_kernel(chapter: nbformat.NotebookNode) -> tuple[dict, str]:
    """Run the chapter's cells before its first departure, then the student runner, as the
    nbval run does; return what the runner said and the state the kernel kept."""
    import json

    import mutate_claims

    k, sources = make_student.student_suffix(chapter)
    prefix = [c.source for c in chapter.cells if c.cell_type == "code"][:k]
    cells = [
        *prefix,
        mutate_claims.RUNNER,
        make_student.STUDENT_RUNNER,
        f"_run_student_suffix({sources!r})",
        "print(sorted(k for k in globals() if k in ('answer', 'values')), values)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    said = [o["text"] for o in nb.cells[-2].outputs if o.get("name") == "stdout"]
    (line,) = [ln for text in said for ln in text.splitlines() if ln.startswith(make_student.STUDENT_MARK)]
    state = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    return json.loads(line[len(make_student.STUDENT_MARK) :]), state


def test_the_student_check_runs_the_handed_out_cells_and_restores_the_state():
    chapter = _tiny_chapter("total = sum(values)")
    k, sources = make_student.student_suffix(chapter)
    assert k == 1 and sources[0].startswith("# Exercise ex-tiny") and sources[-1] == "total = sum(values)"
    said, state = _run_suffix_in_a_kernel(chapter)
    assert said == {"cells": 2, "error": None}
    assert state.strip() == "['values'] [1, 2]"  # nothing of the run is left behind


def test_the_student_check_catches_a_cell_that_needs_a_removed_solution():
    said, state = _run_suffix_in_a_kernel(_tiny_chapter("print(answer + 1)"))
    assert said["cells"] == 2 and "NameError" in said["error"] and "answer" in said["error"]
    assert state.strip() == "['values'] [1, 2]"
