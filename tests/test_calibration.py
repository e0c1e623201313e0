"""The band calibration file and its script: enough varied pairs, and the local bands lose nothing on it."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location("measure_bands", ROOT / "calibration" / "measure_bands.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_pair_file_is_large_labelled_and_varied():
    rows = [json.loads(line) for line in (ROOT / "calibration" / "fact_pairs.jsonl").read_text().splitlines()]
    labels = Counter(r["label"] for r in rows)
    assert len(rows) >= 150 and set(labels) == {"duplicate", "supersedes", "distinct"}
    assert min(labels.values()) >= 50
    assert len({(r["existing"], r["new"]) for r in rows}) == len(rows)  # no pair twice


def test_local_bands_merge_nothing_that_is_not_a_duplicate(local_embedder):
    bands = load_script()
    rows = bands.load_pairs(bands.PAIRS)
    sims = bands.cosines(local_embedder, rows)
    t = local_embedder.thresholds
    scored = bands.as_hippo_runs(rows, sims, t.duplicate, t.ambiguous)
    assert scored["lost_by_merge"] == 0
    assert scored["recall"]["distinct"] == 1.0
    assert scored["perfect_llm_accuracy"] >= 0.95
    # the measured numbers the README reports
    assert scored["accuracy"] >= 0.55 and scored["recall"]["supersedes"] >= 0.65
    labels = np.array([r["label"] for r in rows])
    assert bands.evaluate(sims, labels, *bands.SEED_BANDS).dup_precision < 0.95  # why the seed's bands were not kept


def test_script_prints_a_report_for_the_fake_embedder(capsys):
    assert load_script().main(["--embedder", "fake", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pairs"] >= 150 and "hippo" in summary and "chosen" in summary


def load_offline_script():
    spec = importlib.util.spec_from_file_location("measure_offline", ROOT / "calibration" / "measure_offline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_held_out_pair_file_is_large_varied_and_disjoint_from_the_tuning_files():
    def pairs(name: str) -> list[dict]:
        return [json.loads(line) for line in (ROOT / "calibration" / name).read_text().splitlines() if line.strip()]

    test = pairs("fact_pairs_test2.jsonl")
    tuning = [r for name in ("fact_pairs.jsonl", "fact_pairs_train.jsonl", "fact_pairs_test.jsonl") for r in pairs(name)]
    labels = Counter(r["label"] for r in test)
    assert len(test) >= 150 and set(labels) == {"duplicate", "supersedes", "distinct"} and min(labels.values()) >= 50
    seen = {(r["existing"], r["new"]) for r in tuning} | {(r["new"], r["existing"]) for r in tuning}
    assert not {(r["existing"], r["new"]) for r in test} & seen
    languages = Counter(r["lang"] for r in test)
    assert sum(n for lang, n in languages.items() if lang != "en") >= 50 and len(languages) == 7, languages


def test_offline_script_classifies_every_pair_through_the_core_decision(capsys):
    assert load_offline_script().main(["--embedder", "fake", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] >= 150 and sum(sum(row.values()) for row in report["confusion"].values()) == report["n"]
