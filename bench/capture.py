"""Capture (issue 20): LoCoMo evidence recall through ``observe`` + ``process_pending`` beside raw
turns, and the cost of ``observe`` beside a bare SQLite insert.

Must-show 1: each LoCoMo conversation is fed through ``Memory.observe`` session by session (each
turn a ``user`` message, the speaker as ``name``, the ``dia_id`` as ``id``, the session date as
``timestamp``), offline (no LLM: the offline gate and extractor), then ``process_pending()``; every
question is asked with ``recall_memories`` defaults and each hit is mapped back to its source turns
through ``source_ids``. Beside it, in the same run, every turn stored raw the way
``bench/locomo.py`` does (its released-defaults row). Evidence R@5/R@10/R@20 over categories 1-4,
the number of stored memories, and the paired-bootstrap R@10 margin (``locomo.paired_ci``).

Must-show 2: ``observe`` latency p50/p95 per call (one message a call, and 20 a call) and its
throughput on SQLite defaults, with a scripted FakeLLM that sleeps 200 ms a call configured as
the memory's LLM (observe must not call it); ``process_pending`` throughput offline; baseline in
the same process: a bare ``sqlite3`` INSERT + COMMIT of the same rows into the same table with
the store's pragmas.

    python bench/capture.py [--data ../shared/bench/locomo-dev.json] [--embedder local]
                            [--conversations N] [--max-questions N] [--speed-messages N]
                            [--experiment NAME ...] [--json]

``--experiment`` reruns capture with a change to the offline tier made by monkeypatching
``hippo.core.capture.extract`` in this process (its gate ``worth_keeping`` or its extractor
``_offline_draft``): an experiment, src/hippo is not changed; names in ``EXPERIMENTS``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import CATEGORY_NAMES, DEFAULT_DATA, KS, build, evaluate, load, paired_ci  # noqa: E402

import hippo  # noqa: E402
from hippo.core.capture import extract as capture_extract  # noqa: E402
from hippo.core.compaction import kinds as message_kinds  # noqa: E402
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms  # noqa: E402
from hippo.providers.fake import FakeLLM  # noqa: E402

LLM_DELAY = 0.2  # seconds the scripted LLM sleeps per call
R10_TARGET = 0.05  # capture may fall at most this far below raw turns at R@10


# -- must-show 1: evidence recall -----------------------------------------------------------------

def messages_of(turns: list[tuple[str, str, str]], when: datetime) -> list[dict[str, Any]]:
    """One LoCoMo session as chat messages: role user, the speaker as name, the dia_id as id."""
    return [{"role": "user", "content": text, "name": speaker, "id": dia, "timestamp": when}
            for dia, speaker, text in turns]


def _all_memories(mem: "hippo.Memory") -> list[Any]:
    chunks, cursor = [], None
    while True:
        page = mem.list_memories(limit=100, cursor=cursor)
        chunks += page.items
        cursor = page.next_cursor
        if not cursor:
            return chunks


def capture_build(db: Path, conversations: list[dict], embedder: str) -> tuple[dict[str, dict], dict[str, Any]]:
    """Observe every conversation session by session, process it offline; return, per
    conversation, chunk id -> the dia_ids of its source messages, and counts and times."""
    ids: dict[str, dict[str, tuple[str, ...]]] = {}
    totals: Counter[str] = Counter()
    observe_s = process_s = 0.0
    for conv in conversations:
        with hippo.open(db, agent_id=conv["id"], embedder=embedder) as mem:
            for key, when, turns in conv["sessions"]:
                start = time.perf_counter()
                seen = mem.observe(messages_of(turns, when), session_id=f"{conv['id']}.{key}")
                observe_s += time.perf_counter() - start
                totals["observed"] += seen.accepted
                totals["skipped"] += seen.skipped
            start = time.perf_counter()
            done = mem.process_pending()
            process_s += time.perf_counter() - start
            for name in ("messages", "windows", "gated_in", "memories", "merged", "facts"):
                totals[name] += getattr(done, name)
            chunks = _all_memories(mem)
            totals["stored"] += mem.stats().memories
        ids[conv["id"]] = {c.id: tuple(c.source_ids) for c in chunks}
    info: dict[str, Any] = dict(totals)
    info["observe_s"] = observe_s
    info["process_pending_s"] = process_s
    info["process_pending_msgs_per_s"] = totals["messages"] / process_s if process_s else 0.0
    return ids, info


def recording(results: dict[str, list[str]]) -> Callable[["hippo.Memory", str, int], list[str]]:
    """hippo_recall that keeps what it found per (agent, question), for the error analysis.
    Checks on the way that every hit's ``chunk.source_ids`` is what the id map says."""
    def retriever(mem: "hippo.Memory", query: str, k: int) -> list[str]:
        hits = mem.recall_memories(query, limit=k, touch=False)
        results[f"{mem.agent_id}\x00{query}"] = [h.id for h in hits]
        recording.sources.update({h.id: tuple(h.chunk.source_ids) for h in hits})  # type: ignore[attr-defined]
        return [h.id for h in hits]
    return retriever


