"""The benchmark script, the progress bars of the papers' scale and the runner of `make full`."""

import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from fedfreq import scale

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import bench  # noqa: E402
import full_results  # noqa: E402


def test_bench_quick_writes_its_table_between_the_markers(tmp_path):
    page = tmp_path / "execution_stats.md"
    shutil.copy(ROOT / "book" / "execution_stats.md", page)
    before = page.read_text()
    assert bench.main(["--quick", "--repeat", "1", "--page", str(page)]) == 0
    after = page.read_text()
    head, rest = after.split(bench.START)
    table, tail = rest.split(bench.END)
    assert before.split(bench.START)[0] == head and before.split(bench.END)[1] == tail
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and not ln.startswith("| Kernel")]
    assert len(rows) == 12
    for row in rows:
        ratio = float(row.split("|")[5].split()[0])
        assert ratio > 0


def test_progress_is_silent_at_the_default_scale(monkeypatch, capsys):
    monkeypatch.delenv(scale.ENV_VAR, raising=False)
    items = [1, 2, 3]
    assert scale.progress(items, desc="x") is items
    assert capsys.readouterr() == ("", "")


def test_progress_writes_to_the_named_file_at_full_scale(monkeypatch, tmp_path):
    target = tmp_path / "progress.txt"
    monkeypatch.setenv(scale.ENV_VAR, "full")
    monkeypatch.setenv(scale.PROGRESS_VAR, str(target))
    assert list(scale.progress(range(5), desc="Table 9")) == [0, 1, 2, 3, 4]
    text = target.read_text()
    assert "Table 9" in text and "5/5" in text


def test_progress_refuses_a_name_that_is_not_a_string():
    with pytest.raises(ValueError, match="desc"):
        scale.progress([1], desc=3)


def test_progress_without_a_name_describes_the_iterable(monkeypatch, tmp_path):
    target = tmp_path / "progress.txt"
    monkeypatch.setenv(scale.ENV_VAR, "full")
    monkeypatch.setenv(scale.PROGRESS_VAR, str(target))
    assert list(scale.progress(range(3))) == [0, 1, 2]
    assert "range(0, 3)" in target.read_text()


def test_progress_without_the_file_falls_back_to_tqdm(monkeypatch, capsys):
    monkeypatch.setenv(scale.ENV_VAR, "full")
    monkeypatch.delenv(scale.PROGRESS_VAR, raising=False)
    assert list(scale.progress(range(4), desc="Fig. 3")) == [0, 1, 2, 3]
    assert "Fig. 3" in capsys.readouterr().err


# a tiny chapter in the chapters' MyST format: one cell that runs, one that fails, one after
TINY = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---

# Tiny

```{{code-cell}} ipython3
print("first cell ran")
```

```{{code-cell}} ipython3
{second}
```

