"""LongMemEval at session level, the way the peers score it: every session of a question's haystack
ranked by one formula, offline, from the benchmark's vector cache.

Issue 47 names systems that reach session recall_any@5 of 0.95-0.98 with all-MiniLM-L6-v2 and no
LLM: MemPalace (a session's user turns as one document, the cosine of its first 256 word pieces, a
keyword-overlap boost, a boost for sessions near the date a question points back to), engram (the
session's assistant turns searched by keyword at half weight, a boost for sessions near the
question's date) and agentmemory (BM25 and MiniLM fused). This scores each of those recipes, and
hippo's fusion rebuilt the same way, on the 100 development questions, every session a candidate
(no pool), so that what the protocol gives and what hippo's ranking gives can be told apart.

Per session: ``first`` (cosine of the first window, what a 256-piece model reads), ``best`` (the
best window, what hippo's windows read), ``bm25`` of its user text and ``said`` of its assistant
text (each over this question's haystack), ``overlap`` (the share of the question's keywords its
user text holds), ``aim`` (MemPalace's date boost) and ``near`` (closeness to the question's date).

    python bench/sessions.py [--json]      # after bench/longmemeval.py --level session has filled the cache
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import longmemeval  # noqa: E402
from locomo import paired_ci  # noqa: E402
from peers import offset  # noqa: E402

_WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("""a an the and or but if of to in on at for with from by about as is are was were be been being
do does did have has had i me my we our you your he she it its they them their this that these those what which who
whom when where why how can could would should will shall may might must not no so than too very just also there
here any some all more most other such only own same into over after before again further then once up down out off
am im ive id ill dont didnt doesnt isnt wasnt arent get got""".split())


def words(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(text.lower()):
        if w in STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        out.append(w)
    return out


def bm25(query: list[str], docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """Okapi BM25 of each document for the query, the collection being these documents."""
    n = len(docs)
    if not n:
        return np.zeros(0)
    length = np.array([len(d) for d in docs], dtype=float)
    mean = length.mean() or 1.0
    df = Counter(t for d in docs for t in set(d))
    counts = [Counter(d) for d in docs]
    out = np.zeros(n)
    for term in set(query):
        if not df.get(term):
            continue
        idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
        tf = np.array([c.get(term, 0) for c in counts], dtype=float)
        out += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean))
    return out


def scaled(x: np.ndarray) -> np.ndarray:
    return x / x.max() if x.size and x.max() > 0 else x


def question_rows(record: dict, embedder: Any) -> dict | None:
    """One question's sessions with their features, and which are gold."""
    ids, users, saids, dates = [], [], [], []
    for sid, when, turns in zip(record["haystack_session_ids"], record["haystack_dates"], record["haystack_sessions"]):
        user = "\n".join(t["content"] for t in turns if t["role"] == "user" and t["content"].strip())
        if not user:
            continue
        ids.append(sid)
        users.append(user)
        saids.append("\n".join(t["content"] for t in turns if t["role"] == "assistant" and t["content"].strip()))
        dates.append(longmemeval.haystack_date(when).timestamp())
    gold = np.array([s in set(record["answer_session_ids"]) for s in ids])
    if not gold.any():
        return None
    q = np.asarray(embedder.embed_query(record["question"]), dtype=np.float32)
    windows = embedder.embed_windows(users)
    first = np.array([float(w[0] @ q) for w in windows])
    best = np.array([float((w @ q).max()) for w in windows])
    terms = words(record["question"])
    user_words = [words(u) for u in users]
    overlap = np.array([len(set(terms) & set(u)) / max(1, len(set(terms))) for u in user_words])
    asked = longmemeval.haystack_date(record["question_date"]).timestamp()
    target = offset(record["question"])
    aim = np.zeros(len(ids))
    if target is not None:
        at = asked - target[0] * 86400
        aim = 0.4 * np.maximum(0.0, 1.0 - np.abs(np.array(dates) - at) / 86400 / target[1])
    near = np.exp(-np.abs(asked - np.array(dates)) / 86400 / 30)
    return {"type": record["question_type"], "gold": gold, "first": first, "best": best,
            "bm25": bm25(terms, user_words), "said": bm25(terms, [words(s) for s in saids]),
            "overlap": overlap, "aim": aim, "near": near}


