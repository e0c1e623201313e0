"""The audit trail's cost: store and recall p50 at 100k memories with the trail on (the default)
beside the same calls with the record's append switched off, in one process, alternating.

    python bench/audit_cost.py [--backend sqlite,postgres] [--postgres URL] [--size 100000] [--calls 400] [--json]

One agent on one SQLite file and/or a PostgreSQL database (on the server ``--postgres`` names, or
one started here with pgserver), filled through
``store_memories`` in batches of 1,000 with the fake embedder (its 64-number vectors make a
recall cheaper than the local model's, so the trail's share of it is shown larger than it is).
Then ``calls`` rounds, each a ``store_memory`` of a new text and a ``recall_memories(limit=10)``
as users call it (touching its hits), in blocks of 20 alternating between "on" and "off"; "off"
replaces the handle's append of records with nothing, so only the trail differs. Then a forget's
receipt: ``delete_memory`` with and without ``receipt=True``, and ``verify_receipt``, p50 of ten.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.stores.sql.database import Handle

WORDS = ("river harbor granite willow raven glacier lantern orchard canyon heron copper spring meadow "
         "thunder velvet marble cedar falcon amber prairie").split()


def text(i: int) -> str:
    picks = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(6)]
    return f"Note {i}: the {picks[0]} by the {picks[1]} met a {picks[2]} {picks[3]} near {picks[4]} {picks[5]}"


def fill(mem: Any, size: int) -> None:
    for start in range(0, size, 1000):
        mem.store_memories([text(i) for i in range(start, min(size, start + 1000))])


def run(mem: Any, size: int, calls: int) -> dict[str, dict[str, float]]:
    original = Handle._append_audit
    times: dict[str, dict[str, list[float]]] = {"on": {"store": [], "recall": []}, "off": {"store": [], "recall": []}}
    n = size
    for block in range(calls // 20):
        mode = "on" if block % 2 == 0 else "off"
        Handle._append_audit = original if mode == "on" else (lambda self, conn: self._pending().clear())  # type: ignore
        for _ in range(20):
            n += 1
            t0 = time.perf_counter()
            mem.store_memory(text(n))
            t1 = time.perf_counter()
            mem.recall_memories(text(n * 13 % size)[8:60], limit=10)
            t2 = time.perf_counter()
            times[mode]["store"].append((t1 - t0) * 1000)
            times[mode]["recall"].append((t2 - t1) * 1000)
    Handle._append_audit = original  # type: ignore[method-assign]
    return {mode: {op: round(statistics.median(v), 3) for op, v in ops.items()} for mode, ops in times.items()}


def receipts(mem: Any, size: int, rounds: int = 10) -> dict[str, float]:
    """A forget's receipt: ``delete_memory`` with and without one, alternating, and checking one
    again (each reads every text the agent holds, so it grows with the store)."""
    times: dict[str, list[float]] = {"delete": [], "delete_with_receipt": [], "verify": []}
    for i in range(rounds):
        for name, proof in (("delete", False), ("delete_with_receipt", True)):
            chunk = mem.store_memory(f"Receipt round {i} {name}: {text(size * 3 + i)}").id
            started = time.perf_counter()
            done = mem.delete_memory(chunk, receipt=proof)
            times[name].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        assert mem.verify_receipt(done.receipt).failed in ([], ["dead rows"])
        times["verify"].append((time.perf_counter() - started) * 1000)
    return {name: round(statistics.median(v), 1) for name, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--backend", default="sqlite,postgres", help="sqlite, postgres or both, comma-separated")
    parser.add_argument("--postgres", default=None, help="a server's admin URL (default: start one with pgserver)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {"size": args.size, "calls": args.calls}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        targets = {}
        for backend in args.backend.split(","):
            targets[backend] = str(Path(tmp) / "audit.db") if backend == "sqlite" else \
                stack.enter_context(siblings.load("load").postgres_database(args.postgres, Path(tmp)))
        for backend, where in targets.items():
            with hippo.open(where, embedder="fake", agent_id="bench") as mem:
                started = time.perf_counter()
                fill(mem, args.size)
                filled = time.perf_counter() - started
                mem.recall_memories("warm up the index", limit=10)
                results[backend] = {**run(mem, args.size, args.calls), "fill_seconds": round(filled, 1)}
                results[backend]["ratio"] = {op: round(results[backend]["on"][op] / results[backend]["off"][op], 3)
                                             for op in ("store", "recall")}
                results[backend]["receipt_ms"] = receipts(mem, args.size)
                assert mem.verify_audit().ok
    print(json.dumps(results, indent=2) if args.json else results)


if __name__ == "__main__":
    main()
