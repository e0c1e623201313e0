"""SQLite beside PostgreSQL in one run: the same corpus, vectors and questions on both stores.

For each size and backend: batched store throughput, recall latency (p50/p95, the embedding
excluded: vectors come from ``bench/scale.py``'s on-disk cache of real all-MiniLM-L6-v2 vectors),
disk, and how much of recall's top 10 stays the same when the keyword side scores every match
(the agreement of the released keyword budget with an unbounded hybrid search).

Recall is timed as users call it (``touch=True``, the default: the retrieval event is written)
beside ``touch=False``, query by query in turns so that both meet the same machine state; then
recall with each kind of filter (``FILTERS``: tags, metadata, time, provenance, session, kind), the
share of the store each lets through beside it. Every memory carries what those filters ask for.
Sizes above 100k read their vectors from the cache only (``ann-minilm-<size>.npy``): a size whose
file is missing is refused rather than embedded here.

PostgreSQL is the one given by ``--postgres URL`` (a database hippo may fill; it is emptied of
hippo's tables first), else one started here with the PyPI package ``pgserver`` (no root).

    python bench/backends.py [--sizes 100000] [--queries 200] [--postgres URL] [--backends sqlite,postgresql] [--json]
    python bench/backends.py --smoke --postgres URL      # 300 chunks, fake vectors: for the test suite
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.core.memory import MemoryInput

HERE = Path(__file__).resolve().parent
HISTORY_START, HISTORY_DAYS = datetime(2022, 1, 1, tzinfo=timezone.utc), 730  # as bench/scale.py spreads them
HISTORY_END = HISTORY_START + timedelta(days=HISTORY_DAYS)


def fresh_postgres(url: str | None, workdir: Path) -> Iterator[str]:
    """URLs of empty databases: made on the given server, or on one pgserver starts."""
    import psycopg

    if url is None:
        url = tuned_pgserver(workdir / "pg")
    admin = url
    number = 0
    while True:
        number += 1
        name = f"hippo_bench_{os.getpid()}_{number}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
        base, _, query = admin.partition("?")
        yield base.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")


def tuned_pgserver(folder: Path) -> str:
    """A PostgreSQL started by ``pgserver``, with the settings any deployment tunes first:
    ``shared_buffers`` at a quarter of the machine's memory (pgserver keeps initdb's 128 MB, in
    which a 100k store's HNSW graph alone does not fit) and room to build that graph."""
    import pgserver
    import psycopg
    from pgserver._commands import pg_ctl

    server = pgserver.get_server(folder, cleanup_mode="stop")
    url = server.get_uri()
    memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET shared_buffers = '{memory_mb // 4}MB'")
        # pgvector builds an HNSW graph fast only while it fits here (~2 kB a vector at 384 dimensions).
        conn.execute(f"ALTER SYSTEM SET maintenance_work_mem = '{min(4096, memory_mb // 6)}MB'")
    pg_ctl(["-w", "restart"], pgdata=server.pgdata, user=server.system_user)
    return url


def unbounded() -> Any:
    """A context in which both stores' keyword side scores every match (no budget)."""
    import contextlib

    import hippo.stores.postgres.search as pg_search
    import hippo.stores.sqlite.search as sqlite_search

    @contextlib.contextmanager
    def patch() -> Iterator[None]:
        saved = sqlite_search.KEYWORD_BUDGET, pg_search.KEYWORD_BUDGET
        sqlite_search.KEYWORD_BUDGET = pg_search.KEYWORD_BUDGET = 10**12
        try:
            yield
        finally:
            sqlite_search.KEYWORD_BUDGET, pg_search.KEYWORD_BUDGET = saved

    return patch()


TAGS = 20  # a memory has one of 20 tags; every 20th comes from a migration; 100 memories a session
FILTERS: dict[str, Callable[[int], dict[str, Any]]] = {
    "tags": lambda j: {"tags": [f"topic-{j % TAGS:02d}"]},
    "metadata eq": lambda j: {"metadata": {"project": f"p{j % 50}"}},
    "metadata in": lambda j: {"metadata": {"project": {"$in": [f"p{j % 50}", f"p{(j + 7) % 50}"]}}},
    "since": lambda j: {"since": HISTORY_END - timedelta(days=30)},
    "until": lambda j: {"until": HISTORY_START + timedelta(days=30)},
    "source": lambda j: {"source": "migration"},
    "session": lambda j: {"session_id": f"session-{j * 37 % 1000}"},
    "kind": lambda j: {"kind": "memory"},
}


def attributes(i: int) -> dict[str, Any]:
    """What memory ``i`` carries for the filters: its metadata, source and session."""
    return {"metadata": {"tags": [f"topic-{i * 7 % TAGS:02d}"], "project": f"p{i % 50}"},
            "source": "migration" if i % 20 == 0 else "agent", "session_id": f"session-{i // 100}"}


