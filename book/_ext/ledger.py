"""Sphinx directives that render the claims ledger and the execution statistics.

``{claims-ledger}`` reads ``book/claims.yml`` and renders one table per source.
``{execution-stats}`` reads ``notebooks/execution_times.json``, written by
``scripts/execute_notebooks.py`` when the stored outputs were produced.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "book" / "claims.yml"
TIMES = ROOT / "notebooks" / "execution_times.json"

SOURCES = {
    "F": "Background results (checked in the Foundations chapter)",
    "S0": "Seed 000: bounding contribution optimally under user-level distributed DP",
    "S1": "Seed 001: private federated frequency estimation with sketches",
    "S2": "Seed 002: sample-and-threshold differential privacy",
    "S3": "Seed 003: bit-efficient numerical aggregation",
    "S4": "Seed 004: bounding contribution for user-level histograms",
}


def load_ledger() -> list[dict]:
    with open(LEDGER, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    return data["claims"]


def _cell(text: str) -> str:
    return " ".join(str(text).split()) or " "


class _TableDirective(SphinxDirective):
    has_content = False

    def _parse(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=str(LEDGER)), self.content_offset, container)
        return container.children


class ClaimsLedger(_TableDirective):
    def run(self):
        self.env.note_dependency(str(LEDGER))
        claims = load_ledger()
        out: list[str] = []
        for prefix, title in SOURCES.items():
            rows = [c for c in claims if c["id"].split("-")[0] == prefix]
            if not rows:
                continue
            out += [f"```{{rubric}} {title}", "```", ""]
            out += ["```{list-table}", ":header-rows: 1", ":widths: 14 50 18 18", ""]
            out += ["* - Id", "  - Claim", "  - Method", "  - Verdict"]
            for c in rows:
                verdict = f"**{c['verdict']}**"
                if c.get("erratum"):
                    verdict += f" ({{ref}}`erratum <{c['erratum']}>`)"
                number = int(c["chapter"].split("/")[-1][:2])
                verdict += f", {{doc}}`chapter {number} </{c['chapter']}>`"
                out += [
                    f"* - `{c['id']}`",
                    f"  - {_cell(c['statement'])} *({_cell(c['source'])})*",
                    f"  - {_cell(c['method'])}",
                    f"  - {verdict}",
                ]
            out += ["```", ""]
        counts = {}
        for c in claims:
            counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
        summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        out = [f"The ledger holds {len(claims)} claims: {summary}.", ""] + out
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
            "  - Budget (s)",
        ]
        total = 0.0
        for name, rec in sorted(data["notebooks"].items()):
            total += rec["seconds"]
            out += [
                f"* - {{doc}}`/notebooks/{name}`",
                f"  - {rec['cells']}",
                f"  - {rec['seconds']:.1f}",
                f"  - {data['budget_seconds']}",
            ]
        out += ["```", "", f"Total: {total:.1f} s for {len(data['notebooks'])} notebook(s)."]
        return self._parse(out)


def setup(app):
    app.add_directive("claims-ledger", ClaimsLedger)
    app.add_directive("execution-stats", ExecutionStats)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
