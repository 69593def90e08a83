"""Execute the chapter notebooks and store their outputs.

Each chapter is authored as a MyST-markdown notebook ``notebooks/NN_name.md``
(readable diffs); this script converts it to ``notebooks/NN_name.ipynb``,
executes it in a fresh kernel with ``notebooks/`` as working directory, strips
volatile metadata and writes it back with outputs. nbval later re-executes the
``.ipynb`` and compares against these stored outputs.

Usage::

    python scripts/execute_notebooks.py                # every chapter
    python scripts/execute_notebooks.py 01_foundations  # one chapter (or notebooks/01_foundations.md)
    FEDFREQ_SCALE=full python scripts/execute_notebooks.py --output-dir _build/full
    python scripts/execute_notebooks.py --metadata-only 01_foundations  # no execution

``--metadata-only`` copies the cells' metadata (tags, figure captions and alt text) from
the sources into the stored notebooks without executing anything: a caption is not an
output, so changing one need not re-run the chapter. It refuses a chapter whose stored
cells no longer match its source.

At ``FEDFREQ_SCALE=full`` the outputs differ from the stored ones, so an output
directory outside ``notebooks/`` is required. Such a run (``make full``) keeps going:
a chapter whose cell fails (a claim that does not hold at that scale, say) or that
exceeds ``--timeout`` is reported, its partly executed notebook is saved (with a note on
top, and the cell where it stopped carrying its traceback or a ``ChapterTimeout`` error),
and the run goes on with the next chapter. The progress bars of the chapters' long experiments
(``fedfreq.scale.progress``) are relayed to the terminal, not stored in the notebooks;
each chapter ends with a line giving its status, wall time and the kernel's peak memory,
and the run with a summary table, also written to ``<output-dir>/summary.json``. The exit
status is 1 if any chapter did not complete.

When the stored outputs are produced (the default scale, into ``notebooks/``), the
first failure stops the run and nothing is written for the failing chapter.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from numeric_env import numeric_environment  # noqa: E402

from fedfreq.claims import FULL_SCALE_FAILURE  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
TIMES = NB_DIR / "execution_times.json"
BUDGET_SECONDS = 45
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colours in a kernel's traceback
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


class _Relay(threading.Thread):
    """Copies what the kernel's progress bars write to a file onto our stderr."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.done = path, threading.Event()

    def run(self) -> None:
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            while True:
                chunk = fh.read()
                if chunk:
                    sys.stderr.write(chunk)
                    sys.stderr.flush()
                elif self.done.is_set():
                    return
                else:
                    time.sleep(0.5)


class _PeakMemory(threading.Thread):
    """Tracks the peak resident memory (VmHWM, Linux) and the CPU time of the kernel process.

    The kernel's own high-water mark and its user + system CPU time (its own and its
    waited-for children's) are read once a second and after every cell, so a short
    chapter is measured too; reading ``/proc`` costs microseconds. Unlike the wall time,
    the CPU time does not grow when other programs share the machine's cores.
    """

    def __init__(self, client: NotebookClient) -> None:
        super().__init__(daemon=True)
        self.client, self.done, self.peak_kib, self.cpu_ticks = client, threading.Event(), 0, 0

    def sample(self, **_: object) -> None:
        km = getattr(self.client, "km", None)
        pid = getattr(getattr(km, "provisioner", None), "pid", None)
        if pid is None:
            return
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    self.peak_kib = max(self.peak_kib, int(line.split()[1]))
            # fields after the command name: utime, stime, cutime, cstime are the 12th-15th
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            self.cpu_ticks = max(self.cpu_ticks, sum(int(f) for f in fields[11:15]))
        except (OSError, ValueError, IndexError):
            pass

    def run(self) -> None:
        while not self.done.wait(1.0):
            self.sample()


def mark_unfinished(nb: nbformat.NotebookNode, index: int | None, status: str, detail: str) -> None:
    """Mark a chapter that stopped early: a note on top, the stopping cell flagged.

    A failing cell already carries its traceback; a cell stopped by the time limit
    gets an error output saying so. The notebook's metadata records the status too.
    """
    where, number = "", None
    if index is not None and 0 <= index < len(nb.cells):
        cell = nb.cells[index]
        cell.metadata["run_status"] = status
        number = sum(c.cell_type == "code" for c in nb.cells[: index + 1])
        where = f" in code cell {number}"
        if status == "timeout":
            cell.outputs.append(
                nbformat.v4.new_output(
                    "error", ename="ChapterTimeout", evalue=detail, traceback=[f"ChapterTimeout: {detail}"]
                )
            )
    verb = "failed" if status == "failed" else "ran out of time"
    note = nbformat.v4.new_markdown_cell(
        f"**This run did not complete:** the chapter {verb}{where} ({detail}). "
        "The cells after that one were not executed."
    )
    note.metadata["run_status"] = status
    nb.cells.insert(0, note)
    nb.metadata["run_status"] = {"status": status, "detail": detail, "code_cell": number}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:03d}"


