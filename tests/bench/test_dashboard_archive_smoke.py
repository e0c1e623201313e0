"""A small run of bench/dashboard_archive.py (the dashboard's archive and type views at scale), so
it keeps running; no timing asserts."""

from __future__ import annotations

import json

import pytest
from support import load_bench


def test_dashboard_archive_smoke(capsys):
    pytest.importorskip("fastapi")
    pytest.importorskip("jinja2")
    bench = load_bench("dashboard_archive")
    assert bench.main(["--smoke", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["backends"]["sqlite"]
    assert result["load"] == {"seconds": result["load"]["seconds"], "live": 2_000, "archived": 500,
                              "experiences": 300}
    for group, names in (("core", {"browse", "browse_archived", "browse_type", "browse_type_archived",
                                   "get_archived", "list_archived_first_page"}),
                         ("pages", {"browse", "browse_show_archived", "browse_type", "archived_memory"})):
        assert set(result[group]) == names
        assert all(0 < t["median"] <= t["p95"] for t in result[group].values())
