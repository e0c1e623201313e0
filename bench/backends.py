"""SQLite beside PostgreSQL in one run: the same corpus, vectors and questions on both stores.

For each size and backend: batched store throughput, recall latency (p50/p95, the embedding
excluded: vectors come from ``bench/scale.py``'s on-disk cache of real all-MiniLM-L6-v2 vectors),
disk, and how much of recall's top 10 stays the same when the keyword side scores every match
(the agreement of the released keyword budget with an unbounded hybrid search).

PostgreSQL is the one given by ``--postgres URL`` (a database hippo may fill; it is emptied of
hippo's tables first), else one started here with the PyPI package ``pgserver`` (no root).

    python bench/backends.py [--sizes 100000] [--queries 200] [--postgres URL] [--json]
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
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.core.memory import MemoryInput

HERE = Path(__file__).resolve().parent


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


def measure(db: str, n: int, texts: list[str], lookup: Any, questions: list[str], scale: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks": n}
    with hippo.open(db, agent_id="bench", embedder=lookup) as mem:
        rates = []
        for start in range(0, n, 1000):
            items = [MemoryInput(t, observed_at=scale.observed(i, n)) for i, t in enumerate(texts[start:start + 1000],
                                                                                         start)]
            began = time.perf_counter()
            mem.store_memories(items)
            rates.append(len(items) / (time.perf_counter() - began))
            if start // 1000 % 20 == 19:
                print(f"  stored {start + 1000:,}/{n:,}", file=sys.stderr)
        out["store_batched_per_s"] = statistics.median(rates)
    with hippo.open(db, agent_id="bench", embedder=lookup) as mem:
        mem.recall_memories(questions[0], limit=10, touch=False)  # warm: vectors loaded, plans cached
        times = []
        for q in questions:
            began = time.perf_counter()
            mem.recall_memories(q, limit=10, touch=False)
            times.append((time.perf_counter() - began) * 1000)
        out["recall_p50_ms"], out["recall_p95_ms"] = scale.percentiles(times)
        asked = questions[:100]
        default = [[h.id for h in mem.recall_memories(q, limit=10, touch=False)] for q in asked]
        with unbounded():
            full = [[h.id for h in mem.recall_memories(q, limit=10, touch=False)] for q in asked]
        out["top10_agreement_unbounded"] = float(np.mean([len(set(a) & set(b)) / max(1, len(b))
                                                          for a, b in zip(default, full)]))
        out["db_mb"] = mem.store.size_bytes() / 2**20
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--postgres", help="a PostgreSQL URL with pgvector (default: start one with pgserver)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="300 chunks, fake vectors, no model")
    args = parser.parse_args(argv)
    scale = siblings.load("scale")
    sizes = [300] if args.smoke else [int(s) for s in args.sizes.split(",")]
    results: dict[str, Any] = {"sizes": {}, "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
    with tempfile.TemporaryDirectory() as tmp:
        databases = fresh_postgres(args.postgres, Path(tmp))
        for n in sizes:
            texts, vectors, questions, qvectors = scale.corpus_and_vectors(n, args.smoke)
            questions, qvectors = questions[:args.queries], qvectors[:args.queries]
            lookup = scale.LookupEmbedder([*texts, *questions], np.vstack([vectors, qvectors]),
                                          model_id="fake:384" if args.smoke else scale.LOCAL_MODEL)
            row = {}
            for backend, db in (("sqlite", str(Path(tmp) / f"bench-{n}.db")), ("postgresql", next(databases))):
                print(f"{backend}: building {n:,} chunks...", file=sys.stderr)
                row[backend] = measure(db, n, texts, lookup, questions, scale)
            results["sizes"][n] = row
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for n, row in results["sizes"].items():
        for backend, r in row.items():
            print(f"{n:>9} {backend:10}: recall p50 {r['recall_p50_ms']:.1f} ms p95 {r['recall_p95_ms']:.1f} ms; "
                  f"store {r['store_batched_per_s']:.0f}/s; {r['db_mb']:.0f} MB; "
                  f"top-10 agreement with unbounded keywords {r['top10_agreement_unbounded']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
