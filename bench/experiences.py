"""Experiences and short-term memory (issue 19): append, search, consolidation, filtered recall.

Four measurements, each beside a baseline timed in the same process:

1. **short-term append** at a full 100-entry buffer: ``record_experience`` of observations
   (importance 0.4, under the consolidation threshold: each append evicts the oldest entry and runs
   the trigger check, which finds nothing to move); baseline a bare ``deque(maxlen=100).append``.
   **short-term search**: ``recall(query=...)`` over that buffer with long-term memory empty, and
   the short-term scan alone (``Episodic._scored``: words and cosines over the 100 entries);
   baseline numpy top-10 over the same 100 vectors. The embedder is excluded: query and entry
   vectors are real all-MiniLM-L6-v2 vectors looked up from ``bench/scale.py``'s on-disk cache.
2. **consolidation of a 100-entry batch** (``consolidate()`` after 100 ``record_experience`` of
   importance 0.6-0.69, a buffer of 1,000 so no trigger fires first), into a store holding under
   1k memories and into one holding the 100k below; with the embedding excluded (vectors looked
   up, as above) and with the local model (``embedder="local"``, texts it has not seen). The first
   batch of each series warms up and is not counted.
3. **recall with filters at 100k long-term experiences** (types, min_importance, tags, since, all
   four), with a query (its vector looked up; each case asks its own questions) and without (the
   latest first); baselines: numpy top-10 over the 100k vectors, and a numpy mask over the same
   attributes for the listing.

The 100k experiences are ``bench/scale.py``'s corpus with its cached vectors, written as
consolidation writes them (``store_memories`` of the same inputs, then their experience records)
but without the per-entry near-duplicate search, which a 100k load through ``consolidate`` would
spend minutes on; each has a type, an importance 0.6-1.0, one or two of 20 tags, a user and a
room, and a time of observation spread over two years.

    python bench/experiences.py [--size 100000] [--runs 7] [--backends sqlite,postgresql] [--json]
    python bench/experiences.py --smoke          # tiny, fake vectors: for the test suite
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import deque
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.core.experiences.importance import EXPERIENCE_TYPES, new_entry, record_of
from hippo.core.experiences.operations import Experiences
from hippo.core.memory import MemoryInput
from hippo.providers.base import normalize_rows

HERE = Path(__file__).resolve().parent
BATCH = 100
TAGS = [f"topic-{i:02d}" for i in range(20)]
IMPORTANCES = [round(0.6 + 0.05 * k, 2) for k in range(9)]  # 0.6 .. 1.0


def pcts(times_ms: Sequence[float]) -> dict[str, float]:
    ordered = sorted(times_ms)
    at = lambda q: ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]  # noqa: E731
    return {"p50": statistics.median(ordered), "p95": at(0.95), "p99": at(0.99), "max": ordered[-1],
            "n": len(ordered)}


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    out = call()
    return (time.perf_counter() - began) * 1000, out


# -- data ---------------------------------------------------------------------------------------


class Data:
    """Texts and their cached vectors: the corpus (the long-term store), fresh texts (batches
    consolidated into it) and the LoCoMo questions (queries)."""

    def __init__(self, size: int, extra: int, smoke: bool) -> None:
        scale = siblings.load("scale")
        self.scale = scale
        ann = siblings.load("ann_choice")
        self.texts, self.vectors, self.questions, self.qvectors = scale.corpus_and_vectors(size, smoke)
        self.extra = ann.corpus(size + extra)[size:]
        if smoke:
            from hippo.providers.fake import FakeEmbedder

            self.extra_vectors = FakeEmbedder(dimension=384).embed_documents(self.extra)
        else:
            self.extra_vectors = ann.cached_vectors(f"experiences-extra-{size}-{extra}", lambda: self.extra)
        self.model_id = "fake:384" if smoke else scale.LOCAL_MODEL
        self.lookup = scale.LookupEmbedder([*self.texts, *self.extra, *self.questions],
                                           np.vstack([self.vectors, self.extra_vectors, self.qvectors]),
                                           model_id=self.model_id)
        self.matrix = normalize_rows(self.vectors)


def attributes(i: int, n: int, rng: random.Random, observed: Callable[[int, int], datetime]) -> dict[str, Any]:
    tags = [TAGS[rng.randrange(len(TAGS))]]
    if rng.random() < 0.3:
        tags.append(TAGS[rng.randrange(len(TAGS))])
    return {"type": EXPERIENCE_TYPES[rng.randrange(len(EXPERIENCE_TYPES))],
            "importance": IMPORTANCES[rng.randrange(len(IMPORTANCES))], "tags": sorted(set(tags)),
            "context": {"userId": f"u{rng.randrange(50)}", "roomId": f"room-{rng.randrange(20)}"},
            "observed_at": observed(i, n)}


# -- 1. short-term append and search ------------------------------------------------------------


def short_term(db: str, data: Data, appends: int, searches: int, options: dict[str, Any]) -> dict[str, Any]:
    texts = data.texts[:BATCH + appends]
    out: dict[str, Any] = {}
    with hippo.open(db, agent_id="bench", embedder=data.lookup, **options) as mem:
        for t in texts[:BATCH]:
            mem.record_experience("observation", t)
        append_ms = [timed(lambda t=t: mem.record_experience("observation", t))[0] for t in texts[BATCH:]]
        stats = mem.stats()
        assert stats.short_term == BATCH and stats.experiences == 0, stats
        out["buffer"] = type(mem.capability(Experiences.short_term).episodic.buffer).__name__
        out["append_ms"] = pcts(append_ms)
        ring: deque[tuple[str, float]] = deque(maxlen=BATCH)
        out["deque_append_ms"] = pcts([timed(lambda t=t: ring.append((t, time.time())))[0] for t in texts])

        questions = [data.questions[i % len(data.questions)] for i in range(searches)]
        mem.recall(query=questions[0], limit=10)  # the entries' vectors: made at the first search, kept
        search_ms, hits = [], []
        for q in questions:
            ms, found = timed(lambda q=q: mem.recall(query=q, limit=10))
            search_ms.append(ms)
            hits.append(len(found))
        assert all(e.tier == "short_term" for e in found)
        out["search_ms"] = pcts(search_ms)
        out["search_hits"] = statistics.mean(hits)

        episodic = mem.capability(Experiences.short_term).episodic  # the short-term part of a search alone: the scan over the buffer
        scan_ms = []
        for q in questions:
            qv = mem.embedding.query(q)
            scan_ms.append(timed(lambda q=q, qv=qv: episodic._scored(q, qv, episodic.buffer.entries(), keep=10, store=False))[0])
        out["scan_ms"] = pcts(scan_ms)
        rows = {t: i for i, t in enumerate(data.texts)}
        held = data.matrix[[rows[e.content] for e in mem.short_term()]]
        qrows = {q: i for i, q in enumerate(data.questions)}
        numpy_ms = []
        for q in questions:
            qv = data.qvectors[qrows[q]]
            numpy_ms.append(timed(lambda qv=qv: np.argsort(-(held @ qv))[:10])[0])
        out["numpy_top10_of_100_ms"] = pcts(numpy_ms)
    return out


# -- 2. consolidation of a 100-entry batch ------------------------------------------------------


def batches(mem: "hippo.Memory", texts: Sequence[str], runs: int, seed: int) -> dict[str, Any]:
    """``runs + 1`` batches of 100 (the first a warm-up): each recorded, then ``consolidate()`` timed."""
    rng = random.Random(seed)
    times, moved, merged = [], [], []
    for r in range(runs + 1):
        for i, t in enumerate(texts[r * BATCH:(r + 1) * BATCH]):
            a = attributes(i, BATCH, rng, lambda i, n: datetime.now(timezone.utc))
            mem.record_experience(a["type"], t, importance=0.6 + 0.01 * (i % 10), tags=a["tags"],
                                  context=a["context"])
        assert len(mem.short_term()) == BATCH
        ms, done = timed(mem.consolidate)
        assert done.consolidated == BATCH and not mem.short_term(), done
        if r:
            times.append(ms)
            merged.append(done.merged)
            moved.append(done.consolidated)
    return {"ms": pcts(times), "runs": runs, "merged_per_batch": statistics.mean(merged),
            "memories_after": mem.stats().memories}


def consolidation_empty(db: Callable[[str], str], data: Data, runs: int, local: bool) -> dict[str, Any]:
    per = (runs + 1) * BATCH  # the fresh texts the 100k store gets, each series into its own new store
    out = {}
    with hippo.open(db("consolidate"), agent_id="bench", embedder=data.lookup, short_term_size=1000) as mem:
        out["embedding_excluded"] = batches(mem, data.extra[:per], runs, seed=1)
    if local:
        texts = data.extra[per:2 * per]
        with hippo.open(db("consolidate-local"), agent_id="bench", embedder="local", short_term_size=1000) as mem:
            out["local_model"] = batches(mem, texts, runs, seed=1)
        out["local_model"]["model_alone_ms"] = model_alone(texts, runs)
    return out


def model_alone(texts: Sequence[str], runs: int) -> dict[str, float]:
    """The local model on the same batches, nothing else."""
    from hippo.providers.local import LocalEmbedder

    model = LocalEmbedder()
    model.embed_documents(list(texts[:BATCH]))
    return pcts([timed(lambda r=r: model.embed_documents(list(texts[r * BATCH:(r + 1) * BATCH])))[0]
                 for r in range(1, runs + 1)])


# -- 3. the 100k store: load, filtered recall, consolidation into it ----------------------------


def load(db: str, data: Data, n: int) -> dict[str, Any]:
    """100k long-term experiences, as consolidation writes them (see the module docstring)."""
    rng = random.Random(7)
    attrs = [attributes(i, n, rng, data.scale.observed) for i in range(n)]
    began = time.perf_counter()
    with hippo.open(db, agent_id="bench", embedder=data.lookup) as mem:
        now = mem.now()
        for start in range(0, n, 1000):
            entries = [new_entry("bench", a["type"], t, now, context=a["context"], importance=a["importance"],
                                 tags=a["tags"], source=None, session_id=None, observed_at=a["observed_at"],
                                 max_chars=mem.settings.max_content_chars)
                       for t, a in zip(data.texts[start:start + 1000], attrs[start:start + 1000])]
            results = mem.store_memories([MemoryInput(e.content, {"tags": e.tags}, e.importance, e.observed_at,
                                                      e.source, e.session_id) for e in entries])
            mem.store.put_experiences("bench", [record_of(e, r.id, now) for e, r in zip(entries, results)])
            if start // 1000 % 20 == 19:
                print(f"  loaded {start + 1000:,}/{n:,}", file=sys.stderr)
        stats = mem.stats()
    assert stats.experiences == n, stats
    return {"experiences": stats.experiences, "load_s": time.perf_counter() - began, "attrs": attrs}


def filter_cases(n: int, observed: Callable[[int, int], datetime]) -> list[tuple[str, Callable[[int], dict]]]:
    last = observed(n - 1, n)
    return [
        ("none", lambda j: {}),
        ("types", lambda j: {"types": EXPERIENCE_TYPES[j % 7]}),
        ("min_importance", lambda j: {"min_importance": 0.9}),
        ("tags", lambda j: {"tags": TAGS[j % 20]}),
        ("since", lambda j: {"since": last - timedelta(days=30)}),
        ("all four", lambda j: {"types": [EXPERIENCE_TYPES[j % 7], EXPERIENCE_TYPES[(j + 3) % 7]],
                                "min_importance": 0.8, "tags": TAGS[j % 20], "since": last - timedelta(days=180)}),
    ]


def mask_of(arrays: dict[str, np.ndarray], kw: dict[str, Any]) -> np.ndarray:
    mask = np.ones(len(arrays["importance"]), dtype=bool)
    if "types" in kw:
        wanted = [kw["types"]] if isinstance(kw["types"], str) else kw["types"]
        mask &= np.isin(arrays["type"], wanted)
    if "min_importance" in kw:
        mask &= arrays["importance"] >= kw["min_importance"]
    if "tags" in kw:
        mask &= arrays["tags"][:, TAGS.index(kw["tags"])]
    if "since" in kw:
        mask &= arrays["observed"] >= kw["since"].timestamp()
    return mask


def filtered_recall(db: str, data: Data, n: int, attrs: list[dict[str, Any]], queries: int,
                    listings: int) -> dict[str, Any]:
    arrays = {"type": np.array([a["type"] for a in attrs]), "importance": np.array([a["importance"] for a in attrs]),
              "observed": np.array([a["observed_at"].timestamp() for a in attrs]),
              "tags": np.array([[t in a["tags"] for t in TAGS] for a in attrs])}
    questions, qvectors = data.questions[:queries], data.qvectors[:queries]
    # Each case asks its own questions: what a search keeps for the next (a word's postings)
    # helps only where a case's own questions repeat their words, as an agent's do.
    per_case = [[data.questions[(k * queries + j) % len(data.questions)] for j in range(queries)]
                for k in range(len(filter_cases(n, data.scale.observed)))]
    out: dict[str, Any] = {}
    with hippo.open(db, agent_id="bench", embedder=data.lookup) as mem:
        out["first_recall_s"] = timed(lambda: mem.recall(query=questions[0]))[0] / 1000  # loads (or builds) the index
        out["index"] = type(mem.store._vectors.index_of("bench")).__name__ if hasattr(mem.store, "_vectors") else "-"
        numpy_ms = [timed(lambda qv=qv: np.argpartition(-(data.matrix @ qv), 9)[:10])[0] for qv in qvectors]
        out["numpy_top10_ms"] = pcts(numpy_ms)
        cases = {}
        for (name, kw_of), asked in zip(filter_cases(n, data.scale.observed), per_case):
            row: dict[str, Any] = {"share": float(np.mean([mask_of(arrays, kw_of(j)).mean() for j in range(20)]))}
            query_ms, hits = [], []
            for j, q in enumerate(asked):
                kw = kw_of(j)
                ms, found = timed(lambda q=q, kw=kw: mem.recall(query=q, limit=10, **kw))
                query_ms.append(ms)
                hits.append(len(found))
            row["query_ms"], row["query_hits"] = pcts(query_ms), statistics.mean(hits)
            list_ms, numpy_list_ms = [], []
            for j in range(listings):
                kw = kw_of(j)
                ms, found = timed(lambda kw=kw: mem.recall(limit=10, **kw))
                list_ms.append(ms)
                numpy_list_ms.append(timed(lambda kw=kw: np.flatnonzero(mask_of(arrays, kw))[-10:])[0])
                assert len(found) == min(10, int(mask_of(arrays, kw).sum())), (name, len(found))
                assert all(a.observed_at >= b.observed_at for a, b in zip(found, found[1:]))
            row["list_ms"], row["numpy_mask_list_ms"] = pcts(list_ms), pcts(numpy_list_ms)
            cases[name] = row
            print(f"  {name}: query p50 {row['query_ms']['p50']:.2f} ms, list p50 {row['list_ms']['p50']:.2f} ms",
                  file=sys.stderr)
        out["cases"] = cases
    return out


def consolidation_at_size(db: str, data: Data, runs: int, local: bool) -> dict[str, Any]:
    per = (runs + 1) * BATCH
    out = {}
    with hippo.open(db, agent_id="bench", embedder=data.lookup, short_term_size=1000) as mem:
        mem.recall(query=data.questions[0])  # a running store: its index loaded
        out["embedding_excluded"] = batches(mem, data.extra[:per], runs, seed=2)
    if local:
        with hippo.open(db, agent_id="bench", embedder="local", short_term_size=1000) as mem:
            mem.recall(query=data.questions[0])
            out["local_model"] = batches(mem, data.extra[per:2 * per], runs, seed=2)
    return out


# -- driver -------------------------------------------------------------------------------------


@contextmanager
def databases(backend: str, workdir: Path, postgres: str | None) -> Iterator[Callable[[str], str]]:
    if backend.startswith("sqlite"):
        yield lambda name: str(workdir / f"{backend}-{name}.db")
        return
    fresh = siblings.load("backends").fresh_postgres(postgres, workdir)
    yield lambda name: next(fresh)


def run_backend(backend: str, data: Data, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    local = not args.smoke and not args.no_model
    options = {"short_term_durable": True} if backend == "sqlite-durable" else {}
    with databases(backend, workdir, args.postgres) as db:
        print(f"{backend}: short-term...", file=sys.stderr)
        out["short_term"] = short_term(db("short-term"), data, args.appends, args.searches, options)
        if backend == "sqlite-durable":
            return out
        print(f"{backend}: consolidation into a small store...", file=sys.stderr)
        out["consolidation_small"] = consolidation_empty(db, data, args.runs, local)
        big = db("big")
        print(f"{backend}: loading {args.size:,} experiences...", file=sys.stderr)
        loaded = load(big, data, args.size)
        out["load"] = {k: v for k, v in loaded.items() if k != "attrs"}
        print(f"{backend}: filtered recall at {args.size:,}...", file=sys.stderr)
        out["recall"] = filtered_recall(big, data, args.size, loaded["attrs"], args.queries, args.listings)
        print(f"{backend}: consolidation into {args.size:,}...", file=sys.stderr)
        out["consolidation_big"] = consolidation_at_size(big, data, args.runs, local)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="long-term experiences for the recall part")
    parser.add_argument("--runs", type=int, default=7, help="timed consolidation batches per series")
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200, help="queries per filter case at --size")
    parser.add_argument("--listings", type=int, default=200, help="no-query listings per filter case")
    parser.add_argument("--backends", default="sqlite,sqlite-durable",
                        help="comma-separated: sqlite (default buffer), sqlite-durable (short-term part only), "
                             "postgresql")
    parser.add_argument("--postgres", help="a PostgreSQL URL with pgvector (default: start one with pgserver)")
    parser.add_argument("--no-model", action="store_true", help="skip the runs with the local model")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="300 experiences, fake vectors, no model")
    args = parser.parse_args(argv)
    if args.smoke:
        args.size, args.runs, args.appends, args.searches, args.queries, args.listings = 300, 2, 50, 20, 10, 10
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                                           "load_before": os.getloadavg()}, "size": args.size, "backends": {}}
    data = Data(args.size, 2 * (args.runs + 1) * BATCH, args.smoke)
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            results["backends"][backend] = run_backend(backend, data, args, Path(tmp))
    results["machine"]["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=2, default=str))
        return 0
    print(report(results))
    return 0


def report(results: dict[str, Any]) -> str:
    lines = []
    for backend, r in results["backends"].items():
        s = r["short_term"]
        lines.append(f"{backend} ({s['buffer']}): append p50 {s['append_ms']['p50']:.3f} "
                     f"p99 {s['append_ms']['p99']:.3f} ms "
                     f"(deque {s['deque_append_ms']['p50']:.4f}); search p50 {s['search_ms']['p50']:.3f} "
                     f"p99 {s['search_ms']['p99']:.3f} ms, scan alone p50 {s['scan_ms']['p50']:.3f} "
                     f"p99 {s['scan_ms']['p99']:.3f} (numpy {s['numpy_top10_of_100_ms']['p50']:.4f})")
        for key in ("consolidation_small", "consolidation_big"):
            for mode, c in r.get(key, {}).items():
                lines.append(f"  {key} {mode}: p50 {c['ms']['p50']:.1f} ms, max {c['ms']['max']:.1f} ms, "
                             f"merged/batch {c['merged_per_batch']:.1f}")
        if "recall" in r:
            for name, row in r["recall"]["cases"].items():
                lines.append(f"  recall {name} ({row['share']:.1%}): query p50 {row['query_ms']['p50']:.2f} "
                             f"p95 {row['query_ms']['p95']:.2f}; list p50 {row['list_ms']['p50']:.2f} "
                             f"p95 {row['list_ms']['p95']:.2f} ms")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
