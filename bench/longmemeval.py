"""LongMemEval retrieval benchmark: recall@k and nDCG@10 of hippo's recall against BM25 and vectors alone.

Protocol (shared/bench/README.md, after the authors' ``src/retrieval``): each question is its own
corpus, a fresh database holding that question's haystack and answering that one question.

- Turn level: every user turn with text is one memory, observed at its session's date (and stored
  with its session as ``session_id``, as a conversation import would carry it); the gold is the
  turns marked ``has_answer`` (questions whose gold turns are all the assistant's are skipped).
  Reported: R@5, R@10, R@50 and nDCG@10.
- Session level: a session's user turns joined by newlines are one memory; the gold is
  ``answer_session_ids``. Reported: R@5 and R@10. Two more ways peers store a session, each an
  extra memory of the session (a hit on any of them finds the session; the first counts):
  ``--extra assistant`` adds the session's assistant turns at a quarter of the usual strength
  (intensity 0.125: a lower weight in the score, as engram searches them at half weight);
  ``--extra preferences`` adds each sentence of the user's that states a preference ("I prefer",
  "I love", "I'm into"), recognised when the session is written, as a memory of its own.

Vectors are kept between runs in ``bench/.cache/`` (by model and text), so a second run, or a sweep of
settings, does not embed the 23,000 turns again. Every hippo row is compared with BM25 by a paired
bootstrap over the questions.

    python bench/longmemeval.py [--data ../shared/bench/longmemeval-dev.json.gz] [--level turn|session|both]
                                [--questions N] [--try NAME=VALUE[,NAME=VALUE]] [--embedder local] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import bm25_only, hippo_recall, paired_ci, parse_settings, vectors_only  # noqa: E402

import hippo  # noqa: E402
from hippo.core.memory import MemoryInput  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "longmemeval-dev.json.gz"
CACHE = Path(__file__).resolve().parent / ".cache"
TURN_KS, SESSION_KS = (5, 10, 50), (5, 10)


def haystack_date(text: str) -> datetime:
    """``"2023/05/20 (Sat) 07:47"``."""
    return datetime.strptime(text.split(" (")[0] + " " + text.rsplit(" ", 1)[1], "%Y/%m/%d %H:%M")


PREFERENCE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|usually\s+|generally\s+|always\s+)?(?:prefer|love|like|enjoy|adore|hate|dislike|"
    r"can't stand|am into|'m into|am a fan of|'m a fan of|am interested in|'m interested in|favou?r)\b"
    r"|\bmy\s+favou?rite\b", re.IGNORECASE)
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def session_extras(sid: str, turns: list[dict], when: datetime, extra: Sequence[str]) -> list[tuple]:
    """The extra memories of one session (``--extra``): its assistant turns at a low strength, its
    user's preference statements."""
    out = []
    if "assistant" in extra:
        said = "\n".join(t["content"] for t in turns if t["role"] == "assistant" and t["content"].strip())
        if said:
            out.append((sid, said, when, sid, 0.125))
    if "preferences" in extra:
        for turn in turns:
            if turn["role"] != "user":
                continue
            out.extend((sid, sentence.strip(), when, sid, 0.5) for sentence in SENTENCE.split(turn["content"])
                       if PREFERENCE.search(sentence) and len(sentence.strip()) >= 12)
    return out


