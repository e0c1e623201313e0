"""The dashboard's archive and experience-type views at scale (issue 22, part A).

One agent with ``--size`` live memories (100k by default), ``--archived`` more moved to the archive
(20k: pruning archived them over 200 runs, a hundred at a time) and ``--experiences`` of all of
them recorded as seed 001's experiences (10k, evenly spread, the seven types in turn). Timed, each ``--runs``
times (medians and p95, in ms):

* the core's ``browse_memories`` as the dashboard calls it: the default page, ``archived=True``
  (the latest archived 2,000 joined, no words), ``types="error"``, both, and ``get_archived``;
* the store's ``list_archived``: the first page of 25 and a page 10k archived deep (keyset);
* the pages themselves over HTTP on loopback (keyless, ``hippo serve``'s app in a thread):
  browse, browse with "show archived", browse by type, an archived memory's page.

Fake vectors (browsing reads no vector). PostgreSQL: a fresh database made on the server
``--postgres URL`` names, else on one started with ``pgserver`` (``bench/backends.py``).

    python bench/dashboard_archive.py [--size 100000] [--backends sqlite,postgresql] [--json]
    python bench/dashboard_archive.py --smoke     # 2,000 memories: for the test suite
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

import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.core.experiences.importance import EXPERIENCE_TYPES
from hippo.core.memory import MemoryInput
from hippo.core.ports import ExperienceRecord
from hippo.providers.fake import FakeEmbedder

HERE = Path(__file__).resolve().parent
AGENT = "bench"
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
BATCH = 1_000


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def pcts(times_ms: list[float]) -> dict[str, float]:
    ordered = sorted(times_ms)
    return {"median": round(statistics.median(ordered), 2),
            "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2)}


def timed(call: Callable[[], Any], runs: int) -> dict[str, float]:
    call()  # warm: caches and the first page of the index
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return pcts(times)


def load(url: str, size: int, archived: int, experiences: int, clock: Clock) -> dict[str, Any]:
    """The agent's memories (the archived ones first: the oldest), evenly spread experiences among
    them (archived ones too), then the oldest archived a hundred at a time."""
    start = time.perf_counter()
    with hippo.open(url, agent_id=AGENT, embedder=FakeEmbedder(), clock=clock) as mem:
        ids: list[str] = []
        total = size + archived
        for first in range(0, total, BATCH):
            items = [MemoryInput(f"Note {i}: the heron came back to the pond at dawn, day {i % 365}",
                                 {"tags": ["birds"] if i % 3 else ["pond"]})
                     for i in range(first, min(total, first + BATCH))]
            ids += [r.id for r in mem.store_memories(items)]
            clock.now += timedelta(minutes=10)
        step = max(1, len(ids) // max(1, experiences))
        records = [ExperienceRecord(id=chunk_id, type=EXPERIENCE_TYPES[n % len(EXPERIENCE_TYPES)], importance=0.8,
                                    context={}, user_ref=None, room_ref=None, task_ref=None, observed_at=clock(),
                                    consolidated_at=clock())
                   for n, chunk_id in enumerate(ids[::step][:experiences])]
        for first in range(0, len(records), BATCH):  # before archiving: an archived experience keeps its record
            mem.store.put_experiences(AGENT, records[first:first + BATCH])
        gone = ids[:archived]
        for first in range(0, len(gone), 100):
            clock.now += timedelta(hours=1)
            mem.store.archive_chunks(AGENT, gone[first:first + 100], clock())
        counts = mem.stats()
    return {"seconds": round(time.perf_counter() - start, 1), "live": counts.memories, "archived": counts.archived,
            "experiences": len(records), "an_archived": gone[len(gone) // 2] if gone else None}


def core_timings(url: str, clock: Clock, an_archived: str, runs: int) -> dict[str, Any]:
    with hippo.open(url, agent_id=AGENT, embedder=FakeEmbedder(), clock=clock) as mem:
        out = {
            "browse": timed(lambda: mem.browse_memories(limit=25), runs),
            "browse_archived": timed(lambda: mem.browse_memories(limit=25, archived=True), runs),
            "browse_type": timed(lambda: mem.browse_memories(limit=25, types="error"), runs),
            "browse_type_archived": timed(lambda: mem.browse_memories(limit=25, types="error", archived=True), runs),
            "get_archived": timed(lambda: mem.get_archived(an_archived), runs),
        }
        first = mem.store.list_archived(AGENT, limit=25)
        out["list_archived_first_page"] = timed(lambda: mem.store.list_archived(AGENT, limit=25), runs)
        deep = mem.store.list_archived(AGENT, limit=10_000)
        if len(deep) == 10_000:
            cursor = (deep[-1].archived_at, deep[-1].id)
            out["list_archived_10k_deep"] = timed(lambda: mem.store.list_archived(AGENT, limit=25, before=cursor),
                                                  runs)
        assert first and all(a.chunk.agent_id == AGENT for a in first)
    return out


def page_timings(url: str, clock: Clock, an_archived: str, runs: int) -> dict[str, Any]:
    import httpx

    from hippo.interfaces.http.server import BackgroundServer

    pages = {"browse": f"/agents/{AGENT}", "browse_show_archived": f"/agents/{AGENT}?show_archived=true",
             "browse_type": f"/agents/{AGENT}?type=error",
             "archived_memory": f"/agents/{AGENT}/memories/{an_archived}"}
    out = {}
    with hippo.open(url, agent_id=AGENT, embedder=FakeEmbedder(), clock=clock) as mem, \
            BackgroundServer(mem) as base, httpx.Client(base_url=base, timeout=60) as client:
        for name, path in pages.items():
            def get(path: str = path) -> None:
                answer = client.get(path)
                assert answer.status_code == 200, (path, answer.status_code)
            out[name] = timed(get, runs)
    return out


def databases(backend: str, workdir: Path, postgres: str | None) -> Iterator[str]:
    if backend == "sqlite":
        yield str(workdir / "archive.db")
        return
    yield next(siblings.load("backends").fresh_postgres(postgres, workdir))


def run(backend: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    clock = Clock()
    for url in databases(backend, workdir, args.postgres):
        print(f"{backend}: loading {args.size:,} + {args.archived:,} archived...", file=sys.stderr)
        loaded = load(url, args.size, args.archived, args.experiences, clock)
        an_archived = loaded.pop("an_archived")
        print(f"{backend}: timing...", file=sys.stderr)
        return {"load": loaded, "core": core_timings(url, clock, an_archived, args.runs),
                "pages": page_timings(url, clock, an_archived, args.runs)}
    raise AssertionError("no database")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="live memories")
    parser.add_argument("--archived", type=int, default=20_000, help="archived memories")
    parser.add_argument("--experiences", type=int, default=10_000, help="memories recorded as experiences")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--backends", default="sqlite", help="comma-separated: sqlite, postgresql")
    parser.add_argument("--postgres", help="a PostgreSQL URL with pgvector (default: start one with pgserver)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="2,000 memories, 500 archived, 300 experiences")
    args = parser.parse_args(argv)
    if args.smoke:
        args.size, args.archived, args.experiences, args.runs = 2_000, 500, 300, 3
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()},
                               "size": args.size, "archived": args.archived, "backends": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
            results["backends"][backend] = run(backend, args, Path(tmp))
    results["machine"]["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(report(results))
    return 0


def report(results: dict[str, Any]) -> str:
    lines = [f"{results['size']:,} live memories, {results['archived']:,} archived (load "
             f"{results['machine']['load_before'][0]:.1f} before, {results['machine']['load_after'][0]:.1f} after)"]
    for backend, parts in results["backends"].items():
        lines.append(f"\n{backend} (built in {parts['load']['seconds']} s)")
        for group in ("core", "pages"):
            for name, value in parts[group].items():
                lines.append(f"  {group:5} {name:28} median {value['median']:8.2f} ms   p95 {value['p95']:8.2f} ms")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
