"""Which ANN library backs hippo's vector index: hnswlib or faiss HNSW, measured on real MiniLM vectors.

The corpus is realistic text: every LoCoMo turn, observation and summary
sentence, plus variations of them (other names, turns joined, time phrases),
embedded with hippo's own local model. Vectors are cached as .npy under
``$HIPPO_CACHE_DIR/bench`` (else ``~/.cache/hippo/bench``), so only the first
run pays for embedding (~6 minutes per 100k on 2 cores). Queries are the
LoCoMo questions, which are not in the corpus.

    python bench/ann_choice.py [--n 100000] [--queries 500] [--sweep 25000,50000,100000] [--scale 1000000]
    python bench/ann_choice.py --smoke     # 2,000 texts, fake vectors: for the test suite

faiss (``pip install faiss-cpu``, in the ``bench`` extra) is only needed here, for the comparison.

``--scale N`` adds a build and query run of the chosen library at N vectors made
from the real ones (a random real vector plus a weighted second one, renormalised)
when embedding N sentences is too slow for the machine.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev.json"
K = 10
NAMES = (
    "Alice Priya Tomasz Keiko Omar Lucia Daniel Amara Sven Mei Jonas Fatima Rafael Ingrid Kwame Sofia Hiro "
    "Nadia Pablo Greta Yusuf Chloe Mateo Leila Arjun Hannah Diego Yuki Samir Elena Felix Zara Marco Aisha"
).split()
TIMES = ("Yesterday", "Last week", "This morning", "A few days ago", "Last summer", "On Monday", "Recently",
         "Back in March", "Over the weekend", "Earlier today")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# Memories on topics the corpus never mentions, added after the build, and short queries for them:
# a query far from all data is where HNSW's greedy search is weakest.
RARE = [
    ("Zed found a rare blue butterfly in the botanical garden yesterday.", "blue butterfly"),
    ("The quarterly tax forms are due at the end of April.", "tax deadline"),
    ("My laptop battery swelled up and cracked the case.", "broken laptop battery"),
    ("We ordered sushi and ramen for the office party.", "office party food"),
    ("Grandpa's favourite football team lost the final.", "football final"),
    ("The landlord raised the rent by ten percent.", "rent increase"),
    ("I need to renew my passport before the trip to Japan.", "passport renewal"),
    ("The cat knocked a glass vase off the shelf.", "cat broke a vase"),
    ("Our solar panels produced a record amount of power in June.", "solar power record"),
    ("She is allergic to peanuts and shellfish.", "food allergies"),
    ("The dentist said I need a root canal.", "dental treatment"),
    ("The wifi router keeps dropping the connection at night.", "internet problems at night"),
    ("He collects vintage stamps from Eastern Europe.", "stamp collection"),
    ("The kids built a snowman in the front yard.", "snowman"),
    ("The bakery on Main Street closes early on Wednesdays.", "bakery opening hours"),
    ("I lost my keys somewhere in the park.", "lost keys"),
]


# -- corpus -------------------------------------------------------------------


def _sentences(data: list[dict]) -> tuple[list[str], list[str], list[str]]:
    """(turns with speaker, single sentences, speaker names) from every conversation."""
    turns, sentences, speakers = [], [], set()
    for conv in data:
        c = conv["conversation"]
        speakers.update((c["speaker_a"], c["speaker_b"]))
        for key, value in c.items():
            if re.fullmatch(r"session_\d+", key):
                for turn in value:
                    turns.append(f"{turn['speaker']}: {turn['text']}")
                    sentences.extend(_SENTENCE.split(turn["text"]))
        for obs in conv.get("observation", {}).values():
            for items in obs.values():
                sentences.extend(item[0] for item in items if isinstance(item, list))
        for events in conv.get("event_summary", {}).values():
            for name, items in events.items():
                if name != "date":
                    sentences.extend(items)
        for summary in conv.get("session_summary", {}).values():
            sentences.extend(_SENTENCE.split(summary))
    sentences = [s.strip() for s in sentences if len(s.split()) >= 4]
    return turns, sorted(set(sentences)), sorted(speakers)


def _lower_first(text: str) -> str:
    word = text.split(" ", 1)[0]
    return text if word == "I" or word.startswith("I'") or word[1:2].isupper() else text[:1].lower() + text[1:]


def corpus(n: int, data_path: Path = DEFAULT_DATA, seed: int = 7) -> list[str]:
    """``n`` distinct realistic texts: the originals first, then variations of them."""
    data = json.loads(data_path.read_text())
    turns, sentences, speakers = _sentences(data)
    rng = random.Random(seed)
    out: dict[str, None] = dict.fromkeys(turns + sentences)
    swap = re.compile(r"\b(" + "|".join(map(re.escape, speakers)) + r")\b")

    def renamed(text: str) -> str:
        picks: dict[str, str] = {}
        return swap.sub(lambda m: picks.setdefault(m.group(1), rng.choice(NAMES)), text)

    makers: list[Callable[[], str]] = [
        lambda: renamed(rng.choice(sentences)),
        lambda: f"{rng.choice(NAMES)}: {renamed(rng.choice(sentences))}",
        lambda: f"{renamed(rng.choice(sentences))} {renamed(rng.choice(sentences))}",
        lambda: f"{rng.choice(TIMES)}, {_lower_first(renamed(rng.choice(sentences)))}",
        lambda: renamed(rng.choice(turns)),
    ]
    while len(out) < n:
        out.setdefault(rng.choice(makers)(), None)
    return list(out)[:n]


def questions(data_path: Path = DEFAULT_DATA) -> list[str]:
    return [qa["question"] for conv in json.loads(data_path.read_text()) for qa in conv["qa"]]


def cache_dir() -> Path:
    from hippo.providers.local import default_cache_dir

    folder = default_cache_dir() / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def cached_vectors(name: str, texts: Callable[[], list[str]], step: int = 10_000) -> np.ndarray:
    """Embed once with the local model; later runs (and interrupted ones) reuse the .npy parts."""
    target = cache_dir() / f"{name}.npy"
    if target.exists():
        return np.load(target)
    from hippo.providers.local import LocalEmbedder

    embedder, items, parts = LocalEmbedder(), texts(), []
    for start in range(0, len(items), step):
        part = cache_dir() / f"{name}.part{start // step:04d}.npy"
        if not part.exists():
            began = time.perf_counter()
            np.save(part, embedder.embed_documents(items[start : start + step]))
            rate = min(step, len(items) - start) / (time.perf_counter() - began)
            print(f"  embedded {min(start + step, len(items))}/{len(items)} ({rate:.0f}/s)", file=sys.stderr)
        parts.append(part)
    vectors = np.concatenate([np.load(p) for p in parts]).astype(np.float32)
    np.save(target, vectors)
    for part in parts:
        part.unlink()
    return vectors


# -- measurement ----------------------------------------------------------------


def fake_vectors(name: str, texts: Callable[[], list[str]], step: int = 10_000) -> np.ndarray:
    """For ``--smoke``: hippo's fake embedder (hashed words), no model, nothing cached."""
    from hippo.providers.fake import FakeEmbedder

    return np.asarray(FakeEmbedder(dimension=384).embed_documents(texts()), dtype=np.float32)


