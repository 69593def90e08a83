"""Show that every claim check can fail: run each claim cell once more with a mutation.

Usage::

    python scripts/mutate_claims.py                 # every chapter
    python scripts/mutate_claims.py 09_sample_threshold 15_debiasing
    python scripts/mutate_claims.py --list          # the mutations, without running them
    make test-mutations

Each ledger entry (``book/claims/<chapter>.yml``) carries a ``mutations`` list. A
mutation names its kind (see ``KINDS``) and edits the source of the entry's claim cell:
``replace`` is a piece of that source (it must occur exactly once) and ``by`` what it
becomes (with ``cells: k``, the source is that of the k code cells before the claim cell
followed by the claim cell, for a claim cell that compares what earlier cells computed),
e.g. the paper's printed form of a formula instead of the corrected one, a
constant perturbed, or a weakened implementation. The script executes each chapter once
in a fresh kernel; just before each claim cell it runs the mutated versions of that cell
and records what each mutated check says. The kernel's variables are deep-copied before
and restored after each mutated run (random generators included), so the real cell then
computes exactly what it computes without the mutations (the script checks that each
real claim cell still prints the ledger's verdict). A mutation *flips* the check when the
mutated cell raises ``ClaimFailed`` for the entry or prints a verdict other than the
ledger's. The exit status is 1 if any mutation does not flip its check, if a mutation
does not apply, or if a chapter fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

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
KINDS = (
    "paper form",  # the paper's printed (wrong) formula or value in place of the corrected one
    "perturbed constant",  # a constant, threshold or parameter moved slightly
    "weakened implementation",  # the computation done wrongly (a term dropped, a factor off)
    "negated statement",  # the statement replaced by its opposite
)
MARK = "@@mutation@@ "
CLAIM_CALL = re.compile(r"check_claim\(\s*[\"']([^\"']+)[\"']")

# Code run in the kernel before a claim cell: runs one mutated source in a copy of the
# namespace and prints one marked JSON line with what the mutated check said. Only the
# names the mutated source can reach are copied: those it names, and those named by the
# notebook's own functions it calls (transitively); anything else it might still change is
# caught by nbval, whose comparison of the real cells that follow fails on it.
RUNNER = r"""
def _reachable_names(source, g):
    import ast, types
    names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    todo = list(names)
    while todo:
        obj = g.get(todo.pop())
        codes = []
        if isinstance(obj, types.FunctionType) and obj.__module__ == "__main__":
            codes.append(obj.__code__)
        while codes:
            code = codes.pop()
            for name in code.co_names:
                if name not in names:
                    names.add(name)
                    todo.append(name)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def _snapshot(sources, g):  # a copy of the names the sources reach, and the names defined now
    import copy, types
    atomic = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    reach = set()
    for source in sources:
        reach |= _reachable_names(source, g)
    keys = [
        k for k, v in g.items()
        if k in reach and not k.startswith("_") and k not in ("In", "Out") and not isinstance(v, atomic)
    ]
    try:  # one deep copy, so that objects shared between names stay shared
        saved = copy.deepcopy({k: g[k] for k in keys})
    except Exception:
        saved = {}
        for k in keys:
            try:
                saved[k] = copy.deepcopy(g[k])
            except Exception:
                saved[k] = g[k]
    return saved, set(g)


def _restore(g, saved, before):  # the kernel's names as they were at the snapshot
    for k in set(g) - before:
        del g[k]
    g.update(saved)


