"""Recall's candidate pools with their features, dumped once per benchmark file for ranking experiments.

For every question of LoCoMo development, of LongMemEval development (turn and session level) and of
both files of small stores (both halves of each) this takes the pool recall itself searches (hippo's
store, the question's words and vector, a deep pool), and keeps per candidate what a ranking stage
can read at recall time: its cosine, its raw keyword score, its neighbours in the same conversation,
its length, whether it was observed in the period the question names, its text, session and time of
observation, the store's size; and whether it is gold.
``bench/rerank.py`` fits and compares rankings
on these pools without touching a store again.

    python bench/features.py [--pool 100] [--out bench/.cache/features.pkl]
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo  # noqa: E402
import longmemeval  # noqa: E402

import hippo  # noqa: E402
from hippo.core.ports import ChunkFilter
from hippo.core.recall.dates import named_period  # noqa: E402
from hippo.core.recall.pool import find_candidates, keyword_match  # noqa: E402

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev.json"
NATURAL = Path(__file__).resolve().parent / "small_stores_natural.json"


def pool_of(mem: "hippo.Memory", question: str, pool: int, now) -> dict:
    """One question's candidates: ids, cosine, raw keyword score, neighbours, length, in-period flag."""
    store, agent = mem.store, mem.agent_id
    vector = mem.embedding.query(question)
    found = find_candidates(mem.agent_context.store, question, vector, pool, ChunkFilter())
    pooled = [c.id for c in found.chunks]
    near = _neighbours(store, agent, pooled)
    outside = list(dict.fromkeys(o for others in near.values() for o, _ in others if o not in found.similarity))
    near.update(_neighbours(store, agent, outside))
    ids = pooled + outside
    further = list(dict.fromkeys(o for others in near.values() for o, _ in others if o not in found.similarity))
    _, extra = store.score(agent, further, vector)
    cos = {**found.similarity, **extra}
    chunks = {c.id: c for c in store.get_chunks(agent, ids)}
    texts = {i: c.content for i, c in chunks.items()}
    period = named_period(question, now)
    dated: set[str] = set()
    if period is not None:
        got = find_candidates(mem.agent_context.store, question, vector, pool,
                              ChunkFilter(since=period[0], until=period[1]))
        dated = {c.id for c in got.chunks}
    return {
        "ids": ids,
        "pooled": np.array([i in found.similarity or i in found.bm25 for i in ids]),
        "cos": np.array([cos.get(i, 0.0) for i in ids]),
        "bm25": np.array([found.bm25.get(i, 0.0) for i in ids]),
        "has_bm25": np.array([i in found.bm25 for i in ids]),
        "words": np.array([len(texts.get(i, "").split()) for i in ids]),
        "dated": np.array([i in dated for i in ids]),
        "near": {i: [(o, d, cos.get(o, 0.0), found.bm25.get(o, 0.0)) for o, d in near.get(i, [])] for i in ids},
        "terms": keyword_match(question),
        "texts": texts,
        "sessions": {i: c.session_id for i, c in chunks.items()},
        "observed": {i: (c.observed_at or c.created_at).timestamp() for i, c in chunks.items()},
        "asked": now.timestamp(),
        "store_size": mem.stats().memories,
    }


def _neighbours(store, agent: str, ids: list[str]) -> dict:
    """Two places either side in the same conversation, asked 100 seeds at a time (one statement each)."""
    out: dict = {}
    for start in range(0, len(ids), 100):
        out.update(store.neighbours(agent, ids[start:start + 100], 2, ChunkFilter()))
    return out


def dump_locomo(path: Path, pool: int) -> list[dict]:
    conversations = locomo.load(path)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        embedder = longmemeval.make_embedder("local")
        ids = _build_locomo(db, conversations, embedder)
        for conv in conversations:
            with hippo.open(db, agent_id=conv["id"], embedder=embedder) as mem:
                for question, evidence, category in conv["questions"]:
                    row = pool_of(mem, question, pool, datetime.now(timezone.utc))
                    row.update(gold=[ids[conv["id"]].get(i) in evidence for i in row["ids"]],
                               n_gold=len(evidence), category=category, question=question)
                    out.append(row)
    return out


def _build_locomo(db: Path, conversations: list[dict], embedder) -> dict:
    from hippo.core.memory import MemoryInput

    ids = {}
    for conv in conversations:
        session_of = {dia: key for key, _, said in conv["sessions"] for dia, _, _ in said}
        with hippo.open(db, agent_id=conv["id"], embedder=embedder) as mem:
            results = mem.store_memories(MemoryInput(text, metadata={"dia_id": dia}, observed_at=when,
                                                     session_id=session_of[dia]) for dia, text, when in conv["turns"])
        ids[conv["id"]] = {r.id: dia for r, (dia, _, _) in zip(results, conv["turns"])}
    return ids


def dump_longmemeval(path: Path, level: str, pool: int) -> list[dict]:
    questions = longmemeval.load(path, level)
    embedder = longmemeval.make_embedder("local")
    longmemeval.prepare_vectors(questions, embedder)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, q in enumerate(questions):
            db, keys = longmemeval.build(Path(tmp), q, embedder)
            with hippo.open(db, agent_id="user", embedder=embedder, clock=lambda when=q["date"]: when) as mem:
                row = pool_of(mem, q["question"], pool, q["date"])
            row.update(gold=[keys.get(i) in q["gold"] for i in row["ids"]], n_gold=len(q["gold"]),
                       category=q["type"], question=q["question"])
            out.append(row)
            print(f"\r{level} {n + 1}/{len(questions)}", end="", file=sys.stderr)
    print(file=sys.stderr)
    return out


def dump_small(pool: int, path: Path | None = None) -> list[dict]:
    """The small stores of one file (both halves; ``split`` says which), each asked at its own date."""
    import small_stores

    cases = small_stores.load(path or small_stores.DATA, "all")
    clock = small_stores.Clock()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "small.db"
        ids = small_stores.build(db, cases, "local", clock)
        with hippo.open(db, embedder="local", clock=clock) as base:
            for case in cases:
                clock.now = small_stores.when(case["asked_at"])
                mem = base.for_agent(f"case-{case['id']}")
                row = pool_of(mem, case["question"], pool, clock.now)
                held = ids[case["id"]]
                row.update(gold=[bool(held.get(i, set()) & set(case["answers"])) for i in row["ids"]], n_gold=1,
                           category=case["phenomenon"], question=case["question"], split=case["split"])
                out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool", type=int, default=100)
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--longmemeval", type=Path, default=longmemeval.DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=longmemeval.CACHE / "features.pkl")
    parser.add_argument("--only", nargs="*", choices=("locomo", "lme_turn", "lme_session", "small", "natural"),
                        help="dump these files only (the others kept from an existing --out)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    dumps = {"locomo": lambda: dump_locomo(args.locomo, args.pool),
             "lme_turn": lambda: dump_longmemeval(args.longmemeval, "turn", args.pool),
             "lme_session": lambda: dump_longmemeval(args.longmemeval, "session", args.pool),
             "small": lambda: dump_small(args.pool),
             "natural": lambda: dump_small(args.pool, NATURAL)}
    data = pickle.loads(args.out.read_bytes()) if args.only and args.out.exists() else {}
    data.update({name: dump() for name, dump in dumps.items() if not args.only or name in args.only})
    args.out.write_bytes(pickle.dumps(data))
    pools = sum(map(len, data.values()))
    print(f"{pools} pools in {time.perf_counter() - started:.0f}s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
