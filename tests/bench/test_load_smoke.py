"""A small run of bench/load.py (issue 34's load benchmark), so it keeps running (no timing asserts)."""

from __future__ import annotations

import json

from support import load_bench


def test_load_smoke(capsys, postgres, tmp_path):
    load = load_bench("load")
    out = tmp_path / "load.json"
    assert load.main(["--smoke", "--postgres", postgres.admin, "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["memories"] == 200 and set(results["fill_seconds"]) == {"postgresql", "sqlite"}
    runs = {run["configuration"]: run for run in results["runs"]}
    assert set(runs) == {"postgresql x1", "postgresql x3", "sqlite x1"}
    for run in runs.values():
        assert run["errors"] == 0, run["error_samples"]
        assert run["throughput"] > 0 and run["ops"]["recall"]["n"] > 0
        assert 0 < run["ops"]["recall"]["p50_ms"] <= run["ops"]["recall"]["p99_ms"]
        assert run["cpu"]["servers"] > 0 and run["bound"]
    assert runs["postgresql x1"]["cpu"]["postgres"] > 0 and runs["postgresql x1"]["postgres_activity"]["samples"] > 0
    assert set(runs["postgresql x3"]["cpu"]["per_server"]) == {"load-1", "load-2", "load-3"}
    assert set(results["three_over_one"]) == {"2"} and results["three_over_one"]["2"]["all_rounds"] > 0
    assert "| postgresql x3 | 2 | 1 |" in capsys.readouterr().out
