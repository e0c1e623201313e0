"""Does the keyword side drown or over-reward long texts? (issue 33, "long memories read whole")

Each question's memories are split into length quartiles (word pieces of the local model's
tokenizer, within that question's own corpus; LoCoMo: within the conversation). For each quartile:
its share of the memories, of the gold, of BM25's top 5 and of hippo's, and the gold's R@5 there.
BM25 that drowned long texts would leave long gold out (a low R@5 in Q4); one that over-rewarded
them would give Q4 more of its top 5 than Q4 holds of the gold.

    python bench/lengths.py [--longmemeval ../shared/bench/longmemeval-dev.json.gz]
                            [--locomo ../shared/bench/locomo-dev.json] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo  # noqa: E402
import longmemeval  # noqa: E402

import hippo  # noqa: E402
from hippo.providers.local import count_tokens  # noqa: E402

RETRIEVERS = {"bm25": locomo.bm25_only, "hippo": locomo.hippo_recall}
Row = tuple[dict[str, int], set[str], dict[str, list[str]]]  # quartile of each memory, gold, each top 5


def quartiles(keys: list[str], texts: list[str]) -> dict[str, int]:
    lengths = count_tokens(texts)
    edges = np.quantile(lengths, [0.25, 0.5, 0.75])
    return {k: int(np.searchsorted(edges, n, side="right")) for k, n in zip(keys, lengths)}


def table(rows: list[Row]) -> dict[str, list[float]]:
    out: dict[str, Any] = {"memories": np.zeros(4), "gold": np.zeros(4)}
    gold_count, hits = np.zeros(4), {r: np.zeros(4) for r in RETRIEVERS}
    for name in RETRIEVERS:
        out[f"{name} top 5"] = np.zeros(4)
    for quart, gold, tops in rows:
        for q in quart.values():
            out["memories"][q] += 1 / len(quart)
        for key in gold:
            out["gold"][quart[key]] += 1 / len(gold)
            gold_count[quart[key]] += 1
        for name, found in tops.items():
            for key in found[:5]:
                out[f"{name} top 5"][quart[key]] += 1 / 5
            for key in gold & set(found[:5]):
                hits[name][quart[key]] += 1
    result = {k: (v / len(rows)).round(3).tolist() for k, v in out.items()}
    for name in RETRIEVERS:
        result[f"gold R@5 of {name}"] = (hits[name] / np.maximum(gold_count, 1)).round(3).tolist()
    return result


def longmemeval_rows(path: Path, level: str) -> list[Row]:
    embedder = longmemeval.make_embedder("local")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for q in longmemeval.load(path, level):
            db, keys = longmemeval.build(Path(tmp), q, embedder)
            quart = quartiles([k for k, *_ in q["memories"]], [t for _, t, *_ in q["memories"]])
            with hippo.open(db, agent_id="user", embedder=embedder, clock=lambda when=q["date"]: when) as mem:
                tops = {name: [keys[i] for i in found(mem, q["question"], 5) if i in keys]
                        for name, found in RETRIEVERS.items()}
            rows.append((quart, q["gold"], tops))
    return rows


def locomo_rows(path: Path) -> list[Row]:
    conversations = locomo.load(path)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        ids = locomo.build(db, conversations, "local")
        for conv in conversations:
            quart = quartiles([d for d, _, _ in conv["turns"]], [t for _, t, _ in conv["turns"]])
            with hippo.open(db, agent_id=conv["id"], embedder="local") as mem:
                for question, evidence, category in conv["questions"]:
                    if category != 5:
                        tops = {name: [ids[conv["id"]][i] for i in found(mem, question, 5) if i in ids[conv["id"]]]
                                for name, found in RETRIEVERS.items()}
                        rows.append((quart, evidence, tops))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--longmemeval", type=Path, default=longmemeval.DEFAULT_DATA)
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    out = {f"longmemeval {level}": table(longmemeval_rows(args.longmemeval, level)) for level in ("session", "turn")}
    out["locomo"] = table(locomo_rows(args.locomo))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for name, result in out.items():
        print(f"\n{name}: length quartiles of each corpus's memories, shortest first\n| | Q1 | Q2 | Q3 | Q4 |")
        print("| --- | --- | --- | --- | --- |")
        for row, values in result.items():
            print(f"| {row} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
