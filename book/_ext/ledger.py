"""Sphinx directives that render the claims ledger, the errata and the execution statistics.

The ledger is data: one YAML file per chapter, ``book/claims/<chapter>.yml``, whose
file name names the notebook that checks its claims. ``{claims-ledger}`` renders
every entry, one table per source; ``{errata}`` renders the entries that carry an
``erratum`` block, grouped by paper. ``{execution-stats}`` reads
``notebooks/execution_times.json``, written by ``scripts/execute_notebooks.py`` when
the stored outputs were produced. ``{full-scale-results}`` renders the last run at the
papers' scale from ``book/full_scale/<chapter>.json`` (written by
``scripts/full_results.py``) beside the verdicts stored in the chapters' notebooks.
``{page-metrics}`` renders ``book/page_metrics.json``, the length of every chapter, appendix
and reproduction page as measured in the browser (``scripts/browser_check.py
--record-metrics``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from fedfreq.claims import VERDICTS, claim_slug

sys.path.insert(0, str(Path(__file__).resolve().parent))
import layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LEDGER_DIR = ROOT / "book" / "claims"
TIMES = ROOT / "notebooks" / "execution_times.json"
PAGE_METRICS = ROOT / "book" / "page_metrics.json"

SOURCES = {
    "F": "Background results from the literature the papers build on",
    "S0": "The OcPBM paper: bounding contribution optimally under user-level distributed DP",
    "S1": "Wu et al. 2023: private federated frequency estimation with sketches",
    "S2": "Bharadwaj & Cormode 2022: sample-and-threshold differential privacy",
    "S3": "Cormode & Markov 2021: bit-efficient numerical aggregation",
    "S4": "Liu et al. 2023: bounding contribution for user-level histograms",
}
#: Short names of the sources for the ledger's tables.
SHORT = {
    "F": "background",
    "S0": "OcPBM paper",
    "S1": "Wu et al. 2023",
    "S2": "Bharadwaj & Cormode 2022",
    "S3": "Cormode & Markov 2021",
    "S4": "Liu et al. 2023",
}
NOTEBOOKS = ROOT / "notebooks"
FULL_DIR = ROOT / "book" / "full_scale"


def load_full_scale() -> dict[str, dict]:
    """The records of the last run at the papers' scale, by chapter stem."""
    stems = [p.stem for p in layout.pages()]
    return {
        s: json.loads((FULL_DIR / f"{s}.json").read_text(encoding="utf-8"))
        for s in stems
        if (FULL_DIR / f"{s}.json").is_file()
    }


def full_scale_verdicts() -> dict[str, dict]:
    """Each claim's verdict and evidence in the last run at the papers' scale, by id."""
    return {c["id"]: c for rec in load_full_scale().values() for c in rec.get("claims", [])}


_VERDICT_LINE = re.compile(
    r"^(?P<id>[A-Z][A-Z0-9]*(?:-[A-Za-z0-9.]+)+): "
    r"(?P<verdict>" + "|".join(map(re.escape, VERDICTS)) + r")\. (?P<evidence>.*)$"
)


def stored_verdicts(stem: str) -> dict[str, dict]:
    """Each claim's verdict and evidence in the stored (default-scale) outputs of a chapter."""
    nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
    found = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            text = "".join(out.get("data", {}).get("text/plain", "")) + "".join(out.get("text", ""))
            for line in text.splitlines():
                m = _VERDICT_LINE.match(line)
                if m:
                    found[m["id"]] = {"verdict": m["verdict"], "evidence": m["evidence"]}
    return found


def chapter_stored_verdicts(chapter: str) -> dict[str, dict]:
    """The stored verdicts of all the notebooks of a chapter (teaching and reproduction pages)."""
    found: dict[str, dict] = {}
    for page in layout.chapter_pages(chapter):
        if page.ipynb.is_file():
            found.update(stored_verdicts(page.stem))
    return found