recording.sources = {}  # type: ignore[attr-defined]


def _main_r(row: dict) -> list[float]:
    return [r for cat, r in row["per_question_r10"] if cat != 5]


def error_analysis(conversations: list[dict], raw_ids: dict, raw_found: dict, cap_ids: dict, cap_found: dict,
                   examples: int = 8) -> dict[str, Any]:
    """Evidence turns of categories 1-4 that raw turns find in the top 10 and capture does not:
    gated out (no memory has the turn as a source), merged (the turn is a later source of a
    memory that holds another turn's words), or kept alone and ranked below the top 10."""
    said_by = {(conv["id"], dia): (speaker, said) for conv in conversations for _, _, turns in conv["sessions"]
               for dia, speaker, said in turns}
    text = {key: f"{speaker}: {said}" for key, (speaker, said) in said_by.items()}
    counts: Counter[str] = Counter()
    overall: Counter[str] = Counter()
    shown: dict[str, list[dict[str, str]]] = defaultdict(list)
    for conv in conversations:
        first = {srcs[0]: cid for cid, srcs in cap_ids[conv["id"]].items() if srcs}
        later = {s: cid for cid, srcs in cap_ids[conv["id"]].items() for s in srcs[1:]}
        for question, evidence, category in conv["questions"]:
            if category == 5:
                continue
            key = f"{conv['id']}\x00{question}"
            raw_top = {raw_ids[conv["id"]].get(i) for i in raw_found[key][:10]}
            cap_top = set().union(*(cap_ids[conv["id"]].get(i, ()) for i in cap_found[key][:10]))
            for dia in evidence:
                kind = "kept" if dia in first else "merged" if dia in later else "gated_out"
                overall[kind] += 1
                if dia in raw_top and dia not in cap_top:
                    label = "kept_ranked_lower" if kind == "kept" else kind
                    counts[label] += 1
                    if label != "kept_ranked_lower" and len(shown[label]) < examples:
                        entry = {"question": question, "category": CATEGORY_NAMES[category], "turn": dia,
                                 "text": text[conv["id"], dia]}
                        if kind == "merged":
                            holder = cap_ids[conv["id"]][later[dia]]
                            entry["merged_into"] = f"{holder[0]}: {text[conv['id'], holder[0]]}"
                        shown[label].append(entry)
                elif dia not in raw_top and dia in cap_top:
                    counts["capture_only"] += 1
    gated = [_content_words(said_by[conv["id"], d][1]) for conv in conversations
             for _, e, c in conv["questions"] if c != 5 for d in e
             if not any(d in s for s in cap_ids[conv["id"]].values())]
    return {"lost_at_10": dict(counts), "evidence_turns": dict(overall),
            "gated_evidence_content_words": dict(sorted(Counter(gated).items())), "examples": dict(shown)}


# -- the gate experiments (monkeypatched; src/hippo is not changed) ---------------------------------

def _content_words(text: str) -> int:
    return len(keyword_terms(text, stopwords=ENGLISH_STOPWORDS))


