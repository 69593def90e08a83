#!/usr/bin/env python3
"""Keep each chapter's install cell in step with the package: the cell that lets a chapter
run top to bottom on a fresh Colab or JupyterHub kernel.

Every chapter (``notebooks/NN_name.md``) has, just before its first code cell, a cell tagged
``install-fedfreq`` that installs the package from the package index when it is missing,
pinned to the book's edition (the version in ``pyproject.toml``) with the extras the chapter
needs (``book``; ``book,deploy`` for a chapter that imports OpenDP). Where ``fedfreq`` is
installed (``make``, a laptop, a grading environment) the cell does nothing and prints
nothing. The cell is removed from the built site (``remove-cell``): a reader of the page does
not need it; a reader of the downloaded or launched notebook does.

Usage::

    python scripts/install_cell.py          # write the cells into the chapter sources
    python scripts/install_cell.py --check  # exit 1 if a chapter's cell is missing or stale

The stored ``.ipynb`` get the cell when the chapters are next executed (``make notebooks``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
TAG = "install-fedfreq"
CELL_RE = re.compile(r"```\{code-cell\} ipython3\n:tags: \[[^\]]*\b" + TAG + r"\b[^\]]*\]\n.*?\n```\n\n", re.S)
FIRST_CODE_RE = re.compile(r"^```\{code-cell\}", re.M)


def edition() -> str:
    """The version in ``pyproject.toml`` (the book's edition)."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return str(tomllib.load(fh)["project"]["version"])


def extras_for(source: str) -> str:
    """The extras a chapter needs: ``book``, plus ``deploy`` if it imports OpenDP."""
    return "book,deploy" if re.search(r"^\s*import opendp", source, re.M) else "book"


def requirement(source: str, version: str | None = None) -> str:
    """The requirement the install cell of a chapter with this ``source`` installs."""
    return f"fedfreq[{extras_for(source)}]=={version or edition()}"


def install_cell(source: str, version: str | None = None) -> str:
    """The install cell (MyST markdown) for a chapter with this ``source``."""
    return (
        "```{code-cell} ipython3\n"
        f":tags: [remove-cell, {TAG}]\n"
        "\n"
        "# On Colab, a JupyterHub or any fresh kernel: install the book's package if missing.\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        'if importlib.util.find_spec("fedfreq") is None:\n'
        '    pip = [sys.executable, "-m", "pip", "install", "--quiet"]\n'
        f'    subprocess.run([*pip, "{requirement(source, version)}"], check=True)\n'
        "    importlib.invalidate_caches()\n"
        "```\n"
        "\n"
    )


def synced(source: str, version: str | None = None) -> str:
    """``source`` with its install cell present and current."""
    without = CELL_RE.sub("", source)
    first = FIRST_CODE_RE.search(without)
    if first is None:
        return source
    cell = install_cell(without, version)
    return without[: first.start()] + cell + without[first.start() :]


def chapters() -> list[Path]:
    return [p.md for p in layout.pages()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report stale cells instead of writing")
    args = ap.parse_args(argv)
    stale = []
    for path in chapters():
        text = path.read_text(encoding="utf-8")
        new = synced(text)
        if new != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "updated"
    names = f": {', '.join(stale)}" if stale else ""
    print(f"install cells: {len(chapters())} chapters, {len(stale)} {verb}{names}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
