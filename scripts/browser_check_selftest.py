#!/usr/bin/env python3
"""Self-test for scripts/browser_check.py.

Writes a tiny static site into a temporary directory (one good page typeset by the
local MathJax, plus pages that are broken in one specific way each), runs the checker
on it as a subprocess, and asserts that the good pages pass and each broken page is
flagged for exactly the expected reason(s).

Usage: .venv/bin/python scripts/browser_check_selftest.py [--mathjax DIR] [--keep]
The local MathJax (default book/_mathjax) is fetched with scripts/fetch_mathjax.sh
when missing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKER = ROOT / "scripts" / "browser_check.py"
FETCH = ROOT / "scripts" / "fetch_mathjax.sh"
STATIC = ROOT / "book" / "_ext" / "static"

MATHJAX_TAG = '<script defer src="_mathjax/tex-chtml.js"></script>'
#: The book's stylesheet and its script that fits display equations to a phone's width.
BOOK_ASSETS = '<link rel="stylesheet" href="_static/book.css"><script src="_static/mathfit.js"></script>'

#: The fixture's table of contents: chapters 1-4 and 6-7 have reproduction pages (their
#: teaching pages are held to the budget), chapter 5 is not split yet (pending).
TOC = """format: jb-book
root: index
parts:
  - caption: Chapters
    numbered: true
    chapters:
      - file: notebooks/01_short
        sections:
          - file: notebooks/01_short_reproduction
      - file: notebooks/02_long
        sections:
          - file: notebooks/02_long_reproduction
      - file: notebooks/03_code_share
        sections:
          - file: notebooks/03_code_share_reproduction
      - file: notebooks/04_long_cell
        sections:
          - file: notebooks/04_long_cell_reproduction
      - file: notebooks/05_pending
      - file: notebooks/06_medium
        sections:
          - file: notebooks/06_medium_reproduction
      - file: notebooks/07_medium
        sections:
          - file: notebooks/07_medium_reproduction
  - caption: Appendices
    chapters:
      - file: notebooks/A_appendix
"""


#: A display equation of ``terms`` terms: 10 fit a phone, 13 fit it scaled, 30 do not (but fit a desktop).
def display_eq(terms: int) -> str:
    return '<div class="math">\\[' + " + ".join(f"x_{{{k}}}^2" for k in range(terms)) + "\\]</div>"


def code_cell(lines: int) -> str:
    """A notebook code cell as myst-nb renders it, ``lines`` lines long."""
    body = "\n".join(f"value_{k} = {k} * 2" for k in range(lines))
    return (
        '<div class="cell docutils container"><div class="cell_input docutils container">'
        f'<div class="highlight"><pre>{body}</pre></div></div></div>'
    )


def folded_code_cell(lines: int) -> str:
    """A hide-input code cell as myst-nb renders it: the input inside a closed <details>."""
    body = "\n".join(f"hidden_{k} = {k} * 2" for k in range(lines))
    return (
        '<div class="cell tag_hide-input docutils container"><details class="hide above-input">'
        '<summary aria-label="Toggle hidden content">Show code cell source</summary>'
        '<div class="cell_input docutils container">'
        f'<div class="highlight"><pre>{body}</pre></div></div></details></div>'
    )


def collapsed_solution(lines: int) -> str:
    """A gated solution as sphinx-exercise and sphinx-togglebutton render it, collapsed: its
    code cell keeps a layout box but is hidden (visibility: hidden)."""
    body = "\n".join(f"answer_{k} = {k} * 2" for k in range(lines))
    return (
        '<div class="solution dropdown admonition toggle toggle-hidden" style="height: 3em; overflow: hidden">'
        '<p class="admonition-title">Solution</p>'
        '<div class="cell docutils container" style="visibility: hidden">'
        '<div class="cell_input docutils container">'
        f'<div class="highlight"><pre>{body}</pre></div></div></div></div>'
    )


def spacer(screens: float) -> str:
    """Prose standing in for ``screens`` screens of a 900-pixel window."""
    return f'<div style="height: {int(screens * 900)}px"><p>Text of the chapter.</p></div>'


def png_bytes(width: int = 4, height: int = 4) -> bytes:
    """A valid RGB PNG, solid colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + b"\x20\x60\xa0" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def page(title: str, body: str, head: str = "") -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<title>{title}</title>{head}</head>\n<body>\n<h1 id="top">{title}</h1>\n'
        f"{body}\n</body></html>\n"
    )


