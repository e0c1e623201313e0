"""A short scripted run of hippo on its embedded defaults: store, recall, learn facts, forget.

``python -m hippo`` runs it against ./hippo.db (or ``--db``) and prints each step.
"""

from __future__ import annotations

import argparse
import logging
import sys

from hippo import wiring
from hippo.errors import HippoError

_MEMORIES = [
    ("We spent two hours debugging network configuration problems on the office router.", ["ops"]),
    ("The team decided to use SQLite instead of PostgreSQL for the prototype.", ["decision"]),
    ("Ticket XR-7731 tracks the flaky login test on the CI server.", ["ticket"]),
    ("Krz prefers tea over coffee in the morning.", ["preference"]),
]
_QUERIES = ["WiFi issue", "which database did we pick?", "XR-7731"]
_SAID = [
    "I live in Berlin.",
    "I NEVER want to use Redux again, it was a nightmare. Oh and I tried that new café on Sukhumvit.",
    "I moved to Lisbon.",
]


def run(db: str, agent_id: str, embedder: str | None, out=print) -> None:
    out(f"hippo {wiring.__version__}: opening {db} for agent {agent_id!r}")
    with wiring.open(db, agent_id=agent_id, embedder=embedder) as mem:
        out(f"embedder: {mem.embedding.embedder.model_id if mem.embedding.embedder else 'none (keywords only)'}")
        for content, tags in _MEMORIES:
            result = mem.store_memory(content, {"tags": tags})
            out(f"  store   [{result.action:12}] {result.id}  {content}")
        for query in _QUERIES:
            recall = mem.recall_memories(query, limit=2)
            out(f"  recall  {query!r} ({recall.mode})")
            for hit in recall:
                out(f"            {hit.score:.3f}  {hit.content}")
        for said in _SAID:
            learned = mem.remember_facts(said)
            out(f"  learn   {said!r}")
            out(f"            {learned.summary}")
        mem.append_memory_block("human", "Prefers tea in the morning.")
        out(f"  block   human = {mem.recall_memory_block('human')!r}")
        forgotten = mem.forget_memory("Krz prefers tea over coffee")
        for item in forgotten.deleted:
            out(f"  forget  {item.id}  {item.content}")
        left = mem.recall_memories("tea or coffee", limit=3, touch=False)
        out(f"  recall  'tea or coffee' after forgetting: {[h.content for h in left] or 'nothing'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hippo", description=__doc__)
    parser.add_argument("--db", default="hippo.db", help="database file (default ./hippo.db)")
    parser.add_argument("--agent", default="demo", help="agent id (default demo)")
    parser.add_argument("--embedder", default=None, help="embedder spec (default: local)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="hippo: %(message)s")
    try:
        run(args.db, args.agent, args.embedder)
    except HippoError as exc:
        print(f"hippo: {exc.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
