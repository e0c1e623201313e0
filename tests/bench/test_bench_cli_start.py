"""A small run of bench/cli_start.py (no timing asserts): every call it times runs and is reported."""

from __future__ import annotations

import json

from support import load_bench


def test_cli_start_smoke(capsys):
    bench = load_bench("cli_start")
    assert bench.main(["--smoke", "--imports", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for name in ("baseline", "help", "recall", "recall --json", "recall, no model"):
        assert result[name]["runs"] == 2 and result[name]["wall_p50_s"] > 0, name
    assert "hippo" in result["recall imports (ms, cumulative)"]
    assert "rich" not in result["help imports (ms, cumulative)"]
