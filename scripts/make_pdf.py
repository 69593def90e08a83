"""Print the whole book to one PDF: ``_build/pdf/book.pdf``.

Usage::

    python scripts/make_pdf.py                # build, then print
    python scripts/make_pdf.py --no-build     # print the existing single-page build again
    make pdf                                  # the same, then tests/test_pdf.py checks the PDF

The pipeline:

1. Build the book from the notebooks' **stored** outputs (nothing is executed: the
   configuration is written by ``scripts/stored_outputs_config.py``) with Sphinx's
   ``singlehtml`` builder into ``_build/pdf/_build/singlehtml/``. ``book/_ext/print_edition.py``
   makes that builder work with sphinx-proof, sphinx-exercise and myst-nb, and links
   the print stylesheet ``book/_ext/static/print.css``.
2. Copy the single page to the root of that build as ``book.html`` (the builder writes it
   next to the root document, ``book/intro.html``, but links its assets as if it were at
   the root), turning its links to itself into in-page anchors.
3. Serve the build on 127.0.0.1 and open it in Debian's Chromium through Playwright, as
   ``scripts/browser_check.py`` does; wait until MathJax has typeset every formula
   (MathJax is served from the site itself, see ``make mathjax``) and every image has
   loaded, unfold the folded cells and solutions, shrink the few formulas and tables
   wider than the text (MathJax 3 cannot break a formula across lines), check that
   nothing is still too wide or clipped, and print with ``page.pdf()``: A4, page
   numbers in the footer, the PDF outline built from the headings. What the page
   reported goes to ``_build/pdf/book.json`` for ``tests/test_pdf.py``.
4. Copy the PDF into ``_build/html/`` when a site build is there (``make serve`` then
   serves it as ``/book.pdf``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_check import (  # noqa: E402
    CHROMIUM_ARGS,
    JS_SETTLE_IMAGES,
    JS_WAIT_MATHJAX,
    SiteServer,
    find_chromium,
)
from stored_outputs_config import stored_outputs_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "pdf"
SITE = OUT / "_build" / "singlehtml"
PDF = OUT / "book.pdf"
#: What the print found (formulas, images, shrunk and overflowing elements), for tests/test_pdf.py;
#: a PDF written elsewhere (--output) gets its report next to it.
REPORT = OUT / "book.json"
HTML_SITE = ROOT / "_build" / "html"
PAGE = "book.html"
PRINT_CSS = ROOT / "book" / "_ext" / "static" / "print.css"

#: Page sizes (width in mm) and margins of the PDF; the footer with the page number sits
#: in the bottom margin. The left and right margins are those of book/_ext/static/print.css.
PAPER_WIDTH_MM = {"A4": 210.0, "Letter": 215.9}
SIDE_MARGIN_MM = 14.0
TOP_MARGIN, BOTTOM_MARGIN, SIDE_MARGIN = "16mm", "18mm", f"{SIDE_MARGIN_MM:g}mm"
FOOTER = (
    f'<div style="font-size:8px; width:100%; padding:0 {SIDE_MARGIN}; color:#555; '
    'font-family:sans-serif; display:flex; justify-content:space-between;">'
    "<span>{title}</span>"
    '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>'
)

#: Unfold everything a reader of the site opens by a click: hidden code cells
#: (``<details>``) and the toggled solution admonitions of sphinx-togglebutton.
JS_UNFOLD = """
() => {
  let n = 0;
  for (const d of document.querySelectorAll("details")) { if (!d.open) { d.open = true; n++; } }
  for (const el of document.querySelectorAll(".toggle-hidden")) {
    el.classList.remove("toggle-hidden"); n++;
  }
  for (const b of document.querySelectorAll(".toggle-button-hidden")) {
    b.classList.remove("toggle-button-hidden");
  }
  return n;
}
"""

#: Load every image now (lazy images would otherwise be missing from the print) and
#: report those that did not load.
JS_LOAD_IMAGES = (
    JS_SETTLE_IMAGES
    + """  return {total: imgs.length,
          broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0))
                      .map(i => i.getAttribute("src") || "")};
}
"""
)

JS_MATH_ERRORS = """
() => Array.from(document.querySelectorAll("mjx-merror")).map(
  e => (e.getAttribute("data-mjx-error") || e.textContent || "").trim().slice(0, 120))
