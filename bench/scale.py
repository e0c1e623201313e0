"""Speed and scale: recall latency, store throughput, size and memory at 10k, 100k (and 1M) chunks.

Stores are built from realistic text (``bench/ann_choice.py``'s corpus: LoCoMo
turns, observations and summaries plus variations) with real all-MiniLM-L6-v2
vectors cached on disk, so a rerun embeds nothing. The database records the
local model's id, exactly as if ``store_memory`` had embedded each text;
documents and queries are looked up in the cache, so timings exclude the
embedding unless a line says otherwise.

    python bench/scale.py [--sizes 10000,100000] [--queries 200] [--windows] [--long 10000] [--json]
    python bench/scale.py --smoke          # tiny, fake vectors: for the test suite

``--windows``: every memory gets as many vectors as LongMemEval's sessions have (a long memory is
embedded in overlapping windows: 1.78 vectors per memory at session level, ``WINDOWS``); the later
windows' vectors are other memories' vectors, so search costs what real windows cost (the corpus's
own texts are short and would get none).

``--long N``: then N recalls in a row as users call them (each question's vector moved a little, so
their hits and co-recall links keep changing), latency by 1,000 beside the links table's size.

Every timed figure has its baseline from the same process: recall against a
bare numpy top-10 over the same vectors, batched store against one-by-one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.core.memory import MemoryInput
from hippo.core.recall.dates import named_period
from hippo.providers.base import Thresholds, normalize_rows

HERE = Path(__file__).resolve().parent
LOCAL_MODEL = "local:all-MiniLM-L6-v2"
# Every chunk has a time of observation, spread evenly over two years in corpus order, as a
# long-running agent's history would be; dated questions name one of those 24 months.
HISTORY_START = datetime(2022, 1, 1, tzinfo=timezone.utc)
HISTORY_DAYS = 730


# Vectors per memory of LongMemEval's development sessions (a session's user turns joined, all-MiniLM-L6-v2's
# windows of 254 word pieces, 190 apart): how many of 4,775 memories have 1, 2, ... vectors (29 at most).
WINDOWS = {1: 2415, 2: 1839, 3: 331, 4: 53, 5: 29, 6: 28, 7: 19, 8: 10, 9: 10, 10: 9, 11: 5, 12: 4, 13: 3,
           14: 4, 15: 3, 16: 1, 17: 1, 18: 2, 19: 4, 20: 1, 24: 2, 29: 2}


def window_counts(n: int) -> np.ndarray:
    """How many vectors each of ``n`` memories gets, drawn from ``WINDOWS`` (seeded)."""
    sizes = np.fromiter(WINDOWS, dtype=np.int64)
    weights = np.fromiter(WINDOWS.values(), dtype=np.float64)
    return np.random.default_rng(33).choice(sizes, size=n, p=weights / weights.sum())


class LookupEmbedder:
    """The local model's vectors, read from the on-disk cache instead of computed; ``windows``: the
    later window vectors of some texts (``embed_windows``)."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray, model_id: str = LOCAL_MODEL,
                 windows: dict[str, np.ndarray] | None = None) -> None:
        self._windows = windows or {}
        self.model_id = model_id
        self.dimension = int(vectors.shape[1])
        self.thresholds = Thresholds(duplicate=0.97, ambiguous=0.45, forget=0.5)
        self._rows = {t: i for i, t in enumerate(texts)}
        self._vectors = vectors

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """More texts to look up (the long run's moved questions)."""
        self._rows.update({t: len(self._vectors) + i for i, t in enumerate(texts)})
        self._vectors = np.vstack([self._vectors, vectors])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors[[self._rows[t] for t in texts]]

    def embed_query(self, text: str) -> np.ndarray:
        return self._vectors[self._rows[text]]

    def embed_windows(self, texts: Sequence[str], *, query: bool = False) -> list[np.ndarray]:
        firsts = self.embed_documents(texts)
        return [np.vstack([first, self._windows[t]]) if t in self._windows and not query else first[None, :]
                for t, first in zip(texts, firsts)]


