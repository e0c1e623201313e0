"""LoCoMo retrieval benchmark: evidence recall@k of hippo's recall against BM25 and vectors alone.

Protocol (shared/bench/README.md): each turn is one memory ``"<speaker>: <text>"``
observed at its session's date, with its session (``session_3``) as ``session_id``; each
question is a recall query against its own conversation (here: its own agent in one database);
evidence recall@k is the share of a question's evidence turns among the top k, averaged over
questions.

    python bench/locomo.py [--data ../shared/bench/locomo-dev.json] [--weights 0.3,0.5] [--try date_preference=0]
                           [--conversations N] [--max-questions N] [--no-sessions] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import hippo
from hippo.core.memory import MemoryInput
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.core.recall.pool import keyword_match

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev.json"
KS = (5, 10, 20)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def session_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def load(path: Path) -> list[dict]:
    """Conversations as {id, turns: [(dia_id, text, observed_at)], questions: [(q, evidence, category)],
    sessions: [(session_key, observed_at, [(dia_id, speaker, text)])]} (``sessions``: the same turns
    as said, for ``bench/capture.py``)."""
    out = []
    for conv in json.loads(path.read_text()):
        c = conv["conversation"]
        turns = []
        sessions = []
        for key in sorted((k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
            when = session_date(c[f"{key}_date_time"])
            sessions.append((key, when, [(turn["dia_id"], turn["speaker"], turn["text"]) for turn in c[key]]))
            for turn in c[key]:
                turns.append((turn["dia_id"], f"{turn['speaker']}: {turn['text']}", when))
        known = {t[0] for t in turns}
        questions = []
        for qa in conv["qa"]:
            evidence = {f"D{a}:{b}" for e in qa.get("evidence", []) for a, b in _DIA.findall(e)} & known
            if evidence:
                questions.append((qa["question"], evidence, qa["category"]))
        out.append({"id": conv["sample_id"], "turns": turns, "questions": questions, "sessions": sessions})
    return out


def build(db: Path, conversations: list[dict], embedder: str, *, sessions: bool = True) -> dict[str, dict[str, str]]:
    """Store every turn, with its LoCoMo session as ``session_id`` (what a real conversation import
    carries; ``sessions=False``: none, the protocol before issue 33); return, per conversation,
    chunk id -> dia_id."""
    ids: dict[str, dict[str, str]] = {}
    for conv in conversations:
        session_of = {dia: key for key, _, said in conv["sessions"] for dia, _, _ in said}
        with hippo.open(db, agent_id=conv["id"], embedder=embedder) as mem:
            results = mem.store_memories(
                MemoryInput(text, metadata={"dia_id": dia}, observed_at=when,
                            session_id=session_of[dia] if sessions else None)
                for dia, text, when in conv["turns"]
            )
        ids[conv["id"]] = {r.id: dia for r, (dia, _, _) in zip(results, conv["turns"])}
    return ids


Retriever = Callable[["hippo.Memory", str, int], list[str]]


def bm25_only(mem: "hippo.Memory", query: str, k: int) -> list[str]:
    found = mem.store.search(mem.agent_id, SearchQuery(None, keyword_match(query), ChunkFilter(), k))
    return [i for i, _ in sorted(found.bm25.items(), key=lambda item: -item[1])]


def vectors_only(mem: "hippo.Memory", query: str, k: int) -> list[str]:
    found = mem.store.search(mem.agent_id, SearchQuery(mem.embedding.query(query), (), ChunkFilter(), k))
    return [i for i, _ in sorted(found.similarity.items(), key=lambda item: -item[1])]


def hippo_recall(mem: "hippo.Memory", query: str, k: int) -> list[str]:
    return [h.id for h in mem.recall_memories(query, limit=k, touch=False)]


def _turns_of(source: "str | tuple[str, ...] | None") -> tuple:
    """The dia_ids one hit stands for: a raw turn's own, or every source turn of a captured memory."""
    return (source,) if source is None or isinstance(source, str) else tuple(source)


def evaluate(db: Path, conversations: list[dict], ids: dict, retriever: Retriever, **settings) -> dict:
    """``ids``: per conversation, chunk id -> its dia_id (or a tuple of them: a memory from several turns)."""
    per_cat: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_question: list[tuple[int, float]] = []  # (category, R@10) of every question, in a fixed order
    latencies = []
    embedder = settings.pop("embedder", None)
    for conv in conversations:
        with hippo.open(db, agent_id=conv["id"], embedder=embedder, **settings) as mem:
            for question, evidence, category in conv["questions"]:
                start = time.perf_counter()
                found = [_turns_of(ids[conv["id"]].get(i)) for i in retriever(mem, question, max(KS))]
                latencies.append(time.perf_counter() - start)
                for k in KS:
                    per_cat[category][k].append(len(evidence & set().union(*found[:k])) / len(evidence))
                per_question.append((category, per_cat[category][10][-1]))
    main = [c for c in per_cat if c != 5]
    result = {f"R@{k}": statistics.mean(x for c in main for x in per_cat[c][k]) for k in KS}
    result["by_category"] = {c: {f"R@{k}": statistics.mean(per_cat[c][k]) for k in KS} for c in sorted(per_cat)}
    result["p50_ms"] = statistics.median(latencies) * 1000
    result["per_question_r10"] = per_question
    return result