"""

#: MathJax 3 cannot break a formula across lines, and a table whose cells cannot wrap
#: enough keeps its width: shrink (CSS zoom) each formula or table wider than the block
#: that holds it, so that nothing runs into the margin or is cut off. Run with the print
#: stylesheet active and the viewport as wide as the printed text.
JS_FIT_WIDTH = """
() => {
  const blockOf = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const d = getComputedStyle(p).display;
      if (d === "block" || d === "list-item" || d === "table-cell" || d === "flow-root") return p;
    }
    return document.body;
  };
  // the content box of the block that holds el, in viewport coordinates
  const room = (el) => {
    const box = blockOf(el);
    const r = box.getBoundingClientRect(), cs = getComputedStyle(box);
    const left = r.left + box.clientLeft + parseFloat(cs.paddingLeft);
    return {left, right: left + box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)};
  };
  // what el draws: a display formula is a full-width block whose glyphs (mjx-c) may
  // stick out on either side, so its extent is the union of its glyphs' boxes
  const extent = (el) => {
    const r = el.getBoundingClientRect();
    // scrollWidth is in the element's own (unzoomed) pixels, the box in the viewport's
    const scale = el.offsetWidth > 0 ? r.width / el.offsetWidth : 1;
    let left = r.left, right = Math.max(r.right, r.left + el.scrollWidth * scale);
    if (el.tagName === "MJX-CONTAINER") {
      left = Infinity; right = -Infinity;
      for (const g of el.querySelectorAll("mjx-c, mjx-utext")) {
        const b = g.getBoundingClientRect();
        if (b.width > 0) { left = Math.min(left, b.left); right = Math.max(right, b.right); }
      }
      if (left === Infinity) { left = r.left; right = r.right; }
    }
    return {left, right};
  };
  const fitted = [];
  for (const el of document.querySelectorAll("mjx-container, table, pre")) {
    if (el.parentElement && el.parentElement.closest("mjx-container")) continue;
    const box = room(el);
    // a display formula shares its line with its equation number
    let others = 0;
    if (el.tagName === "MJX-CONTAINER" && el.parentElement.matches("div.math")) {
      for (const sib of el.parentElement.children) {
        if (sib !== el) others += sib.getBoundingClientRect().width;
      }
    }
    const width = box.right - box.left - others;
    if (width < 40) continue;
    let zoom = 1;
    for (let pass = 0; pass < 4; pass++) {
      const e = extent(el);
      if (e.left >= box.left - 0.5 && e.right <= box.right + 0.5) break;
      zoom = Math.min(zoom * (width - 2) / (e.right - e.left), zoom * 0.97);
      el.style.zoom = zoom.toFixed(4);
    }
    if (zoom < 1) {
      const text = (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 60);
      fitted.push({tag: el.tagName.toLowerCase(), zoom: +zoom.toFixed(3), text});
    }
  }
  return fitted;
}
"""

#: After fitting: what would still be cut off or run into the margin on paper. (1) every
#: formula, table, code block, output and image lies within the article's text width;
#: (2) no element of the article clips its content (overflow hidden/auto/scroll with
#: content wider than the element), since on paper nothing can be scrolled into view.
JS_AUDIT = """
() => {
  const article = document.querySelector(".bd-article") || document.body;
  const a = article.getBoundingClientRect();
  const label = (el) => (el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
      ? "." + el.className.trim().split(/\\s+/).join(".") : "")).slice(0, 60)
      + ": " + (el.textContent || el.getAttribute("src") || "").trim().replace(/\\s+/g, " ").slice(0, 70);
  const wide = [], clipped = [];
  const sel = "mjx-container, table, pre, img, .cell_output, div.highlight, .output, figure";
  for (const el of document.querySelectorAll(sel)) {
    if (el.parentElement && el.parentElement.closest("mjx-container")) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const scale = el.offsetWidth > 0 ? r.width / el.offsetWidth : 1;
    let left = r.left, right = r.left + Math.max(r.width, el.scrollWidth * scale);
    if (el.tagName === "MJX-CONTAINER") {
      left = r.left; right = r.left;
      for (const g of el.querySelectorAll("mjx-c, mjx-utext")) {
        const b = g.getBoundingClientRect();
        if (b.width > 0) { left = Math.min(left, b.left); right = Math.max(right, b.right); }
      }
    }
    if (left < a.left - 1 || right > a.right + 1) wide.push(label(el));
  }
  for (const el of article.querySelectorAll("*")) {
    if (el.tagName.startsWith("MJX-") && el.tagName !== "MJX-CONTAINER") continue;
    if (el.scrollWidth <= el.clientWidth + 1) continue;
    const ox = getComputedStyle(el).overflowX;
    if (ox !== "visible" && el.clientWidth > 0) clipped.push(label(el));
  }
  return {wide, clipped};
}
"""


def log(message: str) -> None:
    print(f"make_pdf: {message}", flush=True)


def build_single_page(strict: bool) -> None:
    """Build the book from its stored outputs with the ``singlehtml`` builder."""
    OUT.mkdir(parents=True, exist_ok=True)
    config = OUT / "config-stored.yml"
    with open(config, "w", encoding="utf-8") as fh:
        yaml.safe_dump(stored_outputs_config(ROOT / "_config.yml"), fh, sort_keys=False, allow_unicode=True)
    jb = Path(sys.executable).parent / "jupyter-book"
    flags = ["-n", "-W", "--keep-going"] if strict else ["-n", "--keep-going"]
    cmd = [str(jb), "build", str(ROOT), *flags, "--config", str(config), "--builder", "singlehtml"]
    if subprocess.run([*cmd, "--path-output", str(OUT)], cwd=ROOT).returncode != 0:
        hint = "" if not strict else " (warnings are errors; --no-strict, or PDFFLAGS=--no-strict, prints anyway)"
        raise SystemExit(f"make_pdf: the single-page build failed{hint}")


def root_document(site: Path) -> str:
    """The page the builder wrote the book into, from the redirect in ``index.html``."""
    index = (site / "index.html").read_text(encoding="utf-8")
    match = re.search(r'url=([^"\s>]+\.html)', index)
    if not match:
        raise SystemExit(f"make_pdf: no redirect to the book's page in {site / 'index.html'}")
    return match.group(1)


def place_page(site: Path) -> Path:
    """Copy the single page to the root of the build, with its self-links made in-page."""
    doc = root_document(site)
    html = (site / doc).read_text(encoding="utf-8")
    html = html.replace(f'href="{doc}#', 'href="#').replace(f'href="{doc}"', 'href="#"')
    page = site / PAGE
    page.write_text(html, encoding="utf-8")
    # the print stylesheet as it is now, so that --no-build picks up a change to it
    shutil.copy2(PRINT_CSS, site / "_static" / PRINT_CSS.name)
    return page


def book_config() -> dict:
    with open(ROOT / "_config.yml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def edition_line() -> str:
    """Edition, author, date of printing and the commit printed, for the title page."""
    from importlib.metadata import version

    line = (
        f"Edition {version('fedfreq')} (the book and the fedfreq package) · "
        f"{book_config().get('author', '')} · printed {datetime.date.today().isoformat()}"
    )
    try:
        git = ["git", "-C", str(ROOT)]
        commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        status = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return line
    line += f" from commit {commit.stdout.strip()}"
    return line + (" with local changes" if status.stdout.strip() else "")


#: The title page: the single page's print-only title, with a line under it.
JS_TITLE_PAGE = """
(line) => {
  const title = document.querySelector("#jb-print-docs-body > h1");
  if (!title) return false;
  const p = document.createElement("p");
  p.className = "print-edition";
  p.textContent = line;
  title.after(p);
  return true;
}
"""


def print_pdf(site: Path, pdf: Path, paper: str, timeout: float, tagged: bool = True) -> dict:
    """Open the single page in Chromium, wait for MathJax and images, and print it.

    Returns what the page reported: formulas and TeX errors, images, the elements shrunk
    to the text width, and any element still wider than the text or clipping its content.
    """
    chromium = find_chromium(None)
    if chromium is None:
        raise SystemExit("make_pdf: chromium not found (make chromium installs it)")
    from playwright.sync_api import sync_playwright

    with SiteServer(site) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            # the viewport is as wide as the printed text, so that what the page measures
            # on screen is what the print lays out
            text_width_px = round((PAPER_WIDTH_MM[paper] - 2 * SIDE_MARGIN_MM) * 96 / 25.4)
            page = browser.new_page(viewport={"width": text_width_px, "height": 1200})
            own = f"{server.origin}/"
            # offline: nothing but the local server is reachable, and nothing else is asked for
            page.route(
                "**/*",
                lambda route: route.continue_() if route.request.url.startswith(own) else route.abort(),
            )
            started = time.monotonic()
            page.goto(f"{server.origin}/{PAGE}", wait_until="load", timeout=timeout * 1000)
            log(f"page loaded in {time.monotonic() - started:.0f} s")
            mathjax = page.evaluate(JS_WAIT_MATHJAX, timeout * 1000)
            if mathjax["state"] != "done":
                raise SystemExit(f"make_pdf: MathJax did not finish typesetting: {mathjax['state']}")
            formulas = page.evaluate("() => document.querySelectorAll('mjx-container').length")
            errors = page.evaluate(JS_MATH_ERRORS)
            log(f"MathJax {mathjax['version']} typeset {formulas} formulas ({len(errors)} errors)")
            for error in errors:
                log(f"  TeX error: {error}")
            images = page.evaluate(JS_LOAD_IMAGES, timeout * 1000)
            if images["broken"]:
                raise SystemExit(f"make_pdf: images did not load: {images['broken'][:5]}")
            unfolded = page.evaluate(JS_UNFOLD)
            page.evaluate(JS_TITLE_PAGE, edition_line())
            log(f"{images['total']} images loaded, {unfolded} folded blocks opened")
            page.emulate_media(media="print")
            fitted = page.evaluate(JS_FIT_WIDTH)
            kinds = sorted({f["tag"] for f in fitted})
            smallest = min((f["zoom"] for f in fitted), default=1.0)
            log(
                f"{len(fitted)} wide formulas/tables shrunk to the text width "
                f"({', '.join(kinds) or 'none'}; smallest scale {smallest:.2f})"
            )
            audit = page.evaluate(JS_AUDIT)
            for item in fitted:
                log(f"  {item['tag']} at {item['zoom']:.2f}: {item['text']}")
            for kind in ("wide", "clipped"):
                for text in audit[kind]:
                    log(f"  {kind}: {text}")
            pdf.parent.mkdir(parents=True, exist_ok=True)
            started = time.monotonic()
            page.pdf(
                path=str(pdf),
                format=paper,
                margin={"top": TOP_MARGIN, "bottom": BOTTOM_MARGIN, "left": SIDE_MARGIN, "right": SIDE_MARGIN},
                print_background=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER.format(title=book_config().get("title", "")),
                outline=True,
                tagged=tagged,
            )
            log(f"printed in {time.monotonic() - started:.0f} s")
        finally:
            browser.close()
    return {
        "paper": paper,
        "formulas": formulas,
        "tex_errors": errors,
        "images": images["total"],
        "unfolded": unfolded,
        "shrunk": fitted,
        "too_wide": audit["wide"],
        "clipped": audit["clipped"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-build", action="store_true", help="print the existing single-page build")
    ap.add_argument("--no-strict", action="store_true", help="do not turn build warnings into errors")
    ap.add_argument("--paper", choices=sorted(PAPER_WIDTH_MM), default="A4")
    ap.add_argument("--output", type=Path, default=PDF, help=f"the PDF (default {PDF.relative_to(ROOT)})")
    ap.add_argument(
        "--untagged",
        action="store_true",
        help="leave out the PDF's structure tree (a file about a third the size, less accessible)",
    )
    ap.add_argument("--timeout", type=float, default=600, help="seconds to wait for loading and MathJax")
    args = ap.parse_args(argv)

    started = time.monotonic()
    if not args.no_build:
        build_single_page(strict=not args.no_strict)
    if not (SITE / "index.html").is_file():
        raise SystemExit(f"make_pdf: no single-page build in {SITE}; run without --no-build")
    page = place_page(SITE)
    log(f"single page: {page.relative_to(ROOT)} ({page.stat().st_size / 1e6:.1f} MB)")
    report = print_pdf(SITE, args.output, args.paper, args.timeout, tagged=not args.untagged)
    log(f"wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB)")
    report["pdf"] = str(args.output)
    report_path = REPORT if args.output.resolve() == PDF else args.output.with_suffix(".json")
    report_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if HTML_SITE.is_dir() and args.output.resolve() == PDF:
        shutil.copy2(args.output, HTML_SITE / "book.pdf")
        log(f"copied to {(HTML_SITE / 'book.pdf').relative_to(ROOT)}")
    log(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