def _gate_min_words(n: int) -> Callable[[str], bool]:
    def keep(text: str) -> bool:
        text = text.strip()
        if not text or message_kinds.cues.SMALL_TALK.match(text):
            return False
        if message_kinds.offline.non_latin_share(text) > 0.5:
            return len(text) >= 8
        return _content_words(text) >= n
    return keep


@contextmanager
def _patched(name: str, value: Any) -> Iterator[None]:
    original = getattr(capture_extract, name)
    setattr(capture_extract, name, value)
    try:
        yield
    finally:
        setattr(capture_extract, name, original)


def _same_importance(importance: int) -> Callable[[Any], Any]:
    """The offline extractor with one importance for every memory (its signals left out)."""
    draft = capture_extract._offline_draft

    def make(message: Any) -> Any:
        d = draft(message)
        return capture_extract.Draft(d.content, importance, d.memory_type, d.tags, d.sources, d.answers)
    return make


EXPERIMENTS: dict[str, Callable[[], Any]] = {
    "min_words=2": lambda: _patched("worth_keeping", _gate_min_words(2)),
    "min_words=1": lambda: _patched("worth_keeping", _gate_min_words(1)),
    # only the small-talk pattern (and empty text) keeps a turn out
    "small_talk_only": lambda: _patched("worth_keeping", _gate_min_words(0)),
    # every offline memory at importance 3 (intensity 0.6) instead of 1-5 from seed 000's signals
    "same_importance": lambda: _patched("_offline_draft", _same_importance(3)),
}


def recall_part(conversations: list[dict], embedder: str, tmp: Path, experiments: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    start = time.perf_counter()
    raw_db = tmp / "raw.db"
    raw_ids = build(raw_db, conversations, embedder)
    raw_build_s = time.perf_counter() - start
    raw_found: dict[str, list[str]] = {}
    raw = evaluate(raw_db, conversations, raw_ids, recording(raw_found), embedder=embedder)
    raw["memories"] = sum(len(v) for v in raw_ids.values())
    raw["build_s"] = raw_build_s
    print(f"raw turns: {raw['memories']} stored in {raw_build_s:.1f}s, R@10 {raw['R@10']:.3f}", file=sys.stderr)

    def run_capture(label: str, db: Path) -> tuple[dict, dict, dict]:
        ids, info = capture_build(db, conversations, embedder)
        found: dict[str, list[str]] = {}
        row = evaluate(db, conversations, ids, recording(found), embedder=embedder)
        row["memories"] = info["stored"]
        row["capture"] = info
        print(f"{label}: {info['stored']} stored (observe {info['observe_s']:.1f}s, process_pending "
              f"{info['process_pending_s']:.1f}s), R@10 {row['R@10']:.3f}", file=sys.stderr)
        return row, ids, found

    cap, cap_ids, cap_found = run_capture("capture", tmp / "capture.db")
    mismatched = [i for i, s in recording.sources.items()  # type: ignore[attr-defined]
                  if any(i in m for m in cap_ids.values()) and s != next(m[i] for m in cap_ids.values() if i in m)]
    out["source_ids_checked"] = {"hits": len(recording.sources), "mismatched": len(mismatched)}  # type: ignore
    out["rows"] = {"raw turns (locomo.py defaults)": raw, "capture (offline)": cap}
    out["r10_margin_capture_minus_raw"] = paired_ci(_main_r(cap), _main_r(raw))
    out["target"] = {"r10_gap": raw["R@10"] - cap["R@10"], "r10_gap_max": R10_TARGET,
                     "fewer_items": cap["memories"] < raw["memories"],
                     "met": raw["R@10"] - cap["R@10"] <= R10_TARGET and cap["memories"] < raw["memories"]}
    out["errors"] = error_analysis(conversations, raw_ids, raw_found, cap_ids, cap_found)
    for name in experiments:
        with EXPERIMENTS[name]():
            row, _, _ = run_capture(f"experiment {name}", tmp / f"experiment-{len(out['rows'])}.db")
        out["rows"][f"EXPERIMENT {name}"] = row
        out.setdefault("experiment_r10_margins", {})[name] = paired_ci(_main_r(row), _main_r(raw))
    for row in out["rows"].values():
        row.pop("per_question_r10")
    return out


# -- must-show 2: observe latency and throughput ------------------------------------------------------

def _sleeping_reply(system: str, messages: Any) -> str:
    time.sleep(LLM_DELAY)
    return json.dumps({"remember": False, "reason": "bench"})


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _timing(latencies: list[float], messages: int) -> dict[str, float]:
    total = sum(latencies)
    return {"calls": len(latencies), "p50_ms": _pct(latencies, 0.5) * 1000, "p95_ms": _pct(latencies, 0.95) * 1000,
            "msgs_per_s": messages / total if total else 0.0}


_TABLE = """CREATE TABLE observed_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, agent_id TEXT NOT NULL, session_id TEXT NOT NULL,
    message_id TEXT NOT NULL, role TEXT NOT NULL, name TEXT, content TEXT NOT NULL, observed_at TEXT,
    created_at TEXT NOT NULL, UNIQUE (agent_id, session_id, message_id));
CREATE INDEX idx_observed_session ON observed_messages(agent_id, session_id, seq);"""


def bare_sqlite(path: Path, messages: list[dict[str, Any]], batch: int, session: str) -> list[float]:
    """The same rows into the same table with the store's pragmas (WAL, synchronous NORMAL), one
    INSERT + COMMIT per call of ``batch`` messages."""
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", "busy_timeout=5000", "secure_delete=ON", "synchronous=NORMAL"):
        conn.execute(f"PRAGMA {pragma}")
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'observed_messages'").fetchone():
        conn.executescript(_TABLE)
    latencies = []
    for i in range(0, len(messages), batch):
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        now = datetime.now(timezone.utc).isoformat()
        for m in messages[i:i + batch]:
            conn.execute("INSERT INTO observed_messages (agent_id, session_id, message_id, role, name, content, "
                         "observed_at, created_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                         ("speed", session, m["id"], m["role"], m["name"], m["content"],
                          m["timestamp"].isoformat(), now))
        conn.execute("COMMIT")
        latencies.append(time.perf_counter() - start)
    conn.close()
    return latencies


