"""Which hippo agents a mem0 call reaches, and the removal of what the mem0 API stored.

mem0 keeps every memory in one collection and its filters test the payload: ``user_id="alice"``
alone matches what was added for alice with any agent and in any run. hippo keeps each (user,
agent) pair as an agent of its own (:mod:`hippo.core.curation.importers.mem0`), so a read or a
removal that names part of a pair reaches every agent of the pairs it matches:

- ``user_id`` alone: ``user:<user>`` and every ``user:<user>:agent:<any>``;
- ``agent_id`` alone: ``agent:<agent>`` and every ``user:<any>:agent:<agent>``;
- both: the one agent ``user:<user>:agent:<agent>``;
- ``run_id`` alone: every agent of the mem0 API's names (``runs``, ``user:...``, ``agent:...``);
- a ``run_id`` with them: the same agents, in that run's session only.

A removal (``delete_all``, ``reset``) deletes only the memories marked as the mem0 API's or a
mem0 import's (metadata ``_mem0``): an agent named ``user:...`` by hippo's own API keeps what it
stored there, whatever its name says.
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

from hippo.core.curation.importers.mem0 import MARK, RUNS, Scope
from hippo.core.memories.browsing import ARCHIVED_DEPTH
from hippo.errors import NotFound
from hippo.types import Chunk, Hit

if TYPE_CHECKING:
    from hippo.core.memory import Memory as HippoMemory
    from hippo.types import Receipt

__all__ = ["Removed", "agents_of", "every_agent", "merged_hits", "newest_first", "remove_marked"]

log = logging.getLogger("hippo.compat.mem0")

MARKED = {MARK: {"$exists": True}}
UNMARKED = {MARK: {"$exists": False}}
_PAGE = 500  # memories read per page while removing
_ARCHIVE_SCAN = 5_000  # the archived memories one look reads (the most a browse lists)


def agents_of(memory: "HippoMemory", scope: Scope) -> list[str]:
    """The agents holding what ``scope``'s ids match, as mem0's payload filters would (the run
    is a session inside them). An agent that holds no memory yet is not listed."""
    if scope.user_id is not None and scope.agent_id is not None:
        return [scope.agent]
    if scope.user_id is not None:
        user = Scope(user_id=scope.user_id).agent
        return [a for a in memory.agent_ids(user) if a == user or a.startswith(f"{user}:agent:")]
    if scope.agent_id is not None:
        own = Scope(agent_id=scope.agent_id).agent
        return [a for a in memory.agent_ids(own) if a == own] + \
            [a for a in memory.agent_ids("user:") if a.endswith(f":{own}")]
    return every_agent(memory)


def every_agent(memory: "HippoMemory") -> list[str]:
    """The agents the mem0 API names (a run alone's, users', agents'): ``reset`` looks in these."""
    return [a for a in memory.agent_ids(RUNS) if a == RUNS] + memory.agent_ids("user:") + memory.agent_ids("agent:")


def newest_first(pages: Iterable[list[Chunk]], limit: int) -> list[Chunk]:
    """Several agents' listings (each newest first) as one, newest first, ``limit`` long."""
    ordered = heapq.merge(*pages, key=lambda c: (c.created_at, c.id), reverse=True)
    return [chunk for _, chunk in zip(range(limit), ordered)]


def merged_hits(found: Iterable[Iterable[Hit]], limit: int) -> list[Hit]:
    """Several agents' recall hits as one list, best score first, ``limit`` long."""
    return sorted((hit for hits in found for hit in hits), key=lambda h: -h.score)[:limit]


@dataclass
class Removed:
    """What a removal deleted: how many memories, from which agents; ``receipts`` (when not None)
    collects the receipt of each hippo operation that deleted them."""

    count: int = 0
    agents: dict[str, int] = field(default_factory=dict)
    receipts: list["Receipt"] | None = None

    def add(self, agent: str, count: int) -> None:
        if count:
            self.count += count
            self.agents[agent] = self.agents.get(agent, 0) + count

    def report(self, what: str) -> None:
        """Say what was removed (the log ``hippo.compat.mem0``, at INFO)."""
        places = ", ".join(f"{agent} ({n})" for agent, n in sorted(self.agents.items())) or "nothing held"
        log.info("%s removed %d memories of the mem0 API: %s", what, self.count, places)


def remove_marked(memory: "HippoMemory", session: str | None, removed: Removed, agent: str) -> None:
    """Delete what the mem0 API stored in ``memory``'s agent (in ``session`` only when given),
    archived memories too; what hippo's own API stored there stays. An agent that holds nothing
    else goes whole, at once."""
    if session is None and _only_marked(memory):
        erased = memory.delete_all(receipt=removed.receipts is not None)
        removed.add(agent, erased.facts + erased.memories)
        if removed.receipts is not None and erased.receipt is not None:
            removed.receipts.append(erased.receipt)
        return
    removed.add(agent, _delete_each(memory, lambda: _live_marked(memory, session), removed.receipts))
    removed.add(agent, _delete_each(memory, lambda: _archived(memory, session, marked=True), removed.receipts))


def _only_marked(memory: "HippoMemory") -> bool:
    """Whether every fact and memory of this agent, archived ones too, is the mem0 API's, and it
    has nothing else (a block, an experience waiting to be consolidated)."""
    stats = memory.stats()
    if stats.blocks or stats.short_term:
        return False
    if memory.browse_memories(limit=1, superseded=True, metadata=UNMARKED).items:
        return False
    return not _archived(memory, None, marked=False)


def _live_marked(memory: "HippoMemory", session: str | None) -> list[str]:
    page = memory.browse_memories(limit=_PAGE, superseded=True, session_id=session, metadata=MARKED)
    return [c.id for c in page.items]


def _archived(memory: "HippoMemory", session: str | None, *, marked: bool) -> list[str]:
    """The ids of the agent's archived memories that are (or are not) the mem0 API's, every page read."""
    if not memory.stats().archived:
        return []
    found: list[str] = []
    offset: int | None = 0
    while offset is not None and offset + _PAGE <= ARCHIVED_DEPTH:  # a browse with the archive goes no deeper
        page = memory.browse_memories(limit=_PAGE, offset=offset, superseded=True, session_id=session,
                                      archived=True, scan=_ARCHIVE_SCAN)
        found += [c.id for c in page.items if c.id in page.archived and (MARK in c.metadata) == marked]
        offset = page.next_offset
    return found


def _delete_each(memory: "HippoMemory", batch: Callable[[], list[str]], receipts: list["Receipt"] | None) -> int:
    """Delete the ids ``batch`` lists until it lists none (or only ids already tried); each delete's
    receipt goes to ``receipts`` when it is a list."""
    count, tried = 0, set[str]()
    while ids := [i for i in batch() if i not in tried]:
        for chunk_id in ids:
            tried.add(chunk_id)
            try:
                gone = memory.delete_memory(chunk_id, receipt=receipts is not None)
            except NotFound:  # another caller deleted it meanwhile
                continue
            if receipts is not None and gone.receipt is not None:
                receipts.append(gone.receipt)
            count += 1
    return count