_vectors = cached_vectors


def rare_vectors() -> tuple[np.ndarray, np.ndarray]:
    both = _vectors("ann-rare", lambda: [t for t, _ in RARE] + [q for _, q in RARE])
    return both[: len(RARE)], both[len(RARE) :]


def exact_top(base: np.ndarray, queries: np.ndarray, k: int = K) -> np.ndarray:
    scores = queries @ base.T
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    return top


def rare_found(search: Callable[[np.ndarray], np.ndarray], rare_queries: np.ndarray, first_id: int) -> str:
    hits = sum(first_id + i in set(np.asarray(search(q)).tolist()) for i, q in enumerate(rare_queries))
    return f"{hits}/{len(rare_queries)}"


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(np.mean([len(set(f.tolist()) & set(t.tolist())) / len(t) for f, t in zip(found, truth)]))


def timed(search: Callable[[np.ndarray], np.ndarray], queries: np.ndarray) -> tuple[list[np.ndarray], float, float]:
    """One query at a time, as recall asks; p50 and p95 in ms."""
    found, times = [], []
    for q in queries:
        start = time.perf_counter()
        found.append(np.asarray(search(q)))
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return found, statistics.median(times), times[int(0.95 * (len(times) - 1))]


def build_hnswlib(base: np.ndarray, m: int, ef_construction: int):
    import hnswlib

    index = hnswlib.Index(space="ip", dim=base.shape[1])
    index.init_index(max_elements=len(base), M=m, ef_construction=ef_construction, allow_replace_deleted=True)
    index.add_items(base, np.arange(len(base)), num_threads=2)
    return index