def percentiles(times_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(times_ms)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def own_rss_mb() -> float:
    """The process's own resident memory (RssAnon): the SQLite store reads its file through a memory
    map, whose pages count in VmRSS but are the page cache's, shared and given back under pressure."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def corpus_and_vectors(n: int, smoke: bool) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    ann = siblings.load("ann_choice")
    if smoke:
        from hippo.providers.fake import FakeEmbedder

        texts, questions = ann.corpus(n), ann.questions()[:20]
        fake = FakeEmbedder(dimension=384)
        return texts, fake.embed_documents(texts), questions, normalize_rows(fake.embed_documents(questions))
    size = 100_000 if n <= 100_000 else n
    base = ann.cached_vectors(f"ann-minilm-{size}", lambda: ann.corpus(size))[:n]
    return ann.corpus(n), base, ann.questions(), ann.cached_vectors("locomo-questions", ann.questions)


def observed(i: int, n: int) -> datetime:
    return HISTORY_START + timedelta(days=HISTORY_DAYS * i / n)


def dated(questions: list[str]) -> list[str]:
    """Each question asked about one month of the history ("... in March 2023?")."""
    out = []
    for j, q in enumerate(questions):
        month = (HISTORY_START + timedelta(days=31 * (j % 24) + 15)).strftime("%B %Y")
        out.append(f"{q.rstrip(' ?')} in {month}?")
    return out


def exact_top10(vectors: np.ndarray, qvectors: np.ndarray) -> np.ndarray:
    """Row numbers of the true top 10 of each query, in blocks (a 1M x 384 matrix is 1.5 GB)."""
    out = []
    for start in range(0, len(qvectors), 64):
        scores = qvectors[start:start + 64] @ vectors.T
        out.append(np.argpartition(-scores, 9, axis=1)[:, :10])
    return np.concatenate(out)


def ann_recall(mem: "hippo.Memory", qvectors: np.ndarray) -> float | None:
    """recall@10 of the agent's vector index against exact search over the same vectors (a long
    memory's windows included; None: exact index)."""
    from hippo.stores.sqlite.index.hnsw import HnswIndex

    index = mem.store._vectors.index_of(mem.agent_id)
    if not isinstance(index, HnswIndex):
        return None
    keys = index.keys()
    truth = exact_top10(index.vectors(keys), qvectors)
    found = [{k for k, _ in index.search(q, 10)} for q in qvectors]
    return float(np.mean([len(f & set(keys[t].tolist())) / 10 for f, t in zip(found, truth)]))


def budget_overlap(mem: "hippo.Memory", questions: list[str]) -> tuple[int, float]:
    """Share of recall's top 10 that stays the same when the keyword side scores every match."""
    import hippo.stores.sqlite.search as sqlite_store

    budget = sqlite_store.KEYWORD_BUDGET
    default = [{h.id for h in mem.recall_memories(q, limit=10, touch=False)} for q in questions]
    sqlite_store.KEYWORD_BUDGET = 10**12
    try:
        full = [{h.id for h in mem.recall_memories(q, limit=10, touch=False)} for q in questions]
    finally:
        sqlite_store.KEYWORD_BUDGET = budget
    return budget, float(np.mean([len(a & b) / max(1, len(b)) for a, b in zip(default, full)]))


def later_windows(texts: list[str], vectors: np.ndarray) -> dict[str, np.ndarray]:
    """Each text's later windows (``--windows``): as many as ``window_counts`` says, other texts' vectors."""
    counts = window_counts(len(texts))
    return {t: vectors[(i * 7919 + np.arange(1, k)) % len(texts)]
            for i, (t, k) in enumerate(zip(texts, counts)) if k > 1}


def measure(n: int, queries: int, smoke: bool, workdir: Path, windows: bool = False,
            long: int = 0) -> dict[str, Any]:
    texts, vectors, questions, qvectors = corpus_and_vectors(n, smoke)
    questions, qvectors = questions[:queries], qvectors[:queries]
    extra = later_windows(texts, vectors) if windows else {}
    later = [f"{t} (later)" for t in texts[:2000]]  # stored into the running store, index loaded
    # A dated question is looked up with its plain question's vector: the timing excludes the model.
    asked_then = dated(questions)
    lookup = LookupEmbedder([*texts, *questions, *later, *asked_then],
                            np.vstack([vectors, qvectors, vectors[:2000], qvectors]),
                            model_id="fake:384" if smoke else LOCAL_MODEL, windows=extra)
    # The smoke run lowers the ANN threshold so the HNSW path runs on its 300 chunks too.
    options: dict[str, Any] = {"ann_threshold": 100} if smoke else {}
    db = workdir / f"scale-{n}.db"
    out: dict[str, Any] = {"chunks": n, "vectors_per_memory": 1 + sum(len(w) for w in extra.values()) / n}
    rss_before = own_rss_mb()
    with hippo.open(db, agent_id="bench", embedder=lookup, **options) as mem:
        batch, rates = 1000, []
        for start in range(0, n, batch):
            items = [MemoryInput(t, observed_at=observed(i, n))
                     for i, t in enumerate(texts[start:start + batch], start)]
            began = time.perf_counter()
            mem.store_memories(items)
            rates.append(len(items) / (time.perf_counter() - began))
            if start // batch % 100 == 99:
                print(f"  stored {start + batch:,}/{n:,}", file=sys.stderr)
        out["store_batched_per_s"] = statistics.median(rates)

    single = texts[:200]
    with hippo.open(workdir / f"single-{n}.db", agent_id="bench", embedder=lookup) as one:
        began = time.perf_counter()
        for t in single:
            one.store_memory(t)
        out["store_one_by_one_per_s"] = len(single) / (time.perf_counter() - began)

    # First recall after opening: loads the vectors and, past the ANN threshold, builds and saves the index.
    for key in ("first_recall_s", "first_recall_reopened_s"):
        with hippo.open(db, agent_id="bench", embedder=lookup, **options) as mem:
            began = time.perf_counter()
            mem.recall_memories(questions[0], limit=10, touch=False)
            out[key] = time.perf_counter() - began
    print(f"  index ready in {out['first_recall_s']:.1f} s; reopened {out['first_recall_reopened_s']:.2f} s",
          file=sys.stderr)

    with hippo.open(db, agent_id="bench", embedder=lookup, **options) as mem:
        mem.recall_memories(questions[0], limit=10, touch=False)  # load the index, as a running server has it
        out["index"] = type(mem.store._vectors.index_of("bench")).__name__
        recall_ms, exact_ms, found = [], [], []
        matrix = normalize_rows(vectors)
        for q, qv in zip(questions, qvectors):
            began = time.perf_counter()
            hits = mem.recall_memories(q, limit=10)
            recall_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            scores = matrix @ qv
            np.argpartition(-scores, 9)[:10]
            exact_ms.append((time.perf_counter() - began) * 1000)
            found.append(len(hits.hits))
        out["recall_p50_ms"], out["recall_p95_ms"] = percentiles(recall_ms)
        out["numpy_top10_p50_ms"], out["numpy_top10_p95_ms"] = percentiles(exact_ms)
        dated_ms, in_month = [], []
        for q in asked_then:
            began = time.perf_counter()
            hits = mem.recall_memories(q, limit=10)
            dated_ms.append((time.perf_counter() - began) * 1000)
            start, end = named_period(q, mem.now())
            in_month.append(sum(start <= h.chunk.observed_at < end for h in hits.hits) / max(1, len(hits.hits)))
        out["dated_recall_p50_ms"], out["dated_recall_p95_ms"] = percentiles(dated_ms)
        out["dated_hits_in_month"] = statistics.mean(in_month)
        out["recall_vs_numpy_p50"] = out["recall_p50_ms"] / out["numpy_top10_p50_ms"]
        out["hits_per_query"] = statistics.mean(found)
        out["db_mb"] = mem.store.size_bytes() / 2**20
        out["db_mb_per_10k"] = out["db_mb"] / (n / 10_000)
        out["ann_files_mb"] = sum(p.stat().st_size for p in Path(f"{db}.hnsw").glob("*")) / 2**20 \
            if Path(f"{db}.hnsw").is_dir() else 0.0
        out["rss_mb"] = own_rss_mb()
        out["rss_added_mb"] = out["rss_mb"] - rss_before
        out["ann_recall_at_10"] = ann_recall(mem, qvectors)
        out["keyword_budget"], out["keyword_budget_top10_overlap"] = budget_overlap(mem, questions[:100])
        rates = []
        for start in range(0, len(later), 500):  # every commit also inserts into the loaded index
            items = [MemoryInput(t) for t in later[start:start + 500]]
            began = time.perf_counter()
            mem.store_memories(items)
            rates.append(len(items) / (time.perf_counter() - began))
        out["store_batched_index_loaded_per_s"] = statistics.median(rates)
        out.update(interleaved_recalls(mem, db, lookup, options, questions))
        if long:
            out.update(long_run(mem, db, lookup, questions, qvectors, long))
    del matrix
    return out


def interleaved_recalls(mem: "hippo.Memory", db: Path, lookup: Any, options: dict[str, Any],
                        questions: list[str]) -> dict[str, float]:
    """Recall four ways query by query in turns, so that each meets the same machine state: as
    users call it (the retrieval event written), with ``touch=False``, with the learned reranking
    stage (``touch=False``: the stage's own cost), and without the later-word step
    (``prefer_later=False``, ``touch=False``: that step's own cost). The first to ask a question reads its
    rows cold, the next ones warm: touched and untouched (one store, whose caches they share) take
    turns at asking first, and the reranked one (a store of its own) goes first or last in turn.
    (Turning all three in a ring made touched the first of its store to ask in two questions of
    three: at 1M, 9.5 against 2.9 ms, where in blocks of 50 they take 9.7-10.1 and 8.3-8.5 ms.)"""
    touched_ms: list[float] = []
    plain_ms: list[float] = []
    ranked_ms: list[float] = []
    earlier_ms: list[float] = []  # without the later-word step (issue 47): the cost it adds
    with hippo.open(db, agent_id="bench", embedder=lookup, rerank="learned", **options) as ranked, \
            hippo.open(db, agent_id="bench", embedder=lookup, prefer_later=False, **options) as earlier:
        ranked.recall_memories(questions[0], limit=10, touch=False)
        earlier.recall_memories(questions[0], limit=10, touch=False)
        for n, q in enumerate(questions):
            pair = [(mem, True, touched_ms), (mem, False, plain_ms)][::1 if n % 2 else -1]
            ways = pair + [(ranked, False, ranked_ms)] if n % 4 < 2 else [(ranked, False, ranked_ms), *pair]
            ways.insert(n % 4, (earlier, False, earlier_ms))
            for one, touch, times in ways:
                began = time.perf_counter()
                one.recall_memories(q, limit=10, touch=touch)
                times.append((time.perf_counter() - began) * 1000)
    plain = statistics.median(plain_ms)
    return {"recall_touched_p50_ms": statistics.median(touched_ms), "recall_untouched_p50_ms": plain,
            "recall_rerank_p50_ms": statistics.median(ranked_ms),
            "recall_without_later_p50_ms": statistics.median(earlier_ms),
            "later_vs_without_p50": plain / statistics.median(earlier_ms),
            "touch_vs_untouched_p50": statistics.median(touched_ms) / plain,
            "rerank_vs_default_p50": statistics.median(ranked_ms) / plain}


def long_run(mem: "hippo.Memory", db: Path, lookup: LookupEmbedder, questions: list[str], qvectors: np.ndarray,
             recalls: int, every: int = 1_000) -> dict[str, Any]:
    """``recalls`` recalls as users call them, in a row, each a question whose vector is moved a
    little (seeded) so that hits and co-recall links keep changing: p50 and p95 per ``every``
    recalls beside the size of the links table, to show that latency does not grow with it."""
    import sqlite3

    rng = np.random.default_rng(34)
    texts = [f"{questions[i % len(questions)]} v{i}" for i in range(recalls)]
    base = qvectors[np.arange(recalls) % len(qvectors)]
    lookup.add(texts, normalize_rows(base + rng.normal(0.0, 0.04, base.shape)).astype(np.float32))
    windows = []
    for start in range(0, recalls, every):
        times = []
        for text in texts[start:start + every]:
            began = time.perf_counter()
            mem.recall_memories(text, limit=10)
            times.append((time.perf_counter() - began) * 1000)
        mem.store.retrievals.flush()
        with sqlite3.connect(db) as conn:
            links = conn.execute("SELECT count(*) FROM chunk_links").fetchone()[0]
        p50, p95 = percentiles(times)
        windows.append({"recalls": start + len(times), "p50_ms": p50, "p95_ms": p95, "links": links})
        print(f"  long run: {start + len(times):,} recalls, p50 {p50:.2f} ms, {links:,} links", file=sys.stderr)
    return {"long_run": windows, "long_last_vs_first_p50": windows[-1]["p50_ms"] / windows[0]["p50_ms"]}


def embedding_throughput(texts: list[str]) -> dict[str, float]:
    """The local model itself, and store_memories with the embedding included."""
    from hippo.providers.local import LocalEmbedder

    model = LocalEmbedder()
    model.embed_documents(texts[:64])
    began = time.perf_counter()
    model.embed_documents(texts)
    embed_rate = len(texts) / (time.perf_counter() - began)
    with tempfile.TemporaryDirectory() as tmp, hippo.open(Path(tmp) / "e.db", agent_id="bench",
                                                          embedder=model) as mem:
        began = time.perf_counter()
        mem.store_memories([MemoryInput(t) for t in texts])
        stored_rate = len(texts) / (time.perf_counter() - began)
    return {"embed_per_s": embed_rate, "store_batched_with_embedding_per_s": stored_rate}


def cli_cold_start(runs: int = 5) -> dict[str, float]:
    hippo_bin = Path(sys.executable).with_name("hippo")
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([str(hippo_bin), "--help"], capture_output=True, check=True)
        times.append((time.perf_counter() - began) * 1000)
    return {"cli_help_p50_ms": statistics.median(times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="300 chunks, fake vectors, no model")
    parser.add_argument("--windows", action="store_true", help="as many vectors per memory as LongMemEval's sessions")
    parser.add_argument("--long", type=int, default=0, help="then this many recalls in a row (latency by 1,000)")
    args = parser.parse_args(argv)
    sizes = [300] if args.smoke else [int(s) for s in args.sizes.split(",")]
    results: dict[str, Any] = {"sizes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            print(f"building {n} chunks...", file=sys.stderr)
            results["sizes"][n] = measure(n, args.queries, args.smoke, Path(tmp), args.windows,
                                          long=min(args.long, 300) if args.smoke else args.long)
    if not args.smoke:
        results["embedding"] = embedding_throughput(siblings.load("ann_choice").corpus(2000))
        results["cli"] = cli_cold_start()
    results["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for n, r in results["sizes"].items():
        print(f"{n:>9} chunks ({r['vectors_per_memory']:.2f} vectors each): "
              f"recall p50 {r['recall_p50_ms']:.2f} ms p95 {r['recall_p95_ms']:.2f} ms "
              f"(naming a month: p50 {r['dated_recall_p50_ms']:.2f} ms p95 {r['dated_recall_p95_ms']:.2f} ms, "
              f"{r['dated_hits_in_month']:.0%} of hits from that month) "
              f"(numpy top-10 p50 {r['numpy_top10_p50_ms']:.2f} ms, x{r['recall_vs_numpy_p50']:.1f}); "
              f"store batched {r['store_batched_per_s']:.0f}/s, one by one {r['store_one_by_one_per_s']:.0f}/s; "
              f"with the index loaded {r['store_batched_index_loaded_per_s']:.0f}/s; "
              f"{r['db_mb_per_10k']:.1f} MB per 10k (+{r['ann_files_mb']:.0f} MB index files); "
              f"own RSS (RssAnon) {r['rss_mb']:.0f} MB (+{r['rss_added_mb']:.0f}); index {r['index']}, "
              f"ready in {r['first_recall_s']:.1f} s, reopened {r['first_recall_reopened_s']:.2f} s; "
              f"ANN recall@10 {r['ann_recall_at_10']}; top-10 kept under the keyword budget "
              f"{r['keyword_budget_top10_overlap']:.3f}")
    for key, value in {**results.get("embedding", {}), **results.get("cli", {})}.items():
        print(f"{key}: {value:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
