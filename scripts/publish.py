#!/usr/bin/env python3
"""Publish the built site: commit ``_build/html`` to a ``gh-pages`` branch and push it.

Usage (``make publish`` runs this after ``make book`` or ``make book-stored``)::

    .venv/bin/python scripts/publish.py _build/html --remote origin --branch gh-pages

The site's files become the only content of the branch (one commit on top of the
branch's history, made by ``ghp-import``), with a ``.nojekyll`` file so that GitHub
Pages serves the ``_static`` and ``_images`` folders, then the branch is pushed to the
remote. Before anything is committed the site is checked: it must have an
``index.html``, the search index and the claims ledger page, and every page must be
addressed by a relative link, so that the site works under the sub-path a project page
is served from (``https://<owner>.github.io/<repository>/``).

``--repo`` names the git repository to commit in (default: this one), which is how the
tests publish into a throw-away repository with a local bare remote.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Files a complete build of the book has.
REQUIRED = ("index.html", "searchindex.js", "book/claims_ledger.html")
#: An attribute that addresses a file by an absolute path on the host (breaks under a sub-path).
_ROOT_ABSOLUTE = re.compile(r"""(?:href|src)=["']/(?!/)""")


def check_site(site: Path) -> list[str]:
    """What keeps ``site`` from being published (empty when it can be)."""
    if not site.is_dir():
        return [f"{site} is not a directory (build the site first: make book)"]
    problems = [f"{site / name} is missing" for name in REQUIRED if not (site / name).is_file()]
    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0].startswith("_"):
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        if _ROOT_ABSOLUTE.search(text):
            problems.append(f"{page.relative_to(site)} links to a root-absolute path (breaks under a sub-path)")
    return problems


def publish(site: Path, *, remote: str, branch: str, repo: Path, message: str, push: bool = True) -> None:
    """Commit ``site`` as the content of ``branch`` in ``repo`` and push it to ``remote``."""
    from ghp_import import GhpError, ghp_import

    problems = check_site(site)
    if problems:
        raise SystemExit("publish: the site is not ready:\n  " + "\n  ".join(problems))
    cwd = Path.cwd()
    try:
        os.chdir(repo)
        ghp_import(str(site.resolve()), remote=remote, branch=branch, mesg=message, push=push, nojekyll=True)
    except GhpError as exc:
        raise SystemExit(f"publish: {exc}") from exc
    finally:
        os.chdir(cwd)


def _default_message(repo: Path) -> str:
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "an unknown commit"
    from importlib.metadata import PackageNotFoundError, version

    try:
        edition = version("fedfreq")
    except PackageNotFoundError:
        edition = "unknown"
    return f"Site of edition {edition}, built from {commit}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", type=Path, help="the built site, e.g. _build/html")
    ap.add_argument("--remote", default="origin", help="git remote to push to (default: origin)")
    ap.add_argument("--branch", default="gh-pages", help="branch that holds the site (default: gh-pages)")
    ap.add_argument("--repo", type=Path, default=ROOT, help="git repository to commit in (default: this one)")
    ap.add_argument("--message", default=None, help="commit message (default: the edition and the source commit)")
    ap.add_argument("--no-push", action="store_true", help="commit to the branch but do not push")
    args = ap.parse_args(argv)
    message = args.message or _default_message(args.repo)
    publish(args.site, remote=args.remote, branch=args.branch, repo=args.repo, message=message, push=not args.no_push)
    where = "committed" if args.no_push else f"pushed to {args.remote}"
    print(f"publish: {args.site} {where} as branch {args.branch} ({message})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
