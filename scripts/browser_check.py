#!/usr/bin/env python3
"""Render every page of a built HTML site in headless Chromium and check it.

Usage:
    .venv/bin/python scripts/browser_check.py _build/html --screenshots _build/screenshots

The site directory is served on 127.0.0.1 (free port) for the duration of the run.
Every content page (Sphinx internals such as genindex/search and the ``_*`` asset
folders are skipped) is loaded in Debian's Chromium through Playwright and checked:

* HTTP 200, no uncaught JavaScript errors, no failed requests to the local server;
* no request leaves 127.0.0.1 (all other hosts are blocked and reported: the book
  must work fully offline, e.g. MathJax and fonts must not come from a CDN);
* pages whose HTML contains math are typeset by MathJax: at least one
  ``mjx-container``, no TeX errors, no raw TeX delimiters left in the text outside
  code/pre blocks and notebook input cells;
* every ``<img>`` loaded (``naturalWidth > 0``);
* every internal link points to an existing file, and ``#fragment`` anchors exist
  (same-page anchors in the live DOM, cross-page anchors in the target's HTML);
* layout: the page never scrolls sideways, at the desktop width (``--width``) nor at a
  phone's (``--narrow-width``, 390 px; a second, lighter pass), and no box of the content
  is wider than its column at the desktop width (a code line, an output, a table or a
  formula that scrolls inside its own box or sticks out of it; formulas are measured by
  what MathJax draws, not by its hidden copy for screen readers). ``--lenient-overflow``
  lists such boxes in the report as warnings instead of failing the page;
* figures: every image of the page's content is in a ``<figure>`` with a caption, and
  has alt text that says something (at least 20 characters, not a file name);
* text: after MathJax has run, no TeX command (``\\sqrt``, ``\\eps``, ...) and no ``$`` is
  left in the rendered text outside typeset math (code, ``pre`` and notebook input cells
  excepted), e.g. a title with math shown raw in the sidebar or in a link's text; and no
  reference word is doubled ("Theorem Theorem 13.1", "Exercise exercise 4.6"), also when
  the second word is a link's text;
* display math on a phone: at the narrow width, a display equation wider than its box is
  either scaled down to fit or carries a visible scroll cue (the book's ``mathfit.js``
  does one or the other);
* figures on a phone: at the narrow width, every image of the content is shown at least
  ``PHONE_FIGURE_PX`` wide (or at its own width if smaller), the width at which
  ``fedfreq.display`` checks, when a figure is drawn, that its text is at least 10 px high;
* teaching pages keep to their length budget at the desktop width: at most
  ``MAX_SCREENS`` screens (document height / window height), visible code (the height of
  the code-cell inputs not folded away) at most ``MAX_CODE_SHARE`` of the page, no visible
  code cell longer than ``MAX_CELL_LINES`` lines, and over all such pages a median of at
  most ``MAX_MEDIAN_SCREENS`` screens (held once no chapter is pending). Until the book
  reaches that median, ``--median-record`` holds it to a ratchet: the median may not
  exceed the one recorded in ``book/page_metrics.json`` (its ``median_ceiling``, which a
  new record can only lower, plus ``MEDIAN_SLACK`` for another machine's layout), and the
  distance to the target is printed. Which notebook
  is a teaching page is read from the table of contents (``--toc``, see ``book/_ext/layout.py``); a chapter without a
  reproduction page is not yet split: its numbers are reported as pending, not enforced.
  ``--record-metrics`` writes these numbers for every chapter, appendix and reproduction
  page (``book/page_metrics.json``, rendered on the execution statistics page);
* with ``--screenshots DIR``, a full-page PNG screenshot of each page is written there.

One line per page is printed, followed by a summary; a JSON report is written
(default: next to the site directory, e.g. ``_build/browser_report.json``).
Exit status: 0 all pages OK, 1 some page failed (or the median length of the teaching
pages is over budget), 2 usage/environment error.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import functools
import html
import http.client
import http.server
import json
import os
import re
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, unquote, urldefrag, urljoin, urlsplit

ROOT = Path(__file__).resolve().parent.parent

#: The length budget of a teaching page at the desktop width (see the module docstring).
MAX_SCREENS = 25
MAX_MEDIAN_SCREENS = 15
MAX_CODE_SHARE = 0.20
MAX_CELL_LINES = 25
#: what a recorded median ceiling allows for layout differences between machines, screens
MEDIAN_SLACK = 0.5

#: Words that name what a cross-reference points to: the role already renders
#: "Theorem 13.1", so "Theorem {prf:ref}`...`" reads "Theorem Theorem 13.1".
REFERENCE_WORDS = (
    "theorem",
    "lemma",
    "corollary",
    "proposition",
    "definition",
    "exercise",
    "solution",
    "figure",
    "fig.",
    "table",
    "section",
    "chapter",
    "equation",
    "eq.",
    "appendix",
    "algorithm",
    "example",
    "remark",
    "assumption",
    "claim",
    "part",
)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# Pages that are Sphinx machinery rather than book content.
EXCLUDED_NAMES = {"genindex.html", "search.html", "py-modindex.html"}
# Any path component starting with one of these prefixes is skipped
# (_static, _sources, _images, _downloads, _sphinx_design_static, .doctrees, ...).
EXCLUDED_DIR_PREFIXES = ("_", ".")

TEX_MARKERS = ("\\(", "\\[", "$$", "\\begin{")

_STRIP_BLOCKS_RE = re.compile(r"<(script|style|pre|code|textarea|template)\b[^>]*>.*?</\1\s*>", re.S | re.I)
_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_MATH_CLASS_RE = re.compile(r"""class\s*=\s*["'][^"']*(?<![\w-])math(?![\w-])[^"']*["']""", re.I)
_REFRESH_RE = re.compile(
    r"""<meta[^>]+http-equiv\s*=\s*["']?refresh["']?[^>]*content\s*=\s*["']\s*\d+\s*;\s*url\s*=\s*([^"'>]+)""",
    re.I,
)
_ID_RE = re.compile(r"""\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)


# --------------------------------------------------------------------------- server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static file handler that behaves like a plain static host.

    Directories without ``index.html`` are 404 (no auto-generated listings), and
    nothing is logged to stderr.
    """

    def list_directory(self, path):  # noqa: D401 - http.server API
        self.send_error(404, "No index.html in directory")
        return None

    def log_message(self, format, *args):  # noqa: A002 - http.server API
        pass

    def end_headers(self):
        # Always revalidate so that a second run never sees stale files.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class _SubPathHandler(_QuietHandler):
    """Serves the site under ``base`` (e.g. ``/fedfreq-book/``), as a project page is
    served; every address outside it is 404."""

    base = "/"

    def translate_path(self, path):
        if not path.startswith(self.base):
            return str(Path(self.directory) / "__outside_the_sub_path__")
        return super().translate_path("/" + path[len(self.base) :])


def normal_base_path(base: str) -> str:
    """``base`` as ``/a/b/`` (leading and trailing slash), ``/`` for the root."""
    parts = [p for p in base.strip().split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"base path must not contain . or ..; got {base!r}")
    return "/" + "".join(f"{p}/" for p in parts)


class SiteServer:
    def __init__(self, root: Path, base_path: str = "/"):
        self.base_path = normal_base_path(base_path)
        handler_cls = type("_Handler", (_SubPathHandler,), {"base": self.base_path})
        handler = functools.partial(handler_cls, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.host: str = host if isinstance(host, str) else host.decode()
        self.port: int = int(port)
        #: scheme and host, without the sub-path
        self.host_origin = f"http://{self.host}:{self.port}"
        #: where the site starts: the host and the sub-path (no trailing slash)
        self.origin = self.host_origin + self.base_path.rstrip("/")
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def escapes(self, url: str) -> bool:
        """True for an address on this host that lies outside the site's sub-path."""
        return url.startswith(self.host_origin + "/") and not url.startswith(self.origin + "/") and url != self.origin

    def __enter__(self) -> SiteServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


# --------------------------------------------------------------------------- helpers


def find_pages(site: Path, includes: list[str], excludes: list[str]) -> list[str]:
    pages = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        parts = rel.split("/")
        if parts[-1] in EXCLUDED_NAMES:
            continue
        if any(p.startswith(EXCLUDED_DIR_PREFIXES) for p in parts[:-1]):
            continue
        if any("mathjax" in p.lower() for p in parts[:-1]):
            continue
        if any(fnmatch.fnmatch(rel, pat) for pat in excludes):
            continue
        if includes and not any(fnmatch.fnmatch(rel, pat) for pat in includes):
            continue
        pages.append(rel)
    return pages


def source_has_math(raw_html: str) -> bool:
    """True if the page's HTML (outside scripts/code) carries math for MathJax."""
    text = _COMMENT_RE.sub("", raw_html)
    text = _STRIP_BLOCKS_RE.sub("", text)
    if _MATH_CLASS_RE.search(text):
        return True
    return any(marker in text for marker in TEX_MARKERS)


MAX_SHOT_HEIGHT = 24000


def screenshot_name(rel: str) -> str:
    stem = rel[:-5] if rel.endswith(".html") else rel
    return re.sub(r"[^A-Za-z0-9._-]+", "__", stem.replace("/", "__")) + ".png"


class LinkChecker:
    """Checks internal URLs against the local server, caching every answer."""

    def __init__(self, server: SiteServer):
        self.server = server
        self.status: dict[str, int | str] = {}
        self.anchors: dict[str, set[str] | None] = {}

    def _request(self, method: str, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=10)
        try:
            conn.request(method, path or "/")
            resp = conn.getresponse()
            body = resp.read() if method == "GET" else b""
            return resp.status, body
        finally:
            conn.close()

    def check(self, path: str) -> int | str:
        if path not in self.status:
            try:
                self.status[path] = self._request("HEAD", path)[0]
            except OSError as exc:  # pragma: no cover - server is local
                self.status[path] = f"error: {exc}"
        return self.status[path]

    def ids_of(self, path: str) -> set[str] | None:
        """Element ids/names in the HTML at ``path`` (None if not HTML/unreadable)."""
        if path not in self.anchors:
            ids = None
            try:
                status, body = self._request("GET", path)
                if status == 200:
                    text = body.decode("utf-8", "replace")
                    if "<html" in text[:2000].lower() or path.endswith((".html", "/")):
                        ids = {html.unescape(a or b) for a, b in _ID_RE.findall(text)}
            except OSError:  # pragma: no cover
                pass
            self.anchors[path] = ids
        return self.anchors[path]


# ----------------------------------------------------------------------- page scripts

JS_WAIT_MATHJAX = """
async (timeoutMs) => {
  const mj = window.MathJax;
  if (!(mj && mj.startup && mj.startup.promise)) {
    return {state: "absent", version: null};
  }
  const timer = new Promise(r => setTimeout(() => r("timeout"), timeoutMs));
  const state = await Promise.race([
    mj.startup.promise.then(() => "done", e => "error: " + (e && e.message || e)),
    timer,
  ]);
  try { await Promise.race([document.fonts.ready, timer]); } catch (e) {}
  return {state, version: mj.version || null};
}
"""

JS_MATH_STATE = """
(markers) => {
  const SKIP_TAGS = new Set(["PRE", "CODE", "KBD", "SAMP", "SCRIPT", "STYLE", "TEXTAREA",
                             "NOSCRIPT", "TEMPLATE", "MJX-CONTAINER"]);
  const SKIP_CLASSES = ["cell_input", "highlight", "jp-InputArea", "input_area"];
  const skipped = (el) => {
    for (; el; el = el.parentElement) {
      if (SKIP_TAGS.has(el.tagName)) return true;
      if (el.classList && SKIP_CLASSES.some(c => el.classList.contains(c))) return true;
    }
    return false;
  };
  const clip = (s, i) => s.slice(Math.max(0, i - 30), i + 50).replace(/\\s+/g, " ").trim();

  const rawTex = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue;
    if (!text || !markers.some(m => text.includes(m))) continue;
    // text inside .math elements is reported below as "not typeset"
    if (skipped(node.parentElement) || node.parentElement.closest(".math")) continue;
    for (const m of markers) {
      const i = text.indexOf(m);
      if (i >= 0) { rawTex.push(clip(text, i)); break; }
    }
    if (rawTex.length >= 5) break;
  }

  const untypeset = [];
  for (const el of document.querySelectorAll(".math")) {
    if (skipped(el) || el.querySelector("mjx-container")) continue;
    if (el.textContent.trim()) untypeset.push(el.textContent.trim().slice(0, 80));
    if (untypeset.length >= 5) break;
  }

  const errors = Array.from(document.querySelectorAll("mjx-merror")).slice(0, 5).map(
    e => (e.getAttribute("data-mjx-error") || e.textContent || "").trim().slice(0, 120));

  return {
    containers: document.querySelectorAll("mjx-container").length,
    rawTex, untypeset, errors,
  };
}
"""

#: The start of a page function taking ``timeoutMs``: every image loaded eagerly, then a
#: wait until each has loaded or failed (or the timeout); ``imgs`` holds them.
JS_SETTLE_IMAGES = """
async (timeoutMs) => {
  const imgs = Array.from(document.images);
  for (const img of imgs) { if (img.loading === "lazy") img.loading = "eager"; }
  const settle = (img) => img.complete ? Promise.resolve() : new Promise(r => {
    img.addEventListener("load", r, {once: true});
    img.addEventListener("error", r, {once: true});
  });
  await Promise.race([Promise.all(imgs.map(settle)),
                      new Promise(r => setTimeout(r, timeoutMs))]);
"""

JS_IMAGES = (
    JS_SETTLE_IMAGES
    + """  const out = [];
  for (const img of imgs) {
    let decoded = img.naturalWidth > 0;
    if (!decoded && img.complete && (img.currentSrc || img.src)) {
      try { await img.decode(); decoded = true; } catch (e) { decoded = false; }
    }
    out.push({src: img.getAttribute("src") || "", url: img.currentSrc || img.src,
              complete: img.complete, naturalWidth: img.naturalWidth, decoded});
  }
  return out;
}
"""
)

JS_LINKS = """
() => {
  const out = [];
  for (const a of document.querySelectorAll("a[href]")) {
    const raw = a.getAttribute("href");
    const url = a.href;
    if (!url) continue;
    out.push({raw, url});
  }
  return out;
}
"""

#: Layout at the current width: does the page scroll sideways, and (``boxes``) which
#: elements of the content overflow their own box? Images: caption and alt text.
JS_LAYOUT = """
(boxes) => {
  const root = document.querySelector("main") || document.body;
  const describe = (el) => {
    const cls = (el.getAttribute("class") || "").trim().split(/\\s+/).slice(0, 2).join(".");
    const text = (el.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 60);
    return `${el.tagName.toLowerCase()}${cls ? "." + cls : ""} "${text}"`;
  };
  const pageWidth = document.documentElement.scrollWidth, view = window.innerWidth;
  const overflowing = [];
  const note = (el, by) => {
    // report the outermost overflowing element only
    if (!overflowing.some(o => o.el.contains(el))) overflowing.push({el, by});
  };
  if (boxes) {
    // the boxes that can hold something too wide: blocks of code, outputs, tables,
    // figures, paragraphs and list or definition items. Math is judged by what is drawn
    // (below): a formula's scrollWidth also counts MathJax's hidden MathML copy for
    // screen readers, which is clipped to nothing on screen but often wider.
    const CANDIDATES = "pre, div.highlight, div.cell_output, div.output, table, " +
      "div.pst-scrollable-table-container, figure, img, p, li, dt, dd, blockquote, " +
      "div.admonition, details";
    for (const el of root.querySelectorAll(CANDIDATES)) {
      if (el.closest("nav, script, style, .visually-hidden, .sr-only")) continue;
      if (el.clientWidth === 0) continue;
      let by = el.scrollWidth - el.clientWidth;
      if (by > 2 && el.querySelector("mjx-assistive-mml")) {
        // overflow that only the hidden MathML causes is not overflow: measure what is drawn
        const right = el.getBoundingClientRect().left + el.clientWidth;
        let drawn = -Infinity;
        for (const k of el.querySelectorAll("*")) {
          if (k.closest("mjx-assistive-mml") || k.matches("mjx-container")) continue;
          drawn = Math.max(drawn, k.getBoundingClientRect().right);
        }
        by = Math.round(drawn - right);
      }
      if (by > 2) note(el, by);
    }
    // every formula: its drawn box (mjx-math) against the column it sits in
    for (const eq of root.querySelectorAll("mjx-container")) {
      if (eq.parentElement.closest("mjx-container, nav")) continue;
      const math = eq.querySelector(":scope > mjx-math");
      if (!math) continue;
      const shown = math.getBoundingClientRect();
      let by;
      if (eq.getAttribute("display") === "true") {
        by = shown.width - eq.clientWidth;
      } else {
        let block = eq.parentElement;
        while (block && getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
        const cs = getComputedStyle(block);
        const right = block.getBoundingClientRect().left + block.clientWidth - parseFloat(cs.paddingRight);
        by = shown.right - right;
      }
      // glyphs of a few fonts overhang their box by a pixel or two
      if (by > 3) note(eq, Math.round(by));
    }
  }
  const figures = [];
  for (const img of root.querySelectorAll("img")) {
    const alt = (img.getAttribute("alt") || "").trim();
    const fig = img.closest("figure");
    const cap = fig ? (fig.querySelector("figcaption") || {}).textContent || "" : "";
    const file = (img.getAttribute("src") || "").split("/").pop();
    const problems = [];
    if (alt.length < 20 || alt === file || /^[0-9a-f]{16,}/i.test(alt)) problems.push("no useful alt text");
    if (cap.trim().length < 20) problems.push("no caption");
    if (problems.length) figures.push(`${file}: ${problems.join(", ")}`);
  }
  return {pageWidth, view, overflowing: overflowing.slice(0, 8).map(o => `${describe(o.el)} by ${o.by}px`),
          overflowCount: overflowing.length, figures};
}
"""

JS_HAS_ANCHOR = """
(frag) => {
  let id = frag;
  try { id = decodeURIComponent(frag); } catch (e) {}
  return !!(document.getElementById(id) || document.getElementById(frag)
            || document.getElementsByName(id).length);
}
"""

#: Rendered text after MathJax: TeX left outside typeset math, and doubled reference words.
#: Text nodes are joined per block (p, li, a heading, a table cell, ...), so that a word
#: followed by a link's text ("Theorem <a>Theorem 13.1</a>") is seen as one phrase while
#: two blocks ("Table" as one cell, "Table 2" as the next) are not.
JS_TEXT_DEFECTS = """
(words) => {
  const SKIP_TAGS = new Set(["PRE", "CODE", "KBD", "SAMP", "SCRIPT", "STYLE", "TEXTAREA",
                             "NOSCRIPT", "TEMPLATE", "MJX-CONTAINER"]);
  const SKIP_CLASSES = ["cell_input", "highlight", "math"];
  const BLOCKS = new Set(["P", "LI", "DT", "DD", "TD", "TH", "CAPTION", "FIGCAPTION", "SUMMARY",
    "H1", "H2", "H3", "H4", "H5", "H6", "BLOCKQUOTE", "DIV", "SECTION", "ARTICLE", "ASIDE",
    "NAV", "HEADER", "FOOTER", "MAIN", "UL", "OL", "DL", "TABLE", "TR", "FIGURE", "DETAILS",
    "BODY", "LABEL", "BUTTON", "OPTION", "SELECT", "FORM", "TITLE"]);
  const skipped = (el) => {
    for (; el; el = el.parentElement) {
      if (SKIP_TAGS.has(el.tagName)) return true;
      if (el.classList && SKIP_CLASSES.some(c => el.classList.contains(c))) return true;
    }
    return false;
  };
  const blockOf = (el) => {
    while (el && !BLOCKS.has(el.tagName)) el = el.parentElement;
    return el;
  };
  const clip = (s, i, n) => s.slice(Math.max(0, i - 40), i + n + 40).replace(/\\s+/g, " ").trim();
  const TEX = /\\\\[A-Za-z]+|\\$/;
  const esc = words.map(w => w.replace(/[.]/g, "\\\\.")).join("|");
  const DOUBLED = new RegExp(`(?<![\\\\w.])(${esc})[\\\\s\\u00a0]+\\\\1(?![\\\\w])`, "gi");

  const tex = [], doubled = [];
  let texCount = 0, doubledCount = 0;
  const runs = [];  // [block, text] in document order
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue;
    if (!text || !text.trim()) continue;
    const parent = node.parentElement;
    if (!parent || skipped(parent)) continue;
    const m = TEX.exec(text);
    if (m) {
      texCount += 1;
      if (tex.length < 8) tex.push(clip(text, m.index, m[0].length));
    }
    const block = blockOf(parent);
    if (runs.length && runs[runs.length - 1][0] === block) runs[runs.length - 1][1] += text;
    else runs.push([block, text]);
  }
  for (const [, text] of runs) {
    for (const m of text.matchAll(DOUBLED)) {
      doubledCount += 1;
      if (doubled.length < 8) doubled.push(clip(text, m.index, m[0].length));
    }
  }
  return {tex, texCount, doubled, doubledCount};
}
"""

#: Length of the page at the current window: document height, the visible code-cell
#: inputs (a folded cell takes no height), the longest of them in lines, the figures.
JS_PAGE_METRICS = """
() => {
  const docHeight = document.documentElement.scrollHeight;
  let code = 0, cells = 0, longest = 0, longestText = "";
  for (const cell of document.querySelectorAll("div.cell_input")) {
    const r = cell.getBoundingClientRect();
    if (r.height <= 0 || !cell.getClientRects().length) continue;
    // inside a closed <details> (a hide-input cell) the input keeps its layout box but is
    // not drawn: it is folded away
    if (cell.closest("details:not([open])")) continue;
    // a collapsed dropdown (a gated solution) hides its cells with visibility: hidden
    if (getComputedStyle(cell).visibility === "hidden") continue;
    if (cell.checkVisibility && !cell.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
    cells += 1;
    code += r.height;
    const pre = cell.querySelector("pre");
    const lines = pre ? pre.textContent.replace(/\\n+$/, "").split("\\n").length : 0;
    if (lines > longest) {
      longest = lines;
      longestText = (pre.textContent || "").trim().split("\\n")[0].slice(0, 60);
    }
  }
  const root = document.querySelector("article") || document.querySelector("main") || document.body;
  let figures = root.querySelectorAll("figure").length;
  for (const img of root.querySelectorAll("div.cell_output img, div.output img")) {
    if (!img.closest("figure")) figures += 1;
  }
  return {docHeight, code: Math.round(code), cells, longest, longestText, figures};
}
"""

#: At the narrow width: display equations whose drawn content is wider than their box,
#: and whether each shows a cue that it scrolls. Waits for the book's fitting script
#: (``window.bookMathFit``, a promise) when the page has it.
#: the phone's window height (an iPhone 12-15 in CSS pixels, with 390 px its width)
NARROW_HEIGHT = 844

JS_AFTER_RESIZE = """
async (width) => {
  // the new size is in effect, then the book's math fitting (a 150 ms debounced resize
  // handler, registered before this one) has run, then two frames are laid out
  if (window.innerWidth !== width) {
    await new Promise(r => window.addEventListener("resize", r, {once: true}));
  }
  await new Promise(r => setTimeout(r, 400));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return window.innerWidth;
}
"""

JS_MATH_NARROW = """
async (timeoutMs) => {
  if (window.bookMathFit && window.bookMathFit.then) {
    await Promise.race([window.bookMathFit, new Promise(r => setTimeout(r, timeoutMs))]);
  }
  const painted = (el, pseudo) => {
    const c = getComputedStyle(el, pseudo).content;
    return c && c !== "none" && c !== "normal" && c !== '""';
  };
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const out = [];
  for (const eq of document.querySelectorAll('mjx-container[display="true"]')) {
    if (eq.parentElement.closest("mjx-container, nav") || !eq.getClientRects().length) continue;
    const math = eq.querySelector(":scope > mjx-math");
    if (!math) continue;
    const by = math.getBoundingClientRect().width - eq.clientWidth;
    if (by <= 3) continue;
    const box = eq.parentElement;
    const cs = getComputedStyle(eq);
    const cue = (cs.backgroundImage !== "none" || cs.boxShadow !== "none" ||
                 painted(eq, "::after") || painted(box, "::after") || painted(box, "::before"));
    const scrollable = scrolls(eq) || scrolls(box);
    out.push({tex: (eq.querySelector("mjx-assistive-mml") || eq).textContent.replace(/\\s+/g, " ")
                     .trim().slice(0, 60), by: Math.round(by), cue, scrollable});
  }
  return out;
}
"""


# ------------------------------------------------------------------------- checking


def _inspect_page(page, result, fail, is_local, links, raw, url, rel, args, shots_dir, server):
    """Checks (b)-(e) on a loaded page; failures are reported through ``fail``."""
    # (b) math
    result["has_math"] = source_has_math(raw)
    mj = page.evaluate(JS_WAIT_MATHJAX, args.mathjax_timeout * 1000)
    result["mathjax"] = mj
    state = page.evaluate(JS_MATH_STATE, list(TEX_MARKERS))
    result["mjx_containers"] = state["containers"]
    if result["has_math"]:
        if mj["state"] == "absent":
            fail("mathjax", "page has math but MathJax did not load")
        elif mj["state"] != "done":
            fail("mathjax", f"MathJax did not finish: {mj['state']}")
        if state["containers"] == 0:
            fail("mathjax", "page has math but no mjx-container was rendered")
    for snippet in state["rawTex"]:
        fail("raw-tex", f"raw TeX in rendered text: {snippet!r}")
    for snippet in state["untypeset"]:
        fail("raw-tex", f"math element not typeset: {snippet!r}")
    for err in state["errors"]:
        fail("math-error", f"MathJax error: {err}")
    text = page.evaluate(JS_TEXT_DEFECTS, list(REFERENCE_WORDS))
    for snippet in text["tex"]:
        fail("tex-text", f"TeX outside typeset math: {snippet!r}")
    if text["texCount"] > len(text["tex"]):
        fail("tex-text", f"... {text['texCount'] - len(text['tex'])} more text nodes with TeX")
    for snippet in text["doubled"]:
        fail("doubled-word", f"doubled reference word: {snippet!r}")
    if text["doubledCount"] > len(text["doubled"]):
        fail("doubled-word", f"... {text['doubledCount'] - len(text['doubled'])} more doubled words")
    result["tex_in_text"] = text["texCount"]
    result["doubled_words"] = text["doubledCount"]

    # (c) images
    images = page.evaluate(JS_IMAGES, args.timeout * 1000)
    result["images"] = len(images)
    for img in images:
        if not img["complete"] or (img["naturalWidth"] == 0 and not img["decoded"]):
            fail("image", f"image did not load: {img['src'] or img['url'] or '<no src>'}")

    # (c') length at this window, images loaded and math typeset (judged in apply_budget)
    m = page.evaluate(JS_PAGE_METRICS)
    height = m["docHeight"] or 1
    result["metrics"] = {
        "screens": round(height / args.height, 2),
        "code_fraction": round(m["code"] / height, 3),
        "longest_code_cell": m["longest"],
        "longest_code_cell_starts": m["longestText"],
        "visible_code_cells": m["cells"],
        "figures": m["figures"],
    }

    # (d) links and anchors
    anchors_here: dict[str, bool] = {}
    page_path = urlsplit(url).path
    for link in page.evaluate(JS_LINKS):
        target = link["url"]
        if server.escapes(target):
            fail("subpath", f"link {link['raw']!r} leaves the site's path {server.base_path}")
            continue
        if not is_local(target):
            continue
        base, frag = urldefrag(target)
        path = urlsplit(base).path or "/"
        query = urlsplit(base).query
        result["links_checked"] += 1
        status = links.check(path + (f"?{query}" if query else ""))
        if status != 200:
            fail("link", f"broken link {link['raw']!r} -> {path} ({status})")
            continue
        if not frag:
            continue
        if path == page_path:
            if frag not in anchors_here:
                anchors_here[frag] = page.evaluate(JS_HAS_ANCHOR, frag)
            if not anchors_here[frag]:
                fail("anchor", f"missing anchor {link['raw']!r} on this page")
        else:
            ids = links.ids_of(path)
            if ids is not None and unquote(frag) not in ids and frag not in ids:
                fail("anchor", f"missing anchor {link['raw']!r} in {path}")

    # (e) layout and figures
    layout = page.evaluate(JS_LAYOUT, True)
    result["overflowing_boxes"] = layout["overflowCount"]
    warn = result["overflow_warnings"].append if args.lenient_overflow else None
    check_layout(layout, fail, narrow=False, warn=warn)
    for problem in layout["figures"]:
        fail("figure", problem)

    # (f) screenshot
    if shots_dir is not None:
        shot = shots_dir / screenshot_name(rel)
        # Chromium occasionally refuses a capture on a busy machine ("Unable to capture
        # screenshot"); a second attempt after a pause decides
        for attempt in (1, 2):
            try:
                # very long pages are captured down to MAX_SHOT_HEIGHT pixels: a full-page
                # capture of tens of thousands of pixels is slow and no one reads it whole
                height = page.evaluate("document.documentElement.scrollHeight")
                width = page.viewport_size["width"] if page.viewport_size else 1280
                if height > MAX_SHOT_HEIGHT:
                    page.screenshot(
                        path=str(shot),
                        full_page=True,
                        timeout=args.timeout * 1000,
                        clip={"x": 0, "y": 0, "width": width, "height": MAX_SHOT_HEIGHT},
                    )
                else:
                    page.screenshot(path=str(shot), full_page=True, timeout=args.timeout * 1000)
                result["screenshot"] = str(shot)
                break
            except Exception as exc:  # noqa: BLE001
                if attempt == 2:
                    fail("screenshot", f"screenshot failed: {exc}".splitlines()[0])
                else:
                    page.wait_for_timeout(500)


def check_layout(layout: dict, fail, *, narrow: bool, warn=None) -> None:
    """Fail a page that scrolls sideways; report boxes that overflow at the desktop width.

    An overflowing box (a code line or an equation wider than its column, which then
    scrolls inside its own box) is a failure, or with ``--lenient-overflow`` a warning
    listed in the report under ``overflow_warnings``.
    """
    kind = "overflow-narrow" if narrow else "overflow"
    if layout["pageWidth"] > layout["view"] + 1:
        fail(kind, f"the page scrolls sideways: {layout['pageWidth']} px wide in a {layout['view']} px window")
    if not narrow and layout["overflowCount"]:
        more = layout["overflowCount"] - len(layout["overflowing"])
        detail = "; ".join(layout["overflowing"]) + (f" (and {more} more)" if more > 0 else "")
        (warn or (lambda d: fail(kind, d)))(detail)


#: The width at which a figure is assumed shown on a phone when ``fedfreq.display`` checks
#: its text size (kept in step with ``fedfreq.display.PHONE_FIGURE_PX`` by a unit test).
PHONE_FIGURE_PX = 342

#: At the narrow width: content images (loaded, shown) narrower than PHONE_FIGURE_PX and
#: than their own width, so their text is smaller than the figures' check assumed.
JS_FIGURES_NARROW = """
(phonePx) => {
  const root = document.querySelector("article") || document.querySelector("main") || document.body;
  const out = [];
  for (const img of root.querySelectorAll("img")) {
    if (!img.getClientRects().length || !img.naturalWidth) continue;
    const shown = img.getBoundingClientRect().width;
    const want = Math.min(img.naturalWidth, phonePx);
    if (shown < want - 1) {
      out.push({src: (img.getAttribute("src") || "").split("/").pop().slice(0, 60),
                shown: Math.round(shown), want});
    }
  }
  return out;
}
"""


def _narrow_checks(page, args, result) -> None:
    """At the phone width (the page is typeset and laid out at that width): the page must
    not scroll sideways, no display equation may hide part of itself, and no figure may be
    shown narrower than the width its text size was checked for."""
    failures = result["failures"]
    narrow_figures = page.evaluate(JS_FIGURES_NARROW, PHONE_FIGURE_PX)
    result["figures_narrow"] = len(narrow_figures)
    for img in narrow_figures[:5]:
        failures.append(
            {
                "kind": "figure-narrow",
                "detail": f"image {img['src']} shown {img['shown']} px wide at {args.narrow_width} px, "
                f"under the {img['want']} px its text size was checked for",
            }
        )
    check_layout(
        page.evaluate(JS_LAYOUT, False),
        lambda kind, detail: failures.append({"kind": kind, "detail": detail}),
        narrow=True,
    )
    shown = page.evaluate(JS_MATH_NARROW, args.mathjax_timeout * 1000)
    clipped = [eq for eq in shown if not (eq["cue"] and eq["scrollable"])]
    result["math_clipped_narrow"] = len(clipped)
    for eq in clipped[:5]:
        why = "no scroll cue" if eq["scrollable"] else "cut off, it does not scroll"
        failures.append(
            {
                "kind": "math-clipped",
                "detail": f"display equation {eq['by']}px wider than its box at "
                f"{args.narrow_width} px, not scaled to fit, {why}: {eq['tex']!r}",
            }
        )


def narrow_applies(rel: str, args) -> bool:
    return bool(args.narrow_width) and not any(fnmatch.fnmatch(rel, pat) for pat in args.narrow_exclude)


def check_narrow_in_place(page, args, result) -> None:
    """The phone-width pass on the page already checked at the desktop width: the window
    is narrowed to a phone's size, and once the page has reflowed and the book's script
    has fitted its equations again, the checks of the phone width run. Equivalent to a
    fresh load at that width (the theme's layout is CSS media queries; MathJax's output
    does not depend on the width), and it saves a second load and typesetting of every
    page (``--narrow-reload`` does the fresh load)."""
    try:
        page.set_viewport_size({"width": args.narrow_width, "height": NARROW_HEIGHT})
        page.evaluate(JS_AFTER_RESIZE, args.narrow_width)
        _narrow_checks(page, args, result)
    except Exception as exc:  # noqa: BLE001 - report, do not hide the other pages
        result["failures"].append({"kind": "internal", "detail": f"narrow pass: {exc}".splitlines()[0][:300]})


def check_narrow(context, server, rel, args, result) -> None:
    """The phone-width pass by a fresh load: load the page at the phone width, let MathJax
    typeset, check it does not scroll sideways. Adds to ``result`` (a page already checked
    at the desktop width)."""
    page = context.new_page()
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith(server.origin) else route.abort(),
    )
    try:
        page.goto(f"{server.origin}/{quote(rel)}", wait_until="load", timeout=args.timeout * 1000)
        page.evaluate(JS_WAIT_MATHJAX, args.mathjax_timeout * 1000)
        _narrow_checks(page, args, result)
    except Exception as exc:  # noqa: BLE001 - report, do not hide the other pages
        result["failures"].append({"kind": "internal", "detail": f"narrow pass: {exc}".splitlines()[0][:300]})
    finally:
        page.close()
    result["ok"] = not result["failures"]


def check_page(context, server, links, site, rel, args, shots_dir):
    url = f"{server.origin}/{quote(rel)}"
    result = {
        "page": rel,
        "url": url,
        "ok": True,
        "failures": [],
        "console_errors": [],
        "ignored_page_errors": [],
        "has_math": False,
        "mathjax": None,
        "mjx_containers": 0,
        "images": 0,
        "links_checked": 0,
        "screenshot": None,
        "seconds": 0.0,
        "overflowing_boxes": 0,
        "overflow_warnings": [],
    }
    failures = result["failures"]
    seen_failures: set[tuple[str, str]] = set()

    def fail(kind: str, detail: str) -> None:
        if (kind, detail) not in seen_failures:
            seen_failures.add((kind, detail))
            failures.append({"kind": kind, "detail": detail})

    def is_local(u: str) -> bool:
        return u.startswith(server.origin + "/") or u == server.origin

    started = time.monotonic()
    raw = (site / rel).read_text(encoding="utf-8", errors="replace")
    redirect = _REFRESH_RE.search(raw)
    if redirect:
        # A bare meta-refresh stub (e.g. Jupyter Book's index.html): check that it is
        # served and that its target exists; the target is checked as a page itself.
        target = urljoin(url, html.unescape(redirect.group(1).strip()))
        result["redirect"] = target[len(server.origin) :] if is_local(target) else target
        status = links.check(urlsplit(url).path)
        if status != 200:
            fail("http", f"page returned HTTP {status}")
        if not is_local(target):
            fail("external", f"redirects outside the site: {target}")
        else:
            status = links.check(urlsplit(urldefrag(target)[0]).path or "/")
            if status != 200:
                fail("link", f"redirect target {result['redirect']} ({status})")
        result["ok"] = not failures
        result["seconds"] = round(time.monotonic() - started, 2)
        return result

    page = context.new_page()
    collecting = [True]
    blocked: list[str] = []
    own_netloc = f"{server.host}:{server.port}"

    def is_outside(u: str) -> bool:
        parts = urlsplit(u)
        return parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != own_netloc

    def on_route(route):
        req_url = route.request.url
        if server.escapes(req_url):
            if collecting[0]:
                fail("subpath", f"request leaves the site's path {server.base_path}: {urlsplit(req_url).path}")
            route.abort("blockedbyclient")
        elif is_outside(req_url):
            if collecting[0] and req_url not in blocked:
                blocked.append(req_url)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def on_response(resp):
        if collecting[0] and is_local(resp.url) and resp.status >= 400:
            fail("request", f"{resp.status} {resp.url[len(server.origin) :]}")

    def on_request_failed(req):
        if collecting[0] and is_local(req.url):
            fail("request", f"{req.failure} {req.url[len(server.origin) :]}")

    def on_request(req):
        # Safety net for anything the router does not see (e.g. WebSockets).
        if collecting[0] and is_outside(req.url) and req.url not in blocked:
            blocked.append(req.url)

    def on_console(msg):
        if collecting[0] and msg.type == "error":
            result["console_errors"].append(msg.text[:300])

    def on_pageerror(exc):
        if not collecting[0]:
            return
        text = (str(exc).splitlines() or [repr(exc)])[0][:300]
        if any(re.search(pat, text) for pat in args.allow_pageerror):
            result["ignored_page_errors"].append(text)
        else:
            fail("pageerror", text)

    page.route("**/*", on_route)
    page.on("response", on_response)
    page.on("requestfailed", on_request_failed)
    page.on("request", on_request)
    page.on("console", on_console)
    page.on("pageerror", on_pageerror)
    page.on("websocket", lambda ws: on_request(ws))

    try:
        try:
            response = page.goto(url, wait_until="load", timeout=args.timeout * 1000)
        except Exception as exc:  # noqa: BLE001 - report any navigation error
            fail("http", f"navigation failed: {exc}".splitlines()[0])
            response = None
        if response is not None and response.status != 200:
            fail("http", f"page returned HTTP {response.status}")

        if response is not None:
            _inspect_page(page, result, fail, is_local, links, raw, url, rel, args, shots_dir, server)
            if args.narrow_width and not args.narrow_reload:
                if narrow_applies(rel, args):
                    check_narrow_in_place(page, args, result)
                else:
                    result["narrow_skipped"] = True
    except Exception as exc:  # noqa: BLE001 - a checker bug must not hide other pages
        fail("internal", f"checker error: {exc}".splitlines()[0][:300])
    finally:
        collecting[0] = False
        for ext in blocked:
            fail("external", f"request to outside host blocked: {ext}")
        try:
            page.close()
        except Exception:  # noqa: BLE001
            pass

    result["ok"] = not failures
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


def page_kinds(toc: Path) -> dict[str, dict]:
    """The notebooks of the table of contents ``toc``, by the address of their page
    (``notebooks/<stem>.html``): stem, chapter, number, kind (teaching, reproduction,
    appendix) and budget status. A teaching page is held to the length budget once its
    chapter has a reproduction page ("enforced"); before that it is "pending"."""
    if not toc.is_file():
        return {}
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import layout

    pages = layout.pages(toc.resolve())
    split = {p.chapter for p in pages if p.kind == "reproduction"}
    out = {}
    for p in pages:
        if p.kind == "teaching":
            status = "enforced" if p.chapter in split else "pending"
        else:
            status = p.kind
        out[f"notebooks/{p.stem}.html"] = {
            "stem": p.stem,
            "chapter": p.chapter,
            "number": p.number,
            "kind": p.kind,
            "status": status,
        }
    return out


def budget_problems(m: dict) -> list[tuple[str, str]]:
    """How a page's measurements break the teaching-page budget: (kind, detail) pairs."""
    out = []
    if m["screens"] > MAX_SCREENS:
        out.append(("page-length", f"{m['screens']:.1f} screens at 1280 px, budget {MAX_SCREENS}"))
    if m["code_fraction"] > MAX_CODE_SHARE:
        out.append(("code-share", f"visible code is {m['code_fraction']:.0%} of the page, budget {MAX_CODE_SHARE:.0%}"))
    if m["longest_code_cell"] > MAX_CELL_LINES:
        out.append(
            (
                "code-cell",
                f"a visible code cell of {m['longest_code_cell']} lines, budget {MAX_CELL_LINES} "
                f"({m['longest_code_cell_starts']!r})",
            )
        )
    return out


def median_ceiling(record: Path | None) -> float:
    """The median length the teaching pages may not exceed: the budget, or while the book
    is still above it, the ceiling recorded in ``record`` (a ratchet that only goes down)."""
    if record is None or not record.is_file():
        return MAX_MEDIAN_SCREENS
    stored = json.loads(record.read_text(encoding="utf-8")).get("median_ceiling")
    if stored is None or float(stored) <= MAX_MEDIAN_SCREENS:
        return MAX_MEDIAN_SCREENS
    # another machine's fonts or browser may lay a page out a little longer
    return float(stored) + MEDIAN_SLACK


def apply_budget(results: list[dict], kinds: dict[str, dict], ceiling: float = MAX_MEDIAN_SCREENS) -> list[dict]:
    """Hold the teaching pages of ``kinds`` to the length budget: a failure on each
    enforced page over budget; the site's failures (the median over ``ceiling``) are
    returned."""
    enforced = []
    for res in results:
        info = kinds.get(res["page"])
        m = res.get("metrics")
        if info is None or m is None:
            continue
        m.update(info)
        problems = budget_problems(m)
        if info["status"] == "enforced":
            enforced.append(m["screens"])
            m["budget"] = "over budget" if problems else "within budget"
            for kind, detail in problems:
                res["failures"].append({"kind": kind, "detail": detail})
                print(f"FAIL {res['page']}  [{kind}] {detail}", flush=True)
            res["ok"] = not res["failures"]
        elif info["status"] == "pending":
            m["budget"] = "pending"
            m["over_budget_when_split"] = [d for _, d in problems]
    site = []
    pending = [res for res in results if kinds.get(res["page"], {}).get("status") == "pending"]
    # the median is a property of the whole book: it is held to its budget once every chapter
    # has its teaching page (until then the summary prints it beside the pending pages)
    if enforced and not pending:
        median = statistics.median(enforced)
        if median > ceiling:
            allowed = f"budget {MAX_MEDIAN_SCREENS}" + (
                f", recorded ceiling {ceiling}" if ceiling > MAX_MEDIAN_SCREENS else ""
            )
            site.append(
                {
                    "kind": "median-length",
                    "detail": f"the median teaching page is {median:.1f} screens at 1280 px "
                    f"({len(enforced)} enforced pages), {allowed}",
                }
            )
        elif median > MAX_MEDIAN_SCREENS:
            print(
                f"NOT YET the median teaching page is {median:.1f} screens at 1280 px, budget "
                f"{MAX_MEDIAN_SCREENS} (within the recorded ceiling {ceiling})",
                flush=True,
            )
    return site


def length_summary(results: list[dict]) -> list[str]:
    """Lines for the terminal: the teaching pages' lengths, enforced and pending."""
    rows = [r["metrics"] for r in results if (r.get("metrics") or {}).get("kind") == "teaching"]
    if not rows:
        return []
    lines = []
    for status in ("enforced", "pending"):
        some = [m for m in rows if m["status"] == status]
        if not some:
            continue
        median = statistics.median(m["screens"] for m in some)
        lines.append(
            f"teaching pages {status}: {len(some)}, median {median:.1f} screens at 1280 px "
            f"(budget: each <= {MAX_SCREENS}, median of the enforced <= {MAX_MEDIAN_SCREENS})"
        )
    for m in rows:
        if m["status"] == "pending":
            over = "; ".join(m["over_budget_when_split"]) or "within budget"
            lines.append(
                f"PENDING notebooks/{m['stem']}.html  {m['screens']:.1f} screens, code {m['code_fraction']:.0%}, "
                f"longest cell {m['longest_code_cell']} lines ({over})"
            )
    return lines


def metrics_record(results: list[dict], kinds: dict[str, dict], args, ceiling: float | None = None) -> dict:
    """The measurements of every chapter, appendix and reproduction page that was checked,
    in the order of the table of contents (written by ``--record-metrics``)."""
    by_page = {r["page"]: r for r in results}
    pages = []
    for rel, info in kinds.items():
        m = (by_page.get(rel) or {}).get("metrics")
        if m is None:
            continue
        pages.append(
            {
                **info,
                "screens": m["screens"],
                "code_fraction": m["code_fraction"],
                "longest_code_cell": m["longest_code_cell"],
                "figures": m["figures"],
                "budget": m.get("budget", ""),
            }
        )

    def median(status: str | None, kind: str = "teaching"):
        vals = [p["screens"] for p in pages if p["kind"] == kind and status in (None, p["status"])]
        return round(statistics.median(vals), 2) if vals else None

    enforced = median("enforced")
    if enforced is not None and ceiling is not None:
        # the ratchet: a new record lowers the ceiling, never raises it
        ceiling = round(max(MAX_MEDIAN_SCREENS, min(ceiling, enforced)), 2)
    if ceiling is not None and ceiling == float("inf"):
        ceiling = None
    return {
        "measured": datetime.date.today().isoformat(),
        "window": {"width": args.width, "height": args.height},
        "budget": {
            "screens": MAX_SCREENS,
            "median_screens": MAX_MEDIAN_SCREENS,
            "code_fraction": MAX_CODE_SHARE,
            "code_cell_lines": MAX_CELL_LINES,
        },
        "median_screens": {
            "enforced": median("enforced"),
            "pending": median("pending"),
            "teaching": median(None),
            "reproduction": median(None, "reproduction"),
        },
        "median_ceiling": ceiling,
        "pages": pages,
    }


def summarize_failures(failures: list[dict], per_kind: int = 3) -> str:
    """One-line summary, at most ``per_kind`` details per kind (the report has all)."""
    shown: dict[str, int] = {}
    parts = []
    for f in failures:
        n = shown.get(f["kind"], 0)
        shown[f["kind"]] = n + 1
        if n < per_kind:
            parts.append(f"[{f['kind']}] {f['detail']}")
    for kind, n in shown.items():
        if n > per_kind:
            parts.append(f"[{kind}] ... {n - per_kind} more")
    return "; ".join(parts)


def balanced_chunks(site: Path, pages: list[str], jobs: int) -> list[list[str]]:
    """Deal the pages to ``jobs`` browsers so that each gets about the same work: the size
    of a page's HTML stands for its cost (math to typeset, links to check); largest first,
    each to the browser with the least so far."""
    sizes = {rel: (site / rel).stat().st_size for rel in pages}
    chunks: list[list[str]] = [[] for _ in range(jobs)]
    load = [0] * jobs
    for rel in sorted(pages, key=lambda r: -sizes[r]):
        i = load.index(min(load))
        chunks[i].append(rel)
        load[i] += sizes[rel]
    return chunks


def find_chromium(explicit: str | None) -> str | None:
    for cand in (explicit, shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def check_pages(site: Path, pages: list[str], args, chromium: str, shots_dir: Path | None) -> list[dict]:
    """Serve ``site`` and check ``pages`` in one browser, at both widths; one result per page."""
    from playwright.sync_api import sync_playwright

    results: list[dict] = []
    with SiteServer(site, args.base_path) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": args.width, "height": args.height},
                service_workers="block",
                locale="en-US",
            )
            links = LinkChecker(server)
            for rel in pages:
                res = check_page(context, server, links, site, rel, args, shots_dir)
                results.append(res)
                if res["ok"] and res.get("redirect"):
                    print(f"OK   {rel}  (redirect -> {res['redirect']})", flush=True)
                elif res["ok"]:
                    extra = f"math={res['mjx_containers']}" if res["has_math"] else "no math"
                    print(
                        f"OK   {rel}  ({extra}, {res['images']} img, "
                        f"{res['links_checked']} links, {res['seconds']:.1f}s)",
                        flush=True,
                    )
                else:
                    reasons = summarize_failures(res["failures"])
                    print(f"FAIL {rel}  {reasons}", flush=True)
            context.close()
            if args.narrow_width and args.narrow_reload:
                narrow = browser.new_context(
                    viewport={"width": args.narrow_width, "height": NARROW_HEIGHT},
                    service_workers="block",
                    locale="en-US",
                )
                for res in results:
                    if res.get("redirect"):
                        continue
                    if any(fnmatch.fnmatch(res["page"], pat) for pat in args.narrow_exclude):
                        res["narrow_skipped"] = True
                        print(f"SKIP {res['page']}  at {args.narrow_width} px (--narrow-exclude)", flush=True)
                        continue
                    was_ok = res["ok"]
                    check_narrow(narrow, server, res["page"], args, res)
                    if was_ok and not res["ok"]:
                        reasons = summarize_failures(res["failures"])
                        print(f"FAIL {res['page']}  at {args.narrow_width} px: {reasons}", flush=True)
                narrow.close()
        finally:
            browser.close()

    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", type=Path, help="built HTML directory, e.g. _build/html")
    ap.add_argument("--screenshots", type=Path, default=None, help="directory for full-page PNG screenshots")
    ap.add_argument(
        "--report", type=Path, default=None, help="JSON report path (default: <site>/../browser_report.json)"
    )
    ap.add_argument("--chromium", default=None, help="Chromium executable")
    ap.add_argument("--include", action="append", default=[], help="only check pages matching this glob (repeatable)")
    ap.add_argument("--exclude", action="append", default=[], help="skip pages matching this glob (repeatable)")
    ap.add_argument(
        "--allow-pageerror",
        action="append",
        default=[],
        metavar="REGEX",
        help="do not fail on uncaught JS errors matching REGEX (repeatable; they are still listed in the report)",
    )
    ap.add_argument("--timeout", type=float, default=30, help="per-page load timeout, s")
    ap.add_argument("--mathjax-timeout", type=float, default=20, help="how long to wait for MathJax to finish, s")
    ap.add_argument(
        "--base-path",
        default="/",
        help="serve the site under this path, as a project page is served (e.g. /fedfreq-book/); "
        "a link or request that leaves it fails the page",
    )
    ap.add_argument("--jobs", type=int, default=1, help="check the pages in this many browsers at once")
    ap.add_argument(
        "--toc",
        type=Path,
        default=ROOT / "_toc.yml",
        help="the book's table of contents: which notebook is a teaching, reproduction or appendix page",
    )
    ap.add_argument(
        "--record-metrics",
        type=Path,
        default=None,
        metavar="JSON",
        help="write each chapter, appendix and reproduction page's length measurements here "
        "(e.g. book/page_metrics.json)",
    )
    ap.add_argument(
        "--median-record",
        type=Path,
        default=None,
        metavar="JSON",
        help="while the median teaching page is over its budget, hold it to the ceiling recorded "
        "in this file (book/page_metrics.json) instead of failing",
    )
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument(
        "--narrow-width", type=int, default=390, help="a phone's width for the second pass (0: no second pass)"
    )
    ap.add_argument(
        "--narrow-reload",
        action="store_true",
        help="check the phone width by loading every page again at that width (the default narrows "
        "the window of the page already loaded)",
    )
    ap.add_argument(
        "--narrow-exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip the phone-width pass for pages matching GLOB (a known, listed exception; repeatable)",
    )
    ap.add_argument(
        "--lenient-overflow",
        action="store_true",
        help="only warn (in the report) about boxes wider than their column at the desktop width",
    )
    args = ap.parse_args(argv)

    site = args.site.resolve()
    if not site.is_dir():
        print(f"browser_check: {args.site} is not a directory", file=sys.stderr)
        return 2
    report_path = args.report or (site.parent / "browser_report.json")
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("browser_check: chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    pages = find_pages(site, args.include, args.exclude)
    if not pages:
        print(f"browser_check: no pages to check under {site}", file=sys.stderr)
        return 2

    shots_dir = None
    if args.screenshots is not None:
        shots_dir = args.screenshots.resolve()
        shots_dir.mkdir(parents=True, exist_ok=True)
        for old in shots_dir.glob("*.png"):
            old.unlink()

    started = time.monotonic()
    jobs = max(1, min(args.jobs, len(pages)))
    if jobs == 1:
        results = check_pages(site, pages, args, chromium, shots_dir)
    else:
        # each worker serves the site and drives its own browser on every jobs-th page
        import multiprocessing

        chunks = balanced_chunks(site, pages, jobs)
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            parts = pool.starmap(check_pages, [(site, chunk, args, chromium, shots_dir) for chunk in chunks])
        by_page = {r["page"]: r for part in parts for r in part}
        results = [by_page[rel] for rel in pages]

    kinds = page_kinds(args.toc)
    ceiling = median_ceiling(args.median_record)
    site_failures = apply_budget(results, kinds, ceiling)
    for line in length_summary(results):
        print(line)
    for f in site_failures:
        print(f"FAIL site  [{f['kind']}] {f['detail']}")
    if args.record_metrics is not None:
        args.record_metrics.parent.mkdir(parents=True, exist_ok=True)
        old = json.loads(args.record_metrics.read_text()) if args.record_metrics.is_file() else {}
        previous = old.get("median_ceiling")
        record = metrics_record(results, kinds, args, float("inf") if previous is None else float(previous))
        args.record_metrics.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"page measurements of {len(record['pages'])} notebooks written to {args.record_metrics}")
    failed = [r for r in results if not r["ok"]]
    elapsed = round(time.monotonic() - started, 1)
    report = {
        "site": str(site),
        "chromium": chromium,
        "pages_checked": len(results),
        "pages_failed": len(failed),
        "site_failures": site_failures,
        "seconds": elapsed,
        "pages": results,
    }
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    crowded = [r for r in results if r.get("overflowing_boxes")]
    print(f"{len(results)} pages checked, {len(failed)} failed ({elapsed}s); report: {report_path}")
    if crowded and args.lenient_overflow:
        boxes = sum(r["overflowing_boxes"] for r in crowded)
        print(
            f"warning: {boxes} boxes wider than their column at {args.width} px "
            f"on {len(crowded)} pages (see the report)"
        )
    return 1 if failed or site_failures else 0


if __name__ == "__main__":
    sys.exit(main())
