"""Small stores: does recall rank the obvious answer first when an agent holds a handful of memories?

``bench/small_stores.json`` (written for issue 47, before any tuning): 128 cases over eight kinds of
memory (personal, health, family, team, runbook, code, schedule, travel), each 4-30 memories of which
several share words with the question, one or two intended answers, the question paraphrased as a
person asks it (synonyms, negations, updates, implied constraints, abbreviations, decisions, dates).
Half the cases are ``dev`` (tuned on), half ``test`` (reported); the split was fixed when the file
was written.

Each case is its own agent: its memories are stored one by one, oldest first, in the hour before the
question (as an import or a capture of past conversations writes them), each with its ``observed_at``,
and the question is asked at ``asked_at``. ``--aged`` stores each at its ``observed_at`` instead (the
clock set there, as an agent would have stored them over months): what decay then hides (a memory
below strength 0.05 is not recalled) is measured apart from relevance. Reported,
for hippo's recall beside cosine alone and BM25 alone in the same run: top-1 (the first result is an
answer) and MRR (1 / the best rank of an answer; 0 when none is returned), overall and by phenomenon,
with paired-bootstrap intervals of hippo's margins.

    python bench/small_stores.py [--split dev|test|all] [--try NAME=VALUE[,NAME=VALUE]] [--json] [--misses]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import bm25_only, hippo_recall, paired_ci, parse_settings, vectors_only  # noqa: E402

import hippo  # noqa: E402

DATA = Path(__file__).resolve().parent / "small_stores.json"
DEPTH = 30  # results asked for: every memory of the largest store

Retriever = Callable[["hippo.Memory", str, int], list[str]]


class Clock:
    """A clock the benchmark sets: each memory is stored at its time, the question asked at its."""

    def __init__(self) -> None:
        self.now = datetime.fromisoformat("2020-01-01T00:00:00+00:00")

    def __call__(self) -> datetime:
        return self.now


def load(path: Path, split: str) -> list[dict[str, Any]]:
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return [c for c in cases if split == "all" or c["split"] == split]


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def build(db: Path, cases: list[dict], embedder: str, clock: Clock, *, aged: bool = False) -> dict[str, dict[str, set[str]]]:
    """Every case stored as an agent of its own; per case, chunk id -> the case's memory ids it holds
    (two when the store recognised one memory as a duplicate of another)."""
    ids: dict[str, dict[str, set[str]]] = {}
    with hippo.open(db, embedder=embedder, clock=clock) as base:
        for case in cases:
            mem = base.for_agent(f"case-{case['id']}")
            held: dict[str, set[str]] = defaultdict(set)
            ordered = sorted(case["memories"], key=lambda m: m["observed_at"])
            for n, memory in enumerate(ordered):
                observed = when(memory["observed_at"])
                clock.now = observed if aged else when(case["asked_at"]) - timedelta(hours=1, seconds=-n)
                held[mem.store_memory(memory["text"], observed_at=observed).id].add(memory["id"])
            ids[case["id"]] = dict(held)
    return ids


def evaluate(db: Path, cases: list[dict], ids: dict, retriever: Retriever, embedder: str, clock: Clock,
             **settings: Any) -> dict[str, Any]:
    top1: list[float] = []
    rr: list[float] = []
    ranks: dict[str, int | None] = {}
    with hippo.open(db, embedder=embedder, clock=clock, **settings) as base:
        for case in cases:
            clock.now = when(case["asked_at"])
            mem = base.for_agent(f"case-{case['id']}")
            found = [ids[case["id"]].get(i, set()) for i in retriever(mem, case["question"], DEPTH)]
            answers = set(case["answers"])
            rank = next((n for n, held in enumerate(found, start=1) if held & answers), None)
            ranks[case["id"]] = rank
            top1.append(float(rank == 1))
            rr.append(1.0 / rank if rank else 0.0)
    by: dict[str, dict[str, float]] = {}
    for n, case in enumerate(cases):
        group = by.setdefault(case["phenomenon"], {"cases": 0, "top1": 0.0, "mrr": 0.0})
        group["cases"] += 1
        group["top1"] += top1[n]
        group["mrr"] += rr[n]
    for group in by.values():
        group["top1"] /= group["cases"]
        group["mrr"] /= group["cases"]
    return {"top1": statistics.mean(top1), "mrr": statistics.mean(rr), "per_case_top1": top1, "per_case_rr": rr,
            "ranks": ranks, "by_phenomenon": dict(sorted(by.items()))}


def run(cases: list[dict], embedder: str, variants: list[str], *, aged: bool = False) -> dict[str, dict]:
    clock = Clock()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "small.db"
        ids = build(db, cases, embedder, clock, aged=aged)
        rows = {
            "cosine": evaluate(db, cases, ids, vectors_only, embedder, clock),
            "bm25": evaluate(db, cases, ids, bm25_only, embedder, clock),
            "hippo": evaluate(db, cases, ids, hippo_recall, embedder, clock),
        }
        for variant in variants:
            rows[f"hippo {variant}"] = evaluate(db, cases, ids, hippo_recall, embedder, clock,
                                                **parse_settings(variant))
    return rows


def margins(rows: dict[str, dict]) -> dict[str, dict[str, tuple[float, float, float]]]:
    return {f"{name} - {base}": {metric: paired_ci(rows[name][f"per_case_{metric}"], rows[base][f"per_case_{metric}"])
                                 for metric in ("top1", "rr")}
            for name in rows if name.startswith("hippo") for base in ("cosine", "bm25")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", choices=("dev", "test", "all"), default="test")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--try", dest="variants", action="append", default=[], metavar="NAME=VALUE[,NAME=VALUE]",
                        help="also run hippo with these settings, e.g. --try rerank=learned (repeatable)")
    parser.add_argument("--aged", action="store_true", help="store each memory at its observed_at (decay applies)")
    parser.add_argument("--misses", action="store_true", help="list the cases hippo does not rank first")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    cases = load(args.data, args.split)
    rows = run(cases, args.embedder, args.variants, aged=args.aged)
    gaps = margins(rows)
    if args.json:
        print(json.dumps({"split": args.split, "cases": len(cases), "rows": rows, "margins": gaps}, indent=2))
        return 0
    print(f"small stores, {args.split} split: {len(cases)} cases")
    for name, r in rows.items():
        print(f"  {name:28} top-1 {r['top1']:.3f}  MRR {r['mrr']:.3f}")
    print("\nmargins, paired bootstrap 95% interval (top-1 | reciprocal rank)")
    for label, m in gaps.items():
        print(f"  {label:36} " + "  ".join(f"{x:+.3f} [{lo:+.3f}, {hi:+.3f}]" for x, lo, hi in m.values()))
    print("\ntop-1 by phenomenon")
    names = list(rows)
    print(f"  {'phenomenon':14}{'cases':>6}" + "".join(f"{n[:14]:>16}" for n in names))
    for phenomenon, group in rows["hippo"]["by_phenomenon"].items():
        print(f"  {phenomenon:14}{group['cases']:6d}"
              + "".join(f"{rows[n]['by_phenomenon'][phenomenon]['top1']:16.3f}" for n in names))
    if args.misses:
        print("\nnot first in hippo (rank; cosine's rank)")
        for case in cases:
            rank = rows["hippo"]["ranks"][case["id"]]
            if rank != 1:
                print(f"  {case['id']:14} {rank!s:>4} {rows['cosine']['ranks'][case['id']]!s:>4}  {case['question']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
