"""Small versions of the benchmarks, so they keep running (no timing asserts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import load_bench

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"


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


def test_scale_smoke(capsys):
    scale = load_bench("scale")
    assert scale.main(["--smoke", "--json", "--long", "200"]) == 0
    result = json.loads(capsys.readouterr().out)["sizes"]["300"]
    # recall as users call it, beside touch=False; the long run counts the links its recalls left
    assert result["recall_touched_p50_ms"] > 0 and result["touch_vs_untouched_p50"] > 0
    assert [w["recalls"] for w in result["long_run"]] == [200] and result["long_run"][0]["links"] > 0
    assert result["chunks"] == 300 and result["hits_per_query"] > 0
    assert result["store_batched_per_s"] > 0 and result["db_mb_per_10k"] > 0
    # the smoke run lowers the ANN threshold, so the HNSW path and its recall check run too
    assert result["index"] == "HnswIndex" and 0.0 <= result["ann_recall_at_10"] <= 1.0
    # questions naming a month of the stored history run the time-filtered pass and find rows of that month
    assert result["dated_recall_p50_ms"] > 0 and result["dated_hits_in_month"] > 0


def test_ann_choice_smoke(capsys):
    ann = load_bench("ann_choice")
    assert ann.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert "| exact numpy |" in out
    rows = [line for line in out.splitlines() if line.startswith(("| hnswlib HNSW", "| faiss HNSW"))]
    assert {r.split()[1] for r in rows} == {"hnswlib", "faiss"}
    assert "deleted ids returned afterwards: 0" in out


@pytest.mark.skipif(not DATA.exists(), reason="shared/bench/locomo-dev.json is not beside the project")
def test_charts_from_the_smoke_results(capsys, tmp_path):
    locomo, scale, charts = load_bench("locomo"), load_bench("scale"), load_bench("charts")
    locomo.main(["--data", str(DATA), "--embedder", "fake", "--conversations", "1", "--max-questions", "10", "--json"])
    (tmp_path / "locomo.json").write_text(capsys.readouterr().out)
    scale.main(["--smoke", "--json"])
    (tmp_path / "scale.json").write_text(capsys.readouterr().out)
    assert charts.main(["--results", str(tmp_path)]) == 0
    for name in ("locomo", "scale"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(not DATA.exists(), reason="shared/bench/locomo-dev.json is not beside the project")
def test_models_smoke(capsys):
    pytest.importorskip("onnxruntime")
    models = load_bench("models")
    assert models.main(["--models", "local", "--conversations", "1", "--max-questions", "10", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["model"] == "local"
    for side in ("hippo", "vectors"):
        assert 0.0 <= row[side]["R@5"] <= row[side]["R@10"] <= row[side]["R@20"] <= 1.0
    assert row["docs_per_s"] > 0 and row["rss_mb"] > 0 and row["disk_mb"] > 0
    assert row["languages"]["of"] == {"th": 3, "zh": 3, "de": 3} and row["languages"]["thai_cosine"] > 0.99


def test_backends_smoke(capsys, postgres):
    backends = load_bench("backends")
    assert backends.main(["--smoke", "--json", "--postgres", postgres.admin]) == 0
    row = json.loads(capsys.readouterr().out)["sizes"]["300"]
    assert set(row) == {"sqlite", "postgresql"}
    for result in row.values():
        assert result["chunks"] == 300 and result["store_batched_per_s"] > 0 and result["db_mb"] > 0
        assert result["recall_p50_ms"] > 0 and 0.0 <= result["top10_agreement_unbounded"] <= 1.0


LONGMEMEVAL = ROOT.parent / "shared" / "bench" / "longmemeval-dev.json.gz"


@pytest.mark.skipif(not LONGMEMEVAL.exists(), reason="shared/bench/longmemeval-dev.json.gz is not beside the project")
def test_longmemeval_smoke(capsys):
    longmemeval = load_bench("longmemeval")
    assert longmemeval.main(["--data", str(LONGMEMEVAL), "--embedder", "fake", "--questions", "4",
                             "--try", "context_weight=0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"turn", "session"}
    turn, session = out["turn"], out["session"]
    assert set(turn["rows"]) == {"bm25", "vectors", "hippo", "hippo context_weight=0"}
    for row in turn["rows"].values():
        assert 0.0 <= row["R@5"] <= row["R@10"] <= row["R@50"] <= 1.0 and 0.0 <= row["nDCG@10"] <= 1.0
    for row in session["rows"].values():
        assert 0.0 <= row["R@5"] <= row["R@10"] <= 1.0
    low, high = turn["margins"]["hippo - bm25 R@5"][1:]
    assert low <= high and session["questions"] == 4


@pytest.mark.parametrize("name", ["small_stores.json", "small_stores_natural.json"])
def test_small_stores_file_and_smoke(name):
    """Each small-stores file holds what issue 47 asks (kinds, sizes, answers, a fixed split), and the
    benchmark runs on it: every metric in [0, 1], the answers' ranks where the cases say."""
    small = load_bench("small_stores")
    cases = small.load(small.DATA.with_name(name), "all")
    assert len(cases) >= 120 and len({c["kind"] for c in cases}) >= 8
    for case in cases:
        held = {m["id"] for m in case["memories"]}
        assert 4 <= len(held) <= 30 and 1 <= len(case["answers"]) <= 2 and set(case["answers"]) <= held
        assert max(m["observed_at"] for m in case["memories"]) <= case["asked_at"]
    assert {c["split"] for c in cases} == {"dev", "test"}
    assert abs(sum(c["split"] == "dev" for c in cases) - len(cases) / 2) <= len({c["kind"] for c in cases})
    rows = small.run([c for c in cases if c["kind"] == "travel"][:6], "fake", ["vector_weight=0.9"])
    assert set(rows) == {"cosine", "bm25", "hippo", "hippo vector_weight=0.9"}
    for row in rows.values():
        assert 0.0 <= row["top1"] <= row["mrr"] <= 1.0 and len(row["ranks"]) == 6
