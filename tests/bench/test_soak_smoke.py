"""A short run of bench/soak.py on both backends, so it keeps running (its verdict is the long run's:
a 20-second run only has to finish without an error and report every part)."""

from __future__ import annotations

import json

from support import load_bench


def test_soak_smoke(postgres, tmp_path):
    soak = load_bench("soak")
    assert soak.main(["--smoke", "--postgres", postgres.admin, "--out", str(tmp_path)]) in (0, 1)
    for backend in ("sqlite", "postgres"):
        result = json.loads((tmp_path / f"soak-{backend}.json").read_text())
        verdict = result["verdict"]
        assert verdict["errors"] == 0, verdict["first_errors"]
        assert verdict["requests"] > 50 and verdict["p99_first_ms"] > 0 and verdict["rss_mb_last"] > 0
        assert set(result["operations"]) == {"recall", "store", "remember_facts", "observe", "process", "surface",
                                             "forget"}
        assert len(result["samples"]) >= 4 and all(s["open_files"] > 0 for s in result["samples"])
    assert (tmp_path / "soak.png").stat().st_size > 10_000