def speed_part(conversations: list[dict], embedder: str, tmp: Path, n: int) -> dict[str, Any]:
    pool = [m for conv in conversations for key, when, turns in conv["sessions"] for m in messages_of(turns, when)]
    messages = [{**pool[i % len(pool)], "id": f"{pool[i % len(pool)]['id']}#{i}"} for i in range(n)]
    out: dict[str, Any] = {"messages": n, "llm_delay_s": LLM_DELAY}
    llm = FakeLLM(script=[_sleeping_reply] * 100_000)
    db = tmp / "speed.db"
    with hippo.open(db, agent_id="speed", embedder=embedder, llm=llm) as mem:
        mem.observe([{**messages[0], "id": "warm-up"}], session_id="warm-up")  # schema and caches, not timed
        for batch in (1, 20):
            latencies, accepted = [], 0
            for i in range(0, n, batch):
                start = time.perf_counter()
                seen = mem.observe(messages[i:i + batch], session_id=f"speed-{batch}")
                latencies.append(time.perf_counter() - start)
                accepted += seen.accepted
            out[f"observe_batch_{batch}"] = {**_timing(latencies, n), "accepted": accepted}
        out["llm_calls_during_observe"] = len(llm.calls)
    # the same LLM, asked by process_pending (another agent): one gate call (200 ms) per window
    with hippo.open(db, agent_id="speed-llm", embedder=embedder, llm=llm) as mem:
        mem.observe(messages[:60], session_id="with-llm")
        start = time.perf_counter()
        done = mem.process_pending()
        took = time.perf_counter() - start
        out["process_pending_with_llm"] = {"messages": done.messages, "windows": done.windows,
                                           "llm_calls": len(llm.calls), "seconds": took,
                                           "msgs_per_s": done.messages / took if took else 0.0}
    for batch in (1, 20):
        out[f"sqlite_batch_{batch}"] = _timing(bare_sqlite(tmp / "bare.db", messages, batch, f"bare-{batch}"), n)
        ours, base = out[f"observe_batch_{batch}"], out[f"sqlite_batch_{batch}"]
        out[f"ratio_batch_{batch}"] = {"p50": ours["p50_ms"] / base["p50_ms"], "p95": ours["p95_ms"] / base["p95_ms"],
                                       "throughput": base["msgs_per_s"] / ours["msgs_per_s"]}
    # process_pending offline (no LLM), the default embedder: sessions of the LoCoMo size
    with hippo.open(tmp / "pending.db", agent_id="pending", embedder=embedder) as mem:
        for i in range(0, n, 20):
            mem.observe(messages[i:i + 20], session_id=f"s{i // 200}")
        start = time.perf_counter()
        done = mem.process_pending()
        took = time.perf_counter() - start
    out["process_pending_offline"] = {"messages": done.messages, "windows": done.windows, "memories": done.memories,
                                      "merged": done.merged, "seconds": took,
                                      "msgs_per_s": done.messages / took if took else 0.0}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--max-questions", type=int, default=None, help="only the first N questions of each")
    parser.add_argument("--speed-messages", type=int, default=2000, help="messages timed through observe")
    parser.add_argument("--experiment", action="append", default=[], choices=sorted(EXPERIMENTS),
                        help="also run capture with this change to the offline tier, monkeypatched (repeatable)")
    parser.add_argument("--skip-recall", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    conversations = load(args.data)[: args.conversations]
    if args.max_questions is not None:
        for conv in conversations:
            conv["questions"] = conv["questions"][: args.max_questions]
    started = time.perf_counter()
    result: dict[str, Any] = {"command": "python bench/capture.py " + " ".join(argv if argv is not None
                                                                               else sys.argv[1:]),
                              "embedder": args.embedder, "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if not args.skip_recall:
            result["recall"] = recall_part(conversations, args.embedder, tmp, args.experiment)
        if not args.skip_speed:
            result["speed"] = speed_part(conversations, args.embedder, tmp, args.speed_messages)
    result["load_after"] = os.getloadavg()
    result["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return 0
    report(result)
    return 0


def report(result: dict[str, Any]) -> None:
    if "recall" in result:
        recall = result["recall"]
        print("| stored as | memories | R@5 | R@10 | R@20 | recall p50 |")
        print("| --- | ---: | --- | --- | --- | --- |")
        for name, row in recall["rows"].items():
            print(f"| {name} | {row['memories']:,} | " + " | ".join(f"{row[f'R@{k}']:.3f}" for k in KS)
                  + f" | {row['p50_ms']:.1f} ms |")
        mean, low, high = recall["r10_margin_capture_minus_raw"]
        print(f"\nR@10 capture - raw: {mean:+.3f} [{low:+.3f}, {high:+.3f}] (paired bootstrap 95%)")
        print(f"target (gap <= {R10_TARGET}, fewer items): {'met' if recall['target']['met'] else 'missed'}")
        print("evidence found by raw turns in the top 10 and not by capture:", recall["errors"]["lost_at_10"])
    if "speed" in result:
        speed = result["speed"]
        print(f"\n| {speed['messages']} messages | p50 | p95 | messages/s |")
        print("| --- | --- | --- | ---: |")
        for key in ("observe_batch_1", "sqlite_batch_1", "observe_batch_20", "sqlite_batch_20"):
            row = speed[key]
            print(f"| {key} | {row['p50_ms']:.2f} ms | {row['p95_ms']:.2f} ms | {row['msgs_per_s']:,.0f} |")
        print(f"LLM calls during observe: {speed['llm_calls_during_observe']}")
        print("process_pending offline:", speed["process_pending_offline"])
        print("process_pending with the 200 ms LLM:", speed["process_pending_with_llm"])


if __name__ == "__main__":
    sys.exit(main())