def chapter_title(stem: str) -> str:
    for line in (NOTEBOOKS / f"{stem}.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return stem


def row_anchor(claim_id: str) -> str:
    """Anchor of a claim's row on the ledger page."""
    return f"ledger-{claim_slug(claim_id)}"


def cell_label(claim_id: str) -> str:
    """Label of the claim cell in its chapter (a MyST target just before the cell)."""
    return f"claim-{claim_slug(claim_id)}"


ERRATUM_KINDS = {"typo": "typo", "ambiguity": "ambiguity", "error": "error"}
_KIND_ARTICLE = {"typo": "a typo", "ambiguity": "an ambiguity", "error": "an error"}
# The reason a non-verified verdict carries (see fedfreq.claims), as the ledger names it.
REASON_NAMES = {
    "stated_setup": "The paper's stated setup",
    "reading": "Reading",
    "scale_note": "Scale",
    "stand_in": "Stand-in data",
    "reason": "Why not checkable",
    "full_scale_note": "At the papers' scale",
}


def ledger_files() -> list[Path]:
    return sorted(LEDGER_DIR.glob("*.yml"))


#: libyaml's parser where PyYAML was built with it (the wheels are), else the pure-Python one:
#: the same documents, parsed about ten times faster.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path):
    """One YAML file, parsed safely (libyaml where available)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER)


_LEDGER_CACHE: dict[tuple, list[dict]] = {}


def load_ledger() -> list[dict]:
    """All claims, each with ``chapter`` set from its file name (``notebooks/<stem>``).

    The files are parsed once per change: every ``{verdict}`` role of the book asks for the
    ledger, and re-parsing it for each of them dominated the build.
    """
    paths = ledger_files()
    key = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    if key not in _LEDGER_CACHE:
        claims = []
        for path in paths:
            data = load_yaml(path) or {}
            for claim in data.get("claims", []):
                claims.append(dict(claim, chapter=f"notebooks/{path.stem}"))
        _LEDGER_CACHE.clear()
        _LEDGER_CACHE[key] = claims
    return [dict(c) for c in _LEDGER_CACHE[key]]


def _cell(text: str) -> str:
    return " ".join(str(text).split()) or " "


class _TableDirective(SphinxDirective):
    has_content = False

    def _parse(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=str(LEDGER_DIR)), self.content_offset, container)
        return container.children


class ClaimsLedger(_TableDirective):
    """Per-paper verdict counts, then one table of every claim (sortable and filterable
    in the browser by simple-datatables; a plain table without JavaScript)."""

    def run(self):
        for path in ledger_files():
            self.env.note_dependency(str(path))
        claims = load_ledger()
        full = full_scale_verdicts()
        verdicts = sorted({c["verdict"] for c in claims}, key=lambda v: (-sum(c["verdict"] == v for c in claims), v))
        out: list[str] = [
            f"The ledger holds {len(claims)} claims from {len(SOURCES)} sources.",
            "",
            "```{list-table} Verdicts by source",
            ":header-rows: 1",
            ":class: ledger-counts",
            "",
            "* - Source",
            "  - Claims",
        ]
        out += [f"  - {v}" for v in verdicts]
        for prefix in SOURCES:
            rows = [c for c in claims if c["id"].split("-")[0] == prefix]
            out += [f"* - `{prefix}` {SHORT[prefix]}", f"  - {len(rows)}"]
            out += [f"  - {sum(c['verdict'] == v for c in rows) or ''}" for v in verdicts]
        out += ["* - all", f"  - {len(claims)}"]
        out += [f"  - {sum(c['verdict'] == v for c in claims)}" for v in verdicts]
        out += ["```", ""]
        out += [
            "```{list-table} Every claim",
            ":header-rows: 1",
            ":widths: 11 12 48 20 9",
            ":class: ledger-table",
            "",
            "* - Id",
            "  - Verdict",
            "  - Claim (source)",
            "  - Method",
            "  - Chapter",
        ]
        std = self.env.get_domain("std")
        for c in claims:
            # each claim is a searchable object of the site: searching its id finds its row first
            std.note_object("claim", c["id"], row_anchor(c["id"]), location=self.get_location())
            verdict = f"**{c['verdict']}**"
            if c.get("erratum"):
                verdict += f" ({{ref}}`erratum <{c['erratum']['label']}>`)"
            at_full = full.get(c["id"])
            if at_full and at_full["verdict"] != c["verdict"]:
                verdict += f"; at the papers' scale: **{at_full['verdict']}**"
            method = _cell(c["method"])
            for key, name in REASON_NAMES.items():
                if c.get(key):
                    method += f" *{name}:* {_cell(c[key])}"
            stem = c["chapter"].split("/")[-1]
            short = layout.by_stem(stem).short
            label = cell_label(c["id"])
            sources = [p.md.read_text(encoding="utf-8") for p in layout.chapter_pages(stem)]
            if any(f"({label})=" in source for source in sources):
                where = f"{{ref}}`{short} <{label}>`"
            else:
                where = f"{{doc}}`{short} </{c['chapter']}>`"
            out += [
                f'* - <span id="{row_anchor(c["id"])}"></span>`{c["id"]}`',
                f"  - {verdict}",
                f"  - {_cell(c['statement'])} *({_cell(c['source'])})*",
                f"  - {method}",
                f"  - {where}",
            ]
        out += ["```", ""]
        return self._parse(out)


COVERAGE_DIR = LEDGER_DIR / "coverage"
PAPERS = [prefix for prefix in SOURCES if prefix != "F"]


def load_coverage() -> dict[str, dict]:
    """The coverage sweep of each paper (``book/claims/coverage/<prefix>.yml``), by prefix."""
    out = {}
    for prefix in PAPERS:
        path = COVERAGE_DIR / f"{prefix}.yml"
        if path.exists():
            out[prefix] = load_yaml(path)
    return out


#: Why an item of a paper is out of scope: the closed list of reasons (key: meaning).
OUT_OF_SCOPE_REASONS = {
    "definition": "a definition, notation, data recipe or modelling assumption",
    "data unavailable": "needs a dataset (or plots) that cannot be obtained offline",
    "security or deployment": "a security, systems or deployment remark with nothing to compute",
    "outside result": "related work or a result cited from outside the five papers",
    "proof step": "a step of a proof, covered by the checked result it proves",
    "no quantity": "motivation, summary, exposition or future work with no quantity to compute",
}


def coverage_status(item: dict) -> str:
    """checked, partly checked, out of scope, checkable (not yet checked) or not yet checked."""
    if item.get("ledger"):
        return "partly checked" if item.get("gap") else "checked"
    if item.get("out_of_scope"):
        return "out of scope"
    return "checkable, not yet checked" if item.get("checkable") else "not yet checked"


COVERAGE_STATUSES = ("checked", "partly checked", "checkable, not yet checked", "out of scope", "not yet checked")


class ClaimsCoverage(_TableDirective):
    """Per paper: how many of its results and quantitative statements the ledger checks,
    then (folded) the statements that are out of scope, with the reason, or not yet checked."""

    def run(self):
        coverage = load_coverage()
        for prefix in coverage:
            self.env.note_dependency(str(COVERAGE_DIR / f"{prefix}.yml"))
        if not coverage:
            return self._parse(["No paper has a coverage list yet."])
        out = [
            "```{list-table} Coverage of each paper",
            ":header-rows: 1",
            ":class: ledger-counts",
            "",
            "* - Paper",
            "  - Items",
        ]
        out += [f"  - {st}" for st in COVERAGE_STATUSES]
        for prefix, data in coverage.items():
            items = data["items"]
            out += [f"* - {prefix}: {_cell(SHORT[prefix])}", f"  - {len(items)}"]
            out += [f"  - {sum(coverage_status(i) == st for i in items)}" for st in COVERAGE_STATUSES]
        out += ["```", ""]
        for prefix, data in coverage.items():
            rest = [i for i in data["items"] if coverage_status(i) != "checked"]
            if not rest:
                continue
            out += [
                f":::{{dropdown}} {prefix}: {len(rest)} statements out of scope, checkable but not yet checked, "
                "or partly checked",
                "",
                "```{list-table}",
                ":header-rows: 1",
                ":widths: 18 42 40",
                ":class: coverage-table",
                "",
                "* - Where",
                "  - Statement",
                "  - Status",
            ]
            for item in rest:
                status = coverage_status(item)
                why = item.get("out_of_scope") or item.get("gap") or item.get("checkable") or ""
                if item.get("reason"):
                    status += f", {item['reason']}"
                ids = ", ".join(f"`{i}`" for i in item.get("ledger") or [])
                detail = f"**{status}**" + (f" ({ids})" if ids else "") + f": {_cell(why)}"
                out += [f"* - {_cell(item['where'])}", f"  - {_cell(item['text'])}", f"  - {detail}"]
            out += ["```", ":::", ""]
        return self._parse(out)


class Errata(_TableDirective):
    def run(self):
        for path in ledger_files():
            self.env.note_dependency(str(path))
        claims = [c for c in load_ledger() if c.get("erratum")]
        out: list[str] = [f"The ledger records {len(claims)} correction(s).", ""]
        for prefix, title in SOURCES.items():
            rows = [c for c in claims if c["id"].split("-")[0] == prefix]
            if not rows:
                continue
            out += [f"## {title}", ""]
            for c in rows:
                e = c["erratum"]
                reason = e.get("kind_reason")
                why = [f"- **Why {_KIND_ARTICLE[e['kind']]}.** {_cell(reason)}"] if reason else []
                out += [
                    f"({e['label']})=",
                    f"### {e['title']} ({ERRATUM_KINDS[e['kind']]})",
                    "",
                    f"- **Paper.** {_cell(e['paper'])}",
                    f"- **Correction.** {_cell(e['correction'])}",
                    *why,
                    f"- **Evidence.** {_cell(e['evidence'])} Claim `{c['id']}`, checked in "
                    f"{{doc}}`/{c['chapter']}` on every build.",
                    "",
                ]
        return self._parse(out)


class ExecutionStats(_TableDirective):
    def run(self):
        self.env.note_dependency(str(TIMES))
        data = json.loads(TIMES.read_text(encoding="utf-8"))
        out = [
            f"Measured on {data['machine']} when the stored outputs were last produced "
            f"(Python {data['python']}, scale `{data['scale']}`).",
            "",
            "```{list-table}",
            ":header-rows: 1",
            "",
            "* - Notebook",
            "  - Code cells",
            "  - Wall time (s)",
            "  - CPU time (s)",
            "  - Budget (s)",
        ]
        total = 0.0
        chapters = {p.stem for p in layout.pages()}
        records = {k: v for k, v in data["notebooks"].items() if k in chapters}
        for name, rec in sorted(records.items()):
            total += rec["seconds"]
            out += [
                f"* - {{doc}}`/notebooks/{name}`",
                f"  - {rec['cells']}",
                f"  - {rec['seconds']:.1f}",
                f"  - {rec['cpu_seconds']:.1f}" if "cpu_seconds" in rec else "  - –",
                f"  - {data['budget_seconds']}",
            ]
        out += [
            "```",
            "",
            f"Total: {total:.1f} s of wall time for {len(records)} notebook(s). The budget applies to "
            "the wall time on a machine running nothing else; the kernel's CPU time is shown for "
            "comparison (it counts every thread, so a page whose linear algebra runs on two threads "
            "can spend more CPU time than wall time).",
        ]
        env = data.get("environment")
        if env:
            blas = (
                "; ".join(
                    f"{b['library']} {b['version']}, kernel {b['kernel']}, {b['threads']} thread(s)"
                    for b in env["blas"]
                )
                or "none found"
            )
            disabled = ", ".join(env["numpy_simd_disabled"]) or "none"
            out += [
                "",
                "The numeric environment of that run (the stored outputs are checked against "
                "re-execution on any machine, so they must not depend on it):",
                "",
                "```{list-table}",
                "",
                f"* - CPU\n  - {env['cpu']} ({env['machine']})",
                f"* - Python, numpy, scipy\n  - {env['python']}, {env['numpy']}, {env['scipy']}",
                f"* - BLAS (threadpoolctl)\n  - {blas}",
                f"* - numpy SIMD\n  - baseline {', '.join(env['numpy_simd_baseline'])}; dispatched "
                f"{', '.join(env['numpy_simd_dispatched']) or 'none'}; disabled {disabled}",
                f"* - C library\n  - {env['libc'] or 'unknown'}",
                "```",
            ]
        return self._parse(out)


def _page_label(rec: dict) -> str:
    """How the table of page lengths names a page: "Chapter 9", "Chapter 9, reproduction"."""
    if rec["kind"] == "appendix":
        return f"Appendix {rec['number']}"
    return f"Chapter {rec['number']}" + (", reproduction" if rec["kind"] == "reproduction" else "")


def _page_status(rec: dict) -> str:
    if rec["kind"] != "teaching":
        return "no budget"
    if rec["status"] == "pending":
        return "pending: not yet split"
    return rec.get("budget") or "within budget"


class PageMetrics(_TableDirective):
    """The length of every chapter, appendix and reproduction page in the browser, against
    the teaching page's budget, as a numbered table with the medians."""

    def run(self):
        self.env.note_dependency(str(PAGE_METRICS))
        if not PAGE_METRICS.is_file():
            return self._parse(
                [
                    "No measurement recorded yet: build the site, then run "
                    "`scripts/browser_check.py _build/html --record-metrics book/page_metrics.json`."
                ]
            )
        data = json.loads(PAGE_METRICS.read_text(encoding="utf-8"))
        budget, window = data["budget"], data["window"]
        out = [
            f"```{{list-table}} Length of each notebook page in a {window['width']} x {window['height']} "
            "pixel window: screens (document height / window height), the share of the page taken by "
            "visible code-cell inputs (folded cells excluded), the longest visible code cell and the number "
            "of figures. Teaching pages are held to the budget once their chapter has a reproduction page; "
            "before that they are pending.",
            ":header-rows: 1",
            ":name: tab-page-metrics",
            "",
            "* - Page",
            "  - Kind",
            "  - Screens",
            "  - Visible code",
            "  - Longest code cell (lines)",
            "  - Figures",
            "  - Budget",
        ]
        for rec in data["pages"]:
            out += [
                f"* - {{doc}}`{_page_label(rec)} </notebooks/{rec['stem']}>`",
                f"  - {rec['kind']}",
                f"  - {rec['screens']:.1f}",
                f"  - {rec['code_fraction']:.0%}",
                f"  - {rec['longest_code_cell']}",
                f"  - {rec['figures']}",
                f"  - {_page_status(rec)}",
            ]
        out += ["```", ""]
        med = data["median_screens"]

        def fmt(x):
            return "none yet" if x is None else f"{x:.1f} screens"

        out += [
            f"Measured on {data['measured']} by `scripts/browser_check.py --record-metrics` on the built "
            f"site. The budget of a teaching page: at most {budget['screens']} screens, visible code at "
            f"most {budget['code_fraction']:.0%} of the page, no visible code cell longer than "
            f"{budget['code_cell_lines']} lines, and a median of at most {budget['median_screens']} screens "
            "over the teaching pages held to it. Medians: teaching pages held to the budget, "
            f"{fmt(med['enforced'])}; chapters not yet split, {fmt(med['pending'])}; all teaching pages, "
            f"{fmt(med['teaching'])}; reproduction pages, {fmt(med['reproduction'])}.",
        ]
        if data.get("median_ceiling") is not None and data["median_ceiling"] > budget["median_screens"]:
            out[-1] += (
                f" The median is not yet within its budget: until it is, the browser check holds it to "
                f"the ceiling of {data['median_ceiling']:.1f} screens last recorded, which a new record can "
                "only lower."
            )
        return self._parse(out)


class FullScaleResults(_TableDirective):
    """The last run at the papers' scale: per chapter its status, time and memory, every
    claim's verdict and evidence beside those at the book's scale, its printed tables and
    its figures."""

    def run(self):
        records = load_full_scale()
        for stem in records:
            self.env.note_dependency(str(FULL_DIR / f"{stem}.json"))
        if not records:
            return self._parse(["No run at the papers' scale has been stored yet."])
        dates = sorted(r.get("date", "") for r in records.values())
        machines = sorted({r.get("machine", "") for r in records.values()})
        total = sum(r["seconds"] for r in records.values())
        out = [
            f"The chapters were run between {dates[0]} and {dates[-1]} on {', '.join(machines)} "
            f"(Python {records[next(iter(records))].get('python', '?')}); {total / 60:.0f} minutes in all.",
            "",
            "```{list-table} Each chapter at the papers' scale",
            ":header-rows: 1",
            ":class: ledger-counts",
            "",
            "* - Chapter",
            "  - Status",
            "  - Wall time",
            "  - Peak memory",
            "  - Claims",
            "  - Verdict differs",
        ]
        diffs: dict[str, list[str]] = {}
        for stem, rec in records.items():
            stored = stored_verdicts(stem)
            diffs[stem] = [
                c["id"]
                for c in rec.get("claims", [])
                if c["id"] in stored and stored[c["id"]]["verdict"] != c["verdict"]
            ]
            status = "completed" if rec["status"] == "ok" else f"**{rec['status']}**: {_cell(rec.get('detail', ''))}"
            out += [
                f"* - {{doc}}`{layout.by_stem(stem).number}. {_cell(chapter_title(stem))} </notebooks/{stem}>`",
                f"  - {status}",
                f"  - {rec['seconds'] / 60:.1f} min",
                f"  - {rec['peak_rss_gb']:.2f} GB",
                f"  - {len(rec.get('claims', []))}",
                f"  - {', '.join(f'`{i}`' for i in diffs[stem]) or 'none'}",
            ]
        out += ["```", ""]
        for stem, rec in records.items():
            stored = stored_verdicts(stem)
            out += [f"## {layout.by_stem(stem).number}. {chapter_title(stem)}", ""]
            if rec["status"] != "ok":
                out += [f"The run did not complete ({rec['status']}: {_cell(rec.get('detail', ''))}).", ""]
            if rec.get("claims"):
                out += [
                    "```{list-table}",
                    ":header-rows: 1",
                    ":widths: 12 44 44",
                    ":class: full-scale-table",
                    "",
                    "* - Claim",
                    "  - At the book's scale",
                    "  - At the papers' scale",
                ]
                for c in rec["claims"]:
                    here = stored.get(c["id"], {"verdict": "not in the stored outputs", "evidence": ""})
                    mark = "**" if c["verdict"] != here["verdict"] else ""
                    out += [
                        f"* - {{claim}}`{c['id']}`",
                        f"  - *{here['verdict']}*. {_cell(here['evidence'])}",
                        f"  - {mark}{c['verdict']}{mark}. {_cell(c['evidence'])}",
                    ]
                out += ["```", ""]
            for k, fig in enumerate(rec.get("figures", []), 1):
                caption = fig.get("caption") or f"From the section *{fig['section']}*."
                alt = fig.get("alt") or caption
                out += [
                    f"```{{figure}} full_scale/{fig['file']}",
                    f":alt: {_cell(alt)} (at the papers' scale)",
                    f":name: full-{stem}-{k}",
                    "",
                    f"At the papers' scale. {_cell(caption)}",
                    "```",
                    "",
                ]
            if rec.get("tables"):
                out += [f":::{{dropdown}} Tables at the papers' scale ({len(rec['tables'])})", ""]
                for t in rec["tables"]:
                    out += [f"*{t['section']}*", ""]
                    if t.get("html"):
                        out += ["```{raw} html", *t["html"].splitlines(), "```", ""]
                    else:
                        out += ["```text", *t["text"].splitlines(), "```", ""]
                out += [":::", ""]
        return self._parse(out)


DATA_PAGES = ["book/claims_ledger", "book/errata", "book/execution_stats", "book/full_scale"]


def _always_reread(app, env, added, changed, removed):
    """The data pages depend on files Sphinx does not track: re-read them every build."""
    return [doc for doc in DATA_PAGES if doc in env.found_docs]


STATIC = Path(__file__).resolve().parent / "static"
LEDGER_PAGE = "book/claims_ledger"


def _add_static_path(app, config):
    config.html_static_path = [*config.html_static_path, str(STATIC)]


def _ledger_assets(app, pagename, templatename, context, doctree):
    """Load simple-datatables (served from the site, see scripts/fetch_mathjax.sh) and
    the ledger's own script and style on the ledger page only."""
    if pagename != LEDGER_PAGE:
        return
    app.add_css_file("../simple-datatables/simple-datatables.css")
    app.add_js_file("../simple-datatables/simple-datatables.js")
    app.add_css_file("ledger.css")
    app.add_js_file("ledger.js")


def _claim_object_type(app):
    """Claims as objects of the standard domain, searched before any page text."""
    from sphinx.domains import ObjType

    app.add_object_type("claim", "claim", objname="ledger claim")
    # search priority 0 ("important"): an id typed in the search box finds the ledger row first
    app.registry.domain_object_types["std"]["claim"] = ObjType("ledger claim", "claim", searchprio=0)


def _ledger_by_id() -> dict[str, dict]:
    return {c["id"]: c for c in load_ledger()}  # parsed once per change of the files


def verdict_class(verdict: str) -> str:
    """CSS class of a verdict's badge: ``verdict-verified-with-correction`` and so on."""
    return "verdict-" + re.sub(r"[^a-z]+", "-", verdict.lower()).strip("-")


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{verdict}`S2-Thm1``: the claim's verdict as a badge, then its id linking to its
    ledger row. A teaching page writes one sentence after it; the check itself runs on the
    chapter's reproduction page (or further down the same page)."""
    from sphinx import addnodes

    claim_id = text.strip()
    claim = _ledger_by_id().get(claim_id)
    if claim is None:
        msg = inliner.reporter.error(f"verdict: {claim_id!r} is not a claim of the ledger", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    badge = nodes.inline(claim["verdict"], claim["verdict"], classes=["claim-badge", verdict_class(claim["verdict"])])
    link = addnodes.pending_xref(
        "", refdomain="std", reftype="claim", reftarget=claim_id, refexplicit=True, refwarn=True
    )
    link += nodes.literal(claim_id, claim_id, classes=["claim-id"])
    return [nodes.inline("", "", badge, nodes.Text(" "), link, classes=["claim-verdict"])], []


def setup(app):
    _claim_object_type(app)
    app.add_role("verdict", verdict_role)
    app.connect("config-inited", _add_static_path)
    app.add_css_file("book.css")  # every page: outputs, inline code and equations fit their column
    app.add_js_file("mathfit.js")  # every page: a display equation too wide is scaled or scrolls
    app.connect("html-page-context", _ledger_assets)
    app.connect("env-get-outdated", _always_reread)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.add_directive("errata", Errata)
    app.add_directive("claims-coverage", ClaimsCoverage)
    app.add_directive("execution-stats", ExecutionStats)
    app.add_directive("full-scale-results", FullScaleResults)
    app.add_directive("page-metrics", PageMetrics)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