```{{code-cell}} ipython3
print("never reached")
```
"""


def _tiny(path: Path, second: str) -> Path:
    path.write_text(TINY.format(second=second))
    return path


@pytest.fixture
def execute_notebooks(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # restored after the test
    monkeypatch.delenv(scale.ENV_VAR, raising=False)
    import execute_notebooks as module

    return module


def test_a_run_to_a_directory_keeps_going_after_a_failing_chapter(execute_notebooks, tmp_path):
    bad = _tiny(tmp_path / "bad.md", 'raise RuntimeError("claim does not hold")')
    good = _tiny(tmp_path / "good.md", "x = 1")
    good.write_text(good.read_text().replace('print("never reached")', 'print("reached")'))
    out = tmp_path / "out"
    assert execute_notebooks.main(["--output-dir", str(out), "--timeout", "120", str(bad), str(good)]) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert [summary["chapters"][k]["status"] for k in ("bad", "good")] == ["failed", "ok"]
    assert "claim does not hold" in summary["chapters"]["bad"]["detail"]
    nb = nbformat.read(out / "bad.ipynb", as_version=4)
    assert nb.metadata["run_status"]["status"] == "failed"
    assert nb.cells[0].cell_type == "markdown" and "did not complete" in nb.cells[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].outputs[0]["text"] == "first cell ran\n"  # what ran is kept
    assert code[1].outputs[-1]["output_type"] == "error" and code[1].metadata["run_status"] == "failed"
    assert code[2].outputs == []
    done = nbformat.read(out / "good.ipynb", as_version=4)
    assert "run_status" not in done.metadata
    assert done.cells[-1].outputs[0]["text"] == "reached\n"


def test_a_chapter_over_its_time_limit_is_stopped_and_saved(execute_notebooks, tmp_path):
    slow = _tiny(tmp_path / "slow.md", "import time\ntime.sleep(120)")
    rec = execute_notebooks.execute(slow, tmp_path / "out", keep_going=True, timeout=10)
    assert rec["status"] == "timeout"
    nb = nbformat.read(tmp_path / "out" / "slow.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].outputs[0]["text"] == "first cell ran\n"
    assert code[1].outputs[-1]["ename"] == "ChapterTimeout"


def test_a_run_records_the_kernels_cpu_time_which_sleeping_does_not_add_to(execute_notebooks, tmp_path):
    """The record's CPU time counts what the kernel computed (1.5 s of a busy loop here),
    not the time it waited (2 s of sleep), so a loaded machine does not inflate it."""
    code = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.5:\n    pass\ntime.sleep(2)"
    busy = _tiny(tmp_path / "busy.md", code)
    rec = execute_notebooks.execute(busy, tmp_path / "out")
    assert rec["status"] == "ok"
    assert 1.5 <= rec["cpu_seconds"] <= rec["seconds"] - 1.5


def test_the_default_run_stops_at_the_first_failure_and_writes_nothing(execute_notebooks, tmp_path):
    from nbclient.exceptions import CellExecutionError

    bad = _tiny(tmp_path / "bad.md", "1 / 0")
    with pytest.raises(CellExecutionError):
        execute_notebooks.execute(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_full_scale_run_records_every_verdict_and_the_results_are_stored(execute_notebooks, monkeypatch, tmp_path):
    """At FEDFREQ_SCALE=full a claim that does not hold is reported, the chapter goes on,
    and scripts/full_results.py stores its verdicts, printed tables and figures."""
    monkeypatch.setenv(scale.ENV_VAR, "full")
    cells = (
        "from fedfreq import check_claim\n"
        'check_claim("F-ONE", passed=False, evidence="2 != 3")\n'
        'check_claim("F-TWO", passed=True, evidence="1 == 1")\n'
        'print("a | b\\n1 | 2\\n3 | 4")\n'
        "import matplotlib.pyplot as plt\n"
        "plt.plot([0, 1]); plt.show()"
    )
    chapter = _tiny(tmp_path / "99_demo.md", cells)
    out = tmp_path / "out"
    assert execute_notebooks.main(["--output-dir", str(out), "--timeout", "120", str(chapter)]) == 0
    rec = json.loads((out / "summary.json").read_text())["chapters"]["99_demo"]
    assert rec["status"] == "ok" and rec["claims"] == 2 and rec["claims_not_holding"] == ["F-ONE"]
    monkeypatch.setattr(full_results, "DATA_DIR", tmp_path / "data")
    monkeypatch.setattr(full_results, "FIG_DIR", tmp_path / "data" / "figures")
    assert full_results.main(["--run-dir", str(out), "99_demo"]) == 0
    stored = json.loads((tmp_path / "data" / "99_demo.json").read_text())
    assert [(c["id"], c["passed"]) for c in stored["claims"]] == [("F-ONE", False), ("F-TWO", True)]
    assert stored["claims"][0]["verdict"] == "does not hold at the papers' scale"
    assert [t["text"] for t in stored["tables"]] == ["a | b\n1 | 2\n3 | 4"]
    assert len(stored["figures"]) == 1
    png = tmp_path / "data" / stored["figures"][0]["file"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert full_results.check(["99_demo"]) == []