def measure(db: str, n: int, texts: list[str], lookup: Any, questions: list[str], scale: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks": n}
    with hippo.open(db, agent_id="bench", embedder=lookup) as mem:
        rates = []
        for start in range(0, n, 1000):
            items = [MemoryInput(t, observed_at=scale.observed(i, n), **attributes(i))
                     for i, t in enumerate(texts[start:start + 1000], start)]
            began = time.perf_counter()
            mem.store_memories(items)
            rates.append(len(items) / (time.perf_counter() - began))
            if start // 1000 % 20 == 19:
                print(f"  stored {start + 1000:,}/{n:,}", file=sys.stderr)
        out["store_batched_per_s"] = statistics.median(rates)
    with hippo.open(db, agent_id="bench", embedder=lookup) as mem:
        began = time.perf_counter()
        mem.recall_memories(questions[0], limit=10, touch=False)  # warm: vectors loaded (or the graph built)
        out["first_recall_s"] = time.perf_counter() - began
        out.update(touched_and_untouched(mem, questions, scale))
        out["filtered"] = filtered(mem, questions, n, scale)
        asked = questions[:100]
        default = [[h.id for h in mem.recall_memories(q, limit=10, touch=False)] for q in asked]
        with unbounded():
            full = [[h.id for h in mem.recall_memories(q, limit=10, touch=False)] for q in asked]
        out["top10_agreement_unbounded"] = float(np.mean([len(set(a) & set(b)) / max(1, len(b))
                                                          for a, b in zip(default, full)]))
        out["db_mb"] = mem.store.size_bytes() / 2**20
    return out


def touched_and_untouched(mem: "hippo.Memory", questions: list[str], scale: Any) -> dict[str, float]:
    """Recall as users call it (the retrieval event written) and with ``touch=False``, in turns."""
    times: dict[bool, list[float]] = {True: [], False: []}
    for q in questions:
        for touch in (True, False):
            began = time.perf_counter()
            mem.recall_memories(q, limit=10, touch=touch)
            times[touch].append((time.perf_counter() - began) * 1000)
    touched, plain = scale.percentiles(times[True]), scale.percentiles(times[False])
    return {"recall_p50_ms": plain[0], "recall_p95_ms": plain[1], "recall_touched_p50_ms": touched[0],
            "recall_touched_p95_ms": touched[1], "touch_vs_untouched_p50": touched[0] / plain[0]}


def filtered(mem: "hippo.Memory", questions: list[str], n: int, scale: Any) -> dict[str, dict[str, float]]:
    """Recall (default ``touch``) with each kind of filter, the kinds in turns query by query."""
    times: dict[str, list[float]] = {name: [] for name in FILTERS}
    hits: dict[str, list[int]] = {name: [] for name in FILTERS}
    for j, q in enumerate(questions):
        for name, asked in FILTERS.items():
            began = time.perf_counter()
            found = mem.recall_memories(q, limit=10, **asked(j))
            times[name].append((time.perf_counter() - began) * 1000)
            hits[name].append(len(found))
    out = {}
    for name in FILTERS:
        p50, p95 = scale.percentiles(times[name])
        out[name] = {"p50_ms": p50, "p95_ms": p95, "hits": float(np.mean(hits[name])), "share": share(name, n)}
    return out


def share(name: str, n: int) -> float:
    """The share of the store a filter of kind ``name`` lets through (its first question's)."""
    asked = FILTERS[name](0)
    if name in ("since", "until"):
        bound = asked.get("since") or asked.get("until")
        inside = [i for i in range(n) if (HISTORY_START + timedelta(days=HISTORY_DAYS * i / n) >= bound)
                  == ("since" in asked)]
        return len(inside) / n
    if name == "kind":
        return 1.0
    wanted = {"tags": lambda a: asked["tags"][0] in a["metadata"]["tags"],
              "metadata eq": lambda a: a["metadata"]["project"] == "p0",
              "metadata in": lambda a: a["metadata"]["project"] in ("p0", "p7"),
              "source": lambda a: a["source"] == "migration",
              "session": lambda a: a["session_id"] == "session-0"}[name]
    return sum(map(wanted, map(attributes, range(n)))) / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--postgres", help="a PostgreSQL URL with pgvector (default: start one with pgserver)")
    parser.add_argument("--backends", default="sqlite,postgresql", help="comma-separated: sqlite, postgresql")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="300 chunks, fake vectors, no model")
    args = parser.parse_args(argv)
    scale = siblings.load("scale")
    sizes = [300] if args.smoke else [int(s) for s in args.sizes.split(",")]
    missing = [n for n in sizes if n > 100_000 and not (siblings.load("ann_choice").cache_dir()
                                                        / f"ann-minilm-{n}.npy").exists()]
    if missing:
        print(f"no cached vectors for {missing} (ann-minilm-<size>.npy); this benchmark does not embed them",
              file=sys.stderr)
        return 2
    chosen = [b.strip() for b in args.backends.split(",") if b.strip()]
    results: dict[str, Any] = {"sizes": {}, "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
    with tempfile.TemporaryDirectory() as tmp:
        databases = fresh_postgres(args.postgres, Path(tmp)) if "postgresql" in chosen else iter(())
        for n in sizes:
            texts, vectors, questions, qvectors = scale.corpus_and_vectors(n, args.smoke)
            questions, qvectors = questions[:args.queries], qvectors[:args.queries]
            lookup = scale.LookupEmbedder([*texts, *questions], np.vstack([vectors, qvectors]),
                                          model_id="fake:384" if args.smoke else scale.LOCAL_MODEL)
            row = {}
            for backend in chosen:
                db = str(Path(tmp) / f"bench-{n}.db") if backend == "sqlite" else next(databases)
                print(f"{backend}: building {n:,} chunks...", file=sys.stderr)
                row[backend] = measure(db, n, texts, lookup, questions, scale)
            results["sizes"][n] = row
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for n, row in results["sizes"].items():
        for backend, r in row.items():
            print(f"{n:>9} {backend:10}: recall p50 {r['recall_touched_p50_ms']:.1f} ms (touch=False "
                  f"{r['recall_p50_ms']:.1f} ms, p95 {r['recall_p95_ms']:.1f}); "
                  f"store {r['store_batched_per_s']:.0f}/s; {r['db_mb']:.0f} MB; "
                  f"top-10 agreement with unbounded keywords {r['top10_agreement_unbounded']:.3f}")
            print("    filtered: " + "; ".join(f"{k} ({f['share']:.1%}) p50 {f['p50_ms']:.1f} ms"
                                           for k, f in r["filtered"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