ERROR_COLUMNS = ("hippo_zero", "all_zero", "hippo_below_bm25", "hippo_above_bm25", "vectors_only")


def error_table(rows: dict) -> dict[int, dict[str, int]]:
    """Question by question at k=10, where hippo, BM25 and vectors agree and differ, per category."""
    triples = zip(rows["hippo"]["per_question_r10"], rows["bm25"]["per_question_r10"],
                  rows["vectors"]["per_question_r10"])
    out: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(ERROR_COLUMNS, 0))
    for (cat, h), (_, b), (_, v) in triples:
        counts = out[cat]
        counts["hippo_zero"] += h == 0
        counts["all_zero"] += max(h, b, v) == 0
        counts["hippo_below_bm25"] += h < b
        counts["hippo_above_bm25"] += h > b
        counts["vectors_only"] += v > 0 and b == 0
    return dict(sorted(out.items()))


def paired_ci(a: list[float], b: list[float], rounds: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Mean of a - b over the same questions, with a 95% paired-bootstrap interval."""
    import numpy as np

    diff = np.asarray(a) - np.asarray(b)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(rounds, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(diff.mean()), float(low), float(high)


def parse_settings(variant: str) -> dict[str, Any]:
    def value(text: str) -> Any:
        text = text.strip()
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        if text.lstrip("-").isdigit():
            return int(text)
        try:
            return float(text)
        except ValueError:
            return text  # a named choice: rerank=learned

    return {key.strip(): value(v) for key, v in (part.split("=", 1) for part in variant.split(","))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--weights", default="", help="comma-separated vector weights of the fusion to try")
    parser.add_argument("--try", dest="variants", action="append", default=[], metavar="NAME=VALUE[,NAME=VALUE]",
                        help="also run hippo with these settings, e.g. --try date_preference=0 (repeatable)")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--max-questions", type=int, default=None, help="only the first N questions of each")
    parser.add_argument("--no-sessions", action="store_true",
                        help="store the turns without their session (the protocol before issue 33)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    conversations = load(args.data)[: args.conversations]
    if args.max_questions is not None:
        for conv in conversations:
            conv["questions"] = conv["questions"][: args.max_questions]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        start = time.perf_counter()
        ids = build(db, conversations, args.embedder, sessions=not args.no_sessions)
        print(f"stored {sum(len(c['turns']) for c in conversations)} turns in {time.perf_counter() - start:.1f}s",
              file=sys.stderr)
        rows = {
            "bm25": evaluate(db, conversations, ids, bm25_only, embedder=args.embedder),
            "vectors": evaluate(db, conversations, ids, vectors_only, embedder=args.embedder),
            "hippo": evaluate(db, conversations, ids, hippo_recall, embedder=args.embedder),
        }
        for w in filter(None, args.weights.split(",")):
            rows[f"hippo w={w}"] = evaluate(db, conversations, ids, hippo_recall, embedder=args.embedder,
                                            vector_weight=float(w))
        for variant in args.variants:
            settings = parse_settings(variant)
            rows[f"hippo {variant}"] = evaluate(db, conversations, ids, hippo_recall, embedder=args.embedder,
                                                **settings)
    def main_r10(name: str) -> list[float]:
        return [r for cat, r in rows[name]["per_question_r10"] if cat != 5]

    margins = {f"{name} - {base}": paired_ci(main_r10(name), main_r10(base))
               for name in rows if name.startswith("hippo") for base in ("bm25", "vectors")}
    errors = error_table(rows)
    if args.json:  # per question R@10 kept: runs of two versions compare with bench/paired.py
        print(json.dumps({"rows": rows, "r10_margins": margins, "errors": errors}, indent=2))
        return 0
    for name, r in rows.items():
        print(f"{name:14} " + " ".join(f"R@{k}={r[f'R@{k}']:.3f}" for k in KS) + f"  p50={r['p50_ms']:.1f}ms")
    print("\nR@10 margin, categories 1-4, paired bootstrap 95% interval")
    for label, (mean, low, high) in margins.items():
        print(f"  {label:24} {mean:+.3f}  [{low:+.3f}, {high:+.3f}]")
    print("\nper question at k=10: hippo finds nothing | no retriever finds anything | hippo below BM25 | "
          "hippo above BM25 | only vectors hit")
    for cat, counts in errors.items():
        print(f"  {cat} {CATEGORY_NAMES[cat]:12} " + " ".join(f"{counts[k]:5d}" for k in ERROR_COLUMNS))
    print("\nR@10 by category (5 = adversarial, reported apart)")
    widths = {name: max(14, len(name) + 2) for name in rows}
    print(f"{'category':16}" + "".join(f"{name:>{widths[name]}}" for name in rows))
    for cat in sorted({c for r in rows.values() for c in r["by_category"]}):
        label = f"{cat} {CATEGORY_NAMES.get(cat, '')}"
        print(f"{label:16}" + "".join(f"{r['by_category'].get(cat, {}).get('R@10', float('nan')):{widths[n]}.3f}"
                                      for n, r in rows.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
