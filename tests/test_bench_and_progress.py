"""The benchmark script and the progress bars of the papers' scale."""

import shutil
import sys
from pathlib import Path

import pytest

from fedfreq import scale

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import bench  # noqa: E402


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
    assert len(rows) == 11
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
