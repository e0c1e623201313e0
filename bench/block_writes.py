"""What scrubbing a replaced text costs a write (issue 46): memory blocks and metadata on SQLite.

A write that replaces or removes text (a block's new text, new metadata) checkpoints and truncates
the write-ahead log once it commits, as a forget does (``stores/sqlite/scrub.py``), so that the
old text leaves the files when the call returns. An append, or the same text again, removes
nothing and checkpoints nothing. Timed in one process on a SQLite file in a temporary folder that
already holds ``--memories`` memories (fake embedder: the model is not what is measured), the
calls interleaved round after round:

- ``set_memory_block``, a new text each time (a checkpoint each);
- ``set_memory_block``, the same text again (none);
- ``append_memory_block`` (none);
- ``update_metadata``, new metadata each time (a checkpoint each).

``--reader`` keeps another connection reading the file meanwhile, as another process would (the
dashboard, a CLI call): a checkpoint then waits up to its 50 ms busy timeout for the reader, fails,
and is retried in the background.

Reported: the median and p95 of each call's wall time, in milliseconds. Run it against an older
checkout (``git worktree``) for the cost before.

    python bench/block_writes.py [--rounds 300] [--memories 1000] [--reader] [--json]
    python bench/block_writes.py --smoke          # 5 rounds: for the test suite
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import hippo
from hippo.providers.fake import FakeEmbedder


def calls(mem: "hippo.Memory") -> dict[str, Callable[[int], object]]:
    chunk_id = mem.store_memory("A memory whose metadata changes", metadata={"round": -1}).id
    mem.set_memory_block("same", "The same text, written again and again.")
    return {
        "set_memory_block, a new text": lambda i: mem.set_memory_block("human", f"The user's note number {i}."),
        "set_memory_block, the same text": lambda i: mem.set_memory_block(
            "same", "The same text, written again and again."),
        "append_memory_block": lambda i: mem.append_memory_block("log", f"line {i}"),
        "update_metadata, new metadata": lambda i: mem.update_metadata(chunk_id, {"round": i}),
    }


def reading(path: Path, stop: threading.Event) -> None:
    """Another connection that reads without pause, each read a transaction of its own."""
    conn = sqlite3.connect(path, timeout=5.0)
    try:
        while not stop.is_set():
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM memory_blocks").fetchone()
            time.sleep(0.005)
            conn.execute("COMMIT")
    finally:
        conn.close()


def run(rounds: int, memories: int, reader: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        with hippo.open(path, agent_id="bench", embedder=FakeEmbedder()) as mem:
            mem.store_memories([f"Filler memory {i}: nothing in particular happened" for i in range(memories)])
            timed = calls(mem)
            samples: dict[str, list[float]] = {name: [] for name in timed}
            stop = threading.Event()
            thread = threading.Thread(target=reading, args=(path, stop), daemon=True) if reader else None
            if thread is not None:
                thread.start()
            try:
                for i in range(rounds):
                    for name, call in timed.items():
                        began = time.perf_counter()
                        call(i)
                        samples[name].append((time.perf_counter() - began) * 1000)
            finally:
                stop.set()
                if thread is not None:
                    thread.join()
    return {name: summary(values) for name, values in samples.items()}


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"runs": len(ordered), "p50_ms": round(statistics.median(ordered), 3),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--reader", action="store_true", help="another connection reads the file meanwhile")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="5 rounds over 20 memories")
    args = parser.parse_args(argv)
    rounds, memories = (5, 20) if args.smoke else (args.rounds, args.memories)
    result = run(rounds, memories, args.reader)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{'call':36} {'p50 ms':>8} {'p95 ms':>8}")
    for name, row in result.items():
        print(f"{name:36} {row['p50_ms']:8.3f} {row['p95_ms']:8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