def _run_mutation(claim_id, index, source, expected):
    import json
    from fedfreq.claims import ClaimFailed as _ClaimFailed
    g = globals()
    saved, before = _snapshot([source], g)
    from IPython.utils.capture import capture_output
    import fedfreq
    result = {"id": claim_id, "index": index}
    printed = []
    real_check = fedfreq.check_claim

    def only_this_claim_raises(cid, **kwargs):  # other claims of the same cell do not stop it
        try:
            real_check(cid, **kwargs)
        except _ClaimFailed:
            if cid == claim_id:
                raise

    fedfreq.check_claim = only_this_claim_raises
    try:
        with capture_output() as cap:
            exec(compile(source, f"<mutation {index} of {claim_id}>", "exec"), g)
        printed = [cap.stdout] + [o.data.get("text/plain", "") for o in cap.outputs]
    except _ClaimFailed as exc:
        said = str(exc)
        result["outcome"] = "flipped" if said.startswith(claim_id + ":") else "other claim failed"
        result["said"] = said[:300]
    except Exception as exc:  # a mutation that breaks the cell shows nothing
        result["outcome"] = "error"
        result["said"] = f"{type(exc).__name__}: {exc}"[:300]
    else:
        lines = [ln for text in printed for ln in text.splitlines() if ln.startswith(claim_id + ": ")]
        if not lines:
            result["outcome"] = "error"
            result["said"] = "the mutated cell printed no verdict for the claim"
        else:
            verdict = lines[-1][len(claim_id) + 2 :].split(". ", 1)[0]
            result["outcome"] = "flipped" if verdict != expected else "not flipped"
            result["said"] = lines[-1][:300]
    finally:  # the kernel's state as it was before the mutation
        fedfreq.check_claim = real_check
        _restore(g, saved, before)
    print("@@mutation@@ " + json.dumps(result))
