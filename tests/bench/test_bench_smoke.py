"""Small versions of the benchmarks, so they keep running (no timing asserts)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"


def load_bench(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not DATA.exists(), reason="shared/bench/locomo-dev.json is not beside the project")
def test_locomo_smoke(capsys):
    locomo = load_bench("locomo")
    assert locomo.main(["--data", str(DATA), "--embedder", "fake", "--conversations", "1", "--max-questions", "15",
                        "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["rows"]
    assert set(rows) == {"bm25", "vectors", "hippo"}
    low, high = out["r10_margins"]["hippo - bm25"][1:]
    assert low <= high
    for row in rows.values():
        assert all(0.0 <= row[f"R@{k}"] <= 1.0 for k in (5, 10, 20))
        assert row["R@5"] <= row["R@10"] <= row["R@20"]
