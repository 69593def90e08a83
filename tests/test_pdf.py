"""The whole-book PDF (``make pdf``): complete, readable, and nothing cut off at the margin.

Skipped unless ``_build/pdf/book.pdf`` exists, i.e. after ``make pdf`` (which runs this
file at its end). Uses poppler's command-line tools (``pdfinfo``, ``pdftotext``,
``pdftoppm``, ``pdfimages``; Debian package poppler-utils, installed by ``make pdf``).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_pdf  # noqa: E402

PDF = make_pdf.PDF
TOOLS = ("pdfinfo", "pdftotext", "pdftoppm", "pdfimages")

pytestmark = [
    pytest.mark.skipif(not PDF.is_file(), reason="no PDF: run `make pdf` first"),
    pytest.mark.skipif(
        any(shutil.which(t) is None for t in TOOLS), reason="poppler-utils not installed (make pdf installs it)"
    ),
]

PT_PER_MM = 72 / 25.4
#: Slack for glyph side bearings and italic overhang, in points (0.35 mm).
SLACK_PT = 1.0
_WORD = re.compile(r'<word xMin="([-\d.]+)" yMin="[-\d.]+" xMax="([-\d.]+)" yMax="[-\d.]+">(.*?)</word>')
_PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">')


def _run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def pages() -> list[str]:
    """The text of every page (pdftotext, reading order)."""
    text = _run("pdftotext", "-enc", "UTF-8", str(PDF), "-")
    return text.split("\f")[:-1] if text.endswith("\f") else text.split("\f")


@pytest.fixture(scope="module")
def book_text(pages: list[str]) -> str:
    return _normal(" ".join(pages))


def _page_count() -> int:
    info = _run("pdfinfo", str(PDF))
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))  # type: ignore[union-attr]


def test_page_count_is_plausible(pages: list[str]) -> None:
    n = _page_count()
    assert 200 < n < 3000, f"{n} pages"
    assert len(pages) == n


def chapter_titles() -> list[str]:
    """The title (first ``# `` heading) of every chapter notebook in the table of contents."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    titles = []
    for name in re.findall(r"file: (notebooks/\S+)", toc):
        source = ROOT / f"{name}.md"
        heading = next(
            (ln[2:].strip() for ln in source.read_text(encoding="utf-8").splitlines() if ln.startswith("# ")), None
        )
        if heading and not re.search(r"[$`{\\*_]", heading):
            titles.append(heading)
    return titles


def test_title_and_chapter_titles_are_in_the_text(pages: list[str], book_text: str) -> None:
    assert "Private Federated Frequency Estimation" in pages[0]
    titles = chapter_titles()
    assert len(titles) >= 10, titles
    missing = [t for t in titles if _normal(t) not in book_text]
    assert not missing, f"chapter titles not found in the PDF: {missing}"


def test_the_edition_is_printed(pages: list[str]) -> None:
    """The title page names the edition: the installed package's version, which the book shares."""
    from importlib.metadata import version

    edition = version("fedfreq")
    assert f"Edition {edition}" in " ".join(pages[0].split()), f"edition {edition} not on the title page"


def test_claim_verdict_lines_are_in_the_text(book_text: str) -> None:
    """The verdict line of the first claim of every chapter, as its claim cell prints it."""
    checked = []
    for path in sorted((ROOT / "book" / "claims").glob("*.yml")):
        claims = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("claims") or []
        if not claims:
            continue
        claim_id, verdict = claims[0]["id"], claims[0]["verdict"]
        pattern = r"\s*-\s*".join(map(re.escape, claim_id.split("-"))) + r"\s*:\s*" + re.escape(verdict) + r"\."
        checked.append((claim_id, verdict, re.search(pattern, book_text) is not None))
    assert len(checked) >= 10
    missing = [(c, v) for c, v, found in checked if not found]
    assert not missing, f"verdict lines not found in the PDF: {missing}"


def _find_page(pages: list[str], predicate) -> int:
    """1-based number of the first page satisfying ``predicate``, after the contents."""
    for number, text in enumerate(pages, start=1):
        if number > 3 and predicate(text):
            return number
    raise AssertionError("no such page")


def _figure_page() -> int:
    """A page with a large colour image (a matplotlib figure)."""
    listing = _run("pdfimages", "-list", str(PDF)).splitlines()[2:]
    for row in listing:
        cols = row.split()
        page, width, height, colour = int(cols[0]), int(cols[3]), int(cols[4]), cols[5]
        if colour in ("rgb", "icc") and width >= 600 and height >= 300:
            return page
    raise AssertionError("no page with a figure")


def _render(page: int, out: Path) -> Path:
    stem = out / f"page-{page}"
    subprocess.run(
        ["pdftoppm", "-f", str(page), "-l", str(page), "-r", "40", "-png", "-singlefile", str(PDF), str(stem)],
        check=True,
    )
    return stem.with_suffix(".png")


def test_sample_pages_render_and_are_not_blank(pages: list[str], tmp_path: Path) -> None:
    from PIL import Image

    # the share of dark pixels each sampled page must exceed (the title page is mostly white)
    sample = {
        "title": (1, 0.0005),
        "chapter with code": (_find_page(pages, lambda t: "import" in t and "fedfreq" in t and "def " in t), 0.005),
        "figure": (_figure_page(), 0.005),
        "last": (len(pages), 0.002),
    }
    for what, (page, least) in sample.items():
        png = _render(page, tmp_path)
        with Image.open(png) as img:
            gray = img.convert("L")
            width, height = gray.size
            histogram = gray.histogram()
        assert width > 200 and height > 200, (what, page, gray.size)
        inked = sum(histogram[:200]) / (width * height)
        assert inked > least, f"{what} page {page} looks blank ({inked:.4f} of its pixels are dark)"
        levels = sum(1 for count in histogram if count)
        assert levels > 8, f"{what} page {page} has only {levels} grey levels"


def test_no_text_runs_past_the_margins() -> None:
    """Every word (code, outputs, tables, formulas) lies within the printable width.

    Words wider than the page are MathJax's stretched glyphs (rules, long arrows), which
    pdftotext reports with the unscaled font's box; they are not text.
    """
    margin = make_pdf.SIDE_MARGIN_MM * PT_PER_MM
    bbox = _run("pdftotext", "-bbox", "-enc", "UTF-8", str(PDF), "-")
    outside = []
    for number, chunk in enumerate(bbox.split("<page ")[1:], start=1):
        width = float(_PAGE.match("<page " + chunk).group(1))  # type: ignore[union-attr]
        for x_min, x_max, word in _WORD.findall(chunk):
            left, right = float(x_min), float(x_max)
            if right - left > width:
                continue
            if left < margin - SLACK_PT or right > width - margin + SLACK_PT:
                outside.append((number, round(left, 1), round(right, 1), html.unescape(word)))
    assert not outside, f"{len(outside)} words outside the margins, e.g. {outside[:10]}"


def test_the_print_found_nothing_too_wide_or_clipped() -> None:
    """What the page reported before printing (scripts/make_pdf.py): no formula, table,
    code block or output wider than the text, and no element clipping its content
    (clipped text does not reach the PDF, so only the page can tell)."""
    report_path = make_pdf.REPORT
    if not report_path.is_file():
        pytest.skip("no report of the print next to the PDF")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["too_wide"] == []
    assert report["clipped"] == []
    assert report["formulas"] > 1000
    assert all(item["zoom"] >= 0.5 for item in report["shrunk"]), report["shrunk"]
