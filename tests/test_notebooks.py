"""Notebook hygiene: the stored notebooks are in sync with their sources, executed,
free of errors and warnings, and within the time budget. (That re-execution
reproduces the stored outputs is checked by nbval in `make test`.)"""

import json
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
SOURCES = sorted(NB_DIR.glob("[0-9][0-9]_*.md"))
TIMES = json.loads((NB_DIR / "execution_times.json").read_text())


def test_there_are_chapters():
    assert SOURCES, "no chapter notebooks found"


def test_sources_and_notebooks_pair_up():
    assert {p.stem for p in SOURCES} == {p.stem for p in NB_DIR.glob("[0-9][0-9]_*.ipynb")}


def test_every_chapter_is_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text()
    for md in SOURCES:
        assert f"notebooks/{md.stem}" in toc, md.stem


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
class TestChapter:
    def load(self, md):
        return json.loads(md.with_suffix(".ipynb").read_text())

    def test_ipynb_matches_its_source(self, md):
        want = [(c.cell_type, c.source) for c in jupytext.read(md).cells]
        have = [(c["cell_type"], "".join(c["source"])) for c in self.load(md)["cells"]]
        assert have == want, "notebook out of sync with its .md source: run `make notebooks`"

    def test_all_code_cells_executed(self, md):
        code = [c for c in self.load(md)["cells"] if c["cell_type"] == "code"]
        assert code and all(c["execution_count"] is not None for c in code)
        assert sum(bool(c["outputs"]) for c in code) >= len(code) // 2, "suspiciously few outputs"

    def test_no_errors_or_warnings_in_outputs(self, md):
        for i, cell in enumerate(self.load(md)["cells"]):
            for out in cell.get("outputs", []):
                assert out["output_type"] != "error", f"cell {i} stored an error"
                assert out.get("name") != "stderr", f"cell {i} wrote to stderr: {''.join(out.get('text', ''))[:200]}"
                text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
                assert not re.search(r"\b\w*Warning\b", text), f"cell {i} output shows a warning"

    def test_seeded_randomness_only(self, md):
        src = md.read_text()
        assert not re.search(r"default_rng\(\s*\)", src), "unseeded default_rng()"
        assert "np.random.seed" not in src and "np.random.rand" not in src, "use seeded Generators"

    def test_within_time_budget(self, md):
        rec = TIMES["notebooks"].get(md.stem)
        assert rec is not None, "no recorded execution time: run `make notebooks`"
        assert rec["seconds"] <= TIMES["budget_seconds"], f"{rec['seconds']} s over budget"
        assert TIMES["scale"] == "default"