def build_faiss(base: np.ndarray, m: int, ef_construction: int):
    import faiss

    index = faiss.IndexHNSWFlat(base.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    index.add(base)
    return index


def saved_mb(save: Callable[[str], None]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index.bin"
        save(str(path))
        return path.stat().st_size / 2**20


class Contender:
    """One library behind the few calls the comparison needs."""

    def __init__(self, name: str, base: np.ndarray, m: int, ef_construction: int) -> None:
        self.name = name
        start = time.perf_counter()
        self.index = (build_hnswlib if name == "hnswlib" else build_faiss)(base, m, ef_construction)
        self.build_s = time.perf_counter() - start

    def set_ef(self, ef: int) -> None:
        if self.name == "hnswlib":
            self.index.set_ef(ef)
        else:
            self.index.hnsw.efSearch = ef

    def add(self, vectors: np.ndarray, first_id: int) -> None:
        if self.name == "hnswlib":
            self.index.resize_index(self.index.get_max_elements() + len(vectors))
            self.index.add_items(vectors, np.arange(first_id, first_id + len(vectors)))
        else:
            self.index.add(vectors)

    def search(self, query: np.ndarray, k: int = K) -> np.ndarray:
        if self.name == "hnswlib":
            return self.index.knn_query(query, k=k, num_threads=1)[0][0]
        return self.index.search(query[None, :], k)[1][0]

    def filtered(self, allowed: np.ndarray, ef: int) -> Callable[[np.ndarray], np.ndarray]:
        """A search restricted to ``allowed`` ids, with the library's own filter."""
        if self.name == "hnswlib":
            members = set(allowed.tolist())
            self.index.set_ef(ef)
            return lambda q: self.index.knn_query(q, k=K, num_threads=1, filter=lambda label: label in members)[0][0]
        import faiss

        bitmap = np.zeros((self.index.ntotal + 7) // 8, dtype=np.uint8)
        np.bitwise_or.at(bitmap, allowed // 8, (1 << (allowed % 8)).astype(np.uint8))
        selector = faiss.IDSelectorBitmap(self.index.ntotal, faiss.swig_ptr(bitmap))
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
        self._keep = (bitmap, selector, params)  # the selector points into the bitmap
        return lambda q: self.index.search(q[None, :], K, params=params)[1][0]

    def delete(self, ids: np.ndarray) -> str:
        if self.name == "hnswlib":
            start = time.perf_counter()
            for i in ids.tolist():
                self.index.mark_deleted(i)
            return f"yes, mark_deleted ({(time.perf_counter() - start) * 1e6 / len(ids):.1f} us each)"
        import faiss

        try:
            self.index.remove_ids(faiss.IDSelectorBatch(ids))
        except RuntimeError as exc:
            return "no: " + str(exc).rsplit(": ", 1)[-1]
        return "yes"

    def save_mb(self) -> float:
        if self.name == "hnswlib":
            return saved_mb(self.index.save_index)
        import faiss

        return saved_mb(lambda path: faiss.write_index(self.index, path))


def compare(base: np.ndarray, queries: np.ndarray, efs: tuple[int, ...], m: int, ef_construction: int) -> None:
    rare, rare_queries = rare_vectors()
    full = np.vstack([base, rare])  # the rare memories arrive after the build, as in life
    truth = exact_top(full, queries)
    found, p50, p95 = timed(lambda q: np.argpartition(-(full @ q), K - 1)[:K], queries)
    print(f"\n{len(full):,} vectors, {len(queries)} queries, top-{K}, one query at a time. 'rare found': of "
          f"{len(RARE)} memories on topics the corpus lacks, added after the build, how many a short query "
          "finds in its top 10\n")
    print("| index | build s | size MB (file, about the memory too) | ef | p50 ms | p95 ms | recall@10 | rare found |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    exact_rare = rare_found(lambda q: exact_top(full, q[None, :])[0], rare_queries, len(base))
    print(f"| exact numpy | 0 | {full.nbytes / 2**20:.0f} (matrix) | - | {p50:.2f} | {p95:.2f} | "
          f"{recall(found, truth):.3f} | {exact_rare} |")
    contenders = []
    for name in ("hnswlib", "faiss"):
        c = Contender(name, base, m, ef_construction)
        c.add(rare, len(base))
        size = c.save_mb()
        for ef in efs:
            c.set_ef(ef)
            found, p50, p95 = timed(c.search, queries)
            print(f"| {name} HNSW M={m} | {c.build_s:.1f} | {size:.0f} | {ef} | {p50:.3f} | "
                  f"{p95:.3f} | {recall(found, truth):.3f} | {rare_found(c.search, rare_queries, len(base))} |")
        contenders.append(c)
    rng = np.random.default_rng(3)
    print("\nFiltered search (allowed = random share of the ids; recall against exact over the allowed rows)\n")
    print("| allowed | method | p50 ms | p95 ms | recall@10 |")
    print("| --- | --- | --- | --- | --- |")
    for share in (0.5, 0.1, 0.01):
        allowed = np.sort(rng.choice(len(base), int(share * len(base)), replace=False))
        sub = base[allowed]
        ftruth = allowed[exact_top(sub, queries)]
        found, p50, p95 = timed(lambda q: allowed[np.argpartition(-(base[allowed] @ q), K - 1)[:K]], queries)
        print(f"| {share:.0%} | exact over allowed rows (gather + matmul) | {p50:.2f} | {p95:.2f} | "
              f"{recall(found, ftruth):.3f} |")
        for c in contenders:
            for ef in (64, 256):
                try:
                    found, p50, p95 = timed(c.filtered(allowed, ef), queries)
                    print(f"| {share:.0%} | {c.name} filter, ef={ef} | {p50:.2f} | {p95:.2f} | "
                          f"{recall(found, ftruth):.3f} |")
                except RuntimeError as exc:
                    print(f"| {share:.0%} | {c.name} filter, ef={ef} | failed: {str(exc)[:50]} | | |")
    doomed = rng.choice(len(base), len(base) // 100, replace=False)
    for c in contenders:
        print(f"\ndelete by id, {c.name}: {c.delete(doomed)}")
        if c.name == "hnswlib":
            c.set_ef(64)
            found, _, _ = timed(c.search, queries)
            leaked = len(set(np.concatenate(found).tolist()) & set(doomed.tolist()))
            print(f"  deleted ids returned afterwards: {leaked}")


def scale_run(base: np.ndarray, queries: np.ndarray, n: int, m: int, ef_construction: int, efs: tuple[int, ...]) -> None:
    """hnswlib at ``n`` vectors: the real ones, then vectors derived from them (a real vector with
    a second one mixed in, renormalised), then the rare-topic memories."""
    rng = np.random.default_rng(11)
    rare, rare_queries = rare_vectors()
    big = np.empty((n + len(rare), base.shape[1]), dtype=np.float32)
    big[: len(base)] = base
    for start in range(len(base), n, 100_000):
        stop = min(n, start + 100_000)
        a = base[rng.integers(0, len(base), stop - start)]
        b = base[rng.integers(0, len(base), stop - start)]
        mix = a + rng.uniform(0.2, 0.6, (stop - start, 1)).astype(np.float32) * b
        big[start:stop] = mix / np.linalg.norm(mix, axis=1, keepdims=True)
    big[n:] = rare
    truth = np.concatenate([exact_top(big, queries[i : i + 50]) for i in range(0, len(queries), 50)])
    found, p50, p95 = timed(lambda q: np.argpartition(-(big @ q), K - 1)[:K], queries)
    exact_rare = rare_found(lambda q: np.argpartition(-(big @ q), K - 1)[:K], rare_queries, n)
    print(f"\n{len(big):,} vectors ({len(base):,} real, the rest derived): exact numpy p50 {p50:.1f} ms, "
          f"p95 {p95:.1f} ms, rare found {exact_rare}")
    c = Contender("hnswlib", big, m, ef_construction)
    print(f"hnswlib M={m} efC={ef_construction}: build {c.build_s:.0f} s, file {c.save_mb():.0f} MB\n")
    print("| ef | p50 ms | p95 ms | recall@10 | rare found |")
    print("| --- | --- | --- | --- | --- |")
    for ef in efs:
        c.set_ef(ef)
        found, p50, p95 = timed(c.search, queries)
        print(f"| {ef} | {p50:.3f} | {p95:.3f} | {recall(found, truth):.3f} | {rare_found(c.search, rare_queries, n)} |")


def sqlite_source(matrix: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Vectors by key from a SQLite table, read the way ``VectorCache._stored`` reads them (key = rowid - 1)."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE chunks (embedding BLOB)")
    conn.executemany("INSERT INTO chunks(rowid, embedding) VALUES (?, ?)",
                     ((i + 1, row.astype("<f4").tobytes()) for i, row in enumerate(matrix)))

    def read(keys: np.ndarray) -> np.ndarray:
        rows = dict(conn.execute("SELECT rowid, embedding FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
                                 (json.dumps([int(k) + 1 for k in keys]),)).fetchall())
        return np.frombuffer(b"".join(rows[int(k) + 1] for k in keys), dtype="<f4").reshape(len(keys), -1)

    return read


def sweep(base: np.ndarray, queries: np.ndarray, sizes: list[int]) -> None:
    """Where hippo's own index wrapper starts to pay: exact vs HnswIndex (default settings) by size."""
    from hippo.stores.sqlite.index.exact import ExactIndex
    from hippo.stores.sqlite.index.hnsw import HnswIndex

    print("\nhippo's indexes by size (limit 10; ANN recall@10 against exact)\n")
    print("| vectors | exact p50 ms | exact p95 ms | HnswIndex build s | HnswIndex p50 ms | p95 ms | recall@10 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        keys = np.arange(n, dtype=np.int64)
        exact = ExactIndex(base.shape[1], keys, base[:n])
        truth, p50, p95 = timed(lambda q: [k for k, _ in exact.search(q, K)], queries)
        start = time.perf_counter()
        ann = HnswIndex(base.shape[1], keys, base[:n])
        build = time.perf_counter() - start
        found, a50, a95 = timed(lambda q: [k for k, _ in ann.search(q, K)], queries)
        print(f"| {n:,} | {p50:.2f} | {p95:.2f} | {build:.1f} | {a50:.3f} | {a95:.3f} | "
              f"{recall(found, np.asarray(truth)):.3f} |")
    ann.source = sqlite_source(base[:n])  # as in the store: the exact path rescores from SQLite rows
    print("\nHnswIndex filtered search at the largest size: the exact path (int8 scan, best limit + 16 rescored "
          "from SQLite) vs hnswlib's filter (the allowed set built per search, as HnswIndex.search does); "
          "recall against brute force over the allowed rows\n")
    print("| allowed keys | exact path p50 ms | its recall@10 | hnswlib filter p50 ms | filter recall@10 |")
    print("| --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(5)
    for size in (500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000):
        if size >= n:
            break
        allowed = np.sort(rng.choice(n, size, replace=False))
        truth = np.asarray([allowed[np.argsort(-(base[allowed] @ q), kind="stable")[:K]] for q in queries[:200]])
        exact, e50, _ = timed(lambda q: [k for k, _ in ann._exact(q, K, allowed)], queries[:200])
        found, f50, _ = timed(lambda q: [k for k, _ in ann._approximate(q, K, set(allowed.tolist()).__contains__) or []],
                              queries[:200])
        print(f"| {size:,} | {e50:.2f} | {recall(exact, truth):.3f} | {f50:.2f} | {recall(found, truth):.3f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="real vectors to index")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=100)
    parser.add_argument("--ef", default="32,64,128,256,512")
    parser.add_argument("--scale", type=int, default=0, help="also run hnswlib at this many derived vectors")
    parser.add_argument("--sweep", default="", help="sizes for hippo's exact vs HnswIndex, e.g. 25000,50000")
    parser.add_argument("--skip-compare", action="store_true", help="only the sweep and scale runs")
    parser.add_argument("--smoke", action="store_true", help="2,000 texts, fake vectors, no model (the test suite)")
    args = parser.parse_args(argv)
    global _vectors
    _vectors = fake_vectors if args.smoke else cached_vectors
    if args.smoke:
        args.n, args.queries, args.ef, args.sweep = 2_000, 50, "32,64", "1000,2000"
    queries = _vectors("locomo-questions", questions)[: args.queries]
    base = _vectors(f"ann-minilm-{args.n}", lambda: corpus(args.n))
    efs = tuple(int(x) for x in args.ef.split(","))
    if not args.skip_compare:
        compare(base, queries, efs, args.m, args.ef_construction)
    if args.sweep:
        sweep(base, queries, [int(x) for x in args.sweep.split(",")])
    if args.scale:
        scale_run(base, queries, args.scale, args.m, args.ef_construction, efs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