# page -> (html, expected failure kinds; empty set means the page must pass)
def fixture_pages() -> dict[str, tuple[str, set[str]]]:
    return {
        # fine when the site is served at the root; leaves the site under a sub-path
        "root_link.html": (
            page("Root-absolute link", '<p>Back to <a href="/index.html">the start</a>.</p>'),
            set(),
        ),
        "index.html": (
            page(
                "Good page",
                '<p>Inline <span class="math">\\(a^2 + b^2 = c^2\\)</span> and display:</p>\n'
                '<div class="math">\\[\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\\]</div>\n'
                "<p>Plain delimiters too: $$\\int_0^1 x\\,dx = \\tfrac12$$</p>\n"
                "<p>Autoloaded extension: \\(\\cancel{x}\\)</p>\n"
                '<pre><code>s = r"$$x$$ \\begin{align} \\(y\\)"</code></pre>\n'
                '<div class="cell_input"><div class="highlight"><pre>t = "\\[z\\]"</pre></div></div>\n'
                "<p>Inline code <code>\\(raw\\)</code> is fine.</p>\n"
                # near misses of a doubled reference word: two cells, a word and a number
                "<table><tr><td>Table</td><td>Table 2 lists the rows.</td></tr></table>\n"
                '<p>By Theorem <a href="#top">13.1</a> and <a href="#top">Lemma 2</a>, Lemma 3 '
                "holds; the figure. Figure 4 shows it.</p>\n"
                # MathJax's hidden MathML copy of these is wider than what is drawn: no overflow
                '<p style="max-width: 420px">Two divergences, <span class="math">\\(\\delta_+(k) = '
                'H_\\varepsilon(V_k\\,\\|\\,V_{k-1})\\)</span> and <span class="math">'
                "\\(H_\\varepsilon(V_{k-1}\\,\\|\\,V_k)\\)</span>, side by side.</p>\n"
                '<figure><img src="_images/dot.png" alt="a small solid blue square, the test image" '
                'width="40"><figcaption>A blue square: the figure of this test page.</figcaption></figure>\n'
                '<p><a href="#top">top</a> <a href="other.html#section-2">other</a> '
                '<a href="sub/">folder index</a> <a href="https://example.org/">external</a></p>',
                head=MATHJAX_TAG,
            ),
            set(),
        ),
        "other.html": (
            page(
                "Other good page",
                '<h2 id="section-2">Section 2</h2><p>No math here.</p><p><a href="index.html">home</a></p>',
            ),
            set(),
        ),
        "sub/index.html": (
            page(
                "Nested page",
                '<p>Nested <span class="math">\\(x_1\\)</span>.</p><p><a href="../index.html#top">up</a></p>',
                head=MATHJAX_TAG.replace('"_mathjax/', '"../_mathjax/'),
            ),
            set(),
        ),
        "broken_image.html": (
            page("Broken image", '<p><img src="_images/missing.png" alt="missing"></p>'),
            {"image", "request", "figure"},
        ),
        "bare_figure.html": (
            page("Figure without caption", '<p><img src="_images/dot.png" alt="3f9a0c1d2e4b5a6978e0f1.png"></p>'),
            {"figure"},
        ),
        "wide_code.html": (
            page(
                "Code wider than its column",
                '<div style="overflow-x: auto; max-width: 600px"><pre>' + "x = 1; " * 150 + "</pre></div>",
            ),
            {"overflow"},  # with --lenient-overflow, a warning in the report
        ),
        "wide_formula.html": (
            page(
                "Formulas wider than their column",
                '<div style="max-width: 300px; overflow-x: auto">'
                + display_eq(40)
                + '<p>Inline: <span class="math">\\('
                + " + ".join(f"y_{{{k}}}" for k in range(30))
                + "\\)</span>.</p></div>",
                head=MATHJAX_TAG,
            ),
            {"overflow", "math-clipped"},
        ),
        "wide_on_a_phone.html": (
            page("Fits a desktop, not a phone", '<div style="width: 700px">a box 700 pixels wide</div>'),
            {"overflow-narrow"},
        ),
        "broken_link.html": (
            page("Broken link", '<p><a href="chapter-that-does-not-exist.html">gone</a></p>'),
            {"link"},
        ),
        "bad_anchor.html": (
            page("Bad anchors", '<p><a href="#no-such-id">here</a> <a href="other.html#no-such-section">there</a></p>'),
            {"anchor"},
        ),
        "raw_tex.html": (
            page("MathJax missing", "<p>Display math that nobody typesets: $$x$$</p>"),
            {"mathjax", "raw-tex", "tex-text"},
        ),
        "cdn_mathjax.html": (
            page(
                "MathJax from a CDN",
                '<p><span class="math">\\(y\\)</span></p>',
                head='<script defer src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>',
            ),
            {"external", "mathjax", "raw-tex"},
        ),
        "tex_error.html": (
            page("TeX error", '<p><span class="math">\\(\\frac{1}\\)</span></p>', head=MATHJAX_TAG),
            {"math-error"},
        ),
        # TeX that MathJax never saw: a title with math in a link's text, a macro, a $
        "tex_in_text.html": (
            page(
                "TeX in the text",
                '<nav><a href="#top">Sample size \\sqrt s in the title</a></nav>'
                '<p>See <a href="#top">(\\eps,\\delta)-DP</a> and the mean $\\mu$.</p>'
                '<p>Typeset: <span class="math">\\(\\sqrt{s}\\)</span>.</p>',
                head=MATHJAX_TAG,
            ),
            {"tex-text"},
        ),
        "doubled_words.html": (
            page(
                "Doubled reference words",
                '<p>By Theorem <a href="#top">Theorem 13.1</a> the bound holds.</p>'
                '<p>Solve exercise <a href="#top"><span>Exercise 4.6</span></a> first; '
                "see Figure figure 2.</p>",
            ),
            {"doubled-word"},
        ),
        # display math on a phone: without the book's script a long equation just runs out of
        # its box; with it, one is scaled to fit and one carries the scroll cue
        "clipped_math.html": (
            page(
                "Equations cut off on a phone",
                display_eq(13) + display_eq(30),
                head='<link rel="stylesheet" href="_static/book.css">' + MATHJAX_TAG,
            ),
            {"math-clipped"},
        ),
        # a figure squeezed into a narrow box on a phone: its text is smaller than checked for
        "narrow_figure.html": (
            page(
                "A figure shown too narrow",
                '<figure><div style="width: 200px"><img src="_images/wide.png" alt="a wide solid blue '
                'bar, the test image of a squeezed figure" style="max-width: 100%"></div><figcaption>A '
                "wide blue bar squeezed into a narrow box.</figcaption></figure>",
            ),
            {"figure-narrow"},
        ),
        "fitted_math.html": (
            page(
                "Equations fitted to a phone",
                display_eq(10) + display_eq(13) + display_eq(30),
                head=BOOK_ASSETS + MATHJAX_TAG,
            ),
            set(),
        ),
        # teaching pages and their length budget (chapters of TOC)
        "notebooks/01_short.html": (
            page(
                "A teaching page within budget",
                spacer(2) + code_cell(6) + spacer(1) + '<figure><img src="../_images/dot.png" alt="a small solid '
                'blue square, the test image" width="40"><figcaption>A blue square: the figure of this '
                "page.</figcaption></figure>",
            ),
            set(),
        ),
        "notebooks/01_short_reproduction.html": (
            page("A reproduction page: no budget", spacer(30) + code_cell(40)),
            set(),
        ),
        "notebooks/02_long.html": (page("A teaching page too long", spacer(30)), {"page-length"}),
        "notebooks/03_code_share.html": (
            page("Too much visible code", "".join(spacer(0.2) + code_cell(20) for _ in range(4))),
            {"code-share"},
        ),
        "notebooks/04_long_cell.html": (
            page("A code cell too long", spacer(6) + code_cell(30)),
            {"code-cell"},
        ),
        "notebooks/05_pending.html": (
            page("A chapter not yet split: pending", spacer(30) + code_cell(30)),
            set(),
        ),
        "notebooks/06_medium.html": (
            # a folded (hide-input) cell and a collapsed solution count neither as visible code nor
            # as a long cell
            page("Within budget, 18 screens", spacer(18) + folded_code_cell(60) + collapsed_solution(50)),
            set(),
        ),
        "notebooks/07_medium.html": (page("Within budget, 18 screens too", spacer(18)), set()),
        "notebooks/A_appendix.html": (page("An appendix: no budget", spacer(30)), set()),
        "js_error.html": (
            page("Script error", "<p>text</p><script>throw new Error('selftest boom')</script>"),
            {"pageerror"},
        ),
        # Never visited: Sphinx internals and asset folders.
        "genindex.html": (page("Index", '<img src="nope.png">'), set()),
        "search.html": (page("Search", '<a href="nope.html">x</a>'), set()),
        "_static/widget.html": (page("Asset", '<img src="nope.png">'), set()),
        "_sources/page.html": (page("Source", "$$raw$$"), set()),
    }


