"""Execute the chapter notebooks and store their outputs.

Each chapter is authored as a MyST-markdown notebook ``notebooks/NN_name.md``
(readable diffs); this script converts it to ``notebooks/NN_name.ipynb``,
executes it in a fresh kernel with ``notebooks/`` as working directory, strips
volatile metadata and writes it back with outputs. nbval later re-executes the
``.ipynb`` and compares against these stored outputs.

Usage::

    python scripts/execute_notebooks.py                # every chapter
    python scripts/execute_notebooks.py 01_foundations  # one chapter
    FEDFREQ_SCALE=full python scripts/execute_notebooks.py --output-dir _build/full

At ``FEDFREQ_SCALE=full`` the outputs differ from the stored ones, so an output
directory outside ``notebooks/`` is required.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from numeric_env import numeric_environment  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
TIMES = NB_DIR / "execution_times.json"
BUDGET_SECONDS = 45
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def to_notebook(md_path: Path) -> nbformat.NotebookNode:
    nb = jupytext.read(md_path)
    nb.metadata = {
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python"},
    }
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def merge_streams(outputs: list) -> list:
    """Join consecutive chunks of one stream: how a kernel splits its output into
    messages depends on timing, so unmerged chunks would change from run to run."""
    merged: list = []
    for out in outputs:
        if (
            out.get("output_type") == "stream"
            and merged
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == out.get("name")
        ):
            merged[-1]["text"] = merged[-1]["text"] + out["text"]
        else:
            merged.append(out)
    return merged


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    for i, cell in enumerate(nb.cells):
        cell.metadata.pop("execution", None)
        cell["id"] = f"c{i:03d}"
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    return nb


def execute(md_path: Path, out_dir: Path) -> tuple[float, int]:
    # the kernel inherits this: sympy's printed forms depend on hash randomisation
    os.environ["PYTHONHASHSEED"] = "0"
    nb = to_notebook(md_path)
    client = NotebookClient(
        nb,
        timeout=1800,
        kernel_name="python3",
        resources={"metadata": {"path": str(NB_DIR)}},
        record_timing=False,
        allow_errors=False,
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    nb = clean(nb)
    out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_dir / (md_path.stem + ".ipynb"))
    return seconds, sum(c.cell_type == "code" for c in nb.cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="chapter stems, e.g. 01_foundations (default: all)")
    parser.add_argument("--output-dir", type=Path, default=NB_DIR)
    args = parser.parse_args(argv)

    scale = os.environ.get("FEDFREQ_SCALE", "default")
    out_dir = args.output_dir.resolve()
    if scale != "default" and out_dir == NB_DIR:
        parser.error("FEDFREQ_SCALE is not 'default': pass --output-dir outside notebooks/")

    sources = sorted(NB_DIR.glob("[0-9][0-9]_*.md"))
    if args.names:
        wanted = set(args.names)
        sources = [p for p in sources if p.stem in wanted]
        missing = wanted - {p.stem for p in sources}
        if missing:
            parser.error(f"no such chapter(s): {sorted(missing)}")

    measured = {}
    for md in sources:
        print(f"executing {md.name} ...", flush=True)
        seconds, cells = execute(md, out_dir)
        flag = "" if seconds <= BUDGET_SECONDS else f"  (over the {BUDGET_SECONDS} s budget)"
        print(f"  {seconds:.1f} s, {cells} code cells{flag}", flush=True)
        measured[md.stem] = {"seconds": round(seconds, 1), "cells": cells}

    if out_dir == NB_DIR:
        record_times(measured, scale)
    return 0


def record_times(measured: dict, scale: str) -> None:
    """Merge ``measured`` into notebooks/execution_times.json under a file lock."""
    with open(NB_DIR / ".execution_times.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        times = json.loads(TIMES.read_text()) if TIMES.exists() else {"notebooks": {}}
        times["notebooks"].update(measured)
        times.update(
            machine=f"{platform.machine()}, {os.cpu_count()} cores",
            python=platform.python_version(),
            scale=scale,
            budget_seconds=BUDGET_SECONDS,
            environment=numeric_environment(),
        )
        present = {p.stem for p in NB_DIR.glob("[0-9][0-9]_*.md")}
        times["notebooks"] = {k: v for k, v in sorted(times["notebooks"].items()) if k in present}
        TIMES.write_text(json.dumps(times, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
