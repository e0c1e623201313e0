"""The dashboard's pages at 100k memories (issue 22): each page's whole server response over HTTP.

A SQLite database of one agent with ``--size`` memories (100k) is built once and kept under
/tmp (``--db``; rebuilt when missing): ``bench/scale.py``'s corpus with its cached
all-MiniLM-L6-v2 vectors (looked up, not computed), stored over a year, with strengths from 0.05
to 1, tags, sources, sessions, a quarter retrieved at some later time, a third of them long-term
experiences of seed 001's types, a block and a short-term buffer. The server is the HTTP app
under uvicorn on loopback (``BackgroundServer``, what ``hippo serve`` runs) in a child process;
the client logs in with a key once and GETs each page ``--runs`` times with the session cookie,
after two untimed requests. Baseline: the API's ``/healthz`` on the same server, timed the same
way. The search page embeds its query with the lookup embedder (the model is not what is
measured: ``bench/models.py`` times it).

    python bench/dashboard.py [--size 100000] [--runs 30] [--db /tmp/hippo-bench-dashboard-100000.db] [--json]
    python bench/dashboard.py --smoke          # 300 memories, fake vectors: for the test suite
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.core.experiences.importance import EXPERIENCE_TYPES, TYPE_WEIGHTS
from hippo.core.memories.writer import MemoryInput
from hippo.core.ports import ExperienceRecord

HERE = Path(__file__).resolve().parent
AGENT = "bench"
START = datetime(2025, 1, 1, tzinfo=timezone.utc)
DAYS = 365
TAGS = [f"tag{i:02d}" for i in range(20)]
SOURCES = ["conversation", "import", "tool", "manual"]
TARGET_MS = 300.0


def corpus(size: int, smoke: bool) -> tuple[Any, list[str]]:
    """The embedder (cached vectors looked up) and the questions the search page asks."""
    scale = siblings.load("scale")
    texts, vectors, questions, qvectors = scale.corpus_and_vectors(size, smoke)
    model = "fake:384" if smoke else scale.LOCAL_MODEL
    return scale.LookupEmbedder([*texts, *questions], np.vstack([vectors, qvectors]), model_id=model), texts


def build(db: str, size: int, smoke: bool) -> dict[str, Any]:
    """The database (see the module docstring); its key. Reused when its marker matches."""
    marker = Path(db + ".json")
    if marker.exists() and Path(db).exists():
        return json.loads(marker.read_text())
    for stale in (Path(db), Path(db + "-wal"), Path(db + "-shm")):
        stale.unlink(missing_ok=True)
    embedder, texts = corpus(size, smoke)
    rng = random.Random(22)
    now = [START]
    began = time.perf_counter()
    with hippo.open(db, agent_id=AGENT, embedder=embedder, clock=lambda: now[0]) as mem:
        ids: list[str] = []
        for start in range(0, size, 1000):
            now[0] = START + timedelta(days=DAYS * start / size)
            batch = texts[start:start + 1000]
            inputs = [MemoryInput(t, {"tags": rng.sample(TAGS, rng.choice((1, 1, 2)))}, rng.uniform(0.05, 1.0),
                                  None, rng.choice(SOURCES), f"s{rng.randrange(500)}") for t in batch]
            ids += [r.id for r in mem.store_memories(inputs)]
            if start // 1000 % 20 == 19:
                print(f"  stored {start + 1000:,}/{size:,}", file=sys.stderr)
        _experiences(mem, ids, rng, now[0])
        _retrievals(mem, ids, rng)
        now[0] = START + timedelta(days=DAYS)
        mem.set_memory_block("persona", "A careful assistant who keeps notes about the user's trips.", char_limit=500)
        for i in range(20):
            mem.record_experience(EXPERIENCE_TYPES[i % len(EXPERIENCE_TYPES)], f"Short-term note {i}",
                                  importance=0.3)
        key, _ = mem.keys.create([AGENT], label="bench")
        info = {"size": size, "key": key, "memory_id": ids[len(ids) // 2], "build_s": time.perf_counter() - began,
                "now": now[0].isoformat()}
    marker.write_text(json.dumps(info))
    return info


def _experiences(mem: "hippo.Memory", ids: list[str], rng: random.Random, now: datetime) -> None:
    chosen = ids[::3]
    chunks = {c.id: c for start in range(0, len(chosen), 1000)
              for c in mem.store.get_chunks(AGENT, chosen[start:start + 1000])}
    records = []
    for chunk_id in chosen:
        kind = EXPERIENCE_TYPES[rng.randrange(len(EXPERIENCE_TYPES))]
        when = chunks[chunk_id].created_at
        records.append(ExperienceRecord(chunk_id, kind, TYPE_WEIGHTS[kind], {"userId": f"u{rng.randrange(50)}"},
                                        f"u{rng.randrange(50)}", None, None, when, when))
    for start in range(0, len(records), 1000):
        mem.store.put_experiences(AGENT, records[start:start + 1000])


def _retrievals(mem: "hippo.Memory", ids: list[str], rng: random.Random) -> None:
    """A quarter of the memories retrieved once, at a time after they were stored, in recalls of ten."""
    picked = sorted(rng.sample(range(len(ids)), len(ids) // 4))
    for start in range(0, len(picked), 10):
        group = picked[start:start + 10]
        day = min(DAYS, DAYS * group[-1] / len(ids) + rng.uniform(0, 60))
        mem.store.record_retrievals(AGENT, [ids[i] for i in group], START + timedelta(days=day), boost=0.02)


# -- the server, in its own process -------------------------------------------------------------


def _serve(db: str, size: int, smoke: bool, pipe: Any) -> None:
    from hippo.interfaces.http.server import BackgroundServer

    embedder, _ = corpus(size, smoke)
    clock_now = datetime.fromisoformat(json.loads(Path(db + ".json").read_text())["now"])
    mem = hippo.open(db, agent_id=AGENT, embedder=embedder, clock=lambda: clock_now)
    with BackgroundServer(mem) as url:
        pipe.send(url)
        pipe.recv()  # until the client is done


def pages(info: dict[str, Any], question: str) -> dict[str, str]:
    agent = f"/agents/{AGENT}"
    return {
        "health (baseline)": "/healthz",
        "login": "/login",
        "agents": "/",
        "browse": agent,
        "browse by strength": f"{agent}?sort=strength",
        "browse filtered": f"{agent}?tag=tag03&source=tool&sort=last_access",
        "memory": f"{agent}/memories/{info['memory_id']}",
        "search": f"{agent}/search?q={question}",
        "blocks": f"{agent}/blocks",
        "short-term": f"{agent}/short-term",
        "stats": f"{agent}/stats",
    }


def login(client: Any, key: str) -> None:
    form = client.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', form.text)
    answer = client.post("/login", data={"key": key, "csrf": token.group(1) if token else ""})
    assert answer.status_code == 303 and "hippo_session" in client.cookies, answer.text[:300]


def timed(client: Any, path: str, runs: int) -> dict[str, float]:
    times = []
    for i in range(runs + 2):
        began = time.perf_counter()
        answer = client.get(path)
        elapsed = (time.perf_counter() - began) * 1000
        assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
        if i >= 2:
            times.append(elapsed)
    ordered = sorted(times)
    return {"median_ms": statistics.median(ordered), "p95_ms": ordered[int(0.95 * (len(ordered) - 1))],
            "bytes": len(answer.content)}


def measure(db: str, info: dict[str, Any], size: int, smoke: bool, runs: int) -> dict[str, dict[str, float]]:
    import httpx

    question = siblings.load("ann_choice").questions()[0]
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(db, size, smoke, child), daemon=True)
    server.start()
    try:
        url = parent.recv()
        out = {}
        with httpx.Client(base_url=url, timeout=60) as client:
            login(client, info["key"])
            for name, path in pages(info, question).items():
                if name == "login":  # a visitor without a session
                    with httpx.Client(base_url=url, timeout=60) as fresh:
                        out[name] = timed(fresh, path, runs)
                else:
                    out[name] = timed(client, path, runs)
        return out
    finally:
        parent.send("stop")
        server.join(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30, help="timed requests per page")
    parser.add_argument("--db", help="the database to build or reuse (default /tmp/hippo-bench-dashboard-SIZE.db)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="300 memories, fake vectors, 3 runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.size, args.runs = 300, 3
    db = args.db or f"/tmp/hippo-bench-dashboard-{args.size}{'-smoke' if args.smoke else ''}.db"
    print(f"database {db}...", file=sys.stderr)
    info = build(db, args.size, args.smoke)
    load_before = os.getloadavg()
    results = measure(db, info, args.size, args.smoke, args.runs)
    out = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "load_before": load_before,
                       "load_after": os.getloadavg()},
           "size": args.size, "runs": args.runs, "db_mb": os.path.getsize(db) / 1e6, "pages": results}
    print(json.dumps(out, indent=2) if args.json else report(out))
    return 0


def report(out: dict[str, Any]) -> str:
    lines = [f"Dashboard pages at {out['size']:,} memories, {out['runs']} requests each "
             f"(load {out['machine']['load_before'][0]:.1f} before, {out['machine']['load_after'][0]:.1f} after)",
             "", "| page | median ms | p95 ms | kB | under 300 ms |", "|---|---:|---:|---:|---|"]
    for name, row in out["pages"].items():
        met = "yes" if row["p95_ms"] < TARGET_MS else "no"
        lines.append(f"| {name} | {row['median_ms']:.1f} | {row['p95_ms']:.1f} | {row['bytes'] / 1000:.0f} | {met} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