def load(path: Path, level: str, extra: Sequence[str] = ()) -> list[dict]:
    """Questions as {id, type, question, date, memories: [(key, text, observed_at, session, intensity)],
    gold: set of keys}."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        records = json.load(f)
    out = []
    for r in records:
        memories, gold = [], set()
        for sid, when, turns in zip(r["haystack_session_ids"], r["haystack_dates"], r["haystack_sessions"]):
            said = [(n, t) for n, t in enumerate(turns) if t["role"] == "user" and t["content"].strip()]
            if level == "session":
                if said:
                    memories.append((sid, "\n".join(t["content"] for _, t in said), haystack_date(when), sid, 0.5))
                    memories.extend(session_extras(sid, turns, haystack_date(when), extra))
                continue
            for n, turn in said:
                memories.append((f"{sid}:{n}", turn["content"], haystack_date(when), sid, 0.5))
                if turn.get("has_answer"):
                    gold.add(f"{sid}:{n}")
        if level == "session":
            gold = set(r["answer_session_ids"]) & {m[0] for m in memories}
        if gold:
            out.append({"id": r["question_id"], "type": r["question_type"], "question": r["question"],
                        "date": haystack_date(r["question_date"]), "memories": memories, "gold": gold})
    return out


class CachedEmbedder:
    """An embedder whose document vectors are kept on disk by model and text: the benchmark's own
    cache, so sweeps and reruns embed each haystack text once. A long text's window vectors
    (``embed_windows``) are kept too, in a table of their own (its first row is the document vector)."""

    def __init__(self, inner: Any, folder: Path = CACHE) -> None:
        self.inner, self.model_id, self.thresholds = inner, inner.model_id, inner.thresholds
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(inner.model_id.encode()).hexdigest()[:16]
        self.db = sqlite3.connect(folder / f"vectors-{name}.sqlite")
        self.db.execute("CREATE TABLE IF NOT EXISTS v (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS w (key BLOB PRIMARY KEY, vectors BLOB NOT NULL)")

    @property
    def dimension(self) -> int | None:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in texts]
        found = dict(self.db.execute(f"SELECT key, vector FROM v WHERE key IN ({','.join('?' * len(keys))})", keys)) \
            if keys else {}
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        if missing:
            made = self.inner.embed_documents(missing)
            rows = [(hashlib.sha256(t.encode("utf-8")).digest(), np.asarray(v, "<f4").tobytes())
                    for t, v in zip(missing, made)]
            self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            self.db.commit()
            found.update(rows)
        return np.stack([np.frombuffer(found[k], "<f4") for k in keys]) if keys else np.zeros((0, self.dimension or 0))

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def _windows(self, texts: list[str]) -> list[np.ndarray]:
        """The windows of texts not cached: the first rows from the vector cache, the model run only
        on the texts longer than it reads (the local model's word pieces tell)."""
        from hippo.providers.base import embed_windows
        from hippo.providers.local import LocalEmbedder, count_tokens

        if not isinstance(self.inner, LocalEmbedder):
            return embed_windows(self.inner, texts)
        firsts = self.embed_documents(texts)
        width = self.inner.spec.max_length - 2
        long = [t for t, n in zip(texts, count_tokens(texts)) if n > width]
        made = dict(zip(long, self.inner.embed_windows(long)))
        return [made[t] if t in made else first[None, :] for t, first in zip(texts, firsts)]

    def embed_windows(self, texts: Sequence[str], *, query: bool = False) -> list[np.ndarray]:
        from hippo.providers.base import embed_windows

        if query:
            return embed_windows(self.inner, texts, query=True)
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in texts]
        found = dict(self.db.execute(f"SELECT key, vectors FROM w WHERE key IN ({','.join('?' * len(keys))})", keys)) \
            if keys else {}
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        if missing:
            made = self._windows(missing)
            rows = [(hashlib.sha256(t.encode("utf-8")).digest(), np.asarray(v, "<f4").tobytes())
                    for t, v in zip(missing, made)]
            self.db.executemany("INSERT OR REPLACE INTO w VALUES (?, ?)", rows)
            self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", [(k, b[:len(b) // len(v)])
                                                                          for (k, b), v in zip(rows, made)])
            self.db.commit()
            found.update(rows)
        return [np.frombuffer(found[k], "<f4").reshape(-1, self.dimension or 384) for k in keys]


def make_embedder(spec: str) -> Any:
    from hippo.providers.registry import create_embedder

    made = create_embedder(spec)
    return made if spec.startswith("fake") else CachedEmbedder(made)


def prepare_vectors(questions: list[dict], embedder: Any, batch: int = 256) -> None:
    """Embed every haystack text once, with progress (the cache answers the stores afterwards)."""
    texts = list(dict.fromkeys(text for q in questions for _, text, *_ in q["memories"]))
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        getattr(embedder, "embed_windows", embedder.embed_documents)(texts[start:start + batch])
        done = min(start + batch, len(texts))
        print(f"\rvectors {done}/{len(texts)} ({time.perf_counter() - started:.0f}s)", end="", file=sys.stderr)
    print(file=sys.stderr)


def build(folder: Path, question: dict, embedder: Any) -> tuple[Path, dict[str, str]]:
    """A fresh database holding this question's haystack; chunk id -> memory key."""
    db = folder / f"{question['id']}.db"
    with hippo.open(db, agent_id="user", embedder=embedder, clock=lambda: question["date"]) as mem:
        results = mem.store_memories(MemoryInput(text, observed_at=when, session_id=session, intensity=intensity)
                                     for _, text, when, session, intensity in question["memories"])
    return db, {r.id: key for r, (key, *_) in zip(results, question["memories"])}