def execute(md_path: Path, out_dir: Path, *, keep_going: bool = False, timeout: float = 1800) -> dict:
    """Execute one chapter and write its notebook; return its record (status, time, memory).

    With ``keep_going`` a failing cell or the chapter's ``timeout`` (seconds, for the
    whole chapter) ends the chapter but not the run: the notebook is written with what
    ran. Without it the error propagates and nothing is written.
    """
    # the kernel inherits this: sympy's printed forms depend on hash randomisation
    os.environ["PYTHONHASHSEED"] = "0"
    nb = to_notebook(md_path)
    deadline = time.monotonic() + timeout
    client = NotebookClient(
        nb,
        timeout=int(timeout),
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        kernel_name="python3",
        resources={"metadata": {"path": str(NB_DIR)}},
        record_timing=False,
        allow_errors=False,
        # a run that keeps going stops a timed-out kernel at once (it may be busy in C code)
        shutdown_kernel="immediate" if keep_going else "graceful",
    )
    current: dict[str, int | None] = {"cell": None}

    def on_cell_start(cell: nbformat.NotebookNode, cell_index: int) -> None:
        current["cell"] = cell_index

    progress_file = Path(tempfile.mkstemp(prefix="fedfreq-progress-", suffix=".txt")[1])
    os.environ["FEDFREQ_PROGRESS"] = str(progress_file)
    claim_log = out_dir / (md_path.stem + ".claims.jsonl")
    if keep_going:  # every verdict of the run, for scripts/full_results.py
        out_dir.mkdir(parents=True, exist_ok=True)
        claim_log.write_text("")
        os.environ["FEDFREQ_CLAIM_LOG"] = str(claim_log)
    relay, memory = _Relay(progress_file), _PeakMemory(client)
    client.on_cell_start = on_cell_start
    client.on_cell_complete = memory.sample
    relay.start()
    memory.start()
    status, detail = "ok", ""
    start = time.perf_counter()
    try:
        client.execute()
    except (CellTimeoutError, DeadKernelError, CellExecutionError) as exc:
        if not keep_going:
            raise
        if isinstance(exc, CellExecutionError):
            last = (str(exc).strip().splitlines() or [""])[-1]
            status, detail = "failed", ANSI.sub("", last)[:300]
        else:
            status, detail = "timeout", f"stopped after {timeout:.0f} s ({type(exc).__name__})"
    finally:
        seconds = time.perf_counter() - start
        relay.done.set()
        memory.done.set()
        relay.join(timeout=5)
        memory.join(timeout=5)
        os.environ.pop("FEDFREQ_PROGRESS", None)
        os.environ.pop("FEDFREQ_CLAIM_LOG", None)
        progress_file.unlink(missing_ok=True)
    nb = clean(nb)
    if status != "ok":
        mark_unfinished(nb, current["cell"], status, detail)
    out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_dir / (md_path.stem + ".ipynb"))
    record = {
        "status": status,
        "detail": detail,
        "seconds": round(seconds, 1),
        "cells": sum(c.cell_type == "code" for c in nb.cells),
        "peak_rss_gb": round(memory.peak_kib / 2**20, 2),
        "cpu_seconds": round(memory.cpu_ticks / os.sysconf("SC_CLK_TCK"), 1),
    }
    if keep_going:
        verdicts = [json.loads(line) for line in claim_log.read_text().splitlines() if line.strip()]
        record["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        record["claims"] = len(verdicts)
        # claims the chapter expected to hold at the default scale that do not hold here
        record["claims_not_holding"] = sorted(v["id"] for v in verdicts if v["verdict"] == FULL_SCALE_FAILURE)
    return record


def sync_metadata(md_path: Path) -> bool:
    """Copy the cells' metadata of a chapter's source into its stored notebook.

    Returns whether the stored notebook changed. Raises ``ValueError`` if its cells'
    types or sources differ from the source's (then the chapter must be re-executed).
    """
    source = to_notebook(md_path)
    path = NB_DIR / (md_path.stem + ".ipynb")
    stored = nbformat.read(path, as_version=4)
    if [(c.cell_type, c.source) for c in source.cells] != [(c.cell_type, c.source) for c in stored.cells]:
        raise ValueError(f"{path.name} does not match {md_path.name}: re-execute the chapter")
    changed = False
    for new, old in zip(source.cells, stored.cells, strict=True):
        meta = {k: v for k, v in new.metadata.items() if k != "execution"}
        if meta != dict(old.metadata):
            old.metadata = nbformat.NotebookNode(meta)
            changed = True
    if changed:
        nbformat.write(stored, path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="chapter stems, e.g. 01_foundations (default: all)")
    parser.add_argument("--output-dir", type=Path, default=NB_DIR)
    parser.add_argument(
        "--timeout", type=float, default=1800, help="seconds allowed per chapter (default 1800 = 30 minutes)"
    )
    parser.add_argument(
        "--metadata-only",
        action="store_true",
        help="copy cell metadata (captions, tags) into the stored notebooks, executing nothing",
    )
    args = parser.parse_args(argv)

    if args.metadata_only:
        sources = [p.md for p in layout.pages()]
        try:
            sources = select(sources, args.names) if args.names else sources
            for md in sources:
                print(f"{md.stem}: {'metadata updated' if sync_metadata(md) else 'unchanged'}")
        except ValueError as exc:
            parser.error(str(exc))
        return 0

    scale = os.environ.get("FEDFREQ_SCALE", "default")
    out_dir = args.output_dir.resolve()
    if scale != "default" and out_dir == NB_DIR:
        parser.error("FEDFREQ_SCALE is not 'default': pass --output-dir outside notebooks/")
    keep_going = out_dir != NB_DIR

    sources = [p.md for p in layout.pages()]
    if args.names:
        try:
            sources = select(sources, args.names)
        except ValueError as exc:
            parser.error(str(exc))
        if not keep_going and any(p.parent != NB_DIR for p in sources):
            parser.error("a notebook outside notebooks/ needs --output-dir")

    measured = {}
    run_start = time.perf_counter()
    for k, md in enumerate(sources, 1):
        print(f"[{k}/{len(sources)}] executing {md.name} (scale {scale}) ...", flush=True)
        rec = execute(md, out_dir, keep_going=keep_going, timeout=args.timeout)
        flag = (
            "" if rec["seconds"] <= BUDGET_SECONDS or scale != "default" else f"  (over the {BUDGET_SECONDS} s budget)"
        )
        memory = f", peak memory {rec['peak_rss_gb']:.2f} GB" if rec["peak_rss_gb"] else ""
        print(
            f"  {md.stem}: {rec['status']}, {rec['seconds']:.1f} s, {rec['cells']} code cells{memory}{flag}", flush=True
        )
        if rec["detail"]:
            print(f"    {rec['detail']}", flush=True)
        if rec.get("claims_not_holding"):
            print(f"    claims that do not hold: {', '.join(rec['claims_not_holding'])}", flush=True)
        measured[md.stem] = rec

    if out_dir == NB_DIR:
        record_times(
            {
                k: {"seconds": v["seconds"], "cpu_seconds": v["cpu_seconds"], "cells": v["cells"]}
                for k, v in measured.items()
            },
            scale,
        )
        return 0
    write_summary(out_dir, measured, scale, time.perf_counter() - run_start)
    print(f"\n{'chapter':28} {'status':8} {'time (s)':>9} {'peak GB':>8}")
    for name, rec in measured.items():
        print(f"{name:28} {rec['status']:8} {rec['seconds']:9.1f} {rec['peak_rss_gb']:8.2f}")
    bad = [name for name, rec in measured.items() if rec["status"] != "ok"]
    print(f"{len(measured) - len(bad)} of {len(measured)} chapters completed; summary in {out_dir / 'summary.json'}")
    return 1 if bad else 0


def select(chapters: list[Path], names: list[str]) -> list[Path]:
    """The chapters named by stem (``01_foundations``), file name or path, in book order.

    A path to a MyST notebook outside ``notebooks/`` is accepted too and runs after the
    chapters, in the order given (with ``notebooks/`` as working directory).
    """
    by_stem = {p.stem: p for p in chapters}
    chosen, missing = [], []
    for name in names:
        path = Path(name)
        if path.suffix == ".md" and path.is_file():
            chosen.append(path.resolve())
        elif path.stem in by_stem and path.suffix in ("", ".md", ".ipynb"):
            chosen.append(by_stem[path.stem])
        else:
            missing.append(name)
    if missing:
        raise ValueError(f"no such chapter(s): {missing}")
    order = {p: i for i, p in enumerate(chapters)}
    return sorted(dict.fromkeys(chosen), key=lambda p: order.get(p, len(order)))


def write_summary(out_dir: Path, measured: dict, scale: str, seconds: float) -> dict:
    """Merge ``measured`` into ``<out_dir>/summary.json`` under a file lock and return it.

    A run of some chapters updates their rows and keeps the others' (each row is dated),
    so chapters may be run separately, even at the same time.
    """
    path = out_dir / "summary.json"
    with open(out_dir / ".summary.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        previous = json.loads(path.read_text()) if path.is_file() else {}
        chapters = {**previous.get("chapters", {}), **measured} if previous.get("scale") == scale else measured
        summary = {
            "scale": scale,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "python": platform.python_version(),
            "total_seconds": round(seconds, 1),
            "chapters": dict(sorted(chapters.items())),
        }
        path.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


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
        present = {p.stem for p in layout.pages()}
        times["notebooks"] = {k: v for k, v in sorted(times["notebooks"].items()) if k in present}
        TIMES.write_text(json.dumps(times, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
