"""bench/mem0_compare.py, small: both halves in the benchmark environment, and the hippo half
alone with the fake embedder (no timing asserts).

mem0 is a benchmark-only dependency: `scripts/test.sh` builds its environment
(bench/mem0-env.sh, .venv-bench-mem0/) beside .venv, and the script must say
clearly why its mem0 half did not run where that environment is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import load_bench

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"
BENCH_PYTHON = ROOT / ".venv-bench-mem0" / "bin" / "python"


def load_script():
    return load_bench("mem0_compare")


@pytest.mark.skipif(not DATA.exists(), reason="shared/bench/locomo-dev.json is not beside the project")
def test_hippo_half_runs_and_the_mem0_half_is_skipped(capsys):
    script = load_script()
    assert script.main(["--data", str(DATA), "--embedder", "fake", "--conversations", "1", "--max-questions", "12",
                        "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["mem0_skipped"].startswith("mem0 half skipped")
    assert "mem0 half skipped" in captured.err
    assert "mem0" not in out and "mem0" not in sys.modules
    assert out["network_refused"] == []
    row = out["hippo"]
    assert len(out["hippo_batched"]) == 2 and all(v > 0 for v in out["hippo_batched"].values())
    assert row["add_per_s"] > 0 and row["add_p50_ms"] <= row["add_p95_ms"]
    assert row["search_p50_ms"] <= row["search_p95_ms"]
    got = row["recall"]
    assert got["questions_1_4"] == 12
    assert all(0.0 <= got[f"R@{k}"] <= 1.0 for k in (5, 10, 20))
    assert got["R@5"] <= got["R@10"] <= got["R@20"]


@pytest.mark.skipif(not DATA.exists(), reason="shared/bench/locomo-dev.json is not beside the project")
def test_markdown_report_has_one_row_per_measure(capsys):
    script = load_script()
    assert script.main(["--data", str(DATA), "--embedder", "fake", "--conversations", "1", "--max-questions", "5",
                        "--hippo-only"]) == 0
    out = capsys.readouterr().out
    assert "command: " in out and "bench/mem0_compare.py" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0] == "| measure | hippo | mem0 | hippo/mem0 |"
    assert any(r.startswith("| evidence R@10, categories 1-4 |") for r in rows)
    assert all(r.count("|") == 5 for r in rows)


def test_without_mem0_the_reason_names_the_setup_script(tmp_path, monkeypatch):
    script = load_script()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mem0" else real(name, *a))
    side, reason = script.open_mem0(tmp_path, 9)
    assert side is None
    assert "not importable" in reason and "bench/mem0-env.sh" in reason


@pytest.mark.skipif(not DATA.exists(), reason="shared/bench/locomo-dev.json is not beside the project")
@pytest.mark.skipif(not BENCH_PYTHON.exists(), reason="no .venv-bench-mem0: run `bash bench/mem0-env.sh` (scripts/test.sh does)")
def test_side_by_side_with_mem0_small(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HOME": str(tmp_path)}  # mem0 writes under ~/.mem0
    run = subprocess.run(
        [str(BENCH_PYTHON), str(ROOT / "bench" / "mem0_compare.py"), "--data", str(DATA), "--conversations", "1",
         "--max-questions", "6", "--max-turns", "80", "--json"],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout)
    assert out["mem0_skipped"] is None
    for side in ("hippo", "mem0"):
        row = out[side]
        assert row["add_per_s"] > 0 and row["search_p50_ms"] > 0
        assert all(0.0 <= row["recall"][f"R@{k}"] <= 1.0 for k in (5, 10, 20))
    assert out["embedding"]["cosine_hippo_vs_mem0"]["min"] > 0.999  # the same model on both sides
    assert out["llm"]["connections_during_benchmark"] == 0  # infer=False: mem0 never called its LLM
    assert out["llm"]["deliberate_call_connections"] > 0  # ...and the trap would have seen it
    assert out["network_refused"] == []
    assert out["without_embedding"]["mem0"]["search_p50_ms"] > 0  # the pass with vectors computed beforehand
    charts = load_bench("charts")
    charts.mem0_chart(out, tmp_path / "mem0.png")
    assert (tmp_path / "mem0.png").read_bytes()[:4] == b"\x89PNG"