def ndcg(found: list[str], gold: set[str], k: int = 10) -> float:
    gain = sum(1 / math.log2(rank + 2) for rank, key in enumerate(found[:k]) if key in gold)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(k, len(gold))))
    return gain / ideal


Retriever = Callable[["hippo.Memory", str, int], list[str]]


def evaluate(stores: list[tuple[dict, Path, dict]], ks: tuple[int, ...], retriever: Retriever, embedder: Any,
             **settings: Any) -> dict:
    """Every question against its own database: the mean of each measure, and each question's R@5."""
    scores: dict[str, list[float]] = {f"R@{k}": [] for k in ks}
    scores["nDCG@10"] = []
    latencies = []
    for question, db, keys in stores:
        # asked on its own date, as its user would: "last week" is the week before it
        with hippo.open(db, agent_id="user", embedder=embedder, clock=lambda when=question["date"]: when,
                        **settings) as mem:
            start = time.perf_counter()
            # a session found twice (by its turns and by an extra memory of it) counts once
            found = list(dict.fromkeys(keys.get(i, "") for i in retriever(mem, question["question"], max(ks) * 3)))
            latencies.append(time.perf_counter() - start)
        for k in ks:
            scores[f"R@{k}"].append(len(question["gold"] & set(found[:k])) / len(question["gold"]))
        scores["nDCG@10"].append(ndcg(found, question["gold"]))
    result: dict[str, Any] = {name: statistics.mean(values) for name, values in scores.items()}
    result["p50_ms"] = statistics.median(latencies) * 1000
    result["per_question"] = scores
    return result


def run_level(questions: list[dict], level: str, embedder: Any, variants: list[str]) -> dict:
    ks = TURN_KS if level == "turn" else SESSION_KS
    with tempfile.TemporaryDirectory() as tmp:
        stores = [(q, *build(Path(tmp), q, embedder)) for q in questions]
        rows = {"bm25": evaluate(stores, ks, bm25_only, embedder),
                "vectors": evaluate(stores, ks, vectors_only, embedder),
                "hippo": evaluate(stores, ks, hippo_recall, embedder)}
        for variant in variants:
            rows[f"hippo {variant}"] = evaluate(stores, ks, hippo_recall, embedder, **parse_settings(variant))
    margins = {f"{name} - bm25 {measure}": paired_ci(rows[name]["per_question"][measure],
                                                     rows["bm25"]["per_question"][measure])
               for name in rows if name.startswith("hippo") for measure in ("R@5", "nDCG@10")}
    kinds = sorted({q["type"] for q in questions})
    by_type = {name: {kind: statistics.mean(r for q, r in zip(questions, row["per_question"]["R@5"]) if q["type"] == kind)
                      for kind in kinds} for name, row in rows.items()}
    return {"questions": len(questions), "rows": rows, "margins": margins, "R@5_by_type": by_type,
            "types": {kind: sum(q["type"] == kind for q in questions) for kind in kinds}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--level", choices=("turn", "session", "both"), default="both")
    parser.add_argument("--questions", type=int, default=None, help="only the first N questions")
    parser.add_argument("--try", dest="variants", action="append", default=[], metavar="NAME=VALUE[,NAME=VALUE]",
                        help="also run hippo with these settings, e.g. --try context_weight=0 (repeatable)")
    parser.add_argument("--extra", action="append", choices=("assistant", "preferences"), default=[],
                        help="session level: store these extra memories of each session too (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    embedder = make_embedder(args.embedder)
    out = {}
    for level in ("turn", "session") if args.level == "both" else (args.level,):
        questions = load(args.data, level, args.extra if level == "session" else ())[: args.questions]
        prepare_vectors(questions, embedder)
        out[level] = run_level(questions, level, embedder, args.variants)
    if args.json:
        for result in out.values():
            for row in result["rows"].values():
                row.pop("per_question")
        print(json.dumps(out, indent=2))
        return 0
    for level, result in out.items():
        print(f"\n{level} level, {result['questions']} questions")
        for name, row in result["rows"].items():
            measures = " ".join(f"{m}={row[m]:.3f}" for m in row if m.startswith(("R@", "nDCG")))
            print(f"  {name:24} {measures}  p50={row['p50_ms']:.1f}ms")
        for label, (mean, low, high) in result["margins"].items():
            print(f"  {label:32} {mean:+.3f}  [{low:+.3f}, {high:+.3f}]")
        print("  R@5 by question type (questions): " + ", ".join(f"{k} ({n})" for k, n in result["types"].items()))
        for name, kinds in result["R@5_by_type"].items():
            print(f"  {name:24} " + " ".join(f"{v:.3f}" for v in kinds.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
