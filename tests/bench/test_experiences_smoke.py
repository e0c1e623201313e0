"""A small run of bench/experiences.py (issue 19's targets), so it keeps running (no timing asserts)."""

from __future__ import annotations

import json

from support import load_bench


def _check(row: dict, *, full: bool) -> None:
    short = row["short_term"]
    for key in ("append_ms", "search_ms", "scan_ms", "deque_append_ms", "numpy_top10_of_100_ms"):
        assert 0 < short[key]["p50"] <= short[key]["p99"]
    assert short["search_hits"] > 0
    if not full:
        return
    for key in ("consolidation_small", "consolidation_big"):
        series = row[key]["embedding_excluded"]
        assert series["ms"]["n"] == 2 and series["ms"]["p50"] > 0
    assert row["load"]["experiences"] == 300
    cases = row["recall"]["cases"]
    assert set(cases) == {"none", "types", "min_importance", "tags", "since", "all four"}
    assert cases["none"]["share"] == 1.0 and cases["none"]["query_hits"] > 0
    for case in cases.values():
        assert case["query_ms"]["p50"] > 0 and case["list_ms"]["p50"] > 0


def test_experiences_smoke_sqlite(capsys):
    bench = load_bench("experiences")
    assert bench.main(["--smoke", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["backends"]) == {"sqlite", "sqlite-durable"}
    assert out["backends"]["sqlite"]["short_term"]["buffer"] == "LocalBuffer"
    assert out["backends"]["sqlite-durable"]["short_term"]["buffer"] == "DatabaseBuffer"
    _check(out["backends"]["sqlite"], full=True)
    _check(out["backends"]["sqlite-durable"], full=False)


def test_experiences_smoke_postgres(capsys, postgres):
    bench = load_bench("experiences")
    assert bench.main(["--smoke", "--json", "--backends", "postgresql", "--postgres", postgres.admin]) == 0
    row = json.loads(capsys.readouterr().out)["backends"]["postgresql"]
    assert row["short_term"]["buffer"] == "DatabaseBuffer"
    _check(row, full=True)
