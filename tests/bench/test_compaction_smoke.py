"""A small run of bench/compaction.py (issue 21), so it keeps running (no timing asserts)."""

from __future__ import annotations

import json

from support import load_bench


def test_compaction_smoke(capsys):
    bench = load_bench("compaction")
    assert bench.main(["--smoke", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tokens_before"] >= 5_000 and out["messages"] > 10
    assert 0 < out["compact_ms"]["p50"] <= out["compact_ms"]["max"]
    assert out["sparse_index_tokens"] <= out["max_sparse_index_tokens"]
    assert out["ratio"] > 1 and sum(out["sections"].values()) == out["entries"]
    assert out["memory_compact"]["same_ids"] and out["memory_compact"]["memories"] > 0
