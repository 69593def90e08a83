"""Store the results of the last run at the papers' scale as data for the book.

Usage::

    python scripts/full_results.py                 # every chapter found in _build/full
    python scripts/full_results.py 08_multiround_sketch
    python scripts/full_results.py --check         # only check that the data are complete

``make full`` runs this after executing the chapters at ``FEDFREQ_SCALE=full`` into
``_build/full``. For each chapter it writes ``book/full_scale/<chapter>.json`` with the
run's status, date, machine, wall time and peak memory, every claim's verdict and evidence
(from ``<chapter>.claims.jsonl``, written by :func:`fedfreq.claims.check_claim`), the
printed tables (multi-line text outputs) and the figures, saved as PNG files under
``book/full_scale/figures/`` with the caption and alt text of their cell. The page
"Results at the papers' scale" (``book/full_scale.md``, directive ``{full-scale-results}``)
and the ledger's full-scale verdicts are rendered from these files; they are committed,
so a reader sees the papers' scale without running it.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

import jupytext
import nbformat

from fedfreq.claims import FULL_SCALE_FAILURE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUN_DIR = ROOT / "_build" / "full"
DATA_DIR = ROOT / "book" / "full_scale"
FIG_DIR = DATA_DIR / "figures"
#: A text output with at least this many lines is kept as a printed table.
TABLE_LINES = 3


def heading_of(source: str) -> str | None:
    """The last Markdown heading of a cell (``## Title`` -> ``Title``), if any."""
    found = None
    for line in source.splitlines():
        if line.startswith("#") and line.lstrip("#").startswith(" "):
            found = line.lstrip("#").strip()
    return found


def text_of(output: dict) -> str:
    if output.get("output_type") == "stream" and output.get("name") == "stdout":
        return output.get("text", "")
    if output.get("output_type") in ("execute_result", "display_data"):
        data = output.get("data", {})
        if "text/html" in data or "image/png" in data:
            return ""
        return data.get("text/plain", "")
    return ""


def collect(stem: str, run_dir: Path, summary: dict) -> dict:
    """The record of one chapter's run at the papers' scale (and its figures written)."""
    record = dict(summary["chapters"][stem])
    record.update(chapter=stem, machine=summary.get("machine", ""), python=summary.get("python", ""))
    log = run_dir / f"{stem}.claims.jsonl"
    claims = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.is_file() else []
    record["claims"] = [{k: c[k] for k in ("id", "verdict", "passed", "evidence")} for c in claims]
    nb = nbformat.read(run_dir / f"{stem}.ipynb", as_version=4)
    # captions and alt text are read from the chapter's source where its cells line up
    # with the run's (a caption edited after the run need not re-run the chapter)
    source = ROOT / "notebooks" / f"{stem}.md"
    src_cells = jupytext.read(source).cells if source.is_file() else []
    aligned = len(src_cells) == len(nb.cells)
    section = ""
    tables: list[dict] = []
    figures: list[dict] = []
    for old in FIG_DIR.glob(f"{stem}-*.png"):
        old.unlink()
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            section = heading_of(cell.source) or section
            continue
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("mystnb", {})
        if (
            aligned
            and "plt.show()" in src_cells[index].source
            and "figure" in src_cells[index].metadata.get("mystnb", {})
        ):
            meta = src_cells[index].metadata["mystnb"]
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png") if isinstance(output.get("data"), dict) else None
            if png:
                name = f"{stem}-{len(figures) + 1}.png"
                FIG_DIR.mkdir(parents=True, exist_ok=True)
                (FIG_DIR / name).write_bytes(base64.b64decode(png))
                figure = meta.get("figure", {})
                figures.append(
                    {
                        "file": f"figures/{name}",
                        "section": section,
                        "label": figure.get("name", ""),
                        "caption": figure.get("caption", ""),
                        "alt": meta.get("image", {}).get("alt", ""),
                    }
                )
                continue
            page = output.get("data", {}).get("text/html", "") if isinstance(output.get("data"), dict) else ""
            page = "".join(page) if isinstance(page, list) else page
            if "<table" in page and "claim-verdict" not in page:  # a rendered table (data frame)
                tables.append({"section": section, "html": page.strip()})
                continue
            text = text_of(output).rstrip("\n")
            if text.count("\n") + 1 >= TABLE_LINES and not any(text.startswith(c["id"] + ":") for c in claims):
                tables.append({"section": section, "text": text})
    record["tables"], record["figures"] = tables, figures
    return record


def check(stems: list[str]) -> list[str]:
    """Problems with the stored data: missing chapters, figures or claim records."""
    problems = []
    for stem in stems:
        path = DATA_DIR / f"{stem}.json"
        if not path.is_file():
            problems.append(f"{stem}: no record at the papers' scale ({path.relative_to(ROOT)})")
            continue
        record = json.loads(path.read_text())
        for fig in record.get("figures", []):
            if not (DATA_DIR / fig["file"]).is_file():
                problems.append(f"{stem}: missing figure {fig['file']}")
    # every chapter with claims records them at the papers' scale, on its teaching page or on
    # its reproduction page (a teaching page may hold none)
    for chapter in sorted({layout.by_stem(s).chapter for s in stems if s in {p.stem for p in layout.pages()}}):
        records = [DATA_DIR / f"{p.stem}.json" for p in layout.chapter_pages(chapter)]
        loaded = [json.loads(r.read_text()) for r in records if r.is_file()]
        if (
            loaded
            and all(r.get("status") == "ok" for r in loaded)
            and not any(r.get("claims") for r in loaded)
            and chapter != "16_deployment"
        ):
            problems.append(f"{chapter}: completed but recorded no claim")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="chapter stems (default: every chapter in the run's summary)")
    parser.add_argument("--run-dir", type=Path, default=RUN_DIR)
    parser.add_argument("--check", action="store_true", help="only check the stored data")
    args = parser.parse_args(argv)
    chapters = [p.stem for p in layout.pages()]
    if args.check:
        problems = check(args.names or chapters)
        print("\n".join(problems) or f"full-scale data complete for {len(args.names or chapters)} chapters")
        return 1 if problems else 0
    summary_path = args.run_dir / "summary.json"
    if not summary_path.is_file():
        parser.error(f"no {summary_path}: run `make full` first")
    summary = json.loads(summary_path.read_text())
    if summary.get("scale") != "full":
        parser.error(f"{summary_path} is not a run at FEDFREQ_SCALE=full")
    stems = args.names or [s for s in summary["chapters"] if s in chapters]
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        if stem not in summary["chapters"]:
            parser.error(f"{stem} is not in {summary_path}")
        record = collect(stem, args.run_dir, summary)
        (DATA_DIR / f"{stem}.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        bad = [c["id"] for c in record["claims"] if c["verdict"] == FULL_SCALE_FAILURE]
        print(
            f"{stem}: {record['status']}, {record['seconds']:.0f} s, {record['peak_rss_gb']:.2f} GB, "
            f"{len(record['claims'])} claims ({len(bad)} that do not hold at this scale), "
            f"{len(record['figures'])} figures, {len(record['tables'])} printed tables"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