def rrf(*scores: np.ndarray, k: int = 60) -> np.ndarray:
    out = np.zeros(len(scores[0]))
    for s in scores:
        ranks = np.empty(len(s))
        ranks[np.argsort(-s, kind="stable")] = np.arange(1, len(s) + 1)
        out += 1.0 / (k + ranks)
    return out


def hybrid(r: dict, cos: str = "first", weight: float = 0.3) -> np.ndarray:
    """MemPalace's hybrid: the cosine distance cut by up to ``weight`` for keyword overlap."""
    return 1.0 - (1.0 - r[cos]) * (1.0 - weight * r["overlap"])


def fusion(r: dict, cos: str = "best") -> np.ndarray:
    """hippo's fusion without its later stages: 0.6 cosine + 0.4 keyword scaled against the best."""
    return 0.6 * r[cos] + 0.4 * scaled(r["bm25"])


Score = Callable[[dict], np.ndarray]
METHODS: dict[str, Score] = {
    "BM25 (user turns)": lambda r: r["bm25"],
    "cosine, first window (MemPalace raw)": lambda r: r["first"],
    "cosine, best window (hippo's windows)": lambda r: r["best"],
    "MemPalace hybrid (w 0.3)": hybrid,
    "MemPalace hybrid (w 0.5)": lambda r: hybrid(r, weight=0.5),
    "MemPalace hybrid + date aim": lambda r: 1.0 - (1.0 - hybrid(r)) * (1.0 - r["aim"]),
    "best window hybrid + date aim": lambda r: 1.0 - (1.0 - hybrid(r, "best")) * (1.0 - r["aim"]),
    "agentmemory: RRF(BM25, cosine)": lambda r: rrf(r["bm25"], r["best"]),
    "hippo fusion (0.6 cos + 0.4 BM25)": fusion,
    "fusion + 0.2 assistant BM25 (engram)": lambda r: fusion(r) + 0.2 * scaled(r["said"]),
    "fusion + 0.1 near date": lambda r: fusion(r) + 0.1 * r["near"],
    "fusion + date aim": lambda r: fusion(r) + r["aim"] / 2,
    "fusion + assistant + near + aim": lambda r: fusion(r) + 0.2 * scaled(r["said"]) + 0.1 * r["near"]
    + r["aim"] / 2,
    "MemPalace hybrid + 0.1 assistant BM25": lambda r: hybrid(r) + 0.1 * scaled(r["said"]),
    "fusion, keyword side half overlap": lambda r: 0.6 * r["best"] + 0.2 * scaled(r["bm25"]) + 0.2 * r["overlap"],
}


def measures(score: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    order = np.lexsort((np.arange(len(score)), -score))
    hit = gold[order]
    n = int(gold.sum())
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, n)))
    return {"R@5": hit[:5].sum() / n, "any@5": float(hit[:5].any()), "R@10": hit[:10].sum() / n,
            "nDCG@10": sum(1 / math.log2(i + 2) for i in range(min(10, len(hit))) if hit[i]) / ideal}


def run(rows: list[dict]) -> dict[str, Any]:
    per = {name: [measures(score(r), r["gold"]) for r in rows] for name, score in METHODS.items()}
    base = per["BM25 (user turns)"]
    out: dict[str, Any] = {"questions": len(rows), "methods": {}}
    for name, xs in per.items():
        row = {k: float(np.mean([x[k] for x in xs])) for k in xs[0]}
        row["R@5 - BM25"] = paired_ci([x["R@5"] for x in xs], [x["R@5"] for x in base])
        kinds = sorted({r["type"] for r in rows})
        row["R@5 by type"] = {k: float(np.mean([x["R@5"] for x, r in zip(xs, rows) if r["type"] == k]))
                              for k in kinds}
        out["methods"][name] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=longmemeval.DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    import gzip

    opener = gzip.open if args.data.suffix == ".gz" else open
    with opener(args.data, "rt", encoding="utf-8") as f:
        records = json.load(f)
    embedder = longmemeval.make_embedder("local")
    rows = [row for r in records if (row := question_rows(r, embedder)) is not None]
    report = run(rows)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{report['questions']} questions, every session of the haystack a candidate")
    for name, x in report["methods"].items():
        mean, low, high = x["R@5 - BM25"]
        print(f"  {name:40} R@5 {x['R@5']:.3f} any@5 {x['any@5']:.3f} R@10 {x['R@10']:.3f} "
              f"nDCG@10 {x['nDCG@10']:.3f}   {mean:+.3f} [{low:+.3f}, {high:+.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