"""


#: libyaml's safe parser where available (about ten times faster than the pure-Python one)
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_mutations() -> dict[str, list[dict]]:
    """Notebook stem -> its chapter's ledger entries (each with its ``mutations``)."""
    by_chapter: dict[str, list[dict]] = {}
    for path in sorted(CLAIMS_DIR.glob("*.yml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER) or {}
        by_chapter[path.stem] = list(data.get("claims", []))
    # a chapter's claim cells may sit on its teaching page or on its reproduction page: each
    # notebook gets its chapter's entries, and plans the mutations of the cells it holds
    return {page.stem: by_chapter[page.chapter] for page in layout.pages() if page.chapter in by_chapter}


def plan_calls(stem: str, entries: list[dict]) -> tuple[dict[int, list[str]], list[dict], list[str]]:
    """The mutation calls to run before each code cell of the chapter (keyed by the cell's
    position among the chapter's code cells), the planned mutations, and the problems
    found before running anything (a mutation that does not apply)."""
    nb = jupytext.read(NB_DIR / f"{stem}.md")
    problems: list[str] = []
    planned: list[dict] = []
    calls: dict[int, list[str]] = {}
    code_positions = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    by_id = {e["id"]: e for e in entries}
    for pos, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for claim_id in CLAIM_CALL.findall(cell.source):
            entry = by_id.get(claim_id)
            if entry is None:
                continue
            for k, mut in enumerate(entry.get("mutations") or []):
                where = f"{claim_id} mutation {k}"
                if mut.get("kind") not in KINDS:
                    problems.append(f"{where}: kind must be one of {KINDS}; got {mut.get('kind')!r}")
                    continue
                old, new = mut.get("replace"), mut.get("by")
                if not isinstance(old, str) or not isinstance(new, str) or old == new:
                    problems.append(f"{where}: needs 'replace' and a different 'by'")
                    continue
                # `cells: k` lets a mutation reach the k code cells before the claim cell,
                # for claim cells that only compare what earlier cells computed
                span = mut.get("cells", 0)
                here = code_positions.index(pos)
                if not isinstance(span, int) or not 0 <= span <= min(here, 5):
                    problems.append(f"{where}: 'cells' must be an integer in [0, {min(here, 5)}]")
                    continue
                source = "\n".join(nb.cells[i].source for i in code_positions[here - span : here + 1])
                count = source.count(old)
                if count != 1:
                    scope = f"the claim cell and the {span} code cell(s) before it" if span else "the claim cell"
                    problems.append(f"{where}: 'replace' occurs {count} times in {scope} (must be once)")
                    continue
                source = source.replace(old, new)
                planned.append({"id": claim_id, "index": k, "kind": mut["kind"], "chapter": stem})
                call = f"_run_mutation({claim_id!r}, {k}, {source!r}, {entry['verdict']!r})"
                calls.setdefault(here - span, []).append(call)
    return calls, planned, problems


def plan_chapter(stem: str, entries: list[dict]) -> tuple[nbformat.NotebookNode, list[dict], list[str]]:
    """The chapter with a mutation cell before each claim cell; the planned mutations;
    the problems found before running anything (a mutation that does not apply)."""
    calls, planned, problems = plan_calls(stem, entries)
    nb = jupytext.read(NB_DIR / f"{stem}.md")
    cells = [nbformat.v4.new_code_cell(RUNNER)]
    ordinal = 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            cells += [nbformat.v4.new_code_cell(call) for call in calls.get(ordinal, [])]
            ordinal += 1
        cells.append(cell)
    nb.cells = cells
    return nb, planned, problems


def run_chapter(stem: str) -> dict:
    entries = load_mutations()[stem]
    nb, planned, problems = plan_chapter(stem, entries)
    record: dict[str, Any] = {"chapter": stem, "planned": planned, "problems": problems, "results": [], "error": None}
    if not planned:
        return record
    os.environ.setdefault("PYTHONHASHSEED", "0")
    client = NotebookClient(
        nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(NB_DIR)}}, allow_errors=False
    )
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        record["error"] = str(exc).strip().splitlines()[-1][:400]
    record["seconds"] = round(time.perf_counter() - start, 1)
    verdicts = {e["id"]: e["verdict"] for e in entries}
    record["real"] = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("text", "") or out.get("data", {}).get("text/plain", "")
            if out.get("output_type") in ("stream", "display_data"):
                for line in text.splitlines():
                    if line.startswith(MARK):
                        record["results"].append(json.loads(line[len(MARK) :]))
                    elif ": " in line and line.split(": ", 1)[0] in verdicts:
                        claim_id, rest = line.split(": ", 1)
                        record["real"][claim_id] = rest.split(". ", 1)[0]
    record["changed"] = [
        f"{cid}: prints {got!r}, the ledger says {verdicts[cid]!r}"
        for cid, got in record["real"].items()
        if got != verdicts[cid]
    ]
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="chapter stems (default: every chapter)")
    parser.add_argument("--list", action="store_true", help="list the mutations and check that they apply")
    parser.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2)")
    parser.add_argument("--report", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    ledger = load_mutations()
    stems = args.chapters or sorted(ledger)
    unknown = [s for s in stems if s not in ledger]
    if unknown:
        print(f"no such chapter(s): {unknown}", file=sys.stderr)
        return 2
    failures: list[str] = []
    missing = sorted({e["id"] for s in stems for e in ledger[s] if not e.get("mutations")})
    if missing:
        failures.append(f"{len(missing)} claim(s) without a mutation: {', '.join(missing)}")
    if args.list:
        for stem in stems:
            _, planned, problems = plan_chapter(stem, ledger[stem])
            for p in planned:
                print(f"{stem}: {p['id']} [{p['kind']}]")
            failures += problems
        for f in failures:
            print("PROBLEM " + f)
        return 1 if failures else 0
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        records = list(pool.map(run_chapter, stems))
    counts = {"flipped": 0}
    for rec in records:
        failures += [f"{rec['chapter']}: {p}" for p in rec["problems"]]
        if rec["error"]:
            failures.append(f"{rec['chapter']}: the chapter failed: {rec['error']}")
        failures += [f"{rec['chapter']}: after the mutations the real check {c}" for c in rec.get("changed", [])]
        got = {(r["id"], r["index"]) for r in rec["results"]}
        for p in rec["planned"]:
            if (p["id"], p["index"]) not in got and not rec["error"]:
                failures.append(f"{p['id']} mutation {p['index']}: not run")
        for r in rec["results"]:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
            if r["outcome"] != "flipped":
                failures.append(f"{r['id']} mutation {r['index']}: {r['outcome']} ({r['said']})")
        if rec["planned"]:
            n_ok = sum(r["outcome"] == "flipped" for r in rec["results"])
            print(
                f"{rec['chapter']}: {n_ok}/{len(rec['planned'])} mutations flip their check ({rec.get('seconds', 0)} s)"
            )
    total = sum(len(rec["planned"]) for rec in records)
    print(f"{counts['flipped']}/{total} mutations flip their check; {time.perf_counter() - start:.0f} s")
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(records, indent=1), encoding="utf-8")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
