"""BENCHMARKS.md's table of current figures is what bench/current.py makes of bench/results/ (issue 49):
the check passes on the real files, and fails, saying where, when a figure in the table is changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support import load_bench

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_of_current_figures_is_current():
    current = load_bench("current")
    assert current.check(ROOT / "BENCHMARKS.md", ROOT / "bench" / "results") == [], (
        "BENCHMARKS.md's table is stale: run `python bench/current.py` and commit it")


def test_the_table_reads_every_figure_from_its_results_file():
    current = load_bench("current")
    table = current.table(ROOT / "bench" / "results")
    assert table.startswith(current.BEGIN) and table.endswith(current.END)
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(rows) >= 30, "one row per current figure"
    for row in rows:
        files = row.rstrip(" |").rsplit("|", 1)[1]
        for name in files.split("`")[1::2]:
            assert (ROOT / "bench" / "results" / name).is_file(), (name, row)


def test_the_check_fails_when_a_figure_in_the_table_is_changed(tmp_path, capsys):
    current = load_bench("current")
    copy = tmp_path / "BENCHMARKS.md"
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "| LoCoMo, R@10 (R@5), categories 1-4 |" in line)
    cells = row.split(" | ")
    cells[2] = "0.999 (0.999)"  # the figure, as someone might edit it by hand
    copy.write_text(text.replace(row, " | ".join(cells)), encoding="utf-8")
    assert current.main(["--check", "--benchmarks", str(copy)]) == 1
    said = capsys.readouterr().err
    assert "run `python bench/current.py`" in said and "LoCoMo" in said
    assert current.main(["--benchmarks", str(copy)]) == 0  # rewriting it makes it current again
    assert copy.read_text(encoding="utf-8") == text
    assert current.main(["--check", "--benchmarks", str(copy)]) == 0


def test_the_check_fails_when_a_results_file_moves_a_figure(tmp_path, capsys):
    current = load_bench("current")
    results = tmp_path / "results"
    shutil.copytree(ROOT / "bench" / "results", results, ignore=shutil.ignore_patterns("*.png", "*.log"))
    run = json.loads((results / "issue48-compaction.json").read_text(encoding="utf-8"))
    run["summary_ratio"] = 23.5  # a later run that compresses less
    (results / "issue48-compaction.json").write_text(json.dumps(run), encoding="utf-8")
    assert current.main(["--check", "--results", str(results)]) == 1
    assert "23.5×" in capsys.readouterr().err
    assert "≥ 24×: **not met**" in current.table(results)


def test_the_test_tiers_add_their_rows_when_timed(tmp_path):
    current = load_bench("current")
    results = tmp_path / "results"
    shutil.copytree(ROOT / "bench" / "results", results, ignore=shutil.ignore_patterns("*.png", "*.log"))
    (results / "test-tiers.json").unlink(missing_ok=True)
    assert "test-tiers.json" not in current.table(results)
    (results / "test-tiers.json").write_text(
        '{"measured": "2026-12-07", "tiers": {"fast": {"command": "python -m pytest -m fast", "seconds": 312.0,'
        ' "tests": 1500}, "full": {"command": "bash .ci/run", "seconds": 1600.0, "with_setup": true}}}',
        encoding="utf-8")
    table = current.table(results)
    assert "| fast tier (2026-12-07) | 5 min 12 s, 1,500 tests |  | < 5 min: **not met** |" in table
    assert "| full tier with set-up (2026-12-07) | 26 min 40 s |  | < 30 min with set-up: met |" in table