SKIPPED = {"genindex.html", "search.html", "_static/widget.html", "_sources/page.html"}


def ensure_mathjax(mathjax: Path) -> Path:
    if not (mathjax / "tex-chtml.js").is_file():
        print(f"selftest: {mathjax} missing, running {FETCH.name}", flush=True)
        subprocess.run(["bash", str(FETCH), str(mathjax)], check=True)
    return mathjax


def build_site(site: Path, mathjax: Path) -> None:
    shutil.copytree(mathjax, site / "_mathjax")
    (site / "_static").mkdir()
    for name in ("book.css", "mathfit.js"):
        shutil.copy(STATIC / name, site / "_static" / name)
    (site / "_images").mkdir()
    (site / "_images" / "dot.png").write_bytes(png_bytes())
    (site / "_images" / "wide.png").write_bytes(png_bytes(800, 10))
    for rel, (html, _) in fixture_pages().items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")


def run_checker(site: Path, report: Path, shots: Path, *extra: str) -> tuple[int, dict]:
    toc = site.parent / "_toc.yml"
    cmd = [sys.executable, str(CHECKER), str(site), "--screenshots", str(shots), "--report", str(report)]
    cmd += ["--toc", str(toc), *extra]
    print("selftest: $ " + " ".join(cmd[1:]), flush=True)
    proc = subprocess.run(cmd, text=True, capture_output=True, timeout=300)
    print("    " + proc.stdout.rstrip().replace("\n", "\n    "), flush=True)
    if proc.stderr.strip():
        print("    stderr: " + proc.stderr.rstrip().replace("\n", "\n    "), flush=True)
    if not report.is_file():
        raise AssertionError(f"checker wrote no report (exit {proc.returncode})")
    return proc.returncode, json.loads(report.read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mathjax", type=Path, default=ROOT / "book" / "_mathjax")
    ap.add_argument("--keep", action="store_true", help="keep the temporary site")
    args = ap.parse_args()

    mathjax = ensure_mathjax(args.mathjax.resolve())
    tmp = Path(tempfile.mkdtemp(prefix="browser-check-selftest-"))
    problems: list[str] = []
    try:
        site = tmp / "html"
        site.mkdir()
        build_site(site, mathjax)
        (tmp / "_toc.yml").write_text(TOC, encoding="utf-8")
        pages = fixture_pages()

        # 1. Whole fixture: the good pages pass, each bad page fails for its reason.
        code, report = run_checker(site, tmp / "report.json", tmp / "shots", "--jobs", "2")
        if code != 1:
            problems.append(f"checker exit status {code} on a site with broken pages, expected 1")
        by_page = {p["page"]: p for p in report["pages"]}
        expected_pages = set(pages) - SKIPPED
        if set(by_page) != expected_pages:
            problems.append(f"checked pages {sorted(by_page)} != expected {sorted(expected_pages)}")
        for rel in sorted(expected_pages & set(by_page)):
            want = pages[rel][1]
            got = {f["kind"] for f in by_page[rel]["failures"]}
            if got != want:
                problems.append(
                    f"{rel}: failure kinds {sorted(got)}, expected {sorted(want)}: {by_page[rel]['failures']}"
                )
        good = by_page.get("index.html", {})
        if good.get("mjx_containers", 0) < 4:
            problems.append(f"index.html: expected >= 4 mjx-container, got {good.get('mjx_containers')}")
        if (good.get("mathjax") or {}).get("state") != "done":
            problems.append(f"index.html: MathJax state {good.get('mathjax')}")
        shot = good.get("screenshot")
        if not shot or not Path(shot).is_file() or Path(shot).stat().st_size < 1000:
            problems.append(f"index.html: no usable screenshot ({shot})")
        if report.get("pages_failed") != sum(1 for r in expected_pages if pages[r][1]):
            problems.append(f"pages_failed={report.get('pages_failed')} is wrong")
        # the enforced teaching pages (1, 2, 3, 4, 6, 7) have a median within budget
        if report.get("site_failures"):
            problems.append(f"site failures {report.get('site_failures')}, expected none")
        pending = (by_page.get("notebooks/05_pending.html", {}).get("metrics") or {}).get("budget")
        if pending != "pending":
            problems.append(f"notebooks/05_pending.html: budget {pending!r}, expected 'pending'")
        short = by_page.get("notebooks/01_short.html", {}).get("metrics") or {}
        if not (1 < short.get("screens", 0) < 6 and short.get("longest_code_cell") == 6 and short.get("figures") == 1):
            problems.append(f"notebooks/01_short.html: measured {short}")
        fitted = by_page.get("fitted_math.html", {})
        if fitted.get("math_clipped_narrow") != 0:
            problems.append(f"fitted_math.html: {fitted.get('math_clipped_narrow')} equations clipped")

        # 2. Only good pages (plus an explicitly allowed script error): exit status 0.
        code, report = run_checker(
            site,
            tmp / "report-good.json",
            tmp / "shots-good",
            "--include",
            "index.html",
            "--include",
            "other.html",
            "--include",
            "sub/*",
            "--include",
            "js_error.html",
            "--include",
            "fitted_math.html",
            "--include",
            "notebooks/01_*",
            "--include",
            "notebooks/05_*",
            "--include",
            "notebooks/A_*",
            "--allow-pageerror",
            "selftest boom",
            "--record-metrics",
            str(tmp / "metrics.json"),
        )
        if code != 0:
            problems.append(f"checker exit status {code} on good pages only, expected 0")

        if report.get("pages_checked") != 9:
            problems.append(f"--include selected {report.get('pages_checked')} pages, expected 9")
        record = json.loads((tmp / "metrics.json").read_text()) if (tmp / "metrics.json").is_file() else {}
        recorded = {p["stem"]: (p["kind"], p["status"], p["budget"]) for p in record.get("pages", [])}
        want_record = {
            "01_short": ("teaching", "enforced", "within budget"),
            "01_short_reproduction": ("reproduction", "reproduction", ""),
            "05_pending": ("teaching", "pending", "pending"),
            "A_appendix": ("appendix", "appendix", ""),
        }
        if recorded != want_record:
            problems.append(f"--record-metrics: pages {recorded}, expected {want_record}")
        elif not 29 < record["median_screens"]["pending"] < 32 or record["median_screens"]["enforced"] > 6:
            problems.append(f"--record-metrics: medians {record['median_screens']}")

        # 3. With --lenient-overflow a box wider than its column is a warning, not a failure.
        code, report = run_checker(
            site, tmp / "report-lenient.json", tmp / "shots-lenient", "--include", "wide_*.html", "--lenient-overflow"
        )
        kinds = {f["kind"] for p in report["pages"] for f in p["failures"]}
        warned = {p["page"]: len(p["overflow_warnings"]) for p in report["pages"]}
        wide_pages_warned = warned.get("wide_code.html") and warned.get("wide_formula.html")
        if kinds != {"overflow-narrow", "math-clipped"} or not wide_pages_warned:
            problems.append(f"--lenient-overflow: failure kinds {sorted(kinds)}, warnings {warned}")
        formula = next(p for p in report["pages"] if p["page"] == "wide_formula.html")
        if formula.get("overflowing_boxes") != 2:
            problems.append(f"wide_formula.html: {formula.get('overflowing_boxes')} boxes flagged, expected 2")

        # 4. Served under a sub-path, as a project page is: relative links still work, a
        #    root-absolute one leaves the site and fails.
        code, report = run_checker(
            site,
            tmp / "report-subpath.json",
            tmp / "shots-subpath",
            "--base-path",
            "/book/",
            "--include",
            "index.html",
            "--include",
            "other.html",
            "--include",
            "root_link.html",
        )
        by_kind = {p["page"]: {f["kind"] for f in p["failures"]} for p in report["pages"]}
        expected_kinds = {"index.html": set(), "other.html": set(), "root_link.html": {"subpath"}}
        if code != 1 or by_kind != expected_kinds:
            problems.append(f"--base-path: exit {code}, failure kinds {by_kind}, expected {expected_kinds}")

        # 5. Teaching pages each within budget whose median is not: the site fails.
        code, report = run_checker(
            site,
            tmp / "report-median.json",
            tmp / "shots-median",
            "--include",
            "notebooks/06_*",
            "--include",
            "notebooks/07_*",
        )
        page_kinds = {f["kind"] for p in report["pages"] for f in p["failures"]}
        site_kinds = [f["kind"] for f in report.get("site_failures", [])]
        if code != 1 or page_kinds or site_kinds != ["median-length"]:
            problems.append(f"median rule: exit {code}, page failures {page_kinds}, site failures {site_kinds}")
    finally:
        if args.keep:
            print(f"selftest: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    if problems:
        print("selftest: FAILED")
        for p in problems:
            print(f"  - {p}")
        return 1
    print(
        "selftest: OK (good pages pass; broken image, broken link, bad anchor, raw TeX, "
        "CDN request, TeX error, script error, overflow at both widths (code and formulas, "
        "the latter measured as drawn), a figure without caption or alt text, a link "
        "that leaves the sub-path the site is served under, TeX left in the text, doubled "
        "reference words, display math cut off on a phone, a figure shown narrower on a "
        "phone than its text was checked for, and teaching pages over their "
        "length budget (page, visible code, code cell, median) are all flagged; pending "
        "chapters are measured, not failed)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
