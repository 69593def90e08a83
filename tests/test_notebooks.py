"""Notebook hygiene: the stored notebooks are in sync with their sources, executed,
free of errors and warnings, and within the time budget. (That re-execution
reproduces the stored outputs is checked by nbval in `make test`.)"""

import json
import re
import sys
from pathlib import Path

import jupytext
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
SOURCES = [p.md for p in layout.pages()]
TIMES = json.loads((NB_DIR / "execution_times.json").read_text())

# A float literal: mantissa with a decimal point (or digits before an exponent).
_FLOAT = re.compile(r"(?<![\w.])[-+]?(\d+\.\d*|\.\d+|\d+(?=[eE]))([eE][-+]?\d+)?(?![\w.])")
#: Stored outputs may not carry floats with this many significant digits or more: their
#: last digits change with the CPU's BLAS kernels, numpy's SIMD level and libm.
LONG_FLOAT_DIGITS = 13
#: Cell tag that allows long float reprs in a cell's outputs (the cell must say why).
LONG_FLOAT_TAG = "full-precision-output"
COMPARED_MIMES = ("text/plain", "text/latex", "application/papermill.record/text/plain")


def significant_digits(literal: str) -> int:
    """Significant digits of a float literal such as ``-1.0367690791769075e-05``."""
    mantissa = re.split("[eE]", literal.lstrip("+-"))[0]
    return len(mantissa.replace(".", "").lstrip("0"))


def long_floats(text: str) -> list[str]:
    """Float literals in ``text`` with :data:`LONG_FLOAT_DIGITS` or more significant digits."""
    return [m.group(0) for m in _FLOAT.finditer(text) if significant_digits(m.group(0)) >= LONG_FLOAT_DIGITS]


def compared_texts(output: dict) -> list[str]:
    """The texts nbval compares strictly: streams, plain text, LaTeX and glue records."""
    texts = ["".join(output.get("text", ""))]
    data = output.get("data", {})
    texts += ["".join(data[k]) if isinstance(data[k], list) else str(data[k]) for k in COMPARED_MIMES if k in data]
    return texts


def test_long_float_scanner():
    assert long_floats("x = 1.0367690791769075 and 2.9") == ["1.0367690791769075"]
    assert long_floats("'1.2345678901234e-05'") == ["1.2345678901234e-05"]
    assert long_floats("0.000012345678901234") == ["0.000012345678901234"]
    assert long_floats("1.03677, 123456789012345 (an integer), 1.2e-15, 0.1234567890") == []
    assert long_floats("np.float64(0.30000000000000004)") == ["0.30000000000000004"]


def test_there_are_chapters():
    assert SOURCES, "no chapter notebooks found"


def test_sources_and_notebooks_pair_up():
    assert {p.stem for p in SOURCES} == {p.stem for p in NB_DIR.glob("*.ipynb")}


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

    def test_every_figure_is_numbered_captioned_and_described(self, md):
        """A figure cell carries a caption, a name (so it is numbered) and alt text, and
        no other displayed output: myst-nb would pull that into the figure too."""
        for i, cell in enumerate(self.load(md)["cells"]):
            if cell["cell_type"] != "code":
                continue
            outputs = cell.get("outputs", [])
            images = [o for o in outputs if "image/png" in o.get("data", {})]
            if not images:
                continue
            meta = cell["metadata"].get("mystnb", {})
            figure, alt = meta.get("figure", {}), meta.get("image", {}).get("alt", "")
            assert len(images) == 1, f"cell {i}: one figure per cell"
            assert len(figure.get("caption", "")) >= 40, f"cell {i}: figure without a caption"
            assert figure.get("name", "").startswith("fig-"), f"cell {i}: figure without a name"
            assert len(alt) >= 40, f"cell {i}: figure without alt text"
            shown = [
                o
                for o in outputs
                if o["output_type"] in ("display_data", "execute_result")
                and not any(k.startswith("application/papermill.record") for k in o.get("data", {}))
            ]
            assert len(shown) == 1, f"cell {i}: a figure cell displays something else too"

    def test_code_lines_fit_the_column(self, md):
        """Code cells are formatted to 88 characters: they fit a 1280-pixel page."""
        long = [
            line
            for cell in jupytext.read(md).cells
            if cell.cell_type == "code"
            for line in cell.source.splitlines()
            if len(line) > 88
        ]
        assert not long, f"{len(long)} code line(s) over 88 characters: {long[:3]}"

    def test_ipynb_metadata_matches_its_source(self, md):
        """Tags, figure captions and alt text are read from the stored notebook."""
        want = [{k: v for k, v in c.metadata.items() if k != "execution"} for c in jupytext.read(md).cells]
        have = [c.get("metadata", {}) for c in self.load(md)["cells"]]
        assert have == want, (
            "cell metadata out of sync with the .md source: run "
            f"`python scripts/execute_notebooks.py --metadata-only {md.stem}`"
        )

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

    def test_no_full_precision_floats_in_outputs(self, md):
        """Stored outputs show numbers at the precision a claim needs, never a raw repr."""
        for i, cell in enumerate(self.load(md)["cells"]):
            if LONG_FLOAT_TAG in cell.get("metadata", {}).get("tags", []):
                continue
            for out in cell.get("outputs", []):
                for text in compared_texts(out):
                    found = long_floats(text)
                    assert not found, (
                        f"cell {i} stores float(s) with >= {LONG_FLOAT_DIGITS} significant digits {found[:3]}: "
                        "glue with fedfreq.display.glue, round with round_sig, or print errors with bound_text"
                    )

    def test_stream_chunks_merged(self, md):
        """How a kernel splits a stream into messages depends on timing: the stored form
        merges consecutive chunks, so re-executing an unchanged chapter leaves it unchanged."""
        for i, cell in enumerate(self.load(md)["cells"]):
            outs = cell.get("outputs", [])
            for a, b in zip(outs, outs[1:], strict=False):
                assert not (a["output_type"] == b["output_type"] == "stream" and a["name"] == b["name"]), (
                    f"cell {i} stores a split {a['name']} stream: run `make notebooks`"
                )

    def test_seeded_randomness_only(self, md):
        src = md.read_text()
        assert not re.search(r"default_rng\(\s*\)", src), "unseeded default_rng()"
        assert "np.random.seed" not in src and "np.random.rand" not in src, "use seeded Generators"

    def test_within_time_budget(self, md):
        rec = TIMES["notebooks"].get(md.stem)
        assert rec is not None, "no recorded execution time: run `make notebooks`"
        assert rec["seconds"] <= TIMES["budget_seconds"], f"{rec['seconds']} s over budget"
        assert TIMES["scale"] == "default"
