"""Re-run the check of one ledger claim and print its verdict, evidence and time.

Usage::

    python scripts/verify_claim.py S1-P2.1
    FEDFREQ_SCALE=full python scripts/verify_claim.py S1-P2.1   # at the papers' scale
    make verify CLAIM=S1-P2.1

The ledger entry (``book/claims/<chapter>.yml``) names the chapter; the script finds the
code cell of that chapter that calls ``check_claim`` with the id, executes the chapter in
a fresh kernel from its first cell up to and including that cell (everything the check can
depend on, and nothing after it), and prints the cell's output: the verdict line and its
evidence, or the failure. The exit status is 0 when the claim's check passes, 1 when it
fails, 2 for an unknown id.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import yaml
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import layout  # noqa: E402

NB_DIR = ROOT / "notebooks"
CLAIMS_DIR = ROOT / "book" / "claims"


def find_claim(claim_id: str) -> tuple[str, dict]:
    """Return (chapter stem, ledger entry) of ``claim_id``."""
    for path in sorted(CLAIMS_DIR.glob("*.yml")):
        data = yaml.safe_load(path.read_text()) or {}
        for entry in data.get("claims", []):
            if entry.get("id") == claim_id:
                return path.stem, entry
    raise KeyError(claim_id)


def claim_cell_index(nb: nbformat.NotebookNode, claim_id: str) -> int:
    """Index of the code cell that calls ``check_claim`` with ``claim_id``."""
    pattern = re.compile(r"check_claim\(\s*[\"']" + re.escape(claim_id) + r"[\"']")
    hits = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and pattern.search(c.source)]
    if len(hits) != 1:
        raise LookupError(f"{claim_id}: expected one claim cell, found {len(hits)}")
    return hits[0]


def cell_text(cell: nbformat.NotebookNode) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out["text"])
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
        elif out.get("output_type") == "error":
            parts.append(f"{out['ename']}: {out['evalue']}")
    return "".join(parts).rstrip()


def verify(claim_id: str) -> int:
    try:
        chapter, entry = find_claim(claim_id)
    except KeyError:
        print(f"unknown claim id {claim_id!r}; the ids are listed in book/claims/*.yml", file=sys.stderr)
        return 2
    # the claim cell sits on the chapter's teaching page or on its reproduction page
    for page in layout.chapter_pages(chapter):
        nb = jupytext.read(page.md)
        try:
            idx = claim_cell_index(nb, claim_id)
        except LookupError:
            continue
        chapter = page.stem
        break
    else:
        idx = claim_cell_index(jupytext.read(NB_DIR / f"{chapter}.md"), claim_id)
    nb.cells = nb.cells[: idx + 1]
    scale = os.environ.get("FEDFREQ_SCALE", "default")
    print(f"{claim_id} ({entry.get('source', '')})")
    print(f"  chapter {chapter}, cells 1-{idx + 1} of the chapter, scale {scale}")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    client = NotebookClient(
        nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(NB_DIR)}}, allow_errors=False
    )
    start = time.perf_counter()
    failed = False
    try:
        client.execute()
    except CellExecutionError:
        failed = True
    seconds = time.perf_counter() - start
    executed = [c for c in nb.cells if c.cell_type == "code" and c.get("outputs")]
    last = nb.cells[idx]
    if failed and not last.get("outputs"):
        # the failure happened before the claim cell
        bad = next(c for c in executed if any(o.get("output_type") == "error" for o in c.outputs))
        print(f"  an earlier cell failed:\n{cell_text(bad)}")
    else:
        text = cell_text(last)
        lines = [ln for ln in text.splitlines() if ln.startswith(claim_id) or "ClaimFailed" in ln]
        print("  " + ("\n  ".join(lines) if lines else text))
    print(f"  ledger verdict: {entry.get('verdict')}; time {seconds:.1f} s")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("claim", help="ledger id, e.g. S0-L3")
    args = parser.parse_args(argv)
    return verify(args.claim)


if __name__ == "__main__":
    sys.exit(main())
