"""Format and lint the code cells of the chapters' MyST sources with ruff.

The chapters are authored as ``notebooks/NN_name.md``; ruff reads notebooks, not MyST
markdown. This script writes each chapter's code cells to a temporary ``.ipynb`` (with
jupytext, whose round trip of these files is exact), runs ``ruff check --fix`` (the safe
fixes: unused imports, import order) and ``ruff format`` on it with the rules of
``notebooks/ruff.toml`` (88 characters), and writes the formatted code back into the
``.md``, leaving every markdown cell and cell option untouched. It then lints the
formatted cells with every rule of the package (``ruff check``) and lists what remains,
by chapter, code cell and line.

It also folds the verification: every claim cell (a code cell that calls
``check_claim``) gets the tag ``hide-input``, so that the page shows its one-line
verdict and its code is one click away.

Usage::

    python scripts/format_chapters.py            # format every chapter in place
    python scripts/format_chapters.py --check    # exit 1 if a chapter would change or
                                                 # its code cells break a lint rule

After formatting, re-execute the changed chapters (``make notebooks NB=...``) so that the
stored notebooks carry the same sources.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import jupytext

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"


#: Tags under which a cell's code is already hidden or removed.
FOLDED = {"hide-input", "hide-cell", "remove-input", "remove-cell"}


def fold_claim_cell(cell) -> None:
    """Give a claim cell the ``hide-input`` tag (unless its code is already folded)."""
    if "check_claim(" not in cell.source:
        return
    tags = list(cell.metadata.get("tags", []))
    if not FOLDED & set(tags):
        cell.metadata["tags"] = [*tags, "hide-input"]


def format_sources(paths: list[Path]) -> tuple[dict[Path, str], list[str]]:
    """Formatted text of each chapter source (unchanged text if nothing changes), and
    the lint findings that remain in the formatted code cells."""
    out: dict[Path, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        config = (NB_DIR / "ruff.toml").read_text().replace('"../pyproject.toml"', f'"{ROOT / "pyproject.toml"}"')
        (work / "ruff.toml").write_text(config)
        for p in paths:
            jupytext.write(jupytext.read(p), work / f"{p.stem}.ipynb")
        ruff = [sys.executable, "-m", "ruff"]
        fixes = ["check", "--fix", "--select", "F401,I001", "--quiet", "--exit-zero", str(work)]
        subprocess.run([*ruff, *fixes], check=True)
        subprocess.run([*ruff, "format", "--quiet", str(work)], check=True)
        lint = subprocess.run(
            [*ruff, "check", "--output-format", "concise", "--quiet", "--exit-zero", str(work)],
            check=True,
            capture_output=True,
            text=True,
        )
        findings = [
            "notebooks/" + line.replace(f"{work}/", "").replace(".ipynb:", ".md: code ", 1)
            for line in lint.stdout.splitlines()
            if line.strip()
        ]
        for p in paths:
            original = jupytext.read(p)
            formatted = jupytext.read(work / f"{p.stem}.ipynb")
            for cell, new in zip(original.cells, formatted.cells, strict=True):
                if cell.cell_type == "code":
                    cell.source = new.source.rstrip("\n")
                    fold_claim_cell(cell)
            out[p] = jupytext.writes(original, fmt="md:myst")
    return out, findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="chapter stems (default: all)")
    parser.add_argument("--check", action="store_true", help="report chapters that would change; change nothing")
    args = parser.parse_args(argv)
    paths = [p.md for p in layout.pages()]
    if args.names:
        paths = [p for p in paths if p.stem in set(args.names)]
    changed = []
    texts, findings = format_sources(paths)
    for line in findings:
        print(line)
    for p, text in texts.items():
        if text != p.read_text():
            changed.append(p.stem)
            if not args.check:
                p.write_text(text)
    if args.check and (changed or findings):
        if changed:
            print("chapters whose code cells need formatting:", ", ".join(changed))
        if findings:
            print(f"{len(findings)} lint finding(s) in the chapters' code cells (listed above)")
        return 1
    print(("would reformat: " if args.check else "reformatted: ") + (", ".join(changed) or "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
