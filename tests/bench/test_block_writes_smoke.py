"""A small run of bench/block_writes.py (no timing asserts): every call it times runs and is reported."""

from __future__ import annotations

import json

from support import load_bench


def test_block_writes_smoke(capsys):
    bench = load_bench("block_writes")
    assert bench.main(["--smoke", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"set_memory_block, a new text", "set_memory_block, the same text", "append_memory_block",
                           "update_metadata, new metadata"}
    assert all(row["runs"] == 5 and row["p50_ms"] > 0 for row in result.values())
