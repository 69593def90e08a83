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

MATHJAX_TAG = '<script defer src="_mathjax/tex-chtml.js"></script>'


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
                '<div style="max-width: 300px; overflow-x: auto"><div class="math">\\['
                + " + ".join(f"x_{{{k}}}^2" for k in range(40))
                + '\\]</div><p>Inline: <span class="math">\\('
                + " + ".join(f"y_{{{k}}}" for k in range(30))
                + "\\)</span>.</p></div>",
                head=MATHJAX_TAG,
            ),
            {"overflow"},
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
            {"mathjax", "raw-tex"},
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
    (site / "_images").mkdir()
    (site / "_images" / "dot.png").write_bytes(png_bytes())
    for rel, (html, _) in fixture_pages().items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")


def run_checker(site: Path, report: Path, shots: Path, *extra: str) -> tuple[int, dict]:
    cmd = [sys.executable, str(CHECKER), str(site), "--screenshots", str(shots), "--report", str(report), *extra]
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
            "--allow-pageerror",
            "selftest boom",
        )
        if code != 0:
            problems.append(f"checker exit status {code} on good pages only, expected 0")

        if report.get("pages_checked") != 4:
            problems.append(f"--include selected {report.get('pages_checked')} pages, expected 4")

        # 3. With --lenient-overflow a box wider than its column is a warning, not a failure.
        code, report = run_checker(
            site, tmp / "report-lenient.json", tmp / "shots-lenient", "--include", "wide_*.html", "--lenient-overflow"
        )
        kinds = {f["kind"] for p in report["pages"] for f in p["failures"]}
        warned = {p["page"]: len(p["overflow_warnings"]) for p in report["pages"]}
        if kinds != {"overflow-narrow"} or not warned.get("wide_code.html") or not warned.get("wide_formula.html"):
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
        "the latter measured as drawn), a figure without caption or alt text, and a link "
        "that leaves the sub-path the site is served under are all flagged)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
