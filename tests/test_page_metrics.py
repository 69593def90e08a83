"""The measured length of the notebook pages (book/page_metrics.json, written by
``scripts/browser_check.py --record-metrics``) and its table on the execution statistics page."""

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import browser_check  # noqa: E402

RECORD = json.loads((ROOT / "book" / "page_metrics.json").read_text(encoding="utf-8"))
FIELDS = {"stem", "chapter", "number", "kind", "status", "screens", "code_fraction", "longest_code_cell", "figures"}


def test_every_record_is_a_measured_notebook():
    assert RECORD["pages"], "no page measured"
    stems = [p["stem"] for p in RECORD["pages"]]
    assert len(stems) == len(set(stems))
    for p in RECORD["pages"]:
        assert FIELDS <= set(p), p
        assert p["kind"] in ("teaching", "reproduction", "appendix")
        assert p["screens"] > 0 and 0 <= p["code_fraction"] < 1 and p["longest_code_cell"] >= 0
    assert RECORD["window"] == {"width": 1280, "height": 900}


def test_budget_labels_follow_the_numbers():
    """A teaching page held to the budget is labelled by what its numbers say; a pending one
    is a chapter with no reproduction page at the time of measurement."""
    split = {p["chapter"] for p in RECORD["pages"] if p["kind"] == "reproduction"}
    for p in RECORD["pages"]:
        if p["kind"] != "teaching":
            assert p["status"] == p["kind"]
            continue
        assert p["status"] == ("enforced" if p["chapter"] in split else "pending"), p["stem"]
        if p["status"] == "enforced":
            over = bool(browser_check.budget_problems({**p, "longest_code_cell_starts": ""}))
            assert p["budget"] == ("over budget" if over else "within budget"), p["stem"]
        else:
            assert p["budget"] == "pending"
    enforced = [p["screens"] for p in RECORD["pages"] if p["status"] == "enforced"]
    if enforced:
        assert RECORD["median_screens"]["enforced"] == round(statistics.median(enforced), 2)


def test_the_median_ceiling_is_a_ratchet(tmp_path):
    """While the median teaching page is over its budget, the recorded ceiling holds it: a new
    record lowers the ceiling to the measured median, never raises it, never below the budget."""
    budget = browser_check.MAX_MEDIAN_SCREENS
    ceiling = RECORD.get("median_ceiling")
    enforced = RECORD["median_screens"]["enforced"]
    if ceiling is not None:
        assert ceiling >= budget
        assert enforced is None or ceiling <= max(budget, enforced)

    kinds = {
        f"notebooks/0{i}_t.html": {
            "stem": f"0{i}_t",
            "chapter": f"0{i}_t",
            "number": str(i),
            "kind": "teaching",
            "status": "enforced",
        }
        for i in (1, 2, 3)
    }

    def results(screens):
        return [
            {
                "page": p,
                "failures": [],
                "ok": True,
                "metrics": {
                    "screens": s,
                    "code_fraction": 0.05,
                    "longest_code_cell": 10,
                    "longest_code_cell_starts": "",
                    "figures": 5,
                },
            }
            for p, s in zip(kinds, screens, strict=True)
        ]

    args = browser_check.argparse.Namespace(width=1280, height=900)
    rec = browser_check.metrics_record(results([18.0, 20.0, 22.0]), kinds, args, float("inf"))
    assert rec["median_ceiling"] == 20.0
    assert browser_check.metrics_record(results([18.0, 24.0, 22.0]), kinds, args, 20.0)["median_ceiling"] == 20.0
    assert browser_check.metrics_record(results([12.0, 13.0, 22.0]), kinds, args, 20.0)["median_ceiling"] == budget
    path = tmp_path / "metrics.json"
    path.write_text(browser_check.json.dumps(rec), encoding="utf-8")
    assert browser_check.median_ceiling(path) == 20.0 + browser_check.MEDIAN_SLACK
    assert browser_check.median_ceiling(None) == budget
    over = browser_check.apply_budget(results([18.0, 21.0, 22.0]), kinds, 20.0)
    assert [f["kind"] for f in over] == ["median-length"]
    assert browser_check.apply_budget(results([18.0, 19.5, 22.0]), kinds, 20.0) == []
    assert [f["kind"] for f in browser_check.apply_budget(results([18.0, 19.5, 22.0]), kinds)] == ["median-length"]


def test_kinds_come_from_the_table_of_contents(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "format: jb-book\nroot: intro\nparts:\n  - caption: I\n    numbered: true\n    chapters:\n"
        "      - file: notebooks/01_a\n        sections:\n          - file: notebooks/01_a_reproduction\n"
        "      - file: notebooks/02_b\n  - caption: App\n    chapters:\n      - file: notebooks/A_c\n",
        encoding="utf-8",
    )
    kinds = browser_check.page_kinds(toc)
    assert {k: v["status"] for k, v in kinds.items()} == {
        "notebooks/01_a.html": "enforced",
        "notebooks/01_a_reproduction.html": "reproduction",
        "notebooks/02_b.html": "pending",
        "notebooks/A_c.html": "appendix",
    }


def test_the_math_fitting_script_is_served_on_every_page():
    source = (ROOT / "book" / "_ext" / "ledger.py").read_text(encoding="utf-8")
    assert 'app.add_js_file("mathfit.js")' in source
    assert (ROOT / "book" / "_ext" / "static" / "mathfit.js").is_file()
    assert ".math-scroll-box::after" in (ROOT / "book" / "_ext" / "static" / "book.css").read_text(encoding="utf-8")
